// hipattn/arch/sm90/atoms.hpp: Hopper (sm_90) warp-level MMA atoms, ldmatrix, cp.async and lane ops.
//
// Every atom states its lane layout as constexpr host+device functions: for lane l (0..31) and
// register element e, which (row, col) of A, B or C it holds. The notation follows the PTX ISA
// "mma.m16n8k16" fragment figures: g = l / 4 (group), t = l % 4 (thread in group).
//
//   A 16x16 (row-major, 8 x 16-bit per lane in 4 b32 registers), element e in [0, 8):
//     row = g + 8 * ((e / 2) % 2),  col = 2 * t + (e % 2) + 8 * (e / 4)
//   B 16x8 (k x n, 4 x 16-bit per lane in 2 b32 registers), element e in [0, 4):
//     k = 2 * t + (e % 2) + 8 * (e / 2),  n = g
//   C 16x8 (f32, 4 per lane), element e in [0, 4):
//     row = g + 8 * (e / 2),  col = 2 * t + (e % 2)
//   m16n8k32 e4m3 (A 16x32, 16 x 8-bit per lane in 4 b32; B 32x8, 8 x 8-bit in 2 b32):
//     A: row = g + 8 * ((e / 4) % 2),  col = 4 * t + (e % 4) + 16 * (e / 8)
//     B: k = 4 * t + (e % 4) + 16 * (e / 4),  n = g
//     C: as above.
// The warpgroup MMA atoms (wgmma, ALGORITHM.md section 10) are in arch/sm90/wgmma.hpp, with their layout functions.
#pragma once
#include <cstdint>

#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/platform/config.hpp"

namespace hipattn::sm90 {

struct LaneElem {
  int row, col;
};

// ---- layouts (host + device, constexpr) ----
struct Mma16816Layout {
  static constexpr int kM = 16, kN = 8, kK = 16;
  static constexpr int kAElems = 8, kBElems = 4, kCElems = 4;
  HIPATTN_HOST_DEVICE static constexpr LaneElem a(int lane, int e) {
    return {lane / 4 + 8 * ((e / 2) % 2), 2 * (lane % 4) + (e % 2) + 8 * (e / 4)};
  }
  // B as (k, n)
  HIPATTN_HOST_DEVICE static constexpr LaneElem b(int lane, int e) {
    return {2 * (lane % 4) + (e % 2) + 8 * (e / 2), lane / 4};
  }
  HIPATTN_HOST_DEVICE static constexpr LaneElem c(int lane, int e) {
    return {lane / 4 + 8 * (e / 2), 2 * (lane % 4) + (e % 2)};
  }
};

struct Mma16832Fp8Layout {
  static constexpr int kM = 16, kN = 8, kK = 32;
  static constexpr int kAElems = 16, kBElems = 8, kCElems = 4;
  HIPATTN_HOST_DEVICE static constexpr LaneElem a(int lane, int e) {
    return {lane / 4 + 8 * ((e / 4) % 2), 4 * (lane % 4) + (e % 4) + 16 * (e / 8)};
  }
  HIPATTN_HOST_DEVICE static constexpr LaneElem b(int lane, int e) {
    return {4 * (lane % 4) + (e % 4) + 16 * (e / 4), lane / 4};
  }
  HIPATTN_HOST_DEVICE static constexpr LaneElem c(int lane, int e) { return Mma16816Layout::c(lane, e); }
};

#if defined(HIPATTN_BACKEND_CUDA)
// ---- atoms (device) ----
// D = A * B + C, f16 inputs, f32 accumulate. a: 4 x b32, b: 2 x b32, c: 4 x f32.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mma_16816_f16(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mma_16816_bf16(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// e4m3 (OCP) inputs, f32 accumulate: m16n8k32.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mma_16832_e4m3(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ldmatrix: four 8x8 16-bit matrices; lane l supplies the row address of matrix l / 8, row l % 8.
// Without .trans lane l receives, of matrix i, row l / 4, columns 2 * (l % 4) + {0, 1} in r[i].
// With .trans it receives column l / 4, rows 2 * (l % 4) + {0, 1}: the B operand of PV from a
// row-major V tile.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void ldmatrix_x4(uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(row_addr)));
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(row_addr)));
}

