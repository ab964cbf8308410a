// hipattn/dispatch/unified_plan.hpp: the selector of unified attention (host only, no device code):
// the tile configuration, 2D or 3D split-KV, the segment count, and the workspace size.
//
// Each choice comes from a small constexpr table whose rows carry their reason (FA3 heuristics
// style). ALGORITHM.md section 6 explains the rules.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hipattn/problem/unified_params.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn {

// Which kernel family to run.
enum class UnifiedPath : uint8_t { automatic, two_d, three_d };

// Caller's overrides (tests and benchmarks force a path).
struct UnifiedOptions {
  UnifiedPath path = UnifiedPath::automatic;
  int32_t num_segments = 0;  // 3D only: 0 = chosen from the device; else forced (>= 1)
};

// A tile shape of the unified kernels: warps as kWarpsM x kWarpsN, 16 * mt rows and kn keys per warp.
struct UnifiedTile {
  int warps_m, warps_n, mt, kn, stages;
  const char* reason;
  constexpr int rows() const { return warps_m * 16 * mt; }
  constexpr int keys() const { return warps_n * kn; }
  constexpr int threads(int wave) const { return warps_m * warps_n * wave; }
};

enum class UnifiedTileKind : uint8_t { decode, prefill };

// The sm_90 tiles, by head size. Decode tiles put 16 rows (the GQA group of one token) on one row
// band and split each 64-key tile over 4 warps: the matrix unit is idle anyway and the loads of 4
// warps keep more bytes in flight. Prefill tiles give each of 4 warps its own 16 rows (64 per
// workgroup) and the whole key tile, the FlashAttention-2 split that needs no cross-warp merge.
constexpr UnifiedTile sm90_tile(UnifiedTileKind kind, int head_size) {
  if (kind == UnifiedTileKind::decode) {
    if (head_size <= 128) return {1, 4, 1, 16, 3, "decode: 1x4 warps split 64 keys; 3 stages fit in 96 KiB at d<=128"};
    return {1, 4, 1, 16, 2, "decode: 1x4 warps split 64 keys; 2 stages (d=256 tiles are 32 KiB; d=192 24 KiB)"};
  }
  if (head_size <= 128)
    return {4, 1, 1, 64, 2, "prefill: 4x1 warps of 16 rows, 64-key tiles, double buffered; 236 registers, no "
                            "spill (32-row warps measured no faster and spill at 255: bench/NOTES.md)"};
  return {4, 1, 1, 32, 2, "prefill: 32-key tiles keep S + O + Q fragments of d=192 and 256 under 255 registers"};
}

// The CDNA tiles (wave 64), by head size. gfx942 gives a workgroup 64 KiB of LDS (gfx950 160 KiB): every
// tile here fits 64 KiB, so one instance serves both. Copies are synchronous on AMD (global load, LDS
// store), so a third stage buys nothing; 16-row bands (kMT = 1) keep S, O and Q under 256 VGPRs.
constexpr UnifiedTile cdna_tile(UnifiedTileKind kind, int head_size) {
  if (kind == UnifiedTileKind::decode) {
    if (head_size <= 128) return {1, 2, 1, 16, 2, "decode: 1x2 waves split 32 keys; 36 KiB of LDS at d=128"};
    return {1, 1, 1, 16, 2, "decode: one wave, 16-key tiles: 40 KiB of LDS at d=256, 30 KiB at d=192"};
  }
  if (head_size <= 128) return {4, 1, 1, 32, 2, "prefill: 4x1 waves of 16 rows, 32-key tiles: 48 KiB at d=128"};
  return {2, 1, 1, 16, 2, "prefill: 2x1 waves of 16 rows, 16-key tiles: 48 KiB at d=256"};
}

// The tile of a target: gfx942 and gfx950 share the CDNA table today (every tile fits gfx942's
// LDS); sm_90 has its own.
constexpr UnifiedTile unified_tile(UnifiedTileKind kind, int head_size, Target target) {
  return is_cdna(target) ? cdna_tile(kind, head_size) : sm90_tile(kind, head_size);
}

// The plan of one call.
struct UnifiedPlan {
  UnifiedTileKind tile_kind = UnifiedTileKind::prefill;
  UnifiedTile tile{};
  bool split = false;         // 3D split-KV
  int32_t num_segments = 1;   // 3D segments per q-block
  int32_t rows_per_token = 1; // q heads of one token in a workgroup
  int32_t block_q = 1;        // tokens per q-block
  int32_t head_chunks = 1;
  bool decode_grid = false;
  int64_t grid_x = 0;         // q-blocks (upper bound)
  int64_t base_workgroups = 0;  // grid_x * num_kv_heads * head_chunks
  size_t workspace_bytes = 0;
  std::string reason;
};

