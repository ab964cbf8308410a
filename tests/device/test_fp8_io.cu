// tests/device/test_fp8_io.cu: vLLM's fp8 attention contract (problem/fp8_io.hpp, ALGORITHM.md section
// 12) on the GPU: fp8 queries (e4m3fn / e4m3fnuz with a per-tensor q_scale, over 16-bit or fp8 caches)
// and fp8 outputs (per-tensor output scale, per-group scales with and without UE8M0), through unified
// attention (2D, 3D uniform, 3D planned) and paged decode (one partition, planned), every element and
// LSE against the float64 reference; saturation and NaN of the fp8 output; typed errors for bad scales.
//
// Each case draws fresh random inputs, poisons the output and the group scales (NaN codes) before each
// launch, and checks every launch. An fp8 output element is compared after decoding with the scale it
// was written with (the per-tensor one, or the kernel's own group scale, itself checked against the
// reference's) by tests/common/fp8_output_check.hpp's rules: |got - want| <= atol + rtol |want| with
// rtol the 16-bit tolerance plus half an fp8 step (2^-4) and atol the 16-bit one plus half the
// smallest fp8 subnormal times the scale.
//
// The fp8 matrix path (e4m3fn queries and cache on sm_90, Fp8Math): the scores are exact products,
// but fp8_pv quantizes P to e4m3 (x 2^8), so where it may run every element also gets P's bound:
//   2^-4 sum_j p_j |v_j| / l  (RNE, 3 mantissa bits)  +  2^-18 n max |v|  (P x 2^8 below e4m3's
//   smallest normal: absolute steps of 2^-9 / 2^8), sum_j p_j |v_j| / l from the float64 reference
//   run on |V|. Fp8Io.MatrixPathAccuracy measures the three Fp8Math paths on the same problems.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../common/compare.hpp"
#include "../common/fp8_output_check.hpp"
#include "../common/gpu.hpp"
#include "hipattn/dispatch/paged_decode.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/dispatch/unified_attention.hpp"
#include "hipattn/reference/reference.hpp"

