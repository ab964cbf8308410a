// tests/host/test_task_plan.cpp: the decode work planner's split (kernels/common/task_plan.hpp) on the
// host: every tile of every item covered exactly once, the bound the smallest feasible one and the
// longest task equal to it, windows, empty and context-0 items, capacities below, at and above the
// item count, batch-invariant plans. tests/device/test_task_plan.cu checks the device planner
// against these host plans.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "hipattn/kernels/common/task_plan.hpp"

namespace {

using hipattn::DecodeItemShape;
using hipattn::PlanTask;

struct Plan {
  std::vector<PlanTask> tasks;
  std::vector<int32_t> task0, n, first;
  int32_t status = -1;
};

Plan plan(const std::vector<int32_t>& lens, const DecodeItemShape& shape, int32_t capacity, int32_t fixed = 0,
          int32_t wave_slots = 0) {
  Plan p;
  const int32_t count = static_cast<int32_t>(lens.size());
  p.tasks.assign(capacity, PlanTask{7, 7, 7, 7, 7});  // poison: every slot must be written
  p.task0.assign(count, -7);
  p.n.assign(count, 0);
  p.first.assign(count, 0);
  p.status = hipattn::plan_decode_tasks_host(lens.data(), count, shape, capacity, fixed, p.tasks.data(),
                                              p.task0.data(), p.n.data(), p.first.data(), wave_slots);
  return p;
}

int64_t tasks_for(const std::vector<int32_t>& n, int32_t T) {
  int64_t t = 0;
  for (int32_t x : n) t += hipattn::plan_item_tasks(x, T);
  return t;
}

// Every invariant of a successful plan; returns the bound the plan used (its longest task).
// Layout: split items (more than one task) first, then one-task items, each group in item order.
int32_t check_plan(const Plan& p, const std::vector<int32_t>& lens, const DecodeItemShape& shape, int32_t capacity) {
  EXPECT_EQ(p.status, hipattn::kPlanOk);
  int32_t split_tasks = 0;
  for (size_t i = 0; i < lens.size(); ++i)
    if (p.tasks[p.task0[i]].parts > 1) split_tasks += p.tasks[p.task0[i]].parts;
  int32_t split_slot = 0, single_slot = split_tasks, longest = 0;
  for (size_t i = 0; i < lens.size(); ++i) {
    const hipattn::KvTileRange r = shape.range(std::max(0, lens[i]));
    const int32_t n = r.empty() ? 0 : r.tile_end - r.tile_begin;
    const int32_t k = p.tasks[p.task0[i]].parts;
    int32_t& slot = k > 1 ? split_slot : single_slot;
    EXPECT_EQ(p.task0[i], slot) << "item " << i;
    EXPECT_GE(k, 1);
    int32_t next = r.empty() ? 0 : r.tile_begin;
    for (int32_t j = 0; j < k; ++j, ++slot) {
      const PlanTask& t = p.tasks[slot];
      EXPECT_EQ(t.item, static_cast<int32_t>(i));
      EXPECT_EQ(t.part, j);
      EXPECT_EQ(t.parts, k);
      EXPECT_EQ(t.tile_begin, next) << "item " << i << " part " << j << ": tiles contiguous, no gap, no overlap";
      EXPECT_GE(t.tile_end, t.tile_begin);
      next = t.tile_end;
      longest = std::max(longest, t.tile_end - t.tile_begin);
    }
    EXPECT_EQ(next, r.empty() ? 0 : r.tile_end) << "item " << i << ": the parts end at the last tile";
    if (n == 0) {
      EXPECT_EQ(k, 1) << "an item without tiles has one task (it writes its output)";
    }
  }
  EXPECT_EQ(split_slot, split_tasks) << "the split items' tasks fill the first slots";
  for (int32_t s = single_slot; s < capacity; ++s) EXPECT_EQ(p.tasks[s].item, -1) << "slot " << s << " past the last task";
  return longest;
}

TEST(TaskPlan, MinMaxBoundIsTheSmallestFeasibleAndTheLongestTask) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 400; ++iter) {
    const int32_t count = 1 + static_cast<int32_t>(rng() % 40);
    std::vector<int32_t> lens(count);
    for (auto& l : lens) l = rng() % 5 == 0 ? static_cast<int32_t>(rng() % 4) : static_cast<int32_t>(rng() % 20000);
    DecodeItemShape shape;
    shape.q_len = 1 + static_cast<int32_t>(rng() % 8);
    shape.tile_keys = rng() % 2 ? 64 : 32;
    const int32_t capacity = count + static_cast<int32_t>(rng() % 300);
    const Plan p = plan(lens, shape, capacity);
    const int32_t longest = check_plan(p, lens, shape, capacity);
    // brute force: the smallest T with tasks(T) <= capacity
    const int32_t mx = std::max(1, *std::max_element(p.n.begin(), p.n.end()));
    int32_t best = mx;
    for (int32_t T = 1; T <= mx; ++T)
      if (tasks_for(p.n, T) <= capacity) {
        best = T;
        break;
      }
    if (*std::max_element(p.n.begin(), p.n.end()) > 0) {
      EXPECT_EQ(longest, best) << "iteration " << iter;
    }
    EXPECT_EQ(hipattn::plan_minmax_bound_host(p.n.data(), count, capacity), best);
  }
}

