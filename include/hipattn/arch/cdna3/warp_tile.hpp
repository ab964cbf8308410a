// hipattn/arch/cdna3/warp_tile.hpp: the attention warp tile on gfx942 (16x16 MFMA), and the 16-row
// MFMA tile that gfx950 (cdna4/warp_tile.hpp) shares.
//
// One wave64 owns kMT * 16 query rows and, per KV tile, kKN keys. Both products run transposed so
// that the MFMA C layout of the first is the B layout of the second and every lane holds whole
// rows (one query row per 16-row block):
//   S^T[keys, rows] = K[keys, D] Q[rows, D]^T     A = K (16-byte LDS row reads), B = Q^T (Q rows)
//   O^T[D, rows]   += V[keys, D]^T P[rows, keys]^T  A = V^T (column reads of V), B = P^T (the S^T
//                                                 accumulators of this lane, packed to 16 bit)
// With the 16x16 C layout (atoms.hpp: row = 4 * (l / 16) + e, col = l % 16) lane l holds, of each
// 16-row block, query row l % 16 and, of each 16-key (16-column) block, 4 keys (columns). With
// key_perm(m), the key that MFMA row m of S^T holds (a permutation of 0..15 chosen by the ISA
// policy against LDS bank conflicts):
//   row slot r (r < kMT):  row 16 * r + l % 16
//   S element e:  slot e / (4 * kKN / 16),  key  16 * ((e / 4) % (kKN / 16)) + key_perm(4 * (l / 16) + e % 4)
//   O element e:  slot e / (4 * kD / 16),   col  16 * ((e / 4) % (kD / 16))  + 4 * (l / 16) + e % 4
// so O elements (2i, 2i + 1) are adjacent columns of one row (the epilogue's pair stores), and the
// lanes sharing a row are {l, l ^ 16, l ^ 32, l ^ 48} (row_max / row_sum reduce over them; lanes
// 0..15 hold one copy of each row: row_leader).
// The MFMA K index is a free permutation as long as A and B agree: QK^T feeds each MFMA from one
// 16-byte chunk per lane (chunk 4 * kc + l / 16 of a row: D columns 32 * kc + 8 * (l / 16) + 0..7);
// PV gives P^T's k = 4 g + j (g = l / 16) the key key_perm(4 g + j) that the S^T accumulators hold,
// and reads V^T accordingly.
// The fp8 matrix path (kQ8: Q and K tiles of fp8 codes, SwizzledTile<1, kD / 2> of code pairs, 16
// codes a chunk; V 16-bit, converted by the loader): QK^T by the 16x16x32 fp8 MFMA (8 codes a lane
// and operand, k = 8 * (l / 16) + e), in the format the target reads (Ops::mma_fp8). Per 64 head
// columns j a lane reads one 16-byte chunk, 4 * j + l / 16 (D columns 64 j + 16 (l / 16) + 0..15), of
// its K row and its Q row: codes 0..7 feed the MFMA of step 2 j, 8..15 that of step 2 j + 1; a last
// step of 32 columns (kD % 64 == 32) reads 8 bytes, D columns 64 j + 8 (l / 16) + 0..7. Where the
// target has a 128-deep fp8 MFMA (Ops::kFp8K128, gfx950's 16x16x128 f8f6f4), each 128 columns take
// one MFMA whose 32 codes a lane are its chunks of both 64-column halves (any k order serves that
// both operands share).
#pragma once
#include <cstdint>
#include <type_traits>

#include "hipattn/arch/cdna3/atoms.hpp"
#include "hipattn/tile/lds_layout.hpp"

