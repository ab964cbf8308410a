// bindings/c/c_api.cu: the implementation of include/hipattn/c_api.h, the library hipattn_c.
//
// Each function reads the caller's C structs (struct_size rules of c_api.h: read_struct), checks every
// enumeration and boolean a C caller could have filled with any integer, translates them into the C++
// params and options (problem/*_params.hpp, dispatch/*_plan.hpp), and calls validate / the planners'
// workspace sizes / the instance library's entry points (dispatch/prebuilt.hpp; the merge is compiled
// here, dispatch/merge_attention_states.hpp) inside `guarded`, which maps hipattn::Error's code to a
// status and copies its message into the caller's buffer. The file is compiled by the backend's device
// compiler (the merge kernels); every symbol but c_api.h's functions has hidden visibility.
#include "hipattn/c_api.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <string>

#include "hipattn/dispatch/device.hpp"
#include "hipattn/dispatch/merge_attention_states.hpp"
#include "hipattn/dispatch/mla_decode_plan.hpp"
#include "hipattn/dispatch/paged_decode_plan.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/runtime.hpp"
#include "hipattn/problem/dense_prefill_rules.hpp"
#include "hipattn/problem/merge_rules.hpp"
#include "hipattn/problem/mla_decode_rules.hpp"
#include "hipattn/problem/paged_decode_rules.hpp"
#include "hipattn/problem/unified_builder.hpp"
#include "hipattn/problem/unified_rules.hpp"

#ifndef HIPATTN_VERSION_STRING
#error "HIPATTN_VERSION_STRING (the project's version) is set by bindings/c/CMakeLists.txt"
#endif

