// Benchmark sweep of unified attention: every default and serving scenario x path {auto, 2d, 3d},
// on a paged cache of at least 2 GiB (K and V each) with randomly permuted block tables, next to the
// ceilings of the same run: device copy bandwidth, the mma.sync matrix-unit peak and (sm_90a) the
// warpgroup MMA (wgmma) peak.
//
// Method (bench_common.hpp, the one of the design documents' H200 peer table): each call is captured in a
// CUDA graph; before each timed replay the L2 is flushed by a 256 MiB write; replays are timed with
// device events; the figure is the median of 40 after 3 warm-ups. main also registers the paged-decode
// sweep (bench_paged_decode.cu), the dense-prefill sweep (bench_dense_prefill.cu), the MLA-decode sweep
// (bench_mla_decode.cu) and the fp8 query / output rows (bench_fp8_io.cu; with the fp8 mma.sync
// ceiling measured here).
// Counters: us (median), TB/s over compulsory bytes (Q + O + the K/V of attended keys, + fp8 scales),
// TFLOP/s over exact attended (q, k) pairs (4 * pairs * head_size per q head), and both as fractions
// of the ceilings (bw_frac, mma_frac).
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "../testing/scenario_spec.hpp"
#include "bench_common.hpp"
#include "hipattn/arch/arch.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/dispatch/unified_attention.hpp"
#if defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/arch/sm90/wgmma.hpp"
#endif

namespace {
using namespace hipattn;
using namespace hipattn::testing;
using namespace hipattn::bench;

// Back-to-back independent matrix-unit ops in registers: the peak of the atom the kernels use
// (mma.sync m16n8k16 bf16 on sm_90; v_mfma_f32_16x16x16_bf16 on CDNA, 16 x 16 x 16 per wave).
// kFp8 (CUDA only, issue 13): the fp8 atom, mma.sync m16n8k32 f32.e4m3.e4m3.f32, same loop, except
// that the operands change every 8 MMAs: sm_90 has no e4m3 mma.sync and runs it as a conversion of
// both operands to f16 and f16 MMAs (NVIDIA/cutlass#1986), and with fixed operands the conversions
// were hoisted out of the loop (the "ceiling" then read 1531 TFLOP/s, 2.4x bf16: not a rate any
// kernel sees). Run v15's loop also started its 8 accumulators equal, and the e4m3 loop's SASS held 10
// HMMA where 16 were expected (merged chains; it read 1060): each now starts apart (not yet re-measured).
#if defined(HIPATTN_BACKEND_CUDA)
template <bool kFp8>
constexpr double kAtomFlopsPerWave = 2.0 * 16 * 8 * (kFp8 ? 32 : 16);
template <bool kFp8>
__global__ void mma_peak_kernel(float* sink, int iters) {
  uint32_t a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x * 5u, threadIdx.x * 7u};
  uint32_t b[2] = {threadIdx.x * 11u, threadIdx.x * 13u};
  // each accumulator its own start: equal starts with equal products let ptxas merge the 8 chains (the
  // e4m3 loop of run v15: 10 HMMA for 8 x 2; CHANGELOG.md, 2026-12-02 (fp8 contract)
  float c[8][4];
#pragma unroll
  for (int k = 0; k < 8; ++k)
#pragma unroll
    for (int j = 0; j < 4; ++j) c[k][j] = static_cast<float>(k * 4 + j + threadIdx.x);
  for (int i = 0; i < iters; ++i) {
    if constexpr (kFp8) {
      a[0] ^= static_cast<uint32_t>(i);
      b[0] ^= static_cast<uint32_t>(i) << 1;
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if constexpr (kFp8) sm90::mma_16832_e4m3(c[k], a, b);
      else sm90::mma_16816_bf16(c[k], a, b);
    }
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
  if (s == 1234.5f) *sink = s;
}
#else
template <bool kFp8>
constexpr double kAtomFlopsPerWave = 2.0 * 16 * 16 * 16;
template <bool kFp8>
__global__ void mma_peak_kernel(float* sink, int iters) {
  static_assert(!kFp8, "the fp8 atom's ceiling is measured on CUDA only");
  const short t = static_cast<short>(threadIdx.x);
  const cdna3::b16x4 a = {t, static_cast<short>(t * 3), static_cast<short>(t * 5), static_cast<short>(t * 7)};
  const cdna3::b16x4 b = {static_cast<short>(t * 11), static_cast<short>(t * 13), t, t};
  cdna3::f32x4 c[8] = {};
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int k = 0; k < 8; ++k) cdna3::mfma_16x16x16<true>(c[k], a, b);
  float s = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
  if (s == 1234.5f) *sink = s;
}
#endif

