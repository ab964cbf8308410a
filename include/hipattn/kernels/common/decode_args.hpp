// hipattn/kernels/common/decode_args.hpp: the kernel arguments of the decode grid (paged decode's kernel,
// and MLA's CDNA kernel, which is paged decode with one KV head of 576) and of its reduce (paged
// decode's, which MLA's split sequences use too). Visible to host-only code: the dispatchers and the
// emulated AMD tests fill them on the host.
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/kernel_args.hpp"
#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/numeric/fast_div.hpp"

namespace hipattn {

// Arguments of paged_decode_kernel: the skeleton's, plus the decode grid: one dimension of
// slots x grid_y workgroups, slot-major (kernels/common/work.hpp DecodeTaskScheduler); slots are task
// slots (planned: `tasks` set, [capacity]) or sequences (unplanned); grid_y = num_kv_heads *
// head_chunks * q_blocks.
// Planned partial states: [slot, q_len, num_q_heads, d_v] and [slot, q_len, num_q_heads] (fp32).
template <class KvParams, class Variant>
struct PagedDecodeKernelArgs : AttentionKernelArgs<KvParams, Variant> {
  int32_t q_len = 1;     // query rows of every sequence (token seq * q_len + i)
  int32_t q_blocks = 1;  // q-blocks of one sequence: ceil(q_len / block_q)
  FastDivmod grid_y_div;  // division by grid_y
  int32_t num_segments = 1;  // unplanned: segments a sequence (slot = seq * num_segments + segment)
};

// Arguments of paged_decode_reduce_kernel: item (token, q head) of a sequence with parts > 1 merges
// the partials of its tasks (planned: from item_task0[seq], parts from the task; uniform: slots
// seq * num_segments on, num_segments parts); one-part sequences were written by the kernel.
struct PagedDecodeReduceArgs {
  const float* ws_o = nullptr;
  const float* ws_lse = nullptr;
  const PlanTask* tasks = nullptr;  // null: uniform segments
  const int32_t* item_task0 = nullptr;
  int32_t num_segments = 1;
  int32_t num_seqs = 0, q_len = 1, num_q_heads = 0;
  const float* sinks = nullptr;  // [num_q_heads], natural units
  OutputArgs out;  // kernels/common/output_store.hpp
  float* lse = nullptr;
  int32_t lse_stride_head = 0;
  int32_t lse_stride_token = 1;  // [num_q_heads, tokens] by default; MLA's LSE is [tokens, heads]
};

}  // namespace hipattn
