// hipattn/paged/varlen.hpp: varlen sequence lookup over cu_seqlens_q.
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

// The sequence that owns q-block `block_idx` when sequence b's q-blocks are numbered from
// cu_seqlens_q[b] / block_q + b (an upper-bound numbering that needs no prefix sum: the grid has
// num_tokens / block_q + num_seqs blocks). Binary search over cu_seqlens_q [num_seqs + 1].
HIPATTN_HOST_DEVICE inline int32_t find_seq_idx(const int32_t* cu_seqlens_q, int32_t num_seqs, int32_t block_idx,
                                                int32_t block_q) {
  int32_t lo = 0, hi = num_seqs;  // answer in [0, num_seqs)
  while (hi - lo > 1) {
    const int32_t mid = (lo + hi) / 2;
    const int32_t start = cu_seqlens_q[mid] / block_q + mid;
    if (start <= block_idx) lo = mid; else hi = mid;
  }
  return lo;
}

// First q-block index of sequence b in the numbering above.
HIPATTN_HOST_DEVICE inline int32_t seq_first_q_block(const int32_t* cu_seqlens_q, int32_t b, int32_t block_q) {
  return cu_seqlens_q[b] / block_q + b;
}

}  // namespace hipattn
