// hipattn/reference/dense_prefill.hpp: float64 host reference of dense prefill (contiguous Q, K, V; the
// problem of problem/dense_prefill_params.hpp), the parity oracle of the dense prefill kernels.
//
// The same math as the unified reference (reference/unified_attention.hpp), without sinks, ALiBi,
// QQ-bias or fp8: one query, one head at a time, the logit order dot -> scale -> softcap -> mask, a
// two-pass softmax in double over the visible keys. Every input is read through hipattn::load_as_float
// by dtype, everything after the load is double. head_size_v may differ from head_size_qk (192 / 128).
//
// HOST pointers: the reference takes a DensePrefillParams whose q, k, v, cu_seqlens_q and cu_seqlens_k
// are host pointers (the struct's own comment says device; the reference reads them on the host). It
// does not read p.out / p.lse (write_outputs below writes them from a result). Keys outside [0, lk) of a
// sequence and rows outside its tokens are never read; keys masked out for every query of a sequence
// are never read either, and a masked key's value never reaches a result.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "hipattn/numeric/numeric.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/problem/dense_prefill_params.hpp"
#include "hipattn/reference/unified_attention.hpp"

namespace hipattn::reference {

// Visible keys of a query at position `pos` of a sequence of `kv_len` keys: [0, kv_len) intersected with
// j <= pos (causal, bottom-right) and j >= pos - window_left (window_left >= 0). Empty: begin == end.
inline KeyRange visible_keys(const DensePrefillParams& p, int64_t pos, int64_t kv_len) {
  return visible_keys(p.causal, p.window_left, pos, kv_len);
}

namespace detail {

// One sequence of a dense prefill problem: where its queries and keys live.
struct DenseSeq {
  int64_t q_len = 0, k_len = 0;
  int64_t t0 = 0;       // token index (result row / LSE column) of query 0
  int64_t q_base = 0;   // element offset of query 0 in q, before the head / dim terms
  int64_t k_base = 0;   // element offset of key 0 in k
  int64_t v_base = 0;   // element offset of key 0 in v
};

inline DenseSeq dense_seq(const DensePrefillParams& p, int32_t s) {
  DenseSeq r;
  if (p.packed()) {
    const int64_t q0 = p.cu_seqlens_q[s], k0 = p.cu_seqlens_k[s];
    r.q_len = int64_t(p.cu_seqlens_q[s + 1]) - q0;
    r.k_len = int64_t(p.cu_seqlens_k[s + 1]) - k0;
    r.t0 = q0;
    r.q_base = q0 * p.q_stride_token;
    r.k_base = k0 * p.k_stride_token;
    r.v_base = k0 * p.v_stride_token;
  } else {
    r.q_len = p.max_seqlen_q;
    r.k_len = p.max_seqlen_k;
    r.t0 = int64_t(s) * p.max_seqlen_q;
    r.q_base = int64_t(s) * p.q_stride_batch;
    r.k_base = int64_t(s) * p.k_stride_batch;
    r.v_base = int64_t(s) * p.v_stride_batch;
  }
  return r;
}

// cu_seqlens[0..num_seqs] starts >= 0, never decreases, ends <= num_tokens, each length <= max_len.
inline void check_cu_seqlens(const int32_t* cu, int32_t num_seqs, int32_t num_tokens, int32_t max_len,
                             const char* field) {
  require(cu[0] >= 0, field, "cu_seqlens[0] is negative");
  for (int32_t s = 0; s < num_seqs; ++s) {
    require(cu[s + 1] >= cu[s], field, "not non-decreasing");
    require(cu[s + 1] - cu[s] <= max_len, field, "a length exceeds its max_seqlen");
  }
  require(cu[num_seqs] <= num_tokens, field, "exceeds its num_tokens");
}

// The checks the reference needs to not read out of bounds; full validation is problem/dense_prefill_rules.hpp.
inline void check_params(const DensePrefillParams& p) {
  require(p.dtype == DType::f16 || p.dtype == DType::bf16, "dtype", "must be fp16 or bf16");
  require(p.num_seqs >= 0, "num_seqs", "negative");
  require(p.num_tokens_q >= 0, "num_tokens_q", "negative");
  require(p.num_tokens_k >= 0, "num_tokens_k", "negative");
  require(p.max_seqlen_q >= 0, "max_seqlen_q", "negative");
  require(p.max_seqlen_k >= 0, "max_seqlen_k", "negative");
  require(p.num_q_heads > 0, "num_q_heads", "must be > 0");
  require(p.num_kv_heads > 0, "num_kv_heads", "must be > 0");
  require(p.num_q_heads % p.num_kv_heads == 0, "num_q_heads", "not a multiple of num_kv_heads");
  require(p.head_size_qk > 0, "head_size_qk", "must be > 0");
  require(p.head_size_v > 0, "head_size_v", "must be > 0");
  if (p.packed()) {
    require(p.cu_seqlens_q != nullptr, "cu_seqlens_q", "null while cu_seqlens_k is set (packed needs both)");
    require(p.cu_seqlens_k != nullptr, "cu_seqlens_k", "null while cu_seqlens_q is set (packed needs both)");
    check_cu_seqlens(p.cu_seqlens_q, p.num_seqs, p.num_tokens_q, p.max_seqlen_q, "cu_seqlens_q");
    check_cu_seqlens(p.cu_seqlens_k, p.num_seqs, p.num_tokens_k, p.max_seqlen_k, "cu_seqlens_k");
  } else {
    require(int64_t(p.num_tokens_q) == int64_t(p.num_seqs) * p.max_seqlen_q, "num_tokens_q",
            "batched: must be num_seqs * max_seqlen_q");
    require(int64_t(p.num_tokens_k) == int64_t(p.num_seqs) * p.max_seqlen_k, "num_tokens_k",
            "batched: must be num_seqs * max_seqlen_k");
  }
  require(p.num_tokens_q == 0 || p.q != nullptr, "q", "null with query tokens");
  require(p.num_tokens_k == 0 || p.k != nullptr, "k", "null with key tokens");
  require(p.num_tokens_k == 0 || p.v != nullptr, "v", "null with key tokens");
}

// Runs fn(r) for r in [0, n), over the host's cores when the work (n * cost_per_item) is worth it.
template <class Fn>
void dense_parallel_for(int64_t n, double cost_per_item, Fn&& fn) {
  size_t n_threads = std::max(1u, std::thread::hardware_concurrency());
  n_threads = std::min<size_t>(n_threads, size_t(std::max<int64_t>(n, 1)));
  if (double(n) * cost_per_item < 2e5) n_threads = 1;
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t r = next++; r < n; r = next++) fn(r);
  };
  std::vector<std::thread> pool;
  for (size_t k = 1; k < n_threads; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
}

// One (query, q head) over its visible keys: `keys` / `values` point at the first visible key's decoded
// K row [DQK] / V row [DV], n_keys consecutive rows. Writes out[0, DV) (zeros beforehand) and returns the
// LSE. The softmax is detail::softmax_weighted_sum without a sink (NaN logit -> NaN row, no key or all
// logits -inf -> 0 and -inf), in plain loops; each dot product sums over d in order, four keys at a time.
inline double dense_attend_row(const DensePrefillParams& p, const double* q, const double* keys,
                               const double* values, int64_t n_keys, double* out) {
  constexpr double neg_inf = -std::numeric_limits<double>::infinity();
  const int DQK = p.head_size_qk, DV = p.head_size_v;
  std::vector<double> scores(static_cast<size_t>(n_keys));
  // 1. s = scale * q.k
  int64_t j = 0;
  for (; j + 4 <= n_keys; j += 4) {
    const double *k0 = keys + j * DQK, *k1 = k0 + DQK, *k2 = k1 + DQK, *k3 = k2 + DQK;
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    for (int d = 0; d < DQK; ++d) {
      a0 += q[d] * k0[d];
      a1 += q[d] * k1[d];
      a2 += q[d] * k2[d];
      a3 += q[d] * k3[d];
    }
    scores[size_t(j)] = a0;
    scores[size_t(j + 1)] = a1;
    scores[size_t(j + 2)] = a2;
    scores[size_t(j + 3)] = a3;
  }
  for (; j < n_keys; ++j) {
    const double* kr = keys + j * DQK;
    double a = 0.0;
    for (int d = 0; d < DQK; ++d) a += q[d] * kr[d];
    scores[size_t(j)] = a;
  }
  double m = neg_inf;
  for (double& x : scores) {
    x *= double(p.scale);
    // 2. softcap
    if (p.softcap > 0.f) x = double(p.softcap) * std::tanh(x / double(p.softcap));
    // 3. mask: already applied (the rows are the visible keys only)
    if (std::isnan(x)) {  // a NaN logit of a visible key poisons the row
      std::fill(out, out + DV, x);
      return x;
    }
    m = std::max(m, x);
  }
  if (m == neg_inf) return neg_inf;  // no key (or every logit -inf): out stays 0
  double denom = 0.0;
  for (int64_t k = 0; k < n_keys; ++k) {
    const double w = std::exp(scores[size_t(k)] - m);
    if (w == 0.0) continue;  // no weight: its V row is not used
    denom += w;
    const double* vr = values + k * DV;
    for (int d = 0; d < DV; ++d) out[d] += w * vr[d];
  }
  for (int d = 0; d < DV; ++d) out[d] /= denom;
  return m + std::log(denom);
}

}  // namespace detail

