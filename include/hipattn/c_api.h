/* hipattn/c_api.h: the C API of hipattn (ctypes, Rust, Go and C callers bind to this file).
 *
 * The five host entry points (unified attention, paged decode, MLA decode, the merge of attention
 * states, dense prefill), their workspace queries and their validation, over plain C structs, served
 * by the shared library hipattn_c (bindings/c) over an instance library (dispatch/prebuilt.hpp): a
 * problem outside the instances it was built with fails with HIPATTN_STATUS_UNSUPPORTED naming the
 * instance. Each struct mirrors the C++ params of the same family field by field, under the same
 * names (problem/<family>_params.hpp documents every field); docs/USING.md "The C API" has an example.
 *
 * Structs. Every struct (except the two nested ones, hipattn_tensor_scale_t and
 * hipattn_output_format_t, which never change) starts with `struct_size`. Fill it with its init
 * function, `hipattn_<struct>_init(&s, sizeof s)`: it zeroes the struct, sets every default and sets
 * struct_size, then set the fields you need. The library reads only the bytes struct_size covers:
 *   - a later version of this header only appends fields, after the end of the last version's struct,
 *     and a field's zero is its default, so an older caller's smaller struct keeps working (the fields
 *     beyond it take their defaults);
 *   - a struct_size smaller than the first version's is refused (HIPATTN_STATUS_INVALID_ARGUMENT,
 *     field "struct_size", "options.struct_size", "traits.struct_size" or "device.struct_size");
 *   - a struct_size larger than this library's (a newer header) is accepted when every byte this
 *     library does not know is zero (the newer fields at their defaults), else refused
 *     (HIPATTN_STATUS_UNSUPPORTED): the library never ignores a field it cannot serve.
 * Enumerations are int32_t fields with the fixed values below; the library checks each (a C caller
 * can pass any integer) and refuses a value outside its enumeration naming the field and the value.
 * Boolean fields are int32_t, 0 or 1 (anything else is refused). Pointers are device pointers unless
 * said otherwise; strides are in elements.
 *
 * Errors. Every function that can fail returns a hipattn_status_t (HIPATTN_STATUS_OK is 0) and takes a
 * message buffer (msg, msg_capacity): on failure the library copies hipattn::Error's message into it
 * ("hipattn: invalid_argument: <field>: <what is wrong, with the bad value>"), truncated to
 * msg_capacity - 1 bytes and always NUL-terminated; on success it writes "". A null msg or a capacity 0
 * is allowed (nothing is written).
 *
 * Devices. A workspace size depends on the device the plan is made for: pass a hipattn_device_t (a
 * target and its SM / CU count; hipattn_current_device fills one from the runtime), or null for the
 * current device (which needs a GPU). Validation and described-device workspace queries need no GPU.
 * Streams are hipStream_t / cudaStream_t passed as void* (null: the default stream). A launch never
 * allocates and never synchronizes.
 */
#ifndef HIPATTN_C_API_H
#define HIPATTN_C_API_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define HIPATTN_C_EXPORT __attribute__((visibility("default")))
#else
#define HIPATTN_C_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this API's structs and functions; hipattn_c_api_version() returns the library's. */
#define HIPATTN_C_API_VERSION 1

/* ---- enumerations (fixed values) ---------------------------------------------------------------- */

typedef int32_t hipattn_status_t; /* hipattn::ErrorCode, plus ok and internal */
enum {
  HIPATTN_STATUS_OK = 0,
  HIPATTN_STATUS_INVALID_ARGUMENT = 1, /* a field is inconsistent or out of range */
  HIPATTN_STATUS_UNSUPPORTED = 2,      /* valid, but no instance serves it (head size, dtype, target) */
  HIPATTN_STATUS_RUNTIME = 3,          /* the HIP / CUDA runtime reported a failure */
  HIPATTN_STATUS_WORKSPACE = 4,        /* the workspace is too small or misaligned */
  HIPATTN_STATUS_INTERNAL = 5          /* anything else (out of host memory, a bug) */
};

typedef int32_t hipattn_dtype_t;
enum {
  HIPATTN_DTYPE_UNSET = -1, /* out_format.dtype only: the query dtype */
  HIPATTN_DTYPE_F16 = 0,
  HIPATTN_DTYPE_BF16 = 1,
  HIPATTN_DTYPE_F32 = 2,
  HIPATTN_DTYPE_FP8_E4M3FN = 3,
  HIPATTN_DTYPE_FP8_E4M3FNUZ = 4
};

