// hipattn/problem/merge_rules.hpp: the validation rules of MergeAttentionStatesParams, written with
// problem/validate_toolkit.hpp like the other families' rules.
//
// validate(p) checks what the host holds by value (counts, dtypes, pointers, strides); it never
// dereferences a pointer. Every rule runs (the report lists every violation, in the order below); a
// rule that needs another one to hold is skipped while that one fails. Decisions fixed here
// (tests/host/test_merge_rules pins them):
//   * num_ranks in [1, kMergeMaxRanks] (above: unsupported), num_heads >= 1, num_tokens >= 0 (0 is an
//     empty call: nothing is read or written, every pointer may be null).
//   * head_size >= 1 (invalid otherwise), and a multiple of 8 in [8, 1024] (unsupported otherwise: a
//     thread merges 8 columns with 16-byte vectors).
//   * partial_dtype and out_dtype in {fp16, bf16, fp32}, any pair (unsupported otherwise).
//   * partial_out, partial_lse and out are required when num_tokens > 0; lse is optional. partial_out
//     and out 16-byte aligned, partial_lse and lse 4-byte aligned.
//   * Every stride >= 0 and < 2^31 elements; no overlap within partial_out ([num_ranks, num_tokens,
//     num_heads, head_size] through its strides), partial_lse ([num_ranks, num_tokens, num_heads]), out
//     and lse (when set) -- the partial tensors in any order of their dimensions; every stride of
//     partial_out and out on a dimension with extent > 1 a multiple of 16 bytes (vector loads and
//     stores of 8 columns). The LSE strides have no alignment rule.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/problem/merge_params.hpp"
#include "hipattn/problem/validate_toolkit.hpp"

namespace hipattn {

namespace merge_rules {

using validation::Dim;

inline constexpr int64_t kVectorAlignBytes = 16;

// The strided tensors, innermost dimension first.
inline std::array<Dim, 4> partial_out_dims(const MergeAttentionStatesParams& p) {
  return {{{p.head_size, 1, "head_size", "1"},
           {p.num_heads, p.po_stride_head, "num_heads", "po_stride_head"},
           {p.num_tokens, p.po_stride_token, "num_tokens", "po_stride_token"},
           {p.num_ranks, p.po_stride_rank, "num_ranks", "po_stride_rank"}}};
}
inline std::array<Dim, 3> partial_lse_dims(const MergeAttentionStatesParams& p) {
  return {{{p.num_heads, p.plse_stride_head, "num_heads", "plse_stride_head"},
           {p.num_tokens, p.plse_stride_token, "num_tokens", "plse_stride_token"},
           {p.num_ranks, p.plse_stride_rank, "num_ranks", "plse_stride_rank"}}};
}
inline std::array<Dim, 3> out_dims(const MergeAttentionStatesParams& p) {
  return {{{p.head_size, 1, "head_size", "1"},
           {p.num_heads, p.o_stride_head, "num_heads", "o_stride_head"},
           {p.num_tokens, p.o_stride_token, "num_tokens", "o_stride_token"}}};
}
inline std::array<Dim, 2> lse_dims(const MergeAttentionStatesParams& p) {
  return {{{p.num_heads, p.lse_stride_head, "num_heads", "lse_stride_head"},
           {p.num_tokens, p.lse_stride_token, "num_tokens", "lse_stride_token"}}};
}

// ---- the rule groups, in the order validate(p) runs them ----

// num_ranks, num_tokens, num_heads, head_size.
inline void counts(ValidationReport& r, const MergeAttentionStatesParams& p) {
  using namespace validation;
  if (at_least(r, "num_ranks", p.num_ranks, 1) && p.num_ranks > kMergeMaxRanks)
    r.unsupported("num_ranks", "num_ranks (" + num(p.num_ranks) + ") exceeds " + num(kMergeMaxRanks) +
                                   ": merge the partial results in groups");
  at_least(r, "num_tokens", p.num_tokens, 0);
  at_least(r, "num_heads", p.num_heads, 1);
  if (at_least(r, "head_size", p.head_size, 1) &&
      (p.head_size % kMergeHeadSizeMultiple != 0 || p.head_size < kMergeMinHeadSize || p.head_size > kMergeMaxHeadSize))
    r.unsupported("head_size", "head_size (" + num(p.head_size) + ") must be a multiple of " + num(kMergeHeadSizeMultiple) +
                                   " in [" + num(kMergeMinHeadSize) + ", " + num(kMergeMaxHeadSize) + "]");
}

// partial_dtype and out_dtype; returns whether each is known (their element sizes are then usable).
inline void dtypes(ValidationReport& r, const MergeAttentionStatesParams& p, bool& partial_ok, bool& out_ok) {
  using validation::dtype_in;
  partial_ok = dtype_in(r, ErrorCode::unsupported, "partial_dtype", p.partial_dtype, {DType::f16, DType::bf16, DType::f32});
  out_ok = dtype_in(r, ErrorCode::unsupported, "out_dtype", p.out_dtype, {DType::f16, DType::bf16, DType::f32});
}

// Pointers: the inputs and out non-null when there is a token, the O tensors 16-byte aligned (vector
// accesses), the LSEs naturally aligned.
inline void pointers(ValidationReport& r, const MergeAttentionStatesParams& p) {
  const int64_t va = kVectorAlignBytes;
  const bool any = p.num_tokens > 0;
  const std::array<validation::PtrRule, 4> ptrs{{
      {p.partial_out, "partial_out", any, va, "num_tokens > 0"},
      {p.partial_lse, "partial_lse", any, alignof(float), "num_tokens > 0"},
      {p.out, "out", any, va, "num_tokens > 0"},
      {p.lse, "lse", false, alignof(float), ""},
  }};
  validation::pointers(r, ptrs);
}

// The strides of partial_out, partial_lse, out and (when set) lse: in range, then no overlap, then (O
// tensors of a known dtype) 16-byte multiples.
inline void tensor_strides(ValidationReport& r, const MergeAttentionStatesParams& p, bool partial_ok, bool out_ok) {
  using namespace validation;
  tensor_layout(r, "partial_out", partial_out_dims(p), partial_ok ? dtype_size(p.partial_dtype) : 0, kVectorAlignBytes);
  tensor_layout(r, "partial_lse", partial_lse_dims(p), 0, 0);
  tensor_layout(r, "out", out_dims(p), out_ok ? dtype_size(p.out_dtype) : 0, kVectorAlignBytes);
  if (p.lse != nullptr) tensor_layout(r, "lse", lse_dims(p), 0, 0);
}

}  // namespace merge_rules

// Host validation of everything the host knows about `p` (never dereferences a pointer): every violated
// rule, in this order: counts and head size, dtypes, pointers, tensor strides. An empty, ok() report
// when there is none.
inline ValidationReport validate(const MergeAttentionStatesParams& p) {
  ValidationReport r;
  merge_rules::counts(r, p);
  bool partial_ok = false, out_ok = false;
  merge_rules::dtypes(r, p, partial_ok, out_ok);
  merge_rules::pointers(r, p);
  merge_rules::tensor_strides(r, p, partial_ok, out_ok);
  return r;
}

}  // namespace hipattn
