// Parity suite of MLA decode (dispatch/mla_decode.hpp: the sm_90 warp-specialised kernel of
// kernels/mla_decode) against the float64 reference (reference/mla_decode.hpp), on the GPU, and the
// context-parallel merge (dispatch/merge_attention_states.hpp) of round-robin ranks.
//
// Outputs in every format of problem/fp8_io.hpp (16-bit; fp8 e4m3fn / e4m3fnuz per tensor or per group
// of 16..128 columns with UE8M0 and group_fp8_max), through the kernel's own epilogue (one partition,
// one-part planned sequences) and the reduce (split sequences); each element decoded with the scale it
// was written with and checked by tests/common/fp8_output_check.hpp's rules (test_fp8_io.cu's).
//
// Problems: seeded std::mt19937_64 data, uniform in [-1, 1] and never 0, rounded to the dtype; the
// latent cache is NaN-filled first, then each sequence's tokens are written to randomly permuted
// pages (fragmented block tables), so that unowned slots past a context, unused pages and the padded
// block-table entries (which point at NaN pages) would poison any output that read them. Queries
// and outputs live in padded strided storage whose padding holds NaN (queries) or the poison
// (outputs). Every launch runs over an output poisoned with NaN codes of its format, group scales and
// LSE poisoned with 0xFF bytes (NaN), is checked (the entry point's error, the runtime's last error,
// the synchronization), and then every group scale and owned element is compared with the reference
// (rows without keys: exactly 0 and LSE -inf) and every padding element must still hold the poison.
//
// MLA decode has a kernel on sm_90 only (the CDNA targets throw ErrorCode::unsupported): the parity
// tests skip themselves, saying why, on any other device, without sm_90a device code, and without a
// GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../common/compare.hpp"
#include "../common/fp8_output_check.hpp"
#include "../common/gpu.hpp"
#include "../common/paged_problem.hpp"
#include "hipattn/dispatch/merge_attention_states.hpp"
#include "hipattn/dispatch/mla_decode.hpp"
#include "hipattn/reference/mla_decode.hpp"
#if defined(HIPATTN_BACKEND_CUDA)
#include "../common/sm90_check.hpp"
#endif

