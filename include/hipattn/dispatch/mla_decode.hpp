// hipattn/dispatch/mla_decode.hpp: the host entry point of MLA decode.
//
//   // once, from what the host knows before any call (bounds):
//   size_t bytes = hipattn::mla_decode_workspace_size(traits);   // MlaDecodeTraits
//   void* ws = ...;                                               // the caller's, 16-byte aligned
//   // every step (and inside a graph capture):
//   hipattn::mla_decode(params, ws, bytes, stream);
//
// A call validates the params (throws hipattn::Error naming the field), plans on the host from host
// values only, then launches the device planner (planned calls: kernels/common/task_plan.hpp, the one
// paged decode uses), the kernel and the reduce (paged decode's, over the same workspace layout) on
// `stream`. It never allocates and never synchronizes; the grid depends on host values only, so a
// captured graph replays with other seq_lens_k and block tables. The output format (out_format: 16-bit,
// fp8 per tensor or per group) is a runtime value of the launch arguments: the kernel's epilogue and
// the reduce write every format from the same instances.
//
// The plan (ALGORITHM.md section 11): the workgroups are (task slot, row block) pairs, row blocks of
// the target's tile rows (mla_decode_tile) of a sequence's q_len x num_heads rows, one workgroup an SM
// or CU (the kernels' shared memory: 227 KiB on sm_90; 55 of gfx942's 64 KiB, 145 of gfx950's 160).
// When the sequences alone give fewer than three quarters of the SMs (batch x row blocks < 0.75 x
// SMs), the call is planned: floor(SMs / row blocks) task slots, over which the device planner cuts
// the contexts (the min-max split); otherwise one task a sequence.
//
// Targets: sm_90 (the warp-specialised kernel of kernels/mla_decode/kernels.hpp, 64 rows a row block
// in order i x num_heads + h), gfx942 and gfx950 (the attention skeleton with paged decode's scheduler,
// MlaDecodeCdnaConfig: its row map packs min(num_heads, rows) heads of a token, so a row block is
// (head chunk, q-block) of the skeleton's row map).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hipattn/dispatch/output_args.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/kernels/mla_decode/config.hpp"
#include "hipattn/kernels/paged_decode/config.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/target.hpp"
#include "hipattn/tile/online_softmax.hpp"
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
  bool planned = false;
  int32_t capacity = 0;  // task slots (planned) or sequences
  size_t workspace_bytes = 0;
  std::string reason;
};

// The tile of a target's MLA kernel: query rows a workgroup and keys a KV tile (MlaDecodeSm90Config,
// MlaDecodeCdnaConfig; the launchers check that they agree).
struct MlaTile {
  int32_t rows = 64, keys = 32;
};
constexpr MlaTile mla_decode_tile(Target t) {
  if (t == Target::gfx942) return {32, 16};
  return {64, 32};  // sm_90, gfx950
}

// Whether a call takes the CDNA fp8 matrix path (MlaDecodeCdnaConfig over a q8 kind: QK^T by the
// target's fp8 MFMA): fp8 queries over the cache format that MFMA reads (unified_operand_kind's rule:
// gfx950 e4m3fn queries over an e4m3fn cache; gfx942 either format over an e4m3fnuz cache, e4m3fn
// queries re-encoded). sm_90's MLA kernel converts fp8 queries (its products are wgmma's 16-bit ones).
inline bool mla_decode_cdna_q8(DType q_dtype, DType kv_dtype, Target t) {
  return is_cdna(t) && kv_fp8_matmul(unified_operand_kind(q_dtype, kv_dtype, Fp8Math::fp8_qk, t));
}

// The instance a call needs on `target` (a row of problem/instance_table.hpp): the 16-bit type of the
// query (for fp8 queries problem/fp8_io.hpp's compute dtype), the cache's kind, or the target's q8 kind
// on the CDNA fp8 matrix path.
inline InstanceKey mla_decode_instance_key(const MlaDecodeParams& p, Target target) {
  InstanceKey k;
  k.family = Family::mla_decode;
  k.target = target;
  k.bf16 = compute_dtype(p.q_dtype, p.kv_dtype, output_dtype(p.q_dtype, p.out_format)) == DType::bf16;
  k.kv = p.kv_dtype == DType::fp8_e4m3fn ? KvKind::e4m3fn : p.kv_dtype == DType::fp8_e4m3fnuz ? KvKind::e4m3fnuz : KvKind::same16;
  if (mla_decode_cdna_q8(p.q_dtype, p.kv_dtype, target))
    k.kv = target == Target::gfx942 ? KvKind::e4m3fnuz_q8 : KvKind::e4m3fn_q8;
  k.head_size = kMlaQkDim;
  k.head_size_v = kMlaLatentDim;
  k.variant = VariantKind::plain;
  return k;
}

