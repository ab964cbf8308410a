// hipattn/arch/cdna3/atoms.hpp: CDNA3 (gfx942, MI300) wavefront MFMA atoms, LDS reads and lane ops.
//
// Every atom states its lane layout as constexpr host+device functions: for lane l (0..63 of a
// wave64) and register element e, which (row, col) of A (M x K), B (K x N, returned as {k, n}) or
// C (M x N) it holds. All gfx9 MFMA layouts are one pattern (AMD Matrix Instruction Calculator, gfx9
// input/output register formulas; CK Tile's warp_gemm_attribute_mfma_impl kAMLane / kABKLane /
// kABKPerLane / kCMLane / kCM0PerLane constants agree): with G = 64 / M lane groups and
// P = K / G elements per lane,
//   A (M x K):  row = l % M,  k = P * (l / M) + e                       e in [0, P)
//   B (K x N):  k = P * (l / N) + e,  n = l % N                         e in [0, P)
//   C (M x N, f32):  row = 4G * (e / 4) + 4 * (l / M) + (e % 4),  col = l % N    e in [0, M*N/64)
// so for the shapes used here:
//   32x32x8  f16/bf16 (P = 4):  A row = l % 32, k = 4 * (l / 32) + e;  C row = 8 * (e / 4) + 4 * (l / 32) + e % 4
//   16x16x16 f16/bf16 (P = 4):  A row = l % 16, k = 4 * (l / 16) + e;  C row = 4 * (l / 16) + e
//   32x32x16 fp8      (P = 8):  A row = l % 32, k = 8 * (l / 32) + e   (8 codes in one b64)
//   16x16x32 fp8      (P = 8):  A row = l % 16, k = 8 * (l / 16) + e
// Element e of A/B sits in bits [16e, 16e + 16) (16-bit types) or [8e, 8e + 8) (fp8) of the
// operand; element e of C is the e-th float of the accumulator vector. gfx942's fp8 MFMAs read
// e4m3fnuz (bias 8), and the fp8 atoms here take E4m3fnuzCodes (numeric/fp8_operand.hpp) only; the
// same opcodes read OCP e4m3fn on gfx950, so a gfx950 pass refuses them (cdna4 wraps them for e4m3fn).
//
// LDS: 16-byte row reads (ds_read_b128) and, since gfx942 has no transposing LDS read, a 4-element
// column gather from a row-major 16-bit tile (4 x ds_read_u16 packed into two VGPRs).
// Lane ops: a butterfly over lane-id bit 4 uses ds_swizzle (bit-mask mode, within 32 lanes) and
// over bit 5 ds_bpermute (gfx942 has no DPP / swizzle mode that exchanges the 32-lane halves).
#pragma once
#include <cstdint>

#include "hipattn/numeric/fp8_operand.hpp"
#include "hipattn/platform/config.hpp"

#if defined(HIPATTN_BACKEND_HIP)
#include <hip/hip_runtime.h>
#endif

