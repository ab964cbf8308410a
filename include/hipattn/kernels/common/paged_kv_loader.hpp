// hipattn/kernels/common/paged_kv_loader.hpp: the paged KV loader policies: Q and K/V tiles from a
// block-table cache into swizzled LDS tiles, in the arch's copy model (arch/concept.hpp CopyModel):
//   PagedKvLoader         async (sm_90): cp.async kStages deep; fp8 tiles land in fp8 stages, which
//                         decode tiles' warps read and convert at the MMA fragment, and prefill
//                         tiles' threads convert (each its own chunks) into a 16-bit buffer
//   StagedPagedKvLoader   register_staged (CDNA): the next tile's loads in registers while the
//                         current tile computes; fp8 converted in registers before the LDS store
//   LdsDmaPagedKvLoader   lds_dma (CDNA, 16-bit caches): buffer loads that write LDS, the next tile
//                         in flight into the other LDS stage while the current one computes
// All walk the tile alike (PagedTileWalk); fp8 conversion is dequant_regs16, written once;
// per-(token, head) scales land in LDS beside the tiles. The cache layout is the view's policy type
// (paged/paged_kv.hpp): every loader reads RowKvLayout; the register-staged one also RocmKvLayout
// (keys in chunks k_stride_chunk apart; values loaded as 4 slots of one dimension, 8 dimensions a
// unit, and transposed in registers: StagedPagedKvLoader::store_values).
//
// Interface the kernel skeleton uses (a loader slot of the configuration, Cfg::Loader):
//   Params                                  what the kernel arguments carry (`kv`)
//   load_q(args, work, rows)                Q rows into LDS (the first copy group)
//   prologue(t_begin) / advance(t, it)      the first kStages - 1 tiles; then one tile ahead
//   KvTile wait(stage)                      the stage's K and V as the warp tile reads them: 16-bit
//                                           swizzled tiles, or fp8 codes (Cfg::kFp8AtFragment)
//   k_scales(stage, key0) / v_scales(...)   per-(token, head) scales of the stage's keys (or null)
//   drain()                                 no copy in flight
// Keys outside the q-block's visible range are never read (zero-filled), so unowned slots and
// padded block-table entries contribute exactly zero.
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/kernels/common/work.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/paged/paged_kv.hpp"
#include "hipattn/tile/lds_layout.hpp"
#include "hipattn/tile/register_transpose.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/arch/arch.hpp"
#endif

namespace hipattn {

namespace detail {
#if defined(HIPATTN_HAS_DEVICE)
// Dequantize 16 fp8 codes (one 16-byte chunk, in registers) into 16 16-bit values (two chunks).
template <KvKind kKv, bool kBf16, class Arch>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void dequant_regs16(const u32x4& raw, u32x4& lo, u32x4& hi) {
  // Arch::dequant_fp8x4: exact for every code, independent of denormal flushing (sm_90: the
  // hardware's e4m3 -> f16 conversion; CDNA: numeric/fp8.hpp's normal-only decode).
  const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
  uint32_t w[8];
#pragma unroll
  for (int k = 0; k < 4; ++k) Arch::template dequant_fp8x4<kKv, kBf16>(words[k], w[2 * k], w[2 * k + 1]);
  lo = u32x4{w[0], w[1], w[2], w[3]};
  hi = u32x4{w[4], w[5], w[6], w[7]};
}

// Element `col` of the query of row `rc`, in elements of T (16-bit values, or the codes of fp8
// queries, whose strides count codes): a.q's row, or, for arguments with a second query tensor (MLA's
// rope part: Args::kQRopeCol, q_rope and its strides), that tensor's from column kQRopeCol on.
template <class T, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE const T* query_element(const Args& a, const RowCoord& rc, int col) {
  if constexpr (requires { a.q_rope; }) {
    if (col >= Args::kQRopeCol)
      return reinterpret_cast<const T*>(a.q_rope) + static_cast<int64_t>(rc.token) * a.q_rope_stride_token +
             static_cast<int64_t>(rc.q_head) * a.q_rope_stride_head + (col - Args::kQRopeCol);
  }
  return reinterpret_cast<const T*>(a.q) + static_cast<int64_t>(rc.token) * a.q_stride_token +
         static_cast<int64_t>(rc.q_head) * a.q_stride_head + col;
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

// The same from a chunk in LDS into two chunks in LDS.
template <KvKind kKv, bool kBf16, class Arch>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void dequant_chunk16(const uint8_t* src, uint16_t* dst0, uint16_t* dst1) {
  const uint4 raw = *reinterpret_cast<const uint4*>(src);
  u32x4 lo, hi;
  dequant_regs16<kKv, kBf16, Arch>(u32x4{raw.x, raw.y, raw.z, raw.w}, lo, hi);
  *reinterpret_cast<uint4*>(dst0) = make_uint4(lo.x, lo.y, lo.z, lo.w);
  *reinterpret_cast<uint4*>(dst1) = make_uint4(hi.x, hi.y, hi.z, hi.w);
}
#endif
}  // namespace detail

// The K and V tiles of one stage, as the warp tile reads them: 16-bit swizzled tiles, or (fp8 read at
// the fragment) swizzled tiles of 16-bit code pairs, Cfg::K8Lds / V8Lds.
struct KvTile {
  const uint16_t* k;
  const uint16_t* v;
};

// The walk of a KV tile over a paged cache, shared by both loader policies: which 16-byte chunks a
// thread copies, the block-table lookups of their rows, and their offsets in the cache.
//
// Thread tid copies chunks idx = tid + i * kThreads (i < kIters) of the tile's kBN x kCPR 16-byte
// chunks: row idx / kCPR, column idx % kCPR. When kCPR divides the threads, the column is the same in
// every iteration (tid % kCPR) and the rows step by kThreads / kCPR (every head size that is a power
// of two); otherwise (d = 192: 24 chunks a row; d = 96: 12 16-bit or 6 fp8 chunks) both move. Every
// chunk is c < kCPR of its row, so no copy leaves the row (16-bit: SwizzledTile keeps it in the
// row's pitch; fp8: bytes [16 c, 16 c + 16) of the row's d). Keys outside the q-block's visible
// range are never read: their chunks are invalid (zero), so unowned slots and padded block-table
// entries contribute exactly zero.
//
// kUnits is the number of copy units a row is cut into (default: its 16-byte chunks, kDqk / 8
// 16-bit elements or kDqk / 16 fp8 codes); the LDS-DMA loader cuts the row's LDS pitch into its
// DMA units instead (col_of is then the unit's place in the LDS row).
template <class Cfg, int kUnits = Cfg::kDqk / (Cfg::kFp8 ? 16 : 8)>
class PagedTileWalk {
 public:
  using Params = PagedKvView<typename Cfg::Offset, Cfg::kPageSize, typename Cfg::KvLayout>;

#if defined(HIPATTN_HAS_DEVICE)
  using Arch = DeviceArch;
  static constexpr int kDqk = Cfg::kDqk, kDv = Cfg::kDv, kBN = Cfg::kBN, kBM = Cfg::kBM;
  static constexpr int kStages = Cfg::kStages, kThreads = Cfg::kThreads;
  // V rows are K's (one head size), or V is the first kDv columns of each K row (Cfg::kVInK: MLA's
  // latent cache; no V is loaded, the warp tile reads V from the K stage), or V is converted from the
  // first kDv columns of the K rows in registers into a V stage (Cfg::kVFromK: MLA's fp8 matrix path)
  static constexpr bool kVInK = Cfg::kVInK, kVFromK = Cfg::kVFromK;
  // ... or V rows are narrower than K's (kDv < kDqk without kVInK / kVFromK: dense prefill's (192, 128)):
  // the register-staged loader then loads and stores the first kDv / 8 chunks of the column walk for
  // V (kNarrowV); the other loaders take one head size.
  static constexpr bool kNarrowV = kDv < kDqk && !kVInK && !kVFromK;
  static_assert(kDv <= kDqk, "V rows are K's or narrower");
  static_assert(kDv % 16 == 0, "V rows are whole 16-byte chunks of 16-bit elements, or 16 fp8 codes");
  static_assert(kDqk % 16 == 0, "rows are whole 16-byte chunks: 8 16-bit elements, 16 fp8 codes");
  using QTile = SwizzledTile<1, kDqk>;
  using KTile = SwizzledTile<1, kDqk>;
  using VTile = SwizzledTile<1, kDv>;
  using Offset = typename Cfg::Offset;

