// torch.ops.hipattn: hipattn's entry points as PyTorch custom ops with vLLM's / FlashMLA's /
// flash-attention's argument conventions (bindings/torch/README.md lists the schemas).
//
// Each op reads its tensors as views (hipattn_torch/translate.hpp checks them and builds hipattn's
// params; a bad argument throws hipattn::Error naming it), sets the device of its first tensor, takes
// the current stream, and launches through the device half (hipattn_torch/launch.hpp). Every op is
// out-variant (writes into given tensors), reads no device memory on the host, never synchronizes,
// and allocates only from PyTorch's caching allocator (a unified 3D workspace, a merge stack) or uses
// the plan's tensor: a call is safe under CUDA graph capture. hipattn's errors reach Python as
// ValueError (invalid_argument, unsupported, workspace) or RuntimeError (runtime) carrying hipattn's
// message: "hipattn: <code>: <field>: <message>".
#include <ATen/ATen.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "hipattn_torch/launch.hpp"
#include "hipattn_torch/translate.hpp"

namespace {

namespace ht = hipattn::torch_ops;
using OptTensor = std::optional<at::Tensor>;

ht::Elem elem_of(at::ScalarType s) {
  switch (s) {
    case at::ScalarType::Half: return ht::Elem::f16;
    case at::ScalarType::BFloat16: return ht::Elem::bf16;
    case at::ScalarType::Float: return ht::Elem::f32;
    case at::ScalarType::Double: return ht::Elem::f64;
    case at::ScalarType::Float8_e4m3fn: return ht::Elem::fp8_e4m3fn;
    case at::ScalarType::Float8_e4m3fnuz: return ht::Elem::fp8_e4m3fnuz;
    case at::ScalarType::Int: return ht::Elem::i32;
    case at::ScalarType::Long: return ht::Elem::i64;
    case at::ScalarType::Byte: return ht::Elem::u8;
    default: return ht::Elem::other;
  }
}

ht::View view_of(const at::Tensor& t) {
  ht::View v;
  if (!t.defined()) return v;
  v.defined = true;
  v.data = t.data_ptr();
  v.elem = elem_of(t.scalar_type());
  v.ndim = static_cast<int32_t>(t.dim());
  for (int d = 0; d < std::min<int32_t>(v.ndim, ht::kMaxDims); ++d) v.size[d] = t.size(d), v.stride[d] = t.stride(d);
  if (v.ndim > ht::kMaxDims) v.ndim = ht::kMaxDims + 1;  // refused by every rank check
  v.device = t.is_cuda() ? static_cast<int32_t>(t.get_device()) : -1;
  return v;
}
ht::View view_of(const OptTensor& t) { return t.has_value() ? view_of(*t) : ht::View{}; }

// hipattn's error as a Python exception: ValueError for a bad argument, RuntimeError for the runtime.
[[noreturn]] void raise(hipattn::ErrorCode code, const char* what) {
  if (code == hipattn::ErrorCode::runtime) TORCH_CHECK(false, what);
  TORCH_CHECK_VALUE(false, what);  // both throw
}
template <class F>
void translated(F&& f) {
  try {
    f();
  } catch (const hipattn::Error& e) {
    raise(e.code(), e.what());
  }
}
void check(const ht::Status& s) {
  if (!s.ok) raise(s.code, s.message);
}

void* current_stream(const at::Tensor& t) {
  return static_cast<void*>(c10::cuda::getCurrentCUDAStream(t.get_device()).stream());
}

std::vector<int64_t> vec(c10::IntArrayRef a) { return std::vector<int64_t>(a.begin(), a.end()); }

// ---------------------------------------------------------------------------------------------
void unified_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, at::Tensor& out,
                       const at::Tensor& cu_seqlens_q, int64_t max_seqlen_q, const at::Tensor& seqused_k,
                       int64_t max_seqlen_k, double softmax_scale, bool causal, c10::IntArrayRef window_size,
                       const at::Tensor& block_table, double softcap, const OptTensor& q_descale,
                       const OptTensor& k_descale, const OptTensor& v_descale, const OptTensor& alibi_slopes,
                       const OptTensor& output_scale, const OptTensor& qq_bias, const OptTensor& sinks,
                       int64_t kv_quant_mode, const OptTensor& k_scale_cache, const OptTensor& v_scale_cache,
                       const OptTensor& lse, const OptTensor& output_group_scale, int64_t output_group_size,
                       bool output_group_ue8m0) {
  ht::UnifiedArgs a;
  a.q = view_of(q), a.k = view_of(k), a.v = view_of(v), a.out = view_of(out);
  a.cu_seqlens_q = view_of(cu_seqlens_q), a.max_seqlen_q = max_seqlen_q;
  a.seqused_k = view_of(seqused_k), a.max_seqlen_k = max_seqlen_k;
  a.softmax_scale = softmax_scale, a.causal = causal, a.window_size = vec(window_size);
  a.block_table = view_of(block_table), a.softcap = softcap;
  a.q_descale = view_of(q_descale), a.k_descale = view_of(k_descale), a.v_descale = view_of(v_descale);
  a.alibi_slopes = view_of(alibi_slopes), a.output_scale = view_of(output_scale), a.qq_bias = view_of(qq_bias);
  a.sinks = view_of(sinks), a.kv_quant_mode = kv_quant_mode;
  a.k_scale_cache = view_of(k_scale_cache), a.v_scale_cache = view_of(v_scale_cache), a.lse = view_of(lse);
  a.output_group_scale = view_of(output_group_scale), a.output_group_size = output_group_size;
  a.output_group_ue8m0 = output_group_ue8m0;
  hipattn::UnifiedAttentionParams p;
  translated([&] { p = ht::unified_params(a); });

  const c10::cuda::CUDAGuard guard(q.device());
  size_t bytes = 0;
  check(ht::unified_workspace_bytes(p, &bytes));
  at::Tensor ws;  // the 3D path's partials: PyTorch's caching allocator (a graph's private pool under capture)
  if (bytes > 0) ws = at::empty({static_cast<int64_t>(bytes)}, q.options().dtype(at::kByte));
  check(ht::launch_unified(p, bytes > 0 ? ws.data_ptr() : nullptr, bytes, current_stream(q)));
}

