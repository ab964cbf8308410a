// tests/host/test_softmax_variants.cpp: the logit variants (tile/variants.hpp) against the formula of
// ALGORITHM.md section 2, and the exp2-domain online softmax (tile/online_softmax.hpp: safe_max,
// SoftmaxStat::combine / lse2, finalize_with_sink) against a direct double-precision softmax (sections 3 and 5.1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hipattn/tile/online_softmax.hpp"
#include "hipattn/tile/variants.hpp"

namespace {

using hipattn::LogitArgs;
using hipattn::RowInfo;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

auto tanh_fn = [](float x) { return std::tanh(x); };
auto exp2_fn = [](float x) { return std::exp2(x); };
auto log2_fn = [](float x) { return std::log2(x); };

// ---------------------------------------------------------------------------------------------------
// Variants
// ---------------------------------------------------------------------------------------------------

// The logit of ALGORITHM.md section 2 (steps 2, 4, 5; the mask is not a variant), in double, with each
// feature switched by `use_*` (a feature compiled out of the variant is off whatever its runtime knob says).
// `mag` receives the sum of the magnitudes of the terms (for the float tolerance).
double logit_ref(const LogitArgs& a, float s, const RowInfo& r, float slope, int32_t j, bool use_softcap,
                 bool use_alibi, bool use_qq, double& mag) {
  double x = s;
  if (use_softcap && a.softcap > 0.f) x = static_cast<double>(a.softcap) * std::tanh(static_cast<double>(s) / a.softcap);
  mag = std::fabs(x);
  if (use_alibi) {
    const double al = static_cast<double>(slope) * (static_cast<double>(j) - r.pos);
    x += al;
    mag += std::fabs(al);
  }
  if (use_qq && a.qq_bias != nullptr) {
    const int64_t rel = static_cast<int64_t>(j) - r.ctx;
    if (rel >= 0 && rel < a.qq_bias_stride) {
      const double b = a.qq_bias[static_cast<int64_t>(r.i) * a.qq_bias_stride + rel];
      x += b;
      mag += std::fabs(b);
    }
  }
  return x;
}

// A variant value's logit for row r, with `slope` as the ALiBi slope of r's head (the variant loads
// it itself from args.alibi_slopes in row()), and `tanh_fn` as the math hook.
template <class V, class Tanh>
float variant_logit(LogitArgs a, float s, const RowInfo& r, float slope, int32_t j, Tanh tanh_fn) {
  std::vector<float> slopes(static_cast<size_t>(r.q_head) + 1, 0.f);
  slopes[static_cast<size_t>(r.q_head)] = slope;
  a.alibi_slopes = slopes.data();
  V v;
  v.args = a;
  struct Math {
    Tanh t;
    float tanh(float x) const { return t(x); }
  } math{tanh_fn};
  return v.logit(s, r, v.row(r), j, math);
}

template <bool kS, bool kA, bool kQ>
int check_variant_random(uint32_t seed) {
  using V = hipattn::StandardVariant<kS, kA, kQ>;
  std::mt19937 rng(seed);
  auto uf = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
  auto ui = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
  int failures = 0;
  for (int it = 0; it < 20000; ++it) {
    const int32_t q_len = ui(1, 40), ctx = ui(0, 300);
    const int64_t stride = ui(1, 48);
    std::vector<float> bias(static_cast<size_t>(q_len * stride));
    for (float& b : bias) b = uf(-8.f, 8.f);
    LogitArgs a;
    a.softcap = ui(0, 3) == 0 ? 0.f : uf(1.f, 50.f);
    a.qq_bias = ui(0, 4) == 0 ? nullptr : bias.data();
    a.qq_bias_stride = stride;
    RowInfo r{};
    r.i = ui(0, q_len - 1);
    r.ctx = ctx;
    r.pos = ctx + r.i;
    r.q_head = ui(0, 63);
    const float slope = ui(0, 4) == 0 ? 0.f : uf(-1.f, 1.f);
    // Keys around the new tokens so that the QQ-bias window edges are hit often.
    const int32_t j = ui(0, 3) == 0 ? ui(0, ctx + q_len - 1) : std::max(0, ctx + ui(-3, static_cast<int32_t>(stride) + 2));
    const float s = uf(-60.f, 60.f);
    double mag = 0;
    const double want = logit_ref(a, s, r, slope, j, kS, kA, kQ, mag);
    const float got = variant_logit<V>(a, s, r, slope, j, tanh_fn);
    if (!(std::fabs(got - want) <= 1e-6 * (mag + std::fabs(s) + 1.0)) && ++failures <= 5)
      ADD_FAILURE() << "variant <" << kS << kA << kQ << "> seed=" << seed << " it=" << it << ": s=" << s
                    << " softcap=" << a.softcap << " slope=" << slope << " i=" << r.i << " pos=" << r.pos
                    << " ctx=" << r.ctx << " j=" << j << " stride=" << stride << " qq=" << (a.qq_bias != nullptr)
                    << ": expected " << want << ", got " << got;
  }
  return failures;
}

TEST(Variants, EveryCombinationMatchesTheFormula) {
  int failures = 0;
  failures += check_variant_random<false, false, false>(1);
  failures += check_variant_random<true, false, false>(2);
  failures += check_variant_random<false, true, false>(3);
  failures += check_variant_random<false, false, true>(4);
  failures += check_variant_random<true, true, false>(5);
  failures += check_variant_random<true, false, true>(6);
  failures += check_variant_random<false, true, true>(7);
  failures += check_variant_random<true, true, true>(8);
  EXPECT_EQ(failures, 0);
}

TEST(Variants, PlainLeavesScoresBitExact) {
  // Every runtime knob set: PlainVariant compiles them all out.
  const std::vector<float> bias(64, 3.5f);
  LogitArgs a;
  a.softcap = 2.f;
  a.qq_bias = bias.data();
  a.qq_bias_stride = 8;
  const RowInfo r{2, 12, 10, 3};
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> ud(-1000.f, 1000.f);
  for (int it = 0; it < 1000; ++it) {
    const float s = ud(rng);
    for (int32_t j = 0; j < 20; ++j) {
      const float got = variant_logit<hipattn::PlainVariant>(a, s, r, 0.75f, j, tanh_fn);
      EXPECT_EQ(got, s) << "s=" << s << " j=" << j;
    }
  }
  EXPECT_EQ(variant_logit<hipattn::PlainVariant>(a, kNegInf, r, 0.75f, 0, tanh_fn), kNegInf);
}

TEST(Variants, FullWithFeaturesOffAtRunTime) {
  const RowInfo r0{1, 9, 8, 0};  // slope 0: ALiBi off
  LogitArgs a;                        // softcap 0, qq_bias null
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> ud(-200.f, 200.f);
  for (int it = 0; it < 1000; ++it) {
    const float s = ud(rng);
    for (int32_t j = 0; j < 16; ++j) EXPECT_EQ(variant_logit<hipattn::FullVariant>(a, s, r0, 0.f, j, tanh_fn), s) << s;
  }
  // softcap = 0 disables the softcap even with the other features on: s = 100 passes through, plus ALiBi.
  const RowInfo r1{0, 5, 5, 0};  // slope 0.5
  EXPECT_FLOAT_EQ(variant_logit<hipattn::FullVariant>(a, 100.f, r1, 0.5f, 3, tanh_fn), 100.f + 0.5f * (3 - 5));
  // A softcap squashes it: 10 * tanh(10) + 0.5 * (3 - 5).
  a.softcap = 10.f;
  EXPECT_NEAR(variant_logit<hipattn::FullVariant>(a, 100.f, r1, 0.5f, 3, tanh_fn), 10.0 * std::tanh(10.0) - 1.0, 1e-5);
  // The tanh hook is the one called: a fake tanh shows through.
  EXPECT_FLOAT_EQ((variant_logit<hipattn::StandardVariant<true, false, false>>(a, 30.f, r1, 0.5f, 3, [](float x) { return 2.f * x; })),
                  60.f);
}

TEST(Variants, QQBiasOnlyInsideItsColumns) {
  // q_len 3, stride 4: bias[i][c] = 100 * (i + 1) + c + 1 (non-zero everywhere).
  std::vector<float> bias(12);
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 4; ++c) bias[static_cast<size_t>(i * 4 + c)] = 100.f * (i + 1) + c + 1;
  LogitArgs a;
  a.qq_bias = bias.data();
  a.qq_bias_stride = 4;
  using QQ = hipattn::StandardVariant<false, false, true>;
  const int32_t ctx = 50;
  for (int32_t i = 0; i < 3; ++i) {
    const RowInfo r{i, ctx + i, ctx, 0};
    for (int32_t j = 0; j < ctx + 8; ++j) {
      const int32_t c = j - ctx;
      const float want = 1.f + ((c >= 0 && c < 4) ? 100.f * (i + 1) + c + 1 : 0.f);
      EXPECT_EQ(variant_logit<QQ>(a, 1.f, r, 0.f, j, tanh_fn), want) << "i=" << i << " j=" << j;
    }
  }
}