  // LDS: [Q][K stages][V stages][policy's extra buffers][k scales][v scales] (Cfg's layout).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE PagedTileWalk(const Params& kv, bool per_token_head_scale, const AttentionWork& w,
                                                   const KvTileRange& range, int32_t t_end, char* smem, int tid)
      : kv_(kv), per_token_head_scale_(per_token_head_scale), seq_(w.seq), kvh_(w.kvh), range_(range), t_end_(t_end),
        tid_(tid), ld_c_(tid % kCPR), ld_r0_(tid / kCPR) {
    lds_q_ = reinterpret_cast<uint16_t*>(smem);
    kv_base_ = smem + Cfg::kQBytes;
    lds_ks_ = reinterpret_cast<float*>(smem + Cfg::kQBytes + Cfg::kKvBytes);  // [kStages][kBN]
    lds_vs_ = lds_ks_ + kStages * kBN;
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE const uint16_t* q_tile() const { return lds_q_; }

  // Per-(token, head) K / V scales of the stage's keys from `key0` on (LDS), or null without them.
  // Only fp8 caches carry such scales: for 16-bit caches these are null at compile time.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const float* k_scales(int stage, int key0) const {
    if constexpr (Cfg::kFp8) return per_token_head_scale_ ? lds_ks_ + stage * kBN + key0 : nullptr;
    else return nullptr;
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const float* v_scales(int stage, int key0) const {
    if constexpr (Cfg::kFp8) return per_token_head_scale_ ? lds_vs_ + stage * kBN + key0 : nullptr;
    else return nullptr;
  }

 protected:
  static constexpr int kChunkElems = Cfg::kFp8 ? 16 : 8;  // elements per 16-byte chunk
  static constexpr int kCPR = kUnits;                      // copy units per row (see above)
  static constexpr int kTotal = kBN * kCPR;
  static constexpr int kIters = (kTotal + kThreads - 1) / kThreads;
  static constexpr bool kFixedColumn = kThreads % kCPR == 0;
  static constexpr bool kMayIdle = kTotal % kThreads != 0;  // the last iteration has idle threads
  HIPATTN_DEVICE HIPATTN_FORCEINLINE int row_of(int i) const {
    if constexpr (kFixedColumn) return ld_r0_ + i * (kThreads / kCPR);
    else return (tid_ + i * kThreads) / kCPR;
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE int col_of(int i) const {
    if constexpr (kFixedColumn) return ld_c_;
    else return (tid_ + i * kThreads) % kCPR;
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE bool idle(int i) const { return kMayIdle && tid_ + i * kThreads >= kTotal; }

  // The physical block and slot of each of this thread's rows of tile t (blk = -1: not read).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_pages(int32_t t) { locate_pages(t, blk_, slot_); }
  // ... into other registers (a loader that holds the ids of two tiles).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void locate_pages(int32_t t, int32_t (&blk)[kIters], int32_t (&slot)[kIters]) const {
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int32_t j = t * kBN + row_of(i);
      int32_t page = 0;
      slot[i] = 0;
      blk[i] = -1;  // not read
      if (idle(i)) continue;
      if (t < t_end_ && j >= range_.key_begin && j < range_.key_end) {
        kv_.locate(j, page, slot[i]);
        blk[i] = kv_.physical_block(seq_, page);
      }
    }
  }
  // Element offsets of chunk row i in the K and V caches and in the scale arrays (0 when not read,
  // so the address stays inside the cache).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE bool valid(int i) const { return blk_[i] >= 0; }
  // Both offsets under one test of the row (one branch: the K and V address math share it).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void kv_offsets(int i, Offset& ko, Offset& vo) const {
    const bool v = valid(i);
    ko = v ? kv_.k_offset(blk_[i], slot_[i], kvh_) : Offset(0);
    vo = v ? kv_.v_offset(blk_[i], slot_[i], kvh_) : Offset(0);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE Offset scale_offset(int i) const {
    return valid(i) ? kv_.scale_offset(blk_[i], slot_[i], kvh_) : Offset(0);
  }
  // Whether this thread copies the per-(token, head) scales of chunk row i (one thread a row).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE bool copies_scales(int i) const {
    return Cfg::kFp8 && per_token_head_scale_ && col_of(i) == 0;
  }

  const Params& kv_;
  const bool per_token_head_scale_;
  const int32_t seq_, kvh_;
  const KvTileRange range_;
  const int32_t t_end_;
  const int tid_, ld_c_, ld_r0_;
  int32_t blk_[kIters], slot_[kIters];
  uint16_t* lds_q_;
  char* kv_base_;
  float* lds_ks_;
  float* lds_vs_;

  HIPATTN_DEVICE HIPATTN_FORCEINLINE char* k_stage(int s) const { return kv_base_ + s * Cfg::kKStageBytes; }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE char* v_stage(int s) const {
    return kv_base_ + kStages * Cfg::kKStageBytes + s * Cfg::kVStageBytes;
  }
#endif  // HIPATTN_HAS_DEVICE
};

// The asynchronous policy (CopyModel::async, sm_90): cp.async copies kStages deep. fp8 tiles land in
// fp8 stages: a decode tile's (Cfg::kFp8AtFragment) as swizzled tiles of code pairs that the warp
// tile converts at the MMA fragment; a prefill tile's as linear rows, each thread converting the
// chunks it copied into one 16-bit buffer after the wait. Neither adds a barrier to the two a tile
// of a 16-bit cache.
template <class Cfg>
class PagedKvLoader : public PagedTileWalk<Cfg> {
  using Walk = PagedTileWalk<Cfg>;

