// hipattn/kernels/mla_decode/kernels.hpp: the MLA decode kernels: sm_90's warp-specialised kernel
// (kernels/mla_decode/config.hpp states the roles and the shared memory; ALGORITHM.md section 11 the
// schedule), and the CDNA kernel at the end (the attention skeleton, MlaDecodeCdnaConfig).
//
// The consumers' turns. Tile m of the workgroup's task is owned by consumer m % 2, which computes
// S_m = Q K_m^T (wgmma from shared memory), applies the mask and the online softmax step with the
// rows' running max, and publishes P_m (16-bit) and the rows' (max, factor f_m) through shared memory
// (a named barrier: the owner arrives, the other consumer syncs). Both rescale their half of O by
// f_m and add P_m V_m, the owner with P from registers, the other from shared memory. A consumer's
// step for its tile m: take the other's P_{m-1} (sync, rescale O), issue P_{m-1} V_{m-1} and S_m
// behind it, wait for both, softmax, publish P_m, issue P_m V_m and wait for it. The other
// consumer's step runs meanwhile (its products fill the tensor cores during this one's softmax).
// Every step starts and ends with no product in flight: accumulators in flight across a loop's back
// edge, or O rescaled between two issues, make ptxas serialise all the warpgroup's products (its
// C7514 / C7515 notes; the cost: bench/NOTES.md, run v13). Each consumer keeps its own share of the row sums (the
// tiles it owned, rescaled by every f); the two shares add up at the end. The one P buffer is safe:
// its writer has waited for its own product of the previous P (the only other read of the buffer).
//
// The ring's stages are released by every consumer warp once its last product reading the stage has
// completed; the producer refills a stage as soon as both consumers have released it.
//
// Partial tasks (a sequence the planner split) write O normalized within the task and the LSE (log2
// units) to the workspace; paged_decode_reduce_kernel merges them and writes the output in its format.
// Whole sequences write the output and the LSE directly: each consumer its 256 columns, in the
// output's format (16-bit, fp8 per tensor, fp8 per group), over the window of the output that starts
// at its first column (kernels/common/output_store.hpp output_columns, epilogue.hpp store_output_fragment). The
// wgmma accumulator is the one-band warp tile's O layout (arch/sm90/warpgroup_tile.hpp): lane l of
// warp w holds rows 16 w + l / 4 (+ 8) and, of every 8-column tile, columns 2 (l % 4) and 2 (l % 4) + 1,
// so a row's columns lie in the 4 lanes of one quad of one warp; a group's maximum is the tile's row
// reduction over that quad (WT::row_max), never across warps or consumers (a group of <= 128 columns
// lies within one consumer's 256), and the quad's first lane writes the scale.
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/kernels/mla_decode/config.hpp"
#include "hipattn/tile/tile_range.hpp"

#if defined(HIPATTN_HAS_DEVICE) && defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/arch/arch.hpp"
#include "hipattn/arch/sm90/pipeline.hpp"
#include "hipattn/arch/sm90/warpgroup_tile.hpp"
#include "hipattn/kernels/common/epilogue.hpp"
#include "hipattn/kernels/common/softmax_step.hpp"

