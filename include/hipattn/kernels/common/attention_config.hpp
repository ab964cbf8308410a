// hipattn/kernels/common/attention_config.hpp: the attention skeleton's configuration, shared by every
// family that runs it (unified 2D / 3D, paged decode, dense prefill on CDNA, the CDNA ping-pong path,
// MLA on CDNA): one structural value (AttentionShape) and the compile-time members the skeleton and its
// parts read (AttentionConfig), checked by a concept (AttentionSkeletonConfig). Visible to host-only
// code: the launch builders and the emulated AMD tests read these members on the host.
#pragma once
#include <concepts>
#include <cstdint>
#include <type_traits>

// runtime.hpp first: the HIP / CUDA headers define the qualifiers the headers below use
// (__forceinline__); in a host-only build it is empty.
#include "hipattn/platform/runtime.hpp"
#include "hipattn/arch/concept.hpp"
#include "hipattn/kernels/common/kernel_args.hpp"
#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/numeric/fast_div.hpp"
#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/paged/paged_kv.hpp"
#include "hipattn/platform/fixed_string.hpp"
#include "hipattn/platform/target.hpp"
#include "hipattn/tile/lds_layout.hpp"
#include "hipattn/tile/variants.hpp"

namespace hipattn {

template <class Cfg>
class PagedKvLoader;  // kernels/common/loaders/async.hpp: CopyModel::async
template <class Cfg>
class StagedPagedKvLoader;  // loaders/staged.hpp: CopyModel::register_staged
template <class Cfg>
class LdsDmaPagedKvLoader;  // loaders/lds_dma.hpp: CopyModel::lds_dma
template <class Cfg>
struct SkeletonMainloop;  // kernels/common/skeleton_mainloop.hpp

// The warps of a workgroup and its KV tile: warps_m x warps_n warps, 16 * mt rows and kn keys a warp,
// `stages` LDS stages. rows = warps_m * 16 * mt; keys a tile = warps_n * kn.
struct TileShape {
  int warps_m = 1, warps_n = 1, mt = 1, kn = 16, stages = 2;
  friend constexpr bool operator==(const TileShape&, const TileShape&) = default;
};

// The cache layout policy of the paged view (paged/paged_kv.hpp): row-major pages (RowKvLayout), the
// ROCm layout with chunked keys and dimension-major values (RocmKvLayout, register-staged loads only),
// contiguous tensors (DenseKvLayout: dense prefill on the paged loaders).
enum class KvLayoutKind : uint8_t { row, rocm, dense };
template <KvLayoutKind kL>
using kv_layout_t = std::conditional_t<kL == KvLayoutKind::rocm, RocmKvLayout,
                                       std::conditional_t<kL == KvLayoutKind::dense, DenseKvLayout, RowKvLayout>>;

constexpr const char* kv_layout_name(KvLayoutKind l) {
  return l == KvLayoutKind::rocm ? "rocm" : l == KvLayoutKind::dense ? "dense" : "row";
}
constexpr const char* copy_model_name(CopyModel c) {
  return c == CopyModel::register_staged ? "staged" : c == CopyModel::lds_dma ? "dma" : "async";
}

// One skeleton instance's shape, as one structural value (a template argument of AttentionConfig):
//   bf16      the 16-bit type of Q, P and O (bf16, else f16)
//   kv        the KV storage (numeric/kv_kind.hpp; the q8 kinds are the fp8 matrix path)
//   d_qk, d_v the head sizes of Q / K and of V / O (d_v < d_qk: narrower 16-bit V rows, register-staged)
//   tile      the workgroup's warps and KV tile
//   target    the device the instance is built for; its kernels are empty in other targets' passes
//   copy      the KV loader policy (arch/concept.hpp kv_copy_model: the target's default for the
//             storage and head size, or a policy the target allows besides)
//   layout    the cache layout policy
//   offset64  64-bit element offsets (else 32-bit: sm_90 fp8 decode at fixed page sizes)
//   page_size the page size the instance is built for (0: any page size, by FastDivmod)
struct AttentionShape {
  bool bf16 = true;
  KvKind kv = KvKind::same16;
  int d_qk = 128, d_v = 128;
  TileShape tile{};
  Target target = Target::sm90;
  CopyModel copy = CopyModel::async;
  KvLayoutKind layout = KvLayoutKind::row;
  bool offset64 = true;
  int page_size = 0;
  friend constexpr bool operator==(const AttentionShape&, const AttentionShape&) = default;
};

// The shape of (q type, KV storage, head size, tile, target) with the target's default loader
// policy, row layout, 64-bit offsets and any page size: what the dispatch tables start from.
constexpr AttentionShape attention_shape(bool bf16, KvKind kv, int d_qk, int d_v, TileShape tile, Target target) {
  return AttentionShape{bf16, kv, d_qk, d_v, tile, target, kv_copy_model(target, kv, d_qk, tile.warps_m > 1),
                        KvLayoutKind::row, true, 0};
}
// ... with another loader policy / layout.
constexpr AttentionShape with_copy(AttentionShape s, CopyModel c) { return s.copy = c, s; }
constexpr AttentionShape with_layout(AttentionShape s, KvLayoutKind l) { return s.layout = l, s; }
constexpr AttentionShape with_page(AttentionShape s, bool offset64, int page_size) {
  return s.offset64 = offset64, s.page_size = page_size, s;
}

// "target=gfx950 q=bf16 kv=same16 dqk=128 dv=128 tile=4x1x1x32x2 copy=dma layout=row offset=64 page=0"
constexpr FixedString shape_name(const AttentionShape& s) {
  FixedString f;
  f.field("target", target_name(s.target).data()).field("q", s.bf16 ? "bf16" : "f16").field("kv", kv_kind_name(s.kv));
  f.field("dqk", s.d_qk).field("dv", s.d_v);
  f.field("tile", s.tile.warps_m) += "x";
  f += s.tile.warps_n;
  f += "x";
  f += s.tile.mt;
  f += "x";
  f += s.tile.kn;
  f += "x";
  f += s.tile.stages;
  f.field("copy", copy_model_name(s.copy)).field("layout", kv_layout_name(s.layout));
  f.field("offset", s.offset64 ? 64 : 32).field("page", s.page_size);
  return f;
}

// Whether fp8 codes stay in the LDS stages and the warp tile reads them at the MMA fragment: the
// async loader's fp8 stages on a tile of one row band (each key read by one warp; converted there);
// with several row bands every warp would convert every code, so those stages are converted once a
// workgroup, except on the fp8 matrix path (q8: e4m3fn queries and cache), which converts nothing.
constexpr bool fp8_at_fragment(bool fp8, CopyModel copy, int warps_m, bool q8 = false) {
  return fp8 && copy == CopyModel::async && (warps_m == 1 || q8);
}

// The LDS carve-up of a skeleton workgroup, in bytes: Q tile, K and V stages, per-key scales (fp8 caches); the
// warp-band merge reuses the space at the end. 16-bit tiles are swizzled tiles (tile/lds_layout.hpp)
// and take their padded row pitch (d = 96: 128 elements a row). fp8 stages of the async loader
// (sm_90) hold the codes: a decode tile's (warps_m == 1, converted at the MMA fragment) as swizzled
// tiles of d / 2 16-bit pairs (16 codes a chunk), a prefill tile's as linear rows of d bytes with one
// 16-bit K and V buffer after the stages (converted once a workgroup). The register-staged loader
// converts in registers and its stages are 16-bit tiles, as are the LDS-DMA loader's (16-bit caches
// only). Used by AttentionConfig and by the planners' occupancy (dispatch/unified_plan.hpp).
struct AttentionLdsLayout {
  int q, k_stage, v_stage, kv, scales, merge, main, total;
};
// kv: the instance's KvKind (the q8 kinds: Q and K are tiles of code pairs; V too on sm_90, where the
// warp tile reads V's codes at the fragment, while CDNA's register-staged loader converts V).
constexpr AttentionLdsLayout attention_lds_layout(int warps_m, int warps_n, int mt, int kn, int stages, int d_qk, int d_v,
                                                  KvKind kv, Target /*target*/, CopyModel copy) {
  const int bm = warps_m * 16 * mt, bn = warps_n * kn;
  const auto pitch = [](int d) { return (d + 63) / 64 * 64; };  // SwizzledTile::kPitch
  const bool fp8 = kv != KvKind::same16, q8 = kv_fp8_matmul(kv);
  const bool fragment = fp8_at_fragment(fp8, copy, warps_m, q8);
  const bool staging = fp8 && copy == CopyModel::async && !fragment;
  AttentionLdsLayout l{};
  l.q = bm * pitch(q8 ? d_qk / 2 : d_qk) * 2;
  l.k_stage = fragment || q8 ? bn * pitch(d_qk / 2) * 2 : staging ? bn * d_qk : bn * pitch(d_qk) * 2;
  l.v_stage = fragment ? bn * pitch(d_v / 2) * 2 : staging ? bn * d_v : bn * pitch(d_v) * 2;
  l.kv = stages * (l.k_stage + l.v_stage) + (staging ? bn * (pitch(d_qk) + pitch(d_v)) * 2 : 0);
  l.scales = fp8 ? 2 * stages * bn * 4 : 0;  // per-key K / V scales: fp8 caches only (PagedTileWalk::copies_scales)
  l.merge = warps_n > 1 ? warps_n * bm * (d_v + 2) * 4 : 0;
  l.main = l.q + l.kv + l.scales;
  l.total = l.main > l.merge ? l.main : l.merge;
  return l;
}
// ... with the target's default loader policy for the storage and head size.
constexpr AttentionLdsLayout attention_lds_layout(int warps_m, int warps_n, int mt, int kn, int stages, int d_qk, int d_v,
                                                  KvKind kv, Target target) {
  return attention_lds_layout(warps_m, warps_n, mt, kn, stages, d_qk, d_v, kv, target,
                              kv_copy_model(target, kv, d_qk, warps_m > 1));
}
// ... of a shape.
constexpr AttentionLdsLayout attention_lds_layout(const AttentionShape& s) {
  return attention_lds_layout(s.tile.warps_m, s.tile.warps_n, s.tile.mt, s.tile.kn, s.tile.stages, s.d_qk, s.d_v, s.kv,
                              s.target, s.copy);
}

// Compile-time configuration of one skeleton instance (kernels/common/attention_kernel.hpp).
//   rows of a workgroup: kBM = kWarpsM * 16 * kMT (q tokens x GQA heads packed)
//   keys of a KV tile:  kBN = kWarpsN * kKN (each warp takes kKN keys of every tile)
//   head sizes: kDqk (Q, K) and kDv (V, O); kD is kDqk (the size the unified table is keyed by)
//   Loader: the KV loader of the shape's copy policy (its Params are the kernel arguments' `kv`)
//   Mainloop: the KV walk (SkeletonMainloop; PingPongConfig, kernels/cdna/pingpong_config.hpp, names its own)
// Variant: the logit variant (tile/variants.hpp), a type: a caller's own variants are types.
template <AttentionShape kS, class Variant_>
struct AttentionConfig {
  static constexpr AttentionShape kShape = kS;
  static constexpr bool kBf16 = kS.bf16;
  static constexpr KvKind kKv = kS.kv;
  static constexpr bool kFp8 = kS.kv != KvKind::same16;
  // The fp8 matrix path (fp8 queries and cache: scores by the fp8 MMA; on sm_90 P V too where a
  // warp's keys are a multiple of 32, kP8, and the call asks for it: AttentionKernelArgs::p8; the
  // CDNA tiles compute P V in 16-bit, V converted by the loader).
  static constexpr bool kQ8 = kv_fp8_matmul(kS.kv);
  static constexpr bool kP8 = kQ8 && kS.tile.kn % 32 == 0 && kS.target == Target::sm90;
  static constexpr int kDqk = kS.d_qk, kDv = kS.d_v;
  static constexpr int kD = kS.d_qk;
  // V is its own tile, loaded like K (MLA's configurations read V from the K stage, kVInK, or convert
  // it from the K rows in registers, kVFromK: kernels/mla_decode/config.hpp)
  static constexpr bool kVInK = false, kVFromK = false;
  static constexpr int kVRow = kDv;
  static constexpr int kWarpsM = kS.tile.warps_m, kWarpsN = kS.tile.warps_n, kMT = kS.tile.mt, kKN = kS.tile.kn;
  static constexpr int kStages = kS.tile.stages;
  static constexpr Target kTarget = kS.target;
  static constexpr int kWaveSize = target_wave_size(kS.target);
  static_assert(kWaveSize > 0, "an instance targets gfx942, gfx950 or sm_90");
  static constexpr int kWarps = kWarpsM * kWarpsN;
  static constexpr int kThreads = kWarps * kWaveSize;
  static constexpr int kBM = kWarpsM * 16 * kMT;
  static constexpr int kBN = kWarpsN * kKN;
  static constexpr int kPageSize = kS.page_size;
  using Variant = Variant_;
  using Offset = std::conditional_t<kS.offset64, int64_t, int32_t>;
  // The loader policy (arch/concept.hpp CopyModel).
  static constexpr CopyModel kCopy = kS.copy;
  // The cache layout (paged/paged_kv.hpp): RowKvLayout, RocmKvLayout (paged decode; only the
  // register-staged loader reads it, on any target) or DenseKvLayout (dense prefill).
  using KvLayout = kv_layout_t<kS.layout>;
  static constexpr bool kRowLayout = !KvLayout::kChunkedKeys && !KvLayout::kTransposedValues;
  static_assert(kRowLayout || kCopy == CopyModel::register_staged, "the ROCm cache layout loads register-staged");
  static_assert(!kQ8 || (kv_kind_on_target(kS.kv, kS.target) && kRowLayout &&
                         kCopy == (is_cdna(kS.target) ? CopyModel::register_staged : CopyModel::async)),
                "the fp8 matrix path: the target's q8 kind; row-layout caches in cp.async stages (sm_90) or "
                "register-staged (CDNA)");
  static_assert(!kRowLayout || kCopy == kv_copy_model(kS.target, kS.kv, kS.d_qk, kS.tile.warps_m > 1) ||
                    (is_cdna(kS.target) && !kFp8 && (kCopy == CopyModel::register_staged || kCopy == CopyModel::lds_dma)) ||
                    (!is_cdna(kS.target) && (kCopy == CopyModel::register_staged || kCopy == CopyModel::async)),
                "a CDNA instance with a 16-bit cache may take either CDNA policy, an sm_90 instance either of its "
                "two; everything else its default");
  static_assert(kCopy != CopyModel::lds_dma || kStages == 2, "the LDS-DMA loader keeps two LDS stages");
  static_assert(kDv == kDqk || (kDv < kDqk && kDv % 16 == 0 && !kFp8 && kCopy == CopyModel::register_staged),
                "a value head narrower than the query / key head: 16-bit, register-staged (dense prefill's (192, 128))");
  static constexpr bool kStagedLoads = kCopy == CopyModel::register_staged;
  using Loader = std::conditional_t<
      kCopy == CopyModel::lds_dma, LdsDmaPagedKvLoader<AttentionConfig>,
      std::conditional_t<kStagedLoads, StagedPagedKvLoader<AttentionConfig>, PagedKvLoader<AttentionConfig>>>;
  using Mainloop = SkeletonMainloop<AttentionConfig>;

