// Parity suite of merge_attention_states (dispatch/merge_attention_states.hpp: merge_states_kernel of
// kernels/merge/merge_states.hpp) against the float64 reference merge (reference/merge.hpp), on the GPU.
//
// Problems: R partial results (O_r, LSE_r) of T tokens x H heads x D columns, from a seeded generator:
// O uniform in [-1, 1] rounded to the partials' dtype, LSE = a per-row offset + a spread x normal. Some
// parts are empty (LSE = -inf) and their O holds NaN bits; some rows have every part empty (out 0, LSE
// -inf); optionally a row carries a NaN LSE (out and LSE NaN). The tensors live in strided storage
// whose unowned elements (head, token and rank padding, gaps between rank buffers) hold NaN bits, so a
// stray read shows up; the partial layouts cover stacked [R, T, H, D], rank-interleaved [T, R, H, D]
// and separate rank buffers at a fixed distance, and the partial LSE in three dimension orders.
//
// Every launch runs over a poisoned output and LSE (0xFF bytes: NaN), is checked (the entry point's
// error, the runtime's last error, the synchronization), and then:
//   * the rows the reference computed (every row of a small problem, sampled rows of a large one) match
//     it within the output dtype's tolerance (fp32 math, then one rounding to the output dtype); NaN
//     where the reference is NaN, -inf exactly where it is -inf; all-empty rows exactly 0;
//   * the other rows are within bounds (finite, |out| <= 1, LSE within [max LSE, max LSE + log R]), so
//     every element must have been written;
//   * every element of out and lse that no (token, head) owns still holds the poison.
// The tests skip themselves, saying so, when no GPU is present; the error tests need none.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "../common/compare.hpp"
#include "../common/device_check.hpp"
#include "../common/gpu.hpp"
#include "hipattn/dispatch/merge_attention_states.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/problem/merge_rules.hpp"
#include "hipattn/reference/merge.hpp"

namespace hipattn::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A fast seeded generator (splitmix64): the large problem has 2^28 partial values.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double a, double b) { return a + (b - a) * uniform(); }
  double normal() {
    const double u = std::max(uniform(), 1e-300), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
};

// ---- elements of any of the three dtypes in raw byte storage ----

