// hipattn/dispatch/tiles/sm90.hpp: the tiles sm_90 (H100 / H200) runs, with the reason for each.
#pragma once
#include "hipattn/dispatch/tiles/tile.hpp"

namespace hipattn {

// The skeleton's tiles, by head size. Decode tiles put 16 rows (the GQA group of one token) on one
// row band and split each 64-key tile over 4 warps: the matrix unit is idle anyway and the loads of 4
// warps keep more bytes in flight. Prefill tiles give each of 4 warps its own 16 rows (64 per
// workgroup) and the whole key tile, the FlashAttention-2 split that needs no cross-warp merge.
// Registers: __launch_bounds__(128) lets ptxas use up to 255 per thread.
constexpr UnifiedTile sm90_tile(UnifiedTileKind kind, int head_size, bool fp8) {
  if (kind == UnifiedTileKind::decode) {
    if (fp8 && head_size <= 128)
      return {1, 4, 1, 16, 3, 255, "decode, fp8: 1x4 warps split 64 keys; 3 code stages (converted at the fragment): "
                                   "16 KiB each, 4 workgroups an SM at d=64 (4 stages: 3, 1.36x slower), 4 no faster at 128"};
    if (fp8)
      return {1, 4, 1, 16, 2, 255, "decode, fp8: 1x4 warps split 64 keys; 2 code stages of 32 KiB at d=192 / 256 (3 no faster)"};
    if (head_size <= 128)
      return {1, 4, 1, 16, 3, 255, "decode: 1x4 warps split 64 keys; 3 stages fit in 96 KiB at d<=128"};
    return {1, 4, 1, 16, 2, 255, "decode: 1x4 warps split 64 keys; 2 stages (d=256 tiles are 32 KiB; d=192 24 KiB)"};
  }
  if (head_size <= 128)
    return {4, 1, 1, 64, 2, 255, "prefill: 4x1 warps of 16 rows, 64-key tiles, double buffered; 236 registers, no "
                                 "spill (32-row warps measured no faster and spill at 255: bench/NOTES.md)"};
  return {4, 1, 1, 32, 2, 255, "prefill: 32-key tiles keep S + O + Q fragments of d=192 and 256 under 255 registers"};
}

// The head sizes paged decode's verify tile serves: none yet (not measured on the H200; MTP verify
// rows of 17-32 take the prefill tile). sm90_tile answers the verify kind with the prefill tile.
constexpr bool sm90_verify_head(int /*head_size*/) { return false; }

// The MLA kernel's tile (kernels/mla_decode: 64 rows, 32-key tiles).
constexpr MlaTile sm90_mla_tile() { return {64, 32}; }

}  // namespace hipattn