namespace {
using namespace hipattn;

// ---- the enumerations' fixed values are the C++ ones ----------------------------------------------
static_assert(HIPATTN_DTYPE_F16 == int(DType::f16) && HIPATTN_DTYPE_BF16 == int(DType::bf16) &&
              HIPATTN_DTYPE_F32 == int(DType::f32) && HIPATTN_DTYPE_FP8_E4M3FN == int(DType::fp8_e4m3fn) &&
              HIPATTN_DTYPE_FP8_E4M3FNUZ == int(DType::fp8_e4m3fnuz));
static_assert(HIPATTN_KV_SCALE_NONE == int(KvScaleMode::none) && HIPATTN_KV_SCALE_PER_TENSOR == int(KvScaleMode::per_tensor) &&
              HIPATTN_KV_SCALE_PER_TOKEN_HEAD == int(KvScaleMode::per_token_head));
static_assert(HIPATTN_FP8_MATH_FP8_QK == int(Fp8Math::fp8_qk) && HIPATTN_FP8_MATH_FP8_PV == int(Fp8Math::fp8_pv) &&
              HIPATTN_FP8_MATH_CONVERT == int(Fp8Math::convert));
static_assert(HIPATTN_KV_LAYOUT_NHD == int(KvLayout::nhd) && HIPATTN_KV_LAYOUT_HND == int(KvLayout::hnd));
static_assert(HIPATTN_KV_CACHE_ROWS == int(KvCacheLayout::rows) && HIPATTN_KV_CACHE_ROCM == int(KvCacheLayout::rocm));
static_assert(HIPATTN_UNIFIED_PATH_TWO_D == int(UnifiedPath::two_d) && HIPATTN_UNIFIED_PATH_THREE_D == int(UnifiedPath::three_d));
static_assert(HIPATTN_UNIFIED_SPLIT_UNIFORM == int(UnifiedSplit::uniform) && HIPATTN_UNIFIED_SPLIT_PLANNED == int(UnifiedSplit::planned));
static_assert(HIPATTN_UNIFIED_PIPELINE_SKELETON == int(UnifiedPipeline::skeleton) &&
              HIPATTN_UNIFIED_PIPELINE_WARPGROUP == int(UnifiedPipeline::warpgroup) &&
              HIPATTN_UNIFIED_PIPELINE_PINGPONG == int(UnifiedPipeline::pingpong));
static_assert(HIPATTN_PAGED_DECODE_SPLIT_ONE_PARTITION == int(PagedDecodeSplit::one_partition) &&
              HIPATTN_PAGED_DECODE_SPLIT_PLANNED == int(PagedDecodeSplit::planned) &&
              HIPATTN_PAGED_DECODE_SPLIT_UNIFORM == int(PagedDecodeSplit::uniform));
static_assert(HIPATTN_MLA_DECODE_SPLIT_ONE_PARTITION == int(MlaDecodeSplit::one_partition) &&
              HIPATTN_MLA_DECODE_SPLIT_PLANNED == int(MlaDecodeSplit::planned));
static_assert(HIPATTN_DEVICE_TARGET_GFX942 == int(Target::gfx942) && HIPATTN_DEVICE_TARGET_GFX950 == int(Target::gfx950) &&
              HIPATTN_DEVICE_TARGET_SM90 == int(Target::sm90));

// ---- struct sizes -------------------------------------------------------------------------------
// The first version's size of each struct (HIPATTN_C_API_VERSION 1): the end of its last field. A
// later version appends fields after sizeof of the last one and keeps these lines as they are.
template <class T>
constexpr size_t kFirstSize = 0;
#define HIPATTN_C_FIRST_SIZE(T, last) \
  template <>                         \
  constexpr size_t kFirstSize<T> = offsetof(T, last) + sizeof(T::last);
HIPATTN_C_FIRST_SIZE(hipattn_device_t, multiprocessor_count)
HIPATTN_C_FIRST_SIZE(hipattn_unified_params_t, lse_stride_head)
HIPATTN_C_FIRST_SIZE(hipattn_unified_options_t, pipeline)
HIPATTN_C_FIRST_SIZE(hipattn_paged_decode_params_t, lse_stride_head)
HIPATTN_C_FIRST_SIZE(hipattn_paged_decode_traits_t, max_seqlen_k)
HIPATTN_C_FIRST_SIZE(hipattn_paged_decode_options_t, batch_invariant_keys)
HIPATTN_C_FIRST_SIZE(hipattn_mla_decode_params_t, lse_stride_head)
HIPATTN_C_FIRST_SIZE(hipattn_mla_decode_traits_t, max_seqlen_k)
HIPATTN_C_FIRST_SIZE(hipattn_mla_decode_options_t, workgroup_budget)
HIPATTN_C_FIRST_SIZE(hipattn_dense_prefill_params_t, lse_stride_head)
HIPATTN_C_FIRST_SIZE(hipattn_merge_params_t, lse_stride_head)
#undef HIPATTN_C_FIRST_SIZE

// ---- checks of values a C caller may fill with any integer ----------------------------------------

struct Named {
  int32_t value;
  const char* name;
};

// `v` one of `allowed`, else "field (v) is not one of a (0), b (1), ..." (invalid_argument).
bool enum_ok(ValidationReport& r, const std::string& field, int32_t v, std::initializer_list<Named> allowed) {
  std::string list;
  for (const Named& a : allowed) {
    if (a.value == v) return true;
    list += (list.empty() ? "" : ", ") + std::string(a.name) + " (" + std::to_string(a.value) + ")";
  }
  r.invalid(field, field + " (" + std::to_string(v) + ") is not one of " + list);
  return false;
}

// The C++ enumerator of `v` when it is one of `allowed`, else E{} with the issue recorded.
template <class E>
E enum_of(ValidationReport& r, const std::string& field, int32_t v, std::initializer_list<Named> allowed) {
  return enum_ok(r, field, v, allowed) ? static_cast<E>(v) : E{};
}

DType dtype_of(ValidationReport& r, const std::string& field, int32_t v) {
  return enum_of<DType>(r, field, v,
                        {{HIPATTN_DTYPE_F16, "fp16"}, {HIPATTN_DTYPE_BF16, "bf16"}, {HIPATTN_DTYPE_F32, "fp32"},
                         {HIPATTN_DTYPE_FP8_E4M3FN, "fp8_e4m3fn"}, {HIPATTN_DTYPE_FP8_E4M3FNUZ, "fp8_e4m3fnuz"}});
}

bool bool_of(ValidationReport& r, const std::string& field, int32_t v) {
  if (v != 0 && v != 1) r.invalid(field, field + " (" + std::to_string(v) + ") must be 0 or 1");
  return v == 1;
}

Fp8Math fp8_math_of(ValidationReport& r, int32_t v) {
  return enum_of<Fp8Math>(r, "fp8_math", v,
                          {{HIPATTN_FP8_MATH_FP8_QK, "fp8_qk"}, {HIPATTN_FP8_MATH_FP8_PV, "fp8_pv"},
                           {HIPATTN_FP8_MATH_CONVERT, "convert"}});
}

KvScaleMode kv_scale_mode_of(ValidationReport& r, int32_t v) {
  return enum_of<KvScaleMode>(r, "kv_scale_mode", v,
                              {{HIPATTN_KV_SCALE_NONE, "none"}, {HIPATTN_KV_SCALE_PER_TENSOR, "per_tensor"},
                               {HIPATTN_KV_SCALE_PER_TOKEN_HEAD, "per_token_head"}});
}

// ---- nested structs --------------------------------------------------------------------------------

TensorScale tensor_scale_of(const hipattn_tensor_scale_t& c) { return TensorScale{c.device, c.host}; }
hipattn_tensor_scale_t c_tensor_scale(const TensorScale& s) { return hipattn_tensor_scale_t{s.device, s.host}; }

OutputFormat out_format_of(ValidationReport& r, const hipattn_output_format_t& c) {
  OutputFormat f;
  if (c.dtype != HIPATTN_DTYPE_UNSET &&
      enum_ok(r, "out_format.dtype", c.dtype,
              {{HIPATTN_DTYPE_UNSET, "unset"}, {HIPATTN_DTYPE_F16, "fp16"}, {HIPATTN_DTYPE_BF16, "bf16"},
               {HIPATTN_DTYPE_F32, "fp32"}, {HIPATTN_DTYPE_FP8_E4M3FN, "fp8_e4m3fn"},
               {HIPATTN_DTYPE_FP8_E4M3FNUZ, "fp8_e4m3fnuz"}}))
    f.dtype = static_cast<DType>(c.dtype);
  f.scale = tensor_scale_of(c.scale);
  f.group_size = c.group_size;
  f.group_scale = c.group_scale;
  f.group_scale_stride_token = c.group_scale_stride_token;
  f.group_scale_stride_group = c.group_scale_stride_group;
  f.group_ue8m0 = bool_of(r, "out_format.group_ue8m0", c.group_ue8m0);
  f.group_fp8_max = c.group_fp8_max;
  return f;
}
hipattn_output_format_t c_out_format(const OutputFormat& f) {
  hipattn_output_format_t c;
  std::memset(&c, 0, sizeof c);
  c.dtype = f.dtype ? int32_t(*f.dtype) : HIPATTN_DTYPE_UNSET;
  c.scale = c_tensor_scale(f.scale);
  c.group_size = f.group_size;
  c.group_scale = f.group_scale;
  c.group_scale_stride_token = f.group_scale_stride_token;
  c.group_scale_stride_group = f.group_scale_stride_group;
  c.group_ue8m0 = f.group_ue8m0 ? 1 : 0;
  c.group_fp8_max = f.group_fp8_max;
  return c;
}

// ---- the translations, C -> C++ (to_cpp) and C++ -> C (to_c) ---------------------------------------
// Fields of the same type and name in both are listed once (X-macros); the others are written out.

#define HIPATTN_C_COPY_IN(f) cpp.f = c.f;
#define HIPATTN_C_COPY_OUT(f) c.f = cpp.f;

#define HIPATTN_C_UNIFIED_FIELDS(X)                                                                                  \
  X(q) X(q_stride_token) X(q_stride_head) X(k_cache) X(v_cache) X(k_stride_block) X(k_stride_slot) X(k_stride_head) \
  X(v_stride_block) X(v_stride_slot) X(v_stride_head) X(num_blocks) X(block_size) X(k_scale) X(v_scale)             \
  X(scale_stride_block) X(scale_stride_slot) X(scale_stride_head) X(block_table) X(block_table_stride)              \
  X(max_blocks_per_seq) X(cu_seqlens_q) X(seq_lens_k) X(num_seqs) X(num_tokens) X(max_seqlen_q) X(max_seqlen_k)    \
  X(num_q_heads) X(num_kv_heads) X(head_size) X(scale) X(window_left) X(softcap) X(sinks) X(alibi_slopes)          \
  X(qq_bias) X(qq_bias_stride) X(out) X(o_stride_token) X(o_stride_head) X(lse) X(lse_stride_head)

UnifiedAttentionParams to_cpp(const hipattn_unified_params_t& c) {
  UnifiedAttentionParams cpp;
  ValidationReport r;
  HIPATTN_C_UNIFIED_FIELDS(HIPATTN_C_COPY_IN)
  cpp.q_dtype = dtype_of(r, "q_dtype", c.q_dtype);
  cpp.q_scale = tensor_scale_of(c.q_scale);
  cpp.fp8_math = fp8_math_of(r, c.fp8_math);
  cpp.kv_dtype = dtype_of(r, "kv_dtype", c.kv_dtype);
  cpp.kv_scale_mode = kv_scale_mode_of(r, c.kv_scale_mode);
  cpp.causal = bool_of(r, "causal", c.causal);
  cpp.out_format = out_format_of(r, c.out_format);
  throw_if_error(r);
  return cpp;
}
hipattn_unified_params_t to_c(const UnifiedAttentionParams& cpp) {
  hipattn_unified_params_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  HIPATTN_C_UNIFIED_FIELDS(HIPATTN_C_COPY_OUT)
  c.q_dtype = int32_t(cpp.q_dtype);
  c.q_scale = c_tensor_scale(cpp.q_scale);
  c.fp8_math = int32_t(cpp.fp8_math);
  c.kv_dtype = int32_t(cpp.kv_dtype);
  c.kv_scale_mode = int32_t(cpp.kv_scale_mode);
  c.causal = cpp.causal ? 1 : 0;
  c.out_format = c_out_format(cpp.out_format);
  return c;
}

#define HIPATTN_C_PAGED_DECODE_FIELDS(X)                                                                           \
  X(q) X(q_stride_token) X(q_stride_head) X(q_len) X(k_cache) X(v_cache) X(k_stride_block) X(k_stride_slot)       \
  X(k_stride_head) X(v_stride_block) X(v_stride_slot) X(v_stride_head) X(k_stride_chunk) X(v_stride_dim)          \
  X(num_blocks) X(block_size) X(k_scale) X(v_scale) X(k_scale_value) X(v_scale_value) X(scale_stride_block)       \
  X(scale_stride_slot) X(scale_stride_head) X(block_table) X(block_table_stride) X(max_blocks_per_seq)            \
  X(seq_lens_k) X(num_seqs) X(max_seqlen_k) X(num_q_heads) X(num_kv_heads) X(head_size) X(scale) X(window_left)  \
  X(softcap) X(sinks) X(alibi_slopes) X(out) X(o_stride_token) X(o_stride_head) X(lse) X(lse_stride_head)

PagedDecodeParams to_cpp(const hipattn_paged_decode_params_t& c) {
  PagedDecodeParams cpp;
  ValidationReport r;
  HIPATTN_C_PAGED_DECODE_FIELDS(HIPATTN_C_COPY_IN)
  cpp.q_dtype = dtype_of(r, "q_dtype", c.q_dtype);
  cpp.q_scale = tensor_scale_of(c.q_scale);
  cpp.fp8_math = fp8_math_of(r, c.fp8_math);
  cpp.kv_dtype = dtype_of(r, "kv_dtype", c.kv_dtype);
  cpp.kv_layout = enum_of<KvCacheLayout>(r, "kv_layout", c.kv_layout,
                                         {{HIPATTN_KV_CACHE_ROWS, "rows"}, {HIPATTN_KV_CACHE_ROCM, "rocm"}});
  cpp.kv_scale_mode = kv_scale_mode_of(r, c.kv_scale_mode);
  cpp.out_format = out_format_of(r, c.out_format);
  throw_if_error(r);
  return cpp;
}
hipattn_paged_decode_params_t to_c(const PagedDecodeParams& cpp) {
  hipattn_paged_decode_params_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  HIPATTN_C_PAGED_DECODE_FIELDS(HIPATTN_C_COPY_OUT)
  c.q_dtype = int32_t(cpp.q_dtype);
  c.q_scale = c_tensor_scale(cpp.q_scale);
  c.fp8_math = int32_t(cpp.fp8_math);
  c.kv_dtype = int32_t(cpp.kv_dtype);
  c.kv_layout = int32_t(cpp.kv_layout);
  c.kv_scale_mode = int32_t(cpp.kv_scale_mode);
  c.out_format = c_out_format(cpp.out_format);
  return c;
}

#define HIPATTN_C_MLA_DECODE_FIELDS(X)                                                                            \
  X(q) X(q_stride_token) X(q_stride_head) X(q_rope) X(q_rope_stride_token) X(q_rope_stride_head) X(q_len)        \
  X(kv_cache) X(kv_stride_page) X(kv_stride_slot) X(num_pages) X(page_size) X(kv_scale) X(kv_scale_value)        \
  X(block_table) X(block_table_stride) X(max_pages_per_seq) X(seq_lens_k) X(batch) X(max_seqlen_k) X(num_heads)  \
  X(scale) X(out) X(o_stride_token) X(o_stride_head) X(lse) X(lse_stride_token) X(lse_stride_head)

MlaDecodeParams to_cpp(const hipattn_mla_decode_params_t& c) {
  MlaDecodeParams cpp;
  ValidationReport r;
  HIPATTN_C_MLA_DECODE_FIELDS(HIPATTN_C_COPY_IN)
  cpp.q_dtype = dtype_of(r, "q_dtype", c.q_dtype);
  cpp.q_scale = tensor_scale_of(c.q_scale);
  cpp.kv_dtype = dtype_of(r, "kv_dtype", c.kv_dtype);
  cpp.out_format = out_format_of(r, c.out_format);
  throw_if_error(r);
  return cpp;
}
hipattn_mla_decode_params_t to_c(const MlaDecodeParams& cpp) {
  hipattn_mla_decode_params_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  HIPATTN_C_MLA_DECODE_FIELDS(HIPATTN_C_COPY_OUT)
  c.q_dtype = int32_t(cpp.q_dtype);
  c.q_scale = c_tensor_scale(cpp.q_scale);
  c.kv_dtype = int32_t(cpp.kv_dtype);
  c.out_format = c_out_format(cpp.out_format);
  return c;
}

#define HIPATTN_C_DENSE_PREFILL_FIELDS(X)                                                                         \
  X(q) X(q_stride_token) X(q_stride_head) X(q_stride_batch) X(k) X(k_stride_token) X(k_stride_head)              \
  X(k_stride_batch) X(v) X(v_stride_token) X(v_stride_head) X(v_stride_batch) X(cu_seqlens_q) X(cu_seqlens_k)    \
  X(num_seqs) X(num_tokens_q) X(num_tokens_k) X(max_seqlen_q) X(max_seqlen_k) X(num_q_heads) X(num_kv_heads)     \
  X(head_size_qk) X(head_size_v) X(scale) X(window_left) X(softcap) X(out) X(o_stride_token) X(o_stride_head)    \
  X(o_stride_batch) X(lse) X(lse_stride_head)

DensePrefillParams to_cpp(const hipattn_dense_prefill_params_t& c) {
  DensePrefillParams cpp;
  ValidationReport r;
  HIPATTN_C_DENSE_PREFILL_FIELDS(HIPATTN_C_COPY_IN)
  cpp.dtype = dtype_of(r, "dtype", c.dtype);
  cpp.causal = bool_of(r, "causal", c.causal);
  throw_if_error(r);
  return cpp;
}
hipattn_dense_prefill_params_t to_c(const DensePrefillParams& cpp) {
  hipattn_dense_prefill_params_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  HIPATTN_C_DENSE_PREFILL_FIELDS(HIPATTN_C_COPY_OUT)
  c.dtype = int32_t(cpp.dtype);
  c.causal = cpp.causal ? 1 : 0;
  return c;
}

#define HIPATTN_C_MERGE_FIELDS(X)                                                                                  \
  X(partial_out) X(po_stride_rank) X(po_stride_token) X(po_stride_head) X(partial_lse) X(plse_stride_rank)        \
  X(plse_stride_token) X(plse_stride_head) X(num_ranks) X(num_tokens) X(num_heads) X(head_size) X(out)            \
  X(o_stride_token) X(o_stride_head) X(lse) X(lse_stride_token) X(lse_stride_head)

MergeAttentionStatesParams to_cpp(const hipattn_merge_params_t& c) {
  MergeAttentionStatesParams cpp;
  ValidationReport r;
  HIPATTN_C_MERGE_FIELDS(HIPATTN_C_COPY_IN)
  cpp.partial_dtype = dtype_of(r, "partial_dtype", c.partial_dtype);
  cpp.out_dtype = dtype_of(r, "out_dtype", c.out_dtype);
  throw_if_error(r);
  return cpp;
}
hipattn_merge_params_t to_c(const MergeAttentionStatesParams& cpp) {
  hipattn_merge_params_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  HIPATTN_C_MERGE_FIELDS(HIPATTN_C_COPY_OUT)
  c.partial_dtype = int32_t(cpp.partial_dtype);
  c.out_dtype = int32_t(cpp.out_dtype);
  return c;
}

#define HIPATTN_C_PAGED_DECODE_TRAITS_FIELDS(X) \
  X(max_num_seqs) X(max_q_len) X(num_q_heads) X(num_kv_heads) X(max_head_size) X(max_seqlen_k)
PagedDecodeTraits to_cpp(const hipattn_paged_decode_traits_t& c) {
  PagedDecodeTraits cpp;
  HIPATTN_C_PAGED_DECODE_TRAITS_FIELDS(HIPATTN_C_COPY_IN)
  return cpp;
}
hipattn_paged_decode_traits_t to_c(const PagedDecodeTraits& cpp) {
  hipattn_paged_decode_traits_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  HIPATTN_C_PAGED_DECODE_TRAITS_FIELDS(HIPATTN_C_COPY_OUT)
  return c;
}

#define HIPATTN_C_MLA_DECODE_TRAITS_FIELDS(X) X(max_batch) X(max_q_len) X(num_heads) X(max_seqlen_k)
MlaDecodeTraits to_cpp(const hipattn_mla_decode_traits_t& c) {
  MlaDecodeTraits cpp;
  HIPATTN_C_MLA_DECODE_TRAITS_FIELDS(HIPATTN_C_COPY_IN)
  return cpp;
}
hipattn_mla_decode_traits_t to_c(const MlaDecodeTraits& cpp) {
  hipattn_mla_decode_traits_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  HIPATTN_C_MLA_DECODE_TRAITS_FIELDS(HIPATTN_C_COPY_OUT)
  return c;
}

UnifiedOptions to_cpp(const hipattn_unified_options_t& c) {
  UnifiedOptions cpp;
  ValidationReport r;
  cpp.path = enum_of<UnifiedPath>(r, "options.path", c.path,
                                  {{HIPATTN_UNIFIED_PATH_AUTOMATIC, "automatic"}, {HIPATTN_UNIFIED_PATH_TWO_D, "two_d"},
                                   {HIPATTN_UNIFIED_PATH_THREE_D, "three_d"}});
  cpp.num_segments = c.num_segments;
  cpp.split = enum_of<UnifiedSplit>(r, "options.split", c.split,
                                    {{HIPATTN_UNIFIED_SPLIT_AUTOMATIC, "automatic"}, {HIPATTN_UNIFIED_SPLIT_UNIFORM, "uniform"},
                                     {HIPATTN_UNIFIED_SPLIT_PLANNED, "planned"}});
  cpp.pipeline = enum_of<UnifiedPipeline>(
      r, "options.pipeline", c.pipeline,
      {{HIPATTN_UNIFIED_PIPELINE_AUTOMATIC, "automatic"}, {HIPATTN_UNIFIED_PIPELINE_SKELETON, "skeleton"},
       {HIPATTN_UNIFIED_PIPELINE_WARPGROUP, "warpgroup"}, {HIPATTN_UNIFIED_PIPELINE_PINGPONG, "pingpong"}});
  throw_if_error(r);
  return cpp;
}
hipattn_unified_options_t to_c(const UnifiedOptions& cpp) {
  hipattn_unified_options_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.path = int32_t(cpp.path);
  c.num_segments = cpp.num_segments;
  c.split = int32_t(cpp.split);
  c.pipeline = int32_t(cpp.pipeline);
  return c;
}

PagedDecodeOptions to_cpp(const hipattn_paged_decode_options_t& c) {
  PagedDecodeOptions cpp;
  ValidationReport r;
  cpp.split = enum_of<PagedDecodeSplit>(
      r, "options.split", c.split,
      {{HIPATTN_PAGED_DECODE_SPLIT_AUTOMATIC, "automatic"}, {HIPATTN_PAGED_DECODE_SPLIT_ONE_PARTITION, "one_partition"},
       {HIPATTN_PAGED_DECODE_SPLIT_PLANNED, "planned"}, {HIPATTN_PAGED_DECODE_SPLIT_UNIFORM, "uniform"}});
  cpp.num_segments = c.num_segments;
  cpp.workgroup_budget = c.workgroup_budget;
  cpp.batch_invariant_keys = c.batch_invariant_keys;
  throw_if_error(r);
  return cpp;
}
hipattn_paged_decode_options_t to_c(const PagedDecodeOptions& cpp) {
  hipattn_paged_decode_options_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.split = int32_t(cpp.split);
  c.num_segments = cpp.num_segments;
  c.workgroup_budget = cpp.workgroup_budget;
  c.batch_invariant_keys = cpp.batch_invariant_keys;
  return c;
}

MlaDecodeOptions to_cpp(const hipattn_mla_decode_options_t& c) {
  MlaDecodeOptions cpp;
  ValidationReport r;
  cpp.split = enum_of<MlaDecodeSplit>(r, "options.split", c.split,
                                      {{HIPATTN_MLA_DECODE_SPLIT_AUTOMATIC, "automatic"},
                                       {HIPATTN_MLA_DECODE_SPLIT_ONE_PARTITION, "one_partition"},
                                       {HIPATTN_MLA_DECODE_SPLIT_PLANNED, "planned"}});
  cpp.workgroup_budget = c.workgroup_budget;
  throw_if_error(r);
  return cpp;
}
hipattn_mla_decode_options_t to_c(const MlaDecodeOptions& cpp) {
  hipattn_mla_decode_options_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.split = int32_t(cpp.split);
  c.workgroup_budget = cpp.workgroup_budget;
  return c;
}

PlanDevice to_cpp(const hipattn_device_t& c) {
  ValidationReport r;
  PlanDevice d;
  d.target = enum_of<Target>(r, "device.target", c.target,
                             {{HIPATTN_DEVICE_TARGET_GFX942, "gfx942"}, {HIPATTN_DEVICE_TARGET_GFX950, "gfx950"},
                              {HIPATTN_DEVICE_TARGET_SM90, "sm_90"}});
  d.multiprocessor_count = c.multiprocessor_count;
  if (c.multiprocessor_count < 1)
    r.invalid("device.multiprocessor_count",
              "device.multiprocessor_count (" + std::to_string(c.multiprocessor_count) + ") must be >= 1");
  throw_if_error(r);
  return d;
}
hipattn_device_t to_c(const PlanDevice& cpp) {
  hipattn_device_t c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.target = int32_t(cpp.target);
  c.multiprocessor_count = cpp.multiprocessor_count;
  return c;
}

// The C struct of every default: the C++ struct's defaults, translated.
template <class C>
C defaults();
template <> hipattn_device_t defaults<hipattn_device_t>() { return to_c(PlanDevice{}); }
template <> hipattn_unified_params_t defaults<hipattn_unified_params_t>() { return to_c(UnifiedAttentionParams{}); }
template <> hipattn_unified_options_t defaults<hipattn_unified_options_t>() { return to_c(UnifiedOptions{}); }
template <> hipattn_paged_decode_params_t defaults<hipattn_paged_decode_params_t>() { return to_c(PagedDecodeParams{}); }
template <> hipattn_paged_decode_traits_t defaults<hipattn_paged_decode_traits_t>() { return to_c(PagedDecodeTraits{}); }
template <> hipattn_paged_decode_options_t defaults<hipattn_paged_decode_options_t>() { return to_c(PagedDecodeOptions{}); }
template <> hipattn_mla_decode_params_t defaults<hipattn_mla_decode_params_t>() { return to_c(MlaDecodeParams{}); }
template <> hipattn_mla_decode_traits_t defaults<hipattn_mla_decode_traits_t>() { return to_c(MlaDecodeTraits{}); }
template <> hipattn_mla_decode_options_t defaults<hipattn_mla_decode_options_t>() { return to_c(MlaDecodeOptions{}); }
template <> hipattn_dense_prefill_params_t defaults<hipattn_dense_prefill_params_t>() { return to_c(DensePrefillParams{}); }
template <> hipattn_merge_params_t defaults<hipattn_merge_params_t>() { return to_c(MergeAttentionStatesParams{}); }

// ---- reading and writing the caller's structs (c_api.h's struct_size rules) ------------------------

// The caller's struct: the bytes its struct_size covers over the defaults. `prefix` names the struct
// in messages ("" for the params, "options.", "traits.", "device.").
template <class C>
C read_struct(const C* in, const std::string& prefix, const char* what) {
  if (in == nullptr) throw Error(ErrorCode::invalid_argument, what, std::string(what) + " is a null pointer");
  const size_t size = in->struct_size;
  const std::string field = prefix + "struct_size";
  if (size < kFirstSize<C>)
    throw Error(ErrorCode::invalid_argument, field,
                field + " (" + std::to_string(size) + ") is below the first version's size (" +
                    std::to_string(kFirstSize<C>) + " bytes): set it with the struct's init function");
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(in);
  for (size_t i = sizeof(C); i < size; ++i)
    if (bytes[i] != 0)
      throw Error(ErrorCode::unsupported, field,
                  field + " (" + std::to_string(size) + ") is beyond this library's " + std::to_string(sizeof(C)) +
                      " bytes (C API version " + std::to_string(HIPATTN_C_API_VERSION) + ") and byte " +
                      std::to_string(i) + " is not zero: a field this library does not know is set");
  C c = defaults<C>();
  std::memcpy(&c, in, size < sizeof(C) ? size : sizeof(C));
  c.struct_size = sizeof(C);
  return c;
}

// Writes `c` back over the caller's struct, within its struct_size (which is kept).
template <class C>
void write_struct(C* out, C c) {
  const size_t size = out->struct_size;
  c.struct_size = size;
  std::memcpy(out, &c, size < sizeof(C) ? size : sizeof(C));
}

template <class C>
hipattn_status_t init_struct(C* s, size_t struct_size) {
  if (s == nullptr || struct_size < kFirstSize<C>) return HIPATTN_STATUS_INVALID_ARGUMENT;
  std::memset(s, 0, struct_size);
  C c = defaults<C>();
  c.struct_size = struct_size;
  std::memcpy(s, &c, struct_size < sizeof(C) ? struct_size : sizeof(C));
  return HIPATTN_STATUS_OK;
}

// ---- errors -----------------------------------------------------------------------------------------

void write_message(char* msg, size_t capacity, const char* text) {
  if (msg == nullptr || capacity == 0) return;
  size_t n = std::strlen(text);
  if (n > capacity - 1) n = capacity - 1;
  std::memcpy(msg, text, n);
  msg[n] = '\0';
}

hipattn_status_t status_of(ErrorCode c) {
  switch (c) {
    case ErrorCode::invalid_argument: return HIPATTN_STATUS_INVALID_ARGUMENT;
    case ErrorCode::unsupported: return HIPATTN_STATUS_UNSUPPORTED;
    case ErrorCode::runtime: return HIPATTN_STATUS_RUNTIME;
    case ErrorCode::workspace: return HIPATTN_STATUS_WORKSPACE;
  }
  return HIPATTN_STATUS_INTERNAL;
}

// Runs `f`, mapping what it throws to a status and its message to the caller's buffer.
template <class F>
hipattn_status_t guarded(char* msg, size_t capacity, F&& f) noexcept {
  try {
    f();
    write_message(msg, capacity, "");
    return HIPATTN_STATUS_OK;
  } catch (const Error& e) {
    write_message(msg, capacity, e.what());
    return status_of(e.code());
  } catch (const std::exception& e) {
    if (msg != nullptr && capacity > 0) std::snprintf(msg, capacity, "hipattn: internal: %s", e.what());
    return HIPATTN_STATUS_INTERNAL;
  } catch (...) {
    write_message(msg, capacity, "hipattn: internal: an unknown exception");
    return HIPATTN_STATUS_INTERNAL;
  }
}

template <class C>
auto read_params(const C* p) {
  return to_cpp(read_struct(p, "", "params"));
}
// Options: the defaults when null.
template <class C>
auto read_options(const C* o) {
  return o == nullptr ? to_cpp(defaults<C>()) : to_cpp(read_struct(o, "options.", "options"));
}
// The device a plan is made for: the described one, or the current device when null.
PlanDevice read_device(const hipattn_device_t* d) {
  return d == nullptr ? plan_device(rt::cached_device_properties()) : to_cpp(read_struct(d, "device.", "device"));
}
size_t& out_bytes(size_t* bytes) {
  if (bytes == nullptr) throw Error(ErrorCode::invalid_argument, "bytes", "bytes is a null pointer");
  *bytes = 0;
  return *bytes;
}
rt::stream_t stream_of(void* s) { return reinterpret_cast<rt::stream_t>(s); }

}  // namespace