namespace hipattn::cdna3 {

// The 16-row MFMA attention tile; `Ops` is the ISA's MFMA / V-read / lane-op policy.
// Q and K tiles are [*, kD] (d_qk), V tiles and O are [*, kDv] (d_v); kQ8: Q and K tiles of fp8 codes.
// kVRow: the row length of the LDS tile V is read from (kDv, or kD where V is the first kDv columns of
// the K tile: MLA's latent rows, kernels/mla_decode/config.hpp).
template <class Ops, bool kBf16, int kD, int kMT, int kKN, int kDv = kD, bool kQ8 = false, int kVRow = kDv>
struct Mfma16WarpTile {
  static_assert(kKN % 16 == 0 && kD % 32 == 0 && kDv % 16 == 0,
                "keys per wave must be a multiple of 16, d_qk of 32, d_v of 16");
  static_assert(kVRow == kDv || (kVRow == kD && kDv < kD && !kQ8), "V is its own tile, or the leading columns of K's");
  static constexpr int kRowSlots = kMT;   // rows held per lane
  static constexpr int kRows = 16 * kMT;  // rows per wave
  static constexpr int kSN = kKN / 16;    // 16-key blocks of S
  static constexpr int kON = kDv / 16;    // 16-column blocks of O
  static constexpr int kSElems = kMT * kSN * 4;
  static constexpr int kOElems = kMT * kON * 4;
  static constexpr int kQK = kD / 32;     // 32-column steps of QK^T (one 16-byte chunk per lane)
  // Heads beyond 256 (MLA: d_qk 576, d_v 512): a scheduling fence (sched_fence) every kFenceSteps
  // k steps of QK^T and every kFenceSteps 16-column blocks of P V, so that the compiler does not hoist
  // every LDS operand of the loop ahead of its MFMAs (gfx942's d 576 tile spilled 125 VGPRs
  // without them). Smaller heads are scheduled as before (0: no fence).
  static constexpr int kFenceSteps = (kD > 256 || kDv > 256) ? 4 : 0;
  HIPATTN_HOST_DEVICE static constexpr bool fence_after(int step) { return kFenceSteps > 0 && (step + 1) % kFenceSteps == 0; }
  // ... and their LDS addresses formed per 64-column group: a swizzled tile's element (row, 64 g + c)
  // is (row, c) + 64 g (the swizzle permutes chunks within groups of 8), so every group's reads take
  // the first group's addresses plus a constant (the ds_read offset). Formed per column, the
  // compiler hoisted each read's address out of the key loop: 500 address VGPRs held across it at d 576.
  static constexpr bool kGroupAddr = kFenceSteps > 0;
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static const uint16_t* group_base(const uint16_t* lds, int col) {
    return kGroupAddr ? lds + 64 * (col / 64) : lds;
  }
  HIPATTN_HOST_DEVICE static constexpr int group_col(int col) { return kGroupAddr ? col % 64 : col; }

#if defined(HIPATTN_BACKEND_HIP)
  struct QFrag16 { b16x8 r[kMT][kQK]; };
#else
  struct QFrag16 { uint32_t r[kMT][kQK][4]; };
#endif
  struct QFrag8 { uint64_t r[kMT][kQK]; };  // kQ8: 8 codes a 32-column step
  using QFrag = std::conditional_t<kQ8, QFrag8, QFrag16>;
  struct SFrag { float r[kSElems]; };
  struct OFrag { float r[kOElems]; };

