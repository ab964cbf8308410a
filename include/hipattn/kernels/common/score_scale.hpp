// hipattn/kernels/common/score_scale.hpp: ScoreScale, the factors of the scores and of the output of a
// work item, computed once: the softmax scale with the per-tensor fp8 scales folded in (K's, fp8 Q's;
// V's into the output factor) and the fp8 matrix path's choices (the query re-encoding factor, P V in
// e4m3). The logits step reads it as a LogitsTile (kernels/common/softmax_step.hpp).
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/softmax_step.hpp"
#include "hipattn/numeric/kv_kind.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

struct ScoreScale {
  float qk = 1.f;   // the scores' factor, natural units: softmax scale x per-tensor K (and fp8 Q) scales
  float v = 1.f;    // V's per-tensor scale: the output's factor
  bool p8 = false;  // P V in e4m3 (the fp8 matrix path, Cfg::kP8): P scaled by WT::kP8Scale

  // The logits step's tile of a work item (key0 / edge are set per tile); log2(e) folded in once.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE LogitsTile logits_tile(int32_t kv_len, bool causal, int32_t window_left) const {
    return LogitsTile{0, false, kv_len, causal, window_left, qk, qk * kLog2e};
  }
  // The output's factor: V's scale, with P's fp8 scale divided out where P V ran in e4m3.
  template <class WT, bool kP8>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE float output_scale() const {
    if constexpr (kP8) return p8 ? v * (1.f / WT::kP8Scale) : v;
    else return v;
  }
};

// The skeleton's score scale (kernels/common/attention_kernel.hpp) from the kernel arguments
// (AttentionKernelArgs): per-tensor scales are device scalars or host values. On the fp8 matrix path
// the scores also take the factor of how the loader re-encoded the queries (numeric/kv_kind.hpp
// q8_query_factor), and P V runs in e4m3 when the call asks for it and no per-key V scale rides on P.
template <class Cfg, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE ScoreScale skeleton_score_scale(const Args& a) {
  ScoreScale s;
  const float k_scale = a.k_scale_tensor != nullptr ? *a.k_scale_tensor : a.k_scale_value;
  s.v = a.v_scale_tensor != nullptr ? *a.v_scale_tensor : a.v_scale_value;
  s.qk = a.scale * k_scale * (a.q_scale_tensor != nullptr ? *a.q_scale_tensor : a.q_scale_value);
  if constexpr (Cfg::kQ8) s.qk *= q8_query_factor(Cfg::kKv, a.q_kind == KvKind::e4m3fn);
  if constexpr (Cfg::kP8) s.p8 = a.p8 && !a.per_token_head_scale;
  return s;
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
