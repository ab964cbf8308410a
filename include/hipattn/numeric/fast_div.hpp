// hipattn/numeric/fast_div.hpp: FastDivmod, unsigned 32-bit division by a runtime-constant divisor.
//
// Method (round-up magic number, Granlund & Montgomery 1994): for divisor d in [1, 2^32) let
// l = ceil(log2 d) and m = floor(2^32 * (2^l - d) / d) + 1 (fits in 32 bits since 2^l - d < d).
// Then for every n in [0, 2^32): n / d = (mulhi(n, m) + n) >> l, where the sum and shift are done
// in 64 bits so no overflow restriction on n applies (and l = 32 works for d > 2^31).
// d = 1 gives l = 0, m = 1; d = 2^k gives m = 1.
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

// Precomputed division by a fixed unsigned 32-bit divisor d (1 <= d < 2^32); exact for all n.
struct FastDivmod {
  uint32_t divisor = 1;
  uint32_t multiplier = 1;  // m above
  uint32_t shift = 0;       // l above

  constexpr FastDivmod() = default;

  // Precompute for divisor d. Precondition: d >= 1 (d == 0 is treated as 1).
  HIPATTN_HOST_DEVICE constexpr explicit FastDivmod(uint32_t d) : divisor(d == 0 ? 1u : d) {
    uint32_t l = 0;
    while ((uint64_t{1} << l) < divisor) ++l;  // l <= 32
    shift = l;
    multiplier = static_cast<uint32_t>(
        ((uint64_t{1} << 32) * ((uint64_t{1} << l) - divisor)) / divisor + 1u);
  }

  // n / d.
  HIPATTN_HOST_DEVICE constexpr uint32_t div(uint32_t n) const {
    const uint64_t hi = (static_cast<uint64_t>(n) * multiplier) >> 32;
    return static_cast<uint32_t>((hi + n) >> shift);
  }

  // q = n / d, r = n % d.
  HIPATTN_HOST_DEVICE constexpr void divmod(uint32_t n, uint32_t& q, uint32_t& r) const {
    q = div(n);
    r = n - q * divisor;
  }

  // n % d.
  HIPATTN_HOST_DEVICE constexpr uint32_t mod(uint32_t n) const { return n - div(n) * divisor; }
};

}  // namespace hipattn
