// hipattn/platform/runtime.hpp: one runtime vocabulary over the HIP runtime and the CUDA runtime.
//
// On AMD this is a thin alias layer over <hip/hip_runtime.h>. On NVIDIA it is our own shim over
// <cuda_runtime.h> (Debian's HIP-on-NVIDIA headers do not build with CUDA 13). Kernel launches use
// the triple-chevron syntax, which both compilers accept. In a host-only build this header is empty.
#pragma once
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "hipattn/platform/attribute_cache.hpp"
#include "hipattn/platform/config.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/target.hpp"

#if defined(HIPATTN_BACKEND_HIP)
#include <hip/hip_runtime.h>
#elif defined(HIPATTN_BACKEND_CUDA)
#include <cuda_runtime.h>
#endif

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn::rt {

#if defined(HIPATTN_BACKEND_HIP)
using error_t = hipError_t;
using stream_t = hipStream_t;
using event_t = hipEvent_t;
inline constexpr error_t success = hipSuccess;
inline constexpr error_t invalid_value = hipErrorInvalidValue;
inline const char* error_string(error_t e) { return hipGetErrorString(e); }
inline error_t get_last_error() { return hipGetLastError(); }
inline error_t malloc_device(void** p, size_t n) { return hipMalloc(p, n); }
inline error_t free_device(void* p) { return hipFree(p); }
inline error_t memcpy_h2d(void* d, const void* s, size_t n) { return hipMemcpy(d, s, n, hipMemcpyHostToDevice); }
inline error_t memcpy_d2h(void* d, const void* s, size_t n) { return hipMemcpy(d, s, n, hipMemcpyDeviceToHost); }
inline error_t memcpy_d2d_async(void* d, const void* s, size_t n, stream_t st) {
  return hipMemcpyAsync(d, s, n, hipMemcpyDeviceToDevice, st);
}
inline error_t memset_async(void* d, int v, size_t n, stream_t st) { return hipMemsetAsync(d, v, n, st); }
inline error_t device_synchronize() { return hipDeviceSynchronize(); }
inline error_t event_create(event_t* e) { return hipEventCreate(e); }
inline error_t event_destroy(event_t e) { return hipEventDestroy(e); }
inline error_t event_record(event_t e, stream_t s) { return hipEventRecord(e, s); }
inline error_t event_synchronize(event_t e) { return hipEventSynchronize(e); }
inline error_t event_elapsed_ms(float* ms, event_t a, event_t b) { return hipEventElapsedTime(ms, a, b); }
inline error_t get_device(int* d) { return hipGetDevice(d); }
inline error_t get_device_count(int* n) { return hipGetDeviceCount(n); }
#else
using error_t = cudaError_t;
using stream_t = cudaStream_t;
using event_t = cudaEvent_t;
inline constexpr error_t success = cudaSuccess;
inline constexpr error_t invalid_value = cudaErrorInvalidValue;
inline const char* error_string(error_t e) { return cudaGetErrorString(e); }
inline error_t get_last_error() { return cudaGetLastError(); }
inline error_t malloc_device(void** p, size_t n) { return cudaMalloc(p, n); }
inline error_t free_device(void* p) { return cudaFree(p); }
inline error_t memcpy_h2d(void* d, const void* s, size_t n) { return cudaMemcpy(d, s, n, cudaMemcpyHostToDevice); }
inline error_t memcpy_d2h(void* d, const void* s, size_t n) { return cudaMemcpy(d, s, n, cudaMemcpyDeviceToHost); }
inline error_t memcpy_d2d_async(void* d, const void* s, size_t n, stream_t st) {
  return cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, st);
}
inline error_t memset_async(void* d, int v, size_t n, stream_t st) { return cudaMemsetAsync(d, v, n, st); }
inline error_t device_synchronize() { return cudaDeviceSynchronize(); }
inline error_t event_create(event_t* e) { return cudaEventCreate(e); }
inline error_t event_destroy(event_t e) { return cudaEventDestroy(e); }
inline error_t event_record(event_t e, stream_t s) { return cudaEventRecord(e, s); }
inline error_t event_synchronize(event_t e) { return cudaEventSynchronize(e); }
inline error_t event_elapsed_ms(float* ms, event_t a, event_t b) { return cudaEventElapsedTime(ms, a, b); }
inline error_t get_device(int* d) { return cudaGetDevice(d); }
inline error_t get_device_count(int* n) { return cudaGetDeviceCount(n); }
#endif

// Throw hipattn::Error{runtime} naming the failing call, file and line, and the runtime's message.
inline void check(error_t e, const char* call, const char* file, int line) {
  if (e != success) {
    throw Error(ErrorCode::runtime, call,
                std::string(error_string(e)) + " (" + file + ":" + std::to_string(line) + ")");
  }
}

// What the kernels and the dispatcher need to know about a device.
struct DeviceProperties {
  int device = 0;
  Target target = Target::other;
  std::string arch_name;           // "gfx942", "gfx950", "sm_90", ...
  int multiprocessor_count = 0;    // CUs on AMD, SMs on NVIDIA
  size_t lds_per_block_optin = 0;  // the most shared memory one block may opt in to, bytes
  size_t l2_bytes = 0;
  int wave_size = 0;
};

