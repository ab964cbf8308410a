// hipattn/arch/sm90/warpgroup_tile.hpp: the consumer warpgroup's tile of the sm_90 warp-specialised
// mainloop (ALGORITHM.md section 10): 64 query rows x kBN keys per KV tile, S = Q K^T and O += P V as
// wgmma from shared memory, P from registers.
//
// Layout: a wgmma accumulator m64nN gives warp w of the warpgroup rows 16 w .. 16 w + 15 in exactly the
// mma.sync m16n8 C order, tile after tile of 8 columns (wgmma.hpp, WgmmaAccLayout). That is the S / O
// order of a one-row-band warp tile with kBN keys and kDv output columns, WarpTile<kBf16, kDqk, 1,
// kBN, kDv> (warp_tile.hpp), so the warpgroup tile inherits its fragments and maps (s_slot, s_col,
// o_slot, o_col, row_max, row_sum) and the common mainloop step (kernels/common/softmax_step.hpp:
// logits, RowSoftmax) runs on it unchanged; the static_asserts below check the equality per element.
//
// Shared-memory operands (all with the 128-byte swizzle, one TMA box of 64 columns per column block):
//   Q  KMajorTile<b128, kBM, 2 kDqk>: the warpgroup's rows start at row 64 c (c = consumer index);
//   K  KMajorTile<b128, kBN, 2 kDqk>: the B operand of S (N = keys, K-major);
//   V  MnMajorTile<kBN, kDv>: [keys, d] as loaded, the N-major B operand of O (imm-trans-b = 1).
// P reaches the PV wgmma in registers: the accumulator registers 8 s .. 8 s + 7 of S are the A
// fragment (WgmmaA16Layout) of k-step s (keys 16 s .. 16 s + 15), packed in pairs.
#pragma once
#include <cstdint>

#include "hipattn/arch/sm90/warp_tile.hpp"
#include "hipattn/arch/sm90/wgmma.hpp"

namespace hipattn::sm90 {

template <bool kBf16, int kDqk, int kBN, int kDv, int kBM>
struct WarpgroupTile : WarpTile<kBf16, kDqk, 1, kBN, kDv> {
  using Base = WarpTile<kBf16, kDqk, 1, kBN, kDv>;
  static_assert(kDqk % 64 == 0 && kDv % 64 == 0, "head sizes in whole 128-byte column blocks");
  static_assert(kBN % 16 == 0 && kBN <= 256 && kDv <= 256, "wgmma N in [16, 256], k16 steps of keys");
  static_assert(kBM % 64 == 0, "64 rows per consumer warpgroup");
  static constexpr int kQKSteps = kDqk / 16, kPVSteps = kBN / 16;

  using QTile = KMajorTile<SmemSwizzle::b128, kBM, 2 * kDqk>;
  using KTile = KMajorTile<SmemSwizzle::b128, kBN, 2 * kDqk>;
  using VTile = MnMajorTile<kBN, kDv>;
  // P in shared memory (pv_ss): 64 rows x kBN keys, 128-byte swizzle (64-byte for 32 keys)
  using PTile = KMajorTile<(2 * kBN) % 128 == 0 ? SmemSwizzle::b128 : SmemSwizzle::b64, 64, 2 * kBN>;
  using SAtom = WgmmaF16<kBN, kBf16>;
  using OAtom = WgmmaF16<kDv, kBf16>;
  using PFrag = uint32_t[kPVSteps][4];

