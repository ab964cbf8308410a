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

#include "hipattn/kernels/common/kv_kind.hpp"
#include "hipattn/kernels/common/output_store.hpp"
#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/numeric/fast_div.hpp"
#include "hipattn/problem/mla_decode_params.hpp"

namespace hipattn {

template <bool kBf16_, KvKind kKv_, int kBN_ = 32, int kStages_ = (kKv_ == KvKind::same16 ? 4 : 3)>
struct MlaDecodeSm90Config {
  static constexpr bool kBf16 = kBf16_;
  static constexpr KvKind kKv = kKv_;
  static constexpr int kDqk = kMlaQkDim, kDv = kMlaLatentDim;
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

}  // namespace hipattn
