// hipattn/dispatch/unified_attention.hpp: the host entry point of unified paged/varlen attention.
//
//   size_t bytes = hipattn::unified_attention_workspace_size(params);   // 0 unless 3D is chosen
//   hipattn::unified_attention(params, workspace, bytes, stream);
//
// Validates the problem (throws hipattn::Error naming the field), plans (dispatch/unified_plan.hpp),
// maps the runtime traits (q dtype, kv dtype, head size, tile kind, path) to one compiled instance and
// launches it. Nothing is allocated; the workspace is the caller's.
#pragma once
#include <mutex>

#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/kernels/unified/kernels.hpp"
#include "hipattn/platform/runtime.hpp"
#include "hipattn/problem/unified_rules.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

inline PlanDevice plan_device(const rt::DeviceProperties& props) {
  return PlanDevice{props.target, props.multiprocessor_count, props.wave_size};
}

// Workspace bytes unified_attention needs for `p` on the current device (0 for the 2D path).
inline size_t unified_attention_workspace_size(const UnifiedAttentionParams& p, const UnifiedOptions& opt = {}) {
  throw_if_error(validate(p));
  return plan_unified_attention(p, opt, plan_device(rt::cached_device_properties())).workspace_bytes;
}

namespace detail {

#if defined(HIPATTN_BACKEND_CUDA)
inline constexpr int kBackendWave = 32;
#else
inline constexpr int kBackendWave = 64;
#endif

// "unified_2d_kernel<bf16, D=256, BM=64, BN=64>": the instance, for error messages.
template <class Cfg>
std::string unified_instance_name(const char* kernel) {
  return std::string(kernel) + (Cfg::kBf16 ? "<bf16" : "<f16") + ", D=" + std::to_string(Cfg::kD) +
         ", BM=" + std::to_string(Cfg::kBM) + ", BN=" + std::to_string(Cfg::kBN) + ">";
}

// Launch one compiled instance: arguments, grids and LDS from dispatch/unified_launch.hpp. The 2D / 3D
// kernel's dynamic shared-memory limit is raised first, once per device (rt::ensure_max_dynamic_shared;
// it throws, launching nothing, when the runtime refuses).
template <class Cfg>
void launch_unified_instance(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* workspace,
                             rt::stream_t stream, const typename Cfg::Variant& variant) {
  const unified_args_t<Cfg> a = make_unified_kernel_args<Cfg>(p, plan, workspace, variant);
  const UnifiedLaunchGeometry g = make_unified_launch_geometry<Cfg>(p, plan);
  if (g.empty) return;
  const dim3 grid(g.grid.x, g.grid.y, g.grid.z);
  if (g.split) {
    rt::ensure_max_dynamic_shared(split_kv_3d_kernel<Cfg>, Cfg::kSmemBytes,
                                  [] { return unified_instance_name<Cfg>("split_kv_3d_kernel"); });
    split_kv_3d_kernel<Cfg><<<grid, g.threads, g.dynamic_lds, stream>>>(a);
    HIPATTN_CHECK_LAUNCH();
    const SplitKvReduceArgs r = make_split_kv_reduce_args(p, plan, workspace, Cfg::kD);
    split_kv_reduce_kernel<Cfg::kBf16, Cfg::kD, split_kv_reduce_threads(Cfg::kD)>
        <<<dim3(g.reduce_grid.x, g.reduce_grid.y, g.reduce_grid.z), g.reduce_threads, 0, stream>>>(r);
    HIPATTN_CHECK_LAUNCH();
  } else {
    rt::ensure_max_dynamic_shared(unified_2d_kernel<Cfg>, Cfg::kSmemBytes,
                                  [] { return unified_instance_name<Cfg>("unified_2d_kernel"); });
    unified_2d_kernel<Cfg><<<grid, g.threads, g.dynamic_lds, stream>>>(a);
    HIPATTN_CHECK_LAUNCH();
  }
}

// Visitors of dispatch/unified_launch.hpp's instance selection that launch what they are given.
struct LaunchUnifiedConfig {
  const UnifiedAttentionParams& p;
  const UnifiedPlan& plan;
  void* ws;
  rt::stream_t s;
  template <class Cfg>
  void operator()() const {
    launch_unified_instance<Cfg>(p, plan, ws, s, unified_variant_from_params<typename Cfg::Variant>(p));
  }
};

// The same with a caller's variant value.
template <class Variant>
struct LaunchUnifiedCustom {
  const UnifiedAttentionParams& p;
  const UnifiedPlan& plan;
  void* ws;
  rt::stream_t s;
  const Variant& variant;
  template <class Cfg>
  void operator()() const {
    launch_unified_instance<Cfg>(p, plan, ws, s, variant);
  }
};

// One instance group (q dtype, kv kind, variant): every head size x tile kind of it. The unit of the
// explicit instances below.
template <bool kBf16, KvKind kKv, class Variant, int kWave>
void launch_unified_head(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* ws, rt::stream_t s) {
  visit_unified_head<kBf16, kKv, Variant, kWave>(p, plan, LaunchUnifiedConfig{p, plan, ws, s});
}

template <int kWave>
struct LaunchUnifiedGroup {
  const UnifiedAttentionParams& p;
  const UnifiedPlan& plan;
  void* ws;
  rt::stream_t s;
  template <bool kBf16, KvKind kKv, class Variant>
  void operator()() const {
    launch_unified_head<kBf16, kKv, Variant, kWave>(p, plan, ws, s);
  }
};

template <int kWave>
void launch_unified_variant(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* ws, rt::stream_t s) {
  visit_unified_group(p, LaunchUnifiedGroup<kWave>{p, plan, ws, s});
}

}  // namespace detail

