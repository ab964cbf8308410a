// hipattn/kernels/common/softmax_step.hpp: the mainloop step of ALGORITHM.md section 5.1 on a warp
// tile's fragments, written once for every ISA (the warp tile's s_slot / s_col / o_slot maps say
// which row and column each fragment element is):
//   logits(...)           S -> x = log2(e) * variant.logit(scale * s) (or s * scale * log2(e) when
//                         the variant leaves logits alone), -inf where the mask hides the key
//   RowSoftmax::update    m_new = max(m, rowmax x); f = 2^(m - m_new); l = l f + sum 2^(x - m_new);
//                         O *= f; S is replaced by P = 2^(x - m_new)
//   RowSoftmax::finish    l summed over the lanes that share a row
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/tile/online_softmax.hpp"
#include "hipattn/tile/tile_range.hpp"
#include "hipattn/tile/variants.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

// The device's math for variant hooks.
template <class Arch>
struct ArchMath {
  HIPATTN_DEVICE HIPATTN_FORCEINLINE float tanh(float x) const { return Arch::tanh(x); }
};

// The row state of one lane: per row slot, the running max (log2 units) and the lane's partial sum.
template <class WT, class Arch>
struct RowSoftmax {
  float m[WT::kRowSlots], l[WT::kRowSlots];

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void init() {
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) m[r] = -INFINITY, l[r] = 0.f;
  }

  // One tile: S (logits, log2 units) becomes P; O is rescaled. v_scales (per key of the warp's
  // columns, or null) multiply P after it entered the sum (the per-(token, head) V scales of fp8
  // caches). The pointer is tested once per tile, so the loop without scales carries no select.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void update(typename WT::SFrag& s, typename WT::OFrag& o, const float* v_scales,
                                                 int lane) {
    if (v_scales != nullptr) update_impl<true>(s, o, v_scales, lane);
    else update_impl<false>(s, o, nullptr, lane);
  }

  template <bool kScaled>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void update_impl(typename WT::SFrag& s, typename WT::OFrag& o,
                                                      const float* v_scales, int lane) {
    float f_old[WT::kRowSlots];
    update_rows<kScaled>(s, v_scales, lane, f_old);
    rescale(o, f_old);
  }

  // The two halves of update, for mainloops whose O is still being written by an asynchronous
  // matrix product when S arrives (the sm_90 warpgroup mainloop): update_rows turns S into P and
  // moves m and l, giving each row's factor f_old; rescale applies it to O once O may be touched.
  template <bool kScaled>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void update_rows(typename WT::SFrag& s, const float* v_scales, int lane,
                                                      float (&f_old)[WT::kRowSlots]) {
    float m_new[WT::kRowSlots];
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) m_new[r] = m[r];
#pragma unroll
    for (int e = 0; e < WT::kSElems; ++e) m_new[WT::s_slot(e)] = fmaxf(m_new[WT::s_slot(e)], s.r[e]);
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      m_new[r] = WT::row_max(m_new[r]);
      f_old[r] = Arch::exp2(m[r] - safe_max(m_new[r]));
      m[r] = m_new[r];
      l[r] *= f_old[r];
    }
#pragma unroll
    for (int e = 0; e < WT::kSElems; ++e) {
      const int slot = WT::s_slot(e);
      const float p = Arch::exp2(s.r[e] - safe_max(m_new[slot]));
      l[slot] += p;
      if constexpr (kScaled) s.r[e] = p * v_scales[WT::s_col(lane, e)];
      else s.r[e] = p;
    }
  }
  // update_rows for raw scores (q . k, the mask's -inf applied, nothing else): x = s * mult (mult =
  // scale x log2(e) > 0) is folded into the exponent, 2^(s mult - m) as one fused multiply-add, and
  // the row max is taken on s (max commutes with a positive factor). The mainloops whose variant
  // leaves logits alone use it instead of logits() + update_rows (one multiply less per score).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void update_rows_raw(typename WT::SFrag& s, float mult,
                                                          float (&f_old)[WT::kRowSlots]) {
    float m_new[WT::kRowSlots];
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) m_new[r] = -INFINITY;
#pragma unroll
    for (int e = 0; e < WT::kSElems; ++e) m_new[WT::s_slot(e)] = fmaxf(m_new[WT::s_slot(e)], s.r[e]);
    float neg_m[WT::kRowSlots];
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      m_new[r] = fmaxf(m[r], WT::row_max(m_new[r]) * mult);
      f_old[r] = Arch::exp2(m[r] - safe_max(m_new[r]));
      m[r] = m_new[r];
      l[r] *= f_old[r];
      neg_m[r] = -safe_max(m_new[r]);
    }
