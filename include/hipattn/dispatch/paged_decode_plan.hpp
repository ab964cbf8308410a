// hipattn/dispatch/paged_decode_plan.hpp: the planner of paged decode (host only): the options and
// their checks, the plan (tile, row map, one partition, uniform segments or planned tasks, the task
// slots), the workspace layout and its size from host traits, and the instance a problem runs on.
// dispatch/paged_decode_launch.hpp builds the arguments and geometry of a plan; dispatch/paged_decode.hpp
// launches them.
//
// ALGORITHM.md section 8 derives the rules. In short:
//   rows      q_len x group rows a kv head; the decode tile (16 rows) when they fit, the verify tile
//             (32 rows, where the target has one: paged_decode_tile_kind) when those do, else the
//             prefill tile (its 64 / 32 rows), so that MTP verify reads each KV tile once for all its rows
//   grid      task slots (planned) or sequences (one partition) x grid_y = kv heads x head chunks x
//             q-blocks, as one slot-major dimension (the long tasks of the plan's first slots start
//             first on every head). Every dimension is a host value: a graph captured once replays with other
//             seq_lens_k and block tables (the plan is recomputed on the device at each replay)
//   planned   slots = whole waves of floor(budget / grid y) slots, as many as num_seqs needs at one
//             task each; budget = the workgroups the device holds at once (the tile's residency x
//             CUs / SMs) unless the caller gives one. The device planner cuts each sequence's tiles
//             with the min-max bound over those slots, so a long sequence among short ones spreads
//             over the slots the short ones leave; a sequence whose plan has one task is written
//             directly
//   batch-invariant: split boundaries every `batch_invariant_keys` keys (in whole tiles), whatever
//             the batch: slots = num_seqs x the most tasks a sequence within max_seqlen_k can need
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hipattn/dispatch/skeleton_args.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/dispatch/workspace.hpp"
#include "hipattn/problem/paged_decode_params.hpp"
#include "hipattn/problem/paged_decode_rules.hpp"

