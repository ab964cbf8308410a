// hipattn_torch/translate.hpp: the torch-free half of the PyTorch ops (bindings/torch): engine-style
// arguments (vLLM's unified_attention, FlashMLA's flash_mla_with_kvcache, vLLM's merge_attn_states,
// flash_attn_varlen_func) described as plain tensor views, checked, and mapped onto hipattn's params.
//
// A View is what the op layer (src/ops.cpp) reads from an at::Tensor: data pointer, element type,
// sizes and strides (elements), CUDA device index. Every function here checks what a tensor must be
// (defined, on the call's CUDA device, its dimensions, its element type, a contiguous last dimension)
// and throws hipattn::Error naming the argument and the bad value, exactly as hipattn's own validation
// does for its params; strides are passed through wherever hipattn's params take strides (nothing is
// made contiguous here). The params are then validated by hipattn (validate(p), host values only), so
// a bad problem fails before any launch. No device memory is read: a call stays graph-safe.
//
// Compiled by the host compiler without PyTorch: tests/test_translate.cpp pins it in CI.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hipattn/numeric/dtype.hpp"
#include "hipattn/platform/error.hpp"
#include "hipattn/problem/dense_prefill_params.hpp"
#include "hipattn/problem/dense_prefill_rules.hpp"
#include "hipattn/problem/merge_params.hpp"
#include "hipattn/problem/merge_rules.hpp"
#include "hipattn/problem/mla_decode_params.hpp"
#include "hipattn/problem/mla_decode_rules.hpp"
#include "hipattn/problem/paged_decode_params.hpp"
#include "hipattn/problem/paged_decode_rules.hpp"
#include "hipattn/problem/unified_params.hpp"
#include "hipattn/problem/unified_rules.hpp"

namespace hipattn::torch_ops {

// Element types the ops meet (torch's names in elem_name).
enum class Elem : uint8_t { f16, bf16, f32, f64, fp8_e4m3fn, fp8_e4m3fnuz, i32, i64, u8, other };

inline const char* elem_name(Elem e) {
  switch (e) {
    case Elem::f16: return "float16";
    case Elem::bf16: return "bfloat16";
    case Elem::f32: return "float32";
    case Elem::f64: return "float64";
    case Elem::fp8_e4m3fn: return "float8_e4m3fn";
    case Elem::fp8_e4m3fnuz: return "float8_e4m3fnuz";
    case Elem::i32: return "int32";
    case Elem::i64: return "int64";
    case Elem::u8: return "uint8";
    case Elem::other: return "another dtype";
  }
  return "?";
}

// hipattn's DType of an element type, when it has one.
inline std::optional<DType> dtype_of(Elem e) {
  switch (e) {
    case Elem::f16: return DType::f16;
    case Elem::bf16: return DType::bf16;
    case Elem::f32: return DType::f32;
    case Elem::fp8_e4m3fn: return DType::fp8_e4m3fn;
    case Elem::fp8_e4m3fnuz: return DType::fp8_e4m3fnuz;
    default: return std::nullopt;
  }
}

// Bytes an element: hipattn's dtype_size for its dtypes, else the integer types' own.
inline int64_t elem_bytes(Elem e) {
  if (const std::optional<DType> d = dtype_of(e)) return dtype_size(*d);
  switch (e) {
    case Elem::i32: return 4;
    case Elem::f64:
    case Elem::i64: return 8;
    case Elem::u8: return 1;
    default: return 0;
  }
}

inline constexpr int kMaxDims = 6;

// A tensor as the ops see it. `defined` false: an absent optional argument.
struct View {
  bool defined = false;
  const void* data = nullptr;
  Elem elem = Elem::other;
  int32_t ndim = 0;
  std::array<int64_t, kMaxDims> size{};
  std::array<int64_t, kMaxDims> stride{};
  int32_t device = -1;  // CUDA device index; -1: not a CUDA tensor

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < std::min<int32_t>(ndim, kMaxDims); ++i) n *= size[i];
    return n;
  }
  // The shape as "[a, b, c]".
  std::string shape() const {
    std::string s = "[";
    for (int i = 0; i < std::min<int32_t>(ndim, kMaxDims); ++i) s += (i ? ", " : "") + std::to_string(size[i]);
    return s + "]";
  }
  std::string strides() const {
    std::string s = "(";
    for (int i = 0; i < std::min<int32_t>(ndim, kMaxDims); ++i) s += (i ? ", " : "") + std::to_string(stride[i]);
    return s + ")";
  }
};

// A view of `sizes` with `strides` (contiguous when empty): for tests and host callers.
inline View make_view(const void* data, Elem elem, std::initializer_list<int64_t> sizes,
                      std::initializer_list<int64_t> strides = {}, int32_t device = 0) {
  View v;
  v.defined = true;
  v.data = data;
  v.elem = elem;
  v.device = device;
  v.ndim = static_cast<int32_t>(sizes.size());
  int i = 0;
  for (int64_t s : sizes) v.size[i++] = s;
  if (strides.size() == sizes.size()) {
    i = 0;
    for (int64_t s : strides) v.stride[i++] = s;
  } else {
    int64_t st = 1;
    for (int d = v.ndim - 1; d >= 0; --d) v.stride[d] = st, st *= std::max<int64_t>(1, v.size[d]);
  }
  return v;
}

// ---- checks: each throws Error(code, the argument's name, a message with the bad value) ----

[[noreturn]] inline void fail(const std::string& field, const std::string& msg,
                              ErrorCode code = ErrorCode::invalid_argument) {
  throw Error(code, field, msg);
}

inline std::string device_name(int32_t d) { return d < 0 ? std::string("a non-CUDA device") : "cuda:" + std::to_string(d); }

// The checks of one call: every tensor on `device` (the first tensor's).
struct Checker {
  int32_t device = -1;

