// tests/host/test_reference_dense_prefill.cpp: the float64 dense prefill reference
// (reference/dense_prefill.hpp) against the unified paged reference on the same problems expressed as a
// paged cache (head_size_qk == head_size_v), against a brute-force formula written here (any head sizes,
// 192 / 128 included), against exact identities, and its argument checks.
//
// Problems are built from seeded std::mt19937 data: uniform in [-1, 1], rounded to the dtype, never 0; the
// test keeps the stored values in logical arrays. Every storage element no key / query owns (head, token
// and batch padding) holds NaN, so a stray read shows up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hipattn/reference/dense_prefill.hpp"
#include "reference_problem.hpp"

namespace {

using namespace hipattn_reference_tests;
using hipattn::DensePrefillParams;

// ---------------------------------------------------------------------------------------------
// a dense prefill problem: typed, strided storage and the same values as logical arrays
// ---------------------------------------------------------------------------------------------

struct Pad {
  int head = 0, token = 0, batch = 0;  // extra (NaN) elements after each head row / token / sequence (batched)
};

struct DenseSpec {
  std::vector<int> q_lens{1}, k_lens{1};  // batched: all equal
  bool batched = false;
  int nqh = 4, nkvh = 1, dqk = 64, dv = 64;
  DType dt = DType::f16;
  Pad qpad, kpad, vpad;
};

struct Strides {
  int64_t head = 0, token = 0, batch = 0;
};
inline Strides make_strides(int heads, int d, int len, const Pad& pad) {
  Strides s;
  s.head = d + pad.head;
  s.token = heads * s.head + pad.token;
  s.batch = len * s.token + pad.batch;
  return s;
}

// A random value in [-1, 1] exactly representable in dt, never 0: (bits, value).
inline std::pair<uint32_t, double> random_value(std::mt19937& g, DType dt) {
  for (;;) {
    const uint32_t bits = encode(dt, float(uniform(g, -1.0, 1.0)));
    const double x = decode(dt, bits);
    if (x != 0.0) return {bits, x};
  }
}

struct DenseProblem {
  DenseSpec s;
  std::mt19937 rng;
  int B = 0, T = 0, TK = 0, Lq = 0, Lk = 0;
  std::vector<int32_t> cuq, cuk;
  Strides qs, ks, vs;
  Buffer qb, kb, vb;
  std::vector<double> q;                  // [T][nqh][dqk], by token index
  std::vector<std::vector<double>> k, v;  // [seq] -> [lk][nkvh][dqk or dv]
  DensePrefillParams p;

  DenseProblem(const DenseSpec& spec, uint32_t seed) : s(spec), rng(seed) {
    if (s.q_lens.size() != s.k_lens.size()) throw std::logic_error("q_lens / k_lens sizes differ");
    B = int(s.q_lens.size());
    cuq.assign(size_t(B) + 1, 0);
    cuk.assign(size_t(B) + 1, 0);
    for (int b = 0; b < B; ++b) {
      cuq[size_t(b) + 1] = cuq[size_t(b)] + s.q_lens[size_t(b)];
      cuk[size_t(b) + 1] = cuk[size_t(b)] + s.k_lens[size_t(b)];
      Lq = std::max(Lq, s.q_lens[size_t(b)]);
      Lk = std::max(Lk, s.k_lens[size_t(b)]);
      if (s.batched && (s.q_lens[size_t(b)] != s.q_lens[0] || s.k_lens[size_t(b)] != s.k_lens[0]))
        throw std::logic_error("batched lengths must be equal");
    }
    T = s.batched ? B * Lq : cuq[size_t(B)];
    TK = s.batched ? B * Lk : cuk[size_t(B)];
    qs = make_strides(s.nqh, s.dqk, Lq, s.qpad);
    ks = make_strides(s.nkvh, s.dqk, Lk, s.kpad);
    vs = make_strides(s.nkvh, s.dv, Lk, s.vpad);
    qb = Buffer(s.dt, size_t(s.batched ? B * qs.batch : T * qs.token) + 1);
    kb = Buffer(s.dt, size_t(s.batched ? B * ks.batch : TK * ks.token) + 1);
    vb = Buffer(s.dt, size_t(s.batched ? B * vs.batch : TK * vs.token) + 1);
    q.assign(size_t(T * s.nqh * s.dqk), 0.0);
    k.resize(size_t(B));
    v.resize(size_t(B));
    for (int b = 0; b < B; ++b) {
      for (int i = 0; i < qlen(b); ++i)
        for (int h = 0; h < s.nqh; ++h)
          for (int d = 0; d < s.dqk; ++d) set_q(b, i, h, d);
      k[size_t(b)].assign(size_t(klen(b) * s.nkvh * s.dqk), 0.0);
      v[size_t(b)].assign(size_t(klen(b) * s.nkvh * s.dv), 0.0);
      for (int j = 0; j < klen(b); ++j)
        for (int kvh = 0; kvh < s.nkvh; ++kvh) {
          for (int d = 0; d < s.dqk; ++d) set_k(b, j, kvh, d, random_value(rng, s.dt));
          for (int d = 0; d < s.dv; ++d) set_v(b, j, kvh, d, random_value(rng, s.dt));
        }
    }

    p.dtype = s.dt;
    p.q = qb.data();
    p.q_stride_token = qs.token;
    p.q_stride_head = qs.head;
    p.k = kb.data();
    p.k_stride_token = ks.token;
    p.k_stride_head = ks.head;
    p.v = vb.data();
    p.v_stride_token = vs.token;
    p.v_stride_head = vs.head;
    if (s.batched) {
      p.q_stride_batch = qs.batch;
      p.k_stride_batch = ks.batch;
      p.v_stride_batch = vs.batch;
    } else {
      p.cu_seqlens_q = cuq.data();
      p.cu_seqlens_k = cuk.data();
    }
    p.num_seqs = B;
    p.num_tokens_q = T;
    p.num_tokens_k = TK;
    p.max_seqlen_q = Lq;
    p.max_seqlen_k = Lk;
    p.num_q_heads = s.nqh;
    p.num_kv_heads = s.nkvh;
    p.head_size_qk = s.dqk;
    p.head_size_v = s.dv;
    p.scale = float(1.0 / std::sqrt(double(s.dqk)));
    p.causal = true;
  }
  DenseProblem(const DenseProblem&) = delete;
  DenseProblem& operator=(const DenseProblem&) = delete;