template <bool kS, bool kA, bool kQ>
void expect_flags() {
  using V = hipattn::StandardVariant<kS, kA, kQ>;
  EXPECT_EQ(V::kTransformsLogits, kS || kA || kQ) << kS << kA << kQ;
  // the variant loads its own ALiBi slope, for its row's head, only when ALiBi is compiled in
  const float slopes[2] = {0.25f, -0.5f};
  V v;
  v.args.alibi_slopes = slopes;
  EXPECT_EQ(v.row(RowInfo{0, 0, 0, 1}).slope, kA ? -0.5f : 0.f) << kS << kA << kQ;
}

TEST(Variants, Flags) {
  expect_flags<false, false, false>();
  expect_flags<true, false, false>();
  expect_flags<false, true, false>();
  expect_flags<false, false, true>();
  expect_flags<true, true, false>();
  expect_flags<true, false, true>();
  expect_flags<false, true, true>();
  expect_flags<true, true, true>();
  EXPECT_FALSE(hipattn::PlainVariant::kTransformsLogits);
  EXPECT_TRUE(hipattn::FullVariant::kTransformsLogits);
}

// ---------------------------------------------------------------------------------------------------
// Online softmax
// ---------------------------------------------------------------------------------------------------

TEST(OnlineSoftmax, SafeMax) {
  EXPECT_EQ(hipattn::safe_max(kNegInf), 0.f);
  for (float x : {-1e30f, -3.5f, -0.f, 0.f, 1.25f, 7e20f}) EXPECT_EQ(hipattn::safe_max(x), x);
  EXPECT_NEAR(hipattn::kLn2, std::log(2.0), 1e-7);
  EXPECT_NEAR(hipattn::kLog2e, 1.0 / std::log(2.0), 1e-7);
}

