// hipattn/dispatch/unified_plan.hpp: the planner of unified attention (host only, no device code):
// the options and their checks, the tile (dispatch/tiles), 2D or 3D split-KV, the segment count, the
// pipeline, and the workspace size.
//
// Each tile comes from a small constexpr table per target whose rows carry their reason (FA3
// heuristics style). ALGORITHM.md section 6 explains the rules.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hipattn/dispatch/device.hpp"
#include "hipattn/dispatch/skeleton_args.hpp"
#include "hipattn/dispatch/tiles/tiles.hpp"
#include "hipattn/dispatch/workspace.hpp"
#include "hipattn/kernels/unified/config.hpp"
#include "hipattn/kernels/unified/warpgroup.hpp"
#include "hipattn/problem/instance_key.hpp"
#include "hipattn/problem/unified_params.hpp"
#include "hipattn/problem/unified_rules.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn {

// Which kernel family to run.
enum class UnifiedPath : uint8_t { automatic, two_d, three_d };

// How a 3D launch splits the KV tiles: uniform segments per q-block, or the device planner's tasks
// (decode batches: every q length <= 1; kernels/common/task_plan.hpp, ALGORITHM.md 6 and 7).
enum class UnifiedSplit : uint8_t { automatic, uniform, planned };

// Which pipeline runs the prefill q-blocks of the 2D grid: automatic (the target's warp-specialised
// one where its refusal function has no objection), the attention skeleton, or one named:
//   warpgroup  sm_90's warpgroup pipeline (kernels/unified/warpgroup.hpp; unified_warpgroup_refusal)
//   pingpong   gfx950's eight-wave ping-pong (kernels/cdna/pingpong_mainloop.hpp;
//              unified_pingpong_refusal; automatic takes it where unified_pingpong_preferred)
// A named pipeline that cannot serve the call is an error (options.pipeline).
enum class UnifiedPipeline : uint8_t { automatic, skeleton, warpgroup, pingpong };

// Caller's overrides (tests and benchmarks force a path). Every field's zero is its default (a
// zero-filled struct chooses everything automatically). plan_unified_attention checks every field
// first (validate_options: a C caller may pass any byte in an enumeration).
struct UnifiedOptions {
  UnifiedPath path = UnifiedPath::automatic;
  int32_t num_segments = 0;  // 3D only: 0 = chosen from the device; else forced (>= 1)
  UnifiedSplit split = UnifiedSplit::automatic;  // 3D only; planned needs a decode batch and no num_segments
  UnifiedPipeline pipeline = UnifiedPipeline::automatic;
};

// The rules of the options' own fields, each issue naming its field ("options.pipeline") and value:
// path, split and pipeline one of their enumerators, num_segments >= 0 (invalid_argument). The rules
// that tie an option to the problem (planned needs a decode batch; a named pipeline that cannot
// serve the call) are the planner's.
inline ValidationReport validate_options(const UnifiedOptions& o) {
  ValidationReport r;
  validation::enum_in(r, "options.path", o.path,
                      {{UnifiedPath::automatic, "automatic"}, {UnifiedPath::two_d, "two_d"}, {UnifiedPath::three_d, "three_d"}});
  if (o.num_segments < 0)
    r.invalid("options.num_segments", "options.num_segments (" + validation::num(o.num_segments) +
                                          ") must be >= 0 (0: chosen from the device)");
  validation::enum_in(r, "options.split", o.split,
                      {{UnifiedSplit::automatic, "automatic"}, {UnifiedSplit::uniform, "uniform"},
                       {UnifiedSplit::planned, "planned"}});
  validation::enum_in(r, "options.pipeline", o.pipeline,
                      {{UnifiedPipeline::automatic, "automatic"}, {UnifiedPipeline::skeleton, "skeleton"},
                       {UnifiedPipeline::warpgroup, "warpgroup"}, {UnifiedPipeline::pingpong, "pingpong"}});
  return r;
}

