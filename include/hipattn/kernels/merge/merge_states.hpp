// hipattn/kernels/merge/merge_states.hpp: merge_states_kernel, the merge of R partial attention results
// (O_r, LSE_r) of the same queries into one output and LSE (ALGORITHM.md section 4; the host entry is
// dispatch/merge_attention_states.hpp, the float64 reference reference/merge.hpp).
//
// The split-KV reduces merge their partials in-kernel (kernels/common/split_merge.hpp); this is the same
// rule over caller-owned strided tensors of any dtype, any head size and any number of parts:
//   * one (token, head) item per group of T threads (T = merge_threads_per_item(head_size) <= 64); thread
//     s of the group merges the 8-column chunks s, s + T, ... (one or two chunks: 16-byte loads and
//     stores of 16-bit data, two 16-byte vectors of fp32 data);
//   * pass 1: m = max of the ranks' LSEs, read 8 ranks at a time with independent, unconditional loads
//     (load_lse_batch; every thread of the group reads them: one address per group, served once per
//     wave), noting a NaN and the rank of the maximum;
//   * pass 2, per chunk: the ranks' LSEs again (L1 hits), then their 8 O chunks loaded before any is
//     used, then w_r = 2^((LSE_r - m) log2 e), l = sum w_r, acc = sum w_r O_r; out = acc / l. A rank
//     with LSE = -inf gets no weight and its O is not read: its load is redirected to the maximum's row
//     (read anyway, so an L1 hit) and the value discarded, so the loads carry no divergent branch (only
//     the grid-uniform test of the last, partial batch of ranks);
//   * lse = m + log2(l) ln 2 (natural log, as the API), written by the group's thread 0. Every rank
//     empty (m = -inf): out = 0, lse = -inf. A NaN LSE: out and lse NaN (reference/merge.hpp).
// m is kept in natural-log units (exact: a maximum of the inputs), so the output LSE carries no
// log2 e round trip. Items are walked grid-stride, so the grid is bounded and depends on host values only.
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/arch/arch.hpp"
#include "hipattn/numeric/dtype.hpp"
#include "hipattn/platform/config.hpp"
#include "hipattn/platform/fixed_string.hpp"
#include "hipattn/tile/online_softmax.hpp"

namespace hipattn {

inline constexpr int kMergeColumnsPerThread = 8;  // columns one thread merges at a time (one chunk)
inline constexpr int kMergeRankBatch = 8;         // ranks read at a time with independent loads
inline constexpr int kMergeMaxThreadsPerItem = 64;
inline constexpr int kMergeBlockThreads = 256;    // at most; a block holds whole items
inline constexpr int64_t kMergeMaxBlocks = int64_t(1) << 20;  // items beyond are walked grid-stride

// Threads of one (token, head) item: the head's 8-column chunks spread evenly over at most 64 threads
// (head_size 64: 8, 128: 16, 512: 64, 576: 36 x 2 chunks, 1024: 64 x 2 chunks).
constexpr int merge_threads_per_item(int head_size) {
  const int chunks = head_size / kMergeColumnsPerThread > 0 ? head_size / kMergeColumnsPerThread : 1;
  const int per_thread = (chunks + kMergeMaxThreadsPerItem - 1) / kMergeMaxThreadsPerItem;
  return (chunks + per_thread - 1) / per_thread;
}

// The kernel's arguments (the params' fields, strides in elements; host-visible so that host code can
// build them).
struct MergeStatesArgs {
  const void* partial_out = nullptr;
  int64_t po_stride_rank = 0, po_stride_token = 0, po_stride_head = 0;
  const float* partial_lse = nullptr;
  int64_t plse_stride_rank = 0, plse_stride_token = 0, plse_stride_head = 0;
  void* out = nullptr;
  int64_t o_stride_token = 0, o_stride_head = 0;
  float* lse = nullptr;  // null: no LSE output
  int64_t lse_stride_token = 0, lse_stride_head = 0;
  int64_t num_items = 0;  // num_tokens x num_heads; item i is (token i / num_heads, head i % num_heads)
  int32_t num_ranks = 0, num_heads = 0, head_size = 0;
  int32_t threads_per_item = 1;  // merge_threads_per_item(head_size); blockDim.x is a multiple of it
};

// The merge kernel's manifest (platform/fixed_string.hpp HIPATTN_KERNEL_MANIFEST):
// "kernel=merge_states in=f32 out=bf16" (the dtype names of numeric/dtype.hpp).
constexpr FixedString merge_states_manifest(DType in, DType out) {
  return FixedString().field("kernel", "merge_states").field("in", dtype_name(in).data()).field("out", dtype_name(out).data());
}

}  // namespace hipattn

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {
namespace merge_detail {

// Two fp16 values (element 0 in the low half) -> float, exact (the hardware conversion).
HIPATTN_DEVICE HIPATTN_FORCEINLINE void f16x2_to_float(uint32_t u, float& lo, float& hi) {
#if defined(HIPATTN_BACKEND_CUDA)
  asm("{\n\t.reg .f16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;\n\t}"
      : "=f"(lo), "=f"(hi)
      : "r"(u));
#else
  typedef _Float16 h2 __attribute__((ext_vector_type(2)));
  typedef float f2 __attribute__((ext_vector_type(2)));
  const f2 f = __builtin_convertvector(__builtin_bit_cast(h2, u), f2);
  lo = f[0];
  hi = f[1];
#endif
}
// Two bf16 values (element 0 in the low half) -> float, exact.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void bf16x2_to_float(uint32_t u, float& lo, float& hi) {
  lo = __builtin_bit_cast(float, u << 16);
  hi = __builtin_bit_cast(float, u & 0xFFFF0000u);
}

// The LSEs of ranks [r0, r0 + kMergeRankBatch) into ls, -inf past the last rank. The loads are
// unconditional (the index is clamped to the last rank: an L1 hit), so that all of them are in flight
// together: a load under a branch may be merged with its use and waited for one at a time.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_lse_batch(const float* lse_in, int64_t stride_rank, int r0, int ranks,
                                                       float (&ls)[kMergeRankBatch]) {
#pragma unroll
  for (int k = 0; k < kMergeRankBatch; ++k) ls[k] = lse_in[(r0 + k < ranks ? r0 + k : ranks - 1) * stride_rank];
#pragma unroll
  for (int k = 0; k < kMergeRankBatch; ++k)
    if (r0 + k >= ranks) ls[k] = -INFINITY;
}

