// tests/common/loader_policies.hpp: the CDNA KV loader policy a target does NOT use by default for a
// 16-bit cache (arch/concept.hpp kv_copy_model), on the dispatcher's tile of that target, with two LDS
// stages where it is the LDS-DMA loader. tests/isa/unified_kernels.hip instantiates these next to the
// default ones, so that tools/amdgpu_model.py compares the two policies on the same tiles, and
// tests/emu runs them against the float64 reference (EmuLoaderPolicy): both policies run on both
// targets, whichever the dispatcher picks.
#pragma once
#include "hipattn/dispatch/unified_plan.hpp"

namespace hipattn::testing {

template <Target kT, int kD>
inline constexpr CopyModel kOtherCdnaCopy =
    kv_copy_model(kT, false, kD, false) == CopyModel::lds_dma ? CopyModel::register_staged : CopyModel::lds_dma;

template <bool kBf16, int kD, UnifiedTileKind kKind, class Variant, Target kT>
struct OtherCopyInstance {
  static_assert(is_cdna(kT), "the CDNA loader policies");
  static constexpr UnifiedTile t = unified_tile(kKind, kD, kT, false);
  static constexpr CopyModel kCopy = kOtherCdnaCopy<kT, kD>;
  static constexpr int kStages = kCopy == CopyModel::lds_dma ? 2 : t.stages;
  using type = AttentionConfig<with_copy(attention_shape(kBf16, KvKind::same16, kD, kD,
                                                        TileShape{t.warps_m, t.warps_n, t.mt, t.kn, kStages}, kT),
                                        kCopy),
                              Variant>;
  static_assert(type::kSmemBytes <= target_lds_bytes(kT), "the tile fits its target's LDS");
};
template <bool kBf16, int kD, UnifiedTileKind kKind, class Variant, Target kT>
using other_copy_config_t = typename OtherCopyInstance<kBf16, kD, kKind, Variant, kT>::type;

}  // namespace hipattn::testing
