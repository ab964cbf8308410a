// hipattn/dispatch/paged_decode_launch.hpp: what a paged-decode launch is made of, for every backend
// (host-only builds included): the arguments and geometry of the device planner, the kernel and the
// reduce for a plan (dispatch/paged_decode_plan.hpp), and the configuration a plan runs (its
// instances are unified attention's: dispatch/unified_launch.hpp). dispatch/paged_decode.hpp launches
// exactly these; the emulated AMD tests build the same on the host.
#pragma once
#include <cstddef>
#include <cstdint>

#include "hipattn/dispatch/paged_decode_plan.hpp"
#include "hipattn/dispatch/registry.hpp"
#include "hipattn/dispatch/skeleton_args.hpp"
#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/dispatch/workspace.hpp"
#include "hipattn/kernels/paged_decode/config.hpp"

namespace hipattn {

// ---- arguments and geometry ----

using PagedDecodeBuffers = SlotBuffers;
inline SlotBuffers paged_decode_buffers(const PagedDecodeParams& p, const PagedDecodePlan& plan, void* workspace) {
  return slot_buffers(paged_decode_workspace(p, plan.capacity), workspace);
}

// The device planner's arguments (plan.split == SlotSplit::planned): the decode items of this call's lengths in tiles of
// the instance's keys (tile_keys = Cfg::kBN).
inline DecodePlanArgs make_paged_decode_plan_args(const PagedDecodeParams& p, const PagedDecodePlan& plan,
                                                  void* workspace, int tile_keys) {
  const PagedDecodeBuffers b = paged_decode_buffers(p, plan, workspace);
  DecodePlanArgs a;
  a.seq_lens_k = p.seq_lens_k;
  a.num_items = p.num_seqs;
  a.shape = DecodeItemShape{p.q_len, tile_keys, true, p.window_left};
  a.capacity = plan.capacity;
  a.fixed_tiles = plan.fixed_tiles;
  a.wave_slots = plan.wave_slots;
  a.tasks = b.tasks;
  a.item_task0 = b.item_task0;
  a.status = b.status;
  return a;
}

// The kernel's arguments.
template <class Cfg>
paged_decode_args_t<Cfg> make_paged_decode_kernel_args(const PagedDecodeParams& p, const PagedDecodePlan& plan,
                                                       void* workspace, const typename Cfg::Variant& variant) {
  paged_decode_args_t<Cfg> a;
  fill_attention_kernel_args(a, to_unified_params(p, nullptr), plan.rows_per_token, plan.block_q, plan.head_chunks,
                             variant);
  if (p.kv_scale_mode == KvScaleMode::per_tensor) {
    a.k_scale_value = p.k_scale_value_or_one();
    a.v_scale_value = p.v_scale_value_or_one();
  }
  if (p.kv_layout == KvCacheLayout::rocm) {  // validated < 2^31
    a.kv.k_stride_chunk = static_cast<int32_t>(p.k_stride_chunk);
    a.kv.v_stride_dim = static_cast<int32_t>(p.v_stride_dim);
  }
  a.q_len = p.q_len;
  a.q_blocks = plan.q_blocks;
  a.grid_y_div = FastDivmod(static_cast<uint32_t>(plan.grid_y));
  a.num_segments = plan.segments;
  if (plan.split != SlotSplit::one_partition) {
    const PagedDecodeBuffers b = paged_decode_buffers(p, plan, workspace);
    if (plan.split == SlotSplit::planned) a.tasks = b.tasks;
    a.ws_o = b.o;
    a.ws_lse = b.lse;
  }
  return a;
}
template <class Cfg>
paged_decode_args_t<Cfg> make_paged_decode_kernel_args(const PagedDecodeParams& p, const PagedDecodePlan& plan,
                                                       void* workspace) {
  return make_paged_decode_kernel_args<Cfg>(p, plan, workspace,
                                            unified_variant_from_params<typename Cfg::Variant>(to_unified_params(p, nullptr)));
}

inline PagedDecodeReduceArgs make_paged_decode_reduce_args(const PagedDecodeParams& p, const PagedDecodePlan& plan,
                                                           void* workspace) {
  const PagedDecodeBuffers b = paged_decode_buffers(p, plan, workspace);
  PagedDecodeReduceArgs r;
  r.ws_o = b.o;
  r.ws_lse = b.lse;
  if (plan.split == SlotSplit::planned) {
    r.tasks = b.tasks;
    r.item_task0 = b.item_task0;
  }
  r.num_segments = plan.segments;
  r.num_seqs = p.num_seqs;
  r.q_len = p.q_len;
  r.num_q_heads = p.num_q_heads;
  fill_merge_outputs(r, p);
  return r;
}

struct PagedDecodeGeometry {
  bool empty = false;
  LaunchDim grid;  // (capacity * grid_y): slot-major
  uint32_t threads = 0, dynamic_lds = 0;
  bool reduce = false;    // planned: the reduce follows
  LaunchDim reduce_grid;
  uint32_t reduce_threads = 0;
};
inline PagedDecodeGeometry make_paged_decode_geometry(const PagedDecodeParams& p, const PagedDecodePlan& plan,
                                                      int threads, int dynamic_lds, int head_dim) {
  PagedDecodeGeometry g;
  g.empty = p.num_seqs == 0;
  g.grid.x = static_cast<uint32_t>(int64_t(plan.capacity) * plan.grid_y);
  g.threads = static_cast<uint32_t>(threads);
  g.dynamic_lds = static_cast<uint32_t>(dynamic_lds);
  g.reduce = plan.split != SlotSplit::one_partition;
  if (g.reduce) {
    g.reduce_threads = static_cast<uint32_t>(split_kv_reduce_threads(head_dim));
    const int64_t items = static_cast<int64_t>(p.num_seqs) * p.q_len * p.num_q_heads;
    const int64_t per = split_kv_reduce_items_per_block(head_dim);
    g.reduce_grid.x = static_cast<uint32_t>((items + per - 1) / per);
  }
  return g;
}
template <class Cfg>
PagedDecodeGeometry make_paged_decode_geometry(const PagedDecodeParams& p, const PagedDecodePlan& plan) {
  return make_paged_decode_geometry(p, plan, Cfg::kThreads, Cfg::kSmemBytes, Cfg::kD);
}

// A plan whose tile kind is verify on a (target, head size) without a verify tile (paged_decode_tile_kind
// never plans one there).
inline Error no_verify_tile(Target t, int head_size) {
  return Error(ErrorCode::unsupported, "tile_kind",
               std::string("verify: no verify tile for ") + std::string(target_name(t)) + ", head size " + std::to_string(head_size));
}

// The configuration of the plan's tile kind: the verify tile where the target's table has one for the
// head size, else unified's decode and prefill tiles (visit_unified_tile).
template <Target kT, bool kBf16, KvKind kKv, int kD, class Variant, class F>
void visit_paged_decode_kind(const PagedDecodePlan& plan, F&& f) {
  if (plan.tile_kind == UnifiedTileKind::verify) {
    if constexpr (verify_tile_served(kT, kD)) {
      visit_unified_copy<kT, kBf16, kKv, kD, UnifiedTileKind::verify, Variant>(plan.kv_copy, f);
      return;
    } else {
      throw no_verify_tile(kT, kD);
    }
  }
  visit_unified_tile<kT, kBf16, kKv, kD, Variant>(plan.tile_kind, plan.kv_copy, f);
}

// The configuration of a storage kind's instance (visit_paged_decode_tile below).
template <Target kT, bool kBf16, KvKind kKv, int kD, class Variant, class F>
void visit_paged_decode_storage_tile(const PagedDecodePlan& plan, F&& f) {
  if (plan.kv_layout == KvCacheLayout::rocm) {
    auto rocm = [&]<UnifiedTileKind kKind>() {
      f.template operator()<unified_instance_config_t<kBf16, kKv, kD, kKind, Variant, kT, CopyModel::register_staged, RocmKvLayout>>();
    };
    if (plan.tile_kind == UnifiedTileKind::decode) {
      rocm.template operator()<UnifiedTileKind::decode>();
    } else if (plan.tile_kind == UnifiedTileKind::prefill) {
      rocm.template operator()<UnifiedTileKind::prefill>();
    } else {
      if constexpr (verify_tile_served(kT, kD)) rocm.template operator()<UnifiedTileKind::verify>();
      else throw no_verify_tile(kT, kD);
    }
    return;
  }
  if constexpr (kT == Target::sm90 && kKv != KvKind::same16) {
    if (plan.fast_page > 0 && plan.tile_kind == UnifiedTileKind::decode) {  // paged_decode_fast_page
      using B = unified_instance_config_t<kBf16, kKv, kD, UnifiedTileKind::decode, Variant, kT>;
      auto fast = [&]<int kPage>() {
        f.template operator()<AttentionConfig<with_page(B::kShape, false, kPage), Variant>>();
      };
      switch (plan.fast_page) {
        case 16: fast.template operator()<16>(); return;
        case 32: fast.template operator()<32>(); return;
        case 64: fast.template operator()<64>(); return;
        case 128: fast.template operator()<128>(); return;
        default: break;
      }
    }
  }
  visit_paged_decode_kind<kT, kBf16, kKv, kD, Variant>(plan, f);
}

// Within one instance: calls f.template operator()<Cfg>() with the configuration of the plan's tile
// kind, loader policy and cache layout (the rocm layout: the register-staged RocmKvLayout configs;
// the fast page sizes of sm_90 fp8 decode tiles, which the fp8 matrix path does not compile).
template <Target kT, bool kBf16, KvKind kKv, int kD, class Variant, class F>
void visit_paged_decode_tile(const PagedDecodePlan& plan, F&& f) {
  if constexpr (kv_fp8_matmul(kKv)) {
    if (plan.kv_layout == KvCacheLayout::rocm)
      throw Error(ErrorCode::unsupported, "kv_layout", "rocm with the fp8 matrix path (paged_decode_instance_key keeps the rocm layout off it)");
    visit_paged_decode_kind<kT, kBf16, kKv, kD, Variant>(plan, f);
  } else {
    visit_paged_decode_storage_tile<kT, kBf16, kKv, kD, Variant>(plan, f);
  }
}

// Calls f.template operator()<Cfg>() with the configuration the dispatcher launches for (p, plan) on
// target kT with the problem's standard variant. Throws Error(unsupported) outside the table.
template <Target kT, class F>
void visit_paged_decode_config(const PagedDecodeParams& p, const PagedDecodePlan& plan, F&& f) {
  const InstanceKey key = paged_decode_instance_key(p, kT);
  bool found = false;
  for_each_instance<Family::paged_decode, kAllInstances>(TargetList<kT>{}, [&]<InstanceKey kK>() {
    if (found || !(kK == key)) return;
    found = true;
    visit_paged_decode_tile<kT, kK.bf16, kK.kv, kK.head_size, standard_variant_t<kK.variant>>(plan, f);
  });
  if (!found) throw instance_missing(key, instance_keys<Family::paged_decode, kAllInstances>(TargetList<kT>{}));
}

}  // namespace hipattn