  // A required tensor: defined, on the call's CUDA device, `ndim` dimensions (`doc` names them).
  void tensor(const View& t, const std::string& field, int32_t ndim, const char* doc) {
    if (!t.defined) fail(field, field + " is required (" + doc + ")");
    if (t.device < 0) fail(field, field + " is on " + device_name(t.device) + ": every tensor of the call must be a CUDA tensor");
    if (device < 0) device = t.device;
    if (t.device != device)
      fail(field, field + " is on " + device_name(t.device) + ", the call's other tensors on " + device_name(device));
    if (t.ndim != ndim)
      fail(field, field + " has " + std::to_string(t.ndim) + " dimensions " + t.shape() + ", expected " +
                      std::to_string(ndim) + " " + doc);
  }
  // An optional tensor: checked as `tensor` when defined; returns whether it is.
  bool optional(const View& t, const std::string& field, int32_t ndim, const char* doc) {
    if (!t.defined) return false;
    tensor(t, field, ndim, doc);
    return true;
  }
  void elem_in(const View& t, const std::string& field, std::initializer_list<Elem> allowed,
               ErrorCode code = ErrorCode::invalid_argument) {
    for (Elem e : allowed)
      if (t.elem == e) return;
    std::string list;
    for (Elem e : allowed) list += (list.empty() ? "" : ", ") + std::string(elem_name(e));
    fail(field, field + " has dtype " + elem_name(t.elem) + ", expected " + list, code);
  }
  void dim_is(const View& t, const std::string& field, int d, int64_t expected, const std::string& what) {
    if (t.size[d] != expected)
      fail(field, field + " has shape " + t.shape() + ": dimension " + std::to_string(d) + " is " + std::to_string(t.size[d]) +
                      ", expected " + std::to_string(expected) + " (" + what + ")");
  }
  // The last dimension contiguous (stride 1), as every hipattn tensor's.
  void inner_contiguous(const View& t, const std::string& field) {
    const int d = t.ndim - 1;
    if (d >= 0 && t.size[d] > 1 && t.stride[d] != 1)
      fail(field, field + " has strides " + t.strides() + ": its last dimension must be contiguous (stride 1)");
  }
  // A 1-D array of `n` entries, contiguous (a sequence-length or slope array).
  void array(const View& t, const std::string& field, Elem elem, int64_t n, const std::string& what) {
    tensor(t, field, 1, ("[" + what + "]").c_str());
    elem_in(t, field, {elem});
    dim_is(t, field, 0, n, what);
    inner_contiguous(t, field);
  }
  // A scale scalar: float32, at least one element (an expanded scalar is accepted: element 0 is read).
  void scalar(const View& t, const std::string& field) {
    if (!t.defined) fail(field, field + " is required");
    if (t.device < 0) fail(field, field + " is on " + device_name(t.device) + ": the scale must be a CUDA tensor");
    if (device >= 0 && t.device != device)
      fail(field, field + " is on " + device_name(t.device) + ", the call's other tensors on " + device_name(device));
    elem_in(t, field, {Elem::f32});
    if (t.numel() < 1) fail(field, field + " has no element (shape " + t.shape() + "): a float32 scale is read from element 0");
  }
};

// A count or bound as hipattn's int32 fields hold it.
inline int32_t i32(const std::string& field, int64_t v) {
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    fail(field, field + " (" + std::to_string(v) + ") does not fit in 32 bits");
  return static_cast<int32_t>(v);
}

// hipattn's DType of a tensor whose dtype is one of `allowed` (error otherwise).
inline DType dtype_in(Checker& c, const View& t, const std::string& field, std::initializer_list<Elem> allowed) {
  c.elem_in(t, field, allowed);
  return *dtype_of(t.elem);
}

// window_size = (left, right) of vLLM / flash-attention: keys j with pos - left <= j <= pos + right,
// -1 unbounded. hipattn keeps keys j >= pos - window_left (window_left = left, -1: none) and, under
// causal, j <= pos: so right must be -1 or 0 with causal, -1 without (a right window is not served).
inline int32_t window_left_of(const std::vector<int64_t>& w, bool causal, const std::string& field = "window_size") {
  if (w.size() != 2)
    fail(field, field + " has " + std::to_string(w.size()) + " entries, expected 2 (left, right)");
  if (w[0] < -1) fail(field + "[0]", field + "[0] (" + std::to_string(w[0]) + ") must be >= -1 (-1: no window)");
  if (causal ? (w[1] != -1 && w[1] != 0) : w[1] != -1)
    fail(field + "[1]",
         field + "[1] (" + std::to_string(w[1]) + ") is not served: " +
             (causal ? std::string("under causal the right window is 0 or -1") : std::string("a right window needs causal (or -1)")),
         ErrorCode::unsupported);
  return i32(field + "[0]", w[0]);
}

// The stride of the token index t = i * n1 + j over two dimensions (n0, s0), (n1, s1), when one
// stride serves it (n1 == 1, n0 == 1, or s0 == n1 * s1); fails naming the tensor otherwise.
inline int64_t merged_stride(const View& t, const std::string& field, int d0, int d1, const char* what) {
  const int64_t n0 = t.size[d0], s0 = t.stride[d0], n1 = t.size[d1], s1 = t.stride[d1];
  if (n1 == 1) return s0;
  if (n0 == 1 || s0 == n1 * s1) return s1;
  fail(field, field + " has shape " + t.shape() + " and strides " + t.strides() + ": dimensions " + std::to_string(d0) +
                  " and " + std::to_string(d1) + " (" + what + ") must merge into one token index (stride(" +
                  std::to_string(d0) + ") == size(" + std::to_string(d1) + ") * stride(" + std::to_string(d1) + "))");
}

inline float finite_float(const std::string& field, double v) {
  if (!std::isfinite(v) || std::fabs(v) > double(std::numeric_limits<float>::max()))
    fail(field, field + " (" + std::to_string(v) + ") is not a finite float32");
  return static_cast<float>(v);
}

// ================================ unified attention ================================
// vLLM's KV quantization modes as the op takes them (the Python wrapper maps vLLM's KVQuantMode).
enum KvQuant : int64_t {
  kv_quant_auto = 0,            // none for 16-bit caches, per-tensor (k_descale / v_descale) for fp8
  kv_quant_per_tensor = 1,      // fp8 cache, k_descale / v_descale
  kv_quant_per_token_head = 2,  // fp8 cache, k_scale_cache / v_scale_cache [num_blocks, block_size, num_kv_heads]
};

// The output `out`, q's shape (16-bit or fp8; rows contiguous, any token / head strides), and its
// optional fp8 scale (a device scalar) into the params (unified and paged decode).
template <class Params>
void set_output(Checker& c, const View& out, const View& q, const View& output_scale, const char* doc, Params& p) {
  c.tensor(out, "out", 3, doc);
  p.out_format.dtype = dtype_in(c, out, "out", {Elem::f16, Elem::bf16, Elem::fp8_e4m3fn, Elem::fp8_e4m3fnuz});
  for (int d = 0; d < 3; ++d) c.dim_is(out, "out", d, q.size[d], "the shape of q");
  c.inner_contiguous(out, "out");
  p.out = const_cast<void*>(out.data);
  p.o_stride_token = out.stride[0];
  p.o_stride_head = out.stride[1];
  if (output_scale.defined) {
    c.scalar(output_scale, "output_scale");
    p.out_format.scale.device = static_cast<const float*>(output_scale.data);
  }
}

// The paged K / V caches [num_blocks, block_size, num_kv_heads, head_size] (any block / slot / head
// strides, rows contiguous; one dtype, one shape; head_size already set from q) into the params
// (unified and paged decode, whose arguments name them `k_name` / `v_name`).
template <class Params>
void set_paged_caches(Checker& c, const View& k, const View& v, const std::string& k_name, const std::string& v_name,
                      const char* doc, Params& p) {
  c.tensor(k, k_name, 4, doc);
  c.tensor(v, v_name, 4, doc);
  p.kv_dtype = dtype_in(c, k, k_name, {Elem::f16, Elem::bf16, Elem::fp8_e4m3fn, Elem::fp8_e4m3fnuz});
  if (v.elem != k.elem)
    fail(v_name, v_name + " has dtype " + elem_name(v.elem) + ", " + k_name + " " + elem_name(k.elem) + ": they must match");
  c.dim_is(k, k_name, 3, p.head_size, "head_size of q");
  for (int d = 0; d < 4; ++d) c.dim_is(v, v_name, d, k.size[d], "the shape of " + k_name);
  c.inner_contiguous(k, k_name);
  c.inner_contiguous(v, v_name);
  p.k_cache = k.data;
  p.v_cache = v.data;
  p.num_blocks = i32(k_name + ".size(0)", k.size[0]);
  p.block_size = i32(k_name + ".size(1)", k.size[1]);
  p.num_kv_heads = i32(k_name + ".size(2)", k.size[2]);
  p.k_stride_block = k.stride[0], p.k_stride_slot = k.stride[1], p.k_stride_head = k.stride[2];
  p.v_stride_block = v.stride[0], p.v_stride_slot = v.stride[1], p.v_stride_head = v.stride[2];
}

