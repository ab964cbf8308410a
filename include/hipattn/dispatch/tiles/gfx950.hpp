// hipattn/dispatch/tiles/gfx950.hpp: the tiles gfx950 (MI355X) runs, with the reason for each, and
// where its ping-pong schedule serves.
#pragma once
#include "hipattn/dispatch/tiles/tile.hpp"

namespace hipattn {

// The skeleton's tiles (160 KiB of LDS per CU): two LDS stages (no barrier after the compute).
constexpr UnifiedTile gfx950_tile(UnifiedTileKind kind, int head_size) {
  if (kind == UnifiedTileKind::decode) {
    if (head_size <= 128)
      return {1, 2, 1, 16, 2, 256, "decode: 1x2 waves split 32 keys, two stages: 36 KiB at d=128 (4 per CU)"};
    return {1, 2, 1, 16, 2, 512, "decode: 1x2 waves, two stages: 54 / 72 KiB at d=192 / 256 (2 per CU); >256 registers"};
  }
  if (kind == UnifiedTileKind::verify && head_size <= 128)
    return {2, 1, 1, 32, 2, 256, "verify: 2x1 waves of 16 rows, 32-key tiles, two stages: 40 KiB (4 per CU)"};
  if (head_size <= 128) return {4, 1, 1, 32, 2, 256, "prefill: 4x1 waves of 16 rows, 32-key tiles: 48 KiB (2 per CU)"};
  return {2, 1, 1, 16, 2, 512, "prefill: 2x1 waves of 16 rows, 16-key tiles: 48 KiB at d=256; >256 registers (2 per CU)"};
}

// The ping-pong tile (the prefill q-blocks' schedule of ALGORITHM.md section 13; dense prefill's
// DensePingPongConfig takes 32-row waves at d = 128): eight waves of 16 rows (128-row q-blocks) over 32-key tiles, LDS-DMA
// loads into K and V rings of two stages. Registers: 122 at d = 128 (budget 128: four waves a SIMD,
// two workgroups a CU, which the 64 KiB of LDS allow too); 202-204 at d = 256 (budget 256: one
// workgroup, 128 KiB).
constexpr UnifiedTile gfx950_pingpong_tile(int head_size) {
  if (head_size <= 128) return {8, 1, 1, 32, 2, 128, "ping-pong: 8 waves of 16 rows (2 groups), 32-key tiles: 64 KiB (2 per CU)"};
  return {8, 1, 1, 32, 2, 256, "ping-pong: 8 waves of 16 rows (2 groups), 32-key tiles: 128 KiB at d=256 (1 per CU)"};
}
// The head sizes and variants it serves (built, and taken when UnifiedOptions::pipeline asks for it):
// d = 128 and 256 with the plain variant. The full variant's logit work (softcap, ALiBi, QQ-bias)
// lengthens the softmax phase past the skeleton's tile (the model, bench/NOTES.md "AMD: the ping-pong
// schedule": d = 256, 0.10 against 0.12, measured before the model's LDS-DMA correction), so it is
// not built.
constexpr bool unified_pingpong_head(int head_size, bool full_variant) {
  return (head_size == 128 || head_size == 256) && !full_variant;
}
// ... and where the automatic plan takes it: where the model puts it ahead of the skeleton's tile,
// d = 256 (0.30 of the MFMA rate against 0.20). At d = 128 the LDS-DMA skeleton is ahead (0.42
// against 0.38: the ping-pong's matrix phase carries group 0's share of the loads and Q's LDS reads).
constexpr bool unified_pingpong_preferred(int head_size) { return head_size == 256; }

// The head sizes paged decode's verify tile serves (MTP verify rows 17-32 a kv head; others take the
// prefill tile).
constexpr bool gfx950_verify_head(int head_size) { return head_size <= 128; }

// The MLA kernel's tile (MlaDecodeCdnaConfig's gfx950 defaults: 64 rows, 32-key tiles).
constexpr MlaTile gfx950_mla_tile() { return {64, 32}; }

}  // namespace hipattn
