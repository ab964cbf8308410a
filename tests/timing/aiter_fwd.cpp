// tests/timing/aiter_fwd.cpp: AITER's prefill forward objects on the emulator (aiter_fwd.hpp).
#include "aiter_fwd.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <sys/stat.h>

#include "hipattn/numeric/bf16.hpp"
#include "hipattn/numeric/fp8.hpp"

namespace hipattn::timing {
namespace {

bool file_exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(line);
  while (std::getline(in, cur, ',')) {
    while (!cur.empty() && (cur.back() == '\r' || cur.back() == ' ')) cur.pop_back();
    out.push_back(cur);
  }
  return out;
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }


}  // namespace

std::vector<AiterFwdKernel> aiter_fwd_kernels() {
  std::vector<AiterFwdKernel> out;
  const std::string dir = calibration_dir();
  if (dir.empty()) return out;
  for (emu::Gfx gfx : {emu::Gfx::gfx942, emu::Gfx::gfx950}) {
    const std::string folder = dir + "/aiter/" + emu::gfx_name(gfx) + "/";
    std::ifstream csv(folder + "fmha_fwd.csv");
    if (!csv) continue;
    std::string line;
    std::map<std::string, int> col;
    bool header = true;
    while (std::getline(csv, line)) {
      const auto f = split_csv(line);
      if (header) {
        for (size_t i = 0; i < f.size(); ++i) col[f[i]] = int(i);
        header = false;
        for (const char* c : {"dtype", "hdim_q", "hdim_v", "mask", "mode", "ts_qo", "ts_kv", "knl_name", "co_name"})
          if (!col.count(c)) return out;  // not the table this harness knows
        continue;
      }
      if (f.size() < col.size()) continue;
      auto at = [&](const char* c) { return f[size_t(col[c])]; };
      if (std::stoi(at("mode")) != 0) continue;  // group mode: not this harness
      AiterFwdKernel k;
      k.file = folder + at("co_name");
      if (!file_exists(k.file)) continue;
      k.name = at("co_name").substr(0, at("co_name").rfind('.'));
      k.symbol = at("knl_name");
      k.gfx = gfx;
      k.d_qk = std::stoi(at("hdim_q"));
      k.d_v = std::stoi(at("hdim_v"));
      const int mask = std::stoi(at("mask"));
      if (mask != 0 && mask != 2) continue;  // 2: bottom-right causal; nothing else is listed
      k.causal = mask == 2;
      k.fp8 = at("dtype") == "fp8bf16";
      if (!k.fp8 && at("dtype") != "bf16") continue;
      k.ts_qo = std::stoi(at("ts_qo"));
      k.ts_kv = std::stoi(at("ts_kv"));
      k.block_threads = (k.d_qk == 192 && k.d_v == 128) ? 256 : 512;
      out.push_back(k);
    }
  }
  return out;
}

const AiterFwdKernel* find_aiter_fwd(emu::Gfx gfx, const std::string& name) {
  static const std::vector<AiterFwdKernel> all = aiter_fwd_kernels();
  for (const auto& k : all)
    if (k.gfx == gfx && k.name == name) return &k;
  return nullptr;
}

namespace {
bool gfx942_d192(const AiterFwdKernel& k) { return k.gfx == emu::Gfx::gfx942 && k.d_qk == 192 && k.d_v == 128; }
}  // namespace

int aiter_fwd_msk_opt(const AiterFwdKernel& k, const FwdShape& s) {
  int opt = 5;
  if (k.causal && (s.heads_q % 8 != 0 || s.seqlen_q > 16384)) opt -= 2;
  if (gfx942_d192(k)) opt = 0;
  return opt;
}

emu::Dim3 aiter_fwd_grid(const AiterFwdKernel& k, const FwdShape& s) {
  const int tg_div = k.causal ? 2 : 1;
  const int q_tiles = ceil_div(s.seqlen_q, k.ts_qo);
  if (gfx942_d192(k)) return {uint32_t(s.heads_q), uint32_t(q_tiles), uint32_t(s.batch)};
  return {uint32_t(ceil_div(q_tiles, tg_div)), uint32_t(s.heads_q), uint32_t(s.batch)};
}