  int qlen(int b) const { return s.q_lens[size_t(b)]; }
  int klen(int b) const { return s.k_lens[size_t(b)]; }
  int tok(int b, int i) const { return s.batched ? b * Lq + i : cuq[size_t(b)] + i; }
  int64_t q_index(int b, int i, int h, int d) const {
    const int64_t base = s.batched ? b * qs.batch + i * qs.token : int64_t(tok(b, i)) * qs.token;
    return base + h * qs.head + d;
  }
  int64_t k_index(int b, int j, int kvh, int d) const {
    const int64_t base = s.batched ? b * ks.batch + j * ks.token : int64_t(cuk[size_t(b)] + j) * ks.token;
    return base + kvh * ks.head + d;
  }
  int64_t v_index(int b, int j, int kvh, int d) const {
    const int64_t base = s.batched ? b * vs.batch + j * vs.token : int64_t(cuk[size_t(b)] + j) * vs.token;
    return base + kvh * vs.head + d;
  }
  void set_q(int b, int i, int h, int d) {
    const auto [bits, x] = random_value(rng, s.dt);
    qb.set_bits(size_t(q_index(b, i, h, d)), bits);
    q[size_t((tok(b, i) * s.nqh + h) * s.dqk + d)] = x;
  }
  void set_k(int b, int j, int kvh, int d, std::pair<uint32_t, double> bv) {
    kb.set_bits(size_t(k_index(b, j, kvh, d)), bv.first);
    k[size_t(b)][size_t((j * s.nkvh + kvh) * s.dqk + d)] = bv.second;
  }
  void set_v(int b, int j, int kvh, int d, std::pair<uint32_t, double> bv) {
    vb.set_bits(size_t(v_index(b, j, kvh, d)), bv.first);
    v[size_t(b)][size_t((j * s.nkvh + kvh) * s.dv + d)] = bv.second;
  }
  double qv(int b, int i, int h, int d) const { return q[size_t((tok(b, i) * s.nqh + h) * s.dqk + d)]; }
  double kv(int b, int j, int kvh, int d) const { return k[size_t(b)][size_t((j * s.nkvh + kvh) * s.dqk + d)]; }
  double vv(int b, int j, int kvh, int d) const { return v[size_t(b)][size_t((j * s.nkvh + kvh) * s.dv + d)]; }
  uint32_t k_bits(int b, int j, int kvh, int d) const { return kb.bits(size_t(k_index(b, j, kvh, d))); }
  bool sees(int b, int i, int j) const {
    const int pos = klen(b) - qlen(b) + i;
    if (p.causal && j > pos) return false;
    if (p.window_left >= 0 && j < pos - p.window_left) return false;
    return true;
  }
};

// The formula, evaluated by brute force on the logical arrays: every key tested with the visibility
// predicate, no max subtraction (the logits of these problems are small), lse = log(sum exp).
ref::AttentionResult brute(const DenseProblem& P) {
  const int H = P.s.nqh, DV = P.s.dv, group = P.s.nqh / P.s.nkvh;
  ref::AttentionResult r;
  r.out.assign(size_t(P.T * H * DV), 0.0);
  r.lse.assign(size_t(H * P.T), -kInf);
  for (int b = 0; b < P.B; ++b)
    for (int i = 0; i < P.qlen(b); ++i)
      for (int h = 0; h < H; ++h) {
        const int t = P.tok(b, i), kvh = h / group;
        double sum = 0.0;
        std::vector<double> acc(size_t(DV), 0.0);
        for (int j = 0; j < P.klen(b); ++j) {
          if (!P.sees(b, i, j)) continue;
          double dot = 0.0;
          for (int d = 0; d < P.s.dqk; ++d) dot += P.qv(b, i, h, d) * P.kv(b, j, kvh, d);
          double x = double(P.p.scale) * dot;
          if (P.p.softcap > 0.f) x = double(P.p.softcap) * std::tanh(x / double(P.p.softcap));
          const double e = std::exp(x);
          sum += e;
          for (int d = 0; d < DV; ++d) acc[size_t(d)] += e * P.vv(b, j, kvh, d);
        }
        if (sum == 0.0) continue;
        for (int d = 0; d < DV; ++d) r.out[size_t((t * H + h) * DV + d)] = acc[size_t(d)] / sum;
        r.lse[size_t(h * P.T + t)] = std::log(sum);
      }
  return r;
}

// The same problem as a unified paged-attention problem (head_size_qk == head_size_v): a contiguous Q,
// a shuffled paged NHD cache of `bs`-slot blocks (block 0 and unused slots NaN), seq_lens_k = key lengths.
struct UnifiedCopy {
  Buffer qb, kb, vb;
  std::vector<int32_t> cu, seq_lens, bt;
  UnifiedAttentionParams p;

