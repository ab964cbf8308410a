// hipattn/problem/dense_prefill_params.hpp: the problem description of dense prefill (the fourth
// kernel family: contiguous Q, K and V, no page table).
//
// Prefill of whole prompts, or of chunks against contiguous K / V: every sequence's queries against its
// keys, with head sizes (head_size_qk, head_size_v) in {(64, 64), (128, 128), (256, 256), (192, 128)}
// (the last is DeepSeek-class q/k 192 with v 128). The fields are spelled as in UnifiedAttentionParams
// (problem/unified_params.hpp) wherever they mean the same thing and follow the same conventions:
// strides in ELEMENTS, the last dimension contiguous, device pointers unless said otherwise.
//
// Two ways to lay out the sequences:
//   * packed varlen (cu_seqlens_q and cu_seqlens_k set, on the device, [num_seqs + 1] each): sequence s
//     owns query tokens [cu_seqlens_q[s], cu_seqlens_q[s + 1]) of q / out and key tokens
//     [cu_seqlens_k[s], cu_seqlens_k[s + 1]) of k / v; lengths may be 0. q and out hold num_tokens_q
//     tokens, k and v num_tokens_k. max_seqlen_q / max_seqlen_k bound the lengths (host values).
//   * batched (both null): every sequence has exactly max_seqlen_q queries and max_seqlen_k keys;
//     token t of sequence b is at b * q_stride_batch + t * q_stride_token (k, v, out alike: BSHD
//     through strides). num_tokens_q = num_seqs * max_seqlen_q and num_tokens_k = num_seqs *
//     max_seqlen_k (they count the tokens; the layout is the strides').
// Query row i of a sequence with lq queries and lk keys sits at position lk - lq + i; under `causal` it
// sees keys j <= that position (bottom-right), with a window also j >= position - window_left. A query
// that sees no key (lq > lk under causal, or an empty window) outputs zeros and LSE -inf.
// q, k, v and out share one dtype (fp16 or bf16). LSE (optional) is [num_q_heads, lse_stride_head]
// indexed by the query token (packed: its index in q; batched: b * max_seqlen_q + t), natural log.
// problem/dense_prefill_rules.hpp validates it; the float64 reference is reference/dense_prefill.hpp.
//
// A zero-filled struct (a C / FFI caller's memset, then the fields it knows) means: dtype fp16 (DType
// enumerator 0); every pointer null (cu_seqlens_q / cu_seqlens_k null: batched); every stride, count
// and bound 0; scale 0 (refused by validation: set it); causal false (the default: non-causal);
// softcap 0 (off). The one field whose zero is not its default:
//   window_left  default -1 (no window); 0 keeps only the keys at or after the query's position
//                (with causal, the one key at its position): a real, different problem, so set it
#pragma once
#include <array>
#include <cstdint>
#include <utility>

#include "hipattn/numeric/dtype.hpp"

namespace hipattn {

// The (head_size_qk, head_size_v) pairs the family serves.
inline constexpr std::array<std::pair<int32_t, int32_t>, 4> kDensePrefillHeadSizes{{{64, 64}, {128, 128}, {256, 256}, {192, 128}}};

inline constexpr bool dense_prefill_head_sizes_supported(int32_t d_qk, int32_t d_v) {
  for (const auto& [qk, v] : kDensePrefillHeadSizes)
    if (qk == d_qk && v == d_v) return true;
  return false;
}

struct DensePrefillParams {
  DType dtype = DType::f16;  // of q, k, v and out: fp16 or bf16

  // ---- queries: q [num_tokens_q, num_q_heads, head_size_qk] (batched: [num_seqs, max_seqlen_q, ..]) ----
  const void* q = nullptr;
  int64_t q_stride_token = 0, q_stride_head = 0, q_stride_batch = 0;  // q_stride_batch: batched only

  // ---- keys and values: k [num_tokens_k, num_kv_heads, head_size_qk], v [.., head_size_v] ----
  const void* k = nullptr;
  int64_t k_stride_token = 0, k_stride_head = 0, k_stride_batch = 0;
  const void* v = nullptr;
  int64_t v_stride_token = 0, v_stride_head = 0, v_stride_batch = 0;

  // ---- sequences ----
  const int32_t* cu_seqlens_q = nullptr;  // [num_seqs + 1] on the device (packed varlen), or null (batched)
  const int32_t* cu_seqlens_k = nullptr;  // [num_seqs + 1] on the device (packed varlen), or null (batched)
  int32_t num_seqs = 0;
  int32_t num_tokens_q = 0;  // packed: cu_seqlens_q[num_seqs]; batched: num_seqs * max_seqlen_q
  int32_t num_tokens_k = 0;  // packed: cu_seqlens_k[num_seqs]; batched: num_seqs * max_seqlen_k
  int32_t max_seqlen_q = 0;  // host bound of every query length (batched: the length)
  int32_t max_seqlen_k = 0;  // host bound of every key length (batched: the length)

  // ---- heads ----
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;  // num_q_heads % num_kv_heads == 0 (GQA any ratio, MQA)
  int32_t head_size_qk = 0;  // of q and k
  int32_t head_size_v = 0;   // of v and out

  // ---- logits ----
  float scale = 0.f;         // multiplies q . k (usually 1 / sqrt(head_size_qk))
  bool causal = false;       // bottom-right
  int32_t window_left = -1;  // keys j >= position - window_left; -1 disables
  float softcap = 0.f;       // softcap * tanh(s / softcap) of the scaled score; 0 disables

  // ---- outputs ----
  void* out = nullptr;  // [num_tokens_q, num_q_heads, head_size_v] (batched: [num_seqs, max_seqlen_q, ..])
  int64_t o_stride_token = 0, o_stride_head = 0, o_stride_batch = 0;
  float* lse = nullptr;  // optional [num_q_heads, lse_stride_head >= num_tokens_q]
  int64_t lse_stride_head = 0;

  bool packed() const { return cu_seqlens_q != nullptr || cu_seqlens_k != nullptr; }
};

}  // namespace hipattn
