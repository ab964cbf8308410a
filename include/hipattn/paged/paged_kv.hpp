// hipattn/paged/paged_kv.hpp: a paged KV cache seen through a block table.
//
// Cache tensors are [num_blocks, block_size, num_kv_heads, head_size] (NHD) or
// [num_blocks, num_kv_heads, block_size, head_size] (HND): the three strides say which. Offsets are
// computed in `Offset`: the dispatcher's instances use int64_t; int32_t is exact only while
// num_blocks * block_stride stays below 2^31 elements (needs_64bit_offsets says when it does not).
// The page size is a runtime value divided with FastDivmod (kPageSize == 0, what the dispatcher
// instantiates); kPageSize > 0 makes it a compile-time constant instead.
//
// The cache layout is a policy type (Layout), read by the loaders at compile time:
//   RowKvLayout   NHD / HND: a key's and a value's head_size elements are contiguous (the strides
//                 say which of the two)
//   RocmKvLayout  ROCm paged attention: K [num_blocks, num_kv_heads, head_size / x, block_size, x]
//                 (a key is head_size / x chunks of x elements, k_stride_chunk apart; k_stride_slot
//                 between slots), V [num_blocks, num_kv_heads, head_size, block_size] (a value's
//                 dimensions v_stride_dim apart, slots contiguous: loaded as 8 slots of one dimension
//                 and transposed in registers, kernels/common/loaders/staged.hpp)
#pragma once
#include <cstdint>

#include "hipattn/numeric/fast_div.hpp"
#include "hipattn/platform/config.hpp"

namespace hipattn {

struct RowKvLayout {
  static constexpr bool kChunkedKeys = false;       // a key's chunks are contiguous
  static constexpr bool kTransposedValues = false;  // a value's dimensions are contiguous
  static constexpr bool kDense = false;             // blocks come from the block table
};
// Contiguous K / V (dense prefill on the paged loaders): a "page" of one token, whose physical block
// is the token's row: block_table[seq] + j (block_table = cu_seqlens_k), or seq x block_table_stride + j
// when block_table is null (batched: block_table_stride = tokens per sequence); k_stride_block is then
// the token stride. No table is read per key.
struct DenseKvLayout {
  static constexpr bool kChunkedKeys = false;
  static constexpr bool kTransposedValues = false;
  static constexpr bool kDense = true;
};
struct RocmKvLayout {
  static constexpr bool kChunkedKeys = true;
  static constexpr bool kTransposedValues = true;
  static constexpr bool kDense = false;
  static constexpr int kValueSlots = 8;  // consecutive slots of one value dimension a load covers
};

template <class Offset, int kPageSize = 0, class Layout_ = RowKvLayout>
struct PagedKvView {
  using Layout = Layout_;
  const void* k = nullptr;  // cache base pointers (element type known to the caller)
  const void* v = nullptr;
  // Strides in elements, < 2^31 (validated); products with block ids are formed in Offset.
  int32_t k_stride_block = 0, k_stride_slot = 0, k_stride_head = 0;
  int32_t v_stride_block = 0, v_stride_slot = 0, v_stride_head = 0;
  int32_t k_stride_chunk = 0;  // RocmKvLayout: between the 16-byte chunks of a key
  int32_t v_stride_dim = 0;    // RocmKvLayout: between the dimensions of a value
  const float* k_scale = nullptr;  // per (slot, head) scales, or null
  const float* v_scale = nullptr;
  int32_t s_stride_block = 0, s_stride_slot = 0, s_stride_head = 0;
  const int32_t* block_table = nullptr;  // [num_seqs, block_table_stride]
  int32_t block_table_stride = 0;
  int32_t page_size = 0;
  FastDivmod page_div;  // used when kPageSize == 0

  // (page, slot) of key j.
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE void locate(int32_t j, int32_t& page, int32_t& slot) const {
    if constexpr (kPageSize > 0) {
      page = j / kPageSize;
      slot = j % kPageSize;
    } else {
      uint32_t q, r;
      page_div.divmod(static_cast<uint32_t>(j), q, r);
      page = static_cast<int32_t>(q);
      slot = static_cast<int32_t>(r);
    }
  }
  // Physical block of logical page `page` of sequence `seq`.
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE int32_t physical_block(int32_t seq, int32_t page) const {
    if constexpr (Layout::kDense)
      return (block_table != nullptr ? block_table[seq] : seq * block_table_stride) + page;
    return block_table[static_cast<int64_t>(seq) * block_table_stride + page];
  }
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE Offset k_offset(int32_t blk, int32_t slot, int32_t kvh) const {
    return static_cast<Offset>(blk) * static_cast<Offset>(k_stride_block) +
           static_cast<Offset>(slot) * static_cast<Offset>(k_stride_slot) +
           static_cast<Offset>(kvh) * static_cast<Offset>(k_stride_head);
  }
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE Offset v_offset(int32_t blk, int32_t slot, int32_t kvh) const {
    return static_cast<Offset>(blk) * static_cast<Offset>(v_stride_block) +
           static_cast<Offset>(slot) * static_cast<Offset>(v_stride_slot) +
           static_cast<Offset>(kvh) * static_cast<Offset>(v_stride_head);
  }
  // Element offset of 16-byte chunk c (kChunkElems elements) of a key from its k_offset.
  template <int kChunkElems>
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE Offset k_chunk(int c) const {
    if constexpr (Layout::kChunkedKeys) return static_cast<Offset>(c) * static_cast<Offset>(k_stride_chunk);
    else return static_cast<Offset>(c * kChunkElems);
  }
  // Element offset of dimension `dim` of a value from its v_offset.
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE Offset v_dim(int dim) const {
    if constexpr (Layout::kTransposedValues) return static_cast<Offset>(dim) * static_cast<Offset>(v_stride_dim);
    else return static_cast<Offset>(dim);
  }
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE Offset scale_offset(int32_t blk, int32_t slot, int32_t kvh) const {
    return static_cast<Offset>(blk) * static_cast<Offset>(s_stride_block) +
           static_cast<Offset>(slot) * static_cast<Offset>(s_stride_slot) +
           static_cast<Offset>(kvh) * static_cast<Offset>(s_stride_head);
  }
};

}  // namespace hipattn