template <bool kFp8 = false>
double measure_mma_tflops(int sms) {
  DeviceBuffer sink(64);
  const int iters = 4096, blocks = sms * 8, threads = 256;
  const int wave = rt::cached_device_properties().wave_size;
  const double ms = median_ms([&] { mma_peak_kernel<kFp8><<<blocks, threads>>>(sink.as<float>(), iters); HIPATTN_CHECK_LAUNCH(); }, g_flush);
  const double flops = double(blocks) * (threads / wave) * iters * 8 * kAtomFlopsPerWave<kFp8>;
  return flops / (ms * 1e-3) / 1e12;
}

// The fp8 atom's ceiling (mma.sync m16n8k32 e4m3) in TFLOP/s, or 0 where it is not measured: `why`.
// The instruction is native on sm_89; on sm_90 it is emulated through f16 MMAs (NVIDIA/cutlass#1986:
// Hopper's native fp8 rate is wgmma's), so on an H200 this is the emulated mma.sync rate with each
// operand converted once per 8 MMAs: an upper bound for the kernels, which convert each K fragment for
// every MMA it feeds.
double measure_fp8_mma_tflops(const rt::DeviceProperties& props, std::string* why) {
#if defined(HIPATTN_BACKEND_CUDA)
  if (props.target == Target::sm90) return measure_mma_tflops<true>(props.multiprocessor_count);
  *why = "measured on sm_90 only, this GPU is " + props.arch_name;
#else
  (void)props;
  *why = "CUDA only";
#endif
  return 0;
}

// The warpgroup MMA's peak (sm_90a; the dense-prefill kernels' atom): one CTA of 2 warpgroups (256
// threads) per SM, each warpgroup issuing wgmma.mma_async m64n256k16 bf16 with both operands in shared
// memory, 4 k-steps per commit group, wgmma.wait_group 1 after each commit (the next group is issued
// before the previous one has finished, so the tensor cores always have one queued), `iters` groups.
// Operands: per warpgroup an A tile of 64 x 64 bf16, one B tile of 256 x 64 bf16 read by both (the
// consumer layout of an attention tile: own Q rows, shared K), K-major with the 128-byte swizzle
// (KMajorTile), as the TMA boxes land them; k-step s of a group reads bytes 32 s .. 32 s + 31 of every
// row. 8 + 8 + 32 KiB (+ 1 KiB to align) of shared memory. The 128 accumulators a thread (f32 64 x 256)
// chain through every wgmma and end in a sum that decides a store, so nothing is dead; the first
// wgmma starts them with scale-d = 0. Why one CTA an SM: 256 threads x 154 registers (128 of them
// accumulators; ptxas, CUDA 13) take 39K of the 64K-register file, so a second CTA cannot fit (the
// launch bound says 1). FLOPs: 2 * 64 * 256 * 16 per wgmma and warpgroup.
// The fp8 peak (issue 13) is the same kernel on wgmma m64n256k32 e4m3 (WgmmaE4m3: 32 bytes of K a step
// too, so the same tiles and descriptors; 2 * 64 * 256 * 32 FLOPs a wgmma): Hopper's native fp8 rate.
#if defined(HIPATTN_BACKEND_CUDA)
namespace wgmma_peak {
constexpr int kN = 256, kKSteps = 4, kWarpgroups = 2, kThreads = 128 * kWarpgroups;
using TileA = sm90::KMajorTile<sm90::SmemSwizzle::b128, 64, 32 * kKSteps>;
using TileB = sm90::KMajorTile<sm90::SmemSwizzle::b128, kN, 32 * kKSteps>;
constexpr int kTilesBytes = kWarpgroups * TileA::kBytes + TileB::kBytes;
constexpr int kSmemBytes = kTilesBytes + 1024;  // + the alignment of the 128-byte swizzle atoms
static_assert(TileA::kBytes % 1024 == 0, "every tile starts on a swizzle-atom boundary");
}  // namespace wgmma_peak

__global__ void wgmma_probe_kernel(int* out) {
#if defined(HIPATTN_SM90A_WGMMA)
  *out = 1;
#else
  *out = 0;
#endif
}

