// tests/host/test_plan.cpp: the unified-attention selector (dispatch/unified_plan.hpp) against the rules of
// ALGORITHM.md sections 5.2 and 6: tile kind, rows per token / block_q / head chunks, the 2D grid, 2D vs 3D,
// the segment count, the workspace size, forced options and errors.
#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/dispatch/unified_plan.hpp"

namespace {

using hipattn::CopyModel;
using hipattn::DType;
using hipattn::PlanDevice;
using hipattn::PlanPipeline;
using hipattn::Target;
using hipattn::UnifiedAttentionParams;
using hipattn::UnifiedGrid;
using hipattn::UnifiedOptions;
using hipattn::UnifiedPath;
using hipattn::UnifiedPlan;
using hipattn::UnifiedSplit;
using hipattn::UnifiedTileKind;

// The shape fields the planner reads (it reads no pointer).
UnifiedAttentionParams shape(int32_t num_seqs, int32_t num_tokens, int32_t max_q, int32_t max_k, int32_t hq, int32_t hkv,
                             int32_t d) {
  UnifiedAttentionParams p;
  p.num_seqs = num_seqs;
  p.num_tokens = num_tokens;
  p.max_seqlen_q = max_q;
  p.max_seqlen_k = max_k;
  p.num_q_heads = hq;
  p.num_kv_heads = hkv;
  p.head_size = d;
  return p;
}

PlanDevice device(Target t, int sms) {
  PlanDevice dev;
  dev.target = t;
  dev.multiprocessor_count = sms;
  return dev;
}

// Workgroups per CU / SM for 16-bit KV, worked out by hand from the tiles' LDS bytes (Q + stages x
// (K + V) + scales, or the warp merge), the thread slots and the tile's register budget (CDNA: two
// waves per SIMD at 256 registers up to d = 128, one at 512 above) or 255 registers a thread (sm_90: 64 K registers, 228 KiB of shared memory, 1 KiB reserved a block).
int64_t expected_residency(Target t, bool decode, int d) {
  if (t == Target::gfx942) {
    if (decode) return d <= 64 ? 4 : d <= 128 ? 3 : 2;  // 10 / 20 / 30 / 24 KiB
    return 2;  // 12 / 24 / 24 / 32 KiB (16-bit tiles have no scale slots), 2 by registers
  }
  if (t == Target::gfx950) {
    if (decode) return d <= 128 ? 4 : 2;  // registers: 8 waves of 2; 18 / 36 / 54 / 72 KiB
    return 2;  // d <= 128: 4-wave tiles, 2 by registers; d > 128: 1 wave per SIMD (512-register budget)
  }
  return decode && d > 192 ? 1 : 2;  // d = 256 decode: 137 KiB of stages
}

// The expected plan, written from ALGORITHM.md 5.2 / 6 and the tile table: decode tiles are 16 rows x 64 keys;
// prefill tiles are 64 rows x 64 keys for d <= 128 and 64 rows x 32 keys above (sm_90).
struct Expected {
  bool decode;
  int64_t bm, bn, rows_per_token, block_q, head_chunks, grid_x, base, tiles;
  bool split;
  int64_t segments;
  bool planned;
  int64_t capacity;
  uint64_t workspace;
  bool warpgroup, pingpong;
};

// ALGORITHM.md 6 / 7: the workspace of a planned 3D launch (tasks, item_task0, status, partial O and
// LSE at their slots, each block rounded up to 256 bytes).
uint64_t planned_workspace(const UnifiedAttentionParams& p, int64_t capacity) {
  auto up = [](uint64_t x) { return (x + 255) / 256 * 256; };
  return up(capacity * 16) + up(uint64_t(p.num_seqs) * 4) + 256 + up(uint64_t(capacity) * p.num_q_heads * p.head_size * 4) +
         up(uint64_t(capacity) * p.num_q_heads * 4);
}

Expected expected_plan(const UnifiedAttentionParams& p, const UnifiedOptions& o, const PlanDevice& dev) {
  Expected e{};
  const int64_t g = p.num_q_heads / p.num_kv_heads;
  e.decode = static_cast<int64_t>(std::max(1, p.max_seqlen_q)) * g <= 16;
  const bool small = p.head_size <= 128;
  if (dev.target == Target::gfx942) {  // one LDS stage, <= 32 KiB where it can (64 KiB per CU)
    e.bm = e.decode ? 16 : (small ? 64 : 32);
    e.bn = e.decode ? (p.head_size <= 192 ? 32 : 16) : 16;
  } else if (dev.target == Target::gfx950) {  // two stages (160 KiB per CU)
    e.bm = e.decode ? 16 : (small ? 64 : 32);
    e.bn = e.decode ? 32 : (small ? 32 : 16);
  } else {
    e.bm = e.decode ? 16 : 64;
    e.bn = e.decode ? 64 : (small ? 64 : 32);
  }
  e.rows_per_token = g < e.bm ? g : e.bm;
  e.block_q = e.bm / e.rows_per_token;
  e.head_chunks = (g + e.rows_per_token - 1) / e.rows_per_token;
  e.grid_x = p.max_seqlen_q <= 1 ? p.num_seqs : p.num_tokens / e.block_q + p.num_seqs;
  e.base = e.grid_x * p.num_kv_heads * e.head_chunks;
  e.tiles = (std::max(1, p.max_seqlen_k) + e.bn - 1) / e.bn;
  const int64_t fill = expected_residency(dev.target, e.decode, p.head_size) * dev.multiprocessor_count;
  e.split = o.path == UnifiedPath::three_d || (o.path == UnifiedPath::automatic && e.base < fill && e.tiles >= 4);
  e.segments = 1;
  e.workspace = 0;
  if (e.split) {
    if (o.num_segments > 0) {
      e.segments = o.num_segments;
    } else {
      // ALGORITHM.md 6: the fullest waves; a larger count must be 5 points better, or as good in as
      // few waves.
      const int64_t cap = std::min<int64_t>(e.tiles, 64);
      double best_eff = -1;
      int64_t best_waves = 0;
      e.segments = 1;
      for (int64_t s = 1; s <= cap; ++s) {
        const int64_t waves = (e.base * s + fill - 1) / fill;
        const double eff = double(e.base * s) / double(waves * fill);
        if (eff > best_eff + 0.05 || (eff > best_eff - 1e-9 && waves == best_waves)) {
          e.segments = s;
          best_eff = eff;
          best_waves = waves;
        }
      }
    }
    e.workspace = static_cast<uint64_t>(e.segments) * p.num_tokens * p.num_q_heads * (p.head_size + 1) * 4 + 256;
  }
  // ALGORITHM.md 6: a decode batch plans on the device (forced, or when the uniform split would give
  // at most 2 segments while a sequence may hold 64 tiles or more, or segments of 16K keys or more
  // for several sequences)
  const int64_t seg_keys = (e.tiles + e.segments - 1) / e.segments * e.bn;
  e.planned = e.split && p.max_seqlen_q <= 1 && o.num_segments == 0 &&
              (o.split == UnifiedSplit::planned ||
               (o.split == UnifiedSplit::automatic && e.tiles >= 64 &&
                (e.segments <= 2 || (p.num_seqs > 1 && seg_keys >= 16384))));
  // ... and, automatic, a decode batch whose 2D grid fills the device when a sequence may hold 256
  // tiles or more (ALGORITHM.md 6)
  if (!e.split && o.path == UnifiedPath::automatic && p.max_seqlen_q <= 1 && o.split != UnifiedSplit::uniform &&
      o.num_segments == 0 && e.tiles >= 256)
    e.split = e.planned = true;
  if (e.planned) {  // whole waves of fill / (kv heads x chunks) slots, one a sequence (and half a wave
                    // spare where a sequence may hold 16K keys)
    const int64_t per = p.num_kv_heads * e.head_chunks;
    const int64_t per_wave = std::max<int64_t>(1, fill / per);
    const int64_t spare = e.tiles * e.bn >= 16384 ? per_wave / 2 : 0;
    e.capacity = per_wave * std::max<int64_t>(1, (p.num_seqs + spare + per_wave - 1) / per_wave);
    e.segments = 1;
    e.workspace = planned_workspace(p, e.capacity);
  }
  // sm_90: 16-bit prefill q-blocks of the 2D grid run on the warpgroup pipeline, 128 rows a q-block
  // (the row map and the grid are theirs; the skeleton's tile stays in the plan).
  const bool wg_head = p.head_size == 64 || p.head_size == 128 || p.head_size == 192 || p.head_size == 256;
  e.warpgroup = dev.target == Target::sm90 && !e.decode && p.max_seqlen_q > 1 && !e.split && wg_head &&
                !hipattn::is_fp8(p.q_dtype) && p.kv_dtype == p.q_dtype &&
                (o.pipeline == hipattn::UnifiedPipeline::automatic || o.pipeline == hipattn::UnifiedPipeline::warpgroup);
  if (e.warpgroup) {
    e.rows_per_token = g < 128 ? g : 128;
    e.block_q = 128 / e.rows_per_token;
    e.head_chunks = (g + e.rows_per_token - 1) / e.rows_per_token;
    e.grid_x = p.num_tokens / e.block_q + p.num_seqs;
    e.base = e.grid_x * p.num_kv_heads * e.head_chunks;
  }
  // gfx950: 16-bit prefill q-blocks of the 2D grid at d = 256 (automatic; d = 128 too when asked for)
  // without softcap / ALiBi / QQ-bias run on the eight-wave ping-pong: 128 rows x 32 keys (its tile replaces the skeleton's),
  // caches within the LDS-DMA loader's 4 GiB range.
  const bool full = p.softcap > 0.f || p.alibi_slopes != nullptr || p.qq_bias != nullptr;
  const bool pp_head = (p.head_size == 256 || p.head_size == 128) && !full;
  e.pingpong = dev.target == Target::gfx950 && !e.decode && p.max_seqlen_q > 1 && !e.split && pp_head &&
               !hipattn::is_fp8(p.q_dtype) && p.kv_dtype == p.q_dtype && hipattn::unified_kv_within_lds_dma_window(p) &&
               ((o.pipeline == hipattn::UnifiedPipeline::automatic && p.head_size == 256) ||
                o.pipeline == hipattn::UnifiedPipeline::pingpong);
  if (e.pingpong) {
    e.bm = 128;
    e.bn = 32;
    e.rows_per_token = g < 128 ? g : 128;
    e.block_q = 128 / e.rows_per_token;
    e.head_chunks = (g + e.rows_per_token - 1) / e.rows_per_token;
    e.grid_x = p.num_tokens / e.block_q + p.num_seqs;
    e.base = e.grid_x * p.num_kv_heads * e.head_chunks;
  }
  return e;
}

std::string diff(const UnifiedPlan& pl, const Expected& e) {
  std::string err;
  auto chk = [&](const char* name, int64_t got, int64_t want) {
    if (got != want) err += std::string(name) + ": expected " + std::to_string(want) + ", got " + std::to_string(got) + "; ";
  };
  chk("decode tile", pl.tile_kind == UnifiedTileKind::decode, e.decode);
  chk("BM", pl.tile.rows(), e.bm);
  chk("BN", pl.tile.keys(), e.bn);
  chk("rows_per_token", pl.rows_per_token, e.rows_per_token);
  chk("block_q", pl.block_q, e.block_q);
  chk("head_chunks", pl.head_chunks, e.head_chunks);
  chk("grid_x", pl.grid_x, e.grid_x);
  chk("base_workgroups", pl.base_workgroups, e.base);
  chk("split", pl.split(), e.split);
  chk("planned", pl.grid == UnifiedGrid::split_planned, e.planned);
  if (e.planned) chk("capacity", pl.capacity, e.capacity);
  else if (e.split) chk("num_segments", pl.num_segments, e.segments);
  chk("workspace_bytes", static_cast<int64_t>(pl.workspace_bytes), static_cast<int64_t>(e.workspace));
  chk("warpgroup", pl.pipeline == PlanPipeline::warpgroup, e.warpgroup);
  chk("pingpong", pl.pipeline == PlanPipeline::pingpong, e.pingpong);
  if (e.pingpong) chk("kv_copy is lds_dma", pl.kv_copy == hipattn::CopyModel::lds_dma, true);
  return err;
}

std::string describe(const UnifiedAttentionParams& p, const UnifiedOptions& o, const PlanDevice& dev) {
  return "seqs=" + std::to_string(p.num_seqs) + " tokens=" + std::to_string(p.num_tokens) + " max_q=" +
         std::to_string(p.max_seqlen_q) + " max_k=" + std::to_string(p.max_seqlen_k) + " hq=" +
         std::to_string(p.num_q_heads) + " hkv=" + std::to_string(p.num_kv_heads) + " d=" + std::to_string(p.head_size) +
         " path=" + std::to_string(static_cast<int>(o.path)) + " seg=" + std::to_string(o.num_segments) +
         " target=" + std::string(hipattn::target_name(dev.target)) + " sms=" + std::to_string(dev.multiprocessor_count);
}

TEST(Plan, ServeDecodeB8Ctx32kSplits) {
  // 8 sequences, one token each, 32 q heads / 8 kv heads (G = 4), 32768 keys, d = 128, H200 (132 SMs).
  const auto p = shape(8, 8, 1, 32768, 32, 8, 128);
  const auto pl = hipattn::plan_unified_attention(p, {}, device(Target::sm90, 132));
  EXPECT_EQ(pl.tile_kind, UnifiedTileKind::decode);
  EXPECT_TRUE(pl.split()) << pl.reason;
  EXPECT_TRUE(pl.decode_grid);
  EXPECT_EQ(pl.rows_per_token, 4);
  EXPECT_EQ(pl.block_q, 4);
  EXPECT_EQ(pl.head_chunks, 1);
  EXPECT_EQ(pl.grid_x, 8);
  EXPECT_EQ(pl.base_workgroups, 64);
  EXPECT_FALSE(pl.grid == UnifiedGrid::split_planned);  // 4 uniform segments cut every sequence: no planner
  EXPECT_EQ(pl.num_segments, 4);  // 256 of 264 slots in one wave (5 would leave a 56-workgroup tail wave)
  EXPECT_EQ(pl.workspace_bytes, size_t{4} * 8 * 32 * 129 * 4 + 256);
  // The same call on a gfx942 (304 CUs, 3 workgroups of the one-stage decode tile each: fill 912):
  // 14 segments take 896 of the 912 slots in one wave.
  const auto pa = hipattn::plan_unified_attention(p, {}, device(Target::gfx942, 304));
  EXPECT_TRUE(pa.split());
  EXPECT_EQ(pa.residency, 3);
  EXPECT_EQ(pa.num_segments, 14);
  // Forced planned split: 264 slots / 8 kv heads = 33 task slots a head.
  UnifiedOptions planned;
  planned.split = UnifiedSplit::planned;
  const auto pp = hipattn::plan_unified_attention(p, planned, device(Target::sm90, 132));
  EXPECT_TRUE(pp.grid == UnifiedGrid::split_planned);
  EXPECT_EQ(pp.capacity, 33);
  EXPECT_EQ(pp.workspace_bytes, planned_workspace(p, 33));
}

// 16 sequences of up to 128K keys (15 x 2K + 1 x 128K in bench/NOTES.md): the uniform split would give
// 2 segments (128 workgroups of 264 slots), so the decode batch plans on the device.
TEST(Plan, MixedDecodeBatchPlansOnTheDevice) {
  const auto p = shape(16, 16, 1, 131072, 32, 8, 128);
  const auto pl = hipattn::plan_unified_attention(p, {}, device(Target::sm90, 132));
  EXPECT_TRUE(pl.split());
  EXPECT_TRUE(pl.grid == UnifiedGrid::split_planned) << pl.reason;
  EXPECT_EQ(pl.capacity, 33);
  UnifiedOptions prefill;  // not a decode batch: planned refused, naming the field
  prefill.split = UnifiedSplit::planned;
  try {
    (void)hipattn::plan_unified_attention(shape(2, 8, 4, 4096, 32, 8, 128), prefill, device(Target::sm90, 132));
    ADD_FAILURE() << "planned split of a prefill batch accepted";
  } catch (const hipattn::Error& e) {
    EXPECT_EQ(e.field(), "options.split");
  }
}

TEST(Plan, ResidencyMatchesHandTable) {
  for (Target t : {Target::gfx942, Target::gfx950, Target::sm90})
    for (bool decode : {true, false})
      for (int d : {64, 96, 128, 192, 256}) {
        const auto kind = decode ? UnifiedTileKind::decode : UnifiedTileKind::prefill;
        EXPECT_EQ(hipattn::unified_residency(hipattn::unified_tile(kind, d, t, false), d, false, t),
                  expected_residency(t, decode, d))
            << hipattn::target_name(t) << (decode ? " decode" : " prefill") << " d=" << d;
      }
  // fp8 KV: converted in registers on every target (16-bit LDS stages; sm_90's fp8 decode tile keeps
  // two: 69 KiB at d = 128, 2 a SM by registers).
  EXPECT_EQ(hipattn::unified_residency(hipattn::unified_tile(UnifiedTileKind::decode, 128, Target::gfx942, true), 128, true,
                                       Target::gfx942),
            3);
  EXPECT_EQ(hipattn::unified_residency(hipattn::unified_tile(UnifiedTileKind::decode, 128, Target::sm90, true), 128, true,
                                       Target::sm90),
            2);
  // gfx950's ping-pong tile: 64.5 KiB at d = 128 (2 a CU, and 2 by 128 registers a wave of 8), 128.5
  // KiB at d = 256 (1)
  EXPECT_EQ(hipattn::unified_residency(hipattn::gfx950_pingpong_tile(128), 128, false, Target::gfx950), 2);
  EXPECT_EQ(hipattn::unified_residency(hipattn::gfx950_pingpong_tile(256), 256, false, Target::gfx950), 1);
}

// The KV loader policy: gfx950's 16-bit caches up to d = 128 load by LDS DMA (32-bit buffer offsets),
// unless a byte of a cache lies 2^32 - 256 or more past its base; then the register-staged instance
// of the same tile. fp8 caches and gfx942 are register-staged; sm_90 is cp.async.
TEST(Plan, KvLoaderPolicyAndTheDmaRange) {
  auto cache = [](int32_t num_blocks, int32_t block, int32_t hkv, int32_t d, DType kv) {
    UnifiedAttentionParams p = shape(8, 8, 1, 4096, 4 * hkv, hkv, d);
    p.q_dtype = DType::bf16;
    p.kv_dtype = kv;
    p.num_blocks = num_blocks;
    p.block_size = block;
    p.k_stride_head = p.v_stride_head = d;
    p.k_stride_slot = p.v_stride_slot = hkv * d;
    p.k_stride_block = p.v_stride_block = block * hkv * d;
    return p;
  };
  // 16 slots x 8 heads x 128 x 2 bytes = 32 KiB a block: 131072 blocks = exactly 4 GiB, past the range.
  const auto small = cache(1024, 16, 8, 128, DType::bf16);
  const auto at_4g = cache(131072, 16, 8, 128, DType::bf16);
  const auto below = cache(131071, 16, 8, 128, DType::bf16);  // 4 GiB - 32 KiB: inside
  EXPECT_EQ(hipattn::unified_kv_copy(small, Target::gfx950, UnifiedTileKind::prefill), CopyModel::lds_dma);
  EXPECT_EQ(hipattn::unified_kv_copy(below, Target::gfx950, UnifiedTileKind::prefill), CopyModel::lds_dma);
  EXPECT_EQ(hipattn::unified_kv_copy(at_4g, Target::gfx950, UnifiedTileKind::prefill), CopyModel::register_staged);
  EXPECT_EQ(hipattn::plan_unified_attention(at_4g, {}, device(Target::gfx950, 256)).kv_copy, CopyModel::register_staged);
  EXPECT_EQ(hipattn::plan_unified_attention(small, {}, device(Target::gfx950, 256)).kv_copy, CopyModel::lds_dma);
  EXPECT_EQ(hipattn::unified_kv_copy(cache(1024, 16, 8, 256, DType::bf16), Target::gfx950, UnifiedTileKind::prefill), CopyModel::register_staged);
  EXPECT_EQ(hipattn::unified_kv_copy(cache(1024, 16, 8, 128, DType::fp8_e4m3fn), Target::gfx950, UnifiedTileKind::prefill),
            CopyModel::register_staged);
  EXPECT_EQ(hipattn::unified_kv_copy(small, Target::gfx942, UnifiedTileKind::prefill), CopyModel::register_staged);
  EXPECT_EQ(hipattn::unified_kv_copy(at_4g, Target::sm90, UnifiedTileKind::prefill), CopyModel::async);
}

// The instance KvKind of fp8 queries (problem/fp8_io.hpp Fp8Math): the fp8 matrix path for e4m3fn
// queries and cache on sm_90 unless `convert`; the cache's storage everywhere else; and its tiles
// read cp.async code stages (also the prefill tile, whose fp8 storage instance is register-staged).
TEST(Plan, Fp8MatrixPathKind) {
  using hipattn::Fp8Math;
  using hipattn::KvKind;
  using hipattn::operand_kv_kind;
  const DType fn = DType::fp8_e4m3fn, fnuz = DType::fp8_e4m3fnuz;
  EXPECT_EQ(operand_kv_kind(fn, fn, Fp8Math::fp8_pv, Target::sm90), KvKind::e4m3fn_q8);
  EXPECT_EQ(operand_kv_kind(fn, fn, Fp8Math::fp8_qk, Target::sm90), KvKind::e4m3fn_q8);
  EXPECT_EQ(operand_kv_kind(fn, fn, Fp8Math::convert, Target::sm90), KvKind::e4m3fn);
  EXPECT_EQ(operand_kv_kind(fnuz, fnuz, Fp8Math::fp8_pv, Target::sm90), KvKind::e4m3fnuz);
  EXPECT_EQ(operand_kv_kind(fn, fnuz, Fp8Math::fp8_pv, Target::sm90), KvKind::e4m3fnuz);
  EXPECT_EQ(operand_kv_kind(fn, DType::bf16, Fp8Math::fp8_pv, Target::sm90), KvKind::same16);
  EXPECT_EQ(operand_kv_kind(DType::bf16, fn, Fp8Math::fp8_pv, Target::sm90), KvKind::e4m3fn);
  // CDNA: the format each target's fp8 MFMA reads (gfx950 e4m3fn; gfx942 e4m3fnuz, with e4m3fn
  // queries re-encoded), else converted
  EXPECT_EQ(operand_kv_kind(fn, fn, Fp8Math::fp8_qk, Target::gfx950), KvKind::e4m3fn_q8);
  EXPECT_EQ(operand_kv_kind(fn, fn, Fp8Math::convert, Target::gfx950), KvKind::e4m3fn);
  EXPECT_EQ(operand_kv_kind(fnuz, fnuz, Fp8Math::fp8_qk, Target::gfx950), KvKind::e4m3fnuz);
  EXPECT_EQ(operand_kv_kind(fnuz, fn, Fp8Math::fp8_qk, Target::gfx950), KvKind::e4m3fn);
  EXPECT_EQ(operand_kv_kind(fnuz, fnuz, Fp8Math::fp8_qk, Target::gfx942), KvKind::e4m3fnuz_q8);
  EXPECT_EQ(operand_kv_kind(fn, fnuz, Fp8Math::fp8_pv, Target::gfx942), KvKind::e4m3fnuz_q8);
  EXPECT_EQ(operand_kv_kind(fnuz, fnuz, Fp8Math::convert, Target::gfx942), KvKind::e4m3fnuz);
  EXPECT_EQ(operand_kv_kind(fn, fn, Fp8Math::fp8_qk, Target::gfx942), KvKind::e4m3fn);
  EXPECT_EQ(operand_kv_kind(DType::bf16, fnuz, Fp8Math::fp8_qk, Target::gfx942), KvKind::e4m3fnuz);
  EXPECT_EQ(operand_kv_kind(fnuz, DType::f16, Fp8Math::fp8_qk, Target::gfx942), KvKind::same16);
  for (Target t : {Target::gfx942, Target::gfx950})
    for (UnifiedTileKind kind : {UnifiedTileKind::decode, UnifiedTileKind::prefill})
      for (int d : {64, 128, 256}) {
        const KvKind k = t == Target::gfx942 ? KvKind::e4m3fnuz_q8 : KvKind::e4m3fn_q8;
        EXPECT_EQ(hipattn::unified_default_copy(kind, d, t, k), CopyModel::register_staged);
        EXPECT_TRUE(hipattn::kv_kind_on_target(k, t));
        // CDNA: Q and K tiles of code pairs (rows padded to 64 pairs, as every swizzled tile's: half
        // a 16-bit row from d = 128), V 16-bit (converted by the loader)
        const auto l8 = hipattn::attention_lds_layout(4, 1, 1, 32, 2, d, d, k, t);
        const auto l = hipattn::attention_lds_layout(4, 1, 1, 32, 2, d, d, hipattn::kv_storage(k), t);
        EXPECT_EQ(l8.q, 64 * ((d / 2 + 63) / 64 * 64) * 2) << d;
        EXPECT_EQ(l8.k_stage, 32 * ((d / 2 + 63) / 64 * 64) * 2) << d;
        if (d >= 128) EXPECT_EQ(2 * l8.k_stage, l.k_stage) << d;
        EXPECT_EQ(l8.v_stage, l.v_stage) << d;
      }
  EXPECT_FALSE(hipattn::kv_kind_on_target(KvKind::e4m3fn_q8, Target::gfx942));
  EXPECT_FALSE(hipattn::kv_kind_on_target(KvKind::e4m3fnuz_q8, Target::gfx950));
  EXPECT_FALSE(hipattn::kv_kind_on_target(KvKind::e4m3fnuz_q8, Target::sm90));
  EXPECT_EQ(hipattn::q8_query_factor(KvKind::e4m3fnuz_q8, true), 2.f);
  EXPECT_EQ(hipattn::q8_query_factor(KvKind::e4m3fnuz_q8, false), 1.f);
  EXPECT_EQ(hipattn::q8_query_factor(KvKind::e4m3fn_q8, true), 1.f);
  for (int d : {64, 128, 256}) {
    EXPECT_EQ(hipattn::unified_default_copy(UnifiedTileKind::prefill, d, Target::sm90, KvKind::e4m3fn_q8), CopyModel::async);
    EXPECT_EQ(hipattn::unified_default_copy(UnifiedTileKind::decode, d, Target::sm90, KvKind::e4m3fn_q8), CopyModel::async);
  }
  EXPECT_EQ(hipattn::unified_default_copy(UnifiedTileKind::prefill, 128, Target::sm90, KvKind::e4m3fn),
            CopyModel::register_staged);
  // the Q tile of code pairs is half a 16-bit one; K / V code stages as the decode tiles'
  const auto q8 = hipattn::attention_lds_layout(4, 1, 1, 64, 2, 128, 128, KvKind::e4m3fn_q8, Target::sm90);
  const auto fp8 = hipattn::attention_lds_layout(4, 1, 1, 64, 2, 128, 128, KvKind::e4m3fn, Target::sm90);
  EXPECT_EQ(2 * q8.q, fp8.q);
  EXPECT_EQ(q8.k_stage, 64 * 64 * 2);
  EXPECT_LT(q8.total, fp8.total);
}

TEST(Plan, ServeDecodeB64Ctx8kStays2D) {
  const auto p = shape(64, 64, 1, 8192, 32, 8, 128);
  const auto pl = hipattn::plan_unified_attention(p, {}, device(Target::sm90, 132));
  EXPECT_EQ(pl.tile_kind, UnifiedTileKind::decode);
  EXPECT_FALSE(pl.split()) << pl.reason;  // 64 * 8 = 512 workgroups >= 264
  EXPECT_EQ(pl.base_workgroups, 512);
  EXPECT_EQ(pl.workspace_bytes, 0u);
}

// A pipeline that cannot run q on d: the automatic plan does not take it (`taken`: that
// pipeline), and forcing it (`force`) throws Error(unsupported, "options.pipeline") naming `why`.
void expect_pipeline_refused(const UnifiedAttentionParams& q, const PlanDevice& d, const UnifiedOptions& force,
                             PlanPipeline taken, const char* why) {
  SCOPED_TRACE(why);
  EXPECT_NE(hipattn::plan_unified_attention(q, {}, d).pipeline, taken);
  try {
    (void)hipattn::plan_unified_attention(q, force, d);
    ADD_FAILURE() << "forcing the pipeline did not throw";
  } catch (const hipattn::Error& e) {
    EXPECT_EQ(e.code(), hipattn::ErrorCode::unsupported);
    EXPECT_EQ(e.field(), "options.pipeline");
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(Plan, PrefillStays2D) {
  // 4 sequences of 2048 new tokens (no context), G = 4, d = 128: 8192 / 16 + 4 = 516 q-blocks x 8 kv heads.
  const auto p = shape(4, 8192, 2048, 2048, 32, 8, 128);
  const auto pl = hipattn::plan_unified_attention(p, {}, device(Target::sm90, 132));
  EXPECT_EQ(pl.tile_kind, UnifiedTileKind::prefill);
  EXPECT_FALSE(pl.split()) << pl.reason;
  EXPECT_FALSE(pl.decode_grid);
  // sm_90 runs it on the warpgroup pipeline: 128-row q-blocks, 8192 / 32 + 4 = 260 of them
  EXPECT_TRUE(pl.pipeline == PlanPipeline::warpgroup) << pl.reason;
  EXPECT_EQ(pl.rows_per_token, 4);
  EXPECT_EQ(pl.block_q, 32);
  EXPECT_EQ(pl.grid_x, 260);
  EXPECT_EQ(pl.workspace_bytes, 0u);
  // the skeleton's 64-row tile when asked for
  UnifiedOptions skeleton;
  skeleton.pipeline = hipattn::UnifiedPipeline::skeleton;
  const auto ps = hipattn::plan_unified_attention(p, skeleton, device(Target::sm90, 132));
  EXPECT_FALSE(ps.pipeline == PlanPipeline::warpgroup);
  EXPECT_EQ(ps.block_q, 16);
  EXPECT_EQ(ps.grid_x, 516);
  // d = 256 prefill, also 2D: gfx950's ping-pong (128 rows a q-block), or the skeleton's 32-row tile
  const auto p2 = shape(2, 4096, 2048, 4096, 16, 16, 256);
  const auto pl2 = hipattn::plan_unified_attention(p2, {}, device(Target::gfx950, 256));
  EXPECT_EQ(pl2.tile_kind, UnifiedTileKind::prefill);
  EXPECT_FALSE(pl2.split());
  EXPECT_TRUE(pl2.pipeline == PlanPipeline::pingpong) << pl2.reason;
  EXPECT_EQ(pl2.block_q, 128);
  const auto ps2 = hipattn::plan_unified_attention(p2, skeleton, device(Target::gfx950, 256));
  EXPECT_FALSE(ps2.pipeline == PlanPipeline::pingpong);
  EXPECT_EQ(ps2.block_q, 32);
}

// gfx950's eight-wave ping-pong (kernels/cdna/pingpong_mainloop.hpp): who takes it, its tile and
// 128-row map, and the error of forcing it where it cannot run.
TEST(Plan, PingPongPipeline) {
  const PlanDevice dev = device(Target::gfx950, 256);
  UnifiedOptions force;
  force.pipeline = hipattn::UnifiedPipeline::pingpong;
  // G = 8, d = 128, 3 x 1000 new tokens: the automatic plan keeps the skeleton's tile at d = 128 (the
  // model puts it ahead); asked for, 128 / 8 = 16 tokens a q-block, 3000 / 16 + 3 = 190 q-blocks.
  auto p = shape(3, 3000, 1000, 1000, 32, 4, 128);
  EXPECT_FALSE(hipattn::plan_unified_attention(p, {}, dev).pipeline == PlanPipeline::pingpong);
  auto pl = hipattn::plan_unified_attention(p, force, dev);
  EXPECT_TRUE(pl.pipeline == PlanPipeline::pingpong) << pl.reason;
  EXPECT_FALSE(pl.pipeline == PlanPipeline::warpgroup);
  EXPECT_EQ(pl.tile.rows(), 128);
  EXPECT_EQ(pl.tile.keys(), 32);
  EXPECT_EQ(pl.kv_copy, hipattn::CopyModel::lds_dma);
  EXPECT_EQ(pl.residency, 2);  // 64 KiB of LDS and 128 registers a wave: two workgroups a CU
  EXPECT_EQ(pl.rows_per_token, 8);
  EXPECT_EQ(pl.block_q, 16);
  EXPECT_EQ(pl.grid_x, 190);
  EXPECT_EQ(pl.base_workgroups, 190 * 4);
  // d = 256 (automatic): one workgroup a CU (128 KiB)
  auto p256 = shape(3, 3000, 1000, 1000, 32, 4, 256);
  pl = hipattn::plan_unified_attention(p256, {}, dev);
  EXPECT_TRUE(pl.pipeline == PlanPipeline::pingpong) << pl.reason;
  EXPECT_EQ(pl.residency, 1);
  // G = 256 > 128 rows: two head chunks of 128 heads
  pl = hipattn::plan_unified_attention(shape(2, 200, 100, 400, 512, 2, 256), {}, dev);
  EXPECT_TRUE(pl.pipeline == PlanPipeline::pingpong);
  EXPECT_EQ(pl.rows_per_token, 128);
  EXPECT_EQ(pl.head_chunks, 2);
  const auto refused = [&](const UnifiedAttentionParams& q, const PlanDevice& d, const char* why) {
    expect_pipeline_refused(q, d, force, PlanPipeline::pingpong, why);
  };
  refused(p, device(Target::gfx942, 304), "not gfx950");
  refused(p, device(Target::sm90, 132), "not gfx950");
  auto fp8 = p;
  fp8.kv_dtype = DType::fp8_e4m3fn;
  refused(fp8, dev, "16-bit queries");
  refused(shape(3, 3000, 1000, 1000, 32, 4, 64), dev, "head sizes 128 and 256 without");
  auto softcap = p;
  softcap.softcap = 30.f;
  refused(softcap, dev, "head sizes 128 and 256 without");
  p256.softcap = 30.f;
  refused(p256, dev, "head sizes 128 and 256 without");
  refused(shape(64, 64, 1, 8192, 32, 8, 128), dev, "decode");
  auto big = p;  // a K cache of 2^20 blocks x 16 slots x 4 heads x 128 x 2 bytes = 16 GiB
  big.num_blocks = 1 << 20;
  big.block_size = 16;
  big.k_stride_head = big.v_stride_head = 128;
  big.k_stride_slot = big.v_stride_slot = 4 * 128;
  big.k_stride_block = big.v_stride_block = 16 * 4 * 128;
  refused(big, dev, "4 GiB");
  UnifiedOptions three_d = force;
  three_d.path = UnifiedPath::three_d;
  EXPECT_THROW((void)hipattn::plan_unified_attention(p, three_d, dev), hipattn::Error);
}

// sm_90's warpgroup pipeline (kernels/unified/warpgroup.hpp): who takes it, its 128-row map, and the
// error of forcing it where it cannot run.
TEST(Plan, WarpgroupPipeline) {
  const PlanDevice dev = device(Target::sm90, 132);
  // G = 8, d = 128, 3 x 1000 new tokens: 128 / 8 = 16 tokens a q-block, 3000 / 16 + 3 = 190 q-blocks.
  auto p = shape(3, 3000, 1000, 1000, 32, 4, 128);
  auto pl = hipattn::plan_unified_attention(p, {}, dev);
  EXPECT_TRUE(pl.pipeline == PlanPipeline::warpgroup) << pl.reason;
  EXPECT_EQ(pl.rows_per_token, 8);
  EXPECT_EQ(pl.block_q, 16);
  EXPECT_EQ(pl.head_chunks, 1);
  EXPECT_EQ(pl.grid_x, 190);
  EXPECT_EQ(pl.base_workgroups, 190 * 4);
  // G = 256 > 128 rows: two head chunks of 128 heads, one token a q-block
  pl = hipattn::plan_unified_attention(shape(2, 200, 100, 400, 512, 2, 64), {}, dev);
  EXPECT_TRUE(pl.pipeline == PlanPipeline::warpgroup);
  EXPECT_EQ(pl.rows_per_token, 128);
  EXPECT_EQ(pl.block_q, 1);
  EXPECT_EQ(pl.head_chunks, 2);
  UnifiedOptions force;
  force.pipeline = hipattn::UnifiedPipeline::warpgroup;
  EXPECT_TRUE(hipattn::plan_unified_attention(p, force, dev).pipeline == PlanPipeline::warpgroup);
  const auto refused = [&](const UnifiedAttentionParams& q, const PlanDevice& d, const char* why) {
    expect_pipeline_refused(q, d, force, PlanPipeline::warpgroup, why);
  };
  refused(p, device(Target::gfx950, 256), "not sm_90");
  auto fp8 = p;
  fp8.kv_dtype = DType::fp8_e4m3fn;
  refused(fp8, dev, "16-bit queries");
  refused(shape(3, 3000, 1000, 1000, 32, 4, 96), dev, "head sizes 64, 128, 192 and 256");
  refused(shape(64, 64, 1, 8192, 32, 8, 128), dev, "decode");
  UnifiedOptions three_d = force;
  three_d.path = UnifiedPath::three_d;
  EXPECT_THROW((void)hipattn::plan_unified_attention(p, three_d, dev), hipattn::Error);
}

TEST(Plan, TileKindBoundary) {
  // max_seqlen_q * G <= 16 -> decode tile, else prefill.
  for (int32_t g : {1, 2, 4, 8, 16, 32})
    for (int32_t q = 1; q <= 40; ++q) {
      const auto p = shape(3, 3 * q, q, 4096, 8 * g, 8, 128);
      const auto pl = hipattn::plan_unified_attention(p, {}, device(Target::sm90, 132));
      EXPECT_EQ(pl.tile_kind == UnifiedTileKind::decode, q * g <= 16) << "q=" << q << " G=" << g;
    }
}

TEST(Plan, RowsPerTokenBlockQHeadChunks) {
  const PlanDevice dev = device(Target::sm90, 132);
  struct Row {
    int32_t g, max_q, d;
    int32_t bm, rows_per_token, block_q, head_chunks;
  };
  const Row rows[] = {
      // decode (q = 1): G <= 16 -> 16-row tiles; G >= 32 -> prefill tiles (64 rows on sm_90)
      {1, 1, 128, 16, 1, 16, 1},     {4, 1, 128, 16, 4, 4, 1},     {8, 1, 128, 16, 8, 2, 1},
      {16, 1, 128, 16, 16, 1, 1},    {32, 1, 128, 64, 32, 2, 1},   {128, 1, 128, 64, 64, 1, 2},
      {32, 1, 256, 64, 32, 2, 1},    {128, 1, 256, 64, 64, 1, 2},  {256, 1, 128, 64, 64, 1, 4},
      // prefill (q = 100)
      {1, 100, 128, 64, 1, 64, 1},   {4, 100, 128, 64, 4, 16, 1},  {8, 100, 128, 64, 8, 8, 1},
      {16, 100, 128, 64, 16, 4, 1},  {32, 100, 128, 64, 32, 2, 1}, {128, 100, 128, 64, 64, 1, 2},
      {1, 100, 256, 64, 1, 64, 1},   {4, 100, 256, 64, 4, 16, 1},  {8, 100, 192, 64, 8, 8, 1},
      {16, 100, 256, 64, 16, 4, 1},  {32, 100, 256, 64, 32, 2, 1}, {128, 100, 256, 64, 64, 1, 2},
  };
  for (const Row& r : rows) {
    const int32_t hkv = 2;
    const auto p = shape(5, 5 * r.max_q, r.max_q, 5000, r.g * hkv, hkv, r.d);
    UnifiedOptions skeleton;  // the skeleton's row map (the warpgroup pipeline's: Plan.WarpgroupPipeline)
    skeleton.pipeline = hipattn::UnifiedPipeline::skeleton;
    const auto pl = hipattn::plan_unified_attention(p, skeleton, dev);
    SCOPED_TRACE("G=" + std::to_string(r.g) + " max_q=" + std::to_string(r.max_q) + " d=" + std::to_string(r.d));
    EXPECT_EQ(pl.tile.rows(), r.bm);
    EXPECT_EQ(pl.rows_per_token, r.rows_per_token);
    EXPECT_EQ(pl.block_q, r.block_q);
    EXPECT_EQ(pl.head_chunks, r.head_chunks);
    EXPECT_EQ(pl.head_chunks > 1, r.g > r.bm);
    EXPECT_LE(pl.block_q * pl.rows_per_token, pl.tile.rows());
    EXPECT_GE(static_cast<int64_t>(pl.head_chunks) * pl.rows_per_token, r.g);
    EXPECT_EQ(pl.base_workgroups, pl.grid_x * hkv * pl.head_chunks);
  }
}

TEST(Plan, ForcedPathsAndSegments) {
  const PlanDevice dev = device(Target::sm90, 132);
  const auto big = shape(64, 64, 1, 8192, 32, 8, 128);      // auto: 2D
  const auto small = shape(8, 8, 1, 32768, 32, 8, 128);     // auto: 3D
  UnifiedOptions o;
  o.path = UnifiedPath::three_d;
  auto pl = hipattn::plan_unified_attention(big, o, dev);
  EXPECT_TRUE(pl.split());
  EXPECT_TRUE(pl.grid == UnifiedGrid::split_planned);  // 1 uniform segment for a 128-tile decode batch: the planner's slots instead
  EXPECT_EQ(pl.capacity, 66);  // whole waves: 2 x (264 / 8) (8K keys: no spare slots)
  EXPECT_EQ(pl.wave_slots, 33);
  EXPECT_EQ(pl.workspace_bytes, planned_workspace(big, 66));
  // a bound of 16K keys or more: half a wave spare, 3 x 33
  EXPECT_EQ(hipattn::plan_unified_attention(shape(64, 64, 1, 16384, 32, 8, 128), o, dev).capacity, 99);
  o.num_segments = 7;
  pl = hipattn::plan_unified_attention(big, o, dev);
  EXPECT_TRUE(pl.split());
  EXPECT_EQ(pl.num_segments, 7);
  EXPECT_EQ(pl.workspace_bytes, size_t{7} * 64 * 32 * 129 * 4 + 256);
  o.path = UnifiedPath::two_d;
  pl = hipattn::plan_unified_attention(small, o, dev);
  EXPECT_FALSE(pl.split());
  EXPECT_EQ(pl.workspace_bytes, 0u);
  // Auto with a forced segment count.
  o.path = UnifiedPath::automatic;
  o.num_segments = 3;
  pl = hipattn::plan_unified_attention(small, o, dev);
  EXPECT_TRUE(pl.split());
  EXPECT_EQ(pl.num_segments, 3);
  EXPECT_EQ(pl.workspace_bytes, size_t{3} * 8 * 32 * 129 * 4 + 256);
  // Short sequences (< 4 tiles of 64 keys) stay 2D even on a tiny grid; 4 tiles split.
  EXPECT_FALSE(hipattn::plan_unified_attention(shape(1, 1, 1, 192, 8, 8, 128), {}, dev).split());
  EXPECT_TRUE(hipattn::plan_unified_attention(shape(1, 1, 1, 193, 8, 8, 128), {}, dev).split());
  // Segments capped by the tile count: 1 workgroup, 5 tiles -> 5 segments (not ceil(264 / 1)).
  EXPECT_EQ(hipattn::plan_unified_attention(shape(1, 1, 1, 320, 1, 1, 128), {}, dev).num_segments, 5);
  // ... and by 64: 1 workgroup, 10000 tiles.
  EXPECT_EQ(hipattn::plan_unified_attention(shape(1, 1, 1, 640000, 1, 1, 128), {}, dev).num_segments, 64);
}

TEST(Plan, RandomShapesFollowTheRules) {
  const uint32_t seed = 606;
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937 rng(seed);
  auto ui = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
  const Target targets[] = {Target::sm90, Target::gfx942, Target::gfx950};
  const int32_t groups[] = {1, 2, 4, 5, 6, 8, 16, 32, 48, 96, 128, 256};
  const int32_t dims[] = {64, 96, 128, 192, 256};
  int failures = 0;
  int auto_split = 0, auto_2d = 0, decode = 0, prefill = 0, chunked = 0;
  for (int it = 0; it < 20000; ++it) {
    const int32_t seqs = ui(1, 300);
    const int32_t max_q = ui(0, 3) == 0 ? 1 : ui(1, 600);
    const int32_t tokens = max_q == 1 ? seqs : ui(seqs, seqs * max_q);
    const int32_t max_k = ui(0, 2) == 0 ? ui(max_q, max_q + 300) : ui(max_q, 200000);
    const int32_t hkv = ui(1, 16), g = groups[ui(0, 11)], d = dims[ui(0, 4)];
    const auto p = shape(seqs, tokens, max_q, max_k, hkv * g, hkv, d);
    UnifiedOptions o;
    const int mode = ui(0, 4);
    o.path = mode == 3 ? UnifiedPath::three_d : mode == 4 ? UnifiedPath::two_d : UnifiedPath::automatic;
    o.num_segments = ui(0, 3) == 0 ? ui(1, 80) : 0;
    const Target t = targets[ui(0, 2)];
    const PlanDevice dev = device(t, t == Target::sm90 ? ui(1, 140) : ui(1, 320));
    const auto pl = hipattn::plan_unified_attention(p, o, dev);
    const std::string err = diff(pl, expected_plan(p, o, dev));
    if (!err.empty() && ++failures <= 10) ADD_FAILURE() << "it=" << it << " " << describe(p, o, dev) << ": " << err;
    // Chosen (not forced) segment counts never exceed the tile count of the longest sequence, nor 64.
    if (pl.split() && o.num_segments == 0) {
      const int64_t tiles = (std::max(1, max_k) + pl.tile.keys() - 1) / pl.tile.keys();
      if ((pl.num_segments < 1 || pl.num_segments > tiles || pl.num_segments > 64) && ++failures <= 10)
        ADD_FAILURE() << "it=" << it << " " << describe(p, o, dev) << ": segments " << pl.num_segments << " for "
                      << tiles << " tiles";
    }
    if (!pl.split() && pl.workspace_bytes != 0 && ++failures <= 10) ADD_FAILURE() << "2D plan with a workspace";
    if (o.path == UnifiedPath::automatic) ++(pl.split() ? auto_split : auto_2d);
    ++(pl.tile_kind == UnifiedTileKind::decode ? decode : prefill);
    chunked += pl.head_chunks > 1;
  }
  EXPECT_EQ(failures, 0);
  // The random shapes reach every branch.
  EXPECT_GT(auto_split, 500);
  EXPECT_GT(auto_2d, 500);
  EXPECT_GT(decode, 500);
  EXPECT_GT(prefill, 500);
  EXPECT_GT(chunked, 100);
}

TEST(Plan, NegativeSegmentsThrow) {
  const PlanDevice dev = device(Target::sm90, 132);
  for (UnifiedPath path : {UnifiedPath::three_d, UnifiedPath::automatic}) {
    UnifiedOptions o;
    o.path = path;
    o.num_segments = -2;
    try {
      (void)hipattn::plan_unified_attention(shape(8, 8, 1, 32768, 32, 8, 128), o, dev);  // 3D either way
      ADD_FAILURE() << "no throw for num_segments = -2, path " << static_cast<int>(path);
    } catch (const hipattn::Error& e) {
      EXPECT_EQ(e.code(), hipattn::ErrorCode::invalid_argument);
      EXPECT_EQ(e.field(), "options.num_segments");
      EXPECT_NE(std::string(e.what()).find("options.num_segments"), std::string::npos) << e.what();
    }
  }
}

TEST(Plan, UnknownTargetThrowsUnsupported) {
  for (Target t : {Target::host, Target::other}) {
    try {
      (void)hipattn::plan_unified_attention(shape(8, 8, 1, 32768, 32, 8, 128), {}, device(t, 100));
      ADD_FAILURE() << "no throw for target " << hipattn::target_name(t);
    } catch (const hipattn::Error& e) {
      EXPECT_EQ(e.code(), hipattn::ErrorCode::unsupported) << e.what();
      EXPECT_EQ(e.field(), "target");
    }
  }
}

}  // namespace

// The name of a compiled configuration in a refusal (shared memory, a pipeline not built) says its KV
// kind, so that a missing fp8 instance does not read like a 16-bit one.
TEST(Plan, InstanceNamesSayTheKvKind) {
  using hipattn::KvKind;
  using hipattn::Target;
  using hipattn::UnifiedTileKind;
  using Fp8 = hipattn::unified_instance_config_t<true, KvKind::e4m3fn, 128, UnifiedTileKind::decode, hipattn::PlainVariant,
                                                 Target::sm90>;
  using Same = hipattn::unified_instance_config_t<true, KvKind::same16, 128, UnifiedTileKind::decode,
                                                  hipattn::PlainVariant, Target::sm90>;
  using Q8 = hipattn::unified_instance_config_t<false, KvKind::e4m3fnuz_q8, 64, UnifiedTileKind::prefill,
                                                hipattn::PlainVariant, Target::gfx942>;
  EXPECT_EQ(hipattn::config_name<Fp8>("unified_2d_kernel"),
            "unified_2d_kernel<bf16, kv=e4m3fn, D=128, BM=" + std::to_string(Fp8::kBM) + ", BN=" + std::to_string(Fp8::kBN) + ">");
  EXPECT_NE(hipattn::config_name<Same>("split_kv_3d_kernel").find("<bf16, kv=same16, D=128"), std::string::npos);
  EXPECT_NE(hipattn::config_name<Q8>("unified_2d_kernel").find("<f16, kv=e4m3fnuz_q8, D=64"), std::string::npos);
}
