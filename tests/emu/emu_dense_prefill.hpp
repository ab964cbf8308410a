// tests/emu/emu_dense_prefill.hpp: a CDNA dense prefill problem on the emulator, shared by
// tests/emu/test_emu_dense_prefill.cpp and the timing harness (tests/timing/hipattn_runs.cpp): the
// host tensors and emulated buffers of a packed or batched problem (Case, DenseProblem), the instance
// launch_dense_prefill_cdna picks and its arguments (dispatch/dense_prefill_{plan,launch}.hpp's own),
// one run (run_dense), and the comparison of every element and LSE with the float64 reference.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "emu.hpp"
#include "emu_dispatch.hpp"
#include "hipattn/dispatch/dense_prefill.hpp"
#include "hipattn/problem/dense_prefill_params.hpp"
#include "hipattn/problem/dense_prefill_rules.hpp"
#include "hipattn/reference/dense_prefill.hpp"

namespace hipattn::testing::emu_dense {

using namespace emu_dispatch;

// ---- the instance and its arguments: dispatch/dense_prefill_{plan,launch}.hpp's own ----

// launch_dense_prefill_cdna's choice (detail::visit_dense_cdna_instance): (dtype, head size, softcap) and
// the schedule (the ping-pong instances where detail::dense_pingpong holds) on target t.
template <class F>
void visit_target_instance(Target t, bool bf16, int d, bool softcap, bool pingpong, F&& f) {
  if (t == Target::gfx950) detail::visit_dense_cdna_instance<Target::gfx950>(bf16, d, softcap, pingpong, f);
  else detail::visit_dense_cdna_instance<Target::gfx942>(bf16, d, softcap, pingpong, f);
}

// The manifest of an instance's kernel (kernels/dense_prefill/kernels.hpp: kernel=dense_prefill, then
// the configuration's name: layout=dense, dv=128 for (192, 128), mainloop=pingpong for the ping-pong
// schedule), which CodeObject::find_manifest matches exactly.
template <class Cfg>
std::string kernel_manifest_text() {
  static_assert(std::is_same_v<typename Cfg::KvLayout, DenseKvLayout>, "a dense instance");
  return manifest_of<Cfg>("dense_prefill");
}

// ---- a problem: host tensors, the emulated buffers, the params over either ----

struct Case {
  const char* name = "";
  bool bf16 = false;
  int d = 0;  // d_qk (192: the value head is dv_narrow)
  int q_heads = 0, kv_heads = 0;
  bool causal = false;
  int window_left = -1;
  float softcap = 0.f;
  float scale_mult = 1.f;  // scale = scale_mult / sqrt(d)
  std::vector<std::pair<int, int>> lens = {};  // packed: (q, k) a sequence
  int batch = 0, batch_q = 0, batch_k = 0;  // batched (lens empty): batch sequences of (batch_q, batch_k)
  int pad = 0;      // extra elements after each token's heads in q, k, v and out (multiple of 8)
  bool bhsd = false;     // batched: q, k, v as [seqs, heads, len, d] (out stays [seqs, len, heads, d])
  int o_batch_pad = 0;   // batched: extra elements after each sequence of out (multiple of 8)
  int lse_pad = 0;  // extra columns of the LSE rows
  uint64_t seed = 0;
  int dv() const { return d == 192 ? 128 : d; }  // the served pairs: (d, d), and (192, 128)
};

constexpr uint16_t kPoison16 = 0xFFFF;  // NaN in f16 and bf16

struct DenseProblem {
  const Case& c;
  bool packed;
  int32_t num_seqs = 0, tokens_q = 0, tokens_k = 0, max_q = 0, max_k = 0;
  // Strides (elements) of q, k, v and out: token, head, batch; the LSE row stride.
  struct Strides {
    int64_t token = 0, head = 0, batch = 0;
    int64_t at(int32_t seq, int64_t i, int64_t h) const { return seq * batch + i * token + h * head; }
  };
  Strides qs, ks, vs, os;
  int64_t lse_stride = 0;
  std::vector<int32_t> cu_q, cu_k;
  std::vector<uint16_t> q, k, v;  // host tensors (the padding: NaN)
  int no_key_rows = 0;            // (token, head) rows that see no key

  // emulated buffers
  emu::Memory mem;
  uint64_t dq = 0, dk = 0, dv = 0, dcu_q = 0, dcu_k = 0, dout = 0, dlse = 0;
  size_t out_elems = 0, lse_elems = 0;

