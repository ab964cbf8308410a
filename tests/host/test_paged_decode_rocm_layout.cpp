// tests/host/test_paged_decode_rocm_layout.cpp: the host side of paged decode's ROCm cache layout
// (KvCacheLayout::rocm: K [num_blocks, num_kv_heads, head_size / x, block_size, x],
// V [num_blocks, num_kv_heads, head_size, block_size]):
//   * the register transposes (tile/register_transpose.hpp): transpose8x4_b16 / transpose8x4_b8 (and
//     their pair forms) on random words put element s of row k at element k of row s;
//   * the paged view's layout policies (paged/paged_kv.hpp): with the strides of a packed rocm cache,
//     k_offset + k_chunk and v_offset + v_dim are the packed indices; RowKvLayout ignores the rocm
//     strides (chunk c at c * x, dimension d at d);
//   * validation (problem/paged_decode_rules.hpp): packed rocm problems pass (f16 / fp8, block sizes
//     8 / 16 / 24 / 128), each rocm rule fires naming its field; the rocm-only fields are ignored
//     for rows problems; needs_64bit_offsets reads the rocm dimensions;
//   * the plan (dispatch/paged_decode_plan.hpp): a rocm problem is register-staged with at most two
//     stages on every target, with the rows problem's residency, capacity and workspace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "hipattn/dispatch/paged_decode_plan.hpp"
#include "hipattn/paged/paged_kv.hpp"
#include "hipattn/problem/paged_decode_params.hpp"
#include "hipattn/problem/paged_decode_rules.hpp"
#include "hipattn/tile/register_transpose.hpp"

