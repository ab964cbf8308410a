// hipattn/kernels/common/attention_kernel.hpp: the kernel skeleton of the attention families:
//   scheduler (which work) x loader (Cfg::Loader: Q and KV tiles into LDS) x mainloop step (QK^T,
//   the variant's logits and the mask, the online softmax, PV) x epilogue (what is stored).
// The unified 2D and 3D kernels are this skeleton with QBlockScheduler<false> / NormalizedStore and
// QBlockScheduler<true> / SplitPartial (kernels/unified/kernels.hpp); the paged-decode kernel with
// DecodeTaskScheduler / DecodeStore (kernels/paged_decode/kernels.hpp). Args derive from
// AttentionKernelArgs (kernels/common/kernel_args.hpp).
//
// Warps are a kWarpsM x kWarpsN grid: warp (wm, wn) owns rows [wm * 16 * kMT, ...) and keys
// [wn * kKN, ...) of every KV tile, keeps its own online-softmax state, and the warps of one row band
// merge at the end (epilogue.hpp). KV tiles stream kStages deep (paged_kv_loader.hpp). An instance
// with the ping-pong schedule (kernels/cdna/pingpong_config.hpp, CDNA) runs pingpong_mainloop instead
// of the mainloop below: the same work, rows, variant, softmax and epilogue.
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/kernels/common/attention_config.hpp"
#include "hipattn/kernels/common/epilogue.hpp"
#include "hipattn/kernels/cdna/pingpong_mainloop.hpp"
#include "hipattn/kernels/common/softmax_step.hpp"
#include "hipattn/kernels/common/work.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/arch/arch.hpp"

namespace hipattn {

template <class Cfg, class Scheduler, class Epilogue, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void attention_kernel(const Args& a, char* smem) {
  static_assert(AttentionSkeletonConfig<Cfg>, "a skeleton configuration (kernels/common/attention_config.hpp)");
  using Arch = DeviceArch;
  if constexpr (Arch::kTarget != Cfg::kTarget) {
    return;  // this instance is built for another target; never launched on this device
  } else {
    using WT = typename Arch::template WarpTile<Cfg::kBf16, Cfg::kDqk, Cfg::kMT, Cfg::kKN, Cfg::kDv, Cfg::kTileKv, Cfg::kVRow>;
    using Variant = typename Cfg::Variant;
    constexpr int kBN = Cfg::kBN, kStages = Cfg::kStages;

    const int tid = static_cast<int>(threadIdx.x);
    int lane = Arch::lane();
    const int warp = tid / Cfg::kWaveSize;
    const int wm = warp % Cfg::kWarpsM, wn = warp / Cfg::kWarpsM;

    // ---- work ----
    AttentionWork work;
    if (!Scheduler::get(a, work)) return;
    const KvTileRange range = qblock_tile_range(a, work, kBN);
    int32_t t_begin, t_end;
    Scheduler::tiles(a, work, range, t_begin, t_end);

    // ---- Q ----
    typename Cfg::Loader loader(a.kv, a.per_token_head_scale, work, range, t_end, smem, tid);
    loader.load_q(a, work);

    // ---- per-lane row state ----
    // Q fragments stay in registers for 16-row warps up to d = 128; larger heads and 32-row warps
    // re-read Q from LDS at each k step (their S and O fragments already fill the register file).
    constexpr bool kQInRegs = Cfg::kDqk <= 128 && Cfg::kMT == 1;
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

    if constexpr (pingpong_schedule<Cfg>()) {
      // ---- the CDNA ping-pong schedule (kernels/cdna/pingpong_mainloop.hpp): its own prologue ----
      pingpong_mainloop<Cfg, WT, Arch>(a, loader, range, t_begin, t_end, warp, lane, rows, vrows, lt, softmax, of);
      lane = pingpong_epilogue_lane<Cfg, Arch>(lane);  // the epilogue's row coordinates: recomputed
    } else {
      // ---- prologue: the first tiles in flight behind Q (the loader says how many) ----
      loader.prologue(t_begin);
      loader.wait_oldest();  // Q has landed (the oldest group)
      if constexpr (kQInRegs) WT::load_q(qf, loader.q_tile(), wm * WT::kRows);

      // ---- mainloop (ALGORITHM.md section 4) ----
      const int key_w0 = wn * Cfg::kKN;  // first key of this warp within a tile
      for (int32_t t = t_begin; t < t_end; ++t) {
        const int it = t - t_begin;
        const int stage = it % kStages;
        loader.advance(t, it);
        const KvTile kv = loader.wait(stage);

        // S = Q K^T for this warp's keys
        if constexpr (kQInRegs) WT::qk(sf, qf, kv.k, key_w0);
        else WT::qk_lds(sf, loader.q_tile(), wm * WT::kRows, kv.k, key_w0);

        // logits (variant, mask on edge tiles), online softmax, O += P V
        lt.key0 = t * kBN + key_w0;
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
    }
    softmax.finish();

    // ---- epilogue ----
    if (!merge_warp_bands<Cfg, WT, Arch>(smem, wm, wn, lane, softmax, of)) return;
    float o_scale = v_scale_t;
    if constexpr (Cfg::kP8) o_scale = p8 ? v_scale_t * (1.f / WT::kP8Scale) : v_scale_t;
    Epilogue::template store<Cfg, WT, Arch>(a, work, wm, lane, softmax, of, o_scale);
  }
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
