// tests/emu/test_emu_buffer.cpp: buffer (MUBUF) loads on the emulator, for the AMD loaders to come.
// kernels/buffer.hip stages 64 dwords per wave into LDS by buffer loads with `lds` (LDS DMA at
// M0 + lane * 4), reads the other wave's after the barrier, and adds a plain buffer load that runs past
// the resource's num_records for the last lanes (the hardware returns 0 there). Then:
//   * the wait before the barrier replaced by s_nop: the LDS read of DMA-written bytes is a hazard;
//   * a resource larger than the real buffer: an in-range access outside every buffer is a fault.
// Code objects: $HIPATTN_EMU_BUFFER_GFX942 / $HIPATTN_EMU_BUFFER_GFX950.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "core.hpp"
#include "emu.hpp"

namespace hipattn::emu {
namespace {

class EmuBuffer : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string var = "HIPATTN_EMU_BUFFER_" + std::string(GetParam() == "gfx942" ? "GFX942" : "GFX950");
    const char* p = std::getenv(var.c_str());
    if (!p || !*p) GTEST_SKIP() << var << " not set (no AMD toolchain): emulated test skipped";
    co = CodeObject::load(p);
    std::mt19937 rng(11);
    std::normal_distribution<float> nd;
    in.resize(256);
    for (auto& x : in) x = nd(rng);
  }
  // 2 workgroups of 128 threads; the resource covers `resource_bytes` of the `in` buffer.
  std::vector<float> run(const CodeObject& c, uint32_t resource_bytes, size_t buffer_elems) {
    Memory mem;
    std::vector<float> src(in.begin(), in.begin() + buffer_elems);
    const uint64_t din = mem.upload(src, "in");
    const uint64_t dout = mem.alloc(256 * sizeof(float), "out");
    struct {
      uint64_t in, out;
      uint32_t bytes;
    } args{din, dout, resource_bytes};
    launch(c, c.find({"buffer_stage"}), {2, 1, 1}, {128, 1, 1}, 0, &args, 20, mem);
    return mem.download<float>(dout, 256);
  }
  std::shared_ptr<const CodeObject> co;
  std::vector<float> in;
};

TEST_P(EmuBuffer, DmaToLdsAndRangeChecks) {
  const auto out = run(*co, 1024, 256);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 128; ++t) {
      const float staged = in[b * 128 + (t + 64) % 128];
      const int j = b * 128 + t + 96;  // the plain load's element: past 1024 bytes it reads 0
      const float plain = j < 256 ? in[j] : 0.f;
      ASSERT_EQ(out[b * 128 + t], staged + plain) << "block " << b << " thread " << t;
    }
}

TEST_P(EmuBuffer, LdsReadBeforeTheDmaWaitIsAHazard) {
  // the s_waitcnt before the barrier (it covers the LDS DMA) becomes s_nop
  const auto& code = co->code(co->find({"buffer_stage"}));
  uint64_t at = 0;
  bool seen = false;
  for (const auto& in : code) {
    if (in.mnemonic.rfind("buffer_load", 0) == 0 && in.mods.lds) seen = true;
    else if (seen && in.base == "s_waitcnt" && in.mods.vmcnt >= 0) { at = in.addr; break; }
  }
  ASSERT_NE(at, 0u) << "no vmcnt wait after the LDS DMA";
  std::ifstream f(co->path(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const uint32_t nop = 0xBF800000u;
  std::memcpy(bytes.data() + co->file_offset(at), &nop, 4);
  const std::string path = ::testing::TempDir() + "/emu_buffer_nowait_" + gfx_name(co->gfx()) + ".co";
  std::ofstream(path, std::ios::binary) << bytes;
  const auto bad = CodeObject::load(path);
  try {
    run(*bad, 1024, 256);
    FAIL() << "no hazard for an LDS read of DMA-written bytes before the wait";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, Error::Kind::hazard) << e.what();
    EXPECT_NE(std::string(e.what()).find("LDS DMA"), std::string::npos) << e.what();
  }
}

TEST_P(EmuBuffer, ResourceLargerThanTheBufferFaults) {
  try {
    run(*co, 4096, 256);  // num_records claims 4 KiB, the buffer holds 1 KiB
    FAIL() << "no fault";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind, Error::Kind::memory_fault) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, EmuBuffer, ::testing::Values("gfx942", "gfx950"));

}  // namespace
}  // namespace hipattn::emu
