// hipattn/problem/mla_decode_params.hpp: the problem description of MLA decode (the third kernel
// family: multi-head latent attention as DeepSeek-V2 / V3 / R1-class models serve it, with absorbed
// weights).
//
// Every query head attends the same single latent KV head. A cache row holds 576 dimensions: the 512
// of the latent ("nope") part, then the 64 rope dimensions. K is the whole row; V is its first 512
// dimensions (the same bytes: a kernel reads each row once). Queries have 576 dimensions, outputs 512.
// Conventions as the other families (problem/paged_decode_params.hpp): strides in ELEMENTS, the last
// dimension contiguous, device pointers unless said otherwise.
//   * Query token t = b * q_len + i is row i of sequence b (q_len new tokens a sequence: 1 for decode,
//     2..kMlaMaxQLen for multi-token (MTP) verify). The rows of a sequence are causal among
//     themselves, bottom-right: row i sees keys j <= seq_lens_k[b] - q_len + i (a context shorter than
//     q_len leaves its first rows without keys: zeros and LSE -inf).
//   * The query may come joined (q_rope null: q holds all 576 dimensions) or split as engines keep it
//     (q_rope set: q holds the 512 latent dimensions, q_rope the 64 rope dimensions, each with its own
//     strides).
//   * seq_lens_k[b] may be 0 (padding sequences of a captured batch): its rows output zeros, LSE -inf.
//     Every seq_lens_k entry is in [0, max_seqlen_k], and max_seqlen_k <= max_pages_per_seq *
//     page_size (host bounds; the kernels read the block table below them only).
//   * fp8 caches (e4m3fn, e4m3fnuz) carry one per-tensor scale (value = code * scale): a device scalar
//     (kv_scale) or, with it null, the host float kv_scale_value.
//   * fp8 queries (e4m3fn, e4m3fnuz; over an fp8 cache only) carry q_scale (value = code * q_scale;
//     problem/fp8_io.hpp TensorScale), and need the output dtype set: the products run in the compute
//     dtype of problem/fp8_io.hpp (compute_dtype: a 16-bit output's type, fp16 under an fp8 output),
//     the codes converted to it exactly as they load.
//   * The output is written in out_format (problem/fp8_io.hpp, vLLM's fp8 output contract as unified
//     attention and paged decode take it): by default 16-bit of q_dtype; or fp8 e4m3fn / e4m3fnuz with
//     one per-tensor scale, or with a scale per group of 16 / 32 / 64 / 128 of a row's 512 columns
//     written beside the output ([batch * q_len, num_heads * 512 / group_size] by two strides).
//   * LSE (optional) is [batch * q_len, num_heads] through its two strides, natural log.
// problem/mla_decode_rules.hpp validates it; the float64 reference is reference/mla_decode.hpp;
// dispatch/mla_decode.hpp runs it.
//
// A zero-filled struct (a C / FFI caller's memset, then the fields it knows) means: every pointer
// null (q_rope null: a joined query); every stride, count and bound 0; q_scale unset (host 0: the
// scale 1 for fp8 queries, problem/fp8_io.hpp); kv_scale_value 0 (unset: the scale 1 for an fp8
// cache whose kv_scale is null); scale 0 (refused by validation: set it); out_format unset (the query
// dtype, no fp8 scale). Fields whose zero is not their default:
//   q_dtype, kv_dtype  default bf16; 0 is fp16 (DType enumerator 0), a real, different problem
//                      (an fp16 query and cache): set them
//   q_len              default 1 (decode); 0 is refused by validation (q_len, unsupported): set it,
//                      1..8
// MlaDecodeTraits: max_q_len, default 1, the same way (0 is refused); its other fields' zero is their
// default.
#pragma once
#include <cstdint>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/problem/fp8_io.hpp"

namespace hipattn {

inline constexpr int32_t kMlaLatentDim = 512;  // latent ("nope") dimensions = V and output dimensions
inline constexpr int32_t kMlaRopeDim = 64;     // rope dimensions (Q and K only)
inline constexpr int32_t kMlaQkDim = 576;      // kMlaLatentDim + kMlaRopeDim: Q and K dimensions
inline constexpr int32_t kMlaMaxQLen = 8;      // query tokens a sequence (MTP verify), at most

struct MlaDecodeParams {
  // ---- queries: q [batch * q_len, num_heads, 576], or q [.., 512] with q_rope [.., 64] ----
  const void* q = nullptr;
  int64_t q_stride_token = 0, q_stride_head = 0;
  const void* q_rope = nullptr;  // null: q is joined
  int64_t q_rope_stride_token = 0, q_rope_stride_head = 0;
  DType q_dtype = DType::bf16;  // fp16, bf16, or fp8_e4m3fn / fp8_e4m3fnuz over an fp8 cache
  TensorScale q_scale;          // fp8 queries: real Q = code * q_scale (device scalar or host float)
  int32_t q_len = 1;            // 1..kMlaMaxQLen

  // ---- latent cache [num_pages, page_size, 576] ----
  const void* kv_cache = nullptr;
  DType kv_dtype = DType::bf16;  // q_dtype, fp8_e4m3fn or fp8_e4m3fnuz
  int64_t kv_stride_page = 0, kv_stride_slot = 0;
  int32_t num_pages = 0;
  int32_t page_size = 0;  // any value >= 1
  const float* kv_scale = nullptr;  // fp8: device scalar [1], or null to use kv_scale_value
  float kv_scale_value = 0.f;       // fp8 with kv_scale null (host value, finite and > 0; 0: unset, 1)

  // ---- sequences ----
  const int32_t* block_table = nullptr;  // [batch, block_table_stride]
  int64_t block_table_stride = 0;
  int32_t max_pages_per_seq = 0;
  const int32_t* seq_lens_k = nullptr;  // [batch] on the device: context + new tokens, each in [0, max_seqlen_k]
  int32_t batch = 0;
  int32_t max_seqlen_k = 0;  // host bound of every seq_lens_k entry

  // ---- heads and logits ----
  int32_t num_heads = 0;  // query heads (any count >= 1; 16..128 in the served models)
  float scale = 0.f;      // multiplies q . k (finite, > 0)

  // ---- outputs ----
  void* out = nullptr;  // [batch * q_len, num_heads, 512], dtype output_dtype(q_dtype, out_format)
  int64_t o_stride_token = 0, o_stride_head = 0;  // elements of the output dtype
  // The output dtype and its fp8 scales (problem/fp8_io.hpp; head_size 512). A 16-bit output is of
  // the compute dtype (unset: q_dtype, which must then be 16-bit).
  OutputFormat out_format;
  float* lse = nullptr;  // optional [batch * q_len, num_heads]
  int64_t lse_stride_token = 0, lse_stride_head = 0;

  int32_t num_tokens() const { return batch * q_len; }
  // The fp8 cache's host scale the kernels apply (kv_scale null): the value, or 1 when it is 0
  // (unset). Every reader of kv_scale_value goes through it.
  constexpr float kv_scale_value_or_one() const { return host_scale_or_one(kv_scale_value); }
};

// What the host knows before any call (bounds), for the workspace size: a workspace sized from these
// traits serves every call whose batch, q_len and heads are within them.
struct MlaDecodeTraits {
  int32_t max_batch = 0;
  int32_t max_q_len = 1;  // 1..kMlaMaxQLen
  int32_t num_heads = 0;
  int32_t max_seqlen_k = 0;
};

}  // namespace hipattn
