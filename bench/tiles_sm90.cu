// bench/tiles_sm90.cu: candidate configurations of sm_90 dense prefill timed beside the shipped
// instance, in one run: key-tile sizes and stage counts (FlashAttention-3 takes 176-key tiles for
// non-causal d = 128). Run v24 of bench/NOTES.md measured them.
//
//   tools/device_run.sh tiles          (or build-dev/bench/hipattn_tiles_sm90 [case-substring])
//
// Each case (the dense-prefill target rows of issue 34: d128 causal 1 x 16K, d128 non-causal 2 x 8K,
// serve_prefill_1x4k, d256 and d192 / v128 causal 4K) runs the shipped DensePrefillSm90Config of its
// head sizes, then every candidate configuration of the same head sizes, each launched directly by
// detail::launch_dense_prefill_sm90<Cfg>. A candidate's output is compared element by element with
// the shipped instance's (which the parity suite holds to the float64 reference): both are 16-bit
// roundings of the same sums in another order, so a difference above 2^-6 relative (plus 2^-8
// absolute) is a wrong candidate, reported and counted in the exit code. The output is poisoned
// (NaN) before each checked launch. Times: the bench sweep's method (bench_common.hpp median_ms: an
// L2 flush before each launch, the median of 40 after 3 warm-ups); TFLOP/s over the exact visible
// pairs; "x shipped" is the shipped time over the candidate's (above 1: the candidate is faster).
// Registers: ptxas reports spills of the larger tiles (-Xptxas=-warn-spills in the build log).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "hipattn/dispatch/dense_prefill.hpp"
#include "hipattn/numeric/bf16.hpp"

namespace hipattn::bench {
namespace {
using testing::DeviceBuffer;

struct Case {
  const char* name;
  int num_seqs, len, q_heads, kv_heads, d_qk, d_v;
  bool causal;
};

struct Problem {
  DeviceBuffer q, k, v, out, cu;
  DensePrefillParams p;
  double flops = 0;
  explicit Problem(const Case& c) {
    const int64_t t = int64_t(c.num_seqs) * c.len;
    q = DeviceBuffer(size_t(t) * c.q_heads * c.d_qk * 2);
    k = DeviceBuffer(size_t(t) * c.kv_heads * c.d_qk * 2);
    v = DeviceBuffer(size_t(t) * c.kv_heads * c.d_v * 2);
    out = DeviceBuffer(size_t(t) * c.q_heads * c.d_v * 2);
    uint32_t seed = 0x51u;
    for (DeviceBuffer* b : {&q, &k, &v}) fill_uniform16(*b, seed++, true);
    std::vector<int32_t> cs(size_t(c.num_seqs) + 1);
    for (int s = 0; s <= c.num_seqs; ++s) cs[s] = s * c.len;
    cu = DeviceBuffer::from(cs);
    p.dtype = DType::bf16;
    p.q = q.ptr, p.k = k.ptr, p.v = v.ptr, p.out = out.ptr;
    p.q_stride_head = c.d_qk, p.q_stride_token = int64_t(c.q_heads) * c.d_qk;
    p.k_stride_head = c.d_qk, p.k_stride_token = int64_t(c.kv_heads) * c.d_qk;
    p.v_stride_head = c.d_v, p.v_stride_token = int64_t(c.kv_heads) * c.d_v;
    p.o_stride_head = c.d_v, p.o_stride_token = int64_t(c.q_heads) * c.d_v;
    p.cu_seqlens_q = p.cu_seqlens_k = cu.as<int32_t>();
    p.num_seqs = c.num_seqs, p.num_tokens_q = p.num_tokens_k = static_cast<int32_t>(t);
    p.max_seqlen_q = p.max_seqlen_k = c.len;
    p.num_q_heads = c.q_heads, p.num_kv_heads = c.kv_heads;
    p.head_size_qk = c.d_qk, p.head_size_v = c.d_v;
    p.scale = 1.0f / std::sqrt(float(c.d_qk));
    p.causal = c.causal;
    throw_if_error(validate(p));
    const double pairs = c.causal ? double(c.len) * (c.len + 1) / 2 : double(c.len) * c.len;
    flops = 2.0 * (c.d_qk + c.d_v) * c.q_heads * c.num_seqs * pairs;
    HIPATTN_CHECK(rt::device_synchronize());
  }
  std::vector<uint16_t> output() const {
    std::vector<uint16_t> h(out.bytes / 2);
    HIPATTN_CHECK(rt::memcpy_d2h(h.data(), out.ptr, out.bytes));
    return h;
  }
};

// Elements of `got` farther from `want` than 2^-6 relative + 2^-8 absolute, and the largest difference.
size_t mismatches(const std::vector<uint16_t>& want, const std::vector<uint16_t>& got, double* worst) {
  size_t bad = 0;
  *worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double a = bfloat16_t{want[i]}.to_float(), b = bfloat16_t{got[i]}.to_float();
    const double d = std::fabs(a - b);
    if (!(d <= 0x1p-6 * std::fabs(a) + 0x1p-8)) ++bad;
    if (!(d <= *worst)) *worst = d;
  }
  return bad;
}

int g_failures = 0;

// Time Cfg on the problem; the shipped instance's output and time are `ref` / `ref_ms` (empty: this is it).
template <class Cfg>
double run(const Case& c, Problem& pr, std::vector<uint16_t>& ref, double ref_ms) {
  HIPATTN_CHECK(rt::memset_async(pr.out.ptr, 0xFF, pr.out.bytes, nullptr));  // NaN: every element must be written
  detail::launch_dense_prefill_sm90<Cfg>(pr.p, nullptr);
  HIPATTN_CHECK(rt::device_synchronize());
  const std::vector<uint16_t> got = pr.output();
  double worst = 0;
  size_t bad = 0;
  if (ref.empty()) {
    ref = got;
    for (uint16_t x : got) bad += !std::isfinite(bfloat16_t{x}.to_float());
  } else {
    bad = mismatches(ref, got, &worst);
  }
  const double ms = median_ms([&] { detail::launch_dense_prefill_sm90<Cfg>(pr.p, nullptr); }, g_flush);
  std::printf("%-26s %-34s %9.1f us %7.1f TFLOP/s %6.3fx shipped  max diff %.2e%s\n", c.name, Cfg::name().c_str(),
              ms * 1e3, pr.flops / (ms * 1e-3) / 1e12, ref_ms > 0 ? ref_ms / ms : 1.0, worst,
              bad ? (" WRONG: " + std::to_string(bad) + " elements").c_str() : "");
  g_failures += bad != 0;
  return ms;
}

template <int kDqk, int kDv, class... Candidates>
void sweep(const Case& c) {
  Problem pr(c);
  std::vector<uint16_t> ref;
  const double ref_ms = run<DensePrefillSm90Config<true, kDqk, kDv, false>>(c, pr, ref, 0);
  (run<Candidates>(c, pr, ref, ref_ms), ...);
}

template <int kBN, int kStages>
using D128 = DensePrefillSm90Config<true, 128, 128, false, kBN, kStages>;
}  // namespace
}  // namespace hipattn::bench

