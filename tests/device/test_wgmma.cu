// Contract tests of the sm_90a warpgroup MMA primitives (arch/sm90/wgmma.hpp): the shared-memory
// descriptors and K-major swizzled tiles, the accumulator and A-fragment layouts, and the atoms
// (f16 / bf16 m64nNk16 and e4m3 m64nNk32, A from shared memory or registers) against a float64 host
// product, including a 64-lap double-buffered pipeline with wgmma_wait_group<1> overlap.
//
// The layout and descriptor checks are host-only and run everywhere. The GPU tests skip themselves,
// saying why, without a GPU, on a GPU that is not sm_90, and in a binary whose device code was not
// built for sm_90a. Inputs are seeded random, outputs are poisoned (NaN) before every launch, the
// accumulators start as NaN inside the kernel (scale-d = 0 must not read them), and every launch and
// its execution are checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/device_check.hpp"
#include "../common/gpu.hpp"
#include "../../testing/paged_problem.hpp"
#include "hipattn/arch/sm90/wgmma.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/platform/runtime.hpp"

namespace hipattn::testing {
namespace {

using sm90::SmemSwizzle;

// ================= 1. Host: layouts and descriptors =================

template <int N>
void check_acc_layout() {
  SCOPED_TRACE("N=" + std::to_string(N));
  using L = sm90::WgmmaAccLayout<N>;
  std::vector<int> hits(64 * N, 0);
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < L::kAccs; ++i) {
      const auto p = L::c(t, i);
      ASSERT_TRUE(p.row >= 0 && p.row < 64 && p.col >= 0 && p.col < N) << "t " << t << " i " << i;
      // Warp w holds rows 16w .. 16w + 15; per 8-column slice the mma.sync m16n8 C fragment.
      EXPECT_EQ(p.row / 16, t / 32);
      const auto q = sm90::Mma16816Layout::c(t % 32, i % 4);
      EXPECT_EQ(p.row % 16, q.row);
      EXPECT_EQ(p.col, 8 * (i / 4) + q.col);
      ++hits[p.row * N + p.col];
    }
  for (int x = 0; x < 64 * N; ++x) EXPECT_EQ(hits[x], 1) << "D[" << x / N << "][" << x % N << "]";
}

TEST(Sm90WgmmaLayout, AccumulatorCoversTheTileOnce) {
  check_acc_layout<8>();
  check_acc_layout<64>();
  check_acc_layout<128>();
  check_acc_layout<200>();
  check_acc_layout<256>();
}

template <class L>
void check_a_layout() {
  std::vector<int> hits(L::kM * L::kK, 0);
  for (int t = 0; t < 128; ++t)
    for (int e = 0; e < L::kElems; ++e) {
      const auto p = L::a(t, e);
      ASSERT_TRUE(p.row >= 0 && p.row < L::kM && p.col >= 0 && p.col < L::kK);
      EXPECT_EQ(p.row / 16, t / 32);
      ++hits[p.row * L::kK + p.col];
    }
  for (int x = 0; x < L::kM * L::kK; ++x) EXPECT_EQ(hits[x], 1) << "A[" << x / L::kK << "][" << x % L::kK << "]";
}

TEST(Sm90WgmmaLayout, AFragmentsCoverTheTileOnce) {
  check_a_layout<sm90::WgmmaA16Layout>();
  check_a_layout<sm90::WgmmaA8Layout>();
  // The documented formulas, literally.
  for (int t = 0; t < 128; ++t) {
    const int w = t / 32, l = t % 32;
    for (int e = 0; e < 8; ++e) {
      const auto p = sm90::WgmmaA16Layout::a(t, e);
      EXPECT_EQ(p.row, 16 * w + l / 4 + 8 * ((e / 2) % 2));
      EXPECT_EQ(p.col, 2 * (l % 4) + (e % 2) + 8 * (e / 4));
    }
    for (int e = 0; e < 16; ++e) {
      const auto p = sm90::WgmmaA8Layout::a(t, e);
      EXPECT_EQ(p.row, 16 * w + l / 4 + 8 * ((e / 4) % 2));
      EXPECT_EQ(p.col, 4 * (l % 4) + (e % 4) + 16 * (e / 8));
    }
  }
}

TEST(Sm90WgmmaDesc, EncodesTheFields) {
  // start 0x1230 >> 4, LBO 16 >> 4, SBO 1024 >> 4, base offset 0, layout type 1 (128-byte swizzle).
  constexpr uint64_t d = sm90::encode_smem_desc(0x1230u, SmemSwizzle::b128, 16, 1024);
  static_assert(d == (0x123ull | (1ull << 16) | (64ull << 32) | (1ull << 62)));
  EXPECT_EQ(d & 0x3FFFu, 0x123u);
  EXPECT_EQ((d >> 16) & 0x3FFFu, 1u);
  EXPECT_EQ((d >> 32) & 0x3FFFu, 64u);
  EXPECT_EQ((d >> 49) & 0x7u, 0u);
  EXPECT_EQ(d >> 62, 1u);
  EXPECT_EQ(sm90::encode_smem_desc(0, SmemSwizzle::b64, 0, 512) >> 62, 2u);
  EXPECT_EQ(sm90::encode_smem_desc(0, SmemSwizzle::b32, 0, 256) >> 62, 3u);
  EXPECT_EQ(sm90::encode_smem_desc(0, SmemSwizzle::none, 2048, 128) >> 62, 0u);
  EXPECT_EQ((sm90::encode_smem_desc(0x10, SmemSwizzle::none, 2048, 128) >> 16) & 0x3FFFu, 128u);
  EXPECT_EQ(sm90::encode_smem_desc(0, SmemSwizzle::none, 0, 0, 5) >> 49, 5u);
  // The 14-bit start field holds shared-window addresses up to 256 KiB - 16.
  EXPECT_EQ(sm90::encode_smem_desc(0x3FFF0u, SmemSwizzle::b128, 16, 1024) & 0x3FFFu, 0x3FFFu);
  EXPECT_EQ(sm90::smem_desc_advance(d, 96), sm90::encode_smem_desc(0x1230u + 96, SmemSwizzle::b128, 16, 1024));
}

template <SmemSwizzle kSw, int kRows, int kRowBytes>
void check_kmajor_tile() {
  using T = sm90::KMajorTile<kSw, kRows, kRowBytes>;
  SCOPED_TRACE("swizzle " + std::to_string(int(kSw)) + " rows " + std::to_string(kRows) + " row bytes " +
               std::to_string(kRowBytes));
  constexpr int W = T::kW;
  std::vector<int> hits(T::kBytes, 0);
  for (int r = 0; r < kRows; ++r)
    for (int b = 0; b < kRowBytes; ++b) {
      const uint32_t o = T::offset(r, b);
      ASSERT_LT(o, uint32_t(T::kBytes));
      ++hits[o];
      // 16-byte chunks stay whole; a row of an atom stays within its W bytes.
      EXPECT_EQ(o % 16, uint32_t(b % 16));
      const uint32_t atom_row = uint32_t((b / W) * kRows * W + r * W);
      EXPECT_EQ(o / W * W, atom_row);
      if constexpr (kSw == SmemSwizzle::b128)  // chunk c of row r of an 8 x 128-byte atom at chunk c ^ (r % 8)
        EXPECT_EQ((o % 128) / 16, uint32_t(((b % 128) / 16) ^ (r % 8)));
      if constexpr (kSw == SmemSwizzle::b64) EXPECT_EQ((o % 64) / 16, uint32_t(((b % 64) / 16) ^ ((r / 2) % 4)));
      if constexpr (kSw == SmemSwizzle::b32) EXPECT_EQ((o % 32) / 16, uint32_t(((b % 32) / 16) ^ ((r / 4) % 2)));
      // The hardware's view: address bits [4, 4 + s) XOR bits [7, 7 + s) of the unswizzled address.
      if constexpr (kSw != SmemSwizzle::none) {
        const uint32_t plain = atom_row + uint32_t(b % W);
        const uint32_t mask = uint32_t(W / 16 - 1);
        EXPECT_EQ(o, plain ^ (((plain >> 7) & mask) << 4));
      }
    }
  for (int x = 0; x < T::kBytes; ++x) ASSERT_EQ(hits[x], 1) << "byte " << x;
  // Each k-step's descriptor starts at the tile position of its first 16-byte chunk of row 0, and the
  // addresses the hardware forms from it (PTX ISA canonical K-major layouts) are where the tile put
  // the data: row r, K-chunk j (0, 1) of the k-step at
  //   swizzled: start + (r / 8) SBO + (r % 8) W + 16 j, then bits [4, 4 + s) ^= bits [7, 7 + s)
  //   none:     start + (r / 8) SBO + 16 (r % 8) + j LBO
  // (the tile at an address aligned to kAlign, here 0x2000).
  constexpr uint32_t kBase = 0x2000u;
  static_assert(kBase % T::kAlign == 0);
  for (int kb = 0; kb < kRowBytes; kb += 32) {
    EXPECT_EQ(T::kstep_offset(kb), T::offset(0, kb));  // row 0 is never permuted
    const uint64_t d = T::desc_at(kBase, kb);
    const uint32_t start = uint32_t(d & 0x3FFFu) << 4, lbo = uint32_t((d >> 16) & 0x3FFFu) << 4;
    const uint32_t sbo = uint32_t((d >> 32) & 0x3FFFu) << 4;
    EXPECT_EQ(start, kBase + T::kstep_offset(kb));
    EXPECT_EQ(sbo, T::kSbo);
    EXPECT_EQ(d >> 62, uint64_t(kSw));
    for (int r = 0; r < kRows; ++r)
      for (int j = 0; j < 2; ++j) {
        uint32_t addr;
        if constexpr (kSw == SmemSwizzle::none) {
          addr = start + uint32_t(r / 8) * sbo + 16u * uint32_t(r % 8) + uint32_t(j) * lbo;
        } else {
          const uint32_t plain = start + uint32_t(r / 8) * sbo + uint32_t(r % 8 * W + 16 * j);
          addr = plain ^ (((plain >> 7) & uint32_t(W / 16 - 1)) << 4);
        }
        EXPECT_EQ(addr, kBase + T::offset(r, kb + 16 * j)) << "k-step byte " << kb << " row " << r << " chunk " << j;
      }
  }
}

TEST(Sm90WgmmaDesc, KMajorTilesAreThePtxCanonicalLayouts) {
  check_kmajor_tile<SmemSwizzle::b128, 64, 256>();
  check_kmajor_tile<SmemSwizzle::b128, 8, 128>();
  check_kmajor_tile<SmemSwizzle::b64, 64, 256>();
  check_kmajor_tile<SmemSwizzle::b32, 24, 96>();
  check_kmajor_tile<SmemSwizzle::none, 64, 64>();
  static_assert(sm90::KMajorTile<SmemSwizzle::b128, 64, 128>::kSbo == 1024);
  static_assert(sm90::KMajorTile<SmemSwizzle::b64, 64, 128>::kSbo == 512);
  static_assert(sm90::KMajorTile<SmemSwizzle::b32, 64, 128>::kSbo == 256);
  static_assert(sm90::KMajorTile<SmemSwizzle::none, 64, 128>::kSbo == 128);
  static_assert(sm90::KMajorTile<SmemSwizzle::none, 64, 128>::kLbo == 64 * 16);
  static_assert(sm90::KMajorTile<SmemSwizzle::b128, 64, 128>::kAlign == 1024);
}

#if defined(HIPATTN_BACKEND_CUDA)
// ================= 2. GPU: the atoms =================

enum class Kind { f16, bf16, e4m3 };
const char* kind_name(Kind k) { return k == Kind::f16 ? "f16" : k == Kind::bf16 ? "bf16" : "e4m3"; }

template <Kind kKind, int N>
using AtomOf = std::conditional_t<kKind == Kind::e4m3, sm90::WgmmaE4m3<N>, sm90::WgmmaF16<N, kKind == Kind::bf16>>;


__global__ void wgmma_probe_kernel(int* out) {
#if defined(HIPATTN_SM90A_WGMMA)
  *out = 1;
#else
  *out = 0;
#endif
}

// Empty when the wgmma tests can run here, else why not.
std::string wgmma_unavailable() {
  if (!gpu_present()) return "no GPU present: device test skipped";
  const rt::DeviceProperties p = rt::device_properties();
  if (p.arch_name != "sm_90") return "wgmma needs an sm_90 (Hopper) GPU; this one is " + p.arch_name + ": skipped";
  DeviceBuffer flag = poisoned(sizeof(int));
  LAUNCH_CHECKED(wgmma_probe_kernel<<<1, 1>>>(flag.as<int>()));
  if (download<int>(flag)[0] != 1)
    return "this binary's device code was not built for sm_90a (no __CUDA_ARCH_FEAT_SM90_ALL): skipped";
  return {};
}
#define REQUIRE_WGMMA()                                        \
  do {                                                         \
    const std::string why_ = wgmma_unavailable();              \
    if (!why_.empty()) GTEST_SKIP() << why_;                   \
  } while (0)

// One warpgroup computes D (64 x N) = [C +] sum over `laps` of A_lap (64 x K) B_lap^T (B_lap: N x K,
// K-major like the K cache), K = kSteps k-steps of 32 bytes (16 f16 / bf16, 32 e4m3) per row, and
// writes every accumulator register to out at the (row, col) that WgmmaAccLayout gives it.
// Shared memory holds two stages (one when laps == 1) of [A tile (SS only), B tile], each a
// KMajorTile of swizzle kSw. Lap L fills stage L % 2 after wgmma_wait_group<1> (lap L - 2, the last
// reader of that stage, is done; lap L - 1 stays in flight) and a barrier, fences the writes into
// the async proxy, and issues its kSteps atoms as one group: lap L's wgmma overlap lap L - 1's.
// RS reads A from registers, loaded from global memory through WgmmaA16Layout / WgmmaA8Layout.
// The accumulators start as c (through WgmmaAccLayout); with `overwrite` c is NaN and the first
// k-step has scale-d = 0. (They are loaded, not set to a constant: ptxas rematerialises constant
// accumulator initialisations next to the wgmma and then serialises the wgmma pipeline, C7515,
// which would take the overlap out of the pipeline test.)
template <Kind kKind, int N, int kSteps, bool kRS, SmemSwizzle kSw>
__global__ void __launch_bounds__(128) wgmma_kernel(const uint8_t* a, const uint8_t* b, const float* c, bool overwrite,
                                                    int laps, float* out) {
  using Atom = AtomOf<kKind, N>;
  constexpr int kRowBytes = kSteps * 32;
  using TA = sm90::KMajorTile<kSw, 64, kRowBytes>;
  using TB = sm90::KMajorTile<kSw, N, kRowBytes>;
  constexpr int kStage = ((kRS ? 0 : TA::kBytes) + TB::kBytes + 1023) / 1024 * 1024;
  constexpr int kChunks = kRowBytes / 16;
  extern __shared__ uint4 smem_u4[];
  uint8_t* smem = reinterpret_cast<uint8_t*>(smem_u4);
  smem += (1024u - (sm90::smem_u32(smem) & 1023u)) & 1023u;  // every swizzle atom at its alignment
  const int t = threadIdx.x;

  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const auto p = Atom::CLayout::c(t, i);
    d[i] = c[p.row * N + p.col];
  }
  for (int lap = 0; lap < laps; ++lap) {
    uint8_t* sa = smem + (lap % 2) * kStage;
    uint8_t* sb = sa + (kRS ? 0 : TA::kBytes);
    const uint8_t* ga = a + size_t(lap) * 64 * kRowBytes;
    const uint8_t* gb = b + size_t(lap) * N * kRowBytes;
    sm90::wgmma_wait_group<1>();
    __syncthreads();  // every warp has waited: nobody reads this stage any more
    if constexpr (!kRS)
      for (int x = t; x < 64 * kChunks; x += 128)
        *reinterpret_cast<uint4*>(sa + TA::offset(x / kChunks, (x % kChunks) * 16)) = reinterpret_cast<const uint4*>(ga)[x];
    for (int x = t; x < N * kChunks; x += 128)
      *reinterpret_cast<uint4*>(sb + TB::offset(x / kChunks, (x % kChunks) * 16)) = reinterpret_cast<const uint4*>(gb)[x];
    sm90::fence_proxy_async_shared();
    __syncthreads();

    uint32_t af[kSteps][4];
    if constexpr (kRS) {
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int r = 0; r < 4; ++r) af[s][r] = 0;
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        if constexpr (kKind == Kind::e4m3) {
#pragma unroll
          for (int e = 0; e < 16; ++e) {
            const auto p = sm90::WgmmaA8Layout::a(t, e);
            af[s][e / 4] |= uint32_t(ga[p.row * kRowBytes + s * 32 + p.col]) << (8 * (e % 4));
          }
        } else {
          const uint16_t* ga16 = reinterpret_cast<const uint16_t*>(ga);
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const auto p = sm90::WgmmaA16Layout::a(t, e);
            af[s][e / 2] |= uint32_t(ga16[p.row * (kRowBytes / 2) + s * 16 + p.col]) << (16 * (e % 2));
          }
        }
      }
    }
    sm90::wgmma_fence_operand(d);
    sm90::wgmma_fence();  // orders the register writes above (accumulators, A) before the wgmma
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const uint32_t scale_d = (lap == 0 && s == 0 && overwrite) ? 0u : 1u;
      const uint64_t desc_b = sm90::make_kstep_desc<TB>(sb, s * 32);
      if constexpr (kRS) Atom::rs(d, af[s], desc_b, scale_d);
      else Atom::ss(d, sm90::make_kstep_desc<TA>(sa, s * 32), desc_b, scale_d);
    }
    sm90::wgmma_commit_group();
    sm90::wgmma_fence_operand(d);
  }
  sm90::wgmma_wait_group<0>();
  sm90::wgmma_fence_operand(d);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const auto p = Atom::CLayout::c(t, i);
    out[p.row * N + p.col] = d[i];
  }
}