 public:
  using typename Walk::Params;

#if defined(HIPATTN_HAS_DEVICE)
  using typename Walk::Arch;
  using typename Walk::KTile;
  using typename Walk::Offset;
  using typename Walk::QTile;
  using typename Walk::VTile;
  using Walk::kBM;
  using Walk::kBN;
  using Walk::kDqk;
  using Walk::kDv;
  using Walk::kStages;
  using Walk::kThreads;
  static_assert(kStages >= 2, "the cp.async pipeline needs at least two stages");
  static_assert(!Walk::kVInK && !Walk::kVFromK, "V from the K rows: the register-staged loader");
  static_assert(!Walk::kNarrowV, "V rows narrower than K's: the register-staged loader");
  static_assert(!Params::Layout::kChunkedKeys && !Params::Layout::kTransposedValues,
                "cp.async copies whole rows: the ROCm cache layout loads register-staged");

  // LDS carve-up: [Q][K stages][V stages][fp8 staging: K16][V16][k scales][v scales]. 16-bit tiles
  // are SwizzledTile rows of the padded pitch (Cfg::QLds / KLds / VLds); fp8 stages read at the
  // fragment are SwizzledTile rows of code pairs (K8Tile), fp8 staging rows are linear.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE PagedKvLoader(const Params& kv, bool per_token_head_scale, const AttentionWork& w,
                                                   const KvTileRange& range, int32_t t_end, char* smem, int tid)
      : Walk(kv, per_token_head_scale, w, range, t_end, smem, tid) {
    if constexpr (Cfg::kFp8Staging) {
      lds_k16_ = reinterpret_cast<uint16_t*>(this->kv_base_ + kStages * (Cfg::kKStageBytes + Cfg::kVStageBytes));
      lds_v16_ = lds_k16_ + Cfg::KLds::kElems;  // the padded pitch (d = 96: 128 elements a row)
    }
  }

  // Q: kBM rows x kDqk, zero-filled for invalid rows; the first copy group.
  // The fp8 matrix path (Cfg::kQ8): the codes as they are, 16 a chunk, into a swizzled tile of code
  // pairs (SwizzledTile<1, kDqk / 2>), by the same copies.
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q(const Args& a, const AttentionWork& w) {
    constexpr int kChunks = kBM * (kDqk / 8);
    if constexpr (Cfg::kQ8) {
      using Q8Tile = SwizzledTile<1, kDqk / 2>;
      constexpr int kChunks8 = kBM * (kDqk / 16);
      const uint8_t* q8 = reinterpret_cast<const uint8_t*>(a.q);
      for (int idx = this->tid_; idx < kChunks8; idx += kThreads) {
        const int row = idx / (kDqk / 16), c = idx % (kDqk / 16);
        const RowCoord rc = row_coord(a, w, row);
        const uint8_t* src = q8 + (rc.valid ? static_cast<int64_t>(rc.token) * a.q_stride_token +
                                                  static_cast<int64_t>(rc.q_head) * a.q_stride_head + c * 16
                                            : 0);
        Arch::copy_16(this->lds_q_ + Q8Tile::chunk_index(row, c), src, rc.valid);
      }
    } else if (!detail::load_q_if_fp8<Cfg, Arch>(a, w, this->lds_q_, this->tid_)) {
      // fp8 Q converted to 16-bit is stored synchronously; the group committed below is then empty,
      // and wait_oldest's barrier makes the stores visible like the copies
      for (int idx = this->tid_; idx < kChunks; idx += kThreads) {
        const int row = idx / (kDqk / 8), c = idx % (kDqk / 8);
        const RowCoord rc = row_coord(a, w, row);
        const uint16_t* src = a.q + (rc.valid ? static_cast<int64_t>(rc.token) * a.q_stride_token +
                                                    static_cast<int64_t>(rc.q_head) * a.q_stride_head + c * 8
                                              : 0);
        Arch::copy_16(this->lds_q_ + QTile::chunk_index(row, c), src, rc.valid);
      }
    }
    Arch::copy_commit();
  }

