// hipattn/kernels/common/loaders/lds_dma.hpp: LdsDmaPagedKvLoader, the LDS-DMA KV loader policy
// (CopyModel::lds_dma, CDNA, 16-bit caches): buffer loads that write LDS, the next tile in flight into
// the other LDS stage while the current one computes. Named by every target's configurations (their
// kernels exist, empty, in other targets' passes); its arch checks apply where it is built for.
#pragma once
#include <cstdint>

#include "hipattn/arch/concept.hpp"
#include "hipattn/kernels/common/loaders/query_load.hpp"
#include "hipattn/kernels/common/loaders/tile_walk.hpp"

namespace hipattn {

// The bytes a buffer resource of the LDS-DMA loader spans from a cache's base (its voffset is 32
// bits; below 2^32 so that voffset + 16 never wraps). The loader serves caches that lie within it;
// the dispatcher checks that (unified_kv_copy, dispatch/unified_plan.hpp) and keeps larger caches on
// the register-staged loader.
inline constexpr uint32_t kLdsDmaWindow = 0xFFFFFF00u;

// DMA units a row of a 16-bit LDS tile is cut into: its pitch (tile/lds_layout.hpp) in the target's
// LDS-DMA bytes (1 where the target has no LDS DMA, so the type still names).
template <class Cfg>
constexpr int lds_dma_units_per_row() {
  constexpr int b = lds_dma_bytes(Cfg::kTarget);
  return b > 0 ? SwizzledTile<1, Cfg::kDqk>::kPitch * 2 / b : 1;
}

// The LDS-DMA policy (CopyModel::lds_dma, CDNA, 16-bit caches). A buffer load with `lds` writes
// kB bytes a lane (gfx942: 4, gfx950: 16) at LDS address M0 + kB * lane. The loader therefore walks
// the tile in LDS order: unit u = tid + i * kThreads of a stage is LDS bytes [kB u, kB u + kB), i.e.
// row u / kUnits of the stage, physical chunk p = (u % kUnits) / (16 / kB) of the row, word
// (u % kUnits) % (16 / kB) of the chunk; the tile's swizzle (tile/lds_layout.hpp: logical chunk c
// sits at c ^ (row & 7)) is applied on the global side: the lane fetches logical chunk
// p ^ (row & 7) of that row from the cache. Padding chunks (d = 96) and rows that are not to be
// read get an offset at the resource's num_records, so the hardware writes zeros there: unowned
// slots and padded block-table entries contribute exactly zero, whatever the cache holds.
//   prologue(t0)    block ids of t0, tile t0's DMA into stage 0, block ids of t0 + 1
//   advance(t, it)  wait for this wave's DMA (tile t), barrier (every wave's tile t is in LDS and
//                   every wave is done with tile t - 1's stage), then tile t + 1's DMA into the other
//                   stage and the block ids of t + 2: the loads of t + 1 fly during t's compute
//   wait(stage)     nothing left to wait for
// The buffer resources span the cache (under 4 GiB: kLdsDmaWindow; the dispatcher keeps larger
// caches on the register-staged loader).
// Two LDS stages (the DMA of t + 1 must not land in the stage t is read from); no registers hold
// tile data, and no instruction of the wave moves it.
template <class Cfg>
class LdsDmaPagedKvLoader
    : public PagedTileWalk<Cfg, lds_dma_units_per_row<Cfg>()> {
  using Walk = PagedTileWalk<Cfg, lds_dma_units_per_row<Cfg>()>;

 public:
  using typename Walk::Params;

#if defined(HIPATTN_HAS_DEVICE)
  using typename Walk::Arch;
  using typename Walk::Offset;
  using Walk::kBM;
  using Walk::kBN;
  using Walk::kDqk;
  using Walk::kDv;
  using Walk::kStages;
  using Walk::kThreads;
  // The class is also named in other targets' device passes (an instance's kernels exist, empty, for
  // every target): the arch checks apply where the instance is built for.
  static constexpr bool kHere = Arch::kTarget == Cfg::kTarget;
  static_assert(!kHere || LdsDmaArch<Arch>, "the target's arch has LDS DMA (arch/concept.hpp LdsDmaArch)");
  static_assert(!Cfg::kFp8, "LDS DMA moves bytes as they are: fp8 caches use the register-staged loader");
  static_assert(!Params::Layout::kChunkedKeys && !Params::Layout::kTransposedValues,
                "the DMA writes whole rows: the ROCm cache layout loads register-staged");
  static_assert(kStages == 2, "the DMA of tile t + 1 lands in the other of two LDS stages");
  static_assert(!Walk::kVInK && !Walk::kVFromK, "V from the K rows: the register-staged loader");
  static_assert(!Walk::kNarrowV, "V rows narrower than K's: the register-staged loader");
  static constexpr int kB = lds_dma_bytes(Cfg::kTarget);
  static_assert(kB > 0, "a target with LDS DMA");
  template <class A>
  static constexpr bool same_width() { return A::kLdsDmaBytes == kB; }
  static_assert(!kHere || same_width<Arch>(), "host and device agree on the DMA width");
  static constexpr int kUnitsPerChunk = 16 / kB;
  static constexpr int kWave = 64;
  static_assert(Walk::kTotal % kWave == 0, "a stage is whole waves of DMA units");
  static constexpr bool kPadded = SwizzledTile<1, kDqk>::kPitch != kDqk;  // d = 96: padding chunks

  HIPATTN_DEVICE HIPATTN_FORCEINLINE LdsDmaPagedKvLoader(const Params& kv, bool per_token_head_scale,
                                                         const AttentionWork& w, const KvTileRange& range,
                                                         int32_t t_end, char* smem, int tid)
      : Walk(kv, per_token_head_scale, w, range, t_end, smem, tid),
        wave_lds_(Arch::wave_uniform(static_cast<uint32_t>(tid & ~(kWave - 1)) * kB)) {}

  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q(const Args& a, const AttentionWork& w) {
    detail::load_q_via_registers<Cfg, Arch>(a, w, this->lds_q_, this->tid_);
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void prologue(int32_t t_begin) {
    this->load_pages(t_begin);
    if (t_begin < this->t_end_) issue(0);
    this->load_pages(t_begin + 1);
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void advance(int32_t t, int it) {
    Arch::lds_dma_wait();
    Arch::sync();
    if (t + 1 < this->t_end_) {
      issue((it + 1) % kStages);
      this->load_pages(t + 2);
    }
  }

  // Q (stored by load_q) is visible to the workgroup.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void wait_oldest() { Arch::sync(); }
  // advance() waited for the stage and passed the barrier.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE KvTile wait(int stage) {
    return {reinterpret_cast<const uint16_t*>(k_stage(stage)), reinterpret_cast<const uint16_t*>(v_stage(stage))};
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void release() {}  // the next advance() waits at its barrier
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void drain() {}    // the last advance() issued nothing

 protected:
  static constexpr int kIters = Walk::kIters;
  static constexpr uint64_t kZero = ~uint64_t{0};  // a unit that loads zeros
  using Walk::k_stage;
  using Walk::v_stage;

  // Byte offsets in the K and V caches of unit i's bytes (kZero: not read, padding).
  // The element of its key row unit i's bytes start at (the tile's swizzle undone: the lane fetches
  // logical chunk p ^ (row & 7) of its row); false for a padding unit (d = 96), which loads zeros.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE bool unit_element(int i, int& elem) const {
    const int row = this->row_of(i), pu = this->col_of(i);
    const int c = (pu / kUnitsPerChunk) ^ (row & 7);  // the logical chunk stored at this LDS place
    elem = c * 8 + (pu % kUnitsPerChunk) * (kB / 2);
    return !kPadded || c < kDqk / 8;
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void unit_offsets(int i, uint64_t& ko, uint64_t& vo) const {
    int elem;
    const bool read = unit_element(i, elem) && this->valid(i);
    Offset ke, ve;
    this->kv_offsets(i, ke, ve);
    ko = read ? static_cast<uint64_t>(ke + elem) * 2u : kZero;
    vo = read ? static_cast<uint64_t>(ve + elem) * 2u : kZero;
  }

  // Tile (block ids from load_pages) -> LDS stage `stage`: one DMA load per K and V unit, from
  // buffer resources over the whole cache (kLdsDmaWindow bytes from its base; the dispatcher picks this
  // loader only for caches inside that, dispatch/unified_plan.hpp). Units that load zeros take
  // voffset = num_records.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue(int stage) { issue_parts<true, true>(stage, stage); }
  // The K units into K stage ks and / or the V units into V stage vs (the ping-pong loader below issues
  // them apart; both from the block ids load_pages holds).
  template <bool kK, bool kV>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue_parts(int ks, int vs) {
    const uint32_t k_lds = Arch::lds_address(k_stage(ks)) + wave_lds_;
    const uint32_t v_lds = Arch::lds_address(v_stage(vs)) + wave_lds_;
    const typename Arch::BufferRsrc rk = Arch::buffer_rsrc(this->kv_.k, kLdsDmaWindow);
    const typename Arch::BufferRsrc rv = Arch::buffer_rsrc(this->kv_.v, kLdsDmaWindow);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (this->idle(i)) continue;  // wave-uniform: a stage is whole waves of units
      uint64_t ko, vo;
      unit_offsets(i, ko, vo);
      const uint32_t lds = static_cast<uint32_t>(i * kThreads * kB);
      if constexpr (kK) Arch::lds_dma(rk, ko == kZero ? kLdsDmaWindow : static_cast<uint32_t>(ko), k_lds + lds);
      if constexpr (kV) Arch::lds_dma(rv, vo == kZero ? kLdsDmaWindow : static_cast<uint32_t>(vo), v_lds + lds);
    }
  }

  const uint32_t wave_lds_;  // the wave's first DMA unit of a stage, in bytes (wave-uniform: an SGPR)
#endif  // HIPATTN_HAS_DEVICE
};

}  // namespace hipattn
