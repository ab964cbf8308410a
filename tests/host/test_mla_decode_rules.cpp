// tests/host/test_mla_decode_rules.cpp: host validation of MlaDecodeParams and MlaDecodeTraits
// (problem/mla_decode_rules.hpp): one valid problem, a table of single mutations each rejected with its
// code, field and words of the message (and the error throw_if_error raises), a table of mutations that
// must stay valid, the split query, fp8 queries (over fp8 caches, with q_scale), the fp8 cache's scale, the output format (problem/fp8_io_rules.hpp's
// rules: fp8 outputs with a per-tensor or per-group scale), the empty batch, several violations
// reported together, the traits and the host-array checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "../common/rules_table.hpp"
#include "hipattn/problem/mla_decode_rules.hpp"

namespace {

using hipattn::DType;
using hipattn::ErrorCode;
using hipattn::MlaDecodeParams;
using hipattn::MlaDecodeTraits;
using hipattn::validate;
using hipattn::ValidationReport;

constexpr ErrorCode kInvalid = ErrorCode::invalid_argument;
constexpr ErrorCode kUnsupported = ErrorCode::unsupported;

// Addresses inside an aligned static buffer (validate never dereferences them): at(offset) is 16-byte
// aligned when offset is a multiple of 16.
alignas(256) unsigned char g_arena[8192];
template <class T = void>
T* at(size_t offset) {
  return reinterpret_cast<T*>(g_arena + offset);
}

constexpr int32_t kHeads = 16;

// A valid problem: 2 sequences of q_len 2 (4 query tokens), 16 heads, bf16 query and cache, pages of
// 64 slots (8 pages, 4 a sequence: max_seqlen_k 256), joined q packed [tokens, heads, 576], packed
// cache [pages, slots, 576], out packed [tokens, heads, 512], lse [tokens, heads].
MlaDecodeParams valid() {
  MlaDecodeParams p;
  p.batch = 2;
  p.q_len = 2;
  p.num_heads = kHeads;
  p.q_dtype = p.kv_dtype = DType::bf16;
  p.q = at<const void>(0);
  p.q_stride_head = 576;
  p.q_stride_token = kHeads * 576;
  p.kv_cache = at<const void>(1024);
  p.kv_stride_slot = 576;
  p.kv_stride_page = 64 * 576;
  p.num_pages = 8;
  p.page_size = 64;
  p.block_table = at<const int32_t>(2048);
  p.block_table_stride = 4;
  p.max_pages_per_seq = 4;
  p.seq_lens_k = at<const int32_t>(2560);
  p.max_seqlen_k = 256;
  p.scale = 1.f / std::sqrt(576.f);
  p.out = at<void>(3072);
  p.o_stride_head = 512;
  p.o_stride_token = kHeads * 512;
  p.lse = at<float>(3584);
  p.lse_stride_head = 1;
  p.lse_stride_token = kHeads;
  return p;
}

// The query split as engines keep it: q [tokens, heads, 512] and q_rope [tokens, heads, 64], packed.
MlaDecodeParams split() {
  MlaDecodeParams p = valid();
  p.q_stride_head = 512;
  p.q_stride_token = kHeads * 512;
  p.q_rope = at<const void>(512);
  p.q_rope_stride_head = 64;
  p.q_rope_stride_token = kHeads * 64;
  return p;
}

std::string describe(const ValidationReport& r) { return r.ok() ? std::string("ok") : r.summary(); }

TEST(MlaDecodeRules, ValidProblemPasses) {
  EXPECT_TRUE(validate(valid()).ok()) << describe(validate(valid()));
  EXPECT_TRUE(validate(split()).ok()) << describe(validate(split()));
}

// ---- one mutation, one issue ----

using Rejected = hipattn::testing::RejectedCase<MlaDecodeParams>;  // issues 0: the mutation breaks several rules

std::function<MlaDecodeParams()> V(std::function<void(MlaDecodeParams&)> f) {
  return [f] { MlaDecodeParams p = valid(); f(p); return p; };
}
std::function<MlaDecodeParams()> S(std::function<void(MlaDecodeParams&)> f) {
  return [f] { MlaDecodeParams p = split(); f(p); return p; };
}

// An fp8 output (e4m3fn unless said) with a per-tensor host scale: the packed out strides (512
// elements) are 512 bytes, still 16-byte multiples.
void fp8_tensor(MlaDecodeParams& p, DType d = DType::fp8_e4m3fn) {
  p.out_format.dtype = d;
  p.out_format.scale.host = 0.25f;
}
// An fp8 output with scales per group of `g` columns, [tokens, heads * 512 / g] row-major at 5120.
void fp8_group(MlaDecodeParams& p, int32_t g, DType d = DType::fp8_e4m3fn) {
  p.out_format.dtype = d;
  p.out_format.group_size = g;
  p.out_format.group_scale = at<float>(5120);
  p.out_format.group_scale_stride_group = 1;
  p.out_format.group_scale_stride_token = g > 0 ? kHeads * (512 / g) : 0;
}
std::function<MlaDecodeParams()> T8(std::function<void(MlaDecodeParams&)> f) {
  return V([f](MlaDecodeParams& p) { fp8_tensor(p); f(p); });
}
std::function<MlaDecodeParams()> G8(int32_t g, std::function<void(MlaDecodeParams&)> f) {
  return V([g, f](MlaDecodeParams& p) { fp8_group(p, g); f(p); });
}

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

const std::vector<Rejected>& rejected() {
  static const std::vector<Rejected> rows = {
      // ---- counts ----
      {"negative batch", V([](auto& p) { p.batch = -1; }), kInvalid, "batch", {"batch (-1)"}, 1},
      {"q_len 0", V([](auto& p) { p.q_len = 0; }), kUnsupported, "q_len", {"q_len (0)", "[1, 8]"}, 1},
      {"q_len 9", V([](auto& p) { p.q_len = 9; }), kUnsupported, "q_len", {"q_len (9)"}, 1},
      {"q_len negative", V([](auto& p) { p.q_len = -2; }), kUnsupported, "q_len", {"q_len (-2)"}, 1},
      {"no heads", V([](auto& p) { p.num_heads = 0; }), kInvalid, "num_heads", {"num_heads (0)"}, 1},
      {"negative heads", V([](auto& p) { p.num_heads = -16; }), kInvalid, "num_heads", {"num_heads (-16)"}, 1},
      // 2^30 heads x 2 rows = 2^31 rows; the packed strides of 16 heads overlap too.
      {"rows past 32 bits", V([](auto& p) { p.num_heads = 1 << 30; }), kInvalid, "num_heads",
       {"num_heads (1073741824)", "2147483648"}, 0},
      {"tokens past 32 bits", V([](auto& p) { p.batch = 1 << 30; }), kInvalid, "batch",
       {"batch (1073741824)", "2147483648"}, 1},
      // ---- dtypes ----
      {"fp8 queries over a 16-bit cache", V([](auto& p) { p.q_dtype = DType::fp8_e4m3fn; p.q_scale.host = 0.5f;
                                                          p.out_format.dtype = DType::bf16; }),
       kUnsupported, "kv_dtype", {"kv_dtype (bf16)", "with fp8 queries", "fp8_e4m3fn / fp8_e4m3fnuz"}, 1},
      {"fp8 queries without an output dtype", V([](auto& p) { p.q_dtype = p.kv_dtype = DType::fp8_e4m3fnuz;
                                                              p.kv_scale = at<const float>(1536); p.q_scale.host = 0.5f; }),
       kInvalid, "out_format.dtype", {"out_format.dtype (unset)", "fp8 queries need the output dtype set"}, 1},
      {"fp8 queries with a negative q_scale", V([](auto& p) { p.q_dtype = p.kv_dtype = DType::fp8_e4m3fn;
                                                              p.kv_scale = at<const float>(1536); p.out_format.dtype = DType::f16;
                                                              p.q_scale.host = -0.5f; }),
       kInvalid, "q_scale.host", {"q_scale.host (-0.5)", "finite and > 0"}, 1},
      {"fp8 queries with a misaligned q_scale", V([](auto& p) { p.q_dtype = p.kv_dtype = DType::fp8_e4m3fn;
                                                               p.kv_scale = at<const float>(1536); p.out_format.dtype = DType::f16;
                                                               p.q_scale.device = at<const float>(1538); }),
       kInvalid, "q_scale.device", {"not 4-byte aligned"}, 1},
      {"16-bit queries with a q_scale", V([](auto& p) { p.q_scale.host = 0.5f; }), kInvalid, "q_scale.host",
       {"q_scale.host (0.5)", "only fp8 queries are scaled"}, 1},
      {"fp32 queries", V([](auto& p) { p.q_dtype = DType::f32; }), kUnsupported, "q_dtype",
       {"fp32", "fp16, bf16, fp8_e4m3fn or fp8_e4m3fnuz"}, 1},
      {"unknown q dtype", V([](auto& p) { p.q_dtype = static_cast<DType>(9); }), kUnsupported, "q_dtype", {"DType(9)"}, 1},
      {"fp16 cache with bf16 q", V([](auto& p) { p.kv_dtype = DType::f16; }), kUnsupported, "kv_dtype",
       {"kv_dtype (fp16)", "q_dtype (bf16)"}, 1},
      {"fp32 cache", V([](auto& p) { p.kv_dtype = DType::f32; }), kUnsupported, "kv_dtype", {"kv_dtype (fp32)"}, 1},
      // ---- cache and sequence bounds ----
      {"page_size 0", V([](auto& p) { p.page_size = 0; }), kInvalid, "page_size", {"page_size (0)"}, 1},
      {"num_pages 0", V([](auto& p) { p.num_pages = 0; }), kInvalid, "num_pages", {"num_pages (0)", "batch > 0"}, 1},
      {"max_pages_per_seq 0", V([](auto& p) { p.max_pages_per_seq = 0; }), kInvalid, "max_pages_per_seq",
       {"max_pages_per_seq (0)"}, 1},
      {"block_table_stride short", V([](auto& p) { p.block_table_stride = 3; }), kInvalid, "block_table_stride",
       {"block_table_stride (3)", "max_pages_per_seq (4)"}, 1},
      {"block_table_stride negative", V([](auto& p) { p.block_table_stride = -4; }), kInvalid, "block_table_stride",
       {"block_table_stride (-4)"}, 1},
      {"block_table_stride 2^31", V([](auto& p) { p.block_table_stride = int64_t(1) << 31; }), kInvalid, "block_table_stride",
       {"2147483648", "2^31"}, 1},
      {"max_seqlen_k negative", V([](auto& p) { p.max_seqlen_k = -1; }), kInvalid, "max_seqlen_k", {"max_seqlen_k (-1)"}, 1},
      {"max_seqlen_k past the pages", V([](auto& p) { p.max_seqlen_k = 257; }), kInvalid, "max_pages_per_seq",
       {"max_seqlen_k (257)", "= 256"}, 1},
      // ---- scales ----
      {"scale 0", V([](auto& p) { p.scale = 0.f; }), kInvalid, "scale", {"scale (0)"}, 1},
      {"scale negative", V([](auto& p) { p.scale = -1.f; }), kInvalid, "scale", {"scale (-1)"}, 1},
      {"scale nan", V([](auto& p) { p.scale = kNan; }), kInvalid, "scale", {"nan"}, 1},
      {"scale inf", V([](auto& p) { p.scale = kInf; }), kInvalid, "scale", {"inf"}, 1},
      // ---- the output format (problem/fp8_io_rules.hpp) ----
      {"output dtype fp32", V([](auto& p) { p.out_format.dtype = DType::f32; }), kUnsupported, "out_format.dtype",
       {"out_format.dtype (fp32)"}, 1},
      {"16-bit output not the query's", V([](auto& p) { p.out_format.dtype = DType::f16; }), kUnsupported, "out_format.dtype",
       {"out_format.dtype (fp16)", "compute dtype (bf16"}, 1},
      {"16-bit output with a scale", V([](auto& p) { p.out_format.scale.host = 0.5f; }), kInvalid, "out_format.scale.host",
       {"out_format.scale.host (0.5)", "only an fp8 output is scaled"}, 1},
      {"16-bit output with a device scale", V([](auto& p) { p.out_format.scale.device = at<const float>(1536); }), kInvalid,
       "out_format.scale.device", {"must be null", "only an fp8 output is scaled"}, 1},
      {"16-bit output with groups", V([](auto& p) { fp8_group(p, 64); p.out_format.dtype = DType::bf16; }), kInvalid,
       "out_format.group_size", {"out_format.group_size (64)", "must be 0"}, 2},  // and its group_scale
      {"fp8 output scale negative", T8([](auto& p) { p.out_format.scale.host = -0.5f; }), kInvalid, "out_format.scale.host",
       {"out_format.scale.host (-0.5)", "finite and > 0"}, 1},
      {"fp8 output scale nan", T8([](auto& p) { p.out_format.scale.host = kNan; }), kInvalid, "out_format.scale.host",
       {"nan", "finite and > 0"}, 1},
      {"fp8 output scale inf", T8([](auto& p) { p.out_format.scale.host = kInf; }), kInvalid, "out_format.scale.host",
       {"inf"}, 1},
      {"fnuz output scale -1", V([](auto& p) { fp8_tensor(p, DType::fp8_e4m3fnuz); p.out_format.scale.host = -1.f; }), kInvalid,
       "out_format.scale.host", {"out_format.scale.host (-1)"}, 1},
      {"misaligned device output scale", T8([](auto& p) { p.out_format.scale.device = at<const float>(1538); }), kInvalid,
       "out_format.scale.device", {"not 4-byte aligned"}, 1},
      {"per-tensor output with group scales", T8([](auto& p) { p.out_format.group_scale = at<float>(5120); }), kInvalid,
       "out_format.group_scale", {"must be null", "group_size 0"}, 1},
      {"group size 48", G8(48, [](auto&) {}), kUnsupported, "out_format.group_size", {"out_format.group_size (48)"}, 1},
      {"group size 8", G8(8, [](auto&) {}), kUnsupported, "out_format.group_size", {"out_format.group_size (8)"}, 1},
      {"group size 256", G8(256, [](auto&) {}), kUnsupported, "out_format.group_size", {"out_format.group_size (256)"}, 1},
      {"group size negative", G8(-64, [](auto&) {}), kUnsupported, "out_format.group_size", {"out_format.group_size (-64)"}, 1},
      {"missing group scales", G8(64, [](auto& p) { p.out_format.group_scale = nullptr; }), kInvalid, "out_format.group_scale",
       {"out_format.group_scale (nullptr)", "required"}, 1},
      {"misaligned group scales", G8(64, [](auto& p) { p.out_format.group_scale = at<float>(5122); }), kInvalid,
       "out_format.group_scale", {"not 4-byte aligned"}, 1},
      {"group scales overlap", G8(64, [](auto& p) { p.out_format.group_scale_stride_token = 64; }), kInvalid,
       "out_format.group_scale_stride_token", {"out_format.group_scale_stride_token (64)", "overlap"}, 1},
      {"group scale stride negative", G8(32, [](auto& p) { p.out_format.group_scale_stride_group = -1; }), kInvalid,
       "out_format.group_scale_stride_group", {"(-1)"}, 1},
      {"group output with a per-tensor scale", G8(64, [](auto& p) { p.out_format.scale.host = 0.5f; }), kInvalid,
       "out_format.scale.host", {"must be 0 or 1 (unset)", "computes its scales"}, 1},
      {"group fp8 max past the format", V([](auto& p) { fp8_group(p, 32, DType::fp8_e4m3fnuz); p.out_format.group_fp8_max = 300.f; }),
       kInvalid, "out_format.group_fp8_max", {"out_format.group_fp8_max (300)", "(0, 240]"}, 1},
      {"group fp8 max negative", G8(32, [](auto& p) { p.out_format.group_fp8_max = -1.f; }), kInvalid,
       "out_format.group_fp8_max", {"(-1)"}, 1},
      // ---- pointers ----
      {"null q", V([](auto& p) { p.q = nullptr; }), kInvalid, "q", {"q (nullptr)", "batch > 0"}, 1},
      {"null kv_cache", V([](auto& p) { p.kv_cache = nullptr; }), kInvalid, "kv_cache", {"kv_cache (nullptr)"}, 1},
      {"null block_table", V([](auto& p) { p.block_table = nullptr; }), kInvalid, "block_table", {"block_table (nullptr)"}, 1},
      {"null seq_lens_k", V([](auto& p) { p.seq_lens_k = nullptr; }), kInvalid, "seq_lens_k", {"seq_lens_k (nullptr)"}, 1},
      {"null out", V([](auto& p) { p.out = nullptr; }), kInvalid, "out", {"out (nullptr)"}, 1},
      {"misaligned q", V([](auto& p) { p.q = at<const void>(8); }), kInvalid, "q", {"not 16-byte aligned"}, 1},
      {"misaligned q_rope", S([](auto& p) { p.q_rope = at<const void>(520); }), kInvalid, "q_rope", {"not 16-byte aligned"}, 1},
      {"misaligned kv_cache", V([](auto& p) { p.kv_cache = at<const void>(1028); }), kInvalid, "kv_cache",
       {"not 16-byte aligned"}, 1},
      {"misaligned out", V([](auto& p) { p.out = at<void>(3074); }), kInvalid, "out", {"not 16-byte aligned"}, 1},
      {"misaligned block_table", V([](auto& p) { p.block_table = at<const int32_t>(2050); }), kInvalid, "block_table",
       {"not 4-byte aligned"}, 1},
      {"misaligned seq_lens_k", V([](auto& p) { p.seq_lens_k = at<const int32_t>(2561); }), kInvalid, "seq_lens_k",
       {"not 4-byte aligned"}, 1},
      {"misaligned lse", V([](auto& p) { p.lse = at<float>(3586); }), kInvalid, "lse", {"not 4-byte aligned"}, 1},
      {"misaligned kv_scale", V([](auto& p) { p.kv_dtype = DType::fp8_e4m3fn; p.kv_scale = at<const float>(1537); }), kInvalid,
       "kv_scale", {"not 4-byte aligned"}, 1},
      // ---- strides: range, overlap, 16-byte multiples ----
      {"q heads overlap", V([](auto& p) { p.q_stride_head = 100; }), kInvalid, "q_stride_head",
       {"q_stride_head (100)", "overlap", ">= 576"}, 1},
      {"joined q with a split head stride", V([](auto& p) { p.q_stride_head = 512; p.q_stride_token = kHeads * 512; }), kInvalid,
       "q_stride_head", {"q_stride_head (512)", "overlap"}, 1},
      {"q tokens overlap", V([](auto& p) { p.q_stride_token = 576; }), kInvalid, "q_stride_token", {"q_stride_token (576)", "overlap"}, 1},
      {"q stride negative", V([](auto& p) { p.q_stride_token = -9216; }), kInvalid, "q_stride_token", {"(-9216)", ">= 0"}, 1},
      {"q stride misaligned", V([](auto& p) { p.q_stride_head = 580; p.q_stride_token = kHeads * 580; }), kInvalid, "q_stride_head",
       {"q_stride_head (580 elements = 1160 bytes)", "16 bytes"}, 1},
      {"q_rope heads overlap", S([](auto& p) { p.q_rope_stride_head = 32; }), kInvalid, "q_rope_stride_head",
       {"q_rope_stride_head (32)", "overlap"}, 1},
      {"q_rope stride misaligned", S([](auto& p) { p.q_rope_stride_head = 68; p.q_rope_stride_token = kHeads * 68; }), kInvalid,
       "q_rope_stride_head", {"(68 elements = 136 bytes)"}, 1},
      {"q_rope stride 2^31", S([](auto& p) { p.q_rope_stride_token = int64_t(1) << 31; }), kInvalid, "q_rope_stride_token",
       {"2^31"}, 1},
      {"split q overlap", S([](auto& p) { p.q_stride_head = 500; }), kInvalid, "q_stride_head", {"q_stride_head (500)", ">= 512"}, 1},
      {"kv slots overlap", V([](auto& p) { p.kv_stride_slot = 500; }), kInvalid, "kv_stride_slot", {"kv_stride_slot (500)", "overlap"}, 1},
      {"kv pages overlap", V([](auto& p) { p.kv_stride_page = 63 * 576; }), kInvalid, "kv_stride_page", {"overlap"}, 1},
      {"kv stride 2^31", V([](auto& p) { p.kv_stride_page = int64_t(1) << 31; }), kInvalid, "kv_stride_page", {"2^31"}, 1},
      {"kv stride misaligned", V([](auto& p) { p.kv_stride_page = 64 * 576 + 4; }), kInvalid, "kv_stride_page", {"(36868 elements = 73736 bytes)", "16 bytes"}, 1},
      {"fp8 kv stride misaligned", V([](auto& p) { p.kv_dtype = DType::fp8_e4m3fn; p.kv_scale = at<const float>(1536);
                                                   p.kv_stride_slot = 584; p.kv_stride_page = 64 * 584; }),
       kInvalid, "kv_stride_slot", {"(584 elements = 584 bytes)"}, 1},
      {"out heads overlap", V([](auto& p) { p.o_stride_head = 511; }), kInvalid, "o_stride_head", {"o_stride_head (511)", "overlap"}, 1},
      {"out stride negative", V([](auto& p) { p.o_stride_head = -512; }), kInvalid, "o_stride_head", {"(-512)"}, 1},
      {"out stride misaligned", V([](auto& p) { p.o_stride_token = kHeads * 512 + 4; }), kInvalid, "o_stride_token",
       {"o_stride_token (8196 elements = 16392 bytes)"}, 1},
      // an fp8 output's strides count its 1-byte elements: 520 is 1040 bytes in bf16, 520 in fp8
      {"fp8 out stride misaligned", T8([](auto& p) { p.o_stride_head = 520; p.o_stride_token = kHeads * 520; }), kInvalid,
       "o_stride_head", {"o_stride_head (520 elements = 520 bytes)", "16 bytes"}, 1},
      {"lse tokens overlap", V([](auto& p) { p.lse_stride_token = 8; }), kInvalid, "lse_stride_token", {"lse_stride_token (8)", "overlap"}, 1},
      {"lse heads overlap", V([](auto& p) { p.lse_stride_head = 0; }), kInvalid, "lse_stride_head", {"lse_stride_head (0)", "overlap"}, 1},
      {"lse stride negative", V([](auto& p) { p.lse_stride_token = -16; }), kInvalid, "lse_stride_token", {"(-16)"}, 1},
  };
  return rows;
}

TEST(MlaDecodeRules, EachRuleFiresNamingItsFieldAndValue) {
  hipattn::testing::expect_rejections(rejected());
}

TEST(MlaDecodeRules, AcceptedCorners) {
  const std::vector<std::pair<const char*, std::function<MlaDecodeParams()>>> rows = {
      {"fp16 query and cache", V([](auto& p) { p.q_dtype = p.kv_dtype = DType::f16; })},
      {"q_len 1", V([](auto& p) { p.q_len = 1; })},
      {"q_len 8", V([](auto& p) { p.q_len = 8; })},
      {"128 heads", V([](auto& p) { p.num_heads = 128; p.q_stride_token = 128 * 576; p.o_stride_token = 128 * 512;
                                    p.lse_stride_token = 128; })},
      {"one head: its stride is not read", V([](auto& p) { p.num_heads = 1; p.q_stride_head = p.o_stride_head = 0; p.lse_stride_head = 3; })},
      {"padded strides", V([](auto& p) { p.q_stride_head = 584; p.q_stride_token = kHeads * 584 + 8;
                                         p.kv_stride_slot = 640; p.kv_stride_page = 64 * 640 + 64; p.o_stride_token = kHeads * 512 + 64; })},
      {"heads outermost", V([](auto& p) { p.q_stride_token = 576; p.q_stride_head = 4 * 576; p.o_stride_token = 512; p.o_stride_head = 4 * 512; })},
      {"lse [heads, tokens]", V([](auto& p) { p.lse_stride_head = 4; p.lse_stride_token = 1; })},
      {"lse padded", V([](auto& p) { p.lse_stride_head = 5; p.lse_stride_token = 1; })},
      {"no lse: its strides are not read", V([](auto& p) { p.lse = nullptr; p.lse_stride_head = -1; p.lse_stride_token = 0; })},
      {"joined q: q_rope strides are not read", V([](auto& p) { p.q_rope_stride_head = -5; p.q_rope_stride_token = 0; })},
      {"page_size 1", V([](auto& p) { p.page_size = 1; p.kv_stride_page = 576; p.max_pages_per_seq = p.block_table_stride = 256; })},
      {"odd page_size", V([](auto& p) { p.page_size = 33; p.kv_stride_page = 33 * 576; p.max_seqlen_k = 4 * 33; })},
      {"wide block table", V([](auto& p) { p.block_table_stride = 1000; })},
      // 2^20 pages of 2^12 slots: 2^32 slots, past 32 bits (a 32-bit product would wrap to 0).
      {"pages product in 64 bits", V([](auto& p) { p.max_pages_per_seq = 1 << 20; p.block_table_stride = 1 << 20; p.page_size = 1 << 12;
                                                  p.kv_stride_page = int64_t(576) << 12; p.num_pages = 1; p.max_seqlen_k = INT32_MAX; })},
      {"no context at all", V([](auto& p) { p.max_seqlen_k = 0; })},
      {"context shorter than q_len", V([](auto& p) { p.q_len = 8; p.max_seqlen_k = 3; })},
      {"bf16 cache ignores kv_scale fields", V([](auto& p) { p.kv_scale = nullptr; p.kv_scale_value = kNan; })},
      {"bf16 cache ignores a set kv_scale", V([](auto& p) { p.kv_scale = at<const float>(1536); p.kv_scale_value = 0.f; })},
      // q_rope views the last 64 elements of each joined row: 512 bf16 = 1024 bytes past q.
      {"split q over a joined buffer", V([](auto& p) { p.q = at<const void>(4096); p.q_rope = at<const void>(4096 + 1024);
                                                       p.q_rope_stride_head = 576; p.q_rope_stride_token = kHeads * 576; })},
      {"q_rope strides in its own layout", S([](auto& p) { p.q_rope_stride_head = 128; p.q_rope_stride_token = kHeads * 128; })},
      // ---- output formats ----
      {"16-bit output of the query's dtype, explicit", V([](auto& p) { p.out_format.dtype = DType::bf16; })},
      {"fp16 output of fp16 queries", V([](auto& p) { p.q_dtype = p.kv_dtype = DType::f16; p.out_format.dtype = DType::f16; })},
      {"16-bit output over an fp8 cache", V([](auto& p) { p.kv_dtype = DType::fp8_e4m3fn; p.kv_scale_value = 0.5f;
                                                          p.out_format.dtype = DType::bf16; })},
      // fp8 queries over an fp8 cache: their codes' strides (576 codes: a 16-byte multiple), q_scale on
      // the device or the host, any 16-bit output (the compute dtype follows it) or an fp8 one
      {"fp8 queries, f16 output", V([](auto& p) { p.q_dtype = p.kv_dtype = DType::fp8_e4m3fn; p.kv_scale_value = 0.5f;
                                                  p.q_scale.host = 0.25f; p.out_format.dtype = DType::f16; })},
      {"fp8 fnuz queries over an e4m3fn cache, bf16 output, device q_scale",
       V([](auto& p) { p.q_dtype = DType::fp8_e4m3fnuz; p.kv_dtype = DType::fp8_e4m3fn; p.kv_scale_value = 0.5f;
                       p.q_scale.device = at<const float>(1536); p.q_scale.host = kNan; p.out_format.dtype = DType::bf16; })},
      {"fp8 queries, fp8 output", T8([](auto& p) { p.q_dtype = p.kv_dtype = DType::fp8_e4m3fn; p.kv_scale_value = 0.5f;
                                                   p.q_scale.host = 0.25f; })},
      {"bf16 out stride of 520 elements (1040 bytes)", V([](auto& p) { p.o_stride_head = 520; p.o_stride_token = kHeads * 520; })},
      {"fp8 output, host scale", T8([](auto&) {})},
      {"fp8 output, host scale 0 (unset: the scale 1)", T8([](auto& p) { p.out_format.scale.host = 0.f; })},
      {"fp8 queries, q_scale 0 (unset: the scale 1)", V([](auto& p) { p.q_dtype = p.kv_dtype = DType::fp8_e4m3fn;
                                                                    p.q_scale.host = 0.f; p.out_format.dtype = DType::f16; })},
      {"fp8 output, device scale (its host value is not read)",
       T8([](auto& p) { p.out_format.scale.device = at<const float>(1536); p.out_format.scale.host = kNan; })},
      {"fnuz output", V([](auto& p) { fp8_tensor(p, DType::fp8_e4m3fnuz); })},
      {"fp8 output over an fp8 cache", T8([](auto& p) { p.kv_dtype = DType::fp8_e4m3fnuz; p.kv_scale = at<const float>(1536); })},
      {"fp8 output, stride 528 (16-byte multiple)", T8([](auto& p) { p.o_stride_head = 528; p.o_stride_token = kHeads * 528; })},
      {"group 16", G8(16, [](auto&) {})},
      {"group 32", G8(32, [](auto&) {})},
      {"group 64", G8(64, [](auto&) {})},
      {"group 128 UE8M0, column-major scales", G8(128, [](auto& p) { p.out_format.group_ue8m0 = true;
                                                                    p.out_format.group_scale_stride_token = 1;
                                                                    p.out_format.group_scale_stride_group = 4; })},
      {"fnuz group 32 with fp8 max 224", V([](auto& p) { fp8_group(p, 32, DType::fp8_e4m3fnuz); p.out_format.group_fp8_max = 224.f; })},
      {"group fp8 max the format's own", G8(64, [](auto& p) { p.out_format.group_fp8_max = 448.f; })},
      {"padded group scales", G8(64, [](auto& p) { p.out_format.group_scale_stride_token = kHeads * 8 + 3; })},
  };
  for (const auto& [name, make] : rows) {
    const MlaDecodeParams p = make();
    EXPECT_TRUE(validate(p).ok()) << name << ": " << describe(validate(p));
  }
}

TEST(MlaDecodeRules, SplitQuery) {
  // Split: q needs only 512 elements a head; joined needs 576.
  EXPECT_TRUE(validate(split()).ok()) << describe(validate(split()));
  MlaDecodeParams joined = split();
  joined.q_rope = nullptr;
  const ValidationReport r = validate(joined);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.field(), "q_stride_head");
  EXPECT_NE(r.message().find("kMlaQkDim"), std::string::npos) << r.message();
  // 16-byte rules on q_rope: its pointer and its strides (fp16 too).
  MlaDecodeParams p = split();
  p.q_dtype = p.kv_dtype = DType::f16;
  p.q_rope_stride_head = 72;  // 144 bytes: a multiple of 16
  p.q_rope_stride_token = kHeads * 72;
  EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
  p.q_rope_stride_head = 76;  // 152 bytes
  p.q_rope_stride_token = kHeads * 76;
  EXPECT_EQ(validate(p).field(), "q_rope_stride_head");
  EXPECT_EQ(validate(p).size(), 1u) << describe(validate(p));
  p = split();
  p.q_rope = at<const void>(512 + 4);
  EXPECT_EQ(validate(p).field(), "q_rope");
  EXPECT_NE(validate(p).message().find("not 16-byte aligned"), std::string::npos);
}

