// The torch-free translation layer of torch.ops.hipattn (hipattn_torch/translate.hpp): engine-style
// tensor arguments to hipattn's params, and the errors a bad argument raises (the field named, the
// value in the message). Host only: the pointers are addresses that are never dereferenced.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "hipattn_torch/translate.hpp"

namespace {

using namespace hipattn::torch_ops;
using hipattn::DType;
using hipattn::ErrorCode;

const void* addr(uintptr_t a) { return reinterpret_cast<const void*>(a); }

// Runs f, which must throw hipattn::Error with `field` and a message containing `needle`.
void expect_error(const std::function<void()>& f, const std::string& field, const std::string& needle,
                  ErrorCode code = ErrorCode::invalid_argument) {
  try {
    f();
    ADD_FAILURE() << "no error; expected field " << field;
  } catch (const hipattn::Error& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), code) << e.what();
  }
}

// A valid unified call: 3 sequences, 40 tokens, 8 / 2 heads of 128, a bf16 cache of 64 blocks of 16
// in HND strides (a permuted view), NHD-shaped as vLLM passes it.
UnifiedArgs unified_args() {
  UnifiedArgs a;
  const int64_t T = 40, HQ = 8, HK = 2, D = 128, NB = 64, BS = 16, S = 3, MB = 8;
  a.q = make_view(addr(0x100000), Elem::bf16, {T, HQ, D});
  // HND storage [NB, HK, BS, D] seen as [NB, BS, HK, D]
  a.k = make_view(addr(0x200000), Elem::bf16, {NB, BS, HK, D}, {HK * BS * D, D, BS * D, 1});
  a.v = make_view(addr(0x400000), Elem::bf16, {NB, BS, HK, D}, {HK * BS * D, D, BS * D, 1});
  a.out = make_view(addr(0x600000), Elem::bf16, {T, HQ, D});
  a.cu_seqlens_q = make_view(addr(0x700000), Elem::i32, {S + 1});
  a.seqused_k = make_view(addr(0x700100), Elem::i32, {S});
  a.block_table = make_view(addr(0x700200), Elem::i32, {S, MB}, {MB + 4, 1});  // padded rows
  a.max_seqlen_q = 20;
  a.max_seqlen_k = 100;
  a.softmax_scale = 0.088;
  a.causal = true;
  a.window_size = {31, 0};
  return a;
}

TEST(TorchTranslate, UnifiedMapsShapesAndStrides) {
  const UnifiedArgs a = unified_args();
  const hipattn::UnifiedAttentionParams p = unified_params(a);
  EXPECT_EQ(p.q_dtype, DType::bf16);
  EXPECT_EQ(p.kv_dtype, DType::bf16);
  EXPECT_EQ(p.num_tokens, 40);
  EXPECT_EQ(p.num_q_heads, 8);
  EXPECT_EQ(p.num_kv_heads, 2);
  EXPECT_EQ(p.head_size, 128);
  EXPECT_EQ(p.num_blocks, 64);
  EXPECT_EQ(p.block_size, 16);
  EXPECT_EQ(p.num_seqs, 3);
  EXPECT_EQ(p.k_stride_block, 2 * 16 * 128);
  EXPECT_EQ(p.k_stride_slot, 128);  // HND passed through, not made contiguous
  EXPECT_EQ(p.k_stride_head, 16 * 128);
  EXPECT_EQ(p.block_table_stride, 12);
  EXPECT_EQ(p.max_blocks_per_seq, 8);
  EXPECT_EQ(p.window_left, 31);  // vLLM's (W - 1, 0)
  EXPECT_EQ(p.kv_scale_mode, hipattn::KvScaleMode::none);
  EXPECT_EQ(p.out, a.out.data);
  EXPECT_FLOAT_EQ(p.scale, 0.088f);
}

TEST(TorchTranslate, UnifiedScalesBiasesAndLse) {
  UnifiedArgs a = unified_args();
  a.k.elem = a.v.elem = Elem::fp8_e4m3fn;
  a.k.stride = {2 * 16 * 128, 128, 16 * 128, 1};
  a.k_descale = make_view(addr(0x800000), Elem::f32, {3, 2}, {0, 0});  // vLLM's expanded scalar
  a.v_descale = make_view(addr(0x800010), Elem::f32, {1});
  a.sinks = make_view(addr(0x800100), Elem::f32, {8});
  a.alibi_slopes = make_view(addr(0x800200), Elem::f32, {8});
  a.qq_bias = make_view(addr(0x800400), Elem::f32, {20, 20});
  a.lse = make_view(addr(0x900000), Elem::f32, {8, 48});
  const hipattn::UnifiedAttentionParams p = unified_params(a);
  EXPECT_EQ(p.kv_dtype, DType::fp8_e4m3fn);
  EXPECT_EQ(p.kv_scale_mode, hipattn::KvScaleMode::per_tensor);
  EXPECT_EQ(p.k_scale, a.k_descale.data);
  EXPECT_EQ(p.sinks, a.sinks.data);
  EXPECT_EQ(p.qq_bias_stride, 20);
  EXPECT_EQ(p.lse_stride_head, 48);

  UnifiedArgs b = unified_args();  // 16-bit caches ignore vLLM's k_descale / v_descale, as its kernel
  b.k_descale = make_view(addr(0x800000), Elem::f32, {1});
  EXPECT_EQ(unified_params(b).kv_scale_mode, hipattn::KvScaleMode::none);
}