// cp.async: 16 bytes global -> shared, bypassing L1; src_bytes = 0 writes zeros and reads nothing.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void cp_async_16(void* smem_dst, const void* gmem_src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem_dst)), "l"(gmem_src),
               "r"(src_bytes));
}
// cp.async: 4 bytes (a scale value); src_bytes = 0 writes zero.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void cp_async_4(void* smem_dst, const void* gmem_src, bool valid) {
  const int src_bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(smem_dst)), "l"(gmem_src),
               "r"(src_bytes));
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Butterfly reduction over the lanes whose ids differ only in the bits of `mask_bits`.
template <int kMaskBits>
HIPATTN_DEVICE HIPATTN_FORCEINLINE float xor_reduce_max(float v) {
#pragma unroll
  for (int m = 1; m <= kMaskBits; m <<= 1)
    if (kMaskBits & m) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, m));
  return v;
}
template <int kMaskBits>
HIPATTN_DEVICE HIPATTN_FORCEINLINE float xor_reduce_sum(float v) {
#pragma unroll
  for (int m = 1; m <= kMaskBits; m <<= 1)
    if (kMaskBits & m) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

HIPATTN_DEVICE HIPATTN_FORCEINLINE float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE float fast_tanh(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE int lane_id() { return threadIdx.x & 31; }

// Pack two floats into a b32 of two 16-bit values (round to nearest even), low half = lo.
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t pack_f16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
// Four fp8 codes (byte i = element i) -> the q dtype's 16-bit pairs (elements 0, 1 in `lo`, 2, 3 in
// `hi`), exact for every code, without a branch, and independent of f32 denormal flushing (f16
// arithmetic keeps subnormals under --use_fast_math / ftz). e4m3fn: the hardware's
// cvt.rn.f16x2.e4m3x2. e4m3fnuz (bias 8, no infinity, 0x80 its only NaN, S.1111.111 = +-240): each
// code's sign and 7 magnitude bits placed in an f16 (exponent field 0eeee, mantissa mmm0000000) and
// scaled by 2^7 (2^(15 - 8)), which is exact for every code, subnormals included; 0x80 (-0 so far)
// becomes NaN. bf16 goes through f32 (placing the bits in a bf16 and scaling by 2^120 in the integer
// and f16 pipes is exact too, but measured 1.18x slower in the fp8 decode kernel: bench/NOTES.md v11).
template <KvKind kKv, bool kBf16>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void dequant_fp8x4(uint32_t x, uint32_t& lo, uint32_t& hi) {
  uint32_t h[2];
  if constexpr (kKv == KvKind::e4m3fnuz) {
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      uint32_t y;  // codes 2k and 2k + 1 in bytes 1 and 3: [0, c, 0, c']
      asm("prmt.b32 %0, %1, 0, %2;" : "=r"(y) : "r"(x), "r"(k == 0 ? 0x1404u : 0x3424u));
      uint32_t f = (y & 0x80008000u) | ((y & 0x7F007F00u) >> 1);
      asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(f) : "r"(0x58005800u));  // 2^7
      h[k] = f | (__vcmpeq2(y, 0x80008000u) & 0x7E007E00u);         // 0x80: NaN
    }
  } else {
    asm("{\n .reg .b16 a, b;\n mov.b32 {a, b}, %2;\n cvt.rn.f16x2.e4m3x2 %0, a;\n cvt.rn.f16x2.e4m3x2 %1, b;\n}"
        : "=r"(h[0]), "=r"(h[1])
        : "r"(x));
  }
  if constexpr (kBf16) {
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      float f0, f1;
      asm("{\n .reg .b16 a, b;\n mov.b32 {a, b}, %2;\n cvt.f32.f16 %0, a;\n cvt.f32.f16 %1, b;\n}"
          : "=f"(f0), "=f"(f1)
          : "r"(h[k]));
      h[k] = pack_bf16x2(f0, f1);
    }
  }
  lo = h[0];
  hi = h[1];
}

// Two floats -> two e4m3fn codes (low byte lo): RNE, saturating to +-448, NaN to a NaN code.
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t pack_e4m3x2(float lo, float hi) {
  uint16_t r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(r) : "f"(lo), "f"(hi));
  return r;
}

// Byte permute (prmt.b32): byte i of the result is byte (sel >> 4i) & 7 of {b, a}, a's bytes 0-3.
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t byte_perm(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
  return r;
}
#endif  // HIPATTN_BACKEND_CUDA

}  // namespace hipattn::sm90
