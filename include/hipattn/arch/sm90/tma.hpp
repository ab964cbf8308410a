// hipattn/arch/sm90/tma.hpp: Hopper bulk copies (TMA: cp.async.bulk.tensor, and the non-tensor
// cp.async.bulk) into shared memory, signalled through mbarrier transaction counts, and the host-side
// tensor maps (CUtensorMap) they read, behind the sm_90 arch layer.
//
// Verified on the H200 (tests/device/test_tma.cu): 2D / 3D / 4D bf16 boxes with the 128-byte swizzle
// and without, edges and zero fill, a 4-stage ring over 64 laps, bulk gathers of rows and pages (also
// into swizzled tiles), a paged pool tensor map, and TMA tiles read by wgmma. Not yet: the 64- and
// 32-byte swizzles and u8 / f16 boxes with the 128-byte swizzle (their test hit an illegal
// instruction; CHANGELOG.md, 2026-12-03).
//
// These are the producer side of the warp-specialised pipeline: one thread of a producer warp
// announces the bytes a stage will receive (mbarrier_arrive_expect_tx) and issues the copies; the
// copy engine counts the bytes it lands against the same barrier, and the stage's phase completes
// once every expected arrival and every announced byte is in. Consumers wait on the phase
// (mbarrier_wait) and then read the stage (wgmma or plain loads): the completed phase makes the
// copies' shared-memory writes visible to them.
//
// The instructions exist on sm_90 (PTX ISA 8.0; TMA multicast, not used here, is sm_90a-only). A
// device pass for an older target compiles them to a trap, so that HIPATTN_SM90_TMA (defined here, in
// such passes only) is what a kernel or a test checks. The box layouts are plain constexpr C++ (any
// backend, host too); everything that emits CUDA asm or names the CUDA driver types is inside
// HIPATTN_BACKEND_CUDA, so a HIP or host-only build sees only the layouts.
//
// ---- mbarrier (PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier") ----
// A 64-bit object in shared memory (8-byte aligned) with a phase bit, a pending-arrival count, the
// expected-arrival count it is reset to, and a pending transaction count (tx-count, bytes).
// mbarrier_init(bar, n) starts phase 0 expecting n arrivals. A phase completes when all n arrivals
// have happened and the tx-count is back at zero; the barrier then moves to the next phase (parity
// flips) and expects n arrivals again. expect-tx raises the tx-count, a bulk copy's complete-tx
// lowers it by the bytes it wrote (a phase's tx-count stays within 2^20 - 1 bytes). Waiting is by
// parity: mbarrier_try_wait_parity(bar, p) is true once the phase of parity p has completed, i.e.
// while the current phase's parity is not p; on a fresh barrier (phase 0 running) a wait for parity
// 1 returns at once (it names the phase "before" 0). A ring of N stages therefore waits, at lap L
// (stage L % N, k = L / N): consumers on full[stage] with parity k & 1, the producer on
// empty[stage] with parity (k & 1) ^ 1 (its first lap through the ring passes at once).
// Initialise every barrier from one thread, then fence_barrier_init() and a __syncthreads() before
// any other thread or any copy uses them.
//
// ---- announcing bytes ----
// Announce a stage's bytes before (or in the same thread's program order as) issuing its copies:
// mbarrier_arrive_expect_tx(bar, total) by one thread, then the copies, from that thread or from
// others after a __syncwarp / barrier that orders them after the announcement. A TMA box always
// counts its whole box (box[0] x .. x box[rank-1] x element bytes), elements outside the tensor
// included: those are written as zeros (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), not skipped.
//
// ---- TMA box layout in shared memory ----
// The box lands densely, innermost dimension first: box element (i0, i1, .., i{r-1}) at byte
// row * inner_bytes + i0 * elem_bytes with row = i1 + box1 * (i2 + box2 * i3) (all outer box
// dimensions flatten into rows) and inner_bytes = box0 * elem_bytes, before the swizzle.
// Swizzle W (32 / 64 / 128 bytes; the map's CU_TENSOR_MAP_SWIZZLE_{32B,64B,128B}) then permutes the
// 16-byte chunks of each W-byte span by XORing shared-memory address bits [4, 4 + s) with bits
// [7, 7 + s), s = log2(W / 16), so the destination must start at a multiple of 8 W (1024 bytes for
// 128B; TMA itself needs 128) for the pattern to start at row 0. With inner_bytes = W:
//   128B: 16-byte chunk c of row r lands at chunk c ^ (r % 8) of its 128-byte row (8 rows x 128
//         bytes = one 1024-byte atom);  64B: c ^ ((r / 2) % 4);  32B: c ^ ((r / 4) % 2),
// which is exactly KMajorTile<kSwizzle, rows, W> of wgmma.hpp (one column block): a box of rows x W
// bytes loaded with swizzle W is a K-major wgmma operand as it stands, its descriptors are
// KMajorTile::desc_at. Rows wider than W (d = 128 bf16: 256 bytes) take one box per W-byte column
// block (coordinate c0 = b * W / elem_bytes) into the tile's block b at b * rows * W: KMajorTile's
// column-block order. TmaBox below states the layout; tests/device/test_tma.cu checks it, and
// wgmma reading it, on the GPU.
//
// ---- paged K/V ----
// Two ways to land a paged K or V in the same swizzled, barrier-signalled stage:
//   - a tensor map over the whole page pool with the page as its outermost coordinate (an NHD pool
//     [pages, page_size, heads, d]: dims {d, heads, page_size, pages}, box {W / elem, 1, page_size,
//     1}) and one tma_load_4d per page, page id from the block table: pages of a multiple of 8 rows
//     each fill whole swizzle atoms;
//   - bulk_copy_g2s (cp.async.bulk, no tensor map) of whole rows or whole pages, or, into a swizzled
//     tile, bulk_copy_row_to_tile_g2s: one 16-byte copy per chunk to its swizzled place.
// Either way the producer announces the stage's total bytes once, and the consumers see one phase.
//
// ---- host side: tensor maps ----
// make_tensor_map_2d / 3d / 4d encode a CUtensorMap (cuTensorMapEncodeTiled) for bf16, f16 or 8-bit
// elements, with no swizzle or a 32 / 64 / 128-byte one (SmemSwizzle, shared with wgmma.hpp), and
// throw hipattn::Error when the arguments break the driver's rules (invalid_argument, checked first,
// with the offending value) or the driver refuses them (runtime). Pass the map to a kernel as a
// `const __grid_constant__ CUtensorMap` parameter and hand its address to tma_load_*.
// cuTensorMapEncodeTiled is a driver API (libcuda) function. The library does not link libcuda
// (-lcuda): the CUDA runtime, which every CUDA build links, already has the driver loaded and hands
// out its entry points by name (cudaGetDriverEntryPointByVersion, CUDA 12.5 and later; the older
// cudaGetDriverEntryPoint is deprecated in CUDA 13), and cudaTypedefs.h has the pointer type. So a
// binary builds without a libcuda to link against (toolkit-only machines, stub-less containers) and
// takes the driver function of whatever driver it runs on.
#pragma once
#include <cstdint>

