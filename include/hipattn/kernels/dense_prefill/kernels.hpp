// hipattn/kernels/dense_prefill/kernels.hpp: the dense prefill kernels.
//
//   dense_prefill_sm90_kernel<Cfg>   sm_90: persistent workgroups over the (q-block of 128 rows, q head)
//                                    items, the warp-specialised pipeline of ALGORITHM.md section 10
//   dense_prefill_kernel<Cfg>        CDNA (any target): the attention skeleton (kernels/common) with a
//                                    dense scheduler, Cfg a UnifiedConfig over DenseKvLayout
//
// Roles (Cfg: kernels/dense_prefill/config.hpp): warpgroup 0 gives its registers away (setmaxnreg)
// and one thread of it loads Q once and streams the K and V tiles of the q-block's visible keys
// through two rings of kStages stages (bulk tensor copies counted on the rings' full barriers).
// Consumer warpgroups c = 0, 1 own query rows 64 c .. 64 c + 63 and run, per KV tile n (in the order
// the producer loads them, last tile first, so that the masked diagonal tiles of causal blocks come
// first):
//     S_n = Q K_n^T  (wgmma, issued)          O += P_{n-1} V_{n-1}  (wgmma, issued behind S_n)
//     wait for S_n; release K_n; logits, mask and the online softmax's row step on S_n (overlapping
//     the PV product still running); wait for PV; release V_{n-1}; O *= f_n; P_n = S_n in 16 bits
// (FlashAttention-3's intra-warpgroup overlap), and the two consumers take turns issuing their matrix
// products (OrderedTurns: one's softmax overlaps the other's products: the ping-pong). The mainloop
// step (logits, RowSoftmax) and the row reductions are the common ones (kernels/common/softmax_step.hpp)
// on the warpgroup tile's fragments (arch/sm90/warpgroup_tile.hpp).
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/kernels/common/epilogue.hpp"
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
    w.seq_tok0 = c.cu_seqlens_q != nullptr ? d.q_tok0 : d.seq * c.max_seqlen_q;
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

// The CDNA dense prefill kernel: the attention skeleton with the dense scheduler and the paged
// loaders over DenseKvLayout (a page of one token whose block is its row).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) dense_prefill_kernel(const dense_args_t<Cfg> args) {
  extern __shared__ __align__(16) char hipattn_smem[];
  attention_kernel<Cfg, DenseQBlockScheduler, NormalizedStore>(args, hipattn_smem);
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE

#if defined(HIPATTN_HAS_DEVICE) && defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/arch/arch.hpp"
#include "hipattn/arch/sm90/pipeline.hpp"
#include "hipattn/arch/sm90/warpgroup_tile.hpp"

