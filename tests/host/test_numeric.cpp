// tests/host/test_numeric.cpp: half_t, bfloat16_t, the fp8 types, Vec, FastDivmod and DType traits.
//
// Every expected value comes from an independent reference written here (ldexp-based decoders,
// brute-force nearest-value search, plain / and %), never from the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "hipattn/numeric/numeric.hpp"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

using namespace hipattn;

namespace {

uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bitsf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
const float kInf = std::numeric_limits<float>::infinity();

// ---- independent reference decoders ---------------------------------------------------------------

// A small float format: exponent bits, mantissa bits, bias; NaN/inf conventions per format.
struct Fmt {
  const char* name;
  int eb, mb, bias;
  bool ieee_special;  // all-ones exponent means inf/NaN (fp16, bf16)
  bool fn_nan;        // S.1111.111 is NaN (e4m3fn)
  bool fnuz;          // 0x80 is the only NaN (e4m3fnuz)
};
constexpr Fmt kF16{"fp16", 5, 10, 15, true, false, false};
constexpr Fmt kBF16{"bf16", 8, 7, 127, true, false, false};
constexpr Fmt kE4M3FN{"e4m3fn", 4, 3, 7, false, true, false};
constexpr Fmt kE4M3FNUZ{"e4m3fnuz", 4, 3, 8, false, false, true};

bool ref_is_nan(const Fmt& f, uint32_t c) {
  const int w = 1 + f.eb + f.mb;
  const uint32_t e = (c >> f.mb) & ((1u << f.eb) - 1);
  const uint32_t m = c & ((1u << f.mb) - 1);
  if (f.ieee_special) return e == (1u << f.eb) - 1 && m != 0;
  if (f.fn_nan) return e == (1u << f.eb) - 1 && m == (1u << f.mb) - 1;
  return c == (1u << (w - 1));  // fnuz
}

// Exact value of a non-NaN code as a double (from sign / exponent / mantissa with ldexp).
double ref_decode(const Fmt& f, uint32_t c) {
  const int w = 1 + f.eb + f.mb;
  const bool neg = (c >> (w - 1)) & 1u;
  const int e = static_cast<int>((c >> f.mb) & ((1u << f.eb) - 1));
  const int m = static_cast<int>(c & ((1u << f.mb) - 1));
  double v;
  if (f.ieee_special && e == (1 << f.eb) - 1) {
    v = std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mb);
  } else {
    v = std::ldexp(static_cast<double>((1 << f.mb) + m), e - f.bias - f.mb);
  }
  return neg ? -v : v;
}

template <class T>
float dec(uint32_t c) {
  return T::from_bits(c).to_float();
}
template <class T>
uint32_t enc(float x) {
  return T::from_float(x).bits;
}