// Properties of device `device` (the current device when -1).
inline DeviceProperties device_properties(int device = -1);

// device_properties() of the current device, queried once per device and cached (the entry points
// call this on every launch; the attribute queries cost microseconds of host time).
inline const DeviceProperties& cached_device_properties();

// Raise the dynamic shared-memory limit of `kernel` on the current device to `bytes` (needed above
// 48 KiB on NVIDIA): the bare runtime call. Launch paths use ensure_max_dynamic_shared below.
template <class Kernel>
inline error_t set_max_dynamic_shared(Kernel kernel, int bytes) {
#if defined(HIPATTN_BACKEND_HIP)
  return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel), hipFuncAttributeMaxDynamicSharedMemorySize, bytes);
#else
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
#endif
}

}  // namespace hipattn::rt

#define HIPATTN_CHECK(call) ::hipattn::rt::check((call), #call, __FILE__, __LINE__)
// Check the launch that just happened (configuration errors surface here).
#define HIPATTN_CHECK_LAUNCH() ::hipattn::rt::check(::hipattn::rt::get_last_error(), "kernel launch", __FILE__, __LINE__)

namespace hipattn::rt {
// How a kernel launch is ordered after the stream's earlier work (rt::launch).
//   stream        after all of it has completed: a plain launch.
//   programmatic  sm_90's programmatic dependent launch: the kernel may start once every workgroup of
//                 the stream's previous kernel has called Arch::grid_dependency_trigger() or exited,
//                 so its launch overlaps that kernel's tail. It must call Arch::grid_dependency_wait()
//                 in every workgroup before it reads what that kernel wrote (or writes what it reads);
//                 then its completion implies that kernel's, and the stream's later work sees both.
//                 HIP: stream (CDNA's hooks are empty). HIPATTN_PDL=0 in the environment: stream
//                 everywhere (read once a process; an A/B switch, and for tools that do not follow
//                 programmatic launches).
enum class LaunchOrder : uint8_t { stream, programmatic };

inline bool programmatic_launch_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("HIPATTN_PDL");
    return !(e != nullptr && e[0] == '0' && e[1] == '\0');
  }();
  return on;
}

// Launch kernel<<<grid, block, smem, stream>>>(args...) in `order`; follow with HIPATTN_CHECK_LAUNCH()
// (a triple-chevron launch's error is the runtime's last error; a programmatic one's throws here).
template <class... Params, class... Args>
inline void launch(LaunchOrder order, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, stream_t stream,
                   Args&&... args) {
#if defined(HIPATTN_BACKEND_HIP)
  (void)order;
  hipLaunchKernelGGL(kernel, grid, block, static_cast<uint32_t>(smem), stream, std::forward<Args>(args)...);
#else
  if (order != LaunchOrder::programmatic || !programmatic_launch_enabled()) {
    kernel<<<grid, block, smem, stream>>>(std::forward<Args>(args)...);
    return;
  }
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  const error_t e = cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
  if (e != success) {
    (void)get_last_error();  // cleared, as HIPATTN_CHECK_LAUNCH clears a triple-chevron launch's
    check(e, "kernel launch (programmatic)", __FILE__, __LINE__);
  }
#endif
}
}  // namespace hipattn::rt

namespace hipattn::rt {
namespace detail {
// Set: the next runtime call of ensure_max_dynamic_shared asks for a limit no device grants (the
// tests' failure injection, tests/common/attribute_failure.hpp).
inline std::atomic<bool> force_attribute_failure{false};
}  // namespace detail

// The process's record of dynamic shared-memory limits already set, per (device, kernel).
inline KernelAttributeCache& kernel_attribute_cache() {
  static KernelAttributeCache cache;
  return cache;
}

// Make sure `kernel` may use `bytes` of dynamic shared memory on the current device: the runtime is
// asked once per device and per kernel (kernel_attribute_cache). A failure is not remembered (the next
// launch asks again) and is cleared from the runtime's last-error state, so that it does not surface
// at a later launch check; it throws Error{runtime, "device"} naming the kernel (`name`: a string, or a
// callable returning one, called only then) and the bytes. Call before launching `kernel`.
template <class Kernel, class Name>
inline void ensure_max_dynamic_shared(Kernel kernel, int bytes, Name&& name) {
  int device = 0;
  HIPATTN_CHECK(get_device(&device));
  error_t err = success;
  const bool ok = kernel_attribute_cache().ensure(device, reinterpret_cast<const void*>(kernel), bytes, [&] {
    const bool forced = detail::force_attribute_failure.exchange(false);
    err = set_max_dynamic_shared(kernel, forced ? INT_MAX : bytes);
    if (forced && err == success) err = invalid_value;  // a runtime that accepts any size
    if (err != success) (void)get_last_error();  // else the next HIPATTN_CHECK_LAUNCH reports it
    return err == success;
  });
  if (ok) return;
  std::string kernel_name;
  if constexpr (std::is_invocable_v<Name&>) kernel_name = name();
  else kernel_name = name;
  throw Error(ErrorCode::runtime, "device",
              "device " + std::to_string(device) + ": raising the dynamic shared memory of " + kernel_name + " to " +
                  std::to_string(bytes) + " bytes failed: " + error_string(err) +
                  " (not launched; the next launch asks again)");
}
}  // namespace hipattn::rt

