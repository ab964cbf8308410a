// hipattn/arch/sm90/warp_tile.hpp: the attention warp tile on sm_90 (mma.sync m16n8k16).
//
// One warp owns kMT * 16 query rows and, per KV tile, kKN keys. It computes
//   S[rows, keys] = Q[rows, Dqk] K[keys, Dqk]^T   (A = Q from LDS by ldmatrix, B = K by ldmatrix)
//   O[rows, Dv]  += P[rows, keys] V[keys, Dv]     (A = P from the S accumulators, B = V by ldmatrix.trans)
// Q and K tiles are [*, kD] (kD = d_qk), V tiles [*, kDv] (d_v, e.g. 512 of MLA's 576, 128 of 192;
// kVRow = kD: V read from the K tile's first kDv columns).
// Each lane holds 2 rows per 16-row block (the C layout of atoms.hpp): "row slots". The S and O
// fragments are flat float arrays; s_slot / s_col (o_slot / o_col) map an element to its row slot and
// its column, so tile-level code (softmax, masks, variants, epilogues) is written once for every ISA.
//
// fp8 KV read at the fragment (kKv != KvKind::same16): K and V tiles hold the codes, as swizzled tiles
// of kD / 2 16-bit code pairs (16 codes a chunk), and each B fragment is converted to the q dtype in
// registers right before its MMA (dequant_fp8x4): no 16-bit copy of the tile exists.
//   K: ldmatrix of the code tile gives lane (g, t) codes 4t..4t+3 of a 16-code chunk of key g: they
//      fill the B fragment's k slots 2t, 2t+1, 2t+8, 2t+9 (k is summed over, so any order of a
//      chunk's dimensions serves if Q follows it): Q's A fragment is read in the same order
//      (load_q / qk_lds read dimensions 4t..4t+3 of rows g and g + 8 with 8-byte LDS loads).
//   V: ldmatrix.trans of code pairs gives lane (g, t) dimensions 2g, 2g + 1 of keys 2t, 2t + 1; a byte
//      permute makes the (key 2t, key 2t + 1) pair of each dimension, the B fragments of two n8 tiles,
//      one of the chunk's even dimensions and one of its odd ones. The O fragment is kept in the
//      order that follows (o_col): its element pairs stay adjacent columns (4t + 2h, 4t + 2h + 1).
//
// The fp8 matrix path (kKv == KvKind::e4m3fn_q8: e4m3fn queries and cache, ALGORITHM.md section 12): Q is a swizzled
// tile of code pairs too, and nothing is converted to 16-bit.
//   QK^T: mma.sync m16n8k32 e4m3. A 16-code chunk is 8 code pairs, so ldmatrix of a code tile gives
//      lane (g, t) codes 4t..4t+3 of row g: the m16n8k32 A and B layouts exactly (atoms.hpp); Q and K
//      are read as 16-bit tiles of d / 2 are, one MMA per two chunks.
//   P V (pv_p8, warps of 32 keys or more): P in e4m3 scaled by kP8Scale = 2^8 (P <= 1, so <= 256 <
//      448; values down to 2^-17 keep a code), V's codes as stored. The B operand needs 4 keys of one
//      dimension a register: ldmatrix.trans of code pairs gives lane (g, t) dimensions 2g, 2g + 1 of
//      keys 2t, 2t + 1 of each 8-key block; a byte permute of blocks b and b + 1 gives dimension 2g
//      (or 2g + 1) of keys 2t, 2t + 1, 8 + 2t, 9 + 2t, and that is the k order of the A register the
//      lane packs from its own S accumulators (n8 tiles 2i and 2i + 1 hold exactly those keys): no
//      shuffle, no transposed copy of V. O keeps the fp8 V order of o_col.
#pragma once
#include <cstdint>

#include "hipattn/arch/sm90/atoms.hpp"
#include "hipattn/tile/lds_layout.hpp"

