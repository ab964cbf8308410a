// hipattn/dispatch/tiles/gfx942.hpp: the tiles gfx942 (MI300) runs, with the reason for each.
#pragma once
#include "hipattn/dispatch/tiles/tile.hpp"

namespace hipattn {

// The skeleton's tiles (64 KiB of LDS per CU, 512 VGPRs + AGPRs per SIMD lane). The loads are
// register-staged (the next tile waits in registers), so one LDS stage suffices (a barrier after
// each tile's compute frees it): 16-bit tiles of 32 KiB or less leave room for two or more
// workgroups per CU. Register budgets are what the compiled kernels need (tests/emu checks them):
// up to d = 128, 16-row bands keep S, O, Q and the staged loads under 256 (two waves per SIMD);
// d = 192 and 256 need more (one wave per SIMD: docs/NEXT.md).
constexpr UnifiedTile gfx942_tile(UnifiedTileKind kind, int head_size) {
  if (kind == UnifiedTileKind::decode) {
    if (head_size <= 128)
      return {1, 2, 1, 16, 1, 256, "decode: 1x2 waves split 32 keys, one stage: 20 KiB at d=128 (3 per CU)"};
    if (head_size <= 192)
      return {1, 2, 1, 16, 1, 512, "decode: 1x2 waves, one stage: 30 KiB (2 per CU); 312-336 registers: 1 wave/SIMD"};
    return {1, 1, 1, 16, 1, 512, "decode: one wave, 16-key tiles, one stage: 24 KiB (2 per CU); 384-448 registers"};
  }
  if (kind == UnifiedTileKind::verify && head_size <= 128)
    return {2, 1, 1, 16, 1, 256, "verify: 2x1 waves of 16 rows, 16-key tiles, one stage: 16 KiB (4 per CU)"};
  if (head_size <= 128)
    return {4, 1, 1, 16, 1, 256, "prefill: 4x1 waves of 16 rows, 16-key tiles, one stage: 24 KiB (2 per CU, 8 waves)"};
  return {2, 1, 1, 16, 1, 512, "prefill: 2x1 waves, 16-key tiles, one stage: 24 KiB at d=192, 32 at 256 (2 per CU); "
                               "280-368 registers: 1 wave/SIMD"};
}

// The head sizes paged decode's verify tile serves (MTP verify rows 17-32 a kv head; others take the
// prefill tile).
constexpr bool gfx942_verify_head(int head_size) { return head_size <= 128; }

// The MLA kernel's tile (MlaDecodeCdnaConfig's gfx942 defaults: 32 rows, 16-key tiles, within 64 KiB).
constexpr MlaTile gfx942_mla_tile() { return {32, 16}; }

}  // namespace hipattn