  // Element offset of (token t, head h) of a tensor: packed, token t; batched, token t % len of
  // sequence t / len (the reference's packed view of a batched call).
  int64_t at(const Strides& sd, int32_t t, int32_t len, int64_t h) const {
    return packed ? sd.at(0, t, h) : sd.at(t / len, t % len, h);
  }
  // Elements spanned by `tokens` tokens of `heads` heads of d (and the padding inside).
  int64_t extent(int32_t tokens, int32_t len, int heads, int d, const Strides& sd) const {
    if (tokens == 0) return 0;
    return packed ? int64_t(tokens) * sd.token : (tokens / len - 1) * sd.batch + (len - 1) * sd.token + (heads - 1) * sd.head + d;
  }

  explicit DenseProblem(const Case& cs) : c(cs), packed(!cs.lens.empty()) {
    if (packed) {
      num_seqs = int32_t(c.lens.size());
      cu_q.push_back(0);
      cu_k.push_back(0);
      for (const auto& [lq, lk] : c.lens) {
        cu_q.push_back(cu_q.back() + lq);
        cu_k.push_back(cu_k.back() + lk);
        max_q = std::max(max_q, lq);
        max_k = std::max(max_k, lk);
      }
      tokens_q = cu_q.back();
      tokens_k = cu_k.back();
    } else {
      num_seqs = c.batch;
      max_q = c.batch_q;
      max_k = c.batch_k;
      tokens_q = num_seqs * max_q;
      tokens_k = num_seqs * max_k;
    }
    // token-major [tokens, heads, d + pad] (batched: [seqs, len, heads, d + pad]), or [seqs, heads, len, d]
    const auto strides = [&](int heads, int d, int32_t len, bool bhsd) {
      Strides r;
      if (bhsd) r = {d, int64_t(len) * d, int64_t(heads) * len * d};
      else r = {int64_t(heads) * d + c.pad, d, int64_t(len) * (int64_t(heads) * d + c.pad)};
      if (packed) r.batch = 0;
      return r;
    };
    qs = strides(c.q_heads, c.d, max_q, c.bhsd);
    ks = strides(c.kv_heads, c.d, max_k, c.bhsd);
    vs = strides(c.kv_heads, c.dv(), max_k, c.bhsd);
    os = strides(c.q_heads, c.dv(), max_q, false);
    if (!packed) os.batch += c.o_batch_pad;
    lse_stride = tokens_q + c.lse_pad;
    std::mt19937_64 rng(c.seed);
    std::uniform_real_distribution<float> uni(-1.f, 1.f);
    // (values drawn token by token, head by head, as in a token-major tensor, whatever the layout)
    const auto fill = [&](std::vector<uint16_t>& x, int32_t tokens, int32_t len, int heads, int d, const Strides& sd) {
      x.assign(size_t(std::max<int64_t>(1, extent(tokens, len, heads, d, sd))), kPoison16);
      for (int32_t t = 0; t < tokens; ++t)
        for (int h = 0; h < heads; ++h)
          for (int e = 0; e < d; ++e) {
            const float f = uni(rng);
            x[size_t(at(sd, t, len, h) + e)] = c.bf16 ? bfloat16_t::from_float(f).bits : half_t::from_float(f).bits;
          }
    };
    fill(q, tokens_q, max_q, c.q_heads, c.d, qs);
    fill(k, tokens_k, max_k, c.kv_heads, c.d, ks);
    fill(v, tokens_k, max_k, c.kv_heads, c.dv(), vs);

    dq = mem.upload(q, "q");
    dk = mem.upload(k, "k");
    dv = mem.upload(v, "v");
    if (packed) {
      dcu_q = mem.upload(cu_q, "cu_seqlens_q");
      dcu_k = mem.upload(cu_k, "cu_seqlens_k");
    }
    out_elems = size_t(std::max<int64_t>(1, extent(tokens_q, max_q, c.q_heads, c.dv(), os)));
    dout = mem.alloc(out_elems * 2, "out");
    lse_elems = size_t(int64_t(c.q_heads) * lse_stride);
    dlse = mem.alloc(std::max<size_t>(4, lse_elems * 4), "lse");
  }

