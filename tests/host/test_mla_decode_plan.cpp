// The MLA decode plan (dispatch/mla_decode_plan.hpp): which calls are planned, how many task slots
// they get, that the workspace sized from traits covers every call within them; and the output
// arguments the kernel and the reduce take (dispatch/mla_decode_launch.hpp: the output format; each
// consumer's column window).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hipattn/dispatch/mla_decode.hpp"
#include "hipattn/kernels/common/output_store.hpp"

namespace hipattn {
namespace {

MlaDecodeParams problem(int batch, int q_len, int heads) {
  MlaDecodeParams p;
  p.batch = batch;
  p.q_len = q_len;
  p.num_heads = heads;
  return p;
}

TEST(MlaDecodePlan, RowBlocksAndTheSplitRule) {
  const PlanDevice h200{Target::sm90, 132};
  // 128 heads: two row blocks a sequence; batch 64 fills 128 of 132 SMs: one task a sequence
  MlaDecodePlan a = plan_mla_decode(problem(64, 1, 128), {}, h200);
  EXPECT_EQ(a.row_blocks, 2);
  EXPECT_FALSE(a.split == SlotSplit::planned);
  EXPECT_EQ(a.capacity, 64);
  EXPECT_EQ(a.workspace_bytes, 0u);
  // 16 heads, batch 64: one row block, 64 < 0.75 x 132 workgroups: planned over one wave of slots
  MlaDecodePlan b = plan_mla_decode(problem(64, 1, 16), {}, h200);
  EXPECT_EQ(b.row_blocks, 1);
  EXPECT_TRUE(b.split == SlotSplit::planned);
  EXPECT_EQ(b.capacity, 132);
  EXPECT_GT(b.workspace_bytes, 0u);
  // MTP 8 x 128 heads: 16 row blocks a sequence
  EXPECT_EQ(plan_mla_decode(problem(4, 8, 128), {}, h200).row_blocks, 16);
  // forced modes
  MlaDecodeOptions one;
  one.split = MlaDecodeSplit::one_partition;
  EXPECT_FALSE(plan_mla_decode(problem(1, 1, 16), one, h200).split == SlotSplit::planned);
  MlaDecodeOptions planned;
  planned.split = MlaDecodeSplit::planned;
  MlaDecodePlan c = plan_mla_decode(problem(300, 1, 16), planned, h200);
  EXPECT_TRUE(c.split == SlotSplit::planned);
  EXPECT_EQ(c.capacity % 132, 0);
  EXPECT_GE(c.capacity, 300);
}

TEST(MlaDecodePlan, TraitsWorkspaceCoversEveryCallWithin) {
  const PlanDevice h200{Target::sm90, 132};
  MlaDecodeTraits t;
  t.max_batch = 256;
  t.max_q_len = 4;
  t.num_heads = 64;
  t.max_seqlen_k = 1 << 17;
  for (MlaDecodeSplit sp : {MlaDecodeSplit::automatic, MlaDecodeSplit::planned}) {
    MlaDecodeOptions opt;
    opt.split = sp;
    const size_t bound = mla_decode_workspace_size(t, h200, opt);
    for (int batch : {1, 2, 17, 64, 131, 132, 133, 256})
      for (int q_len : {1, 2, 3, 4}) {
        const MlaDecodePlan p = plan_mla_decode(problem(batch, q_len, 64), opt, h200);
        EXPECT_LE(p.workspace_bytes, bound) << batch << " x " << q_len;
      }
  }
}

TEST(MlaDecodePlan, TargetsWithoutAKernelAreRefused) {
  for (Target t : {Target::host, Target::other}) {
    try {
      (void)plan_mla_decode(problem(1, 1, 16), {}, PlanDevice{t, 304});
      ADD_FAILURE() << "planned for " << target_name(t);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::unsupported);
      EXPECT_EQ(e.field(), "target");
    }
  }
  MlaDecodeOptions bad;
  bad.workgroup_budget = -1;
  try {
    (void)plan_mla_decode(problem(1, 1, 16), bad, PlanDevice{Target::sm90, 132});
    ADD_FAILURE() << "negative budget accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "options.workgroup_budget");
  }
}

// The CDNA kernels' row blocks (MlaDecodeCdnaConfig over the skeleton's row map): min(heads, rows)
// heads of a token, then tokens; head chunks when the heads exceed the tile's rows (gfx942: 32 rows
// and 16-key tiles, gfx950: 64 rows and 32-key tiles); the split rule of sm_90 over the CUs.
TEST(MlaDecodePlan, CdnaRowMap) {
  const PlanDevice mi300{Target::gfx942, 304}, mi355{Target::gfx950, 256};
  struct Row {
    PlanDevice dev;
    int q_len, heads;
    int rows_per_token, block_q, head_chunks, q_blocks, tile_keys;
  };
  const Row rows[] = {
      {mi300, 1, 16, 16, 2, 1, 1, 16},  {mi300, 2, 16, 16, 2, 1, 1, 16},  {mi300, 3, 16, 16, 2, 1, 2, 16},
      {mi300, 1, 128, 32, 1, 4, 1, 16}, {mi300, 8, 128, 32, 1, 4, 8, 16}, {mi300, 1, 20, 20, 1, 1, 1, 16},
      {mi355, 1, 16, 16, 4, 1, 1, 32},  {mi355, 8, 16, 16, 4, 1, 2, 32},  {mi355, 4, 128, 64, 1, 2, 4, 32},
      {mi355, 1, 48, 48, 1, 1, 1, 32},
  };
  for (const Row& r : rows) {
    const MlaDecodePlan p = plan_mla_decode(problem(8, r.q_len, r.heads), {}, r.dev);
    SCOPED_TRACE(std::string(target_name(r.dev.target)) + " q_len " + std::to_string(r.q_len) + " heads " +
                 std::to_string(r.heads));
    EXPECT_EQ(p.rows_per_token, r.rows_per_token);
    EXPECT_EQ(p.block_q, r.block_q);
    EXPECT_EQ(p.head_chunks, r.head_chunks);
    EXPECT_EQ(p.q_blocks, r.q_blocks);
    EXPECT_EQ(p.row_blocks, r.head_chunks * r.q_blocks);
    EXPECT_EQ(p.tile_keys, r.tile_keys);
    EXPECT_EQ(mla_decode_tile(r.dev.target).keys, r.tile_keys);
  }
  // batch 8 x 1 row block < 0.75 x 304 CUs: planned over one wave of slots
  const MlaDecodePlan a = plan_mla_decode(problem(8, 1, 16), {}, mi300);
  EXPECT_TRUE(a.split == SlotSplit::planned);
  EXPECT_EQ(a.capacity, 304);
  // batch 64 x 4 head chunks = 256 >= 0.75 x 304: one task a sequence
  EXPECT_FALSE(plan_mla_decode(problem(64, 1, 128), {}, mi300).split == SlotSplit::planned);
}

// Which calls take the CDNA fp8 matrix path (mla_decode_cdna_q8: QK^T by the target's fp8 MFMA over
// the cache format it reads), and that sm_90 converts every fp8 query (its products are wgmma's 16-bit).
TEST(MlaDecodePlan, Fp8MatrixPathOnCdna) {
  const DType fn = DType::fp8_e4m3fn, fnuz = DType::fp8_e4m3fnuz, bf16 = DType::bf16;
  struct Row {
    DType q, kv;
    Target t;
    bool q8;
  };
  const Row rows[] = {
      {fn, fn, Target::gfx950, true},     {fnuz, fn, Target::gfx950, false}, {fn, fnuz, Target::gfx950, false},
      {fnuz, fnuz, Target::gfx950, false}, {fn, fnuz, Target::gfx942, true},  {fnuz, fnuz, Target::gfx942, true},
      {fn, fn, Target::gfx942, false},     {fnuz, fn, Target::gfx942, false}, {fn, fn, Target::sm90, false},
      {bf16, fn, Target::gfx950, false},   {bf16, fnuz, Target::gfx942, false}, {bf16, bf16, Target::gfx942, false},
  };
  for (const Row& r : rows)
    EXPECT_EQ(mla_decode_cdna_q8(r.q, r.kv, r.t), r.q8)
        << dtype_name(r.q) << " over " << dtype_name(r.kv) << " on " << target_name(r.t);
}

// The kernel's epilogue and the reduce write the same output (mla_decode_output_args: the format of
// out_format, strides in elements of the output dtype), and a consumer's window of columns [256, 512)
// (output_columns) starts 256 elements on, its group scales 256 / group_size groups on.
TEST(MlaDecodePlan, OutputArgsAndConsumerWindows) {
  alignas(16) static unsigned char out[64];
  alignas(16) static float scales[64];
  const PlanDevice h200{Target::sm90, 132};
  MlaDecodeParams p = problem(3, 2, 16);
  p.q_dtype = DType::bf16;
  p.out = out;
  p.o_stride_token = 16 * 528;
  p.o_stride_head = 528;
  MlaDecodeOptions planned;
  planned.split = MlaDecodeSplit::planned;
  const MlaDecodePlan plan = plan_mla_decode(p, planned, h200);
  struct Row {
    OutputFormat f;
    OutKind kind;
    int elem_bytes;
  };
  OutputFormat tensor8, group64, group128;
  tensor8.dtype = DType::fp8_e4m3fnuz;
  tensor8.scale.host = 0.125f;
  group64.dtype = group128.dtype = DType::fp8_e4m3fn;
  group64.group_size = 64;
  group128.group_size = 128;
  group64.group_scale = group128.group_scale = scales;
  group64.group_scale_stride_token = 16 * 8;  // row-major [tokens, heads * 8]
  group64.group_scale_stride_group = 1;
  group128.group_scale_stride_token = 1;  // column-major [heads * 4, tokens]
  group128.group_scale_stride_group = 6;
  group128.group_ue8m0 = true;
  for (const Row& row : {Row{OutputFormat{}, OutKind::bf16, 2}, Row{tensor8, OutKind::e4m3fnuz, 1},
                         Row{group64, OutKind::e4m3fn, 1}, Row{group128, OutKind::e4m3fn, 1}}) {
    p.out_format = row.f;
    const OutputArgs k = make_mla_decode_kernel_args(p, plan, nullptr).out;
    const OutputArgs r = make_mla_decode_reduce_args(p, plan, nullptr).out;
    EXPECT_EQ(k.kind, row.kind);
    EXPECT_EQ(r.kind, row.kind);
    EXPECT_EQ(k.ptr, r.ptr);
    EXPECT_EQ(k.stride_token, 16 * 528);
    EXPECT_EQ(k.stride_head, 528);
    EXPECT_EQ(k.group_shift, r.group_shift);
    EXPECT_EQ(k.group_scale, r.group_scale);
    EXPECT_EQ(k.scale_value, r.scale_value);
    const OutputArgs w = output_columns(k, 256);
    EXPECT_EQ(static_cast<unsigned char*>(w.ptr), out + 256 * row.elem_bytes);
    EXPECT_EQ(w.stride_token, k.stride_token);
    EXPECT_EQ(w.groups_per_head, k.groups_per_head);
    if (row.f.group_size > 0) {
      EXPECT_EQ(k.group_shift, row.f.group_size == 64 ? 6 : 7);
      EXPECT_EQ(k.groups_per_head, 512 / row.f.group_size);
      EXPECT_EQ(w.group_scale, scales + (256 / row.f.group_size) * row.f.group_scale_stride_group);
    } else {
      EXPECT_EQ(k.group_shift, -1);
      EXPECT_EQ(w.group_scale, k.group_scale);
    }
  }
}

}  // namespace
}  // namespace hipattn