  // The first kStages - 1 tiles in flight (one copy group each), and the block ids of the next.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void prologue(int32_t t_begin) {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      this->load_pages(t_begin + s);
      if (t_begin + s < this->t_end_) issue_tile(s);
      Arch::copy_commit();
    }
    if constexpr (kPrefetchPages) this->load_pages(t_begin + kStages - 1);  // the next tile to issue
  }

  // Before computing tile t (the it-th of this workgroup): issue tile t + kStages - 1.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void advance(int32_t t, int it) {
    const int32_t tn = t + kStages - 1;
    const int stage = (it + kStages - 1) % kStages;
    if constexpr (kPrefetchPages) {
      if (tn < this->t_end_) issue_tile(stage);
      Arch::copy_commit();
      if (tn + 1 < this->t_end_) this->load_pages(tn + 1);
    } else {
      if (tn < this->t_end_) {
        this->load_pages(tn);
        issue_tile(stage);
      }
      Arch::copy_commit();
    }
  }

  // The oldest copy group (Q in the prologue) has landed and is visible to the workgroup.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void wait_oldest() {
    Arch::template copy_wait<kStages - 1>();
    Arch::sync();
  }

  // Stage `stage` has landed: its K and V as the warp tile reads them (fp8 read at the fragment: the
  // stage itself, like a 16-bit cache's). fp8 staging (prefill tiles): each thread converts the
  // chunks it copied itself (its own cp.async groups are complete after copy_wait, no barrier needed
  // to read them) into the 16-bit buffer, then one barrier makes the buffer (and Q, the per-key
  // scales) visible: the same two barriers a tile as a 16-bit cache (this one, release()). The fp8
  // stage is only ever read by the thread that fills it, so refilling it needs no barrier.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE KvTile wait(int stage) {
    if constexpr (Cfg::kFp8Staging) {
      Arch::template copy_wait<kStages - 1>();
      const uint8_t* ks = reinterpret_cast<const uint8_t*>(k_stage(stage));
      const uint8_t* vs = reinterpret_cast<const uint8_t*>(v_stage(stage));
#pragma unroll
      for (int i = 0; i < Walk::kIters; ++i) {
        if (this->idle(i)) continue;
        const int r = this->row_of(i), c = this->col_of(i);
        detail::dequant_chunk16<Cfg::kKv, Cfg::kBf16, Arch>(ks + r * kDqk + c * 16, lds_k16_ + KTile::chunk_index(r, 2 * c),
                                                            lds_k16_ + KTile::chunk_index(r, 2 * c + 1));
        detail::dequant_chunk16<Cfg::kKv, Cfg::kBf16, Arch>(vs + r * kDv + c * 16, lds_v16_ + VTile::chunk_index(r, 2 * c),
                                                            lds_v16_ + VTile::chunk_index(r, 2 * c + 1));
      }
      Arch::sync();
      return {lds_k16_, lds_v16_};
    } else {
      wait_oldest();
      return {reinterpret_cast<const uint16_t*>(k_stage(stage)), reinterpret_cast<const uint16_t*>(v_stage(stage))};
    }
  }

  // The stage is consumed: the next advance() may refill it.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void release() { Arch::sync(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void drain() { Arch::template copy_wait<0>(); }

 private:
  // Decode tiles (kWarpsN > 1) are bandwidth-bound and prefetch the block ids a tile ahead; prefill
  // tiles need those registers for S and O, and their two resident workgroups hide the table reads.
  static constexpr bool kPrefetchPages = Cfg::kWarpsN > 1;
  using K8Tile = SwizzledTile<1, kDqk / 2>;  // fp8 read at the fragment: 16 codes (8 pairs) a chunk
  using V8Tile = SwizzledTile<1, kDv / 2>;
  using Walk::k_stage;
  using Walk::v_stage;

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue_tile(int stage) {
    char* kd = k_stage(stage);
    char* vd = v_stage(stage);
#pragma unroll
    for (int i = 0; i < Walk::kIters; ++i) {
      if (this->idle(i)) continue;
      const int r = this->row_of(i), c = this->col_of(i);
      const bool valid = this->valid(i);
      Offset ko, vo;
      this->kv_offsets(i, ko, vo);
      if constexpr (Cfg::kFp8AtFragment) {
        Arch::copy_16(reinterpret_cast<uint16_t*>(kd) + K8Tile::chunk_index(r, c),
                      static_cast<const uint8_t*>(this->kv_.k) + ko + c * 16, valid);
        Arch::copy_16(reinterpret_cast<uint16_t*>(vd) + V8Tile::chunk_index(r, c),
                      static_cast<const uint8_t*>(this->kv_.v) + vo + c * 16, valid);
      } else if constexpr (Cfg::kFp8) {
        Arch::copy_16(kd + (r * kDqk + c * 16), static_cast<const uint8_t*>(this->kv_.k) + ko + c * 16, valid);
        Arch::copy_16(vd + (r * kDv + c * 16), static_cast<const uint8_t*>(this->kv_.v) + vo + c * 16, valid);
      } else {
        Arch::copy_16(reinterpret_cast<uint16_t*>(kd) + KTile::chunk_index(r, c),
                      static_cast<const uint16_t*>(this->kv_.k) + ko + c * 8, valid);
        Arch::copy_16(reinterpret_cast<uint16_t*>(vd) + VTile::chunk_index(r, c),
                      static_cast<const uint16_t*>(this->kv_.v) + vo + c * 8, valid);
      }
      if (this->copies_scales(i)) {
        const Offset so = this->scale_offset(i);
        Arch::copy_4(this->lds_ks_ + stage * kBN + r, this->kv_.k_scale + so, valid);
        Arch::copy_4(this->lds_vs_ + stage * kBN + r, this->kv_.v_scale + so, valid);
      }
    }
  }

  uint16_t* lds_k16_ = nullptr;  // fp8 staging: the converted stage
  uint16_t* lds_v16_ = nullptr;
#endif  // HIPATTN_HAS_DEVICE
};

// The register-staged policy (CopyModel::register_staged: CDNA; sm_90 fp8 at d = 64 / 128; the ROCm
// cache layout on every target). Tile t + 1 travels in registers while tile t is computed from LDS:
//   prologue(t0)     issue every load of tile t0 (registers), then the block ids of tile t0 + 1
//   advance(t, it)   store the registers (tile t; fp8 converted to 16-bit here) into LDS stage it % 2
//                    and the per-key scales beside it, then issue every load of tile t + 1 and the
//                    block ids of tile t + 2 (so no table read stalls the issue of a tile)
//   wait(stage)      one barrier: the stores are visible
// The s_waitcnt vmcnt the compiler places before the stores is the only wait on the loads, so all of
// a tile's loads (kIters x K and V chunks per thread, and the scales) are in flight at once, behind a
// tile of compute. Loads are unconditional (load_16 of an address inside the cache, zero selected for
// invalid rows), with no branch per load. Two LDS stages need no barrier after the compute: stage
// it % 2 is rewritten at iteration it + 2, after every wave has passed iteration it + 1's barrier.
// One LDS stage (half the LDS, so more workgroups per CU where LDS is scarce: gfx942) takes a
// barrier after each tile's compute (release) before the next store; the registers are still the
// second buffer, so the loads stay a tile ahead either way.
// LDS holds 16-bit tiles only (fp8 is converted in registers): [Q][K stages][V stages][scales].
// With RocmKvLayout the keys are the walk's chunks (at the view's k_chunk offsets) and the values
// come in transposed units (below); the LDS tiles are the same.
template <class Cfg>
class StagedPagedKvLoader : public PagedTileWalk<Cfg> {
  using Walk = PagedTileWalk<Cfg>;

 public:
  using typename Walk::Params;

#if defined(HIPATTN_HAS_DEVICE)
  using typename Walk::Arch;
  using typename Walk::KTile;
  using typename Walk::Offset;
  using typename Walk::QTile;
  using typename Walk::VTile;
  using Walk::kBM;
  using Walk::kBN;
  using Walk::kDqk;
  using Walk::kDv;
  using Walk::kStages;
  using Walk::kThreads;
  static_assert(kStages == 1 || kStages == 2, "the register-staged loader keeps one or two LDS stages");

  HIPATTN_DEVICE HIPATTN_FORCEINLINE StagedPagedKvLoader(const Params& kv, bool per_token_head_scale,
                                                         const AttentionWork& w, const KvTileRange& range,
                                                         int32_t t_end, char* smem, int tid)
      : Walk(kv, per_token_head_scale, w, range, t_end, smem, tid) {}

  // Q: kBM rows x kDqk, zero-filled for invalid rows: every load issued, then the stores.
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q(const Args& a, const AttentionWork& w) {
    detail::load_q_via_registers<Cfg, Arch>(a, w, this->lds_q_, this->tid_);
  }

