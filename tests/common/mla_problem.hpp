// tests/common/mla_problem.hpp: an MLA decode problem on the host, shared by the device suite
// (tests/device/test_mla_decode.cu) and the emulated CDNA tests (tests/emu/test_emu_mla_decode.cpp):
// seeded data (uniform, never 0, rounded to the dtype) in padded strided storage whose padding holds
// NaN; a latent cache NaN-filled, then each sequence's tokens written to randomly permuted pages
// (fragmented block tables, padded entries pointing at a NaN page); the output in a format of
// problem/fp8_io.hpp; the entry point's params over the storage at given addresses; the float64
// reference (reference/mla_decode.hpp); and the check of a run's outputs against it (every owned
// element, group scale and LSE; every padding element still poisoned).
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
#include <vector>

#include "fp8_output_check.hpp"
#include "tolerance.hpp"
#include "hipattn/dispatch/mla_decode.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "hipattn/reference/mla_decode.hpp"

namespace hipattn::testing::mla_test {

constexpr int DK = kMlaQkDim, DV = kMlaLatentDim, DR = kMlaRopeDim;

inline bool is_bf16(DType d) { return d == DType::bf16; }

// The output format of a launch (problem/fp8_io.hpp).
struct OutSpec {
  std::optional<DType> dtype;  // unset: q_dtype
  int group = 0;               // fp8: 0 per tensor, else the group size
  bool ue8m0 = false;
  float group_max = 0.f;         // out_format.group_fp8_max (0: the format's)
  bool scale_on_device = false;  // fp8 per tensor: the scale as a device scalar (else the host float)
  bool col_major_scales = false;  // group scales [groups][tokens] (token stride 1), else [tokens][groups]
  std::string str() const {
    if (!dtype) return "";
    std::string s = " out " + std::string(dtype_name(*dtype));
    if (!is_fp8(*dtype)) return s;
    if (group == 0) return s + (scale_on_device ? " tensor(dev)" : " tensor(host)");
    return s + " group " + std::to_string(group) + (ue8m0 ? " ue8m0" : "") +
           (group_max > 0.f ? " max " + std::to_string(int(group_max)) : "") + (col_major_scales ? " col-major" : "");
  }
};

struct MlaSpec {
  DType q_dtype = DType::bf16;
  DType kv_dtype = DType::bf16;
  int heads = 16, q_len = 1, page_size = 64;
  std::vector<int> lens;
  bool split_q = false;   // q [.., 512] + q_rope [.., 64]
  int q_pad = 8, o_pad = 8;  // elements after each head row (fp8 queries: rounded up to 16 codes)
  bool lse = true;
  bool scale_on_device = true;  // fp8: kv_scale as a device scalar (else the host float)
  float kv_scale = 0.5f;
  float q_scale = 1.f / 16.f;  // fp8 queries (codes drawn in [-8, 8]); on the device when scale_on_device
  MlaDecodeSplit split = MlaDecodeSplit::automatic;
  OutSpec out;
  uint64_t seed = 1;
  std::string str() const {
    std::string s = std::string(dtype_name(q_dtype)) + "/" + std::string(dtype_name(kv_dtype)) + " h" +
                    std::to_string(heads) + " q" + std::to_string(q_len) + " page" + std::to_string(page_size) +
                    (split_q ? " split-q" : "") + " lens(";
    for (size_t i = 0; i < lens.size() && i < 8; ++i) s += (i ? "," : "") + std::to_string(lens[i]);
    if (lens.size() > 8) s += ",.. " + std::to_string(lens.size()) + " seqs";
    return s + ")" + out.str();
  }
};

// The output of a problem of T tokens and H heads in a format: its dtype, scales and their layout.
struct MlaOutput {
  OutSpec spec;
  DType dtype = DType::bf16;
  int64_t T = 0, H = 0, groups = 0;
  float tensor_scale = 1.f;  // fp8 per tensor: outputs within |O| < ~3 land near the top of the format
  MlaOutput() = default;
  MlaOutput(const OutSpec& s, DType q_dtype, int64_t tokens, int64_t heads) : spec(s), T(tokens), H(heads) {
    dtype = s.dtype.value_or(q_dtype);
    if (is_fp8(dtype) && s.group == 0) tensor_scale = dtype == DType::fp8_e4m3fnuz ? 1.f / 64.f : 1.f / 128.f;
    groups = is_fp8(dtype) && s.group > 0 ? DV / s.group : 0;
  }
  int64_t gs_stride_token() const { return spec.col_major_scales ? 1 : H * groups; }
  int64_t gs_stride_group() const { return spec.col_major_scales ? T : 1; }
  size_t gs_count() const { return size_t(T * H * groups); }
  float scale_of(const std::vector<float>& gs, int64_t t, int64_t h, int d) const {
    return groups > 0 ? gs[size_t(t * gs_stride_token() + (h * groups + d / spec.group) * gs_stride_group())] : tensor_scale;
  }
  // The format with the group scales at `group_scale` and the per-tensor scale at `scale_device` when
  // the spec puts it on the device (pointers of either side).
  OutputFormat format(float* group_scale, const float* scale_device) const {
    OutputFormat f;
    f.dtype = spec.dtype;
    if (is_fp8(dtype) && spec.group == 0) {
      if (spec.scale_on_device) f.scale.device = scale_device;
      else f.scale.host = tensor_scale;
    }
    if (groups > 0) {
      f.group_size = spec.group;
      f.group_ue8m0 = spec.ue8m0;
      f.group_fp8_max = spec.group_max;
      f.group_scale = group_scale;
      f.group_scale_stride_token = gs_stride_token();
      f.group_scale_stride_group = gs_stride_group();
    }
    return f;
  }
};

inline float nonzero_uniform(std::mt19937_64& g, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  for (;;) {
    const float v = u(g);
    if (std::fabs(v) > 1e-3f) return v;
  }
}

// Group scales past the tensor's last element, which must stay poisoned.
constexpr size_t kScaleGuard = 16;

// Where a problem's tensors live on the device (or in the emulator's memory).
struct MlaBuffers {
  const void *q = nullptr, *q_nope = nullptr, *q_rope = nullptr, *kv = nullptr;
  const int32_t *block_table = nullptr, *seq_lens_k = nullptr;
  const float* kv_scale = nullptr;  // [1]
  const float* q_scale = nullptr;   // [1]: fp8 queries
  void* out = nullptr;
  float* lse = nullptr;
  const float* out_scale = nullptr;  // [1]: the per-tensor output scale
  float* group_scale = nullptr;
};

// The host side of a problem: storage, the reference's params, the reference's result.
struct MlaHost {
  MlaSpec s;
  int batch = 0, max_pages = 0, num_pages = 0, max_len = 0;
  int64_t q_st = 0, q_sh = 0, qn_st = 0, qn_sh = 0, qr_st = 0, qr_sh = 0, o_st = 0, o_sh = 0;
  std::vector<uint16_t> q, q_nope, q_rope;  // q joined (the reference's); q_nope / q_rope when split
  std::vector<uint8_t> kv;                  // [num_pages, page_size, 576] of kv_dtype
  std::vector<int32_t> bt, lens;
  float kv_scale = 1.f;
  float q_scale = 1.f;  // fp8 queries: s.q_scale
  MlaOutput output;  // the launches' output format (set_output: the same inputs in another format)

