// Contract tests of the sm_90 primitives on the GPU: MMA atoms, ldmatrix fragments, WarpTile, lane
// reductions, online softmax + merge, and the paged KV gather past 2 GiB. Each test skips itself,
// saying so, when no GPU is present. Inputs are seeded random, outputs are poisoned before a launch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/device_check.hpp"
#include "../common/gpu.hpp"
#include "../../testing/paged_problem.hpp"
#include "hipattn/arch/sm90/arch.hpp"
#include "hipattn/kernels/unified/kernels.hpp"
#include "hipattn/paged/paged_kv.hpp"
#include "hipattn/platform/runtime.hpp"
#include "hipattn/reference/merge.hpp"
#include "hipattn/tile/lds_layout.hpp"
#include "hipattn/tile/online_softmax.hpp"

namespace hipattn::testing {
namespace {

double from16(uint16_t b, bool bf16) { return bf16 ? bfloat16_t::from_bits(b).to_float() : half_t::from_bits(b).to_float(); }
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ================= 1. MMA atom contracts =================
enum class Atom { f16, bf16, e4m3 };

// One warp: gather A and B registers through the layout functions, C through c(), run the atom once.
template <Atom kA>
__global__ void atom_kernel(const void* A, const void* B, const float* C, float* D) {
  using L = std::conditional_t<kA == Atom::e4m3, sm90::Mma16832Fp8Layout, sm90::Mma16816Layout>;
  const int lane = threadIdx.x;
  uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  float c[4];
  if constexpr (kA == Atom::e4m3) {
    const uint8_t* a8 = static_cast<const uint8_t*>(A);
    const uint8_t* b8 = static_cast<const uint8_t*>(B);
    for (int e = 0; e < L::kAElems; ++e) { const auto p = L::a(lane, e); a[e / 4] |= uint32_t(a8[p.row * L::kK + p.col]) << (8 * (e % 4)); }
    for (int e = 0; e < L::kBElems; ++e) { const auto p = L::b(lane, e); b[e / 4] |= uint32_t(b8[p.row * L::kN + p.col]) << (8 * (e % 4)); }
  } else {
    const uint16_t* a16 = static_cast<const uint16_t*>(A);
    const uint16_t* b16 = static_cast<const uint16_t*>(B);
    for (int e = 0; e < L::kAElems; ++e) { const auto p = L::a(lane, e); a[e / 2] |= uint32_t(a16[p.row * L::kK + p.col]) << (16 * (e % 2)); }
    for (int e = 0; e < L::kBElems; ++e) { const auto p = L::b(lane, e); b[e / 2] |= uint32_t(b16[p.row * L::kN + p.col]) << (16 * (e % 2)); }
  }
  for (int e = 0; e < 4; ++e) { const auto p = L::c(lane, e); c[e] = C[p.row * 8 + p.col]; }
  if constexpr (kA == Atom::f16) sm90::mma_16816_f16(c, a, b);
  else if constexpr (kA == Atom::bf16) sm90::mma_16816_bf16(c, a, b);
  else sm90::mma_16832_e4m3(c, a, b);
  for (int e = 0; e < 4; ++e) { const auto p = L::c(lane, e); D[p.row * 8 + p.col] = c[e]; }
}

template <Atom kA>
void check_atom(bool small_ints, uint32_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + (small_ints ? " small integers" : " random reals"));
  constexpr bool kFp8 = kA == Atom::e4m3;
  constexpr int K = kFp8 ? 32 : 16, eb = kFp8 ? 1 : 2;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-4, 4), code(0, 255);
  std::normal_distribution<float> normal(0.f, 1.f);
  auto encode = [&](float x) -> uint16_t {
    if constexpr (kFp8) return fp8_e4m3fn_t::from_float(x).bits;
    else return float_to_16(x, kA == Atom::bf16);
  };
  auto decode = [&](uint16_t c) -> double {
    if constexpr (kFp8) return fp8_e4m3fn_t::from_bits(c).to_float();
    else return from16(c, kA == Atom::bf16);
  };
  auto draw = [&]() -> uint16_t {
    if (small_ints) return encode(float(small(rng)));
    if constexpr (kFp8) { int c; do c = code(rng); while ((c & 0x7F) == 0x7F); return uint16_t(c); }  // any finite code
    else return encode(normal(rng));
  };
  std::vector<uint16_t> a(16 * K), b(K * 8);
  std::vector<float> c(16 * 8);
  bool any_nonzero = false;
  for (auto& x : a) { x = draw(); any_nonzero |= decode(x) != 0; }
  for (auto& x : b) x = draw();
  for (auto& x : c) x = small_ints ? float(2 * small(rng)) : 4.f * normal(rng);
  ASSERT_TRUE(any_nonzero);
  std::vector<uint8_t> ab(a.size() * eb), bb(b.size() * eb);
  for (size_t i = 0; i < a.size(); ++i) std::memcpy(&ab[i * eb], &a[i], eb);  // little endian: low byte(s)
  for (size_t i = 0; i < b.size(); ++i) std::memcpy(&bb[i * eb], &b[i], eb);
  DeviceBuffer da = DeviceBuffer::from(ab), db = DeviceBuffer::from(bb), dc = DeviceBuffer::from(c);
  DeviceBuffer dd = poisoned(16 * 8 * sizeof(float));
  LAUNCH_CHECKED(atom_kernel<kA><<<1, 32>>>(da.ptr, db.ptr, dc.as<float>(), dd.as<float>()));
  const std::vector<float> d = download<float>(dd);
  const double tol = 1e-5;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      double ref = c[i * 8 + j], mag = std::fabs(ref);
      for (int k = 0; k < K; ++k) {
        const double p = decode(a[i * K + k]) * decode(b[k * 8 + j]);
        ref += p;
        mag += std::fabs(p);
      }
      const double got = d[i * 8 + j];
      if (small_ints) EXPECT_EQ(got, ref) << "D[" << i << "][" << j << "]";
      else EXPECT_LE(std::fabs(got - ref), tol * mag) << "D[" << i << "][" << j << "] = " << got << ", want " << ref;
    }
}

