// hipattn/kernels/unified_mainloop.hpp: the body shared by the 2D and the 3D split-KV unified
// attention kernels (ALGORITHM.md section 5).
//
// A workgroup owns one q-block (block_q tokens x rows_per_token q heads of one kv head = kBM rows)
// and, in the 3D kernel, one segment of its KV tiles. Warps are a kWarpsM x kWarpsN grid: warp
// (wm, wn) owns rows [wm * 16 * kMT, ...) and keys [wn * kKN, ...) of every KV tile, and keeps its
// own online-softmax state; warps of one row band merge through LDS at the end.
// KV tiles stream global -> LDS with kStages-deep asynchronous copies gathered through the block
// table; keys outside the q-block's visible range are never read (zero-filled), so unowned slots
// and padded block-table entries contribute exactly zero. fp8 tiles land in a staging buffer and are
// dequantized to 16-bit in LDS (per-tensor scales fold into the score scale and the output;
// per-(token, head) scales multiply score columns and P columns).
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/arch/arch.hpp"
#include "hipattn/kernels/unified_args.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/paged/varlen.hpp"
#include "hipattn/tile/lds_layout.hpp"
#include "hipattn/tile/online_softmax.hpp"
#include "hipattn/tile/tile_range.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn::detail {

// Where a row of the workgroup tile lives.
struct RowCoord {
  bool valid;
  int32_t token;  // global token index
  int32_t q_head;
  RowInfo info;
};

template <class Cfg, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE RowCoord row_coord(const Args& a, int row, int seq_tok0, int q_len, int ctx,
                                                      int qb, int kvh, int chunk) {
  RowCoord rc{};
  uint32_t tok, hh;
  a.rows_div.divmod(static_cast<uint32_t>(row), tok, hh);
  const int32_t head_in_group = chunk * a.rows_per_token + static_cast<int32_t>(hh);
  const int32_t i = qb * a.block_q + static_cast<int32_t>(tok);
  rc.valid = static_cast<int32_t>(tok) < a.block_q && i < q_len && head_in_group < a.group;
  rc.token = seq_tok0 + i;
  rc.q_head = kvh * a.group + head_in_group;
  rc.info = RowInfo{i, ctx + i, ctx, rc.q_head, 0.f};
  return rc;
}

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