namespace hipattn::cdna3 {

struct LaneElem {
  int row, col;
};

// ---- layouts (host + device, constexpr) ----
// The gfx9 MFMA lane layout of an M x M x K instruction (one block, wave64).
template <int kM_, int kK_, int kElemBits_>
struct MfmaLayout {
  static constexpr int kM = kM_, kN = kM_, kK = kK_;
  static constexpr int kGroups = 64 / kM;        // lane groups along K
  static constexpr int kPerLane = kK / kGroups;  // A / B elements per lane
  static constexpr int kElemBits = kElemBits_;
  static constexpr int kAElems = kPerLane, kBElems = kPerLane, kCElems = kM * kM / 64;
  static_assert(kGroups * kM == 64 && kPerLane * kGroups == kK && kPerLane * kElemBits % 32 == 0,
                "an MFMA operand is a whole number of VGPRs per lane");
  HIPATTN_HOST_DEVICE static constexpr LaneElem a(int lane, int e) { return {lane % kM, kPerLane * (lane / kM) + e}; }
  // B as (k, n)
  HIPATTN_HOST_DEVICE static constexpr LaneElem b(int lane, int e) { return {kPerLane * (lane / kM) + e, lane % kM}; }
  HIPATTN_HOST_DEVICE static constexpr LaneElem c(int lane, int e) {
    return {4 * kGroups * (e / 4) + 4 * (lane / kM) + (e % 4), lane % kM};
  }
};

using Mfma32x32x8Layout = MfmaLayout<32, 8, 16>;       // v_mfma_f32_32x32x8_{f16,bf16}
using Mfma16x16x16Layout = MfmaLayout<16, 16, 16>;     // v_mfma_f32_16x16x16_{f16,bf16}
using Mfma32x32x16Fp8Layout = MfmaLayout<32, 16, 8>;   // v_mfma_f32_32x32x16_fp8_fp8
using Mfma16x16x32Fp8Layout = MfmaLayout<16, 32, 8>;   // v_mfma_f32_16x16x32_fp8_fp8

#if defined(HIPATTN_BACKEND_HIP)
// ---- register vector types ----
typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef float f32x16 __attribute__((ext_vector_type(16)));
typedef short b16x4 __attribute__((ext_vector_type(4)));  // 4 x 16-bit (f16 or bf16 bits)
typedef short b16x8 __attribute__((ext_vector_type(8)));  // 8 x 16-bit: one 16-byte LDS chunk
typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 f16x2 __attribute__((ext_vector_type(2)));
typedef float f32x2 __attribute__((ext_vector_type(2)));
typedef uint32_t u32x4 __attribute__((ext_vector_type(4)));  // 16 bytes (a copy chunk)
typedef uint32_t u32x2 __attribute__((ext_vector_type(2)));  // 8 bytes

// Generic pointers into LDS / global memory as their address-space pointers, so that the compiler
// emits ds_* / global_* instructions even where it cannot infer the address space.
template <class T>
using lds_ptr = __attribute__((address_space(3))) T*;
template <class T>
using global_ptr = __attribute__((address_space(1))) T*;
template <class T>
HIPATTN_DEVICE HIPATTN_FORCEINLINE lds_ptr<T> to_lds(T* p) { return (lds_ptr<T>)p; }
template <class T>
HIPATTN_DEVICE HIPATTN_FORCEINLINE global_ptr<T> to_global(T* p) { return (global_ptr<T>)p; }

// ---- atoms (device) ----
// D = A * B + C, 16-bit inputs (f16, or bf16 when kBf16), f32 accumulate. Layouts above.
template <bool kBf16>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mfma_16x16x16(f32x4& c, b16x4 a, b16x4 b) {
  if constexpr (kBf16) c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
  else c = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(f16x4, a), __builtin_bit_cast(f16x4, b), c, 0, 0, 0);
}
template <bool kBf16>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mfma_32x32x8(f32x16& c, b16x4 a, b16x4 b) {
  if constexpr (kBf16) c = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, 0, 0, 0);
  else c = __builtin_amdgcn_mfma_f32_32x32x8f16(__builtin_bit_cast(f16x4, a), __builtin_bit_cast(f16x4, b), c, 0, 0, 0);
}
// fp8 x fp8, f32 accumulate: 8 codes per lane (a b64, element e in bits [8e, 8e + 8)). Both read
// e4m3fnuz (gfx942) and take E4m3fnuzCodes<8>. Other operands (e4m3fn codes, bare bits) and any
// gfx950 pass, where these opcodes read OCP e4m3fn, fail to compile in the overload below them.
#if !defined(HIPATTN_TARGET_GFX950)
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mfma_16x16x32_fp8(f32x4& c, E4m3fnuzCodes<8> a, E4m3fnuzCodes<8> b) {
  c = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a.bits<long>(), b.bits<long>(), c, 0, 0, 0);
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mfma_32x32x16_fp8(f32x16& c, E4m3fnuzCodes<8> a, E4m3fnuzCodes<8> b) {
  c = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(a.bits<long>(), b.bits<long>(), c, 0, 0, 0);
}
#endif
template <class A, class B>
HIPATTN_DEVICE void mfma_16x16x32_fp8(f32x4&, A, B) {
  static_assert(!are_fp8_codes_v<DType::fp8_e4m3fnuz, 8, A, B>,
                "cdna3::mfma_16x16x32_fp8 is refused on gfx950, which reads its opcode as OCP e4m3fn: "
                "use cdna4::mfma_16x16x32_fp8 with E4m3fnCodes<8>");
  static_assert(are_fp8_codes_v<DType::fp8_e4m3fnuz, 8, A, B>,
                "cdna3::mfma_16x16x32_fp8 reads e4m3fnuz: pass E4m3fnuzCodes<8> "
                "(re-encode e4m3fn codes; wrap bare bits by E4m3fnuzCodes<8>::from_bits)");
}
template <class A, class B>
HIPATTN_DEVICE void mfma_32x32x16_fp8(f32x16&, A, B) {
  static_assert(!are_fp8_codes_v<DType::fp8_e4m3fnuz, 8, A, B>,
                "cdna3::mfma_32x32x16_fp8 is refused on gfx950, which reads its opcode as OCP e4m3fn: "
                "use cdna4::mfma_32x32x16_fp8 with E4m3fnCodes<8>");
  static_assert(are_fp8_codes_v<DType::fp8_e4m3fnuz, 8, A, B>,
                "cdna3::mfma_32x32x16_fp8 reads e4m3fnuz: pass E4m3fnuzCodes<8> "
                "(re-encode e4m3fn codes; wrap bare bits by E4m3fnuzCodes<8>::from_bits)");
}

