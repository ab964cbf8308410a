// tests/host/test_reference_unified.cpp: the float64 unified-attention reference against formulas
// written out in the tests: basic identities, masks, heads and layouts, output writing, random
// problems, and NaN / Inf where no visible key lives.
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
// basic identities
// ---------------------------------------------------------------------------------------------

TEST(ReferenceUnified, OneKeyGivesItsValueRowAndItsLogit) {
  for (uint32_t seed : {11u, 12u}) {
    SCOPED_TRACE(trace(seed));
    Spec s;
    s.q_lens = {1, 1, 1};
    s.kv_lens = {1, 1, 1};
    s.nqh = 4;
    s.nkvh = 2;
    s.hs = 64;
    s.bs = seed == 11u ? 1 : 5;
    Problem P(s, seed);
    const ref::AttentionResult r = ref::unified_attention(P.p);
    for (int t = 0; t < P.T; ++t)
      for (int h = 0; h < s.nqh; ++h) {
        const int kvh = h / 2;
        double dot = 0.0;
        for (int d = 0; d < s.hs; ++d) {
          dot += P.qv(t, h, d) * P.kv(false, t, 0, kvh, d);
          EXPECT_EQ(r.out[size_t((t * s.nqh + h) * s.hs + d)], P.kv(true, t, 0, kvh, d)) << "t=" << t << " h=" << h;
        }
        EXPECT_NEAR(r.lse[size_t(h * P.T + t)], double(P.p.scale) * dot, 1e-13);
      }
  }
}

