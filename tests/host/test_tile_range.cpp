// tests/host/test_tile_range.cpp: the trip-count interface (tile/tile_range.hpp: kv_tile_range, key_visible,
// split_tiles), the varlen q-block numbering (paged/varlen.hpp: find_seq_idx, seq_first_q_block) and the
// paged-cache addressing (paged/paged_kv.hpp: PagedKvView::locate and the 64-bit offsets), each against a
// brute force written from ALGORITHM.md sections 1, 2, 5.2 and 5.3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hipattn/paged/paged_kv.hpp"
#include "hipattn/paged/varlen.hpp"
#include "hipattn/tile/tile_range.hpp"

namespace {

using hipattn::KvTileRange;
using hipattn::QBlockSpan;

// The mask of ALGORITHM.md section 2, step 3, written out independently of key_visible.
bool visible_ref(int64_t j, int64_t pos, int64_t kv_len, bool causal, int64_t window_left) {
  if (j < 0 || j >= kv_len) return false;
  if (causal && j > pos) return false;
  if (window_left >= 0 && j < pos - window_left) return false;
  return true;
}

std::string describe(const QBlockSpan& s, int32_t tile_n) {
  return "q_len=" + std::to_string(s.q_len) + " kv_len=" + std::to_string(s.kv_len) +
         " i_first=" + std::to_string(s.i_first) + " i_last=" + std::to_string(s.i_last) +
         " causal=" + std::to_string(s.causal) + " window_left=" + std::to_string(s.window_left) +
         " tile_n=" + std::to_string(tile_n);
}

std::string describe(const KvTileRange& r) {
  return "got keys [" + std::to_string(r.key_begin) + ", " + std::to_string(r.key_end) + ") tiles [" +
         std::to_string(r.tile_begin) + ", " + std::to_string(r.tile_end) + ") interior [" +
         std::to_string(r.interior_begin) + ", " + std::to_string(r.interior_end) + ")";
}

// Checks kv_tile_range(s, tile_n) and key_visible against the brute force; "" when all is well, else the
// first discrepancy.
std::string check_span(const QBlockSpan& s, int32_t tile_n) {
  const int32_t ctx = s.kv_len - s.q_len;
  const KvTileRange r = hipattn::kv_tile_range(s, tile_n);
  const std::string where = describe(s, tile_n) + ": " + describe(r) + ": ";
  // Keys scanned: a margin on both sides (negative keys and keys past kv_len are never visible).
  const int32_t j_lo = -tile_n - 2, j_hi = s.kv_len + tile_n + 2;
  std::vector<char> any(static_cast<size_t>(j_hi - j_lo), 0);  // visible to some row
  int32_t kmin = std::numeric_limits<int32_t>::max(), kmax = std::numeric_limits<int32_t>::min();
  for (int32_t i = s.i_first; i <= s.i_last; ++i) {
    const int32_t pos = ctx + i;
    int32_t row_min = std::numeric_limits<int32_t>::max(), row_max = std::numeric_limits<int32_t>::min(), count = 0;
    for (int32_t j = j_lo; j < j_hi; ++j) {
      const bool v = visible_ref(j, pos, s.kv_len, s.causal, s.window_left);
      if (hipattn::key_visible(j, pos, s.kv_len, s.causal, s.window_left) != v)
        return where + "key_visible(j=" + std::to_string(j) + ", pos=" + std::to_string(pos) + ") = " +
               std::to_string(!v) + ", expected " + std::to_string(v);
      if (!v) continue;
      any[static_cast<size_t>(j - j_lo)] = 1;
      row_min = std::min(row_min, j);
      row_max = std::max(row_max, j);
      ++count;
    }
    // One interval per row, equal to the closed form of ALGORITHM.md section 2.
    if (count > 0 && count != row_max - row_min + 1)
      return where + "row i=" + std::to_string(i) + ": visible keys are not one interval";
    const int32_t cf_lo = std::max(0, s.window_left >= 0 ? pos - s.window_left : 0);
    const int32_t cf_hi = std::min(s.kv_len, s.causal ? pos + 1 : s.kv_len);
    const int32_t cf_count = std::max(0, cf_hi - cf_lo);
    if (cf_count != count || (count > 0 && (cf_lo != row_min || cf_hi != row_max + 1)))
      return where + "row i=" + std::to_string(i) + ": visible keys differ from the closed-form interval";
    if (count > 0) {
      kmin = std::min(kmin, row_min);
      kmax = std::max(kmax, row_max);
    }
  }
  if (kmin > kmax) {  // no row sees a key
    if (!r.empty() || r.tile_begin != r.tile_end) return where + "expected an empty tile range";
    if (r.interior_begin < r.interior_end) return where + "expected an empty interior";
    for (int32_t t = -2; t < s.kv_len / tile_n + 3; ++t)
      if (r.is_interior(t)) return where + "tile " + std::to_string(t) + " reported interior in an empty range";
    return "";
  }
  if (r.key_begin != kmin || r.key_end != kmax + 1)
    return where + "expected keys [" + std::to_string(kmin) + ", " + std::to_string(kmax + 1) + ")";
  const int32_t exp_tb = kmin / tile_n, exp_te = (kmax + 1 + tile_n - 1) / tile_n;
  if (r.tile_begin != exp_tb || r.tile_end != exp_te || r.empty())
    return where + "expected tiles [" + std::to_string(exp_tb) + ", " + std::to_string(exp_te) + ")";
  // Every tile in range holds a visible key; every tile outside holds none.
  const int32_t t_lo = -2, t_hi = s.kv_len / tile_n + 3;
  for (int32_t t = t_lo; t < t_hi; ++t) {
    bool has = false;
    for (int32_t j = t * tile_n; j < t * tile_n + tile_n; ++j)
      if (j >= j_lo && j < j_hi && any[static_cast<size_t>(j - j_lo)]) has = true;
    const bool in_range = t >= r.tile_begin && t < r.tile_end;
    if (has != in_range)
      return where + "tile " + std::to_string(t) + (in_range ? " in range holds no visible key" : " outside range holds a visible key");
  }
  // Interior tiles: exactly those where every key is visible to every row; contiguous.
  int32_t ib = -1, ie = -1;
  bool gap = false;
  for (int32_t t = t_lo; t < t_hi; ++t) {
    bool full = t >= 0;
    for (int32_t i = s.i_first; i <= s.i_last && full; ++i)
      for (int32_t j = t * tile_n; j < t * tile_n + tile_n && full; ++j)
        full = visible_ref(j, ctx + i, s.kv_len, s.causal, s.window_left);
    if (full && !(t >= r.tile_begin && t < r.tile_end))
      return where + "fully visible tile " + std::to_string(t) + " outside the visited range";
    if (r.is_interior(t) != full)
      return where + "tile " + std::to_string(t) + ": is_interior = " + std::to_string(!full) + ", brute force " +
             std::to_string(full);
    if (full) {
      if (ib < 0) ib = t;
      else if (ie != t) gap = true;
      ie = t + 1;
    }
  }
  if (gap) return where + "interior tiles are not contiguous";
  if (r.interior_begin < r.interior_end && (r.interior_begin < r.tile_begin || r.interior_end > r.tile_end))
    return where + "interior range outside the tile range";
  if (ib >= 0 && (r.interior_begin != ib || r.interior_end != ie))
    return where + "expected interior [" + std::to_string(ib) + ", " + std::to_string(ie) + ")";
  return "";
}

constexpr int32_t kTileNs[] = {1, 3, 16, 32, 64};

TEST(TileRange, ExhaustiveSmall) {
  int failures = 0;
  int64_t cases = 0;
  for (int32_t tile_n : kTileNs)
    for (int causal = 0; causal < 2; ++causal)
      for (int32_t kv_len = 0; kv_len <= 12; ++kv_len)
        for (int32_t q_len = 1; q_len <= (causal ? kv_len : 14); ++q_len)
          for (int32_t w = -1; w <= kv_len + 2; ++w)
            for (int32_t i0 = 0; i0 < q_len; ++i0)
              for (int32_t i1 = i0; i1 < q_len; ++i1) {
                const QBlockSpan s{i0, i1, q_len, kv_len, causal != 0, w};
                const std::string err = check_span(s, tile_n);
                ++cases;
                if (!err.empty() && ++failures <= 10) ADD_FAILURE() << err;
              }
  EXPECT_EQ(failures, 0) << "of " << cases << " cases";
}

TEST(TileRange, RandomUpTo300Keys) {
  const uint32_t seed = 20240611;
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937 rng(seed);
  auto uni = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
  int failures = 0;
  for (int it = 0; it < 30000; ++it) {
    const int32_t tile_n = kTileNs[uni(0, 4)];
    const bool causal = uni(0, 2) != 0;
    const int32_t kv_len = uni(0, 300);
    if (causal && kv_len == 0) continue;
    const int32_t q_len = causal ? uni(1, kv_len) : uni(1, 320);
    const int32_t rows = uni(1, std::min(q_len, 64));
    const int32_t i0 = uni(0, q_len - rows);
    // Windows: none, tiny, around the tile size, and larger than everything.
    int32_t w = -1;
    switch (uni(0, 4)) {
      case 0: w = -1; break;
      case 1: w = uni(0, 4); break;
      case 2: w = uni(0, 2 * tile_n + 8); break;
      case 3: w = uni(0, kv_len + 4); break;
      default: w = uni(kv_len, kv_len + 400); break;
    }
    const QBlockSpan s{i0, i0 + rows - 1, q_len, kv_len, causal, w};
    const std::string err = check_span(s, tile_n);
    if (!err.empty() && ++failures <= 10) ADD_FAILURE() << "it=" << it << ": " << err;
  }
  EXPECT_EQ(failures, 0);
}

// A decode-like q-block (one query) over a long sequence, and a prefill block in the middle of a long
// sequence with a window: spot values that are easy to verify by hand.
TEST(TileRange, HandPicked) {
  {  // one query at position 999 of 1000 keys, causal, tiles of 64: tiles [0, 16), interior [0, 15).
    const KvTileRange r = hipattn::kv_tile_range(QBlockSpan{0, 0, 1, 1000, true, -1}, 64);
    EXPECT_EQ(r.key_begin, 0);
    EXPECT_EQ(r.key_end, 1000);
    EXPECT_EQ(r.tile_begin, 0);
    EXPECT_EQ(r.tile_end, 16);
    EXPECT_EQ(r.interior_begin, 0);
    EXPECT_EQ(r.interior_end, 15);
  }
  {  // rows 64..127 of q_len 256, kv 1024 (ctx 768): positions 832..895; window 100: keys [732, 896);
     // tiles of 32: [22, 28); interior: t*32 >= 795 -> t >= 25, t*32+31 <= 832 -> t <= 25: [25, 26).
    const KvTileRange r = hipattn::kv_tile_range(QBlockSpan{64, 127, 256, 1024, true, 100}, 32);
    EXPECT_EQ(r.key_begin, 732);
    EXPECT_EQ(r.key_end, 896);
    EXPECT_EQ(r.tile_begin, 22);
    EXPECT_EQ(r.tile_end, 28);
    EXPECT_EQ(r.interior_begin, 25);
    EXPECT_EQ(r.interior_end, 26);
  }
}

// Checks split_tiles(begin, end, segments, .): "" or the first problem.
std::string check_split(int32_t begin, int32_t end, int32_t segments) {
  const std::string where = "begin=" + std::to_string(begin) + " end=" + std::to_string(end) +
                            " segments=" + std::to_string(segments) + ": ";
  const int32_t n = std::max(0, end - begin);
  const int32_t cap = (n + segments - 1) / segments;  // ceil(n / segments)
  int32_t cursor = begin;
  bool seen_empty = false;
  for (int32_t s = 0; s < segments; ++s) {
    int32_t a = -12345, b = -12345;
    hipattn::split_tiles(begin, end, segments, s, a, b);
    const std::string part = where + "part " + std::to_string(s) + " = [" + std::to_string(a) + ", " +
                             std::to_string(b) + ")";
    if (b < a) return part + ": negative size";
    const int32_t size = b - a;
    if (n == 0) {
      if (size != 0) return part + ": non-empty part of an empty range";
      continue;
    }
    if (size > cap) return part + ": larger than ceil(n/segments) = " + std::to_string(cap);
    if (size == 0) {
      seen_empty = true;
      continue;
    }
    if (seen_empty) return part + ": non-empty part after an empty one";
    if (a != cursor) return part + ": expected to start at " + std::to_string(cursor);
    cursor = b;
  }
  if (n > 0 && cursor != end) return where + "parts end at " + std::to_string(cursor);
  return "";
}

TEST(SplitTiles, PartitionInOrder) {
  int failures = 0;
  for (int32_t begin = 0; begin <= 5; ++begin)
    for (int32_t end = begin; end <= begin + 70; ++end)
      for (int32_t segments = 1; segments <= 70; ++segments) {
        const std::string err = check_split(begin, end, segments);
        if (!err.empty() && ++failures <= 10) ADD_FAILURE() << err;
      }
  const uint32_t seed = 777;
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937 rng(seed);
  auto uni = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
  for (int it = 0; it < 20000; ++it) {
    const int32_t begin = uni(0, 100000);
    const int32_t end = begin + (uni(0, 9) == 0 ? -uni(0, 5) : uni(0, 5000));
    const int32_t segments = uni(1, 64);
    const std::string err = check_split(begin, end, segments);
    if (!err.empty() && ++failures <= 20) ADD_FAILURE() << err;
  }
  EXPECT_EQ(failures, 0);
}

TEST(Varlen, FindSeqIdxMatchesBruteForce) {
  const uint32_t seed = 4242;
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937 rng(seed);
  auto uni = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
  int failures = 0;
  for (int it = 0; it < 3000; ++it) {
    const int32_t block_q = std::vector<int32_t>{1, 2, 3, 16, 64}[static_cast<size_t>(uni(0, 4))];
    const int32_t num_seqs = uni(1, 24);
    std::vector<int32_t> cu(static_cast<size_t>(num_seqs) + 1, 0);
    for (int32_t b = 0; b < num_seqs; ++b) {
      int32_t len;
      switch (uni(0, 5)) {
        case 0: len = 0; break;   // zero-length sequences
        case 1: len = 1; break;   // decode
        case 2: len = uni(1, block_q + 1); break;
        case 3: len = uni(1, 300); break;
        default: len = uni(0, 40); break;
      }
      cu[static_cast<size_t>(b) + 1] = cu[static_cast<size_t>(b)] + len;
    }
    const int32_t num_tokens = cu.back();
    const int32_t grid = num_tokens / block_q + num_seqs;
    std::string where = "block_q=" + std::to_string(block_q) + " cu={";
    for (int32_t c : cu) where += std::to_string(c) + ",";
    where += "}: ";
    // hits[b][k]: how often q-block k of sequence b is reached.
    std::vector<std::vector<int>> hits(static_cast<size_t>(num_seqs));
    for (int32_t b = 0; b < num_seqs; ++b) {
      const int32_t q_len = cu[static_cast<size_t>(b) + 1] - cu[static_cast<size_t>(b)];
      hits[static_cast<size_t>(b)].assign(static_cast<size_t>((q_len + block_q - 1) / block_q), 0);
      if (hipattn::seq_first_q_block(cu.data(), b, block_q) != cu[static_cast<size_t>(b)] / block_q + b &&
          ++failures <= 10)
        ADD_FAILURE() << where << "seq_first_q_block(" << b << ")";
    }
    for (int32_t idx = 0; idx < grid; ++idx) {
      int32_t expect = 0;
      for (int32_t b = 0; b < num_seqs; ++b)
        if (cu[static_cast<size_t>(b)] / block_q + b <= idx) expect = b;
      const int32_t got = hipattn::find_seq_idx(cu.data(), num_seqs, idx, block_q);
      if (got != expect) {
        if (++failures <= 10) ADD_FAILURE() << where << "block " << idx << ": expected seq " << expect << ", got " << got;
        continue;
      }
      const int32_t local = idx - (cu[static_cast<size_t>(expect)] / block_q + expect);
      const int32_t q_len = cu[static_cast<size_t>(expect) + 1] - cu[static_cast<size_t>(expect)];
      if (local < 0 && ++failures <= 10) ADD_FAILURE() << where << "block " << idx << ": negative local block";
      if (local >= 0 && static_cast<int64_t>(local) * block_q < q_len) ++hits[static_cast<size_t>(expect)][static_cast<size_t>(local)];
    }
    for (int32_t b = 0; b < num_seqs; ++b)
      for (size_t k = 0; k < hits[static_cast<size_t>(b)].size(); ++k)
        if (hits[static_cast<size_t>(b)][k] != 1 && ++failures <= 10)
          ADD_FAILURE() << where << "seq " << b << " q-block " << k << " reached " << hits[static_cast<size_t>(b)][k]
                        << " times";
  }
  EXPECT_EQ(failures, 0);
}

// locate(j) of a view against j / page, j % page in 64-bit arithmetic.
template <class View>
int check_locate(const View& view, int64_t page, const std::vector<int32_t>& js, const std::string& what) {
  int failures = 0;
  for (int32_t j : js) {
    int32_t pg = -1, slot = -1;
    view.locate(j, pg, slot);
    const int64_t ep = static_cast<int64_t>(j) / page, es = static_cast<int64_t>(j) % page;
    if ((pg != ep || slot != es) && ++failures <= 5)
      ADD_FAILURE() << what << " page size " << page << ", j=" << j << ": expected (" << ep << ", " << es
                    << "), got (" << pg << ", " << slot << ")";
  }
  return failures;
}

std::vector<int32_t> key_samples(int64_t page, std::mt19937& rng) {
  std::vector<int32_t> js;
  for (int32_t j = 0; j < 4096; ++j) js.push_back(j);
  for (int64_t k = 1; k * page < std::numeric_limits<int32_t>::max(); k = k * 3 + 1)
    for (int64_t d = -1; d <= 1; ++d) {
      const int64_t j = k * page + d;
      if (j >= 0 && j <= std::numeric_limits<int32_t>::max()) js.push_back(static_cast<int32_t>(j));
    }
  std::uniform_int_distribution<int32_t> any(0, std::numeric_limits<int32_t>::max());
  for (int i = 0; i < 2000; ++i) js.push_back(any(rng));
  js.push_back(std::numeric_limits<int32_t>::max());
  return js;
}

TEST(PagedKv, LocateRuntimePageSize) {
  const uint32_t seed = 99;
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937 rng(seed);
  int failures = 0;
  std::vector<uint32_t> pages;
  for (uint32_t p = 1; p <= 300; ++p) pages.push_back(p);
  for (uint32_t p : {511u, 512u, 1000u, 1024u, 4097u, 65537u}) pages.push_back(p);
  for (uint32_t page : pages) {
    hipattn::PagedKvView<int64_t, 0> view;
    view.page_size = static_cast<int32_t>(page);
    view.page_div = hipattn::FastDivmod(page);
    failures += check_locate(view, page, key_samples(page, rng), "runtime");
  }
  EXPECT_EQ(failures, 0);
}

template <int kPage>
int check_const_page(std::mt19937& rng) {
  hipattn::PagedKvView<int64_t, kPage> v64;
  hipattn::PagedKvView<int32_t, kPage> v32;
  // The constant path must not depend on the runtime fields: leave them inconsistent on purpose.
  v64.page_size = v32.page_size = 7;
  v64.page_div = v32.page_div = hipattn::FastDivmod(7);
  const auto js = key_samples(kPage, rng);
  return check_locate(v64, kPage, js, "constexpr/int64") + check_locate(v32, kPage, js, "constexpr/int32");
}

TEST(PagedKv, LocateConstantPageSize) {
  std::mt19937 rng(5);
  int failures = check_const_page<16>(rng) + check_const_page<32>(rng) + check_const_page<64>(rng) +
                 check_const_page<128>(rng);
  EXPECT_EQ(failures, 0);
}

TEST(PagedKv, OffsetsAre64BitForLargeBlocks) {
  // NHD cache of 16-token blocks, 8 kv heads, head size 128: 16384 elements per block, so block ids past
  // 131072 address beyond 2^31 elements.
  hipattn::PagedKvView<int64_t, 16> view;
  view.k_stride_block = 16 * 8 * 128, view.k_stride_slot = 8 * 128, view.k_stride_head = 128;
  // V HND with a padded block stride.
  view.v_stride_block = 16 * 8 * 128 + 64, view.v_stride_slot = 128, view.v_stride_head = 16 * 128;
  view.s_stride_block = 16 * 8, view.s_stride_slot = 8, view.s_stride_head = 1;
  const uint32_t seed = 1234;
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> blk_d(0, std::numeric_limits<int32_t>::max() / 2), slot_d(0, 15), h_d(0, 7);
  int beyond = 0;
  std::vector<int32_t> blks{0, 1, 131071, 131072, 131073, 1 << 20, std::numeric_limits<int32_t>::max()};
  for (int i = 0; i < 2000; ++i) blks.push_back(blk_d(rng));
  for (int32_t blk : blks) {
    const int32_t slot = slot_d(rng), kvh = h_d(rng);
    // Expected offsets in 128-bit arithmetic, so no overflow can hide in the expectation either.
    const __int128 ek = static_cast<__int128>(blk) * (16 * 8 * 128) + static_cast<__int128>(slot) * (8 * 128) +
                        static_cast<__int128>(kvh) * 128;
    const __int128 ev = static_cast<__int128>(blk) * (16 * 8 * 128 + 64) + static_cast<__int128>(slot) * 128 +
                        static_cast<__int128>(kvh) * (16 * 128);
    const __int128 es = static_cast<__int128>(blk) * 128 + static_cast<__int128>(slot) * 8 + kvh;
    const int64_t k = view.k_offset(blk, slot, kvh), v = view.v_offset(blk, slot, kvh), s = view.scale_offset(blk, slot, kvh);
    EXPECT_TRUE(static_cast<__int128>(k) == ek) << "blk=" << blk << " slot=" << slot << " kvh=" << kvh << " k=" << k;
    EXPECT_TRUE(static_cast<__int128>(v) == ev) << "blk=" << blk << " slot=" << slot << " kvh=" << kvh << " v=" << v;
    EXPECT_TRUE(static_cast<__int128>(s) == es) << "blk=" << blk << " slot=" << slot << " kvh=" << kvh << " s=" << s;
    if (ek > (static_cast<__int128>(1) << 31)) ++beyond;
  }
  EXPECT_GT(beyond, 1000);  // the test really exercises offsets past 2^31
  // A 32-bit view of a small cache gives the same offsets.
  hipattn::PagedKvView<int32_t, 0> small;
  small.k_stride_block = 1000, small.k_stride_slot = 40, small.k_stride_head = 5;
  for (int32_t blk = 0; blk < 200; ++blk)
    EXPECT_EQ(small.k_offset(blk, blk % 25, blk % 8), blk * 1000 + (blk % 25) * 40 + (blk % 8) * 5);
}

TEST(PagedKv, PhysicalBlockReadsTheRowOfItsSequence) {
  // 3 sequences, row stride 5 (max_blocks_per_seq 4 plus padding).
  const std::vector<int32_t> table{10, 11, 12, 13, -1, 20, 21, 22, 23, -1, 30, 31, 32, 33, -1};
  hipattn::PagedKvView<int64_t, 0> view;
  view.block_table = table.data();
  view.block_table_stride = 5;
  for (int32_t b = 0; b < 3; ++b)
    for (int32_t pg = 0; pg < 4; ++pg) EXPECT_EQ(view.physical_block(b, pg), 10 * (b + 1) + pg) << b << " " << pg;
}

}  // namespace