// The default KV loader policy of a tile kind for an instance's KvKind (kv_copy_model: do the tile's
// warps share its keys?).
constexpr CopyModel unified_default_copy(UnifiedTileKind kind, int head_size, Target target, KvKind kv) {
  const bool fp8 = kv != KvKind::same16;
  return kv_copy_model(target, kv, head_size, unified_tile(kind, head_size, target, fp8).warps_m > 1);
}
constexpr CopyModel unified_default_copy(UnifiedTileKind kind, int head_size, Target target, bool fp8) {
  return unified_default_copy(kind, head_size, target, fp8 ? KvKind::e4m3fn : KvKind::same16);
}

// Workgroups of (tile, head size, KV storage) one CU / SM holds at once: the least of what LDS, the
// thread slots and the register budget allow. The planner fills the device with this many per CU.
constexpr int unified_residency(const UnifiedTile& t, int head_size, KvKind kv, Target target) {
  const TargetTraits lim = target_traits(target);
  const int wave = lim.wave_size;
  const int lds = attention_lds_layout(t.warps_m, t.warps_n, t.mt, t.kn, t.stages, head_size, head_size, kv, target).total;
  const int by_lds = lim.lds_bytes / (lds + lim.lds_reserved);
  const int threads = t.threads(wave);
  const int by_threads = lim.max_threads / threads;
  const int waves = t.warps_m * t.warps_n;
  int by_regs;
  if (is_cdna(target)) {
    const int per_simd = lim.regs_per_simd / t.regs < lim.max_waves_per_simd ? lim.regs_per_simd / t.regs : lim.max_waves_per_simd;
    by_regs = lim.simds * per_simd / waves;
  } else {
    by_regs = lim.simds * lim.regs_per_simd / (threads * t.regs);
  }
  int r = by_lds < by_threads ? by_lds : by_threads;
  r = r < by_regs ? r : by_regs;
  return r > 0 ? r : 0;
}
// ... for a cache dtype's storage (fp8: e4m3fn's, whose layout both fp8 formats share).
constexpr int unified_residency(const UnifiedTile& t, int head_size, bool fp8, Target target) {
  return unified_residency(t, head_size, fp8 ? KvKind::e4m3fn : KvKind::same16, target);
}

// The grid a plan launches: the 2D grid (one workgroup a q-block, kv head and head chunk), or the
// 3D split-KV grid whose KV tiles are cut into uniform segments per q-block or into the device
// planner's tasks (kernels/common/task_plan.hpp), followed by the reduce.
enum class UnifiedGrid : uint8_t { two_d, split_uniform, split_planned };

// The pipeline that runs a plan's q-blocks (UnifiedPipeline is the option that asks for one):
//   skeleton   the attention skeleton (every grid)
//   warpgroup  sm_90's warp-specialised pipeline (kernels/unified/warpgroup.hpp): the 2D grid's
//              128-row q-blocks, one workgroup an SM
//   pingpong   gfx950's ping-pong schedule (PingPongConfig of gfx950_pingpong_tile, 128-row
//              q-blocks, kv_copy lds_dma): the 2D grid only
enum class PlanPipeline : uint8_t { skeleton, warpgroup, pingpong };

// The plan of one call.
struct UnifiedPlan {
  UnifiedTileKind tile_kind = UnifiedTileKind::prefill;
  UnifiedTile tile{};
  UnifiedGrid grid = UnifiedGrid::two_d;
  PlanPipeline pipeline = PlanPipeline::skeleton;  // not skeleton: the 2D grid
  int32_t num_segments = 1;   // 3D segments per q-block (split_uniform)
  // split_planned (decode grid, no forced segment count): the device planner cuts each sequence's
  // tiles into tasks over `capacity` task slots per kv head and head chunk
  int32_t capacity = 0;
  int32_t wave_slots = 0;     // split_planned: slots that run at once (the planner's wave choice)
  int32_t rows_per_token = 1; // q heads of one token in a workgroup
  int32_t block_q = 1;        // tokens per q-block
  int32_t head_chunks = 1;
  bool decode_grid = false;   // every q length <= 1: one q-block a sequence (any grid)
  int64_t grid_x = 0;         // q-blocks (upper bound)
  int64_t base_workgroups = 0;  // grid_x * num_kv_heads * head_chunks
  int32_t residency = 0;        // workgroups of the tile one CU / SM holds (unified_residency)
  CopyModel kv_copy = CopyModel::async;  // the KV loader policy (kv_copy_model, or its fallback)
  size_t workspace_bytes = 0;
  std::string reason;