// The prologues of the objects (read in their disassembly): with (msk_opt >> 1) & 3 = 1 the
// workgroup's x is permuted within the first 8 floor(gdx / 8) ids (x -> x / 8 + (x % 8) floor(gdx / 8));
// with 2 the (x, head) pair is remapped within groups of 8 heads (i = (head % 8) gdx + x; x = i / 8,
// head = head - head % 8 + i % 8); then a causal workgroup runs Q tile x and, unless there is only
// one Q tile, the tail tile q_tiles - 1 - x (the same tile twice when x is the middle one of an odd
// count). gfx942's d192 object: one tile per workgroup, q_tiles - 1 - y (heaviest first).
std::vector<std::vector<int>> aiter_fwd_q_tiles(const AiterFwdKernel& k, const FwdShape& s) {
  const emu::Dim3 g = aiter_fwd_grid(k, s);
  const int q_tiles = ceil_div(s.seqlen_q, k.ts_qo);
  const int opt = (aiter_fwd_msk_opt(k, s) >> 1) & 3;
  std::vector<std::vector<int>> out;
  for (uint32_t z = 0; z < g.z; ++z)
    for (uint32_t y = 0; y < g.y; ++y)
      for (uint32_t x = 0; x < g.x; ++x) {
        if (gfx942_d192(k)) {
          out.push_back({q_tiles - 1 - int(y)});
          continue;
        }
        int xi = int(x);
        if (k.causal && opt == 1) {
          const int per = int(g.x) / 8;
          if (xi / 8 < per) xi = xi / 8 + (xi % 8) * per;
        } else if (k.causal && opt == 2) {
          const int i = (int(y) % 8) * int(g.x) + xi;
          xi = i / 8;
        }
        std::vector<int> tiles{xi};
        if (k.causal && q_tiles >= 2) tiles.push_back(q_tiles - 1 - xi);
        out.push_back(tiles);
      }
  return out;
}

std::vector<int> aiter_fwd_work(const AiterFwdKernel& k, const FwdShape& s) {
  std::vector<int> out;
  for (const auto& tiles : aiter_fwd_q_tiles(k, s)) {
    int n = 0;
    for (int t : tiles) {
      int end = s.seqlen_k;
      if (k.causal) end = std::max(k.ts_kv, std::min((t + 1) * k.ts_qo + s.seqlen_k - s.seqlen_q, s.seqlen_k));
      n += ceil_div(end, k.ts_kv);
    }
    out.push_back(n);
  }
  return out;
}

int64_t aiter_fwd_macs_per_tile(const AiterFwdKernel& k) {
  return int64_t(k.ts_qo) * k.ts_kv * (k.d_qk + k.d_v);
}

// Tolerances. bf16 objects: P is rounded to bf16 before the PV MFMA and O to bf16 at the end (each a
// relative error of at most 2^-9 per element); on the test shapes the worst error seen is 3.6e-3 of
// max|O|, so 1e-2 x max|O| leaves a margin of about 3 and still fails on a missing key tile or a
// wrong mask. fp8 objects: P is rounded to fp8 e4m3 (3 mantissa bits: up to 2^-4 relative) before PV;
// worst seen 2.4e-2 of max|O|, tolerance 4e-2 x max|O|. LSE (natural log) comes from the f32 scores:
// worst seen 1.3e-6 on values of 5 to 8; tolerance 1e-4 absolute (room for the hardware's 1-ulp
// v_exp_f32 / v_log_f32, which the emulator computes exactly).
FwdTolerance aiter_fwd_tolerance(const AiterFwdKernel& k) {
  return k.fp8 ? FwdTolerance{4e-2, 1e-4} : FwdTolerance{1e-2, 1e-4};
}

bool aiter_fwd_supported(const AiterFwdKernel& k, const FwdShape& s, std::string* why) {
  auto no = [&](const std::string& m) {
    if (why) *why = m;
    return false;
  };
  if (s.batch < 1 || s.heads_q < 1 || s.heads_kv < 1 || s.seqlen_q < 1 || s.seqlen_k < 1) return no("empty shape");
  if (s.heads_q % s.heads_kv != 0) return no("heads_q is not a multiple of heads_kv");
  const int gqa = s.heads_q / s.heads_kv;
  // gfx950's fp8 object finds the K / V head as head >> (gqa >= 2) + (gqa >= 4) + (gqa >= 8) + (gqa >= 16)
  // (its prologue): right for gqa 1, 2, 4, 8, 16 only.
  if (k.fp8 && k.gfx == emu::Gfx::gfx950 && (gqa & (gqa - 1)) != 0) return no("gfx950 fp8: gqa must be a power of two");
  if (k.fp8 && k.gfx == emu::Gfx::gfx950 && gqa > 16) return no("gfx950 fp8: gqa above 16");
  // Bottom-right causal leaves the first s_q - s_k rows without a visible key: the reference has no
  // value for them and every element is compared, so such shapes are not run.
  if (k.causal && s.seqlen_q > s.seqlen_k) return no("causal with seqlen_q > seqlen_k leaves rows without keys");
  // the launcher's strides and the objects' buffer num_records (sequence x row stride) are 32-bit
  const int64_t in_bpe = k.fp8 ? 1 : 2, lim = int64_t(1) << 32;
  if (int64_t(s.seqlen_q) * s.heads_q * k.d_qk * in_bpe >= lim || int64_t(s.seqlen_k) * s.heads_kv * k.d_qk * in_bpe >= lim ||
      int64_t(s.seqlen_k) * s.heads_kv * k.d_v * in_bpe >= lim || int64_t(s.seqlen_q) * s.heads_q * k.d_v * 2 >= lim)
    return no("a per-batch tensor of 4 GiB or more (32-bit strides and buffer ranges)");
  return true;
}

