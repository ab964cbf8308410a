// tests/isa/atoms.hip: one kernel per CDNA atom (MFMA shapes, LDS reads, lane ops, conversions), so
// that check_isa.py can assert each lowers to the instruction it names. Compiled per target: the
// cdna3 atoms on gfx942 and gfx950, the cdna4 atoms on gfx950 only.
#include "hipattn/arch/arch.hpp"

namespace isa = hipattn::cdna3;

// Operands come from memory (so nothing folds) and results go back to memory.
template <class T>
__device__ T load_v(const void* p, int i) {
  return reinterpret_cast<const T*>(p)[i];
}

__global__ void atom_cdna3_mfma_16x16x16_f16(const void* in, void* out) {
  const int l = threadIdx.x;
  isa::f32x4 c = load_v<isa::f32x4>(in, l);
  isa::mfma_16x16x16<false>(c, load_v<isa::b16x4>(in, l + 64), load_v<isa::b16x4>(in, l + 128));
  reinterpret_cast<isa::f32x4*>(out)[l] = c;
}
__global__ void atom_cdna3_mfma_16x16x16_bf16(const void* in, void* out) {
  const int l = threadIdx.x;
  isa::f32x4 c = load_v<isa::f32x4>(in, l);
  isa::mfma_16x16x16<true>(c, load_v<isa::b16x4>(in, l + 64), load_v<isa::b16x4>(in, l + 128));
  reinterpret_cast<isa::f32x4*>(out)[l] = c;
}
__global__ void atom_cdna3_mfma_32x32x8_f16(const void* in, void* out) {
  const int l = threadIdx.x;
  isa::f32x16 c = load_v<isa::f32x16>(in, l);
  isa::mfma_32x32x8<false>(c, load_v<isa::b16x4>(in, l + 64), load_v<isa::b16x4>(in, l + 128));
  reinterpret_cast<isa::f32x16*>(out)[l] = c;
}
__global__ void atom_cdna3_mfma_32x32x8_bf16(const void* in, void* out) {
  const int l = threadIdx.x;
  isa::f32x16 c = load_v<isa::f32x16>(in, l);
  isa::mfma_32x32x8<true>(c, load_v<isa::b16x4>(in, l + 64), load_v<isa::b16x4>(in, l + 128));
  reinterpret_cast<isa::f32x16*>(out)[l] = c;
}
// The 8-code fp8 MFMAs read e4m3fnuz on gfx942 and OCP e4m3fn on gfx950, and their atoms take codes
// of that format: cdna3's on gfx942, cdna4's on gfx950 (same opcodes; cdna3's refuse a gfx950 pass).
// The kernels keep their cdna3 names on both targets (check_isa.py and test_emu_atoms.cpp use them).
#if defined(HIPATTN_TARGET_GFX950)
namespace fp8isa = hipattn::cdna4;
using Fp8x8 = hipattn::E4m3fnCodes<8>;
#else
namespace fp8isa = hipattn::cdna3;
using Fp8x8 = hipattn::E4m3fnuzCodes<8>;
#endif
__global__ void atom_cdna3_mfma_16x16x32_fp8(const void* in, void* out) {
  const int l = threadIdx.x;
  isa::f32x4 c = load_v<isa::f32x4>(in, l);
  fp8isa::mfma_16x16x32_fp8(c, Fp8x8::from_bits(load_v<uint64_t>(in, l + 64)),
                            Fp8x8::from_bits(load_v<uint64_t>(in, l + 128)));
  reinterpret_cast<isa::f32x4*>(out)[l] = c;
}
__global__ void atom_cdna3_mfma_32x32x16_fp8(const void* in, void* out) {
  const int l = threadIdx.x;
  isa::f32x16 c = load_v<isa::f32x16>(in, l);
  fp8isa::mfma_32x32x16_fp8(c, Fp8x8::from_bits(load_v<uint64_t>(in, l + 64)),
                            Fp8x8::from_bits(load_v<uint64_t>(in, l + 128)));
  reinterpret_cast<isa::f32x16*>(out)[l] = c;
}
__global__ void atom_cdna3_lds_reads(const uint16_t* in, void* out) {
  __shared__ __attribute__((aligned(16))) uint16_t lds[64 * 16];
  const int l = threadIdx.x;
  for (int i = 0; i < 16; ++i) lds[l * 16 + i] = in[l * 16 + i];
  __syncthreads();
  const isa::b16x8 a = isa::lds_read_b128(lds + 8 * (l ^ 5));
  const isa::b16x4 b = isa::lds_gather4_b16(lds + l, lds + 64 + l, lds + 128 + l, lds + 192 + l);
  reinterpret_cast<isa::b16x8*>(out)[l] = a;
  reinterpret_cast<isa::b16x4*>(out)[128 + l] = b;
}
__global__ void atom_cdna3_lane_ops(const float* in, float* out) {
  const int l = threadIdx.x;
  out[l] = isa::reduce_max_xor48(in[l]);
  out[64 + l] = isa::reduce_sum_xor48(in[64 + l]);
}
__global__ void atom_cdna3_math(const float* in, uint32_t* out) {
  const int l = threadIdx.x;
  out[l] = isa::pack_bf16x2(in[l], in[l + 64]);
  out[64 + l] = isa::pack_f16x2(in[l], in[l + 64]);
  out[128 + l] = __builtin_bit_cast(uint32_t, isa::fast_exp2(in[l]) + isa::fast_tanh(in[l + 64]));
}

