// tests/emu/kernels/gpr_idx.hip: VGPR index mode (s_set_gpr_idx_on / s_set_gpr_idx_off, CDNA3 ISA 6.6
// "VGPR Indexing") and a cross-wave LDS handoff without a barrier, for test_emu_gpr_idx.cpp.
#include <hip/hip_runtime.h>

#include <cstdint>

// out[3 * t + 0]: v_mov_b32 with src0 indexed: v[10 + idx]; out[3 * t + 1]: v_add_u32 with src0
// indexed (src1 not): v[10 + idx] + v13 (src1 v13 stays v13); out[3 * t + 2]: a v_mov_b32 with dst
// indexed writes v[10 + idx], read back with the mode off.
extern "C" __global__ void __launch_bounds__(64) gpr_idx(uint32_t* out, uint32_t idx) {
  const uint32_t t = threadIdx.x;
  uint32_t a, b, c, saved_m0;
  asm volatile(
      "s_mov_b32 %3, m0\n"  // the mode lives in M0: keep the compiler's M0
      "v_add_u32 v10, 100, %4\n"
      "v_add_u32 v11, 200, %4\n"
      "v_add_u32 v12, 300, %4\n"
      "v_add_u32 v13, 400, %4\n"
      "s_set_gpr_idx_on %5, gpr_idx(SRC0)\n"
      "v_mov_b32 %0, v10\n"
      "v_add_u32 %1, v10, v13\n"
      "s_set_gpr_idx_off\n"
      "s_set_gpr_idx_on %5, gpr_idx(DST)\n"
      "v_mov_b32 v10, 7\n"
      "s_set_gpr_idx_off\n"
      "v_mov_b32 %2, v11\n"
      "s_mov_b32 m0, %3\n"
      : "=&v"(a), "=&v"(b), "=&v"(c), "=&s"(saved_m0)
      : "v"(t), "s"(idx)
      : "v10", "v11", "v12", "v13");
  out[3 * t + 0] = a;
  out[3 * t + 1] = b;
  out[3 * t + 2] = c;
}
