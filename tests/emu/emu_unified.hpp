// tests/emu/emu_unified.hpp: a unified-attention problem (testing/paged_problem.hpp) on the emulator,
// shared by tests/emu/test_emu_unified.cpp and the timing harness (tests/timing/hipattn_runs.cpp): the
// configuration and manifests unified_attention() launches on a CDNA target, the problem's emulated
// buffers (EmuProblem) with the I/O of problem/fp8_io.hpp, its float64 reference, one run of what
// unified_attention() launches (run_on_emulator / run_planned: the 2D kernel, or the planner, the 3D
// kernel and the reduce, with the dispatcher's own plan, argument and geometry builders), and the
// comparison of every output element, group scale and LSE.
#pragma once
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../../testing/paged_problem.hpp"
#include "emu.hpp"
#include "emu_dispatch.hpp"
#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/problem/unified_rules.hpp"
#include "hipattn/reference/reference.hpp"

namespace hipattn::testing::emu_unified {

using namespace emu_dispatch;

// visit_unified_config (dispatch/unified_launch.hpp) on the emulated target: its instances are keyed
// by the target, so a gfx950 run looks up the gfx950 kernels (the gfx942 ones are empty there).
template <class F>
void visit_target_config(Target t, const UnifiedAttentionParams& p, const UnifiedPlan& plan, F&& f) {
  if (t == Target::gfx950) visit_unified_config<Target::gfx950>(p, plan, f);
  else visit_unified_config<Target::gfx942>(p, plan, f);
}


// The manifests CodeObject::find_manifest picks exactly one kernel by (kernels/unified/kernels.hpp).
template <class Cfg>
std::string kernel_2d_manifest() { return manifest_of<Cfg>("unified_2d"); }
template <class Cfg>
std::string kernel_3d_manifest() { return manifest_of<Cfg>("unified_3d"); }
template <class Cfg>
std::string reduce_manifest_text() { return reduce_manifest_of<Cfg>("split_kv_reduce"); }

// ---- a problem in emulated device memory ----

// The problem's tensors, with the query dtype and output format of `io` (problem/fp8_io.hpp:
// emu_dispatch.hpp's IoHost; the default IoSpec: the 16-bit queries and output of the problem).
struct EmuProblem {
  const HostProblem& h;
  const IoHost& io;
  emu::Memory mem;
  uint64_t q = 0, k = 0, v = 0, bt = 0, cu = 0, sk = 0, ks = 0, vs = 0, sinks = 0, slopes = 0, qq = 0, out = 0, lse = 0;
  size_t out_bytes = 0, lse_bytes = 0;
  EmuIo eio;  // fp8 query codes, the scales as device scalars, the group scales

  EmuProblem(const HostProblem& hp, const IoHost& iop) : h(hp), io(iop) {
    auto up = [&](const auto& vec, const char* label) -> uint64_t { return vec.empty() ? 0 : mem.upload(vec, label); };
    q = up(h.q, "q");
    k = up(h.k_cache, "k_cache");
    v = up(h.v_cache, "v_cache");
    bt = up(h.block_table, "block_table");
    cu = up(h.cu_seqlens_q, "cu_seqlens_q");
    sk = up(h.seq_lens_k, "seq_lens_k");
    ks = up(h.k_scale, "k_scale");
    vs = up(h.v_scale, "v_scale");
    sinks = up(h.sinks, "sinks");
    slopes = up(h.alibi_slopes, "alibi_slopes");
    qq = up(h.qq_bias, "qq_bias");
    out_bytes = io.out_bytes();
    out = mem.alloc(out_bytes, "out");
    eio = EmuIo(io, mem);
    if (h.spec.lse) {
      lse_bytes = h.lse.size() * 4;
      lse = mem.alloc(lse_bytes, "lse");
    }
  }

