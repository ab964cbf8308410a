// tests/host/test_reference_logits.cpp: the float64 unified-attention reference's logit terms against formulas
// written out by hand: sinks, ALiBi, softcap (and its order with ALiBi), QQ-bias.
// The problems and the direct formulas are in tests/host/reference_problem.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "reference_problem.hpp"

namespace {

using namespace hipattn_reference_tests;

// ---------------------------------------------------------------------------------------------
// sinks, ALiBi, softcap, QQ-bias
// ---------------------------------------------------------------------------------------------

TEST(ReferenceUnified, SinkLowersTheMassByTheExpectedFactor) {
  const uint32_t seed = 51;
  SCOPED_TRACE(trace(seed));
  Spec s;
  s.q_lens = {3, 1, 1};
  s.kv_lens = {8, 5, 0};  // the last sequence has no key at all
  s.nqh = 4;
  s.nkvh = 2;
  s.hs = 16;
  s.bs = 4;
  Problem P(s, seed);
  const ref::AttentionResult r0 = ref::unified_attention(P.p);
  P.enable_sinks();
  const ref::AttentionResult r1 = ref::unified_attention(P.p);
  for (int t = 0; t < P.T; ++t)
    for (int h = 0; h < s.nqh; ++h) {
      const double l0 = r0.lse[size_t(h * P.T + t)], sink = double(P.sinks[size_t(h)]);
      const double L = std::exp(l0);  // 0 for the query with no key
      const double factor = L / (L + std::exp(sink));
      EXPECT_NEAR(r1.lse[size_t(h * P.T + t)], std::log(L + std::exp(sink)), 1e-12) << "t=" << t << " h=" << h;
      for (int d = 0; d < s.hs; ++d) {
        const size_t i = size_t((t * s.nqh + h) * s.hs + d);
        EXPECT_NEAR(r1.out[i], r0.out[i] * factor, 1e-13) << "t=" << t << " h=" << h << " d=" << d;
      }
    }
  // no visible key: out 0, LSE = -inf without the sink and = sink with it
  const int t_empty = 4;
  for (int h = 0; h < s.nqh; ++h) {
    EXPECT_EQ(r0.lse[size_t(h * P.T + t_empty)], -kInf);
    EXPECT_EQ(r1.lse[size_t(h * P.T + t_empty)], double(P.sinks[size_t(h)]));
    for (int d = 0; d < s.hs; ++d) {
      EXPECT_EQ(r0.out[size_t((t_empty * s.nqh + h) * s.hs + d)], 0.0);
      EXPECT_EQ(r1.out[size_t((t_empty * s.nqh + h) * s.hs + d)], 0.0);
    }
  }
}

// One query at pos 2 over 3 keys, logits written out by hand.
struct Small {
  Problem P;
  explicit Small(uint32_t seed, int q_len = 1, int kv_len = 3)
      : P(
            [&] {
              Spec s;
              s.q_lens = {q_len};
              s.kv_lens = {kv_len};
              s.nqh = 2;
              s.nkvh = 1;
              s.hs = 8;
              s.bs = 2;
              return s;
            }(),
            seed) {}
  double dot(int t, int h, int j) const {
    double x = 0.0;
    for (int d = 0; d < 8; ++d) x += P.qv(t, h, d) * P.kv(false, 0, j, 0, d);
    return x;
  }
  std::vector<double> vrow(int j) const {
    std::vector<double> r(8);
    for (int d = 0; d < 8; ++d) r[size_t(d)] = P.kv(true, 0, j, 0, d);
    return r;
  }
};

void expect_row(const ref::AttentionResult& r, int T, int H, int D, int t, int h, const std::vector<double>& out, double lse,
                double tol, const std::string& what) {
  EXPECT_NEAR(r.lse[size_t(h * T + t)], lse, tol * (1 + std::abs(lse))) << what << " lse t=" << t << " h=" << h;
  for (int d = 0; d < D; ++d)
    EXPECT_NEAR(r.out[size_t((t * H + h) * D + d)], out[size_t(d)], tol) << what << " t=" << t << " h=" << h << " d=" << d;
}

TEST(ReferenceUnified, AlibiFormulaByHand) {
  const uint32_t seed = 61;
  SCOPED_TRACE(trace(seed));
  Small S(seed);
  S.P.enable_alibi();
  const ref::AttentionResult r = ref::unified_attention(S.P.p);
  for (int h = 0; h < 2; ++h) {
    const double sc = S.P.p.scale, m = S.P.alibi[size_t(h)];
    // pos = 2: key j gets slope * (j - 2)
    const std::vector<double> s = {sc * S.dot(0, h, 0) - 2 * m, sc * S.dot(0, h, 1) - m, sc * S.dot(0, h, 2)};
    auto [o, l] = hand_softmax(s, {S.vrow(0), S.vrow(1), S.vrow(2)}, 8, {});
    expect_row(r, 1, 2, 8, 0, h, o, l, 1e-13, "alibi");
  }
  // with a context: q_len 2, kv_len 5 -> positions 3 and 4
  Small S2(seed + 1, 2, 5);
  S2.P.enable_alibi();
  const ref::AttentionResult r2 = ref::unified_attention(S2.P.p);
  for (int i = 0; i < 2; ++i)
    for (int h = 0; h < 2; ++h) {
      const int pos = 3 + i;
      std::vector<double> s;
      std::vector<std::vector<double>> vr;
      for (int j = 0; j <= pos; ++j) {
        s.push_back(double(S2.P.p.scale) * S2.dot(i, h, j) + double(S2.P.alibi[size_t(h)]) * (j - pos));
        vr.push_back(S2.vrow(j));
      }
      auto [o, l] = hand_softmax(s, vr, 8, {});
      expect_row(r2, 2, 2, 8, i, h, o, l, 1e-13, "alibi with context");
    }
}

TEST(ReferenceUnified, SoftcapFormulaByHandAndBeforeAlibi) {
  const uint32_t seed = 71;
  SCOPED_TRACE(trace(seed));
  Small S(seed);
  S.P.p.softcap = 0.7f;  // small, so tanh bends the logits a lot
  const double c = 0.7f;
  const ref::AttentionResult r = ref::unified_attention(S.P.p);
  S.P.enable_alibi();
  const ref::AttentionResult ra = ref::unified_attention(S.P.p);
  for (int h = 0; h < 2; ++h) {
    const double sc = S.P.p.scale, m = S.P.alibi[size_t(h)];
    std::vector<double> s, sa, wrong;
    for (int j = 0; j < 3; ++j) {
      const double x = sc * S.dot(0, h, j);
      s.push_back(c * std::tanh(x / c));
      sa.push_back(c * std::tanh(x / c) + m * (j - 2));
      wrong.push_back(c * std::tanh((x + m * (j - 2)) / c));  // the other order
    }
    const std::vector<std::vector<double>> vr = {S.vrow(0), S.vrow(1), S.vrow(2)};
    auto [o, l] = hand_softmax(s, vr, 8, {});
    expect_row(r, 1, 2, 8, 0, h, o, l, 1e-13, "softcap");
    auto [oa, la] = hand_softmax(sa, vr, 8, {});
    expect_row(ra, 1, 2, 8, 0, h, oa, la, 1e-13, "softcap then alibi");
    auto [ow, lw] = hand_softmax(wrong, vr, 8, {});
    EXPECT_GT(std::abs(lw - la), 1e-6) << "the test cannot tell the two orders apart";
  }
}

TEST(ReferenceUnified, QqBiasOnTheNewTokensOnly) {
  const uint32_t seed = 81;
  SCOPED_TRACE(trace(seed));
  Small S(seed, 3, 7);  // context 4, new tokens are keys 4, 5, 6
  S.P.enable_qq_bias(3);
  S.P.qq[size_t(2 * 3 + 1)] = 40.f;  // query 2 -> key 5 dominates
  const ref::AttentionResult r = ref::unified_attention(S.P.p);
  for (int i = 0; i < 3; ++i)
    for (int h = 0; h < 2; ++h) {
      std::vector<double> s;
      std::vector<std::vector<double>> vr;
      for (int j = 0; j <= 4 + i; ++j) {
        double x = double(S.P.p.scale) * S.dot(i, h, j);
        if (j >= 4) x += double(S.P.qq[size_t(i * 3 + (j - 4))]);
        s.push_back(x);
        vr.push_back(S.vrow(j));
      }
      auto [o, l] = hand_softmax(s, vr, 8, {});
      expect_row(r, 3, 2, 8, i, h, o, l, 1e-13, "qq-bias");
    }
  for (int h = 0; h < 2; ++h)  // the chosen key carries (almost) all the weight
    for (int d = 0; d < 8; ++d) EXPECT_NEAR(r.out[size_t((2 * 2 + h) * 8 + d)], S.vrow(5)[size_t(d)], 1e-12);

  // a stride shorter than q_len: columns r >= stride get no bias
  Small S2(seed + 1, 3, 7);
  S2.P.enable_qq_bias(2);
  const ref::AttentionResult r2 = ref::unified_attention(S2.P.p);
  for (int i = 0; i < 3; ++i)
    for (int h = 0; h < 2; ++h) {
      std::vector<double> s;
      std::vector<std::vector<double>> vr;
      for (int j = 0; j <= 4 + i; ++j) {
        double x = double(S2.P.p.scale) * S2.dot(i, h, j);
        if (j == 4 || j == 5) x += double(S2.P.qq[size_t(i * 2 + (j - 4))]);
        s.push_back(x);
        vr.push_back(S2.vrow(j));
      }
      auto [o, l] = hand_softmax(s, vr, 8, {});
      expect_row(r2, 3, 2, 8, i, h, o, l, 1e-13, "qq-bias stride 2");
    }
}

}  // namespace