namespace hipattn {

// The work of workgroup x: sequence, row block, tiles [t_begin, t_end), and whether it is one part of
// several (its result is then a partial state in slot `slot`). False for an empty plan slot.
struct MlaWork {
  int32_t seq = 0, rb = 0, slot = 0, kv_len = 0;
  int32_t t_begin = 0, t_end = 0;
  bool partial = false;
  KvTileRange range{};
};

HIPATTN_DEVICE HIPATTN_FORCEINLINE bool mla_work(const MlaDecodeKernelArgs& a, int32_t kBN, MlaWork& w) {
  const int32_t x = static_cast<int32_t>(blockIdx.x);
  w.slot = x / a.row_blocks;
  w.rb = x - w.slot * a.row_blocks;
  if (a.tasks != nullptr) {
    const PlanTask t = a.tasks[w.slot];
    if (t.item < 0) return false;
    w.seq = t.item;
    w.t_begin = t.tile_begin;
    w.t_end = t.tile_end;
    w.partial = t.parts > 1;
  } else {
    w.seq = w.slot;
  }
  const int32_t len = a.seq_lens_k[w.seq];
  w.kv_len = len > 0 ? len : 0;
  w.range = DecodeItemShape{a.q_len, kBN, true, -1}.range(w.kv_len);
  if (a.tasks == nullptr) {
    w.t_begin = w.range.empty() ? 0 : w.range.tile_begin;
    w.t_end = w.range.empty() ? 0 : w.range.tile_end;
  }
  return true;
}

// The sm_90 kernel's shared memory (config.hpp's regions, from the base aligned up to 1024 bytes; the
// kernel carves it up in its own body, where the offsets' arithmetic compiles as it always did).
template <class Cfg>
struct MlaSmem {
  char* q_tile;      // Q: 64 rows x 576, 128-byte swizzle
  char* kv_tiles;    // the ring: kStages stages of kBN rows x 576, 128-byte swizzle
  char* p_tile;      // the turn owner's P (16-bit)
  float* m_pub;      // [2][kBM]: the rows' max after tile m (m % 2), published by its owner
  float* f_pub;      // [2][kBM]: the rows' factor f_m, published with it
  float* l_share;    // [2][kBM]: the consumers' shares of the row sums
  uint64_t* q_full;  // Q has landed
  uint64_t* full;    // [kStages]: the stage has landed
  uint64_t* empty;   // [kStages]: every consumer warp has released the stage

  // The barriers' initialisation by thread 0, seen by every thread (a workgroup barrier).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void init_barriers(int tid) const {
    if (tid == 0) {
      sm90::mbarrier_init(q_full, 128);  // every producer thread's cp.async arrival
      for (int s = 0; s < Cfg::kStages; ++s) {
        sm90::mbarrier_init(&full[s], 128);
        sm90::mbarrier_init(&empty[s], 4 * Cfg::kConsumers);  // every consumer warp
      }
      sm90::fence_barrier_init();
    }
    __syncthreads();
  }
};

template <class Cfg>
using MlaWarpgroupTile = sm90::WarpgroupTile<Cfg::kBf16, Cfg::kDqk, Cfg::kBN, Cfg::kDvHalf, Cfg::kBM>;

// The producer warpgroup (warpgroup 0; lane and warp of its 128 threads): the workgroup's Q once,
// then its task's KV tiles into the ring.
template <class Cfg>
struct MlaProducer {
  using Arch = DeviceArch;
  using WT = MlaWarpgroupTile<Cfg>;
  using QTile = typename WT::QTile;  // 64 rows x 576, 128-byte swizzle
  using Tile = typename WT::KTile;   // each KV stage: kBN rows x 576, 128-byte swizzle
  using Ring = sm90::RingState<Cfg::kStages>;
  static constexpr int kBN = Cfg::kBN;

  const MlaDecodeKernelArgs& a;
  const MlaWork& w;
  const MlaSmem<Cfg> sm;
  int32_t row0;  // the workgroup's first query row
  int lane, warp;
  char* raw_tiles;  // fp8 caches: the two raw staging buffers of kBN rows x 576 codes

  // Q: warp w gathers rows 16 w .., four rows an instruction (lane / 8), 8 elements a lane, column
  // block k (64 dims: 128 bytes of the tile) by k; block 8 is the rope part. The lane's first element
  // of row 4 g + lane / 8 of the warp's: qn (latent) and qr (rope), in elements of the query's type
  // (codes for fp8 queries, whose strides count codes); false past the rows (qn, qr: row 0's).
  template <class T>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE bool q_row(int g, const T* base_n, const T* base_r, const T*& qn, const T*& qr) const {
    const int row = 16 * warp + 4 * g + lane / 8;
    const int32_t r = row0 + row;
    const bool valid = r < a.rows;
    uint32_t i = 0, h = 0;
    a.heads_div.divmod(static_cast<uint32_t>(valid ? r : 0), i, h);
    const int64_t token = static_cast<int64_t>(w.seq) * a.q_len + i;
    qn = base_n + token * a.q_stride_token + int64_t(h) * a.q_stride_head + 8 * (lane % 8);
    qr = base_r + token * a.q_rope_stride_token + int64_t(h) * a.q_rope_stride_head + 8 * (lane % 8);
    return valid;
  }