TEST(MlaDecodeRules, Fp8CacheScale) {
  for (DType kv : {DType::fp8_e4m3fn, DType::fp8_e4m3fnuz}) {
    const std::string what = std::string(hipattn::dtype_name(kv));
    MlaDecodeParams p = valid();
    p.kv_dtype = kv;
    // A device scale: the host value is not read.
    p.kv_scale = at<const float>(1536);
    p.kv_scale_value = 0.f;
    EXPECT_TRUE(validate(p).ok()) << what << ": " << describe(validate(p));
    // No device scale: the host value.
    p.kv_scale = nullptr;
    p.kv_scale_value = 0.5f;
    EXPECT_TRUE(validate(p).ok()) << what << ": " << describe(validate(p));
    // fp8 rows of 576 bytes: 16-byte multiples in bytes (584 would not be, 592 is).
    p.kv_stride_slot = 592;
    p.kv_stride_page = 64 * 592;
    EXPECT_TRUE(validate(p).ok()) << what << ": " << describe(validate(p));
    // 0: unset, the scale 1 (kv_scale_value_or_one)
    p.kv_scale_value = 0.f;
    EXPECT_TRUE(validate(p).ok()) << what << ": " << describe(validate(p));
    for (const auto& [bad, words] : std::vector<std::pair<float, const char*>>{
             {-1.f, "kv_scale_value (-1)"}, {kNan, "nan"}, {kInf, "inf"}}) {
      p.kv_scale_value = bad;
      const ValidationReport r = validate(p);
      ASSERT_FALSE(r.ok()) << what << " " << words;
      EXPECT_EQ(r.size(), 1u) << r.summary();
      EXPECT_EQ(r.code(), kInvalid);
      EXPECT_EQ(r.field(), "kv_scale_value");
      EXPECT_NE(r.message().find(words), std::string::npos) << r.message();
      EXPECT_NE(r.message().find("kv_scale is null"), std::string::npos) << r.message();
    }
  }
}

