// tests/host/test_reference_merge.cpp: the float64 merge of partial attention states (reference/merge.hpp):
// split KV ranges merged back, the formula by hand with the sink counted once, empty partitions.
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
// merge of partial states
// ---------------------------------------------------------------------------------------------

TEST(ReferenceMerge, TwoHalvesOfTheKvRangeEqualTheWhole) {
  for (uint32_t seed : {201u, 202u, 203u}) {
    SCOPED_TRACE(trace(seed));
    Spec s;
    s.q_lens = {3, 1, 4};
    s.kv_lens = {20, 13, 4};
    s.nqh = 4;
    s.nkvh = 2;
    s.hs = 16;
    s.bs = seed == 202u ? 1 : 5;
    Problem P(s, seed);
    P.enable_sinks();
    P.enable_alibi();
    P.enable_qq_bias(4);
    P.p.softcap = seed == 203u ? 0.f : 5.f;
    P.p.window_left = seed == 201u ? 9 : -1;
    const ref::AttentionResult whole = ref::unified_attention(P.p);
    expect_result(whole, direct(P), kTol, "whole vs direct");
    std::vector<int> cuts = {0, 1, 20};
    for (int n = 0; n < 12; ++n) cuts.push_back(std::uniform_int_distribution<int>(0, 20)(P.rng));
    for (int c : cuts) {
      SCOPED_TRACE("cut=" + std::to_string(c));
      const std::vector<ref::AttentionResult> parts = {ref::unified_attention_range(P.p, 0, c),
                                                       ref::unified_attention_range(P.p, c, 20)};
      expect_result(parts[0], direct(P, 0, c, false), kTol, "range [0, c) vs direct");
      const ref::AttentionResult merged = ref::merge_results(parts, P.T, s.nqh, s.hs, P.p.sinks);
      expect_result(merged, whole, kTol, "merged halves");
    }
    // three random pieces
    for (int n = 0; n < 6; ++n) {
      int a = std::uniform_int_distribution<int>(0, 20)(P.rng), b = std::uniform_int_distribution<int>(0, 20)(P.rng);
      if (a > b) std::swap(a, b);
      SCOPED_TRACE("cuts=" + std::to_string(a) + "," + std::to_string(b));
      const std::vector<ref::AttentionResult> parts = {ref::unified_attention_range(P.p, 0, a),
                                                       ref::unified_attention_range(P.p, a, b),
                                                       ref::unified_attention_range(P.p, b, 20)};
      expect_result(ref::merge_results(parts, P.T, s.nqh, s.hs, P.p.sinks), whole, kTol, "merged thirds");
    }
  }
}

TEST(ReferenceMerge, FormulaByHandWithTheSinkOnce) {
  std::mt19937 g(211);
  SCOPED_TRACE(trace(211));
  ref::PartialState a{{}, 0.4}, b{{}, -1.3};
  for (int d = 0; d < 6; ++d) {
    a.o.push_back(uniform(g, -2, 2));
    b.o.push_back(uniform(g, -2, 2));
  }
  const double sink = 0.2;
  const std::vector<ref::PartialState> parts = {a, b};
  std::vector<double> o;
  double lse = 0;
  ref::merge_states(parts, o, lse, sink);
  const double ea = std::exp(0.4), eb = std::exp(-1.3), es = std::exp(0.2);
  ASSERT_EQ(o.size(), 6u);
  EXPECT_NEAR(lse, std::log(ea + eb + es), 1e-14);
  for (int d = 0; d < 6; ++d) EXPECT_NEAR(o[size_t(d)], (ea * a.o[size_t(d)] + eb * b.o[size_t(d)]) / (ea + eb + es), 1e-14);
  // without a sink
  ref::merge_states(parts, o, lse);
  EXPECT_NEAR(lse, std::log(ea + eb), 1e-14);
  for (int d = 0; d < 6; ++d) EXPECT_NEAR(o[size_t(d)], (ea * a.o[size_t(d)] + eb * b.o[size_t(d)]) / (ea + eb), 1e-14);
}

TEST(ReferenceMerge, EmptyPartitionIsIgnored) {
  std::mt19937 g(221);
  SCOPED_TRACE(trace(221));
  ref::PartialState a{{}, 0.3};
  ref::PartialState empty{std::vector<double>(5, std::nan("")), -kInf};  // its o must never be read
  for (int d = 0; d < 5; ++d) a.o.push_back(uniform(g, -2, 2));
  for (const auto& parts : {std::vector<ref::PartialState>{a, empty}, std::vector<ref::PartialState>{empty, a},
                            std::vector<ref::PartialState>{empty, a, empty}}) {
    std::vector<double> o;
    double lse = 0;
    ref::merge_states(parts, o, lse);
    EXPECT_EQ(lse, 0.3);
    EXPECT_EQ(o, a.o);
  }
  // a KV range past every key gives an all-empty partial state, and merging it changes nothing
  Spec s;
  s.q_lens = {2, 1};
  s.kv_lens = {6, 3};
  Problem P(s, 222);
  P.enable_sinks();
  const ref::AttentionResult past = ref::unified_attention_range(P.p, 6, 50);
  for (double x : past.lse) EXPECT_EQ(x, -kInf);
  for (double x : past.out) EXPECT_EQ(x, 0.0);
  const ref::AttentionResult whole = ref::unified_attention(P.p);
  const std::vector<ref::AttentionResult> parts = {past, ref::unified_attention_range(P.p, 0, 6), past};
  expect_result(ref::merge_results(parts, P.T, 2, 16, P.p.sinks), whole, kTol, "with empty parts");
}

TEST(ReferenceMerge, AllEmptyGivesZerosAndMinusInfinity) {
  const ref::PartialState e1{{1.0, std::nan(""), 3.0}, -kInf}, e2{{4.0, 5.0, kInf}, -kInf};
  const std::vector<ref::PartialState> parts = {e1, e2};
  std::vector<double> o;
  double lse = 0;
  ref::merge_states(parts, o, lse);
  EXPECT_EQ(lse, -kInf);
  EXPECT_EQ(o, std::vector<double>(3, 0.0));
  ref::merge_states(parts, o, lse, 0.7);  // with a sink: output 0, lse = sink
  EXPECT_EQ(lse, 0.7);
  EXPECT_EQ(o, std::vector<double>(3, 0.0));
  std::vector<double> o2(4, 9.0);  // no parts at all: keeps its size, zero-filled
  ref::merge_states({}, o2, lse);
  EXPECT_EQ(lse, -kInf);
  EXPECT_EQ(o2, std::vector<double>(4, 0.0));
}

}  // namespace