  // 16-bit queries: Q by cp.async (zero-filled past the rows); every thread arrives on q_full.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q16() const {
#pragma unroll 1
    for (int g = 0; g < 4; ++g) {
      const uint16_t *qn = nullptr, *qr = nullptr;
      const bool valid = q_row(g, a.q, a.q_rope, qn, qr);
      const int row = 16 * warp + 4 * g + lane / 8;
#pragma unroll
      for (int k = 0; k < 9; ++k)
        sm90::cp_async_16(sm.q_tile + QTile::offset(row, 128 * k + 16 * (lane % 8)), k < 8 ? qn + 64 * k : qr, valid);
    }
    sm90::cp_async_mbarrier_arrive(sm.q_full);
  }

  // fp8 queries of kind kQ: 8 codes a lane through registers, converted exactly to the 16-bit type
  // (e4m3 fits f16 and bf16), stored by the generic proxy (the caller fences them for wgmma).
  template <KvKind kQ>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q8() const {
    const auto* q8 = reinterpret_cast<const uint8_t*>(a.q);
    const auto* q8r = reinterpret_cast<const uint8_t*>(a.q_rope);
#pragma unroll 1
    for (int g = 0; g < 4; ++g) {
      const uint8_t *qn = nullptr, *qr = nullptr;
      const bool valid = q_row(g, q8, q8r, qn, qr);
      const int row = 16 * warp + 4 * g + lane / 8;
#pragma unroll 3
      for (int k = 0; k < 9; ++k) {
        uint2 codes = make_uint2(0u, 0u);
        if (valid) codes = *reinterpret_cast<const uint2*>(k < 8 ? qn + 64 * k : qr);
        uint32_t v[4];
        Arch::template dequant_fp8x4<kQ, Cfg::kBf16>(codes.x, v[0], v[1]);
        Arch::template dequant_fp8x4<kQ, Cfg::kBf16>(codes.y, v[2], v[3]);
        *reinterpret_cast<uint4*>(sm.q_tile + QTile::offset(row, 128 * k + 16 * (lane % 8))) = make_uint4(v[0], v[1], v[2], v[3]);
      }
    }
  }

  // The Q tile in 16 bits, announced on q_full.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q() const {
    if (a.q_kind == KvKind::same16) {
      load_q16();
    } else {
      if (a.q_kind == KvKind::e4m3fn) load_q8<KvKind::e4m3fn>();
      else load_q8<KvKind::e4m3fnuz>();
      sm90::fence_proxy_async_shared();  // generic-proxy stores, read by wgmma (async proxy)
      sm90::mbarrier_arrive(sm.q_full);
    }
  }

  // The cache row of key `key` of the sequence (null past the context: nothing is read there).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const uint8_t* row_of(int32_t key) const {
    if (key >= w.kv_len) return nullptr;
    uint32_t pg = 0, slot = 0;
    a.page_div.divmod(static_cast<uint32_t>(key), pg, slot);
    const int64_t page = a.block_table[int64_t(w.seq) * a.block_table_stride + pg];
    return a.kv + page * a.kv_stride_page_bytes + int64_t(slot) * a.kv_stride_slot_bytes;
  }

  // fp8: tile n's codes into raw buffer `buf`, eight rows an instruction (lane / 4), 64 contiguous
  // bytes of each; one cp.async group a tile (empty past the task).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void issue_raw(int32_t n, int buf) const {
    if (n < w.t_end) {
      char* raw = raw_tiles + buf * Cfg::kRawBytes;
#pragma unroll 1
      for (int g = 0; g < kBN / 32; ++g) {
        const int row = (kBN / 4) * warp + 8 * g + lane / 4;
        const uint8_t* src = row_of(n * kBN + row);
        const bool valid = src != nullptr;
        if (!valid) src = a.kv;  // zero-filled (source size 0): the address is not read
#pragma unroll
        for (int k = 0; k < 9; ++k) {
          const int code = 64 * k + 16 * (lane % 4);
          sm90::cp_async_16(raw + row * Cfg::kDqk + code, src + code, valid);
        }
      }
    }
    sm90::cp_async_commit();
  }

  // 16-bit cache: tile n gathered into the stage `dst` by cp.async, four rows an instruction, 128
  // contiguous bytes of each (warp w: rows w kBN / 4 ..); every thread arrives on `full` as they land.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void gather_tile(int32_t n, char* dst, uint64_t* full) const {
