// hipattn/arch/sm90/arch.hpp: the sm_90 implementation of the one architecture interface.
//
// Interface (every arch/<isa>/arch.hpp provides the same names):
//   kTarget, kWaveSize
//   template <bool kBf16, int kDqk, int kMT, int kKN, int kDv = kDqk> using WarpTile   (see warp_tile.hpp)
//   copy_16(lds, gmem, valid), copy_4(...) / copy_commit() / copy_wait<N>()    16-byte global -> LDS copies
//   sync(), lane(), exp2(x), tanh(x), pack2<kBf16>(lo, hi)
#pragma once
#include "hipattn/arch/sm90/atoms.hpp"
#include "hipattn/arch/sm90/warp_tile.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn::sm90 {

struct Arch {
  static constexpr Target kTarget = Target::sm90;
  static constexpr int kWaveSize = 32;
  template <bool kBf16, int kD, int kMT, int kKN, int kDv = kD>
  using WarpTile = sm90::WarpTile<kBf16, kD, kMT, kKN, kDv>;

#if defined(HIPATTN_BACKEND_CUDA)
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_16(void* lds, const void* g, bool valid) { cp_async_16(lds, g, valid); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_4(void* lds, const void* g, bool valid) { cp_async_4(lds, g, valid); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_commit() { cp_async_commit(); }
  template <int N>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_wait() { cp_async_wait<N>(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void sync() { __syncthreads(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static int lane() { return lane_id(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float exp2(float x) { return fast_exp2(x); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float tanh(float x) { return fast_tanh(x); }
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack2(float lo, float hi) {
    if constexpr (kBf16) return pack_bf16x2(lo, hi); else return pack_f16x2(lo, hi);
  }
#endif
};

}  // namespace hipattn::sm90
