// hipattn/arch/cdna3/arch.hpp: the gfx942 (CDNA3, MI300) implementation of the one architecture interface.
//
// Interface (every arch/<isa>/arch.hpp provides the same names):
//   kTarget, kWaveSize
//   template <bool kBf16, int kDqk, int kMT, int kKN, int kDv = kDqk, KvKind, int kVRow = kDv> using WarpTile
//                                                   (see warp_tile.hpp; kVRow: V's LDS row length)
//   copy_16(lds, gmem, valid), copy_4(...) / copy_commit() / copy_wait<N>()    16-byte global -> LDS copies
//   load_16(gmem, valid) / store_16(lds, chunk), load_8, load_4 / store_4   register-staged copies
//   kCopyModel                                                        the plain copies' model
//   kLdsDmaBytes, BufferRsrc, buffer_rsrc, lds_dma, lds_dma_wait, lds_address, wave_uniform
//                                                                     LDS DMA (concept LdsDmaArch)
//   sync(), lane(), exp2(x), tanh(x), pack2<kBf16>(lo, hi), fp8x2<kFnuz>(a, b), group_max(v, lanes)
//   grid_dependency_wait(), grid_dependency_trigger()     empty: CDNA launches in stream order
// CDNA has no asynchronous global -> LDS copy of 16 bytes into an arbitrary (swizzled) LDS address.
// Its loaders (kernels/common/loaders/) either stage through registers
// (StagedPagedKvLoader: every load of the next tile issued at once, load_16 of an address the caller
// keeps readable with zero selected when !valid, no branch and no wait per load; the current tile is
// computed and the registers stored to LDS afterwards, the compiler's s_waitcnt vmcnt sits at those
// stores), or use LDS DMA (LdsDmaPagedKvLoader): buffer loads with `lds` write kLdsDmaBytes a lane
// at M0 + kLdsDmaBytes * lane, so the loader picks, per lane, the global bytes that belong at that
// LDS address of the swizzled tile. copy_16 / copy_4 remain (a load, then its store) for one-off copies.
#pragma once
#include <type_traits>

#include "hipattn/arch/cdna3/atoms.hpp"
#include "hipattn/arch/concept.hpp"
#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/numeric/fp8.hpp"
#include "hipattn/arch/cdna3/warp_tile.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn::cdna3 {

#if defined(HIPATTN_BACKEND_HIP)
// The CDNA fp8 decode of Arch::dequant_fp8x4, packed by the arch A's pack2 (gfx942 and gfx950 pack
// differently).
template <class A, KvKind kKv, bool kBf16>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void dequant_fp8x4_with(uint32_t x, uint32_t& lo, uint32_t& hi) {
  constexpr bool kFnuz = kKv == KvKind::e4m3fnuz;
  lo = A::template pack2<kBf16>(fp8_e4m3_to_float_normal_only<kFnuz>(x & 0xFFu),
                                fp8_e4m3_to_float_normal_only<kFnuz>((x >> 8) & 0xFFu));
  hi = A::template pack2<kBf16>(fp8_e4m3_to_float_normal_only<kFnuz>((x >> 16) & 0xFFu),
                                fp8_e4m3_to_float_normal_only<kFnuz>(x >> 24));
}
#endif

