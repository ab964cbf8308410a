// tests/common/plan_cases.hpp: random decode batches for the work planner's device tests (the H200
// suite and the emulator tier compare the device plan with the host plan on these).
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "hipattn/kernels/common/task_plan.hpp"

namespace hipattn::testing {

struct PlanCase {
  std::vector<int32_t> lens;  // seq_lens_k: 0 to 32768, one in six 0-2
  DecodeItemShape shape;      // q_len 1-8, 16- or 64-key tiles, a window one time in three
  int32_t capacity = 0;       // the item count up to (spare + item count x 3) more
  int32_t fixed = 0;          // > 0: a batch-invariant bound (capacity sized for the worst case)
  int32_t wave_slots = 0;     // min-max plans, half the time: slots a wave (1 to the capacity)
};

inline PlanCase random_plan_case(std::mt19937& rng, int32_t max_items, int32_t spare, bool fixed_bound) {
  PlanCase c;
  const int32_t count = 1 + static_cast<int32_t>(rng() % max_items);
  c.lens.resize(count);
  for (auto& l : c.lens) l = rng() % 6 == 0 ? static_cast<int32_t>(rng() % 3) : static_cast<int32_t>(rng() % 32769);
  c.shape.q_len = 1 + static_cast<int32_t>(rng() % 8);
  c.shape.tile_keys = rng() % 2 ? 64 : 16;
  c.shape.window_left = rng() % 3 == 0 ? static_cast<int32_t>(rng() % 8192) : -1;
  c.fixed = fixed_bound ? 1 + static_cast<int32_t>(rng() % 64) : 0;
  c.capacity = c.fixed > 0 ? count * (32768 / c.shape.tile_keys / c.fixed + 1)
                           : count + static_cast<int32_t>(rng() % (3 * count + spare));
  if (c.fixed == 0 && rng() % 2) c.wave_slots = 1 + static_cast<int32_t>(rng() % c.capacity);
  return c;
}

}  // namespace hipattn::testing
