// bench/bench_common.hpp: the measurement method shared by the sweeps of hipattn_bench
// (bench_unified.cu, bench_paged_decode.cu, bench_dense_prefill.cu, bench_mla_decode.cu,
// bench_fp8_io.cu), and the byte count their TB/s figures use.
//
// Method (the one of the design documents' H200 peer table): each call is captured in a CUDA graph; before
// each timed replay the L2 is flushed by a 256 MiB write; replays are timed with device events; the
// figure is the median of kReps after 3 warm-ups. The ceilings (device copy bandwidth, the matrix
// atom's peak, the warpgroup MMA's peak) are measured once in the same run, before the sweeps
// (bench_unified.cu's main).
#pragma once
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "../testing/paged_problem.hpp"
#include "hipattn/numeric/bf16.hpp"
#include "hipattn/numeric/fp16.hpp"
#include "hipattn/platform/runtime.hpp"

namespace hipattn::bench {

inline constexpr size_t kFlushBytes = size_t(256) << 20;
inline constexpr int kReps = 40;

// The ceilings of this run and the flush buffer (set by main before any benchmark runs).
// g_mma_tflops: the mma.sync m16n8k16 bf16 atom (CDNA: the MFMA 16x16x16 bf16 atom);
// g_wgmma_tflops: the sm_90a warpgroup MMA, wgmma m64n256k16 bf16 from shared memory; 0 where there
// is none (HIP builds, GPUs other than sm_90, device code not built for sm_90a);
// g_fp8_mma_tflops: the fp8 atom, mma.sync m16n8k32 e4m3 (issue 13; emulated through f16 MMAs on
// sm_90); g_fp8_wgmma_tflops: wgmma m64n256k32 e4m3, Hopper's native fp8 rate; 0 where not measured
// (HIP builds, GPUs other than sm_90).
inline double g_copy_tbps = 0, g_mma_tflops = 0, g_wgmma_tflops = 0, g_fp8_mma_tflops = 0, g_fp8_wgmma_tflops = 0;
inline void* g_flush = nullptr;

struct Timer {
  rt::event_t a, b;
  Timer() { HIPATTN_CHECK(rt::event_create(&a)); HIPATTN_CHECK(rt::event_create(&b)); }
  ~Timer() { (void)rt::event_destroy(a); (void)rt::event_destroy(b); }
};

// Median time in ms of `fn` over kReps launches, each after an L2 flush.
template <class Fn>
double median_ms(Fn&& fn, void* flush, std::vector<double>* all = nullptr) {
  Timer t;
  std::vector<double> ms;
  for (int i = 0; i < kReps + 3; ++i) {
    HIPATTN_CHECK(rt::memset_async(flush, i & 0xFF, kFlushBytes, nullptr));
    HIPATTN_CHECK(rt::event_record(t.a, nullptr));
    fn();
    HIPATTN_CHECK(rt::event_record(t.b, nullptr));
    HIPATTN_CHECK(rt::event_synchronize(t.b));
    float x = 0;
    HIPATTN_CHECK(rt::event_elapsed_ms(&x, t.a, t.b));
    if (i >= 3) ms.push_back(x);  // the first launches warm up
  }
  std::sort(ms.begin(), ms.end());
  if (all) *all = ms;
  return ms[ms.size() / 2];
}

// n 16-bit elements (bf16 or fp16) uniform in [-1, 1] from a hash of their index and a seed (a
// template, so that every translation unit of the benchmark may instantiate it).
template <int = 0>
__global__ void fill_uniform16_kernel(uint16_t* p, size_t n, uint32_t seed, bool bf16) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t x = (static_cast<uint32_t>(i) ^ static_cast<uint32_t>(i >> 32) * 0x85EBCA6Bu) * 2654435761u ^ seed;
    x ^= x >> 15; x *= 2246822519u; x ^= x >> 13; x *= 3266489917u; x ^= x >> 16;
    const float f = float(x >> 8) * (2.0f / 16777215.0f) - 1.0f;  // [-1, 1]
    p[i] = bf16 ? bfloat16_t::from_float(f).bits : half_t::from_float(f).bits;
  }
}
inline void fill_uniform16(testing::DeviceBuffer& b, uint32_t seed, bool bf16) {
  if (b.bytes == 0) return;
  fill_uniform16_kernel<><<<1024, 256>>>(b.as<uint16_t>(), b.bytes / 2, seed, bf16);
  HIPATTN_CHECK_LAUNCH();
}

