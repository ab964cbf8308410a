// The MLA decode plan (dispatch/mla_decode.hpp, host part): which calls are planned, how many task
// slots they get, and that the workspace sized from traits covers every call within them.
#include <gtest/gtest.h>

#include "hipattn/dispatch/mla_decode.hpp"

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
  EXPECT_FALSE(a.planned);
  EXPECT_EQ(a.capacity, 64);
  EXPECT_EQ(a.workspace_bytes, 0u);
  // 16 heads, batch 64: one row block, 64 < 0.75 x 132 workgroups: planned over one wave of slots
  MlaDecodePlan b = plan_mla_decode(problem(64, 1, 16), {}, h200);
  EXPECT_EQ(b.row_blocks, 1);
  EXPECT_TRUE(b.planned);
  EXPECT_EQ(b.capacity, 132);
  EXPECT_GT(b.workspace_bytes, 0u);
  // MTP 8 x 128 heads: 16 row blocks a sequence
  EXPECT_EQ(plan_mla_decode(problem(4, 8, 128), {}, h200).row_blocks, 16);
  // forced modes
  MlaDecodeOptions one;
  one.split = MlaDecodeSplit::one_partition;
  EXPECT_FALSE(plan_mla_decode(problem(1, 1, 16), one, h200).planned);
  MlaDecodeOptions planned;
  planned.split = MlaDecodeSplit::planned;
  MlaDecodePlan c = plan_mla_decode(problem(300, 1, 16), planned, h200);
  EXPECT_TRUE(c.planned);
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
  for (Target t : {Target::gfx942, Target::gfx950}) {
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

}  // namespace
}  // namespace hipattn
