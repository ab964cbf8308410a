// tests/host/test_validate.cpp: host validation of UnifiedAttentionParams (dispatch/validate.hpp), one test per rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hipattn/dispatch/validate.hpp"

namespace {

using hipattn::DType;
using hipattn::ErrorCode;
using hipattn::HostSequenceInfo;
using hipattn::KvScaleMode;
using hipattn::Status;
using hipattn::UnifiedAttentionParams;
using hipattn::validate;

// A fake device address (never dereferenced by validate).
template <class T>
T* fake(uintptr_t a) {
  return reinterpret_cast<T*>(a);
}

// The shape knobs of a test problem; everything else follows from them.
struct Shape {
  int32_t num_q_heads = 8, num_kv_heads = 2, head_size = 128;
  int32_t block_size = 16, num_blocks = 8;
};

// A valid problem: 3 sequences, q lengths {5, 1, 7} (13 tokens), kv lengths {20, 9, 7}; q contiguous,
// out padded (head stride head_size + 8, token stride 8 * that), K NHD, V HND; fp16.
struct Problem {
  std::vector<int32_t> cu{0, 5, 6, 13};
  std::vector<int32_t> kv{20, 9, 7};
  // rows of block_table_stride 3, max_blocks_per_seq 2; used: seq 0 -> {3, 5}, seq 1 -> {0}, seq 2 -> {7}.
  std::vector<int32_t> bt{3, 5, -1, 0, -1, -1, 7, -1, -1};
  UnifiedAttentionParams p;