#pragma unroll
    for (int e = 0; e < WT::kSElems; ++e) {
      const int slot = WT::s_slot(e);
      const float p = Arch::exp2(fmaf(s.r[e], mult, neg_m[slot]));
      l[slot] += p;
      s.r[e] = p;
    }
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void rescale(typename WT::OFrag& o, const float (&f_old)[WT::kRowSlots]) {
#pragma unroll
    for (int e = 0; e < WT::kOElems; ++e) o.r[e] *= f_old[WT::o_slot(e)];
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void finish() {
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) l[r] = WT::row_sum(l[r]);
  }
};

// What the logits step needs to know about the tile and the mask.
struct LogitsTile {
  int32_t key0;      // first key of this warp's columns
  bool edge;         // the tile crosses the mask: test every key
  int32_t kv_len;
  bool causal;
  int32_t window_left;
  float qk_scale;       // softmax scale x per-tensor K scale (natural units)
  float qk_scale_log2;  // the same times log2(e)
};

template <class WT, class Arch, bool kScaled, class Variant>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void logits_impl(typename WT::SFrag& s, const Variant& variant, const RowInfo* rows,
                                                    const typename Variant::Row* vrows, const LogitsTile& t, int lane,
                                                    const float* k_scales) {
#pragma unroll
  for (int e = 0; e < WT::kSElems; ++e) {
    const int slot = WT::s_slot(e);
    const int col = WT::s_col(lane, e);
    const int32_t j = t.key0 + col;
    float x = s.r[e];
    if constexpr (kScaled) x *= k_scales[col];
    if constexpr (Variant::kTransformsLogits) {
      x = variant.logit(x * t.qk_scale, rows[slot], vrows[slot], j, ArchMath<Arch>{}) * kLog2e;
    } else {
      x *= t.qk_scale_log2;
    }
    if (t.edge && !key_visible(j, rows[slot].pos, t.kv_len, t.causal, t.window_left)) x = -INFINITY;
    s.r[e] = x;
  }
}

// The mask alone on raw scores (RowSoftmax::update_rows_raw applies the scale): -inf where key
// key0 + column is hidden from the row. Edge tiles only.
template <class WT>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mask_scores(typename WT::SFrag& s, const RowInfo* rows, const LogitsTile& t,
                                                    int lane) {
#pragma unroll
  for (int e = 0; e < WT::kSElems; ++e)
    if (!key_visible(t.key0 + WT::s_col(lane, e), rows[WT::s_slot(e)].pos, t.kv_len, t.causal, t.window_left))
      s.r[e] = -INFINITY;
}

// One tile's scores to probabilities, for mainloops without per-key scales: S (raw dot products)
// becomes P and each row's O factor is returned in f_old (O not touched). Variants that transform
// logits take logits() and update_rows; the others the mask alone (edge tiles) and update_rows_raw,
// the scale folded into the exponent.
template <class WT, class Arch, class Variant>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void scores_to_probs(typename WT::SFrag& s, const Variant& variant, const RowInfo* rows,
                                                        const typename Variant::Row* vrows, const LogitsTile& t, int lane,
                                                        RowSoftmax<WT, Arch>& softmax, float (&f_old)[WT::kRowSlots]);

// S (raw dot products) -> logits in log2 units. k_scales: the per-key K scales of the warp's columns
// (null without per-(token, head) scales; tested once per tile, like update's V scales).
template <class WT, class Arch, class Variant>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void logits(typename WT::SFrag& s, const Variant& variant, const RowInfo* rows,
                                               const typename Variant::Row* vrows, const LogitsTile& t, int lane,
                                               const float* k_scales) {
  if (k_scales != nullptr) logits_impl<WT, Arch, true>(s, variant, rows, vrows, t, lane, k_scales);
  else logits_impl<WT, Arch, false>(s, variant, rows, vrows, t, lane, nullptr);
}

template <class WT, class Arch, class Variant>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void scores_to_probs(typename WT::SFrag& s, const Variant& variant, const RowInfo* rows,
                                                        const typename Variant::Row* vrows, const LogitsTile& t, int lane,
                                                        RowSoftmax<WT, Arch>& softmax, float (&f_old)[WT::kRowSlots]) {
  if constexpr (Variant::kTransformsLogits) {
    logits<WT, Arch>(s, variant, rows, vrows, t, lane, nullptr);
    softmax.template update_rows<false>(s, nullptr, lane, f_old);
  } else {  // the scale folds into the exponent
    if (t.edge) mask_scores<WT>(s, rows, t, lane);
    softmax.update_rows_raw(s, t.qk_scale_log2, f_old);
  }
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
