// hipattn/dispatch/mla_decode_launch.hpp: what an MLA decode launch is made of, for every backend
// (host-only builds included): the arguments of sm_90's kernel and of the CDNA skeleton's, of the
// device planner and of the reduce (paged decode's, over the same slot workspace) for a plan
// (dispatch/mla_decode_plan.hpp). dispatch/mla_decode.hpp launches exactly these; the emulated AMD
// tests build the same on the host.
#pragma once
#include <algorithm>
#include <cstdint>

#include "hipattn/dispatch/mla_decode_plan.hpp"
#include "hipattn/dispatch/output_args.hpp"
#include "hipattn/dispatch/skeleton_args.hpp"
#include "hipattn/dispatch/workspace.hpp"
#include "hipattn/kernels/mla_decode/config.hpp"
#include "hipattn/kernels/paged_decode/config.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/tile/online_softmax.hpp"

namespace hipattn {

// The output of `p` in its format (problem/fp8_io.hpp), as both the kernel (sequences in one task) and
// the reduce (split sequences, after the merge) write it.
inline OutputArgs mla_decode_output_args(const MlaDecodeParams& p) {
  return make_output_args(p.out, p.o_stride_token, p.o_stride_head, p.q_dtype, p.out_format, kMlaLatentDim);
}

// The rope part of the queries: q_rope by its strides, or (joined) the 512th element of q's rows by
// q's strides (fp8 queries: the 512th code). Both kernels' argument builders take it.
struct MlaRopeView {
  const uint16_t* ptr;
  int64_t stride_token, stride_head;
};
inline MlaRopeView mla_rope_view(const MlaDecodeParams& p) {
  if (p.q_rope != nullptr) return {static_cast<const uint16_t*>(p.q_rope), p.q_rope_stride_token, p.q_rope_stride_head};
  const auto* q8 = static_cast<const uint8_t*>(p.q);
  return {reinterpret_cast<const uint16_t*>(q8 + kMlaLatentDim * int64_t(dtype_size(p.q_dtype))), p.q_stride_token,
          p.q_stride_head};
}

// The kernel's arguments for `p` under `plan` (workspace: the plan's, or null for one partition).
inline MlaDecodeKernelArgs make_mla_decode_kernel_args(const MlaDecodeParams& p, const MlaDecodePlan& plan,
                                                       void* workspace) {
  MlaDecodeKernelArgs a;
  a.q_kind = kv_kind_of(p.q_dtype);
  if (is_fp8(p.q_dtype)) {
    a.q_scale = p.q_scale.device;
    a.q_scale_value = p.q_scale.host_or_one();
  }
  a.q = static_cast<const uint16_t*>(p.q);
  a.q_stride_token = p.q_stride_token;
  a.q_stride_head = p.q_stride_head;
  const MlaRopeView rope = mla_rope_view(p);
  a.q_rope = rope.ptr;
  a.q_rope_stride_token = rope.stride_token;
  a.q_rope_stride_head = rope.stride_head;
  const int64_t esize = static_cast<int64_t>(dtype_size(p.kv_dtype));
  a.kv = static_cast<const uint8_t*>(p.kv_cache);
  a.kv_stride_page_bytes = p.kv_stride_page * esize;
  a.kv_stride_slot_bytes = p.kv_stride_slot * esize;
  a.page_div = FastDivmod(static_cast<uint32_t>(std::max(1, p.page_size)));
  a.kv_scale = p.kv_scale;
  a.kv_scale_value = p.kv_scale_value_or_one();
  a.block_table = p.block_table;
  a.block_table_stride = p.block_table_stride;
  a.seq_lens_k = p.seq_lens_k;
  a.batch = p.batch;
  a.q_len = p.q_len;
  a.num_heads = p.num_heads;
  a.rows = p.q_len * p.num_heads;
  a.row_blocks = plan.row_blocks;
  a.heads_div = FastDivmod(static_cast<uint32_t>(std::max(1, p.num_heads)));
  a.scale_log2 = p.scale * static_cast<float>(kLog2e);
  a.out = mla_decode_output_args(p);
  a.lse = p.lse;
  a.lse_stride_token = p.lse_stride_token;
  a.lse_stride_head = p.lse_stride_head;
  if (plan.split == SlotSplit::planned) {
    const SlotBuffers b = slot_buffers(mla_decode_workspace(plan.capacity, p.batch, p.q_len, p.num_heads), workspace);
    a.tasks = b.tasks;
    a.item_task0 = b.item_task0;
    a.ws_o = b.o;
    a.ws_lse = b.lse;
  }
  return a;
}

// The device planner's arguments (planned calls).
inline DecodePlanArgs make_mla_decode_plan_args(const MlaDecodeParams& p, const MlaDecodePlan& plan, void* workspace) {
  const SlotBuffers b = slot_buffers(mla_decode_workspace(plan.capacity, p.batch, p.q_len, p.num_heads), workspace);
  DecodePlanArgs a;
  a.seq_lens_k = p.seq_lens_k;
  a.num_items = p.batch;
  a.shape = DecodeItemShape{p.q_len, plan.tile_keys, true, -1};
  a.capacity = plan.capacity;
  a.fixed_tiles = 0;
  a.tasks = b.tasks;
  a.item_task0 = b.item_task0;
  a.status = b.status;
  return a;
}

// The reduce's arguments (planned calls): paged decode's reduce over the same slot layout.
inline PagedDecodeReduceArgs make_mla_decode_reduce_args(const MlaDecodeParams& p, const MlaDecodePlan& plan,
                                                         void* workspace) {
  const SlotBuffers b = slot_buffers(mla_decode_workspace(plan.capacity, p.batch, p.q_len, p.num_heads), workspace);
  PagedDecodeReduceArgs r;
  r.ws_o = b.o;
  r.ws_lse = b.lse;
  r.tasks = b.tasks;
  r.item_task0 = b.item_task0;
  r.num_segments = 1;
  r.num_seqs = p.batch;
  r.q_len = p.q_len;
  r.num_q_heads = p.num_heads;
  r.sinks = nullptr;
  r.out = mla_decode_output_args(p);
  r.lse = p.lse;
  r.lse_stride_head = static_cast<int32_t>(p.lse_stride_head);
  r.lse_stride_token = static_cast<int32_t>(p.lse_stride_token);
  return r;
}

// The CDNA kernel's arguments (MlaDecodeCdnaConfig: the skeleton's, as paged decode fills them, over a
// view of the latent cache as one KV head whose V rows are its K rows). Strides are validated < 2^31.
template <class Cfg>
mla_cdna_args_t<Cfg> make_mla_decode_cdna_args(const MlaDecodeParams& p, const MlaDecodePlan& plan, void* workspace) {
  static_assert(is_cdna(Cfg::kTarget), "a CDNA configuration");
  mla_cdna_args_t<Cfg> a;
  a.q_kind = kv_kind_of(p.q_dtype);  // fp8 queries: converted exactly as Q loads
  if (is_fp8(p.q_dtype)) {
    a.q_scale_tensor = p.q_scale.device;
    a.q_scale_value = p.q_scale.host_or_one();
  }
  a.q = static_cast<const uint16_t*>(p.q);
  a.q_stride_token = static_cast<int32_t>(p.q_stride_token);
  a.q_stride_head = static_cast<int32_t>(p.q_stride_head);
  const MlaRopeView rope = mla_rope_view(p);
  a.q_rope = rope.ptr;
  a.q_rope_stride_token = static_cast<int32_t>(rope.stride_token);
  a.q_rope_stride_head = static_cast<int32_t>(rope.stride_head);
  a.kv.k = a.kv.v = p.kv_cache;
  a.kv.k_stride_block = a.kv.v_stride_block = static_cast<int32_t>(p.kv_stride_page);
  a.kv.k_stride_slot = a.kv.v_stride_slot = static_cast<int32_t>(p.kv_stride_slot);
  a.kv.block_table = p.block_table;
  a.kv.block_table_stride = static_cast<int32_t>(p.block_table_stride);
  a.kv.page_size = p.page_size;
  a.kv.page_div = FastDivmod(static_cast<uint32_t>(std::max(1, p.page_size)));
  if (is_fp8(p.kv_dtype)) {  // one per-tensor scale: K's (the scores) and V's (the output)
    a.k_scale_tensor = a.v_scale_tensor = p.kv_scale;
    a.k_scale_value = a.v_scale_value = p.kv_scale_value_or_one();
  }
  a.seq_lens_k = p.seq_lens_k;
  a.num_seqs = p.batch;
  a.num_q_heads = p.num_heads;
  a.group = p.num_heads;  // one KV head
  a.rows_per_token = plan.rows_per_token;
  a.block_q = plan.block_q;
  a.head_chunks = plan.head_chunks;
  a.rows_div = FastDivmod(static_cast<uint32_t>(plan.rows_per_token));
  a.scale = p.scale;
  a.causal = true;  // the q_len rows of a sequence, bottom-right
  a.window_left = -1;
  a.out = mla_decode_output_args(p);
  a.lse = p.lse;
  a.lse_stride_head = static_cast<int32_t>(p.lse_stride_head);
  a.lse_stride_token = static_cast<int32_t>(p.lse_stride_token);
  a.q_len = p.q_len;
  a.q_blocks = plan.q_blocks;
  a.grid_y_div = FastDivmod(static_cast<uint32_t>(plan.row_blocks));
  a.num_segments = 1;
  if (plan.split == SlotSplit::planned) {
    const SlotBuffers b = slot_buffers(mla_decode_workspace(plan.capacity, p.batch, p.q_len, p.num_heads), workspace);
    a.tasks = b.tasks;
    a.ws_o = b.o;
    a.ws_lse = b.lse;
  }
  return a;
}

}  // namespace hipattn
