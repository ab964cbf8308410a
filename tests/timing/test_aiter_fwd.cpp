// tests/timing/test_aiter_fwd.cpp: AITER's prefill forward objects (fmha fwd v3) on the emulator against
// the float64 reference (aiter_fwd.hpp), and the per-workgroup work list against the MFMAs a launch
// executes. One test per object; each runs a few shapes: GQA, s_q != s_k, lengths that are not
// multiples of the tiles, several Q tiles (causal: the head / tail pairing, an odd tile count), batch 2
// with 8 query heads (the causal objects' msk_opt 5 remap). Skipped when $HIPATTN_CALIBRATION_DIR names
// no calibration folder, or the object is absent.
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "aiter_fwd.hpp"

namespace hipattn::timing {
namespace {

std::string describe(const FwdShape& s) {
  return "b" + std::to_string(s.batch) + " h" + std::to_string(s.heads_q) + "/" + std::to_string(s.heads_kv) + " s" +
         std::to_string(s.seqlen_q) + "/" + std::to_string(s.seqlen_k);
}

void run_object(emu::Gfx gfx, const std::string& name, const std::vector<FwdShape>& shapes) {
  if (calibration_dir().empty())
    GTEST_SKIP() << "$HIPATTN_CALIBRATION_DIR names no folder with aiter/ (AITER's calibration objects)";
  const AiterFwdKernel* k = find_aiter_fwd(gfx, name);
  if (k == nullptr)
    GTEST_SKIP() << name << " (" << emu::gfx_name(gfx) << ") is not under " << calibration_dir()
                 << "/aiter or not in its fmha_fwd.csv";
  uint64_t seed = 0x5eed0000u;
  for (const FwdShape& s : shapes) {
    SCOPED_TRACE(k->name + " " + describe(s));
    std::string why;
    ASSERT_TRUE(aiter_fwd_supported(*k, s, &why)) << why;
    const auto t0 = std::chrono::steady_clock::now();
    const KernelRun r = run_aiter_fwd(*k, s, ++seed, aiter_fwd_options(*k), true);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ aiter    ] %-60s %s %8lu instr %6.2f s  max|err| %.2e (%.2e of max|O|)\n", r.label.c_str(),
                r.pass() ? "pass" : "FAIL", (unsigned long)r.stats.instructions, secs, r.max_abs_err, r.max_rel_err);
    EXPECT_TRUE(r.pass()) << r.label << ": " << r.detail;
    EXPECT_EQ(r.compared, int64_t(s.batch) * s.seqlen_q * s.heads_q * (k->d_v + 1));  // every O and LSE element
    // the launch geometry the harness reports is the launcher's
    const emu::Dim3 g = aiter_fwd_grid(*k, s);
    EXPECT_EQ(r.grid.x, g.x);
    EXPECT_EQ(r.grid.y, g.y);
    EXPECT_EQ(r.grid.z, g.z);
    EXPECT_EQ(r.block.x, uint32_t(k->block_threads));
    EXPECT_EQ(r.stats.workgroups, uint64_t(g.x) * g.y * g.z);
    // The work list: the MFMAs executed are exactly the sum over the workgroups of their KV tiles
    // times one tile's QK^T + PV multiply-accumulates (no constant part in these objects).
    const std::vector<int> work = aiter_fwd_work(*k, s);
    ASSERT_EQ(work.size(), size_t(g.x) * g.y * g.z);
    const int64_t tiles = std::accumulate(work.begin(), work.end(), int64_t(0));
    const int64_t macs = mfma_macs(r.stats);
    ASSERT_GT(macs, 0);
    EXPECT_EQ(macs, tiles * aiter_fwd_macs_per_tile(*k))
        << "executed MFMA MACs / MACs per tile = " << double(macs) / double(aiter_fwd_macs_per_tile(*k))
        << ", work list sum = " << tiles;
  }
}

