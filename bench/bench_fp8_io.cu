// Benchmark rows of vLLM's fp8 attention contract (issue 13: fp8 queries, fp8 outputs; problem/fp8_io.hpp)
// on the serving shapes of tests/data/unified_default.json (serve_decode_b64_ctx8k, serve_prefill_1x4k;
// bf16 models), through hipattn::unified_attention (automatic path) and, for decode b64 x 8K at q_len 1
// and 4 (MTP verify), hipattn::paged_decode (automatic split), each next to the 16-bit row of the same
// shape measured in the same run.
//
// Names: fp8_io/<shape>/q_<q>_kv_<kv>_out_<out>[_tensor | _g128][_fp8_pv | _convert] (e4m3fn queries and
// cache: the Fp8Math choice when not the default fp8_qk), shape a scenario name (unified) or
// paged_serve_decode_b64_ctx8k_q<1|4> (paged decode); run them alone with --benchmark_filter=fp8_io/
// (Google Benchmark appends /iterations:1/manual_time to every name). fp8 queries are random finite
// e4m3fn codes with a host q_scale; fp8 KV is per-tensor scaled (device scalars for unified, host
// floats for paged decode, as the other sweeps); fp8 outputs are per tensor (host scale) or per group
// of 128 columns (kernel-computed scales, row-major [tokens, heads * head_size / 128], UE8M0 off).
//
// Method and counters as the other sweeps (bench_common.hpp): graph replays after an L2 flush, the
// median of 40; us; TB/s over the compulsory bytes with each tensor's own element size (Q in its
// dtype, the K/V of the attended keys in theirs, O in its dtype, + the group scales) and bw_frac;
// TFLOP/s (4 x attended pairs x head_size per q head) and mma_frac against the bf16 mma.sync atom; on
// the prefill fp8-query rows also fp8_mma_frac against the mma.sync m16n8k32 e4m3 rate of the same run
// (bench_unified.cu's measure_fp8_mma_tflops): the atom of the fp8 matrix path (e4m3fn queries and
// cache: Fp8Math fp8_qk, the scores; fp8_pv, both products), which sm_90 runs through f16 MMAs, while
// `convert` rows and fp8 queries over other caches run on the 16-bit atom; and fp8_peak_frac against
// Hopper's native fp8 rate, wgmma m64n256k32 e4m3, measured in the same run;
// vs_16bit = the 16-bit row's time / this row's time when the 16-bit row of the same shape ran
// earlier in this run (it is registered first), else 0.
#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../testing/scenario_spec.hpp"
#include "bench_common.hpp"
#include "hipattn/dispatch/paged_decode.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/dispatch/unified_attention.hpp"

