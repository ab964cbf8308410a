// tests/emu/emu_paged_decode.hpp: a paged-decode problem (tests/common/decode_problem.hpp) on the
// emulator, shared by tests/emu/test_emu_paged_decode.cpp and the timing harness
// (tests/timing/hipattn_runs.cpp): the manifests and configuration paged_decode() launches on a CDNA
// target, the problem's emulated buffers (EmuDecodeProblem), its float64 reference, one run of what
// paged_decode() launches (run_on_emulator: the planner, the kernel, the reduce, with the dispatcher's
// own plan, argument and geometry builders), and the comparison of every output element and LSE.
#pragma once
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../common/decode_problem.hpp"
#include "emu.hpp"
#include "emu_dispatch.hpp"
#include "hipattn/dispatch/paged_decode_launch.hpp"
#include "hipattn/kernels/common/task_plan.hpp"
#include "hipattn/problem/paged_decode_rules.hpp"
#include "hipattn/reference/reference.hpp"

namespace hipattn::testing::emu_paged {

using namespace emu_dispatch;

// The manifests CodeObject::find_manifest picks exactly one kernel by (kernels/paged_decode/kernels.hpp,
// kernels/common/task_plan.hpp).
template <class Cfg>
std::string kernel_manifest_text() { return manifest_of<Cfg>("paged_decode"); }
template <class Cfg>
std::string reduce_manifest_text() { return reduce_manifest_of<Cfg>("paged_decode_reduce"); }

// visit_paged_decode_config on the emulated target (its instances are keyed by the target).
template <class F>
void visit_target_config(Target t, const PagedDecodeParams& p, const PagedDecodePlan& plan, F&& f) {
  if (t == Target::gfx950) visit_paged_decode_config<Target::gfx950>(p, plan, f);
  else visit_paged_decode_config<Target::gfx942>(p, plan, f);
}

// ---- a problem in emulated device memory ----

// The problem's tensors, with the query dtype and output format of `io` (problem/fp8_io.hpp:
// emu_dispatch.hpp's IoHost; the default IoSpec: the 16-bit queries and output of the problem).
struct EmuDecodeProblem {
  const DecodeHostProblem& m;
  const IoHost& io;
  emu::Memory mem;
  uint64_t q = 0, k = 0, v = 0, bt = 0, sk = 0, ks = 0, vs = 0, sinks = 0, slopes = 0, out = 0, lse = 0;
  size_t out_bytes = 0, lse_bytes = 0;
  int64_t num_tokens = 0, lse_stride = 0;
  EmuIo eio;  // fp8 query codes, the scales as device scalars, the group scales

  EmuDecodeProblem(const DecodeHostProblem& master, const IoHost& iop) : m(master), io(iop) {
    const HostProblem& h = m.h;
    auto up = [&](const auto& vec, const char* label) -> uint64_t { return vec.empty() ? 0 : mem.upload(vec, label); };
    q = up(h.q, "q");
    k = m.spec.rocm_layout ? up(m.rocm_k, "k_cache (rocm)") : up(h.k_cache, "k_cache");
    v = m.spec.rocm_layout ? up(m.rocm_v, "v_cache (rocm)") : up(h.v_cache, "v_cache");
    bt = up(h.block_table, "block_table");
    sk = up(h.seq_lens_k, "seq_lens_k");
    ks = up(h.k_scale, "k_scale");
    vs = up(h.v_scale, "v_scale");
    sinks = up(h.sinks, "sinks");
    slopes = up(h.alibi_slopes, "alibi_slopes");
    num_tokens = int64_t(m.num_seqs()) * m.q_len();
    out_bytes = std::max<size_t>(16, io.out_bytes());
    out = mem.alloc(out_bytes, "out");
    eio = EmuIo(io, mem);
    lse_stride = std::max<int64_t>(1, num_tokens) + m.spec.lse_pad;
    lse_bytes = size_t(m.spec.num_q_heads) * lse_stride * 4;
    lse = mem.alloc(lse_bytes, "lse");
  }

