// hipattn/kernels/common/work.hpp: work decomposition of the attention kernels: which sequence,
// q-block, KV head, head chunk and KV segment a workgroup owns (a scheduler), and where each row of
// its tile lives (the row map).
//
// A scheduler is a type with
//   static bool get(const Args&, AttentionWork&)   false when the workgroup has nothing to do
//   static void tiles(const Args&, const AttentionWork&, const KvTileRange&, int32_t& begin, int32_t& end)
//                                                 the KV tiles the workgroup walks
// QBlockScheduler<false> is the 2D grid (q-blocks x (kv heads x head chunks)), QBlockScheduler<true>
// the 3D split (the same x segments); both read the direct decode grid (blockIdx.x is the sequence)
// when every q length is 1. DecodeTaskScheduler is the paged-decode family's (planner tasks, or one
// task a sequence).
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/paged/varlen.hpp"
#include "hipattn/platform/config.hpp"
#include "hipattn/tile/tile_range.hpp"
#include "hipattn/tile/variants.hpp"

namespace hipattn {

// What one workgroup computes.
struct AttentionWork {
  int32_t seq = 0;       // sequence
  int32_t qb = 0;        // q-block within the sequence
  int32_t kvh = 0;       // kv head
  int32_t chunk = 0;     // head chunk (GQA groups wider than the tile)
  int32_t segment = 0;   // KV segment (split-KV)
  int32_t seq_tok0 = 0;  // first token of the sequence
  int32_t q_len = 0, kv_len = 0, ctx = 0;  // ctx = kv_len - q_len (bottom-right alignment)
  int32_t tile_begin = 0, tile_end = 0;     // planned split-KV: the task's tiles (read once, by tiles())
};

// Where a row of the workgroup tile lives.
struct RowCoord {
  bool valid;
  int32_t token;  // global token index
  int32_t q_head;
  RowInfo info;
};

// Row `row` of the tile: rows are (token, head-in-chunk) pairs, rows_per_token heads per token.
template <class Args>
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE RowCoord row_coord(const Args& a, const AttentionWork& w, int row) {
  RowCoord rc{};
  uint32_t tok, hh;
  a.rows_div.divmod(static_cast<uint32_t>(row), tok, hh);
  const int32_t head_in_group = w.chunk * a.rows_per_token + static_cast<int32_t>(hh);
  const int32_t i = w.qb * a.block_q + static_cast<int32_t>(tok);
  rc.valid = static_cast<int32_t>(tok) < a.block_q && i < w.q_len && head_in_group < a.group;
  rc.token = w.seq_tok0 + i;
  rc.q_head = w.kvh * a.group + head_in_group;
  rc.info = RowInfo{i, w.ctx + i, w.ctx, rc.q_head};
  return rc;
}

// The q-block's keys [first query's first visible key, last query's last visible key] as tiles.
template <class Args>
HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE KvTileRange qblock_tile_range(const Args& a, const AttentionWork& w,
                                                                       int32_t tile_n) {
  const int32_t i_first = w.qb * a.block_q;
  const int32_t i_last = (w.q_len < i_first + a.block_q ? w.q_len : i_first + a.block_q) - 1;
  return kv_tile_range(QBlockSpan{i_first, i_last, w.q_len, w.kv_len, a.causal, a.window_left}, tile_n);
}

#if defined(HIPATTN_HAS_DEVICE)
template <bool kSplit>
struct QBlockScheduler {
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static bool get(const Args& a, AttentionWork& w) {
    if (kSplit && a.tasks != nullptr) {  // planned (decode grid): slot x is task x of the device plan
      const PlanTask t = a.tasks[blockIdx.x];
      if (t.item < 0) return false;  // an empty slot
      w.seq = t.item;
      w.qb = 0;
      w.tile_begin = t.tile_begin;
      w.tile_end = t.tile_end;
    } else if (a.decode_grid) {
      w.seq = static_cast<int32_t>(blockIdx.x);
      w.qb = 0;
    } else {
      // Highest q-blocks first: under causal masking they see the most keys, so starting them first
      // leaves the short blocks for the last wave instead of a tail of long ones.
      const int32_t qblock = static_cast<int32_t>(gridDim.x - 1 - blockIdx.x);
      w.seq = find_seq_idx(a.cu_seqlens_q, a.num_seqs, qblock, a.block_q);
      w.qb = qblock - seq_first_q_block(a.cu_seqlens_q, w.seq, a.block_q);
    }
    if (w.seq >= a.num_seqs) return false;
    w.seq_tok0 = a.cu_seqlens_q[w.seq];
    w.q_len = a.cu_seqlens_q[w.seq + 1] - w.seq_tok0;
    if (w.qb * a.block_q >= w.q_len) return false;  // past this sequence's q-blocks (the grid is an upper bound)
    w.kv_len = a.seq_lens_k[w.seq];
    w.ctx = w.kv_len - w.q_len;
    w.kvh = static_cast<int32_t>(blockIdx.y) / a.head_chunks;
    w.chunk = static_cast<int32_t>(blockIdx.y) % a.head_chunks;
    w.segment = !kSplit ? 0 : a.tasks != nullptr ? static_cast<int32_t>(blockIdx.x) : static_cast<int32_t>(blockIdx.z);
    return true;
  }
  // 2D: every visible tile; 3D: the segment's share (near-equal parts of the visible tiles), or the
  // planned task's tiles (the planner's range of the same visible tiles).
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void tiles(const Args& a, const AttentionWork& w, const KvTileRange& r,
                                                       int32_t& begin, int32_t& end) {
    begin = r.tile_begin;
    end = r.tile_end;
    if constexpr (kSplit) {
      if (a.tasks != nullptr) {
        begin = w.tile_begin;
        end = w.tile_end;
      } else {
        split_tiles(r.tile_begin, r.tile_end, a.num_segments, w.segment, begin, end);
      }
    }
  }
};

// The paged-decode grid (kernels/paged_decode): one dimension, slot-major: workgroup x is slot
// x / grid_y, (kv head, head chunk, q-block) x % grid_y, so every head of slot 0 starts first (the
// plan puts the long tasks in the first slots). A slot is a task of the device plan (planned), or
// segment s of sequence q (slot q * num_segments + s) of near-equal parts of its tiles (uniform;
// one partition: one segment). Every sequence has a.q_len query rows, token
// seq * q_len + i. A slot past the plan's last task exits without touching memory.
struct DecodeTaskScheduler {
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static bool get(const Args& a, AttentionWork& w) {
    uint32_t slot_u, y_u;
    a.grid_y_div.divmod(static_cast<uint32_t>(blockIdx.x), slot_u, y_u);
    const int32_t slot = static_cast<int32_t>(slot_u);
    if (a.tasks != nullptr) {
      const PlanTask t = a.tasks[slot];
      if (t.item < 0) return false;  // an empty slot
      w.seq = t.item;
      w.tile_begin = t.tile_begin;
      w.tile_end = t.tile_end;
    } else {  // one partition (num_segments 1) or uniform segments: slot = seq * num_segments + segment
      w.seq = slot / a.num_segments;
      if (w.seq >= a.num_seqs) return false;
      w.tile_begin = slot - w.seq * a.num_segments;  // the segment, until tiles() splits the range
      w.tile_end = -1;
    }
    int32_t y = static_cast<int32_t>(y_u);
    w.qb = y % a.q_blocks;
    y /= a.q_blocks;
    w.chunk = y % a.head_chunks;
    w.kvh = y / a.head_chunks;
    w.segment = slot;
    w.q_len = a.q_len;
    w.seq_tok0 = w.seq * a.q_len;
    const int32_t kv_len = a.seq_lens_k[w.seq];
    w.kv_len = kv_len > 0 ? kv_len : 0;
    w.ctx = w.kv_len - w.q_len;  // negative when the context is shorter than q_len: those rows see no key
    return true;
  }
  // Planned: the task's tiles within the q-block's visible tiles (a q-block of earlier rows may see
  // fewer). Unplanned: segment w.tile_begin of num_segments near-equal parts of the visible tiles.
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void tiles(const Args& a, const AttentionWork& w, const KvTileRange& r,
                                                       int32_t& begin, int32_t& end) {
    if (w.tile_end < 0) {
      split_tiles(r.tile_begin, r.tile_end, a.num_segments, w.tile_begin, begin, end);
      return;
    }
    begin = r.tile_begin > w.tile_begin ? r.tile_begin : w.tile_begin;
    end = r.tile_end < w.tile_end ? r.tile_end : w.tile_end;
    if (end < begin) end = begin;
  }
};
#endif

}  // namespace hipattn