  // Tile t_begin's loads in flight, and the block ids of the next tile.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void prologue(int32_t t_begin) {
    load_pages(t_begin);
    fetch(t_begin);
    load_pages(t_begin + 1);
  }

  // Before computing tile t (the it-th of this workgroup): tile t into LDS stage it % 2, tile t + 1
  // into registers (its block ids were read a tile ago), the block ids of tile t + 2.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void advance(int32_t t, int it) {
    store(it % kStages, t);
    if (t + 1 < this->t_end_) {
      fetch(t + 1);
      load_pages(t + 2);
    }
  }

  // Q (stored by load_q) is visible to the workgroup.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void wait_oldest() { Arch::sync(); }

  // Stage `stage` (stored by advance) is visible: its K and V as 16-bit swizzled tiles (kVInK: V is
  // the K tile, its rows kDqk long).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE KvTile wait(int stage) {
    Arch::sync();
    return {reinterpret_cast<const uint16_t*>(k_stage(stage)),
            reinterpret_cast<const uint16_t*>(Walk::kVInK ? k_stage(stage) : v_stage(stage))};
  }

  // One stage: every wave must be done with it before the next advance() rewrites it. Two stages:
  // no barrier (see the class comment).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void release() {
    if constexpr (kStages == 1) Arch::sync();
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void drain() {}    // nothing is fetched past t_end

 private:
  static constexpr int kIters = Walk::kIters;
  using Walk::k_stage;
  using Walk::v_stage;

  // Values of a transposed layout (RocmKvLayout: a value's slots contiguous, its dimensions
  // v_stride_dim apart). A unit is 4 slots x 8 dimensions: 8 loads (8 bytes of 16-bit values, 4 of
  // fp8 ones), each 4 slots of one dimension, transposed in registers into the 4 rows' chunks of 8
  // dimensions (fp8 then converted), stored as the V tile's chunks: a thread holds as many value
  // registers as the row layout's loads would (units of 8 slots left half the decode tile's threads
  // idle and the others 16 registers over the tile's budget on gfx942). Units go slot
  // group fastest (neighbouring lanes read neighbouring slots of a dimension). A unit's slots share
  // a page (block_size % 8 == 0, validated), so one block-table read serves them; rows outside the
  // visible key range are zeroed after the transpose (bit moves only: nothing of an unowned slot
  // reaches another row).
  static constexpr bool kTransposedV = Params::Layout::kTransposedValues;
  static_assert(!kTransposedV || !Walk::kVInK, "V in K: row layouts only");
  static_assert(!kTransposedV || !Walk::kVFromK, "V from K: row layouts only");
  static constexpr bool kRowV = !kTransposedV && !Walk::kVInK && !Walk::kVFromK;  // V rows loaded like K's
  // V rows narrower than K's (16-bit row layouts): chunk c of the walk is a V chunk only below kDv / 8
  static constexpr bool kNarrowV = Walk::kNarrowV;
  static_assert(!kNarrowV || (!Cfg::kFp8 && !kTransposedV), "narrower V rows: 16-bit row layouts");
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static bool v_chunk(int c) { return !kNarrowV || c < kDv / 8; }
  static constexpr int kVSlots = 4;
  static constexpr int kVGroups = kBN / kVSlots;  // slot groups of a tile
  static_assert(!kTransposedV || (kBN % kVSlots == 0 && kDv % 8 == 0), "whole units of kVSlots slots x 8 dimensions");
  static constexpr int kVUnits = kTransposedV ? kVGroups * (kDv / 8) : 0;
  static constexpr int kVIters = kTransposedV ? (kVUnits + kThreads - 1) / kThreads : 1;
  static constexpr bool kVMayIdle = kTransposedV && kVUnits % kThreads != 0;
  HIPATTN_DEVICE HIPATTN_FORCEINLINE int vgroup(int i) const { return (this->tid_ + i * kThreads) % kVGroups; }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE int vdims(int i) const { return (this->tid_ + i * kThreads) / kVGroups; }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE bool vidle(int i) const { return kVMayIdle && this->tid_ + i * kThreads >= kVUnits; }

  // The block ids of tile t: the walk's rows and, for a transposed layout, the value units' pages
  // (-1: no row of the unit is visible). The slots are found again when the loads are issued and the
  // visible rows when they are stored (from the tile index): fewer registers held across the tile.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_pages(int32_t t) {
    Walk::load_pages(t);
    if constexpr (kTransposedV) {
#pragma unroll
      for (int i = 0; i < kVIters; ++i) {
        vblk_[i] = -1;
        if (vidle(i)) continue;
        const int32_t j0 = t * kBN + kVSlots * vgroup(i);
        if (t < this->t_end_ && j0 + kVSlots > this->range_.key_begin && j0 < this->range_.key_end) {
          int32_t page = 0, slot = 0;
          this->kv_.locate(j0, page, slot);
          vblk_[i] = this->kv_.physical_block(this->seq_, page);
        }
      }
    }
  }
  // Row r of tile t is visible (its key inside the work item's range).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE bool visible(int32_t t, int r) const {
    const int32_t j = t * kBN + r;
    return j >= this->range_.key_begin && j < this->range_.key_end;
  }

  // Every load of the tile whose block ids load_pages() read, into registers, all issued before any
  // is used. The loads are raw (an invalid row reads the cache's first bytes) and ok_ remembers
  // which rows count: store() zeroes the others, so no select pulls a wait up behind the loads.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void fetch([[maybe_unused]] int32_t t) {
    ok_ = 0u;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (this->valid(i)) ok_ |= 1u << i;
      const int c = this->col_of(i);
      const auto* kb = static_cast<const uint8_t*>(static_cast<const void*>(this->kv_.k));
      constexpr int kElemBytes = Cfg::kFp8 ? 1 : 2;
      Offset ko, vo;
      this->kv_offsets(i, ko, vo);
      k_[i] = Arch::load_16(kb + (ko + this->kv_.template k_chunk<Walk::kChunkElems>(c)) * kElemBytes, true);
      if constexpr (kRowV) {
        const auto* vb = static_cast<const uint8_t*>(static_cast<const void*>(this->kv_.v));
        if (v_chunk(c)) v_[i] = Arch::load_16(vb + (vo + c * Walk::kChunkElems) * kElemBytes, true);
      }
      if constexpr (Cfg::kFp8) {
        if (this->per_token_head_scale_) {  // uniform: every thread takes the same branch
          const Offset so = this->scale_offset(i);
          ks_[i] = Arch::load_4(this->kv_.k_scale + so, true);
          vs_[i] = Arch::load_4(this->kv_.v_scale + so, true);
        }
      }
    }
    if constexpr (kTransposedV) {
      const auto* vb = static_cast<const uint8_t*>(static_cast<const void*>(this->kv_.v));
      constexpr int kElemBytes = Cfg::kFp8 ? 1 : 2;
#pragma unroll
      for (int i = 0; i < kVIters; ++i) {
        const bool read = vblk_[i] >= 0;
        const int d0 = 8 * (vidle(i) ? 0 : vdims(i));
        int32_t page = 0, slot = 0;
        this->kv_.locate(t * kBN + kVSlots * vgroup(i), page, slot);
        // One address, stepped a dimension at a time (8 offsets formed apart would be loop
        // invariants the compiler keeps in registers across the whole kernel).
        const uint8_t* src = vb + (read ? this->kv_.v_offset(vblk_[i], slot, this->kvh_) + this->kv_.v_dim(d0) : Offset(0)) * kElemBytes;
        const Offset step = read ? this->kv_.v_dim(1) * kElemBytes : Offset(0);
#pragma unroll
        for (int k = 0; k < 8; ++k, src += step) {
          if constexpr (Cfg::kFp8) vt_[i][k] = Arch::load_4(src, true);
          else vt_[i][k] = Arch::load_8(src, true);
        }
      }
    }
  }

  // The registers into LDS stage `stage` (fp8 converted to the q dtype first); rows that were not
  // to be read store zeros, whatever the cache held there.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void store(int stage, [[maybe_unused]] int32_t t) {
    uint16_t* kd = reinterpret_cast<uint16_t*>(k_stage(stage));
    [[maybe_unused]] uint16_t* vd = reinterpret_cast<uint16_t*>(v_stage(stage));
    const u32x4 zero{0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (this->idle(i)) continue;
      const int r = this->row_of(i), c = this->col_of(i);
      const bool ok = (ok_ >> i) & 1u;
      const u32x4 kc = ok ? k_[i] : zero;
      u32x4 vc = zero;
      if constexpr (kRowV) vc = ok ? v_[i] : zero;
      if constexpr (Cfg::kFp8) {
        constexpr KvKind kStorage = kv_storage(Cfg::kKv);
        u32x4 lo, hi;
        if constexpr (Cfg::kQ8) {  // the fp8 matrix path: K's codes as they are (the tile of code pairs)
          Arch::store_16(kd + SwizzledTile<1, kDqk / 2>::chunk_index(r, c), kc);
          if constexpr (Walk::kVFromK) {  // V: the row's first kDv codes, converted (16 a chunk)
            if (c < kDv / 16) {
              detail::dequant_regs16<kStorage, Cfg::kBf16, Arch>(kc, lo, hi);
              Arch::store_16(vd + VTile::chunk_index(r, 2 * c), lo);
              Arch::store_16(vd + VTile::chunk_index(r, 2 * c + 1), hi);
            }
          }
        } else {
          detail::dequant_regs16<kStorage, Cfg::kBf16, Arch>(kc, lo, hi);
          Arch::store_16(kd + KTile::chunk_index(r, 2 * c), lo);
          Arch::store_16(kd + KTile::chunk_index(r, 2 * c + 1), hi);
        }
        if constexpr (kRowV) {
          detail::dequant_regs16<kStorage, Cfg::kBf16, Arch>(vc, lo, hi);
          Arch::store_16(vd + VTile::chunk_index(r, 2 * c), lo);
          Arch::store_16(vd + VTile::chunk_index(r, 2 * c + 1), hi);
        }
        if (this->copies_scales(i)) {
          Arch::store_4(this->lds_ks_ + stage * kBN + r, ok ? ks_[i] : 0u);
          Arch::store_4(this->lds_vs_ + stage * kBN + r, ok ? vs_[i] : 0u);
        }
      } else {
        Arch::store_16(kd + KTile::chunk_index(r, c), kc);
        if constexpr (kRowV) {
          if (v_chunk(c)) Arch::store_16(vd + VTile::chunk_index(r, c), vc);
        }
      }
    }
    if constexpr (kTransposedV) store_values(vd, t);
  }

  // The value units (transposed layout) into the V tile: transpose, convert fp8, zero the rows
  // outside the visible range. Two rows at a time, each pair stored before the next is formed, so
  // only the loads and one pair are live (the whole transpose at once needs 32 more registers).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void store_values(uint16_t* vd, int32_t t) {
    const u32x4 zero{0u, 0u, 0u, 0u};
