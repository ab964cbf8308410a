// hipattn/dispatch/device.hpp: the device a plan is made for, and the targets this build compiles
// instances for (every family's dispatch reads both).
#pragma once
#include <string>

#include "hipattn/platform/runtime.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn {

// What a plan needs to know about the device.
struct PlanDevice {
  Target target = Target::sm90;
  int multiprocessor_count = 132;
};

// A list of targets, as a type (the targets a translation unit builds instances for).
template <Target... kTs>
struct TargetList {};

template <Target... kTs>
constexpr bool backend_builds(TargetList<kTs...>, Target t) {
  return ((t == kTs) || ...);
}
template <Target... kTs>
std::string target_list_name(TargetList<kTs...>) {
  std::string s;
  ((s += (s.empty() ? "" : ", ") + std::string(target_name(kTs))), ...);
  return s;
}

#if defined(HIPATTN_HAS_DEVICE)
// The targets this backend compiles instances for: every instance is built for each of them (on HIP
// the kernels of one target are empty in the other target's device pass).
#if defined(HIPATTN_BACKEND_CUDA)
using BackendTargets = TargetList<Target::sm90>;
#else
using BackendTargets = TargetList<Target::gfx942, Target::gfx950>;
#endif

inline PlanDevice plan_device(const rt::DeviceProperties& props) {
  return PlanDevice{props.target, props.multiprocessor_count};
}

// The current device, refused with Error(unsupported, "device") when this build has no instances for it.
inline const rt::DeviceProperties& checked_device() {
  const rt::DeviceProperties& props = rt::cached_device_properties();
  if (!backend_builds(BackendTargets{}, props.target))
    throw Error(ErrorCode::unsupported, "device",
                props.arch_name + " is not a target of this build (" + target_list_name(BackendTargets{}) + ")");
  return props;
}
#endif

}  // namespace hipattn
