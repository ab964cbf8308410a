// hipattn/kernels/sm90/warpgroup_pipeline.hpp: the warp-specialised kernel skeleton of sm_90
// (ALGORITHM.md section 10), shared by the families whose q-blocks run on it: dense prefill (bulk
// tensor copies of contiguous Q / K / V) and unified attention's prefill q-blocks (a paged gather).
//
//   warpgroup_attention<Cfg>(family, smem)
//
// Roles: warpgroup 0 produces (it gives its registers away with setmaxnreg), warpgroups 1 .. C consume
// (64 query rows each of the q-block's Cfg::kBM = 64 C). The producer loads each work item's Q once
// its previous Q has been read (q_empty), then the item's K / V tiles into two rings of
// Cfg::kStages stages (full / empty barriers, arch/sm90/pipeline.hpp), last tile first, so that the
// masked diagonal tiles of causal blocks come first; the rings' stage / phase walk continues across
// items, so the next item's loads run under the current item's last products and epilogue. Each
// consumer runs, per KV tile n:
//     S_n = Q K_n^T  (wgmma, issued)          O += P_{n-1} V_{n-1}  (wgmma, issued behind S_n)
//     wait for S_n; release K_n; logits, mask and the online softmax's row step on S_n (overlapping
//     the PV product still running); wait for PV; release V_{n-1}; O *= f_n; P_n = S_n in 16 bits
// (FlashAttention-3's intra-warpgroup overlap), and the consumers take turns issuing their matrix
// products (OrderedTurns: one's softmax overlaps the other's products: the ping-pong). The mainloop
// step (logits, RowSoftmax) and the row reductions are the common ones (kernels/common/softmax_step.hpp)
// on the warpgroup tile's fragments (arch/sm90/warpgroup_tile.hpp).
//
// Cfg: kBf16, kDqk, kDv, kBM, kBN, kStages, kConsumers, kThreads, kProducerRegs, kConsumerRegs, the
// shared-memory carve-up (kQOffset, kKOffset, kVOffset, kBarOffset; kQBytes, kKBytes, kVBytes:
// 128-byte-swizzled K-major tiles, 1024-byte aligned), Variant, kWaveSize (32).
// Family (a value the kernel builds from its arguments):
//   Item                                  the work of one q-block (kept by both roles)
//   kProducerThreads                      1: one thread issues bulk copies and announces their bytes
//                                         (expect-tx); 128: every producer thread gathers by cp.async
//                                         and arrives on the stage's full barrier when its copies land
//   for_each_item(f)                      f(item, KvTileRange) for each item of this workgroup, in
//                                         the same order for both roles
//   producer_start()                      once, by each producer thread, before any load
//   load_q(item, t, with_q)               calls with_q(issue) once; the skeleton waits for the stage
//                                         and calls issue(dst, bar), which issues producer thread t's
//                                         copies of the Q tile into dst (bar: the stage's full barrier)
//   load_kv(item, range, n, t, with_k, with_v)  the same for tile n's K and V stages (with_k, then
//                                         with_v); keys outside range's [key_begin, key_end) may be
//                                         zero-filled instead of read
//   row(item, row, RowInfo&, Variant::Row&)  row `row` (0 .. kBM - 1) of the q-block
//   logits_tile(item)                     the LogitsTile (key0 / edge are set per tile)
//   variant()                             the logit variant
//   store(item, wm, lane, softmax, o)     the epilogue of the 16-row band wm (0 .. kBM / 16 - 1)
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/kernels/common/softmax_step.hpp"
#include "hipattn/tile/tile_range.hpp"

#if defined(HIPATTN_HAS_DEVICE) && defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/arch/arch.hpp"
#include "hipattn/arch/sm90/pipeline.hpp"
#include "hipattn/arch/sm90/warpgroup_tile.hpp"

