// tests/host/test_reference.cpp: the float64 references (unified attention, merge, MLA decode) against
// formulas written out in the tests.
//
// Every problem is built from seeded std::mt19937 data on exact grids (fp16/bf16: k/64, fp8: k/8, k != 0),
// so the real value of every stored element is known without decoding it. The test keeps those values in
// plain logical arrays ([seq][key][kv head][dim]) and evaluates ALGORITHM.md on them directly, with
// visibility as a per-key predicate; the reference reads the paged, strided, typed cache. Every storage
// element that no visible key owns (unused blocks, slots past kv_len, padded block-table entries, head and
// block padding, unused scale entries) holds NaN, so any stray read shows up.
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

namespace {

using hipattn::bfloat16_t;
using hipattn::DType;
using hipattn::fp8_e4m3fn_t;
using hipattn::fp8_e4m3fnuz_t;
using hipattn::half_t;
using hipattn::KvScaleMode;
using hipattn::UnifiedAttentionParams;
namespace ref = hipattn::reference;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTol = 1e-12;

// ---------------------------------------------------------------------------------------------
// raw storage
// ---------------------------------------------------------------------------------------------

uint32_t nan_bits(DType dt) {
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
uint32_t inf_bits(DType dt) {
  switch (dt) {
    case DType::f16: return 0x7c00u;
    case DType::bf16: return 0x7f80u;
    case DType::fp8_e4m3fn: return 0x7eu;
    case DType::fp8_e4m3fnuz: return 0x7fu;
    case DType::f32: return 0x7f800000u;
  }
  return 0;
}

uint32_t encode(DType dt, float x) {
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
double decode(DType dt, uint32_t bits) {
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
double grid_value(std::mt19937& g, DType dt) {
  const bool fp8 = hipattn::is_fp8(dt);
  std::uniform_int_distribution<int> pick(1, fp8 ? 16 : 128);
  std::bernoulli_distribution neg(0.5);
  const int k = pick(g) * (neg(g) ? -1 : 1);
  return double(k) / (fp8 ? 8.0 : 64.0);
}
double uniform(std::mt19937& g, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g); }

// fp8 codes with values decoded by hand: e4m3fn (bias 7) and e4m3fnuz (bias 8).
using CodeTable = std::vector<std::pair<uint8_t, double>>;
const CodeTable kFnCodes = {{0x38, 1.0},  {0x40, 2.0},  {0x30, 0.5},   {0x3c, 1.5},
                            {0x44, 3.0},  {0xb8, -1.0}, {0xc0, -2.0},  {0xb4, -0.75}};
const CodeTable kFnuzCodes = {{0x40, 1.0}, {0x48, 2.0},  {0x38, 0.5},  {0x44, 1.5},
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
std::pair<std::vector<double>, double> hand_softmax(const std::vector<double>& s, const std::vector<std::vector<double>>& vrows,
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

ref::AttentionResult direct(const Problem& P, int64_t kv_begin = 0, int64_t kv_end = std::numeric_limits<int64_t>::max(),
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

bool close(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= tol * (1.0 + std::abs(want));
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!close(got[i], want[i], tol) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", want " << want[i];
  EXPECT_EQ(bad, 0) << what << ": " << bad << " mismatches";
}

void expect_result(const ref::AttentionResult& got, const ref::AttentionResult& want, double tol, const std::string& what) {
  expect_close(got.out, want.out, tol, what + ".out");
  expect_close(got.lse, want.lse, tol, what + ".lse");
}

void expect_all_finite(const ref::AttentionResult& r, const std::string& what) {
  size_t bad = 0;
  for (double x : r.out) bad += !std::isfinite(x);
  EXPECT_EQ(bad, 0u) << what << ": non-finite outputs";
}

std::string trace(uint32_t seed) { return "seed=" + std::to_string(seed); }

// Replaces the K and V rows of key j of sequence b (kv head kvh, or every kv head when kvh < 0) with fresh
// values, runs the reference, restores the cache, and returns for each (token, head) whether out or lse changed.
// Outputs that did not change must be bit-identical (checked by the caller through the returned flags).
std::vector<char> moved_by_key(Problem& P, int b, int j, int kvh_only, const ref::AttentionResult& base) {
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

// ---------------------------------------------------------------------------------------------
// basic identities
// ---------------------------------------------------------------------------------------------

TEST(ReferenceUnified, OneKeyGivesItsValueRowAndItsLogit) {
  for (uint32_t seed : {11u, 12u}) {
    SCOPED_TRACE(trace(seed));
    Spec s;
    s.q_lens = {1, 1, 1};
    s.kv_lens = {1, 1, 1};
    s.nqh = 4;
    s.nkvh = 2;
    s.hs = 64;
    s.bs = seed == 11u ? 1 : 5;
    Problem P(s, seed);
    const ref::AttentionResult r = ref::unified_attention(P.p);
    for (int t = 0; t < P.T; ++t)
      for (int h = 0; h < s.nqh; ++h) {
        const int kvh = h / 2;
        double dot = 0.0;
        for (int d = 0; d < s.hs; ++d) {
          dot += P.qv(t, h, d) * P.kv(false, t, 0, kvh, d);
          EXPECT_EQ(r.out[size_t((t * s.nqh + h) * s.hs + d)], P.kv(true, t, 0, kvh, d)) << "t=" << t << " h=" << h;
        }
        EXPECT_NEAR(r.lse[size_t(h * P.T + t)], double(P.p.scale) * dot, 1e-13);
      }
  }
}

TEST(ReferenceUnified, EqualScoresGiveTheMeanOfV) {
  const uint32_t seed = 21;
  SCOPED_TRACE(trace(seed));
  Spec s;
  s.q_lens = {1};
  s.kv_lens = {7};
  s.nqh = 2;
  s.hs = 32;
  s.bs = 3;
  Problem P(s, seed);
  for (int j = 1; j < 7; ++j)  // every K row equal to row 0
    for (int d = 0; d < s.hs; ++d)
      P.set_code(false, 0, j, 0, d, P.kb.bits(size_t(P.cache_index(0, 0, 0, d))), P.kv(false, 0, 0, 0, d));
  const ref::AttentionResult r = ref::unified_attention(P.p);
  for (int h = 0; h < 2; ++h) {
    double dot = 0.0;
    for (int d = 0; d < s.hs; ++d) dot += P.qv(0, h, d) * P.kv(false, 0, 0, 0, d);
    EXPECT_NEAR(r.lse[size_t(h)], double(P.p.scale) * dot + std::log(7.0), 1e-12);
    for (int d = 0; d < s.hs; ++d) {
      double mean = 0.0;
      for (int j = 0; j < 7; ++j) mean += P.kv(true, 0, j, 0, d);
      mean /= 7.0;
      EXPECT_NEAR(r.out[size_t(h * s.hs + d)], mean, 1e-13) << "h=" << h << " d=" << d;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// masks
// ---------------------------------------------------------------------------------------------

TEST(ReferenceUnified, CausalMasksExactlyTheBottomRightTriangle) {
  const uint32_t seed = 31;
  SCOPED_TRACE(trace(seed));
  Spec s;
  s.q_lens = {4, 3, 5, 1};
  s.kv_lens = {9, 3, 12, 6};
  s.nqh = 2;
  s.hs = 16;
  s.bs = 4;
  Problem P(s, seed);
  check_dependencies(
      P,
      [&](int b, int i, int j, int) {
        const int ctx = P.kv_lens[size_t(b)] - s.q_lens[size_t(b)];
        return j <= ctx + i;
      },
      "causal");
  expect_result(ref::unified_attention(P.p), direct(P), kTol, "causal vs direct");

  P.p.causal = false;  // every query sees all kv_len keys of its sequence
  check_dependencies(P, [](int, int, int, int) { return true; }, "non-causal");
  expect_result(ref::unified_attention(P.p), direct(P), kTol, "non-causal vs direct");
}

TEST(ReferenceUnified, SlidingWindowEdges) {
  const uint32_t seed = 41;
  SCOPED_TRACE(trace(seed));
  Spec s;
  s.q_lens = {4, 2};
  s.kv_lens = {10, 7};
  s.nqh = 2;
  s.hs = 16;
  s.bs = 3;
  Problem P(s, seed);
  for (int wl : {3, 0}) {
    for (bool causal : {true, false}) {
      P.p.window_left = wl;
      P.p.causal = causal;
      const std::string what = "window_left=" + std::to_string(wl) + (causal ? " causal" : " non-causal");
      // key pos - wl is visible, pos - wl - 1 is not; causal also hides j > pos
      check_dependencies(
          P,
          [&](int b, int i, int j, int) {
            const int pos = P.kv_lens[size_t(b)] - s.q_lens[size_t(b)] + i;
            return j >= pos - wl && (!causal || j <= pos);
          },
          what);
      expect_result(ref::unified_attention(P.p), direct(P), kTol, what + " vs direct");
    }
  }
  // the two edge keys explicitly, for the last query of sequence 0 (pos 9, window 3)
  P.p.window_left = 3;
  P.p.causal = true;
  const ref::AttentionResult base = ref::unified_attention(P.p);
  const int t = 3, pos = 9;
  EXPECT_TRUE(moved_by_key(P, 0, pos - 3, -1, base)[size_t(t * 2)]);
  EXPECT_FALSE(moved_by_key(P, 0, pos - 4, -1, base)[size_t(t * 2)]);
}

// ---------------------------------------------------------------------------------------------
// sinks, ALiBi, softcap, QQ-bias
// ---------------------------------------------------------------------------------------------

TEST(ReferenceUnified, SinkLowersTheMassByTheExpectedFactor) {
  const uint32_t seed = 51;
  SCOPED_TRACE(trace(seed));
  Spec s;
  s.q_lens = {3, 1, 1};
  s.kv_lens = {8, 5, 0};  // the last sequence has no key at all
  s.nqh = 4;
  s.nkvh = 2;
  s.hs = 16;
  s.bs = 4;
  Problem P(s, seed);
  const ref::AttentionResult r0 = ref::unified_attention(P.p);
  P.enable_sinks();
  const ref::AttentionResult r1 = ref::unified_attention(P.p);
  for (int t = 0; t < P.T; ++t)
    for (int h = 0; h < s.nqh; ++h) {
      const double l0 = r0.lse[size_t(h * P.T + t)], sink = double(P.sinks[size_t(h)]);
      const double L = std::exp(l0);  // 0 for the query with no key
      const double factor = L / (L + std::exp(sink));
      EXPECT_NEAR(r1.lse[size_t(h * P.T + t)], std::log(L + std::exp(sink)), 1e-12) << "t=" << t << " h=" << h;
      for (int d = 0; d < s.hs; ++d) {
        const size_t i = size_t((t * s.nqh + h) * s.hs + d);
        EXPECT_NEAR(r1.out[i], r0.out[i] * factor, 1e-13) << "t=" << t << " h=" << h << " d=" << d;
      }
    }
  // no visible key: out 0, LSE = -inf without the sink and = sink with it
  const int t_empty = 4;
  for (int h = 0; h < s.nqh; ++h) {
    EXPECT_EQ(r0.lse[size_t(h * P.T + t_empty)], -kInf);
    EXPECT_EQ(r1.lse[size_t(h * P.T + t_empty)], double(P.sinks[size_t(h)]));
    for (int d = 0; d < s.hs; ++d) {
      EXPECT_EQ(r0.out[size_t((t_empty * s.nqh + h) * s.hs + d)], 0.0);
      EXPECT_EQ(r1.out[size_t((t_empty * s.nqh + h) * s.hs + d)], 0.0);
    }
  }
}

// One query at pos 2 over 3 keys, logits written out by hand.
struct Small {
  Problem P;
  explicit Small(uint32_t seed, int q_len = 1, int kv_len = 3)
      : P(
            [&] {
              Spec s;
              s.q_lens = {q_len};
              s.kv_lens = {kv_len};
              s.nqh = 2;
              s.nkvh = 1;
              s.hs = 8;
              s.bs = 2;
              return s;
            }(),
            seed) {}
  double dot(int t, int h, int j) const {
    double x = 0.0;
    for (int d = 0; d < 8; ++d) x += P.qv(t, h, d) * P.kv(false, 0, j, 0, d);
    return x;
  }
  std::vector<double> vrow(int j) const {
    std::vector<double> r(8);
    for (int d = 0; d < 8; ++d) r[size_t(d)] = P.kv(true, 0, j, 0, d);
    return r;
  }
};

void expect_row(const ref::AttentionResult& r, int T, int H, int D, int t, int h, const std::vector<double>& out, double lse,
                double tol, const std::string& what) {
  EXPECT_NEAR(r.lse[size_t(h * T + t)], lse, tol * (1 + std::abs(lse))) << what << " lse t=" << t << " h=" << h;
  for (int d = 0; d < D; ++d)
    EXPECT_NEAR(r.out[size_t((t * H + h) * D + d)], out[size_t(d)], tol) << what << " t=" << t << " h=" << h << " d=" << d;
}

TEST(ReferenceUnified, AlibiFormulaByHand) {
  const uint32_t seed = 61;
  SCOPED_TRACE(trace(seed));
  Small S(seed);
  S.P.enable_alibi();
  const ref::AttentionResult r = ref::unified_attention(S.P.p);
  for (int h = 0; h < 2; ++h) {
    const double sc = S.P.p.scale, m = S.P.alibi[size_t(h)];
    // pos = 2: key j gets slope * (j - 2)
    const std::vector<double> s = {sc * S.dot(0, h, 0) - 2 * m, sc * S.dot(0, h, 1) - m, sc * S.dot(0, h, 2)};
    auto [o, l] = hand_softmax(s, {S.vrow(0), S.vrow(1), S.vrow(2)}, 8, {});
    expect_row(r, 1, 2, 8, 0, h, o, l, 1e-13, "alibi");
  }
  // with a context: q_len 2, kv_len 5 -> positions 3 and 4
  Small S2(seed + 1, 2, 5);
  S2.P.enable_alibi();
  const ref::AttentionResult r2 = ref::unified_attention(S2.P.p);
  for (int i = 0; i < 2; ++i)
    for (int h = 0; h < 2; ++h) {
      const int pos = 3 + i;
      std::vector<double> s;
      std::vector<std::vector<double>> vr;
      for (int j = 0; j <= pos; ++j) {
        s.push_back(double(S2.P.p.scale) * S2.dot(i, h, j) + double(S2.P.alibi[size_t(h)]) * (j - pos));
        vr.push_back(S2.vrow(j));
      }
      auto [o, l] = hand_softmax(s, vr, 8, {});
      expect_row(r2, 2, 2, 8, i, h, o, l, 1e-13, "alibi with context");
    }
}

TEST(ReferenceUnified, SoftcapFormulaByHandAndBeforeAlibi) {
  const uint32_t seed = 71;
  SCOPED_TRACE(trace(seed));
  Small S(seed);
  S.P.p.softcap = 0.7f;  // small, so tanh bends the logits a lot
  const double c = 0.7f;
  const ref::AttentionResult r = ref::unified_attention(S.P.p);
  S.P.enable_alibi();
  const ref::AttentionResult ra = ref::unified_attention(S.P.p);
  for (int h = 0; h < 2; ++h) {
    const double sc = S.P.p.scale, m = S.P.alibi[size_t(h)];
    std::vector<double> s, sa, wrong;
    for (int j = 0; j < 3; ++j) {
      const double x = sc * S.dot(0, h, j);
      s.push_back(c * std::tanh(x / c));
      sa.push_back(c * std::tanh(x / c) + m * (j - 2));
      wrong.push_back(c * std::tanh((x + m * (j - 2)) / c));  // the other order
    }
    const std::vector<std::vector<double>> vr = {S.vrow(0), S.vrow(1), S.vrow(2)};
    auto [o, l] = hand_softmax(s, vr, 8, {});
    expect_row(r, 1, 2, 8, 0, h, o, l, 1e-13, "softcap");
    auto [oa, la] = hand_softmax(sa, vr, 8, {});
    expect_row(ra, 1, 2, 8, 0, h, oa, la, 1e-13, "softcap then alibi");
    auto [ow, lw] = hand_softmax(wrong, vr, 8, {});
    EXPECT_GT(std::abs(lw - la), 1e-6) << "the test cannot tell the two orders apart";
  }
}

TEST(ReferenceUnified, QqBiasOnTheNewTokensOnly) {
  const uint32_t seed = 81;
  SCOPED_TRACE(trace(seed));
  Small S(seed, 3, 7);  // context 4, new tokens are keys 4, 5, 6
  S.P.enable_qq_bias(3);
  S.P.qq[size_t(2 * 3 + 1)] = 40.f;  // query 2 -> key 5 dominates
  const ref::AttentionResult r = ref::unified_attention(S.P.p);
  for (int i = 0; i < 3; ++i)
    for (int h = 0; h < 2; ++h) {
      std::vector<double> s;
      std::vector<std::vector<double>> vr;
      for (int j = 0; j <= 4 + i; ++j) {
        double x = double(S.P.p.scale) * S.dot(i, h, j);
        if (j >= 4) x += double(S.P.qq[size_t(i * 3 + (j - 4))]);
        s.push_back(x);
        vr.push_back(S.vrow(j));
      }
      auto [o, l] = hand_softmax(s, vr, 8, {});
      expect_row(r, 3, 2, 8, i, h, o, l, 1e-13, "qq-bias");
    }
  for (int h = 0; h < 2; ++h)  // the chosen key carries (almost) all the weight
    for (int d = 0; d < 8; ++d) EXPECT_NEAR(r.out[size_t((2 * 2 + h) * 8 + d)], S.vrow(5)[size_t(d)], 1e-12);

  // a stride shorter than q_len: columns r >= stride get no bias
  Small S2(seed + 1, 3, 7);
  S2.P.enable_qq_bias(2);
  const ref::AttentionResult r2 = ref::unified_attention(S2.P.p);
  for (int i = 0; i < 3; ++i)
    for (int h = 0; h < 2; ++h) {
      std::vector<double> s;
      std::vector<std::vector<double>> vr;
      for (int j = 0; j <= 4 + i; ++j) {
        double x = double(S2.P.p.scale) * S2.dot(i, h, j);
        if (j == 4 || j == 5) x += double(S2.P.qq[size_t(i * 2 + (j - 4))]);
        s.push_back(x);
        vr.push_back(S2.vrow(j));
      }
      auto [o, l] = hand_softmax(s, vr, 8, {});
      expect_row(r2, 3, 2, 8, i, h, o, l, 1e-13, "qq-bias stride 2");
    }
}

// ---------------------------------------------------------------------------------------------
// fp8 KV
// ---------------------------------------------------------------------------------------------

void check_fp8_known_codes(DType kv, KvScaleMode mode, uint32_t seed) {
  SCOPED_TRACE(trace(seed) + " " + std::string(hipattn::dtype_name(kv)) + (mode == KvScaleMode::per_tensor ? " per_tensor" : " per_token_head"));
  const CodeTable& table = kv == DType::fp8_e4m3fn ? kFnCodes : kFnuzCodes;
  // the hand-decoded table agrees with the type (a sanity check of the test itself)
  for (const auto& [code, value] : table) ASSERT_EQ(decode(kv, code), value) << "code " << int(code);
  Spec s;
  s.q_lens = {2, 1};
  s.kv_lens = {9, 1};
  s.nqh = 4;
  s.nkvh = 2;
  s.hs = 32;
  s.bs = 4;
  s.kv_dtype = kv;
  s.scale_mode = mode;
  s.fp8_codes = &table;
  s.hnd = mode == KvScaleMode::per_token_head;
  Problem P(s, seed);
  expect_result(ref::unified_attention(P.p), direct(P), kTol, "fp8 vs direct");
  // sequence 1 has one key: its output is the V codes' values times the V scale, exactly
  const ref::AttentionResult r = ref::unified_attention(P.p);
  const int t = 2;
  for (int h = 0; h < 4; ++h) {
    const int kvh = h / 2;
    const double vsc = mode == KvScaleMode::per_tensor ? double(P.vscale[0]) : double(P.vscale[size_t(P.scale_index(1, 0, kvh))]);
    const double ksc = mode == KvScaleMode::per_tensor ? double(P.kscale[0]) : double(P.kscale[size_t(P.scale_index(1, 0, kvh))]);
    double dot = 0.0;
    for (int d = 0; d < 32; ++d) {
      const int64_t ci = P.cache_index(1, 0, kvh, d);
      double kval = 0, vval = 0;
      for (const auto& [code, value] : table) {
        if (code == P.kb.bits(size_t(ci))) kval = value;
        if (code == P.vb.bits(size_t(ci))) vval = value;
      }
      dot += P.qv(t, h, d) * kval * ksc;
      EXPECT_EQ(r.out[size_t((t * 4 + h) * 32 + d)], vval * vsc) << "h=" << h << " d=" << d;
    }
    EXPECT_NEAR(r.lse[size_t(h * P.T + t)], double(P.p.scale) * dot, 1e-13);
  }
}

TEST(ReferenceUnified, Fp8PerTensorScaleWithKnownCodes) {
  check_fp8_known_codes(DType::fp8_e4m3fn, KvScaleMode::per_tensor, 91);
  check_fp8_known_codes(DType::fp8_e4m3fnuz, KvScaleMode::per_tensor, 92);
}

TEST(ReferenceUnified, Fp8PerTokenHeadScaleWithKnownCodes) {
  check_fp8_known_codes(DType::fp8_e4m3fn, KvScaleMode::per_token_head, 93);
  check_fp8_known_codes(DType::fp8_e4m3fnuz, KvScaleMode::per_token_head, 94);
}

TEST(ReferenceUnified, Fp8PerTokenHeadScalesAreReadPerSlotAndHead) {
  // swap the scales of two (slot, head) entries: the result must follow the scale, not the position
  const uint32_t seed = 95;
  SCOPED_TRACE(trace(seed));
  Spec s;
  s.q_lens = {1};
  s.kv_lens = {2};
  s.nqh = 2;
  s.nkvh = 2;
  s.hs = 16;
  s.bs = 2;
  s.kv_dtype = DType::fp8_e4m3fn;
  s.scale_mode = KvScaleMode::per_token_head;
  s.fp8_codes = &kFnCodes;
  Problem P(s, seed);
  const ref::AttentionResult r0 = ref::unified_attention(P.p);
  expect_result(r0, direct(P), kTol, "per-token-head vs direct");
  // key 1, kv head 1: double its V scale -> the logical V doubles, only q head 1 moves
  const size_t si = size_t(P.scale_index(0, 1, 1));
  P.vscale[si] *= 2.f;
  for (int d = 0; d < 16; ++d) P.v[0][P.logical_index(1, 1, d)] *= 2.0;
  const ref::AttentionResult r1 = ref::unified_attention(P.p);
  expect_result(r1, direct(P), kTol, "after the scale change");
  for (int d = 0; d < 16; ++d) {
    EXPECT_EQ(r1.out[size_t(d)], r0.out[size_t(d)]);               // head 0 (kv head 0) unchanged
    EXPECT_NE(r1.out[size_t(16 + d)], r0.out[size_t(16 + d)]);     // head 1 changed
  }
}

// ---------------------------------------------------------------------------------------------
// poison: NaN / Inf where no visible key lives
// ---------------------------------------------------------------------------------------------

TEST(ReferenceUnified, NanAndInfOutsideTheVisibleKeysNeverPoison) {
  uint32_t seed = 100;
  for (DType kv : {DType::f16, DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + " kv=" + std::string(hipattn::dtype_name(kv)));
    Spec s;
    s.q_lens = {2, 3, 1};
    s.kv_lens = {12, 6, 5};  // 12 and 5 leave slots past kv_len in the last block (bs 4); padded table columns
    s.nqh = 4;
    s.nkvh = 2;
    s.hs = 16;
    s.bs = 4;
    s.kv_dtype = kv;
    s.scale_mode = KvScaleMode::per_token_head;  // unused scale entries are NaN too
    s.head_pad = 3;
    s.block_pad = 5;
    s.q_dtype = kv == DType::bf16 ? DType::bf16 : DType::f16;
    Problem P(s, seed);
    const ref::AttentionResult clean = ref::unified_attention(P.p);
    expect_all_finite(clean, "NaN in unused storage");
    expect_result(clean, direct(P), kTol, "unused storage");

    // window-masked keys of sequence 0 (pos 10, 11; window 2 -> keys < 8 masked for both): NaN and Inf
    P.p.window_left = 2;
    const ref::AttentionResult w0 = ref::unified_attention(P.p);
    for (int j = 0; j < 8; ++j)
      for (int kvh = 0; kvh < 2; ++kvh)
        for (int d = 0; d < 16; ++d) {
          P.poison(false, 0, j, kvh, d, (j + d) % 2 == 0);
          P.poison(true, 0, j, kvh, d, (j + d) % 2 == 1);
        }
    const ref::AttentionResult w1 = ref::unified_attention(P.p);
    expect_all_finite(w1, "window-masked poison");
    expect_result(w1, w0, 0.0, "window-masked poison changes nothing");
    P.p.window_left = -1;

    // causal-future key 5 of sequence 1 (kv 6, q 3: positions 3, 4, 5): V NaN -> queries 0, 1 unchanged,
    // query 2 (which sees key 5) becomes NaN, which proves the poison is really there
    for (int kvh = 0; kvh < 2; ++kvh)
      for (int d = 0; d < 16; ++d) P.poison(true, 1, 5, kvh, d, true);
    const ref::AttentionResult c1 = ref::unified_attention(P.p);
    for (int i = 0; i < 3; ++i)
      for (int h = 0; h < 4; ++h) {
        const int t = 2 + i;
        for (int d = 0; d < 16; ++d) {
          const size_t oi = size_t((t * 4 + h) * 16 + d);
          if (i < 2) {
            EXPECT_EQ(c1.out[oi], clean.out[oi]) << "i=" << i << " h=" << h << " d=" << d;
          } else {
            EXPECT_TRUE(std::isnan(c1.out[oi])) << "query 2 sees key 5";
          }
        }
      }
  }
}

// ---------------------------------------------------------------------------------------------
// merge of partial states
// ---------------------------------------------------------------------------------------------

TEST(ReferenceMerge, TwoHalvesOfTheKvRangeEqualTheWhole) {
  for (uint32_t seed : {201u, 202u, 203u}) {
    SCOPED_TRACE(trace(seed));
    Spec s;
    s.q_lens = {3, 1, 4};
    s.kv_lens = {20, 13, 4};
    s.nqh = 4;
    s.nkvh = 2;
    s.hs = 16;
    s.bs = seed == 202u ? 1 : 5;
    Problem P(s, seed);
    P.enable_sinks();
    P.enable_alibi();
    P.enable_qq_bias(4);
    P.p.softcap = seed == 203u ? 0.f : 5.f;
    P.p.window_left = seed == 201u ? 9 : -1;
    const ref::AttentionResult whole = ref::unified_attention(P.p);
    expect_result(whole, direct(P), kTol, "whole vs direct");
    std::vector<int> cuts = {0, 1, 20};
    for (int n = 0; n < 12; ++n) cuts.push_back(std::uniform_int_distribution<int>(0, 20)(P.rng));
    for (int c : cuts) {
      SCOPED_TRACE("cut=" + std::to_string(c));
      const std::vector<ref::AttentionResult> parts = {ref::unified_attention_range(P.p, 0, c),
                                                       ref::unified_attention_range(P.p, c, 20)};
      expect_result(parts[0], direct(P, 0, c, false), kTol, "range [0, c) vs direct");
      const ref::AttentionResult merged = ref::merge_results(parts, P.T, s.nqh, s.hs, P.p.sinks);
      expect_result(merged, whole, kTol, "merged halves");
    }
    // three random pieces
    for (int n = 0; n < 6; ++n) {
      int a = std::uniform_int_distribution<int>(0, 20)(P.rng), b = std::uniform_int_distribution<int>(0, 20)(P.rng);
      if (a > b) std::swap(a, b);
      SCOPED_TRACE("cuts=" + std::to_string(a) + "," + std::to_string(b));
      const std::vector<ref::AttentionResult> parts = {ref::unified_attention_range(P.p, 0, a),
                                                       ref::unified_attention_range(P.p, a, b),
                                                       ref::unified_attention_range(P.p, b, 20)};
      expect_result(ref::merge_results(parts, P.T, s.nqh, s.hs, P.p.sinks), whole, kTol, "merged thirds");
    }
  }
}

TEST(ReferenceMerge, FormulaByHandWithTheSinkOnce) {
  std::mt19937 g(211);
  SCOPED_TRACE(trace(211));
  ref::PartialState a{{}, 0.4}, b{{}, -1.3};
  for (int d = 0; d < 6; ++d) {
    a.o.push_back(uniform(g, -2, 2));
    b.o.push_back(uniform(g, -2, 2));
  }
  const double sink = 0.2;
  const std::vector<ref::PartialState> parts = {a, b};
  std::vector<double> o;
  double lse = 0;
  ref::merge_states(parts, o, lse, sink);
  const double ea = std::exp(0.4), eb = std::exp(-1.3), es = std::exp(0.2);
  ASSERT_EQ(o.size(), 6u);
  EXPECT_NEAR(lse, std::log(ea + eb + es), 1e-14);
  for (int d = 0; d < 6; ++d) EXPECT_NEAR(o[size_t(d)], (ea * a.o[size_t(d)] + eb * b.o[size_t(d)]) / (ea + eb + es), 1e-14);
  // without a sink
  ref::merge_states(parts, o, lse);
  EXPECT_NEAR(lse, std::log(ea + eb), 1e-14);
  for (int d = 0; d < 6; ++d) EXPECT_NEAR(o[size_t(d)], (ea * a.o[size_t(d)] + eb * b.o[size_t(d)]) / (ea + eb), 1e-14);
}

TEST(ReferenceMerge, EmptyPartitionIsIgnored) {
  std::mt19937 g(221);
  SCOPED_TRACE(trace(221));
  ref::PartialState a{{}, 0.3};
  ref::PartialState empty{std::vector<double>(5, std::nan("")), -kInf};  // its o must never be read
  for (int d = 0; d < 5; ++d) a.o.push_back(uniform(g, -2, 2));
  for (const auto& parts : {std::vector<ref::PartialState>{a, empty}, std::vector<ref::PartialState>{empty, a},
                            std::vector<ref::PartialState>{empty, a, empty}}) {
    std::vector<double> o;
    double lse = 0;
    ref::merge_states(parts, o, lse);
    EXPECT_EQ(lse, 0.3);
    EXPECT_EQ(o, a.o);
  }
  // a KV range past every key gives an all-empty partial state, and merging it changes nothing
  Spec s;
  s.q_lens = {2, 1};
  s.kv_lens = {6, 3};
  Problem P(s, 222);
  P.enable_sinks();
  const ref::AttentionResult past = ref::unified_attention_range(P.p, 6, 50);
  for (double x : past.lse) EXPECT_EQ(x, -kInf);
  for (double x : past.out) EXPECT_EQ(x, 0.0);
  const ref::AttentionResult whole = ref::unified_attention(P.p);
  const std::vector<ref::AttentionResult> parts = {past, ref::unified_attention_range(P.p, 0, 6), past};
  expect_result(ref::merge_results(parts, P.T, 2, 16, P.p.sinks), whole, kTol, "with empty parts");
}

TEST(ReferenceMerge, AllEmptyGivesZerosAndMinusInfinity) {
  const ref::PartialState e1{{1.0, std::nan(""), 3.0}, -kInf}, e2{{4.0, 5.0, kInf}, -kInf};
  const std::vector<ref::PartialState> parts = {e1, e2};
  std::vector<double> o;
  double lse = 0;
  ref::merge_states(parts, o, lse);
  EXPECT_EQ(lse, -kInf);
  EXPECT_EQ(o, std::vector<double>(3, 0.0));
  ref::merge_states(parts, o, lse, 0.7);  // with a sink: output 0, lse = sink
  EXPECT_EQ(lse, 0.7);
  EXPECT_EQ(o, std::vector<double>(3, 0.0));
  std::vector<double> o2(4, 9.0);  // no parts at all: keeps its size, zero-filled
  ref::merge_states({}, o2, lse);
  EXPECT_EQ(lse, -kInf);
  EXPECT_EQ(o2, std::vector<double>(4, 0.0));
}

// ---------------------------------------------------------------------------------------------
// heads, layouts, output writing
// ---------------------------------------------------------------------------------------------

TEST(ReferenceUnified, GqaQueryHeadUsesKvHeadHOverGroup) {
  uint32_t seed = 300;
  for (auto [nqh, nkvh] : {std::pair{6, 2}, std::pair{4, 1}, std::pair{3, 3}}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + " heads " + std::to_string(nqh) + "/" + std::to_string(nkvh));
    Spec s;
    s.q_lens = {2, 1};
    s.kv_lens = {5, 3};
    s.nqh = nqh;
    s.nkvh = nkvh;
    s.hs = 8;
    s.bs = 2;
    Problem P(s, seed);
    check_dependencies(
        P,
        [&](int b, int i, int j, int) { return j <= P.kv_lens[size_t(b)] - s.q_lens[size_t(b)] + i; },
        "gqa");  // check_dependencies itself requires h / group == the perturbed kv head
    expect_result(ref::unified_attention(P.p), direct(P), kTol, "gqa vs direct");
  }
}

TEST(ReferenceUnified, NhdAndHndStridesGiveTheSameResult) {
  for (uint32_t seed : {311u, 312u}) {
    SCOPED_TRACE(trace(seed));
    Spec s;
    s.q_lens = {3, 2};
    s.kv_lens = {11, 7};
    s.nqh = 4;
    s.nkvh = 2;
    s.hs = 16;
    s.bs = 4;
    s.kv_dtype = seed == 312u ? DType::fp8_e4m3fnuz : DType::f16;
    s.scale_mode = KvScaleMode::per_token_head;
    Problem nhd(s, seed);
    s.hnd = true;
    Problem hnd(s, seed);
    s.head_pad = 2;
    s.block_pad = 7;
    Problem hnd_padded(s, seed);
    const ref::AttentionResult a = ref::unified_attention(nhd.p);
    EXPECT_NE(nhd.p.k_stride_head, hnd.p.k_stride_head);
    EXPECT_EQ(a.out, ref::unified_attention(hnd.p).out);
    EXPECT_EQ(a.lse, ref::unified_attention(hnd.p).lse);
    EXPECT_EQ(a.out, ref::unified_attention(hnd_padded.p).out);
    EXPECT_EQ(a.lse, ref::unified_attention(hnd_padded.p).lse);
    expect_result(a, direct(nhd), kTol, "nhd vs direct");
  }
}

TEST(ReferenceUnified, WritesFp16AndBf16OutputsAndLse) {
  uint32_t seed = 320;
  for (DType dt : {DType::f16, DType::bf16}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + " " + std::string(hipattn::dtype_name(dt)));
    Spec s;
    s.q_lens = {2, 1};
    s.kv_lens = {5, 0};  // the second query sees nothing: out 0, lse -inf
    s.nqh = 2;
    s.hs = 16;
    s.q_dtype = dt;
    s.kv_dtype = dt;
    Problem P(s, seed);
    const int64_t ost_h = 16 + 2, ost_t = 2 * ost_h + 1, lst = P.T + 3;
    const uint32_t sentinel = 0x1234u;
    Buffer out(dt, size_t(P.T * ost_t));
    for (size_t i = 0; i < out.size(); ++i) out.set_bits(i, sentinel);
    std::vector<float> lse(size_t(2 * lst), 12345.f);
    P.p.out = out.data();
    P.p.o_stride_token = ost_t;
    P.p.o_stride_head = ost_h;
    P.p.lse = lse.data();
    P.p.lse_stride_head = lst;
    const ref::AttentionResult r = ref::unified_attention(P.p);
    ref::write_outputs(r, P.p);
    const double rel = dt == DType::f16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);  // half an ulp
    std::vector<char> written(out.size(), 0);
    for (int t = 0; t < P.T; ++t)
      for (int h = 0; h < 2; ++h) {
        for (int d = 0; d < 16; ++d) {
          const size_t oi = size_t(t * ost_t + h * ost_h + d);
          written[oi] = 1;
          const double x = r.out[size_t((t * 2 + h) * 16 + d)];
          EXPECT_EQ(out.bits(oi), encode(dt, float(x))) << "t=" << t << " h=" << h << " d=" << d;
          EXPECT_LE(std::abs(decode(dt, out.bits(oi)) - x), rel * std::abs(x) + 1e-30);
        }
        EXPECT_EQ(lse[size_t(h * lst + t)], float(r.lse[size_t(h * P.T + t)]));
      }
    for (int h = 0; h < 2; ++h) EXPECT_EQ(lse[size_t(h * lst + 2)], -std::numeric_limits<float>::infinity());
    for (size_t i = 0; i < out.size(); ++i)
      if (!written[i]) {
        EXPECT_EQ(out.bits(i), sentinel) << "padding element " << i << " overwritten";
      }
    for (int h = 0; h < 2; ++h)
      for (int64_t t = P.T; t < lst; ++t) EXPECT_EQ(lse[size_t(h * lst + t)], 12345.f);
  }
}

TEST(ReferenceUnified, RandomProblemsWithEveryFeatureMatchTheDirectFormula) {
  for (uint32_t seed = 401; seed <= 408; ++seed) {
    std::mt19937 g(seed);
    SCOPED_TRACE(trace(seed));
    Spec s;
    const int B = std::uniform_int_distribution<int>(1, 4)(g);
    s.q_lens.clear();
    s.kv_lens.clear();
    for (int b = 0; b < B; ++b) {
      const int ql = std::uniform_int_distribution<int>(1, 5)(g);
      s.q_lens.push_back(ql);
      s.kv_lens.push_back(ql + std::uniform_int_distribution<int>(0, 17)(g));
    }
    const int groups[] = {1, 2, 4};
    s.nkvh = std::uniform_int_distribution<int>(1, 2)(g);
    s.nqh = s.nkvh * groups[std::uniform_int_distribution<int>(0, 2)(g)];
    s.hs = seed % 2 ? 24 : 32;
    const int block_sizes[] = {1, 3, 16};
    s.bs = block_sizes[seed % 3];
    const DType kvs[] = {DType::f16, DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz};
    s.kv_dtype = kvs[seed % 4];
    s.q_dtype = s.kv_dtype == DType::bf16 ? DType::bf16 : DType::f16;
    s.scale_mode = seed % 2 ? KvScaleMode::per_tensor : KvScaleMode::per_token_head;
    s.hnd = seed % 3 == 0;
    Problem P(s, seed);
    P.p.causal = seed != 405;
    P.p.window_left = seed % 4 == 1 ? 4 : -1;
    P.p.softcap = seed % 3 == 1 ? 3.f : 0.f;
    if (seed % 2) P.enable_sinks();
    if (seed % 3 != 2) P.enable_alibi();
    if (seed % 4 != 3) P.enable_qq_bias(P.p.max_seqlen_q);
    const ref::AttentionResult r = ref::unified_attention(P.p);
    expect_all_finite(r, "random");
    expect_result(r, direct(P), kTol, "random vs direct");
  }
}

// ---------------------------------------------------------------------------------------------
// MLA decode
// ---------------------------------------------------------------------------------------------

struct MlaProblem {
  static constexpr int DK = 576, DV = 512;
  int B, qlen, H, ps;
  DType q_dtype, kv_dtype;
  std::vector<int32_t> kv_lens, block_table;
  Buffer qb, kvb;
  std::vector<double> q;                 // [B][qlen][H][576]
  std::vector<std::vector<double>> kv;   // [b] -> [kv_len][576] (dequantized)
  float kv_scale = 1.f;
  std::mt19937 rng;
  ref::MlaDecodeParams p;

  MlaProblem(std::vector<int> lens, int q_len, int heads, int page, DType qd, DType kvd, uint32_t seed)
      : B(int(lens.size())), qlen(q_len), H(heads), ps(page), q_dtype(qd), kv_dtype(kvd),
        kv_lens(lens.begin(), lens.end()), rng(seed) {
    int owned = 0, max_pages = 0;
    std::vector<int> np(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b) {
      np[size_t(b)] = (kv_lens[size_t(b)] + ps - 1) / ps;
      owned += np[size_t(b)];
      max_pages = std::max(max_pages, np[size_t(b)]);
    }
    max_pages += 1;
    std::vector<int> phys(static_cast<size_t>(owned));
    std::iota(phys.begin(), phys.end(), 1);
    std::shuffle(phys.begin(), phys.end(), rng);
    block_table.assign(size_t(B * max_pages), 0);  // page 0: NaN, the padded entries
    for (int b = 0, n = 0; b < B; ++b)
      for (int lp = 0; lp < np[size_t(b)]; ++lp) block_table[size_t(b * max_pages + lp)] = phys[size_t(n++)];
    const int64_t slot_stride = DK + 8, page_stride = ps * slot_stride + 3;
    const int64_t qh = DK + 4;
    qb = Buffer(qd, size_t(B * qlen * H * qh));
    kvb = Buffer(kvd, size_t((owned + 2) * page_stride));
    q.assign(size_t(B * qlen * H * DK), 0.0);
    for (size_t t = 0; t < size_t(B * qlen * H); ++t)
      for (int d = 0; d < DK; ++d) {
        const double x = grid_value(rng, qd);
        qb.set_bits(t * size_t(qh) + size_t(d), encode(qd, float(x)));
        q[t * DK + size_t(d)] = x;
      }
    if (hipattn::is_fp8(kvd)) kv_scale = float(uniform(rng, 0.25, 2.0));
    kv.resize(size_t(B));
    for (int b = 0; b < B; ++b) {
      kv[size_t(b)].assign(size_t(kv_lens[size_t(b)] * DK), 0.0);
      for (int j = 0; j < kv_lens[size_t(b)]; ++j)
        for (int d = 0; d < DK; ++d) {
          const double x = grid_value(rng, kvd);
          const int64_t page = block_table[size_t(b * max_pages + j / ps)];
          kvb.set_bits(size_t(page * page_stride + (j % ps) * slot_stride + d), encode(kvd, float(x)));
          kv[size_t(b)][size_t(j * DK + d)] = x * (hipattn::is_fp8(kvd) ? double(kv_scale) : 1.0);
        }
    }
    p.q = qb.data();
    p.q_dtype = qd;
    p.q_stride_head = qh;
    p.q_stride_token = H * qh;
    p.q_stride_batch = qlen * H * qh;
    p.kv_cache = kvb.data();
    p.kv_dtype = kvd;
    p.kv_stride_page = page_stride;
    p.kv_stride_slot = slot_stride;
    p.num_pages = owned + 2;
    p.page_size = ps;
    p.kv_scale = hipattn::is_fp8(kvd) ? &kv_scale : nullptr;
    p.block_table = block_table.data();
    p.block_table_stride = max_pages;
    p.max_pages = max_pages;
    p.seq_lens_k = kv_lens.data();
    p.batch = B;
    p.q_len = qlen;
    p.num_heads = H;
    p.scale = float(1.0 / std::sqrt(192.0));
  }
  MlaProblem(const MlaProblem&) = delete;

  // The direct loop: query (b, i, h) over keys j <= kv_len - q_len + i, V = the first 512 dims.
  ref::AttentionResult direct() const {
    const int T = B * qlen;
    ref::AttentionResult r;
    r.out.assign(size_t(T * H * DV), 0.0);
    r.lse.assign(size_t(H * T), 0.0);
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < qlen; ++i)
        for (int h = 0; h < H; ++h) {
          const int t = b * qlen + i;
          std::vector<double> s;
          std::vector<std::vector<double>> vr;
          for (int j = 0; j < kv_lens[size_t(b)]; ++j) {
            if (j > kv_lens[size_t(b)] - qlen + i) continue;
            double dot = 0.0;
            for (int d = 0; d < DK; ++d) dot += q[size_t((t * H + h) * DK + d)] * kv[size_t(b)][size_t(j * DK + d)];
            s.push_back(double(p.scale) * dot);
            vr.emplace_back(kv[size_t(b)].begin() + j * DK, kv[size_t(b)].begin() + j * DK + DV);
          }
          auto [o, l] = hand_softmax(s, vr, DV, {});
          std::copy(o.begin(), o.end(), r.out.begin() + (t * H + h) * DV);
          r.lse[size_t(h * T + t)] = l;
        }
    return r;
  }
};

TEST(ReferenceMla, MatchesTheDirectLoopAndTheUnifiedReference) {
  uint32_t seed = 500;
  for (DType kvd : {DType::bf16, DType::f16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz}) {
    ++seed;
    SCOPED_TRACE(trace(seed) + " kv=" + std::string(hipattn::dtype_name(kvd)));
    const DType qd = kvd == DType::f16 ? DType::f16 : DType::bf16;
    const int qlen = seed % 2 ? 2 : 1;
    MlaProblem M({9, 2, 15}, qlen, 4, 7, qd, kvd, seed);
    const ref::AttentionResult r = ref::mla_decode(M.p);
    expect_all_finite(r, "mla");
    expect_result(r, M.direct(), kTol, "mla vs direct loop");

    // the same problem as unified attention: head_size 576, one kv head, K and V the same cache
    const int T = M.B * qlen;
    std::vector<int32_t> cu;
    for (int b = 0; b <= M.B; ++b) cu.push_back(b * qlen);
    UnifiedAttentionParams u;
    u.q = M.p.q;
    u.q_dtype = qd;
    u.q_stride_token = M.p.q_stride_token;
    u.q_stride_head = M.p.q_stride_head;
    u.k_cache = u.v_cache = M.p.kv_cache;
    u.kv_dtype = kvd;
    u.k_stride_block = u.v_stride_block = M.p.kv_stride_page;
    u.k_stride_slot = u.v_stride_slot = M.p.kv_stride_slot;
    u.k_stride_head = u.v_stride_head = 0;
    u.num_blocks = M.p.num_pages;
    u.block_size = M.p.page_size;
    u.kv_scale_mode = hipattn::is_fp8(kvd) ? KvScaleMode::per_tensor : KvScaleMode::none;
    u.k_scale = u.v_scale = M.p.kv_scale;
    u.block_table = M.p.block_table;
    u.block_table_stride = M.p.block_table_stride;
    u.max_blocks_per_seq = M.p.max_pages;
    u.cu_seqlens_q = cu.data();
    u.seq_lens_k = M.p.seq_lens_k;
    u.num_seqs = M.B;
    u.num_tokens = T;
    u.max_seqlen_q = qlen;
    u.max_seqlen_k = 15;
    u.num_q_heads = 4;
    u.num_kv_heads = 1;
    u.head_size = 576;
    u.scale = M.p.scale;
    u.causal = true;
    const ref::AttentionResult ur = ref::unified_attention(u);
    ref::AttentionResult first512;
    first512.lse = ur.lse;
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < 4; ++h)
        first512.out.insert(first512.out.end(), ur.out.begin() + (t * 4 + h) * 576, ur.out.begin() + (t * 4 + h) * 576 + 512);
    expect_result(r, first512, kTol, "mla vs unified");

    // output writing by strides
    const int64_t oh = 512 + 2, ot = 4 * oh, ob = qlen * ot + 5;
    Buffer out(qd, size_t(M.B * ob));
    std::vector<float> lse(size_t(M.B * qlen * 4 * 2), 777.f);  // [batch][q_len][heads] with head stride 2
    M.p.out = out.data();
    M.p.o_stride_batch = ob;
    M.p.o_stride_token = ot;
    M.p.o_stride_head = oh;
    M.p.lse = lse.data();
    M.p.lse_stride_batch = qlen * 8;
    M.p.lse_stride_token = 8;
    M.p.lse_stride_head = 2;
    ref::write_outputs(r, M.p);
    for (int b = 0; b < M.B; ++b)
      for (int i = 0; i < qlen; ++i)
        for (int h = 0; h < 4; ++h) {
          const int t = b * qlen + i;
          EXPECT_EQ(lse[size_t(b * qlen * 8 + i * 8 + h * 2)], float(r.lse[size_t(h * T + t)]));
          EXPECT_EQ(lse[size_t(b * qlen * 8 + i * 8 + h * 2 + 1)], 777.f);
          for (int d = 0; d < 512; d += 37)
            EXPECT_EQ(out.bits(size_t(b * ob + i * ot + h * oh + d)), encode(qd, float(r.out[size_t((t * 4 + h) * 512 + d)])));
        }
  }
}

}  // namespace