// One row streamed through SoftmaxStat in random chunks, against the direct double computation.
struct StreamCase {
  std::vector<float> x;  // scores in log2 units, -inf = masked
  std::vector<float> v;  // one value component per score
  std::vector<int> cuts; // chunk boundaries, 0 = first, x.size() = last
  float sink2;           // -inf: no sink
};

std::string run_stream(const StreamCase& c) {
  // Streaming, as a kernel does it (float).
  hipattn::SoftmaxStat st;
  float O = 0.f;
  for (size_t k = 0; k + 1 < c.cuts.size(); ++k) {
    float mc = kNegInf;
    for (int e = c.cuts[k]; e < c.cuts[k + 1]; ++e) mc = std::max(mc, c.x[static_cast<size_t>(e)]);
    float lc = 0.f, oc = 0.f;
    for (int e = c.cuts[k]; e < c.cuts[k + 1]; ++e) {
      const float p = std::exp2(c.x[static_cast<size_t>(e)] - hipattn::safe_max(mc));
      lc += p;
      oc += p * c.v[static_cast<size_t>(e)];
    }
    float fs = std::numeric_limits<float>::quiet_NaN(), fo = std::numeric_limits<float>::quiet_NaN();
    st.combine(mc, lc, fs, fo, exp2_fn);
    if (std::isnan(fs) || std::isnan(fo) || std::isnan(st.l)) return "NaN factor in combine at chunk " + std::to_string(k);
    O = O * fs + oc * fo;
  }
  float lse2 = std::numeric_limits<float>::quiet_NaN();
  const float factor = hipattn::finalize_with_sink(st.m, st.l, c.sink2, lse2, exp2_fn, log2_fn);
  const float out = O * factor;

  // Direct, in double.
  double mx = -INFINITY;
  for (float x : c.x) mx = std::max(mx, static_cast<double>(x));
  double l_nosink = 0;
  for (float x : c.x)
    if (x != kNegInf) l_nosink += std::exp2(x - mx);
  const double M = std::max(mx, static_cast<double>(c.sink2));
  double L = 0, num = 0, mag = 0;
  for (size_t e = 0; e < c.x.size(); ++e)
    if (c.x[e] != kNegInf) {
      const double w = std::exp2(static_cast<double>(c.x[e]) - M);
      L += w;
      num += w * c.v[e];
      mag += w * std::fabs(c.v[e]);
    }
  if (c.sink2 != kNegInf) L += std::exp2(static_cast<double>(c.sink2) - M);
  const bool empty = L == 0;
  const double want_lse2 = empty ? -INFINITY : M + std::log2(L);
  const double want_factor = (empty || mx == -INFINITY) ? 0.0 : std::exp2(mx - M) / L;
  const double want_out = empty ? 0.0 : num / L;

  auto rel_ok = [](double got, double want) {
    if (std::isinf(want)) return got == want;
    return std::fabs(got - want) <= 1e-5 * std::max(1.0, std::fabs(want));
  };
  std::string err;
  auto add = [&](const std::string& what, double got, double want) {
    err += what + ": expected " + std::to_string(want) + ", got " + std::to_string(got) + "; ";
  };
  if (static_cast<double>(st.m) != mx) add("running max", st.m, mx);
  if (mx != -INFINITY ? std::fabs(st.l - l_nosink) > 1e-5 * l_nosink : st.l != 0.f) add("running sum", st.l, l_nosink);
  const float st_lse2 = st.lse2(log2_fn);
  const double want_st_lse2 = mx == -INFINITY ? -INFINITY : mx + std::log2(l_nosink);
  if (!rel_ok(st_lse2, want_st_lse2)) add("lse2 without sink", st_lse2, want_st_lse2);
  if (!rel_ok(lse2, want_lse2)) add("lse2", lse2, want_lse2);
  if (!(std::fabs(factor - want_factor) <= 1e-5 * std::fabs(want_factor)) && !(want_factor == 0 && factor == 0.f))
    add("normalizer", factor, want_factor);
  if (!(std::fabs(out - want_out) <= 1e-5 * std::max(mag / std::max(L, 1e-300), 1e-30))) add("out", out, want_out);
  return err;
}

