// hipattn/problem/merge_params.hpp: the problem description of merge_attention_states, the combine of
// R partial attention results of the same queries into one output and LSE (ALGORITHM.md section 4).
//
// Context parallelism: rank r computed attention of every query over its share of the keys, giving
// (O_r normalized within its share, LSE_r its natural-log mass). The merge is, per (token, head),
//   m = max_r LSE_r,  w_r = exp(LSE_r - m),  out = sum_r w_r O_r / sum_r w_r,  lse = m + log(sum_r w_r)
// (reference/merge.hpp is its float64 reference). A rank that saw no key of a query holds LSE = -inf
// and contributes nothing: its O is never read (it may hold garbage or NaN). Every rank empty: out = 0
// and lse = -inf. A NaN LSE poisons its row: out and lse are NaN (as the reference). No sink here: a
// sink enters once, where the caller merges it (reference::merge_states takes one).
//
// Conventions (as the other families' params): strides in ELEMENTS, the last dimension contiguous,
// device pointers. The R partial tensors are described by a base pointer and a per-rank stride, so they
// may be one stacked tensor ([num_ranks, num_tokens, num_heads, head_size]), a rank-interleaved one
// ([num_tokens, num_ranks, num_heads, head_size]: po_stride_rank = num_heads x head stride) or R
// allocations at a fixed distance in one buffer; likewise the partial LSEs, in any order of their three
// dimensions. out and lse must not overlap the inputs (not checked: undefined behaviour).
// Any head size that is a multiple of 8 in [8, 1024]; partials and output in fp16, bf16 or fp32, in any
// combination. problem/merge_rules.hpp validates it; dispatch/merge_attention_states.hpp runs it.
//
// A zero-filled struct (a C / FFI caller's memset, then the fields it knows) means the defaults: every
// field's zero is its default (pointers null, strides and counts 0, partial_dtype and out_dtype fp16,
// DType enumerator 0; num_tokens 0 is an empty call).
#pragma once
#include <cstdint>

#include "hipattn/numeric/dtype.hpp"

namespace hipattn {

// The limits of merge_attention_states (problem/merge_rules.hpp enforces them).
inline constexpr int32_t kMergeMaxRanks = 4096;
inline constexpr int32_t kMergeMinHeadSize = 8;
inline constexpr int32_t kMergeMaxHeadSize = 1024;
inline constexpr int32_t kMergeHeadSizeMultiple = 8;  // one thread merges 8 columns (16-byte vectors)

struct MergeAttentionStatesParams {
  // ---- inputs: R partial results of the same queries ----
  // partial O: rank r, token t, head h, column d at
  //   partial_out[r * po_stride_rank + t * po_stride_token + h * po_stride_head + d]
  const void* partial_out = nullptr;
  DType partial_dtype = DType::f16;  // fp16, bf16 or fp32
  int64_t po_stride_rank = 0, po_stride_token = 0, po_stride_head = 0;
  // partial LSE (natural log; -inf: the rank saw no key of the query): rank r, token t, head h at
  //   partial_lse[r * plse_stride_rank + t * plse_stride_token + h * plse_stride_head]
  const float* partial_lse = nullptr;
  int64_t plse_stride_rank = 0, plse_stride_token = 0, plse_stride_head = 0;

  // ---- shape ----
  int32_t num_ranks = 0;   // R in [1, kMergeMaxRanks]
  int32_t num_tokens = 0;  // 0: an empty call (nothing is read or written; pointers may be null)
  int32_t num_heads = 0;
  int32_t head_size = 0;   // a multiple of 8 in [8, 1024]

  // ---- outputs ----
  void* out = nullptr;  // [num_tokens, num_heads, head_size]: out[t * o_stride_token + h * o_stride_head + d]
  DType out_dtype = DType::f16;  // fp16, bf16 or fp32
  int64_t o_stride_token = 0, o_stride_head = 0;
  float* lse = nullptr;  // optional [num_tokens, num_heads], natural log: lse[t * lse_stride_token + h * lse_stride_head]
  int64_t lse_stride_token = 0, lse_stride_head = 0;
};

}  // namespace hipattn