// Float bits equal, or both NaN with the same sign.
::testing::AssertionResult same_float(float got, double want) {
  const float w = static_cast<float>(want);
  if (std::isnan(w)) {
    if (std::isnan(got)) return ::testing::AssertionSuccess();
  } else if (fbits(got) == fbits(w)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got " << got << " (0x" << std::hex << fbits(got)
                                       << ") want " << w << " (0x" << fbits(w) << ")";
}

// ---- fp8: all 256 codes ---------------------------------------------------------------------------

template <class T>
void check_all_fp8_codes(const Fmt& f, uint32_t canonical_pos_nan, uint32_t canonical_neg_nan) {
  int nan_codes = 0;
  for (uint32_t c = 0; c < 256; ++c) {
    SCOPED_TRACE(::testing::Message() << f.name << " code 0x" << std::hex << c);
    const float x = dec<T>(c);
    EXPECT_EQ(fbits(to_float(T::from_bits(c))), fbits(x));  // free function agrees
    if (ref_is_nan(f, c)) {
      ++nan_codes;
      EXPECT_TRUE(std::isnan(x));
      const uint32_t want = (c & 0x80u) ? canonical_neg_nan : canonical_pos_nan;
      EXPECT_EQ(enc<T>(x), want);
      continue;
    }
    const double want = ref_decode(f, c);
    EXPECT_TRUE(same_float(x, want));
    EXPECT_EQ(static_cast<float>(T::from_bits(c)), x);
    EXPECT_EQ(enc<T>(x), c);                      // round trip (fn: -0 is 0x80 and comes back)
    EXPECT_EQ(from_float<T>(x).bits, c);          // free function
  }
  EXPECT_EQ(nan_codes, f.fnuz ? 1 : 2);
}

TEST(Fp8, E4M3FnAll256Codes) {
  check_all_fp8_codes<fp8_e4m3fn_t>(kE4M3FN, 0x7f, 0xff);
  EXPECT_EQ(dec<fp8_e4m3fn_t>(0x7e), 448.0f);
  EXPECT_EQ(dec<fp8_e4m3fn_t>(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(fbits(dec<fp8_e4m3fn_t>(0x80)), 0x80000000u);
  EXPECT_TRUE(std::signbit(dec<fp8_e4m3fn_t>(0xff)));
}

// The kernels' dequantization (fp8_e4m3_to_float_normal_only) is exact for all 256 codes of both
// formats, also when the FPU flushes denormal inputs and results to zero (x86 MXCSR FTZ + DAZ: what a
// consumer's -fgpu-flush-denormals-to-zero or --use_fast_math build does on the device).
template <bool kFnuz, class T>
void check_normal_only_decode() {
  for (uint32_t b = 0; b < 256; ++b) {
    const float want = T::from_bits(b).to_float();
    volatile uint32_t code = b;  // a run-time value: the conversion runs under the FPU mode set below
    const float got = hipattn::fp8_e4m3_to_float_normal_only<kFnuz>(code);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "code " << b;
    } else {
      EXPECT_EQ(std::memcmp(&want, &got, 4), 0) << "code " << b << ": " << got << " want " << want;
    }
  }
}
TEST(Fp8, KernelDecodeExactWithAndWithoutDenormals) {
  check_normal_only_decode<false, fp8_e4m3fn_t>();
  check_normal_only_decode<true, fp8_e4m3fnuz_t>();
#if defined(__SSE__) || defined(__x86_64__)
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040u);  // FTZ (bit 15) + DAZ (bit 6)
  volatile float denormal = 1e-40f, two = 2.0f;
  const float flushed = denormal * two;  // DAZ reads the denormal operand as zero (FTZ: the result too)
  check_normal_only_decode<false, fp8_e4m3fn_t>();
  check_normal_only_decode<true, fp8_e4m3fnuz_t>();
  _mm_setcsr(saved);
  ASSERT_EQ(flushed, 0.f) << "FTZ/DAZ was not in effect: the flushed run proved nothing";
#else
  GTEST_SKIP() << "no x86 MXCSR here: the flush-to-zero run needs it";
#endif
}

TEST(Fp8, E4M3FnuzAll256Codes) {
  check_all_fp8_codes<fp8_e4m3fnuz_t>(kE4M3FNUZ, 0x80, 0x80);
  EXPECT_EQ(dec<fp8_e4m3fnuz_t>(0x7f), 240.0f);
  EXPECT_EQ(dec<fp8_e4m3fnuz_t>(0x01), std::ldexp(1.0f, -10));
  EXPECT_EQ(dec<fp8_e4m3fnuz_t>(0xff), -240.0f);
}

// ---- fp8: rounding at every boundary --------------------------------------------------------------

// Representable values of an fp8 format, sorted, one entry per value (+0 and -0 merged into 0).
struct Point {
  double v;
  uint32_t code;  // for 0: the +0 code
};
std::vector<Point> fp8_points(const Fmt& f) {
  std::vector<Point> pts;
  for (uint32_t c = 0; c < 256; ++c) {
    if (ref_is_nan(f, c)) continue;
    const double v = ref_decode(f, c);
    if (v == 0.0 && c != 0) continue;  // -0 (fn only)
    pts.push_back({v, c});
  }
  std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.v < b.v; });
  return pts;
}

// The code expected for a value that is exactly a representable point `p`, for an input of sign `neg`.
uint32_t expected_code(const Fmt& f, const Point& p, bool neg) {
  if (p.v == 0.0) return (neg && f.fn_nan) ? 0x80u : 0x00u;  // fn keeps -0, fnuz has none
  return p.code;
}

template <class T>
void check_fp8_boundaries(const Fmt& f) {
  const std::vector<Point> pts = fp8_points(f);
  ASSERT_EQ(pts.size(), f.fnuz ? 255u : 253u);
  for (size_t i = 0; i + 1 < pts.size(); ++i) {
    const Point& a = pts[i];
    const Point& b = pts[i + 1];
    const float mid = static_cast<float>((a.v + b.v) / 2);
    ASSERT_EQ(static_cast<double>(mid), (a.v + b.v) / 2) << "midpoint not exact in float";
    SCOPED_TRACE(::testing::Message() << f.name << " between " << a.v << " and " << b.v);
    const bool neg = mid < 0 || (mid == 0 && std::signbit(mid));
    // Ties to the even mantissa (lowest code bit clear); exactly one of the two is even.
    const uint32_t ca = expected_code(f, a, neg), cb = expected_code(f, b, neg);
    ASSERT_NE(ca & 1u, cb & 1u);
    EXPECT_EQ(enc<T>(mid), (ca & 1u) == 0 ? ca : cb) << "midpoint " << mid;
    const float below = std::nextafter(mid, -kInf), above = std::nextafter(mid, kInf);
    EXPECT_EQ(enc<T>(below), expected_code(f, a, below < 0)) << "below " << below;
    EXPECT_EQ(enc<T>(above), expected_code(f, b, above < 0 || (above == 0 && neg))) << above;
    EXPECT_EQ(enc<T>(static_cast<float>(a.v)), expected_code(f, a, a.v < 0));
    EXPECT_EQ(enc<T>(static_cast<float>(b.v)), expected_code(f, b, b.v < 0));
  }
}

TEST(Fp8, E4M3FnRoundingBoundaries) { check_fp8_boundaries<fp8_e4m3fn_t>(kE4M3FN); }
TEST(Fp8, E4M3FnuzRoundingBoundaries) { check_fp8_boundaries<fp8_e4m3fnuz_t>(kE4M3FNUZ); }

