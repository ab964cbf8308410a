// tests/emu/test_emu_atoms.cpp: hipattn's CDNA atoms (tests/isa/atoms.hip) and warp tiles
// (tests/isa/warp_tile.hip), executed on the emulator for gfx942 and gfx950 with fresh random inputs
// (outputs start poisoned: Memory::alloc fills 0xA5) and compared with host references:
//   * MFMA atoms: D = A * B + C in double, with A, B, C, D placed by AMD's documented layouts,
//     written here independently of hipattn (AMD Matrix Instruction Calculator form: where does
//     entry A[i][k] live); the f8f6f4 K order is the one of AMD's hardware-run opus test (AMD-REVIEW
//     L1). hipattn's MfmaLayout formulas are then checked against the same layouts.
//   * LDS reads: ds_read_b128 / the 4-element column gather (gfx942) and ds_read_b64_tr_b16
//     (gfx950: lane i of a 16-lane group supplies block row i / 4, columns 4 (i % 4)..+3, and gets
//     column i; AMD-REVIEW section 2).
//   * lane ops: max / sum over the lanes {l, l^16, l^32, l^48}; both the cdna3 (ds_swizzle +
//     ds_bpermute) and the cdna4 (v_permlane32_swap + v_permlane16_swap) reductions.
//   * math: bf16 / f16 packing (round to nearest even) and exp2 + tanh.
//   * warp tiles: the attention that warp_tile_kernel computes, in double (see WarpTileRef).
// Code objects (one variable each; the test is skipped when unset):
//   $HIPATTN_EMU_ATOMS_GFX942, $HIPATTN_EMU_ATOMS_GFX950          tests/isa/atoms.hip
//   $HIPATTN_EMU_WARP_TILE_GFX942, $HIPATTN_EMU_WARP_TILE_GFX950  tests/isa/warp_tile.hip
// $HIPATTN_EMU_SEED fixes the random seed (printed with every failure).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "emu.hpp"
#include "hipattn/arch/cdna3/atoms.hpp"
#include "hipattn/arch/cdna4/atoms.hpp"
#include "hipattn/tile/lds_layout.hpp"
#include "../isa/warp_tile_manifest.hpp"

