// hipattn/kernels/unified/config.hpp: the kernel arguments of the unified attention family
// (kernels/unified/kernels.hpp). Its instances are skeleton configurations (AttentionConfig,
// kernels/common/attention_config.hpp). Visible to host-only code: the launch builders
// (dispatch/unified_launch.hpp) and the emulated AMD tests fill these structs on the host.
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/attention_config.hpp"
#include "hipattn/kernels/common/kernel_args.hpp"
#include "hipattn/kernels/common/task_plan.hpp"

namespace hipattn {

// Runtime arguments of the 2D and 3D kernels (built on the host by dispatch/unified_launch.hpp): the
// skeleton's (kernels/common/kernel_args.hpp) and how the unified grid finds its work.
template <class KvParams, class Variant>
struct UnifiedKernelArgs : AttentionKernelArgs<KvParams, Variant> {
  const int32_t* cu_seqlens_q = nullptr;
  int32_t num_tokens = 0;
  bool decode_grid = false;   // every q length is 1: blockIdx.x is the sequence (no search)
  // split-KV (3D): partial states [num_segments, num_tokens, num_q_heads, D] and [.., num_q_heads];
  // planned (decode grid, `tasks` set): [slot, num_q_heads, D] / [slot, num_q_heads]
  int32_t num_segments = 1;

  // PartialStore's rows (kernels/common/kernel_args.hpp): uniform segments at [segment, token, q head]
  static constexpr bool kPartialRowsByToken = true;
};

// The arguments type of a configuration's 2D / 3D kernels: the loader's parameters and the variant.
template <class Cfg>
using unified_args_t = UnifiedKernelArgs<typename Cfg::Loader::Params, typename Cfg::Variant>;

// Arguments of the split-KV reduce (kernels/unified/kernels.hpp), built on the host by
// dispatch/unified_launch.hpp.
struct SplitKvReduceArgs {
  const float* ws_o = nullptr;    // [num_segments, num_tokens, num_q_heads, D] (planned: [slots, num_q_heads, D])
  const float* ws_lse = nullptr;  // [num_segments, num_tokens, num_q_heads], log2 units (planned: [slots, num_q_heads])
  int32_t num_segments = 1, num_tokens = 0, num_q_heads = 0;
  // planned (decode grid): the parts of the sequence that holds the token (cu_seqlens_q[s] <= token <
  // cu_seqlens_q[s + 1]; q lengths are 0 or 1) are the tasks from item_task0[s]; a one-part sequence
  // was written by the 3D kernel and is skipped
  const PlanTask* tasks = nullptr;
  const int32_t* item_task0 = nullptr;
  const int32_t* cu_seqlens_q = nullptr;
  int32_t num_seqs = 0;
  const float* sinks = nullptr;  // [num_q_heads], natural units
  OutputArgs out;  // kernels/common/output_store.hpp
  float* lse = nullptr;
  int32_t lse_stride_head = 0;
};

}  // namespace hipattn