#pragma unroll 1
    for (int g = 0; g < kBN / 16; ++g) {
      const int row = (kBN / 4) * warp + 4 * g + lane / 8;
      const uint8_t* src = row_of(n * kBN + row);
      const bool valid = src != nullptr;
      if (!valid) src = a.kv;  // zero-filled (source size 0): the address is not read
#pragma unroll
      for (int k = 0; k < 9; ++k)
        sm90::cp_async_16(dst + Tile::offset(row, 128 * k + 16 * (lane % 8)), src + 128 * k + 16 * (lane % 8), valid);
    }
    sm90::cp_async_mbarrier_arrive(full);
  }

  // fp8 cache: a tile's codes, landed in `raw` (this thread's own chunks: no other thread reads
  // them), converted to 16-bit into the stage `dst` by the generic proxy.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void convert_tile(const char* raw, char* dst) const {
#pragma unroll 1
    for (int g = 0; g < kBN / 32; ++g) {
      const int row = (kBN / 4) * warp + 8 * g + lane / 4;
#pragma unroll 3
      for (int k = 0; k < 9; ++k) {
        const int code = 64 * k + 16 * (lane % 4);  // the chunk's first code (column)
        const uint4 v = *reinterpret_cast<const uint4*>(raw + row * Cfg::kDqk + code);
        const uint32_t words[4] = {v.x, v.y, v.z, v.w};
        uint32_t h[8];
#pragma unroll
        for (int j = 0; j < 4; ++j) Arch::template dequant_fp8x4<Cfg::kKv, Cfg::kBf16>(words[j], h[2 * j], h[2 * j + 1]);
        *reinterpret_cast<uint4*>(dst + Tile::offset(row, 2 * code)) = make_uint4(h[0], h[1], h[2], h[3]);
        *reinterpret_cast<uint4*>(dst + Tile::offset(row, 2 * code + 16)) = make_uint4(h[4], h[5], h[6], h[7]);
      }
    }
  }

  // The task's tiles, each into the next stage once both consumers have released it (fp8: the first
  // two tiles' codes in flight first).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_kv() const {
    if constexpr (Cfg::kKv != KvKind::same16) {
      issue_raw(w.t_begin, 0);
      issue_raw(w.t_begin + 1, 1);
    }
    Ring st;
    for (int32_t n = w.t_begin; n < w.t_end; ++n) {
      sm90::mbarrier_wait(&sm.empty[st.stage], st.producer_parity());
      char* dst = sm.kv_tiles + st.stage * Cfg::kKvBytes;
      if constexpr (Cfg::kKv == KvKind::same16) gather_tile(n, dst, &sm.full[st.stage]);
      else {
        // the tile's codes landed in raw[lap % 2]; converted, then the tile two ahead issued there
        const int lap = n - w.t_begin;
        sm90::cp_async_wait<1>();  // this thread's copies of tile n (the older of two groups)
        convert_tile(raw_tiles + (lap & 1) * Cfg::kRawBytes, dst);
        sm90::fence_proxy_async_shared();  // generic-proxy stores, read by wgmma (async proxy)
        sm90::mbarrier_arrive(&sm.full[st.stage]);
        issue_raw(n + 2, lap & 1);
      }
      st.advance();
    }
  }
};

