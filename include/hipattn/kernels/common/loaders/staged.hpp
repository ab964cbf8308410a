// hipattn/kernels/common/loaders/staged.hpp: StagedPagedKvLoader, the register-staged KV loader policy
// (CopyModel::register_staged): the next tile in registers while the current one computes from LDS.
#pragma once
#include <cstdint>
#include <type_traits>

#include "hipattn/kernels/common/loaders/dequant.hpp"
#include "hipattn/kernels/common/loaders/query_load.hpp"
#include "hipattn/kernels/common/loaders/tile_walk.hpp"
#include "hipattn/tile/register_transpose.hpp"

namespace hipattn {

// The register-staged policy (CopyModel::register_staged: CDNA; sm_90 fp8 at d = 64 / 128; the ROCm
// cache layout on every target). Tile t + 1 travels in registers while tile t is computed from LDS:
//   prologue(t0)     issue every load of tile t0 (registers), then the block ids of tile t0 + 1
//   advance(t, it)   store the registers (tile t; fp8 converted to 16-bit here) into LDS stage it % 2
//                    and the per-key scales beside it, then issue every load of tile t + 1 and the
//                    block ids of tile t + 2 (so no table read stalls the issue of a tile)
//   wait(stage)      one barrier: the stores are visible
// The s_waitcnt vmcnt the compiler places before the stores is the only wait on the loads, so all of
// a tile's loads (kIters x K and V chunks per thread, and the scales) are in flight at once, behind a
// tile of compute. Loads are unconditional (load_16 of an address inside the cache, zero selected for
// invalid rows), with no branch per load. Two LDS stages need no barrier after the compute: stage
// it % 2 is rewritten at iteration it + 2, after every wave has passed iteration it + 1's barrier.
// One LDS stage (half the LDS, so more workgroups per CU where LDS is scarce: gfx942) takes a
// barrier after each tile's compute (release) before the next store; the registers are still the
// second buffer, so the loads stay a tile ahead either way.
// LDS holds 16-bit tiles only (fp8 is converted in registers): [Q][K stages][V stages][scales].
// With RocmKvLayout the keys are the walk's chunks (at the view's k_chunk offsets) and the values
// come in transposed units (below); the LDS tiles are the same.
template <class Cfg>
class StagedPagedKvLoader : public PagedTileWalk<Cfg> {
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
  static_assert(kStages == 1 || kStages == 2, "the register-staged loader keeps one or two LDS stages");

  HIPATTN_DEVICE HIPATTN_FORCEINLINE StagedPagedKvLoader(const Params& kv, bool per_token_head_scale,
                                                         const AttentionWork& w, const KvTileRange& range,
                                                         int32_t t_end, char* smem, int tid)
      : Walk(kv, per_token_head_scale, w, range, t_end, smem, tid) {}

  // Q: kBM rows x kDqk, zero-filled for invalid rows: every load issued, then the stores.
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q(const Args& a, const AttentionWork& w) {
    detail::load_q_via_registers<Cfg, Arch>(a, w, this->lds_q_, this->tid_);
  }

  // Tile t_begin's loads in flight, and the block ids of the next tile.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void prologue(int32_t t_begin) {
    load_pages(t_begin);
    fetch(t_begin);
    load_pages(t_begin + 1);
  }

