// hipattn/kernels/cdna/pingpong_mainloop.hpp: the attention skeleton's mainloop in the CDNA ping-pong
// schedule (the configuration: kernels/cdna/pingpong_config.hpp; ALGORITHM.md section 13).
//
// A work item's n KV tiles are computed by two groups of waves (group 0: waves [0, G), group 1:
// [G, 2G)). Each wave owns the warp tile's rows (16, or 32 with the 32-row tile: PingPongConfig::
// WarpTileOf) and does, per tile j,
//   M(j)  matrix products: O *= f(j - 1), O += P(j - 1) V(j - 1) (P packed to 16-bit as it enters),
//         then S = Q K(j)^T (Q in registers, or read from LDS: PingPongConfig::kQInRegs)
//   X(j)  the logits, the online softmax (S becomes P(j); its factor f(j) for O waits for M(j + 1))
//         and its share of the loads
// Workgroup barriers (Arch::phase_barrier: the compiler moves nothing across them) cut time into
// intervals 0, 1, 2, ...; group 0 runs M(j) in interval 2j and X(j) in 2j + 1, group 1 one interval
// later (it starts with an interval of loads only). So in every interval one group of each SIMD's pair
// of waves issues matrix products while the other issues the softmax's vector and transcendental
// instructions, and the matrix unit stays busy with the other group's softmax behind it. The wave in
// its matrix phase runs at raised issue priority (s_setprio 1).
// Loads (LdsDmaPingPongLoader): interval 2j issues V(j) and K(j + 1) (each wave its share; group 0 at
// the start of its M(j), group 1 at the end of its X(j - 1)); every wave waits for its own DMA before
// barrier 2j + 2 (group 0 after X(j), group 1 after M(j)), so barrier 2j + 2 makes both tiles visible:
// K(j + 1) is first read in interval 2j + 2 and V(j) too. A K stage is read in intervals 2j, 2j + 1
// and a V stage in 2j + 2, 2j + 3, so two stages of each suffice.
// Both groups pass 2n + 1 barriers: group 0 ends with M(n) (P(n - 1) V(n - 1)) and one barrier, group
// 1 with M(n) after its loads-only interval. Group 0's waves are [0, G) and group 1's [G, 2G); the
// SIMDs take a workgroup's waves in turn, so with G a multiple of 4 (G = 4: eight waves) each SIMD
// holds waves of both groups.
#pragma once
#include <concepts>
#include <cstdint>

#include "hipattn/kernels/common/concepts.hpp"
#include "hipattn/kernels/common/score_scale.hpp"
#include "hipattn/kernels/common/softmax_step.hpp"
#include "hipattn/tile/tile_range.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/arch/arch.hpp"

namespace hipattn {

// One wave's part of the schedule: its tile state and the phases (a struct rather than lambdas, so
// that every phase is inlined into one loop).
template <class Cfg, class WT, class Arch, class Args>
struct PingPongWave {
  using Row = typename Cfg::Variant::Row;
  const Args& a;
  typename Cfg::Loader& loader;
  const KvTileRange& range;
  const int32_t t_begin;
  const bool lag;  // group 1 (wave-uniform)
  const int lane;
  const RowInfo* rows;
  const Row* vrows;
  LogitsTile& lt;
  RowSoftmax<WT, Arch>& softmax;
  typename WT::OFrag& of;
  const int row0;           // the wave's first row of the Q tile
  typename WT::QFrag qf;    // Q (Cfg::kQInRegs)
  typename WT::SFrag s;  // S of tile j from M(j), P(j) from X(j) until M(j + 1) packs it
  float f[WT::kRowSlots];  // X(j)'s factors for O, applied in M(j + 1) ahead of P(j) V(j)