typedef int32_t hipattn_kv_scale_mode_t; /* how fp8 KV values are scaled (problem/unified_params.hpp) */
enum { HIPATTN_KV_SCALE_NONE = 0, HIPATTN_KV_SCALE_PER_TENSOR = 1, HIPATTN_KV_SCALE_PER_TOKEN_HEAD = 2 };

typedef int32_t hipattn_fp8_math_t; /* fp8 queries over an fp8 cache (problem/fp8_io.hpp) */
enum { HIPATTN_FP8_MATH_FP8_QK = 0, HIPATTN_FP8_MATH_FP8_PV = 1, HIPATTN_FP8_MATH_CONVERT = 2 };

typedef int32_t hipattn_kv_layout_t; /* the dims of one block of a contiguous paged cache */
enum {
  HIPATTN_KV_LAYOUT_NHD = 0, /* [num_blocks, block_size, num_kv_heads, head_size] */
  HIPATTN_KV_LAYOUT_HND = 1  /* [num_blocks, num_kv_heads, block_size, head_size] */
};

typedef int32_t hipattn_kv_cache_layout_t; /* paged decode: rows (NHD / HND by strides) or ROCm's */
enum { HIPATTN_KV_CACHE_ROWS = 0, HIPATTN_KV_CACHE_ROCM = 1 };

typedef int32_t hipattn_unified_path_t;
enum { HIPATTN_UNIFIED_PATH_AUTOMATIC = 0, HIPATTN_UNIFIED_PATH_TWO_D = 1, HIPATTN_UNIFIED_PATH_THREE_D = 2 };
typedef int32_t hipattn_unified_split_t;
enum { HIPATTN_UNIFIED_SPLIT_AUTOMATIC = 0, HIPATTN_UNIFIED_SPLIT_UNIFORM = 1, HIPATTN_UNIFIED_SPLIT_PLANNED = 2 };
typedef int32_t hipattn_unified_pipeline_t;
enum {
  HIPATTN_UNIFIED_PIPELINE_AUTOMATIC = 0,
  HIPATTN_UNIFIED_PIPELINE_SKELETON = 1,
  HIPATTN_UNIFIED_PIPELINE_WARPGROUP = 2,
  HIPATTN_UNIFIED_PIPELINE_PINGPONG = 3
};

typedef int32_t hipattn_paged_decode_split_t;
enum {
  HIPATTN_PAGED_DECODE_SPLIT_AUTOMATIC = 0,
  HIPATTN_PAGED_DECODE_SPLIT_ONE_PARTITION = 1,
  HIPATTN_PAGED_DECODE_SPLIT_PLANNED = 2,
  HIPATTN_PAGED_DECODE_SPLIT_UNIFORM = 3
};

typedef int32_t hipattn_mla_decode_split_t;
enum {
  HIPATTN_MLA_DECODE_SPLIT_AUTOMATIC = 0,
  HIPATTN_MLA_DECODE_SPLIT_ONE_PARTITION = 1,
  HIPATTN_MLA_DECODE_SPLIT_PLANNED = 2
};

typedef int32_t hipattn_target_t; /* platform/target.hpp's values */
enum { HIPATTN_DEVICE_TARGET_GFX942 = 1, HIPATTN_DEVICE_TARGET_GFX950 = 2, HIPATTN_DEVICE_TARGET_SM90 = 3 };

/* ---- nested structs (fixed: they never grow) ---------------------------------------------------- */

/* A per-tensor scale: *device when device is not null, else host (0: unset, the scale 1 where used). */
typedef struct hipattn_tensor_scale {
  const float* device;
  float host;
} hipattn_tensor_scale_t;

/* What the epilogue writes (problem/fp8_io.hpp OutputFormat): dtype HIPATTN_DTYPE_UNSET is the query
 * dtype; an fp8 output takes one per-tensor scale, or a scale per group of group_size columns. */
typedef struct hipattn_output_format {
  hipattn_dtype_t dtype;
  hipattn_tensor_scale_t scale;
  int32_t group_size;
  float* group_scale;
  int64_t group_scale_stride_token;
  int64_t group_scale_stride_group;
  int32_t group_ue8m0; /* bool */
  float group_fp8_max;
} hipattn_output_format_t;

/* ---- the device a plan is made for -------------------------------------------------------------- */

