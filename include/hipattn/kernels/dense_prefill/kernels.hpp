// hipattn/kernels/dense_prefill/kernels.hpp: the dense prefill kernels.
//
//   dense_prefill_sm90_kernel<Cfg>   one workgroup per (q-block of 128 rows, q head): the
//                                    warp-specialised pipeline of ALGORITHM.md section 10
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

#if defined(HIPATTN_HAS_DEVICE) && defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/arch/arch.hpp"
#include "hipattn/arch/sm90/pipeline.hpp"
#include "hipattn/arch/sm90/warpgroup_tile.hpp"

namespace hipattn {

// The q-block a workgroup owns, and its sequence's extents.
struct DenseWork {
  int32_t seq = 0, qb = 0;
  int32_t q_tok0 = 0, k_tok0 = 0;  // first token of the sequence in q / k (packed; 0 when batched)
  int32_t q_len = 0, kv_len = 0;
};

// The grid is (q heads, q-blocks), and blocks start in x-fastest order: every head of the highest
// q-block first, so that the blocks that see the most keys under causal masking start first over the
// whole batch, and the short ones fill the last wave.
HIPATTN_DEVICE HIPATTN_FORCEINLINE bool dense_work(const DensePrefillCommon& c, DenseWork& w) {
  const int32_t qblock = static_cast<int32_t>(gridDim.y - 1 - blockIdx.y);
  if (c.cu_seqlens_q != nullptr) {
    w.seq = find_seq_idx(c.cu_seqlens_q, c.num_seqs, qblock, c.block_q);
    w.qb = qblock - seq_first_q_block(c.cu_seqlens_q, w.seq, c.block_q);
    w.q_tok0 = c.cu_seqlens_q[w.seq];
    w.q_len = c.cu_seqlens_q[w.seq + 1] - w.q_tok0;
    w.k_tok0 = c.cu_seqlens_k[w.seq];
    w.kv_len = c.cu_seqlens_k[w.seq + 1] - w.k_tok0;
  } else {
    w.seq = qblock / c.blocks_per_seq;
    w.qb = qblock - w.seq * c.blocks_per_seq;
    w.q_len = c.max_seqlen_q;
    w.kv_len = c.max_seqlen_k;
  }
  return w.qb * c.block_q < w.q_len;
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) dense_prefill_sm90_kernel(const __grid_constant__ DensePrefillSm90Args a) {
  using Arch = DeviceArch;
  if constexpr (Arch::kTarget != Target::sm90) {
    return;
  } else {
    using WT = sm90::WarpgroupTile<Cfg::kBf16, Cfg::kDqk, Cfg::kBN, Cfg::kDv, Cfg::kBM>;
    using Ring = sm90::RingState<Cfg::kStages>;
    constexpr int kBN = Cfg::kBN, kBM = Cfg::kBM;
    extern __shared__ __align__(1024) char dense_smem_raw[];
    char* smem = dense_smem_raw + ((1024u - (sm90::smem_u32(dense_smem_raw) & 1023u)) & 1023u);
    char* q_tile = smem + Cfg::kQOffset;
    char* k_tiles = smem + Cfg::kKOffset;
    char* v_tiles = smem + Cfg::kVOffset;
    uint64_t* q_bar = reinterpret_cast<uint64_t*>(smem + Cfg::kBarOffset);
    auto* k_ring = reinterpret_cast<sm90::PipelineRing<Cfg::kStages>*>(q_bar + 1);
    auto* v_ring = k_ring + 1;

    const DensePrefillCommon& c = a.common;
    const int tid = static_cast<int>(threadIdx.x);
    const int wg = tid / 128;
    const int head = static_cast<int>(blockIdx.x);
    const int kvh = head / c.group;

    DenseWork w;
    if (!dense_work(c, w)) return;  // the whole block leaves together: no barrier was used yet
    const int32_t i_first = w.qb * kBM;
    const int32_t i_last = (w.q_len < i_first + kBM ? w.q_len : i_first + kBM) - 1;
    const KvTileRange range = kv_tile_range(QBlockSpan{i_first, i_last, w.q_len, w.kv_len, c.causal, c.window_left}, kBN);
    const bool batched = c.cu_seqlens_q == nullptr;

    if (tid == 0) {
      sm90::mbarrier_init(q_bar, 1);
      k_ring->init(4 * Cfg::kConsumers);  // one arrival per consumer warp (each waits on its own wgmma)
      v_ring->init(4 * Cfg::kConsumers);
    }
    __syncthreads();

    if (wg == 0) {  // ---- producer ----
      sm90::warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      if (tid != 0 || range.empty()) return;
      sm90::tma_prefetch_descriptor(&a.q_map);
      sm90::tma_prefetch_descriptor(&a.k_map);
      sm90::tma_prefetch_descriptor(&a.v_map);
      // One box of 64 columns per column block b, landing at b * rows * 128 (KMajorTile's order).
      const auto load = [&](char* dst, const CUtensorMap* map, uint64_t* bar, int cols, int rows, int h, int32_t row0) {
        for (int cb = 0; cb < cols / 64; ++cb) {
          char* d = dst + cb * rows * 128;
          if (batched) sm90::tma_load_4d(d, map, bar, 64 * cb, h, row0, w.seq);
          else sm90::tma_load_3d(d, map, bar, 64 * cb, h, row0);
        }
      };
      sm90::mbarrier_arrive_expect_tx(q_bar, Cfg::kQBytes);
      load(q_tile, &a.q_map, q_bar, Cfg::kDqk, kBM, head, w.q_tok0 + i_first);
      Ring st;
      for (int32_t n = range.tile_end - 1; n >= range.tile_begin; --n) {
        const int32_t row0 = w.k_tok0 + n * kBN;
        uint64_t* kb = k_ring->producer_acquire(st, Cfg::kKBytes);
        load(k_tiles + st.stage * Cfg::kKBytes, &a.k_map, kb, Cfg::kDqk, kBN, kvh, row0);
        uint64_t* vb = v_ring->producer_acquire(st, Cfg::kVBytes);
        load(v_tiles + st.stage * Cfg::kVBytes, &a.v_map, vb, Cfg::kDv, kBN, kvh, row0);
        st.advance();
      }
      return;
    }

    // ---- consumers ----
    sm90::warpgroup_reg_alloc<Cfg::kConsumerRegs>();
    const int cw = wg - 1;                 // consumer index: rows 64 cw .. 64 cw + 63 of the block
    const int t = tid % 128, lane = t % 32, warp = t / 32;
    using Turns = sm90::OrderedTurns<Cfg::kConsumers>;

    // Rows of this lane (two slots: rows 16 warp + lane / 4 and + 8 of the consumer's 64).
    RowInfo rows[WT::kRowSlots];
    RowCoord rcs[WT::kRowSlots];
    int64_t out_off[WT::kRowSlots];
    typename Cfg::Variant variant;
    variant.args = a.logit;
    typename Cfg::Variant::Row vrows[WT::kRowSlots];
    const int32_t ctx = w.kv_len - w.q_len;
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      const int32_t i = i_first + 64 * cw + 16 * warp + WT::slot_row(lane, r);
      rcs[r].valid = i < w.q_len;
      rcs[r].q_head = head;
      rcs[r].token = batched ? w.seq * c.max_seqlen_q + i : w.q_tok0 + i;  // the LSE index
      out_off[r] = batched ? int64_t(w.seq) * c.o_stride_batch + int64_t(i) * c.o_stride_token
                           : int64_t(w.q_tok0 + i) * c.o_stride_token;
      out_off[r] += int64_t(head) * c.o_stride_head;
      rows[r] = RowInfo{rcs[r].valid ? i : 0, rcs[r].valid ? ctx + i : ctx, ctx, head};
      rcs[r].info = rows[r];
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
      const uint32_t q_addr = sm90::smem_u32(q_tile);
      const uint32_t k_addr0 = sm90::smem_u32(k_tiles), v_addr0 = sm90::smem_u32(v_tiles);
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
      const auto release = [&](sm90::PipelineRing<Cfg::kStages>* ring, const Ring& st) {
        __syncwarp();
        if (lane == 0) ring->consumer_release(st);
      };
      Turns::open(cw);
      sm90::mbarrier_wait(q_bar, 0);

      Ring st;  // the tile being computed (S); prev: the tile whose P V is pending
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
      // last P V
      Turns::wait(cw);
      v_ring->consumer_wait(st);
      WT::pv(o, p, v_addr0 + st.stage * Cfg::kVBytes, accumulate);
      Turns::pass(cw);
      sm90::wgmma_wait_group<0>();
      release(v_ring, st);
    }
    softmax.finish();

    // ---- epilogue: O / l in the output dtype, LSE (natural log); zeros and -inf for rows without keys ----
    float factor[WT::kRowSlots];
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      float lse2;
      factor[r] = finalize_with_sink(softmax.m[r], softmax.l[r], -INFINITY, lse2, [](float x) { return Arch::exp2(x); },
                                     [](float x) { return __log2f(x); });
      if (c.lse != nullptr && rcs[r].valid && WT::row_leader(lane))
        c.lse[int64_t(head) * c.lse_stride_head + rcs[r].token] = lse2 * kLn2;
    }
#pragma unroll
    for (int e = 0; e < WT::kOElems; e += 2) {
      const int slot = WT::o_slot(e);
      if (!rcs[slot].valid) continue;
      uint16_t* dst = c.out + out_off[slot] + WT::o_col(lane, e);
      *reinterpret_cast<uint32_t*>(dst) = Arch::template pack2<Cfg::kBf16>(o.r[e] * factor[slot], o.r[e + 1] * factor[slot]);
    }
  }
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE && HIPATTN_BACKEND_CUDA