// What the plan needs to know about the device.
struct PlanDevice {
  Target target = Target::sm90;
  int multiprocessor_count = 132;
};

// Segments per q-block for a 2D grid of `base` workgroups on a device that holds `fill` at once: the
// count (<= max_seg) whose waves are fullest, efficiency = base * seg / (waves * fill). Counts are
// tried in increasing order; a larger count wins only if it is 5 points more efficient, or equally
// efficient with no more waves. A count that overshoots one wave by a few workgroups (a tail wave
// that runs almost empty) loses to one that fills the wave.
inline int32_t choose_segments(int64_t base, int64_t fill, int32_t max_seg) {
  base = std::max<int64_t>(1, base);
  int32_t best = 1;
  double best_eff = -1;
  int64_t best_waves = 0;
  for (int32_t s = 1; s <= std::max(1, max_seg); ++s) {
    const int64_t wg = base * s;
    const int64_t waves = (wg + fill - 1) / fill;
    const double eff = double(wg) / double(waves * fill);
    if (eff > best_eff + 0.05 || (eff > best_eff - 1e-9 && waves == best_waves)) {
      best = s;
      best_eff = eff;
      best_waves = waves;
    }
  }
  return best;
}

inline UnifiedPlan plan_unified_attention(const UnifiedAttentionParams& p, const UnifiedOptions& opt,
                                          const PlanDevice& dev) {
  UnifiedPlan plan;
  const int32_t group = p.num_q_heads / std::max(1, p.num_kv_heads);
  // Decode tile when a q-block of the prefill tile would leave most of its 64 rows empty.
  const int64_t rows_needed = static_cast<int64_t>(std::max(1, p.max_seqlen_q)) * group;
  plan.tile_kind = rows_needed <= 16 ? UnifiedTileKind::decode : UnifiedTileKind::prefill;
  if (dev.target != Target::sm90 && dev.target != Target::gfx942 && dev.target != Target::gfx950)
    throw Error(ErrorCode::unsupported, "target", std::string("no unified-attention tiles for target ") +
                                                      std::string(target_name(dev.target)));
  plan.tile = unified_tile(plan.tile_kind, p.head_size, dev.target);
  const int bm = plan.tile.rows();
  plan.rows_per_token = std::min(group, bm);
  plan.block_q = bm / plan.rows_per_token;
  plan.head_chunks = (group + plan.rows_per_token - 1) / plan.rows_per_token;
  plan.decode_grid = p.max_seqlen_q <= 1;
  plan.grid_x = plan.decode_grid ? p.num_seqs : static_cast<int64_t>(p.num_tokens) / plan.block_q + p.num_seqs;
  plan.base_workgroups = plan.grid_x * p.num_kv_heads * plan.head_chunks;

  // 3D when the 2D grid cannot fill the device and sequences are long enough to split.
  const int64_t fill = 2LL * dev.multiprocessor_count;  // two resident workgroups per CU / SM
  const int32_t max_tiles = (std::max(1, p.max_seqlen_k) + plan.tile.keys() - 1) / plan.tile.keys();
  bool split;
  switch (opt.path) {
    case UnifiedPath::two_d: split = false; plan.reason = "forced 2d"; break;
    case UnifiedPath::three_d: split = true; plan.reason = "forced 3d"; break;
    default:
      split = plan.base_workgroups < fill && max_tiles >= 4;
      plan.reason = split ? "auto: 2D grid of " + std::to_string(plan.base_workgroups) + " workgroups < " +
                                std::to_string(fill) + " and >= 4 KV tiles: split KV"
                          : "auto: 2D grid fills the device or sequences are short";
  }
  plan.split = split;
  if (opt.num_segments < 0)
    throw Error(ErrorCode::invalid_argument, "options.num_segments", std::to_string(opt.num_segments) + " < 0");
  if (split) {
    int32_t seg = opt.num_segments;
    if (seg == 0) seg = choose_segments(plan.base_workgroups, fill, std::min<int32_t>(max_tiles, 64));
    plan.num_segments = seg;
    plan.workspace_bytes = static_cast<size_t>(seg) * static_cast<size_t>(p.num_tokens) *
                           static_cast<size_t>(p.num_q_heads) * (static_cast<size_t>(p.head_size) + 1) * sizeof(float);
    plan.workspace_bytes += 256;  // alignment slack for the lse block
  }
  return plan;
}

}  // namespace hipattn