// Per-(token, head) K / V scale caches [num_blocks, block_size, num_kv_heads] (f32, one set of strides,
// the first three dims of the cache `k` named `k_name`) into the params' scales (unified and paged decode).
template <class Params>
void set_token_head_scales(Checker& c, const View& ks, const View& vs, const View& k, const std::string& k_name, Params& p) {
  const char* doc = "[num_blocks, block_size, num_kv_heads]";
  c.tensor(ks, "k_scale_cache", 3, doc);
  c.tensor(vs, "v_scale_cache", 3, doc);
  for (const View* s : {&ks, &vs}) {
    const std::string f = s == &ks ? "k_scale_cache" : "v_scale_cache";
    c.elem_in(*s, f, {Elem::f32});
    for (int d = 0; d < 3; ++d) c.dim_is(*s, f, d, k.size[d], "num_blocks, block_size, num_kv_heads of " + k_name);
  }
  for (int d = 0; d < 3; ++d)
    if (vs.stride[d] != ks.stride[d])
      fail("v_scale_cache", "v_scale_cache has strides " + vs.strides() + ", k_scale_cache " + ks.strides() +
                                ": hipattn reads both through one set of strides");
  p.kv_scale_mode = KvScaleMode::per_token_head;
  p.k_scale = static_cast<const float*>(ks.data);
  p.v_scale = static_cast<const float*>(vs.data);
  p.scale_stride_block = ks.stride[0];
  p.scale_stride_slot = ks.stride[1];
  p.scale_stride_head = ks.stride[2];
}

// vLLM's unified_attention arguments (vllm/v1/attention/ops/triton_unified_attention.py), plus an
// optional LSE and the per-group fp8 output of vLLM's fp8 contract.
struct UnifiedArgs {
  View q;             // [num_tokens, num_q_heads, head_size]
  View k, v;          // [num_blocks, block_size, num_kv_heads, head_size] (any block / slot / head strides: NHD or HND)
  View out;           // [num_tokens, num_q_heads, head_size]
  View cu_seqlens_q;  // int32 [num_seqs + 1]
  int64_t max_seqlen_q = 0;
  View seqused_k;  // int32 [num_seqs]
  int64_t max_seqlen_k = 0;
  double softmax_scale = 0.0;
  bool causal = true;
  std::vector<int64_t> window_size{-1, -1};
  View block_table;  // int32 [num_seqs, max_blocks_per_seq]
  double softcap = 0.0;
  View q_descale, k_descale, v_descale;  // float32 scalars (fp8 queries / fp8 caches)
  View alibi_slopes;                     // float32 [num_q_heads]
  View output_scale;                     // float32 scalar: fp8 out = O / output_scale
  View qq_bias;                          // float32 [rows >= max_seqlen_q, columns], rows contiguous
  View sinks;                            // float32 [num_q_heads]
  int64_t kv_quant_mode = kv_quant_auto;
  View k_scale_cache, v_scale_cache;  // float32 [num_blocks, block_size, num_kv_heads]
  View lse;                           // float32 [num_q_heads, >= num_tokens]
  View output_group_scale;            // float32 [num_tokens, num_q_heads * head_size / group]
  int64_t output_group_size = 0;
  bool output_group_ue8m0 = false;
};

