// tests/emu/test_emu_fp8_convert.cpp: v_cvt_pk_fp8_f32 on the emulator (kernels/fp8_convert.hip), on
// gfx942 (e4m3fnuz) and gfx950 (OCP e4m3fn), against a host model of the ISA's rules: round to nearest
// even (subnormals kept), no infinity, so NaN and infinite inputs and finite ones whose rounded
// magnitude exceeds the format's maximum give NaN (fnuz 0x80; fn 0x7F with the sign); the op_sel dst
// bit picks the destination word and the other word keeps its bits; neg / abs apply to the sources.
// The rounding of in-range values is hipattn's own (numeric/fp8.hpp from_float, RNE); the overflow
// thresholds are the formats' rounding midpoints (fnuz: 248 rounds to 256, fn: above 464 to 480).
// Code objects: $HIPATTN_EMU_FP8_CONVERT_GFX942 / $HIPATTN_EMU_FP8_CONVERT_GFX950.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

#include "emu.hpp"
#include "hipattn/numeric/fp8.hpp"

namespace hipattn::emu {
namespace {

uint32_t expect_code(float f, Gfx g) {
  const bool fnuz = g == Gfx::gfx942;
  const uint32_t sign = std::signbit(f) ? 0x80u : 0u;
  const uint32_t nan = fnuz ? 0x80u : (0x7Fu | sign);
  if (std::isnan(f) || std::isinf(f)) return nan;
  const float a = std::fabs(f);
  if (fnuz ? a >= 248.f : a > 464.f) return nan;
  return fnuz ? fp8_e4m3fnuz_t::from_float(f).bits : fp8_e4m3fn_t::from_float(f).bits;
}

class EmuFp8Convert : public ::testing::TestWithParam<std::string> {};

TEST_P(EmuFp8Convert, CvtPkFp8F32) {
  const std::string var = "HIPATTN_EMU_FP8_CONVERT_" + std::string(GetParam() == "gfx942" ? "GFX942" : "GFX950");
  const char* path = std::getenv(var.c_str());
  if (!path || !*path) GTEST_SKIP() << var << " not set (no AMD toolchain): emulated test skipped";
  auto co = CodeObject::load(path);
  const Gfx g = co->gfx();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // edge cases first, then random values over the whole range
  std::vector<float> in = {0.f, -0.f, 1.f, -1.f, 1.0625f, 1.1875f, -1.0625f, 0.1f,
                           240.f, -240.f, 247.9f, 248.f, 255.f, 256.f, 448.f, -448.f,
                           464.f, 464.1f, -470.f, 480.f, 1e6f, -1e30f, inf, -inf,
                           nan, -nan, std::ldexp(3.f, -10), std::ldexp(3.f, -11), std::ldexp(1.f, -11),
                           std::ldexp(1.f, -12), std::ldexp(5.f, -12), std::ldexp(0.9f, -7), std::ldexp(1.f, -7),
                           std::ldexp(1.f, -6), 1e-30f, -1e-30f};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> e(-12.f, 9.5f);
  while (in.size() < 128) in.push_back((rng() & 1 ? -1.f : 1.f) * std::exp2(e(rng)));
  Memory mem;
  const uint64_t din = mem.upload(in, "in");
  const uint64_t dout = mem.alloc(64 * 3 * 4, "out");
  struct {
    uint64_t in, out;
  } args{din, dout};
  launch(*co, co->find({"cvt_pk_fp8"}), {1, 1, 1}, {64, 1, 1}, 0, &args, sizeof args, mem);
  const auto out = mem.download<uint32_t>(dout, 64 * 3);
  for (int t = 0; t < 64; ++t) {
    const float a = in[size_t(2 * t)], b = in[size_t(2 * t + 1)];
    SCOPED_TRACE("a = " + std::to_string(a) + ", b = " + std::to_string(b));
    const uint32_t pk = expect_code(a, g) | (expect_code(b, g) << 8);
    EXPECT_EQ(out[size_t(3 * t)], 0xA5A50000u | pk);
    EXPECT_EQ(out[size_t(3 * t + 1)], 0x0000A5A5u | (pk << 16));
    const uint32_t pk_mods = expect_code(-a, g) | (expect_code(std::fabs(b), g) << 8);
    EXPECT_EQ(out[size_t(3 * t + 2)], 0xA5A50000u | pk_mods);
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, EmuFp8Convert, ::testing::Values("gfx942", "gfx950"));

}  // namespace
}  // namespace hipattn::emu