int main(int argc, char** argv) {
  using namespace hipattn::bench;
  const std::string only = argc > 1 ? argv[1] : "";
  HIPATTN_CHECK(hipattn::rt::malloc_device(&g_flush, kFlushBytes));
  const auto want = [&](const Case& c) { return only.empty() || std::string(c.name).find(only) != std::string::npos; };
  const Case d128[] = {{"d128_h32kv8_causal_1x16k", 1, 16384, 32, 8, 128, 128, true},
                       {"d128_h32kv8_noncausal_2x8k", 2, 8192, 32, 8, 128, 128, false},
                       {"serve_prefill_1x4k", 1, 4096, 32, 8, 128, 128, true}};
  for (const Case& c : d128)
    if (want(c))
      sweep<128, 128, D128<112, 2>, D128<144, 2>, D128<160, 2>, D128<176, 2>, D128<192, 2>, D128<96, 3>, D128<112, 3>>(c);
  const Case d256{"d256_b1_h32_q4096", 1, 4096, 32, 32, 256, 256, true};
  if (want(d256))
    sweep<256, 256, hipattn::DensePrefillSm90Config<true, 256, 256, false, 64, 2>>(d256);
  const Case d192{"d192v128_b1_h32_q4096", 1, 4096, 32, 32, 192, 128, true};
  if (want(d192)) sweep<192, 128, hipattn::DensePrefillSm90Config<true, 192, 128, false, 112, 2>, hipattn::DensePrefillSm90Config<true, 192, 128, false, 96, 2>>(d192);
  std::printf("%d wrong candidate(s)\n", g_failures);
  return g_failures ? 1 : 0;
}