// Per-(token, head) fp8 scale caches [num_blocks, block_size, num_kv_heads] (kv_quant_mode 2 for
// unified, both caches given for paged decode): their strides reach the params; K and V must share them.
TEST(TorchTranslate, TokenHeadScaleCaches) {
  UnifiedArgs a = unified_args();
  a.k.elem = a.v.elem = Elem::fp8_e4m3fn;
  a.kv_quant_mode = kv_quant_per_token_head;
  a.k_scale_cache = make_view(addr(0x900000), Elem::f32, {64, 16, 2}, {2 * 16 + 8, 1, 16});  // padded blocks, HND-like
  a.v_scale_cache = make_view(addr(0x980000), Elem::f32, {64, 16, 2}, {2 * 16 + 8, 1, 16});
  const hipattn::UnifiedAttentionParams p = unified_params(a);
  EXPECT_EQ(p.kv_scale_mode, hipattn::KvScaleMode::per_token_head);
  EXPECT_EQ(p.k_scale, a.k_scale_cache.data);
  EXPECT_EQ(p.v_scale, a.v_scale_cache.data);
  EXPECT_EQ(p.scale_stride_block, 40);
  EXPECT_EQ(p.scale_stride_slot, 1);
  EXPECT_EQ(p.scale_stride_head, 16);
  UnifiedArgs b = a;
  b.v_scale_cache = make_view(addr(0x980000), Elem::f32, {64, 16, 2});  // contiguous: other strides than K's
  expect_error([&] { unified_params(b); }, "v_scale_cache", "one set of strides");
  UnifiedArgs c = a;
  c.k_scale_cache = make_view(addr(0x900000), Elem::f32, {64, 8, 2}, {40, 1, 16});
  expect_error([&] { unified_params(c); }, "k_scale_cache", "of k");
  UnifiedArgs d = a;
  d.v_scale_cache.elem = Elem::bf16;
  expect_error([&] { unified_params(d); }, "v_scale_cache", "float32");
}

TEST(TorchTranslate, UnifiedErrorsNameTheArgument) {
  expect_error([] { auto a = unified_args(); a.cu_seqlens_q.elem = Elem::i64; unified_params(a); }, "cu_seqlens_q", "int64");
  expect_error([] { auto a = unified_args(); a.q.elem = Elem::f32; unified_params(a); }, "q", "float32");
  expect_error([] { auto a = unified_args(); a.v.elem = Elem::f16; unified_params(a); }, "v", "float16");
  expect_error([] { auto a = unified_args(); a.out.device = -1; unified_params(a); }, "out", "CUDA");
  expect_error([] { auto a = unified_args(); a.seqused_k.device = 1; unified_params(a); }, "seqused_k", "cuda:1");
  expect_error([] { auto a = unified_args(); a.q.stride[2] = 2; unified_params(a); }, "q", "contiguous");
  expect_error([] { auto a = unified_args(); a.k.size[3] = 64; a.v.size[3] = 64; unified_params(a); }, "k", "head_size");
  expect_error([] { auto a = unified_args(); a.window_size = {31, 5}; unified_params(a); }, "window_size[1]", "5",
               ErrorCode::unsupported);
  expect_error([] { auto a = unified_args(); a.k.elem = a.v.elem = Elem::fp8_e4m3fn; unified_params(a); }, "k_descale",
               "required");
  expect_error([] { auto a = unified_args(); a.qq_bias = make_view(addr(0x800400), Elem::f32, {4, 20}); unified_params(a); },
               "qq_bias", "max_seqlen_q");
  // hipattn's own rules, reached after the argument checks: 8 query heads over 3 KV heads.
  expect_error([] {
    auto a = unified_args();
    a.k = make_view(addr(0x200000), Elem::bf16, {64, 16, 3, 128});
    a.v = make_view(addr(0x400000), Elem::bf16, {64, 16, 3, 128});
    unified_params(a);
  }, "num_kv_heads", "3");
  expect_error([] { auto a = unified_args(); a.softmax_scale = -1.0; unified_params(a); }, "scale", "-1");
}

