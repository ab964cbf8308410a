// hipattn/kernels/common/loaders/async.hpp: PagedKvLoader, the asynchronous KV loader policy
// (CopyModel::async, sm_90): cp.async copies kStages deep.
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/loaders/dequant.hpp"
#include "hipattn/kernels/common/loaders/query_load.hpp"
#include "hipattn/kernels/common/loaders/tile_walk.hpp"

namespace hipattn {

// The asynchronous policy (CopyModel::async, sm_90): cp.async copies kStages deep. fp8 tiles land in
// fp8 stages: a decode tile's (Cfg::kFp8AtFragment) as swizzled tiles of code pairs that the warp
// tile converts at the MMA fragment; a prefill tile's as linear rows, each thread converting the
// chunks it copied into one 16-bit buffer after the wait. Neither adds a barrier to the two a tile
// of a 16-bit cache.
template <class Cfg>
class PagedKvLoader : public PagedTileWalk<Cfg> {
  using Walk = PagedTileWalk<Cfg>;

 public:
  using typename Walk::Params;

#if defined(HIPATTN_HAS_DEVICE)
  using typename Walk::Arch;
  using typename Walk::KTile;
  using typename Walk::Offset;
  using typename Walk::QTile;
  using typename Walk::VTile;
  using Walk::kBM;
  using Walk::kBN;
  using Walk::kDqk;
  using Walk::kDv;
  using Walk::kStages;
  using Walk::kThreads;
  static_assert(kStages >= 2, "the cp.async pipeline needs at least two stages");
  static_assert(!Walk::kVInK && !Walk::kVFromK, "V from the K rows: the register-staged loader");
  static_assert(!Walk::kNarrowV, "V rows narrower than K's: the register-staged loader");
  static_assert(!Params::Layout::kChunkedKeys && !Params::Layout::kTransposedValues,
                "cp.async copies whole rows: the ROCm cache layout loads register-staged");

  // LDS carve-up: [Q][K stages][V stages][fp8 staging: K16][V16][k scales][v scales]. 16-bit tiles
  // are SwizzledTile rows of the padded pitch (Cfg::QLds / KLds / VLds); fp8 stages read at the
  // fragment are SwizzledTile rows of code pairs (K8Tile), fp8 staging rows are linear.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE PagedKvLoader(const Params& kv, bool per_token_head_scale, const AttentionWork& w,
                                                   const KvTileRange& range, int32_t t_end, char* smem, int tid)
      : Walk(kv, per_token_head_scale, w, range, t_end, smem, tid) {
    if constexpr (Cfg::kFp8Staging) {
      lds_k16_ = reinterpret_cast<uint16_t*>(this->kv_base_ + kStages * (Cfg::kKStageBytes + Cfg::kVStageBytes));
      lds_v16_ = lds_k16_ + Cfg::KLds::kElems;  // the padded pitch (d = 96: 128 elements a row)
    }
  }

  // Q: kBM rows x kDqk, zero-filled for invalid rows; the first copy group.
  // The fp8 matrix path (Cfg::kQ8): the codes as they are, 16 a chunk, into a swizzled tile of code
  // pairs (SwizzledTile<1, kDqk / 2>), by the same copies.
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q(const Args& a, const AttentionWork& w) {
    constexpr int kChunks = kBM * (kDqk / 8);
    if constexpr (Cfg::kQ8) {
      using Q8Tile = SwizzledTile<1, kDqk / 2>;
      constexpr int kChunks8 = kBM * (kDqk / 16);
      const uint8_t* q8 = reinterpret_cast<const uint8_t*>(a.q);
      for (int idx = this->tid_; idx < kChunks8; idx += kThreads) {
        const int row = idx / (kDqk / 16), c = idx % (kDqk / 16);
        const RowCoord rc = row_coord(a, w, row);
        const uint8_t* src = q8 + (rc.valid ? static_cast<int64_t>(rc.token) * a.q_stride_token +
                                                  static_cast<int64_t>(rc.q_head) * a.q_stride_head + c * 16
                                            : 0);
        Arch::copy_16(this->lds_q_ + Q8Tile::chunk_index(row, c), src, rc.valid);
      }
    } else if (!detail::load_q_if_fp8<Cfg, Arch>(a, w, this->lds_q_, this->tid_)) {
      // fp8 Q converted to 16-bit is stored synchronously; the group committed below is then empty,
      // and wait_oldest's barrier makes the stores visible like the copies
      for (int idx = this->tid_; idx < kChunks; idx += kThreads) {
        const int row = idx / (kDqk / 8), c = idx % (kDqk / 8);
        const RowCoord rc = row_coord(a, w, row);
        const uint16_t* src = a.q + (rc.valid ? static_cast<int64_t>(rc.token) * a.q_stride_token +
                                                    static_cast<int64_t>(rc.q_head) * a.q_stride_head + c * 8
                                              : 0);
        Arch::copy_16(this->lds_q_ + QTile::chunk_index(row, c), src, rc.valid);
      }
    }
    Arch::copy_commit();
  }