TEST(Sm90Atoms, Mma16816F16) { REQUIRE_GPU(); check_atom<Atom::f16>(true, 11); check_atom<Atom::f16>(false, 12); }
TEST(Sm90Atoms, Mma16816Bf16) { REQUIRE_GPU(); check_atom<Atom::bf16>(true, 21); check_atom<Atom::bf16>(false, 22); }
TEST(Sm90Atoms, Mma16832E4m3) { REQUIRE_GPU(); check_atom<Atom::e4m3>(true, 31); check_atom<Atom::e4m3>(false, 32); }

// ================= 2. ldmatrix / ldmatrix.trans fragments from a swizzled tile =================
// One 32 x kD tile of random codes; Q A-fragments through WarpTile::load_q, the K B-fragments of qk
// (ldmatrix) and the V B-fragments of pv (ldmatrix.trans) addressed exactly as warp_tile.hpp does.
template <int kD, int kMT>
__global__ void ldmatrix_kernel(const uint16_t* m, uint32_t* qa, uint32_t* kb, uint32_t* vb) {
  using T = SwizzledTile<32, kD>;
  using L = SwizzledTile<1, kD>;
  using WT = sm90::WarpTile<false, kD, kMT, 32>;
  __shared__ alignas(16) uint16_t lds[T::kElems];
  const int lane = threadIdx.x, mi = lane / 8;
  for (int i = lane; i < 32 * kD; i += 32) lds[T::index(i / kD, i % kD)] = m[i];
  __syncwarp();
  typename WT::QFrag q;
  WT::load_q(q, lds, 32 - 16 * kMT);
  for (int mt = 0; mt < kMT; ++mt)
    for (int kk = 0; kk < WT::kQK; ++kk)
      for (int r = 0; r < 4; ++r) qa[((mt * WT::kQK + kk) * 4 + r) * 32 + lane] = q.r[mt][kk][r];
  for (int kk = 0; kk < kD / 16; ++kk)
    for (int np = 0; np < 2; ++np) {
      uint32_t b[4];
      sm90::ldmatrix_x4(b, lds + L::chunk_index((np * 2 + mi / 2) * 8 + lane % 8, kk * 2 + mi % 2));
      for (int r = 0; r < 4; ++r) kb[((kk * 2 + np) * 4 + r) * 32 + lane] = b[r];
    }
  for (int kk = 0; kk < 2; ++kk)
    for (int dp = 0; dp < kD / 16; ++dp) {
      uint32_t b[4];
      sm90::ldmatrix_x4_trans(b, lds + L::chunk_index(kk * 16 + (mi % 2) * 8 + lane % 8, dp * 2 + mi / 2));
      for (int r = 0; r < 4; ++r) vb[((kk * (kD / 16) + dp) * 4 + r) * 32 + lane] = b[r];
    }
}