// Device copy bandwidth (cudaMemcpyAsync D2D of 2 GiB), read + write, in TB/s.
inline double measure_copy_tbps() {
  const size_t n = size_t(2) << 30;
  testing::DeviceBuffer a(n), b(n);
  HIPATTN_CHECK(rt::memset_async(a.ptr, 1, n, nullptr));
  const double ms = median_ms([&] { HIPATTN_CHECK(rt::memcpy_d2d_async(b.ptr, a.ptr, n, nullptr)); }, g_flush);
  return 2.0 * n / (ms * 1e-3) / 1e12;
}

// The benchmark's time: the median replay of `graph` (manual time), in ms.
inline double time_graph(benchmark::State& state, const rt::CapturedGraph& graph) {
  double ms = 0;
  for (auto _ : state) {
    ms = median_ms([&] { graph.launch(nullptr); }, g_flush);
    state.SetIterationTime(ms * 1e-3);
  }
  return ms;
}

// us, TB/s over `bytes` and that rate as a fraction of the copy ceiling.
inline void set_bandwidth_counters(benchmark::State& state, double ms, double bytes) {
  const double tbps = bytes / (ms * 1e-3) / 1e12;
  state.counters["us"] = ms * 1e3;
  state.counters["TB/s"] = tbps;
  state.counters["bw_frac"] = tbps / g_copy_tbps;
}

// Exact attended (q, k) pairs and the keys read (per sequence, the union of its rows' visible keys),
// summed over sequences (q_len, kv_len); bottom-right causal, keys j >= pos - window_left (-1: none).
struct Attended {
  double pairs = 0, keys = 0;
};
inline Attended attended(const std::vector<std::pair<int, int>>& seqs, int window_left) {
  Attended a;
  for (auto [ql, kl] : seqs) {
    const int ctx = kl - ql;
    int64_t lo_union = kl;
    for (int i = 0; i < ql; ++i) {
      const int pos = ctx + i;
      const int hi = std::min(kl, pos + 1);
      const int lo = window_left >= 0 ? std::max(0, pos - window_left) : 0;
      a.pairs += std::max(0, hi - lo);
      lo_union = std::min<int64_t>(lo_union, lo);
    }
    if (ql > 0) a.keys += double(kl - lo_union);
  }
  return a;
}

// Compulsory bytes: Q and O (16-bit) of `tokens` query tokens, the K and V of `keys` keys of every kv
// head (fp8: one byte an element), and the per-(token, head) fp8 scales (two floats a key and head).
inline double compulsory_bytes(double tokens, int num_q_heads, int num_kv_heads, int head_size, DType kv,
                               KvScaleMode mode, double keys) {
  return tokens * num_q_heads * head_size * 2 * 2 +
         keys * num_kv_heads * (2.0 * head_size * dtype_size(kv) + (mode == KvScaleMode::per_token_head ? 8.0 : 0.0));
}

// The paged-decode sweep (bench_paged_decode.cu): registered by main after the unified one.
void register_paged_decode_benchmarks();
// The dense-prefill sweep (bench_dense_prefill.cu): registered by main after the paged-decode one.
void register_dense_prefill_benchmarks();
// The MLA-decode sweep (bench_mla_decode.cu): registered by main after the dense-prefill one.
void register_mla_decode_benchmarks();
// The fp8 query / output rows of issue 13 (bench_fp8_io.cu): registered by main last.
void register_fp8_io_benchmarks();

}  // namespace hipattn::bench
