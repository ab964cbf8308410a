// tests/host/test_merge_rules.cpp: host validation of MergeAttentionStatesParams
// (problem/merge_rules.hpp) and the launch shape of merge_attention_states
// (dispatch/merge_attention_states.hpp's host part): a stacked and a rank-interleaved valid problem, a
// table of single mutations each rejected with its code, field and words of the message, a table of
// mutations that must stay valid, several violations reported together, and the geometry.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../common/rules_table.hpp"
#include "hipattn/dispatch/merge_attention_states.hpp"
#include "hipattn/problem/merge_rules.hpp"

namespace {

using hipattn::DType;
using hipattn::ErrorCode;
using hipattn::MergeAttentionStatesParams;
using hipattn::validate;

template <class T>
T* fake(uintptr_t a) {
  return reinterpret_cast<T*>(a);
}

// Stacked: 4 ranks x 10 tokens x 8 heads x 128, bf16 partials with a padded head stride (128 + 8), f16
// output, LSE [ranks, tokens, heads] in and [tokens, heads] out.
MergeAttentionStatesParams stacked() {
  MergeAttentionStatesParams p;
  p.num_ranks = 4;
  p.num_tokens = 10;
  p.num_heads = 8;
  p.head_size = 128;
  p.partial_out = fake<const void>(0x100000);
  p.partial_dtype = DType::bf16;
  p.po_stride_head = 136;
  p.po_stride_token = 8 * 136;
  p.po_stride_rank = 10 * 8 * 136;
  p.partial_lse = fake<const float>(0x200000);
  p.plse_stride_head = 1;
  p.plse_stride_token = 8;
  p.plse_stride_rank = 80;
  p.out = fake<void>(0x300000);
  p.out_dtype = DType::f16;
  p.o_stride_head = 128;
  p.o_stride_token = 8 * 128;
  p.lse = fake<float>(0x400000);
  p.lse_stride_head = 1;
  p.lse_stride_token = 8;
  return p;
}

// Rank-interleaved: [tokens, ranks, heads, d] fp32 partials (d = 64), LSE [heads, ranks, tokens], fp32
// output, LSE out [heads, tokens + 3].
MergeAttentionStatesParams interleaved() {
  MergeAttentionStatesParams p;
  p.num_ranks = 3;
  p.num_tokens = 5;
  p.num_heads = 2;
  p.head_size = 64;
  p.partial_out = fake<const void>(0x100000);
  p.partial_dtype = DType::f32;
  p.po_stride_head = 64;
  p.po_stride_rank = 2 * 64;
  p.po_stride_token = 3 * 2 * 64;
  p.partial_lse = fake<const float>(0x200004);
  p.plse_stride_token = 1;
  p.plse_stride_rank = 5;
  p.plse_stride_head = 15;
  p.out = fake<void>(0x300000);
  p.out_dtype = DType::f32;
  p.o_stride_head = 64;
  p.o_stride_token = 2 * 64;
  p.lse = fake<float>(0x400004);
  p.lse_stride_token = 1;
  p.lse_stride_head = 8;
  return p;
}

TEST(MergeRules, ValidProblemsPass) {
  EXPECT_TRUE(validate(stacked()).ok()) << validate(stacked()).summary();
  EXPECT_TRUE(validate(interleaved()).ok()) << validate(interleaved()).summary();
}

using Rejected = hipattn::testing::RejectedCase<MergeAttentionStatesParams>;

TEST(MergeRules, EachRuleFiresNamingItsFieldAndValue) {
  const auto S = [](auto f) { return [f] { MergeAttentionStatesParams p = stacked(); f(p); return p; }; };
  const auto I = [](auto f) { return [f] { MergeAttentionStatesParams p = interleaved(); f(p); return p; }; };
  const ErrorCode inv = ErrorCode::invalid_argument, uns = ErrorCode::unsupported;
  const std::vector<Rejected> rows = {
      {"no ranks", S([](auto& p) { p.num_ranks = 0; }), inv, "num_ranks", "(0)"},
      {"negative ranks", S([](auto& p) { p.num_ranks = -2; }), inv, "num_ranks", "(-2)"},
      {"too many ranks", S([](auto& p) { p.num_ranks = 4097; p.po_stride_rank = 10 * 8 * 136; }), uns, "num_ranks", "(4097)"},
      {"negative tokens", S([](auto& p) { p.num_tokens = -1; }), inv, "num_tokens", "(-1)"},
      {"no heads", S([](auto& p) { p.num_heads = 0; }), inv, "num_heads", "(0)"},
      {"head size 0", S([](auto& p) { p.head_size = 0; }), inv, "head_size", "(0)"},
      {"head size 12", S([](auto& p) { p.head_size = 12; }), uns, "head_size", "(12)"},
      {"head size 4", I([](auto& p) { p.head_size = 4; }), uns, "head_size", "(4)"},
      {"head size 1032", S([](auto& p) {
         p.head_size = 1032;
         p.po_stride_head = p.o_stride_head = 1032;
         p.po_stride_token = p.o_stride_token = 8 * 1032;
         p.po_stride_rank = 10 * 8 * 1032;
       }),
       uns, "head_size", "(1032)"},
      {"partial dtype", S([](auto& p) { p.partial_dtype = DType::fp8_e4m3fn; }), uns, "partial_dtype", "fp8_e4m3fn"},
      {"out dtype", S([](auto& p) { p.out_dtype = DType::fp8_e4m3fnuz; }), uns, "out_dtype", "fp8_e4m3fnuz"},
      {"null partial_out", S([](auto& p) { p.partial_out = nullptr; }), inv, "partial_out", "num_tokens > 0"},
      {"null partial_lse", S([](auto& p) { p.partial_lse = nullptr; }), inv, "partial_lse", "num_tokens > 0"},
      {"null out", S([](auto& p) { p.out = nullptr; }), inv, "out", "num_tokens > 0"},
      {"misaligned partial_out", S([](auto& p) { p.partial_out = fake<const void>(0x100008); }), inv, "partial_out", "16-byte"},
      {"misaligned out", S([](auto& p) { p.out = fake<void>(0x300004); }), inv, "out", "0x300004"},
      {"misaligned lse", S([](auto& p) { p.lse = fake<float>(0x400002); }), inv, "lse", "4-byte"},
      {"misaligned partial_lse", S([](auto& p) { p.partial_lse = fake<const float>(0x200001); }), inv, "partial_lse", "4-byte"},
      {"negative stride", S([](auto& p) { p.po_stride_token = -1088; }), inv, "po_stride_token", "(-1088)"},
      {"stride 2^31", S([](auto& p) { p.po_stride_rank = int64_t(1) << 31; }), inv, "po_stride_rank", "2^31"},
      {"partial_out overlap", S([](auto& p) { p.po_stride_head = 120; p.po_stride_token = 8 * 120; p.po_stride_rank = 80 * 120; }),
       inv, "po_stride_head", "overlap"},
      {"ranks overlap", S([](auto& p) { p.po_stride_rank = 9 * 8 * 136; }), inv, "po_stride_rank", "overlap"},
      {"rank stride 0", S([](auto& p) { p.po_stride_rank = 0; }), inv, "po_stride_rank", "(0)"},
      {"partial_out alignment", S([](auto& p) { p.po_stride_head = 132; p.po_stride_token = 8 * 132; p.po_stride_rank = 80 * 132; }),
       inv, "po_stride_head", "264 bytes"},
      {"f32 partial_out alignment", I([](auto& p) { p.po_stride_head = 66; p.po_stride_rank = 2 * 66; p.po_stride_token = 6 * 66; }),
       inv, "po_stride_head", "264 bytes"},
      {"f32 out alignment", I([](auto& p) { p.o_stride_token = 2 * 64 + 2; }), inv, "o_stride_token", "520 bytes"},
      {"out overlap", S([](auto& p) { p.o_stride_token = 7 * 128; }), inv, "o_stride_token", "overlap"},
      {"out stride 2^31", S([](auto& p) { p.o_stride_token = int64_t(1) << 32; }), inv, "o_stride_token", "2^31"},
      {"partial_lse overlap", S([](auto& p) { p.plse_stride_rank = 79; }), inv, "plse_stride_rank", "overlap"},
      {"partial_lse transposed overlap", I([](auto& p) { p.plse_stride_head = 14; }), inv, "plse_stride_head", "overlap"},
      {"partial_lse negative", S([](auto& p) { p.plse_stride_head = -1; }), inv, "plse_stride_head", "(-1)"},
      {"lse overlap", S([](auto& p) { p.lse_stride_token = 4; }), inv, "lse_stride_token", "overlap"},
      {"lse stride 2^31", I([](auto& p) { p.lse_stride_head = int64_t(1) << 31; }), inv, "lse_stride_head", "2^31"},
  };
  hipattn::testing::expect_rejections(rows);
}

TEST(MergeRules, AcceptedCorners) {
  const std::vector<std::pair<const char*, std::function<void(MergeAttentionStatesParams&)>>> rows = {
      {"as is", [](auto&) {}},
      {"no lse out", [](auto& p) { p.lse = nullptr; p.lse_stride_head = p.lse_stride_token = -7; }},
      {"empty call, null pointers", [](auto& p) {
         p.num_tokens = 0;
         p.partial_out = nullptr;
         p.partial_lse = nullptr;
         p.out = nullptr;
         p.lse = nullptr;
       }},
      {"one rank, any rank stride", [](auto& p) { p.num_ranks = 1; p.po_stride_rank = 3; p.plse_stride_rank = 0; }},
      {"max ranks", [](auto& p) { p.num_ranks = hipattn::kMergeMaxRanks; }},
      {"one head, any head strides", [](auto& p) { p.num_heads = 1; p.po_stride_head = p.o_stride_head = 5; p.plse_stride_head = 0; p.lse_stride_head = 0; }},
      {"separate rank buffers", [](auto& p) { p.po_stride_rank = int64_t(1) << 24; p.plse_stride_rank = 1000; }},
      {"interleaved ranks", [](auto& p) { p.po_stride_rank = 8 * 136; p.po_stride_token = 4 * 8 * 136; }},
      {"f32 output, 16-byte strides", [](auto& p) { p.out_dtype = DType::f32; p.o_stride_head = 132; p.o_stride_token = 8 * 132; }},
      {"f16 partials", [](auto& p) { p.partial_dtype = DType::f16; }},
      {"lse out [heads, tokens]", [](auto& p) { p.lse_stride_token = 1; p.lse_stride_head = 10; }},
      {"unaligned lse strides", [](auto& p) { p.plse_stride_token = 9; p.plse_stride_rank = 91; }},
  };
  for (const auto& [name, mutate] : rows) {
    MergeAttentionStatesParams p = stacked();
    mutate(p);
    EXPECT_TRUE(validate(p).ok()) << name << ": " << validate(p).summary();
  }
  for (int32_t d = 8; d <= 1024; d += 8) {
    MergeAttentionStatesParams p = stacked();
    p.head_size = d;
    p.po_stride_head = p.o_stride_head = d;
    p.po_stride_token = p.o_stride_token = 8 * d;
    p.po_stride_rank = 80 * d;
    EXPECT_TRUE(validate(p).ok()) << d << ": " << validate(p).summary();
  }
}

TEST(MergeRules, IndependentViolationsAreAllReported) {
  MergeAttentionStatesParams p = stacked();
  p.num_ranks = 0;
  p.out_dtype = DType::fp8_e4m3fn;
  p.out = nullptr;
  p.plse_stride_rank = -3;
  const hipattn::ValidationReport r = validate(p);
  ASSERT_EQ(r.size(), 4u) << r.summary();
  EXPECT_EQ(r.issues[0].field, "num_ranks");
  EXPECT_EQ(r.issues[1].field, "out_dtype");
  EXPECT_EQ(r.issues[2].field, "out");
  EXPECT_EQ(r.issues[3].field, "plse_stride_rank");
  try {
    hipattn::throw_if_error(r);
    ADD_FAILURE() << "no throw";
  } catch (const hipattn::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(e.field(), "num_ranks");
    EXPECT_NE(std::string(e.what()).find("+3 more"), std::string::npos) << e.what();
  }
}

TEST(MergeRules, LaunchGeometry) {
  using hipattn::merge_threads_per_item;
  // The head's 8-column chunks over at most 64 threads, evenly.
  EXPECT_EQ(merge_threads_per_item(8), 1);
  EXPECT_EQ(merge_threads_per_item(64), 8);
  EXPECT_EQ(merge_threads_per_item(72), 9);
  EXPECT_EQ(merge_threads_per_item(128), 16);
  EXPECT_EQ(merge_threads_per_item(256), 32);
  EXPECT_EQ(merge_threads_per_item(512), 64);
  EXPECT_EQ(merge_threads_per_item(520), 33);
  EXPECT_EQ(merge_threads_per_item(576), 36);
  EXPECT_EQ(merge_threads_per_item(1024), 64);
  for (int32_t d = 8; d <= 1024; d += 8) {
    const int t = merge_threads_per_item(d), chunks = d / 8;
    EXPECT_LE(t, hipattn::kMergeMaxThreadsPerItem) << d;
    EXPECT_LE(t, chunks) << d << ": every thread has a chunk";
    EXPECT_LE((chunks + t - 1) / t, 2) << d << ": at most two chunks a thread";
  }
  MergeAttentionStatesParams p = stacked();  // 10 tokens x 8 heads, d 128: 16 threads an item, 16 items a block
  hipattn::MergeStatesGeometry g = hipattn::merge_states_geometry(p);
  EXPECT_EQ(g.threads_per_item, 16);
  EXPECT_EQ(g.threads, 256);
  EXPECT_EQ(g.blocks, 5);
  p.head_size = 72;  // 9 threads an item, 28 items a block
  g = hipattn::merge_states_geometry(p);
  EXPECT_EQ(g.threads, 252);
  EXPECT_EQ(g.blocks, 3);
  p.num_tokens = 0;
  EXPECT_EQ(hipattn::merge_states_geometry(p).blocks, 0);
  p.num_tokens = INT32_MAX;  // the grid is capped; the kernel walks the rest
  p.num_heads = 64;
  EXPECT_EQ(hipattn::merge_states_geometry(p).blocks, hipattn::kMergeMaxBlocks);
  const hipattn::MergeStatesArgs a = hipattn::make_merge_states_args(p);
  EXPECT_EQ(a.num_items, int64_t(INT32_MAX) * 64);
  EXPECT_EQ(a.threads_per_item, 9);
}

}  // namespace