namespace hipattn::sm90 {

template <bool kBf16, int kD, int kMT, int kKN, int kDv = kD, KvKind kKv = KvKind::same16, int kVRow = kDv>
struct WarpTile {
  static_assert(kKN % 16 == 0 && kD % 16 == 0 && kDv % 16 == 0, "keys per warp and head sizes must be multiples of 16");
  static constexpr bool kFp8Kv = kKv != KvKind::same16;  // K and V tiles hold fp8 codes
  static constexpr bool kQ8 = kv_fp8_matmul(kKv);         // Q holds e4m3fn codes: the fp8 matrix path
  static constexpr KvKind kCodes = kv_storage(kKv);       // the codes' format (conversions)
  static constexpr bool kP8 = kQ8 && kKN % 32 == 0;       // P V by the e4m3 MMA (pv_p8) possible
  static constexpr float kP8Scale = 256.f;                // P's scale in pv_p8 (the epilogue divides it out)
  static_assert(!kFp8Kv || (kD % 32 == 0 && kDv % 32 == 0), "fp8 tiles are read two 16-code chunks at a time");
  // kVRow: the row length of the 16-bit LDS tile V is read from (kDv, or kD where V is the leading
  // columns of the K tile, as MLA's latent rows are); fp8 tiles read at the fragment keep V apart.
  static_assert(kVRow == kDv || (kVRow == kD && kDv < kD && !kFp8Kv), "V is its own tile, or the leading columns of K's");
  static constexpr int kRowSlots = 2 * kMT;   // rows held per lane
  static constexpr int kRows = 16 * kMT;      // rows per warp
  static constexpr int kSN = kKN / 8;         // n8 tiles of S
  static constexpr int kON = kDv / 8;         // n8 tiles of O
  static constexpr int kSElems = kMT * kSN * 4;
  static constexpr int kOElems = kMT * kON * 4;
  static constexpr int kQK = kD / 16;         // k16 steps of QK^T
  static constexpr int kQSteps = kQ8 ? kD / 32 : kQK;  // MMA k steps of QK^T (k32 for e4m3)

  struct QFrag { uint32_t r[kMT][kQSteps][4]; };
  struct SFrag { float r[kSElems]; };
  struct OFrag { float r[kOElems]; };

  // The lane that writes per-row values (lse) for its row slots: one lane of each quad.
  HIPATTN_HOST_DEVICE static constexpr bool row_leader(int lane) { return lane % 4 == 0; }
  // Row (within the warp's rows) of row slot `slot` of lane `lane`.
  HIPATTN_HOST_DEVICE static constexpr int slot_row(int lane, int slot) { return (slot / 2) * 16 + lane / 4 + 8 * (slot % 2); }
  // Row slot and column (within the warp's keys) of S element e.
  HIPATTN_HOST_DEVICE static constexpr int s_slot(int e) { return (e / (kSN * 4)) * 2 + (e % 4) / 2; }
  HIPATTN_HOST_DEVICE static constexpr int s_col(int lane, int e) { return ((e / 4) % kSN) * 8 + 2 * (lane % 4) + (e % 2); }
  HIPATTN_HOST_DEVICE static constexpr int o_slot(int e) { return (e / (kON * 4)) * 2 + (e % 4) / 2; }
  // fp8 V: n8 group j holds columns 16 (j / 2) + 4t + 2 (j % 2) + {0, 1} (see the header).
  HIPATTN_HOST_DEVICE static constexpr int o_col(int lane, int e) {
    if constexpr (kFp8Kv) return ((e / 4) % kON) / 2 * 16 + 4 * (lane % 4) + 2 * (((e / 4) % kON) % 2) + (e % 2);
    else return ((e / 4) % kON) * 8 + 2 * (lane % 4) + (e % 2);
  }

#if defined(HIPATTN_BACKEND_CUDA)
  // Reductions over the lanes that share a row (the 4 lanes of a quad).
  HIPATTN_DEVICE static float row_max(float v) { return xor_reduce_max<3>(v); }
  HIPATTN_DEVICE static float row_sum(float v) { return xor_reduce_sum<3>(v); }

  // Q rows [row0, row0 + kRows) of a swizzled [*, kD] LDS tile into A fragments.
  HIPATTN_DEVICE static void load_q(QFrag& q, const uint16_t* lds, int row0) {
    using L = SwizzledTile<1, kD>;
    const int lane = lane_id();
    const int mi = lane / 8;
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int kk = 0; kk < kQSteps; ++kk) {
        if constexpr (kQ8) {
          ldmatrix_q8(q.r[mt][kk], lds, row0 + mt * 16, kk);
        } else if constexpr (kFp8Kv) {
          load_a_fp8_order(q.r[mt][kk], lds, row0 + mt * 16, kk);
        } else {
          const int row = row0 + mt * 16 + (mi % 2) * 8 + lane % 8;
          const int chunk = kk * 2 + mi / 2;
          ldmatrix_x4(q.r[mt][kk], lds + L::chunk_index(row, chunk));
        }
      }
  }