  // 3D split-KV (either split grid).
  constexpr bool split() const { return grid != UnifiedGrid::two_d; }
};

// Whether every byte of k_cache and v_cache lies within the LDS-DMA loader's buffer range of its
// base (kernels/common/loaders/ kLdsDmaWindow).
inline bool unified_kv_within_lds_dma_window(const UnifiedAttentionParams& p) {
  using namespace unified_rules;
  const int64_t kb = dtype_size(p.kv_dtype);
  return validation::extent_bytes(k_dims(p), kb) <= kLdsDmaWindow &&
         validation::extent_bytes(v_dims(p), kb) <= kLdsDmaWindow;
}

// The KV loader policy of a problem on `target`: the instance's default (kv_copy_model), except that
// caches beyond the LDS-DMA loader's range take the register-staged loader (an instance of the same
// tile the dispatch table also holds).
inline CopyModel unified_kv_copy(const UnifiedAttentionParams& p, Target target, UnifiedTileKind kind) {
  const CopyModel c = unified_default_copy(kind, p.head_size, target, operand_kv_kind(p.q_dtype, p.kv_dtype, p.fp8_math, target));
  return c == CopyModel::lds_dma && !unified_kv_within_lds_dma_window(p) ? CopyModel::register_staged : c;
}

// A planned 3D launch's: one row a q head (decode batches).
inline SlotWorkspace unified_planned_workspace(const UnifiedAttentionParams& p, int32_t capacity) {
  return slot_workspace(capacity, p.num_seqs, p.num_q_heads, p.head_size);
}
inline size_t unified_planned_workspace_bytes(const UnifiedAttentionParams& p, int32_t capacity) {
  return unified_planned_workspace(p, capacity).total;
}

// Why the warp-specialised pipeline cannot run the call planned so far (null: it can): sm_90, 16-bit
// queries over a cache of the same type, a head size it has tiles for, the prefill tile's q-blocks on
// the 2D grid (decode batches keep the skeleton's 16-row decode tiles and the 3D split).
inline const char* unified_warpgroup_refusal(const UnifiedAttentionParams& p, Target target, const UnifiedPlan& plan) {
  if (target != Target::sm90) return "the target is not sm_90";
  if (is_fp8(p.q_dtype) || p.kv_dtype != p.q_dtype) return "it takes 16-bit queries over a cache of the same dtype";
  if (!unified_warpgroup_head(p.head_size)) return "it has tiles for head sizes 64, 128, 192 and 256";
  if (plan.tile_kind != UnifiedTileKind::prefill || plan.decode_grid) return "a decode batch runs the decode tiles";
  if (plan.split()) return "it runs the 2D grid, and the plan split the KV (3D)";
  return nullptr;
}

// Whether a problem needs the variant with softcap / ALiBi / QQ-bias compiled in.
inline bool unified_uses_full_variant(const UnifiedAttentionParams& p) {
  return p.softcap > 0.f || p.alibi_slopes != nullptr || p.qq_bias != nullptr;
}

// Why gfx950's ping-pong schedule cannot run the call planned so far (null: it can): 16-bit queries
// over a cache of the same type, a head size and variant it serves (unified_pingpong_head; a custom
// variant is planned from the params' standard fields), the prefill tile's q-blocks on the 2D grid,
// and caches within the LDS-DMA loader's buffer range.
inline const char* unified_pingpong_refusal(const UnifiedAttentionParams& p, Target target, const UnifiedPlan& plan) {
  if (target != Target::gfx950) return "the target is not gfx950";
  if (is_fp8(p.q_dtype) || p.kv_dtype != p.q_dtype) return "it takes 16-bit queries over a cache of the same dtype";
  if (!unified_pingpong_head(p.head_size, unified_uses_full_variant(p)))
    return "it serves head sizes 128 and 256 without softcap, ALiBi or QQ-bias";
  if (plan.tile_kind != UnifiedTileKind::prefill || plan.decode_grid) return "a decode batch runs the decode tiles";
  if (plan.split()) return "it runs the 2D grid, and the plan split the KV (3D)";
  if (!unified_kv_within_lds_dma_window(p)) return "a cache extends past the LDS-DMA loader's 4 GiB buffer range";
  return nullptr;
}