namespace hipattn::testing {
namespace {

std::string dt(DType d) { return std::string(dtype_name(d)); }

// One case of the sweep.
struct IoCase {
  DType q = DType::bf16;
  DType kv = DType::bf16;
  DType out = DType::bf16;
  int group = 0;  // fp8 output: 0 per tensor, else the group size
  bool ue8m0 = false;
  float group_max = 0.f;
  bool device_scales = false;  // q_scale / out scale as device scalars (else host floats)
  int head_size = 128;
  int variant = 0;  // picks features and shapes
  bool decode = false;  // paged decode (uniform q_len) instead of a unified prefill/decode mix
  float out_scale = 0.f;  // fp8 per-tensor output scale; 0: out_tensor_scale(out)
  Fp8Math math = Fp8Math::fp8_qk;  // fp8 queries over an fp8 cache (the matrix path on sm_90 with e4m3fn)
  bool long_prefill = false;       // two long prefill sequences instead of the variant's mix
};

// Whether a case may quantize P (Fp8Math::fp8_pv on the fp8 matrix path, no per-key V scale).
bool may_quantize_p(const IoCase& c, KvScaleMode mode) {
  return c.q == DType::fp8_e4m3fn && c.kv == DType::fp8_e4m3fn && c.math == Fp8Math::fp8_pv &&
         mode != KvScaleMode::per_token_head;
}

std::string case_name(const IoCase& c) {
  std::string s = std::string(c.decode ? "decode_" : "unified_") + "q_" + dt(c.q) + "_kv_" + dt(c.kv) + "_out_" + dt(c.out);
  if (is_fp8(c.out)) s += c.group > 0 ? "_g" + std::to_string(c.group) + (c.ue8m0 ? "ue8m0" : "") : "_tensor";
  if (c.group_max > 0.f) s += "_max" + std::to_string(int(c.group_max));
  s += "_d" + std::to_string(c.head_size) + (c.device_scales ? "_dev" : "_host") + "_v" + std::to_string(c.variant);
  if (c.math != Fp8Math::fp8_qk) s += std::string("_") + fp8_math_name(c.math);
  if (c.long_prefill) s += "_long";
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

// The problem of a case: the shape and features from its variant, the 16-bit type of the instance.
ProblemSpec spec_of(const IoCase& c) {
  ProblemSpec s;
  const DType compute = compute_dtype(c.q, c.kv, c.out);
  s.bf16 = compute == DType::bf16;
  s.kv_dtype = c.kv;
  s.scale_mode = is_fp8(c.kv) ? (c.variant % 3 == 2 ? KvScaleMode::per_token_head : KvScaleMode::per_tensor)
                              : KvScaleMode::none;
  s.head_size = c.head_size;
  s.num_q_heads = c.variant % 2 == 0 ? 8 : 4;
  s.num_kv_heads = c.variant % 4 == 1 ? 4 : 2;
  s.block_size = c.variant % 2 == 0 ? 16 : 5;
  s.sinks = c.variant % 3 == 0;
  s.alibi = c.variant % 4 == 2;
  s.softcap = c.variant % 5 == 1 ? 20.f : 0.f;
  s.window_left = c.variant % 5 == 3 ? 37 : -1;
  s.lse = true;
  s.seed = 0xf8f8u + 977u * uint64_t(c.variant) + 31u * uint64_t(c.head_size) + 7u * uint64_t(c.q) + uint64_t(c.out);
  if (c.long_prefill) {
    s.seqs = {{128, 512}, {64, 300}};
  } else if (c.decode) {
    const int ql = 1 + c.variant % 4;
    s.seqs = {{ql, 70}, {ql, 300}, {ql, ql}, {ql, 17}, {ql, 129}};
  } else {
    s.seqs = {{7, 40}, {1, 77}, {12, 12}, {0, 9}, {3, 200}, {1, 1}};
  }
  return s;
}

// The fp8 codes of the host problem's queries (their 16-bit values / q_scale), and that scale.
struct Fp8Queries {
  std::vector<uint8_t> codes;
  float scale = 1.f;
};
Fp8Queries make_fp8_queries(const HostProblem& h, DType q) {
  Fp8Queries f;
  f.scale = 1.f / 48.f;  // |x| < ~4 -> codes up to ~192, inside both formats' ranges
  f.codes.resize(h.q.size());
  for (size_t i = 0; i < h.q.size(); ++i) {
    const float x = h.spec.bf16 ? bfloat16_t::from_bits(h.q[i]).to_float() : half_t::from_bits(h.q[i]).to_float();
    f.codes[i] = q == DType::fp8_e4m3fn ? fp8_e4m3fn_t::from_float(x / f.scale).bits
                                        : fp8_e4m3fnuz_t::from_float(x / f.scale).bits;
  }
  return f;
}

// The per-tensor fp8 output scale of a case: outputs within |O| < ~3 land near the top of the format.
float out_tensor_scale(DType out) { return out == DType::fp8_e4m3fnuz ? 1.f / 64.f : 1.f / 128.f; }

// The outputs of one launch, on the device, in the case's format.
struct IoOutputs {
  DeviceBuffer q8, q_scale, out_scale, group_scale;
  int64_t groups = 0;  // per (token, head)
};

// The problem's params with the case's query dtype and output format (device or host pointers).
void apply_io(UnifiedAttentionParams& p, const IoCase& c, const void* q8, const float* q_scale_ptr, float q_scale,
              const float* out_scale_ptr, float out_scale, float* group_scale, int64_t T, int64_t H) {
  p.fp8_math = c.math;
  if (is_fp8(c.q)) {
    p.q = q8;
    p.q_dtype = c.q;
    if (q_scale_ptr != nullptr) p.q_scale.device = q_scale_ptr;
    else p.q_scale.host = q_scale;
  }
  p.out_format.dtype = c.out;
  if (is_fp8(c.out) && c.group == 0) {
    if (out_scale_ptr != nullptr) p.out_format.scale.device = out_scale_ptr;
    else p.out_format.scale.host = out_scale;
  }
  if (is_fp8(c.out) && c.group > 0) {
    const int64_t groups = p.head_size / c.group;
    p.out_format.group_size = c.group;
    p.out_format.group_scale = group_scale;
    p.out_format.group_ue8m0 = c.ue8m0;
    p.out_format.group_fp8_max = c.group_max;
    // column-major for odd variants (token stride 1), row-major otherwise
    if (c.variant % 2 == 1) {
      p.out_format.group_scale_stride_token = 1;
      p.out_format.group_scale_stride_group = T;
    } else {
      p.out_format.group_scale_stride_token = H * groups;
      p.out_format.group_scale_stride_group = 1;
    }
  }
  (void)T;
}

struct IoStats {
  int64_t bad = 0, checked = 0, saturated = 0, nan = 0;
  double max_abs = 0;  // of the elements within tolerance
  double sum_sq_err = 0, sum_sq_ref = 0;  // finite elements: rel_l2
  double rel_l2() const { return sum_sq_ref > 0 ? std::sqrt(sum_sq_err / sum_sq_ref) : std::sqrt(sum_sq_err); }
  std::string first_bad;
  void fail(const std::string& what) {
    if (bad++ == 0) first_bad = what;
  }
};

// P's quantization bound of the fp8 matrix path (the header): per element, from the reference on
// |V| (p_abs) and the largest |v| x n term; empty when P is not quantized.
struct PBound {
  std::vector<double> p_abs;  // sum_j p_j |v_j| / l per output element
  double floor = 0;           // 2^-18 max_keys max |v|
  double at(size_t i) const { return p_abs.empty() ? 0.0 : std::exp2(-4.0) * p_abs[i] + floor; }
};

// Decodes and checks every output element, group scale and LSE of a launch against the reference
// (tests/common/fp8_output_check.hpp's rules, with P's bound where P may be quantized).
IoStats check_outputs(const IoCase& c, const HostProblem& h, const UnifiedAttentionParams& hp,
                      const reference::AttentionResult& ref, const std::vector<uint8_t>& out,
                      const std::vector<float>& gscale, const std::vector<float>& lse, float out_scale,
                      const PBound& pb) {
  IoStats st;
  const int64_t T = h.num_tokens, H = h.spec.num_q_heads, D = h.spec.head_size;
  const bool fp8 = is_fp8(c.out);
  const Tolerance base = out_tolerance(compute_dtype(c.q, c.kv, c.out) == DType::bf16);
  const int64_t groups = c.group > 0 ? D / c.group : 0;
  std::vector<double> want_s;
  if (fp8 && c.group > 0) want_s = reference::output_group_scales(ref, T, H, D, c.out, hp.out_format);
  auto gs_index = [&](int64_t t, int64_t h, int64_t g) {
    return t * hp.out_format.group_scale_stride_token + (h * groups + g) * hp.out_format.group_scale_stride_group;
  };
  // group scales first (the elements decode with them); P's bound moves a group's maximum by at most
  // its elements' largest bound
  if (fp8 && c.group > 0) {
    const double fp8_max = group_fp8_max(c.out, hp.out_format);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t hh = 0; hh < H; ++hh)
        for (int64_t g = 0; g < groups; ++g) {
          double slack = 0;
          for (int64_t d = g * c.group; d < (g + 1) * c.group; ++d)
            slack = std::max(slack, pb.at(size_t((t * H + hh) * D + d)) / fp8_max);
          const double got = gscale[size_t(gs_index(t, hh, g))], want = want_s[size_t((t * H + hh) * groups + g)];
          ++st.checked;
          if (!group_scale_matches(got, want, c.ue8m0, base.rtol, slack))
            st.fail("group_scale[t " + std::to_string(t) + ", h " + std::to_string(hh) + ", g " + std::to_string(g) +
                    "] = " + std::to_string(got) + ", want " + std::to_string(want));
        }
  }
  for (int64_t t = 0; t < T; ++t)
    for (int64_t hh = 0; hh < H; ++hh)
      for (int64_t d = 0; d < D; ++d) {
        const size_t i = size_t((t * H + hh) * D + d);
        const double want = ref.out[i];
        const double scale = !fp8 ? 1.0 : c.group > 0 ? double(gscale[size_t(gs_index(t, hh, d / c.group))]) : double(out_scale);
        const double got = decode_output(c.out, out.data(), i) * scale;
        ++st.checked;
        const OutputElementCheck e = check_output_element(c.out, base, got, want, scale, pb.at(i));
        st.nan += e.nan;
        st.saturated += e.saturated;
        if (!e.ok) {
          st.fail("out[t " + std::to_string(t) + ", h " + std::to_string(hh) + ", d " + std::to_string(d) + "] = " +
                  std::to_string(got) + (e.nan ? ", want NaN" : e.saturated ? ", want the saturated max" : "") +
                  " (raw byte 0x" + std::to_string(out[i * dtype_size(c.out)]) + "), want " + std::to_string(want));
          continue;
        }
        if (e.nan || e.saturated) continue;
        st.max_abs = std::max(st.max_abs, e.err);
        st.sum_sq_err += e.err * e.err;
        st.sum_sq_ref += want * want;
      }
  for (int64_t hh = 0; hh < H; ++hh)
    for (int64_t t = 0; t < T; ++t) {
      const double got = lse[size_t(hh * T + t)], want = ref.lse[size_t(hh * T + t)];
      ++st.checked;
      const bool ok = std::isinf(want) ? got == want : std::fabs(got - want) <= kLseTolerance.atol + kLseTolerance.rtol * std::fabs(want);
      if (!ok) st.fail("lse[h " + std::to_string(hh) + ", t " + std::to_string(t) + "] = " + std::to_string(got) + ", want " + std::to_string(want));
    }
  return st;
}

// The launches of a case: through unified attention (2D, 3D uniform, and 3D planned for a decode
// batch) or paged decode (one partition, planned), each over poisoned outputs and compared.
class Fp8Io {
 public:
  explicit Fp8Io(const IoCase& c, const std::function<void(HostProblem&)>& tweak = {})
      : c_(c), h_(spec_of(c)) {
    if (tweak) tweak(h_);
    T_ = h_.num_tokens, H_ = h_.spec.num_q_heads, D_ = h_.spec.head_size;
    if (is_fp8(c.q)) q8_ = make_fp8_queries(h_, c.q);
    out_scale_ = c.out_scale > 0.f ? c.out_scale : out_tensor_scale(c.out);
    groups_ = c.group > 0 ? D_ / c.group : 0;
    host_gscale_.assign(size_t(std::max<int64_t>(1, T_ * H_ * std::max<int64_t>(groups_, 1))), 0.f);
    hp_ = h_.host_params();
    apply_io(hp_, c, q8_.codes.data(), nullptr, q8_.scale, nullptr, out_scale_, host_gscale_.data(), T_, H_);
    ref_ = reference::unified_attention(hp_);
    if (may_quantize_p(c, h_.spec.scale_mode)) pbound_ = p_bound();
    dp_ = std::make_unique<DeviceProblem>(h_);
    if (is_fp8(c.q)) d_q8_ = DeviceBuffer::from(q8_.codes);
    d_qs_ = DeviceBuffer::from(std::vector<float>{q8_.scale});
    d_os_ = DeviceBuffer::from(std::vector<float>{out_scale_});
    d_gs_ = DeviceBuffer(host_gscale_.size() * sizeof(float));
    p_ = dp_->params();
    apply_io(p_, c, d_q8_.ptr, c.device_scales ? d_qs_.as<float>() : nullptr, q8_.scale,
             c.device_scales ? d_os_.as<float>() : nullptr, out_scale_, d_gs_.as<float>(), T_, H_);
  }

