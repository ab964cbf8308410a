// hipattn/reference/mla_decode.hpp: float64 host reference of MLA (multi-head latent attention) decode.
//
// DeepSeek-style absorbed MLA: one latent KV head of 576 dims per token (512 "nope" latent + 64 rope),
// K = all 576 dims, V = the first 512. Queries [batch, q_len, num_heads, 576] with q_len >= 1 (MTP),
// causal bottom-right within the new tokens: query i sees keys j <= kv_len - q_len + i, j < kv_len.
// Logit s = scale * q.k (no softcap / bias / window / sink); softmax as ALGORITHM.md section 3.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "hipattn/numeric/numeric.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/problem/fp8_io.hpp"
#include "hipattn/reference/unified_attention.hpp"

namespace hipattn::reference {

// The problem description of one MLA decode call. Host pointers, strides in elements; the last dim is contiguous.
struct MlaDecodeParams {
  static constexpr int32_t kLatentDim = 512;  // "nope" latent dims = V dims = output dims
  static constexpr int32_t kRopeDim = 64;     // rope dims (K and Q only)
  static constexpr int32_t kQkDim = 576;      // kLatentDim + kRopeDim = Q and K dims

  // q [batch, q_len, num_heads, 576], fp16 or bf16
  const void* q = nullptr;
  DType q_dtype = DType::bf16;  // fp16, bf16, fp8_e4m3fn or fp8_e4m3fnuz (value = code * q_scale)
  double q_scale = 1.0;         // fp8 queries only
  int64_t q_stride_batch = 0, q_stride_token = 0, q_stride_head = 0;

  // kv_cache [num_pages, page_size, 576] (one latent kv head): K = dims [0, 576), V = dims [0, 512)
  const void* kv_cache = nullptr;
  DType kv_dtype = DType::bf16;  // bf16, fp16, fp8_e4m3fn or fp8_e4m3fnuz
  int64_t kv_stride_page = 0, kv_stride_slot = 0;
  int32_t num_pages = 0;
  int32_t page_size = 0;       // tokens per page, >= 1
  const float* kv_scale = nullptr;  // fp8 only: per-tensor [1] (value = code * kv_scale[0]); null means 1

  // block_table [batch, max_pages] (row stride block_table_stride); seq_lens_k [batch] (context + new tokens)
  const int32_t* block_table = nullptr;
  int64_t block_table_stride = 0;
  int32_t max_pages = 0;
  const int32_t* seq_lens_k = nullptr;
  int32_t batch = 0;
  int32_t q_len = 1;  // new tokens per sequence (MTP), >= 1
  int32_t num_heads = 0;
  float scale = 0.f;  // softmax scale, usually 1/sqrt(576) or the model's own

