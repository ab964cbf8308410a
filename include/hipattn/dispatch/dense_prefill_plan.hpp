// hipattn/dispatch/dense_prefill_plan.hpp: the instance choice of dense prefill (host only): the key
// of a problem, where gfx950's ping-pong schedule serves, and the CDNA configuration a key and that
// choice run (visit_dense_cdna_config). sm_90 has one configuration a key (DensePrefillSm90Config).
#pragma once
#include <cstdint>

#include "hipattn/dispatch/tiles/tiles.hpp"
#include "hipattn/kernels/dense_prefill/config.hpp"
#include "hipattn/platform/target.hpp"
#include "hipattn/problem/dense_prefill_params.hpp"
#include "hipattn/problem/dense_prefill_rules.hpp"
#include "hipattn/problem/instance_key.hpp"

namespace hipattn {

// The instance a call needs on `target` (a row of problem/instance_table.hpp).
inline InstanceKey dense_prefill_instance_key(const DensePrefillParams& p, Target target) {
  InstanceKey k;
  k.family = Family::dense_prefill;
  k.target = target;
  k.bf16 = p.dtype == DType::bf16;
  k.kv = KvKind::same16;
  k.head_size = p.head_size_qk;
  k.head_size_v = p.head_size_v;
  k.variant = p.softcap > 0.f ? VariantKind::softcap : VariantKind::plain;
  return k;
}

namespace detail {

// The instance of a CDNA target: its prefill tile of d_qk (dispatch/tiles) over
// DenseKvLayout; (d_qk, d_v) = (192, 128): that tile with 128-column V rows and O.
template <Target kT, bool kBf16, int kDqk, int kDv, class Variant>
struct DenseSkeletonInstance {
  static constexpr UnifiedTile t = unified_tile_for_copy(unified_tile(UnifiedTileKind::prefill, kDqk, kT, false), CopyModel::register_staged);
  using type = AttentionConfig<dense_skeleton_shape(kT, kBf16, kDqk, kDv, t.shape()), Variant>;
};
template <Target kT, bool kBf16, int kD, class Variant>
using dense_skeleton_config_t = typename DenseSkeletonInstance<kT, bool(kBf16), kD, kD, Variant>::type;
template <Target kT, bool kBf16, class Variant>
using dense_skeleton_narrow_v_config_t = typename DenseSkeletonInstance<kT, kBf16, 192, 128, Variant>::type;

// Whether the ping-pong schedule serves (head size, softcap) on `target`: gfx950 (its 160 KiB of LDS and
// 16-byte LDS DMA) at d = 256, and at d = 128 without softcap. Elsewhere the AMD model puts the
// skeleton's tile ahead (bench/NOTES.md "AMD: the ping-pong schedule", bf16: d 64 0.45 against 0.36 with
// 64-key ping-pong tiles; d 128 softcap 0.35 against 0.32; gfx942's 64 KiB hold no ping-pong tile).
inline constexpr bool dense_pingpong_instance(Target target, int d_qk, int d_v, bool softcap) {
  return target == Target::gfx950 && d_qk == d_v && (d_qk == 256 || (d_qk == 128 && !softcap));
}
// ... and `p` on `target`, with K and V within the LDS DMA's buffer range of their bases
// (kernels/common/loaders/ kLdsDmaWindow); otherwise the skeleton's tile.
inline bool dense_pingpong(const DensePrefillParams& p, Target target) {
  using namespace dense_prefill_rules;
  if (!dense_pingpong_instance(target, p.head_size_qk, p.head_size_v, p.softcap > 0.f)) return false;
  const int64_t b = dtype_size(p.dtype);
  return validation::extent_bytes(k_dims(p), b) <= kLdsDmaWindow && validation::extent_bytes(v_dims(p), b) <= kLdsDmaWindow;
}

// The instance a CDNA target launches for (dtype, head sizes, softcap) and the schedule (pingpong:
// dense_pingpong's answer): f.template operator()<Cfg>().
template <Target kT, bool kBf16, int kDqk, int kDv, bool kSoftcap, class F>
void visit_dense_cdna_config(bool pingpong, F&& f) {
  using Variant = StandardVariant<kSoftcap, false, false>;
  if constexpr (dense_pingpong_instance(kT, kDqk, kDv, kSoftcap)) {
    if (pingpong) return f.template operator()<DensePingPongConfig<kT, kBf16, kDqk, Variant>>();
  }
  f.template operator()<typename DenseSkeletonInstance<kT, kBf16, kDqk, kDv, Variant>::type>();
}
// ... for run-time (dtype, head size, softcap): the emulated tests visit the same choice.
template <Target kT, class F>
void visit_dense_cdna_instance(bool bf16, int d_qk, bool softcap, bool pingpong, F&& f) {
  const auto go = [&]<bool kBf16, bool kSoftcap>() {
    if (d_qk == 64) visit_dense_cdna_config<kT, kBf16, 64, 64, kSoftcap>(pingpong, f);
    else if (d_qk == 128) visit_dense_cdna_config<kT, kBf16, 128, 128, kSoftcap>(pingpong, f);
    else if (d_qk == 256) visit_dense_cdna_config<kT, kBf16, 256, 256, kSoftcap>(pingpong, f);
    else visit_dense_cdna_config<kT, kBf16, 192, 128, kSoftcap>(pingpong, f);  // validated
  };
  if (bf16 && softcap) go.template operator()<true, true>();
  else if (bf16) go.template operator()<true, false>();
  else if (softcap) go.template operator()<false, true>();
  else go.template operator()<false, false>();
}

}  // namespace detail
}  // namespace hipattn