// ---- c_api.h ----------------------------------------------------------------------------------------

using namespace hipattn;

extern "C" {

int32_t hipattn_c_api_version(void) { return HIPATTN_C_API_VERSION; }
const char* hipattn_version_string(void) { return HIPATTN_VERSION_STRING; }

const char* hipattn_status_name(hipattn_status_t status) {
  switch (status) {
    case HIPATTN_STATUS_OK: return "ok";
    case HIPATTN_STATUS_INVALID_ARGUMENT: return "invalid_argument";
    case HIPATTN_STATUS_UNSUPPORTED: return "unsupported";
    case HIPATTN_STATUS_RUNTIME: return "runtime";
    case HIPATTN_STATUS_WORKSPACE: return "workspace";
    case HIPATTN_STATUS_INTERNAL: return "internal";
    default: return "unknown";
  }
}

hipattn_status_t hipattn_device_init(hipattn_device_t* s, size_t n) { return init_struct(s, n); }
hipattn_status_t hipattn_unified_params_init(hipattn_unified_params_t* s, size_t n) { return init_struct(s, n); }
hipattn_status_t hipattn_unified_options_init(hipattn_unified_options_t* s, size_t n) { return init_struct(s, n); }
hipattn_status_t hipattn_paged_decode_params_init(hipattn_paged_decode_params_t* s, size_t n) { return init_struct(s, n); }
hipattn_status_t hipattn_paged_decode_traits_init(hipattn_paged_decode_traits_t* s, size_t n) { return init_struct(s, n); }
hipattn_status_t hipattn_paged_decode_options_init(hipattn_paged_decode_options_t* s, size_t n) { return init_struct(s, n); }
hipattn_status_t hipattn_mla_decode_params_init(hipattn_mla_decode_params_t* s, size_t n) { return init_struct(s, n); }
hipattn_status_t hipattn_mla_decode_traits_init(hipattn_mla_decode_traits_t* s, size_t n) { return init_struct(s, n); }
hipattn_status_t hipattn_mla_decode_options_init(hipattn_mla_decode_options_t* s, size_t n) { return init_struct(s, n); }
hipattn_status_t hipattn_dense_prefill_params_init(hipattn_dense_prefill_params_t* s, size_t n) { return init_struct(s, n); }
hipattn_status_t hipattn_merge_params_init(hipattn_merge_params_t* s, size_t n) { return init_struct(s, n); }

hipattn_status_t hipattn_device_count(int32_t* count, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    if (count == nullptr) throw Error(ErrorCode::invalid_argument, "count", "count is a null pointer");
    *count = 0;
    int n = 0;
    const rt::error_t e = rt::get_device_count(&n);
    if (e != rt::success) {
      (void)rt::get_last_error();  // the failed query is not an error of a later call
      throw Error(ErrorCode::runtime, "device_count", rt::error_string(e));
    }
    if (n == 0) throw Error(ErrorCode::runtime, "device_count", "the runtime sees no GPU");
    *count = n;
  });
}