void put(std::vector<uint8_t>& b, int64_t i, DType dt, float x) {
  if (dt == DType::f32) {
    std::memcpy(&b[size_t(i) * 4], &x, 4);
  } else {
    const uint16_t h = dt == DType::bf16 ? bfloat16_t::from_float(x).bits : half_t::from_float(x).bits;
    std::memcpy(&b[size_t(i) * 2], &h, 2);
  }
}
double get(const std::vector<uint8_t>& b, int64_t i, DType dt) {
  if (dt == DType::f32) {
    float f;
    std::memcpy(&f, &b[size_t(i) * 4], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &b[size_t(i) * 2], 2);
  return dt == DType::bf16 ? double(bfloat16_t::from_bits(h).to_float()) : double(half_t::from_bits(h).to_float());
}
bool poisoned_at(const std::vector<uint8_t>& b, int64_t i, int elem_bytes) {
  for (int k = 0; k < elem_bytes; ++k)
    if (b[size_t(i) * elem_bytes + k] != 0xFF) return false;
  return true;
}

// |got - want| <= atol + rtol |want|: fp32 math (exp2 approximations, sums of R terms), then one
// rounding to the output dtype (one ulp: bf16 2^-7, fp16 2^-10 relative).
Tolerance out_tol(DType out, int ranks) {
  const double atol = 2e-5 + 6e-8 * ranks;
  if (out == DType::bf16) return {atol, 8e-3};
  if (out == DType::f16) return {atol, 1e-3};
  return {atol, 2e-5};
}
Tolerance lse_tol(int ranks) { return {2e-5 + 6e-8 * ranks, 1e-6}; }

// ---- a merge problem ----

enum class PartialOrder { stacked, interleaved };  // [R, T, H, D] or [T, R, H, D]
enum class LseOrder { rth, htr, trh };             // partial LSE dimension order, outermost first

struct MergeSpec {
  DType in = DType::bf16, out = DType::bf16;
  int R = 2, T = 5, H = 3, D = 128;
  PartialOrder order = PartialOrder::stacked;
  int head_pad = 0, token_pad = 0, rank_gap = 0;  // partial O padding (elements, multiples of 8)
  LseOrder lse_order = LseOrder::rth;
  int lse_pad = 0;                     // partial LSE padding after each inner dimension
  int o_head_pad = 0, o_token_pad = 0;  // out padding (elements, multiples of 8)
  bool out_lse = true;
  bool lse_transposed = false;  // lse out [H, T + lse_out_pad] instead of [T, H + lse_out_pad]
  int lse_out_pad = 0;
  double p_empty = 0.2;   // probability of an empty part
  int empty_every = 7;    // rows with index % empty_every == 3 have every part empty (0: none)
  int nan_every = 0;      // rows with index % nan_every == 5 carry a NaN LSE (0: none)
  double row_offset = 20;  // each row's LSEs sit around uniform(-row_offset, row_offset)
  double spread = 3;      // and spread by spread x normal
  int sample = 0;         // 0: compare every row; else this many sampled rows (and the special ones)
  uint64_t seed = 1;
};

std::string describe(const MergeSpec& s) {
  std::string r = std::string(dtype_name(s.in)) + "->" + std::string(dtype_name(s.out)) + " R" + std::to_string(s.R) +
                  " T" + std::to_string(s.T) + " H" + std::to_string(s.H) + " D" + std::to_string(s.D);
  if (s.order == PartialOrder::interleaved) r += " interleaved";
  if (s.head_pad || s.token_pad || s.rank_gap || s.lse_pad || s.o_head_pad || s.o_token_pad || s.lse_out_pad) r += " padded";
  if (s.lse_order != LseOrder::rth) r += s.lse_order == LseOrder::htr ? " lse[h,r,t]" : " lse[t,r,h]";
  if (!s.out_lse) r += " no-lse";
  if (s.lse_transposed) r += " lse-out[h,t]";
  return r + " seed " + std::to_string(s.seed);
}

struct MergeHost {
  MergeSpec s;
  int64_t po_r = 0, po_t = 0, po_h = 0, pl_r = 0, pl_t = 0, pl_h = 0, o_t = 0, o_h = 0, l_t = 0, l_h = 0;
  int64_t po_elems = 0, pl_elems = 0, o_elems = 0, l_elems = 0;
  std::vector<uint8_t> po;  // partial O (NaN bytes where no element, and in empty parts)
  std::vector<float> pl;    // partial LSE (NaN where no element)
  std::vector<uint8_t> row_empty, row_nan;  // per row t * H + h

  explicit MergeHost(const MergeSpec& spec) : s(spec) {
    const int64_t R = s.R, T = s.T, H = s.H, D = s.D;
    po_h = D + s.head_pad;
    if (s.order == PartialOrder::stacked) {
      po_t = H * po_h + s.token_pad;
      po_r = T * po_t + s.rank_gap;
    } else {
      po_r = H * po_h + s.rank_gap;
      po_t = R * po_r + s.token_pad;
    }
    po_elems = (R - 1) * po_r + (T - 1) * po_t + (H - 1) * po_h + D + 8;
    const int64_t p = s.lse_pad;
    if (s.lse_order == LseOrder::rth) pl_h = 1, pl_t = H + p, pl_r = T * pl_t + p;
    else if (s.lse_order == LseOrder::htr) pl_t = 1, pl_r = T + p, pl_h = R * pl_r + p;
    else pl_h = 1, pl_r = H + p, pl_t = R * pl_r + p;
    pl_elems = (R - 1) * pl_r + (T - 1) * pl_t + (H - 1) * pl_h + 1 + 3;
    o_h = D + s.o_head_pad;
    o_t = H * o_h + s.o_token_pad;
    o_elems = (T - 1) * o_t + (H - 1) * o_h + D + 8;
    if (s.lse_transposed) l_t = 1, l_h = T + s.lse_out_pad;
    else l_h = 1, l_t = H + s.lse_out_pad;
    l_elems = (T - 1) * l_t + (H - 1) * l_h + 1 + 3;

    const int ib = dtype_size(s.in);
    po.assign(size_t(po_elems) * ib, 0xFF);
    pl.assign(size_t(pl_elems), std::numeric_limits<float>::quiet_NaN());
    row_empty.assign(size_t(T * H), 0);
    row_nan.assign(size_t(T * H), 0);
    Rng g{s.seed * 0x2545F4914F6CDD1Dull + 7};
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t row = t * H + h;
        const bool all_empty = s.empty_every > 0 && row % s.empty_every == 3;
        const double base = g.uniform(-s.row_offset, s.row_offset);
        int nan_rank = -1;
        if (s.nan_every > 0 && row % s.nan_every == 5) nan_rank = int(g.next() % uint64_t(R));
        row_empty[size_t(row)] = all_empty && nan_rank < 0;
        row_nan[size_t(row)] = nan_rank >= 0;
        for (int64_t r = 0; r < R; ++r) {
          float l = float(base + s.spread * g.normal());
          if (all_empty || g.uniform() < s.p_empty) l = -std::numeric_limits<float>::infinity();
          if (r == nan_rank) l = std::numeric_limits<float>::quiet_NaN();
          pl[size_t(lse_index(r, t, h))] = l;
          if (!std::isfinite(l)) continue;  // an empty part's O keeps its NaN bytes
          const int64_t o = o_index(r, t, h);
          for (int64_t d = 0; d < D; ++d) put(po, o + d, s.in, float(g.uniform(-1.0, 1.0)));
        }
      }
  }

  int64_t o_index(int64_t r, int64_t t, int64_t h) const { return r * po_r + t * po_t + h * po_h; }
  int64_t lse_index(int64_t r, int64_t t, int64_t h) const { return r * pl_r + t * pl_t + h * pl_h; }

  MergeAttentionStatesParams params(const void* partial_out, const float* partial_lse, void* out, float* lse) const {
    MergeAttentionStatesParams p;
    p.partial_out = partial_out;
    p.partial_dtype = s.in;
    p.po_stride_rank = po_r;
    p.po_stride_token = po_t;
    p.po_stride_head = po_h;
    p.partial_lse = partial_lse;
    p.plse_stride_rank = pl_r;
    p.plse_stride_token = pl_t;
    p.plse_stride_head = pl_h;
    p.num_ranks = s.R;
    p.num_tokens = s.T;
    p.num_heads = s.H;
    p.head_size = s.D;
    p.out = out;
    p.out_dtype = s.out;
    p.o_stride_token = o_t;
    p.o_stride_head = o_h;
    p.lse = lse;
    p.lse_stride_token = l_t;
    p.lse_stride_head = l_h;
    return p;
  }

  // The float64 reference of row (t, h): reference::merge_states over the stored values (an empty
  // part's NaN O included: the reference must not read it either).
  void reference_row(int64_t t, int64_t h, std::vector<double>& o, double& lse) const {
    std::vector<reference::PartialState> parts(size_t(s.R));
    for (int64_t r = 0; r < s.R; ++r) {
      reference::PartialState& st = parts[size_t(r)];
      st.lse = pl[size_t(lse_index(r, t, h))];
      st.o.resize(size_t(s.D));
      const int64_t base = o_index(r, t, h);
      for (int64_t d = 0; d < s.D; ++d) st.o[size_t(d)] = get(po, base + d, s.in);
    }
    reference::merge_states(parts, o, lse);
  }
};

