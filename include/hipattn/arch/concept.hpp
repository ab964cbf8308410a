// hipattn/arch/concept.hpp: the one architecture interface, stated as C++20 concepts.
//
// Every arch/<isa>/arch.hpp provides an `Arch` that models AttentionArch, and its WarpTile models
// AttentionWarpTile; arch/arch.hpp checks the device's arch with static_assert where it is chosen,
// so an ISA folder that drifts from the interface fails to compile there, not deep in a kernel.
//   ArchOf<Target>   the Arch of a target (gfx942 -> cdna3, gfx950 -> cdna4, sm_90 -> sm90)
#pragma once
#include <concepts>
#include <cstdint>

#include "hipattn/numeric/kv_kind.hpp"
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
  WT::pv(o, s, lds, row0, true);  // P <= 1: a tile reading fp8 V may take P in f16
  { WT::row_max(v) } -> std::same_as<float>;
  { WT::row_sum(v) } -> std::same_as<float>;
#endif
};

// How a loader moves tiles into LDS (kernels/common/loaders/ has one policy per model):
//   async            asynchronous 16-byte copies into any LDS address (cp.async on sm_90: issue,
//                    commit a group, wait for it)
//   register_staged  loads staged through registers (CDNA: issue every load of the next tile,
//                    compute the current one, store the registers); fp8 converted in registers
//   lds_dma          CDNA buffer loads that write LDS themselves (buffer_load_dword ... lds on
//                    gfx942, the 16-byte form on gfx950): lane-linear LDS addresses, so the tile's
//                    swizzle is applied on the global side; 16-bit tiles only (no conversion)
enum class CopyModel : uint8_t { async, register_staged, lds_dma };

// The copy model of a target's arch layer (its plain copies); arch/arch.hpp checks that the device's
// Arch says the same.
constexpr CopyModel copy_model_of(Target t) {
  return t == Target::gfx942 || t == Target::gfx950 ? CopyModel::register_staged : CopyModel::async;
}

// Bytes one lane writes with one LDS-DMA load (0: the target has none): gfx942's buffer loads reach
// LDS a dword a lane, gfx950's also 16 bytes a lane.
constexpr int lds_dma_bytes(Target t) { return t == Target::gfx942 ? 4 : t == Target::gfx950 ? 16 : 0; }

// The KV loader policy an instance uses by default, per target, KV storage, head size and whether
// the tile's warps share its keys (warps_share_keys: several row bands read every key of a tile, the
// prefill tiles; decode tiles give each key to one warp). tools/amdgpu_model.py compares the CDNA
// policies; bench/NOTES.md "AMD" has the figures.
//   sm_90: async. An fp8 decode tile (each key read by one warp) keeps the codes in its LDS stages and
//   converts them at the MMA fragment (arch/sm90/warp_tile.hpp, KvKind != same16): half the LDS a
//   stage, no conversion pass, no barrier of its own (bench/NOTES.md run v11). Tiles whose warps share
//   the keys would convert every code once a warp, so they convert once a workgroup: fp8 at d = 64
//   and 128 register_staged (the codes converted in registers on their way to 16-bit LDS stages;
//   decode b64 x 8K 571 -> 466 us against an LDS pass, run v9), at d = 96, 192, 256 async with an LDS
//   pass where each thread converts the chunks it copied (1.02x and 1.15x faster than staged there).
//   CDNA fp8 caches: register_staged.
//   gfx950 16-bit caches, d = 64 and 128: lds_dma (no staging registers: 5 waves per SIMD instead of
//   4 for the d = 64 prefill tile, 3 instead of 2 at d = 128, which outweighs its longer loop in
//   llvm-mca); d = 96 (a quarter of each LDS row is padding the DMA still covers), 192 and 256 (the
//   loop's extra cycles are not repaid by a wave): register_staged. The dispatcher falls back to
//   register_staged for caches beyond the DMA loader's 32-bit buffer offsets (dispatch/unified_plan.hpp).
//   gfx942 16-bit caches: register_staged (its DMA moves a dword a lane: 4x the instructions, and it
//   needs two LDS stages where gfx942's tiles keep one for 2-6 workgroups a CU).
constexpr CopyModel kv_copy_model(Target t, bool fp8, int head_size, bool warps_share_keys) {
  if (!is_cdna(t))
    return fp8 && warps_share_keys && (head_size == 64 || head_size == 128) ? CopyModel::register_staged
                                                                           : CopyModel::async;
  const bool dma = !fp8 && t == Target::gfx950 && (head_size == 64 || head_size == 128);
  return dma ? CopyModel::lds_dma : CopyModel::register_staged;
}

