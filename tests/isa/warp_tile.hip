// tests/isa/warp_tile.hip: the warp tile of the target's DeviceArch (cdna3 on gfx942, cdna4 on gfx950)
// in one kernel per (dtype, head size, rows, keys): load_q, qk, qk_lds, row_max / row_sum, pv, and the
// Arch copies, so that check_isa.py can assert the MFMA / LDS / lane instructions of the tile.
#include "hipattn/arch/arch.hpp"
#include "warp_tile_manifest.hpp"

using hipattn::DeviceArch;

template <bool kBf16, int kD, int kMT, int kKN>
__global__ void __launch_bounds__(64) warp_tile_kernel(const uint16_t* g, const float* scale, float* out, int key0) {
  HIPATTN_KERNEL_MANIFEST(hipattn::isa_test::warp_tile_manifest(kBf16, kD, kMT, kKN));  // what check_isa.py reads
  using WT = typename DeviceArch::template WarpTile<kBf16, kD, kMT, kKN>;
  constexpr int kQRows = 16 * kMT, kKeys = kKN + 16;
  constexpr int kP = hipattn::SwizzledTile<1, kD>::kPitch;  // row pitch (d = 96: 128, padded)
  __shared__ __attribute__((aligned(16))) uint16_t lds[(kQRows + 2 * kKeys) * kP];
  __shared__ float lds_scale[64];
  const int lane = DeviceArch::lane();
  for (int i = lane; i < (kQRows + 2 * kKeys) * kP / 8; i += 64) DeviceArch::copy_16(lds + 8 * i, g + 8 * i, (i & 7) != 5);
  DeviceArch::copy_4(lds_scale + lane, scale + lane, lane != 3);
  DeviceArch::copy_commit();
  DeviceArch::copy_wait<0>();
  DeviceArch::sync();
  const uint16_t* lq = lds;
  const uint16_t* lk = lds + kQRows * kP;
  const uint16_t* lv = lk + kKeys * kP;
  typename WT::QFrag q;
  typename WT::SFrag s;
  typename WT::OFrag o;
#pragma unroll
  for (int e = 0; e < WT::kOElems; ++e) o.r[e] = 0.f;
  WT::load_q(q, lq, 0);
  WT::qk(s, q, lk, key0);
  float m[WT::kRowSlots], l[WT::kRowSlots];
#pragma unroll
  for (int r = 0; r < WT::kRowSlots; ++r) m[r] = -INFINITY, l[r] = 0.f;
#pragma unroll
  for (int e = 0; e < WT::kSElems; ++e) m[WT::s_slot(e)] = fmaxf(m[WT::s_slot(e)], s.r[e] * lds_scale[WT::s_col(lane, e)]);
#pragma unroll
  for (int r = 0; r < WT::kRowSlots; ++r) m[r] = WT::row_max(m[r]);
#pragma unroll
  for (int e = 0; e < WT::kSElems; ++e) {
    s.r[e] = DeviceArch::exp2(s.r[e] - m[WT::s_slot(e)]);
    l[WT::s_slot(e)] += s.r[e];
  }
  WT::pv(o, s, lv, key0);
  WT::qk_lds(s, lq, 0, lk, 0);
  WT::pv(o, s, lv, 0);
#pragma unroll
  for (int r = 0; r < WT::kRowSlots; ++r) l[r] = WT::row_sum(l[r]);
#pragma unroll
  for (int e = 0; e < WT::kOElems; e += 2) {
    const int row = WT::slot_row(lane, WT::o_slot(e));
    const float f = 1.f / l[WT::o_slot(e)];
    reinterpret_cast<uint32_t*>(out)[row * kD / 2 + WT::o_col(lane, e) / 2] =
        DeviceArch::pack2<kBf16>(DeviceArch::tanh(o.r[e] * f), o.r[e + 1] * f);
  }
}

#define HIPATTN_ISA_WARP_TILE(BF16, D, MT, KN) \
  template __global__ void warp_tile_kernel<BF16, D, MT, KN>(const uint16_t*, const float*, float*, int);
HIPATTN_ISA_WARP_TILE(true, 64, 1, 16)
HIPATTN_ISA_WARP_TILE(true, 128, 1, 16)
HIPATTN_ISA_WARP_TILE(true, 128, 1, 64)
HIPATTN_ISA_WARP_TILE(false, 128, 1, 64)
HIPATTN_ISA_WARP_TILE(true, 128, 2, 32)
HIPATTN_ISA_WARP_TILE(true, 256, 1, 32)
HIPATTN_ISA_WARP_TILE(false, 256, 1, 16)
HIPATTN_ISA_WARP_TILE(true, 96, 1, 32)
HIPATTN_ISA_WARP_TILE(false, 96, 1, 16)
