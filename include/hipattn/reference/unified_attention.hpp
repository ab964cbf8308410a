// hipattn/reference/unified_attention.hpp: float64 host reference of unified paged attention (the parity oracle).
//
// Follows ALGORITHM.md sections 1-3 literally: one query, one head at a time, the logit order
// (dot -> softcap -> mask -> ALiBi -> QQ-bias), a two-pass softmax with the sink in the denominator.
// Every input is read through hipattn::load_as_float by dtype, everything after the load is double.
// Masked keys (and keys >= kv_len, and padded block-table entries) are never read.
#pragma once
#include <atomic>
#include <thread>
#include <utility>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "hipattn/problem/unified_params.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/platform/error.hpp"

namespace hipattn::reference {

// Outputs of a reference run, in double. out: [num_tokens][num_q_heads][head_size] (contiguous);
// lse: [num_q_heads][num_tokens] (contiguous), natural log, -inf for a query that saw nothing.
struct AttentionResult {
  std::vector<double> out;  // [num_tokens][num_q_heads][head_size]
  std::vector<double> lse;  // [num_q_heads][num_tokens]
};

// The keys a query may see, before any range restriction: the half-open interval [begin, end).
// Empty when begin >= end.
struct KeyRange {
  int64_t begin = 0;
  int64_t end = 0;
};

// Visible keys of a query at absolute position `pos` in a sequence of `kv_len` keys (ALGORITHM.md 2, step 3):
// [0, kv_len) intersected with j <= pos (causal) and j >= pos - window_left (window_left >= 0).
// The rule itself, shared by the references of every family.
inline KeyRange visible_keys(bool causal, int32_t window_left, int64_t pos, int64_t kv_len) {
  KeyRange r{0, kv_len};
  if (causal) r.end = std::min(r.end, pos + 1);
  if (window_left >= 0) r.begin = std::max<int64_t>(r.begin, pos - window_left);
  if (r.end < r.begin) r.end = r.begin;
  return r;
}
inline KeyRange visible_keys(const UnifiedAttentionParams& p, int64_t pos, int64_t kv_len) {
  return visible_keys(p.causal, p.window_left, pos, kv_len);
}

namespace detail {

inline void require(bool ok, const char* field, const char* message) {
  if (!ok) throw Error(ErrorCode::invalid_argument, field, message);
}

// The checks the reference needs to not read out of bounds; full validation is the dispatcher's job.
inline void check_params(const UnifiedAttentionParams& p) {
  require(p.q != nullptr, "q", "null");
  require(p.k_cache != nullptr && p.v_cache != nullptr, "k_cache/v_cache", "null");
  require(p.cu_seqlens_q != nullptr, "cu_seqlens_q", "null");
  require(p.seq_lens_k != nullptr, "seq_lens_k", "null");
  require(p.block_table != nullptr, "block_table", "null");
  require(p.num_seqs >= 0 && p.num_tokens >= 0, "num_seqs/num_tokens", "negative");
  require(p.num_q_heads > 0 && p.num_kv_heads > 0, "num_q_heads/num_kv_heads", "must be > 0");
  require(p.num_q_heads % p.num_kv_heads == 0, "num_q_heads", "not a multiple of num_kv_heads");
  require(p.head_size > 0, "head_size", "must be > 0");
  require(p.block_size > 0, "block_size", "must be > 0");
  require(p.q_dtype == DType::f16 || p.q_dtype == DType::bf16 || is_fp8(p.q_dtype), "q_dtype",
          "must be fp16, bf16 or fp8");
  require(p.cu_seqlens_q[0] == 0 && p.cu_seqlens_q[p.num_seqs] == p.num_tokens, "cu_seqlens_q",
          "must start at 0 and end at num_tokens");
  if (is_fp8(p.kv_dtype) && p.kv_scale_mode != KvScaleMode::none)
    require(p.k_scale != nullptr && p.v_scale != nullptr, "k_scale/v_scale", "null with a scale mode");
}

// The scale of one (slot, kv head) of K or V: 1 unless the cache is fp8 with a scale mode.
inline double kv_scale(const UnifiedAttentionParams& p, const float* scale, int64_t blk, int64_t slot, int64_t kvh) {
  if (!is_fp8(p.kv_dtype)) return 1.0;
  switch (p.kv_scale_mode) {
    case KvScaleMode::none: return 1.0;
    case KvScaleMode::per_tensor: return double(scale[0]);
    case KvScaleMode::per_token_head:
      return double(scale[blk * p.scale_stride_block + slot * p.scale_stride_slot + kvh * p.scale_stride_head]);
  }
  return 1.0;
}

// Softmax of `scores` (the logits of the visible keys, in key order) with an optional sink, weighting the
// value rows given by `value(k, d)` (k indexes `scores`). Writes `out[0, dv)` and returns the LSE.
// No key and no sink: out = 0, LSE = -inf. All logits -inf and no sink: the same (nothing has weight).
template <class ValueFn>
double softmax_weighted_sum(const std::vector<double>& scores, bool has_sink, double sink, int dv, ValueFn&& value,
                            double* out) {
  constexpr double neg_inf = -std::numeric_limits<double>::infinity();
  double m = has_sink ? sink : neg_inf;
  for (double s : scores) {
    if (std::isnan(s)) {  // a NaN logit of a visible key poisons the row, as it would in any kernel
      std::fill(out, out + dv, s);
      return s;
    }
    m = std::max(m, s);
  }
  std::fill(out, out + dv, 0.0);
  if (m == neg_inf) return neg_inf;
  double denom = has_sink ? std::exp(sink - m) : 0.0;
  std::vector<double> acc(size_t(dv), 0.0);
  for (size_t k = 0; k < scores.size(); ++k) {
    const double w = std::exp(scores[k] - m);
    if (w == 0.0) continue;  // a -inf logit (e.g. from a -inf QQ-bias) carries no weight: its V is not read
    denom += w;
    for (int d = 0; d < dv; ++d) acc[size_t(d)] += w * value(k, d);
  }
  for (int d = 0; d < dv; ++d) out[d] = acc[size_t(d)] / denom;
  return m + std::log(denom);
}

// One (query token, q head) over keys j in [kv_begin, kv_end) of its sequence, with or without the sink.
inline void attend_one(const UnifiedAttentionParams& p, int32_t b, int32_t i, int32_t h, int64_t kv_begin,
                       int64_t kv_end, bool with_sink, double* out, double& lse) {
  const int64_t q0 = p.cu_seqlens_q[b];
  const int64_t q_len = int64_t(p.cu_seqlens_q[b + 1]) - q0;
  const int64_t kv_len = p.seq_lens_k[b];
  const int64_t context_len = kv_len - q_len;
  const int64_t t = q0 + i;
  const int64_t pos = context_len + i;
  const int32_t group = p.num_q_heads / p.num_kv_heads;
  const int64_t kvh = h / group;
  const int D = p.head_size;

  // fp8 queries: code * q_scale (problem/fp8_io.hpp; a device-pointer scale is a host pointer here)
  const double q_scale = !is_fp8(p.q_dtype)       ? 1.0
                         : p.q_scale.device != nullptr ? double(*p.q_scale.device)
                                                       : double(p.q_scale.host_or_one());
  std::vector<double> q(static_cast<size_t>(D));
  for (int d = 0; d < D; ++d)
    q[size_t(d)] = double(load_as_float(p.q, p.q_dtype, t * p.q_stride_token + h * p.q_stride_head + d)) * q_scale;

  KeyRange r = visible_keys(p, pos, kv_len);
  r.begin = std::max(r.begin, kv_begin);
  r.end = std::min(r.end, kv_end);

  std::vector<double> scores;
  std::vector<int64_t> v_base;  // element offset of each visible key's V row
  std::vector<double> v_mult;   // its V dequant scale
  for (int64_t j = r.begin; j < r.end; ++j) {
    const int64_t blk = p.block_table[int64_t(b) * p.block_table_stride + j / p.block_size];
    const int64_t slot = j % p.block_size;
    // 1. s = scale * q.k, k dequantized
    const int64_t k_base = blk * p.k_stride_block + slot * p.k_stride_slot + kvh * p.k_stride_head;
    const double ks = kv_scale(p, p.k_scale, blk, slot, kvh);
    double dot = 0.0;
    for (int d = 0; d < D; ++d) dot += q[size_t(d)] * (double(load_as_float(p.k_cache, p.kv_dtype, k_base + d)) * ks);
    double s = double(p.scale) * dot;
    // 2. softcap
    if (p.softcap > 0.f) s = double(p.softcap) * std::tanh(s / double(p.softcap));
    // 3. mask: already applied (j ranges over the visible keys only)
    // 4. ALiBi
    if (p.alibi_slopes != nullptr) s += double(p.alibi_slopes[h]) * double(j - pos);
    // 5. QQ-bias among the sequence's own new tokens
    if (p.qq_bias != nullptr) {
      const int64_t rr = j - context_len;
      if (rr >= 0 && rr < p.qq_bias_stride) s += double(p.qq_bias[int64_t(i) * p.qq_bias_stride + rr]);
    }
    scores.push_back(s);
    v_base.push_back(blk * p.v_stride_block + slot * p.v_stride_slot + kvh * p.v_stride_head);
    v_mult.push_back(kv_scale(p, p.v_scale, blk, slot, kvh));
  }

  const bool has_sink = with_sink && p.sinks != nullptr;
  const double sink = has_sink ? double(p.sinks[h]) : 0.0;
  lse = softmax_weighted_sum(
      scores, has_sink, sink, D,
      [&](size_t k, int d) { return double(load_as_float(p.v_cache, p.kv_dtype, v_base[k] + d)) * v_mult[k]; }, out);
}

inline AttentionResult run(const UnifiedAttentionParams& p, int64_t kv_begin, int64_t kv_end, bool with_sink) {
  check_params(p);
  const int64_t T = p.num_tokens, H = p.num_q_heads, D = p.head_size;
  AttentionResult res;
  res.out.assign(size_t(T * H * D), 0.0);
  res.lse.assign(size_t(H * T), -std::numeric_limits<double>::infinity());
  // Every (query token, q head) is independent: spread the tokens over the host's cores.
  std::vector<std::pair<int32_t, int32_t>> rows;  // (sequence, query index)
  for (int32_t b = 0; b < p.num_seqs; ++b)
    for (int32_t i = 0; i < p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b]; ++i) rows.emplace_back(b, i);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t r = next++; r < rows.size(); r = next++) {
      const auto [b, i] = rows[r];
      const int64_t t = int64_t(p.cu_seqlens_q[b]) + i;
      for (int32_t h = 0; h < p.num_q_heads; ++h)
        attend_one(p, b, i, h, kv_begin, kv_end, with_sink, &res.out[size_t((t * H + h) * D)],
                   res.lse[size_t(h * T + t)]);
    }
  };
  const size_t n_threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), (rows.size() + 7) / 8);
  std::vector<std::thread> pool;
  for (size_t k = 1; k < n_threads; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  return res;
}

}  // namespace detail

