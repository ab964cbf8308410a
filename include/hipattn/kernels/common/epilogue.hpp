// hipattn/kernels/common/epilogue.hpp: the end of an attention workgroup.
//   merge_warp_bands   the kWarpsN warps that split one row band's keys merge their states through
//                      LDS (ALGORITHM.md section 4); only the band's first warp goes on
//   NormalizedStore    the output O / l (with the sink in the denominator) in the output's format
//                      (kernels/common/output_store.hpp: 16-bit, fp8 per tensor or per group), and
//                      the LSE (2D kernels)
//   PartialStore       the segment's (task's) normalized partial O and its LSE (log2 units) into the
//                      fp32 workspace, for the split-KV reduce
//   SplitPartial       3D kernels: PartialStore, or NormalizedStore for a planned one-part item
//   DecodeStore        paged decode: NormalizedStore for a one-task sequence, else PartialStore
// An epilogue is a type with static store<Cfg, WT, Arch>(args, work, wm, lane, softmax, o, v_scale)
// (kernels/common/concepts.hpp AttentionEpilogue).
#pragma once
#include <cmath>
#include <cstdint>

#include "hipattn/kernels/common/output_store.hpp"
#include "hipattn/kernels/common/softmax_step.hpp"
#include "hipattn/kernels/common/work.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

// Returns false for the warps whose rows another warp now holds (they stop here).
template <class Cfg, class WT, class Arch>
HIPATTN_DEVICE HIPATTN_FORCEINLINE bool merge_warp_bands(char* smem, int wm, int wn, int lane,
                                                         RowSoftmax<WT, Arch>& sm, typename WT::OFrag& o) {
  if constexpr (Cfg::kWarpsN == 1) {
    return true;
  } else {
    constexpr int kBM = Cfg::kBM, kDv = Cfg::kDv;
    Arch::sync();
    float* mo = reinterpret_cast<float*>(smem);  // [kWarpsN][kBM][kDv]
    float* mm = mo + Cfg::kWarpsN * kBM * kDv;   // [kWarpsN][kBM]
    float* ml = mm + Cfg::kWarpsN * kBM;
    const int row_base = wm * WT::kRows;
    if (wn > 0) {
#pragma unroll
      for (int r = 0; r < WT::kRowSlots; ++r) {
        const int row = row_base + WT::slot_row(lane, r);
        mm[wn * kBM + row] = sm.m[r];
        ml[wn * kBM + row] = sm.l[r];
      }
#pragma unroll
      for (int e = 0; e < WT::kOElems; ++e)
        mo[(wn * kBM + row_base + WT::slot_row(lane, WT::o_slot(e))) * kDv + WT::o_col(lane, e)] = o.r[e];
    }
    Arch::sync();
    if (wn > 0) return false;
#pragma unroll
    for (int w = 1; w < Cfg::kWarpsN; ++w) {
      float fs[WT::kRowSlots], fo[WT::kRowSlots];
#pragma unroll
      for (int r = 0; r < WT::kRowSlots; ++r) {
        const int row = row_base + WT::slot_row(lane, r);
        SoftmaxStat st{sm.m[r], sm.l[r]};
        st.combine(mm[w * kBM + row], ml[w * kBM + row], fs[r], fo[r], [](float x) { return Arch::exp2(x); });
        sm.m[r] = st.m;
        sm.l[r] = st.l;
      }
#pragma unroll
      for (int e = 0; e < WT::kOElems; ++e) {
        const int slot = WT::o_slot(e);
        o.r[e] = o.r[e] * fs[slot] + fo[slot] * mo[(w * kBM + row_base + WT::slot_row(lane, slot)) * kDv + WT::o_col(lane, e)];
      }
    }
    return true;
  }
}

// The (row slot -> row) coordinates of a warp's rows, for the stores.
template <class WT, class Args>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void warp_row_coords(const Args& a, const AttentionWork& w, int wm, int lane,
                                                        RowCoord (&rcs)[WT::kRowSlots]) {
#pragma unroll
  for (int r = 0; r < WT::kRowSlots; ++r) rcs[r] = row_coord(a, w, wm * WT::kRows + WT::slot_row(lane, r));
}

// Each valid row's adjacent column pairs (O elements 2i, 2i + 1), scaled by the row's factor, to
// write(row coordinate, column, o0, o1).
template <class WT, class Write>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void store_pairs(const RowCoord (&rcs)[WT::kRowSlots], const typename WT::OFrag& o,
                                                    const float (&factor)[WT::kRowSlots], int lane, Write write) {
#pragma unroll
  for (int e = 0; e < WT::kOElems; e += 2) {
    const int slot = WT::o_slot(e);
    if (!rcs[slot].valid) continue;
    write(rcs[slot], WT::o_col(lane, e), o.r[e] * factor[slot], o.r[e + 1] * factor[slot]);
  }
}

