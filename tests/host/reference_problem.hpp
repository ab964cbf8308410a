// tests/host/reference_problem.hpp: what the float64-reference tests (tests/host/test_reference_*.cpp)
// share: raw typed storage, a paged unified-attention problem whose stored cache and logical values are
// both known, ALGORITHM.md evaluated literally on the logical arrays, and comparison helpers.
//
// Every problem is built from seeded std::mt19937 data on exact grids (fp16/bf16: k/64, fp8: k/8, k != 0),
// so the real value of every stored element is known without decoding it. The test keeps those values in
// plain logical arrays ([seq][key][kv head][dim]) and evaluates ALGORITHM.md on them directly, with
// visibility as a per-key predicate; the reference reads the paged, strided, typed cache. Every storage
// element that no visible key owns (unused blocks, slots past kv_len, padded block-table entries, head and
// block padding, unused scale entries) holds NaN, so any stray read shows up.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hipattn/reference/reference.hpp"

namespace hipattn_reference_tests {

using hipattn::bfloat16_t;
using hipattn::DType;
using hipattn::fp8_e4m3fn_t;
using hipattn::fp8_e4m3fnuz_t;
using hipattn::half_t;
using hipattn::KvScaleMode;
using hipattn::UnifiedAttentionParams;
namespace ref = hipattn::reference;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kTol = 1e-12;

// ---------------------------------------------------------------------------------------------
// raw storage
// ---------------------------------------------------------------------------------------------

inline uint32_t nan_bits(DType dt) {
  switch (dt) {
    case DType::f16: return 0x7e00u;
    case DType::bf16: return 0x7fc0u;
    case DType::fp8_e4m3fn: return 0x7fu;
    case DType::fp8_e4m3fnuz: return 0x80u;
    case DType::f32: return 0x7fc00000u;
  }
  return 0;
}
// +Inf where the type has one, else its largest finite code (fp8 has no infinity).
inline uint32_t inf_bits(DType dt) {
  switch (dt) {
    case DType::f16: return 0x7c00u;
    case DType::bf16: return 0x7f80u;
    case DType::fp8_e4m3fn: return 0x7eu;
    case DType::fp8_e4m3fnuz: return 0x7fu;
    case DType::f32: return 0x7f800000u;
  }
  return 0;
}

inline uint32_t encode(DType dt, float x) {
  switch (dt) {
    case DType::f16: return half_t::from_float(x).bits;
    case DType::bf16: return bfloat16_t::from_float(x).bits;
    case DType::fp8_e4m3fn: return fp8_e4m3fn_t::from_float(x).bits;
    case DType::fp8_e4m3fnuz: return fp8_e4m3fnuz_t::from_float(x).bits;
    case DType::f32: {
      uint32_t b;
      std::memcpy(&b, &x, 4);
      return b;
    }
  }
  return 0;
}
inline double decode(DType dt, uint32_t bits) {
  switch (dt) {
    case DType::f16: return half_t::from_bits(bits).to_float();
    case DType::bf16: return bfloat16_t::from_bits(bits).to_float();
    case DType::fp8_e4m3fn: return fp8_e4m3fn_t::from_bits(bits).to_float();
    case DType::fp8_e4m3fnuz: return fp8_e4m3fnuz_t::from_bits(bits).to_float();
    case DType::f32: {
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
  }
  return 0;
}

// A typed array held as raw bytes, every element NaN until set.
struct Buffer {
  DType dt = DType::f16;
  std::vector<uint8_t> bytes;
  Buffer() = default;
  Buffer(DType d, size_t n) : dt(d), bytes(n * size_t(hipattn::dtype_size(d))) {
    for (size_t i = 0; i < n; ++i) set_bits(i, nan_bits(d));
  }
  size_t size() const { return bytes.size() / size_t(hipattn::dtype_size(dt)); }
  void set_bits(size_t i, uint32_t b) {
    const int w = hipattn::dtype_size(dt);
    if (w == 1) {
      bytes[i] = uint8_t(b);
    } else if (w == 2) {
      const uint16_t h = uint16_t(b);
      std::memcpy(&bytes[i * 2], &h, 2);
    } else {
      std::memcpy(&bytes[i * 4], &b, 4);
    }
  }
  uint32_t bits(size_t i) const {
    const int w = hipattn::dtype_size(dt);
    if (w == 1) return bytes[i];
    if (w == 2) {
      uint16_t h;
      std::memcpy(&h, &bytes[i * 2], 2);
      return h;
    }
    uint32_t b;
    std::memcpy(&b, &bytes[i * 4], 4);
    return b;
  }
  const void* data() const { return bytes.data(); }
  void* data() { return bytes.data(); }
};

// A random non-zero value exactly representable in dt: k/64 (fp16, bf16) or k/8 (fp8), 0 < |k| <= 128 / 16.
inline double grid_value(std::mt19937& g, DType dt) {
  const bool fp8 = hipattn::is_fp8(dt);
  std::uniform_int_distribution<int> pick(1, fp8 ? 16 : 128);
  std::bernoulli_distribution neg(0.5);
  const int k = pick(g) * (neg(g) ? -1 : 1);
  return double(k) / (fp8 ? 8.0 : 64.0);
}
inline double uniform(std::mt19937& g, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g); }

// fp8 codes with values decoded by hand: e4m3fn (bias 7) and e4m3fnuz (bias 8).
using CodeTable = std::vector<std::pair<uint8_t, double>>;
inline const CodeTable kFnCodes = {{0x38, 1.0},  {0x40, 2.0},  {0x30, 0.5},   {0x3c, 1.5},
                            {0x44, 3.0},  {0xb8, -1.0}, {0xc0, -2.0},  {0xb4, -0.75}};
inline const CodeTable kFnuzCodes = {{0x40, 1.0}, {0x48, 2.0},  {0x38, 0.5},  {0x44, 1.5},
                              {0x4c, 3.0}, {0xc0, -1.0}, {0xc8, -2.0}, {0xbc, -0.75}};

// ---------------------------------------------------------------------------------------------
// a unified-attention problem: the stored, paged cache and the same values as logical arrays
// ---------------------------------------------------------------------------------------------

struct Spec {
  std::vector<int> q_lens{1};
  std::vector<int> kv_lens{1};
  int nqh = 2, nkvh = 1, hs = 16, bs = 4;
  DType q_dtype = DType::f16, kv_dtype = DType::f16;
  KvScaleMode scale_mode = KvScaleMode::none;  // used when kv_dtype is fp8
  bool hnd = false;
  int head_pad = 0, block_pad = 0;      // extra (NaN) elements after each head row / each block
  const CodeTable* fp8_codes = nullptr;  // fp8: draw K/V codes from this table (values known by hand)
};

struct Problem {
  Spec s;
  uint32_t seed;
  std::mt19937 rng;
  int B = 0, T = 0, max_blocks = 0, num_blocks = 0;
  std::vector<int32_t> cu, kv_lens, block_table;
  int64_t bt_stride = 0;                       // block-table row stride
  KvScaleMode mode = KvScaleMode::none;        // the scale mode in effect
  int64_t sb = 0, ss = 0, sh = 0;              // cache strides
  int64_t sc_block = 0, sc_slot = 0, sc_head = 0;  // per-token-head scale strides
  Buffer qb, kb, vb;
  std::vector<float> kscale, vscale;
  std::vector<double> q;                  // [T][nqh][hs] real values
  std::vector<std::vector<double>> k, v;  // [seq] -> [kv_len][nkvh][hs] real values (dequantized)
  std::vector<float> sinks, alibi, qq;
  UnifiedAttentionParams p;

