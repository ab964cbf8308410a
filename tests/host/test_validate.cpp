// tests/host/test_validate.cpp: host validation of UnifiedAttentionParams (problem/unified_rules.hpp on
// problem/validate_toolkit.hpp). The rules are two tables over one valid problem: kRejected rows
// (name, mutation, expected code, field, words of the message, number of issues) and kAccepted rows
// (name, mutation that must still validate); then the report and throw_if_error, the accumulation of
// several violations, and the randomized and 64-bit-offset checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hipattn/problem/unified_builder.hpp"
#include "hipattn/problem/unified_rules.hpp"

namespace {

using hipattn::DType;
using hipattn::ErrorCode;
using hipattn::HostSequenceInfo;
using hipattn::KvLayout;
using hipattn::KvScaleMode;
using hipattn::UnifiedAttentionParams;
using hipattn::validate;
using hipattn::ValidationReport;

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
    p = hipattn::make_unified_params({.num_seqs = 3,
                                      .num_tokens = 13,
                                      .max_seqlen_q = 7,
                                      .max_seqlen_k = 20,
                                      .num_q_heads = s.num_q_heads,
                                      .num_kv_heads = s.num_kv_heads,
                                      .head_size = s.head_size,
                                      .num_blocks = s.num_blocks,
                                      .block_size = s.block_size,
                                      .max_blocks_per_seq = 2,
                                      .layout = KvLayout::nhd,
                                      .qq_bias_stride = 7});
    // V HND, block-table rows padded by one, out padded, lse rows of 16.
    hipattn::set_cache_strides(p, hipattn::hnd_strides(s.block_size, s.num_kv_heads, s.head_size), false, true);
    p.block_table_stride = 3;
    p.o_stride_head = s.head_size + 8;
    p.o_stride_token = int64_t(s.num_q_heads) * (s.head_size + 8);
    p.lse_stride_head = 16;

    p.q = fake<const void>(0x10000);
    p.k_cache = fake<const void>(0x200000);
    p.v_cache = fake<const void>(0x400000);
    p.block_table = fake<const int32_t>(0x600000);
    p.cu_seqlens_q = fake<const int32_t>(0x610000);
    p.seq_lens_k = fake<const int32_t>(0x620000);
    p.sinks = fake<const float>(0x630000);
    p.alibi_slopes = fake<const float>(0x640000);
    p.qq_bias = fake<const float>(0x650000);
    p.out = fake<void>(0x700000);
    p.lse = fake<float>(0x800000);
  }
  HostSequenceInfo host() const { return HostSequenceInfo{cu, kv, bt}; }
  // The same problem with other head counts / sizes (strides follow, so they stay consistent).
  void reshape(const Shape& s) { *this = Problem(s); }
  // Make this an fp8 problem with per-tensor scales.
  void make_fp8(DType d = DType::fp8_e4m3fn) {
    p.kv_dtype = d;
    p.kv_scale_mode = KvScaleMode::per_tensor;
    p.k_scale = fake<const float>(0x900000);
    p.v_scale = fake<const float>(0x900010);
  }
  // fp8 queries (e4m3fn, host scale 0.5) over an fp8 cache, a bf16 output.
  void make_fp8_q() {
    make_fp8();
    p.q_dtype = DType::fp8_e4m3fn;
    p.q_scale.host = 0.5f;
    p.out_format.dtype = DType::bf16;
  }
  // An fp8 output with a per-tensor host scale; out rows padded by 16 elements (16-byte strides).
  void make_fp8_out(DType d = DType::fp8_e4m3fn) {
    p.out_format.dtype = d;
    p.out_format.scale.host = 0.25f;
    p.o_stride_head = p.head_size + 16;
    p.o_stride_token = int64_t(p.num_q_heads) * (p.head_size + 16);
  }
  // An fp8 output with a scale per group of g columns: scales [num_tokens, num_q_heads * head_size / g].
  void make_fp8_group(int32_t g, DType d = DType::fp8_e4m3fn) {
    make_fp8_out(d);
    p.out_format.scale.host = 1.f;
    p.out_format.group_size = g;
    p.out_format.group_scale = fake<float>(0x910000);
    p.out_format.group_scale_stride_group = 1;
    p.out_format.group_scale_stride_token = g > 0 && p.head_size % g == 0 ? int64_t(p.num_q_heads) * (p.head_size / g) : 64;
  }
  // Per-token-head scales [num_blocks = 8, block_size = 16, num_kv_heads = 2].
  void make_per_token_head() {
    make_fp8();
    p.kv_scale_mode = KvScaleMode::per_token_head;
    p.scale_stride_head = 1, p.scale_stride_slot = 2, p.scale_stride_block = 32;
  }
  // An empty batch: no sequence, no token; the tensors with no element are null.
  void make_empty_batch() {
    p.num_seqs = 0, p.num_tokens = 0, p.max_seqlen_q = 0, p.max_seqlen_k = 0;
    p.q = nullptr, p.out = nullptr, p.seq_lens_k = nullptr, p.block_table = nullptr;
    cu = {0}, kv.clear(), bt.clear();
  }
  // Sequences without query tokens: q and out have no element.
  void make_no_token() {
    p.num_tokens = 0, p.max_seqlen_q = 0;
    p.q = nullptr, p.out = nullptr;
  }
  // One sequence of one query token over 5 keys.
  void make_one_token() {
    cu = {0, 1}, kv = {5}, bt = {2, -1};
    p.num_seqs = 1, p.num_tokens = 1, p.max_seqlen_q = 1, p.max_seqlen_k = 5;
    p.block_table_stride = 2;
    p.lse_stride_head = 1;
  }
};

std::string describe(const ValidationReport& r) { return r.ok() ? std::string("ok") : r.summary(); }

// The first issue of `r` has code `code`, field `field`, and a message containing every `words` entry.
void expect_fail(const ValidationReport& r, ErrorCode code, const std::string& field, const std::vector<std::string>& words) {
  ASSERT_FALSE(r.ok()) << "expected a failure on " << field;
  EXPECT_EQ(r.code(), code) << describe(r);
  EXPECT_EQ(r.field(), field) << describe(r);
  for (const std::string& w : words)
    EXPECT_NE(r.message().find(w), std::string::npos) << "message \"" << r.message() << "\" lacks \"" << w << "\"";
}
void expect_ok(const ValidationReport& r) { EXPECT_TRUE(r.ok()) << describe(r); }

// ---------------------------------------------------------------------------------------------------
// The table of rejected problems

using Mutation = std::function<void(Problem&)>;

struct Rejected {
  const char* name;  // the gtest parameter name
  Mutation mutate;   // applied to the valid Problem()
  bool host;         // validate(p, host()) rather than validate(p)
  ErrorCode code;
  const char* field;
  std::vector<std::string> words;  // in the first issue's message
  size_t issues;                   // issues in the report: 1 unless the mutation breaks several rules
};

constexpr ErrorCode kInvalid = ErrorCode::invalid_argument;
constexpr ErrorCode kUnsupported = ErrorCode::unsupported;
constexpr bool kHost = true, kFields = false;