namespace {

using hipattn::CopyModel;
using hipattn::DType;
using hipattn::ErrorCode;
using hipattn::KvCacheLayout;
using hipattn::KvScaleMode;
using hipattn::PagedDecodeOptions;
using hipattn::PagedDecodeParams;
using hipattn::PagedDecodePlan;
using hipattn::PagedDecodeSplit;
using hipattn::PlanDevice;
using hipattn::Target;
using hipattn::u32x2;
using hipattn::u32x4;
using hipattn::ValidationReport;

// ---------------------------------------------------------------------------------------------
// register transposes

uint32_t word(const u32x4& v, int w) { return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w; }
// 16-bit element s of 8 (low half of each word first).
uint16_t elem16(const u32x4& v, int s) { return static_cast<uint16_t>(word(v, s / 2) >> (16 * (s % 2))); }
// 16-bit element s of 4 (an 8-byte row).
uint16_t elem16x4(const u32x2& v, int s) { return static_cast<uint16_t>((s < 2 ? v.x : v.y) >> (16 * (s % 2))); }
// Byte s of 8.
uint8_t elem8(const u32x2& v, int s) { return static_cast<uint8_t>((s < 4 ? v.x : v.y) >> (8 * (s % 4))); }

bool same(const u32x4& a, const u32x4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
bool same(const u32x2& a, const u32x2& b) { return a.x == b.x && a.y == b.y; }

TEST(RegisterTranspose, B16PutsRowKColumnSAtRowSColumnK) {
  std::mt19937 rng(20240611);
  for (int iter = 0; iter < 2000; ++iter) {
    u32x2 in[8];
    u32x4 out[4];
    for (u32x2& v : in) v = u32x2{uint32_t(rng()), uint32_t(rng())};
    hipattn::transpose8x4_b16(in, out);
    for (int s = 0; s < 4; ++s)
      for (int k = 0; k < 8; ++k)
        ASSERT_EQ(elem16(out[s], k), elem16x4(in[k], s)) << "iteration " << iter << ": out[" << s << "] element " << k;
    // the pair form gives the same columns
    u32x4 p0, p1;
    hipattn::transpose8x4_b16_pair(in, 2, p0, p1);
    ASSERT_TRUE(same(p0, out[2]) && same(p1, out[3])) << "iteration " << iter;
  }
  // distinct elements: row k, column s holds 8 k + s
  u32x2 in[8];
  u32x4 out[4];
  for (int k = 0; k < 8; ++k)
    in[k] = u32x2{uint32_t(8 * k) | (uint32_t(8 * k + 1) << 16), uint32_t(8 * k + 2) | (uint32_t(8 * k + 3) << 16)};
  hipattn::transpose8x4_b16(in, out);
  for (int s = 0; s < 4; ++s)
    for (int k = 0; k < 8; ++k) EXPECT_EQ(elem16(out[s], k), 8 * k + s);
}

TEST(RegisterTranspose, B8PutsRowKByteSAtRowSByteK) {
  std::mt19937 rng(777);
  for (int iter = 0; iter < 2000; ++iter) {
    uint32_t in[8];
    u32x2 out[4];
    for (uint32_t& v : in) v = uint32_t(rng());
    hipattn::transpose8x4_b8(in, out);
    for (int s = 0; s < 4; ++s)
      for (int k = 0; k < 8; ++k)
        ASSERT_EQ(elem8(out[s], k), uint8_t(in[k] >> (8 * s))) << "iteration " << iter << ": out[" << s << "] byte " << k;
    u32x2 p0, p1;
    hipattn::transpose8x4_b8_pair(in, 0, p0, p1);
    ASSERT_TRUE(same(p0, out[0]) && same(p1, out[1])) << "iteration " << iter;
  }
  // distinct bytes: row k, column s holds 4 k + s
  uint32_t in[8];
  u32x2 out[4];
  for (int k = 0; k < 8; ++k) in[k] = uint32_t(4 * k) | uint32_t(4 * k + 1) << 8 | uint32_t(4 * k + 2) << 16 | uint32_t(4 * k + 3) << 24;
  hipattn::transpose8x4_b8(in, out);
  for (int s = 0; s < 4; ++s)
    for (int k = 0; k < 8; ++k) EXPECT_EQ(elem8(out[s], k), 4 * k + s);
}

// ---------------------------------------------------------------------------------------------
// the paged view's layout policies

template <class Layout>
using View = hipattn::PagedKvView<int64_t, 0, Layout>;

// A view with the strides of `p` (rocm strides included).
template <class Layout>
View<Layout> view_of(const PagedDecodeParams& p) {
  View<Layout> v;
  v.k_stride_block = int32_t(p.k_stride_block), v.k_stride_slot = int32_t(p.k_stride_slot), v.k_stride_head = int32_t(p.k_stride_head);
  v.v_stride_block = int32_t(p.v_stride_block), v.v_stride_slot = int32_t(p.v_stride_slot), v.v_stride_head = int32_t(p.v_stride_head);
  v.k_stride_chunk = int32_t(p.k_stride_chunk);
  v.v_stride_dim = int32_t(p.v_stride_dim);
  v.page_size = p.block_size;
  return v;
}

PagedDecodeParams rocm_shape(DType kv, int32_t block_size, int32_t kv_heads, int32_t d) {
  PagedDecodeParams p;
  p.kv_dtype = kv;
  p.block_size = block_size;
  p.num_kv_heads = kv_heads;
  p.head_size = d;
  hipattn::set_packed_rocm_kv_layout(p);
  return p;
}

template <int kX>
void check_packed_rocm_offsets(DType kv, uint32_t seed) {
  constexpr int64_t bs = 16, kvh_n = 4, d = 128;
  const PagedDecodeParams p = rocm_shape(kv, bs, kvh_n, d);
  ASSERT_EQ(hipattn::rocm_kv_chunk_elems(kv), kX);
  ASSERT_EQ(p.kv_layout, KvCacheLayout::rocm);
  EXPECT_EQ(p.k_stride_slot, kX);
  EXPECT_EQ(p.k_stride_chunk, bs * kX);
  EXPECT_EQ(p.v_stride_slot, 1);
  EXPECT_EQ(p.v_stride_dim, bs);
  const View<hipattn::RocmKvLayout> v = view_of<hipattn::RocmKvLayout>(p);
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 20000; ++iter) {
    // blocks up to 2^20: K offsets past 2^31 elements (the int64_t Offset carries them)
    const int32_t blk = int32_t(rng() % (1u << 20)), slot = int32_t(rng() % bs), kvh = int32_t(rng() % kvh_n);
    const int c = int(rng() % (d / kX)), e = int(rng() % kX), dim = int(rng() % d);
    const int64_t k_want = ((int64_t(blk) * kvh_n + kvh) * (d / kX) + c) * bs * kX + int64_t(slot) * kX + e;
    ASSERT_EQ(v.k_offset(blk, slot, kvh) + v.template k_chunk<kX>(c) + e, k_want)
        << "K block " << blk << " slot " << slot << " kv head " << kvh << " chunk " << c << " element " << e;
    const int64_t v_want = ((int64_t(blk) * kvh_n + kvh) * d + dim) * bs + slot;
    ASSERT_EQ(v.v_offset(blk, slot, kvh) + v.v_dim(dim), v_want)
        << "V block " << blk << " slot " << slot << " kv head " << kvh << " dim " << dim;
  }
}

TEST(PagedKvViewLayout, RocmOffsetsAreThePackedIndices) {
  check_packed_rocm_offsets<8>(DType::f16, 5150);
  check_packed_rocm_offsets<8>(DType::bf16, 5151);
  check_packed_rocm_offsets<16>(DType::fp8_e4m3fn, 5152);  // x = 16 for fp8
}

TEST(PagedKvViewLayout, RowLayoutIgnoresTheRocmStrides) {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 200; ++iter) {
    View<hipattn::RowKvLayout> v;
    v.k_stride_block = 16 * 4 * 128, v.k_stride_slot = 4 * 128, v.k_stride_head = 128;
    v.v_stride_block = 16 * 4 * 128, v.v_stride_slot = 4 * 128, v.v_stride_head = 128;
    v.k_stride_chunk = int32_t(1 + rng() % 100000);  // garbage: a rows view never reads it
    v.v_stride_dim = int32_t(1 + rng() % 100000);
    v.page_size = 16;
    for (int c = 0; c < 16; ++c) {
      EXPECT_EQ(v.k_chunk<8>(c), 8 * c);
      EXPECT_EQ(v.k_chunk<16>(c), 16 * c);
    }
    for (int dim = 0; dim < 256; ++dim) EXPECT_EQ(v.v_dim(dim), dim);
    const int32_t blk = int32_t(rng() % 100000), slot = int32_t(rng() % 16), kvh = int32_t(rng() % 4);
    EXPECT_EQ(v.k_offset(blk, slot, kvh), int64_t(blk) * 16 * 4 * 128 + slot * 4 * 128 + kvh * 128);
    EXPECT_EQ(v.v_offset(blk, slot, kvh), int64_t(blk) * 16 * 4 * 128 + slot * 4 * 128 + kvh * 128);
  }
}

