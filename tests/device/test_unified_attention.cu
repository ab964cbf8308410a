// Parity suite of unified attention (the 2D, 3D and reduce kernels of kernels/unified/kernels.hpp)
// against the float64 reference, on the GPU. Every test skips itself, saying so, when no GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "../common/compare.hpp"
#include "../common/gpu.hpp"
#include "../common/random_spec.hpp"
#include "../../testing/scenario_spec.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/dispatch/unified_attention.hpp"
#include "hipattn/reference/reference.hpp"

namespace hipattn::testing {
namespace {

const char* path_name(UnifiedPath p) { return p == UnifiedPath::two_d ? "2d" : p == UnifiedPath::three_d ? "3d" : "auto"; }

// Returns whether the 2D path ran on sm_90's warpgroup pipeline (then the skeleton's 2D kernel ran too).
bool check_all_paths(const ProblemSpec& spec, const char* what) {
  HostProblem h(spec);
  const reference::AttentionResult ref = reference::unified_attention(h.host_params());
  DeviceProblem dp(h);
  std::vector<uint16_t> raw[3];
  int k = 0;
  for (UnifiedPath path : {UnifiedPath::automatic, UnifiedPath::two_d, UnifiedPath::three_d}) {
    SCOPED_TRACE(std::string(what) + " path=" + path_name(path));
    const CompareStats st = run_and_compare(h, dp, ref, path, 0, &raw[k++]);
    EXPECT_EQ(st.bad, 0) << st.bad << " of " << st.checked << " elements out of tolerance; first: " << st.first_bad;
    std::printf("  %-44s %-4s max|err| %.2e  rel-l2 %.2e\n", what, path_name(path), st.max_abs, st.rel_l2());
  }
  // sm_90 runs 16-bit prefill q-blocks of the 2D grid on the warpgroup pipeline (kernels/unified/
  // warpgroup.hpp): the attention skeleton's 2D kernel (mma.sync) runs too, and both must agree.
  UnifiedOptions two_d;
  two_d.path = UnifiedPath::two_d;
  const UnifiedPlan plan2d = plan_unified_attention(dp.params(), two_d, plan_device(rt::cached_device_properties()));
  std::vector<uint16_t> skeleton;
  if (plan2d.pipeline == PlanPipeline::warpgroup) {
    SCOPED_TRACE(std::string(what) + " path=2d-skeleton");
    const CompareStats st = run_and_compare(h, dp, ref, UnifiedPath::two_d, 0, &skeleton, UnifiedSplit::automatic,
                                            UnifiedPipeline::skeleton);
    EXPECT_EQ(st.bad, 0) << st.bad << " of " << st.checked << " elements out of tolerance; first: " << st.first_bad;
    std::printf("  %-44s %-4s max|err| %.2e  rel-l2 %.2e\n", what, "2d-skeleton", st.max_abs, st.rel_l2());
  }
  // Decode batches: the 3D path with the device planner's tasks too (ALGORITHM.md 7), whatever auto picks.
  int32_t max_q = 0;
  for (auto [q, k] : spec.seqs) max_q = std::max(max_q, q);
  if (max_q <= 1) {
    SCOPED_TRACE(std::string(what) + " path=3d-planned");
    const CompareStats st = run_and_compare(h, dp, ref, UnifiedPath::three_d, 0, nullptr, UnifiedSplit::planned);
    EXPECT_EQ(st.bad, 0) << st.bad << " of " << st.checked << " elements out of tolerance; first: " << st.first_bad;
    std::printf("  %-44s %-4s max|err| %.2e  rel-l2 %.2e\n", what, "3d-planned", st.max_abs, st.rel_l2());
  }
  // 2D and 3D (and the two 2D pipelines) compute the same function in another order: they agree within
  // the dtype's rounding.
  const Tolerance tol = out_tolerance(h.spec.bf16);
  const auto disagreement = [&](const std::vector<uint16_t>& x, const std::vector<uint16_t>& y, double& max_diff) {
    int64_t n = 0;
    max_diff = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double a = h.spec.bf16 ? bfloat16_t::from_bits(x[i]).to_float() : half_t::from_bits(x[i]).to_float();
      const double b = h.spec.bf16 ? bfloat16_t::from_bits(y[i]).to_float() : half_t::from_bits(y[i]).to_float();
      const double d = std::fabs(a - b);
      max_diff = std::max(max_diff, d);
      if (!(d <= tol.atol + tol.rtol * std::fabs(a))) ++n;
    }
    return n;
  };
  double max_diff = 0;
  EXPECT_EQ(disagreement(raw[1], raw[2], max_diff), 0)
      << what << ": 2D and 3D outputs differ beyond rounding (max |2d - 3d| " << max_diff << ")";
  if (plan2d.pipeline == PlanPipeline::warpgroup)
    EXPECT_EQ(disagreement(raw[1], skeleton, max_diff), 0)
        << what << ": the warpgroup and skeleton 2D outputs differ beyond rounding (max " << max_diff << ")";
  return plan2d.pipeline == PlanPipeline::warpgroup;
}

// ---- the 13 default scenarios x {auto, 2d, 3d} x KV {q dtype, fp8 per-tensor, fp8 per-(token, head)} ----
enum class KvMode { same, fp8_tensor, fp8_token_head };
struct ScenarioCase { int index; KvMode kv; };

std::vector<ScenarioCase> default_cases() {
  std::vector<ScenarioCase> v;
  const auto& all = scenarios::unified_scenarios();
  for (int i = 0; i < int(all.size()); ++i)
    if (std::string(all[i].group) == "default")
      for (KvMode m : {KvMode::same, KvMode::fp8_tensor, KvMode::fp8_token_head}) v.push_back({i, m});
  return v;
}

ProblemSpec spec_of(const scenarios::UnifiedScenario& sc, KvMode m, uint64_t seed) {
  ProblemSpec s = spec_from_scenario(sc, seed);
  // fp8 formats alternate so both are covered: e4m3fn with per-tensor scales, e4m3fnuz per (token, head).
  if (m == KvMode::fp8_tensor) { s.kv_dtype = DType::fp8_e4m3fn; s.scale_mode = KvScaleMode::per_tensor; }
  if (m == KvMode::fp8_token_head) { s.kv_dtype = DType::fp8_e4m3fnuz; s.scale_mode = KvScaleMode::per_token_head; }
  return s;
}

class UnifiedDefault : public ::testing::TestWithParam<ScenarioCase> {};

TEST_P(UnifiedDefault, MatchesReferenceOnEveryPath) {
  REQUIRE_GPU();
  const ScenarioCase c = GetParam();
  const auto& sc = scenarios::unified_scenarios()[c.index];
  check_all_paths(spec_of(sc, c.kv, 1000 + c.index), sc.name);
}

std::string scenario_case_name(const ::testing::TestParamInfo<ScenarioCase>& i) {
  static const char* const kv[] = {"kv_q", "kv_fp8_tensor", "kv_fp8_token_head"};
  return std::string(scenarios::unified_scenarios()[i.param.index].name) + "_" + kv[int(i.param.kv)];
}
INSTANTIATE_TEST_SUITE_P(Scenarios, UnifiedDefault, ::testing::ValuesIn(default_cases()), scenario_case_name);

// ---- seeded random sweep: ragged batches mixing decode and prefill rows, features on and off ----

class UnifiedRandom : public ::testing::TestWithParam<int> {};
TEST_P(UnifiedRandom, MatchesReferenceOnEveryPath) {
  REQUIRE_GPU();
  const ProblemSpec s = random_spec(77000 + GetParam());
  check_all_paths(s, ("random seed " + std::to_string(77000 + GetParam())).c_str());
}
INSTANTIATE_TEST_SUITE_P(Sweep, UnifiedRandom, ::testing::Range(0, 40));

// ---- edge cases ----
TEST(UnifiedEdge, CacheLargerThan2GiB) {
  REQUIRE_GPU();
  for (DType kv : {DType::f16, DType::fp8_e4m3fn}) {
    ProblemSpec s;
    s.kv_dtype = kv;
    s.scale_mode = kv == DType::f16 ? KvScaleMode::none : KvScaleMode::per_token_head;
    s.num_q_heads = 16; s.num_kv_heads = 2; s.head_size = 128; s.block_size = 16;
    s.seqs = {{1, 3000}, {37, 600}, {1, 77}};
    s.min_cache_bytes = int64_t(5) << 29;  // 2.5 GiB
    s.sinks = true;
    check_all_paths(s, kv == DType::f16 ? "2.5 GiB fp16 cache" : "2.5 GiB fp8 cache");
  }
}

// A head size whose rows are not a power-of-two number of 16-byte chunks: every path, a 16-bit and
// an fp8 cache (per-(token, head) scales, a window), decode and prefill tiles, sinks.
void check_head_size(int d, int q_heads, int kv_heads) {
  for (DType kv : {DType::bf16, DType::fp8_e4m3fn}) {
    ProblemSpec s;
    s.bf16 = true;
    s.kv_dtype = kv;
    s.scale_mode = kv == DType::bf16 ? KvScaleMode::none : KvScaleMode::per_token_head;
    s.num_q_heads = q_heads; s.num_kv_heads = kv_heads; s.head_size = d; s.block_size = 16;
    s.seqs = {{1, 700}, {37, 300}, {1, 45}, {130, 130}};
    s.sinks = true;
    s.window_left = kv == DType::bf16 ? -1 : 200;
    const std::string what = "head " + std::to_string(d) + (kv == DType::bf16 ? " bf16" : " fp8 with a window");
    check_all_paths(s, what.c_str());
  }
}

// Head 192 (MLA-style prefill heads): 24 16-byte chunks a row, so the loader's column moves with
// the iteration.
TEST(UnifiedEdge, HeadSize192) {
  REQUIRE_GPU();
  check_head_size(192, 16, 4);
}

// Head 96 (Phi-3 class): 12 16-byte chunks a row (6 for fp8), stored in LDS with a 128-element row
// pitch (tile/lds_layout.hpp); the loader's column moves with the iteration; k steps of 96 = 6 x 16
// (sm_90) and 3 x 32 (CDNA); group 3.
TEST(UnifiedEdge, HeadSize96) {
  REQUIRE_GPU();
  check_head_size(96, 24, 8);
}

TEST(UnifiedEdge, ZeroLengthSequencesAndSinks) {
  REQUIRE_GPU();
  ProblemSpec s;
  s.num_q_heads = 8; s.num_kv_heads = 8; s.head_size = 64; s.block_size = 16;
  s.seqs = {{0, 0}, {1, 40}, {0, 17}, {3, 3}, {0, 0}};
  s.sinks = true;
  check_all_paths(s, "zero-length rows with sinks");
  s.causal = false;
  s.sinks = false;
  s.seqs = {{4, 0}, {2, 9}};  // queries with no key at all: zeros and -inf
  check_all_paths(s, "queries without keys");
}

// sm_90's warpgroup pipeline of 16-bit prefill q-blocks (kernels/unified/warpgroup.hpp), checked beside
// the skeleton's 2D kernel by check_all_paths: page sizes 1, 17 and 64 (rows of one tile from many
// pages, pages across tiles), GQA 1 to 40 (40 > 16 heads: 3 tokens a q-block, rows of a token split
// across q-blocks never; 256 heads: two head chunks), every head size it has, windows, each logit
// variant, sinks, the HND layout, queries longer than their context, and decode rows in the batch.
TEST(UnifiedEdge, WarpgroupPrefillPipeline) {
  REQUIRE_GPU();
  struct Case {
    const char* what;
    int hq, hkv, d, page;
    bool bf16;
    int window;
    float softcap;
    bool alibi, qq_bias, sinks, hnd, causal;
  };
  const Case cases[] = {
      {"d128 G4 page 16", 32, 8, 128, 16, true, -1, 0.f, false, false, false, false, true},
      {"d128 G8 page 1 window 100", 16, 2, 128, 1, false, 100, 0.f, false, false, true, false, true},
      {"d64 G1 page 17 softcap", 4, 4, 64, 17, true, -1, 30.f, false, false, false, false, true},
      {"d64 G40 page 64 alibi sinks", 80, 2, 64, 64, false, -1, 0.f, true, false, true, false, true},
      {"d192 G2 page 32 qq-bias", 8, 4, 192, 32, true, -1, 0.f, false, true, false, false, true},
      {"d256 G16 page 16 hnd window", 32, 2, 256, 16, true, 77, 0.f, false, false, true, true, true},
      {"d128 G256 page 16 two chunks", 256, 1, 128, 16, true, -1, 0.f, false, false, false, false, true},
      {"d128 G4 non-causal softcap alibi", 16, 4, 128, 16, false, -1, 50.f, true, false, true, false, false},
  };
  const bool sm90 = rt::cached_device_properties().target == Target::sm90;
  uint64_t seed = 4100;
  for (const Case& c : cases) {
    ProblemSpec s;
    s.bf16 = c.bf16;
    s.kv_dtype = c.bf16 ? DType::bf16 : DType::f16;
    s.num_q_heads = c.hq; s.num_kv_heads = c.hkv; s.head_size = c.d; s.block_size = c.page;
    s.window_left = c.window; s.softcap = c.softcap; s.alibi = c.alibi; s.qq_bias = c.qq_bias;
    s.sinks = c.sinks; s.hnd = c.hnd; s.causal = c.causal;
    if (c.qq_bias) s.qq_bias_stride = 320;  // >= the longest q length
    s.seqs = {{1, 700}, {37, 300}, {130, 130}, {300, 1000}, {0, 5}, {19, 20}};
    if (c.hq >= 256) s.seqs = {{9, 40}, {3, 300}, {1, 17}};  // 128 rows a token: keep the reference small
    s.seed = seed++;
    const bool wg = check_all_paths(s, c.what);
    if (sm90) EXPECT_TRUE(wg) << c.what << ": the 2D path did not take the warpgroup pipeline";
  }
}

TEST(UnifiedEdge, ThreeDAgreesWithTwoDForEverySegmentCount) {
  REQUIRE_GPU();
  ProblemSpec s;
  s.bf16 = true; s.kv_dtype = DType::bf16;
  s.num_q_heads = 32; s.num_kv_heads = 8; s.head_size = 128; s.block_size = 16;
  s.seqs = {{1, 5000}, {4, 1300}, {1, 1}};
  s.sinks = true;
  HostProblem h(s);
  const auto ref = reference::unified_attention(h.host_params());
  DeviceProblem dp(h);
  for (int seg : {1, 2, 3, 7, 16, 64}) {
    SCOPED_TRACE("segments=" + std::to_string(seg));
    const CompareStats st = run_and_compare(h, dp, ref, UnifiedPath::three_d, seg);
    EXPECT_EQ(st.bad, 0) << st.first_bad;
  }
}

TEST(UnifiedErrors, BadInputThrowsNamingTheField) {
  REQUIRE_GPU();
  ProblemSpec s;
  s.seqs = {{1, 10}};
  HostProblem h(s);
  DeviceProblem dp(h);
  UnifiedAttentionParams p = dp.params();
  p.num_kv_heads = 3;
  try {
    prebuilt::unified_attention(p, nullptr, 0, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "num_kv_heads");
  }
  p = dp.params();
  p.head_size = 80;  // not in the instance table (problem/instance_table.hpp): refused as unsupported
  p.q_stride_token = 8 * 80; p.q_stride_head = 80; p.o_stride_token = 8 * 80; p.o_stride_head = 80;
  hipattn::set_cache_strides(p, hipattn::nhd_strides(16, 2, 80));
  try {
    prebuilt::unified_attention(p, nullptr, 0, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_EQ(e.field(), "head_size");
  }
  // A workspace that is too small for the 3D path.
  p = dp.params();
  UnifiedOptions opt;
  opt.path = UnifiedPath::three_d;
  try {
    prebuilt::unified_attention(p, nullptr, 0, nullptr, opt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::workspace);
  }
}

}  // namespace
}  // namespace hipattn::testing