// The consumer's epilogue: its rows' LSE and output factors, then its columns of O as the partial
// state (split sequences) or the output.
template <class Cfg, class WT, class Arch>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void mla_epilogue(const MlaDecodeKernelArgs& a, const MlaWork& w, int32_t row0, int c,
                                                     int warp, int lane, int32_t nt, float kv_scale,
                                                     const RowInfo (&rows)[WT::kRowSlots],
                                                     const RowSoftmax<WT, Arch>& softmax, const typename WT::OFrag& o) {
  float factor[WT::kRowSlots];
  RowCoord rcs[WT::kRowSlots];
#pragma unroll
  for (int r = 0; r < WT::kRowSlots; ++r) {
    const int32_t rr = row0 + 16 * warp + WT::slot_row(lane, r);
    rcs[r].valid = rr < a.rows;
    rcs[r].token = w.seq * a.q_len + rows[r].i;
    rcs[r].q_head = rows[r].q_head;
    rcs[r].info = rows[r];
    float lse2;
    factor[r] = finalize_with_sink(softmax.m[r], softmax.l[r], -INFINITY, lse2, [](float x) { return Arch::exp2(x); },
                                   [](float x) { return __log2f(x); });
    factor[r] *= kv_scale;  // V's per-tensor scale (partials carry it too: the merge is linear in O)
    if (c == 0 && rcs[r].valid && WT::row_leader(lane)) {
      if (w.partial) a.ws_lse[(int64_t(w.slot) * a.q_len + rows[r].i) * a.num_heads + rows[r].q_head] = lse2;
      else if (a.lse != nullptr)
        a.lse[int64_t(rcs[r].token) * a.lse_stride_token + int64_t(rows[r].q_head) * a.lse_stride_head] = lse2 * kLn2;
    }
  }
  const int col0 = c * Cfg::kDvHalf;
  if (w.partial) {
    store_pairs<WT>(rcs, o, factor, lane, [&](const RowCoord& rc, int col, float o0, float o1) {
      if (nt == 0) o0 = o1 = 0.f;  // no key: O was never started
      float* dst = a.ws_o + ((int64_t(w.slot) * a.q_len + rc.info.i) * a.num_heads + rc.q_head) * Cfg::kDv + col0 + col;
      *reinterpret_cast<float2*>(dst) = make_float2(o0, o1);
    });
  } else {
    // No key (nt == 0): O was never started (its registers hold anything), so zeros are stored; a
    // copy by select (after the last product), as the partial store's pairs are.
    typename WT::OFrag out;
#pragma unroll
    for (int e = 0; e < WT::kOElems; ++e) out.r[e] = nt > 0 ? o.r[e] : 0.f;
    store_output_fragment<typename Cfg::ConsumerOut, WT, Arch>(output_columns(a.out, col0), rcs, out, factor, lane);
  }
}

// A consumer's side of the turns (warpgroup 1 + c; lane, warp of its 128 threads): the ring's stages
// of the task's tiles, and the hand-over of P and the rows' statistics between the two consumers.
template <class Cfg, class WT, class Arch>
struct MlaTurns {
  using Ring = sm90::RingState<Cfg::kStages>;
  static constexpr int kBM = Cfg::kBM;
  static constexpr uint32_t kPReady0 = 1;  // named barriers kPReady0 + owner (the row-sum exchange: 3)

  const MlaSmem<Cfg>& sm;
  const MlaWork& w;
  int c, warp, lane;
  uint32_t kv_addr0, v_off;  // the ring's shared-window address; this consumer's V column blocks in a stage