PagedDecodeArgs paged_args() {
  PagedDecodeArgs a;
  const int64_t S = 4, QL = 2, HQ = 8, HK = 1, D = 64, NB = 32, BS = 64;
  a.q = make_view(addr(0x100000), Elem::f16, {S * QL, HQ, D});
  a.k_cache = make_view(addr(0x200000), Elem::f16, {NB, BS, HK, D});
  a.v_cache = make_view(addr(0x400000), Elem::f16, {NB, BS, HK, D});
  a.out = make_view(addr(0x600000), Elem::f16, {S * QL, HQ, D});
  a.block_table = make_view(addr(0x700000), Elem::i32, {S, 8});
  a.seq_lens = make_view(addr(0x700100), Elem::i32, {S});
  a.workspace = make_view(addr(0x800000), Elem::u8, {4096});
  a.max_seqlen_k = 500;
  a.softmax_scale = 0.125;
  a.q_len = QL;
  return a;
}

TEST(TorchTranslate, PagedDecode) {
  const PagedDecodeCall c = paged_decode_call(paged_args());
  EXPECT_EQ(c.params.num_seqs, 4);
  EXPECT_EQ(c.params.q_len, 2);
  EXPECT_EQ(c.params.block_size, 64);
  EXPECT_EQ(c.workspace.bytes, 4096u);
  expect_error([] { auto a = paged_args(); a.q_len = 3; paged_decode_call(a); }, "q", "q_len (3)");
  expect_error([] { auto a = paged_args(); a.workspace.elem = Elem::f32; paged_decode_call(a); }, "workspace", "uint8");
  expect_error([] { auto a = paged_args(); a.k_scale = make_view(addr(0x900000), Elem::f32, {1}); paged_decode_call(a); },
               "k_scale", "fp8");
  expect_error([] { paged_decode_traits(4, 9, 8, 1, 64, 100); }, "max_q_len", "9", ErrorCode::unsupported);
}

MlaDecodeArgs mla_args() {
  MlaDecodeArgs a;
  const int64_t B = 2, QL = 2, H = 16, NP = 40, PS = 64;
  a.q = make_view(addr(0x100000), Elem::bf16, {B, QL, H, 576});
  a.kv_cache = make_view(addr(0x1000000), Elem::bf16, {NP, PS, 1, 576});
  a.block_table = make_view(addr(0x700000), Elem::i32, {B, 20});
  a.cache_seqlens = make_view(addr(0x700100), Elem::i32, {B});
  a.tile_scheduler_metadata = make_view(addr(0x800000), Elem::u8, {1 << 20});
  a.out = make_view(addr(0x2000000), Elem::bf16, {B, QL, H, 512});
  // FlashMLA's [B, H, s_q] LSE as a transposed view of [B, s_q, H] storage: one token stride.
  a.softmax_lse = make_view(addr(0x900000), Elem::f32, {B, H, QL}, {QL * H, 1, H});
  a.softmax_scale = 0.04;
  a.causal = true;
  return a;
}

TEST(TorchTranslate, MlaDecode) {
  const MlaDecodeCall c = mla_decode_call(mla_args());
  EXPECT_EQ(c.params.batch, 2);
  EXPECT_EQ(c.params.q_len, 2);
  EXPECT_EQ(c.params.num_heads, 16);
  EXPECT_EQ(c.params.q_stride_token, 16 * 576);
  EXPECT_EQ(c.params.o_stride_token, 16 * 512);
  EXPECT_EQ(c.params.lse_stride_token, 16);
  EXPECT_EQ(c.params.lse_stride_head, 1);
  EXPECT_EQ(c.params.max_seqlen_k, 20 * 64);  // the block table's bound
  expect_error([] { auto a = mla_args(); a.head_dim_v = 128; mla_decode_call(a); }, "head_dim_v", "128", ErrorCode::unsupported);
  expect_error([] { auto a = mla_args(); a.causal = false; mla_decode_call(a); }, "causal", "q_len 2", ErrorCode::unsupported);
  expect_error([] {
    auto a = mla_args();
    a.softmax_lse = make_view(addr(0x900000), Elem::f32, {2, 16, 2});  // contiguous [B, H, s_q]: no token stride
    mla_decode_call(a);
  }, "softmax_lse", "merge");
  expect_error([] { auto a = mla_args(); a.kv_cache.size[3] = 512; mla_decode_call(a); }, "kv_cache", "576");
}

MergeArgs merge_args(uintptr_t prefix_o, uintptr_t suffix_o, uintptr_t prefix_l, uintptr_t suffix_l) {
  MergeArgs a;
  const int64_t T = 10, H = 4, D = 128;
  a.output = make_view(addr(0x100000), Elem::bf16, {T, H, D});
  a.prefix_output = make_view(addr(prefix_o), Elem::bf16, {T, H, D});
  a.suffix_output = make_view(addr(suffix_o), Elem::bf16, {T, H, D});
  a.prefix_lse = make_view(addr(prefix_l), Elem::f32, {H, T});
  a.suffix_lse = make_view(addr(suffix_l), Elem::f32, {H, T});
  a.output_lse = make_view(addr(0x300000), Elem::f32, {H, T});
  return a;
}

