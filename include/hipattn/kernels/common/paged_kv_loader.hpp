// hipattn/kernels/common/paged_kv_loader.hpp: the paged KV loader policy: Q and K/V tiles from a
// block-table cache into swizzled LDS tiles, kStages deep, through the arch's asynchronous copies
// (cp.async on sm_90; synchronous loads on CDNA today). fp8 tiles land in a staging buffer and are
// converted to 16-bit in LDS, here and nowhere else; per-(token, head) scales land beside them.
//
// Interface the kernel skeleton uses (a loader slot of the configuration, Cfg::Loader):
//   Params                                  what the kernel arguments carry (`kv`)
//   load_q(args, work, rows)                Q rows into LDS (the first copy group)
//   prologue(t_begin) / advance(t, it)      the first kStages - 1 tiles; then one tile ahead
//   KvTile wait(stage)                      the stage's K and V as 16-bit swizzled tiles
//   k_scales(stage, key0) / v_scales(...)   per-(token, head) scales of the stage's keys (or null)
//   drain()                                 no copy in flight
// Keys outside the q-block's visible range are never read (zero-filled), so unowned slots and
// padded block-table entries contribute exactly zero.
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/kernels/common/kv_kind.hpp"
#include "hipattn/kernels/common/work.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/paged/paged_kv.hpp"
#include "hipattn/tile/lds_layout.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/arch/arch.hpp"
#endif

namespace hipattn {

namespace detail {
#if defined(HIPATTN_HAS_DEVICE)
// fp8 code -> float without branches: place the 7 magnitude bits where a float's exponent and
// mantissa start, so the float is 2^(e - 127) (1 + m / 8) (or the denormal m * 2^-129), and rescale by
// 2^(127 - bias). Exact for every code, subnormals included (denormals are not flushed); NaN codes
// (e4m3fn: S.1111.111, e4m3fnuz: 0x80) give NaN.
template <KvKind kKv>
HIPATTN_DEVICE HIPATTN_FORCEINLINE float fp8_to_float_fast(uint32_t b) {
  const float mag = __uint_as_float(((b & 0x80u) << 24) | ((b & 0x7Fu) << 20));
  if constexpr (kKv == KvKind::e4m3fn) {
    const float v = mag * 0x1p120f;
    return (b & 0x7Fu) == 0x7Fu ? __uint_as_float(0x7FC00000u) : v;
  } else {
    const float v = mag * 0x1p119f;
    return b == 0x80u ? __uint_as_float(0x7FC00000u) : v;
  }
}

// Dequantize 16 fp8 codes (one 16-byte chunk) into 16 16-bit values (two 16-byte chunks).
template <KvKind kKv, bool kBf16, class Arch>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void dequant_chunk16(const uint8_t* src, uint16_t* dst0, uint16_t* dst1) {
  const uint4 raw = *reinterpret_cast<const uint4*>(src);
  const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
  uint32_t w[8];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint32_t x = words[k];
    w[2 * k] = Arch::template pack2<kBf16>(fp8_to_float_fast<kKv>(x & 0xFFu), fp8_to_float_fast<kKv>((x >> 8) & 0xFFu));
    w[2 * k + 1] = Arch::template pack2<kBf16>(fp8_to_float_fast<kKv>((x >> 16) & 0xFFu), fp8_to_float_fast<kKv>(x >> 24));
  }
  *reinterpret_cast<uint4*>(dst0) = make_uint4(w[0], w[1], w[2], w[3]);
  *reinterpret_cast<uint4*>(dst1) = make_uint4(w[4], w[5], w[6], w[7]);
}
#endif
}  // namespace detail

// The K and V tiles of one stage, as the warp tile reads them.
struct KvTile {
  const uint16_t* k;
  const uint16_t* v;
};

template <class Cfg>
class PagedKvLoader {
 public:
  using Params = PagedKvView<typename Cfg::Offset, Cfg::kPageSize>;

#if defined(HIPATTN_HAS_DEVICE)
  using Arch = DeviceArch;
  static constexpr int kDqk = Cfg::kDqk, kDv = Cfg::kDv, kBN = Cfg::kBN, kBM = Cfg::kBM;
  static constexpr int kStages = Cfg::kStages, kThreads = Cfg::kThreads;
  static_assert(kDqk == kDv, "the paged loader maps K and V rows alike: one head size");
  static_assert(kDqk % 16 == 0, "rows are whole 16-byte chunks: 8 16-bit elements, 16 fp8 codes");
  using QTile = SwizzledTile<1, kDqk>;
  using KTile = SwizzledTile<1, kDqk>;
  using VTile = SwizzledTile<1, kDv>;
  using Offset = typename Cfg::Offset;

