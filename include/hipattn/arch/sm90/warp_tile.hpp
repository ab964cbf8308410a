// hipattn/arch/sm90/warp_tile.hpp: the attention warp tile on sm_90 (mma.sync m16n8k16).
//
// One warp owns kMT * 16 query rows and, per KV tile, kKN keys. It computes
//   S[rows, keys] = Q[rows, Dqk] K[keys, Dqk]^T   (A = Q from LDS by ldmatrix, B = K by ldmatrix)
//   O[rows, Dv]  += P[rows, keys] V[keys, Dv]     (A = P from the S accumulators, B = V by ldmatrix.trans)
// Q and K tiles are [*, kD] (kD = d_qk), V tiles [*, kDv] (d_v, e.g. 512 of MLA's 576, 128 of 192).
// Each lane holds 2 rows per 16-row block (the C layout of atoms.hpp): "row slots". The S and O
// fragments are flat float arrays; s_slot / s_col (o_slot / o_col) map an element to its row slot and
// its column, so tile-level code (softmax, masks, variants, epilogues) is written once for every ISA.
#pragma once
#include <cstdint>

#include "hipattn/arch/sm90/atoms.hpp"
#include "hipattn/tile/lds_layout.hpp"

namespace hipattn::sm90 {

template <bool kBf16, int kD, int kMT, int kKN, int kDv = kD>
struct WarpTile {
  static_assert(kKN % 16 == 0 && kD % 16 == 0 && kDv % 16 == 0, "keys per warp and head sizes must be multiples of 16");
  static constexpr int kRowSlots = 2 * kMT;   // rows held per lane
  static constexpr int kRows = 16 * kMT;      // rows per warp
  static constexpr int kSN = kKN / 8;         // n8 tiles of S
  static constexpr int kON = kDv / 8;         // n8 tiles of O
  static constexpr int kSElems = kMT * kSN * 4;
  static constexpr int kOElems = kMT * kON * 4;
  static constexpr int kQK = kD / 16;         // k16 steps of QK^T

  struct QFrag { uint32_t r[kMT][kQK][4]; };
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
  HIPATTN_HOST_DEVICE static constexpr int o_col(int lane, int e) { return ((e / 4) % kON) * 8 + 2 * (lane % 4) + (e % 2); }

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
      for (int kk = 0; kk < kQK; ++kk) {
        const int row = row0 + mt * 16 + (mi % 2) * 8 + lane % 8;
        const int chunk = kk * 2 + mi / 2;
        ldmatrix_x4(q.r[mt][kk], lds + L::chunk_index(row, chunk));
      }
  }

  // S = Q K^T with Q read from LDS at each k step (for large heads, where holding Q in registers
  // would spill): rows [row0, row0 + kRows) of the swizzled Q tile.
  HIPATTN_DEVICE static void qk_lds(SFrag& s, const uint16_t* lds_q, int row0, const uint16_t* lds_k, int key0) {
    using L = SwizzledTile<1, kD>;
    const int lane = lane_id();
    const int mi = lane / 8;
    qk_impl(s, lds_k, key0, [&](int mt, int kk, uint32_t(&a)[4]) {
      ldmatrix_x4(a, lds_q + L::chunk_index(row0 + mt * 16 + (mi % 2) * 8 + lane % 8, kk * 2 + mi / 2));
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
        const uint32_t b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma(*reinterpret_cast<float(*)[4]>(&s.r[(mt * kSN + np * 2) * 4]), a[mt], b0);
          mma(*reinterpret_cast<float(*)[4]>(&s.r[(mt * kSN + np * 2 + 1) * 4]), a[mt], b1);
        }
      }
    }
  }

  // O += P V for keys [key0, key0 + kKN) of a swizzled [*, kDv] LDS tile; P given as floats in the
  // S layout (converted to 16-bit here, round to nearest even).
  HIPATTN_DEVICE static void pv(OFrag& o, const SFrag& p, const uint16_t* lds_v, int key0) {
    using L = SwizzledTile<1, kDv>;
    const int lane = lane_id();
    const int mi = lane / 8;
#pragma unroll
    for (int kk = 0; kk < kKN / 16; ++kk) {
      uint32_t a[kMT][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        const float* s0 = &p.r[(mt * kSN + 2 * kk) * 4];
        const float* s1 = &p.r[(mt * kSN + 2 * kk + 1) * 4];
        a[mt][0] = pack(s0[0], s0[1]);
        a[mt][1] = pack(s0[2], s0[3]);
        a[mt][2] = pack(s1[0], s1[1]);
        a[mt][3] = pack(s1[2], s1[3]);
      }
#pragma unroll
      for (int dp = 0; dp < kON / 2; ++dp) {
        uint32_t b[4];
        const int key = key0 + kk * 16 + (mi % 2) * 8 + lane % 8;
        ldmatrix_x4_trans(b, lds_v + L::chunk_index(key, dp * 2 + mi / 2));
        const uint32_t b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma(*reinterpret_cast<float(*)[4]>(&o.r[(mt * kON + dp * 2) * 4]), a[mt], b0);
          mma(*reinterpret_cast<float(*)[4]>(&o.r[(mt * kON + dp * 2 + 1) * 4]), a[mt], b1);
        }
      }
    }
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
