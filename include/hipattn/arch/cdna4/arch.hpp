// hipattn/arch/cdna4/arch.hpp: the gfx950 (CDNA4, MI355X) implementation of the one architecture interface.
//
// Interface (every arch/<isa>/arch.hpp provides the same names):
//   kTarget, kWaveSize
//   template <bool kBf16, int kDqk, int kMT, int kKN, int kDv = kDqk, KvKind, int kVRow = kDv> using WarpTile
//                                                   (see warp_tile.hpp; kVRow: V's LDS row length)
//   copy_16(lds, gmem, valid), copy_4(...) / copy_commit() / copy_wait<N>()    16-byte global -> LDS copies
//   load_16 / store_16 / load_4 / store_4, kCopyModel, dequant_fp8x4         (see cdna3/arch.hpp)
//   sync(), lane(), exp2(x), tanh(x), pack2<kBf16>(lo, hi)
// Copies as on gfx942 (cdna3/arch.hpp), except that gfx950's LDS DMA moves 16 bytes a lane
// (buffer_load_dwordx4 ... lds): 16-bit KV tiles load that way (LdsDmaPagedKvLoader, the tile's
// swizzle applied on the global side); fp8 tiles stay register-staged (converted in registers).
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
  // The CDNA warp tiles read 16-bit K / V tiles (fp8 caches are converted by the register-staged
  // loader), or, on the fp8 matrix path (the target's q8 kind), Q and K as fp8 codes and V 16-bit.
  template <bool kBf16, int kD, int kMT, int kKN, int kDv = kD, KvKind kKv = KvKind::same16, int kVRow = kDv>
  using WarpTile = std::enable_if_t<kKv == KvKind::same16 || (kv_fp8_matmul(kKv) && kv_kind_on_target(kKv, Target::gfx950)),
                                    cdna4::WarpTile<kBf16, kD, kMT, kKN, kDv, kv_fp8_matmul(kKv), kVRow>>;
  // The 32-row tile of 32x32x16 MFMAs (16-bit Q, K, V), for configurations that name it
  // (kernels/cdna/pingpong_config.hpp).
  template <bool kBf16, int kD, int kKN, int kDv = kD>
  using WarpTile32 = cdna4::WarpTile32<kBf16, kD, kKN, kDv>;

#if defined(HIPATTN_BACKEND_HIP)
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack2(float lo, float hi) {
    return Gfx950TileOps::template pack2<kBf16>(lo, hi);  // the warp tile's P packing
  }
  template <KvKind kKv, bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void dequant_fp8x4(uint32_t x, uint32_t& lo, uint32_t& hi) {
    cdna3::dequant_fp8x4_with<Arch, kKv, kBf16>(x, lo, hi);
  }
  // 16 bytes a lane (gfx950's buffer_load_dwordx4 with lds); otherwise cdna3's LDS DMA.
  static constexpr int kLdsDmaBytes = 16;
  static_assert(kLdsDmaBytes == lds_dma_bytes(Target::gfx950), "one figure for host and device");
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void lds_dma(const BufferRsrc& r, uint32_t voffset, uint32_t lds) {
    asm volatile("buffer_load_dwordx4 %0, %1, 0 offen lds"
                 :
                 : "v"(voffset), "s"(r), "{m0}"(__builtin_amdgcn_readfirstlane(static_cast<int>(lds)))
                 : "memory");
  }
#endif
};

}  // namespace hipattn::cdna4
