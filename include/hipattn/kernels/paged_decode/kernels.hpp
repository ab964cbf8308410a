// hipattn/kernels/paged_decode/kernels.hpp: the paged-decode kernels.
//
//   paged_decode_kernel<Cfg>           the attention skeleton (kernels/common/attention_kernel.hpp)
//                                      with DecodeTaskScheduler and DecodeStore: slot x of the grid
//                                      walks task x of the device plan (or, unplanned, sequence x
//                                      all its tiles); the q_len x GQA rows of one KV head share
//                                      every K/V tile (multi-token verify reads the context once)
//   paged_decode_reduce_kernel         merges the partial states of the sequences with more than
//                                      one task (kernels/common/split_merge.hpp)
// On sm_90 the kernel and the reduce are launched programmatically (rt::LaunchOrder::programmatic,
// dispatch/paged_decode.hpp): each waits for its predecessor (Arch::grid_dependency_wait) before it
// reads anything, so only the launches overlap.
// The plan itself: plan_decode_tasks_kernel (kernels/common/task_plan.hpp).
#pragma once
#include "hipattn/kernels/common/attention_kernel.hpp"
#include "hipattn/kernels/common/split_merge.hpp"
#include "hipattn/kernels/paged_decode/config.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) paged_decode_kernel(const paged_decode_args_t<Cfg> args) {
  HIPATTN_KERNEL_MANIFEST(kernel_manifest<Cfg>("paged_decode"));
  extern __shared__ __align__(16) char hipattn_smem[];
  // Launched programmatically after the planner (planned plans): its tasks are read only after the
  // wait. The reduce may start as soon as every workgroup of this grid is running.
  DeviceArch::grid_dependency_trigger();
  DeviceArch::grid_dependency_wait();
  attention_kernel<Cfg, DecodeTaskScheduler, DecodeStore>(args, hipattn_smem);
}

// kD / 4 threads per (token, q head), each merging 4 columns; kThreads / (kD / 4) items per block.
template <bool kBf16, int kD, int kThreads = 128>
__global__ void __launch_bounds__(kThreads) paged_decode_reduce_kernel(const PagedDecodeReduceArgs a) {
  HIPATTN_KERNEL_MANIFEST(reduce_manifest("paged_decode_reduce", kBf16, kD, kThreads));
  using Arch = DeviceArch;
  Arch::grid_dependency_wait();  // launched programmatically after paged_decode_kernel: its partials
  constexpr int kPer = kD / 4;
  static_assert(kThreads % kPer == 0, "threads per block must be a multiple of kD / 4");
  const int64_t item = static_cast<int64_t>(blockIdx.x) * (kThreads / kPer) + threadIdx.x / kPer;
  const int c4 = static_cast<int>(threadIdx.x % kPer) * 4;
  const int64_t rows = static_cast<int64_t>(a.num_seqs) * a.q_len;
  if (item >= rows * a.num_q_heads) return;
  const int32_t token = static_cast<int32_t>(item / a.num_q_heads);
  const int32_t head = static_cast<int32_t>(item % a.num_q_heads);
  const int32_t seq = token / a.q_len, i = token - seq * a.q_len;
  const int32_t first = a.tasks != nullptr ? a.item_task0[seq] : seq * a.num_segments;
  const int32_t parts = a.tasks != nullptr ? a.tasks[first].parts : a.num_segments;
  if (parts <= 1) return;  // written by paged_decode_kernel
  const int64_t step = static_cast<int64_t>(a.q_len) * a.num_q_heads;
  const int64_t base = first * step + static_cast<int64_t>(i) * a.num_q_heads + head;
  const float sink2 = a.sinks != nullptr ? a.sinks[head] * kLog2e : -INFINITY;
  merge_split_partials<Arch, kBf16, kD>(a.ws_o, a.ws_lse, base, step, parts, c4, sink2, a.out, token, head, a.lse,
                                 static_cast<int64_t>(head) * a.lse_stride_head +
                                     static_cast<int64_t>(token) * a.lse_stride_token);
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
