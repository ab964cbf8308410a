// hipattn/kernels/common/output_store.hpp: how the epilogues write the output, in every format of
// problem/fp8_io.hpp's OutputFormat (ALGORITHM.md section 12):
//   16-bit    O packed to fp16 or bf16
//   fp8       saturate(O * m) with m = 1 / scale (per tensor), by Arch::fp8x2: RNE, satfinite, NaN kept
//             NaN (numeric/fp8.hpp's rules; sm_90's cvt.rn.satfinite for e4m3fn), the reference's rounding
//   fp8/group each group of group_size columns of a row: s = max(max |O|, 1e-10) / fp8_max (UE8M0:
//             the next power of two), written beside the output, then saturate(O / s)
// The output kind is a runtime value of the arguments (uniform for a launch), so one instance serves
// every output format; a 16-bit output is of the instance's type (kBf16). Two entry shapes: the attention epilogue (a warp tile's fragments, the group
// maximum by the tile's own row reduction: WT::row_max over the lanes that share a row) and the
// split-KV reduces (4 adjacent columns a thread, the group maximum over group_size / 4 adjacent lanes:
// Arch::group_max). output_columns gives a warp that holds a column slice of O (MLA decode's wgmma
// consumers, 256 of 512 columns each) the arguments of its slice.
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/numeric/fp8.hpp"
#include "hipattn/platform/config.hpp"

namespace hipattn {

enum class OutKind : uint8_t { f16, bf16, e4m3fn, e4m3fnuz };

// The output of a launch (filled on the host by dispatch/output_args.hpp).
struct OutputArgs {
  void* ptr = nullptr;  // [tokens, num_q_heads, d_v] by the strides (elements of `kind`)
  int32_t stride_token = 0, stride_head = 0;
  OutKind kind = OutKind::f16;
  bool group_ue8m0 = false;
  int32_t group_shift = -1;             // fp8 per group: log2(group_size); -1: per tensor (or 16-bit)
  int32_t groups_per_head = 0;          // d_v / group_size
  const float* scale_tensor = nullptr;  // fp8 per tensor: the scale on the device, or scale_value
  float scale_value = 1.f;
  float group_fp8_max = 448.f;
  float* group_scale = nullptr;         // [tokens, num_q_heads * groups_per_head] by the strides
  int64_t group_scale_stride_token = 0, group_scale_stride_group = 0;
};

// Bytes of one output element of `kind`.
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE constexpr int out_elem_bytes(OutKind kind) {
  return kind == OutKind::e4m3fn || kind == OutKind::e4m3fnuz ? 1 : 2;
}

// `o` whose column 0 is column col0 of `o`: the output pointer moves by col0 elements of the output's
// type, a per-group output's scale pointer by col0 / group_size groups (group g of the window is group
// col0 / group_size + g of the row). The strides and groups_per_head of the whole row are kept, so the
// row-wide helpers (output_offset, group_scale_offset) address the window's columns and scales where
// the whole row's would be. col0 must be a multiple of the group size: no group straddles two windows,
// so each window's holder finds its groups' maxima alone.
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE OutputArgs output_columns(OutputArgs o, int col0) {
  o.ptr = static_cast<uint8_t*>(o.ptr) + static_cast<int64_t>(col0) * out_elem_bytes(o.kind);
  if (o.group_shift >= 0) o.group_scale += static_cast<int64_t>(col0 >> o.group_shift) * o.group_scale_stride_group;
  return o;
}

#if defined(HIPATTN_HAS_DEVICE)

HIPATTN_DEVICE HIPATTN_FORCEINLINE bool out_is_fp8(const OutputArgs& o) {
  return o.kind == OutKind::e4m3fn || o.kind == OutKind::e4m3fnuz;
}

// The factor O is multiplied by before the store: 1 / scale for a per-tensor fp8 output, else 1.
HIPATTN_DEVICE HIPATTN_FORCEINLINE float output_multiplier(const OutputArgs& o) {
  if (!out_is_fp8(o) || o.group_shift >= 0) return 1.f;
  return 1.f / (o.scale_tensor != nullptr ? *o.scale_tensor : o.scale_value);
}

// The scale of a group whose largest magnitude is `amax`.
HIPATTN_DEVICE HIPATTN_FORCEINLINE float output_group_scale(const OutputArgs& o, float amax) {
  const float s = fmaxf(amax, 1e-10f) / o.group_fp8_max;
  if (!o.group_ue8m0) return s;
  // the smallest power of two >= s (s is a positive normal float here)
  const uint32_t b = __builtin_bit_cast(uint32_t, s);
  return __builtin_bit_cast(float, (b & 0x007fffffu) != 0u ? (b & 0xff800000u) + 0x00800000u : b);
}

// The element offset of (token, head, column) in the output, and of (token, head, group) in the
// group scales.
HIPATTN_DEVICE HIPATTN_FORCEINLINE int64_t output_offset(const OutputArgs& o, int32_t token, int32_t head, int col) {
  return static_cast<int64_t>(token) * o.stride_token + static_cast<int64_t>(head) * o.stride_head + col;
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE int64_t group_scale_offset(const OutputArgs& o, int32_t token, int32_t head, int g) {
  return static_cast<int64_t>(token) * o.group_scale_stride_token +
         (static_cast<int64_t>(head) * o.groups_per_head + g) * o.group_scale_stride_group;
}

// Two fp8 codes (low byte a) of the output's format: one e4m3fn conversion (Arch::fp8x2) whatever the
// format, e4m3fnuz as the e4m3fn code of 2x with its fix-ups (numeric/fp8.hpp), so that the unrolled
// stores carry one encoder, not two.
template <class Arch>
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t out_fp8x2(const OutputArgs& o, float a, float b) {
  const bool fnuz = o.kind == OutKind::e4m3fnuz;
  const float m = fnuz ? 2.f : 1.f;
  const uint32_t c = Arch::template fp8x2<false>(a * m, b * m);
  if (!fnuz) return c;
  return fp8_e4m3fnuz_bits_from_fn2x(a, c & 0xffu) | (fp8_e4m3fnuz_bits_from_fn2x(b, (c >> 8) & 0xffu) << 8);
}

// Two adjacent columns (already scaled) at element offset `off`: 16-bit outputs are of the instance's
// type (kBf16; problem/fp8_io.hpp), fp8 ones converted by out_fp8x2 (RNE, satfinite, NaN kept).
template <class Arch, bool kBf16>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void store_out2(const OutputArgs& o, int64_t off, float a, float b) {
  if (out_is_fp8(o))
    *reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(o.ptr) + off) = static_cast<uint16_t>(out_fp8x2<Arch>(o, a, b));
  else
    *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(o.ptr) + off) = Arch::template pack2<kBf16>(a, b);
}