#pragma unroll
    for (int i = 0; i < kVIters; ++i) {
      if (vidle(i)) continue;
      const int row0 = kVSlots * vgroup(i), c = vdims(i);
#pragma unroll
      for (int r = 0; r < kVSlots; r += 2) {
        u32x4 a, b;
        if constexpr (Cfg::kFp8) {
          u32x2 ca, cb;
          transpose8x4_b8_pair(vt_[i], r, ca, cb);
          Arch::template dequant_fp8x4<Cfg::kKv, Cfg::kBf16>(ca.x, a.x, a.y);
          Arch::template dequant_fp8x4<Cfg::kKv, Cfg::kBf16>(ca.y, a.z, a.w);
          Arch::template dequant_fp8x4<Cfg::kKv, Cfg::kBf16>(cb.x, b.x, b.y);
          Arch::template dequant_fp8x4<Cfg::kKv, Cfg::kBf16>(cb.y, b.z, b.w);
        } else {
          transpose8x4_b16_pair(vt_[i], r, a, b);
        }
        Arch::store_16(vd + VTile::chunk_index(row0 + r, c), visible(t, row0 + r) ? a : zero);
        Arch::store_16(vd + VTile::chunk_index(row0 + r + 1, c), visible(t, row0 + r + 1) ? b : zero);
      }
    }
  }

  u32x4 k_[kIters], v_[kRowV ? kIters : 1];
  using VLoad = std::conditional_t<Cfg::kFp8, uint32_t, u32x2>;  // 4 slots of one dimension
  VLoad vt_[kTransposedV ? kVIters : 1][kTransposedV ? 8 : 1];   // transposed layout: the units' loads
  int32_t vblk_[kVIters];                                        // their pages (-1: not read)
  uint32_t ks_[Cfg::kFp8 ? kIters : 1], vs_[Cfg::kFp8 ? kIters : 1];
  uint32_t ok_ = 0u;  // bit i: chunk row i of the registers' tile is read (not zero)
#endif  // HIPATTN_HAS_DEVICE
};

// The bytes a buffer resource of the LDS-DMA loader spans from a cache's base (its voffset is 32
// bits; below 2^32 so that voffset + 16 never wraps). The loader serves caches that lie within it;
// the dispatcher checks that (unified_kv_copy, dispatch/unified_plan.hpp) and keeps larger caches on
// the register-staged loader.
inline constexpr uint32_t kLdsDmaWindow = 0xFFFFFF00u;

// DMA units a row of a 16-bit LDS tile is cut into: its pitch (tile/lds_layout.hpp) in the target's
// LDS-DMA bytes (1 where the target has no LDS DMA, so the type still names).
template <class Cfg>
constexpr int lds_dma_units_per_row() {
  constexpr int b = lds_dma_bytes(Cfg::kTarget);
  return b > 0 ? SwizzledTile<1, Cfg::kDqk>::kPitch * 2 / b : 1;
}

