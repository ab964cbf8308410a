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
// 64 of a sequence's q_len x num_heads rows, one workgroup an SM (the kernel's 227 KiB of shared
// memory). When the sequences alone give fewer than three quarters of the SMs
// (batch x row blocks < 0.75 x SMs), the call is planned: floor(SMs / row blocks) task slots, over
// which the device planner cuts the contexts (the min-max split); otherwise one task a sequence.
//
// Targets: sm_90 (the warp-specialised kernel of kernels/mla_decode/kernels.hpp). The CDNA MLA kernel
// is not written yet: gfx942 / gfx950 calls throw ErrorCode::unsupported naming the target.
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

enum class MlaDecodeSplit : uint8_t {
  automatic,      // one task a sequence, or planned when the sequences leave SMs idle (above)
  one_partition,  // one task a sequence (forced)
  planned,        // the device planner's tasks (forced)
};

struct MlaDecodeOptions {
  MlaDecodeSplit split = MlaDecodeSplit::automatic;
  int32_t workgroup_budget = 0;  // planned: workgroups to fill (0: the device's SMs)
};

struct MlaDecodePlan {
  int32_t row_blocks = 1;  // ceil(q_len x num_heads / 64)
  bool planned = false;
  int32_t capacity = 0;  // task slots (planned) or sequences
  size_t workspace_bytes = 0;
  std::string reason;
};

inline constexpr int32_t kMlaBlockRows = 64, kMlaTileKeys = 32;  // MlaDecodeSm90Config's kBM, kBN

// Whether `target` has an MLA decode kernel.
inline bool mla_decode_target_supported(Target t) { return t == Target::sm90; }

inline SlotWorkspace mla_decode_workspace(int32_t capacity, int32_t batch, int32_t q_len, int32_t num_heads) {
  return slot_workspace(capacity, batch, int64_t(q_len) * num_heads, kMlaLatentDim);
}

