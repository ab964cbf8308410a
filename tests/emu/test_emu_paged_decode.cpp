// tests/emu/test_emu_paged_decode.cpp: the paged-decode kernels of gfx942 and gfx950 (issue 10),
// executed on the emulator (emu.hpp) and compared with the float64 reference.
//
// The kernels come from the paged-decode dispatch table's code object (tests/isa/paged_decode_all.hip:
// paged_decode<kAllUnifiedInstances>, with the device planner and the reduces). Each case plans like
// the dispatcher (plan_paged_decode with the target's CU count), picks the very configuration it
// would launch (visit_paged_decode_config), builds the arguments and grids with the dispatcher's own
// builders (dispatch/paged_decode_launch.hpp), and runs what paged_decode() runs: one partition (the
// kernel alone), uniform segments (the kernel, then the reduce), or planned (plan_decode_tasks_kernel,
// then the kernel over its tasks, then the reduce; min-max and batch-invariant bounds); the device
// plan must equal the host plan of the same lengths. Problems are tiny (the
// emulator runs some tens of millions of instructions a second) but reach: q_len 1, 2, 4 and 8; the
// decode tile (q_len x group <= 16 rows, 16 exactly at 4 x 4 and 8 x 2), the verify tile (17-32 rows
// up to d 128: 4 x 8 at d 64 and 128, staged and LDS-DMA) and the prefill tile (4 x 8 at d 192, 8 x 8
// in two q-blocks, 2 x 64 in two head chunks); 16-bit and fp8 KV (the target's fp8: e4m3fnuz
// on gfx942, e4m3fn on gfx950; once the other format) with
// per-tensor scales (pointers and host floats) and per-(token, head) scales; contexts of 0 keys and
// shorter than q_len (rows with no key: zeros, LSE -inf, or the sink's share); NaN in every unowned
// cache slot, NaN / +Inf and poisoned padded block-table entries (tests/common/decode_problem.hpp);
// sinks, window, softcap, ALiBi, the HND layout, a padded LSE stride, a batch-invariant plan, the
// register-staged loader where gfx950 would use LDS DMA, the rocm cache layout (pages 8, 16 and 24,
// padded strides, both tiles, 16-bit and fp8); fp8 queries and fp8 outputs (problem/fp8_io.hpp, the
// io_* cases: both query formats over 16-bit and fp8 caches, a bf16 output of fp8 queries over an fp8
// cache, fp8 per tensor with saturation, per group with UE8M0 and with a group fp8 max of 224). Outputs, group
// scales and workspace are poisoned before every run. The reference: the unified float64 reference of
// to_unified_params(p, cu_seqlens_q) on host pointers. Tolerances are the device suites'.
//
// Code objects: $HIPATTN_EMU_PAGED_DECODE_GFX942 / $HIPATTN_EMU_PAGED_DECODE_GFX950 (each test skips,
// saying so, when its variable is unset).
// The emulated buffers, the run and the comparison are emu_paged_decode.hpp's (shared with tests/timing).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/decode_problem.hpp"
#include "emu.hpp"
#include "emu_dispatch.hpp"
#include "emu_paged_decode.hpp"
#include "hipattn/dispatch/paged_decode_launch.hpp"
#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/problem/paged_decode_rules.hpp"
#include "hipattn/reference/reference.hpp"