/* Defaults: target SM90, multiprocessor_count 132 (hipattn::PlanDevice's). */
typedef struct hipattn_device {
  size_t struct_size;
  hipattn_target_t target;
  int32_t multiprocessor_count; /* CUs on AMD, SMs on NVIDIA; >= 1 */
} hipattn_device_t;

/* ---- unified attention (problem/unified_params.hpp) ---------------------------------------------- */

/* Defaults: every pointer null, every count and stride 0, q_dtype and kv_dtype F16, fp8_math FP8_QK,
 * kv_scale_mode NONE, scale 0 (refused: set it), causal 1, window_left -1, softcap 0,
 * out_format.dtype UNSET, the other scale fields 0. */
typedef struct hipattn_unified_params {
  size_t struct_size;
  const void* q; /* [num_tokens, num_q_heads, head_size] */
  hipattn_dtype_t q_dtype;
  int64_t q_stride_token, q_stride_head;
  hipattn_tensor_scale_t q_scale;
  hipattn_fp8_math_t fp8_math;
  const void* k_cache;
  const void* v_cache;
  hipattn_dtype_t kv_dtype;
  int64_t k_stride_block, k_stride_slot, k_stride_head;
  int64_t v_stride_block, v_stride_slot, v_stride_head;
  int32_t num_blocks;
  int32_t block_size;
  hipattn_kv_scale_mode_t kv_scale_mode;
  const float* k_scale;
  const float* v_scale;
  int64_t scale_stride_block, scale_stride_slot, scale_stride_head;
  const int32_t* block_table; /* [num_seqs, block_table_stride] */
  int64_t block_table_stride;
  int32_t max_blocks_per_seq;
  const int32_t* cu_seqlens_q; /* [num_seqs + 1] */
  const int32_t* seq_lens_k;   /* [num_seqs] */
  int32_t num_seqs;
  int32_t num_tokens;
  int32_t max_seqlen_q;
  int32_t max_seqlen_k;
  int32_t num_q_heads;
  int32_t num_kv_heads;
  int32_t head_size;
  float scale;
  int32_t causal; /* bool, bottom-right */
  int32_t window_left;
  float softcap;
  const float* sinks;
  const float* alibi_slopes;
  const float* qq_bias;
  int64_t qq_bias_stride;
  void* out;
  int64_t o_stride_token, o_stride_head;
  hipattn_output_format_t out_format;
  float* lse; /* optional [num_q_heads, lse_stride_head] */
  int64_t lse_stride_head;
} hipattn_unified_params_t;

/* Defaults: every field 0 (automatic). */
typedef struct hipattn_unified_options {
  size_t struct_size;
  hipattn_unified_path_t path;
  int32_t num_segments; /* 3D: 0 = chosen from the device */
  hipattn_unified_split_t split;
  hipattn_unified_pipeline_t pipeline;
} hipattn_unified_options_t;

/* ---- paged decode (problem/paged_decode_params.hpp) ---------------------------------------------- */

/* Defaults: as hipattn_unified_params_t where the fields are shared, and q_len 1, kv_layout ROWS,
 * k_scale_value and v_scale_value 0 (unset). */
typedef struct hipattn_paged_decode_params {
  size_t struct_size;
  const void* q; /* [num_seqs * q_len, num_q_heads, head_size] */
  hipattn_dtype_t q_dtype;
  int64_t q_stride_token, q_stride_head;
  hipattn_tensor_scale_t q_scale;
  hipattn_fp8_math_t fp8_math;
  int32_t q_len; /* 1..8 */
  const void* k_cache;
  const void* v_cache;
  hipattn_dtype_t kv_dtype;
  hipattn_kv_cache_layout_t kv_layout;
  int64_t k_stride_block, k_stride_slot, k_stride_head;
  int64_t v_stride_block, v_stride_slot, v_stride_head;
  int64_t k_stride_chunk; /* rocm layout only */
  int64_t v_stride_dim;   /* rocm layout only */
  int32_t num_blocks;
  int32_t block_size;
  hipattn_kv_scale_mode_t kv_scale_mode;
  const float* k_scale;
  const float* v_scale;
  float k_scale_value; /* per_tensor with k_scale null (host); 0: unset */
  float v_scale_value;
  int64_t scale_stride_block, scale_stride_slot, scale_stride_head;
  const int32_t* block_table;
  int64_t block_table_stride;
  int32_t max_blocks_per_seq;
  const int32_t* seq_lens_k;
  int32_t num_seqs;
  int32_t max_seqlen_k;
  int32_t num_q_heads;
  int32_t num_kv_heads;
  int32_t head_size;
  float scale;
  int32_t window_left;
  float softcap;
  const float* sinks;
  const float* alibi_slopes;
  void* out;
  int64_t o_stride_token, o_stride_head;
  hipattn_output_format_t out_format;
  float* lse;
  int64_t lse_stride_head;
} hipattn_paged_decode_params_t;

