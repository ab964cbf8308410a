// hipattn/dispatch/unified_launch.hpp: what a unified-attention launch is made of, for every backend
// (host-only builds included): the compiled instance the dispatcher picks for a problem, the kernel
// arguments of the 2D / 3D kernel and of the split-KV reduce, and the launch geometry (grids, block
// sizes, dynamic LDS). dispatch/unified_attention.hpp launches exactly what these functions build;
// the emulator tests (tests/emu) build the same arguments on the host and run the AMD code objects.
//
//   UnifiedPlan plan = plan_unified_attention(p, opt, dev);
//   visit_unified_config<Target::gfx942>(p, plan, [&]<class Cfg>() {
//     auto args  = make_unified_kernel_args<Cfg>(p, plan, workspace);
//     auto geo   = make_unified_launch_geometry<Cfg>(p, plan);       // grid, threads, LDS, reduce
//     auto rargs = make_split_kv_reduce_args(p, plan, workspace, Cfg::kD);  // when geo.split
//   });
//
// Pointers are stored as given: the params' pointers (and `workspace`) are device addresses of the
// backend that runs the kernels; nothing here dereferences them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hipattn/dispatch/registry.hpp"
#include "hipattn/dispatch/skeleton_args.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/dispatch/workspace.hpp"
#include "hipattn/problem/instances.hpp"
#include "hipattn/problem/unified_params.hpp"
#include "hipattn/kernels/cdna/pingpong_config.hpp"
#include "hipattn/kernels/unified/config.hpp"
#include "hipattn/platform/error.hpp"

