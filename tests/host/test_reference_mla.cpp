// tests/host/test_reference_mla.cpp: the float64 MLA-decode reference (reference/mla_decode.hpp) against a
// direct loop and the unified reference.
// The problems and the direct formulas are in tests/host/reference_problem.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "reference_problem.hpp"

namespace {

using namespace hipattn_reference_tests;

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

// The output formats (problem/fp8_io.hpp) through MLA's write_outputs (reference/unified_attention.hpp's
// write_output_tensor): every element is the code of O divided by its scale (the per-tensor one, or its
// group's: output_group_scales), a per-group output's scales land at [token t = b * q_len + i,
// h * 512 / G + g] by their two strides (row- or column-major), and nothing past a row's 512 columns
// or outside the scales' elements is written.
TEST(ReferenceMla, WritesEveryOutputFormat) {
  MlaProblem M({9, 2, 15}, 2, 4, 7, DType::bf16, DType::fp8_e4m3fn, 777);
  const ref::AttentionResult r = ref::mla_decode(M.p);
  const int T = M.B * M.qlen, H = 4, D = 512;
  struct Format {
    DType out;
    int group;
    bool ue8m0;
    float group_max;
    bool device_scale;  // per tensor: the scale as a "device" scalar (here a host pointer), else the host float
  };
  const Format formats[] = {{DType::bf16, 0, false, 0.f, false},           {DType::fp8_e4m3fn, 0, false, 0.f, false},
                            {DType::fp8_e4m3fnuz, 0, false, 0.f, true},    {DType::fp8_e4m3fn, 64, false, 0.f, false},
                            {DType::fp8_e4m3fn, 128, true, 0.f, true},     {DType::fp8_e4m3fnuz, 32, false, 224.f, true}};
  for (const Format& f : formats) {
    SCOPED_TRACE(std::string(hipattn::dtype_name(f.out)) + " group " + std::to_string(f.group));
    const bool fp8 = hipattn::is_fp8(f.out);
    float tensor_scale = f.out == DType::fp8_e4m3fnuz ? 1.f / 64.f : 1.f / 128.f;
    hipattn::OutputFormat of;
    of.dtype = f.out;
    const int groups = f.group > 0 ? D / f.group : 0;
    std::vector<float> gs(size_t(T * H * std::max(groups, 1) + 4), 777.f);  // 3 before, 1 after
    if (fp8 && f.group == 0) {
      if (f.device_scale) of.scale.device = &tensor_scale;
      else of.scale.host = tensor_scale;
    }
    if (f.group > 0) {
      of.group_size = f.group;
      of.group_ue8m0 = f.ue8m0;
      of.group_fp8_max = f.group_max;
      of.group_scale = gs.data() + 3;
      // column-major ([groups][tokens]) with the "device" scale flag, row-major otherwise
      of.group_scale_stride_token = f.device_scale ? 1 : int64_t(H) * groups;
      of.group_scale_stride_group = f.device_scale ? T : 1;
    }
    const int64_t oh = D + 16, ot = H * oh, ob = M.qlen * ot + 32;
    Buffer out(f.out, size_t(M.B * ob));
    M.p.out = out.data();
    M.p.o_stride_batch = ob;
    M.p.o_stride_token = ot;
    M.p.o_stride_head = oh;
    M.p.lse = nullptr;
    M.p.out_format = of;
    ref::write_outputs(r, M.p);
    const std::vector<double> want_s = f.group > 0 ? ref::output_group_scales(r, T, H, D, f.out, of) : std::vector<double>{};
    int bad = 0;
    for (int b = 0; b < M.B; ++b)
      for (int i = 0; i < M.qlen; ++i)
        for (int h = 0; h < H; ++h) {
          const int t = b * M.qlen + i;
          for (int g = 0; g < groups; ++g) {
            const float got = gs[size_t(3 + t * of.group_scale_stride_token + (h * groups + g) * of.group_scale_stride_group)];
            if (got != float(want_s[size_t((t * H + h) * groups + g)]) && bad++ < 5)
              ADD_FAILURE() << "group_scale[t " << t << ", h " << h << ", g " << g << "] = " << got;
          }
          for (int d = 0; d < oh; ++d) {
            const uint32_t got = out.bits(size_t(b * ob + i * ot + h * oh + d));
            double scale = 1.0;
            if (fp8) scale = f.group > 0 ? want_s[size_t((t * H + h) * groups + d / f.group)] : double(tensor_scale);
            const uint32_t want = d < D ? encode(f.out, float(r.out[size_t((t * H + h) * D + d)] / scale)) : nan_bits(f.out);
            if (got != want && bad++ < 5)
              ADD_FAILURE() << "out[b " << b << ", i " << i << ", h " << h << ", d " << d << "] = 0x" << std::hex << got
                            << ", want 0x" << want << std::dec;
          }
        }
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(gs[0], 777.f) << "nothing before the group scales";
    EXPECT_EQ(gs.back(), 777.f) << "nothing past the group scales";
  }
}

}  // namespace
