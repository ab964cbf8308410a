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
    if constexpr (kDense) dense_blk0_ = kv.physical_block(w.seq, 0);
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void prologue(int32_t t_begin) {
    t0_ = t_begin;
    locate(t_begin, this->blk_, this->slot_);
    if (t_begin < this->t_end_) {
      this->template issue_parts<true, false>(0, 0);
      if constexpr (!kDense) read_ahead(t_begin + 1);
    }
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue(int j) {
    const int32_t t = t0_ + j;
    // Nothing of this wave's is in flight (it waited before the barrier it last passed); the counted
    // wait tells the compiler, whose count joins both groups' paths, so that it adds no wait on the
    // V DMA before K's offsets read the block ids.
    if constexpr (!kDense) Arch::vm_wait_counted();
    if (t < this->t_end_) this->template issue_parts<false, true>(0, j % 2);
    if (t + 1 < this->t_end_) {
      if constexpr (kDense) {
        locate(t + 1, this->blk_, this->slot_);  // arithmetic only
      } else {
#pragma unroll
        for (int i = 0; i < Base::kIters; ++i) {
          this->blk_[i] = next_slot_[i] >= 0 ? next_blk_[i] : -1;
          this->slot_[i] = next_slot_[i];
        }
      }
      this->template issue_parts<true, false>((j + 1) % 2, 0);
      if constexpr (!kDense) read_ahead(t + 2);
    }
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void wait() const { Arch::lds_dma_wait(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const uint16_t* k_tile(int j) const {
    return reinterpret_cast<const uint16_t*>(this->k_stage(j % 2));
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const uint16_t* v_tile(int j) const {
    return reinterpret_cast<const uint16_t*>(this->v_stage(j % 2));
  }

 private:
  static constexpr bool kDense = Params::Layout::kDense;
  // The block ids of tile t (the walk's, PagedTileWalk::locate_pages). A dense layout's keys are blocks
  // dense_blk0_ + key (pages of one token): the sequence's first block is read once per work item and
  // the ids are selected without a branch or a load.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void locate(int32_t t, int32_t (&blk)[Base::kIters],
                                                 int32_t (&slot)[Base::kIters]) const {
    if constexpr (kDense) {
      static_assert(Cfg::kPageSize == 1, "a dense layout has pages of one token");
#pragma unroll
      for (int i = 0; i < Base::kIters; ++i) {
        const int32_t j = t * Base::kBN + this->row_of(i);
        const bool read = !this->idle(i) && t < this->t_end_ && j >= this->range_.key_begin && j < this->range_.key_end;
        slot[i] = 0;
        blk[i] = read ? dense_blk0_ + j : -1;
      }
    } else {
      this->locate_pages(t, blk, slot);
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
  int32_t dense_blk0_ = 0;  // DenseKvLayout: the sequence's first block
  // paged, at issue(j): tile t0 + j + 1's block-table entries and slots (-1: the row is not read)
  int32_t next_blk_[Base::kIters], next_slot_[Base::kIters];
#endif  // HIPATTN_HAS_DEVICE
};

}  // namespace hipattn
