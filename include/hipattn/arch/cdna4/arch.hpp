// hipattn/arch/cdna4/arch.hpp: the gfx950 (CDNA4, MI355X) implementation of the one architecture interface.
//
// Interface (every arch/<isa>/arch.hpp provides the same names):
//   kTarget, kWaveSize
//   template <bool kBf16, int kDqk, int kMT, int kKN, int kDv = kDqk> using WarpTile   (see warp_tile.hpp)
//   copy_16(lds, gmem, valid), copy_4(...) / copy_commit() / copy_wait<N>()    16-byte global -> LDS copies
//   load_16 / store_16 / load_4 / store_4, kCopyModel, dequant_fp8x4         (see cdna3/arch.hpp)
//   sync(), lane(), exp2(x), tanh(x), pack2<kBf16>(lo, hi)
// Loads are register-staged, as on gfx942 (cdna3/arch.hpp, StagedPagedKvLoader). gfx950's 16-byte
// LDS DMA (global_load_lds_dwordx4) writes lane-linear LDS addresses (M0 + 16 * lane); a loader
// using it applies the tile's swizzle on the global side (which chunk each lane fetches): issue 9's
// step 2, not written yet.
#pragma once
#include "hipattn/arch/cdna3/arch.hpp"
#include "hipattn/arch/cdna4/atoms.hpp"
#include "hipattn/arch/cdna4/warp_tile.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn::cdna4 {

// gfx950 shares gfx942's copies, barriers and transcendental ops; it has its own warp tile (new MFMA
// shapes, ds_read_b64_tr_b16, permlane swaps) and a hardware bf16 pack (v_cvt_pk_bf16_f32).
struct Arch : cdna3::Arch {
  static constexpr Target kTarget = Target::gfx950;
  template <bool kBf16, int kD, int kMT, int kKN, int kDv = kD>
  using WarpTile = cdna4::WarpTile<kBf16, kD, kMT, kKN, kDv>;

#if defined(HIPATTN_BACKEND_HIP)
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack2(float lo, float hi) {
    return Gfx950TileOps::template pack2<kBf16>(lo, hi);  // the warp tile's P packing
  }
  template <KvKind kKv, bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void dequant_fp8x4(uint32_t x, uint32_t& lo, uint32_t& hi) {
    cdna3::dequant_fp8x4_with<Arch, kKv, kBf16>(x, lo, hi);
  }
#endif
};

}  // namespace hipattn::cdna4