// Dense prefill of `p` (HOST pointers) in double. out: [num_tokens_q][num_q_heads][head_size_v],
// contiguous (the o_ strides are not used); lse: [num_q_heads][num_tokens_q], natural log. A query that
// sees no key (and a row of q no sequence owns) has out 0 and lse -inf. The token index of a query is its
// row in q when packed (cu_seqlens_q[s] + i), s * max_seqlen_q + i when batched. Does not write p.out.
inline AttentionResult dense_prefill(const DensePrefillParams& p) {
  detail::check_params(p);
  const int64_t T = p.num_tokens_q, H = p.num_q_heads, KVH = p.num_kv_heads;
  const int DQK = p.head_size_qk, DV = p.head_size_v;
  const int64_t group = H / KVH;
  AttentionResult res;
  res.out.assign(size_t(T * H * DV), 0.0);
  res.lse.assign(size_t(H * T), -std::numeric_limits<double>::infinity());

  std::vector<double> kd, vd;  // the sequence's keys [lo, hi), decoded: [kv head][key - lo][dim]
  for (int32_t s = 0; s < p.num_seqs; ++s) {
    const detail::DenseSeq sq = detail::dense_seq(p, s);
    if (sq.q_len == 0) continue;
    const int64_t ctx = sq.k_len - sq.q_len;  // query i sits at position ctx + i
    // Both ends of the visible range grow with the position: the union over the queries is [lo, hi).
    const int64_t lo = visible_keys(p, ctx, sq.k_len).begin;
    const int64_t hi = std::max(lo, visible_keys(p, ctx + sq.q_len - 1, sq.k_len).end);
    const int64_t n = hi - lo;
    kd.assign(size_t(KVH * n * DQK), 0.0);
    vd.assign(size_t(KVH * n * DV), 0.0);
    for (int64_t kvh = 0; kvh < KVH; ++kvh)
      for (int64_t j = lo; j < hi; ++j) {
        const int64_t kb = sq.k_base + j * p.k_stride_token + kvh * p.k_stride_head;
        const int64_t vb = sq.v_base + j * p.v_stride_token + kvh * p.v_stride_head;
        double* kr = &kd[size_t((kvh * n + (j - lo)) * DQK)];
        double* vr = &vd[size_t((kvh * n + (j - lo)) * DV)];
        for (int d = 0; d < DQK; ++d) kr[d] = double(load_as_float(p.k, p.dtype, kb + d));
        for (int d = 0; d < DV; ++d) vr[d] = double(load_as_float(p.v, p.dtype, vb + d));
      }

    // Every (query, q head) of the sequence is independent.
    const double cost = double(std::max<int64_t>(n, 1)) * double(DQK + DV);
    detail::dense_parallel_for(sq.q_len * H, cost, [&](int64_t row) {
      const int64_t i = row / H, h = row % H, kvh = h / group;
      const int64_t t = sq.t0 + i;
      const KeyRange r = visible_keys(p, ctx + i, sq.k_len);
      std::vector<double> q(static_cast<size_t>(DQK));
      const int64_t qb = sq.q_base + i * p.q_stride_token + h * p.q_stride_head;
      for (int d = 0; d < DQK; ++d) q[size_t(d)] = double(load_as_float(p.q, p.dtype, qb + d));
      res.lse[size_t(h * T + t)] =
          detail::dense_attend_row(p, q.data(), kd.data() + (kvh * n + (r.begin - lo)) * DQK,
                                   vd.data() + (kvh * n + (r.begin - lo)) * DV, r.end - r.begin,
                                   res.out.data() + (t * H + h) * DV);
    });
  }
  return res;
}

