// hipattn/problem/dense_prefill_rules.hpp: the validation rules of DensePrefillParams (and of host copies
// of its device arrays), written with problem/validate_toolkit.hpp like the unified and paged-decode
// rules.
//
// What the host checks, and what it cannot: the sequence lengths of a packed call live on the device
// (cu_seqlens_q / cu_seqlens_k), so validate(p) checks what the host holds by value (counts, dtype,
// head sizes, bounds, strides, pointers); validate(p, DenseHostSequenceInfo) also checks host copies of
// the two arrays. The kernels clamp nothing: lengths beyond max_seqlen_q / max_seqlen_k, or offsets
// beyond num_tokens_q / num_tokens_k, are undefined behaviour.
//
// Every rule runs (the report lists every violation, in the order below); a rule that needs another
// one to hold is skipped while that one fails. Decisions fixed here (tests/host/test_dense_prefill_rules
// pins them):
//   * cu_seqlens_q and cu_seqlens_k are both set (packed varlen) or both null (batched).
//   * Batched: num_tokens_q == num_seqs * max_seqlen_q and num_tokens_k == num_seqs * max_seqlen_k
//     (every sequence has exactly the bound's length); the batch strides describe the layout.
//     Packed: the batch strides are not read; max_seqlen_q <= num_tokens_q and, with num_seqs > 0,
//     max_seqlen_q >= ceil(num_tokens_q / num_seqs) (likewise for k).
//   * num_seqs == 0 is an empty call (no token); a sequence may have no query or no key.
//   * Under causal a sequence may have more queries than keys: its first rows see no key (zeros,
//     LSE -inf), as in paged decode.
//   * (head_size_qk, head_size_v) is one of kDensePrefillHeadSizes (unsupported otherwise, named
//     "head_size_qk").
//   * Strides >= 0 and < 2^31 elements, no overlap within q, k, v and out, and every stride of a
//     dimension with extent > 1 a multiple of 16 bytes (the loads are 16-byte vectors); the base
//     pointers 16-byte aligned.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/problem/dense_prefill_params.hpp"
#include "hipattn/problem/validate_toolkit.hpp"

