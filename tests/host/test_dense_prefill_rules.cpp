// tests/host/test_dense_prefill_rules.cpp: host validation of DensePrefillParams
// (problem/dense_prefill_rules.hpp): a packed and a batched valid problem, a table of single mutations
// each rejected with its code, field and words of the message, a table of mutations that must stay
// valid, several violations reported together, the host-array checks and needs_64bit_offsets; and the
// CDNA skeleton's batched K / V rows (dispatch/dense_prefill_launch.hpp detail::dense_kv_pitch).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../common/rules_table.hpp"
#include "hipattn/dispatch/dense_prefill.hpp"
#include "hipattn/problem/dense_prefill_rules.hpp"

namespace {

using hipattn::DenseHostSequenceInfo;
using hipattn::DensePrefillParams;
using hipattn::DType;
using hipattn::ErrorCode;
using hipattn::validate;

template <class T>
T* fake(uintptr_t a) {
  return reinterpret_cast<T*>(a);
}

// Packed varlen: 3 sequences, q lengths {5, 0, 7} (12 tokens), k lengths {9, 4, 7} (20 tokens), 8 / 2
// heads, (192, 128), bf16; q padded (head stride 192 + 64), v with a padded token stride.
DensePrefillParams packed() {
  DensePrefillParams p;
  p.dtype = DType::bf16;
  p.num_seqs = 3;
  p.num_tokens_q = 12;
  p.num_tokens_k = 20;
  p.max_seqlen_q = 7;
  p.max_seqlen_k = 9;
  p.num_q_heads = 8;
  p.num_kv_heads = 2;
  p.head_size_qk = 192;
  p.head_size_v = 128;
  p.q = fake<const void>(0x10000);
  p.q_stride_head = 256;
  p.q_stride_token = 8 * 256;
  p.k = fake<const void>(0x200000);
  p.k_stride_head = 192;
  p.k_stride_token = 2 * 192;
  p.v = fake<const void>(0x300000);
  p.v_stride_head = 128;
  p.v_stride_token = 2 * 128 + 64;
  p.cu_seqlens_q = fake<const int32_t>(0x400000);
  p.cu_seqlens_k = fake<const int32_t>(0x400100);
  p.out = fake<void>(0x500000);
  p.o_stride_head = 128;
  p.o_stride_token = 8 * 128;
  p.scale = 0.07f;
  p.causal = true;
  return p;
}

// Batched BSHD: 2 sequences of 64 queries and 96 keys, 4 / 4 heads, (128, 128), f16; every tensor
// [seq, token, head, d] with a batch stride one token larger than the sequence.
DensePrefillParams batched() {
  DensePrefillParams p;
  p.dtype = DType::f16;
  p.num_seqs = 2;
  p.max_seqlen_q = 64;
  p.max_seqlen_k = 96;
  p.num_tokens_q = 128;
  p.num_tokens_k = 192;
  p.num_q_heads = p.num_kv_heads = 4;
  p.head_size_qk = p.head_size_v = 128;
  p.q = fake<const void>(0x10000);
  p.k = fake<const void>(0x200000);
  p.v = fake<const void>(0x300000);
  p.out = fake<void>(0x500000);
  p.q_stride_head = p.k_stride_head = p.v_stride_head = p.o_stride_head = 128;
  p.q_stride_token = p.k_stride_token = p.v_stride_token = p.o_stride_token = 4 * 128;
  p.q_stride_batch = p.o_stride_batch = 65 * 4 * 128;
  p.k_stride_batch = p.v_stride_batch = 97 * 4 * 128;
  p.scale = 0.088f;
  return p;
}

TEST(DensePrefillRules, ValidProblemsPass) {
  EXPECT_TRUE(validate(packed()).ok()) << validate(packed()).summary();
  EXPECT_TRUE(validate(batched()).ok()) << validate(batched()).summary();
}

using Rejected = hipattn::testing::RejectedCase<DensePrefillParams>;

TEST(DensePrefillRules, EachRuleFiresNamingItsFieldAndValue) {
  const auto P = [](auto f) { return [f] { DensePrefillParams p = packed(); f(p); return p; }; };
  const auto B = [](auto f) { return [f] { DensePrefillParams p = batched(); f(p); return p; }; };
  const ErrorCode inv = ErrorCode::invalid_argument, uns = ErrorCode::unsupported;
  const std::vector<Rejected> rows = {
      {"negative seqs", P([](auto& p) { p.num_seqs = -1; }), inv, "num_seqs", "(-1)"},
      {"no seqs with tokens", P([](auto& p) { p.num_seqs = 0; }), inv, "num_seqs", "num_tokens_q (12)"},
      {"no q heads", P([](auto& p) { p.num_q_heads = 0; }), inv, "num_q_heads", "(0)"},
      {"heads ratio", P([](auto& p) { p.num_q_heads = 7; }), inv, "num_kv_heads", "num_q_heads (7)"},
      {"head pair", P([](auto& p) { p.head_size_v = 64; }), uns, "head_size_qk", "(192, 64)"},
      {"head pair 96", B([](auto& p) { p.head_size_qk = p.head_size_v = 96; }), uns, "head_size_qk", "(96, 96)"},
      {"dtype", P([](auto& p) { p.dtype = DType::fp8_e4m3fn; }), uns, "dtype", "fp8"},
      {"one cu_seqlens", P([](auto& p) { p.cu_seqlens_k = nullptr; }), inv, "cu_seqlens_k", "both"},
      {"other cu_seqlens", P([](auto& p) { p.cu_seqlens_q = nullptr; }), inv, "cu_seqlens_q", "both"},
      {"negative max q", P([](auto& p) { p.max_seqlen_q = -2; }), inv, "max_seqlen_q", "(-2)"},
      {"max q over tokens", P([](auto& p) { p.max_seqlen_q = 13; }), inv, "max_seqlen_q", "num_tokens_q (12)"},
      {"max k under average", P([](auto& p) { p.max_seqlen_k = 6; }), inv, "max_seqlen_k", "ceil"},
      {"batched q tokens", B([](auto& p) { p.num_tokens_q = 127; }), inv, "num_tokens_q", "(127)"},
      {"batched k tokens", B([](auto& p) { p.max_seqlen_k = 95; }), inv, "num_tokens_k", "(192)"},
      {"scale", P([](auto& p) { p.scale = 0.f; }), inv, "scale", "(0"},
      {"scale nan", P([](auto& p) { p.scale = std::nanf(""); }), inv, "scale", "nan"},
      {"softcap", P([](auto& p) { p.softcap = -1.f; }), inv, "softcap", "(-1"},
      {"window", P([](auto& p) { p.window_left = -3; }), inv, "window_left", "(-3)"},
      {"null q", P([](auto& p) { p.q = nullptr; }), inv, "q", "num_tokens_q > 0"},
      {"null v", B([](auto& p) { p.v = nullptr; }), inv, "v", "num_tokens_k > 0"},
      {"misaligned k", P([](auto& p) { p.k = fake<const void>(0x200008); }), inv, "k", "16"},
      {"lse stride", P([](auto& p) { p.lse = fake<float>(0x600000); p.lse_stride_head = 11; }), inv, "lse_stride_head", "(11)"},
      {"negative stride", P([](auto& p) { p.k_stride_token = -384; }), inv, "k_stride_token", "-384"},
      {"overlap", P([](auto& p) { p.q_stride_token = 256; }), inv, "q_stride_token", "overlap"},
      {"batch overlap", B([](auto& p) { p.k_stride_batch = 95 * 4 * 128; }), inv, "k_stride_batch", "overlap"},
      {"stride alignment", P([](auto& p) { p.v_stride_token = 2 * 128 + 4; }), inv, "v_stride_token", "16"},
      {"stride 2^31", B([](auto& p) { p.o_stride_batch = int64_t(1) << 31; }), inv, "o_stride_batch", "2^31"},
  };
  hipattn::testing::expect_rejections(rows);
}

TEST(DensePrefillRules, AcceptedCorners) {
  const std::vector<std::pair<const char*, std::function<void(DensePrefillParams&)>>> rows = {
      {"every head pair", [](auto&) {}},
      {"MQA", [](auto& p) { p.num_kv_heads = 1; p.k_stride_token = 192; p.v_stride_token = 128 + 64; }},
      {"window and softcap", [](auto& p) { p.window_left = 0; p.softcap = 30.f; }},
      {"more queries than keys under causal", [](auto& p) { p.max_seqlen_q = 9; p.max_seqlen_k = 9; }},
      {"empty call", [](auto& p) { p.num_seqs = p.num_tokens_q = p.num_tokens_k = p.max_seqlen_q = p.max_seqlen_k = 0; p.q = p.k = p.v = nullptr; p.out = nullptr; }},
      {"no keys at all", [](auto& p) { p.num_tokens_k = 0; p.max_seqlen_k = 0; p.k = p.v = nullptr; }},
      {"lse", [](auto& p) { p.lse = fake<float>(0x600000); p.lse_stride_head = 12; }},
      {"batch strides ignored when packed", [](auto& p) { p.q_stride_batch = 1; }},
  };
  for (const auto& [name, mutate] : rows) {
    DensePrefillParams p = packed();
    mutate(p);
    EXPECT_TRUE(validate(p).ok()) << name << ": " << validate(p).summary();
  }
  for (const auto& [qk, v] : hipattn::kDensePrefillHeadSizes) {
    DensePrefillParams p = packed();
    p.head_size_qk = qk;
    p.head_size_v = v;
    p.q_stride_head = 256;
    p.k_stride_head = qk, p.k_stride_token = 2 * qk;
    p.v_stride_head = v, p.v_stride_token = 2 * v;
    p.o_stride_head = v, p.o_stride_token = 8 * v;
    EXPECT_TRUE(validate(p).ok()) << qk << "/" << v << ": " << validate(p).summary();
  }
}

TEST(DensePrefillRules, IndependentViolationsAreAllReported) {
  DensePrefillParams p = packed();
  p.scale = -1.f;
  p.window_left = -5;
  p.out = nullptr;
  const hipattn::ValidationReport r = validate(p);
  ASSERT_EQ(r.size(), 3u) << r.summary();
  EXPECT_EQ(r.issues[0].field, "scale");
  EXPECT_EQ(r.issues[1].field, "window_left");
  EXPECT_EQ(r.issues[2].field, "out");
}

TEST(DensePrefillRules, HostArrays) {
  const DensePrefillParams p = packed();
  const std::vector<int32_t> q{0, 5, 5, 12}, k{0, 9, 13, 20};
  EXPECT_TRUE(validate(p, DenseHostSequenceInfo{q, k}).ok()) << validate(p, DenseHostSequenceInfo{q, k}).summary();
  struct Row {
    std::vector<int32_t> q, k;
    const char* field;
    const char* words;
  };
  const std::vector<Row> rows = {
      {{0, 5, 5}, k, "cu_seqlens_q", "3 entries"},
      {{1, 5, 5, 12}, k, "cu_seqlens_q", "[0] (1)"},
      {{0, 5, 4, 12}, k, "cu_seqlens_q", "decreases at index 2"},
      {{0, 5, 5, 11}, k, "cu_seqlens_q", "num_tokens_q (12)"},
      {{0, 1, 1, 12}, k, "max_seqlen_q", "length 11"},
      {q, {0, 10, 13, 20}, "max_seqlen_k", "length 10"},
      {q, {0, 9, 13, 21}, "cu_seqlens_k", "num_tokens_k (20)"},
  };
  for (const Row& row : rows) {
    const hipattn::ValidationReport r = validate(p, DenseHostSequenceInfo{row.q, row.k});
    ASSERT_FALSE(r.ok()) << row.field;
    EXPECT_EQ(r.field(), row.field) << r.summary();
    EXPECT_NE(r.message().find(row.words), std::string::npos) << r.message();
  }
  // A batched call has no arrays to check; an invalid one is not checked further.
  EXPECT_TRUE(validate(batched(), DenseHostSequenceInfo{}).ok());
  DensePrefillParams bad = packed();
  bad.scale = 0.f;
  EXPECT_EQ(validate(bad, DenseHostSequenceInfo{}).size(), 1u);
}

TEST(DensePrefillRules, SixtyFourBitOffsets) {
  EXPECT_FALSE(hipattn::needs_64bit_offsets(packed()));
  DensePrefillParams p = batched();
  EXPECT_FALSE(hipattn::needs_64bit_offsets(p));
  // 9 sequences of 64K keys x 16 heads x 128 f16 values: 9 x 2^28 bytes of k, past 2^31.
  p.num_seqs = 9;
  p.num_kv_heads = p.num_q_heads = 16;
  p.max_seqlen_k = 65536;
  p.num_tokens_k = 9 * 65536;
  p.num_tokens_q = 9 * 64;
  p.k_stride_head = p.v_stride_head = p.q_stride_head = p.o_stride_head = 128;
  p.k_stride_token = p.v_stride_token = p.q_stride_token = p.o_stride_token = 16 * 128;
  p.k_stride_batch = p.v_stride_batch = int64_t(65536) * 16 * 128;
  p.q_stride_batch = p.o_stride_batch = int64_t(64) * 16 * 128;
  ASSERT_TRUE(validate(p).ok()) << validate(p).summary();
  EXPECT_TRUE(hipattn::needs_64bit_offsets(p));
  p.num_seqs = 8;  // 8 x 2^28 bytes = 2^31: the last byte is at 2^31 - 1, still 32-bit
  p.num_tokens_k = 8 * 65536;
  p.num_tokens_q = 8 * 64;
  ASSERT_TRUE(validate(p).ok()) << validate(p).summary();
  EXPECT_FALSE(hipattn::needs_64bit_offsets(p));
}

// tests/data/dense_prefill_sweeps.json, as constants (keep in step with the file): BSHD, bottom-right
// causal, q heads = kv heads; d256 skips seqlen_k < seqlen_q.
namespace dense_prefill_sweeps {
struct Grid {
  int32_t d_qk, d_v;
  std::vector<int32_t> batch, heads, seqlen_q, seqlen_k;
  bool skip_short_k;
};
inline const Grid kD256{256, 256, {1, 16}, {32, 64}, {1024, 2048, 4096, 8192, 16384}, {4096, 16384, 65664}, true};
inline const Grid kD192V128{192, 128, {1, 16, 64, 128}, {32, 64}, {1024, 2048, 4096, 8192, 16384}, {4096, 16384, 65664}, false};
}  // namespace dense_prefill_sweeps

// Every point of the benchmark grid is a valid batched BSHD problem, and it needs 64-bit offsets
// exactly when one of its tensors spans more than 2^31 bytes (computed here from the shape).
TEST(DensePrefillRules, EverySweepShapeValidates) {
  int points = 0, wide = 0;
  for (const auto* g : {&dense_prefill_sweeps::kD256, &dense_prefill_sweeps::kD192V128})
    for (int32_t b : g->batch)
      for (int32_t h : g->heads)
        for (int32_t lq : g->seqlen_q)
          for (int32_t lk : g->seqlen_k) {
            if (g->skip_short_k && lk < lq) continue;
            DensePrefillParams p;
            p.dtype = DType::bf16;
            p.num_seqs = b;
            p.max_seqlen_q = lq;
            p.max_seqlen_k = lk;
            p.num_tokens_q = b * lq;
            p.num_tokens_k = b * lk;
            p.num_q_heads = p.num_kv_heads = h;
            p.head_size_qk = g->d_qk;
            p.head_size_v = g->d_v;
            p.q = p.k = p.v = fake<const void>(0x10000);
            p.out = fake<void>(0x20000);
            p.q_stride_head = p.k_stride_head = g->d_qk;
            p.v_stride_head = p.o_stride_head = g->d_v;
            p.q_stride_token = p.k_stride_token = int64_t(h) * g->d_qk;
            p.v_stride_token = p.o_stride_token = int64_t(h) * g->d_v;
            p.q_stride_batch = int64_t(lq) * h * g->d_qk;
            p.k_stride_batch = int64_t(lk) * h * g->d_qk;
            p.v_stride_batch = int64_t(lk) * h * g->d_v;
            p.o_stride_batch = int64_t(lq) * h * g->d_v;
            p.scale = 1.f / std::sqrt(float(g->d_qk));
            p.causal = true;
            const std::string what = std::to_string(g->d_qk) + "/" + std::to_string(g->d_v) + " b" + std::to_string(b) +
                                     " h" + std::to_string(h) + " q" + std::to_string(lq) + " k" + std::to_string(lk);
            ASSERT_TRUE(validate(p).ok()) << what << ": " << validate(p).summary();
            const int64_t kbytes = int64_t(b) * lk * h * g->d_qk * 2, qbytes = int64_t(b) * lq * h * g->d_qk * 2;
            const bool over = kbytes > (int64_t(1) << 31) || qbytes > (int64_t(1) << 31);
            EXPECT_EQ(hipattn::needs_64bit_offsets(p), over) << what;
            ++points;
            wide += over;
          }
  EXPECT_EQ(points, 2 * 2 * 13 + 4 * 2 * 15);  // d256: 13 (q, k) pairs with k >= q (3 + 5 + 5); d192: all 15
  EXPECT_GT(wide, 0);
}

// The CDNA skeleton finds batched K / V rows at seq x pitch + key of their token strides
// (DenseKvLayout): the pitch is the batch stride over the token stride, a whole multiple, the same for K
// and V, with every row within 32 bits; packed calls, one sequence and no keys need none. Anything else
// is refused, naming the field, before a launch.
TEST(DensePrefillCdnaLayout, BatchedKvPitch) {
  using hipattn::detail::dense_kv_pitch;
  EXPECT_EQ(dense_kv_pitch(packed()), 0);
  EXPECT_EQ(dense_kv_pitch(batched()), 97);  // BSHD, one token of padding after each sequence
  DensePrefillParams bhsd = batched();       // [seqs, heads, len, d]
  bhsd.k_stride_token = bhsd.v_stride_token = 128;
  bhsd.k_stride_head = bhsd.v_stride_head = 96 * 128;
  bhsd.k_stride_batch = bhsd.v_stride_batch = 4 * 96 * 128;
  ASSERT_TRUE(validate(bhsd).ok()) << validate(bhsd).summary();
  EXPECT_EQ(dense_kv_pitch(bhsd), 4 * 96);
  DensePrefillParams one = batched();  // one sequence: any batch stride
  one.num_seqs = 1;
  one.num_tokens_q = 64;
  one.num_tokens_k = 96;
  one.k_stride_batch += 64;
  ASSERT_TRUE(validate(one).ok()) << validate(one).summary();
  EXPECT_EQ(dense_kv_pitch(one), 0);

  const auto refused = [](const DensePrefillParams& p, const char* field, const char* words) {
    try {
      dense_kv_pitch(p);
      ADD_FAILURE() << "no error; wanted " << field;
    } catch (const hipattn::Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::unsupported) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  DensePrefillParams odd = batched();  // valid, but not a whole number of key rows
  odd.k_stride_batch = 97 * 4 * 128 + 64;
  ASSERT_TRUE(validate(odd).ok()) << validate(odd).summary();
  refused(odd, "k_stride_batch", std::to_string(odd.k_stride_batch).c_str());
  DensePrefillParams mixed = batched();  // K 97 rows a sequence, V 98
  mixed.v_stride_batch = 98 * 4 * 128;
  ASSERT_TRUE(validate(mixed).ok()) << validate(mixed).summary();
  refused(mixed, "v_stride_batch", "98 value rows");
  DensePrefillParams far = batched();  // row 1024 x 2^21 + key: past 2^31 - 1
  far.num_seqs = 1025;
  far.k_stride_batch = far.v_stride_batch = int64_t(4 * 128) << 21;
  refused(far, "k_stride_batch", "2^31 - 1");
}

}  // namespace
