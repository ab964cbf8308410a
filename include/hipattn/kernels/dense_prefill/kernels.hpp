// hipattn/kernels/dense_prefill/kernels.hpp: the dense prefill kernels.
//
//   dense_prefill_sm90_kernel<Cfg>   sm_90: persistent workgroups over the (q-block of 128 rows, q head)
//                                    items, on the warp-specialised skeleton (kernels/common/
//                                    warpgroup_pipeline.hpp: the roles and the schedule)
//   dense_prefill_kernel<Cfg>        CDNA (any target): the attention skeleton (kernels/common) with a
//                                    dense scheduler, Cfg an AttentionConfig over DenseKvLayout
//
// The sm_90 kernel's family (DenseWarpgroupFamily): one producer thread loads Q once per item and
// streams the K and V tiles of the q-block's visible keys as bulk tensor copies counted on the rings'
// full barriers; two consumer warpgroups of 64 rows each.
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/kernels/common/epilogue.hpp"
#include "hipattn/kernels/common/score_scale.hpp"
#include "hipattn/kernels/common/softmax_step.hpp"
#include "hipattn/kernels/dense_prefill/config.hpp"
#include "hipattn/paged/varlen.hpp"
#include "hipattn/tile/tile_range.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/kernels/common/attention_kernel.hpp"