namespace hipattn {

// ---- the compiled instance of a problem ----------------------------------------------------------

// The AttentionConfig the dispatcher instantiates for (q type, kv kind, head size, tile kind, variant)
// on target kT: the tile of the target's table (dispatch/tiles), 64-bit offsets, any
// page size.
// kCopy: the KV loader policy (the target's default; gfx950's 16-bit instances also exist with the
// register-staged loader, for caches beyond the LDS-DMA loader's range: unified_kv_copy).
// KvLayout: the cache layout policy (RowKvLayout; paged decode's RocmKvLayout with the register-staged
// loader, whose stages the tile caps at two: unified_tile_for_copy).
template <bool kBf16, KvKind kKv, int kD, UnifiedTileKind kKind, class Variant, Target kT,
          CopyModel kCopy = unified_default_copy(kKind, kD, kT, kKv), class KvLayout = RowKvLayout>
struct UnifiedInstance {
  static constexpr UnifiedTile tile = unified_tile_for_copy(unified_tile(kKind, kD, kT, kKv != KvKind::same16), kCopy);
  static constexpr KvLayoutKind kLayout = std::is_same_v<KvLayout, RocmKvLayout> ? KvLayoutKind::rocm : KvLayoutKind::row;
  using Config = AttentionConfig<with_layout(with_copy(attention_shape(kBf16, kKv, kD, kD, tile.shape(), kT), kCopy), kLayout),
                                 Variant>;
};
template <bool kBf16, KvKind kKv, int kD, UnifiedTileKind kKind, class Variant, Target kT,
          CopyModel kCopy = unified_default_copy(kKind, kD, kT, kKv), class KvLayout = RowKvLayout>
using unified_instance_config_t = typename UnifiedInstance<kBf16, kKv, kD, kKind, Variant, kT, kCopy, KvLayout>::Config;

// gfx950's ping-pong instance of (dtype, head size, variant) (PlanPipeline::pingpong): PingPongConfig
// (kernels/cdna/pingpong_config.hpp) over the AttentionConfig of gfx950_pingpong_tile, 16-bit cache,
// LDS-DMA loads, 64-bit offsets, any page size. Built for the head sizes and variants the planner
// sends there (unified_pingpong_head: d = 128 and 256, the plain variant or a caller's, which the
// planner sees through the params' standard fields), 2D kernel only.
template <bool kBf16, int kD, class Variant>
struct UnifiedPingPongInstance {
  static constexpr UnifiedTile tile = gfx950_pingpong_tile(kD);
  using Config = PingPongConfig<AttentionConfig<
      with_copy(attention_shape(kBf16, KvKind::same16, kD, kD, tile.shape(), Target::gfx950), CopyModel::lds_dma), Variant>>;
};
template <bool kBf16, int kD, class Variant>
using unified_pingpong_config_t = typename UnifiedPingPongInstance<kBf16, kD, Variant>::Config;
template <Target kT, KvKind kKv, int kD, class Variant>
constexpr bool unified_pingpong_built() {
  return kT == Target::gfx950 && kKv == KvKind::same16 && unified_pingpong_head(kD, std::is_same_v<Variant, FullVariant>);
}

// The standard variant type of a variant kind (plain, full, softcap).
template <VariantKind kV>
using standard_variant_t =
    std::conditional_t<kV == VariantKind::full, FullVariant,
                       std::conditional_t<kV == VariantKind::softcap, StandardVariant<true, false, false>, PlainVariant>>;

// Within one instance and tile kind: the config of the KV loader policy `kv_copy` (the default, or the
// register-staged fallback of an LDS-DMA instance).
template <Target kT, bool kBf16, KvKind kKv, int kD, UnifiedTileKind kKind, class Variant, class F>
void visit_unified_copy(CopyModel kv_copy, F&& f) {
  constexpr CopyModel kDefault = unified_default_copy(kKind, kD, kT, kKv);
  if constexpr (kDefault == CopyModel::lds_dma) {
    if (kv_copy == CopyModel::register_staged) {
      f.template operator()<unified_instance_config_t<kBf16, kKv, kD, kKind, Variant, kT, CopyModel::register_staged>>();
      return;
    }
  }
  f.template operator()<unified_instance_config_t<kBf16, kKv, kD, kKind, Variant, kT>>();
}

// Within one instance: calls f.template operator()<Cfg>() with the config of a tile kind and KV loader
// policy (the plan's).
template <Target kT, bool kBf16, KvKind kKv, int kD, class Variant, class F>
void visit_unified_tile(UnifiedTileKind kind, CopyModel kv_copy, F&& f) {
  if (kind == UnifiedTileKind::decode)
    visit_unified_copy<kT, kBf16, kKv, kD, UnifiedTileKind::decode, Variant>(kv_copy, f);
  else
    visit_unified_copy<kT, kBf16, kKv, kD, UnifiedTileKind::prefill, Variant>(kv_copy, f);
}
// ... or the ping-pong instance (PlanPipeline::pingpong).
template <Target kT, bool kBf16, KvKind kKv, int kD, class Variant, class F>
void visit_unified_tile(const UnifiedPlan& plan, F&& f) {
  if (plan.pipeline == PlanPipeline::pingpong) {
    if constexpr (unified_pingpong_built<kT, kKv, kD, Variant>()) {
      f.template operator()<unified_pingpong_config_t<kBf16, kD, Variant>>();
      return;
    } else {
      throw Error(ErrorCode::unsupported, "options.pipeline",
                  std::string("pingpong: not built for ") + std::string(target_name(kT)) + ", head size " + std::to_string(kD) +
                      (kKv == KvKind::same16 ? "" : ", an fp8 cache") +
                      (std::is_same_v<Variant, FullVariant> ? ", the full variant" : ""));
    }
  }
  visit_unified_tile<kT, kBf16, kKv, kD, Variant>(plan.tile_kind, plan.kv_copy, f);
}

// Calls f.template operator()<Cfg>() with the AttentionConfig the dispatcher launches for (p, plan) on
// target kT with the problem's standard variant (every instance of the table is a candidate).
// Throws Error(unsupported) for a problem outside the table.
template <Target kT, class F>
void visit_unified_config(const UnifiedAttentionParams& p, const UnifiedPlan& plan, F&& f) {
  const InstanceKey key = unified_instance_key(p, kT);
  bool found = false;
  for_each_instance<Family::unified, kAllInstances>(TargetList<kT>{}, [&]<InstanceKey kK>() {
    if (found || !(kK == key)) return;
    found = true;
    visit_unified_tile<kT, kK.bf16, kK.kv, kK.head_size, standard_variant_t<kK.variant>>(plan, f);
  });
  if (!found) throw instance_missing(key, instance_keys<Family::unified, kAllInstances>(TargetList<kT>{}));
}

// ---- kernel arguments -----------------------------------------------------------------------------

// The buffers of a planned 3D launch (UnifiedGrid::split_planned) in `workspace`
// (unified_planned_workspace's layout).
inline SlotBuffers unified_planned_buffers(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* workspace) {
  return slot_buffers(unified_planned_workspace(p, plan.capacity), workspace);
}

// The device planner's arguments for a planned 3D launch over `workspace`: decode items (one query a
// sequence) of the instance's key tiles (tile_keys = Cfg::kBN).
inline DecodePlanArgs make_unified_plan_args(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* workspace,
                                             int tile_keys) {
  const SlotBuffers b = unified_planned_buffers(p, plan, workspace);
  DecodePlanArgs a;
  a.seq_lens_k = p.seq_lens_k;
  a.num_items = p.num_seqs;
  a.shape = DecodeItemShape{1, tile_keys, p.causal, p.window_left};
  a.capacity = plan.capacity;
  a.fixed_tiles = 0;
  a.wave_slots = plan.wave_slots;
  a.tasks = b.tasks;
  a.item_task0 = b.item_task0;
  a.status = b.status;
  return a;
}

// The split-KV workspace of a 3D launch: partial outputs [num_segments, num_tokens, num_q_heads, D]
// (fp32), then the partial LSEs [num_segments, num_tokens, num_q_heads] (fp32, log2 units).
struct SplitKvWorkspace {
  float* o = nullptr;
  float* lse = nullptr;
};
inline SplitKvWorkspace split_kv_workspace(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* workspace,
                                           int head_dim) {
  SplitKvWorkspace w;
  w.o = static_cast<float*>(workspace);
  const size_t o_elems = static_cast<size_t>(plan.num_segments) * static_cast<size_t>(p.num_tokens) *
                         static_cast<size_t>(p.num_q_heads) * static_cast<size_t>(head_dim);
  w.lse = w.o + o_elems;
  return w;
}

// The arguments of the 2D kernel (plan.split() false) or of the 3D split-KV kernel (plan.split() true;
// `workspace` then holds plan.workspace_bytes). head_dim is the instance's kD (== p.head_size).
// `variant` travels in the arguments as given (unified_variant_from_params for the standard ones).
template <class KvParams, class Variant>
UnifiedKernelArgs<KvParams, Variant> make_unified_kernel_args(const UnifiedAttentionParams& p, const UnifiedPlan& plan,
                                                              void* workspace, int head_dim, const Variant& variant) {
  UnifiedKernelArgs<KvParams, Variant> a;
  fill_attention_kernel_args(a, p, plan.rows_per_token, plan.block_q, plan.head_chunks, variant);
  a.cu_seqlens_q = p.cu_seqlens_q;
  a.num_tokens = p.num_tokens;
  a.decode_grid = plan.decode_grid;
  if (plan.grid == UnifiedGrid::split_planned) {
    const SlotBuffers b = unified_planned_buffers(p, plan, workspace);
    a.tasks = b.tasks;
    a.ws_o = b.o;
    a.ws_lse = b.lse;
  } else if (plan.split()) {
    const SplitKvWorkspace w = split_kv_workspace(p, plan, workspace, head_dim);
    a.num_segments = plan.num_segments;
    a.ws_o = w.o;
    a.ws_lse = w.lse;
  }
  return a;
}

// The data of a variant from the problem: a variant that says how it is built from a problem
// (`Variant::from_params`, as the standard ones do) is built so; any other is default-constructed
// (pass it explicitly instead).
template <class Variant>
Variant unified_variant_from_params(const UnifiedAttentionParams& p) {
  if constexpr (requires { Variant::from_params(p); }) return Variant::from_params(p);
  else return Variant{};
}

template <class Cfg>
unified_args_t<Cfg> make_unified_kernel_args(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* workspace,
                                             const typename Cfg::Variant& variant) {
  return make_unified_kernel_args<typename Cfg::Loader::Params>(p, plan, workspace, Cfg::kD, variant);
}
template <class Cfg>
unified_args_t<Cfg> make_unified_kernel_args(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* workspace) {
  return make_unified_kernel_args<Cfg>(p, plan, workspace, unified_variant_from_params<typename Cfg::Variant>(p));
}

// The arguments of the split-KV reduce that follows a 3D launch over the same `workspace`.
inline SplitKvReduceArgs make_split_kv_reduce_args(const UnifiedAttentionParams& p, const UnifiedPlan& plan,
                                                   void* workspace, int head_dim) {
  const SplitKvWorkspace w = split_kv_workspace(p, plan, workspace, head_dim);
  SplitKvReduceArgs r;
  r.ws_o = w.o;
  r.ws_lse = w.lse;
  r.num_segments = plan.num_segments;
  if (plan.grid == UnifiedGrid::split_planned) {
    const SlotBuffers b = unified_planned_buffers(p, plan, workspace);
    r.ws_o = b.o;
    r.ws_lse = b.lse;
    r.tasks = b.tasks;
    r.item_task0 = b.item_task0;
    r.cu_seqlens_q = p.cu_seqlens_q;
    r.num_seqs = p.num_seqs;
  }
  r.num_tokens = p.num_tokens;
  r.num_q_heads = p.num_q_heads;
  fill_merge_outputs(r, p);
  return r;
}

// ---- launch geometry ------------------------------------------------------------------------------

struct UnifiedLaunchGeometry {
  bool empty = false;        // no tokens or no sequences: nothing is launched
  bool split = false;        // 3D split-KV kernel, then the reduce
  LaunchDim grid;            // (q-blocks, kv heads x head chunks, segments or 1)
  uint32_t threads = 0;      // block size of the 2D / 3D kernel (Cfg::kThreads)
  uint32_t dynamic_lds = 0;  // dynamic LDS / shared memory bytes of the 2D / 3D kernel (Cfg::kSmemBytes)
  // split only: the reduce (split_kv_reduce_kernel<kBf16, kD, reduce_threads>), no dynamic LDS
  LaunchDim reduce_grid;
  uint32_t reduce_threads = 0;
  int32_t reduce_items_per_block = 0;
};

// The geometry of a launch of an instance with `threads` threads and `dynamic_lds` bytes of LDS.
inline UnifiedLaunchGeometry make_unified_launch_geometry(const UnifiedAttentionParams& p, const UnifiedPlan& plan,
                                                          int threads, int dynamic_lds, int head_dim) {
  UnifiedLaunchGeometry g;
  g.empty = p.num_tokens == 0 || p.num_seqs == 0;
  g.split = plan.split();
  g.grid.x = static_cast<uint32_t>(plan.grid == UnifiedGrid::split_planned ? plan.capacity : plan.grid_x);
  g.grid.y = static_cast<uint32_t>(p.num_kv_heads * plan.head_chunks);
  g.grid.z = static_cast<uint32_t>(plan.grid == UnifiedGrid::split_uniform ? plan.num_segments : 1);
  g.threads = static_cast<uint32_t>(threads);
  g.dynamic_lds = static_cast<uint32_t>(dynamic_lds);
  if (plan.split()) {
    g.reduce_threads = static_cast<uint32_t>(split_kv_reduce_threads(head_dim));
    g.reduce_items_per_block = split_kv_reduce_items_per_block(head_dim);
    const int64_t items = static_cast<int64_t>(p.num_tokens) * p.num_q_heads;
    g.reduce_grid.x = static_cast<uint32_t>((items + g.reduce_items_per_block - 1) / g.reduce_items_per_block);
  }
  return g;
}

template <class Cfg>
UnifiedLaunchGeometry make_unified_launch_geometry(const UnifiedAttentionParams& p, const UnifiedPlan& plan) {
  return make_unified_launch_geometry(p, plan, Cfg::kThreads, Cfg::kSmemBytes, Cfg::kD);
}

}  // namespace hipattn
