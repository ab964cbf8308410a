// The helpers the entry-point examples share: device memory, the error measure and main's frame.
//
// DeviceBuffer owns device memory (freed at scope exit) and checks every runtime call it makes
// (HIPATTN_CHECK throws hipattn::Error naming the call). run_example is main: with no GPU it prints
// "<name>: no GPU present: skipped" and returns 0; otherwise it runs the example and turns an
// exception (a runtime failure, or an entry point's validation) into a FAIL line and exit code 1.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

#include "hipattn/platform/runtime.hpp"

namespace example {

struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t n) : bytes(n) {
    HIPATTN_CHECK(hipattn::rt::malloc_device(&ptr, std::max<size_t>(n, 16)));
  }
  template <class T>
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size() * sizeof(T)) {
    HIPATTN_CHECK(hipattn::rt::memcpy_h2d(ptr, host.data(), bytes));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (hipattn::rt::free_device(ptr) != hipattn::rt::success) std::fprintf(stderr, "free_device failed\n");
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr);
  }
  // Fills with 0xFF bytes (NaN in fp16, bf16 and fp32), so that an element no kernel writes shows.
  void poison() const { HIPATTN_CHECK(hipattn::rt::memset_async(ptr, 0xFF, bytes, nullptr)); }
  template <class T>
  std::vector<T> to_host() const {
    std::vector<T> h(bytes / sizeof(T));
    HIPATTN_CHECK(hipattn::rt::memcpy_d2h(h.data(), ptr, h.size() * sizeof(T)));
    return h;
  }
};

// Largest |got - want| (got: float or a hipattn 16-bit type); a NaN, an element left poisoned,
// counts as infinite.
template <class T>
double max_abs_error(const std::vector<T>& got, const std::vector<double>& want) {
  double e = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<float>(got[i]);
    e = std::max(e, std::isnan(g) ? INFINITY : std::fabs(g - want[i]));
  }
  return e;
}

// main of an example: `run` returns 0 on PASS, 1 on FAIL (having printed its line).
template <class Run>
int run_example(const char* name, Run&& run) {
  int n = 0;
  if (hipattn::rt::get_device_count(&n) != hipattn::rt::success || n == 0) {
    std::printf("%s: no GPU present: skipped\n", name);
    return 0;
  }
  try {
    return run();
  } catch (const std::exception& e) {
    std::printf("%s: FAIL: %s\n", name, e.what());
    return 1;
  }
}

}  // namespace example
