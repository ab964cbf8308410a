// hipattn/arch/arch.hpp: selects the architecture interface of the current device pass.
//
// This is the only header that maps target macros to an ISA folder. Kernels name `DeviceArch` and
// never test the target themselves. In a host pass DeviceArch is the arch of the backend's primary
// target (kernel bodies are not generated there).
#pragma once
#include "hipattn/platform/config.hpp"

#if defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/arch/sm90/arch.hpp"
namespace hipattn {
using DeviceArch = sm90::Arch;
}
#elif defined(HIPATTN_BACKEND_HIP)
#if defined(HIPATTN_TARGET_GFX950)
#include "hipattn/arch/cdna4/arch.hpp"
namespace hipattn {
using DeviceArch = cdna4::Arch;
}
#else
#include "hipattn/arch/cdna3/arch.hpp"
namespace hipattn {
using DeviceArch = cdna3::Arch;
}
#endif
#endif