  // The ring's position of task tile n (the producer's walk from the task's first tile).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE Ring stage_of(int32_t n) const { return Ring::at(n - w.t_begin); }
  // Task tile n's stage released by this warp (its last product reading the stage has completed).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void release(int32_t n) const {
    __syncwarp();
    if (lane == 0) sm90::mbarrier_arrive(&sm.empty[stage_of(n).stage]);
  }
  // This consumer's half of V in the stage of tile index m of the task (V: the first 512 columns of K).
  HIPATTN_DEVICE HIPATTN_FORCEINLINE uint32_t v_addr(int32_t m) const {
    return kv_addr0 + stage_of(w.t_begin + m).stage * Cfg::kKvBytes + v_off;
  }
  // Taking P_m from the other consumer (tile index m of the task): its rows' max and factor, this
  // consumer's row sums and (once started) O rescaled by the factor.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void take(int32_t m, RowSoftmax<WT, Arch>& softmax, typename WT::OFrag& o,
                                               bool started) const {
    const float* mp = sm.m_pub + (m & 1) * kBM;
    const float* fp = sm.f_pub + (m & 1) * kBM;
    sm90::named_barrier_sync(kPReady0 + (1 - c), 256);
    float f[WT::kRowSlots];
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      const int row = 16 * warp + WT::slot_row(lane, r);
      softmax.m[r] = mp[row];
      f[r] = fp[row];
      softmax.l[r] *= f[r];
    }
    if (started) RowSoftmax<WT, Arch>::rescale(o, f);
    sm90::wgmma_fence_operand(o.r);
  }
  // Handing P_m (the softmax of S_m, thread t of 128) and the rows' (max, factor f) to the other consumer.
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void hand_over(int32_t m, int t, const typename WT::SFrag& s,
                                                    const RowSoftmax<WT, Arch>& softmax,
                                                    const float (&f)[WT::kRowSlots]) const {
    WT::store_p(sm.p_tile, s, t);
    if (WT::row_leader(lane))
#pragma unroll
      for (int r = 0; r < WT::kRowSlots; ++r) {
        const int row = 16 * warp + WT::slot_row(lane, r);
        sm.m_pub[(m & 1) * kBM + row] = softmax.m[r];
        sm.f_pub[(m & 1) * kBM + row] = f[r];
      }
    sm90::fence_proxy_async_shared();
    sm90::named_barrier_arrive(kPReady0 + c, 256);
  }
};

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) mla_decode_sm90_kernel(const __grid_constant__ MlaDecodeKernelArgs a) {
  using Arch = DeviceArch;
  if constexpr (Arch::kTarget != Target::sm90) {
    return;
  } else {
    using WT = MlaWarpgroupTile<Cfg>;
    using Ring = sm90::RingState<Cfg::kStages>;
    constexpr int kBN = Cfg::kBN, kBM = Cfg::kBM;
    extern __shared__ __align__(1024) char mla_smem_raw[];
    char* smem = mla_smem_raw + ((1024u - (sm90::smem_u32(mla_smem_raw) & 1023u)) & 1023u);
    char* q_tile = smem + Cfg::kQOffset;
    char* kv_tiles = smem + Cfg::kKvOffset;
    char* p_tile = smem + Cfg::kPOffset;
    float* m_pub = reinterpret_cast<float*>(smem + Cfg::kStatsOffset);  // [2][kBM]
    float* f_pub = m_pub + 2 * kBM;                                      // [2][kBM]
    float* l_share = f_pub + 2 * kBM;                                    // [2][kBM]
    uint64_t* q_full = reinterpret_cast<uint64_t*>(smem + Cfg::kBarOffset);
    uint64_t* full = q_full + 1;
    uint64_t* empty = full + Cfg::kStages;
    const MlaSmem<Cfg> sm{q_tile, kv_tiles, p_tile, m_pub, f_pub, l_share, q_full, full, empty};

    const int tid = static_cast<int>(threadIdx.x);
    const int wg = tid / 128;
    MlaWork w;
    if (!mla_work(a, kBN, w)) return;  // uniform over the workgroup: before any barrier

    sm.init_barriers(tid);

    const int32_t row0 = w.rb * kBM;
    if (wg == 0) {  // ---- producer ----
      sm90::warpgroup_reg_dealloc<Cfg::kProducerRegs>();
      const MlaProducer<Cfg> producer{a, w, sm, row0, tid % 32, tid / 32, smem + Cfg::kRawOffset};
      producer.load_q();
      producer.load_kv();
      return;
    }

    // ---- consumers ----
    sm90::warpgroup_reg_alloc<Cfg::kConsumerRegs>();
    const int c = wg - 1;
    const int t = tid % 128, lane = t % 32, warp = t / 32;
    const float kv_scale = Cfg::kKv == KvKind::same16 ? 1.f : (a.kv_scale != nullptr ? *a.kv_scale : a.kv_scale_value);
    const float q_scale = a.q_kind == KvKind::same16 ? 1.f : (a.q_scale != nullptr ? *a.q_scale : a.q_scale_value);
    const float mult = a.scale_log2 * kv_scale * q_scale;
    const uint32_t q_addr = sm90::smem_u32(q_tile), kv_addr0 = sm90::smem_u32(kv_tiles), p_addr = sm90::smem_u32(p_tile);
    const uint32_t v_off = uint32_t(c) * (Cfg::kDvHalf / 64) * kBN * 128;  // this consumer's V column blocks
    constexpr uint32_t kLBar = 3;  // the named barrier of the row-sum exchange (1, 2: MlaTurns)

    // rows of this lane: slots r = 0, 1 are rows 16 warp + lane / 4 (+ 8) of the block
    RowInfo rows[WT::kRowSlots];
    const int32_t ctx = w.kv_len - a.q_len;
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      const int32_t rr = row0 + 16 * warp + WT::slot_row(lane, r);
      uint32_t i = 0, h = 0;
      a.heads_div.divmod(static_cast<uint32_t>(rr < a.rows ? rr : 0), i, h);
      rows[r] = RowInfo{int32_t(i), ctx + int32_t(i), ctx, int32_t(h)};
    }
    RowSoftmax<WT, Arch> softmax;
    softmax.init();
    typename WT::OFrag o;
    typename WT::SFrag s;
    typename WT::PFrag p;  // O is started by the first product (scale-d 0), never set by other instructions

    const MlaTurns<Cfg, WT, Arch> turns{sm, w, c, warp, lane, kv_addr0, v_off};
    const int32_t nt = w.t_end - w.t_begin;
    if (nt > 0) {
      sm90::mbarrier_wait(q_full, 0);
      LogitsTile lt{0, false, w.kv_len, true, -1, 0.f, 0.f};
      bool started = false;  // O holds a product (the first one starts it: scale-d 0)
      // Each step starts and ends with no product in flight (ptxas serialises a warpgroup's products
      // when accumulators stay in flight across a loop's back edge or a join).
      for (int32_t m = c; m < nt; m += 2) {  // our tiles: m = c, c + 2, ..
        const int32_t n = w.t_begin + m;
        if (m > 0) {  // the other consumer's P_{m-1}, then P_{m-1} V_{m-1}
          turns.take(m - 1, softmax, o, started);
          WT::pv_ss(o, p_addr, turns.v_addr(m - 1), started);
          started = true;
        }
        {  // S_m behind it
          const Ring st = turns.stage_of(n);
          sm90::mbarrier_wait(&full[st.stage], st.phase);
          WT::qk(s, q_addr, 0, kv_addr0 + st.stage * Cfg::kKvBytes);
        }
        sm90::wgmma_wait_group<0>();
        sm90::wgmma_fence_operand(s.r);
        sm90::wgmma_fence_operand(o.r);
        if (m > 0) turns.release(n - 1);
        lt.key0 = n * kBN;
        lt.edge = !w.range.is_interior(n);
        if (lt.edge) mask_scores<WT>(s, rows, lt, lane);
        float f[WT::kRowSlots];
        softmax.update_rows_raw(s, mult, f);
        turns.hand_over(m, t, s, softmax, f);  // P_m and the rows' (m, f) to the other consumer
        if (started) RowSoftmax<WT, Arch>::rescale(o, f);
        WT::p_to_a(p, s);
        WT::pv(o, p, turns.v_addr(m), started);
        started = true;
        sm90::wgmma_wait_group<0>();
        sm90::wgmma_fence_operand(o.r);
        turns.release(n);
      }
      if ((nt - 1) % 2 != c) {  // the last tile is the other consumer's: its P V
        turns.take(nt - 1, softmax, o, started);
        WT::pv_ss(o, p_addr, turns.v_addr(nt - 1), started);
        sm90::wgmma_wait_group<0>();
        sm90::wgmma_fence_operand(o.r);
        turns.release(w.t_end - 1);
      }
    }
    softmax.finish();
    // the two consumers' shares of the row sums
    if (WT::row_leader(lane))
#pragma unroll
      for (int r = 0; r < WT::kRowSlots; ++r) l_share[c * kBM + 16 * warp + WT::slot_row(lane, r)] = softmax.l[r];
    sm90::named_barrier_sync(kLBar, 256);
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) softmax.l[r] += l_share[(1 - c) * kBM + 16 * warp + WT::slot_row(lane, r)];

    // ---- epilogue ----
    mla_epilogue<Cfg, WT, Arch>(a, w, row0, c, warp, lane, nt, kv_scale, rows, softmax, o);
  }
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE && HIPATTN_BACKEND_CUDA

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/kernels/common/attention_kernel.hpp"

namespace hipattn {

// The CDNA kernel (MlaDecodeCdnaConfig, kernels/mla_decode/config.hpp): the attention skeleton with paged
// decode's scheduler and store over the latent cache (V read from the K stage). Empty in the device
// passes of other targets (the skeleton returns there).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) mla_decode_cdna_kernel(const mla_cdna_args_t<Cfg> args) {
  HIPATTN_KERNEL_MANIFEST(kernel_manifest<Cfg>("mla_decode"));
  extern __shared__ __align__(16) char hipattn_smem[];
  attention_kernel<Cfg, DecodeTaskScheduler, DecodeStore>(args, hipattn_smem);
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