// The kernel body. kSplit: write partial states to the workspace (3D) instead of the output (2D).
template <class Cfg, bool kSplit, class Args>
HIPATTN_DEVICE void unified_attention_body(const Args& a, char* smem) {
  using Arch = DeviceArch;
  if constexpr (Arch::kWaveSize != Cfg::kWaveSize) {
    return;  // this instance targets another wave size; never launched on this device
  } else {
  constexpr int kD = Cfg::kD, kBM = Cfg::kBM, kBN = Cfg::kBN, kStages = Cfg::kStages;
  constexpr int kThreads = Cfg::kThreads;
  using WT = typename Arch::template WarpTile<Cfg::kBf16, kD, Cfg::kMT, Cfg::kKN>;
  using Tile = SwizzledTile<1, kD>;
  using Variant = typename Cfg::Variant;
  using Offset = typename Cfg::Offset;
  static_assert(kStages >= 2, "the pipeline needs at least two stages");

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = Arch::lane();
  const int warp = tid / Cfg::kWaveSize;
  const int wm = warp % Cfg::kWarpsM, wn = warp / Cfg::kWarpsM;

  // ---- which sequence, q-block, kv head, head chunk, segment ----
  int32_t seq, qb;
  if (a.decode_grid) {
    seq = static_cast<int32_t>(blockIdx.x);
    qb = 0;
  } else {
    // Highest q-blocks first: under causal masking they see the most keys, so starting them first
    // leaves the short blocks for the last wave instead of a tail of long ones.
    const int32_t qblock = static_cast<int32_t>(gridDim.x - 1 - blockIdx.x);
    seq = find_seq_idx(a.cu_seqlens_q, a.num_seqs, qblock, a.block_q);
    qb = qblock - seq_first_q_block(a.cu_seqlens_q, seq, a.block_q);
  }
  if (seq >= a.num_seqs) return;
  const int32_t seq_tok0 = a.cu_seqlens_q[seq];
  const int32_t q_len = a.cu_seqlens_q[seq + 1] - seq_tok0;
  if (qb * a.block_q >= q_len) return;  // past this sequence's q-blocks (the grid is an upper bound)
  const int32_t kv_len = a.seq_lens_k[seq];
  const int32_t ctx = kv_len - q_len;
  const int32_t kvh = static_cast<int32_t>(blockIdx.y) / a.head_chunks;
  const int32_t chunk = static_cast<int32_t>(blockIdx.y) % a.head_chunks;
  const int32_t segment = kSplit ? static_cast<int32_t>(blockIdx.z) : 0;

  const int32_t i_first = qb * a.block_q;
  const int32_t i_last = (q_len < i_first + a.block_q ? q_len : i_first + a.block_q) - 1;
  const KvTileRange range = kv_tile_range(QBlockSpan{i_first, i_last, q_len, kv_len, a.causal, a.window_left}, kBN);
  int32_t t_begin = range.tile_begin, t_end = range.tile_end;
  if constexpr (kSplit) split_tiles(range.tile_begin, range.tile_end, a.num_segments, segment, t_begin, t_end);

  // ---- LDS carve-up ----
  uint16_t* lds_q = reinterpret_cast<uint16_t*>(smem);
  char* kv_base = smem + Cfg::kQBytes;
  auto k_stage = [&](int s) { return kv_base + s * Cfg::kStageBytes; };
  auto v_stage = [&](int s) { return kv_base + (kStages + s) * Cfg::kStageBytes; };
  uint16_t* lds_k16 = reinterpret_cast<uint16_t*>(kv_base + 2 * kStages * Cfg::kStageBytes);  // fp8 only
  uint16_t* lds_v16 = lds_k16 + kBN * kD;
  float* lds_ks = reinterpret_cast<float*>(smem + Cfg::kQBytes + Cfg::kKvBytes);  // [kStages][kBN]
  float* lds_vs = lds_ks + kStages * kBN;

  // ---- Q: kBM rows x kD, zero-filled for invalid rows ----
  {
    constexpr int kChunks = kBM * (kD / 8);
    for (int idx = tid; idx < kChunks; idx += kThreads) {
      const int row = idx / (kD / 8), c = idx % (kD / 8);
      const RowCoord rc = row_coord<Cfg>(a, row, seq_tok0, q_len, ctx, qb, kvh, chunk);
      const uint16_t* src = a.q + (rc.valid ? static_cast<int64_t>(rc.token) * a.q_stride_token +
                                                  static_cast<int64_t>(rc.q_head) * a.q_stride_head + c * 8
                                            : 0);
      Arch::copy_16(lds_q + Tile::chunk_index(row, c), src, rc.valid);
    }
    Arch::copy_commit();
  }

  // ---- KV tile loader ----
  // Thread tid copies chunk column c = tid % kCPR of rows tid / kCPR + i * kRowStep (i < kRowIters)
  // of every tile. The physical blocks of those rows are read from the block table one tile ahead
  // (pages_next), so the table's latency hides behind a tile of compute instead of stalling the issue.
  constexpr int kChunkElems = Cfg::kFp8 ? 16 : 8;  // elements per 16-byte chunk
  constexpr int kCPR = kD / kChunkElems;
  static_assert(kThreads % kCPR == 0 && (kBN % (kThreads / kCPR) == 0 || kThreads / kCPR > kBN), "loader mapping");
  constexpr int kRowStep = kThreads / kCPR;
  constexpr int kRowIters = (kBN + kRowStep - 1) / kRowStep;
  constexpr bool kIdleLoaders = kRowStep > kBN;  // more threads than chunks (small fp8 tiles): rows >= kBN idle
  const int ld_c = tid % kCPR, ld_r0 = tid / kCPR;
  const auto& kv = a.kv;
  auto load_pages = [&](int t, int32_t (&blk)[kRowIters], int32_t (&slot)[kRowIters]) {
#pragma unroll
    for (int i = 0; i < kRowIters; ++i) {
      const int32_t j = t * kBN + ld_r0 + i * kRowStep;
      int32_t page = 0;
      slot[i] = 0;
      blk[i] = -1;  // not read
      if (kIdleLoaders && ld_r0 + i * kRowStep >= kBN) continue;
      if (t < t_end && j >= range.key_begin && j < range.key_end) {
        kv.locate(j, page, slot[i]);
        blk[i] = kv.physical_block(seq, page);
      }
    }
  };
  auto issue_tile = [&](int stage, const int32_t (&blk)[kRowIters], const int32_t (&slot)[kRowIters]) {
    char* kd = k_stage(stage);
    char* vd = v_stage(stage);
#pragma unroll
    for (int i = 0; i < kRowIters; ++i) {
      const int r = ld_r0 + i * kRowStep;
      if (kIdleLoaders && r >= kBN) continue;
      const bool valid = blk[i] >= 0;
      const Offset ko = valid ? kv.k_offset(blk[i], slot[i], kvh) : Offset(0);
      const Offset vo = valid ? kv.v_offset(blk[i], slot[i], kvh) : Offset(0);
      if constexpr (Cfg::kFp8) {
        Arch::copy_16(kd + (r * kD + ld_c * 16), static_cast<const uint8_t*>(kv.k) + ko + ld_c * 16, valid);
        Arch::copy_16(vd + (r * kD + ld_c * 16), static_cast<const uint8_t*>(kv.v) + vo + ld_c * 16, valid);
      } else {
        Arch::copy_16(reinterpret_cast<uint16_t*>(kd) + Tile::chunk_index(r, ld_c),
                      static_cast<const uint16_t*>(kv.k) + ko + ld_c * 8, valid);
        Arch::copy_16(reinterpret_cast<uint16_t*>(vd) + Tile::chunk_index(r, ld_c),
                      static_cast<const uint16_t*>(kv.v) + vo + ld_c * 8, valid);
      }
      if (a.per_token_head_scale && ld_c == 0) {
        const Offset so = valid ? kv.scale_offset(blk[i], slot[i], kvh) : Offset(0);
        Arch::copy_4(lds_ks + stage * kBN + r, kv.k_scale + so, valid);
        Arch::copy_4(lds_vs + stage * kBN + r, kv.v_scale + so, valid);
      }
    }
  };
  // Decode tiles (kWarpsN > 1) are bandwidth-bound and prefetch the block ids a tile ahead; prefill
  // tiles need those registers for S and O, and their two resident workgroups hide the table reads.
  constexpr bool kPrefetchPages = Cfg::kWarpsN > 1;
  int32_t pg_blk[kRowIters], pg_slot[kRowIters];

  // ---- per-lane row state ----
  // Q fragments stay in registers for 16-row warps up to d = 128; larger heads and 32-row warps
  // re-read Q from LDS at each k step (their S and O fragments already fill the register file).
  constexpr bool kQInRegs = kD <= 128 && Cfg::kMT == 1;
  typename WT::QFrag qf;
  typename WT::OFrag of;
  typename WT::SFrag sf;
  float m_row[WT::kRowSlots], l_row[WT::kRowSlots];
  RowInfo rinfo[WT::kRowSlots];
#pragma unroll
  for (int r = 0; r < WT::kRowSlots; ++r) {
    m_row[r] = -INFINITY;
    l_row[r] = 0.f;
    const RowCoord rc = row_coord<Cfg>(a, wm * WT::kRows + WT::slot_row(lane, r), seq_tok0, q_len, ctx, qb, kvh, chunk);
    rinfo[r] = rc.info;
    if (!rc.valid) {  // padding rows are computed but never written: keep their variant reads in bounds
      rinfo[r].i = 0;
      rinfo[r].pos = ctx;
    }
    if constexpr (Variant::kUsesSlope) {
      if (a.logit.alibi_slopes != nullptr && rc.q_head < a.num_q_heads) rinfo[r].slope = a.logit.alibi_slopes[rc.q_head];
    }
  }
#pragma unroll
  for (int e = 0; e < WT::kOElems; ++e) of.r[e] = 0.f;

  // ---- per-tensor fp8 scales fold into the score scale and the output factor ----
  const float k_scale_t = a.k_scale_tensor != nullptr ? *a.k_scale_tensor : 1.f;
  const float v_scale_t = a.v_scale_tensor != nullptr ? *a.v_scale_tensor : 1.f;
  const float qk_scale = a.scale * k_scale_t;
  const float qk_scale_log2 = qk_scale * kLog2e;

  // ---- prologue: Q, then kStages - 1 tiles in flight ----
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    load_pages(t_begin + s, pg_blk, pg_slot);
    if (t_begin + s < t_end) issue_tile(s, pg_blk, pg_slot);
    Arch::copy_commit();
  }
  if constexpr (kPrefetchPages) load_pages(t_begin + kStages - 1, pg_blk, pg_slot);  // the next tile to issue
  Arch::template copy_wait<kStages - 1>();  // Q has landed (the oldest group)
  Arch::sync();
  if constexpr (kQInRegs) WT::load_q(qf, lds_q, wm * WT::kRows);

  for (int t = t_begin; t < t_end; ++t) {
    const int it = t - t_begin;
    const int stage = it % kStages;
    {
      const int tn = t + kStages - 1;
      if constexpr (kPrefetchPages) {
        if (tn < t_end) issue_tile((it + kStages - 1) % kStages, pg_blk, pg_slot);
        Arch::copy_commit();
        if (tn + 1 < t_end) load_pages(tn + 1, pg_blk, pg_slot);
      } else {
        if (tn < t_end) {
          load_pages(tn, pg_blk, pg_slot);
          issue_tile((it + kStages - 1) % kStages, pg_blk, pg_slot);
        }
        Arch::copy_commit();
      }
    }
    Arch::template copy_wait<kStages - 1>();
    Arch::sync();
    const uint16_t* lk;
    const uint16_t* lv;
    if constexpr (Cfg::kFp8) {
      constexpr int kChunks = kBN * (kD / 16);
      const uint8_t* ks = reinterpret_cast<const uint8_t*>(k_stage(stage));
      const uint8_t* vs = reinterpret_cast<const uint8_t*>(v_stage(stage));
      for (int idx = tid; idx < kChunks; idx += kThreads) {
        const int r = idx / (kD / 16), c = idx % (kD / 16);
        dequant_chunk16<Cfg::kKv, Cfg::kBf16, Arch>(ks + r * kD + c * 16, lds_k16 + Tile::chunk_index(r, 2 * c),
                                                    lds_k16 + Tile::chunk_index(r, 2 * c + 1));
        dequant_chunk16<Cfg::kKv, Cfg::kBf16, Arch>(vs + r * kD + c * 16, lds_v16 + Tile::chunk_index(r, 2 * c),
                                                    lds_v16 + Tile::chunk_index(r, 2 * c + 1));
      }
      Arch::sync();
      lk = lds_k16;
      lv = lds_v16;
    } else {
      lk = reinterpret_cast<const uint16_t*>(k_stage(stage));
      lv = reinterpret_cast<const uint16_t*>(v_stage(stage));
    }

    // S = Q K^T for this warp's keys
    const int key_w0 = wn * Cfg::kKN;  // first key of this warp within the tile
    if constexpr (kQInRegs) WT::qk(sf, qf, lk, key_w0);
    else WT::qk_lds(sf, lds_q, wm * WT::kRows, lk, key_w0);

    // logits -> log2 domain, masks on edge tiles
    const bool edge = !range.is_interior(t);
    const int32_t key0 = t * kBN + key_w0;
#pragma unroll
    for (int e = 0; e < WT::kSElems; ++e) {
      const int slot = WT::s_slot(e);
      const int col = WT::s_col(lane, e);
      const int32_t j = key0 + col;
      float s = sf.r[e];
      if (a.per_token_head_scale) s *= lds_ks[stage * kBN + key_w0 + col];
      if constexpr (Variant::kTransformsLogits) {
        s = Variant::transform(a.logit, s * qk_scale, rinfo[slot], j, [](float x) { return Arch::tanh(x); }) * kLog2e;
      } else {
        s *= qk_scale_log2;
      }
      if (edge && !key_visible(j, rinfo[slot].pos, kv_len, a.causal, a.window_left)) s = -INFINITY;
      sf.r[e] = s;
    }
    // online softmax update
    float m_new[WT::kRowSlots], f_old[WT::kRowSlots];
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) m_new[r] = m_row[r];
#pragma unroll
    for (int e = 0; e < WT::kSElems; ++e) m_new[WT::s_slot(e)] = fmaxf(m_new[WT::s_slot(e)], sf.r[e]);
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      m_new[r] = WT::row_max(m_new[r]);
      f_old[r] = Arch::exp2(m_row[r] - safe_max(m_new[r]));
      m_row[r] = m_new[r];
      l_row[r] *= f_old[r];
    }