  // The problem over the emulated buffers (as DecodeBatch::params of the device suite).
  PagedDecodeParams params() const {
    const HostProblem& h = m.h;
    const UnifiedAttentionParams u =
        h.params(dev_ptr(q), dev_ptr(k), dev_ptr(v), static_cast<const int32_t*>(dev_ptr(bt)), nullptr,
                 static_cast<const int32_t*>(dev_ptr(sk)), static_cast<const float*>(dev_ptr(ks)),
                 static_cast<const float*>(dev_ptr(vs)), static_cast<const float*>(dev_ptr(sinks)),
                 static_cast<const float*>(dev_ptr(slopes)), nullptr, dev_ptr(out), nullptr, h.num_blocks);
    PagedDecodeParams p = paged_decode_params_from_unified(u, m.q_len());
    if (m.spec.rocm_layout) set_rocm_layout(p, m.rocm);  // the same values in the rocm layout
    p.lse = m.spec.lse ? static_cast<float*>(dev_ptr(lse)) : nullptr;
    p.lse_stride_head = lse_stride;
    if (m.host_scale()) {
      p.k_scale = p.v_scale = nullptr;
      p.k_scale_value = m.k_scale_value();
      p.v_scale_value = m.v_scale_value();
    }
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

// The float64 reference of every sequence with the I/O of `io` (host pointers: the fp8 codes, the
// scale floats; a device scalar scale is a host pointer here): DecodeHostProblem::reference's path.
inline reference::AttentionResult io_reference(const DecodeHostProblem& m, const IoHost& io) {
  DecodeHostProblem::Gathered g;
  PagedDecodeParams p = m.host_params(m.all(), g);  // every sequence in order: the codes' rows
  io.apply(p, io.q8.data(), &io.q_scale, &io.out_scale, nullptr);
  const float ks = p.k_scale_value_or_one(), vs = p.v_scale_value_or_one();
  return reference::unified_attention(to_unified_params(p, g.cu.data(), &ks, &vs));
}

// ---- one run: plan, pick the configuration, launch, download ----

struct RunResult {
  std::vector<uint8_t> out;  // the output's bytes, in its format
  std::vector<float> lse, group_scale;
  std::string kernel, plan;
  int tasks = 0, most_parts = 0;  // planned: tasks of the device plan, the most of one sequence
  std::string plan_mismatch;      // planned: how the device plan differs from the host plan (empty: equal)
  uint64_t instructions = 0;
  double seconds = 0;
};


// What paged_decode() launches for configuration Cfg (dispatch/paged_decode.hpp
// launch_paged_decode_config): the planner (planned), the kernel, the reduce (planned or uniform).
template <class Cfg>
void launch_config(const emu::CodeObject& co, const PagedDecodeParams& p, const PagedDecodePlan& plan, uint64_t ws,
                   EmuDecodeProblem& ep, RunResult& res, EmuLaunches* log = nullptr) {
  const PagedDecodeGeometry g = make_paged_decode_geometry<Cfg>(p, plan);
  if (g.empty) return;
  const paged_decode_args_t<Cfg> a = make_paged_decode_kernel_args<Cfg>(p, plan, dev_ptr(ws));
  res.kernel = Cfg::name().c_str();
  if (plan.split == SlotSplit::planned) {
    const DecodePlanArgs pa = make_paged_decode_plan_args(p, plan, dev_ptr(ws), Cfg::kBN);
    // The device plan equals the host plan of the same lengths (status, item_task0, every slot).
    const PlannerRun pr = run_planner(co, pa, ep.m.h.seq_lens_k, ep.mem, log);
    res.instructions += pr.instructions;
    res.plan_mismatch = pr.mismatch.empty() ? "" : pr.mismatch + "; " + plan.reason;
    res.tasks = pr.tasks;
    res.most_parts = pr.most_parts;
  }
  res.instructions += launch_kernel(co, kernel_manifest_text<Cfg>(), g.grid, g.threads, g.dynamic_lds, &a, sizeof(a),
                                    ep.mem, log)
                          .instructions;
  if (g.reduce) {
    res.kernel += " + reduce";
    const PagedDecodeReduceArgs r = make_paged_decode_reduce_args(p, plan, dev_ptr(ws));
    res.instructions +=
        launch_kernel(co, reduce_manifest_text<Cfg>(), g.reduce_grid, g.reduce_threads, 0, &r, sizeof(r), ep.mem, log)
            .instructions;
  }
}

// Plans like the dispatcher (kv_copy: the plan's KV loader policy replaced, e.g. by gfx950's
// register-staged fallback of its LDS-DMA instances), poisons the outputs and the workspace, runs
// what paged_decode() launches, and returns what it wrote.
inline RunResult run_on_emulator(const emu::CodeObject& co, const EmuTarget& t, EmuDecodeProblem& ep,
                                 const PagedDecodeOptions& opt, std::optional<CopyModel> kv_copy,
                                 EmuLaunches* log = nullptr) {
  RunResult res;
  const PagedDecodeParams p = ep.params();
  throw_if_error(validate(p));
  PagedDecodePlan plan = plan_paged_decode(p, opt, PlanDevice{t.target, t.cus});
  if (kv_copy) plan.kv_copy = *kv_copy;
  res.plan = std::string(plan.kv_copy == CopyModel::lds_dma ? "dma " : "staged ") +
             tile_kind_name(plan.tile_kind) + " " +
             std::to_string(plan.rows_per_token) + "x" + std::to_string(plan.block_q) +
             (plan.head_chunks > 1 ? " x" + std::to_string(plan.head_chunks) + "ch" : std::string()) + ", " +
             (plan.split == SlotSplit::planned          ? (plan.fixed_tiles > 0 ? "fixed/" : "planned/") + std::to_string(plan.capacity)
              : plan.segments > 1   ? "uniform x" + std::to_string(plan.segments)
                                    : std::string("one partition"));
  uint64_t ws = 0;
  if (plan.workspace_bytes > 0) ws = ep.mem.alloc(plan.workspace_bytes, "workspace");
  ep.poison(ep.out, ep.out_bytes, output_poison_byte(ep.io.out));
  ep.poison(ep.lse, ep.lse_bytes);
  ep.poison(ws, plan.workspace_bytes);
  ep.eio.poison(ep.mem);
  const auto t0 = std::chrono::steady_clock::now();
  visit_target_config(t.target, p, plan, [&]<class Cfg>() { launch_config<Cfg>(co, p, plan, ws, ep, res, log); });
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.out = ep.mem.download<uint8_t>(ep.out, ep.io.out_bytes());
  res.lse = ep.mem.download<float>(ep.lse, ep.lse_bytes / 4);
  res.group_scale = ep.eio.group_scales(ep.mem, ep.io);
  if (plan.split == SlotSplit::planned) res.plan += ", " + std::to_string(res.tasks) + " tasks (<= " + std::to_string(res.most_parts) + " a seq)";
  return res;
}

// ---- comparison (the device suites' tolerances: tests/common/compare.hpp) ----

// Every output element (decoded in its format: emu_dispatch.hpp check_io_outputs), group scale and
// LSE of a run.
inline IoStats compare(const EmuDecodeProblem& ep, const reference::AttentionResult& ref, const RunResult& r) {
  const DecodeHostProblem& m = ep.m;
  IoStats st = check_io_outputs(ep.io, ref, r.out, r.group_scale);
  if (m.spec.lse) {
    for (int64_t hh = 0; hh < m.spec.num_q_heads; ++hh)
      for (int64_t t = 0; t < ep.num_tokens; ++t) {
        const double got = r.lse[size_t(hh * ep.lse_stride + t)], want = ref.lse[size_t(hh * ep.num_tokens + t)];
        ++st.checked;
        const bool ok = std::isinf(want) ? (got == want)
                                         : std::fabs(got - want) <= kLseTolerance.atol + kLseTolerance.rtol * std::fabs(want);
        if (!ok)
          st.fail("lse[head " + std::to_string(hh) + ", token " + std::to_string(t) + "] = " + std::to_string(got) +
                  ", want " + std::to_string(want));
        if (!std::isinf(want)) st.max_lse = std::max(st.max_lse, std::isfinite(got) ? std::fabs(got - want) : INFINITY);
      }
  }
  return st;
}

}  // namespace hipattn::testing::emu_paged
