// hipattn/kernels/common/attention_kernel.hpp: the kernel skeleton of the attention families, five
// checked parts (kernels/common/concepts.hpp):
//   scheduler (which work) x loader (Cfg::Loader: Q and KV tiles into LDS) x score scale (the fp8
//   scales folded once, ScoreScale) x mainloop (Cfg::Mainloop: the KV walk, QK^T, the variant's
//   logits and the mask, the online softmax, PV; SkeletonMainloop's walk is written here, see
//   skeleton_mainloop.hpp) x epilogue (what is stored).
// The unified 2D and 3D kernels are this skeleton with QBlockScheduler<false> / NormalizedStore and
// QBlockScheduler<true> / SplitPartial (kernels/unified/kernels.hpp); the paged-decode kernel with
// DecodeTaskScheduler / DecodeStore (kernels/paged_decode/kernels.hpp). Args derive from
// AttentionKernelArgs (kernels/common/kernel_args.hpp).
//
// Warps are a kWarpsM x kWarpsN grid: warp (wm, wn) owns rows [wm * 16 * kMT, ...) and keys
// [wn * kKN, ...) of every KV tile, keeps its own online-softmax state, and the warps of one row band
// merge at the end (epilogue.hpp).
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/kernels/common/attention_config.hpp"
#include "hipattn/kernels/common/concepts.hpp"
#include "hipattn/kernels/common/epilogue.hpp"
#include "hipattn/kernels/common/score_scale.hpp"
#include "hipattn/kernels/common/skeleton_mainloop.hpp"
#include "hipattn/kernels/common/softmax_step.hpp"
#include "hipattn/kernels/common/work.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/arch/arch.hpp"