// Four adjacent columns (already scaled) at element offset `off`.
template <class Arch, bool kBf16>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void store_out4(const OutputArgs& o, int64_t off, const float (&v)[4]) {
  if (out_is_fp8(o))
    *reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(o.ptr) + off) =
        out_fp8x2<Arch>(o, v[0], v[1]) | (out_fp8x2<Arch>(o, v[2], v[3]) << 16);
  else
    *reinterpret_cast<uint2*>(static_cast<uint16_t*>(o.ptr) + off) =
        make_uint2(Arch::template pack2<kBf16>(v[0], v[1]), Arch::template pack2<kBf16>(v[2], v[3]));
}

// The reduces' store: columns [c4, c4 + 4) of (token, head), normalized, from the thread c4 / 4 of
// an item whose d_v / 4 threads are adjacent lanes, all active. A per-group output takes the group's
// maximum over its group_size / 4 lanes; the group's first lane writes the scale.
template <class Arch, bool kBf16>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void store_output_cols4(const OutputArgs& o, int32_t token, int32_t head, int c4,
                                                           float (&v)[4]) {
  const int64_t off = output_offset(o, token, head, c4);
  if (o.group_shift < 0) {
    const float m = output_multiplier(o);
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] *= m;
    store_out4<Arch, kBf16>(o, off, v);
    return;
  }
  float amax = 0.f;
#pragma unroll
  for (int k = 0; k < 4; ++k) amax = fmaxf(amax, fabsf(v[k]));  // fmaxf drops a NaN
  amax = Arch::group_max(amax, (1 << o.group_shift) / 4);
  const float s = output_group_scale(o, amax);
  const float inv = 1.f / s;
#pragma unroll
  for (int k = 0; k < 4; ++k) v[k] *= inv;
  store_out4<Arch, kBf16>(o, off, v);
  if ((c4 & ((1 << o.group_shift) - 1)) == 0) o.group_scale[group_scale_offset(o, token, head, c4 >> o.group_shift)] = s;
}

#endif  // HIPATTN_HAS_DEVICE

}  // namespace hipattn
