/* tests/c_api/test_c_api.c: the C API (include/hipattn/c_api.h) from a C11 program, linked against
 * hipattn_c. Without a GPU: the version, the init defaults of every struct (every field), struct_size
 * rules, validation errors of each family (code, and the message naming the field and the value),
 * enumeration values out of range, workspace sizes on a described device (against the workspace
 * layouts of dispatch/workspace.hpp and unified_plan.hpp, and against second calls), the message
 * buffer (null, capacity 0, truncation). With a GPU: the current device and its workspace queries, and
 * a call refused for its workspace before any launch. Launches are checked by the device suites
 * (tests/device) over the same instance library. Exit code 1 on any failed check.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hipattn/c_api.h"

static int g_checks = 0;
static int g_failures = 0;

static void check_(int ok, const char* what, int line) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    fprintf(stderr, "test_c_api.c:%d: FAILED: %s\n", line, what);
  }
}
#define CHECK(cond) check_((cond) != 0, #cond, __LINE__)

/* A call's status is `want` and its message contains `field` and `value` (null: not checked). */
static void expect_(hipattn_status_t got, hipattn_status_t want, const char* msg, const char* field,
                    const char* value, int line) {
  ++g_checks;
  if (got != want || (field && !strstr(msg, field)) || (value && !strstr(msg, value))) {
    ++g_failures;
    fprintf(stderr, "test_c_api.c:%d: FAILED: status %s (want %s), message \"%s\" (want \"%s\" and \"%s\")\n", line,
            hipattn_status_name(got), hipattn_status_name(want), msg, field ? field : "", value ? value : "");
  }
}
#define EXPECT(call, want, field, value) expect_((call), (want), msg, (field), (value), __LINE__)

static char msg[1024];
#define M msg, sizeof msg

/* Distinct, aligned stand-ins for device pointers: validation reads none of them. */
#define FAKE(n) ((void*)(uintptr_t)(0x10000000u * (n)))

static size_t up256(size_t x) { return (x + 255) / 256 * 256; }

/* ---- init defaults, every field: the expected struct is built from c_api.h's documented defaults
 *      and compared byte for byte (padding included: init zeroes the struct first) ---- */

