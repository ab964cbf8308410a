// hipattn/tile/lds_layout.hpp: the shared-memory (LDS) layout of Q/K/V tiles.
//
// A tile is [rows][D] 16-bit elements, stored row by row in 16-byte chunks with the chunk index
// XOR-swizzled by (row % 8): chunk c of row r lives at chunk (c ^ (r & 7)). Eight consecutive rows
// read at one logical chunk (an ldmatrix / ds_read of 8 rows) then touch 8 different 16-byte bank
// groups, so the reads and the 16-byte writes of the loaders are free of bank conflicts. D must be a
// multiple of 64 (8 chunks), which every supported head size is.
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

template <int kRows, int kD>
struct SwizzledTile {
  static_assert(kD % 64 == 0, "row length must be a multiple of 64 elements (8 chunks of 16 bytes)");
  static constexpr int kChunksPerRow = kD / 8;  // 16-byte chunks of 8 x 16-bit elements
  static constexpr int kElems = kRows * kD;
  static constexpr int kBytes = kElems * 2;
  // Element index of (row, chunk c) in the tile: the first of 8 contiguous elements.
  HIPATTN_HOST_DEVICE static constexpr int chunk_index(int row, int c) { return row * kD + ((c ^ (row & 7)) << 3); }
  // Element index of (row, col).
  HIPATTN_HOST_DEVICE static constexpr int index(int row, int col) { return chunk_index(row, col >> 3) + (col & 7); }
};

}  // namespace hipattn