  // LDS: attention_lds_layout above, the one formula (the planners size occupancy with it too).
  using QLds = SwizzledTile<kBM, kQ8 ? kDqk / 2 : kDqk>;  // Q, 16-bit (q8: code pairs)
  using KLds = SwizzledTile<kBN, kDqk>;  // a K tile, 16-bit (a stage, or the fp8 dequant buffer)
  using VLds = SwizzledTile<kBN, kDv>;   // a V tile, 16-bit
  // fp8 with the async loader: a decode tile (one row band, each key read by one warp) keeps the codes
  // in LDS and the warp tile converts them at the MMA fragment; a prefill tile converts each stage
  // once into a 16-bit buffer (arch/concept.hpp kv_copy_model).
  static constexpr bool kFp8AtFragment = fp8_at_fragment(kFp8, kCopy, kWarpsM, kQ8);
  static constexpr bool kFp8Staging = kFp8 && kCopy == CopyModel::async && !kFp8AtFragment;
  static_assert(!kFp8AtFragment || kTarget == Target::sm90, "fp8 is converted at the fragment on sm_90");
  // The KV storage the warp tile reads: fp8 codes (converted at the fragment, or the fp8 matrix
  // path's) or 16-bit tiles.
  static constexpr KvKind kTileKv = kFp8AtFragment || kQ8 ? kKv : KvKind::same16;
  using K8Lds = SwizzledTile<kBN, kDqk / 2>;  // an fp8 K stage read at the fragment: 16 codes a chunk
  using V8Lds = SwizzledTile<kBN, kDv / 2>;
  static constexpr AttentionLdsLayout kLds = attention_lds_layout(kS);
  static constexpr int kQBytes = kLds.q, kKStageBytes = kLds.k_stage, kVStageBytes = kLds.v_stage;
  static constexpr int kKvBytes = kLds.kv, kScaleBytes = kLds.scales, kMergeBytes = kLds.merge;
  static constexpr int kMainBytes = kLds.main, kSmemBytes = kLds.total;
  static_assert(kLds.q == QLds::kBytes && ((kFp8 && kCopy == CopyModel::async) || kQ8 || kLds.k_stage == KLds::kBytes), "one LDS formula");
  static_assert(!kQ8 || (kLds.k_stage == K8Lds::kBytes && (kFp8AtFragment || kLds.v_stage == VLds::kBytes)), "one LDS formula");
  static_assert(!kFp8AtFragment || (kLds.k_stage == K8Lds::kBytes && kLds.v_stage == V8Lds::kBytes), "one LDS formula");
  static_assert(kDv == kDqk || kLds.v_stage == VLds::kBytes, "one LDS formula");