  Problem(const Spec& spec, uint32_t sd) : s(spec), seed(sd), rng(sd) {
    B = int(s.q_lens.size());
    cu.assign(size_t(B) + 1, 0);
    for (int b = 0; b < B; ++b) cu[size_t(b) + 1] = cu[size_t(b)] + s.q_lens[size_t(b)];
    T = cu[size_t(B)];
    kv_lens.assign(s.kv_lens.begin(), s.kv_lens.end());
    // blocks: physical 0 and the last are never owned (all NaN); owned blocks are a random permutation
    std::vector<int> nb(static_cast<size_t>(B));
    int owned = 0;
    for (int b = 0; b < B; ++b) {
      nb[size_t(b)] = (kv_lens[size_t(b)] + s.bs - 1) / s.bs;
      owned += nb[size_t(b)];
      max_blocks = std::max(max_blocks, nb[size_t(b)]);
    }
    max_blocks += 1;  // one padded column in every row
    num_blocks = owned + 2;
    std::vector<int> phys(static_cast<size_t>(owned));
    std::iota(phys.begin(), phys.end(), 1);
    std::shuffle(phys.begin(), phys.end(), rng);
    bt_stride = max_blocks + 2;
    block_table.assign(size_t(B * bt_stride), 0);  // padded entries -> the NaN block 0
    for (int b = 0, n = 0; b < B; ++b)
      for (int lb = 0; lb < nb[size_t(b)]; ++lb) block_table[size_t(b * bt_stride + lb)] = phys[size_t(n++)];

    const int64_t hsp = s.hs + s.head_pad;
    if (!s.hnd) {
      sh = hsp;
      ss = s.nkvh * hsp;
      sb = s.bs * s.nkvh * hsp + s.block_pad;
    } else {
      ss = hsp;
      sh = s.bs * hsp;
      sb = s.nkvh * s.bs * hsp + s.block_pad;
    }
    qb = Buffer(s.q_dtype, size_t(T * s.nqh * hsp));
    kb = Buffer(s.kv_dtype, size_t(num_blocks * sb));
    vb = Buffer(s.kv_dtype, size_t(num_blocks * sb));

    // Q, in logical order
    q.assign(size_t(T * s.nqh * s.hs), 0.0);
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < s.nqh; ++h)
        for (int d = 0; d < s.hs; ++d) {
          const double x = grid_value(rng, s.q_dtype);
          qb.set_bits(size_t((t * s.nqh + h) * hsp + d), encode(s.q_dtype, float(x)));
          q[size_t((t * s.nqh + h) * s.hs + d)] = x;
        }
    // scales
    const bool fp8 = hipattn::is_fp8(s.kv_dtype);
    mode = fp8 ? s.scale_mode : KvScaleMode::none;
    const float fnan = std::numeric_limits<float>::quiet_NaN();
    if (mode == KvScaleMode::per_tensor) {
      kscale = {float(uniform(rng, 0.25, 2.0))};
      vscale = {float(uniform(rng, 0.25, 2.0))};
    } else if (mode == KvScaleMode::per_token_head) {
      sc_head = 1;
      sc_slot = s.nkvh + 1;
      sc_block = s.bs * sc_slot + 2;
      kscale.assign(size_t(num_blocks * sc_block), fnan);
      vscale.assign(size_t(num_blocks * sc_block), fnan);
    }
    // K, V in logical order
    k.resize(size_t(B));
    v.resize(size_t(B));
    for (int which = 0; which < 2; ++which)
      for (int b = 0; b < B; ++b) {
        auto& logical = which == 0 ? k[size_t(b)] : v[size_t(b)];
        logical.assign(size_t(kv_lens[size_t(b)] * s.nkvh * s.hs), 0.0);
        for (int j = 0; j < kv_lens[size_t(b)]; ++j)
          for (int kvh = 0; kvh < s.nkvh; ++kvh) {
            if (mode == KvScaleMode::per_token_head) {
              auto& sc = which == 0 ? kscale : vscale;
              sc[size_t(scale_index(b, j, kvh))] = float(uniform(rng, 0.25, 2.0));
            }
            for (int d = 0; d < s.hs; ++d) {
              if (s.fp8_codes != nullptr) {
                const auto& [code, value] = (*s.fp8_codes)[std::uniform_int_distribution<size_t>(
                    0, s.fp8_codes->size() - 1)(rng)];
                set_code(which == 1, b, j, kvh, d, code, value);
              } else {
                const double x = grid_value(rng, s.kv_dtype);
                set_code(which == 1, b, j, kvh, d, encode(s.kv_dtype, float(x)), x);
              }
            }
          }
      }