  // One launch by `run(params)` over poisoned outputs, then every check.
  template <class Run>
  IoStats launch(Run&& run) {
    const uint8_t poison = output_poison_byte(c_.out);  // NaN codes of every format
    HIPATTN_CHECK(rt::memset_async(dp_->out.ptr, poison, dp_->out.bytes, nullptr));
    HIPATTN_CHECK(rt::memset_async(dp_->lse.ptr, 0xFF, dp_->lse.bytes, nullptr));
    HIPATTN_CHECK(rt::memset_async(d_gs_.ptr, 0xFF, d_gs_.bytes, nullptr));
    run(p_);
    HIPATTN_CHECK(rt::device_synchronize());
    std::vector<uint8_t> out(size_t(T_ * H_ * D_) * dtype_size(c_.out));
    std::vector<float> gs(host_gscale_.size()), lse(size_t(H_ * T_));
    if (!out.empty()) HIPATTN_CHECK(rt::memcpy_d2h(out.data(), dp_->out.ptr, out.size()));
    HIPATTN_CHECK(rt::memcpy_d2h(gs.data(), d_gs_.ptr, gs.size() * sizeof(float)));
    if (!lse.empty()) HIPATTN_CHECK(rt::memcpy_d2h(lse.data(), dp_->lse.ptr, lse.size() * sizeof(float)));
    return check_outputs(c_, h_, hp_, ref_, out, gs, lse, out_scale_, pbound_);
  }