  // The params over host (the reference's) or emulated (the kernel's) pointers.
  DensePrefillParams params(bool device) const {
    DensePrefillParams p;
    p.dtype = c.bf16 ? DType::bf16 : DType::f16;
    p.q = device ? dev_ptr(dq) : static_cast<const void*>(q.data());
    // no key anywhere: k and v null, as the rules allow (tests/host/test_dense_prefill_rules "no keys at all")
    p.k = tokens_k == 0 ? nullptr : device ? dev_ptr(dk) : static_cast<const void*>(k.data());
    p.v = tokens_k == 0 ? nullptr : device ? dev_ptr(dv) : static_cast<const void*>(v.data());
    p.q_stride_token = qs.token;
    p.q_stride_head = qs.head;
    p.k_stride_token = ks.token;
    p.v_stride_token = vs.token;
    p.k_stride_head = ks.head;
    p.v_stride_head = vs.head;
    if (packed) {
      p.cu_seqlens_q = device ? static_cast<const int32_t*>(dev_ptr(dcu_q)) : cu_q.data();
      p.cu_seqlens_k = device ? static_cast<const int32_t*>(dev_ptr(dcu_k)) : cu_k.data();
    } else {
      p.q_stride_batch = qs.batch;
      p.k_stride_batch = ks.batch;
      p.v_stride_batch = vs.batch;
      p.o_stride_batch = os.batch;
    }
    p.num_seqs = num_seqs;
    p.num_tokens_q = tokens_q;
    p.num_tokens_k = tokens_k;
    p.max_seqlen_q = max_q;
    p.max_seqlen_k = max_k;
    p.num_q_heads = c.q_heads;
    p.num_kv_heads = c.kv_heads;
    p.head_size_qk = c.d;
    p.head_size_v = c.dv();
    p.scale = c.scale_mult / std::sqrt(float(c.d));
    p.causal = c.causal;
    p.window_left = c.window_left;
    p.softcap = c.softcap;
    p.out = device ? dev_ptr(dout) : nullptr;
    p.o_stride_token = os.token;
    p.o_stride_head = os.head;
    p.lse = device ? static_cast<float*>(dev_ptr(dlse)) : nullptr;
    p.lse_stride_head = lse_stride;
    return p;
  }

  // NaN in every byte of out and lse, so that each element must be written.
  void poison() {
    const std::vector<uint16_t> o(out_elems, kPoison16);
    mem.write(dout, o.data(), o.size() * 2);
    const std::vector<uint32_t> l(lse_elems, 0xFFFFFFFFu);
    if (!l.empty()) mem.write(dlse, l.data(), l.size() * 4);
  }

  std::string describe() const {
    std::string s = std::string(c.bf16 ? "bf16" : "f16") + " d" + std::to_string(c.d) +
                    (c.dv() != c.d ? "/" + std::to_string(c.dv()) : std::string()) + " h" + std::to_string(c.q_heads) +
                    "/" + std::to_string(c.kv_heads) + (c.causal ? " causal" : "");
    if (c.window_left >= 0) s += " window " + std::to_string(c.window_left);
    if (c.softcap > 0.f) s += " softcap " + std::to_string(int(c.softcap)) + " scale x" + std::to_string(int(c.scale_mult));
    if (packed) {
      s += " packed";
      for (const auto& [lq, lk] : c.lens) s += " (" + std::to_string(lq) + "," + std::to_string(lk) + ")";
    } else {
      s += " batched " + std::to_string(c.batch) + "x(" + std::to_string(c.batch_q) + "," + std::to_string(c.batch_k) + ")";
    }
    if (c.bhsd) s += " q/k/v [seqs, heads, len, d]";
    if (c.o_batch_pad) s += " out batch pad " + std::to_string(c.o_batch_pad);
    if (c.pad) s += " pad " + std::to_string(c.pad);
    if (c.lse_pad) s += " lse_pad " + std::to_string(c.lse_pad);
    return s;
  }
};

// ---- comparison ----

struct CompareStats {
  int64_t bad = 0, checked = 0, no_key = 0, touched_padding = 0;
  double max_abs = 0, max_lse = 0;
  std::string first_bad;
};

inline double to_double(uint16_t bits, bool bf16) {
  return bf16 ? bfloat16_t::from_bits(bits).to_float() : half_t::from_bits(bits).to_float();
}

// Every element of out (at its strided place) and every LSE against the reference ([tokens][heads][d],
// [heads][tokens]); a row with no visible key (reference LSE -inf) must be exactly 0 with LSE -inf.
// The padding of out and of the LSE rows must still hold the poison.
inline CompareStats compare(const DenseProblem& dp, const reference::AttentionResult& ref, const std::vector<uint16_t>& out,
                     const std::vector<float>& lse) {
  const Case& c = dp.c;
  const Tolerance tol = out_tolerance(c.bf16);
  CompareStats st;
  const int64_t T = dp.tokens_q, H = c.q_heads, D = c.dv();
  const auto where = [&](int64_t t, int64_t h) { return "[token " + std::to_string(t) + ", head " + std::to_string(h); };
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h) {
      const double want_lse = ref.lse[size_t(h * T + t)];
      const float got_lse = lse[size_t(h * dp.lse_stride + t)];
      const bool no_key = std::isinf(want_lse) && want_lse < 0;
      st.no_key += no_key;
      ++st.checked;
      const bool lse_ok = std::isinf(want_lse) ? double(got_lse) == want_lse
                                               : std::fabs(got_lse - want_lse) <= kLseTolerance.atol + kLseTolerance.rtol * std::fabs(want_lse);
      if (!lse_ok && st.bad++ == 0)
        st.first_bad = "lse" + where(t, h) + "] = " + std::to_string(got_lse) + ", want " + std::to_string(want_lse);
      if (!std::isinf(want_lse))
        st.max_lse = std::max(st.max_lse, std::isfinite(got_lse) ? std::fabs(got_lse - want_lse) : INFINITY);
      for (int64_t d = 0; d < D; ++d) {
        const double got = to_double(out[size_t(dp.at(dp.os, int32_t(t), dp.max_q, h) + d)], c.bf16);
        const double want = ref.out[size_t((t * H + h) * D + d)];
        const double err = std::fabs(got - want);
        ++st.checked;
        const bool ok = no_key ? got == 0.0 : err <= tol.atol + tol.rtol * std::fabs(want);
        if (!ok && st.bad++ == 0)
          st.first_bad = "out" + where(t, h) + ", d " + std::to_string(d) + "] = " + std::to_string(got) + ", want " +
                         std::to_string(want) + (no_key ? " (no visible key: exactly 0)" : "");
        st.max_abs = std::max(st.max_abs, std::isfinite(err) ? err : INFINITY);
      }
    }
  // every element of out that is no (token, head, d) place: the token and sequence padding
  std::vector<bool> data(out.size(), false);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t d = 0; d < D; ++d) data[size_t(dp.at(dp.os, int32_t(t), dp.max_q, h) + d)] = true;
  for (size_t e = 0; e < out.size(); ++e) st.touched_padding += !data[e] && out[e] != kPoison16;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = T; t < dp.lse_stride; ++t) {
      uint32_t bits;
      std::memcpy(&bits, &lse[size_t(h * dp.lse_stride + t)], 4);
      st.touched_padding += bits != 0xFFFFFFFFu;
    }
  return st;
}