  // out [batch, q_len, num_heads, 512], dtype output_dtype(q_dtype, out_format) (strides in its elements)
  void* out = nullptr;
  int64_t o_stride_batch = 0, o_stride_token = 0, o_stride_head = 0;
  // The output's dtype and fp8 scales (problem/fp8_io.hpp; host pointers): 16-bit of q_dtype by default;
  // a per-group output's scales are indexed by token t = b * q_len + i, as the kernels write them.
  OutputFormat out_format;
  // lse [batch, q_len, num_heads] float, optional (natural log; -inf for a query that sees no key)
  float* lse = nullptr;
  int64_t lse_stride_batch = 0, lse_stride_token = 0, lse_stride_head = 0;
};

// MLA decode in double. Result layout as AttentionResult with tokens t = b * q_len + i:
// out [batch * q_len][num_heads][512], lse [num_heads][batch * q_len]. Does not write p.out.
inline AttentionResult mla_decode(const MlaDecodeParams& p) {
  constexpr int DK = MlaDecodeParams::kQkDim, DV = MlaDecodeParams::kLatentDim;
  detail::require(p.q != nullptr && p.kv_cache != nullptr, "q/kv_cache", "null");
  detail::require(p.block_table != nullptr && p.seq_lens_k != nullptr, "block_table/seq_lens_k", "null");
  detail::require(p.batch >= 0 && p.q_len >= 1 && p.num_heads > 0 && p.page_size > 0, "batch/q_len/num_heads/page_size",
                  "out of range");
  detail::require(p.q_dtype == DType::f16 || p.q_dtype == DType::bf16 || is_fp8(p.q_dtype), "q_dtype",
                  "must be fp16, bf16 or fp8");
  const double q_scale = is_fp8(p.q_dtype) ? p.q_scale : 1.0;
  const double kv_scale = (is_fp8(p.kv_dtype) && p.kv_scale != nullptr) ? double(p.kv_scale[0]) : 1.0;
  const int64_t T = int64_t(p.batch) * p.q_len, H = p.num_heads;

  AttentionResult res;
  res.out.assign(size_t(T * H * DV), 0.0);
  res.lse.assign(size_t(H * T), -std::numeric_limits<double>::infinity());
  std::vector<double> q(DK);
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t kv_len = p.seq_lens_k[b];
    for (int64_t i = 0; i < p.q_len; ++i) {
      const int64_t t = b * p.q_len + i;
      const int64_t last = kv_len - p.q_len + i;  // the last visible key
      const int64_t end = std::min(kv_len, last + 1);
      for (int64_t h = 0; h < H; ++h) {
        const int64_t q_base = b * p.q_stride_batch + i * p.q_stride_token + h * p.q_stride_head;
        for (int d = 0; d < DK; ++d) q[size_t(d)] = double(load_as_float(p.q, p.q_dtype, q_base + d)) * q_scale;
        std::vector<double> scores;
        std::vector<int64_t> kv_base;
        for (int64_t j = 0; j < end; ++j) {
          const int64_t page = p.block_table[b * p.block_table_stride + j / p.page_size];
          const int64_t base = page * p.kv_stride_page + (j % p.page_size) * p.kv_stride_slot;
          double dot = 0.0;
          for (int d = 0; d < DK; ++d) dot += q[size_t(d)] * (double(load_as_float(p.kv_cache, p.kv_dtype, base + d)) * kv_scale);
          scores.push_back(double(p.scale) * dot);
          kv_base.push_back(base);
        }
        res.lse[size_t(h * T + t)] = detail::softmax_weighted_sum(
            scores, false, 0.0, DV,
            [&](size_t k, int d) { return double(load_as_float(p.kv_cache, p.kv_dtype, kv_base[k] + d)) * kv_scale; },
            &res.out[size_t((t * H + h) * DV)]);
      }
    }
  }
  return res;
}

// Writes an mla_decode result into p.out in p's output format (write_output_tensor of
// reference/unified_attention.hpp: 16-bit, or fp8 per tensor or per group with the group scales into
// p.out_format.group_scale) and, when p.lse != null, p.lse (float), by p's strides.
inline void write_outputs(const AttentionResult& r, const MlaDecodeParams& p) {
  constexpr int64_t DV = MlaDecodeParams::kLatentDim;
  const int64_t T = int64_t(p.batch) * p.q_len, H = p.num_heads;
  detail::require(r.out.size() == size_t(T * H * DV) && r.lse.size() == size_t(H * T), "result",
                  "shape does not match the params");
  write_output_tensor(r, T, H, DV, output_dtype(p.q_dtype, p.out_format), p.out_format, p.out, [&](int64_t t, int64_t h) {
    return (t / p.q_len) * p.o_stride_batch + (t % p.q_len) * p.o_stride_token + h * p.o_stride_head;
  });
  if (p.lse != nullptr)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h)
        p.lse[(t / p.q_len) * p.lse_stride_batch + (t % p.q_len) * p.lse_stride_token + h * p.lse_stride_head] =
            float(r.lse[size_t(h * T + t)]);
}

}  // namespace hipattn::reference