  UnifiedCopy(const DenseProblem& P, int bs, uint32_t seed) {
    if (P.s.dqk != P.s.dv) throw std::logic_error("unified needs head_size_qk == head_size_v");
    std::mt19937 g(seed);
    const int B = P.B, H = P.s.nqh, KVH = P.s.nkvh, D = P.s.dqk;
    cu.assign(size_t(B) + 1, 0);
    for (int b = 0; b < B; ++b) cu[size_t(b) + 1] = cu[size_t(b)] + P.qlen(b);
    seq_lens.assign(P.s.k_lens.begin(), P.s.k_lens.end());
    int max_blocks = 1, owned = 0;
    for (int b = 0; b < B; ++b) {
      max_blocks = std::max(max_blocks, (P.klen(b) + bs - 1) / bs);
      owned += (P.klen(b) + bs - 1) / bs;
    }
    std::vector<int> phys(static_cast<size_t>(owned));
    std::iota(phys.begin(), phys.end(), 1);
    std::shuffle(phys.begin(), phys.end(), g);
    bt.assign(size_t(std::max(B, 1) * max_blocks), 0);
    for (int b = 0, n = 0; b < B; ++b)
      for (int lb = 0; lb < (P.klen(b) + bs - 1) / bs; ++lb) bt[size_t(b * max_blocks + lb)] = phys[size_t(n++)];
    const int64_t ss = int64_t(KVH) * D, sb = bs * ss;
    qb = Buffer(P.s.dt, size_t(std::max(1, P.T * H * D)));
    kb = Buffer(P.s.dt, size_t((owned + 1) * sb));
    vb = Buffer(P.s.dt, size_t((owned + 1) * sb));
    for (int b = 0; b < B; ++b) {
      for (int i = 0; i < P.qlen(b); ++i)
        for (int h = 0; h < H; ++h)
          for (int d = 0; d < D; ++d)
            qb.set_bits(size_t(((cu[size_t(b)] + i) * H + h) * D + d), encode(P.s.dt, float(P.qv(b, i, h, d))));
      for (int j = 0; j < P.klen(b); ++j)
        for (int kvh = 0; kvh < KVH; ++kvh)
          for (int d = 0; d < D; ++d) {
            const size_t at = size_t(bt[size_t(b * max_blocks + j / bs)] * sb + (j % bs) * ss + kvh * D + d);
            kb.set_bits(at, encode(P.s.dt, float(P.kv(b, j, kvh, d))));
            vb.set_bits(at, encode(P.s.dt, float(P.vv(b, j, kvh, d))));
          }
    }
    p.q = qb.data();
    p.q_dtype = P.s.dt;
    p.q_stride_token = int64_t(H) * D;
    p.q_stride_head = D;
    p.k_cache = kb.data();
    p.v_cache = vb.data();
    p.kv_dtype = P.s.dt;
    p.k_stride_block = p.v_stride_block = sb;
    p.k_stride_slot = p.v_stride_slot = ss;
    p.k_stride_head = p.v_stride_head = D;
    p.num_blocks = owned + 1;
    p.block_size = bs;
    p.block_table = bt.data();
    p.block_table_stride = max_blocks;
    p.max_blocks_per_seq = max_blocks;
    p.cu_seqlens_q = cu.data();
    p.seq_lens_k = seq_lens.data();
    p.num_seqs = B;
    p.num_tokens = cu[size_t(B)];
    p.max_seqlen_q = P.Lq;
    p.max_seqlen_k = P.Lk;
    p.num_q_heads = H;
    p.num_kv_heads = KVH;
    p.head_size = D;
    p.scale = P.p.scale;
    p.causal = P.p.causal;
    p.window_left = P.p.window_left;
    p.softcap = P.p.softcap;
  }
  UnifiedCopy(const UnifiedCopy&) = delete;
  UnifiedCopy& operator=(const UnifiedCopy&) = delete;
};

// dense_prefill(P) against the unified reference on the paged copy and against the brute force.
void expect_matches_unified(const DenseProblem& P, uint32_t seed, const std::string& what) {
  const ref::AttentionResult r = ref::dense_prefill(P.p);
  ASSERT_EQ(r.out.size(), size_t(P.T * P.s.nqh * P.s.dv)) << what;
  ASSERT_EQ(r.lse.size(), size_t(P.s.nqh * P.T)) << what;
  for (int bs : {16, 5}) {
    const UnifiedCopy U(P, bs, seed + 1000u);
    expect_result(r, ref::unified_attention(U.p), kTol, what + " vs unified bs=" + std::to_string(bs));
  }
  expect_result(r, brute(P), kTol, what + " vs brute force");
}

// Counts the (query, head) rows with no visible key from the lengths alone, and checks that exactly those
// rows are 0 / -inf.
void expect_empty_rows(const DenseProblem& P, const ref::AttentionResult& r, int expected, const std::string& what) {
  int empty = 0;
  for (int b = 0; b < P.B; ++b)
    for (int i = 0; i < P.qlen(b); ++i) {
      bool any = false;
      for (int j = 0; j < P.klen(b); ++j) any = any || P.sees(b, i, j);
      const int t = P.tok(b, i);
      for (int h = 0; h < P.s.nqh; ++h) {
        const double l = r.lse[size_t(h * P.T + t)];
        if (!any) {
          ++empty;
          EXPECT_EQ(l, -kInf) << what << " t=" << t << " h=" << h;
          for (int d = 0; d < P.s.dv; ++d) EXPECT_EQ(r.out[size_t((t * P.s.nqh + h) * P.s.dv + d)], 0.0) << what;
        } else {
          EXPECT_TRUE(std::isfinite(l)) << what << " t=" << t << " h=" << h;
        }
      }
    }
  EXPECT_EQ(empty, expected) << what;
}

// ---------------------------------------------------------------------------------------------
// agreement with the unified reference (head_size_qk == head_size_v)
// ---------------------------------------------------------------------------------------------

TEST(ReferenceDensePrefill, PackedVarlenMatchesUnifiedCausalAndNonCausal) {
  const uint32_t seed = 501;
  SCOPED_TRACE(trace(seed));
  DenseSpec s;
  // an empty sequence (0 queries, 7 keys), lq < lk, lq == lk, lq > lk, keys 0, one and one
  s.q_lens = {5, 0, 3, 9, 2, 1};
  s.k_lens = {12, 7, 3, 4, 0, 1};
  s.nqh = 8;
  s.nkvh = 2;
  s.dqk = s.dv = 64;
  DenseProblem P(s, seed);
  for (bool causal : {true, false}) {
    P.p.causal = causal;
    const std::string what = causal ? "causal" : "non-causal";
    expect_matches_unified(P, seed, what);
    // causal: queries 0..4 of sequence 3 (positions -5..-1) and both of sequence 4 see nothing;
    // non-causal: only sequence 4 (no keys)
    expect_empty_rows(P, ref::dense_prefill(P.p), (causal ? 5 + 2 : 2) * s.nqh, what);
  }
}

TEST(ReferenceDensePrefill, GqaRatiosMqaAndHeadSizesMatchUnified) {
  uint32_t seed = 510;
  struct Case {
    int nqh, nkvh, d;
    DType dt;
  };
  for (const Case c : {Case{4, 4, 64, DType::f16}, Case{8, 2, 128, DType::bf16}, Case{16, 2, 64, DType::f16},
                        Case{6, 1, 256, DType::bf16}, Case{8, 1, 128, DType::f16}}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + " heads " + std::to_string(c.nqh) + "/" + std::to_string(c.nkvh) + " d=" +
                 std::to_string(c.d) + " " + std::string(hipattn::dtype_name(c.dt)));
    DenseSpec s;
    s.q_lens = {3, 6, 1};
    s.k_lens = {10, 6, 17};
    s.nqh = c.nqh;
    s.nkvh = c.nkvh;
    s.dqk = s.dv = c.d;
    s.dt = c.dt;
    s.qpad = {1, 3, 0};
    s.kpad = {2, 0, 0};
    DenseProblem P(s, seed);
    for (bool causal : {true, false}) {
      P.p.causal = causal;
      expect_matches_unified(P, seed, causal ? "causal" : "non-causal");
    }
    // GQA by construction: changing kv head 0's keys moves exactly q heads [0, group)
    const ref::AttentionResult base = ref::dense_prefill(P.p);
    for (int j = 0; j < P.klen(1); ++j)
      for (int d = 0; d < c.d; ++d) {
        P.set_k(1, j, 0, d, random_value(P.rng, c.dt));
        P.set_v(1, j, 0, d, random_value(P.rng, c.dt));
      }
    const ref::AttentionResult moved = ref::dense_prefill(P.p);
    const int group = c.nqh / c.nkvh;
    for (int i = 0; i < P.qlen(1); ++i)
      for (int h = 0; h < c.nqh; ++h) {
        const size_t li = size_t(h * P.T + P.tok(1, i));
        EXPECT_EQ(moved.lse[li] != base.lse[li], h < group) << "h=" << h << " i=" << i;
      }
    for (int i = 0; i < P.qlen(0); ++i)  // other sequences untouched
      for (int h = 0; h < c.nqh; ++h)
        EXPECT_EQ(moved.lse[size_t(h * P.T + P.tok(0, i))], base.lse[size_t(h * P.T + P.tok(0, i))]);
  }
}

