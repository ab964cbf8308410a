// tests/common/compare.hpp: run unified_attention on a device problem and compare every output
// element and LSE with the float64 reference, within per-dtype tolerances (the GPU suites).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/dispatch/unified_attention.hpp"
#include "hipattn/reference/reference.hpp"
#include "../../testing/paged_problem.hpp"
#include "tolerance.hpp"

namespace hipattn::testing {

struct CompareStats {
  int64_t bad = 0, checked = 0;
  double max_abs = 0, sum_sq_err = 0, sum_sq_ref = 0;
  std::string first_bad;
  double rel_l2() const { return sum_sq_ref > 0 ? std::sqrt(sum_sq_err / sum_sq_ref) : std::sqrt(sum_sq_err); }
};

// Launch once through `launch(params, workspace, workspace_bytes, opt)` (an entry point of
// dispatch/unified_attention.hpp) over a poisoned output, and compare every output element and LSE
// with the reference; the raw output is returned through `raw` when given.
template <class Launch>
CompareStats launch_and_compare(HostProblem& h, DeviceProblem& dp, const reference::AttentionResult& ref,
                                const UnifiedOptions& opt, Launch&& launch, std::vector<uint16_t>* raw = nullptr) {
  const UnifiedAttentionParams p = dp.params();
  const size_t ws_bytes = unified_attention_workspace_size(p, opt);
  DeviceBuffer ws(ws_bytes);
  dp.poison();
  launch(p, ws.ptr, ws_bytes, opt);
  HIPATTN_CHECK(rt::device_synchronize());
  std::vector<uint16_t> out;
  std::vector<float> lse;
  dp.download(out, lse);
  if (raw) *raw = out;
  CompareStats st;
  const Tolerance tol = out_tolerance(h.spec.bf16);
  for (size_t i = 0; i < out.size(); ++i) {
    const double got = h.spec.bf16 ? bfloat16_t::from_bits(out[i]).to_float() : half_t::from_bits(out[i]).to_float();
    const double want = ref.out[i];
    const double err = std::fabs(got - want);
    st.sum_sq_err += std::isfinite(err) ? err * err : 1e30;
    st.sum_sq_ref += want * want;
    ++st.checked;
    if (!(err <= tol.atol + tol.rtol * std::fabs(want))) {
      if (st.bad++ == 0) st.first_bad = "out[" + std::to_string(i) + "] = " + std::to_string(got) + ", want " + std::to_string(want);
    } else {
      st.max_abs = std::max(st.max_abs, err);
    }
  }
  if (h.spec.lse) {
    for (size_t i = 0; i < size_t(h.spec.num_q_heads) * h.num_tokens; ++i) {
      const double got = lse[i], want = ref.lse[i];
      ++st.checked;
      const bool ok = std::isinf(want) ? (got == want) : std::fabs(got - want) <= kLseTolerance.atol + kLseTolerance.rtol * std::fabs(want);
      if (!ok && st.bad++ == 0) st.first_bad = "lse[" + std::to_string(i) + "] = " + std::to_string(got) + ", want " + std::to_string(want);
    }
  }
  return st;
}

// Run once with `path` through the tests' instance library (prebuilt::unified_attention) and compare.
inline CompareStats run_and_compare(HostProblem& h, DeviceProblem& dp, const reference::AttentionResult& ref,
                                    UnifiedPath path, int segments = 0, std::vector<uint16_t>* raw = nullptr,
                                    UnifiedSplit split = UnifiedSplit::automatic,
                                    UnifiedPipeline pipeline = UnifiedPipeline::automatic) {
  UnifiedOptions opt;
  opt.path = path;
  opt.num_segments = segments;
  opt.split = split;
  opt.pipeline = pipeline;
  return launch_and_compare(
      h, dp, ref, opt,
      [](const UnifiedAttentionParams& p, void* ws, size_t bytes, const UnifiedOptions& o) {
        prebuilt::unified_attention(p, ws, bytes, nullptr, o);
      },
      raw);
}

}  // namespace hipattn::testing