// Whether `target` has an MLA decode kernel.
inline bool mla_decode_target_supported(Target t) {
  return t == Target::sm90 || t == Target::gfx942 || t == Target::gfx950;
}

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
  switch (opt.split) {
    case MlaDecodeSplit::automatic: plan.planned = base * 4 < budget * 3; break;
    case MlaDecodeSplit::one_partition: plan.planned = false; break;
    case MlaDecodeSplit::planned: plan.planned = true; break;
  }
  if (plan.planned) {
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

// The output of `p` in its format (problem/fp8_io.hpp), as both the kernel (sequences in one task) and
// the reduce (split sequences, after the merge) write it.
inline OutputArgs mla_decode_output_args(const MlaDecodeParams& p) {
  return make_output_args(p.out, p.o_stride_token, p.o_stride_head, p.q_dtype, p.out_format, kMlaLatentDim);
}

// The rope part of the queries: q_rope by its strides, or (joined) the 512th element of q's rows by
// q's strides (fp8 queries: the 512th code). Both kernels' argument builders take it.
struct MlaRopeView {
  const uint16_t* ptr;
  int64_t stride_token, stride_head;
};
inline MlaRopeView mla_rope_view(const MlaDecodeParams& p) {
  if (p.q_rope != nullptr) return {static_cast<const uint16_t*>(p.q_rope), p.q_rope_stride_token, p.q_rope_stride_head};
  const auto* q8 = static_cast<const uint8_t*>(p.q);
  return {reinterpret_cast<const uint16_t*>(q8 + kMlaLatentDim * int64_t(dtype_size(p.q_dtype))), p.q_stride_token,
          p.q_stride_head};
}

// The kernel's arguments for `p` under `plan` (workspace: the plan's, or null for one partition).
inline MlaDecodeKernelArgs make_mla_decode_kernel_args(const MlaDecodeParams& p, const MlaDecodePlan& plan,
                                                       void* workspace) {
  MlaDecodeKernelArgs a;
  a.q_kind = unified_kv_kind(p.q_dtype);
  if (is_fp8(p.q_dtype)) {
    a.q_scale = p.q_scale.device;
    a.q_scale_value = p.q_scale.host_or_one();
  }
  a.q = static_cast<const uint16_t*>(p.q);
  a.q_stride_token = p.q_stride_token;
  a.q_stride_head = p.q_stride_head;
  const MlaRopeView rope = mla_rope_view(p);
  a.q_rope = rope.ptr;
  a.q_rope_stride_token = rope.stride_token;
  a.q_rope_stride_head = rope.stride_head;
  const int64_t esize = static_cast<int64_t>(dtype_size(p.kv_dtype));
  a.kv = static_cast<const uint8_t*>(p.kv_cache);
  a.kv_stride_page_bytes = p.kv_stride_page * esize;
  a.kv_stride_slot_bytes = p.kv_stride_slot * esize;
  a.page_div = FastDivmod(static_cast<uint32_t>(std::max(1, p.page_size)));
  a.kv_scale = p.kv_scale;
  a.kv_scale_value = p.kv_scale_value_or_one();
  a.block_table = p.block_table;
  a.block_table_stride = p.block_table_stride;
  a.seq_lens_k = p.seq_lens_k;
  a.batch = p.batch;
  a.q_len = p.q_len;
  a.num_heads = p.num_heads;
  a.rows = p.q_len * p.num_heads;
  a.row_blocks = plan.row_blocks;
  a.heads_div = FastDivmod(static_cast<uint32_t>(std::max(1, p.num_heads)));
  a.scale_log2 = p.scale * static_cast<float>(kLog2e);
  a.out = mla_decode_output_args(p);
  a.lse = p.lse;
  a.lse_stride_token = p.lse_stride_token;
  a.lse_stride_head = p.lse_stride_head;
  if (plan.planned) {
    const SlotBuffers b = slot_buffers(mla_decode_workspace(plan.capacity, p.batch, p.q_len, p.num_heads), workspace);
    a.tasks = b.tasks;
    a.item_task0 = b.item_task0;
    a.ws_o = b.o;
    a.ws_lse = b.lse;
  }
  return a;
}

// The device planner's arguments (planned calls).
inline DecodePlanArgs make_mla_decode_plan_args(const MlaDecodeParams& p, const MlaDecodePlan& plan, void* workspace) {
  const SlotBuffers b = slot_buffers(mla_decode_workspace(plan.capacity, p.batch, p.q_len, p.num_heads), workspace);
  DecodePlanArgs a;
  a.seq_lens_k = p.seq_lens_k;
  a.num_items = p.batch;
  a.shape = DecodeItemShape{p.q_len, plan.tile_keys, true, -1};
  a.capacity = plan.capacity;
  a.fixed_tiles = 0;
  a.tasks = b.tasks;
  a.item_task0 = b.item_task0;
  a.status = b.status;
  return a;
}

// The reduce's arguments (planned calls): paged decode's reduce over the same slot layout.
inline PagedDecodeReduceArgs make_mla_decode_reduce_args(const MlaDecodeParams& p, const MlaDecodePlan& plan,
                                                         void* workspace) {
  const SlotBuffers b = slot_buffers(mla_decode_workspace(plan.capacity, p.batch, p.q_len, p.num_heads), workspace);
  PagedDecodeReduceArgs r;
  r.ws_o = b.o;
  r.ws_lse = b.lse;
  r.tasks = b.tasks;
  r.item_task0 = b.item_task0;
  r.num_segments = 1;
  r.num_seqs = p.batch;
  r.q_len = p.q_len;
  r.num_q_heads = p.num_heads;
  r.sinks = nullptr;
  r.out = mla_decode_output_args(p);
  r.lse = p.lse;
  r.lse_stride_head = static_cast<int32_t>(p.lse_stride_head);
  r.lse_stride_token = static_cast<int32_t>(p.lse_stride_token);
  return r;
}

// The CDNA kernel's arguments (MlaDecodeCdnaConfig: the skeleton's, as paged decode fills them, over a
// view of the latent cache as one KV head whose V rows are its K rows). Strides are validated < 2^31.
template <class Cfg>
mla_cdna_args_t<Cfg> make_mla_decode_cdna_args(const MlaDecodeParams& p, const MlaDecodePlan& plan, void* workspace) {
  static_assert(is_cdna(Cfg::kTarget), "a CDNA configuration");
  mla_cdna_args_t<Cfg> a;
  a.q_kind = unified_kv_kind(p.q_dtype);  // fp8 queries: converted exactly as Q loads
  if (is_fp8(p.q_dtype)) {
    a.q_scale_tensor = p.q_scale.device;
    a.q_scale_value = p.q_scale.host_or_one();
  }
  a.q = static_cast<const uint16_t*>(p.q);
  a.q_stride_token = static_cast<int32_t>(p.q_stride_token);
  a.q_stride_head = static_cast<int32_t>(p.q_stride_head);
  const MlaRopeView rope = mla_rope_view(p);
  a.q_rope = rope.ptr;
  a.q_rope_stride_token = static_cast<int32_t>(rope.stride_token);
  a.q_rope_stride_head = static_cast<int32_t>(rope.stride_head);
  a.kv.k = a.kv.v = p.kv_cache;
  a.kv.k_stride_block = a.kv.v_stride_block = static_cast<int32_t>(p.kv_stride_page);
  a.kv.k_stride_slot = a.kv.v_stride_slot = static_cast<int32_t>(p.kv_stride_slot);
  a.kv.block_table = p.block_table;
  a.kv.block_table_stride = static_cast<int32_t>(p.block_table_stride);
  a.kv.page_size = p.page_size;
  a.kv.page_div = FastDivmod(static_cast<uint32_t>(std::max(1, p.page_size)));
  if (is_fp8(p.kv_dtype)) {  // one per-tensor scale: K's (the scores) and V's (the output)
    a.k_scale_tensor = a.v_scale_tensor = p.kv_scale;
    a.k_scale_value = a.v_scale_value = p.kv_scale_value_or_one();
  }
  a.seq_lens_k = p.seq_lens_k;
  a.num_seqs = p.batch;
  a.num_q_heads = p.num_heads;
  a.group = p.num_heads;  // one KV head
  a.rows_per_token = plan.rows_per_token;
  a.block_q = plan.block_q;
  a.head_chunks = plan.head_chunks;
  a.rows_div = FastDivmod(static_cast<uint32_t>(plan.rows_per_token));
  a.scale = p.scale;
  a.causal = true;  // the q_len rows of a sequence, bottom-right
  a.window_left = -1;
  a.out = mla_decode_output_args(p);
  a.lse = p.lse;
  a.lse_stride_head = static_cast<int32_t>(p.lse_stride_head);
  a.lse_stride_token = static_cast<int32_t>(p.lse_stride_token);
  a.q_len = p.q_len;
  a.q_blocks = plan.q_blocks;
  a.grid_y_div = FastDivmod(static_cast<uint32_t>(plan.row_blocks));
  a.num_segments = 1;
  if (plan.planned) {
    const SlotBuffers b = slot_buffers(mla_decode_workspace(plan.capacity, p.batch, p.q_len, p.num_heads), workspace);
    a.tasks = b.tasks;
    a.ws_o = b.o;
    a.ws_lse = b.lse;
  }
  return a;
}

}  // namespace hipattn

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/dispatch/registry.hpp"
#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/kernels/mla_decode/kernels.hpp"
#include "hipattn/kernels/paged_decode/kernels.hpp"