Shape one_kv_head() {
  Shape s;
  s.num_kv_heads = 1;
  return s;
}

const std::vector<Rejected>& rejected_cases() {
  static const std::vector<Rejected> cases = {
      // ---- pointers: required ones non-null, vector ones 16-byte aligned, scalar ones naturally ----
      {"NullQ", [](Problem& t) { t.p.q = nullptr; }, kFields, kInvalid, "q", {"q (nullptr)"}, 1},
      {"NullKCache", [](Problem& t) { t.p.k_cache = nullptr; }, kFields, kInvalid, "k_cache", {"k_cache (nullptr)"}, 1},
      {"NullVCache", [](Problem& t) { t.p.v_cache = nullptr; }, kFields, kInvalid, "v_cache", {"v_cache (nullptr)"}, 1},
      {"NullBlockTable", [](Problem& t) { t.p.block_table = nullptr; }, kFields, kInvalid, "block_table",
       {"block_table (nullptr)"}, 1},
      {"NullCuSeqlensQ", [](Problem& t) { t.p.cu_seqlens_q = nullptr; }, kFields, kInvalid, "cu_seqlens_q",
       {"cu_seqlens_q (nullptr)"}, 1},
      {"NullSeqLensK", [](Problem& t) { t.p.seq_lens_k = nullptr; }, kFields, kInvalid, "seq_lens_k",
       {"seq_lens_k (nullptr)"}, 1},
      {"NullOut", [](Problem& t) { t.p.out = nullptr; }, kFields, kInvalid, "out", {"out (nullptr)"}, 1},
      {"EmptyBatchStillNeedsCuSeqlensQ", [](Problem& t) { t.make_empty_batch(), t.p.cu_seqlens_q = nullptr; }, kFields,
       kInvalid, "cu_seqlens_q", {"nullptr"}, 1},
      {"NoTokenStillNeedsSeqLensK", [](Problem& t) { t.make_no_token(), t.p.seq_lens_k = nullptr; }, kFields, kInvalid,
       "seq_lens_k", {"nullptr"}, 1},
      {"MisalignedQ", [](Problem& t) { t.p.q = fake<const void>(0x10008); }, kFields, kInvalid, "q",
       {"0x10008", "16-byte"}, 1},
      {"MisalignedKCache", [](Problem& t) { t.p.k_cache = fake<const void>(0x200004); }, kFields, kInvalid, "k_cache",
       {"0x200004"}, 1},
      {"MisalignedVCache", [](Problem& t) { t.p.v_cache = fake<const void>(0x400002); }, kFields, kInvalid, "v_cache",
       {"0x400002"}, 1},
      {"MisalignedOut", [](Problem& t) { t.p.out = fake<void>(0x70000c); }, kFields, kInvalid, "out", {"0x70000c"}, 1},
      {"MisalignedBlockTable", [](Problem& t) { t.p.block_table = fake<const int32_t>(0x600002); }, kFields, kInvalid,
       "block_table", {"0x600002", "4-byte"}, 1},
      {"MisalignedLse", [](Problem& t) { t.p.lse = fake<float>(0x800001); }, kFields, kInvalid, "lse", {"0x800001"}, 1},

      // ---- counts ----
      {"NegativeNumSeqs", [](Problem& t) { t.p.num_seqs = -1; }, kFields, kInvalid, "num_seqs", {"-1"}, 1},
      {"NoSequenceWithTokens", [](Problem& t) { t.p.num_seqs = 0; }, kFields, kInvalid, "num_seqs", {"num_tokens (13)"}, 1},
      // num_tokens (-3) also breaks max_seqlen_q (7) <= num_tokens.
      {"NegativeNumTokens", [](Problem& t) { t.p.num_tokens = -3; }, kFields, kInvalid, "num_tokens", {"-3"}, 2},
      {"ZeroQHeads", [](Problem& t) { t.p.num_q_heads = 0; }, kFields, kInvalid, "num_q_heads", {"num_q_heads (0)"}, 1},
      {"NegativeKvHeads", [](Problem& t) { t.p.num_kv_heads = -2; }, kFields, kInvalid, "num_kv_heads",
       {"num_kv_heads (-2)"}, 1},
      {"QHeadsNotAMultipleOfKvHeads", [](Problem& t) { t.reshape({.num_q_heads = 12, .num_kv_heads = 5}); }, kFields, kInvalid,
       "num_kv_heads", {"num_q_heads (12) is not a multiple of num_kv_heads (5)"}, 1},
      {"HeadSize0", [](Problem& t) { t.p.head_size = 0; }, kFields, kUnsupported, "head_size", {"head_size (0)"}, 1},
      {"HeadSize32", [](Problem& t) { t.reshape({.head_size = 32}); }, kFields, kUnsupported, "head_size", {"head_size (32)"}, 1},
      {"HeadSize80", [](Problem& t) { t.reshape({.head_size = 80}); }, kFields, kUnsupported, "head_size",
       {"head_size (80) is not one of 64, 96, 128, 192, 256"}, 1},
      {"HeadSize100", [](Problem& t) { t.p.head_size = 100; }, kFields, kUnsupported, "head_size", {"head_size (100)"}, 1},
      {"HeadSize160", [](Problem& t) { t.reshape({.head_size = 160}); }, kFields, kUnsupported, "head_size", {"head_size (160)"}, 1},
      {"HeadSize512", [](Problem& t) { t.reshape({.head_size = 512}); }, kFields, kUnsupported, "head_size", {"head_size (512)"}, 1},
      {"EmptyBatchStillChecksHeadSize", [](Problem& t) { t.make_empty_batch(), t.p.head_size = 80; }, kFields,
       kUnsupported, "head_size", {"80"}, 1},

      // ---- dtypes ----
      {"QDtypeF32", [](Problem& t) { t.p.q_dtype = t.p.kv_dtype = DType::f32; }, kFields, kUnsupported, "q_dtype",
       {"fp32", "must be fp16, bf16, fp8_e4m3fn or fp8_e4m3fnuz"}, 1},
      // fp8 q over (correctly scaled) fp8 KV, without an output dtype
      {"QDtypeFp8OutUnset", [](Problem& t) { t.make_fp8(DType::fp8_e4m3fn), t.p.q_dtype = DType::fp8_e4m3fn; }, kFields,
       kInvalid, "out_format.dtype", {"unset", "fp8_e4m3fn"}, 1},
      {"QDtypeFp8FnuzOutUnset", [](Problem& t) { t.make_fp8(DType::fp8_e4m3fnuz), t.p.q_dtype = DType::fp8_e4m3fnuz; },
       kFields, kInvalid, "out_format.dtype", {"unset", "fp8_e4m3fnuz"}, 1},
      {"QDtypeOutOfEnum", [](Problem& t) { t.p.q_dtype = static_cast<DType>(9); }, kFields, kUnsupported, "q_dtype",
       {"DType(9)"}, 1},
      {"OutDtypeF32", [](Problem& t) { t.p.out_format.dtype = DType::f32; }, kFields, kUnsupported, "out_format.dtype",
       {"fp32"}, 1},
      {"OutDtypeOther16Bit", [](Problem& t) { t.p.out_format.dtype = DType::bf16; }, kFields, kUnsupported,
       "out_format.dtype", {"(bf16)", "compute dtype (fp16"}, 1},
      {"Fp8QBf16KvF16Out", [](Problem& t) { t.make_fp8_q(), t.p.kv_dtype = DType::bf16, t.p.kv_scale_mode = KvScaleMode::none,
                                             t.p.out_format.dtype = DType::f16; },
       kFields, kUnsupported, "out_format.dtype", {"(fp16)", "compute dtype (bf16"}, 1},

      // ---- fp8 queries and outputs (problem/fp8_io_rules.hpp) ----
      {"QScaleOn16BitQ", [](Problem& t) { t.p.q_scale.host = 2.f; }, kFields, kInvalid, "q_scale.host",
       {"(2)", "only fp8 queries"}, 1},
      {"QScaleDeviceOn16BitQ", [](Problem& t) { t.p.q_scale.device = fake<const float>(0x900020); }, kFields, kInvalid,
       "q_scale.device", {"0x900020", "only fp8 queries"}, 1},
      {"QScaleNegative", [](Problem& t) { t.make_fp8_q(), t.p.q_scale.host = -0.5f; }, kFields, kInvalid, "q_scale.host",
       {"(-0.5)"}, 1},
      {"QScaleNaN", [](Problem& t) { t.make_fp8_q(), t.p.q_scale.host = std::nanf(""); }, kFields, kInvalid,
       "q_scale.host", {"nan"}, 1},
      {"QScaleInf", [](Problem& t) { t.make_fp8_q(), t.p.q_scale.host = INFINITY; }, kFields, kInvalid, "q_scale.host",
       {"inf"}, 1},
      {"Fp8MathOutOfRange", [](Problem& t) { t.make_fp8_q(), t.p.fp8_math = static_cast<hipattn::Fp8Math>(3); }, kFields,
       kInvalid, "fp8_math", {"fp8_math (3) is not one of fp8_qk, fp8_pv, convert"}, 1},
      {"QScaleMisaligned", [](Problem& t) { t.make_fp8_q(), t.p.q_scale.device = fake<const float>(0x900022); }, kFields,
       kInvalid, "q_scale.device", {"0x900022", "4-byte"}, 1},
      {"OutScaleOn16BitOut", [](Problem& t) { t.p.out_format.scale.host = 4.f; }, kFields, kInvalid,
       "out_format.scale.host", {"(4)", "only an fp8 output"}, 1},
      {"OutFp8ScaleNegative", [](Problem& t) { t.make_fp8_out(), t.p.out_format.scale.host = -2.f; }, kFields, kInvalid,
       "out_format.scale.host", {"(-2)"}, 1},
      {"OutFp8ScaleNaN", [](Problem& t) { t.make_fp8_out(), t.p.out_format.scale.host = std::nanf(""); }, kFields,
       kInvalid, "out_format.scale.host", {"nan"}, 1},
      {"OutFp8StrideNot16Bytes", [](Problem& t) { t.make_fp8_out(), t.p.o_stride_head = t.p.head_size + 8; }, kFields,
       kInvalid, "o_stride_head", {"not a multiple of 16 bytes"}, 1},
      {"OutGroupOn16BitOut", [](Problem& t) { t.p.out_format.group_size = 32; }, kFields, kInvalid,
       "out_format.group_size", {"(32)", "only an fp8 output"}, 1},
      {"OutGroupSize8", [](Problem& t) { t.make_fp8_group(8); }, kFields, kUnsupported, "out_format.group_size",
       {"(8)", "16, 32, 64, 128"}, 1},
      {"OutGroupSize48", [](Problem& t) { t.make_fp8_group(48); }, kFields, kUnsupported, "out_format.group_size",
       {"(48)", "16, 32, 64, 128"}, 1},
      {"OutGroupSize128NotDividing96", [](Problem& t) { t.reshape({.head_size = 96}), t.make_fp8_group(128); }, kFields,
       kUnsupported, "out_format.group_size", {"(128)", "head_size (96)"}, 1},
      {"OutGroupScaleNull", [](Problem& t) { t.make_fp8_group(32), t.p.out_format.group_scale = nullptr; }, kFields,
       kInvalid, "out_format.group_scale", {"nullptr", "required"}, 1},
      {"OutGroupScaleMisaligned", [](Problem& t) { t.make_fp8_group(32), t.p.out_format.group_scale = fake<float>(0x910002); },
       kFields, kInvalid, "out_format.group_scale", {"0x910002", "4-byte"}, 1},
      {"OutGroupWithTensorScale", [](Problem& t) { t.make_fp8_group(32), t.p.out_format.scale.host = 2.f; }, kFields,
       kInvalid, "out_format.scale.host", {"(2)", "computes its scales"}, 1},
      {"OutGroupScalesOverlap", [](Problem& t) { t.make_fp8_group(32), t.p.out_format.group_scale_stride_token = 3; },
       kFields, kInvalid, "out_format.group_scale_stride_token", {"(3)", "overlap"}, 1},
      {"OutGroupFp8MaxAboveFnuz", [](Problem& t) { t.make_fp8_group(32, DType::fp8_e4m3fnuz), t.p.out_format.group_fp8_max = 448.f; },
       kFields, kInvalid, "out_format.group_fp8_max", {"(448)", "240"}, 1},
      {"OutGroupFp8MaxNegative", [](Problem& t) { t.make_fp8_group(32), t.p.out_format.group_fp8_max = -1.f; }, kFields,
       kInvalid, "out_format.group_fp8_max", {"(-1)"}, 1},
      {"KvDtypeBf16WithF16Q", [](Problem& t) { t.p.kv_dtype = DType::bf16; }, kFields, kUnsupported, "kv_dtype",
       {"kv_dtype (bf16)", "q_dtype (fp16)"}, 1},
      {"KvDtypeF32", [](Problem& t) { t.p.kv_dtype = DType::f32; }, kFields, kUnsupported, "kv_dtype", {"fp32"}, 1},

      // ---- paged cache and sequence bounds ----
      {"ZeroBlockSize", [](Problem& t) { t.p.block_size = 0; }, kFields, kInvalid, "block_size", {"block_size (0)"}, 1},
      {"ZeroNumBlocks", [](Problem& t) { t.p.num_blocks = 0; }, kFields, kInvalid, "num_blocks", {"num_blocks (0)"}, 1},
      {"ZeroMaxBlocksPerSeq", [](Problem& t) { t.p.max_blocks_per_seq = 0, t.p.max_seqlen_k = 0, t.p.causal = false; },
       kFields, kInvalid, "max_blocks_per_seq", {"max_blocks_per_seq (0)"}, 1},
      {"MaxBlocksPerSeqBelowMaxSeqlenK", [](Problem& t) { t.p.max_blocks_per_seq = 1; }, kFields, kInvalid,
       "max_blocks_per_seq", {"max_blocks_per_seq (1)", "block_size (16)", "max_seqlen_k (20)"}, 1},
      {"BlockTableStrideBelowRow", [](Problem& t) { t.p.block_table_stride = 1; }, kFields, kInvalid,
       "block_table_stride", {"block_table_stride (1)", "max_blocks_per_seq (2)"}, 1},
      {"NegativeMaxSeqlenQ", [](Problem& t) { t.p.max_seqlen_q = -1; }, kFields, kInvalid, "max_seqlen_q",
       {"max_seqlen_q (-1)"}, 2},  // and below the average q length
      {"NegativeMaxSeqlenK", [](Problem& t) { t.p.max_seqlen_k = -4; }, kFields, kInvalid, "max_seqlen_k",
       {"max_seqlen_k (-4)"}, 2},  // and causal with max_seqlen_q > max_seqlen_k
      {"MaxSeqlenQAboveNumTokens", [](Problem& t) { t.p.max_seqlen_q = 14; }, kFields, kInvalid, "max_seqlen_q",
       {"max_seqlen_q (14)", "num_tokens (13)"}, 1},
      {"MaxSeqlenQBelowTheAverage", [](Problem& t) { t.p.max_seqlen_q = 4; }, kFields, kInvalid, "max_seqlen_q",
       {"max_seqlen_q (4)", "= 5"}, 1},  // ceil(13 / 3) = 5
      {"CausalMaxSeqlenQAboveMaxSeqlenK", [](Problem& t) { t.p.max_seqlen_k = 6; }, kFields, kInvalid, "max_seqlen_q",
       {"causal", "max_seqlen_q (7)", "max_seqlen_k (6)"}, 1},

      // ---- logits ----
      {"ScaleZero", [](Problem& t) { t.p.scale = 0.f; }, kFields, kInvalid, "scale", {"scale (0"}, 1},
      {"ScaleNegative", [](Problem& t) { t.p.scale = -0.5f; }, kFields, kInvalid, "scale", {"scale (-0.5"}, 1},
      {"ScaleInf", [](Problem& t) { t.p.scale = std::numeric_limits<float>::infinity(); }, kFields, kInvalid, "scale",
       {"scale (inf"}, 1},
      {"ScaleNan", [](Problem& t) { t.p.scale = std::numeric_limits<float>::quiet_NaN(); }, kFields, kInvalid, "scale",
       {"scale (nan"}, 1},
      {"SoftcapNegative", [](Problem& t) { t.p.softcap = -1.f; }, kFields, kInvalid, "softcap", {"softcap (-1"}, 1},
      {"SoftcapInf", [](Problem& t) { t.p.softcap = std::numeric_limits<float>::infinity(); }, kFields, kInvalid,
       "softcap", {"softcap (inf"}, 1},
      {"SoftcapNan", [](Problem& t) { t.p.softcap = std::numeric_limits<float>::quiet_NaN(); }, kFields, kInvalid,
       "softcap", {"softcap (nan"}, 1},
      {"WindowLeftMinus2", [](Problem& t) { t.p.window_left = -2; }, kFields, kInvalid, "window_left",
       {"window_left (-2)"}, 1},

      // ---- fp8 scales ----
      {"Fp8WithoutScaleMode", [](Problem& t) { t.make_fp8(), t.p.kv_scale_mode = KvScaleMode::none; }, kFields, kInvalid,
       "kv_scale_mode", {"none", "fp8_e4m3fn"}, 1},
      {"Fp8WithoutKScale", [](Problem& t) { t.make_fp8(), t.p.k_scale = nullptr; }, kFields, kInvalid, "k_scale",
       {"k_scale (nullptr)", "fp8"}, 1},
      {"Fp8WithoutVScale", [](Problem& t) { t.make_fp8(DType::fp8_e4m3fnuz), t.p.v_scale = nullptr; }, kFields, kInvalid,
       "v_scale", {"v_scale (nullptr)"}, 1},
      {"F16KvWithPerTensorScales",
       [](Problem& t) {
         t.p.kv_scale_mode = KvScaleMode::per_tensor;
         t.p.k_scale = fake<const float>(0x900000), t.p.v_scale = fake<const float>(0x900010);
       },
       kFields, kInvalid, "kv_scale_mode", {"per_tensor", "fp16"}, 1},
      {"F16KvWithPerTokenHeadScales",
       [](Problem& t) {
         t.p.kv_scale_mode = KvScaleMode::per_token_head;
         t.p.k_scale = fake<const float>(0x900000), t.p.v_scale = fake<const float>(0x900010);
       },
       kFields, kInvalid, "kv_scale_mode", {"per_token_head", "fp16"}, 1},
      {"UnknownScaleMode", [](Problem& t) { t.make_fp8(), t.p.kv_scale_mode = static_cast<KvScaleMode>(7); }, kFields,
       kInvalid, "kv_scale_mode", {"kv_scale_mode (7) is not one of none, per_tensor, per_token_head"}, 1},
      {"PerTokenHeadSlotMeetsHead", [](Problem& t) { t.make_per_token_head(), t.p.scale_stride_slot = 1; }, kFields,
       kInvalid, "scale_stride_slot", {"scale_stride_slot (1)", "needs a stride >= 2"}, 1},
      {"PerTokenHeadBlockMeetsNext", [](Problem& t) { t.make_per_token_head(), t.p.scale_stride_block = 31; }, kFields,
       kInvalid, "scale_stride_block", {"scale_stride_block (31)", "32"}, 1},
      {"PerTokenHeadNegativeStride", [](Problem& t) { t.make_per_token_head(), t.p.scale_stride_head = -1; }, kFields,
       kInvalid, "scale_stride_head", {"scale_stride_head (-1)"}, 1},

      // ---- optional tensors ----
      {"QqBiasWithoutStride", [](Problem& t) { t.p.qq_bias_stride = 0; }, kFields, kInvalid, "qq_bias_stride",
       {"qq_bias_stride (0)"}, 1},
      {"LseStrideBelowTokens", [](Problem& t) { t.p.lse_stride_head = 12; }, kFields, kInvalid, "lse_stride_head",
       {"lse_stride_head (12)", "num_tokens (13)"}, 1},

      // ---- strides: >= 0, < 2^31, no overlap, 16-byte multiples ----
      {"NegativeQStrideHead", [](Problem& t) { t.p.q_stride_head = -128; }, kFields, kInvalid, "q_stride_head",
       {"q_stride_head (-128)"}, 1},
      {"NegativeOStrideToken", [](Problem& t) { t.p.o_stride_token = -1; }, kFields, kInvalid, "o_stride_token", {"-1"}, 1},
      {"NegativeKStrideSlot", [](Problem& t) { t.p.k_stride_slot = -256; }, kFields, kInvalid, "k_stride_slot", {"-256"}, 1},
      {"NegativeVStrideBlock", [](Problem& t) { t.p.v_stride_block = -4096; }, kFields, kInvalid, "v_stride_block",
       {"-4096"}, 1},
      {"NoTokenNegativeStride", [](Problem& t) { t.make_no_token(), t.p.q_stride_head = -1; }, kFields, kInvalid,
       "q_stride_head", {"-1"}, 1},
      {"KStrideBlock2To31", [](Problem& t) { t.p.k_stride_block = int64_t(1) << 31; }, kFields, kInvalid, "k_stride_block",
       {"2147483648", "2^31"}, 1},
      {"BlockTableStride2To32", [](Problem& t) { t.p.block_table_stride = int64_t(1) << 32; }, kFields, kInvalid,
       "block_table_stride", {"4294967296"}, 1},
      {"QStrideHeadOverlapsHead", [](Problem& t) { t.p.q_stride_head = 64; }, kFields, kInvalid, "q_stride_head",
       {"q_stride_head (64)", "head_size (128)"}, 1},
      {"QStrideTokenOverlapsHeads", [](Problem& t) { t.p.q_stride_token = 512; }, kFields, kInvalid, "q_stride_token",
       {"q_stride_token (512)", "1024"}, 1},  // < 8 heads * 128
      {"OStrideTokenZero", [](Problem& t) { t.p.o_stride_token = 0; }, kFields, kInvalid, "o_stride_token",
       {"o_stride_token (0)"}, 1},  // every token writes the same row
      {"KBlocksOverlapByHalf", [](Problem& t) { t.p.k_stride_block = 2048; }, kFields, kInvalid, "k_stride_block",
       {"k_stride_block (2048)", "4096"}, 1},
      {"KSlotEqualsHead", [](Problem& t) { t.p.k_stride_slot = 128; }, kFields, kInvalid, "k_stride_slot",
       {"k_stride_slot (128)", "256"}, 1},  // slots and heads collide; ties name the outer dim
      {"VHeadOverlapsSlots", [](Problem& t) { t.p.v_stride_head = 1024; }, kFields, kInvalid, "v_stride_head",
       {"v_stride_head (1024)", "2048"}, 1},  // HND: < block_size (16) * 128
      {"QStrideTokenNot16Bytes", [](Problem& t) { t.p.q_stride_token = 1028; }, kFields, kInvalid, "q_stride_token",
       {"q_stride_token (1028", "2056 bytes", "16"}, 1},
      {"OStrideHeadNot16Bytes", [](Problem& t) { t.p.o_stride_head = 132, t.p.o_stride_token = 8 * 132; }, kFields,
       kInvalid, "o_stride_head", {"264 bytes"}, 1},
      // The same element stride is aligned in fp16 (see kAccepted) and misaligned in fp8 (1-byte elements).
      {"Fp8KStrideBlockNot16Bytes", [](Problem& t) { t.p.k_stride_block = 4104, t.make_fp8(); }, kFields, kInvalid,
       "k_stride_block", {"4104 bytes"}, 1},
      {"Fp8VStrideSlotNot16Bytes",
       [](Problem& t) {
         t.make_fp8();
         t.p.v_stride_slot = 136;  // HND slot stride in fp8: 136 bytes; head stride 2048 >= 16 * 136 still
         t.p.v_stride_head = 16 * 136, t.p.v_stride_block = 2 * 16 * 136;
       },
       kFields, kInvalid, "v_stride_slot", {"136 bytes"}, 1},

      // ---- host copies of the device arrays ----
      {"CuSeqlensQShort", [](Problem& t) { t.cu.pop_back(); }, kHost, kInvalid, "cu_seqlens_q",
       {"3 entries", "4 expected"}, 1},
      {"CuSeqlensQNotFromZero", [](Problem& t) { t.cu[0] = 1; }, kHost, kInvalid, "cu_seqlens_q", {"cu_seqlens_q[0] (1)"}, 1},
      // Decreases at 2 and 3 (reported once, at the first); cu[3] = 1 != num_tokens, and sequence 0's q length
      // 9 > max_seqlen_q (7) are reported too.
      {"CuSeqlensQDecreasing", [](Problem& t) { t.cu = {0, 9, 2, 1}; }, kHost, kInvalid, "cu_seqlens_q",
       {"index 2", "cu_seqlens_q[2] (2) < cu_seqlens_q[1] (9)", "(and 1 more decreasing indices)"}, 3},
      {"CuSeqlensQNotEndingAtNumTokens", [](Problem& t) { t.cu.back() = 12; }, kHost, kInvalid, "cu_seqlens_q",
       {"cu_seqlens_q[3] (12)", "num_tokens (13)"}, 1},
      {"SeqLensKLong", [](Problem& t) { t.kv.push_back(4); }, kHost, kInvalid, "seq_lens_k", {"4 entries", "num_seqs (3)"}, 1},
      // A negative kv length is also shorter than the sequence's 1 query token (causal).
      {"SeqLensKNegative", [](Problem& t) { t.kv[1] = -1; }, kHost, kInvalid, "seq_lens_k",
       {"sequence 1", "seq_lens_k[1] (-1)"}, 2},
      {"QLengthAboveMaxSeqlenQ", [](Problem& t) { t.p.max_seqlen_q = 6; }, kHost, kInvalid, "max_seqlen_q",
       {"sequence 2", "q length 7", "max_seqlen_q (6)"}, 1},  // sequence 2 has 7 query tokens
      {"KvLengthAboveMaxSeqlenK", [](Problem& t) { t.kv[0] = 21; }, kHost, kInvalid, "max_seqlen_k",
       {"sequence 0", "(21)", "max_seqlen_k (20)"}, 1},
      {"CausalQLengthAboveKvLength", [](Problem& t) { t.kv[2] = 6; }, kHost, kInvalid, "seq_lens_k",
       {"sequence 2", "q length 7", "seq_lens_k[2] (6)", "causal"}, 1},
      {"BlockIdPastNumBlocks", [](Problem& t) { t.bt[1] = 8; }, kHost, kInvalid, "block_table",
       {"sequence 0, column 1", "block id 8", "num_blocks (8)"}, 1},  // num_blocks = 8
      {"NegativeBlockId", [](Problem& t) { t.bt[6] = -2; }, kHost, kInvalid, "block_table",
       {"sequence 2, column 0", "block id -2"}, 1},
      {"BlockIdUsedOnceKvGrows", [](Problem& t) { t.bt[4] = 999, t.kv[1] = 17; }, kHost, kInvalid, "block_table",
       {"sequence 1, column 1", "block id 999"}, 1},  // kv length 17 uses two blocks
      {"BlockTableShort", [](Problem& t) { t.bt.resize(7); }, kHost, kInvalid, "block_table",
       {"7 entries", "8 needed"}, 1},  // (3 - 1) * 3 + 2 = 8 needed
      // The field rules come first: the host arrays are not read while a field is wrong.
      {"FieldRulesComeFirst", [](Problem& t) { t.reshape({.num_kv_heads = 3}), t.cu[0] = 5; }, kHost, kInvalid, "num_kv_heads",
       {"num_q_heads (8)", "num_kv_heads (3)"}, 1},
  };
  return cases;
}

