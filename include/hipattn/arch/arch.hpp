// hipattn/arch/arch.hpp: selects the architecture interface of the current device pass.
//
// This is the only header that maps target macros to an ISA folder. Kernels name `DeviceArch` and
// never test the target themselves. In a host pass DeviceArch is the arch of the backend's primary
// target (kernel bodies are not generated there). ArchOf<Target> names the pass's Arch by
// its target; it is checked against the interface (arch/concept.hpp) here.
#pragma once
#include "hipattn/arch/concept.hpp"
#include "hipattn/platform/config.hpp"

#if defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/arch/sm90/arch.hpp"
namespace hipattn {
template <>
struct ArchOf<Target::sm90> {
  using type = sm90::Arch;
};
using DeviceArch = ArchOf<Target::sm90>::type;
}  // namespace hipattn
#elif defined(HIPATTN_BACKEND_HIP)
// One CDNA arch per device pass: the gfx950 atoms use instructions gfx942 does not have.
#if defined(HIPATTN_TARGET_GFX950)
#include "hipattn/arch/cdna4/arch.hpp"
namespace hipattn {
template <>
struct ArchOf<Target::gfx950> {
  using type = cdna4::Arch;
};
using DeviceArch = ArchOf<Target::gfx950>::type;
}  // namespace hipattn
#else
#include "hipattn/arch/cdna3/arch.hpp"
namespace hipattn {
template <>
struct ArchOf<Target::gfx942> {
  using type = cdna3::Arch;
};
using DeviceArch = ArchOf<Target::gfx942>::type;
}  // namespace hipattn
#endif
#endif

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {
static_assert(AttentionArch<DeviceArch>, "the device's Arch must model the arch interface (arch/concept.hpp)");
static_assert(DeviceArch::kTarget == Target::sm90 || is_cdna(DeviceArch::kTarget), "a target the library serves");
static_assert(DeviceArch::kCopyModel == copy_model_of(DeviceArch::kTarget),
              "the device's copy model is the one configurations size their LDS for");
}  // namespace hipattn
#endif
