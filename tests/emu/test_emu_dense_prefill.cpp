// tests/emu/test_emu_dense_prefill.cpp: the CDNA dense prefill kernels of gfx942 and gfx950
// (dense_prefill_kernel<Cfg>: the attention skeleton with the dense scheduler over DenseKvLayout,
// dispatch/dense_prefill.hpp: the register-staged loader on the unified prefill tile, or on gfx950 at
// d 256 and d 128 without softcap the ping-pong schedule with LDS-DMA loads,
// kernels/cdna/pingpong_mainloop.hpp),
// executed on the emulator (emu.hpp) and compared with the float64 reference (reference/dense_prefill.hpp).
// gfx950 runs every case with the dispatcher's choice (Gfx950/...) and those on the ping-pong schedule
// also on the skeleton's instance (Gfx950Skeleton/...).
//
// The kernels come from tests/isa/dense_prefill_all.hip (every instance the dispatcher launches: head
// sizes 64 / 128 / 256 and (192, 128), f16 / bf16, softcap off / on, for both targets; each target's kernels are
// empty in the other target's object). Each case builds a DensePrefillParams over the emulated
// buffers, picks the instance launch_dense_prefill_cdna would (detail::visit_dense_cdna_instance), builds its arguments with
// make_dense_skeleton_args and launches it over grid (num_q_heads, q-block slots),
// Cfg::kThreads threads and Cfg::kSmemBytes of dynamic LDS, as launch_dense_prefill_skeleton does.
// Problems are tiny (the emulator runs some tens of millions of instructions a second) but reach:
// packed varlen with empty query sequences, sequences with no key (also the last one, and no key in
// the whole call: k and v null), more queries than keys under causal (rows with no key: exactly 0,
// LSE -inf), GQA 2:1, 4:1 and MQA, a sliding window, softcap with a scale where it matters, d 64 /
// 128 / 256, both dtypes, padded token strides (NaN in the padding of q / k / v, which must never
// reach a result, and the padding of out left untouched), a padded LSE stride, two and four q-blocks
// of one sequence, both numberings of the q-block slots (by band and global,
// DensePrefillCommon::by_band), and the batched layout, with packed-equivalent strides and with q / k /
// v as [seqs, heads, len, d] and out padded after each sequence (dense_sequence_args). Outputs are
// poisoned (NaN) before every run; every element and every LSE is compared, with the device suites'
// tolerances (emu_dispatch.hpp).
//
// Code objects: $HIPATTN_EMU_DENSE_PREFILL_GFX942 / $HIPATTN_EMU_DENSE_PREFILL_GFX950 (each test skips,
// saying so, when its variable is unset).
//
// The instance and its arguments are the dispatcher's own (dispatch/dense_prefill_plan.hpp
// detail::dense_skeleton_config_t, dispatch/dense_prefill_launch.hpp detail::make_dense_skeleton_args).
// The problem, the run and the comparison are emu_dense_prefill.hpp's (shared with tests/timing).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "emu.hpp"
#include "emu_dense_prefill.hpp"
#include "emu_dispatch.hpp"
#include "hipattn/dispatch/dense_prefill.hpp"
#include "hipattn/problem/dense_prefill_params.hpp"
#include "hipattn/problem/dense_prefill_rules.hpp"
#include "hipattn/reference/dense_prefill.hpp"

