// The dynamic shared-memory limit of a kernel (rt::ensure_max_dynamic_shared, issue 8). When the
// runtime refuses it on the first use of a kernel (out of memory while a head-256 prefill kernel loads,
// in the report), unified_attention throws Error{runtime, "device"} naming the kernel and the bytes,
// launches nothing and leaves no error in the runtime's last-error state; the failure is not
// remembered, so the next call sets the limit, launches and is correct. Skips itself without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "../common/attribute_failure.hpp"
#include "../common/compare.hpp"
#include "../common/gpu.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/dispatch/unified_attention.hpp"
#include "hipattn/reference/reference.hpp"

namespace hipattn::testing {
namespace {

// Head size 256, prefill rows (rows_needed > 16: the prefill tile, the largest shared-memory user).
ProblemSpec head256_prefill() {
  ProblemSpec s;
  s.num_q_heads = 8;
  s.num_kv_heads = 2;
  s.head_size = 256;
  s.block_size = 16;
  s.seqs = {{70, 70}, {33, 260}, {1, 45}};
  s.sinks = true;
  return s;
}

TEST(KernelAttributes, FailedFirstSetThrowsTypedAndDoesNotPoisonLaterLaunches) {
  REQUIRE_GPU();
  HostProblem h(head256_prefill());
  const reference::AttentionResult ref = reference::unified_attention(h.host_params());
  DeviceProblem dp(h);
  const UnifiedAttentionParams p = dp.params();
  ASSERT_EQ(plan_unified_attention(p, {}, plan_device(rt::cached_device_properties())).tile_kind,
            UnifiedTileKind::prefill);

  for (UnifiedPath path : {UnifiedPath::two_d, UnifiedPath::three_d}) {
    const bool split = path == UnifiedPath::three_d;
    SCOPED_TRACE(split ? "3d" : "2d");
    UnifiedOptions opt;
    opt.path = path;
    const size_t ws_bytes = unified_attention_workspace_size(p, opt);
    DeviceBuffer ws(ws_bytes);

    // The first attribute set fails: a typed error, nothing launched.
    HIPATTN_CHECK(rt::device_synchronize());
    ASSERT_EQ(rt::get_last_error(), rt::success);
    rt::testing::fail_next_attribute_set();
    bool threw = false;
    try {
      prebuilt::unified_attention(p, ws.ptr, ws_bytes, nullptr, opt);
    } catch (const Error& e) {
      threw = true;
      EXPECT_EQ(e.code(), ErrorCode::runtime) << e.what();
      EXPECT_EQ(e.field(), "device") << e.what();
      const std::string what = e.what();
      // the 2D grid of 16-bit prefill q-blocks runs on sm_90's warpgroup pipeline (its own kernel)
      const bool wg = plan_unified_attention(p, opt, plan_device(rt::cached_device_properties())).pipeline ==
                       PlanPipeline::warpgroup;
      EXPECT_NE(what.find(split ? "split_kv_3d_kernel" : wg ? "unified_warpgroup_kernel" : "unified_2d_kernel"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("D=256"), std::string::npos) << what;
      EXPECT_NE(what.find(" bytes"), std::string::npos) << what;
    }
    ASSERT_TRUE(threw) << "unified_attention launched although the attribute set failed";
    // The runtime's error was consumed: it must not surface at a later launch check.
    EXPECT_EQ(rt::get_last_error(), rt::success);
    HIPATTN_CHECK(rt::device_synchronize());

    // The next calls set the limit (asked again), launch and match the reference; the second one
    // finds the limit in the record.
    for (int call = 0; call < 2; ++call) {
      SCOPED_TRACE("call " + std::to_string(call + 1) + " after the failure");
      const CompareStats st = run_and_compare(h, dp, ref, path);
      EXPECT_EQ(st.bad, 0) << st.bad << " of " << st.checked << " elements out of tolerance; first: " << st.first_bad;
    }
  }
}

// Other kernels are not affected by one kernel's failure: a head-64 problem runs between the failure
// and the retry of the head-256 kernel.
TEST(KernelAttributes, FailureOfOneKernelLeavesOthersRunning) {
  REQUIRE_GPU();
  HostProblem big(head256_prefill());
  const reference::AttentionResult big_ref = reference::unified_attention(big.host_params());
  DeviceProblem big_dp(big);
  ProblemSpec s = head256_prefill();
  s.head_size = 64;
  HostProblem small(s);
  const reference::AttentionResult small_ref = reference::unified_attention(small.host_params());
  DeviceProblem small_dp(small);

  UnifiedOptions opt;
  opt.path = UnifiedPath::two_d;
  rt::testing::fail_next_attribute_set();
  EXPECT_THROW(prebuilt::unified_attention(big_dp.params(), nullptr, 0, nullptr, opt), Error);
  EXPECT_EQ(rt::get_last_error(), rt::success);
  CompareStats st = run_and_compare(small, small_dp, small_ref, UnifiedPath::two_d);
  EXPECT_EQ(st.bad, 0) << "head 64: " << st.first_bad;
  st = run_and_compare(big, big_dp, big_ref, UnifiedPath::two_d);
  EXPECT_EQ(st.bad, 0) << "head 256: " << st.first_bad;
}

}  // namespace
}  // namespace hipattn::testing
