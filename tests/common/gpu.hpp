// tests/common/gpu.hpp: device tests skip themselves, saying so, when no GPU is present.
#pragma once
#include <gtest/gtest.h>

#include "hipattn/platform/runtime.hpp"

namespace hipattn::testing {

// True when the runtime sees at least one device.
inline bool gpu_present() {
  int n = 0;
  return rt::get_device_count(&n) == rt::success && n > 0;
}

}  // namespace hipattn::testing

#define REQUIRE_GPU() \
  if (!::hipattn::testing::gpu_present()) GTEST_SKIP() << "no GPU present: device test skipped"
