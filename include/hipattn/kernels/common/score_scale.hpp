// hipattn/kernels/common/score_scale.hpp: ScoreScale, the factors of the scores and of the output of a
// work item, computed once: the softmax scale with the per-tensor fp8 scales folded in (K's, fp8 Q's;
// V's into the output factor) and the fp8 matrix path's P V choice. The logits step reads it as a
// LogitsTile (kernels/common/softmax_step.hpp), log2(e) folded in here once. Built by the skeleton
// (kernels/common/attention_kernel.hpp, for its mainloop slot) and the sm_90 warpgroup families.
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/softmax_step.hpp"

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
};

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
