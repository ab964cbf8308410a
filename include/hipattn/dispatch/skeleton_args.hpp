// hipattn/dispatch/skeleton_args.hpp: what the attention skeleton's launches share across families
// (host only): the KvKind of a problem's operands, the row map of a workgroup, the skeleton's kernel
// arguments and the reduce's outputs from a problem, the split-KV reduce's block shape, launch
// dimensions, and the name of a compiled configuration for messages.
#pragma once
#include <cstdint>
#include <string>

#include "hipattn/dispatch/output_args.hpp"
#include "hipattn/kernels/common/kernel_args.hpp"
#include "hipattn/numeric/fast_div.hpp"
#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/platform/target.hpp"
#include "hipattn/problem/unified_params.hpp"

namespace hipattn {

// ---- the KvKind of a problem's operands ----------------------------------------------------------

// The KV storage kind of a cache dtype (16-bit caches hold the instance's 16-bit type); also the
// kind of a query dtype (fp8 queries are converted as they load).
constexpr KvKind kv_kind_of(DType dt) {
  return dt == DType::fp8_e4m3fn ? KvKind::e4m3fn : dt == DType::fp8_e4m3fnuz ? KvKind::e4m3fnuz : KvKind::same16;
}

// The KvKind of the instance a problem runs on: the cache's storage, or the target's q8 kind (the
// fp8 matrix path) unless the call asks to convert (problem/fp8_io.hpp Fp8Math), where the target's
// fp8 MMA reads the cache's format (TargetTraits::mma_fp8):
//   e4m3fn MMA (sm_90, gfx950): e4m3fn queries with an e4m3fn cache -> e4m3fn_q8
//   e4m3fnuz MMA (gfx942): fp8 queries of either format with an e4m3fnuz cache -> e4m3fnuz_q8
//           (e4m3fn queries are re-encoded as they load: numeric/kv_kind.hpp)
inline KvKind operand_kv_kind(DType q_dtype, DType kv_dtype, Fp8Math math, Target target) {
  if (math != Fp8Math::convert && is_fp8(q_dtype)) {
    const Fp8Format mma = target_traits(target).mma_fp8;
    if (mma == Fp8Format::e4m3fn && q_dtype == DType::fp8_e4m3fn && kv_dtype == DType::fp8_e4m3fn)
      return KvKind::e4m3fn_q8;
    if (mma == Fp8Format::e4m3fnuz && kv_dtype == DType::fp8_e4m3fnuz) return KvKind::e4m3fnuz_q8;
  }
  return kv_kind_of(kv_dtype);
}

// ---- the row map ---------------------------------------------------------------------------------

// The skeleton's row map of a workgroup of `rows` rows (kernels/common/work.hpp row_coord): min(group,
// rows) q heads of a token, then tokens (block_q of them), head chunks when the group exceeds the rows,
// and the q-blocks of q_len tokens. Unified attention, paged decode and CDNA MLA decode plan with it.
struct RowMap {
  int32_t rows_per_token = 1, block_q = 1, head_chunks = 1, q_blocks = 1;
};
constexpr RowMap skeleton_row_map(int32_t group, int32_t rows, int32_t q_len) {
  RowMap m;
  m.rows_per_token = group < rows ? group : rows;
  m.block_q = rows / m.rows_per_token;
  m.head_chunks = (group + m.rows_per_token - 1) / m.rows_per_token;
  m.q_blocks = (q_len + m.block_q - 1) / m.block_q;
  return m;
}

// ---- kernel arguments ----------------------------------------------------------------------------

// The output fields of a reduce's arguments (sinks, out and its strides, LSE) from a problem whose
// fields are spelled alike (UnifiedAttentionParams, PagedDecodeParams).
template <class ReduceArgs, class Params>
void fill_merge_outputs(ReduceArgs& r, const Params& p) {
  r.sinks = p.sinks;
  r.out = make_output_args(p.out, p.o_stride_token, p.o_stride_head, p.q_dtype, p.out_format, p.head_size);
  r.lse = p.lse;
  r.lse_stride_head = static_cast<int32_t>(p.lse_stride_head);
}

// The query fields of the skeleton's arguments.
template <class Args>
void fill_query_args(Args& a, const UnifiedAttentionParams& p) {
  a.q = static_cast<const uint16_t*>(p.q);
  a.q_stride_token = static_cast<int32_t>(p.q_stride_token);
  a.q_stride_head = static_cast<int32_t>(p.q_stride_head);
  a.q_kind = kv_kind_of(p.q_dtype);     // same16, or the fp8 format of the codes
  a.p8 = p.fp8_math == Fp8Math::fp8_pv;  // read by the fp8 matrix path's instances only
  if (is_fp8(p.q_dtype)) {
    a.q_scale_tensor = p.q_scale.device;
    a.q_scale_value = p.q_scale.host_or_one();
  }
}

// The cache fields of the skeleton's arguments (the paged view and its scales).
template <class Args>
void fill_cache_args(Args& a, const UnifiedAttentionParams& p) {
  a.kv.k = p.k_cache;
  a.kv.v = p.v_cache;
  a.kv.k_stride_block = static_cast<int32_t>(p.k_stride_block);
  a.kv.k_stride_slot = static_cast<int32_t>(p.k_stride_slot);
  a.kv.k_stride_head = static_cast<int32_t>(p.k_stride_head);
  a.kv.v_stride_block = static_cast<int32_t>(p.v_stride_block);
  a.kv.v_stride_slot = static_cast<int32_t>(p.v_stride_slot);
  a.kv.v_stride_head = static_cast<int32_t>(p.v_stride_head);
  a.kv.block_table = p.block_table;
  a.kv.block_table_stride = static_cast<int32_t>(p.block_table_stride);
  a.kv.page_size = p.block_size;
  a.kv.page_div = FastDivmod(static_cast<uint32_t>(p.block_size));
  a.per_token_head_scale = p.kv_scale_mode == KvScaleMode::per_token_head;
  if (a.per_token_head_scale) {
    a.kv.k_scale = p.k_scale;
    a.kv.v_scale = p.v_scale;
    a.kv.s_stride_block = static_cast<int32_t>(p.scale_stride_block);
    a.kv.s_stride_slot = static_cast<int32_t>(p.scale_stride_slot);
    a.kv.s_stride_head = static_cast<int32_t>(p.scale_stride_head);
  }
  if (p.kv_scale_mode == KvScaleMode::per_tensor) {
    a.k_scale_tensor = p.k_scale;
    a.v_scale_tensor = p.v_scale;
  }
}

// The skeleton's arguments (kernels/common/kernel_args.hpp) of problem `p` with a tile's row map
// (rows_per_token q heads a token, block_q tokens a q-block, head_chunks chunks a kv head): every
// family fills these the same way (paged decode from its unified view, to_unified_params).
template <class KvParams, class Variant>
void fill_attention_kernel_args(AttentionKernelArgs<KvParams, Variant>& a, const UnifiedAttentionParams& p,
                                int32_t rows_per_token, int32_t block_q, int32_t head_chunks, const Variant& variant) {
  fill_query_args(a, p);
  fill_cache_args(a, p);
  a.seq_lens_k = p.seq_lens_k;
  a.num_seqs = p.num_seqs;
  a.num_q_heads = p.num_q_heads;
  a.group = p.num_q_heads / p.num_kv_heads;
  a.rows_per_token = rows_per_token;
  a.block_q = block_q;
  a.head_chunks = head_chunks;
  a.rows_div = FastDivmod(static_cast<uint32_t>(rows_per_token));
  a.scale = p.scale;
  a.causal = p.causal;
  a.window_left = p.window_left;
  a.variant = variant;
  fill_merge_outputs(a, p);
}

// ---- launch shapes and names ---------------------------------------------------------------------

// Threads of a split-KV reduce block (its kThreads template argument), and the (token, q head) items
// one block merges: kD / 4 threads per item, each merging 4 columns; as many items as fit 128
// threads (d = 192: 48 threads an item, 2 items, 96 threads; d = 96: 24 threads an item, 5 items,
// 120 threads). Unified attention's, paged decode's and MLA decode's reduces share it.
constexpr int split_kv_reduce_threads(int head_dim) {
  return (head_dim / 4) * (128 / (head_dim / 4) > 0 ? 128 / (head_dim / 4) : 1);
}
constexpr int split_kv_reduce_items_per_block(int head_dim) {
  return split_kv_reduce_threads(head_dim) / (head_dim / 4);
}

// A launch's grid (or block) dimensions.
struct LaunchDim {
  uint32_t x = 1, y = 1, z = 1;
};

// "unified_2d_kernel<bf16, kv=e4m3fn, D=256, BM=64, BN=64>": a compiled configuration of any family,
// for error messages (a refused shared-memory size, a pipeline not built). The KV kind is named, so
// that a missing fp8 instance does not read like a 16-bit one; configurations without one (the
// 16-bit warpgroup pipeline) say same16.
template <class Cfg>
std::string config_name(const char* kernel) {
  KvKind kv = KvKind::same16;
  if constexpr (requires { Cfg::kKv; }) kv = Cfg::kKv;
  return std::string(kernel) + (Cfg::kBf16 ? "<bf16" : "<f16") + ", kv=" + kv_kind_name(kv) +
         ", D=" + std::to_string(Cfg::kD) + ", BM=" + std::to_string(Cfg::kBM) + ", BN=" + std::to_string(Cfg::kBN) + ">";
}

}  // namespace hipattn
