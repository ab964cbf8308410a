// hipattn/arch/cdna4/warp_tile.hpp: the attention warp tiles on gfx950 (16x16x32 MFMA, ds_read_b64_tr_b16;
// and the 32-row tile of 32x32x16 MFMAs, WarpTile32).
//
// The tile is cdna3::Mfma16WarpTile (cdna3/warp_tile.hpp states the lane layout: one query row per
// lane per 16-row block, S^T = K Q^T and O^T += V^T P^T) with the gfx950 policy:
//   QK^T: one v_mfma_f32_16x16x32 per 32 head columns (the lane's 16-byte chunk is its 8 k values).
//   PV:   32 keys per v_mfma_f32_16x16x32 when kKN % 32 == 0 (else 16 keys per 16x16x16):
//         k = 8 * (l / 16) + i  <->  key 16 * (i / 4) + 4 * (l / 16) + i % 4 of the 32-key step,
//         i.e. the two 16-key S^T blocks the lane already holds; the V^T operand is two
//         ds_read_b64_tr_b16 of 4 x 16 blocks (rows = keys, columns = head columns).
//   Row reductions: v_permlane32_swap + v_permlane16_swap.
//   The fp8 matrix path (e4m3fn_q8): QK^T by v_mfma_f32_16x16x128_f8f6f4 per 128 head columns (the
//         rest, d % 128, by 16x16x32 fp8), in the format gfx950 reads (OCP e4m3fn).
#pragma once
#include <cstdint>

#include "hipattn/arch/cdna3/warp_tile.hpp"
#include "hipattn/arch/cdna3/warp_tile32.hpp"
#include "hipattn/arch/cdna4/atoms.hpp"

namespace hipattn::cdna4 {

// The gfx950 policy of cdna3::Mfma16WarpTile.
struct Gfx950TileOps {
  static constexpr bool kPvK32 = true;
  static constexpr bool kFp8K128 = true;  // the fp8 matrix path: 16x16x128 f8f6f4 per 128 columns
  // The key held by MFMA row m of S^T within a 16-key block: 2 * (m % 4) + (m / 4) % 2 + 8 * (m / 8).
  // Rows 0..7 (8..15) stay a permutation of keys 0..7 (8..15), so the 8 lanes of a 16-byte K-row
  // read pass hit 8 different chunk slots of the swizzled tile; the 4 keys key_perm(4 g + 0..3) of
  // a transposed V read of lane group g sit in 4 different 32-byte slot pairs.
  HIPATTN_HOST_DEVICE static constexpr int key_perm(int m) { return 2 * (m % 4) + (m / 4) % 2 + 8 * (m / 8); }
  // (key, column) within a 16 x 16 block of V whose 4 contiguous elements lane supplies to
  // ds_read_b64_tr_b16: lane 16 g + i gives block row i / 4 = key key_perm(4 g + i / 4), columns
  // 4 * (i % 4) + 0..3, and receives (atoms.hpp) column i of those 4 keys: element j is key
  // key_perm(4 g + j), the key of P^T's k = 4 g + j.
  HIPATTN_HOST_DEVICE static constexpr LaneElem v_tr_addr(int lane) {
    return {key_perm(4 * (lane / 16) + (lane % 16) / 4), 4 * (lane % 4)};
  }
#if defined(HIPATTN_BACKEND_HIP)
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma_k32(f32x4& c, b16x8 a, b16x8 b) { mfma_16x16x32<kBf16>(c, a, b); }
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma_k16(f32x4& c, b16x4 a, b16x4 b) { mfma_16x16x16<kBf16>(c, a, b); }
  // The fp8 matrix path's 32-deep step: 8 e4m3fn codes a lane and operand (what gfx950 reads; a
  // template so that only a gfx950 pass instantiates the atom).
  template <class Codes = E4m3fnCodes<8>>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma_fp8(f32x4& c, uint64_t a, uint64_t b) {
    mfma_16x16x32_fp8(c, Codes::from_bits(a), Codes::from_bits(b));
  }
  // ... 128 deep (v_mfma_f32_16x16x128_f8f6f4, fp8 e4m3 x e4m3, unscaled): 32 codes a lane and operand.
  template <class Bits, class Codes = E4m3fnCodes<32>>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma_fp8_k128(f32x4& c, const Bits& a, const Bits& b) {
    mfma_16x16x128_fp8(c, Codes::from_bits(a), Codes::from_bits(b));
  }
  // A operand of O^T for 16 keys: lane l gets V[row0 + 4 * (l / 16) + j][col0 + l % 16], j = 0..3.
  template <class L>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static b16x4 v_cols4(const uint16_t* v, int row0, int col0, int lane) {
    const LaneElem a = v_tr_addr(lane);
    return lds_read_tr16_b64(v + L::index(row0 + a.row, col0 + a.col));
  }
  // ... for 32 keys: elements 0..3 from keys row0 + [0, 16), 4..7 from row0 + [16, 32).
  template <class L>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static b16x8 v_cols8(const uint16_t* v, int row0, int col0, int lane) {
    const b16x4 lo = v_cols4<L>(v, row0, col0, lane);
    const b16x4 hi = v_cols4<L>(v, row0 + 16, col0, lane);
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float row_max(float v) { return reduce_max_xor48(v); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float row_sum(float v) { return reduce_sum_xor48(v); }
  // ---- the 32-row tile (cdna3::Mfma32WarpTile) ----
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma_32(f32x16& c, b16x8 a, b16x8 b) { mfma_32x32x16<kBf16>(c, a, b); }
  // A operand of O^T for 16 keys from row0 (32x32x16: m = l % 32, k = 8 * (l / 32) + j): lane l gets
  // column col0 + l % 32 of keys row0 + 4 * (l / 32) + j (j < 4) and row0 + 8 + 4 * (l / 32) + j - 4
  // (j >= 4), two ds_read_b64_tr_b16 whose 16-lane groups g read block rows row0 + 4 (g / 2) + 0..3
  // (+ 8) of columns col0 + 16 (g % 2) + [0, 16).
  template <class L>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static b16x8 v_cols32(const uint16_t* v, int row0, int col0, int lane) {
    const int g = lane / 16, i = lane % 16;
    const int row = row0 + 4 * (g / 2) + i / 4, col = col0 + 16 * (g % 2) + 4 * (i % 4);
    const b16x4 lo = lds_read_tr16_b64(v + L::index(row, col));
    const b16x4 hi = lds_read_tr16_b64(v + L::index(row + 8, col));
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float row_max32(float v) { return reduce_max_xor32(v); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float row_sum32(float v) { return reduce_sum_xor32(v); }
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack2(float lo, float hi) {
    if constexpr (kBf16) return pack_bf16x2(lo, hi); else return pack_f16x2(lo, hi);
  }
#endif
};

// The gfx950 attention warp tile (interface of sm90::WarpTile; layout in cdna3/warp_tile.hpp).
template <bool kBf16, int kD, int kMT, int kKN, int kDv = kD, bool kQ8 = false, int kVRow = kDv>
struct WarpTile : cdna3::Mfma16WarpTile<Gfx950TileOps, kBf16, kD, kMT, kKN, kDv, kQ8, kVRow> {};

// The gfx950 32-row tile (v_mfma_f32_32x32x16; layout in cdna3/warp_tile32.hpp): the ping-pong
// schedule's waves of 32 rows (kernels/cdna/pingpong_config.hpp).
template <bool kBf16, int kD, int kKN, int kDv = kD>
struct WarpTile32 : cdna3::Mfma32WarpTile<Gfx950TileOps, kBf16, kD, kKN, kDv> {};

}  // namespace hipattn::cdna4