namespace hipattn {

// The warp tile of configuration Cfg on Arch: the one Cfg names (Cfg::WarpTileOf<Arch>: the CDNA
// ping-pong's 32-row tile), else the arch's tile for Cfg's shape.
template <class Cfg, class Arch>
struct WarpTileFor {
  using type = typename Arch::template WarpTile<Cfg::kBf16, Cfg::kDqk, Cfg::kMT, Cfg::kKN, Cfg::kDv, Cfg::kTileKv, Cfg::kVRow>;
};
template <class Cfg, class Arch>
  requires requires { typename Cfg::template WarpTileOf<Arch>; }
struct WarpTileFor<Cfg, Arch> {
  using type = typename Cfg::template WarpTileOf<Arch>;
};
template <class Cfg, class Arch>
using warp_tile_t = typename WarpTileFor<Cfg, Arch>::type;

template <class Cfg, class Scheduler, class Epilogue, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void attention_kernel(const Args& a, char* smem) {
  static_assert(AttentionSkeletonConfig<Cfg>, "a skeleton configuration (kernels/common/attention_config.hpp)");
  using Arch = DeviceArch;
  if constexpr (Arch::kTarget != Cfg::kTarget) {
    return;  // this instance is built for another target; never launched on this device
  } else {
    using WT = warp_tile_t<Cfg, Arch>;
    static_assert(AttentionWarpTile<WT>, "a warp tile (arch/concept.hpp)");
    using Variant = typename Cfg::Variant;
    using Mainloop = typename Cfg::Mainloop;
    static_assert(AttentionScheduler<Scheduler, Args>, "a scheduler (kernels/common/concepts.hpp)");
    static_assert(KvLoader<typename Cfg::Loader, Args>, "a KV loader (kernels/common/concepts.hpp)");
    static_assert(AttentionEpilogue<Epilogue, Cfg, WT, Arch, Args>, "an epilogue (kernels/common/concepts.hpp)");

    const int tid = static_cast<int>(threadIdx.x);
    const int lane = Arch::lane();
    const int warp = tid / Cfg::kWaveSize;
    const int wm = warp % Cfg::kWarpsM, wn = warp / Cfg::kWarpsM;

    // ---- work ----
    AttentionWork work;
    if (!Scheduler::get(a, work)) return;
    const KvTileRange range = qblock_tile_range(a, work, Cfg::kBN);
    int32_t t_begin, t_end;
    Scheduler::tiles(a, work, range, t_begin, t_end);

    // ---- Q ----
    typename Cfg::Loader loader(a.kv, a.per_token_head_scale, work, range, t_end, smem, tid);
    loader.load_q(a, work);

    // ---- per-lane row state ----
    // (the skeleton's walk's fragments, declared here: their place in the function reaches the CDNA code)
    constexpr bool kQInRegs = SkeletonMainloop<Cfg>::kQInRegs;
    typename WT::QFrag qf;
    typename WT::OFrag of;
    typename WT::SFrag sf;
    RowSoftmax<WT, Arch> softmax;
    softmax.init();
    RowInfo rows[WT::kRowSlots];
    typename Variant::Row vrows[WT::kRowSlots];
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      const RowCoord rc = row_coord(a, work, wm * WT::kRows + WT::slot_row(lane, r));
      rows[r] = rc.info;
      if (rc.valid) {
        vrows[r] = a.variant.row(rc.info);
      } else {  // padding rows are computed but never written: keep their variant reads in bounds
        rows[r].i = 0;
        rows[r].pos = work.ctx;
        vrows[r] = typename Variant::Row{};
      }
    }
#pragma unroll
    for (int e = 0; e < WT::kOElems; ++e) of.r[e] = 0.f;

    // ---- per-tensor fp8 scales (K, and fp8 Q's) fold into the score scale, V's into the output factor ----
    // (scalars, and a ScoreScale, kernels/common/score_scale.hpp, only for a mainloop slot's run: a
    // ScoreScale object on the skeleton's own path changes the CDNA code of its fp8 instances)
    const float k_scale_t = a.k_scale_tensor != nullptr ? *a.k_scale_tensor : a.k_scale_value;
    const float v_scale_t = a.v_scale_tensor != nullptr ? *a.v_scale_tensor : a.v_scale_value;
    // (the fp8 matrix path: times the factor of how the loader re-encoded the queries, kv_kind.hpp)
    float qk_scale = a.scale * k_scale_t * (a.q_scale_tensor != nullptr ? *a.q_scale_tensor : a.q_scale_value);
    if constexpr (Cfg::kQ8) qk_scale *= q8_query_factor(Cfg::kKv, a.q_kind == KvKind::e4m3fn);
    LogitsTile lt{0, false, work.kv_len, a.causal, a.window_left, qk_scale, qk_scale * kLog2e};
    // The fp8 matrix path's P V in e4m3 (P scaled by WT::kP8Scale, divided out with V's scale) when the
    // call asks for it and no per-key V scale rides on P.
    bool p8 = false;
    if constexpr (Cfg::kP8) p8 = a.p8 && !a.per_token_head_scale;

    // ---- mainloop: Cfg::Mainloop (the skeleton's own walk, below, or the slot's run) ----
    int store_lane;  // the lane as the epilogue takes it (a mainloop may hand back a recomputed value)
    if constexpr (skeleton_mainloop_v<Cfg>) {
      // ---- prologue: the first tiles in flight behind Q (the loader says how many) ----
      static_assert(KvStageLoader<typename Cfg::Loader, Args>, "a staged KV loader (kernels/common/concepts.hpp)");
      loader.prologue(t_begin);
      loader.wait_oldest();  // Q has landed (the oldest group)
      if constexpr (kQInRegs) WT::load_q(qf, loader.q_tile(), wm * WT::kRows);

      // ---- per KV tile: ALGORITHM.md section 5.1 ----
      const int key_w0 = wn * Cfg::kKN;  // first key of this warp within a tile
      for (int32_t t = t_begin; t < t_end; ++t) {
        const int it = t - t_begin;
        const int stage = it % Cfg::kStages;
        loader.advance(t, it);
        const KvTile kv = loader.wait(stage);

        // S = Q K^T for this warp's keys
        if constexpr (kQInRegs) WT::qk(sf, qf, kv.k, key_w0);
        else WT::qk_lds(sf, loader.q_tile(), wm * WT::kRows, kv.k, key_w0);

        // logits (variant, mask on edge tiles), online softmax, O += P V
        lt.key0 = t * Cfg::kBN + key_w0;
        lt.edge = !range.is_interior(t);
        logits<WT, Arch>(sf, a.variant, rows, vrows, lt, lane, loader.k_scales(stage, key_w0));
        const float* v_scales = loader.v_scales(stage, key_w0);
        softmax.update(sf, of, v_scales, lane);
        if (p8) {
          if constexpr (Cfg::kP8) WT::pv_p8(of, sf, kv.v, key_w0);
        } else {
          WT::pv(of, sf, kv.v, key_w0, v_scales == nullptr);  // P <= 1 unless per-key V scales are folded into it
        }
        loader.release();  // the stage is refilled by the next iteration's copies
      }
      loader.drain();
      store_lane = lane;
    } else {
      static_assert(AttentionMainloop<Mainloop, Cfg, WT, Arch, Args>, "a mainloop (kernels/common/concepts.hpp)");
      const ScoreScale ss{qk_scale, v_scale_t, p8};
      store_lane = Mainloop::template run<WT, Arch>(a, loader, range, t_begin, t_end, warp, lane, rows, vrows, lt, ss,
                                                    softmax, of);
    }
    softmax.finish();

    // ---- epilogue ----
    if (!merge_warp_bands<Cfg, WT, Arch>(smem, wm, wn, store_lane, softmax, of)) return;
    float o_scale = v_scale_t;
    if constexpr (Cfg::kP8) o_scale = p8 ? v_scale_t * (1.f / WT::kP8Scale) : v_scale_t;
    Epilogue::template store<Cfg, WT, Arch>(a, work, wm, store_lane, softmax, of, o_scale);
  }
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
