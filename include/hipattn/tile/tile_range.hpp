// hipattn/tile/tile_range.hpp: the trip-count interface: which KV tiles a q-block must visit, and which
// of those are interior (no per-element mask) or edge (masked).
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

// The rows of one q-block, in the coordinates of one sequence. Query i has absolute position
// context_len + i, context_len = kv_len - q_len (ALGORITHM.md section 1).
struct QBlockSpan {
  int32_t i_first;    // first valid query index of the block (within the sequence)
  int32_t i_last;     // last valid query index (inclusive), i_last >= i_first
  int32_t q_len;
  int32_t kv_len;
  bool causal;
  int32_t window_left;  // -1: no window
};

// The KV keys and tiles a q-block visits. Keys outside [key_begin, key_end) are never read.
// Tiles [tile_begin, tile_end) are visited; [interior_begin, interior_end) (a sub-range, possibly
// empty) need no mask for any row of the block; the others are edge tiles.
struct KvTileRange {
  int32_t key_begin, key_end;
  int32_t tile_begin, tile_end;
  int32_t interior_begin, interior_end;
  HIPATTN_HOST_DEVICE constexpr bool empty() const { return tile_begin >= tile_end; }
  HIPATTN_HOST_DEVICE constexpr bool is_interior(int32_t t) const { return t >= interior_begin && t < interior_end; }
};

HIPATTN_HOST_DEVICE constexpr int32_t floor_div_nonneg(int32_t a, int32_t b) { return a / b; }
HIPATTN_HOST_DEVICE constexpr int32_t ceil_div_nonneg(int32_t a, int32_t b) { return (a + b - 1) / b; }

// Keys a q-block can see, and its tile split, for tiles of `tile_n` keys.
HIPATTN_HOST_DEVICE constexpr KvTileRange kv_tile_range(const QBlockSpan& s, int32_t tile_n) {
  const int32_t ctx = s.kv_len - s.q_len;
  const int32_t pos_lo = ctx + s.i_first;  // smallest query position in the block
  const int32_t pos_hi = ctx + s.i_last;   // largest
  int32_t key_end = s.kv_len;
  if (s.causal && pos_hi + 1 < key_end) key_end = pos_hi + 1;
  int32_t key_begin = 0;
  if (s.window_left >= 0 && pos_lo - s.window_left > 0) key_begin = pos_lo - s.window_left;
  KvTileRange r{0, 0, 0, 0, 0, 0};
  if (key_end <= 0 || key_begin >= key_end) return r;
  r.key_begin = key_begin;
  r.key_end = key_end;
  r.tile_begin = floor_div_nonneg(key_begin, tile_n);
  r.tile_end = ceil_div_nonneg(key_end, tile_n);
  // Interior: tile [t*n, t*n+n) is fully visible to every row of the block.
  //   t*n + n <= kv_len;  causal: t*n + n - 1 <= pos_lo;  window: t*n >= pos_hi - window_left.
  int32_t ie = floor_div_nonneg(s.kv_len, tile_n);
  if (s.causal) {
    const int32_t c = pos_lo + 1 >= 0 ? floor_div_nonneg(pos_lo + 1, tile_n) : 0;
    if (c < ie) ie = c;
  }
  int32_t ib = r.tile_begin;
  if (s.window_left >= 0) {
    const int32_t lo = pos_hi - s.window_left;
    const int32_t c = lo > 0 ? ceil_div_nonneg(lo, tile_n) : 0;
    if (c > ib) ib = c;
  }
  if (ie > r.tile_end) ie = r.tile_end;
  if (ib >= ie) ib = ie = r.tile_begin;  // empty interior
  r.interior_begin = ib;
  r.interior_end = ie;
  return r;
}

// Whether key j is visible to the query at absolute position pos (the mask of ALGORITHM.md, step 3).
HIPATTN_HOST_DEVICE constexpr bool key_visible(int32_t j, int32_t pos, int32_t kv_len, bool causal, int32_t window_left) {
  return j >= 0 && j < kv_len && (!causal || j <= pos) && (window_left < 0 || j >= pos - window_left);
}

// Split tiles [begin, end) into `segments` near-equal contiguous parts; part s of them.
HIPATTN_HOST_DEVICE constexpr void split_tiles(int32_t begin, int32_t end, int32_t segments, int32_t s,
                                               int32_t& seg_begin, int32_t& seg_end) {
  const int32_t n = end > begin ? end - begin : 0;
  const int32_t per = (n + segments - 1) / segments;
  seg_begin = begin + s * per;
  seg_end = seg_begin + per;
  if (seg_begin > end) seg_begin = end;
  if (seg_end > end) seg_end = end;
}

}  // namespace hipattn
