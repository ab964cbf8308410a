// hipattn/arch/cdna3/warp_tile32.hpp: the 32-row MFMA attention tile (32x32 atoms), for the ISA
// policies that provide its atom and its V^T read (gfx950: arch/cdna4/warp_tile.hpp Gfx950TileOps).
//
// One wave64 owns 32 query rows and, per KV tile, kKN keys (a multiple of 32). As in the 16-row tile
// (warp_tile.hpp) both products run transposed, so that the C layout of the first is the B layout of
// the second:
//   S^T[keys, rows] = K[keys, D] Q[rows, D]^T     A = K (a 16-byte LDS row read an MFMA), B = Q^T
//   O^T[D, rows]   += V[keys, D]^T P[rows, keys]^T  A = V^T (transposed LDS reads), B = P^T (this
//                                                 lane's S^T accumulators, packed to 16 bit)
// The 32x32 C layout (cdna4/atoms.hpp: element i of lane l is M row 8 * (i / 4) + 4 * (l / 32) + i % 4,
// N column l % 32) gives lane l query row l % 32 and, of each 32-key block of S (32-column block of
// O), the 16 keys (columns) c(l, i) = 8 * (i / 4) + 4 * (l / 32) + i % 4:
//   S element e:  key 32 * (e / 16) + c(l, e % 16);   O element e:  column 32 * (e / 16) + c(l, e % 16)
// so O elements (2i, 2i + 1) are adjacent columns (the epilogue's pair stores), and the two lanes of a
// row are l and l ^ 32 (row_max / row_sum: one exchange; lanes 0..31 hold one copy each: row_leader).
// Against the 16-row tile a wave reads each K and V element of a tile once for 32 rows instead of 16,
// issues half the MFMAs for the same work (an MFMA's issue slots on the VALU port are per
// instruction), and reduces a row over two lanes instead of four.
// QK^T, 16-deep k step kc: lane l supplies k = 8 * (l / 32) + j, D column 16 kc + 8 * (l / 32) + j:
// chunk 2 kc + l / 32 of its K row (A, key l % 32 of the block) and of its Q row (B).
// PV, 16-key step st of a 32-key block: P^T's k = 8 * (l / 32) + j is the lane's S element
// i = 8 st + j, key 16 st + 8 * (j / 4) + 4 * (l / 32) + j % 4; the V^T operand (Ops::v_cols32) holds
// those keys of column l % 32 of the 32-column block.
#pragma once
#include <cstdint>

#include "hipattn/arch/cdna3/atoms.hpp"
#include "hipattn/tile/lds_layout.hpp"

namespace hipattn::cdna3 {

template <class Ops, bool kBf16, int kD, int kKN, int kDv = kD>
struct Mfma32WarpTile {
  static_assert(kKN % 32 == 0 && kD % 16 == 0 && kDv % 32 == 0,
                "keys per wave a multiple of 32, d_qk of 16, d_v of 32");
  static constexpr int kRowSlots = 1;   // one row a lane
  static constexpr int kRows = 32;      // rows per wave
  static constexpr int kSN = kKN / 32;  // 32-key blocks of S
  static constexpr int kON = kDv / 32;  // 32-column blocks of O
  static constexpr int kSElems = 16 * kSN;
  static constexpr int kOElems = 16 * kON;
  static constexpr int kQK = kD / 16;   // 16-column k steps of QK^T

#if defined(HIPATTN_BACKEND_HIP)
  struct QFrag { b16x8 r[kQK]; };
#else
  struct QFrag { uint32_t r[kQK][4]; };
#endif
  struct SFrag { float r[kSElems]; };
  struct OFrag { float r[kOElems]; };

