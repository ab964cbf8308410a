// tests/emu/test_emu_mla_decode.cpp: the CDNA MLA decode kernels of gfx942 and gfx950
// (mla_decode_cdna_kernel<MlaDecodeCdnaConfig>: the attention skeleton with paged decode's scheduler
// and store over the latent cache, V read from the K stage; dispatch/mla_decode.hpp), executed on the
// emulator (emu.hpp) and compared with the float64 reference (reference/mla_decode.hpp).
//
// The kernels come from tests/isa/mla_decode_all.hip (mla_decode<>: f16 / bf16 queries over a 16-bit,
// e4m3fn or e4m3fnuz cache, for both targets; each target's kernels are empty in the other target's
// object, with the device planner and paged decode's reduce at d = 512). Each case plans like
// mla_decode() (plan_mla_decode with the target's CU count), builds the dispatcher's own arguments
// (make_mla_decode_cdna_args, make_mla_decode_plan_args, make_mla_decode_reduce_args) over the emulated
// buffers and launches what mla_decode() launches: the planner (planned), the kernel over
// capacity x row blocks workgroups, the reduce (planned). The planner's tasks are checked against the
// host plan of the same lengths.
//
// Problems (tests/common/mla_problem.hpp, the device suite's): tiny (the emulator runs some tens of
// millions of instructions a second) but reaching heads 16 / 32 / 128 (head chunks of the row map on
// both tiles), MTP q_len 1-4 with contexts shorter than q_len (rows with no key: exactly 0, LSE
// -inf), pages of 1, 17 and 64 slots, empty sequences, joined and split (nope / rope) queries, bf16 /
// f16 caches and both fp8 formats on both targets with the scale on the device or the host, one
// partition and planned (the reduce), fp8 outputs per tensor and per group, and fp8 queries of both
// formats over fp8 caches (converted exactly to the compute dtype as Q loads; f16, bf16 and fp8
// outputs). Unowned slots, unused
// pages and padded block-table entries hold NaN, so any read of them poisons an output. Outputs, LSE,
// group scales and the workspace are poisoned before every run; every element is compared with the
// device suite's tolerances and every padding element must still hold the poison.
//
// Code objects: $HIPATTN_EMU_MLA_DECODE_GFX942 / $HIPATTN_EMU_MLA_DECODE_GFX950 (each test skips,
// saying so, when its variable is unset).
// The emulated buffers and the run are emu_mla_decode.hpp's (shared with tests/timing).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../common/mla_problem.hpp"
#include "emu.hpp"
#include "emu_dispatch.hpp"
#include "emu_mla_decode.hpp"
#include "hipattn/dispatch/mla_decode.hpp"