void PrintTo(const Rejected& c, std::ostream* os) { *os << c.name; }

class ValidateRejects : public ::testing::TestWithParam<Rejected> {};

TEST_P(ValidateRejects, FirstIssueNamesFieldCodeAndValue) {
  const Rejected& c = GetParam();
  Problem t;
  expect_ok(c.host ? validate(t.p, t.host()) : validate(t.p));  // the baseline is valid
  c.mutate(t);
  const ValidationReport r = c.host ? validate(t.p, t.host()) : validate(t.p);
  expect_fail(r, c.code, c.field, c.words);
  EXPECT_EQ(r.size(), c.issues) << describe(r);
}

INSTANTIATE_TEST_SUITE_P(Rules, ValidateRejects, ::testing::ValuesIn(rejected_cases()),
                         [](const ::testing::TestParamInfo<Rejected>& i) { return std::string(i.param.name); });

// ---------------------------------------------------------------------------------------------------
// The table of accepted problems (mutations that must still validate)

struct Accepted {
  const char* name;
  Shape shape;
  Mutation mutate;
  bool host;
};

const std::vector<Accepted>& accepted_cases() {
  static const std::vector<Accepted> cases = {
      // fp8 queries and outputs (problem/fp8_io.hpp)
      {"Fp8QFp8KvBf16Out", {}, [](Problem& t) { t.make_fp8_q(); }, kFields},
      // host 0 is unset: the scale 1 where the scale is used, and unset where it must be
      {"Fp8QScaleHostZeroIsOne", {}, [](Problem& t) { t.make_fp8_q(), t.p.q_scale.host = 0.f; }, kFields},
      {"Fp8OutScaleHostZeroIsOne", {}, [](Problem& t) { t.make_fp8_out(), t.p.out_format.scale.host = 0.f; }, kFields},
      {"QScaleOneOn16BitQ", {}, [](Problem& t) { t.p.q_scale.host = 1.f; }, kFields},
      {"Fp8OutGroupTensorScaleZero", {}, [](Problem& t) { t.make_fp8_group(32), t.p.out_format.scale.host = 0.f; }, kFields},
      {"Fp8QBf16Kv", {}, [](Problem& t) { t.make_fp8_q(), t.p.kv_dtype = DType::bf16, t.p.kv_scale_mode = KvScaleMode::none; }, kFields},
      {"Fp8QFnuzF16Kv", {}, [](Problem& t) { t.make_fp8_q(), t.p.q_dtype = DType::fp8_e4m3fnuz, t.p.kv_dtype = DType::f16,
                                          t.p.out_format.dtype = DType::f16,
                                          t.p.kv_scale_mode = KvScaleMode::none, t.p.q_scale.device = fake<const float>(0x900020); }, kFields},
      {"Fp8OutPerTensorDeviceScale", {}, [](Problem& t) { t.make_fp8_out(), t.p.out_format.scale.host = 1.f,
                                                       t.p.out_format.scale.device = fake<const float>(0x900030); }, kFields},
      {"Fp8FnuzOutPerTensor", {}, [](Problem& t) { t.make_fp8_out(DType::fp8_e4m3fnuz); }, kFields},
      {"Fp8OutGroup64Ue8m0", {}, [](Problem& t) { t.make_fp8_group(64), t.p.out_format.group_ue8m0 = true; }, kFields},
      {"Fp8OutGroup16ColumnMajor", {}, [](Problem& t) {
         t.make_fp8_group(16);
         t.p.out_format.group_scale_stride_token = 1, t.p.out_format.group_scale_stride_group = 16;  // 13 tokens padded to 16
       }, kFields},
      {"Fp8FnuzOutGroupVllmMax224", {}, [](Problem& t) { t.make_fp8_group(128, DType::fp8_e4m3fnuz), t.p.out_format.group_fp8_max = 224.f; }, kFields},
      {"Fp8QAndFp8OutGroup", {}, [](Problem& t) { t.make_fp8_q(), t.make_fp8_group(32); }, kFields},
      {"Baseline", {}, [](Problem&) {}, kHost},
      {"BaselineNotCausal", {}, [](Problem& t) { t.p.causal = false; }, kHost},
      {"OptionalPointersNull", {},
       [](Problem& t) {
         t.p.sinks = nullptr, t.p.alibi_slopes = nullptr, t.p.qq_bias = nullptr, t.p.lse = nullptr;
         t.p.qq_bias_stride = 0, t.p.lse_stride_head = 0;  // unused without their tensors
       },
       kFields},
      {"EmptyBatch", {}, [](Problem& t) { t.make_empty_batch(); }, kHost},
      {"NoTokenQAndOutMayBeNull", {}, [](Problem& t) { t.make_no_token(); }, kFields},
      // q / out have no element: their strides address nothing (only the sign is checked).
      {"NoTokenStridesAddressNothing", {},
       [](Problem& t) { t.make_no_token(), t.p.q_stride_head = 100, t.p.o_stride_head = 4; }, kFields},
      {"ScalarPointersNeedOnly4Bytes", {},
       [](Problem& t) { t.p.sinks = fake<const float>(0x630004), t.p.cu_seqlens_q = fake<const int32_t>(0x610004); }, kFields},
      {"MaxSeqlenKOneBlock", {}, [](Problem& t) { t.p.max_blocks_per_seq = 1, t.p.max_seqlen_k = 16, t.p.max_seqlen_q = 7; },
       kFields},
      {"MaxSeqlenQEqualsNumTokens", {}, [](Problem& t) { t.p.max_seqlen_q = 13; }, kFields},
      {"MaxSeqlenQEqualsTheAverage", {}, [](Problem& t) { t.p.max_seqlen_q = 5; }, kFields},
      {"NotCausalMaxSeqlenQAboveMaxSeqlenK", {}, [](Problem& t) { t.p.max_seqlen_k = 6, t.p.causal = false; }, kFields},
      {"Softcap30", {}, [](Problem& t) { t.p.softcap = 30.f; }, kFields},
      {"WindowLeftMinus1", {}, [](Problem& t) { t.p.window_left = -1; }, kFields},
      {"WindowLeft0", {}, [](Problem& t) { t.p.window_left = 0; }, kFields},
      {"WindowLeft1", {}, [](Problem& t) { t.p.window_left = 1; }, kFields},
      {"WindowLeft127", {}, [](Problem& t) { t.p.window_left = 127; }, kFields},
      {"WindowLeft2To30", {}, [](Problem& t) { t.p.window_left = 1 << 30; }, kFields},
      {"PerTokenHeadScales", {}, [](Problem& t) { t.make_per_token_head(); }, kFields},
      // head-major [num_kv_heads, num_blocks, block_size] scales are fine too
      {"PerTokenHeadScalesHeadMajor", {},
       [](Problem& t) {
         t.make_per_token_head();
         t.p.scale_stride_slot = 1, t.p.scale_stride_block = 16, t.p.scale_stride_head = 128;
       },
       kFields},
      {"PerTensorScalesIgnoreStrides", {}, [](Problem& t) { t.make_fp8(), t.p.scale_stride_head = -5, t.p.scale_stride_slot = 0; },
       kFields},
      {"QqBiasStride1", {}, [](Problem& t) { t.p.qq_bias_stride = 1; }, kFields},
      {"LseStrideEqualsTokens", {}, [](Problem& t) { t.p.lse_stride_head = 13; }, kFields},
      // One kv head: its stride is never used (would overlap and be misaligned with 2 heads).
      {"OneKvHeadIgnoresHeadStrides", one_kv_head(), [](Problem& t) { t.p.k_stride_head = 3, t.p.v_stride_head = 0; }, kFields},
      // One token: its stride is unused.
      {"OneTokenIgnoresTokenStrides", {}, [](Problem& t) { t.make_one_token(), t.p.q_stride_token = 5, t.p.o_stride_token = 0; },
       kHost},
      {"F16KStrideBlock4104", {}, [](Problem& t) { t.p.k_stride_block = 4104; }, kFields},  // 8208 bytes
      {"QLengthAboveMaxSeqlenQFieldsOnly", {}, [](Problem& t) { t.p.max_seqlen_q = 6; }, kFields},  // the host copy sees it
      {"NotCausalQLengthAboveKvLength", {}, [](Problem& t) { t.kv[2] = 6, t.p.causal = false; }, kHost},
      {"UnusedBlockTableEntriesIgnored", {}, [](Problem& t) { t.bt[4] = 999, t.bt[2] = -77; }, kHost},
      {"EmptyBlockTableNotChecked", {}, [](Problem& t) { t.bt[0] = 1000, t.bt.clear(); }, kHost},
      {"BlockTableExactlyCoversRows", {}, [](Problem& t) { t.bt.resize(8); }, kHost},
  };
  return cases;
}

