// tests/host/test_paged_decode_plan.cpp: the host side of paged decode (issue 10):
//   * validation (problem/paged_decode_rules.hpp): a valid problem passes in every variant (short
//     contexts, context 0, max_seqlen_k < q_len included); each rule fires naming its field and
//     carrying the bad value; the host-array checks; the traits;
//   * to_unified_params (problem/paged_decode_params.hpp);
//   * the plan (dispatch/paged_decode_plan.hpp): tile kind, rows, grid, one-partition / planned /
//     batch-invariant capacities (whole waves, ALGORITHM.md section 8), the workspace layout, the options' errors; the capacity suffices for
//     every length within the bounds;
//   * paged_decode_workspace_size(traits, PlanDevice) >= the workspace of every call within the
//     traits (a property over many random traits and calls, every target);
//   * the decode planner's host plan (kernels/common/task_plan.hpp) for multi-row items (q_len > 1)
//     and windows: every visible tile covered exactly once, nothing outside the visible keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hipattn/dispatch/paged_decode_plan.hpp"
#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/problem/paged_decode_params.hpp"
#include "hipattn/problem/paged_decode_rules.hpp"

namespace {

using hipattn::DecodeItemShape;
using hipattn::DType;
using hipattn::Error;
using hipattn::ErrorCode;
using hipattn::KvScaleMode;
using hipattn::PagedDecodeOptions;
using hipattn::PagedDecodeParams;
using hipattn::PagedDecodePlan;
using hipattn::PagedDecodeSplit;
using hipattn::PagedDecodeTraits;
using hipattn::PlanDevice;
using hipattn::PlanTask;
using hipattn::SlotSplit;
using hipattn::Target;
using hipattn::UnifiedTileKind;
using hipattn::ValidationReport;

template <class T>
T* fake(uintptr_t a) {
  return reinterpret_cast<T*>(a);
}

// A valid problem: 3 sequences of q_len rows, 8 q heads over 2 kv heads, d 128, fp16, an NHD cache of
// 8 blocks of 16 slots, block-table rows of 5 (4 used at most), max_seqlen_k 50; fake device pointers.
PagedDecodeParams valid(int32_t q_len = 2) {
  PagedDecodeParams p;
  p.q = fake<const void>(0x10000);
  p.q_dtype = DType::f16;
  p.q_stride_head = 128;
  p.q_stride_token = 8 * 128;
  p.q_len = q_len;
  p.k_cache = fake<const void>(0x200000);
  p.v_cache = fake<const void>(0x400000);
  p.kv_dtype = DType::f16;
  p.k_stride_block = p.v_stride_block = 16 * 2 * 128;
  p.k_stride_slot = p.v_stride_slot = 2 * 128;
  p.k_stride_head = p.v_stride_head = 128;
  p.num_blocks = 8;
  p.block_size = 16;
  p.scale_stride_block = 16 * 2, p.scale_stride_slot = 2, p.scale_stride_head = 1;
  p.block_table = fake<const int32_t>(0x600000);
  p.block_table_stride = 5;
  p.max_blocks_per_seq = 4;
  p.seq_lens_k = fake<const int32_t>(0x610000);
  p.num_seqs = 3;
  p.max_seqlen_k = 50;
  p.num_q_heads = 8;
  p.num_kv_heads = 2;
  p.head_size = 128;
  p.scale = 0.088f;
  p.out = fake<void>(0x700000);
  p.o_stride_head = 128;
  p.o_stride_token = 8 * 128;
  return p;
}

std::string report(const ValidationReport& r) { return r.ok() ? "ok" : r.summary(); }

// ---------------------------------------------------------------------------------------------
// validation

TEST(PagedDecodeRules, ValidProblemsPass) {
  for (int32_t q = 1; q <= hipattn::kPagedDecodeMaxQLen; ++q) {
    PagedDecodeParams p = valid(q);
    EXPECT_TRUE(validate(p).ok()) << "q_len " << q << ": " << report(validate(p));
  }
  std::vector<std::pair<const char*, std::function<void(PagedDecodeParams&)>>> variants = {
      {"HND cache", [](PagedDecodeParams& p) { p.k_stride_slot = p.v_stride_slot = 128; p.k_stride_head = p.v_stride_head = 16 * 128; }},
      {"bf16", [](PagedDecodeParams& p) { p.q_dtype = p.kv_dtype = DType::bf16; }},
      {"fp8 per-tensor pointers", [](PagedDecodeParams& p) {
         p.kv_dtype = DType::fp8_e4m3fn, p.kv_scale_mode = KvScaleMode::per_tensor;
         p.k_scale = fake<const float>(0x800000), p.v_scale = fake<const float>(0x800004);
         p.k_scale_value = NAN;  // ignored: the pointer is set
       }},
      {"fp8 per-tensor host floats", [](PagedDecodeParams& p) {
         p.kv_dtype = DType::fp8_e4m3fnuz, p.kv_scale_mode = KvScaleMode::per_tensor;
         p.k_scale_value = 0.02f, p.v_scale_value = 3.f;
       }},
      {"fp8 per-tensor host floats unset (0: the scale 1)", [](PagedDecodeParams& p) {
         p.kv_dtype = DType::fp8_e4m3fn, p.kv_scale_mode = KvScaleMode::per_tensor;
         p.k_scale_value = 0.f, p.v_scale_value = 0.f;
       }},
      {"fp8 queries with q_scale unset (0: the scale 1)", [](PagedDecodeParams& p) {
         p.q_dtype = DType::fp8_e4m3fn, p.out_format.dtype = DType::f16, p.q_scale.host = 0.f;
       }},
      {"fp8 per-(token, head)", [](PagedDecodeParams& p) {
         p.kv_dtype = DType::fp8_e4m3fn, p.kv_scale_mode = KvScaleMode::per_token_head;
         p.k_scale = fake<const float>(0x800000), p.v_scale = fake<const float>(0x900000);
       }},
      {"features and LSE", [](PagedDecodeParams& p) {
         p.sinks = fake<const float>(0xA00000), p.alibi_slopes = fake<const float>(0xA10000);
         p.softcap = 30.f, p.window_left = 0;
         p.lse = fake<float>(0xB00000), p.lse_stride_head = p.num_seqs * p.q_len;
       }},
      {"max_seqlen_k 0 (every context empty)", [](PagedDecodeParams& p) { p.max_seqlen_k = 0; p.max_blocks_per_seq = 1; }},
      {"max_seqlen_k below q_len", [](PagedDecodeParams& p) { p.q_len = 8; p.max_seqlen_k = 3; }},
      {"empty batch with null rows", [](PagedDecodeParams& p) {
         p.num_seqs = 0, p.q = nullptr, p.out = nullptr, p.block_table = nullptr, p.seq_lens_k = nullptr;
       }},
      {"any page size", [](PagedDecodeParams& p) {
         p.block_size = 7, p.k_stride_block = p.v_stride_block = 7 * 2 * 128, p.max_blocks_per_seq = 8, p.block_table_stride = 8;
       }},
  };
  for (auto& [name, mutate] : variants) {
    PagedDecodeParams p = valid();
    mutate(p);
    EXPECT_TRUE(validate(p).ok()) << name << ": " << report(validate(p));
  }
}

struct Rejected {
  const char* name;
  std::function<void(PagedDecodeParams&)> mutate;
  ErrorCode code;
  const char* field;
  std::vector<std::string> words;  // the message carries these (the bad value)
};

TEST(PagedDecodeRules, EachRuleFiresNamingItsFieldAndValue) {
  const std::vector<Rejected> rows = {
      {"q_len 0", [](PagedDecodeParams& p) { p.q_len = 0; }, ErrorCode::unsupported, "q_len", {"q_len (0)", "[1, 8]"}},
      {"q_len 9", [](PagedDecodeParams& p) { p.q_len = 9; }, ErrorCode::unsupported, "q_len", {"q_len (9)"}},
      {"q_len -3", [](PagedDecodeParams& p) { p.q_len = -3; }, ErrorCode::unsupported, "q_len", {"(-3)"}},
      {"NaN k_scale_value", [](PagedDecodeParams& p) {
         p.kv_dtype = DType::fp8_e4m3fn, p.kv_scale_mode = KvScaleMode::per_tensor, p.k_scale_value = NAN;
       }, ErrorCode::invalid_argument, "k_scale_value", {"nan"}},
      {"negative k_scale_value", [](PagedDecodeParams& p) {
         p.kv_dtype = DType::fp8_e4m3fn, p.kv_scale_mode = KvScaleMode::per_tensor, p.k_scale_value = -0.5f;
       }, ErrorCode::invalid_argument, "k_scale_value", {"(-0.5)"}},
      {"negative v_scale_value", [](PagedDecodeParams& p) {
         p.kv_dtype = DType::fp8_e4m3fnuz, p.kv_scale_mode = KvScaleMode::per_tensor, p.v_scale_value = -2.f;
       }, ErrorCode::invalid_argument, "v_scale_value", {"(-2)"}},
      {"Inf v_scale_value", [](PagedDecodeParams& p) {
         p.kv_dtype = DType::fp8_e4m3fn, p.kv_scale_mode = KvScaleMode::per_tensor, p.v_scale_value = INFINITY;
       }, ErrorCode::invalid_argument, "v_scale_value", {"inf"}},
      {"per_token_head without k_scale", [](PagedDecodeParams& p) {
         p.kv_dtype = DType::fp8_e4m3fn, p.kv_scale_mode = KvScaleMode::per_token_head, p.v_scale = fake<const float>(0x900000);
       }, ErrorCode::invalid_argument, "k_scale", {"nullptr", "per_token_head"}},
      {"per_token_head without v_scale", [](PagedDecodeParams& p) {
         p.kv_dtype = DType::fp8_e4m3fn, p.kv_scale_mode = KvScaleMode::per_token_head, p.k_scale = fake<const float>(0x900000);
       }, ErrorCode::invalid_argument, "v_scale", {"nullptr"}},
      {"fp8 without a scale mode", [](PagedDecodeParams& p) { p.kv_dtype = DType::fp8_e4m3fn; },
       ErrorCode::invalid_argument, "kv_scale_mode", {"none", "fp8_e4m3fn"}},
      {"scale mode on 16-bit KV", [](PagedDecodeParams& p) { p.kv_scale_mode = KvScaleMode::per_tensor; },
       ErrorCode::invalid_argument, "kv_scale_mode", {"per_tensor"}},
      {"null q", [](PagedDecodeParams& p) { p.q = nullptr; }, ErrorCode::invalid_argument, "q", {"nullptr", "num_seqs > 0"}},
      {"null out", [](PagedDecodeParams& p) { p.out = nullptr; }, ErrorCode::invalid_argument, "out", {"nullptr"}},
      {"null block_table", [](PagedDecodeParams& p) { p.block_table = nullptr; }, ErrorCode::invalid_argument, "block_table", {"nullptr"}},
      {"null seq_lens_k", [](PagedDecodeParams& p) { p.seq_lens_k = nullptr; }, ErrorCode::invalid_argument, "seq_lens_k", {"nullptr"}},
      {"null k_cache", [](PagedDecodeParams& p) { p.k_cache = nullptr; }, ErrorCode::invalid_argument, "k_cache", {"nullptr"}},
      {"misaligned q", [](PagedDecodeParams& p) { p.q = fake<const void>(0x10008); }, ErrorCode::invalid_argument, "q",
       {"0x10008", "16-byte"}},
      {"misaligned sinks", [](PagedDecodeParams& p) { p.sinks = fake<const float>(0xA00002); }, ErrorCode::invalid_argument,
       "sinks", {"0xa00002"}},
      {"kv heads not dividing", [](PagedDecodeParams& p) { p.num_kv_heads = 3; }, ErrorCode::invalid_argument, "num_kv_heads",
       {"(8)", "(3)"}},
      {"head size 80", [](PagedDecodeParams& p) { p.head_size = 80; }, ErrorCode::unsupported, "head_size", {"(80)"}},
      {"kv dtype other 16-bit", [](PagedDecodeParams& p) { p.kv_dtype = DType::bf16; }, ErrorCode::unsupported, "kv_dtype",
       {"bf16", "f16"}},
      {"q dtype fp8 without an output dtype", [](PagedDecodeParams& p) { p.q_dtype = DType::fp8_e4m3fn; },
       ErrorCode::invalid_argument, "out_format.dtype", {"unset"}},
      {"q dtype fp8 scale negative", [](PagedDecodeParams& p) { p.q_dtype = DType::fp8_e4m3fn, p.out_format.dtype = DType::f16, p.q_scale.host = -1.f; },
       ErrorCode::invalid_argument, "q_scale.host", {"(-1)"}},
      {"fp8 output scale NaN", [](PagedDecodeParams& p) { p.out_format.dtype = DType::fp8_e4m3fnuz, p.out_format.scale.host = std::nanf(""); },
       ErrorCode::invalid_argument, "out_format.scale.host", {"nan"}},
      {"negative num_seqs", [](PagedDecodeParams& p) { p.num_seqs = -1; }, ErrorCode::invalid_argument, "num_seqs", {"(-1)"}},
      {"block_size 0", [](PagedDecodeParams& p) { p.block_size = 0; }, ErrorCode::invalid_argument, "block_size", {"(0)"}},
      {"num_blocks 0", [](PagedDecodeParams& p) { p.num_blocks = 0; }, ErrorCode::invalid_argument, "num_blocks", {"(0)"}},
      {"table too narrow for max_seqlen_k", [](PagedDecodeParams& p) { p.max_seqlen_k = 65; }, ErrorCode::invalid_argument,
       "max_blocks_per_seq", {"(4)", "(65)"}},
      {"table stride below the row", [](PagedDecodeParams& p) { p.block_table_stride = 3; }, ErrorCode::invalid_argument,
       "block_table_stride", {"(3)"}},
      {"negative max_seqlen_k", [](PagedDecodeParams& p) { p.max_seqlen_k = -1; }, ErrorCode::invalid_argument, "max_seqlen_k",
       {"(-1)"}},
      {"scale 0", [](PagedDecodeParams& p) { p.scale = 0.f; }, ErrorCode::invalid_argument, "scale", {"(0)"}},
      {"negative softcap", [](PagedDecodeParams& p) { p.softcap = -1.f; }, ErrorCode::invalid_argument, "softcap", {"(-1)"}},
      {"window_left -2", [](PagedDecodeParams& p) { p.window_left = -2; }, ErrorCode::invalid_argument, "window_left", {"(-2)"}},
      {"lse stride below num_seqs x q_len", [](PagedDecodeParams& p) { p.lse = fake<float>(0xB00000); p.lse_stride_head = 5; },
       ErrorCode::invalid_argument, "lse_stride_head", {"(5)", "(6)"}},
      {"overlapping q heads", [](PagedDecodeParams& p) { p.q_stride_head = 64; }, ErrorCode::invalid_argument, "q_stride_head",
       {"(64)"}},
      {"k stride not 16-byte", [](PagedDecodeParams& p) { p.k_stride_head = 132; p.k_stride_slot = 2 * 132; p.k_stride_block = 32 * 132; },
       ErrorCode::invalid_argument, "k_stride_head", {"132"}},
  };
  for (const Rejected& row : rows) {
    PagedDecodeParams p = valid();
    row.mutate(p);
    const ValidationReport r = validate(p);
    ASSERT_FALSE(r.ok()) << row.name << ": accepted";
    EXPECT_EQ(r.field(), row.field) << row.name << ": " << r.summary();
    EXPECT_EQ(r.code(), row.code) << row.name << ": " << r.summary();
    for (const std::string& w : row.words)
      EXPECT_NE(r.message().find(w), std::string::npos) << row.name << ": message \"" << r.message() << "\" lacks \"" << w << "\"";
    try {
      hipattn::throw_if_error(r);
      ADD_FAILURE() << row.name << ": throw_if_error did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), row.field);
      EXPECT_EQ(e.code(), row.code);
    }
  }
}

TEST(PagedDecodeRules, HostArraysShortContextsAreValid) {
  PagedDecodeParams p = valid(8);
  const std::vector<int32_t> bt = {3, 5, 0, 1, -7,   // 50 keys: 4 pages, a padded entry with garbage
                                   -1, -1, -1, -1, -1,  // context 0: nothing used
                                   6, 99, 99, 99, 99};   // context 3 (< q_len 8): one page
  const std::vector<int32_t> lens = {50, 0, 3};
  EXPECT_TRUE(validate(p, lens, bt).ok()) << report(validate(p, lens, bt));
  EXPECT_TRUE(validate(p, lens).ok()) << "no block table: not checked";
}

TEST(PagedDecodeRules, HostArraysRejectWhatTheKernelCannotRead) {
  PagedDecodeParams p = valid(2);
  const std::vector<int32_t> bt = {3, 5, 0, 1, -7, -1, -1, -1, -1, -1, 6, 99, 99, 99, 99};
  {
    const ValidationReport r = validate(p, std::vector<int32_t>{51, 0, 3}, bt);
    EXPECT_EQ(r.field(), "max_seqlen_k") << report(r);
    EXPECT_NE(r.message().find("(51)"), std::string::npos) << r.message();
  }
  {
    const ValidationReport r = validate(p, std::vector<int32_t>{50, -4, 3}, bt);
    EXPECT_EQ(r.field(), "seq_lens_k") << report(r);
    EXPECT_NE(r.message().find("(-4)"), std::string::npos) << r.message();
  }
  {
    const ValidationReport r = validate(p, std::vector<int32_t>{50, 0, 17}, bt);  // 17 keys use entry 99
    EXPECT_EQ(r.field(), "block_table") << report(r);
    EXPECT_NE(r.message().find("99"), std::string::npos) << r.message();
  }
  {
    const ValidationReport r = validate(p, std::vector<int32_t>{50, 0}, bt);
    EXPECT_EQ(r.field(), "seq_lens_k") << report(r);
  }
  {  // the params themselves first
    PagedDecodeParams bad = p;
    bad.q_len = 0;
    EXPECT_EQ(validate(bad, std::vector<int32_t>{50, 0, 3}, bt).field(), "q_len");
  }
}

// Per-tensor fp8 scales given as host floats (pointers null) are valid with the host arrays too.
TEST(PagedDecodeRules, HostArraysWithHostFloatScales) {
  PagedDecodeParams p = valid(2);
  p.kv_dtype = DType::fp8_e4m3fn;
  p.kv_scale_mode = KvScaleMode::per_tensor;
  p.k_scale_value = 0.5f, p.v_scale_value = 0.25f;
  ASSERT_TRUE(validate(p).ok()) << report(validate(p));
  const std::vector<int32_t> bt = {3, 5, 0, 1, -7, -1, -1, -1, -1, -1, 6, 99, 99, 99, 99};
  const ValidationReport r = validate(p, std::vector<int32_t>{50, 0, 3}, bt);
  EXPECT_TRUE(r.ok()) << "validate(p, host) rejects what validate(p) accepts: " << report(r);
}

TEST(PagedDecodeRules, Traits) {
  PagedDecodeTraits t{.max_num_seqs = 64, .max_q_len = 4, .num_q_heads = 16, .num_kv_heads = 1, .max_head_size = 128,
                      .max_seqlen_k = 32768};
  EXPECT_TRUE(validate(t).ok()) << report(validate(t));
  struct Row { const char* name; std::function<void(PagedDecodeTraits&)> m; ErrorCode code; const char* field; const char* word; };
  const std::vector<Row> rows = {
      {"max_q_len 0", [](PagedDecodeTraits& x) { x.max_q_len = 0; }, ErrorCode::unsupported, "max_q_len", "(0)"},
      {"max_q_len 9", [](PagedDecodeTraits& x) { x.max_q_len = 9; }, ErrorCode::unsupported, "max_q_len", "(9)"},
      {"negative seqs", [](PagedDecodeTraits& x) { x.max_num_seqs = -1; }, ErrorCode::invalid_argument, "max_num_seqs", "(-1)"},
      {"no q heads", [](PagedDecodeTraits& x) { x.num_q_heads = 0; }, ErrorCode::invalid_argument, "num_q_heads", "(0)"},
      {"kv heads not dividing", [](PagedDecodeTraits& x) { x.num_kv_heads = 3; }, ErrorCode::invalid_argument, "num_kv_heads", "(3)"},
      {"head 0", [](PagedDecodeTraits& x) { x.max_head_size = 0; }, ErrorCode::invalid_argument, "max_head_size", "(0)"},
      {"negative context", [](PagedDecodeTraits& x) { x.max_seqlen_k = -5; }, ErrorCode::invalid_argument, "max_seqlen_k", "(-5)"},
  };
  for (const Row& row : rows) {
    PagedDecodeTraits x = t;
    row.m(x);
    const ValidationReport r = validate(x);
    EXPECT_EQ(r.field(), row.field) << row.name << ": " << report(r);
    EXPECT_EQ(r.code(), row.code) << row.name;
    EXPECT_NE(r.message().find(row.word), std::string::npos) << row.name << ": " << r.message();
    try {
      (void)hipattn::paged_decode_workspace_size(x, PlanDevice{});
      ADD_FAILURE() << row.name << ": paged_decode_workspace_size accepted bad traits";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), row.field);
    }
  }
}