  // M index (key of S^T, column of O^T) of C element i of lane `lane` within a 32 x 32 block.
  HIPATTN_HOST_DEVICE static constexpr int c_m(int lane, int i) { return 8 * (i / 4) + 4 * (lane / 32) + i % 4; }
  HIPATTN_HOST_DEVICE static constexpr int slot_row(int lane, int /*slot*/) { return lane % 32; }
  HIPATTN_HOST_DEVICE static constexpr int s_slot(int /*e*/) { return 0; }
  HIPATTN_HOST_DEVICE static constexpr int s_col(int lane, int e) { return 32 * (e / 16) + c_m(lane, e % 16); }
  HIPATTN_HOST_DEVICE static constexpr int o_slot(int /*e*/) { return 0; }
  HIPATTN_HOST_DEVICE static constexpr int o_col(int lane, int e) { return 32 * (e / 16) + c_m(lane, e % 16); }
  HIPATTN_HOST_DEVICE static constexpr bool row_leader(int lane) { return lane < 32; }

#if defined(HIPATTN_BACKEND_HIP)
  using L = SwizzledTile<1, kD>;    // Q and K
  using LV = SwizzledTile<1, kDv>;  // V

  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float row_max(float v) { return Ops::row_max32(v); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float row_sum(float v) { return Ops::row_sum32(v); }

  // Q rows [row0, row0 + 32) of a swizzled [*, kD] LDS tile into B (Q^T) fragments.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void load_q(QFrag& q, const uint16_t* lds, int row0) {
    const int lane = lane_id();
#pragma unroll
    for (int kc = 0; kc < kQK; ++kc) q.r[kc] = read_step(lds, row0 + lane % 32, lane, kc);
  }
  // S = Q K^T for keys [key0, key0 + kKN) of a swizzled [*, kD] LDS tile.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void qk(SFrag& s, const QFrag& q, const uint16_t* lds_k, int key0) {
    qk_with(s, lds_k, key0, [&](int kc) { return q.r[kc]; });
  }
  // ... with Q read from LDS at each k step (rows [row0, row0 + 32) of the swizzled Q tile).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void qk_lds(SFrag& s, const uint16_t* lds_q, int row0, const uint16_t* lds_k,
                                                        int key0) {
    const int lane = lane_id();
    qk_with(s, lds_k, key0, [&](int kc) { return read_step(lds_q, row0 + lane % 32, lane, kc); });
  }

  // O += P V for keys [key0, key0 + kKN) of a swizzled [*, kDv] LDS tile; P as floats in the S layout
  // (packed to 16-bit here, round to nearest even). The P <= 1 hint does not apply (16-bit V).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void pv(OFrag& o, const SFrag& p, const uint16_t* lds_v, int key0,
                                                    bool /*p_at_most_one*/ = false) {
    const int lane = lane_id();
    f32x16 acc[kON];
#pragma unroll
    for (int dn = 0; dn < kON; ++dn)
#pragma unroll
      for (int i = 0; i < 16; ++i) acc[dn][i] = o.r[16 * dn + i];
#pragma unroll
    for (int nb = 0; nb < kSN; ++nb)
#pragma unroll
      for (int st = 0; st < 2; ++st) {
        const float* s = &p.r[16 * nb + 8 * st];
        const u32x4 w = {pack(s[0], s[1]), pack(s[2], s[3]), pack(s[4], s[5]), pack(s[6], s[7])};
        const b16x8 b = __builtin_bit_cast(b16x8, w);
#pragma unroll
        for (int dn = 0; dn < kON; ++dn)
          Ops::template mma_32<kBf16>(acc[dn], Ops::template v_cols32<LV>(lds_v, key0 + 32 * nb + 16 * st, 32 * dn, lane), b);
      }
#pragma unroll
    for (int dn = 0; dn < kON; ++dn)
#pragma unroll
      for (int i = 0; i < 16; ++i) o.r[16 * dn + i] = acc[dn][i];
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack(float lo, float hi) { return Ops::template pack2<kBf16>(lo, hi); }

 private:
  typedef uint32_t u32x4 __attribute__((ext_vector_type(4)));
  // The chunk a lane supplies at k step kc from `row` of a swizzled [*, kD] tile: 2 kc + l / 32.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static b16x8 read_step(const uint16_t* lds, int row, int lane, int kc) {
    return lds_read_b128(lds + L::chunk_index(row, 2 * kc + lane / 32));
  }
  template <class QB>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void qk_with(SFrag& s, const uint16_t* lds_k, int key0, QB&& qb) {
    const int lane = lane_id();
    f32x16 acc[kSN];
#pragma unroll
    for (int nb = 0; nb < kSN; ++nb)
#pragma unroll
      for (int i = 0; i < 16; ++i) acc[nb][i] = 0.f;
#pragma unroll
    for (int kc = 0; kc < kQK; ++kc) {
      const b16x8 b = qb(kc);
#pragma unroll
      for (int nb = 0; nb < kSN; ++nb)
        Ops::template mma_32<kBf16>(acc[nb], read_step(lds_k, key0 + 32 * nb + lane % 32, lane, kc), b);
    }
#pragma unroll
    for (int nb = 0; nb < kSN; ++nb)
#pragma unroll
      for (int i = 0; i < 16; ++i) s.r[16 * nb + i] = acc[nb][i];
  }
#endif
};

}  // namespace hipattn::cdna3