#pragma unroll
    for (int e = 0; e < WT::kSElems; ++e) {
      const int slot = WT::s_slot(e);
      const float p = Arch::exp2(sf.r[e] - safe_max(m_new[slot]));
      l_row[slot] += p;
      sf.r[e] = a.per_token_head_scale ? p * lds_vs[stage * kBN + key_w0 + WT::s_col(lane, e)] : p;
    }
#pragma unroll
    for (int e = 0; e < WT::kOElems; ++e) of.r[e] *= f_old[WT::o_slot(e)];
    WT::pv(of, sf, lv, key_w0);
    Arch::sync();  // the stage is refilled by the next iteration's copies
  }
  Arch::template copy_wait<0>();

#pragma unroll
  for (int r = 0; r < WT::kRowSlots; ++r) l_row[r] = WT::row_sum(l_row[r]);

  // ---- merge the kWarpsN warps of a row band through LDS ----
  if constexpr (Cfg::kWarpsN > 1) {
    Arch::sync();
    float* mo = reinterpret_cast<float*>(smem);  // [kWarpsN][kBM][kD]
    float* mm = mo + Cfg::kWarpsN * kBM * kD;    // [kWarpsN][kBM]
    float* ml = mm + Cfg::kWarpsN * kBM;
    const int row_base = wm * WT::kRows;
    if (wn > 0) {
#pragma unroll
      for (int r = 0; r < WT::kRowSlots; ++r) {
        const int row = row_base + WT::slot_row(lane, r);
        mm[wn * kBM + row] = m_row[r];
        ml[wn * kBM + row] = l_row[r];
      }
#pragma unroll
      for (int e = 0; e < WT::kOElems; ++e)
        mo[(wn * kBM + row_base + WT::slot_row(lane, WT::o_slot(e))) * kD + WT::o_col(lane, e)] = of.r[e];
    }
    Arch::sync();
    if (wn > 0) return;
#pragma unroll
    for (int w = 1; w < Cfg::kWarpsN; ++w) {
      float fs[WT::kRowSlots], fo[WT::kRowSlots];
#pragma unroll
      for (int r = 0; r < WT::kRowSlots; ++r) {
        const int row = row_base + WT::slot_row(lane, r);
        SoftmaxStat st{m_row[r], l_row[r]};
        st.combine(mm[w * kBM + row], ml[w * kBM + row], fs[r], fo[r], [](float x) { return Arch::exp2(x); });
        m_row[r] = st.m;
        l_row[r] = st.l;
      }
#pragma unroll
      for (int e = 0; e < WT::kOElems; ++e) {
        const int slot = WT::o_slot(e);
        of.r[e] = of.r[e] * fs[slot] +
                  fo[slot] * mo[(w * kBM + row_base + WT::slot_row(lane, slot)) * kD + WT::o_col(lane, e)];
      }
    }
  }

  // ---- epilogue ----
  float factor[WT::kRowSlots];
  RowCoord rcs[WT::kRowSlots];