TEST(ReferenceDensePrefill, WindowAndSoftcapMatchUnified) {
  const uint32_t seed = 521;
  SCOPED_TRACE(trace(seed));
  DenseSpec s;
  s.q_lens = {4, 7, 2, 6};
  s.k_lens = {13, 7, 9, 3};
  s.nqh = 4;
  s.nkvh = 2;
  s.dqk = s.dv = 64;
  s.dt = DType::bf16;
  DenseProblem P(s, seed);
  for (int wl : {-1, 0, 3, 10})
    for (bool causal : {true, false})
      for (float cap : {0.f, 1.5f}) {
        P.p.window_left = wl;
        P.p.causal = causal;
        P.p.softcap = cap;
        P.p.scale = cap > 0.f ? 0.9f : 0.125f;  // large logits so that the softcap bites
        const std::string what = "window_left=" + std::to_string(wl) + (causal ? " causal" : " non-causal") +
                                 " softcap=" + std::to_string(cap);
        expect_matches_unified(P, seed, what);
      }
  // the softcap changes the result (the test above would not notice a dropped softcap otherwise)
  P.p.window_left = -1;
  P.p.causal = true;
  P.p.scale = 0.9f;
  P.p.softcap = 0.f;
  const ref::AttentionResult plain = ref::dense_prefill(P.p);
  P.p.softcap = 1.5f;
  const ref::AttentionResult capped = ref::dense_prefill(P.p);
  EXPECT_GT(std::abs(plain.lse[0] - capped.lse[0]), 1e-3);
  // causal with a window: sequence 3 (lq 6, lk 3: positions -3..2) has three queries that see nothing
  P.p.window_left = 3;
  expect_empty_rows(P, ref::dense_prefill(P.p), 3 * s.nqh, "window 3 causal");
}