namespace hipattn {

namespace dense_prefill_rules {

using validation::Dim;

inline constexpr int64_t kVectorAlignBytes = 16;

// The strided tensors, innermost dimension first. Packed: [tokens, heads, d]; batched: [seqs, len,
// heads, d] (the tokens dimension is the sequence length, the batch stride the outermost).
struct TensorNames {
  const char *d, *heads, *stride_head, *stride_token, *stride_batch;
};
inline std::array<Dim, 4> tensor_dims(const DensePrefillParams& p, bool q_side, int32_t d, int32_t heads, int64_t stride_head,
                                      int64_t stride_token, int64_t stride_batch, const TensorNames& n) {
  const bool packed = p.packed();
  const int32_t tokens = packed ? (q_side ? p.num_tokens_q : p.num_tokens_k) : (q_side ? p.max_seqlen_q : p.max_seqlen_k);
  const char* tokens_name = packed ? (q_side ? "num_tokens_q" : "num_tokens_k") : (q_side ? "max_seqlen_q" : "max_seqlen_k");
  return {{{d, 1, n.d, "1"},
           {heads, stride_head, n.heads, n.stride_head},
           {tokens, stride_token, tokens_name, n.stride_token},
           {packed ? 1 : p.num_seqs, stride_batch, "num_seqs", n.stride_batch}}};
}
inline std::array<Dim, 4> q_dims(const DensePrefillParams& p) {
  return tensor_dims(p, true, p.head_size_qk, p.num_q_heads, p.q_stride_head, p.q_stride_token, p.q_stride_batch,
                     {"head_size_qk", "num_q_heads", "q_stride_head", "q_stride_token", "q_stride_batch"});
}
inline std::array<Dim, 4> k_dims(const DensePrefillParams& p) {
  return tensor_dims(p, false, p.head_size_qk, p.num_kv_heads, p.k_stride_head, p.k_stride_token, p.k_stride_batch,
                     {"head_size_qk", "num_kv_heads", "k_stride_head", "k_stride_token", "k_stride_batch"});
}
inline std::array<Dim, 4> v_dims(const DensePrefillParams& p) {
  return tensor_dims(p, false, p.head_size_v, p.num_kv_heads, p.v_stride_head, p.v_stride_token, p.v_stride_batch,
                     {"head_size_v", "num_kv_heads", "v_stride_head", "v_stride_token", "v_stride_batch"});
}
inline std::array<Dim, 4> out_dims(const DensePrefillParams& p) {
  return tensor_dims(p, true, p.head_size_v, p.num_q_heads, p.o_stride_head, p.o_stride_token, p.o_stride_batch,
                     {"head_size_v", "num_q_heads", "o_stride_head", "o_stride_token", "o_stride_batch"});
}
inline std::array<Dim, 2> lse_dims(const DensePrefillParams& p) {
  return {{{p.num_tokens_q, 1, "num_tokens_q", "1"}, {p.num_q_heads, p.lse_stride_head, "num_q_heads", "lse_stride_head"}}};
}

// ---- the rule groups, in the order validate(p) runs them ----

// Counts, heads and their ratio, the head-size pair; returns whether the head sizes are usable.
inline void counts(ValidationReport& r, const DensePrefillParams& p) {
  using namespace validation;
  at_least(r, "num_seqs", p.num_seqs, 0);
  at_least(r, "num_tokens_q", p.num_tokens_q, 0);
  at_least(r, "num_tokens_k", p.num_tokens_k, 0);
  if (p.num_seqs == 0 && (p.num_tokens_q != 0 || p.num_tokens_k != 0))
    r.invalid("num_seqs", "num_seqs (0) with num_tokens_q (" + num(p.num_tokens_q) + ") / num_tokens_k (" +
                              num(p.num_tokens_k) + "): only an empty call may have no sequence");
  const bool q_heads = at_least(r, "num_q_heads", p.num_q_heads, 1);
  const bool heads = at_least(r, "num_kv_heads", p.num_kv_heads, 1) && q_heads;
  if (heads && p.num_q_heads % p.num_kv_heads != 0)
    r.invalid("num_kv_heads", "num_q_heads (" + num(p.num_q_heads) + ") is not a multiple of num_kv_heads (" +
                                  num(p.num_kv_heads) + ")");
  if (!dense_prefill_head_sizes_supported(p.head_size_qk, p.head_size_v)) {
    std::string pairs;
    for (const auto& [qk, v] : kDensePrefillHeadSizes) pairs += (pairs.empty() ? "" : ", ") + ("(" + num(qk) + ", " + num(v) + ")");
    r.unsupported("head_size_qk", "(head_size_qk, head_size_v) = (" + num(p.head_size_qk) + ", " + num(p.head_size_v) +
                                      ") must be one of " + pairs);
  }
}

// dtype; returns whether it is known.
inline bool dtype(ValidationReport& r, const DensePrefillParams& p) {
  return validation::dtype_in(r, ErrorCode::unsupported, "dtype", p.dtype, {DType::f16, DType::bf16});
}

// The sequence layout (packed or batched) and the length bounds.
inline void sequences(ValidationReport& r, const DensePrefillParams& p) {
  using namespace validation;
  if ((p.cu_seqlens_q == nullptr) != (p.cu_seqlens_k == nullptr)) {
    const char* missing = p.cu_seqlens_q == nullptr ? "cu_seqlens_q" : "cu_seqlens_k";
    r.invalid(missing, std::string(missing) + " is null while " +
                           (p.cu_seqlens_q == nullptr ? "cu_seqlens_k" : "cu_seqlens_q") +
                           " is set: both (packed varlen) or neither (batched)");
  }
  const bool lq = at_least(r, "max_seqlen_q", p.max_seqlen_q, 0);
  const bool lk = at_least(r, "max_seqlen_k", p.max_seqlen_k, 0);
  if (!lq || !lk || p.num_seqs < 0 || p.num_tokens_q < 0 || p.num_tokens_k < 0) return;
  if (!p.packed()) {
    if (int64_t(p.num_seqs) * p.max_seqlen_q != p.num_tokens_q)
      r.invalid("num_tokens_q", "batched: num_tokens_q (" + num(p.num_tokens_q) + ") must be num_seqs (" + num(p.num_seqs) +
                                    ") * max_seqlen_q (" + num(p.max_seqlen_q) + ") = " +
                                    num(int64_t(p.num_seqs) * p.max_seqlen_q));
    if (int64_t(p.num_seqs) * p.max_seqlen_k != p.num_tokens_k)
      r.invalid("num_tokens_k", "batched: num_tokens_k (" + num(p.num_tokens_k) + ") must be num_seqs (" + num(p.num_seqs) +
                                    ") * max_seqlen_k (" + num(p.max_seqlen_k) + ") = " +
                                    num(int64_t(p.num_seqs) * p.max_seqlen_k));
    return;
  }
  const auto bound = [&](const char* field, int32_t max_len, const char* tokens_name, int32_t tokens) {
    if (max_len > tokens)
      r.invalid(field, std::string(field) + " (" + num(max_len) + ") exceeds " + tokens_name + " (" + num(tokens) + ")");
    if (p.num_seqs > 0) {
      const int64_t avg_ceil = (int64_t(tokens) + p.num_seqs - 1) / p.num_seqs;
      if (max_len < avg_ceil)
        r.invalid(field, std::string(field) + " (" + num(max_len) + ") < ceil(" + tokens_name + " (" + num(tokens) +
                             ") / num_seqs (" + num(p.num_seqs) + ")) = " + num(avg_ceil) +
                             ": some sequence is longer than the bound");
    }
  };
  bound("max_seqlen_q", p.max_seqlen_q, "num_tokens_q", p.num_tokens_q);
  bound("max_seqlen_k", p.max_seqlen_k, "num_tokens_k", p.num_tokens_k);
}

// scale, softcap, window_left.
inline void logits(ValidationReport& r, const DensePrefillParams& p) {
  validation::logit_params(r, p.scale, p.softcap, p.window_left);
}

// Pointers: non-null when their tensor has an element, 16-byte (tensors) or naturally aligned.
inline void pointers(ValidationReport& r, const DensePrefillParams& p) {
  const int64_t va = kVectorAlignBytes;
  const std::array<validation::PtrRule, 7> ptrs{{
      {p.q, "q", p.num_tokens_q > 0, va, "num_tokens_q > 0"},
      {p.k, "k", p.num_tokens_k > 0, va, "num_tokens_k > 0"},
      {p.v, "v", p.num_tokens_k > 0, va, "num_tokens_k > 0"},
      {p.out, "out", p.num_tokens_q > 0, va, "num_tokens_q > 0"},
      {p.cu_seqlens_q, "cu_seqlens_q", false, alignof(int32_t), ""},
      {p.cu_seqlens_k, "cu_seqlens_k", false, alignof(int32_t), ""},
      {p.lse, "lse", false, alignof(float), ""},
  }};
  validation::pointers(r, ptrs);
}

// lse's row stride.
inline void lse(ValidationReport& r, const DensePrefillParams& p) {
  using namespace validation;
  if (!stride_below_2_31(r, "lse_stride_head", p.lse_stride_head)) return;
  if (p.lse != nullptr && p.lse_stride_head < p.num_tokens_q)
    r.invalid("lse_stride_head", "lse_stride_head (" + num(p.lse_stride_head) + ") < num_tokens_q (" + num(p.num_tokens_q) +
                                     ") with lse set");
}

// The strides of q, k, v and out: in range, then no overlap, then 16-byte multiples.
inline void tensor_strides(ValidationReport& r, const DensePrefillParams& p, bool dtype_ok) {
  using namespace validation;
  const auto check = [&](const char* name, const auto& dims) {
    if (!strides_in_range(r, dims) || !no_overlap(r, name, dims)) return;
    if (dtype_ok) strides_aligned(r, dims, dtype_size(p.dtype), kVectorAlignBytes);
  };
  check("q", q_dims(p));
  check("k", k_dims(p));
  check("v", v_dims(p));
  check("out", out_dims(p));
}

}  // namespace dense_prefill_rules

// Host validation of everything the host knows about `p` (never dereferences a pointer): every violated
// rule, in this order: counts and head sizes, dtype, sequence layout and bounds, logits, pointers, lse,
// tensor strides. An empty, ok() report when there is none.
inline ValidationReport validate(const DensePrefillParams& p) {
  ValidationReport r;
  dense_prefill_rules::counts(r, p);
  const bool dtype_ok = dense_prefill_rules::dtype(r, p);
  dense_prefill_rules::sequences(r, p);
  dense_prefill_rules::logits(r, p);
  dense_prefill_rules::pointers(r, p);
  dense_prefill_rules::lse(r, p);
  dense_prefill_rules::tensor_strides(r, p, dtype_ok);
  return r;
}

// Whether a byte offset into q, k, v, out or lse can reach 2^31 (32-bit offsets no longer suffice).
// Not an error; meaningful for params that validate.
inline bool needs_64bit_offsets(const DensePrefillParams& p) {
  using namespace dense_prefill_rules;
  using validation::extent_bytes;
  constexpr int64_t limit = int64_t(1) << 31;
  const int64_t b = dtype_size(p.dtype), fb = int64_t(sizeof(float));
  return extent_bytes(q_dims(p), b) > limit || extent_bytes(k_dims(p), b) > limit || extent_bytes(v_dims(p), b) > limit ||
         extent_bytes(out_dims(p), b) > limit || (p.lse != nullptr && extent_bytes(lse_dims(p), fb) > limit);
}

// Host copies of a packed call's device arrays, for validate(p, host).
struct DenseHostSequenceInfo {
  std::span<const int32_t> cu_seqlens_q;  // [num_seqs + 1]
  std::span<const int32_t> cu_seqlens_k;  // [num_seqs + 1]
};

// validate(p), then (only when p is valid and packed) the host copies: each array has num_seqs + 1
// entries, starts at 0, never decreases and ends at num_tokens_q / num_tokens_k; every length is
// within max_seqlen_q / max_seqlen_k. A rule broken at several places is reported at the first, with
// the count of the others.
inline ValidationReport validate(const DensePrefillParams& p, const DenseHostSequenceInfo& host) {
  using namespace validation;
  ValidationReport r = validate(p);
  if (!r.ok() || !p.packed()) return r;
  const size_t n = static_cast<size_t>(p.num_seqs);
  const auto check = [&](const char* field, std::span<const int32_t> cu, int32_t tokens, const char* tokens_name,
                         int32_t max_len, const char* bound_name) {
    if (!cumulative_lengths(r, field, cu, n, tokens, tokens_name)) return;
    FirstOf over(r, "sequences");
    for (size_t i = 1; i <= n; ++i) {
      const int64_t len = int64_t(cu[i]) - cu[i - 1];
      if (len > max_len)
        over.invalid(bound_name, "sequence " + num(int64_t(i) - 1) + ": length " + num(len) + " > " + bound_name + " (" +
                                     num(max_len) + ")");
    }
  };
  check("cu_seqlens_q", host.cu_seqlens_q, p.num_tokens_q, "num_tokens_q", p.max_seqlen_q, "max_seqlen_q");
  check("cu_seqlens_k", host.cu_seqlens_k, p.num_tokens_k, "num_tokens_k", p.max_seqlen_k, "max_seqlen_k");
  return r;
}

}  // namespace hipattn