// The device result of one launch.
struct MergeResult {
  std::vector<uint8_t> out;
  std::vector<float> lse;  // empty without LSE output
};

// Upload, launch over a poisoned output and LSE, check the launch and the execution, download.
MergeResult run_merge(const MergeHost& h) {
  const DeviceBuffer po = DeviceBuffer::from(h.po);
  const DeviceBuffer pl = DeviceBuffer::from(h.pl);
  DeviceBuffer out = poisoned(size_t(h.o_elems) * dtype_size(h.s.out));
  DeviceBuffer lse = h.s.out_lse ? poisoned(size_t(h.l_elems) * sizeof(float)) : DeviceBuffer();
  const MergeAttentionStatesParams p = h.params(po.ptr, pl.as<const float>(), out.ptr, lse.as<float>());
  merge_attention_states(p, nullptr);
  HIPATTN_CHECK(rt::get_last_error());
  HIPATTN_CHECK(rt::device_synchronize());
  MergeResult res;
  res.out = download<uint8_t>(out);
  if (h.s.out_lse) res.lse = download<float>(lse);
  return res;
}

// Compare a result with the reference (see the top of the file); returns the number of bad elements,
// the first one described in `first_bad`.
int64_t check_result(const MergeHost& h, const MergeResult& res, std::string& first_bad) {
  const MergeSpec& s = h.s;
  const Tolerance to = out_tol(s.out, s.R), tl = lse_tol(s.R);
  const int ob = dtype_size(s.out);
  int64_t bad = 0;
  const auto fail = [&](const std::string& what) {
    if (bad++ == 0) first_bad = what;
  };
  const int64_t rows = int64_t(s.T) * s.H;
  std::set<int64_t> checked;
  if (s.sample <= 0) {
    for (int64_t i = 0; i < rows; ++i) checked.insert(i);
  } else {
    Rng g{s.seed + 99};
    for (int i = 0; i < s.sample; ++i) checked.insert(int64_t(g.next() % uint64_t(rows)));
    checked.insert(0);
    checked.insert(rows - 1);
    for (int64_t i = 0; i < rows && checked.size() < size_t(s.sample) + 64; ++i)
      if (h.row_empty[size_t(i)] || h.row_nan[size_t(i)]) checked.insert(i);
  }
  std::vector<uint8_t> owned_o(size_t(h.o_elems), 0), owned_l(size_t(h.l_elems), 0);
  std::vector<double> want;
  double want_lse = 0;
  for (int64_t t = 0; t < s.T; ++t)
    for (int64_t hd = 0; hd < s.H; ++hd) {
      const int64_t row = t * s.H + hd, ob_i = t * h.o_t + hd * h.o_h, lb_i = t * h.l_t + hd * h.l_h;
      for (int64_t d = 0; d < s.D; ++d) owned_o[size_t(ob_i + d)] = 1;
      owned_l[size_t(lb_i)] = 1;
      const std::string at = "(t " + std::to_string(t) + ", h " + std::to_string(hd) + ")";
      const double got_lse = s.out_lse ? double(res.lse[size_t(lb_i)]) : 0.0;
      if (checked.count(row)) {
        h.reference_row(t, hd, want, want_lse);
        for (int64_t d = 0; d < s.D; ++d) {
          const double got = get(res.out, ob_i + d, s.out), w = want[size_t(d)];
          const bool ok = std::isnan(w) ? std::isnan(got)
                          : h.row_empty[size_t(row)] ? got == 0.0
                          : std::isfinite(got) && std::fabs(got - w) <= to.atol + to.rtol * std::fabs(w);
          if (!ok) fail("out" + at + "[" + std::to_string(d) + "] = " + std::to_string(got) + ", want " + std::to_string(w));
        }
        if (s.out_lse) {
          const bool ok = std::isnan(want_lse)   ? std::isnan(got_lse)
                          : std::isinf(want_lse) ? got_lse == want_lse
                                                 : std::fabs(got_lse - want_lse) <= tl.atol + tl.rtol * std::fabs(want_lse);
          if (!ok) fail("lse" + at + " = " + std::to_string(got_lse) + ", want " + std::to_string(want_lse));
        }
        continue;
      }
      // Not compared: within bounds (so written), from the stored LSEs.
      double m = -kInf;
      for (int64_t r = 0; r < s.R; ++r) m = std::max(m, double(h.pl[size_t(h.lse_index(r, t, hd))]));
      const bool empty = h.row_empty[size_t(row)], nan = h.row_nan[size_t(row)];
      for (int64_t d = 0; d < s.D; ++d) {
        const double got = get(res.out, ob_i + d, s.out);
        const bool ok = nan ? std::isnan(got) : empty ? got == 0.0 : std::isfinite(got) && std::fabs(got) <= 1.0 + to.atol;
        if (!ok) fail("out" + at + "[" + std::to_string(d) + "] = " + std::to_string(got) + " (unsampled row: out of bounds)");
      }
      if (s.out_lse) {
        const bool ok = nan     ? std::isnan(got_lse)
                        : empty ? got_lse == -kInf
                                : got_lse >= m - tl.atol && got_lse <= m + std::log(double(s.R)) + tl.atol + tl.rtol * std::fabs(m);
        if (!ok) fail("lse" + at + " = " + std::to_string(got_lse) + " (unsampled row: out of bounds)");
      }
    }
  // Nothing written outside the owned elements.
  for (int64_t i = 0; i < h.o_elems; ++i)
    if (!owned_o[size_t(i)] && !poisoned_at(res.out, i, ob)) fail("out element " + std::to_string(i) + " (not owned) was written");
  if (s.out_lse)
    for (int64_t i = 0; i < h.l_elems; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &res.lse[size_t(i)], 4);
      if (!owned_l[size_t(i)] && bits != 0xFFFFFFFFu) fail("lse element " + std::to_string(i) + " (not owned) was written");
    }
  return bad;
}

