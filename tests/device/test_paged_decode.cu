// Parity suite of paged decode (dispatch/paged_decode.hpp: the device planner, paged_decode_kernel
// and its reduce) against the float64 reference (the unified one, on to_unified_params of the same
// problem), on the GPU (issue 10, section 4). Every launch runs over a poisoned output and LSE (so
// every element must be written), is checked (the entry point's error, the runtime's last error, the
// synchronization), and every output element and LSE is compared within the dtype's tolerance. After
// each planned call the device plan in the workspace is compared slot by slot with the host plan.
// The ROCm cache layout (kv_layout = rocm) runs on a rocm-layout copy of the same cache bytes
// (decode_problem.hpp DecodeSpec::rocm_layout) while the reference reads the rows master.
// Every test skips itself, saying so, when no GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "../common/decode_problem.hpp"
#include "../common/gpu.hpp"
#include "hipattn/dispatch/paged_decode.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/dispatch/unified_attention.hpp"
#include "hipattn/reference/reference.hpp"

namespace hipattn::testing {
namespace {

using Split = PagedDecodeSplit;

PagedDecodeOptions with_split(Split s, int32_t budget = 0, int32_t bik = 0) {
  PagedDecodeOptions o;
  o.split = s;
  o.workgroup_budget = budget;
  o.batch_invariant_keys = bik;
  return o;
}
const char* split_name(Split s) {
  return s == Split::one_partition ? "one_partition"
         : s == Split::planned     ? "planned"
         : s == Split::uniform     ? "uniform"
                                   : "auto";
}

// The workspace of a call: sized from the traits that bound it (the engine's way), never below the
// plan's bytes. Calls whose plan needs none (one partition) pass none.
struct Workspace {
  size_t bytes = 0;
  DeviceBuffer buf;
  Workspace(const PagedDecodeParams& p, const PagedDecodeOptions& opt, bool none_when_unplanned = true) {
    const PagedDecodePlan plan = device_plan(p, opt);
    bytes = paged_decode_workspace_size(traits_of(p), opt);
    EXPECT_GE(bytes, plan.workspace_bytes) << "paged_decode_workspace_size(traits) is below the plan's bytes (" << plan.reason << ")";
    if (plan.workspace_bytes == 0 && none_when_unplanned) bytes = 0;
    buf = DeviceBuffer(bytes);
  }
};

struct RunResult {
  std::vector<uint16_t> out;
  std::vector<float> lse;
  int most_parts = 0;  // the most tasks one sequence had (0: one partition)
};

// Poison the outputs, run paged_decode on `s`, check the launch and the stream, download, and check
// the device plan.
// `p`: the batch's params (b.params(), or b.rows_params() for the rows cache of a rocm problem).
RunResult run_decode(const DecodeBatch& b, const PagedDecodeParams& p, const PagedDecodeOptions& opt, void* ws,
                     size_t bytes, rt::stream_t s = nullptr) {
  b.poison(s);
  prebuilt::paged_decode(p, ws, bytes, s, opt);
  HIPATTN_CHECK(rt::get_last_error());
  HIPATTN_CHECK(rt::device_synchronize());
  RunResult r;
  b.download(r.out, r.lse);
  r.most_parts = check_device_plan(p, opt, ws, b.seq_lens());
  return r;
}
RunResult run_decode(const DecodeBatch& b, const PagedDecodeOptions& opt, void* ws, size_t bytes, rt::stream_t s = nullptr) {
  return run_decode(b, b.params(), opt, ws, bytes, s);
}

void expect_match(const DecodeBatch& b, const reference::AttentionResult& ref, const RunResult& r, const std::string& what) {
  const CompareStats st = compare_decode(b, ref, r.out, r.lse);
  EXPECT_GT(st.checked, 0);
  EXPECT_EQ(st.bad, 0) << what << ": " << st.bad << " of " << st.checked << " elements out of tolerance; first: " << st.first_bad;
  std::printf("  %-96s max|err| %.2e rel-l2 %.2e parts %d\n", what.c_str(), st.max_abs, st.rel_l2(), r.most_parts);
}

// The whole master problem under each split (one partition with no workspace, planned, auto);
// returns the most parts the planned call gave a sequence.
int check_splits(const DecodeProblem& m, const std::string& what,
                 std::initializer_list<Split> splits = {Split::one_partition, Split::planned, Split::uniform,
                                                        Split::automatic}) {
  DecodeBatch b(m, m.all());
  const reference::AttentionResult ref = m.reference(b.idx);
  int planned_parts = 0;
  for (Split s : splits) {
    const PagedDecodeOptions opt = with_split(s);
    Workspace ws(b.params(), opt);
    const RunResult r = run_decode(b, opt, ws.buf.ptr, ws.bytes);
    if (s == Split::planned) planned_parts = r.most_parts;
    expect_match(b, ref, r, what + " " + split_name(s));
  }
  return planned_parts;
}

// ---- boundary contexts (decode_sweeps.json paged_decode.boundaries): 0, 1, q_len-short, 255, 256,
// 257, 1027 in one batch; q_len 1, 2, 4, 8 (8 x 4 heads: the prefill tile); pages 16, 64, 128 and 7 ----

class PagedDecodeBoundary : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(PagedDecodeBoundary, MatchesReferenceInEveryPlan) {
  REQUIRE_GPU();
  const auto [q_len, page] = GetParam();
  DecodeSpec s;
  s.bf16 = q_len % 4 == 0;
  s.num_q_heads = 8;
  s.num_kv_heads = 2;
  s.head_size = 128;
  s.block_size = page;
  s.q_len = q_len;
  s.hnd = page == 7 || page == 64;
  for (int c : decode_sweeps::kBoundaryContexts) s.ctx.push_back(c);
  s.ctx.push_back(3);  // shorter than q_len 4 and 8: the first rows see no key
  s.seed = 100 + q_len * 1000 + page;
  DecodeProblem m(s);
  const int parts = check_splits(m, describe(s));
  EXPECT_GT(parts, 1) << "the planned call split no sequence: the reduce went untested";
}

std::string boundary_name(const ::testing::TestParamInfo<std::tuple<int, int>>& i) {
  return "q" + std::to_string(std::get<0>(i.param)) + "_page" + std::to_string(std::get<1>(i.param));
}
INSTANTIATE_TEST_SUITE_P(Contexts, PagedDecodeBoundary,
                         ::testing::Combine(::testing::Values(1, 2, 4, 8), ::testing::Values(16, 64, 128, 7)), boundary_name);

// ---- NaN and +Inf in unowned slots (past the context in the last page, and whole blocks that padded
// block-table entries point at; their per-(token, head) scales NaN too) contribute exactly zero ----

TEST(PagedDecodeUnowned, NanAndInfContributeExactlyZero) {
  REQUIRE_GPU();
  struct Case { bool bf16; DType kv; KvScaleMode mode; int q_len, page, window; bool sinks; };
  const Case cases[] = {
      {false, DType::f16, KvScaleMode::none, 1, 16, -1, false},
      {true, DType::bf16, KvScaleMode::none, 4, 7, -1, true},
      {true, DType::bf16, KvScaleMode::none, 8, 64, 100, false},
      {false, DType::fp8_e4m3fn, KvScaleMode::per_token_head, 2, 16, -1, false},
      {true, DType::fp8_e4m3fnuz, KvScaleMode::per_token_head, 3, 32, 40, true},
      {false, DType::fp8_e4m3fnuz, KvScaleMode::per_tensor, 1, 128, -1, false},
  };
  int k = 0;
  for (const Case& c : cases) {
    DecodeSpec s;
    s.bf16 = c.bf16;
    s.kv_dtype = c.kv;
    s.scale_mode = c.mode;
    s.num_q_heads = 8;
    s.num_kv_heads = 2;
    s.head_size = 128;
    s.block_size = c.page;
    s.q_len = c.q_len;
    s.window_left = c.window;
    s.sinks = c.sinks;
    s.ctx = {0, 1, 3, 17, 100, 257, 700};
    s.poison_unowned = true;
    s.extra_table_cols = 2;
    s.seed = 200 + k++;
    DecodeProblem m(s);
    check_splits(m, describe(s));
  }
}

// ---- MiniMax-like config (decode_sweeps.json paged_decode.config): 16 q heads / 1 kv head, d 128,
// q_len 1 / 2 / 4, pages 16 / 64 / 128; bf16, fp8 per-tensor (device pointer and host float) and fp8
// per-(token, head) ----

enum class KvMode { bf16, fp8_tensor_ptr, fp8_tensor_host, fp8_token_head };
const char* kv_mode_name(KvMode k) {
  static const char* const n[] = {"bf16", "fp8_tensor_ptr", "fp8_tensor_host", "fp8_token_head"};
  return n[int(k)];
}
std::ostream& operator<<(std::ostream& o, KvMode k) { return o << kv_mode_name(k); }
void set_kv_mode(DecodeSpec& s, KvMode k, DType fp8 = DType::fp8_e4m3fn) {
  s.kv_dtype = k == KvMode::bf16 ? DType::bf16 : fp8;
  s.scale_mode = k == KvMode::fp8_token_head ? KvScaleMode::per_token_head
                 : k == KvMode::bf16         ? KvScaleMode::none
                                             : KvScaleMode::per_tensor;
  s.host_scale = k == KvMode::fp8_tensor_host;
}

class PagedDecodeMiniMax : public ::testing::TestWithParam<std::tuple<int, KvMode>> {};

TEST_P(PagedDecodeMiniMax, MatchesReferenceInEveryPlan) {
  REQUIRE_GPU();
  const auto [qi, kv] = GetParam();
  DecodeSpec s;
  s.bf16 = true;
  set_kv_mode(s, kv);
  s.num_q_heads = decode_sweeps::kMiniMaxQHeads;
  s.num_kv_heads = decode_sweeps::kMiniMaxKvHeads;
  s.head_size = decode_sweeps::kMiniMaxHeadSize;
  s.q_len = decode_sweeps::kMiniMaxQLens[qi];
  s.block_size = decode_sweeps::kMiniMaxPageSizes[(qi + int(kv)) % 3];
  s.ctx = {2049, 700, 130, 1, 0};
  s.seed = 300 + qi * 10 + int(kv);
  DecodeProblem m(s);
  EXPECT_GT(check_splits(m, describe(s)), 1);
}

std::string minimax_name(const ::testing::TestParamInfo<std::tuple<int, KvMode>>& i) {
  return "q" + std::to_string(decode_sweeps::kMiniMaxQLens[std::get<0>(i.param)]) + "_" + kv_mode_name(std::get<1>(i.param));
}
INSTANTIATE_TEST_SUITE_P(Config, PagedDecodeMiniMax,
                         ::testing::Combine(::testing::Values(0, 1, 2),
                                            ::testing::Values(KvMode::bf16, KvMode::fp8_tensor_ptr, KvMode::fp8_tensor_host,
                                                              KvMode::fp8_token_head)),
                         minimax_name);

// decode_sweeps.json paged_decode.batches "1 x 8192" (a single sequence: a sparse grid).
TEST(PagedDecodeMiniMaxLong, OneSequenceOf8192) {
  REQUIRE_GPU();
  DecodeSpec s;
  s.bf16 = true;
  set_kv_mode(s, KvMode::fp8_tensor_host);
  s.num_q_heads = 16;
  s.num_kv_heads = 1;
  s.head_size = 128;
  s.block_size = 64;
  s.q_len = 4;
  s.ctx = {8192};
  s.seed = 350;
  DecodeProblem m(s);
  EXPECT_GT(check_splits(m, describe(s)), 1);
}

// decode_sweeps.json paged_decode.batches "128 x random 128-2K", "64 x random 1K-8K" and
// "1 x 30K": many items for the planner, and one long sequence.
TEST(PagedDecodeMiniMaxLong, LargeBatchesAndOneSequenceOf30K) {
  REQUIRE_GPU();
  for (int variant = 0; variant < 3; ++variant) {
    DecodeSpec s;
    s.bf16 = true;
    s.num_q_heads = 16, s.num_kv_heads = 1, s.head_size = 128;
    std::mt19937 rng(360 + variant);
    if (variant == 0) {
      s.block_size = 16, s.q_len = 1;
      for (int i = 0; i < 128; ++i) s.ctx.push_back(128 + int(rng() % 1921));
    } else if (variant == 1) {
      set_kv_mode(s, KvMode::fp8_tensor_host);
      s.block_size = 64, s.q_len = 1;
      for (int i = 0; i < 64; ++i) s.ctx.push_back(1024 + int(rng() % 7169));
    } else {
      set_kv_mode(s, KvMode::fp8_token_head);
      s.block_size = 128, s.q_len = 2;
      s.ctx = {30000};
    }
    s.seed = 360 + variant;
    DecodeProblem m(s);
    check_splits(m, describe(s), {Split::one_partition, Split::automatic});
  }
}

// ---- split-K sliding window (decode_sweeps.json split_k_sliding_window_decode): 32 / 8 heads, d 128,
// windows 1024 and 4096 (window_left = W - 1), contexts 590 (< window), 2048, 6700, 8192; e4m3fn
// (page 16), e4m3fnuz (page 32), bf16 (page 16); every plan against the reference, the planned split
// against the one-pass output within rounding ----

class PagedDecodeSlidingWindow : public ::testing::TestWithParam<int> {};

TEST_P(PagedDecodeSlidingWindow, SplitEqualsOnePassAndReference) {
  REQUIRE_GPU();
  const DType kvs[] = {DType::fp8_e4m3fn, DType::fp8_e4m3fnuz, DType::bf16};
  DecodeSpec s;
  s.bf16 = true;
  s.kv_dtype = kvs[GetParam()];
  s.scale_mode = GetParam() == 1 ? KvScaleMode::per_token_head : KvScaleMode::per_tensor;
  s.num_q_heads = decode_sweeps::kSwQHeads;
  s.num_kv_heads = decode_sweeps::kSwKvHeads;
  s.head_size = decode_sweeps::kSwHeadSize;
  s.block_size = decode_sweeps::kSwPageSizes[GetParam() % 2];
  s.q_len = 1;
  for (int c : decode_sweeps::kSwContexts) s.ctx.push_back(c);
  s.ctx.push_back(0);  // "seq_len 0 rows return zeros"
  s.poison_unowned = true;  // "unused slots of edge pages may hold NaN and must not leak"
  s.seed = 400 + GetParam();
  DecodeProblem m(s);
  DecodeBatch b(m, m.all());
  for (int window : decode_sweeps::kSwWindows) {
    // The window is a field of the call: the same data under another window.
    const reference::AttentionResult ref = m.reference(b.idx, window - 1);
    RunResult one, split;
    for (Split sp : {Split::one_partition, Split::planned, Split::uniform, Split::automatic}) {
      PagedDecodeOptions opt = with_split(sp);
      PagedDecodeParams p = b.params();
      p.window_left = window - 1;
      Workspace ws(p, opt);
      b.poison();
      prebuilt::paged_decode(p, ws.buf.ptr, ws.bytes, nullptr, opt);
      HIPATTN_CHECK(rt::get_last_error());
      HIPATTN_CHECK(rt::device_synchronize());
      RunResult r;
      b.download(r.out, r.lse);
      r.most_parts = check_device_plan(p, opt, ws.buf.ptr, b.seq_lens());
      expect_match(b, ref, r, describe(s) + " W=" + std::to_string(window) + " " + split_name(sp));
      if (sp == Split::one_partition) one = r;
      if (sp == Split::planned) split = std::move(r);
    }
    EXPECT_GT(split.most_parts, 1) << "the window's keys were not split";
    const Tolerance tol = out_tolerance(true);
    int64_t differ = 0;
    for (size_t i = 0; i < one.out.size(); ++i) {
      const double a = bfloat16_t::from_bits(one.out[i]).to_float(), c = bfloat16_t::from_bits(split.out[i]).to_float();
      if (!(std::fabs(a - c) <= tol.atol + tol.rtol * std::fabs(a))) ++differ;
    }
    EXPECT_EQ(differ, 0) << "W=" << window << ": the split output differs from the one-pass output beyond rounding";
  }
}

std::string sliding_window_name(const ::testing::TestParamInfo<int>& i) {
  static const char* const n[] = {"e4m3fn_page16", "e4m3fnuz_page32", "bf16_page16"};
  return n[i.param];
}
INSTANTIATE_TEST_SUITE_P(KvDtypes, PagedDecodeSlidingWindow, ::testing::Values(0, 1, 2), sliding_window_name);

// decode_sweeps.json split_k_sliding_window_decode.cases "2 seqs x 20000 keys" (window 4096) and
// "bs 32 ctx 590 (< window: must stay one-pass)".
TEST(PagedDecodeSlidingWindowCases, TwoSequencesOf20000AndShortBatch) {
  REQUIRE_GPU();
  for (int variant = 0; variant < 2; ++variant) {
    DecodeSpec s;
    s.bf16 = true;
    s.num_q_heads = 32, s.num_kv_heads = 8, s.head_size = 128, s.q_len = 1;
    s.window_left = 4096 - 1;
    if (variant == 0) {
      s.block_size = 32;
      s.ctx = {20000, 20000};
    } else {
      s.kv_dtype = DType::fp8_e4m3fn;
      s.block_size = 16;
      s.ctx.assign(32, 590);
    }
    s.seed = 450 + variant;
    DecodeProblem m(s);
    DecodeBatch b(m, m.all());
    const auto ref = m.reference(b.idx);
    for (Split sp : {Split::one_partition, Split::planned, Split::uniform, Split::automatic}) {
      const PagedDecodeOptions opt = with_split(sp);
      Workspace ws(b.params(), opt);
      const RunResult r = run_decode(b, opt, ws.buf.ptr, ws.bytes);
      expect_match(b, ref, r, describe(s) + " " + split_name(sp));
      const PagedDecodePlan plan = device_plan(b.params(), opt);
      if (variant == 0 && sp == Split::planned) {
        EXPECT_GT(r.most_parts, 1) << "the 4096-key windows were not split";
      }
      // 32 sequences of 10 tiles over fewer than 64 slots: any split would need 64 tasks, so the
      // min-max plan keeps each in one pass.
      if (variant == 1 && plan.split == SlotSplit::planned && plan.capacity < 64) {
        EXPECT_EQ(r.most_parts, 1) << plan.reason;
      }
    }
  }
}

// ---- every head size x GQA ratio (MHA, 4, 8, MQA); each head size sees f16 and bf16, NHD and HND ----

class PagedDecodeHeads : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(PagedDecodeHeads, MatchesReferenceBothPlans) {
  REQUIRE_GPU();
  const auto [di, gi] = GetParam();
  const int ds[] = {64, 96, 128, 192, 256};
  const int heads[4][2] = {{4, 4}, {8, 2}, {16, 2}, {8, 1}};  // MHA, GQA 4, GQA 8, MQA
  DecodeSpec s;
  s.head_size = ds[di];
  s.num_q_heads = heads[gi][0];
  s.num_kv_heads = heads[gi][1];
  s.bf16 = ((di ^ gi) & 1) != 0;
  s.hnd = ((gi >> 1) & 1) != 0;
  s.q_len = 1 << ((di + gi) % 4);  // 1, 2, 4, 8
  s.block_size = (di + gi) % 2 ? 16 : 32;
  s.ctx = {0, 37, 300, 700};
  s.seed = 500 + di * 10 + gi;
  DecodeProblem m(s);
  check_splits(m, describe(s), {Split::one_partition, Split::planned});
}

std::string heads_name(const ::testing::TestParamInfo<std::tuple<int, int>>& i) {
  static const int ds[] = {64, 96, 128, 192, 256};
  static const char* const g[] = {"mha", "gqa4", "gqa8", "mqa"};
  return "d" + std::to_string(ds[std::get<0>(i.param)]) + "_" + g[std::get<1>(i.param)];
}
INSTANTIATE_TEST_SUITE_P(SizesAndGroups, PagedDecodeHeads,
                         ::testing::Combine(::testing::Range(0, 5), ::testing::Range(0, 4)), heads_name);

// ---- logit features and the LSE ----

TEST(PagedDecodeFeatures, SinksSoftcapAlibiAndLse) {
  REQUIRE_GPU();
  DecodeSpec s;
  s.bf16 = true;
  s.kv_dtype = DType::fp8_e4m3fn;
  s.scale_mode = KvScaleMode::per_token_head;
  s.num_q_heads = 16;
  s.num_kv_heads = 4;
  s.head_size = 128;
  s.q_len = 4;
  s.ctx = {0, 2, 5, 300, 1000};
  s.sinks = true;
  s.softcap = 30.f;
  s.alibi = true;
  s.lse_pad = 5;
  s.seed = 600;
  DecodeProblem m(s);
  check_splits(m, describe(s));
}

TEST(PagedDecodeFeatures, SinksAloneIncludingEmptyContexts) {
  REQUIRE_GPU();
  for (int q_len : {1, 3, 8}) {
    DecodeSpec s;
    s.num_q_heads = 8;
    s.num_kv_heads = 8;
    s.head_size = 64;
    s.q_len = q_len;
    s.ctx = {0, 1, 2, 0, 600, 0};  // rows without keys: output 0, LSE = the sink
    s.sinks = true;
    s.seed = 610 + q_len;
    DecodeProblem m(s);
    check_splits(m, describe(s));
  }
}

TEST(PagedDecodeFeatures, WindowSoftcapAlibiWithoutLse) {
  REQUIRE_GPU();
  for (int window_left : {0, 5, 64, 255}) {
    DecodeSpec s;
    s.num_q_heads = 12;
    s.num_kv_heads = 2;
    s.head_size = 96;
    s.q_len = 8;
    s.block_size = 7;
    s.ctx = {0, 6, 63, 64, 65, 900};
    s.window_left = window_left;
    s.softcap = 20.f;
    s.alibi = true;
    s.lse = false;
    s.seed = 620 + window_left;
    DecodeProblem m(s);
    check_splits(m, describe(s));
  }
}

// ---- one workspace sized for the largest problem, reused by calls of other head sizes and q lengths ----

TEST(PagedDecodeWorkspace, OneWorkspaceReusedAcrossHeadSizes) {
  REQUIRE_GPU();
  PagedDecodeTraits t;
  t.max_num_seqs = 4;
  t.max_q_len = 4;
  t.num_q_heads = 8;
  t.num_kv_heads = 2;
  t.max_head_size = 256;
  t.max_seqlen_k = 4000;
  struct Call { int d, q_len; std::vector<int> ctx; };
  const std::vector<Call> calls = {{64, 4, {3000, 100, 0, 900}}, {256, 1, {4000, 10, 2500, 1}}, {128, 2, {1500, 3500, 7}},
                                   {96, 3, {2000}}, {64, 4, {3000, 100, 0, 900}}};
  for (Split sp : {Split::planned, Split::automatic}) {
    const PagedDecodeOptions opt = with_split(sp);
    const size_t bytes = paged_decode_workspace_size(t, opt);
    DeviceBuffer ws(bytes);
    int k = 0;
    for (const Call& c : calls) {
      DecodeSpec s;
      s.bf16 = k % 2;
      s.num_q_heads = 8;
      s.num_kv_heads = 2;
      s.head_size = c.d;
      s.q_len = c.q_len;
      s.ctx = c.ctx;
      s.seed = 700 + k++;
      DecodeProblem m(s);
      DecodeBatch b(m, m.all());
      PagedDecodeParams p = b.params();
      EXPECT_GE(bytes, device_plan(p, opt).workspace_bytes);
      const RunResult r = run_decode(b, opt, ws.ptr, bytes);
      expect_match(b, m.reference(b.idx), r, describe(s) + " shared workspace " + split_name(sp));
    }
  }
}

// Two problems on two streams, each with its own workspace, in flight together (three rounds), then
// one workspace used by the two streams in turn (the second waits for the first).
TEST(PagedDecodeWorkspace, TwoStreams) {
  REQUIRE_GPU();
  DecodeSpec sa, sb;
  sa.bf16 = true;
  sa.num_q_heads = 8, sa.num_kv_heads = 2, sa.head_size = 128, sa.q_len = 2, sa.ctx = {5000, 20, 1200};
  sa.seed = 800;
  sb.kv_dtype = DType::fp8_e4m3fn, sb.scale_mode = KvScaleMode::per_tensor, sb.host_scale = true;
  sb.num_q_heads = 16, sb.num_kv_heads = 4, sb.head_size = 64, sb.q_len = 1, sb.ctx = {300, 7000, 0, 64, 65};
  sb.seed = 801;
  DecodeProblem ma(sa), mb(sb);
  DecodeBatch a(ma, ma.all()), b(mb, mb.all());
  const auto ref_a = ma.reference(a.idx), ref_b = mb.reference(b.idx);
  const PagedDecodeOptions opt = with_split(Split::planned);
  Workspace wa(a.params(), opt), wb(b.params(), opt);
  TestStream s1, s2;
  for (int round = 0; round < 3; ++round) {
    a.poison(s1.s);
    b.poison(s2.s);
    prebuilt::paged_decode(a.params(), wa.buf.ptr, wa.bytes, s1.s, opt);
    prebuilt::paged_decode(b.params(), wb.buf.ptr, wb.bytes, s2.s, opt);
    HIPATTN_CHECK(rt::get_last_error());
    s1.sync();
    s2.sync();
    RunResult ra, rb;
    a.download(ra.out, ra.lse);
    b.download(rb.out, rb.lse);
    ra.most_parts = check_device_plan(a.params(), opt, wa.buf.ptr, a.seq_lens());
    rb.most_parts = check_device_plan(b.params(), opt, wb.buf.ptr, b.seq_lens());
    expect_match(a, ref_a, ra, "stream 1 round " + std::to_string(round) + " " + describe(sa));
    expect_match(b, ref_b, rb, "stream 2 round " + std::to_string(round) + " " + describe(sb));
  }
  // Sequential reuse of one workspace by both streams.
  const size_t bytes = std::max(wa.bytes, wb.bytes);
  DeviceBuffer ws(bytes);
  a.poison(s1.s);
  prebuilt::paged_decode(a.params(), ws.ptr, bytes, s1.s, opt);
  HIPATTN_CHECK(rt::get_last_error());
  s1.sync();
  RunResult ra;
  a.download(ra.out, ra.lse);
  b.poison(s2.s);
  prebuilt::paged_decode(b.params(), ws.ptr, bytes, s2.s, opt);
  HIPATTN_CHECK(rt::get_last_error());
  s2.sync();
  RunResult rb;
  b.download(rb.out, rb.lse);
  rb.most_parts = check_device_plan(b.params(), opt, ws.ptr, b.seq_lens());
  expect_match(a, ref_a, ra, "shared workspace, stream 1");
  expect_match(b, ref_b, rb, "shared workspace, stream 2");
}

// ---- back-to-back calls on one stream over one workspace, no synchronization between them: on sm_90
// the kernel after the planner and the reduce start while their predecessor ends (programmatic
// dependent launch, rt::LaunchOrder::programmatic), so a missing wait would let a reduce read the
// partials or tasks of another call. Batches of other lengths (other plans, other part counts),
// three rounds in turn, each output against its reference ----

TEST(PagedDecodeChained, BackToBackCallsShareOneWorkspace) {
  REQUIRE_GPU();
  DecodeSpec s;
  s.bf16 = true;
  s.num_q_heads = 16, s.num_kv_heads = 2, s.head_size = 128, s.q_len = 1;
  s.sinks = true;
  //          batch A                | batch B            | batch C
  s.ctx = {6000, 17, 3000, 900, 1, 0, 12000, 2500, 256, 4100, 4100, 4100, 4100, 700};
  s.seed = 950;
  DecodeProblem m(s);
  const std::vector<std::vector<int>> sets = {{0, 1, 2, 3, 4, 5}, {6, 7, 8}, {9, 10, 11, 12, 13}};
  std::vector<std::unique_ptr<DecodeBatch>> batches;
  std::vector<reference::AttentionResult> refs;
  for (const auto& idx : sets) {
    batches.push_back(std::make_unique<DecodeBatch>(m, idx));
    refs.push_back(m.reference(idx));
  }
  for (Split sp : {Split::planned, Split::uniform, Split::automatic}) {
    const PagedDecodeOptions opt = with_split(sp);
    size_t bytes = 0;
    for (const auto& b : batches) bytes = std::max(bytes, paged_decode_workspace_size(traits_of(b->params()), opt));
    DeviceBuffer ws(bytes);
    TestStream st;
    for (const auto& b : batches) b->poison(st.s);
    for (int round = 0; round < 3; ++round)
      for (size_t i = 0; i < batches.size(); ++i)
        prebuilt::paged_decode(batches[(i + round) % batches.size()]->params(), ws.ptr, bytes, st.s, opt);
    HIPATTN_CHECK(rt::get_last_error());
    st.sync();
    for (size_t i = 0; i < batches.size(); ++i) {
      RunResult r;
      batches[i]->download(r.out, r.lse);
      expect_match(*batches[i], refs[i], r, std::string("back to back, batch ") + char('A' + i) + " " + split_name(sp));
    }
  }
}

// ---- graph capture: capture once, replay, then load other lengths, block tables and queries into
// the same buffers (same num_seqs) and replay again: equal to the reference and bitwise to an eager
// call ----

TEST(PagedDecodeGraph, ReplayWithNewLengthsAndBlockTables) {
  REQUIRE_GPU();
  for (int variant = 0; variant < 2; ++variant) {
    DecodeSpec s;
    s.bf16 = variant == 0;
    if (variant == 1) set_kv_mode(s, KvMode::fp8_tensor_host);  // host-float scales: nothing filled per call
    s.num_q_heads = 8, s.num_kv_heads = 2, s.head_size = 128, s.q_len = 2;
    s.block_size = variant == 0 ? 16 : 64;
    s.sinks = variant == 1;
    //          batch A                 | batch B
    s.ctx = {2000, 5, 0, 600, 1, 1500, 900, 2040};
    s.seed = 900 + variant;
    DecodeProblem m(s);
    const std::vector<int> A = {0, 1, 2, 3}, B = {4, 5, 6, 7}, C = {5, 0, 7, 2};
    for (Split sp : {Split::automatic, Split::one_partition}) {
      const PagedDecodeOptions opt = with_split(sp);
      DecodeBatch b(m, A);
      const PagedDecodeParams p = b.params();
      Workspace ws(p, opt);
      const rt::CapturedGraph graph([&](rt::stream_t st) { prebuilt::paged_decode(p, ws.buf.ptr, ws.bytes, st, opt); });
      TestStream s1;
      RunResult last;
      for (const std::vector<int>* batch : {&A, &B, &C}) {
        b.load(*batch);
        b.poison(s1.s);
        graph.launch(s1.s);
        HIPATTN_CHECK(rt::get_last_error());
        s1.sync();
        RunResult r;
        b.download(r.out, r.lse);
        r.most_parts = check_device_plan(p, opt, ws.buf.ptr, b.seq_lens());
        std::string which = batch == &A ? "A" : batch == &B ? "B" : "C";
        expect_match(b, m.reference(*batch), r, "graph replay " + which + " " + split_name(sp) + " " + describe(s));
        last = std::move(r);
      }
      // An eager call on the last inputs: the same kernels, the same plan, the same bits.
      b.poison(s1.s);
      prebuilt::paged_decode(p, ws.buf.ptr, ws.bytes, s1.s, opt);
      HIPATTN_CHECK(rt::get_last_error());
      s1.sync();
      RunResult eager;
      b.download(eager.out, eager.lse);
      EXPECT_TRUE(eager.out == last.out) << "graph replay and eager call differ (out)";
      if (s.lse) {
        EXPECT_EQ(0, std::memcmp(eager.lse.data(), last.lse.data(), eager.lse.size() * 4)) << "(lse)";
      }
    }
  }
}

// ---- batch invariance: with batch_invariant_keys a sequence's rows are bitwise the same alone and
// inside any batch ----

TEST(PagedDecodeBatchInvariance, SequenceBitwiseIdenticalInAnyBatch) {
  REQUIRE_GPU();
  for (int variant = 0; variant < 2; ++variant) {
    DecodeSpec s;
    if (variant == 0) {
      s.bf16 = true, s.num_q_heads = 8, s.num_kv_heads = 2, s.q_len = 1, s.block_size = 16;
    } else {  // 16 x 4 rows: the prefill tile; fp8 per-(token, head); a window
      s.num_q_heads = 16, s.num_kv_heads = 1, s.q_len = 4, s.block_size = 64, s.window_left = 2999;
      set_kv_mode(s, KvMode::fp8_token_head);
    }
    s.head_size = 128;
    s.sinks = true;
    std::mt19937 rng(1000 + variant);
    s.ctx = {5000};  // the target: sequence 0
    for (int i = 0; i < 16; ++i) s.ctx.push_back(int(rng() % 4000));
    s.seed = 1000 + variant;
    DecodeProblem m(s);
    const std::vector<std::vector<int>> batches = {{0}, {3, 0, 7, 1, 9, 4}, {12, 15, 2, 11, 5, 8, 6, 14, 0, 10, 13}, {0, 16, 0}};
    const reference::AttentionResult ref = m.reference({0});
    for (int32_t keys : {1024, 700}) {
      const PagedDecodeOptions opt = with_split(Split::automatic, 0, keys);
      std::vector<uint16_t> alone_out;
      std::vector<float> alone_lse;
      for (const auto& idx : batches) {
        DecodeBatch b(m, idx);
        Workspace ws(b.params(), opt);
        const RunResult r = run_decode(b, opt, ws.buf.ptr, ws.bytes);
        EXPECT_GT(r.most_parts, 1) << "5000 keys in tasks of " << keys << ": the target should be split";
        const size_t row = size_t(m.q_len()) * m.row_elems();
        for (size_t pos = 0; pos < idx.size(); ++pos) {
          if (idx[pos] != 0) continue;
          std::vector<uint16_t> o(r.out.begin() + pos * row, r.out.begin() + (pos + 1) * row);
          std::vector<float> l;
          for (int h = 0; h < s.num_q_heads; ++h)
            for (int i = 0; i < m.q_len(); ++i) l.push_back(r.lse[size_t(h) * b.lse_stride + pos * m.q_len() + i]);
          if (alone_out.empty()) {  // the batch of the target alone: against the reference
            expect_match(b, ref, r, "target alone, batch_invariant_keys " + std::to_string(keys) + " " + describe(s));
            alone_out = o;
            alone_lse = l;
          } else {
            EXPECT_TRUE(o == alone_out) << "batch of " << idx.size() << ", position " << pos << ": output rows differ from alone";
            EXPECT_EQ(0, std::memcmp(l.data(), alone_lse.data(), l.size() * 4)) << "LSE differs from alone";
          }
        }
      }
    }
  }
}

// ---- the same problem through hipattn::unified_attention (to_unified_params with a device
// cu_seqlens_q): both against the reference and against each other ----

TEST(PagedDecodeUnified, AgreesWithUnifiedAttention) {
  REQUIRE_GPU();
  for (int variant = 0; variant < 4; ++variant) {
    DecodeSpec s;
    if (variant == 0) {
      s.bf16 = true, s.num_q_heads = 8, s.num_kv_heads = 2, s.head_size = 128, s.q_len = 1;
      s.ctx = {1100, 8, 300, 2048, 64};
    } else if (variant == 1) {
      set_kv_mode(s, KvMode::fp8_tensor_ptr);
      s.num_q_heads = 16, s.num_kv_heads = 2, s.head_size = 96, s.q_len = 4, s.block_size = 32;
      s.ctx = {4, 900, 65, 3000};
    } else if (variant == 2) {
      s.bf16 = true;
      set_kv_mode(s, KvMode::fp8_token_head, DType::fp8_e4m3fnuz);
      s.num_q_heads = 4, s.num_kv_heads = 1, s.head_size = 256, s.q_len = 8, s.block_size = 16;
      s.ctx = {8, 1500, 333};
      s.sinks = s.alibi = true;
      s.softcap = 25.f;
      s.window_left = 400;
      s.hnd = true;
    } else {  // paged_decode on the rocm copy, unified_attention on the rows cache of the same values
      set_kv_mode(s, KvMode::fp8_tensor_host, DType::fp8_e4m3fnuz);
      s.num_q_heads = 8, s.num_kv_heads = 2, s.head_size = 128, s.q_len = 2, s.block_size = 24;
      s.ctx = {1027, 2, 700};
      s.sinks = true;
      s.poison_unowned = true;
      s.rocm_layout = true;
    }
    s.seed = 1100 + variant;
    DecodeProblem m(s);
    DecodeBatch b(m, m.all());
    const auto ref = m.reference(b.idx);
    const PagedDecodeParams p = b.params();
    Workspace ws(p, PagedDecodeOptions{});
    const RunResult rp = run_decode(b, PagedDecodeOptions{}, ws.buf.ptr, ws.bytes);
    expect_match(b, ref, rp, "paged_decode " + describe(s));

    // The unified family reads the rows cache only: its view of the rows params (the same values).
    const PagedDecodeParams rows = b.rows_params();
    const float ks = m.k_scale_value(), vs = m.v_scale_value();
    DeviceBuffer dks = DeviceBuffer::from(std::vector<float>{ks}), dvs = DeviceBuffer::from(std::vector<float>{vs});
    const UnifiedAttentionParams u = to_unified_params(rows, m.dp.cu.as<int32_t>(), dks.as<float>(), dvs.as<float>());
    const size_t ubytes = unified_attention_workspace_size(u);
    DeviceBuffer uws(ubytes);
    b.poison();
    prebuilt::unified_attention(u, uws.ptr, ubytes, nullptr);
    HIPATTN_CHECK(rt::get_last_error());
    HIPATTN_CHECK(rt::device_synchronize());
    RunResult ru;
    b.download(ru.out, ru.lse);
    expect_match(b, ref, ru, "unified_attention " + describe(s));
    const Tolerance tol = out_tolerance(s.bf16);
    int64_t differ = 0;
    for (size_t i = 0; i < rp.out.size(); ++i) {
      const double x = s.bf16 ? bfloat16_t::from_bits(rp.out[i]).to_float() : half_t::from_bits(rp.out[i]).to_float();
      const double y = s.bf16 ? bfloat16_t::from_bits(ru.out[i]).to_float() : half_t::from_bits(ru.out[i]).to_float();
      if (!(std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(x))) ++differ;
    }
    EXPECT_EQ(differ, 0) << "paged_decode and unified_attention differ beyond rounding";
  }
}

// ---- seeded random sweep: ragged contexts 0..32K, random features, layouts, KV dtypes and scale
// modes; every plan (one partition, planned with the device's and with a small budget, auto,
// batch-invariant) ----

class PagedDecodeRandom : public ::testing::TestWithParam<int> {};

TEST_P(PagedDecodeRandom, MatchesReferenceInEveryPlan) {
  REQUIRE_GPU();
  const uint64_t seed = 77000 + GetParam();
  const DecodeSpec s = random_decode_spec(seed);
  DecodeProblem m(s);
  DecodeBatch b(m, m.all());
  const auto ref = m.reference(b.idx);
  std::mt19937 r{static_cast<uint32_t>(seed)};
  const PagedDecodeOptions opts[] = {with_split(Split::one_partition), with_split(Split::planned), with_split(Split::uniform),
                                     with_split(Split::planned, 1 + int(r() % 64)), with_split(Split::automatic),
                                     with_split(Split::automatic, 0, int32_t(512 << (r() % 3)))};
  for (const PagedDecodeOptions& opt : opts) {
    Workspace ws(b.params(), opt);
    const RunResult res = run_decode(b, opt, ws.buf.ptr, ws.bytes);
    expect_match(b, ref, res,
                 "seed " + std::to_string(seed) + " " + split_name(opt.split) +
                     (opt.workgroup_budget ? " budget " + std::to_string(opt.workgroup_budget) : "") +
                     (opt.batch_invariant_keys ? " bik " + std::to_string(opt.batch_invariant_keys) : "") + " " +
                     describe(s));
  }
}

INSTANTIATE_TEST_SUITE_P(Sweep, PagedDecodeRandom, ::testing::Range(0, 24));

// ---- the ROCm cache layout (kv_layout = rocm: K [blocks, kv heads, d / x, block, x], V [blocks, kv
// heads, d, block]): a copy of the master cache's bytes (poison included) in that layout, padded
// strides in a third of the cases; the reference reads the rows master ----

// A seeded selection of the grid KV dtype / scale mode x page x head size x q_len x tile (decode:
// q_len x group <= 16 rows, prefill: more) x boundary contexts x padding: each column holds every value
// of its list (repeated to kRocmCases entries) in a shuffled order, so every value is covered.
constexpr int kRocmCases = 36;
enum RocmKv { rk_f16, rk_bf16, rk_fn_ptr, rk_fn_host, rk_fn_token, rk_fnuz_ptr, rk_fnuz_host, rk_fnuz_token, rk_count };
const char* const kRocmKvNames[] = {"f16", "bf16", "e4m3fn_tensor_ptr", "e4m3fn_tensor_host", "e4m3fn_token_head",
                                    "e4m3fnuz_tensor_ptr", "e4m3fnuz_tensor_host", "e4m3fnuz_token_head"};
constexpr int kRocmPages[] = {8, 16, 32, 64, 128, 24};
constexpr int kRocmHeadSizes[] = {64, 96, 128, 192, 256};
constexpr int kRocmQLens[] = {1, 2, 4, 8};

struct RocmColumns {
  std::vector<int> kv, page, d, q_len, prefill, ctx_a, ctx_b, pad;
};
const RocmColumns& rocm_columns() {
  static const RocmColumns c = [] {
    auto column = [](int values, uint32_t seed) {
      std::vector<int> v(kRocmCases);
      for (int i = 0; i < kRocmCases; ++i) v[size_t(i)] = i % values;
      std::shuffle(v.begin(), v.end(), std::mt19937(seed));
      return v;
    };
    RocmColumns r;
    r.kv = column(rk_count, 1301);
    r.page = column(6, 1302);
    r.d = column(5, 1303);
    r.q_len = column(4, 1304);
    r.prefill = column(2, 1305);
    r.ctx_a = column(6, 1306);  // indices into decode_sweeps::kBoundaryContexts
    r.ctx_b = column(6, 1307);
    r.pad = column(3, 1308);    // 2: padded strides
    return r;
  }();
  return c;
}

DecodeSpec rocm_sweep_spec(int i) {
  const RocmColumns& c = rocm_columns();
  std::mt19937 r(1300 + i);
  DecodeSpec s;
  s.seed = 1300 + i;
  s.rocm_layout = true;
  s.rocm_pad = c.pad[size_t(i)] == 2 ? 1 + int(r() % 2) : 0;
  const int kv = c.kv[size_t(i)];
  s.bf16 = kv == rk_bf16 || (kv >= rk_fn_ptr && r() % 2);
  if (kv >= rk_fn_ptr) {
    const int mode = (kv - rk_fn_ptr) % 3;
    set_kv_mode(s, mode == 0 ? KvMode::fp8_tensor_ptr : mode == 1 ? KvMode::fp8_tensor_host : KvMode::fp8_token_head,
                kv < rk_fnuz_ptr ? DType::fp8_e4m3fn : DType::fp8_e4m3fnuz);
  } else {
    s.kv_dtype = s.bf16 ? DType::bf16 : DType::f16;
  }
  s.block_size = kRocmPages[c.page[size_t(i)]];
  s.head_size = kRocmHeadSizes[c.d[size_t(i)]];
  s.q_len = kRocmQLens[c.q_len[size_t(i)]];
  int group;
  if (c.prefill[size_t(i)]) {  // q_len x group > 16 rows: the prefill tile
    const int lo = 16 / s.q_len + 1;
    group = lo + int(r() % unsigned(16 / s.q_len));
    s.num_kv_heads = 1 + int(r() % 2);
  } else {  // <= 16 rows: the decode tile
    const int most = 16 / s.q_len;
    group = 1 << int(r() % unsigned(std::bit_width(unsigned(most))));  // 1, 2, ... most
    s.num_kv_heads = 1 << int(r() % 3);
  }
  s.num_q_heads = s.num_kv_heads * group;
  s.hnd = r() % 2;  // the master (reference) layout
  s.ctx = {decode_sweeps::kBoundaryContexts[c.ctx_a[size_t(i)]], decode_sweeps::kBoundaryContexts[c.ctx_b[size_t(i)]],
           int(r() % 4097), int(r() % 4097)};
  const bool swapped = r() % 2;
  if (swapped) std::swap(s.ctx[0], s.ctx[2]);
  const size_t r0 = swapped ? 0 : 2;  // the random contexts: r0 and 3
  s.poison_unowned = true;
  s.extra_table_cols = 1 + int(r() % 2);
  // Keep the float64 reference modest: halve the longest random context while the work is large.
  auto work = [&] {
    int64_t w = 0;
    for (int ctx : s.ctx)
      for (int q = 0; q < s.q_len; ++q) w += std::max<int64_t>(0, int64_t(ctx) - s.q_len + q + 1);
    return w * s.num_q_heads * 2 * s.head_size;
  };
  while (work() > 80'000'000 && std::max(s.ctx[r0], s.ctx[3]) > 1) (s.ctx[r0] > s.ctx[3] ? s.ctx[r0] : s.ctx[3]) /= 2;
  return s;
}

// The selection covers every value of every list (and both tiles with every q_len but 1's prefill
// width, which the group sets).
TEST(PagedDecodeRocm, SweepCoversEveryValue) {
  std::vector<int> kv(rk_count), page(6), d(5), q(4), tile(2), ctx(6), pad(2);
  for (int i = 0; i < kRocmCases; ++i) {
    const DecodeSpec s = rocm_sweep_spec(i);
    const RocmColumns& c = rocm_columns();
    ++kv[size_t(c.kv[size_t(i)])], ++page[size_t(c.page[size_t(i)])], ++d[size_t(c.d[size_t(i)])];
    ++q[size_t(c.q_len[size_t(i)])], ++ctx[size_t(c.ctx_a[size_t(i)])], ++ctx[size_t(c.ctx_b[size_t(i)])];
    ++tile[size_t(s.q_len * (s.num_q_heads / s.num_kv_heads) > 16)];
    ++pad[size_t(s.rocm_pad > 0)];
    EXPECT_EQ(s.num_q_heads % s.num_kv_heads, 0);
    EXPECT_EQ(s.block_size % 8, 0);
  }
  for (const auto* v : {&kv, &page, &d, &q, &tile, &ctx, &pad})
    for (size_t k = 0; k < v->size(); ++k) EXPECT_GT((*v)[k], 0) << "value " << k << " of a column is never drawn";
}

class PagedDecodeRocmSweep : public ::testing::TestWithParam<int> {};

TEST_P(PagedDecodeRocmSweep, MatchesReferenceInEveryPlan) {
  REQUIRE_GPU();
  const DecodeSpec s = rocm_sweep_spec(GetParam());
  DecodeProblem m(s);
  {
    const ValidationReport v = validate(DecodeBatch(m, m.all()).params());
    ASSERT_TRUE(v.ok()) << describe(s) << ": " << v.summary();
  }
  check_splits(m, describe(s), {Split::one_partition, Split::planned, Split::uniform});
}

std::string rocm_sweep_name(const ::testing::TestParamInfo<int>& i) {
  const DecodeSpec s = rocm_sweep_spec(i.param);
  const bool prefill = s.q_len * (s.num_q_heads / s.num_kv_heads) > 16;
  return "c" + std::to_string(i.param) + "_" + kRocmKvNames[rocm_columns().kv[size_t(i.param)]] + "_page" +
         std::to_string(s.block_size) + "_d" + std::to_string(s.head_size) + "_q" + std::to_string(s.q_len) +
         (prefill ? "_prefill" : "_decode") + (s.rocm_pad ? "_padded" : "");
}
INSTANTIATE_TEST_SUITE_P(Selection, PagedDecodeRocmSweep, ::testing::Range(0, kRocmCases), rocm_sweep_name);

// The same problem on the rocm copy and on the rows cache: both within the reference's tolerance, and
// within rounding of each other (the rows layout may take another loader and tile, e.g. the async
// copy of 16-bit caches on sm_90, so the bits need not be equal; how many are is printed).
TEST(PagedDecodeRocm, AgreesWithRowsLayout) {
  REQUIRE_GPU();
  for (int variant = 0; variant < 4; ++variant) {
    DecodeSpec s;
    s.rocm_layout = true;
    s.poison_unowned = true;
    if (variant == 0) {  // 8 rows: the decode tile
      s.num_q_heads = 8, s.num_kv_heads = 2, s.head_size = 128, s.q_len = 1, s.block_size = 16;
      s.ctx = {1027, 256, 0, 3000};
    } else if (variant == 1) {  // 64 rows: the prefill tile; HND master
      s.bf16 = true;
      s.num_q_heads = 16, s.num_kv_heads = 1, s.head_size = 64, s.q_len = 4, s.block_size = 32;
      s.ctx = {1, 4, 2500, 257};
      s.hnd = true;
    } else if (variant == 2) {
      set_kv_mode(s, KvMode::fp8_token_head);
      s.num_q_heads = 8, s.num_kv_heads = 4, s.head_size = 256, s.q_len = 2, s.block_size = 64;
      s.ctx = {1800, 255, 3};
      s.rocm_pad = 1;
    } else {
      s.bf16 = true;
      set_kv_mode(s, KvMode::fp8_tensor_host, DType::fp8_e4m3fnuz);
      s.num_q_heads = 8, s.num_kv_heads = 2, s.head_size = 192, s.q_len = 8, s.block_size = 24;
      s.ctx = {8, 1200, 0, 640};
      s.extra_table_cols = 2;
    }
    s.seed = 1400 + variant;
    DecodeProblem m(s);
    DecodeBatch b(m, m.all());
    const auto ref = m.reference(b.idx);
    for (Split sp : {Split::one_partition, Split::planned, Split::uniform}) {
      const PagedDecodeOptions opt = with_split(sp);
      const PagedDecodeParams pr = b.params(), pw = b.rows_params();
      ASSERT_EQ(pr.kv_layout, KvCacheLayout::rocm);
      ASSERT_EQ(pw.kv_layout, KvCacheLayout::rows);
      Workspace wr(pr, opt), ww(pw, opt);
      const RunResult rocm = run_decode(b, pr, opt, wr.buf.ptr, wr.bytes);
      const RunResult rows = run_decode(b, pw, opt, ww.buf.ptr, ww.bytes);
      expect_match(b, ref, rocm, describe(s) + " " + split_name(sp) + " (rocm)");
      expect_match(b, ref, rows, describe(s) + " " + split_name(sp) + " (rows)");
      const Tolerance tol = out_tolerance(s.bf16);
      int64_t differ = 0, same_bits = 0;
      for (size_t i = 0; i < rocm.out.size(); ++i) {
        same_bits += rocm.out[i] == rows.out[i];
        const double x = s.bf16 ? bfloat16_t::from_bits(rocm.out[i]).to_float() : half_t::from_bits(rocm.out[i]).to_float();
        const double y = s.bf16 ? bfloat16_t::from_bits(rows.out[i]).to_float() : half_t::from_bits(rows.out[i]).to_float();
        if (!(std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(y))) ++differ;
      }
      EXPECT_EQ(differ, 0) << describe(s) << " " << split_name(sp) << ": the rocm and rows outputs differ beyond rounding";
      int64_t lse_differ = 0;
      for (int64_t hh = 0; hh < s.num_q_heads; ++hh)
        for (int64_t t = 0; t < b.num_tokens; ++t) {
          const float x = rocm.lse[size_t(hh * b.lse_stride + t)], y = rows.lse[size_t(hh * b.lse_stride + t)];
          const bool ok = std::isinf(y) ? x == y : std::fabs(x - y) <= kLseTolerance.atol + kLseTolerance.rtol * std::fabs(y);
          lse_differ += !ok;
        }
      EXPECT_EQ(lse_differ, 0) << describe(s) << " " << split_name(sp) << ": the rocm and rows LSEs differ";
      std::printf("  rocm vs rows %s: %lld of %zu outputs bitwise equal\n", split_name(sp), static_cast<long long>(same_bits),
                  rocm.out.size());
    }
  }
}

// Sliding window, sinks, softcap, ALiBi and a padded LSE on the rocm copy (padded strides, poisoned
// unowned slots).
TEST(PagedDecodeRocm, WindowSinksSoftcapAlibiAndLse) {
  REQUIRE_GPU();
  for (int variant = 0; variant < 2; ++variant) {
    DecodeSpec s;
    s.rocm_layout = true;
    s.poison_unowned = true;
    s.extra_table_cols = 1;
    s.sinks = s.alibi = s.lse = true;
    if (variant == 0) {  // fp8 per-(token, head), 16 rows: the decode tile
      s.bf16 = true;
      set_kv_mode(s, KvMode::fp8_token_head);
      s.num_q_heads = 16, s.num_kv_heads = 4, s.head_size = 128, s.q_len = 4, s.block_size = 32;
      s.ctx = {0, 2, 5, 300, 1027, 3000};
      s.window_left = 1023;
      s.softcap = 30.f;
      s.lse_pad = 3;
      s.rocm_pad = 1;
    } else {  // 16-bit, 48 rows: the prefill tile; a non-power-of-two page
      s.num_q_heads = 12, s.num_kv_heads = 2, s.head_size = 96, s.q_len = 8, s.block_size = 24;
      s.ctx = {0, 6, 63, 64, 65, 2000};
      s.window_left = 63;
      s.softcap = 20.f;
      s.lse_pad = 1;
      s.rocm_pad = 2;
    }
    s.seed = 1450 + variant;
    DecodeProblem m(s);
    check_splits(m, describe(s));
  }
}

// ---- errors: every bad call throws before launching, naming the field ----

template <class F>
void expect_error(F&& f, ErrorCode code, const std::string& field, const char* what) {
  try {
    f();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << what << ": " << e.what();
    EXPECT_EQ(e.field(), field) << what << ": " << e.what();
  }
}

TEST(PagedDecodeErrors, BadCallsThrowNamingTheField) {
  REQUIRE_GPU();
  DecodeSpec s;
  s.num_q_heads = 8, s.num_kv_heads = 2, s.head_size = 128, s.q_len = 2, s.ctx = {3000, 10};
  DecodeProblem m(s);
  DecodeBatch b(m, m.all());
  const PagedDecodeOptions planned = with_split(Split::planned);
  const PagedDecodePlan plan = device_plan(b.params(), planned);
  ASSERT_GT(plan.workspace_bytes, 0u);
  DeviceBuffer ws(plan.workspace_bytes + 64);

  for (int q : {0, 9, -1}) {
    PagedDecodeParams p = b.params();
    p.q_len = q;
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr, planned); }, ErrorCode::unsupported, "q_len", "q_len");
  }
  {
    const PagedDecodeParams p = b.params();
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, plan.workspace_bytes - 1, nullptr, planned); }, ErrorCode::workspace,
                 "workspace", "one byte short");
    expect_error([&] { prebuilt::paged_decode(p, nullptr, 0, nullptr, planned); }, ErrorCode::workspace, "workspace", "null workspace");
    expect_error([&] { prebuilt::paged_decode(p, static_cast<char*>(ws.ptr) + 8, plan.workspace_bytes, nullptr, planned); },
                 ErrorCode::workspace, "workspace", "misaligned workspace");
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr, with_split(Split::one_partition, 0, 1024)); },
                 ErrorCode::invalid_argument, "options.split", "one_partition with batch_invariant_keys");
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr, with_split(Split::planned, -1)); },
                 ErrorCode::invalid_argument, "options.workgroup_budget", "negative budget");
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr, with_split(Split::planned, 0, -5)); },
                 ErrorCode::invalid_argument, "options.batch_invariant_keys", "negative batch_invariant_keys");
  }
  {  // fp8 per-tensor with null pointers: the host floats must be finite and > 0
    PagedDecodeParams p = b.params();
    p.kv_dtype = DType::fp8_e4m3fn;
    p.kv_scale_mode = KvScaleMode::per_tensor;
    p.k_scale = p.v_scale = nullptr;
    p.k_scale_value = NAN;
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr); }, ErrorCode::invalid_argument, "k_scale_value",
                 "NaN k_scale_value");
    p.k_scale_value = 0.5f;
    p.v_scale_value = INFINITY;
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr); }, ErrorCode::invalid_argument, "v_scale_value",
                 "Inf v_scale_value");
    p.v_scale_value = -1.f;  // 0 is unset (1)
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr); }, ErrorCode::invalid_argument, "v_scale_value",
                 "negative v_scale_value");
    p.kv_scale_mode = KvScaleMode::per_token_head;
    p.v_scale_value = 1.f;
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr); }, ErrorCode::invalid_argument, "k_scale",
                 "per_token_head without scales");
  }
  {
    PagedDecodeParams p = b.params();
    p.head_size = 80;  // not in the instance table
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr); }, ErrorCode::unsupported, "head_size", "head 80");
  }
  {
    PagedDecodeParams p = b.params();
    p.num_kv_heads = 3;
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr); }, ErrorCode::invalid_argument, "num_kv_heads", "8 / 3 heads");
  }
  {
    PagedDecodeParams p = b.params();
    p.seq_lens_k = nullptr;
    expect_error([&] { prebuilt::paged_decode(p, ws.ptr, ws.bytes, nullptr); }, ErrorCode::invalid_argument, "seq_lens_k", "null seq_lens_k");
  }
  HIPATTN_CHECK(rt::get_last_error());
}

