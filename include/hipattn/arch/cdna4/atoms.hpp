// hipattn/arch/cdna4/atoms.hpp: CDNA4 (gfx950, MI355X) wavefront MFMA atoms, transposing LDS reads and
// lane ops. gfx950 keeps the gfx942 atoms (cdna3/atoms.hpp, re-exported here) except the fp8 MFMAs,
// which it reads as OCP e4m3fn and wraps here for E4m3fnCodes (numeric/fp8_operand.hpp), and adds:
//
// Lane layouts (the gfx9 pattern of cdna3/atoms.hpp; l = lane 0..63, e = element; B as {k, n}):
//   16x16x32  f16/bf16 (8 per lane):  A row = l % 16, k = 8 * (l / 16) + e;  B k = 8 * (l / 16) + e, n = l % 16
//                                     C row = 4 * (l / 16) + e, col = l % 16                (4 floats)
//   32x32x16  f16/bf16 (8 per lane):  A row = l % 32, k = 8 * (l / 32) + e;  C row = 8 * (e / 4) + 4 * (l / 32) + e % 4
//   16x16x128 fp8 e4m3fn (32 codes per lane in 8 VGPRs):  A row = l % 16, k = 32 * (e / 8) + 8 * (l / 16) + e % 8
//   32x32x64  fp8 e4m3fn (32 codes per lane):             A row = l % 32, k = 32 * (e / 16) + 16 * (l / 32) + e % 16
//   (B likewise with n for the row; C as the 16x16 / 32x32 shapes above. K runs in stripes 32 apart,
//   the order of AMD's hardware-run opus test of these instructions; the unscaled form cannot tell K
//   orders apart, block scales can. The f8f6f4 shapes are the unscaled form of v_mfma_scale_*.)
//   16x16x32 / 32x32x16 fp8 (cdna3 layouts) read OCP e4m3fn on gfx950: cdna4's own atoms below.
//
// ds_read_b64_tr_b16 (lds_read_tr16_b64): within each 16-lane row g of the wave, the lanes read a
// 4 x 16 block of a row-major 16-bit matrix: lane i supplies the address of block row i / 4,
// columns 4 * (i % 4) .. + 3 (8 contiguous bytes), and receives column i: element j = block row j.
// That is the A operand of a 16x16 MFMA whose M runs along the matrix columns (V^T for PV): with
// block rows 4 * g + j, lane 16 g + i holds A[m = i][k = 4 g + j]. (CDNA4 ISA "MFMA transpose load
// from LDS": "each lane holds 4 consecutive M or N values"; Mojo's load_b_tr and HipKittens'
// column-layout loads supply the same per-lane addresses.)
//
// Lane ops: v_permlane16_swap / v_permlane32_swap exchange 16-lane rows / 32-lane halves, so a
// butterfly over lane-id bits 4 and 5 needs no LDS round trip.
#pragma once
#include <cstdint>

#include "hipattn/arch/cdna3/atoms.hpp"
#include "hipattn/arch/cdna4/lane_bits.hpp"
#include "hipattn/numeric/fp8_operand.hpp"
#include "hipattn/platform/config.hpp"

