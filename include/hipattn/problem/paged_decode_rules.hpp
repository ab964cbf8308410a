// hipattn/problem/paged_decode_rules.hpp: the validation rules of PagedDecodeParams and
// PagedDecodeTraits (problem/paged_decode_params.hpp).
//
// The rules paged decode shares with unified attention (head counts and size, dtypes, cache bounds,
// logits, fp8 scale modes, strides, the optional LSE) run on its unified view (to_unified_params):
// one definition of each rule, and the same field names, since PagedDecodeParams spells them alike.
// In their messages the query-row count is `num_tokens`, which is num_seqs * q_len here. The rules of
// its own come first:
//   * q_len in [1, kPagedDecodeMaxQLen];
//   * a per-tensor scale is a device scalar or, when its pointer is null, a host float that must be
//     0 (unset: the scale 1, k_scale_value_or_one) or finite and > 0; per_token_head needs both
//     pointers;
//   * q, out, block_table and seq_lens_k are required when num_seqs > 0 (no cu_seqlens_q exists);
//   * a context shorter than q_len (0 included) is valid: those rows output zeros (no bound ties
//     max_seqlen_k to q_len);
//   * the rocm cache layout (KvCacheLayout::rocm) has its own K and V dimensions: the shared rules
//     read a packed NHD cache of the same shape in its place, and rocm_layout() checks the real
//     strides (in range, no overlap, 16-byte K strides, V strides whole 8-slot loads, v_stride_slot
//     1) and block_size % 8 == 0.
// validate(p, host) checks host copies of seq_lens_k and the block table as unified's does.
#pragma once
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "hipattn/problem/paged_decode_params.hpp"
#include "hipattn/problem/unified_rules.hpp"

