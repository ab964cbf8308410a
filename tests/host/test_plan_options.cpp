// tests/host/test_plan_options.cpp: the options the planners take (UnifiedOptions, PagedDecodeOptions,
// MlaDecodeOptions) are range-checked at plan time. A C / FFI caller may put any byte in an
// enumeration field: an out-of-range value is refused with Error(invalid_argument) naming the field
// ("options.pipeline") and carrying the value and the enumerators, rather than acting as another
// choice (pipeline 7 used to run the skeleton, a split of 4 to plan as automatic). The workspace-size
// functions that take options check them too. validate_options reports every issue, first found
// first; every enumerator is accepted.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hipattn/dispatch/mla_decode.hpp"
#include "hipattn/dispatch/paged_decode_plan.hpp"
#include "hipattn/dispatch/unified_plan.hpp"

namespace {

using hipattn::Error;
using hipattn::ErrorCode;
using hipattn::MlaDecodeOptions;
using hipattn::MlaDecodeSplit;
using hipattn::PagedDecodeOptions;
using hipattn::PagedDecodeSplit;
using hipattn::PlanDevice;
using hipattn::Target;
using hipattn::UnifiedOptions;
using hipattn::UnifiedPath;
using hipattn::UnifiedPipeline;
using hipattn::UnifiedSplit;

const PlanDevice kH100{Target::sm90, 132};

// `call` throws Error(invalid_argument) naming `field`, its message carrying every `words` entry.
void expect_option_error(const std::function<void()>& call, const std::string& field, const std::vector<std::string>& words) {
  try {
    call();
    ADD_FAILURE() << field << ": accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    for (const std::string& w : words)
      EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << "\"" << e.what() << "\" lacks \"" << w << "\"";
  }
}

// ---- unified attention ----

// A 16-bit prefill problem that the sm_90 warpgroup pipeline takes (so that a pipeline value read as
// "not warpgroup" would quietly change the plan), with long sequences (3D candidates).
hipattn::UnifiedAttentionParams unified_problem() {
  hipattn::UnifiedAttentionParams p;
  p.num_seqs = 4;
  p.num_tokens = 4096;
  p.max_seqlen_q = 1024;
  p.max_seqlen_k = 8192;
  p.num_q_heads = 32;
  p.num_kv_heads = 8;
  p.head_size = 128;
  return p;
}
// A decode batch (the planned split's candidate).
hipattn::UnifiedAttentionParams unified_decode() {
  hipattn::UnifiedAttentionParams p = unified_problem();
  p.num_tokens = p.num_seqs = 8;
  p.max_seqlen_q = 1;
  p.max_seqlen_k = 32768;
  return p;
}

TEST(PlanOptions, UnifiedEnumsOutOfRangeAreRefused) {
  for (const auto& p : {unified_problem(), unified_decode()}) {
    for (int v : {3, 7, 255}) {
      UnifiedOptions o;
      o.path = static_cast<UnifiedPath>(v);
      expect_option_error([&] { (void)hipattn::plan_unified_attention(p, o, kH100); }, "options.path",
                          {"options.path (" + std::to_string(v) + ") is not one of automatic, two_d, three_d"});
      o = {};
      o.split = static_cast<UnifiedSplit>(v);
      expect_option_error([&] { (void)hipattn::plan_unified_attention(p, o, kH100); }, "options.split",
                          {"options.split (" + std::to_string(v) + ") is not one of automatic, uniform, planned"});
    }
    for (int v : {4, 7, 255}) {
      UnifiedOptions o;
      o.pipeline = static_cast<UnifiedPipeline>(v);
      expect_option_error([&] { (void)hipattn::plan_unified_attention(p, o, kH100); }, "options.pipeline",
                          {"options.pipeline (" + std::to_string(v) + ") is not one of automatic, skeleton, warpgroup, pingpong"});
    }
    UnifiedOptions o;
    o.num_segments = -1;
    expect_option_error([&] { (void)hipattn::plan_unified_attention(p, o, kH100); }, "options.num_segments",
                        {"options.num_segments (-1)"});
  }
  // ... on every target, before the target's own rules
  for (Target t : {Target::gfx942, Target::gfx950}) {
    UnifiedOptions o;
    o.pipeline = static_cast<UnifiedPipeline>(7);
    expect_option_error([&] { (void)hipattn::plan_unified_attention(unified_problem(), o, PlanDevice{t, 304}); },
                        "options.pipeline", {"(7)"});
  }
}

TEST(PlanOptions, UnifiedEveryEnumeratorIsAccepted) {
  EXPECT_TRUE(hipattn::validate_options(UnifiedOptions{}).ok());
  for (UnifiedPath path : {UnifiedPath::automatic, UnifiedPath::two_d, UnifiedPath::three_d})
    for (UnifiedSplit split : {UnifiedSplit::automatic, UnifiedSplit::uniform, UnifiedSplit::planned})
      for (UnifiedPipeline pl : {UnifiedPipeline::automatic, UnifiedPipeline::skeleton, UnifiedPipeline::warpgroup,
                                 UnifiedPipeline::pingpong})
        for (int32_t seg : {0, 1, 64}) {
          const UnifiedOptions o{path, seg, split, pl};
          EXPECT_TRUE(hipattn::validate_options(o).ok()) << hipattn::validate_options(o).summary();
        }
  // every issue reported, first found first
  UnifiedOptions bad;
  bad.path = static_cast<UnifiedPath>(9);
  bad.num_segments = -3;
  bad.split = static_cast<UnifiedSplit>(9);
  bad.pipeline = static_cast<UnifiedPipeline>(9);
  const hipattn::ValidationReport r = hipattn::validate_options(bad);
  ASSERT_EQ(r.size(), 4u) << r.summary();
  EXPECT_EQ(r.issues[0].field, "options.path");
  EXPECT_EQ(r.issues[1].field, "options.num_segments");
  EXPECT_EQ(r.issues[2].field, "options.split");
  EXPECT_EQ(r.issues[3].field, "options.pipeline");
  // the skeleton named: planned as before (no warpgroup pipeline)
  UnifiedOptions skeleton;
  skeleton.pipeline = UnifiedPipeline::skeleton;
  EXPECT_FALSE(hipattn::plan_unified_attention(unified_problem(), skeleton, kH100).pipeline == hipattn::PlanPipeline::warpgroup);
  EXPECT_TRUE(hipattn::plan_unified_attention(unified_problem(), {}, kH100).pipeline == hipattn::PlanPipeline::warpgroup);
}

// ---- paged decode ----

hipattn::PagedDecodeParams paged_problem() {
  hipattn::PagedDecodeParams p;
  p.num_seqs = 16;
  p.q_len = 1;
  p.num_q_heads = 32;
  p.num_kv_heads = 8;
  p.head_size = 128;
  p.max_seqlen_k = 32768;
  return p;
}

TEST(PlanOptions, PagedDecodeSplitOutOfRangeIsRefused) {
  hipattn::PagedDecodeTraits t;
  t.max_num_seqs = 16, t.max_q_len = 2, t.num_q_heads = 32, t.num_kv_heads = 8, t.max_head_size = 128, t.max_seqlen_k = 32768;
  for (int v : {4, 7, 255}) {
    PagedDecodeOptions o;
    o.split = static_cast<PagedDecodeSplit>(v);
    const std::string words = "options.split (" + std::to_string(v) + ") is not one of automatic, one_partition, planned, uniform";
    expect_option_error([&] { (void)hipattn::plan_paged_decode(paged_problem(), o, kH100); }, "options.split", {words});
    expect_option_error([&] { (void)hipattn::paged_decode_workspace_size(t, kH100, o); }, "options.split", {words});
  }
  PagedDecodeOptions o;
  o.num_segments = -2;
  expect_option_error([&] { (void)hipattn::plan_paged_decode(paged_problem(), o, kH100); }, "options.num_segments",
                      {"options.num_segments (-2)"});
  o = {};
  o.workgroup_budget = -1;
  expect_option_error([&] { (void)hipattn::paged_decode_workspace_size(t, kH100, o); }, "options.workgroup_budget",
                      {"options.workgroup_budget (-1)"});
  o = {};
  o.batch_invariant_keys = -64;
  expect_option_error([&] { (void)hipattn::plan_paged_decode(paged_problem(), o, kH100); }, "options.batch_invariant_keys",
                      {"options.batch_invariant_keys (-64)"});
}

TEST(PlanOptions, PagedDecodeEveryEnumeratorIsAccepted) {
  for (PagedDecodeSplit s : {PagedDecodeSplit::automatic, PagedDecodeSplit::one_partition, PagedDecodeSplit::planned,
                             PagedDecodeSplit::uniform}) {
    PagedDecodeOptions o;
    o.split = s;
    EXPECT_TRUE(hipattn::validate_options(o).ok()) << hipattn::validate_options(o).summary();
    EXPECT_NO_THROW((void)hipattn::plan_paged_decode(paged_problem(), o, kH100)) << static_cast<int>(s);
  }
}

// ---- MLA decode ----

TEST(PlanOptions, MlaDecodeSplitOutOfRangeIsRefused) {
  hipattn::MlaDecodeParams p;
  p.batch = 4;
  p.q_len = 1;
  p.num_heads = 16;
  hipattn::MlaDecodeTraits t;
  t.max_batch = 4, t.max_q_len = 1, t.num_heads = 16, t.max_seqlen_k = 4096;
  for (int v : {3, 7, 255}) {
    MlaDecodeOptions o;
    o.split = static_cast<MlaDecodeSplit>(v);
    const std::string words = "options.split (" + std::to_string(v) + ") is not one of automatic, one_partition, planned";
    expect_option_error([&] { (void)hipattn::plan_mla_decode(p, o, kH100); }, "options.split", {words});
    expect_option_error([&] { (void)hipattn::mla_decode_workspace_size(t, kH100, o); }, "options.split", {words});
  }
  MlaDecodeOptions o;
  o.workgroup_budget = -5;
  expect_option_error([&] { (void)hipattn::mla_decode_workspace_size(t, kH100, o); }, "options.workgroup_budget",
                      {"options.workgroup_budget (-5)"});
  for (MlaDecodeSplit s : {MlaDecodeSplit::automatic, MlaDecodeSplit::one_partition, MlaDecodeSplit::planned}) {
    o = {};
    o.split = s;
    EXPECT_TRUE(hipattn::validate_options(o).ok());
    EXPECT_NO_THROW((void)hipattn::plan_mla_decode(p, o, kH100)) << static_cast<int>(s);
  }
}

}  // namespace
