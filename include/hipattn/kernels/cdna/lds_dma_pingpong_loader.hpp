// hipattn/kernels/cdna/lds_dma_pingpong_loader.hpp: LdsDmaPingPongLoader, the LDS-DMA loads of the CDNA
// ping-pong schedule (kernels/cdna/pingpong_mainloop.hpp), over the LDS-DMA loader policy.
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/loaders/lds_dma.hpp"

namespace hipattn {

// The LDS-DMA loads of the CDNA ping-pong schedule (kernels/cdna/pingpong_mainloop.hpp): a K ring
// and a V ring of two stages each, V one tile behind K. The schedule's intervals (between workgroup
// barriers) are numbered from the prologue's barrier 0; tile j (of the work item's, from t_begin) is
// read as K in intervals 2j and 2j + 1 and as V in 2j + 2 and 2j + 3, so
//   prologue(t0)  block ids of tile 0 (and of tile 1), K(0) into K stage 0 (visible at barrier 0)
//   issue(j)      interval 2j: V(j) into V stage j % 2 (tile j's block ids are still held), then
//                 K(j + 1) into K stage (j + 1) % 2 (tile j + 1's ids, read one issue earlier), then
//                 the block-table reads of tile j + 2; both stages were last read in intervals 2j - 2
//                 / 2j - 1 (V(j - 2), K(j - 1)), before barrier 2j
//   wait()        this wave's DMA (and block-table reads) have landed: before barrier 2j + 2, which
//                 makes every wave's visible for K(j + 1)'s first read (interval 2j + 2) and V(j)'s
// A paged layout's block ids are read a tile ahead of their first use, after the issue's DMA, so no
// wait on the vector-memory counter (which would also wait for the DMA in flight, the counter being
// in order) sits between the two halves of an issue: the ids an issue uses landed before the barrier
// the wave last passed. A dense layout's are computed where they are used (no load). Every wave
// issues its share of each stage (a stage is whole waves of DMA units); the loads of interval 2j fly
// for two intervals. Tiles past the item's end issue nothing.
template <class Cfg>
class LdsDmaPingPongLoader : public LdsDmaPagedKvLoader<Cfg> {
  using Base = LdsDmaPagedKvLoader<Cfg>;

