// hipattn/dispatch/unified_attention.hpp: the host entry point of unified paged/varlen attention.
//
//   size_t bytes = hipattn::unified_attention_workspace_size(params);   // 0 unless 3D is chosen
//   hipattn::unified_attention(params, workspace, bytes, stream);
//
// Validates the problem (throws hipattn::Error naming the field), plans (dispatch/unified_plan.hpp),
// maps the runtime traits (q dtype, kv dtype, head size, tile kind, path) to one compiled instance and
// launches it. Nothing is allocated; the workspace is the caller's.
#pragma once
#include <mutex>

#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/dispatch/validate.hpp"
#include "hipattn/kernels/split_kv_3d.hpp"
#include "hipattn/kernels/unified_2d.hpp"
#include "hipattn/platform/runtime.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

inline PlanDevice plan_device(const rt::DeviceProperties& props) {
  return PlanDevice{props.target, props.multiprocessor_count, props.wave_size};
}

// Workspace bytes unified_attention needs for `p` on the current device (0 for the 2D path).
inline size_t unified_attention_workspace_size(const UnifiedAttentionParams& p, const UnifiedOptions& opt = {}) {
  throw_if_error(validate(p));
  return plan_unified_attention(p, opt, plan_device(rt::cached_device_properties())).workspace_bytes;
}

namespace detail {

#if defined(HIPATTN_BACKEND_CUDA)
inline constexpr int kBackendWave = 32;
#else
inline constexpr int kBackendWave = 64;
#endif

template <class Cfg>
void launch_unified_instance(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* workspace,
                             rt::stream_t stream) {
  using Offset = typename Cfg::Offset;
  UnifiedKernelArgs<Offset, Cfg::kPageSize> a;
  a.q = static_cast<const uint16_t*>(p.q);
  a.q_stride_token = static_cast<int32_t>(p.q_stride_token);
  a.q_stride_head = static_cast<int32_t>(p.q_stride_head);
  a.kv.k = p.k_cache;
  a.kv.v = p.v_cache;
  a.kv.k_stride_block = static_cast<int32_t>(p.k_stride_block);
  a.kv.k_stride_slot = static_cast<int32_t>(p.k_stride_slot);
  a.kv.k_stride_head = static_cast<int32_t>(p.k_stride_head);
  a.kv.v_stride_block = static_cast<int32_t>(p.v_stride_block);
  a.kv.v_stride_slot = static_cast<int32_t>(p.v_stride_slot);
  a.kv.v_stride_head = static_cast<int32_t>(p.v_stride_head);
  a.kv.block_table = p.block_table;
  a.kv.block_table_stride = static_cast<int32_t>(p.block_table_stride);
  a.kv.page_size = p.block_size;
  a.kv.page_div = FastDivmod(static_cast<uint32_t>(p.block_size));
  a.per_token_head_scale = p.kv_scale_mode == KvScaleMode::per_token_head;
  if (a.per_token_head_scale) {
    a.kv.k_scale = p.k_scale;
    a.kv.v_scale = p.v_scale;
    a.kv.s_stride_block = static_cast<int32_t>(p.scale_stride_block);
    a.kv.s_stride_slot = static_cast<int32_t>(p.scale_stride_slot);
    a.kv.s_stride_head = static_cast<int32_t>(p.scale_stride_head);
  }
  a.cu_seqlens_q = p.cu_seqlens_q;
  a.seq_lens_k = p.seq_lens_k;
  a.num_seqs = p.num_seqs;
  a.num_tokens = p.num_tokens;
  a.num_q_heads = p.num_q_heads;
  a.group = p.num_q_heads / p.num_kv_heads;
  a.rows_per_token = plan.rows_per_token;
  a.block_q = plan.block_q;
  a.head_chunks = plan.head_chunks;
  a.rows_div = FastDivmod(static_cast<uint32_t>(plan.rows_per_token));
  a.decode_grid = plan.decode_grid;
  a.scale = p.scale;
  if (p.kv_scale_mode == KvScaleMode::per_tensor) {
    a.k_scale_tensor = p.k_scale;
    a.v_scale_tensor = p.v_scale;
  }
  a.causal = p.causal;
  a.window_left = p.window_left;
  a.logit.softcap = p.softcap;
  a.logit.alibi_slopes = p.alibi_slopes;
  a.logit.qq_bias = p.qq_bias;
  a.logit.qq_bias_stride = static_cast<int32_t>(p.qq_bias_stride);
  a.sinks = p.sinks;
  a.out = static_cast<uint16_t*>(p.out);
  a.o_stride_token = static_cast<int32_t>(p.o_stride_token);
  a.o_stride_head = static_cast<int32_t>(p.o_stride_head);
  a.lse = p.lse;
  a.lse_stride_head = static_cast<int32_t>(p.lse_stride_head);
  if (p.num_tokens == 0 || p.num_seqs == 0) return;
  const dim3 grid(static_cast<unsigned>(plan.grid_x), static_cast<unsigned>(p.num_kv_heads * plan.head_chunks),
                  static_cast<unsigned>(plan.split ? plan.num_segments : 1));
  if (plan.split) {
    a.num_segments = plan.num_segments;
    a.ws_o = static_cast<float*>(workspace);
    const size_t o_elems = static_cast<size_t>(plan.num_segments) * p.num_tokens * p.num_q_heads * Cfg::kD;
    a.ws_lse = a.ws_o + o_elems;
    static std::once_flag once;
    std::call_once(once, [] { HIPATTN_CHECK(rt::set_max_dynamic_shared(split_kv_3d_kernel<Cfg>, Cfg::kSmemBytes)); });
    split_kv_3d_kernel<Cfg><<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a);
    HIPATTN_CHECK_LAUNCH();
    SplitKvReduceArgs r;
    r.ws_o = a.ws_o;
    r.ws_lse = a.ws_lse;
    r.num_segments = plan.num_segments;
    r.num_tokens = p.num_tokens;
    r.num_q_heads = p.num_q_heads;
    r.sinks = p.sinks;
    r.out = a.out;
    r.o_stride_token = static_cast<int32_t>(p.o_stride_token);
    r.o_stride_head = static_cast<int32_t>(p.o_stride_head);
    r.lse = p.lse;
    r.lse_stride_head = static_cast<int32_t>(p.lse_stride_head);
    constexpr int kRThreads = 128, kItemsPerBlock = kRThreads / (Cfg::kD / 4);
    const int64_t items = static_cast<int64_t>(p.num_tokens) * p.num_q_heads;
    split_kv_reduce_kernel<Cfg::kBf16, Cfg::kD, kRThreads>
        <<<static_cast<unsigned>((items + kItemsPerBlock - 1) / kItemsPerBlock), kRThreads, 0, stream>>>(r);
    HIPATTN_CHECK_LAUNCH();
  } else {
    static std::once_flag once;
    std::call_once(once, [] { HIPATTN_CHECK(rt::set_max_dynamic_shared(unified_2d_kernel<Cfg>, Cfg::kSmemBytes)); });
    unified_2d_kernel<Cfg><<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a);
    HIPATTN_CHECK_LAUNCH();
  }
}