// The full unified attention of `p` (host pointers), sinks included; reads p's inputs, does not write p.out.
inline AttentionResult unified_attention(const UnifiedAttentionParams& p) {
  return detail::run(p, 0, std::numeric_limits<int64_t>::max(), true);
}

// A partial state: the same restricted to keys j in [kv_begin, kv_end) of every sequence, WITHOUT sinks.
// out is normalized within the range, lse is the range's LSE (-inf where the range holds no visible key).
// The full result equals the merge of range results whose ranges partition [0, max kv_len), plus the sink:
// merge_results(parts, p.num_tokens, p.num_q_heads, p.head_size, p.sinks) (reference/merge.hpp); the sink
// enters once, in the merge.
inline AttentionResult unified_attention_range(const UnifiedAttentionParams& p, int kv_begin, int kv_end) {
  return detail::run(p, kv_begin, kv_end, false);
}

// The scale of an fp8 output group whose largest magnitude is `amax` (problem/fp8_io.hpp), in double:
// max(amax, 1e-10) / fp8_max, UE8M0: the smallest power of two >= that.
inline double output_group_scale(double amax, DType out_dtype, const OutputFormat& f) {
  const double s = std::max(amax, 1e-10) / double(group_fp8_max(out_dtype, f));
  return f.group_ue8m0 ? std::exp2(std::ceil(std::log2(s))) : s;
}

