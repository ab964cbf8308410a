// tests/emu/test_emu_checks.cpp: the emulator's own checks, shown to fire. A small loader-shaped
// kernel (kernels/checks.hip) runs clean and correct on gfx942 and gfx950; then
//   * its code object with the s_waitcnt vmcnt after the global load replaced by s_nop must be
//     reported as a wait-count hazard (the LDS store reads the load's registers too early);
//   * with the s_waitcnt lgkmcnt after the LDS read removed, likewise (lgkmcnt);
//   * with the s_barrier replaced by s_nop, an LDS race (a wave reads what the other wrote);
//   * with an input buffer one element short, a memory fault naming the buffer;
//   * with the waves interleaved (LaunchOptions::wave_quantum 1), the same checks still fire, and
//     check_lds_waitcnt = false silences only the LDS results' waits.
// Code objects: $HIPATTN_EMU_CHECKS_GFX942 / $HIPATTN_EMU_CHECKS_GFX950.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

#include "core.hpp"
#include "emu.hpp"

namespace hipattn::emu {
namespace {

std::string co_path(const std::string& gfx) {
  const std::string var = "HIPATTN_EMU_CHECKS_" + std::string(gfx == "gfx942" ? "GFX942" : "GFX950");
  const char* p = std::getenv(var.c_str());
  return p ? p : "";
}

struct Run {
  std::vector<float> in, out;
};

// Launches stage_through_lds over 2 workgroups of 128 threads; `in_elems` floats of input.
std::vector<float> run_stage(const CodeObject& co, size_t in_elems, const std::vector<float>& in,
                             const LaunchOptions& opt = {}) {
  Memory mem;
  std::vector<float> src(in.begin(), in.begin() + std::min(in.size(), in_elems));
  const uint64_t din = mem.upload(src, "in");
  const uint64_t dout = mem.alloc(256 * sizeof(float), "out");
  struct {
    uint64_t in, out;
  } args{din, dout};
  launch(co, co.find({"stage_through_lds"}), {2, 1, 1}, {128, 1, 1}, 0, &args, sizeof args, mem, opt);
  return mem.download<float>(dout, 256);
}

// Copy of the code object with the instruction at `addr` (4 bytes) replaced by s_nop 0.
std::shared_ptr<const CodeObject> patched(const CodeObject& co, uint64_t addr, const std::string& tag) {
  std::ifstream f(co.path(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const uint32_t nop = 0xBF800000u;
  std::memcpy(bytes.data() + co.file_offset(addr), &nop, 4);
  const std::string out = ::testing::TempDir() + "/emu_checks_" + tag + "_" + gfx_name(co.gfx()) + ".co";
  std::ofstream(out, std::ios::binary) << bytes;
  return CodeObject::load(out);
}

// Address of the first instruction after the first one whose mnemonic starts with `after` that
// satisfies `pred`.
template <class P>
uint64_t find_after(const CodeObject& co, const std::string& after, P pred) {
  const auto& code = co.code(co.find({"stage_through_lds"}));
  bool seen = false;
  for (const auto& in : code) {
    if (!seen && in.mnemonic.rfind(after, 0) == 0) { seen = true; continue; }
    if (seen && pred(in)) return in.addr;
  }
  ADD_FAILURE() << "no instruction after " << after;
  return 0;
}

class EmuChecks : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string p = co_path(GetParam());
    if (p.empty()) GTEST_SKIP() << "HIPATTN_EMU_CHECKS_" << GetParam() << " not set (no AMD toolchain): emulated test skipped";
    co = CodeObject::load(p);
    std::mt19937 rng(7);
    std::normal_distribution<float> nd;
    in.resize(256 * 4);
    for (auto& x : in) x = nd(rng);
  }
  std::shared_ptr<const CodeObject> co;
  std::vector<float> in;
};

TEST_P(EmuChecks, CleanRunIsCorrect) {
  const auto out = run_stage(*co, in.size(), in);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 128; ++t) {
      const float* v = &in[4 * (b * 128 + (t + 64) % 128)];
      const float want = std::fma(v[0], v[1], v[2]) - v[3];
      ASSERT_EQ(out[b * 128 + t], want) << "block " << b << " thread " << t;
    }
}

TEST_P(EmuChecks, RemovedVmcntWaitIsAHazard) {
  const uint64_t at = find_after(*co, "global_load", [](const Instruction& in) { return in.base == "s_waitcnt" && in.mods.vmcnt >= 0; });
  auto bad = patched(*co, at, "vmcnt");
  try {
    run_stage(*bad, in.size(), in);
    FAIL() << "no hazard reported with the vmcnt wait removed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, Error::Kind::hazard) << e.what();
    EXPECT_NE(std::string(e.what()).find("vmcnt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("global_load"), std::string::npos) << e.what();
    std::printf("[%s] %s\n", gfx_name(co->gfx()), e.what());
  }
  // the same object with the check off runs (the functional result happens to be right: that is
  // exactly what a functional run hides)
  LaunchOptions off;
  off.check_waitcnt = false;
  auto unchecked = [&] {
    Memory mem;
    const uint64_t din = mem.upload(in, "in"), dout = mem.alloc(1024, "out");
    struct {
      uint64_t a, b;
    } args{din, dout};
    launch(*bad, bad->find({"stage_through_lds"}), {2, 1, 1}, {128, 1, 1}, 0, &args, sizeof args, mem, off);
  };
  EXPECT_NO_THROW(unchecked());
}

TEST_P(EmuChecks, RemovedLgkmcntWaitIsAHazard) {
  const uint64_t at = find_after(*co, "ds_read", [](const Instruction& in) { return in.base == "s_waitcnt" && in.mods.lgkmcnt >= 0; });
  auto bad = patched(*co, at, "lgkmcnt");
  try {
    run_stage(*bad, in.size(), in);
    FAIL() << "no hazard reported with the lgkmcnt wait removed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, Error::Kind::hazard) << e.what();
    EXPECT_NE(std::string(e.what()).find("lgkmcnt"), std::string::npos) << e.what();
  }
}

TEST_P(EmuChecks, RemovedBarrierIsAnLdsRace) {
  const uint64_t at = find_after(*co, "ds_write", [](const Instruction& in) { return in.base == "s_barrier"; });
  auto bad = patched(*co, at, "barrier");
  try {
    run_stage(*bad, in.size(), in);
    FAIL() << "no LDS race reported with the barrier removed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, Error::Kind::lds_race) << e.what();
    std::printf("[%s] %s\n", gfx_name(co->gfx()), e.what());
  }
}

// LaunchOptions::wave_quantum 1 (the waves take one instruction each in turn) and
// check_lds_waitcnt = false, the relaxations AITER's hand-written kernels need: the clean kernel stays
// correct; a removed barrier is still an LDS race (the relaxation covers only LDS DMA writes after an
// earlier read); a removed lgkmcnt wait is still a hazard unless LDS results go unchecked, and a
// removed vmcnt wait is one even then.
TEST_P(EmuChecks, InterleavedWavesAndUncheckedLdsResults) {
  LaunchOptions il;
  il.wave_quantum = 1;
  const auto out = run_stage(*co, in.size(), in, il);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 128; ++t) {
      const float* v = &in[4 * (b * 128 + (t + 64) % 128)];
      ASSERT_EQ(out[b * 128 + t], std::fma(v[0], v[1], v[2]) - v[3]) << "block " << b << " thread " << t;
    }
  auto no_barrier = patched(*co, find_after(*co, "ds_write", [](const Instruction& in) { return in.base == "s_barrier"; }),
                            "barrier_il");
  try {
    run_stage(*no_barrier, in.size(), in, il);
    FAIL() << "no LDS race reported with the barrier removed and the waves interleaved";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, Error::Kind::lds_race) << e.what();
  }
  auto no_lgkm = patched(*co, find_after(*co, "ds_read", [](const Instruction& in) {
                           return in.base == "s_waitcnt" && in.mods.lgkmcnt >= 0;
                         }), "lgkmcnt_il");
  try {
    run_stage(*no_lgkm, in.size(), in, il);
    FAIL() << "no hazard reported with the lgkmcnt wait removed and the waves interleaved";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, Error::Kind::hazard) << e.what();
  }
  LaunchOptions lds_unchecked = il;
  lds_unchecked.check_lds_waitcnt = false;
  EXPECT_NO_THROW(run_stage(*no_lgkm, in.size(), in, lds_unchecked));
  auto no_vm = patched(*co, find_after(*co, "global_load", [](const Instruction& in) {
                         return in.base == "s_waitcnt" && in.mods.vmcnt >= 0;
                       }), "vmcnt_il");
  try {
    run_stage(*no_vm, in.size(), in, lds_unchecked);
    FAIL() << "no hazard reported with the vmcnt wait removed (LDS results unchecked)";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, Error::Kind::hazard) << e.what();
    EXPECT_NE(std::string(e.what()).find("vmcnt"), std::string::npos) << e.what();
  }
}

TEST_P(EmuChecks, ShortBufferIsAMemoryFault) {
  try {
    run_stage(*co, in.size() - 1, in);
    FAIL() << "no fault for a read past the input buffer";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, Error::Kind::memory_fault) << e.what();
    EXPECT_NE(std::string(e.what()).find("'in'"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, EmuChecks, ::testing::Values("gfx942", "gfx950"));

}  // namespace
}  // namespace hipattn::emu
