// hipattn/dispatch/unified_attention.hpp: the host entry point of unified paged/varlen attention.
//
//   size_t bytes = hipattn::unified_attention_workspace_size(params);   // 0 unless 3D is chosen
//   hipattn::unified_attention(params, workspace, bytes, stream);
//
// Validates the problem (throws hipattn::Error naming the field), plans (dispatch/unified_plan.hpp),
// maps the runtime traits (target, q dtype, kv dtype, head size, variant; then tile kind and path) to
// one compiled instance and launches it. Nothing is allocated; the workspace is the caller's.
//
// Which instances exist: every unified row of the instance table (problem/instance_table.hpp) by
// default, compiled in the caller's translation unit; a subset with unified_attention<filter>(...)
// (the registry: dispatch/registry.hpp). An instance library built by hipattn_add_instances() has
// entry points of its own, hipattn::prebuilt::* (dispatch/prebuilt.hpp): two names for two modes, so
// no macro changes what a function of this header compiles.
#pragma once
#include <mutex>

#if defined(HIPATTN_UNIFIED_PREBUILT)
#error "HIPATTN_UNIFIED_PREBUILT is gone: an instance library's entry points are hipattn::prebuilt::unified_attention / paged_decode (hipattn/dispatch/prebuilt.hpp); hipattn::unified_attention always compiles its filter's instances in the calling translation unit"
#endif

#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/kernels/unified/kernels.hpp"
#include "hipattn/kernels/unified/warpgroup.hpp"
#include "hipattn/platform/runtime.hpp"
#include "hipattn/problem/unified_rules.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

// Workspace bytes unified_attention needs for `p` on the current device (0 for the 2D path).
inline size_t unified_attention_workspace_size(const UnifiedAttentionParams& p, const UnifiedOptions& opt = {}) {
  throw_if_error(validate(p));
  return plan_unified_attention(p, opt, plan_device(rt::cached_device_properties())).workspace_bytes;
}