namespace hipattn::emu {
namespace {

// ---------------------------------------------------------------- harness
std::string env(const std::string& var) {
  const char* p = std::getenv(var.c_str());
  return p ? p : "";
}

std::shared_ptr<const CodeObject> load_cached(const std::string& path) {
  static std::map<std::string, std::shared_ptr<const CodeObject>> cache;
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  auto co = CodeObject::load(path);
  cache[path] = co;
  return co;
}

uint64_t seed() {
  static const uint64_t s = [] {
    const std::string e = env("HIPATTN_EMU_SEED");
    return e.empty() ? (uint64_t(std::random_device{}()) << 32 | std::random_device{}()) : std::stoull(e);
  }();
  return s;
}

// The explicit kernel arguments, in order, each at the offset and size the metadata gives.
std::vector<uint8_t> kernargs(const KernelInfo& k, const std::vector<uint64_t>& vals) {
  std::vector<const KernelArg*> expl;
  for (const auto& a : k.args)
    if (a.value_kind.rfind("hidden_", 0) != 0) expl.push_back(&a);
  EXPECT_EQ(expl.size(), vals.size()) << k.demangled;
  uint32_t end = 0;
  for (const auto* a : expl) end = std::max(end, a->offset + a->size);
  std::vector<uint8_t> bytes(end, 0);
  for (size_t i = 0; i < expl.size() && i < vals.size(); ++i) std::memcpy(bytes.data() + expl[i]->offset, &vals[i], expl[i]->size);
  return bytes;
}

void run(const CodeObject& co, const KernelInfo& k, uint32_t threads, const std::vector<uint64_t>& args, Memory& mem) {
  const auto ka = kernargs(k, args);
  launch(co, k, {1, 1, 1}, {threads, 1, 1}, 0, ka.data(), ka.size(), mem);
}

// ---------------------------------------------------------------- number formats (host, independent)
double f16_val(uint16_t h) { _Float16 x; std::memcpy(&x, &h, 2); return double(x); }
uint16_t f16_bits(float f) { const _Float16 x = static_cast<_Float16>(f); uint16_t h; std::memcpy(&h, &x, 2); return h; }
double bf16_val(uint16_t h) { const uint32_t u = uint32_t(h) << 16; float f; std::memcpy(&f, &u, 4); return f; }
uint16_t bf16_bits(float f) {  // round to nearest even (finite inputs)
  uint32_t u; std::memcpy(&u, &f, 4);
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
float f32_of(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
uint32_t bits_of(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
// fp8 e4m3: gfx942 MFMAs read FNUZ (bias 8, 0x80 NaN, no -0), gfx950 OCP e4m3fn (bias 7, S.1111.111 NaN).
bool fp8_nan(uint8_t c, Gfx g) { return g == Gfx::gfx942 ? c == 0x80 : (c & 0x7F) == 0x7F; }
double fp8_val(uint8_t c, Gfx g) {
  const int bias = g == Gfx::gfx942 ? 8 : 7, e = (c >> 3) & 15, m = c & 7;
  const double mag = e == 0 ? m / 8.0 * std::ldexp(1.0, 1 - bias) : (1 + m / 8.0) * std::ldexp(1.0, e - bias);
  return (c & 0x80) ? -mag : mag;
}

// ---------------------------------------------------------------- MFMA layouts, AMD's description
enum class Ty { f16, bf16, fp8 };
struct MfmaAtom {
  const char* kernel;
  int M, K;
  Ty ty;
  bool f8f6f4;  // K order of the f8f6f4 shapes (opus)
  int per_lane() const { return K * M / 64; }
  int elem_bytes() const { return ty == Ty::fp8 ? 1 : 2; }
  int c_per_lane() const { return M * M / 64; }
};
struct Loc {
  int lane, item;
  bool operator==(const Loc& o) const { return lane == o.lane && item == o.item; }
};
// AMD Matrix Instruction Calculator (CDNA3, --get-register): A[i][k] is in lane i + M * floor(k / P),
// item k % P (P = entries per lane); B[k][j] in lane j + N * floor(k / P), item k % P; the CDNA4
// 16x16x32 / 32x32x16 shapes continue the pattern (CK Tile M16N16K32 / M32N32K16 attributes). The
// f8f6f4 shapes: AMD's opus hardware test loads A (and B) of 16x16x128 as 4 stripes of 8 k at
// stride 32 and 32x32x64 as 2 stripes of 16 (ROCm/aiter op_tests/opus/device/test_mfma_scale.cu).
Loc a_loc(const MfmaAtom& t, int i, int k) {
  if (t.f8f6f4)
    return t.M == 16 ? Loc{i + 16 * ((k / 8) % 4), 8 * (k / 32) + k % 8} : Loc{i + 32 * ((k / 16) % 2), 16 * (k / 32) + k % 16};
  return {i + t.M * (k / t.per_lane()), k % t.per_lane()};
}
Loc b_loc(const MfmaAtom& t, int k, int j) { return a_loc(t, j, k); }
// D[i][j] (and C): 16x16: lane j + 16 * floor(i / 4), item i % 4; 32x32: lane j + 32 * (floor(i / 4) % 2),
// item 4 * floor(i / 8) + i % 4.
Loc d_loc(int M, int i, int j) {
  return M == 16 ? Loc{j + 16 * (i / 4), i % 4} : Loc{j + 32 * ((i / 4) % 2), 4 * (i / 8) + i % 4};
}

const MfmaAtom kCdna3Mfma[] = {
    {"atom_cdna3_mfma_16x16x16_f16(", 16, 16, Ty::f16, false}, {"atom_cdna3_mfma_16x16x16_bf16(", 16, 16, Ty::bf16, false},
    {"atom_cdna3_mfma_32x32x8_f16(", 32, 8, Ty::f16, false},   {"atom_cdna3_mfma_32x32x8_bf16(", 32, 8, Ty::bf16, false},
    {"atom_cdna3_mfma_16x16x32_fp8(", 16, 32, Ty::fp8, false}, {"atom_cdna3_mfma_32x32x16_fp8(", 32, 16, Ty::fp8, false},
};
const MfmaAtom kCdna4Mfma[] = {
    {"atom_cdna4_mfma_16x16x32_f16(", 16, 32, Ty::f16, false},   {"atom_cdna4_mfma_16x16x32_bf16(", 16, 32, Ty::bf16, false},
    {"atom_cdna4_mfma_32x32x16_f16(", 32, 16, Ty::f16, false},   {"atom_cdna4_mfma_32x32x16_bf16(", 32, 16, Ty::bf16, false},
    {"atom_cdna4_mfma_16x16x128_fp8(", 16, 128, Ty::fp8, true}, {"atom_cdna4_mfma_32x32x64_fp8(", 32, 64, Ty::fp8, true},
};

// The layouts above are bijections (every (lane, item) holds exactly one entry).
TEST(EmuMfmaLayout, DocumentedLayoutsAreBijections) {
  for (const auto* set : {kCdna3Mfma, kCdna4Mfma})
    for (int n = 0; n < 6; ++n) {
      const MfmaAtom& t = set[n];
      std::vector<int> a(64 * t.per_lane(), 0), d(64 * t.c_per_lane(), 0);
      for (int i = 0; i < t.M; ++i)
        for (int k = 0; k < t.K; ++k) {
          const Loc l = a_loc(t, i, k);
          ASSERT_TRUE(l.lane >= 0 && l.lane < 64 && l.item >= 0 && l.item < t.per_lane()) << t.kernel;
          ++a[l.lane * t.per_lane() + l.item];
        }
      for (int i = 0; i < t.M; ++i)
        for (int j = 0; j < t.M; ++j) {
          const Loc l = d_loc(t.M, i, j);
          ASSERT_TRUE(l.lane >= 0 && l.lane < 64 && l.item >= 0 && l.item < t.c_per_lane()) << t.kernel;
          ++d[l.lane * t.c_per_lane() + l.item];
        }
      for (int c : a) EXPECT_EQ(c, 1) << t.kernel;
      for (int c : d) EXPECT_EQ(c, 1) << t.kernel;
    }
}

// hipattn's MfmaLayout (cdna3/atoms.hpp, cdna4/atoms.hpp) agrees with the documented layouts: A and
// B rows / columns and K, and the C / D map. For the f8f6f4 shapes only what a product can observe
// is required here (the M / N lane maps, one K map shared by A and B, the C map); the exact K order
// is the next test.
template <class Lay>
void check_hipattn_layout(const MfmaAtom& t) {
  static_assert(Lay::kM > 0);
  ASSERT_EQ(Lay::kM, t.M);
  ASSERT_EQ(Lay::kK, t.K);
  ASSERT_EQ(Lay::kAElems, t.per_lane());
  ASSERT_EQ(Lay::kCElems, t.c_per_lane());
  for (int l = 0; l < 64; ++l) {
    for (int e = 0; e < Lay::kAElems; ++e) {
      const auto a = Lay::a(l, e), b = Lay::b(l, e);  // a = {row, k}, b = {k, col}
      EXPECT_EQ(a_loc(t, a.row, a.col), (Loc{l, e})) << t.kernel << " A lane " << l << " e " << e;
      EXPECT_EQ(b_loc(t, b.row, b.col), (Loc{l, e})) << t.kernel << " B lane " << l << " e " << e;
    }
    for (int e = 0; e < Lay::kCElems; ++e) {
      const auto c = Lay::c(l, e);
      EXPECT_EQ(d_loc(t.M, c.row, c.col), (Loc{l, e})) << t.kernel << " C lane " << l << " e " << e;
    }
  }
}

TEST(EmuMfmaLayout, HipattnLayoutsMatchAmd) {
  check_hipattn_layout<cdna3::Mfma16x16x16Layout>(kCdna3Mfma[0]);
  check_hipattn_layout<cdna3::Mfma32x32x8Layout>(kCdna3Mfma[2]);
  check_hipattn_layout<cdna3::Mfma16x16x32Fp8Layout>(kCdna3Mfma[4]);
  check_hipattn_layout<cdna3::Mfma32x32x16Fp8Layout>(kCdna3Mfma[5]);
  check_hipattn_layout<cdna4::Mfma16x16x32Layout>(kCdna4Mfma[0]);
  check_hipattn_layout<cdna4::Mfma32x32x16Layout>(kCdna4Mfma[2]);
  // f8f6f4: K in stripes 32 apart, the order of AMD's opus test (AMD-REVIEW L1; the header stated a
  // contiguous order before)
  check_hipattn_layout<cdna4::Mfma16x16x128Fp8Layout>(kCdna4Mfma[4]);
  check_hipattn_layout<cdna4::Mfma32x32x64Fp8Layout>(kCdna4Mfma[5]);
}

// ---------------------------------------------------------------- atoms.hip
class EmuAtoms : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string var = "HIPATTN_EMU_ATOMS_" + std::string(GetParam() == "gfx942" ? "GFX942" : "GFX950");
    const std::string p = env(var);
    if (p.empty()) GTEST_SKIP() << var << " not set (path of tests/isa/atoms.hip's code object): emulated test skipped";
    co = load_cached(p);
    ASSERT_EQ(std::string(gfx_name(co->gfx())), GetParam()) << p;
    rng.seed(seed());
  }
  const KernelInfo& kernel(const std::string& name) { return co->find({name}); }
  std::shared_ptr<const CodeObject> co;
  std::mt19937_64 rng;
};

// Random operand bytes for one MFMA atom: C as f32 in (-2, 2), A and B in their format. The
// kernel's input views overlap (C of lane l at 16 l or 64 l bytes, A at (l + 64) * lane bytes), so
// an A / B element that also forms the sign and exponent of a C float is kept moderate; the others
// take any non-NaN value of the format (fp8: every code; f16: subnormals too).
std::vector<uint8_t> mfma_inputs(const MfmaAtom& t, Gfx g, std::mt19937_64& rng) {
  std::vector<uint8_t> buf(8192);
  std::uniform_real_distribution<float> u2(-2.f, 2.f);
  for (size_t o = 0; o < buf.size(); o += 4) {
    const uint32_t b = bits_of(u2(rng));
    std::memcpy(&buf[o], &b, 4);
  }
  const int lane_bytes = t.per_lane() * t.elem_bytes();
  for (int base : {64 * lane_bytes, 128 * lane_bytes})
    for (int off = base; off < base + 64 * lane_bytes; off += t.elem_bytes()) {
      const bool top = off % 4 == 4 - t.elem_bytes();  // holds a C float's sign and exponent
      if (t.ty == Ty::fp8) {
        uint8_t c;
        do c = uint8_t(rng()); while (fp8_nan(c, g) || (top && ((c & 0x7F) < 0x30 || (c & 0x7F) > 0x44)));
        buf[off] = c;
      } else {
        uint16_t h;
        if (t.ty == Ty::f16 && !top && rng() % 8 == 0) h = uint16_t((rng() % 0x3FF + 1) | (rng() % 2 ? 0x8000 : 0));
        else h = t.ty == Ty::f16 ? f16_bits(u2(rng)) : bf16_bits(u2(rng));
        std::memcpy(&buf[off], &h, 2);
      }
    }
  return buf;
}

void check_mfma(const CodeObject& co, const MfmaAtom& t, std::mt19937_64& rng) {
  SCOPED_TRACE(std::string(t.kernel) + " [" + gfx_name(co.gfx()) + "]");
  const Gfx g = co.gfx();
  const auto in = mfma_inputs(t, g, rng);
  Memory mem;
  const uint64_t din = mem.upload(in, "in"), dout = mem.alloc(64 * t.c_per_lane() * 4, "out");
  run(co, co.find({t.kernel}), 64, {din, dout}, mem);
  const auto out = mem.download<float>(dout, 64 * t.c_per_lane());
  const int lane_bytes = t.per_lane() * t.elem_bytes();
  auto elem = [&](int base, Loc l) {
    const int off = base + l.lane * lane_bytes + l.item * t.elem_bytes();
    if (t.ty == Ty::fp8) return fp8_val(in[off], g);
    uint16_t h;
    std::memcpy(&h, &in[off], 2);
    return t.ty == Ty::f16 ? f16_val(h) : bf16_val(h);
  };
  auto c_val = [&](Loc l) {
    float f;
    std::memcpy(&f, &in[4 * (l.lane * t.c_per_lane() + l.item)], 4);
    return double(f);
  };
  int bad = 0;
  for (int i = 0; i < t.M; ++i)
    for (int j = 0; j < t.M; ++j) {
      const Loc dl = d_loc(t.M, i, j);
      double ref = c_val(dl), mag = std::fabs(ref);
      for (int k = 0; k < t.K; ++k) {
        const double p = elem(64 * lane_bytes, a_loc(t, i, k)) * elem(128 * lane_bytes, b_loc(t, k, j));
        ref += p;
        mag += std::fabs(p);
      }
      const double got = out[dl.lane * t.c_per_lane() + dl.item];
      if (!(std::fabs(got - ref) <= std::ldexp(mag, -20)) && ++bad <= 5)
        ADD_FAILURE() << "D[" << i << "][" << j << "] (lane " << dl.lane << ", item " << dl.item << "): got " << got
                      << ", expected " << ref << " (seed " << seed() << ")";
    }
  EXPECT_EQ(bad, 0) << "wrong D entries (seed " << seed() << ")";
}

TEST_P(EmuAtoms, Cdna3Mfma) {
  for (const auto& t : kCdna3Mfma) check_mfma(*co, t, rng);
}

TEST_P(EmuAtoms, Cdna4Mfma) {
  if (co->gfx() != Gfx::gfx950) GTEST_SKIP() << "cdna4 atoms are gfx950 only";
  for (const auto& t : kCdna4Mfma) check_mfma(*co, t, rng);
}

std::vector<uint16_t> random_u16(size_t n, std::mt19937_64& rng) {
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = uint16_t(rng());
  return v;
}

TEST_P(EmuAtoms, Cdna3LdsReads) {
  const auto in = random_u16(64 * 16, rng);
  Memory mem;
  const uint64_t din = mem.upload(in, "in"), dout = mem.alloc(1536, "out");
  run(*co, kernel("atom_cdna3_lds_reads("), 64, {din, dout}, mem);
  const auto out = mem.download<uint16_t>(dout, 768);
  for (int l = 0; l < 64; ++l) {
    for (int i = 0; i < 8; ++i) ASSERT_EQ(out[8 * l + i], in[8 * (l ^ 5) + i]) << "b128 lane " << l << " element " << i;
    for (int j = 0; j < 4; ++j) ASSERT_EQ(out[4 * (128 + l) + j], in[64 * j + l]) << "gather lane " << l << " element " << j;
  }
}

TEST_P(EmuAtoms, Cdna4LdsReadTr16) {
  if (co->gfx() != Gfx::gfx950) GTEST_SKIP() << "cdna4 atoms are gfx950 only";
  const auto in = random_u16(64 * 16, rng);
  Memory mem;
  const uint64_t din = mem.upload(in, "in"), dout = mem.alloc(512, "out");
  run(*co, kernel("atom_cdna4_lds_read_tr16("), 64, {din, dout}, mem);
  const auto out = mem.download<uint16_t>(dout, 256);
  // lane L of the kernel addresses lds + 4 (L ^ 3) (16-bit units). In 16-lane group g, lane i
  // receives column i of the 4 x 16 block whose row j lanes 4 j .. 4 j + 3 address (4 columns each).
  for (int l = 0; l < 64; ++l) {
    const int g = l / 16, i = l % 16;
    for (int j = 0; j < 4; ++j) {
      const int supplier = 16 * g + 4 * j + i / 4;
      ASSERT_EQ(out[4 * l + j], in[4 * (supplier ^ 3) + i % 4]) << "lane " << l << " element " << j;
    }
  }
}

void check_lane_ops(const CodeObject& co, const KernelInfo& k, std::mt19937_64& rng) {
  SCOPED_TRACE(k.demangled + " [" + gfx_name(co.gfx()) + "]");
  std::vector<float> in(128);
  std::uniform_real_distribution<float> u(-100.f, 100.f);
  for (auto& x : in) x = u(rng);
  Memory mem;
  const uint64_t din = mem.upload(in, "in"), dout = mem.alloc(512, "out");
  run(co, k, 64, {din, dout}, mem);
  const auto out = mem.download<float>(dout, 128);
  int bad = 0;
  for (int l = 0; l < 64; ++l) {
    double mx = -INFINITY, sum = 0, mag = 0;
    for (int o : {0, 16, 32, 48}) {
      mx = std::max(mx, double(in[l ^ o]));
      sum += in[64 + (l ^ o)];
      mag += std::fabs(in[64 + (l ^ o)]);
    }
    if (out[l] != float(mx) && ++bad < 6) ADD_FAILURE() << "max lane " << l << ": got " << out[l] << ", expected " << mx;
    if (!(std::fabs(out[64 + l] - sum) <= 1e-6 * mag) && ++bad < 6)
      ADD_FAILURE() << "sum lane " << l << ": got " << out[64 + l] << ", expected " << sum;
  }
  EXPECT_EQ(bad, 0) << "(seed " << seed() << ")";
}

TEST_P(EmuAtoms, Cdna3LaneOps) { check_lane_ops(*co, kernel("atom_cdna3_lane_ops("), rng); }

// The gfx950 row reductions (v_permlane32_swap + v_permlane16_swap, cdna4::reduce_*_xor48).
TEST_P(EmuAtoms, Cdna4LaneOps) {
  if (co->gfx() != Gfx::gfx950) GTEST_SKIP() << "cdna4 atoms are gfx950 only";
  check_lane_ops(*co, kernel("atom_cdna4_lane_ops("), rng);
}

std::vector<float> math_inputs(std::mt19937_64& rng) {
  std::vector<float> in(128);
  std::uniform_real_distribution<float> u(-8.f, 8.f);
  for (auto& x : in) x = u(rng);
  in[0] = 65520.f;  // rounds to +inf in f16; exp2 overflows
  in[1] = -0.f;
  in[2] = 3e-8f;    // an f16 subnormal
  in[3] = 1.00048828125f;  // exactly halfway between two f16 values (ties to even)
  in[64 + 4] = bf16_val(0x3F81) + std::ldexp(1.0, -8);  // exactly halfway between two bf16 values
  return in;
}

void check_packs(const std::vector<float>& in, const std::vector<uint32_t>& out) {
  for (int l = 0; l < 64; ++l) {
    const uint32_t bf = uint32_t(bf16_bits(in[l])) | uint32_t(bf16_bits(in[l + 64])) << 16;
    const uint32_t hf = uint32_t(f16_bits(in[l])) | uint32_t(f16_bits(in[l + 64])) << 16;
    EXPECT_EQ(out[l], bf) << "pack_bf16x2 lane " << l << " (" << in[l] << ", " << in[l + 64] << ")";
    EXPECT_EQ(out[64 + l], hf) << "pack_f16x2 lane " << l << " (" << in[l] << ", " << in[l + 64] << ")";
  }
}

TEST_P(EmuAtoms, Cdna3Math) {
  const auto in = math_inputs(rng);
  Memory mem;
  const uint64_t din = mem.upload(in, "in"), dout = mem.alloc(192 * 4, "out");
  run(*co, kernel("atom_cdna3_math("), 64, {din, dout}, mem);
  const auto out = mem.download<uint32_t>(dout, 192);
  check_packs(in, out);
  for (int l = 0; l < 64; ++l) {
    const double ref = std::exp2(double(in[l])) + std::tanh(double(in[l + 64]));
    const double got = f32_of(out[128 + l]);
    if (std::isinf(ref)) EXPECT_EQ(got, ref) << "lane " << l;
    else EXPECT_NEAR(got, ref, 4e-6 * (std::exp2(double(in[l])) + 1)) << "exp2 + tanh lane " << l;
  }
}

TEST_P(EmuAtoms, Cdna4Math) {
  if (co->gfx() != Gfx::gfx950) GTEST_SKIP() << "cdna4 atoms are gfx950 only";
  const auto in = math_inputs(rng);
  Memory mem;
  const uint64_t din = mem.upload(in, "in"), dout = mem.alloc(128 * 4, "out");
  run(*co, kernel("atom_cdna4_math("), 64, {din, dout}, mem);
  check_packs(in, mem.download<uint32_t>(dout, 128));
}

INSTANTIATE_TEST_SUITE_P(Targets, EmuAtoms, ::testing::Values("gfx942", "gfx950"),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------- warp_tile.hip
// warp_tile_kernel<kBf16, kD, kMT, kKN>(g, scale, out, key0), one wave (64 threads):
//   LDS = g copied in 16-byte chunks, chunk i zero when i % 8 == 5; Q = rows [0, 16 kMT), K = the next
//   kKN + 16 rows, V the next kKN + 16, each a SwizzledTile<*, kD> (element (r, c) at index(r, c); rows
//   of kPitch elements: d = 96 has a 128-element pitch);
//   lds_scale[k] = scale[k], 0 for k = 3.
//   S[r][k] = Q[r] . K[key0 + k]  (k < kKN);  m[r] = max_k S[r][k] lds_scale[k];
//   P = exp2(S - m),  l[r] = sum_k P[r][k];
//   O = P16 V[key0 .. key0 + kKN) + S2_16 V[0 .. kKN)  with S2[r][k] = Q[r] . K[k] and X16 = X rounded
//   to the 16-bit type (the tile packs P for the MFMA);
//   out[r][c] (16-bit) = tanh(O[r][c] / l[r]) for even c, O[r][c] / l[r] for odd c.
struct WarpTileCase {
  bool bf16;
  int d, mt, kn;
};
const WarpTileCase kWarpTiles[] = {{true, 64, 1, 16},  {true, 128, 1, 16}, {true, 128, 1, 64}, {false, 128, 1, 64},
                                   {true, 128, 2, 32}, {true, 256, 1, 32}, {false, 256, 1, 16}, {true, 96, 1, 32},
                                   {false, 96, 1, 16}};

template <int kD>
int tile_index(int r, int c) { return SwizzledTile<1, kD>::index(r, c); }
int tile_pitch(int d) { return d == 96 ? SwizzledTile<1, 96>::kPitch : d; }
int tile_index(int d, int r, int c) {
  switch (d) {
    case 64: return tile_index<64>(r, c);
    case 96: return tile_index<96>(r, c);
    case 128: return tile_index<128>(r, c);
    default: return tile_index<256>(r, c);
  }
}

class EmuWarpTile : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string var = "HIPATTN_EMU_WARP_TILE_" + std::string(GetParam() == "gfx942" ? "GFX942" : "GFX950");
    const std::string p = env(var);
    if (p.empty()) GTEST_SKIP() << var << " not set (path of tests/isa/warp_tile.hip's code object): emulated test skipped";
    co = load_cached(p);
    ASSERT_EQ(std::string(gfx_name(co->gfx())), GetParam()) << p;
    rng.seed(seed() + 1);
  }
  std::shared_ptr<const CodeObject> co;
  std::mt19937_64 rng;
};

void check_warp_tile(const CodeObject& co, const WarpTileCase& t, int key0, std::mt19937_64& rng) {
  const std::string name = hipattn::isa_test::warp_tile_manifest(t.bf16, t.d, t.mt, t.kn).c_str();
  SCOPED_TRACE(name + " key0 " + std::to_string(key0) + " [" + gfx_name(co.gfx()) + "] seed " + std::to_string(seed()));
  const int D = t.d, P = tile_pitch(D), rows = 16 * t.mt, keys = t.kn + 16;
  const size_t n = size_t(rows + 2 * keys) * P;
  auto to16 = [&](double x) { return t.bf16 ? bf16_bits(float(x)) : f16_bits(float(x)); };
  auto val = [&](uint16_t h) { return t.bf16 ? bf16_val(h) : f16_val(h); };
  std::uniform_real_distribution<double> u(-1, 1), us(0.5, 1.5);
  std::vector<uint16_t> g(n);
  for (auto& x : g) x = to16(u(rng));
  std::vector<float> scale(64);
  for (auto& x : scale) x = float(us(rng));
  Memory mem;
  const uint64_t dg = mem.upload(g, "g"), ds = mem.upload(scale, "scale"), dout = mem.alloc(size_t(rows) * D * 2, "out");
  run(co, co.find_manifest(name), 64, {dg, ds, dout, uint64_t(uint32_t(key0))}, mem);
  const auto out = mem.download<uint16_t>(dout, size_t(rows) * D);

  auto lds = [&](size_t p) { return ((p / 8) % 8 == 5) ? 0.0 : val(g[p]); };
  auto Q = [&](int r, int c) { return lds(tile_index(D, r, c)); };
  auto K = [&](int k, int c) { return lds(size_t(rows) * P + tile_index(D, k, c)); };
  auto V = [&](int k, int c) { return lds(size_t(rows + keys) * P + tile_index(D, k, c)); };
  int bad = 0;
  const double tol = t.bf16 ? 1.6e-2 : 3e-3;
  for (int r = 0; r < rows; ++r) {
    std::vector<double> s(t.kn), s2(t.kn), p16(t.kn), s216(t.kn);
    double m = -INFINITY, l = 0;
    for (int k = 0; k < t.kn; ++k) {
      s[k] = s2[k] = 0;
      for (int c = 0; c < D; ++c) s[k] += Q(r, c) * K(key0 + k, c), s2[k] += Q(r, c) * K(k, c);
      m = std::max(m, s[k] * (k == 3 ? 0.0 : double(scale[k])));
    }
    for (int k = 0; k < t.kn; ++k) {
      const double p = std::exp2(s[k] - m);
      l += p;
      p16[k] = val(to16(p));
      s216[k] = val(to16(s2[k]));
    }
    for (int c = 0; c < D; ++c) {
      double o = 0, mag = 0;
      for (int k = 0; k < t.kn; ++k) {
        o += p16[k] * V(key0 + k, c) + s216[k] * V(k, c);
        mag += std::fabs(p16[k] * V(key0 + k, c)) + std::fabs(s216[k] * V(k, c));
      }
      const double ref = c % 2 == 0 ? std::tanh(o / l) : o / l;
      const double got = val(out[size_t(r) * D + c]);
      // relative to the size of the computation (sum of |terms| / l): one rounding of P or S2 to
      // 16 bit, the hardware's f32 sums, the 16-bit output
      if (!(std::fabs(got - ref) <= tol * (std::fabs(ref) + mag / l) + 1e-6) && ++bad <= 5)
        ADD_FAILURE() << "out[" << r << "][" << c << "]: got " << got << ", expected " << ref << " (scale " << mag / l << ")";
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST_P(EmuWarpTile, MatchesAttentionReference) {
  for (const auto& t : kWarpTiles)
    for (int key0 : {16, 5}) check_warp_tile(*co, t, key0, rng);
}

INSTANTIATE_TEST_SUITE_P(Targets, EmuWarpTile, ::testing::Values("gfx942", "gfx950"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hipattn::emu