namespace hipattn {

// Workspace bytes every call within `traits` needs on the current device, under `opt`.
inline size_t mla_decode_workspace_size(const MlaDecodeTraits& traits, const MlaDecodeOptions& opt = {}) {
  return mla_decode_workspace_size(traits, plan_device(rt::cached_device_properties()), opt);
}

namespace detail {

// The planner (planned calls), `kernel(grid)` (the target's MLA kernel over capacity x row blocks
// workgroups), then paged decode's reduce (planned calls).
template <bool kBf16, class Kernel>
void run_mla_decode(const MlaDecodeParams& p, const MlaDecodePlan& plan, void* workspace, rt::stream_t stream,
                    Kernel&& kernel) {
  if (plan.planned) {
    plan_decode_tasks_kernel<><<<1, kPlannerThreads, 0, stream>>>(make_mla_decode_plan_args(p, plan, workspace));
    HIPATTN_CHECK_LAUNCH();
  }
  kernel(dim3(static_cast<uint32_t>(int64_t(plan.capacity) * plan.row_blocks), 1, 1));
  HIPATTN_CHECK_LAUNCH();
  if (plan.planned) {
    constexpr int kThreads = split_kv_reduce_threads(kMlaLatentDim);
    constexpr int kPer = split_kv_reduce_items_per_block(kMlaLatentDim);
    const int64_t items = int64_t(p.batch) * p.q_len * p.num_heads;
    paged_decode_reduce_kernel<kBf16, kMlaLatentDim, kThreads>
        <<<dim3(static_cast<uint32_t>((items + kPer - 1) / kPer), 1, 1), kThreads, 0, stream>>>(
            make_mla_decode_reduce_args(p, plan, workspace));
    HIPATTN_CHECK_LAUNCH();
  }
}

template <bool kBf16, KvKind kKv>
std::string mla_kernel_name(const char* kernel, Target t) {
  return std::string(kernel) + "<" + std::string(target_name(t)) + ", " + (kBf16 ? "bf16" : "f16") + ", kv " +
         std::to_string(static_cast<int>(kKv)) + ">";
}

template <Target kT, bool kBf16, KvKind kKv>
void launch_mla_decode(const MlaDecodeParams& p, const MlaDecodePlan& plan, void* workspace, rt::stream_t stream) {
  if constexpr (kT == Target::sm90) {
#if defined(HIPATTN_BACKEND_CUDA)
    using Cfg = MlaDecodeSm90Config<kBf16, kKv>;
    static_assert(Cfg::kBM == mla_decode_tile(kT).rows && Cfg::kBN == mla_decode_tile(kT).keys,
                  "the plan's tiles are the kernel's (mla_decode_tile)");
    const MlaDecodeKernelArgs a = make_mla_decode_kernel_args(p, plan, workspace);
    rt::ensure_max_dynamic_shared(mla_decode_sm90_kernel<Cfg>, Cfg::kSmemBytes,
                                  [] { return mla_kernel_name<kBf16, kKv>("mla_decode_sm90_kernel", kT); });
    run_mla_decode<kBf16>(p, plan, workspace, stream, [&](dim3 grid) {
      mla_decode_sm90_kernel<Cfg><<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a);
    });
#endif
  } else {
    using Cfg = MlaDecodeCdnaConfig<kT, kBf16, kKv>;
    const auto a = make_mla_decode_cdna_args<Cfg>(p, plan, workspace);
    static_assert(Cfg::kBM == mla_decode_tile(kT).rows && Cfg::kBN == mla_decode_tile(kT).keys,
                  "the plan's tiles are the kernel's (mla_decode_tile)");
    rt::ensure_max_dynamic_shared(mla_decode_cdna_kernel<Cfg>, Cfg::kSmemBytes,
                                  [] { return mla_kernel_name<kBf16, kKv>("mla_decode_cdna_kernel", kT); });
    run_mla_decode<kBf16>(p, plan, workspace, stream, [&](dim3 grid) {
      mla_decode_cdna_kernel<Cfg><<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a);
    });
  }
}

