// hipattn/kernels/common/concepts.hpp: the checked interfaces of the attention skeleton's parts
// (kernels/common/attention_kernel.hpp): the scheduler and the epilogue a kernel names, the loader and
// the mainloop its configuration names (Cfg::Loader, Cfg::Mainloop; the configuration itself:
// AttentionSkeletonConfig, kernels/common/attention_config.hpp).
#pragma once
#include <concepts>
#include <cstdint>

#include "hipattn/kernels/common/loaders/tile_walk.hpp"
#include "hipattn/kernels/common/score_scale.hpp"
#include "hipattn/kernels/common/softmax_step.hpp"
#include "hipattn/kernels/common/work.hpp"
#include "hipattn/tile/tile_range.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

// Which work a workgroup owns (kernels/common/work.hpp):
//   static bool get(args, work)                         fills work; false: nothing to do
//   static void tiles(args, work, range, begin, end)    the KV tiles [begin, end) it walks
template <class S, class Args>
concept AttentionScheduler = requires(const Args& a, AttentionWork& w, const AttentionWork& cw, const KvTileRange& r,
                                      int32_t& begin, int32_t& end) {
  { S::get(a, w) } -> std::same_as<bool>;
  { S::tiles(a, cw, r, begin, end) } -> std::same_as<void>;
};

// What a kernel asks of its loader (Cfg::Loader; the policies: kernels/common/loaders/):
//   Params                                           what the kernel arguments carry (`kv`)
//   L(params, per_token_head_scale, work, range, t_end, smem, tid)
//   load_q(args, work)                               the work item's Q rows into LDS (the first copy group)
//   q_tile()                                         Q's LDS tile
// Keys outside the q-block's visible range are never read (zero-filled), so unowned slots and padded
// block-table entries contribute exactly zero. A mainloop asks for more (KvStageLoader below, the
// ping-pong's in kernels/cdna/pingpong_mainloop.hpp).
template <class L, class Args>
concept KvLoader = requires(L& l, const L& cl, const typename L::Params& p, const Args& a, const AttentionWork& w,
                            const KvTileRange& r, int32_t t, char* smem, int tid) {
  L(p, true, w, r, t, smem, tid);
  l.load_q(a, w);
  { cl.q_tile() } -> std::same_as<const uint16_t*>;
};

// The stage ring the skeleton mainloop walks (kernels/common/skeleton_mainloop.hpp):
//   prologue(t_begin) / advance(t, it)      the first tiles in flight; then, before tile t (the it-th), the next
//   wait_oldest()                           the oldest copy group (Q) has landed and is visible
//   KvTile wait(stage)                      the stage's K and V as the warp tile reads them: 16-bit
//                                           swizzled tiles, or fp8 codes (Cfg::kFp8AtFragment)
//   k_scales(stage, key0) / v_scales(...)   per-(token, head) scales of the stage's keys (or null)
//   release()                               the stage is consumed (the next advance may refill it)
//   drain()                                 no copy in flight
template <class L, class Args>
concept KvStageLoader = KvLoader<L, Args> && requires(L& l, const L& cl, int32_t t, int i) {
  l.prologue(t);
  l.advance(t, i);
  l.wait_oldest();
  { l.wait(i) } -> std::same_as<KvTile>;
  { cl.k_scales(i, i) } -> std::same_as<const float*>;
  { cl.v_scales(i, i) } -> std::same_as<const float*>;
  l.release();
  l.drain();
};

// What a work item stores (kernels/common/epilogue.hpp), from row band wm's first warp after the
// bands' merge: static store<Cfg, WT, Arch>(args, work, wm, lane, softmax, o, v_scale), o consumed,
// v_scale the output's factor (V's per-tensor scale; on the e4m3 P V path with P's scale divided out).
template <class E, class Cfg, class WT, class Arch, class Args>
concept AttentionEpilogue = requires(const Args& a, const AttentionWork& w, int wm, int lane,
                                     const RowSoftmax<WT, Arch>& sm, typename WT::OFrag& o, float v_scale) {
  { E::template store<Cfg, WT, Arch>(a, w, wm, lane, sm, o, v_scale) } -> std::same_as<void>;
};

// The KV walk of a work item (Cfg::Mainloop: SkeletonMainloop, or the CDNA ping-pong's):
//   static int run<WT, Arch>(args, loader, range, t_begin, t_end, warp, lane, rows, vrows, logits tile,
//                            score scale, softmax, o)
// after the loader's load_q: tiles [t_begin, t_end) of range through the loader into the warp's
// online softmax and O (rows / vrows: its row slots' coordinates and variant rows; the logits tile's
// key0 / edge are the mainloop's to set). Returns the lane as the epilogue takes it (a mainloop may
// hand back a value recomputed after its loop).
template <class M, class Cfg, class WT, class Arch, class Args>
concept AttentionMainloop = requires(const Args& a, typename Cfg::Loader& l, const KvTileRange& r, int32_t t, int i,
                                     const RowInfo* rows, const typename Cfg::Variant::Row* vrows, LogitsTile& lt,
                                     const ScoreScale& ss, RowSoftmax<WT, Arch>& sm, typename WT::OFrag& o) {
  { M::template run<WT, Arch>(a, l, r, t, t, i, i, rows, vrows, lt, ss, sm, o) } -> std::same_as<int>;
};

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
