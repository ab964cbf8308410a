// tests/emu/test_emu_timing.cpp: the timing layer (emu/timing.hpp) on instruction sequences whose
// time its rules fix (kernels/timing.hip, one wave each): the bounds below are the rules' own
// arithmetic (docs/AMD-TIMING.md §7), so a rule implemented wrongly fails here, before
// any calibration.
//   * 32 MFMAs 32x32x8 bf16 into one C: the matrix pipe is busy 32 x 8 passes x 4 clocks;
//   * 128 dependent v_fmac_f32: 4 clocks each; 64 v_exp_f32: the transcendental rate;
//   * 32 LDS dword reads: 1 bank cycle each without conflicts, 64 / (banks) x ... with every lane in
//     one bank (the conflict cycles come from the lanes' real addresses);
//   * 16 independent 16-byte loads and one wait: one latency plus the bytes over the CU's path.
// Code objects: $HIPATTN_EMU_TIMING_GFX942 / $HIPATTN_EMU_TIMING_GFX950.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core.hpp"
#include "emu.hpp"
#include "timing.hpp"

namespace hipattn::emu {
namespace {

class EmuTiming : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string var = "HIPATTN_EMU_TIMING_" + std::string(GetParam() == "gfx942" ? "GFX942" : "GFX950");
    const char* p = std::getenv(var.c_str());
    if (!p || !*p) GTEST_SKIP() << var << " not set (no AMD toolchain): emulated test skipped";
    co = CodeObject::load(p);
    params = co->gfx() == Gfx::gfx942 ? mi300x_params() : mi355x_params();
  }
  // One wave of `name` over random inputs, traced; the CU's cycles for that one workgroup.
  CuResult time(const char* name, int extra = -1, double dram_fraction = 0) {
    Memory mem;
    std::mt19937 rng(5);
    std::normal_distribution<float> nd;
    std::vector<float> in(64 * 16 * 4);
    for (auto& x : in) x = nd(rng) * 0.1f;
    const uint64_t din = mem.upload(in, "in");
    const uint64_t dout = mem.alloc(64 * 16 * sizeof(float), "out");
    struct {
      uint64_t out, in;
      int32_t extra;
    } args{dout, din, extra};
    const KernelInfo& k = co->find({name});
    Trace tr;
    LaunchOptions opt;
    opt.trace = &tr;
    launch(*co, k, {1, 1, 1}, {64, 1, 1}, 0, &args, extra >= 0 ? 20 : 16, mem, opt);
    EXPECT_EQ(tr.workgroups.size(), 1u);
    EXPECT_TRUE(untimed_mnemonics(*co, k).empty());
    return simulate_cu(tr, {0}, params, dram_fraction, 1);
  }
  std::shared_ptr<const CodeObject> co;
  CuParams params;
};

// The most a single wave's run can take beyond the unit that bounds it: every instruction at one
// issue turn (4 clocks) plus its s_nop wait states, the memory path's segments, the kernel-argument load, and two vector-memory round trips (inputs, stores).
double slack(const CuResult& r, const CuParams& p) {
  return 4.0 * r.instructions + r.nop_clocks + r.vmem_path + p.lat_smem + 2.0 * p.lat_l2();
}

TEST_P(EmuTiming, MfmaChainOccupiesTheMatrixPipe) {
  const CuResult r = time("timing_mfma");
  EXPECT_DOUBLE_EQ(r.mfma_busy, 32 * 8 * 4);
  EXPECT_GE(r.cycles, 32 * 8 * 4 + params.lat_smem + params.lat_l2()) << "the chain after its inputs arrive";
  EXPECT_LE(r.cycles, 32 * 8 * 4 + slack(r, params));
}

TEST_P(EmuTiming, ValuAndTranscendentalRates) {
  const CuResult v = time("timing_valu");
  const CuResult e = time("timing_trans");
  EXPECT_DOUBLE_EQ(v.valu_busy, 4.0 * (128 + 1));  // the FMAs and the address shift
  EXPECT_DOUBLE_EQ(e.valu_busy, 64.0 * params.trans_clocks + 4.0);
  EXPECT_GE(v.cycles, 128 * 4 + params.lat_smem + params.lat_l2());
  EXPECT_GE(e.cycles, 64 * params.trans_clocks + params.lat_smem + params.lat_l2()) << "quarter rate";
  EXPECT_LE(e.cycles, 64 * params.trans_clocks + slack(e, params));
}

TEST_P(EmuTiming, LdsBankConflictsFromAddresses) {
  const CuResult flat = time("timing_lds", 1);
  const CuResult one_bank = time("timing_lds", params.lds_banks);
  // 32 reads of 64 lanes: without conflicts 64 / banks bank cycles each; all lanes in one bank: 64
  const double per_read_flat = 64.0 / params.lds_banks, per_read_bank = 64.0;
  const double extra = 32 * (per_read_bank - per_read_flat) * params.lds_port_clocks;
  EXPECT_NEAR(one_bank.lds_busy - flat.lds_busy, extra, 1.0);
  EXPECT_GT(one_bank.cycles, flat.cycles + extra * 0.9);
}

TEST_P(EmuTiming, VectorMemoryLatencyAndBandwidth) {
  const CuResult l2 = time("timing_vmem", -1, 0.0);
  const CuResult hbm = time("timing_vmem", -1, 1.0);
  EXPECT_DOUBLE_EQ(l2.vmem_bytes, 16 * 64 * 16 + 64 * 4 + 0.0) << "16 loads of 1 KiB and one 256-byte store";
  // from HBM the loads wait the longer latency and the CU's share of the bandwidth
  EXPECT_GT(hbm.cycles - l2.cycles, params.lat_hbm() - params.lat_l2() - 1.0);
}

INSTANTIATE_TEST_SUITE_P(Targets, EmuTiming, ::testing::Values("gfx942", "gfx950"));

}  // namespace
}  // namespace hipattn::emu