// ---------------------------------------------------------------------------------------------
// validation

template <class T>
T* fake(uintptr_t a) {
  return reinterpret_cast<T*>(a);
}

// A valid rows problem (as tests/host/test_paged_decode_plan.cpp): 3 sequences of 2 rows, 8 q heads
// over 2 kv heads, d 128, an NHD cache of 8 blocks of `block_size`, max_seqlen_k 50; fake pointers.
PagedDecodeParams valid_rows(DType kv = DType::f16, int32_t block_size = 16) {
  PagedDecodeParams p;
  p.q = fake<const void>(0x10000);
  p.q_dtype = DType::f16;
  p.q_stride_head = 128;
  p.q_stride_token = 8 * 128;
  p.q_len = 2;
  p.k_cache = fake<const void>(0x200000);
  p.v_cache = fake<const void>(0x400000);
  p.kv_dtype = kv;
  if (hipattn::is_fp8(kv)) {
    p.kv_scale_mode = KvScaleMode::per_tensor;
    p.k_scale_value = 0.5f, p.v_scale_value = 0.25f;
  }
  p.block_size = block_size;
  p.k_stride_block = p.v_stride_block = int64_t(block_size) * 2 * 128;
  p.k_stride_slot = p.v_stride_slot = 2 * 128;
  p.k_stride_head = p.v_stride_head = 128;
  p.num_blocks = 8;
  p.block_table = fake<const int32_t>(0x600000);
  p.max_blocks_per_seq = (50 + block_size - 1) / block_size;
  p.block_table_stride = p.max_blocks_per_seq + 1;
  p.seq_lens_k = fake<const int32_t>(0x610000);
  p.num_seqs = 3;
  p.max_seqlen_k = 50;
  p.num_q_heads = 8;
  p.num_kv_heads = 2;
  p.head_size = 128;
  p.scale = 0.088f;
  p.out = fake<void>(0x700000);
  p.o_stride_head = 128;
  p.o_stride_token = 8 * 128;
  return p;
}
PagedDecodeParams valid_rocm(DType kv = DType::f16, int32_t block_size = 16) {
  PagedDecodeParams p = valid_rows(kv, block_size);
  hipattn::set_packed_rocm_kv_layout(p);
  return p;
}

