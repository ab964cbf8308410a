// hipattn/kernels/common/loaders/dequant.hpp: the loaders' fp8 -> 16-bit conversion of a 16-byte chunk
// of codes (in registers, or from LDS into LDS), written once for every loader policy.
#pragma once
#include <cstdint>

#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/numeric/numeric.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/arch/arch.hpp"

namespace hipattn::detail {

// Dequantize 16 fp8 codes (one 16-byte chunk, in registers) into 16 16-bit values (two chunks).
template <KvKind kKv, bool kBf16, class Arch>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void dequant_regs16(const u32x4& raw, u32x4& lo, u32x4& hi) {
  // Arch::dequant_fp8x4: exact for every code, independent of denormal flushing (sm_90: the
  // hardware's e4m3 -> f16 conversion; CDNA: numeric/fp8.hpp's normal-only decode).
  const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
  uint32_t w[8];
#pragma unroll
  for (int k = 0; k < 4; ++k) Arch::template dequant_fp8x4<kKv, kBf16>(words[k], w[2 * k], w[2 * k + 1]);
  lo = u32x4{w[0], w[1], w[2], w[3]};
  hi = u32x4{w[4], w[5], w[6], w[7]};
}

// The same from a chunk in LDS into two chunks in LDS.
template <KvKind kKv, bool kBf16, class Arch>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void dequant_chunk16(const uint8_t* src, uint16_t* dst0, uint16_t* dst1) {
  const uint4 raw = *reinterpret_cast<const uint4*>(src);
  u32x4 lo, hi;
  dequant_regs16<kKv, kBf16, Arch>(u32x4{raw.x, raw.y, raw.z, raw.w}, lo, hi);
  *reinterpret_cast<uint4*>(dst0) = make_uint4(lo.x, lo.y, lo.z, lo.w);
  *reinterpret_cast<uint4*>(dst1) = make_uint4(hi.x, hi.y, hi.z, hi.w);
}

}  // namespace hipattn::detail
#endif  // HIPATTN_HAS_DEVICE
