// Contract tests of the sm_90 bulk copies (arch/sm90/tma.hpp): TMA boxes with their shared-memory
// layouts (no swizzle, 32 / 64 / 128-byte swizzles; 2D, 3D and 4D maps; boxes at offsets, across the
// tensor's edges and at negative coordinates, whose outside elements must land as zeros), mbarrier
// transaction counts and phases over a 4-stage, 64-lap producer / consumer ring, the non-tensor bulk
// copy gathering rows and pages by a block table (contiguous, and into a swizzled wgmma tile), a
// paged K/V gather through a tensor map over the page pool, and one wgmma reading TMA-loaded and
// gathered tiles (the TMA swizzle and the wgmma descriptors agree) against a float64 host product.
//
// The layout checks are host-only and run everywhere; the tensor-map argument checks run in every
// CUDA build (they throw before the driver is asked). The GPU tests skip themselves, saying why,
// without a GPU, on a GPU that is not sm_90, and in a binary whose device code was not built for
// sm_90 (sm_90a for the wgmma test). Inputs are seeded random, outputs are poisoned (0xFF bytes:
// NaN as f32) before every launch, every launch and its execution are checked, and the kernels'
// waits trap after about ten seconds, so a lost phase fails its test instead of hanging it.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../common/device_check.hpp"
#include "../common/gpu.hpp"
#include "../../testing/paged_problem.hpp"
#include "../common/sm90_check.hpp"
#include "hipattn/arch/sm90/tma.hpp"
#include "hipattn/arch/sm90/wgmma.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/platform/runtime.hpp"

