// hipattn/arch/cdna3/arch.hpp: the gfx942 (CDNA3, MI300) implementation of the one architecture interface.
//
// Interface (every arch/<isa>/arch.hpp provides the same names):
//   kTarget, kWaveSize
//   template <bool kBf16, int kDqk, int kMT, int kKN, int kDv = kDqk> using WarpTile   (see warp_tile.hpp)
//   copy_16(lds, gmem, valid), copy_4(...) / copy_commit() / copy_wait<N>()    16-byte global -> LDS copies
//   sync(), lane(), exp2(x), tanh(x), pack2<kBf16>(lo, hi)
// Copies are synchronous here (a global load into registers, then an LDS store): gfx942's LDS DMA
// (global_load_lds) moves at most 4 bytes per lane and writes lane-linear LDS addresses, which the
// swizzled tile does not have. copy_commit / copy_wait are therefore no-ops; the sync() that
// follows every wait in the kernels makes the stores visible.
#pragma once
#include "hipattn/arch/cdna3/atoms.hpp"
#include "hipattn/arch/cdna3/warp_tile.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn::cdna3 {

struct Arch {
  static constexpr Target kTarget = Target::gfx942;
  static constexpr int kWaveSize = 64;
  template <bool kBf16, int kD, int kMT, int kKN, int kDv = kD>
  using WarpTile = cdna3::WarpTile<kBf16, kD, kMT, kKN, kDv>;

#if defined(HIPATTN_BACKEND_HIP)
  // 16 bytes global -> LDS; zeros (and no global access) when !valid. Both addresses 16-byte aligned.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_16(void* lds, const void* g, bool valid) {
    u32x4 v = {0u, 0u, 0u, 0u};
    if (valid) v = *to_global(static_cast<const u32x4*>(g));
    *to_lds(static_cast<u32x4*>(lds)) = v;
  }
  // 4 bytes global -> LDS (a scale value); zero when !valid.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_4(void* lds, const void* g, bool valid) {
    uint32_t v = 0u;
    if (valid) v = *to_global(static_cast<const uint32_t*>(g));
    *to_lds(static_cast<uint32_t*>(lds)) = v;
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_commit() {}
  template <int N>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_wait() {}
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void sync() { __syncthreads(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static int lane() { return lane_id(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float exp2(float x) { return fast_exp2(x); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float tanh(float x) { return fast_tanh(x); }
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack2(float lo, float hi) {
    return Gfx942TileOps::template pack2<kBf16>(lo, hi);  // the warp tile's P packing
  }
#endif
};

}  // namespace hipattn::cdna3