void PrintTo(const Accepted& c, std::ostream* os) { *os << c.name; }

class ValidateAccepts : public ::testing::TestWithParam<Accepted> {};

TEST_P(ValidateAccepts, NoIssue) {
  const Accepted& c = GetParam();
  Problem t(c.shape);
  c.mutate(t);
  expect_ok(c.host ? validate(t.p, t.host()) : validate(t.p));
  if (c.host) expect_ok(validate(t.p));
}

INSTANTIATE_TEST_SUITE_P(Rules, ValidateAccepts, ::testing::ValuesIn(accepted_cases()),
                         [](const ::testing::TestParamInfo<Accepted>& i) { return std::string(i.param.name); });

// ---------------------------------------------------------------------------------------------------
// The report, throw_if_error, the limits

TEST(Validate, ReportAndThrow) {
  const ValidationReport ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.size(), 0u);
  EXPECT_EQ(ok.field(), "");
  EXPECT_NO_THROW(hipattn::throw_if_error(ok));
  Problem t({.num_q_heads = 12, .num_kv_heads = 5});
  const ValidationReport r = validate(t.p);
  ASSERT_EQ(r.size(), 1u) << describe(r);
  EXPECT_EQ(r.message(), "num_q_heads (12) is not a multiple of num_kv_heads (5)");
  EXPECT_EQ(&r.first(), r.find("num_kv_heads"));
  try {
    hipattn::throw_if_error(r);
    FAIL() << "throw_if_error did not throw";
  } catch (const hipattn::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(e.field(), "num_kv_heads");
    EXPECT_NE(std::string(e.what()).find("num_q_heads (12) is not a multiple of num_kv_heads (5)"), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("more"), std::string::npos) << e.what();
  }
}