  // P's bound: the reference over |V| (fp8 codes with the sign bit cleared; no NaN in the data), and
  // 2^-18 x the longest visible key range x max |v| (V's per-tensor scale included).
  PBound p_bound() {
    PBound b;
    std::vector<uint8_t> v_abs = h_.v_cache;
    double vmax = 0;
    for (uint8_t& code : v_abs) {
      code &= 0x7fu;
      vmax = std::max(vmax, double(fp8_e4m3fn_t::from_bits(code).to_float()));
    }
    UnifiedAttentionParams pa = hp_;
    pa.v_cache = v_abs.data();
    pa.sinks = nullptr;  // sinks only add to l: the bound without them is larger
    pa.out_format = OutputFormat{};
    pa.out_format.dtype = h_.spec.bf16 ? DType::bf16 : DType::f16;
    const reference::AttentionResult ra = reference::unified_attention(pa);
    b.p_abs = ra.out;
    int max_keys = 0;
    for (const auto& sq : h_.spec.seqs) max_keys = std::max(max_keys, sq.second);
    b.floor = std::exp2(-18.0) * max_keys * vmax * (h_.v_scale.empty() ? 1.0 : double(h_.v_scale[0]));
    return b;
  }

  IoStats unified(UnifiedPath path, UnifiedSplit split = UnifiedSplit::automatic, int segments = 0) {
    UnifiedOptions opt;
    opt.path = path;
    opt.split = split;
    opt.num_segments = segments;
    return launch([&](const UnifiedAttentionParams& p) {
      const size_t bytes = unified_attention_workspace_size(p, opt);
      ws_ = DeviceBuffer(bytes);
      prebuilt::unified_attention(p, ws_.ptr, bytes, nullptr, opt);
    });
  }