// Random floats against a brute-force nearest-value search (ties to even code, zero sign rules).
template <class T>
void check_fp8_random(const Fmt& f, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << f.name << " seed " << seed);
  const std::vector<Point> pts = fp8_points(f);
  const double maxv = pts.back().v;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> expo(-13, 9);
  for (int it = 0; it < 200000; ++it) {
    float x = std::ldexp(mant(rng), expo(rng));
    if (rng() & 1u) x = -x;
    const double ax = std::fabs(static_cast<double>(x));
    uint32_t want;
    if (ax >= maxv) {
      want = (x < 0 ? 0x80u : 0u) | pts.back().code;
    } else {
      size_t best = 0;
      double bestd = std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < pts.size(); ++i) {
        if (pts[i].v < 0) continue;
        const double d = std::fabs(pts[i].v - ax);
        if (d < bestd || (d == bestd && (pts[i].code & 1u) == 0)) {
          bestd = d;
          best = i;
        }
      }
      want = expected_code(f, pts[best], x < 0);
      if (pts[best].v != 0 && x < 0) want |= 0x80u;
    }
    ASSERT_EQ(enc<T>(x), want) << "x = " << x << " (0x" << std::hex << fbits(x) << ")";
  }
}

TEST(Fp8, E4M3FnRandomVsBruteForce) { check_fp8_random<fp8_e4m3fn_t>(kE4M3FN, 1234u); }
TEST(Fp8, E4M3FnuzRandomVsBruteForce) { check_fp8_random<fp8_e4m3fnuz_t>(kE4M3FNUZ, 4321u); }

TEST(Fp8, E4M3FnSaturationAndSpecials) {
  using T = fp8_e4m3fn_t;
  for (float x : {448.0f, 448.001f, 463.99f, 464.0f, 464.01f, 480.0f, 1000.0f, 1e30f,
                  std::numeric_limits<float>::max(), kInf}) {
    EXPECT_EQ(enc<T>(x), 0x7eu) << x;
    EXPECT_EQ(enc<T>(-x), 0xfeu) << -x;
  }
  EXPECT_EQ(enc<T>(std::nanf("")), 0x7fu);
  EXPECT_EQ(enc<T>(-std::nanf("")), 0xffu);
  EXPECT_EQ(enc<T>(bitsf(0x7f800001u)), 0x7fu);  // signalling NaN with a low payload
  EXPECT_EQ(enc<T>(bitsf(0xff800001u)), 0xffu);
  EXPECT_EQ(enc<T>(0.0f), 0x00u);
  EXPECT_EQ(enc<T>(-0.0f), 0x80u);
  EXPECT_EQ(enc<T>(std::ldexp(1.0f, -10)), 0x00u);              // tie with 0 -> 0
  EXPECT_EQ(enc<T>(-std::ldexp(1.0f, -10)), 0x80u);             // -> -0
  EXPECT_EQ(enc<T>(std::ldexp(1.5f, -10)), 0x01u);              // 0.75 min subnormal -> 1
  EXPECT_EQ(enc<T>(std::ldexp(3.0f, -10)), 0x02u);              // 1.5 min subnormal, tie -> 2
  EXPECT_EQ(enc<T>(std::ldexp(15.0f, -10)), 0x08u);             // 7.5 * 2^-9 -> min normal
  EXPECT_EQ(enc<T>(bitsf(1u)), 0x00u);                          // float subnormal
  EXPECT_EQ(enc<T>(-bitsf(1u)), 0x80u);
  EXPECT_EQ(enc<T>(1.0f), 0x38u);
  EXPECT_EQ(enc<T>(0.1f), 0x1du);
  EXPECT_EQ(enc<T>(-2.0f), 0xc0u);
}

TEST(Fp8, E4M3FnuzSaturationAndSpecials) {
  using T = fp8_e4m3fnuz_t;
  for (float x : {240.0f, 240.001f, 247.99f, 248.0f, 248.01f, 256.0f, 448.0f, 1e30f,
                  std::numeric_limits<float>::max(), kInf}) {
    EXPECT_EQ(enc<T>(x), 0x7fu) << x;
    EXPECT_EQ(enc<T>(-x), 0xffu) << -x;
  }
  EXPECT_EQ(enc<T>(std::nanf("")), 0x80u);
  EXPECT_EQ(enc<T>(-std::nanf("")), 0x80u);
  EXPECT_EQ(enc<T>(bitsf(0x7f800001u)), 0x80u);
  EXPECT_EQ(enc<T>(0.0f), 0x00u);
  EXPECT_EQ(enc<T>(-0.0f), 0x00u);  // no negative zero
  EXPECT_EQ(enc<T>(-std::ldexp(1.0f, -11)), 0x00u);
  EXPECT_EQ(enc<T>(-std::ldexp(1.0f, -30)), 0x00u);
  EXPECT_EQ(enc<T>(-bitsf(1u)), 0x00u);
  EXPECT_EQ(enc<T>(std::ldexp(1.0f, -11)), 0x00u);  // tie with 0 -> 0
  EXPECT_EQ(enc<T>(std::nextafter(std::ldexp(1.0f, -11), 1.0f)), 0x01u);
  EXPECT_EQ(enc<T>(-std::nextafter(std::ldexp(1.0f, -11), 1.0f)), 0x81u);
  EXPECT_EQ(enc<T>(1.0f), 0x40u);
  EXPECT_EQ(enc<T>(0.1f), 0x25u);
  EXPECT_EQ(enc<T>(-2.0f), 0xc8u);
  EXPECT_TRUE(std::isnan(dec<T>(0x80)));
  EXPECT_EQ(fbits(dec<T>(0x00)), 0u);
}