namespace hipattn::testing {
namespace {

using namespace emu_dispatch;
using namespace mla_test;
using namespace emu_mla;

const EmuTarget kGfx942{emu::Gfx::gfx942, Target::gfx942, 304, DType::fp8_e4m3fnuz, "HIPATTN_EMU_MLA_DECODE_GFX942"};
const EmuTarget kGfx950{emu::Gfx::gfx950, Target::gfx950, 256, DType::fp8_e4m3fn, "HIPATTN_EMU_MLA_DECODE_GFX950"};

std::shared_ptr<const emu::CodeObject> mla_code_object(const EmuTarget& t, std::string& why) {
  return env_code_object(t, "hipattn_isa_mla_decode_all", why);
}

// ---- the cases ----

enum class Fp8 { none, target, other };  // the cache: 16-bit, the target's fp8 format, the other one
struct Case {
  const char* name;
  MlaSpec spec;  // kv_dtype of an fp8 case is set per target (fp8)
  Fp8 fp8 = Fp8::none;
  bool fp8_out = false;  // the output in the target's fp8 format (spec.out.group: per tensor or per group)
  std::vector<MlaDecodeSplit> splits = {MlaDecodeSplit::automatic};
  // fp8 queries: which targets take the fp8 matrix path (QK^T by the fp8 MFMA; the others convert)
  std::vector<Target> q8_on = {};
};

MlaSpec spec(DType q, int heads, int q_len, int page, std::vector<int> lens, uint64_t seed) {
  MlaSpec s;
  s.q_dtype = s.kv_dtype = q;
  s.heads = heads;
  s.q_len = q_len;
  s.page_size = page;
  s.lens = std::move(lens);
  s.seed = seed;
  return s;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> v = [] {
    std::vector<Case> c;
    const auto one_and_planned = std::vector<MlaDecodeSplit>{MlaDecodeSplit::one_partition, MlaDecodeSplit::planned};
    c.push_back({"bf16_h16_page64", spec(DType::bf16, 16, 1, 64, {37, 0, 70}, 11), Fp8::none, false, one_and_planned});
    {
      Case x{"f16_h16_mtp2_page1_split_q", spec(DType::f16, 16, 2, 1, {5, 19}, 12)};
      x.spec.split_q = true;
      c.push_back(x);
    }
    c.push_back({"bf16_h32_page17_fp8", spec(DType::bf16, 32, 1, 17, {50, 3}, 13), Fp8::target});
    {
      Case x{"f16_h16_page64_other_fp8_host_scale", spec(DType::f16, 16, 1, 64, {41}, 14), Fp8::other};
      x.spec.scale_on_device = false;
      c.push_back(x);
    }
    c.push_back({"bf16_h128_head_chunks", spec(DType::bf16, 128, 1, 64, {20}, 15)});
    c.push_back({"bf16_h16_mtp4_short_contexts", spec(DType::bf16, 16, 4, 64, {3, 40, 0}, 16)});
    c.push_back({"bf16_h16_long_planned", spec(DType::bf16, 16, 1, 64, {300, 10}, 17), Fp8::none, false,
                 {MlaDecodeSplit::planned}});
    {
      Case x{"bf16_h16_fp8_out_group64", spec(DType::bf16, 16, 1, 64, {60, 25}, 18), Fp8::target, true, one_and_planned};
      x.spec.out.group = 64;
      x.spec.out.ue8m0 = true;
      x.spec.o_pad = 16;  // fp8 rows: strides of 16 bytes
      c.push_back(x);
    }
    {
      Case x{"f16_h16_fp8_out_tensor", spec(DType::f16, 16, 2, 64, {33}, 19), Fp8::none, true};
      x.spec.o_pad = 16;
      c.push_back(x);
    }
    // fp8 queries over fp8 caches: codes converted exactly to the compute dtype as Q loads, q_scale
    // in the score scale (the compute dtype: a 16-bit output's, fp16 under an fp8 output)
    {
      // e4m3fn queries over the target's format: gfx950 reads it, gfx942 re-encodes them over its fnuz cache
      Case x{"fp8q_fn_f16_out_mtp2", spec(DType::fp8_e4m3fn, 16, 2, 64, {45, 7}, 20), Fp8::target, false, one_and_planned};
      x.spec.out.dtype = DType::f16;
      x.q8_on = {Target::gfx942, Target::gfx950};
      c.push_back(x);
    }
    {
      Case x{"fp8q_fnuz_bf16_out_split_q_host_scales", spec(DType::fp8_e4m3fnuz, 32, 1, 17, {30}, 21), Fp8::other};
      x.spec.out.dtype = DType::bf16;
      x.spec.split_q = true;
      x.spec.scale_on_device = false;
      c.push_back(x);  // the other format's cache: converted on both targets
    }
    {
      Case x{"fp8q_fn_fp8_out_group32", spec(DType::fp8_e4m3fn, 16, 1, 64, {52}, 22), Fp8::target, true};
      x.spec.out.group = 32;
      x.spec.o_pad = 16;
      x.q8_on = {Target::gfx942, Target::gfx950};
      c.push_back(x);
    }
    {  // e4m3fnuz queries over gfx942's fnuz cache (its fp8 MFMA's format); gfx950 converts them
      Case x{"fp8q_fnuz_over_fnuz_mtp4_h128", spec(DType::fp8_e4m3fnuz, 128, 4, 33, {70, 2}, 23)};
      x.spec.kv_dtype = DType::fp8_e4m3fnuz;
      x.spec.out.dtype = DType::bf16;
      x.q8_on = {Target::gfx942};
      c.push_back(x);
    }
    return c;
  }();
  return v;
}

const char* split_name(MlaDecodeSplit s) {
  return s == MlaDecodeSplit::planned ? "planned" : s == MlaDecodeSplit::one_partition ? "one" : "auto";
}

struct Param {
  const EmuTarget* target;
  int index;
};
void PrintTo(const Param& p, std::ostream* os) { *os << emu::gfx_name(p.target->gfx) << " " << cases()[size_t(p.index)].name; }

class EmuMlaDecode : public ::testing::TestWithParam<Param> {};

TEST_P(EmuMlaDecode, MatchesReference) {
  const Param prm = GetParam();
  const EmuTarget& t = *prm.target;
  const Case& c = cases()[size_t(prm.index)];
  std::string why;
  const auto co = mla_code_object(t, why);
  if (!co) GTEST_SKIP() << why;
  MlaSpec s = c.spec;
  const DType other = t.fp8 == DType::fp8_e4m3fn ? DType::fp8_e4m3fnuz : DType::fp8_e4m3fn;
  if (c.fp8 != Fp8::none) s.kv_dtype = c.fp8 == Fp8::target ? t.fp8 : other;
  if (c.fp8_out) s.out.dtype = t.fp8;
  const MlaHost h(s);
  const reference::AttentionResult ref = h.reference();
  EmuMla em(h);
  for (MlaDecodeSplit split : c.splits) {
    const std::string what = std::string(emu::gfx_name(t.gfx)) + " " + c.name + " " + split_name(split) + " (" + s.str() + ")";
    SCOPED_TRACE(what);
    MlaDecodeOptions opt;
    opt.split = split;
    RunResult r;
    try {
      r = run_on_emulator(*co, t, em, opt);
    } catch (const emu::Error& e) {
      ADD_FAILURE() << "emulator " << emu::kind_name(e.kind) << ": " << e.what();
      continue;
    }
    EXPECT_TRUE(r.plan_mismatch.empty()) << r.plan_mismatch;
    expect_matches(h, r.got, ref, what + " [" + r.plan + "]");
    const bool want_q8 = std::find(c.q8_on.begin(), c.q8_on.end(), t.target) != c.q8_on.end();
    EXPECT_EQ(r.q8, want_q8) << "the fp8 matrix path " << (want_q8 ? "not taken" : "taken");
    std::printf("  %-7s %-38s %-8s %-44s %10llu instr %6.2f s\n", emu::gfx_name(t.gfx), c.name, split_name(split),
                r.plan.c_str(), static_cast<unsigned long long>(r.instructions), r.seconds);
  }
}

std::vector<Param> all_params(const EmuTarget& t) {
  std::vector<Param> v;
  for (int i = 0; i < int(cases().size()); ++i) v.push_back({&t, i});
  return v;
}
std::string param_name(const ::testing::TestParamInfo<Param>& i) { return cases()[size_t(i.param.index)].name; }

INSTANTIATE_TEST_SUITE_P(Gfx942, EmuMlaDecode, ::testing::ValuesIn(all_params(kGfx942)), param_name);
INSTANTIATE_TEST_SUITE_P(Gfx950, EmuMlaDecode, ::testing::ValuesIn(all_params(kGfx950)), param_name);

// Every configuration mla_decode() can launch on a target is in its code object, with the planner
// and both reduces, and keeps the LDS of one workgroup within the CU's.
TEST(EmuMlaDecodeNames, EveryDispatchedInstanceIsInTheCodeObject) {
  for (const EmuTarget* t : {&kGfx942, &kGfx950}) {
    std::string why;
    const auto co = mla_code_object(*t, why);
    if (!co) GTEST_SKIP() << why;
    int n = 0;
    for (bool bf16 : {false, true})
      for (DType kv : {DType::f16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz})
        for (bool q8 : {false, true}) {
          if (q8 && kv != t->fp8) continue;  // the target's fp8 matrix path reads its own format
          visit_config(t->target, bf16, kv, q8, [&]<class Cfg>() {
            EXPECT_NO_THROW(co->find_manifest(kernel_manifest_text<Cfg>())) << emu::gfx_name(t->gfx) << " "
                                                                             << kernel_manifest_text<Cfg>();
            EXPECT_EQ(Cfg::kBM, mla_decode_tile(t->target).rows);
            EXPECT_EQ(Cfg::kQ8, q8);
            ++n;
          });
        }
    EXPECT_EQ(n, 8);
    EXPECT_NO_THROW(co->find_manifest(planner_manifest_text()));
    EXPECT_NO_THROW(co->find_manifest(reduce_manifest_text(true)));
    EXPECT_NO_THROW(co->find_manifest(reduce_manifest_text(false)));
  }
}

}  // namespace
}  // namespace hipattn::testing