#pragma unroll
  for (int r = 0; r < WT::kRowSlots; ++r) {
    rcs[r] = row_coord<Cfg>(a, wm * WT::kRows + WT::slot_row(lane, r), seq_tok0, q_len, ctx, qb, kvh, chunk);
    float lse2;
    if constexpr (kSplit) {
      lse2 = l_row[r] > 0.f ? m_row[r] + __log2f(l_row[r]) : -INFINITY;
      factor[r] = l_row[r] > 0.f ? v_scale_t / l_row[r] : 0.f;
      if (rcs[r].valid && WT::row_leader(lane))
        a.ws_lse[(static_cast<int64_t>(segment) * a.num_tokens + rcs[r].token) * a.num_q_heads + rcs[r].q_head] = lse2;
    } else {
      const float sink2 = (a.sinks != nullptr && rcs[r].valid) ? a.sinks[rcs[r].q_head] * kLog2e : -INFINITY;
      factor[r] = finalize_with_sink(m_row[r], l_row[r], sink2, lse2, [](float x) { return Arch::exp2(x); },
                                     [](float x) { return __log2f(x); }) * v_scale_t;
      if (a.lse != nullptr && rcs[r].valid && WT::row_leader(lane))
        a.lse[static_cast<int64_t>(rcs[r].q_head) * a.lse_stride_head + rcs[r].token] = lse2 * kLn2;
    }
  }
#pragma unroll
  for (int e = 0; e < WT::kOElems; e += 2) {
    const int slot = WT::o_slot(e);
    if (!rcs[slot].valid) continue;
    const int col = WT::o_col(lane, e);
    const float o0 = of.r[e] * factor[slot], o1 = of.r[e + 1] * factor[slot];
    if constexpr (kSplit) {
      float* dst = a.ws_o + ((static_cast<int64_t>(segment) * a.num_tokens + rcs[slot].token) * a.num_q_heads +
                             rcs[slot].q_head) * kD + col;
      *reinterpret_cast<float2*>(dst) = make_float2(o0, o1);
    } else {
      uint16_t* dst = a.out + static_cast<int64_t>(rcs[slot].token) * a.o_stride_token +
                      static_cast<int64_t>(rcs[slot].q_head) * a.o_stride_head + col;
      *reinterpret_cast<uint32_t*>(dst) = Arch::template pack2<Cfg::kBf16>(o0, o1);
    }
  }
  }  // wave size matches
}

}  // namespace hipattn::detail
#endif  // HIPATTN_HAS_DEVICE