// The instance a problem needs on `target`: its standard variant, or `custom` for a caller's.
inline InstanceKey unified_instance_key(const UnifiedAttentionParams& p, Target target, bool custom_variant = false) {
  InstanceKey k;
  k.family = Family::unified;
  k.target = target;
  k.bf16 = compute_dtype(p.q_dtype, p.kv_dtype, output_dtype(p.q_dtype, p.out_format)) == DType::bf16;
  k.kv = operand_kv_kind(p.q_dtype, p.kv_dtype, p.fp8_math, target);
  k.head_size = k.head_size_v = p.head_size;
  k.variant = custom_variant              ? VariantKind::custom
              : unified_uses_full_variant(p) ? VariantKind::full
                                             : VariantKind::plain;
  return k;
}

// The row map of a workgroup of `rows` rows and the 2D grid it gives (q-blocks x kv heads x head
// chunks): the tile's, or a warp-specialised pipeline's 128.
inline void place_rows(UnifiedPlan& plan, const UnifiedAttentionParams& p, int32_t group, int32_t rows) {
  const RowMap rm = skeleton_row_map(group, rows, 1);
  plan.rows_per_token = rm.rows_per_token;
  plan.block_q = rm.block_q;
  plan.head_chunks = rm.head_chunks;
  plan.grid_x = plan.decode_grid ? p.num_seqs : static_cast<int64_t>(p.num_tokens) / plan.block_q + p.num_seqs;
  plan.base_workgroups = plan.grid_x * p.num_kv_heads * plan.head_chunks;
}

// 2D or 3D by the path option, or automatically: 3D when the 2D grid cannot fill the device (`fill`
// workgroups at once) and sequences are long enough to split (>= 4 KV tiles). Sets plan.reason.
inline bool unified_path_splits(const UnifiedOptions& opt, UnifiedPlan& plan, int64_t fill, int32_t max_tiles) {
  switch (opt.path) {
    case UnifiedPath::two_d: plan.reason = "forced 2d"; return false;
    case UnifiedPath::three_d: plan.reason = "forced 3d"; return true;
    default: break;
  }
  const bool split = plan.base_workgroups < fill && max_tiles >= 4;
  plan.reason = split ? "auto: 2D grid of " + std::to_string(plan.base_workgroups) + " workgroups < " +
                            std::to_string(fill) + " and >= 4 KV tiles: split KV"
                      : "auto: 2D grid fills the device or sequences are short";
  return split;
}