std::string report(const ValidationReport& r) { return r.ok() ? "ok" : r.summary(); }

TEST(PagedDecodeRocmRules, PackedLayoutsAreValid) {
  for (DType kv : {DType::f16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz})
    for (int32_t bs : {8, 16, 24, 128}) {
      const PagedDecodeParams p = valid_rocm(kv, bs);
      const std::string what = std::string(hipattn::dtype_name(kv)) + " block_size " + std::to_string(bs);
      ASSERT_TRUE(validate(p).ok()) << what << ": " << report(validate(p));
      const int64_t x = hipattn::rocm_kv_chunk_elems(kv);
      EXPECT_EQ(x, hipattn::is_fp8(kv) ? 16 : 8) << what;
      EXPECT_EQ(p.k_stride_slot, x) << what;
      EXPECT_EQ(p.k_stride_chunk, bs * x) << what;
      EXPECT_EQ(p.k_stride_head, 128 * bs) << what;
      EXPECT_EQ(p.k_stride_block, 128 * bs * 2) << what;
      EXPECT_EQ(p.v_stride_slot, 1) << what;
      EXPECT_EQ(p.v_stride_dim, bs) << what;
      EXPECT_EQ(p.v_stride_head, 128 * bs) << what;
      EXPECT_EQ(p.v_stride_block, 128 * bs * 2) << what;
      // the host arrays too
      const std::vector<int32_t> lens = {50, 0, 17};
      EXPECT_TRUE(validate(p, lens).ok()) << what << ": " << report(validate(p, lens));
    }
  // bf16 as well, and padded (non-packed, non-overlapping) strides
  PagedDecodeParams p = valid_rocm(DType::f16, 16);
  p.q_dtype = p.kv_dtype = DType::bf16;
  EXPECT_TRUE(validate(p).ok()) << report(validate(p));
  p = valid_rocm(DType::f16, 16);
  p.k_stride_chunk += 8, p.k_stride_head = p.k_stride_chunk * 16, p.k_stride_block = p.k_stride_head * 2 + 64;
  p.v_stride_dim += 8, p.v_stride_head = p.v_stride_dim * 128 + 8, p.v_stride_block = p.v_stride_head * 2;
  EXPECT_TRUE(validate(p).ok()) << "padded rocm strides: " << report(validate(p));
}

struct Rejected {
  const char* name;
  DType kv;
  int32_t block_size;
  std::function<void(PagedDecodeParams&)> mutate;
  ErrorCode code;
  const char* field;
  std::vector<std::string> words;  // the message carries these
};

