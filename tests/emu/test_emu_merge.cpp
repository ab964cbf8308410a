// tests/emu/test_emu_merge.cpp: the merge of partial attention states (kernels/merge/merge_states.hpp,
// merge_states_kernel<partial dtype, out dtype>) executed on the emulator for gfx942 and gfx950 and
// compared with the float64 reference (reference::merge_states, reference/merge.hpp), row by row.
//
// The kernels come from tests/emu/kernels/merge.hip: (bf16, bf16), (f16, f16), (f32, bf16), (f32, f32).
// Each case builds a MergeAttentionStatesParams over the emulated buffers (validate(p) must accept it),
// launches the instance with the dispatcher's own arguments and launch shape
// (dispatch/merge_attention_states.hpp: make_merge_states_args, merge_states_geometry, host-visible).
// Problems are tiny but reach: 1, 2, 3, 8 and 11 ranks (11: a second, partial batch of 8 LSEs), head
// sizes 8 / 64 / 72 / 512 (1, 8, 9 and 64 threads per item; 72: blocks of 252 threads, a partial
// wave), random LSEs in [-5, 5], empty ranks (LSE -inf, their O rows NaN: never read, or ignored),
// a row where every rank is empty (out exactly 0, LSE -inf), a NaN LSE (out and LSE NaN, as the
// reference), stacked and rank-interleaved partial O with padded rank / token / head strides (NaN in
// the padding), partial LSEs stacked [R][T][H] and transposed [H][T][R] with padding, out with padded
// head and token strides, the LSE output [T][H], [H][T + pad] or absent (null), and more items than one
// block holds. Outputs are poisoned (NaN bytes) before the launch; every element and LSE is compared,
// and the padding of out and lse must still hold the poison.
//
// Code objects: $HIPATTN_EMU_MERGE_GFX942 / $HIPATTN_EMU_MERGE_GFX950 (each test skips, saying so, when
// its variable is unset).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "emu.hpp"
#include "hipattn/dispatch/merge_attention_states.hpp"
#include "hipattn/numeric/bf16.hpp"
#include "hipattn/numeric/fp16.hpp"
#include "hipattn/problem/merge_params.hpp"
#include "hipattn/problem/merge_rules.hpp"
#include "hipattn/reference/merge.hpp"

