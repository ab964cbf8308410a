// The instance filter of the header-only entry points (problem/instances.hpp, dispatch/registry.hpp), on the GPU.
// This executable does not link the instance library: what it launches is compiled here, only the
// instances kOne admits (one q dtype x two KV kinds x one head size), for the standard entry point
// and for a caller's variant. Calls outside the filter must throw Error(unsupported, "instance")
// naming what was built. Every test skips itself, saying so, when no GPU is present.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../common/compare.hpp"
#include "../common/gpu.hpp"
#include "hipattn/hipattn.hpp"
#include "hipattn/reference/reference.hpp"

namespace hipattn::testing {
namespace {

using F = InstanceFilter;
constexpr InstanceFilter kOne{.q_dtypes = F::q_bit(true),
                                     .kv_kinds = F::bit_of(KvKind::same16) | F::bit_of(KvKind::e4m3fn),
                                     .head_sizes = F::heads(128),
                                     .variants = F::bit_of(VariantKind::plain)};

// Softcap written as a caller's variant: the reference computes it from the spec's softcap.
struct Softcap : VariantBase {
  static constexpr bool kTransformsLogits = true;
  float cap = 0.f;
  template <class Math, class RowT>
  HIPATTN_HOST_DEVICE float logit(float s, const RowInfo&, const RowT&, int32_t, Math math) const {
    return cap * math.tanh(s / cap);
  }
};

ProblemSpec spec(bool bf16, DType kv, int d) {
  ProblemSpec s;
  s.bf16 = bf16;
  s.kv_dtype = kv == DType::f16 ? (bf16 ? DType::bf16 : DType::f16) : kv;
  s.scale_mode = kv == DType::fp8_e4m3fn     ? KvScaleMode::per_token_head
                 : kv == DType::fp8_e4m3fnuz ? KvScaleMode::per_tensor
                                             : KvScaleMode::none;
  s.num_q_heads = 8; s.num_kv_heads = 2; s.head_size = d; s.block_size = 16;
  s.seqs = {{1, 300}, {17, 90}, {1, 33}};
  s.seed = 4242;
  return s;
}

void expect_close(const CompareStats& st, const std::string& what) {
  EXPECT_EQ(st.bad, 0) << what << ": " << st.bad << " of " << st.checked << " out of tolerance; first " << st.first_bad;
  EXPECT_GT(st.checked, 0) << what;
}

// The call throws Error(unsupported, "instance") whose message names the instance and the built set.
template <class Call>
void expect_not_built(Call&& call, const std::string& instance, const std::string& built) {
  try {
    call();
    ADD_FAILURE() << "no error for " << instance;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported) << e.what();
    EXPECT_EQ(e.field(), "instance") << e.what();
    const std::string msg = e.what();
    EXPECT_NE(msg.find(instance), std::string::npos) << msg;
    EXPECT_NE(msg.find(built), std::string::npos) << msg;
  }
}

TEST(InstanceFilter, StandardEntryRunsWhatTheFilterAdmits) {
  REQUIRE_GPU();
  for (DType kv : {DType::f16, DType::fp8_e4m3fn})
    for (UnifiedPath path : {UnifiedPath::two_d, UnifiedPath::three_d}) {
      HostProblem h(spec(true, kv, 128));
      const reference::AttentionResult ref = reference::unified_attention(h.host_params());
      DeviceProblem dp(h);
      UnifiedOptions opt;
      opt.path = path;
      const CompareStats st = launch_and_compare(h, dp, ref, opt, [](const UnifiedAttentionParams& p, void* ws,
                                                                     size_t bytes, const UnifiedOptions& o) {
        unified_attention<kOne>(p, ws, bytes, nullptr, o);
      });
      expect_close(st, std::string(kv == DType::f16 ? "bf16 kv" : "fp8 kv") +
                           (path == UnifiedPath::two_d ? " 2d" : " 3d"));
    }
}

TEST(InstanceFilter, StandardEntryRefusesWhatTheFilterExcludes) {
  REQUIRE_GPU();
  const std::string built = "q bf16; kv same16, e4m3fn; d 128; variants plain (2 instances)";
  auto run = [](ProblemSpec s) {
    return [s] {
      HostProblem h(s);
      DeviceProblem dp(h);
      const UnifiedAttentionParams p = dp.params();
      DeviceBuffer ws(unified_attention_workspace_size(p));
      unified_attention<kOne>(p, ws.ptr, ws.bytes, nullptr);
    };
  };
  expect_not_built(run(spec(false, DType::f16, 128)), "sm_90 f16 kv=same16 d=128 plain", built);
  expect_not_built(run(spec(true, DType::fp8_e4m3fnuz, 128)), "kv=e4m3fnuz", built);
  expect_not_built(run(spec(true, DType::f16, 64)), "d=64", built);
  ProblemSpec capped = spec(true, DType::f16, 128);
  capped.softcap = 20.f;  // needs the full variant
  expect_not_built(run(capped), "d=128 full", built);
}

TEST(InstanceFilter, CustomVariantEntryTakesTheFilter) {
  REQUIRE_GPU();
  ProblemSpec s = spec(true, DType::f16, 128);
  s.softcap = 12.f;  // the reference's softcap; the device params' softcap is not read by the custom entry
  HostProblem h(s);
  const reference::AttentionResult ref = reference::unified_attention(h.host_params());
  DeviceProblem dp(h);
  Softcap v;
  v.cap = s.softcap;
  const CompareStats st = launch_and_compare(
      h, dp, ref, UnifiedOptions{},
      [&](const UnifiedAttentionParams& p, void* ws, size_t bytes, const UnifiedOptions& o) {
        unified_attention<kOne>(p, v, ws, bytes, nullptr, o);
      });
  expect_close(st, "custom softcap variant");

  auto run_f16 = [&] {
    HostProblem h16(spec(false, DType::f16, 128));
    DeviceProblem dp16(h16);
    const UnifiedAttentionParams p = dp16.params();
    DeviceBuffer ws(unified_attention_workspace_size(p));
    unified_attention<kOne>(p, v, ws.ptr, ws.bytes, nullptr);
  };
  expect_not_built(run_f16, "sm_90 f16 kv=same16 d=128 custom", "variants custom (2 instances)");
}

}  // namespace
}  // namespace hipattn::testing
