// hipattn/problem/unified_params.hpp: the problem description of unified paged/varlen attention.
//
// The contract follows vLLM's / AITER's Triton `unified_attention` (see ALGORITHM.md for the math and
// the one bias-and-mask order every kernel and the reference follow). All strides are in ELEMENTS of
// the tensor they describe; the last dimension (head_size) is always contiguous.
//
// Device pointers: q, k_cache, v_cache, block_table, cu_seqlens_q, seq_lens_k, sinks, alibi_slopes,
// qq_bias, k_scale, v_scale, out, lse. The reference (reference/unified_attention.hpp) takes the same
// struct with host pointers. problem/unified_rules.hpp validates it; problem/unified_builder.hpp fills its
// strides and bounds from shapes and a cache layout.
//
// A zero-filled struct (a C / FFI caller's memset, then the fields it knows) means: every pointer
// null; every stride, count and bound 0; q_dtype and kv_dtype fp16 (DType enumerator 0); q_scale
// unset (host 0: the scale 1 for fp8 queries, problem/fp8_io.hpp); fp8_math fp8_qk (the default);
// kv_scale_mode none; scale 0 (refused by validation: set it); softcap 0 (off); qq_bias_stride 0;
// out_format unset (the query dtype, no fp8 scale). Fields whose zero is not their default (their
// zero is a real, different problem, so a zero-filling caller must set them):
//   causal       default true (bottom-right causal); false (0) is non-causal attention
//   window_left  default -1 (no window); 0 keeps only the keys at or after the query's position
//                (with causal, the one key at its position)
#pragma once
#include <cstdint>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/problem/fp8_io.hpp"

namespace hipattn {

// How fp8 KV values are scaled back to real numbers (value = code * scale).
enum class KvScaleMode : uint8_t {
  none,            // KV is fp16/bf16: no scale
  per_tensor,      // one float for K and one for V: k_scale[0], v_scale[0]
  per_token_head,  // one float per (cache slot, kv head): [num_blocks, block_size, num_kv_heads] (strided)
};

// The problem description of one unified-attention call.
struct UnifiedAttentionParams {
  // ---- queries: q [num_tokens, num_q_heads, head_size] ----
  const void* q = nullptr;
  DType q_dtype = DType::f16;  // fp16, bf16, fp8_e4m3fn or fp8_e4m3fnuz
  int64_t q_stride_token = 0;
  int64_t q_stride_head = 0;
  TensorScale q_scale;         // fp8 queries: real Q = code * q_scale (problem/fp8_io.hpp); 16-bit: unset
  Fp8Math fp8_math = Fp8Math::fp8_qk;  // fp8 queries with an fp8 cache: the matrix path (problem/fp8_io.hpp)

  // ---- paged KV cache: k_cache / v_cache [num_blocks, block_size, num_kv_heads, head_size] (NHD) or
  //      [num_blocks, num_kv_heads, block_size, head_size] (HND); the strides say which. ----
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  DType kv_dtype = DType::f16;  // the Q dtype (16-bit Q), the 16-bit type of fp8 Q, fp8_e4m3fn or fp8_e4m3fnuz
  int64_t k_stride_block = 0, k_stride_slot = 0, k_stride_head = 0;
  int64_t v_stride_block = 0, v_stride_slot = 0, v_stride_head = 0;
  int32_t num_blocks = 0;  // physical blocks in the cache
  int32_t block_size = 0;  // tokens per block (page size), any value >= 1

  // ---- fp8 scales ----
  KvScaleMode kv_scale_mode = KvScaleMode::none;
  const float* k_scale = nullptr;  // per_tensor: [1]; per_token_head: [num_blocks, block_size, num_kv_heads]
  const float* v_scale = nullptr;
  int64_t scale_stride_block = 0, scale_stride_slot = 0, scale_stride_head = 0;  // per_token_head only

  // ---- sequences ----
  const int32_t* block_table = nullptr;  // [num_seqs, max_blocks_per_seq]
  int64_t block_table_stride = 0;        // elements between rows of block_table
  int32_t max_blocks_per_seq = 0;
  const int32_t* cu_seqlens_q = nullptr;  // [num_seqs + 1], cu_seqlens_q[0] == 0, cu_seqlens_q[num_seqs] == num_tokens
  const int32_t* seq_lens_k = nullptr;    // [num_seqs], total KV length of each sequence (context + new tokens)
  int32_t num_seqs = 0;
  int32_t num_tokens = 0;     // total query tokens
  int32_t max_seqlen_q = 0;   // an upper bound of every q length (the host knows it)
  int32_t max_seqlen_k = 0;   // an upper bound of every kv length

  // ---- heads ----
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;  // num_q_heads % num_kv_heads == 0 (GQA / MQA)
  int32_t head_size = 0;     // 64, 96, 128, 192 or 256 (problem/instance_table.hpp)

  // ---- logits: scores s = scale * q.k, then the order of ALGORITHM.md ----
  float scale = 0.f;         // softmax scale, usually 1/sqrt(head_size); > 0 and finite
  bool causal = true;        // bottom-right aligned: query i of a sequence sees keys j <= kv_len - q_len + i
  int32_t window_left = -1;  // sliding window: keys j >= pos - window_left only (pos = the query's
                             // absolute position); -1 disables. vLLM's sliding_window W is W - 1 here.
  float softcap = 0.f;       // s = softcap * tanh(s / softcap) when > 0
  const float* sinks = nullptr;         // [num_q_heads] sink logits (natural-log units), or null
  const float* alibi_slopes = nullptr;  // [num_q_heads], bias slope * (j - pos), or null
  const float* qq_bias = nullptr;       // [max_seqlen_q, qq_bias_stride]: bias[i][j - context_len] for keys
                                        // among the sequence's own new tokens, or null
  int64_t qq_bias_stride = 0;           // row stride of qq_bias and the number of valid columns

  // ---- outputs ----
  void* out = nullptr;  // [num_tokens, num_q_heads, head_size], dtype output_dtype(q_dtype, out_format)
  int64_t o_stride_token = 0;
  int64_t o_stride_head = 0;
  OutputFormat out_format;  // the output dtype and its fp8 scales (problem/fp8_io.hpp)
  float* lse = nullptr;  // optional [num_q_heads, num_tokens]: natural-log sum of exp of the logits
                         // (sink included); -inf for a query that sees no key and no sink
  int64_t lse_stride_head = 0;
};

}  // namespace hipattn