#if defined(HIPATTN_TARGET_GFX950)
namespace isa4 = hipattn::cdna4;
using Fp8x32 = hipattn::E4m3fnCodes<32>;
__global__ void atom_cdna4_mfma_16x16x32_f16(const void* in, void* out) {
  const int l = threadIdx.x;
  isa4::f32x4 c = load_v<isa4::f32x4>(in, l);
  isa4::mfma_16x16x32<false>(c, load_v<isa4::b16x8>(in, l + 64), load_v<isa4::b16x8>(in, l + 128));
  reinterpret_cast<isa4::f32x4*>(out)[l] = c;
}
__global__ void atom_cdna4_mfma_16x16x32_bf16(const void* in, void* out) {
  const int l = threadIdx.x;
  isa4::f32x4 c = load_v<isa4::f32x4>(in, l);
  isa4::mfma_16x16x32<true>(c, load_v<isa4::b16x8>(in, l + 64), load_v<isa4::b16x8>(in, l + 128));
  reinterpret_cast<isa4::f32x4*>(out)[l] = c;
}
__global__ void atom_cdna4_mfma_32x32x16_f16(const void* in, void* out) {
  const int l = threadIdx.x;
  isa4::f32x16 c = load_v<isa4::f32x16>(in, l);
  isa4::mfma_32x32x16<false>(c, load_v<isa4::b16x8>(in, l + 64), load_v<isa4::b16x8>(in, l + 128));
  reinterpret_cast<isa4::f32x16*>(out)[l] = c;
}
__global__ void atom_cdna4_mfma_32x32x16_bf16(const void* in, void* out) {
  const int l = threadIdx.x;
  isa4::f32x16 c = load_v<isa4::f32x16>(in, l);
  isa4::mfma_32x32x16<true>(c, load_v<isa4::b16x8>(in, l + 64), load_v<isa4::b16x8>(in, l + 128));
  reinterpret_cast<isa4::f32x16*>(out)[l] = c;
}
__global__ void atom_cdna4_mfma_16x16x128_fp8(const void* in, void* out) {
  const int l = threadIdx.x;
  isa4::f32x4 c = load_v<isa4::f32x4>(in, l);
  isa4::mfma_16x16x128_fp8(c, Fp8x32::from_bits(load_v<isa4::i32x8>(in, l + 64)),
                          Fp8x32::from_bits(load_v<isa4::i32x8>(in, l + 128)));
  reinterpret_cast<isa4::f32x4*>(out)[l] = c;
}
__global__ void atom_cdna4_mfma_32x32x64_fp8(const void* in, void* out) {
  const int l = threadIdx.x;
  isa4::f32x16 c = load_v<isa4::f32x16>(in, l);
  isa4::mfma_32x32x64_fp8(c, Fp8x32::from_bits(load_v<isa4::i32x8>(in, l + 64)),
                          Fp8x32::from_bits(load_v<isa4::i32x8>(in, l + 128)));
  reinterpret_cast<isa4::f32x16*>(out)[l] = c;
}
__global__ void atom_cdna4_lds_read_tr16(const uint16_t* in, void* out) {
  __shared__ __attribute__((aligned(16))) uint16_t lds[64 * 16];
  const int l = threadIdx.x;
  for (int i = 0; i < 16; ++i) lds[l * 16 + i] = in[l * 16 + i];
  __syncthreads();
  reinterpret_cast<isa4::b16x4*>(out)[l] = isa4::lds_read_tr16_b64(lds + 4 * (l ^ 3));
}
__global__ void atom_cdna4_lane_ops(const float* in, float* out) {
  const int l = threadIdx.x;
  out[l] = isa4::reduce_max_xor48(in[l]);
  out[64 + l] = isa4::reduce_sum_xor48(in[64 + l]);
}
__global__ void atom_cdna4_math(const float* in, uint32_t* out) {
  const int l = threadIdx.x;
  out[l] = isa4::pack_bf16x2(in[l], in[l + 64]);
  out[64 + l] = isa4::pack_f16x2(in[l], in[l + 64]);
}
#endif