  // The instance's name: its shape's fields and the variant ("... variant=plain"); the manifest of
  // its kernels (platform/fixed_string.hpp HIPATTN_KERNEL_MANIFEST) and the messages name it so.
  static constexpr FixedString name() {
    FixedString f = shape_name(kS);
    f.field("mainloop", "skeleton");
    return f.field("variant", variant_name<Variant>());
  }
};

// The name of a kernel role over a configuration: "kernel=unified_2d target=... variant=plain".
template <class Cfg>
constexpr FixedString kernel_manifest(const char* kernel) {
  FixedString f;
  f.field("kernel", kernel) += " ";
  return f += Cfg::name();
}

// The occupancy a CDNA kernel of configuration Cfg asks the compiler for (HIPATTN_CDNA_WAVES_PER_SIMD):
// the configuration's kWavesPerSimd (PingPongConfig's), else what its workgroup needs alone (its waves over 4 SIMDs,
// the compiler's own floor, so nothing changes for those).
template <class Cfg>
constexpr int kernel_waves_per_simd() {
  if constexpr (requires { Cfg::kWavesPerSimd; }) return Cfg::kWavesPerSimd;
  else return (Cfg::kThreads / 64 + 3) / 4 > 0 ? (Cfg::kThreads / 64 + 3) / 4 : 1;
}

// What the skeleton (kernels/common/attention_kernel.hpp) and its parts (loaders, warp tiles,
// epilogues, the ping-pong mainloop) read of a configuration. AttentionConfig has all of it; a family
// that states a configuration of its own (MLA on CDNA) is checked against the same list.
namespace detail {
// A static member's type, whatever its cv-qualifiers (constexpr members are const).
template <class T, class U>
concept member_is = std::same_as<std::remove_cvref_t<T>, U>;
}  // namespace detail

template <class Cfg>
concept AttentionSkeletonConfig = requires {
  requires detail::member_is<decltype(Cfg::kBf16), bool>;
  requires detail::member_is<decltype(Cfg::kKv), KvKind>;
  requires detail::member_is<decltype(Cfg::kFp8), bool>;
  requires detail::member_is<decltype(Cfg::kQ8), bool>;
  requires detail::member_is<decltype(Cfg::kP8), bool>;
  requires detail::member_is<decltype(Cfg::kDqk), int>;
  requires detail::member_is<decltype(Cfg::kDv), int>;
  requires detail::member_is<decltype(Cfg::kVInK), bool>;
  requires detail::member_is<decltype(Cfg::kVFromK), bool>;
  requires detail::member_is<decltype(Cfg::kVRow), int>;
  requires detail::member_is<decltype(Cfg::kWarpsM), int>;
  requires detail::member_is<decltype(Cfg::kWarpsN), int>;
  requires detail::member_is<decltype(Cfg::kMT), int>;
  requires detail::member_is<decltype(Cfg::kKN), int>;
  requires detail::member_is<decltype(Cfg::kStages), int>;
  requires detail::member_is<decltype(Cfg::kTarget), Target>;
  requires detail::member_is<decltype(Cfg::kWaveSize), int>;
  requires detail::member_is<decltype(Cfg::kWarps), int>;
  requires detail::member_is<decltype(Cfg::kThreads), int>;
  requires detail::member_is<decltype(Cfg::kBM), int>;
  requires detail::member_is<decltype(Cfg::kBN), int>;
  requires detail::member_is<decltype(Cfg::kPageSize), int>;
  requires detail::member_is<decltype(Cfg::kCopy), CopyModel>;
  requires detail::member_is<decltype(Cfg::kStagedLoads), bool>;
  requires detail::member_is<decltype(Cfg::kFp8AtFragment), bool>;
  requires detail::member_is<decltype(Cfg::kFp8Staging), bool>;
  requires detail::member_is<decltype(Cfg::kTileKv), KvKind>;
  requires detail::member_is<decltype(Cfg::kQBytes), int>;
  requires detail::member_is<decltype(Cfg::kKStageBytes), int>;
  requires detail::member_is<decltype(Cfg::kVStageBytes), int>;
  requires detail::member_is<decltype(Cfg::kKvBytes), int>;
  requires detail::member_is<decltype(Cfg::kScaleBytes), int>;
  requires detail::member_is<decltype(Cfg::kMergeBytes), int>;
  requires detail::member_is<decltype(Cfg::kMainBytes), int>;
  requires detail::member_is<decltype(Cfg::kSmemBytes), int>;
  requires detail::member_is<decltype(Cfg::name()), FixedString>;
  typename Cfg::Variant;
  typename Cfg::Offset;
  typename Cfg::KvLayout;
  typename Cfg::Loader;
  typename Cfg::Mainloop;
  typename Cfg::QLds;
  typename Cfg::KLds;
  typename Cfg::VLds;
};

}  // namespace hipattn

// The loader policies and the mainloop the configurations name (complete here: host code reads
// Cfg::Loader::Params).
#include "hipattn/kernels/common/loaders/async.hpp"
#include "hipattn/kernels/common/loaders/lds_dma.hpp"
#include "hipattn/kernels/common/loaders/staged.hpp"
#include "hipattn/kernels/common/skeleton_mainloop.hpp"
