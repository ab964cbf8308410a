// hipattn/problem/paged_decode_params.hpp: the problem description of paged decode (the decode
// family: every sequence asks the same number of query tokens, 1 to 8, against its paged context).
//
// The decode hot path of a serving engine: plain decode (q_len 1) and multi-token / speculative
// verify (q_len 2 to 8). The fields are spelled as in UnifiedAttentionParams (problem/unified_params.hpp)
// wherever they mean the same thing, and follow the same conventions: strides in ELEMENTS, the last
// dimension contiguous, device pointers unless said otherwise. What differs:
//   * q_len is one host value for the whole call; query row r of sequence s is token s * q_len + r of
//     q / out (no cu_seqlens_q). The rows of a sequence are causal among themselves, bottom-right:
//     row r sees keys j <= seq_lens_k[s] - q_len + r (a context shorter than q_len leaves its first
//     rows without keys: they output zeros and LSE -inf, or the sink's share).
//   * seq_lens_k[s] may be 0 (padding sequences of a captured batch): its rows output zeros.
//   * Per-tensor fp8 scales come as a device scalar (k_scale / v_scale) or, with those null, as host
//     floats (k_scale_value / v_scale_value) that travel in the kernel arguments: no per-call fill,
//     no allocation, no synchronization.
//   * No QQ-bias (a prefill feature); sliding window, sinks, softcap and ALiBi as in unified.
//   * The cache may also come in the layout of ROCm's paged attention (kv_layout = KvCacheLayout::rocm):
//     K [num_blocks, num_kv_heads, head_size / x, block_size, x] and V [num_blocks, num_kv_heads,
//     head_size, block_size], x = 16 bytes / element size (8 for fp16 / bf16, 16 for fp8), with the
//     strides of those dimensions (k_stride_chunk between the x-element chunks of a key, v_stride_dim
//     between the dimensions of a value; v_stride_slot is 1). block_size is a multiple of 8 there
//     (a value load covers 8 consecutive slots of one dimension).
// problem/paged_decode_rules.hpp validates it; dispatch/paged_decode.hpp runs it.
//
// A zero-filled struct (a C / FFI caller's memset, then the fields it knows) means: every pointer
// null; every stride, count and bound 0; q_dtype and kv_dtype fp16 (DType enumerator 0); q_scale
// unset (host 0: the scale 1 for fp8 queries, problem/fp8_io.hpp); fp8_math fp8_qk (the default);
// kv_layout rows; kv_scale_mode none; k_scale_value / v_scale_value 0 (unset: the scale 1 where a
// per-tensor scale's pointer is null); scale 0 (refused by validation: set it); softcap 0 (off);
// out_format unset (the query dtype, no fp8 scale). Fields whose zero is not their default:
//   window_left  default -1 (no window); 0 is a window of one key (each query row sees only the key
//                at its own position): a real, different problem, so set it
//   q_len        default 1 (decode); 0 is refused by validation (q_len, unsupported): set it, 1..8
// PagedDecodeTraits: max_q_len, default 1, the same way (0 is refused); its other fields' zero is
// their default.
#pragma once
#include <cstdint>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/problem/unified_params.hpp"

namespace hipattn {

// The query tokens per sequence paged decode serves: 1 (decode) to 8 (multi-token verify).
inline constexpr int32_t kPagedDecodeMaxQLen = 8;

// How the K and V caches are laid out (the kernel's paged view takes it as a policy type,
// paged/paged_kv.hpp).
enum class KvCacheLayout : uint8_t {
  rows,  // NHD or HND (as UnifiedAttentionParams): a key's or value's head_size elements contiguous
  rocm,  // K [num_blocks, num_kv_heads, head_size / x, block_size, x], V [num_blocks, num_kv_heads, head_size, block_size]
};

struct PagedDecodeParams {
  // ---- queries: q [num_seqs * q_len, num_q_heads, head_size] ----
  const void* q = nullptr;
  DType q_dtype = DType::f16;  // fp16, bf16, fp8_e4m3fn or fp8_e4m3fnuz
  int64_t q_stride_token = 0;
  int64_t q_stride_head = 0;
  TensorScale q_scale;         // fp8 queries: real Q = code * q_scale (problem/fp8_io.hpp); 16-bit: unset
  Fp8Math fp8_math = Fp8Math::fp8_qk;  // fp8 queries with an fp8 cache: the matrix path (problem/fp8_io.hpp)
  int32_t q_len = 1;  // query tokens of every sequence, 1..kPagedDecodeMaxQLen

