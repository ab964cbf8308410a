// tests/timing/test_hipattn_runs.cpp: the hipattn runs of the timing harness (hipattn_runs.hpp) on the
// emulator, on gfx942 and gfx950: each class at small shapes with the float64 check (every output
// element, LSE and group scale within the device suites' tolerances, outputs poisoned before the call),
// and the work lists:
//   - of the problem run: the same launches (manifest, grid, block, dynamic LDS) as the run, one entry
//     per workgroup the emulator ran, and for each attention launch the executed MFMAs' multiply-
//     accumulates (op counts x the shape of each v_mfma mnemonic) equal to total KV tiles x the tile's
//     rows x keys x (d_qk + d_v): no MFMA outside the KV loop, every tile listed exactly once
//     (reduces and the planner: no MFMA);
//   - of full-size problems (not run): closed forms of the total tiles (non-causal and square causal
//     dense prefill, one-partition MLA and uniform paged decode), and for every scenario of the
//     unified table on both targets, a split plan's total (3D uniform segments or planned tasks) equal
//     to the forced 2D grid's of the same tile.
// Code objects: $HIPATTN_EMU_{DENSE_PREFILL,DISPATCH,MLA_DECODE,PAGED_DECODE}_GFX9xx (a test skips,
// saying so, when its variable is unset): run under tests/emu/hipattn_emu_env.sh.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "hipattn_runs.hpp"

