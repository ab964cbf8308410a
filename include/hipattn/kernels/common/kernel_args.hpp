// hipattn/kernels/common/kernel_args.hpp: the runtime arguments every attention family's kernel
// skeleton (kernels/common/attention_kernel.hpp) reads: queries, the paged KV view, the row map of a
// workgroup tile (q tokens x GQA heads), the logits, the outputs and the split-KV workspace. A
// family's argument struct derives from it and adds how its work is found (unified: cu_seqlens_q and
// the uniform segments; paged decode: one q length for every sequence).
#pragma once
#include <cstdint>

#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/kernels/common/output_store.hpp"
#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/numeric/fast_div.hpp"

namespace hipattn {

// KvParams: the loader's parameters (PagedKvView for the paged loaders); Variant: the logit variant,
// a value that carries its own data. A family's arguments may restate the hooks the shared parts read
// (query_element, kPartialRowsByToken) where its layout differs.
template <class KvParams, class Variant>
struct AttentionKernelArgs {
  const uint16_t* q = nullptr;  // [tokens, num_q_heads, d_qk], 16-bit (or fp8 codes, q_fp8)
  int32_t q_stride_token = 0, q_stride_head = 0;  // strides < 2^31 (validated); offsets in 64 bits
  // fp8 queries: the codes' format (KvKind::same16: 16-bit queries), converted exactly to the
  // instance's 16-bit type as Q is loaded; their per-tensor scale joins the score scale.
  KvKind q_kind = KvKind::same16;
  const float* q_scale_tensor = nullptr;
  float q_scale_value = 1.f;
  // The fp8 matrix path (Cfg::kQ8): P V by the e4m3 MMA with P quantized (Fp8Math::fp8_pv) where the
  // tile allows it (Cfg::kP8) and no per-(token, head) V scale rides on P; else P in f16.
  bool p8 = false;
  KvParams kv;
  bool per_token_head_scale = false;
  const int32_t* seq_lens_k = nullptr;
  int32_t num_seqs = 0, num_q_heads = 0;
  int32_t group = 1;          // q heads per kv head
  int32_t rows_per_token = 1; // min(group, BM): q heads of one token packed in a workgroup
  int32_t block_q = 1;        // tokens per q-block = BM / rows_per_token
  int32_t head_chunks = 1;    // ceil(group / rows_per_token)
  FastDivmod rows_div;        // division by rows_per_token
  float scale = 1.f;                      // softmax scale (natural units)
  // Per-tensor fp8 scales: device scalars (read in the kernel, so a call never synchronizes with the
  // host), or, when null, the host values that travel here (1 without fp8).
  const float* k_scale_tensor = nullptr;
  const float* v_scale_tensor = nullptr;
  float k_scale_value = 1.f, v_scale_value = 1.f;
  bool causal = true;
  int32_t window_left = -1;
  Variant variant;
  const float* sinks = nullptr;  // [num_q_heads] natural units
  OutputArgs out;                // [tokens, num_q_heads, d_v] in its format (kernels/common/output_store.hpp)
  float* lse = nullptr;  // [num_q_heads, lse_stride_head] (tokens lse_stride_token apart: 1, MLA's [tokens, heads] more)
  int32_t lse_stride_head = 0, lse_stride_token = 1;
  // split-KV partial states (fp32 O, LSE in log2 units), laid out by the family
  float* ws_o = nullptr;
  float* ws_lse = nullptr;
  // planned split-KV (kernels/common/task_plan.hpp): grid slot x walks tasks[x]; a task of a
  // one-part item writes the output directly, the others a partial state at [slot, q rows of the
  // item, num_q_heads, d_v] / [slot, q rows, num_q_heads]. Null: the family's unplanned work.
  const PlanTask* tasks = nullptr;

  // Hook of the Q loaders (kernels/common/loaders/query_load.hpp): element `col` of the query of
  // (token, q_head), in elements of T (16-bit values, or the codes of fp8 queries, whose strides count
  // codes).
  template <class T>
  HIPATTN_HOST_DEVICE HIPATTN_FORCEINLINE const T* query_element(int32_t token, int32_t q_head, int col) const {
    return reinterpret_cast<const T*>(q) + static_cast<int64_t>(token) * q_stride_token +
           static_cast<int64_t>(q_head) * q_stride_head + col;
  }
  // Hook of PartialStore (kernels/common/epilogue.hpp): the rows of unplanned segments' partial states
  // are [segment, token, q head] (num_tokens of them), else a slot's [slot, row of its item, q head].
  static constexpr bool kPartialRowsByToken = false;
};

}  // namespace hipattn
