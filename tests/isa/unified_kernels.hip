// tests/isa/unified_kernels.hip: the unified attention kernels of the default scenarios, explicitly
// instantiated for one AMD target (wave64), so that their code objects can be checked: MFMA in the
// main loop, no scratch, no spills (check_isa.py, tools/amdgpu_resources.py).
//
// Tiles: dispatch/tiles' gfx942_tile() / gfx950_tile() (the tiles the dispatcher launches
// on each, within the target's LDS), per head size and tile kind; kernels: unified_2d_kernel, split_kv_3d_kernel, split_kv_reduce_kernel.
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/kernels/unified/kernels.hpp"
#include "../common/loader_policies.hpp"

namespace hipattn::isa_test {

// The AttentionConfig the dispatcher builds for (q type, kv kind, head size, tile kind, variant) on the
// target of this device pass.
#if defined(HIPATTN_TARGET_GFX950)
inline constexpr Target kIsaTarget = Target::gfx950;
#else
inline constexpr Target kIsaTarget = Target::gfx942;
#endif
template <bool kBf16, KvKind kKv, int kD, UnifiedTileKind kKind, class Variant>
struct AmdConfig {
  static constexpr UnifiedTile t = unified_tile(kKind, kD, kIsaTarget, kKv != KvKind::same16);
  using type = AttentionConfig<attention_shape(kBf16, kKv, kD, kD, t.shape(), kIsaTarget), Variant>;
  static_assert(type::kSmemBytes <= target_lds_bytes(kIsaTarget), "the tile fits its target's LDS");
};

}  // namespace hipattn::isa_test

#define HIPATTN_ISA_CFG(BF16, KV, D, KIND, VARIANT)                                                     \
  ::hipattn::isa_test::AmdConfig<BF16, ::hipattn::KvKind::KV, D, ::hipattn::UnifiedTileKind::KIND,        \
                                 ::hipattn::VARIANT>::type
#define HIPATTN_ISA_UNIFIED(BF16, KV, D, KIND, VARIANT)                                                 \
  template __global__ void ::hipattn::unified_2d_kernel<HIPATTN_ISA_CFG(BF16, KV, D, KIND, VARIANT)>(   \
      const ::hipattn::unified_args_t<HIPATTN_ISA_CFG(BF16, KV, D, KIND, VARIANT)>);                     \
  template __global__ void ::hipattn::split_kv_3d_kernel<HIPATTN_ISA_CFG(BF16, KV, D, KIND, VARIANT)>(  \
      const ::hipattn::unified_args_t<HIPATTN_ISA_CFG(BF16, KV, D, KIND, VARIANT)>);

#define HIPATTN_ISA_CFG_OTHER(D, KIND)                                                                   \
  ::hipattn::testing::other_copy_config_t<true, D, ::hipattn::UnifiedTileKind::KIND, ::hipattn::PlainVariant, \
                                          ::hipattn::isa_test::kIsaTarget>
#define HIPATTN_ISA_UNIFIED_OTHER_COPY(D, KIND)                                                          \
  template __global__ void ::hipattn::unified_2d_kernel<HIPATTN_ISA_CFG_OTHER(D, KIND)>(                  \
      const ::hipattn::unified_args_t<HIPATTN_ISA_CFG_OTHER(D, KIND)>);

// bf16, 16-bit KV, plain variant: every head size x tile kind.
HIPATTN_ISA_UNIFIED(true, same16, 64, decode, PlainVariant)
HIPATTN_ISA_UNIFIED(true, same16, 64, prefill, PlainVariant)
HIPATTN_ISA_UNIFIED(true, same16, 128, decode, PlainVariant)
HIPATTN_ISA_UNIFIED(true, same16, 128, prefill, PlainVariant)
HIPATTN_ISA_UNIFIED(true, same16, 256, decode, PlainVariant)
HIPATTN_ISA_UNIFIED(true, same16, 256, prefill, PlainVariant)
// d = 96 (Phi-3 class): LDS rows of a 128-element pitch, 12 chunks a row (moving-column copies), 3
// 32-column QK^T steps; fp8 KV dequantized into the padded tile.
HIPATTN_ISA_UNIFIED(true, same16, 96, decode, PlainVariant)
HIPATTN_ISA_UNIFIED(true, same16, 96, prefill, PlainVariant)
HIPATTN_ISA_UNIFIED(false, e4m3fnuz, 96, decode, PlainVariant)
// f16 queries, fp8 KV (both encodings), every feature compiled in: d = 128.
HIPATTN_ISA_UNIFIED(false, same16, 128, decode, PlainVariant)
HIPATTN_ISA_UNIFIED(false, same16, 128, prefill, PlainVariant)
HIPATTN_ISA_UNIFIED(true, e4m3fn, 128, decode, PlainVariant)
HIPATTN_ISA_UNIFIED(true, e4m3fnuz, 128, prefill, PlainVariant)
HIPATTN_ISA_UNIFIED(true, same16, 128, decode, FullVariant)
HIPATTN_ISA_UNIFIED(true, same16, 128, prefill, FullVariant)

// The other CDNA loader policy (tests/common/loader_policies.hpp: gfx942 LDS DMA with two stages;
// gfx950 register-staged at d = 64 / 128, LDS DMA at 256), bf16, 16-bit KV, plain variant, 2D kernel: the
// policies side by side in the model's table, and run on the emulator (tests/emu EmuLoaderPolicy).
HIPATTN_ISA_UNIFIED_OTHER_COPY(64, decode)
HIPATTN_ISA_UNIFIED_OTHER_COPY(64, prefill)
HIPATTN_ISA_UNIFIED_OTHER_COPY(128, decode)
HIPATTN_ISA_UNIFIED_OTHER_COPY(128, prefill)
HIPATTN_ISA_UNIFIED_OTHER_COPY(256, decode)
HIPATTN_ISA_UNIFIED_OTHER_COPY(256, prefill)

// The split-KV reduce (no MFMA) for each head size.
template __global__ void ::hipattn::split_kv_reduce_kernel<true, 64, 128>(const ::hipattn::SplitKvReduceArgs);
template __global__ void ::hipattn::split_kv_reduce_kernel<true, 96, 120>(const ::hipattn::SplitKvReduceArgs);
template __global__ void ::hipattn::split_kv_reduce_kernel<true, 128, 128>(const ::hipattn::SplitKvReduceArgs);
template __global__ void ::hipattn::split_kv_reduce_kernel<true, 256, 128>(const ::hipattn::SplitKvReduceArgs);
template __global__ void ::hipattn::split_kv_reduce_kernel<false, 128, 128>(const ::hipattn::SplitKvReduceArgs);
