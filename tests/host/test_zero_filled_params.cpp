// tests/host/test_zero_filled_params.cpp: what a zero-filled params struct means. A C / FFI caller
// memsets a struct to zero, then sets the fields it knows; the top of each problem/*_params.hpp says
// what that zero means. Pinned here:
//   * every field's default is its zero, except the fields each header lists (causal, window_left,
//     q_len / max_q_len, MLA's q_dtype / kv_dtype), whose zero is a different problem or refused;
//   * a zero-filled struct with only the fields of a small valid problem set (and the listed ones)
//     validates, in every family, with 16-bit and fp8 queries, caches and outputs;
//   * a zero host scale is the identity 1 (TensorScale::host_or_one, the *_or_one accessors, the
//     kernel arguments the dispatch fills, the float64 reference), explicitly set values unchanged;
//     a bad value is still refused naming the field and the value;
//   * Fp8Math's zero is its default, fp8_qk.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "hipattn/dispatch/mla_decode.hpp"
#include "hipattn/dispatch/output_args.hpp"
#include "hipattn/dispatch/paged_decode_launch.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/problem/dense_prefill_rules.hpp"
#include "hipattn/problem/merge_rules.hpp"
#include "reference_problem.hpp"

namespace {

using hipattn::DensePrefillParams;
using hipattn::DType;
using hipattn::ErrorCode;
using hipattn::Fp8Math;
using hipattn::KvScaleMode;
using hipattn::MergeAttentionStatesParams;
using hipattn::MlaDecodeParams;
using hipattn::MlaDecodeTraits;
using hipattn::OutputFormat;
using hipattn::PagedDecodeParams;
using hipattn::PagedDecodeTraits;
using hipattn::PlanDevice;
using hipattn::Target;
using hipattn::TensorScale;
using hipattn::UnifiedAttentionParams;
using hipattn::validate;
using hipattn::ValidationReport;

// What the C caller does: every byte of the struct 0.
template <class T>
T zero_filled() {
  static_assert(std::is_trivially_copyable_v<T>, "a C caller fills the struct with memset");
  T t;
  std::memset(static_cast<void*>(&t), 0, sizeof t);
  return t;
}

// A fake device address (never dereferenced by validate or the planners).
template <class T>
T* fake(uintptr_t a) {
  return reinterpret_cast<T*>(a);
}

std::string describe(const ValidationReport& r) { return r.ok() ? std::string("ok") : r.summary(); }

// The default of field `f` of a default-constructed struct `d` is its zero (value-initialized type).
#define EXPECT_ZERO_DEFAULT(d, f) EXPECT_TRUE(d.f == decltype(d.f){}) << #f " defaults to a non-zero value"

// ---------------------------------------------------------------------------------------------------
// Defaults against zero: the headers' lists

void expect_zero_default(const TensorScale& s, const char* what) {
  EXPECT_EQ(s.device, nullptr) << what;
  EXPECT_EQ(s.host, 0.f) << what << ": a zero-filled scale is the default (unset)";
}
void expect_zero_default(const OutputFormat& f, const char* what) {
  EXPECT_FALSE(f.dtype.has_value()) << what;
  expect_zero_default(f.scale, what);
  EXPECT_ZERO_DEFAULT(f, group_size);
  EXPECT_ZERO_DEFAULT(f, group_scale);
  EXPECT_ZERO_DEFAULT(f, group_scale_stride_token);
  EXPECT_ZERO_DEFAULT(f, group_scale_stride_group);
  EXPECT_ZERO_DEFAULT(f, group_ue8m0);
  EXPECT_ZERO_DEFAULT(f, group_fp8_max);
}

TEST(ZeroFilled, Fp8IoDefaultsAreZero) {
  expect_zero_default(TensorScale{}, "TensorScale");
  expect_zero_default(OutputFormat{}, "OutputFormat");
  // the zero-filled OutputFormat's optional dtype is disengaged ("unset": the query dtype)
  const OutputFormat z = zero_filled<OutputFormat>();
  EXPECT_FALSE(z.dtype.has_value());
  EXPECT_EQ(hipattn::output_dtype(DType::bf16, z), DType::bf16);
  // Fp8Math: enumerator 0 is the default
  EXPECT_EQ(static_cast<int>(Fp8Math::fp8_qk), 0);
  EXPECT_EQ(Fp8Math{}, Fp8Math::fp8_qk);
  EXPECT_STREQ(hipattn::fp8_math_name(Fp8Math{}), "fp8_qk");
  EXPECT_EQ(UnifiedAttentionParams{}.fp8_math, Fp8Math::fp8_qk);
  EXPECT_EQ(zero_filled<UnifiedAttentionParams>().fp8_math, Fp8Math::fp8_qk);
  EXPECT_EQ(zero_filled<PagedDecodeParams>().fp8_math, Fp8Math::fp8_qk);
  // the other two keep their names, and the instance kind of the zero (default) choice is the fp8
  // matrix path where the target has one
  EXPECT_STREQ(hipattn::fp8_math_name(Fp8Math::fp8_pv), "fp8_pv");
  EXPECT_STREQ(hipattn::fp8_math_name(Fp8Math::convert), "convert");
  EXPECT_EQ(hipattn::operand_kv_kind(DType::fp8_e4m3fn, DType::fp8_e4m3fn, Fp8Math{}, Target::sm90),
            hipattn::KvKind::e4m3fn_q8);
}

TEST(ZeroFilled, UnifiedDefaultsAreZeroButCausalAndWindow) {
  const UnifiedAttentionParams d;
  // the listed fields: their zero is another problem
  EXPECT_TRUE(d.causal);
  EXPECT_EQ(d.window_left, -1);
  // every other field
  EXPECT_ZERO_DEFAULT(d, q);
  EXPECT_ZERO_DEFAULT(d, q_dtype);
  EXPECT_ZERO_DEFAULT(d, q_stride_token);
  EXPECT_ZERO_DEFAULT(d, q_stride_head);
  expect_zero_default(d.q_scale, "q_scale");
  EXPECT_ZERO_DEFAULT(d, fp8_math);
  EXPECT_ZERO_DEFAULT(d, k_cache);
  EXPECT_ZERO_DEFAULT(d, v_cache);
  EXPECT_ZERO_DEFAULT(d, kv_dtype);
  EXPECT_ZERO_DEFAULT(d, k_stride_block);
  EXPECT_ZERO_DEFAULT(d, k_stride_slot);
  EXPECT_ZERO_DEFAULT(d, k_stride_head);
  EXPECT_ZERO_DEFAULT(d, v_stride_block);
  EXPECT_ZERO_DEFAULT(d, v_stride_slot);
  EXPECT_ZERO_DEFAULT(d, v_stride_head);
  EXPECT_ZERO_DEFAULT(d, num_blocks);
  EXPECT_ZERO_DEFAULT(d, block_size);
  EXPECT_ZERO_DEFAULT(d, kv_scale_mode);
  EXPECT_ZERO_DEFAULT(d, k_scale);
  EXPECT_ZERO_DEFAULT(d, v_scale);
  EXPECT_ZERO_DEFAULT(d, scale_stride_block);
  EXPECT_ZERO_DEFAULT(d, scale_stride_slot);
  EXPECT_ZERO_DEFAULT(d, scale_stride_head);
  EXPECT_ZERO_DEFAULT(d, block_table);
  EXPECT_ZERO_DEFAULT(d, block_table_stride);
  EXPECT_ZERO_DEFAULT(d, max_blocks_per_seq);
  EXPECT_ZERO_DEFAULT(d, cu_seqlens_q);
  EXPECT_ZERO_DEFAULT(d, seq_lens_k);
  EXPECT_ZERO_DEFAULT(d, num_seqs);
  EXPECT_ZERO_DEFAULT(d, num_tokens);
  EXPECT_ZERO_DEFAULT(d, max_seqlen_q);
  EXPECT_ZERO_DEFAULT(d, max_seqlen_k);
  EXPECT_ZERO_DEFAULT(d, num_q_heads);
  EXPECT_ZERO_DEFAULT(d, num_kv_heads);
  EXPECT_ZERO_DEFAULT(d, head_size);
  EXPECT_ZERO_DEFAULT(d, scale);
  EXPECT_ZERO_DEFAULT(d, softcap);
  EXPECT_ZERO_DEFAULT(d, sinks);
  EXPECT_ZERO_DEFAULT(d, alibi_slopes);
  EXPECT_ZERO_DEFAULT(d, qq_bias);
  EXPECT_ZERO_DEFAULT(d, qq_bias_stride);
  EXPECT_ZERO_DEFAULT(d, out);
  EXPECT_ZERO_DEFAULT(d, o_stride_token);
  EXPECT_ZERO_DEFAULT(d, o_stride_head);
  expect_zero_default(d.out_format, "out_format");
  EXPECT_ZERO_DEFAULT(d, lse);
  EXPECT_ZERO_DEFAULT(d, lse_stride_head);
}

TEST(ZeroFilled, PagedDecodeDefaultsAreZeroButWindowAndQLen) {
  const PagedDecodeParams d;
  EXPECT_EQ(d.window_left, -1);
  EXPECT_EQ(d.q_len, 1);
  EXPECT_ZERO_DEFAULT(d, q);
  EXPECT_ZERO_DEFAULT(d, q_dtype);
  EXPECT_ZERO_DEFAULT(d, q_stride_token);
  EXPECT_ZERO_DEFAULT(d, q_stride_head);
  expect_zero_default(d.q_scale, "q_scale");
  EXPECT_ZERO_DEFAULT(d, fp8_math);
  EXPECT_ZERO_DEFAULT(d, k_cache);
  EXPECT_ZERO_DEFAULT(d, v_cache);
  EXPECT_ZERO_DEFAULT(d, kv_dtype);
  EXPECT_ZERO_DEFAULT(d, kv_layout);
  EXPECT_ZERO_DEFAULT(d, k_stride_block);
  EXPECT_ZERO_DEFAULT(d, k_stride_slot);
  EXPECT_ZERO_DEFAULT(d, k_stride_head);
  EXPECT_ZERO_DEFAULT(d, v_stride_block);
  EXPECT_ZERO_DEFAULT(d, v_stride_slot);
  EXPECT_ZERO_DEFAULT(d, v_stride_head);
  EXPECT_ZERO_DEFAULT(d, k_stride_chunk);
  EXPECT_ZERO_DEFAULT(d, v_stride_dim);
  EXPECT_ZERO_DEFAULT(d, num_blocks);
  EXPECT_ZERO_DEFAULT(d, block_size);
  EXPECT_ZERO_DEFAULT(d, kv_scale_mode);
  EXPECT_ZERO_DEFAULT(d, k_scale);
  EXPECT_ZERO_DEFAULT(d, v_scale);
  EXPECT_ZERO_DEFAULT(d, k_scale_value);
  EXPECT_ZERO_DEFAULT(d, v_scale_value);
  EXPECT_ZERO_DEFAULT(d, scale_stride_block);
  EXPECT_ZERO_DEFAULT(d, scale_stride_slot);
  EXPECT_ZERO_DEFAULT(d, scale_stride_head);
  EXPECT_ZERO_DEFAULT(d, block_table);
  EXPECT_ZERO_DEFAULT(d, block_table_stride);
  EXPECT_ZERO_DEFAULT(d, max_blocks_per_seq);
  EXPECT_ZERO_DEFAULT(d, seq_lens_k);
  EXPECT_ZERO_DEFAULT(d, num_seqs);
  EXPECT_ZERO_DEFAULT(d, max_seqlen_k);
  EXPECT_ZERO_DEFAULT(d, num_q_heads);
  EXPECT_ZERO_DEFAULT(d, num_kv_heads);
  EXPECT_ZERO_DEFAULT(d, head_size);
  EXPECT_ZERO_DEFAULT(d, scale);
  EXPECT_ZERO_DEFAULT(d, softcap);
  EXPECT_ZERO_DEFAULT(d, sinks);
  EXPECT_ZERO_DEFAULT(d, alibi_slopes);
  EXPECT_ZERO_DEFAULT(d, out);
  EXPECT_ZERO_DEFAULT(d, o_stride_token);
  EXPECT_ZERO_DEFAULT(d, o_stride_head);
  expect_zero_default(d.out_format, "out_format");
  EXPECT_ZERO_DEFAULT(d, lse);
  EXPECT_ZERO_DEFAULT(d, lse_stride_head);

  const PagedDecodeTraits t;
  EXPECT_EQ(t.max_q_len, 1);
  EXPECT_ZERO_DEFAULT(t, max_num_seqs);
  EXPECT_ZERO_DEFAULT(t, num_q_heads);
  EXPECT_ZERO_DEFAULT(t, num_kv_heads);
  EXPECT_ZERO_DEFAULT(t, max_head_size);
  EXPECT_ZERO_DEFAULT(t, max_seqlen_k);
}

TEST(ZeroFilled, MlaDecodeDefaultsAreZeroButDtypesAndQLen) {
  const MlaDecodeParams d;
  EXPECT_EQ(d.q_dtype, DType::bf16);
  EXPECT_EQ(d.kv_dtype, DType::bf16);
  EXPECT_EQ(d.q_len, 1);
  EXPECT_ZERO_DEFAULT(d, q);
  EXPECT_ZERO_DEFAULT(d, q_stride_token);
  EXPECT_ZERO_DEFAULT(d, q_stride_head);
  EXPECT_ZERO_DEFAULT(d, q_rope);
  EXPECT_ZERO_DEFAULT(d, q_rope_stride_token);
  EXPECT_ZERO_DEFAULT(d, q_rope_stride_head);
  expect_zero_default(d.q_scale, "q_scale");
  EXPECT_ZERO_DEFAULT(d, kv_cache);
  EXPECT_ZERO_DEFAULT(d, kv_stride_page);
  EXPECT_ZERO_DEFAULT(d, kv_stride_slot);
  EXPECT_ZERO_DEFAULT(d, num_pages);
  EXPECT_ZERO_DEFAULT(d, page_size);
  EXPECT_ZERO_DEFAULT(d, kv_scale);
  EXPECT_ZERO_DEFAULT(d, kv_scale_value);
  EXPECT_ZERO_DEFAULT(d, block_table);
  EXPECT_ZERO_DEFAULT(d, block_table_stride);
  EXPECT_ZERO_DEFAULT(d, max_pages_per_seq);
  EXPECT_ZERO_DEFAULT(d, seq_lens_k);
  EXPECT_ZERO_DEFAULT(d, batch);
  EXPECT_ZERO_DEFAULT(d, max_seqlen_k);
  EXPECT_ZERO_DEFAULT(d, num_heads);
  EXPECT_ZERO_DEFAULT(d, scale);
  EXPECT_ZERO_DEFAULT(d, out);
  EXPECT_ZERO_DEFAULT(d, o_stride_token);
  EXPECT_ZERO_DEFAULT(d, o_stride_head);
  expect_zero_default(d.out_format, "out_format");
  EXPECT_ZERO_DEFAULT(d, lse);
  EXPECT_ZERO_DEFAULT(d, lse_stride_token);
  EXPECT_ZERO_DEFAULT(d, lse_stride_head);

  const MlaDecodeTraits t;
  EXPECT_EQ(t.max_q_len, 1);
  EXPECT_ZERO_DEFAULT(t, max_batch);
  EXPECT_ZERO_DEFAULT(t, num_heads);
  EXPECT_ZERO_DEFAULT(t, max_seqlen_k);
}

TEST(ZeroFilled, DensePrefillAndMergeDefaults) {
  const DensePrefillParams d;
  EXPECT_EQ(d.window_left, -1);
  EXPECT_ZERO_DEFAULT(d, dtype);
  EXPECT_ZERO_DEFAULT(d, q);
  EXPECT_ZERO_DEFAULT(d, q_stride_token);
  EXPECT_ZERO_DEFAULT(d, q_stride_head);
  EXPECT_ZERO_DEFAULT(d, q_stride_batch);
  EXPECT_ZERO_DEFAULT(d, k);
  EXPECT_ZERO_DEFAULT(d, k_stride_token);
  EXPECT_ZERO_DEFAULT(d, k_stride_head);
  EXPECT_ZERO_DEFAULT(d, k_stride_batch);
  EXPECT_ZERO_DEFAULT(d, v);
  EXPECT_ZERO_DEFAULT(d, v_stride_token);
  EXPECT_ZERO_DEFAULT(d, v_stride_head);
  EXPECT_ZERO_DEFAULT(d, v_stride_batch);
  EXPECT_ZERO_DEFAULT(d, cu_seqlens_q);
  EXPECT_ZERO_DEFAULT(d, cu_seqlens_k);
  EXPECT_ZERO_DEFAULT(d, num_seqs);
  EXPECT_ZERO_DEFAULT(d, num_tokens_q);
  EXPECT_ZERO_DEFAULT(d, num_tokens_k);
  EXPECT_ZERO_DEFAULT(d, max_seqlen_q);
  EXPECT_ZERO_DEFAULT(d, max_seqlen_k);
  EXPECT_ZERO_DEFAULT(d, num_q_heads);
  EXPECT_ZERO_DEFAULT(d, num_kv_heads);
  EXPECT_ZERO_DEFAULT(d, head_size_qk);
  EXPECT_ZERO_DEFAULT(d, head_size_v);
  EXPECT_ZERO_DEFAULT(d, scale);
  EXPECT_ZERO_DEFAULT(d, causal);
  EXPECT_ZERO_DEFAULT(d, softcap);
  EXPECT_ZERO_DEFAULT(d, out);
  EXPECT_ZERO_DEFAULT(d, o_stride_token);
  EXPECT_ZERO_DEFAULT(d, o_stride_head);
  EXPECT_ZERO_DEFAULT(d, o_stride_batch);
  EXPECT_ZERO_DEFAULT(d, lse);
  EXPECT_ZERO_DEFAULT(d, lse_stride_head);

  const MergeAttentionStatesParams m;
  EXPECT_ZERO_DEFAULT(m, partial_out);
  EXPECT_ZERO_DEFAULT(m, partial_dtype);
  EXPECT_ZERO_DEFAULT(m, po_stride_rank);
  EXPECT_ZERO_DEFAULT(m, po_stride_token);
  EXPECT_ZERO_DEFAULT(m, po_stride_head);
  EXPECT_ZERO_DEFAULT(m, partial_lse);
  EXPECT_ZERO_DEFAULT(m, plse_stride_rank);
  EXPECT_ZERO_DEFAULT(m, plse_stride_token);
  EXPECT_ZERO_DEFAULT(m, plse_stride_head);
  EXPECT_ZERO_DEFAULT(m, num_ranks);
  EXPECT_ZERO_DEFAULT(m, num_tokens);
  EXPECT_ZERO_DEFAULT(m, num_heads);
  EXPECT_ZERO_DEFAULT(m, head_size);
  EXPECT_ZERO_DEFAULT(m, out);
  EXPECT_ZERO_DEFAULT(m, out_dtype);
  EXPECT_ZERO_DEFAULT(m, o_stride_token);
  EXPECT_ZERO_DEFAULT(m, o_stride_head);
  EXPECT_ZERO_DEFAULT(m, lse);
  EXPECT_ZERO_DEFAULT(m, lse_stride_token);
  EXPECT_ZERO_DEFAULT(m, lse_stride_head);
}

TEST(ZeroFilled, OptionsDefaultsAreZero) {
  const hipattn::UnifiedOptions u;
  EXPECT_ZERO_DEFAULT(u, path);
  EXPECT_ZERO_DEFAULT(u, num_segments);
  EXPECT_ZERO_DEFAULT(u, split);
  EXPECT_ZERO_DEFAULT(u, pipeline);
  const hipattn::PagedDecodeOptions p;
  EXPECT_ZERO_DEFAULT(p, split);
  EXPECT_ZERO_DEFAULT(p, num_segments);
  EXPECT_ZERO_DEFAULT(p, workgroup_budget);
  EXPECT_ZERO_DEFAULT(p, batch_invariant_keys);
  const hipattn::MlaDecodeOptions m;
  EXPECT_ZERO_DEFAULT(m, split);
  EXPECT_ZERO_DEFAULT(m, workgroup_budget);
}

// ---------------------------------------------------------------------------------------------------
// Zero-filled structs with the fields of a small valid problem set validate

// Unified: 2 sequences (q lengths 3 and 1, 4 tokens; kv lengths <= 20), 4 q heads over 2 kv heads,
// d 64, an NHD cache of 4 blocks of 16 slots, block-table rows of 2. window_left set (its zero is a
// window of one key); causal left 0 (non-causal).
UnifiedAttentionParams zero_filled_unified() {
  UnifiedAttentionParams p = zero_filled<UnifiedAttentionParams>();
  p.q = fake<const void>(0x10000);
  p.q_stride_head = 64;
  p.q_stride_token = 4 * 64;
  p.k_cache = fake<const void>(0x200000);
  p.v_cache = fake<const void>(0x400000);
  p.k_stride_head = p.v_stride_head = 64;
  p.k_stride_slot = p.v_stride_slot = 2 * 64;
  p.k_stride_block = p.v_stride_block = 16 * 2 * 64;
  p.num_blocks = 4;
  p.block_size = 16;
  p.block_table = fake<const int32_t>(0x600000);
  p.block_table_stride = 2;
  p.max_blocks_per_seq = 2;
  p.cu_seqlens_q = fake<const int32_t>(0x610000);
  p.seq_lens_k = fake<const int32_t>(0x620000);
  p.num_seqs = 2;
  p.num_tokens = 4;
  p.max_seqlen_q = 3;
  p.max_seqlen_k = 20;
  p.num_q_heads = 4;
  p.num_kv_heads = 2;
  p.head_size = 64;
  p.scale = 0.125f;
  p.window_left = -1;
  p.out = fake<void>(0x700000);
  p.o_stride_head = 64;
  p.o_stride_token = 4 * 64;
  return p;
}

// fp8 e4m3fn queries over an e4m3fn cache with device per-tensor K / V scales; q_scale left 0.
void make_fp8_q(UnifiedAttentionParams& p, DType out) {
  p.q_dtype = p.kv_dtype = DType::fp8_e4m3fn;
  p.kv_scale_mode = KvScaleMode::per_tensor;
  p.k_scale = fake<const float>(0x900000);
  p.v_scale = fake<const float>(0x900010);
  p.out_format.dtype = out;
}

TEST(ZeroFilled, UnifiedValidates) {
  {
    const UnifiedAttentionParams p = zero_filled_unified();  // fp16, q_scale and out_format zero
    EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
    const std::vector<int32_t> cu{0, 3, 4}, kv{20, 5}, bt{3, 1, 0, -1};
    EXPECT_TRUE(validate(p, hipattn::HostSequenceInfo{cu, kv, bt}).ok());
  }
  {  // fp8 queries, a bf16 output: q_scale.host 0 is the scale 1
    UnifiedAttentionParams p = zero_filled_unified();
    make_fp8_q(p, DType::bf16);
    EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
  }
  {  // fp8 queries, a per-tensor fp8 output: both host scales 0
    UnifiedAttentionParams p = zero_filled_unified();
    make_fp8_q(p, DType::fp8_e4m3fnuz);
    EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
  }
  {  // a per-group fp8 output: the unset per-tensor scale may be 0 (or 1)
    UnifiedAttentionParams p = zero_filled_unified();
    p.out_format.dtype = DType::fp8_e4m3fn;
    p.out_format.group_size = 32;
    p.out_format.group_scale = fake<float>(0x910000);
    p.out_format.group_scale_stride_group = 1;
    p.out_format.group_scale_stride_token = 4 * 2;
    EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
    p.out_format.scale.host = 1.f;
    EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
    p.out_format.scale.host = 0.5f;
    EXPECT_EQ(validate(p).field(), "out_format.scale.host");
  }
  {  // 16-bit queries: an unset q_scale is 0 or 1; anything else is refused, naming the value
    UnifiedAttentionParams p = zero_filled_unified();
    p.q_scale.host = 1.f;
    EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
    p.q_scale.host = 2.f;
    const ValidationReport r = validate(p);
    EXPECT_EQ(r.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(r.field(), "q_scale.host");
    EXPECT_NE(r.message().find("q_scale.host (2)"), std::string::npos) << r.message();
  }
  // a used scale: negative or non-finite host values are still refused, naming the field and value
  for (const float bad : {-1.f, -0.5f, NAN, INFINITY}) {
    UnifiedAttentionParams p = zero_filled_unified();
    make_fp8_q(p, DType::bf16);
    p.q_scale.host = bad;
    const ValidationReport r = validate(p);
    EXPECT_EQ(r.code(), ErrorCode::invalid_argument) << bad;
    EXPECT_EQ(r.field(), "q_scale.host") << bad;
    EXPECT_NE(r.message().find("q_scale.host (" + hipattn::validation::flt(bad) + ")"), std::string::npos) << r.message();
    make_fp8_q(p, DType::fp8_e4m3fn);
    p.q_scale.host = 0.f;
    p.out_format.scale.host = bad;
    EXPECT_EQ(validate(p).field(), "out_format.scale.host") << bad;
  }
}

// Paged decode: 2 sequences of q_len 1 (set: its zero is refused), 8 q heads over 2 kv heads, d 128,
// an NHD cache of 8 blocks of 16 slots, window_left set.
PagedDecodeParams zero_filled_paged() {
  PagedDecodeParams p = zero_filled<PagedDecodeParams>();
  p.q = fake<const void>(0x10000);
  p.q_stride_head = 128;
  p.q_stride_token = 8 * 128;
  p.q_len = 1;
  p.k_cache = fake<const void>(0x200000);
  p.v_cache = fake<const void>(0x400000);
  p.k_stride_head = p.v_stride_head = 128;
  p.k_stride_slot = p.v_stride_slot = 2 * 128;
  p.k_stride_block = p.v_stride_block = 16 * 2 * 128;
  p.num_blocks = 8;
  p.block_size = 16;
  p.block_table = fake<const int32_t>(0x600000);
  p.block_table_stride = 4;
  p.max_blocks_per_seq = 4;
  p.seq_lens_k = fake<const int32_t>(0x610000);
  p.num_seqs = 2;
  p.max_seqlen_k = 50;
  p.num_q_heads = 8;
  p.num_kv_heads = 2;
  p.head_size = 128;
  p.scale = 0.088f;
  p.window_left = -1;
  p.out = fake<void>(0x700000);
  p.o_stride_head = 128;
  p.o_stride_token = 8 * 128;
  return p;
}

// fp8 queries over an fp8 cache with per-tensor host-float scales: every scale left 0.
void make_fp8_paged(PagedDecodeParams& p, DType out) {
  p.q_dtype = p.kv_dtype = DType::fp8_e4m3fn;
  p.kv_scale_mode = KvScaleMode::per_tensor;
  p.out_format.dtype = out;
}

TEST(ZeroFilled, PagedDecodeValidates) {
  {
    const PagedDecodeParams p = zero_filled_paged();
    EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
    const std::vector<int32_t> kv{50, 0}, bt{3, 5, 0, 1, -1, -1, -1, -1};
    EXPECT_TRUE(validate(p, kv, bt).ok());
  }
  for (const DType out : {DType::f16, DType::fp8_e4m3fn}) {
    PagedDecodeParams p = zero_filled_paged();
    make_fp8_paged(p, out);
    EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
    EXPECT_TRUE(validate(p, std::vector<int32_t>{50, 3}).ok());
  }
  // the zero that is refused, as its header says: q_len
  PagedDecodeParams p = zero_filled_paged();
  p.q_len = 0;
  EXPECT_EQ(validate(p).field(), "q_len");
  EXPECT_EQ(validate(p).code(), ErrorCode::unsupported);
  // bad host-float scales are still refused, naming the field and the value
  p = zero_filled_paged();
  make_fp8_paged(p, DType::f16);
  p.v_scale_value = -3.f;
  EXPECT_EQ(validate(p).field(), "v_scale_value");
  EXPECT_NE(validate(p).message().find("v_scale_value (-3)"), std::string::npos) << validate(p).message();

  // traits: max_q_len set (its zero is refused), the rest as the zero-filled struct holds them
  PagedDecodeTraits t = zero_filled<PagedDecodeTraits>();
  t.max_num_seqs = 8, t.num_q_heads = 8, t.num_kv_heads = 2, t.max_head_size = 128, t.max_seqlen_k = 4096;
  EXPECT_EQ(validate(t).field(), "max_q_len");
  t.max_q_len = 1;
  EXPECT_TRUE(validate(t).ok()) << describe(validate(t));
}

// MLA decode: 2 sequences of q_len 1, 16 heads, an fp16 query and cache (the zero dtype), pages of
// 64 slots; packed tensors.
MlaDecodeParams zero_filled_mla() {
  MlaDecodeParams p = zero_filled<MlaDecodeParams>();
  p.batch = 2;
  p.q_len = 1;
  p.num_heads = 16;
  p.q = fake<const void>(0x10000);
  p.q_stride_head = 576;
  p.q_stride_token = 16 * 576;
  p.kv_cache = fake<const void>(0x200000);
  p.kv_stride_slot = 576;
  p.kv_stride_page = 64 * 576;
  p.num_pages = 8;
  p.page_size = 64;
  p.block_table = fake<const int32_t>(0x600000);
  p.block_table_stride = 4;
  p.max_pages_per_seq = 4;
  p.seq_lens_k = fake<const int32_t>(0x610000);
  p.max_seqlen_k = 256;
  p.scale = 0.0417f;
  p.out = fake<void>(0x700000);
  p.o_stride_head = 512;
  p.o_stride_token = 16 * 512;
  return p;
}

TEST(ZeroFilled, MlaDecodeValidates) {
  MlaDecodeParams p = zero_filled_mla();
  EXPECT_EQ(p.q_dtype, DType::f16) << "a zero-filled dtype is fp16 (the header says: set it)";
  EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
  // an fp8 cache without a device scale: kv_scale_value 0 is the scale 1
  p.q_dtype = DType::bf16;
  p.kv_dtype = DType::fp8_e4m3fn;
  EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
  // fp8 queries (q_scale 0) and a per-tensor fp8 output (scale 0)
  p.q_dtype = DType::fp8_e4m3fn;
  p.out_format.dtype = DType::fp8_e4m3fn;
  EXPECT_TRUE(validate(p).ok()) << describe(validate(p));
  p.kv_scale_value = -1.f;
  EXPECT_EQ(validate(p).field(), "kv_scale_value");
  EXPECT_NE(validate(p).message().find("kv_scale_value (-1)"), std::string::npos) << validate(p).message();

  MlaDecodeTraits t = zero_filled<MlaDecodeTraits>();
  t.max_batch = 4, t.num_heads = 16, t.max_seqlen_k = 1024;
  EXPECT_EQ(validate(t).field(), "max_q_len");
  t.max_q_len = 1;
  EXPECT_TRUE(validate(t).ok()) << describe(validate(t));
}

TEST(ZeroFilled, DensePrefillAndMergeValidate) {
  // dense prefill, batched (cu_seqlens null): 2 sequences of 64 queries and 96 keys, 4 / 4 heads,
  // (128, 128), fp16 (the zero dtype), packed BSHD tensors; window_left set
  DensePrefillParams d = zero_filled<DensePrefillParams>();
  d.num_seqs = 2;
  d.max_seqlen_q = 64;
  d.max_seqlen_k = 96;
  d.num_tokens_q = 128;
  d.num_tokens_k = 192;
  d.num_q_heads = d.num_kv_heads = 4;
  d.head_size_qk = d.head_size_v = 128;
  d.q = fake<const void>(0x10000);
  d.k = fake<const void>(0x200000);
  d.v = fake<const void>(0x300000);
  d.out = fake<void>(0x400000);
  d.q_stride_head = d.k_stride_head = d.v_stride_head = d.o_stride_head = 128;
  d.q_stride_token = d.k_stride_token = d.v_stride_token = d.o_stride_token = 4 * 128;
  d.q_stride_batch = d.o_stride_batch = 64 * 4 * 128;
  d.k_stride_batch = d.v_stride_batch = 96 * 4 * 128;
  d.scale = 0.088f;
  d.window_left = -1;
  EXPECT_TRUE(validate(d).ok()) << describe(validate(d));

  // merge: 2 stacked ranks of [3 tokens, 2 heads, 64], fp16 (the zero dtype) partials and output
  MergeAttentionStatesParams m = zero_filled<MergeAttentionStatesParams>();
  m.num_ranks = 2;
  m.num_tokens = 3;
  m.num_heads = 2;
  m.head_size = 64;
  m.partial_out = fake<const void>(0x100000);
  m.po_stride_head = 64;
  m.po_stride_token = 2 * 64;
  m.po_stride_rank = 3 * 2 * 64;
  m.partial_lse = fake<const float>(0x200000);
  m.plse_stride_head = 1;
  m.plse_stride_token = 2;
  m.plse_stride_rank = 6;
  m.out = fake<void>(0x300000);
  m.o_stride_head = 64;
  m.o_stride_token = 2 * 64;
  EXPECT_TRUE(validate(m).ok()) << describe(validate(m));
}

// Zero-filled options plan as the defaults do.
TEST(ZeroFilled, OptionsPlanAsTheDefaults) {
  const PlanDevice h100{Target::sm90, 132};
  const UnifiedAttentionParams u = zero_filled_unified();
  const hipattn::UnifiedPlan a = hipattn::plan_unified_attention(u, zero_filled<hipattn::UnifiedOptions>(), h100);
  const hipattn::UnifiedPlan b = hipattn::plan_unified_attention(u, {}, h100);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.workspace_bytes, b.workspace_bytes);
  const PagedDecodeParams p = zero_filled_paged();
  EXPECT_EQ(hipattn::plan_paged_decode(p, zero_filled<hipattn::PagedDecodeOptions>(), h100).reason,
            hipattn::plan_paged_decode(p, {}, h100).reason);
  const MlaDecodeParams m = zero_filled_mla();
  EXPECT_EQ(hipattn::plan_mla_decode(m, zero_filled<hipattn::MlaDecodeOptions>(), h100).reason,
            hipattn::plan_mla_decode(m, {}, h100).reason);
}

// ---------------------------------------------------------------------------------------------------
// A zero host scale is the scale 1, wherever the host value is read

TEST(ZeroFilled, ZeroHostScalesAreOne) {
  EXPECT_EQ(zero_filled<TensorScale>().host_or_one(), 1.f);
  EXPECT_EQ(TensorScale{}.host_or_one(), 1.f);
  EXPECT_EQ((TensorScale{nullptr, 1.f}).host_or_one(), 1.f);
  EXPECT_EQ((TensorScale{nullptr, 0.375f}).host_or_one(), 0.375f);  // explicitly set: unchanged
  EXPECT_EQ((TensorScale{nullptr, -2.f}).host_or_one(), -2.f);      // (refused by validation)
  static_assert(TensorScale{}.host_or_one() == 1.f);

  PagedDecodeParams p = zero_filled<PagedDecodeParams>();
  EXPECT_EQ(p.k_scale_value_or_one(), 1.f);
  EXPECT_EQ(p.v_scale_value_or_one(), 1.f);
  p.k_scale_value = 0.5f, p.v_scale_value = 3.f;
  EXPECT_EQ(p.k_scale_value_or_one(), 0.5f);
  EXPECT_EQ(p.v_scale_value_or_one(), 3.f);
  MlaDecodeParams m = zero_filled<MlaDecodeParams>();
  EXPECT_EQ(m.kv_scale_value_or_one(), 1.f);
  m.kv_scale_value = 0.25f;
  EXPECT_EQ(m.kv_scale_value_or_one(), 0.25f);

  // the output arguments of every family's epilogue and reduce (dispatch/output_args.hpp)
  OutputFormat f = zero_filled<OutputFormat>();
  f.dtype = DType::fp8_e4m3fn;
  EXPECT_EQ(hipattn::make_output_args(nullptr, 512, 64, DType::bf16, f, 64).scale_value, 1.f);
  f.scale.host = 0.25f;
  EXPECT_EQ(hipattn::make_output_args(nullptr, 512, 64, DType::bf16, f, 64).scale_value, 0.25f);
}

// The kernel arguments the dispatch fills: paged decode's (the skeleton's, through unified's
// fill_attention_kernel_args) and MLA decode's.
TEST(ZeroFilled, KernelArgumentsTakeOneForZeroScales) {
  const PlanDevice h100{Target::sm90, 132};
  using Cfg = hipattn::unified_instance_config_t<false, hipattn::KvKind::e4m3fn, 128, hipattn::UnifiedTileKind::decode,
                                                 hipattn::PlainVariant, Target::sm90>;
  PagedDecodeParams p = zero_filled_paged();
  make_fp8_paged(p, DType::fp8_e4m3fn);
  ASSERT_TRUE(validate(p).ok()) << describe(validate(p));
  const hipattn::PagedDecodePlan plan = hipattn::plan_paged_decode(p, {}, h100);
  auto a = hipattn::make_paged_decode_kernel_args<Cfg>(p, plan, nullptr);
  EXPECT_EQ(a.q_scale_tensor, nullptr);
  EXPECT_EQ(a.q_scale_value, 1.f);
  EXPECT_EQ(a.k_scale_value, 1.f);
  EXPECT_EQ(a.v_scale_value, 1.f);
  EXPECT_EQ(a.out.scale_value, 1.f);
  EXPECT_FALSE(a.p8) << "the zero fp8_math is fp8_qk (P in f16), not fp8_pv";
  p.q_scale.host = 0.5f, p.k_scale_value = 0.25f, p.v_scale_value = 2.f, p.out_format.scale.host = 4.f;
  p.fp8_math = Fp8Math::fp8_pv;
  a = hipattn::make_paged_decode_kernel_args<Cfg>(p, plan, nullptr);
  EXPECT_EQ(a.q_scale_value, 0.5f);
  EXPECT_EQ(a.k_scale_value, 0.25f);
  EXPECT_EQ(a.v_scale_value, 2.f);
  EXPECT_EQ(a.out.scale_value, 4.f);
  EXPECT_TRUE(a.p8);

  MlaDecodeParams m = zero_filled_mla();
  m.q_dtype = m.kv_dtype = DType::fp8_e4m3fn;
  m.out_format.dtype = DType::fp8_e4m3fnuz;
  ASSERT_TRUE(validate(m).ok()) << describe(validate(m));
  const hipattn::MlaDecodePlan mp = hipattn::plan_mla_decode(m, {}, h100);
  hipattn::MlaDecodeKernelArgs k = hipattn::make_mla_decode_kernel_args(m, mp, nullptr);
  EXPECT_EQ(k.q_scale_value, 1.f);
  EXPECT_EQ(k.kv_scale_value, 1.f);
  EXPECT_EQ(k.out.scale_value, 1.f);
  EXPECT_EQ(hipattn::make_mla_decode_reduce_args(m, mp, nullptr).out.scale_value, 1.f);
  m.q_scale.host = 0.125f, m.kv_scale_value = 0.75f, m.out_format.scale.host = 8.f;
  k = hipattn::make_mla_decode_kernel_args(m, mp, nullptr);
  EXPECT_EQ(k.q_scale_value, 0.125f);
  EXPECT_EQ(k.kv_scale_value, 0.75f);
  EXPECT_EQ(k.out.scale_value, 8.f);
}

// The float64 reference: fp8 queries with q_scale.host 0 give what host 1 gives (and the direct
// formula over the codes' values); an fp8 output with scale.host 0 is written as with host 1.
TEST(ZeroFilled, ReferenceTakesZeroScalesAsOne) {
  namespace rt = hipattn_reference_tests;
  rt::Spec s;
  s.q_lens = {3, 1};
  s.kv_lens = {9, 5};
  s.nqh = 4;
  s.nkvh = 2;
  s.hs = 32;
  s.bs = 4;
  s.q_dtype = DType::fp8_e4m3fn;
  s.kv_dtype = DType::fp8_e4m3fn;
  s.scale_mode = KvScaleMode::per_tensor;
  rt::Problem P(s, 2024);
  P.p.out_format.dtype = DType::f16;
  P.p.q_scale = zero_filled<TensorScale>();
  const hipattn::reference::AttentionResult r0 = hipattn::reference::unified_attention(P.p);
  P.p.q_scale.host = 1.f;
  const hipattn::reference::AttentionResult r1 = hipattn::reference::unified_attention(P.p);
  EXPECT_EQ(r0.out, r1.out);
  EXPECT_EQ(r0.lse, r1.lse);
  rt::expect_result(r0, rt::direct(P), rt::kTol, "q_scale.host 0 vs the codes' values");
  P.p.q_scale.host = 0.5f;  // an explicit scale is applied
  EXPECT_NE(hipattn::reference::unified_attention(P.p).lse, r1.lse);

  // an fp8 per-tensor output: scale.host 0 writes the codes of scale 1
  const int64_t n = int64_t(P.T) * s.nqh * s.hs;
  std::vector<uint8_t> out0(static_cast<size_t>(n), 0x7F), out1(static_cast<size_t>(n), 0x7F);  // poison: e4m3fn NaN
  UnifiedAttentionParams o = P.p;
  o.out_format = zero_filled<OutputFormat>();
  o.out_format.dtype = DType::fp8_e4m3fn;
  o.o_stride_head = s.hs;
  o.o_stride_token = int64_t(s.nqh) * s.hs;
  o.out = out0.data();
  hipattn::reference::write_outputs(r1, o);
  o.out_format.scale.host = 1.f;
  o.out = out1.data();
  hipattn::reference::write_outputs(r1, o);
  EXPECT_EQ(out0, out1);
  size_t nonzero = 0, poison = 0;
  for (uint8_t b : out0) nonzero += b != 0, poison += (b & 0x7F) == 0x7F;
  EXPECT_EQ(poison, 0u) << "every output written, none NaN";
  EXPECT_GT(nonzero, out0.size() / 2) << "the outputs hold codes (not a division by 0 saturated or zeroed)";
}

}  // namespace