template <int kD, int kMT>
void check_ldmatrix(uint32_t seed) {
  SCOPED_TRACE("kD=" + std::to_string(kD) + " kMT=" + std::to_string(kMT) + " seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::vector<uint16_t> m(32 * kD);
  for (auto& x : m) x = uint16_t(rng() | 1u);  // never zero
  constexpr int kQ = kMT * (kD / 16) * 4 * 32, kK = (kD / 16) * 2 * 4 * 32, kV = 2 * (kD / 16) * 4 * 32;
  DeviceBuffer dm = DeviceBuffer::from(m), dq = poisoned(kQ * 4), dk = poisoned(kK * 4), dv = poisoned(kV * 4);
  LAUNCH_CHECKED(ldmatrix_kernel<kD, kMT><<<1, 32>>>(dm.as<uint16_t>(), dq.as<uint32_t>(), dk.as<uint32_t>(), dv.as<uint32_t>()));
  const auto q = download<uint32_t>(dq), k = download<uint32_t>(dk), v = download<uint32_t>(dv);
  auto half_of = [](uint32_t r, int h) { return uint16_t(r >> (16 * h)); };
  using Ly = sm90::Mma16816Layout;
  int bad = 0;
  const int row0 = 32 - 16 * kMT;
  for (int lane = 0; lane < 32; ++lane) {
    for (int mt = 0; mt < kMT; ++mt)
      for (int kk = 0; kk < kD / 16; ++kk)
        for (int e = 0; e < 8; ++e) {
          const auto p = Ly::a(lane, e);
          const uint16_t got = half_of(q[((mt * (kD / 16) + kk) * 4 + e / 2) * 32 + lane], e % 2);
          const uint16_t want = m[(row0 + mt * 16 + p.row) * kD + kk * 16 + p.col];
          if (got != want && bad++ < 5) ADD_FAILURE() << "Q A-frag lane " << lane << " mt " << mt << " kk " << kk << " e " << e;
        }
    for (int kk = 0; kk < kD / 16; ++kk)  // K as B (k = d, n = key)
      for (int np = 0; np < 2; ++np)
        for (int j = 0; j < 2; ++j)
          for (int e = 0; e < 4; ++e) {
            const auto p = Ly::b(lane, e);
            const uint16_t got = half_of(k[((kk * 2 + np) * 4 + j * 2 + e / 2) * 32 + lane], e % 2);
            const uint16_t want = m[((np * 2 + j) * 8 + p.col) * kD + kk * 16 + p.row];
            if (got != want && bad++ < 5) ADD_FAILURE() << "K B-frag lane " << lane << " kk " << kk << " np " << np << " e " << e;
          }
    for (int kk = 0; kk < 2; ++kk)  // V as B of PV (k = key, n = d)
      for (int dp = 0; dp < kD / 16; ++dp)
        for (int j = 0; j < 2; ++j)
          for (int e = 0; e < 4; ++e) {
            const auto p = Ly::b(lane, e);
            const uint16_t got = half_of(v[((kk * (kD / 16) + dp) * 4 + j * 2 + e / 2) * 32 + lane], e % 2);
            const uint16_t want = m[(kk * 16 + p.row) * kD + (dp * 2 + j) * 8 + p.col];
            if (got != want && bad++ < 5) ADD_FAILURE() << "V B-frag (trans) lane " << lane << " kk " << kk << " dp " << dp << " e " << e;
          }
  }
  EXPECT_EQ(bad, 0);
}

TEST(Sm90Ldmatrix, FragmentsMatchLayouts) {
  REQUIRE_GPU();
  check_ldmatrix<64, 1>(41);
  check_ldmatrix<64, 2>(42);
  check_ldmatrix<128, 1>(43);
  check_ldmatrix<128, 2>(44);
  check_ldmatrix<96, 1>(45);  // 12 chunks a row in a 128-element pitch
  check_ldmatrix<96, 2>(46);
}

// ================= 3. WarpTile end to end =================
// One warp: S = Q K^T (qk and qk_lds) and O = O0 + P V (pv) for keys [16, 16 + kKN) of LDS tiles.
template <bool kBf16, int kD, int kMT, int kKN>
__global__ void warp_tile_kernel(const uint16_t* q, const uint16_t* k, const uint16_t* v, const float* p,
                                 const float* o0, float* s_out, float* s2_out, float* o_out) {
  using WT = sm90::WarpTile<kBf16, kD, kMT, kKN>;
  using T = SwizzledTile<1, kD>;
  constexpr int kKeys = kKN + 16;
  extern __shared__ uint4 smem_u4[];
  uint16_t* lq = reinterpret_cast<uint16_t*>(smem_u4);
  uint16_t* lk = lq + WT::kRows * T::kPitch;  // rows of the tile's pitch (d = 96: 128, padded)
  uint16_t* lv = lk + kKeys * T::kPitch;
  const int lane = threadIdx.x;
  for (int i = lane; i < WT::kRows * kD; i += 32) lq[T::index(i / kD, i % kD)] = q[i];
  for (int i = lane; i < kKeys * kD; i += 32) { lk[T::index(i / kD, i % kD)] = k[i]; lv[T::index(i / kD, i % kD)] = v[i]; }
  __syncwarp();
  typename WT::QFrag qf;
  typename WT::SFrag s, s2, pf;
  typename WT::OFrag of;
  WT::load_q(qf, lq, 0);
  WT::qk(s, qf, lk, 16);
  WT::qk_lds(s2, lq, 0, lk, 16);
  for (int e = 0; e < WT::kSElems; ++e) {
    const int i = WT::slot_row(lane, WT::s_slot(e)) * kKN + WT::s_col(lane, e);
    s_out[i] = s.r[e];
    s2_out[i] = s2.r[e];
    pf.r[e] = p[i];
  }
  for (int e = 0; e < WT::kOElems; ++e) of.r[e] = o0[WT::slot_row(lane, WT::o_slot(e)) * kD + WT::o_col(lane, e)];
  WT::pv(of, pf, lv, 16);
  for (int e = 0; e < WT::kOElems; ++e) o_out[WT::slot_row(lane, WT::o_slot(e)) * kD + WT::o_col(lane, e)] = of.r[e];
}

template <bool kBf16, int kD, int kMT, int kKN>
void check_warp_tile(uint32_t seed) {
  SCOPED_TRACE(std::string(kBf16 ? "bf16" : "f16") + " kD=" + std::to_string(kD) + " kMT=" + std::to_string(kMT) +
               " kKN=" + std::to_string(kKN) + " seed " + std::to_string(seed));
  constexpr int R = 16 * kMT, KK = kKN + 16;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  std::vector<uint16_t> q(R * kD), k(KK * kD), v(KK * kD);
  std::vector<float> p(R * kKN), o0(R * kD);
  for (auto& x : q) x = float_to_16(normal(rng), kBf16);
  for (auto& x : k) x = float_to_16(normal(rng), kBf16);
  for (auto& x : v) x = float_to_16(normal(rng), kBf16);
  for (auto& x : p) x = uni(rng);
  for (auto& x : o0) x = normal(rng);
  DeviceBuffer dq = DeviceBuffer::from(q), dk = DeviceBuffer::from(k), dv = DeviceBuffer::from(v);
  DeviceBuffer dp = DeviceBuffer::from(p), do0 = DeviceBuffer::from(o0);
  DeviceBuffer ds = poisoned(R * kKN * 4), ds2 = poisoned(R * kKN * 4), dout = poisoned(R * kD * 4);
  const int smem = (R + 2 * KK) * SwizzledTile<1, kD>::kPitch * 2;
  auto kern = warp_tile_kernel<kBf16, kD, kMT, kKN>;
  HIPATTN_CHECK(rt::set_max_dynamic_shared(kern, smem));
  LAUNCH_CHECKED(kern<<<1, 32, smem>>>(dq.as<uint16_t>(), dk.as<uint16_t>(), dv.as<uint16_t>(), dp.as<float>(),
                                       do0.as<float>(), ds.as<float>(), ds2.as<float>(), dout.as<float>()));
  const auto s = download<float>(ds), s2 = download<float>(ds2), o = download<float>(dout);
  const double rtol = kBf16 ? 1e-2 : 1e-3;
  int bad = 0;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < kKN; ++j) {
      double ref = 0, mag = 0;
      for (int d = 0; d < kD; ++d) {
        const double t = from16(q[i * kD + d], kBf16) * from16(k[(16 + j) * kD + d], kBf16);
        ref += t;
        mag += std::fabs(t);
      }
      for (const auto* got : {&s, &s2})
        if (!(std::fabs((*got)[i * kKN + j] - ref) <= rtol * mag) && bad++ < 5)
          ADD_FAILURE() << (got == &s ? "qk" : "qk_lds") << " S[" << i << "][" << j << "] = " << (*got)[i * kKN + j] << ", want " << ref;
    }
  for (int i = 0; i < R; ++i)
    for (int d = 0; d < kD; ++d) {
      double ref = o0[i * kD + d], mag = std::fabs(ref);
      for (int j = 0; j < kKN; ++j) {
        const double t = from16(float_to_16(p[i * kKN + j], kBf16), kBf16) * from16(v[(16 + j) * kD + d], kBf16);
        ref += t;
        mag += std::fabs(t);
      }
      if (!(std::fabs(o[i * kD + d] - ref) <= rtol * mag) && bad++ < 5)
        ADD_FAILURE() << "pv O[" << i << "][" << d << "] = " << o[i * kD + d] << ", want " << ref;
    }
  EXPECT_EQ(bad, 0);
}