    p.q = qb.data();
    p.q_dtype = s.q_dtype;
    p.q_stride_token = s.nqh * hsp;
    p.q_stride_head = hsp;
    p.k_cache = kb.data();
    p.v_cache = vb.data();
    p.kv_dtype = s.kv_dtype;
    p.k_stride_block = p.v_stride_block = sb;
    p.k_stride_slot = p.v_stride_slot = ss;
    p.k_stride_head = p.v_stride_head = sh;
    p.num_blocks = num_blocks;
    p.block_size = s.bs;
    p.kv_scale_mode = mode;
    p.k_scale = kscale.empty() ? nullptr : kscale.data();
    p.v_scale = vscale.empty() ? nullptr : vscale.data();
    p.scale_stride_block = sc_block;
    p.scale_stride_slot = sc_slot;
    p.scale_stride_head = sc_head;
    p.block_table = block_table.data();
    p.block_table_stride = bt_stride;
    p.max_blocks_per_seq = max_blocks;
    p.cu_seqlens_q = cu.data();
    p.seq_lens_k = kv_lens.data();
    p.num_seqs = B;
    p.num_tokens = T;
    p.max_seqlen_q = *std::max_element(s.q_lens.begin(), s.q_lens.end());
    p.max_seqlen_k = std::max(1, *std::max_element(s.kv_lens.begin(), s.kv_lens.end()));
    p.num_q_heads = s.nqh;
    p.num_kv_heads = s.nkvh;
    p.head_size = s.hs;
    p.scale = float(1.0 / std::sqrt(double(s.hs)));
    p.causal = true;
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  int64_t phys_block(int b, int j) const {
    return block_table[size_t(b * bt_stride + j / s.bs)];
  }
  int64_t cache_index(int b, int j, int kvh, int d) const {
    return phys_block(b, j) * sb + (j % s.bs) * ss + kvh * sh + d;
  }
  int64_t scale_index(int b, int j, int kvh) const {
    return phys_block(b, j) * sc_block + (j % s.bs) * sc_slot + kvh * sc_head;
  }
  size_t logical_index(int j, int kvh, int d) const { return size_t((j * s.nkvh + kvh) * s.hs + d); }
  double scale_of(bool is_v, int b, int j, int kvh) const {
    if (mode == KvScaleMode::per_tensor) return double(is_v ? vscale[0] : kscale[0]);
    if (mode == KvScaleMode::per_token_head)
      return double((is_v ? vscale : kscale)[size_t(scale_index(b, j, kvh))]);
    return 1.0;
  }
  // Stores code `bits` whose value is known to be `value` (before the scale) at K/V (b, j, kvh, d).
  void set_code(bool is_v, int b, int j, int kvh, int d, uint32_t bits, double value) {
    (is_v ? vb : kb).set_bits(size_t(cache_index(b, j, kvh, d)), bits);
    (is_v ? v : k)[size_t(b)][logical_index(j, kvh, d)] = value * scale_of(is_v, b, j, kvh);
  }
  // Stores a NaN / +-Inf code at K/V (b, j, kvh, d), in the cache and the logical arrays.
  void poison(bool is_v, int b, int j, int kvh, int d, bool use_nan) {
    const uint32_t bits = use_nan ? nan_bits(s.kv_dtype) : inf_bits(s.kv_dtype);
    (is_v ? vb : kb).set_bits(size_t(cache_index(b, j, kvh, d)), bits);
    (is_v ? v : k)[size_t(b)][logical_index(j, kvh, d)] = use_nan ? std::nan("") : kInf;
  }