TEST(PagedDecodeParamsView, ToUnifiedParamsIsTheSameProblem) {
  PagedDecodeParams p = valid(3);
  p.kv_dtype = DType::fp8_e4m3fnuz;
  p.kv_scale_mode = KvScaleMode::per_tensor;
  p.k_scale_value = 0.5f, p.v_scale_value = 0.25f;
  p.window_left = 17, p.softcap = 12.f;
  p.sinks = fake<const float>(0xA00000), p.alibi_slopes = fake<const float>(0xA10000);
  p.lse = fake<float>(0xB00000), p.lse_stride_head = 11;
  const int32_t cu[] = {0, 3, 6, 9};
  const float ks = 0.5f, vs = 0.25f;
  const hipattn::UnifiedAttentionParams u = hipattn::to_unified_params(p, cu, &ks, &vs);
  EXPECT_EQ(u.cu_seqlens_q, cu);
  EXPECT_EQ(u.num_tokens, 9);
  EXPECT_EQ(u.max_seqlen_q, 3);
  EXPECT_TRUE(u.causal);
  EXPECT_EQ(u.qq_bias, nullptr);
  EXPECT_EQ(u.k_scale, &ks) << "host-float scales: the caller's pointers";
  EXPECT_EQ(u.v_scale, &vs);
  EXPECT_EQ(u.q, p.q);
  EXPECT_EQ(u.out, p.out);
  EXPECT_EQ(u.lse, p.lse);
  EXPECT_EQ(u.lse_stride_head, 11);
  EXPECT_EQ(u.window_left, 17);
  EXPECT_EQ(u.softcap, 12.f);
  EXPECT_EQ(u.sinks, p.sinks);
  EXPECT_EQ(u.alibi_slopes, p.alibi_slopes);
  EXPECT_EQ(u.block_table_stride, 5);
  EXPECT_EQ(u.max_blocks_per_seq, 4);
  EXPECT_EQ(u.k_stride_slot, p.k_stride_slot);
  EXPECT_EQ(u.v_stride_block, p.v_stride_block);
  EXPECT_EQ(u.max_seqlen_k, 50);
  p.k_scale = fake<const float>(0x800000);
  EXPECT_EQ(hipattn::to_unified_params(p, cu, &ks, &vs).k_scale, p.k_scale) << "a device pointer wins";
  p.num_seqs = 0;
  EXPECT_EQ(hipattn::to_unified_params(p, cu).max_seqlen_q, 0);
  EXPECT_EQ(hipattn::to_unified_params(p, cu).num_tokens, 0);
}