TEST(MlaDecodeRules, EmptyBatch) {
  // A valid no-op: every device pointer may be null, the sequence bounds 0.
  MlaDecodeParams p = valid();
  p.batch = 0;
  p.q = p.kv_cache = nullptr;
  p.out = nullptr;
  p.lse = nullptr;
  p.block_table = p.seq_lens_k = nullptr;
  EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
  p.num_pages = p.max_pages_per_seq = 0;
  p.block_table_stride = 0;
  p.max_seqlen_k = 0;
  EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
  {  // a per-group fp8 output without its scale tensor: no token, nothing to write
    MlaDecodeParams g = p;
    fp8_group(g, 64);
    g.out_format.group_scale = nullptr;
    EXPECT_TRUE(validate(g).ok()) << describe(validate(g));
    g.out_format.scale.host = 0.5f;  // ... but its format is still checked
    EXPECT_EQ(validate(g).field(), "out_format.scale.host");
  }
  // ... but counts never go negative,
  MlaDecodeParams n = p;
  n.num_pages = -1;
  EXPECT_EQ(validate(n).field(), "num_pages");
  // and the host-only scalars are still checked, each one reported.
  p.q_len = 0;
  p.num_heads = 0;
  p.scale = kNan;
  p.q_dtype = DType::f32;
  const ValidationReport r = validate(p);
  ASSERT_EQ(r.size(), 4u) << r.summary();
  EXPECT_EQ(r.issues[0].field, "q_len");
  EXPECT_EQ(r.issues[1].field, "num_heads");
  EXPECT_EQ(r.issues[2].field, "q_dtype");
  EXPECT_EQ(r.issues[3].field, "scale");
}

