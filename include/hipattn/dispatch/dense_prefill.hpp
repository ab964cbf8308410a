// hipattn/dispatch/dense_prefill.hpp: the host entry point of dense prefill (the fourth family).
//
//   hipattn::dense_prefill(params, stream);     // DensePrefillParams (problem/dense_prefill_params.hpp)
//
// A call validates the params (throws hipattn::Error naming the field), picks the instance from
// (dtype, head_size_qk, head_size_v, softcap) and the device's target, and launches one persistent
// kernel on `stream` (one workgroup per SM walking the (q-block, head) items heaviest first). It needs
// no workspace, never allocates and never synchronizes: the grid depends on host values only
// (num_tokens_q, num_seqs, max_seqlen_q, heads), so a captured graph replays with other cu_seqlens
// within the same bounds. The tensor maps of the bulk copies are encoded on the host at each call
// (kernel parameters, captured by value).
//
// Targets: sm_90 runs the warp-specialised kernel (kernels/dense_prefill: one producer warp issuing
// bulk tensor copies into a ring, two consumer warpgroups with wgmma, ALGORITHM.md section 10). The
// CDNA targets (gfx942, gfx950) run the attention skeleton (kernels/common) with the dense scheduler
// over DenseKvLayout (batched: q / out / lse any batch strides, K / V batch strides whole multiples of
// their token strides, dense_kv_pitch):
//   gfx950 at d = 256, and d = 128 without softcap, K and V within 4 GiB of their bases: the eight-wave
//     ping-pong schedule (kernels/common/pingpong_mainloop.hpp, LDS-DMA loads; DensePingPongConfig);
//   otherwise (gfx942; d = 64; d = 128 with softcap; (192, 128); larger tensors): the register-staged
//     loader on the target's unified prefill tile ((192, 128): V rows of 128 columns).
#pragma once
#include <algorithm>
#include <climits>
#include <string>

#include "hipattn/dispatch/output_args.hpp"
#include "hipattn/dispatch/registry.hpp"
#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/kernels/dense_prefill/kernels.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/runtime.hpp"
#include "hipattn/platform/target.hpp"
#include "hipattn/problem/dense_prefill_rules.hpp"