// Non-causal shapes: GQA 2, s_q < s_k, lengths off the tile grid, s_q > s_k with GQA 3 (4 for the
// gfx950 fp8 object, which supports power-of-two GQA only), batch 2 with several Q tiles.
std::vector<FwdShape> plain_shapes(bool pow2_gqa) {
  return {{1, 2, 1, 256, 256}, {1, 2, 1, 128, 384}, {1, 2, 2, 200, 328},
          {1, pow2_gqa ? 4 : 3, 1, 333, 77}, {2, 8, 2, 512, 640}};
}
// Causal (bottom-right) shapes: s_q <= s_k throughout; 640 rows = 3 Q tiles of 256 (an odd count: the
// middle workgroup runs its tile twice) or 5 of 128.
std::vector<FwdShape> causal_shapes() {
  return {{1, 2, 1, 256, 256}, {1, 2, 1, 128, 384}, {1, 2, 2, 200, 328}, {1, 1, 1, 640, 640}, {2, 8, 2, 512, 640}};
}

TEST(AiterFwd, Gfx942_fwd_hd128_bf16_rtne) { run_object(emu::Gfx::gfx942, "fwd_hd128_bf16_rtne", plain_shapes(false)); }
TEST(AiterFwd, Gfx942_fwd_hd128_bf16_causal_rtne) {
  run_object(emu::Gfx::gfx942, "fwd_hd128_bf16_causal_rtne", causal_shapes());
}
TEST(AiterFwd, Gfx942_fwd_hd128_fp8) { run_object(emu::Gfx::gfx942, "fwd_hd128_fp8", plain_shapes(false)); }
TEST(AiterFwd, Gfx942_fwd_hd192x128_bf16_causal_rtne) {
  run_object(emu::Gfx::gfx942, "fwd_hd192x128_bf16_causal_rtne", causal_shapes());
}
TEST(AiterFwd, Gfx950_fwd_hd128_bf16) { run_object(emu::Gfx::gfx950, "fwd_hd128_bf16", plain_shapes(false)); }
TEST(AiterFwd, Gfx950_fwd_hd128_bf16_causal) { run_object(emu::Gfx::gfx950, "fwd_hd128_bf16_causal", causal_shapes()); }
TEST(AiterFwd, Gfx950_fwd_hd128_fp8) { run_object(emu::Gfx::gfx950, "fwd_hd128_fp8", plain_shapes(true)); }
TEST(AiterFwd, Gfx950_fwd_hd192_hd128_bf16_causal) {
  run_object(emu::Gfx::gfx950, "fwd_hd192_hd128_bf16_causal", causal_shapes());
}

// The table: every batch-mode forward object of the calibration folder is listed with the launcher's
// block size, and the grid follows the launcher's rule (tg_div = 2 for causal; gfx942 d192 transposed).
TEST(AiterFwd, KernelTableAndGrid) {
  if (calibration_dir().empty())
    GTEST_SKIP() << "$HIPATTN_CALIBRATION_DIR names no folder with aiter/ (AITER's calibration objects)";
  const auto all = aiter_fwd_kernels();
  ASSERT_FALSE(all.empty());
  for (const auto& k : all) {
    SCOPED_TRACE(k.name);
    EXPECT_EQ(k.block_threads, k.d_qk == 192 ? 256 : 512);
    EXPECT_GT(k.ts_qo, 0);
    EXPECT_GT(k.ts_kv, 0);
    const FwdShape s{3, 5, 1, 3 * k.ts_qo + 1, 1000};  // 4 Q tiles
    const emu::Dim3 g = aiter_fwd_grid(k, s);
    if (k.gfx == emu::Gfx::gfx942 && k.d_qk == 192) {
      EXPECT_EQ(g.x, 5u);
      EXPECT_EQ(g.y, 4u);
    } else {
      EXPECT_EQ(g.x, k.causal ? 2u : 4u);
      EXPECT_EQ(g.y, 5u);
    }
    EXPECT_EQ(g.z, 3u);
    // every Q tile is covered by the work assignment (causal: each exactly once when the count is even)
    std::vector<int> seen(4, 0);
    for (const auto& tiles : aiter_fwd_q_tiles(k, s))
      for (int t : tiles) {
        ASSERT_GE(t, 0);
        ASSERT_LT(t, 4);
        ++seen[size_t(t)];
      }
    for (int t = 0; t < 4; ++t) EXPECT_EQ(seen[size_t(t)], 3 * 5) << "Q tile " << t;
  }
}

}  // namespace
}  // namespace hipattn::timing