// The per-group scales of a result with a per-group fp8 output: [num_tokens][num_q_heads][head_size /
// group_size], NaN elements ignored by the maximum.
inline std::vector<double> output_group_scales(const AttentionResult& r, int64_t T, int64_t H, int64_t D, DType out_dtype,
                                               const OutputFormat& f) {
  const int64_t G = f.group_size, groups = D / G;
  std::vector<double> s(size_t(T * H * groups));
  for (int64_t i = 0; i < T * H; ++i)
    for (int64_t g = 0; g < groups; ++g) {
      double amax = 0.0;
      for (int64_t d = g * G; d < (g + 1) * G; ++d) {
        const double x = std::fabs(r.out[size_t(i * D + d)]);
        if (!std::isnan(x)) amax = std::max(amax, x);
      }
      s[size_t(i * groups + g)] = output_group_scale(amax, out_dtype, f);
    }
  return s;
}

// Writes the O of a result ([T][H][D]) into `out` in output dtype `od` and format `f`: element (t, h, d)
// at out_offset(t, h) + d (elements of od); fp8: O divided by the per-tensor scale or by its group's
// scale (output_group_scales), rounded by numeric/fp8.hpp's rules, and the group scales written as
// float to f.group_scale[t * group_scale_stride_token + (h * D / G + g) * group_scale_stride_group].
// The output half of every family's write_outputs (unified attention, paged decode, MLA decode).
template <class OutOffset>
inline void write_output_tensor(const AttentionResult& r, int64_t T, int64_t H, int64_t D, DType od, const OutputFormat& f,
                                void* out, OutOffset out_offset) {
  detail::require(r.out.size() == size_t(T * H * D), "result", "shape does not match the params");
  detail::require(out != nullptr, "out", "null");
  const bool group = is_fp8(od) && f.group_size > 0;
  const double tensor_scale = !is_fp8(od) || group ? 1.0
                              : f.scale.device != nullptr ? double(*f.scale.device)
                                                          : double(f.scale.host_or_one());
  std::vector<double> gs;
  if (group) {
    detail::require(f.group_scale != nullptr, "out_format.group_scale", "null");
    gs = output_group_scales(r, T, H, D, od, f);
    const int64_t groups = D / f.group_size;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t g = 0; g < groups; ++g)
          f.group_scale[t * f.group_scale_stride_token + (h * groups + g) * f.group_scale_stride_group] =
              float(gs[size_t((t * H + h) * groups + g)]);
  }
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t base = out_offset(t, h);
      for (int64_t d = 0; d < D; ++d) {
        const double scale = group ? gs[size_t((t * H + h) * (D / f.group_size) + d / f.group_size)] : tensor_scale;
        store_from_float(out, od, base + d, float(r.out[size_t((t * H + h) * D + d)] / scale));
      }
    }
}

// Writes a result into p.out in p's output format (write_output_tensor: output_dtype(q_dtype,
// out_format), strides o_stride_token / o_stride_head, the group scales into out_format.group_scale),
// and, when p.lse != null, the LSE into p.lse[h * lse_stride_head + t] as float.
inline void write_outputs(const AttentionResult& r, const UnifiedAttentionParams& p) {
  const int64_t T = p.num_tokens, H = p.num_q_heads, D = p.head_size;
  detail::require(r.out.size() == size_t(T * H * D) && r.lse.size() == size_t(H * T), "result",
                  "shape does not match the params");
  write_output_tensor(r, T, H, D, output_dtype(p.q_dtype, p.out_format), p.out_format, p.out,
                      [&](int64_t t, int64_t h) { return t * p.o_stride_token + h * p.o_stride_head; });
  if (p.lse != nullptr)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) p.lse[h * p.lse_stride_head + t] = float(r.lse[size_t(h * T + t)]);
}

}  // namespace hipattn::reference