// Build, run and compare one spec.
void expect_matches(const MergeSpec& s) {
  SCOPED_TRACE(describe(s));
  const MergeHost h(s);
  MergeResult res;
  ASSERT_NO_THROW(res = run_merge(h));
  std::string first;
  const int64_t bad = check_result(h, res, first);
  EXPECT_EQ(bad, 0) << describe(s) << ": " << bad << " bad elements, first " << first;
}

constexpr DType kDtypes[] = {DType::f32, DType::bf16, DType::f16};

// ---------------------------------------------------------------------------------------------
// parity
// ---------------------------------------------------------------------------------------------

TEST(MergeStates, RanksHeadSizesAndDtypes) {
  REQUIRE_GPU();
  uint64_t seed = 1;
  for (DType in : kDtypes)
    for (DType out : kDtypes)
      for (int R : {1, 2, 3, 4, 7, 8})
        for (int D : {8, 64, 72, 128, 512}) {
          MergeSpec s;
          s.in = in, s.out = out, s.R = R, s.D = D, s.T = 5, s.H = 3;
          s.seed = seed++;
          expect_matches(s);
          if (HasFatalFailure()) return;
        }
}

// Head sizes beyond 64 chunks (two chunks a thread), an odd chunk count, and the extremes.
TEST(MergeStates, EveryHeadSizeShape) {
  REQUIRE_GPU();
  uint64_t seed = 500;
  for (int D : {8, 16, 24, 40, 136, 256, 264, 520, 576, 1016, 1024})
    for (DType in : kDtypes) {
      MergeSpec s;
      s.in = in, s.out = in == DType::f32 ? DType::bf16 : DType::f32, s.R = 3, s.D = D, s.T = 4, s.H = 5;
      s.seed = seed++;
      expect_matches(s);
      if (HasFatalFailure()) return;
    }
}