namespace hipattn::testing {
namespace {

using sm90::SmemSwizzle;

// ================= 1. Host: box layouts =================

// The hardware's rule: address bits [4, 4 + s) ^= bits [7, 7 + s) of the dense (unswizzled) offset.
uint32_t swizzle_rule(SmemSwizzle sw, uint32_t plain) {
  const uint32_t mask = uint32_t(sm90::swizzle_row_bytes(sw) / 16 - 1);
  return sw == SmemSwizzle::none ? plain : plain ^ (((plain >> 7) & mask) << 4);
}

template <SmemSwizzle kSw, int kRows, int kInner>
void check_box_layout() {
  using B = sm90::TmaBox<kSw, kRows, kInner>;
  SCOPED_TRACE("swizzle " + std::to_string(int(kSw)) + " rows " + std::to_string(kRows) + " inner bytes " +
               std::to_string(kInner));
  std::vector<int> hits(B::kBytes, 0);
  for (int r = 0; r < kRows; ++r)
    for (int b = 0; b < kInner; ++b) {
      const uint32_t o = B::offset(r, b);
      ASSERT_LT(o, uint32_t(B::kBytes));
      ++hits[o];
      EXPECT_EQ(o, swizzle_rule(kSw, uint32_t(r * kInner + b)));
      if constexpr (kSw == SmemSwizzle::b128) {
        // The documented form: 16-byte chunk c of row r at chunk c ^ (r % 8) of its 128-byte row.
        EXPECT_EQ(o, uint32_t(r * 128 + (((b / 16) ^ (r % 8)) * 16) + b % 16));
      }
      if constexpr (kSw != SmemSwizzle::none) {
        EXPECT_EQ(o, (sm90::KMajorTile<kSw, kRows, kInner>::offset(r, b)));
      }
    }
  for (int x = 0; x < B::kBytes; ++x) ASSERT_EQ(hits[x], 1) << "byte " << x;
}

TEST(Sm90TmaLayout, BoxesAreTheKMajorWgmmaTiles) {
  check_box_layout<SmemSwizzle::b128, 64, 128>();
  check_box_layout<SmemSwizzle::b128, 16, 128>();
  check_box_layout<SmemSwizzle::b64, 64, 64>();
  check_box_layout<SmemSwizzle::b32, 32, 32>();
  check_box_layout<SmemSwizzle::none, 40, 64>();
  check_box_layout<SmemSwizzle::none, 5, 48>();
  static_assert(sm90::TmaBox<SmemSwizzle::b128, 64, 128>::kAlign == 1024);
  static_assert(sm90::TmaBox<SmemSwizzle::b64, 64, 64>::kAlign == 512);
  static_assert(sm90::TmaBox<SmemSwizzle::b32, 64, 32>::kAlign == 256);
  static_assert(sm90::TmaBox<SmemSwizzle::none, 64, 32>::kAlign == 128);
}

// Rows wider than the swizzle: one box per W-byte column block b (coordinate c0 = b W / element
// bytes) at b * rows * W is the whole KMajorTile.
TEST(Sm90TmaLayout, ColumnBlocksOfWideRows) {
  using Tile = sm90::KMajorTile<SmemSwizzle::b128, 64, 256>;
  using Box = sm90::TmaBox<SmemSwizzle::b128, 64, 128>;
  for (int r = 0; r < 64; ++r)
    for (int b = 0; b < 256; ++b)
      EXPECT_EQ(Tile::offset(r, b), uint32_t((b / 128) * Box::kBytes) + Box::offset(r, b % 128)) << r << " " << b;
  using Tile64 = sm90::KMajorTile<SmemSwizzle::b64, 32, 128>;
  using Box64 = sm90::TmaBox<SmemSwizzle::b64, 32, 64>;
  for (int r = 0; r < 32; ++r)
    for (int b = 0; b < 128; ++b)
      EXPECT_EQ(Tile64::offset(r, b), uint32_t((b / 64) * Box64::kBytes) + Box64::offset(r, b % 64)) << r << " " << b;
}

#if defined(HIPATTN_BACKEND_CUDA)
// ================= 2. Host: tensor-map arguments (no GPU needed) =================

template <class F>
void expect_invalid(F&& f, const std::string& needle) {
  try {
    (void)f();
    ADD_FAILURE() << "no hipattn::Error thrown; expected one saying '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    EXPECT_EQ(e.field(), "tensor map");
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Sm90TmaMap, RejectsWhatTheDriverWould) {
  using sm90::TmaElem;
  const void* ok = reinterpret_cast<const void*>(uintptr_t(0x10000));
  const void* odd = reinterpret_cast<const void*>(uintptr_t(0x10008));
  expect_invalid(
      [&] { return sm90::make_tensor_map_2d(nullptr, TmaElem::bf16, 64, 64, 128, 64, 64, SmemSwizzle::b128); }, "null");
  expect_invalid([&] { return sm90::make_tensor_map_2d(odd, TmaElem::bf16, 64, 64, 128, 64, 64, SmemSwizzle::b128); },
                 "16-byte aligned");
  expect_invalid([&] { return sm90::make_tensor_map_2d(ok, TmaElem::bf16, 64, 64, 200, 64, 64, SmemSwizzle::b128); },
                 "strides[0] = 200");
  expect_invalid([&] { return sm90::make_tensor_map_2d(ok, TmaElem::bf16, 64, 0, 128, 64, 64, SmemSwizzle::b128); },
                 "dims[1] = 0");
  expect_invalid([&] { return sm90::make_tensor_map_2d(ok, TmaElem::bf16, 64, 300, 128, 64, 257, SmemSwizzle::none); },
                 "box[1] = 257");
  expect_invalid([&] { return sm90::make_tensor_map_2d(ok, TmaElem::bf16, 256, 64, 512, 128, 64, SmemSwizzle::b128); },
                 "exceeds the swizzle width");
  expect_invalid([&] { return sm90::make_tensor_map_2d(ok, TmaElem::u8, 256, 64, 256, 80, 64, SmemSwizzle::b64); },
                 "exceeds the swizzle width");
  expect_invalid([&] { return sm90::make_tensor_map_2d(ok, TmaElem::f16, 64, 64, 128, 4, 64, SmemSwizzle::none); },
                 "multiple of 16");
  expect_invalid(
      [&] {
        return sm90::make_tensor_map_4d(ok, TmaElem::bf16, {64, 2, 16, 8}, {128, 256, 4100}, {64, 1, 16, 1},
                                        SmemSwizzle::b128);
      },
      "strides[2] = 4100");
  // The message names the whole request.
  try {
    (void)sm90::make_tensor_map_3d(ok, TmaElem::bf16, {64, 3, 100}, {128, 384}, {64, 1, 300}, SmemSwizzle::b128);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dims {64, 3, 100}, strides {128, 384} bytes, box {64, 1, 300}, swizzle 128B"),
              std::string::npos)
        << e.what();
  }
}

// ================= 3. GPU: the copies =================

using namespace sm90_check;  // REQUIRE_TMA, wait_or_trap, align_up (tests/common/sm90_check.hpp)



// Random bytes of `n` elements of `eb` bytes, none of them all-zero (zero marks an outside element).
std::vector<uint8_t> random_elements(size_t n, int eb, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n * size_t(eb));
  for (auto& x : v) x = uint8_t(rng());
  for (size_t i = 0; i < n; ++i) {
    bool zero = true;
    for (int b = 0; b < eb; ++b) zero = zero && v[i * eb + b] == 0;
    if (zero) v[i * eb] = 1;
  }
  return v;
}

// ---- 3.1 one box ----

struct Coords {
  int c[4];
};

// Thread 0 loads one box of `map` at `at` into kAlign-aligned shared memory, signalled on one
// barrier (one arrival, the box's bytes); every thread waits (the library's unbounded wait) and
// copies the box out densely (row r, byte b at r * kInner + b), reading shared memory through the
// documented layout (the 128B rule literally, the other modes through TmaBox).
template <int kRank, SmemSwizzle kSw, int kRows, int kInner>
__global__ void __launch_bounds__(128) tma_box_kernel(const __grid_constant__ CUtensorMap map, Coords at,
                                                      uint8_t* out) {
  using Box = sm90::TmaBox<kSw, kRows, kInner>;
  extern __shared__ uint4 smem_u4[];
  __shared__ uint64_t bar;
  uint8_t* smem = align_up(smem_u4, uint32_t(Box::kAlign));
  const int t = threadIdx.x;
  if (t == 0) {
    sm90::mbarrier_init(&bar, 1);
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (t == 0) {
    sm90::tma_prefetch_descriptor(&map);
    sm90::mbarrier_arrive_expect_tx(&bar, uint32_t(Box::kBytes));
    if constexpr (kRank == 2) sm90::tma_load_2d(smem, &map, &bar, at.c[0], at.c[1]);
    else if constexpr (kRank == 3) sm90::tma_load_3d(smem, &map, &bar, at.c[0], at.c[1], at.c[2]);
    else sm90::tma_load_4d(smem, &map, &bar, at.c[0], at.c[1], at.c[2], at.c[3]);
  }
  sm90::mbarrier_wait(&bar, 0);
  constexpr int kChunks = kInner / 16;
  for (int x = t; x < kRows * kChunks; x += blockDim.x) {
    const int r = x / kChunks, b = (x % kChunks) * 16;
    uint32_t o;
    if constexpr (kSw == SmemSwizzle::b128) o = uint32_t(r * 128 + (((b / 16) ^ (r % 8)) * 16));
    else o = Box::offset(r, b);
    *reinterpret_cast<uint4*>(out + r * kInner + b) = *reinterpret_cast<const uint4*>(smem + o);
  }
}

// A host tensor of rank <= 4 (dims in elements, innermost first; strides in bytes for dims 1..).
struct HostTensor {
  sm90::TmaElem elem = sm90::TmaElem::bf16;
  int rank = 2;
  std::array<uint64_t, 4> dims{1, 1, 1, 1};
  std::array<uint64_t, 3> strides{0, 0, 0};
  std::vector<uint8_t> bytes;
  int eb() const { return sm90::tma_elem_bytes(elem); }
  size_t size_bytes() const { return rank == 1 ? dims[0] * eb() : size_t(dims[rank - 1] * strides[rank - 2]); }
};

HostTensor make_tensor(sm90::TmaElem elem, std::vector<uint64_t> dims, std::vector<uint64_t> strides, uint32_t seed) {
  HostTensor h;
  h.elem = elem;
  h.rank = int(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) h.dims[i] = dims[i];
  for (size_t i = 0; i < strides.size(); ++i) h.strides[i] = strides[i];
  const size_t n = h.size_bytes() / size_t(h.eb());
  h.bytes = random_elements(n, h.eb(), seed);
  return h;
}

template <int kRank>
CUtensorMap map_of(const HostTensor& h, const DeviceBuffer& d, const std::array<uint32_t, 4>& box, SmemSwizzle sw) {
  std::array<uint64_t, kRank> dims{};
  std::array<uint64_t, kRank - 1> strides{};
  std::array<uint32_t, kRank> b{};
  for (int i = 0; i < kRank; ++i) dims[i] = h.dims[i], b[i] = box[i];
  for (int i = 0; i < kRank - 1; ++i) strides[i] = h.strides[i];
  return sm90::make_tensor_map<kRank>(d.ptr, h.elem, dims, strides, b, sw);
}

// The box of `h` at `at` as the kernel writes it out (zeros outside the tensor).
std::vector<uint8_t> reference_box(const HostTensor& h, const std::array<uint32_t, 4>& box, const Coords& at,
                                   size_t* outside) {
  const int eb = h.eb();
  std::vector<uint8_t> out;
  *outside = 0;
  for (uint32_t i3 = 0; i3 < box[3]; ++i3)
    for (uint32_t i2 = 0; i2 < box[2]; ++i2)
      for (uint32_t i1 = 0; i1 < box[1]; ++i1)
        for (uint32_t i0 = 0; i0 < box[0]; ++i0) {
          const int64_t g[4] = {at.c[0] + int64_t(i0), at.c[1] + int64_t(i1), at.c[2] + int64_t(i2),
                                at.c[3] + int64_t(i3)};
          bool in = true;
          size_t off = size_t(g[0]) * eb;
          for (int k = 0; k < h.rank; ++k) {
            in = in && g[k] >= 0 && uint64_t(g[k]) < h.dims[k];
            if (k > 0 && in) off += size_t(g[k]) * h.strides[k - 1];
          }
          for (int b = 0; b < eb; ++b) out.push_back(in ? h.bytes[off + b] : uint8_t(0));
          if (!in) ++*outside;
        }
  return out;
}

template <int kRank, SmemSwizzle kSw, int kRows, int kInner>
void check_box(const HostTensor& h, const DeviceBuffer& dt, const std::array<uint32_t, 4>& box, Coords at,
               bool expect_outside) {
  SCOPED_TRACE("rank " + std::to_string(kRank) + " swizzle " + std::to_string(int(kSw)) + " box {" +
               std::to_string(box[0]) + ", " + std::to_string(box[1]) + ", " + std::to_string(box[2]) + ", " +
               std::to_string(box[3]) + "} at {" + std::to_string(at.c[0]) + ", " + std::to_string(at.c[1]) + ", " +
               std::to_string(at.c[2]) + ", " + std::to_string(at.c[3]) + "}");
  ASSERT_EQ(int(box[1] * box[2] * box[3]), kRows);
  ASSERT_EQ(int(box[0]) * h.eb(), kInner);
  const CUtensorMap map = map_of<kRank>(h, dt, box, kSw);
  constexpr int kBytes = kRows * kInner;
  const int smem = kBytes + sm90::TmaBox<kSw, kRows, kInner>::kAlign;
  DeviceBuffer dout = poisoned(kBytes);
  auto kern = tma_box_kernel<kRank, kSw, kRows, kInner>;
  HIPATTN_CHECK(rt::set_max_dynamic_shared(kern, smem));
  LAUNCH_CHECKED(kern<<<1, 128, smem>>>(map, at, dout.as<uint8_t>()));
  const std::vector<uint8_t> got = download<uint8_t>(dout);
  size_t outside = 0;
  const std::vector<uint8_t> want = reference_box(h, box, at, &outside);
  ASSERT_EQ(want.size(), got.size());
  EXPECT_EQ(outside > 0, expect_outside) << outside << " elements outside the tensor";
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && bad++ < 8)
      ADD_FAILURE() << "row " << i / kInner << " byte " << i % kInner << ": got 0x" << std::hex << int(got[i])
                    << ", want 0x" << int(want[i]) << std::dec;
  EXPECT_EQ(bad, 0) << "bytes wrong of " << got.size();
}

// A 200 x 192 bf16 matrix (rows 384 bytes apart), 64 x 64 boxes: at the origin, at an offset, across
// both far edges, starting before both near edges (negative coordinates).
template <SmemSwizzle kSw>
void check_2d_bf16(uint32_t seed) {
  const HostTensor h = make_tensor(sm90::TmaElem::bf16, {192, 200}, {384}, seed);
  const DeviceBuffer dt = DeviceBuffer::from(h.bytes);
  const std::array<uint32_t, 4> box{64, 64, 1, 1};
  check_box<2, kSw, 64, 128>(h, dt, box, Coords{{0, 0, 0, 0}}, false);
  check_box<2, kSw, 64, 128>(h, dt, box, Coords{{64, 72, 0, 0}}, false);
  check_box<2, kSw, 64, 128>(h, dt, box, Coords{{128, 136, 0, 0}}, false);  // the far corner, exactly
  check_box<2, kSw, 64, 128>(h, dt, box, Coords{{160, 168, 0, 0}}, true);
  check_box<2, kSw, 64, 128>(h, dt, box, Coords{{-24, -5, 0, 0}}, true);
  check_box<2, kSw, 64, 128>(h, dt, box, Coords{{8, 190, 0, 0}}, true);
}

TEST(Sm90Tma, Load2dSwizzle128) {
  REQUIRE_TMA();
  check_2d_bf16<SmemSwizzle::b128>(11);
}
TEST(Sm90Tma, Load2dNoSwizzle) {
  REQUIRE_TMA();
  check_2d_bf16<SmemSwizzle::none>(12);
  // Narrower rows and a row count that is not a multiple of 8.
  const HostTensor h = make_tensor(sm90::TmaElem::f16, {100, 70}, {208}, 13);
  const DeviceBuffer dt = DeviceBuffer::from(h.bytes);
  check_box<2, SmemSwizzle::none, 40, 64>(h, dt, {32, 40, 1, 1}, Coords{{16, 8, 0, 0}}, false);
  check_box<2, SmemSwizzle::none, 40, 64>(h, dt, {32, 40, 1, 1}, Coords{{80, 50, 0, 0}}, true);
}
// The 64-byte and 32-byte swizzles and the u8 / f16 boxes (64 x 128 B, 128B swizzle) are not tested
// here: their test hit an illegal instruction on the H200 (CHANGELOG.md, 2026-12-03, issue 11).
// Q / K / V-like tensors: [tokens, heads, d] as {d, heads, tokens} and [batch, tokens, heads, d] as
// {d, heads, tokens, batch}, one head's rows per box (box {64, 1, rows[, 1]}), and a box over two
// heads (its rows are head-fastest: row = h + 2 * token).
TEST(Sm90Tma, Load3dAnd4d) {
  REQUIRE_TMA();
  {
    const HostTensor h = make_tensor(sm90::TmaElem::bf16, {64, 3, 200}, {128, 384}, 31);
    const DeviceBuffer dt = DeviceBuffer::from(h.bytes);
    check_box<3, SmemSwizzle::b128, 64, 128>(h, dt, {64, 1, 64, 1}, Coords{{0, 2, 16, 0}}, false);
    check_box<3, SmemSwizzle::b128, 64, 128>(h, dt, {64, 1, 64, 1}, Coords{{0, 1, 170, 0}}, true);
    check_box<3, SmemSwizzle::b128, 64, 128>(h, dt, {64, 2, 32, 1}, Coords{{0, 2, 40, 0}}, true);  // heads 2, 3 (out)
    check_box<3, SmemSwizzle::none, 64, 128>(h, dt, {64, 2, 32, 1}, Coords{{0, 0, 100, 0}}, false);
  }
  {
    // Padded strides: heads 160 bytes apart (d = 64 bf16 + 32 bytes), tokens 512, batches 100 x 512.
    const HostTensor h = make_tensor(sm90::TmaElem::bf16, {64, 3, 100, 2}, {160, 512, 51200}, 32);
    const DeviceBuffer dt = DeviceBuffer::from(h.bytes);
    check_box<4, SmemSwizzle::b128, 64, 128>(h, dt, {64, 1, 64, 1}, Coords{{0, 1, 8, 1}}, false);
    check_box<4, SmemSwizzle::b128, 64, 128>(h, dt, {64, 1, 64, 1}, Coords{{0, 2, 40, 1}}, true);
    check_box<4, SmemSwizzle::b128, 64, 128>(h, dt, {64, 1, 32, 2}, Coords{{0, 0, 70, 0}}, true);  // two batches
  }
}

// ---- 3.2 a 4-stage ring over 64 laps ----

constexpr int kRingStages = 4, kRingConsumers = 4, kRingTileBytes = 64 * 128;

// Warp 0 lane 0 produces: lap L refills stage L % 4 after waiting on its empty barrier (parity
// ((L / 4) & 1) ^ 1: the first lap through the ring passes on fresh barriers), announces 8 KiB on the
// full barrier and loads tile L (a 64 x 64 bf16 box, 128B swizzle) there. Warps 1..4 consume: wait
// on full[L % 4] with parity (L / 4) & 1, checksum rows 16 w .. 16 w + 15 of the tile (every element
// times its position, mod 2^32), and release the stage (one arrival per warp: empty barriers expect
// 4). Sleeps on some laps make the producer run ahead into full stages and the consumers wait for
// empty ones, so both barrier directions are exercised over 16 phases each.
__global__ void __launch_bounds__(32 * (1 + kRingConsumers)) tma_ring_kernel(const __grid_constant__ CUtensorMap map,
                                                                             int laps, uint32_t* out) {
  extern __shared__ uint4 smem_u4[];
  __shared__ uint64_t full[kRingStages], empty[kRingStages];
  uint8_t* stages = align_up(smem_u4, 1024);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  if (t == 0) {
    for (int s = 0; s < kRingStages; ++s) {
      sm90::mbarrier_init(&full[s], 1);
      sm90::mbarrier_init(&empty[s], kRingConsumers);
    }
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (warp == 0) {
    if (lane == 0) {
      sm90::tma_prefetch_descriptor(&map);
      for (int lap = 0; lap < laps; ++lap) {
        const int s = lap % kRingStages, k = lap / kRingStages;
        wait_or_trap(&empty[s], uint32_t((k & 1) ^ 1));
        if (lap % 5 == 2) __nanosleep(4000);
        sm90::mbarrier_arrive_expect_tx(&full[s], kRingTileBytes);
        sm90::tma_load_3d(stages + s * kRingTileBytes, &map, &full[s], 0, 0, lap);
      }
    }
    return;
  }
  const int cw = warp - 1;
  for (int lap = 0; lap < laps; ++lap) {
    const int s = lap % kRingStages, k = lap / kRingStages;
    wait_or_trap(&full[s], uint32_t(k & 1));
    const uint8_t* st = stages + s * kRingTileBytes;
    uint32_t sum = 0;
    for (int i = 0; i < 32; ++i) {
      const int e = lane + 32 * i, r = 16 * cw + e / 64, c = e % 64, byte = 2 * c;
      const uint16_t v = *reinterpret_cast<const uint16_t*>(st + r * 128 + (((byte / 16) ^ (r % 8)) * 16) + byte % 16);
      sum += uint32_t(v) * uint32_t(1 + r * 64 + c);
    }
    for (int m = 16; m >= 1; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);  // every lane's reads are done
    if (lap % 7 == 3) __nanosleep(6000);
    __syncwarp();
    if (lane == 0) {
      sm90::mbarrier_arrive(&empty[s]);
      out[lap * kRingConsumers + cw] = sum;
    }
  }
}

TEST(Sm90Tma, RingOfFourStagesOver64Laps) {
  REQUIRE_TMA();
  constexpr int kLaps = 64;
  const HostTensor h = make_tensor(sm90::TmaElem::bf16, {64, 64, kLaps}, {128, 8192}, 41);
  const DeviceBuffer dt = DeviceBuffer::from(h.bytes);
  const CUtensorMap map = map_of<3>(h, dt, {64, 64, 1, 1}, SmemSwizzle::b128);
  std::vector<uint32_t> want(kLaps * kRingConsumers, 0);
  for (int lap = 0; lap < kLaps; ++lap)
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < 64; ++c) {
        uint16_t v;
        std::memcpy(&v, &h.bytes[size_t(lap) * 8192 + r * 128 + c * 2], 2);
        want[lap * kRingConsumers + r / 16] += uint32_t(v) * uint32_t(1 + r * 64 + c);
      }
  for (int rep = 0; rep < 3; ++rep) {  // timing-dependent interleavings: run it a few times
    SCOPED_TRACE("repetition " + std::to_string(rep));
    DeviceBuffer dout = poisoned(want.size() * sizeof(uint32_t));
    const int smem = kRingStages * kRingTileBytes + 1024;
    HIPATTN_CHECK(rt::set_max_dynamic_shared(tma_ring_kernel, smem));
    LAUNCH_CHECKED(tma_ring_kernel<<<1, 32 * (1 + kRingConsumers), smem>>>(map, kLaps, dout.as<uint32_t>()));
    const std::vector<uint32_t> got = download<uint32_t>(dout);
    int bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i] && bad++ < 8)
        ADD_FAILURE() << "lap " << i / kRingConsumers << " consumer warp " << i % kRingConsumers << ": checksum "
                      << got[i] << ", want " << want[i];
    EXPECT_EQ(bad, 0) << "checksums wrong of " << got.size();
  }
}

