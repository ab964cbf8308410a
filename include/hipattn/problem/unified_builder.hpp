// hipattn/problem/unified_builder.hpp: UnifiedAttentionParams from shapes and a cache layout, with every
// stride and bound filled for contiguous tensors; the caller sets the pointers.
//
//   hipattn::UnifiedAttentionParams p = hipattn::make_unified_params({
//       .num_seqs = 4, .num_tokens = 300, .max_seqlen_q = 128, .max_seqlen_k = 4096,
//       .num_q_heads = 32, .num_kv_heads = 8, .head_size = 128,
//       .num_blocks = 2048, .block_size = 16, .layout = hipattn::KvLayout::nhd,
//       .q_dtype = hipattn::DType::bf16, .kv_dtype = hipattn::DType::bf16});
//   p.q = q; p.k_cache = k; p.v_cache = v; p.out = out;
//   p.block_table = block_table; p.cu_seqlens_q = cu_seqlens_q; p.seq_lens_k = seq_lens_k;
//
// Contiguous means: q and out [num_tokens, num_q_heads, head_size]; k_cache and v_cache
// [num_blocks, block_size, num_kv_heads, head_size] (NHD) or [num_blocks, num_kv_heads, block_size,
// head_size] (HND); per-token-head scales [num_blocks, block_size, num_kv_heads]; block_table
// [num_seqs, max_blocks_per_seq]; lse [num_q_heads, num_tokens].
// Padded or strided tensors: build, then overwrite the strides that differ.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/problem/unified_params.hpp"

namespace hipattn {

// Order of the dims of one block of a paged KV cache.
enum class KvLayout : uint8_t {
  nhd,  // [num_blocks, block_size, num_kv_heads, head_size]
  hnd,  // [num_blocks, num_kv_heads, block_size, head_size]
};

// Strides (elements) of a contiguous paged cache.
struct CacheStrides {
  int64_t block, slot, head;
};
// Strides of a contiguous NHD cache [num_blocks, block_size, num_kv_heads, head_size].
constexpr CacheStrides nhd_strides(int32_t block_size, int32_t num_kv_heads, int32_t head_size) {
  return {int64_t(block_size) * num_kv_heads * head_size, int64_t(num_kv_heads) * head_size, head_size};
}
// Strides of a contiguous HND cache [num_blocks, num_kv_heads, block_size, head_size].
constexpr CacheStrides hnd_strides(int32_t block_size, int32_t num_kv_heads, int32_t head_size) {
  return {int64_t(block_size) * num_kv_heads * head_size, head_size, int64_t(block_size) * head_size};
}
// Strides of a contiguous cache in `layout`.
constexpr CacheStrides cache_strides(KvLayout layout, int32_t block_size, int32_t num_kv_heads, int32_t head_size) {
  return layout == KvLayout::hnd ? hnd_strides(block_size, num_kv_heads, head_size)
                                 : nhd_strides(block_size, num_kv_heads, head_size);
}

// The shapes of a unified-attention problem (fields as in UnifiedAttentionParams; designated
// initializers must keep this order).
struct UnifiedShape {
  int32_t num_seqs = 0;
  int32_t num_tokens = 0;
  int32_t max_seqlen_q = 0;
  int32_t max_seqlen_k = 0;
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_size = 0;
  int32_t num_blocks = 0;
  int32_t block_size = 0;
  int32_t max_blocks_per_seq = 0;  // 0: ceil(max_seqlen_k / block_size), at least 1
  KvLayout layout = KvLayout::nhd;  // of both k_cache and v_cache
  DType q_dtype = DType::f16;
  DType kv_dtype = DType::f16;      // q_dtype or an fp8 type
  KvScaleMode kv_scale_mode = KvScaleMode::none;  // fp8 KV: per_tensor or per_token_head
  int64_t qq_bias_stride = 0;       // row stride (and valid columns) of qq_bias; 0 without qq_bias
};

// Copy the cache strides `s` into the K (and, with `v` true, the V) stride fields of `p`.
inline void set_cache_strides(UnifiedAttentionParams& p, const CacheStrides& s, bool k = true, bool v = true) {
  if (k) p.k_stride_block = s.block, p.k_stride_slot = s.slot, p.k_stride_head = s.head;
  if (v) p.v_stride_block = s.block, p.v_stride_slot = s.slot, p.v_stride_head = s.head;
}

// UnifiedAttentionParams of shape `s` with every stride contiguous, every pointer null, scale
// 1 / sqrt(head_size) and the other fields at their defaults (causal, no window, no softcap).
inline UnifiedAttentionParams make_unified_params(const UnifiedShape& s) {
  UnifiedAttentionParams p;
  p.q_dtype = s.q_dtype;
  p.q_stride_head = s.head_size;
  p.q_stride_token = int64_t(s.num_q_heads) * s.head_size;

  p.kv_dtype = s.kv_dtype;
  set_cache_strides(p, cache_strides(s.layout, s.block_size, s.num_kv_heads, s.head_size));
  p.num_blocks = s.num_blocks;
  p.block_size = s.block_size;

  p.kv_scale_mode = s.kv_scale_mode;
  p.scale_stride_head = 1;
  p.scale_stride_slot = s.num_kv_heads;
  p.scale_stride_block = int64_t(s.block_size) * s.num_kv_heads;

  int32_t mbps = s.max_blocks_per_seq;
  if (mbps == 0 && s.block_size > 0) mbps = std::max(1, (s.max_seqlen_k + s.block_size - 1) / s.block_size);
  p.max_blocks_per_seq = mbps;
  p.block_table_stride = mbps;
  p.num_seqs = s.num_seqs;
  p.num_tokens = s.num_tokens;
  p.max_seqlen_q = s.max_seqlen_q;
  p.max_seqlen_k = s.max_seqlen_k;

  p.num_q_heads = s.num_q_heads;
  p.num_kv_heads = s.num_kv_heads;
  p.head_size = s.head_size;

  p.scale = s.head_size > 0 ? 1.f / std::sqrt(float(s.head_size)) : 0.f;
  p.qq_bias_stride = s.qq_bias_stride;

  p.o_stride_head = s.head_size;
  p.o_stride_token = int64_t(s.num_q_heads) * s.head_size;
  p.lse_stride_head = s.num_tokens;
  return p;
}

}  // namespace hipattn