TEST(MlaDecodeRules, IndependentViolationsAreAllReported) {
  MlaDecodeParams p = valid();
  p.q_len = 0;
  p.kv_dtype = DType::f16;
  p.scale = -1.f;
  p.out = nullptr;
  p.kv_stride_slot = 100;
  const ValidationReport r = validate(p);
  ASSERT_EQ(r.size(), 5u) << r.summary();
  EXPECT_EQ(r.issues[0].field, "q_len");
  EXPECT_EQ(r.issues[1].field, "kv_dtype");
  EXPECT_EQ(r.issues[2].field, "scale");
  EXPECT_EQ(r.issues[3].field, "out");
  EXPECT_EQ(r.issues[4].field, "kv_stride_slot");
  EXPECT_TRUE(r.has("scale"));
  EXPECT_FALSE(r.has("q"));
}

TEST(MlaDecodeRules, ThrowIfErrorRaisesTheFirstIssue) {
  EXPECT_NO_THROW(hipattn::throw_if_error(validate(valid())));
  MlaDecodeParams p = valid();
  p.q_dtype = DType::f32;
  p.scale = 0.f;
  p.seq_lens_k = nullptr;
  try {
    hipattn::throw_if_error(validate(p));
    FAIL() << "no throw";
  } catch (const hipattn::Error& e) {
    EXPECT_EQ(e.code(), kUnsupported);
    EXPECT_EQ(e.field(), "q_dtype");
    const std::string what = e.what();
    EXPECT_NE(what.find("q_dtype (fp32) must be fp16, bf16, fp8_e4m3fn or fp8_e4m3fnuz"), std::string::npos) << what;
    EXPECT_NE(what.find("[+2 more: scale: "), std::string::npos) << what;
    EXPECT_NE(what.find("seq_lens_k: seq_lens_k (nullptr)"), std::string::npos) << what;
  }
  p = valid();
  p.page_size = 0;
  EXPECT_THROW(hipattn::throw_if_error(validate(p)), hipattn::Error);
}

