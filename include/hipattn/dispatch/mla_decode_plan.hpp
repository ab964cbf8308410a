// hipattn/dispatch/mla_decode_plan.hpp: the planner of MLA decode (host only): the options and their
// checks, the plan (row blocks of the target's tile, one task a sequence or planned task slots), the
// workspace layout and its size from host traits, and the instance a problem runs on.
//
// The plan (ALGORITHM.md section 11): the workgroups are (task slot, row block) pairs, row blocks of
// the target's tile rows (mla_decode_tile, dispatch/tiles) of a sequence's q_len x num_heads rows, one
// workgroup an SM or CU (the kernels' shared memory: 227 KiB on sm_90; 55 of gfx942's 64 KiB, 145 of
// gfx950's 160). When the sequences alone give fewer than three quarters of the SMs (batch x row
// blocks < 0.75 x SMs), the call is planned: floor(SMs / row blocks) task slots, over which the device
// planner cuts the contexts (the min-max split); otherwise one task a sequence.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hipattn/dispatch/device.hpp"
#include "hipattn/dispatch/skeleton_args.hpp"
#include "hipattn/dispatch/tiles/tiles.hpp"
#include "hipattn/dispatch/workspace.hpp"
#include "hipattn/kernels/mla_decode/config.hpp"
#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/target.hpp"
#include "hipattn/problem/fp8_io.hpp"
#include "hipattn/problem/instance_key.hpp"
#include "hipattn/problem/mla_decode_params.hpp"
#include "hipattn/problem/mla_decode_rules.hpp"

