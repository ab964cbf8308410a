// hipattn/kernels/mla_decode/config.hpp: the MLA decode kernel's configuration and arguments
// (kernels/mla_decode/kernels.hpp). Visible to host-only code: dispatch/mla_decode.hpp fills the
// arguments on the host.
//
// The sm_90 kernel (ALGORITHM.md section 11): a workgroup owns 64 query rows of one sequence (row
// r = i * num_heads + h: the q_len x heads rows of a sequence, in blocks of 64) and one task of its
// context (the decode planner's, kernels/common/task_plan.hpp, or the whole context). 384 threads:
//   warpgroup 0   the producer: gathers Q once, then each 32-key tile of the latent cache (page after
//                 page through the block table, any page size) into a four-stage ring, in the
//                 128-byte swizzled layout the warpgroup MMAs read; fp8 caches land in two raw
//                 staging buffers and are converted to the query's 16-bit type into a three-stage
//                 ring (their per-tensor scale folds into the score scale and the output factor)
//   warpgroups 1, 2  the consumers: each holds O's columns [256 c, 256 c + 256) for all 64 rows, and
//                 they take turns computing S = Q K^T (576 deep) and the softmax of a tile; the turn's
//                 owner hands P (16-bit, through shared memory) and the rows' max and factor to the
//                 other; both multiply P by their half of V, which is the first 512 columns of the
//                 same K tile (no second read).
// The output (a sequence in one task): each consumer its columns, in the output's format (OutputArgs:
// 16-bit, fp8 per tensor or per group; kernels/common/output_store.hpp, epilogue.hpp); split sequences: partial
// states, merged and written by paged decode's reduce.
// Shared memory: Q 64 x 576 (72 KiB), the ring (4 x 36 KiB; fp8: 3 x 36 KiB + 2 x 18 KiB raw), P
// 64 x 32, the rows' statistics and the barriers: about 223 KiB of the 227 KiB an sm_90 workgroup
// may have.
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/attention_config.hpp"
#include "hipattn/kernels/common/decode_args.hpp"
#include "hipattn/kernels/common/output_store.hpp"
#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/numeric/fast_div.hpp"
#include "hipattn/numeric/kv_kind.hpp"

namespace hipattn {

// The MLA head the kernels are written for (DeepSeek's latent attention): Q and K rows of 576 (the
// 512 latent dimensions, then 64 rope ones), V and O rows of the 512 latent dimensions (the first
// 512 columns of each K row). The problem layer states the same sizes (problem/mla_decode_params.hpp
// kMlaQkDim, kMlaLatentDim); the dispatcher checks that both agree.
inline constexpr int kMlaKernelQkDim = 576;
inline constexpr int kMlaKernelVDim = 512;

template <bool kBf16_, KvKind kKv_, int kBN_ = 32, int kStages_ = (kKv_ == KvKind::same16 ? 4 : 3)>
struct MlaDecodeSm90Config {
  static constexpr bool kBf16 = kBf16_;
  static constexpr KvKind kKv = kKv_;
  static constexpr int kDqk = kMlaKernelQkDim, kDv = kMlaKernelVDim;
  static constexpr int kBM = 64;       // query rows a workgroup
  // Keys a tile and the ring's depth: 32 x 4 (the producer runs three tiles ahead) measured
  // faster than 64 x 2 (bench/NOTES.md, MLA): with two stages a tile's load could only start once
  // the tile two back was done, so every load was exposed.
  static constexpr int kBN = kBN_;
  static constexpr int kStages = kStages_;
  static constexpr int kConsumers = 2;  // consumer warpgroups, each with kDv / 2 output columns
  static constexpr int kDvHalf = kDv / kConsumers;
  // One consumer's output as the epilogue's store (kernels/common/output_store.hpp, epilogue.hpp) sees it:
  // kDvHalf columns, 32-lane warps. A per-group fp8 output's groups (at most 128 columns,
  // kOutGroupSizes) never straddle the two consumers, so each finds its groups' maxima alone.
  struct ConsumerOut {
    static constexpr bool kBf16 = kBf16_;
    static constexpr int kDv = kDvHalf;
    static constexpr int kWaveSize = 32;
  };
  static_assert(kDvHalf % 128 == 0, "an output group lies within one consumer's columns");
  static constexpr int kThreads = 128 * (1 + kConsumers);
  // setmaxnreg moves registers within the workgroup's allocation (launch bounds (384, 1): 168 a
  // thread, 64512 in all), so the consumers' increase must be covered by the producer's decrease (an
  // increase that cannot be served waits forever). The fp8 producer converts in registers.
  static constexpr int kKernelRegs = 168;
  static constexpr int kProducerRegs = 56;
  static constexpr int kConsumerRegs = 224;
  static_assert(128 * kProducerRegs + 128 * kConsumers * kConsumerRegs <= kKernelRegs * 128 * (1 + kConsumers),
                "the consumers' registers come from the producer's");

