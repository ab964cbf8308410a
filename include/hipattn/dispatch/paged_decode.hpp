// hipattn/dispatch/paged_decode.hpp: the host entry point of paged decode.
//
//   // once, from what the host knows before any call (bounds):
//   size_t bytes = hipattn::paged_decode_workspace_size(traits);   // PagedDecodeTraits
//   void* ws = ...;                                                 // the caller's, 16-byte aligned
//   // every step (and inside a graph capture):
//   hipattn::paged_decode(params, ws, bytes, stream);
//
// A call validates the params (throws hipattn::Error naming the field), plans on the host from host
// values only (dispatch/paged_decode_plan.hpp; arguments and geometry: paged_decode_launch.hpp), then
// launches the device planner (planned plans), the kernel and the reduce (split plans) on `stream`;
// on sm_90 the kernel after the planner and the reduce are programmatic dependent launches (each
// starts while its predecessor ends and waits for it before reading; HIPATTN_PDL=0 turns this off).
// It never allocates and never synchronizes; the grid depends on host values only, so a captured
// graph replays with other seq_lens_k and block tables. The instances are unified attention's (same
// keys, same table and filter); an instance library (hipattn_add_instances()) has its own entry
// point, hipattn::prebuilt::paged_decode (dispatch/prebuilt.hpp).
#pragma once
#include "hipattn/dispatch/paged_decode_launch.hpp"
#include "hipattn/dispatch/paged_decode_plan.hpp"
#include "hipattn/dispatch/unified_attention.hpp"
#include "hipattn/kernels/paged_decode/kernels.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

// Workspace bytes every call within `traits` needs on the current device, under `opt`.
inline size_t paged_decode_workspace_size(const PagedDecodeTraits& traits, const PagedDecodeOptions& opt = {}) {
  return paged_decode_workspace_size(traits, plan_device(rt::cached_device_properties()), opt);
}

namespace detail {

template <class Cfg>
void launch_paged_decode_config(const PagedDecodeParams& p, const PagedDecodePlan& plan, void* workspace,
                                rt::stream_t stream, const typename Cfg::Variant& variant) {
  const PagedDecodeGeometry g = make_paged_decode_geometry<Cfg>(p, plan);
  if (g.empty) return;
  const paged_decode_args_t<Cfg> a = make_paged_decode_kernel_args<Cfg>(p, plan, workspace, variant);
  rt::ensure_max_dynamic_shared(paged_decode_kernel<Cfg>, Cfg::kSmemBytes,
                                [] { return config_name<Cfg>("paged_decode_kernel"); });
  // planner -> kernel -> reduce: the first in stream order, each later one programmatically (sm_90:
  // its launch overlaps its predecessor, whose end it waits for before reading; rt::launch).
  const bool planned = plan.split == SlotSplit::planned;
  if (planned) {  // this call's tasks, from seq_lens_k on the device
    plan_decode_tasks_kernel<><<<1, kPlannerThreads, 0, stream>>>(make_paged_decode_plan_args(p, plan, workspace, Cfg::kBN));
    HIPATTN_CHECK_LAUNCH();
  }
  rt::launch(planned ? rt::LaunchOrder::programmatic : rt::LaunchOrder::stream, paged_decode_kernel<Cfg>,
             dim3(g.grid.x, 1, 1), dim3(g.threads, 1, 1), g.dynamic_lds, stream, a);
  HIPATTN_CHECK_LAUNCH();
  if (g.reduce) {
    rt::launch(rt::LaunchOrder::programmatic, paged_decode_reduce_kernel<Cfg::kBf16, Cfg::kD, split_kv_reduce_threads(Cfg::kD)>,
               dim3(g.reduce_grid.x, 1, 1), dim3(g.reduce_threads, 1, 1), 0, stream,
               make_paged_decode_reduce_args(p, plan, workspace));
    HIPATTN_CHECK_LAUNCH();
  }
}

// A standard instance behind a fixed signature (the unit of the registries and instance libraries).
using PagedDecodeLaunchFn = void (*)(const PagedDecodeParams&, const PagedDecodePlan&, void*, rt::stream_t);
template <InstanceKey kK>
void launch_paged_decode_standard(const PagedDecodeParams& p, const PagedDecodePlan& plan, void* ws, rt::stream_t s) {
  static_assert(kK.family == Family::paged_decode && kK.head_size == kK.head_size_v, "a paged-decode row");
  using Variant = standard_variant_t<kK.variant>;
  const Variant variant = unified_variant_from_params<Variant>(to_unified_params(p, nullptr));
  visit_paged_decode_tile<kK.target, kK.bf16, kK.kv, kK.head_size, Variant>(plan, [&]<class Cfg>() {
    launch_paged_decode_config<Cfg>(p, plan, ws, s, variant);
  });
}
struct PagedDecodeLaunchers {
  static constexpr Family kFamily = Family::paged_decode;
  static constexpr bool kCustom = false;
  using LaunchFn = PagedDecodeLaunchFn;
  template <InstanceKey kK>
  static constexpr LaunchFn get() { return &launch_paged_decode_standard<kK>; }
};

// Validation, plan and workspace checks of a call; the plan to launch.
inline PagedDecodePlan prepare_paged_decode_call(const PagedDecodeParams& p, void* workspace, size_t workspace_bytes,
                                                 const PagedDecodeOptions& opt) {
  throw_if_error(validate(p));
  const PagedDecodePlan plan = plan_paged_decode(p, opt, plan_device(checked_device()));
  if (p.num_seqs > 0) check_workspace(workspace, workspace_bytes, plan.workspace_bytes, plan.reason);
  return plan;
}

}  // namespace detail

// Run paged decode. `workspace` must hold the plan's bytes (paged_decode_workspace_size of traits
// that bound this call suffices), 16-byte aligned; it may be null when the plan needs none (one
// partition). kFilter: the instances this translation unit compiles (as unified_attention's).
template <InstanceFilter kFilter = kAllInstances>
void paged_decode(const PagedDecodeParams& p, void* workspace, size_t workspace_bytes, rt::stream_t stream,
                  const PagedDecodeOptions& opt = {}) {
  const PagedDecodePlan plan = detail::prepare_paged_decode_call(p, workspace, workspace_bytes, opt);
  if (p.num_seqs == 0) return;
  const InstanceKey key = paged_decode_instance_key(p, rt::cached_device_properties().target);
  find_instance(header_registry<detail::PagedDecodeLaunchers, kFilter>(), key)(p, plan, workspace, stream);
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