static void test_init_defaults(void) {
  {
    hipattn_unified_params_t p, want;
    memset(&p, 0xab, sizeof p);
    CHECK(hipattn_unified_params_init(&p, sizeof p) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.q_dtype = HIPATTN_DTYPE_F16;
    want.fp8_math = HIPATTN_FP8_MATH_FP8_QK;
    want.kv_dtype = HIPATTN_DTYPE_F16;
    want.kv_scale_mode = HIPATTN_KV_SCALE_NONE;
    want.causal = 1;
    want.window_left = -1;
    want.out_format.dtype = HIPATTN_DTYPE_UNSET;
    CHECK(memcmp(&p, &want, sizeof p) == 0);
    CHECK(p.struct_size == sizeof p && p.causal == 1 && p.window_left == -1 && p.out_format.dtype == -1);
    CHECK(p.q == NULL && p.scale == 0.f && p.softcap == 0.f && p.num_seqs == 0 && p.q_scale.host == 0.f);
  }
  {
    hipattn_paged_decode_params_t p, want;
    memset(&p, 0xab, sizeof p);
    CHECK(hipattn_paged_decode_params_init(&p, sizeof p) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.q_dtype = HIPATTN_DTYPE_F16;
    want.fp8_math = HIPATTN_FP8_MATH_FP8_QK;
    want.q_len = 1;
    want.kv_dtype = HIPATTN_DTYPE_F16;
    want.kv_layout = HIPATTN_KV_CACHE_ROWS;
    want.kv_scale_mode = HIPATTN_KV_SCALE_NONE;
    want.window_left = -1;
    want.out_format.dtype = HIPATTN_DTYPE_UNSET;
    CHECK(memcmp(&p, &want, sizeof p) == 0);
    CHECK(p.q_len == 1 && p.window_left == -1 && p.k_scale_value == 0.f);
  }
  {
    hipattn_mla_decode_params_t p, want;
    memset(&p, 0xab, sizeof p);
    CHECK(hipattn_mla_decode_params_init(&p, sizeof p) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.q_dtype = HIPATTN_DTYPE_BF16;
    want.q_len = 1;
    want.kv_dtype = HIPATTN_DTYPE_BF16;
    want.out_format.dtype = HIPATTN_DTYPE_UNSET;
    CHECK(memcmp(&p, &want, sizeof p) == 0);
    CHECK(p.q_dtype == HIPATTN_DTYPE_BF16 && p.kv_dtype == HIPATTN_DTYPE_BF16 && p.q_rope == NULL);
  }
  {
    hipattn_dense_prefill_params_t p, want;
    memset(&p, 0xab, sizeof p);
    CHECK(hipattn_dense_prefill_params_init(&p, sizeof p) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.dtype = HIPATTN_DTYPE_F16;
    want.causal = 0;
    want.window_left = -1;
    CHECK(memcmp(&p, &want, sizeof p) == 0);
  }
  {
    hipattn_merge_params_t p, want;
    memset(&p, 0xab, sizeof p);
    CHECK(hipattn_merge_params_init(&p, sizeof p) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.partial_dtype = HIPATTN_DTYPE_F16;
    want.out_dtype = HIPATTN_DTYPE_F16;
    CHECK(memcmp(&p, &want, sizeof p) == 0);
  }
  {
    hipattn_unified_options_t o, want;
    memset(&o, 0xab, sizeof o);
    CHECK(hipattn_unified_options_init(&o, sizeof o) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.path = HIPATTN_UNIFIED_PATH_AUTOMATIC;
    want.split = HIPATTN_UNIFIED_SPLIT_AUTOMATIC;
    want.pipeline = HIPATTN_UNIFIED_PIPELINE_AUTOMATIC;
    CHECK(memcmp(&o, &want, sizeof o) == 0);
  }
  {
    hipattn_paged_decode_options_t o, want;
    memset(&o, 0xab, sizeof o);
    CHECK(hipattn_paged_decode_options_init(&o, sizeof o) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.split = HIPATTN_PAGED_DECODE_SPLIT_AUTOMATIC;
    CHECK(memcmp(&o, &want, sizeof o) == 0);
  }
  {
    hipattn_mla_decode_options_t o, want;
    memset(&o, 0xab, sizeof o);
    CHECK(hipattn_mla_decode_options_init(&o, sizeof o) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.split = HIPATTN_MLA_DECODE_SPLIT_AUTOMATIC;
    CHECK(memcmp(&o, &want, sizeof o) == 0);
  }
  {
    hipattn_paged_decode_traits_t t, want;
    memset(&t, 0xab, sizeof t);
    CHECK(hipattn_paged_decode_traits_init(&t, sizeof t) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.max_q_len = 1;
    CHECK(memcmp(&t, &want, sizeof t) == 0);
  }
  {
    hipattn_mla_decode_traits_t t, want;
    memset(&t, 0xab, sizeof t);
    CHECK(hipattn_mla_decode_traits_init(&t, sizeof t) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.max_q_len = 1;
    CHECK(memcmp(&t, &want, sizeof t) == 0);
  }
  {
    hipattn_device_t d, want;
    memset(&d, 0xab, sizeof d);
    CHECK(hipattn_device_init(&d, sizeof d) == HIPATTN_STATUS_OK);
    memset(&want, 0, sizeof want);
    want.struct_size = sizeof want;
    want.target = HIPATTN_DEVICE_TARGET_SM90;
    want.multiprocessor_count = 132;
    CHECK(memcmp(&d, &want, sizeof d) == 0);
  }
}

/* ---- struct_size rules ---- */

static void test_struct_sizes(void) {
  /* init: a null struct or a size below the first version's is refused, writing nothing */
  hipattn_unified_params_t p;
  memset(&p, 0xcd, sizeof p);
  CHECK(hipattn_unified_params_init(&p, 8) == HIPATTN_STATUS_INVALID_ARGUMENT);
  CHECK(((unsigned char*)&p)[0] == 0xcd && ((unsigned char*)&p)[sizeof p - 1] == 0xcd);
  CHECK(hipattn_unified_params_init(NULL, sizeof p) == HIPATTN_STATUS_INVALID_ARGUMENT);
  CHECK(hipattn_merge_params_init(NULL, sizeof(hipattn_merge_params_t)) == HIPATTN_STATUS_INVALID_ARGUMENT);

  /* init of a newer caller's larger struct: the part this library does not know is zeroed */
  struct {
    hipattn_merge_params_t p;
    unsigned char newer[40];
  } big;
  memset(&big, 0xee, sizeof big);
  CHECK(hipattn_merge_params_init(&big.p, sizeof big) == HIPATTN_STATUS_OK);
  CHECK(big.p.struct_size == sizeof big);
  int tail_zero = 1;
  for (size_t i = 0; i < sizeof big.newer; ++i) tail_zero &= big.newer[i] == 0;
  CHECK(tail_zero);

  /* a valid merge problem in that larger struct is accepted while the unknown bytes are zero... */
  big.p.partial_out = FAKE(1);
  big.p.partial_dtype = HIPATTN_DTYPE_F32;
  big.p.po_stride_rank = 4 * 2 * 64, big.p.po_stride_token = 2 * 64, big.p.po_stride_head = 64;
  big.p.partial_lse = (const float*)FAKE(2);
  big.p.plse_stride_rank = 4 * 2, big.p.plse_stride_token = 2, big.p.plse_stride_head = 1;
  big.p.num_ranks = 3, big.p.num_tokens = 4, big.p.num_heads = 2, big.p.head_size = 64;
  big.p.out = FAKE(3);
  big.p.out_dtype = HIPATTN_DTYPE_BF16;
  big.p.o_stride_token = 2 * 64, big.p.o_stride_head = 64;
  EXPECT(hipattn_merge_validate(&big.p, M), HIPATTN_STATUS_OK, NULL, NULL);
  /* ...and refused as unsupported when one of them is set (a field this library cannot serve) */
  big.newer[7] = 1;
  EXPECT(hipattn_merge_validate(&big.p, M), HIPATTN_STATUS_UNSUPPORTED, "struct_size", NULL);
  big.newer[7] = 0;

  /* a struct_size below the first version's, on params, options, traits and the device */
  hipattn_merge_params_t m = big.p;
  m.struct_size = sizeof m;
  EXPECT(hipattn_merge_validate(&m, M), HIPATTN_STATUS_OK, NULL, NULL);
  m.struct_size = 16;
  EXPECT(hipattn_merge_validate(&m, M), HIPATTN_STATUS_INVALID_ARGUMENT, "struct_size", "(16)");
  m.struct_size = 0;
  size_t bytes = 1;
  EXPECT(hipattn_merge_workspace_size(&m, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT, "struct_size", "(0)");
  CHECK(bytes == 0);

  hipattn_paged_decode_traits_t t;
  hipattn_paged_decode_options_t o;
  hipattn_device_t d;
  hipattn_paged_decode_traits_init(&t, sizeof t);
  hipattn_paged_decode_options_init(&o, sizeof o);
  hipattn_device_init(&d, sizeof d);
  t.max_num_seqs = 8, t.num_q_heads = 8, t.num_kv_heads = 1, t.max_head_size = 128, t.max_seqlen_k = 4096;
  EXPECT(hipattn_paged_decode_workspace_size(&t, &o, &d, &bytes, M), HIPATTN_STATUS_OK, NULL, NULL);
  o.struct_size = 4;
  EXPECT(hipattn_paged_decode_workspace_size(&t, &o, &d, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT,
         "options.struct_size", "(4)");
  o.struct_size = sizeof o;
  t.struct_size = 12;
  EXPECT(hipattn_paged_decode_workspace_size(&t, &o, &d, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT,
         "traits.struct_size", "(12)");
  t.struct_size = sizeof t;
  d.struct_size = 2;
  EXPECT(hipattn_paged_decode_workspace_size(&t, &o, &d, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT,
         "device.struct_size", "(2)");

  /* null pointers where a struct is required */
  EXPECT(hipattn_unified_validate(NULL, M), HIPATTN_STATUS_INVALID_ARGUMENT, "params", NULL);
  EXPECT(hipattn_mla_decode_workspace_size(NULL, NULL, NULL, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT, "traits",
         NULL);
}

/* ---- valid problems of each family (device pointers are stand-ins) ---- */

static hipattn_unified_params_t unified_problem(void) {
  hipattn_unified_params_t p;
  hipattn_unified_params_init(&p, sizeof p);
  p.num_seqs = 2, p.num_tokens = 10, p.max_seqlen_q = 8, p.max_seqlen_k = 300;
  p.num_q_heads = 8, p.num_kv_heads = 2, p.head_size = 128;
  p.num_blocks = 64, p.block_size = 16;
  p.q_dtype = HIPATTN_DTYPE_BF16, p.kv_dtype = HIPATTN_DTYPE_BF16;
  CHECK(hipattn_unified_params_set_contiguous(&p, HIPATTN_KV_LAYOUT_NHD, M) == HIPATTN_STATUS_OK);
  p.q = FAKE(1), p.k_cache = FAKE(2), p.v_cache = FAKE(3), p.out = FAKE(4);
  p.block_table = (const int32_t*)FAKE(5), p.cu_seqlens_q = (const int32_t*)FAKE(6);
  p.seq_lens_k = (const int32_t*)FAKE(7);
  return p;
}

static hipattn_paged_decode_params_t paged_decode_problem(void) {
  hipattn_paged_decode_params_t p;
  hipattn_paged_decode_params_init(&p, sizeof p);
  p.num_seqs = 4, p.q_len = 2, p.max_seqlen_k = 1000;
  p.num_q_heads = 16, p.num_kv_heads = 4, p.head_size = 128;
  p.num_blocks = 256, p.block_size = 16;
  p.q_dtype = HIPATTN_DTYPE_BF16, p.kv_dtype = HIPATTN_DTYPE_BF16;
  CHECK(hipattn_paged_decode_params_set_contiguous(&p, HIPATTN_KV_LAYOUT_HND, M) == HIPATTN_STATUS_OK);
  p.q = FAKE(1), p.k_cache = FAKE(2), p.v_cache = FAKE(3), p.out = FAKE(4);
  p.block_table = (const int32_t*)FAKE(5), p.seq_lens_k = (const int32_t*)FAKE(6);
  return p;
}

static hipattn_mla_decode_params_t mla_problem(void) {
  hipattn_mla_decode_params_t p;
  hipattn_mla_decode_params_init(&p, sizeof p);
  p.batch = 3, p.q_len = 1, p.num_heads = 16, p.max_seqlen_k = 512;
  p.num_pages = 64, p.page_size = 64, p.max_pages_per_seq = 8;
  p.q = FAKE(1), p.q_stride_token = 16 * 576, p.q_stride_head = 576;
  p.kv_cache = FAKE(2), p.kv_stride_page = 64 * 576, p.kv_stride_slot = 576;
  p.block_table = (const int32_t*)FAKE(3), p.block_table_stride = 8;
  p.seq_lens_k = (const int32_t*)FAKE(4);
  p.scale = 0.0417f;
  p.out = FAKE(5), p.o_stride_token = 16 * 512, p.o_stride_head = 512;
  return p;
}

static hipattn_dense_prefill_params_t dense_problem(void) {
  hipattn_dense_prefill_params_t p;
  hipattn_dense_prefill_params_init(&p, sizeof p);
  const int64_t s = 64, h = 4, d = 128;
  p.dtype = HIPATTN_DTYPE_BF16;
  p.num_seqs = 2, p.max_seqlen_q = (int32_t)s, p.max_seqlen_k = (int32_t)s;
  p.num_tokens_q = (int32_t)(2 * s), p.num_tokens_k = (int32_t)(2 * s);
  p.num_q_heads = (int32_t)h, p.num_kv_heads = (int32_t)h, p.head_size_qk = (int32_t)d, p.head_size_v = (int32_t)d;
  p.q = FAKE(1), p.k = FAKE(2), p.v = FAKE(3), p.out = FAKE(4);
  p.q_stride_token = p.k_stride_token = p.v_stride_token = p.o_stride_token = h * d;
  p.q_stride_head = p.k_stride_head = p.v_stride_head = p.o_stride_head = d;
  p.q_stride_batch = p.k_stride_batch = p.v_stride_batch = p.o_stride_batch = s * h * d;
  p.scale = 0.088f;
  p.causal = 1;
  return p;
}

static hipattn_merge_params_t merge_problem(void) {
  hipattn_merge_params_t p;
  hipattn_merge_params_init(&p, sizeof p);
  p.num_ranks = 2, p.num_tokens = 16, p.num_heads = 4, p.head_size = 64;
  p.partial_out = FAKE(1), p.partial_dtype = HIPATTN_DTYPE_F32;
  p.po_stride_rank = 16 * 4 * 64, p.po_stride_token = 4 * 64, p.po_stride_head = 64;
  p.partial_lse = (const float*)FAKE(2);
  p.plse_stride_rank = 16 * 4, p.plse_stride_token = 4, p.plse_stride_head = 1;
  p.out = FAKE(3), p.out_dtype = HIPATTN_DTYPE_BF16, p.o_stride_token = 4 * 64, p.o_stride_head = 64;
  return p;
}

/* ---- validation: each family's valid problem passes; one bad field at a time is named ---- */

static void test_validation(void) {
  {
    hipattn_unified_params_t p = unified_problem();
    /* the builder's strides: NHD, contiguous */
    CHECK(p.q_stride_token == 8 * 128 && p.q_stride_head == 128);
    CHECK(p.k_stride_block == 16 * 2 * 128 && p.k_stride_slot == 2 * 128 && p.k_stride_head == 128);
    CHECK(p.max_blocks_per_seq == (300 + 15) / 16 && p.block_table_stride == p.max_blocks_per_seq);
    CHECK(p.lse_stride_head == 10 && p.scale > 0.0883f && p.scale < 0.0884f); /* 1 / sqrt(128) */
    CHECK(p.q == FAKE(1) && p.causal == 1);
    EXPECT(hipattn_unified_validate(&p, M), HIPATTN_STATUS_OK, NULL, NULL);
    hipattn_unified_params_t b = p;
    b.head_size = 100;
    EXPECT(hipattn_unified_validate(&b, M), HIPATTN_STATUS_UNSUPPORTED, "head_size", "100");
    b = p, b.q_dtype = 7;
    EXPECT(hipattn_unified_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "q_dtype", "(7)");
    b = p, b.kv_dtype = -5;
    EXPECT(hipattn_unified_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "kv_dtype", "(-5)");
    b = p, b.causal = 2;
    EXPECT(hipattn_unified_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "causal", "(2)");
    b = p, b.out_format.dtype = 9;
    EXPECT(hipattn_unified_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "out_format.dtype", "(9)");
    b = p, b.kv_scale_mode = 3;
    EXPECT(hipattn_unified_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "kv_scale_mode", "(3)");
    b = p, b.fp8_math = 256; /* 0 as a byte: the library must not truncate it */
    EXPECT(hipattn_unified_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "fp8_math", "(256)");
    b = p, b.scale = 0.f;
    EXPECT(hipattn_unified_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "scale", NULL);
    b = p, b.num_kv_heads = 3;
    EXPECT(hipattn_unified_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "num_kv_heads", "3");
    b = p;
    EXPECT(hipattn_unified_params_set_contiguous(&b, 2, M), HIPATTN_STATUS_INVALID_ARGUMENT, "layout", "(2)");
    CHECK(memcmp(&b, &p, sizeof b) == 0); /* refused: nothing written */
  }
  {
    hipattn_paged_decode_params_t p = paged_decode_problem();
    /* HND: [num_blocks, num_kv_heads, block_size, head_size] */
    CHECK(p.k_stride_block == 4 * 16 * 128 && p.k_stride_head == 16 * 128 && p.k_stride_slot == 128);
    CHECK(p.kv_layout == HIPATTN_KV_CACHE_ROWS && p.q_stride_token == 16 * 128);
    EXPECT(hipattn_paged_decode_validate(&p, M), HIPATTN_STATUS_OK, NULL, NULL);
    hipattn_paged_decode_params_t b = p;
    b.q_len = 9;
    EXPECT(hipattn_paged_decode_validate(&b, M), HIPATTN_STATUS_UNSUPPORTED, "q_len", "9");
    b = p, b.kv_layout = 5;
    EXPECT(hipattn_paged_decode_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "kv_layout", "(5)");
    b = p, b.window_left = -2;
    EXPECT(hipattn_paged_decode_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "window_left", "-2");
    /* the packed ROCm layout (x = 8 bf16 elements): K [blocks, heads, d / x, block_size, x] */
    b = p;
    EXPECT(hipattn_paged_decode_params_set_packed_rocm(&b, M), HIPATTN_STATUS_OK, NULL, NULL);
    CHECK(b.kv_layout == HIPATTN_KV_CACHE_ROCM && b.k_stride_slot == 8 && b.k_stride_chunk == 16 * 8);
    CHECK(b.v_stride_slot == 1 && b.v_stride_dim == 16 && b.k_stride_head == 128 * 16);
    EXPECT(hipattn_paged_decode_validate(&b, M), HIPATTN_STATUS_OK, NULL, NULL);
  }
  {
    hipattn_mla_decode_params_t p = mla_problem();
    EXPECT(hipattn_mla_decode_validate(&p, M), HIPATTN_STATUS_OK, NULL, NULL);
    hipattn_mla_decode_params_t b = p;
    b.num_heads = 0;
    EXPECT(hipattn_mla_decode_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "num_heads", "0");
    b = p, b.kv_dtype = 42;
    EXPECT(hipattn_mla_decode_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "kv_dtype", "(42)");
    b = p, b.q_len = 0;
    EXPECT(hipattn_mla_decode_validate(&b, M), HIPATTN_STATUS_UNSUPPORTED, "q_len", "0");
  }
  {
    hipattn_dense_prefill_params_t p = dense_problem();
    EXPECT(hipattn_dense_prefill_validate(&p, M), HIPATTN_STATUS_OK, NULL, NULL);
    hipattn_dense_prefill_params_t b = p;
    b.head_size_v = 96;
    EXPECT(hipattn_dense_prefill_validate(&b, M), HIPATTN_STATUS_UNSUPPORTED, "head_size", "96");
    b = p, b.dtype = HIPATTN_DTYPE_F32; /* a dtype value, refused by the family's rules */
    EXPECT(hipattn_dense_prefill_validate(&b, M), HIPATTN_STATUS_UNSUPPORTED, "dtype", "fp32");
    b = p, b.causal = -1;
    EXPECT(hipattn_dense_prefill_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "causal", "(-1)");
  }
  {
    hipattn_merge_params_t p = merge_problem();
    EXPECT(hipattn_merge_validate(&p, M), HIPATTN_STATUS_OK, NULL, NULL);
    hipattn_merge_params_t b = p;
    b.head_size = 12;
    EXPECT(hipattn_merge_validate(&b, M), HIPATTN_STATUS_UNSUPPORTED, "head_size", "12");
    b = p, b.num_ranks = 0;
    EXPECT(hipattn_merge_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "num_ranks", "0");
    b = p, b.out_dtype = 5;
    EXPECT(hipattn_merge_validate(&b, M), HIPATTN_STATUS_INVALID_ARGUMENT, "out_dtype", "(5)");
  }
}

/* ---- the message buffer ---- */

static void test_messages(void) {
  hipattn_unified_params_t p = unified_problem();
  p.q_dtype = 7;
  /* a null buffer, and a capacity of 0 (nothing written) */
  CHECK(hipattn_unified_validate(&p, NULL, 0) == HIPATTN_STATUS_INVALID_ARGUMENT);
  CHECK(hipattn_unified_validate(&p, NULL, 64) == HIPATTN_STATUS_INVALID_ARGUMENT);
  char small[32];
  memset(small, 'x', sizeof small);
  CHECK(hipattn_unified_validate(&p, small, 0) == HIPATTN_STATUS_INVALID_ARGUMENT);
  CHECK(small[0] == 'x');
  /* the whole message, then truncated copies of it: capacity - 1 bytes and a NUL, nothing beyond */
  char full[1024];
  CHECK(hipattn_unified_validate(&p, full, sizeof full) == HIPATTN_STATUS_INVALID_ARGUMENT);
  const size_t n = strlen(full);
  CHECK(n > 40 && strncmp(full, "hipattn: invalid_argument: q_dtype: ", 36) == 0);
  memset(small, 'x', sizeof small);
  CHECK(hipattn_unified_validate(&p, small, 16) == HIPATTN_STATUS_INVALID_ARGUMENT);
  CHECK(strlen(small) == 15 && strncmp(small, full, 15) == 0 && small[16] == 'x');
  CHECK(hipattn_unified_validate(&p, small, 1) == HIPATTN_STATUS_INVALID_ARGUMENT);
  CHECK(small[0] == '\0');
  /* exactly the message's length + 1: the whole message */
  char exact[1024];
  CHECK(hipattn_unified_validate(&p, exact, n + 1) == HIPATTN_STATUS_INVALID_ARGUMENT);
  CHECK(strcmp(exact, full) == 0);
  /* success writes "" */
  p.q_dtype = HIPATTN_DTYPE_BF16;
  strcpy(small, "junk");
  CHECK(hipattn_unified_validate(&p, small, sizeof small) == HIPATTN_STATUS_OK);
  CHECK(small[0] == '\0');
  /* several violations of the family's rules: the first, then "[+N more: ...]" naming the others */
  p.num_kv_heads = 3, p.scale = 0.f;
  EXPECT(hipattn_unified_validate(&p, M), HIPATTN_STATUS_INVALID_ARGUMENT, "num_kv_heads", "[+");
  CHECK(strstr(msg, "scale") != NULL);
}

/* ---- workspace sizes on a described device (sm_90, 132 SMs) ---- */

static void test_workspace_sizes(void) {
  hipattn_device_t dev;
  hipattn_device_init(&dev, sizeof dev);
  size_t bytes = 12345;

  /* dense prefill and the merge need none (and validate first) */
  hipattn_dense_prefill_params_t dp = dense_problem();
  EXPECT(hipattn_dense_prefill_workspace_size(&dp, &bytes, M), HIPATTN_STATUS_OK, NULL, NULL);
  CHECK(bytes == 0);
  dp.num_q_heads = 0;
  EXPECT(hipattn_dense_prefill_workspace_size(&dp, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT, "num_q_heads", NULL);
  hipattn_merge_params_t mp = merge_problem();
  bytes = 12345;
  EXPECT(hipattn_merge_workspace_size(&mp, &bytes, M), HIPATTN_STATUS_OK, NULL, NULL);
  CHECK(bytes == 0);
  EXPECT(hipattn_merge_workspace_size(&mp, NULL, M), HIPATTN_STATUS_INVALID_ARGUMENT, "bytes", NULL);

  /* unified: the 2D path needs none; the uniform 3D split holds fp32 partial O and LSE of every
   * segment, token and q head, with 256 bytes of alignment slack (unified_plan.hpp size_unified_split) */
  hipattn_unified_params_t up = unified_problem();
  hipattn_unified_options_t uo;
  hipattn_unified_options_init(&uo, sizeof uo);
  uo.path = HIPATTN_UNIFIED_PATH_TWO_D;
  bytes = 12345;
  EXPECT(hipattn_unified_workspace_size(&up, &uo, &dev, &bytes, M), HIPATTN_STATUS_OK, NULL, NULL);
  CHECK(bytes == 0);
  uo.path = HIPATTN_UNIFIED_PATH_THREE_D, uo.split = HIPATTN_UNIFIED_SPLIT_UNIFORM;
  size_t seg[2];
  for (int i = 0; i < 2; ++i) {
    uo.num_segments = 4 << i;
    EXPECT(hipattn_unified_workspace_size(&up, &uo, &dev, &seg[i], M), HIPATTN_STATUS_OK, NULL, NULL);
    CHECK(seg[i] == (size_t)(4 << i) * 10 * 8 * (128 + 1) * sizeof(float) + 256);
  }
  CHECK(seg[1] > seg[0]);
  uo.split = 259; /* 3 as a byte: must not become a valid split */
  EXPECT(hipattn_unified_workspace_size(&up, &uo, &dev, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT, "options.split",
         "(259)");
  CHECK(bytes == 0);
  hipattn_unified_options_init(&uo, sizeof uo);
  uo.pipeline = 4;
  EXPECT(hipattn_unified_workspace_size(&up, &uo, &dev, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT, "options.pipeline",
         "(4)");
  up.head_size = 100; /* the problem is validated first */
  EXPECT(hipattn_unified_workspace_size(&up, NULL, &dev, &bytes, M), HIPATTN_STATUS_UNSUPPORTED, "head_size", "100");

  /* the device description */
  hipattn_device_t bad = dev;
  bad.target = 0;
  up = unified_problem();
  EXPECT(hipattn_unified_workspace_size(&up, NULL, &bad, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT, "device.target",
         "(0)");
  bad = dev, bad.multiprocessor_count = 0;
  EXPECT(hipattn_unified_workspace_size(&up, NULL, &bad, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT,
         "device.multiprocessor_count", "(0)");

  /* paged decode: sized from traits; grows with max_num_seqs; one partition needs none; a forced
   * uniform split of N segments holds N x max_num_seqs task slots in the slot layout of
   * dispatch/workspace.hpp (16-byte tasks, item_task0, a status block, fp32 partial O and LSE of
   * max_q_len x num_q_heads rows a slot at the largest table head size within max_head_size, 128 here;
   * each block 256-byte aligned) */
  hipattn_paged_decode_traits_t t;
  hipattn_paged_decode_traits_init(&t, sizeof t);
  t.max_q_len = 2, t.num_q_heads = 16, t.num_kv_heads = 4, t.max_head_size = 128, t.max_seqlen_k = 32768;
  size_t by_seqs[2];
  for (int i = 0; i < 2; ++i) {
    t.max_num_seqs = 64 << (2 * i);
    EXPECT(hipattn_paged_decode_workspace_size(&t, NULL, &dev, &by_seqs[i], M), HIPATTN_STATUS_OK, NULL, NULL);
    CHECK(by_seqs[i] > 0);
  }
  CHECK(by_seqs[1] > by_seqs[0]);
  hipattn_paged_decode_options_t po;
  hipattn_paged_decode_options_init(&po, sizeof po);
  po.split = HIPATTN_PAGED_DECODE_SPLIT_ONE_PARTITION;
  bytes = 12345;
  EXPECT(hipattn_paged_decode_workspace_size(&t, &po, &dev, &bytes, M), HIPATTN_STATUS_OK, NULL, NULL);
  CHECK(bytes == 0);
  po.split = HIPATTN_PAGED_DECODE_SPLIT_UNIFORM, po.num_segments = 4;
  t.max_num_seqs = 24;
  EXPECT(hipattn_paged_decode_workspace_size(&t, &po, &dev, &bytes, M), HIPATTN_STATUS_OK, NULL, NULL);
  {
    const size_t slots = 4 * 24, rows = slots * 2 * 16;
    const size_t want = up256(slots * 16) + up256(24 * sizeof(int32_t)) + 256 + up256(rows * 128 * sizeof(float)) +
                        up256(rows * sizeof(float));
    CHECK(bytes == want);
  }
  po.split = 4;
  EXPECT(hipattn_paged_decode_workspace_size(&t, &po, &dev, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT,
         "options.split", "(4)");
  po.split = HIPATTN_PAGED_DECODE_SPLIT_AUTOMATIC, po.num_segments = -1;
  EXPECT(hipattn_paged_decode_workspace_size(&t, &po, &dev, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT,
         "options.num_segments", "-1");
  t.max_q_len = 0;
  EXPECT(hipattn_paged_decode_workspace_size(&t, NULL, &dev, &bytes, M), HIPATTN_STATUS_UNSUPPORTED, "max_q_len", "0");

  /* MLA decode: one partition needs none; otherwise at least one slot a sequence of fp32 partial O
   * (512 columns) and LSE for max_q_len x num_heads rows, and it grows with max_batch */
  hipattn_mla_decode_traits_t mt;
  hipattn_mla_decode_traits_init(&mt, sizeof mt);
  mt.max_q_len = 2, mt.num_heads = 16, mt.max_seqlen_k = 65536;
  hipattn_mla_decode_options_t mo;
  hipattn_mla_decode_options_init(&mo, sizeof mo);
  size_t by_batch[2];
  for (int i = 0; i < 2; ++i) {
    mt.max_batch = 256 << (2 * i);
    EXPECT(hipattn_mla_decode_workspace_size(&mt, &mo, &dev, &by_batch[i], M), HIPATTN_STATUS_OK, NULL, NULL);
    CHECK(by_batch[i] >= (size_t)mt.max_batch * 2 * 16 * (512 + 1) * sizeof(float));
  }
  CHECK(by_batch[1] > by_batch[0]);
  mo.split = HIPATTN_MLA_DECODE_SPLIT_ONE_PARTITION;
  bytes = 12345;
  EXPECT(hipattn_mla_decode_workspace_size(&mt, &mo, &dev, &bytes, M), HIPATTN_STATUS_OK, NULL, NULL);
  CHECK(bytes == 0);
  mo.split = -1;
  EXPECT(hipattn_mla_decode_workspace_size(&mt, &mo, &dev, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT,
         "options.split", "(-1)");
  mo.split = 0, mt.num_heads = 0;
  EXPECT(hipattn_mla_decode_workspace_size(&mt, &mo, &dev, &bytes, M), HIPATTN_STATUS_INVALID_ARGUMENT, "num_heads",
         "0");
}

/* ---- the current device: with a GPU, its plan and a call refused before any launch ---- */

static void test_device(void) {
  int32_t count = -1;
  const hipattn_status_t s = hipattn_device_count(&count, M);
  hipattn_paged_decode_traits_t t;
  hipattn_paged_decode_traits_init(&t, sizeof t);
  t.max_num_seqs = 64, t.num_q_heads = 16, t.num_kv_heads = 4, t.max_head_size = 128, t.max_seqlen_k = 8192;
  size_t bytes = 12345;
  if (s != HIPATTN_STATUS_OK || count == 0) {
    CHECK(s == HIPATTN_STATUS_RUNTIME && count == 0 && msg[0] != '\0');
    /* a query for the current device fails as a runtime error, not a crash */
    EXPECT(hipattn_paged_decode_workspace_size(&t, NULL, NULL, &bytes, M), HIPATTN_STATUS_RUNTIME, NULL, NULL);
    CHECK(bytes == 0);
    printf("hipattn_c_api_test: no GPU present: skipped the device checks\n");
    return;
  }
  CHECK(count > 0);
  hipattn_device_t dev;
  hipattn_device_init(&dev, sizeof dev);
  EXPECT(hipattn_current_device(&dev, M), HIPATTN_STATUS_OK, NULL, NULL);
  CHECK(dev.struct_size == sizeof dev && dev.multiprocessor_count > 0);
  CHECK(dev.target == HIPATTN_DEVICE_TARGET_SM90 || dev.target == HIPATTN_DEVICE_TARGET_GFX942 || dev.target == HIPATTN_DEVICE_TARGET_GFX950);
  /* the current device's query equals the described one's */
  size_t described = 0;
  EXPECT(hipattn_paged_decode_workspace_size(&t, NULL, NULL, &bytes, M), HIPATTN_STATUS_OK, NULL, NULL);
  EXPECT(hipattn_paged_decode_workspace_size(&t, NULL, &dev, &described, M), HIPATTN_STATUS_OK, NULL, NULL);
  CHECK(bytes == described && bytes > 0);
  /* a split call without its workspace is refused before anything launches */
  hipattn_paged_decode_params_t p = paged_decode_problem();
  hipattn_paged_decode_options_t o;
  hipattn_paged_decode_options_init(&o, sizeof o);
  o.split = HIPATTN_PAGED_DECODE_SPLIT_UNIFORM, o.num_segments = 4;
  EXPECT(hipattn_paged_decode(&p, &o, NULL, 0, NULL, M), HIPATTN_STATUS_WORKSPACE, "workspace", "needed");
  p.head_size = 100;
  EXPECT(hipattn_paged_decode(&p, &o, NULL, 0, NULL, M), HIPATTN_STATUS_UNSUPPORTED, "head_size", "100");
  printf("hipattn_c_api_test: device checks on target %d, %d SMs / CUs\n", (int)dev.target,
         (int)dev.multiprocessor_count);
}

int main(void) {
  CHECK(hipattn_c_api_version() == HIPATTN_C_API_VERSION);
  int major = -1, minor = -1, patch = -1;
  CHECK(sscanf(hipattn_version_string(), "%d.%d.%d", &major, &minor, &patch) == 3 && major >= 0);
  CHECK(strcmp(hipattn_status_name(HIPATTN_STATUS_OK), "ok") == 0);
  CHECK(strcmp(hipattn_status_name(HIPATTN_STATUS_WORKSPACE), "workspace") == 0);
  CHECK(strcmp(hipattn_status_name(HIPATTN_STATUS_INTERNAL), "internal") == 0);
  CHECK(strcmp(hipattn_status_name(77), "unknown") == 0);

  test_init_defaults();
  test_struct_sizes();
  test_validation();
  test_messages();
  test_workspace_sizes();
  test_device();

  printf("hipattn_c_api_test: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