namespace hipattn {
namespace detail {

// ---- the skeleton path (CDNA targets) ----

// What every dense prefill kernel reads besides its operand views, from the problem.
inline DensePrefillCommon make_dense_prefill_common(const DensePrefillParams& p, int32_t block_q) {
  DensePrefillCommon c;
  c.cu_seqlens_q = p.cu_seqlens_q;
  c.cu_seqlens_k = p.cu_seqlens_k;
  c.num_seqs = p.num_seqs;
  c.max_seqlen_q = p.max_seqlen_q;
  c.max_seqlen_k = p.max_seqlen_k;
  c.block_q = block_q;
  c.blocks_per_seq = (p.max_seqlen_q + block_q - 1) / block_q;
  // By band: blocks_per_seq x num_seqs slots. Packed, the global numbering (sequence s's q-blocks
  // from cu_seqlens_q[s] / block_q + s, paged/varlen.hpp) has num_tokens_q / block_q + num_seqs; bands
  // are kept while they give at most twice as many slots (empty ones cost the workgroups a skip).
  const int64_t band_slots = int64_t(c.blocks_per_seq) * p.num_seqs;
  const int64_t global_slots = p.num_tokens_q > 0 ? int64_t(p.num_tokens_q / block_q) + p.num_seqs : 0;
  c.by_band = !p.packed() || band_slots <= 2 * global_slots;
  c.q_blocks = p.num_tokens_q == 0 ? 0 : static_cast<int32_t>(c.by_band ? band_slots : global_slots);
  c.group = p.num_kv_heads > 0 ? p.num_q_heads / p.num_kv_heads : 1;
  c.num_q_heads = p.num_q_heads;
  c.scale = p.scale;
  c.causal = p.causal;
  c.window_left = p.window_left;
  c.out = static_cast<uint16_t*>(p.out);
  c.o_stride_token = p.o_stride_token;
  c.o_stride_head = p.o_stride_head;
  c.o_stride_batch = p.o_stride_batch;
  c.lse = p.lse;
  c.lse_stride_head = p.lse_stride_head;
  return c;
}

// The instance of a CDNA target: its unified prefill tile of d_qk (dispatch/unified_plan.hpp) over
// DenseKvLayout; (d_qk, d_v) = (192, 128): that tile with 128-column V rows and O.
template <Target kT, bool kBf16, int kDqk, int kDv, class Variant>
struct DenseSkeletonInstance {
  static constexpr UnifiedTile t = unified_tile_for_copy(unified_tile(UnifiedTileKind::prefill, kDqk, kT, false), CopyModel::register_staged);
  using type = AttentionConfig<dense_skeleton_shape(kT, kBf16, kDqk, kDv, t.shape()), Variant>;
};
template <Target kT, bool kBf16, int kD, class Variant>
using dense_skeleton_config_t = typename DenseSkeletonInstance<kT, bool(kBf16), kD, kD, Variant>::type;
template <Target kT, bool kBf16, class Variant>
using dense_skeleton_narrow_v_config_t = typename DenseSkeletonInstance<kT, kBf16, 192, 128, Variant>::type;

// Whether the ping-pong schedule serves (head size, softcap) on `target`: gfx950 (its 160 KiB of LDS and
// 16-byte LDS DMA) at d = 256, and at d = 128 without softcap. Elsewhere the AMD model puts the
// skeleton's tile ahead (bench/NOTES.md "AMD: the ping-pong schedule", bf16: d 64 0.45 against 0.36 with
// 64-key ping-pong tiles; d 128 softcap 0.35 against 0.32; gfx942's 64 KiB hold no ping-pong tile).
inline constexpr bool dense_pingpong_instance(Target target, int d_qk, int d_v, bool softcap) {
  return target == Target::gfx950 && d_qk == d_v && (d_qk == 256 || (d_qk == 128 && !softcap));
}
// ... and `p` on `target`, with K and V within the LDS DMA's buffer range of their bases
// (kernels/common/paged_kv_loader.hpp kLdsDmaWindow); otherwise the skeleton's tile.
inline bool dense_pingpong(const DensePrefillParams& p, Target target) {
  using namespace dense_prefill_rules;
  if (!dense_pingpong_instance(target, p.head_size_qk, p.head_size_v, p.softcap > 0.f)) return false;
  const int64_t b = dtype_size(p.dtype);
  return validation::extent_bytes(k_dims(p), b) <= kLdsDmaWindow && validation::extent_bytes(v_dims(p), b) <= kLdsDmaWindow;
}

// The instance a CDNA target launches for (dtype, head sizes, softcap) and the schedule (pingpong:
// dense_pingpong's answer): f.template operator()<Cfg>().
template <Target kT, bool kBf16, int kDqk, int kDv, bool kSoftcap, class F>
void visit_dense_cdna_config(bool pingpong, F&& f) {
  using Variant = StandardVariant<kSoftcap, false, false>;
  if constexpr (dense_pingpong_instance(kT, kDqk, kDv, kSoftcap)) {
    if (pingpong) return f.template operator()<DensePingPongConfig<kT, kBf16, kDqk, Variant>>();
  }
  f.template operator()<typename DenseSkeletonInstance<kT, kBf16, kDqk, kDv, Variant>::type>();
}
// ... for run-time (dtype, head size, softcap): the emulated tests visit the same choice.
template <Target kT, class F>
void visit_dense_cdna_instance(bool bf16, int d_qk, bool softcap, bool pingpong, F&& f) {
  const auto go = [&]<bool kBf16, bool kSoftcap>() {
    if (d_qk == 64) visit_dense_cdna_config<kT, kBf16, 64, 64, kSoftcap>(pingpong, f);
    else if (d_qk == 128) visit_dense_cdna_config<kT, kBf16, 128, 128, kSoftcap>(pingpong, f);
    else if (d_qk == 256) visit_dense_cdna_config<kT, kBf16, 256, 256, kSoftcap>(pingpong, f);
    else visit_dense_cdna_config<kT, kBf16, 192, 128, kSoftcap>(pingpong, f);  // validated
  };
  if (bf16 && softcap) go.template operator()<true, true>();
  else if (bf16) go.template operator()<true, false>();
  else if (softcap) go.template operator()<false, true>();
  else go.template operator()<false, false>();
}

}  // namespace detail

// The instance a call needs on `target` (a row of problem/instance_table.hpp).
inline InstanceKey dense_prefill_instance_key(const DensePrefillParams& p, Target target) {
  InstanceKey k;
  k.family = Family::dense_prefill;
  k.target = target;
  k.bf16 = p.dtype == DType::bf16;
  k.kv = KvKind::same16;
  k.head_size = p.head_size_qk;
  k.head_size_v = p.head_size_v;
  k.variant = p.softcap > 0.f ? VariantKind::softcap : VariantKind::plain;
  return k;
}

namespace detail {

// Batched K and V on the skeleton (DenseKvLayout): key j of sequence s is row s x pitch + j of the
// token strides, so each batch stride must be a whole multiple of its token stride (the rows of a
// [seqs, len, heads, d] or [seqs, heads, len, d] tensor, padded or not), the same multiple for K and
// V, with every row index within 32 bits. One sequence, or no key at all: the pitch is never used (0).
inline int32_t dense_kv_pitch(const DensePrefillParams& p) {
  if (p.packed() || p.num_seqs <= 1 || p.num_tokens_k == 0) return 0;
  const auto pitch = [&](const char* field, int64_t batch, int64_t token) {
    if (token <= 0 || batch % token != 0)
      throw Error(ErrorCode::unsupported, field,
                  std::string(field) + " = " + std::to_string(batch) + ": the CDNA dense prefill kernel finds batched keys and values " +
                      "as rows of their token stride (" + std::to_string(token) + "); the batch stride must be a whole multiple of it");
    return batch / token;
  };
  const int64_t k = pitch("k_stride_batch", p.k_stride_batch, p.k_stride_token);
  const int64_t v = pitch("v_stride_batch", p.v_stride_batch, p.v_stride_token);
  if (k != v)
    throw Error(ErrorCode::unsupported, "v_stride_batch",
                "v_stride_batch = " + std::to_string(p.v_stride_batch) + " is " + std::to_string(v) +
                    " value rows, k_stride_batch " + std::to_string(k) + " key rows: the CDNA dense prefill kernel needs the same " +
                    "number of rows between sequences in K and V");
  if (int64_t(p.num_seqs - 1) * k + p.max_seqlen_k > INT32_MAX)
    throw Error(ErrorCode::unsupported, "k_stride_batch",
                "k_stride_batch = " + std::to_string(p.k_stride_batch) + " puts the last sequence's keys past row 2^31 - 1 of the " +
                    "token stride (num_seqs = " + std::to_string(p.num_seqs) + ", " + std::to_string(k) + " rows a sequence)");
  return static_cast<int32_t>(k);
}

// The skeleton kernel's arguments for `p` (host-visible, like everything above the device section:
// the emulated AMD tests build them in a host-only build).
template <class Cfg>
dense_args_t<Cfg> make_dense_skeleton_args(const DensePrefillParams& p) {
  dense_args_t<Cfg> a{};
  a.q = static_cast<const uint16_t*>(p.q);
  a.q_stride_token = static_cast<int32_t>(p.q_stride_token);
  a.q_stride_head = static_cast<int32_t>(p.q_stride_head);
  // No key anywhere (k and v may then be null): no tile is computed, but the register-staged loader's
  // prologue reads one chunk at the cache base without using it (branch-free loads); give it q's.
  a.kv.k = p.num_tokens_k > 0 ? p.k : p.q;
  a.kv.v = p.num_tokens_k > 0 ? p.v : p.q;
  a.kv.k_stride_block = static_cast<int32_t>(p.k_stride_token);  // a block is a token's row
  a.kv.k_stride_head = static_cast<int32_t>(p.k_stride_head);
  a.kv.v_stride_block = static_cast<int32_t>(p.v_stride_token);
  a.kv.v_stride_head = static_cast<int32_t>(p.v_stride_head);
  a.kv.block_table = p.cu_seqlens_k;  // DenseKvLayout: block = cu_seqlens_k[seq] + key (packed)
  a.kv.block_table_stride = p.packed() ? 0 : dense_kv_pitch(p);  // batched: seq x pitch + key
  a.q_stride_batch = p.packed() ? 0 : p.q_stride_batch;  // q / out / lse: dense_sequence_args
  a.kv.page_size = 1;
  a.kv.page_div = FastDivmod(1u);
  a.num_seqs = p.num_seqs;
  a.num_q_heads = p.num_q_heads;
  a.group = p.num_q_heads / p.num_kv_heads;
  a.rows_per_token = 1;  // one q head a workgroup
  a.block_q = Cfg::kBM;
  a.head_chunks = a.group;
  a.rows_div = FastDivmod(1u);
  a.scale = p.scale;
  a.causal = p.causal;
  a.window_left = p.window_left;
  a.variant.args.softcap = p.softcap;
  a.out = make_output_args(p.out, p.o_stride_token, p.o_stride_head, p.dtype, OutputFormat{}, p.head_size_v);
  a.lse = p.lse;
  a.lse_stride_head = static_cast<int32_t>(p.lse_stride_head);
  a.dense = make_dense_prefill_common(p, Cfg::kBM);
  return a;
}

}  // namespace detail
}  // namespace hipattn

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