// ---- one run ----

struct RunResult {
  std::vector<uint16_t> out;
  std::vector<float> lse;
  std::string kernel;
  int bm = 0, q_blocks = 0;
  bool by_band = true, pingpong = false;
  uint64_t instructions = 0;
  double seconds = 0;
};

// What launch_dense_prefill_skeleton launches for instance Cfg.
template <class Cfg>
void launch_instance(const emu::CodeObject& co, const DensePrefillParams& p, DenseProblem& dp, RunResult& res,
                     EmuLaunches* log = nullptr) {
  const dense_args_t<Cfg> a = detail::make_dense_skeleton_args<Cfg>(p);
  res.kernel = Cfg::name().c_str();
  res.bm = Cfg::kBM;
  res.q_blocks = a.dense.q_blocks;
  res.by_band = a.dense.by_band;
  if (a.dense.q_blocks == 0) return;
  const auto t0 = std::chrono::steady_clock::now();
  res.instructions = launch_kernel(co, kernel_manifest_text<Cfg>(), LaunchDim{uint32_t(p.num_q_heads), uint32_t(a.dense.q_blocks), 1},
                                   uint32_t(Cfg::kThreads), uint32_t(Cfg::kSmemBytes), &a, sizeof(a), dp.mem, log)
                         .instructions;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What dense_prefill() launches for the problem on target t (the ping-pong instance where
// detail::dense_pingpong holds, unless `skeleton`): validates the params, poisons out and lse, launches,
// and downloads what it wrote. Throws emu::Error on a fault of the kernel, hipattn::Error on invalid params.
inline RunResult run_dense(const emu::CodeObject& co, const EmuTarget& t, DenseProblem& dp, bool skeleton = false,
                           EmuLaunches* log = nullptr) {
  const DensePrefillParams dev = dp.params(true);
  throw_if_error(dp.packed ? validate(dev, DenseHostSequenceInfo{dp.cu_q, dp.cu_k}) : validate(dev));
  dp.poison();
  RunResult r;
  const bool pingpong = detail::dense_pingpong(dev, t.target) && !skeleton;
  r.pingpong = pingpong;
  visit_target_instance(t.target, dp.c.bf16, dp.c.d, dp.c.softcap > 0.f, pingpong,
                        [&]<class Cfg>() { launch_instance<Cfg>(co, dev, dp, r, log); });
  r.out = dp.mem.download<uint16_t>(dp.dout, dp.out_elems);
  r.lse = dp.mem.download<float>(dp.dlse, dp.lse_elems);
  return r;
}

}  // namespace hipattn::testing::emu_dense