// ---------------------------------------------------------------------------------------------
// the plan

PlanDevice device(Target t, int sms) {
  PlanDevice d;
  d.target = t;
  d.multiprocessor_count = sms;
  return d;
}
const PlanDevice kDevices[] = {device(Target::sm90, 132), device(Target::sm90, 78), device(Target::gfx942, 304),
                               device(Target::gfx950, 256)};

PagedDecodeParams shape(int32_t seqs, int32_t q_len, int32_t hq, int32_t hkv, int32_t d, int32_t max_k,
                        DType kv = DType::bf16, int32_t window = -1) {
  PagedDecodeParams p;
  p.num_seqs = seqs;
  p.q_len = q_len;
  p.num_q_heads = hq;
  p.num_kv_heads = hkv;
  p.head_size = d;
  p.max_seqlen_k = max_k;
  p.q_dtype = DType::bf16;
  p.kv_dtype = kv;
  p.window_left = window;
  return p;
}
PagedDecodeOptions opts(PagedDecodeSplit s, int32_t budget = 0, int32_t bik = 0) {
  PagedDecodeOptions o;
  o.split = s;
  o.workgroup_budget = budget;
  o.batch_invariant_keys = bik;
  return o;
}

TEST(PagedDecodePlan, TileKindRowsAndGrid) {
  for (const PlanDevice& dev : kDevices)
    for (int32_t d : hipattn::UnifiedInstanceTable::head_sizes)
      for (int32_t group : {1, 2, 3, 4, 5, 8, 16, 32, 64, 128})
        for (int32_t kv_heads : {1, 2, 8})
          for (int32_t q = 1; q <= 8; ++q) {
            const PagedDecodeParams p = shape(5, q, group * kv_heads, kv_heads, d, 4096);
            const PagedDecodePlan plan = plan_paged_decode(p, opts(PagedDecodeSplit::one_partition), dev);
            // 16 rows: the decode tile; 17-32 on CDNA up to d 128: the verify tile (sm_90 has none yet)
            const bool verify = q * group <= 32 && d <= 128 && dev.target != Target::sm90;
            const UnifiedTileKind kind = q * group <= 16 ? UnifiedTileKind::decode
                                         : verify        ? UnifiedTileKind::verify
                                                         : UnifiedTileKind::prefill;
            const std::string what = std::string(hipattn::target_name(dev.target)) + " d" + std::to_string(d) + " group " +
                                     std::to_string(group) + " q_len " + std::to_string(q);
            ASSERT_EQ(plan.tile_kind, kind) << what;
            const hipattn::UnifiedTile t = hipattn::unified_tile(kind, d, dev.target, hipattn::is_fp8(p.kv_dtype));
            EXPECT_EQ(plan.tile.rows(), t.rows()) << what;
            EXPECT_EQ(plan.tile.keys(), t.keys()) << what;
            const int32_t bm = t.rows();
            EXPECT_EQ(plan.rows_per_token, std::min(group, bm)) << what;
            EXPECT_EQ(plan.block_q, bm / plan.rows_per_token) << what;
            EXPECT_EQ(plan.head_chunks, (group + plan.rows_per_token - 1) / plan.rows_per_token) << what;
            EXPECT_EQ(plan.q_blocks, (q + plan.block_q - 1) / plan.block_q) << what;
            EXPECT_EQ(plan.grid_y, int64_t(kv_heads) * plan.head_chunks * plan.q_blocks) << what;
            // every (q row, head) of a kv head has a tile row
            EXPECT_GE(int64_t(plan.head_chunks) * plan.rows_per_token, group) << what;
            EXPECT_GE(int64_t(plan.q_blocks) * plan.block_q, q) << what;
            EXPECT_EQ(plan.residency, hipattn::unified_residency(t, d, false, dev.target)) << what;
          }
}

