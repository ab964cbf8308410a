// The device work planner (kernels/common/task_plan.hpp plan_decode_tasks_kernel) against the host
// plan of the same lengths: every slot, every item's first slot and the status equal, for random
// batches (lengths 0 to 32K, 1 to 2000 items, q_len 1 to 8, with and without a window, min-max and
// fixed bounds, capacities from the item count to many times it) and an overflowing call. Outputs are
// poisoned before each launch; each launch is checked. Skips itself without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "../common/gpu.hpp"
#include "../../testing/paged_problem.hpp"
#include "../common/plan_cases.hpp"
#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/platform/runtime.hpp"

namespace hipattn::testing {
namespace {

struct DevicePlan {
  std::vector<PlanTask> tasks;
  std::vector<int32_t> task0;
  int32_t status = -1;
};

DevicePlan plan_on_device(const std::vector<int32_t>& lens, const DecodeItemShape& shape, int32_t capacity,
                          int32_t fixed, int32_t wave_slots) {
  const int32_t count = static_cast<int32_t>(lens.size());
  DeviceBuffer d_lens = DeviceBuffer::from(lens);
  DeviceBuffer d_tasks(size_t(capacity) * sizeof(PlanTask)), d_task0(size_t(count) * 4), d_status(4);
  for (const DeviceBuffer* b : {&d_tasks, &d_task0, &d_status}) HIPATTN_CHECK(rt::memset_async(b->ptr, 0x5A, b->bytes, nullptr));
  DecodePlanArgs a;
  a.seq_lens_k = d_lens.as<int32_t>();
  a.num_items = count;
  a.shape = shape;
  a.capacity = capacity;
  a.fixed_tiles = fixed;
  a.wave_slots = wave_slots;
  a.tasks = d_tasks.as<PlanTask>();
  a.item_task0 = d_task0.as<int32_t>();
  a.status = d_status.as<int32_t>();
  plan_decode_tasks_kernel<><<<1, kPlannerThreads>>>(a);
  HIPATTN_CHECK_LAUNCH();
  HIPATTN_CHECK(rt::device_synchronize());
  DevicePlan p;
  p.tasks.resize(capacity);
  p.task0.resize(count);
  HIPATTN_CHECK(rt::memcpy_d2h(p.tasks.data(), d_tasks.ptr, d_tasks.bytes));
  HIPATTN_CHECK(rt::memcpy_d2h(p.task0.data(), d_task0.ptr, d_task0.bytes));
  HIPATTN_CHECK(rt::memcpy_d2h(&p.status, d_status.ptr, 4));
  return p;
}

void expect_same_plan(const std::vector<int32_t>& lens, const DecodeItemShape& shape, int32_t capacity, int32_t fixed,
                      const char* what, int32_t wave_slots = 0) {
  const int32_t count = static_cast<int32_t>(lens.size());
  std::vector<PlanTask> tasks(capacity);
  std::vector<int32_t> task0(count), n(count), first(count);
  const int32_t status =
      plan_decode_tasks_host(lens.data(), count, shape, capacity, fixed, tasks.data(), task0.data(), n.data(), first.data(),
                             wave_slots);
  const DevicePlan d = plan_on_device(lens, shape, capacity, fixed, wave_slots);
  ASSERT_EQ(d.status, status) << what;
  ASSERT_EQ(d.task0, task0) << what;
  for (int32_t s = 0; s < capacity; ++s) {
    const PlanTask &x = d.tasks[s], &y = tasks[s];
    ASSERT_TRUE(x.item == y.item && x.tile_begin == y.tile_begin && x.tile_end == y.tile_end && x.part == y.part &&
                x.parts == y.parts)
        << what << ": slot " << s << " device {" << x.item << ", " << x.tile_begin << ", " << x.tile_end << ", "
        << x.part << "/" << x.parts << "} host {" << y.item << ", " << y.tile_begin << ", " << y.tile_end << ", "
        << y.part << "/" << y.parts << "}";
  }
}

TEST(TaskPlanDevice, EqualsTheHostPlan) {
  REQUIRE_GPU();
  std::mt19937 rng(2027);
  int planned = 0;
  for (int iter = 0; iter < 120; ++iter) {
    const PlanCase c = random_plan_case(rng, iter % 4 == 0 ? 2000 : 64, 300, rng() % 4 == 0);
    expect_same_plan(c.lens, c.shape, c.capacity, c.fixed, ("iteration " + std::to_string(iter)).c_str(), c.wave_slots);
    if (HasFatalFailure()) return;
    ++planned;
  }
  // lengths past the bounds the capacity was sized for: the device reports the overflow, plans nothing
  expect_same_plan({30000, 30000, 30000}, DecodeItemShape{}, 3 + 2, 1, "overflow");
  std::printf("  %d random plans and an overflow equal on device and host\n", planned);
}

}  // namespace
}  // namespace hipattn::testing