TEST(ReferenceDensePrefill, BatchedLayoutWithPaddedStridesMatchesUnified) {
  uint32_t seed = 530;
  for (auto [lq, lk] : {std::pair{6, 11}, std::pair{11, 6}, std::pair{7, 7}}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + " lq=" + std::to_string(lq) + " lk=" + std::to_string(lk));
    DenseSpec s;
    s.batched = true;
    s.q_lens = {lq, lq, lq};
    s.k_lens = {lk, lk, lk};
    s.nqh = 8;
    s.nkvh = 2;
    s.dqk = s.dv = 64;
    s.dt = seed % 2 ? DType::f16 : DType::bf16;
    s.qpad = {3, 5, 17};  // q_stride_token > heads * d, q_stride_batch > lq * q_stride_token
    s.kpad = {1, 2, 9};
    s.vpad = {0, 7, 4};
    DenseProblem P(s, seed);
    ASSERT_GT(P.p.q_stride_token, int64_t(s.nqh) * s.dqk);
    ASSERT_GT(P.p.q_stride_batch, lq * P.p.q_stride_token);
    for (bool causal : {true, false}) {
      P.p.causal = causal;
      expect_matches_unified(P, seed, causal ? "causal" : "non-causal");
      expect_empty_rows(P, ref::dense_prefill(P.p), causal ? 3 * std::max(0, lq - lk) * s.nqh : 0,
                        causal ? "causal" : "non-causal");
    }
  }
}