double decode(Kind k, uint16_t code) {
  switch (k) {
    case Kind::f16: return half_t::from_bits(code).to_float();
    case Kind::bf16: return bfloat16_t::from_bits(code).to_float();
    default: return fp8_e4m3fn_t::from_bits(code).to_float();
  }
}
uint16_t encode(Kind k, float x) {
  return k == Kind::e4m3 ? fp8_e4m3fn_t::from_float(x).bits : float_to_16(x, k == Kind::bf16);
}

// Inputs: small integers (every sum exact in the accumulator: checked for equality) or random reals
// (normal values; for e4m3 in one lap any finite code: checked within tol * sum |a b|). with_c: D
// starts from a random C instead of being overwritten by the first k-step. e4m3 wgmma accumulates
// with fewer bits than f32 (about 14 kept), so its tolerance is wider, and its 64-lap runs use normal
// values, whose partial sums stay far below sum |a b| (heavy-tailed codes would make the rounding
// of 256 accumulation steps comparable to the contribution of one lap).
struct Case {
  int laps = 1;
  bool small_ints = false;
  bool with_c = false;
  uint32_t seed = 1;
};

template <Kind kKind, int N, int kSteps, bool kRS, SmemSwizzle kSw = SmemSwizzle::b128>
void check_wgmma(const Case& cs) {
  constexpr bool kFp8 = kKind == Kind::e4m3;
  constexpr int eb = kFp8 ? 1 : 2, kRowBytes = kSteps * 32, K = kRowBytes / eb;
  SCOPED_TRACE(std::string(kind_name(kKind)) + (kRS ? " RS" : " SS") + " m64n" + std::to_string(N) + " k-steps " +
               std::to_string(kSteps) + " swizzle " + std::to_string(int(kSw)) + " laps " + std::to_string(cs.laps) +
               (cs.small_ints ? " small integers" : " random reals") + (cs.with_c ? " with C" : "") + " seed " +
               std::to_string(cs.seed));
  const int laps = cs.laps;
  std::mt19937 rng(cs.seed);
  std::uniform_int_distribution<int> small(kFp8 ? -2 : -4, kFp8 ? 2 : 4), code(0, 255);
  std::normal_distribution<float> normal(0.f, 1.f);
  auto draw = [&]() -> uint16_t {
    if (cs.small_ints) return encode(kKind, float(small(rng)));
    if (kFp8 && laps == 1) {
      int x;
      do x = code(rng); while ((x & 0x7F) == 0x7F);  // any finite code
      return uint16_t(x);
    }
    return encode(kKind, normal(rng));
  };
  std::vector<uint16_t> a(size_t(laps) * 64 * K), b(size_t(laps) * N * K);
  for (auto& x : a) x = draw();
  for (auto& x : b) x = draw();
  std::vector<float> c;
  if (cs.with_c) {
    c.resize(64 * N);
    for (auto& x : c) x = cs.small_ints ? float(small(rng)) : 4.f * normal(rng);
  }
  std::vector<uint8_t> ab(a.size() * eb), bb(b.size() * eb);
  for (size_t i = 0; i < a.size(); ++i) std::memcpy(&ab[i * eb], &a[i], eb);  // little endian: low byte(s)
  for (size_t i = 0; i < b.size(); ++i) std::memcpy(&bb[i * eb], &b[i], eb);
  DeviceBuffer da = DeviceBuffer::from(ab), db = DeviceBuffer::from(bb);
  DeviceBuffer dc = cs.with_c ? DeviceBuffer::from(c) : poisoned(64 * N * sizeof(float));
  DeviceBuffer dd = poisoned(64 * N * sizeof(float));

  constexpr int kTileA = kRS ? 0 : sm90::KMajorTile<kSw, 64, kRowBytes>::kBytes;
  constexpr int kStage = (kTileA + sm90::KMajorTile<kSw, N, kRowBytes>::kBytes + 1023) / 1024 * 1024;
  const int smem = (laps > 1 ? 2 : 1) * kStage + 1024;
  auto kern = wgmma_kernel<kKind, N, kSteps, kRS, kSw>;
  HIPATTN_CHECK(rt::set_max_dynamic_shared(kern, smem));
  LAUNCH_CHECKED(kern<<<1, 128, smem>>>(da.as<uint8_t>(), db.as<uint8_t>(), dc.as<float>(), !cs.with_c, laps,
                                        dd.as<float>()));
  const std::vector<float> d = download<float>(dd);

  // f32 accumulation of 16-bit products is near-exact; e4m3 wgmma accumulates with fewer bits.
  const double tol = kFp8 ? 1e-3 : (laps > 1 ? 1e-4 : 1e-5);
  std::vector<double> ad(a.size()), bd(b.size());
  for (size_t i = 0; i < a.size(); ++i) ad[i] = decode(kKind, a[i]);
  for (size_t i = 0; i < b.size(); ++i) bd[i] = decode(kKind, b[i]);
  int bad = 0;
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = cs.with_c ? c[i * N + j] : 0.0, mag = std::fabs(ref);
      for (int l = 0; l < laps; ++l) {
        const double* ar = &ad[(size_t(l) * 64 + i) * K];
        const double* br = &bd[(size_t(l) * N + j) * K];
        for (int k = 0; k < K; ++k) {
          const double p = ar[k] * br[k];
          ref += p;
          mag += std::fabs(p);
        }
      }
      const double got = d[i * N + j];
      const bool ok = cs.small_ints ? got == ref : std::fabs(got - ref) <= tol * mag;
      if (!ok && bad++ < 5) ADD_FAILURE() << "D[" << i << "][" << j << "] = " << got << ", want " << ref << " (sum |ab| " << mag << ")";
    }
  EXPECT_EQ(bad, 0) << "elements wrong of " << 64 * N;
}

