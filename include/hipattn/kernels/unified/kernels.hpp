// hipattn/kernels/unified/kernels.hpp: the unified paged/varlen attention kernels.
//
//   unified_2d_kernel<Cfg>      one workgroup per (q-block, kv head, head chunk), walking every KV
//                               tile of its sequence, writing the output (and LSE) directly
//   split_kv_3d_kernel<Cfg>     the same grid x num_segments: segment s covers the s-th of near-equal
//                               parts of the q-block's visible KV tiles and writes a partial state (O
//                               normalized within the segment, lse in log2 units; -inf when empty)
//   split_kv_reduce_kernel      merges the segments of each (token, q head) with the LSE-weighted
//                               merge, adds the sink exactly once, writes the output and the LSE
// The 2D and 3D kernels are one skeleton (kernels/common/attention_kernel.hpp) with two schedulers
// and two epilogues. On sm_90 the 3D kernel and the reduce are launched programmatically
// (rt::LaunchOrder::programmatic, dispatch/unified_attention.hpp), each waiting for its predecessor
// (Arch::grid_dependency_wait) before it reads anything.
#pragma once
#include "hipattn/kernels/common/attention_kernel.hpp"
#include "hipattn/kernels/common/split_merge.hpp"
#include "hipattn/kernels/unified/config.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) HIPATTN_CDNA_WAVES_PER_SIMD(kernel_waves_per_simd<Cfg>())
    unified_2d_kernel(const unified_args_t<Cfg> args) {
  HIPATTN_KERNEL_MANIFEST(kernel_manifest<Cfg>("unified_2d"));
  extern __shared__ __align__(16) char hipattn_smem[];
  attention_kernel<Cfg, QBlockScheduler<false>, NormalizedStore>(args, hipattn_smem);
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) split_kv_3d_kernel(const unified_args_t<Cfg> args) {
  HIPATTN_KERNEL_MANIFEST(kernel_manifest<Cfg>("unified_3d"));
  extern __shared__ __align__(16) char hipattn_smem[];
  // Launched programmatically after the planner (planned grids): its tasks are read only after the
  // wait. The reduce may start as soon as every workgroup of this grid is running.
  DeviceArch::grid_dependency_trigger();
  DeviceArch::grid_dependency_wait();
  attention_kernel<Cfg, QBlockScheduler<true>, SplitPartial>(args, hipattn_smem);
}

// Arguments: SplitKvReduceArgs (kernels/unified/config.hpp, visible to host-only code).
// kD / 4 threads per (token, q head), each merging 4 columns; kThreads / (kD / 4) items per block.
template <bool kBf16, int kD, int kThreads = 128>
__global__ void __launch_bounds__(kThreads) split_kv_reduce_kernel(const SplitKvReduceArgs a) {
  HIPATTN_KERNEL_MANIFEST(reduce_manifest("split_kv_reduce", kBf16, kD, kThreads));
  using Arch = DeviceArch;
  Arch::grid_dependency_wait();  // launched programmatically after split_kv_3d_kernel: its partials
  constexpr int kPer = kD / 4;
  static_assert(kThreads % kPer == 0, "threads per block must be a multiple of kD / 4");
  const int64_t item = static_cast<int64_t>(blockIdx.x) * (kThreads / kPer) + threadIdx.x / kPer;
  const int c4 = static_cast<int>(threadIdx.x % kPer) * 4;
  const int64_t items = static_cast<int64_t>(a.num_tokens) * a.num_q_heads;
  if (item >= items) return;
  const int32_t token = static_cast<int32_t>(item / a.num_q_heads);
  const int32_t head = static_cast<int32_t>(item % a.num_q_heads);
  // The partials of (token, head): segment s at s * items + item, or (planned) the sequence's tasks
  // at their slots; a planned one-part sequence was written directly by the 3D kernel.
  int32_t segments = a.num_segments;
  int64_t base = item, step = items;
  if (a.tasks != nullptr) {
    int32_t lo = 0, hi = a.num_seqs;  // the sequence of the token: the last s with cu_seqlens_q[s] <= token
    while (hi - lo > 1) {
      const int32_t mid = (lo + hi) / 2;
      if (a.cu_seqlens_q[mid] <= token) lo = mid;
      else hi = mid;
    }
    const int32_t first = a.item_task0[lo];
    segments = a.tasks[first].parts;
    if (segments <= 1) return;
    base = static_cast<int64_t>(first) * a.num_q_heads + head;
    step = a.num_q_heads;
  }
  const float sink2 = a.sinks != nullptr ? a.sinks[head] * kLog2e : -INFINITY;
  merge_split_partials<Arch, kBf16, kD>(a.ws_o, a.ws_lse, base, step, segments, c4, sink2, a.out, token, head, a.lse,
                                 static_cast<int64_t>(head) * a.lse_stride_head + token);
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
