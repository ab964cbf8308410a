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

}  // namespace