hipattn_status_t hipattn_current_device(hipattn_device_t* device, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    read_struct(device, "device.", "device");
    write_struct(device, to_c(plan_device(checked_device())));
  });
}

hipattn_status_t hipattn_unified_params_set_contiguous(hipattn_unified_params_t* p, hipattn_kv_layout_t layout,
                                                       char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    UnifiedAttentionParams cpp = read_params(p);
    ValidationReport r;
    const KvLayout l = enum_of<KvLayout>(r, "layout", layout, {{HIPATTN_KV_LAYOUT_NHD, "nhd"}, {HIPATTN_KV_LAYOUT_HND, "hnd"}});
    throw_if_error(r);
    const UnifiedAttentionParams b = make_unified_params(UnifiedShape{
        .num_seqs = cpp.num_seqs, .num_tokens = cpp.num_tokens, .max_seqlen_q = cpp.max_seqlen_q,
        .max_seqlen_k = cpp.max_seqlen_k, .num_q_heads = cpp.num_q_heads, .num_kv_heads = cpp.num_kv_heads,
        .head_size = cpp.head_size, .num_blocks = cpp.num_blocks, .block_size = cpp.block_size,
        .max_blocks_per_seq = cpp.max_blocks_per_seq, .layout = l, .q_dtype = cpp.q_dtype, .kv_dtype = cpp.kv_dtype,
        .kv_scale_mode = cpp.kv_scale_mode, .qq_bias_stride = cpp.qq_bias_stride});
    cpp.q_stride_token = b.q_stride_token, cpp.q_stride_head = b.q_stride_head;
    set_cache_strides(cpp, CacheStrides{b.k_stride_block, b.k_stride_slot, b.k_stride_head});
    cpp.scale_stride_block = b.scale_stride_block, cpp.scale_stride_slot = b.scale_stride_slot;
    cpp.scale_stride_head = b.scale_stride_head;
    cpp.max_blocks_per_seq = b.max_blocks_per_seq, cpp.block_table_stride = b.block_table_stride;
    cpp.scale = b.scale;
    cpp.o_stride_token = b.o_stride_token, cpp.o_stride_head = b.o_stride_head;
    cpp.lse_stride_head = b.lse_stride_head;
    write_struct(p, to_c(cpp));
  });
}