namespace hipattn::timing {
namespace {

const emu::Gfx kTargets[] = {emu::Gfx::gfx942, emu::Gfx::gfx950};

#define SKIP_WITHOUT(family, gfx)                                        \
  do {                                                                   \
    const std::string why_ = code_object_missing(family, gfx);           \
    if (!why_.empty()) GTEST_SKIP() << why_;                             \
  } while (0)

// What a run says about itself, and its work list against what the emulator executed.
void expect_consistent(const HipattnRun& r, HipattnFamily family, emu::Gfx gfx) {
  SCOPED_TRACE(r.label);
  ASSERT_EQ(r.launches.size(), r.work.launches.size()) << "the work list has other launches than the run";
  const auto co = hipattn_code_object(family, gfx);
  for (size_t i = 0; i < r.launches.size(); ++i) {
    const KernelRun& k = r.launches[i];
    const LaunchWork& w = r.work.launches[i];
    SCOPED_TRACE(w.manifest);
    EXPECT_EQ(k.label.rfind(w.manifest + " | ", 0), 0u) << k.label;
    EXPECT_EQ(k.grid.x, w.grid.x);
    EXPECT_EQ(k.grid.y, w.grid.y);
    EXPECT_EQ(k.grid.z, w.grid.z);
    EXPECT_EQ(k.block.x, w.block.x);
    ASSERT_EQ(int64_t(w.work.size()), w.workgroups());
    EXPECT_EQ(int64_t(k.stats.workgroups), w.workgroups()) << "workgroups the emulator ran";
    // LDS: the kernel's fixed bytes + the launch's dynamic ones; registers: the descriptor's
    // allocation (GRANULATED_WORKITEM_VGPR_COUNT, COMPUTE_PGM_RSRC1 bits 5:0, granules of 8 unified
    // registers) is the count rounded up (the planner's descriptor asks for all 256 whatever its count)
    const emu::KernelInfo& ki = co->find_manifest(w.manifest);
    EXPECT_EQ(k.lds_bytes, ki.group_segment_fixed_size + w.dynamic_lds);
    const int granted = int((ki.rsrc1 & 0x3fu) + 1) * 8;
    EXPECT_GT(k.vgprs, 0);
    EXPECT_LE(k.vgprs, granted) << ki.vgpr_count << " VGPRs, " << ki.agpr_count << " AGPRs, rsrc3 " << ki.rsrc3;
    if (w.role != "plan_decode_tasks") {
      EXPECT_GT(k.vgprs, granted - 8) << ki.vgpr_count << " VGPRs, " << ki.agpr_count << " AGPRs, rsrc3 " << ki.rsrc3;
    }
    const int64_t macs = mfma_macs(k.stats), count = mfma_count(k.stats);
    if (w.tile_kv > 0) {
      EXPECT_GT(w.total(), 0) << "a test shape walks some tile";
      EXPECT_EQ(macs, w.total() * w.tile_macs) << "MFMA multiply-accumulates against " << w.total() << " tiles of "
                                               << w.tile_macs;
      EXPECT_EQ(count % std::max<int64_t>(1, w.total()), 0) << count << " MFMAs over " << w.total() << " tiles";
      std::printf("    %-20s grid %ux%ux%u x %u, LDS %u, %d VGPRs: %lld tiles of %d keys (most %d a workgroup, "
                  "%lld of %lld busy), %lld MFMAs = %lld a tile, %llu instr\n",
                  w.role.c_str(), k.grid.x, k.grid.y, k.grid.z, k.block.x, k.lds_bytes, k.vgprs,
                  static_cast<long long>(w.total()), w.tile_kv, w.most(), static_cast<long long>(w.busy()),
                  static_cast<long long>(w.workgroups()), static_cast<long long>(count),
                  static_cast<long long>(count / std::max<int64_t>(1, w.total())),
                  static_cast<unsigned long long>(k.stats.instructions));
    } else {
      EXPECT_EQ(count, 0) << w.role << " runs no MFMA";
      std::printf("    %-20s grid %ux%ux%u x %u, LDS %u, %d VGPRs: %lld %s, %llu instr\n", w.role.c_str(), k.grid.x,
                  k.grid.y, k.grid.z, k.block.x, k.lds_bytes, k.vgprs, static_cast<long long>(w.total()),
                  w.unit.c_str(), static_cast<unsigned long long>(k.stats.instructions));
    }
  }
}

// A checked run: every launch passes, and its work list matches what ran.
template <class Run>
void check_run(HipattnFamily family, emu::Gfx gfx, Run&& run) {
  const auto t0 = std::chrono::steady_clock::now();
  HipattnRun r;
  try {
    r = run();
  } catch (const emu::Error& e) {
    FAIL() << "emulator " << emu::kind_name(e.kind) << ": " << e.what();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("  %s (%.1f s)\n", r.label.c_str(), s);
  ASSERT_FALSE(r.launches.empty());
  for (const KernelRun& k : r.launches) {
    EXPECT_TRUE(k.checked);
    EXPECT_GT(k.compared, 0);
    EXPECT_TRUE(k.pass()) << k.bad << " of " << k.compared << " out of tolerance; " << k.detail << " ["
                          << k.label << "]";
  }
  EXPECT_TRUE(r.pass());
  std::printf("    checked %lld: max|err| %.2e, max rel %.2e (%s)\n", static_cast<long long>(r.launches[0].compared),
              r.launches[0].max_abs_err, r.launches[0].max_rel_err, r.launches[0].detail.c_str());
  expect_consistent(r, family, gfx);
}

// ---- 1. dense prefill ----

std::vector<DensePrefillProblem> dense_shapes() {
  std::vector<DensePrefillProblem> v;
  // d128 bf16 causal: two q-blocks of the skeleton's 64 rows, one of gfx950's 128 (ping-pong), GQA 2
  v.push_back({.bf16 = true, .d_qk = 128, .d_v = 128, .causal = true, .batch = 1, .heads_q = 2, .heads_kv = 1,
               .seqlen_q = 80, .seqlen_k = 80, .seed = 11});
  // d128 bf16 non-causal, two sequences, more keys than queries
  v.push_back({.bf16 = true, .d_qk = 128, .d_v = 128, .causal = false, .batch = 2, .heads_q = 2, .heads_kv = 2,
               .seqlen_q = 40, .seqlen_k = 70, .seed = 12});
  // (192, 128) bf16 causal, a chunk against a longer context
  v.push_back({.bf16 = true, .d_qk = 192, .d_v = 128, .causal = true, .batch = 1, .heads_q = 2, .heads_kv = 1,
               .seqlen_q = 40, .seqlen_k = 72, .seed = 13});
  // d256 bf16 causal, two sequences
  v.push_back({.bf16 = true, .d_qk = 256, .d_v = 256, .causal = true, .batch = 2, .heads_q = 2, .heads_kv = 2,
               .seqlen_q = 36, .seqlen_k = 50, .seed = 14});
  return v;
}

TEST(HipattnRuns, DensePrefill) {
  for (emu::Gfx g : kTargets) {
    SKIP_WITHOUT(HipattnFamily::dense_prefill, g);
    for (const DensePrefillProblem& p : dense_shapes()) {
      SCOPED_TRACE(std::string(emu::gfx_name(g)) + " " + p.str());
      check_run(HipattnFamily::dense_prefill, g, [&] { return run_dense_prefill(p, g, true); });
    }
  }
}

// ---- 2. fp8 prefill (the fp8 matrix path) ----

TEST(HipattnRuns, Fp8Prefill) {
  for (emu::Gfx g : kTargets) {
    SKIP_WITHOUT(HipattnFamily::unified, g);
    Fp8PrefillProblem p{.d = 128, .causal = true, .batch = 1, .heads_q = 4, .heads_kv = 2, .seqlen_q = 48,
                        .seqlen_k = 80, .page_size = 16, .options = {}, .seed = 21};
    SCOPED_TRACE(std::string(emu::gfx_name(g)) + " " + p.str());
    check_run(HipattnFamily::unified, g, [&] { return run_fp8_prefill(p, g, true); });
    // the 3D split (uniform segments and the reduce) of a longer context
    p.seqlen_q = 20;
    p.seqlen_k = 150;
    p.options.path = UnifiedPath::three_d;
    p.seed = 22;
    check_run(HipattnFamily::unified, g, [&] { return run_fp8_prefill(p, g, true); });
  }
}

// ---- 3. MLA decode ----

TEST(HipattnRuns, MlaDecode) {
  for (emu::Gfx g : kTargets) {
    SKIP_WITHOUT(HipattnFamily::mla_decode, g);
    // bf16 cache; a small batch is planned (the planner, the kernel, the reduce)
    const MlaDecodeProblem a{.bf16 = true, .fp8_kv = false, .batch = 2, .heads = 16, .ctx = 100, .q_len = 1,
                             .page_size = 64, .options = {}, .seed = 31};
    // the target's fp8 cache, MTP 2, pages of 17 slots
    const MlaDecodeProblem b{.bf16 = true, .fp8_kv = true, .batch = 1, .heads = 16, .ctx = 70, .q_len = 2,
                             .page_size = 17, .options = {}, .seed = 32};
    // one task a sequence (forced): the kernel alone
    MlaDecodeProblem c = a;
    c.options.split = MlaDecodeSplit::one_partition;
    c.seed = 33;
    for (const MlaDecodeProblem& p : {a, b, c}) {
      SCOPED_TRACE(std::string(emu::gfx_name(g)) + " " + p.str());
      check_run(HipattnFamily::mla_decode, g, [&] { return run_mla_decode(p, g, true); });
    }
  }
}

// ---- 4. paged decode ----

TEST(HipattnRuns, PagedDecode) {
  for (emu::Gfx g : kTargets) {
    SKIP_WITHOUT(HipattnFamily::paged_decode, g);
    // GQA 8 (64 / 8 heads), d128 bf16: the decode tile, uniform segments and the reduce
    const PagedDecodeProblem a{.bf16 = true, .batch = 2, .heads_q = 64, .heads_kv = 8, .head_size = 128, .ctx = 100,
                               .page_size = 16, .q_len = 1, .seed = 41};
    // q_len 4 (32 rows a kv head: the prefill tile), pages of 32
    const PagedDecodeProblem b{.bf16 = true, .batch = 1, .heads_q = 16, .heads_kv = 2, .head_size = 128, .ctx = 90,
                               .page_size = 32, .q_len = 4, .seed = 42};
    // the device planner's tasks (forced), contexts of 300 keys
    PagedDecodeProblem c = a;
    c.ctx = 300;
    c.options.split = PagedDecodeSplit::planned;
    c.seed = 44;
    for (const PagedDecodeProblem& p : {a, b, c}) {
      SCOPED_TRACE(std::string(emu::gfx_name(g)) + " " + p.str());
      check_run(HipattnFamily::paged_decode, g, [&] { return run_paged_decode(p, g, true); });
    }
  }
}

// ---- 5. unified ----

// A scenario with its lengths divided by `by` (at least one query where there was one, one key), so
// that the emulator runs it in seconds.
UnifiedProblem reduced(const std::string& name, int by, int max_seqs) {
  UnifiedProblem u = unified_scenario(name, 51);
  std::vector<std::pair<int, int>> seqs;
  for (auto [q, k] : u.spec.seqs) {
    if (int(seqs.size()) == max_seqs) break;
    const int q2 = q <= 1 ? q : std::max(1, q / by);
    seqs.push_back({q2, std::max(q2, k / by)});
  }
  u.spec.seqs = seqs;
  return u;
}

TEST(HipattnRuns, Unified) {
  for (emu::Gfx g : kTargets) {
    SKIP_WITHOUT(HipattnFamily::unified, g);
    std::vector<UnifiedProblem> v;
    v.push_back(reduced("mixed_d128_b16", 8, 3));         // decode rows next to prefill chunks (2D)
    v.push_back(reduced("decode_d128_b16", 16, 3));       // decode batch: 3D split and the reduce
    v.push_back(reduced("combo_bf16_d64_b32_gqa8_16x2", 16, 2));
    v.push_back(reduced("alibi_decode_d128_b16", 16, 2));  // the full variant
    {
      UnifiedProblem u = reduced("serve_decode_mixed_15x2k_1x128k", 64, 4);
      u.spec.seqs.back().second = 900;  // one long sequence among short ones: the device planner's tasks
      u.options.path = UnifiedPath::three_d;
      u.options.split = UnifiedSplit::planned;
      v.push_back(u);
    }
    {
      // serve_prefill_1x4k reduced with the full problem's plan (2D; alone, the small grid would split)
      UnifiedProblem u = reduced("serve_prefill_1x4k", 32, 1);
      u.options = unified_plan_options(unified_scenario("serve_prefill_1x4k"), g);
      EXPECT_EQ(u.options.path, UnifiedPath::two_d);
      v.push_back(u);
    }
    for (const UnifiedProblem& u : v) {
      SCOPED_TRACE(std::string(emu::gfx_name(g)) + " " + u.str());
      check_run(HipattnFamily::unified, g, [&] { return run_unified(u, g, true); });
    }
  }
}

// Each launch of a run gets the options its index and manifest ask for.
TEST(HipattnRuns, LaunchOptionsPerLaunch) {
  const emu::Gfx g = emu::Gfx::gfx942;
  SKIP_WITHOUT(HipattnFamily::paged_decode, g);
  const PagedDecodeProblem p{.bf16 = true, .batch = 2, .heads_q = 16, .heads_kv = 2, .head_size = 128, .ctx = 80,
                             .page_size = 16, .q_len = 1, .seed = 43};
  std::vector<std::string> seen;
  const HipattnRun r = run_paged_decode(p, g, false, [&](size_t i, const std::string& m) {
    EXPECT_EQ(i, seen.size());
    seen.push_back(m);
    emu::LaunchOptions o;
    o.max_instructions = 50'000'000;
    return o;
  });
  ASSERT_EQ(seen.size(), r.launches.size());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], r.work.launches[i].manifest);
  EXPECT_FALSE(r.launches[0].checked);
  EXPECT_FALSE(r.pass());  // not checked
  // a limit the kernel exceeds is the emulator's error, through the options
  EXPECT_THROW(run_paged_decode(p, g, false, [](size_t, const std::string&) {
                 emu::LaunchOptions o;
                 o.max_instructions = 1000;
                 return o;
               }),
               emu::Error);
}

// ---- full-size work lists (nothing runs; no code object needed) ----

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void print_work(const WorkList& w) {
  std::printf("  %s\n", w.label.c_str());
  for (const LaunchWork& l : w.launches)
    std::printf("    %-20s grid %ux%ux%u x %u: %lld %s (most %d a workgroup, %lld of %lld busy)\n", l.role.c_str(),
                l.grid.x, l.grid.y, l.grid.z, l.block.x, static_cast<long long>(l.total()), l.unit.c_str(), l.most(),
                static_cast<long long>(l.busy()), static_cast<long long>(l.workgroups()));
}

TEST(HipattnWork, DensePrefillClosedForms) {
  for (emu::Gfx g : kTargets)
    for (int d : {128, 192, 256}) {
      DensePrefillProblem p{.bf16 = true, .d_qk = d, .d_v = d == 192 ? 128 : d, .causal = false, .batch = 2,
                            .heads_q = 32, .heads_kv = 8, .seqlen_q = 4096, .seqlen_k = 4096};
      const WorkList nc = dense_prefill_work(p, g);
      ASSERT_EQ(nc.launches.size(), 1u);
      const LaunchWork& a = nc.launches[0];
      const int64_t qb = ceil_div(4096, a.tile_rows), kt = ceil_div(4096, a.tile_kv);
      EXPECT_EQ(a.grid.x, 32u);
      EXPECT_EQ(int64_t(a.grid.y), 2 * qb);
      EXPECT_EQ(a.total(), 2 * 32 * qb * kt) << nc.label;
      EXPECT_EQ(a.busy(), a.workgroups());
      // bottom-right causal, square: q-block i sees keys [0, (i + 1) rows)
      p.causal = true;
      const WorkList c = dense_prefill_work(p, g);
      int64_t want = 0;
      for (int64_t i = 0; i < qb; ++i) want += ceil_div((i + 1) * a.tile_rows, a.tile_kv);
      EXPECT_EQ(c.launches[0].total(), 2 * 32 * want) << c.label;
      // heaviest first: the first row of workgroups walks every tile
      EXPECT_EQ(c.launches[0].work[0], kt);
      print_work(c);
    }
}

TEST(HipattnWork, MlaAndPagedClosedForms) {
  for (emu::Gfx g : kTargets) {
    // MLA: 128 sequences of 128 heads fill the device: one task a sequence, every tile of every row block
    const MlaDecodeProblem m{.bf16 = true, .fp8_kv = true, .batch = 128, .heads = 128, .ctx = 8192, .q_len = 1,
                             .page_size = 64};
    const WorkList mw = mla_decode_work(m, g);
    print_work(mw);
    ASSERT_EQ(mw.launches.size(), 1u) << mw.label;
    const LaunchWork& a = mw.launches[0];
    EXPECT_EQ(a.total(), int64_t(a.grid.x) * ceil_div(8192, a.tile_kv));
    EXPECT_EQ(a.grid.x % 128, 0u);
    // MLA: one sequence planned over the device (the planner, the kernel, the reduce): its tiles once
    // a row block
    const MlaDecodeProblem m1{.bf16 = true, .fp8_kv = false, .batch = 1, .heads = 16, .ctx = 65536, .q_len = 1,
                              .page_size = 64};
    const WorkList m1w = mla_decode_work(m1, g);
    print_work(m1w);
    ASSERT_EQ(m1w.launches.size(), 3u) << m1w.label;
    EXPECT_EQ(m1w.attention().total(), ceil_div(65536, m1w.attention().tile_kv));
    // paged decode, GQA 8, 64 x 8K: every (sequence, kv head) walks its context's tiles once, in
    // whatever segments or tasks
    const PagedDecodeProblem p{.bf16 = true, .batch = 64, .heads_q = 64, .heads_kv = 8, .head_size = 128, .ctx = 8192,
                               .page_size = 16, .q_len = 1};
    const WorkList pw = paged_decode_work(p, g);
    print_work(pw);
    EXPECT_EQ(pw.attention().total(), 64 * 8 * ceil_div(8192, pw.attention().tile_kv)) << pw.label;
    const PagedDecodeProblem p1{.bf16 = true, .batch = 1, .heads_q = 64, .heads_kv = 8, .head_size = 128, .ctx = 131072,
                                .page_size = 16, .q_len = 1};
    const WorkList p1w = paged_decode_work(p1, g);
    print_work(p1w);
    EXPECT_EQ(p1w.attention().total(), 8 * ceil_div(131072, p1w.attention().tile_kv)) << p1w.label;
  }
}

// Every scenario of the table on both targets: the automatic plan's work, and for a split plan its
// total equal to the forced 2D grid's (the same tile walks the same tiles of every q-block and head,
// cut into segments or tasks).
TEST(HipattnWork, UnifiedScenarios) {
  const auto names = unified_scenario_names();
  EXPECT_EQ(unified_scenario_names("default").size(), 13u);
  for (emu::Gfx g : kTargets)
    for (const std::string& n : names) {
      SCOPED_TRACE(std::string(emu::gfx_name(g)) + " " + n);
      const UnifiedProblem u = unified_scenario(n);
      const WorkList w = unified_work(u, g);
      print_work(w);
      for (const LaunchWork& l : w.launches) EXPECT_EQ(int64_t(l.work.size()), l.workgroups());
      const LaunchWork& a = w.attention();
      EXPECT_GT(a.total(), 0);
      if (a.role == "unified_3d") {
        UnifiedProblem u2 = u;
        u2.options.path = UnifiedPath::two_d;
        u2.options.pipeline = UnifiedPipeline::skeleton;
        const WorkList w2 = unified_work(u2, g);
        ASSERT_EQ(w2.attention().tile_kv, a.tile_kv);
        EXPECT_EQ(a.total(), w2.attention().total()) << w.label << " against " << w2.label;
      }
    }
  // fp8 prefill at serving size: the q8 instance
  for (emu::Gfx g : kTargets) {
    const WorkList w = fp8_prefill_work({.d = 128, .causal = true, .batch = 1, .heads_q = 32, .heads_kv = 8,
                                         .seqlen_q = 4096, .seqlen_k = 4096, .page_size = 16, .options = {}},
                                        g);
    print_work(w);
    EXPECT_NE(w.attention().manifest.find("_q8 "), std::string::npos);
  }
}

}  // namespace
}  // namespace hipattn::timing
