// hipattn/kernels/common/task_plan.hpp: the work planner of the decode families (ALGORITHM.md section 7): each
// work item (a sequence's q rows, 1 to 8 of them, against its paged context) owns a range of KV
// tiles, and the planner cuts those ranges into tasks over a fixed number of task slots (the grid,
// sized on the host from host-known bounds), on the device, from the sequence lengths of this call.
// Because the grid depends on the bounds only and the plan on the device data only, a launch
// sequence (planner, kernel, reduce) can be captured in a graph once and replayed with other lengths
// and block tables.
//
// The plan (ALGORITHM.md section 7):
//   n_i        tiles of item i: the tiles of [key_begin, key_end) its rows see (the window's, when
//              there is one), 0 for an empty context
//   T          the task bound: with `fixed_tiles` > 0 (batch-invariant plans) T = fixed_tiles; else the
//              smallest T >= max(1, ceil(sum n_i / capacity)) with tasks(T) <= capacity, where
//              tasks(T) = sum_i max(1, ceil(n_i / T)): the min-max split (no task longer than it must
//              be, whatever the mix of lengths)
//   k_i        max(1, ceil(n_i / T)) tasks for item i; task j of them walks tiles
//              [b + floor(j n_i / k_i), b + floor((j + 1) n_i / k_i)): near-equal parts of at most T
//              tiles, a function of n_i and k_i only (so with fixed_tiles, of the item alone)
//   slots      the tasks of split items (k_i > 1: the long ones) first, then the one-task items, each
//              group item after item; item i's tasks are contiguous from item_task0[i]; slots past
//              the last task are marked empty (item = -1), so a grid of `capacity` tasks has nothing
//              to read uninitialized. A grid that starts its workgroups in slot order starts the long
//              tasks first, and the short ones fill in behind them. An item with no tiles still gets one task (it writes zeros and
//              LSE = -inf, or the sink's share).
//   waves      with wave_slots W > 0 (the slots that run at once), the bound of all the slots, T_all,
//              is weighed against T_few, the bound over the fewest whole waves that hold a task an item
//              (w_few = ceil(items / W) waves): a plan takes about waves x T, so T_few wins when
//              w_few T_few <= w_all T_all (w_all = capacity / W). Where a sequence may hold 16K keys
//              the host adds half a wave of spare slots (dispatch/workspace.hpp planned_capacity): a
//              long sequence among many short ones then splits into a second wave instead of running
//              alone in one task, while a batch of even lengths keeps one wave of whole sequences.
// The host sizes the capacity so that tasks(T) <= capacity always holds for inputs within the bounds
// it was given (capacity >= the item bound; with fixed_tiles, >= items x ceil(max tiles / fixed_tiles));
// a device call whose lengths break the bounds sets *status to kPlanOverflow and plans no task.
//
// The same functions run on the host (plan_tasks_host, for tests and for a host-side plan) and inside
// the device planner (plan_decode_tasks_kernel): one definition of the split.
#pragma once
#include <cstdint>

#include "hipattn/platform/block_collectives.hpp"
#include "hipattn/platform/config.hpp"
#include "hipattn/platform/fixed_string.hpp"
#include "hipattn/tile/tile_range.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/arch/arch.hpp"
#endif