  static constexpr int kRowBytes = 2 * kDqk;  // a 16-bit cache / Q row in shared memory
  static constexpr int kQBytes = kBM * kRowBytes;
  static constexpr int kKvBytes = kBN * kRowBytes;
  static constexpr int kPBytes = kBM * kBN * 2;
  static constexpr int kQOffset = 0;
  static constexpr int kKvOffset = kQOffset + kQBytes;
  // fp8 caches land by cp.async in two raw staging buffers (kBN rows x 576 codes, row-major) that
  // the producer converts into the ring's 16-bit stages: two tiles' loads in flight without
  // holding them in registers (one fewer ring stage pays for them)
  static constexpr int kRawStages = kKv == KvKind::same16 ? 0 : 2;
  static constexpr int kRawBytes = kBN * kDqk;
  static constexpr int kRawOffset = kKvOffset + kStages * kKvBytes;
  static constexpr int kPOffset = kRawOffset + kRawStages * kRawBytes;
  // statistics: m and f of the last two tiles' owners [2][kBM] each, the consumers' row sums [2][kBM]
  static constexpr int kStatsOffset = kPOffset + kPBytes;
  static constexpr int kStatsBytes = 6 * kBM * 4;
  static constexpr int kBarOffset = kStatsOffset + kStatsBytes;
  static constexpr int kBarBytes = 8 * (1 + 2 * kStages);  // q_full, full[], empty[]
  static constexpr int kSmemBytes = kBarOffset + kBarBytes + 1024;  // + the 1024-byte alignment of the base
  static_assert(kSmemBytes <= 232448, "an sm_90 workgroup's shared memory");
  static_assert(kQBytes % 1024 == 0 && kKvBytes % 1024 == 0 && kPOffset % 1024 == 0, "swizzle atoms stay aligned");
};

// The kernel's arguments (strides in elements unless named _bytes). Query row r of a workgroup's
// sequence is token seq * q_len + r / num_heads, head r % num_heads. q_rope is q + 512 with q's
// strides when the query is joined.
struct MlaDecodeKernelArgs {
  // fp8 queries (q_kind e4m3fn / e4m3fnuz): q and q_rope hold codes (strides in codes), converted to
  // the 16-bit type as the producer loads them; their scale joins the score multiplier
  KvKind q_kind = KvKind::same16;
  const float* q_scale = nullptr;  // device scalar, or null (q_scale_value)
  float q_scale_value = 1.f;
  const uint16_t* q = nullptr;
  int64_t q_stride_token = 0, q_stride_head = 0;
  const uint16_t* q_rope = nullptr;
  int64_t q_rope_stride_token = 0, q_rope_stride_head = 0;

  const uint8_t* kv = nullptr;
  int64_t kv_stride_page_bytes = 0, kv_stride_slot_bytes = 0;
  FastDivmod page_div;  // by page_size
  const float* kv_scale = nullptr;  // fp8: device scalar, or null (kv_scale_value)
  float kv_scale_value = 1.f;

  const int32_t* block_table = nullptr;
  int64_t block_table_stride = 0;
  const int32_t* seq_lens_k = nullptr;
  int32_t batch = 0, q_len = 1, num_heads = 0;
  int32_t rows = 0;        // q_len * num_heads
  int32_t row_blocks = 1;  // ceil(rows / 64): workgroup x = slot * row_blocks + row block
  FastDivmod heads_div;    // by num_heads
  float scale_log2 = 0.f;  // scale * log2(e)

