// tests/emu/test_emu_gpr_idx.cpp: VGPR index mode (s_set_gpr_idx_on / s_set_gpr_idx_off: VALU
// operands relative to M0[7:0] for the operands M0[15:12] names; CDNA3 ISA 6.6 "VGPR Indexing"), run on
// kernels/gpr_idx.hip, and LaunchOptions::wave_quantum (the waves of a workgroup in turns of N
// instructions) leaving results and checks unchanged on a barrier-synchronized kernel
// (kernels/checks.hip).
// Code objects: $HIPATTN_EMU_GPR_IDX_GFX942 / _GFX950, $HIPATTN_EMU_CHECKS_GFX942 / _GFX950.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "emu.hpp"

namespace hipattn::emu {
namespace {

std::string env_path(const std::string& name, const std::string& gfx) {
  const std::string var = "HIPATTN_EMU_" + name + "_" + (gfx == "gfx942" ? "GFX942" : "GFX950");
  const char* p = std::getenv(var.c_str());
  return p ? p : "";
}

class EmuGprIdx : public ::testing::TestWithParam<std::string> {};

TEST_P(EmuGprIdx, IndexedSourcesAndDestination) {
  const std::string p = env_path("GPR_IDX", GetParam());
  if (p.empty()) GTEST_SKIP() << "HIPATTN_EMU_GPR_IDX_" << GetParam() << " not set (no AMD toolchain)";
  auto co = CodeObject::load(p);
  const KernelInfo& k = co->find({"gpr_idx"});
  ASSERT_TRUE(co->mnemonics(k).count("s_set_gpr_idx_on"));
  for (uint32_t idx : {0u, 1u, 2u}) {
    Memory mem;
    const uint64_t out = mem.alloc(64 * 3 * 4, "out");
    uint8_t args[12];  // (uint32_t* out, uint32_t idx): 12 bytes
    std::memcpy(args, &out, 8);
    std::memcpy(args + 8, &idx, 4);
    launch(*co, k, {1, 1, 1}, {64, 1, 1}, 0, args, sizeof args, mem);
    const auto r = mem.download<uint32_t>(out, 64 * 3);
    for (uint32_t t = 0; t < 64; ++t) {
      const uint32_t v[4] = {100 + t, 200 + t, 300 + t, 400 + t};  // v10..v13
      EXPECT_EQ(r[3 * t + 0], v[idx]) << "idx " << idx << " lane " << t;
      EXPECT_EQ(r[3 * t + 1], v[idx] + v[3]) << "idx " << idx << " lane " << t;
      EXPECT_EQ(r[3 * t + 2], idx == 1 ? 7u : v[1]) << "idx " << idx << " lane " << t;
    }
  }
}

TEST_P(EmuGprIdx, WaveQuantumKeepsResultsAndChecks) {
  const std::string p = env_path("CHECKS", GetParam());
  if (p.empty()) GTEST_SKIP() << "HIPATTN_EMU_CHECKS_" << GetParam() << " not set (no AMD toolchain)";
  auto co = CodeObject::load(p);
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  std::vector<float> in(256 * 4);
  for (auto& x : in) x = nd(rng);
  std::vector<std::vector<float>> outs;
  for (uint32_t quantum : {0u, 1u, 5u}) {
    Memory mem;
    const uint64_t din = mem.upload(in, "in");
    const uint64_t dout = mem.alloc(256 * sizeof(float), "out");
    struct {
      uint64_t in, out;
    } args{din, dout};
    LaunchOptions opt;
    opt.wave_quantum = quantum;
    const LaunchStats st = launch(*co, co->find({"stage_through_lds"}), {2, 1, 1}, {128, 1, 1}, 0, &args, sizeof args, mem, opt);
    EXPECT_EQ(st.waves, 4u);
    outs.push_back(mem.download<float>(dout, 256));
  }
  EXPECT_EQ(outs[0], outs[1]);
  EXPECT_EQ(outs[0], outs[2]);
}

INSTANTIATE_TEST_SUITE_P(Targets, EmuGprIdx, ::testing::Values("gfx942", "gfx950"));

}  // namespace
}  // namespace hipattn::emu