// Whether every O element's 16-column block (its column / 16) is the same for every lane (sm_90: 8
// columns a block of lanes, 16 with fp8 V; CDNA: 16): then the elements of a group of 16 columns or
// more are known at compile time from lane 0's columns.
template <class WT, int kWave>
constexpr bool o_blocks_lane_independent() {
  for (int lane = 0; lane < kWave; ++lane)
    for (int e = 0; e < WT::kOElems; ++e)
      if (WT::o_col(lane, e) / 16 != WT::o_col(0, e) / 16) return false;
  return true;
}

// The O fragment `o` (consumed: scaled in place) of the rows `rcs`, times the rows' `factor`, in the
// output's format (kernels/common/output_store.hpp); Cfg::kDv columns from column 0 of `oa`
// (output_columns for a warp that holds a column slice). Two phases. 1, per-group fp8 only: a rolled
// pass per group takes the rows' largest magnitude over the group's columns with the tile's row
// reduction (WT::row_max over the lanes that share a row: a quad in the mma.sync / wgmma layouts, lanes
// l ^ 16k on CDNA), writes the scale from the row's leader lane and multiplies the group's
// elements by factor / scale in place; an element's group is its compile-time 16-column block
// (o_blocks_lane_independent) compared with the pass's range. 2: every valid row's pairs, times factor
// (per-tensor fp8: factor / scale; per group: 1, already folded), stored once, straight-line. Each
// element is multiplied once either way. The stores stay out of the rolled loop: inside it, the
// compiler hoists the pairs' addresses out of the loop (64 pair addresses of a d = 256 fragment live
// across it), which spills where registers are tight (sm_90's fp8 tiles at d = 256, MLA decode's
// 168-register consumers).
template <class Cfg, class WT, class Arch>
HIPATTN_DEVICE HIPATTN_FORCEINLINE void store_output_fragment(const OutputArgs& oa, const RowCoord (&rcs)[WT::kRowSlots],
                                                            typename WT::OFrag& o, const float (&factor)[WT::kRowSlots],
                                                            int lane) {
  static_assert(o_blocks_lane_independent<WT, Cfg::kWaveSize>(), "a 16-column block's elements are the same on every lane");
  float mult[WT::kRowSlots];
  if (oa.group_shift >= 0) {
    const int blocks_per_pass = (1 << oa.group_shift) / 16;  // group sizes >= 16 (validated)
    const int passes = Cfg::kDv >> oa.group_shift;
#pragma unroll 1
    for (int g = 0; g < passes; ++g) {
      const int lo = g * blocks_per_pass, hi = lo + blocks_per_pass;
      float amax[WT::kRowSlots];
#pragma unroll
      for (int r = 0; r < WT::kRowSlots; ++r) amax[r] = 0.f;
#pragma unroll
      for (int e = 0; e < WT::kOElems; ++e) {
        const int b = WT::o_col(0, e) / 16, slot = WT::o_slot(e);
        if (b >= lo && b < hi) amax[slot] = fmaxf(amax[slot], fabsf(o.r[e] * factor[slot]));  // fmaxf drops a NaN
      }
      float fold[WT::kRowSlots];
#pragma unroll
      for (int r = 0; r < WT::kRowSlots; ++r) {
        const float s = output_group_scale(oa, WT::row_max(amax[r]));
        fold[r] = factor[r] / s;
        if (rcs[r].valid && WT::row_leader(lane)) oa.group_scale[group_scale_offset(oa, rcs[r].token, rcs[r].q_head, g)] = s;
      }
#pragma unroll
      for (int e = 0; e < WT::kOElems; ++e) {
        const int b = WT::o_col(0, e) / 16;
        if (b >= lo && b < hi) o.r[e] *= fold[WT::o_slot(e)];
      }
    }
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) mult[r] = 1.f;
  } else {
    const float tensor_mult = output_multiplier(oa);
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) mult[r] = factor[r] * tensor_mult;
  }
#pragma unroll
  for (int e = 0; e < WT::kOElems; e += 2) {
    const int slot = WT::o_slot(e);
    if (!rcs[slot].valid) continue;
    store_out2<Arch, Cfg::kBf16>(oa, output_offset(oa, rcs[slot].token, rcs[slot].q_head, WT::o_col(lane, e)),
                                 o.r[e] * mult[slot], o.r[e + 1] * mult[slot]);
  }
}

