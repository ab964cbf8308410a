// hipattn/platform/block_collectives.hpp: the block-wide collectives of the device planner
// (kernels/common/task_plan.hpp), over int64_t, for a block of kThreads threads (threadIdx.x):
//   BlockCollectives<kThreads>::TempStorage   the kernel declares one __shared__ and passes it to each call
//   sum_max(sum, mx, s)   the sum of `sum` and the max of `mx` over the block, into both
//   sum(x, s)             the sum of x over the block
//   exclusive_sum(x, s)   a Scanned: .total, the sum of x over the block, and .prefix(), the sum over
//                         the threads before this one (0 for thread 0)
// Every thread of the block calls, and every thread gets the results. Each call is a block barrier:
// it starts with one (so calls may reuse the storage back to back) and returns after one (so the
// block's earlier shared-memory writes are visible to all threads after it). On HIP prefix() reads
// the storage: call it before the storage's next use (it reads late so that the planner's AMD code
// stays the instruction sequence it had before this header).
//
// CUDA: cub::BlockReduce and cub::BlockScan (CUB, part of CCCL in the CUDA toolkit).
// HIP: hand-written (an LDS tree reduce and a Hillis-Steele scan, the planner's own code before this
// header). rocPRIM's block_reduce and block_scan are the intended backing, but no rocPRIM before
// 4.0.0 (ROCm 7.0) compiles for gfx950: 3.4.1 (ROCm 6.4, CI's toolchain) leaves gfx950 out of the
// target list of rocprim/config.hpp, and rocprim/intrinsics/atomic.hpp then stops with an #error in
// a gfx950 device pass (ROCm/rocPRIM issue 738, fixed by PR 700; rocPRIM 4.0.0's CHANGELOG: "Added
// gfx950 support"). hipattn builds gfx942 and gfx950 from one source, so the HIP side stays
// hand-written until rocPRIM 4.0.0 is the minimum.
//
// The sums are of integers, exact whatever the order of combination: both backends give the same
// bits (the planner packs two 32-bit counts in one int64; the low counts stay below 2^31, so no
// carry crosses into the high ones).
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

#if defined(HIPATTN_BACKEND_CUDA)
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#endif

namespace hipattn {

#if defined(HIPATTN_HAS_DEVICE)
template <int kThreads>
struct BlockCollectives {
#if defined(HIPATTN_BACKEND_CUDA)
  struct SumMax {
    int64_t sum, mx;
  };
  struct SumMaxOp {
    HIPATTN_DEVICE SumMax operator()(const SumMax& a, const SumMax& b) const {
      return {a.sum + b.sum, a.mx > b.mx ? a.mx : b.mx};
    }
  };
  using PairReduce = cub::BlockReduce<SumMax, kThreads>;
  using SumReduce = cub::BlockReduce<int64_t, kThreads>;
  using Scan = cub::BlockScan<int64_t, kThreads>;
  struct TempStorage {
    union {
      typename PairReduce::TempStorage pair;
      typename SumReduce::TempStorage sum;
      typename Scan::TempStorage scan;
    } cub;
    SumMax result;  // thread 0's aggregate, for every thread
  };

  static HIPATTN_DEVICE HIPATTN_FORCEINLINE void sum_max(int64_t& sum, int64_t& mx, TempStorage& s) {
    __syncthreads();
    const SumMax r = PairReduce(s.cub.pair).Reduce(SumMax{sum, mx}, SumMaxOp{});
    if (threadIdx.x == 0) s.result = r;
    __syncthreads();
    sum = s.result.sum;
    mx = s.result.mx;
  }
  static HIPATTN_DEVICE HIPATTN_FORCEINLINE int64_t sum(int64_t x, TempStorage& s) {
    __syncthreads();
    const int64_t r = SumReduce(s.cub.sum).Sum(x);
    if (threadIdx.x == 0) s.result.sum = r;
    __syncthreads();
    return s.result.sum;
  }
  struct Scanned {
    int64_t total, before;
    HIPATTN_DEVICE int64_t prefix() const { return before; }
  };
  static HIPATTN_DEVICE HIPATTN_FORCEINLINE Scanned exclusive_sum(int64_t x, TempStorage& s) {
    __syncthreads();
    Scanned r;
    Scan(s.cub.scan).ExclusiveSum(x, r.before, r.total);
    __syncthreads();
    return r;
  }
#else
  struct TempStorage {
    int64_t v[2 * kThreads];
  };

  static HIPATTN_DEVICE HIPATTN_FORCEINLINE void sum_max(int64_t& sum, int64_t& mx, TempStorage& s) {
    int64_t* red = s.v;
    const int t = static_cast<int>(threadIdx.x);
    __syncthreads();
    red[t] = sum;
    red[kThreads + t] = mx;
    __syncthreads();
    for (int d = kThreads / 2; d > 0; d >>= 1) {
      if (t < d) {
        red[t] += red[t + d];
        if (red[kThreads + t + d] > red[kThreads + t]) red[kThreads + t] = red[kThreads + t + d];
      }
      __syncthreads();
    }
    sum = red[0];
    mx = red[kThreads];
  }
  // The pair reduce with the max unused (the planner's instruction sequence before this header).
  static HIPATTN_DEVICE HIPATTN_FORCEINLINE int64_t sum(int64_t x, TempStorage& s) {
    int64_t unused = 0;
    sum_max(x, unused, s);
    return x;
  }
  struct Scanned {
    int64_t total, x;
    const TempStorage* s;
    HIPATTN_DEVICE int64_t prefix() const { return s->v[threadIdx.x] - x; }  // inclusive - own
  };
  static HIPATTN_DEVICE HIPATTN_FORCEINLINE Scanned exclusive_sum(int64_t x, TempStorage& s) {
    int64_t* red = s.v;
    const int t = static_cast<int>(threadIdx.x);
    __syncthreads();
    red[t] = x;
    __syncthreads();
    for (int d = 1; d < kThreads; d <<= 1) {  // inclusive Hillis-Steele scan
      const int64_t add = t >= d ? red[t - d] : 0;
      __syncthreads();
      red[t] += add;
      __syncthreads();
    }
    return Scanned{red[kThreads - 1], x, &s};
  }
#endif
};
#endif  // HIPATTN_HAS_DEVICE

}  // namespace hipattn