  // The first kStages - 1 tiles in flight (one copy group each), and the block ids of the next.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void prologue(int32_t t_begin) {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      this->load_pages(t_begin + s);
      if (t_begin + s < this->t_end_) issue_tile(s);
      Arch::copy_commit();
    }
    if constexpr (kPrefetchPages) this->load_pages(t_begin + kStages - 1);  // the next tile to issue
  }

  // Before computing tile t (the it-th of this workgroup): issue tile t + kStages - 1.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void advance(int32_t t, int it) {
    const int32_t tn = t + kStages - 1;
    const int stage = (it + kStages - 1) % kStages;
    if constexpr (kPrefetchPages) {
      if (tn < this->t_end_) issue_tile(stage);
      Arch::copy_commit();
      if (tn + 1 < this->t_end_) this->load_pages(tn + 1);
    } else {
      if (tn < this->t_end_) {
        this->load_pages(tn);
        issue_tile(stage);
      }
      Arch::copy_commit();
    }
  }

  // The oldest copy group (Q in the prologue) has landed and is visible to the workgroup.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void wait_oldest() {
    Arch::template copy_wait<kStages - 1>();
    Arch::sync();
  }

  // Stage `stage` has landed: its K and V as the warp tile reads them (fp8 read at the fragment: the
  // stage itself, like a 16-bit cache's). fp8 staging (prefill tiles): each thread converts the
  // chunks it copied itself (its own cp.async groups are complete after copy_wait, no barrier needed
  // to read them) into the 16-bit buffer, then one barrier makes the buffer (and Q, the per-key
  // scales) visible: the same two barriers a tile as a 16-bit cache (this one, release()). The fp8
  // stage is only ever read by the thread that fills it, so refilling it needs no barrier.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE KvTile wait(int stage) {
    if constexpr (Cfg::kFp8Staging) {
      Arch::template copy_wait<kStages - 1>();
      const uint8_t* ks = reinterpret_cast<const uint8_t*>(k_stage(stage));
      const uint8_t* vs = reinterpret_cast<const uint8_t*>(v_stage(stage));
#pragma unroll
      for (int i = 0; i < Walk::kIters; ++i) {
        if (this->idle(i)) continue;
        const int r = this->row_of(i), c = this->col_of(i);
        detail::dequant_chunk16<Cfg::kKv, Cfg::kBf16, Arch>(ks + r * kDqk + c * 16, lds_k16_ + KTile::chunk_index(r, 2 * c),
                                                            lds_k16_ + KTile::chunk_index(r, 2 * c + 1));
        detail::dequant_chunk16<Cfg::kKv, Cfg::kBf16, Arch>(vs + r * kDv + c * 16, lds_v16_ + VTile::chunk_index(r, 2 * c),
                                                            lds_v16_ + VTile::chunk_index(r, 2 * c + 1));
      }
      Arch::sync();
      return {lds_k16_, lds_v16_};
    } else {
      wait_oldest();
      return {reinterpret_cast<const uint16_t*>(k_stage(stage)), reinterpret_cast<const uint16_t*>(v_stage(stage))};
    }
  }

  // The stage is consumed: the next advance() may refill it.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void release() { Arch::sync(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void drain() { Arch::template copy_wait<0>(); }

 private:
  // Decode tiles (kWarpsN > 1) are bandwidth-bound and prefetch the block ids a tile ahead; prefill
  // tiles need those registers for S and O, and their two resident workgroups hide the table reads.
  static constexpr bool kPrefetchPages = Cfg::kWarpsN > 1;
  using K8Tile = SwizzledTile<1, kDqk / 2>;  // fp8 read at the fragment: 16 codes (8 pairs) a chunk
  using V8Tile = SwizzledTile<1, kDv / 2>;
  using Walk::k_stage;
  using Walk::v_stage;

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue_tile(int stage) {
    char* kd = k_stage(stage);
    char* vd = v_stage(stage);
#pragma unroll
    for (int i = 0; i < Walk::kIters; ++i) {
      if (this->idle(i)) continue;
      const int r = this->row_of(i), c = this->col_of(i);
      const bool valid = this->valid(i);
      Offset ko, vo;
      this->kv_offsets(i, ko, vo);
      if constexpr (Cfg::kFp8AtFragment) {
        Arch::copy_16(reinterpret_cast<uint16_t*>(kd) + K8Tile::chunk_index(r, c),
                      static_cast<const uint8_t*>(this->kv_.k) + ko + c * 16, valid);
        Arch::copy_16(reinterpret_cast<uint16_t*>(vd) + V8Tile::chunk_index(r, c),
                      static_cast<const uint8_t*>(this->kv_.v) + vo + c * 16, valid);
      } else if constexpr (Cfg::kFp8) {
        Arch::copy_16(kd + (r * kDqk + c * 16), static_cast<const uint8_t*>(this->kv_.k) + ko + c * 16, valid);
        Arch::copy_16(vd + (r * kDv + c * 16), static_cast<const uint8_t*>(this->kv_.v) + vo + c * 16, valid);
      } else {
        Arch::copy_16(reinterpret_cast<uint16_t*>(kd) + KTile::chunk_index(r, c),
                      static_cast<const uint16_t*>(this->kv_.k) + ko + c * 8, valid);
        Arch::copy_16(reinterpret_cast<uint16_t*>(vd) + VTile::chunk_index(r, c),
                      static_cast<const uint16_t*>(this->kv_.v) + vo + c * 8, valid);
      }
      if (this->copies_scales(i)) {
        const Offset so = this->scale_offset(i);
        Arch::copy_4(this->lds_ks_ + stage * kBN + r, this->kv_.k_scale + so, valid);
        Arch::copy_4(this->lds_vs_ + stage * kBN + r, this->kv_.v_scale + so, valid);
      }
    }
  }

  uint16_t* lds_k16_ = nullptr;  // fp8 staging: the converted stage
  uint16_t* lds_v16_ = nullptr;
#endif  // HIPATTN_HAS_DEVICE
};

}  // namespace hipattn