// ... for a KvKind: the fp8 matrix path (the q8 kinds) on sm_90 reads its code tiles by ldmatrix
// from cp.async stages on every tile; on CDNA it is register-staged like every fp8 cache (K stored
// as codes, V converted in registers).
constexpr CopyModel kv_copy_model(Target t, KvKind kv, int head_size, bool warps_share_keys) {
  if (kv_fp8_matmul(kv)) return is_cdna(t) ? CopyModel::register_staged : CopyModel::async;
  return kv_copy_model(t, kv != KvKind::same16, head_size, warps_share_keys);
}

// The architecture: target, wave size, the warp tile family, its copy model; copies global -> LDS
// (asynchronous where the ISA has them: copy_commit closes a group, copy_wait<N> waits until at most
// N groups are in flight) and register-staged ones (load_16 / store_16, load_4 / store_4), the
// workgroup barrier, the fast math the kernels use, and the two hooks of programmatic dependent
// launch (grid_dependency_wait: before a kernel launched with rt::LaunchOrder::programmatic reads
// what the stream's previous kernel wrote; grid_dependency_trigger: the next such kernel may start;
// empty on targets that launch in stream order).
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
  { A::load_8(g, valid) } -> std::same_as<u32x2>;
  { A::load_4(g, valid) } -> std::same_as<uint32_t>;
  A::store_4(lds, A::load_4(g, valid));
  A::template copy_wait<0>();
  A::sync();
  A::grid_dependency_wait();
  A::grid_dependency_trigger();
  { A::lane() } -> std::same_as<int>;
  { A::exp2(x) } -> std::same_as<float>;
  { A::tanh(x) } -> std::same_as<float>;
  { A::template pack2<true>(x, x) } -> std::same_as<uint32_t>;
  { A::group_max(x, 4) } -> std::same_as<float>;
  { A::template fp8x2<true>(x, x) } -> std::same_as<uint32_t>;
  A::template dequant_fp8x4<KvKind::e4m3fn, true>(u, u, u);
#endif
};

// The LDS-DMA copies of a CDNA arch (the lds_dma loader policy): a buffer resource over a base and
// a byte range (reads at or past num_records return zeros), the load that writes kLdsDmaBytes a lane
// at lane-linear LDS addresses from a wave-uniform LDS address, the wait for a wave's outstanding
// DMA loads, and a value made wave-uniform (the wave's LDS offset, computed from the thread id).
template <class A>
concept LdsDmaArch = requires {
  { A::kLdsDmaBytes } -> std::convertible_to<int>;
  typename A::BufferRsrc;
#if defined(HIPATTN_HAS_DEVICE)
} && requires(const void* p, uint32_t u) {
  { A::buffer_rsrc(p, u) } -> std::same_as<typename A::BufferRsrc>;
  A::lds_dma(A::buffer_rsrc(p, u), u, u);
  A::lds_dma_wait();
  { A::lds_address(p) } -> std::same_as<uint32_t>;
  { A::wave_uniform(u) } -> std::same_as<uint32_t>;
#endif
};

// An arch that runs the ping-pong schedule (kernels/cdna/pingpong_mainloop.hpp: two groups of waves
// that alternate matrix work with softmax and loads between workgroup barriers): a barrier across
// which the compiler moves no instruction (so each group's phase stays between its two barriers), and
// the wave's issue priority (raised over a phase of matrix products), a value the compiler cannot
// trace (recompute_from: what is derived from it after the loop is not held across it), and a
// vector-memory wait the compiler counts (vm_wait_counted).
template <class A>
concept PhasedArch = requires(int i) {
#if defined(HIPATTN_HAS_DEVICE)
  A::phase_barrier();
  A::template issue_priority<0>();
  { A::recompute_from(i) } -> std::same_as<int>;
  A::vm_wait_counted();
#endif
  true;
};

// The Arch of a target: specialized by arch/arch.hpp for the targets of the backend being compiled.
template <Target T>
struct ArchOf;

}  // namespace hipattn