TEST(ReferenceUnified, EqualScoresGiveTheMeanOfV) {
  const uint32_t seed = 21;
  SCOPED_TRACE(trace(seed));
  Spec s;
  s.q_lens = {1};
  s.kv_lens = {7};
  s.nqh = 2;
  s.hs = 32;
  s.bs = 3;
  Problem P(s, seed);
  for (int j = 1; j < 7; ++j)  // every K row equal to row 0
    for (int d = 0; d < s.hs; ++d)
      P.set_code(false, 0, j, 0, d, P.kb.bits(size_t(P.cache_index(0, 0, 0, d))), P.kv(false, 0, 0, 0, d));
  const ref::AttentionResult r = ref::unified_attention(P.p);
  for (int h = 0; h < 2; ++h) {
    double dot = 0.0;
    for (int d = 0; d < s.hs; ++d) dot += P.qv(0, h, d) * P.kv(false, 0, 0, 0, d);
    EXPECT_NEAR(r.lse[size_t(h)], double(P.p.scale) * dot + std::log(7.0), 1e-12);
    for (int d = 0; d < s.hs; ++d) {
      double mean = 0.0;
      for (int j = 0; j < 7; ++j) mean += P.kv(true, 0, j, 0, d);
      mean /= 7.0;
      EXPECT_NEAR(r.out[size_t(h * s.hs + d)], mean, 1e-13) << "h=" << h << " d=" << d;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// masks
// ---------------------------------------------------------------------------------------------

TEST(ReferenceUnified, CausalMasksExactlyTheBottomRightTriangle) {
  const uint32_t seed = 31;
  SCOPED_TRACE(trace(seed));
  Spec s;
  s.q_lens = {4, 3, 5, 1};
  s.kv_lens = {9, 3, 12, 6};
  s.nqh = 2;
  s.hs = 16;
  s.bs = 4;
  Problem P(s, seed);
  check_dependencies(
      P,
      [&](int b, int i, int j, int) {
        const int ctx = P.kv_lens[size_t(b)] - s.q_lens[size_t(b)];
        return j <= ctx + i;
      },
      "causal");
  expect_result(ref::unified_attention(P.p), direct(P), kTol, "causal vs direct");

  P.p.causal = false;  // every query sees all kv_len keys of its sequence
  check_dependencies(P, [](int, int, int, int) { return true; }, "non-causal");
  expect_result(ref::unified_attention(P.p), direct(P), kTol, "non-causal vs direct");
}

TEST(ReferenceUnified, SlidingWindowEdges) {
  const uint32_t seed = 41;
  SCOPED_TRACE(trace(seed));
  Spec s;
  s.q_lens = {4, 2};
  s.kv_lens = {10, 7};
  s.nqh = 2;
  s.hs = 16;
  s.bs = 3;
  Problem P(s, seed);
  for (int wl : {3, 0}) {
    for (bool causal : {true, false}) {
      P.p.window_left = wl;
      P.p.causal = causal;
      const std::string what = "window_left=" + std::to_string(wl) + (causal ? " causal" : " non-causal");
      // key pos - wl is visible, pos - wl - 1 is not; causal also hides j > pos
      check_dependencies(
          P,
          [&](int b, int i, int j, int) {
            const int pos = P.kv_lens[size_t(b)] - s.q_lens[size_t(b)] + i;
            return j >= pos - wl && (!causal || j <= pos);
          },
          what);
      expect_result(ref::unified_attention(P.p), direct(P), kTol, what + " vs direct");
    }
  }
  // the two edge keys explicitly, for the last query of sequence 0 (pos 9, window 3)
  P.p.window_left = 3;
  P.p.causal = true;
  const ref::AttentionResult base = ref::unified_attention(P.p);
  const int t = 3, pos = 9;
  EXPECT_TRUE(moved_by_key(P, 0, pos - 3, -1, base)[size_t(t * 2)]);
  EXPECT_FALSE(moved_by_key(P, 0, pos - 4, -1, base)[size_t(t * 2)]);
}

// ---------------------------------------------------------------------------------------------
// heads, layouts, output writing
// ---------------------------------------------------------------------------------------------

TEST(ReferenceUnified, GqaQueryHeadUsesKvHeadHOverGroup) {
  uint32_t seed = 300;
  for (auto [nqh, nkvh] : {std::pair{6, 2}, std::pair{4, 1}, std::pair{3, 3}}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + " heads " + std::to_string(nqh) + "/" + std::to_string(nkvh));
    Spec s;
    s.q_lens = {2, 1};
    s.kv_lens = {5, 3};
    s.nqh = nqh;
    s.nkvh = nkvh;
    s.hs = 8;
    s.bs = 2;
    Problem P(s, seed);
    check_dependencies(
        P,
        [&](int b, int i, int j, int) { return j <= P.kv_lens[size_t(b)] - s.q_lens[size_t(b)] + i; },
        "gqa");  // check_dependencies itself requires h / group == the perturbed kv head
    expect_result(ref::unified_attention(P.p), direct(P), kTol, "gqa vs direct");
  }
}

TEST(ReferenceUnified, NhdAndHndStridesGiveTheSameResult) {
  for (uint32_t seed : {311u, 312u}) {
    SCOPED_TRACE(trace(seed));
    Spec s;
    s.q_lens = {3, 2};
    s.kv_lens = {11, 7};
    s.nqh = 4;
    s.nkvh = 2;
    s.hs = 16;
    s.bs = 4;
    s.kv_dtype = seed == 312u ? DType::fp8_e4m3fnuz : DType::f16;
    s.scale_mode = KvScaleMode::per_token_head;
    Problem nhd(s, seed);
    s.hnd = true;
    Problem hnd(s, seed);
    s.head_pad = 2;
    s.block_pad = 7;
    Problem hnd_padded(s, seed);
    const ref::AttentionResult a = ref::unified_attention(nhd.p);
    EXPECT_NE(nhd.p.k_stride_head, hnd.p.k_stride_head);
    EXPECT_EQ(a.out, ref::unified_attention(hnd.p).out);
    EXPECT_EQ(a.lse, ref::unified_attention(hnd.p).lse);
    EXPECT_EQ(a.out, ref::unified_attention(hnd_padded.p).out);
    EXPECT_EQ(a.lse, ref::unified_attention(hnd_padded.p).lse);
    expect_result(a, direct(nhd), kTol, "nhd vs direct");
  }
}

TEST(ReferenceUnified, WritesFp16AndBf16OutputsAndLse) {
  uint32_t seed = 320;
  for (DType dt : {DType::f16, DType::bf16}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + " " + std::string(hipattn::dtype_name(dt)));
    Spec s;
    s.q_lens = {2, 1};
    s.kv_lens = {5, 0};  // the second query sees nothing: out 0, lse -inf
    s.nqh = 2;
    s.hs = 16;
    s.q_dtype = dt;
    s.kv_dtype = dt;
    Problem P(s, seed);
    const int64_t ost_h = 16 + 2, ost_t = 2 * ost_h + 1, lst = P.T + 3;
    const uint32_t sentinel = 0x1234u;
    Buffer out(dt, size_t(P.T * ost_t));
    for (size_t i = 0; i < out.size(); ++i) out.set_bits(i, sentinel);
    std::vector<float> lse(size_t(2 * lst), 12345.f);
    P.p.out = out.data();
    P.p.o_stride_token = ost_t;
    P.p.o_stride_head = ost_h;
    P.p.lse = lse.data();
    P.p.lse_stride_head = lst;
    const ref::AttentionResult r = ref::unified_attention(P.p);
    ref::write_outputs(r, P.p);
    const double rel = dt == DType::f16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);  // half an ulp
    std::vector<char> written(out.size(), 0);
    for (int t = 0; t < P.T; ++t)
      for (int h = 0; h < 2; ++h) {
        for (int d = 0; d < 16; ++d) {
          const size_t oi = size_t(t * ost_t + h * ost_h + d);
          written[oi] = 1;
          const double x = r.out[size_t((t * 2 + h) * 16 + d)];
          EXPECT_EQ(out.bits(oi), encode(dt, float(x))) << "t=" << t << " h=" << h << " d=" << d;
          EXPECT_LE(std::abs(decode(dt, out.bits(oi)) - x), rel * std::abs(x) + 1e-30);
        }
        EXPECT_EQ(lse[size_t(h * lst + t)], float(r.lse[size_t(h * P.T + t)]));
      }
    for (int h = 0; h < 2; ++h) EXPECT_EQ(lse[size_t(h * lst + 2)], -std::numeric_limits<float>::infinity());
    for (size_t i = 0; i < out.size(); ++i)
      if (!written[i]) {
        EXPECT_EQ(out.bits(i), sentinel) << "padding element " << i << " overwritten";
      }
    for (int h = 0; h < 2; ++h)
      for (int64_t t = P.T; t < lst; ++t) EXPECT_EQ(lse[size_t(h * lst + t)], 12345.f);
  }
}

