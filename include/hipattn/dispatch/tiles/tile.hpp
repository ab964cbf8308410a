// hipattn/dispatch/tiles/tile.hpp: the row types of the per-target tile tables (dispatch/tiles/<target>.hpp).
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/attention_config.hpp"

namespace hipattn {

// A tile shape of the attention skeleton: warps as kWarpsM x kWarpsN, 16 * mt rows and kn keys per
// warp, `stages` LDS stages, and the register budget the tile is held to (per thread on sm_90, VGPRs
// + AGPRs per lane on CDNA; tests/emu checks the code objects against it), which with the LDS sets
// how many workgroups a CU / SM holds (unified_residency).
struct UnifiedTile {
  int warps_m, warps_n, mt, kn, stages, regs;
  const char* reason;
  constexpr int rows() const { return warps_m * 16 * mt; }
  constexpr int keys() const { return warps_n * kn; }
  constexpr int threads(int wave) const { return warps_m * warps_n * wave; }
  constexpr TileShape shape() const { return TileShape{warps_m, warps_n, mt, kn, stages}; }
};

// Decode tiles serve batches whose rows of a kv head fit 16 (one token's GQA group); prefill tiles
// the rest. Paged decode's verify tiles serve MTP verify steps of 17-32 rows a kv head (q_len x
// group, e.g. 4 x 8) where a target's table has one (verify_tile_served, dispatch/tiles/tiles.hpp):
// two row bands instead of the prefill tile's four, so no band of the workgroup is empty.
enum class UnifiedTileKind : uint8_t { decode, prefill, verify };

constexpr const char* tile_kind_name(UnifiedTileKind k) {
  return k == UnifiedTileKind::decode ? "decode" : k == UnifiedTileKind::verify ? "verify" : "prefill";
}

// The tile of a target's MLA kernel: query rows a workgroup and keys a KV tile (MlaDecodeSm90Config,
// MlaDecodeCdnaConfig; the launchers check that they agree).
struct MlaTile {
  int32_t rows = 64, keys = 32;
};

}  // namespace hipattn
