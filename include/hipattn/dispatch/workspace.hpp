// hipattn/dispatch/workspace.hpp: the workspace of launches over task slots (unified attention's
// planned 3D grid, paged decode, MLA decode) and the wave-filling counts that size it (host only).
#pragma once
#include "hipattn/platform/error.hpp"
#include <string>
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "hipattn/kernels/common/task_plan.hpp"

namespace hipattn {

// How a decode launch spreads each sequence over task slots (the plan's resolved choice; the options'
// enumerations add `automatic`):
//   one_partition  one task a sequence: no planner, no reduce
//   uniform        every sequence in the same number of near-equal segments (no planner), then the reduce
//   planned        the device planner's tasks (kernels/common/task_plan.hpp), then the reduce
enum class SlotSplit : uint8_t { one_partition, uniform, planned };

// The workspace of a launch over task slots: the plan (tasks [capacity], item_task0 [num_seqs],
// status), then the partial outputs [capacity, rows_per_slot, head_size] and LSEs [capacity,
// rows_per_slot] (fp32), each block 256-byte aligned; byte offsets.
struct SlotWorkspace {
  size_t tasks, item_task0, status, o, lse, total;
};
inline SlotWorkspace slot_workspace(int32_t capacity, int32_t num_seqs, int64_t rows_per_slot, int32_t head_size) {
  auto up = [](size_t x) { return (x + 255) / 256 * 256; };
  SlotWorkspace w{};
  w.tasks = 0;
  w.item_task0 = up(static_cast<size_t>(capacity) * sizeof(PlanTask));
  w.status = w.item_task0 + up(static_cast<size_t>(num_seqs) * sizeof(int32_t));
  w.o = w.status + 256;
  const size_t rows = static_cast<size_t>(capacity) * static_cast<size_t>(rows_per_slot);
  w.lse = w.o + up(rows * static_cast<size_t>(head_size) * sizeof(float));
  w.total = w.lse + up(rows * sizeof(float));
  return w;
}

// Its buffers in a workspace.
struct SlotBuffers {
  PlanTask* tasks;
  int32_t* item_task0;
  int32_t* status;
  float* o;
  float* lse;
};
inline SlotBuffers slot_buffers(const SlotWorkspace& w, void* workspace) {
  char* base = static_cast<char*>(workspace);
  return {reinterpret_cast<PlanTask*>(base + w.tasks), reinterpret_cast<int32_t*>(base + w.item_task0),
          reinterpret_cast<int32_t*>(base + w.status), reinterpret_cast<float*>(base + w.o),
          reinterpret_cast<float*>(base + w.lse)};
}

// Segments per q-block for a 2D grid of `base` workgroups on a device that holds `fill` at once: the
// count (<= max_seg) whose waves are fullest, efficiency = base * seg / (waves * fill). Counts are
// tried in increasing order; a larger count wins only if it is 5 points more efficient, or equally
// efficient with no more waves. A count that overshoots one wave by a few workgroups (a tail wave
// that runs almost empty) loses to one that fills the wave.
inline int32_t choose_segments(int64_t base, int64_t fill, int32_t max_seg) {
  base = std::max<int64_t>(1, base);
  int32_t best = 1;
  double best_eff = -1;
  int64_t best_waves = 0;
  for (int32_t s = 1; s <= std::max(1, max_seg); ++s) {
    const int64_t wg = base * s;
    const int64_t waves = (wg + fill - 1) / fill;
    const double eff = double(wg) / double(waves * fill);
    if (eff > best_eff + 0.05 || (eff > best_eff - 1e-9 && waves == best_waves)) {
      best = s;
      best_eff = eff;
      best_waves = waves;
    }
  }
  return best;
}

// Whether uniform segments of a sequence of max_tiles tiles would hold 16K keys or more each. A decode
// batch split so coarsely is planned instead (the device planner's min-max tasks): one long sequence
// among short ones would otherwise run its segments long after the rest (15 x 2K + 1 x 128K: 7-8
// segments of 16-19K keys on gfx942 / gfx950, 0.09-0.10 of HBM on the timed model), and a call whose
// workgroups stream 16K keys each is long enough that the planner's launch is a small part of it.
inline constexpr int64_t kLongSegmentKeys = 16384;
inline bool uniform_segments_long(int32_t max_tiles, int32_t segments, int32_t tile_keys) {
  const int64_t seg = std::max<int32_t>(1, segments);
  return (max_tiles + seg - 1) / seg * tile_keys >= kLongSegmentKeys;
}

// Task slots of a planned split over whole waves: a wave holds floor(budget / per_slot) slots
// (planned_wave_slots; per_slot workgroups a slot: kv heads x head chunks (x q-blocks)), and the
// sequences need at least one slot each. Where a sequence may hold 16K keys or more (max_keys), half
// a wave more: a batch that fills its waves with one task a sequence could not split a long sequence
// among short ones (255 x 1K + 1 x 100K on a wave of 256 slots ran the 100K sequence alone). The
// planner weighs the fewest waves against all the slots (kernels/common/task_plan.hpp), so a batch of
// even lengths keeps one wave of whole sequences; shorter bounds get no spare slots, whose empty
// workgroups would only cost their launch. Tasks of one bound take about as long, so a plan that
// spilled a few of them into one more wave would take two task times where fewer, longer tasks take
// one (ALGORITHM.md 8).
inline int32_t planned_wave_slots(int64_t budget, int64_t per_slot) {
  return static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(1, budget / std::max<int64_t>(1, per_slot)), 0x7fffffff));
}
inline int32_t planned_capacity(int64_t num_seqs, int64_t budget, int64_t per_slot, int64_t max_keys) {
  const int64_t per_wave = planned_wave_slots(budget, per_slot);
  const int64_t spare = max_keys >= kLongSegmentKeys ? per_wave / 2 : 0;
  const int64_t waves = std::max<int64_t>(1, (num_seqs + spare + per_wave - 1) / per_wave);
  return static_cast<int32_t>(std::min<int64_t>(waves * per_wave, 0x7fffffff));
}

// The caller's workspace for a plan that needs `needed` bytes (nothing to check when that is 0):
// Error(workspace, "workspace") when it is null or smaller (the message names both sizes and, when
// given, why the plan needs them), or not 16-byte aligned.
inline void check_workspace(const void* workspace, size_t bytes, size_t needed, const std::string& why = {}) {
  if (needed == 0) return;
  if (workspace == nullptr || bytes < needed)
    throw Error(ErrorCode::workspace, "workspace",
                std::to_string(bytes) + " bytes given, " + std::to_string(needed) + " needed" +
                    (why.empty() ? std::string() : " (" + why + ")"));
  if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
    throw Error(ErrorCode::workspace, "workspace", "not 16-byte aligned");
}

}  // namespace hipattn