TEST(PagedDecodeRocmRules, EachRuleFiresNamingItsField) {
  const std::vector<Rejected> rows = {
      {"block_size 12", DType::f16, 12, [](PagedDecodeParams& p) { hipattn::set_packed_rocm_kv_layout(p); },
       ErrorCode::unsupported, "block_size", {"(12)", "multiple of 8"}},
      {"block_size 12 fp8", DType::fp8_e4m3fn, 12, [](PagedDecodeParams& p) { hipattn::set_packed_rocm_kv_layout(p); },
       ErrorCode::unsupported, "block_size", {"(12)"}},
      {"v_stride_slot 2", DType::f16, 16, [](PagedDecodeParams& p) { p.v_stride_slot = 2; }, ErrorCode::invalid_argument,
       "v_stride_slot", {"(2)", "must be 1"}},
      {"k_stride_chunk not a 16-byte multiple", DType::f16, 16,
       [](PagedDecodeParams& p) {  // 132 elements = 264 bytes; head and block strides clear of overlap
         p.k_stride_chunk = 132, p.k_stride_head = 132 * 16, p.k_stride_block = 132 * 16 * 2;
       },
       ErrorCode::invalid_argument, "k_stride_chunk", {"132", "264 bytes", "16 bytes"}},
      {"fp8 k_stride_chunk not a 16-byte multiple", DType::fp8_e4m3fn, 16,
       [](PagedDecodeParams& p) { p.k_stride_chunk = 264, p.k_stride_head = 264 * 8, p.k_stride_block = 264 * 8 * 2; },
       ErrorCode::invalid_argument, "k_stride_chunk", {"264"}},
      {"k_stride_slot below x (overlap)", DType::f16, 16, [](PagedDecodeParams& p) { p.k_stride_slot = 4; },
       ErrorCode::invalid_argument, "k_stride_slot", {"(4)", "overlap"}},
      {"fp8 k_stride_slot below x (overlap)", DType::fp8_e4m3fn, 16, [](PagedDecodeParams& p) { p.k_stride_slot = 8; },
       ErrorCode::invalid_argument, "k_stride_slot", {"(8)", "overlap"}},
      {"k_stride_chunk below block_size * x (overlap)", DType::f16, 16, [](PagedDecodeParams& p) { p.k_stride_chunk = 64; },
       ErrorCode::invalid_argument, "k_stride_chunk", {"(64)", "overlap"}},
      {"v_stride_dim below block_size (overlap)", DType::f16, 16, [](PagedDecodeParams& p) { p.v_stride_dim = 8; },
       ErrorCode::invalid_argument, "v_stride_dim", {"(8)", "overlap"}},
      {"fp8 v_stride_dim 4 (overlap)", DType::fp8_e4m3fn, 8, [](PagedDecodeParams& p) { p.v_stride_dim = 4; },
       ErrorCode::invalid_argument, "v_stride_dim", {"(4)"}},
      {"fp8 v_stride_dim 12 (not whole 8-byte loads)", DType::fp8_e4m3fn, 8,
       [](PagedDecodeParams& p) { p.v_stride_dim = 12, p.v_stride_head = 12 * 128, p.v_stride_block = 12 * 128 * 2; },
       ErrorCode::invalid_argument, "v_stride_dim", {"12 bytes", "8 bytes"}},
      {"16-bit v_stride_dim 12 (not whole 16-byte loads)", DType::f16, 8,
       [](PagedDecodeParams& p) { p.v_stride_dim = 12, p.v_stride_head = 12 * 128, p.v_stride_block = 12 * 128 * 2; },
       ErrorCode::invalid_argument, "v_stride_dim", {"24 bytes", "16 bytes"}},
      {"v_stride_head overlapping the dimensions", DType::f16, 16, [](PagedDecodeParams& p) { p.v_stride_head = 16 * 64; },
       ErrorCode::invalid_argument, "v_stride_head", {"overlap"}},
      {"kv_layout 5 (rows strides)", DType::f16, 16,
       [](PagedDecodeParams& p) {
         const PagedDecodeParams rows = valid_rows(DType::f16, 16);
         p.k_stride_block = rows.k_stride_block, p.k_stride_slot = rows.k_stride_slot, p.k_stride_head = rows.k_stride_head;
         p.v_stride_block = rows.v_stride_block, p.v_stride_slot = rows.v_stride_slot, p.v_stride_head = rows.v_stride_head;
         p.kv_layout = static_cast<KvCacheLayout>(5);
       },
       ErrorCode::invalid_argument, "kv_layout", {"kv_layout (5) is not one of rows, rocm"}},
  };
  for (const Rejected& row : rows) {
    PagedDecodeParams p = valid_rocm(row.kv, row.block_size == 12 ? 16 : row.block_size);
    if (row.block_size == 12) {  // a rows problem of block 12 first (its table), then the rocm layout
      p = valid_rows(row.kv, 12);
    }
    row.mutate(p);
    const ValidationReport r = validate(p);
    ASSERT_FALSE(r.ok()) << row.name << ": accepted";
    EXPECT_EQ(r.field(), row.field) << row.name << ": " << r.summary();
    EXPECT_EQ(r.code(), row.code) << row.name << ": " << r.summary();
    for (const std::string& w : row.words)
      EXPECT_NE(r.message().find(w), std::string::npos) << row.name << ": message \"" << r.message() << "\" lacks \"" << w << "\"";
    try {
      hipattn::throw_if_error(r);
      ADD_FAILURE() << row.name << ": throw_if_error did not throw";
    } catch (const hipattn::Error& e) {
      EXPECT_EQ(e.field(), row.field);
      EXPECT_EQ(e.code(), row.code);
    }
  }
}