// ---------------------------------------------------------------------------------------------
// The plans: a uint8 CUDA tensor of the workspace every call within the traits needs (sized on the
// host from the traits and the device, allocated by the caching allocator). CompositeImplicitAutograd
// (no device kernel, no tensor input): under FakeTensorMode the same code makes a fake tensor of the
// same size.
c10::DeviceIndex plan_device_index(const c10::Device& device) {
  TORCH_CHECK_VALUE(device.is_cuda(), "hipattn: invalid_argument: device: ", device.str(), " is not a CUDA device");
  return device.has_index() ? device.index() : c10::cuda::current_device();
}

at::Tensor paged_decode_plan(int64_t max_num_seqs, int64_t max_q_len, int64_t num_q_heads, int64_t num_kv_heads,
                             int64_t max_head_size, int64_t max_seqlen_k, c10::Device device) {
  hipattn::PagedDecodeTraits t;
  translated([&] { t = ht::paged_decode_traits(max_num_seqs, max_q_len, num_q_heads, num_kv_heads, max_head_size, max_seqlen_k); });
  const c10::DeviceIndex index = plan_device_index(device);
  const c10::cuda::CUDAGuard guard(index);
  size_t bytes = 0;
  check(ht::paged_decode_workspace_bytes(t, &bytes));
  return at::empty({static_cast<int64_t>(bytes)},
                   at::TensorOptions().dtype(at::kByte).device(c10::Device(c10::DeviceType::CUDA, index)));
}

at::Tensor mla_decode_plan(int64_t max_batch, int64_t max_q_len, int64_t num_heads, int64_t max_seqlen_k, c10::Device device) {
  hipattn::MlaDecodeTraits t;
  translated([&] { t = ht::mla_decode_traits(max_batch, max_q_len, num_heads, max_seqlen_k); });
  const c10::DeviceIndex index = plan_device_index(device);
  const c10::cuda::CUDAGuard guard(index);
  size_t bytes = 0;
  check(ht::mla_decode_workspace_bytes(t, &bytes));
  return at::empty({static_cast<int64_t>(bytes)},
                   at::TensorOptions().dtype(at::kByte).device(c10::Device(c10::DeviceType::CUDA, index)));
}

// ---------------------------------------------------------------------------------------------
void paged_decode(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache, at::Tensor& out,
                  const at::Tensor& block_table, const at::Tensor& seq_lens, int64_t max_seqlen_k, double softmax_scale,
                  at::Tensor& workspace, int64_t q_len, c10::IntArrayRef window_size, double softcap,
                  const OptTensor& alibi_slopes, const OptTensor& sinks, const OptTensor& k_scale, const OptTensor& v_scale,
                  double k_scale_value, double v_scale_value, const OptTensor& k_scale_cache,
                  const OptTensor& v_scale_cache, const OptTensor& q_scale, const OptTensor& output_scale,
                  const OptTensor& lse) {
  ht::PagedDecodeArgs a;
  a.q = view_of(q), a.k_cache = view_of(k_cache), a.v_cache = view_of(v_cache), a.out = view_of(out);
  a.block_table = view_of(block_table), a.seq_lens = view_of(seq_lens), a.max_seqlen_k = max_seqlen_k;
  a.softmax_scale = softmax_scale, a.workspace = view_of(workspace), a.q_len = q_len;
  a.window_size = vec(window_size), a.softcap = softcap;
  a.alibi_slopes = view_of(alibi_slopes), a.sinks = view_of(sinks);
  a.k_scale = view_of(k_scale), a.v_scale = view_of(v_scale), a.k_scale_value = k_scale_value, a.v_scale_value = v_scale_value;
  a.k_scale_cache = view_of(k_scale_cache), a.v_scale_cache = view_of(v_scale_cache);
  a.q_scale = view_of(q_scale), a.output_scale = view_of(output_scale), a.lse = view_of(lse);
  ht::PagedDecodeCall call;
  translated([&] { call = ht::paged_decode_call(a); });
  const c10::cuda::CUDAGuard guard(q.device());
  check(ht::launch_paged_decode(call.params, call.workspace.data, call.workspace.bytes, current_stream(q)));
}