namespace hipattn::emu {
namespace {

// The kernel reads the argument struct byte for byte (the metadata's explicit arguments: 136 bytes).
static_assert(sizeof(MergeStatesArgs) == 136, "MergeStatesArgs layout");

// ---- the code object of a target ----

std::shared_ptr<const CodeObject> merge_code_object(const std::string& gfx, std::string& why) {
  static std::mutex m;
  static std::map<std::string, std::shared_ptr<const CodeObject>> cache;
  const std::string var = "HIPATTN_EMU_MERGE_" + std::string(gfx == "gfx942" ? "GFX942" : "GFX950");
  const char* p = std::getenv(var.c_str());
  if (!p || !*p) {
    why = var + " not set (no AMD toolchain): emulated test skipped";
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(m);
  auto& co = cache[var];
  if (!co) co = CodeObject::load(p);
  return co;
}

// The manifest of the instance (kernels/merge/merge_states.hpp): "kernel=merge_states in=f32 out=bf16",
// which CodeObject::find_manifest matches exactly.
std::string kernel_manifest_text(DType in, DType out) { return merge_states_manifest(in, out).c_str(); }

// ---- elements ----

size_t elem_size(DType t) { return t == DType::f32 ? 4 : 2; }

void put(std::vector<uint8_t>& buf, DType t, int64_t i, float f) {
  if (t == DType::f32) {
    std::memcpy(&buf[size_t(i) * 4], &f, 4);
  } else {
    const uint16_t b = t == DType::bf16 ? bfloat16_t::from_float(f).bits : half_t::from_float(f).bits;
    std::memcpy(&buf[size_t(i) * 2], &b, 2);
  }
}
double get(const std::vector<uint8_t>& buf, DType t, int64_t i) {
  if (t == DType::f32) {
    float f;
    std::memcpy(&f, &buf[size_t(i) * 4], 4);
    return f;
  }
  uint16_t b;
  std::memcpy(&b, &buf[size_t(i) * 2], 2);
  return t == DType::bf16 ? bfloat16_t::from_bits(b).to_float() : half_t::from_bits(b).to_float();
}
bool is_poison(const std::vector<uint8_t>& buf, size_t esize, int64_t i) {
  for (size_t k = 0; k < esize; ++k)
    if (buf[size_t(i) * esize + k] != 0xFF) return false;
  return true;
}
const char* dtype_short(DType t) { return t == DType::f32 ? "f32" : t == DType::bf16 ? "bf16" : "f16"; }

// ---- a case ----

enum class PoLayout { stacked, interleaved };  // [R][T][H][D] or [T][R][H][D]
enum class LseInLayout { rth, htr };           // [R][T][H] or [H][T][R]
enum class LseOut { none, th, ht };            // absent, [T][H] or [H][T + pad]

struct Case {
  const char* name = "";
  DType in = DType::f16, out = DType::f16;
  int ranks = 1, tokens = 1, heads = 1, d = 8;
  PoLayout po = PoLayout::stacked;
  int po_head_pad = 0, po_token_pad = 0, po_rank_pad = 0;  // elements (multiples of 8)
  LseInLayout li = LseInLayout::rth;
  int li_pad = 0;  // added to the two outer strides of the partial LSEs
  int o_head_pad = 0, o_token_pad = 0;  // elements (multiples of 8)
  LseOut lo = LseOut::th;
  int lo_pad = 0;
  double empty_frac = 0;  // probability of an empty rank (LSE -inf) in a row
  int all_empty_item = -1, nan_item = -1;  // item (token x heads + head) with every rank empty / a NaN LSE
  uint64_t seed = 0;
};

std::string describe(const Case& c) {
  std::string s = std::string(dtype_short(c.in)) + "->" + dtype_short(c.out) + " R" + std::to_string(c.ranks) + " T" +
                  std::to_string(c.tokens) + " H" + std::to_string(c.heads) + " D" + std::to_string(c.d);
  s += c.po == PoLayout::stacked ? " O[R][T][H]" : " O[T][R][H]";
  if (c.po_head_pad || c.po_token_pad || c.po_rank_pad)
    s += " pad(h" + std::to_string(c.po_head_pad) + ",t" + std::to_string(c.po_token_pad) + ",r" + std::to_string(c.po_rank_pad) + ")";
  s += c.li == LseInLayout::rth ? " LSE[R][T][H]" : " LSE[H][T][R]";
  if (c.li_pad) s += "+" + std::to_string(c.li_pad);
  if (c.o_head_pad || c.o_token_pad) s += " out pad(h" + std::to_string(c.o_head_pad) + ",t" + std::to_string(c.o_token_pad) + ")";
  s += c.lo == LseOut::none ? " lse null" : c.lo == LseOut::th ? " lse[T][H]" : " lse[H][T+" + std::to_string(c.lo_pad) + "]";
  if (c.empty_frac > 0) s += " empty " + std::to_string(int(c.empty_frac * 100)) + "%";
  if (c.all_empty_item >= 0) s += " all-empty item " + std::to_string(c.all_empty_item);
  if (c.nan_item >= 0) s += " NaN item " + std::to_string(c.nan_item);
  return s;
}

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The host tensors, the emulated buffers and the params over them.
struct Problem {
  const Case& c;
  int64_t po_sr = 0, po_st = 0, po_sh = 0;  // partial O strides
  int64_t li_sr = 0, li_st = 0, li_sh = 0;  // partial LSE strides
  int64_t o_st = 0, o_sh = 0;               // out strides
  int64_t lo_st = 0, lo_sh = 0;             // lse strides
  std::vector<uint8_t> po;                  // partial O (NaN padding and NaN rows of empty ranks)
  std::vector<float> li;                    // partial LSE (NaN padding)
  size_t out_elems = 0, lse_elems = 0;
  int64_t empty_ranks = 0;
  Memory mem;
  uint64_t d_po = 0, d_li = 0, d_out = 0, d_lse = 0;

  explicit Problem(const Case& cs) : c(cs) {
    const int64_t R = c.ranks, T = c.tokens, H = c.heads, D = c.d;
    po_sh = D + c.po_head_pad;
    if (c.po == PoLayout::stacked) {
      po_st = H * po_sh + c.po_token_pad;
      po_sr = T * po_st + c.po_rank_pad;
    } else {
      po_sr = H * po_sh + c.po_rank_pad;
      po_st = R * po_sr + c.po_token_pad;
    }
    if (c.li == LseInLayout::rth) {
      li_sh = 1;
      li_st = H + c.li_pad;
      li_sr = T * li_st + c.li_pad;
    } else {
      li_sr = 1;
      li_st = R + c.li_pad;
      li_sh = T * li_st + c.li_pad;
    }
    o_sh = D + c.o_head_pad;
    o_st = H * o_sh + c.o_token_pad;
    if (c.lo == LseOut::th) {
      lo_sh = 1;
      lo_st = H;
    } else if (c.lo == LseOut::ht) {
      lo_st = 1;
      lo_sh = T + c.lo_pad;
    }
    // buffers of exactly the extent the strides reach (an access past it faults)
    const int64_t po_n = (R - 1) * po_sr + (T - 1) * po_st + (H - 1) * po_sh + D;
    const int64_t li_n = (R - 1) * li_sr + (T - 1) * li_st + (H - 1) * li_sh + 1;
    const DType pt = c.in;
    po.assign(size_t(po_n) * elem_size(pt), 0xFF);  // NaN everywhere (every dtype), then the rows
    li.assign(size_t(li_n), std::numeric_limits<float>::quiet_NaN());
    std::mt19937_64 rng(c.seed);
    std::uniform_real_distribution<float> uni_o(-1.f, 1.f), uni_l(-5.f, 5.f), u01(0.f, 1.f);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t item = t * H + h;
        std::vector<float> ls(static_cast<size_t>(R));
        for (int64_t r = 0; r < R; ++r) ls[size_t(r)] = u01(rng) < c.empty_frac ? kNegInf : uni_l(rng);
        if (item == c.all_empty_item) {
          std::fill(ls.begin(), ls.end(), kNegInf);
        } else if (std::all_of(ls.begin(), ls.end(), [](float l) { return l == kNegInf; })) {
          ls[size_t(rng() % R)] = uni_l(rng);  // at least one rank saw keys
        }
        if (item == c.nan_item) ls[size_t(rng() % R)] = std::numeric_limits<float>::quiet_NaN();
        for (int64_t r = 0; r < R; ++r) {
          li[size_t(r * li_sr + t * li_st + h * li_sh)] = ls[size_t(r)];
          if (ls[size_t(r)] == kNegInf) {  // an empty rank: its O row stays NaN
            ++empty_ranks;
            continue;
          }
          for (int64_t e = 0; e < D; ++e) put(po, pt, r * po_sr + t * po_st + h * po_sh + e, uni_o(rng));
        }
      }
    d_po = mem.upload(po, "partial_out");
    d_li = mem.upload(li, "partial_lse");
    out_elems = size_t(T * o_st);  // the last token's padding too
    d_out = mem.alloc(out_elems * elem_size(c.out), "out");
    if (c.lo != LseOut::none) {
      lse_elems = c.lo == LseOut::th ? size_t(T * H) : size_t(H * lo_sh);
      d_lse = mem.alloc(lse_elems * 4, "lse");
    }
  }

  MergeAttentionStatesParams params() const {
    MergeAttentionStatesParams p;
    p.partial_out = reinterpret_cast<const void*>(static_cast<uintptr_t>(d_po));
    p.partial_dtype = c.in;
    p.po_stride_rank = po_sr;
    p.po_stride_token = po_st;
    p.po_stride_head = po_sh;
    p.partial_lse = reinterpret_cast<const float*>(static_cast<uintptr_t>(d_li));
    p.plse_stride_rank = li_sr;
    p.plse_stride_token = li_st;
    p.plse_stride_head = li_sh;
    p.num_ranks = c.ranks;
    p.num_tokens = c.tokens;
    p.num_heads = c.heads;
    p.head_size = c.d;
    p.out = reinterpret_cast<void*>(static_cast<uintptr_t>(d_out));
    p.out_dtype = c.out;
    p.o_stride_token = o_st;
    p.o_stride_head = o_sh;
    p.lse = c.lo == LseOut::none ? nullptr : reinterpret_cast<float*>(static_cast<uintptr_t>(d_lse));
    p.lse_stride_token = lo_st;
    p.lse_stride_head = lo_sh;
    return p;
  }

  // NaN in every byte of out and lse (0xFF..: NaN in f16, bf16 and f32), so that each element must be written.
  void poison() {
    mem.write(d_out, std::vector<uint8_t>(out_elems * elem_size(c.out), 0xFF).data(), out_elems * elem_size(c.out));
    if (lse_elems) mem.write(d_lse, std::vector<uint8_t>(lse_elems * 4, 0xFF).data(), lse_elems * 4);
  }

  // The reference of row (t, h): reference::merge_states over the stored (rounded) partials.
  void reference_row(int64_t t, int64_t h, std::vector<double>& o, double& lse) const {
    std::vector<reference::PartialState> parts(static_cast<size_t>(c.ranks));
    for (int64_t r = 0; r < c.ranks; ++r) {
      reference::PartialState& s = parts[size_t(r)];
      s.lse = li[size_t(r * li_sr + t * li_st + h * li_sh)];
      s.o.resize(size_t(c.d));
      for (int64_t e = 0; e < c.d; ++e) s.o[size_t(e)] = get(po, c.in, r * po_sr + t * po_st + h * po_sh + e);  // NaN if empty
    }
    reference::merge_states(parts, o, lse);
  }
};

struct Tol {
  double atol, rtol;
};
Tol out_tolerance(DType out) {
  return out == DType::f32 ? Tol{1e-5, 1e-5} : out == DType::bf16 ? Tol{1e-2, 1e-2} : Tol{2e-3, 2e-3};
}
constexpr double kLseAtol = 1e-4;

struct Stats {
  int64_t bad = 0, checked = 0, touched_padding = 0, empty_rows = 0, nan_rows = 0;
  double max_err = 0, max_lse_err = 0;
  std::string first_bad;
};

Stats compare(const Problem& pr, const std::vector<uint8_t>& out, const std::vector<float>& lse) {
  const Case& c = pr.c;
  const Tol tol = out_tolerance(c.out);
  const size_t oes = elem_size(c.out);
  Stats st;
  std::vector<bool> covered(pr.out_elems, false), lse_covered(pr.lse_elems, false);
  std::vector<double> want;
  double want_lse = 0;
  const auto bad = [&](const std::string& what) {
    if (st.bad++ == 0) st.first_bad = what;
  };
  for (int64_t t = 0; t < c.tokens; ++t)
    for (int64_t h = 0; h < c.heads; ++h) {
      pr.reference_row(t, h, want, want_lse);
      const std::string where = "[token " + std::to_string(t) + ", head " + std::to_string(h) + "]";
      const bool nan_row = std::isnan(want_lse), empty_row = !nan_row && std::isinf(want_lse) && want_lse < 0;
      st.nan_rows += nan_row;
      st.empty_rows += empty_row;
      if (c.lo != LseOut::none) {
        const int64_t li = t * pr.lo_st + h * pr.lo_sh;
        lse_covered[size_t(li)] = true;
        const double got = lse[size_t(li)];
        ++st.checked;
        const bool ok = nan_row ? std::isnan(got) : empty_row ? got == want_lse : std::fabs(got - want_lse) <= kLseAtol;
        if (!ok) bad("lse" + where + " = " + std::to_string(got) + ", want " + std::to_string(want_lse));
        if (!nan_row && !empty_row) st.max_lse_err = std::max(st.max_lse_err, std::isfinite(got) ? std::fabs(got - want_lse) : INFINITY);
      }
      for (int64_t e = 0; e < c.d; ++e) {
        const int64_t oi = t * pr.o_st + h * pr.o_sh + e;
        covered[size_t(oi)] = true;
        const double got = get(out, c.out, oi), w = want[size_t(e)];
        ++st.checked;
        const double err = std::fabs(got - w);
        const bool ok = nan_row ? std::isnan(got) : empty_row ? got == 0.0 : err <= tol.atol + tol.rtol * std::fabs(w);
        if (!ok)
          bad("out" + where + " d " + std::to_string(e) + " = " + std::to_string(got) + ", want " + std::to_string(w) +
              (nan_row ? " (NaN LSE: NaN)" : empty_row ? " (every rank empty: exactly 0)" : ""));
        if (!nan_row && !empty_row) st.max_err = std::max(st.max_err, std::isfinite(err) ? err : INFINITY);
      }
    }
  for (size_t i = 0; i < pr.out_elems; ++i) st.touched_padding += !covered[i] && !is_poison(out, oes, int64_t(i));
  for (size_t i = 0; i < pr.lse_elems; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &lse[i], 4);
    st.touched_padding += !lse_covered[i] && bits != 0xFFFFFFFFu;
  }
  return st;
}

// ---- the cases ----

std::vector<Case> all_cases() {
  std::vector<Case> v;
  // one rank, bf16: out = O_0 (rounded again), lse = LSE_0; item 1's only rank empty (out 0, lse -inf)
  {
    Case c{"r1_bf16_d64", DType::bf16, DType::bf16, 1, 3, 2, 64};
    c.all_empty_item = 1;
    c.seed = 101;
    v.push_back(c);
  }
  // two ranks, f16, d 8 (one thread per item): empty ranks, a NaN row, an all-empty row
  {
    Case c{"r2_f16_d8", DType::f16, DType::f16, 2, 3, 2, 8};
    c.empty_frac = 0.3;
    c.all_empty_item = 4;
    c.nan_item = 2;
    c.seed = 102;
    v.push_back(c);
  }
  // three ranks, f32 -> bf16, d 72 (9 threads per item, 252-thread blocks): rank-interleaved O with
  // padded head / rank / token strides, transposed padded LSEs, lse [H][T + 3]
  {
    Case c{"r3_f32bf16_d72_interleaved", DType::f32, DType::bf16, 3, 3, 2, 72};
    c.po = PoLayout::interleaved;
    c.po_head_pad = 8;
    c.po_rank_pad = 16;
    c.po_token_pad = 8;
    c.li = LseInLayout::htr;
    c.li_pad = 2;
    c.lo = LseOut::ht;
    c.lo_pad = 3;
    c.empty_frac = 0.25;
    c.nan_item = 5;
    c.seed = 103;
    v.push_back(c);
  }
  // eight ranks (one full batch), f32 -> f32, d 512 (64 threads per item): stacked with a rank stride
  // larger than packed, head padding, no lse output
  {
    Case c{"r8_f32f32_d512_lse_null", DType::f32, DType::f32, 8, 3, 2, 512};
    c.po_head_pad = 8;
    c.po_rank_pad = 40;
    c.li_pad = 1;
    c.lo = LseOut::none;
    c.empty_frac = 0.3;
    c.all_empty_item = 3;
    c.seed = 104;
    v.push_back(c);
  }
  // eight ranks, bf16, d 72: padded out (head and token strides), every special row
  {
    Case c{"r8_bf16_d72_padded_out", DType::bf16, DType::bf16, 8, 3, 2, 72};
    c.po_head_pad = 16;
    c.po_token_pad = 8;
    c.o_head_pad = 8;
    c.o_token_pad = 16;
    c.lo = LseOut::ht;
    c.lo_pad = 2;
    c.empty_frac = 0.4;
    c.all_empty_item = 0;
    c.nan_item = 5;
    c.seed = 105;
    v.push_back(c);
  }
  // eleven ranks (a full and a partial batch of 8), f16, d 512, rank-interleaved O, transposed LSEs
  {
    Case c{"r11_f16_d512_interleaved", DType::f16, DType::f16, 11, 2, 3, 512};
    c.po = PoLayout::interleaved;
    c.po_rank_pad = 8;
    c.li = LseInLayout::htr;
    c.empty_frac = 0.3;
    c.nan_item = 4;
    c.seed = 106;
    v.push_back(c);
  }
  // three ranks, f16, d 64: 100 tokens x 3 heads (300 items, 32 per block: 10 blocks), padded O
  {
    Case c{"r3_f16_d64_many_items", DType::f16, DType::f16, 3, 100, 3, 64};
    c.po_head_pad = 8;
    c.o_token_pad = 8;
    c.empty_frac = 0.2;
    c.all_empty_item = 150;
    c.nan_item = 299;
    c.seed = 107;
    v.push_back(c);
  }
  // two ranks, f32 -> bf16, d 8: 300 items of one thread (2 blocks), lse [H][T + 5]
  {
    Case c{"r2_f32bf16_d8_many_items", DType::f32, DType::bf16, 2, 150, 2, 8};
    c.lo = LseOut::ht;
    c.lo_pad = 5;
    c.empty_frac = 0.3;
    c.all_empty_item = 17;
    c.nan_item = 0;
    c.seed = 108;
    v.push_back(c);
  }
  // one rank, f32 -> f32, d 72, rank-interleaved (one rank: the rank stride never multiplies)
  {
    Case c{"r1_f32f32_d72", DType::f32, DType::f32, 1, 3, 2, 72};
    c.po = PoLayout::interleaved;
    c.po_head_pad = 8;
    c.all_empty_item = 2;
    c.seed = 109;
    v.push_back(c);
  }
  // two ranks, bf16, d 512, no lse output
  {
    Case c{"r2_bf16_d512_lse_null", DType::bf16, DType::bf16, 2, 3, 2, 512};
    c.lo = LseOut::none;
    c.empty_frac = 0.25;
    c.nan_item = 1;
    c.seed = 110;
    v.push_back(c);
  }
  // eight ranks, f32 -> bf16, d 64, no empty rank (every weight used)
  {
    Case c{"r8_f32bf16_d64_dense", DType::f32, DType::bf16, 8, 3, 2, 64};
    c.seed = 111;
    v.push_back(c);
  }
  return v;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = all_cases();
  return c;
}

struct Param {
  std::string gfx;
  int index;
};
void PrintTo(const Param& p, std::ostream* os) { *os << p.gfx << " " << cases()[p.index].name; }

class EmuMerge : public ::testing::TestWithParam<Param> {};

TEST_P(EmuMerge, MatchesReference) {
  const Param prm = GetParam();
  const Case& c = cases()[prm.index];
  SCOPED_TRACE(prm.gfx + " " + c.name + ": " + describe(c));
  std::string why;
  const auto co = merge_code_object(prm.gfx, why);
  if (!co) GTEST_SKIP() << why;
  ASSERT_EQ(gfx_name(co->gfx()), prm.gfx) << co->path();
  Problem pr(c);
  const MergeAttentionStatesParams p = pr.params();
  {
    const ValidationReport r = validate(p);
    ASSERT_TRUE(r.ok()) << r.summary();
  }
  const MergeStatesGeometry g = merge_states_geometry(p);
  const MergeStatesArgs a = make_merge_states_args(p);
  ASSERT_GT(g.blocks, 0);
  ASSERT_EQ(g.threads % g.threads_per_item, 0);
  ASSERT_EQ(a.threads_per_item, g.threads_per_item);
  pr.poison();
  LaunchStats ls;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const KernelInfo& k = co->find_manifest(kernel_manifest_text(c.in, c.out));
    ASSERT_EQ(k.private_segment_fixed_size, 0u) << "scratch";
    ls = launch(*co, k, {uint32_t(g.blocks), 1, 1}, {uint32_t(g.threads), 1, 1}, 0, &a, sizeof(a), pr.mem);
  } catch (const Error& e) {
    FAIL() << "emulator " << kind_name(e.kind) << ": " << e.what();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto out = pr.mem.download<uint8_t>(pr.d_out, pr.out_elems * elem_size(c.out));
  const auto lse = pr.lse_elems ? pr.mem.download<float>(pr.d_lse, pr.lse_elems) : std::vector<float>{};
  const Stats st = compare(pr, out, lse);
  EXPECT_EQ(st.bad, 0) << st.bad << " of " << st.checked << " values out of tolerance; first: " << st.first_bad;
  EXPECT_EQ(st.touched_padding, 0) << "elements of the padding of out / lse written";
  std::printf("  %-6s %-28s %s\n         grid %lld x %d (%d per item), %lld empty ranks, %lld all-empty rows, %lld NaN rows: "
              "max|err| out %.2e lse %.2e  %8llu instr %6.3f s\n",
              prm.gfx.c_str(), c.name, describe(c).c_str(), static_cast<long long>(g.blocks), g.threads,
              g.threads_per_item, static_cast<long long>(pr.empty_ranks), static_cast<long long>(st.empty_rows),
              static_cast<long long>(st.nan_rows), st.max_err, st.max_lse_err,
              static_cast<unsigned long long>(ls.instructions), secs);
}

std::vector<Param> all_params(const std::string& gfx) {
  std::vector<Param> v;
  for (int i = 0; i < int(cases().size()); ++i) v.push_back({gfx, i});
  return v;
}
std::string param_name(const ::testing::TestParamInfo<Param>& i) { return cases()[i.param.index].name; }

INSTANTIATE_TEST_SUITE_P(Gfx942, EmuMerge, ::testing::ValuesIn(all_params("gfx942")), param_name);
INSTANTIATE_TEST_SUITE_P(Gfx950, EmuMerge, ::testing::ValuesIn(all_params("gfx950")), param_name);

// Every instance merge.hip holds is in each target's code object exactly once, without scratch, and
// its explicit arguments are the 136 bytes of MergeStatesArgs.
TEST(EmuMergeNames, EveryInstanceIsInTheCodeObject) {
  for (const std::string gfx : {"gfx942", "gfx950"}) {
    std::string why;
    const auto co = merge_code_object(gfx, why);
    if (!co) GTEST_SKIP() << why;
    for (const auto& [in, out] : {std::pair{DType::bf16, DType::bf16}, std::pair{DType::f16, DType::f16},
                                  std::pair{DType::f32, DType::bf16}, std::pair{DType::f32, DType::f32}}) {
      try {
        const KernelInfo& k = co->find_manifest(kernel_manifest_text(in, out));
        EXPECT_EQ(k.private_segment_fixed_size, 0u) << gfx << " " << k.manifest << ": scratch";
        uint32_t explicit_end = 0;
        for (const KernelArg& arg : k.args)
          if (arg.value_kind.rfind("hidden", 0) != 0) explicit_end = std::max(explicit_end, arg.offset + arg.size);
        EXPECT_EQ(explicit_end, sizeof(MergeStatesArgs)) << gfx << " " << k.manifest;
      } catch (const std::exception& e) {
        ADD_FAILURE() << gfx << ": " << kernel_manifest_text(in, out) << ": " << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace hipattn::emu