namespace detail {

// Launch one compiled configuration: arguments, grids and LDS from dispatch/unified_launch.hpp. The
// 2D / 3D kernel's dynamic shared-memory limit is raised first, once per device
// (rt::ensure_max_dynamic_shared; it throws, launching nothing, when the runtime refuses).
template <class Cfg>
void launch_unified_config(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* workspace,
                           rt::stream_t stream, const typename Cfg::Variant& variant) {
  const unified_args_t<Cfg> a = make_unified_kernel_args<Cfg>(p, plan, workspace, variant);
  const UnifiedLaunchGeometry g = make_unified_launch_geometry<Cfg>(p, plan);
  if (g.empty) return;
  const dim3 grid(g.grid.x, g.grid.y, g.grid.z);
  if constexpr (pingpong_schedule<Cfg>()) {  // the ping-pong runs the 2D grid only (unified_pingpong_refusal)
    if (g.split) throw Error(ErrorCode::unsupported, "options.path", "the ping-pong schedule runs the 2D grid");
    rt::ensure_max_dynamic_shared(unified_2d_kernel<Cfg>, Cfg::kSmemBytes,
                                  [] { return config_name<Cfg>("unified_2d_kernel, ping-pong"); });
    unified_2d_kernel<Cfg><<<grid, g.threads, g.dynamic_lds, stream>>>(a);
    HIPATTN_CHECK_LAUNCH();
  } else if (g.split) {
    rt::ensure_max_dynamic_shared(split_kv_3d_kernel<Cfg>, Cfg::kSmemBytes,
                                  [] { return config_name<Cfg>("split_kv_3d_kernel"); });
    // planner -> 3D kernel -> reduce, in stream order. Programmatic launch (rt::LaunchOrder) measured
    // 1.5 % faster on decode_d128_b16 but 5 % slower on serve_decode_mixed_15x2k_1x128k (the reduce's
    // workgroups, launched early, hold SMs the 3D kernel's tail needs): bench/NOTES.md run v23.
    if (plan.grid == UnifiedGrid::split_planned) {  // the tasks of this call's lengths, on the device (graph-safe)
      plan_decode_tasks_kernel<><<<1, kPlannerThreads, 0, stream>>>(make_unified_plan_args(p, plan, workspace, Cfg::kBN));
      HIPATTN_CHECK_LAUNCH();
    }
    split_kv_3d_kernel<Cfg><<<grid, g.threads, g.dynamic_lds, stream>>>(a);
    HIPATTN_CHECK_LAUNCH();
    const SplitKvReduceArgs r = make_split_kv_reduce_args(p, plan, workspace, Cfg::kD);
    split_kv_reduce_kernel<Cfg::kBf16, Cfg::kD, split_kv_reduce_threads(Cfg::kD)>
        <<<dim3(g.reduce_grid.x, g.reduce_grid.y, g.reduce_grid.z), g.reduce_threads, 0, stream>>>(r);
    HIPATTN_CHECK_LAUNCH();
  } else {
    rt::ensure_max_dynamic_shared(unified_2d_kernel<Cfg>, Cfg::kSmemBytes,
                                  [] { return config_name<Cfg>("unified_2d_kernel"); });
    unified_2d_kernel<Cfg><<<grid, g.threads, g.dynamic_lds, stream>>>(a);
    HIPATTN_CHECK_LAUNCH();
  }
}

#if defined(HIPATTN_BACKEND_CUDA)
// The 2D grid's q-blocks on sm_90's warp-specialised pipeline (PlanPipeline::warpgroup): the skeleton's
// arguments over 128-row q-blocks, one workgroup per (q-block, kv head, head chunk).
template <class Cfg>
void launch_unified_warpgroup(const UnifiedAttentionParams& p, const UnifiedPlan& plan, rt::stream_t stream,
                              const typename Cfg::Variant& variant) {
  const unified_warpgroup_args_t<Cfg> a =
      make_unified_kernel_args<typename Cfg::KvParams>(p, plan, nullptr, Cfg::kD, variant);
  const UnifiedLaunchGeometry g = make_unified_launch_geometry(p, plan, Cfg::kThreads, Cfg::kSmemBytes, Cfg::kD);
  if (g.empty) return;
  rt::ensure_max_dynamic_shared(unified_warpgroup_kernel<Cfg>, Cfg::kSmemBytes,
                                [] { return config_name<Cfg>("unified_warpgroup_kernel"); });
  unified_warpgroup_kernel<Cfg><<<dim3(g.grid.x, g.grid.y, 1), g.threads, g.dynamic_lds, stream>>>(a);
  HIPATTN_CHECK_LAUNCH();
}
#endif

// One instance (target, q dtype, KV kind, head size, variant): both tile kinds, 2D and 3D, and the
// warp-specialised pipelines of 16-bit prefill q-blocks on the 2D grid: sm_90's warpgroup pipeline
// (PlanPipeline::warpgroup), gfx950's ping-pong (PlanPipeline::pingpong, through visit_unified_tile).
template <Target kT, bool kBf16, KvKind kKv, int kD, class Variant>
void launch_unified_instance(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* ws, rt::stream_t s,
                             const Variant& variant) {
  if (plan.pipeline == PlanPipeline::warpgroup) {
#if defined(HIPATTN_BACKEND_CUDA)
    if constexpr (kT == Target::sm90 && kKv == KvKind::same16 && unified_warpgroup_head(kD)) {
      launch_unified_warpgroup<UnifiedWarpgroupConfig<kBf16, kD, Variant>>(p, plan, s, variant);
      return;
    }
#endif
    throw Error(ErrorCode::unsupported, "options.pipeline",
                config_name<unified_instance_config_t<kBf16, kKv, kD, UnifiedTileKind::prefill, Variant, kT>>(
                    "warpgroup pipeline for") + ": not built for this instance");
  }
  visit_unified_tile<kT, kBf16, kKv, kD, Variant>(
      plan, [&]<class Cfg>() { launch_unified_config<Cfg>(p, plan, ws, s, variant); });
}

// A standard instance behind a fixed signature: the unit of the registries (dispatch/registry.hpp) and
// of instance libraries (hipattn_add_instances: one explicit instantiation per translation unit).
using UnifiedLaunchFn = void (*)(const UnifiedAttentionParams&, const UnifiedPlan&, void*, rt::stream_t);
template <InstanceKey kK>
void launch_unified_standard(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* ws, rt::stream_t s) {
  static_assert(kK.family == Family::unified && kK.head_size == kK.head_size_v, "a unified-attention row");
  using Variant = standard_variant_t<kK.variant>;
  launch_unified_instance<kK.target, kK.bf16, kK.kv, kK.head_size, Variant>(p, plan, ws, s,
                                                                           unified_variant_from_params<Variant>(p));
}
struct UnifiedLaunchers {
  static constexpr Family kFamily = Family::unified;
  static constexpr bool kCustom = false;
  using LaunchFn = UnifiedLaunchFn;
  template <InstanceKey kK>
  static constexpr LaunchFn get() { return &launch_unified_standard<kK>; }
};
// ... with a caller's variant (the custom-variant entry point).
template <class Variant>
struct UnifiedCustomLaunchers {
  static constexpr Family kFamily = Family::unified;
  static constexpr bool kCustom = true;
  using LaunchFn = void (*)(const UnifiedAttentionParams&, const UnifiedPlan&, void*, rt::stream_t, const Variant&);
  template <InstanceKey kK>
  static constexpr LaunchFn get() { return &launch_unified_instance<kK.target, kK.bf16, kK.kv, kK.head_size, Variant>; }
};

// Validation, plan and workspace checks of a call; the plan to launch.
inline UnifiedPlan prepare_unified_call(const UnifiedAttentionParams& p, void* workspace, size_t workspace_bytes,
                                        const UnifiedOptions& opt) {
  throw_if_error(validate(p));
  const UnifiedPlan plan = plan_unified_attention(p, opt, plan_device(checked_device()));
  check_workspace(workspace, workspace_bytes, plan.workspace_bytes);
  return plan;
}

}  // namespace detail