  // The e4m3 A fragment of rows [row0, row0 + 16), k32 step kk, from a swizzled tile of Q code pairs:
  // matrices (rows +8 (mi % 2), chunk 2 kk + mi / 2) are a0..a3 of the m16n8k32 layout.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void ldmatrix_q8(uint32_t (&a)[4], const uint16_t* lds, int row0, int kk) {
    using L = SwizzledTile<1, kD / 2>;
    const int lane = lane_id();
    const int mi = lane / 8;
    ldmatrix_x4(a, lds + L::chunk_index(row0 + (mi % 2) * 8 + lane % 8, kk * 2 + mi / 2));
  }

  // The A fragment of rows [row0, row0 + 16), k step kk, in the order of fp8 K fragments: lane (g, t)
  // holds dimensions 16 kk + 4t .. 4t + 3 of rows g (a[0], a[2]) and g + 8 (a[1], a[3]).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void load_a_fp8_order(uint32_t (&a)[4], const uint16_t* lds, int row0, int kk) {
    using L = SwizzledTile<1, kD>;
    const int lane = lane_id();
    const int col = kk * 16 + 4 * (lane % 4);
    const uint2 lo = *reinterpret_cast<const uint2*>(lds + L::index(row0 + lane / 4, col));
    const uint2 hi = *reinterpret_cast<const uint2*>(lds + L::index(row0 + lane / 4 + 8, col));
    a[0] = lo.x;
    a[1] = hi.x;
    a[2] = lo.y;
    a[3] = hi.y;
  }

  // S = Q K^T with Q read from LDS at each k step (for large heads, where holding Q in registers
  // would spill): rows [row0, row0 + kRows) of the swizzled Q tile.
  HIPATTN_DEVICE static void qk_lds(SFrag& s, const uint16_t* lds_q, int row0, const uint16_t* lds_k, int key0) {
    using L = SwizzledTile<1, kD>;
    const int lane = lane_id();
    const int mi = lane / 8;
    qk_impl(s, lds_k, key0, [&](int mt, int kk, uint32_t(&a)[4]) {
      if constexpr (kQ8) ldmatrix_q8(a, lds_q, row0 + mt * 16, kk);
      else if constexpr (kFp8Kv) load_a_fp8_order(a, lds_q, row0 + mt * 16, kk);
      else ldmatrix_x4(a, lds_q + L::chunk_index(row0 + mt * 16 + (mi % 2) * 8 + lane % 8, kk * 2 + mi / 2));
    });
  }

  // S = Q K^T for keys [key0, key0 + kKN) of a swizzled [*, kD] LDS tile, Q fragments in registers.
  HIPATTN_DEVICE static void qk(SFrag& s, const QFrag& q, const uint16_t* lds_k, int key0) {
    qk_impl(s, lds_k, key0, [&](int mt, int kk, uint32_t(&a)[4]) {
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = q.r[mt][kk][i];
    });
  }

  // The QK^T loop: for each k step, the A fragments of every row block (from `load_a`), then the B
  // fragments of two key tiles at a time by ldmatrix, each feeding kMT MMAs.
  template <class LoadA>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void qk_impl(SFrag& s, const uint16_t* lds_k, int key0, LoadA&& load_a) {
    if constexpr (kFp8Kv) {
      qk_fp8(s, lds_k, key0, load_a);
    } else {
      using L = SwizzledTile<1, kD>;
      const int lane = lane_id();
      const int mi = lane / 8;
#pragma unroll
      for (int e = 0; e < kSElems; ++e) s.r[e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < kQK; ++kk) {
        uint32_t a[kMT][4];
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) load_a(mt, kk, a[mt]);
#pragma unroll
        for (int np = 0; np < kSN / 2; ++np) {
          uint32_t b[4];
          const int key = key0 + (np * 2 + mi / 2) * 8 + lane % 8;
          ldmatrix_x4(b, lds_k + L::chunk_index(key, kk * 2 + mi % 2));
          mma_x4<kSN>(s.r, np * 2, a, b);
        }
      }
    }
  }

  // QK^T over K codes (a swizzled tile of kD / 2 code pairs), per two 16-code chunks (a k32 step): one
  // ldmatrix.x4 gives the codes of two key tiles x the two chunks, b[j] = [key tile 2 np + j % 2][chunk
  // 2 kc + j / 2]. The fp8 matrix path (kQ8): key tile 2 np + h is the e4m3 B fragment {b[h], b[h + 2]}
  // against the e4m3 A fragment of the step from `load_a`. Otherwise each register is converted into
  // one 16-bit B fragment (codes 4t, 4t + 1 -> k slots 2t, 2t + 1; 4t + 2, 4t + 3 -> 2t + 8, 2t + 9),
  // which the A fragments from `load_a` (two k16 steps) follow (load_a_fp8_order).
  template <class LoadA>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void qk_fp8(SFrag& s, const uint16_t* lds_k, int key0, LoadA&& load_a) {
    using L = SwizzledTile<1, kD / 2>;
    const int lane = lane_id();
    const int mi = lane / 8;
#pragma unroll
    for (int e = 0; e < kSElems; ++e) s.r[e] = 0.f;
    // kQ8 at d = 256 two steps at a time: fully unrolled, the steps' early ldmatrix kept registers live
    // beside O's 128 (the full-variant prefill tile spilled 44 bytes; 16 so, as one at a time)
#pragma unroll (kQ8 && kD > 128 ? 2 : kD / 32)
    for (int kc = 0; kc < kD / 32; ++kc) {
      uint32_t a[kQ8 ? 1 : 2][kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        if constexpr (kQ8) {
          load_a(mt, kc, a[0][mt]);
        } else {
          load_a(mt, 2 * kc, a[0][mt]);
          load_a(mt, 2 * kc + 1, a[1][mt]);
        }
      }
#pragma unroll
      for (int np = 0; np < kSN / 2; ++np) {
        uint32_t b[4];
        ldmatrix_x4(b, lds_k + L::chunk_index(key0 + (np * 2 + mi % 2) * 8 + lane % 8, 2 * kc + mi / 2));
        if constexpr (kQ8) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const uint32_t bh[2] = {b[h], b[h + 2]};
#pragma unroll
            for (int mt = 0; mt < kMT; ++mt)
              mma_16832_e4m3(*reinterpret_cast<float(*)[4]>(&s.r[(mt * kSN + np * 2 + h) * 4]), a[0][mt], bh);
          }
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            uint32_t f[2];
            dequant_fp8x4<kCodes, kBf16>(b[j], f[0], f[1]);
#pragma unroll
            for (int mt = 0; mt < kMT; ++mt)
              mma(*reinterpret_cast<float(*)[4]>(&s.r[(mt * kSN + np * 2 + j % 2) * 4]), a[j / 2][mt], f);
          }
        }
      }
    }
  }

  // O += P V for keys [key0, key0 + kKN) of a swizzled [*, kDv] LDS tile; P given as floats in the
  // S layout (converted to 16-bit here, round to nearest even). p_at_most_one: no P element exceeds 1
  // (no per-key V scale is folded into P); with fp8 V that lets P and V go in f16 (pack_p).
  HIPATTN_DEVICE static void pv(OFrag& o, const SFrag& p, const uint16_t* lds_v, int key0, bool p_at_most_one = false) {
    if constexpr (kFp8Kv) {
      if (p_at_most_one) pv_impl<true>(o, p, lds_v, key0);
      else pv_impl<false>(o, p, lds_v, key0);
    } else {
      pv_impl<false>(o, p, lds_v, key0);
    }
  }
  template <bool kF16P>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void pv_impl(OFrag& o, const SFrag& p, const uint16_t* lds_v, int key0) {
    using L = SwizzledTile<1, kVRow>;
    const int lane = lane_id();
    const int mi = lane / 8;
#pragma unroll
    for (int kk = 0; kk < kKN / 16; ++kk) {
      uint32_t a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        const float* s0 = &p.r[(mt * kSN + 2 * kk) * 4];
        const float* s1 = &p.r[(mt * kSN + 2 * kk + 1) * 4];
        a[mt][0] = pack_p<kF16P>(s0[0], s0[1]);
        a[mt][1] = pack_p<kF16P>(s0[2], s0[3]);
        a[mt][2] = pack_p<kF16P>(s1[0], s1[1]);
        a[mt][3] = pack_p<kF16P>(s1[2], s1[3]);
      }
      if constexpr (kFp8Kv) {
        pv_fp8_step<kF16P>(o, a, lds_v, key0 + kk * 16);
      } else {
#pragma unroll
        for (int dp = 0; dp < kON / 2; ++dp) {
          uint32_t b[4];
          const int key = key0 + kk * 16 + (mi % 2) * 8 + lane % 8;
          ldmatrix_x4_trans(b, lds_v + L::chunk_index(key, dp * 2 + mi / 2));
          mma_x4<kON>(o.r, dp * 2, a, b);
        }
      }
    }
  }

  // One k16 step of O += P V over fp8 V codes (a swizzled tile of kDv / 2 code pairs), keys
  // [key, key + 16): per two 16-code chunks one ldmatrix.x4.trans ([keys +8 (j % 2)][chunk j / 2]);
  // a byte permute pairs the two keys of each dimension, and each chunk feeds two n8 tiles (its even
  // and its odd dimensions) whose accumulators are the O groups 2c and 2c + 1 in o_col's order.
  template <bool kF16P>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void pv_fp8_step(OFrag& o, const uint32_t (&a)[kMT][4], const uint16_t* lds_v,
                                                             int key) {
    using L = SwizzledTile<1, kDv / 2>;
    const int lane = lane_id();
    const int mi = lane / 8;
#pragma unroll
    for (int cp = 0; cp < kDv / 32; ++cp) {
      uint32_t b[4];
      ldmatrix_x4_trans(b, lds_v + L::chunk_index(key + (mi % 2) * 8 + lane % 8, cp * 2 + mi / 2));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int c = cp * 2 + h;  // the chunk: dimensions [16 c, 16 c + 16)
        uint32_t even[2], odd[2];  // B fragments of dimensions 16 c + 2g and 16 c + 2g + 1
        dequant_fp8x4<kCodes, kBf16 && !kF16P>(byte_perm(b[2 * h], 0u, 0x3120u), even[0], odd[0]);  // see pack_p
        dequant_fp8x4<kCodes, kBf16 && !kF16P>(byte_perm(b[2 * h + 1], 0u, 0x3120u), even[1], odd[1]);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          float* g = &o.r[(mt * kON + c * 2) * 4];  // groups 2c (columns 4t, 4t + 1), 2c + 1 (4t + 2, 4t + 3)
          constexpr PvAtom kAtom = kF16P ? PvAtom::f16 : PvAtom::q16;
          mma_to<kAtom>(g[0], g[4], g[2], g[6], a[mt], even);  // n = 2t, 2t + 1 -> dimensions 4t, 4t + 2
          mma_to<kAtom>(g[1], g[5], g[3], g[7], a[mt], odd);   // -> dimensions 4t + 1, 4t + 3
        }
      }
    }
  }
  // O += P V on the fp8 matrix path (kP8; the header): per 32 keys, P packed in e4m3 (x kP8Scale) in
  // the k order {2t, 2t + 1, 8 + 2t, 9 + 2t} (+16), and per 16-dimension chunk one ldmatrix.x4.trans
  // of the V codes (the four 8-key blocks), byte-permuted into the B fragments of the chunk's even
  // and odd dimensions. P must not exceed 1 (no per-key V scale folded in).
  template <bool kEnable = kP8>
  HIPATTN_DEVICE static void pv_p8(OFrag& o, const SFrag& p, const uint16_t* lds_v, int key0) {
    static_assert(kEnable, "pv_p8: the fp8 matrix path with warps of 32 keys or more");
    using L = SwizzledTile<1, kDv / 2>;
    const int lane = lane_id();
    const int mi = lane / 8;
#pragma unroll
    for (int kb = 0; kb < kKN / 32; ++kb) {
      uint32_t a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // keys +16 h: n8 tiles 4 kb + 2h and 4 kb + 2h + 1
          const float* s0 = &p.r[(mt * kSN + 4 * kb + 2 * h) * 4];
          const float* s1 = s0 + 4;
          a[mt][2 * h] = pack_p8(s0[0], s0[1], s1[0], s1[1]);      // row g
          a[mt][2 * h + 1] = pack_p8(s0[2], s0[3], s1[2], s1[3]);  // row g + 8
        }
#pragma unroll
      for (int c = 0; c < kDv / 16; ++c) {
        uint32_t r[4];  // r[j]: keys 8j + 2t, 8j + 2t + 1 of dimensions 16c + 2g, 16c + 2g + 1
        ldmatrix_x4_trans(r, lds_v + L::chunk_index(key0 + kb * 32 + mi * 8 + lane % 8, c));
        const uint32_t even[2] = {byte_perm(r[0], r[1], 0x6420u), byte_perm(r[2], r[3], 0x6420u)};
        const uint32_t odd[2] = {byte_perm(r[0], r[1], 0x7531u), byte_perm(r[2], r[3], 0x7531u)};
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          float* g = &o.r[(mt * kON + c * 2) * 4];  // as pv_fp8_step
          mma_to<PvAtom::e4m3>(g[0], g[4], g[2], g[6], a[mt], even);
          mma_to<PvAtom::e4m3>(g[1], g[5], g[3], g[7], a[mt], odd);
        }
      }
    }
  }
  // Four P values -> four e4m3 codes of P x kP8Scale (byte i = value i).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack_p8(float p0, float p1, float p2, float p3) {
    return pack_e4m3x2(p0 * kP8Scale, p1 * kP8Scale) | (pack_e4m3x2(p2 * kP8Scale, p3 * kP8Scale) << 16);
  }

  // The two n8 tiles n0, n0 + 1 of one ldmatrix.x4 (b[0..1], b[2..3]) for every row block of a
  // fragment with kN n8 tiles a row block.
  template <int kN>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma_x4(float* acc, int n0, const uint32_t (&a)[kMT][4], const uint32_t (&b)[4]) {
    const uint32_t b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      mma(*reinterpret_cast<float(*)[4]>(&acc[(mt * kN + n0) * 4]), a[mt], b0);
      mma(*reinterpret_cast<float(*)[4]>(&acc[(mt * kN + n0 + 1) * 4]), a[mt], b1);
    }
  }

  // The MMA into four accumulators held apart (rows g, g, g + 8, g + 8; n = 2t, 2t + 1, 2t, 2t + 1):
  // the q dtype's, f16's (P and fp8 V in f16: pack_p) or e4m3's (pv_p8).
  enum class PvAtom { q16, f16, e4m3 };
  template <PvAtom kAtom>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma_to(float& c0, float& c1, float& c2, float& c3, const uint32_t (&a)[4],
                                                        const uint32_t (&b)[2]) {
    float c[4] = {c0, c1, c2, c3};
    if constexpr (kAtom == PvAtom::e4m3) mma_16832_e4m3(c, a, b);
    else if constexpr (kAtom == PvAtom::f16) mma_16816_f16(c, a, b);
    else mma(c, a, b);
    c0 = c[0];
    c1 = c[1];
    c2 = c[2];
    c3 = c[3];
  }

  // P as the PV MMA's A operand: the q dtype, or f16 (kF16P, fp8 V only) for either q dtype. Every
  // e4m3 value is an f16, and P in [0, 1] keeps 11 significant bits in f16 against bf16's 8 (values
  // below 2^-25, under 2^-25 of the row's weight, go to zero): as exact as bf16 or more, and V's
  // codes take one conversion (e4m3 -> f16) instead of three (-> f16 -> f32 -> bf16). P that carries
  // per-key V scales may exceed f16's range and stays in the q dtype (pv's p_at_most_one).
  template <bool kF16P>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack_p(float lo, float hi) {
    if constexpr (kFp8Kv && kF16P) return pack_f16x2(lo, hi); else return pack(lo, hi);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack(float lo, float hi) {
    if constexpr (kBf16) return pack_bf16x2(lo, hi); else return pack_f16x2(lo, hi);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    if constexpr (kBf16) mma_16816_bf16(c, a, b); else mma_16816_f16(c, a, b);
  }
#endif
};

}  // namespace hipattn::sm90