// Small integers (exact, overwrite through scale-d = 0) and random reals (accumulating onto C).
template <Kind kKind, int N, int kSteps, bool kRS, SmemSwizzle kSw = SmemSwizzle::b128>
void check_both(uint32_t seed) {
  check_wgmma<kKind, N, kSteps, kRS, kSw>(Case{1, true, false, seed});
  check_wgmma<kKind, N, kSteps, kRS, kSw>(Case{1, false, true, seed + 1});
}

TEST(Sm90Wgmma, F16SharedShared) {
  REQUIRE_WGMMA();
  check_both<Kind::f16, 64, 8, false>(101);
  check_both<Kind::f16, 128, 8, false>(103);
  check_both<Kind::f16, 256, 8, false>(105);
}
TEST(Sm90Wgmma, Bf16SharedShared) {
  REQUIRE_WGMMA();
  check_both<Kind::bf16, 64, 8, false>(111);
  check_both<Kind::bf16, 128, 8, false>(113);
  check_both<Kind::bf16, 256, 8, false>(115);
}
TEST(Sm90Wgmma, F16RegistersShared) {
  REQUIRE_WGMMA();
  check_both<Kind::f16, 64, 8, true>(121);
  check_both<Kind::f16, 128, 8, true>(123);
  check_both<Kind::f16, 256, 8, true>(125);
}
TEST(Sm90Wgmma, Bf16RegistersShared) {
  REQUIRE_WGMMA();
  check_both<Kind::bf16, 64, 8, true>(131);
  check_both<Kind::bf16, 128, 8, true>(133);
  check_both<Kind::bf16, 256, 8, true>(135);
}
TEST(Sm90Wgmma, E4m3SharedSharedAndRegisters) {
  REQUIRE_WGMMA();
  check_both<Kind::e4m3, 64, 8, false>(141);
  check_both<Kind::e4m3, 128, 8, false>(143);
  check_both<Kind::e4m3, 64, 8, true>(145);
  check_both<Kind::e4m3, 128, 8, true>(147);
}
// N other than the three head-size-like ones: the generated operand lists at both ends and between.
TEST(Sm90Wgmma, OtherWidths) {
  REQUIRE_WGMMA();
  check_both<Kind::f16, 8, 8, false>(151);
  check_both<Kind::bf16, 200, 4, false>(153);
  check_both<Kind::f16, 24, 8, true>(155);
  check_both<Kind::e4m3, 256, 4, false>(157);
}
// The other canonical K-major layouts: 64- and 32-byte swizzles, and none (interleaved core matrices).
TEST(Sm90Wgmma, OtherSwizzles) {
  REQUIRE_WGMMA();
  check_both<Kind::f16, 64, 8, false, SmemSwizzle::b64>(161);
  check_both<Kind::f16, 64, 8, false, SmemSwizzle::b32>(162);
  check_both<Kind::f16, 64, 8, false, SmemSwizzle::none>(163);
  check_both<Kind::bf16, 128, 8, true, SmemSwizzle::b64>(164);
  check_both<Kind::bf16, 128, 8, true, SmemSwizzle::b32>(165);
  check_both<Kind::bf16, 128, 8, true, SmemSwizzle::none>(166);
  check_both<Kind::e4m3, 128, 8, false, SmemSwizzle::b64>(167);
  check_both<Kind::e4m3, 128, 8, false, SmemSwizzle::b32>(168);
  check_both<Kind::e4m3, 128, 8, false, SmemSwizzle::none>(169);
}
// 64 laps through two shared-memory stages with one wgmma-group in flight while the next stage is
// written (wgmma_wait_group<1>): a stage overwritten too early, a lost group or an accumulator read
// too early shows as a wrong sum.
TEST(Sm90Wgmma, ManyPipelineLaps) {
  REQUIRE_WGMMA();
  check_wgmma<Kind::f16, 128, 4, false>(Case{64, true, false, 171});
  check_wgmma<Kind::f16, 128, 4, false>(Case{64, false, true, 172});
  check_wgmma<Kind::bf16, 256, 4, false>(Case{64, false, false, 173});
  check_wgmma<Kind::bf16, 128, 4, true>(Case{64, true, false, 174});
  check_wgmma<Kind::f16, 64, 4, true>(Case{64, false, true, 175});
  check_wgmma<Kind::e4m3, 64, 4, false>(Case{64, false, false, 176});
  check_wgmma<Kind::e4m3, 128, 4, true>(Case{64, false, true, 177});
}
#endif  // HIPATTN_BACKEND_CUDA

}  // namespace
}  // namespace hipattn::testing
