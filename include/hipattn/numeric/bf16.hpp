// hipattn/numeric/bf16.hpp: bfloat16_t, the top 16 bits of an IEEE float, with exact conversions.
//
// Format: 1 sign, 8 exponent (bias 127), 7 mantissa bits. Max finite 0x7f7f = 3.3895314e38,
// min normal 2^-126, min subnormal 2^-133, has +-inf, NaNs, -0.
//
// Conversion rules (bit-exact, the same on host and device; no hardware intrinsics here):
//   float -> bfloat16_t (from_float):
//     * round to nearest, ties to even (RNE) on the dropped 16 bits. Because the encoding is
//       monotonic this is exact for normals, for float subnormals (bf16 subnormals and rounding
//       up into the min normal) and for the carry into the next binade.
//     * overflow goes to +-inf: |x| >= 0x7f7f8000 (midpoint of max finite and 2^128) -> +-inf.
//       +-inf -> +-inf.
//     * NaN -> quiet NaN: sign kept, the top 7 payload bits kept, quiet bit (0x0040) set.
//   bfloat16_t -> float (to_float): exact (bits << 16) for every code; NaN codes stay NaN
//     (signalling NaN codes decode to the same signalling float pattern).
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

// bfloat16 value held as its 16 raw bits.
struct bfloat16_t {
  uint16_t bits;

  // The value whose encoding is `b` (no conversion).
  HIPATTN_HOST_DEVICE static constexpr bfloat16_t from_bits(uint32_t b) {
    return bfloat16_t{static_cast<uint16_t>(b)};
  }

  // float -> bfloat16, round-to-nearest-even, overflow to +-inf (rules at the top of the file).
  HIPATTN_HOST_DEVICE static constexpr bfloat16_t from_float(float f) {
    const uint32_t x = __builtin_bit_cast(uint32_t, f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return from_bits((x >> 16) | 0x0040u);  // quiet NaN
    return from_bits((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }

  // Exact bfloat16 -> float.
  HIPATTN_HOST_DEVICE constexpr float to_float() const {
    return __builtin_bit_cast(float, static_cast<uint32_t>(bits) << 16);
  }

  HIPATTN_HOST_DEVICE explicit constexpr operator float() const { return to_float(); }
};

// bfloat16_t -> float (exact).
HIPATTN_HOST_DEVICE constexpr float to_float(bfloat16_t x) { return x.to_float(); }

// float -> T, one explicit specialization per numeric type (declared again by each type's header).
template <class T>
HIPATTN_HOST_DEVICE constexpr T from_float(float f);

template <>
HIPATTN_HOST_DEVICE constexpr bfloat16_t from_float<bfloat16_t>(float f) {
  return bfloat16_t::from_float(f);
}

}  // namespace hipattn