hipattn_status_t hipattn_paged_decode_params_set_contiguous(hipattn_paged_decode_params_t* p,
                                                            hipattn_kv_layout_t layout, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    PagedDecodeParams cpp = read_params(p);
    ValidationReport r;
    const KvLayout l = enum_of<KvLayout>(r, "layout", layout, {{HIPATTN_KV_LAYOUT_NHD, "nhd"}, {HIPATTN_KV_LAYOUT_HND, "hnd"}});
    throw_if_error(r);
    PagedDecodeParams b = paged_decode_params_from_unified(
        make_unified_params(UnifiedShape{
            .num_seqs = cpp.num_seqs, .num_tokens = cpp.num_tokens(), .max_seqlen_q = cpp.q_len,
            .max_seqlen_k = cpp.max_seqlen_k, .num_q_heads = cpp.num_q_heads, .num_kv_heads = cpp.num_kv_heads,
            .head_size = cpp.head_size, .num_blocks = cpp.num_blocks, .block_size = cpp.block_size,
            .max_blocks_per_seq = cpp.max_blocks_per_seq, .layout = l, .q_dtype = cpp.q_dtype,
            .kv_dtype = cpp.kv_dtype, .kv_scale_mode = cpp.kv_scale_mode}),
        cpp.q_len);
    cpp.kv_layout = KvCacheLayout::rows;
    cpp.k_stride_chunk = 0, cpp.v_stride_dim = 0;
    cpp.q_stride_token = b.q_stride_token, cpp.q_stride_head = b.q_stride_head;
    cpp.k_stride_block = b.k_stride_block, cpp.k_stride_slot = b.k_stride_slot, cpp.k_stride_head = b.k_stride_head;
    cpp.v_stride_block = b.v_stride_block, cpp.v_stride_slot = b.v_stride_slot, cpp.v_stride_head = b.v_stride_head;
    cpp.scale_stride_block = b.scale_stride_block, cpp.scale_stride_slot = b.scale_stride_slot;
    cpp.scale_stride_head = b.scale_stride_head;
    cpp.max_blocks_per_seq = b.max_blocks_per_seq, cpp.block_table_stride = b.block_table_stride;
    cpp.scale = b.scale;
    cpp.o_stride_token = b.o_stride_token, cpp.o_stride_head = b.o_stride_head;
    cpp.lse_stride_head = b.lse_stride_head;
    write_struct(p, to_c(cpp));
  });
}

