// hipattn/kernels/cdna/pingpong_config.hpp: the CDNA ping-pong schedule's configuration (ALGORITHM.md section 13).
//
// PingPongConfig<Base> runs the attention skeleton instance Base (an AttentionConfig: its warp tile, row
// map, LDS layout and epilogue) with the ping-pong mainloop (kernels/cdna/pingpong_mainloop.hpp):
// Base's kWarpsM waves, each owning 16 query rows and all of a KV tile's keys, split into two groups
// of kWarpsM / 2 that take turns: while one group's waves run their matrix products, the other's run
// the softmax and issue the next tiles' loads, with a workgroup barrier between phases. On gfx950,
// eight waves (two a SIMD, one of each group) is HipKittens' eight-wave schedule for MI355X attention.
// The loads are LDS DMA (buffer loads that write LDS, LdsDmaPingPongLoader: a K ring and a V ring of
// two stages, V one tile behind K), so no wave holds tile data in registers.
#pragma once
#include "hipattn/arch/concept.hpp"
#include "hipattn/kernels/common/attention_config.hpp"
#include "hipattn/kernels/cdna/lds_dma_pingpong_loader.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn {

template <class Cfg>
struct PingPongMainloop;  // kernels/cdna/pingpong_mainloop.hpp

template <class Base>
struct PingPongConfig : Base {
  static_assert(is_cdna(Base::kTarget), "the ping-pong schedule is the CDNA targets' (sm_90 has the warpgroup pipeline)");
  static_assert(Base::kCopy == CopyModel::lds_dma, "the ping-pong schedule loads by LDS DMA");
  static_assert(Base::kWarpsN == 1 && Base::kWarpsM % 2 == 0,
                "two equal groups of waves, each wave over all of a tile's keys");
  static_assert(!Base::kFp8 && Base::kDqk == Base::kDv && !Base::kVInK && !Base::kVFromK,
                "16-bit K and V tiles of one head size");
  using PingPongBase = Base;
  static constexpr bool kPingPong = true;
  // The warp tile (named here for the skeleton, kernels/common/attention_kernel.hpp warp_tile_t):
  // waves of 32 rows (Base::kMT == 2) take the target's 32-row tile of 32x32 MFMAs (Arch::WarpTile32:
  // each K and V element read once for 32 rows, half the MFMA issues and one lane exchange a row
  // reduction, against two 16-row blocks), waves of 16 rows the skeleton's tile.
  static_assert(Base::kMT == 1 || (Base::kMT == 2 && Base::kKN % 32 == 0), "16-row waves, or 32-row waves over 32-key blocks");
  // (only the tile the configuration takes is named: an arch without a 32-row tile serves 16-row waves)
  template <class Arch, bool kWide = Base::kMT == 2>
  struct TileOf {
    using type = typename Arch::template WarpTile<Base::kBf16, Base::kDqk, 1, Base::kKN, Base::kDv>;
  };
  template <class Arch>
  struct TileOf<Arch, true> {
    using type = typename Arch::template WarpTile32<Base::kBf16, Base::kDqk, Base::kKN, Base::kDv>;
  };
  template <class Arch>
  using WarpTileOf = typename TileOf<Arch>::type;
  static constexpr int kGroupWaves = Base::kWarpsM / 2;
  using Loader = LdsDmaPingPongLoader<PingPongConfig>;
  using Mainloop = PingPongMainloop<PingPongConfig>;
  // Registers for as many workgroups as the CU's LDS holds (d = 128: two of 64 KiB, so four waves a
  // SIMD and 128 VGPRs a wave; d = 256: one), the kernels' occupancy hint (kernel_waves_per_simd).
  static constexpr int kWavesPerSimd = [] {
    const int wgs = target_lds_bytes(Base::kTarget) / Base::kSmemBytes;
    const int w = (wgs > 0 ? wgs : 1) * Base::kWarps / 4;
    return w < 1 ? 1 : w > 8 ? 8 : w;
  }();
  // Q's fragments stay in registers (16 VGPRs a wave at d = 128), or each QK^T reads them from LDS.
  // A paged layout's loader holds two tiles' block ids, and at four waves a SIMD (128 VGPRs) Q's
  // registers left the compiler no margin: the unified d = 128 kernel spilled in some translation
  // units. Its matrix phase has room for the reads (the softmax phase is the longer one).
  static constexpr bool kQInRegs = Base::KvLayout::kDense || kWavesPerSimd < 4;

  static constexpr FixedString name() {
    FixedString f = shape_name(Base::kShape);
    f.field("mainloop", "pingpong");
    return f.field("variant", variant_name<typename Base::Variant>());
  }
};

// Whether an instance runs the ping-pong mainloop (configurations without kPingPong do not).
template <class Cfg>
constexpr bool pingpong_schedule() {
  if constexpr (requires { Cfg::kPingPong; }) return Cfg::kPingPong;
  else return false;
}

}  // namespace hipattn

#include "hipattn/kernels/cdna/pingpong_mainloop.hpp"
