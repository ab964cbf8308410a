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
// The plan: dispatch/mla_decode_plan.hpp (ALGORITHM.md section 11); the arguments:
// dispatch/mla_decode_launch.hpp.
//
// Targets: sm_90 (the warp-specialised kernel of kernels/mla_decode/kernels.hpp, 64 rows a row block
// in order i x num_heads + h), gfx942 and gfx950 (the attention skeleton with paged decode's scheduler,
// MlaDecodeCdnaConfig: its row map packs min(num_heads, rows) heads of a token, so a row block is
// (head chunk, q-block) of the skeleton's row map).
#pragma once
#include <cstddef>
#include <string>

#include "hipattn/dispatch/mla_decode_launch.hpp"
#include "hipattn/dispatch/mla_decode_plan.hpp"
#include "hipattn/dispatch/registry.hpp"

#if defined(HIPATTN_HAS_DEVICE)
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
  if (plan.split == SlotSplit::planned) {
    plan_decode_tasks_kernel<><<<1, kPlannerThreads, 0, stream>>>(make_mla_decode_plan_args(p, plan, workspace));
    HIPATTN_CHECK_LAUNCH();
  }
  kernel(dim3(static_cast<uint32_t>(int64_t(plan.capacity) * plan.row_blocks), 1, 1));
  HIPATTN_CHECK_LAUNCH();
  if (plan.split == SlotSplit::planned) {
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
  if (p.batch > 0) check_workspace(workspace, workspace_bytes, plan.workspace_bytes, plan.reason);
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