// ---- traits ----

TEST(MlaDecodeRules, Traits) {
  const MlaDecodeTraits good{.max_batch = 256, .max_q_len = 2, .num_heads = 128, .max_seqlen_k = 65536};
  EXPECT_TRUE(validate(good).ok()) << describe(validate(good));
  EXPECT_TRUE(validate(MlaDecodeTraits{.max_batch = 0, .max_q_len = 8, .num_heads = 1, .max_seqlen_k = 0}).ok());
  struct Row {
    MlaDecodeTraits t;
    ErrorCode code;
    const char* field;
    const char* words;
  };
  const std::vector<Row> rows = {
      {{.max_batch = -1, .max_q_len = 1, .num_heads = 16, .max_seqlen_k = 1}, kInvalid, "max_batch", "max_batch (-1)"},
      {{.max_batch = 1, .max_q_len = 0, .num_heads = 16, .max_seqlen_k = 1}, kUnsupported, "max_q_len", "max_q_len (0)"},
      {{.max_batch = 1, .max_q_len = 9, .num_heads = 16, .max_seqlen_k = 1}, kUnsupported, "max_q_len", "max_q_len (9)"},
      {{.max_batch = 1, .max_q_len = 1, .num_heads = 0, .max_seqlen_k = 1}, kInvalid, "num_heads", "num_heads (0)"},
      {{.max_batch = 1, .max_q_len = 1, .num_heads = 16, .max_seqlen_k = -3}, kInvalid, "max_seqlen_k", "max_seqlen_k (-3)"},
  };
  for (const Row& row : rows) {
    const ValidationReport r = validate(row.t);
    ASSERT_EQ(r.size(), 1u) << row.field << ": " << describe(r);
    EXPECT_EQ(r.code(), row.code) << row.field;
    EXPECT_EQ(r.field(), row.field);
    EXPECT_NE(r.message().find(row.words), std::string::npos) << r.message();
  }
  const ValidationReport all = validate(MlaDecodeTraits{.max_batch = -1, .max_q_len = 10, .num_heads = -1, .max_seqlen_k = -1});
  ASSERT_EQ(all.size(), 4u) << all.summary();
  EXPECT_EQ(all.issues[0].field, "max_batch");
  EXPECT_EQ(all.issues[1].field, "max_q_len");
  EXPECT_EQ(all.issues[2].field, "num_heads");
  EXPECT_EQ(all.issues[3].field, "max_seqlen_k");
}

