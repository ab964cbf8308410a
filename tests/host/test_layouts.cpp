// tests/host/test_layouts.cpp: the lane layouts of every MMA atom (sm90, cdna3, cdna4) and the warp-tile
// row-slot / column maps of each architecture cover their tiles exactly once; the CDNA warp tiles'
// operand reads, run through an emulation of the MFMA and ds_read_b64_tr_b16 lane layouts, compute
// S = Q K^T and O = P V into the cells their maps claim; their LDS read patterns are free of bank
// conflicts on the swizzled tile.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "hipattn/arch/cdna3/atoms.hpp"
#include "hipattn/arch/cdna3/warp_tile.hpp"
#include "hipattn/arch/cdna4/atoms.hpp"
#include "hipattn/arch/cdna4/warp_tile.hpp"
#include "hipattn/arch/sm90/atoms.hpp"
#include "hipattn/arch/sm90/warp_tile.hpp"
#include "hipattn/tile/lds_layout.hpp"

namespace {

// Counts how often each cell of a rows x cols tile is hit by f(lane, e) for all lanes and elements;
// returns "" when every cell is hit exactly once, else a description of the first problem.
template <class F>
std::string cover_once(int lanes, int elems, int rows, int cols, F f) {
  std::vector<int> hits(static_cast<size_t>(rows) * cols, 0);
  for (int l = 0; l < lanes; ++l)
    for (int e = 0; e < elems; ++e) {
      const auto p = f(l, e);
      if (p.row < 0 || p.row >= rows || p.col < 0 || p.col >= cols)
        return "lane " + std::to_string(l) + " elem " + std::to_string(e) + " -> (" + std::to_string(p.row) + ", " +
               std::to_string(p.col) + ") outside " + std::to_string(rows) + " x " + std::to_string(cols);
      ++hits[static_cast<size_t>(p.row) * cols + p.col];
    }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      if (hits[static_cast<size_t>(r) * cols + c] != 1)
        return "cell (" + std::to_string(r) + ", " + std::to_string(c) + ") hit " +
               std::to_string(hits[static_cast<size_t>(r) * cols + c]) + " times";
  return "";
}

// A, B (as k x n) and C of an atom layout with kM, kN, kK and kAElems / kBElems / kCElems.
template <class Lay>
void expect_atom_bijective(int lanes, const char* name) {
  SCOPED_TRACE(name);
  EXPECT_EQ(cover_once(lanes, Lay::kAElems, Lay::kM, Lay::kK, [](int l, int e) { return Lay::a(l, e); }), "") << "A";
  EXPECT_EQ(cover_once(lanes, Lay::kBElems, Lay::kK, Lay::kN, [](int l, int e) { return Lay::b(l, e); }), "") << "B";
  EXPECT_EQ(cover_once(lanes, Lay::kCElems, Lay::kM, Lay::kN, [](int l, int e) { return Lay::c(l, e); }), "") << "C";
}

TEST(AtomLayouts, Sm90CoverTheirTiles) {
  using namespace hipattn::sm90;
  expect_atom_bijective<Mma16816Layout>(32, "sm90 m16n8k16");
  expect_atom_bijective<Mma16832Fp8Layout>(32, "sm90 m16n8k32 e4m3");
}

TEST(AtomLayouts, Cdna3CoverTheirTiles) {
  using namespace hipattn::cdna3;
  expect_atom_bijective<Mfma32x32x8Layout>(64, "cdna3 32x32x8");
  expect_atom_bijective<Mfma16x16x16Layout>(64, "cdna3 16x16x16");
  expect_atom_bijective<Mfma32x32x16Fp8Layout>(64, "cdna3 32x32x16 fp8");
  expect_atom_bijective<Mfma16x16x32Fp8Layout>(64, "cdna3 16x16x32 fp8");
}

TEST(AtomLayouts, Cdna4CoverTheirTiles) {
  using namespace hipattn::cdna4;
  expect_atom_bijective<Mfma16x16x32Layout>(64, "cdna4 16x16x32");
  expect_atom_bijective<Mfma32x32x16Layout>(64, "cdna4 32x32x16");
  expect_atom_bijective<Mfma16x16x128Fp8Layout>(64, "cdna4 16x16x128 fp8");
  expect_atom_bijective<Mfma32x32x64Fp8Layout>(64, "cdna4 32x32x64 fp8");
}

// Spot values of the documented MFMA layouts (AMD Matrix Instruction Calculator, gfx9 formulas),
// written out independently of the generic formula.
TEST(AtomLayouts, CdnaSpotValues) {
  using namespace hipattn::cdna3;
  // 32x32x8: lane 33 holds A row 1, k 4..7; C element 5 of lane 40: row 8*1 + 4*1 + 1 = 13, col 8.
  EXPECT_EQ(Mfma32x32x8Layout::a(33, 0).row, 1);
  EXPECT_EQ(Mfma32x32x8Layout::a(33, 2).col, 6);
  EXPECT_EQ(Mfma32x32x8Layout::c(40, 5).row, 13);
  EXPECT_EQ(Mfma32x32x8Layout::c(40, 5).col, 8);
  EXPECT_EQ(Mfma32x32x8Layout::c(0, 15).row, 27);  // 8 * 3 + 0 + 3
  // 16x16x16: lane 37 = group 2, index 5: A row 5, k 8..11; C rows 8..11 of column 5.
  EXPECT_EQ(Mfma16x16x16Layout::a(37, 3).row, 5);
  EXPECT_EQ(Mfma16x16x16Layout::a(37, 3).col, 11);
  EXPECT_EQ(Mfma16x16x16Layout::b(37, 1).row, 9);
  EXPECT_EQ(Mfma16x16x16Layout::b(37, 1).col, 5);
  EXPECT_EQ(Mfma16x16x16Layout::c(37, 2).row, 10);
  EXPECT_EQ(Mfma16x16x16Layout::c(37, 2).col, 5);
  // fp8 16x16x32: lane 63 holds k 24..31 of row 15.
  EXPECT_EQ(Mfma16x16x32Fp8Layout::a(63, 7).row, 15);
  EXPECT_EQ(Mfma16x16x32Fp8Layout::a(63, 7).col, 31);
  // gfx950 16x16x32 f16: lane 17 holds k 8..15 of row 1; 16x16x128 fp8: lane 50 holds k 24..31, 56..63, 88..95 and 120..127 of row 2 (stripes of 8, 32 apart).
  EXPECT_EQ(hipattn::cdna4::Mfma16x16x32Layout::a(17, 0).col, 8);
  EXPECT_EQ(hipattn::cdna4::Mfma16x16x128Fp8Layout::a(50, 31).col, 127);
  EXPECT_EQ(hipattn::cdna4::Mfma16x16x128Fp8Layout::a(50, 31).row, 2);
  EXPECT_EQ(hipattn::cdna4::Mfma16x16x128Fp8Layout::a(50, 0).col, 24);
  EXPECT_EQ(hipattn::cdna4::Mfma16x16x128Fp8Layout::a(50, 8).col, 56);
  EXPECT_EQ(hipattn::cdna4::Mfma32x32x64Fp8Layout::a(33, 17).col, 49);
}

// The fp8 MFMA operands (numeric/fp8_operand.hpp) name their format: no conversion from bare bits or
// between the formats, and element e of an operand (the layouts above) is code e, byte e of its bits.
TEST(AtomLayouts, Fp8OperandsNameTheirFormat) {
  using hipattn::E4m3fnCodes;
  using hipattn::E4m3fnuzCodes;
  static_assert(!std::is_constructible_v<E4m3fnuzCodes<8>, uint64_t> && !std::is_convertible_v<uint64_t, E4m3fnuzCodes<8>>);
  static_assert(!std::is_constructible_v<E4m3fnuzCodes<8>, E4m3fnCodes<8>>);
  static_assert(!std::is_constructible_v<E4m3fnCodes<8>, E4m3fnuzCodes<8>>);
  static_assert(!std::is_constructible_v<E4m3fnCodes<32>, E4m3fnCodes<8>>);
  static_assert(sizeof(E4m3fnuzCodes<8>) == 8 && sizeof(E4m3fnCodes<32>) == 32);
  static_assert(std::is_trivially_copyable_v<E4m3fnCodes<32>>);
  static_assert(std::is_same_v<E4m3fnuzCodes<8>::code_type, hipattn::fp8_e4m3fnuz_t>);
  static_assert(std::is_same_v<E4m3fnCodes<32>::code_type, hipattn::fp8_e4m3fn_t>);
  constexpr auto a = E4m3fnuzCodes<8>::from_bits(uint64_t{0x0706050403020180u});
  static_assert(a.code(0).bits == 0x80 && a.code(1).bits == 0x01 && a.code(7).bits == 0x07);
  static_assert(a.bits<uint64_t>() == 0x0706050403020180u);
  // The same value in each format: 1.5 is 0x3c in e4m3fn (bias 7) and 0x44 in e4m3fnuz (bias 8).
  hipattn::fp8_e4m3fn_t fn[32];
  hipattn::fp8_e4m3fnuz_t fnuz[8];
  for (int e = 0; e < 32; ++e) fn[e] = hipattn::fp8_e4m3fn_t::from_float(0.25f * static_cast<float>(e - 16));
  for (int e = 0; e < 8; ++e) fnuz[e] = hipattn::fp8_e4m3fnuz_t::from_float(0.25f * static_cast<float>(e - 4));
  const auto b = E4m3fnCodes<32>::from_codes(fn);
  const auto c = E4m3fnuzCodes<8>::from_codes(fnuz);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(b.code(e).to_float(), 0.25f * static_cast<float>(e - 16)) << e;
  for (int e = 0; e < 8; ++e) EXPECT_EQ(c.code(e).to_float(), 0.25f * static_cast<float>(e - 4)) << e;
  EXPECT_EQ(b.code(22).bits, 0x3c);
  using Bytes32 = std::array<uint8_t, 32>;
  EXPECT_EQ(b.bits<Bytes32>()[22], 0x3c);
  fnuz[7] = hipattn::fp8_e4m3fnuz_t::from_float(1.5f);
  EXPECT_EQ(E4m3fnuzCodes<8>::from_codes(fnuz).bits<uint64_t>() >> 56, 0x44u);
}

// ---- warp tile maps ----
struct Cell {
  int row, col;
};

template <class WT>
void expect_warp_tile_maps(int lanes, int kD, int kKN) {
  // S and O cover rows x keys / rows x head columns exactly once.
  EXPECT_EQ(cover_once(lanes, WT::kSElems, WT::kRows, kKN,
                       [](int l, int e) { return Cell{WT::slot_row(l, WT::s_slot(e)), WT::s_col(l, e)}; }),
            "")
      << "S map";
  EXPECT_EQ(cover_once(lanes, WT::kOElems, WT::kRows, kD,
                       [](int l, int e) { return Cell{WT::slot_row(l, WT::o_slot(e)), WT::o_col(l, e)}; }),
            "")
      << "O map";
  for (int e = 0; e < WT::kSElems; ++e) {
    EXPECT_GE(WT::s_slot(e), 0);
    EXPECT_LT(WT::s_slot(e), WT::kRowSlots);
  }
  for (int e = 0; e < WT::kOElems; ++e) {
    EXPECT_GE(WT::o_slot(e), 0);
    EXPECT_LT(WT::o_slot(e), WT::kRowSlots);
  }
  // The epilogue stores O elements (e, e + 1), e even, as one pair: same row, adjacent columns,
  // the first one even (4-byte / 8-byte aligned stores).
  for (int l = 0; l < lanes; ++l)
    for (int e = 0; e < WT::kOElems; e += 2) {
      EXPECT_EQ(WT::o_slot(e + 1), WT::o_slot(e)) << "lane " << l << " e " << e;
      EXPECT_EQ(WT::o_col(l, e + 1), WT::o_col(l, e) + 1) << "lane " << l << " e " << e;
      EXPECT_EQ(WT::o_col(l, e) % 2, 0) << "lane " << l << " e " << e;
    }
  // Each lane's slots are distinct rows.
  for (int l = 0; l < lanes; ++l) {
    std::set<int> rows;
    for (int r = 0; r < WT::kRowSlots; ++r) rows.insert(WT::slot_row(l, r));
    EXPECT_EQ(static_cast<int>(rows.size()), WT::kRowSlots) << "lane " << l;
  }
}

// The lanes holding a row are exactly {l ^ m : m in the reduction's xor set} (what row_max /
// row_sum combine), and `leader(l)` picks one of them for each row.
template <class WT, class Leader>
void expect_row_sharing(int lanes, std::vector<int> xor_set, Leader leader) {
  for (int slot = 0; slot < WT::kRowSlots; ++slot) {
    std::vector<int> leaders(WT::kRows, 0);
    for (int l = 0; l < lanes; ++l) {
      std::set<int> same, expect;
      for (int o = 0; o < lanes; ++o)
        if (WT::slot_row(o, slot) == WT::slot_row(l, slot)) same.insert(o);
      for (int m : xor_set) expect.insert(l ^ m);
      EXPECT_EQ(same, expect) << "lane " << l << " slot " << slot;
      if (leader(l)) ++leaders[WT::slot_row(l, slot)];
    }
    int total = 0;
    for (int r = 0; r < WT::kRows; ++r) total += leaders[r];
    EXPECT_EQ(total, lanes / static_cast<int>(xor_set.size())) << "slot " << slot;
    for (int r = 0; r < WT::kRows; ++r) EXPECT_LE(leaders[r], 1) << "row " << r << " slot " << slot;
  }
}

template <int kD, int kMT, int kKN, hipattn::KvKind kKv = hipattn::KvKind::same16>
void sm90_maps() {
  SCOPED_TRACE("sm90 D=" + std::to_string(kD) + " MT=" + std::to_string(kMT) + " KN=" + std::to_string(kKN) +
               " kv " + std::to_string(static_cast<int>(kKv)));
  using WT = hipattn::sm90::WarpTile<true, kD, kMT, kKN, kD, kKv>;
  expect_warp_tile_maps<WT>(32, kD, kKN);
  // quad lanes share rows; the mainloop's LSE store uses lane % 4 == 0 as the row leader.
  expect_row_sharing<WT>(32, {0, 1, 2, 3}, [](int l) { return l % 4 == 0; });
}

template <class WT, int kD, int kKN>
void cdna_maps(const char* isa) {
  SCOPED_TRACE(std::string(isa) + " D=" + std::to_string(kD) + " MT=" + std::to_string(WT::kRowSlots) +
               " KN=" + std::to_string(kKN));
  expect_warp_tile_maps<WT>(64, kD, kKN);
  expect_row_sharing<WT>(64, {0, 16, 32, 48}, [](int l) { return WT::row_leader(l); });
}

TEST(WarpTileMaps, Sm90) {
  sm90_maps<64, 1, 16>();
  sm90_maps<96, 1, 16>();
  sm90_maps<96, 1, 64>();
  sm90_maps<128, 1, 64>();
  sm90_maps<128, 2, 32>();
  sm90_maps<256, 1, 32>();
  // fp8 K / V read at the fragment: O is held in the order of the converted V fragments (o_col)
  sm90_maps<64, 1, 16, hipattn::KvKind::e4m3fn>();
  sm90_maps<96, 1, 16, hipattn::KvKind::e4m3fnuz>();
  sm90_maps<128, 1, 16, hipattn::KvKind::e4m3fn>();
  sm90_maps<192, 1, 16, hipattn::KvKind::e4m3fn>();
  sm90_maps<256, 1, 16, hipattn::KvKind::e4m3fn>();
}

TEST(WarpTileMaps, Cdna3) {
  using hipattn::cdna3::WarpTile;
  cdna_maps<WarpTile<true, 64, 1, 16>, 64, 16>("cdna3");
  cdna_maps<WarpTile<false, 128, 1, 64>, 128, 64>("cdna3");
  cdna_maps<WarpTile<true, 128, 2, 32>, 128, 32>("cdna3");
  cdna_maps<WarpTile<true, 256, 1, 32>, 256, 32>("cdna3");
  cdna_maps<WarpTile<true, 192, 1, 48>, 192, 48>("cdna3");
  cdna_maps<WarpTile<true, 96, 1, 16>, 96, 16>("cdna3");
  cdna_maps<WarpTile<false, 96, 1, 32>, 96, 32>("cdna3");
}

TEST(WarpTileMaps, Cdna4) {
  using hipattn::cdna4::WarpTile;
  cdna_maps<WarpTile<true, 64, 1, 16>, 64, 16>("cdna4");
  cdna_maps<WarpTile<false, 128, 1, 64>, 128, 64>("cdna4");
  cdna_maps<WarpTile<true, 128, 2, 32>, 128, 32>("cdna4");
  cdna_maps<WarpTile<true, 256, 1, 32>, 256, 32>("cdna4");
  cdna_maps<WarpTile<true, 192, 1, 48>, 192, 48>("cdna4");
  cdna_maps<WarpTile<true, 96, 1, 16>, 96, 16>("cdna4");
  cdna_maps<WarpTile<false, 96, 1, 32>, 96, 32>("cdna4");
}

TEST(WarpTileMaps, KeyPermutationsArePermutations) {
  std::set<int> a, b;
  for (int m = 0; m < 16; ++m) {
    a.insert(hipattn::cdna3::Gfx942TileOps::key_perm(m));
    b.insert(hipattn::cdna4::Gfx950TileOps::key_perm(m));
  }
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(b.size(), 16u);
  EXPECT_EQ(*a.rbegin(), 15);
  EXPECT_EQ(*b.rbegin(), 15);
}

// ---- emulation of the CDNA warp tiles ----
using Regs = std::vector<std::vector<double>>;  // [lane][element]

// One MFMA of layout Lay over 64 lanes: c += A * B, operands as the lanes hold them.
template <class Lay>
void emulate_mfma(Regs& c, const Regs& a, const Regs& b) {
  std::vector<double> A(Lay::kM * Lay::kK, 0.0), B(Lay::kK * Lay::kN, 0.0);
  for (int l = 0; l < 64; ++l) {
    for (int e = 0; e < Lay::kAElems; ++e) A[Lay::a(l, e).row * Lay::kK + Lay::a(l, e).col] = a[l][e];
    for (int e = 0; e < Lay::kBElems; ++e) B[Lay::b(l, e).row * Lay::kN + Lay::b(l, e).col] = b[l][e];
  }
  for (int l = 0; l < 64; ++l)
    for (int e = 0; e < Lay::kCElems; ++e) {
      const auto p = Lay::c(l, e);
      double s = 0.0;
      for (int k = 0; k < Lay::kK; ++k) s += A[p.row * Lay::kK + k] * B[k * Lay::kN + p.col];
      c[l][e] += s;
    }
}

Regs regs(int n) { return Regs(64, std::vector<double>(static_cast<size_t>(n), 0.0)); }
Regs slice(const Regs& r, int first, int n) {
  Regs out = regs(n);
  for (int l = 0; l < 64; ++l)
    for (int i = 0; i < n; ++i) out[l][i] = r[l][first + i];
  return out;
}

// ds_read_b64_tr_b16 as documented in cdna4/atoms.hpp: lane 16 g + i receives, as element j, the
// (i % 4)-th of the 4 values lane 16 g + 4 j + i / 4 supplied.
Regs emulate_tr16(const Regs& supplied) {
  Regs out = regs(4);
  for (int l = 0; l < 64; ++l) {
    const int g = l / 16, i = l % 16;
    for (int j = 0; j < 4; ++j) out[l][j] = supplied[16 * g + 4 * j + i / 4][i % 4];
  }
  return out;
}

struct Problem {
  int rows, keys, d;
  std::vector<double> q, k, v, p;  // [rows][d], [keys][d], [keys][d], [rows][keys]
};

Problem make_problem(int rows, int keys, int d, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(-8, 8);  // small integers: every sum is exact
  Problem pr{rows, keys, d, {}, {}, {}, {}};
  auto fill = [&](std::vector<double>& x, size_t n) {
    x.resize(n);
    for (auto& y : x) y = dist(gen);
  };
  fill(pr.q, static_cast<size_t>(rows) * d);
  fill(pr.k, static_cast<size_t>(keys) * d);
  fill(pr.v, static_cast<size_t>(keys) * d);
  fill(pr.p, static_cast<size_t>(rows) * keys);
  return pr;
}

// The QK^T and PV operand traffic of cdna3::Mfma16WarpTile (the order of its qk / pv loops), with
// MFMAs and transposed reads emulated from the layout functions.
template <class WT, bool kGfx950>
void check_cdna_tile(uint32_t seed) {
  constexpr int kMT = WT::kRowSlots, kSN = WT::kSN, kON = WT::kON, kQK = WT::kQK;
  constexpr int kD = kON * 16, kKN = kSN * 16;
  const Problem pr = make_problem(WT::kRows, kKN, kD, seed);
  SCOPED_TRACE("seed " + std::to_string(seed) + " D=" + std::to_string(kD) + " MT=" + std::to_string(kMT) +
               " KN=" + std::to_string(kKN) + (kGfx950 ? " gfx950" : " gfx942"));
  using namespace hipattn;
  // ---- S^T = K Q^T ----
  Regs s = regs(WT::kSElems);
  for (int mt = 0; mt < kMT; ++mt)
    for (int nb = 0; nb < kSN; ++nb) {
      Regs acc = regs(4);
      for (int kc = 0; kc < kQK; ++kc) {
        Regs a = regs(8), b = regs(8);
        for (int l = 0; l < 64; ++l)
          for (int i = 0; i < 8; ++i) {
            const auto kr = WT::k_chunk(l, kc), qr = WT::q_chunk(l, kc);
            a[l][i] = pr.k[(nb * 16 + kr.row) * kD + kr.col * 8 + i];
            b[l][i] = pr.q[(mt * 16 + qr.row) * kD + qr.col * 8 + i];
          }
        if constexpr (kGfx950) {
          emulate_mfma<cdna4::Mfma16x16x32Layout>(acc, a, b);
        } else {
          emulate_mfma<cdna3::Mfma16x16x16Layout>(acc, slice(a, 0, 4), slice(b, 0, 4));
          emulate_mfma<cdna3::Mfma16x16x16Layout>(acc, slice(a, 4, 4), slice(b, 4, 4));
        }
      }
      for (int l = 0; l < 64; ++l)
        for (int i = 0; i < 4; ++i) s[l][(mt * kSN + nb) * 4 + i] = acc[l][i];
    }
  int bad = 0;
  for (int l = 0; l < 64; ++l)
    for (int e = 0; e < WT::kSElems; ++e) {
      const int row = WT::slot_row(l, WT::s_slot(e)), key = WT::s_col(l, e);
      double ref = 0.0;
      for (int d = 0; d < kD; ++d) ref += pr.q[row * kD + d] * pr.k[key * kD + d];
      if (s[l][e] != ref && bad++ < 5) ADD_FAILURE() << "S lane " << l << " e " << e << ": " << s[l][e] << " vs " << ref;
    }
  // ---- O^T += V^T P^T, P as the lanes hold it in the S layout ----
  Regs p = regs(WT::kSElems);
  for (int l = 0; l < 64; ++l)
    for (int e = 0; e < WT::kSElems; ++e) p[l][e] = pr.p[WT::slot_row(l, WT::s_slot(e)) * kKN + WT::s_col(l, e)];
  Regs o = regs(WT::kOElems);
  auto v_block = [&](int key0, int col0) {  // the V^T operand of one 16-key block
    Regs a = regs(4);
    if constexpr (kGfx950) {
      Regs supplied = regs(4);
      for (int l = 0; l < 64; ++l) {
        const auto ad = cdna4::Gfx950TileOps::v_tr_addr(l);
        for (int t = 0; t < 4; ++t) supplied[l][t] = pr.v[(key0 + ad.row) * kD + col0 + ad.col + t];
      }
      a = emulate_tr16(supplied);
    } else {
      for (int l = 0; l < 64; ++l)
        for (int j = 0; j < 4; ++j) {
          const auto el = cdna3::Gfx942TileOps::v_elem(l, j);
          a[l][j] = pr.v[(key0 + el.row) * kD + col0 + el.col];
        }
    }
    return a;
  };
  for (int mt = 0; mt < kMT; ++mt)
    for (int dn = 0; dn < kON; ++dn) {
      Regs acc = regs(4);
      if (kGfx950 && kKN % 32 == 0) {
        for (int kk = 0; kk < kKN / 32; ++kk) {
          Regs b = regs(8), a = regs(8);
          const Regs lo = v_block(kk * 32, dn * 16), hi = v_block(kk * 32 + 16, dn * 16);
          for (int l = 0; l < 64; ++l)
            for (int i = 0; i < 4; ++i) {
              b[l][i] = p[l][(mt * kSN + 2 * kk) * 4 + i];
              b[l][4 + i] = p[l][(mt * kSN + 2 * kk + 1) * 4 + i];
              a[l][i] = lo[l][i];
              a[l][4 + i] = hi[l][i];
            }
          emulate_mfma<cdna4::Mfma16x16x32Layout>(acc, a, b);
        }
      } else {
        for (int kb = 0; kb < kSN; ++kb) {
          Regs b = regs(4);
          for (int l = 0; l < 64; ++l)
            for (int i = 0; i < 4; ++i) b[l][i] = p[l][(mt * kSN + kb) * 4 + i];
          emulate_mfma<cdna3::Mfma16x16x16Layout>(acc, v_block(kb * 16, dn * 16), b);
        }
      }
      for (int l = 0; l < 64; ++l)
        for (int i = 0; i < 4; ++i) o[l][(mt * kON + dn) * 4 + i] = acc[l][i];
    }
  bad = 0;
  for (int l = 0; l < 64; ++l)
    for (int e = 0; e < WT::kOElems; ++e) {
      const int row = WT::slot_row(l, WT::o_slot(e)), col = WT::o_col(l, e);
      double ref = 0.0;
      for (int j = 0; j < kKN; ++j) ref += pr.p[row * kKN + j] * pr.v[j * kD + col];
      if (o[l][e] != ref && bad++ < 5) ADD_FAILURE() << "O lane " << l << " e " << e << ": " << o[l][e] << " vs " << ref;
    }
}

TEST(CdnaWarpTileEmulation, Gfx942ComputesQKAndPV) {
  check_cdna_tile<hipattn::cdna3::WarpTile<true, 64, 1, 16>, false>(1);
  check_cdna_tile<hipattn::cdna3::WarpTile<true, 128, 1, 64>, false>(2);
  check_cdna_tile<hipattn::cdna3::WarpTile<false, 128, 2, 32>, false>(3);
  check_cdna_tile<hipattn::cdna3::WarpTile<true, 256, 1, 32>, false>(4);
  check_cdna_tile<hipattn::cdna3::WarpTile<true, 96, 1, 32>, false>(9);  // 3 QK^T steps of 32 columns
}

TEST(CdnaWarpTileEmulation, Gfx950ComputesQKAndPV) {
  check_cdna_tile<hipattn::cdna4::WarpTile<true, 64, 1, 16>, true>(5);   // PV in 16-key steps
  check_cdna_tile<hipattn::cdna4::WarpTile<true, 128, 1, 64>, true>(6);  // PV in 32-key steps
  check_cdna_tile<hipattn::cdna4::WarpTile<false, 128, 2, 32>, true>(7);
  check_cdna_tile<hipattn::cdna4::WarpTile<true, 256, 1, 48>, true>(8);  // 48 keys: 16-key steps
  check_cdna_tile<hipattn::cdna4::WarpTile<false, 96, 1, 32>, true>(10);  // d = 96, 32-key PV steps
  check_cdna_tile<hipattn::cdna4::WarpTile<true, 96, 1, 16>, true>(11);   // d = 96, 16-key PV steps
}

// ---- LDS bank conflicts of the CDNA reads on the swizzled tile (32 banks x 4 bytes) ----
// ds_read_b128 is served 8 lanes (128 bytes) at a time: the 8 lanes must hit 8 different 16-byte
// bank groups. The gfx942 column gather (ds_read_u16) serves 64 lanes at once: distinct dwords must
// be in distinct banks. gfx950's ds_read_b64_tr_b16 (16 lanes x 8 bytes per 4 x 16 block): the 16
// lanes must hit 32 distinct banks.
template <class WT, int kD>
void check_banks(bool gfx950) {
  using L = hipattn::SwizzledTile<1, kD>;
  SCOPED_TRACE(std::string(gfx950 ? "gfx950" : "gfx942") + " D=" + std::to_string(kD));
  for (int base : {0, 16, 48})
    for (int kc = 0; kc < kD / 32; ++kc)
      for (int pass = 0; pass < 8; ++pass) {
        std::set<int> groups;
        for (int l = 8 * pass; l < 8 * pass + 8; ++l) {
          const auto kr = WT::k_chunk(l, kc);
          groups.insert((L::chunk_index(base + kr.row, kr.col) * 2 / 16) % 8);
        }
        EXPECT_EQ(groups.size(), 8u) << "K read: base " << base << " kc " << kc << " pass " << pass;
      }
  for (int base : {0, 16, 32})
    for (int col0 = 0; col0 < kD; col0 += 16) {
      if (gfx950) {
        for (int g = 0; g < 4; ++g) {
          std::set<int> banks;
          for (int l = 16 * g; l < 16 * g + 16; ++l) {
            const auto ad = hipattn::cdna4::Gfx950TileOps::v_tr_addr(l);
            const int byte = L::index(base + ad.row, col0 + ad.col) * 2;
            banks.insert((byte / 4) % 32);
            banks.insert((byte / 4 + 1) % 32);
          }
          EXPECT_EQ(banks.size(), 32u) << "V tr read: base " << base << " col0 " << col0 << " group " << g;
        }
      } else {
        for (int j = 0; j < 4; ++j) {
          std::set<int> dwords;
          std::vector<std::set<int>> per_bank(32);
          for (int l = 0; l < 64; ++l) {
            const auto el = hipattn::cdna3::Gfx942TileOps::v_elem(l, j);
            const int dw = L::index(base + el.row, col0 + el.col) * 2 / 4;
            per_bank[dw % 32].insert(dw);
          }
          for (int b = 0; b < 32; ++b)
            EXPECT_LE(per_bank[b].size(), 1u) << "V gather: base " << base << " col0 " << col0 << " j " << j << " bank " << b;
        }
      }
    }
}

TEST(CdnaWarpTileBanks, ReadsAreConflictFree) {
  check_banks<hipattn::cdna3::WarpTile<true, 64, 1, 64>, 64>(false);
  check_banks<hipattn::cdna3::WarpTile<true, 128, 1, 64>, 128>(false);
  check_banks<hipattn::cdna3::WarpTile<true, 256, 1, 64>, 256>(false);
  check_banks<hipattn::cdna3::WarpTile<true, 96, 1, 64>, 96>(false);  // the padded 128-element pitch
  check_banks<hipattn::cdna4::WarpTile<true, 64, 1, 64>, 64>(true);
  check_banks<hipattn::cdna4::WarpTile<true, 128, 1, 64>, 128>(true);
  check_banks<hipattn::cdna4::WarpTile<true, 256, 1, 64>, 256>(true);
  check_banks<hipattn::cdna4::WarpTile<true, 96, 1, 64>, 96>(true);
}

// ---- the swizzled LDS tile (tile/lds_layout.hpp) ----
// Every (row, col) of a [kRows, kD] tile maps to its own element inside [0, kRows * kPitch), each
// 16-byte chunk stays inside its row's pitch, and 8 consecutive rows read at one logical chunk (an
// ldmatrix / ds_read_b128 pass) touch 8 distinct 16-byte bank groups (128 bytes of 32 4-byte banks).
template <int kRows, int kD>
void check_swizzled_tile(int pitch) {
  using L = hipattn::SwizzledTile<kRows, kD>;
  SCOPED_TRACE("D=" + std::to_string(kD) + " rows=" + std::to_string(kRows));
  static_assert(L::kPitch % 64 == 0 && L::kPitch >= kD && L::kPitch < kD + 64);
  static_assert(L::kElems == kRows * L::kPitch && L::kBytes == 2 * L::kElems);
  EXPECT_EQ(L::kPitch, pitch);
  EXPECT_EQ(L::kChunksPerRow, kD / 8);
  std::vector<int> hits(static_cast<size_t>(L::kElems), 0);
  int outside = 0;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kD; ++c) {
      const int i = L::index(r, c);
      if (i < r * L::kPitch || i >= (r + 1) * L::kPitch) {  // outside its row (so maybe outside the tile)
        if (outside++ < 5) ADD_FAILURE() << "(" << r << ", " << c << ") -> " << i << " outside row " << r;
        continue;
      }
      ++hits[static_cast<size_t>(i)];
    }
  EXPECT_EQ(outside, 0);
  int twice = 0, used = 0;
  for (int h : hits) {
    twice += h > 1;
    used += h == 1;
  }
  EXPECT_EQ(twice, 0) << "elements hit more than once";
  EXPECT_EQ(used, kRows * kD);
  // A chunk's 8 elements are contiguous and 16-byte aligned.
  for (int r = 0; r < kRows; ++r)
    for (int ch = 0; ch < L::kChunksPerRow; ++ch) {
      EXPECT_EQ(L::chunk_index(r, ch) % 8, 0);
      for (int e = 0; e < 8; ++e) EXPECT_EQ(L::index(r, 8 * ch + e), L::chunk_index(r, ch) + e);
    }
  // 8 consecutive rows (any start) at one chunk: 8 distinct 16-byte bank groups.
  for (int r0 = 0; r0 + 8 <= kRows; ++r0)
    for (int ch = 0; ch < L::kChunksPerRow; ++ch) {
      std::set<int> groups;
      for (int r = r0; r < r0 + 8; ++r) groups.insert((L::chunk_index(r, ch) * 2 / 16) % 8);
      EXPECT_EQ(groups.size(), 8u) << "rows " << r0 << "..+8, chunk " << ch;
    }
}

TEST(SwizzledTile, EveryCellOnceInsideThePitchAndConflictFree) {
  check_swizzled_tile<64, 96>(128);  // padded: chunks 8..11 land on 4 of the slots 8..15
  check_swizzled_tile<16, 96>(128);
  check_swizzled_tile<32, 64>(64);
  check_swizzled_tile<32, 128>(128);
  check_swizzled_tile<32, 192>(192);
  check_swizzled_tile<32, 256>(256);
  // The padding of a 96-wide tile: per row exactly 4 of the chunk slots 8..15 are used, and which
  // ones depends on the row (c ^ (row & 7)).
  using L = hipattn::SwizzledTile<8, 96>;
  for (int r = 0; r < 8; ++r) {
    std::set<int> slots;
    for (int c = 0; c < L::kChunksPerRow; ++c) slots.insert((L::chunk_index(r, c) - r * L::kPitch) / 8);
    EXPECT_EQ(slots.size(), 12u) << "row " << r;
    EXPECT_EQ(*slots.rbegin() < 16, true) << "row " << r;
  }
}

}  // namespace