namespace hipattn::testing {
namespace {

constexpr int DK = kMlaQkDim, DV = kMlaLatentDim, DR = kMlaRopeDim;

std::string mla_unavailable() {
  if (!gpu_present()) return "no GPU present: device test skipped";
  const rt::DeviceProperties& dev = rt::cached_device_properties();
  if (dev.target != Target::sm90)
    return "MLA decode has a kernel on sm_90 only; this device is " + dev.arch_name + ": skipped";
#if defined(HIPATTN_BACKEND_CUDA)
  static const std::string code = sm90_check::unavailable(3);
  if (!code.empty()) return code;
#endif
  return {};
}
#define REQUIRE_MLA()                                            \
  do {                                                           \
    const std::string why_ = ::hipattn::testing::mla_unavailable(); \
    if (!why_.empty()) GTEST_SKIP() << why_;                     \
  } while (0)

bool is_bf16(DType d) { return d == DType::bf16; }

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
  int q_pad = 8, o_pad = 8;  // elements after each head row
  bool lse = true;
  bool scale_on_device = true;  // fp8: kv_scale as a device scalar (else the host float)
  float kv_scale = 0.5f;
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

float nonzero_uniform(std::mt19937_64& g, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  for (;;) {
    const float v = u(g);
    if (std::fabs(v) > 1e-3f) return v;
  }
}

// The host side of a problem: storage, the reference's params, the reference's result.
struct MlaHost {
  MlaSpec s;
  int batch = 0, max_pages = 0, num_pages = 0, max_len = 0;
  int64_t q_st = 0, q_sh = 0, qr_st = 0, qr_sh = 0, o_st = 0, o_sh = 0;
  std::vector<uint16_t> q, q_nope, q_rope;  // q joined (the reference's); q_nope / q_rope when split
  std::vector<uint8_t> kv;                  // [num_pages, page_size, 576] of kv_dtype
  std::vector<int32_t> bt, lens;
  float kv_scale = 1.f;
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
    q_sh = DK + s.q_pad;
    q_st = int64_t(s.heads) * q_sh;
    o_sh = DV + s.o_pad;
    o_st = int64_t(s.heads) * o_sh;
    set_output(s.out);
    const uint16_t nan16 = 0x7FFF;
    q.assign(size_t(std::max<int64_t>(1, T * q_st)), nan16);
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < s.heads; ++h)
        for (int d = 0; d < DK; ++d) store_from_float(q.data(), s.q_dtype, t * q_st + h * q_sh + d, nonzero_uniform(g, -1.f, 1.f));
    if (s.split_q) {
      qr_sh = DR + 8;
      qr_st = int64_t(s.heads) * qr_sh + 8;
      const int64_t qn_sh = DV + 8, qn_st = int64_t(s.heads) * qn_sh;
      q_nope.assign(size_t(std::max<int64_t>(1, T * qn_st)), nan16);
      q_rope.assign(size_t(std::max<int64_t>(1, T * qr_st)), nan16);
      for (int t = 0; t < T; ++t)
        for (int h = 0; h < s.heads; ++h) {
          for (int d = 0; d < DV; ++d) q_nope[size_t(t * qn_st + h * qn_sh + d)] = q[size_t(t * q_st + h * q_sh + d)];
          for (int d = 0; d < DR; ++d) q_rope[size_t(t * qr_st + h * qr_sh + d)] = q[size_t(t * q_st + h * q_sh + DV + d)];
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

  reference::AttentionResult reference() const {
    reference::MlaDecodeParams r;
    r.q = q.data();
    r.q_dtype = s.q_dtype;
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

// Group scales past the tensor's last element, which must stay poisoned.
constexpr size_t kScaleGuard = 16;

struct MlaDevice {
  const MlaHost& h;
  DeviceBuffer q, q_nope, q_rope, kv, bt, lens, scale, out, lse, out_scale, group_scale, ws;
  size_t ws_bytes = 0;
  explicit MlaDevice(const MlaHost& hp, size_t workspace_bytes)
      : h(hp), q(DeviceBuffer::from(hp.q)), kv(DeviceBuffer::from(hp.kv)), bt(DeviceBuffer::from(hp.bt)),
        lens(DeviceBuffer::from(hp.lens)),
        ws_bytes(workspace_bytes) {
    if (hp.s.split_q) {
      q_nope = DeviceBuffer::from(hp.q_nope);
      q_rope = DeviceBuffer::from(hp.q_rope);
    }
    scale = DeviceBuffer::from(std::vector<float>{hp.kv_scale});
    out = DeviceBuffer(std::max<size_t>(16, size_t(hp.tokens()) * hp.o_st * dtype_size(hp.output.dtype)));
    lse = DeviceBuffer(std::max<size_t>(16, size_t(hp.tokens()) * hp.s.heads * 4));
    out_scale = DeviceBuffer::from(std::vector<float>{hp.output.tensor_scale});
    group_scale = DeviceBuffer((hp.output.gs_count() + kScaleGuard) * sizeof(float));
    if (ws_bytes > 0) ws = DeviceBuffer(ws_bytes);
  }
  MlaDecodeParams params() const {
    MlaDecodeParams p;
    if (h.s.split_q) {
      p.q = q_nope.ptr;
      p.q_stride_head = DV + 8;
      p.q_stride_token = int64_t(h.s.heads) * (DV + 8);
      p.q_rope = q_rope.ptr;
      p.q_rope_stride_head = h.qr_sh;
      p.q_rope_stride_token = h.qr_st;
    } else {
      p.q = q.ptr;
      p.q_stride_token = h.q_st;
      p.q_stride_head = h.q_sh;
    }
    p.q_dtype = h.s.q_dtype;
    p.q_len = h.s.q_len;
    p.kv_cache = kv.ptr;
    p.kv_dtype = h.s.kv_dtype;
    p.kv_stride_page = int64_t(h.s.page_size) * DK;
    p.kv_stride_slot = DK;
    p.num_pages = h.num_pages;
    p.page_size = h.s.page_size;
    if (is_fp8(h.s.kv_dtype)) {
      if (h.s.scale_on_device) p.kv_scale = scale.as<float>();
      else p.kv_scale_value = h.kv_scale;
    }
    p.block_table = bt.as<int32_t>();
    p.block_table_stride = h.max_pages;
    p.max_pages_per_seq = h.max_pages;
    p.seq_lens_k = lens.as<int32_t>();
    p.batch = h.batch;
    p.max_seqlen_k = h.max_len;
    p.num_heads = h.s.heads;
    p.scale = h.scale();
    p.out = out.ptr;
    p.o_stride_token = h.o_st;
    p.o_stride_head = h.o_sh;
    p.out_format = h.output.format(group_scale.as<float>(), out_scale.as<float>());
    if (h.s.lse) {
      p.lse = lse.as<float>();
      p.lse_stride_token = h.s.heads;
      p.lse_stride_head = 1;
    }
    return p;
  }
  void poison(rt::stream_t st) {
    HIPATTN_CHECK(rt::memset_async(out.ptr, output_poison_byte(h.output.dtype), out.bytes, st));
    HIPATTN_CHECK(rt::memset_async(lse.ptr, 0xFF, lse.bytes, st));
    HIPATTN_CHECK(rt::memset_async(group_scale.ptr, 0xFF, group_scale.bytes, st));
  }
};

MlaDecodeTraits traits_of(const MlaHost& h) {
  MlaDecodeTraits t;
  t.max_batch = h.batch;
  t.max_q_len = h.s.q_len;
  t.num_heads = h.s.heads;
  t.max_seqlen_k = h.max_len;
  return t;
}

struct MlaOut {
  std::vector<uint8_t> out;  // raw, in the output's dtype
  std::vector<float> group_scale, lse;
};
MlaOut fetch(const MlaDevice& d) {
  MlaOut r;
  r.out.resize(d.out.bytes);
  r.group_scale.resize(d.group_scale.bytes / sizeof(float));  // the scales, then the guard
  r.lse.resize(d.lse.bytes / 4);
  HIPATTN_CHECK(rt::memcpy_d2h(r.out.data(), d.out.ptr, d.out.bytes));
  HIPATTN_CHECK(rt::memcpy_d2h(r.group_scale.data(), d.group_scale.ptr, d.group_scale.bytes));
  HIPATTN_CHECK(rt::memcpy_d2h(r.lse.data(), d.lse.ptr, d.lse.bytes));
  return r;
}

// Every group scale and owned element against the reference (fp8 elements decoded with the scale
// they were written with: tests/common/fp8_output_check.hpp), every padding element still poisoned.
void expect_matches(const MlaHost& h, const MlaOut& got, const reference::AttentionResult& ref, const std::string& what) {
  const MlaOutput& o = h.output;
  const Tolerance base = out_tolerance(is_bf16(h.s.q_dtype));
  const int T = h.tokens(), H = h.s.heads;
  int bad = 0;
  double worst = 0.0;
  if (o.groups > 0) {
    const std::vector<double> want = reference::output_group_scales(ref, T, H, DV, o.dtype, o.format(nullptr, nullptr));
    for (int t = 0; t < T && bad < 10; ++t)
      for (int hh = 0; hh < H && bad < 10; ++hh)
        for (int64_t g = 0; g < o.groups; ++g) {
          const double s = o.scale_of(got.group_scale, t, hh, int(g * o.spec.group));
          const double w = want[size_t((int64_t(t) * H + hh) * o.groups + g)];
          if (!group_scale_matches(s, w, o.spec.ue8m0, base.rtol)) {
            ADD_FAILURE() << what << ": group_scale[" << t << "][" << hh << "][" << g << "] = " << s << ", reference " << w;
            ++bad;
          }
        }
  }
  for (size_t i = o.gs_count(); i < got.group_scale.size(); ++i)
    if (!std::isnan(got.group_scale[i])) {
      ADD_FAILURE() << what << ": group scale written past the tensor (element " << i << ")";
      ++bad;
      break;
    }
  for (int t = 0; t < T && bad < 10; ++t)
    for (int hh = 0; hh < H && bad < 10; ++hh) {
      const double lr = ref.lse[size_t(hh * T + t)];
      for (int d = 0; d < int(h.o_sh); ++d) {
        const size_t i = size_t(t * h.o_st + hh * h.o_sh + d);
        if (d >= DV) {
          if (!output_poisoned(o.dtype, got.out.data(), i)) {
            ADD_FAILURE() << what << ": padding written at token " << t << " head " << hh << " col " << d;
            ++bad;
          }
          continue;
        }
        const double scale = o.scale_of(got.group_scale, t, hh, d);
        const double v = decode_output(o.dtype, got.out.data(), i) * scale, r = ref.out[size_t((int64_t(t) * H + hh) * DV + d)];
        const OutputElementCheck c = check_output_element(o.dtype, base, v, r, scale);
        if (lr == -std::numeric_limits<double>::infinity() ? !(v == 0.0) : !c.ok) {
          ADD_FAILURE() << what << ": out[" << t << "][" << hh << "][" << d << "] = " << v << ", reference " << r
                        << (is_fp8(o.dtype) ? " (scale " + std::to_string(scale) + ")" : std::string());
          ++bad;
        }
        if (std::isfinite(c.err)) worst = std::max(worst, c.err);
      }
      if (h.s.lse) {
        const double l = got.lse[size_t(t * H + hh)];
        const bool ok = std::isinf(lr) ? (l == lr) : std::fabs(l - lr) <= kLseTolerance.atol + kLseTolerance.rtol * std::fabs(lr);
        if (!ok) {
          ADD_FAILURE() << what << ": lse[" << t << "][" << hh << "] = " << l << ", reference " << lr;
          ++bad;
        }
      }
    }
  EXPECT_EQ(bad, 0) << what << " (worst |err| " << worst << ")";
}

MlaOut run_checked(MlaDevice& d, const MlaDecodeOptions& opt, rt::stream_t st = nullptr) {
  d.poison(st);
  mla_decode(d.params(), d.ws.ptr, d.ws_bytes, st, opt);
  HIPATTN_CHECK(rt::get_last_error());
  HIPATTN_CHECK(rt::device_synchronize());
  return fetch(d);
}

void run_case(const MlaSpec& s) {
  SCOPED_TRACE(s.str());
  const MlaHost h(s);
  MlaDecodeOptions opt;
  opt.split = s.split;
  MlaDevice d(h, mla_decode_workspace_size(traits_of(h), opt));
  const MlaOut got = run_checked(d, opt);
  expect_matches(h, got, h.reference(), s.str());
}

std::vector<int> ragged_lens(int batch, int max_len, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<int> u(0, max_len);
  std::vector<int> v(static_cast<size_t>(batch));
  for (int& x : v) x = u(g);
  return v;
}

// ---- the parity sweep ----

TEST(MlaDecode, HeadsQLenPagesBf16) {
  REQUIRE_MLA();
  uint64_t seed = 10;
  for (int heads : {16, 32, 64, 128})
    for (int q_len : {1, 2, 4, 8})
      for (int page : {1, 64, 17}) {
        if ((heads >= 64 && q_len >= 4) && page != 64) continue;  // (the largest row counts: one page size)
        MlaSpec s;
        s.heads = heads;
        s.q_len = q_len;
        s.page_size = page;
        s.lens = ragged_lens(3, 700, seed);
        s.lens.push_back(q_len > 1 ? q_len - 1 : 0);  // shorter than q_len (0 included)
        s.seed = seed++;
        run_case(s);
      }
}

TEST(MlaDecode, DtypesAndFp8Caches) {
  REQUIRE_MLA();
  uint64_t seed = 100;
  for (DType q : {DType::bf16, DType::f16})
    for (DType kv : {DType::bf16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz}) {
      MlaSpec s;
      s.q_dtype = q;
      s.kv_dtype = kv == DType::bf16 ? q : kv;
      s.heads = 32;
      s.q_len = 2;
      s.page_size = 64;
      s.lens = {1, 130, 513, 64};
      s.seed = seed++;
      run_case(s);
      if (is_fp8(kv)) {
        s.scale_on_device = false;  // the host float
        s.kv_scale = 1.75f;
        s.seed = seed++;
        run_case(s);
      }
    }
}

TEST(MlaDecode, SplitQueryAndStrides) {
  REQUIRE_MLA();
  for (bool split : {false, true})
    for (int heads : {16, 128}) {
      MlaSpec s;
      s.split_q = split;
      s.heads = heads;
      s.q_len = 3;
      s.page_size = 1;
      s.q_pad = 24;
      s.o_pad = 40;
      s.lens = {257, 3, 1000};
      s.seed = 200 + heads + split;
      run_case(s);
    }
}

TEST(MlaDecode, PlannedAndOnePartitionAgree) {
  REQUIRE_MLA();
  for (MlaDecodeSplit sp : {MlaDecodeSplit::one_partition, MlaDecodeSplit::planned, MlaDecodeSplit::automatic}) {
    MlaSpec s;
    s.split = sp;
    s.heads = 16;
    s.q_len = 1;
    s.page_size = 64;
    s.lens = {8192, 17, 0, 3000, 1};
    s.seed = 300;
    run_case(s);
  }
}

TEST(MlaDecode, LongRaggedContexts) {
  REQUIRE_MLA();
  MlaSpec s;
  s.heads = 16;
  s.q_len = 2;
  s.page_size = 1;
  s.lens = {32768, 0, 12345, 1, 20000};
  s.lse = true;
  s.seed = 400;
  run_case(s);
}

TEST(MlaDecode, NoLse) {
  REQUIRE_MLA();
  MlaSpec s;
  s.lse = false;
  s.heads = 64;
  s.q_len = 1;
  s.lens = {100, 200};
  s.seed = 500;
  run_case(s);
}

TEST(MlaDecode, GraphReplayWithChangedLengths) {
  REQUIRE_MLA();
  MlaSpec s;
  s.heads = 16;
  s.q_len = 2;
  s.page_size = 64;
  s.lens = {4000, 1200, 64, 9};
  s.split = MlaDecodeSplit::planned;
  s.seed = 600;
  const MlaHost h(s);
  MlaDecodeOptions opt;
  opt.split = s.split;
  MlaDevice d(h, mla_decode_workspace_size(traits_of(h), opt));
  const MlaDecodeParams p = d.params();
  const rt::CapturedGraph graph([&](rt::stream_t st) { mla_decode(p, d.ws.ptr, d.ws_bytes, st, opt); });
  // other lengths (each within the pages its block-table row gives), then replay
  MlaHost h2 = h;
  h2.lens = {2500, 1150, 1, 0};
  HIPATTN_CHECK(rt::memcpy_h2d(d.lens.ptr, h2.lens.data(), h2.lens.size() * 4));
  d.poison(nullptr);
  graph.launch(nullptr);
  HIPATTN_CHECK(rt::get_last_error());
  HIPATTN_CHECK(rt::device_synchronize());
  const MlaOut replay = fetch(d);
  expect_matches(h2, replay, h2.reference(), "graph replay");
  const MlaOut eager = run_checked(d, opt);
  EXPECT_EQ(std::memcmp(replay.out.data(), eager.out.data(), replay.out.size()), 0) << "replay != eager";
  EXPECT_EQ(std::memcmp(replay.lse.data(), eager.lse.data(), replay.lse.size() * 4), 0) << "replay != eager (lse)";
}

// ---- the output formats (problem/fp8_io.hpp) ----

// One problem's launches in several output formats, each through one partition (the kernel's
// epilogue writes every sequence) and the planned path (the reduce writes the split sequences, the
// epilogue the one-part ones). The inputs and the reference are the problem's, shared by its launches.
void run_formats(const MlaSpec& s, const std::vector<OutSpec>& formats) {
  MlaHost h(s);
  const reference::AttentionResult ref = h.reference();
  for (const OutSpec& o : formats) {
    h.set_output(o);
    for (MlaDecodeSplit sp : {MlaDecodeSplit::one_partition, MlaDecodeSplit::planned}) {
      const std::string what = h.s.str() + (sp == MlaDecodeSplit::planned ? " planned" : " one partition");
      SCOPED_TRACE(what);
      MlaDecodeOptions opt;
      opt.split = sp;
      MlaDevice d(h, mla_decode_workspace_size(traits_of(h), opt));
      expect_matches(h, run_checked(d, opt), ref, what);
    }
  }
}

// vLLM's fp8 outputs: per tensor (e4m3fn with the host scale, e4m3fnuz with a device scalar), per
// group (e4m3fn 64; 128 with UE8M0, column-major scales; e4m3fnuz 32 with fp8 max 224), over a bf16
// and an fp8 cache, 16 and 128 heads, q_len 1 and 4, with a context shorter than q_len (rows without
// keys: zeros, each group's scale that of a zero maximum).
TEST(MlaDecode, Fp8Outputs) {
  REQUIRE_MLA();
  std::vector<OutSpec> formats(5);
  formats[0].dtype = DType::fp8_e4m3fn;
  formats[1].dtype = DType::fp8_e4m3fnuz;
  formats[1].scale_on_device = true;
  formats[2].dtype = DType::fp8_e4m3fn;
  formats[2].group = 64;
  formats[3].dtype = DType::fp8_e4m3fn;
  formats[3].group = 128;
  formats[3].ue8m0 = true;
  formats[3].col_major_scales = true;
  formats[4].dtype = DType::fp8_e4m3fnuz;
  formats[4].group = 32;
  formats[4].group_max = 224.f;
  uint64_t seed = 800;
  for (DType kv : {DType::bf16, DType::fp8_e4m3fn})
    for (int heads : {16, 128})
      for (int q_len : {1, 4}) {
        MlaSpec s;
        s.kv_dtype = (is_fp8(kv) && heads == 128) ? DType::fp8_e4m3fnuz : kv;  // both fp8 cache formats
        s.heads = heads;
        s.q_len = q_len;
        s.page_size = heads == 16 ? 17 : 64;
        s.o_pad = 16;  // an fp8 row of 528 bytes: a 16-byte multiple
        s.lens = {1000, 130, q_len - 1, 333};  // q_len - 1: no key for the first row (q_len 1: no context)
        s.seed = seed++;
        run_formats(s, formats);
      }
}

// fp16 queries and cache: the 16-bit output named explicitly, and groups of 16 (one 16-column block
// of the accumulator each) with column-major scales and a host per-tensor scale in e4m3fnuz.
TEST(MlaDecode, OutputFormatsFp16) {
  REQUIRE_MLA();
  std::vector<OutSpec> formats(3);
  formats[0].dtype = DType::f16;
  formats[1].dtype = DType::fp8_e4m3fn;
  formats[1].group = 16;
  formats[1].col_major_scales = true;
  formats[2].dtype = DType::fp8_e4m3fnuz;
  MlaSpec s;
  s.q_dtype = s.kv_dtype = DType::f16;
  s.heads = 32;
  s.q_len = 2;
  s.page_size = 64;
  s.o_pad = 48;
  s.lens = {513, 1, 64, 2049};
  s.seed = 850;
  run_formats(s, formats);
}

// ---- context parallelism: round-robin ranks, merged by LSE ----

// Rank r of W owns global tokens g = j W + r (page size 1: its own block table over the same cache).
TEST(MlaDecode, ContextParallelRoundRobinMerge) {
  REQUIRE_MLA();
  for (int W : {2, 3, 4, 7, 8}) {
    SCOPED_TRACE("W = " + std::to_string(W));
    MlaSpec s;
    s.heads = 32;
    s.q_len = 1;
    s.page_size = 1;
    s.lens = {1000, W - 1, 1, 0, 257};  // contexts shorter than W included
    s.seed = 700 + W;
    const MlaHost h(s);
    const reference::AttentionResult ref = h.reference();
    const int T = h.tokens(), H = s.heads;
    // the ranks' partial outputs [W, T, H, 512] (bf16) and LSEs [W, T, H]
    DeviceBuffer parts(size_t(W) * T * H * DV * 2), part_lse(size_t(W) * T * H * 4);
    MlaDevice d(h, 0);
    for (int r = 0; r < W; ++r) {
      std::vector<int32_t> bt(h.bt.size(), h.bt.back()), lens(size_t(h.batch));
      for (int b = 0; b < h.batch; ++b) {
        const int L = h.lens[size_t(b)];
        const int n = L > r ? (L - r + W - 1) / W : 0;
        lens[size_t(b)] = n;
        for (int j = 0; j < n; ++j) bt[size_t(b) * h.max_pages + j] = h.bt[size_t(b) * h.max_pages + (j * W + r)];
      }
      DeviceBuffer rbt = DeviceBuffer::from(bt), rlens = DeviceBuffer::from(lens);
      MlaDecodeParams p = d.params();
      p.block_table = rbt.as<int32_t>();
      p.seq_lens_k = rlens.as<int32_t>();
      p.out = static_cast<char*>(parts.ptr) + size_t(r) * T * H * DV * 2;
      p.o_stride_token = int64_t(H) * DV;
      p.o_stride_head = DV;
      p.lse = part_lse.as<float>() + size_t(r) * T * H;
      p.lse_stride_token = H;
      p.lse_stride_head = 1;
      MlaDecodeOptions opt;
      opt.split = MlaDecodeSplit::one_partition;
      mla_decode(p, nullptr, 0, nullptr, opt);
      HIPATTN_CHECK(rt::get_last_error());
      HIPATTN_CHECK(rt::device_synchronize());
    }
    MergeAttentionStatesParams m;
    m.partial_out = parts.ptr;
    m.partial_dtype = s.q_dtype;
    m.po_stride_rank = int64_t(T) * H * DV;
    m.po_stride_token = int64_t(H) * DV;
    m.po_stride_head = DV;
    m.partial_lse = part_lse.as<float>();
    m.plse_stride_rank = int64_t(T) * H;
    m.plse_stride_token = H;
    m.plse_stride_head = 1;
    m.num_ranks = W;
    m.num_tokens = T;
    m.num_heads = H;
    m.head_size = DV;
    d.poison(nullptr);
    m.out = d.out.ptr;
    m.out_dtype = s.q_dtype;
    m.o_stride_token = h.o_st;
    m.o_stride_head = h.o_sh;
    m.lse = d.lse.as<float>();
    m.lse_stride_token = H;
    m.lse_stride_head = 1;
    merge_attention_states(m, nullptr);
    HIPATTN_CHECK(rt::get_last_error());
    HIPATTN_CHECK(rt::device_synchronize());
    expect_matches(h, fetch(d), ref, "merged W=" + std::to_string(W));
  }
}

// ---- errors ----

// An e4m3fn output over p's own buffer with packed strides (the test rows' 8 elements of padding are
// not a 16-byte multiple in one-byte elements), per tensor (group 0: the host scale 1) or per group
// with no scale tensor yet.
void fp8_output(MlaDecodeParams& p, int32_t group) {
  p.out_format.dtype = DType::fp8_e4m3fn;
  p.o_stride_head = DV;
  p.o_stride_token = int64_t(p.num_heads) * DV;
  if (group > 0) {
    p.out_format.group_size = group;
    p.out_format.group_scale_stride_group = 1;
    p.out_format.group_scale_stride_token = int64_t(p.num_heads) * (DV / group);
  }
}

TEST(MlaDecode, TypedErrors) {
  REQUIRE_MLA();
  MlaSpec s;
  s.lens = {10};
  const MlaHost h(s);
  MlaDevice d(h, 0);
  {
    MlaDecodeParams p = d.params();
    p.q_len = 9;
    try {
      mla_decode(p, nullptr, 0, nullptr);
      ADD_FAILURE() << "q_len 9 accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::unsupported);  // MTP beyond kMlaMaxQLen
      EXPECT_EQ(e.field(), "q_len");
    }
  }
  {
    MlaDecodeParams p = d.params();
    MlaDecodeOptions opt;
    opt.split = MlaDecodeSplit::planned;
    try {
      mla_decode(p, nullptr, 0, nullptr, opt);
      ADD_FAILURE() << "planned call without workspace accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::workspace);
    }
  }
  // bad output formats are refused before any launch, naming the field
  struct Bad {
    const char* field;
    ErrorCode code;
    std::function<void(MlaDecodeParams&)> set;
  };
  const Bad bads[] = {
      {"out_format.scale.host", ErrorCode::invalid_argument, [](MlaDecodeParams& p) { fp8_output(p, 0); p.out_format.scale.host = 0.f; }},
      {"out_format.scale.host", ErrorCode::invalid_argument, [](MlaDecodeParams& p) { fp8_output(p, 0); p.out_format.scale.host = -2.f; }},
      {"out_format.scale.host", ErrorCode::invalid_argument,
       [](MlaDecodeParams& p) { fp8_output(p, 0); p.out_format.scale.host = std::nanf(""); }},
      {"out_format.group_size", ErrorCode::unsupported, [](MlaDecodeParams& p) { fp8_output(p, 48); }},
      {"out_format.group_scale", ErrorCode::invalid_argument, [](MlaDecodeParams& p) { fp8_output(p, 64); }},  // null
      {"o_stride_head", ErrorCode::invalid_argument, [](MlaDecodeParams& p) {
         fp8_output(p, 0);
         p.o_stride_head = DV + 8;  // 520 one-byte elements: not a 16-byte multiple
         p.o_stride_token = int64_t(p.num_heads) * (DV + 16);
       }},
  };
  for (const Bad& b : bads) {
    MlaDecodeParams p = d.params();
    b.set(p);
    d.poison(nullptr);
    try {
      mla_decode(p, nullptr, 0, nullptr);
      ADD_FAILURE() << b.field << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), b.field) << e.what();
      EXPECT_EQ(e.code(), b.code) << e.what();
    }
  }
}

}  // namespace
}  // namespace hipattn::testing