  explicit Problem(const Shape& s = Shape{}) {
    p.q = fake<const void>(0x10000);
    p.q_dtype = DType::f16;
    p.q_stride_head = s.head_size;
    p.q_stride_token = int64_t(s.num_q_heads) * s.head_size;

    p.k_cache = fake<const void>(0x200000);
    p.v_cache = fake<const void>(0x400000);
    p.kv_dtype = DType::f16;
    const auto nhd = hipattn::nhd_strides(s.block_size, s.num_kv_heads, s.head_size);
    const auto hnd = hipattn::hnd_strides(s.block_size, s.num_kv_heads, s.head_size);
    p.k_stride_block = nhd.block, p.k_stride_slot = nhd.slot, p.k_stride_head = nhd.head;
    p.v_stride_block = hnd.block, p.v_stride_slot = hnd.slot, p.v_stride_head = hnd.head;
    p.num_blocks = s.num_blocks;
    p.block_size = s.block_size;

    p.kv_scale_mode = KvScaleMode::none;
    p.block_table = fake<const int32_t>(0x600000);
    p.block_table_stride = 3;
    p.max_blocks_per_seq = 2;
    p.cu_seqlens_q = fake<const int32_t>(0x610000);
    p.seq_lens_k = fake<const int32_t>(0x620000);
    p.num_seqs = 3;
    p.num_tokens = 13;
    p.max_seqlen_q = 7;
    p.max_seqlen_k = 20;

    p.num_q_heads = s.num_q_heads;
    p.num_kv_heads = s.num_kv_heads;
    p.head_size = s.head_size;

    p.scale = 1.f / std::sqrt(float(s.head_size));
    p.causal = true;
    p.window_left = -1;
    p.softcap = 0.f;
    p.sinks = fake<const float>(0x630000);
    p.alibi_slopes = fake<const float>(0x640000);
    p.qq_bias = fake<const float>(0x650000);
    p.qq_bias_stride = 7;

    p.out = fake<void>(0x700000);
    p.o_stride_head = s.head_size + 8;
    p.o_stride_token = int64_t(s.num_q_heads) * (s.head_size + 8);
    p.lse = fake<float>(0x800000);
    p.lse_stride_head = 16;
  }
  HostSequenceInfo host() const { return HostSequenceInfo{cu, kv, bt}; }
  // Make this an fp8 problem with per-tensor scales.
  void make_fp8(DType d = DType::fp8_e4m3fn) {
    p.kv_dtype = d;
    p.kv_scale_mode = KvScaleMode::per_tensor;
    p.k_scale = fake<const float>(0x900000);
    p.v_scale = fake<const float>(0x900010);
  }
};

// The failure `s` must have code `code`, field `field`, and a message containing every `parts` entry.
void expect_fail(const Status& s, ErrorCode code, const std::string& field, const std::vector<std::string>& parts) {
  EXPECT_FALSE(s.ok()) << "expected a failure on " << field;
  EXPECT_EQ(s.code, code) << "field " << s.field << ": " << s.message;
  EXPECT_EQ(s.field, field) << s.message;
  for (const std::string& part : parts)
    EXPECT_NE(s.message.find(part), std::string::npos) << "message \"" << s.message << "\" lacks \"" << part << "\"";
}
void expect_invalid(const Status& s, const std::string& field, const std::vector<std::string>& parts) {
  expect_fail(s, ErrorCode::invalid_argument, field, parts);
}
void expect_ok(const Status& s) { EXPECT_TRUE(s.ok()) << s.field << ": " << s.message; }

// ---------------------------------------------------------------------------------------------------
// Status / throw_if_error / limits

TEST(Validate, StatusAndThrow) {
  const Status ok = Status::success();
  EXPECT_TRUE(ok.ok());
  EXPECT_NO_THROW(hipattn::throw_if_error(ok));
  Problem t;
  t.p.num_kv_heads = 5;
  t.p.num_q_heads = 12;
  const Status s = validate(t.p);
  ASSERT_FALSE(s.ok());
  try {
    hipattn::throw_if_error(s);
    FAIL() << "throw_if_error did not throw";
  } catch (const hipattn::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(e.field(), "num_kv_heads");
    EXPECT_NE(std::string(e.what()).find("num_q_heads (12) is not a multiple of num_kv_heads (5)"), std::string::npos)
        << e.what();
  }
}

TEST(Validate, Limits) {
  static_assert(hipattn::ValidationLimits::vector_align_bytes == 16);
  static_assert(hipattn::ValidationLimits::max_32bit_extent_bytes == 2147483648LL);
  const std::set<int32_t> supported{64, 128, 192, 256};
  for (int32_t d = -1; d <= 512; ++d)
    EXPECT_EQ(hipattn::ValidationLimits::head_size_supported(d), supported.count(d) == 1) << d;
}

// ---------------------------------------------------------------------------------------------------
// The baseline and the layouts that must pass

TEST(Validate, BaselineIsValid) {
  Problem t;
  expect_ok(validate(t.p));
  expect_ok(validate(t.p, t.host()));
  t.p.causal = false;
  expect_ok(validate(t.p, t.host()));
}

TEST(Validate, NhdAndHndLayoutsAreValidForEverySupportedShape) {
  for (int32_t d : {64, 128, 192, 256})
    for (int32_t kvh : {1, 2, 8})
      for (int32_t bs : {1, 16, 13, 64}) {
        Shape s;
        s.head_size = d, s.num_kv_heads = kvh, s.num_q_heads = kvh * 4, s.block_size = bs, s.num_blocks = 64;
        Problem t(s);
        t.p.max_blocks_per_seq = (20 + bs - 1) / bs;  // 20 = the longest kv length
        t.p.block_table_stride = t.p.max_blocks_per_seq + 1;
        for (bool k_nhd : {true, false})
          for (bool v_nhd : {true, false}) {
            const auto k = k_nhd ? hipattn::nhd_strides(bs, kvh, d) : hipattn::hnd_strides(bs, kvh, d);
            const auto v = v_nhd ? hipattn::nhd_strides(bs, kvh, d) : hipattn::hnd_strides(bs, kvh, d);
            t.p.k_stride_block = k.block, t.p.k_stride_slot = k.slot, t.p.k_stride_head = k.head;
            t.p.v_stride_block = v.block, t.p.v_stride_slot = v.slot, t.p.v_stride_head = v.head;
            SCOPED_TRACE("head_size " + std::to_string(d) + " kv_heads " + std::to_string(kvh) + " block_size " +
                         std::to_string(bs) + " k " + (k_nhd ? "NHD" : "HND") + " v " + (v_nhd ? "NHD" : "HND"));
            expect_ok(validate(t.p));
            t.make_fp8();  // fp8: 1-byte elements; every contiguous stride is still a 16-byte multiple
            expect_ok(validate(t.p));
            t.p.kv_dtype = DType::f16, t.p.kv_scale_mode = KvScaleMode::none;
          }
      }
}

TEST(Validate, AnyHeadRatioIsValid) {
  for (auto [qh, kvh] : {std::pair{64, 1}, {7, 7}, {48, 6}, {3, 1}}) {
    Shape s;
    s.num_q_heads = qh, s.num_kv_heads = kvh;
    Problem t(s);
    SCOPED_TRACE(std::to_string(qh) + "/" + std::to_string(kvh));
    expect_ok(validate(t.p));
  }
}

TEST(Validate, Bf16AndFp8PairsAreValid) {
  Problem t;
  t.p.q_dtype = DType::bf16, t.p.kv_dtype = DType::bf16;
  expect_ok(validate(t.p));
  for (DType kv : {DType::fp8_e4m3fn, DType::fp8_e4m3fnuz})
    for (DType q : {DType::f16, DType::bf16}) {
      Problem f;
      f.p.q_dtype = q;
      f.make_fp8(kv);
      expect_ok(validate(f.p));
    }
}

// ---------------------------------------------------------------------------------------------------
// Pointers

TEST(Validate, RequiredPointersNonNull) {
  struct Case {
    const char* name;
    void (*null_it)(UnifiedAttentionParams&);
  };
  const Case cases[] = {
      {"q", [](UnifiedAttentionParams& p) { p.q = nullptr; }},
      {"k_cache", [](UnifiedAttentionParams& p) { p.k_cache = nullptr; }},
      {"v_cache", [](UnifiedAttentionParams& p) { p.v_cache = nullptr; }},
      {"block_table", [](UnifiedAttentionParams& p) { p.block_table = nullptr; }},
      {"cu_seqlens_q", [](UnifiedAttentionParams& p) { p.cu_seqlens_q = nullptr; }},
      {"seq_lens_k", [](UnifiedAttentionParams& p) { p.seq_lens_k = nullptr; }},
      {"out", [](UnifiedAttentionParams& p) { p.out = nullptr; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Problem t;
    c.null_it(t.p);
    expect_invalid(validate(t.p), c.name, {std::string(c.name) + " (nullptr)"});
  }
}

TEST(Validate, OptionalPointersMayBeNull) {
  Problem t;
  t.p.sinks = nullptr, t.p.alibi_slopes = nullptr, t.p.qq_bias = nullptr, t.p.lse = nullptr;
  t.p.qq_bias_stride = 0, t.p.lse_stride_head = 0;  // unused without their tensors
  expect_ok(validate(t.p));
}

TEST(Validate, EmptyBatchIsANoOp) {
  Problem t;
  t.p.num_seqs = 0, t.p.num_tokens = 0, t.p.max_seqlen_q = 0, t.p.max_seqlen_k = 0;
  // Tensors with no element may be null.
  t.p.q = nullptr, t.p.out = nullptr, t.p.seq_lens_k = nullptr, t.p.block_table = nullptr;
  const std::vector<int32_t> cu{0};
  expect_ok(validate(t.p));
  expect_ok(validate(t.p, HostSequenceInfo{cu, {}, {}}));
  // Every other rule still applies.
  t.p.head_size = 96;
  expect_fail(validate(t.p), ErrorCode::unsupported, "head_size", {"96"});
  t.p.head_size = 128;
  t.p.cu_seqlens_q = nullptr;  // always has num_seqs + 1 entries
  expect_invalid(validate(t.p), "cu_seqlens_q", {"nullptr"});
}

TEST(Validate, FewTokensStillNeedSequencePointers) {
  // num_tokens == 0 with sequences: q / out may be null, seq_lens_k / block_table may not.
  Problem t;
  t.p.num_tokens = 0, t.p.max_seqlen_q = 0;
  t.p.q = nullptr, t.p.out = nullptr;
  expect_ok(validate(t.p));
  // q / out have no element: their strides address nothing (only the sign is checked).
  t.p.q_stride_head = 100, t.p.o_stride_head = 4;  // misaligned / overlapping if there were tokens
  expect_ok(validate(t.p));
  t.p.q_stride_head = -1;
  expect_invalid(validate(t.p), "q_stride_head", {"-1"});
  t.p.q_stride_head = 128;
  t.p.seq_lens_k = nullptr;
  expect_invalid(validate(t.p), "seq_lens_k", {"nullptr"});
}

TEST(Validate, VectorPointersAre16ByteAligned) {
  Problem t;
  t.p.q = fake<const void>(0x10008);
  expect_invalid(validate(t.p), "q", {"0x10008", "16-byte"});
  Problem k;
  k.p.k_cache = fake<const void>(0x200004);
  expect_invalid(validate(k.p), "k_cache", {"0x200004"});
  Problem v;
  v.p.v_cache = fake<const void>(0x400002);
  expect_invalid(validate(v.p), "v_cache", {"0x400002"});
  Problem o;
  o.p.out = fake<void>(0x70000c);
  expect_invalid(validate(o.p), "out", {"0x70000c"});
}

TEST(Validate, ScalarPointersAreNaturallyAligned) {
  Problem t;
  t.p.block_table = fake<const int32_t>(0x600002);
  expect_invalid(validate(t.p), "block_table", {"0x600002", "4-byte"});
  Problem l;
  l.p.lse = fake<float>(0x800001);
  expect_invalid(validate(l.p), "lse", {"0x800001"});
  Problem ok;  // 4-byte alignment suffices for them
  ok.p.sinks = fake<const float>(0x630004), ok.p.cu_seqlens_q = fake<const int32_t>(0x610004);
  expect_ok(validate(ok.p));
}

// ---------------------------------------------------------------------------------------------------
// Counts

TEST(Validate, NumSeqsNonNegative) {
  Problem t;
  t.p.num_seqs = -1;
  expect_invalid(validate(t.p), "num_seqs", {"-1"});
}

TEST(Validate, NoSequenceOnlyWithNoToken) {
  Problem t;
  t.p.num_seqs = 0;
  expect_invalid(validate(t.p), "num_seqs", {"num_tokens (13)"});
}

TEST(Validate, NumTokensNonNegative) {
  Problem t;
  t.p.num_tokens = -3;
  expect_invalid(validate(t.p), "num_tokens", {"-3"});
}

TEST(Validate, NumQHeadsPositive) {
  Problem t;
  t.p.num_q_heads = 0;
  expect_invalid(validate(t.p), "num_q_heads", {"num_q_heads (0)"});
}

TEST(Validate, NumKvHeadsPositive) {
  Problem t;
  t.p.num_kv_heads = -2;
  expect_invalid(validate(t.p), "num_kv_heads", {"num_kv_heads (-2)"});
}

TEST(Validate, QHeadsMultipleOfKvHeads) {
  Problem t;
  t.p.num_q_heads = 12, t.p.num_kv_heads = 5;
  const Status s = validate(t.p);
  expect_invalid(s, "num_kv_heads", {});
  EXPECT_EQ(s.message, "num_q_heads (12) is not a multiple of num_kv_heads (5)");
}

TEST(Validate, HeadSizeSupported) {
  for (int32_t d : {0, 32, 96, 100, 160, 512}) {
    Problem t;
    t.p.head_size = d;
    expect_fail(validate(t.p), ErrorCode::unsupported, "head_size", {"head_size (" + std::to_string(d) + ")"});
  }
}

// ---------------------------------------------------------------------------------------------------
// Dtypes

TEST(Validate, QDtypeIsF16OrBf16) {
  for (auto [d, name] : {std::pair{DType::f32, "fp32"}, {DType::fp8_e4m3fn, "fp8_e4m3fn"}, {DType::fp8_e4m3fnuz, "fp8_e4m3fnuz"}}) {
    Problem t;
    t.p.q_dtype = d, t.p.kv_dtype = d;
    expect_fail(validate(t.p), ErrorCode::unsupported, "q_dtype", {name});
  }
  Problem bad;
  bad.p.q_dtype = static_cast<DType>(9);
  expect_fail(validate(bad.p), ErrorCode::unsupported, "q_dtype", {"DType(9)"});
}

TEST(Validate, KvDtypeIsQDtypeOrFp8) {
  Problem t;
  t.p.kv_dtype = DType::bf16;  // q is fp16
  expect_fail(validate(t.p), ErrorCode::unsupported, "kv_dtype", {"kv_dtype (bf16)", "q_dtype (fp16)"});
  Problem f;
  f.p.kv_dtype = DType::f32;
  expect_fail(validate(f.p), ErrorCode::unsupported, "kv_dtype", {"fp32"});
}

// ---------------------------------------------------------------------------------------------------
// Paged cache and sequence bounds

TEST(Validate, BlockSizePositive) {
  Problem t;
  t.p.block_size = 0;
  expect_invalid(validate(t.p), "block_size", {"block_size (0)"});
}

TEST(Validate, NumBlocksPositive) {
  Problem t;
  t.p.num_blocks = 0;
  expect_invalid(validate(t.p), "num_blocks", {"num_blocks (0)"});
}

TEST(Validate, MaxBlocksPerSeqPositive) {
  Problem t;
  t.p.max_blocks_per_seq = 0, t.p.max_seqlen_k = 0, t.p.causal = false;
  expect_invalid(validate(t.p), "max_blocks_per_seq", {"max_blocks_per_seq (0)"});
}

TEST(Validate, MaxBlocksPerSeqCoversMaxSeqlenK) {
  Problem t;
  t.p.max_blocks_per_seq = 1;  // 1 * 16 < 20
  expect_invalid(validate(t.p), "max_blocks_per_seq", {"max_blocks_per_seq (1)", "block_size (16)", "max_seqlen_k (20)"});
  t.p.max_seqlen_k = 16, t.p.max_seqlen_q = 7;  // exactly one block
  expect_ok(validate(t.p));
}

TEST(Validate, BlockTableStrideCoversRow) {
  Problem t;
  t.p.block_table_stride = 1;
  expect_invalid(validate(t.p), "block_table_stride", {"block_table_stride (1)", "max_blocks_per_seq (2)"});
}

TEST(Validate, MaxSeqlenQNonNegative) {
  Problem t;
  t.p.max_seqlen_q = -1;
  expect_invalid(validate(t.p), "max_seqlen_q", {"max_seqlen_q (-1)"});
}

TEST(Validate, MaxSeqlenKNonNegative) {
  Problem t;
  t.p.max_seqlen_k = -4;
  expect_invalid(validate(t.p), "max_seqlen_k", {"max_seqlen_k (-4)"});
}

TEST(Validate, MaxSeqlenQAtMostNumTokens) {
  Problem t;
  t.p.max_seqlen_q = 14;
  expect_invalid(validate(t.p), "max_seqlen_q", {"max_seqlen_q (14)", "num_tokens (13)"});
  t.p.max_seqlen_q = 13;
  expect_ok(validate(t.p));
}

TEST(Validate, MaxSeqlenQAtLeastTheAverage) {
  Problem t;
  t.p.max_seqlen_q = 4;  // ceil(13 / 3) = 5
  expect_invalid(validate(t.p), "max_seqlen_q", {"max_seqlen_q (4)", "= 5"});
  t.p.max_seqlen_q = 5;
  expect_ok(validate(t.p));
}

TEST(Validate, CausalNeedsMaxSeqlenQAtMostMaxSeqlenK) {
  Problem t;
  t.p.max_seqlen_k = 6;  // < max_seqlen_q (7)
  expect_invalid(validate(t.p), "max_seqlen_q", {"causal", "max_seqlen_q (7)", "max_seqlen_k (6)"});
  t.p.causal = false;
  expect_ok(validate(t.p));
}

// ---------------------------------------------------------------------------------------------------
// Logits

TEST(Validate, ScaleFiniteAndPositive) {
  for (auto [v, text] : {std::pair{0.f, "0"}, {-0.5f, "-0.5"}, {std::numeric_limits<float>::infinity(), "inf"},
                         {std::numeric_limits<float>::quiet_NaN(), "nan"}}) {
    Problem t;
    t.p.scale = v;
    expect_invalid(validate(t.p), "scale", {std::string("scale (") + text});
  }
}

TEST(Validate, SoftcapFiniteAndNonNegative) {
  for (auto [v, text] : {std::pair{-1.f, "-1"}, {std::numeric_limits<float>::infinity(), "inf"},
                         {std::numeric_limits<float>::quiet_NaN(), "nan"}}) {
    Problem t;
    t.p.softcap = v;
    expect_invalid(validate(t.p), "softcap", {std::string("softcap (") + text});
  }
  Problem ok;
  ok.p.softcap = 30.f;
  expect_ok(validate(ok.p));
}

TEST(Validate, WindowLeftIsMinusOneOrNonNegative) {
  Problem t;
  t.p.window_left = -2;
  expect_invalid(validate(t.p), "window_left", {"window_left (-2)"});
  for (int32_t w : {-1, 0, 1, 127, 1 << 30}) {
    t.p.window_left = w;
    expect_ok(validate(t.p));
  }
}

// ---------------------------------------------------------------------------------------------------
// fp8 scales

TEST(Validate, Fp8NeedsAScaleMode) {
  Problem t;
  t.make_fp8();
  t.p.kv_scale_mode = KvScaleMode::none;
  expect_invalid(validate(t.p), "kv_scale_mode", {"none", "fp8_e4m3fn"});
}

TEST(Validate, Fp8NeedsKScale) {
  Problem t;
  t.make_fp8();
  t.p.k_scale = nullptr;
  expect_invalid(validate(t.p), "k_scale", {"k_scale (nullptr)", "fp8"});
}

TEST(Validate, Fp8NeedsVScale) {
  Problem t;
  t.make_fp8(DType::fp8_e4m3fnuz);
  t.p.v_scale = nullptr;
  expect_invalid(validate(t.p), "v_scale", {"v_scale (nullptr)"});
}

TEST(Validate, NonFp8KvHasNoScaleMode) {
  for (auto [m, name] : {std::pair{KvScaleMode::per_tensor, "per_tensor"}, {KvScaleMode::per_token_head, "per_token_head"}}) {
    Problem t;
    t.p.kv_scale_mode = m;
    t.p.k_scale = fake<const float>(0x900000), t.p.v_scale = fake<const float>(0x900010);
    expect_invalid(validate(t.p), "kv_scale_mode", {name, "fp16"});
  }
}

TEST(Validate, ScaleModeIsAKnownValue) {
  Problem t;
  t.make_fp8();
  t.p.kv_scale_mode = static_cast<KvScaleMode>(7);
  expect_invalid(validate(t.p), "kv_scale_mode", {"KvScaleMode(7)"});
}

// Per-token-head scales [num_blocks = 8, block_size = 16, num_kv_heads = 2].
Problem per_token_head_problem() {
  Problem t;
  t.make_fp8();
  t.p.kv_scale_mode = KvScaleMode::per_token_head;
  t.p.scale_stride_head = 1, t.p.scale_stride_slot = 2, t.p.scale_stride_block = 32;
  return t;
}

TEST(Validate, PerTokenHeadScaleStridesDoNotOverlap) {
  Problem t = per_token_head_problem();
  expect_ok(validate(t.p));
  t.p.scale_stride_slot = 1;  // slot and head share offsets
  expect_invalid(validate(t.p), "scale_stride_slot", {"scale_stride_slot (1)", "needs a stride >= 2"});
  Problem b = per_token_head_problem();
  b.p.scale_stride_block = 31;  // last slot of block i meets the first of block i+1
  expect_invalid(validate(b.p), "scale_stride_block", {"scale_stride_block (31)", "32"});
  Problem n = per_token_head_problem();
  n.p.scale_stride_head = -1;
  expect_invalid(validate(n.p), "scale_stride_head", {"scale_stride_head (-1)"});
  Problem h = per_token_head_problem();  // head-major [num_kv_heads, num_blocks, block_size] is fine too
  h.p.scale_stride_slot = 1, h.p.scale_stride_block = 16, h.p.scale_stride_head = 128;
  expect_ok(validate(h.p));
  Problem pt;  // per-tensor scales ignore the strides
  pt.make_fp8();
  pt.p.scale_stride_head = -5, pt.p.scale_stride_slot = 0;
  expect_ok(validate(pt.p));
}

// ---------------------------------------------------------------------------------------------------
// Optional tensors

TEST(Validate, QqBiasNeedsAStride) {
  Problem t;
  t.p.qq_bias_stride = 0;
  expect_invalid(validate(t.p), "qq_bias_stride", {"qq_bias_stride (0)"});
  t.p.qq_bias_stride = 1;
  expect_ok(validate(t.p));
}

TEST(Validate, LseStrideCoversTokens) {
  Problem t;
  t.p.lse_stride_head = 12;
  expect_invalid(validate(t.p), "lse_stride_head", {"lse_stride_head (12)", "num_tokens (13)"});
  t.p.lse_stride_head = 13;
  expect_ok(validate(t.p));
}

// ---------------------------------------------------------------------------------------------------
// Strides

TEST(Validate, StridesNonNegative) {
  Problem t;
  t.p.q_stride_head = -128;
  expect_invalid(validate(t.p), "q_stride_head", {"q_stride_head (-128)"});
  Problem o;
  o.p.o_stride_token = -1;
  expect_invalid(validate(o.p), "o_stride_token", {"-1"});
  Problem k;
  k.p.k_stride_slot = -256;
  expect_invalid(validate(k.p), "k_stride_slot", {"-256"});
  Problem v;
  v.p.v_stride_block = -4096;
  expect_invalid(validate(v.p), "v_stride_block", {"-4096"});
}

TEST(Validate, OverlappingStridesRejected) {
  Problem q;
  q.p.q_stride_head = 64;  // < head_size
  expect_invalid(validate(q.p), "q_stride_head", {"q_stride_head (64)", "head_size (128)"});
  Problem qt;
  qt.p.q_stride_token = 512;  // < 8 heads * 128
  expect_invalid(validate(qt.p), "q_stride_token", {"q_stride_token (512)", "1024"});
  Problem o;
  o.p.o_stride_token = 0;  // every token writes the same row
  expect_invalid(validate(o.p), "o_stride_token", {"o_stride_token (0)"});
  Problem kb;
  kb.p.k_stride_block = 2048;  // blocks overlap by half
  expect_invalid(validate(kb.p), "k_stride_block", {"k_stride_block (2048)", "4096"});
  Problem ks;
  ks.p.k_stride_slot = 128;  // == k_stride_head: slots and heads collide (ties name the outer dim)
  expect_invalid(validate(ks.p), "k_stride_slot", {"k_stride_slot (128)", "256"});
  Problem vh;
  vh.p.v_stride_head = 1024;  // HND: < block_size (16) * 128
  expect_invalid(validate(vh.p), "v_stride_head", {"v_stride_head (1024)", "2048"});
}

TEST(Validate, ExtentOneDimsIgnoreStrides) {
  // One kv head: its stride is never used; one token: its stride neither.
  Shape s;
  s.num_kv_heads = 1;
  Problem t(s);
  t.p.k_stride_head = 3;  // would overlap and be misaligned with 2 heads
  t.p.v_stride_head = 0;
  expect_ok(validate(t.p));
  Problem one;
  one.cu = {0, 1}, one.kv = {5}, one.bt = {2, -1};
  one.p.num_seqs = 1, one.p.num_tokens = 1, one.p.max_seqlen_q = 1, one.p.max_seqlen_k = 5;
  one.p.block_table_stride = 2;
  one.p.q_stride_token = 5, one.p.o_stride_token = 0;  // unused
  one.p.lse_stride_head = 1;
  expect_ok(validate(one.p, one.host()));
}

TEST(Validate, StridesAre16ByteMultiples) {
  Problem t;
  t.p.q_stride_token = 1028;  // 2056 bytes
  expect_invalid(validate(t.p), "q_stride_token", {"q_stride_token (1028", "2056 bytes", "16"});
  Problem o;
  o.p.o_stride_head = 132, o.p.o_stride_token = 8 * 132;  // 264 bytes
  expect_invalid(validate(o.p), "o_stride_head", {"264 bytes"});
  // The same element stride is aligned in fp16 and misaligned in fp8 (1-byte elements).
  Problem k;
  k.p.k_stride_block = 4104;  // 8208 bytes in fp16
  expect_ok(validate(k.p));
  k.make_fp8();
  expect_invalid(validate(k.p), "k_stride_block", {"4104 bytes"});
  Problem v;
  v.make_fp8();
  v.p.v_stride_slot = 136;  // HND slot stride in fp8: 136 bytes; head stride 2048 >= 16 * 136 still
  v.p.v_stride_head = 16 * 136, v.p.v_stride_block = 2 * 16 * 136;
  expect_invalid(validate(v.p), "v_stride_slot", {"136 bytes"});
}

// Random small K layouts: validate's acceptance must imply that no two K elements share an address
// (checked by enumerating every offset), and the contiguous layouts of every dim order must pass.
TEST(Validate, RandomLayoutsAcceptedOnlyWithoutOverlap) {
  const uint32_t seed = 20240611u;
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  int accepted = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Shape s;
    s.head_size = 64;
    s.num_kv_heads = 1 + int(rng() % 3);
    s.num_q_heads = s.num_kv_heads;
    s.block_size = 1 + int(rng() % 4);
    s.num_blocks = 1 + int(rng() % 4);
    Problem t(s);
    t.p.max_seqlen_k = 7, t.p.max_seqlen_q = 7;
    t.p.max_blocks_per_seq = (7 + s.block_size - 1) / s.block_size;
    t.p.block_table_stride = t.p.max_blocks_per_seq;
    const int64_t e[3] = {s.num_kv_heads, s.block_size, s.num_blocks};  // head, slot, block
    int64_t st[3];
    if (trial % 4 == 0) {  // a contiguous layout in a random dim order
      int order[3] = {0, 1, 2};
      std::shuffle(order, order + 3, rng);
      int64_t run = s.head_size;
      for (int i : order) st[i] = run, run *= e[i];
    } else {  // random 16-byte-multiple strides
      for (int64_t& x : st) x = 8 * int64_t(rng() % 49);
    }
    t.p.k_stride_head = st[0], t.p.k_stride_slot = st[1], t.p.k_stride_block = st[2];
    const Status r = validate(t.p);
    std::string where = "trial " + std::to_string(trial) + " extents " + std::to_string(e[0]) + "," + std::to_string(e[1]) +
                        "," + std::to_string(e[2]) + " strides " + std::to_string(st[0]) + "," + std::to_string(st[1]) +
                        "," + std::to_string(st[2]);
    if (trial % 4 == 0) {
      EXPECT_TRUE(r.ok()) << where << ": " << r.message;
    }
    // Enumerate every element's offset.
    std::vector<int64_t> offs;
    for (int64_t b = 0; b < e[2]; ++b)
      for (int64_t sl = 0; sl < e[1]; ++sl)
        for (int64_t h = 0; h < e[0]; ++h)
          for (int64_t d = 0; d < s.head_size; ++d) offs.push_back(b * st[2] + sl * st[1] + h * st[0] + d);
    std::sort(offs.begin(), offs.end());
    const bool overlap = std::adjacent_find(offs.begin(), offs.end()) != offs.end();
    if (r.ok()) {
      ++accepted;
      EXPECT_FALSE(overlap) << where;
    } else {
      ++rejected;
      EXPECT_TRUE(r.field == "k_stride_head" || r.field == "k_stride_slot" || r.field == "k_stride_block")
          << where << ": " << r.field;
      if (overlap) {
        EXPECT_NE(r.message.find("overlap"), std::string::npos) << where << ": " << r.message;
      }
    }
  }
  EXPECT_GT(accepted, 750);  // at least the contiguous ones
  EXPECT_GT(rejected, 100);
}

// ---------------------------------------------------------------------------------------------------
// 64-bit offsets

TEST(Validate, Needs64BitOffsets) {
  using hipattn::needs_64bit_offsets;
  Problem t;
  EXPECT_FALSE(needs_64bit_offsets(t.p));

  // K and V NHD/HND [num_blocks, 16, 2, 128] fp16: 4096 elements = 8192 bytes per block. 2^31 bytes is
  // 262144 blocks exactly: the last byte offset is 2^31 - 1, still a signed 32-bit value.
  Problem k;
  k.p.num_blocks = 262144;
  expect_ok(validate(k.p));
  EXPECT_FALSE(needs_64bit_offsets(k.p));
  k.p.num_blocks = 262145;
  EXPECT_TRUE(needs_64bit_offsets(k.p));
  k.make_fp8();  // 1-byte elements: half the bytes
  EXPECT_FALSE(needs_64bit_offsets(k.p));
  k.p.num_blocks = 524288;
  EXPECT_FALSE(needs_64bit_offsets(k.p));
  k.p.num_blocks = 524289;
  EXPECT_TRUE(needs_64bit_offsets(k.p));

  // Only V padded: 8192-element blocks.
  Problem v;
  v.p.num_blocks = 262144;
  v.p.v_stride_block = 8192;
  expect_ok(validate(v.p));
  EXPECT_TRUE(needs_64bit_offsets(v.p));

  // Per-token-head scales (4-byte floats): 262144 blocks * 2048 floats = 2^31 bytes; one more float per block crosses it.
  Problem s = per_token_head_problem();
  s.p.num_blocks = 262144;
  s.p.scale_stride_block = 2048;
  expect_ok(validate(s.p));
  EXPECT_FALSE(needs_64bit_offsets(s.p));  // k / v fp8: 2^30 bytes
  s.p.scale_stride_block = 2049;
  EXPECT_TRUE(needs_64bit_offsets(s.p));

  // A huge q token stride (13 tokens * 2^27 elements * 2 bytes > 2^31).
  Problem q;
  q.p.q_stride_token = int64_t(1) << 27;
  expect_ok(validate(q.p));
  EXPECT_TRUE(needs_64bit_offsets(q.p));
  q.p.q_stride_token = (int64_t(1) << 26);  // 13 * 2^27 bytes < 2^31
  EXPECT_FALSE(needs_64bit_offsets(q.p));
}

// ---------------------------------------------------------------------------------------------------
// Host copies of the device arrays

TEST(ValidateHost, CuSeqlensQHasNumSeqsPlusOneEntries) {
  Problem t;
  t.cu.pop_back();
  expect_invalid(validate(t.p, t.host()), "cu_seqlens_q", {"3 entries", "4 expected"});
}

TEST(ValidateHost, CuSeqlensQStartsAtZero) {
  Problem t;
  t.cu[0] = 1;
  expect_invalid(validate(t.p, t.host()), "cu_seqlens_q", {"cu_seqlens_q[0] (1)"});
}

TEST(ValidateHost, CuSeqlensQNonDecreasingReportsFirstIndex) {
  Problem t;
  t.cu = {0, 9, 2, 1};  // decreases at 2 and at 3
  expect_invalid(validate(t.p, t.host()), "cu_seqlens_q", {"index 2", "cu_seqlens_q[2] (2) < cu_seqlens_q[1] (9)"});
}

TEST(ValidateHost, CuSeqlensQEndsAtNumTokens) {
  Problem t;
  t.cu.back() = 12;
  expect_invalid(validate(t.p, t.host()), "cu_seqlens_q", {"cu_seqlens_q[3] (12)", "num_tokens (13)"});
}

TEST(ValidateHost, SeqLensKHasNumSeqsEntries) {
  Problem t;
  t.kv.push_back(4);
  expect_invalid(validate(t.p, t.host()), "seq_lens_k", {"4 entries", "num_seqs (3)"});
}

TEST(ValidateHost, SeqLensKNonNegative) {
  Problem t;
  t.kv[1] = -1;
  expect_invalid(validate(t.p, t.host()), "seq_lens_k", {"sequence 1", "seq_lens_k[1] (-1)"});
}

TEST(ValidateHost, QLengthAtMostMaxSeqlenQ) {
  Problem t;
  t.p.max_seqlen_q = 6;  // sequence 2 has 7 query tokens
  expect_ok(validate(t.p));
  expect_invalid(validate(t.p, t.host()), "max_seqlen_q", {"sequence 2", "q length 7", "max_seqlen_q (6)"});
}

TEST(ValidateHost, KvLengthAtMostMaxSeqlenK) {
  Problem t;
  t.kv[0] = 21;
  expect_invalid(validate(t.p, t.host()), "max_seqlen_k", {"sequence 0", "(21)", "max_seqlen_k (20)"});
}

TEST(ValidateHost, CausalQLengthAtMostKvLength) {
  Problem t;
  t.kv[2] = 6;  // 7 query tokens
  expect_invalid(validate(t.p, t.host()), "seq_lens_k", {"sequence 2", "q length 7", "seq_lens_k[2] (6)", "causal"});
  t.p.causal = false;
  expect_ok(validate(t.p, t.host()));
}

TEST(ValidateHost, BlockTableEntriesInRange) {
  Problem t;
  t.bt[1] = 8;  // sequence 0, column 1; num_blocks = 8
  expect_invalid(validate(t.p, t.host()), "block_table", {"sequence 0, column 1", "block id 8", "num_blocks (8)"});
  Problem n;
  n.bt[6] = -2;  // sequence 2, column 0
  expect_invalid(validate(n.p, n.host()), "block_table", {"sequence 2, column 0", "block id -2"});
}

TEST(ValidateHost, UnusedBlockTableEntriesAreIgnored) {
  Problem t;
  t.bt[4] = 999;   // sequence 1, column 1: kv length 9 uses one block
  t.bt[2] = -77;   // padding column
  expect_ok(validate(t.p, t.host()));
  t.kv[1] = 17;  // now it uses two
  expect_invalid(validate(t.p, t.host()), "block_table", {"sequence 1, column 1", "block id 999"});
}

TEST(ValidateHost, EmptyBlockTableIsNotChecked) {
  Problem t;
  t.bt[0] = 1000;
  expect_ok(validate(t.p, HostSequenceInfo{t.cu, t.kv, {}}));
}

TEST(ValidateHost, BlockTableCoversEveryRow) {
  Problem t;
  t.bt.resize(7);  // (3 - 1) * 3 + 2 = 8 needed
  expect_invalid(validate(t.p, t.host()), "block_table", {"7 entries", "8 needed"});
  t.bt.push_back(-1);
  expect_ok(validate(t.p, t.host()));
}

TEST(ValidateHost, FieldRulesComeFirst) {
  Problem t;
  t.p.num_kv_heads = 3;
  t.cu[0] = 5;
  expect_invalid(validate(t.p, t.host()), "num_kv_heads", {});
}

// Random batches: valid ones pass; one corrupted used block-table entry is found at its (sequence, column).
TEST(ValidateHost, RandomBatchesAndOneBadBlock) {
  const uint32_t seed = 77031u;
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int trial = 0; trial < 300; ++trial) {
    const int32_t n = 1 + int32_t(rng() % 8), bs = 1 + int32_t(rng() % 32), nb = 64 + int32_t(rng() % 64);
    Problem t;
    t.cu.assign(1, 0), t.kv.clear();
    int32_t max_q = 0, max_k = 0;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t q_len = 1 + int32_t(rng() % 9), kv_len = q_len + int32_t(rng() % 40);
      t.cu.push_back(t.cu.back() + q_len), t.kv.push_back(kv_len);
      max_q = std::max(max_q, q_len), max_k = std::max(max_k, kv_len);
    }
    const int32_t mbps = (max_k + bs - 1) / bs, stride = mbps + int32_t(rng() % 3);
    t.bt.assign(size_t(n) * stride, -1);
    for (int32_t i = 0; i < n; ++i)
      for (int32_t c = 0; c < (t.kv[i] + bs - 1) / bs; ++c) t.bt[size_t(i) * stride + c] = int32_t(rng() % nb);
    t.p.num_seqs = n, t.p.num_tokens = t.cu.back(), t.p.max_seqlen_q = max_q, t.p.max_seqlen_k = max_k;
    t.p.block_size = bs, t.p.num_blocks = nb, t.p.max_blocks_per_seq = mbps, t.p.block_table_stride = stride;
    t.p.lse_stride_head = t.p.num_tokens;
    t.p.k_stride_block = t.p.v_stride_block = int64_t(bs) * 2 * 128;
    t.p.k_stride_slot = 256, t.p.k_stride_head = 128;  // NHD
    t.p.v_stride_slot = 128, t.p.v_stride_head = int64_t(bs) * 128;  // HND
    const std::string where = "trial " + std::to_string(trial);
    const Status good = validate(t.p, t.host());
    ASSERT_TRUE(good.ok()) << where << ": " << good.field << ": " << good.message;

    const int32_t i = int32_t(rng() % n), used = (t.kv[i] + bs - 1) / bs, c = int32_t(rng() % used);
    const int32_t bad = (rng() % 2) ? nb + int32_t(rng() % 100) : -1 - int32_t(rng() % 100);
    t.bt[size_t(i) * stride + c] = bad;
    const Status s = validate(t.p, t.host());
    expect_invalid(s, "block_table",
                   {"sequence " + std::to_string(i) + ", column " + std::to_string(c) + ": block id " + std::to_string(bad)});
    if (HasFailure()) FAIL() << where;
  }
}

}  // namespace

// Kernels carry strides as 32-bit values: a stride of 2^31 elements or more is rejected, naming it.
TEST(Validate, StridesBelow2To31) {
  {
    Problem t;
    t.p.k_stride_block = int64_t(1) << 31;
    expect_invalid(validate(t.p), "k_stride_block", {"2147483648", "2^31"});
  }
  {
    Problem t;
    t.p.block_table_stride = int64_t(1) << 32;
    expect_invalid(validate(t.p), "block_table_stride", {"4294967296"});
  }
}