// The LDS-DMA policy (CopyModel::lds_dma, CDNA, 16-bit caches). A buffer load with `lds` writes
// kB bytes a lane (gfx942: 4, gfx950: 16) at LDS address M0 + kB * lane. The loader therefore walks
// the tile in LDS order: unit u = tid + i * kThreads of a stage is LDS bytes [kB u, kB u + kB), i.e.
// row u / kUnits of the stage, physical chunk p = (u % kUnits) / (16 / kB) of the row, word
// (u % kUnits) % (16 / kB) of the chunk; the tile's swizzle (tile/lds_layout.hpp: logical chunk c
// sits at c ^ (row & 7)) is applied on the global side: the lane fetches logical chunk
// p ^ (row & 7) of that row from the cache. Padding chunks (d = 96) and rows that are not to be
// read get an offset at the resource's num_records, so the hardware writes zeros there: unowned
// slots and padded block-table entries contribute exactly zero, whatever the cache holds.
//   prologue(t0)    block ids of t0, tile t0's DMA into stage 0, block ids of t0 + 1
//   advance(t, it)  wait for this wave's DMA (tile t), barrier (every wave's tile t is in LDS and
//                   every wave is done with tile t - 1's stage), then tile t + 1's DMA into the other
//                   stage and the block ids of t + 2: the loads of t + 1 fly during t's compute
//   wait(stage)     nothing left to wait for
// The buffer resources span the cache (under 4 GiB: kLdsDmaWindow; the dispatcher keeps larger
// caches on the register-staged loader).
// Two LDS stages (the DMA of t + 1 must not land in the stage t is read from); no registers hold
// tile data, and no instruction of the wave moves it.
template <class Cfg>
class LdsDmaPagedKvLoader
    : public PagedTileWalk<Cfg, lds_dma_units_per_row<Cfg>()> {
  using Walk = PagedTileWalk<Cfg, lds_dma_units_per_row<Cfg>()>;

 public:
  using typename Walk::Params;

#if defined(HIPATTN_HAS_DEVICE)
  using typename Walk::Arch;
  using typename Walk::Offset;
  using Walk::kBM;
  using Walk::kBN;
  using Walk::kDqk;
  using Walk::kDv;
  using Walk::kStages;
  using Walk::kThreads;
  // The class is also named in other targets' device passes (an instance's kernels exist, empty, for
  // every target): the arch checks apply where the instance is built for.
  static constexpr bool kHere = Arch::kTarget == Cfg::kTarget;
  static_assert(!kHere || LdsDmaArch<Arch>, "the target's arch has LDS DMA (arch/concept.hpp LdsDmaArch)");
  static_assert(!Cfg::kFp8, "LDS DMA moves bytes as they are: fp8 caches use the register-staged loader");
  static_assert(!Params::Layout::kChunkedKeys && !Params::Layout::kTransposedValues,
                "the DMA writes whole rows: the ROCm cache layout loads register-staged");
  static_assert(kStages == 2, "the DMA of tile t + 1 lands in the other of two LDS stages");
  static_assert(!Walk::kVInK && !Walk::kVFromK, "V from the K rows: the register-staged loader");
  static_assert(!Walk::kNarrowV, "V rows narrower than K's: the register-staged loader");
  static constexpr int kB = lds_dma_bytes(Cfg::kTarget);
  static_assert(kB > 0, "a target with LDS DMA");
  template <class A>
  static constexpr bool same_width() { return A::kLdsDmaBytes == kB; }
  static_assert(!kHere || same_width<Arch>(), "host and device agree on the DMA width");
  static constexpr int kUnitsPerChunk = 16 / kB;
  static constexpr int kWave = 64;
  static_assert(Walk::kTotal % kWave == 0, "a stage is whole waves of DMA units");
  static constexpr bool kPadded = SwizzledTile<1, kDqk>::kPitch != kDqk;  // d = 96: padding chunks

  HIPATTN_DEVICE HIPATTN_FORCEINLINE LdsDmaPagedKvLoader(const Params& kv, bool per_token_head_scale,
                                                         const AttentionWork& w, const KvTileRange& range,
                                                         int32_t t_end, char* smem, int tid)
      : Walk(kv, per_token_head_scale, w, range, t_end, smem, tid),
        wave_lds_(Arch::wave_uniform(static_cast<uint32_t>(tid & ~(kWave - 1)) * kB)) {}

  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q(const Args& a, const AttentionWork& w) {
    detail::load_q_via_registers<Cfg, Arch>(a, w, this->lds_q_, this->tid_);
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void prologue(int32_t t_begin) {
    this->load_pages(t_begin);
    if (t_begin < this->t_end_) issue(0);
    this->load_pages(t_begin + 1);
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void advance(int32_t t, int it) {
    Arch::lds_dma_wait();
    Arch::sync();
    if (t + 1 < this->t_end_) {
      issue((it + 1) % kStages);
      this->load_pages(t + 2);
    }
  }

  // Q (stored by load_q) is visible to the workgroup.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void wait_oldest() { Arch::sync(); }
  // advance() waited for the stage and passed the barrier.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE KvTile wait(int stage) {
    return {reinterpret_cast<const uint16_t*>(k_stage(stage)), reinterpret_cast<const uint16_t*>(v_stage(stage))};
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void release() {}  // the next advance() waits at its barrier
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void drain() {}    // the last advance() issued nothing

 protected:
  static constexpr int kIters = Walk::kIters;
  static constexpr uint64_t kZero = ~uint64_t{0};  // a unit that loads zeros
  using Walk::k_stage;
  using Walk::v_stage;

  // Byte offsets in the K and V caches of unit i's bytes (kZero: not read, padding).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void unit_offsets(int i, uint64_t& ko, uint64_t& vo) const {
    const int row = this->row_of(i), pu = this->col_of(i);
    const int c = (pu / kUnitsPerChunk) ^ (row & 7);  // the logical chunk stored at this LDS place
    const int elem = c * 8 + (pu % kUnitsPerChunk) * (kB / 2);
    const bool read = this->valid(i) && (!kPadded || c < kDqk / 8);
    Offset ke, ve;
    this->kv_offsets(i, ke, ve);
    ko = read ? static_cast<uint64_t>(ke + elem) * 2u : kZero;
    vo = read ? static_cast<uint64_t>(ve + elem) * 2u : kZero;
  }

  // Tile (block ids from load_pages) -> LDS stage `stage`: one DMA load per K and V unit, from
  // buffer resources over the whole cache (kLdsDmaWindow bytes from its base; the dispatcher picks this
  // loader only for caches inside that, dispatch/unified_plan.hpp). Units that load zeros take
  // voffset = num_records.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue(int stage) { issue_parts<true, true>(stage, stage); }
  // The K units into K stage ks and / or the V units into V stage vs (the ping-pong loader below issues
  // them apart; both from the block ids load_pages holds).
  template <bool kK, bool kV>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue_parts(int ks, int vs) {
    const uint32_t k_lds = Arch::lds_address(k_stage(ks)) + wave_lds_;
    const uint32_t v_lds = Arch::lds_address(v_stage(vs)) + wave_lds_;
    const typename Arch::BufferRsrc rk = Arch::buffer_rsrc(this->kv_.k, kLdsDmaWindow);
    const typename Arch::BufferRsrc rv = Arch::buffer_rsrc(this->kv_.v, kLdsDmaWindow);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (this->idle(i)) continue;  // wave-uniform: a stage is whole waves of units
      uint64_t ko, vo;
      unit_offsets(i, ko, vo);
      const uint32_t lds = static_cast<uint32_t>(i * kThreads * kB);
      if constexpr (kK) Arch::lds_dma(rk, ko == kZero ? kLdsDmaWindow : static_cast<uint32_t>(ko), k_lds + lds);
      if constexpr (kV) Arch::lds_dma(rv, vo == kZero ? kLdsDmaWindow : static_cast<uint32_t>(vo), v_lds + lds);
    }
  }

  const uint32_t wave_lds_;  // the wave's first DMA unit of a stage, in bytes (wave-uniform: an SGPR)
#endif  // HIPATTN_HAS_DEVICE
};

