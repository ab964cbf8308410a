// hipattn/dispatch/validate.hpp: host-side validation of UnifiedAttentionParams (and of host copies of its device arrays).
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
// Decisions fixed here (the tests pin them):
//   * num_seqs == 0 is allowed only with num_tokens == 0: an empty batch, a valid no-op. Every other rule
//     still applies (configuration errors do not hide behind an empty step).
//   * A required pointer may be null only when its tensor has no element: q and out when
//     num_tokens == 0, seq_lens_k and block_table when num_seqs == 0. cu_seqlens_q always has
//     num_seqs + 1 >= 1 entries and k_cache / v_cache num_blocks >= 1 blocks, so they are never null.
//   * Strides must be >= 0 always. The no-overlap and 16-byte stride rules ignore the dims of extent 1
//     and skip a tensor with no element (an extent of 0).
//   * "Overlap" (q, out, k_cache, v_cache, per-token-head scales): sort the dims by stride (ties keep
//     the innermost dim first) and require each stride >= previous stride * previous extent, starting
//     from 1 (so a stride of 0 on a dim of extent > 1 is an overlap too). Overlapping reads would be
//     harmless in principle, but the kernels assume distinct elements everywhere.
//   * max_seqlen_q <= num_tokens, and max_seqlen_q >= ceil(num_tokens / num_seqs) (some sequence is at
//     least the average length). Under causal, max_seqlen_q <= max_seqlen_k (q_len <= kv_len per
//     sequence; pass the tight bound).
//   * Each Status names the offending field exactly as spelled in UnifiedAttentionParams (for the
//     host-array checks: "cu_seqlens_q", "seq_lens_k", "block_table", or the bound they break) and its
//     message carries the bad value(s).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "hipattn/dispatch/unified_params.hpp"
#include "hipattn/numeric/dtype.hpp"
#include "hipattn/platform/config.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/runtime.hpp"

namespace hipattn {

// The result of a validation: ok() when `field` is empty; otherwise the code, the offending field
// (spelled as in UnifiedAttentionParams) and a message carrying the bad value(s).
struct Status {
  ErrorCode code = ErrorCode::invalid_argument;
  std::string field;
  std::string message;
  bool ok() const { return field.empty(); }
  static Status success() { return Status{}; }
};

// Throw hipattn::Error(code, field, message) when `s` is a failure; do nothing when it is ok.
inline void throw_if_error(const Status& s) {
  if (!s.ok()) throw Error(s.code, s.field, s.message);
}

// The constraints the kernels put on a problem (compile-time constants).
struct ValidationLimits {
  // Head sizes some instantiation serves (elements).
  static constexpr std::array<int32_t, 4> head_sizes{64, 128, 192, 256};
  // Vector-access alignment, bytes: of the base pointers q, k_cache, v_cache, out, and of every stride of
  // q / out / k_cache / v_cache whose dimension has extent > 1.
  static constexpr int64_t vector_align_bytes = 16;
  // Largest num_q_heads / num_kv_heads ratio served; 0 means any ratio.
  static constexpr int32_t max_q_per_kv_heads = 0;
  // Byte extent above which a tensor needs 64-bit offsets (see needs_64bit_offsets).
  static constexpr int64_t max_32bit_extent_bytes = int64_t(1) << 31;

