// tests/emu/kernels/timing.hip: instruction sequences whose time the timing layer's rules fix
// exactly (test_emu_timing.cpp): a chain of MFMAs, of VALU FMAs, of transcendentals, LDS reads with
// and without bank conflicts, and global loads behind one wait. Each kernel is one wave of 64 lanes;
// the sequences are inline assembly so that the compiler neither reorders nor removes them.
#include <hip/hip_runtime.h>

typedef float f32x16 __attribute__((ext_vector_type(16)));
typedef short bf16x4 __attribute__((ext_vector_type(4)));

// 32 MFMAs 32x32x8 bf16 accumulating into one C (8 passes each: the matrix pipe is busy 32 x 32 clocks).
extern "C" __global__ void __launch_bounds__(64) timing_mfma(float* out, const short* in) {
  const int t = threadIdx.x;
  bf16x4 a = {in[t], in[t + 64], in[t + 128], in[t + 192]};
  f32x16 c = {};
#pragma unroll
  for (int i = 0; i < 32; ++i) c = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, a, c, 0, 0, 0);
  for (int i = 0; i < 16; ++i) out[t * 16 + i] = c[i];
}

// 128 dependent v_fmac_f32 (full rate: one per 4 clocks).
extern "C" __global__ void __launch_bounds__(64) timing_valu(float* out, const float* in) {
  float x = in[threadIdx.x], y = in[threadIdx.x + 64];
  for (int i = 0; i < 16; ++i)
    asm volatile(
        "v_fmac_f32 %0, %1, %1\n v_fmac_f32 %0, %1, %1\n v_fmac_f32 %0, %1, %1\n v_fmac_f32 %0, %1, %1\n"
        "v_fmac_f32 %0, %1, %1\n v_fmac_f32 %0, %1, %1\n v_fmac_f32 %0, %1, %1\n v_fmac_f32 %0, %1, %1"
        : "+v"(x) : "v"(y));
  out[threadIdx.x] = x;
}

// 64 v_exp_f32 (quarter rate).
extern "C" __global__ void __launch_bounds__(64) timing_trans(float* out, const float* in) {
  float x = in[threadIdx.x];
  for (int i = 0; i < 8; ++i)
    asm volatile(
        "v_exp_f32 %0, %0\n v_exp_f32 %0, %0\n v_exp_f32 %0, %0\n v_exp_f32 %0, %0\n"
        "v_exp_f32 %0, %0\n v_exp_f32 %0, %0\n v_exp_f32 %0, %0\n v_exp_f32 %0, %0"
        : "+v"(x));
  out[threadIdx.x] = x;
}

// 32 LDS dword reads (4 groups of 8, each followed by a wait) at lane * stride dwords: stride 1 has
// no conflict; stride 32 on 32 banks (64 on 64 banks) puts every lane in one bank. `s` is the only
// LDS variable, so its LDS address is 0.
extern "C" __global__ void __launch_bounds__(64) timing_lds(float* out, const float* in, int stride) {
  __shared__ float s[64 * 64 + 64];
  for (int i = threadIdx.x; i < 64 * 64 + 64; i += 64) s[i] = in[i % 128];
  __syncthreads();
  // the LDS address (address space 3) of the lane's first dword
  typedef __attribute__((address_space(3))) float lds_float;
  const unsigned addr = unsigned(uintptr_t((lds_float*)(&s[(threadIdx.x * stride) % (64 * 64)])));
  float acc = 0;
  for (int g = 0; g < 4; ++g) {
    float r[8];
    asm volatile(
        "ds_read_b32 %0, %8\n ds_read_b32 %1, %8 offset:4\n ds_read_b32 %2, %8 offset:8\n"
        "ds_read_b32 %3, %8 offset:12\n ds_read_b32 %4, %8 offset:16\n ds_read_b32 %5, %8 offset:20\n"
        "ds_read_b32 %6, %8 offset:24\n ds_read_b32 %7, %8 offset:28\n s_waitcnt lgkmcnt(0)"
        : "=v"(r[0]), "=v"(r[1]), "=v"(r[2]), "=v"(r[3]), "=v"(r[4]), "=v"(r[5]), "=v"(r[6]), "=v"(r[7])
        : "v"(addr)
        : "memory");
    for (int i = 0; i < 8; ++i) acc += r[i] * float(g * 8 + i + 1);
  }
  out[threadIdx.x] = acc;
}

// 16 independent 16-byte global loads per lane, then one wait: the memory path's latency once and
// its bandwidth for the bytes.
extern "C" __global__ void __launch_bounds__(64) timing_vmem(float* out, const float4* in) {
  float4 v[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) v[i] = in[i * 64 + threadIdx.x];
  float acc = 0;
#pragma unroll
  for (int i = 0; i < 16; ++i) acc += v[i].x + v[i].y + v[i].z + v[i].w;
  out[threadIdx.x] = acc;
}