namespace hipattn::testing {
namespace {

// ---- the device and its code object ----

using namespace emu_dispatch;
using namespace emu_dense;
const EmuTarget kGfx942{emu::Gfx::gfx942, Target::gfx942, 304, DType::fp8_e4m3fnuz, "HIPATTN_EMU_DENSE_PREFILL_GFX942"};
const EmuTarget kGfx950{emu::Gfx::gfx950, Target::gfx950, 256, DType::fp8_e4m3fn, "HIPATTN_EMU_DENSE_PREFILL_GFX950"};

// The dense prefill code object of a target (null, with the reason, when the environment names none).
std::shared_ptr<const emu::CodeObject> dense_code_object(const EmuTarget& t, std::string& why) {
  return env_code_object(t, "hipattn_isa_dense_prefill_all", why);
}


// ---- the cases ----

std::vector<Case> all_cases() {
  std::vector<Case> v;
  // d 128 bf16 causal, GQA 2:1, packed: a chunk against a longer context, a square prompt (17 > one
  // KV tile), a sequence with keys but no query, and more queries than keys (its first 4 rows see no key)
  {
    Case c{"d128_bf16_causal_gqa2_packed", true, 128, 4, 2, true};
    c.lens = {{5, 9}, {17, 17}, {0, 3}, {6, 2}};
    c.seed = 201;
    v.push_back(c);
  }
  // d 64 f16, not causal, a window of 5, GQA 4:1, packed with padded token strides (NaN padding in
  // q / k / v): a sequence without keys (its rows: 0, LSE -inf), one query against 12 keys
  {
    Case c{"d64_f16_window_gqa4_padded", false, 64, 4, 1, false, 5};
    c.lens = {{20, 33}, {7, 7}, {3, 0}, {1, 12}};
    c.pad = 8;
    c.seed = 202;
    v.push_back(c);
  }
  // d 256 bf16 causal, one sequence of two q-blocks (the d 256 tile has 32 rows), a padded LSE stride
  {
    Case c{"d256_bf16_causal_two_qblocks", true, 256, 2, 2, true};
    c.lens = {{40, 45}};
    c.lse_pad = 3;
    c.seed = 203;
    v.push_back(c);
  }
  // softcap 5 with scale 5 / sqrt(d) (|scaled logits| up to ~5 x the typical q.k: softcap bends them),
  // f16 d 128 causal MQA-ish 2:1
  {
    Case c{"d128_f16_softcap_causal", false, 128, 2, 1, true};
    c.softcap = 5.f;
    c.scale_mult = 5.f;
    c.lens = {{9, 20}, {16, 16}};
    c.seed = 204;
    v.push_back(c);
  }
  // softcap on bf16 d 64, non-causal with a window, GQA 2:1
  {
    Case c{"d64_bf16_softcap_window", true, 64, 2, 1, false, 7};
    c.softcap = 5.f;
    c.scale_mult = 5.f;
    c.lens = {{11, 19}, {4, 4}};
    c.seed = 207;
    v.push_back(c);
  }
  // batched (packed-equivalent strides: batch = len x token stride): 3 sequences of 7 queries and 11 keys, bf16 d 64 causal, GQA 2:1,
  // a padded LSE stride
  {
    Case c{"d64_bf16_causal_batched", true, 64, 4, 2, true};
    c.batch = 3;
    c.batch_q = 7;
    c.batch_k = 11;
    c.lse_pad = 5;
    c.seed = 205;
    v.push_back(c);
  }
  // batched with other batch strides (dense_sequence_args): q / k / v as [seqs, heads, len, d] and
  // out with padding after each sequence (NaN there, untouched), f16 d 64 causal GQA 2:1
  {
    Case c{"d64_f16_causal_bhsd", false, 64, 4, 2, true};
    c.batch = 3;
    c.batch_q = 9;
    c.batch_k = 13;
    c.bhsd = true;
    c.o_batch_pad = 16;
    c.lse_pad = 2;
    c.seed = 211;
    v.push_back(c);
  }
  // the same layouts on gfx950's ping-pong (d 128 without softcap, bf16), GQA 2:1 (so that K's batch
  // stride is two sequences of rows): three 32-key tiles a sequence
  {
    Case c{"d128_bf16_causal_bhsd", true, 128, 4, 2, true};
    c.batch = 2;
    c.batch_q = 40;
    c.batch_k = 70;
    c.bhsd = true;
    c.o_batch_pad = 8;
    c.seed = 212;
    v.push_back(c);
  }
  // batched f16 d 256, not causal, more queries than keys (every row sees every key)
  {
    Case c{"d256_f16_batched", false, 256, 2, 1, false};
    c.batch = 2;
    c.batch_q = 9;
    c.batch_k = 5;
    c.seed = 208;
    v.push_back(c);
  }
  // softcap at d 256, bf16, MQA (4 q heads on one kv head), causal with a window of 10, a chunk of
  // two q-blocks against a longer context and two queries against 40 keys
  {
    Case c{"d256_bf16_softcap_mqa_window", true, 256, 4, 1, true, 10};
    c.softcap = 5.f;
    c.scale_mult = 5.f;
    c.lens = {{33, 50}, {2, 40}};
    c.seed = 209;
    v.push_back(c);
  }
  // d 128 f16, not causal: two q-blocks of 64 rows, each against every one of 100 keys (a partial
  // last KV tile), next to a one-token sequence
  {
    Case c{"d128_f16_noncausal_two_qblocks", false, 128, 2, 2, false};
    c.lens = {{70, 100}, {1, 1}};
    c.seed = 210;
    v.push_back(c);
  }
  // the last sequence without keys (its rows: 0, LSE -inf; its cu_seqlens_k entry is num_tokens_k)
  {
    Case c{"d128_bf16_last_seq_no_keys", true, 128, 2, 1, true};
    c.lens = {{5, 5}, {3, 0}};
    c.seed = 212;
    v.push_back(c);
  }
  // no key anywhere (num_tokens_k = 0, k and v null, as validate(p) accepts): every row 0, LSE -inf.
  // This case found that StagedPagedKvLoader::prologue fetches tile t_begin even for an empty tile
  // range (an invalid row reads the cache's first bytes: here a load at 0x0); the dense arguments
  // now point k and v at q when there is no key (make_dense_skeleton_args).
  {
    Case c{"d64_f16_no_keys", false, 64, 2, 1, false};
    c.lens = {{3, 0}, {2, 0}};
    c.seed = 211;
    v.push_back(c);
  }
  // (d_qk, d_v) = (192, 128): V rows narrower than K's (an AttentionShape of d_qk 192, d_v 128: the loader's first 16 chunks of
  // each 24-chunk key row for V), bf16 causal GQA 2:1 packed with padded token strides (NaN padding,
  // and V's rows 128 wide: a read past them would take the next row's or the padding's NaN), a
  // sequence with more queries than keys
  {
    Case c{"d192v128_bf16_causal_gqa2_padded", true, 192, 4, 2, true};
    c.lens = {{13, 21}, {6, 3}, {20, 20}};
    c.pad = 8;
    c.seed = 213;
    v.push_back(c);
  }
  // (192, 128) f16 softcap, non-causal with a window, batched, two q-blocks of the d 192 tile (32 rows)
  {
    Case c{"d192v128_f16_softcap_window_batched", false, 192, 2, 1, false, 9};
    c.softcap = 5.f;
    c.scale_mult = 5.f;
    c.batch = 2;
    c.batch_q = 40;
    c.batch_k = 37;
    c.seed = 214;
    v.push_back(c);
  }
  // the global q-block numbering (by_band false: one long sequence next to short ones gives more than
  // twice as many band slots as global ones): d 64 f16 causal, 200 queries in four q-blocks of 64
  {
    Case c{"d64_f16_causal_global_numbering", false, 64, 2, 2, true};
    c.lens = {{200, 210}, {1, 1}, {1, 2}, {2, 2}};
    c.seed = 206;
    v.push_back(c);
  }
  // Long enough for the ping-pong schedule's rings to wrap (gfx950, 128-row q-blocks, K and V rings of
  // two stages): d 128 bf16 causal GQA 2:1, three q-blocks of one sequence over 5 KV tiles of 64 keys,
  // and a second sequence whose last q-block holds one row
  {
    Case c{"d128_bf16_causal_long", true, 128, 4, 2, true};
    c.lens = {{300, 300}, {129, 140}};
    c.seed = 215;
    v.push_back(c);
  }
  // d 256 f16, not causal: 7 KV tiles of 32 keys (gfx950's ping-pong tile at d 256) for two q-blocks,
  // with padded token strides
  {
    Case c{"d256_f16_noncausal_long", false, 256, 2, 1, false};
    c.lens = {{150, 200}};
    c.pad = 8;
    c.seed = 216;
    v.push_back(c);
  }
  // no key anywhere on gfx950's ping-pong schedule (d 256): no tile, no DMA, both groups still pass
  // the same barriers; every row 0, LSE -inf
  {
    Case c{"d256_bf16_no_keys", true, 256, 2, 2, true};
    c.lens = {{4, 0}, {1, 0}};
    c.seed = 218;
    v.push_back(c);
  }
  // the global q-block numbering at 128-row q-blocks too: one long causal sequence (5 q-blocks of 128,
  // 10 of 64) next to three short ones, d 128 bf16
  {
    Case c{"d128_bf16_causal_global_long", true, 128, 2, 1, true};
    c.lens = {{600, 610}, {1, 1}, {1, 2}, {2, 2}};
    c.seed = 217;
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
  bool skeleton = false;  // the skeleton's instance where the dispatcher would take the ping-pong one
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << emu::gfx_name(p.target->gfx) << " " << cases()[p.index].name << (p.skeleton ? " (skeleton)" : "");
}

class EmuDensePrefill : public ::testing::TestWithParam<Param> {};

TEST_P(EmuDensePrefill, MatchesReference) {
  const Param prm = GetParam();
  const EmuTarget& t = *prm.target;
  const Case& c = cases()[prm.index];
  SCOPED_TRACE(std::string(emu::gfx_name(t.gfx)) + " " + c.name);
  std::string why;
  const auto co = dense_code_object(t, why);
  if (!co) GTEST_SKIP() << why;
  DenseProblem dp(c);
  const DensePrefillParams host = dp.params(false), dev = dp.params(true);
  // the dispatcher's checks: validate (with the host copies of cu_seqlens), head sizes (64, 64),
  // (128, 128), (256, 256), (192, 128)
  {
    const ValidationReport r = dp.packed ? validate(dev, DenseHostSequenceInfo{dp.cu_q, dp.cu_k}) : validate(dev);
    ASSERT_TRUE(r.ok()) << r.field() << ": " << r.message();
  }
  const reference::AttentionResult ref = reference::dense_prefill(host);
  std::printf("  %-7s %-34s %s\n", emu::gfx_name(t.gfx), c.name, dp.describe().c_str());
  RunResult r;
  try {
    r = run_dense(*co, t, dp, prm.skeleton);
  } catch (const emu::Error& e) {
    FAIL() << "emulator " << emu::kind_name(e.kind) << ": " << e.what();
  }
  const CompareStats st = compare(dp, ref, r.out, r.lse);
  EXPECT_EQ(st.bad, 0) << st.bad << " of " << st.checked << " elements out of tolerance; first: " << st.first_bad
                       << " [" << r.kernel << "]";
  EXPECT_EQ(st.touched_padding, 0) << "elements of the padding of out / lse written";
  std::printf("  %-7s %-34s BM %d, %d q-block slots (%s), %lld no-key rows: max|err| out %.2e lse %.2e  %9llu instr %6.2f s\n",
              emu::gfx_name(t.gfx), c.name, r.bm, r.q_blocks, r.by_band ? "by band" : "global",
              static_cast<long long>(st.no_key), st.max_abs, st.max_lse, static_cast<unsigned long long>(r.instructions),
              r.seconds);
}

std::vector<Param> all_params(const EmuTarget& t, bool skeleton = false) {
  std::vector<Param> v;
  for (int i = 0; i < int(cases().size()); ++i)
    if (!skeleton || detail::dense_pingpong_instance(t.target, cases()[i].d, cases()[i].dv(), cases()[i].softcap > 0.f))
      v.push_back({&t, i, skeleton});
  return v;
}
std::string param_name(const ::testing::TestParamInfo<Param>& i) { return cases()[i.param.index].name; }

INSTANTIATE_TEST_SUITE_P(Gfx942, EmuDensePrefill, ::testing::ValuesIn(all_params(kGfx942)), param_name);
INSTANTIATE_TEST_SUITE_P(Gfx950, EmuDensePrefill, ::testing::ValuesIn(all_params(kGfx950)), param_name);
// gfx950's skeleton instances where the dispatcher takes the ping-pong one (what it takes for K or V
// beyond the LDS DMA's 4 GiB), on the same cases
INSTANTIATE_TEST_SUITE_P(Gfx950Skeleton, EmuDensePrefill, ::testing::ValuesIn(all_params(kGfx950, true)), param_name);

// ---- every instance: names and resources ----

// Every instance launch_dense_prefill_cdna can launch ((64, 64) / (128, 128) / (256, 256) / (192, 128) x
// f16 / bf16 x softcap off / on x either schedule)
// is in its target's code object exactly once (CodeObject::find_manifest throws on none or several), with no
// scratch.
TEST(EmuDensePrefillNames, EveryInstanceIsInTheCodeObject) {
  for (const EmuTarget* t : {&kGfx942, &kGfx950}) {
    std::string why;
    const auto co = dense_code_object(*t, why);
    if (!co) GTEST_SKIP() << why;
    std::set<std::string> found;
    for (bool bf16 : {false, true})
      for (int d : {64, 128, 256, 192})
        for (bool softcap : {false, true})
          for (bool pingpong : {false, true})
            visit_target_instance(t->target, bf16, d, softcap, pingpong, [&]<class Cfg>() {
              const std::string manifest = kernel_manifest_text<Cfg>();
              try {
                const emu::KernelInfo& k = co->find_manifest(manifest);
                EXPECT_EQ(k.private_segment_fixed_size, 0u) << emu::gfx_name(t->gfx) << ": " << manifest << ": scratch";
                found.insert(manifest);
              } catch (const std::exception& e) {
                ADD_FAILURE() << emu::gfx_name(t->gfx) << ": " << manifest << ": " << e.what();
              }
            });
    // the skeleton's 16 instances; on gfx950 also 6 ping-pong ones (d 256, d 128 without softcap: 3 x f16 /
    // bf16; dense_pingpong_instance)
    EXPECT_EQ(found.size(), t->target == Target::gfx950 ? 16u + 6u : 16u) << emu::gfx_name(t->gfx);
  }
}

}  // namespace
}  // namespace hipattn::testing