hipattn_status_t hipattn_paged_decode_params_set_packed_rocm(hipattn_paged_decode_params_t* p, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    PagedDecodeParams cpp = read_params(p);
    set_packed_rocm_kv_layout(cpp);
    write_struct(p, to_c(cpp));
  });
}

hipattn_status_t hipattn_unified_validate(const hipattn_unified_params_t* p, char* msg, size_t cap) {
  return guarded(msg, cap, [&] { throw_if_error(validate(read_params(p))); });
}
hipattn_status_t hipattn_paged_decode_validate(const hipattn_paged_decode_params_t* p, char* msg, size_t cap) {
  return guarded(msg, cap, [&] { throw_if_error(validate(read_params(p))); });
}
hipattn_status_t hipattn_mla_decode_validate(const hipattn_mla_decode_params_t* p, char* msg, size_t cap) {
  return guarded(msg, cap, [&] { throw_if_error(validate(read_params(p))); });
}
hipattn_status_t hipattn_dense_prefill_validate(const hipattn_dense_prefill_params_t* p, char* msg, size_t cap) {
  return guarded(msg, cap, [&] { throw_if_error(validate(read_params(p))); });
}
hipattn_status_t hipattn_merge_validate(const hipattn_merge_params_t* p, char* msg, size_t cap) {
  return guarded(msg, cap, [&] { throw_if_error(validate(read_params(p))); });
}