namespace hipattn::cdna4 {

using cdna3::LaneElem;
using cdna3::MfmaLayout;
using cdna3::Mfma16x16x16Layout;     // v_mfma_f32_16x16x16_{f16,bf16} (still on gfx950)
using cdna3::Mfma32x32x8Layout;      // v_mfma_f32_32x32x8_{f16,bf16}
using cdna3::Mfma16x16x32Fp8Layout;  // v_mfma_f32_16x16x32_fp8_fp8 (read as OCP e4m3fn on gfx950)
using cdna3::Mfma32x32x16Fp8Layout;  // v_mfma_f32_32x32x16_fp8_fp8 (read as OCP e4m3fn on gfx950)
using Mfma16x16x32Layout = MfmaLayout<16, 32, 16>;       // v_mfma_f32_16x16x32_{f16,bf16}
using Mfma32x32x16Layout = MfmaLayout<32, 16, 16>;       // v_mfma_f32_32x32x16_{f16,bf16}
// The f8f6f4 operand layout: the gfx9 row / column and C maps, K in stripes of 32 / (64 / M) codes,
// 32 apart (see the table above).
template <int kM_, int kK_>
struct MfmaF8f6f4Layout : MfmaLayout<kM_, kK_, 8> {
  using Base = MfmaLayout<kM_, kK_, 8>;
  static constexpr int kStripe = 32 / Base::kGroups;
  HIPATTN_HOST_DEVICE static constexpr int k_of(int lane, int e) {
    return 32 * (e / kStripe) + kStripe * (lane / kM_) + e % kStripe;
  }
  HIPATTN_HOST_DEVICE static constexpr LaneElem a(int lane, int e) { return {lane % kM_, k_of(lane, e)}; }
  HIPATTN_HOST_DEVICE static constexpr LaneElem b(int lane, int e) { return {k_of(lane, e), lane % kM_}; }
};
using Mfma16x16x128Fp8Layout = MfmaF8f6f4Layout<16, 128>;  // v_mfma_f32_16x16x128_f8f6f4 (fp8 x fp8)
using Mfma32x32x64Fp8Layout = MfmaF8f6f4Layout<32, 64>;    // v_mfma_f32_32x32x64_f8f6f4 (fp8 x fp8)

#if defined(HIPATTN_BACKEND_HIP)
using cdna3::b16x4;
using cdna3::b16x8;
using cdna3::f32x16;
using cdna3::f32x2;
using cdna3::f32x4;
using cdna3::u32x4;
using cdna3::to_global;
using cdna3::to_lds;
using cdna3::lane_id;
using cdna3::lds_read_b128;
using cdna3::lds_read_b64;
using cdna3::mfma_16x16x16;
using cdna3::mfma_32x32x8;
using cdna3::fast_exp2;
using cdna3::fast_tanh;
typedef _Float16 f16x8 __attribute__((ext_vector_type(8)));
typedef __bf16 bf16x8 __attribute__((ext_vector_type(8)));
typedef _Float16 f16x2 __attribute__((ext_vector_type(2)));
typedef __bf16 bf16x2 __attribute__((ext_vector_type(2)));
typedef int i32x8 __attribute__((ext_vector_type(8)));  // 32 fp8 codes

// ---- atoms (device) ----
// D = A * B + C, 16-bit inputs (f16, or bf16 when kBf16), f32 accumulate. Layouts above.
template <bool kBf16>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mfma_16x16x32(f32x4& c, b16x8 a, b16x8 b) {
  if constexpr (kBf16)
    c = __builtin_amdgcn_mfma_f32_16x16x32_bf16(__builtin_bit_cast(bf16x8, a), __builtin_bit_cast(bf16x8, b), c, 0, 0, 0);
  else
    c = __builtin_amdgcn_mfma_f32_16x16x32_f16(__builtin_bit_cast(f16x8, a), __builtin_bit_cast(f16x8, b), c, 0, 0, 0);
}
// The 32-row warp tile's atom (cdna3/warp_tile32.hpp); tested by tests/isa/atoms.hip and tests/emu/test_emu_atoms.cpp.
template <bool kBf16>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mfma_32x32x16(f32x16& c, b16x8 a, b16x8 b) {
  if constexpr (kBf16)
    c = __builtin_amdgcn_mfma_f32_32x32x16_bf16(__builtin_bit_cast(bf16x8, a), __builtin_bit_cast(bf16x8, b), c, 0, 0, 0);
  else
    c = __builtin_amdgcn_mfma_f32_32x32x16_f16(__builtin_bit_cast(f16x8, a), __builtin_bit_cast(f16x8, b), c, 0, 0, 0);
}
// fp8 x fp8, f32 accumulate. Every fp8 atom here reads OCP e4m3fn and takes E4m3fnCodes; e4m3fnuz
// codes (what gfx942 reads) or bare bits fail to compile in the overloads after them, as does a
// gfx942 pass (there the 8-code opcodes read e4m3fnuz: cdna3's atoms).
// 16x16x32 / 32x32x16: gfx942's opcodes and layouts (8 codes per lane in a b64), read as e4m3fn here.
// 16x16x128 / 32x32x64: 32 codes per lane (code e in byte e), the unscaled f8f6f4 MFMAs (format
// selectors cbsz = blgp = 0: fp8 e4m3). The builtin is the scaled one; with immediate scale operands
// of 0 and op_sel 0, LLVM selects the unscaled opcode v_mfma_f32_*_f8f6f4, which applies no scale
// (tests/isa/check_isa.py requires that opcode and forbids the scaled one). Scales are E8M0
// exponents: a scaled call must pass 127 for a scale of 1 (0 would be 2^-127), as AMD's
// hardware-run opus tests of v_mfma_scale_* do.
#if !defined(HIPATTN_TARGET_GFX942)
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mfma_16x16x32_fp8(f32x4& c, E4m3fnCodes<8> a, E4m3fnCodes<8> b) {
  c = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a.bits<long>(), b.bits<long>(), c, 0, 0, 0);
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mfma_32x32x16_fp8(f32x16& c, E4m3fnCodes<8> a, E4m3fnCodes<8> b) {
  c = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(a.bits<long>(), b.bits<long>(), c, 0, 0, 0);
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mfma_16x16x128_fp8(f32x4& c, E4m3fnCodes<32> a, E4m3fnCodes<32> b) {
  c = __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a.bits<i32x8>(), b.bits<i32x8>(), c, 0, 0, 0, 0, 0, 0);
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mfma_32x32x64_fp8(f32x16& c, E4m3fnCodes<32> a, E4m3fnCodes<32> b) {
  c = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(a.bits<i32x8>(), b.bits<i32x8>(), c, 0, 0, 0, 0, 0, 0);
}
#endif
template <class A, class B>
HIPATTN_DEVICE void mfma_16x16x32_fp8(f32x4&, A, B) {
  static_assert(!are_fp8_codes_v<DType::fp8_e4m3fn, 8, A, B>,
                "cdna4::mfma_16x16x32_fp8 is refused on gfx942, which reads its opcode as e4m3fnuz: "
                "use cdna3::mfma_16x16x32_fp8 with E4m3fnuzCodes<8>");
  static_assert(are_fp8_codes_v<DType::fp8_e4m3fn, 8, A, B>,
                "cdna4::mfma_16x16x32_fp8 reads OCP e4m3fn: pass E4m3fnCodes<8> "
                "(re-encode e4m3fnuz codes; wrap bare bits by E4m3fnCodes<8>::from_bits)");
}
template <class A, class B>
HIPATTN_DEVICE void mfma_32x32x16_fp8(f32x16&, A, B) {
  static_assert(!are_fp8_codes_v<DType::fp8_e4m3fn, 8, A, B>,
                "cdna4::mfma_32x32x16_fp8 is refused on gfx942, which reads its opcode as e4m3fnuz: "
                "use cdna3::mfma_32x32x16_fp8 with E4m3fnuzCodes<8>");
  static_assert(are_fp8_codes_v<DType::fp8_e4m3fn, 8, A, B>,
                "cdna4::mfma_32x32x16_fp8 reads OCP e4m3fn: pass E4m3fnCodes<8> "
                "(re-encode e4m3fnuz codes; wrap bare bits by E4m3fnCodes<8>::from_bits)");
}
template <class A, class B>
HIPATTN_DEVICE void mfma_16x16x128_fp8(f32x4&, A, B) {
  static_assert(!are_fp8_codes_v<DType::fp8_e4m3fn, 32, A, B>, "cdna4::mfma_16x16x128_fp8 is gfx950-only");
  static_assert(are_fp8_codes_v<DType::fp8_e4m3fn, 32, A, B>,
                "cdna4::mfma_16x16x128_fp8 reads OCP e4m3fn: pass E4m3fnCodes<32> "
                "(re-encode e4m3fnuz codes; wrap bare bits by E4m3fnCodes<32>::from_bits)");
}
template <class A, class B>
HIPATTN_DEVICE void mfma_32x32x64_fp8(f32x16&, A, B) {
  static_assert(!are_fp8_codes_v<DType::fp8_e4m3fn, 32, A, B>, "cdna4::mfma_32x32x64_fp8 is gfx950-only");
  static_assert(are_fp8_codes_v<DType::fp8_e4m3fn, 32, A, B>,
                "cdna4::mfma_32x32x64_fp8 reads OCP e4m3fn: pass E4m3fnCodes<32> "
                "(re-encode e4m3fnuz codes; wrap bare bits by E4m3fnCodes<32>::from_bits)");
}

// ---- LDS reads ----
// ds_read_b64_tr_b16 at `p` (8-byte aligned; the per-lane address of the 4 x 16 block, see above).
// The ISA requires EXEC = all ones for transpose loads: callers reach it in wave-uniform control flow
// only (the warp tile's pv() runs for every lane of every warp; no lane-dependent branch encloses
// it), and the emulator tier fails any execution of it with a lane inactive (emu/ops_matrix.cpp).
HIPATTN_DEVICE HIPATTN_FORCEINLINE b16x4 lds_read_tr16_b64(const uint16_t* p) {
  return __builtin_amdgcn_ds_read_tr16_b64_v4i16(to_lds(reinterpret_cast<b16x4*>(const_cast<uint16_t*>(p))));
}

// ---- lane ops ----
// {value of lane l & ~32, value of lane l | 32} by v_permlane32_swap; likewise bit 4 by permlane16_swap.
// The swap results are read through elem_as_float (lane_bits.hpp), never __builtin_bit_cast(float, h[1]):
// clang reads element 0 for a bit-cast vector element (llvm/llvm-project#95673; tests/isa/bitcast_regression.cpp).
// The values of lanes l & ~32 and l | 32 (kBit 32: v_permlane32_swap), or l & ~16 and l | 16 (kBit 16).
template <int kBit>
HIPATTN_DEVICE HIPATTN_FORCEINLINE float swap_max(float v) {
  static_assert(kBit == 16 || kBit == 32, "permlane16_swap or permlane32_swap");
  const unsigned u = __builtin_bit_cast(unsigned, v);
  if constexpr (kBit == 32) {
    const auto h = __builtin_amdgcn_permlane32_swap(u, u, false, false);
    return fmaxf(elem_as_float<0>(h), elem_as_float<1>(h));
  } else {
    const auto h = __builtin_amdgcn_permlane16_swap(u, u, false, false);
    return fmaxf(elem_as_float<0>(h), elem_as_float<1>(h));
  }
}
template <int kBit>
HIPATTN_DEVICE HIPATTN_FORCEINLINE float swap_sum(float v) {
  static_assert(kBit == 16 || kBit == 32, "permlane16_swap or permlane32_swap");
  const unsigned u = __builtin_bit_cast(unsigned, v);
  if constexpr (kBit == 32) {
    const auto h = __builtin_amdgcn_permlane32_swap(u, u, false, false);
    return elem_as_float<0>(h) + elem_as_float<1>(h);
  } else {
    const auto h = __builtin_amdgcn_permlane16_swap(u, u, false, false);
    return elem_as_float<0>(h) + elem_as_float<1>(h);
  }
}
// Over lanes l and l ^ 32 (the 32x32 C layout's two lanes of a row): one permlane32 swap.
HIPATTN_DEVICE HIPATTN_FORCEINLINE float reduce_max_xor32(float v) { return swap_max<32>(v); }
HIPATTN_DEVICE HIPATTN_FORCEINLINE float reduce_sum_xor32(float v) { return swap_sum<32>(v); }
// Over lanes l, l ^ 16, l ^ 32, l ^ 48 (the 16x16 C layout's four lanes of a row).
HIPATTN_DEVICE HIPATTN_FORCEINLINE float reduce_max_xor48(float v) { return swap_max<16>(swap_max<32>(v)); }
HIPATTN_DEVICE HIPATTN_FORCEINLINE float reduce_sum_xor48(float v) { return swap_sum<16>(swap_sum<32>(v)); }

// ---- conversions ----
// Pack two floats into a b32 of two 16-bit values (round to nearest even), low half = lo:
// v_cvt_pk_bf16_f32 for bf16.
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t pack_f16x2(float lo, float hi) {
  return __builtin_bit_cast(uint32_t, __builtin_convertvector((f32x2){lo, hi}, f16x2));
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t pack_bf16x2(float lo, float hi) {
  return __builtin_bit_cast(uint32_t, __builtin_convertvector((f32x2){lo, hi}, bf16x2));
}
#endif  // HIPATTN_BACKEND_HIP

}  // namespace hipattn::cdna4