inline UnifiedAttentionParams unified_params(const UnifiedArgs& a) {
  Checker c;
  UnifiedAttentionParams p;
  c.tensor(a.q, "q", 3, "[num_tokens, num_q_heads, head_size]");
  p.q_dtype = dtype_in(c, a.q, "q", {Elem::f16, Elem::bf16, Elem::fp8_e4m3fn, Elem::fp8_e4m3fnuz});
  c.inner_contiguous(a.q, "q");
  p.q = a.q.data;
  p.num_tokens = i32("q.size(0)", a.q.size[0]);
  p.num_q_heads = i32("q.size(1)", a.q.size[1]);
  p.head_size = i32("q.size(2)", a.q.size[2]);
  p.q_stride_token = a.q.stride[0];
  p.q_stride_head = a.q.stride[1];

  const char* cache_doc = "[num_blocks, block_size, num_kv_heads, head_size]";
  set_paged_caches(c, a.k, a.v, "k", "v", cache_doc, p);

  c.tensor(a.seqused_k, "seqused_k", 1, "[num_seqs]");
  p.num_seqs = i32("seqused_k.size(0)", a.seqused_k.size[0]);
  c.array(a.seqused_k, "seqused_k", Elem::i32, p.num_seqs, "num_seqs");
  c.array(a.cu_seqlens_q, "cu_seqlens_q", Elem::i32, int64_t(p.num_seqs) + 1, "num_seqs + 1");
  p.seq_lens_k = static_cast<const int32_t*>(a.seqused_k.data);
  p.cu_seqlens_q = static_cast<const int32_t*>(a.cu_seqlens_q.data);
  p.max_seqlen_q = i32("max_seqlen_q", a.max_seqlen_q);
  p.max_seqlen_k = i32("max_seqlen_k", a.max_seqlen_k);

  c.tensor(a.block_table, "block_table", 2, "[num_seqs, max_blocks_per_seq]");
  c.elem_in(a.block_table, "block_table", {Elem::i32});
  c.dim_is(a.block_table, "block_table", 0, p.num_seqs, "num_seqs");
  c.inner_contiguous(a.block_table, "block_table");
  p.block_table = static_cast<const int32_t*>(a.block_table.data);
  p.max_blocks_per_seq = i32("block_table.size(1)", a.block_table.size[1]);
  p.block_table_stride = a.block_table.stride[0];

  p.scale = finite_float("softmax_scale", a.softmax_scale);
  p.causal = a.causal;
  p.window_left = window_left_of(a.window_size, a.causal);
  p.softcap = finite_float("softcap", a.softcap);

  // fp8 queries: q_descale (vLLM's Triton kernel takes none; hipattn's fp8 query contract does).
  if (a.q_descale.defined) {
    if (!is_fp8(p.q_dtype))
      fail("q_descale", std::string("q_descale is given for a ") + elem_name(a.q.elem) + " query: it scales fp8 queries only");
    c.scalar(a.q_descale, "q_descale");
    p.q_scale.device = static_cast<const float*>(a.q_descale.data);
  }
  // KV scales: as vLLM's kernel, k_descale / v_descale apply to fp8 caches only (vLLM passes its
  // layer scales, 1.0, for 16-bit caches too; they are not read then).
  if (a.kv_quant_mode < kv_quant_auto || a.kv_quant_mode > kv_quant_per_token_head)
    fail("kv_quant_mode", "kv_quant_mode (" + std::to_string(a.kv_quant_mode) +
                              ") must be 0 (auto), 1 (per tensor) or 2 (per token and head)");
  if (is_fp8(p.kv_dtype)) {
    if (a.kv_quant_mode == kv_quant_per_token_head) {
      set_token_head_scales(c, a.k_scale_cache, a.v_scale_cache, a.k, "k", p);
    } else {
      c.scalar(a.k_descale, "k_descale");
      c.scalar(a.v_descale, "v_descale");
      p.kv_scale_mode = KvScaleMode::per_tensor;
      p.k_scale = static_cast<const float*>(a.k_descale.data);
      p.v_scale = static_cast<const float*>(a.v_descale.data);
    }
  } else if (a.kv_quant_mode != kv_quant_auto) {
    fail("kv_quant_mode", "kv_quant_mode (" + std::to_string(a.kv_quant_mode) + ") with a " + elem_name(a.k.elem) +
                              " cache: the quantized modes need an fp8 cache");
  }

  if (c.optional(a.alibi_slopes, "alibi_slopes", 1, "[num_q_heads]")) {
    c.array(a.alibi_slopes, "alibi_slopes", Elem::f32, p.num_q_heads, "num_q_heads");
    p.alibi_slopes = static_cast<const float*>(a.alibi_slopes.data);
  }
  if (c.optional(a.sinks, "sinks", 1, "[num_q_heads]")) {
    c.array(a.sinks, "sinks", Elem::f32, p.num_q_heads, "num_q_heads");
    p.sinks = static_cast<const float*>(a.sinks.data);
  }
  if (c.optional(a.qq_bias, "qq_bias", 2, "[rows >= max_seqlen_q, columns]")) {
    c.elem_in(a.qq_bias, "qq_bias", {Elem::f32});
    c.inner_contiguous(a.qq_bias, "qq_bias");
    if (a.qq_bias.size[0] < a.max_seqlen_q)
      fail("qq_bias", "qq_bias has shape " + a.qq_bias.shape() + ": fewer rows than max_seqlen_q (" +
                          std::to_string(a.max_seqlen_q) + ")");
    // hipattn's qq_bias_stride is the row stride and the number of valid columns at once.
    if (a.qq_bias.size[0] > 1 && a.qq_bias.stride[0] != a.qq_bias.size[1])
      fail("qq_bias", "qq_bias has shape " + a.qq_bias.shape() + " and strides " + a.qq_bias.strides() +
                          ": its rows must be contiguous (stride(0) == size(1))");
    p.qq_bias = static_cast<const float*>(a.qq_bias.data);
    p.qq_bias_stride = a.qq_bias.size[1];
  }

  set_output(c, a.out, a.q, a.output_scale, "[num_tokens, num_q_heads, head_size]", p);
  if (c.optional(a.output_group_scale, "output_group_scale", 2, "[num_tokens, num_q_heads * head_size / group_size]")) {
    c.elem_in(a.output_group_scale, "output_group_scale", {Elem::f32});
    c.dim_is(a.output_group_scale, "output_group_scale", 0, p.num_tokens, "num_tokens");
    if (a.output_group_size > 0)
      c.dim_is(a.output_group_scale, "output_group_scale", 1,
               int64_t(p.num_q_heads) * p.head_size / a.output_group_size, "num_q_heads * head_size / output_group_size");
    p.out_format.group_size = i32("output_group_size", a.output_group_size);
    p.out_format.group_scale = static_cast<float*>(const_cast<void*>(a.output_group_scale.data));
    p.out_format.group_scale_stride_token = a.output_group_scale.stride[0];
    p.out_format.group_scale_stride_group = a.output_group_scale.stride[1];
    p.out_format.group_ue8m0 = a.output_group_ue8m0;
  } else if (a.output_group_size != 0) {
    fail("output_group_size", "output_group_size (" + std::to_string(a.output_group_size) +
                                  ") without output_group_scale: pass the tensor the group scales are written to");
  }
  if (c.optional(a.lse, "lse", 2, "[num_q_heads, >= num_tokens]")) {
    c.elem_in(a.lse, "lse", {Elem::f32});
    c.dim_is(a.lse, "lse", 0, p.num_q_heads, "num_q_heads");
    if (a.lse.size[1] < p.num_tokens)
      fail("lse", "lse has shape " + a.lse.shape() + ": fewer columns than num_tokens (" + std::to_string(p.num_tokens) + ")");
    c.inner_contiguous(a.lse, "lse");
    p.lse = static_cast<float*>(const_cast<void*>(a.lse.data));
    p.lse_stride_head = a.lse.stride[0];
  }
  throw_if_error(validate(p));
  return p;
}

// ================================ paged decode ================================
// The workspace of a call: a uint8 CUDA tensor made by the plan (paged_decode_plan / mla_decode_plan).
struct Workspace {
  void* data = nullptr;
  size_t bytes = 0;
};

inline Workspace workspace_of(Checker& c, const View& w, const std::string& field) {
  c.tensor(w, field, 1, "[bytes] (the plan's uint8 tensor)");
  c.elem_in(w, field, {Elem::u8});
  c.inner_contiguous(w, field);
  return {const_cast<void*>(w.data), static_cast<size_t>(w.size[0])};
}

struct PagedDecodeArgs {
  View q;  // [num_seqs * q_len, num_q_heads, head_size]
  View k_cache, v_cache;  // [num_blocks, block_size, num_kv_heads, head_size] (NHD or HND strides)
  View out;               // [num_seqs * q_len, num_q_heads, head_size]
  View block_table;       // int32 [num_seqs, max_blocks_per_seq]
  View seq_lens;          // int32 [num_seqs]
  int64_t max_seqlen_k = 0;
  double softmax_scale = 0.0;
  View workspace;  // uint8, from paged_decode_plan
  int64_t q_len = 1;
  std::vector<int64_t> window_size{-1, -1};
  double softcap = 0.0;
  View alibi_slopes, sinks;  // float32 [num_q_heads]
  View k_scale, v_scale;     // fp8 per-tensor: float32 scalars, or absent for the host values below
  double k_scale_value = 1.0, v_scale_value = 1.0;
  View k_scale_cache, v_scale_cache;  // fp8 per (token, head): float32 [num_blocks, block_size, num_kv_heads]
  View q_scale;                       // fp8 queries: float32 scalar
  View output_scale;                  // fp8 output: float32 scalar
  View lse;                           // float32 [num_q_heads, >= num_seqs * q_len]
};

struct PagedDecodeCall {
  PagedDecodeParams params;
  Workspace workspace;
};