// Writes a dense_prefill result into p.out (p.dtype, via store_from_float; packed: t * o_stride_token,
// batched: s * o_stride_batch + i * o_stride_token; plus h * o_stride_head + d) and, when p.lse != null,
// into p.lse[h * lse_stride_head + t] as float. Writes only the rows some sequence owns. Host pointers.
inline void write_outputs(const AttentionResult& r, const DensePrefillParams& p) {
  detail::check_params(p);
  const int64_t T = p.num_tokens_q, H = p.num_q_heads, DV = p.head_size_v;
  detail::require(r.out.size() == size_t(T * H * DV) && r.lse.size() == size_t(H * T), "result",
                  "shape does not match the params");
  detail::require(T == 0 || p.out != nullptr, "out", "null");
  for (int32_t s = 0; s < p.num_seqs; ++s) {
    const detail::DenseSeq sq = detail::dense_seq(p, s);
    for (int64_t i = 0; i < sq.q_len; ++i) {
      const int64_t t = sq.t0 + i;
      const int64_t ob = p.packed() ? t * p.o_stride_token : int64_t(s) * p.o_stride_batch + i * p.o_stride_token;
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t d = 0; d < DV; ++d)
          store_from_float(p.out, p.dtype, ob + h * p.o_stride_head + d, float(r.out[size_t((t * H + h) * DV + d)]));
        if (p.lse != nullptr) p.lse[h * p.lse_stride_head + t] = float(r.lse[size_t(h * T + t)]);
      }
    }
  }
}

}  // namespace hipattn::reference