template <class Atom>
__global__ void __launch_bounds__(wgmma_peak::kThreads, 1) wgmma_peak_kernel(float* sink, int iters) {
#if defined(HIPATTN_SM90A_WGMMA)
  using namespace wgmma_peak;
  extern __shared__ uint4 smem_u4[];
  uint8_t* smem = reinterpret_cast<uint8_t*>(smem_u4);
  smem += (1024u - (sm90::smem_u32(smem) & 1023u)) & 1023u;
  // bf16 values in [1, 2) (0x3F80 | 7 mantissa bits): finite, and the sums stay far from overflow.
  for (int x = threadIdx.x; x < kTilesBytes / 4; x += kThreads)
    reinterpret_cast<uint32_t*>(smem)[x] = 0x3F803F80u | (uint32_t(x) * 0x00130029u & 0x007F007Fu);
  sm90::fence_proxy_async_shared();
  __syncthreads();
  const int wg = threadIdx.x / 128;
  const uint8_t* a = smem + wg * TileA::kBytes;
  const uint8_t* b = smem + kWarpgroups * TileA::kBytes;
  uint64_t da[kKSteps], db[kKSteps];
#pragma unroll
  for (int s = 0; s < kKSteps; ++s) {
    da[s] = sm90::make_kstep_desc<TileA>(a, 32 * s);
    db[s] = sm90::make_kstep_desc<TileB>(b, 32 * s);
  }
  float d[Atom::kAccs];  // started by scale-d = 0 (not by constants: see WgmmaF16)
  for (int it = 0; it < iters; ++it) {
    sm90::wgmma_fence_operand(d);
    sm90::wgmma_fence();
#pragma unroll
    for (int s = 0; s < kKSteps; ++s) Atom::ss(d, da[s], db[s], (it | s) != 0 ? 1u : 0u);
    sm90::wgmma_commit_group();
    sm90::wgmma_wait_group<1>();
    sm90::wgmma_fence_operand(d);
  }
  sm90::wgmma_wait_group<0>();
  sm90::wgmma_fence_operand(d);
  float sum = 0;
#pragma unroll
  for (int i = 0; i < Atom::kAccs; ++i) sum += d[i];
  if (sum == 1234.5f) sink[blockIdx.x * kThreads + threadIdx.x] = sum;
#else
  if (threadIdx.x == 0 && iters < 0) *sink = 0;  // not built for sm_90a: never launched (see the probe)
#endif
}
#endif  // HIPATTN_BACKEND_CUDA

// The wgmma ceiling in TFLOP/s (bf16, or kFp8: e4m3), or 0 where there is none: `why` says why not
// (HIP build, a GPU other than sm_90, or device code not built for sm_90a).
template <bool kFp8 = false>
double measure_wgmma_tflops(const rt::DeviceProperties& props, std::string* why) {
#if defined(HIPATTN_BACKEND_CUDA)
  using namespace wgmma_peak;
  if (props.target != Target::sm90) {
    *why = "wgmma needs sm_90, this GPU is " + props.arch_name;
    return 0;
  }
  {
    DeviceBuffer flag(sizeof(int));
    wgmma_probe_kernel<<<1, 1>>>(flag.as<int>());
    HIPATTN_CHECK_LAUNCH();
    int built = 0;
    HIPATTN_CHECK(rt::memcpy_d2h(&built, flag.ptr, sizeof(int)));
    if (built != 1) {
      *why = "device code not built for sm_90a";
      return 0;
    }
  }
  using Atom = std::conditional_t<kFp8, sm90::WgmmaE4m3<kN>, sm90::WgmmaF16<kN, true>>;
  const int sms = props.multiprocessor_count, iters = 8192;
  DeviceBuffer sink(size_t(sms) * kThreads * sizeof(float));
  HIPATTN_CHECK(rt::set_max_dynamic_shared(wgmma_peak_kernel<Atom>, kSmemBytes));
  const double ms = median_ms([&] {
    wgmma_peak_kernel<Atom><<<sms, kThreads, kSmemBytes>>>(sink.as<float>(), iters);
    HIPATTN_CHECK_LAUNCH();
  }, g_flush);
  const double flops = double(sms) * kWarpgroups * iters * kKSteps * (2.0 * 64 * kN * Atom::kK);
  return flops / (ms * 1e-3) / 1e12;
#else
  (void)props;
  *why = "no warpgroup MMA on this backend";
  return 0;
#endif
}

// ---- scenario problems (built once, shared by the three paths) ----
struct Built {
  std::unique_ptr<HostProblem> h;
  std::unique_ptr<DeviceProblem> d;
  double bytes = 0, flops = 0;
};
std::map<std::string, Built> g_built;