inline PagedDecodeCall paged_decode_call(const PagedDecodeArgs& a) {
  Checker c;
  PagedDecodeParams p;
  c.tensor(a.q, "q", 3, "[num_seqs * q_len, num_q_heads, head_size]");
  p.q_dtype = dtype_in(c, a.q, "q", {Elem::f16, Elem::bf16, Elem::fp8_e4m3fn, Elem::fp8_e4m3fnuz});
  c.inner_contiguous(a.q, "q");
  p.q = a.q.data;
  p.num_q_heads = i32("q.size(1)", a.q.size[1]);
  p.head_size = i32("q.size(2)", a.q.size[2]);
  p.q_stride_token = a.q.stride[0];
  p.q_stride_head = a.q.stride[1];
  p.q_len = i32("q_len", a.q_len);

  const char* cache_doc = "[num_blocks, block_size, num_kv_heads, head_size]";
  set_paged_caches(c, a.k_cache, a.v_cache, "k_cache", "v_cache", cache_doc, p);

  c.tensor(a.seq_lens, "seq_lens", 1, "[num_seqs]");
  p.num_seqs = i32("seq_lens.size(0)", a.seq_lens.size[0]);
  c.array(a.seq_lens, "seq_lens", Elem::i32, p.num_seqs, "num_seqs");
  p.seq_lens_k = static_cast<const int32_t*>(a.seq_lens.data);
  p.max_seqlen_k = i32("max_seqlen_k", a.max_seqlen_k);
  if (a.q.size[0] != int64_t(p.num_seqs) * a.q_len)
    fail("q", "q has shape " + a.q.shape() + ": dimension 0 must be num_seqs (" + std::to_string(p.num_seqs) +
                  ") * q_len (" + std::to_string(a.q_len) + ")");

  c.tensor(a.block_table, "block_table", 2, "[num_seqs, max_blocks_per_seq]");
  c.elem_in(a.block_table, "block_table", {Elem::i32});
  c.dim_is(a.block_table, "block_table", 0, p.num_seqs, "num_seqs");
  c.inner_contiguous(a.block_table, "block_table");
  p.block_table = static_cast<const int32_t*>(a.block_table.data);
  p.max_blocks_per_seq = i32("block_table.size(1)", a.block_table.size[1]);
  p.block_table_stride = a.block_table.stride[0];

  p.scale = finite_float("softmax_scale", a.softmax_scale);
  p.window_left = window_left_of(a.window_size, /*causal=*/true);
  p.softcap = finite_float("softcap", a.softcap);
  if (c.optional(a.alibi_slopes, "alibi_slopes", 1, "[num_q_heads]")) {
    c.array(a.alibi_slopes, "alibi_slopes", Elem::f32, p.num_q_heads, "num_q_heads");
    p.alibi_slopes = static_cast<const float*>(a.alibi_slopes.data);
  }
  if (c.optional(a.sinks, "sinks", 1, "[num_q_heads]")) {
    c.array(a.sinks, "sinks", Elem::f32, p.num_q_heads, "num_q_heads");
    p.sinks = static_cast<const float*>(a.sinks.data);
  }

  if (a.q_scale.defined) {
    if (!is_fp8(p.q_dtype))
      fail("q_scale", std::string("q_scale is given for a ") + elem_name(a.q.elem) + " query: it scales fp8 queries only");
    c.scalar(a.q_scale, "q_scale");
    p.q_scale.device = static_cast<const float*>(a.q_scale.data);
  }
  const bool per_token = a.k_scale_cache.defined || a.v_scale_cache.defined;
  if (is_fp8(p.kv_dtype)) {
    if (per_token) {
      set_token_head_scales(c, a.k_scale_cache, a.v_scale_cache, a.k_cache, "k_cache", p);
    } else {
      p.kv_scale_mode = KvScaleMode::per_tensor;
      if (a.k_scale.defined) c.scalar(a.k_scale, "k_scale"), p.k_scale = static_cast<const float*>(a.k_scale.data);
      if (a.v_scale.defined) c.scalar(a.v_scale, "v_scale"), p.v_scale = static_cast<const float*>(a.v_scale.data);
      p.k_scale_value = finite_float("k_scale_value", a.k_scale_value);
      p.v_scale_value = finite_float("v_scale_value", a.v_scale_value);
    }
  } else if (per_token || a.k_scale.defined || a.v_scale.defined) {
    fail(per_token ? "k_scale_cache" : "k_scale",
         std::string("KV scales are given for a ") + elem_name(a.k_cache.elem) + " cache: they scale fp8 caches only");
  }

  set_output(c, a.out, a.q, a.output_scale, "[num_seqs * q_len, num_q_heads, head_size]", p);
  if (c.optional(a.lse, "lse", 2, "[num_q_heads, >= num_seqs * q_len]")) {
    c.elem_in(a.lse, "lse", {Elem::f32});
    c.dim_is(a.lse, "lse", 0, p.num_q_heads, "num_q_heads");
    if (a.lse.size[1] < a.q.size[0])
      fail("lse", "lse has shape " + a.lse.shape() + ": fewer columns than num_seqs * q_len (" + std::to_string(a.q.size[0]) + ")");
    c.inner_contiguous(a.lse, "lse");
    p.lse = static_cast<float*>(const_cast<void*>(a.lse.data));
    p.lse_stride_head = a.lse.stride[0];
  }
  PagedDecodeCall call;
  call.workspace = workspace_of(c, a.workspace, "workspace");
  throw_if_error(validate(p));
  call.params = p;
  return call;
}

// The traits of a paged-decode plan, from the plan op's integers (validated by hipattn when sized).
inline PagedDecodeTraits paged_decode_traits(int64_t max_num_seqs, int64_t max_q_len, int64_t num_q_heads,
                                             int64_t num_kv_heads, int64_t max_head_size, int64_t max_seqlen_k) {
  PagedDecodeTraits t;
  t.max_num_seqs = i32("max_num_seqs", max_num_seqs);
  t.max_q_len = i32("max_q_len", max_q_len);
  t.num_q_heads = i32("num_q_heads", num_q_heads);
  t.num_kv_heads = i32("num_kv_heads", num_kv_heads);
  t.max_head_size = i32("max_head_size", max_head_size);
  t.max_seqlen_k = i32("max_seqlen_k", max_seqlen_k);
  throw_if_error(validate(t));
  return t;
}

// ================================ MLA decode ================================
// FlashMLA's flash_mla_with_kvcache arguments (out-variant), over hipattn's MLA decode.
struct MlaDecodeArgs {
  View q;              // [batch, q_len, num_heads, 576], or [.., 512] with q_rope [.., 64]
  View kv_cache;       // [num_pages, page_size, 1, 576] or [num_pages, page_size, 576]
  View block_table;    // int32 [batch, max_pages_per_seq]
  View cache_seqlens;  // int32 [batch]
  int64_t head_dim_v = kMlaLatentDim;
  View tile_scheduler_metadata;  // uint8, from mla_decode_plan (hipattn's workspace)
  double softmax_scale = 0.0;
  bool causal = true;
  View out;          // [batch, q_len, num_heads, 512]
  View softmax_lse;  // float32 [batch, num_heads, q_len] (FlashMLA's), optional
  int64_t max_seqlen_k = -1;  // -1: block_table.size(1) * page_size
  View q_rope;                // [batch, q_len, num_heads, 64], optional (split query)
  View kv_scale;              // fp8 cache: float32 scalar, or absent for kv_scale_value
  double kv_scale_value = 1.0;
  View q_scale;       // fp8 queries: float32 scalar
  View output_scale;  // fp8 output: float32 scalar
};

struct MlaDecodeCall {
  MlaDecodeParams params;
  Workspace workspace;
};

