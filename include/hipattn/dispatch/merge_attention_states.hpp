// hipattn/dispatch/merge_attention_states.hpp: the host entry point of the merge of partial attention
// results (context parallelism: each rank attended over its share of the keys).
//
//   hipattn::merge_attention_states(params, stream);   // MergeAttentionStatesParams (problem/merge_params.hpp)
//
// A call validates the params (throws hipattn::Error naming the field), returns when num_tokens is 0,
// picks the instance from (partial_dtype, out_dtype) and launches merge_states_kernel
// (kernels/merge/merge_states.hpp) on `stream`: merge_threads_per_item(head_size) threads per
// (token, head), whole items per block of at most 256 threads, a grid of at most kMergeMaxBlocks
// blocks (the items beyond are walked grid-stride). It needs no workspace, never allocates and never
// synchronizes; the launch depends on host values only (num_tokens, num_heads, head_size), so a captured
// graph replays with other data. The kernel is portable: every target of the build runs it.
#pragma once
#include <algorithm>
#include <cstdint>

#include "hipattn/kernels/merge/merge_states.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/runtime.hpp"
#include "hipattn/problem/merge_params.hpp"
#include "hipattn/problem/merge_rules.hpp"

namespace hipattn {

// The launch shape of a call (host values only).
struct MergeStatesGeometry {
  int32_t threads_per_item = 1;  // merge_threads_per_item(head_size)
  int32_t threads = 1;           // per block: a multiple of threads_per_item, <= kMergeBlockThreads
  int64_t blocks = 0;            // 0: nothing to launch
};

// The geometry of `p` (valid params).
inline MergeStatesGeometry merge_states_geometry(const MergeAttentionStatesParams& p) {
  MergeStatesGeometry g;
  g.threads_per_item = merge_threads_per_item(p.head_size);
  const int32_t items_per_block = kMergeBlockThreads / g.threads_per_item;
  g.threads = items_per_block * g.threads_per_item;
  const int64_t items = int64_t(std::max(p.num_tokens, 0)) * std::max(p.num_heads, 0);
  g.blocks = std::min<int64_t>((items + items_per_block - 1) / items_per_block, kMergeMaxBlocks);
  return g;
}

// The kernel arguments of `p` (valid params).
inline MergeStatesArgs make_merge_states_args(const MergeAttentionStatesParams& p) {
  MergeStatesArgs a;
  a.partial_out = p.partial_out;
  a.po_stride_rank = p.po_stride_rank;
  a.po_stride_token = p.po_stride_token;
  a.po_stride_head = p.po_stride_head;
  a.partial_lse = p.partial_lse;
  a.plse_stride_rank = p.plse_stride_rank;
  a.plse_stride_token = p.plse_stride_token;
  a.plse_stride_head = p.plse_stride_head;
  a.out = p.out;
  a.o_stride_token = p.o_stride_token;
  a.o_stride_head = p.o_stride_head;
  a.lse = p.lse;
  a.lse_stride_token = p.lse_stride_token;
  a.lse_stride_head = p.lse_stride_head;
  a.num_items = int64_t(p.num_tokens) * p.num_heads;
  a.num_ranks = p.num_ranks;
  a.num_heads = p.num_heads;
  a.head_size = p.head_size;
  a.threads_per_item = merge_threads_per_item(p.head_size);
  return a;
}

}  // namespace hipattn

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {
namespace detail {

template <DType kIn, DType kOut>
void launch_merge_states(const MergeAttentionStatesParams& p, rt::stream_t stream) {
  const MergeStatesGeometry g = merge_states_geometry(p);
  if (g.blocks == 0) return;
  merge_states_kernel<kIn, kOut><<<dim3(uint32_t(g.blocks), 1, 1), dim3(uint32_t(g.threads), 1, 1), 0, stream>>>(
      make_merge_states_args(p));
  HIPATTN_CHECK_LAUNCH();
}

template <DType kIn>
void launch_merge_states_out(const MergeAttentionStatesParams& p, rt::stream_t stream) {
  if (p.out_dtype == DType::f16) launch_merge_states<kIn, DType::f16>(p, stream);
  else if (p.out_dtype == DType::bf16) launch_merge_states<kIn, DType::bf16>(p, stream);
  else launch_merge_states<kIn, DType::f32>(p, stream);  // validated: fp16, bf16 or fp32
}

}  // namespace detail

// Merge the partial results of `p` on `stream` (see the top of the file). A template (of nothing) so
// that the kernels are instantiated only in translation units that call it: a HIP device pass emits
// every kernel an inline function's body names, called or not.
template <class = void>
void merge_attention_states(const MergeAttentionStatesParams& p, rt::stream_t stream) {
  throw_if_error(validate(p));
  if (p.num_tokens == 0) return;
  if (p.partial_dtype == DType::f16) detail::launch_merge_states_out<DType::f16>(p, stream);
  else if (p.partial_dtype == DType::bf16) detail::launch_merge_states_out<DType::bf16>(p, stream);
  else detail::launch_merge_states_out<DType::f32>(p, stream);  // validated: fp16, bf16 or fp32
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
