// tests/common/device_check.hpp: what the primitive and atom tests of tests/device share: a launch
// checked for its launch and its execution, a poisoned output buffer and its download.
#pragma once
#include <cstddef>
#include <vector>

#include "hipattn/platform/runtime.hpp"
#include "../../testing/paged_problem.hpp"

// Launch, check the launch, wait and check the execution.
#define LAUNCH_CHECKED(...)                   \
  do {                                        \
    __VA_ARGS__;                              \
    HIPATTN_CHECK_LAUNCH();                   \
    HIPATTN_CHECK(rt::device_synchronize()); \
  } while (0)

namespace hipattn::testing {

// Every byte 0xFF: NaN as f32, f16, bf16 and e4m3fn, so each element a kernel must write is checked.
inline DeviceBuffer poisoned(size_t bytes) {
  DeviceBuffer b(bytes);
  HIPATTN_CHECK(rt::memset_async(b.ptr, 0xFF, bytes, nullptr));
  HIPATTN_CHECK(rt::device_synchronize());
  return b;
}

template <class T>
std::vector<T> download(const DeviceBuffer& b) {
  std::vector<T> v(b.bytes / sizeof(T));
  HIPATTN_CHECK(rt::memcpy_d2h(v.data(), b.ptr, b.bytes));
  return v;
}

}  // namespace hipattn::testing
