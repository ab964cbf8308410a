// tests/emu/kernels/fp8_convert.hip: v_cvt_pk_fp8_f32 on given inputs (test_emu_fp8_convert.cpp): per
// lane, the pair (a, b) packed into the low word of a destination that starts as 0xA5A5A5A5, into its
// high word (op_sel dst), and (-a, |b|) with the source modifiers. gfx942 writes e4m3fnuz, gfx950 OCP
// e4m3fn. AITER's fp8 attention kernels convert P with this instruction.
#include <hip/hip_runtime.h>
#include <stdint.h>

extern "C" __global__ void __launch_bounds__(64) cvt_pk_fp8(const float* in, uint32_t* out) {
#if defined(__gfx942__) || defined(__gfx950__)  // the instruction exists on these only
  const int t = threadIdx.x;
  const float a = in[2 * t], b = in[2 * t + 1];
  uint32_t lo = 0xA5A5A5A5u, hi = 0xA5A5A5A5u, mods = 0xA5A5A5A5u;
  asm volatile("v_cvt_pk_fp8_f32 %0, %1, %2" : "+v"(lo) : "v"(a), "v"(b));
  asm volatile("v_cvt_pk_fp8_f32 %0, %1, %2 op_sel:[0,0,1]" : "+v"(hi) : "v"(a), "v"(b));
  asm volatile("v_cvt_pk_fp8_f32 %0, -%1, |%2|" : "+v"(mods) : "v"(a), "v"(b));
  out[3 * t] = lo;
  out[3 * t + 1] = hi;
  out[3 * t + 2] = mods;
#else
  (void)in;
  (void)out;
#endif
}