// A long sequence among short ones gets the slots (the unified path's 15 x 2K + 1 x 128K case).
TEST(TaskPlan, MixedLengthsDoNotEndOnOneLongTask) {
  std::vector<int32_t> lens(15, 2048);
  lens.push_back(131072);
  DecodeItemShape shape;
  shape.tile_keys = 64;
  const Plan p = plan(lens, shape, 264);  // 2 workgroups x 132 SMs, one kv head
  const int32_t longest = check_plan(p, lens, shape, 264);
  // 15 x 32 + 2048 tiles = 2528 over 264 slots: at least 10 tiles a task, but 10 needs 15 x 4 + 205 =
  // 265 tasks; 11 needs 15 x 3 + 187 = 232. Against 1024 tiles in the longest task when each sequence
  // gets two segments.
  EXPECT_EQ(longest, 11);
  EXPECT_EQ(p.tasks[p.task0[15]].parts, 187);
  EXPECT_EQ(p.tasks[p.task0[0]].parts, 3);
}

// Waves (the top of kernels/common/task_plan.hpp): 255 x 1K + 1 x 100K on waves of 256 slots with
// half a wave spare (512 slots, planned_capacity). The fewest waves (one: 256 slots, a task an item)
// leave the 100K sequence in one task of 3125 tiles (32-key tiles); all 512 slots give tasks of at
// most 32 tiles (255 + 98 = 353 tasks, two waves): 64 tile times against 3125, so the plan takes them.
// Even lengths keep the one wave of whole sequences (32 tiles each, against two waves of 16).
TEST(TaskPlan, WavesWeighFewerLongerTasksAgainstMoreShorter) {
  DecodeItemShape shape;
  shape.tile_keys = 32;
  std::vector<int32_t> mixed(255, 1024);
  mixed.push_back(100000);
  const Plan m = plan(mixed, shape, 512, 0, 256);
  EXPECT_EQ(check_plan(m, mixed, shape, 512), 32);
  EXPECT_EQ(m.tasks[m.task0[255]].parts, 98);
  EXPECT_EQ(check_plan(plan(mixed, shape, 512), mixed, shape, 512), 32) << "no waves: all the slots";
  EXPECT_EQ(check_plan(plan(mixed, shape, 256), mixed, shape, 256), 3125) << "one wave: a task an item";
  const std::vector<int32_t> even(256, 1024);
  const Plan e = plan(even, shape, 512, 0, 256);
  EXPECT_EQ(check_plan(e, even, shape, 512), 32);
  for (int32_t i = 0; i < 256; ++i) EXPECT_EQ(e.tasks[e.task0[i]].parts, 1) << "item " << i;
  EXPECT_EQ(check_plan(plan(even, shape, 512), even, shape, 512), 16) << "no waves: two tasks an item";
  // the choice against brute force: waves x bound, the fewest waves on a tie
  std::mt19937 rng(7);
  for (int iter = 0; iter < 200; ++iter) {
    const int32_t wave = 1 + int32_t(rng() % 40), count = 1 + int32_t(rng() % 60);
    const int32_t few = (count + wave - 1) / wave * wave, capacity = few + wave * int32_t(rng() % 3);
    std::vector<int32_t> lens(static_cast<size_t>(count));
    for (auto& l : lens) l = rng() % 4 == 0 ? int32_t(rng() % 40000) : int32_t(rng() % 2000);
    const Plan w = plan(lens, shape, capacity, 0, wave);
    const int32_t got = check_plan(w, lens, shape, capacity);
    const int32_t t_all = hipattn::plan_minmax_bound_host(w.n.data(), count, capacity);
    const int32_t t_few = hipattn::plan_minmax_bound_host(w.n.data(), count, few);
    const int32_t want = int64_t(few / wave) * t_few <= int64_t(capacity / wave) * t_all ? t_few : t_all;
    if (*std::max_element(w.n.begin(), w.n.end()) > 0) {
      EXPECT_EQ(got, want) << "iteration " << iter;
    }
  }
}

TEST(TaskPlan, WindowPlansOnlyTheWindowsTiles) {
  DecodeItemShape shape;
  shape.tile_keys = 16;
  shape.window_left = 4095;  // 4096 keys: [seq_len - 4096, seq_len)
  const std::vector<int32_t> lens = {8192, 131072, 590, 4096, 4097, 0, 1};
  const Plan p = plan(lens, shape, 64);
  check_plan(p, lens, shape, 64);
  const PlanTask& t = p.tasks[p.task0[1]];
  EXPECT_EQ(t.tile_begin, (131072 - 4096) / 16) << "the long sequence starts at its window";
  int32_t tiles = 0;
  for (int32_t j = 0; j < t.parts; ++j) tiles += p.tasks[p.task0[1] + j].tile_end - p.tasks[p.task0[1] + j].tile_begin;
  EXPECT_EQ(tiles, 256);
  EXPECT_EQ(p.n[0], 256);
  EXPECT_EQ(p.n[2], 37) << "590 keys < window: all of them (ceil(590 / 16))";
  EXPECT_EQ(p.n[4], 257) << "4097 keys: the window starts at key 1, inside tile 0";
}

