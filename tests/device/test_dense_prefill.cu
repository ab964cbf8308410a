// Parity suite of dense prefill (dispatch/dense_prefill.hpp: the sm_90 warp-specialised kernel of
// kernels/dense_prefill) against the float64 reference (reference/dense_prefill.hpp), on the GPU.
//
// Problems: seeded std::mt19937_64 data, uniform in [-1, 1], rounded to the dtype, never 0, in strided
// storage whose unowned elements (head, token and batch padding) hold NaN bits, so a stray read shows up.
// Packed varlen (cu_seqlens_q / cu_seqlens_k on the device) and batched BSHD (through the batch strides).
//
// Every launch runs over a poisoned output and LSE (0xFF bytes: NaN), is checked (the entry point's
// error, the runtime's last error, the synchronization), and then:
//   * every owned output element and LSE is checked: rows the reference computed (every row of a small
//     problem, sampled rows of a large one, see RowPlan) within the dtype's tolerance (compare.hpp:
//     out_tolerance, kLseTolerance); rows that see no key exactly 0 and LSE -inf; the other rows within
//     bounds (finite, |out| <= max |v| = 1, LSE within log(n) +- the largest possible logit), so every
//     element must have been written;
//   * every element of out that no query owns (strided padding) and every LSE column past num_tokens_q
//     still holds the poison: the kernel writes nothing else.
// With a softcap, the output must also differ from the no-softcap reference (the logits are scaled up
// so that the cap bends them by more than the tolerance): a kernel that ignores the cap fails.
//
// The parity tests run on sm_90 (the CDNA kernels run on the emulator tier: tests/emu/
// test_emu_dense_prefill.cpp); they skip themselves, saying why, on any other device, when the binary's
// device code lacks sm_90a, and when no GPU is present. The error tests run on any GPU; the harness test
// needs none.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../common/compare.hpp"
#include "../common/gpu.hpp"
#include "hipattn/dispatch/dense_prefill.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/problem/dense_prefill_rules.hpp"
#include "hipattn/reference/dense_prefill.hpp"
#if defined(HIPATTN_BACKEND_CUDA)
#include "../common/sm90_check.hpp"
#endif

namespace hipattn::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint16_t kPoison16 = 0xFFFFu;     // NaN as fp16 and bf16
constexpr uint32_t kPoison32 = 0xFFFFFFFFu;  // NaN as float

// Empty when dense prefill can run here, else why not.
std::string dense_prefill_unavailable() {
  if (!gpu_present()) return "no GPU present: device test skipped";
  const rt::DeviceProperties& dev = rt::cached_device_properties();
  if (dev.target != Target::sm90)
    return "this suite runs the sm_90 kernel (every head pair, any strides); this device is " + dev.arch_name +
           " (target " + std::string(target_name(dev.target)) +
           "): skipped (the CDNA kernels run on the emulator tier, tests/emu/test_emu_dense_prefill.cpp)";
#if defined(HIPATTN_BACKEND_CUDA)
  static const std::string code = sm90_check::unavailable(3);  // the binary's device code: sm_90a (wgmma)
  if (!code.empty()) return code;
#endif
  return {};
}

#define REQUIRE_DENSE_PREFILL()                                                    \
  do {                                                                             \
    const std::string why_ = ::hipattn::testing::dense_prefill_unavailable();      \
    if (!why_.empty()) GTEST_SKIP() << why_;                                       \
  } while (0)