// One 8-column chunk of a tensor of dtype kDt: its element type, its raw registers, a load (16-byte
// aligned address), the conversion to float and the store of 8 floats (rounded to nearest even).
template <DType kDt>
struct Chunk8 {
  static_assert(kDt == DType::f16 || kDt == DType::bf16, "16-bit chunk");
  using Elem = uint16_t;
  using Raw = uint4;
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static Raw load(const Elem* p) { return *reinterpret_cast<const uint4*>(p); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void to_float(const Raw& r, float (&x)[8]) {
    const uint32_t w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (kDt == DType::bf16) bf16x2_to_float(w[i], x[2 * i], x[2 * i + 1]);
      else f16x2_to_float(w[i], x[2 * i], x[2 * i + 1]);
    }
  }
  template <class Arch>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store(Elem* p, const float (&x)[8]) {
    constexpr bool kBf16 = kDt == DType::bf16;
    *reinterpret_cast<uint4*>(p) = make_uint4(Arch::template pack2<kBf16>(x[0], x[1]), Arch::template pack2<kBf16>(x[2], x[3]),
                                              Arch::template pack2<kBf16>(x[4], x[5]), Arch::template pack2<kBf16>(x[6], x[7]));
  }
};
struct F32x8 {
  float4 a, b;
};
template <>
struct Chunk8<DType::f32> {
  using Elem = float;
  using Raw = F32x8;
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static Raw load(const Elem* p) {
    const float4* v = reinterpret_cast<const float4*>(p);
    return Raw{v[0], v[1]};
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void to_float(const Raw& r, float (&x)[8]) {
    x[0] = r.a.x, x[1] = r.a.y, x[2] = r.a.z, x[3] = r.a.w;
    x[4] = r.b.x, x[5] = r.b.y, x[6] = r.b.z, x[7] = r.b.w;
  }
  template <class Arch>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store(Elem* p, const float (&x)[8]) {
    float4* v = reinterpret_cast<float4*>(p);
    v[0] = make_float4(x[0], x[1], x[2], x[3]);
    v[1] = make_float4(x[4], x[5], x[6], x[7]);
  }
};

}  // namespace merge_detail