namespace hipattn {

namespace paged_decode_rules {

// The unified problem the shared rules read: causal off (a short context is valid here), q_len kept
// in range so that the shared bounds stay meaningful when q_len itself is reported.
inline UnifiedAttentionParams rule_view(const PagedDecodeParams& p) {
  PagedDecodeParams c = p;
  if (c.q_len < 1 || c.q_len > kPagedDecodeMaxQLen) c.q_len = 1;
  UnifiedAttentionParams u = to_unified_params(c, nullptr);
  u.causal = false;
  if (p.kv_layout == KvCacheLayout::rocm) {  // a packed NHD cache of the same shape (rocm_layout checks the real one)
    const int64_t d = p.head_size, h = p.num_kv_heads;
    u.k_stride_slot = u.v_stride_slot = h * d;
    u.k_stride_head = u.v_stride_head = d;
    u.k_stride_block = u.v_stride_block = int64_t(p.block_size) * h * d;
  }
  return u;
}

// The dimensions of the rocm layout's caches, innermost first (x: rocm_kv_chunk_elems).
inline std::array<validation::Dim, 5> rocm_k_dims(const PagedDecodeParams& p) {
  const int64_t x = rocm_kv_chunk_elems(p.kv_dtype);
  return {{{x, 1, "x (16 bytes of kv_dtype)", "1"},
           {p.block_size, p.k_stride_slot, "block_size", "k_stride_slot"},
           {x > 0 ? p.head_size / x : 0, p.k_stride_chunk, "head_size / x", "k_stride_chunk"},
           {p.num_kv_heads, p.k_stride_head, "num_kv_heads", "k_stride_head"},
           {p.num_blocks, p.k_stride_block, "num_blocks", "k_stride_block"}}};
}
inline std::array<validation::Dim, 4> rocm_v_dims(const PagedDecodeParams& p) {
  return {{{p.block_size, 1, "block_size", "1"},
           {p.head_size, p.v_stride_dim, "head_size", "v_stride_dim"},
           {p.num_kv_heads, p.v_stride_head, "num_kv_heads", "v_stride_head"},
           {p.num_blocks, p.v_stride_block, "num_blocks", "v_stride_block"}}};
}

// The kv_layout value (first: the stride rules read the strides by it).
inline bool kv_layout(ValidationReport& r, const PagedDecodeParams& p) {
  return validation::enum_in(r, "kv_layout", p.kv_layout, {{KvCacheLayout::rows, "rows"}, {KvCacheLayout::rocm, "rocm"}});
}

// The rocm layout's own rules.
inline void rocm_layout(ValidationReport& r, const PagedDecodeParams& p) {
  using namespace validation;
  if (p.kv_layout != KvCacheLayout::rocm) return;
  const int64_t kb = dtype_size(p.kv_dtype);
  if (p.block_size > 0 && p.block_size % 8 != 0)
    r.unsupported("block_size", "block_size (" + num(p.block_size) +
                                    ") must be a multiple of 8 with kv_layout rocm (a value load covers 8 slots of one dimension)");
  if (p.v_stride_slot != 1)
    r.invalid("v_stride_slot", "v_stride_slot (" + num(p.v_stride_slot) +
                                   ") must be 1 with kv_layout rocm (V [num_blocks, num_kv_heads, head_size, block_size])");
  if (kb <= 0) return;  // the dtype rule reported it
  const int64_t x = 16 / kb;
  if (p.head_size % x != 0)
    r.unsupported("head_size", "head_size (" + num(p.head_size) + ") is not a multiple of x (" + num(x) +
                                   ") with kv_layout rocm");
  tensor_layout(r, "k_cache", rocm_k_dims(p), kb, ValidationLimits::vector_align_bytes);
  tensor_layout(r, "v_cache", rocm_v_dims(p), kb, 8 * kb);  // 8 slots a load: 16 (16-bit) or 8 (fp8) bytes
}

inline void q_len(ValidationReport& r, const PagedDecodeParams& p) {
  if (p.q_len < 1 || p.q_len > kPagedDecodeMaxQLen)
    r.unsupported("q_len", "q_len (" + validation::num(p.q_len) + ") must be in [1, " +
                               validation::num(kPagedDecodeMaxQLen) + "]");
}

// Per-tensor host floats: 0 (unset: the scale 1), or finite and > 0.
inline void scale_values(ValidationReport& r, const PagedDecodeParams& p) {
  if (p.kv_scale_mode != KvScaleMode::per_tensor) return;
  const auto check = [&](const float* ptr, float value, const char* field) {
    if (ptr == nullptr && value != 0.f && (!std::isfinite(value) || !(value > 0.f)))
      r.invalid(field, std::string(field) + " (" + validation::flt(value) +
                           ") must be finite and > 0, or 0 for the scale 1 (the per-tensor scale when its pointer "
                           "is null)");
  };
  check(p.k_scale, p.k_scale_value, "k_scale_value");
  check(p.v_scale, p.v_scale_value, "v_scale_value");
}

inline void pointers(ValidationReport& r, const PagedDecodeParams& p) {
  const int64_t va = ValidationLimits::vector_align_bytes;
  const bool rows = p.num_seqs > 0;
  const bool per_token_head = p.kv_scale_mode == KvScaleMode::per_token_head;
  const std::array<validation::PtrRule, 11> ptrs{{
      {p.q, "q", rows, va, "num_seqs > 0"},
      {p.k_cache, "k_cache", true, va, "always"},
      {p.v_cache, "v_cache", true, va, "always"},
      {p.block_table, "block_table", rows, alignof(int32_t), "num_seqs > 0"},
      {p.seq_lens_k, "seq_lens_k", rows, alignof(int32_t), "num_seqs > 0"},
      {p.out, "out", rows, va, "num_seqs > 0"},
      {p.k_scale, "k_scale", per_token_head, alignof(float), "per_token_head scales"},
      {p.v_scale, "v_scale", per_token_head, alignof(float), "per_token_head scales"},
      {p.sinks, "sinks", false, alignof(float), ""},
      {p.alibi_slopes, "alibi_slopes", false, alignof(float), ""},
      {p.lse, "lse", false, alignof(float), ""},
  }};
  validation::pointers(r, ptrs);
}

}  // namespace paged_decode_rules

// Host validation of everything the host knows about `p` (never dereferences a pointer): kv_layout
// (the strides are read by it; an unknown one skips the stride rules), q_len, then
// the shared rules in unified's order (counts, dtypes, bounds, logits, fp8 scale mode), the host
// scale values, the pointers, the optional LSE and the tensor strides.
inline ValidationReport validate(const PagedDecodeParams& p) {
  ValidationReport r;
  const bool layout_ok = paged_decode_rules::kv_layout(r, p);
  paged_decode_rules::q_len(r, p);
  const UnifiedAttentionParams u = paged_decode_rules::rule_view(p);
  unified_rules::counts(r, u);
  const std::array<bool, 3> dtypes_ok = unified_rules::dtypes(r, u);
  unified_rules::bounds(r, u);
  unified_rules::logits(r, u);
  unified_rules::fp8_scales(r, u);
  unified_rules::io_scales(r, u, dtypes_ok);
  paged_decode_rules::scale_values(r, p);
  paged_decode_rules::pointers(r, p);
  unified_rules::optional_tensors(r, u);
  if (layout_ok) unified_rules::tensor_strides(r, u, dtypes_ok);
  paged_decode_rules::rocm_layout(r, p);
  return r;
}

// Whether some offset of the problem can reach 2^31 bytes (unified's rule on the view, and the rocm
// layout's caches by their own dimensions).
inline bool needs_64bit_offsets(const PagedDecodeParams& p) {
  if (needs_64bit_offsets(paged_decode_rules::rule_view(p))) return true;
  if (p.kv_layout != KvCacheLayout::rocm) return false;
  const int64_t kb = dtype_size(p.kv_dtype), limit = ValidationLimits::max_32bit_extent_bytes;
  return validation::extent_bytes(paged_decode_rules::rocm_k_dims(p), kb) > limit ||
         validation::extent_bytes(paged_decode_rules::rocm_v_dims(p), kb) > limit;
}

// validate(p), then host copies of seq_lens_k ([num_seqs], each in [0, max_seqlen_k]) and of the
// block table (the used entries in [0, num_blocks); empty: not checked).
inline ValidationReport validate(const PagedDecodeParams& p, std::span<const int32_t> seq_lens_k,
                                 std::span<const int32_t> block_table = {}) {
  ValidationReport r = validate(p);
  if (!r.ok()) return r;
  std::vector<int32_t> cu(static_cast<size_t>(p.num_seqs) + 1);
  for (size_t i = 0; i < cu.size(); ++i) cu[i] = static_cast<int32_t>(i) * p.q_len;
  UnifiedAttentionParams u = paged_decode_rules::rule_view(p);
  u.cu_seqlens_q = cu.data();
  // Per-tensor host floats (already checked) stand where unified requires scale pointers; the
  // host-array checks never read them.
  static const float kHostScale = 1.f;
  if (u.k_scale == nullptr) u.k_scale = &kHostScale;
  if (u.v_scale == nullptr) u.v_scale = &kHostScale;
  return validate(u, HostSequenceInfo{cu, seq_lens_k, block_table});
}

// The traits a workspace is sized from (dispatch/paged_decode.hpp paged_decode_workspace_size).
inline ValidationReport validate(const PagedDecodeTraits& t) {
  using namespace validation;
  ValidationReport r;
  at_least(r, "max_num_seqs", t.max_num_seqs, 0);
  if (t.max_q_len < 1 || t.max_q_len > kPagedDecodeMaxQLen)
    r.unsupported("max_q_len", "max_q_len (" + num(t.max_q_len) + ") must be in [1, " + num(kPagedDecodeMaxQLen) + "]");
  const bool q_heads = at_least(r, "num_q_heads", t.num_q_heads, 1);
  const bool kv_heads = at_least(r, "num_kv_heads", t.num_kv_heads, 1);
  if (q_heads && kv_heads && t.num_q_heads % t.num_kv_heads != 0)
    r.invalid("num_kv_heads", "num_q_heads (" + num(t.num_q_heads) + ") is not a multiple of num_kv_heads (" +
                                  num(t.num_kv_heads) + ")");
  at_least(r, "max_head_size", t.max_head_size, 1);
  at_least(r, "max_seqlen_k", t.max_seqlen_k, 0);
  return r;
}

}  // namespace hipattn
