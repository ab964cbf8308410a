// The per-(device, kernel) record of dynamic shared-memory limits (platform/attribute_cache.hpp) that
// the launch paths consult before each launch: set once per device and per kernel, failures retried.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "hipattn/platform/attribute_cache.hpp"

namespace hipattn::rt {
namespace {

int kernel_a = 0, kernel_b = 0;  // stand-ins for two kernels: only their addresses matter
const void* const a = &kernel_a;
const void* const b = &kernel_b;

// A setter that counts its calls and succeeds or fails as told.
struct FakeSetter {
  int calls = 0;
  bool succeed = true;
  auto fn() {
    return [this] {
      ++calls;
      return succeed;
    };
  }
};

TEST(KernelAttributeCache, FailureIsNotRememberedAndTheNextCallRetries) {
  KernelAttributeCache cache;
  FakeSetter set;
  set.succeed = false;  // the first set fails (out of memory, say)
  EXPECT_FALSE(cache.ensure(0, a, 100 * 1024, set.fn()));
  EXPECT_EQ(set.calls, 1);
  EXPECT_FALSE(cache.contains(0, a, 100 * 1024));
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_FALSE(cache.ensure(0, a, 100 * 1024, set.fn()));  // still failing: asked again, not cached
  EXPECT_EQ(set.calls, 2);
  set.succeed = true;  // the pressure has passed
  EXPECT_TRUE(cache.ensure(0, a, 100 * 1024, set.fn()));
  EXPECT_EQ(set.calls, 3);
  EXPECT_TRUE(cache.contains(0, a, 100 * 1024));
  set.succeed = false;  // remembered now: the setter is not called again
  EXPECT_TRUE(cache.ensure(0, a, 100 * 1024, set.fn()));
  EXPECT_EQ(set.calls, 3);
}

TEST(KernelAttributeCache, OncePerDeviceAndPerKernel) {
  KernelAttributeCache cache;
  FakeSetter set;
  EXPECT_TRUE(cache.ensure(0, a, 1000, set.fn()));
  EXPECT_TRUE(cache.ensure(0, a, 1000, set.fn()));
  EXPECT_EQ(set.calls, 1);
  EXPECT_TRUE(cache.ensure(1, a, 1000, set.fn()));  // a second device: its own context, its own set
  EXPECT_EQ(set.calls, 2);
  EXPECT_TRUE(cache.ensure(0, b, 1000, set.fn()));  // another kernel instance
  EXPECT_EQ(set.calls, 3);
  EXPECT_TRUE(cache.ensure(1, a, 1000, set.fn()));
  EXPECT_TRUE(cache.ensure(0, b, 1000, set.fn()));
  EXPECT_EQ(set.calls, 3);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_FALSE(cache.contains(1, b, 1000));
}

TEST(KernelAttributeCache, ALargerRequestSetsAgainASmallerOneDoesNot) {
  KernelAttributeCache cache;
  FakeSetter set;
  EXPECT_TRUE(cache.ensure(0, a, 1000, set.fn()));
  EXPECT_TRUE(cache.ensure(0, a, 500, set.fn()));  // within the limit already set
  EXPECT_EQ(set.calls, 1);
  EXPECT_TRUE(cache.ensure(0, a, 2000, set.fn()));
  EXPECT_EQ(set.calls, 2);
  EXPECT_TRUE(cache.contains(0, a, 2000));
  set.succeed = false;  // a failed raise keeps the smaller limit that did succeed
  EXPECT_FALSE(cache.ensure(0, a, 4000, set.fn()));
  EXPECT_TRUE(cache.contains(0, a, 2000));
  EXPECT_FALSE(cache.contains(0, a, 4000));
}

TEST(KernelAttributeCache, AThrowingSetterLeavesNothingBehind) {
  KernelAttributeCache cache;
  int calls = 0;
  EXPECT_THROW(cache.ensure(0, a, 1000,
                            [&]() -> bool {
                              ++calls;
                              throw std::runtime_error("runtime gone");
                            }),
               std::runtime_error);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(cache.ensure(0, a, 1000, [&] { return ++calls > 0; }));  // the lock was released
  EXPECT_EQ(calls, 2);
}

TEST(KernelAttributeCache, ClearForgetsEverySuccess) {
  KernelAttributeCache cache;
  FakeSetter set;
  EXPECT_TRUE(cache.ensure(0, a, 1000, set.fn()));
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(cache.ensure(0, a, 1000, set.fn()));
  EXPECT_EQ(set.calls, 2);
}

TEST(KernelAttributeCache, ConcurrentFirstLaunchesSetOnce) {
  KernelAttributeCache cache;
  std::atomic<int> calls{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int device = (t + i) % 2;
        const void* kernel = (i % 3 == 0) ? a : b;
        if (!cache.ensure(device, kernel, 4096, [&] { return ++calls > 0; })) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(calls.load(), 4);  // (2 devices) x (2 kernels), each set exactly once
  EXPECT_EQ(cache.size(), 4u);
}

}  // namespace
}  // namespace hipattn::rt