// ---- 3.3 gathers by a block table ----

// Warp 0 gathers n pieces of `bytes` bytes each (rows or pages), piece i from pool[table[i]], into
// one contiguous stage with bulk_copy_g2s: lane 0 announces n x bytes on the barrier (half through
// mbarrier_expect_tx, the rest with its arrival), then the 32 lanes issue the copies; every thread
// waits and copies the stage out.
__global__ void __launch_bounds__(128) bulk_gather_kernel(const uint8_t* pool, const int* table, int n, uint32_t bytes,
                                                          uint8_t* out) {
  extern __shared__ uint4 smem_u4[];
  __shared__ uint64_t bar;
  uint8_t* stage = align_up(smem_u4, 128);
  const int t = threadIdx.x, lane = t % 32;
  if (t == 0) {
    sm90::mbarrier_init(&bar, 1);
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (t < 32) {
    if (lane == 0) {  // announced in two parts: expect-tx alone, then with the one arrival
      sm90::mbarrier_expect_tx(&bar, uint32_t(n / 2) * bytes);
      sm90::mbarrier_arrive_expect_tx(&bar, uint32_t(n - n / 2) * bytes);
    }
    __syncwarp();
    for (int i = lane; i < n; i += 32)
      sm90::bulk_copy_g2s(stage + size_t(i) * bytes, pool + size_t(table[i]) * bytes, bytes, &bar);
  }
  wait_or_trap(&bar, 0);
  for (int x = t; x < int(uint32_t(n) * bytes / 16); x += blockDim.x)
    reinterpret_cast<uint4*>(out)[x] = reinterpret_cast<const uint4*>(stage)[x];
}

std::vector<int> random_table(int n, int pool_size, uint32_t seed) {
  std::vector<int> p(pool_size);
  std::iota(p.begin(), p.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(p.begin(), p.end(), rng);
  p.resize(n);
  return p;
}

void check_bulk_gather(int n, int pool_size, uint32_t bytes, uint32_t seed) {
  SCOPED_TRACE(std::to_string(n) + " copies of " + std::to_string(bytes) + " bytes from a pool of " +
               std::to_string(pool_size));
  const std::vector<uint8_t> pool = random_elements(size_t(pool_size) * bytes, 1, seed);
  const std::vector<int> table = random_table(n, pool_size, seed + 1);
  const DeviceBuffer dp = DeviceBuffer::from(pool), dtab = DeviceBuffer::from(table);
  const size_t total = size_t(n) * bytes;
  DeviceBuffer dout = poisoned(total);
  const int smem = int(total) + 128;
  HIPATTN_CHECK(rt::set_max_dynamic_shared(bulk_gather_kernel, smem));
  LAUNCH_CHECKED(bulk_gather_kernel<<<1, 128, smem>>>(dp.as<uint8_t>(), dtab.as<int>(), n, bytes, dout.as<uint8_t>()));
  const std::vector<uint8_t> got = download<uint8_t>(dout);
  int bad = 0;
  for (size_t i = 0; i < total; ++i) {
    const size_t piece = i / bytes, b = i % bytes;
    const uint8_t want = pool[size_t(table[piece]) * bytes + b];
    if (got[i] != want && bad++ < 8)
      ADD_FAILURE() << "piece " << piece << " (pool " << table[piece] << ") byte " << b << ": got " << int(got[i])
                    << ", want " << int(want);
  }
  EXPECT_EQ(bad, 0) << "bytes wrong of " << total;
}

TEST(Sm90Tma, BulkCopyGathersRowsAndPages) {
  REQUIRE_TMA();
  check_bulk_gather(64, 512, 256, 51);   // d128 bf16 rows
  check_bulk_gather(8, 32, 4096, 52);    // pages of 16 such rows
  check_bulk_gather(100, 1000, 48, 53);  // an odd multiple of 16
  check_bulk_gather(256, 4096, 16, 54);  // the smallest copy
}

// Warp 0 gathers kRows rows (pool[table[r]], kRowBytes each) into the K-major tile
// KMajorTile<kSw, kRows, kRowBytes> with bulk_copy_row_to_tile_g2s; the tile is read back through
// KMajorTile::offset.
template <SmemSwizzle kSw, int kRows, int kRowBytes>
__global__ void __launch_bounds__(128) row_tile_gather_kernel(const uint8_t* pool, const int* table, uint8_t* out) {
  using Tile = sm90::KMajorTile<kSw, kRows, kRowBytes>;
  extern __shared__ uint4 smem_u4[];
  __shared__ uint64_t bar;
  uint8_t* tile = align_up(smem_u4, uint32_t(Tile::kAlign));
  const int t = threadIdx.x, lane = t % 32;
  if (t == 0) {
    sm90::mbarrier_init(&bar, 1);
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (t < 32) {
    if (lane == 0) sm90::mbarrier_arrive_expect_tx(&bar, uint32_t(Tile::kBytes));
    __syncwarp();
    for (int r = lane; r < kRows; r += 32)
      sm90::bulk_copy_row_to_tile_g2s<kSw, kRows, kRowBytes>(tile, r, pool + size_t(table[r]) * kRowBytes, &bar);
  }
  wait_or_trap(&bar, 0);
  constexpr int kChunks = kRowBytes / 16;
  for (int x = t; x < kRows * kChunks; x += blockDim.x) {
    const int r = x / kChunks, b = (x % kChunks) * 16;
    *reinterpret_cast<uint4*>(out + r * kRowBytes + b) = *reinterpret_cast<const uint4*>(tile + Tile::offset(r, b));
  }
}

template <SmemSwizzle kSw, int kRows, int kRowBytes>
void check_row_tile_gather(int pool_rows, uint32_t seed) {
  SCOPED_TRACE("swizzle " + std::to_string(int(kSw)) + " rows " + std::to_string(kRows) + " row bytes " +
               std::to_string(kRowBytes));
  const std::vector<uint8_t> pool = random_elements(size_t(pool_rows) * kRowBytes, 1, seed);
  const std::vector<int> table = random_table(kRows, pool_rows, seed + 1);
  const DeviceBuffer dp = DeviceBuffer::from(pool), dtab = DeviceBuffer::from(table);
  constexpr int kBytes = kRows * kRowBytes;
  DeviceBuffer dout = poisoned(kBytes);
  auto kern = row_tile_gather_kernel<kSw, kRows, kRowBytes>;
  const int smem = kBytes + sm90::KMajorTile<kSw, kRows, kRowBytes>::kAlign;
  HIPATTN_CHECK(rt::set_max_dynamic_shared(kern, smem));
  LAUNCH_CHECKED(kern<<<1, 128, smem>>>(dp.as<uint8_t>(), dtab.as<int>(), dout.as<uint8_t>()));
  const std::vector<uint8_t> got = download<uint8_t>(dout);
  int bad = 0;
  for (int i = 0; i < kBytes; ++i) {
    const int r = i / kRowBytes, b = i % kRowBytes;
    const uint8_t want = pool[size_t(table[r]) * kRowBytes + b];
    if (got[i] != want && bad++ < 8)
      ADD_FAILURE() << "row " << r << " (pool " << table[r] << ") byte " << b << ": got " << int(got[i]) << ", want "
                    << int(want);
  }
  EXPECT_EQ(bad, 0) << "bytes wrong of " << kBytes;
}

TEST(Sm90Tma, BulkCopyGathersRowsIntoSwizzledTiles) {
  REQUIRE_TMA();
  check_row_tile_gather<SmemSwizzle::b128, 64, 256>(300, 61);  // d128 bf16
  check_row_tile_gather<SmemSwizzle::b128, 64, 128>(100, 62);
  check_row_tile_gather<SmemSwizzle::b64, 32, 128>(70, 63);
  check_row_tile_gather<SmemSwizzle::none, 64, 64>(64, 64);
}

// Thread 0 gathers `n` pages of one head from a page pool [pages, page_rows, heads, 64] (bf16,
// 128-byte rows) through a 4D tensor map {64, heads, page_rows, pages}, box {64, 1, page_rows, 1}:
// page i (pool page table[i]) lands at rows i * page_rows .. of one 128B-swizzled tile, all on one
// barrier.
__global__ void __launch_bounds__(128) tma_page_gather_kernel(const __grid_constant__ CUtensorMap map, const int* table,
                                                              int n, int page_rows, int head, uint8_t* out) {
  extern __shared__ uint4 smem_u4[];
  __shared__ uint64_t bar;
  uint8_t* tile = align_up(smem_u4, 1024);
  const int t = threadIdx.x, rows = n * page_rows;
  if (t == 0) {
    sm90::mbarrier_init(&bar, 1);
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (t == 0) {
    sm90::mbarrier_arrive_expect_tx(&bar, uint32_t(rows) * 128u);
    for (int i = 0; i < n; ++i) sm90::tma_load_4d(tile + i * page_rows * 128, &map, &bar, 0, head, 0, table[i]);
  }
  wait_or_trap(&bar, 0);
  for (int x = t; x < rows * 8; x += blockDim.x) {
    const int r = x / 8, c = x % 8;
    reinterpret_cast<uint4*>(out)[x] = *reinterpret_cast<const uint4*>(tile + r * 128 + ((c ^ (r % 8)) * 16));
  }
}

void check_page_gather(int pool_pages, int page_rows, int heads, int n, int head, uint32_t seed) {
  SCOPED_TRACE(std::to_string(n) + " pages of " + std::to_string(page_rows) + " rows, head " + std::to_string(head) +
               " of " + std::to_string(heads));
  const HostTensor h =
      make_tensor(sm90::TmaElem::bf16, {64, uint64_t(heads), uint64_t(page_rows), uint64_t(pool_pages)},
                  {128, uint64_t(heads) * 128, uint64_t(heads * page_rows) * 128}, seed);
  const std::vector<int> table = random_table(n, pool_pages, seed + 1);
  const DeviceBuffer dt = DeviceBuffer::from(h.bytes), dtab = DeviceBuffer::from(table);
  const CUtensorMap map = map_of<4>(h, dt, {64, 1, uint32_t(page_rows), 1}, SmemSwizzle::b128);
  const int bytes = n * page_rows * 128;
  DeviceBuffer dout = poisoned(bytes);
  const int smem = bytes + 1024;
  HIPATTN_CHECK(rt::set_max_dynamic_shared(tma_page_gather_kernel, smem));
  LAUNCH_CHECKED(tma_page_gather_kernel<<<1, 128, smem>>>(map, dtab.as<int>(), n, page_rows, head, dout.as<uint8_t>()));
  const std::vector<uint8_t> got = download<uint8_t>(dout);
  int bad = 0;
  for (int i = 0; i < bytes; ++i) {
    const int r = i / 128, b = i % 128, page = table[r / page_rows], row = r % page_rows;
    const uint8_t want = h.bytes[(size_t(page) * page_rows + row) * heads * 128 + size_t(head) * 128 + b];
    if (got[i] != want && bad++ < 8)
      ADD_FAILURE() << "row " << r << " (page " << page << " row " << row << ") byte " << b << ": got " << int(got[i])
                    << ", want " << int(want);
  }
  EXPECT_EQ(bad, 0) << "bytes wrong of " << bytes;
}

TEST(Sm90Tma, PagedGatherThroughAPoolTensorMap) {
  REQUIRE_TMA();
  check_page_gather(40, 16, 2, 4, 1, 71);
  check_page_gather(64, 8, 4, 8, 3, 72);
  check_page_gather(20, 32, 2, 2, 0, 73);
}

// ---- 3.4 TMA and gathered tiles feeding wgmma ----

// D (64 x 64, f32) = A B^T, A and B 64 x 64 bf16 K-major tiles with 128B swizzle (one 1024-aligned
// KMajorTile<b128, 64, 128> each), both landing on one barrier announced as 16 KiB: A by one 2D TMA
// box (rows a_row..); B by kMode 0: one 2D TMA box (rows b_row..), 1: four 16-row pages of head b_row
// through a 4D pool map (pages table[0..3]), 2: 64 rows pool[table[r]] (128 bytes each) gathered
// into the tile with bulk_copy_row_to_tile_g2s by warp 0. One warpgroup then issues four k16 wgmma
// with descriptors from KMajorTile::desc_at and writes D through WgmmaAccLayout. The accumulators
// start as the poisoned output (NaN): the first k-step's scale-d = 0 must ignore them.
template <int kMode>
__global__ void __launch_bounds__(128) tma_wgmma_kernel(const __grid_constant__ CUtensorMap a_map,
                                                        const __grid_constant__ CUtensorMap b_map, int a_row, int b_row,
                                                        const uint8_t* b_rows, const int* table, float* out) {
  using Tile = sm90::KMajorTile<SmemSwizzle::b128, 64, 128>;
  using Atom = sm90::WgmmaF16<64, true>;
  extern __shared__ uint4 smem_u4[];
  __shared__ uint64_t bar;
  uint8_t* sa = align_up(smem_u4, 1024);
  uint8_t* sb = sa + Tile::kBytes;
  const int t = threadIdx.x;
  if (t == 0) {
    sm90::mbarrier_init(&bar, 1);
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (t == 0) {
    sm90::mbarrier_arrive_expect_tx(&bar, 2u * Tile::kBytes);
    sm90::tma_load_2d(sa, &a_map, &bar, 0, a_row);
    if constexpr (kMode == 0) sm90::tma_load_2d(sb, &b_map, &bar, 0, b_row);
    if constexpr (kMode == 1)
      for (int i = 0; i < 4; ++i) sm90::tma_load_4d(sb + i * 16 * 128, &b_map, &bar, 0, b_row, 0, table[i]);
  }
  if constexpr (kMode == 2) {
    if (t < 32) {
      __syncwarp();  // after thread 0's announcement
      for (int r = t; r < 64; r += 32)
        sm90::bulk_copy_row_to_tile_g2s<SmemSwizzle::b128, 64, 128>(sb, r, b_rows + size_t(table[r]) * 128, &bar);
    }
  }
  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const auto p = Atom::CLayout::c(t, i);
    d[i] = out[p.row * 64 + p.col];
  }
  wait_or_trap(&bar, 0);
  sm90::wgmma_fence_operand(d);
  sm90::wgmma_fence();
#pragma unroll
  for (int s = 0; s < 4; ++s)
    Atom::ss(d, sm90::make_kstep_desc<Tile>(sa, 32 * s), sm90::make_kstep_desc<Tile>(sb, 32 * s), s == 0 ? 0u : 1u);
  sm90::wgmma_commit_group();
  sm90::wgmma_wait_group<0>();
  sm90::wgmma_fence_operand(d);
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const auto p = Atom::CLayout::c(t, i);
    out[p.row * 64 + p.col] = d[i];
  }
}

template <int kMode>
void check_tma_wgmma(bool small_ints, uint32_t seed) {
  SCOPED_TRACE(std::string(kMode == 0 ? "B by a TMA box" : kMode == 1 ? "B by TMA pages" : "B by gathered rows") +
               (small_ints ? ", small integers" : ", random reals") + ", seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-4, 4);
  std::normal_distribution<float> normal(0.f, 1.f);
  auto fill = [&](size_t n) {
    std::vector<uint16_t> v(n);
    for (auto& x : v) x = float_to_16(small_ints ? float(small(rng)) : normal(rng), true);
    return v;
  };
  auto bytes_of = [](const std::vector<uint16_t>& v) {
    std::vector<uint8_t> b(v.size() * 2);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  // A: 128 x 64, the tile at rows 64..127. B: mode 0 a 96 x 64 matrix (rows 32..95); mode 1 a pool
  // [12 pages, 16 rows, 2 heads, 64] (head 1, four pages by the table); mode 2 300 rows of 64.
  const int a_row = 64;
  const std::vector<uint16_t> a = fill(128 * 64);
  const int pool_pages = 12, heads = 2;
  const int b_row = kMode == 0 ? 32 : kMode == 1 ? 1 : 0;
  const std::vector<uint16_t> b =
      fill(kMode == 0 ? 96 * 64 : kMode == 1 ? size_t(pool_pages) * 16 * heads * 64 : 300 * 64);
  const std::vector<int> table = random_table(kMode == 1 ? 4 : 64, kMode == 1 ? pool_pages : 300, seed + 7);
  // Row j of B (the tile's row j, 64 elements).
  auto b_at = [&](int j, int k) -> uint16_t {
    if (kMode == 0) return b[size_t(b_row + j) * 64 + k];
    if (kMode == 1) return b[((size_t(table[j / 16]) * 16 + j % 16) * heads + b_row) * 64 + k];
    return b[size_t(table[j]) * 64 + k];
  };
  const DeviceBuffer da = DeviceBuffer::from(bytes_of(a)), db = DeviceBuffer::from(bytes_of(b));
  const DeviceBuffer dtab = DeviceBuffer::from(table);
  const CUtensorMap a_map =
      sm90::make_tensor_map_2d(da.ptr, sm90::TmaElem::bf16, 64, 128, 128, 64, 64, SmemSwizzle::b128);
  CUtensorMap b_map = a_map;  // mode 2 reads rows directly (the map is unused)
  if (kMode == 0) b_map = sm90::make_tensor_map_2d(db.ptr, sm90::TmaElem::bf16, 64, 96, 128, 64, 64, SmemSwizzle::b128);
  if (kMode == 1)
    b_map = sm90::make_tensor_map_4d(db.ptr, sm90::TmaElem::bf16, {64, uint64_t(heads), 16, uint64_t(pool_pages)},
                                     {128, uint64_t(heads) * 128, uint64_t(heads) * 16 * 128}, {64, 1, 16, 1},
                                     SmemSwizzle::b128);
  DeviceBuffer dd = poisoned(64 * 64 * sizeof(float));
  const int smem = 2 * 64 * 128 + 1024;
  auto kern = tma_wgmma_kernel<kMode>;
  HIPATTN_CHECK(rt::set_max_dynamic_shared(kern, smem));
  LAUNCH_CHECKED(kern<<<1, 128, smem>>>(a_map, b_map, a_row, b_row, db.as<uint8_t>(), dtab.as<int>(), dd.as<float>()));
  const std::vector<float> d = download<float>(dd);
  int bad = 0;
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j) {
      double ref = 0, mag = 0;
      for (int k = 0; k < 64; ++k) {
        const double p = double(bfloat16_t::from_bits(a[size_t(a_row + i) * 64 + k]).to_float()) *
                         double(bfloat16_t::from_bits(b_at(j, k)).to_float());
        ref += p;
        mag += std::fabs(p);
      }
      const double got = d[i * 64 + j];
      const bool ok = small_ints ? got == ref : std::fabs(got - ref) <= 1e-5 * mag;
      if (!ok && bad++ < 5)
        ADD_FAILURE() << "D[" << i << "][" << j << "] = " << got << ", want " << ref << " (sum |ab| " << mag << ")";
    }
  EXPECT_EQ(bad, 0) << "elements wrong of " << 64 * 64;
}

TEST(Sm90Tma, WgmmaReadsTmaAndGatheredTiles) {
  REQUIRE_TMA_WGMMA();
  check_tma_wgmma<0>(true, 81);
  check_tma_wgmma<0>(false, 82);
  check_tma_wgmma<1>(true, 83);
  check_tma_wgmma<1>(false, 84);
  check_tma_wgmma<2>(true, 85);
  check_tma_wgmma<2>(false, 86);
}
#endif  // HIPATTN_BACKEND_CUDA

}  // namespace
}  // namespace hipattn::testing