namespace hipattn {

// Persistent: gridDim.x workgroups (at most one per SM) walk the c.q_blocks x heads work items in
// rounds (dense_item).
// Per item the producer loads Q once its previous Q has been read (q_empty), then the item's K / V
// tiles into the rings, whose stage / phase walk continues across items; so the next item's loads
// run under the current item's last products and epilogue.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) dense_prefill_sm90_kernel(const __grid_constant__ DensePrefillSm90Args a) {
  using Arch = DeviceArch;
  if constexpr (Arch::kTarget != Target::sm90) {
    return;
  } else {
    using WT = sm90::WarpgroupTile<Cfg::kBf16, Cfg::kDqk, Cfg::kBN, Cfg::kDv, Cfg::kBM>;
    using Ring = sm90::RingState<Cfg::kStages>;
    constexpr int kBN = Cfg::kBN, kBM = Cfg::kBM;
    constexpr uint32_t kConsumerWarps = 4 * Cfg::kConsumers;
    extern __shared__ __align__(1024) char dense_smem_raw[];
    char* smem = dense_smem_raw + ((1024u - (sm90::smem_u32(dense_smem_raw) & 1023u)) & 1023u);
    char* q_tile = smem + Cfg::kQOffset;
    char* k_tiles = smem + Cfg::kKOffset;
    char* v_tiles = smem + Cfg::kVOffset;
    uint64_t* q_full = reinterpret_cast<uint64_t*>(smem + Cfg::kBarOffset);
    uint64_t* q_empty = q_full + 1;
    auto* k_ring = reinterpret_cast<sm90::PipelineRing<Cfg::kStages>*>(q_full + 2);
    auto* v_ring = k_ring + 1;

    const DensePrefillCommon& c = a.common;
    const int tid = static_cast<int>(threadIdx.x);
    const int wg = tid / 128;
    const bool batched = c.cu_seqlens_q == nullptr;

    if (tid == 0) {
      sm90::mbarrier_init(q_full, 1);
      sm90::mbarrier_init(q_empty, kConsumerWarps);  // every consumer warp, after its last Q K^T of an item
      k_ring->init(kConsumerWarps);  // one arrival per consumer warp (each waits on its own wgmma)
      v_ring->init(kConsumerWarps);
    }
    __syncthreads();

    if (wg == 0) {  // ---- producer ----
      sm90::warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (tid != 0) return;
      sm90::tma_prefetch_descriptor(&a.q_map);
      sm90::tma_prefetch_descriptor(&a.k_map);
      sm90::tma_prefetch_descriptor(&a.v_map);
      Ring st;
      uint32_t q_lap = 0;
      dense_for_each_item(c, kBM, kBN, [&](const DenseWork& w, const KvTileRange& range) {
        if (range.empty()) return;
        const int kvh = w.head / c.group;
        // One box of 64 columns per column block b, landing at b * rows * 128 (KMajorTile's order).
        const auto load = [&](char* dst, const CUtensorMap* map, uint64_t* bar, int cols, int rows, int h, int32_t row0) {
          for (int cb = 0; cb < cols / 64; ++cb) {
            char* d = dst + cb * rows * 128;
            if (batched) sm90::tma_load_4d(d, map, bar, 64 * cb, h, row0, w.seq);
            else sm90::tma_load_3d(d, map, bar, 64 * cb, h, row0);
          }
        };
        sm90::mbarrier_wait(q_empty, (q_lap & 1u) ^ 1u);  // the previous item's Q has been read
        sm90::mbarrier_arrive_expect_tx(q_full, Cfg::kQBytes);
        load(q_tile, &a.q_map, q_full, Cfg::kDqk, kBM, w.head, w.q_tok0 + w.qb * kBM);
        ++q_lap;
        for (int32_t n = range.tile_end - 1; n >= range.tile_begin; --n) {
          const int32_t row0 = w.k_tok0 + n * kBN;
          uint64_t* kb = k_ring->producer_acquire(st, Cfg::kKBytes);
          load(k_tiles + st.stage * Cfg::kKBytes, &a.k_map, kb, Cfg::kDqk, kBN, kvh, row0);
          uint64_t* vb = v_ring->producer_acquire(st, Cfg::kVBytes);
          load(v_tiles + st.stage * Cfg::kVBytes, &a.v_map, vb, Cfg::kDv, kBN, kvh, row0);
          st.advance();
        }
      });
      return;
    }

    // ---- consumers ----
    sm90::warpgroup_reg_alloc<Cfg::kConsumerRegs>();
    const int cw = wg - 1;  // consumer index: rows 64 cw .. 64 cw + 63 of each q-block
    const int t = tid % 128, lane = t % 32, warp = t / 32;
    using Turns = sm90::OrderedTurns<Cfg::kConsumers>;
    typename Cfg::Variant variant;
    variant.args = a.logit;
    const uint32_t q_addr = sm90::smem_u32(q_tile);
    const uint32_t k_addr0 = sm90::smem_u32(k_tiles), v_addr0 = sm90::smem_u32(v_tiles);
    const auto release = [&](sm90::PipelineRing<Cfg::kStages>* ring, const Ring& st) {
      __syncwarp();
      if (lane == 0) ring->consumer_release(st);
    };
    Turns::open(cw);
    Ring st;  // the stage of the tile whose S is computed next (continues across items, as the producer's)
    uint32_t q_lap = 0;

    dense_for_each_item(c, kBM, kBN, [&](const DenseWork& w, const KvTileRange& range) {
      const int32_t i_block = w.qb * kBM;

      // Rows of this lane (two slots: rows 16 warp + lane / 4 and + 8 of the consumer's 64).
      RowInfo rows[WT::kRowSlots];
      typename Cfg::Variant::Row vrows[WT::kRowSlots];
      const int32_t ctx = w.kv_len - w.q_len;
      const auto row_index = [&](int r) { return i_block + 64 * cw + 16 * warp + WT::slot_row(lane, r); };
#pragma unroll
      for (int r = 0; r < WT::kRowSlots; ++r) {
        const int32_t i = row_index(r);
        const bool valid = i < w.q_len;  // padding rows are computed, never written
        rows[r] = RowInfo{valid ? i : 0, valid ? ctx + i : ctx, ctx, w.head};
        vrows[r] = variant.row(rows[r]);
      }

      RowSoftmax<WT, Arch> softmax;
      softmax.init();
      typename WT::OFrag o;
      typename WT::SFrag s;
      typename WT::PFrag p;
#pragma unroll
      for (int e = 0; e < WT::kOElems; ++e) o.r[e] = 0.f;

      if (!range.empty()) {
        LogitsTile lt{0, false, w.kv_len, c.causal, c.window_left, c.scale, c.scale * kLog2e};
        const auto logits_step = [&](int32_t n, float (&f_old)[WT::kRowSlots]) {
          lt.key0 = n * kBN;
          lt.edge = !range.is_interior(n);
          if constexpr (Cfg::Variant::kTransformsLogits) {
            logits<WT, Arch>(s, variant, rows, vrows, lt, lane, nullptr);
            softmax.template update_rows<false>(s, nullptr, lane, f_old);
          } else {  // the scale folds into the exponent
            if (lt.edge) mask_scores<WT>(s, rows, lt, lane);
            softmax.update_rows_raw(s, lt.qk_scale_log2, f_old);
          }
        };
        sm90::mbarrier_wait(q_full, q_lap & 1u);
        ++q_lap;

        int32_t n = range.tile_end - 1;
        float f_old[WT::kRowSlots];
        // first tile: S only
        Turns::wait(cw);
        k_ring->consumer_wait(st);
        WT::qk(s, q_addr, cw, k_addr0 + st.stage * Cfg::kKBytes);
        Turns::pass(cw);
        sm90::wgmma_wait_group<0>();
        release(k_ring, st);
        logits_step(n, f_old);
        WT::p_to_a(p, s);
        bool accumulate = false;
        for (--n; n >= range.tile_begin; --n) {
          const Ring prev = st;
          st.advance();
          Turns::wait(cw);
          k_ring->consumer_wait(st);
          WT::qk(s, q_addr, cw, k_addr0 + st.stage * Cfg::kKBytes);
          v_ring->consumer_wait(prev);
          WT::pv(o, p, v_addr0 + prev.stage * Cfg::kVBytes, accumulate);
          Turns::pass(cw);
          accumulate = true;
          sm90::wgmma_wait_group<1>();  // S_n has landed; P_{n-1} V_{n-1} may still run
          release(k_ring, st);
          logits_step(n, f_old);
          sm90::wgmma_wait_group<0>();
          release(v_ring, prev);
          RowSoftmax<WT, Arch>::rescale(o, f_old);
          WT::p_to_a(p, s);
        }
        // every Q K^T of the item has completed in this warp: the producer may load the next Q
        __syncwarp();
        if (lane == 0) sm90::mbarrier_arrive(q_empty);
        // last P V
        Turns::wait(cw);
        v_ring->consumer_wait(st);
        WT::pv(o, p, v_addr0 + st.stage * Cfg::kVBytes, accumulate);
        Turns::pass(cw);
        sm90::wgmma_wait_group<0>();
        release(v_ring, st);
        st.advance();
      }
      softmax.finish();

      // ---- epilogue: O / l in the output dtype, LSE (natural log); zeros and -inf for rows without keys ----
      float factor[WT::kRowSlots];
      RowCoord rcs[WT::kRowSlots];
#pragma unroll
      for (int r = 0; r < WT::kRowSlots; ++r) {
        const int32_t i = row_index(r);
        rcs[r].valid = i < w.q_len;
        rcs[r].token = batched ? w.seq * c.max_seqlen_q + i : w.q_tok0 + i;  // the LSE index
        rcs[r].q_head = w.head;
        rcs[r].info.i = i;
        float lse2;
        factor[r] = finalize_with_sink(softmax.m[r], softmax.l[r], -INFINITY, lse2, [](float x) { return Arch::exp2(x); },
                                       [](float x) { return __log2f(x); });
        if (c.lse != nullptr && rcs[r].valid && WT::row_leader(lane))
          c.lse[int64_t(w.head) * c.lse_stride_head + rcs[r].token] = lse2 * kLn2;
      }
      store_pairs<WT>(rcs, o, factor, lane, [&](const RowCoord& rc, int col, float o0, float o1) {
        const int64_t row = batched ? int64_t(w.seq) * c.o_stride_batch + int64_t(rc.info.i) * c.o_stride_token
                                    : int64_t(rc.token) * c.o_stride_token;
        uint16_t* dst = c.out + row + int64_t(rc.q_head) * c.o_stride_head + col;
        *reinterpret_cast<uint32_t*>(dst) = Arch::template pack2<Cfg::kBf16>(o0, o1);
      });
    });
  }
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE && HIPATTN_BACKEND_CUDA