TEST(ReferenceUnified, RandomProblemsWithEveryFeatureMatchTheDirectFormula) {
  for (uint32_t seed = 401; seed <= 408; ++seed) {
    std::mt19937 g(seed);
    SCOPED_TRACE(trace(seed));
    Spec s;
    const int B = std::uniform_int_distribution<int>(1, 4)(g);
    s.q_lens.clear();
    s.kv_lens.clear();
    for (int b = 0; b < B; ++b) {
      const int ql = std::uniform_int_distribution<int>(1, 5)(g);
      s.q_lens.push_back(ql);
      s.kv_lens.push_back(ql + std::uniform_int_distribution<int>(0, 17)(g));
    }
    const int groups[] = {1, 2, 4};
    s.nkvh = std::uniform_int_distribution<int>(1, 2)(g);
    s.nqh = s.nkvh * groups[std::uniform_int_distribution<int>(0, 2)(g)];
    s.hs = seed % 2 ? 24 : 32;
    const int block_sizes[] = {1, 3, 16};
    s.bs = block_sizes[seed % 3];
    const DType kvs[] = {DType::f16, DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz};
    s.kv_dtype = kvs[seed % 4];
    s.q_dtype = s.kv_dtype == DType::bf16 ? DType::bf16 : DType::f16;
    s.scale_mode = seed % 2 ? KvScaleMode::per_tensor : KvScaleMode::per_token_head;
    s.hnd = seed % 3 == 0;
    Problem P(s, seed);
    P.p.causal = seed != 405;
    P.p.window_left = seed % 4 == 1 ? 4 : -1;
    P.p.softcap = seed % 3 == 1 ? 3.f : 0.f;
    if (seed % 2) P.enable_sinks();
    if (seed % 3 != 2) P.enable_alibi();
    if (seed % 4 != 3) P.enable_qq_bias(P.p.max_seqlen_q);
    const ref::AttentionResult r = ref::unified_attention(P.p);
    expect_all_finite(r, "random");
    expect_result(r, direct(P), kTol, "random vs direct");
  }
}

