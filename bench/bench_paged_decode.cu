// Benchmark sweep of paged decode (issue 10): the decode grids of tests/data/decode_sweeps.json
// (paged_decode, split_k_sliding_window_decode), the serving decode shapes of
// tests/data/unified_default.json, MTP verify, random-length batches and decode_d128_b16, each through
// hipattn::paged_decode with the split chosen (auto), forced to one partition, forced planned, and the
// same problem through hipattn::unified_attention (unified_auto), side by side; the serving and MTP
// shapes also with the cache read as the ROCm layout (rocm_auto).
//
// Names: paged_decode/<case>/<kv>/<path>, path in {auto, one_partition, planned, unified_auto, rocm_auto}, kv in
// {bf16, f16, fp8_e4m3fn_tensor (host float scales), fp8_e4m3fn_token_head}. Run this sweep alone
// with --benchmark_filter=paged_decode/ (or e.g. 'paged_decode/minimax_.*_q1/', 'paged_decode/.*/auto/':
// Google Benchmark appends /iterations:1/manual_time to every name).
//
// Method and counters as the unified sweep (bench_common.hpp): graph replays after an L2 flush, the
// median; us, TB/s over the compulsory bytes (Q + O + the K/V of the attended keys, fp8 one byte an
// element plus per-(token, head) scales; under a sliding window only the window's keys) and bw_frac,
// that rate over the copy bandwidth measured in the same run. Paged caches of at least 2 GiB for K
// and for V with random data and randomly permuted block tables; one allocation serves every q_len
// and path of a shape (the benchmarks of a shape are registered together) and is freed when the
// next shape is built. The workspace is sized from PagedDecodeTraits (paged_decode_workspace_size),
// as an engine sizes it once, and grows only.
#include <cmath>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../testing/scenario_spec.hpp"
#include "bench_common.hpp"
#include "hipattn/dispatch/paged_decode.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/dispatch/unified_attention.hpp"