// The grid of the plan so far (the path's choice, then the planned split). Planned split (the device
// planner, ALGORITHM.md 7) where uniform segments cannot balance: a decode batch whose uniform split
// would cut each sequence into at most 2 segments while one may hold 64 tiles or more (a long
// sequence among short ones keeps half its keys in one workgroup), or of several sequences whose
// segments would hold 16K keys or more each (uniform_segments_long). Many short segments already cut
// every sequence finely, and the planner's one-workgroup launch (7-40 us on the H200,
// bench/NOTES.md) would only add to short calls.
// A decode batch whose 2D grid fills the device but whose bound allows a sequence of 256 tiles or
// more (16K keys at 64-key tiles) is planned too: one long sequence among many short ones would
// otherwise run alone at the end (255 x 1K + 1 x 100K: 1.86 ms in 2D). Uniform batches then get one
// task a sequence (the planner's launch, 4-8 us, on a call of 1 ms or more).
inline UnifiedGrid choose_unified_grid(const UnifiedAttentionParams& p, const UnifiedOptions& opt, UnifiedPlan& plan,
                                       int64_t fill, int32_t max_tiles) {
  const bool split = unified_path_splits(opt, plan, fill, max_tiles);
  if (opt.split == UnifiedSplit::planned && (!plan.decode_grid || opt.num_segments != 0))
    throw Error(ErrorCode::invalid_argument, "options.split",
                std::string("planned needs a decode batch (max_seqlen_q <= 1, got ") + std::to_string(p.max_seqlen_q) +
                    ") and no forced num_segments (got " + std::to_string(opt.num_segments) + ")");
  const bool may_plan = plan.decode_grid && opt.num_segments == 0;
  if (split) {
    const int32_t seg = choose_segments(plan.base_workgroups, fill, std::min<int32_t>(max_tiles, 64));
    const bool coarse = max_tiles >= 64 && (seg <= 2 || (p.num_seqs > 1 && uniform_segments_long(max_tiles, seg, plan.tile.keys())));
    const bool planned = may_plan && (opt.split == UnifiedSplit::planned || (opt.split == UnifiedSplit::automatic && coarse));
    if (planned && opt.split == UnifiedSplit::automatic && seg > 2)
      plan.reason += "; " + std::to_string(seg) + " uniform segments would each hold " +
                     std::to_string(int64_t((max_tiles + seg - 1) / seg) * plan.tile.keys()) + " keys: planned split";
    return planned ? UnifiedGrid::split_planned : UnifiedGrid::split_uniform;
  }
  if (may_plan && opt.path == UnifiedPath::automatic && opt.split != UnifiedSplit::uniform && max_tiles >= 256) {
    plan.reason += "; a sequence may hold " + std::to_string(max_tiles) + " tiles: planned split";
    return UnifiedGrid::split_planned;
  }
  return UnifiedGrid::two_d;
}

// The segment count or task slots of the plan's split grid, and its workspace.
inline void size_unified_split(const UnifiedAttentionParams& p, const UnifiedOptions& opt, UnifiedPlan& plan,
                               int64_t fill, int32_t max_tiles) {
  if (plan.grid == UnifiedGrid::split_planned) {
    // Whole waves of slots (planned_capacity), at least one a sequence. The planner sizes the tasks
    // from this call's lengths.
    const int64_t per_slot = static_cast<int64_t>(p.num_kv_heads) * plan.head_chunks;
    plan.capacity = planned_capacity(p.num_seqs, fill, per_slot, int64_t(max_tiles) * plan.tile.keys());
    plan.wave_slots = planned_wave_slots(fill, per_slot);
    plan.num_segments = 1;
    plan.workspace_bytes = unified_planned_workspace_bytes(p, plan.capacity);
    plan.reason += "; planned: " + std::to_string(plan.capacity) + " task slots";
  } else if (plan.grid == UnifiedGrid::split_uniform) {
    const int32_t seg = opt.num_segments != 0 ? opt.num_segments
                                              : choose_segments(plan.base_workgroups, fill, std::min<int32_t>(max_tiles, 64));
    plan.num_segments = seg;
    plan.workspace_bytes = static_cast<size_t>(seg) * static_cast<size_t>(p.num_tokens) *
                           static_cast<size_t>(p.num_q_heads) * (static_cast<size_t>(p.head_size) + 1) * sizeof(float);
    plan.workspace_bytes += 256;  // alignment slack for the lse block
  }
}

// sm_90's warpgroup pipeline where the option allows it and unified_warpgroup_refusal has no objection
// (a named pipeline it refuses is an error): 128-row q-blocks, one workgroup an SM.
inline void choose_warpgroup(const UnifiedAttentionParams& p, const UnifiedOptions& opt, const PlanDevice& dev,
                             int32_t group, UnifiedPlan& plan) {
  const char* refusal = unified_warpgroup_refusal(p, dev.target, plan);
  if (opt.pipeline == UnifiedPipeline::warpgroup && refusal != nullptr)
    throw Error(ErrorCode::unsupported, "options.pipeline", std::string("warpgroup: ") + refusal);
  if (refusal != nullptr || (opt.pipeline != UnifiedPipeline::automatic && opt.pipeline != UnifiedPipeline::warpgroup)) return;
  plan.pipeline = PlanPipeline::warpgroup;
  place_rows(plan, p, group, 128);
  plan.residency = 1;
  plan.reason += "; sm_90 warpgroup pipeline: 128 rows x " + std::to_string(unified_warpgroup_keys(p.head_size)) + " keys";
}