inline MlaDecodeCall mla_decode_call(const MlaDecodeArgs& a) {
  Checker c;
  MlaDecodeParams p;
  const bool split = a.q_rope.defined;
  c.tensor(a.q, "q", 4, "[batch, q_len, num_heads, 576]");
  p.q_dtype = dtype_in(c, a.q, "q", {Elem::f16, Elem::bf16, Elem::fp8_e4m3fn, Elem::fp8_e4m3fnuz});
  c.dim_is(a.q, "q", 3, split ? kMlaLatentDim : kMlaQkDim, split ? "the latent dimensions (q_rope given)" : "576 = 512 + 64");
  c.inner_contiguous(a.q, "q");
  p.q = a.q.data;
  p.batch = i32("q.size(0)", a.q.size[0]);
  p.q_len = i32("q.size(1)", a.q.size[1]);
  p.num_heads = i32("q.size(2)", a.q.size[2]);
  p.q_stride_token = merged_stride(a.q, "q", 0, 1, "batch, q_len");
  p.q_stride_head = a.q.stride[2];
  if (split) {
    c.tensor(a.q_rope, "q_rope", 4, "[batch, q_len, num_heads, 64]");
    if (a.q_rope.elem != a.q.elem)
      fail("q_rope", std::string("q_rope has dtype ") + elem_name(a.q_rope.elem) + ", q " + elem_name(a.q.elem) + ": they must match");
    for (int d = 0; d < 3; ++d) c.dim_is(a.q_rope, "q_rope", d, a.q.size[d], "the shape of q");
    c.dim_is(a.q_rope, "q_rope", 3, kMlaRopeDim, "the rope dimensions");
    c.inner_contiguous(a.q_rope, "q_rope");
    p.q_rope = a.q_rope.data;
    p.q_rope_stride_token = merged_stride(a.q_rope, "q_rope", 0, 1, "batch, q_len");
    p.q_rope_stride_head = a.q_rope.stride[2];
  }
  if (a.head_dim_v != kMlaLatentDim)
    fail("head_dim_v", "head_dim_v (" + std::to_string(a.head_dim_v) + ") is not served: hipattn's MLA decode has V = the " +
                           std::to_string(kMlaLatentDim) + " latent dimensions",
         ErrorCode::unsupported);
  if (!a.causal && a.q.size[1] > 1)
    fail("causal", "causal is false with q_len " + std::to_string(a.q.size[1]) +
                       ": hipattn's MLA decode keeps a sequence's query rows causal among themselves (bottom-right)",
         ErrorCode::unsupported);

  if (!a.kv_cache.defined) fail("kv_cache", "kv_cache is required ([num_pages, page_size, 1, 576])");
  if (a.kv_cache.ndim == 4) {
    c.tensor(a.kv_cache, "kv_cache", 4, "[num_pages, page_size, 1, 576]");
    c.dim_is(a.kv_cache, "kv_cache", 2, 1, "one latent KV head");
  } else {
    c.tensor(a.kv_cache, "kv_cache", 3, "[num_pages, page_size, 576]");
  }
  const int last = a.kv_cache.ndim - 1;
  p.kv_dtype = dtype_in(c, a.kv_cache, "kv_cache", {Elem::f16, Elem::bf16, Elem::fp8_e4m3fn, Elem::fp8_e4m3fnuz});
  c.dim_is(a.kv_cache, "kv_cache", last, kMlaQkDim, "576 = 512 + 64");
  c.inner_contiguous(a.kv_cache, "kv_cache");
  p.kv_cache = a.kv_cache.data;
  p.num_pages = i32("kv_cache.size(0)", a.kv_cache.size[0]);
  p.page_size = i32("kv_cache.size(1)", a.kv_cache.size[1]);
  p.kv_stride_page = a.kv_cache.stride[0];
  p.kv_stride_slot = a.kv_cache.stride[1];
  if (is_fp8(p.kv_dtype)) {
    if (a.kv_scale.defined) c.scalar(a.kv_scale, "kv_scale"), p.kv_scale = static_cast<const float*>(a.kv_scale.data);
    p.kv_scale_value = finite_float("kv_scale_value", a.kv_scale_value);
  } else if (a.kv_scale.defined) {
    fail("kv_scale", std::string("kv_scale is given for a ") + elem_name(a.kv_cache.elem) + " cache: it scales fp8 caches only");
  }
  if (a.q_scale.defined) {
    if (!is_fp8(p.q_dtype))
      fail("q_scale", std::string("q_scale is given for a ") + elem_name(a.q.elem) + " query: it scales fp8 queries only");
    c.scalar(a.q_scale, "q_scale");
    p.q_scale.device = static_cast<const float*>(a.q_scale.data);
  }

  c.array(a.cache_seqlens, "cache_seqlens", Elem::i32, p.batch, "batch");
  p.seq_lens_k = static_cast<const int32_t*>(a.cache_seqlens.data);
  c.tensor(a.block_table, "block_table", 2, "[batch, max_pages_per_seq]");
  c.elem_in(a.block_table, "block_table", {Elem::i32});
  c.dim_is(a.block_table, "block_table", 0, p.batch, "batch");
  c.inner_contiguous(a.block_table, "block_table");
  p.block_table = static_cast<const int32_t*>(a.block_table.data);
  p.max_pages_per_seq = i32("block_table.size(1)", a.block_table.size[1]);
  p.block_table_stride = a.block_table.stride[0];
  p.max_seqlen_k = a.max_seqlen_k < 0 ? i32("block_table.size(1) * page_size", a.block_table.size[1] * a.kv_cache.size[1])
                                      : i32("max_seqlen_k", a.max_seqlen_k);
  p.scale = finite_float("softmax_scale", a.softmax_scale);

  c.tensor(a.out, "out", 4, "[batch, q_len, num_heads, 512]");
  p.out_format.dtype = dtype_in(c, a.out, "out", {Elem::f16, Elem::bf16, Elem::fp8_e4m3fn, Elem::fp8_e4m3fnuz});
  for (int d = 0; d < 3; ++d) c.dim_is(a.out, "out", d, a.q.size[d], "the shape of q");
  c.dim_is(a.out, "out", 3, kMlaLatentDim, "head_dim_v");
  c.inner_contiguous(a.out, "out");
  p.out = const_cast<void*>(a.out.data);
  p.o_stride_token = merged_stride(a.out, "out", 0, 1, "batch, q_len");
  p.o_stride_head = a.out.stride[2];
  if (a.output_scale.defined) {
    c.scalar(a.output_scale, "output_scale");
    p.out_format.scale.device = static_cast<const float*>(a.output_scale.data);
  }
  if (c.optional(a.softmax_lse, "softmax_lse", 3, "[batch, num_heads, q_len]")) {
    c.elem_in(a.softmax_lse, "softmax_lse", {Elem::f32});
    c.dim_is(a.softmax_lse, "softmax_lse", 0, p.batch, "batch");
    c.dim_is(a.softmax_lse, "softmax_lse", 1, p.num_heads, "num_heads");
    c.dim_is(a.softmax_lse, "softmax_lse", 2, p.q_len, "q_len");
    p.lse = static_cast<float*>(const_cast<void*>(a.softmax_lse.data));
    p.lse_stride_token = merged_stride(a.softmax_lse, "softmax_lse", 0, 2, "batch, q_len");
    p.lse_stride_head = a.softmax_lse.stride[1];
  }
  MlaDecodeCall call;
  call.workspace = workspace_of(c, a.tile_scheduler_metadata, "tile_scheduler_metadata");
  throw_if_error(validate(p));
  call.params = p;
  return call;
}