TEST(OnlineSoftmax, StreamingMatchesDirect) {
  int failures = 0;
  for (uint32_t seed = 1; seed <= 3000; ++seed) {
    std::mt19937 rng(seed);
    auto ui = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto uf = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
    StreamCase c;
    const int n = ui(0, 5) == 0 ? ui(0, 3) : ui(1, 300);
    const float spread = ui(0, 1) ? 4.f : 40.f;
    const float center = uf(-100.f, 100.f);
    c.x.resize(static_cast<size_t>(n));
    c.v.resize(static_cast<size_t>(n));
    for (int e = 0; e < n; ++e) {
      c.x[static_cast<size_t>(e)] = center + uf(-spread, spread);
      c.v[static_cast<size_t>(e)] = uf(0.5f, 2.f) * (ui(0, 1) ? 1.f : -1.f);
    }
    // Random chunks; some fully masked (every score -inf), some with a few masked scores.
    c.cuts.push_back(0);
    while (c.cuts.back() < n) c.cuts.push_back(std::min(n, c.cuts.back() + ui(1, 70)));
    if (c.cuts.size() == 1) c.cuts.push_back(0);  // one empty chunk for n == 0
    for (size_t k = 0; k + 1 < c.cuts.size(); ++k) {
      const int kind = ui(0, 5);
      for (int e = c.cuts[k]; e < c.cuts[k + 1]; ++e)
        if (kind == 0 || (kind == 1 && ui(0, 3) == 0)) c.x[static_cast<size_t>(e)] = kNegInf;
    }
    if (ui(0, 7) == 0)  // a whole row masked
      for (float& x : c.x) x = kNegInf;
    switch (ui(0, 3)) {
      case 0: c.sink2 = kNegInf; break;
      case 1: c.sink2 = center + uf(-spread, spread); break;
      case 2: c.sink2 = center + spread + uf(1.f, 20.f); break;  // the sink dominates
      default: c.sink2 = center - spread - uf(1.f, 60.f); break;
    }
    const std::string err = run_stream(c);
    if (!err.empty() && ++failures <= 10)
      ADD_FAILURE() << "seed=" << seed << " n=" << n << " chunks=" << c.cuts.size() - 1 << " sink2=" << c.sink2 << ": "
                    << err;
  }
  EXPECT_EQ(failures, 0);
}

