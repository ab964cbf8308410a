// hipattn/numeric/fp16.hpp: half_t, IEEE 754 binary16 storage type with exact float conversions.
//
// Format: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Max finite 65504, min normal 2^-14,
// min subnormal 2^-24, has +-inf, NaNs, -0.
//
// Conversion rules (bit-exact, the same on host and device; no hardware intrinsics here):
//   float -> half_t (from_float):
//     * round to nearest, ties to even (RNE), including into and within the subnormal range;
//       magnitudes <= 2^-25 (half the smallest subnormal) become +-0 with the sign kept.
//     * overflow goes to +-inf: |x| >= 65520 (the midpoint of 65504 and 2^16) -> +-inf,
//       anything below rounds to a finite value (65519.99 -> 65504). +-inf -> +-inf.
//     * NaN -> quiet NaN: sign kept, the top 9 payload bits kept, quiet bit (0x0200) set.
//   half_t -> float (to_float): exact for every code. NaN codes give a quiet float NaN with the
//     sign and the 10 payload bits kept (quiet bit set).
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

// IEEE binary16 value held as its 16 raw bits.
struct half_t {
  uint16_t bits;

  // The value whose encoding is `b` (no conversion).
  HIPATTN_HOST_DEVICE static constexpr half_t from_bits(uint32_t b) {
    return half_t{static_cast<uint16_t>(b)};
  }

  // float -> binary16, round-to-nearest-even, overflow to +-inf (rules at the top of the file).
  HIPATTN_HOST_DEVICE static constexpr half_t from_float(float f) {
    const uint32_t x = __builtin_bit_cast(uint32_t, f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) {  // NaN: keep top payload bits, force quiet
      return from_bits(sign | 0x7e00u | ((ax >> 13) & 0x03ffu));
    }
    if (ax >= 0x477ff000u) return from_bits(sign | 0x7c00u);  // >= 65520 (incl. inf) -> inf
    if (ax >= 0x38800000u) {                                   // >= 2^-14: normal result
      const uint32_t r = ax - (112u << 23);                     // rebias 127 -> 15
      const uint32_t rounded = (r + 0x0fffu + ((r >> 13) & 1u)) >> 13;  // RNE, may carry into exp
      return from_bits(sign | rounded);
    }
    if (ax <= 0x33000000u) return from_bits(sign);  // <= 2^-25: rounds to (signed) zero
    // Subnormal result: code = M * 2^(e - 126) with M the 24-bit significand; shift in [14, 24].
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x007fffffu) | 0x00800000u;
    const uint32_t shift = 126u - e;
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;  // may become 0x400 = min normal: correct
    return from_bits(sign | q);
  }

  // Exact binary16 -> float.
  HIPATTN_HOST_DEVICE constexpr float to_float() const {
    const uint32_t h = bits;
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu;
    const uint32_t m = h & 0x03ffu;
    if (e == 0x1fu) {  // inf / NaN
      const uint32_t quiet = m ? 0x00400000u : 0u;
      return __builtin_bit_cast(float, sign | 0x7f800000u | quiet | (m << 13));
    }
    if (e == 0) {  // zero / subnormal: m * 2^-24 is exact in float (and a normal float)
      const float mag = static_cast<float>(m) * 5.9604644775390625e-8f;  // 2^-24
      return __builtin_bit_cast(float, sign | __builtin_bit_cast(uint32_t, mag));
    }
    return __builtin_bit_cast(float, sign | ((e + 112u) << 23) | (m << 13));
  }

  HIPATTN_HOST_DEVICE explicit constexpr operator float() const { return to_float(); }
};

// half_t -> float (exact).
HIPATTN_HOST_DEVICE constexpr float to_float(half_t x) { return x.to_float(); }

// float -> T, one explicit specialization per numeric type (declared again by each type's header).
template <class T>
HIPATTN_HOST_DEVICE constexpr T from_float(float f);

template <>
HIPATTN_HOST_DEVICE constexpr half_t from_float<half_t>(float f) {
  return half_t::from_float(f);
}

}  // namespace hipattn