namespace hipattn {

template <class Cfg>
using WarpgroupTileOf = sm90::WarpgroupTile<Cfg::kBf16, Cfg::kDqk, Cfg::kBN, Cfg::kDv, Cfg::kBM>;

// The producer warpgroup's gather of one tile of kRows rows x kCols 16-bit elements into a 128-byte
// swizzled K-major tile (KMajorTile<b128, kRows, 2 kCols>: one 128-byte column block after another),
// by cp.async. Warp w covers rows (kRows / 4) w ..: lane l < kRows / 4 owns row (kRows / 4) w + l and
// finds its source once (own_row; a block-table read for a paged row), and the copies take four rows
// an instruction (lane / 8), 16 bytes of a row's 128-byte column block a lane, so that each
// instruction reads four whole 128-byte lines; a row's source reaches the lanes that copy it by a
// shuffle. A null source zero-fills the row and reads nothing. Thread t of 128.
template <int kRows, int kCols>
struct WarpgroupRowGather {
  static_assert(kRows % 16 == 0 && kRows <= 128 && kCols % 64 == 0,
                "whole groups of four rows a warp, a row a lane, whole 128-byte blocks");
  using Tile = sm90::KMajorTile<sm90::SmemSwizzle::b128, kRows, 2 * kCols>;
  static constexpr int kGroups = kRows / 16;
  // The row whose source lane t % 32 finds, or -1 (more lanes than rows).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static int own_row(int t) {
    return t % 32 < kRows / 4 ? (kRows / 4) * (t / 32) + t % 32 : -1;
  }
  // own_src: the first element of own_row(t) (null: zeros, or no row).
  template <class T>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void copy(char* dst, int t, const T* fallback, const T* own_src) {
    const int lane = t % 32;
    const auto own = reinterpret_cast<unsigned long long>(own_src);
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      const T* s = reinterpret_cast<const T*>(__shfl_sync(0xffffffffu, own, 4 * g + lane / 8));
      const bool valid = s != nullptr;
      const char* from = reinterpret_cast<const char*>(valid ? s : fallback) + (valid ? 16 * (lane % 8) : 0);
      const int r = (kRows / 4) * (t / 32) + 4 * g + lane / 8;
#pragma unroll
      for (int k = 0; k < kCols / 64; ++k)
        sm90::cp_async_16(dst + Tile::offset(r, 128 * k + 16 * (lane % 8)), valid ? from + 128 * k : from, valid);
    }
  }
};