  // Whether `d` is one of head_sizes.
  static constexpr bool head_size_supported(int32_t d) {
    for (int32_t h : head_sizes)
      if (h == d) return true;
    return false;
  }
};

namespace validate_detail {

inline Status fail(ErrorCode code, std::string field, std::string message) {
  return Status{code, std::move(field), std::move(message)};
}
inline Status invalid(std::string field, std::string message) {
  return fail(ErrorCode::invalid_argument, std::move(field), std::move(message));
}

inline std::string num(int64_t v) { return std::to_string(v); }
inline std::string flt(float v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(v));
  return buf;
}
inline std::string ptr(const void* p) {
  if (p == nullptr) return "nullptr";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}
inline std::string dtype_str(DType d) {
  const std::string_view n = dtype_name(d);
  if (n == "?") return "DType(" + num(static_cast<int>(d)) + ")";
  return std::string(n);
}
inline std::string scale_mode_str(KvScaleMode m) {
  switch (m) {
    case KvScaleMode::none: return "none";
    case KvScaleMode::per_tensor: return "per_tensor";
    case KvScaleMode::per_token_head: return "per_token_head";
  }
  return "KvScaleMode(" + num(static_cast<int>(m)) + ")";
}

// a * b for a, b >= 0, saturating at INT64_MAX.
inline int64_t sat_mul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  if (a > std::numeric_limits<int64_t>::max() / b) return std::numeric_limits<int64_t>::max();
  return a * b;
}
// a + b for a, b >= 0, saturating at INT64_MAX.
inline int64_t sat_add(int64_t a, int64_t b) {
  if (a > std::numeric_limits<int64_t>::max() - b) return std::numeric_limits<int64_t>::max();
  return a + b;
}

// One dimension of a strided tensor, for the layout checks.
struct Dim {
  int64_t extent;
  int64_t stride;           // elements
  const char* extent_name;  // the field giving the extent ("num_q_heads")
  const char* stride_name;  // the field giving the stride ("q_stride_head"); "1" for the contiguous dim
};

// Whether `d` is the contiguous head_size dim (stride 1 by contract, not a field).
inline bool is_unit(const Dim& d) { return d.stride_name[0] == '1' && d.stride_name[1] == '\0'; }

template <size_t N>
bool has_no_element(const std::array<Dim, N>& dims) {
  for (const Dim& d : dims)
    if (d.extent <= 0) return true;
  return false;
}

// Every stride >= 0 and < 2^31: kernels carry strides as 32-bit values (offsets are formed in 64 bits).
template <size_t N>
Status check_nonnegative(const std::array<Dim, N>& dims) {
  for (const Dim& d : dims) {
    if (d.stride < 0) return invalid(d.stride_name, std::string(d.stride_name) + " (" + num(d.stride) + ") must be >= 0");
    if (d.stride > INT32_MAX)
      return invalid(d.stride_name, std::string(d.stride_name) + " (" + num(d.stride) + ") must be < 2^31 elements");
  }
  return Status::success();
}