// ---- fp16 / bf16 --------------------------------------------------------------------------------

template <class T>
void check_all_16bit_codes(const Fmt& f, uint32_t quiet_bit) {
  for (uint32_t c = 0; c < 65536; ++c) {
    const float x = dec<T>(c);
    if (ref_is_nan(f, c)) {
      ASSERT_TRUE(std::isnan(x)) << std::hex << c;
      ASSERT_EQ(std::signbit(x), (c & 0x8000u) != 0) << std::hex << c;
      // Re-encoding keeps sign and payload, and quiets.
      ASSERT_EQ(enc<T>(x), c | quiet_bit) << std::hex << c;
      continue;
    }
    ASSERT_TRUE(same_float(x, ref_decode(f, c))) << std::hex << c;
    ASSERT_EQ(enc<T>(x), c) << std::hex << c;
    ASSERT_EQ(from_float<T>(x).bits, c) << std::hex << c;
    ASSERT_EQ(static_cast<float>(T::from_bits(c)), x);
    ASSERT_EQ(to_float(T::from_bits(c)), x);
  }
}

TEST(Fp16, AllCodesDecodeAndRoundTrip) { check_all_16bit_codes<half_t>(kF16, 0x0200u); }
TEST(Bf16, AllCodesDecodeAndRoundTrip) { check_all_16bit_codes<bfloat16_t>(kBF16, 0x0040u); }

// For every pair of adjacent finite codes c, c+1 (both signs): the exact midpoint goes to the even
// code, one float ulp either side goes to the nearer one. Covers subnormals, binade carries, zero.
template <class T>
void check_16bit_midpoints(const Fmt& f, uint32_t max_finite) {
  for (uint32_t c = 0; c < max_finite; ++c) {
    for (uint32_t s : {0u, 0x8000u}) {
      const double a = ref_decode(f, s | c), b = ref_decode(f, s | (c + 1));
      const double mid_d = (a + b) / 2;
      const float mid = static_cast<float>(mid_d);
      ASSERT_EQ(static_cast<double>(mid), mid_d);
      const uint32_t even = (c & 1u) ? (c + 1) : c;
      ASSERT_EQ(enc<T>(mid), s | even) << f.name << " mid " << mid;
      const float toward_a = std::nextafter(mid, static_cast<float>(a));
      const float toward_b = std::nextafter(mid, static_cast<float>(b));
      ASSERT_EQ(enc<T>(toward_a), s | c) << f.name << " " << toward_a;
      ASSERT_EQ(enc<T>(toward_b), s | (c + 1)) << f.name << " " << toward_b;
    }
  }
}

TEST(Fp16, HalfwayCasesRoundToEven) { check_16bit_midpoints<half_t>(kF16, 0x7bffu); }
TEST(Bf16, HalfwayCasesRoundToEven) { check_16bit_midpoints<bfloat16_t>(kBF16, 0x7f7fu); }