  void enable_sinks(double lo = -1.0, double hi = 2.0) {
    sinks.clear();
    for (int h = 0; h < s.nqh; ++h) sinks.push_back(float(uniform(rng, lo, hi)));
    p.sinks = sinks.data();
  }
  void enable_alibi() {
    alibi.clear();
    for (int h = 0; h < s.nqh; ++h) alibi.push_back(float(uniform(rng, 0.05, 0.6)));
    p.alibi_slopes = alibi.data();
  }
  void enable_qq_bias(int64_t stride) {
    // [max_seqlen_q, stride] plus one trailing NaN row, so a read past the last column is seen
    qq.assign(size_t((p.max_seqlen_q + 1) * stride), std::numeric_limits<float>::quiet_NaN());
    for (size_t n = 0; n < size_t(p.max_seqlen_q * stride); ++n) qq[n] = float(uniform(rng, -1.5, 1.5));
    p.qq_bias = qq.data();
    p.qq_bias_stride = stride;
  }
  int seq_of(int t) const {
    int b = 0;
    while (cu[size_t(b) + 1] <= t) ++b;
    return b;
  }
  double qv(int t, int h, int d) const { return q[size_t((t * s.nqh + h) * s.hs + d)]; }
  double kv(bool is_v, int b, int j, int kvh, int d) const { return (is_v ? v : k)[size_t(b)][logical_index(j, kvh, d)]; }
};

// ---------------------------------------------------------------------------------------------
// ALGORITHM.md evaluated literally on the logical arrays
// ---------------------------------------------------------------------------------------------

// softmax over (logit, V row) pairs with an optional sink; returns (out, lse).
inline std::pair<std::vector<double>, double> hand_softmax(const std::vector<double>& s, const std::vector<std::vector<double>>& vrows,
                                                    int dv, std::optional<double> sink) {
  std::vector<double> out(size_t(dv), 0.0);
  double m = sink.value_or(-kInf);
  for (double x : s) m = std::max(m, x);
  if (m == -kInf) return {out, -kInf};
  double L = sink ? std::exp(*sink - m) : 0.0;
  for (size_t k = 0; k < s.size(); ++k) {
    const double w = std::exp(s[k] - m);
    L += w;
    for (int d = 0; d < dv; ++d) out[size_t(d)] += w * vrows[k][size_t(d)];
  }
  for (double& x : out) x /= L;
  return {out, m + std::log(L)};
}

inline ref::AttentionResult direct(const Problem& P, int64_t kv_begin = 0, int64_t kv_end = std::numeric_limits<int64_t>::max(),
                            bool with_sink = true) {
  const UnifiedAttentionParams& p = P.p;
  const int H = P.s.nqh, D = P.s.hs, group = P.s.nqh / P.s.nkvh;
  ref::AttentionResult r;
  r.out.assign(size_t(P.T * H * D), 0.0);
  r.lse.assign(size_t(H * P.T), 0.0);
  for (int b = 0; b < P.B; ++b) {
    const int q_len = P.cu[size_t(b) + 1] - P.cu[size_t(b)];
    const int kv_len = P.kv_lens[size_t(b)];
    const int ctx = kv_len - q_len;
    for (int i = 0; i < q_len; ++i) {
      const int t = P.cu[size_t(b)] + i;
      const int pos = ctx + i;
      for (int h = 0; h < H; ++h) {
        const int kvh = h / group;
        std::vector<double> s;
        std::vector<std::vector<double>> vrows;
        for (int j = 0; j < kv_len; ++j) {
          bool visible = j >= kv_begin && j < kv_end;
          if (p.causal && j > pos) visible = false;
          if (p.window_left >= 0 && j < pos - p.window_left) visible = false;
          if (!visible) continue;
          double dot = 0.0;
          for (int d = 0; d < D; ++d) dot += P.qv(t, h, d) * P.kv(false, b, j, kvh, d);
          double x = double(p.scale) * dot;
          if (p.softcap > 0.f) x = double(p.softcap) * std::tanh(x / double(p.softcap));
          if (p.alibi_slopes) x += double(p.alibi_slopes[h]) * (j - pos);
          if (p.qq_bias) {
            const int rr = j - ctx;
            if (rr >= 0 && rr < p.qq_bias_stride) x += double(p.qq_bias[i * p.qq_bias_stride + rr]);
          }
          s.push_back(x);
          std::vector<double> row(static_cast<size_t>(D));
          for (int d = 0; d < D; ++d) row[size_t(d)] = P.kv(true, b, j, kvh, d);
          vrows.push_back(std::move(row));
        }
        std::optional<double> sink;
        if (with_sink && p.sinks) sink = double(p.sinks[h]);
        auto [o, l] = hand_softmax(s, vrows, D, sink);
        std::copy(o.begin(), o.end(), r.out.begin() + (t * H + h) * D);
        r.lse[size_t(h * P.T + t)] = l;
      }
    }
  }
  return r;
}

inline bool close(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= tol * (1.0 + std::abs(want));
}

inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!close(got[i], want[i], tol) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", want " << want[i];
  EXPECT_EQ(bad, 0) << what << ": " << bad << " mismatches";
}

