// hipattn/kernels/common/loaders/tile_walk.hpp: the walk of a KV tile over a paged cache that every
// loader policy shares (PagedTileWalk: which chunks a thread copies, the block-table lookups of their
// rows, their cache offsets, the LDS carve-up) and the stage's tiles as the warp tile reads them
// (KvTile). The policies: loaders/async.hpp (sm_90 cp.async), loaders/staged.hpp (register-staged),
// loaders/lds_dma.hpp (CDNA LDS DMA); what the skeleton asks of them: kernels/common/concepts.hpp.
// The cache layout is the view's policy type (paged/paged_kv.hpp): every loader reads RowKvLayout;
// the register-staged one also RocmKvLayout. Per-(token, head) scales land in LDS beside the tiles.
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/work.hpp"
#include "hipattn/paged/paged_kv.hpp"
#include "hipattn/tile/lds_layout.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/arch/arch.hpp"
#endif

namespace hipattn {

// The K and V tiles of one stage, as the warp tile reads them: 16-bit swizzled tiles, or (fp8 read at
// the fragment) swizzled tiles of 16-bit code pairs, Cfg::K8Lds / V8Lds.
struct KvTile {
  const uint16_t* k;
  const uint16_t* v;
};

// The walk of a KV tile over a paged cache, shared by the loader policies: which 16-byte chunks a
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
  // latent cache; no V is loaded, the warp tile reads V from the K stage, rows of kDqk), or V is converted from the
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

}  // namespace hipattn