Built& build(const scenarios::UnifiedScenario& sc, DType kv, KvScaleMode mode) {
  const std::string key = std::string(sc.name) + "/" + std::string(dtype_name(kv)) + std::to_string(int(mode));
  auto it = g_built.find(key);
  if (it != g_built.end()) return it->second;
  g_built.clear();  // keep one problem on the device at a time
  ProblemSpec s = spec_from_scenario(sc);
  s.kv_dtype = kv;
  s.scale_mode = mode;
  s.lse = false;
  s.min_cache_bytes = int64_t(2) << 30;
  s.fill_reference_data = false;
  Built b;
  b.h = std::make_unique<HostProblem>(s);
  b.d = std::make_unique<DeviceProblem>(*b.h);
  // Compulsory bytes and exact attended pairs.
  const Attended a = attended(s.seqs, s.window_left);
  b.bytes = compulsory_bytes(b.h->num_tokens, s.num_q_heads, s.num_kv_heads, s.head_size, kv, mode, a.keys);
  b.flops = 4.0 * a.pairs * s.head_size * s.num_q_heads;
  return g_built.emplace(key, std::move(b)).first->second;
}

void bench_unified(benchmark::State& state, int scenario, UnifiedPath path, DType kv_override, KvScaleMode mode,
                   UnifiedPipeline pipeline) {
  const auto& sc = scenarios::unified_scenarios()[scenario];
  const DType kv = kv_override == DType::f32 ? (sc.bf16 ? DType::bf16 : DType::f16) : kv_override;
  Built& b = build(sc, kv, mode);
  UnifiedOptions opt;
  opt.path = path;
  opt.pipeline = pipeline;
  const UnifiedAttentionParams p = b.d->params();
  const UnifiedPlan plan = plan_unified_attention(p, opt, plan_device(rt::device_properties()));
  DeviceBuffer ws(plan.workspace_bytes);
  // Capture the call in a graph (as engines do under graph capture) and time its replays.
  const rt::CapturedGraph graph([&](rt::stream_t st) { prebuilt::unified_attention(p, ws.ptr, plan.workspace_bytes, st, opt); });
  const double ms = time_graph(state, graph);
  const double s = ms * 1e-3;
  set_bandwidth_counters(state, ms, b.bytes);
  state.counters["TFLOP/s"] = b.flops / s / 1e12;
  state.counters["mma_frac"] = b.flops / s / 1e12 / g_mma_tflops;
  if (g_wgmma_tflops > 0) state.counters["wgmma_frac"] = b.flops / s / 1e12 / g_wgmma_tflops;
  state.counters["segments"] = !plan.split() ? 0 : plan.grid == UnifiedGrid::split_planned ? plan.capacity : plan.num_segments;
  state.SetLabel(!plan.split() ? (plan.pipeline == PlanPipeline::warpgroup ? "2d-warpgroup" : plan.pipeline == PlanPipeline::pingpong ? "2d-pingpong" : "2d") : plan.grid == UnifiedGrid::split_planned ? "3d-planned" : "3d");
}