// ---------------------------------------------------------------------------------------------
void mla_decode(const at::Tensor& q, const at::Tensor& kv_cache, const at::Tensor& block_table,
                const at::Tensor& cache_seqlens, int64_t head_dim_v, at::Tensor& tile_scheduler_metadata,
                double softmax_scale, bool causal, at::Tensor& out, const OptTensor& softmax_lse, int64_t max_seqlen_k,
                const OptTensor& q_rope, const OptTensor& kv_scale, double kv_scale_value, const OptTensor& q_scale,
                const OptTensor& output_scale) {
  ht::MlaDecodeArgs a;
  a.q = view_of(q), a.kv_cache = view_of(kv_cache), a.block_table = view_of(block_table);
  a.cache_seqlens = view_of(cache_seqlens), a.head_dim_v = head_dim_v;
  a.tile_scheduler_metadata = view_of(tile_scheduler_metadata), a.softmax_scale = softmax_scale, a.causal = causal;
  a.out = view_of(out), a.softmax_lse = view_of(softmax_lse), a.max_seqlen_k = max_seqlen_k;
  a.q_rope = view_of(q_rope), a.kv_scale = view_of(kv_scale), a.kv_scale_value = kv_scale_value;
  a.q_scale = view_of(q_scale), a.output_scale = view_of(output_scale);
  ht::MlaDecodeCall call;
  translated([&] { call = ht::mla_decode_call(a); });
  const c10::cuda::CUDAGuard guard(q.device());
  check(ht::launch_mla_decode(call.params, call.workspace.data, call.workspace.bytes, current_stream(q)));
}

// ---------------------------------------------------------------------------------------------
void merge_attn_states(at::Tensor& output, const OptTensor& output_lse, const at::Tensor& prefix_output,
                       const at::Tensor& prefix_lse, const at::Tensor& suffix_output, const at::Tensor& suffix_lse) {
  ht::MergeArgs a;
  a.output = view_of(output), a.output_lse = view_of(output_lse);
  a.prefix_output = view_of(prefix_output), a.prefix_lse = view_of(prefix_lse);
  a.suffix_output = view_of(suffix_output), a.suffix_lse = view_of(suffix_lse);
  ht::MergeCall m;
  translated([&] { m = ht::merge_call(a); });
  const c10::cuda::CUDAGuard guard(output.device());
  // Partials that one rank stride cannot address in place are stacked (stream-ordered copies into
  // caching-allocator memory, kept alive until the launch is enqueued).
  at::Tensor stacked_out, stacked_lse;
  if (m.stack_out) {
    stacked_out = at::empty({2, prefix_output.size(0), prefix_output.size(1), prefix_output.size(2)}, prefix_output.options());
    stacked_out.select(0, 0).copy_(prefix_output);
    stacked_out.select(0, 1).copy_(suffix_output);
    ht::set_stacked_out(m.params, stacked_out.data_ptr());
  }
  if (m.stack_lse) {
    stacked_lse = at::empty({2, prefix_lse.size(0), prefix_lse.size(1)}, prefix_lse.options());
    stacked_lse.select(0, 0).copy_(m.suffix_first ? suffix_lse : prefix_lse);
    stacked_lse.select(0, 1).copy_(m.suffix_first ? prefix_lse : suffix_lse);
    ht::set_stacked_lse(m.params, static_cast<const float*>(stacked_lse.data_ptr()));
  }
  translated([&] { hipattn::throw_if_error(hipattn::validate(m.params)); });
  check(ht::launch_merge(m.params, current_stream(output)));
}

