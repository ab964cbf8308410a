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
//     ping-pong schedule (kernels/cdna/pingpong_mainloop.hpp, LDS-DMA loads; DensePingPongConfig);
//   otherwise (gfx942; d = 64; d = 128 with softcap; (192, 128); larger tensors): the register-staged
//     loader on the target's unified prefill tile ((192, 128): V rows of 128 columns).
#pragma once
#include <algorithm>
#include <climits>
#include <string>

#include "hipattn/dispatch/dense_prefill_launch.hpp"
#include "hipattn/dispatch/dense_prefill_plan.hpp"
#include "hipattn/dispatch/device.hpp"
#include "hipattn/dispatch/registry.hpp"
#include "hipattn/dispatch/skeleton_args.hpp"
#include "hipattn/kernels/dense_prefill/kernels.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/platform/runtime.hpp"

#if defined(HIPATTN_HAS_DEVICE)
namespace hipattn {

namespace detail {

#if defined(HIPATTN_BACKEND_CUDA)
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
                                [] { return config_name<Cfg>("dense_prefill_kernel"); });
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