// Merge every (token, head) item of `a` (see the top of the file). kIn: the partials' dtype, kOut: the
// output's. Launch with blockDim.x a multiple of a.threads_per_item (at most kMergeBlockThreads) and
// any grid (items are walked grid-stride).
template <DType kIn, DType kOut>
__global__ void __launch_bounds__(kMergeBlockThreads) merge_states_kernel(const MergeStatesArgs a) {
  HIPATTN_KERNEL_MANIFEST(merge_states_manifest(kIn, kOut));
  using Arch = DeviceArch;
  using In = merge_detail::Chunk8<kIn>;
  using Out = merge_detail::Chunk8<kOut>;
  constexpr int kB = kMergeRankBatch, kC = kMergeColumnsPerThread;
  const int tpi = a.threads_per_item;
  const int slot = static_cast<int>(threadIdx.x) / tpi;  // the block's item slot of this thread
  const int sub = static_cast<int>(threadIdx.x) - slot * tpi;
  const int items_per_block = static_cast<int>(blockDim.x) / tpi;
  const int ranks = a.num_ranks;
  const int64_t item_step = static_cast<int64_t>(gridDim.x) * items_per_block;
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * items_per_block + slot; item < a.num_items; item += item_step) {
    const int64_t token = item / a.num_heads;
    const int64_t head = item - token * a.num_heads;
    const float* lse_in = a.partial_lse + token * a.plse_stride_token + head * a.plse_stride_head;

    // Pass 1: the maximum LSE (and its rank), and whether any LSE is NaN.
    float m = -INFINITY;
    int rmax = 0;
    bool nan = false;
    for (int r0 = 0; r0 < ranks; r0 += kB) {
      float ls[kB];
      merge_detail::load_lse_batch(lse_in, a.plse_stride_rank, r0, ranks, ls);
#pragma unroll
      for (int k = 0; k < kB; ++k) {
        nan |= ls[k] != ls[k];
        if (ls[k] > m) m = ls[k], rmax = r0 + k;
      }
    }

    const typename In::Elem* o_in =
        static_cast<const typename In::Elem*>(a.partial_out) + token * a.po_stride_token + head * a.po_stride_head;
    typename Out::Elem* o_out = static_cast<typename Out::Elem*>(a.out) + token * a.o_stride_token + head * a.o_stride_head;

    if (nan || m == -INFINITY) {  // a NaN poisons the row; no rank saw a key: zeros
      const float v = nan ? NAN : 0.f;
      const float fill[kC] = {v, v, v, v, v, v, v, v};
      for (int c = sub * kC; c < a.head_size; c += tpi * kC) Out::template store<Arch>(o_out + c, fill);
      if (a.lse != nullptr && sub == 0) a.lse[token * a.lse_stride_token + head * a.lse_stride_head] = nan ? NAN : -INFINITY;
      continue;
    }

    // Pass 2, per chunk: the weighted sum.
    float l = 0.f;
    for (int c = sub * kC; c < a.head_size; c += tpi * kC) {
      float acc[kC];
#pragma unroll
      for (int i = 0; i < kC; ++i) acc[i] = 0.f;
      l = 0.f;
      for (int r0 = 0; r0 < ranks; r0 += kB) {
        float ls[kB];
        typename In::Raw o[kB];
        merge_detail::load_lse_batch(lse_in, a.plse_stride_rank, r0, ranks, ls);
#pragma unroll
        for (int k = 0; k < kB; ++k) {
          if (r0 + k < ranks) {  // uniform over the grid
            const int src = ls[k] != -INFINITY ? r0 + k : rmax;  // an empty rank's O is never read
            o[k] = In::load(o_in + src * a.po_stride_rank + c);
          }
        }
#pragma unroll
        for (int k = 0; k < kB; ++k) {
          if (ls[k] == -INFINITY) continue;  // an empty rank (or past the last)
          const float w = Arch::exp2((ls[k] - m) * kLog2e);
          float x[kC];
          In::to_float(o[k], x);
          l += w;
#pragma unroll
          for (int i = 0; i < kC; ++i) acc[i] += w * x[i];
        }
      }
      const float inv = 1.f / l;  // l >= 1: the maximum's weight is 2^0
#pragma unroll
      for (int i = 0; i < kC; ++i) acc[i] *= inv;
      Out::template store<Arch>(o_out + c, acc);
    }
    // Thread 0 of the group merged chunk 0, so its l is the row's.
    if (a.lse != nullptr && sub == 0) a.lse[token * a.lse_stride_token + head * a.lse_stride_head] = m + __log2f(l) * kLn2;
  }
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
