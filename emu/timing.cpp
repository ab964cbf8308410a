// emu/timing.cpp: the timing layer (timing.hpp). The rules and their sources are in
// docs/AMD-TIMING.md §7; each block below names the rule it implements.
#include "timing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <functional>
#include <queue>
#include <set>
#include <stdexcept>

#include "core.hpp"

namespace hipattn::emu {

// ---------------------------------------------------------------- parameters
// MI300X (gfx942) and MI355X (gfx950): data-sheet values; the latencies and the clock under load are
// the model's stated estimates and fitted values (docs/AMD-TIMING.md §6).
CuParams mi300x_params() {
  CuParams p;
  p.gfx = Gfx::gfx942;
  p.cus = 304;
  p.peak_clock_ghz = 2.1;
  p.clock_ghz = 1.207;  // AMD's measured bf16 GEMM clock (docs/AMD-TIMING.md §6 row 2); refitted by the tables
  p.lds_banks = 32;
  p.lds_bytes = 64 * 1024;
  p.hbm_tb_s = 4.2;
  p.lat_lds = 27;
  p.trans_clocks = 16;
  return p;
}

CuParams mi355x_params() {
  CuParams p;
  p.gfx = Gfx::gfx950;
  p.cus = 256;
  p.peak_clock_ghz = 2.4;
  p.clock_ghz = 1.8;  // AMD's GEMM model constant (§6 row 2); refitted by the tables
  p.lds_banks = 64;
  p.lds_bytes = 160 * 1024;
  p.hbm_tb_s = 7.2;
  p.lat_lds = 21;
  p.trans_clocks = 8;
  return p;
}

const char* issue_class_name(IssueClass c) {
  switch (c) {
    case IssueClass::valu: return "valu";
    case IssueClass::trans: return "trans";
    case IssueClass::pk_f32: return "pk_f32";
    case IssueClass::mfma: return "mfma";
    case IssueClass::salu: return "salu";
    case IssueClass::smem: return "smem";
    case IssueClass::vmem: return "vmem";
    case IssueClass::lds: return "lds";
    case IssueClass::branch: return "branch";
    case IssueClass::nop: return "nop";
    case IssueClass::waitcnt: return "waitcnt";
    case IssueClass::barrier: return "barrier";
    case IssueClass::setprio: return "setprio";
    case IssueClass::endpgm: return "endpgm";
    case IssueClass::internal: return "internal";
    case IssueClass::unknown: return "unknown";
  }
  return "?";
}

// ---------------------------------------------------------------- instruction classes
namespace {
bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool has(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }

// MFMA passes (4 clocks each) from the shape and the operand type: LLVM's SISchedule.td classes,
// checked against the data-sheet peaks (docs/AMD-TIMING.md section 2). 0: no rule.
int mfma_passes(const std::string& b) {
  int m = 0, n = 0, k = 0;
  const size_t at = b.find("_f32_") != std::string::npos ? b.find("_f32_") + 5 : std::string::npos;
  if (at == std::string::npos || std::sscanf(b.c_str() + at, "%dx%dx%d", &m, &n, &k) != 3) return 0;
  if (has(b, "f8f6f4")) {  // fp8 operands (the only format the emulator runs): twice the passes
    if (m == 16 && k == 128) return 8;
    if (m == 32 && k == 64) return 16;
    return 0;
  }
  const bool f32 = b.size() >= 4 && b.compare(b.size() - 4, 4, "_f32") == 0 && !has(b, "xf32");
  if (f32) return m == 16 ? 8 : m == 32 ? 16 : 0;  // v_mfma_f32_16x16x4_f32, 32x32x2_f32
  const bool half = has(b, "f16") || has(b, "bf16");
  const bool eight = has(b, "fp8") || has(b, "bf8") || has(b, "i8");
  if (!half && !eight) return 0;
  return m == 16 ? 4 : m == 32 ? 8 : 0;  // 16x16: 4 passes, 32x32: 8 (f16 / bf16 / fp8, both targets)
}
}  // namespace

OpInfo classify(const Instruction& in, Gfx) {
  OpInfo o;
  const std::string& b = in.base;
  auto imm0 = [&]() -> int { return in.ops.empty() ? 0 : int(in.ops[0].ival); };
  if (b == "s_endpgm") o.cls = IssueClass::endpgm;
  else if (b == "s_nop") { o.cls = IssueClass::nop; o.nop = imm0(); }
  else if (b == "s_waitcnt") { o.cls = IssueClass::waitcnt; o.vmcnt = in.mods.vmcnt; o.lgkmcnt = in.mods.lgkmcnt; }
  else if (b == "s_barrier") o.cls = IssueClass::barrier;
  else if (b == "s_setprio") { o.cls = IssueClass::setprio; o.prio = imm0(); }
  else if (b == "s_sleep" || b == "s_icache_inv" || b == "s_ttracedata" || b == "s_sethalt")
    o.cls = IssueClass::internal;
  else if (starts(b, "s_branch") || starts(b, "s_cbranch") || starts(b, "s_setpc") || starts(b, "s_swappc"))
    o.cls = IssueClass::branch;
  else if (starts(b, "s_load") || starts(b, "s_buffer_load") || starts(b, "s_store") || starts(b, "s_buffer_store") ||
           starts(b, "s_dcache") || starts(b, "s_memtime") || starts(b, "s_memrealtime"))
    o.cls = IssueClass::smem;
  else if (starts(b, "s_")) o.cls = IssueClass::salu;
  else if (starts(b, "v_mfma") || starts(b, "v_smfmac")) {
    o.passes = mfma_passes(b);
    o.cls = o.passes > 0 ? IssueClass::mfma : IssueClass::unknown;
    if (in.ops.size() > 1) o.src_bytes = 4 * std::max<int>(in.ops[1].count, in.ops.size() > 2 ? in.ops[2].count : 0);
  } else if (starts(b, "v_exp_") || starts(b, "v_log_") || starts(b, "v_rcp_") || starts(b, "v_rsq_") ||
             starts(b, "v_sqrt_") || starts(b, "v_sin_") || starts(b, "v_cos_"))
    o.cls = has(b, "f64") ? IssueClass::unknown : IssueClass::trans;
  else if (b == "v_pk_fma_f32" || b == "v_pk_mul_f32" || b == "v_pk_add_f32" || b == "v_pk_mov_b32")
    o.cls = IssueClass::pk_f32;
  else if (starts(b, "v_")) o.cls = has(b, "f64") ? IssueClass::unknown : IssueClass::valu;
  else if (starts(b, "ds_")) o.cls = IssueClass::lds;
  else if (starts(b, "buffer_") || starts(b, "global_") || starts(b, "flat_")) {
    o.cls = IssueClass::vmem;
    o.lds_dma = in.mods.lds || has(b, "_lds");
    o.store = has(b, "store") || has(b, "atomic");
  }
  return o;
}

std::vector<std::string> untimed_mnemonics(const CodeObject& co, const KernelInfo& k) {
  std::set<std::string> r;
  for (const auto& in : co.code(k))
    if (classify(in, co.gfx()).cls == IssueClass::unknown) r.insert(in.mnemonic);
  return {r.begin(), r.end()};
}

// ---------------------------------------------------------------- occupancy
// Registers: the descriptor's granulated VGPR count (unified VGPR + AGPR on gfx90a and later,
// granule 8); waves per SIMD = floor(512 / registers), at most 8; a workgroup's waves spread over the
// 4 SIMDs, so the CU holds floor(4 x waves per SIMD / waves a workgroup) workgroups (AMD's occupancy
// rule: wave slots of the CU over the workgroup's waves; a workgroup of 1 or 2 waves takes 1 or 2 of
// the 4 SIMDs, not a slot on each); LDS per CU.
int resident_workgroups(const Trace& t, const CuParams& p) {
  const int regs = ((int(t.kernel.rsrc1) & 0x3F) + 1) * 8;
  const int per_simd = std::min(p.wave_slots_per_simd, p.regs_per_simd_lane / std::max(regs, 8));
  const int waves = std::max(1, int((t.threads + 63) / 64));
  int by_waves = 4 * per_simd / waves;
  int by_lds = t.lds_bytes ? int(p.lds_bytes / t.lds_bytes) : 64;
  return std::max(0, std::min(by_waves, by_lds));
}

// ---------------------------------------------------------------- one CU
namespace {

struct SimWave {
  const std::vector<TraceOp>* ops = nullptr;
  size_t i = 0;
  int simd = 0, slot = 0, prio = 0;
  uint64_t age = 0;
  double ready = 0;
  std::vector<double> vm, lgkm;  // completion clocks, issue order (returns in order)
  bool done = false, at_barrier = false;
  double arrived = 0;
};

struct SimSimd {
  double valu_free = 0, mfma_free = 0, pk_free = 0;
  std::vector<int> waves;  // indices into the wave table, kept by (prio desc, age asc) at issue time
};

// Clock at which at most `n` of the events `v` (in order) are outstanding.
double covered(const std::vector<double>& v, int n) {
  if (n < 0 || v.size() <= size_t(n)) return 0;
  return v[v.size() - 1 - size_t(n)];
}

}  // namespace

CuResult simulate_cu(const Trace& t, const std::vector<int>& wgs, const CuParams& p, double dram_fraction,
                     int resident) {
  CuResult r;
  if (t.code.empty()) throw Error(Error::Kind::launch, "simulate_cu: empty trace");
  const auto& code = t.code;
  std::vector<OpInfo> info(code.size());
  for (size_t i = 0; i < code.size(); ++i) info[i] = classify(code[i], t.gfx);
  if (resident <= 0) resident = resident_workgroups(t, p);
  if (resident <= 0) throw Error(Error::Kind::launch, "simulate_cu: the workgroup does not fit on a CU");
  r.resident = resident;
  const double f = std::clamp(dram_fraction, 0.0, 1.0);
  const double hbm_bpc = p.hbm_bytes_per_clk(), l2_bpc = p.l2_bytes_per_clk();
  const double lat_vm = p.lat_l2() + f * (p.lat_hbm() - p.lat_l2());
  // $HIPATTN_TIMING_DEBUG: print every issue (clock, SIMD, slot, instruction) to stderr
  static const bool debug = std::getenv("HIPATTN_TIMING_DEBUG") != nullptr;

  std::vector<SimWave> waves;
  std::vector<SimSimd> simd(4);
  std::vector<int> slot_wg(size_t(resident), -1);       // position in `wgs` of each slot's workgroup
  std::vector<std::vector<int>> slot_waves(static_cast<size_t>(resident));
  size_t next_wg = 0;
  uint64_t age = 0;
  int simd_rr = 0;
  double lds_free[2] = {0, 0}, vm_free = 0, l2_free = 0, dram_free = 0;
  r.wg_start.assign(wgs.size(), 0);
  r.wg_end.assign(wgs.size(), 0);

  auto place = [&](int slot, double now) {
    if (next_wg >= wgs.size()) { slot_wg[size_t(slot)] = -1; return; }
    const int w = wgs[next_wg];
    const WorkgroupTrace& wt = t.workgroups.at(size_t(w));
    slot_wg[size_t(slot)] = int(next_wg);
    r.wg_start[next_wg] = now;
    ++next_wg;
    slot_waves[size_t(slot)].clear();
    for (const auto& wv : wt.waves) {
      SimWave s;
      s.ops = &wv.ops;
      s.simd = simd_rr++ % 4;  // round robin over the SIMDs (est: docs/AMD-TIMING.md)
      s.slot = slot;
      s.age = age++;
      s.ready = now;
      s.done = wv.ops.empty();
      waves.push_back(std::move(s));
      const int idx = int(waves.size() - 1);
      slot_waves[size_t(slot)].push_back(idx);
      simd[size_t(waves.back().simd)].waves.push_back(idx);
    }
  };
  size_t total_waves = 0;
  for (int w : wgs) total_waves += t.workgroups.at(size_t(w)).waves.size();
  waves.reserve(total_waves);
  for (int s = 0; s < resident; ++s) place(s, 0);
  std::vector<std::pair<int, double>> to_place;  // slots freed this clock: refilled after the issue loop

  auto slot_done = [&](int slot) {
    for (int wi : slot_waves[size_t(slot)])
      if (!waves[size_t(wi)].done) return false;
    return true;
  };
  auto release_barrier = [&](int slot) {
    double last = 0;
    for (int wi : slot_waves[size_t(slot)]) {
      const SimWave& w = waves[size_t(wi)];
      if (!w.done && !w.at_barrier) return;
      if (w.at_barrier) last = std::max(last, w.arrived);
    }
    for (int wi : slot_waves[size_t(slot)]) {
      SimWave& w = waves[size_t(wi)];
      if (w.at_barrier) { w.at_barrier = false; w.ready = last + p.lat_barrier; }
    }
  };

  double now = 0;
  int live = 0;
  for (int s = 0; s < resident; ++s) live += slot_wg[size_t(s)] >= 0;
  uint64_t idle_rounds = 0;
  while (live > 0) {
    const int si = int(std::llround(now)) % 4;
    SimSimd& S = simd[size_t(si)];
    // arbitration: higher s_setprio first, then the oldest wave
    std::sort(S.waves.begin(), S.waves.end(), [&](int a, int b) {
      const SimWave &x = waves[size_t(a)], &y = waves[size_t(b)];
      return x.prio != y.prio ? x.prio > y.prio : x.age < y.age;
    });
    bool used[16] = {};
    bool issued = false;
    for (int wi : S.waves) {
      SimWave& w = waves[size_t(wi)];
      if (w.done || w.at_barrier || w.ready > now) continue;
      const TraceOp& op = (*w.ops)[w.i];
      const OpInfo& oi = info[op.pc];
      int port = -1;  // the issue category (one per SIMD per cycle)
      switch (oi.cls) {
        case IssueClass::valu: case IssueClass::trans: case IssueClass::pk_f32: case IssueClass::mfma: port = 0; break;
        case IssueClass::salu: case IssueClass::smem: port = 1; break;
        case IssueClass::vmem: port = 2; break;
        case IssueClass::lds: port = 3; break;
        case IssueClass::branch: port = 4; break;
        case IssueClass::unknown:
          throw Error(Error::Kind::unimplemented, "timing: no rule for " + code[op.pc].mnemonic);
        default: port = 5 + int(oi.cls); break;  // internal: the wave's own slot only
      }
      if (port < 5 && used[port]) continue;
      // functional-unit availability
      if (port == 0) {
        if (S.valu_free > now) continue;
        if (oi.cls == IssueClass::mfma && S.mfma_free > now) continue;
        if (oi.cls == IssueClass::pk_f32 && S.pk_free > now) continue;
      }
      // issue
      if (port < 5) used[port] = true;
      issued = true;
      ++r.instructions;
      double next = now + 4;  // a wave issues at most once per turn of its SIMD
      switch (oi.cls) {
        case IssueClass::valu: S.valu_free = now + 4; r.valu_busy += 4; break;
        case IssueClass::pk_f32: S.valu_free = now + 4; r.valu_busy += 4; break;
        case IssueClass::trans: S.valu_free = now + p.trans_clocks; r.valu_busy += p.trans_clocks; break;
        case IssueClass::mfma: {
          // the matrix pipe is busy for its passes; the VALU port takes the next VALU after
          // 1 + (widest A/B bytes) / 16 slots; packed-f32 VALU waits for passes + 2 (+1) slots
          const double slots = 1 + oi.src_bytes / 16;
          S.mfma_free = now + 4.0 * oi.passes;
          S.valu_free = now + 4 * slots;
          S.pk_free = now + 4.0 * (oi.passes + 2 + (oi.src_bytes >= 16 ? 1 : 0));
          r.mfma_busy += 4.0 * oi.passes;
          r.valu_busy += 4 * slots;
          break;
        }
        case IssueClass::salu: break;
        case IssueClass::smem: w.lgkm.push_back(std::max(now + p.lat_smem, w.lgkm.empty() ? 0.0 : w.lgkm.back())); break;
        case IssueClass::vmem: {
          // three queues in series, each at its rate: the CU's L1 path (64-byte segments), its share
          // of L2 for the bytes L2 serves, its share of HBM for the rest; then the latency
          const double start = std::max(now, vm_free);
          vm_free = start + op.a * 64.0 / p.l1_bytes_per_clk;
          r.vmem_path += op.a * 64.0 / p.l1_bytes_per_clk;
          l2_free = std::max(now, l2_free) + (1 - f) * op.b / l2_bpc;
          dram_free = std::max(now, dram_free) + f * op.b / hbm_bpc;
          double done = std::max({vm_free, l2_free, dram_free}) + lat_vm;
          if (oi.lds_dma) {  // the returning data is written to LDS (conflict-free) through the wave's port
            double& port = lds_free[si / 2];
            const double cost = double(op.b) / (4.0 * p.lds_banks) * p.lds_port_clocks;
            port = std::max(done, port) + cost;
            r.lds_busy += cost;
            done = port;
          }
          w.vm.push_back(std::max(done, w.vm.empty() ? 0.0 : w.vm.back()));
          r.vmem_bytes += op.b;
          r.dram_bytes += f * op.b;
          break;
        }
        case IssueClass::lds: {
          // the SIMD pair's port, for the access's bank cycles (conflicts included)
          double& port = lds_free[si / 2];
          const double cost = double(std::max<uint32_t>(op.a, 1)) * p.lds_port_clocks;
          port = std::max(now, port) + cost;
          r.lds_busy += cost;
          w.lgkm.push_back(std::max(port + p.lat_lds, w.lgkm.empty() ? 0.0 : w.lgkm.back()));
          break;
        }
        case IssueClass::branch: break;
        case IssueClass::nop: next = now + 4.0 * (oi.nop + 1); r.nop_clocks += 4.0 * (oi.nop + 1); break;
        case IssueClass::waitcnt:
          next = std::max(next, std::max(covered(w.vm, oi.vmcnt), covered(w.lgkm, oi.lgkmcnt)));
          break;
        case IssueClass::setprio: w.prio = oi.prio; break;
        case IssueClass::barrier: break;
        case IssueClass::endpgm: break;
        default: break;
      }
      if (debug) std::fprintf(stderr, "%8.0f simd%d slot%d wave%d %s\n", now, si, w.slot, wi, code[op.pc].text.c_str());
      w.ready = next;
      ++w.i;
      if (oi.cls == IssueClass::endpgm || w.i >= w.ops->size()) {
        w.done = true;
        // a workgroup's slot frees when its last wave ends (its stores drained)
        if (slot_done(w.slot)) {
          double end = now;
          for (int x : slot_waves[size_t(w.slot)]) {
            const SimWave& y = waves[size_t(x)];
            if (!y.vm.empty()) end = std::max(end, y.vm.back());
          }
          r.wg_end[size_t(slot_wg[size_t(w.slot)])] = end;
          r.cycles = std::max(r.cycles, end);
          to_place.emplace_back(w.slot, end);
        } else {
          release_barrier(w.slot);
        }
      } else if (oi.cls == IssueClass::barrier) {
        w.at_barrier = true;
        w.arrived = now;
        release_barrier(w.slot);
      }
    }
    for (const auto& [slot, end] : to_place) {
      place(slot, end);
      if (slot_wg[size_t(slot)] < 0) --live;
    }
    to_place.clear();
    if (issued) {
      idle_rounds = 0;
      now += 1;
    } else if (++idle_rounds >= 4) {
      // nothing can issue on any SIMD: jump to the next clock at which some wave is ready
      double nx = 1e300;
      for (const auto& w : waves)
        if (!w.done && !w.at_barrier) nx = std::min(nx, std::max(w.ready, now + 1));
      for (const auto& s : simd) nx = std::min(nx, std::max(std::max(s.valu_free, s.mfma_free), now + 1));
      now = nx >= 1e299 ? now + 1 : std::ceil(nx);
      idle_rounds = 0;
    } else {
      now += 1;
    }
    if (r.instructions % 65536 == 0)
      for (auto& s : simd)
        s.waves.erase(std::remove_if(s.waves.begin(), s.waves.end(), [&](int x) { return waves[size_t(x)].done; }),
                      s.waves.end());
  }
  return r;
}

// ---------------------------------------------------------------- the device
// The grid's workgroups in dispatch order, each to the earliest free of cus x resident slots, each
// taking prologue + per_tile x its tiles (list scheduling).
double device_cycles(const std::vector<int>& work, const LinearCost& c, int cus, int resident) {
  const size_t slots = size_t(std::max(1, cus)) * size_t(std::max(1, resident));
  std::priority_queue<double, std::vector<double>, std::greater<double>> free;
  for (size_t i = 0; i < std::min(slots, work.size()); ++i) free.push(0.0);
  double end = 0;
  for (int n : work) {
    const double s = free.top();
    free.pop();
    const double e = s + c.prologue + c.per_tile * n;
    end = std::max(end, e);
    free.push(e);
  }
  return end;
}

}  // namespace hipattn::emu
