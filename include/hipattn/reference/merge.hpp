// hipattn/reference/merge.hpp: float64 merge of partial attention states (O, LSE), the split-KV combine.
//
// ALGORITHM.md section 4: with m = max(sink, lse_p over non-empty parts), w_p = exp(lse_p - m),
// L = exp(sink - m) + sum_p w_p:  o = sum_p w_p o_p / L,  lse = m + log(L).
// A part with lse = -inf is empty and ignored (its o is never read); the sink enters exactly once.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "hipattn/platform/error.hpp"
#include "hipattn/reference/unified_attention.hpp"

namespace hipattn::reference {

// One partial softmax state: o normalized within its part ([head_size]), lse its natural-log mass.
struct PartialState {
  std::vector<double> o;  // [head_size]
  double lse;             // -inf: the part saw no key
};

namespace detail {

// Merges n states given as (o pointer, lse) pairs of length dv into out / lse_out.
template <class GetO, class GetLse>
void merge_rows(size_t n, size_t dv, GetO&& get_o, GetLse&& get_lse, std::optional<double> sink, double* out,
                double& lse_out) {
  constexpr double neg_inf = -std::numeric_limits<double>::infinity();
  double m = sink.value_or(neg_inf);
  for (size_t k = 0; k < n; ++k) {
    const double l = get_lse(k);
    if (std::isnan(l)) {  // a NaN state poisons the merge
      std::fill(out, out + dv, l);
      lse_out = l;
      return;
    }
    m = std::max(m, l);
  }
  std::fill(out, out + dv, 0.0);
  if (m == neg_inf) {  // every part empty and no (finite) sink
    lse_out = neg_inf;
    return;
  }
  double denom = sink ? std::exp(*sink - m) : 0.0;
  for (size_t k = 0; k < n; ++k) {
    const double l = get_lse(k);
    if (l == neg_inf) continue;  // empty part: ignored, its o is not read
    const double w = std::exp(l - m);
    denom += w;
    const double* o = get_o(k);
    for (size_t d = 0; d < dv; ++d) out[d] += w * o[d];
  }
  for (size_t d = 0; d < dv; ++d) out[d] /= denom;
  lse_out = m + std::log(denom);
}

}  // namespace detail

// LSE-weighted merge of partial states into (o, lse). o is resized to the parts' length (all equal);
// with no parts o keeps its size. All parts empty: o = 0 and lse = -inf, or lse = *sink with a sink.
inline void merge_states(std::span<const PartialState> parts, std::vector<double>& o, double& lse,
                         std::optional<double> sink = {}) {
  if (!parts.empty()) o.resize(parts[0].o.size());
  for (const PartialState& s : parts)
    detail::require(s.o.size() == o.size(), "parts", "partial states differ in length");
  detail::merge_rows(
      parts.size(), o.size(), [&](size_t k) { return parts[k].o.data(); }, [&](size_t k) { return parts[k].lse; },
      sink, o.data(), lse);
}

// Element-wise merge of AttentionResult-s (each [num_tokens][num_q_heads][head_size] / [num_q_heads][num_tokens])
// for every (token, head); sinks: [num_q_heads] (natural-log units) entering once per row, or null.
inline AttentionResult merge_results(std::span<const AttentionResult> parts, int64_t num_tokens, int64_t num_q_heads,
                                     int64_t head_size, const float* sinks = nullptr) {
  const int64_t T = num_tokens, H = num_q_heads, D = head_size;
  for (const AttentionResult& r : parts)
    detail::require(r.out.size() == size_t(T * H * D) && r.lse.size() == size_t(H * T), "parts",
                    "result shape does not match num_tokens / num_q_heads / head_size");
  AttentionResult res;
  res.out.assign(size_t(T * H * D), 0.0);
  res.lse.assign(size_t(H * T), 0.0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h) {
      const size_t oi = size_t((t * H + h) * D), li = size_t(h * T + t);
      std::optional<double> sink;
      if (sinks != nullptr) sink = double(sinks[h]);
      detail::merge_rows(
          parts.size(), size_t(D), [&](size_t k) { return parts[k].out.data() + oi; },
          [&](size_t k) { return parts[k].lse[li]; }, sink, res.out.data() + oi, res.lse[li]);
    }
  return res;
}

}  // namespace hipattn::reference
