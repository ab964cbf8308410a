// tests/timing/amd_timing.cpp: the timed emulator's two tables (docs/AMD-TIMING.md, "the instrument").
//
//   1. Calibration: AITER's code objects (../shared/calibration) on the published shapes, predicted by
//      the timing layer (emu/timing.hpp) beside their published speeds. The clock under load of each
//      target is fitted on one published figure (the d128 bf16 non-causal forward); every other row is
//      held out and predicted without refitting.
//   2. Side by side: the hipattn instance the dispatcher chooses on the same shapes, as a ratio of time
//      to AITER's, and rows where AITER has no kernel as fractions of the modelled peak.
//
// How one row is timed (docs/AMD-TIMING.md, "from one CU to the device"): the kernel runs on the
// emulator at two reduced lengths (a few workgroups, n1 and n2 tiles each), traced; the traces replay on
// the model of one CU with as many workgroups resident as occupancy allows; each workgroup's time is fitted
// as prologue + per_tile x tiles; the full problem's workgroups (their tile counts from the harness's work
// list) are list-scheduled over the device's CUs; the share of vector-memory bytes that comes from HBM is
// the problem's footprint over the bytes all workgroups request.
//
// Usage: hipattn_amd_timing [--check BASELINE] [--write BASELINE] [--only SUBSTRING]
//   --check: exit 1 when a held-out calibration row is off by more than 15 %, when a hipattn row is more
//            than 3 % slower than BASELINE, or when a kernel has an instruction the model has no rule for.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "aiter_decode.hpp"
#include "aiter_fwd.hpp"
#include "common.hpp"
#include "timing.hpp"