emu::LaunchOptions aiter_fwd_options(const AiterFwdKernel& k) {
  emu::LaunchOptions o;
  o.wave_quantum = 1;
  if (k.fp8 && k.gfx == emu::Gfx::gfx950) o.check_lds_waitcnt = false;
  return o;
}

namespace {

// The argument struct as the launcher fills it (offsets: fmha_fwd_v3_args / the objects' notes).
struct Args {
  std::vector<uint8_t> b;
  explicit Args(size_t n) : b(n, 0) {}
  void u32(size_t off, uint32_t v) { std::memcpy(b.data() + off, &v, 4); }
  void f32(size_t off, float v) { std::memcpy(b.data() + off, &v, 4); }
  void u64(size_t off, uint64_t v) { std::memcpy(b.data() + off, &v, 8); }
};

float fp8_value(uint8_t code, emu::Gfx g) {
  return g == emu::Gfx::gfx942 ? fp8_e4m3fnuz_t::from_bits(code).to_float() : fp8_e4m3fn_t::from_bits(code).to_float();
}
uint8_t fp8_code(float f, emu::Gfx g) {
  return g == emu::Gfx::gfx942 ? fp8_e4m3fnuz_t::from_float(f).bits : fp8_e4m3fn_t::from_float(f).bits;
}

// Random input tensor: bf16 values uniform in [-2, 2], or fp8 codes of uniform values in
// [-2, 2] / descale (|code value| <= 128: inside both e4m3 ranges) with the value code * descale.
struct Tensor {
  std::vector<uint8_t> bytes;  // device image
  std::vector<double> value;   // what the kernel should see (dequantized)
};
Tensor make_tensor(size_t n, bool fp8, float descale, emu::Gfx g, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  Tensor t;
  t.value.resize(n);
  if (fp8) {
    t.bytes.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t c = fp8_code(u(rng) / descale, g);
      t.bytes[i] = c;
      t.value[i] = double(fp8_value(c, g)) * descale;
    }
  } else {
    t.bytes.resize(2 * n);
    for (size_t i = 0; i < n; ++i) {
      const bfloat16_t h = bfloat16_t::from_float(u(rng));
      std::memcpy(t.bytes.data() + 2 * i, &h.bits, 2);
      t.value[i] = h.to_float();
    }
  }
  return t;
}

std::string shape_text(const FwdShape& s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "b%d h%d/%d s%d/%d", s.batch, s.heads_q, s.heads_kv, s.seqlen_q, s.seqlen_k);
  return buf;
}

}  // namespace