/* Bounds every later call stays within, for the workspace size. Defaults: max_q_len 1, the rest 0. */
typedef struct hipattn_paged_decode_traits {
  size_t struct_size;
  int32_t max_num_seqs;
  int32_t max_q_len;
  int32_t num_q_heads;
  int32_t num_kv_heads;
  int32_t max_head_size;
  int32_t max_seqlen_k;
} hipattn_paged_decode_traits_t;

/* Defaults: every field 0 (automatic). Pass the same options to the workspace query and the call. */
typedef struct hipattn_paged_decode_options {
  size_t struct_size;
  hipattn_paged_decode_split_t split;
  int32_t num_segments;
  int32_t workgroup_budget;
  int32_t batch_invariant_keys;
} hipattn_paged_decode_options_t;

/* ---- MLA decode (problem/mla_decode_params.hpp) --------------------------------------------------- */

/* Defaults: every pointer null, every count and stride 0, q_dtype and kv_dtype BF16, q_len 1,
 * kv_scale_value 0 (unset), scale 0 (refused: set it), out_format.dtype UNSET. */
typedef struct hipattn_mla_decode_params {
  size_t struct_size;
  const void* q; /* [batch * q_len, num_heads, 576], or 512 with q_rope's 64 */
  int64_t q_stride_token, q_stride_head;
  const void* q_rope; /* null: q is joined */
  int64_t q_rope_stride_token, q_rope_stride_head;
  hipattn_dtype_t q_dtype;
  hipattn_tensor_scale_t q_scale;
  int32_t q_len; /* 1..8 */
  const void* kv_cache; /* [num_pages, page_size, 576] */
  hipattn_dtype_t kv_dtype;
  int64_t kv_stride_page, kv_stride_slot;
  int32_t num_pages;
  int32_t page_size;
  const float* kv_scale;
  float kv_scale_value;
  const int32_t* block_table;
  int64_t block_table_stride;
  int32_t max_pages_per_seq;
  const int32_t* seq_lens_k;
  int32_t batch;
  int32_t max_seqlen_k;
  int32_t num_heads;
  float scale;
  void* out; /* [batch * q_len, num_heads, 512] */
  int64_t o_stride_token, o_stride_head;
  hipattn_output_format_t out_format;
  float* lse; /* optional [batch * q_len, num_heads] */
  int64_t lse_stride_token, lse_stride_head;
} hipattn_mla_decode_params_t;

/* Defaults: max_q_len 1, the rest 0. */
typedef struct hipattn_mla_decode_traits {
  size_t struct_size;
  int32_t max_batch;
  int32_t max_q_len;
  int32_t num_heads;
  int32_t max_seqlen_k;
} hipattn_mla_decode_traits_t;

/* Defaults: every field 0 (automatic). */
typedef struct hipattn_mla_decode_options {
  size_t struct_size;
  hipattn_mla_decode_split_t split;
  int32_t workgroup_budget;
} hipattn_mla_decode_options_t;

/* ---- dense prefill (problem/dense_prefill_params.hpp) --------------------------------------------- */

/* Defaults: dtype F16, every pointer null (cu_seqlens null: batched), every count and stride 0,
 * scale 0 (refused: set it), causal 0, window_left -1, softcap 0. */
typedef struct hipattn_dense_prefill_params {
  size_t struct_size;
  hipattn_dtype_t dtype; /* of q, k, v and out */
  const void* q;
  int64_t q_stride_token, q_stride_head, q_stride_batch;
  const void* k;
  int64_t k_stride_token, k_stride_head, k_stride_batch;
  const void* v;
  int64_t v_stride_token, v_stride_head, v_stride_batch;
  const int32_t* cu_seqlens_q;
  const int32_t* cu_seqlens_k;
  int32_t num_seqs;
  int32_t num_tokens_q;
  int32_t num_tokens_k;
  int32_t max_seqlen_q;
  int32_t max_seqlen_k;
  int32_t num_q_heads;
  int32_t num_kv_heads;
  int32_t head_size_qk;
  int32_t head_size_v;
  float scale;
  int32_t causal; /* bool */
  int32_t window_left;
  float softcap;
  void* out;
  int64_t o_stride_token, o_stride_head, o_stride_batch;
  float* lse;
  int64_t lse_stride_head;
} hipattn_dense_prefill_params_t;