// More ranks than one batch of 8 (partial last batch), up to the limit.
TEST(MergeStates, ManyRanks) {
  REQUIRE_GPU();
  uint64_t seed = 900;
  for (int R : {9, 15, 16, 17, 64, 100}) {
    MergeSpec s;
    s.R = R, s.D = R % 2 ? 64 : 128, s.in = DType::f16, s.out = DType::f32, s.T = 6, s.H = 2;
    s.seed = seed++;
    expect_matches(s);
    if (HasFatalFailure()) return;
  }
  MergeSpec s;
  s.R = kMergeMaxRanks, s.D = 64, s.in = DType::bf16, s.out = DType::f32, s.T = 2, s.H = 3, s.p_empty = 0.5;
  s.seed = seed;
  expect_matches(s);
}

// Padded and permuted layouts; the padding and the gaps between rank buffers hold NaN bits.
TEST(MergeStates, StridedLayoutsWithNaNPadding) {
  REQUIRE_GPU();
  struct Case {
    const char* name;
    void (*set)(MergeSpec&);
  };
  const Case cases[] = {
      {"stacked, padded heads and tokens", [](MergeSpec& s) { s.head_pad = 8, s.token_pad = 16, s.rank_gap = 8; }},
      {"separate rank buffers", [](MergeSpec& s) { s.rank_gap = 4096 + 24; }},
      {"rank-interleaved", [](MergeSpec& s) { s.order = PartialOrder::interleaved; }},
      {"rank-interleaved, padded", [](MergeSpec& s) { s.order = PartialOrder::interleaved, s.head_pad = 8, s.rank_gap = 8, s.token_pad = 24; }},
      {"lse [heads, ranks, tokens]", [](MergeSpec& s) { s.lse_order = LseOrder::htr, s.lse_pad = 3; }},
      {"lse [tokens, ranks, heads]", [](MergeSpec& s) { s.lse_order = LseOrder::trh, s.lse_pad = 1; }},
      {"lse [ranks, tokens, heads] padded", [](MergeSpec& s) { s.lse_pad = 5; }},
      {"out padded", [](MergeSpec& s) { s.o_head_pad = 8, s.o_token_pad = 40; }},
      {"lse out [heads, tokens] padded", [](MergeSpec& s) { s.lse_transposed = true, s.lse_out_pad = 3; }},
      {"lse out [tokens, heads] padded", [](MergeSpec& s) { s.lse_out_pad = 2; }},
      {"no lse out", [](MergeSpec& s) { s.out_lse = false; }},
      {"everything", [](MergeSpec& s) {
         s.order = PartialOrder::interleaved, s.head_pad = 16, s.rank_gap = 8, s.token_pad = 8;
         s.lse_order = LseOrder::htr, s.lse_pad = 2, s.o_head_pad = 8, s.o_token_pad = 8;
         s.lse_transposed = true, s.lse_out_pad = 1;
       }},
  };
  uint64_t seed = 1300;
  for (const Case& c : cases)
    for (DType in : kDtypes)
      for (int D : {64, 128, 256}) {
        SCOPED_TRACE(c.name);
        MergeSpec s;
        c.set(s);
        s.in = in, s.out = in == DType::bf16 ? DType::f16 : DType::bf16, s.R = 5, s.D = D, s.T = 7, s.H = 4;
        s.seed = seed++;
        expect_matches(s);
        if (HasFatalFailure()) return;
      }
}

