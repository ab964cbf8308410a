// hipattn/arch/sm90/arch.hpp: the sm_90 implementation of the one architecture interface.
//
// Interface (every arch/<isa>/arch.hpp provides the same names):
//   kTarget, kWaveSize
//   template <bool kBf16, int kDqk, int kMT, int kKN, int kDv = kDqk, KvKind, int kVRow = kDv> using WarpTile
//                                                   (see warp_tile.hpp; kVRow: V's LDS row length)
//   copy_16(lds, gmem, valid), copy_4(...) / copy_commit() / copy_wait<N>()    16-byte global -> LDS copies
//   load_16(gmem, valid) / store_16(lds, chunk), load_8, load_4 / store_4   register-staged copies
//   kCopyModel                                                        which of the two the loaders use
//   sync(), lane(), exp2(x), tanh(x), pack2<kBf16>(lo, hi), fp8x2<kFnuz>(a, b), group_max(v, lanes)
//   grid_dependency_wait(), grid_dependency_trigger()     programmatic dependent launch (griddepcontrol)
// sm_90's loaders copy asynchronously (cp.async: copy_commit groups, copy_wait<N> waits); the
// register-staged copies (plain loads and stores) serve fp8 prefill tiles at d = 64 / 128 (kv_copy_model).
// Beyond the interface, sm_90a's warpgroup MMA atoms, descriptors and fences are in wgmma.hpp.
#pragma once
#include "hipattn/arch/concept.hpp"
#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/numeric/fp8.hpp"
#include "hipattn/arch/sm90/atoms.hpp"
#include "hipattn/arch/sm90/warp_tile.hpp"
#include "hipattn/arch/sm90/wgmma.hpp"
#include "hipattn/arch/sm90/tma.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn::sm90 {

struct Arch {
  static constexpr Target kTarget = Target::sm90;
  static constexpr int kWaveSize = 32;
  static constexpr CopyModel kCopyModel = CopyModel::async;
  // kKv: what the K / V tiles hold (same16, or fp8 codes converted at the fragment).
  template <bool kBf16, int kD, int kMT, int kKN, int kDv = kD, KvKind kKv = KvKind::same16, int kVRow = kDv>
  using WarpTile = sm90::WarpTile<kBf16, kD, kMT, kKN, kDv, kKv, kVRow>;

#if defined(HIPATTN_BACKEND_CUDA)
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_16(void* lds, const void* g, bool valid) { cp_async_16(lds, g, valid); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_4(void* lds, const void* g, bool valid) { cp_async_4(lds, g, valid); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static ::hipattn::u32x4 load_16(const void* g, bool valid) {
    const uint4 v = *static_cast<const uint4*>(g);
    return valid ? ::hipattn::u32x4{v.x, v.y, v.z, v.w} : ::hipattn::u32x4{0u, 0u, 0u, 0u};
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store_16(void* lds, const ::hipattn::u32x4& c) {
    *static_cast<uint4*>(lds) = make_uint4(c.x, c.y, c.z, c.w);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static ::hipattn::u32x2 load_8(const void* g, bool valid) {
    const uint2 v = *static_cast<const uint2*>(g);
    return valid ? ::hipattn::u32x2{v.x, v.y} : ::hipattn::u32x2{0u, 0u};
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t load_4(const void* g, bool valid) {
    const uint32_t v = *static_cast<const uint32_t*>(g);
    return valid ? v : 0u;
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store_4(void* lds, uint32_t v) { *static_cast<uint32_t*>(lds) = v; }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_commit() { cp_async_commit(); }
  template <int N>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_wait() { cp_async_wait<N>(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void sync() { __syncthreads(); }
  // Programmatic dependent launch (a kernel launched with rt::LaunchOrder::programmatic may start
  // while the stream's previous kernel still runs, platform/runtime.hpp rt::launch):
  // grid_dependency_wait() returns once that kernel has completed and its writes are visible
  // (griddepcontrol.wait; at once in a kernel launched in stream order); grid_dependency_trigger()
  // lets the stream's next programmatically launched kernel start once every workgroup of this one
  // has called it or exited (griddepcontrol.launch_dependents; it orders no memory).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void grid_dependency_trigger() {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
    asm volatile("griddepcontrol.launch_dependents;");
#endif
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static int lane() { return lane_id(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float exp2(float x) { return fast_exp2(x); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float tanh(float x) { return fast_tanh(x); }
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack2(float lo, float hi) {
    if constexpr (kBf16) return pack_bf16x2(lo, hi); else return pack_f16x2(lo, hi);
  }
  // Two floats -> two fp8 codes (low byte a): RNE, saturating to the largest finite value, NaN a NaN
  // code (numeric/fp8.hpp's rules). e4m3fn by the hardware's cvt.rn.satfinite; e4m3fnuz, which sm_90
  // cannot convert to, through the same instruction on 2x (fp8_e4m3fnuz_bits_from_fn2x).
  template <bool kFnuz>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t fp8x2(float a, float b) {
    if constexpr (!kFnuz) {
      return pack_e4m3x2(a, b);
    } else {
      const uint32_t r = pack_e4m3x2(2.f * a, 2.f * b);
      return ::hipattn::fp8_e4m3fnuz_bits_from_fn2x(a, r & 0xffu) |
             (::hipattn::fp8_e4m3fnuz_bits_from_fn2x(b, r >> 8) << 8);
    }
  }
  // The max over each aligned group of `lanes` lanes (a power of two, 1 to 32), every lane of the
  // group active (the shuffles name only the group's lanes: other lanes may have exited).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float group_max(float v, int lanes) {
    const uint32_t base = static_cast<uint32_t>(lane_id()) & ~static_cast<uint32_t>(lanes - 1);
    const uint32_t mask = lanes >= 32 ? 0xffffffffu : ((1u << lanes) - 1u) << base;
    for (int m = 1; m < lanes; m <<= 1) v = fmaxf(v, __shfl_xor_sync(mask, v, m));
    return v;
  }

  // Four fp8 codes (byte i = element i) -> the q dtype's 16-bit pairs: atoms.hpp dequant_fp8x4.
  template <KvKind kKv, bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void dequant_fp8x4(uint32_t x, uint32_t& lo, uint32_t& hi) {
    sm90::dequant_fp8x4<kKv, kBf16>(x, lo, hi);
  }
#endif
};

}  // namespace hipattn::sm90
