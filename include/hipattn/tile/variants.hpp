// hipattn/tile/variants.hpp: logit variants as values (FlashInfer's variant model).
//
// A variant is a value: the kernel arguments carry one, so its data (a pointer to per-head
// parameters, a constant) travels with it. The kernel asks it twice:
//   row(info)              once per query row (one token x one q head): per-row state, e.g. the
//                          ALiBi slope of the row's head, loaded by the variant itself;
//   logit(s, info, row, j) per (row, key j): transforms the scaled score s = scale * q.k (natural-log
//                          units) when kTransformsLogits; otherwise the scale folds into log2(e) and
//                          logit is never called.
// VariantBase gives the default of every hook; a variant overrides only what it changes.
// The mask (causal, window, kv length) is not a variant: the kernels apply it on edge tiles only.
// The sink is not a logit transform: it enters the softmax denominator once, in the finalize or
// the split-KV reduce. The order of ALGORITHM.md is: scale, softcap, mask, ALiBi, QQ-bias; since the
// mask sets -inf and ALiBi / QQ-bias add finite values, applying the mask last gives the same result.
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

// What a variant may know about a row (one query token x one q head).
struct RowInfo {
  int32_t i;       // query index within its sequence
  int32_t pos;     // absolute position: context_len + i
  int32_t ctx;     // context_len = kv_len - q_len
  int32_t q_head;  // q head index
};

// `Math` in the hooks: what a variant may call, math.tanh(x) (the device's fast form in kernels).
// Defaults of every hook: no per-row state, logits unchanged.
struct VariantBase {
  static constexpr bool kTransformsLogits = false;
  struct Row {};
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE Row row(const RowInfo&) const { return {}; }
  template <class Math, class RowT>
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE float logit(float s, const RowInfo&, const RowT&, int32_t, Math) const {
    return s;
  }
};

// Runtime knobs of the standard logit features.
struct LogitArgs {
  float softcap = 0.f;                  // > 0: s = softcap * tanh(s / softcap)
  const float* alibi_slopes = nullptr;  // [num_q_heads]
  const float* qq_bias = nullptr;       // [max_seqlen_q, qq_bias_stride]
  int32_t qq_bias_stride = 0;  // < 2^31 (validated)
};

// The standard variant: each feature compiled in or out; a compiled-in feature also checks its
// runtime knob (softcap > 0, pointer non-null), so one instance serves every combination.
template <bool kSoftcap, bool kAlibi, bool kQQBias>
struct StandardVariant : VariantBase {
  static constexpr bool kTransformsLogits = kSoftcap || kAlibi || kQQBias;
  LogitArgs args;

  // The variant of a problem description (UnifiedAttentionParams: softcap, alibi_slopes, qq_bias).
  template <class Params>
  static StandardVariant from_params(const Params& p) {
    StandardVariant v;
    v.args.softcap = p.softcap;
    v.args.alibi_slopes = p.alibi_slopes;
    v.args.qq_bias = p.qq_bias;
    v.args.qq_bias_stride = static_cast<int32_t>(p.qq_bias_stride);
    return v;
  }

  struct Row {
    float slope = 0.f;  // ALiBi slope of the row's head (0 when ALiBi is off)
  };
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE Row row(const RowInfo& r) const {
    Row row;
    if constexpr (kAlibi) {
      if (args.alibi_slopes != nullptr) row.slope = args.alibi_slopes[r.q_head];
    }
    return row;
  }

  template <class Math>
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE float logit(float s, const RowInfo& r, const Row& row, int32_t j,
                                                      Math math) const {
    if constexpr (kSoftcap) {
      if (args.softcap > 0.f) s = args.softcap * math.tanh(s * (1.f / args.softcap));
    }
    if constexpr (kAlibi) s += row.slope * static_cast<float>(j - r.pos);
    if constexpr (kQQBias) {
      if (args.qq_bias != nullptr) {
        const int32_t rel = j - r.ctx;
        if (rel >= 0 && rel < args.qq_bias_stride) s += args.qq_bias[static_cast<int64_t>(r.i) * args.qq_bias_stride + rel];
      }
    }
    return s;
  }
};

using PlainVariant = StandardVariant<false, false, false>;  // scale only (the fast path)
using FullVariant = StandardVariant<true, true, true>;      // every feature, each gated at run time

// A variant's name in instance names: "plain", "full", the standard features it compiles in
// ("softcap", "softcap+alibi", ...), or "custom" for a caller's variant.
template <class V>
struct VariantName {
  static constexpr const char* value = "custom";
};
template <bool kSoftcap, bool kAlibi, bool kQQBias>
struct VariantName<StandardVariant<kSoftcap, kAlibi, kQQBias>> {
  static constexpr const char* value = !kSoftcap && !kAlibi && !kQQBias ? "plain"
                                       : kSoftcap && kAlibi && kQQBias  ? "full"
                                       : kSoftcap && kAlibi             ? "softcap+alibi"
                                       : kSoftcap && kQQBias            ? "softcap+qq_bias"
                                       : kAlibi && kQQBias              ? "alibi+qq_bias"
                                       : kSoftcap                       ? "softcap"
                                       : kAlibi                         ? "alibi"
                                                                        : "qq_bias";
};
template <class V>
constexpr const char* variant_name() {
  return VariantName<V>::value;
}

}  // namespace hipattn
