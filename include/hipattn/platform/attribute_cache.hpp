// hipattn/platform/attribute_cache.hpp: which kernels already had their dynamic shared-memory limit
// raised, per device. Plain C++ (no runtime calls): platform/runtime.hpp plugs the runtime's setter in,
// the host tests a fake one.
#pragma once
#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

namespace hipattn::rt {

// Per (device, kernel) record of the largest dynamic shared-memory limit set successfully. The limit is
// a property of a kernel in one device's context, so it is set once per device and per kernel instance.
// Only successes are remembered: after a failed set (out of memory while the runtime loads the kernel,
// say) the next launch asks the runtime again instead of launching without the limit, or never again.
// Thread-safe; the setter runs under the lock, so concurrent first launches call it once.
class KernelAttributeCache {
 public:
  // Make sure `kernel` allows `bytes` of dynamic shared memory on `device`. True at once when a set of
  // at least `bytes` succeeded before; otherwise calls set() (which returns true on success), remembers
  // a success and returns set()'s result. An exception from set() leaves the record as it was.
  template <class Set>
  bool ensure(int device, const void* kernel, int bytes, Set&& set) {
    std::lock_guard<std::mutex> lock(mutex_);
    const Key key{device, kernel};
    const auto it = done_.find(key);
    if (it != done_.end() && it->second >= bytes) return true;
    if (!set()) return false;
    done_[key] = bytes;
    return true;
  }

  // Whether a set of at least `bytes` for (device, kernel) succeeded.
  bool contains(int device, const void* kernel, int bytes) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = done_.find(Key{device, kernel});
    return it != done_.end() && it->second >= bytes;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_.size();
  }

  // Forget every success (the next ensure of each kernel calls its setter again).
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    done_.clear();
  }

 private:
  using Key = std::pair<int, const void*>;
  mutable std::mutex mutex_;
  std::map<Key, int> done_;
};

}  // namespace hipattn::rt
