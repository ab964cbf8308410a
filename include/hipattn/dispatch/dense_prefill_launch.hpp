// hipattn/dispatch/dense_prefill_launch.hpp: what a dense prefill launch is made of (host code): the
// fields every dense kernel reads (DensePrefillCommon), the CDNA skeleton's arguments (host-visible:
// the emulated AMD tests build them in a host-only build) and, with nvcc, the tensor maps of sm_90's
// bulk copies. dispatch/dense_prefill.hpp launches exactly these.
#pragma once
#include <climits>
#include <cstdint>
#include <string>

#include "hipattn/dispatch/dense_prefill_plan.hpp"
#include "hipattn/dispatch/output_args.hpp"
#include "hipattn/kernels/dense_prefill/config.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/problem/dense_prefill_params.hpp"

#if defined(HIPATTN_HAS_DEVICE) && defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/arch/sm90/tma.hpp"
#endif

namespace hipattn {
namespace detail {

// What every dense prefill kernel reads besides its operand views, from the problem.
inline DensePrefillCommon make_dense_prefill_common(const DensePrefillParams& p, int32_t block_q) {
  DensePrefillCommon c;
  c.cu_seqlens_q = p.cu_seqlens_q;
  c.cu_seqlens_k = p.cu_seqlens_k;
  c.num_seqs = p.num_seqs;
  c.max_seqlen_q = p.max_seqlen_q;
  c.max_seqlen_k = p.max_seqlen_k;
  c.block_q = block_q;
  c.blocks_per_seq = (p.max_seqlen_q + block_q - 1) / block_q;
  // By band: blocks_per_seq x num_seqs slots. Packed, the global numbering (sequence s's q-blocks
  // from cu_seqlens_q[s] / block_q + s, paged/varlen.hpp) has num_tokens_q / block_q + num_seqs; bands
  // are kept while they give at most twice as many slots (empty ones cost the workgroups a skip).
  const int64_t band_slots = int64_t(c.blocks_per_seq) * p.num_seqs;
  const int64_t global_slots = p.num_tokens_q > 0 ? int64_t(p.num_tokens_q / block_q) + p.num_seqs : 0;
  c.by_band = !p.packed() || band_slots <= 2 * global_slots;
  c.q_blocks = p.num_tokens_q == 0 ? 0 : static_cast<int32_t>(c.by_band ? band_slots : global_slots);
  c.group = p.num_kv_heads > 0 ? p.num_q_heads / p.num_kv_heads : 1;
  c.num_q_heads = p.num_q_heads;
  c.scale = p.scale;
  c.causal = p.causal;
  c.window_left = p.window_left;
  c.out = static_cast<uint16_t*>(p.out);
  c.o_stride_token = p.o_stride_token;
  c.o_stride_head = p.o_stride_head;
  c.o_stride_batch = p.o_stride_batch;
  c.lse = p.lse;
  c.lse_stride_head = p.lse_stride_head;
  return c;
}

// Batched K and V on the skeleton (DenseKvLayout): key j of sequence s is row s x pitch + j of the
// token strides, so each batch stride must be a whole multiple of its token stride (the rows of a
// [seqs, len, heads, d] or [seqs, heads, len, d] tensor, padded or not), the same multiple for K and
// V, with every row index within 32 bits. One sequence, or no key at all: the pitch is never used (0).
inline int32_t dense_kv_pitch(const DensePrefillParams& p) {
  if (p.packed() || p.num_seqs <= 1 || p.num_tokens_k == 0) return 0;
  const auto pitch = [&](const char* field, int64_t batch, int64_t token) {
    if (token <= 0 || batch % token != 0)
      throw Error(ErrorCode::unsupported, field,
                  std::string(field) + " = " + std::to_string(batch) + ": the CDNA dense prefill kernel finds batched keys and values " +
                      "as rows of their token stride (" + std::to_string(token) + "); the batch stride must be a whole multiple of it");
    return batch / token;
  };
  const int64_t k = pitch("k_stride_batch", p.k_stride_batch, p.k_stride_token);
  const int64_t v = pitch("v_stride_batch", p.v_stride_batch, p.v_stride_token);
  if (k != v)
    throw Error(ErrorCode::unsupported, "v_stride_batch",
                "v_stride_batch = " + std::to_string(p.v_stride_batch) + " is " + std::to_string(v) +
                    " value rows, k_stride_batch " + std::to_string(k) + " key rows: the CDNA dense prefill kernel needs the same " +
                    "number of rows between sequences in K and V");
  if (int64_t(p.num_seqs - 1) * k + p.max_seqlen_k > INT32_MAX)
    throw Error(ErrorCode::unsupported, "k_stride_batch",
                "k_stride_batch = " + std::to_string(p.k_stride_batch) + " puts the last sequence's keys past row 2^31 - 1 of the " +
                    "token stride (num_seqs = " + std::to_string(p.num_seqs) + ", " + std::to_string(k) + " rows a sequence)");
  return static_cast<int32_t>(k);
}

// The skeleton kernel's arguments for `p`.
template <class Cfg>
dense_args_t<Cfg> make_dense_skeleton_args(const DensePrefillParams& p) {
  dense_args_t<Cfg> a{};
  a.q = static_cast<const uint16_t*>(p.q);
  a.q_stride_token = static_cast<int32_t>(p.q_stride_token);
  a.q_stride_head = static_cast<int32_t>(p.q_stride_head);
  // No key anywhere (k and v may then be null): no tile is computed, but the register-staged loader's
  // prologue reads one chunk at the cache base without using it (branch-free loads); give it q's.
  a.kv.k = p.num_tokens_k > 0 ? p.k : p.q;
  a.kv.v = p.num_tokens_k > 0 ? p.v : p.q;
  a.kv.k_stride_block = static_cast<int32_t>(p.k_stride_token);  // a block is a token's row
  a.kv.k_stride_head = static_cast<int32_t>(p.k_stride_head);
  a.kv.v_stride_block = static_cast<int32_t>(p.v_stride_token);
  a.kv.v_stride_head = static_cast<int32_t>(p.v_stride_head);
  a.kv.block_table = p.cu_seqlens_k;  // DenseKvLayout: block = cu_seqlens_k[seq] + key (packed)
  a.kv.block_table_stride = p.packed() ? 0 : dense_kv_pitch(p);  // batched: seq x pitch + key
  a.q_stride_batch = p.packed() ? 0 : p.q_stride_batch;  // q / out / lse: dense_sequence_args
  a.kv.page_size = 1;
  a.kv.page_div = FastDivmod(1u);
  a.num_seqs = p.num_seqs;
  a.num_q_heads = p.num_q_heads;
  a.group = p.num_q_heads / p.num_kv_heads;
  a.rows_per_token = 1;  // one q head a workgroup
  a.block_q = Cfg::kBM;
  a.head_chunks = a.group;
  a.rows_div = FastDivmod(1u);
  a.scale = p.scale;
  a.causal = p.causal;
  a.window_left = p.window_left;
  a.variant.args.softcap = p.softcap;
  a.out = make_output_args(p.out, p.o_stride_token, p.o_stride_head, p.dtype, OutputFormat{}, p.head_size_v);
  a.lse = p.lse;
  a.lse_stride_head = static_cast<int32_t>(p.lse_stride_head);
  a.dense = make_dense_prefill_common(p, Cfg::kBM);
  return a;
}

#if defined(HIPATTN_HAS_DEVICE) && defined(HIPATTN_BACKEND_CUDA)
// The tensor map of one of q / k / v: packed [tokens, heads, d] as {d, heads, tokens}; batched
// [seqs, len, heads, d] as {d, heads, len, seqs}. Box {64 elements (128 bytes), 1, rows[, 1]} with the
// 128-byte swizzle: each box is one column block of a KMajorTile (arch/sm90/tma.hpp).
inline CUtensorMap dense_tensor_map(const DensePrefillParams& p, const void* base, int32_t d, int32_t heads,
                                    int64_t stride_head, int64_t stride_token, int64_t stride_batch, bool q_side,
                                    uint32_t rows) {
  const uint64_t eb = 2;
  const sm90::TmaElem elem = p.dtype == DType::bf16 ? sm90::TmaElem::bf16 : sm90::TmaElem::f16;
  // A dimension of extent 1 may carry any stride; give it one the driver accepts.
  const auto stride_or = [](int64_t s, uint64_t fallback) { return s > 0 ? uint64_t(s) * 2 : fallback; };
  const uint64_t sh = stride_or(stride_head, uint64_t(d) * eb);
  const uint64_t st = stride_or(stride_token, sh * uint64_t(heads));
  if (p.packed()) {
    const uint64_t tokens = uint64_t(q_side ? p.num_tokens_q : p.num_tokens_k);
    return sm90::make_tensor_map_3d(base, elem, {uint64_t(d), uint64_t(heads), tokens > 0 ? tokens : 1}, {sh, st},
                                    {64u, 1u, rows}, sm90::SmemSwizzle::b128);
  }
  const uint64_t len = uint64_t(q_side ? p.max_seqlen_q : p.max_seqlen_k);
  const uint64_t sb = stride_or(stride_batch, st * (len > 0 ? len : 1));
  return sm90::make_tensor_map_4d(base, elem, {uint64_t(d), uint64_t(heads), len > 0 ? len : 1, uint64_t(p.num_seqs)},
                                  {sh, st, sb}, {64u, 1u, rows, 1u}, sm90::SmemSwizzle::b128);
}

#endif  // HIPATTN_HAS_DEVICE && HIPATTN_BACKEND_CUDA

}  // namespace detail
}  // namespace hipattn
