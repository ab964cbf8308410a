// hipattn/kernels/unified/config.hpp: compile-time configuration and kernel arguments of the
// unified attention family (kernels/unified/kernels.hpp). Visible to host-only code: the launch
// builders (dispatch/unified_launch.hpp) and the emulated AMD tests fill these structs on the host.
#pragma once
#include <cstdint>
#include <type_traits>

// runtime.hpp first: the HIP / CUDA headers define the qualifiers the headers below use
// (__forceinline__); in a host-only build it is empty.
#include "hipattn/platform/runtime.hpp"
#include "hipattn/kernels/common/kernel_args.hpp"
#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/numeric/fast_div.hpp"
#include "hipattn/paged/paged_kv.hpp"
#include "hipattn/arch/concept.hpp"
#include "hipattn/platform/target.hpp"
#include "hipattn/tile/lds_layout.hpp"
#include "hipattn/tile/variants.hpp"

namespace hipattn {

template <class Cfg>
class PagedKvLoader;  // kernels/common/paged_kv_loader.hpp: CopyModel::async
template <class Cfg>
class StagedPagedKvLoader;  // CopyModel::register_staged
template <class Cfg>
class LdsDmaPagedKvLoader;  // CopyModel::lds_dma

// The LDS carve-up of a unified-attention workgroup, in bytes: Q tile, K and V stages, per-key
// scales; the warp-band merge reuses the space at the end. 16-bit tiles are swizzled tiles
// (tile/lds_layout.hpp) and take their padded row pitch (d = 96: 128 elements a row). fp8 stages of
// the async loader (sm_90) hold the codes: a decode tile's (warps_m == 1, converted at the MMA
// fragment) as swizzled tiles of d / 2 16-bit pairs (16 codes a chunk), a prefill tile's as linear
// rows of d bytes with one 16-bit K and V buffer after the stages (converted once a workgroup).
// The register-staged loader converts in registers and its stages are 16-bit tiles, as are the
// LDS-DMA loader's (16-bit caches only). Used by UnifiedConfig and by the planner's occupancy
// (dispatch/unified_plan.hpp).
// Whether fp8 codes stay in the LDS stages and the warp tile reads them at the MMA fragment: the
// async loader's fp8 stages on a tile of one row band (each key read by one warp; converted there);
// with several row bands every warp would convert every code, so those stages are converted once a
// workgroup, except on the fp8 matrix path (q8: e4m3fn queries and cache), which converts nothing.
constexpr bool fp8_at_fragment(bool fp8, CopyModel copy, int warps_m, bool q8 = false) {
  return fp8 && copy == CopyModel::async && (warps_m == 1 || q8);
}

struct UnifiedLdsLayout {
  int q, k_stage, v_stage, kv, scales, merge, main, total;
};
// kv: the instance's KvKind (the q8 kinds: Q and K are tiles of code pairs; V too on sm_90, where the
// warp tile reads V's codes at the fragment, while CDNA's register-staged loader converts V).
constexpr UnifiedLdsLayout unified_lds_layout(int warps_m, int warps_n, int mt, int kn, int stages, int d_qk, int d_v,
                                              KvKind kv, Target /*target*/, CopyModel copy) {
  const int bm = warps_m * 16 * mt, bn = warps_n * kn;
  const auto pitch = [](int d) { return (d + 63) / 64 * 64; };  // SwizzledTile::kPitch
  const bool fp8 = kv != KvKind::same16, q8 = kv_fp8_matmul(kv);
  const bool fragment = fp8_at_fragment(fp8, copy, warps_m, q8);
  const bool staging = fp8 && copy == CopyModel::async && !fragment;
  UnifiedLdsLayout l{};
  l.q = bm * pitch(q8 ? d_qk / 2 : d_qk) * 2;
  l.k_stage = fragment || q8 ? bn * pitch(d_qk / 2) * 2 : staging ? bn * d_qk : bn * pitch(d_qk) * 2;
  l.v_stage = fragment ? bn * pitch(d_v / 2) * 2 : staging ? bn * d_v : bn * pitch(d_v) * 2;
  l.kv = stages * (l.k_stage + l.v_stage) + (staging ? bn * (pitch(d_qk) + pitch(d_v)) * 2 : 0);
  l.scales = 2 * stages * bn * 4;
  l.merge = warps_n > 1 ? warps_n * bm * (d_v + 2) * 4 : 0;
  l.main = l.q + l.kv + l.scales;
  l.total = l.main > l.merge ? l.main : l.merge;
  return l;
}
// ... with the target's default loader policy for the storage and head size.
constexpr UnifiedLdsLayout unified_lds_layout(int warps_m, int warps_n, int mt, int kn, int stages, int d_qk, int d_v,
                                              KvKind kv, Target target) {
  return unified_lds_layout(warps_m, warps_n, mt, kn, stages, d_qk, d_v, kv, target,
                            kv_copy_model(target, kv, d_qk, warps_m > 1));
}

// Compile-time configuration of one unified-attention instance.
//   rows of a workgroup: kBM = kWarpsM * 16 * kMT (q tokens x GQA heads packed)
//   keys of a KV tile:  kBN = kWarpsN * kKN (each warp takes kKN keys of every tile)
//   head sizes: kDqk (Q, K) and kDv (V, O); the unified problem has one head size, so both are kD_
//   loader: the KV loader policy of the family (its Params are the kernel arguments' `kv`)
//   target: the device the instance is built for (its tile comes from that target's table); the
//           kernels of an instance are empty in the device passes of other targets
//   copy:   the KV loader policy (arch/concept.hpp kv_copy_model: the target's default for the KV
//           storage and head size); the dispatcher also builds gfx950's register-staged fallback for
//           caches beyond the DMA loader's range, and tests/isa the other CDNA policy, for the model
//   layout: the cache layout policy of the paged view (RowKvLayout; RocmKvLayout with the
//           register-staged loader)
template <bool kBf16_, KvKind kKv_, int kD_, int kWarpsM_, int kWarpsN_, int kMT_, int kKN_, int kStages_,
          class Variant_, class Offset_ = int64_t, int kPageSize_ = 0, Target kTarget_ = Target::sm90,
          CopyModel kCopy_ = kv_copy_model(kTarget_, kKv_, kD_, kWarpsM_ > 1), class KvLayout_ = RowKvLayout>
struct UnifiedConfig {
  static constexpr bool kBf16 = kBf16_;
  static constexpr KvKind kKv = kKv_;
  static constexpr bool kFp8 = kKv_ != KvKind::same16;
  // The fp8 matrix path (fp8 queries and cache: scores by the fp8 MMA; on sm_90 P V too where a
  // warp's keys are a multiple of 32, kP8, and the call asks for it: AttentionKernelArgs::p8; the
  // CDNA tiles compute P V in 16-bit, V converted by the loader).
  static constexpr bool kQ8 = kv_fp8_matmul(kKv_);
  static constexpr bool kP8 = kQ8 && kKN_ % 32 == 0 && kTarget_ == Target::sm90;
  static constexpr int kDqk = kD_, kDv = kD_;
  static constexpr int kD = kD_;  // the problem's head size (kDqk == kDv here)
  // V is its own tile, loaded like K (MLA's configurations read V from the K stage, kVInK, or convert
  // it from the K rows in registers, kVFromK: kernels/mla_decode/config.hpp)
  static constexpr bool kVInK = false, kVFromK = false;
  static constexpr int kVRow = kDv;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_, kMT = kMT_, kKN = kKN_, kStages = kStages_;
  static constexpr Target kTarget = kTarget_;
  static constexpr int kWaveSize = target_wave_size(kTarget_);
  static_assert(kWaveSize > 0, "an instance targets gfx942, gfx950 or sm_90");
  static constexpr int kWarps = kWarpsM * kWarpsN;
  static constexpr int kThreads = kWarps * kWaveSize;
  static constexpr int kBM = kWarpsM * 16 * kMT;
  static constexpr int kBN = kWarpsN * kKN;
  static constexpr int kPageSize = kPageSize_;
  using Variant = Variant_;
  using Offset = Offset_;
  // The loader policy (arch/concept.hpp CopyModel).
  static constexpr CopyModel kCopy = kCopy_;
  // The cache layout (paged/paged_kv.hpp): RowKvLayout, or RocmKvLayout (paged decode), which only
  // the register-staged loader reads (on any target).
  using KvLayout = KvLayout_;
  static constexpr bool kRowLayout = !KvLayout::kChunkedKeys && !KvLayout::kTransposedValues;
  static_assert(kRowLayout || kCopy_ == CopyModel::register_staged, "the ROCm cache layout loads register-staged");
  static_assert(!kQ8 || (kv_kind_on_target(kKv_, kTarget_) && kRowLayout &&
                         kCopy_ == (is_cdna(kTarget_) ? CopyModel::register_staged : CopyModel::async)),
                "the fp8 matrix path: the target's q8 kind; row-layout caches in cp.async stages (sm_90) or "
                "register-staged (CDNA)");
  static_assert(!kRowLayout || kCopy == kv_copy_model(kTarget_, kKv_, kD_, kWarpsM_ > 1) ||
                    (is_cdna(kTarget_) && !kFp8 && (kCopy == CopyModel::register_staged || kCopy == CopyModel::lds_dma)) ||
                    (!is_cdna(kTarget_) && (kCopy == CopyModel::register_staged || kCopy == CopyModel::async)),
                "a CDNA instance with a 16-bit cache may take either CDNA policy, an sm_90 instance either of its "
                "two; everything else its default");
  static_assert(kCopy != CopyModel::lds_dma || kStages_ == 2, "the LDS-DMA loader keeps two LDS stages");
  static constexpr bool kStagedLoads = kCopy == CopyModel::register_staged;
  using Loader = std::conditional_t<
      kCopy == CopyModel::lds_dma, LdsDmaPagedKvLoader<UnifiedConfig>,
      std::conditional_t<kStagedLoads, StagedPagedKvLoader<UnifiedConfig>, PagedKvLoader<UnifiedConfig>>>;