hipattn_status_t hipattn_unified_workspace_size(const hipattn_unified_params_t* p, const hipattn_unified_options_t* o,
                                                const hipattn_device_t* d, size_t* bytes, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    size_t& out = out_bytes(bytes);
    const UnifiedAttentionParams cpp = read_params(p);
    const UnifiedOptions opt = read_options(o);
    throw_if_error(validate(cpp));
    out = plan_unified_attention(cpp, opt, read_device(d)).workspace_bytes;
  });
}
hipattn_status_t hipattn_paged_decode_workspace_size(const hipattn_paged_decode_traits_t* t,
                                                     const hipattn_paged_decode_options_t* o, const hipattn_device_t* d,
                                                     size_t* bytes, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    size_t& out = out_bytes(bytes);
    const PagedDecodeTraits traits = to_cpp(read_struct(t, "traits.", "traits"));
    const PagedDecodeOptions opt = read_options(o);
    out = paged_decode_workspace_size(traits, read_device(d), opt);
  });
}
hipattn_status_t hipattn_mla_decode_workspace_size(const hipattn_mla_decode_traits_t* t,
                                                   const hipattn_mla_decode_options_t* o, const hipattn_device_t* d,
                                                   size_t* bytes, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    size_t& out = out_bytes(bytes);
    const MlaDecodeTraits traits = to_cpp(read_struct(t, "traits.", "traits"));
    const MlaDecodeOptions opt = read_options(o);
    out = mla_decode_workspace_size(traits, read_device(d), opt);
  });
}
hipattn_status_t hipattn_dense_prefill_workspace_size(const hipattn_dense_prefill_params_t* p, size_t* bytes, char* msg,
                                                      size_t cap) {
  return guarded(msg, cap, [&] {
    out_bytes(bytes);
    throw_if_error(validate(read_params(p)));
  });
}
hipattn_status_t hipattn_merge_workspace_size(const hipattn_merge_params_t* p, size_t* bytes, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    out_bytes(bytes);
    throw_if_error(validate(read_params(p)));
  });
}

