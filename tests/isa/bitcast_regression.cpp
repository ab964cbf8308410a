// tests/isa/bitcast_regression.cpp: issue 7, host regression test for elem_as_float
// (hipattn/arch/cdna4/lane_bits.hpp).
//
// __builtin_bit_cast(float, h[1]) of an ext_vector_type element reads element 0 in clang
// (llvm/llvm-project#95673): the gfx950 row max / row sum read one lane of the permlane swap pair
// twice. elem_as_float<I>(v) copies the element into an unsigned first. This program (compiled by
// the AMD toolchain's clang for the host, see bitcast_regression.py) checks that the helper returns
// every element's bits, and prints what the raw form returns without failing on it (a clang with
// the bug fixed returns element 1 there too).
//
// The functions are extern "C" and noinline so that bitcast_regression.py can also read their LLVM IR
// (`extractelement <2 x ...> %x, i64 1`) and so that nothing is folded at compile time.
#include <cstdio>
#include <cstring>

#include "hipattn/arch/cdna4/lane_bits.hpp"

typedef unsigned u32x2 __attribute__((ext_vector_type(2)));
typedef unsigned u32x4 __attribute__((ext_vector_type(4)));

using hipattn::cdna4::elem_as_float;

extern "C" {
__attribute__((noinline)) float hipattn_bcr_helper_e0(u32x2 h) { return elem_as_float<0>(h); }
__attribute__((noinline)) float hipattn_bcr_helper_e1(u32x2 h) { return elem_as_float<1>(h); }
__attribute__((noinline)) float hipattn_bcr_helper4_e2(u32x4 h) { return elem_as_float<2>(h); }
__attribute__((noinline)) float hipattn_bcr_helper4_e3(u32x4 h) { return elem_as_float<3>(h); }
// The buggy form issue 7 removed from cdna4/atoms.hpp.
__attribute__((noinline)) float hipattn_bcr_raw_e1(u32x2 h) { return __builtin_bit_cast(float, h[1]); }
}

static unsigned bits_of(float f) {
  unsigned u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

int main() {
  // Distinct bit patterns (1.0f, pi, -2.5f, a NaN payload that a float round trip keeps as bits).
  volatile unsigned src[4] = {0x3f800000u, 0x40490fdbu, 0xc0200000u, 0x7fc12345u};
  const u32x2 h = {src[0], src[1]};
  const u32x4 q = {src[0], src[1], src[2], src[3]};
  int failures = 0;
  const auto check = [&](const char* what, float got, unsigned want) {
    const unsigned g = bits_of(got);
    std::printf("%-34s 0x%08x  (want 0x%08x)  %s\n", what, g, want, g == want ? "ok" : "FAIL");
    failures += g != want;
  };
  check("elem_as_float<0>(u32x2)", hipattn_bcr_helper_e0(h), src[0]);
  check("elem_as_float<1>(u32x2)", hipattn_bcr_helper_e1(h), src[1]);
  check("elem_as_float<2>(u32x4)", hipattn_bcr_helper4_e2(q), src[2]);
  check("elem_as_float<3>(u32x4)", hipattn_bcr_helper4_e3(q), src[3]);

  const unsigned raw = bits_of(hipattn_bcr_raw_e1(h));
  std::printf("raw __builtin_bit_cast(float, h[1])  0x%08x  -> %s (reported, not judged)\n", raw,
              raw == src[1] ? "element 1: this clang has llvm#95673 fixed"
              : raw == src[0] ? "element 0: llvm#95673 present in this clang"
                              : "neither element");
  if (failures) {
    std::printf("bitcast_regression: FAIL (%d)\n", failures);
    return 1;
  }
  std::printf("bitcast_regression: OK\n");
  return 0;
}