namespace detail {

#if defined(HIPATTN_BACKEND_CUDA)
// The tensor map of one of q / k / v: packed [tokens, heads, d] as {d, heads, tokens}; batched
// [seqs, len, heads, d] as {d, heads, len, seqs}. Box {64 elements (128 bytes), 1, rows[, 1]} with the
// 128-byte swizzle: each box is one column block of a KMajorTile (arch/sm90/tma.hpp).
inline CUtensorMap dense_tensor_map(const DensePrefillParams& p, const void* base, int32_t d, int32_t heads,
                                    int64_t stride_head, int64_t stride_token, int64_t stride_batch, bool q_side,
                                    uint32_t rows) {
  const uint64_t eb = 2;
  const sm90::TmaElem elem = p.dtype == DType::bf16 ? sm90::TmaElem::bf16 : sm90::TmaElem::f16;
  // A dimension of extent 1 may carry any stride; give it one the driver accepts.
  const auto stride_or = [](int64_t s, uint64_t fallback) { return s > 0 ? uint64_t(s) * 2 : fallback; };
  const uint64_t sh = stride_or(stride_head, uint64_t(d) * eb);
  const uint64_t st = stride_or(stride_token, sh * uint64_t(heads));
  if (p.packed()) {
    const uint64_t tokens = uint64_t(q_side ? p.num_tokens_q : p.num_tokens_k);
    return sm90::make_tensor_map_3d(base, elem, {uint64_t(d), uint64_t(heads), tokens > 0 ? tokens : 1}, {sh, st},
                                    {64u, 1u, rows}, sm90::SmemSwizzle::b128);
  }
  const uint64_t len = uint64_t(q_side ? p.max_seqlen_q : p.max_seqlen_k);
  const uint64_t sb = stride_or(stride_batch, st * (len > 0 ? len : 1));
  return sm90::make_tensor_map_4d(base, elem, {uint64_t(d), uint64_t(heads), len > 0 ? len : 1, uint64_t(p.num_seqs)},
                                  {sh, st, sb}, {64u, 1u, rows, 1u}, sm90::SmemSwizzle::b128);
}

template <class Cfg>
void launch_dense_prefill_sm90(const DensePrefillParams& p, rt::stream_t stream) {
  DensePrefillSm90Args a{};
  a.q_map = dense_tensor_map(p, p.q, p.head_size_qk, p.num_q_heads, p.q_stride_head, p.q_stride_token,
                             p.q_stride_batch, true, Cfg::kBM);
  if (p.num_tokens_k > 0) {
    a.k_map = dense_tensor_map(p, p.k, p.head_size_qk, p.num_kv_heads, p.k_stride_head, p.k_stride_token,
                               p.k_stride_batch, false, Cfg::kBN);
    a.v_map = dense_tensor_map(p, p.v, p.head_size_v, p.num_kv_heads, p.v_stride_head, p.v_stride_token,
                               p.v_stride_batch, false, Cfg::kBN);
  } else {  // no key anywhere (k and v may be null): no block loads a tile; any valid map fills the slots
    a.k_map = a.v_map = dense_tensor_map(p, p.q, p.head_size_qk, p.num_q_heads, p.q_stride_head, p.q_stride_token,
                                         p.q_stride_batch, true, Cfg::kBN);
  }
  a.common = make_dense_prefill_common(p, Cfg::kBM);
  a.logit.softcap = p.softcap;
  if (a.common.q_blocks == 0) return;
  rt::ensure_max_dynamic_shared(dense_prefill_sm90_kernel<Cfg>, Cfg::kSmemBytes,
                                [] { return std::string("dense_prefill_sm90_kernel<") + Cfg::name() + ">"; });
  // Persistent: one workgroup per SM (at most one item each when there are fewer items).
  const int64_t items = int64_t(a.common.q_blocks) * p.num_q_heads;
  if (items > INT32_MAX)
    throw Error(ErrorCode::unsupported, "num_tokens_q",
                "num_tokens_q = " + std::to_string(p.num_tokens_q) + " x num_q_heads = " + std::to_string(p.num_q_heads) +
                    " gives " + std::to_string(items) + " work items of " + std::to_string(Cfg::kBM) +
                    " rows; one call takes at most 2^31 - 1: split the batch");
  const int sms = rt::cached_device_properties().multiprocessor_count;
  const int64_t grid = std::min<int64_t>(items, sms > 0 ? sms : 1);
  dense_prefill_sm90_kernel<Cfg><<<dim3(uint32_t(grid), 1, 1), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a);
  HIPATTN_CHECK_LAUNCH();
}