/* ---- merge of attention states (problem/merge_params.hpp) ----------------------------------------- */

/* Defaults: every field 0 (partial_dtype and out_dtype F16; num_tokens 0 is an empty call). */
typedef struct hipattn_merge_params {
  size_t struct_size;
  const void* partial_out;
  hipattn_dtype_t partial_dtype;
  int64_t po_stride_rank, po_stride_token, po_stride_head;
  const float* partial_lse;
  int64_t plse_stride_rank, plse_stride_token, plse_stride_head;
  int32_t num_ranks;
  int32_t num_tokens;
  int32_t num_heads;
  int32_t head_size;
  void* out;
  hipattn_dtype_t out_dtype;
  int64_t o_stride_token, o_stride_head;
  float* lse;
  int64_t lse_stride_token, lse_stride_head;
} hipattn_merge_params_t;

/* ---- functions ----------------------------------------------------------------------------------- */

/* HIPATTN_C_API_VERSION of the library, and the project's version ("0.1.0"). */
HIPATTN_C_EXPORT int32_t hipattn_c_api_version(void);
HIPATTN_C_EXPORT const char* hipattn_version_string(void);
/* "ok", "invalid_argument", "unsupported", "runtime", "workspace", "internal", or "unknown". */
HIPATTN_C_EXPORT const char* hipattn_status_name(hipattn_status_t status);

/* Init functions: zero *s, set every default and s->struct_size = struct_size (pass sizeof *s). They
 * write struct_size bytes at most (the part beyond this library's struct is left zero) and return
 * HIPATTN_STATUS_INVALID_ARGUMENT, writing nothing, for a null s or a size below the first version's. */
HIPATTN_C_EXPORT hipattn_status_t hipattn_device_init(hipattn_device_t* s, size_t struct_size);
HIPATTN_C_EXPORT hipattn_status_t hipattn_unified_params_init(hipattn_unified_params_t* s, size_t struct_size);
HIPATTN_C_EXPORT hipattn_status_t hipattn_unified_options_init(hipattn_unified_options_t* s, size_t struct_size);
HIPATTN_C_EXPORT hipattn_status_t hipattn_paged_decode_params_init(hipattn_paged_decode_params_t* s, size_t struct_size);
HIPATTN_C_EXPORT hipattn_status_t hipattn_paged_decode_traits_init(hipattn_paged_decode_traits_t* s, size_t struct_size);
HIPATTN_C_EXPORT hipattn_status_t hipattn_paged_decode_options_init(hipattn_paged_decode_options_t* s,
                                                                    size_t struct_size);
HIPATTN_C_EXPORT hipattn_status_t hipattn_mla_decode_params_init(hipattn_mla_decode_params_t* s, size_t struct_size);
HIPATTN_C_EXPORT hipattn_status_t hipattn_mla_decode_traits_init(hipattn_mla_decode_traits_t* s, size_t struct_size);
HIPATTN_C_EXPORT hipattn_status_t hipattn_mla_decode_options_init(hipattn_mla_decode_options_t* s, size_t struct_size);
HIPATTN_C_EXPORT hipattn_status_t hipattn_dense_prefill_params_init(hipattn_dense_prefill_params_t* s,
                                                                    size_t struct_size);
HIPATTN_C_EXPORT hipattn_status_t hipattn_merge_params_init(hipattn_merge_params_t* s, size_t struct_size);

/* The number of GPUs the runtime sees (*count 0 and HIPATTN_STATUS_RUNTIME when it reports none or
 * fails), and the current device as a plan sees it (HIPATTN_STATUS_UNSUPPORTED for a device this
 * build has no instances for). */
