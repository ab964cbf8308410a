// hipattn/arch/sm90/wgmma.hpp: Hopper warpgroup MMA (wgmma.mma_async) atoms, their shared-memory
// matrix descriptors and the wgmma fences, behind the sm_90 arch layer.
//
// A warpgroup is four consecutive warps (threads 128 * g .. 128 * g + 127 of a block, g = warp / 4);
// every instruction here is .sync.aligned: all 128 threads execute it together, convergently.
// The instructions exist on sm_90a only (nvcc -gencode arch=compute_90a,code=sm_90a, which defines
// __CUDA_ARCH_FEAT_SM90_ALL); a device pass for another target compiles them to a trap, so that
// HIPATTN_SM90A_WGMMA (defined here, in such passes only) is what a kernel or a test checks.
// The layout functions and the descriptor encoding are plain constexpr C++ (any backend, host too);
// everything that emits CUDA asm is inside HIPATTN_BACKEND_CUDA.
//
// ---- Accumulator layout (PTX ISA "Matrix fragments for wgmma.mma_async.m64nNk16", fig. "WGMMA
// .m64nNk16 register fragment layout for accumulator matrix D"; the same for .m64nNk32 e4m3) ----
// D is 64 x N (f32), N / 2 registers per thread. Thread t of the warpgroup: warp w = t / 32 holds
// rows 16w .. 16w + 15, lane l = t % 32, g = l / 4, q = l % 4; register i in [0, N / 2):
//     row = 16 * w + g + 8 * ((i / 2) % 2),   col = 8 * (i / 4) + 2 * q + (i % 2)
// i.e. per warp and per 8-column slice j = i / 4, registers 4j .. 4j + 3 are the mma.sync m16n8 C
// fragment (Mma16816Layout::c) of rows 16w .., columns 8j ...
//
// ---- A from registers (the RS atoms) ----
// f16 / bf16 (k16): 4 b32 registers, 8 elements e (low half first), per warp the mma.sync m16n8k16
// A fragment of rows 16w .. 16w + 15:
//     row = 16 * w + g + 8 * ((e / 2) % 2),   k = 2 * q + (e % 2) + 8 * (e / 4)
// e4m3 (k32): 4 b32 registers, 16 bytes e (low byte first), the mma.sync m16n8k32 A fragment:
//     row = 16 * w + g + 8 * ((e / 4) % 2),   k = 4 * q + (e % 4) + 16 * (e / 8)
// (CUTLASS's SM90 GMMA traits state the same: ALayout_64x16 = CLayout_64x16, ALayout_64x32.)
//
// ---- Shared-memory operands: the matrix descriptor (64 bits) ----
//   bits [0, 14)   start address >> 4 (shared-window address; operands 16-byte aligned)
//   bits [16, 30)  leading-dimension byte offset (LBO) >> 4
//   bits [32, 46)  stride-dimension byte offset (SBO) >> 4
//   bits [49, 52)  matrix base offset (0 when every swizzle pattern starts at its alignment, as here)
//   bits [62, 64)  layout type: 0 no swizzle (interleave), 1 128-byte, 2 64-byte, 3 32-byte swizzle
// K-major operands (A as 64 x K rows, B as N x K rows: B^T row-major, the K cache's layout) are
// built from "core matrices" of 8 rows x 16 bytes. SBO is the distance between two 8-row groups (M/N
// direction); LBO the distance between the two 16-byte K-chunks of one instruction (k16 f16 or k32
// e4m3 = 32 bytes) and is only used without swizzle. With a W-byte swizzle (W = 128 / 64 / 32) a row
// of the atom is W bytes, 8 rows make an 8W-byte atom, and the hardware XORs address bits [4, 4 + s)
// (the 16-byte chunk) with bits [7, 7 + s) (s = log2(W / 16)); the atom must therefore start at a
// multiple of 8W bytes. KMajorTile below places a whole rows x row_bytes operand that way and gives
// the descriptor of each 32-byte k-step.
#pragma once
#include <cstdint>

#include "hipattn/arch/sm90/atoms.hpp"
#include "hipattn/platform/config.hpp"

#if defined(HIPATTN_BACKEND_CUDA) && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && \
    defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HIPATTN_SM90A_WGMMA 1
#endif