  // Row (within the wave's rows) of row slot `slot` of lane `lane`.
  HIPATTN_HOST_DEVICE static constexpr int slot_row(int lane, int slot) { return slot * 16 + lane % 16; }
  // Row slot and column (within the wave's keys / head columns) of S (O) element e.
  HIPATTN_HOST_DEVICE static constexpr int s_slot(int e) { return e / (kSN * 4); }
  HIPATTN_HOST_DEVICE static constexpr int s_col(int lane, int e) { return ((e / 4) % kSN) * 16 + Ops::key_perm(4 * (lane / 16) + e % 4); }
  HIPATTN_HOST_DEVICE static constexpr int o_slot(int e) { return e / (kON * 4); }
  HIPATTN_HOST_DEVICE static constexpr int o_col(int lane, int e) { return ((e / 4) % kON) * 16 + 4 * (lane / 16) + e % 4; }
  // True for exactly one of the lanes that hold each row (for per-row stores such as the LSE).
  HIPATTN_HOST_DEVICE static constexpr bool row_leader(int lane) { return lane < 16; }
  // The row (within a 16-row block) and 16-byte chunk a lane reads at 32-column step kc of QK^T:
  // its 8 elements are the MFMA k values 8 * (l / 16) + i. A = K: key row key_perm(l % 16) (MFMA row
  // m holds key key_perm(m), a bank-conflict-avoiding order of the ISA policy); B = Q^T: row l % 16.
  HIPATTN_HOST_DEVICE static constexpr LaneElem k_chunk(int lane, int kc) { return {Ops::key_perm(lane % 16), kc * 4 + lane / 16}; }
  HIPATTN_HOST_DEVICE static constexpr LaneElem q_chunk(int lane, int kc) { return {lane % 16, kc * 4 + lane / 16}; }

#if defined(HIPATTN_BACKEND_HIP)
  using L = SwizzledTile<1, kD>;     // Q and K
  using LV = SwizzledTile<1, kVRow>;  // V (rows of kVRow: V's own tile, or K's)

  // Reductions over the lanes that share a row.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float row_max(float v) { return Ops::row_max(v); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float row_sum(float v) { return Ops::row_sum(v); }

