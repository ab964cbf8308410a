// hipattn/kernels/common/split_merge.hpp: the merge of split-KV partial states into the output, the
// body of every family's reduce kernel (ALGORITHM.md section 4's LSE-weighted merge; the sink joins
// the denominator exactly once, here).
//
// A partial state is (O normalized within its part, lse in log2 units); a part that saw no key holds
// lse = -inf (and O = 0) and gets no weight. Thread c4 / 4 of an item merges columns [c4, c4 + 4).
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/kernels/common/output_store.hpp"
#include "hipattn/kernels/common/softmax_step.hpp"
#include "hipattn/platform/config.hpp"
#include "hipattn/platform/fixed_string.hpp"

namespace hipattn {

// The manifest of a reduce kernel (platform/fixed_string.hpp HIPATTN_KERNEL_MANIFEST):
// "kernel=split_kv_reduce q=bf16 dv=128 threads=128".
constexpr FixedString reduce_manifest(const char* kernel, bool bf16, int d_v, int threads) {
  return FixedString().field("kernel", kernel).field("q", bf16 ? "bf16" : "f16").field("dv", d_v).field("threads", threads);
}

}  // namespace hipattn

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

// The parts of one (row, q head): part s at ws_o[(base + s * step) * kD + c4 ...] and
// ws_lse[base + s * step]. Writes the 4 output columns of (token, head) in the output's format
// (kernels/common/output_store.hpp; a per-group output reduces over the item's adjacent lanes, so
// every thread of an item calls this) and, from the thread with c4 == 0,
// the natural-log LSE at lse[lse_index] (when lse is not null: the kernel argument itself, so that
// the store stays a global one on CDNA; a pointer selected against null would become a flat store).
// sink2: the head's sink in log2 units, or -inf.
template <class Arch, bool kBf16, int kD>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void merge_split_partials(const float* ws_o, const float* ws_lse, int64_t base,
                                                             int64_t step, int32_t parts, int c4, float sink2,
                                                             const OutputArgs& out, int32_t token, int32_t head,
                                                             float* lse, int64_t lse_index) {
  // Parts are read kBatch at a time with independent loads, so a long part list costs a few memory
  // latencies, not one per part.
  constexpr int kBatch = 8;
  float m = sink2;
  for (int s0 = 0; s0 < parts; s0 += kBatch) {
    float ls[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) ls[k] = s0 + k < parts ? ws_lse[base + (s0 + k) * step] : -INFINITY;
#pragma unroll
    for (int k = 0; k < kBatch; ++k) m = fmaxf(m, ls[k]);
  }
  const float ms = safe_max(m);
  float l = sink2 != -INFINITY ? Arch::exp2(sink2 - ms) : 0.f;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int s0 = 0; s0 < parts; s0 += kBatch) {
    float ls[kBatch];
    float4 o[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const bool in = s0 + k < parts;
      const int64_t row = base + (s0 + k) * step;
      ls[k] = in ? ws_lse[row] : -INFINITY;
      o[k] = in ? *reinterpret_cast<const float4*>(ws_o + row * kD + c4) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (ls[k] == -INFINITY) continue;  // a part with no key
      const float w = Arch::exp2(ls[k] - ms);
      l += w;
      acc[0] += w * o[k].x;
      acc[1] += w * o[k].y;
      acc[2] += w * o[k].z;
      acc[3] += w * o[k].w;
    }
  }
  const float inv = l > 0.f ? 1.f / l : 0.f;
#pragma unroll
  for (int k = 0; k < 4; ++k) acc[k] *= inv;
  store_output_cols4<Arch, kBf16>(out, token, head, c4, acc);
  if (lse != nullptr && c4 == 0) lse[lse_index] = l > 0.f ? (m + __log2f(l)) * kLn2 : -INFINITY;
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