namespace hipattn {

// One task: item `item` walks KV tiles [tile_begin, tile_end) as part `part` of `parts`.
struct PlanTask {
  int32_t item = -1;  // -1: an empty slot
  int32_t tile_begin = 0, tile_end = 0;
  int16_t part = 0, parts = 0;
};
static_assert(sizeof(PlanTask) == 16, "a task is one 16-byte load");

// The most tasks one item can have (PlanTask::parts is 16 bits; the hosts that size a plan keep
// every item below it).
inline constexpr int32_t kPlanMaxParts = 32767;

inline constexpr int32_t kPlanOk = 0;
inline constexpr int32_t kPlanOverflow = 1;  // the lengths need more tasks than the slots (bounds broken)

// The tiles of decode item i: its q_len rows (the last q_len positions of a context of kv_len keys,
// bottom-right causal among themselves) against tiles of tile_keys keys, within the window.
struct DecodeItemShape {
  int32_t q_len = 1;
  int32_t tile_keys = 64;
  bool causal = true;
  int32_t window_left = -1;
  HIPATTN_HOST_DEVICE constexpr KvTileRange range(int32_t kv_len) const {
    const int32_t q = q_len < kv_len ? q_len : (kv_len > 0 ? kv_len : 1);
    return kv_tile_range(QBlockSpan{0, q - 1, q, kv_len, causal, window_left}, tile_keys);
  }
  HIPATTN_HOST_DEVICE constexpr int32_t tiles(int32_t kv_len) const {
    const KvTileRange r = range(kv_len);
    return r.empty() ? 0 : r.tile_end - r.tile_begin;
  }
};

// Tasks item needs when none is longer than T tiles (at least one, for its output).
HIPATTN_HOST_DEVICE constexpr int32_t plan_item_tasks(int32_t n, int32_t T) { return n > T ? (n + T - 1) / T : 1; }

// Part j of k of n tiles: [floor(j n / k), floor((j + 1) n / k)), relative to the item's first tile.
HIPATTN_HOST_DEVICE constexpr void plan_part(int32_t n, int32_t k, int32_t j, int32_t& begin, int32_t& end) {
  begin = static_cast<int32_t>(static_cast<int64_t>(j) * n / k);
  end = static_cast<int32_t>(static_cast<int64_t>(j + 1) * n / k);
}

// The k tasks of item i (n tiles from `first`) into slots [slot, slot + k): plan_part's boundaries,
// stepped without a division per task (floor(j n / k) = j q + floor(j r / k), q = n / k, r = n % k;
// the second term grows by 0 or 1 a step). One thread writes an item's tasks on the device, and a
// 64-bit division per task made a long item cost microseconds.
HIPATTN_HOST_DEVICE inline void plan_write_item(PlanTask* tasks, int64_t slot, int32_t i, int32_t n, int32_t first,
                                                int32_t k) {
  const int32_t q = n / k, r = n % k;
  int32_t b = 0, acc = 0;  // acc = (j r) mod k
  for (int32_t j = 0; j < k; ++j) {
    int32_t e = b + q;
    acc += r;
    if (acc >= k) {
      acc -= k;
      ++e;
    }
    tasks[slot + j] = PlanTask{i, first + b, first + e, static_cast<int16_t>(j), static_cast<int16_t>(k)};
    b = e;
  }
}

// The slots of the fewest whole waves of wave_slots that hold one task an item (capacity when
// wave_slots is 0 or that is no fewer slots).
HIPATTN_HOST_DEVICE constexpr int32_t plan_few_waves_capacity(int32_t count, int32_t capacity, int32_t wave_slots) {
  if (wave_slots <= 0) return capacity;
  const int64_t few = (static_cast<int64_t>(count < 1 ? 1 : count) + wave_slots - 1) / wave_slots * wave_slots;
  return few < capacity ? static_cast<int32_t>(few) : capacity;
}
// Whether the bound over the fewest waves is the plan's: about waves x bound each, fewer tasks on a tie.
HIPATTN_HOST_DEVICE constexpr bool plan_takes_few_waves(int32_t few_capacity, int32_t T_few, int32_t capacity, int32_t T_all,
                                                        int32_t wave_slots) {
  return T_few > 0 && static_cast<int64_t>(few_capacity / wave_slots) * T_few <= static_cast<int64_t>(capacity / wave_slots) * T_all;
}

// The smallest feasible bound for tiles n[0..count) over `capacity` slots (or 0 when even one task an
// item exceeds the capacity), by bisection over T in [max(1, ceil(sum / capacity)), max n]:
// tasks(T) does not grow with T.
inline int32_t plan_minmax_bound_host(const int32_t* n, int32_t count, int32_t capacity) {
  if (count > capacity) return 0;
  int64_t sum = 0;
  int32_t mx = 1;
  for (int32_t i = 0; i < count; ++i) {
    sum += n[i];
    mx = n[i] > mx ? n[i] : mx;
  }
  auto tasks = [&](int32_t T) {
    int64_t t = 0;
    for (int32_t i = 0; i < count; ++i) t += plan_item_tasks(n[i], T);
    return t;
  };
  int32_t lo = static_cast<int32_t>((sum + capacity - 1) / capacity);
  lo = lo < 1 ? 1 : (lo > mx ? mx : lo);
  int32_t hi = mx;  // feasible: count <= capacity tasks
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (tasks(mid) <= capacity) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// The plan of tiles n[0..count) (first tiles first[0..count)) over `capacity` slots, on the host.
// Returns kPlanOk or kPlanOverflow (then every slot is empty).
// wave_slots: the slots that run at once (0: all of them), for the choice between the fewest waves
// and all the slots (the top of the file).
inline int32_t plan_tasks_host(const int32_t* n, const int32_t* first, int32_t count, int32_t capacity,
                               int32_t fixed_tiles, PlanTask* tasks, int32_t* item_task0, int32_t wave_slots = 0) {
  for (int32_t s = 0; s < capacity; ++s) tasks[s] = PlanTask{};
  int32_t T = fixed_tiles > 0 ? fixed_tiles : plan_minmax_bound_host(n, count, capacity);
  if (fixed_tiles <= 0 && T > 0) {
    const int32_t few = plan_few_waves_capacity(count, capacity, wave_slots);
    if (few < capacity) {
      const int32_t T_few = plan_minmax_bound_host(n, count, few);
      if (plan_takes_few_waves(few, T_few, capacity, T, wave_slots)) T = T_few;
    }
  }
  int64_t total = 0;
  if (T > 0)
    for (int32_t i = 0; i < count; ++i) total += plan_item_tasks(n[i], T);
  if (T <= 0 || total > capacity) {
    for (int32_t i = 0; i < count; ++i) item_task0[i] = 0;
    return kPlanOverflow;
  }
  // Split items first (their tasks are the long ones), then the one-task items, each group in item
  // order.
  int64_t split_total = 0;
  for (int32_t i = 0; i < count; ++i) {
    const int32_t k = plan_item_tasks(n[i], T);
    if (k > 1) split_total += k;
  }
  int64_t split_slot = 0, single_slot = split_total;
  for (int32_t i = 0; i < count; ++i) {
    const int32_t k = plan_item_tasks(n[i], T);
    int64_t& slot = k > 1 ? split_slot : single_slot;
    item_task0[i] = static_cast<int32_t>(slot);
    plan_write_item(tasks, slot, i, n[i], first[i], k);
    slot += k;
  }
  return kPlanOk;
}

// Arguments of the device planner: decode items (one per sequence) of lengths seq_lens_k.
struct DecodePlanArgs {
  const int32_t* seq_lens_k = nullptr;  // [num_items] (device)
  int32_t num_items = 0;
  DecodeItemShape shape;
  int32_t capacity = 0;     // task slots
  int32_t fixed_tiles = 0;  // > 0: batch-invariant bound
  int32_t wave_slots = 0;   // slots that run at once (0: all): fewest waves or all slots (top of the file)
  PlanTask* tasks = nullptr;        // [capacity]
  int32_t* item_task0 = nullptr;    // [num_items]
  int32_t* status = nullptr;        // [1]
};

// Threads of the planner's one workgroup (the launch block size), and the items whose tile counts
// it keeps in LDS (more are recomputed from seq_lens_k at each use). A planner's time is mostly its
// launch, so a smaller workgroup (one warp of 32 on sm_90) gains nothing (bench/NOTES.md, run v8).
inline constexpr int kPlannerThreads = 64;

// The planner kernel's manifest (platform/fixed_string.hpp HIPATTN_KERNEL_MANIFEST):
// "kernel=plan_decode_tasks threads=64".
constexpr FixedString planner_manifest(int threads) {
  return FixedString().field("kernel", "plan_decode_tasks").field("threads", threads);
}
inline constexpr int kPlannerCachedItems = 4096;

#if defined(HIPATTN_HAS_DEVICE)
// The planner: one workgroup of kPlannerThreads. Thread t owns the contiguous items
// [t * per, (t + 1) * per), per = ceil(num_items / kPlannerThreads), whose tile counts and first
// tiles it computes once (into LDS for the first kPlannerCachedItems items). The bound is searched
// in [T0, T1]: T0 = max(1, ceil(sum / capacity)) (no smaller T is feasible) and T1 = ceil(sum /
// (capacity - items)) (feasible: tasks(T) <= sum / T + items), capped at the longest item; T0 is
// tried first (the common answer when the slots are plentiful), then bisection. An exclusive scan of
// the threads' task counts gives each its first slot, and every slot past the last task is marked
// empty. The result equals plan_tasks_host's for the same lengths (the smallest feasible bound is
// one number, however it is searched).
// (A template so that the header defines it in every translation unit without a second definition.)
template <int kThreads = kPlannerThreads>
__global__ void __launch_bounds__(kThreads) plan_decode_tasks_kernel(const DecodePlanArgs a) {
  HIPATTN_KERNEL_MANIFEST(planner_manifest(kThreads));
  static_assert(kThreads == kPlannerThreads, "the item split is sized for kPlannerThreads");
  // The kernel that reads the plan may be launched programmatically (it waits for this grid's end
  // before reading): let it start now, so that its launch overlaps the plan.
  DeviceArch::grid_dependency_trigger();
  using Block = BlockCollectives<kPlannerThreads>;
  __shared__ typename Block::TempStorage red;
  __shared__ int32_t lds_n[kPlannerCachedItems], lds_first[kPlannerCachedItems];
  const int t = static_cast<int>(threadIdx.x);
  const int32_t per = (a.num_items + kPlannerThreads - 1) / kPlannerThreads;
  const int32_t i0 = t * per < a.num_items ? t * per : a.num_items;
  const int32_t i1 = i0 + per < a.num_items ? i0 + per : a.num_items;
  auto range = [&](int32_t i) { return a.shape.range(a.seq_lens_k[i] > 0 ? a.seq_lens_k[i] : 0); };
  auto tiles = [&](int32_t i) {
    if (i < kPlannerCachedItems) return lds_n[i];
    const KvTileRange r = range(i);
    return r.empty() ? 0 : r.tile_end - r.tile_begin;
  };
  int64_t sum = 0, mx = 1;
  for (int32_t i = i0; i < i1; ++i) {
    const KvTileRange r = range(i);
    const int32_t n = r.empty() ? 0 : r.tile_end - r.tile_begin;
    if (i < kPlannerCachedItems) {
      lds_n[i] = n;
      lds_first[i] = r.empty() ? 0 : r.tile_begin;
    }
    sum += n;
    mx = n > mx ? n : mx;
  }
  Block::sum_max(sum, mx, red);  // its barriers also publish lds_n / lds_first
  auto tasks_of = [&](int32_t T) {  // tasks(T) over the workgroup
    int64_t s = 0;
    for (int32_t i = i0; i < i1; ++i) s += plan_item_tasks(tiles(i), T);
    return Block::sum(s, red);
  };
  // the bound over `cap` >= num_items slots
  auto bound = [&](int32_t cap) {
    int64_t lo = (sum + cap - 1) / cap;
    lo = lo < 1 ? 1 : (lo > mx ? mx : lo);
    int64_t hi = cap > a.num_items ? (sum + (cap - a.num_items) - 1) / (cap - a.num_items) : mx;
    hi = hi > mx ? mx : (hi < lo ? lo : hi);
    if (lo < hi && tasks_of(static_cast<int32_t>(lo)) <= cap) hi = lo;
    while (lo < hi) {  // uniform: every thread sees the same sums
      const int64_t mid = lo + (hi - lo) / 2;
      if (tasks_of(static_cast<int32_t>(mid)) <= cap) hi = mid;
      else lo = mid + 1;
    }
    return static_cast<int32_t>(lo);
  };
  int32_t T = a.fixed_tiles;
  if (T <= 0) {
    if (a.num_items > a.capacity) {
      T = 0;
    } else {
      T = bound(a.capacity);
      const int32_t few = plan_few_waves_capacity(a.num_items, a.capacity, a.wave_slots);
      if (few < a.capacity) {
        const int32_t T_few = bound(few);
        if (plan_takes_few_waves(few, T_few, a.capacity, T, a.wave_slots)) T = T_few;
      }
    }
  }
  // each thread's task counts (of split items, in the high 32 bits, and of one-task items), their
  // exclusive scan (both at once), the totals: split items' tasks come first
  int64_t mine = 0;
  if (T > 0)
    for (int32_t i = i0; i < i1; ++i) {
      const int32_t k = plan_item_tasks(tiles(i), T);
      mine += k > 1 ? static_cast<int64_t>(k) << 32 : 1;
    }
  const typename Block::Scanned scan = Block::exclusive_sum(mine, red);
  const int64_t split_total = scan.total >> 32;
  const int64_t total = split_total + (scan.total & 0xFFFFFFFF);
  const bool ok = T > 0 && total <= a.capacity;
  if (t == 0) *a.status = ok ? kPlanOk : kPlanOverflow;
  const int64_t before = scan.prefix();
  int64_t split_slot = before >> 32, single_slot = split_total + (before & 0xFFFFFFFF);
  for (int32_t i = i0; i < i1; ++i) {
    if (!ok) {
      a.item_task0[i] = 0;
      continue;
    }
    int32_t n, first;
    if (i < kPlannerCachedItems) {
      n = lds_n[i];
      first = lds_first[i];
    } else {
      const KvTileRange r = range(i);
      n = r.empty() ? 0 : r.tile_end - r.tile_begin;
      first = r.empty() ? 0 : r.tile_begin;
    }
    const int32_t k = plan_item_tasks(n, T);
    int64_t& slot = k > 1 ? split_slot : single_slot;
    a.item_task0[i] = static_cast<int32_t>(slot);
    plan_write_item(a.tasks, slot, i, n, first, k);
    slot += k;
  }
  for (int64_t s = ok ? total + t : t; s < a.capacity; s += kPlannerThreads) a.tasks[s] = PlanTask{};
}
#endif  // HIPATTN_HAS_DEVICE

// The host plan of decode items of lengths seq_lens[0..num_items) (host memory): what the device
// planner computes for the same arguments.
inline int32_t plan_decode_tasks_host(const int32_t* seq_lens, int32_t num_items, const DecodeItemShape& shape,
                                      int32_t capacity, int32_t fixed_tiles, PlanTask* tasks, int32_t* item_task0,
                                      int32_t* n_scratch, int32_t* first_scratch, int32_t wave_slots = 0) {
  for (int32_t i = 0; i < num_items; ++i) {
    const KvTileRange r = shape.range(seq_lens[i] > 0 ? seq_lens[i] : 0);
    n_scratch[i] = r.empty() ? 0 : r.tile_end - r.tile_begin;
    first_scratch[i] = r.empty() ? 0 : r.tile_begin;
  }
  return plan_tasks_host(n_scratch, first_scratch, num_items, capacity, fixed_tiles, tasks, item_task0, wave_slots);
}

}  // namespace hipattn
