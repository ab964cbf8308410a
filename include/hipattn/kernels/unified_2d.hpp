// hipattn/kernels/unified_2d.hpp: the 2D unified attention kernel: one workgroup per (q-block, kv
// head, head chunk), walking all KV tiles of its sequence with the online softmax, and writing the
// output (and LSE) directly.
#pragma once
#include "hipattn/kernels/unified_mainloop.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads)
    unified_2d_kernel(const UnifiedKernelArgs<typename Cfg::Offset, Cfg::kPageSize> args) {
  extern __shared__ __align__(16) char hipattn_smem[];
  detail::unified_attention_body<Cfg, false>(args, hipattn_smem);
}

}  // namespace hipattn
#endif