  // Before computing tile t (the it-th of this workgroup): tile t into LDS stage it % 2, tile t + 1
  // into registers (its block ids were read a tile ago), the block ids of tile t + 2.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void advance(int32_t t, int it) {
    store(it % kStages, t);
    if (t + 1 < this->t_end_) {
      fetch(t + 1);
      load_pages(t + 2);
    }
  }

  // Q (stored by load_q) is visible to the workgroup.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void wait_oldest() { Arch::sync(); }

  // Stage `stage` (stored by advance) is visible: its K and V as 16-bit swizzled tiles (kVInK: V is
  // the K tile, its rows kDqk long).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE KvTile wait(int stage) {
    Arch::sync();
    return {reinterpret_cast<const uint16_t*>(k_stage(stage)),
            reinterpret_cast<const uint16_t*>(Walk::kVInK ? k_stage(stage) : v_stage(stage))};
  }

  // One stage: every wave must be done with it before the next advance() rewrites it. Two stages:
  // no barrier (see the class comment).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void release() {
    if constexpr (kStages == 1) Arch::sync();
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void drain() {}    // nothing is fetched past t_end

 private:
  static constexpr int kIters = Walk::kIters;
  using Walk::k_stage;
  using Walk::v_stage;

  // Values of a transposed layout (RocmKvLayout: a value's slots contiguous, its dimensions
  // v_stride_dim apart). A unit is 4 slots x 8 dimensions: 8 loads (8 bytes of 16-bit values, 4 of
  // fp8 ones), each 4 slots of one dimension, transposed in registers into the 4 rows' chunks of 8
  // dimensions (fp8 then converted), stored as the V tile's chunks: a thread holds as many value
  // registers as the row layout's loads would (units of 8 slots left half the decode tile's threads
  // idle and the others 16 registers over the tile's budget on gfx942). Units go slot
  // group fastest (neighbouring lanes read neighbouring slots of a dimension). A unit's slots share
  // a page (block_size % 8 == 0, validated), so one block-table read serves them; rows outside the
  // visible key range are zeroed after the transpose (bit moves only: nothing of an unowned slot
  // reaches another row).
  static constexpr bool kTransposedV = Params::Layout::kTransposedValues;
  static_assert(!kTransposedV || !Walk::kVInK, "V in K: row layouts only");
  static_assert(!kTransposedV || !Walk::kVFromK, "V from K: row layouts only");
  static constexpr bool kRowV = !kTransposedV && !Walk::kVInK && !Walk::kVFromK;  // V rows loaded like K's
  // V rows narrower than K's (16-bit row layouts): chunk c of the walk is a V chunk only below kDv / 8
  static constexpr bool kNarrowV = Walk::kNarrowV;
  static_assert(!kNarrowV || (!Cfg::kFp8 && !kTransposedV), "narrower V rows: 16-bit row layouts");
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static bool v_chunk(int c) { return !kNarrowV || c < kDv / 8; }
  static constexpr int kVSlots = 4;
  static constexpr int kVGroups = kBN / kVSlots;  // slot groups of a tile
  static_assert(!kTransposedV || (kBN % kVSlots == 0 && kDv % 8 == 0), "whole units of kVSlots slots x 8 dimensions");
  static constexpr int kVUnits = kTransposedV ? kVGroups * (kDv / 8) : 0;
  static constexpr int kVIters = kTransposedV ? (kVUnits + kThreads - 1) / kThreads : 1;
  static constexpr bool kVMayIdle = kTransposedV && kVUnits % kThreads != 0;
  HIPATTN_DEVICE HIPATTN_FORCEINLINE int vgroup(int i) const { return (this->tid_ + i * kThreads) % kVGroups; }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE int vdims(int i) const { return (this->tid_ + i * kThreads) / kVGroups; }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE bool vidle(int i) const { return kVMayIdle && this->tid_ + i * kThreads >= kVUnits; }

  // The block ids of tile t: the walk's rows and, for a transposed layout, the value units' pages
  // (-1: no row of the unit is visible). The slots are found again when the loads are issued and the
  // visible rows when they are stored (from the tile index): fewer registers held across the tile.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_pages(int32_t t) {
    Walk::load_pages(t);
    if constexpr (kTransposedV) {
#pragma unroll
      for (int i = 0; i < kVIters; ++i) {
        vblk_[i] = -1;
        if (vidle(i)) continue;
        const int32_t j0 = t * kBN + kVSlots * vgroup(i);
        if (t < this->t_end_ && j0 + kVSlots > this->range_.key_begin && j0 < this->range_.key_end) {
          int32_t page = 0, slot = 0;
          this->kv_.locate(j0, page, slot);
          vblk_[i] = this->kv_.physical_block(this->seq_, page);
        }
      }
    }
  }
  // Row r of tile t is visible (its key inside the work item's range).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE bool visible(int32_t t, int r) const {
    const int32_t j = t * kBN + r;
    return j >= this->range_.key_begin && j < this->range_.key_end;
  }

  // Every load of the tile whose block ids load_pages() read, into registers, all issued before any
  // is used. The loads are raw (an invalid row reads the cache's first bytes) and ok_ remembers
  // which rows count: store() zeroes the others, so no select pulls a wait up behind the loads.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void fetch([[maybe_unused]] int32_t t) {
    ok_ = 0u;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (this->valid(i)) ok_ |= 1u << i;
      const int c = this->col_of(i);
      const auto* kb = static_cast<const uint8_t*>(static_cast<const void*>(this->kv_.k));
      constexpr int kElemBytes = Cfg::kFp8 ? 1 : 2;
      Offset ko, vo;
      this->kv_offsets(i, ko, vo);
      k_[i] = Arch::load_16(kb + (ko + this->kv_.template k_chunk<Walk::kChunkElems>(c)) * kElemBytes, true);
      if constexpr (kRowV) {
        const auto* vb = static_cast<const uint8_t*>(static_cast<const void*>(this->kv_.v));
        if (v_chunk(c)) v_[i] = Arch::load_16(vb + (vo + c * Walk::kChunkElems) * kElemBytes, true);
      }
      if constexpr (Cfg::kFp8) {
        if (this->per_token_head_scale_) {  // uniform: every thread takes the same branch
          const Offset so = this->scale_offset(i);
          ks_[i] = Arch::load_4(this->kv_.k_scale + so, true);
          vs_[i] = Arch::load_4(this->kv_.v_scale + so, true);
        }
      }
    }
    if constexpr (kTransposedV) {
      const auto* vb = static_cast<const uint8_t*>(static_cast<const void*>(this->kv_.v));
      constexpr int kElemBytes = Cfg::kFp8 ? 1 : 2;
#pragma unroll
      for (int i = 0; i < kVIters; ++i) {
        const bool read = vblk_[i] >= 0;
        const int d0 = 8 * (vidle(i) ? 0 : vdims(i));
        int32_t page = 0, slot = 0;
        this->kv_.locate(t * kBN + kVSlots * vgroup(i), page, slot);
        // One address, stepped a dimension at a time (8 offsets formed apart would be loop
        // invariants the compiler keeps in registers across the whole kernel).
        const uint8_t* src = vb + (read ? this->kv_.v_offset(vblk_[i], slot, this->kvh_) + this->kv_.v_dim(d0) : Offset(0)) * kElemBytes;
        const Offset step = read ? this->kv_.v_dim(1) * kElemBytes : Offset(0);
#pragma unroll
        for (int k = 0; k < 8; ++k, src += step) {
          if constexpr (Cfg::kFp8) vt_[i][k] = Arch::load_4(src, true);
          else vt_[i][k] = Arch::load_8(src, true);
        }
      }
    }
  }

  // The registers into LDS stage `stage` (fp8 converted to the q dtype first); rows that were not
  // to be read store zeros, whatever the cache held there.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void store(int stage, [[maybe_unused]] int32_t t) {
    uint16_t* kd = reinterpret_cast<uint16_t*>(k_stage(stage));
    [[maybe_unused]] uint16_t* vd = reinterpret_cast<uint16_t*>(v_stage(stage));
    const u32x4 zero{0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (this->idle(i)) continue;
      const int r = this->row_of(i), c = this->col_of(i);
      const bool ok = (ok_ >> i) & 1u;
      const u32x4 kc = ok ? k_[i] : zero;
      u32x4 vc = zero;
      if constexpr (kRowV) vc = ok ? v_[i] : zero;
      if constexpr (Cfg::kFp8) {
        constexpr KvKind kStorage = kv_storage(Cfg::kKv);
        u32x4 lo, hi;
        if constexpr (Cfg::kQ8) {  // the fp8 matrix path: K's codes as they are (the tile of code pairs)
          Arch::store_16(kd + SwizzledTile<1, kDqk / 2>::chunk_index(r, c), kc);
          if constexpr (Walk::kVFromK) {  // V: the row's first kDv codes, converted (16 a chunk)
            if (c < kDv / 16) {
              detail::dequant_regs16<kStorage, Cfg::kBf16, Arch>(kc, lo, hi);
              Arch::store_16(vd + VTile::chunk_index(r, 2 * c), lo);
              Arch::store_16(vd + VTile::chunk_index(r, 2 * c + 1), hi);
            }
          }
        } else {
          detail::dequant_regs16<kStorage, Cfg::kBf16, Arch>(kc, lo, hi);
          Arch::store_16(kd + KTile::chunk_index(r, 2 * c), lo);
          Arch::store_16(kd + KTile::chunk_index(r, 2 * c + 1), hi);
        }
        if constexpr (kRowV) {
          detail::dequant_regs16<kStorage, Cfg::kBf16, Arch>(vc, lo, hi);
          Arch::store_16(vd + VTile::chunk_index(r, 2 * c), lo);
          Arch::store_16(vd + VTile::chunk_index(r, 2 * c + 1), hi);
        }
        if (this->copies_scales(i)) {
          Arch::store_4(this->lds_ks_ + stage * kBN + r, ok ? ks_[i] : 0u);
          Arch::store_4(this->lds_vs_ + stage * kBN + r, ok ? vs_[i] : 0u);
        }
      } else {
        Arch::store_16(kd + KTile::chunk_index(r, c), kc);
        if constexpr (kRowV) {
          if (v_chunk(c)) Arch::store_16(vd + VTile::chunk_index(r, c), vc);
        }
      }
    }
    if constexpr (kTransposedV) store_values(vd, t);
  }

  // The value units (transposed layout) into the V tile: transpose, convert fp8, zero the rows
  // outside the visible range. Two rows at a time, each pair stored before the next is formed, so
  // only the loads and one pair are live (the whole transpose at once needs 32 more registers).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void store_values(uint16_t* vd, int32_t t) {
    const u32x4 zero{0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < kVIters; ++i) {
      if (vidle(i)) continue;
      const int row0 = kVSlots * vgroup(i), c = vdims(i);
#pragma unroll
      for (int r = 0; r < kVSlots; r += 2) {
        u32x4 a, b;
        if constexpr (Cfg::kFp8) {
          u32x2 ca, cb;
          transpose8x4_b8_pair(vt_[i], r, ca, cb);
          Arch::template dequant_fp8x4<Cfg::kKv, Cfg::kBf16>(ca.x, a.x, a.y);
          Arch::template dequant_fp8x4<Cfg::kKv, Cfg::kBf16>(ca.y, a.z, a.w);
          Arch::template dequant_fp8x4<Cfg::kKv, Cfg::kBf16>(cb.x, b.x, b.y);
          Arch::template dequant_fp8x4<Cfg::kKv, Cfg::kBf16>(cb.y, b.z, b.w);
        } else {
          transpose8x4_b16_pair(vt_[i], r, a, b);
        }
        Arch::store_16(vd + VTile::chunk_index(row0 + r, c), visible(t, row0 + r) ? a : zero);
        Arch::store_16(vd + VTile::chunk_index(row0 + r + 1, c), visible(t, row0 + r + 1) ? b : zero);
      }
    }
  }

  u32x4 k_[kIters], v_[kRowV ? kIters : 1];
  using VLoad = std::conditional_t<Cfg::kFp8, uint32_t, u32x2>;  // 4 slots of one dimension
  VLoad vt_[kTransposedV ? kVIters : 1][kTransposedV ? 8 : 1];   // transposed layout: the units' loads
  int32_t vblk_[kVIters];                                        // their pages (-1: not read)
  uint32_t ks_[Cfg::kFp8 ? kIters : 1], vs_[Cfg::kFp8 ? kIters : 1];
  uint32_t ok_ = 0u;  // bit i: chunk row i of the registers' tile is read (not zero)
#endif  // HIPATTN_HAS_DEVICE
};

}  // namespace hipattn
