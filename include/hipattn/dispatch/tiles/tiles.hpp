// hipattn/dispatch/tiles/tiles.hpp: the tile selectors over the per-target tables (one file a target:
// dispatch/tiles/{sm90,gfx942,gfx950}.hpp). Host planning and the instance definitions read them.
#pragma once
#include "hipattn/arch/concept.hpp"
#include "hipattn/dispatch/tiles/gfx942.hpp"
#include "hipattn/dispatch/tiles/gfx950.hpp"
#include "hipattn/dispatch/tiles/sm90.hpp"
#include "hipattn/dispatch/tiles/tile.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn {

// Whether a target has tile tables (the planners refuse the others with Error(unsupported, "target")).
constexpr bool target_has_tiles(Target t) {
  return t == Target::sm90 || t == Target::gfx942 || t == Target::gfx950;
}

// The skeleton tile of a target for a KV storage (fp8 or 16-bit; only sm_90's tiles depend on it).
constexpr UnifiedTile unified_tile(UnifiedTileKind kind, int head_size, Target target, bool fp8) {
  switch (target) {
    case Target::gfx942: return gfx942_tile(kind, head_size);
    case Target::gfx950: return gfx950_tile(kind, head_size);
    default: return sm90_tile(kind, head_size, fp8);
  }
}

// Whether a target's table has a verify tile for a head size (paged decode's MTP verify rows 17-32).
constexpr bool verify_tile_served(Target t, int head_size) {
  switch (t) {
    case Target::gfx942: return gfx942_verify_head(head_size);
    case Target::gfx950: return gfx950_verify_head(head_size);
    default: return sm90_verify_head(head_size);
  }
}

// The tile kind of paged decode's `rows` a kv head (q_len x group): the decode tile's 16 rows, the
// verify tile's 32 where the target has one, else the prefill tile (its 64 or 32 rows).
constexpr UnifiedTileKind paged_decode_tile_kind(int64_t rows, int head_size, Target t) {
  if (rows <= unified_tile(UnifiedTileKind::decode, head_size, t, false).rows()) return UnifiedTileKind::decode;
  if (verify_tile_served(t, head_size) && rows <= unified_tile(UnifiedTileKind::verify, head_size, t, false).rows())
    return UnifiedTileKind::verify;
  return UnifiedTileKind::prefill;
}

// A target's tile under a loader policy other than its default: the register-staged loader keeps at
// most two LDS stages (its registers are the next tile's buffer). Unchanged otherwise.
constexpr UnifiedTile unified_tile_for_copy(UnifiedTile t, CopyModel copy) {
  if (copy == CopyModel::register_staged && t.stages > 2) t.stages = 2;
  return t;
}

// The tile of a target's MLA kernel.
constexpr MlaTile mla_decode_tile(Target t) {
  switch (t) {
    case Target::gfx942: return gfx942_mla_tile();
    case Target::gfx950: return gfx950_mla_tile();
    default: return sm90_mla_tile();
  }
}

}  // namespace hipattn