// Independent mistakes are all reported, in rule order; throw_if_error throws the first's code and
// field and lists the others.
TEST(Validate, SeveralViolationsAreAllReported) {
  Problem t({.num_q_heads = 12, .num_kv_heads = 5});  // counts
  t.p.head_size = 80;                          // head size (unsupported); strides made for 128 still fit 80
  t.p.kv_dtype = DType::bf16;                  // dtypes (unsupported)
  t.p.scale = 0.f;                             // logits
  t.p.window_left = -3;
  t.p.q = fake<const void>(0x10008);           // pointers
  t.p.seq_lens_k = nullptr;
  t.p.lse_stride_head = 2;                     // optional tensors
  t.p.k_stride_block = 2048;                   // tensor strides: overlap
  t.p.o_stride_token = 12 * 136 + 4;           // tensor strides: alignment
  const ValidationReport r = validate(t.p);
  const std::vector<std::pair<std::string, ErrorCode>> want = {
      {"num_kv_heads", ErrorCode::invalid_argument}, {"head_size", ErrorCode::unsupported},
      {"kv_dtype", ErrorCode::unsupported},          {"scale", ErrorCode::invalid_argument},
      {"window_left", ErrorCode::invalid_argument},  {"seq_lens_k", ErrorCode::invalid_argument},
      {"q", ErrorCode::invalid_argument},            {"lse_stride_head", ErrorCode::invalid_argument},
      {"k_stride_block", ErrorCode::invalid_argument}, {"o_stride_token", ErrorCode::invalid_argument},
  };
  ASSERT_EQ(r.size(), want.size()) << describe(r);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.issues[i].field, want[i].first) << i << ": " << describe(r);
    EXPECT_EQ(r.issues[i].code, want[i].second) << i << ": " << describe(r);
  }
  // A tensor's layout is reported at its first failing stage (k_cache: the overlap); K / V stride
  // alignment waits for a valid kv_dtype, q / out's (q_dtype is valid) is checked.
  EXPECT_NE(r.find("k_stride_block")->message.find("overlap"), std::string::npos);
  EXPECT_NE(r.find("o_stride_token")->message.find("not a multiple of 16 bytes"), std::string::npos);
  try {
    hipattn::throw_if_error(r);
    FAIL() << "throw_if_error did not throw";
  } catch (const hipattn::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(e.field(), "num_kv_heads");
    const std::string w = e.what();
    EXPECT_NE(w.find("[+9 more: head_size: head_size (80)"), std::string::npos) << w;
    for (const auto& [field, code] : want) EXPECT_NE(w.find(field + ": "), std::string::npos) << field << " in " << w;
  }

  // The host-array rules accumulate too, each broken rule once, at its first sequence, with the count
  // of the others.
  Problem h;
  h.kv = {3, 9, 2};  // sequences 0 and 2 are shorter than their query (causal)
  h.bt[0] = 8;       // sequence 0, column 0 out of range
  h.bt[6] = -1;      // sequence 2, column 0 out of range
  h.bt[3] = 99;      // sequence 1, column 0 out of range
  const ValidationReport hr = validate(h.p, h.host());
  ASSERT_EQ(hr.size(), 2u) << describe(hr);
  expect_fail(hr, ErrorCode::invalid_argument, "seq_lens_k", {"sequence 0", "(and 1 more sequences)"});
  EXPECT_EQ(hr.issues[1].field, "block_table");
  EXPECT_NE(hr.issues[1].message.find("sequence 0, column 0: block id 8"), std::string::npos) << describe(hr);
  EXPECT_NE(hr.issues[1].message.find("(and 2 more entries)"), std::string::npos) << describe(hr);
}

