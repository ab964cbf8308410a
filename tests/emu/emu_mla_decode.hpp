// tests/emu/emu_mla_decode.hpp: an MLA decode problem (tests/common/mla_problem.hpp) on the emulator,
// shared by tests/emu/test_emu_mla_decode.cpp and the timing harness (tests/timing/hipattn_runs.cpp):
// the manifests and configuration mla_decode() launches on a CDNA target, the problem's emulated
// buffers (EmuMla) and one run of what mla_decode() launches (run_on_emulator: the planner, the kernel,
// the reduce, with the dispatcher's own plan and argument builders).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "../common/mla_problem.hpp"
#include "emu.hpp"
#include "emu_dispatch.hpp"
#include "hipattn/dispatch/mla_decode.hpp"

namespace hipattn::testing::emu_mla {

using namespace emu_dispatch;
using namespace mla_test;

// The manifests CodeObject::find_manifest picks exactly one kernel by: a configuration's kernel
// (kernels/mla_decode/kernels.hpp: kernel=mla_decode, MlaDecodeCdnaConfig::name()) and the reduce
// mla_decode() launches (dispatch/mla_decode.hpp: paged_decode_reduce over the 512 latent columns).
template <class Cfg>
std::string kernel_manifest_text() {
  return manifest_of<Cfg>("mla_decode");
}
inline std::string reduce_manifest_text(bool bf16) {
  return reduce_manifest("paged_decode_reduce", bf16, kMlaLatentDim, split_kv_reduce_threads(kMlaLatentDim)).c_str();
}

// The configuration mla_decode() launches for (target, compute dtype bf16 or f16, cache dtype, the
// fp8 matrix path: mla_decode_cdna_q8).
template <class F>
void visit_config(Target t, bool bf16, DType kv, bool q8, F&& f) {
  const auto on = [&]<Target kT>() {
    const auto with = [&]<bool kBf16>() {
      constexpr KvKind kQ8 = kT == Target::gfx942 ? KvKind::e4m3fnuz_q8 : KvKind::e4m3fn_q8;
      if (q8) f.template operator()<MlaDecodeCdnaConfig<kT, kBf16, kQ8>>();
      else if (kv == DType::fp8_e4m3fn) f.template operator()<MlaDecodeCdnaConfig<kT, kBf16, KvKind::e4m3fn>>();
      else if (kv == DType::fp8_e4m3fnuz) f.template operator()<MlaDecodeCdnaConfig<kT, kBf16, KvKind::e4m3fnuz>>();
      else f.template operator()<MlaDecodeCdnaConfig<kT, kBf16, KvKind::same16>>();
    };
    if (bf16) with.template operator()<true>();
    else with.template operator()<false>();
  };
  if (t == Target::gfx950) on.template operator()<Target::gfx950>();
  else on.template operator()<Target::gfx942>();
}

// The problem's storage in the emulator's memory.
struct EmuMla {
  const MlaHost& h;
  emu::Memory mem;
  uint64_t q = 0, q_nope = 0, q_rope = 0, kv = 0, bt = 0, lens = 0, scale = 0, q_scale = 0, out = 0, lse = 0, out_scale = 0,
           gs = 0;
  explicit EmuMla(const MlaHost& hp) : h(hp) {
    q = mem.upload(h.q, "q");
    if (h.s.split_q) {
      q_nope = mem.upload(h.q_nope, "q_nope");
      q_rope = mem.upload(h.q_rope, "q_rope");
    }
    kv = mem.upload(h.kv, "kv_cache");
    bt = mem.upload(h.bt, "block_table");
    lens = mem.upload(h.lens, "seq_lens_k");
    scale = mem.upload(std::vector<float>{h.kv_scale}, "kv_scale");
    q_scale = mem.upload(std::vector<float>{h.q_scale}, "q_scale");
    out = mem.alloc(h.out_bytes(), "out");
    lse = mem.alloc(h.lse_bytes(), "lse");
    out_scale = mem.upload(std::vector<float>{h.output.tensor_scale}, "out_scale");
    gs = mem.alloc(h.group_scale_bytes(), "group_scale");
  }
  MlaDecodeParams params() const {
    MlaBuffers b;
    b.q = dev_ptr(q);
    b.q_nope = dev_ptr(q_nope);
    b.q_rope = dev_ptr(q_rope);
    b.kv = dev_ptr(kv);
    b.block_table = static_cast<const int32_t*>(dev_ptr(bt));
    b.seq_lens_k = static_cast<const int32_t*>(dev_ptr(lens));
    b.kv_scale = static_cast<const float*>(dev_ptr(scale));
    b.q_scale = static_cast<const float*>(dev_ptr(q_scale));
    b.out = dev_ptr(out);
    b.lse = static_cast<float*>(dev_ptr(lse));
    b.out_scale = static_cast<const float*>(dev_ptr(out_scale));
    b.group_scale = static_cast<float*>(dev_ptr(gs));
    return h.params(b);
  }
  void fill(uint64_t addr, size_t bytes, uint8_t byte) {
    const std::vector<uint8_t> v(bytes, byte);
    if (bytes > 0) mem.write(addr, v.data(), bytes);
  }
};

struct RunResult {
  MlaOut got;
  std::string plan;
  bool q8 = false;  // the fp8 matrix path ran
  std::string plan_mismatch;  // planned: how the device planner's tasks differ from the host plan (empty: equal)
  uint64_t instructions = 0;
  double seconds = 0;
};

// Plans like mla_decode() on target t, poisons the outputs and the workspace, launches the planner
// (planned), the kernel and the reduce (planned), and returns what they wrote.
inline RunResult run_on_emulator(const emu::CodeObject& co, const EmuTarget& t, EmuMla& em, const MlaDecodeOptions& opt,
                                 EmuLaunches* log = nullptr) {
  RunResult res;
  const MlaDecodeParams p = em.params();
  throw_if_error(validate(p));
  const MlaDecodePlan plan = plan_mla_decode(p, opt, PlanDevice{t.target, t.cus});
  res.plan = std::string(mla_decode_cdna_q8(p.q_dtype, p.kv_dtype, t.target) ? "q8, " : "") +
             std::to_string(plan.rows_per_token) + "x" + std::to_string(plan.block_q) + " rows, " +
             std::to_string(plan.row_blocks) + " row blocks, " +
             (plan.split == SlotSplit::planned ? "planned/" + std::to_string(plan.capacity) : std::string("one partition"));
  uint64_t ws = 0;
  if (plan.workspace_bytes > 0) ws = em.mem.alloc(plan.workspace_bytes, "workspace");
  em.fill(em.out, em.h.out_bytes(), output_poison_byte(em.h.output.dtype));
  em.fill(em.lse, em.h.lse_bytes(), 0xFF);
  em.fill(em.gs, em.h.group_scale_bytes(), 0xFF);
  em.fill(ws, plan.workspace_bytes, 0xFF);
  const auto t0 = std::chrono::steady_clock::now();
  if (plan.split == SlotSplit::planned) {
    const DecodePlanArgs pa = make_mla_decode_plan_args(p, plan, dev_ptr(ws));
    // the device plan equals the host plan of the same lengths
    const PlannerRun pr = run_planner(co, pa, em.h.lens, em.mem, log);
    res.instructions += pr.instructions;
    res.plan_mismatch = pr.mismatch.empty() ? "" : pr.mismatch + "; " + plan.reason;
  }
  const bool bf16 = compute_dtype(p.q_dtype, p.kv_dtype, output_dtype(p.q_dtype, p.out_format)) == DType::bf16;
  res.q8 = mla_decode_cdna_q8(p.q_dtype, p.kv_dtype, t.target);
  visit_config(t.target, bf16, p.kv_dtype, res.q8, [&]<class Cfg>() {
    const auto a = make_mla_decode_cdna_args<Cfg>(p, plan, dev_ptr(ws));
    const LaunchDim grid{static_cast<uint32_t>(int64_t(plan.capacity) * plan.row_blocks), 1, 1};
    res.instructions +=
        launch_kernel(co, kernel_manifest_text<Cfg>(), grid, Cfg::kThreads, Cfg::kSmemBytes, &a, sizeof(a), em.mem, log)
            .instructions;
  });
  if (plan.split == SlotSplit::planned) {
    const PagedDecodeReduceArgs r = make_mla_decode_reduce_args(p, plan, dev_ptr(ws));
    const int64_t items = int64_t(p.batch) * p.q_len * p.num_heads;
    const int64_t per = split_kv_reduce_items_per_block(kMlaLatentDim);
    const LaunchDim grid{static_cast<uint32_t>((items + per - 1) / per), 1, 1};
    res.instructions += launch_kernel(co, reduce_manifest_text(bf16), grid,
                                      uint32_t(split_kv_reduce_threads(kMlaLatentDim)), 0, &r, sizeof(r), em.mem, log)
                            .instructions;
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.got.out = em.mem.download<uint8_t>(em.out, em.h.out_bytes());
  res.got.lse = em.mem.download<float>(em.lse, em.h.lse_bytes() / 4);
  res.got.group_scale = em.mem.download<float>(em.gs, em.h.group_scale_bytes() / 4);
  return res;
}

}  // namespace hipattn::testing::emu_mla