// Hand-computed sm_90 cases (decode tile 16 rows x 64 keys; prefill 64 rows x 64 keys, 32 keys above d 128).
TEST(PagedDecodePlan, Sm90Examples) {
  const PlanDevice h200 = device(Target::sm90, 132);
  struct Case { int32_t q, hq, hkv, d; UnifiedTileKind kind; int32_t rpt, block_q, chunks, q_blocks; int64_t grid_y; int32_t keys; };
  const Case cases[] = {
      {1, 16, 1, 128, UnifiedTileKind::decode, 16, 1, 1, 1, 1, 64},    // MiniMax decode: one row band
      {2, 16, 1, 128, UnifiedTileKind::prefill, 16, 4, 1, 1, 1, 64},   // MTP 2: 32 rows in one prefill tile
      {4, 16, 1, 128, UnifiedTileKind::prefill, 16, 4, 1, 1, 1, 64},   // 64 rows: exactly one tile
      {8, 16, 1, 128, UnifiedTileKind::prefill, 16, 4, 1, 2, 2, 64},   // 128 rows: two q-blocks
      {1, 32, 8, 128, UnifiedTileKind::decode, 4, 4, 1, 1, 8, 64},     // GQA 4
      {4, 32, 8, 256, UnifiedTileKind::decode, 4, 4, 1, 1, 8, 64},     // 16 rows
      {8, 32, 8, 256, UnifiedTileKind::prefill, 4, 16, 1, 1, 8, 32},   // 32 rows, d 256: 32-key tiles
      {1, 128, 1, 64, UnifiedTileKind::prefill, 64, 1, 2, 1, 2, 64},   // group 128: two head chunks
      {3, 128, 1, 64, UnifiedTileKind::prefill, 64, 1, 2, 3, 6, 64},
      {8, 8, 8, 64, UnifiedTileKind::decode, 1, 16, 1, 1, 8, 64},      // MHA q_len 8: 8 rows
  };
  for (const Case& c : cases) {
    const PagedDecodePlan plan = plan_paged_decode(shape(3, c.q, c.hq, c.hkv, c.d, 1000), PagedDecodeOptions{}, h200);
    const std::string what = "q" + std::to_string(c.q) + " " + std::to_string(c.hq) + "/" + std::to_string(c.hkv) + " d" + std::to_string(c.d);
    EXPECT_EQ(plan.tile_kind, c.kind) << what;
    EXPECT_EQ(plan.rows_per_token, c.rpt) << what;
    EXPECT_EQ(plan.block_q, c.block_q) << what;
    EXPECT_EQ(plan.head_chunks, c.chunks) << what;
    EXPECT_EQ(plan.q_blocks, c.q_blocks) << what;
    EXPECT_EQ(plan.grid_y, c.grid_y) << what;
    EXPECT_EQ(plan.tile.keys(), c.keys) << what;
  }
}

// One long sequence over 8 kv heads is cut into uniform segments that fill the device's resident
// decode workgroups: 1,024 on MI355X (256 CUs x 4) takes 128 segments (paged decode's cap; unified's
// is 64), 912 on MI300X (304 x 3) 114, 264 on the H200 (132 x 2) 33.
TEST(PagedDecodePlan, OneLongSequenceFillsTheDevice) {
  struct Case { Target t; int sms; int32_t segments; };
  for (const Case& c : {Case{Target::gfx950, 256, 128}, Case{Target::gfx942, 304, 114}, Case{Target::sm90, 132, 33}}) {
    const PagedDecodePlan plan = plan_paged_decode(shape(1, 1, 64, 8, 128, 131072), PagedDecodeOptions{}, device(c.t, c.sms));
    EXPECT_EQ(plan.split, hipattn::SlotSplit::uniform) << hipattn::target_name(c.t) << ": " << plan.reason;
    EXPECT_EQ(plan.segments, c.segments) << hipattn::target_name(c.t);
    EXPECT_EQ(int64_t(plan.segments) * plan.grid_y, int64_t(plan.residency) * c.sms) << hipattn::target_name(c.t);
  }
}