inline void expect_result(const ref::AttentionResult& got, const ref::AttentionResult& want, double tol, const std::string& what) {
  expect_close(got.out, want.out, tol, what + ".out");
  expect_close(got.lse, want.lse, tol, what + ".lse");
}

inline void expect_all_finite(const ref::AttentionResult& r, const std::string& what) {
  size_t bad = 0;
  for (double x : r.out) bad += !std::isfinite(x);
  EXPECT_EQ(bad, 0u) << what << ": non-finite outputs";
}

inline std::string trace(uint32_t seed) { return "seed=" + std::to_string(seed); }

// Replaces the K and V rows of key j of sequence b (kv head kvh, or every kv head when kvh < 0) with fresh
// values, runs the reference, restores the cache, and returns for each (token, head) whether out or lse changed.
// Outputs that did not change must be bit-identical (checked by the caller through the returned flags).
inline std::vector<char> moved_by_key(Problem& P, int b, int j, int kvh_only, const ref::AttentionResult& base) {
  struct Saved {
    bool is_v;
    int kvh, d;
    uint32_t bits;
    double value;
  };
  std::vector<Saved> saved;
  for (int kvh = 0; kvh < P.s.nkvh; ++kvh) {
    if (kvh_only >= 0 && kvh != kvh_only) continue;
    for (int which = 0; which < 2; ++which)
      for (int d = 0; d < P.s.hs; ++d) {
        const bool is_v = which == 1;
        Buffer& buf = is_v ? P.vb : P.kb;
        const uint32_t old = buf.bits(size_t(P.cache_index(b, j, kvh, d)));
        saved.push_back({is_v, kvh, d, old, P.kv(is_v, b, j, kvh, d)});
        uint32_t nb = old;
        while (nb == old) nb = encode(P.s.kv_dtype, float(grid_value(P.rng, P.s.kv_dtype)));
        P.set_code(is_v, b, j, kvh, d, nb, decode(P.s.kv_dtype, nb));
      }
  }
  const ref::AttentionResult r = ref::unified_attention(P.p);
  for (const Saved& sv : saved) {
    (sv.is_v ? P.vb : P.kb).set_bits(size_t(P.cache_index(b, j, sv.kvh, sv.d)), sv.bits);
    (sv.is_v ? P.v : P.k)[size_t(b)][P.logical_index(j, sv.kvh, sv.d)] = sv.value;
  }
  const int H = P.s.nqh, D = P.s.hs;
  std::vector<char> moved(size_t(P.T * H), 0);
  for (int t = 0; t < P.T; ++t)
    for (int h = 0; h < H; ++h) {
      bool m = std::memcmp(&r.lse[size_t(h * P.T + t)], &base.lse[size_t(h * P.T + t)], sizeof(double)) != 0;
      for (int d = 0; d < D; ++d)
        m = m || std::memcmp(&r.out[size_t((t * H + h) * D + d)], &base.out[size_t((t * H + h) * D + d)], sizeof(double)) != 0;
      moved[size_t(t * H + h)] = m;
    }
  return moved;
}

