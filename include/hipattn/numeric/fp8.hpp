// hipattn/numeric/fp8.hpp: the two 8-bit E4M3 float storage types (OCP "fn" and AMD "fnuz").
//
// fp8_e4m3fn_t (OCP FP8 E4M3, NVIDIA sm_89+/sm_90, AMD gfx950):
//   1 sign, 4 exponent (bias 7), 3 mantissa bits. No infinities. NaN = S.1111.111 (0x7f, 0xff).
//   Max finite 448 (0x7e), min normal 2^-6, min subnormal 2^-9, has -0 (0x80).
// fp8_e4m3fnuz_t (AMD gfx942 "fnuz" = finite, no negative zero):
//   1 sign, 4 exponent (bias 8), 3 mantissa bits. No infinities. The single NaN is 0x80.
//   Max finite 240 (0x7f), min normal 2^-7, min subnormal 2^-10, zero is 0x00 only.
//
// Conversion rules (bit-exact, the same on host and device; no hardware intrinsics here):
//   float -> fp8 (from_float) is "satfinite", as used by hardware for KV-cache quantization:
//     * round to nearest, ties to even (RNE), including into and within the subnormal range.
//     * saturation: any finite |x| above max finite, and +-inf, give +-max (448 / 240). (Below the
//       rounding midpoint above max, RNE gives max anyway, so the result is simply clamped.)
//     * fn:   NaN -> 0x7f, or 0xff when the float NaN has its sign bit set (sign is kept).
//             -0 and negative values rounding to zero -> 0x80 (-0).
//     * fnuz: NaN (either sign) -> 0x80. -0 and every value rounding to zero -> 0x00.
//   fp8 -> float (to_float): exact for all 256 codes. fn NaN codes give a quiet float NaN with the
//     code's sign; fnuz 0x80 gives +quiet NaN (0x7fc00000).
// from_float_nonsat is not provided (both formats have no infinity to overflow to).
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

namespace detail {

// |float| (as bits, finite, not NaN) -> magnitude code of a small float with MB mantissa bits and
// exponent bias BIAS, RNE. The caller handles saturation (it clamps |x| to max first) and NaN.
template <int MB, int BIAS>
HIPATTN_HOST_DEVICE constexpr uint32_t f32_abs_to_mini(uint32_t ax) {
  constexpr uint32_t kMinNormal = static_cast<uint32_t>(128 - BIAS) << 23;  // 2^(1-BIAS) as bits
  constexpr uint32_t kDrop = 23u - MB;
  if (ax >= kMinNormal) {  // normal result (a carry into the exponent field is still correct)
    const uint32_t r = ax - (static_cast<uint32_t>(127 - BIAS) << 23);
    return (r + ((1u << (kDrop - 1u)) - 1u) + ((r >> kDrop) & 1u)) >> kDrop;
  }
  // Subnormal (or zero) result: code = M * 2^(e - (151 - BIAS - MB)), M the 24-bit significand.
  const uint32_t e = ax >> 23;
  constexpr uint32_t kShiftBase = 151u - BIAS - MB;
  if (e == 0 || kShiftBase - e > 24u) return 0;  // below half the min subnormal: zero
  const uint32_t m = (ax & 0x007fffffu) | 0x00800000u;
  const uint32_t shift = kShiftBase - e;  // >= 24 - MB here
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;  // may become 1 << MB = min normal: correct
  return q;
}

// Finite, non-NaN magnitude code (sign stripped) of a small float -> float bits (exact).
template <int MB, int BIAS>
HIPATTN_HOST_DEVICE constexpr uint32_t mini_abs_to_f32(uint32_t mag) {
  const uint32_t e = mag >> MB;
  const uint32_t m = mag & ((1u << MB) - 1u);
  if (e == 0) {  // zero / subnormal: m * 2^(1-BIAS-MB), exact and a normal float
    constexpr float kUnit = __builtin_bit_cast(float, static_cast<uint32_t>(128 - BIAS - MB) << 23);
    return __builtin_bit_cast(uint32_t, static_cast<float>(m) * kUnit);
  }
  return ((e + static_cast<uint32_t>(127 - BIAS)) << 23) | (m << (23u - MB));
}

}  // namespace detail

