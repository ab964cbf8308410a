// hipattn/tile/register_transpose.hpp: 8 x 4 transposes of a thread's registers.
//
// The value cache of the ROCm layout (paged/paged_kv.hpp RocmKvLayout) holds a value's dimensions
// apart and its slots contiguous: an 8-byte load brings 4 slots of one 16-bit dimension, a 4-byte
// load 4 slots of one fp8 dimension. A thread loads 8 dimensions of the same 4 slots and transposes
// them here into 4 rows of 8 dimensions, the 16-byte chunks of the LDS value tile (fp8 rows are then
// converted to 16-bit). Written with shifts and masks only: the compilers turn them into byte
// permutes (sm_90 prmt, CDNA v_perm_b32 / v_and_or_b32); host-callable, so tests check them on the
// host. The loops have constant trip counts over register arrays: the device compilers unroll them.
#pragma once
#include <cstdint>

#include "hipattn/numeric/vec.hpp"
#include "hipattn/platform/config.hpp"

namespace hipattn {

namespace detail {
// The low (kHigh false) or high 16-bit halves of a and b as one word: a's in the low half.
template <bool kHigh>
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE uint32_t pair_halves(uint32_t a, uint32_t b) {
  if constexpr (kHigh) return (a >> 16) | (b & 0xFFFF0000u);
  else return (a & 0x0000FFFFu) | (b << 16);
}
// Bytes j and j + 1 of a and b interleaved: a_j, b_j, a_{j+1}, b_{j+1} (low byte first).
template <int kJ>
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE uint32_t interleave_bytes(uint32_t a, uint32_t b) {
  const uint32_t a0 = (a >> (8 * kJ)) & 0xFFu, a1 = (a >> (8 * kJ + 8)) & 0xFFu;
  const uint32_t b0 = (b >> (8 * kJ)) & 0xFFu, b1 = (b >> (8 * kJ + 8)) & 0xFFu;
  return a0 | (b0 << 8) | (a1 << 16) | (b1 << 24);
}
}  // namespace detail

// The 8 x 4 16-bit transpose, columns s and s + 1 (s = 0 or 2): in[k] holds row k's 4 elements
// (an 8-byte load, low half of each word first); out_s holds column s of the 8 rows, element k =
// in[k]'s element s. The kernels store each pair before forming the next, so only the loads and one
// pair are live.
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE void transpose8x4_b16_pair(const u32x2 (&in)[8], int s, u32x4& out_s,
                                                                   u32x4& out_s1) {
  uint32_t lo[4], hi[4];
  for (int w = 0; w < 4; ++w) {
    const uint32_t a = s < 2 ? in[2 * w].x : in[2 * w].y, b = s < 2 ? in[2 * w + 1].x : in[2 * w + 1].y;
    lo[w] = detail::pair_halves<false>(a, b);
    hi[w] = detail::pair_halves<true>(a, b);
  }
  out_s = u32x4{lo[0], lo[1], lo[2], lo[3]};
  out_s1 = u32x4{hi[0], hi[1], hi[2], hi[3]};
}

// The 8 x 4 byte transpose, columns s and s + 1 (s = 0 or 2): in[k] holds row k's 4 bytes (a 4-byte
// load); out_s holds column s of the 8 rows, byte k = in[k]'s byte s. Two steps: rows 2i and 2i + 1
// interleaved into 16-bit pairs, then the pairs' halves as above.
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE void transpose8x4_b8_pair(const uint32_t (&in)[8], int s, u32x2& out_s,
                                                                  u32x2& out_s1) {
  uint32_t t[4];  // t[i]: columns s and s + 1 of rows 2i (low byte) and 2i + 1
  for (int i = 0; i < 4; ++i)
    t[i] = s == 0 ? detail::interleave_bytes<0>(in[2 * i], in[2 * i + 1]) : detail::interleave_bytes<2>(in[2 * i], in[2 * i + 1]);
  out_s = u32x2{detail::pair_halves<false>(t[0], t[1]), detail::pair_halves<false>(t[2], t[3])};
  out_s1 = u32x2{detail::pair_halves<true>(t[0], t[1]), detail::pair_halves<true>(t[2], t[3])};
}

// The whole transposes (out[s] = column s), for tests and callers with registers to spare.
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE void transpose8x4_b16(const u32x2 (&in)[8], u32x4 (&out)[4]) {
  transpose8x4_b16_pair(in, 0, out[0], out[1]);
  transpose8x4_b16_pair(in, 2, out[2], out[3]);
}
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE void transpose8x4_b8(const uint32_t (&in)[8], u32x2 (&out)[4]) {
  transpose8x4_b8_pair(in, 0, out[0], out[1]);
  transpose8x4_b8_pair(in, 2, out[2], out[3]);
}

}  // namespace hipattn