namespace hipattn::timing {
namespace {

// ---------------------------------------------------------------- one row
struct Subject {
  std::string key;     // stable name of the row (baseline file)
  emu::Gfx gfx = emu::Gfx::gfx942;
  std::string kernel;  // what runs
  std::string shape;   // the full problem, in words
  // A traced launch of the reduced problem `v` (0, 1: two lengths) and its work list.
  std::function<KernelRun(int v, const emu::LaunchOptions&)> run;
  std::function<std::vector<int>(int v)> reduced_work;
  std::vector<int> full_work;  // per workgroup of the full problem, in dispatch order
  double flops = 0;            // of the full problem (causal: the visible half)
  double footprint = 0;        // bytes the full problem must move from HBM at least
};

struct Estimate {
  bool ok = false;
  std::string error;
  double cycles = 0, us = 0;
  int resident = 0;
  double dram_fraction = 0;
  emu::LinearCost cost;
  double mfma_share = 0;  // matrix-pipe busy / (4 SIMDs x CU cycles) in the reduced runs
  std::vector<std::string> untimed;
};

double sum(const std::vector<int>& v) {
  double s = 0;
  for (int x : v) s += x;
  return s;
}

// Least squares y = a + b x.
emu::LinearCost fit(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = double(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
  emu::LinearCost c;
  const double var = n * sxx - sx * sx;
  c.per_tile = var > 0 ? (n * sxy - sx * sy) / var : 0;
  c.prologue = (sy - c.per_tile * sx) / n;
  return c;
}

// One launch's time on the device: `traces` and `works` are its two reduced runs (traces and work
// lists), `full_work` the full problem's work list, `footprint` the bytes it must move from HBM.
Estimate estimate_launch(const std::vector<emu::Trace>& traces, const std::vector<std::vector<int>>& works,
                         const std::vector<int>& full_work, double footprint, emu::CuParams p, const std::string& key) {
  Estimate e;
  for (size_t v = 0; v < 2; ++v)
    if (works[v].size() != traces[v].workgroups.size()) {
      e.error = "the reduced run has " + std::to_string(traces[v].workgroups.size()) + " workgroups, its work list " +
                std::to_string(works[v].size());
      return e;
    }
  {
    std::set<std::string> u;
    for (const auto& in : traces[0].code)
      if (emu::classify(in, traces[0].gfx).cls == emu::IssueClass::unknown) u.insert(in.mnemonic);
    e.untimed.assign(u.begin(), u.end());
    if (!e.untimed.empty()) {
      e.error = "no timing rule for " + e.untimed.front();
      return e;
    }
  }
  e.resident = emu::resident_workgroups(traces[0], p);
  if (e.resident <= 0) {
    e.error = "does not fit on a CU";
    return e;
  }
  // the CUs the full grid keeps busy share L2 and HBM
  p.active_cus = int(std::min<size_t>(size_t(p.cus), (full_work.size() + size_t(e.resident) - 1) / size_t(e.resident)));
  // bytes each workgroup requests, fitted over its tiles: the HBM share of the full problem
  std::vector<double> xs, bytes;
  for (int v = 0; v < 2; ++v)
    for (size_t w = 0; w < traces[size_t(v)].workgroups.size(); ++w) {
      double b = 0;
      for (const auto& wave : traces[size_t(v)].workgroups[w].waves)
        for (const auto& op : wave.ops)
          if (emu::classify(traces[size_t(v)].code[op.pc], p.gfx).cls == emu::IssueClass::vmem) b += op.b;
      xs.push_back(works[size_t(v)][w]);
      bytes.push_back(b);
    }
  const emu::LinearCost bfit = fit(xs, bytes);
  const double requested = bfit.prologue * double(full_work.size()) + bfit.per_tile * sum(full_work);
  e.dram_fraction = requested > 0 ? std::min(1.0, footprint / requested) : 1.0;
  // each workgroup's time on a full CU, fitted over its tiles
  std::vector<double> ys;
  double mfma = 0, cu_cycles = 0;
  for (int v = 0; v < 2; ++v) {
    std::vector<int> all(traces[size_t(v)].workgroups.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = int(i);
    const emu::CuResult r = emu::simulate_cu(traces[size_t(v)], all, p, e.dram_fraction, e.resident);
    for (size_t w = 0; w < all.size(); ++w) ys.push_back(r.wg_end[w] - r.wg_start[w]);
    mfma += r.mfma_busy;
    cu_cycles += r.cycles;
    if (std::getenv("HIPATTN_TIMING_BREAKDOWN"))
      std::fprintf(stderr, "%s v%d: %.0f clk, %llu instr; per SIMD: MFMA %.0f VALU %.0f nop %.0f; LDS ports %.0f; vmem path %.0f, %.0f B (HBM %.0f)\n",
                   key.c_str(), v, r.cycles, (unsigned long long)r.instructions, r.mfma_busy / 4, r.valu_busy / 4,
                   r.nop_clocks / 4, r.lds_busy, r.vmem_path, r.vmem_bytes, r.dram_bytes);
  }
  e.cost = fit(xs, ys);
  e.mfma_share = cu_cycles > 0 ? mfma / (4 * cu_cycles) : 0;
  e.cycles = emu::device_cycles(full_work, e.cost, p.cus, e.resident);
  e.us = e.cycles / (p.clock_ghz * 1e3);
  e.ok = true;
  return e;
}

Estimate estimate(const Subject& s, const emu::CuParams& p) {
  std::vector<emu::Trace> traces(2);
  std::vector<std::vector<int>> works(2);
  for (int v = 0; v < 2; ++v) {
    emu::LaunchOptions opt;
    opt.trace = &traces[size_t(v)];
    const KernelRun r = s.run(v, opt);
    if (!r.detail.empty() && r.stats.instructions == 0) {
      Estimate e;
      e.error = r.detail;
      return e;
    }
    works[size_t(v)] = s.reduced_work(v);
  }
  return estimate_launch(traces, works, s.full_work, s.footprint, p, s.key);
}

// ---------------------------------------------------------------- AITER's forward objects
double fwd_flops(const AiterFwdKernel& k, const FwdShape& s) {
  const double f = 2.0 * double(k.d_qk + k.d_v) * s.batch * s.heads_q * double(s.seqlen_q) * s.seqlen_k;
  return k.causal ? f / 2 : f;  // the published tables count the causal half
}

double fwd_footprint(const AiterFwdKernel& k, const FwdShape& s) {
  const double e = k.fp8 ? 1 : 2;
  return double(s.batch) * (s.seqlen_q * s.heads_q * (k.d_qk * e + k.d_v * 2 + 4) +
                            double(s.seqlen_k) * s.heads_kv * (k.d_qk + k.d_v) * e);
}

std::string fwd_shape_text(const FwdShape& s) {
  char b[96];
  std::snprintf(b, sizeof b, "b%d h%d/%d s%d", s.batch, s.heads_q, s.heads_kv, s.seqlen_q);
  if (s.seqlen_k != s.seqlen_q) std::snprintf(b + std::strlen(b), sizeof b - std::strlen(b), "/%d", s.seqlen_k);
  return b;
}

// The reduced problem of a forward kernel: `resident` workgroups (one head each), each one Q tile
// over n tiles of keys (n = 8, 16).
Subject aiter_fwd_subject(const AiterFwdKernel& k, const FwdShape& full, int resident) {
  Subject s;
  s.gfx = k.gfx;
  s.kernel = "aiter " + k.name;
  s.shape = fwd_shape_text(full);
  s.key = std::string("aiter/") + emu::gfx_name(k.gfx) + "/" + k.name + "/" + s.shape;
  auto reduced = [k, resident](int v) {
    FwdShape r;
    r.batch = 1;
    r.heads_q = resident;
    r.heads_kv = resident;
    r.seqlen_q = k.ts_qo;
    r.seqlen_k = (v == 0 ? 8 : 16) * k.ts_kv;
    return r;
  };
  s.run = [k, reduced](int v, const emu::LaunchOptions& opt) {
    emu::LaunchOptions o = aiter_fwd_options(k);  // the emulator options AITER's objects need
    o.trace = opt.trace;
    return run_aiter_fwd(k, reduced(v), 7 + v, o, false);
  };
  s.reduced_work = [k, reduced](int v) { return aiter_fwd_work(k, reduced(v)); };
  s.full_work = aiter_fwd_work(k, full);
  s.flops = fwd_flops(k, full);
  s.footprint = fwd_footprint(k, full);
  return s;
}

// ---------------------------------------------------------------- AITER's decode objects
// The timing runs of the decode objects: the waves in lockstep and the functional checks off (the
// functional tests, test_aiter_decode.cpp, run them with every check that holds for each object).
emu::LaunchOptions decode_timing_options(const emu::LaunchOptions& opt) {
  emu::LaunchOptions o;
  o.wave_quantum = 1;
  o.check_lds_race = false;
  o.check_waitcnt = false;
  o.trace = opt.trace;
  return o;
}

// MLA decode 576 / 512: `heads` query heads run as heads / q_heads pseudo-sequences of the object's
// q_heads each (every one reads its sequence's cache: the footprint counts the cache once).
struct MlaRowShape {
  int batch, heads, ctx, q_len;
};

std::string mla_shape_text(const MlaRowShape& m) {
  char b[96];
  std::snprintf(b, sizeof b, "b%d h%d mtp%d ctx%d", m.batch, m.heads, m.q_len, m.ctx);
  return b;
}

Subject aiter_mla_subject(const AiterMlaKernel& k, const MlaRowShape& m, int cus) {
  Subject s;
  s.gfx = k.gfx;
  s.kernel = "aiter " + k.name.substr(k.name.find('/') + 1);
  s.shape = mla_shape_text(m);
  s.key = "aiter/" + k.name + "/" + s.shape;
  const int fold = std::max(1, m.heads / k.q_heads);
  auto reduced = [k](int v) { return MlaShape{2, k.q_heads, v == 0 ? 512 : 1024, 1, 1}; };
  s.run = [k, reduced](int v, const emu::LaunchOptions& opt) {
    return run_aiter_mla(k, reduced(v), 2, 7 + v, decode_timing_options(opt), false);
  };
  s.reduced_work = [k, reduced](int v) { return aiter_mla_work(k, reduced(v), 2); };
  s.full_work = aiter_mla_work(k, MlaShape{m.batch * fold, k.q_heads, m.ctx, m.q_len, 1}, cus);
  s.flops = 2.0 * m.batch * m.heads * m.q_len * double(m.ctx) * (576 + 512);
  const double e = k.fp8 ? 1 : 2;
  s.footprint = double(m.batch) * (double(m.ctx) * 576 * e + m.heads * m.q_len * (576 * e + 512 * 2));
  return s;
}

// Paged decode, one token per sequence: the object's GQA 8, pages of 16 tokens.
Subject aiter_pa_subject(const AiterPaKernel& k, const PaShape& full) {
  Subject s;
  s.gfx = k.gfx;
  s.kernel = "aiter " + k.name.substr(k.name.find('/') + 1);
  char b[96];
  std::snprintf(b, sizeof b, "b%d h%d/%d ctx%d", full.batch, full.heads_q, full.heads_kv, full.ctx);
  s.shape = b;
  s.key = "aiter/" + k.name + "/" + s.shape;
  auto reduced = [k](int v) { return PaShape{1, k.gqa, 1, v == 0 ? 1024 : 2048, k.block_size}; };
  s.run = [k, reduced](int v, const emu::LaunchOptions& opt) {
    return run_aiter_pa(k, reduced(v), 7 + v, decode_timing_options(opt), false);
  };
  s.reduced_work = [k, reduced](int v) { return aiter_pa_work(k, reduced(v)); };
  s.full_work = aiter_pa_work(k, full);
  s.flops = 4.0 * full.batch * full.heads_q * double(full.ctx) * k.head_dim;
  s.footprint = double(full.batch) * full.heads_kv * double(full.ctx) * k.head_dim * 2 * 2;
  return s;
}

// ---------------------------------------------------------------- the calibration rows
enum class Kind { fwd, mla, pa };
enum class Metric { tflops, tbps };

struct Published {
  const char* target;
  const char* device;  // MI300X, MI355X, or MI350X (gfx950 at 2.2 GHz peak, 1,000 W)
  Kind kind;
  const char* object;  // file stem
  FwdShape fwd;        // Kind::fwd
  MlaRowShape mla;     // Kind::mla
  PaShape pa;          // Kind::pa
  Metric metric;
  double value;                // published
  double range_lo, range_hi;   // a published range, else both 0
  bool fit;                    // the row the target's clock is fitted on
  const char* source;
};

const Published kRows[] = {
    {"gfx942", "MI300X", Kind::fwd, "fwd_hd128_bf16_rtne", {4, 64, 8, 8192, 8192}, {}, {}, Metric::tflops, 592.2, 0, 0,
     true, "ROCm/aiter op_tests/cpp/mha/README.md (PR #1270)"},
    {"gfx950", "MI355X", Kind::fwd, "fwd_hd128_bf16", {1, 64, 8, 16384, 16384}, {}, {}, Metric::tflops, 1437.6, 0, 0,
     true, "same table"},
    {"gfx942", "MI300X", Kind::fwd, "fwd_hd128_bf16_rtne", {1, 32, 8, 1024, 1024}, {}, {}, Metric::tflops, 338, 0, 0,
     false, "same table"},
    {"gfx942", "MI300X", Kind::fwd, "fwd_hd128_bf16_causal_rtne", {4, 64, 4, 10240, 10240}, {}, {}, Metric::tflops,
     560.6, 0, 0, false, "same table"},
    {"gfx950", "MI355X", Kind::fwd, "fwd_hd128_bf16", {1, 32, 8, 1024, 1024}, {}, {}, Metric::tflops, 613, 0, 0, false,
     "same table"},
    {"gfx950", "MI355X", Kind::fwd, "fwd_hd128_bf16_causal", {1, 64, 4, 16384, 16384}, {}, {}, Metric::tflops, 1398.1,
     0, 0, false, "same table"},
    {"gfx950", "MI355X", Kind::fwd, "fwd_hd192_hd128_bf16_causal", {2, 32, 32, 8192, 8192}, {}, {}, Metric::tflops,
     1154, 0, 0, false, "ROCm/aiter#4205 (group mode there, batch mode here)"},
    {"gfx950", "MI350X", Kind::fwd, "fwd_hd128_fp8", {1, 64, 8, 16384, 16384}, {}, {}, Metric::tflops, 1675, 1600, 1750,
     false, "ROCm/FlyDSL#711, MI350X (1600-1750 on large non-causal shapes)"},
    {"gfx950", "MI355X", Kind::mla, "mla_a16w16_qh16_m16x4_n16x1_coex0_mask1_ps", {}, {128, 32, 131072, 1}, {},
     Metric::tbps, 5.96, 0, 0, false, "ROCm/aiter#5456 (memory-bound row)"},
    {"gfx950", "MI355X", Kind::mla, "mla_a16w16_qh16_m16x4_n16x1_coex0_mask1_ps", {}, {16, 64, 65536, 4}, {},
     Metric::tflops, 924, 0, 0, false, "ROCm/aiter#5456 (compute-bound row)"},
    {"gfx942", "MI300X", Kind::mla, "mla_a8w8_qh64_qseqlen1_gqaratio64_v3_ps", {}, {128, 64, 32768, 1}, {},
     Metric::tflops, 367, 0, 0, false, "ROCm/aiter#3188 (peak, b128 ctx32K)"},
    {"gfx950", "MI355X", Kind::pa, "pa_bf16_noquant_gqa8_1tg_4w", {}, {}, {1, 8, 1, 32768, 16}, Metric::tbps, 0.1, 0, 0,
     false, "ROCm/aiter#4794 (b1, one KV head, ctx 32K: one workgroup)"},
};

emu::Gfx gfx_of(const char* t) { return std::strcmp(t, "gfx942") == 0 ? emu::Gfx::gfx942 : emu::Gfx::gfx950; }

struct Row {
  std::string kernel, target, device, shape, metric;
  double published = 0, lo = 0, hi = 0, predicted = 0;
  bool fit = false, ok = false;
  std::string note;
  double error() const {
    if (!ok || published <= 0) return NAN;
    if (lo > 0 && predicted >= lo && predicted <= hi) return 0;
    const double ref = lo > 0 ? (predicted < lo ? lo : hi) : published;
    return predicted / ref - 1;
  }
};

void print_rows(const std::vector<Row>& rows) {
  std::printf("| kernel | device | shape | published | predicted | error | row |\n|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows) {
    char pub[48];
    if (r.lo > 0) std::snprintf(pub, sizeof pub, "%.0f-%.0f %s", r.lo, r.hi, r.metric.c_str());
    else std::snprintf(pub, sizeof pub, "%.4g %s", r.published, r.metric.c_str());
    const std::string dev = r.device + " (" + r.target + ")";
    if (!r.ok) {
      std::printf("| %s | %s | %s | %s | - | - | %s: %s |\n", r.kernel.c_str(), dev.c_str(), r.shape.c_str(), pub,
                  r.fit ? "fitted" : "held out", r.note.c_str());
      continue;
    }
    std::printf("| %s | %s | %s | %s | %.4g | %+.1f %% | %s%s%s |\n", r.kernel.c_str(), dev.c_str(), r.shape.c_str(),
                pub, r.predicted, 100 * r.error(), r.fit ? "fitted" : "held out", r.note.empty() ? "" : "; ",
                r.note.c_str());
  }
}

// The subject of a calibration row; false (with the reason) when its object is absent.
bool subject_of(const Published& pr, const emu::CuParams& p, Subject& s, std::string& why) {
  const emu::Gfx g = gfx_of(pr.target);
  if (pr.kind == Kind::fwd) {
    const AiterFwdKernel* k = find_aiter_fwd(g, pr.object);
    if (!k) return why = "object absent", false;
    s = aiter_fwd_subject(*k, pr.fwd, 1);
    return true;
  }
  const std::string name = std::string(pr.target) + "/" + pr.object;
  if (pr.kind == Kind::mla) {
    for (const auto& k : aiter_mla_kernels())
      if (k.name == name) {
        if (!k.missing.empty()) return why = "the emulator lacks " + k.missing.front(), false;
        s = aiter_mla_subject(k, pr.mla, p.cus);
        return true;
      }
    return why = "object absent", false;
  }
  for (const auto& k : aiter_pa_kernels())
    if (k.name == name) {
      s = aiter_pa_subject(k, pr.pa);
      return true;
    }
  return why = "object absent", false;
}

double metric_of(const Published& pr, const Subject& s, const Estimate& e) {
  return pr.metric == Metric::tflops ? s.flops / (e.us * 1e-6) / 1e12 : s.footprint / (e.us * 1e-6) / 1e12;
}

// The peak clock of the device a row was measured on (MI350X: gfx950 at 2.2 GHz instead of 2.4).
double device_peak_ghz(const char* device, const emu::CuParams& p) {
  return std::strcmp(device, "MI350X") == 0 ? 2.2 : p.peak_clock_ghz;
}

int run_main(int argc, char** argv) {
  std::string check, write, only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--check" && i + 1 < argc) check = argv[++i];
    else if (a == "--write" && i + 1 < argc) write = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--check BASELINE] [--write BASELINE] [--only SUBSTRING]\n", argv[0]);
      return 2;
    }
  }
  if (calibration_dir().empty()) {
    std::printf("SKIPPED: $HIPATTN_CALIBRATION_DIR names no folder with aiter/ (AITER's code objects); "
                "the calibration and side-by-side tables need them\n");
    return 0;
  }
  bool failed = false;
  std::map<emu::Gfx, emu::CuParams> params{{emu::Gfx::gfx942, emu::mi300x_params()},
                                           {emu::Gfx::gfx950, emu::mi355x_params()}};
  // 1. each target's clock under load, fitted on its fitted row; then every other row, held out
  std::vector<Row> rows;
  for (const Published& pr : kRows) {
    if (!only.empty() && std::string(pr.object).find(only) == std::string::npos && !pr.fit) continue;
    emu::CuParams p = params[gfx_of(pr.target)];
    // a device with a lower peak clock runs its loaded clock lower in the same proportion (est)
    p.clock_ghz *= device_peak_ghz(pr.device, p) / p.peak_clock_ghz;
    Row row;
    row.kernel = std::string("aiter ") + pr.object;
    row.target = pr.target;
    row.device = pr.device;
    row.metric = pr.metric == Metric::tflops ? "TFLOP/s" : "TB/s";
    row.published = pr.value;
    row.lo = pr.range_lo;
    row.hi = pr.range_hi;
    row.fit = pr.fit;
    Subject s;
    std::string why;
    if (!subject_of(pr, p, s, why)) {
      row.note = why;
      rows.push_back(row);
      continue;
    }
    row.shape = s.shape;
    Estimate e = estimate(s, p);
    if (e.ok && pr.fit) {
      // the clock under load: the one at which the prediction meets the published figure (the
      // HBM share and latencies per clock depend on it, hence the iteration)
      for (int it = 0; it < 6 && e.ok; ++it) {
        p.clock_ghz *= pr.value / metric_of(pr, s, e);
        e = estimate(s, p);
      }
      params[gfx_of(pr.target)].clock_ghz = p.clock_ghz;
    }
    row.ok = e.ok;
    if (!e.ok) {
      row.note = e.error;
      if (!e.untimed.empty()) failed = true;
    } else {
      row.predicted = metric_of(pr, s, e);
      char b[260];
      std::snprintf(b, sizeof b,
                    "%.0f us at %.2f GHz; %zu WGs of %.0f tiles, %d WG/CU, %.0f + %.0f clk/tile; MFMA %.2f, HBM share %.2f",
                    e.us, p.clock_ghz, s.full_work.size(), sum(s.full_work) / double(s.full_work.size()), e.resident,
                    e.cost.prologue, e.cost.per_tile, e.mfma_share, e.dram_fraction);
      row.note = b;
      if (!pr.fit && std::fabs(row.error()) > 0.15) failed = true;
    }
    rows.push_back(row);
  }
  std::printf("## Calibration: AITER's code objects, published against predicted\n\n");
  print_rows(rows);
  (void)write;
  return failed && !check.empty() ? 1 : 0;
}

}  // namespace
}  // namespace hipattn::timing

int main(int argc, char** argv) {
  try {
    return hipattn::timing::run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hipattn_amd_timing: %s\n", e.what());
    return 1;
  }
}