  // The per-element equality of the wgmma accumulator and the warp tile's fragment maps.
  static constexpr bool layouts_match() {
    for (int t = 0; t < 128; ++t) {
      for (int e = 0; e < kBN / 2; ++e) {
        const LaneElem c = WgmmaAccLayout<kBN>::c(t, e);
        if (c.row != 16 * (t / 32) + Base::slot_row(t % 32, Base::s_slot(e)) || c.col != Base::s_col(t % 32, e)) return false;
      }
      for (int e = 0; e < kDv / 2; ++e) {
        const LaneElem c = WgmmaAccLayout<kDv>::c(t, e);
        if (c.row != 16 * (t / 32) + Base::slot_row(t % 32, Base::o_slot(e)) || c.col != Base::o_col(t % 32, e)) return false;
      }
      for (int s = 0; s < kPVSteps; ++s)
        for (int e = 0; e < 8; ++e) {  // A element e of k-step s is S accumulator 8 s + e
          const LaneElem a = WgmmaA16Layout::a(t, e);
          const LaneElem c = WgmmaAccLayout<kBN>::c(t, 8 * s + e);
          if (a.row != c.row || a.col + 16 * s != c.col) return false;
        }
    }
    return true;
  }
  static_assert(layouts_match(), "the wgmma accumulator is the one-band warp tile's S / O layout");

#if defined(HIPATTN_BACKEND_CUDA)
  // S = Q K^T over the whole head: consumer `c`'s 64 rows of the Q tile at q_addr, the K stage at k_addr
  // (shared-window addresses). Issued (fence, kQKSteps wgmma, commit); read S after a wait.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void qk(typename Base::SFrag& s, uint32_t q_addr, int c, uint32_t k_addr) {
    wgmma_fence_operand(s.r);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kQKSteps; ++k)
      SAtom::ss(s.r, QTile::desc_at(q_addr + uint32_t(64 * c * 128), 32 * k), KTile::desc_at(k_addr, 32 * k), k > 0 ? 1u : 0u);
    wgmma_commit_group();
    wgmma_fence_operand(s.r);
  }
  // P (S after the softmax step) as the A fragments of the PV k-steps.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void p_to_a(PFrag& p, const typename Base::SFrag& s) {
#pragma unroll
    for (int k = 0; k < kPVSteps; ++k)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if constexpr (kBf16) p[k][j] = pack_bf16x2(s.r[8 * k + 2 * j], s.r[8 * k + 2 * j + 1]);
        else p[k][j] = pack_f16x2(s.r[8 * k + 2 * j], s.r[8 * k + 2 * j + 1]);
      }
  }
  // O (+)= P V with the V stage at v_addr; accumulate = false starts O (its old registers are not read).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void pv(typename Base::OFrag& o, const PFrag& p, uint32_t v_addr, bool accumulate) {
    wgmma_fence_operand(o.r);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kPVSteps; ++k) OAtom::rs_mn(o.r, p[k], VTile::desc_at(v_addr, k), (accumulate || k > 0) ? 1u : 0u);
    wgmma_commit_group();
    wgmma_fence_operand(o.r);
  }
  // O (+)= P V with P from shared memory (PTile: 64 rows x kBN keys, K-major, swizzled, as
  // store_p writes it): the PV product of a warpgroup that did not compute P itself (MLA's consumers
  // split O's columns and take turns computing S).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void pv_ss(typename Base::OFrag& o, uint32_t p_addr, uint32_t v_addr,
                                                       bool accumulate) {
    wgmma_fence_operand(o.r);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kPVSteps; ++k)
      OAtom::ss_mn(o.r, PTile::desc_at(p_addr, 32 * k), VTile::desc_at(v_addr, k), (accumulate || k > 0) ? 1u : 0u);
    wgmma_commit_group();
    wgmma_fence_operand(o.r);
  }
  // P (this thread's S accumulators, 16-bit) into the PTile at p (generic pointer to shared memory):
  // register pair (2 j, 2 j + 1) is row / column (c.row, c.col), (c.row, c.col + 1) of WgmmaAccLayout.
  // The caller fences (fence_proxy_async_shared) and synchronises before a wgmma reads it.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store_p(char* p, const typename Base::SFrag& s, int t) {
#pragma unroll
    for (int e = 0; e < kBN / 2; e += 2) {
      const LaneElem c = WgmmaAccLayout<kBN>::c(t, e);
      const uint32_t v = kBf16 ? pack_bf16x2(s.r[e], s.r[e + 1]) : pack_f16x2(s.r[e], s.r[e + 1]);
      *reinterpret_cast<uint32_t*>(p + PTile::offset(c.row, 2 * c.col)) = v;
    }
  }
#endif
};

}  // namespace hipattn::sm90