inline MlaDecodePlan plan_mla_decode(const MlaDecodeParams& p, const MlaDecodeOptions& opt, const PlanDevice& dev) {
  if (!mla_decode_target_supported(dev.target))
    throw Error(ErrorCode::unsupported, "target",
                std::string("no MLA decode kernel for target ") + std::string(target_name(dev.target)) +
                    " yet (sm_90 only; the CDNA kernel is open work, docs/NEXT.md)");
  if (opt.workgroup_budget < 0)
    throw Error(ErrorCode::invalid_argument, "options.workgroup_budget", std::to_string(opt.workgroup_budget) + " < 0");
  MlaDecodePlan plan;
  const int64_t rows = int64_t(p.q_len) * p.num_heads;
  plan.row_blocks = static_cast<int32_t>(std::max<int64_t>(1, (rows + kMlaBlockRows - 1) / kMlaBlockRows));
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
  if (!mla_decode_target_supported(dev.target))
    throw Error(ErrorCode::unsupported, "target",
                std::string("no MLA decode kernel for target ") + std::string(target_name(dev.target)) + " yet");
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

// The kernel's arguments for `p` under `plan` (workspace: the plan's, or null for one partition).
inline MlaDecodeKernelArgs make_mla_decode_kernel_args(const MlaDecodeParams& p, const MlaDecodePlan& plan,
                                                       void* workspace) {
  MlaDecodeKernelArgs a;
  a.q = static_cast<const uint16_t*>(p.q);
  a.q_stride_token = p.q_stride_token;
  a.q_stride_head = p.q_stride_head;
  if (p.q_rope != nullptr) {
    a.q_rope = static_cast<const uint16_t*>(p.q_rope);
    a.q_rope_stride_token = p.q_rope_stride_token;
    a.q_rope_stride_head = p.q_rope_stride_head;
  } else {
    a.q_rope = a.q + kMlaLatentDim;
    a.q_rope_stride_token = p.q_stride_token;
    a.q_rope_stride_head = p.q_stride_head;
  }
  const int64_t esize = static_cast<int64_t>(dtype_size(p.kv_dtype));
  a.kv = static_cast<const uint8_t*>(p.kv_cache);
  a.kv_stride_page_bytes = p.kv_stride_page * esize;
  a.kv_stride_slot_bytes = p.kv_stride_slot * esize;
  a.page_div = FastDivmod(static_cast<uint32_t>(std::max(1, p.page_size)));
  a.kv_scale = p.kv_scale;
  a.kv_scale_value = p.kv_scale_value;
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
  a.shape = DecodeItemShape{p.q_len, kMlaTileKeys, true, -1};
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

}  // namespace hipattn

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/dispatch/unified_attention.hpp"
#include "hipattn/kernels/paged_decode/kernels.hpp"
#if defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/kernels/mla_decode/kernels.hpp"
#endif

namespace hipattn {

// Workspace bytes every call within `traits` needs on the current device, under `opt`.
inline size_t mla_decode_workspace_size(const MlaDecodeTraits& traits, const MlaDecodeOptions& opt = {}) {
  return mla_decode_workspace_size(traits, plan_device(rt::cached_device_properties()), opt);
}

namespace detail {

template <bool kBf16, KvKind kKv>
void launch_mla_decode(const MlaDecodeParams& p, const MlaDecodePlan& plan, void* workspace, rt::stream_t stream) {
#if defined(HIPATTN_BACKEND_CUDA)
  using Cfg = MlaDecodeSm90Config<kBf16, kKv>;
  static_assert(Cfg::kBM == kMlaBlockRows && Cfg::kBN == kMlaTileKeys, "the plan's tiles are the kernel's");
  const MlaDecodeKernelArgs a = make_mla_decode_kernel_args(p, plan, workspace);
  rt::ensure_max_dynamic_shared(mla_decode_sm90_kernel<Cfg>, Cfg::kSmemBytes, [] {
    return std::string("mla_decode_sm90_kernel<") + (kBf16 ? "bf16" : "f16") + ", kv " +
           std::to_string(static_cast<int>(kKv)) + ">";
  });
  if (plan.planned) {
    plan_decode_tasks_kernel<><<<1, kPlannerThreads, 0, stream>>>(make_mla_decode_plan_args(p, plan, workspace));
    HIPATTN_CHECK_LAUNCH();
  }
  const int64_t grid = int64_t(plan.capacity) * plan.row_blocks;
  mla_decode_sm90_kernel<Cfg><<<dim3(static_cast<uint32_t>(grid), 1, 1), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a);
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
#else
  (void)p, (void)plan, (void)workspace, (void)stream;
  throw Error(ErrorCode::unsupported, "target", "no MLA decode kernel for this backend's targets yet (sm_90 only)");
#endif
}

}  // namespace detail

// Run MLA decode. `workspace` must hold the plan's bytes (mla_decode_workspace_size of traits that
// bound this call suffices), 16-byte aligned; it may be null when the plan needs none. A template so
// that only the translation units that call it instantiate its kernels.
template <class = void>
void mla_decode(const MlaDecodeParams& p, void* workspace, size_t workspace_bytes, rt::stream_t stream,
                const MlaDecodeOptions& opt = {}) {
  throw_if_error(validate(p));
  const rt::DeviceProperties& props = rt::cached_device_properties();
  const MlaDecodePlan plan = plan_mla_decode(p, opt, plan_device(props));
  if (p.batch == 0) return;
  if (plan.workspace_bytes > 0) {
    if (workspace == nullptr || workspace_bytes < plan.workspace_bytes)
      throw Error(ErrorCode::workspace, "workspace",
                  std::to_string(workspace_bytes) + " bytes given, " + std::to_string(plan.workspace_bytes) +
                      " needed (" + plan.reason + ")");
    if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
      throw Error(ErrorCode::workspace, "workspace", "not 16-byte aligned");
  }
  const bool bf16 = p.q_dtype == DType::bf16;
  switch (p.kv_dtype) {
    case DType::fp8_e4m3fn:
      return bf16 ? detail::launch_mla_decode<true, KvKind::e4m3fn>(p, plan, workspace, stream)
                  : detail::launch_mla_decode<false, KvKind::e4m3fn>(p, plan, workspace, stream);
    case DType::fp8_e4m3fnuz:
      return bf16 ? detail::launch_mla_decode<true, KvKind::e4m3fnuz>(p, plan, workspace, stream)
                  : detail::launch_mla_decode<false, KvKind::e4m3fnuz>(p, plan, workspace, stream);
    default:
      return bf16 ? detail::launch_mla_decode<true, KvKind::same16>(p, plan, workspace, stream)
                  : detail::launch_mla_decode<false, KvKind::same16>(p, plan, workspace, stream);
  }
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
