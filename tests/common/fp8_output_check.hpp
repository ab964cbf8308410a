// tests/common/fp8_output_check.hpp: how a suite checks an output written in an OutputFormat
// (problem/fp8_io.hpp: 16-bit, fp8 per tensor, fp8 per group) against the float64 reference, element
// by element. Host-only (numeric/ and problem/ headers): the GPU suites and the emulator tier can share
// it. The rules (those of tests/device/test_fp8_io.cu, which predates this header):
//   * outputs are poisoned before a launch with output_poison_byte (NaN in every element of the
//     format), group scales with 0xFF bytes (NaN);
//   * a per-group output's scales are checked first (the elements decode with them):
//     group_scale_matches against reference::output_group_scales;
//   * an fp8 element decodes as code * the scale it was written with (the per-tensor scale, or the
//     kernel's own group scale) and must lie within |got - want| <= atol + rtol |want|, with the 16-bit
//     tolerance of the instance's type plus half an fp8 step (rtol + 2^-4) and half the format's
//     smallest subnormal times the scale (atol); a reference value past the format's range (|want| /
//     scale > max (1 + rtol)) must be the saturated +-max; a NaN one NaN.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hipattn/numeric/numeric.hpp"
#include "hipattn/problem/fp8_io.hpp"

namespace hipattn::testing {

// A byte whose repetition is NaN in every element of `d` (e4m3fnuz's only NaN is 0x80; 0xFF is -240
// there; 0xFFFF is a NaN of fp16 and bf16).
inline uint8_t output_poison_byte(DType d) { return d == DType::fp8_e4m3fnuz ? 0x80 : 0xFF; }

// Element i of a raw output of dtype `d` (fp16, bf16 or fp8; little-endian bytes), unscaled.
inline double decode_output(DType d, const uint8_t* raw, size_t i) {
  switch (d) {
    case DType::fp8_e4m3fn: return fp8_e4m3fn_t::from_bits(raw[i]).to_float();
    case DType::fp8_e4m3fnuz: return fp8_e4m3fnuz_t::from_bits(raw[i]).to_float();
    default: {
      uint16_t b;
      std::memcpy(&b, raw + 2 * i, 2);
      return d == DType::bf16 ? bfloat16_t::from_bits(b).to_float() : half_t::from_bits(b).to_float();
    }
  }
}

// Whether all bytes of element i of a raw output of dtype `d` still hold the poison.
inline bool output_poisoned(DType d, const uint8_t* raw, size_t i) {
  const size_t w = dtype_size(d);
  for (size_t k = 0; k < w; ++k)
    if (raw[i * w + k] != output_poison_byte(d)) return false;
  return true;
}

// The tolerance of an element of output dtype `out` written with `scale` (1 for 16-bit), from the
// 16-bit tolerance `base` of the instance's type (any {atol, rtol} aggregate).
template <class Tol>
Tol output_element_tolerance(Tol base, DType out, double scale) {
  if (!is_fp8(out)) return base;
  const double half_sub = out == DType::fp8_e4m3fnuz ? std::exp2(-11.0) : std::exp2(-10.0);
  return Tol{base.atol + half_sub * scale, base.rtol + 0.0625};
}

// Whether a kernel's group scale `got` matches the reference's `want`: within rtol (the 16-bit one:
// the kernel's float maximum of a group) plus `slack` (an absolute allowance on the scale, e.g. the
// error bound of the group's largest element / fp8_max where P is quantized), or for UE8M0 a power of
// two equal to want, or its neighbour when want lies at a power-of-two boundary (the float maximum may
// round across it).
inline bool group_scale_matches(double got, double want, bool ue8m0, double rtol, double slack = 0.0) {
  if (!ue8m0) return std::fabs(got - want) <= 1e-30 + rtol * want + slack;
  const double e = std::log2(got);
  const bool pow2 = std::isfinite(e) && e == std::floor(e);
  const double raw = std::log2(std::max(want, 1e-30));
  return pow2 && (got == want || (std::fabs(raw - std::round(raw)) < 0.03 && (got == want * 2 || got == want / 2)));
}

// The verdict on one decoded element `got` (code * scale) against the reference `want`.
struct OutputElementCheck {
  bool ok = true;
  bool nan = false;        // the reference is NaN
  bool saturated = false;  // the reference lies past the fp8 format's range
  double err = 0.0;        // |got - want| (0 for NaN and saturated elements)
};
// extra_atol: an absolute allowance beyond the tolerance (e.g. the quantized-P bound of the fp8 matrix
// path, tests/device/test_fp8_io.cu).
template <class Tol>
OutputElementCheck check_output_element(DType out, Tol base, double got, double want, double scale,
                                        double extra_atol = 0.0) {
  OutputElementCheck c;
  if (std::isnan(want)) {
    c.nan = true;
    c.ok = std::isnan(got);
    return c;
  }
  if (is_fp8(out)) {
    const double format_max = fp8_max_finite(out);
    if (std::fabs(want) / scale > format_max * (1.0 + base.rtol)) {
      c.saturated = true;
      c.ok = std::fabs(got) == format_max * scale && std::signbit(got) == std::signbit(want);
      return c;
    }
  }
  const Tol tol = output_element_tolerance(base, out, scale);
  c.err = std::fabs(got - want);
  c.ok = c.err <= tol.atol + extra_atol + tol.rtol * std::fabs(want);
  return c;
}

}  // namespace hipattn::testing