KernelRun run_aiter_fwd(const AiterFwdKernel& k, const FwdShape& s, uint64_t seed, const emu::LaunchOptions& opt,
                        bool check) {
  KernelRun run;
  run.label = "aiter " + k.name + " " + emu::gfx_name(k.gfx) + " " + shape_text(s);
  run.grid = aiter_fwd_grid(k, s);
  run.block = {uint32_t(k.block_threads), 1, 1};
  std::string why;
  if (!aiter_fwd_supported(k, s, &why)) {
    run.detail = "not run: " + why;
    return run;
  }
  std::shared_ptr<const emu::CodeObject> co;
  const emu::KernelInfo* ki = nullptr;
  try {
    co = load_cached(k.file);
    ki = &co->kernel(k.symbol);
  } catch (const std::exception& e) {
    run.detail = std::string("cannot load: ") + e.what();
    return run;
  }
  run.lds_bytes = ki->group_segment_fixed_size;
  // total unified VGPR + AGPR (gfx90a+: COMPUTE_PGM_RSRC1 granulated count, granule 8)
  run.vgprs = int(((ki->rsrc1 & 0x3F) + 1) * 8);

  const int B = s.batch, Hq = s.heads_q, Hk = s.heads_kv, Sq = s.seqlen_q, Sk = s.seqlen_k;
  const int Dq = k.d_qk, Dv = k.d_v;
  const int in_bpe = k.fp8 ? 1 : 2, out_bpe = 2;
  std::mt19937_64 rng(seed);
  float dq = 1, dk = 1, dv = 1;
  if (k.fp8) {  // per-tensor descales, not powers of two
    std::uniform_real_distribution<float> u(1.f, 1.5f);
    dq = u(rng) / 64;
    dk = u(rng) / 64;
    dv = u(rng) / 64;
  }
  const Tensor q = make_tensor(size_t(B) * Sq * Hq * Dq, k.fp8, dq, k.gfx, rng);
  const Tensor kk = make_tensor(size_t(B) * Sk * Hk * Dq, k.fp8, dk, k.gfx, rng);
  const Tensor v = make_tensor(size_t(B) * Sk * Hk * Dv, k.fp8, dv, k.gfx, rng);
  const size_t o_elems = size_t(B) * Sq * Hq * Dv, lse_elems = size_t(B) * Hq * Sq;
  const double scale = 1.0 / std::sqrt(double(Dq));

  emu::Memory mem;
  const uint64_t d_q = mem.upload(q.bytes, "Q"), d_k = mem.upload(kk.bytes, "K"), d_v = mem.upload(v.bytes, "V");
  const uint64_t d_o = mem.upload(std::vector<uint16_t>(o_elems, 0x7FC0), "O");  // bf16 NaN
  const uint64_t d_lse = mem.upload(std::vector<float>(lse_elems, std::numeric_limits<float>::quiet_NaN()), "LSE");
  uint64_t d_dq = 0, d_dk = 0, d_dv = 0;
  if (k.fp8) {
    d_dq = mem.upload(std::vector<float>{dq}, "descale_q");
    d_dk = mem.upload(std::vector<float>{dk}, "descale_k");
    d_dv = mem.upload(std::vector<float>{dv}, "descale_v");
  }

  Args a(ki->kernarg_segment_size);
  if (a.b.size() < (k.fp8 ? 656u : 512u)) {
    run.detail = "kernarg segment of " + std::to_string(a.b.size()) + " bytes is smaller than the launcher's struct";
    return run;
  }
  a.u64(0, d_o);
  a.u64(16, d_q);
  a.u64(32, d_k);
  a.u64(48, d_v);
  a.u64(64, d_lse);
  a.f32(80, float(scale));
  a.u32(96, uint32_t(Sq));                            // s_seq_len
  a.u32(112, uint32_t(Hq * Dq * in_bpe));             // s_Seqs: Q row stride
  a.u32(128, uint32_t(k.ts_qo * Hq * Dq * in_bpe));   // s_Ts
  a.u32(144, uint32_t(Dq * in_bpe));                  // s_Hs
  a.u32(160, uint32_t(Sq * Hq * Dq * in_bpe));        // s_Bs
  a.u32(176, uint32_t(Hq / Hk));                      // s_gqa
  a.u32(192, uint32_t(Hk * Dq * in_bpe));             // s_k_Seqs
  a.u32(208, uint32_t(Dq * in_bpe));                  // s_k_Hs
  a.u32(224, uint32_t(Sk * Hk * Dq * in_bpe));        // s_k_Bs
  a.u32(240, uint32_t(aiter_fwd_msk_opt(k, s)));      // s_opt
  a.u32(256, 1);                                      // s_lse
  a.u32(272, uint32_t(Sk));                           // s_kv_seq_len
  a.u32(288, uint32_t(Dq));                           // s_qk_head_dim
  a.u32(304, uint32_t(Dv));                           // s_v_head_dim
  a.u32(320, uint32_t(Hq));                           // s_q_head_num
  a.u32(336, uint32_t(Hk * Dv * in_bpe));             // s_v_Seqs
  a.u32(352, uint32_t(Dv * in_bpe));                  // s_v_Hs
  a.u32(368, uint32_t(Sk * Hk * Dv * in_bpe));        // s_v_Bs
  a.u32(384, uint32_t(Hq * Dv * out_bpe));            // s_o_Seqs
  a.u32(400, uint32_t(Dv * out_bpe));                 // s_o_Hs
  a.u32(416, uint32_t(Sq * Hq * Dv * out_bpe));       // s_o_Bs
  // 432 ptr_qseq, 448 ptr_kseq: null (batch mode)
  a.u32(464, uint32_t(Sq * 4));                       // s_lse_Hs (LSE [b, h, s_q] f32)
  // 480 ptr_qseq_padding, 496 ptr_kseq_padding: null
  if (k.fp8) {
    a.u64(512, d_dq);
    a.u64(528, d_dk);
    a.u64(544, d_dv);
    // 560 .. 640: descale batch / head strides, 0 (per-tensor)
  }

  try {
    run.stats = emu::launch(*co, *ki, run.grid, run.block, 0, a.b.data(), a.b.size(), mem, opt);
  } catch (const std::exception& e) {
    run.detail = std::string("emulator: ") + e.what();
    return run;
  }
  if (!check) return run;

  std::vector<uint16_t> o = mem.download<uint16_t>(d_o, o_elems);
  std::vector<float> lse = mem.download<float>(d_lse, lse_elems);
  // float64 reference, then the comparison of every element
  std::vector<double> ref_o(o_elems), ref_lse(lse_elems);
  std::vector<double> sc(static_cast<size_t>(Sk));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hq; ++h) {
      const int hk = h / (Hq / Hk);
      for (int i = 0; i < Sq; ++i) {
        const int last = k.causal ? std::min(Sk - 1, i + Sk - Sq) : Sk - 1;
        const double* qi = &q.value[((size_t(b) * Sq + i) * Hq + h) * Dq];
        double m = -std::numeric_limits<double>::infinity();
        for (int j = 0; j <= last; ++j) {
          const double* kj = &kk.value[((size_t(b) * Sk + j) * Hk + hk) * Dq];
          double d = 0;
          for (int c = 0; c < Dq; ++c) d += qi[c] * kj[c];
          sc[size_t(j)] = d * scale;
          m = std::max(m, sc[size_t(j)]);
        }
        double l = 0;
        for (int j = 0; j <= last; ++j) l += (sc[size_t(j)] = std::exp(sc[size_t(j)] - m));
        double* oi = &ref_o[((size_t(b) * Sq + i) * Hq + h) * Dv];
        for (int c = 0; c < Dv; ++c) oi[c] = 0;
        for (int j = 0; j <= last; ++j) {
          const double* vj = &v.value[((size_t(b) * Sk + j) * Hk + hk) * Dv];
          const double p = sc[size_t(j)] / l;
          for (int c = 0; c < Dv; ++c) oi[c] += p * vj[c];
        }
        ref_lse[(size_t(b) * Hq + h) * Sq + i] = m + std::log(l);
      }
    }
  const FwdTolerance tol = aiter_fwd_tolerance(k);
  double o_scale = 0;
  for (double x : ref_o) o_scale = std::max(o_scale, std::fabs(x));
  const double o_tol = tol.out_rel_scale * o_scale;
  auto bad = [&](const std::string& what) {
    if (run.bad++ == 0) run.detail = what;
  };
  for (size_t e = 0; e < o_elems; ++e) {
    const double got = bfloat16_t::from_bits(o[e]).to_float(), want = ref_o[e];
    const double err = std::fabs(got - want);
    ++run.compared;
    if (!(err <= o_tol)) {
      const size_t c = e % Dv, h = e / Dv % Hq, i = e / Dv / Hq % Sq, b = e / Dv / Hq / Sq;
      char buf[200];
      std::snprintf(buf, sizeof buf, "O[b%zu s%zu h%zu d%zu] = %.6g, reference %.6g (tolerance %.3g)", b, i, h, c, got,
                    want, o_tol);
      bad(buf);
    }
    if (std::isfinite(err)) {
      run.max_abs_err = std::max(run.max_abs_err, err);
      run.max_rel_err = std::max(run.max_rel_err, err / o_scale);
    }
  }
  for (size_t e = 0; e < lse_elems; ++e) {
    const double got = lse[e], want = ref_lse[e];
    const double err = std::fabs(got - want);
    ++run.compared;
    if (!(err <= tol.lse_abs)) {
      const size_t i = e % Sq, h = e / Sq % Hq, b = e / Sq / Hq;
      char buf[200];
      std::snprintf(buf, sizeof buf, "LSE[b%zu h%zu s%zu] = %.6g, reference %.6g (tolerance %.3g)", b, h, i, got, want,
                    tol.lse_abs);
      bad(buf);
    }
  }
  run.checked = true;
  if (run.bad) run.detail = std::to_string(run.bad) + " of " + std::to_string(run.compared) + " bad; first: " + run.detail;
  return run;
}

}  // namespace hipattn::timing