namespace hipattn {

// The q-block a work item owns, and its sequence's extents.
struct DenseWork {
  int32_t seq = 0, qb = 0, head = 0;
  int32_t q_tok0 = 0, k_tok0 = 0;  // first token of the sequence in q / k (packed; 0 when batched)
  int32_t q_len = 0, kv_len = 0;
};

// Work item `item` of c.q_blocks x heads, heaviest first: item / heads is a q-block slot counted down
// from the heaviest, item % heads the q head. Two numberings of the slots (the host picks one,
// DensePrefillCommon::by_band):
//   by band: slot = band x num_seqs + seq, q-block = the sequence's last q-block minus band; so the
//            last q-block of every sequence comes first (under bottom-right causal masking each
//            sequence's heaviest), then the one before, over the whole batch;
//   global:  slot = the packed q-block numbering (paged/varlen.hpp) from the top; kept when the
//            sequences' q-block counts differ so much that most band slots would be empty.
// The persistent workgroups take the items in rounds (dense_item). False for an empty slot.
HIPATTN_DEVICE HIPATTN_FORCEINLINE bool dense_work(const DensePrefillCommon& c, int32_t item, int32_t heads, DenseWork& w) {
  const int32_t slot = item / heads;
  w.head = item - slot * heads;
  int32_t band = 0;
  if (c.by_band) {
    band = slot / c.num_seqs;
    w.seq = slot - band * c.num_seqs;
  } else {
    const int32_t qblock = c.q_blocks - 1 - slot;
    w.seq = find_seq_idx(c.cu_seqlens_q, c.num_seqs, qblock, c.block_q);
    w.qb = qblock - seq_first_q_block(c.cu_seqlens_q, w.seq, c.block_q);
  }
  if (c.cu_seqlens_q != nullptr) {
    w.q_tok0 = c.cu_seqlens_q[w.seq];
    w.q_len = c.cu_seqlens_q[w.seq + 1] - w.q_tok0;
    w.k_tok0 = c.cu_seqlens_k[w.seq];
    w.kv_len = c.cu_seqlens_k[w.seq + 1] - w.k_tok0;
  } else {
    w.q_len = c.max_seqlen_q;
    w.kv_len = c.max_seqlen_k;
  }
  if (c.by_band) w.qb = (w.q_len + c.block_q - 1) / c.block_q - 1 - band;
  return w.qb >= 0 && w.qb * c.block_q < w.q_len;
}

// The item of workgroup b (of G) in round r: round-robin in even rounds, reversed in odd ones (a
// snake), so that a workgroup that took one of the heaviest items of a round takes one of the
// lightest of the next: with items sorted heaviest first, every workgroup's total stays near the
// mean (plain round-robin gave causal 4K at d = 192 / 256 a 1.6x spread between workgroups).
// Every item of [0, rounds x G) is visited once; those >= items are skipped.
HIPATTN_DEVICE HIPATTN_FORCEINLINE int32_t dense_item(int32_t r, int32_t b, int32_t g) {
  return r * g + ((r & 1) ? g - 1 - b : b);
}

// The KV tiles of a work item (both roles compute it the same way, so they walk the same tiles).
HIPATTN_DEVICE HIPATTN_FORCEINLINE KvTileRange dense_tiles(const DensePrefillCommon& c, const DenseWork& w, int32_t bm,
                                                           int32_t bn) {
  const int32_t i_first = w.qb * bm;
  const int32_t i_last = (w.q_len < i_first + bm ? w.q_len : i_first + bm) - 1;
  return kv_tile_range(QBlockSpan{i_first, i_last, w.q_len, w.kv_len, c.causal, c.window_left}, bn);
}

// Workgroup blockIdx.x of gridDim.x: f(work, tiles) for each of its items in order (dense_item's
// rounds), empty q-block slots skipped. The producer and the consumers of the sm_90 kernel both walk
// through this one function, so their ring stages, barrier phases and turns stay in step.
template <class F>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void dense_for_each_item(const DensePrefillCommon& c, int32_t bm, int32_t bn, F&& f) {
  const int32_t g = static_cast<int32_t>(gridDim.x), b = static_cast<int32_t>(blockIdx.x);
  const int32_t items = c.q_blocks * c.num_q_heads;
  const int32_t rounds = (items + g - 1) / g;
  for (int32_t r = 0; r < rounds; ++r) {
    const int32_t item = dense_item(r, b, g);
    DenseWork w;
    if (item >= items || !dense_work(c, item, c.num_q_heads, w)) continue;
    f(w, dense_tiles(c, w, bm, bn));
  }
}

// The skeleton's scheduler for dense prefill (kernels/common/attention_kernel.hpp; the CDNA
// kernel): workgroup (x, y) = item y x heads + x (heads fastest, the q-block slots heaviest first as
// above), one q head a workgroup (rows_per_token = 1, head_chunks = group), every visible tile.
struct DenseQBlockScheduler {
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static bool get(const Args& a, AttentionWork& w) {
    const DensePrefillCommon& c = a.dense;
    DenseWork d;
    const int32_t item = static_cast<int32_t>(blockIdx.y) * c.num_q_heads + static_cast<int32_t>(blockIdx.x);
    if (!dense_work(c, item, c.num_q_heads, d)) return false;
    w.seq = d.seq;
    w.qb = d.qb;
    w.kvh = d.head / a.group;
    w.chunk = d.head - w.kvh * a.group;
    w.segment = 0;
    w.seq_tok0 = c.cu_seqlens_q != nullptr ? d.q_tok0 : 0;  // batched: the args start at the sequence
    w.q_len = d.q_len;
    w.kv_len = d.kv_len;
    w.ctx = d.kv_len - d.q_len;
    return true;
  }
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void tiles(const Args&, const AttentionWork&, const KvTileRange& r,
                                                       int32_t& begin, int32_t& end) {
    begin = r.tile_begin;
    end = r.tile_end;
  }
};

// The arguments of this workgroup (DensePrefillKernelArgs): batched, q, out and lse moved to the
// workgroup's sequence (DenseQBlockScheduler then starts its tokens at 0); packed, moved by 0. Each
// pointer stays the kernel argument plus an offset, which the compiler keeps global (no flat
// accesses). K and V are not moved: DenseKvLayout finds their rows at seq x block_table_stride + key
// (moving them cost the register-staged loader 4 VGPRs at d = 64, a wave a SIMD on gfx950).
template <class Arch, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE Args dense_sequence_args(const Args& args) {
  const DensePrefillCommon& c = args.dense;
  DenseWork d;
  int64_t s = 0;  // the sequence, as a scalar (the division that finds it runs on the vector unit)
  if (c.cu_seqlens_q == nullptr &&
      dense_work(c, static_cast<int32_t>(blockIdx.y) * c.num_q_heads + static_cast<int32_t>(blockIdx.x), c.num_q_heads, d))
    s = Arch::wave_uniform(static_cast<uint32_t>(d.seq));
  Args a = args;
  a.q = args.q + s * args.q_stride_batch;
  a.out.ptr = static_cast<char*>(args.out.ptr) + s * c.o_stride_batch * out_elem_bytes(args.out.kind);
  a.lse = args.lse + (args.lse != nullptr ? s * c.max_seqlen_q * args.lse_stride_token : 0);
  return a;
}

// The CDNA dense prefill kernel: the attention skeleton with the dense scheduler and the paged
// loaders over DenseKvLayout (a page of one token whose block is its row).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) HIPATTN_CDNA_WAVES_PER_SIMD(kernel_waves_per_simd<Cfg>())
    dense_prefill_kernel(const dense_args_t<Cfg> args) {
  HIPATTN_KERNEL_MANIFEST(kernel_manifest<Cfg>("dense_prefill"));
  extern __shared__ __align__(16) char hipattn_smem[];
  attention_kernel<Cfg, DenseQBlockScheduler, NormalizedStore>(dense_sequence_args<DeviceArch>(args), hipattn_smem);
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE

#if defined(HIPATTN_HAS_DEVICE) && defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/kernels/sm90/warpgroup_pipeline.hpp"

namespace hipattn {

// Dense prefill on the warp-specialised skeleton (kernels/sm90/warpgroup_pipeline.hpp): one thread
// issues the bulk tensor copies of Q, K and V (the tensor maps of dispatch/dense_prefill.hpp); rows are
// one q head's tokens; the output and LSE are written straight from the fragments.
template <class Cfg>
struct DenseWarpgroupFamily {
  using Item = DenseWork;
  using Arch = DeviceArch;
  using WT = WarpgroupTileOf<Cfg>;
  static constexpr int kProducerThreads = 1;
  const DensePrefillSm90Args& a;  // the kernel's __grid_constant__ parameter (the copies read its maps there)
  typename Cfg::Variant var;

  HIPATTN_DEVICE HIPATTN_FORCEINLINE bool batched() const { return a.common.cu_seqlens_q == nullptr; }
  template <class F>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void for_each_item(F&& f) const {
    dense_for_each_item(a.common, Cfg::kBM, Cfg::kBN, f);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void producer_start() const {
    sm90::tma_prefetch_descriptor(&a.q_map);
    sm90::tma_prefetch_descriptor(&a.k_map);
    sm90::tma_prefetch_descriptor(&a.v_map);
  }
  // One box of 64 columns per column block b, landing at b * rows * 128 (KMajorTile's order).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void box_load(char* dst, const CUtensorMap* map, uint64_t* bar, int cols, int rows,
                                                   int h, int32_t row0, int32_t seq) const {
    for (int cb = 0; cb < cols / 64; ++cb) {
      char* d = dst + cb * rows * 128;
      if (batched()) sm90::tma_load_4d(d, map, bar, 64 * cb, h, row0, seq);
      else sm90::tma_load_3d(d, map, bar, 64 * cb, h, row0);
    }
  }
  template <class WithQ>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q(const Item& w, int, WithQ&& with_q) const {
    with_q([&](char* dst, uint64_t* bar) {
      box_load(dst, &a.q_map, bar, Cfg::kDqk, Cfg::kBM, w.head, w.q_tok0 + w.qb * Cfg::kBM, w.seq);
    });
  }
  template <class WithK, class WithV>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_kv(const Item& w, const KvTileRange&, int32_t n, int, WithK&& with_k, WithV&& with_v) const {
    const int kvh = w.head / a.common.group;
    const int32_t row0 = w.k_tok0 + n * Cfg::kBN;
    with_k([&](char* dst, uint64_t* bar) { box_load(dst, &a.k_map, bar, Cfg::kDqk, Cfg::kBN, kvh, row0, w.seq); });
    with_v([&](char* dst, uint64_t* bar) { box_load(dst, &a.v_map, bar, Cfg::kDv, Cfg::kBN, kvh, row0, w.seq); });
  }
  // Row `row` of the q-block: query i = qb kBM + row of the item's head (padding rows are computed,
  // never written).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void row(const Item& w, int row, RowInfo& ri, typename Cfg::Variant::Row& vr) const {
    const int32_t i = w.qb * Cfg::kBM + row, ctx = w.kv_len - w.q_len;
    const bool valid = i < w.q_len;
    ri = RowInfo{valid ? i : 0, valid ? ctx + i : ctx, ctx, w.head};
    vr = var.row(ri);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE LogitsTile logits_tile(const Item& w) const {
    const DensePrefillCommon& c = a.common;
    return ScoreScale{.qk = c.scale}.logits_tile(w.kv_len, c.causal, c.window_left);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const typename Cfg::Variant& variant() const { return var; }
  // O / l in the output dtype, LSE (natural log); zeros and -inf for rows without keys.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void store(const Item& w, int wm, int lane, const RowSoftmax<WT, Arch>& softmax,
                                                typename WT::OFrag& o) const {
    const DensePrefillCommon& c = a.common;
    float factor[WT::kRowSlots];
    RowCoord rcs[WT::kRowSlots];
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      const int32_t i = w.qb * Cfg::kBM + wm * WT::kRows + WT::slot_row(lane, r);
      rcs[r].valid = i < w.q_len;
      rcs[r].token = batched() ? w.seq * c.max_seqlen_q + i : w.q_tok0 + i;  // the LSE index
      rcs[r].q_head = w.head;
      rcs[r].info.i = i;
      float lse2;
      factor[r] = finalize_with_sink(softmax.m[r], softmax.l[r], -INFINITY, lse2, [](float x) { return Arch::exp2(x); },
                                     [](float x) { return __log2f(x); });
      if (c.lse != nullptr && rcs[r].valid && WT::row_leader(lane))
        c.lse[int64_t(w.head) * c.lse_stride_head + rcs[r].token] = lse2 * kLn2;
    }
    store_pairs<WT>(rcs, o, factor, lane, [&](const RowCoord& rc, int col, float o0, float o1) {
      const int64_t row = batched() ? int64_t(w.seq) * c.o_stride_batch + int64_t(rc.info.i) * c.o_stride_token
                                    : int64_t(rc.token) * c.o_stride_token;
      uint16_t* dst = c.out + row + int64_t(rc.q_head) * c.o_stride_head + col;
      *reinterpret_cast<uint32_t*>(dst) = Arch::template pack2<Cfg::kBf16>(o0, o1);
    });
  }
};

// Persistent: gridDim.x workgroups (at most one per SM) walk the c.q_blocks x heads work items in
// rounds (dense_item).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) dense_prefill_sm90_kernel(const __grid_constant__ DensePrefillSm90Args a) {
  if constexpr (DeviceArch::kTarget == Target::sm90) {
    extern __shared__ __align__(1024) char dense_smem_raw[];
    typename Cfg::Variant variant;
    variant.args = a.logit;
    warpgroup_attention<Cfg>(DenseWarpgroupFamily<Cfg>{a, variant}, dense_smem_raw);
  }
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE && HIPATTN_BACKEND_CUDA