template <bool kBf16, int kD>
void check_warp_tile_mt_kn(uint32_t seed) {
  check_warp_tile<kBf16, kD, 1, 16>(seed);
  check_warp_tile<kBf16, kD, 1, 64>(seed + 1);
  check_warp_tile<kBf16, kD, 2, 16>(seed + 2);
  check_warp_tile<kBf16, kD, 2, 64>(seed + 3);
}
TEST(Sm90WarpTile, QkAndPvMatchHostMatmul) {
  REQUIRE_GPU();
  check_warp_tile_mt_kn<false, 64>(100);
  check_warp_tile_mt_kn<false, 128>(110);
  check_warp_tile_mt_kn<true, 64>(120);
  check_warp_tile_mt_kn<true, 128>(130);
  check_warp_tile_mt_kn<true, 96>(140);  // 6 k16 steps, 12 n8 tiles of O, padded LDS rows
  check_warp_tile_mt_kn<false, 96>(150);
}

// ================= 4. lane reductions =================
__global__ void reduce_kernel(const float* in, float* out, int n) {
  using WT = sm90::WarpTile<false, 64, 1, 16>;
  const int i = blockIdx.x * 32 + threadIdx.x;
  const float v = in[i];
  out[0 * n + i] = sm90::xor_reduce_max<3>(v);
  out[1 * n + i] = sm90::xor_reduce_sum<3>(v);
  out[2 * n + i] = WT::row_max(v);
  out[3 * n + i] = WT::row_sum(v);
  out[4 * n + i] = sm90::xor_reduce_max<31>(v);
  out[5 * n + i] = sm90::xor_reduce_sum<31>(v);
}

// Host butterfly in float, the same order as the device: v = v + v[lane ^ m] for m = 1, 2, 4, ...
std::vector<float> host_butterfly(const float* w, int mask, bool max) {
  std::vector<float> v(w, w + 32);
  for (int m = 1; m <= mask; m <<= 1) {
    if (!(mask & m)) continue;
    std::vector<float> nv(32);
    for (int l = 0; l < 32; ++l) nv[l] = max ? std::max(v[l], v[l ^ m]) : v[l] + v[l ^ m];
    v = nv;
  }
  return v;
}