  // M(j): the first tile has no P V, the last phase (j = n) no QK^T (compile-time: no branch in the
  // phase). kParity: j % 2 where it is known at compile time (the loop's two unrolled steps: every
  // stage address is then a constant), else -1.
  template <bool kPv, bool kQk, int kParity = -1>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void matrix(int j) {
    constexpr int kPrev = kParity >= 0 ? 1 - kParity : -1;  // (j - 1) % 2
    Arch::template issue_priority<1>();
    if constexpr (kPv) {
      softmax.rescale(of, f);  // O x f(j - 1): O holds P(j - 2) V(j - 2) and before
      WT::pv(of, s, loader.template v_tile<kPrev>(j - 1), 0, true);  // P <= 1
    }
    if constexpr (kQk) {
      if constexpr (Cfg::kQInRegs) WT::qk(s, qf, loader.template k_tile<kParity>(j), 0);
      else WT::qk_lds(s, loader.q_tile(), row0, loader.template k_tile<kParity>(j), 0);
    }
    Arch::template issue_priority<0>();
  }
  // X(j): the logits (the variant, the mask on edge tiles) and the online softmax (S -> P, O rescaled)
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void soft(int j) {
    const int32_t t = t_begin + j;
    lt.key0 = t * Cfg::kBN;
    lt.edge = !range.is_interior(t);
    scores_to_probs<WT, Arch>(s, a.variant, rows, vrows, lt, lane, softmax, f);
  }
  // Tile j (j % 2 == kParity): M(j), then X(j), each ended by a barrier; the loads of interval 2j by
  // each group.
  template <bool kFirst, int kParity>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void step(int j) {
    if (!lag) loader.template issue<kParity>(j);
    matrix<!kFirst, true, kParity>(j);
    if (lag) loader.wait();
    Arch::phase_barrier();
    soft(j);
    if (lag) loader.template issue<1 - kParity>(j + 1);
    else loader.wait();
    Arch::phase_barrier();
  }
};

// The loader the schedule drives (LdsDmaPingPongLoader, kernels/cdna/lds_dma_pingpong_loader.hpp):
//   prologue(t_begin)   block ids, K(0) in flight (visible at barrier 0)
//   issue(j)            interval 2j's DMA: V(j), K(j + 1) (issue<P>(j): j % 2 == P known at compile time)
//   wait()              this wave's DMA has landed
//   k_tile(j) / v_tile(j)   tile j's K / V stage (k_tile<P>(j), v_tile<P>(j): j % 2 == P)
template <class L, class Args>
concept PingPongKvLoader = KvLoader<L, Args> && requires(L& l, const L& cl, int32_t t, int j) {
  l.prologue(t);
  l.issue(j);
  l.template issue<0>(j);
  l.wait();
  { cl.k_tile(j) } -> std::same_as<const uint16_t*>;
  { cl.v_tile(j) } -> std::same_as<const uint16_t*>;
  { cl.template k_tile<1>(j) } -> std::same_as<const uint16_t*>;
  { cl.template v_tile<1>(j) } -> std::same_as<const uint16_t*>;
};

// The mainloop of PingPongConfig (kernels/common/concepts.hpp AttentionMainloop): the schedule above,
// wave `wave` in group wave / kGroupWaves. The score scale's P8 choice does not apply (P V in 16-bit).
template <class Cfg>
struct PingPongMainloop {
  template <class WT, class Arch, class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static int run(const Args& a, typename Cfg::Loader& loader, const KvTileRange& range,
                                                    int32_t t_begin, int32_t t_end, int wave, int lane,
                                                    const RowInfo* rows, const typename Cfg::Variant::Row* vrows,
                                                    LogitsTile& lt, const ScoreScale& /*ss*/,
                                                    RowSoftmax<WT, Arch>& softmax, typename WT::OFrag& of) {
    static_assert(PhasedArch<Arch>, "the target's arch has the phase barrier and issue priorities");
    static_assert(PingPongKvLoader<typename Cfg::Loader, Args>, "the ping-pong loads (LdsDmaPingPongLoader)");
    static_assert(Cfg::kKN == Cfg::kBN, "each wave over all of a tile's keys");
    // the group, as a value the wave's lanes agree on (an SGPR: the branches on it are scalar)
    const bool lag = Arch::wave_uniform(static_cast<uint32_t>(wave)) >= uint32_t(Cfg::kGroupWaves);
    const int32_t n = t_end > t_begin ? t_end - t_begin : 0;

    loader.prologue(t_begin);
    loader.wait();
    Arch::phase_barrier();  // barrier 0: Q and K(0) are visible
    PingPongWave<Cfg, WT, Arch, Args> w{a, loader, range, t_begin, lag, lane, rows, vrows, lt, softmax, of, wave * WT::kRows, {}, {}, {}};
    if constexpr (Cfg::kQInRegs) WT::load_q(w.qf, loader.q_tile(), w.row0);

    if (lag) {  // interval 0: group 1's share of the loads only
      loader.template issue<0>(0);
      Arch::phase_barrier();
    }
    if (n > 0) {
      // two tiles an iteration, so that each step knows its stages (the LDS addresses are constants)
      w.template step<true, 0>(0);
      int j = 1;
      for (; j + 1 < n; j += 2) {
        w.template step<false, 1>(j);
        w.template step<false, 0>(j + 1);
      }
      if (j < n) w.template step<false, 1>(j);
      w.template matrix<true, false>(n);  // P(n - 1) V(n - 1)
    }
    if (!lag) Arch::phase_barrier();
    // The lane as a value the compiler cannot trace (Arch::recompute_from), so the epilogue computes
    // its row coordinates afresh instead of keeping the prologue's live across the loop (at four
    // waves a SIMD, 128 VGPRs, they would be spilled to scratch).
    return Arch::recompute_from(lane);
  }
};

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