TEST(ReferenceDensePrefill, RandomProblemsMatchUnifiedAndBruteForce) {
  for (uint32_t seed = 541; seed <= 552; ++seed) {
    SCOPED_TRACE(trace(seed));
    std::mt19937 g(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
    DenseSpec s;
    s.batched = seed % 3 == 0;
    const int B = pick(1, 4);
    s.q_lens.clear();
    s.k_lens.clear();
    const int lq = pick(0, 12), lk = pick(0, 30);
    for (int b = 0; b < B; ++b) {
      s.q_lens.push_back(s.batched ? lq : pick(0, 12));
      s.k_lens.push_back(s.batched ? lk : pick(0, 30));
    }
    const int ratios[] = {1, 4, 8};
    s.nkvh = pick(1, 2);
    s.nqh = s.nkvh * ratios[pick(0, 2)];
    s.dqk = s.dv = seed % 2 ? 64 : 128;
    s.dt = seed % 4 < 2 ? DType::f16 : DType::bf16;
    s.qpad = {pick(0, 3), pick(0, 3), pick(0, 3)};
    s.kpad = {pick(0, 3), pick(0, 3), pick(0, 3)};
    s.vpad = {pick(0, 3), pick(0, 3), pick(0, 3)};
    DenseProblem P(s, seed);
    P.p.causal = pick(0, 3) != 0;
    P.p.window_left = pick(0, 2) == 0 ? pick(0, 8) : -1;
    P.p.softcap = pick(0, 1) ? 4.f : 0.f;
    P.p.scale = float(uniform(g, 0.05, 0.5));
    expect_matches_unified(P, seed, "random");
  }
}

// ---------------------------------------------------------------------------------------------
// head_size_qk 192, head_size_v 128: brute force and identities
// ---------------------------------------------------------------------------------------------

DenseSpec spec_192_128(bool batched) {
  DenseSpec s;
  s.batched = batched;
  if (batched) {
    s.q_lens = {5, 5};
    s.k_lens = {9, 9};
  } else {
    s.q_lens = {4, 0, 7, 3};
    s.k_lens = {9, 5, 7, 1};
  }
  s.nqh = 4;
  s.nkvh = 2;
  s.dqk = 192;
  s.dv = 128;
  s.qpad = {2, 1, 3};
  s.kpad = {1, 0, 5};
  s.vpad = {3, 2, 1};
  return s;
}

TEST(ReferenceDensePrefill, HeadSize192And128MatchesBruteForce) {
  uint32_t seed = 600;
  for (bool batched : {false, true})
    for (DType dt : {DType::f16, DType::bf16}) {
      ++seed;
      SCOPED_TRACE(trace(seed) + (batched ? " batched " : " packed ") + std::string(hipattn::dtype_name(dt)));
      DenseSpec s = spec_192_128(batched);
      s.dt = dt;
      DenseProblem P(s, seed);
      for (bool causal : {true, false})
        for (int wl : {-1, 2})
          for (float cap : {0.f, 2.f}) {
            P.p.causal = causal;
            P.p.window_left = wl;
            P.p.softcap = cap;
            const std::string what = std::string(causal ? "causal" : "non-causal") + " wl=" + std::to_string(wl) +
                                     " cap=" + std::to_string(cap);
            const ref::AttentionResult r = ref::dense_prefill(P.p);
            ASSERT_EQ(r.out.size(), size_t(P.T * 4 * 128));
            expect_result(r, brute(P), kTol, what);
          }
    }
}

TEST(ReferenceDensePrefill, HeadSize192And128OneQueryByHand) {
  // query 2 of sequence 2 (lq 7, lk 7: position 2, causal: keys 0, 1, 2), q head 3 -> kv head 1,
  // read straight from the typed storage at hand-computed addresses
  const uint32_t seed = 611;
  DenseSpec s = spec_192_128(false);
  DenseProblem P(s, seed);
  const ref::AttentionResult r = ref::dense_prefill(P.p);
  const int64_t t = 4 + 0 + 2;  // cu_seqlens_q[2] = 4
  const int64_t k0 = 9 + 5;     // cu_seqlens_k[2] = 14
  const DType dt = s.dt;
  auto at = [&](const Buffer& b, int64_t i) { return decode(dt, b.bits(size_t(i))); };
  double logit[3], m = -kInf;
  for (int j = 0; j < 3; ++j) {
    double dot = 0.0;
    for (int d = 0; d < 192; ++d)
      dot += at(P.qb, t * P.qs.token + 3 * P.qs.head + d) * at(P.kb, (k0 + j) * P.ks.token + 1 * P.ks.head + d);
    logit[j] = double(P.p.scale) * dot;
    m = std::max(m, logit[j]);
  }
  const double w0 = std::exp(logit[0] - m), w1 = std::exp(logit[1] - m), w2 = std::exp(logit[2] - m);
  const double L = w0 + w1 + w2;
  EXPECT_NEAR(r.lse[size_t(3 * P.T + t)], m + std::log(L), 1e-12);
  for (int d = 0; d < 128; ++d) {
    auto vrow = [&](int j) { return at(P.vb, (k0 + j) * P.vs.token + 1 * P.vs.head + d); };
    const double want = (w0 * vrow(0) + w1 * vrow(1) + w2 * vrow(2)) / L;
    EXPECT_NEAR(r.out[size_t((t * 4 + 3) * 128 + d)], want, 1e-12) << "d=" << d;
  }
}

TEST(ReferenceDensePrefill, HeadSize192And128SingleVisibleKeyGivesItsValueRow) {
  uint32_t seed = 620;
  for (bool batched : {false, true}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + (batched ? " batched" : " packed"));
    DenseProblem P(spec_192_128(batched), seed);
    P.p.causal = true;
    P.p.window_left = 0;  // query at position pos sees key pos only
    const ref::AttentionResult r = ref::dense_prefill(P.p);
    int checked = 0;
    for (int b = 0; b < P.B; ++b)
      for (int i = 0; i < P.qlen(b); ++i) {
        const int pos = P.klen(b) - P.qlen(b) + i, t = P.tok(b, i);
        if (pos < 0) continue;
        for (int h = 0; h < 4; ++h) {
          const int kvh = h / 2;
          double dot = 0.0;
          for (int d = 0; d < 192; ++d) dot += P.qv(b, i, h, d) * P.kv(b, pos, kvh, d);
          EXPECT_NEAR(r.lse[size_t(h * P.T + t)], double(P.p.scale) * dot, 1e-13);
          for (int d = 0; d < 128; ++d)
            EXPECT_EQ(r.out[size_t((t * 4 + h) * 128 + d)], P.vv(b, pos, kvh, d)) << "b=" << b << " i=" << i << " h=" << h;
          ++checked;
        }
      }
    EXPECT_GT(checked, 0);
  }
}

TEST(ReferenceDensePrefill, HeadSize192And128EqualKeysGiveTheMeanOfVisibleValues) {
  uint32_t seed = 630;
  for (int wl : {-1, 2}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + " window_left=" + std::to_string(wl));
    DenseProblem P(spec_192_128(false), seed);
    for (int b = 0; b < P.B; ++b)  // every K row equal to row 0 of its (sequence, kv head)
      for (int j = 1; j < P.klen(b); ++j)
        for (int kvh = 0; kvh < 2; ++kvh)
          for (int d = 0; d < 192; ++d) P.set_k(b, j, kvh, d, {P.k_bits(b, 0, kvh, d), P.kv(b, 0, kvh, d)});
    P.p.causal = true;
    P.p.window_left = wl;
    const ref::AttentionResult r = ref::dense_prefill(P.p);
    for (int b = 0; b < P.B; ++b)
      for (int i = 0; i < P.qlen(b); ++i) {
        const int pos = P.klen(b) - P.qlen(b) + i, t = P.tok(b, i);
        const int first = wl >= 0 ? std::max(0, pos - wl) : 0, last = std::min(pos, P.klen(b) - 1);
        const int n = last - first + 1;
        for (int h = 0; h < 4; ++h) {
          const int kvh = h / 2;
          if (n <= 0) {
            EXPECT_EQ(r.lse[size_t(h * P.T + t)], -kInf);
            continue;
          }
          double dot = 0.0;
          for (int d = 0; d < 192; ++d) dot += P.qv(b, i, h, d) * P.kv(b, 0, kvh, d);
          EXPECT_NEAR(r.lse[size_t(h * P.T + t)], double(P.p.scale) * dot + std::log(double(n)), 1e-12);
          for (int d = 0; d < 128; ++d) {
            double mean = 0.0;
            for (int j = first; j <= last; ++j) mean += P.vv(b, j, kvh, d);
            mean /= n;
            EXPECT_NEAR(r.out[size_t((t * 4 + h) * 128 + d)], mean, 1e-13) << "b=" << b << " i=" << i << " h=" << h;
          }
        }
      }
  }
}