  // planned: task slot x of the device plan; null: one task a sequence (slot = sequence)
  const PlanTask* tasks = nullptr;
  const int32_t* item_task0 = nullptr;

  OutputArgs out;  // [batch * q_len, num_heads, 512] in the output's format (dispatch/output_args.hpp)
  float* lse = nullptr;
  int64_t lse_stride_token = 0, lse_stride_head = 0;
  // partial states of split sequences: [slot, q_len, num_heads, 512] and [slot, q_len, num_heads]
  // (LSE in log2 units), merged by paged_decode_reduce_kernel
  float* ws_o = nullptr;
  float* ws_lse = nullptr;
};

// ---- CDNA (gfx942, gfx950) ----
//
// The CDNA kernel is the attention skeleton (kernels/common/attention_kernel.hpp) with paged decode's
// scheduler, store and reduce (kernels/common/work.hpp DecodeTaskScheduler, epilogue.hpp DecodeStore):
// MLA is paged decode with one KV head of d_qk 576 whose value is the first 512 columns of the same
// row. So the workgroup's rows are the q_len x num_heads rows of one sequence (the row map of the
// skeleton: min(num_heads, kBM) heads of a token, then tokens; head chunks when the heads exceed kBM),
// kWarpsM 16-row waves each hold their rows' O (16 x 512 in 128 accumulator registers a lane) and
// share every KV tile of kBN keys, which the register-staged loader brings into LDS once: K's 576
// columns only (kVInK: the warp tile reads V from the K stage's first 512 columns, kVRow = 576; no
// second read of the cache); fp8 caches converted to the query's 16-bit type on their way to LDS, the
// per-tensor scale folded into the score scale and the output factor. Q (kBM x 576) stays in LDS and
// is read at every k step (qk_lds). Tiles per target (LDS: Q + the K stages):
//   gfx942 (64 KiB a CU): 2 waves (32 rows), 16-key tiles, one stage: 36 + 18 KiB
//   gfx950 (160 KiB a CU): 4 waves (64 rows), 32-key tiles, two stages: 72 + 72 KiB
// The fp8 matrix path (kKv a q8 kind: fp8 queries over the cache format the target's fp8 MFMA reads,
// numeric/kv_kind.hpp): Q and K stay codes (tiles of code pairs) and QK^T runs on the fp8 MFMA;
// V is converted from the K rows already in registers into a 16-bit V stage of 512 columns (kVFromK: no
// second read of the cache), and P V runs in 16-bit. LDS: gfx942 20 + 10 + 16 KiB, gfx950 40 + 2 x (20 +
// 32) KiB.
template <Target kTarget_, bool kBf16_, KvKind kKv_, int kWarpsM_ = (kTarget_ == Target::gfx942 ? 2 : 4),
          int kKN_ = (kTarget_ == Target::gfx942 ? 16 : 32), int kStages_ = (kTarget_ == Target::gfx942 ? 1 : 2)>
struct MlaDecodeCdnaConfig {
  static_assert(is_cdna(kTarget_), "the skeleton MLA kernel is the CDNA one (sm_90: MlaDecodeSm90Config)");
  static_assert(kKv_ == KvKind::same16 || kKv_ == KvKind::e4m3fn || kKv_ == KvKind::e4m3fnuz ||
                    (kv_fp8_matmul(kKv_) && kv_kind_on_target(kKv_, kTarget_)),
                "a 16-bit cache, an fp8 one converted by the loader, or the target's fp8 matrix path");
  static constexpr bool kBf16 = kBf16_;
  static constexpr KvKind kKv = kKv_;
  static constexpr bool kFp8 = kKv_ != KvKind::same16;
  static constexpr bool kQ8 = kv_fp8_matmul(kKv_), kP8 = false;
  static constexpr int kDqk = kMlaKernelQkDim, kDv = kMlaKernelVDim;
  // 16-bit K stages: V is their first kDv columns; the fp8 matrix path keeps K as codes and converts
  // V from the K rows in registers into a V stage of its own (kVFromK)
  static constexpr bool kVInK = !kQ8, kVFromK = kQ8;
  static constexpr int kVRow = kVInK ? kDqk : kDv;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = 1, kMT = 1, kKN = kKN_, kStages = kStages_;
  static constexpr Target kTarget = kTarget_;
  static constexpr int kWaveSize = target_wave_size(kTarget_);
  static constexpr int kWarps = kWarpsM * kWarpsN;
  static constexpr int kThreads = kWarps * kWaveSize;
  static constexpr int kBM = kWarpsM * 16 * kMT;
  static constexpr int kBN = kWarpsN * kKN;
  static constexpr int kPageSize = 0;  // any page size (FastDivmod)
  using Variant = PlainVariant;
  using Offset = int64_t;
  using KvLayout = RowKvLayout;
  static constexpr CopyModel kCopy = CopyModel::register_staged;
  static constexpr bool kStagedLoads = true;
  static constexpr bool kFp8AtFragment = false, kFp8Staging = false;
  static constexpr KvKind kTileKv = kQ8 ? kKv_ : KvKind::same16;  // 16-bit tiles, or Q / K codes (q8)
  using Loader = StagedPagedKvLoader<MlaDecodeCdnaConfig>;
  using Mainloop = SkeletonMainloop<MlaDecodeCdnaConfig>;
  using QLds = SwizzledTile<kBM, kQ8 ? kDqk / 2 : kDqk>;  // q8: code pairs
  using KLds = SwizzledTile<kBN, kQ8 ? kDqk / 2 : kDqk>;
  using VLds = SwizzledTile<kBN, kDv>;
  static constexpr int kQBytes = QLds::kBytes;
  static constexpr int kKStageBytes = KLds::kBytes, kVStageBytes = kVFromK ? VLds::kBytes : 0;
  static constexpr int kKvBytes = kStages * (kKStageBytes + kVStageBytes);
  static constexpr int kScaleBytes = 2 * kStages * kBN * 4;  // the loader's per-key scale slots (unused: per-tensor only)
  static constexpr int kMergeBytes = 0;                      // one wave a row band: nothing to merge
  static constexpr int kMainBytes = kQBytes + kKvBytes + kScaleBytes;
  static constexpr int kSmemBytes = kMainBytes;
  static_assert(kSmemBytes <= target_lds_bytes(kTarget_), "the target's LDS a workgroup");