// Compile-time tile of a (kind, head size, wave size): the same table the planner reads.
template <UnifiedTileKind kKind, int kD, int kWave>
struct TileOf {
  static constexpr UnifiedTile t = unified_tile(kKind, kD, kWave);
};

template <bool kBf16, KvKind kKv, int kD, UnifiedTileKind kKind, class Variant, int kWave>
void launch_unified_tile(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* ws, rt::stream_t s) {
  constexpr UnifiedTile t = TileOf<kKind, kD, kWave>::t;
  using Cfg = UnifiedConfig<kBf16, kKv, kD, t.warps_m, t.warps_n, t.mt, t.kn, t.stages, Variant, int64_t, 0, kWave>;
  launch_unified_instance<Cfg>(p, plan, ws, s);
}

template <bool kBf16, KvKind kKv, int kD, class Variant, int kWave>
void launch_unified_kind(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* ws, rt::stream_t s) {
  if (plan.tile_kind == UnifiedTileKind::decode)
    launch_unified_tile<kBf16, kKv, kD, UnifiedTileKind::decode, Variant, kWave>(p, plan, ws, s);
  else
    launch_unified_tile<kBf16, kKv, kD, UnifiedTileKind::prefill, Variant, kWave>(p, plan, ws, s);
}

template <bool kBf16, KvKind kKv, class Variant, int kWave>
void launch_unified_head(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* ws, rt::stream_t s) {
  switch (p.head_size) {
    case 64: return launch_unified_kind<kBf16, kKv, 64, Variant, kWave>(p, plan, ws, s);
    case 128: return launch_unified_kind<kBf16, kKv, 128, Variant, kWave>(p, plan, ws, s);
    case 256: return launch_unified_kind<kBf16, kKv, 256, Variant, kWave>(p, plan, ws, s);
    default:
      throw Error(ErrorCode::unsupported, "head_size",
                  std::to_string(p.head_size) + " has no unified-attention instance (64, 128, 256)");
  }
}

