// hipattn/problem/unified_rules.hpp: the validation rules of UnifiedAttentionParams (and of host copies of
// its device arrays), written with problem/validate_toolkit.hpp.
//
// Where the data lives, and who checks what:
//   * The sequence lengths (cu_seqlens_q, seq_lens_k) and the block table live on the DEVICE. The host
//     cannot see them without a copy, so validate(p) checks only what the host holds by value: counts,
//     dtypes, bounds (max_seqlen_q / max_seqlen_k), strides, pointer nullness and alignment.
//   * The kernels clamp NOTHING silently: a q length above max_seqlen_q, a kv length above max_seqlen_k
//     or a block id outside [0, num_blocks) is undefined behaviour (out-of-bounds reads / writes).
//   * validate(p, HostSequenceInfo) also checks the contents of host copies of those three arrays.
//   * debug_validate_device(p) (device builds only) copies them back and runs that check: call it in
//     debug builds. It is synchronous (a blocking device-to-host copy on the default stream).
//
// Every rule runs (the report lists every violation, in the order below); a rule that needs another
// one to hold (a ratio needs both head counts >= 1, a stride alignment needs a known dtype, the host
// arrays need valid fields) is skipped while that one fails, so one mistake gives one issue. The first
// issue is the one a check-and-return validation would have given.
//
// Decisions fixed here (the tests pin them):
//   * num_seqs == 0 is allowed only with num_tokens == 0: an empty batch, a valid no-op. Every other rule
//     still applies (configuration errors do not hide behind an empty step).
//   * A required pointer may be null only when its tensor has no element: q and out when
//     num_tokens == 0, seq_lens_k and block_table when num_seqs == 0. cu_seqlens_q always has
//     num_seqs + 1 >= 1 entries and k_cache / v_cache num_blocks >= 1 blocks, so they are never null.
//   * Strides must be >= 0 always. The no-overlap and 16-byte stride rules ignore the dims of extent 1
//     and skip a tensor with no element (an extent of 0); see problem/validate_toolkit.hpp for them.
//     Overlapping reads would be harmless in principle, but the kernels assume distinct elements
//     everywhere (q, out, k_cache, v_cache, per-token-head scales).
//   * max_seqlen_q <= num_tokens, and max_seqlen_q >= ceil(num_tokens / num_seqs) (some sequence is at
//     least the average length). Under causal, max_seqlen_q <= max_seqlen_k (q_len <= kv_len per
//     sequence; pass the tight bound).
//   * Each Issue names the offending field exactly as spelled in UnifiedAttentionParams (for the
//     host-array checks: "cu_seqlens_q", "seq_lens_k", "block_table", or the bound they break) and its
//     message carries the bad value(s). A host-array rule broken by several sequences or entries is
//     reported once, at the first, with the count of the others.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/platform/config.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/runtime.hpp"
#include "hipattn/problem/fp8_io_rules.hpp"
#include "hipattn/problem/instances.hpp"
#include "hipattn/problem/unified_params.hpp"
#include "hipattn/problem/validate_toolkit.hpp"

namespace hipattn {

// The constraints the kernels put on a problem (compile-time constants).
struct ValidationLimits {
  // Head sizes some instantiation serves (elements): the instance table's.
  static constexpr auto head_sizes = UnifiedInstanceTable::head_sizes;
  // Vector-access alignment, bytes: of the base pointers q, k_cache, v_cache, out, and of every stride of
  // q / out / k_cache / v_cache whose dimension has extent > 1.
  static constexpr int64_t vector_align_bytes = 16;
  // Largest num_q_heads / num_kv_heads ratio served; 0 means any ratio.
  static constexpr int32_t max_q_per_kv_heads = 0;
  // Byte extent above which a tensor needs 64-bit offsets (see needs_64bit_offsets).
  static constexpr int64_t max_32bit_extent_bytes = int64_t(1) << 31;