// An unknown kv_layout over rocm strides: reported (the shared rules read those strides as rows
// strides, so their overlaps come too).
TEST(PagedDecodeRocmRules, UnknownLayoutIsReported) {
  for (int bad : {2, 5, 255}) {
    PagedDecodeParams p = valid_rocm(DType::f16, 16);
    p.kv_layout = static_cast<KvCacheLayout>(bad);
    const ValidationReport r = validate(p);
    ASSERT_TRUE(r.has("kv_layout")) << bad << ": " << report(r);
    EXPECT_EQ(r.find("kv_layout")->code, ErrorCode::invalid_argument);
    EXPECT_NE(r.find("kv_layout")->message.find("(" + std::to_string(bad) + ")"), std::string::npos) << r.find("kv_layout")->message;
    EXPECT_FALSE(needs_64bit_offsets(p));
  }
}

// The 8-slot value loads are 16 bytes (16-bit) or 8 bytes (fp8): fp8 V strides need only 8-byte
// multiples, K strides always 16.
TEST(PagedDecodeRocmRules, Fp8ValueStridesNeedWholeEightByteLoads) {
  {
    PagedDecodeParams p = valid_rocm(DType::fp8_e4m3fn, 8);
    ASSERT_EQ(p.v_stride_dim, 8);  // 8 bytes
    EXPECT_TRUE(validate(p).ok()) << report(validate(p));
    p.v_stride_dim = 24, p.v_stride_head = 24 * 128, p.v_stride_block = 24 * 128 * 2;  // 24 bytes: whole 8-byte loads
    EXPECT_TRUE(validate(p).ok()) << report(validate(p));
    p.v_stride_dim = 4;
    EXPECT_EQ(validate(p).field(), "v_stride_dim") << report(validate(p));
  }
  {
    PagedDecodeParams p = valid_rocm(DType::f16, 8);
    ASSERT_EQ(p.v_stride_dim, 8);  // 16 bytes
    EXPECT_TRUE(validate(p).ok()) << report(validate(p));
    p.v_stride_dim = 12, p.v_stride_head = 12 * 128, p.v_stride_block = 12 * 128 * 2;  // 24 bytes
    EXPECT_EQ(validate(p).field(), "v_stride_dim") << report(validate(p));
  }
}

TEST(PagedDecodeRocmRules, RowsProblemsIgnoreTheRocmFields) {
  std::mt19937 rng(4711);
  for (int iter = 0; iter < 100; ++iter) {
    PagedDecodeParams p = valid_rows(iter % 2 ? DType::fp8_e4m3fn : DType::f16, iter % 3 ? 16 : 7);
    p.k_stride_chunk = int64_t(rng() % 1000) - 500;  // garbage, negative included
    p.v_stride_dim = int64_t(rng() % 1000) - 500;
    ASSERT_EQ(p.kv_layout, KvCacheLayout::rows);
    EXPECT_TRUE(validate(p).ok()) << "k_stride_chunk " << p.k_stride_chunk << ", v_stride_dim " << p.v_stride_dim << ": "
                                  << report(validate(p));
    EXPECT_FALSE(needs_64bit_offsets(p));
  }
  // ... and a rows block size that is no multiple of 8 (valid for rows) is rejected once rocm
  PagedDecodeParams p = valid_rows(DType::f16, 7);
  ASSERT_TRUE(validate(p).ok()) << report(validate(p));
  hipattn::set_packed_rocm_kv_layout(p);
  EXPECT_TRUE(validate(p).has("block_size")) << report(validate(p));
}

