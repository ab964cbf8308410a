// tests/emu/kernels/buffer.hip: buffer (MUBUF) loads with the hardware's range check, and buffer
// loads straight into LDS (LDS DMA, M0-based), the two mechanisms the AMD pipeline's loaders use
// (test_emu_buffer.cpp).
#include <hip/hip_runtime.h>

__device__ inline __amdgpu_buffer_rsrc_t make_rsrc(const void* base, unsigned bytes) {
  // stride 0 (a raw buffer), num_records = bytes; the last word: the data format of a plain dword
  return __builtin_amdgcn_make_buffer_rsrc(const_cast<void*>(base), (short)0, bytes, 0x00020000);
}

// Each wave stages 64 dwords of `in` into LDS by DMA, the other wave reads them after the barrier;
// a second, plain buffer load reads past `in_bytes` for the last lanes (range check: 0).
extern "C" __global__ void __launch_bounds__(128) buffer_stage(const float* in, float* out, unsigned in_bytes) {
  __shared__ float tile[128];
  const int t = threadIdx.x;
  const __amdgpu_buffer_rsrc_t r = make_rsrc(in, in_bytes);
  __builtin_amdgcn_raw_ptr_buffer_load_lds(r, (__attribute__((address_space(3))) void*)(tile + (t / 64) * 64), 4,
                                           t * 4 + blockIdx.x * 512, 0, 0, 0);
  __builtin_amdgcn_s_waitcnt(0);
  __syncthreads();
  const unsigned u = __builtin_amdgcn_raw_buffer_load_b32(r, (t + 96) * 4 + blockIdx.x * 512, 0, 0);
  out[blockIdx.x * 128 + t] = tile[(t + 64) % 128] + __builtin_bit_cast(float, u);
}
