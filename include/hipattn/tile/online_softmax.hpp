// hipattn/tile/online_softmax.hpp: online softmax in the exp2 domain, and the merge of partial states.
//
// Scores enter as x = s * log2(e) (the softmax scale already folded into the multiplier). A state
// holds the running max m (log2 units), the running sum l = sum 2^(x - m) and the unnormalized
// output O = sum 2^(x - m) v. Rescaling by 2^(m_old - m_new) keeps O and l consistent. A row that has
// seen no key has m = -inf, l = 0; "safe" maxima replace -inf by 0 so 2^(-inf - -inf) never occurs.
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE float safe_max(float m) { return m == -INFINITY ? 0.f : m; }

// A merged (max, sum) pair in log2 units; combine() folds another state in.
struct SoftmaxStat {
  float m = -INFINITY;  // running max, log2 units
  float l = 0.f;        // sum of 2^(x - m)
  // The factors by which this state's and the other's O must be multiplied after combining.
  template <class Exp2>
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE void combine(float m_other, float l_other, float& f_self, float& f_other,
                                                       Exp2 exp2_fn) {
    const float mn = m > m_other ? m : m_other;
    const float ms = safe_max(mn);
    f_self = exp2_fn(m - ms);
    f_other = exp2_fn(m_other - ms);
    l = l * f_self + l_other * f_other;
    m = mn;
  }
  // log2 of the total mass (lse in log2 units); -inf when empty.
  template <class Log2>
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE float lse2(Log2 log2_fn) const {
    return l > 0.f ? m + log2_fn(l) : -INFINITY;
  }
};

// Finalize with an optional sink (log2 units; -inf for none): the sink enters the denominator once.
// Returns the factor that turns the unnormalized O into the output, and writes the lse in log2 units.
template <class Exp2, class Log2>
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE float finalize_with_sink(float m, float l, float sink2, float& lse2,
                                                                 Exp2 exp2_fn, Log2 log2_fn) {
  SoftmaxStat st{m, l};
  float fs = 1.f, fo = 1.f;
  if (sink2 != -INFINITY) st.combine(sink2, 1.f, fs, fo, exp2_fn);
  lse2 = st.lse2(log2_fn);
  return st.l > 0.f ? fs / st.l : 0.f;
}

}  // namespace hipattn