  UnifiedAttentionParams params() const {
    UnifiedAttentionParams p =
        h.params(dev_ptr(q), dev_ptr(k), dev_ptr(v), static_cast<const int32_t*>(dev_ptr(bt)),
                 static_cast<const int32_t*>(dev_ptr(cu)), static_cast<const int32_t*>(dev_ptr(sk)),
                 static_cast<const float*>(dev_ptr(ks)), static_cast<const float*>(dev_ptr(vs)),
                 static_cast<const float*>(dev_ptr(sinks)), static_cast<const float*>(dev_ptr(slopes)),
                 static_cast<const float*>(dev_ptr(qq)), dev_ptr(out), static_cast<float*>(dev_ptr(lse)), h.num_blocks);
    eio.apply(io, p);
    return p;
  }

  // NaN bytes (`byte`: a NaN of the element type when repeated), so that each element must be written.
  void poison(uint64_t addr, size_t bytes, uint8_t byte = 0xFF) {
    if (addr == 0 || bytes == 0) return;
    const std::vector<uint8_t> nan(bytes, byte);
    mem.write(addr, nan.data(), bytes);
  }
};

// The float64 reference of a problem with the I/O of `io` (host pointers: the fp8 codes, the scale
// floats; a device scalar scale is a host pointer here).
inline reference::AttentionResult io_reference(HostProblem& h, const IoHost& io) {
  UnifiedAttentionParams hp = h.host_params();
  io.apply(hp, io.q8.data(), &io.q_scale, &io.out_scale, nullptr);
  return reference::unified_attention(hp);
}

// ---- one run: plan, pick the instance, launch, download ----

struct RunResult {
  std::vector<uint8_t> out;  // the output's bytes, in its format
  std::vector<float> lse, group_scale;
  std::string kernel, plan;
  int plan_tasks = 0;  // planned 3D: tasks of the device plan
  std::string plan_mismatch;  // planned 3D: how the device plan differs from the host plan (empty: equal)
  uint64_t instructions = 0;
  double seconds = 0;
};


// The kernels of configuration Cfg for (p, plan): 2D, or 3D and the reduce, with the dispatcher's
// own argument and geometry builders.
template <class Cfg>
void launch_config(const emu::CodeObject& co, const UnifiedAttentionParams& p, const UnifiedPlan& plan, uint64_t ws,
                   EmuProblem& ep, RunResult& res, EmuLaunches* log = nullptr) {
  const auto args = make_unified_kernel_args<Cfg>(p, plan, dev_ptr(ws));
  const UnifiedLaunchGeometry g = make_unified_launch_geometry<Cfg>(p, plan);
  if (g.empty) return;
  if (g.split && plan.grid == UnifiedGrid::split_planned) {
    // The device planner's tasks for these lengths (plan_decode_tasks_kernel, as unified_attention()
    // launches it), which must equal the host plan of the same lengths.
    const DecodePlanArgs pa = make_unified_plan_args(p, plan, dev_ptr(ws), Cfg::kBN);
    const PlannerRun pr = run_planner(co, pa, ep.h.seq_lens_k, ep.mem, log);
    res.instructions += pr.instructions;
    res.plan_mismatch = pr.mismatch;
    res.plan_tasks = pr.tasks;
  }
  if (!g.split) {
    res.kernel = Cfg::name().c_str();
    res.instructions += launch_kernel(co, kernel_2d_manifest<Cfg>(), g.grid, g.threads, g.dynamic_lds, &args,
                                      sizeof(args), ep.mem, log).instructions;
  } else {
    res.kernel = std::string(Cfg::name().c_str()) + " + reduce";
    res.instructions += launch_kernel(co, kernel_3d_manifest<Cfg>(), g.grid, g.threads, g.dynamic_lds, &args,
                                      sizeof(args), ep.mem, log).instructions;
    const SplitKvReduceArgs r = make_split_kv_reduce_args(p, plan, dev_ptr(ws), Cfg::kD);
    res.instructions += launch_kernel(co, reduce_manifest_text<Cfg>(), g.reduce_grid, g.reduce_threads, 0, &r, sizeof(r),
                                      ep.mem, log).instructions;
  }
}

// Plans like the dispatcher (kv_copy: the plan's KV loader policy replaced, e.g. by gfx950's
// register-staged fallback for large caches), poisons the outputs, then launch(p, plan, ws) runs
// the kernels; returns what they wrote.
template <class Launch>
RunResult run_planned(const EmuTarget& t, EmuProblem& ep, UnifiedPath path, int segments,
                      std::optional<CopyModel> kv_copy, Launch&& launch, UnifiedSplit split = UnifiedSplit::automatic,
                      UnifiedPipeline pipeline = UnifiedPipeline::automatic) {
  RunResult res;
  const UnifiedAttentionParams p = ep.params();
  throw_if_error(validate(p));
  UnifiedOptions opt;
  opt.path = path;
  opt.num_segments = segments;
  opt.split = split;
  opt.pipeline = pipeline;
  UnifiedPlan plan = plan_unified_attention(p, opt, PlanDevice{t.target, t.cus});
  if (kv_copy) plan.kv_copy = *kv_copy;
  res.plan = std::string(plan.tile_kind == UnifiedTileKind::decode ? "decode" : "prefill") +
             (plan.head_chunks > 1 ? " x" + std::to_string(plan.head_chunks) + "ch" : std::string()) + ", " +
             (plan.split() ? (plan.grid == UnifiedGrid::split_planned ? "3D planned/" + std::to_string(plan.capacity)
                                         : "3D x" + std::to_string(plan.num_segments))
                         : std::string("2D"));
  uint64_t ws = 0;
  if (plan.workspace_bytes > 0) ws = ep.mem.alloc(plan.workspace_bytes, "workspace");
  ep.poison(ep.out, ep.out_bytes, output_poison_byte(ep.io.out));
  ep.poison(ep.lse, ep.lse_bytes);
  ep.poison(ws, plan.workspace_bytes);
  ep.eio.poison(ep.mem);
  const auto t0 = std::chrono::steady_clock::now();
  launch(p, plan, ws, res);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.out = ep.mem.download<uint8_t>(ep.out, ep.out_bytes);
  if (ep.lse) res.lse = ep.mem.download<float>(ep.lse, ep.h.lse.size());
  res.group_scale = ep.eio.group_scales(ep.mem, ep.io);
  return res;
}

// ---- comparison (the device suite's tolerances) ----

// Every output element (decoded in its format: emu_dispatch.hpp check_io_outputs), group scale and
// LSE of a run.
inline IoStats compare(const HostProblem& h, const IoHost& io, const reference::AttentionResult& ref, const RunResult& r) {
  IoStats st = check_io_outputs(io, ref, r.out, r.group_scale);
  if (h.spec.lse) {
    for (size_t i = 0; i < size_t(h.spec.num_q_heads) * h.num_tokens; ++i) {
      const double got = r.lse[i], want = ref.lse[i];
      ++st.checked;
      const bool ok = std::isinf(want) ? (got == want)
                                       : std::fabs(got - want) <= kLseTolerance.atol + kLseTolerance.rtol * std::fabs(want);
      if (!ok) st.fail("lse[" + std::to_string(i) + "] = " + std::to_string(got) + ", want " + std::to_string(want));
      if (!std::isinf(want)) st.max_lse = std::max(st.max_lse, std::isfinite(got) ? std::fabs(got - want) : INFINITY);
    }
  }
  return st;
}

// The instance the dispatcher picks for the plan.
inline RunResult run_on_emulator(const emu::CodeObject& co, const EmuTarget& t, EmuProblem& ep, UnifiedPath path,
                                 int segments, std::optional<CopyModel> kv_copy = std::nullopt,
                                 UnifiedSplit split = UnifiedSplit::automatic,
                                 UnifiedPipeline pipeline = UnifiedPipeline::automatic, EmuLaunches* log = nullptr) {
  return run_planned(
      t, ep, path, segments, kv_copy,
      [&](const UnifiedAttentionParams& p, const UnifiedPlan& plan, uint64_t ws, RunResult& res) {
        visit_target_config(t.target, p, plan, [&]<class Cfg>() { launch_config<Cfg>(co, p, plan, ws, ep, res, log); });
      },
      split, pipeline);
}

}  // namespace hipattn::testing::emu_unified
