// hipattn/kernels/common/loaders/query_load.hpp: a work item's Q rows into their swizzled LDS tile,
// through registers (the CDNA loaders; fp8 queries converted exactly, or kept as codes on the fp8
// matrix path), and the query element of a row (the args' query_element hook).
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/work.hpp"
#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/tile/lds_layout.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/arch/arch.hpp"

namespace hipattn::detail {

// Element `col` of the query of row `rc`, in elements of T: the arguments' query_element hook
// (kernels/common/kernel_args.hpp; MLA's reads its rope columns from a second tensor).
template <class T, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE const T* query_element(const Args& a, const RowCoord& rc, int col) {
  return a.template query_element<T>(rc.token, rc.q_head, col);
}

// fp8 queries (a.q_kind, codes of format kQ): each 8-code chunk read through registers and converted
// exactly to the instance's 16-bit type (Arch::dequant_fp8x4), into the same swizzled LDS tile a
// 16-bit Q fills; q_scale is applied with the score scale, not here.
template <class Cfg, class Arch, KvKind kQ, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q_fp8(const Args& a, const AttentionWork& w, uint16_t* lds_q, int tid) {
  using QTile = SwizzledTile<1, Cfg::kDqk>;
  constexpr int kDqk = Cfg::kDqk, kThreads = Cfg::kThreads;
  constexpr int kChunks = Cfg::kBM * (kDqk / 8);
  const uint8_t* q8 = reinterpret_cast<const uint8_t*>(a.q);
  // once a workgroup: not unrolled (the conversion is compiled once a format, not once a chunk)
#pragma unroll 1
  for (int idx = tid; idx < kChunks; idx += kThreads) {
    const int row = idx / (kDqk / 8), c = idx % (kDqk / 8);
    const RowCoord rc = row_coord(a, w, row);
    const uint8_t* src = rc.valid ? query_element<uint8_t>(a, rc, c * 8) : q8;
    const u32x2 raw = Arch::load_8(src, rc.valid);
    uint32_t v[4];
    Arch::template dequant_fp8x4<kQ, Cfg::kBf16>(raw.x, v[0], v[1]);
    Arch::template dequant_fp8x4<kQ, Cfg::kBf16>(raw.y, v[2], v[3]);
    Arch::store_16(lds_q + QTile::chunk_index(row, c), u32x4{v[0], v[1], v[2], v[3]});
  }
}

// Q in either form: the fp8 conversion above, else false (the caller copies 16-bit Q its own way).
template <class Cfg, class Arch, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE bool load_q_if_fp8(const Args& a, const AttentionWork& w, uint16_t* lds_q, int tid) {
  if (a.q_kind == KvKind::e4m3fn) load_q_fp8<Cfg, Arch, KvKind::e4m3fn>(a, w, lds_q, tid);
  else if (a.q_kind == KvKind::e4m3fnuz) load_q_fp8<Cfg, Arch, KvKind::e4m3fnuz>(a, w, lds_q, tid);
  else return false;
  return true;
}

// The fp8 matrix path on CDNA (Cfg::kQ8): Q's codes, 16 a chunk, through registers into the swizzled
// tile of code pairs (Cfg::QLds), zero for invalid rows. A gfx942 instance (e4m3fnuz_q8, its MFMA
// reads e4m3fnuz) re-encodes e4m3fn queries as the fnuz codes of half their values, exactly
// (numeric/fp8.hpp fp8_e4m3fn_codes_as_fnuz_half; the kernel multiplies the scores by
// q8_query_factor).
template <class Cfg, class Arch, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q_codes_via_registers(const Args& a, const AttentionWork& w,
                                                                    uint16_t* lds_q, int tid) {
  using Q8Tile = SwizzledTile<1, Cfg::kDqk / 2>;
  constexpr int kPerRow = Cfg::kDqk / 16, kChunks = Cfg::kBM * kPerRow;
  const bool halve = Cfg::kKv == KvKind::e4m3fnuz_q8 && a.q_kind == KvKind::e4m3fn;
  const uint8_t* q8 = reinterpret_cast<const uint8_t*>(a.q);
  for (int idx = tid; idx < kChunks; idx += Cfg::kThreads) {
    const int row = idx / kPerRow, c = idx % kPerRow;
    const RowCoord rc = row_coord(a, w, row);
    u32x4 v = Arch::load_16(rc.valid ? query_element<uint8_t>(a, rc, c * 16) : q8, rc.valid);
    if (halve)
      v = u32x4{fp8_e4m3fn_codes_as_fnuz_half(v.x), fp8_e4m3fn_codes_as_fnuz_half(v.y),
                fp8_e4m3fn_codes_as_fnuz_half(v.z), fp8_e4m3fn_codes_as_fnuz_half(v.w)};
    Arch::store_16(lds_q + Q8Tile::chunk_index(row, c), v);
  }
}

// Q of a work item (kBM rows x kDqk, zero-filled for invalid rows) into its swizzled LDS tile,
// through registers: every load issued, then the stores (the CDNA loaders). fp8 queries are
// converted (load_q_if_fp8), or kept as codes on the fp8 matrix path.
template <class Cfg, class Arch, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q_via_registers(const Args& a, const AttentionWork& w, uint16_t* lds_q,
                                                              int tid) {
  if constexpr (Cfg::kQ8) {
    load_q_codes_via_registers<Cfg, Arch>(a, w, lds_q, tid);
    return;
  }
  if (load_q_if_fp8<Cfg, Arch>(a, w, lds_q, tid)) return;
  using QTile = SwizzledTile<1, Cfg::kDqk>;
  constexpr int kDqk = Cfg::kDqk, kThreads = Cfg::kThreads;
  constexpr int kChunks = Cfg::kBM * (kDqk / 8);
  constexpr int kQIters = (kChunks + kThreads - 1) / kThreads;
  u32x4 q[kQIters];
#pragma unroll
  for (int i = 0; i < kQIters; ++i) {
    const int idx = tid + i * kThreads;
    const int row = (idx < kChunks ? idx : 0) / (kDqk / 8), c = idx % (kDqk / 8);
    const RowCoord rc = row_coord(a, w, row);
    const bool valid = idx < kChunks && rc.valid;
    q[i] = Arch::load_16(valid ? query_element<uint16_t>(a, rc, c * 8) : a.q, valid);
  }
#pragma unroll
  for (int i = 0; i < kQIters; ++i) {
    const int idx = tid + i * kThreads;
    if (kChunks % kThreads == 0 || idx < kChunks)
      Arch::store_16(lds_q + QTile::chunk_index(idx / (kDqk / 8), idx % (kDqk / 8)), q[i]);
  }
}

}  // namespace hipattn::detail
#endif  // HIPATTN_HAS_DEVICE