HIPATTN_C_EXPORT hipattn_status_t hipattn_device_count(int32_t* count, char* msg, size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_current_device(hipattn_device_t* device, char* msg, size_t msg_capacity);

/* Contiguous strides and bounds from the shape fields already set (num_seqs, num_tokens,
 * max_seqlen_q / _k, heads, head_size, num_blocks, block_size, max_blocks_per_seq (0: derived from
 * max_seqlen_k), dtypes, kv_scale_mode, qq_bias_stride), as hipattn::make_unified_params: every
 * stride, max_blocks_per_seq, block_table_stride, lse_stride_head, and scale = 1 / sqrt(head_size).
 * The paged-decode form sets kv_layout ROWS; _set_packed_rocm sets kv_layout ROCM with the strides of
 * packed ROCm caches (hipattn::set_packed_rocm_kv_layout). Pointers and the other fields are kept. */
HIPATTN_C_EXPORT hipattn_status_t hipattn_unified_params_set_contiguous(hipattn_unified_params_t* p,
                                                                        hipattn_kv_layout_t layout, char* msg,
                                                                        size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_paged_decode_params_set_contiguous(hipattn_paged_decode_params_t* p,
                                                                             hipattn_kv_layout_t layout, char* msg,
                                                                             size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_paged_decode_params_set_packed_rocm(hipattn_paged_decode_params_t* p,
                                                                              char* msg, size_t msg_capacity);

/* Validation (host only, no GPU): HIPATTN_STATUS_OK or the first violated rule's code, its message
 * naming the field and the bad value (and "[+N more: ...]" when several rules fail). Device-side
 * contents (lengths, block tables) are not read. */
HIPATTN_C_EXPORT hipattn_status_t hipattn_unified_validate(const hipattn_unified_params_t* p, char* msg,
                                                           size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_paged_decode_validate(const hipattn_paged_decode_params_t* p, char* msg,
                                                                size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_mla_decode_validate(const hipattn_mla_decode_params_t* p, char* msg,
                                                              size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_dense_prefill_validate(const hipattn_dense_prefill_params_t* p, char* msg,
                                                                 size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_merge_validate(const hipattn_merge_params_t* p, char* msg,
                                                         size_t msg_capacity);

/* Workspace bytes (16-byte aligned, the caller's allocation) into *bytes (0 on failure). options null:
 * the defaults; device null: the current device. Unified attention sizes one problem (validated
 * first: 0 on the 2D path); paged and MLA decode size every call within their traits, once. Dense
 * prefill and the merge need none: their queries validate the params and give 0. */
HIPATTN_C_EXPORT hipattn_status_t hipattn_unified_workspace_size(const hipattn_unified_params_t* p,
                                                                 const hipattn_unified_options_t* options,
                                                                 const hipattn_device_t* device, size_t* bytes,
                                                                 char* msg, size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_paged_decode_workspace_size(const hipattn_paged_decode_traits_t* traits,
                                                                      const hipattn_paged_decode_options_t* options,
                                                                      const hipattn_device_t* device, size_t* bytes,
                                                                      char* msg, size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_mla_decode_workspace_size(const hipattn_mla_decode_traits_t* traits,
                                                                    const hipattn_mla_decode_options_t* options,
                                                                    const hipattn_device_t* device, size_t* bytes,
                                                                    char* msg, size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_dense_prefill_workspace_size(const hipattn_dense_prefill_params_t* p,
                                                                       size_t* bytes, char* msg, size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_merge_workspace_size(const hipattn_merge_params_t* p, size_t* bytes,
                                                               char* msg, size_t msg_capacity);

/* The launches, on the current device, through the library's instances: validate, plan, check the
 * workspace (null with 0 bytes where none is needed), launch on `stream`. */
HIPATTN_C_EXPORT hipattn_status_t hipattn_unified_attention(const hipattn_unified_params_t* p,
                                                            const hipattn_unified_options_t* options,
                                                            void* workspace, size_t workspace_bytes, void* stream,
                                                            char* msg, size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_paged_decode(const hipattn_paged_decode_params_t* p,
                                                       const hipattn_paged_decode_options_t* options, void* workspace,
                                                       size_t workspace_bytes, void* stream, char* msg,
                                                       size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_mla_decode(const hipattn_mla_decode_params_t* p,
                                                     const hipattn_mla_decode_options_t* options, void* workspace,
                                                     size_t workspace_bytes, void* stream, char* msg,
                                                     size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_dense_prefill(const hipattn_dense_prefill_params_t* p, void* stream,
                                                        char* msg, size_t msg_capacity);
HIPATTN_C_EXPORT hipattn_status_t hipattn_merge_attention_states(const hipattn_merge_params_t* p, void* stream,
                                                                 char* msg, size_t msg_capacity);

#ifdef __cplusplus
}
#endif

#endif /* HIPATTN_C_API_H */