// Empty parts get no weight and their (NaN) O is never read; all-empty rows are 0 with LSE -inf.
TEST(MergeStates, EmptyPartsAreIgnored) {
  REQUIRE_GPU();
  uint64_t seed = 1700;
  for (double p_empty : {0.5, 0.9})
    for (DType in : kDtypes)
      for (int R : {1, 2, 8, 13}) {
        MergeSpec s;
        s.in = in, s.out = DType::f32, s.R = R, s.D = 128, s.T = 9, s.H = 4, s.p_empty = p_empty, s.empty_every = 3;
        s.seed = seed++;
        expect_matches(s);
        if (HasFatalFailure()) return;
      }
  // Every row empty.
  MergeSpec s;
  s.R = 4, s.D = 64, s.T = 3, s.H = 2, s.p_empty = 1.0;
  s.seed = seed;
  expect_matches(s);
}

// A NaN LSE poisons its row (out and LSE NaN), as in the reference.
TEST(MergeStates, NaNLsePropagates) {
  REQUIRE_GPU();
  uint64_t seed = 2100;
  for (DType out : kDtypes)
    for (int R : {1, 3, 9}) {
      MergeSpec s;
      s.out = out, s.R = R, s.D = 64, s.T = 8, s.H = 3, s.nan_every = 4;
      s.seed = seed++;
      expect_matches(s);
      if (HasFatalFailure()) return;
    }
}

// LSEs far from 0 and far apart: the weights are relative to the row's maximum (no overflow; parts
// far below it underflow to no weight, as in float64 to within the tolerance).
TEST(MergeStates, ExtremeLseMagnitudes) {
  REQUIRE_GPU();
  uint64_t seed = 2500;
  for (double offset : {1000.0, 60000.0})
    for (double spread : {0.01, 40.0}) {
      MergeSpec s;
      s.in = DType::f32, s.out = DType::f32, s.R = 6, s.D = 64, s.T = 6, s.H = 3, s.row_offset = offset, s.spread = spread;
      s.seed = seed++;
      expect_matches(s);
      if (HasFatalFailure()) return;
    }
}

// The same launch twice gives the same bits (no order dependence).
TEST(MergeStates, Deterministic) {
  REQUIRE_GPU();
  MergeSpec s;
  s.R = 7, s.D = 512, s.T = 33, s.H = 5, s.in = DType::bf16, s.out = DType::bf16;
  const MergeHost h(s);
  MergeResult a, b;
  ASSERT_NO_THROW(a = run_merge(h));
  ASSERT_NO_THROW(b = run_merge(h));
  EXPECT_TRUE(a.out == b.out);
  EXPECT_EQ(std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float)), 0);
}

