// hipattn/problem/fp8_io_rules.hpp: the rules of fp8 queries and fp8 outputs (problem/fp8_io.hpp),
// one definition that unified attention, paged decode (through its unified view) and MLA decode run.
//   io_dtypes     q_dtype, kv_dtype and the output dtype, and which pairs are served
//   io_out_dtype  the output dtype alone (io_dtypes' part; MLA decode keeps its own query rules)
//   io_scales     q_scale, out_format's scale and its per-group fields
// Host values are checked (0, meaning unset: the identity 1 where the scale is used; else finite and
// > 0; a scale that must be unset takes 0 or 1); a device scalar cannot be without a synchronization,
// so ALGORITHM.md section 12 says what a zero, negative or NaN one gives.
#pragma once
#include <array>
#include <cmath>
#include <string>

#include "hipattn/problem/fp8_io.hpp"
#include "hipattn/problem/validate_toolkit.hpp"

namespace hipattn::validation {

struct IoDtypesOk {
  bool q = false, kv = false, out = false;
};

// The output dtype: unset, the query's own (which must then be 16-bit); set, 16-bit (the compute
// dtype) or fp8. q_ok / kv_ok say whether the caller accepted q_dtype and kv_dtype: a rule that needs
// one of them is skipped while it fails (an unset output dtype over a rejected query is not reported
// again). Returns whether the output dtype is known and served. Shared by io_dtypes and the families
// whose query and cache rules are their own (MLA decode: 16-bit queries only).
inline bool io_out_dtype(ValidationReport& r, DType q_dtype, bool q_ok, DType kv_dtype, bool kv_ok, const OutputFormat& out) {
  if (!out.dtype.has_value()) {
    if (q_ok && is_fp8(q_dtype))
      r.invalid("out_format.dtype", "out_format.dtype (unset) with q_dtype (" + dtype_str(q_dtype) +
                                        "): fp8 queries need the output dtype set (fp16, bf16 or fp8)");
    return q_ok && !is_fp8(q_dtype);
  }
  if (!dtype_in(r, ErrorCode::unsupported, "out_format.dtype", *out.dtype,
                {DType::f16, DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz}))
    return false;
  if (q_ok && kv_ok && !is_fp8(*out.dtype) && *out.dtype != compute_dtype(q_dtype, kv_dtype, *out.dtype)) {
    r.unsupported("out_format.dtype", "out_format.dtype (" + dtype_str(*out.dtype) + ") must be the compute dtype (" +
                                          dtype_str(compute_dtype(q_dtype, kv_dtype, *out.dtype)) +
                                          ": the query's, or a 16-bit cache's) or fp8");
    return false;
  }
  return true;
}

// q_dtype: 16-bit or fp8; kv_dtype: the query's type when both are 16-bit, else any 16-bit or fp8
// type; the output dtype (io_out_dtype): set when the queries are fp8, 16-bit or fp8.
inline IoDtypesOk io_dtypes(ValidationReport& r, DType q_dtype, DType kv_dtype, const OutputFormat& out) {
  IoDtypesOk ok;
  ok.q = dtype_in(r, ErrorCode::unsupported, "q_dtype", q_dtype, {DType::f16, DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz});
  // (a cache of the query's own unknown type is reported once, as q_dtype)
  const bool kv_known = (kv_dtype == q_dtype && !ok.q)
                            ? false
                            : dtype_in(r, ErrorCode::unsupported, "kv_dtype", kv_dtype,
                                       {DType::f16, DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz});
  ok.kv = kv_known;
  if (ok.q && kv_known && !is_fp8(q_dtype) && !is_fp8(kv_dtype) && kv_dtype != q_dtype) {
    r.unsupported("kv_dtype", "kv_dtype (" + dtype_str(kv_dtype) + ") must equal q_dtype (" + dtype_str(q_dtype) +
                                  ") or be fp8_e4m3fn / fp8_e4m3fnuz");
    ok.kv = false;
  }
  ok.out = io_out_dtype(r, q_dtype, ok.q, kv_dtype, ok.kv, out);
  return ok;
}

namespace detail {
// A scale that must be left unset: no device pointer, host 0 (the default) or 1 (the identity).
inline void scale_unset(ValidationReport& r, const TensorScale& s, const char* device_field, const char* host_field,
                        const std::string& why) {
  if (s.device != nullptr)
    r.invalid(device_field, std::string(device_field) + " (" + ptr(s.device) + ") must be null: " + why);
  if (s.host != 0.f && s.host != 1.f)
    r.invalid(host_field, std::string(host_field) + " (" + flt(s.host) + ") must be 0 or 1 (unset): " + why);
}
// A scale that is used: a 4-byte-aligned device scalar, or a host value that is 0 (unset: the
// identity 1, TensorScale::host_or_one) or finite and > 0.
inline void scale_used(ValidationReport& r, const TensorScale& s, const char* device_field, const char* host_field) {
  if (s.device != nullptr) {
    if (reinterpret_cast<uintptr_t>(s.device) % alignof(float) != 0)
      r.invalid(device_field, std::string(device_field) + " (" + ptr(s.device) + ") is not 4-byte aligned");
  } else if (s.host != 0.f && (!std::isfinite(s.host) || !(s.host > 0.f))) {
    r.invalid(host_field, std::string(host_field) + " (" + flt(s.host) +
                              ") must be finite and > 0, or 0 for the scale 1 (the per-tensor scale when its "
                              "device pointer is null)");
  }
}
}  // namespace detail

// The per-group scale tensor [num_tokens, num_q_heads * head_size / group_size] by its two strides.
inline std::array<Dim, 2> group_scale_dims(const OutputFormat& f, int64_t num_tokens, int64_t num_q_heads,
                                           int64_t head_size) {
  const int64_t groups = f.group_size > 0 ? num_q_heads * (head_size / f.group_size) : 0;
  return {{{groups, f.group_scale_stride_group, "num_q_heads * head_size / out_format.group_size",
            "out_format.group_scale_stride_group"},
           {num_tokens, f.group_scale_stride_token, "num_tokens", "out_format.group_scale_stride_token"}}};
}

// The group sizes an fp8 per-group output takes: powers of two (the reduces combine a group's columns
// across lanes with xor shuffles) of at least 16 columns (the attention tiles' O fragments hold
// columns in blocks of 8 or 16 per lane set, so a group's elements are the same on every lane:
// kernels/common/epilogue.hpp), at most 128 (a warp of 32 lanes, 4 columns each, in the reduces).
inline constexpr std::array<int32_t, 4> kOutGroupSizes = {16, 32, 64, 128};

// q_scale with the query dtype; out_format's scale, group size, group-scale tensor and fp8 max with
// the output dtype. Run only on dtypes io_dtypes accepted.
inline void io_scales(ValidationReport& r, DType q_dtype, const TensorScale& q_scale, const OutputFormat& f,
                      DType out_dtype, int64_t num_tokens, int64_t num_q_heads, int64_t head_size) {
  if (is_fp8(q_dtype))
    detail::scale_used(r, q_scale, "q_scale.device", "q_scale.host");
  else
    detail::scale_unset(r, q_scale, "q_scale.device", "q_scale.host",
                        "only fp8 queries are scaled (q_dtype " + dtype_str(q_dtype) + ")");
  const bool group = f.group_size != 0;
  if (!is_fp8(out_dtype)) {
    const std::string why = "only an fp8 output is scaled (output dtype " + dtype_str(out_dtype) + ")";
    detail::scale_unset(r, f.scale, "out_format.scale.device", "out_format.scale.host", why);
    if (group) r.invalid("out_format.group_size", "out_format.group_size (" + num(f.group_size) + ") must be 0: " + why);
    if (f.group_scale != nullptr)
      r.invalid("out_format.group_scale", "out_format.group_scale (" + ptr(f.group_scale) + ") must be null: " + why);
    return;
  }
  if (!group) {
    detail::scale_used(r, f.scale, "out_format.scale.device", "out_format.scale.host");
    if (f.group_scale != nullptr)
      r.invalid("out_format.group_scale", "out_format.group_scale (" + ptr(f.group_scale) +
                                              ") must be null with a per-tensor fp8 output (group_size 0)");
    return;
  }
  detail::scale_unset(r, f.scale, "out_format.scale.device", "out_format.scale.host",
                      "a per-group fp8 output computes its scales (group_size " + num(f.group_size) + ")");
  const bool size_ok = one_of(r, ErrorCode::unsupported, "out_format.group_size", f.group_size, kOutGroupSizes);
  if (size_ok && head_size > 0 && head_size % f.group_size != 0)
    r.unsupported("out_format.group_size", "out_format.group_size (" + num(f.group_size) +
                                               ") does not divide head_size (" + num(head_size) + ")");
  const float fmax = fp8_max_finite(out_dtype);
  if (f.group_fp8_max != 0.f && !(f.group_fp8_max > 0.f && f.group_fp8_max <= fmax))
    r.invalid("out_format.group_fp8_max", "out_format.group_fp8_max (" + flt(f.group_fp8_max) + ") must be 0 (the format's " +
                                              flt(fmax) + ") or in (0, " + flt(fmax) + "] for " + dtype_str(out_dtype));
  if (num_tokens > 0 && f.group_scale == nullptr)
    r.invalid("out_format.group_scale", "out_format.group_scale (nullptr) is required (per-group fp8 output, num_tokens > 0)");
  if (reinterpret_cast<uintptr_t>(f.group_scale) % alignof(float) != 0)
    r.invalid("out_format.group_scale", "out_format.group_scale (" + ptr(f.group_scale) + ") is not 4-byte aligned");
  if (size_ok && head_size % f.group_size == 0) {
    const auto dims = group_scale_dims(f, num_tokens, num_q_heads, head_size);
    if (strides_in_range(r, dims)) no_overlap(r, "out_format.group_scale", dims);
  }
}

}  // namespace hipattn::validation