TEST(Validate, Limits) {
  static_assert(hipattn::ValidationLimits::vector_align_bytes == 16);
  static_assert(hipattn::ValidationLimits::max_32bit_extent_bytes == 2147483648LL);
  const std::set<int32_t> supported{64, 96, 128, 192, 256};  // the instance table
  for (int32_t d = -1; d <= 512; ++d)
    EXPECT_EQ(hipattn::ValidationLimits::head_size_supported(d), supported.count(d) == 1) << d;
}

// The builder's contiguous strides: q / out [tokens, heads, head_size], caches NHD or HND, scales
// [blocks, slots, heads], block-table rows of ceil(max_seqlen_k / block_size).
TEST(Validate, BuilderFillsContiguousStridesAndBounds) {
  for (KvLayout layout : {KvLayout::nhd, KvLayout::hnd}) {
    const UnifiedAttentionParams p = hipattn::make_unified_params({.num_seqs = 2,
                                                                   .num_tokens = 9,
                                                                   .max_seqlen_q = 6,
                                                                   .max_seqlen_k = 33,
                                                                   .num_q_heads = 6,
                                                                   .num_kv_heads = 3,
                                                                   .head_size = 64,
                                                                   .num_blocks = 10,
                                                                   .block_size = 8,
                                                                   .layout = layout});
    SCOPED_TRACE(layout == KvLayout::nhd ? "NHD" : "HND");
    EXPECT_EQ(p.q_stride_head, 64);
    EXPECT_EQ(p.q_stride_token, 6 * 64);
    EXPECT_EQ(p.o_stride_head, 64);
    EXPECT_EQ(p.o_stride_token, 6 * 64);
    EXPECT_EQ(p.k_stride_block, 8 * 3 * 64);
    EXPECT_EQ(p.v_stride_block, 8 * 3 * 64);
    EXPECT_EQ(p.k_stride_slot, layout == KvLayout::nhd ? 3 * 64 : 64);
    EXPECT_EQ(p.k_stride_head, layout == KvLayout::nhd ? 64 : 8 * 64);
    EXPECT_EQ(p.v_stride_slot, p.k_stride_slot);
    EXPECT_EQ(p.v_stride_head, p.k_stride_head);
    EXPECT_EQ(p.scale_stride_head, 1);
    EXPECT_EQ(p.scale_stride_slot, 3);
    EXPECT_EQ(p.scale_stride_block, 8 * 3);
    EXPECT_EQ(p.max_blocks_per_seq, 5);  // ceil(33 / 8)
    EXPECT_EQ(p.block_table_stride, 5);
    EXPECT_EQ(p.lse_stride_head, 9);
    EXPECT_EQ(p.qq_bias_stride, 0);
    EXPECT_FLOAT_EQ(p.scale, 0.125f);
    EXPECT_EQ(p.num_seqs, 2);
    EXPECT_EQ(p.num_tokens, 9);
    EXPECT_EQ(p.max_seqlen_q, 6);
    EXPECT_EQ(p.max_seqlen_k, 33);
    EXPECT_EQ(p.num_blocks, 10);
    EXPECT_EQ(p.block_size, 8);
    EXPECT_EQ(p.q, nullptr);
    // With the pointers set it validates.
    UnifiedAttentionParams v = p;
    v.q = fake<const void>(0x1000), v.k_cache = fake<const void>(0x2000), v.v_cache = fake<const void>(0x3000);
    v.out = fake<void>(0x4000), v.block_table = fake<const int32_t>(0x5000);
    v.cu_seqlens_q = fake<const int32_t>(0x6000), v.seq_lens_k = fake<const int32_t>(0x7000);
    expect_ok(validate(v));
    const UnifiedAttentionParams none = hipattn::make_unified_params({.max_seqlen_k = 0, .block_size = 16});
    EXPECT_EQ(none.max_blocks_per_seq, 1);  // at least one column
  }
}