// ---- entry points ----------------------------------------------------------------------------------

// Run unified attention. `workspace` must hold unified_attention_workspace_size(p, opt) bytes
// (16-byte aligned); it may be null when that size is 0.
// kFilter: the instances this translation unit compiles (every one of the table by default; a call
// outside them throws Error(unsupported, "instance") naming what was built). An instance library's
// entry point is hipattn::prebuilt::unified_attention (dispatch/prebuilt.hpp).
template <InstanceFilter kFilter = kAllInstances>
void unified_attention(const UnifiedAttentionParams& p, void* workspace, size_t workspace_bytes, rt::stream_t stream,
                       const UnifiedOptions& opt = {}) {
  const UnifiedPlan plan = detail::prepare_unified_call(p, workspace, workspace_bytes, opt);
  const InstanceKey key = unified_instance_key(p, rt::cached_device_properties().target);
  find_instance(header_registry<detail::UnifiedLaunchers, kFilter>(), key)(p, plan, workspace, stream);
}

// Run unified attention with a logit variant of the caller's (tile/variants.hpp: derive from
// VariantBase, override row() / logit(), keep its data as members). The variant value travels in the
// kernel arguments. Its kernels are compiled in the caller's translation unit for every instance
// kFilter admits (q dtype x KV kind x head size on the backend's targets; its `variants` field is not
// read); a call outside them throws Error(unsupported, "instance"). The params' softcap / ALiBi /
// QQ-bias fields are the standard variants' inputs and are not read here (the variant owns its
// features).
template <InstanceFilter kFilter = kAllInstances, class Variant>
void unified_attention(const UnifiedAttentionParams& p, const Variant& variant, void* workspace,
                       size_t workspace_bytes, rt::stream_t stream, const UnifiedOptions& opt = {}) {
  const UnifiedPlan plan = detail::prepare_unified_call(p, workspace, workspace_bytes, opt);
  const InstanceKey key = unified_instance_key(p, rt::cached_device_properties().target, true);
  find_instance(header_registry<detail::UnifiedCustomLaunchers<Variant>, kFilter>(), key)(p, plan, workspace, stream,
                                                                                          variant);
}

}  // namespace hipattn
#endif