// ---------------------------------------------------------------------------------------------
// needs_64bit_offsets

TEST(PagedDecodeRocmRules, Needs64BitOffsetsReadsTheRocmDimensions) {
  {
    const PagedDecodeParams p = valid_rocm(DType::f16, 16);
    EXPECT_FALSE(needs_64bit_offsets(p));
  }
  {  // 8 blocks of 2^27 + 8 elements (2 bytes each): the K extent passes 2^31 bytes
    PagedDecodeParams p = valid_rocm(DType::f16, 16);
    p.k_stride_block = (int64_t(1) << 27) + 8;
    ASSERT_TRUE(validate(p).ok()) << report(validate(p));
    EXPECT_TRUE(needs_64bit_offsets(p));
    // just under: 8 blocks of 2^27 - 8 elements
    p.k_stride_block = (int64_t(1) << 27) - 8;
    ASSERT_TRUE(validate(p).ok()) << report(validate(p));
    EXPECT_FALSE(needs_64bit_offsets(p));
  }
  {  // V by v_stride_block, fp8 (1 byte): 8 blocks of 2^28 + 16 elements
    PagedDecodeParams p = valid_rocm(DType::fp8_e4m3fn, 16);
    p.v_stride_block = (int64_t(1) << 28) + 16;
    ASSERT_TRUE(validate(p).ok()) << report(validate(p));
    EXPECT_TRUE(needs_64bit_offsets(p));
  }
  {  // by k_stride_chunk alone (one block, chunks outermost): a span the rows view cannot see
    PagedDecodeParams p = valid_rocm(DType::f16, 16);
    p.num_blocks = 1;
    p.k_stride_head = 16 * 8;               // kv heads inside the chunks: [chunk, kv head, slot, x]
    p.k_stride_chunk = int64_t(1) << 27;    // 15 * 2^27 elements x 2 bytes > 2^31
    ASSERT_TRUE(validate(p).ok()) << report(validate(p));
    EXPECT_TRUE(needs_64bit_offsets(p));
    p.k_stride_chunk = int64_t(1) << 25;    // 15 * 2^25 x 2 bytes < 2^31
    ASSERT_TRUE(validate(p).ok()) << report(validate(p));
    EXPECT_FALSE(needs_64bit_offsets(p));
  }
}

// ---------------------------------------------------------------------------------------------
// the plan

PlanDevice device(Target t, int sms) {
  PlanDevice d;
  d.target = t;
  d.multiprocessor_count = sms;
  return d;
}

PagedDecodeParams plan_shape(int32_t seqs, int32_t q_len, int32_t hq, int32_t hkv, int32_t d, int32_t max_k, DType kv) {
  PagedDecodeParams p;
  p.num_seqs = seqs;
  p.q_len = q_len;
  p.num_q_heads = hq;
  p.num_kv_heads = hkv;
  p.head_size = d;
  p.max_seqlen_k = max_k;
  p.q_dtype = DType::bf16;
  p.kv_dtype = kv;
  p.block_size = 16;
  p.num_blocks = 1024;
  return p;
}