inline MlaDecodeTraits mla_decode_traits(int64_t max_batch, int64_t max_q_len, int64_t num_heads, int64_t max_seqlen_k) {
  MlaDecodeTraits t;
  t.max_batch = i32("max_batch", max_batch);
  t.max_q_len = i32("max_q_len", max_q_len);
  t.num_heads = i32("num_heads", num_heads);
  t.max_seqlen_k = i32("max_seqlen_k", max_seqlen_k);
  throw_if_error(validate(t));
  return t;
}

// ================================ merge_attn_states ================================
// vLLM's merge_attn_states(output, output_lse, prefix_output, prefix_lse, suffix_output, suffix_lse):
// O [num_tokens, num_heads, head_size], LSE [num_heads, num_tokens] float32. hipattn merges R ranks of
// one strided tensor (base pointer + rank stride): the two partials are used in place when one rank
// stride reaches the second from the first (pair_rank_stride); otherwise the op layer stacks them
// into a temporary (the LSEs are small; the O's only when they cannot be addressed in place).
struct MergeArgs {
  View output, output_lse, prefix_output, prefix_lse, suffix_output, suffix_lse;
};

// The rank stride (elements) that makes `b` rank 1 of a strided tensor whose rank 0 is `a`: their
// address difference, when both have the same element type, shape and strides, b lies after every
// element of a, the difference is a whole number of elements below 2^31 and a multiple of `align`
// bytes. Nothing otherwise.
inline std::optional<int64_t> pair_rank_stride(const View& a, const View& b, int64_t align) {
  if (!a.defined || !b.defined || a.elem != b.elem || a.ndim != b.ndim) return std::nullopt;
  int64_t span = 1;  // elements from a's first to one past its last
  for (int d = 0; d < a.ndim; ++d) {
    if (a.size[d] != b.size[d] || (a.size[d] > 1 && a.stride[d] != b.stride[d])) return std::nullopt;
    if (a.stride[d] < 0) return std::nullopt;
    if (a.size[d] > 0) span += (a.size[d] - 1) * a.stride[d];
  }
  const int64_t es = elem_bytes(a.elem);
  const auto pa = reinterpret_cast<uintptr_t>(a.data), pb = reinterpret_cast<uintptr_t>(b.data);
  if (es == 0 || pb <= pa) return std::nullopt;
  const uintptr_t diff = pb - pa;
  if (diff % uintptr_t(es) != 0 || diff % uintptr_t(std::max<int64_t>(align, 1)) != 0) return std::nullopt;
  const uintptr_t elems = diff / uintptr_t(es);
  if (elems < uintptr_t(span) || elems >= (uintptr_t(1) << 31)) return std::nullopt;
  return static_cast<int64_t>(elems);
}

struct MergeCall {
  MergeAttentionStatesParams params;
  bool suffix_first = false;  // rank 0 is the suffix (lower address)
  bool stack_out = false;     // the op layer stacks [rank0 O, rank1 O] and calls set_stacked_out
  bool stack_lse = false;     // the op layer stacks [rank0 LSE, rank1 LSE] and calls set_stacked_lse
};

inline MergeCall merge_call(const MergeArgs& a) {
  Checker c;
  MergeCall m;
  MergeAttentionStatesParams& p = m.params;
  const char* o_doc = "[num_tokens, num_heads, head_size]";
  const char* l_doc = "[num_heads, num_tokens]";
  c.tensor(a.output, "output", 3, o_doc);
  p.out_dtype = dtype_in(c, a.output, "output", {Elem::f16, Elem::bf16, Elem::f32});
  c.inner_contiguous(a.output, "output");
  p.num_tokens = i32("output.size(0)", a.output.size[0]);
  p.num_heads = i32("output.size(1)", a.output.size[1]);
  p.head_size = i32("output.size(2)", a.output.size[2]);
  p.out = const_cast<void*>(a.output.data);
  p.o_stride_token = a.output.stride[0];
  p.o_stride_head = a.output.stride[1];
  for (const auto& [t, f] : {std::pair{&a.prefix_output, "prefix_output"}, std::pair{&a.suffix_output, "suffix_output"}}) {
    c.tensor(*t, f, 3, o_doc);
    c.elem_in(*t, f, {Elem::f16, Elem::bf16, Elem::f32});
    for (int d = 0; d < 3; ++d) c.dim_is(*t, f, d, a.output.size[d], "the shape of output");
    c.inner_contiguous(*t, f);
  }
  if (a.suffix_output.elem != a.prefix_output.elem)
    fail("suffix_output", std::string("suffix_output has dtype ") + elem_name(a.suffix_output.elem) + ", prefix_output " +
                              elem_name(a.prefix_output.elem) + ": they must match");
  p.partial_dtype = *dtype_of(a.prefix_output.elem);
  for (const auto& [t, f] : {std::pair{&a.prefix_lse, "prefix_lse"}, std::pair{&a.suffix_lse, "suffix_lse"}}) {
    c.tensor(*t, f, 2, l_doc);
    c.elem_in(*t, f, {Elem::f32});
    c.dim_is(*t, f, 0, p.num_heads, "num_heads");
    c.dim_is(*t, f, 1, p.num_tokens, "num_tokens");
  }
  if (c.optional(a.output_lse, "output_lse", 2, l_doc)) {
    c.elem_in(a.output_lse, "output_lse", {Elem::f32});
    c.dim_is(a.output_lse, "output_lse", 0, p.num_heads, "num_heads");
    c.dim_is(a.output_lse, "output_lse", 1, p.num_tokens, "num_tokens");
    p.lse = static_cast<float*>(const_cast<void*>(a.output_lse.data));
    p.lse_stride_head = a.output_lse.stride[0];
    p.lse_stride_token = a.output_lse.stride[1];
  }
  p.num_ranks = 2;
  // In place: rank 0 the partial at the lower address.
  m.suffix_first = reinterpret_cast<uintptr_t>(a.suffix_output.data) < reinterpret_cast<uintptr_t>(a.prefix_output.data);
  const View& o0 = m.suffix_first ? a.suffix_output : a.prefix_output;
  const View& o1 = m.suffix_first ? a.prefix_output : a.suffix_output;
  if (const auto s = pair_rank_stride(o0, o1, merge_rules::kVectorAlignBytes)) {
    p.partial_out = o0.data;
    p.po_stride_rank = *s;
    p.po_stride_token = o0.stride[0];
    p.po_stride_head = o0.stride[1];
  } else {
    m.stack_out = true;
    m.suffix_first = false;
  }
  const View& l0 = m.suffix_first ? a.suffix_lse : a.prefix_lse;
  const View& l1 = m.suffix_first ? a.prefix_lse : a.suffix_lse;
  if (const auto s = pair_rank_stride(l0, l1, int64_t(sizeof(float)))) {
    p.partial_lse = static_cast<const float*>(l0.data);
    p.plse_stride_rank = *s;
    p.plse_stride_head = l0.stride[0];
    p.plse_stride_token = l0.stride[1];
  } else {
    m.stack_lse = true;
  }
  return m;
}