namespace hipattn {

static_assert(kMlaKernelQkDim == kMlaQkDim && kMlaKernelVDim == kMlaLatentDim,
              "the MLA kernels' head is the problem's (kernels/mla_decode/config.hpp, problem/mla_decode_params.hpp)");

enum class MlaDecodeSplit : uint8_t {
  automatic,      // one task a sequence, or planned when the sequences leave SMs idle (above)
  one_partition,  // one task a sequence (forced)
  planned,        // the device planner's tasks (forced)
};

// Every field's zero is its default (a zero-filled struct plans automatically). plan_mla_decode and
// mla_decode_workspace_size check every field first (validate_options).
struct MlaDecodeOptions {
  MlaDecodeSplit split = MlaDecodeSplit::automatic;
  int32_t workgroup_budget = 0;  // planned: workgroups to fill (0: the device's SMs)
};

// The rules of the options' fields, each issue naming its field ("options.split") and value: split
// one of its enumerators (a C caller may pass any byte), workgroup_budget >= 0 (invalid_argument).
inline ValidationReport validate_options(const MlaDecodeOptions& o) {
  ValidationReport r;
  validation::enum_in(r, "options.split", o.split,
                      {{MlaDecodeSplit::automatic, "automatic"}, {MlaDecodeSplit::one_partition, "one_partition"},
                       {MlaDecodeSplit::planned, "planned"}});
  validation::at_least(r, "options.workgroup_budget", o.workgroup_budget, 0);
  return r;
}

struct MlaDecodePlan {
  int32_t row_blocks = 1;  // workgroups a task slot: sm_90 ceil(q_len x num_heads / 64); CDNA head_chunks x q_blocks
  int32_t tile_keys = 32;  // keys a KV tile (the planner's tile)
  // CDNA's row map (kernels/common/work.hpp row_coord): heads of a token a row block, tokens a row
  // block, head chunks and q-blocks of a sequence (row_blocks = head_chunks x q_blocks)
  int32_t rows_per_token = 1, block_q = 1, head_chunks = 1, q_blocks = 1;
  SlotSplit split = SlotSplit::one_partition;  // one_partition or planned
  int32_t capacity = 0;  // task slots (planned) or sequences
  size_t workspace_bytes = 0;
  std::string reason;
};

// Whether a call takes the CDNA fp8 matrix path (MlaDecodeCdnaConfig over a q8 kind: QK^T by the
// target's fp8 MFMA): fp8 queries over the cache format that MFMA reads (operand_kv_kind's rule:
// gfx950 e4m3fn queries over an e4m3fn cache; gfx942 either format over an e4m3fnuz cache, e4m3fn
// queries re-encoded). sm_90's MLA kernel converts fp8 queries (its products are wgmma's 16-bit ones).
inline bool mla_decode_cdna_q8(DType q_dtype, DType kv_dtype, Target t) {
  return is_cdna(t) && kv_fp8_matmul(operand_kv_kind(q_dtype, kv_dtype, Fp8Math::fp8_qk, t));
}

// The instance a call needs on `target` (a row of problem/instance_table.hpp): the 16-bit type of the
// query (for fp8 queries problem/fp8_io.hpp's compute dtype), the cache's kind, or the target's q8 kind
// on the CDNA fp8 matrix path.
inline InstanceKey mla_decode_instance_key(const MlaDecodeParams& p, Target target) {
  InstanceKey k;
  k.family = Family::mla_decode;
  k.target = target;
  k.bf16 = compute_dtype(p.q_dtype, p.kv_dtype, output_dtype(p.q_dtype, p.out_format)) == DType::bf16;
  k.kv = kv_kind_of(p.kv_dtype);
  if (mla_decode_cdna_q8(p.q_dtype, p.kv_dtype, target))
    k.kv = q8_kind_on(target);
  k.head_size = kMlaQkDim;
  k.head_size_v = kMlaLatentDim;
  k.variant = VariantKind::plain;
  return k;
}

// Whether `target` has an MLA decode kernel.
inline bool mla_decode_target_supported(Target t) { return target_has_tiles(t); }

inline SlotWorkspace mla_decode_workspace(int32_t capacity, int32_t batch, int32_t q_len, int32_t num_heads) {
  return slot_workspace(capacity, batch, int64_t(q_len) * num_heads, kMlaLatentDim);
}

inline MlaDecodePlan plan_mla_decode(const MlaDecodeParams& p, const MlaDecodeOptions& opt, const PlanDevice& dev) {
  throw_if_error(validate_options(opt));  // every option field in range before any is read
  if (!mla_decode_target_supported(dev.target))
    throw Error(ErrorCode::unsupported, "target",
                std::string("no MLA decode kernel for target ") + std::string(target_name(dev.target)) +
                    " (sm_90, gfx942, gfx950)");
  MlaDecodePlan plan;
  const MlaTile tile = mla_decode_tile(dev.target);
  plan.tile_keys = tile.keys;
  if (is_cdna(dev.target)) {
    const RowMap rm = skeleton_row_map(std::max(1, p.num_heads), tile.rows, std::max(1, p.q_len));  // one KV head
    plan.rows_per_token = rm.rows_per_token;
    plan.block_q = rm.block_q;
    plan.head_chunks = rm.head_chunks;
    plan.q_blocks = rm.q_blocks;
    plan.row_blocks = plan.head_chunks * plan.q_blocks;
  } else {
    const int64_t rows = int64_t(p.q_len) * p.num_heads;
    plan.row_blocks = static_cast<int32_t>(std::max<int64_t>(1, (rows + tile.rows - 1) / tile.rows));
  }
  const int64_t budget = opt.workgroup_budget > 0 ? opt.workgroup_budget : std::max(1, dev.multiprocessor_count);
  const int64_t base = int64_t(p.batch) * plan.row_blocks;
  bool planned = false;
  switch (opt.split) {
    case MlaDecodeSplit::automatic: planned = base * 4 < budget * 3; break;
    case MlaDecodeSplit::one_partition: planned = false; break;
    case MlaDecodeSplit::planned: planned = true; break;
  }
  if (planned) {
    plan.split = SlotSplit::planned;
    const int64_t per_wave = std::max<int64_t>(1, budget / plan.row_blocks);
    const int64_t cap = (std::max<int64_t>(1, p.batch) + per_wave - 1) / per_wave * per_wave;  // whole waves, >= batch
    if (cap > int64_t(1) << 24)
      throw Error(ErrorCode::unsupported, "batch", std::to_string(p.batch) + ": more task slots than one call plans");
    plan.capacity = static_cast<int32_t>(cap);
    plan.workspace_bytes = mla_decode_workspace(plan.capacity, p.batch, p.q_len, p.num_heads).total;
    plan.reason = "planned: " + std::to_string(plan.capacity) + " task slots x " + std::to_string(plan.row_blocks) +
                  " row blocks";
  } else {
    plan.capacity = p.batch;
    plan.reason = "one task a sequence";
  }
  return plan;
}

// Workspace bytes every call within `traits` needs on a device of `dev`, under `opt`: the largest
// plan a call within the bounds can make (planned calls have at most max(batch, the budget) slots of
// at most max_q_len x num_heads rows).
inline size_t mla_decode_workspace_size(const MlaDecodeTraits& t, const PlanDevice& dev, const MlaDecodeOptions& opt = {}) {
  throw_if_error(validate(t));
  throw_if_error(validate_options(opt));
  if (!mla_decode_target_supported(dev.target))
    throw Error(ErrorCode::unsupported, "target",
                std::string("no MLA decode kernel for target ") + std::string(target_name(dev.target)));
  if (opt.split == MlaDecodeSplit::one_partition) return 0;
  const int64_t budget = opt.workgroup_budget > 0 ? opt.workgroup_budget : std::max(1, dev.multiprocessor_count);
  const int64_t slots = std::max<int64_t>(std::max(1, t.max_batch), budget) + budget;  // whole waves of <= budget
  return mla_decode_workspace(static_cast<int32_t>(std::min<int64_t>(slots, int64_t(1) << 24)), std::max(1, t.max_batch),
                              t.max_q_len, t.num_heads)
      .total;
}

}  // namespace hipattn