// The LDS-DMA loads of the CDNA ping-pong schedule (kernels/common/pingpong_mainloop.hpp): a K ring
// and a V ring of two stages each, V one tile behind K. The schedule's intervals (between workgroup
// barriers) are numbered from the prologue's barrier 0; tile j (of the work item's, from t_begin) is
// read as K in intervals 2j and 2j + 1 and as V in 2j + 2 and 2j + 3, so
//   prologue(t0)  block ids of tile 0 (and of tile 1), K(0) into K stage 0 (visible at barrier 0)
//   issue(j)      interval 2j: V(j) into V stage j % 2 (tile j's block ids are still held), then
//                 K(j + 1) into K stage (j + 1) % 2 (tile j + 1's ids, read one issue earlier), then
//                 the block-table reads of tile j + 2; both stages were last read in intervals 2j - 2
//                 / 2j - 1 (V(j - 2), K(j - 1)), before barrier 2j
//   wait()        this wave's DMA (and block-table reads) have landed: before barrier 2j + 2, which
//                 makes every wave's visible for K(j + 1)'s first read (interval 2j + 2) and V(j)'s
// A paged layout's block ids are read a tile ahead of their first use, after the issue's DMA, so no
// wait on the vector-memory counter (which would also wait for the DMA in flight, the counter being
// in order) sits between the two halves of an issue: the ids an issue uses landed before the barrier
// the wave last passed. A dense layout's are computed where they are used (no load). Every wave
// issues its share of each stage (a stage is whole waves of DMA units); the loads of interval 2j fly
// for two intervals. Tiles past the item's end issue nothing.
template <class Cfg>
class LdsDmaPingPongLoader : public LdsDmaPagedKvLoader<Cfg> {
  using Base = LdsDmaPagedKvLoader<Cfg>;

 public:
  using typename Base::Params;

#if defined(HIPATTN_HAS_DEVICE)
  using typename Base::Arch;
  HIPATTN_DEVICE HIPATTN_FORCEINLINE LdsDmaPingPongLoader(const Params& kv, bool per_token_head_scale,
                                                          const AttentionWork& w, const KvTileRange& range,
                                                          int32_t t_end, char* smem, int tid)
      : Base(kv, per_token_head_scale, w, range, t_end, smem, tid) {
    if constexpr (kDense) dense_blk0_ = kv.physical_block(w.seq, 0);
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void prologue(int32_t t_begin) {
    t0_ = t_begin;
    locate(t_begin, this->blk_, this->slot_);
    if (t_begin < this->t_end_) {
      this->template issue_parts<true, false>(0, 0);
      if constexpr (!kDense) read_ahead(t_begin + 1);
    }
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue(int j) {
    const int32_t t = t0_ + j;
    // Nothing of this wave's is in flight (it waited before the barrier it last passed); the counted
    // wait tells the compiler, whose count joins both groups' paths, so that it adds no wait on the
    // V DMA before K's offsets read the block ids.
    if constexpr (!kDense) Arch::vm_wait_counted();
    if (t < this->t_end_) this->template issue_parts<false, true>(0, j % 2);
    if (t + 1 < this->t_end_) {
      if constexpr (kDense) {
        locate(t + 1, this->blk_, this->slot_);  // arithmetic only
      } else {
#pragma unroll
        for (int i = 0; i < Base::kIters; ++i) {
          this->blk_[i] = next_slot_[i] >= 0 ? next_blk_[i] : -1;
          this->slot_[i] = next_slot_[i];
        }
      }
      this->template issue_parts<true, false>((j + 1) % 2, 0);
      if constexpr (!kDense) read_ahead(t + 2);
    }
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void wait() const { Arch::lds_dma_wait(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const uint16_t* k_tile(int j) const {
    return reinterpret_cast<const uint16_t*>(this->k_stage(j % 2));
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const uint16_t* v_tile(int j) const {
    return reinterpret_cast<const uint16_t*>(this->v_stage(j % 2));
  }

 private:
  static constexpr bool kDense = Params::Layout::kDense;
  // The block ids of tile t (the walk's, PagedTileWalk::locate_pages). A dense layout's keys are blocks
  // dense_blk0_ + key (pages of one token): the sequence's first block is read once per work item and
  // the ids are selected without a branch or a load.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void locate(int32_t t, int32_t (&blk)[Base::kIters],
                                                 int32_t (&slot)[Base::kIters]) const {
    if constexpr (kDense) {
      static_assert(Cfg::kPageSize == 1, "a dense layout has pages of one token");
#pragma unroll
      for (int i = 0; i < Base::kIters; ++i) {
        const int32_t j = t * Base::kBN + this->row_of(i);
        const bool read = !this->idle(i) && t < this->t_end_ && j >= this->range_.key_begin && j < this->range_.key_end;
        slot[i] = 0;
        blk[i] = read ? dense_blk0_ + j : -1;
      }
    } else {
      this->locate_pages(t, blk, slot);
    }
  }

  // Paged: the block-table entries of tile t's rows, for the issue after this one. Each is read
  // whether the row is visible or not (its key clamped into the item's visible range, which is not
  // empty while tiles remain, so the entry is one of the sequence's own), and the row's visibility is
  // kept apart (in its slot): no other value merges with the loaded one, so the load writes the
  // registers the next issue reads and no instruction reads them, or waits for them, before the
  // wave's wait.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void read_ahead(int32_t t) {
    const KvTileRange& r = this->range_;
#pragma unroll
    for (int i = 0; i < Base::kIters; ++i) {
      const int32_t j = t * Base::kBN + this->row_of(i);
      const bool read = !this->idle(i) && t < this->t_end_ && j >= r.key_begin && j < r.key_end;
      const int32_t jc = j < r.key_begin ? r.key_begin : j >= r.key_end ? r.key_end - 1 : j;
      int32_t page, slot;
      this->kv_.locate(jc, page, slot);
      next_blk_[i] = this->kv_.physical_block(this->seq_, page);
      next_slot_[i] = read ? slot : -1;
    }
  }

  int32_t t0_ = 0;
  int32_t dense_blk0_ = 0;  // DenseKvLayout: the sequence's first block
  // paged, at issue(j): tile t0 + j + 1's block-table entries and slots (-1: the row is not read)
  int32_t next_blk_[Base::kIters], next_slot_[Base::kIters];
#endif  // HIPATTN_HAS_DEVICE
};

}  // namespace hipattn
