// tests/isa/fp8_format_refusal.hip: the fp8 MFMA atoms refuse operands of the format their target does
// not read (numeric/fp8_operand.hpp). CMakeLists.txt compiles this file once per HIPATTN_FP8_CASE for
// the target named beside the case: case 0 must compile, every other case must fail with its message.
#include "hipattn/arch/arch.hpp"

using hipattn::E4m3fnCodes;
using hipattn::E4m3fnuzCodes;

template <class T>
__device__ T load_v(const void* p, int i) {
  return reinterpret_cast<const T*>(p)[i];
}

#if !defined(HIPATTN_FP8_CASE)
#error "HIPATTN_FP8_CASE is not set"
#endif

__global__ void fp8_refusal(const void* in, void* out) {
  const int l = threadIdx.x;
  hipattn::cdna3::f32x4 c = load_v<hipattn::cdna3::f32x4>(in, l);
  hipattn::cdna3::f32x16 d = load_v<hipattn::cdna3::f32x16>(in, l);
  const uint64_t a8 = load_v<uint64_t>(in, l + 64), b8 = load_v<uint64_t>(in, l + 128);
#if HIPATTN_FP8_CASE == 0  // each target with the format it reads (gfx942 and gfx950)
#if defined(HIPATTN_TARGET_GFX950)
  using hipattn::cdna4::i32x8;
  hipattn::cdna4::mfma_16x16x32_fp8(c, E4m3fnCodes<8>::from_bits(a8), E4m3fnCodes<8>::from_bits(b8));
  hipattn::cdna4::mfma_32x32x16_fp8(d, E4m3fnCodes<8>::from_bits(a8), E4m3fnCodes<8>::from_bits(b8));
  const auto a32 = E4m3fnCodes<32>::from_bits(load_v<i32x8>(in, l + 64));
  hipattn::cdna4::mfma_16x16x128_fp8(c, a32, a32);
  hipattn::cdna4::mfma_32x32x64_fp8(d, a32, a32);
#else
  hipattn::cdna3::mfma_16x16x32_fp8(c, E4m3fnuzCodes<8>::from_bits(a8), E4m3fnuzCodes<8>::from_bits(b8));
  hipattn::cdna3::mfma_32x32x16_fp8(d, E4m3fnuzCodes<8>::from_bits(a8), E4m3fnuzCodes<8>::from_bits(b8));
#endif
#elif HIPATTN_FP8_CASE == 1  // gfx942: OCP e4m3fn codes into the e4m3fnuz atom
  hipattn::cdna3::mfma_16x16x32_fp8(c, E4m3fnCodes<8>::from_bits(a8), E4m3fnCodes<8>::from_bits(b8));
#elif HIPATTN_FP8_CASE == 2  // gfx942: one operand of each format
  hipattn::cdna3::mfma_32x32x16_fp8(d, E4m3fnuzCodes<8>::from_bits(a8), E4m3fnCodes<8>::from_bits(b8));
#elif HIPATTN_FP8_CASE == 3  // gfx942: bare bits, no format
  hipattn::cdna3::mfma_16x16x32_fp8(c, a8, b8);
#elif HIPATTN_FP8_CASE == 4  // gfx950: e4m3fnuz codes into the OCP e4m3fn atom of a gfx942 opcode
  hipattn::cdna4::mfma_16x16x32_fp8(c, E4m3fnuzCodes<8>::from_bits(a8), E4m3fnuzCodes<8>::from_bits(b8));
#elif HIPATTN_FP8_CASE == 5  // gfx950: e4m3fnuz codes into an f8f6f4 atom
  const auto a32 = E4m3fnuzCodes<32>::from_bits(load_v<hipattn::cdna4::i32x8>(in, l + 64));
  hipattn::cdna4::mfma_16x16x128_fp8(c, a32, a32);
#elif HIPATTN_FP8_CASE == 6  // gfx950: cdna3's e4m3fnuz atom, whose opcode reads OCP e4m3fn here
  hipattn::cdna3::mfma_16x16x32_fp8(c, E4m3fnuzCodes<8>::from_bits(a8), E4m3fnuzCodes<8>::from_bits(b8));
#else
#error "unknown HIPATTN_FP8_CASE"
#endif
  reinterpret_cast<hipattn::cdna3::f32x4*>(out)[l] = c;
  reinterpret_cast<hipattn::cdna3::f32x16*>(out)[64 + l] = d;
}