  IoStats paged(PagedDecodeSplit split) {
    PagedDecodeOptions opt;
    opt.split = split;
    return launch([&](const UnifiedAttentionParams& p) {
      const int32_t q_len = h_.spec.seqs.front().first;
      PagedDecodeParams pp = paged_decode_params_from_unified(p, q_len);
      PagedDecodeTraits t;
      t.max_num_seqs = pp.num_seqs;
      t.max_q_len = q_len;
      t.num_q_heads = pp.num_q_heads;
      t.num_kv_heads = pp.num_kv_heads;
      t.max_head_size = pp.head_size;
      t.max_seqlen_k = pp.max_seqlen_k;
      const size_t bytes = paged_decode_workspace_size(t, opt);
      ws_ = DeviceBuffer(bytes);
      prebuilt::paged_decode(pp, ws_.ptr, bytes, nullptr, opt);
    });
  }

 private:
  IoCase c_;
  HostProblem h_;
  int64_t T_ = 0, H_ = 0, D_ = 0, groups_ = 0;
  Fp8Queries q8_;
  float out_scale_ = 1.f;
  std::vector<float> host_gscale_;
  UnifiedAttentionParams hp_, p_;
  reference::AttentionResult ref_;
  PBound pbound_;
  std::unique_ptr<DeviceProblem> dp_;
  DeviceBuffer d_q8_, d_qs_, d_os_, d_gs_, ws_;
};

void expect_ok(const IoStats& st, const char* what) {
  EXPECT_EQ(st.bad, 0) << what << ": " << st.bad << " of " << st.checked << " checks failed; first: " << st.first_bad;
}

// ---- the sweep: query dtype x cache dtype x output format, both entry points ----

std::vector<IoCase> sweep_cases() {
  std::vector<IoCase> cs;
  struct Out { DType d; int group; bool ue8m0; float max; };
  const Out outs[] = {{DType::bf16, 0, false, 0.f},          {DType::fp8_e4m3fn, 0, false, 0.f},
                      {DType::fp8_e4m3fnuz, 0, false, 0.f},  {DType::fp8_e4m3fn, 64, false, 0.f},
                      {DType::fp8_e4m3fn, 128, true, 0.f},   {DType::fp8_e4m3fnuz, 32, false, 224.f},
                      {DType::fp8_e4m3fn, 16, false, 0.f}};
  int v = 0;
  for (bool decode : {false, true})
    for (DType q : {DType::bf16, DType::f16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz})
      for (int kvk = 0; kvk < 3; ++kvk)
        for (const Out& o : outs) {
          IoCase c;
          c.decode = decode;
          c.q = q;
          // 16-bit caches: the query's type, or for fp8 queries bf16 (e4m3fn) / fp16 (e4m3fnuz)
          const DType kv16 = is_fp8(q) ? (q == DType::fp8_e4m3fn ? DType::bf16 : DType::f16) : q;
          c.kv = kvk == 0 ? kv16 : kvk == 1 ? DType::fp8_e4m3fn : DType::fp8_e4m3fnuz;
          // a 16-bit output is of the compute type: the query's, the 16-bit cache's, or (fp8 queries over an
          // fp8 cache) either, which then picks the compute type
          c.out = o.d != DType::bf16 ? o.d : !is_fp8(q) ? q : kvk == 0 ? kv16 : (v % 2 ? DType::f16 : DType::bf16);
          c.group = o.group;
          c.ue8m0 = o.ue8m0;
          c.group_max = o.max;
          c.variant = v;
          c.device_scales = v % 2 == 0;
          const int sizes[] = {128, 64, 256, 96};
          c.head_size = sizes[v % 4];
          if (c.group > 0 && c.head_size % c.group != 0) c.head_size = 256;
          cs.push_back(c);
          ++v;
        }
  // e4m3fn queries and cache through the other Fp8Math choices: P in e4m3, and converted queries
  for (bool decode : {false, true})
    for (Fp8Math m : {Fp8Math::fp8_pv, Fp8Math::convert})
      for (int o : {0, 1, 3}) {
        IoCase c;
        c.decode = decode;
        c.q = c.kv = DType::fp8_e4m3fn;
        c.out = o == 0 ? (v % 2 ? DType::f16 : DType::bf16) : outs[o].d;
        c.group = outs[o].group;
        c.math = m;
        c.variant = v;
        c.device_scales = v % 2 == 0;
        c.head_size = o == 3 ? 128 : v % 3 == 0 ? 96 : 256;
        cs.push_back(c);
        ++v;
      }
  return cs;
}

class Fp8IoSweep : public ::testing::TestWithParam<IoCase> {};

TEST_P(Fp8IoSweep, EveryElementMatchesTheReference) {
  REQUIRE_GPU();
  const IoCase c = GetParam();
  Fp8Io io(c);
  if (!c.decode) {
    for (UnifiedPath path : {UnifiedPath::two_d, UnifiedPath::three_d}) {
      const bool three_d = path == UnifiedPath::three_d;
      const IoStats st = io.unified(path, three_d ? UnifiedSplit::uniform : UnifiedSplit::automatic, three_d ? 3 : 0);
      expect_ok(st, path == UnifiedPath::two_d ? "unified 2d" : "unified 3d (3 segments)");
      std::printf("  %-70s %s max|err| %.2e (%lld checks)\n", case_name(c).c_str(), path == UnifiedPath::two_d ? "2d" : "3d",
                  st.max_abs, static_cast<long long>(st.checked));
    }
  } else {
    for (PagedDecodeSplit split : {PagedDecodeSplit::one_partition, PagedDecodeSplit::planned}) {
      const IoStats st = io.paged(split);
      expect_ok(st, split == PagedDecodeSplit::planned ? "paged decode planned" : "paged decode one partition");
      std::printf("  %-70s %s max|err| %.2e (%lld checks)\n", case_name(c).c_str(),
                  split == PagedDecodeSplit::planned ? "planned" : "one-part", st.max_abs, static_cast<long long>(st.checked));
    }
    if (c.q == DType::fp8_e4m3fn && c.head_size == 128) {  // q_len 1 batches also run unified's planned decode
      IoCase c1 = c;
      c1.variant = 4 * (c.variant / 4);  // q_len 1
      Fp8Io io1(c1);
      expect_ok(io1.unified(UnifiedPath::three_d, UnifiedSplit::planned), "unified 3d planned");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fp8Io, Fp8IoSweep, ::testing::ValuesIn(sweep_cases()),
                         [](const ::testing::TestParamInfo<IoCase>& i) { return case_name(i.param); });

// ---- the fp8 matrix path both ways: P in e4m3 or in f16, against converted queries ----

// Long prefill sequences (the prefill tiles, where fp8_pv quantizes P) of e4m3fn queries and cache,
// f16 output: every element within its bound (the header), and the error of each Fp8Math choice
// against float64 printed side by side (the accuracy figures of ALGORITHM.md section 12).
TEST(Fp8Io, MatrixPathAccuracy) {
  REQUIRE_GPU();
  std::printf("  %-6s %-9s %-8s %10s %10s\n", "d", "path", "fp8_math", "rel_l2", "max|err|");
  for (int d : {64, 128, 256})
    for (bool two_d : {true, false}) {
      double l2[3] = {};
      for (Fp8Math m : {Fp8Math::fp8_pv, Fp8Math::fp8_qk, Fp8Math::convert}) {
        IoCase c;
        c.q = c.kv = DType::fp8_e4m3fn;
        c.out = DType::f16;
        c.head_size = d;
        c.variant = 4;  // per-tensor scales, no sinks / ALiBi / softcap / window
        c.math = m;
        c.long_prefill = true;
        Fp8Io io(c);
        const IoStats st = two_d ? io.unified(UnifiedPath::two_d)
                                 : io.unified(UnifiedPath::three_d, UnifiedSplit::uniform, 3);
        expect_ok(st, (std::string(fp8_math_name(m)) + " d" + std::to_string(d)).c_str());
        l2[int(m)] = st.rel_l2();
        std::printf("  %-6d %-9s %-8s %10.3e %10.3e\n", d, two_d ? "2d" : "3d (3)", fp8_math_name(m), st.rel_l2(), st.max_abs);
      }
      // P in f16 and converted queries make the same products (scores exact either way): their errors
      // are alike; quantized P is the larger, and within its bound (above)
      EXPECT_LE(l2[int(Fp8Math::fp8_qk)], 1.5 * l2[int(Fp8Math::convert)] + 1e-4) << "d " << d;
    }
}

// ---- saturation and NaN of the fp8 output ----

// A tiny per-tensor output scale: most elements exceed the format's range and saturate to +-max; a NaN
// in one visible value element makes that column NaN for every row that sees it, and the fp8 output
// keeps it NaN (per tensor and per group; a group's scale ignores the NaN).
TEST(Fp8Io, SaturationAndNaN) {
  REQUIRE_GPU();
  for (DType out : {DType::fp8_e4m3fn, DType::fp8_e4m3fnuz})
    for (int group : {0, 32}) {
      IoCase c;
      c.q = DType::fp8_e4m3fn;
      c.kv = DType::bf16;
      c.out = out;
      c.group = group;
      c.variant = 4;
      c.device_scales = true;
      c.out_scale = 1.f / 2048.f;  // |O| above ~0.2 exceeds the format's range
      auto tweak = [&](HostProblem& h) {
        // a NaN at column 5 of the value of key 3 of sequence 0, kv head 0 (16-bit cache: 0xFFFF)
        const int blk = h.block_table[3 / h.spec.block_size], slot = 3 % h.spec.block_size;
        const int64_t idx = blk * h.stride_block + slot * h.stride_slot + 5;
        h.v_cache[size_t(idx) * 2] = 0xFF;
        h.v_cache[size_t(idx) * 2 + 1] = 0xFF;
      };
      Fp8Io io(c, tweak);
      for (UnifiedPath path : {UnifiedPath::two_d, UnifiedPath::three_d}) {
        const bool three_d = path == UnifiedPath::three_d;
        const IoStats st = io.unified(path, three_d ? UnifiedSplit::uniform : UnifiedSplit::automatic, three_d ? 2 : 0);
        expect_ok(st, (dt(out) + (group ? " group 32 " : " per tensor ") + (path == UnifiedPath::two_d ? "2d" : "3d")).c_str());
        EXPECT_GT(st.nan, 0) << "the NaN value element reaches the output";
        if (group == 0) EXPECT_GT(st.saturated, 0) << "some elements exceed the format's range";
        std::printf("  %s %s %s: %lld saturated, %lld NaN\n", dt(out).c_str(), group ? "group 32" : "per tensor",
                    path == UnifiedPath::two_d ? "2d" : "3d", static_cast<long long>(st.saturated),
                    static_cast<long long>(st.nan));
      }
    }
}

// ---- the fp8 conversion of the outputs: Arch::fp8x2 against numeric/fp8.hpp, bit for bit ----

template <bool kFnuz>
__global__ void fp8x2_kernel(const float* x, uint32_t* codes, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (2 * i + 1 < n) codes[i] = DeviceArch::template fp8x2<kFnuz>(x[2 * i], x[2 * i + 1]);
}

// Every fp8 value, the midpoints between neighbours and their float neighbours (ties and the values
// around them), values past the top, subnormals, zeros of both signs, infinities and NaNs.
std::vector<float> conversion_inputs() {
  std::vector<float> xs = {0.f, -0.f, INFINITY, -INFINITY, std::nanf(""), -std::nanf(""), 1e30f, -1e30f, 1e-30f, -1e-30f};
  for (bool fnuz : {false, true}) {
    std::vector<float> vals;
    for (uint32_t c = 0; c < 128; ++c) {
      const float v = fnuz ? fp8_e4m3fnuz_t::from_bits(c).to_float() : fp8_e4m3fn_t::from_bits(c).to_float();
      if (!std::isnan(v)) vals.push_back(v);
    }
    vals.push_back(fnuz ? 256.f : 480.f);  // the next step past the top
    for (size_t i = 0; i < vals.size(); ++i) {
      const float mids[] = {vals[i], i + 1 < vals.size() ? 0.5f * (vals[i] + vals[i + 1]) : vals[i] * 1.5f};
      for (float m : mids)
        for (float y : {m, std::nextafterf(m, 0.f), std::nextafterf(m, INFINITY)}) {
          xs.push_back(y);
          xs.push_back(-y);
        }
    }
  }
  if (xs.size() % 2) xs.push_back(0.f);
  return xs;
}

TEST(Fp8Io, OutputConversionMatchesNumericRules) {
  REQUIRE_GPU();
  const std::vector<float> xs = conversion_inputs();
  const int n = static_cast<int>(xs.size());
  DeviceBuffer dx = DeviceBuffer::from(xs), dc(size_t(n / 2) * sizeof(uint32_t));
  for (bool fnuz : {false, true}) {
    if (fnuz) fp8x2_kernel<true><<<(n / 2 + 127) / 128, 128>>>(dx.as<float>(), dc.as<uint32_t>(), n);
    else fp8x2_kernel<false><<<(n / 2 + 127) / 128, 128>>>(dx.as<float>(), dc.as<uint32_t>(), n);
    HIPATTN_CHECK_LAUNCH();
    HIPATTN_CHECK(rt::device_synchronize());
    std::vector<uint32_t> codes(size_t(n / 2));
    HIPATTN_CHECK(rt::memcpy_d2h(codes.data(), dc.ptr, codes.size() * sizeof(uint32_t)));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      const uint32_t got = (codes[size_t(i / 2)] >> (8 * (i % 2))) & 0xffu;
      const uint32_t want = fnuz ? fp8_e4m3fnuz_t::from_float(xs[size_t(i)]).bits : fp8_e4m3fn_t::from_float(xs[size_t(i)]).bits;
      const bool got_nan = fnuz ? got == 0x80u : (got & 0x7fu) == 0x7fu;
      const bool ok = std::isnan(xs[size_t(i)]) ? got_nan : got == want;  // a NaN's sign is not part of the contract
      if (!ok && bad++ < 5)
        ADD_FAILURE() << (fnuz ? "e4m3fnuz" : "e4m3fn") << " of " << xs[size_t(i)] << ": 0x" << std::hex << got
                      << ", want 0x" << want;
    }
    EXPECT_EQ(bad, 0) << (fnuz ? "e4m3fnuz" : "e4m3fn") << ": " << bad << " of " << n << " conversions differ";
  }
}

// ---- typed errors: bad scales are refused before any launch ----

TEST(Fp8Io, BadScalesAreTypedErrors) {
  REQUIRE_GPU();
  IoCase c;
  c.q = DType::fp8_e4m3fn;
  c.kv = DType::fp8_e4m3fn;
  c.out = DType::fp8_e4m3fn;
  c.variant = 4;
  HostProblem h(spec_of(c));
  DeviceProblem dp(h);
  const Fp8Queries q8 = make_fp8_queries(h, c.q);
  DeviceBuffer d_q8 = DeviceBuffer::from(q8.codes);
  struct Bad { const char* field; std::function<void(UnifiedAttentionParams&)> set; };
  const Bad bads[] = {
      {"q_scale.host", [](UnifiedAttentionParams& p) { p.q_scale.host = INFINITY; }},
      {"q_scale.host", [](UnifiedAttentionParams& p) { p.q_scale.host = -1.f; }},
      {"q_scale.host", [](UnifiedAttentionParams& p) { p.q_scale.host = std::nanf(""); }},
      {"out_format.scale.host", [](UnifiedAttentionParams& p) { p.out_format.scale.host = -INFINITY; }},
      {"out_format.scale.host", [](UnifiedAttentionParams& p) { p.out_format.scale.host = -0.5f; }},
      {"out_format.scale.host", [](UnifiedAttentionParams& p) { p.out_format.scale.host = std::nanf(""); }},
      {"out_format.dtype", [](UnifiedAttentionParams& p) { p.out_format.dtype.reset(); }},
      {"fp8_math", [](UnifiedAttentionParams& p) { p.fp8_math = static_cast<Fp8Math>(7); }},
  };
  for (const Bad& b : bads) {
    UnifiedAttentionParams p = dp.params();
    p.q = d_q8.ptr;
    p.q_dtype = c.q;
    p.q_scale.host = q8.scale;
    p.out_format.dtype = c.out;
    p.out_format.scale.host = 0.01f;
    b.set(p);
    dp.poison();
    try {
      prebuilt::unified_attention(p, nullptr, 0, nullptr);
      ADD_FAILURE() << b.field << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), b.field) << e.what();
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    }
    PagedDecodeParams pp = paged_decode_params_from_unified(p, 1);
    EXPECT_FALSE(validate(pp).ok()) << b.field << " (paged decode)";
  }
}

}  // namespace
}  // namespace hipattn::testing
