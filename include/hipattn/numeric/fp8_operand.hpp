// hipattn/numeric/fp8_operand.hpp: fp8 MFMA operands whose type names the encoding of their codes.
//
// One fp8 MFMA opcode reads e4m3fnuz on gfx942 and OCP e4m3fn on gfx950, so raw operand bits do not
// say how the hardware will read them. The CDNA fp8 atoms take Fp8Codes<format, n> and accept only
// the format their target reads; codes of the other format, or bare bits, do not compile
// (arch/cdna3/atoms.hpp, arch/cdna4/atoms.hpp; tests/isa/fp8_format_refusal.hip). Codes of the
// other format must be re-encoded first (their values differ: the exponent biases are 7 and 8).
#pragma once
#include <cstdint>
#include <type_traits>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/numeric/traits.hpp"
#include "hipattn/platform/config.hpp"

namespace hipattn {

// kCodes fp8 codes of format F (DType::fp8_e4m3fn or DType::fp8_e4m3fnuz), code e in byte e (bits
// [8e, 8e + 8) of the little-endian operand registers). Made only through from_bits / from_codes on
// the type, which names the format; there is no conversion from integers or between the formats.
template <DType F, int kCodes_>
class Fp8Codes {
  static_assert(is_fp8(F), "Fp8Codes: the format is DType::fp8_e4m3fn or DType::fp8_e4m3fnuz");
  static_assert(kCodes_ > 0 && kCodes_ % 4 == 0, "Fp8Codes: whole 32-bit registers");

 public:
  static constexpr DType kFormat = F;
  static constexpr int kCodes = kCodes_;
  using code_type = dtype_type_t<F>;  // fp8_e4m3fn_t or fp8_e4m3fnuz_t

  Fp8Codes() = default;

  // The codes whose bytes are those of `b`, read as format F (no conversion). Bits is any trivially
  // copyable type of kCodes bytes: uint64_t, a register vector (cdna4::i32x8), ...
  template <class Bits>
  HIPATTN_HOST_DEVICE static constexpr Fp8Codes from_bits(const Bits& b) {
    static_assert(sizeof(Bits) == kCodes && std::is_trivially_copyable_v<Bits>,
                  "Fp8Codes::from_bits: the bits are exactly kCodes bytes");
    return __builtin_bit_cast(Fp8Codes, b);
  }
  // The codes c[0], ..., c[kCodes - 1], already in format F.
  HIPATTN_HOST_DEVICE static constexpr Fp8Codes from_codes(const code_type (&c)[kCodes]) {
    Fp8Codes r;
    for (int w = 0; w < kCodes / 4; ++w)
      r.words_[w] = uint32_t{c[4 * w].bits} | uint32_t{c[4 * w + 1].bits} << 8 | uint32_t{c[4 * w + 2].bits} << 16 |
                    uint32_t{c[4 * w + 3].bits} << 24;
    return r;
  }

  // The same bytes as a Bits (an MFMA builtin's operand type).
  template <class Bits>
  HIPATTN_HOST_DEVICE constexpr Bits bits() const {
    static_assert(sizeof(Bits) == kCodes && std::is_trivially_copyable_v<Bits>,
                  "Fp8Codes::bits: the bits are exactly kCodes bytes");
    return __builtin_bit_cast(Bits, *this);
  }
  // Code e, 0 <= e < kCodes.
  HIPATTN_HOST_DEVICE constexpr code_type code(int e) const {
    return code_type::from_bits(words_[e / 4] >> (8 * (e % 4)));
  }

 private:
  uint32_t words_[kCodes / 4];
};

template <int kCodes>
using E4m3fnCodes = Fp8Codes<DType::fp8_e4m3fn, kCodes>;  // OCP e4m3fn: what gfx950's fp8 MFMAs read
template <int kCodes>
using E4m3fnuzCodes = Fp8Codes<DType::fp8_e4m3fnuz, kCodes>;  // e4m3fnuz: what gfx942's fp8 MFMAs read

// True when every T is Fp8Codes<F, kCodes> (the operand check of the atoms' refusing overloads).
template <DType F, int kCodes, class... T>
inline constexpr bool are_fp8_codes_v = (std::is_same_v<std::remove_cvref_t<T>, Fp8Codes<F, kCodes>> && ...);

}  // namespace hipattn