// 4096 tokens x 16 heads x 512 columns from 8 ranks (2^28 partial values, 512 MiB of bf16): sampled
// rows against the reference, every other row within bounds.
TEST(MergeStates, LargeSampled) {
  REQUIRE_GPU();
  MergeSpec s;
  s.in = DType::bf16, s.out = DType::bf16, s.R = 8, s.T = 4096, s.H = 16, s.D = 512;
  s.p_empty = 0.1, s.empty_every = 1001, s.sample = 768, s.seed = 4242;
  expect_matches(s);
  s.in = DType::f16, s.out = DType::f32, s.order = PartialOrder::interleaved, s.lse_order = LseOrder::trh, s.seed = 4243;
  expect_matches(s);
}

// ---------------------------------------------------------------------------------------------
// empty calls and errors
// ---------------------------------------------------------------------------------------------

// num_tokens == 0: nothing is launched, read or written (null pointers allowed).
TEST(MergeStates, NoTokensIsANoOp) {
  REQUIRE_GPU();
  MergeAttentionStatesParams p;
  p.num_ranks = 4, p.num_tokens = 0, p.num_heads = 8, p.head_size = 128;
  p.partial_dtype = DType::bf16, p.out_dtype = DType::f16;
  ASSERT_NO_THROW(merge_attention_states(p, nullptr));
  HIPATTN_CHECK(rt::get_last_error());
  HIPATTN_CHECK(rt::device_synchronize());
  // With buffers: the output keeps its poison.
  DeviceBuffer out = poisoned(4096);
  DeviceBuffer lse = poisoned(256);
  p.out = out.ptr;
  p.lse = lse.as<float>();
  p.o_stride_head = 128, p.o_stride_token = 8 * 128;
  p.lse_stride_head = 1, p.lse_stride_token = 8;
  ASSERT_NO_THROW(merge_attention_states(p, nullptr));
  HIPATTN_CHECK(rt::get_last_error());
  HIPATTN_CHECK(rt::device_synchronize());
  for (uint8_t b : download<uint8_t>(out)) ASSERT_EQ(b, 0xFF);
  for (uint8_t b : download<uint8_t>(lse)) ASSERT_EQ(b, 0xFF);
}

// Invalid params throw hipattn::Error naming the field before anything reaches the device (no GPU
// needed).
TEST(MergeStates, InvalidParamsThrowTypedErrors) {
  MergeAttentionStatesParams p;
  p.num_ranks = 2, p.num_tokens = 3, p.num_heads = 2, p.head_size = 64;
  p.partial_out = reinterpret_cast<const void*>(uintptr_t(0x10000));
  p.po_stride_head = 64, p.po_stride_token = 128, p.po_stride_rank = 384;
  p.partial_lse = reinterpret_cast<const float*>(uintptr_t(0x20000));
  p.plse_stride_head = 1, p.plse_stride_token = 2, p.plse_stride_rank = 6;
  p.out = reinterpret_cast<void*>(uintptr_t(0x30000));
  p.o_stride_head = 64, p.o_stride_token = 128;
  ASSERT_TRUE(validate(p).ok()) << validate(p).summary();
  struct Row {
    void (*mutate)(MergeAttentionStatesParams&);
    ErrorCode code;
    const char* field;
  };
  const Row rows[] = {
      {[](MergeAttentionStatesParams& q) { q.head_size = 60; }, ErrorCode::unsupported, "head_size"},
      {[](MergeAttentionStatesParams& q) { q.num_ranks = 0; }, ErrorCode::invalid_argument, "num_ranks"},
      {[](MergeAttentionStatesParams& q) { q.partial_dtype = DType::fp8_e4m3fn; }, ErrorCode::unsupported, "partial_dtype"},
      {[](MergeAttentionStatesParams& q) { q.out = nullptr; }, ErrorCode::invalid_argument, "out"},
      {[](MergeAttentionStatesParams& q) { q.po_stride_rank = 100; }, ErrorCode::invalid_argument, "po_stride_rank"},
  };
  for (const Row& row : rows) {
    MergeAttentionStatesParams q = p;
    row.mutate(q);
    try {
      merge_attention_states(q, nullptr);
      ADD_FAILURE() << row.field << ": no throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), row.code) << e.what();
      EXPECT_EQ(e.field(), row.field) << e.what();
    }
  }
}

}  // namespace
}  // namespace hipattn::testing
