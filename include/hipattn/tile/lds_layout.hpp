// hipattn/tile/lds_layout.hpp: the shared-memory (LDS) layout of Q/K/V tiles.
//
// A tile is [rows][D] 16-bit elements, stored row by row in 16-byte chunks with the chunk index
// XOR-swizzled by (row % 8): chunk c of row r lives at chunk (c ^ (r & 7)). Eight consecutive rows
// read at one logical chunk (an ldmatrix / ds_read of 8 rows) then touch 8 different 16-byte bank
// groups, so the reads and the 16-byte writes of the loaders are free of bank conflicts.
// The swizzle permutes chunks within aligned groups of 8, so a row's storage (its pitch, kPitch) is
// D rounded up to a multiple of 64 elements (8 chunks, 128 bytes): D = 64, 128, 192, 256 are stored
// as they are; D = 96 (12 chunks) gets a 128-element (256-byte) pitch: chunks 8..11 land on 4 of the
// slots 8..15 (which 4 depends on the row), the other 4 are padding, never read or written. Every
// user sizes and strides a 16-bit LDS tile by kPitch (kElems, kBytes), never by D.
#pragma once
#include <cstdint>

#include "hipattn/platform/config.hpp"

namespace hipattn {

template <int kRows, int kD>
struct SwizzledTile {
  static_assert(kD > 0 && kD % 8 == 0, "row length must be a multiple of 8 elements (16-byte chunks)");
  static constexpr int kChunksPerRow = kD / 8;          // 16-byte chunks of 8 x 16-bit elements, read/written
  static constexpr int kPitch = (kD + 63) / 64 * 64;    // elements a row occupies (8-chunk aligned, padded)
  static constexpr int kPitchChunks = kPitch / 8;
  static constexpr int kElems = kRows * kPitch;         // storage, padding included
  static constexpr int kBytes = kElems * 2;
  // Element index of (row, chunk c) in the tile: the first of 8 contiguous elements. c < kChunksPerRow;
  // c ^ (row & 7) stays in c's aligned group of 8 chunks, so inside the row's pitch.
  HIPATTN_HOST_DEVICE static constexpr int chunk_index(int row, int c) { return row * kPitch + ((c ^ (row & 7)) << 3); }
  // Element index of (row, col).
  HIPATTN_HOST_DEVICE static constexpr int index(int row, int col) { return chunk_index(row, col >> 3) + (col & 7); }
};

}  // namespace hipattn