// Hand-computed CDNA cases of MTP verify: 17-32 rows a kv head take the verify tile (2 bands of 16
// rows; 32-key tiles on gfx950, 16 on gfx942) up to d 128, the prefill tile above; 16 rows stay on the decode tile.
TEST(PagedDecodePlan, CdnaVerifyExamples) {
  struct Case { Target t; int32_t q, hq, hkv, d; UnifiedTileKind kind; int32_t rpt, block_q, q_blocks, keys, stages; };
  const Case cases[] = {
      {Target::gfx950, 4, 64, 8, 128, UnifiedTileKind::verify, 8, 4, 1, 32, 2},   // MTP 4, GQA 8: 32 rows
      {Target::gfx942, 4, 64, 8, 128, UnifiedTileKind::verify, 8, 4, 1, 16, 1},   // gfx942: 16-key tiles
      {Target::gfx942, 3, 64, 8, 64, UnifiedTileKind::verify, 8, 4, 1, 16, 1},    // 24 rows
      {Target::gfx950, 8, 16, 4, 128, UnifiedTileKind::verify, 4, 8, 1, 32, 2},   // MTP 8, GQA 4
      {Target::gfx950, 2, 16, 1, 64, UnifiedTileKind::verify, 16, 2, 1, 32, 2},   // MTP 2, GQA 16
      {Target::gfx950, 4, 64, 8, 192, UnifiedTileKind::prefill, 8, 4, 1, 16, 2},  // d 192: the prefill tile (32 rows)
      {Target::gfx950, 8, 64, 8, 128, UnifiedTileKind::prefill, 8, 8, 1, 32, 2},  // 64 rows
      {Target::gfx942, 4, 32, 8, 128, UnifiedTileKind::decode, 4, 4, 1, 32, 1},   // 16 rows
  };
  for (const Case& c : cases) {
    const PagedDecodePlan plan = plan_paged_decode(shape(3, c.q, c.hq, c.hkv, c.d, 1000), PagedDecodeOptions{}, device(c.t, 256));
    const std::string what = std::string(hipattn::target_name(c.t)) + " q" + std::to_string(c.q) + " " +
                             std::to_string(c.hq) + "/" + std::to_string(c.hkv) + " d" + std::to_string(c.d);
    EXPECT_EQ(plan.tile_kind, c.kind) << what;
    EXPECT_EQ(plan.rows_per_token, c.rpt) << what;
    EXPECT_EQ(plan.block_q, c.block_q) << what;
    EXPECT_EQ(plan.q_blocks, c.q_blocks) << what;
    EXPECT_EQ(plan.tile.keys(), c.keys) << what;
    EXPECT_EQ(plan.tile.stages, c.stages) << what;
  }
}

// sm_90 fp8 decode tiles take a configuration with the page size compiled in and 32-bit offsets when
// the page is 16 / 32 / 64 / 128 and the cache is within 32-bit offsets; everything else keeps the
// any-page, 64-bit one (fast_page 0).
TEST(PagedDecodePlan, FastPageOnlyWhereMeasured) {
  const PlanDevice h200 = device(Target::sm90, 132);
  auto plan_of = [&](PagedDecodeParams p) { return plan_paged_decode(p, PagedDecodeOptions{}, h200); };
  PagedDecodeParams p = valid(1);
  p.kv_dtype = DType::fp8_e4m3fn;
  for (int32_t bs : {16, 32, 64, 128}) {
    p.block_size = bs;
    p.k_stride_block = p.v_stride_block = bs * 2 * 128;
    EXPECT_EQ(plan_of(p).fast_page, bs) << "page " << bs;
  }
  p.block_size = 16;
  p.k_stride_block = p.v_stride_block = 16 * 2 * 128;
  for (int32_t bs : {1, 8, 24, 256}) {
    PagedDecodeParams o = p;
    o.block_size = bs;
    o.k_stride_block = o.v_stride_block = bs * 2 * 128;
    EXPECT_EQ(plan_of(o).fast_page, 0) << "page " << bs;
  }
  PagedDecodeParams big = p;  // 2^31 elements and more: 64-bit offsets
  big.num_blocks = (int64_t(1) << 31) / big.k_stride_block + 1;
  ASSERT_TRUE(hipattn::needs_64bit_offsets(big));
  EXPECT_EQ(plan_of(big).fast_page, 0);
  PagedDecodeParams b16 = p;
  b16.kv_dtype = DType::f16;
  EXPECT_EQ(plan_of(b16).fast_page, 0);
  PagedDecodeParams mtp = p;  // 8 x 4 rows: the prefill tile
  mtp.q_len = 8;
  EXPECT_EQ(plan_of(mtp).tile_kind, UnifiedTileKind::prefill);
  EXPECT_EQ(plan_of(mtp).fast_page, 0);
  PagedDecodeParams rocm = p;
  rocm.kv_layout = hipattn::KvCacheLayout::rocm;
  hipattn::set_packed_rocm_kv_layout(rocm);
  EXPECT_EQ(plan_of(rocm).fast_page, 0);
  for (Target t : {Target::gfx942, Target::gfx950})
    EXPECT_EQ(plan_paged_decode(p, PagedDecodeOptions{}, device(t, 256)).fast_page, 0) << hipattn::target_name(t);
}

TEST(PagedDecodePlan, OnePartitionCapacityAndNoWorkspace) {
  for (const PlanDevice& dev : kDevices)
    for (int32_t seqs : {0, 1, 7, 1000}) {
      const PagedDecodePlan plan =
          plan_paged_decode(shape(seqs, 4, 32, 8, 128, 131072), opts(PagedDecodeSplit::one_partition), dev);
      EXPECT_FALSE(plan.split == SlotSplit::planned);
      EXPECT_EQ(plan.capacity, seqs);
      EXPECT_EQ(plan.fixed_tiles, 0);
      EXPECT_EQ(plan.workspace_bytes, 0u);
    }
}

// Planned capacity (ALGORITHM.md section 8): whole waves of floor(budget / grid_y) slots (at least
// one), as many waves as the sequences need at one task each, with half a wave to spare where a
// sequence may hold 16K keys (these shapes: 20000); budget = residency x SMs / CUs unless the caller
// gives one.
int64_t wave_capacity(int64_t seqs, int64_t budget, int64_t grid_y) {
  const int64_t per_wave = std::max<int64_t>(1, budget / grid_y);
  return std::max<int64_t>(1, (seqs + per_wave / 2 + per_wave - 1) / per_wave) * per_wave;
}