// ---- host copies of seq_lens_k and the block table ----

TEST(MlaDecodeRules, HostArrays) {
  const MlaDecodeParams p = valid();
  // Sequence 0 uses 3 pages (130 keys), sequence 1 one page (3 keys); the unused entries are -1.
  const std::vector<int32_t> lens{130, 3};
  const std::vector<int32_t> table{0, 5, 7, -1, 2, -1, -1, -1};
  EXPECT_TRUE(validate(p, lens, table).ok()) << describe(validate(p, lens, table));
  EXPECT_TRUE(validate(p, lens).ok()) << "an empty block table is not checked";
  EXPECT_TRUE(validate(p, std::vector<int32_t>{0, 256}, std::vector<int32_t>{-9, 9, 9, 9, 0, 1, 2, 3}).ok())
      << "a sequence of no key uses no page; one of 256 keys uses 4";

  struct Row {
    const char* name;
    std::vector<int32_t> lens, table;
    const char* field;
    std::vector<std::string> words;
  };
  const std::vector<Row> rows = {
      {"lens size", {130}, table, "seq_lens_k", {"1 entries", "batch (2)"}},
      {"len past max_seqlen_k", {257, 3}, table, "seq_lens_k[0]", {"seq_lens_k[0] (257)", "max_seqlen_k (256)"}},
      {"negative len", {130, -1}, table, "seq_lens_k[1]", {"seq_lens_k[1] (-1)"}},
      {"two bad lens", {-2, 300}, table, "seq_lens_k[0]", {"(-2)", "(and 1 more sequences)"}},
      {"page past num_pages", lens, {0, 5, 8, -1, 2, -1, -1, -1}, "block_table[0][2]", {"block_table[0][2] (8)", "num_pages (8)"}},
      {"negative page", lens, {0, 5, 7, -1, -1, -1, -1, -1}, "block_table[1][0]", {"block_table[1][0] (-1)"}},
      {"two bad pages", lens, {0, 9, 7, -1, 8, -1, -1, -1}, "block_table[0][1]", {"(9)", "(and 1 more entries)"}},
      {"short table", lens, {0, 5, 7, -1, 2, -1, -1}, "block_table", {"7 entries", "= 8 needed"}},
  };
  for (const Row& row : rows) {
    const ValidationReport r = validate(p, row.lens, row.table);
    ASSERT_EQ(r.size(), 1u) << row.name << ": " << describe(r);
    EXPECT_EQ(r.code(), kInvalid) << row.name;
    EXPECT_EQ(r.field(), row.field) << row.name << ": " << r.summary();
    for (const std::string& w : row.words)
      EXPECT_NE(r.message().find(w), std::string::npos) << row.name << ": \"" << r.message() << "\" lacks \"" << w << "\"";
  }
  // A padded table row: entries at b * block_table_stride.
  MlaDecodeParams wide = p;
  wide.block_table_stride = 6;
  EXPECT_TRUE(validate(wide, lens, std::vector<int32_t>{0, 5, 7, -1, 99, 99, 2, -1, -1, -1}).ok());
  EXPECT_EQ(validate(wide, lens, std::vector<int32_t>{0, 5, 7, -1, 99, 99, 99, -1, -1, -1}).field(), "block_table[1][0]");
  // An empty batch has no arrays; an invalid problem is not checked further (one issue).
  MlaDecodeParams empty = p;
  empty.batch = 0;
  EXPECT_TRUE(validate(empty, {}, {}).ok());
  MlaDecodeParams bad = p;
  bad.scale = 0.f;
  EXPECT_EQ(validate(bad, std::vector<int32_t>{999}, table).size(), 1u);
}

}  // namespace