namespace hipattn::testing {
namespace {

// ---- the device and its code object ----

using namespace emu_dispatch;
using namespace emu_paged;
const EmuTarget kGfx942{emu::Gfx::gfx942, Target::gfx942, 304, DType::fp8_e4m3fnuz, "HIPATTN_EMU_PAGED_DECODE_GFX942"};
const EmuTarget kGfx950{emu::Gfx::gfx950, Target::gfx950, 256, DType::fp8_e4m3fn, "HIPATTN_EMU_PAGED_DECODE_GFX950"};

// The paged-decode table's code object of a target (null, with the reason, when the environment names none).
std::shared_ptr<const emu::CodeObject> paged_code_object(const EmuTarget& t, std::string& why) {
  return env_code_object(t, "hipattn_isa_paged_decode_all", why);
}

// ---- the cases ----

// the dispatcher's choice (automatic); one partition; the device planner's tasks (min-max, or
// batch-invariant at 32 keys: fixed); uniform segments (3 a sequence).
enum class Split { automatic, one_partition, planned, fixed, uniform };
const char* split_name(Split s) {
  return s == Split::automatic ? "auto" : s == Split::one_partition ? "1part" : s == Split::planned ? "planned"
         : s == Split::fixed   ? "fixed" : "uniform";
}
PagedDecodeOptions split_options(Split s) {
  PagedDecodeOptions opt;
  opt.split = s == Split::automatic       ? PagedDecodeSplit::automatic
              : s == Split::one_partition ? PagedDecodeSplit::one_partition
              : s == Split::uniform       ? PagedDecodeSplit::uniform
                                          : PagedDecodeSplit::planned;
  if (s == Split::fixed) opt.batch_invariant_keys = 32;
  if (s == Split::uniform) opt.num_segments = 3;
  return opt;
}

struct Case {
  const char* name;
  DecodeSpec spec;  // kv_dtype: f16 / bf16 follow spec.bf16; fp8 is replaced by the target's format
  std::vector<Split> splits = {Split::automatic, Split::one_partition, Split::planned, Split::uniform};
  bool other_fp8 = false;  // fp8: the format the target's MFMAs do not read (dequantized all the same)
  std::optional<CopyModel> kv_copy = std::nullopt;  // the plan's KV loader policy replaced
  IoSpec io = {};  // fp8 queries and the output format (problem/fp8_io.hpp); default: 16-bit
};

DecodeSpec decode_spec(bool bf16, bool fp8, int d, int q_heads, int kv_heads, int page, int q_len, std::vector<int> ctx,
                       uint64_t seed) {
  DecodeSpec s;
  s.bf16 = bf16;
  s.kv_dtype = fp8 ? DType::fp8_e4m3fn : (bf16 ? DType::bf16 : DType::f16);
  s.scale_mode = fp8 ? KvScaleMode::per_tensor : KvScaleMode::none;
  s.num_q_heads = q_heads;
  s.num_kv_heads = kv_heads;
  s.head_size = d;
  s.block_size = page;
  s.q_len = q_len;
  s.ctx = std::move(ctx);
  s.seed = seed;
  return s;
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  // q_len 1, group 4 (4 rows, decode tile): 16-bit KV; a long-ish context split over tasks next to
  // empty, one-key and one-tile ones; sinks; the batch-invariant plan too
  {
    DecodeSpec s = decode_spec(true, false, 128, 8, 2, 16, 1, {37, 0, 1, 70, 16}, 101);
    s.sinks = true;
    v.push_back({"q1_g4_bf16kv_d128", s,
                 {Split::automatic, Split::one_partition, Split::planned, Split::fixed, Split::uniform}});
  }
  // q_len 1, fp8 with per-(token, head) scales, page 5, a window, NaN / +Inf in unowned slots and
  // padded block-table entries pointing at poison blocks
  {
    DecodeSpec s = decode_spec(false, true, 64, 4, 1, 5, 1, {0, 53, 2}, 102);
    s.scale_mode = KvScaleMode::per_token_head;
    s.window_left = 20;
    s.poison_unowned = true;
    s.extra_table_cols = 1;
    v.push_back({"q1_g4_fp8_token_head_d64", s});
  }
  // q_len 4 x group 4 = 16 rows (the decode tile, full): contexts of 0 and shorter than q_len (2, 3:
  // rows without keys), page 7, softcap, a padded LSE stride, poisoned unowned slots
  {
    DecodeSpec s = decode_spec(true, false, 96, 8, 2, 7, 4, {2, 0, 45, 4, 19, 3}, 103);
    s.softcap = 20.f;
    s.lse_pad = 3;
    s.poison_unowned = true;
    v.push_back({"q4_g4_bf16kv_d96", s});
  }
  // q_len 4 x group 4, fp8 per-tensor scales as host floats, d 256, HND, ALiBi and sinks
  {
    DecodeSpec s = decode_spec(false, true, 256, 4, 1, 16, 4, {3, 40, 0}, 104);
    s.host_scale = true;
    s.alibi = true;
    s.sinks = true;
    s.hnd = true;
    v.push_back({"q4_g4_fp8_host_scale_d256_hnd", s});
  }
  // q_len 4 x group 8 = 32 rows: the prefill tile; 16-bit KV, d 192, sinks, poisoned unowned slots
  {
    DecodeSpec s = decode_spec(false, false, 192, 8, 1, 16, 4, {1, 66, 0, 9}, 105);
    s.sinks = true;
    s.poison_unowned = true;
    s.extra_table_cols = 2;
    v.push_back({"q4_g8_prefill_tile_f16kv_d192", s});
  }
  // q_len 4 x group 8 (the verify tile), fp8 per-tensor scale pointers, two kv heads, page 32, a window
  {
    DecodeSpec s = decode_spec(true, true, 128, 16, 2, 32, 4, {50, 2, 0}, 106);
    s.window_left = 17;
    v.push_back({"q4_g8_verify_tile_fp8_d128", s});
  }
  // q_len 4 x group 8, 16-bit KV, d 64 (the verify tile of 32 rows: one token's group a row band)
  {
    DecodeSpec s = decode_spec(true, false, 64, 8, 1, 16, 4, {29, 3, 0, 100}, 107);
    s.poison_unowned = true;
    v.push_back({"q4_g8_verify_tile_bf16kv_d64", s});
  }
  // the register-staged loader forced (gfx950's fallback of its LDS-DMA instances for 16-bit caches
  // beyond the DMA's buffer range; gfx942's default anyway), d 64, both tiles
  {
    Case c{"q1_g4_bf16kv_d64_staged", decode_spec(true, false, 64, 8, 2, 16, 1, {37, 0, 61}, 111)};
    c.kv_copy = CopyModel::register_staged;
    v.push_back(c);
  }
  {
    Case c{"q4_g8_verify_tile_f16kv_d128_staged", decode_spec(false, false, 128, 8, 1, 5, 4, {3, 28, 0}, 112)};
    c.kv_copy = CopyModel::register_staged;
    c.spec.sinks = true;
    v.push_back(c);
  }
  // q_len 8 x group 2 = 16 rows (the decode tile), contexts 0 and shorter than q_len
  v.push_back({"q8_g2_bf16kv_d128", decode_spec(true, false, 128, 4, 2, 16, 8, {5, 0, 30, 8}, 108)});
  // q_len 8 x group 8 = 64 rows at d 256: two q-blocks of the 32-row prefill tile; the other fp8
  // format (e4m3fn on gfx942, e4m3fnuz on gfx950), per-(token, head) scales, sinks
  {
    DecodeSpec s = decode_spec(false, true, 256, 8, 1, 16, 8, {7, 40, 0}, 109);
    s.scale_mode = KvScaleMode::per_token_head;
    s.sinks = true;
    Case c{"q8_g8_two_qblocks_other_fp8_d256", s};
    c.other_fp8 = true;
    v.push_back(c);
  }
  // q_len 2 x group 64 at d 256: two head chunks of the 32-row prefill tile; a window
  {
    DecodeSpec s = decode_spec(true, false, 256, 64, 1, 16, 2, {20, 1, 35}, 110);
    s.window_left = 9;
    v.push_back({"q2_g64_head_chunks_d256", s});
  }
  // The rocm cache layout (K [blocks, kv heads, d / x, block, x], V [blocks, kv heads, d, block]; the
  // values transposed in registers): 16-bit d 128 page 16 on the decode tile with NaN / +Inf in
  // unowned slots, every plan; fp8 with per-(token, head) scales, page 8, a window and q_len 2;
  // the prefill tile at d 192 with page 24 and padded strides, sinks
  {
    DecodeSpec s = decode_spec(true, false, 128, 8, 2, 16, 1, {37, 0, 1, 70, 16}, 113);
    s.rocm_layout = true;
    s.poison_unowned = true;
    s.extra_table_cols = 1;
    v.push_back({"q1_g4_bf16kv_d128_rocm", s,
                 {Split::automatic, Split::one_partition, Split::planned, Split::fixed, Split::uniform}});
  }
  {
    DecodeSpec s = decode_spec(false, true, 64, 4, 1, 8, 2, {0, 53, 2, 21}, 114);
    s.scale_mode = KvScaleMode::per_token_head;
    s.window_left = 20;
    s.poison_unowned = true;
    s.rocm_layout = true;
    v.push_back({"q2_g4_fp8_token_head_d64_p8_rocm", s});
  }
  {
    DecodeSpec s = decode_spec(false, false, 192, 8, 1, 24, 4, {1, 66, 0, 9}, 115);
    s.sinks = true;
    s.poison_unowned = true;
    s.rocm_layout = true;
    s.rocm_pad = 1;
    v.push_back({"q4_g8_prefill_tile_f16kv_d192_p24_rocm_pad", s});
  }
  // fp8 queries and fp8 outputs (problem/fp8_io.hpp, vLLM's fp8 attention contract): one partition
  // (the kernel's epilogue stores) and planned (one-task sequences stored by the kernel, the others
  // by the reduce). fp8 queries run the instance of compute_dtype: a 16-bit cache's type, else a 16-bit
  // output's, else fp16.
  const std::vector<Split> io_splits = {Split::one_partition, Split::planned};
  {
    // q_len 1 x group 4, e4m3fn queries (device scale) over the target's fp8 cache; an e4m3fn output
    // in groups of 64, UE8M0 scales; sinks
    DecodeSpec s = decode_spec(false, true, 128, 8, 2, 16, 1, {37, 0, 1, 70}, 301);
    s.sinks = true;
    Case c{"io_q1_g4_q_e4m3fn_fp8kv_out_e4m3fn_group64_ue8m0", s, io_splits};
    c.io = {.q = DType::fp8_e4m3fn, .device_q_scale = true, .out = DType::fp8_e4m3fn, .group = 64, .ue8m0 = true};
    v.push_back(c);
  }
  {
    // q_len 4 x group 4 (the decode tile, full), e4m3fnuz queries (host scale) over the target's fp8
    // cache with a bf16 output: the bf16 instance (compute_dtype: the 16-bit output's type); d 96,
    // page 7, contexts shorter than q_len
    DecodeSpec s = decode_spec(true, true, 96, 8, 2, 7, 4, {2, 45, 0, 19}, 302);
    Case c{"io_q4_g4_q_e4m3fnuz_fp8kv_out_bf16_d96", s, io_splits};
    c.io = {.q = DType::fp8_e4m3fnuz, .out = DType::bf16};
    v.push_back(c);
  }
  {
    // q_len 4 x group 8 (the verify tile), fp16 queries; an e4m3fnuz output in groups of 32 with
    // vLLM's ROCm fp8_max 224, column-major scales
    DecodeSpec s = decode_spec(false, false, 128, 8, 1, 16, 4, {1, 66, 0, 9}, 303);
    Case c{"io_q4_g8_verify_tile_out_e4m3fnuz_group32_max224", s, io_splits};
    c.io = {.out = DType::fp8_e4m3fnuz, .group = 32, .group_max = 224.f, .col_major_scales = true};
    v.push_back(c);
  }
  {
    // q_len 2 x group 4, e4m3fn queries (host scale) over the target's fp8 cache (per-(token, head)
    // scales), d 64; an e4m3fn output per tensor with a device scale of 1/2048: saturation
    DecodeSpec s = decode_spec(false, true, 64, 4, 1, 5, 2, {0, 53, 2, 21}, 304);
    s.scale_mode = KvScaleMode::per_token_head;
    Case c{"io_q2_g4_q_e4m3fn_fp8kv_out_e4m3fn_tensor_saturate", s, io_splits};
    c.io = {.q = DType::fp8_e4m3fn, .out = DType::fp8_e4m3fn, .device_out_scale = true, .out_scale = 1.f / 2048.f,
            .saturates = true};
    v.push_back(c);
  }
  {
    // q_len 1 x group 8, bf16 queries over a bf16 cache; an e4m3fnuz output per tensor (host scale)
    DecodeSpec s = decode_spec(true, false, 128, 8, 1, 16, 1, {40, 3, 90}, 305);
    Case c{"io_q1_g8_bf16_out_e4m3fnuz_tensor", s, io_splits};
    c.io = {.out = DType::fp8_e4m3fnuz};
    v.push_back(c);
  }
  return v;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = all_cases();
  return c;
}

struct Param {
  const EmuTarget* target;
  int index;
};

void PrintTo(const Param& p, std::ostream* os) { *os << emu::gfx_name(p.target->gfx) << " " << cases()[p.index].name; }

class EmuPagedDecode : public ::testing::TestWithParam<Param> {};

TEST_P(EmuPagedDecode, MatchesReference) {
  const Param prm = GetParam();
  const EmuTarget& t = *prm.target;
  const Case& c = cases()[prm.index];
  std::string why;
  const auto co = paged_code_object(t, why);
  if (!co) GTEST_SKIP() << why;
  DecodeSpec spec = c.spec;
  if (is_fp8(spec.kv_dtype))
    spec.kv_dtype = !c.other_fp8 ? t.fp8 : t.fp8 == DType::fp8_e4m3fn ? DType::fp8_e4m3fnuz : DType::fp8_e4m3fn;
  const DecodeHostProblem m(spec);
  const IoHost io(c.io, spec.bf16, m.h.spec.kv_dtype, int64_t(m.num_seqs()) * m.q_len(), spec.num_q_heads,
                  spec.head_size, m.h.q);
  const reference::AttentionResult ref = io_reference(m, io);
  EmuDecodeProblem ep(m, io);
  const bool io_case = is_fp8(c.io.q) || c.io.out.has_value();
  std::printf("  %-7s %-36s %s%s\n", emu::gfx_name(t.gfx), c.name, describe(spec).c_str(),
              io_case ? (" " + io.describe()).c_str() : "");
  for (Split split : c.splits) {
    SCOPED_TRACE(std::string(emu::gfx_name(t.gfx)) + " " + c.name + " " + split_name(split));
    const PagedDecodeOptions opt = split_options(split);
    RunResult r;
    try {
      r = run_on_emulator(*co, t, ep, opt, c.kv_copy);
    } catch (const emu::Error& e) {
      ADD_FAILURE() << "emulator " << emu::kind_name(e.kind) << ": " << e.what();
      continue;
    }
    EXPECT_TRUE(r.plan_mismatch.empty()) << r.plan_mismatch;
    const IoStats st = compare(ep, ref, r);
    EXPECT_EQ(st.bad, 0) << st.bad << " of " << st.checked << " checks failed; first: " << st.first_bad << " ["
                         << r.kernel << ", " << r.plan << "]";
    if (c.io.saturates) {
      EXPECT_GT(st.saturated, 0) << "some elements exceed the format's range";
    }
    std::printf("  %-7s %-36s %-7s %-51s max|err| out %.2e lse %.2e  %9llu instr %6.2f s", emu::gfx_name(t.gfx),
                c.name, split_name(split), r.plan.c_str(), st.max_abs, st.max_lse,
                static_cast<unsigned long long>(r.instructions), r.seconds);
    if (io.fp8_out())
      std::printf("  (%lld group scales, %lld saturated)", static_cast<long long>(st.scales),
                  static_cast<long long>(st.saturated));
    std::printf("\n");
  }
}

std::vector<Param> all_params(const EmuTarget& t) {
  std::vector<Param> v;
  for (int i = 0; i < int(cases().size()); ++i) v.push_back({&t, i});
  return v;
}
std::string param_name(const ::testing::TestParamInfo<Param>& i) { return cases()[i.param.index].name; }

INSTANTIATE_TEST_SUITE_P(Gfx942, EmuPagedDecode, ::testing::ValuesIn(all_params(kGfx942)), param_name);
INSTANTIATE_TEST_SUITE_P(Gfx950, EmuPagedDecode, ::testing::ValuesIn(all_params(kGfx950)), param_name);

// ---- the whole table: names and resources ----

// Calls f.template operator()<Cfg>(tile, fp8) for the configuration paged decode launches for every
// (q dtype, KV kind, variant, head size, tile kind: the verify tiles too) of the table on target t, for the
// register-staged fallback of each LDS-DMA one, and for the rocm cache layout of each.
template <class F>
void for_each_paged_config(const EmuTarget& t, F&& f) {
  for_each_table_entry(t.target, [&](const TableEntry& e) {
    PagedDecodeParams p;
    set_entry_dtypes(p, e, t.target);
    p.softcap = e.full ? 10.f : 0.f;
    p.head_size = e.d;
    PagedDecodePlan plan;
    plan.tile_kind = e.kind;
    plan.kv_copy = e.kv_copy;
    visit_target_config(t.target, p, plan, [&]<class Cfg>() { f.template operator()<Cfg>(e.tile, e.fp8); });
    // the rocm layout once a tile (the fp8 matrix path never takes it: paged_decode_instance_key)
    if (e.q8 || e.kv_copy != unified_default_copy(e.kind, e.d, t.target, e.fp8)) return;
    plan.kv_layout = KvCacheLayout::rocm;
    plan.kv_copy = CopyModel::register_staged;
    const UnifiedTile tile = unified_tile_for_copy(e.tile, plan.kv_copy);
    visit_target_config(t.target, p, plan, [&]<class Cfg>() { f.template operator()<Cfg>(tile, e.fp8); });
  }, /*verify=*/true);
}
int paged_configs(const EmuTarget& t) {
  int rocm = 0;
  const int rows = for_each_table_entry(t.target, [&](const TableEntry& e) {
    rocm += !e.q8 && e.kv_copy == unified_default_copy(e.kind, e.d, t.target, e.fp8);
  }, /*verify=*/true);
  return rows + rocm;
}

// Every kernel paged decode can launch is in the code object, exactly once (CodeObject::find_manifest throws
// on none or several): the kernel of each configuration, its reduce, the planner.
TEST(EmuPagedDecodeNames, EveryDispatchedInstanceIsInTheCodeObject) {
  for (const EmuTarget* t : {&kGfx942, &kGfx950}) {
    std::string why;
    const auto co = paged_code_object(*t, why);
    if (!co) GTEST_SKIP() << why;
    int found = 0;
    for_each_paged_config(*t, [&]<class Cfg>(const UnifiedTile&, bool) {
      for (const auto& manifest : {kernel_manifest_text<Cfg>(), reduce_manifest_text<Cfg>()}) {
        EXPECT_NO_THROW((void)co->find_manifest(manifest)) << emu::gfx_name(t->gfx) << ": " << manifest;
        ++found;
      }
    });
    EXPECT_EQ(found, paged_configs(*t) * 2);
    EXPECT_NO_THROW((void)co->find_manifest(planner_manifest_text())) << emu::gfx_name(t->gfx);
  }
}

// The residency the plan assumes (unified_residency: its workgroup budget, hence the task slots)
// holds for the compiled kernels: each paged_decode_kernel stays within its tile's VGPR + AGPR budget
// (granules of 8) and its LDS (static + the configuration's dynamic bytes) lets `residency`
// workgroups share a CU.
TEST(EmuPagedDecodeResidency, KernelsKeepTheTileBudget) {
  for (const EmuTarget* t : {&kGfx942, &kGfx950}) {
    std::string why;
    const auto co = paged_code_object(*t, why);
    if (!co) GTEST_SKIP() << why;
    int checked = 0;
    for_each_paged_config(*t, [&]<class Cfg>(const UnifiedTile& tile, bool) {
      expect_tile_budget<Cfg>(*co, kernel_manifest_text<Cfg>(), tile, t->target, t->gfx);
      ++checked;
    });
    EXPECT_EQ(checked, paged_configs(*t));
    std::printf("  %s: %d paged-decode kernels within their tile's register budget and LDS residency\n",
                emu::gfx_name(t->gfx), checked);
  }
}

}  // namespace
}  // namespace hipattn::testing