TEST(Fp16, SpecificValues) {
  using T = half_t;
  // Halfway, even lower neighbour: 1 + 2^-11 lies between 0x3c00 (even) and 0x3c01 -> 0x3c00.
  EXPECT_EQ(enc<T>(bitsf(0x3f801000u)), 0x3c00u);
  // Halfway, odd lower neighbour: 1 + 3*2^-11 between 0x3c01 (odd) and 0x3c02 -> 0x3c02.
  EXPECT_EQ(enc<T>(bitsf(0x3f803000u)), 0x3c02u);
  EXPECT_EQ(enc<T>(bitsf(0x3f803001u)), 0x3c02u);
  EXPECT_EQ(enc<T>(bitsf(0x3f802fffu)), 0x3c01u);
  // Overflow.
  EXPECT_EQ(enc<T>(65504.0f), 0x7bffu);
  EXPECT_EQ(enc<T>(65519.99f), 0x7bffu);
  EXPECT_EQ(enc<T>(std::nextafter(65520.0f, 0.0f)), 0x7bffu);
  EXPECT_EQ(enc<T>(65520.0f), 0x7c00u);
  EXPECT_EQ(enc<T>(-65520.0f), 0xfc00u);
  EXPECT_EQ(enc<T>(1e30f), 0x7c00u);
  EXPECT_EQ(enc<T>(kInf), 0x7c00u);
  EXPECT_EQ(enc<T>(-kInf), 0xfc00u);
  // Subnormals.
  EXPECT_EQ(enc<T>(std::ldexp(1.0f, -24)), 0x0001u);
  EXPECT_EQ(enc<T>(std::ldexp(1.0f, -25)), 0x0000u);  // tie with 0
  EXPECT_EQ(enc<T>(-std::ldexp(1.0f, -25)), 0x8000u);
  EXPECT_EQ(enc<T>(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001u);
  EXPECT_EQ(enc<T>(std::ldexp(3.0f, -25)), 0x0002u);     // 1.5 units, tie -> 2
  EXPECT_EQ(enc<T>(std::ldexp(5.0f, -25)), 0x0002u);     // 2.5 units, tie -> 2
  EXPECT_EQ(enc<T>(std::ldexp(2047.0f, -25)), 0x0400u);  // 1023.5 units -> min normal
  EXPECT_EQ(enc<T>(bitsf(1u)), 0x0000u);                 // float subnormal
  EXPECT_EQ(enc<T>(-bitsf(0x007fffffu)), 0x8000u);
  EXPECT_EQ(dec<T>(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(dec<T>(0x83ff), -std::ldexp(1023.0f, -24));
  // NaN stays NaN (a low-payload NaN must not turn into inf), sign kept, quiet.
  EXPECT_EQ(enc<T>(bitsf(0x7fc00000u)), 0x7e00u);
  EXPECT_EQ(enc<T>(bitsf(0xffc00000u)), 0xfe00u);
  EXPECT_EQ(enc<T>(bitsf(0x7f800001u)), 0x7e00u);
  EXPECT_EQ(enc<T>(bitsf(0xff800001u)), 0xfe00u);
  EXPECT_EQ(enc<T>(bitsf(0x7fa00000u)), 0x7f00u);
  // Decoding a NaN code gives a quiet float NaN with the sign and payload kept.
  EXPECT_EQ(fbits(dec<T>(0x7c01)), 0x7fc02000u);
  EXPECT_EQ(fbits(dec<T>(0xfe00)), 0xffc00000u);
  EXPECT_EQ(fbits(dec<T>(0x7fff)), 0x7fffe000u);
  // Ordinary values.
  EXPECT_EQ(enc<T>(1.0f), 0x3c00u);
  EXPECT_EQ(enc<T>(-2.0f), 0xc000u);
  EXPECT_EQ(enc<T>(0.1f), 0x2e66u);
  EXPECT_EQ(enc<T>(1.0f / 3.0f), 0x3555u);
  EXPECT_EQ(enc<T>(-0.0f), 0x8000u);
}

TEST(Bf16, SpecificValues) {
  using T = bfloat16_t;
  // Halfway, even lower neighbour: 0x3f80|8000 -> 0x3f80; odd lower neighbour 0x3f81|8000 -> 0x3f82.
  EXPECT_EQ(enc<T>(bitsf(0x3f808000u)), 0x3f80u);
  EXPECT_EQ(enc<T>(bitsf(0x3f818000u)), 0x3f82u);
  EXPECT_EQ(enc<T>(bitsf(0x3f808001u)), 0x3f81u);
  EXPECT_EQ(enc<T>(bitsf(0x3f817fffu)), 0x3f81u);
  EXPECT_EQ(enc<T>(bitsf(0xbf818000u)), 0xbf82u);
  // Carry into the exponent: 0x3fff8000 (tie, odd) -> 0x4000.
  EXPECT_EQ(enc<T>(bitsf(0x3fff8000u)), 0x4000u);
  // Overflow.
  EXPECT_EQ(enc<T>(bitsf(0x7f7f7fffu)), 0x7f7fu);
  EXPECT_EQ(enc<T>(bitsf(0x7f7f8000u)), 0x7f80u);  // tie, odd -> inf
  EXPECT_EQ(enc<T>(std::numeric_limits<float>::max()), 0x7f80u);
  EXPECT_EQ(enc<T>(-std::numeric_limits<float>::max()), 0xff80u);
  EXPECT_EQ(enc<T>(kInf), 0x7f80u);
  EXPECT_EQ(enc<T>(-kInf), 0xff80u);
  // Float subnormals.
  EXPECT_EQ(enc<T>(bitsf(0x00008000u)), 0x0000u);  // tie with 0
  EXPECT_EQ(enc<T>(bitsf(0x00008001u)), 0x0001u);
  EXPECT_EQ(enc<T>(bitsf(0x00018000u)), 0x0002u);  // tie, odd -> 2
  EXPECT_EQ(enc<T>(bitsf(0x807fffffu)), 0x8080u);  // rounds up into the min normal
  EXPECT_EQ(enc<T>(bitsf(0x80000001u)), 0x8000u);
  EXPECT_EQ(dec<T>(0x0001), std::ldexp(1.0f, -133));
  // NaN.
  EXPECT_EQ(enc<T>(bitsf(0x7fc00000u)), 0x7fc0u);
  EXPECT_EQ(enc<T>(bitsf(0xffc00000u)), 0xffc0u);
  EXPECT_EQ(enc<T>(bitsf(0x7f800001u)), 0x7fc0u);
  EXPECT_EQ(enc<T>(bitsf(0xff800001u)), 0xffc0u);
  // Ordinary values.
  EXPECT_EQ(enc<T>(1.0f), 0x3f80u);
  EXPECT_EQ(enc<T>(0.1f), 0x3dcdu);
  EXPECT_EQ(enc<T>(-3.0f), 0xc040u);
  EXPECT_EQ(enc<T>(3.14159265f), 0x4049u);
}

// ---- constexpr use --------------------------------------------------------------------------------

static_assert(half_t::from_float(1.0f).bits == 0x3c00);
static_assert(half_t::from_bits(0xc000).to_float() == -2.0f);
static_assert(bfloat16_t::from_float(0.1f).bits == 0x3dcd);
static_assert(fp8_e4m3fn_t::from_float(1e9f).bits == 0x7e);
static_assert(fp8_e4m3fnuz_t::from_float(-0.0f).bits == 0x00);
static_assert(fp8_e4m3fnuz_t::from_bits(0x7f).to_float() == 240.0f);
static_assert(FastDivmod(7).div(100) == 14);

// ---- FastDivmod --------------------------------------------------------------------------------

TEST(FastDivmod, MatchesDivisionAndModulo) {
  const uint32_t seed = 20240611u;
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  std::vector<uint32_t> divisors = {1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 25, 100, 125, 641, 1000, 6700417,
                                    0x7fffffffu, 0x80000000u, 0x7ffffffeu, 0x40000001u, 0x55555555u,
                                    0x80000001u, 0xaaaaaaabu, 0xfffffffeu, 0xffffffffu};
  for (int k = 0; k <= 31; ++k) {
    divisors.push_back(1u << k);
    if (k >= 2) divisors.push_back((1u << k) - 1);
    if (k >= 1 && k <= 30) divisors.push_back((1u << k) + 1);
  }
  for (int i = 0; i < 2000; ++i) {
    const int width = 1 + static_cast<int>(rng() % 31);  // 1..31 bits
    const uint32_t d = (rng() & ((width == 32 ? 0u : (1u << width)) - 1u)) | 1u;
    divisors.push_back(d);
    divisors.push_back(std::max<uint32_t>(1u, d & ~1u));
    divisors.push_back(0x80000000u | static_cast<uint32_t>(rng()));  // above 2^31
  }
  for (uint32_t d : divisors) {
    const FastDivmod fd(d);
    std::vector<uint32_t> ns = {0u, 1u, d - 1, d, d + 1, 2 * d - 1, 2 * d, 0xffffffffu, 0xfffffffeu,
                                0x80000000u, 0x7fffffffu, 0x80000001u};
    const uint32_t kmax = 0xffffffffu / d;
    for (uint32_t k : {kmax, kmax - 1, kmax / 2, kmax / 3 + 1}) {
      const uint64_t base = static_cast<uint64_t>(k) * d;
      for (int64_t delta = -1; delta <= 1; ++delta) {
        const int64_t n = static_cast<int64_t>(base) + delta;
        if (n >= 0 && n <= 0xffffffffll) ns.push_back(static_cast<uint32_t>(n));
      }
    }
    for (int i = 0; i < 200; ++i) ns.push_back(static_cast<uint32_t>(rng()));
    for (int i = 0; i < 50; ++i) ns.push_back(static_cast<uint32_t>(rng()) >> (rng() % 32));
    for (uint32_t n : ns) {
      uint32_t q = 0xdeadbeefu, r = 0xdeadbeefu;
      fd.divmod(n, q, r);
      ASSERT_EQ(q, n / d) << "n=" << n << " d=" << d;
      ASSERT_EQ(r, n % d) << "n=" << n << " d=" << d;
      ASSERT_EQ(fd.div(n), n / d) << "n=" << n << " d=" << d;
      ASSERT_EQ(fd.mod(n), n % d) << "n=" << n << " d=" << d;
    }
  }
}

TEST(FastDivmod, DefaultIsDivisionByOne) {
  const FastDivmod fd;
  for (uint32_t n : {0u, 1u, 12345u, 0xffffffffu}) EXPECT_EQ(fd.div(n), n);
}

// ---- Vec ----------------------------------------------------------------------------------------

TEST(Vec, LayoutAndBitCasts) {
  static_assert(sizeof(Vec<half_t, 8>) == 16 && alignof(Vec<half_t, 8>) == 16);
  static_assert(sizeof(Vec<fp8_e4m3fn_t, 4>) == 4 && alignof(Vec<fp8_e4m3fn_t, 4>) == 4);
  static_assert(sizeof(Vec<float, 2>) == 8 && alignof(Vec<float, 2>) == 8);
  static_assert(std::is_same_v<vec_storage_t<bfloat16_t, 2>, uint32_t>);
  static_assert(std::is_same_v<vec_storage_t<bfloat16_t, 8>, u32x4>);

  Vec<half_t, 2> h{};
  h[0] = half_t::from_bits(0x3c00);
  h[1] = half_t::from_bits(0xc000);
  EXPECT_EQ(vec_bit_cast<uint32_t>(h), 0xc0003c00u);  // little-endian element order
  const auto h2 = vec_from_bits<Vec<half_t, 2>>(0x12345678u);
  EXPECT_EQ(h2[0].bits, 0x5678u);
  EXPECT_EQ(h2[1].bits, 0x1234u);

  Vec<fp8_e4m3fnuz_t, 16> q{};
  for (int i = 0; i < 16; ++i) q[i] = fp8_e4m3fnuz_t::from_bits(static_cast<uint32_t>(0x10 + i));
  const u32x4 raw = to_storage(q);
  EXPECT_EQ(raw.x, 0x13121110u);
  EXPECT_EQ(raw.w, 0x1f1e1d1cu);
  const auto back = vec_from_bits<Vec<fp8_e4m3fnuz_t, 16>>(raw);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(back[i].bits, 0x10u + i);

  const auto f = Vec<float, 4>::filled(2.5f);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(f[i], 2.5f);
  EXPECT_EQ(vec_bit_cast<u32x4>(f).z, 0x40200000u);
}

// ---- DType traits, load_as_float / store_from_float -----------------------------------------------

static_assert(std::is_same_v<dtype_type_t<DType::f16>, half_t>);
static_assert(std::is_same_v<dtype_type_t<DType::bf16>, bfloat16_t>);
static_assert(std::is_same_v<dtype_type_t<DType::f32>, float>);
static_assert(std::is_same_v<dtype_type_t<DType::fp8_e4m3fn>, fp8_e4m3fn_t>);
static_assert(std::is_same_v<dtype_type_t<DType::fp8_e4m3fnuz>, fp8_e4m3fnuz_t>);
static_assert(dtype_of<half_t> == DType::f16 && dtype_of<bfloat16_t> == DType::bf16 &&
              dtype_of<float> == DType::f32 && dtype_of<fp8_e4m3fn_t> == DType::fp8_e4m3fn &&
              dtype_of<const fp8_e4m3fnuz_t> == DType::fp8_e4m3fnuz);
static_assert(sizeof(half_t) == 2 && sizeof(bfloat16_t) == 2 && sizeof(fp8_e4m3fn_t) == 1 &&
              sizeof(fp8_e4m3fnuz_t) == 1);

struct KnownCase {
  float in;
  uint32_t code;  // expected stored code (hand-computed)
};

void check_load_store(DType dt, const Fmt* f, const std::vector<KnownCase>& known) {
  SCOPED_TRACE(std::string(dtype_name(dt)));
  const int size = dtype_size(dt);
  std::vector<unsigned char> buf(static_cast<size_t>(size) * 64);
  const uint32_t seed = 777u + static_cast<uint32_t>(dt);
  std::mt19937 rng(seed);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  const std::vector<unsigned char> orig = buf;

  // Loads: each element decoded independently from its bytes (little-endian).
  for (int i = 0; i < 64; ++i) {
    uint32_t code = 0;
    for (int k = 0; k < size; ++k) code |= static_cast<uint32_t>(buf[i * size + k]) << (8 * k);
    const float got = load_as_float(buf.data(), dt, i);
    if (f == nullptr) {
      EXPECT_EQ(fbits(got), code) << "seed " << seed << " i " << i;
    } else if (ref_is_nan(*f, code)) {
      EXPECT_TRUE(std::isnan(got)) << "seed " << seed << " i " << i;
    } else {
      EXPECT_TRUE(same_float(got, ref_decode(*f, code))) << "seed " << seed << " i " << i;
    }
  }

  // Stores: the known code lands at the index, neighbours untouched, and loads back.
  int idx = 3;
  for (const KnownCase& kc : known) {
    store_from_float(buf.data(), dt, idx, kc.in);
    uint32_t code = 0;
    for (int k = 0; k < size; ++k) code |= static_cast<uint32_t>(buf[idx * size + k]) << (8 * k);
    EXPECT_EQ(code, kc.code) << "in " << kc.in;
    for (int j = 0; j < 64 * size; ++j) {
      if (j / size == idx) continue;
      ASSERT_EQ(buf[j], orig[j]) << "byte " << j << " clobbered storing index " << idx;
    }
    const float back = load_as_float(buf.data(), dt, idx);
    if (f) {
      EXPECT_TRUE(same_float(back, ref_decode(*f, kc.code)));
    } else {
      EXPECT_EQ(fbits(back), kc.code);
    }
    // Restore, move to another index.
    for (int k = 0; k < size; ++k) buf[idx * size + k] = orig[idx * size + k];
    idx = (idx * 7 + 5) % 64;
  }
}

TEST(Traits, LoadStoreF16) {
  check_load_store(DType::f16, &kF16,
                   {{1.0f, 0x3c00}, {-2.0f, 0xc000}, {0.1f, 0x2e66}, {65520.0f, 0x7c00},
                    {std::ldexp(1.0f, -24), 0x0001}, {-0.0f, 0x8000}});
}
TEST(Traits, LoadStoreBF16) {
  check_load_store(DType::bf16, &kBF16,
                   {{1.0f, 0x3f80}, {0.1f, 0x3dcd}, {-3.0f, 0xc040}, {bitsf(0x3f818000u), 0x3f82}});
}
TEST(Traits, LoadStoreF32) {
  check_load_store(DType::f32, nullptr,
                   {{1.0f, 0x3f800000u}, {-0.1f, 0xbdcccccdu}, {kInf, 0x7f800000u}});
}
TEST(Traits, LoadStoreE4M3Fn) {
  check_load_store(DType::fp8_e4m3fn, &kE4M3FN,
                   {{1.0f, 0x38}, {0.1f, 0x1d}, {-2.0f, 0xc0}, {1000.0f, 0x7e}, {-kInf, 0xfe},
                    {-0.0f, 0x80}});
}
TEST(Traits, LoadStoreE4M3Fnuz) {
  check_load_store(DType::fp8_e4m3fnuz, &kE4M3FNUZ,
                   {{1.0f, 0x40}, {0.1f, 0x25}, {-2.0f, 0xc8}, {1000.0f, 0x7f}, {-kInf, 0xff},
                    {-0.0f, 0x00}});
}

TEST(Traits, FloatIdentityOverloads) {
  EXPECT_EQ(to_float(1.25f), 1.25f);
  EXPECT_EQ(from_float<float>(-3.5f), -3.5f);
}

}  // namespace

// The kernels' branch-free e4m3fn encoder and the e4m3fnuz code from the e4m3fn code of 2x
// (numeric/fp8.hpp) equal the reference conversions on a sweep of float bit patterns (every 61st,
// both signs, NaNs, infinities, subnormals included) and on every code, midpoint and neighbour.
TEST(Fp8, BranchlessEncodersEqualFromFloat) {
  int64_t bad = 0, n = 0;
  auto check = [&](float x) {
    ++n;
    const uint32_t fn = fp8_e4m3fn_t::from_float(x).bits, fnuz = fp8_e4m3fnuz_t::from_float(x).bits;
    const uint32_t got_fn = fp8_e4m3fn_bits_branchless(x);
    const uint32_t got_fnuz = fp8_e4m3fnuz_bits_from_fn2x(x, fp8_e4m3fn_bits_branchless(2.f * x));
    if ((got_fn != fn || got_fnuz != fnuz) && bad++ < 5)
      ADD_FAILURE() << "x = " << x << " (0x" << std::hex << std::bit_cast<uint32_t>(x) << "): fn 0x" << got_fn << " want 0x"
                    << fn << ", fnuz 0x" << got_fnuz << " want 0x" << fnuz;
  };
  for (uint64_t b = 0; b <= 0xffffffffull; b += 61) check(std::bit_cast<float>(static_cast<uint32_t>(b)));
  for (uint32_t c = 0; c < 256; ++c)
    for (float v : {fp8_e4m3fn_t::from_bits(c).to_float(), fp8_e4m3fnuz_t::from_bits(c).to_float()}) {
      for (float y : {v, std::nextafterf(v, 0.f), std::nextafterf(v, INFINITY), std::nextafterf(v, -INFINITY)}) check(y);
      const float up = c < 127 ? fp8_e4m3fn_t::from_bits(c + 1).to_float() : 480.f;
      const float mid = 0.5f * (v + up);
      for (float y : {mid, std::nextafterf(mid, 0.f), std::nextafterf(mid, INFINITY), -mid}) check(y);
    }
  for (float y : {232.f, 232.00002f, 231.99998f, 240.f, 224.f, 448.f, 464.f, 463.99997f, 464.00003f, INFINITY, -INFINITY, 0.f, -0.f,
                  0x1p-10f, 0x1p-11f, 0x1.8p-11f, 0x1p-12f, 0x1p-9f, 0x1p-10f * 1.5f})
    check(y);
  EXPECT_EQ(bad, 0) << bad << " of " << n << " conversions differ";
}

// gfx942's fp8 MFMA reads e4m3fnuz: e4m3fn query codes are re-encoded as the fnuz codes of half their
// values (numeric/kv_kind.hpp q8_query_factor). Every code in every byte position, with the
// other bytes random: each byte's value is exactly half (zeros both +0, NaNs NaN), the others untouched.
TEST(Fp8, FnCodesAsFnuzHalfEveryCode) {
  std::mt19937 rng(1234);
  int bad = 0;
  for (int pos = 0; pos < 4; ++pos)
    for (uint32_t c = 0; c < 256; ++c) {
      const uint32_t word = (rng() & ~(0xFFu << (8 * pos))) | (c << (8 * pos));
      const uint32_t got = fp8_e4m3fn_codes_as_fnuz_half(word);
      for (int b = 0; b < 4; ++b) {
        const uint32_t in = (word >> (8 * b)) & 0xFFu, out = (got >> (8 * b)) & 0xFFu;
        const float want = 0.5f * fp8_e4m3fn_t::from_bits(in).to_float();
        const float have = fp8_e4m3fnuz_t::from_bits(out).to_float();
        const bool ok = std::isnan(want) ? std::isnan(have) : (have == want && !(out == 0x80u));
        if (!ok && bad++ < 5)
          ADD_FAILURE() << "code 0x" << std::hex << in << " in byte " << b << " -> fnuz 0x" << out << " (" << have
                        << "), want " << want;
      }
    }
  EXPECT_EQ(bad, 0);
  // 1.0 -> fnuz 0.5 (same bits), NaN 0x7f -> 0x80, -0 -> 0, NaN 0xff -> 0x80
  EXPECT_EQ(fp8_e4m3fn_codes_as_fnuz_half(0xFF807F38u), 0x80008038u);
}