template <bool kBf16, class Variant, int kWave>
void launch_unified_kv(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* ws, rt::stream_t s) {
  switch (p.kv_dtype) {
    case DType::fp8_e4m3fn: return launch_unified_head<kBf16, KvKind::e4m3fn, Variant, kWave>(p, plan, ws, s);
    case DType::fp8_e4m3fnuz: return launch_unified_head<kBf16, KvKind::e4m3fnuz, Variant, kWave>(p, plan, ws, s);
    default: return launch_unified_head<kBf16, KvKind::same16, Variant, kWave>(p, plan, ws, s);
  }
}

template <int kWave>
void launch_unified_variant(const UnifiedAttentionParams& p, const UnifiedPlan& plan, void* ws, rt::stream_t s) {
  const bool full = p.softcap > 0.f || p.alibi_slopes != nullptr || p.qq_bias != nullptr;
  const bool bf16 = p.q_dtype == DType::bf16;
  if (full) {
    if (bf16) launch_unified_kv<true, FullVariant, kWave>(p, plan, ws, s);
    else launch_unified_kv<false, FullVariant, kWave>(p, plan, ws, s);
  } else {
    if (bf16) launch_unified_kv<true, PlainVariant, kWave>(p, plan, ws, s);
    else launch_unified_kv<false, PlainVariant, kWave>(p, plan, ws, s);
  }
}

}  // namespace detail

// The instance groups the dispatcher can reach: (bf16?, kv kind, variant). Each group holds the head
// sizes x tile kinds x {2D, 3D} kernels. A build that defines HIPATTN_UNIFIED_EXTERN_INSTANCES gets
// extern declarations here and compiles the groups in separate translation units with
// HIPATTN_UNIFIED_INSTANTIATE(group...) (see tests/instances/), so they build in parallel.
#define HIPATTN_UNIFIED_INSTANCE_GROUPS(X)                                                                     \
  X(false, same16, PlainVariant) X(false, e4m3fn, PlainVariant) X(false, e4m3fnuz, PlainVariant)             \
  X(true, same16, PlainVariant) X(true, e4m3fn, PlainVariant) X(true, e4m3fnuz, PlainVariant)                \
  X(false, same16, FullVariant) X(false, e4m3fn, FullVariant) X(false, e4m3fnuz, FullVariant)                \
  X(true, same16, FullVariant) X(true, e4m3fn, FullVariant) X(true, e4m3fnuz, FullVariant)

#define HIPATTN_UNIFIED_INSTANTIATE(BF16, KV, VARIANT)                                                         \
  template void ::hipattn::detail::launch_unified_head<BF16, ::hipattn::KvKind::KV, ::hipattn::VARIANT,        \
                                                       ::hipattn::detail::kBackendWave>(                       \
      const ::hipattn::UnifiedAttentionParams&, const ::hipattn::UnifiedPlan&, void*, ::hipattn::rt::stream_t);

#if defined(HIPATTN_UNIFIED_EXTERN_INSTANCES)
#define HIPATTN_UNIFIED_EXTERN_(BF16, KV, VARIANT) extern HIPATTN_UNIFIED_INSTANTIATE(BF16, KV, VARIANT)
HIPATTN_UNIFIED_INSTANCE_GROUPS(HIPATTN_UNIFIED_EXTERN_)
#undef HIPATTN_UNIFIED_EXTERN_
#endif

// Run unified attention. `workspace` must hold unified_attention_workspace_size(p, opt) bytes
// (16-byte aligned); it may be null when that size is 0.
inline void unified_attention(const UnifiedAttentionParams& p, void* workspace, size_t workspace_bytes,
                              rt::stream_t stream, const UnifiedOptions& opt = {}) {
  throw_if_error(validate(p));
  const rt::DeviceProperties& props = rt::cached_device_properties();
  const UnifiedPlan plan = plan_unified_attention(p, opt, plan_device(props));
  if (plan.workspace_bytes > 0) {
    if (workspace == nullptr || workspace_bytes < plan.workspace_bytes)
      throw Error(ErrorCode::workspace, "workspace",
                  std::to_string(workspace_bytes) + " bytes given, " + std::to_string(plan.workspace_bytes) + " needed");
    if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
      throw Error(ErrorCode::workspace, "workspace", "not 16-byte aligned");
  }
  constexpr int kWave = detail::kBackendWave;
  if (props.wave_size != kWave)
    throw Error(ErrorCode::unsupported, "device", "wave size " + std::to_string(props.wave_size) + " of " +
                                                      props.arch_name + " does not match this build");
  detail::launch_unified_variant<kWave>(p, plan, workspace, stream);
}

}  // namespace hipattn
#endif