hipattn_status_t hipattn_unified_attention(const hipattn_unified_params_t* p, const hipattn_unified_options_t* o,
                                           void* ws, size_t ws_bytes, void* stream, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    const UnifiedAttentionParams cpp = read_params(p);
    prebuilt::unified_attention(cpp, ws, ws_bytes, stream_of(stream), read_options(o));
  });
}
hipattn_status_t hipattn_paged_decode(const hipattn_paged_decode_params_t* p, const hipattn_paged_decode_options_t* o,
                                      void* ws, size_t ws_bytes, void* stream, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    const PagedDecodeParams cpp = read_params(p);
    prebuilt::paged_decode(cpp, ws, ws_bytes, stream_of(stream), read_options(o));
  });
}
hipattn_status_t hipattn_mla_decode(const hipattn_mla_decode_params_t* p, const hipattn_mla_decode_options_t* o,
                                    void* ws, size_t ws_bytes, void* stream, char* msg, size_t cap) {
  return guarded(msg, cap, [&] {
    const MlaDecodeParams cpp = read_params(p);
    prebuilt::mla_decode(cpp, ws, ws_bytes, stream_of(stream), read_options(o));
  });
}
hipattn_status_t hipattn_dense_prefill(const hipattn_dense_prefill_params_t* p, void* stream, char* msg, size_t cap) {
  return guarded(msg, cap, [&] { prebuilt::dense_prefill(read_params(p), stream_of(stream)); });
}
hipattn_status_t hipattn_merge_attention_states(const hipattn_merge_params_t* p, void* stream, char* msg, size_t cap) {
  return guarded(msg, cap, [&] { merge_attention_states(read_params(p), stream_of(stream)); });
}

}  // extern "C"