  // Q rows [row0, row0 + kRows) of a swizzled [*, kD] LDS tile into B (Q^T) fragments.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void load_q(QFrag& q, const uint16_t* lds, int row0) {
    const int lane = lane_id();
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      if constexpr (kQ8) {
#pragma unroll
        for (int kc = 0; kc < kQK; kc += 2) {
          const CodeStep c = read_codes(lds, row0 + mt * 16 + lane % 16, lane, kc);
          q.r[mt][kc] = c.lo;
          if (kc + 1 < kQK) q.r[mt][kc + 1] = c.hi;
        }
      } else {
#pragma unroll
        for (int kc = 0; kc < kQK; ++kc) q.r[mt][kc] = read_chunk(lds, row0 + mt * 16, q_chunk(lane, kc));
      }
    }
  }

  // S = Q K^T for keys [key0, key0 + kKN) of a swizzled [*, kD] LDS tile.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void qk(SFrag& s, const QFrag& q, const uint16_t* lds_k, int key0) {
    if constexpr (kQ8)
      qk_codes(s, lds_k, key0, [&](int mt, int kc) { return CodeStep{q.r[mt][kc], kc + 1 < kQK ? q.r[mt][kc + 1] : 0}; });
    else
      qk16(s, lds_k, key0, [&](int mt, int kc) { return q.r[mt][kc]; });
  }

  // S = Q K^T with Q read from LDS at each k step (for large heads, where holding Q in registers
  // would spill): rows [row0, row0 + kRows) of the swizzled Q tile.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void qk_lds(SFrag& s, const uint16_t* lds_q, int row0, const uint16_t* lds_k,
                                                        int key0) {
    const int lane = lane_id();
    if constexpr (kQ8)  // Q's codes read at each 64-column step, like K's
      qk_codes(s, lds_k, key0, [&](int mt, int kc) { return read_codes(lds_q, row0 + mt * 16 + lane % 16, lane, kc); });
    else
      qk16(s, lds_k, key0, [&](int mt, int kc) {
        return read_chunk(group_base(lds_q, 32 * kc), row0 + mt * 16, q_chunk(lane, group_col(32 * kc) / 32));
      });
  }

  // O += P V for keys [key0, key0 + kKN) of a swizzled [*, kDv] LDS tile; P given as floats in the
  // S layout (converted to 16-bit here, round to nearest even). p_at_most_one (the interface's hint
  // that P <= 1, for tiles that read fp8 V) does not apply: CDNA tiles read 16-bit V.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void pv(OFrag& o, const SFrag& p, const uint16_t* lds_v, int key0,
                                                    bool /*p_at_most_one*/ = false) {
    const int lane = lane_id();
    f32x4 acc[kMT][kON];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int dn = 0; dn < kON; ++dn) {
        const float* src = &o.r[(mt * kON + dn) * 4];
        acc[mt][dn] = f32x4{src[0], src[1], src[2], src[3]};
      }
    if constexpr (Ops::kPvK32 && kKN % 32 == 0) {
      // k = 8 * (l / 16) + i  <->  key 32 * kk + 16 * (i / 4) + 4 * (l / 16) + i % 4
#pragma unroll
      for (int kk = 0; kk < kKN / 32; ++kk) {
        b16x8 bp[kMT];
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          const float* s0 = &p.r[(mt * kSN + 2 * kk) * 4];
          const float* s1 = &p.r[(mt * kSN + 2 * kk + 1) * 4];
          const u32x4 w = {pack(s0[0], s0[1]), pack(s0[2], s0[3]), pack(s1[0], s1[1]), pack(s1[2], s1[3])};
          bp[mt] = __builtin_bit_cast(b16x8, w);
        }
#pragma unroll
        for (int dn = 0; dn < kON; ++dn) {
          const b16x8 a = Ops::template v_cols8<LV>(group_base(lds_v, dn * 16), key0 + kk * 32, group_col(dn * 16), lane);
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt) Ops::template mma_k32<kBf16>(acc[mt][dn], a, bp[mt]);
          if constexpr (kFenceSteps > 0)
            if (fence_after(dn)) sched_fence();
        }
      }
    } else {
      // k = 4 * (l / 16) + i  <->  key 16 * kb + 4 * (l / 16) + i
#pragma unroll
      for (int kb = 0; kb < kSN; ++kb) {
        b16x4 bp[kMT];
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          const float* s0 = &p.r[(mt * kSN + kb) * 4];
          const u32x2 w = {pack(s0[0], s0[1]), pack(s0[2], s0[3])};
          bp[mt] = __builtin_bit_cast(b16x4, w);
        }
#pragma unroll
        for (int dn = 0; dn < kON; ++dn) {
          const b16x4 a = Ops::template v_cols4<LV>(group_base(lds_v, dn * 16), key0 + kb * 16, group_col(dn * 16), lane);
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt) Ops::template mma_k16<kBf16>(acc[mt][dn], a, bp[mt]);
          if constexpr (kFenceSteps > 0)
            if (fence_after(dn)) sched_fence();
        }
      }
    }
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int dn = 0; dn < kON; ++dn)
#pragma unroll
        for (int i = 0; i < 4; ++i) o.r[(mt * kON + dn) * 4 + i] = acc[mt][dn][i];
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack(float lo, float hi) { return Ops::template pack2<kBf16>(lo, hi); }

 private:
  typedef uint32_t u32x2 __attribute__((ext_vector_type(2)));
  typedef uint32_t u32x4 __attribute__((ext_vector_type(4)));
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static b16x8 read_chunk(const uint16_t* lds, int row0, LaneElem rc) {
    return lds_read_b128(lds + L::chunk_index(row0 + rc.row, rc.col));
  }

  // S = Q K^T on 16-bit tiles; qb(mt, kc) gives the Q (B) chunk of row slot mt at 32-column step kc.
  template <class QB>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void qk16(SFrag& s, const uint16_t* lds_k, int key0, QB&& qb) {
    const int lane = lane_id();
    f32x4 acc[kMT][kSN];
    zero_s(acc);
#pragma unroll
    for (int kc = 0; kc < kQK; ++kc) {
      b16x8 b[kMT];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) b[mt] = qb(mt, kc);
#pragma unroll
      for (int nb = 0; nb < kSN; ++nb) {
        const b16x8 a = read_chunk(group_base(lds_k, 32 * kc), key0 + nb * 16, k_chunk(lane, group_col(32 * kc) / 32));
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) Ops::template mma_k32<kBf16>(acc[mt][nb], a, b[mt]);
      }
      if constexpr (kFenceSteps > 0)
        if (fence_after(kc)) sched_fence();
    }
    store_s(s, acc);
  }

  // ---- the fp8 matrix path (kQ8) ----
  using L8 = SwizzledTile<1, kD / 2>;  // Q and K: code pairs, 16 codes a chunk
  struct CodeStep { uint64_t lo, hi; };  // the codes of 32-column steps kc and kc + 1
  struct Codes32 { uint64_t w[4]; };     // 32 codes: a 128-deep fp8 MFMA operand
  // The codes lane supplies at steps kc (even) and kc + 1 from `row` of a tile of code pairs: chunk
  // 2 * kc + l / 16 (16 codes), or, for a last step of 32 columns, 8 codes at pair 16 * kc + 4 * (l / 16).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static CodeStep read_codes(const uint16_t* lds, int row, int lane, int kc) {
    const int g = lane / 16;
    if (kc + 1 < kQK) {
      const u32x4 w = __builtin_bit_cast(u32x4, lds_read_b128(lds + L8::chunk_index(row, 2 * kc + g)));
      return {uint64_t(w[0]) | uint64_t(w[1]) << 32, uint64_t(w[2]) | uint64_t(w[3]) << 32};
    }
    const int pair = 16 * kc + 4 * g;
    return {lds_read_b64(lds + L8::chunk_index(row, pair / 8) + pair % 8), 0};
  }
  // S = Q K^T on codes; qb(mt, kc) gives the Q (B) codes of row slot mt at steps kc (even) and kc + 1.
  template <class QB>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void qk_codes(SFrag& s, const uint16_t* lds_k, int key0, QB&& qb) {
    const int lane = lane_id();
    f32x4 acc[kMT][kSN];
    zero_s(acc);
    // 128-column steps where the target has a 128-deep fp8 MFMA (Ops::kFp8K128: gfx950's
    // v_mfma_f32_16x16x128_f8f6f4, twice the fp8 rate of its 16x16x32): a lane's 32 codes are its
    // chunks of the step's two 64-column halves, in both operands alike
    constexpr int kQK128 = Ops::kFp8K128 ? kQK / 4 * 4 : 0;
    if constexpr (kQK128 > 0) {
#pragma unroll
      for (int kc = 0; kc < kQK128; kc += 4) {
        CodeStep b0[kMT], b1[kMT];
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) b0[mt] = qb(mt, kc), b1[mt] = qb(mt, kc + 2);
#pragma unroll
        for (int nb = 0; nb < kSN; ++nb) {
          const int row = key0 + nb * 16 + Ops::key_perm(lane % 16);
          const CodeStep a0 = read_codes(lds_k, row, lane, kc), a1 = read_codes(lds_k, row, lane, kc + 2);
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt)
            Ops::mma_fp8_k128(acc[mt][nb], Codes32{a0.lo, a0.hi, a1.lo, a1.hi},
                              Codes32{b0[mt].lo, b0[mt].hi, b1[mt].lo, b1[mt].hi});
        }
      }
    }