template <class Cfg, class Family>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void warpgroup_attention(const Family& fam, char* smem_raw) {
  using Arch = DeviceArch;
  using WT = WarpgroupTileOf<Cfg>;
  using Ring = sm90::RingState<Cfg::kStages>;
  using Item = typename Family::Item;
  using Variant = typename Cfg::Variant;
  constexpr int kBN = Cfg::kBN;
  constexpr uint32_t kConsumerWarps = 4 * Cfg::kConsumers;
  constexpr int kProducerThreads = Family::kProducerThreads;
  static_assert(kProducerThreads == 1 || kProducerThreads == 128, "one thread issues bulk copies, or the warpgroup gathers");
  constexpr bool kTx = kProducerThreads == 1;
  char* smem = smem_raw + ((1024u - (sm90::smem_u32(smem_raw) & 1023u)) & 1023u);
  char* q_tile = smem + Cfg::kQOffset;
  char* k_tiles = smem + Cfg::kKOffset;
  char* v_tiles = smem + Cfg::kVOffset;
  uint64_t* q_full = reinterpret_cast<uint64_t*>(smem + Cfg::kBarOffset);
  uint64_t* q_empty = q_full + 1;
  auto* k_ring = reinterpret_cast<sm90::PipelineRing<Cfg::kStages>*>(q_full + 2);
  auto* v_ring = k_ring + 1;

  const int tid = static_cast<int>(threadIdx.x);
  const int wg = tid / 128;
  if (tid == 0) {
    sm90::mbarrier_init(q_full, kProducerThreads);
    sm90::mbarrier_init(q_empty, kConsumerWarps);  // every consumer warp, after its last Q K^T of an item
    k_ring->init(kConsumerWarps, kProducerThreads);  // one release per consumer warp (each waits on its own wgmma)
    v_ring->init(kConsumerWarps, kProducerThreads);
  }
  __syncthreads();

  if (wg == 0) {  // ---- producer ----
    sm90::warpgroup_reg_dealloc<Cfg::kProducerRegs>();
    if (tid >= kProducerThreads) return;
    fam.producer_start();
    // A stage's copies: announced (bulk copies) or arrived on when this thread's copies land (gather).
    const auto fill = [&](uint64_t* bar, uint32_t bytes, char* dst, auto&& issue) {
      if constexpr (kTx) sm90::mbarrier_arrive_expect_tx(bar, bytes);
      issue(dst, bar);
      if constexpr (!kTx) sm90::cp_async_mbarrier_arrive(bar);
    };
    Ring st;
    uint32_t q_lap = 0;
    fam.for_each_item([&](const Item& w, const KvTileRange& range) {
      if (range.empty()) return;
      sm90::mbarrier_wait(q_empty, (q_lap & 1u) ^ 1u);  // the previous item's Q has been read
      fam.load_q(w, tid, [&](auto&& issue) { fill(q_full, Cfg::kQBytes, q_tile, issue); });
      ++q_lap;
      for (int32_t n = range.tile_end - 1; n >= range.tile_begin; --n) {
        fam.load_kv(
            w, range, n, tid,
            [&](auto&& issue) {
              fill(k_ring->producer_wait(st), Cfg::kKBytes, k_tiles + st.stage * Cfg::kKBytes, issue);
            },
            [&](auto&& issue) {
              fill(v_ring->producer_wait(st), Cfg::kVBytes, v_tiles + st.stage * Cfg::kVBytes, issue);
            });
        st.advance();
      }
    });
    return;
  }

  // ---- consumers ----
  sm90::warpgroup_reg_alloc<Cfg::kConsumerRegs>();
  const int cw = wg - 1;  // consumer index: rows 64 cw .. 64 cw + 63 of each q-block
  const int t = tid % 128, lane = t % 32, warp = t / 32;
  using Turns = sm90::OrderedTurns<Cfg::kConsumers>;
  const Variant variant = fam.variant();
  const uint32_t q_addr = sm90::smem_u32(q_tile);
  const uint32_t k_addr0 = sm90::smem_u32(k_tiles), v_addr0 = sm90::smem_u32(v_tiles);
  const auto release = [&](sm90::PipelineRing<Cfg::kStages>* ring, const Ring& s) {
    __syncwarp();
    if (lane == 0) ring->consumer_release(s);
  };
  Turns::open(cw);
  Ring st;  // the stage of the tile whose S is computed next (continues across items, as the producer's)
  uint32_t q_lap = 0;

  fam.for_each_item([&](const Item& w, const KvTileRange& range) {
    RowInfo rows[WT::kRowSlots];
    typename Variant::Row vrows[WT::kRowSlots];
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) fam.row(w, 64 * cw + 16 * warp + WT::slot_row(lane, r), rows[r], vrows[r]);

    RowSoftmax<WT, Arch> softmax;
    softmax.init();
    typename WT::OFrag o;
    typename WT::SFrag s;
    typename WT::PFrag p;
#pragma unroll
    for (int e = 0; e < WT::kOElems; ++e) o.r[e] = 0.f;

    if (!range.empty()) {
      LogitsTile lt = fam.logits_tile(w);
      const auto logits_step = [&](int32_t n, float (&f_old)[WT::kRowSlots]) {
        lt.key0 = n * kBN;
        lt.edge = !range.is_interior(n);
        scores_to_probs<WT, Arch>(s, variant, rows, vrows, lt, lane, softmax, f_old);
      };
      sm90::mbarrier_wait(q_full, q_lap & 1u);
      ++q_lap;

      int32_t n = range.tile_end - 1;
      float f_old[WT::kRowSlots];
      // first tile: S only
      Turns::wait(cw);
      k_ring->consumer_wait(st);
      WT::qk(s, q_addr, cw, k_addr0 + st.stage * Cfg::kKBytes);
      Turns::pass(cw);
      sm90::wgmma_wait_group<0>();
      release(k_ring, st);
      logits_step(n, f_old);
      WT::p_to_a(p, s);
      bool accumulate = false;
      for (--n; n >= range.tile_begin; --n) {
        const Ring prev = st;
        st.advance();
        Turns::wait(cw);
        k_ring->consumer_wait(st);
        WT::qk(s, q_addr, cw, k_addr0 + st.stage * Cfg::kKBytes);
        v_ring->consumer_wait(prev);
        WT::pv(o, p, v_addr0 + prev.stage * Cfg::kVBytes, accumulate);
        Turns::pass(cw);
        accumulate = true;
        sm90::wgmma_wait_group<1>();  // S_n has landed; P_{n-1} V_{n-1} may still run
        release(k_ring, st);
        logits_step(n, f_old);
        sm90::wgmma_wait_group<0>();
        release(v_ring, prev);
        RowSoftmax<WT, Arch>::rescale(o, f_old);
        WT::p_to_a(p, s);
      }
      // every Q K^T of the item has completed in this warp: the producer may load the next Q
      __syncwarp();
      if (lane == 0) sm90::mbarrier_arrive(q_empty);
      // last P V
      Turns::wait(cw);
      v_ring->consumer_wait(st);
      WT::pv(o, p, v_addr0 + st.stage * Cfg::kVBytes, accumulate);
      Turns::pass(cw);
      sm90::wgmma_wait_group<0>();
      release(v_ring, st);
      st.advance();
    }
    softmax.finish();
    fam.store(w, 4 * cw + warp, lane, softmax, o);
  });
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE && HIPATTN_BACKEND_CUDA