namespace hipattn::bench {
namespace {
using namespace hipattn::testing;

// One problem shape: every q_len of it shares the allocation (Q and O sized for max_q_len).
struct Case {
  std::string name;  // <case> of the benchmark name, without the q_len suffix
  bool bf16 = true;
  int num_q_heads = 32, num_kv_heads = 8, head_size = 128, block_size = 16;
  std::vector<int> kv_lens;  // keys of each sequence (its q_len new tokens included)
  int window = 0;            // vLLM's W (keys pos - W + 1 .. pos), 0: none
  int max_q_len = 1;
};

struct KvChoice {
  DType dtype;
  KvScaleMode mode;
  const char* tag;
};
constexpr KvChoice kBf16{DType::bf16, KvScaleMode::none, "bf16"};
constexpr KvChoice kF16{DType::f16, KvScaleMode::none, "f16"};
constexpr KvChoice kFp8Tensor{DType::fp8_e4m3fn, KvScaleMode::per_tensor, "fp8_e4m3fn_tensor"};
constexpr KvChoice kFp8TokenHead{DType::fp8_e4m3fn, KvScaleMode::per_token_head, "fp8_e4m3fn_token_head"};

enum class Path : uint8_t { automatic, one_partition, planned, unified_auto, rocm_auto };
constexpr std::pair<Path, const char*> kPaths[] = {{Path::automatic, "auto"},
                                                   {Path::one_partition, "one_partition"},
                                                   {Path::planned, "planned"},
                                                   {Path::unified_auto, "unified_auto"}};
// rocm_auto: auto over the same cache bytes read as the ROCm layout (KvCacheLayout::rocm, packed
// strides: a packed NHD block holds as many bytes as a packed rocm block), for the shapes add() is
// asked to time it on.
constexpr std::pair<Path, const char*> kRocmPath{Path::rocm_auto, "rocm_auto"};

// The shape on the device (one at a time), its cu_seqlens_q per q_len (for the unified view) and a
// workspace that grows only.
struct Shape {
  const Case* c = nullptr;
  KvChoice kv{};
  std::unique_ptr<HostProblem> h;
  std::unique_ptr<DeviceProblem> d;
  std::map<int, DeviceBuffer> cu;
  DeviceBuffer ws;
  const int32_t* cu_seqlens_q(int q_len) {
    auto it = cu.find(q_len);
    if (it == cu.end()) {
      std::vector<int32_t> v(size_t(h->num_seqs) + 1);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i) * q_len;
      it = cu.emplace(q_len, DeviceBuffer::from(v)).first;
    }
    return it->second.as<int32_t>();
  }
  void* workspace(size_t bytes) {
    if (bytes > ws.bytes) ws = DeviceBuffer(bytes);
    return ws.ptr;
  }
};
std::unique_ptr<Shape> g_shape;

Shape& shape(const Case& c, const KvChoice& kv) {
  if (g_shape && g_shape->c == &c && g_shape->kv.dtype == kv.dtype && g_shape->kv.mode == kv.mode) return *g_shape;
  g_shape.reset();  // free the previous shape's caches first
  ProblemSpec s;
  s.bf16 = c.bf16;
  s.kv_dtype = kv.dtype;
  s.scale_mode = kv.mode;
  s.num_q_heads = c.num_q_heads;
  s.num_kv_heads = c.num_kv_heads;
  s.head_size = c.head_size;
  s.block_size = c.block_size;
  for (int kl : c.kv_lens) s.seqs.emplace_back(c.max_q_len, kl);
  s.window_left = c.window > 0 ? c.window - 1 : -1;
  s.lse = false;
  s.min_cache_bytes = int64_t(2) << 30;
  s.fill_reference_data = false;  // random finite K/V filled on the device; Q random normal
  auto sh = std::make_unique<Shape>();
  sh->c = &c;
  sh->kv = kv;
  sh->h = std::make_unique<HostProblem>(s);
  sh->d = std::make_unique<DeviceProblem>(*sh->h);
  g_shape = std::move(sh);
  return *g_shape;
}

// The paged-decode problem of `h` over the arrays (pointers and cache size) of `a`, its unified view,
// with `q_len` query tokens a sequence: token s * q_len + r of the Q / O buffers (sized for
// h.spec.seqs' q lengths). Per-tensor fp8 scales travel as host floats, their pointers null.
PagedDecodeParams decode_params(const HostProblem& h, const UnifiedAttentionParams& a, int q_len) {
  PagedDecodeParams p = paged_decode_params_from_unified(a, q_len);
  p.lse = nullptr;
  // fp8 per-tensor scales as host floats (no device scalar read), as an engine passing a float does.
  if (p.kv_scale_mode == KvScaleMode::per_tensor) {
    p.k_scale = p.v_scale = nullptr;
    p.k_scale_value = h.k_scale[0], p.v_scale_value = h.v_scale[0];
  }
  return p;
}

void bench_paged_decode(benchmark::State& state, const Case* c, KvChoice kv, int q_len, Path path) {
  try {
    Shape& sh = shape(*c, kv);
    PagedDecodeParams p = decode_params(*sh.h, sh.d->params(), q_len);
    if (path == Path::rocm_auto) {
      const int64_t block = p.k_stride_block;
      set_packed_rocm_kv_layout(p);
      if (p.k_stride_block != block || p.v_stride_block != block)
        throw Error(ErrorCode::invalid_argument, "k_stride_block", "the bench cache is not packed: no rocm view of it");
    }
    std::vector<std::pair<int, int>> seqs;
    for (int kl : c->kv_lens) seqs.emplace_back(q_len, kl);
    const double bytes = compulsory_bytes(double(p.num_tokens()), c->num_q_heads, c->num_kv_heads, c->head_size,
                                          kv.dtype, kv.mode, attended(seqs, p.window_left).keys);
    const PlanDevice dev = plan_device(rt::cached_device_properties());
    std::string label;
    double slots = 0;
    std::unique_ptr<rt::CapturedGraph> graph;
    if (path == Path::unified_auto) {
      const UnifiedAttentionParams u =
          to_unified_params(p, sh.cu_seqlens_q(q_len), sh.d->ks.as<float>(), sh.d->vs.as<float>());
      const UnifiedPlan plan = plan_unified_attention(u, {}, dev);
      void* ws = sh.workspace(unified_attention_workspace_size(u));
      graph = std::make_unique<rt::CapturedGraph>(
          [&](rt::stream_t st) { prebuilt::unified_attention(u, ws, sh.ws.bytes, st); });
      label = !plan.split() ? "2d" : plan.grid == UnifiedGrid::split_planned ? "3d-planned" : "3d";
      slots = !plan.split() ? 0 : plan.grid == UnifiedGrid::split_planned ? plan.capacity : plan.num_segments;
    } else {
      PagedDecodeOptions opt;
      opt.split = path == Path::one_partition ? PagedDecodeSplit::one_partition
                  : path == Path::planned     ? PagedDecodeSplit::planned
                                              : PagedDecodeSplit::automatic;
      // Sized from bounds, as an engine sizes it once (this shape's batch and longest context).
      PagedDecodeTraits traits;
      traits.max_num_seqs = p.num_seqs, traits.max_q_len = q_len, traits.max_seqlen_k = p.max_seqlen_k;
      traits.num_q_heads = p.num_q_heads, traits.num_kv_heads = p.num_kv_heads, traits.max_head_size = p.head_size;
      const PagedDecodePlan plan = plan_paged_decode(p, opt, dev);
      void* ws = sh.workspace(paged_decode_workspace_size(traits, opt));
      graph = std::make_unique<rt::CapturedGraph>(
          [&](rt::stream_t st) { prebuilt::paged_decode(p, ws, sh.ws.bytes, st, opt); });
      label = std::string(plan.split == SlotSplit::planned ? "planned" : plan.segments > 1 ? "uniform" : "one_partition") +
              " " + tile_kind_name(plan.tile_kind) + "-tile";
      slots = plan.capacity;
    }
    const double ms = time_graph(state, *graph);
    set_bandwidth_counters(state, ms, bytes);
    state.counters["slots"] = slots;
    state.SetLabel(label);
  } catch (const std::exception& e) {  // hipattn::Error (unsupported, invalid), or no memory
    state.SkipWithError(e.what());
  }
}

// ---- the cases ----

// n lengths uniform in [lo, hi] from a seeded mt19937_64 (its sequence is fixed by the standard;
// the modulo keeps the draw library-independent).
std::vector<int> random_lens(int n, int lo, int hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> v(n);
  for (int& x : v) x = lo + static_cast<int>(rng() % uint64_t(hi - lo + 1));
  return v;
}

std::deque<Case> g_cases;  // stable addresses for the registered benchmarks

void add(const Case& c, std::initializer_list<KvChoice> kvs, std::initializer_list<int> q_lens,
         const std::string& q_suffix = "_q", bool rocm = false) {
  const Case* cp = &g_cases.emplace_back(c);
  std::vector<std::pair<Path, const char*>> paths(std::begin(kPaths), std::end(kPaths));
  if (rocm) paths.push_back(kRocmPath);
  for (const KvChoice& kv : kvs)
    for (int q : q_lens)
      for (auto [path, pname] : paths) {
        const std::string name = "paged_decode/" + c.name + (q_suffix.empty() ? "" : q_suffix + std::to_string(q)) +
                                 "/" + kv.tag + "/" + pname;
        benchmark::RegisterBenchmark(name.c_str(), bench_paged_decode, cp, kv, q, path)
            ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
      }
}

Case repeat(std::string name, int n, int kv_len) {
  Case c;
  c.name = std::move(name);
  c.kv_lens.assign(n, kv_len);
  return c;
}

// A serving or default scenario of the unified table (all rows q_len 1).
Case from_scenario(const char* name) {
  for (const auto& sc : scenarios::unified_scenarios()) {
    if (std::string(sc.name) != name) continue;
    Case c;
    c.name = sc.name;
    c.bf16 = sc.bf16;
    c.num_q_heads = sc.num_q_heads;
    c.num_kv_heads = sc.num_kv_heads;
    c.head_size = sc.head_size;
    c.block_size = sc.block_size;
    for (auto [ql, kl] : sc.seqs) c.kv_lens.push_back(kl);
    c.window = sc.sliding_window;
    return c;
  }
  throw Error(ErrorCode::invalid_argument, "scenario", std::string(name) + " is not in the unified table");
}

}  // namespace