TEST(PagedDecodePlan, PlannedCapacityIsWholeWaves) {
  for (const PlanDevice& dev : kDevices)
    for (int32_t d : {64, 128, 256})
      for (DType kv : {DType::bf16, DType::fp8_e4m3fn})
        for (int32_t q : {1, 3, 8})
          for (int32_t seqs : {0, 1, 37, 500}) {
            const PagedDecodeParams p = shape(seqs, q, 32, 4, d, 20000, kv);
            const PagedDecodePlan def = plan_paged_decode(p, opts(PagedDecodeSplit::planned), dev);
            if (seqs == 0) {  // an empty batch launches nothing, forced or not
              EXPECT_FALSE(def.split == SlotSplit::planned);
              EXPECT_EQ(def.workspace_bytes, 0u);
              continue;
            }
            ASSERT_TRUE(def.split == SlotSplit::planned);
            EXPECT_EQ(def.residency, hipattn::unified_residency(def.tile, d, hipattn::is_fp8(kv), dev.target));
            const int64_t budget = int64_t(std::max(1, def.residency)) * dev.multiprocessor_count;
            EXPECT_EQ(def.capacity, wave_capacity(seqs, budget, def.grid_y)) << def.reason;
            EXPECT_EQ(def.workspace_bytes, hipattn::paged_decode_workspace(p, def.capacity).total);
            for (int32_t b : {1, 5, 64, 1000}) {
              const PagedDecodePlan plan = plan_paged_decode(p, opts(PagedDecodeSplit::planned, b), dev);
              const int64_t per_wave = std::max<int64_t>(1, b / plan.grid_y);
              EXPECT_EQ(plan.capacity, wave_capacity(seqs, b, plan.grid_y)) << "budget " << b;
              EXPECT_GE(plan.capacity, seqs) << "every sequence has a slot";
              EXPECT_EQ(plan.capacity % per_wave, 0) << "whole waves";
              EXPECT_GE(plan.capacity - seqs, per_wave / 2) << "half a wave to spare";
              EXPECT_LT(plan.capacity - std::max(seqs, 1), per_wave + per_wave / 2) << "no wave more than that";
              EXPECT_EQ(plan.wave_slots, per_wave) << "the planner's wave";
              EXPECT_EQ(plan.fixed_tiles, 0);
            }
          }
}

// Auto (ALGORITHM.md 8): one partition when no sequence can hold two tiles; uniform segments when
// one task a sequence leaves room for >= 3 segments each within one wave; else the planner.
TEST(PagedDecodePlan, AutoChoosesOnePartitionUniformOrPlanned) {
  const PlanDevice h200 = device(Target::sm90, 132);
  const auto plan = [&](int32_t seqs, int32_t max_k, int32_t window, int32_t kv_heads = 1) {
    return plan_paged_decode(shape(seqs, 1, 16 * kv_heads, kv_heads, 128, max_k, DType::bf16, window), PagedDecodeOptions{},
                             h200);
  };
  const auto one_partition = [](const PagedDecodePlan& p) { return p.split != SlotSplit::planned && p.segments == 1 && p.workspace_bytes == 0; };
  EXPECT_TRUE(one_partition(plan(4, 0, -1)));
  EXPECT_TRUE(one_partition(plan(4, 1, -1)));
  EXPECT_TRUE(one_partition(plan(4, 64, -1))) << "one 64-key tile";
  EXPECT_TRUE(plan(4, 65, -1).split == SlotSplit::planned) << "2 tiles: at most 2 segments, so the planner";
  const PagedDecodePlan longer = plan(4, 131072, -1);  // 4 workgroups at one task a sequence
  EXPECT_FALSE(longer.split == SlotSplit::planned);
  EXPECT_GE(longer.segments, 3);
  EXPECT_LE(int64_t(longer.segments) * 4, 4 * int64_t(longer.residency) * 132) << "uniform stays within 4 waves";
  EXPECT_EQ(longer.capacity, 4 * longer.segments);
  EXPECT_GT(longer.workspace_bytes, 0u);
  const PagedDecodePlan window = plan(4, 131072, 4095);
  EXPECT_FALSE(window.split == SlotSplit::planned);
  EXPECT_GE(window.segments, 3);
  EXPECT_TRUE(plan(256, 131072, -1, 8).split == SlotSplit::planned) << "2048 workgroups at one task a sequence: the planner";
  EXPECT_EQ(hipattn::paged_decode_max_tiles(shape(4, 1, 16, 1, 128, 131072, DType::bf16, 4095), 64), 65)
      << "a 4096-key window spans at most 65 tiles of 64";
  EXPECT_EQ(hipattn::paged_decode_max_tiles(shape(4, 8, 16, 1, 128, 131072, DType::bf16, 4095), 64), 66);
  EXPECT_EQ(hipattn::paged_decode_max_tiles(shape(4, 1, 16, 1, 128, 100, DType::bf16, 4095), 64), 2) << "the context bounds it";
  EXPECT_TRUE(plan_paged_decode(shape(4, 1, 16, 1, 128, 10), opts(PagedDecodeSplit::automatic, 0, 64), h200).split == SlotSplit::planned)
      << "batch-invariant plans are planned";
}

TEST(PagedDecodePlan, BatchInvariantCapacity) {
  for (const PlanDevice& dev : kDevices)
    for (int32_t keys : {1, 64, 100, 1024, 5000})
      for (int32_t window : {-1, 0, 1000})
        for (int32_t max_k : {0, 1, 64, 1025, 32768}) {
          const PagedDecodeParams p = shape(9, 4, 16, 2, 128, max_k, DType::bf16, window);
          const PagedDecodePlan plan = plan_paged_decode(p, opts(PagedDecodeSplit::planned, 0, keys), dev);
          const int32_t tk = plan.tile.keys();
          ASSERT_TRUE(plan.split == SlotSplit::planned);
          EXPECT_EQ(plan.fixed_tiles, (keys + tk - 1) / tk);
          const int32_t max_tiles = hipattn::paged_decode_max_tiles(p, tk);
          EXPECT_EQ(plan.capacity, 9 * std::max(1, (max_tiles + plan.fixed_tiles - 1) / plan.fixed_tiles));
          EXPECT_EQ(plan.workspace_bytes, hipattn::paged_decode_workspace(p, plan.capacity).total);
          // the same with auto
          EXPECT_EQ(plan_paged_decode(p, opts(PagedDecodeSplit::automatic, 0, keys), dev).capacity, plan.capacity);
        }
}

// The workspace: tasks, item_task0, status, partial outputs, partial LSEs; 256-byte aligned blocks,
// each large enough, none overlapping.
TEST(PagedDecodePlan, WorkspaceLayout) {
  for (int32_t capacity : {1, 7, 300})
    for (int32_t q : {1, 8})
      for (int32_t d : {64, 96, 256}) {
        const PagedDecodeParams p = shape(5, q, 12, 4, d, 1000);
        const hipattn::PagedDecodeWorkspace w = hipattn::paged_decode_workspace(p, capacity);
        const size_t rows = size_t(capacity) * q * 12;
        for (size_t x : {w.tasks, w.item_task0, w.status, w.o, w.lse, w.total}) EXPECT_EQ(x % 256, 0u);
        EXPECT_GE(w.item_task0 - w.tasks, size_t(capacity) * sizeof(PlanTask));
        EXPECT_GE(w.status - w.item_task0, 5 * sizeof(int32_t));
        EXPECT_GE(w.o - w.status, sizeof(int32_t));
        EXPECT_GE(w.lse - w.o, rows * d * sizeof(float));
        EXPECT_GE(w.total - w.lse, rows * sizeof(float));
      }
}

TEST(PagedDecodePlan, BadOptionsAndTargetsThrow) {
  const PagedDecodeParams p = shape(3, 1, 8, 2, 128, 1000);
  const auto expect = [&](const PagedDecodeOptions& o, const PlanDevice& dev, ErrorCode code, const char* field) {
    try {
      (void)plan_paged_decode(p, o, dev);
      ADD_FAILURE() << field << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
    }
  };
  const PlanDevice h200 = device(Target::sm90, 132);
  expect(opts(PagedDecodeSplit::planned, -1), h200, ErrorCode::invalid_argument, "options.workgroup_budget");
  expect(opts(PagedDecodeSplit::planned, 0, -1), h200, ErrorCode::invalid_argument, "options.batch_invariant_keys");
  expect(opts(PagedDecodeSplit::one_partition, 0, 1024), h200, ErrorCode::invalid_argument, "options.split");
  expect(PagedDecodeOptions{}, device(Target::host, 1), ErrorCode::unsupported, "target");
  expect(PagedDecodeOptions{}, device(Target::other, 1), ErrorCode::unsupported, "target");
}