#pragma unroll
    for (int kc = kQK128; kc < kQK; kc += 2) {
      CodeStep b[kMT];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) b[mt] = qb(mt, kc);
#pragma unroll
      for (int nb = 0; nb < kSN; ++nb) {
        const CodeStep a = read_codes(lds_k, key0 + nb * 16 + Ops::key_perm(lane % 16), lane, kc);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          Ops::mma_fp8(acc[mt][nb], a.lo, b[mt].lo);
          if (kc + 1 < kQK) Ops::mma_fp8(acc[mt][nb], a.hi, b[mt].hi);
        }
      }
    }
    store_s(s, acc);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void zero_s(f32x4 (&acc)[kMT][kSN]) {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nb = 0; nb < kSN; ++nb) acc[mt][nb] = f32x4{0.f, 0.f, 0.f, 0.f};
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store_s(SFrag& s, const f32x4 (&acc)[kMT][kSN]) {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nb = 0; nb < kSN; ++nb)
#pragma unroll
        for (int i = 0; i < 4; ++i) s.r[(mt * kSN + nb) * 4 + i] = acc[mt][nb][i];
  }
#endif
};

// The gfx942 policy: QK^T k-steps of 32 as two 16x16x16 MFMAs, V^T by 16-bit column gathers.
struct Gfx942TileOps {
  static constexpr bool kPvK32 = false;  // PV in 16-key steps (16x16x16)
  static constexpr bool kFp8K128 = false;  // the fp8 matrix path: 16x16x32 fp8 only
  // The key held by MFMA row m of S^T (and k index m of P^T) within a 16-key block. Rows 0..7 and
  // 8..15 stay permutations of 8 consecutive keys, so the 8 lanes of a 16-byte K-row read pass hit
  // 8 different chunk slots of the swizzled tile; the 4 lane groups of a V column gather (keys
  // key_perm(4 g + j)) hit 4 different 32-byte slot pairs. m ^ 2 for m >= 8.
  HIPATTN_HOST_DEVICE static constexpr int key_perm(int m) { return m ^ ((m & 8) >> 2); }
  // (key, column) within a 16 x 16 block of V of element j of lane's V^T operand: A[m][k] with
  // m = l % 16 (column), k = 4 * (l / 16) + j, the key of P^T's k.
  HIPATTN_HOST_DEVICE static constexpr LaneElem v_elem(int lane, int j) { return {key_perm(4 * (lane / 16) + j), lane % 16}; }
#if defined(HIPATTN_BACKEND_HIP)
  // 32-deep step: elements 0..3 of each operand feed the first MFMA, 4..7 the second.
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma_k32(f32x4& c, b16x8 a, b16x8 b) {
    mfma_16x16x16<kBf16>(c, a.lo, b.lo);
    mfma_16x16x16<kBf16>(c, a.hi, b.hi);
  }
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma_k16(f32x4& c, b16x4 a, b16x4 b) { mfma_16x16x16<kBf16>(c, a, b); }
  // The fp8 matrix path's 32-deep step: 8 e4m3fnuz codes a lane and operand (what gfx942 reads; a
  // template so that only a gfx942 pass instantiates the atom).
  template <class Codes = E4m3fnuzCodes<8>>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void mma_fp8(f32x4& c, uint64_t a, uint64_t b) {
    mfma_16x16x32_fp8(c, Codes::from_bits(a), Codes::from_bits(b));
  }
  // A operand of O^T: lane l gets V[row0 + 4 * (l / 16) + j][col0 + l % 16], j = 0..3.
  template <class L>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static b16x4 v_cols4(const uint16_t* v, int row0, int col0, int lane) {
    const LaneElem e0 = v_elem(lane, 0), e1 = v_elem(lane, 1), e2 = v_elem(lane, 2), e3 = v_elem(lane, 3);
    return lds_gather4_b16(v + L::index(row0 + e0.row, col0 + e0.col), v + L::index(row0 + e1.row, col0 + e1.col),
                           v + L::index(row0 + e2.row, col0 + e2.col), v + L::index(row0 + e3.row, col0 + e3.col));
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float row_max(float v) { return reduce_max_xor48(v); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float row_sum(float v) { return reduce_sum_xor48(v); }
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack2(float lo, float hi) {
    if constexpr (kBf16) return pack_bf16x2(lo, hi); else return pack_f16x2(lo, hi);
  }
#endif
};

// The gfx942 attention warp tile (interface of sm90::WarpTile; layout in the header comment).
template <bool kBf16, int kD, int kMT, int kKN, int kDv = kD, bool kQ8 = false, int kVRow = kDv>
struct WarpTile : Mfma16WarpTile<Gfx942TileOps, kBf16, kD, kMT, kKN, kDv, kQ8, kVRow> {};

}  // namespace hipattn::cdna3