namespace hipattn::sm90 {

// ---- layouts (host + device, constexpr) ----

// The accumulator of an m64nN atom (f16 / bf16 k16 and e4m3 k32 alike).
template <int N>
struct WgmmaAccLayout {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma: N is a multiple of 8 in [8, 256]");
  static constexpr int kM = 64, kN = N, kThreads = 128, kAccs = N / 2;
  // Thread t (0..127) of the warpgroup, register i (0..N/2-1) -> (row, col) of the 64 x N tile.
  HIPATTN_HOST_DEVICE static constexpr LaneElem c(int t, int i) {
    const int l = t % 32;
    return {16 * (t / 32) + l / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (l % 4) + (i % 2)};
  }
};

// A from registers, 16-bit elements (k16): element e (0..7) of thread t -> (row, k) of the 64 x 16 A.
struct WgmmaA16Layout {
  static constexpr int kM = 64, kK = 16, kElems = 8, kRegs = 4;
  HIPATTN_HOST_DEVICE static constexpr LaneElem a(int t, int e) {
    const LaneElem p = Mma16816Layout::a(t % 32, e);
    return {16 * (t / 32) + p.row, p.col};
  }
};

// A from registers, e4m3 (k32): byte e (0..15) of thread t -> (row, k) of the 64 x 32 A.
struct WgmmaA8Layout {
  static constexpr int kM = 64, kK = 32, kElems = 16, kRegs = 4;
  HIPATTN_HOST_DEVICE static constexpr LaneElem a(int t, int e) {
    const LaneElem p = Mma16832Fp8Layout::a(t % 32, e);
    return {16 * (t / 32) + p.row, p.col};
  }
};

// ---- shared-memory matrix descriptors ----

// The descriptor's layout-type codes (bits 62..63).
enum class SmemSwizzle : uint32_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

// Bytes of one row of a swizzle atom (16 without swizzle: one core-matrix row).
HIPATTN_HOST_DEVICE constexpr int swizzle_row_bytes(SmemSwizzle s) {
  return s == SmemSwizzle::b128 ? 128 : s == SmemSwizzle::b64 ? 64 : s == SmemSwizzle::b32 ? 32 : 16;
}

// The 64-bit descriptor of an operand at shared-window address `smem_addr` (see the top of the file).
// Addresses and offsets are in bytes; their 4 low bits are dropped (they must be 16-byte multiples).
HIPATTN_HOST_DEVICE constexpr uint64_t encode_smem_desc(uint32_t smem_addr, SmemSwizzle swizzle, uint32_t lbo_bytes,
                                                       uint32_t sbo_bytes, uint32_t base_offset = 0) {
  return (uint64_t((smem_addr >> 4) & 0x3FFFu)) | (uint64_t((lbo_bytes >> 4) & 0x3FFFu) << 16) |
         (uint64_t((sbo_bytes >> 4) & 0x3FFFu) << 32) | (uint64_t(base_offset & 0x7u) << 49) |
         (uint64_t(static_cast<uint32_t>(swizzle) & 0x3u) << 62);
}

// The same descriptor with its start address moved by `bytes` (a 16-byte multiple): cheaper than a
// new encode inside a k loop. Shared-window addresses stay below 2^18, so the field cannot carry out.
HIPATTN_HOST_DEVICE constexpr uint64_t smem_desc_advance(uint64_t desc, uint32_t bytes) { return desc + (bytes >> 4); }

// A K-major wgmma operand of kRows rows (M of A, N of B; a multiple of 8) x kRowBytes bytes of K per
// row, in the canonical layout of swizzle mode kSwizzle:
//   the row bytes are split into column blocks of W = swizzle_row_bytes bytes; block b holds, for
//   every row r, W bytes at b * kRows * W + r * W, and its 16-byte chunk c is stored at chunk
//   c ^ x(r), x(r) = (r % 8) / (128 / W)  (128B: r % 8; 64B: (r / 2) % 4; 32B: (r / 4) % 2; none: 0).
// The tile must start at a multiple of kAlign (8 W; 16 without swizzle). A k-step (32 bytes of K:
// k16 f16 / bf16, k32 e4m3) at byte kbyte of the rows starts at kstep_offset(kbyte); its descriptor
// has SBO = 8 W (the next 8 rows) and, without swizzle, LBO = 16 kRows (the next 16-byte K-chunk).
template <SmemSwizzle kSwizzle, int kRows, int kRowBytes>
struct KMajorTile {
  static constexpr int kW = swizzle_row_bytes(kSwizzle);
  static_assert(kRows % 8 == 0, "K-major wgmma operands have a multiple of 8 rows");
  static_assert(kRowBytes % 32 == 0 && kRowBytes % kW == 0, "whole k-steps and whole swizzle atoms per row");
  static constexpr int kBytes = kRows * kRowBytes;
  static constexpr int kAlign = kSwizzle == SmemSwizzle::none ? 16 : 8 * kW;
  static constexpr uint32_t kSbo = kSwizzle == SmemSwizzle::none ? 128u : uint32_t(8 * kW);
  static constexpr uint32_t kLbo = kSwizzle == SmemSwizzle::none ? uint32_t(16 * kRows) : 16u;  // 16: unused
  // Byte offset, in the tile, of byte `byte` (0 .. kRowBytes-1) of row `row`.
  HIPATTN_HOST_DEVICE static constexpr uint32_t offset(int row, int byte) {
    const int x = (row % 8) / (128 / kW);
    const int in = byte % kW;
    return uint32_t((byte / kW) * kRows * kW + row * kW + (((in / 16) ^ x) * 16) + in % 16);
  }
  // Offset of the k-step starting at row byte `kbyte` (a multiple of 32): the descriptor's start.
  HIPATTN_HOST_DEVICE static constexpr uint32_t kstep_offset(int kbyte) {
    return uint32_t((kbyte / kW) * kRows * kW + kbyte % kW);
  }
  // Descriptor of the k-step at row byte `kbyte` of the tile at shared-window address `tile_addr`.
  HIPATTN_HOST_DEVICE static constexpr uint64_t desc_at(uint32_t tile_addr, int kbyte) {
    return encode_smem_desc(tile_addr + kstep_offset(kbyte), kSwizzle, kLbo, kSbo);
  }
};

// An N-major (MN-major) 16-bit wgmma B operand: K rows (the reduction dimension, e.g. keys) of
// kCols elements (N, e.g. head dimensions) each, N contiguous: V [keys, d] as it sits in memory. With
// the 128-byte swizzle it is stored exactly like KMajorTile<b128, kK, 2 kCols> with the K index as
// the row: column block b (64 elements) holds every row's 128 bytes at b * kK * 128 + r * 128, chunks
// XOR-swizzled by r % 8 (so a 64-column TMA box per column block lands it). PTX's canonical MN-major
// 128B layout ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO)) (T = 8 elements) reads it with
// LBO = kK * 128 bytes (the next 64-column block) and SBO = 1024 bytes (the next 8 rows of K). A k16
// step (rows 16 s .. 16 s + 15) starts at byte 2048 s, on a 1024-byte atom boundary.
template <int kK, int kCols>
struct MnMajorTile {
  static_assert(kK % 16 == 0, "whole k16 steps");
  static_assert(kCols % 64 == 0, "whole 128-byte column blocks");
  using Storage = KMajorTile<SmemSwizzle::b128, kK, 2 * kCols>;
  static constexpr int kBytes = Storage::kBytes, kAlign = Storage::kAlign;
  static constexpr uint32_t kLbo = uint32_t(kK) * 128u, kSbo = 1024u;
  HIPATTN_HOST_DEVICE static constexpr uint32_t offset(int row, int col) { return Storage::offset(row, 2 * col); }
  // Descriptor of the k16 step `s` (rows 16 s .. 16 s + 15) of the tile at shared-window address tile_addr.
  HIPATTN_HOST_DEVICE static constexpr uint64_t desc_at(uint32_t tile_addr, int s) {
    return encode_smem_desc(tile_addr + uint32_t(2048 * s), SmemSwizzle::b128, kLbo, kSbo);
  }
};

#if defined(HIPATTN_BACKEND_CUDA)
// ---- device side (CUDA only) ----

template <class Tile>
HIPATTN_DEVICE HIPATTN_FORCEINLINE uint64_t make_kstep_desc(const void* tile, int kbyte) {
  return Tile::desc_at(smem_u32(tile), kbyte);
}

#if defined(HIPATTN_SM90A_WGMMA)
#define HIPATTN_WG_ASM(...) asm volatile(__VA_ARGS__)
#elif defined(__CUDA_ARCH__)
#define HIPATTN_WG_ASM(...) __trap()
#else
#define HIPATTN_WG_ASM(...) (void)0
#endif

// wgmma.fence: before the first wgmma.mma_async, and before any wgmma.mma_async whose accumulator
// or A registers were written by other instructions since the last fence (not needed between
// wgmma.mma_async of one shape chaining the same accumulators).
HIPATTN_DEVICE HIPATTN_FORCEINLINE void wgmma_fence() { HIPATTN_WG_ASM("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Close the wgmma.mma_async issued since the last commit into one wgmma-group.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void wgmma_commit_group() {
  HIPATTN_WG_ASM("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Wait until at most N wgmma-groups of this warpgroup are pending. The accumulators and A registers
// of a wgmma.mma_async must not be read or written before a wait that covers its group; its shared
// memory operands must not be overwritten before then either (and, the reads being per warp, not
// before every warp of the warpgroup has waited: a barrier between the wait and the overwrite).
template <int N>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void wgmma_wait_group() {
  static_assert(N >= 0, "wgmma.wait_group takes a non-negative count");
  HIPATTN_WG_ASM("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Shared-memory writes of this thread's generic proxy (plain stores, cp.async) become visible to
// the async proxy (wgmma operand reads): after the writes, before the barrier that precedes the
// wgmma.mma_async reading them.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void fence_proxy_async_shared() {
  HIPATTN_WG_ASM("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Compiler-only fences: keep the compiler from moving accesses of these registers across the wgmma
// issue / wait points (no instruction is emitted).
template <int K>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void wgmma_fence_operand(float (&r)[K]) {
#pragma unroll
  for (int i = 0; i < K; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int K>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void wgmma_fence_operand(uint32_t (&r)[K]) {
#pragma unroll
  for (int i = 0; i < K; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

namespace detail {
// Operand lists of the asm statements for every N in 8, 16, .., 256 (generated; m = N / 8):
// HIPATTN_WG_REGS_m is "%0, .., %(4m-1)" (the N / 2 accumulators), HIPATTN_WG_ACC_m(d) their "+f"
// constraints; the six strings after them in HIPATTN_WG_FOR_EACH_SHAPE are the operand numbers
// that follow the accumulators (%4m .. %4m+5).
#define HIPATTN_WG_ACC4(d, k) "+f"(d[4 * (k)]), "+f"(d[4 * (k) + 1]), "+f"(d[4 * (k) + 2]), "+f"(d[4 * (k) + 3])
#define HIPATTN_WG_REGS_1 "%0, %1, %2, %3"
#define HIPATTN_WG_REGS_2 HIPATTN_WG_REGS_1 ", %4, %5, %6, %7"
#define HIPATTN_WG_REGS_3 HIPATTN_WG_REGS_2 ", %8, %9, %10, %11"
#define HIPATTN_WG_REGS_4 HIPATTN_WG_REGS_3 ", %12, %13, %14, %15"
#define HIPATTN_WG_REGS_5 HIPATTN_WG_REGS_4 ", %16, %17, %18, %19"
#define HIPATTN_WG_REGS_6 HIPATTN_WG_REGS_5 ", %20, %21, %22, %23"
#define HIPATTN_WG_REGS_7 HIPATTN_WG_REGS_6 ", %24, %25, %26, %27"
#define HIPATTN_WG_REGS_8 HIPATTN_WG_REGS_7 ", %28, %29, %30, %31"
#define HIPATTN_WG_REGS_9 HIPATTN_WG_REGS_8 ", %32, %33, %34, %35"
#define HIPATTN_WG_REGS_10 HIPATTN_WG_REGS_9 ", %36, %37, %38, %39"
#define HIPATTN_WG_REGS_11 HIPATTN_WG_REGS_10 ", %40, %41, %42, %43"
#define HIPATTN_WG_REGS_12 HIPATTN_WG_REGS_11 ", %44, %45, %46, %47"
#define HIPATTN_WG_REGS_13 HIPATTN_WG_REGS_12 ", %48, %49, %50, %51"
#define HIPATTN_WG_REGS_14 HIPATTN_WG_REGS_13 ", %52, %53, %54, %55"
#define HIPATTN_WG_REGS_15 HIPATTN_WG_REGS_14 ", %56, %57, %58, %59"
#define HIPATTN_WG_REGS_16 HIPATTN_WG_REGS_15 ", %60, %61, %62, %63"
#define HIPATTN_WG_REGS_17 HIPATTN_WG_REGS_16 ", %64, %65, %66, %67"
#define HIPATTN_WG_REGS_18 HIPATTN_WG_REGS_17 ", %68, %69, %70, %71"
#define HIPATTN_WG_REGS_19 HIPATTN_WG_REGS_18 ", %72, %73, %74, %75"
#define HIPATTN_WG_REGS_20 HIPATTN_WG_REGS_19 ", %76, %77, %78, %79"
#define HIPATTN_WG_REGS_21 HIPATTN_WG_REGS_20 ", %80, %81, %82, %83"
#define HIPATTN_WG_REGS_22 HIPATTN_WG_REGS_21 ", %84, %85, %86, %87"
#define HIPATTN_WG_REGS_23 HIPATTN_WG_REGS_22 ", %88, %89, %90, %91"
#define HIPATTN_WG_REGS_24 HIPATTN_WG_REGS_23 ", %92, %93, %94, %95"
#define HIPATTN_WG_REGS_25 HIPATTN_WG_REGS_24 ", %96, %97, %98, %99"
#define HIPATTN_WG_REGS_26 HIPATTN_WG_REGS_25 ", %100, %101, %102, %103"
#define HIPATTN_WG_REGS_27 HIPATTN_WG_REGS_26 ", %104, %105, %106, %107"
#define HIPATTN_WG_REGS_28 HIPATTN_WG_REGS_27 ", %108, %109, %110, %111"
#define HIPATTN_WG_REGS_29 HIPATTN_WG_REGS_28 ", %112, %113, %114, %115"
#define HIPATTN_WG_REGS_30 HIPATTN_WG_REGS_29 ", %116, %117, %118, %119"
#define HIPATTN_WG_REGS_31 HIPATTN_WG_REGS_30 ", %120, %121, %122, %123"
#define HIPATTN_WG_REGS_32 HIPATTN_WG_REGS_31 ", %124, %125, %126, %127"
#define HIPATTN_WG_ACC_1(d) HIPATTN_WG_ACC4(d, 0)
#define HIPATTN_WG_ACC_2(d) HIPATTN_WG_ACC_1(d), HIPATTN_WG_ACC4(d, 1)
#define HIPATTN_WG_ACC_3(d) HIPATTN_WG_ACC_2(d), HIPATTN_WG_ACC4(d, 2)
#define HIPATTN_WG_ACC_4(d) HIPATTN_WG_ACC_3(d), HIPATTN_WG_ACC4(d, 3)
#define HIPATTN_WG_ACC_5(d) HIPATTN_WG_ACC_4(d), HIPATTN_WG_ACC4(d, 4)
#define HIPATTN_WG_ACC_6(d) HIPATTN_WG_ACC_5(d), HIPATTN_WG_ACC4(d, 5)
#define HIPATTN_WG_ACC_7(d) HIPATTN_WG_ACC_6(d), HIPATTN_WG_ACC4(d, 6)
#define HIPATTN_WG_ACC_8(d) HIPATTN_WG_ACC_7(d), HIPATTN_WG_ACC4(d, 7)
#define HIPATTN_WG_ACC_9(d) HIPATTN_WG_ACC_8(d), HIPATTN_WG_ACC4(d, 8)
#define HIPATTN_WG_ACC_10(d) HIPATTN_WG_ACC_9(d), HIPATTN_WG_ACC4(d, 9)
#define HIPATTN_WG_ACC_11(d) HIPATTN_WG_ACC_10(d), HIPATTN_WG_ACC4(d, 10)
#define HIPATTN_WG_ACC_12(d) HIPATTN_WG_ACC_11(d), HIPATTN_WG_ACC4(d, 11)
#define HIPATTN_WG_ACC_13(d) HIPATTN_WG_ACC_12(d), HIPATTN_WG_ACC4(d, 12)
#define HIPATTN_WG_ACC_14(d) HIPATTN_WG_ACC_13(d), HIPATTN_WG_ACC4(d, 13)
#define HIPATTN_WG_ACC_15(d) HIPATTN_WG_ACC_14(d), HIPATTN_WG_ACC4(d, 14)
#define HIPATTN_WG_ACC_16(d) HIPATTN_WG_ACC_15(d), HIPATTN_WG_ACC4(d, 15)
#define HIPATTN_WG_ACC_17(d) HIPATTN_WG_ACC_16(d), HIPATTN_WG_ACC4(d, 16)
#define HIPATTN_WG_ACC_18(d) HIPATTN_WG_ACC_17(d), HIPATTN_WG_ACC4(d, 17)
#define HIPATTN_WG_ACC_19(d) HIPATTN_WG_ACC_18(d), HIPATTN_WG_ACC4(d, 18)
#define HIPATTN_WG_ACC_20(d) HIPATTN_WG_ACC_19(d), HIPATTN_WG_ACC4(d, 19)
#define HIPATTN_WG_ACC_21(d) HIPATTN_WG_ACC_20(d), HIPATTN_WG_ACC4(d, 20)
#define HIPATTN_WG_ACC_22(d) HIPATTN_WG_ACC_21(d), HIPATTN_WG_ACC4(d, 21)
#define HIPATTN_WG_ACC_23(d) HIPATTN_WG_ACC_22(d), HIPATTN_WG_ACC4(d, 22)
#define HIPATTN_WG_ACC_24(d) HIPATTN_WG_ACC_23(d), HIPATTN_WG_ACC4(d, 23)
#define HIPATTN_WG_ACC_25(d) HIPATTN_WG_ACC_24(d), HIPATTN_WG_ACC4(d, 24)
#define HIPATTN_WG_ACC_26(d) HIPATTN_WG_ACC_25(d), HIPATTN_WG_ACC4(d, 25)
#define HIPATTN_WG_ACC_27(d) HIPATTN_WG_ACC_26(d), HIPATTN_WG_ACC4(d, 26)
#define HIPATTN_WG_ACC_28(d) HIPATTN_WG_ACC_27(d), HIPATTN_WG_ACC4(d, 27)
#define HIPATTN_WG_ACC_29(d) HIPATTN_WG_ACC_28(d), HIPATTN_WG_ACC4(d, 28)
#define HIPATTN_WG_ACC_30(d) HIPATTN_WG_ACC_29(d), HIPATTN_WG_ACC4(d, 29)
#define HIPATTN_WG_ACC_31(d) HIPATTN_WG_ACC_30(d), HIPATTN_WG_ACC4(d, 30)
#define HIPATTN_WG_ACC_32(d) HIPATTN_WG_ACC_31(d), HIPATTN_WG_ACC4(d, 31)
#define HIPATTN_WG_FOR_EACH_SHAPE(X) \
  X(8, HIPATTN_WG_ACC_1, HIPATTN_WG_REGS_1, "%4", "%5", "%6", "%7", "%8", "%9") \
  X(16, HIPATTN_WG_ACC_2, HIPATTN_WG_REGS_2, "%8", "%9", "%10", "%11", "%12", "%13") \
  X(24, HIPATTN_WG_ACC_3, HIPATTN_WG_REGS_3, "%12", "%13", "%14", "%15", "%16", "%17") \
  X(32, HIPATTN_WG_ACC_4, HIPATTN_WG_REGS_4, "%16", "%17", "%18", "%19", "%20", "%21") \
  X(40, HIPATTN_WG_ACC_5, HIPATTN_WG_REGS_5, "%20", "%21", "%22", "%23", "%24", "%25") \
  X(48, HIPATTN_WG_ACC_6, HIPATTN_WG_REGS_6, "%24", "%25", "%26", "%27", "%28", "%29") \
  X(56, HIPATTN_WG_ACC_7, HIPATTN_WG_REGS_7, "%28", "%29", "%30", "%31", "%32", "%33") \
  X(64, HIPATTN_WG_ACC_8, HIPATTN_WG_REGS_8, "%32", "%33", "%34", "%35", "%36", "%37") \
  X(72, HIPATTN_WG_ACC_9, HIPATTN_WG_REGS_9, "%36", "%37", "%38", "%39", "%40", "%41") \
  X(80, HIPATTN_WG_ACC_10, HIPATTN_WG_REGS_10, "%40", "%41", "%42", "%43", "%44", "%45") \
  X(88, HIPATTN_WG_ACC_11, HIPATTN_WG_REGS_11, "%44", "%45", "%46", "%47", "%48", "%49") \
  X(96, HIPATTN_WG_ACC_12, HIPATTN_WG_REGS_12, "%48", "%49", "%50", "%51", "%52", "%53") \
  X(104, HIPATTN_WG_ACC_13, HIPATTN_WG_REGS_13, "%52", "%53", "%54", "%55", "%56", "%57") \
  X(112, HIPATTN_WG_ACC_14, HIPATTN_WG_REGS_14, "%56", "%57", "%58", "%59", "%60", "%61") \
  X(120, HIPATTN_WG_ACC_15, HIPATTN_WG_REGS_15, "%60", "%61", "%62", "%63", "%64", "%65") \
  X(128, HIPATTN_WG_ACC_16, HIPATTN_WG_REGS_16, "%64", "%65", "%66", "%67", "%68", "%69") \
  X(136, HIPATTN_WG_ACC_17, HIPATTN_WG_REGS_17, "%68", "%69", "%70", "%71", "%72", "%73") \
  X(144, HIPATTN_WG_ACC_18, HIPATTN_WG_REGS_18, "%72", "%73", "%74", "%75", "%76", "%77") \
  X(152, HIPATTN_WG_ACC_19, HIPATTN_WG_REGS_19, "%76", "%77", "%78", "%79", "%80", "%81") \
  X(160, HIPATTN_WG_ACC_20, HIPATTN_WG_REGS_20, "%80", "%81", "%82", "%83", "%84", "%85") \
  X(168, HIPATTN_WG_ACC_21, HIPATTN_WG_REGS_21, "%84", "%85", "%86", "%87", "%88", "%89") \
  X(176, HIPATTN_WG_ACC_22, HIPATTN_WG_REGS_22, "%88", "%89", "%90", "%91", "%92", "%93") \
  X(184, HIPATTN_WG_ACC_23, HIPATTN_WG_REGS_23, "%92", "%93", "%94", "%95", "%96", "%97") \
  X(192, HIPATTN_WG_ACC_24, HIPATTN_WG_REGS_24, "%96", "%97", "%98", "%99", "%100", "%101") \
  X(200, HIPATTN_WG_ACC_25, HIPATTN_WG_REGS_25, "%100", "%101", "%102", "%103", "%104", "%105") \
  X(208, HIPATTN_WG_ACC_26, HIPATTN_WG_REGS_26, "%104", "%105", "%106", "%107", "%108", "%109") \
  X(216, HIPATTN_WG_ACC_27, HIPATTN_WG_REGS_27, "%108", "%109", "%110", "%111", "%112", "%113") \
  X(224, HIPATTN_WG_ACC_28, HIPATTN_WG_REGS_28, "%112", "%113", "%114", "%115", "%116", "%117") \
  X(232, HIPATTN_WG_ACC_29, HIPATTN_WG_REGS_29, "%116", "%117", "%118", "%119", "%120", "%121") \
  X(240, HIPATTN_WG_ACC_30, HIPATTN_WG_REGS_30, "%120", "%121", "%122", "%123", "%124", "%125") \
  X(248, HIPATTN_WG_ACC_31, HIPATTN_WG_REGS_31, "%124", "%125", "%126", "%127", "%128", "%129") \
  X(256, HIPATTN_WG_ACC_32, HIPATTN_WG_REGS_32, "%128", "%129", "%130", "%131", "%132", "%133")

template <int N>
struct WgmmaAsm;

// SS: "d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-a, imm-trans-b]"; RS: "d,
// {a0..a3}, b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-b]" (transposes only for 16-bit
// types; here 0: both operands K-major). scale-d is a predicate: false -> D = A B, true -> D += A B.
#define HIPATTN_WG_SS(N, ACC, REGS, I0, I1, I2, TYPES, K, TRANS)                                             \
  HIPATTN_WG_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, " I2 ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N "k" #K \
                 ".f32" TYPES " {" REGS "}, " I0 ", " I1 ", p, 1, 1" TRANS ";\n}\n"                                 \
                 : ACC(d)                                                                                 \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d))
#define HIPATTN_WG_RS(N, ACC, REGS, I0, I1, I2, I3, I4, I5, TYPES, K, TRANS)                                  \
  HIPATTN_WG_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, " I5 ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N "k" #K  \
                 ".f32" TYPES " {" REGS "}, {" I0 ", " I1 ", " I2 ", " I3 "}, " I4 ", p, 1, 1" TRANS             \
                 ";\n}\n"                                                                                  \
                 : ACC(d)                                                                                  \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d))
#define HIPATTN_WG_DEFINE(N, ACC, REGS, I0, I1, I2, I3, I4, I5)                                                   \
  template <>                                                                                                   \
  struct WgmmaAsm<N> {                                                                                          \
    HIPATTN_DEVICE HIPATTN_FORCEINLINE static void ss_f16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,    \
                                                         uint32_t scale_d) {                                    \
      HIPATTN_WG_SS(N, ACC, REGS, I0, I1, I2, ".f16.f16", 16, HIPATTN_WG_TRANS_SS_16);                                                   \
    }                                                                                                           \
    HIPATTN_DEVICE HIPATTN_FORCEINLINE static void ss_bf16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,   \
                                                          uint32_t scale_d) {                                   \
      HIPATTN_WG_SS(N, ACC, REGS, I0, I1, I2, ".bf16.bf16", 16, HIPATTN_WG_TRANS_SS_16);                                                 \
    }                                                                                                           \
    HIPATTN_DEVICE HIPATTN_FORCEINLINE static void ss_e4m3(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,   \
                                                          uint32_t scale_d) {                                   \
      HIPATTN_WG_SS(N, ACC, REGS, I0, I1, I2, ".e4m3.e4m3", 32, HIPATTN_WG_TRANS_SS_32);                                                 \
    }                                                                                                           \
    HIPATTN_DEVICE HIPATTN_FORCEINLINE static void rs_f16(float (&d)[N / 2], const uint32_t (&a)[4],              \
                                                         uint64_t desc_b, uint32_t scale_d) {                   \
      HIPATTN_WG_RS(N, ACC, REGS, I0, I1, I2, I3, I4, I5, ".f16.f16", 16, HIPATTN_WG_TRANS_RS_16);                                       \
    }                                                                                                           \
    HIPATTN_DEVICE HIPATTN_FORCEINLINE static void rs_bf16(float (&d)[N / 2], const uint32_t (&a)[4],             \
                                                          uint64_t desc_b, uint32_t scale_d) {                  \
      HIPATTN_WG_RS(N, ACC, REGS, I0, I1, I2, I3, I4, I5, ".bf16.bf16", 16, HIPATTN_WG_TRANS_RS_16);                                     \
    }                                                                                                           \
    HIPATTN_DEVICE HIPATTN_FORCEINLINE static void rs_e4m3(float (&d)[N / 2], const uint32_t (&a)[4],             \
                                                          uint64_t desc_b, uint32_t scale_d) {                  \
      HIPATTN_WG_RS(N, ACC, REGS, I0, I1, I2, I3, I4, I5, ".e4m3.e4m3", 32, HIPATTN_WG_TRANS_RS_32);                                     \
    }                                                                                                           \
    HIPATTN_DEVICE HIPATTN_FORCEINLINE static void ss_f16_mn(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, \
                                                            uint32_t scale_d) {                                 \
      HIPATTN_WG_SS(N, ACC, REGS, I0, I1, I2, ".f16.f16", 16, ", 0, 1");                                         \
    }                                                                                                           \
    HIPATTN_DEVICE HIPATTN_FORCEINLINE static void ss_bf16_mn(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,\
                                                             uint32_t scale_d) {                                \
      HIPATTN_WG_SS(N, ACC, REGS, I0, I1, I2, ".bf16.bf16", 16, ", 0, 1");                                       \
    }                                                                                                           \
    HIPATTN_DEVICE HIPATTN_FORCEINLINE static void rs_f16_mn(float (&d)[N / 2], const uint32_t (&a)[4],           \
                                                            uint64_t desc_b, uint32_t scale_d) {                \
      HIPATTN_WG_RS(N, ACC, REGS, I0, I1, I2, I3, I4, I5, ".f16.f16", 16, ", 1");                               \
    }                                                                                                           \
    HIPATTN_DEVICE HIPATTN_FORCEINLINE static void rs_bf16_mn(float (&d)[N / 2], const uint32_t (&a)[4],          \
                                                             uint64_t desc_b, uint32_t scale_d) {               \
      HIPATTN_WG_RS(N, ACC, REGS, I0, I1, I2, I3, I4, I5, ".bf16.bf16", 16, ", 1");                             \
    }                                                                                                           \
  };
// The transpose immediates by instruction K (16: 16-bit types, which take them; 32: e4m3, which does not).
#define HIPATTN_WG_TRANS_SS_16 ", 0, 0"
#define HIPATTN_WG_TRANS_RS_16 ", 0"
#define HIPATTN_WG_TRANS_SS_32 ""
#define HIPATTN_WG_TRANS_RS_32 ""
HIPATTN_WG_FOR_EACH_SHAPE(HIPATTN_WG_DEFINE)
#undef HIPATTN_WG_REGS_1
#undef HIPATTN_WG_REGS_2
#undef HIPATTN_WG_REGS_3
#undef HIPATTN_WG_REGS_4
#undef HIPATTN_WG_REGS_5
#undef HIPATTN_WG_REGS_6
#undef HIPATTN_WG_REGS_7
#undef HIPATTN_WG_REGS_8
#undef HIPATTN_WG_REGS_9
#undef HIPATTN_WG_REGS_10
#undef HIPATTN_WG_REGS_11
#undef HIPATTN_WG_REGS_12
#undef HIPATTN_WG_REGS_13
#undef HIPATTN_WG_REGS_14
#undef HIPATTN_WG_REGS_15
#undef HIPATTN_WG_REGS_16
#undef HIPATTN_WG_REGS_17
#undef HIPATTN_WG_REGS_18
#undef HIPATTN_WG_REGS_19
#undef HIPATTN_WG_REGS_20
#undef HIPATTN_WG_REGS_21
#undef HIPATTN_WG_REGS_22
#undef HIPATTN_WG_REGS_23
#undef HIPATTN_WG_REGS_24
#undef HIPATTN_WG_REGS_25
#undef HIPATTN_WG_REGS_26
#undef HIPATTN_WG_REGS_27
#undef HIPATTN_WG_REGS_28
#undef HIPATTN_WG_REGS_29
#undef HIPATTN_WG_REGS_30
#undef HIPATTN_WG_REGS_31
#undef HIPATTN_WG_REGS_32
#undef HIPATTN_WG_ACC_1
#undef HIPATTN_WG_ACC_2
#undef HIPATTN_WG_ACC_3
#undef HIPATTN_WG_ACC_4
#undef HIPATTN_WG_ACC_5
#undef HIPATTN_WG_ACC_6
#undef HIPATTN_WG_ACC_7
#undef HIPATTN_WG_ACC_8
#undef HIPATTN_WG_ACC_9
#undef HIPATTN_WG_ACC_10
#undef HIPATTN_WG_ACC_11
#undef HIPATTN_WG_ACC_12
#undef HIPATTN_WG_ACC_13
#undef HIPATTN_WG_ACC_14
#undef HIPATTN_WG_ACC_15
#undef HIPATTN_WG_ACC_16
#undef HIPATTN_WG_ACC_17
#undef HIPATTN_WG_ACC_18
#undef HIPATTN_WG_ACC_19
#undef HIPATTN_WG_ACC_20
#undef HIPATTN_WG_ACC_21
#undef HIPATTN_WG_ACC_22
#undef HIPATTN_WG_ACC_23
#undef HIPATTN_WG_ACC_24
#undef HIPATTN_WG_ACC_25
#undef HIPATTN_WG_ACC_26
#undef HIPATTN_WG_ACC_27
#undef HIPATTN_WG_ACC_28
#undef HIPATTN_WG_ACC_29
#undef HIPATTN_WG_ACC_30
#undef HIPATTN_WG_ACC_31
#undef HIPATTN_WG_ACC_32
#undef HIPATTN_WG_ACC4
#undef HIPATTN_WG_FOR_EACH_SHAPE
#undef HIPATTN_WG_SS
#undef HIPATTN_WG_RS
#undef HIPATTN_WG_DEFINE
#undef HIPATTN_WG_TRANS_SS_16
#undef HIPATTN_WG_TRANS_RS_16
#undef HIPATTN_WG_TRANS_SS_32
#undef HIPATTN_WG_TRANS_RS_32
#undef HIPATTN_WG_ASM
}  // namespace detail
#endif  // HIPATTN_BACKEND_CUDA

// ---- atoms ----
// D (64 x N, f32, registers d[N / 2] in WgmmaAccLayout<N>) = A (64 x 16) B (16 x N) [+ D].
// ss: A and B from shared memory (descriptors of K-major tiles, e.g. KMajorTile::desc_at);
// rs: A from registers (a[4] in WgmmaA16Layout), B from shared memory.
// scale_d: 0 -> D = A B (the old D is not read: no need to clear it), otherwise D = A B + D.
// Issue between wgmma_fence() and wgmma_commit_group(); read d only after wgmma_wait_group.
// Start a tile with scale_d = 0 rather than by setting d to constants: ptxas moves constant
// initialisations next to the first wgmma and then serialises the whole wgmma pipeline (its
// "C7515 ... non wgmma instructions defining accumulator registers" note).
template <int N, bool kBf16>
struct WgmmaF16 {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma: N is a multiple of 8 in [8, 256]");
  static constexpr int kM = 64, kN = N, kK = 16, kAccs = N / 2, kARegs = 4, kKBytes = 32;
  using CLayout = WgmmaAccLayout<N>;
  using ALayout = WgmmaA16Layout;
#if defined(HIPATTN_BACKEND_CUDA)
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
                                                    uint32_t scale_d) {
    if constexpr (kBf16) detail::WgmmaAsm<N>::ss_bf16(d, desc_a, desc_b, scale_d);
    else detail::WgmmaAsm<N>::ss_f16(d, desc_a, desc_b, scale_d);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                                    uint32_t scale_d) {
    if constexpr (kBf16) detail::WgmmaAsm<N>::rs_bf16(d, a, desc_b, scale_d);
    else detail::WgmmaAsm<N>::rs_f16(d, a, desc_b, scale_d);
  }
  // ss with B N-major (imm-trans-b = 1; 16-bit types only): A (64 x 16, K-major) from shared memory,
  // desc_b an MnMajorTile k-step.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void ss_mn(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
                                                       uint32_t scale_d) {
    if constexpr (kBf16) detail::WgmmaAsm<N>::ss_bf16_mn(d, desc_a, desc_b, scale_d);
    else detail::WgmmaAsm<N>::ss_f16_mn(d, desc_a, desc_b, scale_d);
  }
  // rs with B N-major (imm-trans-b = 1; 16-bit types only): desc_b describes an MnMajorTile k-step,
  // e.g. V [keys, d] row-major as the B of O = P V.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void rs_mn(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                                       uint32_t scale_d) {
    if constexpr (kBf16) detail::WgmmaAsm<N>::rs_bf16_mn(d, a, desc_b, scale_d);
    else detail::WgmmaAsm<N>::rs_f16_mn(d, a, desc_b, scale_d);
  }
#endif
};

// D (64 x N, f32) = A (64 x 32, e4m3) B (32 x N, e4m3) [+ D]; K-major operands only (the only
// layout wgmma takes for 8-bit types); rs: a[4] in WgmmaA8Layout. OCP e4m3 (NVIDIA's e4m3fn).
// An atom for coming kernels (no kernel uses it yet), tested by tests/device/test_wgmma.cu.
template <int N>
struct WgmmaE4m3 {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma: N is a multiple of 8 in [8, 256]");
  static constexpr int kM = 64, kN = N, kK = 32, kAccs = N / 2, kARegs = 4, kKBytes = 32;
  using CLayout = WgmmaAccLayout<N>;
  using ALayout = WgmmaA8Layout;
#if defined(HIPATTN_BACKEND_CUDA)
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
                                                    uint32_t scale_d) {
    detail::WgmmaAsm<N>::ss_e4m3(d, desc_a, desc_b, scale_d);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                                    uint32_t scale_d) {
    detail::WgmmaAsm<N>::rs_e4m3(d, a, desc_b, scale_d);
  }
#endif
};

}  // namespace hipattn::sm90
