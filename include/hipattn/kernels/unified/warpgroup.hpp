// hipattn/kernels/unified/warpgroup.hpp: unified attention's prefill q-blocks on sm_90's
// warp-specialised skeleton (kernels/sm90/warpgroup_pipeline.hpp).
//
//   unified_warpgroup_kernel<Cfg>   one workgroup per (q-block of 128 rows, kv head, head chunk) of the
//                                   2D grid (QBlockScheduler<false>: highest q-blocks first)
//
// The rows are the skeleton's row map (kernels/common/work.hpp row_coord: q tokens x the GQA heads of
// one kv head, packed), so Q is a gather too. The producer warpgroup gathers Q and the paged K / V
// rows by cp.async into the 128-byte-swizzled wgmma stages (WarpgroupRowGather: four whole 128-byte
// lines an instruction; one block-table read a row and tile, shared by K and V), any page size, 64-bit
// offsets; keys outside the q-block's visible range are zero-filled, never read, so unowned slots and
// padded block-table entries contribute exactly zero. Each producer thread arrives on the stage's full
// barrier when its copies land. The consumers are the skeleton's; the logits are the instance's
// variant (softcap, ALiBi, QQ-bias, or a caller's), and the epilogue is the 2D kernels'
// NormalizedStore (sinks, LSE, 16-bit or fp8 outputs per tensor or per group).
//
// What takes this path is the planner's choice (dispatch/unified_plan.hpp unified_warpgroup_eligible):
// 16-bit queries and cache, head sizes 64, 128, 192 and 256, a prefill tile on the 2D grid.
#pragma once
#include <cstdint>

#include "hipattn/kernels/common/kernel_args.hpp"
#include "hipattn/kernels/sm90/warpgroup_config.hpp"
#include "hipattn/kernels/unified/config.hpp"
#include "hipattn/paged/paged_kv.hpp"

namespace hipattn {

// The tile of each head size (128 query rows, kBN keys, kStages deep), as dense prefill's: 227 KiB
// of shared memory hold Q and two stages of 128 keys at d <= 128 (four at d = 64), 96 keys at 192 and
// 80 at 256. Registers (within the 168 a thread of 384 that setmaxnreg redistributes): 56 a producer
// thread and 224 a consumer, 40 / 232 at d = 256 (the producer spills below 40, the consumers below
// 232; what spills at d = 192 and 256: bench/NOTES.md, run v18).
constexpr int unified_warpgroup_keys(int d) { return d == 256 ? 80 : d == 192 ? 96 : 128; }
constexpr int unified_warpgroup_stages(int d) { return d == 64 ? 4 : 2; }
constexpr bool unified_warpgroup_head(int d) { return d == 64 || d == 128 || d == 192 || d == 256; }

template <bool kBf16_, int kD_, class Variant_>
struct UnifiedWarpgroupConfig
    : WarpgroupPipelineConfig<kBf16_, kD_, kD_, unified_warpgroup_keys(kD_), unified_warpgroup_stages(kD_), Variant_,
                              kD_ == 256 ? 40 : 56, kD_ == 256 ? 232 : 224> {
  static_assert(unified_warpgroup_head(kD_), "a head size of the warpgroup pipeline");
  static constexpr int kD = kD_;
  static constexpr Target kTarget = Target::sm90;
  using KvParams = PagedKvView<int64_t, 0, RowKvLayout>;
};

template <class Cfg>
using unified_warpgroup_args_t = UnifiedKernelArgs<typename Cfg::KvParams, typename Cfg::Variant>;

}  // namespace hipattn

#if defined(HIPATTN_HAS_DEVICE) && defined(HIPATTN_BACKEND_CUDA)
#include "hipattn/kernels/common/concepts.hpp"
#include "hipattn/kernels/common/epilogue.hpp"
#include "hipattn/kernels/common/score_scale.hpp"
#include "hipattn/kernels/sm90/warpgroup_pipeline.hpp"
#include "hipattn/kernels/common/work.hpp"