struct Arch {
  static constexpr Target kTarget = Target::gfx942;
  static constexpr int kWaveSize = 64;
  static constexpr CopyModel kCopyModel = CopyModel::register_staged;
  // The CDNA warp tiles read 16-bit K / V tiles (fp8 caches are converted by the register-staged
  // loader), or, on the fp8 matrix path (the target's q8 kind), Q and K as fp8 codes and V 16-bit.
  template <bool kBf16, int kD, int kMT, int kKN, int kDv = kD, KvKind kKv = KvKind::same16, int kVRow = kDv>
  using WarpTile = std::enable_if_t<kKv == KvKind::same16 || (kv_fp8_matmul(kKv) && kv_kind_on_target(kKv, Target::gfx942)),
                                    cdna3::WarpTile<kBf16, kD, kMT, kKN, kDv, kv_fp8_matmul(kKv), kVRow>>;

#if defined(HIPATTN_BACKEND_HIP)
  // 16 bytes global -> LDS; zeros (and no global access) when !valid. Both addresses 16-byte aligned.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_16(void* lds, const void* g, bool valid) {
    u32x4 v = {0u, 0u, 0u, 0u};
    if (valid) v = *to_global(static_cast<const u32x4*>(g));
    *to_lds(static_cast<u32x4*>(lds)) = v;
  }
  // 4 bytes global -> LDS (a scale value); zero when !valid.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_4(void* lds, const void* g, bool valid) {
    uint32_t v = 0u;
    if (valid) v = *to_global(static_cast<const uint32_t*>(g));
    *to_lds(static_cast<uint32_t*>(lds)) = v;
  }
  // Register-staged copies. load_16 always reads `g` (keep it readable, e.g. the tensor's base for an
  // invalid row) and returns zero when !valid; the select is a v_cndmask, not a branch.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static ::hipattn::u32x4 load_16(const void* g, bool valid) {
    const u32x4 v = *to_global(static_cast<const u32x4*>(g));
    const u32x4 z = {0u, 0u, 0u, 0u};
    const u32x4 r = valid ? v : z;
    return {r[0], r[1], r[2], r[3]};
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store_16(void* lds, const ::hipattn::u32x4& c) {
    *to_lds(static_cast<u32x4*>(lds)) = u32x4{c.x, c.y, c.z, c.w};
  }
  // 8 bytes (a value's 8 slots of one fp8 dimension, RocmKvLayout), as load_16.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static ::hipattn::u32x2 load_8(const void* g, bool valid) {
    const u32x2 v = *to_global(static_cast<const u32x2*>(g));
    const u32x2 z = {0u, 0u};
    const u32x2 r = valid ? v : z;
    return {r[0], r[1]};
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t load_4(const void* g, bool valid) {
    const uint32_t v = *to_global(static_cast<const uint32_t*>(g));
    return valid ? v : 0u;
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store_4(void* lds, uint32_t v) {
    *to_lds(static_cast<uint32_t*>(lds)) = v;
  }
  // Four fp8 codes (byte i = element i) -> the q dtype's 16-bit pairs (elements 0, 1 in `lo`, 2, 3 in
  // `hi`): exact for every code and independent of denormal flushing (numeric/fp8.hpp's
  // normal-only decode), then the warp tile's pack.
  template <KvKind kKv, bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void dequant_fp8x4(uint32_t x, uint32_t& lo, uint32_t& hi) {
    dequant_fp8x4_with<Arch, kKv, kBf16>(x, lo, hi);
  }
  // ---- LDS DMA (buffer loads that write LDS) ----
  // A raw buffer resource (stride 0): base address, num_records = bytes readable from it (a load at
  // or past it returns zeros, and the DMA writes those zeros), and the last word of a plain dword
  // format (gfx9: 0x00020000, as CK's CK_BUFFER_RESOURCE_3RD_DWORD). Wave-uniform by construction
  // (readfirstlane): callers pass uniform values.
  using BufferRsrc = u32x4;
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static BufferRsrc buffer_rsrc(const void* base, uint32_t num_records) {
    const uint64_t a = reinterpret_cast<uint64_t>(base);
    return BufferRsrc{static_cast<uint32_t>(__builtin_amdgcn_readfirstlane(static_cast<int>(a & 0xFFFFFFFFu))),
                      static_cast<uint32_t>(__builtin_amdgcn_readfirstlane(static_cast<int>((a >> 32) & 0xFFFFu))),
                      static_cast<uint32_t>(__builtin_amdgcn_readfirstlane(static_cast<int>(num_records))),
                      0x00020000u};
  }
  // One DMA load: lane l reads kLdsDmaBytes at base + voffset (zeros when voffset + kLdsDmaBytes >
  // num_records) and writes them to LDS at lds + kLdsDmaBytes * l. `lds` is wave-uniform (it goes to
  // M0, an operand: "{m0}"). Inline assembly: the compiler does not see the LDS write, so it does not
  // insert a vmcnt wait before every LDS read that might alias it (what it does for the builtin,
  // serializing the next tile's loads with the current tile's reads); the loader waits with
  // lds_dma_wait() and a barrier before the data is read.
  static constexpr int kLdsDmaBytes = 4;
  static_assert(kLdsDmaBytes == lds_dma_bytes(Target::gfx942), "one figure for host and device");
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void lds_dma(const BufferRsrc& r, uint32_t voffset, uint32_t lds) {
    asm volatile("buffer_load_dword %0, %1, 0 offen lds"
                 :
                 : "v"(voffset), "s"(r), "{m0}"(__builtin_amdgcn_readfirstlane(static_cast<int>(lds)))
                 : "memory");
  }
  // Every DMA load this wave issued has written LDS (then a barrier makes all waves' visible).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void lds_dma_wait() { asm volatile("s_waitcnt vmcnt(0)" ::: "memory"); }
  // The LDS byte address of a pointer into the workgroup's shared memory (what M0 takes).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t lds_address(const void* p) {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>((__attribute__((address_space(3))) const void*)p));
  }
  // A value the wave's lanes agree on, as the compiler sees it (readfirstlane: an SGPR), so that
  // the LDS addresses built from it need no readfirstlane per DMA load.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t wave_uniform(uint32_t x) {
    return static_cast<uint32_t>(__builtin_amdgcn_readfirstlane(static_cast<int>(x)));
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_commit() {}
  template <int N>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy_wait() {}
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void sync() { __syncthreads(); }
  // Programmatic dependent launch (sm_90's griddepcontrol): CDNA launches in stream order
  // (rt::launch), so both are empty and generate no instruction.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void grid_dependency_wait() {}
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void grid_dependency_trigger() {}
  // The ping-pong schedule's barrier (arch/concept.hpp PhasedArch): __syncthreads between two
  // s_sched_barrier 0, so the compiler moves no instruction from one phase into the next.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void phase_barrier() {
    sched_fence();
    __syncthreads();
    sched_fence();
  }
  // s_waitcnt vmcnt(0) as the compiler's own instruction (the intrinsic, where lds_dma_wait is an asm
  // the compiler cannot see into): its count of vector-memory loads in flight restarts from zero here,
  // so it adds no wait of its own before registers loaded earlier are read. Free where every path to it
  // has waited already (the ping-pong loader's issue: each wave waited before the barrier it passed).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void vm_wait_counted() {
    __builtin_amdgcn_s_waitcnt(0x0F70);  // gfx9 encoding: vmcnt 0, expcnt 7 and lgkmcnt 15 (no wait)
  }
  // x, as a value the compiler cannot trace to its definition (an empty asm that may change it): what
  // is derived from it afterwards is computed afresh rather than kept in registers from before. The
  // ping-pong schedule passes the lane through it after its loop, so the epilogue's row coordinates
  // are recomputed there, not held (at 128 VGPRs, spilled) across the loop.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static int recompute_from(int x) {
    asm volatile("" : "+v"(x));
    return x;
  }
  // s_setprio: the wave's priority in the SIMD's issue arbitration (0 lowest, 3 highest).
  template <int kPriority>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void issue_priority() {
    static_assert(kPriority >= 0 && kPriority <= 3, "s_setprio takes 0 to 3");
    __builtin_amdgcn_s_setprio(kPriority);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static int lane() { return lane_id(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float exp2(float x) { return fast_exp2(x); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float tanh(float x) { return fast_tanh(x); }
  template <bool kBf16>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t pack2(float lo, float hi) {
    return Gfx942TileOps::template pack2<kBf16>(lo, hi);  // the warp tile's P packing
  }
  // Two floats -> two fp8 codes (low byte a): RNE, saturating to the largest finite value, NaN a NaN
  // code (numeric/fp8.hpp's rules), with no branch: e4m3fn by fp8_e4m3fn_bits_branchless, e4m3fnuz
  // from the e4m3fn code of 2x.
  template <bool kFnuz>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static uint32_t fp8x2(float a, float b) {
    if constexpr (kFnuz)
      return ::hipattn::fp8_e4m3fnuz_bits_from_fn2x(a, ::hipattn::fp8_e4m3fn_bits_branchless(2.f * a)) |
             (::hipattn::fp8_e4m3fnuz_bits_from_fn2x(b, ::hipattn::fp8_e4m3fn_bits_branchless(2.f * b)) << 8);
    else
      return ::hipattn::fp8_e4m3fn_bits_branchless(a) | (::hipattn::fp8_e4m3fn_bits_branchless(b) << 8);
  }
  // The max over each aligned group of `lanes` lanes (a power of two, 1 to 64): ds_bpermute reads
  // lane ^ m, which lies in the same group.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static float group_max(float v, int lanes) {
    for (int m = 1; m < lanes; m <<= 1)
      v = fmaxf(v, __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane_id() ^ m) << 2, __builtin_bit_cast(int, v))));
    return v;
  }
#endif
};

}  // namespace hipattn::cdna3