// ---- scheduling ----
// No instruction is moved across this point by the compiler's scheduler (s_sched_barrier 0): bounds
// how far LDS reads are hoisted ahead of the MFMAs that use them, where hoisting them all would hold
// more operands than the register file (MLA's 576-deep QK^T and 512-column P V).
HIPATTN_DEVICE HIPATTN_FORCEINLINE void sched_fence() { __builtin_amdgcn_sched_barrier(0); }

// ---- LDS reads ----
// 16 bytes (8 x 16-bit) at a 16-byte-aligned LDS address: ds_read_b128.
HIPATTN_DEVICE HIPATTN_FORCEINLINE b16x8 lds_read_b128(const uint16_t* p) {
  return *to_lds(reinterpret_cast<const b16x8*>(p));
}
// 8 bytes at an 8-byte-aligned LDS address: ds_read_b64 (an fp8 MFMA operand of 8 codes).
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint64_t lds_read_b64(const uint16_t* p) {
  return *to_lds(reinterpret_cast<const uint64_t*>(p));
}
// Four 16-bit values at four LDS addresses (a column of a row-major tile), element j from p[j].
HIPATTN_DEVICE HIPATTN_FORCEINLINE b16x4 lds_gather4_b16(const uint16_t* p0, const uint16_t* p1, const uint16_t* p2,
                                                         const uint16_t* p3) {
  b16x4 r;
  r[0] = static_cast<short>(*to_lds(p0));
  r[1] = static_cast<short>(*to_lds(p1));
  r[2] = static_cast<short>(*to_lds(p2));
  r[3] = static_cast<short>(*to_lds(p3));
  return r;
}

// ---- lane ops ----
HIPATTN_DEVICE HIPATTN_FORCEINLINE int lane_id() { return static_cast<int>(threadIdx.x) & 63; }

// The value of lane (l ^ 16): ds_swizzle in bit-mask mode (and 0x1f, or 0, xor 0x10).
HIPATTN_DEVICE HIPATTN_FORCEINLINE float swap_xor16(float v) {
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_swizzle(__builtin_bit_cast(int, v), 0x401f));
}
// The value of lane (l ^ 32): ds_bpermute (byte address of the source lane).
HIPATTN_DEVICE HIPATTN_FORCEINLINE float swap_xor32(float v) {
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane_id() ^ 32) << 2, __builtin_bit_cast(int, v)));
}
// Reductions over the 4 lanes {l, l ^ 16, l ^ 32, l ^ 48}: the lanes that share a row of a 16x16
// MFMA operand / column of its C.
HIPATTN_DEVICE HIPATTN_FORCEINLINE float reduce_max_xor48(float v) {
  v = fmaxf(v, swap_xor16(v));
  return fmaxf(v, swap_xor32(v));
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE float reduce_sum_xor48(float v) {
  v += swap_xor16(v);
  return v + swap_xor32(v);
}

// ---- math ----
// 2^x by v_exp_f32 (exact for -inf -> 0; about 1 ulp).
HIPATTN_DEVICE HIPATTN_FORCEINLINE float fast_exp2(float x) { return __builtin_amdgcn_exp2f(x); }
// tanh(x) = 1 - 2 / (2^(2x log2 e) + 1) with v_exp_f32 / v_rcp_f32: saturates to +-1 for large |x|,
// absolute error ~1e-7 (CDNA has no tanh instruction).
HIPATTN_DEVICE HIPATTN_FORCEINLINE float fast_tanh(float x) {
  const float e = __builtin_amdgcn_exp2f(x * 2.8853900817779268f);  // 2 / ln 2
  return 1.f - 2.f * __builtin_amdgcn_rcpf(e + 1.f);
}

// Pack two floats into a b32 of two 16-bit values (round to nearest even), low half = lo.
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t pack_f16x2(float lo, float hi) {
  const f16x2 h = __builtin_convertvector((f32x2){lo, hi}, f16x2);  // v_cvt_f16_f32 (RNE mode)
  return __builtin_bit_cast(uint32_t, h);
}
// bf16 RNE by the integer trick (gfx942 has no f32 -> bf16 conversion); NaN stays a quiet NaN.
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t bf16_bits_rne(float x) {
  const uint32_t u = __builtin_bit_cast(uint32_t, x);
  const uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return x != x ? ((u >> 16) | 0x40u) : r;
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t pack_bf16x2(float lo, float hi) {
  return bf16_bits_rne(lo) | (bf16_bits_rne(hi) << 16);
}
#endif  // HIPATTN_BACKEND_HIP

}  // namespace hipattn::cdna3
