// tests/emu/kernels/checks.hip: the smallest kernel in the shape of hipattn's loaders (global load,
// wait, LDS store, barrier, LDS read of what another wave stored, global store), for the tests that
// show the emulator's checks fire: a wait removed from the code object is a wait-count hazard, a
// barrier removed is an LDS race, a buffer too small is a memory fault (test_emu_checks.cpp).
#include <hip/hip_runtime.h>

extern "C" __global__ void __launch_bounds__(128) stage_through_lds(const float4* in, float* out) {
  __shared__ float4 tile[128];
  const int t = threadIdx.x;
  tile[t] = in[blockIdx.x * 128 + t];
  __syncthreads();
  const float4 v = tile[(t + 64) % 128];  // written by the other wave of the workgroup
  out[blockIdx.x * 128 + t] = v.x * v.y + v.z - v.w;
}