TEST(TaskPlan, EmptyAndContextZeroItemsGetOneEmptyTask) {
  DecodeItemShape shape;
  const std::vector<int32_t> lens = {0, 0, 300, 0};
  const Plan p = plan(lens, shape, 4);
  check_plan(p, lens, shape, 4);
  for (int i : {0, 1, 3}) {
    EXPECT_EQ(p.tasks[p.task0[i]].parts, 1);
    EXPECT_EQ(p.tasks[p.task0[i]].tile_begin, p.tasks[p.task0[i]].tile_end);
  }
  EXPECT_EQ(p.tasks[p.task0[2]].parts, 1) << "4 slots for 4 items: one partition each";
  const Plan none = plan({0, 0}, shape, 8);
  check_plan(none, {0, 0}, shape, 8);
}

TEST(TaskPlan, CapacityBelowAtAndAboveTheBatch) {
  DecodeItemShape shape;
  const std::vector<int32_t> lens = {1000, 5000, 64, 20000};
  const Plan below = plan(lens, shape, 3);
  EXPECT_EQ(below.status, hipattn::kPlanOverflow);
  for (const PlanTask& t : below.tasks) EXPECT_EQ(t.item, -1) << "an overflowing plan plans nothing";
  const Plan at = plan(lens, shape, 4);  // one partition each: the kernel writes the output directly
  check_plan(at, lens, shape, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(at.tasks[at.task0[i]].parts, 1);
  const Plan above = plan(lens, shape, 1000);
  EXPECT_EQ(check_plan(above, lens, shape, 1000), 1) << "more slots than tiles: one tile a task";
}

// Fixed bounds: a sequence's tasks are the same alone and in any batch (bitwise-reproducible output).
TEST(TaskPlan, FixedBoundIsBatchInvariant) {
  std::mt19937 rng(9);
  DecodeItemShape shape;
  shape.q_len = 4;
  const int32_t fixed = 16;  // 1024 keys a task
  const std::vector<int32_t> alone_lens = {7777};
  const Plan alone = plan(alone_lens, shape, 8, fixed);
  check_plan(alone, alone_lens, shape, 8);
  for (int iter = 0; iter < 50; ++iter) {
    std::vector<int32_t> lens(1 + rng() % 30);
    for (auto& l : lens) l = static_cast<int32_t>(rng() % 32768);
    const size_t at = rng() % lens.size();
    lens[at] = 7777;
    const int32_t capacity = static_cast<int32_t>(lens.size()) * (32768 / 64 / fixed + 1);
    const Plan p = plan(lens, shape, capacity, fixed);
    check_plan(p, lens, shape, capacity);
    const int32_t k = alone.tasks[0].parts;
    ASSERT_EQ(p.tasks[p.task0[at]].parts, k);
    for (int32_t j = 0; j < k; ++j) {
      EXPECT_EQ(p.tasks[p.task0[at] + j].tile_begin, alone.tasks[j].tile_begin);
      EXPECT_EQ(p.tasks[p.task0[at] + j].tile_end, alone.tasks[j].tile_end);
    }
  }
}

}  // namespace

// plan_write_item steps the boundaries without a division per task: they equal plan_part's
// floor(j n / k) for every part, including n < k (empty parts), k = 1 and lengths near 2^20 tiles.
TEST(TaskPlan, WriteItemBoundariesEqualPlanPart) {
  std::mt19937 rng(11);
  std::vector<std::pair<int32_t, int32_t>> cases = {{0, 1}, {1, 1}, {5, 7}, {7, 5}, {64, 64}, {1 << 20, 32767}, {1563, 9}};
  for (int c = 0; c < 300; ++c) {
    const int32_t n = static_cast<int32_t>(rng() % (1 << 20));
    cases.push_back({n, static_cast<int32_t>(1 + rng() % 32767)});
  }
  for (auto [n, k] : cases) {
    std::vector<hipattn::PlanTask> tasks(static_cast<size_t>(k));
    hipattn::plan_write_item(tasks.data(), 0, 3, n, 100, k);
    for (int32_t j = 0; j < k; ++j) {
      int32_t b, e;
      hipattn::plan_part(n, k, j, b, e);
      ASSERT_EQ(tasks[j].tile_begin, 100 + b) << "n " << n << " k " << k << " part " << j;
      ASSERT_EQ(tasks[j].tile_end, 100 + e) << "n " << n << " k " << k << " part " << j;
      ASSERT_EQ(tasks[j].part, j);
      ASSERT_EQ(tasks[j].parts, k);
      ASSERT_EQ(tasks[j].item, 3);
    }
  }
}