namespace hipattn {

template <class Cfg>
struct UnifiedWarpgroupFamily {
  using Item = AttentionWork;
  using Arch = DeviceArch;
  using WT = WarpgroupTileOf<Cfg>;
  static constexpr int kProducerThreads = 128;
  const unified_warpgroup_args_t<Cfg>& a;  // the kernel's __grid_constant__ parameter
  // the parts it shares with the attention skeleton (kernels/common/concepts.hpp)
  static_assert(AttentionScheduler<QBlockScheduler<false>, unified_warpgroup_args_t<Cfg>>, "a scheduler");
  static_assert(AttentionEpilogue<NormalizedStore, Cfg, WT, Arch, unified_warpgroup_args_t<Cfg>>, "an epilogue");

  template <class F>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void for_each_item(F&& f) const {
    AttentionWork w;
    if (QBlockScheduler<false>::get(a, w)) f(w, qblock_tile_range(a, w, Cfg::kBN));
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void producer_start() const {}
  // Q: row r of the tile is (token, q head) of the row map; rows past the q-block are zeros.
  template <class WithQ>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_q(const Item& w, int t, WithQ&& with_q) const {
    using G = WarpgroupRowGather<Cfg::kBM, Cfg::kDqk>;
    const int r = G::own_row(t);
    const RowCoord rc = row_coord(a, w, r < 0 ? 0 : r);
    const uint16_t* src = r >= 0 && rc.valid ? a.q + static_cast<int64_t>(rc.token) * a.q_stride_token +
                                                   static_cast<int64_t>(rc.q_head) * a.q_stride_head
                                             : nullptr;
    with_q([&](char* dst, uint64_t*) { G::copy(dst, t, a.q, src); });
  }
  // Tile n: each row's block-table entry is read once (by the lane that owns the row) for K and V;
  // keys outside the visible range are zeros.
  template <class WithK, class WithV>
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void load_kv(const Item& w, const KvTileRange& range, int32_t n, int t, WithK&& with_k,
                                                  WithV&& with_v) const {
    using G = WarpgroupRowGather<Cfg::kBN, Cfg::kDqk>;
    const auto* k = static_cast<const uint16_t*>(a.kv.k);
    const auto* v = static_cast<const uint16_t*>(a.kv.v);
    const uint16_t *k_src = nullptr, *v_src = nullptr;
    const int r = G::own_row(t);
    const int32_t key = n * Cfg::kBN + r;
    if (r >= 0 && key >= range.key_begin && key < range.key_end) {
      int32_t page, slot;
      a.kv.locate(key, page, slot);
      const int32_t blk = a.kv.physical_block(w.seq, page);
      k_src = k + a.kv.k_offset(blk, slot, w.kvh);
      v_src = v + a.kv.v_offset(blk, slot, w.kvh);
    }
    with_k([&](char* dst, uint64_t*) { G::copy(dst, t, k, k_src); });
    with_v([&](char* dst, uint64_t*) { G::copy(dst, t, v, v_src); });
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void row(const Item& w, int r, RowInfo& ri, typename Cfg::Variant::Row& vr) const {
    const RowCoord rc = row_coord(a, w, r);
    ri = rc.info;
    if (rc.valid) {
      vr = a.variant.row(rc.info);
    } else {  // padding rows are computed but never written: keep their variant reads in bounds
      ri.i = 0;
      ri.pos = w.ctx;
      vr = typename Cfg::Variant::Row{};
    }
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE LogitsTile logits_tile(const Item& w) const {
    const ScoreScale s{.qk = a.scale * (a.k_scale_tensor != nullptr ? *a.k_scale_tensor : a.k_scale_value)};
    return s.logits_tile(w.kv_len, a.causal, a.window_left);
  }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE const typename Cfg::Variant& variant() const { return a.variant; }
  HIPATTN_DEVICE HIPATTN_FORCEINLINE void store(const Item& w, int wm, int lane, const RowSoftmax<WT, Arch>& softmax,
                                                typename WT::OFrag& o) const {
    const float v_scale = a.v_scale_tensor != nullptr ? *a.v_scale_tensor : a.v_scale_value;
    NormalizedStore::template store<Cfg, WT, Arch>(a, w, wm, lane, softmax, o, v_scale);
  }
};

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    unified_warpgroup_kernel(const __grid_constant__ unified_warpgroup_args_t<Cfg> a) {
  if constexpr (DeviceArch::kTarget == Target::sm90) {
    extern __shared__ __align__(1024) char unified_wg_smem[];
    warpgroup_attention<Cfg>(UnifiedWarpgroupFamily<Cfg>{a}, unified_wg_smem);
  }
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE && HIPATTN_BACKEND_CUDA
