// hipattn/platform/config.hpp: compiler/backend detection and the function-qualifier macros.
//
// Three ways to compile the same headers:
//   HIP  (clang / hipcc, -x hip):   HIPATTN_BACKEND_HIP  = 1
//   CUDA (nvcc):                    HIPATTN_BACKEND_CUDA = 1
//   host (g++ / clang++ plain C++): HIPATTN_BACKEND_HOST = 1 (reference, validation, planners only)
#pragma once

#if defined(__HIP__) || defined(__HIPCC__)
#define HIPATTN_BACKEND_HIP 1
#elif defined(__CUDACC__)
#define HIPATTN_BACKEND_CUDA 1
#else
#define HIPATTN_BACKEND_HOST 1
#endif

#if defined(HIPATTN_BACKEND_HIP)
// The HIP headers define the qualifiers below (__host__, __device__, __forceinline__): include them
// here, so that every hipattn header compiles whatever the include order. nvcc defines them itself.
#include <hip/hip_runtime.h>
#endif

#if defined(HIPATTN_BACKEND_HIP) || defined(HIPATTN_BACKEND_CUDA)
#define HIPATTN_HAS_DEVICE 1
#define HIPATTN_HOST_DEVICE __host__ __device__
#define HIPATTN_DEVICE __device__
#define HIPATTN_GLOBAL __global__
#define HIPATTN_FORCEINLINE __forceinline__
#else
#define HIPATTN_HOST_DEVICE
#define HIPATTN_DEVICE
#define HIPATTN_GLOBAL
#define HIPATTN_FORCEINLINE inline __attribute__((always_inline))
#endif

// A kernel's occupancy hint on CDNA: at least n waves of it per SIMD, so the compiler keeps its
// registers within 512 / n (clang's amdgpu_waves_per_eu). Empty elsewhere.
#if defined(HIPATTN_BACKEND_HIP)
#define HIPATTN_CDNA_WAVES_PER_SIMD(n) __attribute__((amdgpu_waves_per_eu(n)))
#else
#define HIPATTN_CDNA_WAVES_PER_SIMD(n)
#endif

// True while compiling device code (the device pass of clang-HIP or nvcc).
#if (defined(HIPATTN_BACKEND_HIP) && defined(__HIP_DEVICE_COMPILE__)) || \
    (defined(HIPATTN_BACKEND_CUDA) && defined(__CUDA_ARCH__))
#define HIPATTN_DEVICE_PASS 1
#endif

// The one place that names the hardware targets of a device pass; code that differs per target tests
// these macros (arch/arch.hpp selects the per-ISA headers with them).
#if defined(HIPATTN_DEVICE_PASS) && defined(__gfx950__)
#define HIPATTN_TARGET_GFX950 1
#elif defined(HIPATTN_DEVICE_PASS) && defined(__gfx942__)
#define HIPATTN_TARGET_GFX942 1
#elif defined(HIPATTN_DEVICE_PASS) && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define HIPATTN_TARGET_SM90 1
#elif defined(HIPATTN_DEVICE_PASS)
#define HIPATTN_TARGET_OTHER_DEVICE 1
#endif