  // ---- paged KV cache: rows (as UnifiedAttentionParams: NHD or HND by the strides) or rocm ----
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  DType kv_dtype = DType::f16;  // as UnifiedAttentionParams::kv_dtype
  KvCacheLayout kv_layout = KvCacheLayout::rows;
  int64_t k_stride_block = 0, k_stride_slot = 0, k_stride_head = 0;
  int64_t v_stride_block = 0, v_stride_slot = 0, v_stride_head = 0;
  // rocm only: elements between the x-element chunks of a key (block_size * x when packed) and
  // between the dimensions of a value (block_size when packed); k_stride_slot is x when packed,
  // v_stride_slot must be 1.
  int64_t k_stride_chunk = 0;
  int64_t v_stride_dim = 0;
  int32_t num_blocks = 0;
  int32_t block_size = 0;  // any value >= 1

  // ---- fp8 scales ----
  KvScaleMode kv_scale_mode = KvScaleMode::none;
  // per_tensor: device scalars [1], or null to use the host floats below; per_token_head:
  // [num_blocks, block_size, num_kv_heads] (strided), required.
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
  float k_scale_value = 0.f;  // per_tensor with k_scale == nullptr (host value, finite and > 0; 0: unset, 1)
  float v_scale_value = 0.f;
  int64_t scale_stride_block = 0, scale_stride_slot = 0, scale_stride_head = 0;

  // ---- sequences ----
  const int32_t* block_table = nullptr;  // [num_seqs, block_table_stride]
  int64_t block_table_stride = 0;
  int32_t max_blocks_per_seq = 0;
  const int32_t* seq_lens_k = nullptr;  // [num_seqs] on the device: each in [0, max_seqlen_k]
  int32_t num_seqs = 0;
  int32_t max_seqlen_k = 0;  // a host bound of every seq_lens_k entry

  // ---- heads ----
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;  // num_q_heads % num_kv_heads == 0
  int32_t head_size = 0;     // 64, 96, 128, 192 or 256

  // ---- logits (ALGORITHM.md's order, as unified) ----
  float scale = 0.f;
  int32_t window_left = -1;  // keys j >= pos - window_left; -1 disables
  float softcap = 0.f;
  const float* sinks = nullptr;         // [num_q_heads], natural-log units, or null
  const float* alibi_slopes = nullptr;  // [num_q_heads], or null

  // ---- outputs ----
  void* out = nullptr;  // [num_seqs * q_len, num_q_heads, head_size], dtype output_dtype(q_dtype, out_format)
  int64_t o_stride_token = 0;
  int64_t o_stride_head = 0;
  OutputFormat out_format;  // as UnifiedAttentionParams::out_format
  float* lse = nullptr;  // optional [num_q_heads, lse_stride_head >= num_seqs * q_len]
  int64_t lse_stride_head = 0;