TEST(Sm90Lanes, XorReductionsOverQuadsAndWarp) {
  REQUIRE_GPU();
  const uint32_t seed = 51;
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int kWarps = 64, n = 32 * kWarps;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 10.f);
  std::vector<float> in(n);
  for (auto& x : in) x = normal(rng);
  DeviceBuffer din = DeviceBuffer::from(in), dout = poisoned(6 * n * sizeof(float));
  LAUNCH_CHECKED(reduce_kernel<<<kWarps, 32>>>(din.as<float>(), dout.as<float>(), n));
  const auto out = download<float>(dout);
  int bad = 0;
  const char* names[6] = {"xor_reduce_max<3>", "xor_reduce_sum<3>", "row_max", "row_sum", "xor_reduce_max<31>", "xor_reduce_sum<31>"};
  for (int w = 0; w < kWarps; ++w) {
    const float* x = &in[w * 32];
    const auto qmax = host_butterfly(x, 3, true), qsum = host_butterfly(x, 3, false);
    const auto wmax = host_butterfly(x, 31, true), wsum = host_butterfly(x, 31, false);
    for (int l = 0; l < 32; ++l) {
      const int g = (l / 4) * 4;  // independent checks: the quad's max and (double) sum
      const float qm = std::max({x[g], x[g + 1], x[g + 2], x[g + 3]});
      const double qs = double(x[g]) + x[g + 1] + x[g + 2] + x[g + 3];
      ASSERT_EQ(qmax[l], qm);
      ASSERT_NEAR(qsum[l], qs, 1e-5 * (std::fabs(x[g]) + std::fabs(x[g + 1]) + std::fabs(x[g + 2]) + std::fabs(x[g + 3])));
      const float want[6] = {qm, qsum[l], qm, qsum[l], wmax[l], wsum[l]};
      for (int r = 0; r < 6; ++r)
        if (out[r * n + w * 32 + l] != want[r] && bad++ < 5)
          ADD_FAILURE() << names[r] << " warp " << w << " lane " << l << ": " << out[r * n + w * 32 + l] << ", want " << want[r];
    }
    EXPECT_EQ(wmax[0], *std::max_element(x, x + 32));
  }
  EXPECT_EQ(bad, 0);
}

// ================= 5. online softmax + merge =================
constexpr int kSmN = 64, kSmChunk = 16;
// Each thread streams one row of scores (log2 units) and values in chunks through SoftmaxStat::combine,
// then finalize_with_sink; writes factor, lse (log2 units) and the normalized output.
__global__ void softmax_kernel(const float* x, const float* val, const float* sink2, float* factor, float* lse2,
                               float* out, int rows) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  auto ex2 = [](float t) { return sm90::fast_exp2(t); };
  SoftmaxStat st;
  float o = 0.f;
  for (int c = 0; c < kSmN; c += kSmChunk) {
    const float* xc = x + r * kSmN + c;
    float mc = kNegInf, lc = 0.f, oc = 0.f;
    for (int j = 0; j < kSmChunk; ++j) mc = fmaxf(mc, xc[j]);
    for (int j = 0; j < kSmChunk; ++j) {
      const float pj = sm90::fast_exp2(xc[j] - safe_max(mc));
      lc += pj;
      oc += pj * val[r * kSmN + c + j];
    }
    float fs, fo;
    st.combine(mc, lc, fs, fo, ex2);
    o = o * fs + oc * fo;
  }
  float l2;
  const float f = finalize_with_sink(st.m, st.l, sink2[r], l2, ex2, [](float t) { return __log2f(t); });
  factor[r] = f;
  lse2[r] = l2;
  out[r] = o * f;
}

