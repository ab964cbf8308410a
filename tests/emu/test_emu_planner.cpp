// tests/emu/test_emu_planner.cpp: the decode work planner (kernels/common/task_plan.hpp,
// plan_decode_tasks_kernel) executed on the emulator for gfx942 and gfx950: every task slot, every
// item's first slot and the status equal the host plan of the same lengths (random batches with and
// without a window, min-max and fixed bounds, an overflowing call). Outputs poisoned before a launch.
// Code objects: $HIPATTN_EMU_PLANNER_GFX942 / $HIPATTN_EMU_PLANNER_GFX950.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "../common/plan_cases.hpp"
#include "emu.hpp"
#include "hipattn/kernels/common/task_plan.hpp"

namespace hipattn::emu {
namespace {

class EmuPlanner : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string var = "HIPATTN_EMU_PLANNER_" + std::string(GetParam() == "gfx942" ? "GFX942" : "GFX950");
    const char* p = std::getenv(var.c_str());
    if (!p || !*p) GTEST_SKIP() << var << " not set (no AMD toolchain): emulated test skipped";
    co = CodeObject::load(p);
  }
  std::shared_ptr<const CodeObject> co;
};

void expect_same(const CodeObject& co, const std::vector<int32_t>& lens, const DecodeItemShape& shape, int32_t capacity,
                 int32_t fixed, const std::string& what, int32_t wave_slots = 0) {
  const int32_t count = static_cast<int32_t>(lens.size());
  std::vector<PlanTask> want(capacity);
  std::vector<int32_t> want0(count), n(count), first(count);
  const int32_t want_status =
      plan_decode_tasks_host(lens.data(), count, shape, capacity, fixed, want.data(), want0.data(), n.data(), first.data(),
                             wave_slots);
  Memory mem;
  DecodePlanArgs a;  // the layout the kernel reads, with emulated addresses in the pointer fields
  static_assert(sizeof(DecodePlanArgs) == 64, "DecodePlanArgs layout");
  const uint64_t d_lens = mem.upload(lens, "seq_lens_k");
  const uint64_t d_tasks = mem.upload(std::vector<uint8_t>(size_t(capacity) * sizeof(PlanTask), 0x5A), "tasks");
  const uint64_t d_task0 = mem.upload(std::vector<int32_t>(count, -99), "item_task0");
  const uint64_t d_status = mem.upload(std::vector<int32_t>(1, -99), "status");
  a.seq_lens_k = reinterpret_cast<const int32_t*>(d_lens);
  a.num_items = count;
  a.shape = shape;
  a.capacity = capacity;
  a.fixed_tiles = fixed;
  a.wave_slots = wave_slots;
  a.tasks = reinterpret_cast<PlanTask*>(d_tasks);
  a.item_task0 = reinterpret_cast<int32_t*>(d_task0);
  a.status = reinterpret_cast<int32_t*>(d_status);
  launch(co, co.find_manifest(planner_manifest(kPlannerThreads).c_str()), {1, 1, 1}, {uint32_t(kPlannerThreads), 1, 1}, 0, &a, sizeof(a), mem);
  const auto got = mem.download<PlanTask>(d_tasks, capacity);
  const auto got0 = mem.download<int32_t>(d_task0, count);
  const auto status = mem.download<int32_t>(d_status, 1);
  ASSERT_EQ(status[0], want_status) << what;
  ASSERT_EQ(got0, want0) << what;
  for (int32_t s = 0; s < capacity; ++s)
    ASSERT_TRUE(got[s].item == want[s].item && got[s].tile_begin == want[s].tile_begin &&
                got[s].tile_end == want[s].tile_end && got[s].part == want[s].part && got[s].parts == want[s].parts)
        << what << ": slot " << s;
}

TEST_P(EmuPlanner, EqualsTheHostPlan) {
  std::mt19937 rng(GetParam() == "gfx942" ? 42 : 950);
  for (int iter = 0; iter < 12; ++iter) {
    const testing::PlanCase c = testing::random_plan_case(rng, iter % 3 == 0 ? 700 : 40, 200, iter % 4 == 3);
    expect_same(*co, c.lens, c.shape, c.capacity, c.fixed, GetParam() + " iteration " + std::to_string(iter), c.wave_slots);
    if (HasFatalFailure()) return;
  }
  expect_same(*co, {30000, 30000, 30000}, DecodeItemShape{}, 5, 1, GetParam() + " overflow");
}

INSTANTIATE_TEST_SUITE_P(Targets, EmuPlanner, ::testing::Values("gfx942", "gfx950"));

}  // namespace
}  // namespace hipattn::emu