  // Its shape in the skeleton's terms (kernels/common/attention_config.hpp), for its name; the members
  // above differ from AttentionConfig's where V is read from the K stage (kVInK) or converted from the
  // K rows (kVFromK), and AttentionSkeletonConfig checks that the skeleton finds what it reads.
  static constexpr AttentionShape kShape{kBf16_, kKv_, kDqk, kDv, TileShape{kWarpsM, 1, 1, kKN, kStages}, kTarget_,
                                         CopyModel::register_staged, KvLayoutKind::row, true, 0};
  static constexpr FixedString name() {
    FixedString f = shape_name(kShape);
    f.field("mainloop", "skeleton").field("v", kVInK ? "in_k" : "from_k");
    return f.field("variant", variant_name<Variant>());
  }
};

// The CDNA kernel's arguments: paged decode's (one KV head: group = num_heads), with the rope part of
// the queries as a second tensor (q_rope: q + 512 with q's strides when the query is joined); Q's
// columns from kQRopeCol on are read there (the query_element hook, kernels/common/kernel_args.hpp).
template <class KvParams, class Variant>
struct MlaDecodeCdnaArgs : PagedDecodeKernelArgs<KvParams, Variant> {
  static constexpr int kQRopeCol = kMlaKernelVDim;
  const uint16_t* q_rope = nullptr;
  int32_t q_rope_stride_token = 0, q_rope_stride_head = 0;

  template <class T>
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE const T* query_element(int32_t token, int32_t q_head, int col) const {
    if (col >= kQRopeCol)
      return reinterpret_cast<const T*>(q_rope) + static_cast<int64_t>(token) * q_rope_stride_token +
             static_cast<int64_t>(q_head) * q_rope_stride_head + (col - kQRopeCol);
    return PagedDecodeKernelArgs<KvParams, Variant>::template query_element<T>(token, q_head, col);
  }
};
template <class Cfg>
using mla_cdna_args_t = MlaDecodeCdnaArgs<typename Cfg::Loader::Params, typename Cfg::Variant>;

}  // namespace hipattn