TEST(ReferenceDensePrefill, MaskedKeysNeverReachTheResult) {
  const uint32_t seed = 641;
  SCOPED_TRACE(trace(seed));
  DenseProblem P(spec_192_128(false), seed);
  P.p.causal = true;
  P.p.window_left = 2;
  const ref::AttentionResult clean = ref::dense_prefill(P.p);
  // sequence 0 (lq 4, lk 9: positions 5..8, window 2 -> keys 3..8): keys 0..2 masked for every query;
  // key 8 is visible to query 3 only
  const uint32_t nan = nan_bits(P.s.dt), inf = inf_bits(P.s.dt);
  for (int j = 0; j < 3; ++j)
    for (int kvh = 0; kvh < 2; ++kvh) {
      for (int d = 0; d < 192; ++d) P.kb.set_bits(size_t(P.k_index(0, j, kvh, d)), (j + d) % 2 ? nan : inf);
      for (int d = 0; d < 128; ++d) P.vb.set_bits(size_t(P.v_index(0, j, kvh, d)), (j + d) % 2 ? inf : nan);
    }
  for (int kvh = 0; kvh < 2; ++kvh)
    for (int d = 0; d < 128; ++d) P.vb.set_bits(size_t(P.v_index(0, 8, kvh, d)), nan);
  const ref::AttentionResult poisoned = ref::dense_prefill(P.p);
  for (int i = 0; i < 4; ++i)
    for (int h = 0; h < 4; ++h) {
      const int t = P.tok(0, i);
      for (int d = 0; d < 128; ++d) {
        const size_t oi = size_t((t * 4 + h) * 128 + d);
        if (i < 3) {
          EXPECT_EQ(poisoned.out[oi], clean.out[oi]) << "i=" << i << " h=" << h << " d=" << d;
        } else {
          EXPECT_TRUE(std::isnan(poisoned.out[oi])) << "query 3 sees key 8";
        }
      }
    }
  // the other sequences are unchanged
  for (size_t x = size_t(P.tok(2, 0) * 4 * 128); x < poisoned.out.size(); ++x) EXPECT_EQ(poisoned.out[x], clean.out[x]);
}

// ---------------------------------------------------------------------------------------------
// writing the result
// ---------------------------------------------------------------------------------------------

TEST(ReferenceDensePrefill, WriteOutputsPackedAndBatched) {
  uint32_t seed = 700;
  for (bool batched : {false, true}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + (batched ? " batched" : " packed"));
    DenseSpec s = spec_192_128(batched);
    s.dt = batched ? DType::bf16 : DType::f16;
    DenseProblem P(s, seed);
    const int H = 4, DV = 128;
    const int64_t osh = DV + 3, ost = H * osh + 2, osb = P.Lq * ost + 11, lst = P.T + 5;
    const size_t n_out = size_t(batched ? P.B * osb : P.T * ost);
    const uint32_t sentinel = 0x1234u;
    Buffer out(s.dt, n_out);
    for (size_t i = 0; i < n_out; ++i) out.set_bits(i, sentinel);
    std::vector<float> lse(size_t(H * lst), 777.f);
    P.p.out = out.data();
    P.p.o_stride_token = ost;
    P.p.o_stride_head = osh;
    P.p.o_stride_batch = batched ? osb : 0;
    P.p.lse = lse.data();
    P.p.lse_stride_head = lst;
    const ref::AttentionResult r = ref::dense_prefill(P.p);
    ref::write_outputs(r, P.p);
    std::vector<char> written(n_out, 0);
    for (int b = 0; b < P.B; ++b)
      for (int i = 0; i < P.qlen(b); ++i) {
        const int t = P.tok(b, i);
        for (int h = 0; h < H; ++h) {
          for (int d = 0; d < DV; ++d) {
            const size_t oi = size_t((batched ? b * osb : 0) + (batched ? i : t) * ost + h * osh + d);
            written[oi] = 1;
            EXPECT_EQ(out.bits(oi), encode(s.dt, float(r.out[size_t((t * H + h) * DV + d)])))
                << "b=" << b << " i=" << i << " h=" << h << " d=" << d;
          }
          EXPECT_EQ(lse[size_t(h * lst + t)], float(r.lse[size_t(h * P.T + t)]));
        }
      }
    for (size_t i = 0; i < n_out; ++i)
      if (!written[i]) {
        EXPECT_EQ(out.bits(i), sentinel) << "padding element " << i << " overwritten";
      }
    for (int h = 0; h < H; ++h)
      for (int64_t t = P.T; t < lst; ++t) EXPECT_EQ(lse[size_t(h * lst + t)], 777.f);
  }
}

// ---------------------------------------------------------------------------------------------
// argument checks
// ---------------------------------------------------------------------------------------------