// ---------------------------------------------------------------------------------------------
void dense_prefill(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, at::Tensor& out,
                   const at::Tensor& cu_seqlens_q, const at::Tensor& cu_seqlens_k, int64_t max_seqlen_q,
                   int64_t max_seqlen_k, double softmax_scale, bool causal, c10::IntArrayRef window_size, double softcap,
                   const OptTensor& alibi_slopes, const OptTensor& softmax_lse) {
  ht::DensePrefillArgs a;
  a.q = view_of(q), a.k = view_of(k), a.v = view_of(v), a.out = view_of(out);
  a.cu_seqlens_q = view_of(cu_seqlens_q), a.cu_seqlens_k = view_of(cu_seqlens_k);
  a.max_seqlen_q = max_seqlen_q, a.max_seqlen_k = max_seqlen_k, a.softmax_scale = softmax_scale, a.causal = causal;
  a.window_size = vec(window_size), a.softcap = softcap, a.alibi_slopes = view_of(alibi_slopes);
  a.softmax_lse = view_of(softmax_lse);
  hipattn::DensePrefillParams p;
  translated([&] { p = ht::dense_prefill_params(a); });
  const c10::cuda::CUDAGuard guard(q.device());
  check(ht::launch_dense_prefill(p, current_stream(q)));
}

}  // namespace

// The schemas (bindings/torch/README.md). Mutated tensors carry (x!) so that functionalization and
// torch.compile see the writes; the fakes are registered from Python (hipattn_torch/__init__.py).
TORCH_LIBRARY(hipattn, m) {
  m.def(
      "unified_attention(Tensor q, Tensor k, Tensor v, Tensor(a!) out, Tensor cu_seqlens_q, int max_seqlen_q, "
      "Tensor seqused_k, int max_seqlen_k, float softmax_scale, bool causal, int[2] window_size, Tensor block_table, "
      "float softcap, Tensor? q_descale, Tensor? k_descale, Tensor? v_descale, Tensor? alibi_slopes=None, "
      "Tensor? output_scale=None, Tensor? qq_bias=None, Tensor? sinks=None, int kv_quant_mode=0, "
      "Tensor? k_scale_cache=None, Tensor? v_scale_cache=None, Tensor(b!)? lse=None, "
      "Tensor(c!)? output_group_scale=None, int output_group_size=0, bool output_group_ue8m0=False) -> ()");
  m.def(
      "paged_decode_plan(int max_num_seqs, int max_q_len, int num_q_heads, int num_kv_heads, int max_head_size, "
      "int max_seqlen_k, Device device) -> Tensor",
      &paged_decode_plan);
  m.def(
      "paged_decode(Tensor q, Tensor k_cache, Tensor v_cache, Tensor(a!) out, Tensor block_table, Tensor seq_lens, "
      "int max_seqlen_k, float softmax_scale, Tensor(c!) workspace, int q_len, int[2] window_size, float softcap=0.0, "
      "Tensor? alibi_slopes=None, Tensor? sinks=None, Tensor? k_scale=None, Tensor? v_scale=None, "
      "float k_scale_value=1.0, float v_scale_value=1.0, Tensor? k_scale_cache=None, Tensor? v_scale_cache=None, "
      "Tensor? q_scale=None, Tensor? output_scale=None, Tensor(b!)? lse=None) -> ()");
  m.def(
      "mla_decode_plan(int max_batch, int max_q_len, int num_heads, int max_seqlen_k, Device device) -> Tensor",
      &mla_decode_plan);
  m.def(
      "mla_decode(Tensor q, Tensor kv_cache, Tensor block_table, Tensor cache_seqlens, int head_dim_v, "
      "Tensor(c!) tile_scheduler_metadata, float softmax_scale, bool causal, Tensor(a!) out, "
      "Tensor(b!)? softmax_lse=None, int max_seqlen_k=-1, Tensor? q_rope=None, Tensor? kv_scale=None, "
      "float kv_scale_value=1.0, Tensor? q_scale=None, Tensor? output_scale=None) -> ()");
  m.def(
      "merge_attn_states(Tensor(a!) output, Tensor(b!)? output_lse, Tensor prefix_output, Tensor prefix_lse, "
      "Tensor suffix_output, Tensor suffix_lse) -> ()");
  m.def(
      "dense_prefill(Tensor q, Tensor k, Tensor v, Tensor(a!) out, Tensor cu_seqlens_q, Tensor cu_seqlens_k, "
      "int max_seqlen_q, int max_seqlen_k, float softmax_scale, bool causal, int[2] window_size, float softcap=0.0, "
      "Tensor? alibi_slopes=None, Tensor(b!)? softmax_lse=None) -> ()");
}

// CUDA: also the key of ROCm builds of PyTorch.
TORCH_LIBRARY_IMPL(hipattn, CUDA, m) {
  m.impl("unified_attention", &unified_attention);
  m.impl("paged_decode", &paged_decode);
  m.impl("mla_decode", &mla_decode);
  m.impl("merge_attn_states", &merge_attn_states);
  m.impl("dense_prefill", &dense_prefill);
}