// A contiguous stack [2, num_tokens, num_heads, head_size] of the two partial outputs.
inline void set_stacked_out(MergeAttentionStatesParams& p, const void* stacked) {
  p.partial_out = stacked;
  p.po_stride_head = p.head_size;
  p.po_stride_token = int64_t(p.num_heads) * p.head_size;
  p.po_stride_rank = int64_t(p.num_tokens) * p.num_heads * p.head_size;
}
// A contiguous stack [2, num_heads, num_tokens] of the two partial LSEs.
inline void set_stacked_lse(MergeAttentionStatesParams& p, const float* stacked) {
  p.partial_lse = stacked;
  p.plse_stride_token = 1;
  p.plse_stride_head = p.num_tokens;
  p.plse_stride_rank = int64_t(p.num_heads) * p.num_tokens;
}

// ================================ dense prefill ================================
// flash_attn_varlen_func's arguments (out-variant, LSE into a given tensor) over hipattn's dense
// prefill: packed varlen q / k / v.
struct DensePrefillArgs {
  View q;  // [total_q, num_q_heads, head_size_qk]
  View k;  // [total_k, num_kv_heads, head_size_qk]
  View v;  // [total_k, num_kv_heads, head_size_v]
  View out;  // [total_q, num_q_heads, head_size_v]
  View cu_seqlens_q, cu_seqlens_k;  // int32 [num_seqs + 1]
  int64_t max_seqlen_q = 0, max_seqlen_k = 0;
  double softmax_scale = 0.0;
  bool causal = false;
  std::vector<int64_t> window_size{-1, -1};
  double softcap = 0.0;
  View alibi_slopes;  // not served: must be absent
  View softmax_lse;   // float32 [num_q_heads, >= total_q], optional
};

inline DensePrefillParams dense_prefill_params(const DensePrefillArgs& a) {
  Checker c;
  DensePrefillParams p;
  c.tensor(a.q, "q", 3, "[total_q, num_q_heads, head_size]");
  p.dtype = dtype_in(c, a.q, "q", {Elem::f16, Elem::bf16});
  c.tensor(a.k, "k", 3, "[total_k, num_kv_heads, head_size]");
  c.tensor(a.v, "v", 3, "[total_k, num_kv_heads, head_size_v]");
  c.tensor(a.out, "out", 3, "[total_q, num_q_heads, head_size_v]");
  for (const auto& [t, f] : {std::pair{&a.k, "k"}, std::pair{&a.v, "v"}, std::pair{&a.out, "out"}})
    if (t->elem != a.q.elem)
      fail(f, std::string(f) + " has dtype " + elem_name(t->elem) + ", q " + elem_name(a.q.elem) + ": they must match");
  c.dim_is(a.k, "k", 2, a.q.size[2], "head_size of q");
  c.dim_is(a.v, "v", 0, a.k.size[0], "total_k of k");
  c.dim_is(a.v, "v", 1, a.k.size[1], "num_kv_heads of k");
  c.dim_is(a.out, "out", 0, a.q.size[0], "total_q of q");
  c.dim_is(a.out, "out", 1, a.q.size[1], "num_q_heads of q");
  c.dim_is(a.out, "out", 2, a.v.size[2], "head_size_v of v");
  for (const auto& [t, f] : {std::pair{&a.q, "q"}, std::pair{&a.k, "k"}, std::pair{&a.v, "v"}, std::pair{&a.out, "out"}})
    c.inner_contiguous(*t, f);
  p.q = a.q.data, p.q_stride_token = a.q.stride[0], p.q_stride_head = a.q.stride[1];
  p.k = a.k.data, p.k_stride_token = a.k.stride[0], p.k_stride_head = a.k.stride[1];
  p.v = a.v.data, p.v_stride_token = a.v.stride[0], p.v_stride_head = a.v.stride[1];
  p.out = const_cast<void*>(a.out.data), p.o_stride_token = a.out.stride[0], p.o_stride_head = a.out.stride[1];
  p.num_tokens_q = i32("q.size(0)", a.q.size[0]);
  p.num_tokens_k = i32("k.size(0)", a.k.size[0]);
  p.num_q_heads = i32("q.size(1)", a.q.size[1]);
  p.num_kv_heads = i32("k.size(1)", a.k.size[1]);
  p.head_size_qk = i32("q.size(2)", a.q.size[2]);
  p.head_size_v = i32("v.size(2)", a.v.size[2]);

  c.tensor(a.cu_seqlens_q, "cu_seqlens_q", 1, "[num_seqs + 1]");
  if (a.cu_seqlens_q.size[0] < 1) fail("cu_seqlens_q", "cu_seqlens_q has shape " + a.cu_seqlens_q.shape() + ": at least one entry");
  p.num_seqs = i32("cu_seqlens_q.size(0) - 1", a.cu_seqlens_q.size[0] - 1);
  c.array(a.cu_seqlens_q, "cu_seqlens_q", Elem::i32, int64_t(p.num_seqs) + 1, "num_seqs + 1");
  c.array(a.cu_seqlens_k, "cu_seqlens_k", Elem::i32, int64_t(p.num_seqs) + 1, "num_seqs + 1 (as cu_seqlens_q)");
  p.cu_seqlens_q = static_cast<const int32_t*>(a.cu_seqlens_q.data);
  p.cu_seqlens_k = static_cast<const int32_t*>(a.cu_seqlens_k.data);
  p.max_seqlen_q = i32("max_seqlen_q", a.max_seqlen_q);
  p.max_seqlen_k = i32("max_seqlen_k", a.max_seqlen_k);

  p.scale = finite_float("softmax_scale", a.softmax_scale);
  p.causal = a.causal;
  p.window_left = window_left_of(a.window_size, a.causal);
  p.softcap = finite_float("softcap", a.softcap);
  if (a.alibi_slopes.defined)
    fail("alibi_slopes", "alibi_slopes (shape " + a.alibi_slopes.shape() +
                             ") is not served by hipattn's dense prefill: use unified_attention for ALiBi",
         ErrorCode::unsupported);
  if (c.optional(a.softmax_lse, "softmax_lse", 2, "[num_q_heads, >= total_q]")) {
    c.elem_in(a.softmax_lse, "softmax_lse", {Elem::f32});
    c.dim_is(a.softmax_lse, "softmax_lse", 0, p.num_q_heads, "num_q_heads");
    if (a.softmax_lse.size[1] < p.num_tokens_q)
      fail("softmax_lse", "softmax_lse has shape " + a.softmax_lse.shape() + ": fewer columns than total_q (" +
                              std::to_string(p.num_tokens_q) + ")");
    c.inner_contiguous(a.softmax_lse, "softmax_lse");
    p.lse = static_cast<float*>(const_cast<void*>(a.softmax_lse.data));
    p.lse_stride_head = a.softmax_lse.stride[0];
  }
  throw_if_error(validate(p));
  return p;
}

}  // namespace hipattn::torch_ops