// ---------------------------------------------------------------------------------------------
// poison: NaN / Inf where no visible key lives
// ---------------------------------------------------------------------------------------------

TEST(ReferenceUnified, NanAndInfOutsideTheVisibleKeysNeverPoison) {
  uint32_t seed = 100;
  for (DType kv : {DType::f16, DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + " kv=" + std::string(hipattn::dtype_name(kv)));
    Spec s;
    s.q_lens = {2, 3, 1};
    s.kv_lens = {12, 6, 5};  // 12 and 5 leave slots past kv_len in the last block (bs 4); padded table columns
    s.nqh = 4;
    s.nkvh = 2;
    s.hs = 16;
    s.bs = 4;
    s.kv_dtype = kv;
    s.scale_mode = KvScaleMode::per_token_head;  // unused scale entries are NaN too
    s.head_pad = 3;
    s.block_pad = 5;
    s.q_dtype = kv == DType::bf16 ? DType::bf16 : DType::f16;
    Problem P(s, seed);
    const ref::AttentionResult clean = ref::unified_attention(P.p);
    expect_all_finite(clean, "NaN in unused storage");
    expect_result(clean, direct(P), kTol, "unused storage");

    // window-masked keys of sequence 0 (pos 10, 11; window 2 -> keys < 8 masked for both): NaN and Inf
    P.p.window_left = 2;
    const ref::AttentionResult w0 = ref::unified_attention(P.p);
    for (int j = 0; j < 8; ++j)
      for (int kvh = 0; kvh < 2; ++kvh)
        for (int d = 0; d < 16; ++d) {
          P.poison(false, 0, j, kvh, d, (j + d) % 2 == 0);
          P.poison(true, 0, j, kvh, d, (j + d) % 2 == 1);
        }
    const ref::AttentionResult w1 = ref::unified_attention(P.p);
    expect_all_finite(w1, "window-masked poison");
    expect_result(w1, w0, 0.0, "window-masked poison changes nothing");
    P.p.window_left = -1;

    // causal-future key 5 of sequence 1 (kv 6, q 3: positions 3, 4, 5): V NaN -> queries 0, 1 unchanged,
    // query 2 (which sees key 5) becomes NaN, which proves the poison is really there
    for (int kvh = 0; kvh < 2; ++kvh)
      for (int d = 0; d < 16; ++d) P.poison(true, 1, 5, kvh, d, true);
    const ref::AttentionResult c1 = ref::unified_attention(P.p);
    for (int i = 0; i < 3; ++i)
      for (int h = 0; h < 4; ++h) {
        const int t = 2 + i;
        for (int d = 0; d < 16; ++d) {
          const size_t oi = size_t((t * 4 + h) * 16 + d);
          if (i < 2) {
            EXPECT_EQ(c1.out[oi], clean.out[oi]) << "i=" << i << " h=" << h << " d=" << d;
          } else {
            EXPECT_TRUE(std::isnan(c1.out[oi])) << "query 2 sees key 5";
          }
        }
      }
  }
}

}  // namespace
