// The smoke kernel: uses platform/ and numeric/ on the device and prints what it found. With no GPU
// it says so and exits 0.
#include <cstdio>
#include <vector>

#include "hipattn/numeric/numeric.hpp"
#include "hipattn/platform/runtime.hpp"

// Round-trips every fp8 code through float on the device and counts mismatches with the host.
__global__ void smoke_fp8_kernel(unsigned* mismatches) {
  const unsigned code = threadIdx.x;
  const float f = hipattn::fp8_e4m3fn_t::from_bits(static_cast<uint8_t>(code)).to_float();
  const uint8_t back = hipattn::fp8_e4m3fn_t::from_float(f).bits;
  const bool nan = (code & 0x7Fu) == 0x7Fu;
  if (!nan && back != code) atomicAdd(mismatches, 1u);
}

int main() {
  int n = 0;
  if (hipattn::rt::get_device_count(&n) != hipattn::rt::success || n == 0) {
    std::printf("hipattn smoke: no GPU present\n");
    return 0;
  }
  const auto props = hipattn::rt::device_properties();
  std::printf("hipattn smoke: device %s (target %s), %d SMs/CUs, wave %d, LDS opt-in %zu bytes, L2 %zu bytes\n",
              props.arch_name.c_str(), std::string(hipattn::target_name(props.target)).c_str(),
              props.multiprocessor_count, props.wave_size, props.lds_per_block_optin, props.l2_bytes);
  unsigned* d = nullptr;
  HIPATTN_CHECK(hipattn::rt::malloc_device(reinterpret_cast<void**>(&d), sizeof(unsigned)));
  HIPATTN_CHECK(hipattn::rt::memset_async(d, 0, sizeof(unsigned), nullptr));
  smoke_fp8_kernel<<<1, 256>>>(d);
  HIPATTN_CHECK_LAUNCH();
  unsigned h = 0;
  HIPATTN_CHECK(hipattn::rt::memcpy_d2h(&h, d, sizeof(unsigned)));
  HIPATTN_CHECK(hipattn::rt::free_device(d));
  std::printf("hipattn smoke: fp8 e4m3fn round trip of 256 codes on the device: %u mismatches\n", h);
  return h == 0 ? 0 : 1;
}