// The plan's capacity holds every length within the bounds it was sized from: the host plan of
// random lengths <= max_seqlen_k never overflows, and no item has more tiles than
// paged_decode_max_tiles (brute force over every length for small bounds).
TEST(PagedDecodePlan, CapacityHoldsEveryLengthWithinTheBounds) {
  std::mt19937 rng(4242);
  for (int iter = 0; iter < 600; ++iter) {
    const PlanDevice dev = kDevices[rng() % 4];
    const int32_t hkv = 1 << (rng() % 4), group = 1 + rng() % 16;
    const int32_t d = hipattn::UnifiedInstanceTable::head_sizes[rng() % 5];
    const int32_t q = 1 + rng() % 8, seqs = 1 + rng() % 300;
    const int32_t max_k = rng() % 4 == 0 ? int32_t(rng() % 300) : int32_t(rng() % 70000);
    const int32_t window = rng() % 3 == 0 ? int32_t(rng() % 5000) : -1;
    const PagedDecodeParams p = shape(seqs, q, hkv * group, hkv, d, max_k, DType::bf16, window);
    const int32_t bik = rng() % 2 ? int32_t(1 + rng() % 4096) : 0;
    const PagedDecodeSplit split = bik ? PagedDecodeSplit::automatic : PagedDecodeSplit::planned;
    const PagedDecodePlan plan = plan_paged_decode(p, opts(split, rng() % 2 ? int32_t(rng() % 500) : 0, bik), dev);
    ASSERT_TRUE(plan.split == SlotSplit::planned);
    const DecodeItemShape item{q, plan.tile.keys(), true, window};
    const int32_t max_tiles = hipattn::paged_decode_max_tiles(p, plan.tile.keys());
    std::vector<int32_t> lens(static_cast<size_t>(seqs));
    for (auto& l : lens) l = rng() % 3 == 0 ? max_k : int32_t(rng() % (int64_t(max_k) + 1));
    for (int32_t l : lens) ASSERT_LE(item.tiles(l), max_tiles) << "length " << l;
    std::vector<PlanTask> tasks(size_t(plan.capacity));
    std::vector<int32_t> task0(lens.size()), n(lens.size()), first(lens.size());
    const int32_t status = hipattn::plan_decode_tasks_host(lens.data(), seqs, item, plan.capacity, plan.fixed_tiles,
                                                           tasks.data(), task0.data(), n.data(), first.data(),
                                                           plan.wave_slots);
    ASSERT_EQ(status, hipattn::kPlanOk) << "iteration " << iter << ": " << plan.reason;
    if (max_k <= 300) {
      for (int32_t l = 0; l <= max_k; ++l) ASSERT_LE(item.tiles(l), max_tiles) << "length " << l << " of at most " << max_k;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// the workspace size from traits

TEST(PagedDecodeWorkspaceSize, CoversEveryCallWithinTheTraits) {
  std::mt19937 rng(99);
  const DType kvs[] = {DType::f16, DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz};
  const int32_t max_heads[] = {64, 96, 100, 128, 192, 256, 300};
  int64_t calls = 0, planned = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const PlanDevice dev = kDevices[rng() % 4];
    PagedDecodeTraits t;
    t.max_num_seqs = rng() % 8 == 0 ? 0 : int32_t(1 + rng() % 512);
    t.max_q_len = 1 + rng() % 8;
    t.num_kv_heads = 1 << (rng() % 4);
    t.num_q_heads = t.num_kv_heads * int32_t(1 + rng() % 16);
    t.max_head_size = max_heads[rng() % 7];
    t.max_seqlen_k = rng() % 4 == 0 ? int32_t(rng() % 200) : int32_t(rng() % 200000);
    PagedDecodeOptions o;
    const int kind = int(rng() % 4);
    o.split = kind == 0 ? PagedDecodeSplit::one_partition : kind == 1 ? PagedDecodeSplit::planned : PagedDecodeSplit::automatic;
    if (rng() % 3 == 0) o.workgroup_budget = int32_t(rng() % 2000);
    if (o.split != PagedDecodeSplit::one_partition && rng() % 3 == 0) o.batch_invariant_keys = int32_t(1 + rng() % 5000);
    const size_t bytes = hipattn::paged_decode_workspace_size(t, dev, o);
    if (o.split == PagedDecodeSplit::one_partition) {
      EXPECT_EQ(bytes, 0u);
    }
    for (int c = 0; c < 40; ++c) {
      std::vector<int32_t> ds;
      for (int32_t d : hipattn::UnifiedInstanceTable::head_sizes)
        if (d <= t.max_head_size) ds.push_back(d);
      const int32_t d = ds[rng() % ds.size()];
      const int32_t seqs = int32_t(rng() % (int64_t(t.max_num_seqs) + 1));
      const int32_t q = 1 + int32_t(rng() % t.max_q_len);
      const int32_t max_k = rng() % 2 ? t.max_seqlen_k : int32_t(rng() % (int64_t(t.max_seqlen_k) + 1));
      const int32_t window = rng() % 3 == 0 ? int32_t(rng() % 10000) : -1;
      PagedDecodeParams p = shape(seqs, q, t.num_q_heads, t.num_kv_heads, d, max_k, kvs[rng() % 4], window);
      if (!hipattn::is_fp8(p.kv_dtype)) p.q_dtype = p.kv_dtype;
      const PagedDecodePlan plan = plan_paged_decode(p, o, dev);
      ++calls;
      planned += plan.split == SlotSplit::planned;
      ASSERT_GE(bytes, plan.workspace_bytes)
          << "iteration " << iter << " call " << c << ": traits {" << t.max_num_seqs << " seqs, q " << t.max_q_len << ", "
          << t.num_q_heads << "/" << t.num_kv_heads << " heads, d <= " << t.max_head_size << ", ctx <= " << t.max_seqlen_k
          << "} on " << hipattn::target_name(dev.target) << " give " << bytes << " bytes; the call (" << seqs << " seqs, q "
          << q << ", d " << d << ", ctx <= " << max_k << ", window " << window << ", kv " << hipattn::dtype_name(p.kv_dtype)
          << ") needs " << plan.workspace_bytes << " (" << plan.reason << ")";
    }
  }
  EXPECT_GT(planned, calls / 4) << "the property should see many planned calls";
}

// The sizes of the traits themselves (the largest call) are exactly the most any call needs.
TEST(PagedDecodeWorkspaceSize, IsTheLargestCallsWorkspace) {
  const PlanDevice h200 = device(Target::sm90, 132);
  PagedDecodeTraits t{.max_num_seqs = 64, .max_q_len = 4, .num_q_heads = 16, .num_kv_heads = 1, .max_head_size = 256,
                      .max_seqlen_k = 8192};
  size_t most = 0;
  for (int32_t d : hipattn::UnifiedInstanceTable::head_sizes)
    for (int32_t q = 1; q <= 4; ++q)
      for (DType kv : {DType::bf16, DType::fp8_e4m3fnuz})
        most = std::max(most, plan_paged_decode(shape(64, q, 16, 1, d, 8192, kv), PagedDecodeOptions{}, h200).workspace_bytes);
  // ... and the forced-planned and uniform shapes a call within the traits may take (a shorter
  // context can turn a uniform call planned; fewer sequences can take more segments each)
  size_t shapes = 0;
  for (int32_t d : hipattn::UnifiedInstanceTable::head_sizes)
    for (int32_t q = 1; q <= 4; ++q)
      for (DType kv : {DType::bf16, DType::fp8_e4m3fnuz})
        for (int32_t seqs = 1; seqs <= 64; ++seqs) {
          shapes = std::max(shapes, plan_paged_decode(shape(64, q, 16, 1, d, 8192, kv), opts(PagedDecodeSplit::planned), h200)
                                        .workspace_bytes);
          shapes = std::max(shapes, plan_paged_decode(shape(seqs, q, 16, 1, d, 8192, kv), PagedDecodeOptions{}, h200)
                                        .workspace_bytes);
        }
  EXPECT_GE(hipattn::paged_decode_workspace_size(t, h200), most);
  EXPECT_EQ(hipattn::paged_decode_workspace_size(t, h200), std::max(most, shapes));
  EXPECT_GT(most, 0u);
  t.max_seqlen_k = 32;  // no sequence holds more than one tile (32 keys: d > 128 prefill tiles): one partition
  EXPECT_EQ(hipattn::paged_decode_workspace_size(t, h200), 0u);
  EXPECT_GT(hipattn::paged_decode_workspace_size(t, h200, opts(PagedDecodeSplit::planned)), 0u);
}

// ---------------------------------------------------------------------------------------------
// the host plan of multi-row items and windows

// The keys some row of an item sees, by brute force over the rows (ALGORITHM.md section 2, step 3):
// row r of q_len is at position kv_len - q_len + r.
struct Keys {
  int64_t begin = 0, end = 0;  // union of the rows' visible keys (one interval); empty when begin >= end
};
Keys visible_union(int32_t kv_len, int32_t q_len, int32_t window_left) {
  Keys k{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (int32_t r = 0; r < q_len; ++r) {
    const int64_t pos = int64_t(kv_len) - q_len + r;
    const int64_t b = std::max<int64_t>(0, window_left >= 0 ? pos - window_left : 0);
    const int64_t e = std::min<int64_t>(kv_len, pos + 1);
    if (b < e) k.begin = std::min(k.begin, b), k.end = std::max(k.end, e);
  }
  if (k.begin >= k.end) k = Keys{0, 0};
  return k;
}

TEST(PagedDecodeHostPlan, MultiRowItemsAndWindowsCoverEveryVisibleTileOnce) {
  std::mt19937 rng(31337);
  int64_t items = 0, split_items = 0;
  for (int iter = 0; iter < 500; ++iter) {
    DecodeItemShape shape;
    shape.q_len = 2 + int32_t(rng() % 7);
    static const int32_t kTileKeys[] = {16, 32, 64};
    static const int32_t kWindows[] = {0, 1, 5, 15, 16, 63, 64, 100, 1000, 4095};
    shape.tile_keys = kTileKeys[rng() % 3];
    shape.window_left = rng() % 4 == 0 ? -1 : kWindows[rng() % 10];
    const int32_t count = 1 + int32_t(rng() % 40);
    std::vector<int32_t> lens(static_cast<size_t>(count));
    for (auto& l : lens) {
      const int k = int(rng() % 4);
      l = k == 0 ? int32_t(rng() % (shape.q_len + 1)) : k == 1 ? int32_t(rng() % 200) : int32_t(rng() % 20000);
    }
    const int32_t fixed = rng() % 3 == 0 ? int32_t(1 + rng() % 20) : 0;
    int32_t capacity = count + int32_t(rng() % 200);
    if (fixed > 0) {
      int32_t most = 1;
      for (int32_t l : lens) most = std::max(most, (shape.tiles(l) + fixed - 1) / fixed);
      capacity = count * most;
    }
    std::vector<PlanTask> tasks(size_t(capacity), PlanTask{7, 7, 7, 7, 7});
    std::vector<int32_t> task0(static_cast<size_t>(count), -7), n(static_cast<size_t>(count)), first(static_cast<size_t>(count));
    const int32_t status = hipattn::plan_decode_tasks_host(lens.data(), count, shape, capacity, fixed, tasks.data(),
                                                           task0.data(), n.data(), first.data());
    ASSERT_EQ(status, hipattn::kPlanOk) << "iteration " << iter;
    int32_t used = 0;
    for (int32_t i = 0; i < count; ++i, ++items) {
      const std::string what = "iteration " + std::to_string(iter) + " item " + std::to_string(i) + " (kv " +
                               std::to_string(lens[i]) + ", q_len " + std::to_string(shape.q_len) + ", window " +
                               std::to_string(shape.window_left) + ", tiles of " + std::to_string(shape.tile_keys) + ")";
      const Keys keys = visible_union(lens[i], shape.q_len, shape.window_left);
      const int32_t tk = shape.tile_keys;
      const int32_t want_b = keys.begin < keys.end ? int32_t(keys.begin / tk) : 0;
      const int32_t want_e = keys.begin < keys.end ? int32_t((keys.end + tk - 1) / tk) : 0;
      // count how often each tile is walked by the item's tasks
      std::vector<int> seen(size_t(std::max(1, (lens[i] + tk - 1) / tk)) + 1, 0);
      const PlanTask& head = tasks[size_t(task0[i])];
      ASSERT_GE(head.parts, 1) << what;
      for (int32_t j = 0; j < head.parts; ++j) {
        const PlanTask& t = tasks[size_t(task0[i] + j)];
        ASSERT_EQ(t.item, i) << what;
        ASSERT_EQ(t.part, j) << what;
        for (int32_t x = t.tile_begin; x < t.tile_end; ++x) {
          ASSERT_GE(x, 0) << what;
          ASSERT_LT(size_t(x), seen.size()) << what << ": tile " << x << " past the context";
          ++seen[size_t(x)];
        }
        if (fixed > 0) {
          EXPECT_LE(t.tile_end - t.tile_begin, fixed) << what;
        }
      }
      used += head.parts;
      split_items += head.parts > 1;
      for (int32_t x = 0; x < int32_t(seen.size()); ++x)
        EXPECT_EQ(seen[size_t(x)], (x >= want_b && x < want_e) ? 1 : 0)
            << what << ": tile " << x << " (visible tiles [" << want_b << ", " << want_e << "))";
      // every covered tile holds a key some row sees (nothing outside the window or past the diagonal)
      for (int32_t x = want_b; x < want_e; ++x) {
        bool any = false;
        for (int32_t r = 0; r < shape.q_len && !any; ++r) {
          const int32_t pos = lens[i] - shape.q_len + r;
          for (int32_t j = x * tk; j < (x + 1) * tk && !any; ++j)
            any = hipattn::key_visible(j, pos, lens[i], true, shape.window_left);
        }
        EXPECT_TRUE(any) << what << ": tile " << x << " holds no visible key";
      }
      if (shape.window_left >= 0) {
        EXPECT_LE(want_e - want_b, (shape.window_left + shape.q_len + tk - 1) / tk + 1) << what << ": the window bounds the tiles";
      }
      EXPECT_EQ(n[size_t(i)], want_e - want_b) << what;
    }
    for (int32_t s = used; s < capacity; ++s) EXPECT_EQ(tasks[size_t(s)].item, -1) << "slot " << s << " past the last task";
  }
  EXPECT_GT(split_items, items / 10) << "the sweep should split many items";
}

// A context shorter than q_len: only the rows at positions >= 0 see keys, all of [0, kv_len).
TEST(PagedDecodeHostPlan, ContextShorterThanQLen) {
  for (int32_t window : {-1, 0, 2}) {
    DecodeItemShape shape;
    shape.q_len = 8;
    shape.tile_keys = 2;
    shape.window_left = window;
    for (int32_t kv = 0; kv <= 8; ++kv) {
      const hipattn::KvTileRange r = shape.range(kv);
      const Keys k = visible_union(kv, 8, window);
      if (kv == 0) {
        EXPECT_TRUE(r.empty());
        EXPECT_EQ(shape.tiles(kv), 0);
        continue;
      }
      EXPECT_EQ(r.key_begin, k.begin) << "kv " << kv << " window " << window;
      EXPECT_EQ(r.key_end, k.end) << "kv " << kv << " window " << window;
      EXPECT_EQ(k.begin, 0);
      EXPECT_EQ(k.end, kv);
    }
  }
}

}  // namespace