// No two index tuples of the tensor address the same element (see the header comment for the rule).
// `dims` lists the innermost dimension first so that ties in the stride sort name the outer dim.
template <size_t N>
Status check_no_overlap(const char* tensor, std::array<Dim, N> dims) {
  if (has_no_element(dims)) return Status::success();
  std::stable_sort(dims.begin(), dims.end(), [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  int64_t need = 1;
  const Dim* prev = nullptr;
  for (const Dim& d : dims) {
    if (d.extent <= 1) continue;
    if (d.stride < need) {
      std::string m = std::string(d.stride_name) + " (" + num(d.stride) + ") makes " + tensor + " overlap: its dimension (" +
                      d.extent_name + " = " + num(d.extent) + ") needs a stride >= " + num(need);
      if (prev != nullptr) {
        m += " = ";
        m += is_unit(*prev) ? std::string("1") : std::string(prev->stride_name) + " (" + num(prev->stride) + ")";
        m += " * " + std::string(prev->extent_name) + " (" + num(prev->extent) + ")";
      }
      return invalid(d.stride_name, m);
    }
    need = sat_mul(d.stride, d.extent);
    prev = &d;
  }
  return Status::success();
}

// Every stride of a dim with extent > 1 is a multiple of vector_align_bytes in bytes. The contiguous
// dim (stride_name "1") is skipped: head_size * element size is a multiple of 16 for every supported
// head size.
template <size_t N>
Status check_stride_alignment(const std::array<Dim, N>& dims, int64_t elem_bytes) {
  if (has_no_element(dims)) return Status::success();
  constexpr int64_t a = ValidationLimits::vector_align_bytes;
  for (const Dim& d : dims) {
    if (d.extent <= 1 || is_unit(d)) continue;
    const int64_t bytes = d.stride * elem_bytes;
    if (bytes % a != 0)
      return invalid(d.stride_name, std::string(d.stride_name) + " (" + num(d.stride) + " elements = " + num(bytes) +
                                        " bytes) is not a multiple of " + num(a) + " bytes");
  }
  return Status::success();
}

// 1 + sum (extent - 1) * |stride|: the elements spanned by the tensor; 0 when it has no element.
template <size_t N>
int64_t span_elements(const std::array<Dim, N>& dims) {
  if (has_no_element(dims)) return 0;
  int64_t s = 1;
  for (const Dim& d : dims) s = sat_add(s, sat_mul(d.extent - 1, d.stride < 0 ? -d.stride : d.stride));
  return s;
}

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

// A pointer field and what it must satisfy.
struct PtrRule {
  const void* p;
  const char* name;
  bool required;      // must be non-null
  int64_t alignment;  // bytes
  const char* why;    // why it is required (for the message)
};

}  // namespace validate_detail

// Host validation of everything the host knows about `p` (never dereferences a pointer). Returns
// Status::success() or the first failed rule, checked in this order: counts, head size, dtypes, cache
// and sequence bounds, logits, fp8 scale mode, pointers, optional-tensor strides, tensor strides.
inline Status validate(const UnifiedAttentionParams& p) {
  using namespace validate_detail;

  // ---- counts ----
  if (p.num_seqs < 0) return invalid("num_seqs", "num_seqs (" + num(p.num_seqs) + ") must be >= 0");
  if (p.num_tokens < 0) return invalid("num_tokens", "num_tokens (" + num(p.num_tokens) + ") must be >= 0");
  if (p.num_seqs == 0 && p.num_tokens != 0)
    return invalid("num_seqs", "num_seqs (0) with num_tokens (" + num(p.num_tokens) +
                                   ") > 0: only an empty batch (num_tokens == 0) may have no sequence");
  if (p.num_q_heads < 1) return invalid("num_q_heads", "num_q_heads (" + num(p.num_q_heads) + ") must be >= 1");
  if (p.num_kv_heads < 1) return invalid("num_kv_heads", "num_kv_heads (" + num(p.num_kv_heads) + ") must be >= 1");
  if (p.num_q_heads % p.num_kv_heads != 0)
    return invalid("num_kv_heads", "num_q_heads (" + num(p.num_q_heads) + ") is not a multiple of num_kv_heads (" +
                                       num(p.num_kv_heads) + ")");
  if (ValidationLimits::max_q_per_kv_heads > 0 && p.num_q_heads / p.num_kv_heads > ValidationLimits::max_q_per_kv_heads)
    return fail(ErrorCode::unsupported, "num_kv_heads",
                "num_q_heads / num_kv_heads (" + num(p.num_q_heads / p.num_kv_heads) + ") exceeds " +
                    num(ValidationLimits::max_q_per_kv_heads));
  if (!ValidationLimits::head_size_supported(p.head_size))
    return fail(ErrorCode::unsupported, "head_size", "head_size (" + num(p.head_size) + ") is not one of 64, 128, 192, 256");

  // ---- dtypes ----
  if (p.q_dtype != DType::f16 && p.q_dtype != DType::bf16)
    return fail(ErrorCode::unsupported, "q_dtype", "q_dtype (" + dtype_str(p.q_dtype) + ") must be fp16 or bf16");
  if (p.kv_dtype != p.q_dtype && !is_fp8(p.kv_dtype))
    return fail(ErrorCode::unsupported, "kv_dtype",
                "kv_dtype (" + dtype_str(p.kv_dtype) + ") must equal q_dtype (" + dtype_str(p.q_dtype) +
                    ") or be fp8_e4m3fn / fp8_e4m3fnuz");

  // ---- paged cache and sequence bounds ----
  if (p.block_size < 1) return invalid("block_size", "block_size (" + num(p.block_size) + ") must be >= 1");
  if (p.num_blocks < 1) return invalid("num_blocks", "num_blocks (" + num(p.num_blocks) + ") must be >= 1");
  if (p.max_seqlen_q < 0) return invalid("max_seqlen_q", "max_seqlen_q (" + num(p.max_seqlen_q) + ") must be >= 0");
  if (p.max_seqlen_k < 0) return invalid("max_seqlen_k", "max_seqlen_k (" + num(p.max_seqlen_k) + ") must be >= 0");
  if (p.max_seqlen_q > p.num_tokens)
    return invalid("max_seqlen_q", "max_seqlen_q (" + num(p.max_seqlen_q) + ") exceeds num_tokens (" + num(p.num_tokens) + ")");
  if (p.num_seqs > 0) {
    const int64_t avg_ceil = (int64_t(p.num_tokens) + p.num_seqs - 1) / p.num_seqs;
    if (p.max_seqlen_q < avg_ceil)
      return invalid("max_seqlen_q", "max_seqlen_q (" + num(p.max_seqlen_q) + ") < ceil(num_tokens (" + num(p.num_tokens) +
                                         ") / num_seqs (" + num(p.num_seqs) + ")) = " + num(avg_ceil) +
                                         ": some sequence is longer than the bound");
  }
  if (p.causal && p.max_seqlen_q > p.max_seqlen_k)
    return invalid("max_seqlen_q", "causal with max_seqlen_q (" + num(p.max_seqlen_q) + ") > max_seqlen_k (" +
                                       num(p.max_seqlen_k) + "): bottom-right causal needs q_len <= kv_len");
  if (p.max_blocks_per_seq < 1)
    return invalid("max_blocks_per_seq", "max_blocks_per_seq (" + num(p.max_blocks_per_seq) + ") must be >= 1");
  if (int64_t(p.max_blocks_per_seq) * p.block_size < p.max_seqlen_k)
    return invalid("max_blocks_per_seq", "max_blocks_per_seq (" + num(p.max_blocks_per_seq) + ") * block_size (" +
                                             num(p.block_size) + ") = " + num(int64_t(p.max_blocks_per_seq) * p.block_size) +
                                             " < max_seqlen_k (" + num(p.max_seqlen_k) + ")");
  if (p.block_table_stride > INT32_MAX || p.qq_bias_stride > INT32_MAX || p.lse_stride_head > INT32_MAX)
    return invalid(p.block_table_stride > INT32_MAX ? "block_table_stride"
                   : p.qq_bias_stride > INT32_MAX   ? "qq_bias_stride"
                                                    : "lse_stride_head",
                   "strides must be < 2^31 elements (block_table_stride " + num(p.block_table_stride) +
                       ", qq_bias_stride " + num(p.qq_bias_stride) + ", lse_stride_head " + num(p.lse_stride_head) + ")");
  if (p.block_table_stride < p.max_blocks_per_seq)
    return invalid("block_table_stride", "block_table_stride (" + num(p.block_table_stride) + ") < max_blocks_per_seq (" +
                                             num(p.max_blocks_per_seq) + ")");

  // ---- logits ----
  if (!std::isfinite(p.scale) || !(p.scale > 0.f))
    return invalid("scale", "scale (" + flt(p.scale) + ") must be finite and > 0");
  if (!std::isfinite(p.softcap) || p.softcap < 0.f)
    return invalid("softcap", "softcap (" + flt(p.softcap) + ") must be finite and >= 0 (0 disables it)");
  if (p.window_left < -1)
    return invalid("window_left", "window_left (" + num(p.window_left) + ") must be >= 0, or -1 to disable the window");

  // ---- fp8 scales ----
  const bool fp8 = is_fp8(p.kv_dtype);
  if (p.kv_scale_mode != KvScaleMode::none && p.kv_scale_mode != KvScaleMode::per_tensor &&
      p.kv_scale_mode != KvScaleMode::per_token_head)
    return invalid("kv_scale_mode", "kv_scale_mode (" + scale_mode_str(p.kv_scale_mode) + ") is not a KvScaleMode");
  if (fp8 && p.kv_scale_mode == KvScaleMode::none)
    return invalid("kv_scale_mode", "kv_scale_mode (none) with kv_dtype (" + dtype_str(p.kv_dtype) +
                                        "): fp8 KV needs per_tensor or per_token_head scales");
  if (!fp8 && p.kv_scale_mode != KvScaleMode::none)
    return invalid("kv_scale_mode", "kv_scale_mode (" + scale_mode_str(p.kv_scale_mode) + ") with kv_dtype (" +
                                        dtype_str(p.kv_dtype) + "): only fp8 KV is scaled; use none");

  // ---- pointers: non-null when the tensor has an element, naturally / vector aligned ----
  const int64_t va = ValidationLimits::vector_align_bytes;
  const std::array<PtrRule, 13> ptrs{{
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
  for (const PtrRule& r : ptrs)
    if (r.required && r.p == nullptr)
      return invalid(r.name, std::string(r.name) + " (nullptr) is required (" + r.why + ")");
  for (const PtrRule& r : ptrs)
    if (reinterpret_cast<uintptr_t>(r.p) % static_cast<uintptr_t>(r.alignment) != 0)
      return invalid(r.name, std::string(r.name) + " (" + ptr(r.p) + ") is not " + num(r.alignment) + "-byte aligned");

  // ---- optional inputs / outputs ----
  if (p.qq_bias != nullptr && p.qq_bias_stride < 1)
    return invalid("qq_bias_stride", "qq_bias_stride (" + num(p.qq_bias_stride) + ") must be >= 1 when qq_bias is set");
  if (p.lse != nullptr && p.lse_stride_head < p.num_tokens)
    return invalid("lse_stride_head", "lse_stride_head (" + num(p.lse_stride_head) + ") < num_tokens (" + num(p.num_tokens) +
                                          ") with lse set");

  // ---- strides: >= 0, no overlap, 16-byte multiples ----
  const bool per_token_head = p.kv_scale_mode == KvScaleMode::per_token_head;
  const auto qd = q_dims(p), od = out_dims(p), sd = scale_dims(p);
  const auto kd = k_dims(p), vd = v_dims(p);
  Status s;
  if (!(s = check_nonnegative(qd)).ok() || !(s = check_nonnegative(od)).ok() || !(s = check_nonnegative(kd)).ok() ||
      !(s = check_nonnegative(vd)).ok() || (per_token_head && !(s = check_nonnegative(sd)).ok()))
    return s;
  if (!(s = check_no_overlap("q", qd)).ok() || !(s = check_no_overlap("out", od)).ok() ||
      !(s = check_no_overlap("k_cache", kd)).ok() || !(s = check_no_overlap("v_cache", vd)).ok() ||
      (per_token_head && !(s = check_no_overlap("k_scale / v_scale", sd)).ok()))
    return s;
  const int64_t qb = dtype_size(p.q_dtype), kb = dtype_size(p.kv_dtype);
  if (!(s = check_stride_alignment(qd, qb)).ok() || !(s = check_stride_alignment(od, qb)).ok() ||
      !(s = check_stride_alignment(kd, kb)).ok() || !(s = check_stride_alignment(vd, kb)).ok())
    return s;
  return Status::success();
}

// Whether some byte offset into k_cache, v_cache, the per-token-head scales, q, out or lse can reach
// 2^31 (32-bit signed offsets no longer suffice). A tensor's byte extent is the larger of
// extent0 * stride0 (num_blocks * stride_block for the caches, num_tokens * stride_token for q / out) and
// 1 + sum (extent - 1) * stride, times its element size; the answer is true when one exceeds 2^31 bytes.
// Not an error; meaningful for params that validate.
inline bool needs_64bit_offsets(const UnifiedAttentionParams& p) {
  using namespace validate_detail;
  constexpr int64_t limit = ValidationLimits::max_32bit_extent_bytes;
  const auto over = [&](int64_t outer_elems, int64_t span_elems, int64_t elem_bytes) {
    return sat_mul(std::max(outer_elems, span_elems), elem_bytes) > limit;
  };
  const int64_t kb = dtype_size(p.kv_dtype), qb = dtype_size(p.q_dtype);
  if (over(sat_mul(p.num_blocks, p.k_stride_block), span_elements(k_dims(p)), kb)) return true;
  if (over(sat_mul(p.num_blocks, p.v_stride_block), span_elements(v_dims(p)), kb)) return true;
  if (p.kv_scale_mode == KvScaleMode::per_token_head &&
      over(sat_mul(p.num_blocks, p.scale_stride_block), span_elements(scale_dims(p)), int64_t(sizeof(float))))
    return true;
  if (over(sat_mul(p.num_tokens, p.q_stride_token), span_elements(q_dims(p)), qb)) return true;
  if (over(sat_mul(p.num_tokens, p.o_stride_token), span_elements(out_dims(p)), qb)) return true;
  if (p.lse != nullptr && over(sat_mul(p.num_q_heads, p.lse_stride_head), span_elements(lse_dims(p)), int64_t(sizeof(float))))
    return true;
  return false;
}

// Host copies of the device arrays of a problem, for validate(p, host).
struct HostSequenceInfo {
  std::span<const int32_t> cu_seqlens_q;  // [num_seqs + 1]
  std::span<const int32_t> seq_lens_k;    // [num_seqs]
  std::span<const int32_t> block_table;   // [(num_seqs - 1) * block_table_stride + max_blocks_per_seq], or empty (not checked)
};

// validate(p), then the contents of the host copies: cu_seqlens_q has num_seqs + 1 entries, starts at 0,
// never decreases, ends at num_tokens; seq_lens_k has num_seqs entries, each >= 0; each q length <=
// max_seqlen_q, each kv length <= max_seqlen_k, under causal each q length <= its kv length; the used
// entries of each block-table row (the first ceil(kv_len / block_size)) lie in [0, num_blocks).
inline Status validate(const UnifiedAttentionParams& p, const HostSequenceInfo& host) {
  using namespace validate_detail;
  Status s = validate(p);
  if (!s.ok()) return s;
  const size_t n = static_cast<size_t>(p.num_seqs);
  const auto& cu = host.cu_seqlens_q;
  const auto& kv = host.seq_lens_k;

  if (cu.size() != n + 1)
    return invalid("cu_seqlens_q", "cu_seqlens_q has " + num(int64_t(cu.size())) + " entries; num_seqs (" + num(p.num_seqs) +
                                       ") + 1 = " + num(int64_t(n) + 1) + " expected");
  if (cu[0] != 0) return invalid("cu_seqlens_q", "cu_seqlens_q[0] (" + num(cu[0]) + ") must be 0");
  for (size_t i = 1; i <= n; ++i)
    if (cu[i] < cu[i - 1])
      return invalid("cu_seqlens_q", "cu_seqlens_q decreases at index " + num(int64_t(i)) + ": cu_seqlens_q[" + num(int64_t(i)) +
                                         "] (" + num(cu[i]) + ") < cu_seqlens_q[" + num(int64_t(i) - 1) + "] (" +
                                         num(cu[i - 1]) + ")");
  if (cu[n] != p.num_tokens)
    return invalid("cu_seqlens_q", "cu_seqlens_q[" + num(int64_t(n)) + "] (" + num(cu[n]) + ") must equal num_tokens (" +
                                       num(p.num_tokens) + ")");

  if (kv.size() != n)
    return invalid("seq_lens_k", "seq_lens_k has " + num(int64_t(kv.size())) + " entries; num_seqs (" + num(p.num_seqs) +
                                     ") expected");
  for (size_t i = 0; i < n; ++i) {
    const std::string seq = "sequence " + num(int64_t(i));
    const int64_t q_len = int64_t(cu[i + 1]) - cu[i];
    const int64_t kv_len = kv[i];
    if (kv_len < 0) return invalid("seq_lens_k", seq + ": seq_lens_k[" + num(int64_t(i)) + "] (" + num(kv_len) + ") is negative");
    if (q_len > p.max_seqlen_q)
      return invalid("max_seqlen_q", seq + ": q length " + num(q_len) + " > max_seqlen_q (" + num(p.max_seqlen_q) + ")");
    if (kv_len > p.max_seqlen_k)
      return invalid("max_seqlen_k", seq + ": kv length seq_lens_k[" + num(int64_t(i)) + "] (" + num(kv_len) +
                                         ") > max_seqlen_k (" + num(p.max_seqlen_k) + ")");
    if (p.causal && q_len > kv_len)
      return invalid("seq_lens_k", seq + ": q length " + num(q_len) + " > kv length seq_lens_k[" + num(int64_t(i)) + "] (" +
                                       num(kv_len) + ") under causal (bottom-right alignment needs q_len <= kv_len)");
  }

  const auto& bt = host.block_table;
  if (!bt.empty() && n > 0) {
    const int64_t need = int64_t(n - 1) * p.block_table_stride + p.max_blocks_per_seq;
    if (int64_t(bt.size()) < need)
      return invalid("block_table", "block_table has " + num(int64_t(bt.size())) +
                                        " entries; (num_seqs - 1) * block_table_stride + max_blocks_per_seq = " + num(need) +
                                        " needed");
    for (size_t i = 0; i < n; ++i) {
      // kv_len <= max_seqlen_k <= max_blocks_per_seq * block_size, so `used` stays inside the row.
      const int64_t used = (int64_t(kv[i]) + p.block_size - 1) / p.block_size;
      for (int64_t c = 0; c < used; ++c) {
        const int32_t b = bt[static_cast<size_t>(int64_t(i) * p.block_table_stride + c)];
        if (b < 0 || b >= p.num_blocks)
          return invalid("block_table", "sequence " + num(int64_t(i)) + ", column " + num(c) + ": block id " + num(b) +
                                            " is not in [0, num_blocks (" + num(p.num_blocks) + "))");
      }
    }
  }
  return Status::success();
}

#if defined(HIPATTN_HAS_DEVICE)
// Debug check of the device arrays: validate(p), then copy cu_seqlens_q, seq_lens_k and the used
// block-table rows back (blocking rt::memcpy_d2h) and run validate(p, host). A failed copy returns
// ErrorCode::runtime naming the copy. Make sure the stream that fills those arrays has finished.
inline Status debug_validate_device(const UnifiedAttentionParams& p) {
  using namespace validate_detail;
  Status s = validate(p);
  if (!s.ok()) return s;
  const size_t n = static_cast<size_t>(p.num_seqs);
  const size_t cols = static_cast<size_t>(p.max_blocks_per_seq);
  std::vector<int32_t> cu(n + 1), kv(n), bt(n * cols);
  const auto copy = [](int32_t* dst, const int32_t* src, size_t count, const char* what) -> Status {
    if (count == 0) return Status::success();
    const rt::error_t e = rt::memcpy_d2h(dst, src, count * sizeof(int32_t));
    if (e != rt::success)
      return fail(ErrorCode::runtime, std::string("rt::memcpy_d2h(") + what + ")", rt::error_string(e));
    return Status::success();
  };
  if (!(s = copy(cu.data(), p.cu_seqlens_q, n + 1, "cu_seqlens_q")).ok()) return s;
  if (!(s = copy(kv.data(), p.seq_lens_k, n, "seq_lens_k")).ok()) return s;
  if (p.block_table_stride == p.max_blocks_per_seq) {
    if (!(s = copy(bt.data(), p.block_table, n * cols, "block_table")).ok()) return s;
  } else {
    for (size_t i = 0; i < n; ++i)
      if (!(s = copy(bt.data() + i * cols, p.block_table + static_cast<int64_t>(i) * p.block_table_stride, cols, "block_table"))
               .ok())
        return s;
  }
  // The copy is compacted: rows of max_blocks_per_seq entries.
  UnifiedAttentionParams compact = p;
  compact.block_table_stride = p.max_blocks_per_seq;
  return validate(compact, HostSequenceInfo{cu, kv, bt});
}
#endif  // HIPATTN_HAS_DEVICE

}  // namespace hipattn