TEST(TorchTranslate, MergeAddressesThePartialsInPlace) {
  // suffix below prefix: rank 0 is the suffix, one rank stride reaches the prefix
  const MergeCall m = merge_call(merge_args(0x20000000, 0x10000000, 0x30001000, 0x30000000));
  EXPECT_FALSE(m.stack_out);
  EXPECT_FALSE(m.stack_lse);
  EXPECT_TRUE(m.suffix_first);
  EXPECT_EQ(m.params.partial_out, addr(0x10000000));
  EXPECT_EQ(m.params.po_stride_rank, 0x10000000 / 2);
  EXPECT_EQ(m.params.plse_stride_rank, 0x1000 / 4);
  EXPECT_EQ(m.params.plse_stride_head, 10);
  EXPECT_TRUE(hipattn::validate(m.params).ok());
}

TEST(TorchTranslate, MergeStacksWhatOneStrideCannotReach) {
  // O's 2^40 bytes apart (beyond 2^31 elements), LSEs in the opposite order
  MergeCall m = merge_call(merge_args(0x10000000, 0x10000000 + (uintptr_t(1) << 40), 0x30001000, 0x30000000));
  EXPECT_TRUE(m.stack_out);
  EXPECT_FALSE(m.suffix_first);
  EXPECT_TRUE(m.stack_lse);
  set_stacked_out(m.params, addr(0x40000000));
  set_stacked_lse(m.params, static_cast<const float*>(addr(0x50000000)));
  EXPECT_EQ(m.params.po_stride_rank, 10 * 4 * 128);
  EXPECT_EQ(m.params.plse_stride_rank, 40);
  EXPECT_TRUE(hipattn::validate(m.params).ok());
  // overlapping partials are never addressed in place
  EXPECT_TRUE(merge_call(merge_args(0x10000000, 0x10000000 + 256, 0x30000000, 0x30001000)).stack_out);
  expect_error([] {
    auto a = merge_args(0x10000000, 0x20000000, 0x30000000, 0x30001000);
    a.suffix_output.elem = Elem::f16;
    merge_call(a);
  }, "suffix_output", "float16");
  expect_error([] {
    auto a = merge_args(0x10000000, 0x20000000, 0x30000000, 0x30001000);
    a.prefix_lse = make_view(addr(0x30000000), Elem::f32, {10, 4});  // [T, H], not vLLM's [H, T]
    merge_call(a);
  }, "prefix_lse", "num_heads");
}

DensePrefillArgs dense_args() {
  DensePrefillArgs a;
  a.q = make_view(addr(0x100000), Elem::bf16, {100, 8, 128});
  a.k = make_view(addr(0x200000), Elem::bf16, {120, 2, 128});
  a.v = make_view(addr(0x300000), Elem::bf16, {120, 2, 128});
  a.out = make_view(addr(0x400000), Elem::bf16, {100, 8, 128});
  a.cu_seqlens_q = make_view(addr(0x500000), Elem::i32, {4});
  a.cu_seqlens_k = make_view(addr(0x500100), Elem::i32, {4});
  a.max_seqlen_q = 50;
  a.max_seqlen_k = 60;
  a.softmax_scale = 0.088;
  a.causal = true;
  a.softmax_lse = make_view(addr(0x600000), Elem::f32, {8, 100});
  return a;
}

TEST(TorchTranslate, DensePrefill) {
  const hipattn::DensePrefillParams p = dense_prefill_params(dense_args());
  EXPECT_TRUE(p.packed());
  EXPECT_EQ(p.num_seqs, 3);
  EXPECT_EQ(p.num_tokens_q, 100);
  EXPECT_EQ(p.num_tokens_k, 120);
  EXPECT_EQ(p.lse_stride_head, 100);
  expect_error([] { auto a = dense_args(); a.alibi_slopes = make_view(addr(0x700000), Elem::f32, {8}); dense_prefill_params(a); },
               "alibi_slopes", "unified_attention", ErrorCode::unsupported);
  expect_error([] { auto a = dense_args(); a.causal = false; a.window_size = {8, 8}; dense_prefill_params(a); },
               "window_size[1]", "8", ErrorCode::unsupported);
  expect_error([] { auto a = dense_args(); a.v.elem = Elem::f16; dense_prefill_params(a); }, "v", "float16");
  expect_error([] {
    auto a = dense_args();
    a.q.size[2] = a.k.size[2] = a.v.size[2] = a.out.size[2] = 96;
    dense_prefill_params(a);
  }, "head_size_qk", "96", ErrorCode::unsupported);
}

}  // namespace