  // LDS carve-up: [Q][K stages][V stages][fp8: K16][V16][k scales][v scales]. 16-bit tiles are
  // SwizzledTile rows of the padded pitch (Cfg::QLds / KLds / VLds); fp8 staging rows are linear.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE PagedKvLoader(const Params& kv, bool per_token_head_scale, const AttentionWork& w,
                                                   const KvTileRange& range, int32_t t_end, char* smem, int tid)
      : kv_(kv), per_token_head_scale_(per_token_head_scale), seq_(w.seq), kvh_(w.kvh), range_(range), t_end_(t_end),
        tid_(tid), ld_c_(tid % kCPR), ld_r0_(tid / kCPR) {
    lds_q_ = reinterpret_cast<uint16_t*>(smem);
    kv_base_ = smem + Cfg::kQBytes;
    lds_k16_ = reinterpret_cast<uint16_t*>(kv_base_ + kStages * (Cfg::kKStageBytes + Cfg::kVStageBytes));
    lds_v16_ = lds_k16_ + Cfg::KLds::kElems;  // the padded pitch (d = 96: 128 elements a row)
    lds_ks_ = reinterpret_cast<float*>(smem + Cfg::kQBytes + Cfg::kKvBytes);  // [kStages][kBN]
    lds_vs_ = lds_ks_ + kStages * kBN;
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE const uint16_t* q_tile() const { return lds_q_; }

  // Q: kBM rows x kDqk, zero-filled for invalid rows; the first copy group.
  template <class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q(const Args& a, const AttentionWork& w) {
    constexpr int kChunks = kBM * (kDqk / 8);
    for (int idx = tid_; idx < kChunks; idx += kThreads) {
      const int row = idx / (kDqk / 8), c = idx % (kDqk / 8);
      const RowCoord rc = row_coord(a, w, row);
      const uint16_t* src = a.q + (rc.valid ? static_cast<int64_t>(rc.token) * a.q_stride_token +
                                                  static_cast<int64_t>(rc.q_head) * a.q_stride_head + c * 8
                                            : 0);
      Arch::copy_16(lds_q_ + QTile::chunk_index(row, c), src, rc.valid);
    }
    Arch::copy_commit();
  }

  // The first kStages - 1 tiles in flight (one copy group each), and the block ids of the next.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void prologue(int32_t t_begin) {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      load_pages(t_begin + s);
      if (t_begin + s < t_end_) issue_tile(s);
      Arch::copy_commit();
    }
    if constexpr (kPrefetchPages) load_pages(t_begin + kStages - 1);  // the next tile to issue
  }

  // Before computing tile t (the it-th of this workgroup): issue tile t + kStages - 1.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void advance(int32_t t, int it) {
    const int32_t tn = t + kStages - 1;
    const int stage = (it + kStages - 1) % kStages;
    if constexpr (kPrefetchPages) {
      if (tn < t_end_) issue_tile(stage);
      Arch::copy_commit();
      if (tn + 1 < t_end_) load_pages(tn + 1);
    } else {
      if (tn < t_end_) {
        load_pages(tn);
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

  // Stage `stage` has landed: its K and V as 16-bit swizzled tiles (fp8 converted here).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE KvTile wait(int stage) {
    wait_oldest();
    if constexpr (Cfg::kFp8) {
      constexpr int kChunks = kBN * (kDqk / 16);
      const uint8_t* ks = reinterpret_cast<const uint8_t*>(k_stage(stage));
      const uint8_t* vs = reinterpret_cast<const uint8_t*>(v_stage(stage));
      for (int idx = tid_; idx < kChunks; idx += kThreads) {
        const int r = idx / (kDqk / 16), c = idx % (kDqk / 16);
        detail::dequant_chunk16<Cfg::kKv, Cfg::kBf16, Arch>(ks + r * kDqk + c * 16, lds_k16_ + KTile::chunk_index(r, 2 * c),
                                                            lds_k16_ + KTile::chunk_index(r, 2 * c + 1));
        detail::dequant_chunk16<Cfg::kKv, Cfg::kBf16, Arch>(vs + r * kDv + c * 16, lds_v16_ + VTile::chunk_index(r, 2 * c),
                                                            lds_v16_ + VTile::chunk_index(r, 2 * c + 1));
      }
      Arch::sync();
      return {lds_k16_, lds_v16_};
    } else {
      return {reinterpret_cast<const uint16_t*>(k_stage(stage)), reinterpret_cast<const uint16_t*>(v_stage(stage))};
    }
  }

  // The stage is consumed: the next advance() may refill it.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void release() { Arch::sync(); }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void drain() { Arch::template copy_wait<0>(); }

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

 private:
  // Thread tid copies chunks idx = tid + i * kThreads (i < kIters) of the tile's kBN x kCPR 16-byte
  // chunks: row idx / kCPR, column idx % kCPR. When kCPR divides the threads, the column is the same in
  // every iteration (tid % kCPR) and the rows step by kThreads / kCPR (every head size that is a power
  // of two); otherwise (d = 192: 24 chunks a row; d = 96: 12 16-bit or 6 fp8 chunks) both move. Every
  // chunk is c < kCPR of its row, so no copy leaves the row (16-bit: SwizzledTile keeps it in the
  // row's pitch; fp8: bytes [16 c, 16 c + 16) of the row's d). The physical blocks of those rows are read
  // from the block table one tile ahead (prefetch), so the table's latency hides behind a tile of
  // compute instead of stalling the issue.
  static constexpr int kChunkElems = Cfg::kFp8 ? 16 : 8;  // elements per 16-byte chunk
  static constexpr int kCPR = kDqk / kChunkElems;
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
  // Decode tiles (kWarpsN > 1) are bandwidth-bound and prefetch the block ids a tile ahead; prefill
  // tiles need those registers for S and O, and their two resident workgroups hide the table reads.
  static constexpr bool kPrefetchPages = Cfg::kWarpsN > 1;

  HIPATTN_DEVICE HIPATTN_FORCEINLINE char* k_stage(int s) const { return kv_base_ + s * Cfg::kKStageBytes; }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE char* v_stage(int s) const {
    return kv_base_ + kStages * Cfg::kKStageBytes + s * Cfg::kVStageBytes;
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_pages(int32_t t) {
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int32_t j = t * kBN + row_of(i);
      int32_t page = 0;
      slot_[i] = 0;
      blk_[i] = -1;  // not read
      if (idle(i)) continue;
      if (t < t_end_ && j >= range_.key_begin && j < range_.key_end) {
        kv_.locate(j, page, slot_[i]);
        blk_[i] = kv_.physical_block(seq_, page);
      }
    }
  }

  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue_tile(int stage) {
    char* kd = k_stage(stage);
    char* vd = v_stage(stage);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (idle(i)) continue;
      const int r = row_of(i), c = col_of(i);
      const bool valid = blk_[i] >= 0;
      const Offset ko = valid ? kv_.k_offset(blk_[i], slot_[i], kvh_) : Offset(0);
      const Offset vo = valid ? kv_.v_offset(blk_[i], slot_[i], kvh_) : Offset(0);
      if constexpr (Cfg::kFp8) {
        Arch::copy_16(kd + (r * kDqk + c * 16), static_cast<const uint8_t*>(kv_.k) + ko + c * 16, valid);
        Arch::copy_16(vd + (r * kDv + c * 16), static_cast<const uint8_t*>(kv_.v) + vo + c * 16, valid);
      } else {
        Arch::copy_16(reinterpret_cast<uint16_t*>(kd) + KTile::chunk_index(r, c),
                      static_cast<const uint16_t*>(kv_.k) + ko + c * 8, valid);
        Arch::copy_16(reinterpret_cast<uint16_t*>(vd) + VTile::chunk_index(r, c),
                      static_cast<const uint16_t*>(kv_.v) + vo + c * 8, valid);
      }
      if (Cfg::kFp8 && per_token_head_scale_ && c == 0) {
        const Offset so = valid ? kv_.scale_offset(blk_[i], slot_[i], kvh_) : Offset(0);
        Arch::copy_4(lds_ks_ + stage * kBN + r, kv_.k_scale + so, valid);
        Arch::copy_4(lds_vs_ + stage * kBN + r, kv_.v_scale + so, valid);
      }
    }
  }

  const Params& kv_;
  const bool per_token_head_scale_;
  const int32_t seq_, kvh_;
  const KvTileRange range_;
  const int32_t t_end_;
  const int tid_, ld_c_, ld_r0_;
  uint16_t* lds_q_;
  char* kv_base_;
  uint16_t* lds_k16_;
  uint16_t* lds_v16_;
  float* lds_ks_;
  float* lds_vs_;
  int32_t blk_[kIters], slot_[kIters];
#endif  // HIPATTN_HAS_DEVICE
};

}  // namespace hipattn
