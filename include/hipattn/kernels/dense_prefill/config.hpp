// hipattn/kernels/dense_prefill/config.hpp: the instances and the runtime arguments of dense prefill.
//
// sm_90 (DensePrefillSm90Config): the warp-specialised skeleton's shape (kernels/common/
// warpgroup_config.hpp): 384 threads = warpgroup 0 (the producer: one thread issues the bulk tensor
// copies of Q and of the K / V ring) + two consumer warpgroups of 64 query rows each (kBM = 128 rows of
// one q head), kBN keys per KV tile, kStages deep. The tile
// sizes are FlashAttention-3's for each head size (its hopper/tile_size.h choices, measured there), cut
// to what 227 KiB of shared memory holds with two stages:
//   d 64: 128 x 128, 4 stages (144 KiB);  d 128: 128 x 128, 2 stages (160 KiB);
//   d 192 / v 128: 128 x 128, 2 stages (208 KiB);  d 256: 128 x 80, 2 stages (224 KiB).
#pragma once
#include <cstdint>
#include <string>

#include "hipattn/kernels/common/attention_config.hpp"
#include "hipattn/kernels/common/kernel_args.hpp"
#include "hipattn/kernels/cdna/pingpong_config.hpp"
#include "hipattn/kernels/sm90/warpgroup_config.hpp"
#include "hipattn/numeric/fast_div.hpp"
#include "hipattn/tile/variants.hpp"

#if defined(HIPATTN_BACKEND_CUDA)
#include <cuda.h>
#endif

namespace hipattn {

template <bool kBf16_, int kDqk_, int kDv_, bool kSoftcap_, int kBN_ = (kDqk_ == 256 ? 80 : 128), int kStages_ = (kDqk_ == 64 ? 4 : 2)>
struct DensePrefillSm90Config
    : WarpgroupPipelineConfig<kBf16_, kDqk_, kDv_, kBN_, kStages_, StandardVariant<kSoftcap_, false, false>> {
  using Base = WarpgroupPipelineConfig<kBf16_, kDqk_, kDv_, kBN_, kStages_, StandardVariant<kSoftcap_, false, false>>;
  static constexpr bool kSoftcap = kSoftcap_;
  static std::string name() {
    return std::string(Base::kBf16 ? "bf16" : "f16") + ",d" + std::to_string(Base::kDqk) + "/" + std::to_string(Base::kDv) +
           ",bn" + std::to_string(Base::kBN) + ",s" + std::to_string(Base::kStages) + (kSoftcap ? ",softcap" : "");
  }
};

// What every dense prefill kernel reads besides its operand views (host-visible).
struct DensePrefillCommon {
  const int32_t* cu_seqlens_q = nullptr;  // null: batched
  const int32_t* cu_seqlens_k = nullptr;
  int32_t num_seqs = 0, max_seqlen_q = 0, max_seqlen_k = 0;
  int32_t block_q = 1;         // query rows of a workgroup
  int32_t q_blocks = 0;        // q-block slots of the work items (by band: blocks_per_seq x num_seqs)
  int32_t blocks_per_seq = 0;  // ceil(max_seqlen_q / block_q)
  bool by_band = true;         // slot numbering (kernels/dense_prefill/kernels.hpp dense_work)
  int32_t group = 1;           // q heads per kv head
  int32_t num_q_heads = 0;
  float scale = 1.f;
  bool causal = false;
  int32_t window_left = -1;
  uint16_t* out = nullptr;
  int64_t o_stride_token = 0, o_stride_head = 0, o_stride_batch = 0;
  float* lse = nullptr;
  int64_t lse_stride_head = 0;
};

// The skeleton kernel's arguments (dense_prefill_kernel, the CDNA path): the skeleton's, with the
// paged view over DenseKvLayout as `kv`, and the dense work description. Batched tensors (dense's
// cu_seqlens_q null): the kernel moves q, out and lse to the workgroup's sequence by their batch
// strides (elements; out's is dense.o_stride_batch), so that the skeleton reads them as one packed
// sequence whose tokens start at 0; K and V rows are seq x kv.block_table_stride + key of their token
// strides (the batch strides' common multiple of them: dispatch/dense_prefill.hpp dense_kv_pitch).
template <class KvParams, class Variant>
struct DensePrefillKernelArgs : AttentionKernelArgs<KvParams, Variant> {
  DensePrefillCommon dense;
  int64_t q_stride_batch = 0;
};
template <class Cfg>
using dense_args_t = DensePrefillKernelArgs<typename Cfg::Loader::Params, typename Cfg::Variant>;

// The skeleton instance of (target, dtype, head sizes, tile, variant): an AttentionConfig over
// DenseKvLayout (pages of one token, 64-bit offsets), register-staged loads by default (any tensor
// size), or LDS DMA (tensors within its 32-bit buffer range: the ping-pong instances below). A value
// head narrower than the query / key head ((192, 128)) takes the d_qk tile with V rows and O of d_v
// columns: the register-staged loader loads V's rows from their own tensor, the first d_v / 8 chunks
// of its walk over a key row (kernels/common/loaders/tile_walk.hpp kNarrowV).
constexpr AttentionShape dense_skeleton_shape(Target target, bool bf16, int d_qk, int d_v, TileShape tile,
                                              CopyModel copy = CopyModel::register_staged) {
  return AttentionShape{bf16, KvKind::same16, d_qk, d_v, tile, target, copy, KvLayoutKind::dense, true, 1};
}

// The ping-pong instance of (target, dtype, head size, variant) (kernels/cdna/pingpong_config.hpp):
// eight waves in two groups of four, each over all of a KV tile, LDS-DMA K and V rings of two stages.
// d = 128: waves of 32 rows on the 32-row tile of 32x32x16 MFMAs (a 256-row q-block, AITER's shape)
// over 64-key tiles (LDS Q 64 KiB + K 2 x 16 + V 2 x 16 = 128 KiB, one workgroup a CU, 256 VGPRs: 242
// used); timed on MI355X, 0.38 of the roofline against 0.32 for eight 16-row waves over 32-key tiles
// (bench/NOTES.md "AMD, timed: dense d = 128 on the 32-row tile"). d = 256: waves of 16 rows over 32
// keys (128 rows; 64 + 2 x 16 + 2 x 16 = 128 KiB, one workgroup a CU; 32-row waves would need 192 KiB).
template <Target kT, bool kBf16, int kD, class Variant>
using DensePingPongConfig =
    PingPongConfig<AttentionConfig<dense_skeleton_shape(kT, kBf16, kD, kD, TileShape{8, 1, kD == 128 ? 2 : 1, kD == 128 ? 64 : 32, 2},
                                                        CopyModel::lds_dma),
                                   Variant>>;

#if defined(HIPATTN_BACKEND_CUDA)
// The sm_90 kernel's arguments: the tensor maps of q, k and v (dispatch/dense_prefill.hpp), passed as
// __grid_constant__ (the copies read them in the parameter space).
struct DensePrefillSm90Args {
  CUtensorMap q_map, k_map, v_map;
  DensePrefillCommon common;
  LogitArgs logit;
};
#endif

}  // namespace hipattn
