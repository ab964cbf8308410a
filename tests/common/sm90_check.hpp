// tests/common/sm90_check.hpp: what the sm_90 contract tests (TMA, the pipeline) share: whether the
// GPU and this binary's device code can run them (REQUIRE_TMA / REQUIRE_TMA_WGMMA skip, saying why),
// a bounded mbarrier wait that traps instead of hanging, and shared-memory alignment. CUDA only.
#pragma once
#include <string>

#include "device_check.hpp"
#include "gpu.hpp"
#include "hipattn/arch/sm90/tma.hpp"
#include "hipattn/arch/sm90/wgmma.hpp"
#include "hipattn/platform/runtime.hpp"

#if defined(HIPATTN_BACKEND_CUDA)
namespace hipattn::testing {
namespace sm90_check {

static __global__ void tma_probe_kernel(int* out) {
  int f = 0;
#if defined(HIPATTN_SM90_TMA)
  f |= 1;
#endif
#if defined(HIPATTN_SM90A_WGMMA)
  f |= 2;
#endif
  *out = f;
}

// Empty when the tests needing `need` (1: bulk copies, 3: and wgmma) can run here, else why not.
inline std::string unavailable(int need) {
  if (!gpu_present()) return "no GPU present: device test skipped";
  const rt::DeviceProperties p = rt::device_properties();
  if (p.arch_name != "sm_90") return "TMA tests need an sm_90 (Hopper) GPU; this one is " + p.arch_name + ": skipped";
  DeviceBuffer flag = poisoned(sizeof(int));
  LAUNCH_CHECKED(tma_probe_kernel<<<1, 1>>>(flag.as<int>()));
  const int f = download<int>(flag)[0];
  if ((f & 1) == 0) return "this binary's device code was not built for sm_90 or later: skipped";
  if ((need & 2) && (f & 2) == 0)
    return "this binary's device code was not built for sm_90a (no __CUDA_ARCH_FEAT_SM90_ALL): skipped";
  return {};
}
#define REQUIRE_TMA()                                                      \
  do {                                                                     \
    const std::string why_ = ::hipattn::testing::sm90_check::unavailable(1); \
    if (!why_.empty()) GTEST_SKIP() << why_;                               \
  } while (0)
#define REQUIRE_TMA_WGMMA()                                                \
  do {                                                                     \
    const std::string why_ = ::hipattn::testing::sm90_check::unavailable(3); \
    if (!why_.empty()) GTEST_SKIP() << why_;                               \
  } while (0)

// A bounded wait: a phase that never completes traps (the launch fails) after about ten seconds.
inline __device__ void wait_or_trap(uint64_t* bar, uint32_t parity) {
  const long long start = clock64();
  while (!sm90::mbarrier_try_wait_parity(bar, parity))
    if (clock64() - start > (1ll << 34)) __trap();
}

inline __device__ uint8_t* align_up(void* p, uint32_t a) {
  uint8_t* s = static_cast<uint8_t*>(p);
  return s + ((a - (sm90::smem_u32(s) & (a - 1))) & (a - 1));
}

}  // namespace sm90_check
}  // namespace hipattn::testing
#endif  // HIPATTN_BACKEND_CUDA