// Tile experiment: one prefill tile shape launched directly (2D), beside the dispatcher's choice, so
// that a tile change is measured before it goes into the table (bench/NOTES.md).
template <int kMT, int kKN, int kStages>
void bench_prefill_tile(benchmark::State& state, int scenario) {
  using Cfg = AttentionConfig<attention_shape(true, KvKind::same16, 128, 128, TileShape{4, 1, kMT, kKN, kStages}, Target::sm90),
                              PlainVariant>;
  const auto& sc = scenarios::unified_scenarios()[scenario];
  Built& b = build(sc, DType::bf16, KvScaleMode::none);
  const UnifiedAttentionParams p = b.d->params();
  UnifiedOptions opt;
  opt.path = UnifiedPath::two_d;
  UnifiedPlan plan = plan_unified_attention(p, opt, plan_device(rt::cached_device_properties()));
  const int32_t group = p.num_q_heads / p.num_kv_heads;
  plan.rows_per_token = std::min(group, Cfg::kBM);
  plan.block_q = Cfg::kBM / plan.rows_per_token;
  plan.head_chunks = (group + plan.rows_per_token - 1) / plan.rows_per_token;
  plan.grid_x = int64_t(p.num_tokens) / plan.block_q + p.num_seqs;
  const rt::CapturedGraph graph([&](rt::stream_t st) { detail::launch_unified_config<Cfg>(p, plan, nullptr, st, unified_variant_from_params<typename Cfg::Variant>(p)); });
  const double ms = time_graph(state, graph);
  state.counters["us"] = ms * 1e3;
  state.counters["TFLOP/s"] = b.flops / (ms * 1e-3) / 1e12;
  state.counters["mma_frac"] = b.flops / (ms * 1e-3) / 1e12 / g_mma_tflops;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  if (rt::get_device_count(&n) != rt::success || n == 0) {
    std::printf("no GPU present: benchmark sweep skipped\n");
    return 0;
  }
  const rt::DeviceProperties props = rt::device_properties();
  HIPATTN_CHECK(rt::malloc_device(&g_flush, kFlushBytes));
  g_copy_tbps = measure_copy_tbps();
  g_mma_tflops = measure_mma_tflops(props.multiprocessor_count);
  std::string no_wgmma, no_fp8_mma, no_fp8_wgmma;
  g_wgmma_tflops = measure_wgmma_tflops(props, &no_wgmma);
  g_fp8_mma_tflops = measure_fp8_mma_tflops(props, &no_fp8_mma);
  g_fp8_wgmma_tflops = measure_wgmma_tflops<true>(props, &no_fp8_wgmma);
  auto ceiling = [](double tflops, const std::string& why) {
    return tflops > 0 ? std::to_string(int(tflops + 0.5)) + " TFLOP/s" : "n/a (" + why + ")";
  };
  std::printf("device %s (%s), %d SMs/CUs\nceilings: copy %.2f TB/s (read + write), matrix atom (bf16) %.0f TFLOP/s, "
              "mma.sync m16n8k32 (fp8 e4m3, emulated on sm_90) %s, wgmma m64n256k16 (bf16) %s, wgmma m64n256k32 "
              "(fp8 e4m3) %s\n",
              props.arch_name.c_str(), std::string(target_name(props.target)).c_str(), props.multiprocessor_count,
              g_copy_tbps, g_mma_tflops, ceiling(g_fp8_mma_tflops, no_fp8_mma).c_str(),
              ceiling(g_wgmma_tflops, no_wgmma).c_str(), ceiling(g_fp8_wgmma_tflops, no_fp8_wgmma).c_str());
  const auto& all = scenarios::unified_scenarios();
  for (int i = 0; i < int(all.size()); ++i) {
    for (auto [path, pname] : {std::pair{UnifiedPath::automatic, "auto"}, std::pair{UnifiedPath::two_d, "2d"},
                               std::pair{UnifiedPath::three_d, "3d"}}) {
      benchmark::RegisterBenchmark((std::string("unified/") + all[i].name + "/" + pname).c_str(), bench_unified, i, path,
                                   DType::f32, KvScaleMode::none, UnifiedPipeline::automatic)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    }
    // prefill rows: the 2D grid on the attention skeleton (mma.sync) too, beside sm_90's warpgroup pipeline
    bool prefill = false;
    for (auto [q, k] : all[i].seqs) prefill = prefill || q > 1;
    if (prefill)
      benchmark::RegisterBenchmark((std::string("unified/") + all[i].name + "/2d-skeleton").c_str(), bench_unified, i,
                                   UnifiedPath::two_d, DType::f32, KvScaleMode::none, UnifiedPipeline::skeleton)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    if (std::string(all[i].group) == "serving" && all[i].seqs[0].first == 1) {  // fp8 KV on serving decode
      benchmark::RegisterBenchmark((std::string("unified/") + all[i].name + "/auto/fp8_e4m3fn_tensor").c_str(), bench_unified,
                                   i, UnifiedPath::automatic, DType::fp8_e4m3fn, KvScaleMode::per_tensor,
                                   UnifiedPipeline::automatic)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    }
  }
  for (int i = 0; i < int(all.size()); ++i) {
    if (std::string(all[i].name) != "serve_prefill_1x4k") continue;
    benchmark::RegisterBenchmark("tile_experiment/serve_prefill_1x4k/mt1_kn64_s3", bench_prefill_tile<1, 64, 3>, i)
        ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("tile_experiment/serve_prefill_1x4k/mt2_kn32_s2", bench_prefill_tile<2, 32, 2>, i)
        ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("tile_experiment/serve_prefill_1x4k/mt1_kn32_s3", bench_prefill_tile<1, 32, 3>, i)
        ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
  }
  register_paged_decode_benchmarks();
  register_dense_prefill_benchmarks();
  register_mla_decode_benchmarks();
  register_fp8_io_benchmarks();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  (void)rt::free_device(g_flush);
  return 0;
}