namespace hipattn::bench {
namespace {
using namespace hipattn::testing;

constexpr int kGroup = 128;                       // per-group fp8 output: columns per scale
constexpr float kQScale = 1.f / 64.f;             // codes up to 240 -> |Q| < 4
constexpr float kOutScale = 1.f / 128.f;          // per-tensor fp8 output: |O| < 3.5 inside the format
constexpr DType kBf16 = DType::bf16, kFp8 = DType::fp8_e4m3fn;

// The formats of one row.
struct Io {
  DType q, kv, out;
  int group = 0;  // fp8 output: 0 per tensor, else kGroup
  Fp8Math math = Fp8Math::fp8_qk;
  bool is_16bit() const { return !is_fp8(q) && !is_fp8(kv) && !is_fp8(out); }
};

std::string io_name(const Io& io) {
  std::string s = "q_" + std::string(dtype_name(io.q)) + "_kv_" + std::string(dtype_name(io.kv)) + "_out_" +
                  std::string(dtype_name(io.out));
  if (is_fp8(io.out)) s += io.group > 0 ? "_g" + std::to_string(io.group) : "_tensor";
  if (io.math != Fp8Math::fp8_qk) s += std::string("_") + fp8_math_name(io.math);
  return s;
}

// One problem on the device at a time (its caches are 2 GiB each), with the fp8 query codes, the
// group-scale tensor and a workspace that grows only.
struct Problem {
  std::string key;
  std::unique_ptr<HostProblem> h;
  std::unique_ptr<DeviceProblem> d;
  DeviceBuffer q8, group_scale, ws;
  void* workspace(size_t bytes) {
    if (bytes > ws.bytes) ws = DeviceBuffer(bytes);
    return ws.ptr;
  }
};
std::unique_ptr<Problem> g_problem;

Problem& problem(const std::string& name, ProblemSpec s, DType kv) {
  const std::string key = name + "/" + std::string(dtype_name(kv));
  if (g_problem && g_problem->key == key) return *g_problem;
  g_problem.reset();  // free the previous caches first
  s.kv_dtype = kv;
  s.scale_mode = is_fp8(kv) ? KvScaleMode::per_tensor : KvScaleMode::none;
  s.lse = false;
  s.min_cache_bytes = int64_t(2) << 30;
  s.fill_reference_data = false;  // random finite K/V filled on the device
  auto pr = std::make_unique<Problem>();
  pr->key = key;
  pr->h = std::make_unique<HostProblem>(s);
  pr->d = std::make_unique<DeviceProblem>(*pr->h);
  const size_t elems = pr->h->q.size();
  pr->q8 = DeviceBuffer(std::max<size_t>(16, elems));
  fill_random_kernel<<<1024, 256>>>(pr->q8.as<uint8_t>(), pr->q8.bytes, 0x5a5au, 1);  // e4m3 codes, never NaN
  HIPATTN_CHECK_LAUNCH();
  HIPATTN_CHECK(rt::device_synchronize());
  pr->group_scale = DeviceBuffer(std::max<size_t>(16, elems / kGroup * sizeof(float)));
  g_problem = std::move(pr);
  return *g_problem;
}

// The row's query dtype and output format on `p` (UnifiedAttentionParams or PagedDecodeParams: the
// fields are spelled the same).
template <class P>
void set_io(P& p, const Problem& pr, const Io& io) {
  p.fp8_math = io.math;
  if (is_fp8(io.q)) {
    p.q = pr.q8.ptr;
    p.q_dtype = io.q;
    p.q_scale.host = kQScale;
  }
  p.out_format.dtype = io.out;
  if (is_fp8(io.out) && io.group == 0) p.out_format.scale.host = kOutScale;
  if (is_fp8(io.out) && io.group > 0) {
    p.out_format.group_size = io.group;
    p.out_format.group_scale = pr.group_scale.as<float>();
    p.out_format.group_scale_stride_token = int64_t(p.num_q_heads) * p.head_size / io.group;
    p.out_format.group_scale_stride_group = 1;
  }
}

// Counters of a row; `seqs` the (q_len, kv_len) of the call's sequences.
void set_counters(benchmark::State& state, const std::string& shape, const Io& io, double ms, const ProblemSpec& s,
                  const std::vector<std::pair<int, int>>& seqs, bool prefill) {
  static std::map<std::string, double> ms_16bit;  // by shape: the 16-bit row's time in this run
  const Attended a = attended(seqs, s.window_left);
  double tokens = 0;
  for (auto [ql, kl] : seqs) tokens += ql;
  const double row = tokens * s.num_q_heads * s.head_size;  // Q (and O) elements
  const double bytes = row * (dtype_size(io.q) + dtype_size(io.out)) +
                       (io.group > 0 ? row / io.group * sizeof(float) : 0.0) +
                       compulsory_bytes(0, s.num_q_heads, s.num_kv_heads, s.head_size, io.kv, s.scale_mode, a.keys);
  const double tflops = 4.0 * a.pairs * s.head_size * s.num_q_heads / (ms * 1e-3) / 1e12;
  set_bandwidth_counters(state, ms, bytes);
  state.counters["TFLOP/s"] = tflops;
  state.counters["mma_frac"] = tflops / g_mma_tflops;
  if (prefill && is_fp8(io.q)) {
    state.counters["fp8_mma_frac"] = g_fp8_mma_tflops > 0 ? tflops / g_fp8_mma_tflops : 0;
    state.counters["fp8_peak_frac"] = g_fp8_wgmma_tflops > 0 ? tflops / g_fp8_wgmma_tflops : 0;
  }
  if (io.is_16bit()) ms_16bit[shape] = ms;
  const auto it = ms_16bit.find(shape);
  state.counters["vs_16bit"] = it != ms_16bit.end() ? it->second / ms : 0;
}

void bench_fp8_unified(benchmark::State& state, int scenario, Io io) {
  try {
    const auto& sc = scenarios::unified_scenarios()[scenario];
    Problem& pr = problem(sc.name, spec_from_scenario(sc), io.kv);
    UnifiedAttentionParams p = pr.d->params();
    set_io(p, pr, io);
    const UnifiedOptions opt;  // the automatic path
    const UnifiedPlan plan = plan_unified_attention(p, opt, plan_device(rt::cached_device_properties()));
    void* ws = pr.workspace(plan.workspace_bytes);
    const rt::CapturedGraph graph([&](rt::stream_t st) { prebuilt::unified_attention(p, ws, pr.ws.bytes, st, opt); });
    const double ms = time_graph(state, graph);
    set_counters(state, sc.name, io, ms, pr.h->spec, pr.h->spec.seqs, p.max_seqlen_q > 1);
    state.counters["segments"] = !plan.split() ? 0 : plan.grid == UnifiedGrid::split_planned ? plan.capacity : plan.num_segments;
    state.SetLabel(!plan.split() ? "2d" : plan.grid == UnifiedGrid::split_planned ? "3d-planned" : "3d");
  } catch (const std::exception& e) {  // hipattn::Error (unsupported, invalid), or no memory
    state.SkipWithError(e.what());
  }
}

// Paged decode over serve_decode_b64_ctx8k's shape with up to 4 query tokens a sequence (Q and O
// sized for 4; q_len 1 uses the first 64 tokens).
constexpr int kPagedMaxQLen = 4;
const char* const kPagedScenario = "serve_decode_b64_ctx8k";

void bench_fp8_paged(benchmark::State& state, int scenario, int q_len, Io io) {
  try {
    const auto& sc = scenarios::unified_scenarios()[scenario];
    ProblemSpec s = spec_from_scenario(sc);
    for (auto& [ql, kl] : s.seqs) ql = kPagedMaxQLen;
    Problem& pr = problem(std::string("paged_") + sc.name, s, io.kv);
    PagedDecodeParams p = paged_decode_params_from_unified(pr.d->params(), q_len);
    p.lse = nullptr;
    if (p.kv_scale_mode == KvScaleMode::per_tensor) {  // host floats, as bench_paged_decode.cu passes them
      p.k_scale = p.v_scale = nullptr;
      p.k_scale_value = pr.h->k_scale[0], p.v_scale_value = pr.h->v_scale[0];
    }
    set_io(p, pr, io);
    const PagedDecodeOptions opt;  // the automatic split
    const PagedDecodePlan plan = plan_paged_decode(p, opt, plan_device(rt::cached_device_properties()));
    void* ws = pr.workspace(plan.workspace_bytes);
    const rt::CapturedGraph graph([&](rt::stream_t st) { prebuilt::paged_decode(p, ws, pr.ws.bytes, st, opt); });
    const double ms = time_graph(state, graph);
    std::vector<std::pair<int, int>> seqs;
    for (auto [ql, kl] : s.seqs) seqs.emplace_back(q_len, kl);
    set_counters(state, "paged_" + std::string(sc.name) + "_q" + std::to_string(q_len), io, ms, pr.h->spec, seqs, false);
    state.counters["slots"] = plan.capacity;
    state.SetLabel(std::string(plan.split == SlotSplit::planned ? "planned" : plan.segments > 1 ? "uniform" : "one_partition") +
                   (plan.tile_kind == UnifiedTileKind::decode ? " decode-tile" : " prefill-tile"));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

int scenario_index(const char* name) {
  const auto& all = scenarios::unified_scenarios();
  for (int i = 0; i < int(all.size()); ++i)
    if (std::string(all[i].name) == name) return i;
  throw Error(ErrorCode::invalid_argument, "scenario", std::string(name) + " is not in the unified table");
}

template <class Fn, class... Args>
void add(const std::string& name, Fn fn, Args... args) {
  benchmark::RegisterBenchmark(name.c_str(), fn, args...)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

}  // namespace

void register_fp8_io_benchmarks() {
  // Grouped by cache dtype (one cache build each); the 16-bit row of a shape first.
  const Io unified_rows[] = {
      {kBf16, kBf16, kBf16},           // the 16-bit reference
      {kFp8, kBf16, kBf16},            // fp8 Q over a bf16 cache
      {kBf16, kBf16, kFp8},            // the fp8 per-tensor epilogue alone
      {kBf16, kFp8, kBf16},            // fp8 KV alone (the existing fp8 row)
      {kFp8, kFp8, kBf16},             // fp8 Q + fp8 KV: the fp8 matrix path (e4m3 QK^T, P V in f16)
      {kFp8, kFp8, kBf16, 0, Fp8Math::fp8_pv},   // ... P V in e4m3 too
      {kFp8, kFp8, kBf16, 0, Fp8Math::convert},  // ... Q converted: every product in f16
      {kFp8, kFp8, kFp8},              // + fp8 out per tensor
      {kFp8, kFp8, kFp8, kGroup},      // + fp8 out per group of 128
  };
  for (const char* name : {"serve_decode_b64_ctx8k", "serve_prefill_1x4k"}) {
    const int i = scenario_index(name);
    for (const Io& io : unified_rows) add("fp8_io/" + std::string(name) + "/" + io_name(io), bench_fp8_unified, i, io);
  }
  const int i = scenario_index(kPagedScenario);
  for (const Io& io : {Io{kBf16, kBf16, kBf16}, Io{kFp8, kFp8, kFp8}})
    for (int q_len : {1, kPagedMaxQLen})
      add("fp8_io/paged_" + std::string(kPagedScenario) + "_q" + std::to_string(q_len) + "/" + io_name(io),
          bench_fp8_paged, i, q_len, io);
}

}  // namespace hipattn::bench