  // LDS: unified_lds_layout below, the one formula (the planner sizes occupancy with it too).
  using QLds = SwizzledTile<kBM, kQ8 ? kDqk / 2 : kDqk>;  // Q, 16-bit (q8: code pairs)
  using KLds = SwizzledTile<kBN, kDqk>;  // a K tile, 16-bit (a stage, or the fp8 dequant buffer)
  using VLds = SwizzledTile<kBN, kDv>;   // a V tile, 16-bit
  // fp8 with the async loader: a decode tile (one row band, each key read by one warp) keeps the codes
  // in LDS and the warp tile converts them at the MMA fragment; a prefill tile converts each stage
  // once into a 16-bit buffer (arch/concept.hpp kv_copy_model).
  static constexpr bool kFp8AtFragment = fp8_at_fragment(kFp8, kCopy, kWarpsM, kQ8);
  static constexpr bool kFp8Staging = kFp8 && kCopy == CopyModel::async && !kFp8AtFragment;
  static_assert(!kFp8AtFragment || kTarget_ == Target::sm90, "fp8 is converted at the fragment on sm_90");
  // The KV storage the warp tile reads: fp8 codes (converted at the fragment, or the fp8 matrix
  // path's) or 16-bit tiles.
  static constexpr KvKind kTileKv = kFp8AtFragment || kQ8 ? kKv_ : KvKind::same16;
  using K8Lds = SwizzledTile<kBN, kDqk / 2>;  // an fp8 K stage read at the fragment: 16 codes a chunk
  using V8Lds = SwizzledTile<kBN, kDv / 2>;
  static constexpr UnifiedLdsLayout kLds =
      unified_lds_layout(kWarpsM, kWarpsN, kMT, kKN, kStages, kDqk, kDv, kKv_, kTarget_, kCopy_);
  static constexpr int kQBytes = kLds.q, kKStageBytes = kLds.k_stage, kVStageBytes = kLds.v_stage;
  static constexpr int kKvBytes = kLds.kv, kScaleBytes = kLds.scales, kMergeBytes = kLds.merge;
  static constexpr int kMainBytes = kLds.main, kSmemBytes = kLds.total;
  static_assert(kLds.q == QLds::kBytes && ((kFp8 && kCopy == CopyModel::async) || kQ8 || kLds.k_stage == KLds::kBytes), "one LDS formula");
  static_assert(!kQ8 || (kLds.k_stage == K8Lds::kBytes && (kFp8AtFragment || kLds.v_stage == VLds::kBytes)), "one LDS formula");
  static_assert(!kFp8AtFragment || (kLds.k_stage == K8Lds::kBytes && kLds.v_stage == V8Lds::kBytes), "one LDS formula");
};

// Runtime arguments of the 2D and 3D kernels (built on the host by dispatch/unified_launch.hpp): the
// skeleton's (kernels/common/kernel_args.hpp) and how the unified grid finds its work.
template <class KvParams, class Variant>
struct UnifiedKernelArgs : AttentionKernelArgs<KvParams, Variant> {
  const int32_t* cu_seqlens_q = nullptr;
  int32_t num_tokens = 0;
  bool decode_grid = false;   // every q length is 1: blockIdx.x is the sequence (no search)
  // split-KV (3D): partial states [num_segments, num_tokens, num_q_heads, D] and [.., num_q_heads];
  // planned (decode grid, `tasks` set): [slot, num_q_heads, D] / [slot, num_q_heads]
  int32_t num_segments = 1;
};

// The arguments type of a configuration's 2D / 3D kernels: the loader's parameters and the variant.
template <class Cfg>
using unified_args_t = UnifiedKernelArgs<typename Cfg::Loader::Params, typename Cfg::Variant>;

// Arguments of the split-KV reduce (kernels/unified/kernels.hpp), built on the host by
// dispatch/unified_launch.hpp.
struct SplitKvReduceArgs {
  const float* ws_o = nullptr;    // [num_segments, num_tokens, num_q_heads, D] (planned: [slots, num_q_heads, D])
  const float* ws_lse = nullptr;  // [num_segments, num_tokens, num_q_heads], log2 units (planned: [slots, num_q_heads])
  int32_t num_segments = 1, num_tokens = 0, num_q_heads = 0;
  // planned (decode grid): the parts of the sequence that holds the token (cu_seqlens_q[s] <= token <
  // cu_seqlens_q[s + 1]; q lengths are 0 or 1) are the tasks from item_task0[s]; a one-part sequence
  // was written by the 3D kernel and is skipped
  const PlanTask* tasks = nullptr;
  const int32_t* item_task0 = nullptr;
  const int32_t* cu_seqlens_q = nullptr;
  int32_t num_seqs = 0;
  const float* sinks = nullptr;  // [num_q_heads], natural units
  OutputArgs out;  // kernels/common/output_store.hpp
  float* lse = nullptr;
  int32_t lse_stride_head = 0;
};

}  // namespace hipattn

#include "hipattn/kernels/common/paged_kv_loader.hpp"