  explicit MlaHost(const MlaSpec& spec) : s(spec) {
    std::mt19937_64 g(s.seed);
    batch = int(s.lens.size());
    lens.assign(s.lens.begin(), s.lens.end());
    for (int l : lens) max_len = std::max(max_len, l);
    max_pages = (max_len + s.page_size - 1) / s.page_size + 1;  // one padded entry at least
    int used = 0;
    for (int l : lens) used += (l + s.page_size - 1) / s.page_size;
    num_pages = used + 3;  // unused pages (NaN)
    const int T = batch * s.q_len;
    const bool q8 = is_fp8(s.q_dtype);
    const size_t qes = dtype_size(s.q_dtype);
    const int qpad = q8 ? (s.q_pad + 15) / 16 * 16 : s.q_pad, spad = q8 ? 16 : 8;  // 16-byte strides
    q_scale = q8 ? s.q_scale : 1.f;
    q_sh = DK + qpad;
    q_st = int64_t(s.heads) * q_sh;
    o_sh = DV + s.o_pad;
    o_st = int64_t(s.heads) * o_sh;
    set_output(s.out);
    const uint16_t nan16 = 0x7FFF;
    q.assign(size_t(std::max<int64_t>(1, T * q_st)), nan16);
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < s.heads; ++h)
        for (int d = 0; d < DK; ++d)
          store_from_float(q.data(), s.q_dtype, t * q_st + h * q_sh + d,
                           q8 ? nonzero_uniform(g, -8.f, 8.f) : nonzero_uniform(g, -1.f, 1.f));
    if (s.split_q) {
      qn_sh = DV + spad;
      qn_st = int64_t(s.heads) * qn_sh;
      qr_sh = DR + spad;
      qr_st = int64_t(s.heads) * qr_sh + spad;
      q_nope.assign(size_t(std::max<int64_t>(1, T * qn_st)), nan16);
      q_rope.assign(size_t(std::max<int64_t>(1, T * qr_st)), nan16);
      // element copies in the query's dtype (fp8: bytes of the 16-bit storage)
      const auto copy = [&](std::vector<uint16_t>& dst, int64_t di, int64_t si) {
        std::memcpy(reinterpret_cast<uint8_t*>(dst.data()) + di * qes, reinterpret_cast<const uint8_t*>(q.data()) + si * qes, qes);
      };
      for (int t = 0; t < T; ++t)
        for (int h = 0; h < s.heads; ++h) {
          for (int d = 0; d < DV; ++d) copy(q_nope, t * qn_st + h * qn_sh + d, t * q_st + h * q_sh + d);
          for (int d = 0; d < DR; ++d) copy(q_rope, t * qr_st + h * qr_sh + d, t * q_st + h * q_sh + DV + d);
        }
    }
    // cache: NaN everywhere, then every owned slot
    const size_t es = dtype_size(s.kv_dtype);
    const size_t elems = size_t(num_pages) * s.page_size * DK;
    kv.assign(elems * es, 0);
    for (size_t i = 0; i < elems; ++i) store_from_float(kv.data(), s.kv_dtype, int64_t(i), std::numeric_limits<float>::quiet_NaN());
    std::vector<int32_t> perm(static_cast<size_t>(num_pages));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g);
    const int32_t nan_page = perm[size_t(num_pages - 1)];  // never owned: padded entries point at it
    bt.assign(size_t(batch) * max_pages, nan_page);
    int next = 0;
    const bool fp8 = is_fp8(s.kv_dtype);
    kv_scale = fp8 ? s.kv_scale : 1.f;
    for (int b = 0; b < batch; ++b)
      for (int j = 0; j * s.page_size < lens[size_t(b)]; ++j) {
        const int32_t page = perm[size_t(next++)];
        bt[size_t(b) * max_pages + j] = page;
        for (int slot = 0; slot < s.page_size && j * s.page_size + slot < lens[size_t(b)]; ++slot)
          for (int d = 0; d < DK; ++d)
            store_from_float(kv.data(), s.kv_dtype, (int64_t(page) * s.page_size + slot) * DK + d,
                             fp8 ? nonzero_uniform(g, -2.f, 2.f) : nonzero_uniform(g, -1.f, 1.f));
      }
  }
  int tokens() const { return batch * s.q_len; }
  float scale() const { return 1.f / std::sqrt(float(DK)); }
  void set_output(const OutSpec& o) {
    s.out = o;
    output = MlaOutput(o, s.q_dtype, tokens(), s.heads);
  }

  // The entry point's params over the problem's storage at the given (device or emulated) addresses.
  MlaDecodeParams params(const MlaBuffers& b) const {
    MlaDecodeParams p;
    if (s.split_q) {
      p.q = b.q_nope;
      p.q_stride_head = qn_sh;
      p.q_stride_token = qn_st;
      p.q_rope = b.q_rope;
      p.q_rope_stride_head = qr_sh;
      p.q_rope_stride_token = qr_st;
    } else {
      p.q = b.q;
      p.q_stride_token = q_st;
      p.q_stride_head = q_sh;
    }
    p.q_dtype = s.q_dtype;
    if (is_fp8(s.q_dtype)) {
      if (s.scale_on_device) p.q_scale.device = b.q_scale;
      else p.q_scale.host = q_scale;
    }
    p.q_len = s.q_len;
    p.kv_cache = b.kv;
    p.kv_dtype = s.kv_dtype;
    p.kv_stride_page = int64_t(s.page_size) * DK;
    p.kv_stride_slot = DK;
    p.num_pages = num_pages;
    p.page_size = s.page_size;
    if (is_fp8(s.kv_dtype)) {
      if (s.scale_on_device) p.kv_scale = b.kv_scale;
      else p.kv_scale_value = kv_scale;
    }
    p.block_table = b.block_table;
    p.block_table_stride = max_pages;
    p.max_pages_per_seq = max_pages;
    p.seq_lens_k = b.seq_lens_k;
    p.batch = batch;
    p.max_seqlen_k = max_len;
    p.num_heads = s.heads;
    p.scale = scale();
    p.out = b.out;
    p.o_stride_token = o_st;
    p.o_stride_head = o_sh;
    p.out_format = output.format(b.group_scale, b.out_scale);
    if (s.lse) {
      p.lse = b.lse;
      p.lse_stride_token = s.heads;
      p.lse_stride_head = 1;
    }
    return p;
  }
  // Bytes of the buffers the outputs are written to (the group scales: then kScaleGuard more).
  size_t out_bytes() const { return std::max<size_t>(16, size_t(tokens()) * o_st * dtype_size(output.dtype)); }
  size_t lse_bytes() const { return std::max<size_t>(16, size_t(tokens()) * s.heads * 4); }
  size_t group_scale_bytes() const;

  reference::AttentionResult reference() const {
    reference::MlaDecodeParams r;
    r.q = q.data();
    r.q_dtype = s.q_dtype;
    r.q_scale = q_scale;
    r.q_stride_token = q_st;
    r.q_stride_batch = q_st * s.q_len;
    r.q_stride_head = q_sh;
    r.kv_cache = kv.data();
    r.kv_dtype = s.kv_dtype;
    r.kv_stride_page = int64_t(s.page_size) * DK;
    r.kv_stride_slot = DK;
    r.num_pages = num_pages;
    r.page_size = s.page_size;
    r.kv_scale = is_fp8(s.kv_dtype) ? &kv_scale : nullptr;
    r.block_table = bt.data();
    r.block_table_stride = max_pages;
    r.max_pages = max_pages;
    r.seq_lens_k = lens.data();
    r.batch = batch;
    r.q_len = s.q_len;
    r.num_heads = s.heads;
    r.scale = scale();
    return reference::mla_decode(r);
  }
};