  // Whether `d` is one of head_sizes.
  static constexpr bool head_size_supported(int32_t d) { return UnifiedInstanceTable::has_head_size(d); }
};

namespace unified_rules {

using validation::Dim;

inline std::string scale_mode_str(KvScaleMode m) {
  switch (m) {
    case KvScaleMode::none: return "none";
    case KvScaleMode::per_tensor: return "per_tensor";
    case KvScaleMode::per_token_head: return "per_token_head";
  }
  return "KvScaleMode(" + validation::num(static_cast<int>(m)) + ")";
}

// The strided tensors of the problem, innermost dim first.
inline std::array<Dim, 3> q_dims(const UnifiedAttentionParams& p) {
  return {{{p.head_size, 1, "head_size", "1"},
           {p.num_q_heads, p.q_stride_head, "num_q_heads", "q_stride_head"},
           {p.num_tokens, p.q_stride_token, "num_tokens", "q_stride_token"}}};
}
inline std::array<Dim, 3> out_dims(const UnifiedAttentionParams& p) {
  return {{{p.head_size, 1, "head_size", "1"},
           {p.num_q_heads, p.o_stride_head, "num_q_heads", "o_stride_head"},
           {p.num_tokens, p.o_stride_token, "num_tokens", "o_stride_token"}}};
}
inline std::array<Dim, 4> k_dims(const UnifiedAttentionParams& p) {
  return {{{p.head_size, 1, "head_size", "1"},
           {p.num_kv_heads, p.k_stride_head, "num_kv_heads", "k_stride_head"},
           {p.block_size, p.k_stride_slot, "block_size", "k_stride_slot"},
           {p.num_blocks, p.k_stride_block, "num_blocks", "k_stride_block"}}};
}
inline std::array<Dim, 4> v_dims(const UnifiedAttentionParams& p) {
  return {{{p.head_size, 1, "head_size", "1"},
           {p.num_kv_heads, p.v_stride_head, "num_kv_heads", "v_stride_head"},
           {p.block_size, p.v_stride_slot, "block_size", "v_stride_slot"},
           {p.num_blocks, p.v_stride_block, "num_blocks", "v_stride_block"}}};
}
inline std::array<Dim, 3> scale_dims(const UnifiedAttentionParams& p) {
  return {{{p.num_kv_heads, p.scale_stride_head, "num_kv_heads", "scale_stride_head"},
           {p.block_size, p.scale_stride_slot, "block_size", "scale_stride_slot"},
           {p.num_blocks, p.scale_stride_block, "num_blocks", "scale_stride_block"}}};
}
inline std::array<Dim, 2> lse_dims(const UnifiedAttentionParams& p) {
  return {{{p.num_tokens, 1, "num_tokens", "1"}, {p.num_q_heads, p.lse_stride_head, "num_q_heads", "lse_stride_head"}}};
}

// ---- the rule groups, in the order validate(p) runs them ----

// num_seqs, num_tokens, head counts and ratio, head size.
inline void counts(ValidationReport& r, const UnifiedAttentionParams& p) {
  using namespace validation;
  at_least(r, "num_seqs", p.num_seqs, 0);
  at_least(r, "num_tokens", p.num_tokens, 0);
  if (p.num_seqs == 0 && p.num_tokens != 0)
    r.invalid("num_seqs", "num_seqs (0) with num_tokens (" + num(p.num_tokens) +
                              ") > 0: only an empty batch (num_tokens == 0) may have no sequence");
  const bool q_heads = at_least(r, "num_q_heads", p.num_q_heads, 1);
  const bool heads = at_least(r, "num_kv_heads", p.num_kv_heads, 1) && q_heads;
  if (heads && p.num_q_heads % p.num_kv_heads != 0)
    r.invalid("num_kv_heads", "num_q_heads (" + num(p.num_q_heads) + ") is not a multiple of num_kv_heads (" +
                                  num(p.num_kv_heads) + ")");
  if (heads && ValidationLimits::max_q_per_kv_heads > 0 && p.num_q_heads / p.num_kv_heads > ValidationLimits::max_q_per_kv_heads)
    r.unsupported("num_kv_heads", "num_q_heads / num_kv_heads (" + num(p.num_q_heads / p.num_kv_heads) + ") exceeds " +
                                      num(ValidationLimits::max_q_per_kv_heads));
  one_of(r, ErrorCode::unsupported, "head_size", p.head_size, ValidationLimits::head_sizes);
}

// q_dtype, kv_dtype and the output dtype (problem/fp8_io_rules.hpp); returns {q ok, kv ok, out ok}.
inline std::array<bool, 3> dtypes(ValidationReport& r, const UnifiedAttentionParams& p) {
  const validation::IoDtypesOk ok = validation::io_dtypes(r, p.q_dtype, p.kv_dtype, p.out_format);
  return {ok.q, ok.kv, ok.out};
}

// fp8_math (an Fp8Math value, whatever the dtypes: a C caller may pass any byte), then q_scale and the
// output format's scales (problem/fp8_io_rules.hpp), when the dtypes are known.
inline void io_scales(ValidationReport& r, const UnifiedAttentionParams& p, std::array<bool, 3> dtypes_ok) {
  validation::enum_in(r, "fp8_math", p.fp8_math,
                      {{Fp8Math::fp8_qk, "fp8_qk"}, {Fp8Math::fp8_pv, "fp8_pv"}, {Fp8Math::convert, "convert"}});
  if (!dtypes_ok[0] || !dtypes_ok[2]) return;
  validation::io_scales(r, p.q_dtype, p.q_scale, p.out_format, output_dtype(p.q_dtype, p.out_format), p.num_tokens,
                        p.num_q_heads, p.head_size);
}

// The paged cache, the sequence bounds and the block table's shape.
inline void bounds(ValidationReport& r, const UnifiedAttentionParams& p) {
  using namespace validation;
  const bool bs_ok = at_least(r, "block_size", p.block_size, 1);
  at_least(r, "num_blocks", p.num_blocks, 1);
  at_least(r, "max_seqlen_q", p.max_seqlen_q, 0);
  at_least(r, "max_seqlen_k", p.max_seqlen_k, 0);
  if (p.max_seqlen_q > p.num_tokens)
    r.invalid("max_seqlen_q", "max_seqlen_q (" + num(p.max_seqlen_q) + ") exceeds num_tokens (" + num(p.num_tokens) + ")");
  if (p.num_seqs > 0 && p.num_tokens >= 0) {
    const int64_t avg_ceil = (int64_t(p.num_tokens) + p.num_seqs - 1) / p.num_seqs;
    if (p.max_seqlen_q < avg_ceil)
      r.invalid("max_seqlen_q", "max_seqlen_q (" + num(p.max_seqlen_q) + ") < ceil(num_tokens (" + num(p.num_tokens) +
                                    ") / num_seqs (" + num(p.num_seqs) + ")) = " + num(avg_ceil) +
                                    ": some sequence is longer than the bound");
  }
  if (p.causal && p.max_seqlen_q > p.max_seqlen_k)
    r.invalid("max_seqlen_q", "causal with max_seqlen_q (" + num(p.max_seqlen_q) + ") > max_seqlen_k (" +
                                  num(p.max_seqlen_k) + "): bottom-right causal needs q_len <= kv_len");
  const bool mbps_ok = at_least(r, "max_blocks_per_seq", p.max_blocks_per_seq, 1);
  if (mbps_ok && bs_ok && int64_t(p.max_blocks_per_seq) * p.block_size < p.max_seqlen_k)
    r.invalid("max_blocks_per_seq", "max_blocks_per_seq (" + num(p.max_blocks_per_seq) + ") * block_size (" +
                                        num(p.block_size) + ") = " + num(int64_t(p.max_blocks_per_seq) * p.block_size) +
                                        " < max_seqlen_k (" + num(p.max_seqlen_k) + ")");
  const bool bt_ok = stride_below_2_31(r, "block_table_stride", p.block_table_stride);
  stride_below_2_31(r, "qq_bias_stride", p.qq_bias_stride);
  stride_below_2_31(r, "lse_stride_head", p.lse_stride_head);
  if (bt_ok && p.block_table_stride < p.max_blocks_per_seq)
    r.invalid("block_table_stride", "block_table_stride (" + num(p.block_table_stride) + ") < max_blocks_per_seq (" +
                                        num(p.max_blocks_per_seq) + ")");
}

// scale, softcap, window_left.
inline void logits(ValidationReport& r, const UnifiedAttentionParams& p) {
  validation::logit_params(r, p.scale, p.softcap, p.window_left);
}

// kv_scale_mode against kv_dtype.
inline void fp8_scales(ValidationReport& r, const UnifiedAttentionParams& p) {
  using namespace validation;
  const bool fp8 = is_fp8(p.kv_dtype);
  if (!enum_in(r, "kv_scale_mode", p.kv_scale_mode,
               {{KvScaleMode::none, "none"}, {KvScaleMode::per_tensor, "per_tensor"},
                {KvScaleMode::per_token_head, "per_token_head"}}))
    return;
  if (fp8 && p.kv_scale_mode == KvScaleMode::none)
    r.invalid("kv_scale_mode", "kv_scale_mode (none) with kv_dtype (" + dtype_str(p.kv_dtype) +
                                   "): fp8 KV needs per_tensor or per_token_head scales");
  else if (!fp8 && p.kv_scale_mode != KvScaleMode::none)
    r.invalid("kv_scale_mode", "kv_scale_mode (" + scale_mode_str(p.kv_scale_mode) + ") with kv_dtype (" +
                                   dtype_str(p.kv_dtype) + "): only fp8 KV is scaled; use none");
}

// Pointers: non-null when their tensor has an element, naturally / vector aligned.
inline void pointers(ValidationReport& r, const UnifiedAttentionParams& p) {
  const int64_t va = ValidationLimits::vector_align_bytes;
  const bool fp8 = is_fp8(p.kv_dtype);
  const std::array<validation::PtrRule, 13> ptrs{{
      {p.q, "q", p.num_tokens > 0, va, "num_tokens > 0"},
      {p.k_cache, "k_cache", true, va, "always"},
      {p.v_cache, "v_cache", true, va, "always"},
      {p.block_table, "block_table", p.num_seqs > 0, alignof(int32_t), "num_seqs > 0"},
      {p.cu_seqlens_q, "cu_seqlens_q", true, alignof(int32_t), "always"},
      {p.seq_lens_k, "seq_lens_k", p.num_seqs > 0, alignof(int32_t), "num_seqs > 0"},
      {p.out, "out", p.num_tokens > 0, va, "num_tokens > 0"},
      {p.k_scale, "k_scale", fp8, alignof(float), "fp8 KV"},
      {p.v_scale, "v_scale", fp8, alignof(float), "fp8 KV"},
      {p.sinks, "sinks", false, alignof(float), ""},
      {p.alibi_slopes, "alibi_slopes", false, alignof(float), ""},
      {p.qq_bias, "qq_bias", false, alignof(float), ""},
      {p.lse, "lse", false, alignof(float), ""},
  }};
  validation::pointers(r, ptrs);
}

// The row strides of the optional qq_bias and lse.
inline void optional_tensors(ValidationReport& r, const UnifiedAttentionParams& p) {
  using namespace validation;
  if (p.qq_bias != nullptr && p.qq_bias_stride < 1)
    r.invalid("qq_bias_stride", "qq_bias_stride (" + num(p.qq_bias_stride) + ") must be >= 1 when qq_bias is set");
  if (p.lse != nullptr && p.lse_stride_head < p.num_tokens)
    r.invalid("lse_stride_head", "lse_stride_head (" + num(p.lse_stride_head) + ") < num_tokens (" + num(p.num_tokens) +
                                     ") with lse set");
}

// The strides of q, out, k_cache, v_cache (and the per-token-head scales): in range for every tensor,
// then no overlap, then 16-byte multiples (a tensor whose earlier stage failed is not checked further;
// the alignment needs a known element size).
inline void tensor_strides(ValidationReport& r, const UnifiedAttentionParams& p, std::array<bool, 3> dtypes_ok) {
  using namespace validation;
  const bool per_token_head = p.kv_scale_mode == KvScaleMode::per_token_head;
  const auto qd = q_dims(p), od = out_dims(p), sd = scale_dims(p);
  const auto kd = k_dims(p), vd = v_dims(p);
  const bool q_in = strides_in_range(r, qd), o_in = strides_in_range(r, od), k_in = strides_in_range(r, kd),
             v_in = strides_in_range(r, vd), s_in = per_token_head && strides_in_range(r, sd);
  const bool q_free = q_in && no_overlap(r, "q", qd), o_free = o_in && no_overlap(r, "out", od),
             k_free = k_in && no_overlap(r, "k_cache", kd), v_free = v_in && no_overlap(r, "v_cache", vd);
  if (s_in) no_overlap(r, "k_scale / v_scale", sd);
  const int64_t va = ValidationLimits::vector_align_bytes;
  const int64_t qb = dtype_size(p.q_dtype), kb = dtype_size(p.kv_dtype);
  const int64_t ob = dtype_size(output_dtype(p.q_dtype, p.out_format));
  if (dtypes_ok[0] && q_free) strides_aligned(r, qd, qb, va);
  if (dtypes_ok[2] && o_free) strides_aligned(r, od, ob, va);
  if (dtypes_ok[1] && k_free) strides_aligned(r, kd, kb, va);
  if (dtypes_ok[1] && v_free) strides_aligned(r, vd, kb, va);
}

}  // namespace unified_rules

// Host validation of everything the host knows about `p` (never dereferences a pointer). Returns every
// violated rule (an empty, ok() report when there is none), found in this order: counts, head size,
// dtypes, cache and sequence bounds, logits, fp8 scale mode, pointers, optional-tensor strides, tensor
// strides.
inline ValidationReport validate(const UnifiedAttentionParams& p) {
  ValidationReport r;
  unified_rules::counts(r, p);
  const std::array<bool, 3> dtypes_ok = unified_rules::dtypes(r, p);
  unified_rules::bounds(r, p);
  unified_rules::logits(r, p);
  unified_rules::fp8_scales(r, p);
  unified_rules::io_scales(r, p, dtypes_ok);
  unified_rules::pointers(r, p);
  unified_rules::optional_tensors(r, p);
  unified_rules::tensor_strides(r, p, dtypes_ok);
  return r;
}

// Whether some byte offset into k_cache, v_cache, the per-token-head scales, q, out or lse can reach
// 2^31 (32-bit signed offsets no longer suffice): validation::extent_bytes of one of them exceeds 2^31
// bytes. Not an error; meaningful for params that validate.
inline bool needs_64bit_offsets(const UnifiedAttentionParams& p) {
  using namespace unified_rules;
  using validation::extent_bytes;
  constexpr int64_t limit = ValidationLimits::max_32bit_extent_bytes;
  const int64_t kb = dtype_size(p.kv_dtype), qb = dtype_size(p.q_dtype), fb = int64_t(sizeof(float));
  const int64_t ob = dtype_size(output_dtype(p.q_dtype, p.out_format));
  if (extent_bytes(k_dims(p), kb) > limit || extent_bytes(v_dims(p), kb) > limit) return true;
  if (p.kv_scale_mode == KvScaleMode::per_token_head && extent_bytes(scale_dims(p), fb) > limit) return true;
  if (extent_bytes(q_dims(p), qb) > limit || extent_bytes(out_dims(p), ob) > limit) return true;
  if (p.lse != nullptr && extent_bytes(lse_dims(p), fb) > limit) return true;
  return false;
}

// Host copies of the device arrays of a problem, for validate(p, host).
struct HostSequenceInfo {
  std::span<const int32_t> cu_seqlens_q;  // [num_seqs + 1]
  std::span<const int32_t> seq_lens_k;    // [num_seqs]
  std::span<const int32_t> block_table;   // [(num_seqs - 1) * block_table_stride + max_blocks_per_seq], or empty (not checked)
};

// validate(p), then (only when p is valid: the array checks rely on its fields) the contents of the
// host copies: cu_seqlens_q has num_seqs + 1 entries, starts at 0, never decreases, ends at num_tokens;
// seq_lens_k has num_seqs entries, each >= 0; each q length <= max_seqlen_q, each kv length <=
// max_seqlen_k, under causal each q length <= its kv length; the used entries of each block-table row
// (the first ceil(kv_len / block_size)) lie in [0, num_blocks). A rule broken at several places is
// reported at the first, with the count of the others.
inline ValidationReport validate(const UnifiedAttentionParams& p, const HostSequenceInfo& host) {
  using namespace validation;
  ValidationReport r = validate(p);
  if (!r.ok()) return r;
  const size_t n = static_cast<size_t>(p.num_seqs);
  const auto& cu = host.cu_seqlens_q;
  const auto& kv = host.seq_lens_k;

  const bool cu_sized = cumulative_lengths(r, "cu_seqlens_q", cu, n, p.num_tokens, "num_tokens");

  const bool kv_sized = kv.size() == n;
  if (!kv_sized)
    r.invalid("seq_lens_k", "seq_lens_k has " + num(int64_t(kv.size())) + " entries; num_seqs (" + num(p.num_seqs) +
                                ") expected");
  if (cu_sized && kv_sized) {
    FirstOf negative(r, "sequences"), q_over(r, "sequences"), kv_over(r, "sequences"), causal(r, "sequences");
    for (size_t i = 0; i < n; ++i) {
      const std::string seq = "sequence " + num(int64_t(i));
      const int64_t q_len = int64_t(cu[i + 1]) - cu[i];
      const int64_t kv_len = kv[i];
      if (kv_len < 0) negative.invalid("seq_lens_k", seq + ": seq_lens_k[" + num(int64_t(i)) + "] (" + num(kv_len) + ") is negative");
      if (q_len > p.max_seqlen_q)
        q_over.invalid("max_seqlen_q", seq + ": q length " + num(q_len) + " > max_seqlen_q (" + num(p.max_seqlen_q) + ")");
      if (kv_len > p.max_seqlen_k)
        kv_over.invalid("max_seqlen_k", seq + ": kv length seq_lens_k[" + num(int64_t(i)) + "] (" + num(kv_len) +
                                            ") > max_seqlen_k (" + num(p.max_seqlen_k) + ")");
      if (p.causal && q_len > kv_len)
        causal.invalid("seq_lens_k", seq + ": q length " + num(q_len) + " > kv length seq_lens_k[" + num(int64_t(i)) +
                                         "] (" + num(kv_len) + ") under causal (bottom-right alignment needs q_len <= kv_len)");
    }
  }

  const auto& bt = host.block_table;
  if (!bt.empty() && n > 0) {
    const int64_t need = int64_t(n - 1) * p.block_table_stride + p.max_blocks_per_seq;
    if (int64_t(bt.size()) < need) {
      r.invalid("block_table", "block_table has " + num(int64_t(bt.size())) +
                                   " entries; (num_seqs - 1) * block_table_stride + max_blocks_per_seq = " + num(need) +
                                   " needed");
    } else if (kv_sized) {
      FirstOf out_of_range(r, "entries");
      for (size_t i = 0; i < n; ++i) {
        // Only the used entries; a kv length past max_seqlen_k (reported above) is cut at the row's end.
        const int64_t used = std::min<int64_t>((int64_t(kv[i]) + p.block_size - 1) / p.block_size, p.max_blocks_per_seq);
        for (int64_t c = 0; c < used; ++c) {
          const int32_t b = bt[static_cast<size_t>(int64_t(i) * p.block_table_stride + c)];
          if (b < 0 || b >= p.num_blocks)
            out_of_range.invalid("block_table", "sequence " + num(int64_t(i)) + ", column " + num(c) + ": block id " + num(b) +
                                                    " is not in [0, num_blocks (" + num(p.num_blocks) + "))");
        }
      }
    }
  }
  return r;
}

#if defined(HIPATTN_HAS_DEVICE)
// Debug check of the device arrays: validate(p), then copy cu_seqlens_q, seq_lens_k and the used
// block-table rows back (blocking rt::memcpy_d2h) and run validate(p, host). A failed copy gives an
// ErrorCode::runtime issue naming the copy. Make sure the stream that fills those arrays has finished.
inline ValidationReport debug_validate_device(const UnifiedAttentionParams& p) {
  ValidationReport r = validate(p);
  if (!r.ok()) return r;
  const size_t n = static_cast<size_t>(p.num_seqs);
  const size_t cols = static_cast<size_t>(p.max_blocks_per_seq);
  std::vector<int32_t> cu(n + 1), kv(n), bt(n * cols);
  const auto copy = [&r](int32_t* dst, const int32_t* src, size_t count, const char* what) -> bool {
    if (count == 0) return true;
    const rt::error_t e = rt::memcpy_d2h(dst, src, count * sizeof(int32_t));
    if (e == rt::success) return true;
    r.add(ErrorCode::runtime, std::string("rt::memcpy_d2h(") + what + ")", rt::error_string(e));
    return false;
  };
  if (!copy(cu.data(), p.cu_seqlens_q, n + 1, "cu_seqlens_q")) return r;
  if (!copy(kv.data(), p.seq_lens_k, n, "seq_lens_k")) return r;
  if (p.block_table_stride == p.max_blocks_per_seq) {
    if (!copy(bt.data(), p.block_table, n * cols, "block_table")) return r;
  } else {
    for (size_t i = 0; i < n; ++i)
      if (!copy(bt.data() + i * cols, p.block_table + static_cast<int64_t>(i) * p.block_table_stride, cols, "block_table"))
        return r;
  }
  // The copy is compacted: rows of max_blocks_per_seq entries.
  UnifiedAttentionParams compact = p;
  compact.block_table_stride = p.max_blocks_per_seq;
  return validate(compact, HostSequenceInfo{cu, kv, bt});
}
#endif  // HIPATTN_HAS_DEVICE

}  // namespace hipattn
