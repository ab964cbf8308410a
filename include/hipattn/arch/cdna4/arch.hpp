// hipattn/arch/cdna4/arch.hpp: the gfx950 (CDNA4, MI355X) implementation of the one architecture interface.
//
// Interface (every arch/<isa>/arch.hpp provides the same names):
//   kTarget, kWaveSize
//   template <bool kBf16, int kD, int kMT, int kKN> using WarpTile   (see warp_tile.hpp)
//   copy_16(lds, gmem, valid), copy_4(...) / copy_commit() / copy_wait<N>()    16-byte global -> LDS copies
//   sync(), lane(), exp2(x), tanh(x), pack2<kBf16>(lo, hi)
// Copies are synchronous (global load into registers, then an LDS store), as on gfx942: gfx950's
// 16-byte LDS DMA (global_load_lds_dwordx4) writes lane-linear LDS addresses (M0 + 16 * lane),
// which the XOR-swizzled tile does not have; using it needs loaders that walk physical chunks.
#pragma once
#include "hipattn/arch/cdna4/atoms.hpp"
#include "hipattn/arch/cdna4/warp_tile.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn::cdna4 {

struct Arch {
  static constexpr Target kTarget = Target::gfx950;
  static constexpr int kWaveSize = 64;
  template <bool kBf16, int kD, int kMT, int kKN>
  using WarpTile = cdna4::WarpTile<kBf16, kD, kMT, kKN>;

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
    if constexpr (kBf16) return pack_bf16x2(lo, hi); else return pack_f16x2(lo, hi);
  }
#endif
};

}  // namespace hipattn::cdna4