void expect_rejected(const DensePrefillParams& p, const std::string& field, const std::string& what) {
  try {
    (void)ref::dense_prefill(p);
    ADD_FAILURE() << what << ": no throw, expected field " << field;
  } catch (const hipattn::Error& e) {
    EXPECT_EQ(e.field(), field) << what << ": " << e.what();
    EXPECT_EQ(e.code(), hipattn::ErrorCode::invalid_argument) << what;
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << what;
  }
}

TEST(ReferenceDensePrefill, ArgumentChecksNameTheField) {
  DenseSpec s;
  s.q_lens = {3, 2};
  s.k_lens = {5, 2};
  s.nqh = 4;
  s.nkvh = 2;
  s.dqk = s.dv = 64;
  DenseProblem P(s, 801);
  EXPECT_NO_THROW((void)ref::dense_prefill(P.p));
  DensePrefillParams p;

  p = P.p;
  p.cu_seqlens_k = nullptr;
  expect_rejected(p, "cu_seqlens_k", "only cu_seqlens_q set");
  p = P.p;
  p.cu_seqlens_q = nullptr;
  expect_rejected(p, "cu_seqlens_q", "only cu_seqlens_k set");
  p = P.p;
  p.q = nullptr;
  expect_rejected(p, "q", "null q");
  p = P.p;
  p.k = nullptr;
  expect_rejected(p, "k", "null k");
  p = P.p;
  p.v = nullptr;
  expect_rejected(p, "v", "null v");
  for (DType dt : {DType::f32, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz}) {
    p = P.p;
    p.dtype = dt;
    expect_rejected(p, "dtype", std::string(hipattn::dtype_name(dt)));
  }
  p = P.p;
  p.num_kv_heads = 3;
  expect_rejected(p, "num_q_heads", "4 % 3");
  p = P.p;
  p.num_kv_heads = 0;
  expect_rejected(p, "num_kv_heads", "zero kv heads");
  p = P.p;
  p.head_size_v = 0;
  expect_rejected(p, "head_size_v", "zero head_size_v");

  const std::vector<int32_t> non_monotonic{0, 4, 3};  // decreases (lengths within max_seqlen_q = 5)
  p = P.p;
  p.cu_seqlens_q = non_monotonic.data();
  p.max_seqlen_q = 5;
  expect_rejected(p, "cu_seqlens_q", "non-monotonic");
  p = P.p;
  p.num_tokens_k = 6;  // cu_seqlens_k ends at 7
  expect_rejected(p, "cu_seqlens_k", "past num_tokens_k");
  p = P.p;
  p.num_tokens_q = 4;  // cu_seqlens_q ends at 5
  expect_rejected(p, "cu_seqlens_q", "past num_tokens_q");
  p = P.p;
  p.max_seqlen_q = 2;  // sequence 0 has 3 queries
  expect_rejected(p, "cu_seqlens_q", "past max_seqlen_q");
  p = P.p;
  p.max_seqlen_k = 4;  // sequence 0 has 5 keys
  expect_rejected(p, "cu_seqlens_k", "past max_seqlen_k");
  const std::vector<int32_t> negative_start{-1, 3, 5};
  p = P.p;
  p.cu_seqlens_q = negative_start.data();
  expect_rejected(p, "cu_seqlens_q", "negative start");

  // batched: the token counts must be num_seqs * max_seqlen
  DenseSpec sb = s;
  sb.batched = true;
  sb.q_lens = {3, 3};
  sb.k_lens = {5, 5};
  DenseProblem Pb(sb, 802);
  EXPECT_NO_THROW((void)ref::dense_prefill(Pb.p));
  p = Pb.p;
  p.num_tokens_q = 7;
  expect_rejected(p, "num_tokens_q", "batched num_tokens_q");
  p = Pb.p;
  p.num_tokens_k = 9;
  expect_rejected(p, "num_tokens_k", "batched num_tokens_k");

  // no tokens: null pointers are fine, the result is empty
  p = DensePrefillParams{};
  p.num_q_heads = 2;
  p.num_kv_heads = 1;
  p.head_size_qk = 192;
  p.head_size_v = 128;
  ref::AttentionResult r;
  EXPECT_NO_THROW(r = ref::dense_prefill(p));
  EXPECT_TRUE(r.out.empty() && r.lse.empty());
  // keys null but no key tokens (every sequence has keys 0): every query sees nothing
  p = P.p;
  const std::vector<int32_t> no_keys{0, 0, 0};
  p.cu_seqlens_k = no_keys.data();
  p.num_tokens_k = 0;
  p.k = p.v = nullptr;
  EXPECT_NO_THROW(r = ref::dense_prefill(p));
  for (double l : r.lse) EXPECT_EQ(l, -kInf);
  for (double o : r.out) EXPECT_EQ(o, 0.0);
  // q rows no sequence owns (cu_seqlens_q ends before num_tokens_q) stay 0 / -inf
  p = P.p;
  const std::vector<int32_t> short_q{0, 3, 4};
  p.cu_seqlens_q = short_q.data();
  EXPECT_NO_THROW(r = ref::dense_prefill(p));
  for (int h = 0; h < 4; ++h) {
    EXPECT_TRUE(std::isfinite(r.lse[size_t(h * 5 + 3)]));
    EXPECT_EQ(r.lse[size_t(h * 5 + 4)], -kInf);
  }
}

}  // namespace