// For every key of every sequence: the set of (token, head) outputs it moves equals `sees(b, i, j, h, kvh_of_key)`.
template <class Sees>
void check_dependencies(Problem& P, Sees&& sees, const std::string& what) {
  const ref::AttentionResult base = ref::unified_attention(P.p);
  const int group = P.s.nqh / P.s.nkvh;
  int bad = 0;
  for (int b = 0; b < P.B; ++b)
    for (int j = 0; j < P.kv_lens[size_t(b)]; ++j)
      for (int kvh = 0; kvh < P.s.nkvh; ++kvh) {
        const std::vector<char> moved = moved_by_key(P, b, j, kvh, base);
        for (int t = 0; t < P.T; ++t)
          for (int h = 0; h < P.s.nqh; ++h) {
            const int tb = P.seq_of(t);
            const bool expect = tb == b && h / group == kvh && sees(b, t - P.cu[size_t(b)], j, h);
            if (bool(moved[size_t(t * P.s.nqh + h)]) != expect && bad++ < 8)
              ADD_FAILURE() << what << ": seq " << b << " key " << j << " kv head " << kvh << " -> token " << t
                            << " head " << h << (expect ? " should move but did not" : " moved but must not");
          }
      }
  EXPECT_EQ(bad, 0) << what;
}
}  // namespace hipattn_reference_tests