// The instance groups the dispatcher can reach: (bf16?, kv kind, variant). Each group holds the head
// sizes x tile kinds x {2D, 3D} kernels. A build that defines HIPATTN_UNIFIED_EXTERN_INSTANCES gets
// extern declarations here and compiles the groups in separate translation units with
// HIPATTN_UNIFIED_INSTANTIATE(group...) (see tests/instances/), so they build in parallel.
#define HIPATTN_UNIFIED_INSTANCE_GROUPS(X)                                                                     \
  X(false, same16, PlainVariant) X(false, e4m3fn, PlainVariant) X(false, e4m3fnuz, PlainVariant)             \
  X(true, same16, PlainVariant) X(true, e4m3fn, PlainVariant) X(true, e4m3fnuz, PlainVariant)                \
  X(false, same16, FullVariant) X(false, e4m3fn, FullVariant) X(false, e4m3fnuz, FullVariant)                \
  X(true, same16, FullVariant) X(true, e4m3fn, FullVariant) X(true, e4m3fnuz, FullVariant)

#define HIPATTN_UNIFIED_INSTANTIATE(BF16, KV, VARIANT)                                                         \
  template void ::hipattn::detail::launch_unified_head<BF16, ::hipattn::KvKind::KV, ::hipattn::VARIANT,        \
                                                       ::hipattn::detail::kBackendWave>(                       \
      const ::hipattn::UnifiedAttentionParams&, const ::hipattn::UnifiedPlan&, void*, ::hipattn::rt::stream_t);

#if defined(HIPATTN_UNIFIED_EXTERN_INSTANCES)
#define HIPATTN_UNIFIED_EXTERN_(BF16, KV, VARIANT) extern HIPATTN_UNIFIED_INSTANTIATE(BF16, KV, VARIANT)
HIPATTN_UNIFIED_INSTANCE_GROUPS(HIPATTN_UNIFIED_EXTERN_)
#undef HIPATTN_UNIFIED_EXTERN_
#endif

namespace detail {
// Validation, plan and workspace checks of a call; the plan to launch.
inline UnifiedPlan prepare_unified_call(const UnifiedAttentionParams& p, void* workspace, size_t workspace_bytes,
                                        const UnifiedOptions& opt) {
  throw_if_error(validate(p));
  const rt::DeviceProperties& props = rt::cached_device_properties();
  const UnifiedPlan plan = plan_unified_attention(p, opt, plan_device(props));
  if (plan.workspace_bytes > 0) {
    if (workspace == nullptr || workspace_bytes < plan.workspace_bytes)
      throw Error(ErrorCode::workspace, "workspace",
                  std::to_string(workspace_bytes) + " bytes given, " + std::to_string(plan.workspace_bytes) + " needed");
    if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
      throw Error(ErrorCode::workspace, "workspace", "not 16-byte aligned");
  }
  if (props.wave_size != kBackendWave)
    throw Error(ErrorCode::unsupported, "device", "wave size " + std::to_string(props.wave_size) + " of " +
                                                      props.arch_name + " does not match this build");
  return plan;
}
}  // namespace detail

// Run unified attention. `workspace` must hold unified_attention_workspace_size(p, opt) bytes
// (16-byte aligned); it may be null when that size is 0.
inline void unified_attention(const UnifiedAttentionParams& p, void* workspace, size_t workspace_bytes,
                              rt::stream_t stream, const UnifiedOptions& opt = {}) {
  const UnifiedPlan plan = detail::prepare_unified_call(p, workspace, workspace_bytes, opt);
  detail::launch_unified_variant<detail::kBackendWave>(p, plan, workspace, stream);
}

// Run unified attention with a logit variant of the caller's (tile/variants.hpp: derive from
// VariantBase, override row() / logit(), keep its data as members). The variant value travels in the
// kernel arguments. Its kernels are compiled in the caller's translation unit, for every q dtype,
// KV kind, head size and tile kind the dispatcher can choose; the params' softcap / ALiBi / QQ-bias
// fields are the standard variants' inputs and are not read here (the variant owns its features).
template <class Variant>
void unified_attention(const UnifiedAttentionParams& p, const Variant& variant, void* workspace,
                       size_t workspace_bytes, rt::stream_t stream, const UnifiedOptions& opt = {}) {
  const UnifiedPlan plan = detail::prepare_unified_call(p, workspace, workspace_bytes, opt);
  visit_unified_dtypes(p, [&]<bool kBf16, KvKind kKv>() {
    visit_unified_head<kBf16, kKv, Variant, detail::kBackendWave>(
        p, plan, detail::LaunchUnifiedCustom<Variant>{p, plan, workspace, stream, variant});
  });
}

}  // namespace hipattn
#endif