struct NormalizedStore {
  template <class Cfg, class WT, class Arch, class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store(const Args& a, const AttentionWork& w, int wm, int lane,
                                                       const RowSoftmax<WT, Arch>& sm, typename WT::OFrag& o,
                                                       float v_scale) {
    float factor[WT::kRowSlots];
    RowCoord rcs[WT::kRowSlots];
    warp_row_coords<WT>(a, w, wm, lane, rcs);
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      float lse2;
      const float sink2 = (a.sinks != nullptr && rcs[r].valid) ? a.sinks[rcs[r].q_head] * kLog2e : -INFINITY;
      factor[r] = finalize_with_sink(sm.m[r], sm.l[r], sink2, lse2, [](float x) { return Arch::exp2(x); },
                                     [](float x) { return __log2f(x); }) * v_scale;
      if (a.lse != nullptr && rcs[r].valid && WT::row_leader(lane))
        a.lse[static_cast<int64_t>(rcs[r].q_head) * a.lse_stride_head + static_cast<int64_t>(rcs[r].token) * a.lse_stride_token] =
            lse2 * kLn2;
    }
    store_output_fragment<Cfg, WT, Arch>(a.out, rcs, o, factor, lane);
  }
};

// A segment's (or a planned task's) partial state: O normalized within the segment and its LSE
// (log2 units; -inf and O = 0 when the segment saw no key). A slot's (a planned task's, or a
// paged-decode segment's) rows sit at [slot, row of its item, q head] (w.segment is the slot; the
// item's q rows laid out per slot: w.q_len of them); arguments whose kPartialRowsByToken hook is set
// (unified's) keep their uniform segments at [segment, token, q head].
struct PartialStore {
  template <class Cfg, class WT, class Arch, class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store(const Args& a, const AttentionWork& w, int wm, int lane,
                                                       const RowSoftmax<WT, Arch>& sm, typename WT::OFrag& o,
                                                       float v_scale) {
    auto row = [&](const RowCoord& rc) -> int64_t {
      if constexpr (Args::kPartialRowsByToken) {  // uniform segments at [segment, token, q head]
        if (a.tasks == nullptr)
          return (static_cast<int64_t>(w.segment) * a.num_tokens + rc.token) * a.num_q_heads + rc.q_head;
      }
      return (static_cast<int64_t>(w.segment) * w.q_len + rc.info.i) * a.num_q_heads + rc.q_head;
    };
    float factor[WT::kRowSlots];
    RowCoord rcs[WT::kRowSlots];
    warp_row_coords<WT>(a, w, wm, lane, rcs);
#pragma unroll
    for (int r = 0; r < WT::kRowSlots; ++r) {
      const float lse2 = sm.l[r] > 0.f ? sm.m[r] + __log2f(sm.l[r]) : -INFINITY;
      factor[r] = sm.l[r] > 0.f ? v_scale / sm.l[r] : 0.f;
      if (rcs[r].valid && WT::row_leader(lane)) a.ws_lse[row(rcs[r])] = lse2;
    }
    store_pairs<WT>(rcs, o, factor, lane, [&](const RowCoord& rc, int col, float o0, float o1) {
      float* dst = a.ws_o + row(rc) * Cfg::kDv + col;
      *reinterpret_cast<float2*>(dst) = make_float2(o0, o1);
    });
  }
};

// The 3D kernels' store: planned tasks of an item that has one part write the output directly
// (NormalizedStore: no reduce work), every other task or segment its partial state.
struct SplitPartial {
  template <class Cfg, class WT, class Arch, class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store(const Args& a, const AttentionWork& w, int wm, int lane,
                                                       const RowSoftmax<WT, Arch>& sm, typename WT::OFrag& o,
                                                       float v_scale) {
    // the task's part count is read again here rather than kept in a register through the main loop
    if (a.tasks != nullptr && a.tasks[w.segment].parts == 1)
      NormalizedStore::template store<Cfg, WT, Arch>(a, w, wm, lane, sm, o, v_scale);
    else
      PartialStore::template store<Cfg, WT, Arch>(a, w, wm, lane, sm, o, v_scale);
  }
};

// The paged-decode store: the output directly for a sequence in one task (one partition, or a
// planned one-part sequence), else the partial state at the task's slot (planned, or uniform
// segments).
struct DecodeStore {
  template <class Cfg, class WT, class Arch, class Args>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE static void store(const Args& a, const AttentionWork& w, int wm, int lane,
                                                       const RowSoftmax<WT, Arch>& sm, typename WT::OFrag& o,
                                                       float v_scale) {
    if (a.tasks != nullptr ? a.tasks[w.segment].parts == 1 : a.num_segments == 1)
      NormalizedStore::template store<Cfg, WT, Arch>(a, w, wm, lane, sm, o, v_scale);
    else
      PartialStore::template store<Cfg, WT, Arch>(a, w, wm, lane, sm, o, v_scale);
  }
};

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