TEST(Sm90Softmax, OnlineCombineFinalizeAndMerge) {
  REQUIRE_GPU();
  const uint32_t seed = 61;
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int rows = 512;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> score(-20.f, 20.f), u01(0.f, 1.f), uv(-1.f, 1.f), us(-10.f, 25.f);
  std::vector<float> x(rows * kSmN), val(rows * kSmN), sink2(rows);
  for (int r = 0; r < rows; ++r) {
    const bool empty = r % 8 == 3 || r % 8 == 4;  // with (r % 2 == 1) and without a sink
    sink2[r] = r % 2 ? us(rng) : kNegInf;
    for (int c = 0; c < kSmN / kSmChunk; ++c) {
      const bool dead = empty || u01(rng) < 0.25f;  // fully -inf chunks
      for (int j = 0; j < kSmChunk; ++j) {
        const int i = r * kSmN + c * kSmChunk + j;
        x[i] = dead || u01(rng) < 0.2f ? kNegInf : score(rng);
        val[i] = uv(rng);
      }
    }
  }
  DeviceBuffer dx = DeviceBuffer::from(x), dval = DeviceBuffer::from(val), dsink = DeviceBuffer::from(sink2);
  DeviceBuffer df = poisoned(rows * 4), dl = poisoned(rows * 4), dout = poisoned(rows * 4);
  LAUNCH_CHECKED(softmax_kernel<<<rows / 128, 128>>>(dx.as<float>(), dval.as<float>(), dsink.as<float>(), df.as<float>(),
                                                      dl.as<float>(), dout.as<float>(), rows));
  const auto f = download<float>(df), l2 = download<float>(dl), out = download<float>(dout);
  const double ln2 = std::log(2.0), ninf = -std::numeric_limits<double>::infinity();
  int bad = 0, empties = 0;
  auto close = [](double got, double want, double atol, double rtol) { return std::fabs(got - want) <= atol + rtol * std::fabs(want); };
  for (int r = 0; r < rows; ++r) {
    const bool has_sink = sink2[r] != kNegInf;
    // float64 direct: M = max score, M2 = max(M, sink), denominator and output relative to 2^M2.
    double M = ninf;
    for (int j = 0; j < kSmN; ++j) M = std::max(M, double(x[r * kSmN + j]));
    const double M2 = std::max(M, has_sink ? double(sink2[r]) : ninf);
    std::vector<reference::PartialState> parts;
    double lse_direct = ninf, f_ref = 0, o_ref = 0;
    if (M2 != ninf) {
      double den = has_sink ? std::exp2(sink2[r] - M2) : 0, num = 0;
      for (int j = 0; j < kSmN; ++j) {
        const double p = std::exp2(double(x[r * kSmN + j]) - M2);
        den += p;
        num += p * val[r * kSmN + j];
      }
      lse_direct = (M2 + std::log2(den)) * ln2;
      f_ref = M == ninf ? 0.0 : std::exp2(M - M2) / den;
      o_ref = num / den;
    }
    for (int c = 0; c < kSmN; c += kSmChunk) {  // partial states of the same chunks, natural log
      double mc = ninf, lc = 0, oc = 0;
      for (int j = 0; j < kSmChunk; ++j) mc = std::max(mc, double(x[r * kSmN + c + j]));
      if (mc == ninf) { parts.push_back({{0.0}, ninf}); continue; }
      for (int j = 0; j < kSmChunk; ++j) {
        const double p = std::exp(double(x[r * kSmN + c + j]) * ln2 - mc * ln2);
        lc += p;
        oc += p * val[r * kSmN + c + j];
      }
      parts.push_back({{oc / lc}, mc * ln2 + std::log(lc)});
    }
    std::vector<double> o_merge;
    double lse_merge;
    reference::merge_states(parts, o_merge, lse_merge, has_sink ? std::optional<double>(double(sink2[r]) * ln2) : std::nullopt);
    const double got_lse = double(l2[r]) * ln2;
    std::string why;
    if (M == ninf) {
      ++empties;
      if (f[r] != 0.f || out[r] != 0.f) why = "empty row: factor/out not 0";
      if (!has_sink && l2[r] != kNegInf) why += " empty row: lse not -inf";
      if (has_sink && !close(got_lse, double(sink2[r]) * ln2, 1e-4, 1e-4)) why += " empty row with sink: lse != sink";
    } else {
      if (!close(lse_direct, lse_merge, 1e-9, 1e-9) || !close(o_ref, o_merge[0], 1e-9, 1e-9)) why = "host direct != merge_states";
      if (!close(got_lse, lse_direct, 1e-4, 1e-4) || !close(got_lse, lse_merge, 1e-4, 1e-4)) why += " lse";
      if (!close(f[r], f_ref, 0, 1e-4)) why += " factor";
      if (!close(out[r], o_merge[0], 1e-4, 1e-4)) why += " out";
    }
    if (!why.empty() && bad++ < 5)
      ADD_FAILURE() << "row " << r << (has_sink ? " (sink)" : "") << ":" << why << "  lse " << got_lse << " want "
                    << lse_merge << ", factor " << f[r] << " want " << f_ref << ", out " << out[r] << " want " << o_ref;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GE(empties, rows / 4);
}

// ================= 6. paged KV gather past 2 GiB =================
constexpr int kGD = 128, kGBN = 64, kGThreads = 128, kGHeads = 2;
constexpr int32_t kPadBlock = 0x3fffffff;

// The paged KV loader (kernels/common/loaders/) for one (sequence, kv head, tile of kGBN keys): block-table gather with
// cp.async into LDS (zero-fill past the context), fp8 dequantization, then the tile as floats.
template <bool kFp8, int kPage>
__global__ void gather_kernel(PagedKvView<int64_t, kPage> kv, const int32_t* seq_lens, const float* tensor_scale,
                              bool per_token_head, int kmax, float* out) {
  using Arch = sm90::Arch;
  using Tile = SwizzledTile<1, kGD>;
  __shared__ alignas(16) uint8_t stage[kFp8 ? kGBN * kGD : 16];
  __shared__ alignas(16) uint16_t tile16[kGBN * kGD];
  __shared__ float ks[kGBN];
  const int seq = blockIdx.x, kvh = blockIdx.y, t = blockIdx.z, tid = threadIdx.x;
  const int32_t len = seq_lens[seq];
  constexpr int kChunkElems = kFp8 ? 16 : 8, kCPR = kGD / kChunkElems;
  constexpr int kRowStep = kGThreads / kCPR, kRowIters = kGBN / kRowStep;
  const int ld_c = tid % kCPR, ld_r0 = tid / kCPR;
  for (int i = 0; i < kRowIters; ++i) {
    const int r = ld_r0 + i * kRowStep;
    const int32_t j = t * kGBN + r;
    int32_t page = 0, slot = 0, blk = -1;
    if (j < len) {
      kv.locate(j, page, slot);
      blk = kv.physical_block(seq, page);
    }
    const bool valid = blk >= 0;
    const int64_t ko = valid ? kv.k_offset(blk, slot, kvh) : int64_t(0);
    if constexpr (kFp8) Arch::copy_16(stage + r * kGD + ld_c * 16, static_cast<const uint8_t*>(kv.k) + ko + ld_c * 16, valid);
    else Arch::copy_16(tile16 + Tile::chunk_index(r, ld_c), static_cast<const uint16_t*>(kv.k) + ko + ld_c * 8, valid);
    if (per_token_head && ld_c == 0) {
      const int64_t so = valid ? kv.scale_offset(blk, slot, kvh) : int64_t(0);
      Arch::copy_4(ks + r, kv.k_scale + so, valid);
    }
  }
  Arch::copy_commit();
  Arch::copy_wait<0>();
  Arch::sync();
  if constexpr (kFp8) {
    for (int idx = tid; idx < kGBN * (kGD / 16); idx += kGThreads) {
      const int r = idx / (kGD / 16), c = idx % (kGD / 16);
      detail::dequant_chunk16<KvKind::e4m3fn, false, Arch>(stage + r * kGD + c * 16, tile16 + Tile::chunk_index(r, 2 * c),
                                                           tile16 + Tile::chunk_index(r, 2 * c + 1));
    }
    Arch::sync();
  }
  const float ts = (kFp8 && !per_token_head) ? *tensor_scale : 1.f;
  for (int idx = tid; idx < kGBN * kGD; idx += kGThreads) {
    const int r = idx / kGD, d = idx % kGD;
    const uint16_t u = tile16[Tile::index(r, d)];
    float x = kFp8 ? half_t::from_bits(u).to_float() : bfloat16_t::from_bits(u).to_float();
    if (kFp8) x *= per_token_head ? ks[r] : ts;
    out[((int64_t(seq) * gridDim.y + kvh) * kmax + t * kGBN + r) * kGD + d] = x;
  }
}

template <bool kFp8, int kPage>
void check_gather(int page_size, bool per_token_head, int64_t cache_bytes, uint32_t seed) {
  SCOPED_TRACE(std::string(kFp8 ? "fp8 e4m3fn" : "bf16") + (kFp8 ? (per_token_head ? " per-(token, head)" : " per-tensor") : "") +
               " kPage=" + std::to_string(kPage) + " page " + std::to_string(page_size) + " cache " +
               std::to_string(cache_bytes >> 20) + " MiB seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::vector<int32_t> lens = {777, 1, 130, 0};
  const int nseq = int(lens.size()), bs = page_size, eb = kFp8 ? 1 : 2;
  const int64_t stride_slot = kGHeads * kGD, stride_block = bs * stride_slot, block_bytes = stride_block * eb;
  const int64_t num_blocks = cache_bytes / block_bytes;
  const int64_t first = (int64_t(1) << 31) / block_bytes + 1;  // every used block starts past 2 GiB
  int max_pages = 0, used = 0;
  for (int32_t l : lens) { max_pages = std::max(max_pages, (l + bs - 1) / bs); used += (l + bs - 1) / bs; }
  const int bt_stride = max_pages + 3;
  std::vector<int32_t> bt(size_t(nseq) * bt_stride, kPadBlock);
  std::set<int64_t> taken;
  std::uniform_int_distribution<int64_t> pick(first, num_blocks - 1);
  for (int s = 0; s < nseq; ++s)
    for (int pg = 0; pg < (lens[s] + bs - 1) / bs; ++pg) {
      int64_t b;
      do b = pick(rng); while (!taken.insert(b).second);
      bt[size_t(s) * bt_stride + pg] = int32_t(b);
    }
  ASSERT_EQ(int(taken.size()), used);
  ASSERT_GT(int64_t(*taken.begin()) * block_bytes, int64_t(1) << 31);
  const int kmax = ((*std::max_element(lens.begin(), lens.end()) + kGBN - 1) / kGBN) * kGBN;
  DeviceBuffer cache = poisoned(size_t(num_blocks * block_bytes));  // NaN everywhere not owned
  DeviceBuffer scales = poisoned(per_token_head ? size_t(num_blocks * bs * kGHeads * 4) : 4);
  std::uniform_int_distribution<int> code(0, 255);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_real_distribution<float> uscale(0.25f, 4.f);
  const float tscale = uscale(rng);
  std::vector<float> want(size_t(nseq) * kGHeads * kmax * kGD, 0.f);
  for (int s = 0; s < nseq; ++s)
    for (int pg = 0; pg < (lens[s] + bs - 1) / bs; ++pg) {
      const int64_t blk = bt[size_t(s) * bt_stride + pg];
      std::vector<uint8_t> img(block_bytes, 0xFF);
      std::vector<float> simg(size_t(bs) * kGHeads, std::numeric_limits<float>::quiet_NaN());
      for (int sl = 0; sl < bs && pg * bs + sl < lens[s]; ++sl)
        for (int h = 0; h < kGHeads; ++h) {
          const float sc = kFp8 ? (per_token_head ? uscale(rng) : tscale) : 1.f;
          simg[sl * kGHeads + h] = sc;
          for (int d = 0; d < kGD; ++d) {
            const int64_t e = sl * stride_slot + h * kGD + d;
            float value;
            if constexpr (kFp8) {
              int c;
              do c = code(rng); while ((c & 0x7F) == 0x7F || c == 0);
              img[e] = uint8_t(c);
              value = fp8_e4m3fn_t::from_bits(c).to_float() * sc;
            } else {
              const uint16_t b = float_to_16(normal(rng), true);
              std::memcpy(&img[e * 2], &b, 2);
              value = bfloat16_t::from_bits(b).to_float();
            }
            want[((size_t(s) * kGHeads + h) * kmax + pg * bs + sl) * kGD + d] = value;
          }
        }
      HIPATTN_CHECK(rt::memcpy_h2d(static_cast<uint8_t*>(cache.ptr) + blk * block_bytes, img.data(), img.size()));
      if (per_token_head)
        HIPATTN_CHECK(rt::memcpy_h2d(scales.as<float>() + blk * bs * kGHeads, simg.data(), simg.size() * 4));
    }
  DeviceBuffer dbt = DeviceBuffer::from(bt), dlens = DeviceBuffer::from(lens);
  DeviceBuffer dts = DeviceBuffer::from(std::vector<float>{tscale});
  DeviceBuffer dout = poisoned(want.size() * 4);
  PagedKvView<int64_t, kPage> kv;
  kv.k = cache.ptr;
  kv.k_stride_block = int32_t(stride_block);
  kv.k_stride_slot = int32_t(stride_slot);
  kv.k_stride_head = kGD;
  kv.k_scale = per_token_head ? scales.as<float>() : nullptr;
  kv.s_stride_block = bs * kGHeads;
  kv.s_stride_slot = kGHeads;
  kv.s_stride_head = 1;
  kv.block_table = dbt.as<int32_t>();
  kv.block_table_stride = bt_stride;
  kv.page_size = bs;
  kv.page_div = FastDivmod(uint32_t(bs));
  LAUNCH_CHECKED(gather_kernel<kFp8, kPage><<<dim3(nseq, kGHeads, kmax / kGBN), kGThreads>>>(
      kv, dlens.as<int32_t>(), dts.as<float>(), per_token_head, kmax, dout.as<float>()));
  const auto got = download<float>(dout);
  int64_t bad = 0, nans = 0, past = 0;
  std::string first_bad;
  for (int s = 0; s < nseq; ++s)
    for (int h = 0; h < kGHeads; ++h)
      for (int j = 0; j < kmax; ++j)
        for (int d = 0; d < kGD; ++d) {
          const size_t i = ((size_t(s) * kGHeads + h) * kmax + j) * kGD + d;
          nans += std::isnan(got[i]);
          past += j >= lens[s];
          if (!(got[i] == want[i]) && bad++ == 0)
            first_bad = "seq " + std::to_string(s) + " head " + std::to_string(h) + " key " + std::to_string(j) + " d " +
                        std::to_string(d) + ": " + std::to_string(got[i]) + ", want " + std::to_string(want[i]) +
                        (j >= lens[s] ? " (past the context: must be 0)" : "");
        }
  EXPECT_EQ(nans, 0) << "NaN read back (an unowned slot or a poisoned output was used)";
  EXPECT_EQ(bad, 0) << bad << " of " << got.size() << " elements differ; first: " << first_bad;
  EXPECT_GT(past, 0);
}

TEST(Sm90Loader, GatherPast2GiBFp8PerTensor) {
  REQUIRE_GPU();
  check_gather<true, 0>(5, false, int64_t(23) << 27, 71);  // 2.875 GiB, page size 5 (FastDivmod)
  check_gather<true, 16>(16, false, int64_t(19) << 27, 72);  // 2.375 GiB
}
TEST(Sm90Loader, GatherPast2GiBFp8PerTokenHead) {
  REQUIRE_GPU();
  check_gather<true, 16>(16, true, int64_t(19) << 27, 73);
  check_gather<true, 0>(5, true, int64_t(19) << 27, 74);
}
TEST(Sm90Loader, GatherPast2GiBBf16) {
  REQUIRE_GPU();
  check_gather<false, 16>(16, false, int64_t(19) << 27, 75);  // byte offsets past 2 GiB
  check_gather<false, 0>(5, false, int64_t(35) << 27, 76);    // 4.375 GiB: element offsets past 2^31 too
}

// ---- fp8 dequantization (Arch::dequant_fp8x4, the loaders' conversion point) ----
// Every code of both formats, decoded on the device into each q dtype, equals the host decode
// (numeric/fp8.hpp) rounded to that dtype (exact: every e4m3 value is an f16 and a bf16), NaN codes
// give NaN.
template <KvKind kKv, bool kBf16>
__global__ void dequant_kernel(const uint32_t* codes, uint32_t* out) {
  const int i = static_cast<int>(threadIdx.x);  // 64 words of 4 codes
  DeviceArch::template dequant_fp8x4<kKv, kBf16>(codes[i], out[2 * i], out[2 * i + 1]);
}

template <KvKind kKv, bool kBf16>
void check_dequant() {
  std::vector<uint32_t> codes(64);
  for (uint32_t b = 0; b < 256; ++b) codes[b / 4] |= b << (8 * (b % 4));
  DeviceBuffer dc = DeviceBuffer::from(codes);
  DeviceBuffer dout = poisoned(128 * 4);
  LAUNCH_CHECKED((dequant_kernel<kKv, kBf16><<<1, 64>>>(dc.as<uint32_t>(), dout.as<uint32_t>())));
  std::vector<uint16_t> got(256);
  HIPATTN_CHECK(rt::memcpy_d2h(got.data(), dout.ptr, 512));
  int bad = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    const float want = kKv == KvKind::e4m3fn ? fp8_e4m3fn_t::from_bits(b).to_float() : fp8_e4m3fnuz_t::from_bits(b).to_float();
    const float g = kBf16 ? bfloat16_t::from_bits(got[b]).to_float() : half_t::from_bits(got[b]).to_float();
    const bool ok = std::isnan(want) ? std::isnan(g) : (g == want && std::signbit(g) == std::signbit(want));
    if (!ok && bad++ < 5) ADD_FAILURE() << "code 0x" << std::hex << b << std::dec << ": " << g << ", want " << want;
  }
  EXPECT_EQ(bad, 0);
}

TEST(Sm90Fp8, DequantEveryCodeExact) {
  REQUIRE_GPU();
  check_dequant<KvKind::e4m3fn, false>();
  check_dequant<KvKind::e4m3fn, true>();
  check_dequant<KvKind::e4m3fnuz, false>();
  check_dequant<KvKind::e4m3fnuz, true>();
}

}  // namespace
}  // namespace hipattn::testing
