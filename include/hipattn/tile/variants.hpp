// hipattn/tile/variants.hpp: logit variants as small functors (FlashInfer's variant model).
//
// A variant transforms a scaled score s = scale * q.k (natural-log units) for one (row, key) pair,
// and says which of its hooks are active so that disabled features cost nothing (`if constexpr`).
// The mask (causal, window, kv length) is not a variant: the kernels apply it on edge tiles only.
// The sink is not a logit transform: it enters the softmax denominator once, in the finalize or
// the split-KV reduce. The order of ALGORITHM.md is: scale, softcap, mask, ALiBi, QQ-bias; since the
// mask sets -inf and ALiBi / QQ-bias add finite values, applying the mask last gives the same result.
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

// Runtime knobs of the standard logit features (kernel arguments).
struct LogitArgs {
  float softcap = 0.f;                  // > 0: s = softcap * tanh(s / softcap)
  const float* alibi_slopes = nullptr;  // [num_q_heads]
  const float* qq_bias = nullptr;       // [max_seqlen_q, qq_bias_stride]
  int32_t qq_bias_stride = 0;  // < 2^31 (validated)
};

// What a variant may know about a row (one query token x one q head).
struct RowInfo {
  int32_t i;       // query index within its sequence
  int32_t pos;     // absolute position: context_len + i
  int32_t ctx;     // context_len = kv_len - q_len
  int32_t q_head;  // q head index
  float slope;     // ALiBi slope of q_head (0 when ALiBi is off)
};

// The standard variant: each feature compiled in or out. kRuntime features also check their
// runtime knob (softcap > 0, pointer non-null), so one instance serves every combination.
template <bool kSoftcap, bool kAlibi, bool kQQBias>
struct StandardVariant {
  // True when some hook works on natural-log scores (otherwise the scale folds into log2(e)).
  static constexpr bool kTransformsLogits = kSoftcap || kAlibi || kQQBias;
  static constexpr bool kUsesSlope = kAlibi;

  template <class TanhFn>
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE static float transform(const LogitArgs& a, float s, const RowInfo& r,
                                                                 int32_t j, TanhFn tanh_fn) {
    if constexpr (kSoftcap) {
      if (a.softcap > 0.f) s = a.softcap * tanh_fn(s * (1.f / a.softcap));
    }
    if constexpr (kAlibi) s += r.slope * static_cast<float>(j - r.pos);
    if constexpr (kQQBias) {
      if (a.qq_bias != nullptr) {
        const int32_t rel = j - r.ctx;
        if (rel >= 0 && rel < a.qq_bias_stride) s += a.qq_bias[static_cast<int64_t>(r.i) * a.qq_bias_stride + rel];
      }
    }
    return s;
  }
};

using PlainVariant = StandardVariant<false, false, false>;  // scale only (the fast path)
using FullVariant = StandardVariant<true, true, true>;      // every feature, each gated at run time

}  // namespace hipattn