void register_paged_decode_benchmarks() {
  // decode_sweeps.json "paged_decode": MiniMax-like 16 q heads / 1 kv head, d 128; pages 16 and 64;
  // q_len 1, 2, 4, 8; KV bf16, fp8 per-tensor (host float), fp8 per (token, head).
  {
    std::mt19937_64 rng(10);
    const int n_rand = 64 + static_cast<int>(rng() % 193);  // 64..256 sequences
    const std::vector<std::pair<std::string, std::vector<int>>> batches = {
        {"b1_ctx8k", std::vector<int>(1, 8192)},
        {"b4_ctx8k", std::vector<int>(4, 8192)},
        {"b64_rand1k-8k", random_lens(64, 1024, 8192, 11)},
        {"b1_ctx30k", std::vector<int>(1, 30 * 1024)},
        {"b128_rand128-2k", random_lens(128, 128, 2048, 12)},
        {"rand_b" + std::to_string(n_rand) + "_64-8k", random_lens(n_rand, 64, 8192, 13)},
    };
    for (const auto& [bname, lens] : batches)
      for (int page : {16, 64}) {
        Case c;
        c.name = "minimax_" + bname + "_p" + std::to_string(page);
        c.num_q_heads = 16, c.num_kv_heads = 1, c.block_size = page;
        c.kv_lens = lens;
        c.max_q_len = 8;
        add(c, {kBf16, kFp8Tensor, kFp8TokenHead}, {1, 2, 4, 8});
      }
  }
  // decode_sweeps.json "split_k_sliding_window_decode": 32 / 8 heads, d 128, page 16; window 4096
  // (window_left 4095) unless said; the flatness series bs 64 at 8K, 32K, 128K (TB/s over the window).
  {
    auto swa = [](int window, int n, int kv_len, const std::string& ctx) {
      Case c = repeat("swa_w" + std::to_string(window) + "_b" + std::to_string(n) + "_ctx" + ctx, n, kv_len);
      c.window = window;
      add(c, {kBf16, kFp8Tensor}, {1}, "");
    };
    swa(4096, 1, 8192, "8k");
    swa(4096, 8, 6700, "6700");
    swa(4096, 16, 8192, "8k");
    swa(4096, 32, 8192, "8k");
    swa(1024, 32, 2048, "2k");
    swa(4096, 32, 590, "590");
    swa(4096, 2, 20000, "20000");
    swa(4096, 64, 8192, "8k");
    swa(4096, 64, 32768, "32k");
    swa(4096, 64, 131072, "128k");  // 17 GB of K and of V (bf16): allocated once, freed after
  }
  // Serving decode shapes (tests/data/unified_default.json), then MTP verify on two of them.
  for (const char* name : {"serve_decode_b64_ctx8k", "serve_decode_b8_ctx32k", "serve_decode_b1_ctx128k",
                           "serve_decode_mixed_15x2k_1x128k", "serve_decode_mixed_255x1k_1x100k",
                           "serve_decode_window256_b4_ctx8k"})
    add(from_scenario(name), {kBf16, kFp8Tensor}, {1}, "", true);
  for (auto [n, kv_len, ctx] : {std::tuple{64, 8192, "8k"}, std::tuple{8, 32768, "32k"}}) {
    Case c = repeat("mtp_b" + std::to_string(n) + "_ctx" + ctx, n, kv_len);
    c.max_q_len = 8;
    add(c, {kBf16, kFp8Tensor}, {1, 2, 4, 8}, "_q", true);
  }
  // Random-length batches of 32 / 8 heads (seeded).
  for (int n : {64, 128, 256})
    add(Case{.name = "rand_b" + std::to_string(n) + "_1k-8k", .kv_lens = random_lens(n, 1024, 8192, 100 + n)},
        {kBf16, kFp8Tensor}, {1}, "");
  // decode_d128_b16 (fp16 queries, 16 / 2 heads).
  add(from_scenario("decode_d128_b16"), {kF16, kFp8Tensor}, {1}, "");
}

}  // namespace hipattn::bench