inline size_t MlaHost::group_scale_bytes() const { return (output.gs_count() + kScaleGuard) * sizeof(float); }

struct MlaOut {
  std::vector<uint8_t> out;  // raw, in the output's dtype
  std::vector<float> group_scale, lse;
};
// Every group scale and owned element against the reference (fp8 elements decoded with the scale
// they were written with: tests/common/fp8_output_check.hpp), every padding element still poisoned:
// how many were compared and failed, the largest error, the first failures (at most 10).
struct MlaCompare {
  int64_t compared = 0, bad = 0;
  double worst = 0.0, worst_lse = 0.0;
  double worst_rel = 0.0;  // |err| / |reference| over the elements with |reference| >= 1/64
  std::vector<std::string> failures;
  void fail(const std::string& m) {
    if (bad++ < 10) failures.push_back(m);
  }
};
inline MlaCompare compare_mla(const MlaHost& h, const MlaOut& got, const reference::AttentionResult& ref) {
  MlaCompare st;
  const MlaOutput& o = h.output;
  // the instance's 16-bit type (fp8 queries: problem/fp8_io.hpp's compute dtype)
  const Tolerance base = out_tolerance(is_bf16(compute_dtype(h.s.q_dtype, h.s.kv_dtype, o.dtype)));
  const int T = h.tokens(), H = h.s.heads;
  const auto at = [](auto... v) {
    std::string s;
    ((s += "[" + std::to_string(v) + "]"), ...);
    return s;
  };
  if (o.groups > 0) {
    const std::vector<double> want = reference::output_group_scales(ref, T, H, DV, o.dtype, o.format(nullptr, nullptr));
    for (int t = 0; t < T; ++t)
      for (int hh = 0; hh < H; ++hh)
        for (int64_t g = 0; g < o.groups; ++g) {
          const double s = o.scale_of(got.group_scale, t, hh, int(g * o.spec.group));
          const double w = want[size_t((int64_t(t) * H + hh) * o.groups + g)];
          ++st.compared;
          if (!group_scale_matches(s, w, o.spec.ue8m0, base.rtol))
            st.fail("group_scale" + at(t, hh, g) + " = " + std::to_string(s) + ", reference " + std::to_string(w));
        }
  }
  for (size_t i = o.gs_count(); i < got.group_scale.size(); ++i)
    if (!std::isnan(got.group_scale[i])) {
      st.fail("group scale written past the tensor (element " + std::to_string(i) + ")");
      break;
    }
  for (int t = 0; t < T; ++t)
    for (int hh = 0; hh < H; ++hh) {
      const double lr = ref.lse[size_t(hh * T + t)];
      for (int d = 0; d < int(h.o_sh); ++d) {
        const size_t i = size_t(t * h.o_st + hh * h.o_sh + d);
        if (d >= DV) {
          if (!output_poisoned(o.dtype, got.out.data(), i))
            st.fail("padding written at token " + std::to_string(t) + " head " + std::to_string(hh) + " col " +
                    std::to_string(d));
          continue;
        }
        const double scale = o.scale_of(got.group_scale, t, hh, d);
        const double v = decode_output(o.dtype, got.out.data(), i) * scale, r = ref.out[size_t((int64_t(t) * H + hh) * DV + d)];
        const OutputElementCheck c = check_output_element(o.dtype, base, v, r, scale);
        ++st.compared;
        if (lr == -std::numeric_limits<double>::infinity() ? !(v == 0.0) : !c.ok)
          st.fail("out" + at(t, hh, d) + " = " + std::to_string(v) + ", reference " + std::to_string(r) +
                  (is_fp8(o.dtype) ? " (scale " + std::to_string(scale) + ")" : std::string()));
        if (std::isfinite(c.err)) st.worst = std::max(st.worst, c.err);
        if (std::isfinite(v) && std::fabs(r) >= 1.0 / 64)
          st.worst_rel = std::max(st.worst_rel, std::fabs(v - r) / std::fabs(r));
      }
      if (h.s.lse) {
        const double l = got.lse[size_t(t * H + hh)];
        const bool ok = std::isinf(lr) ? (l == lr) : std::fabs(l - lr) <= kLseTolerance.atol + kLseTolerance.rtol * std::fabs(lr);
        ++st.compared;
        if (!ok) st.fail("lse" + at(t, hh) + " = " + std::to_string(l) + ", reference " + std::to_string(lr));
        if (!std::isinf(lr)) st.worst_lse = std::max(st.worst_lse, std::isfinite(l) ? std::fabs(l - lr) : INFINITY);
      }
    }
  return st;
}
// compare_mla's failures as test failures.
inline void expect_matches(const MlaHost& h, const MlaOut& got, const reference::AttentionResult& ref,
                           const std::string& what) {
  const MlaCompare st = compare_mla(h, got, ref);
  for (const std::string& f : st.failures) ADD_FAILURE() << what << ": " << f;
  EXPECT_EQ(st.bad, 0) << what << " (worst |err| " << st.worst << ")";
}

}  // namespace hipattn::testing::mla_test