namespace hipattn {

enum class PagedDecodeSplit : uint8_t {
  automatic,      // one partition, uniform segments or planned by the rule of ALGORITHM.md 8
  one_partition,  // one task a sequence: no planner, no reduce (forced)
  planned,        // the device planner's tasks (forced)
  uniform,        // every sequence in the same number of near-equal segments, no planner (forced)
};

// Every field's zero is its default (a zero-filled struct plans automatically). plan_paged_decode and
// paged_decode_workspace_size check every field first (validate_options).
struct PagedDecodeOptions {
  PagedDecodeSplit split = PagedDecodeSplit::automatic;
  int32_t num_segments = 0;          // uniform: segments a sequence (0: chosen from the device)
  int32_t workgroup_budget = 0;      // planned: workgroups to fill (0: the device's resident workgroups)
  int32_t batch_invariant_keys = 0;  // > 0: fixed split boundaries (rounded up to whole tiles); planned
};

// The rules of the options' own fields, each issue naming its field ("options.split") and value:
// split one of its enumerators (a C caller may pass any byte), num_segments, workgroup_budget and
// batch_invariant_keys >= 0 (invalid_argument). The rules between fields (a segment count only with
// the uniform split; batch-invariant keys neither with one_partition nor uniform) are the planner's.
inline ValidationReport validate_options(const PagedDecodeOptions& o) {
  ValidationReport r;
  validation::enum_in(r, "options.split", o.split,
                      {{PagedDecodeSplit::automatic, "automatic"}, {PagedDecodeSplit::one_partition, "one_partition"},
                       {PagedDecodeSplit::planned, "planned"}, {PagedDecodeSplit::uniform, "uniform"}});
  validation::at_least(r, "options.num_segments", o.num_segments, 0);
  validation::at_least(r, "options.workgroup_budget", o.workgroup_budget, 0);
  validation::at_least(r, "options.batch_invariant_keys", o.batch_invariant_keys, 0);
  return r;
}

struct PagedDecodePlan {
  UnifiedTileKind tile_kind = UnifiedTileKind::decode;
  UnifiedTile tile{};
  int32_t rows_per_token = 1, block_q = 1, head_chunks = 1, q_blocks = 1;
  int64_t grid_y = 0;  // num_kv_heads * head_chunks * q_blocks
  int32_t residency = 0;
  CopyModel kv_copy = CopyModel::async;
  KvCacheLayout kv_layout = KvCacheLayout::rows;  // rocm: RocmKvLayout configurations (register-staged)
  // The page size compiled into the configuration, with 32-bit offsets (paged_decode_fast_page), or 0:
  // any page size, 64-bit offsets.
  int32_t fast_page = 0;
  SlotSplit split = SlotSplit::one_partition;  // the reduce follows unless one_partition
  int32_t segments = 1;     // uniform: segments a sequence (> 1); 1 otherwise
  int32_t capacity = 0;     // task slots: planned, or sequences x segments
  int32_t fixed_tiles = 0;  // batch-invariant bound (tiles), 0: min-max
  int32_t wave_slots = 0;   // planned min-max: slots that run at once (the planner's wave choice)
  size_t workspace_bytes = 0;
  std::string reason;
};

// The workspace of a split launch (dispatch/workspace.hpp slot_workspace): the plan (planned only,
// laid out always), then the partial outputs [capacity, q_len x num_q_heads, head_size] and LSEs.
// One partition needs none.
using PagedDecodeWorkspace = SlotWorkspace;
inline SlotWorkspace paged_decode_workspace(const PagedDecodeParams& p, int32_t capacity) {
  return slot_workspace(capacity, p.num_seqs, int64_t(p.q_len) * p.num_q_heads, p.head_size);
}

// Page sizes with a configuration of their own (the page a compile-time constant: the slot and page
// of a key by shift and mask) and 32-bit offsets, where the cache allows them (needs_64bit_offsets):
// sm_90 fp8 decode tiles with the row layout. Measured (bench/NOTES.md run v11, b64 x 8K, d = 128,
// page 16): fp8 403 -> 376 us with bf16 queries, 369 -> 342 with f16; a 16-bit cache, at the copy
// rate already, 500 -> 500, so 16-bit caches (and the other targets, where it is not measured) keep
// the one configuration for any page size. 0: none.
inline int32_t paged_decode_fast_page(const PagedDecodeParams& p, UnifiedTileKind kind, Target target) {
  const bool fast_size = p.block_size == 16 || p.block_size == 32 || p.block_size == 64 || p.block_size == 128;
  const bool applies = target == Target::sm90 && is_fp8(p.kv_dtype) && kind == UnifiedTileKind::decode &&
                       p.kv_layout == KvCacheLayout::rows && fast_size;
  return applies && !needs_64bit_offsets(p) ? p.block_size : 0;
}

// Tiles of the most a sequence within max_seqlen_k can need (the window bounds it).
inline int32_t paged_decode_max_tiles(const PagedDecodeParams& p, int32_t tile_keys) {
  const int64_t keys = std::max(1, p.max_seqlen_k);
  int64_t tiles = (keys + tile_keys - 1) / tile_keys;
  if (p.window_left >= 0) tiles = std::min<int64_t>(tiles, (int64_t(p.window_left) + p.q_len + tile_keys - 1) / tile_keys + 1);
  return static_cast<int32_t>(tiles);
}

// Uniform segments a sequence for `base` workgroups at one task a sequence: section 6's wave-filling
// count, at most 128, at most the tiles, and within 4 waves of the budget (so the workspace a traits
// bound sizes stays near 4 waves of slots). 128, not unified's 64: one sequence over 8 kv heads fills
// MI355X's 1,024 resident decode workgroups only at 128 segments (64 left half of them empty: b1 x 128K
// 0.77 -> 0.85 of HBM on the timed model, bench/NOTES.md "AMD, timed: the verify tile").
inline int32_t paged_decode_uniform_segments(int64_t base, int64_t budget, int32_t max_tiles) {
  base = std::max<int64_t>(1, base);
  const int64_t waves4 = std::max<int64_t>(1, std::min<int64_t>(128, 4 * budget / base));
  return choose_segments(base, budget, static_cast<int32_t>(std::min<int64_t>(max_tiles, waves4)));
}

inline PagedDecodePlan plan_paged_decode(const PagedDecodeParams& p, const PagedDecodeOptions& opt, const PlanDevice& dev) {
  throw_if_error(validate_options(opt));  // every option field in range before any is read
  PagedDecodePlan plan;
  if (!target_has_tiles(dev.target))
    throw Error(ErrorCode::unsupported, "target",
                std::string("no paged-decode tiles for target ") + std::string(target_name(dev.target)));
  if (opt.batch_invariant_keys > 0 && opt.split == PagedDecodeSplit::one_partition)
    throw Error(ErrorCode::invalid_argument, "options.split",
                "one_partition with batch_invariant_keys (" + std::to_string(opt.batch_invariant_keys) +
                    "): batch-invariant plans split at fixed keys");
  const int32_t group = p.num_q_heads / std::max(1, p.num_kv_heads);
  const int64_t rows = static_cast<int64_t>(std::max(1, p.q_len)) * group;
  plan.tile_kind = paged_decode_tile_kind(rows, p.head_size, dev.target);
  plan.tile = unified_tile(plan.tile_kind, p.head_size, dev.target, is_fp8(p.kv_dtype));
  const RowMap rm = skeleton_row_map(group, plan.tile.rows(), p.q_len);
  plan.rows_per_token = rm.rows_per_token;
  plan.block_q = rm.block_q;
  plan.head_chunks = rm.head_chunks;
  plan.q_blocks = rm.q_blocks;
  plan.grid_y = static_cast<int64_t>(p.num_kv_heads) * plan.head_chunks * plan.q_blocks;
  plan.residency = unified_residency(plan.tile, p.head_size, is_fp8(p.kv_dtype), dev.target);
  // The register-staged loader reads the rocm layout on every target (at most two LDS stages); the
  // residency stays the default tile's, so a workspace sized from the traits bounds the slots.
  plan.kv_layout = p.kv_layout;
  plan.kv_copy = p.kv_layout == KvCacheLayout::rocm ? CopyModel::register_staged
                                                    : unified_kv_copy(paged_decode_rules::rule_view(p), dev.target, plan.tile_kind);
  plan.tile = unified_tile_for_copy(plan.tile, plan.kv_copy);
  plan.fast_page = paged_decode_fast_page(p, plan.tile_kind, dev.target);

  const int32_t tile_keys = plan.tile.keys();
  const int32_t max_tiles = paged_decode_max_tiles(p, tile_keys);
  const int64_t budget = opt.workgroup_budget > 0 ? opt.workgroup_budget
                                                  : static_cast<int64_t>(std::max(1, plan.residency)) * dev.multiprocessor_count;
  if (opt.num_segments > 0 && opt.split != PagedDecodeSplit::uniform)
    throw Error(ErrorCode::invalid_argument, "options.num_segments",
                std::to_string(opt.num_segments) + ": a segment count is an option of the uniform split only (>= 1)");
  if (opt.batch_invariant_keys > 0 && opt.split == PagedDecodeSplit::uniform)
    throw Error(ErrorCode::invalid_argument, "options.split",
                "uniform with batch_invariant_keys (" + std::to_string(opt.batch_invariant_keys) +
                    "): batch-invariant plans split at fixed keys");
  // Uniform segments (as unified's 3D split) where they cut every sequence finely: >= 3 segments
  // each within 4 waves, of less than 16K keys where there are several sequences
  // (uniform_segments_long), so no sequence's part can be long. Otherwise (1 or 2 segments) a long
  // sequence among short ones would keep half its keys in one task: the planner's min-max tasks.
  // Uniform needs no planner launch (4-8 us on the H200), which is most of a small call's time.
  const int32_t uniform_segments =
      paged_decode_uniform_segments(int64_t(p.num_seqs) * plan.grid_y, budget, max_tiles);
  int32_t segments = 1;
  bool planned = false;
  switch (opt.split) {
    case PagedDecodeSplit::one_partition: plan.reason = "forced one partition"; break;
    case PagedDecodeSplit::planned: planned = true; plan.reason = "forced planned"; break;
    case PagedDecodeSplit::uniform:
      segments = opt.num_segments > 0 ? opt.num_segments : uniform_segments;
      plan.reason = "forced uniform";
      break;
    default:
      if (opt.batch_invariant_keys > 0) {
        planned = true;
        plan.reason = "auto: batch-invariant";
      } else if (max_tiles <= 1) {
        plan.reason = "auto: one partition (no sequence holds more than one tile)";
      } else if (uniform_segments >= 3 && (p.num_seqs <= 1 || !uniform_segments_long(max_tiles, uniform_segments, tile_keys))) {
        segments = uniform_segments;
        plan.reason = "auto: uniform (" + std::to_string(int64_t(p.num_seqs) * plan.grid_y) + " workgroups at one task a sequence)";
      } else {
        planned = true;
        plan.reason = "auto: planned (a sequence may hold " + std::to_string(max_tiles) + " tiles)";
      }
  }
  if (p.num_seqs == 0) {  // an empty batch launches nothing
    plan.reason += "; empty batch";
    return plan;
  }
  if (!planned) {
    plan.segments = segments;
    plan.capacity = static_cast<int32_t>(std::min<int64_t>(int64_t(p.num_seqs) * segments, 0x7fffffff));
    if (segments > 1) {
      plan.split = SlotSplit::uniform;
      plan.reason += "; " + std::to_string(segments) + " segments a sequence";
      plan.workspace_bytes = paged_decode_workspace(p, plan.capacity).total;
    }
    return plan;
  }
  plan.split = SlotSplit::planned;
  if (opt.batch_invariant_keys > 0) {
    plan.fixed_tiles = (opt.batch_invariant_keys + tile_keys - 1) / tile_keys;
    const int64_t per_seq = (max_tiles + plan.fixed_tiles - 1) / plan.fixed_tiles;
    plan.capacity = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(1, per_seq) * p.num_seqs, 0x7fffffff));
    plan.reason += "; batch-invariant: " + std::to_string(plan.fixed_tiles) + " tiles a task";
  } else {
    // Whole waves (planned_capacity, dispatch/workspace.hpp).
    plan.capacity = planned_capacity(p.num_seqs, budget, plan.grid_y, int64_t(max_tiles) * tile_keys);
    plan.wave_slots = planned_wave_slots(budget, plan.grid_y);
  }
  // A task stores its part count in 16 bits (PlanTask::parts): the most one sequence can get is
  // its tiles, and no more than the slots the other sequences leave.
  const int64_t most_parts = plan.fixed_tiles > 0 ? (max_tiles + plan.fixed_tiles - 1) / plan.fixed_tiles
                                                  : std::min<int64_t>(max_tiles, int64_t(plan.capacity) - p.num_seqs + 1);
  if (most_parts > kPlanMaxParts)
    throw Error(ErrorCode::unsupported, opt.batch_invariant_keys > 0 ? "options.batch_invariant_keys" : "options.workgroup_budget",
                "a sequence of max_seqlen_k (" + std::to_string(p.max_seqlen_k) + ") keys could take " +
                    std::to_string(most_parts) + " tasks; a plan holds at most " + std::to_string(kPlanMaxParts) +
                    " a sequence");
  if (int64_t(plan.capacity) * plan.grid_y > 0x7fffffff)
    throw Error(ErrorCode::unsupported, "num_seqs",
                std::to_string(plan.capacity) + " task slots x " + std::to_string(plan.grid_y) +
                    " workgroups a slot exceed a grid of 2^31 - 1");
  plan.reason += "; " + std::to_string(plan.capacity) + " task slots";
  plan.workspace_bytes = paged_decode_workspace(p, plan.capacity).total;
  return plan;
}