// gfx950's ping-pong schedule where asked for, or automatically where unified_pingpong_preferred, and
// unified_pingpong_refusal has no objection (a named pipeline it refuses is an error).
inline void choose_pingpong(const UnifiedAttentionParams& p, const UnifiedOptions& opt, const PlanDevice& dev,
                            int32_t group, UnifiedPlan& plan) {
  const char* refusal = unified_pingpong_refusal(p, dev.target, plan);
  if (opt.pipeline == UnifiedPipeline::pingpong && refusal != nullptr)
    throw Error(ErrorCode::unsupported, "options.pipeline", std::string("pingpong: ") + refusal);
  const bool wanted = opt.pipeline == UnifiedPipeline::pingpong ||
                      (opt.pipeline == UnifiedPipeline::automatic && unified_pingpong_preferred(p.head_size));
  if (refusal != nullptr || !wanted) return;
  plan.pipeline = PlanPipeline::pingpong;
  plan.tile = gfx950_pingpong_tile(p.head_size);
  place_rows(plan, p, group, plan.tile.rows());
  plan.residency = unified_residency(plan.tile, p.head_size, KvKind::same16, dev.target);
  plan.kv_copy = CopyModel::lds_dma;
  plan.reason += "; gfx950 ping-pong: 128 rows x 32 keys, " + std::to_string(plan.residency) + " a CU";
}

inline UnifiedPlan plan_unified_attention(const UnifiedAttentionParams& p, const UnifiedOptions& opt,
                                          const PlanDevice& dev) {
  throw_if_error(validate_options(opt));  // every option field in range before any is read
  UnifiedPlan plan;
  const int32_t group = p.num_q_heads / std::max(1, p.num_kv_heads);
  // Decode tile when a q-block of the prefill tile would leave most of its 64 rows empty.
  const int64_t rows_needed = static_cast<int64_t>(std::max(1, p.max_seqlen_q)) * group;
  plan.tile_kind = rows_needed <= 16 ? UnifiedTileKind::decode : UnifiedTileKind::prefill;
  if (!target_has_tiles(dev.target))
    throw Error(ErrorCode::unsupported, "target", std::string("no unified-attention tiles for target ") +
                                                      std::string(target_name(dev.target)));
  const bool fp8 = p.kv_dtype == DType::fp8_e4m3fn || p.kv_dtype == DType::fp8_e4m3fnuz;
  plan.tile = unified_tile(plan.tile_kind, p.head_size, dev.target, fp8);
  plan.decode_grid = p.max_seqlen_q <= 1;
  place_rows(plan, p, group, plan.tile.rows());
  // A full device holds `residency` workgroups of this tile per CU / SM (the cache's storage: the fp8
  // matrix path's smaller Q tile fits at least as many, and workspaces sized from traits that do not
  // name the query dtype stay a bound).
  plan.residency = unified_residency(plan.tile, p.head_size, fp8, dev.target);
  plan.kv_copy = unified_kv_copy(p, dev.target, plan.tile_kind);
  const int64_t fill = static_cast<int64_t>(std::max(1, plan.residency)) * dev.multiprocessor_count;
  const int32_t max_tiles = (std::max(1, p.max_seqlen_k) + plan.tile.keys() - 1) / plan.tile.keys();
  plan.grid = choose_unified_grid(p, opt, plan, fill, max_tiles);
  size_unified_split(p, opt, plan, fill, max_tiles);
  choose_warpgroup(p, opt, dev, group, plan);
  choose_pingpong(p, opt, dev, group, plan);
  return plan;
}

}  // namespace hipattn