namespace hipattn::rt {
inline DeviceProperties device_properties(int device) {
  DeviceProperties p;
  if (device < 0) HIPATTN_CHECK(get_device(&device));
  p.device = device;
#if defined(HIPATTN_BACKEND_HIP)
  hipDeviceProp_t prop;
  HIPATTN_CHECK(hipGetDeviceProperties(&prop, device));
  p.arch_name = prop.gcnArchName;
  p.multiprocessor_count = prop.multiProcessorCount;
  p.lds_per_block_optin = prop.sharedMemPerBlock;
  p.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
  p.wave_size = prop.warpSize;
#else
  int major = 0, minor = 0, sms = 0, optin = 0, l2 = 0, warp = 0;
  HIPATTN_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  HIPATTN_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  HIPATTN_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  HIPATTN_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  HIPATTN_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  HIPATTN_CHECK(cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, device));
  p.arch_name = "sm_" + std::to_string(major) + std::to_string(minor);
  p.multiprocessor_count = sms;
  p.lds_per_block_optin = static_cast<size_t>(optin);
  p.l2_bytes = static_cast<size_t>(l2);
  p.wave_size = warp;
#endif
  p.target = target_from_arch_name(p.arch_name);
  return p;
}
}  // namespace hipattn::rt
namespace hipattn::rt {
// Not std::call_once: libstdc++'s call_once hands the callable to pthread_once through TLS and a
// global __once_proxy, and where a shared object carries its own exported copy of those, another
// module's call_once can run nothing. Seen on the GPU machine (g++ 13, two instance-library modules in
// one process, tests/consumer): the second module got empty properties. A mutex and an acquire flag.
inline const DeviceProperties& cached_device_properties() {
  constexpr int kMaxDevices = 64;
  static DeviceProperties cache[kMaxDevices];
  static std::atomic<bool> ready[kMaxDevices];
  static std::mutex mutex;
  int d = 0;
  HIPATTN_CHECK(get_device(&d));
  if (d < 0 || d >= kMaxDevices) throw Error(ErrorCode::runtime, "device", std::to_string(d) + " >= 64 devices");
  if (!ready[d].load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!ready[d].load(std::memory_order_relaxed)) {
      cache[d] = device_properties(d);
      ready[d].store(true, std::memory_order_release);
    }
  }
  return cache[d];
}
}  // namespace hipattn::rt
namespace hipattn::rt {
// A sequence of stream work captured once as a graph and replayed: what engines do under graph
// capture, and how the benchmarks time a call without host overhead. `record(stream)` enqueues the
// work on the capturing stream; it is run once before capture to warm up (module load, attributes).
class CapturedGraph {
 public:
  template <class Record>
  explicit CapturedGraph(Record&& record) {
#if defined(HIPATTN_BACKEND_HIP)
    HIPATTN_CHECK(hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking));
    record(stream_);
    HIPATTN_CHECK(hipStreamSynchronize(stream_));
    HIPATTN_CHECK(hipStreamBeginCapture(stream_, hipStreamCaptureModeThreadLocal));
    record(stream_);
    HIPATTN_CHECK(hipStreamEndCapture(stream_, &graph_));
    HIPATTN_CHECK(hipGraphInstantiate(&exec_, graph_, nullptr, nullptr, 0));
#else
    HIPATTN_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    record(stream_);
    HIPATTN_CHECK(cudaStreamSynchronize(stream_));
    HIPATTN_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    record(stream_);
    HIPATTN_CHECK(cudaStreamEndCapture(stream_, &graph_));
    HIPATTN_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
#endif
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() {
#if defined(HIPATTN_BACKEND_HIP)
    (void)hipGraphExecDestroy(exec_);
    (void)hipGraphDestroy(graph_);
    (void)hipStreamDestroy(stream_);
#else
    (void)cudaGraphExecDestroy(exec_);
    (void)cudaGraphDestroy(graph_);
    (void)cudaStreamDestroy(stream_);
#endif
  }
  // Replay the graph on `s`.
  void launch(stream_t s) const {
#if defined(HIPATTN_BACKEND_HIP)
    HIPATTN_CHECK(hipGraphLaunch(exec_, s));
#else
    HIPATTN_CHECK(cudaGraphLaunch(exec_, s));
#endif
  }

 private:
  stream_t stream_{};
#if defined(HIPATTN_BACKEND_HIP)
  hipGraph_t graph_{};
  hipGraphExec_t exec_{};
#else
  cudaGraph_t graph_{};
  cudaGraphExec_t exec_{};
#endif
};

}  // namespace hipattn::rt
#endif  // HIPATTN_HAS_DEVICE
