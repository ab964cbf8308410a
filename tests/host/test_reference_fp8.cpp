// tests/host/test_reference_fp8.cpp: the float64 unified-attention reference on fp8 KV: known codes decoded by
// hand, per-tensor and per-token-head scales.
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
// fp8 KV
// ---------------------------------------------------------------------------------------------

void check_fp8_known_codes(DType kv, KvScaleMode mode, uint32_t seed) {
  SCOPED_TRACE(trace(seed) + " " + std::string(hipattn::dtype_name(kv)) + (mode == KvScaleMode::per_tensor ? " per_tensor" : " per_token_head"));
  const CodeTable& table = kv == DType::fp8_e4m3fn ? kFnCodes : kFnuzCodes;
  // the hand-decoded table agrees with the type (a sanity check of the test itself)
  for (const auto& [code, value] : table) ASSERT_EQ(decode(kv, code), value) << "code " << int(code);
  Spec s;
  s.q_lens = {2, 1};
  s.kv_lens = {9, 1};
  s.nqh = 4;
  s.nkvh = 2;
  s.hs = 32;
  s.bs = 4;
  s.kv_dtype = kv;
  s.scale_mode = mode;
  s.fp8_codes = &table;
  s.hnd = mode == KvScaleMode::per_token_head;
  Problem P(s, seed);
  expect_result(ref::unified_attention(P.p), direct(P), kTol, "fp8 vs direct");
  // sequence 1 has one key: its output is the V codes' values times the V scale, exactly
  const ref::AttentionResult r = ref::unified_attention(P.p);
  const int t = 2;
  for (int h = 0; h < 4; ++h) {
    const int kvh = h / 2;
    const double vsc = mode == KvScaleMode::per_tensor ? double(P.vscale[0]) : double(P.vscale[size_t(P.scale_index(1, 0, kvh))]);
    const double ksc = mode == KvScaleMode::per_tensor ? double(P.kscale[0]) : double(P.kscale[size_t(P.scale_index(1, 0, kvh))]);
    double dot = 0.0;
    for (int d = 0; d < 32; ++d) {
      const int64_t ci = P.cache_index(1, 0, kvh, d);
      double kval = 0, vval = 0;
      for (const auto& [code, value] : table) {
        if (code == P.kb.bits(size_t(ci))) kval = value;
        if (code == P.vb.bits(size_t(ci))) vval = value;
      }
      dot += P.qv(t, h, d) * kval * ksc;
      EXPECT_EQ(r.out[size_t((t * 4 + h) * 32 + d)], vval * vsc) << "h=" << h << " d=" << d;
    }
    EXPECT_NEAR(r.lse[size_t(h * P.T + t)], double(P.p.scale) * dot, 1e-13);
  }
}

TEST(ReferenceUnified, Fp8PerTensorScaleWithKnownCodes) {
  check_fp8_known_codes(DType::fp8_e4m3fn, KvScaleMode::per_tensor, 91);
  check_fp8_known_codes(DType::fp8_e4m3fnuz, KvScaleMode::per_tensor, 92);
}

TEST(ReferenceUnified, Fp8PerTokenHeadScaleWithKnownCodes) {
  check_fp8_known_codes(DType::fp8_e4m3fn, KvScaleMode::per_token_head, 93);
  check_fp8_known_codes(DType::fp8_e4m3fnuz, KvScaleMode::per_token_head, 94);
}

TEST(ReferenceUnified, Fp8PerTokenHeadScalesAreReadPerSlotAndHead) {
  // swap the scales of two (slot, head) entries: the result must follow the scale, not the position
  const uint32_t seed = 95;
  SCOPED_TRACE(trace(seed));
  Spec s;
  s.q_lens = {1};
  s.kv_lens = {2};
  s.nqh = 2;
  s.nkvh = 2;
  s.hs = 16;
  s.bs = 2;
  s.kv_dtype = DType::fp8_e4m3fn;
  s.scale_mode = KvScaleMode::per_token_head;
  s.fp8_codes = &kFnCodes;
  Problem P(s, seed);
  const ref::AttentionResult r0 = ref::unified_attention(P.p);
  expect_result(r0, direct(P), kTol, "per-token-head vs direct");
  // key 1, kv head 1: double its V scale -> the logical V doubles, only q head 1 moves
  const size_t si = size_t(P.scale_index(0, 1, 1));
  P.vscale[si] *= 2.f;
  for (int d = 0; d < 16; ++d) P.v[0][P.logical_index(1, 1, d)] *= 2.0;
  const ref::AttentionResult r1 = ref::unified_attention(P.p);
  expect_result(r1, direct(P), kTol, "after the scale change");
  for (int d = 0; d < 16; ++d) {
    EXPECT_EQ(r1.out[size_t(d)], r0.out[size_t(d)]);               // head 0 (kv head 0) unchanged
    EXPECT_NE(r1.out[size_t(16 + d)], r0.out[size_t(16 + d)]);     // head 1 changed
  }
}

}  // namespace