 public:
  using typename Base::Params;

#if defined(HIPATTN_HAS_DEVICE)
  using typename Base::Arch;
  HIPATTN_DEVICE HIPATTN_FORCEINLINE LdsDmaPingPongLoader(const Params& kv, bool per_token_head_scale,
                                                          const AttentionWork& w, const KvTileRange& range,
                                                          int32_t t_end, char* smem, int tid)
      : Base(kv, per_token_head_scale, w, range, t_end, smem, tid) {
    if constexpr (kDense) {
      // unit i of tile t reads key t * kBN + row_of(i): block dense_blk0 + key (pages of one token)
      const int32_t blk0 = kv.physical_block(w.seq, 0);
#pragma unroll
      for (int i = 0; i < Base::kIters; ++i) {
        int elem;
        const bool pad = !this->unit_element(i, elem);
        const int32_t blk = blk0 + this->row_of(i);
        dense_k_[i] = pad ? kPadUnit : static_cast<uint32_t>((kv.k_offset(blk, 0, w.kvh) + elem) * 2);
        dense_v_[i] = pad ? kPadUnit : static_cast<uint32_t>((kv.v_offset(blk, 0, w.kvh) + elem) * 2);
      }
    }
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void prologue(int32_t t_begin) {
    t0_ = t_begin;
    if constexpr (kDense) {
      if (t_begin < this->t_end_) dense_issue<true, false>(t_begin, 0);
    } else {
      this->locate_pages(t_begin, this->blk_, this->slot_);
      if (t_begin < this->t_end_) {
        this->template issue_parts<true, false>(0, 0);
        read_ahead(t_begin + 1);
      }
    }
  }
  // Interval 2j's DMA. kParity: j % 2 where the caller knows it at compile time (the mainloop's two
  // unrolled steps: the stages' LDS addresses are then constants, folded into the instructions), or
  // -1 (the parity is computed).
  template <int kParity = -1>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue(int j) {
    const int32_t t = t0_ + j;
    const int vs = kParity >= 0 ? kParity : j % 2, ks = kParity >= 0 ? 1 - kParity : (j + 1) % 2;
    if constexpr (kDense) {
      // V(j) and K(j + 1) at offsets from each unit's first tile: no block ids to read or hold
      if (t < this->t_end_) dense_issue<false, true>(t, vs);
      if (t + 1 < this->t_end_) dense_issue<true, false>(t + 1, ks);
    } else {
      // Nothing of this wave's is in flight (it waited before the barrier it last passed); the counted
      // wait tells the compiler, whose count joins both groups' paths, so that it adds no wait on the
      // V DMA before K's offsets read the block ids.
      Arch::vm_wait_counted();
      if (t < this->t_end_) this->template issue_parts<false, true>(0, vs);
      if (t + 1 < this->t_end_) {
#pragma unroll
        for (int i = 0; i < Base::kIters; ++i) {
          this->blk_[i] = next_slot_[i] >= 0 ? next_blk_[i] : -1;
          this->slot_[i] = next_slot_[i];
        }
        this->template issue_parts<true, false>(ks, 0);
        read_ahead(t + 2);
      }
    }
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void wait() const { Arch::lds_dma_wait(); }
  // Tile j's K / V stage; kParity as for issue (j % 2 known at compile time, or -1).
  template <int kParity = -1>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const uint16_t* k_tile(int j) const {
    return reinterpret_cast<const uint16_t*>(this->k_stage(kParity >= 0 ? kParity : j % 2));
  }
  template <int kParity = -1>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const uint16_t* v_tile(int j) const {
    return reinterpret_cast<const uint16_t*>(this->v_stage(kParity >= 0 ? kParity : j % 2));
  }

 private:
  static constexpr bool kDense = Params::Layout::kDense;
  static constexpr uint32_t kPadUnit = ~0u;  // a padding unit (d = 96): zeros

  // Dense layout: tile t's K (kK) or V (kV) units into LDS stage `stage`. Unit i reads key
  // t * kBN + row_of(i) at its first tile's byte offset plus t * kBN key rows (a wave-uniform term:
  // dense rows are evenly strided, dispatch/dense_prefill.hpp dense_kv_pitch); a key outside the item's
  // range, or a padding unit, takes the resource's num_records, so the DMA writes zeros.
  template <bool kK, bool kV>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void dense_issue(int32_t t, int stage) {
    const typename Arch::BufferRsrc rk = Arch::buffer_rsrc(this->kv_.k, kLdsDmaWindow);
    const typename Arch::BufferRsrc rv = Arch::buffer_rsrc(this->kv_.v, kLdsDmaWindow);
    const uint32_t k_lds = Arch::lds_address(this->k_stage(stage)) + this->wave_lds_;
    const uint32_t v_lds = Arch::lds_address(this->v_stage(stage)) + this->wave_lds_;
    const int32_t key0 = t * Base::kBN;
    const uint32_t k_step = Arch::wave_uniform(static_cast<uint32_t>(key0) * static_cast<uint32_t>(this->kv_.k_stride_block) * 2u);
    const uint32_t v_step = Arch::wave_uniform(static_cast<uint32_t>(key0) * static_cast<uint32_t>(this->kv_.v_stride_block) * 2u);
    const KvTileRange& r = this->range_;
#pragma unroll
    for (int i = 0; i < Base::kIters; ++i) {
      if (this->idle(i)) continue;  // wave-uniform: a stage is whole waves of units
      const int32_t key = key0 + this->row_of(i);
      const bool read = static_cast<uint32_t>(key - r.key_begin) < static_cast<uint32_t>(r.key_end - r.key_begin);
      const uint32_t lds = static_cast<uint32_t>(i * Base::kThreads * Base::kB);
      // (padding units exist only where the row pitch has padding: the test is compiled out elsewhere)
      if constexpr (kK)
        Arch::lds_dma(rk, read && (!Base::kPadded || dense_k_[i] != kPadUnit) ? dense_k_[i] + k_step : kLdsDmaWindow,
                      k_lds + lds);
      if constexpr (kV)
        Arch::lds_dma(rv, read && (!Base::kPadded || dense_v_[i] != kPadUnit) ? dense_v_[i] + v_step : kLdsDmaWindow,
                      v_lds + lds);
    }
  }

  // Paged: the block-table entries of tile t's rows, for the issue after this one. Each is read
  // whether the row is visible or not (its key clamped into the item's visible range, which is not
  // empty while tiles remain, so the entry is one of the sequence's own), and the row's visibility is
  // kept apart (in its slot): no other value merges with the loaded one, so the load writes the
  // registers the next issue reads and no instruction reads them, or waits for them, before the
  // wave's wait.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void read_ahead(int32_t t) {
    const KvTileRange& r = this->range_;
#pragma unroll
    for (int i = 0; i < Base::kIters; ++i) {
      const int32_t j = t * Base::kBN + this->row_of(i);
      const bool read = !this->idle(i) && t < this->t_end_ && j >= r.key_begin && j < r.key_end;
      const int32_t jc = j < r.key_begin ? r.key_begin : j >= r.key_end ? r.key_end - 1 : j;
      int32_t page, slot;
      this->kv_.locate(jc, page, slot);
      next_blk_[i] = this->kv_.physical_block(this->seq_, page);
      next_slot_[i] = read ? slot : -1;
    }
  }

  int32_t t0_ = 0;
  uint32_t dense_k_[Base::kIters], dense_v_[Base::kIters];  // DenseKvLayout: unit i's bytes in its first tile
  // paged, at issue(j): tile t0 + j + 1's block-table entries and slots (-1: the row is not read)
  int32_t next_blk_[Base::kIters], next_slot_[Base::kIters];
#endif  // HIPATTN_HAS_DEVICE
};

}  // namespace hipattn