#include "hipattn/arch/sm90/atoms.hpp"
#include "hipattn/arch/sm90/wgmma.hpp"
#include "hipattn/platform/config.hpp"

#if defined(HIPATTN_BACKEND_CUDA)
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <array>
#include <string>

#include "hipattn/platform/error.hpp"
#endif

#if defined(HIPATTN_BACKEND_CUDA) && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#define HIPATTN_SM90_TMA 1
#endif

namespace hipattn::sm90 {

// ---- layouts (host + device, constexpr) ----

// A TMA box of kRows rows (all outer box dimensions flattened) x kInnerBytes bytes (box[0] x element
// bytes) as it lands in shared memory at a kAlign-aligned destination with swizzle kSwizzle (see the
// top of the file). Without swizzle the rows are dense; with one, kInnerBytes is the swizzle width W
// and the box is the K-major wgmma operand KMajorTile<kSwizzle, kRows, W>.
template <SmemSwizzle kSwizzle, int kRows, int kInnerBytes>
struct TmaBox {
  static constexpr int kW = swizzle_row_bytes(kSwizzle);
  static_assert(kRows >= 1, "box rows");
  static_assert(kInnerBytes % 16 == 0 && kInnerBytes > 0, "a box row is a multiple of 16 bytes");
  static_assert(kSwizzle == SmemSwizzle::none || kInnerBytes == kW,
                "a swizzled box here has rows of exactly the swizzle width (one KMajorTile column block)");
  static_assert(kSwizzle == SmemSwizzle::none || kRows % 8 == 0, "a swizzled box is whole 8-row atoms");
  static constexpr int kBytes = kRows * kInnerBytes;
  static constexpr int kAlign = kSwizzle == SmemSwizzle::none ? 128 : (8 * kW > 128 ? 8 * kW : 128);
  // Byte offset, in the box, of byte `byte` (0 .. kInnerBytes-1) of row `row`.
  HIPATTN_HOST_DEVICE static constexpr uint32_t offset(int row, int byte) {
    if constexpr (kSwizzle == SmemSwizzle::none) {
      return uint32_t(row * kInnerBytes + byte);
    } else {
      return KMajorTile<kSwizzle, kRows, kInnerBytes>::offset(row, byte);
    }
  }
};

#if defined(HIPATTN_BACKEND_CUDA)
// ---- host side (CUDA only): tensor maps ----

// Element types of a tensor map: 16-bit floats, and bytes (fp8 codes, int8 / uint8: copied as is).
enum class TmaElem { bf16, f16, u8 };

inline constexpr int tma_elem_bytes(TmaElem e) { return e == TmaElem::u8 ? 1 : 2; }

namespace detail {

inline const char* tma_elem_name(TmaElem e) {
  return e == TmaElem::bf16 ? "bf16" : e == TmaElem::f16 ? "f16" : "u8";
}

template <size_t N, class T>
std::string tma_list(const std::array<T, N>& a) {
  std::string s = "{";
  for (size_t i = 0; i < N; ++i) s += (i ? ", " : "") + std::to_string(a[i]);
  return s + "}";
}

// The driver's cuTensorMapEncodeTiled, looked up once through the runtime (no -lcuda, see the top).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &status);
#else
    const cudaError_t err = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &status);
#endif
    if (err != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
      const std::string why = err != cudaSuccess ? std::string(cudaGetErrorString(err))
                              : status == cudaDriverEntryPointVersionNotSufficent
                                  ? std::string("the driver is older than CUDA 12.0")
                                  : std::string("the driver has no such function");
      (void)cudaGetLastError();  // not left behind for a later launch check
      throw Error(ErrorCode::runtime, "cuTensorMapEncodeTiled",
                  "cannot get the driver entry point (needs a CUDA 12.0+ driver): " + why);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

inline const char* cu_result_name(CUresult r) {
  switch (r) {
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_DEINITIALIZED: return "CUDA_ERROR_DEINITIALIZED";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    default: return "CUresult";
  }
}

}  // namespace detail

// A tiled tensor map of rank kRank over global memory at `gmem`. dims and box are in elements,
// innermost (contiguous) dimension first; strides[i] is the byte distance between consecutive
// indices of dimension i + 1 (dimension 0 is contiguous). Elements outside dims read as zeros.
// The rules checked (the driver's, cuda.h "cuTensorMapEncodeTiled"): gmem 16-byte aligned; every
// dim in [1, 2^32]; every stride a multiple of 16 below 2^40; every box in [1, 256]; box[0] x element
// bytes a multiple of 16 and, with a swizzle, at most its width W (W exactly to match TmaBox /
// KMajorTile). L2 promotion is 128 bytes. Throws hipattn::Error (see the top).
template <int kRank>
inline CUtensorMap make_tensor_map(const void* gmem, TmaElem elem, const std::array<uint64_t, kRank>& dims,
                                   const std::array<uint64_t, kRank - 1>& strides_bytes,
                                   const std::array<uint32_t, kRank>& box, SmemSwizzle swizzle) {
  static_assert(kRank >= 1 && kRank <= 5, "tensor maps have rank 1 to 5");
  const int eb = tma_elem_bytes(elem);
  const auto context = [&] {
    return " (rank " + std::to_string(kRank) + ", " + detail::tma_elem_name(elem) + ", dims " + detail::tma_list(dims) +
           ", strides " + detail::tma_list(strides_bytes) + " bytes, box " + detail::tma_list(box) + ", swizzle " +
           (swizzle == SmemSwizzle::none ? std::string("none") : std::to_string(swizzle_row_bytes(swizzle)) + "B") +
           ")";
  };
  const auto bad = [&](const std::string& what) {
    return Error(ErrorCode::invalid_argument, "tensor map", what + context());
  };
  if (gmem == nullptr) throw bad("the global address is null");
  if (reinterpret_cast<uintptr_t>(gmem) % 16 != 0) throw bad("the global address is not 16-byte aligned");
  for (int i = 0; i < kRank; ++i) {
    if (dims[i] < 1 || dims[i] > (uint64_t(1) << 32))
      throw bad("dims[" + std::to_string(i) + "] = " + std::to_string(dims[i]) + " is outside [1, 2^32]");
    if (box[i] < 1 || box[i] > 256)
      throw bad("box[" + std::to_string(i) + "] = " + std::to_string(box[i]) + " is outside [1, 256]");
  }
  for (int i = 0; i < kRank - 1; ++i)
    if (strides_bytes[i] % 16 != 0 || strides_bytes[i] >= (uint64_t(1) << 40))
      throw bad("strides[" + std::to_string(i) + "] = " + std::to_string(strides_bytes[i]) +
                " bytes is not a multiple of 16 below 2^40");
  const uint32_t inner = box[0] * uint32_t(eb);
  if (inner % 16 != 0)
    throw bad("the box's inner extent, " + std::to_string(inner) + " bytes, is not a multiple of 16");
  if (swizzle != SmemSwizzle::none && inner > uint32_t(swizzle_row_bytes(swizzle)))
    throw bad("the box's inner extent, " + std::to_string(inner) + " bytes, exceeds the swizzle width");

  const CUtensorMapDataType type = elem == TmaElem::bf16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : elem == TmaElem::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                          : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  const CUtensorMapSwizzle sw = swizzle == SmemSwizzle::b128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                : swizzle == SmemSwizzle::b64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                : swizzle == SmemSwizzle::b32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                              : CU_TENSOR_MAP_SWIZZLE_NONE;
  cuuint64_t gdim[kRank], gstride[kRank > 1 ? kRank - 1 : 1] = {};
  cuuint32_t bdim[kRank], estride[kRank];
  for (int i = 0; i < kRank; ++i) {
    gdim[i] = dims[i];
    bdim[i] = box[i];
    estride[i] = 1;
  }
  for (int i = 0; i < kRank - 1; ++i) gstride[i] = strides_bytes[i];
  CUtensorMap map{};
  const CUresult r =
      detail::tensor_map_encoder()(&map, type, cuuint32_t(kRank), const_cast<void*>(gmem), gdim, gstride, bdim, estride,
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(ErrorCode::runtime, "cuTensorMapEncodeTiled",
                std::string("the driver refused the tensor map: ") + detail::cu_result_name(r) + " (" +
                    std::to_string(int(r)) + ")" + context());
  return map;
}

// 2D: a row-major matrix of dim1 rows x dim0 elements, rows stride1_bytes apart; box1 rows x box0.
// An atom for coming kernels (no kernel uses it yet), tested by tests/device/test_tma.cu.
inline CUtensorMap make_tensor_map_2d(const void* gmem, TmaElem elem, uint64_t dim0, uint64_t dim1,
                                      uint64_t stride1_bytes, uint32_t box0, uint32_t box1, SmemSwizzle swizzle) {
  return make_tensor_map<2>(gmem, elem, {dim0, dim1}, {stride1_bytes}, {box0, box1}, swizzle);
}
// 3D and 4D, e.g. Q / K / V [tokens, heads, d] as {d, heads, tokens} with strides {d, heads x d} x
// element bytes (or their padded strides), box {64 or W / element bytes, 1, rows}.
inline CUtensorMap make_tensor_map_3d(const void* gmem, TmaElem elem, const std::array<uint64_t, 3>& dims,
                                      const std::array<uint64_t, 2>& strides_bytes, const std::array<uint32_t, 3>& box,
                                      SmemSwizzle swizzle) {
  return make_tensor_map<3>(gmem, elem, dims, strides_bytes, box, swizzle);
}
inline CUtensorMap make_tensor_map_4d(const void* gmem, TmaElem elem, const std::array<uint64_t, 4>& dims,
                                      const std::array<uint64_t, 3>& strides_bytes, const std::array<uint32_t, 4>& box,
                                      SmemSwizzle swizzle) {
  return make_tensor_map<4>(gmem, elem, dims, strides_bytes, box, swizzle);
}

// ---- device side (CUDA only) ----

#if defined(HIPATTN_SM90_TMA)
#define HIPATTN_TMA_ASM(...) asm volatile(__VA_ARGS__)
#elif defined(__CUDA_ARCH__)
#define HIPATTN_TMA_ASM(...) __trap()
#else
#define HIPATTN_TMA_ASM(...) (void)0
#endif

// Initialise the barrier at `bar` (shared memory, 8-byte aligned) to phase 0 expecting `count`
// arrivals per phase. One thread; then fence_barrier_init() and a CTA barrier before use.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mbarrier_init(uint64_t* bar, uint32_t count) {
  HIPATTN_TMA_ASM("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}
// Make the initialisations above visible to the other threads and to the copy engine (the async
// proxy) that signals the barriers: fence.mbarrier_init, whose only form is .release.cluster (a CTA
// launched without clusters is a cluster of one); its ordering reaches the other threads through the
// following __syncthreads().
HIPATTN_DEVICE HIPATTN_FORCEINLINE void fence_barrier_init() {
  HIPATTN_TMA_ASM("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Arrive (one of the phase's expected arrivals; release semantics: this thread's earlier accesses,
// e.g. its reads of the stage being released, happen before the phase completes).
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mbarrier_arrive(uint64_t* bar) {
  HIPATTN_TMA_ASM("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// Raise the current phase's tx-count by `bytes` and arrive: the producer's announcement of a stage.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  HIPATTN_TMA_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
                  : "memory");
}
// Raise the tx-count by `bytes` without arriving (more bytes for a phase whose arrival is elsewhere).
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mbarrier_expect_tx(uint64_t* bar, uint32_t bytes) {
  HIPATTN_TMA_ASM("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
                  : "memory");
}
// True once the phase of parity `phase` (0 / 1) has completed (see the top: on a fresh barrier,
// parity 1 is complete). Acquire semantics: after a true result the completed phase's copies and the
// accesses its arrivals released are visible to this thread. The instruction may suspend the thread
// for a while before it answers false (a system-dependent time limit), so a loop on it is not a hot
// spin.
HIPATTN_DEVICE HIPATTN_FORCEINLINE bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t phase) {
#if defined(HIPATTN_SM90_TMA)
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.b32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(smem_u32(bar)), "r"(phase)
      : "memory");
  return done != 0u;
#elif defined(__CUDA_ARCH__)
  (void)bar;
  (void)phase;
  __trap();
  return true;
#else
  (void)bar;
  (void)phase;
  return true;
#endif
}
// Block until the phase of parity `phase` has completed.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mbarrier_wait(uint64_t* bar, uint32_t phase) {
  while (!mbarrier_try_wait_parity(bar, phase)) {
  }
}

// Prefetch the tensor map at `map` (a __grid_constant__ parameter, or const / global memory) into the
// descriptor cache: once, early, from the thread that will issue the loads.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void tma_prefetch_descriptor(const CUtensorMap* map) {
  HIPATTN_TMA_ASM("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Load the box of `map` whose first element has coordinates (c0, c1[, c2[, c3]]) (elements,
// innermost first; any int, boxes may start or reach outside the tensor: those elements are zeros)
// into shared memory at `smem_dst` (128-byte aligned; 8 W with a W-byte swizzle, see the top), and
// count its bytes against `bar` (complete-tx). One thread issues; the barrier's phase must have
// announced the bytes (mbarrier_arrive_expect_tx).
HIPATTN_DEVICE HIPATTN_FORCEINLINE void tma_load_2d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0,
                                                    int c1) {
  HIPATTN_TMA_ASM(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          smem_u32(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
      : "memory");
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE void tma_load_3d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0,
                                                    int c1, int c2) {
  HIPATTN_TMA_ASM(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];\n" ::"r"(smem_u32(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
HIPATTN_DEVICE HIPATTN_FORCEINLINE void tma_load_4d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0,
                                                    int c1, int c2, int c3) {
  HIPATTN_TMA_ASM(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];\n" ::"r"(smem_u32(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// Copy `bytes` contiguous bytes from global memory at `gmem_src` to shared memory at `smem_dst`
// (cp.async.bulk, no tensor map, no swizzle), counted against `bar` like a TMA box: both addresses
// 16-byte aligned, bytes a multiple of 16. The gathered copy of paged K / V: one row or one page per
// copy, from block-table addresses.
HIPATTN_DEVICE HIPATTN_FORCEINLINE void bulk_copy_g2s(void* smem_dst, const void* gmem_src, uint32_t bytes,
                                                      uint64_t* bar) {
  HIPATTN_TMA_ASM("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                      smem_u32(smem_dst)),
                  "l"(static_cast<uint64_t>(__cvta_generic_to_global(gmem_src))), "r"(bytes), "r"(smem_u32(bar))
                  : "memory");
}

// Copy one kRowBytes-byte row from global memory into row `row` of the K-major wgmma operand
// KMajorTile<kSwizzle, kRows, kRowBytes> at `tile` (aligned to its kAlign), one 16-byte bulk copy
// per chunk to its swizzled place: kRowBytes bytes counted against `bar`. The per-row gather of paged
// K / V into a swizzled stage (pages of fewer than 8 rows, or rows from anywhere); whole pages of 8k
// rows go faster as one TMA box each (see the top).
// An atom for coming kernels (no kernel uses it yet), tested by tests/device/test_tma.cu.
template <SmemSwizzle kSwizzle, int kRows, int kRowBytes>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void bulk_copy_row_to_tile_g2s(void* tile, int row, const void* gmem_row,
                                                                  uint64_t* bar) {
  using Tile = KMajorTile<kSwizzle, kRows, kRowBytes>;
#pragma unroll
  for (int c = 0; c < kRowBytes / 16; ++c)
    bulk_copy_g2s(static_cast<uint8_t*>(tile) + Tile::offset(row, 16 * c),
                  static_cast<const uint8_t*>(gmem_row) + 16 * c, 16u, bar);
}

#undef HIPATTN_TMA_ASM
#endif  // HIPATTN_BACKEND_CUDA

}  // namespace hipattn::sm90