// fp8 code -> float for the kernels' dequantization: branchless (selects only) and exact for every
// code, and every intermediate is zero or a normal float, so a build that flushes denormals
// (-fgpu-flush-denormals-to-zero, --use_fast_math, DAZ on the host) gets the same results, fp8
// subnormals included. The 7 magnitude bits are placed with an exponent offset that makes
// f = 2^(e - bias) (1 + m / 8), a normal float for every e (e + 120 or e + 119 >= 119); for e = 0 the
// subnormal m * 2^(1 - bias - 3) is 2 (f - 2^-bias), exact (Sterbenz) and normal unless zero.
// NaN codes (e4m3fn S.1111.111, e4m3fnuz 0x80) give a quiet NaN.
template <bool kFnuz>
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE float fp8_e4m3_to_float_normal_only(uint32_t b) {
  constexpr uint32_t kOffset = kFnuz ? 119u : 120u;     // 127 - bias
  constexpr float kImplicit = kFnuz ? 0x1p-8f : 0x1p-7f;  // 2^-bias: the implicit one at e = 0
  const uint32_t mag = b & 0x7Fu;
  const float f = __builtin_bit_cast(float, (mag << 20) + (kOffset << 23));
  const float sub = 2.f * (f - kImplicit);
  const float v = mag < 8u ? sub : f;
  const float r = __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, v) | ((b & 0x80u) << 24));
  const bool nan = kFnuz ? b == 0x80u : mag == 0x7Fu;
  return nan ? __builtin_bit_cast(float, 0x7FC00000u) : r;
}

// OCP FP8 E4M3 ("e4m3fn") value held as its 8 raw bits.
struct fp8_e4m3fn_t {
  uint8_t bits;

  // The value whose encoding is `b` (no conversion).
  HIPATTN_HOST_DEVICE static constexpr fp8_e4m3fn_t from_bits(uint32_t b) {
    return fp8_e4m3fn_t{static_cast<uint8_t>(b)};
  }

  // float -> e4m3fn, RNE, saturating to +-448, NaN -> 0x7f | sign (rules at the top of the file).
  HIPATTN_HOST_DEVICE static constexpr fp8_e4m3fn_t from_float(float f) {
    const uint32_t x = __builtin_bit_cast(uint32_t, f);
    const uint32_t sign = (x >> 24) & 0x80u;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return from_bits(sign | 0x7fu);  // NaN
    if (ax >= 0x43e00000u) return from_bits(sign | 0x7eu);  // >= 448 (incl. inf): saturate
    return from_bits(sign | detail::f32_abs_to_mini<3, 7>(ax));
  }

  // Exact e4m3fn -> float.
  HIPATTN_HOST_DEVICE constexpr float to_float() const {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x80u) << 24;
    const uint32_t mag = bits & 0x7fu;
    if (mag == 0x7fu) return __builtin_bit_cast(float, sign | 0x7fc00000u);  // NaN
    return __builtin_bit_cast(float, sign | detail::mini_abs_to_f32<3, 7>(mag));
  }

  HIPATTN_HOST_DEVICE explicit constexpr operator float() const { return to_float(); }
};

// AMD FP8 E4M3 "fnuz" value held as its 8 raw bits.
struct fp8_e4m3fnuz_t {
  uint8_t bits;

  // The value whose encoding is `b` (no conversion).
  HIPATTN_HOST_DEVICE static constexpr fp8_e4m3fnuz_t from_bits(uint32_t b) {
    return fp8_e4m3fnuz_t{static_cast<uint8_t>(b)};
  }

  // float -> e4m3fnuz, RNE, saturating to +-240, NaN -> 0x80, no -0 (rules at the top of the file).
  HIPATTN_HOST_DEVICE static constexpr fp8_e4m3fnuz_t from_float(float f) {
    const uint32_t x = __builtin_bit_cast(uint32_t, f);
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return from_bits(0x80u);  // NaN
    uint32_t mag = ax >= 0x43700000u ? 0x7fu : detail::f32_abs_to_mini<3, 8>(ax);  // >= 240: sat
    if (mag == 0) return from_bits(0);  // no negative zero
    return from_bits(((x >> 24) & 0x80u) | mag);
  }

  // Exact e4m3fnuz -> float.
  HIPATTN_HOST_DEVICE constexpr float to_float() const {
    if (bits == 0x80u) return __builtin_bit_cast(float, 0x7fc00000u);  // NaN
    const uint32_t sign = static_cast<uint32_t>(bits & 0x80u) << 24;
    return __builtin_bit_cast(float, sign | detail::mini_abs_to_f32<3, 8>(bits & 0x7fu));
  }

  HIPATTN_HOST_DEVICE explicit constexpr operator float() const { return to_float(); }
};