  int32_t num_tokens() const { return num_seqs * q_len; }
  // The per-tensor host scales the kernels apply (per_tensor with a null pointer): the value, or 1
  // when it is 0 (unset). Every reader of k_scale_value / v_scale_value goes through these.
  constexpr float k_scale_value_or_one() const { return host_scale_or_one(k_scale_value); }
  constexpr float v_scale_value_or_one() const { return host_scale_or_one(v_scale_value); }
};

// Elements of one chunk of the rocm layout (x: 16 bytes of the KV dtype; 0 for an unknown dtype).
inline int32_t rocm_kv_chunk_elems(DType kv_dtype) {
  const int32_t b = static_cast<int32_t>(dtype_size(kv_dtype));
  return b > 0 ? 16 / b : 0;
}

// Sets the rocm layout with the strides of packed (contiguous) K and V caches of p's num_kv_heads,
// head_size, block_size and kv_dtype: K [num_blocks, num_kv_heads, head_size / x, block_size, x],
// V [num_blocks, num_kv_heads, head_size, block_size].
inline void set_packed_rocm_kv_layout(PagedDecodeParams& p) {
  const int64_t x = rocm_kv_chunk_elems(p.kv_dtype), d = p.head_size, bs = p.block_size;
  p.kv_layout = KvCacheLayout::rocm;
  p.k_stride_slot = x;
  p.k_stride_chunk = bs * x;
  p.k_stride_head = d * bs;
  p.k_stride_block = d * bs * p.num_kv_heads;
  p.v_stride_slot = 1;
  p.v_stride_dim = bs;
  p.v_stride_head = d * bs;
  p.v_stride_block = d * bs * p.num_kv_heads;
}

// The fields PagedDecodeParams and UnifiedAttentionParams share (same names, same meaning), from
// `s` into `d`: the one list both conversions below copy.
template <class Dst, class Src>
void copy_shared_problem_fields(Dst& d, const Src& s) {
  d.q = s.q;
  d.q_dtype = s.q_dtype;
  d.q_stride_token = s.q_stride_token;
  d.q_stride_head = s.q_stride_head;
  d.q_scale = s.q_scale;
  d.fp8_math = s.fp8_math;
  d.k_cache = s.k_cache;
  d.v_cache = s.v_cache;
  d.kv_dtype = s.kv_dtype;
  d.k_stride_block = s.k_stride_block, d.k_stride_slot = s.k_stride_slot, d.k_stride_head = s.k_stride_head;
  d.v_stride_block = s.v_stride_block, d.v_stride_slot = s.v_stride_slot, d.v_stride_head = s.v_stride_head;
  d.num_blocks = s.num_blocks;
  d.block_size = s.block_size;
  d.kv_scale_mode = s.kv_scale_mode;
  d.k_scale = s.k_scale;
  d.v_scale = s.v_scale;
  d.scale_stride_block = s.scale_stride_block, d.scale_stride_slot = s.scale_stride_slot;
  d.scale_stride_head = s.scale_stride_head;
  d.block_table = s.block_table;
  d.block_table_stride = s.block_table_stride;
  d.max_blocks_per_seq = s.max_blocks_per_seq;
  d.seq_lens_k = s.seq_lens_k;
  d.num_seqs = s.num_seqs;
  d.max_seqlen_k = s.max_seqlen_k;
  d.num_q_heads = s.num_q_heads;
  d.num_kv_heads = s.num_kv_heads;
  d.head_size = s.head_size;
  d.scale = s.scale;
  d.window_left = s.window_left;
  d.softcap = s.softcap;
  d.sinks = s.sinks;
  d.alibi_slopes = s.alibi_slopes;
  d.out = s.out;
  d.o_stride_token = s.o_stride_token;
  d.o_stride_head = s.o_stride_head;
  d.out_format = s.out_format;
  d.lse = s.lse;
  d.lse_stride_head = s.lse_stride_head;
}

// The unified-attention problem that computes the same thing: every field copied, q lengths all
// q_len (cu_seqlens_q = 0, q_len, 2 q_len, ...: the caller provides that array, host or device, or
// null when only the host fields are read), causal, no QQ-bias. The host-float per-tensor scales
// have no unified counterpart (its scales are pointers): the caller passes pointers to them.
inline UnifiedAttentionParams to_unified_params(const PagedDecodeParams& p, const int32_t* cu_seqlens_q,
                                                const float* k_scale = nullptr, const float* v_scale = nullptr) {
  UnifiedAttentionParams u;
  copy_shared_problem_fields(u, p);
  if (u.k_scale == nullptr) u.k_scale = k_scale;
  if (u.v_scale == nullptr) u.v_scale = v_scale;
  u.cu_seqlens_q = cu_seqlens_q;
  u.num_tokens = p.num_tokens();
  u.max_seqlen_q = p.num_seqs > 0 ? p.q_len : 0;
  u.causal = true;
  return u;
}

// The paged-decode problem of a unified one whose sequences all ask q_len tokens (pointers
// included; cu_seqlens_q, the q-length bound and QQ-bias dropped, per-tensor scales as pointers).
inline PagedDecodeParams paged_decode_params_from_unified(const UnifiedAttentionParams& u, int32_t q_len) {
  PagedDecodeParams p;
  copy_shared_problem_fields(p, u);
  p.q_len = q_len;
  return p;
}

// What the host knows before any call, for the workspace size (dispatch/paged_decode.hpp
// paged_decode_workspace_size): bounds every later call stays within. A workspace sized from these
// traits serves every call whose num_seqs, q_len, heads and head size are within them.
struct PagedDecodeTraits {
  int32_t max_num_seqs = 0;  // bound of num_seqs
  int32_t max_q_len = 1;     // bound of q_len (1..kPagedDecodeMaxQLen)
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t max_head_size = 0;   // bound of head_size (a table head size or larger)
  int32_t max_seqlen_k = 0;    // bound of every context length (batch-invariant plans size from it)
};

}  // namespace hipattn