double to_double(uint16_t bits, bool bf16) {
  return bf16 ? double(bfloat16_t::from_bits(bits).to_float()) : double(half_t::from_bits(bits).to_float());
}
float float_of(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// ---------------------------------------------------------------------------------------------
// a dense prefill problem: strided host storage (the reference's input) and its device copies
// ---------------------------------------------------------------------------------------------

// Extra elements after each head row / token / sequence (batched). Multiples of 8 elements keep every
// stride a multiple of 16 bytes (the rules' requirement).
struct DensePad {
  int head = 0, token = 0, batch = 0;
};

struct DenseStrides {
  int64_t head = 0, token = 0, batch = 0;
};
DenseStrides strides_of(int heads, int d, int len, const DensePad& pad) {
  DenseStrides s;
  s.head = d + pad.head;
  s.token = heads * s.head + pad.token;
  s.batch = int64_t(len) * s.token + pad.batch;
  return s;
}

// What the logits are: mask, softcap, scale.
struct DenseLogits {
  bool causal = true;
  int window_left = -1;
  float softcap = 0.f;
  float scale = 0.f;  // 0: 1 / sqrt(head_size_qk), 5 / sqrt(head_size_qk) with a softcap (logits up to
                      // about 7: the cap of 30 bends them by more than the tolerance)
  float scale_for(int dqk) const { return scale > 0.f ? scale : (softcap > 0.f ? 5.f : 1.f) / std::sqrt(float(dqk)); }
  std::string str() const {
    std::string s = causal ? "causal" : "non-causal";
    if (window_left >= 0) s += " wl=" + std::to_string(window_left);
    if (softcap > 0.f) s += " cap=" + std::to_string(int(softcap));
    return s;
  }
};

struct DenseSpec {
  DType dt = DType::f16;
  int dqk = 128, dv = 128;
  int nqh = 8, nkvh = 2;
  bool batched = false;
  std::vector<std::pair<int, int>> seqs;  // (q_len, kv_len); batched: every pair the same
  DensePad qpad, kpad, vpad, opad;
  int lse_pad = 0;  // lse_stride_head = num_tokens_q + lse_pad
  uint64_t seed = 1;
  bool bf16() const { return dt == DType::bf16; }
};

std::string describe(const DenseSpec& s) {
  std::string r = std::string(dtype_name(s.dt)) + " d" + std::to_string(s.dqk) + "/" + std::to_string(s.dv) + " h" +
                  std::to_string(s.nqh) + ":" + std::to_string(s.nkvh) + (s.batched ? " batched" : " packed") + " (";
  for (size_t i = 0; i < s.seqs.size() && i < 6; ++i) {
    if (i > 0) r += ",";
    r += std::to_string(s.seqs[i].first) + "x" + std::to_string(s.seqs[i].second);
  }
  if (s.seqs.size() > 6) {
    r += ",.. ";
    r += std::to_string(s.seqs.size()) + " seqs";
  }
  r += ")";
  const auto padded = [](const DensePad& p) { return p.head || p.token || p.batch; };
  if (padded(s.qpad) || padded(s.kpad) || padded(s.vpad) || padded(s.opad) || s.lse_pad) r += " padded";
  return r;
}

// The host side: q, k, v in strided storage (NaN bits where no token owns an element), cu_seqlens.
struct DenseHost {
  DenseSpec s;
  int B = 0, Lq = 0, Lk = 0;  // num_seqs, max_seqlen_q, max_seqlen_k
  int64_t Tq = 0, Tk = 0;     // num_tokens_q, num_tokens_k
  std::vector<int32_t> cu_q, cu_k;  // batched: b * Lq and b * Lk (token indices; not passed)
  DenseStrides qs, ks, vs, os;
  std::vector<uint16_t> q, k, v;

  explicit DenseHost(const DenseSpec& spec) : s(spec) {
    B = int(s.seqs.size());
    cu_q = {0};
    cu_k = {0};
    for (const auto& [lq, lk] : s.seqs) {
      if (lq < 0 || lk < 0) throw std::invalid_argument("negative length");
      if (s.batched && (lq != s.seqs[0].first || lk != s.seqs[0].second))
        throw std::invalid_argument("batched: every sequence has the same lengths");
      cu_q.push_back(cu_q.back() + lq);
      cu_k.push_back(cu_k.back() + lk);
      Lq = std::max(Lq, lq);
      Lk = std::max(Lk, lk);
    }
    Tq = cu_q.back();
    Tk = cu_k.back();
    qs = strides_of(s.nqh, s.dqk, Lq, s.qpad);
    ks = strides_of(s.nkvh, s.dqk, Lk, s.kpad);
    vs = strides_of(s.nkvh, s.dv, Lk, s.vpad);
    os = strides_of(s.nqh, s.dv, Lq, s.opad);
    q.assign(storage(qs, Tq), kPoison16);
    k.assign(storage(ks, Tk), kPoison16);
    v.assign(storage(vs, Tk), kPoison16);
    std::mt19937_64 g(s.seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    const auto value = [&] {
      for (;;) {
        const uint16_t b = float_to_16(u(g), s.bf16());
        if (to_double(b, s.bf16()) != 0.0) return b;
      }
    };
    for (int b = 0; b < B; ++b) {
      for (int i = 0; i < qlen(b); ++i)
        for (int h = 0; h < s.nqh; ++h)
          for (int d = 0; d < s.dqk; ++d) q[size_t(q_off(b, i) + h * qs.head + d)] = value();
      for (int j = 0; j < klen(b); ++j)
        for (int h = 0; h < s.nkvh; ++h) {
          for (int d = 0; d < s.dqk; ++d) k[size_t(k_off(b, j) + h * ks.head + d)] = value();
          for (int d = 0; d < s.dv; ++d) v[size_t(v_off(b, j) + h * vs.head + d)] = value();
        }
    }
  }

  size_t storage(const DenseStrides& st, int64_t tokens) const {
    return size_t(s.batched ? int64_t(B) * st.batch : tokens * st.token);
  }
  size_t out_elems() const { return storage(os, Tq); }
  int64_t lse_stride() const { return Tq + s.lse_pad; }
  size_t lse_elems() const { return size_t(int64_t(s.nqh) * lse_stride()); }

  int qlen(int b) const { return cu_q[b + 1] - cu_q[b]; }
  int klen(int b) const { return cu_k[b + 1] - cu_k[b]; }
  // The token index of query i of sequence b: its LSE column and the reference's row.
  int64_t tok(int b, int64_t i) const { return cu_q[b] + i; }
  // Element offsets of query / key / output row i (head 0, dim 0) of sequence b.
  int64_t q_off(int b, int64_t i) const { return s.batched ? b * qs.batch + i * qs.token : (cu_q[b] + i) * qs.token; }
  int64_t k_off(int b, int64_t j) const { return s.batched ? b * ks.batch + j * ks.token : (cu_k[b] + j) * ks.token; }
  int64_t v_off(int b, int64_t j) const { return s.batched ? b * vs.batch + j * vs.token : (cu_k[b] + j) * vs.token; }
  int64_t o_off(int b, int64_t i) const { return s.batched ? b * os.batch + i * os.token : (cu_q[b] + i) * os.token; }

  // The problem over the given pointers (host or device).
  DensePrefillParams params(const void* q_, const void* k_, const void* v_, const int32_t* cq, const int32_t* ck, void* out,
                            float* lse, const DenseLogits& lg) const {
    DensePrefillParams p;
    p.dtype = s.dt;
    p.q = q_;
    p.q_stride_token = qs.token, p.q_stride_head = qs.head, p.q_stride_batch = s.batched ? qs.batch : 0;
    p.k = k_;
    p.k_stride_token = ks.token, p.k_stride_head = ks.head, p.k_stride_batch = s.batched ? ks.batch : 0;
    p.v = v_;
    p.v_stride_token = vs.token, p.v_stride_head = vs.head, p.v_stride_batch = s.batched ? vs.batch : 0;
    p.cu_seqlens_q = s.batched ? nullptr : cq;
    p.cu_seqlens_k = s.batched ? nullptr : ck;
    p.num_seqs = B;
    p.num_tokens_q = int32_t(Tq);
    p.num_tokens_k = int32_t(Tk);
    p.max_seqlen_q = Lq;
    p.max_seqlen_k = Lk;
    p.num_q_heads = s.nqh;
    p.num_kv_heads = s.nkvh;
    p.head_size_qk = s.dqk;
    p.head_size_v = s.dv;
    p.scale = lg.scale_for(s.dqk);
    p.causal = lg.causal;
    p.window_left = lg.window_left;
    p.softcap = lg.softcap;
    p.out = out;
    p.o_stride_token = os.token, p.o_stride_head = os.head, p.o_stride_batch = s.batched ? os.batch : 0;
    p.lse = lse;
    p.lse_stride_head = lse != nullptr ? lse_stride() : 0;
    return p;
  }
  // The reference's params: host q, k, v and cu_seqlens (no outputs).
  DensePrefillParams host_params(const DenseLogits& lg) const {
    return params(q.empty() ? nullptr : q.data(), k.empty() ? nullptr : k.data(), v.empty() ? nullptr : v.data(),
                  cu_q.data(), cu_k.data(), nullptr, nullptr, lg);
  }
  // The visible keys of query i of sequence b (position klen - qlen + i, bottom-right).
  reference::KeyRange visible(const DensePrefillParams& hp, int b, int64_t i) const {
    return reference::visible_keys(hp, int64_t(klen(b)) - qlen(b) + i, klen(b));
  }
};

// The device copies, a poisoned output (and LSE) of the same strided shape.
struct DenseDevice {
  const DenseHost& h;
  DeviceBuffer q, k, v, cu_q, cu_k, out, lse;

  explicit DenseDevice(const DenseHost& hp)
      : h(hp), q(DeviceBuffer::from(hp.q)), k(DeviceBuffer::from(hp.k)), v(DeviceBuffer::from(hp.v)) {
    if (!h.s.batched) {
      cu_q = DeviceBuffer::from(h.cu_q);
      cu_k = DeviceBuffer::from(h.cu_k);
    }
    out = DeviceBuffer(std::max<size_t>(16, h.out_elems() * sizeof(uint16_t)));
    lse = DeviceBuffer(std::max<size_t>(16, h.lse_elems() * sizeof(float)));
  }
  DensePrefillParams params(const DenseLogits& lg, bool with_lse) const {
    return h.params(q.ptr, k.ptr, v.ptr, cu_q.as<int32_t>(), cu_k.as<int32_t>(), out.ptr,
                    with_lse ? lse.as<float>() : nullptr, lg);
  }
  void poison(rt::stream_t st) {
    HIPATTN_CHECK(rt::memset_async(out.ptr, 0xFF, out.bytes, st));
    HIPATTN_CHECK(rt::memset_async(lse.ptr, 0xFF, lse.bytes, st));
  }
};

struct DenseRun {
  std::vector<uint16_t> out;      // the whole strided output, padding included
  std::vector<uint32_t> lse;      // [num_q_heads][lse_stride] as bits; empty without LSE
};

// Poison the outputs, run dense_prefill on `st`, check the launch and the stream, download.
DenseRun run_dense(DenseDevice& d, const DenseLogits& lg, bool with_lse, rt::stream_t st = nullptr) {
  d.poison(st);
  prebuilt::dense_prefill(d.params(lg, with_lse), st);
  HIPATTN_CHECK(rt::get_last_error());
  HIPATTN_CHECK(rt::device_synchronize());
  DenseRun r;
  r.out.resize(d.h.out_elems());
  if (!r.out.empty()) HIPATTN_CHECK(rt::memcpy_d2h(r.out.data(), d.out.ptr, r.out.size() * sizeof(uint16_t)));
  if (with_lse) {
    r.lse.resize(d.h.lse_elems());
    if (!r.lse.empty()) HIPATTN_CHECK(rt::memcpy_d2h(r.lse.data(), d.lse.ptr, r.lse.size() * sizeof(uint32_t)));
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// the reference rows: every row of a small problem, sampled rows of a large one
// ---------------------------------------------------------------------------------------------

// The reference is float64 on the host: problems up to kFullReferenceMacs multiply-adds (an upper
// bound: sum of q_len * kv_len * heads * (d_qk + d_v)) run it whole; larger ones run it on sampled
// rows, where a sequence up to kAllRowsMacs still gets every row.
constexpr double kFullReferenceMacs = 1.2e9;
constexpr double kAllRowsMacs = 2e7;
constexpr int kRandomRows = 12;

double reference_macs(const DenseHost& h, int b) {
  return double(h.qlen(b)) * h.klen(b) * h.s.nqh * (h.s.dqk + h.s.dv);
}

// The rows to check against the reference, per sequence; `all` when the whole reference runs.
struct RowPlan {
  bool all = true;
  std::vector<std::vector<int>> rows;  // per sequence (when !all)
  int64_t count = 0;                   // rows referenced
};

// Sampled rows of one sequence: the first and last three, both sides of the 64- and 128-row tile edges
// (the first four and the last), the last row without a visible key and the first with one (causal,
// q_len > kv_len), both sides of where the window starts to clip, and kRandomRows random rows.
std::vector<int> sample_rows(int lq, int lk, const DenseLogits& lg, std::mt19937_64& g) {
  std::set<int> r;
  const auto add = [&](int64_t i) {
    if (i >= 0 && i < lq) r.insert(int(i));
  };
  for (int i = 0; i < 3; ++i) {
    add(i);
    add(lq - 1 - i);
  }
  for (int edge : {64, 128, 192, 256}) {
    add(edge - 1);
    add(edge);
  }
  for (int tile : {64, 128}) {
    const int64_t last = int64_t(std::max(lq - 1, 0)) / tile * tile;
    add(last - 1);
    add(last);
  }
  const int64_t ctx = int64_t(lk) - lq;  // query i sits at position ctx + i
  if (lg.causal && ctx < 0) {
    add(-ctx - 1);
    add(-ctx);
  }
  if (lg.window_left >= 0) {  // pos - window_left == 0
    add(lg.window_left - ctx);
    add(lg.window_left - ctx + 1);
  }
  if (lq > 0) {
    std::uniform_int_distribution<int> u(0, lq - 1);
    for (int k = 0; k < kRandomRows; ++k) add(u(g));
  }
  return {r.begin(), r.end()};
}

RowPlan plan_rows(const DenseHost& h, const DenseLogits& lg) {
  RowPlan plan;
  double total = 0;
  for (int b = 0; b < h.B; ++b) total += reference_macs(h, b);
  if (total <= kFullReferenceMacs) {
    plan.count = h.Tq;
    return plan;
  }
  plan.all = false;
  std::mt19937_64 g(h.s.seed * 7919 + 17);
  for (int b = 0; b < h.B; ++b) {
    std::vector<int> rows;
    if (reference_macs(h, b) <= kAllRowsMacs) {
      rows.resize(size_t(h.qlen(b)));
      std::iota(rows.begin(), rows.end(), 0);
    } else {
      rows = sample_rows(h.qlen(b), h.klen(b), lg, g);
    }
    plan.count += int64_t(rows.size());
    plan.rows.push_back(std::move(rows));
  }
  return plan;
}

// The reference's output and LSE of some rows.
struct Expected {
  int64_t H = 0, DV = 0, rows = 0;
  std::vector<int64_t> row_of;  // token -> its row below; -1: not referenced (checked within bounds)
  std::vector<double> out;      // [row][H][DV]
  std::vector<double> lse;      // [row][H]
  const double* out_row(int64_t t, int64_t h) const { return &out[size_t((row_of[size_t(t)] * H + h) * DV)]; }
  double lse_of(int64_t t, int64_t h) const { return lse[size_t(row_of[size_t(t)] * H + h)]; }
};

// The whole reference (reference::dense_prefill over the host problem).
Expected expected_full(const DenseHost& h, const DenseLogits& lg) {
  const reference::AttentionResult r = reference::dense_prefill(h.host_params(lg));
  Expected e;
  e.H = h.s.nqh, e.DV = h.s.dv, e.rows = h.Tq;
  e.row_of.resize(size_t(h.Tq));
  std::iota(e.row_of.begin(), e.row_of.end(), int64_t(0));
  e.out = r.out;  // [T][H][DV]
  e.lse.resize(size_t(h.Tq * e.H));
  for (int64_t t = 0; t < h.Tq; ++t)
    for (int64_t hh = 0; hh < e.H; ++hh) e.lse[size_t(t * e.H + hh)] = r.lse[size_t(hh * h.Tq + t)];
  return e;
}

// The reference of single rows: query i of sequence b (every head) as a batched problem of one query
// over exactly its visible keys [begin, end) (reference::visible_keys, the rule the whole reference
// applies), unmasked. The same arithmetic as the whole reference's row (DensePrefillHarness checks it).
Expected expected_rows(const DenseHost& h, const DenseLogits& lg, const std::vector<std::vector<int>>& rows) {
  const DensePrefillParams hp = h.host_params(lg);
  Expected e;
  e.H = h.s.nqh, e.DV = h.s.dv;
  e.row_of.assign(size_t(h.Tq), -1);
  for (int b = 0; b < h.B; ++b)
    for (int i : rows[size_t(b)]) {
      const reference::KeyRange kr = h.visible(hp, b, i);
      const int32_t n = int32_t(kr.end - kr.begin);
      DensePrefillParams r = hp;
      r.cu_seqlens_q = r.cu_seqlens_k = nullptr;
      r.num_seqs = 1;
      r.num_tokens_q = r.max_seqlen_q = 1;
      r.num_tokens_k = r.max_seqlen_k = n;
      r.q = h.q.data() + h.q_off(b, i);
      r.k = n > 0 ? static_cast<const void*>(h.k.data() + h.k_off(b, kr.begin)) : nullptr;
      r.v = n > 0 ? static_cast<const void*>(h.v.data() + h.v_off(b, kr.begin)) : nullptr;
      r.q_stride_batch = r.k_stride_batch = r.v_stride_batch = 0;
      r.causal = false;
      r.window_left = -1;
      const reference::AttentionResult res = reference::dense_prefill(r);
      e.row_of[size_t(h.tok(b, i))] = e.rows++;
      e.out.insert(e.out.end(), res.out.begin(), res.out.end());  // [1][H][DV]
      e.lse.insert(e.lse.end(), res.lse.begin(), res.lse.end());  // [H][1]
    }
  return e;
}

Expected expected_for(const DenseHost& h, const DenseLogits& lg, const RowPlan& plan) {
  return plan.all ? expected_full(h, lg) : expected_rows(h, lg, plan.rows);
}

// ---------------------------------------------------------------------------------------------
// the comparison
// ---------------------------------------------------------------------------------------------

struct DenseCheck {
  int64_t bad = 0, checked = 0, referenced = 0, bounded = 0;  // elements
  double max_abs = 0, sum_sq_err = 0, sum_sq_ref = 0;
  std::string first_bad;
  double rel_l2() const { return sum_sq_ref > 0 ? std::sqrt(sum_sq_err / sum_sq_ref) : std::sqrt(sum_sq_err); }
  void fail(const std::string& m) {
    if (bad++ >= 4) return;
    if (!first_bad.empty()) first_bad += "; ";
    first_bad += m;
  }
};

std::string row_name(int b, int64_t i, int64_t h) {
  return "seq " + std::to_string(b) + " row " + std::to_string(i) + " head " + std::to_string(h);
}

// Every owned element of `r` (see the top of the file), and the padding.
DenseCheck compare(const DenseHost& h, const DenseLogits& lg, const Expected& e, const DenseRun& r, bool with_lse) {
  DenseCheck c;
  const DensePrefillParams hp = h.host_params(lg);
  const bool bf16 = h.s.bf16();
  const Tolerance tol = out_tolerance(bf16);
  const int H = h.s.nqh, DV = h.s.dv;
  // |q . k| <= head_size_qk (every element in [-1, 1]); a softcap bounds the logit by the cap.
  const double smax = lg.softcap > 0.f ? double(lg.softcap) : double(lg.scale_for(h.s.dqk)) * h.s.dqk;
  const double out_bound = 1.0 + tol.atol + tol.rtol;
  std::vector<char> owned(r.out.size(), 0);
  for (int b = 0; b < h.B; ++b)
    for (int64_t i = 0; i < h.qlen(b); ++i) {
      const int64_t t = h.tok(b, i);
      const reference::KeyRange kr = h.visible(hp, b, i);
      const int64_t n = kr.end - kr.begin;
      const bool ref_row = e.row_of[size_t(t)] >= 0;
      const int64_t ob = h.o_off(b, i);
      for (int64_t hh = 0; hh < H; ++hh) {
        const double* want = ref_row ? e.out_row(t, hh) : nullptr;
        for (int64_t d = 0; d < DV; ++d) {
          const size_t idx = size_t(ob + hh * h.os.head + d);
          owned[idx] = 1;
          const double got = to_double(r.out[idx], bf16);
          const auto elem = [&] {
            return "out " + row_name(b, i, hh) + " dim " + std::to_string(d) + " = " + std::to_string(got);
          };
          ++c.checked;
          if (n == 0) {  // no visible key: zeros
            if (!(got == 0.0)) c.fail(elem() + ", want 0 (no visible key)");
          } else if (ref_row) {
            ++c.referenced;
            const double err = std::fabs(got - want[d]);
            c.sum_sq_err += std::isfinite(err) ? err * err : 1e30;
            c.sum_sq_ref += want[d] * want[d];
            if (!(err <= tol.atol + tol.rtol * std::fabs(want[d])))
              c.fail(elem() + ", want " + std::to_string(want[d]));
            else
              c.max_abs = std::max(c.max_abs, err);
          } else {
            ++c.bounded;
            if (!(std::fabs(got) <= out_bound))
              c.fail(elem() + " (unreferenced row: outside [-1, 1], the range of V)");
          }
        }
        if (!with_lse) continue;
        const double got = float_of(r.lse[size_t(hh * h.lse_stride() + t)]);
        ++c.checked;
        if (n == 0) {
          if (!(got == -kInf)) c.fail("lse " + row_name(b, i, hh) + " = " + std::to_string(got) + ", want -inf (no visible key)");
        } else if (ref_row) {
          ++c.referenced;
          const double w = e.lse_of(t, hh);
          if (!(std::fabs(got - w) <= kLseTolerance.atol + kLseTolerance.rtol * std::fabs(w)))
            c.fail("lse " + row_name(b, i, hh) + " = " + std::to_string(got) + ", want " + std::to_string(w));
        } else {
          ++c.bounded;
          const double mid = std::log(double(n)), slack = kLseTolerance.atol + kLseTolerance.rtol * (std::fabs(mid) + smax);
          if (!(std::isfinite(got) && got >= mid - smax - slack && got <= mid + smax + slack))
            c.fail("lse " + row_name(b, i, hh) + " = " + std::to_string(got) + " (unreferenced row: outside log(" +
                   std::to_string(n) + ") +- " + std::to_string(smax) + ")");
        }
      }
    }
  // Nothing else written: the output's padding and the LSE columns past num_tokens_q keep the poison.
  int64_t stray = 0;
  for (size_t idx = 0; idx < r.out.size(); ++idx)
    if (!owned[idx] && r.out[idx] != kPoison16 && stray++ == 0)
      c.fail("out element " + std::to_string(idx) + " (padding, no query owns it) was written");
  if (with_lse)
    for (int64_t hh = 0; hh < H; ++hh)
      for (int64_t t = h.Tq; t < h.lse_stride(); ++t)
        if (r.lse[size_t(hh * h.lse_stride() + t)] != kPoison32 && stray++ == 0)
          c.fail("lse head " + std::to_string(hh) + " column " + std::to_string(t) + " (past num_tokens_q) was written");
  if (stray > 1) c.bad += stray - 1;
  return c;
}

// One launch of `lg` on the problem, compared with the reference; returns the run.
DenseRun check_case(const DenseHost& h, DenseDevice& d, const DenseLogits& lg, const std::string& what, bool with_lse = true,
                    rt::stream_t st = nullptr) {
  const std::string name = what + " " + lg.str() + (with_lse ? "" : " no-lse");
  SCOPED_TRACE(name);
  const RowPlan plan = plan_rows(h, lg);
  const Expected e = expected_for(h, lg, plan);
  DenseRun r = run_dense(d, lg, with_lse, st);
  const DenseCheck c = compare(h, lg, e, r, with_lse);
  EXPECT_EQ(c.bad, 0) << c.bad << " of " << c.checked << " elements wrong; first: " << c.first_bad;
  if (h.Tq > 0) EXPECT_GT(c.checked, 0);
  if (lg.softcap > 0.f) {  // the cap must show: the output differs from the uncapped reference
    DenseLogits off = lg;
    off.softcap = 0.f;
    off.scale = lg.scale_for(h.s.dqk);
    const DenseCheck c0 = compare(h, off, expected_for(h, off, plan), r, with_lse);
    EXPECT_GT(c0.bad, 0) << "the output matches the reference without the softcap: the cap was not applied";
  }
  std::printf("  %-100s max|err| %.2e rel-l2 %.2e rows %lld/%lld%s\n", name.c_str(), c.max_abs, c.rel_l2(),
              static_cast<long long>(plan.count), static_cast<long long>(h.Tq), plan.all ? "" : " (sampled)");
  return r;
}

const std::pair<int, int>& head_pair(int i) { return kDensePrefillHeadSizes[size_t(i) % kDensePrefillHeadSizes.size()]; }

// ---------------------------------------------------------------------------------------------
// the harness itself (host only): sampled rows equal the whole reference's, and the comparison
// accepts the reference's own output written through the strides
// ---------------------------------------------------------------------------------------------

TEST(DensePrefillHarness, SampledRowsMatchTheWholeReference) {
  uint64_t seed = 9000;
  for (bool batched : {false, true})
    for (int hp : {0, 3}) {
      DenseSpec s;
      s.dt = hp == 0 ? DType::f16 : DType::bf16;
      s.dqk = head_pair(hp).first, s.dv = head_pair(hp).second;
      s.nqh = 4, s.nkvh = 2;
      s.batched = batched;
      s.seqs = batched ? std::vector<std::pair<int, int>>{{9, 5}, {9, 5}, {9, 5}}
                       : std::vector<std::pair<int, int>>{{3, 0}, {5, 2}, {0, 4}, {9, 9}, {4, 13}, {7, 30}};
      s.qpad = {8, 16, 8}, s.kpad = {0, 8, 16}, s.vpad = {16, 0, 8}, s.opad = {8, 8, 24};
      s.lse_pad = 3;
      s.seed = ++seed;
      const DenseHost h(s);
      for (const DenseLogits& lg : {DenseLogits{true, -1, 0.f}, DenseLogits{true, 2, 30.f}, DenseLogits{false, 3, 0.f},
                                    DenseLogits{false, -1, 30.f}}) {
        SCOPED_TRACE(describe(s) + " " + lg.str());
        const Expected full = expected_full(h, lg);
        std::vector<std::vector<int>> rows;
        for (int b = 0; b < h.B; ++b) {
          rows.emplace_back(size_t(h.qlen(b)));
          std::iota(rows.back().begin(), rows.back().end(), 0);
        }
        const Expected each = expected_rows(h, lg, rows);
        ASSERT_EQ(each.rows, h.Tq);
        for (int64_t t = 0; t < h.Tq; ++t)
          for (int64_t hh = 0; hh < full.H; ++hh) {
            const double a = full.lse_of(t, hh), b = each.lse_of(t, hh);
            if (std::isinf(a)) EXPECT_EQ(a, b) << "token " << t << " head " << hh;
            else EXPECT_NEAR(a, b, 1e-12 * (1 + std::fabs(a))) << "token " << t << " head " << hh;
            for (int64_t d = 0; d < full.DV; ++d)
              EXPECT_NEAR(full.out_row(t, hh)[d], each.out_row(t, hh)[d], 1e-12)
                  << "token " << t << " head " << hh << " dim " << d;
          }

        // The reference written through the strides (reference::write_outputs) passes the comparison,
        // whole and sampled; one written padding element does not.
        std::vector<uint16_t> out(h.out_elems(), kPoison16);
        std::vector<float> lse(h.lse_elems(), float_of(kPoison32));
        DensePrefillParams p = h.host_params(lg);
        p.out = out.data();
        p.lse = lse.data();
        p.lse_stride_head = h.lse_stride();
        const reference::AttentionResult res = reference::dense_prefill(h.host_params(lg));
        reference::write_outputs(res, p);
        DenseRun r;
        r.out = out;
        r.lse.resize(lse.size());
        std::memcpy(r.lse.data(), lse.data(), lse.size() * sizeof(float));
        const DenseCheck c = compare(h, lg, full, r, true);
        EXPECT_EQ(c.bad, 0) << c.first_bad;
        EXPECT_EQ(c.bounded, 0);
        std::vector<std::vector<int>> some(size_t(h.B));
        for (int b = 0; b < h.B; ++b)
          if (h.qlen(b) > 0) some[size_t(b)] = {h.qlen(b) - 1};
        const DenseCheck cs = compare(h, lg, expected_rows(h, lg, some), r, true);
        EXPECT_EQ(cs.bad, 0) << cs.first_bad;
        EXPECT_GT(cs.bounded, 0);
        r.out[size_t(h.os.head - 1)] = 0;  // padding after head 0 of token 0 (opad.head > 0)
        EXPECT_EQ(compare(h, lg, full, r, true).bad, 1);
      }
    }
}

// ---------------------------------------------------------------------------------------------
// every head-size pair x fp16 / bf16, packed varlen, causal and not
// ---------------------------------------------------------------------------------------------

class DensePrefillHeads : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(DensePrefillHeads, MatchesReference) {
  REQUIRE_DENSE_PREFILL();
  const auto [hp, bf16] = GetParam();
  DenseSpec s;
  s.dt = bf16 ? DType::bf16 : DType::f16;
  s.dqk = head_pair(hp).first, s.dv = head_pair(hp).second;
  s.nqh = 8, s.nkvh = 2;
  s.seqs = {{1, 1}, {7, 7}, {0, 5}, {5, 0}, {129, 300}, {300, 300}, {64, 1000}, {17, 17}};
  s.seed = 100 + hp * 2 + int(bf16);
  const DenseHost h(s);
  DenseDevice d(h);
  for (bool causal : {true, false}) check_case(h, d, DenseLogits{causal}, describe(s));
}

std::string heads_name(const ::testing::TestParamInfo<std::tuple<int, bool>>& i) {
  const auto& [qk, v] = head_pair(std::get<0>(i.param));
  return "qk" + std::to_string(qk) + "_v" + std::to_string(v) + (std::get<1>(i.param) ? "_bf16" : "_fp16");
}
INSTANTIATE_TEST_SUITE_P(Pairs, DensePrefillHeads, ::testing::Combine(::testing::Range(0, 4), ::testing::Bool()), heads_name);

// ---------------------------------------------------------------------------------------------
// masks: causal or not x window (none, 0, 17, 300), each with the softcap off and on; the head pair and
// dtype rotate so that every pair meets every mask family
// ---------------------------------------------------------------------------------------------

constexpr int kWindows[] = {-1, 0, 17, 300};

class DensePrefillMasks : public ::testing::TestWithParam<std::tuple<bool, int>> {};

TEST_P(DensePrefillMasks, MatchesReferenceWithAndWithoutSoftcap) {
  REQUIRE_DENSE_PREFILL();
  const auto [causal, wi] = GetParam();
  const int hp = causal ? wi : (wi + 2) % 4;
  DenseSpec s;
  s.dt = ((wi % 2 == 1) == causal) ? DType::bf16 : DType::f16;
  s.dqk = head_pair(hp).first, s.dv = head_pair(hp).second;
  s.nqh = 8, s.nkvh = 2;
  // q_len > kv_len (rows without keys under causal), q_len < kv_len, lengths off the tile sizes
  s.seqs = {{1, 1}, {7, 7}, {129, 17}, {300, 129}, {17, 300}, {0, 3}, {3, 0}, {128, 1000}, {1, 1000}};
  s.seed = 200 + int(causal) * 10 + wi;
  const DenseHost h(s);
  DenseDevice d(h);
  for (float cap : {0.f, 30.f}) check_case(h, d, DenseLogits{causal, kWindows[wi], cap}, describe(s));
}

std::string masks_name(const ::testing::TestParamInfo<std::tuple<bool, int>>& i) {
  const int w = kWindows[std::get<1>(i.param)];
  return std::string(std::get<0>(i.param) ? "causal" : "noncausal") + (w < 0 ? "_nowindow" : "_window" + std::to_string(w));
}
INSTANTIATE_TEST_SUITE_P(Masks, DensePrefillMasks, ::testing::Combine(::testing::Bool(), ::testing::Range(0, 4)), masks_name);

// ---------------------------------------------------------------------------------------------
// GQA ratios 1, 4, 8 and MQA (one kv head)
// ---------------------------------------------------------------------------------------------

struct GqaCase {
  int nqh, nkvh;
  const char* name;
};
constexpr GqaCase kGqaCases[] = {{8, 8, "ratio1"}, {8, 2, "ratio4"}, {16, 2, "ratio8"}, {8, 1, "mqa8"}, {16, 1, "mqa16"}};

class DensePrefillGqa : public ::testing::TestWithParam<int> {};

TEST_P(DensePrefillGqa, MatchesReference) {
  REQUIRE_DENSE_PREFILL();
  const int ci = GetParam();
  const GqaCase& gc = kGqaCases[ci];
  DenseSpec s;
  s.dt = ci % 2 ? DType::bf16 : DType::f16;
  s.dqk = head_pair(ci).first, s.dv = head_pair(ci).second;
  s.nqh = gc.nqh, s.nkvh = gc.nkvh;
  s.seqs = {{129, 129}, {7, 300}, {0, 0}, {300, 600}, {1, 1}};
  if (s.dqk == 256) s.seqs = {{129, 129}, {7, 300}, {0, 0}, {200, 400}, {1, 1}};  // keeps the whole reference
  s.seed = 300 + ci;
  const DenseHost h(s);
  DenseDevice d(h);
  check_case(h, d, DenseLogits{true}, describe(s));
  check_case(h, d, DenseLogits{false, 100}, describe(s));
}

INSTANTIATE_TEST_SUITE_P(Ratios, DensePrefillGqa, ::testing::Range(0, int(std::size(kGqaCases))),
                         [](const ::testing::TestParamInfo<int>& i) { return std::string(kGqaCases[i.param].name); });

// ---------------------------------------------------------------------------------------------
// packed varlen: empty sequences, lengths around the tile sizes, padded strides, one long sequence
// ---------------------------------------------------------------------------------------------

TEST(DensePrefillVarlen, EdgeLengthsWithPaddedStrides) {
  REQUIRE_DENSE_PREFILL();
  int k = 0;
  for (int hp : {1, 3}) {
    DenseSpec s;
    s.dt = hp == 1 ? DType::f16 : DType::bf16;
    s.dqk = head_pair(hp).first, s.dv = head_pair(hp).second;
    s.nqh = 8, s.nkvh = 2;
    s.seqs = {{0, 0}, {1, 1}, {0, 7}, {7, 0}, {1, 129}, {129, 1}, {7, 129}, {128, 129},
              {130, 129}, {255, 257}, {300, 1000}, {0, 0}};
    s.qpad = {8, 16, 0}, s.kpad = {16, 8, 0}, s.vpad = {8, 24, 0}, s.opad = {16, 8, 0};
    s.lse_pad = 5;
    s.seed = 400 + k++;
    const DenseHost h(s);
    DenseDevice d(h);
    for (bool causal : {true, false}) check_case(h, d, DenseLogits{causal}, describe(s));
    check_case(h, d, DenseLogits{true, 17, 30.f}, describe(s));
  }
}

TEST(DensePrefillVarlen, LongSequenceSampledRows) {
  REQUIRE_DENSE_PREFILL();
  {
    DenseSpec s;
    s.dt = DType::bf16;
    s.dqk = s.dv = 128;
    s.nqh = 8, s.nkvh = 1;
    s.seqs = {{1000, 4096}, {5, 9}, {0, 0}, {1000, 1000}, {1, 4096}};
    s.seed = 500;
    const DenseHost h(s);
    DenseDevice d(h);
    check_case(h, d, DenseLogits{true}, describe(s));
    check_case(h, d, DenseLogits{false, 300}, describe(s));
  }
  {
    DenseSpec s;
    s.dt = DType::f16;
    s.dqk = 192, s.dv = 128;
    s.nqh = 16, s.nkvh = 2;
    s.seqs = {{4096, 4096}, {129, 7}, {3, 3}};
    s.seed = 501;
    const DenseHost h(s);
    DenseDevice d(h);
    check_case(h, d, DenseLogits{true}, describe(s));
    check_case(h, d, DenseLogits{true, 300, 30.f}, describe(s));
  }
}

// Every sequence without keys: k and v may be null (no key token); every row is zeros and LSE -inf.
TEST(DensePrefillVarlen, NoKeysAtAll) {
  REQUIRE_DENSE_PREFILL();
  for (bool batched : {false, true}) {
    DenseSpec s;
    s.dt = batched ? DType::bf16 : DType::f16;
    s.dqk = s.dv = 64;
    s.nqh = 4, s.nkvh = 1;
    s.batched = batched;
    s.seqs = batched ? std::vector<std::pair<int, int>>{{70, 0}, {70, 0}} : std::vector<std::pair<int, int>>{{3, 0}, {130, 0}};
    s.seed = 550 + int(batched);
    const DenseHost h(s);
    DenseDevice d(h);
    ASSERT_EQ(d.k.ptr, nullptr);
    for (bool causal : {true, false}) check_case(h, d, DenseLogits{causal}, describe(s));
  }
}

// No query token (no sequence, or sequences without queries): nothing to do, nothing written.
TEST(DensePrefillVarlen, NoQueriesIsANoOp) {
  REQUIRE_DENSE_PREFILL();
  for (const auto& seqs : {std::vector<std::pair<int, int>>{}, std::vector<std::pair<int, int>>{{0, 5}, {0, 300}}}) {
    DenseSpec s;
    s.seqs = seqs;
    s.seed = 560;
    const DenseHost h(s);
    DenseDevice d(h);
    for (bool causal : {true, false}) {
      SCOPED_TRACE(std::to_string(seqs.size()) + " sequences");
      d.poison(nullptr);
      EXPECT_NO_THROW(prebuilt::dense_prefill(d.params(DenseLogits{causal}, true), nullptr));
      HIPATTN_CHECK(rt::get_last_error());
      HIPATTN_CHECK(rt::device_synchronize());
      std::vector<uint8_t> out(d.out.bytes), lse(d.lse.bytes);
      HIPATTN_CHECK(rt::memcpy_d2h(out.data(), d.out.ptr, out.size()));
      HIPATTN_CHECK(rt::memcpy_d2h(lse.data(), d.lse.ptr, lse.size()));
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](uint8_t x) { return x == 0xFF; })) << "out written";
      EXPECT_TRUE(std::all_of(lse.begin(), lse.end(), [](uint8_t x) { return x == 0xFF; })) << "lse written";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// batched BSHD through the strides (cu_seqlens null), contiguous and padded
// ---------------------------------------------------------------------------------------------

TEST(DensePrefillBatched, BshdThroughStrides) {
  REQUIRE_DENSE_PREFILL();
  struct Case {
    DType dt;
    int hp, nqh, nkvh, B, lq, lk;
    bool pad;
    DenseLogits lg;
  };
  const Case cases[] = {
      {DType::f16, 1, 8, 2, 2, 129, 300, false, {true}},              // contiguous BSHD
      {DType::bf16, 3, 8, 2, 3, 300, 300, true, {true, 17}},          // 192 / 128, window
      {DType::f16, 0, 8, 1, 4, 65, 7, true, {true, -1, 30.f}},        // q_len > kv_len: rows without keys; softcap
      {DType::bf16, 2, 4, 4, 1, 1000, 4096, true, {false}},           // sampled rows
      {DType::f16, 2, 8, 2, 2, 1, 1000, true, {true, 300}},           // one query per sequence
      {DType::bf16, 1, 16, 2, 2, 1000, 1000, false, {false, 0, 0.f}}, // sampled rows, non-causal window 0
  };
  uint64_t seed = 600;
  for (const Case& c : cases) {
    DenseSpec s;
    s.dt = c.dt;
    s.dqk = head_pair(c.hp).first, s.dv = head_pair(c.hp).second;
    s.nqh = c.nqh, s.nkvh = c.nkvh;
    s.batched = true;
    s.seqs.assign(size_t(c.B), {c.lq, c.lk});
    if (c.pad) {  // head stride > d, token and batch strides with padding
      s.qpad = {8, 16, 24}, s.kpad = {16, 8, 40}, s.vpad = {8, 24, 8}, s.opad = {8, 8, 16};
      s.lse_pad = 3;
    }
    s.seed = ++seed;
    const DenseHost h(s);
    DenseDevice d(h);
    check_case(h, d, c.lg, describe(s));
  }
}

// ---------------------------------------------------------------------------------------------
// LSE optional: without it the output is the same, bit for bit
// ---------------------------------------------------------------------------------------------

TEST(DensePrefillLse, NullLseGivesTheSameOutput) {
  REQUIRE_DENSE_PREFILL();
  uint64_t seed = 700;
  for (bool batched : {false, true}) {
    DenseSpec s;
    s.dt = batched ? DType::f16 : DType::bf16;
    s.dqk = batched ? 256 : 128, s.dv = s.dqk;
    s.nqh = 8, s.nkvh = 2;
    s.batched = batched;
    s.seqs = batched ? std::vector<std::pair<int, int>>{{130, 200}, {130, 200}}
                     : std::vector<std::pair<int, int>>{{129, 300}, {5, 0}, {300, 129}, {1, 1}};
    s.opad = {8, 16, 8};
    s.seed = ++seed;
    const DenseHost h(s);
    DenseDevice d(h);
    const DenseLogits lg{true, 100};
    const DenseRun with = check_case(h, d, lg, describe(s), true);
    const DenseRun without = check_case(h, d, lg, describe(s), false);
    EXPECT_TRUE(with.out == without.out) << "the output depends on whether LSE is written";
  }
}

// ---------------------------------------------------------------------------------------------
// errors: validation runs first (any target), then the target
// ---------------------------------------------------------------------------------------------

void expect_error(const DensePrefillParams& p, ErrorCode code, const std::string& field, const std::string& what) {
  try {
    prebuilt::dense_prefill(p, nullptr);
    ADD_FAILURE() << what << ": no error, expected field " << field;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << what << ": " << e.what();
    EXPECT_EQ(e.field(), field) << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << what << ": " << e.what();
  }
}

TEST(DensePrefillErrors, BadInputThrowsNamingTheField) {
  REQUIRE_GPU();
  DenseSpec s;
  s.seqs = {{5, 9}, {3, 3}};
  s.nqh = 8, s.nkvh = 2;
  s.seed = 800;
  const DenseHost h(s);
  DenseDevice d(h);
  d.poison(nullptr);
  const DensePrefillParams good = d.params(DenseLogits{true}, true);
  const ValidationReport rep = hipattn::validate(good);
  ASSERT_TRUE(rep.ok()) << rep.message();

  DensePrefillParams p = good;
  p.head_size_qk = p.head_size_v = 96;  // not a served pair (strides still valid for 96)
  p.q_stride_head = 96, p.q_stride_token = 8 * 96;
  p.k_stride_head = p.v_stride_head = 96, p.k_stride_token = p.v_stride_token = 2 * 96;
  p.o_stride_head = 96, p.o_stride_token = 8 * 96;
  expect_error(p, ErrorCode::unsupported, "head_size_qk", "head size 96");
  p = good;
  p.head_size_qk = 192;  // (192, 128) is served, (192, 192) is not
  p.head_size_v = 192;
  expect_error(p, ErrorCode::unsupported, "head_size_qk", "head sizes (192, 192)");
  for (DType dt : {DType::f32, DType::fp8_e4m3fn}) {
    p = good;
    p.dtype = dt;
    expect_error(p, ErrorCode::unsupported, "dtype", "dtype " + std::string(dtype_name(dt)));
  }
  p = good;
  p.num_kv_heads = 3;
  expect_error(p, ErrorCode::invalid_argument, "num_kv_heads", "8 q heads over 3 kv heads");
  p = good;
  p.cu_seqlens_k = nullptr;
  expect_error(p, ErrorCode::invalid_argument, "cu_seqlens_k", "only cu_seqlens_q set");
  p = good;
  p.lse_stride_head = p.num_tokens_q - 1;
  expect_error(p, ErrorCode::invalid_argument, "lse_stride_head", "lse_stride_head < num_tokens_q");
  p = good;
  p.q_stride_head = p.head_size_qk + 4;  // 8 bytes past the row: not a multiple of 16 bytes
  p.q_stride_token = 8 * p.q_stride_head;
  expect_error(p, ErrorCode::invalid_argument, "q_stride_head", "q_stride_head not 16-byte aligned");
  p = good;
  p.out = nullptr;
  expect_error(p, ErrorCode::invalid_argument, "out", "null out");
  p = good;
  p.window_left = -2;
  expect_error(p, ErrorCode::invalid_argument, "window_left", "window_left -2");
  p = good;
  p.scale = 0.f;
  expect_error(p, ErrorCode::invalid_argument, "scale", "scale 0");

  // Batched: the token counts must be num_seqs * max_seqlen.
  DenseSpec sb = s;
  sb.batched = true;
  sb.seqs = {{4, 6}, {4, 6}};
  const DenseHost hb(sb);
  DenseDevice db(hb);
  p = db.params(DenseLogits{true}, true);
  ASSERT_TRUE(hipattn::validate(p).ok()) << hipattn::validate(p).message();
  p.num_tokens_q = 7;
  p.lse_stride_head = 8;
  expect_error(p, ErrorCode::invalid_argument, "num_tokens_q", "batched num_tokens_q != num_seqs * max_seqlen_q");

  // Nothing was launched: the output keeps its poison.
  HIPATTN_CHECK(rt::device_synchronize());
  std::vector<uint16_t> out(h.out_elems());
  HIPATTN_CHECK(rt::memcpy_d2h(out.data(), d.out.ptr, out.size() * sizeof(uint16_t)));
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](uint16_t x) { return x == kPoison16; }));
}

// On a target without any instance a call throws unsupported naming the device (sm_90, gfx942 and
// gfx950 serve every head pair, (192, 128) included).
TEST(DensePrefillTarget, OtherTargetsRefuse) {
  REQUIRE_GPU();
  const Target t = rt::cached_device_properties().target;
  if (t == Target::sm90 || is_cdna(t))
    GTEST_SKIP() << target_name(t) << " serves every head pair (the parity tests or the emulator tier run instead): skipped";
  DenseSpec s;
  s.seqs = {{5, 9}};
  s.seed = 850;
  const DenseHost h(s);
  DenseDevice d(h);
  expect_error(d.params(DenseLogits{true}, true), ErrorCode::unsupported, "device", "is not a target of this build");
}

}  // namespace
}  // namespace hipattn::testing