TEST(PagedDecodeRocmPlan, RegisterStagedAtMostTwoStagesWithTheRowsResidency) {
  const PlanDevice devices[] = {device(Target::sm90, 132), device(Target::gfx942, 304), device(Target::gfx950, 256)};
  std::mt19937 rng(1234);
  int checked = 0;
  for (const PlanDevice& dev : devices)
    for (int32_t d : hipattn::UnifiedInstanceTable::head_sizes)
      for (DType kv : {DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz})
        for (int32_t group : {1, 4, 16, 32})
          for (int32_t q : {1, 2, 8})
            for (PagedDecodeSplit split : {PagedDecodeSplit::automatic, PagedDecodeSplit::planned, PagedDecodeSplit::one_partition}) {
              const int32_t hkv = 1 << (rng() % 3), seqs = 1 + int32_t(rng() % 200), max_k = 1 + int32_t(rng() % 40000);
              const PagedDecodeParams rows = plan_shape(seqs, q, group * hkv, hkv, d, max_k, kv);
              PagedDecodeParams rocm = rows;
              hipattn::set_packed_rocm_kv_layout(rocm);
              PagedDecodeOptions o;
              o.split = split;
              const PagedDecodePlan a = plan_paged_decode(rows, o, dev);
              const PagedDecodePlan b = plan_paged_decode(rocm, o, dev);
              const std::string what = std::string(hipattn::target_name(dev.target)) + " d" + std::to_string(d) + " " +
                                       std::string(hipattn::dtype_name(kv)) + " group " + std::to_string(group) + " q_len " +
                                       std::to_string(q) + " seqs " + std::to_string(seqs) + " max_k " + std::to_string(max_k);
              EXPECT_EQ(a.kv_layout, KvCacheLayout::rows) << what;
              ASSERT_EQ(b.kv_layout, KvCacheLayout::rocm) << what;
              EXPECT_EQ(b.kv_copy, CopyModel::register_staged) << what;
              EXPECT_LE(b.tile.stages, 2) << what;
              EXPECT_GE(b.tile.stages, 1) << what;
              EXPECT_EQ(b.tile.stages, std::min(a.tile.stages, 2)) << what;
              // the same tile otherwise, and the same rows, grid, residency, split and workspace
              EXPECT_EQ(b.tile_kind, a.tile_kind) << what;
              EXPECT_EQ(b.tile.warps_m, a.tile.warps_m) << what;
              EXPECT_EQ(b.tile.warps_n, a.tile.warps_n) << what;
              EXPECT_EQ(b.tile.mt, a.tile.mt) << what;
              EXPECT_EQ(b.tile.kn, a.tile.kn) << what;
              EXPECT_EQ(b.tile.keys(), a.tile.keys()) << what;
              EXPECT_EQ(b.rows_per_token, a.rows_per_token) << what;
              EXPECT_EQ(b.block_q, a.block_q) << what;
              EXPECT_EQ(b.grid_y, a.grid_y) << what;
              EXPECT_GT(a.residency, 0) << what;
              EXPECT_EQ(b.residency, a.residency) << what;
              EXPECT_EQ(b.split, a.split) << what;
              EXPECT_EQ(b.segments, a.segments) << what;
              EXPECT_EQ(b.capacity, a.capacity) << what;
              EXPECT_EQ(b.fixed_tiles, a.fixed_tiles) << what;
              EXPECT_EQ(b.workspace_bytes, a.workspace_bytes) << what;
              ++checked;
            }
  EXPECT_GT(checked, 1000);
}

TEST(PagedDecodeRocmPlan, Sm90RowsKeepAsyncThreeStagesRocmTwo) {
  const PlanDevice h200 = device(Target::sm90, 132);
  for (DType t : {DType::f16, DType::bf16}) {
    PagedDecodeParams rows = plan_shape(5, 1, 8, 2, 128, 5000, t);
    rows.q_dtype = t;
    const PagedDecodePlan a = plan_paged_decode(rows, PagedDecodeOptions{}, h200);
    EXPECT_EQ(a.tile_kind, hipattn::UnifiedTileKind::decode);
    EXPECT_EQ(a.kv_copy, CopyModel::async);
    EXPECT_EQ(a.kv_layout, KvCacheLayout::rows);
    EXPECT_EQ(a.tile.stages, 3);
    PagedDecodeParams rocm = rows;
    hipattn::set_packed_rocm_kv_layout(rocm);
    const PagedDecodePlan b = plan_paged_decode(rocm, PagedDecodeOptions{}, h200);
    EXPECT_EQ(b.kv_layout, KvCacheLayout::rocm);
    EXPECT_EQ(b.kv_copy, CopyModel::register_staged);
    EXPECT_EQ(b.tile.stages, 2);
    EXPECT_EQ(b.residency, a.residency);
    EXPECT_EQ(b.capacity, a.capacity);
    EXPECT_EQ(b.tile.keys(), a.tile.keys());
  }
}

}  // namespace
