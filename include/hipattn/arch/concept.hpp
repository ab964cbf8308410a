// hipattn/arch/concept.hpp: the one architecture interface, stated as C++20 concepts.
//
// Every arch/<isa>/arch.hpp provides an `Arch` that models AttentionArch, and its WarpTile models
// AttentionWarpTile; arch/arch.hpp checks the device's arch with static_assert where it is chosen,
// so an ISA folder that drifts from the interface fails to compile there, not deep in a kernel.
//   ArchOf<Target>   the Arch of a target (gfx942 -> cdna3, gfx950 -> cdna4, sm_90 -> sm90)
#pragma once
#include <concepts>
#include <cstdint>

#include "hipattn/kernels/common/kv_kind.hpp"
#include "hipattn/numeric/vec.hpp"
#include "hipattn/platform/config.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn {

// The attention warp tile (arch/<isa>/warp_tile.hpp): fragments and their element maps (host and
// device), and the products and row reductions (device).
template <class WT>
concept AttentionWarpTile = requires(int lane, int e, int slot) {
  { WT::kRowSlots } -> std::convertible_to<int>;  // rows a lane holds
  { WT::kRows } -> std::convertible_to<int>;      // rows of the warp
  { WT::kSElems } -> std::convertible_to<int>;    // S fragment elements per lane
  { WT::kOElems } -> std::convertible_to<int>;    // O fragment elements per lane
  typename WT::QFrag;
  typename WT::SFrag;
  typename WT::OFrag;
  { WT::slot_row(lane, slot) } -> std::same_as<int>;
  { WT::s_slot(e) } -> std::same_as<int>;
  { WT::s_col(lane, e) } -> std::same_as<int>;
  { WT::o_slot(e) } -> std::same_as<int>;
  { WT::o_col(lane, e) } -> std::same_as<int>;
  { WT::row_leader(lane) } -> std::same_as<bool>;
#if defined(HIPATTN_HAS_DEVICE)
} && requires(typename WT::QFrag& q, typename WT::SFrag& s, typename WT::OFrag& o, const uint16_t* lds, int row0,
              float v) {
  WT::load_q(q, lds, row0);
  WT::qk(s, q, lds, row0);
  WT::qk_lds(s, lds, row0, lds, row0);
  WT::pv(o, s, lds, row0);
  { WT::row_max(v) } -> std::same_as<float>;
  { WT::row_sum(v) } -> std::same_as<float>;
#endif
};

// How a target's loaders move tiles into LDS: asynchronous copies (cp.async on sm_90: issue, commit
// a group, wait for it) or loads staged through registers (CDNA: issue every load of the next tile,
// compute the current one, store the registers).
enum class CopyModel : uint8_t { async, register_staged };

// The copy model of a target, for host-visible configuration (LDS sizes, the loader slot);
// arch/arch.hpp checks that the device's Arch says the same.
constexpr CopyModel copy_model_of(Target t) {
  return t == Target::gfx942 || t == Target::gfx950 ? CopyModel::register_staged : CopyModel::async;
}

// The architecture: target, wave size, the warp tile family, its copy model; copies global -> LDS
// (asynchronous where the ISA has them: copy_commit closes a group, copy_wait<N> waits until at most
// N groups are in flight) and register-staged ones (load_16 / store_16, load_4 / store_4), the
// workgroup barrier and the fast math the kernels use.
template <class A>
concept AttentionArch = requires {
  { A::kTarget } -> std::convertible_to<Target>;
  { A::kWaveSize } -> std::convertible_to<int>;
  { A::kCopyModel } -> std::convertible_to<CopyModel>;
  requires AttentionWarpTile<typename A::template WarpTile<true, 64, 1, 16>>;
  requires AttentionWarpTile<typename A::template WarpTile<false, 128, 1, 32, 128>>;
#if defined(HIPATTN_HAS_DEVICE)
} && requires(void* lds, const void* g, bool valid, float x, uint32_t& u) {
  A::copy_16(lds, g, valid);
  A::copy_4(lds, g, valid);
  A::copy_commit();
  { A::load_16(g, valid) } -> std::same_as<u32x4>;
  A::store_16(lds, A::load_16(g, valid));
  { A::load_4(g, valid) } -> std::same_as<uint32_t>;
  A::store_4(lds, A::load_4(g, valid));
  A::template copy_wait<0>();
  A::sync();
  { A::lane() } -> std::same_as<int>;
  { A::exp2(x) } -> std::same_as<float>;
  { A::tanh(x) } -> std::same_as<float>;
  { A::template pack2<true>(x, x) } -> std::same_as<uint32_t>;
  A::template dequant_fp8x4<KvKind::e4m3fn, true>(u, u, u);
#endif
};

// The Arch of a target: specialized by arch/arch.hpp for the targets of the backend being compiled.
template <Target T>
struct ArchOf;

}  // namespace hipattn