// A row of the table behind a fixed signature (the unit of the registries and instance libraries).
using MlaDecodeLaunchFn = void (*)(const MlaDecodeParams&, const MlaDecodePlan&, void*, rt::stream_t);
template <InstanceKey kK>
void launch_mla_decode_standard(const MlaDecodeParams& p, const MlaDecodePlan& plan, void* ws, rt::stream_t s) {
  static_assert(kK.family == Family::mla_decode && kK.head_size == kMlaQkDim && kK.head_size_v == kMlaLatentDim,
                "an MLA decode row");
  launch_mla_decode<kK.target, kK.bf16, kK.kv>(p, plan, ws, s);
}
struct MlaDecodeLaunchers {
  static constexpr Family kFamily = Family::mla_decode;
  static constexpr bool kCustom = false;
  using LaunchFn = MlaDecodeLaunchFn;
  template <InstanceKey kK>
  static constexpr LaunchFn get() { return &launch_mla_decode_standard<kK>; }
};

// Validation, plan and workspace checks of a call; the plan to launch.
inline MlaDecodePlan prepare_mla_decode_call(const MlaDecodeParams& p, void* workspace, size_t workspace_bytes,
                                             const MlaDecodeOptions& opt) {
  throw_if_error(validate(p));
  const MlaDecodePlan plan = plan_mla_decode(p, opt, plan_device(checked_device()));
  if (plan.workspace_bytes > 0 && p.batch > 0) {
    if (workspace == nullptr || workspace_bytes < plan.workspace_bytes)
      throw Error(ErrorCode::workspace, "workspace",
                  std::to_string(workspace_bytes) + " bytes given, " + std::to_string(plan.workspace_bytes) +
                      " needed (" + plan.reason + ")");
    if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
      throw Error(ErrorCode::workspace, "workspace", "not 16-byte aligned");
  }
  return plan;
}

}  // namespace detail

// Run MLA decode. `workspace` must hold the plan's bytes (mla_decode_workspace_size of traits that
// bound this call suffices), 16-byte aligned; it may be null when the plan needs none. kFilter: the
// instances this translation unit compiles (every MLA row of the table by default).
template <InstanceFilter kFilter = kAllInstances>
void mla_decode(const MlaDecodeParams& p, void* workspace, size_t workspace_bytes, rt::stream_t stream,
                const MlaDecodeOptions& opt = {}) {
  const MlaDecodePlan plan = detail::prepare_mla_decode_call(p, workspace, workspace_bytes, opt);
  if (p.batch == 0) return;
  const InstanceKey key = mla_decode_instance_key(p, rt::cached_device_properties().target);
  find_instance(header_registry<detail::MlaDecodeLaunchers, kFilter>(), key)(p, plan, workspace, stream);
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