// The rocm layout's own rules: block_size a multiple of 8, v_stride_slot 1, 16-byte K strides, and a
// known kv_layout value.
TEST(PagedDecodeErrors, RocmLayoutBadCallsThrowNamingTheField) {
  REQUIRE_GPU();
  DecodeSpec s;
  s.num_q_heads = 8, s.num_kv_heads = 2, s.head_size = 128, s.q_len = 2, s.block_size = 16, s.ctx = {40, 10};
  s.extra_table_cols = 3;  // 6 columns: block_size 12 still covers the longest context
  s.rocm_layout = true;
  DecodeProblem m(s);
  DecodeBatch b(m, m.all());
  const PagedDecodeOptions one = with_split(Split::one_partition);
  {
    const PagedDecodeParams p = b.params();
    const ValidationReport v = validate(p);
    ASSERT_TRUE(v.ok()) << v.summary();
  }
  {
    PagedDecodeParams p = b.params();
    p.block_size = 12;
    expect_error([&] { prebuilt::paged_decode(p, nullptr, 0, nullptr, one); }, ErrorCode::unsupported, "block_size",
                 "rocm with block_size 12");
  }
  {
    PagedDecodeParams p = b.params();
    p.v_stride_slot = 2;
    expect_error([&] { prebuilt::paged_decode(p, nullptr, 0, nullptr, one); }, ErrorCode::invalid_argument, "v_stride_slot",
                 "rocm with v_stride_slot 2");
  }
  {  // 4 more elements (8 bytes) a chunk; the head and block strides grown to keep the chunks apart
    PagedDecodeParams p = b.params();
    p.k_stride_chunk += 4;
    p.k_stride_head += p.head_size;
    p.k_stride_block += int64_t(p.num_kv_heads) * p.head_size;
    expect_error([&] { prebuilt::paged_decode(p, nullptr, 0, nullptr, one); }, ErrorCode::invalid_argument, "k_stride_chunk",
                 "rocm with an 8-byte-misaligned k_stride_chunk");
  }
  {  // on the rows params (whose strides are valid rows strides): only the value is wrong
    PagedDecodeParams p = b.rows_params();
    p.kv_layout = static_cast<KvCacheLayout>(7);
    expect_error([&] { prebuilt::paged_decode(p, nullptr, 0, nullptr, one); }, ErrorCode::invalid_argument, "kv_layout",
                 "kv_layout 7");
  }
  HIPATTN_CHECK(rt::get_last_error());
}

// An empty batch is a valid no-op: nothing is launched, nothing written, no workspace needed.
TEST(PagedDecodeErrors, EmptyBatchIsANoOp) {
  REQUIRE_GPU();
  DecodeSpec s;
  s.ctx = {100};
  DecodeProblem m(s);
  DecodeBatch b(m, m.all());
  PagedDecodeParams p = b.params();
  b.poison();
  HIPATTN_CHECK(rt::device_synchronize());
  p.num_seqs = 0;
  p.q = nullptr, p.out = nullptr, p.block_table = nullptr, p.seq_lens_k = nullptr;
  for (Split sp : {Split::one_partition, Split::planned, Split::automatic}) prebuilt::paged_decode(p, nullptr, 0, nullptr, with_split(sp));
  HIPATTN_CHECK(rt::get_last_error());
  HIPATTN_CHECK(rt::device_synchronize());
  std::vector<uint16_t> out;
  std::vector<float> lse;
  b.download(out, lse);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](uint16_t x) { return x == 0xFFFF; })) << "an empty batch wrote output";
}

}  // namespace
}  // namespace hipattn::testing