// float -> e4m3fn bits with the rules of fp8_e4m3fn_t::from_float (RNE, satfinite, NaN 0x7f | sign, -0
// and negatives rounding to zero 0x80) and no branch: the kernels' output conversion where the
// hardware has none (tests/host/test_numeric.cpp compares the two over a sweep of the float bits).
// Normal results round the float's bits to 3 mantissa bits (a carry moves into the exponent) and
// rebias; below 2^-6 the code is rint(|x| * 2^9) (0 to 8, 8 being the smallest normal).
HIPATTN_HOST_DEVICE inline uint32_t fp8_e4m3fn_bits_branchless(float x) {
  const uint32_t b = __builtin_bit_cast(uint32_t, x);
  const uint32_t sign = (b >> 24) & 0x80u;
  const float ax = fminf(__builtin_bit_cast(float, b & 0x7fffffffu), 448.f);
  const uint32_t r = __builtin_bit_cast(uint32_t, ax);
  const uint32_t normal = ((r + 0x7ffffu + ((r >> 20) & 1u)) >> 20) - (120u << 3);
  const uint32_t sub = static_cast<uint32_t>(rintf(ax * 512.f));
  const uint32_t mag = ax < 0x1p-6f ? sub : normal;
  return (x != x) ? (sign | 0x7fu) : (sign | mag);
}

// e4m3fnuz bits of x from the e4m3fn bits of 2x (`fn2x`): an fnuz code is the fn code of twice its
// value (bias 8 against 7), except at its top (|x| > 232 rounds to 240 = 0x7f, where fn saturates to
// 0x7e), its NaN (0x80) and its zero (fn's -0, 0x80, is fnuz's NaN: zero is 0x00 only). Equal to
// fp8_e4m3fnuz_t::from_float(x) for every x.
HIPATTN_HOST_DEVICE inline uint32_t fp8_e4m3fnuz_bits_from_fn2x(float x, uint32_t fn2x) {
  if (x != x) return 0x80u;
  if (fabsf(x) > 232.f) return (fn2x & 0x80u) | 0x7fu;
  return fn2x == 0x80u ? 0u : fn2x;
}

// Four e4m3fn codes (byte i = code i) re-encoded as the e4m3fnuz codes of half their values: the same
// bits (an fnuz code is worth half the fn code of the same bits: biases 8 and 7), except fn's -0
// (0x80, fnuz's NaN) -> 0x00 and fn's NaNs (S.1111.111, fnuz's +-240) -> 0x80, fnuz's NaN. Exact for
// every code, and no branch (SWAR over the 4 bytes): gfx942's fp8 MFMA reads e4m3fnuz, so e4m3fn
// queries meet an e4m3fnuz cache through these codes with 2 folded into the score scale
// (numeric/kv_kind.hpp q8_query_factor). tests/host/test_numeric.cpp checks every code.
HIPATTN_HOST_DEVICE constexpr uint32_t fp8_e4m3fn_codes_as_fnuz_half(uint32_t x) {
  const uint32_t mag = x & 0x7F7F7F7Fu;                              // per byte: 0..0x7f, no carry below
  const uint32_t nan_hi = (mag + 0x01010101u) & 0x80808080u;         // bit 7 of each byte whose magnitude is 0x7f
  const uint32_t zero_hi = ~(mag + 0x7F7F7F7Fu) & 0x80808080u;       // bit 7 of each byte whose magnitude is 0
  const uint32_t nan_bytes = (nan_hi >> 7) * 0xFFu;                  // those bytes whole
  return (x & ~(zero_hi | nan_bytes)) | nan_hi;                      // -0 -> 0 (+0 unchanged), NaN -> 0x80
}

// fp8 -> float (exact).
HIPATTN_HOST_DEVICE constexpr float to_float(fp8_e4m3fn_t x) { return x.to_float(); }
HIPATTN_HOST_DEVICE constexpr float to_float(fp8_e4m3fnuz_t x) { return x.to_float(); }

// float -> T, one explicit specialization per numeric type (declared again by each type's header).
template <class T>
HIPATTN_HOST_DEVICE constexpr T from_float(float f);

template <>
HIPATTN_HOST_DEVICE constexpr fp8_e4m3fn_t from_float<fp8_e4m3fn_t>(float f) {
  return fp8_e4m3fn_t::from_float(f);
}
template <>
HIPATTN_HOST_DEVICE constexpr fp8_e4m3fnuz_t from_float<fp8_e4m3fnuz_t>(float f) {
  return fp8_e4m3fnuz_t::from_float(f);
}

}  // namespace hipattn