TEST(OnlineSoftmax, EmptyRowsAndSinkOnly) {
  float lse2 = 123.f;
  // No key, no sink: lse -inf, factor 0.
  EXPECT_EQ(hipattn::finalize_with_sink(kNegInf, 0.f, kNegInf, lse2, exp2_fn, log2_fn), 0.f);
  EXPECT_EQ(lse2, kNegInf);
  // No key, a sink: lse = sink, factor 0 (the output stays 0).
  lse2 = 123.f;
  EXPECT_EQ(hipattn::finalize_with_sink(kNegInf, 0.f, 2.5f, lse2, exp2_fn, log2_fn), 0.f);
  EXPECT_FLOAT_EQ(lse2, 2.5f);
  // Combining two empty states keeps the state empty and the factors finite (0, never NaN).
  hipattn::SoftmaxStat st;
  float fs = -1.f, fo = -1.f;
  st.combine(kNegInf, 0.f, fs, fo, exp2_fn);
  EXPECT_EQ(st.m, kNegInf);
  EXPECT_EQ(st.l, 0.f);
  EXPECT_FALSE(std::isnan(fs));
  EXPECT_FALSE(std::isnan(fo));
  EXPECT_EQ(st.lse2(log2_fn), kNegInf);
  // One key x = 3 (l = 1) and a sink at 3: denominator 2 (the sink counted once), lse2 = 4, factor 1/2.
  lse2 = 0.f;
  EXPECT_FLOAT_EQ(hipattn::finalize_with_sink(3.f, 1.f, 3.f, lse2, exp2_fn, log2_fn), 0.5f);
  EXPECT_FLOAT_EQ(lse2, 4.f);
  // Keys {0, 1} (m = 1, l = 1.5) and a sink at 2: M = 2, L = 0.25 + 0.5 + 1 = 1.75; factor = 2^-1 / 1.75.
  EXPECT_FLOAT_EQ(hipattn::finalize_with_sink(1.f, 1.5f, 2.f, lse2, exp2_fn, log2_fn), 0.5f / 1.75f);
  EXPECT_NEAR(lse2, 2.0 + std::log2(1.75), 1e-6);
}

}  // namespace