#endif  // HIPATTN_BACKEND_CUDA

template <class Cfg>
void launch_dense_prefill_skeleton(const DensePrefillParams& p, rt::stream_t stream) {
  const dense_args_t<Cfg> a = make_dense_skeleton_args<Cfg>(p);
  if (a.dense.q_blocks == 0) return;
  if (a.dense.q_blocks > 65535)
    throw Error(ErrorCode::unsupported, "num_tokens_q",
                "num_tokens_q = " + std::to_string(p.num_tokens_q) + " gives " + std::to_string(a.dense.q_blocks) +
                    " q-block slots of " + std::to_string(Cfg::kBM) + " rows; one call takes at most 65535: split the batch");
  rt::ensure_max_dynamic_shared(dense_prefill_kernel<Cfg>, Cfg::kSmemBytes,
                                [] { return unified_instance_name<Cfg>("dense_prefill_kernel"); });
  dense_prefill_kernel<Cfg><<<dim3(uint32_t(p.num_q_heads), uint32_t(a.dense.q_blocks), 1), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a);
  HIPATTN_CHECK_LAUNCH();
}

// A row of the table behind a fixed signature (the unit of the registries and instance libraries):
// sm_90's warp-specialised kernel, or the CDNA skeleton / ping-pong instance of the row.
using DensePrefillLaunchFn = void (*)(const DensePrefillParams&, rt::stream_t);
template <InstanceKey kK>
void launch_dense_prefill_standard(const DensePrefillParams& p, rt::stream_t stream) {
  static_assert(kK.family == Family::dense_prefill && kK.kv == KvKind::same16, "a dense prefill row");
  constexpr bool kSoftcap = kK.variant == VariantKind::softcap;
  if constexpr (kK.target == Target::sm90) {
#if defined(HIPATTN_BACKEND_CUDA)
    launch_dense_prefill_sm90<DensePrefillSm90Config<kK.bf16, kK.head_size, kK.head_size_v, kSoftcap>>(p, stream);
#endif
  } else {
    visit_dense_cdna_config<kK.target, kK.bf16, kK.head_size, kK.head_size_v, kSoftcap>(
        dense_pingpong(p, kK.target), [&]<class Cfg>() { launch_dense_prefill_skeleton<Cfg>(p, stream); });
  }
}
struct DensePrefillLaunchers {
  static constexpr Family kFamily = Family::dense_prefill;
  static constexpr bool kCustom = false;
  using LaunchFn = DensePrefillLaunchFn;
  template <InstanceKey kK>
  static constexpr LaunchFn get() { return &launch_dense_prefill_standard<kK>; }
};

}  // namespace detail

// Run dense prefill on `stream` (see the top of the file). kFilter: the instances this translation
// unit compiles (every dense prefill row of the table by default).
template <InstanceFilter kFilter = kAllInstances>
void dense_prefill(const DensePrefillParams& p, rt::stream_t stream) {
  throw_if_error(validate(p));
  if (p.num_seqs == 0 || p.num_tokens_q == 0) return;
  const InstanceKey key = dense_prefill_instance_key(p, checked_device().target);
  find_instance(header_registry<detail::DensePrefillLaunchers, kFilter>(), key)(p, stream);
}

}  // namespace hipattn
#endif  // HIPATTN_HAS_DEVICE