// ---------------------------------------------------------------------------------------------------
// Layouts and dtypes that must pass

TEST(Validate, NhdAndHndLayoutsAreValidForEverySupportedShape) {
  for (int32_t d : hipattn::UnifiedInstanceTable::head_sizes)
    for (int32_t kvh : {1, 2, 8})
      for (int32_t bs : {1, 16, 13, 64}) {
        Shape s;
        s.head_size = d, s.num_kv_heads = kvh, s.num_q_heads = kvh * 4, s.block_size = bs, s.num_blocks = 64;
        Problem t(s);
        t.p.max_blocks_per_seq = (20 + bs - 1) / bs;  // 20 = the longest kv length
        t.p.block_table_stride = t.p.max_blocks_per_seq + 1;
        for (KvLayout k_layout : {KvLayout::nhd, KvLayout::hnd})
          for (KvLayout v_layout : {KvLayout::nhd, KvLayout::hnd}) {
            hipattn::set_cache_strides(t.p, hipattn::cache_strides(k_layout, bs, kvh, d), true, false);
            hipattn::set_cache_strides(t.p, hipattn::cache_strides(v_layout, bs, kvh, d), false, true);
            SCOPED_TRACE("head_size " + std::to_string(d) + " kv_heads " + std::to_string(kvh) + " block_size " +
                         std::to_string(bs) + " k " + (k_layout == KvLayout::nhd ? "NHD" : "HND") + " v " +
                         (v_layout == KvLayout::nhd ? "NHD" : "HND"));
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
    const ValidationReport r = validate(t.p);
    std::string where = "trial " + std::to_string(trial) + " extents " + std::to_string(e[0]) + "," + std::to_string(e[1]) +
                        "," + std::to_string(e[2]) + " strides " + std::to_string(st[0]) + "," + std::to_string(st[1]) +
                        "," + std::to_string(st[2]);
    if (trial % 4 == 0) {
      EXPECT_TRUE(r.ok()) << where << ": " << describe(r);
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
      EXPECT_TRUE(r.field() == "k_stride_head" || r.field() == "k_stride_slot" || r.field() == "k_stride_block")
          << where << ": " << describe(r);
      if (overlap) {
        EXPECT_NE(r.message().find("overlap"), std::string::npos) << where << ": " << describe(r);
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
  Problem s;
  s.make_per_token_head();
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
// Host copies of the device arrays, randomized

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
    hipattn::set_cache_strides(t.p, hipattn::nhd_strides(bs, 2, 128), true, false);
    hipattn::set_cache_strides(t.p, hipattn::hnd_strides(bs, 2, 128), false, true);
    const std::string where = "trial " + std::to_string(trial);
    const ValidationReport good = validate(t.p, t.host());
    ASSERT_TRUE(good.ok()) << where << ": " << describe(good);

    const int32_t i = int32_t(rng() % n), used = (t.kv[i] + bs - 1) / bs, c = int32_t(rng() % used);
    const int32_t bad = (rng() % 2) ? nb + int32_t(rng() % 100) : -1 - int32_t(rng() % 100);
    t.bt[size_t(i) * stride + c] = bad;
    const ValidationReport r = validate(t.p, t.host());
    expect_fail(r, ErrorCode::invalid_argument, "block_table",
                {"sequence " + std::to_string(i) + ", column " + std::to_string(c) + ": block id " + std::to_string(bad)});
    EXPECT_EQ(r.size(), 1u) << describe(r);
    if (HasFailure()) FAIL() << where;
  }
}

}  // namespace