// Workspace bytes every call within `traits` needs on a device (the most over the q lengths, head
// sizes, KV storages and tiles the traits admit, under `opt`).
inline size_t paged_decode_workspace_size(const PagedDecodeTraits& t, const PlanDevice& dev,
                                          const PagedDecodeOptions& opt = {}) {
  throw_if_error(validate(t));
  throw_if_error(validate_options(opt));
  size_t most = 0;
  for (int32_t d : UnifiedInstanceTable::head_sizes) {
    if (d > t.max_head_size) continue;
    for (int32_t q = 1; q <= t.max_q_len; ++q)
      for (DType kv : {DType::bf16, DType::fp8_e4m3fn}) {
        PagedDecodeParams p;
        p.q_len = q;
        p.num_seqs = t.max_num_seqs;
        p.num_q_heads = t.num_q_heads;
        p.num_kv_heads = t.num_kv_heads;
        p.head_size = d;
        p.kv_dtype = kv;
        p.q_dtype = DType::bf16;
        p.max_seqlen_k = t.max_seqlen_k;
        const PagedDecodePlan plan = plan_paged_decode(p, opt, dev);
        most = std::max(most, plan.workspace_bytes);
        if (opt.split != PagedDecodeSplit::automatic && opt.split != PagedDecodeSplit::uniform) continue;
        if (opt.batch_invariant_keys > 0) continue;
        if (opt.split == PagedDecodeSplit::automatic && paged_decode_max_tiles(p, plan.tile.keys()) > 1) {
          // a call with a shorter context may be planned where these bounds split uniformly
          PagedDecodeOptions planned = opt;
          planned.split = PagedDecodeSplit::planned;
          most = std::max(most, plan_paged_decode(p, planned, dev).workspace_bytes);
        }
        // Uniform splits of fewer sequences: sequences x segments slots (the rule of plan_paged_decode).
        const int64_t budget = opt.workgroup_budget > 0 ? opt.workgroup_budget
                                                        : static_cast<int64_t>(std::max(1, plan.residency)) * dev.multiprocessor_count;
        const int32_t max_tiles = paged_decode_max_tiles(p, plan.tile.keys());
        int64_t slots = 0;
        for (int32_t ns = 1; ns <= t.max_num_seqs; ++ns) {
          const int32_t s = opt.num_segments > 0 ? opt.num_segments
                                                 : paged_decode_uniform_segments(int64_t(ns) * plan.grid_y, budget, max_tiles);
          if (opt.split == PagedDecodeSplit::automatic && s < 3) continue;
          slots = std::max<int64_t>(slots, int64_t(ns) * s);
        }
        if (slots > 1) most = std::max(most, paged_decode_workspace(p, static_cast<int32_t>(std::min<int64_t>(slots, 0x7fffffff))).total);
      }
  }
  return most;
}

// The unified instance a paged-decode problem runs on: its unified view's, except that the rocm
// layout never takes the fp8 matrix path (no q8 instance compiles its configurations: the queries
// are converted as they load, CHANGELOG.md 2026-12-02).
inline InstanceKey paged_decode_instance_key(const PagedDecodeParams& p, Target target) {
  InstanceKey key = unified_instance_key(to_unified_params(p, nullptr), target);
  key.family = Family::paged_decode;
  if (p.kv_layout == KvCacheLayout::rocm && kv_fp8_matmul(key.kv)) key.kv = kv_storage(key.kv);
  return key;
}

}  // namespace hipattn
