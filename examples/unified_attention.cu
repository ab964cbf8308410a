// Unified paged attention through the instance library, checked against the float64 reference.
//
// One call serves a mixed batch: a prefill chunk (37 new tokens after 90 cached ones) and a decode
// step (1 new token after 300), 8 query heads over 2 KV heads, head 128, bf16, a paged cache of
// 16-token pages in shuffled order. hipattn::make_unified_params fills every stride; the call goes
// through hipattn::prebuilt::unified_attention (the hipattn_instances library: this file compiles no
// kernel). The output is poisoned (NaN bits) before the launch, so every element must be written.
// With no GPU it says so and exits 0.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "example_util.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/problem/unified_builder.hpp"
#include "hipattn/reference/unified_attention.hpp"

namespace {
using bf16 = hipattn::bfloat16_t;
using example::DeviceBuffer, example::max_abs_error;

int run() {
  const std::vector<int32_t> kv_lens{127, 301}, cu_seqlens_q{0, 37, 38};  // q lengths 37 and 1
  const int num_seqs = 2, num_tokens = 38, hq = 8, hk = 2, d = 128, bs = 16;
  const int num_blocks = (127 + bs - 1) / bs + (301 + bs - 1) / bs;
  const hipattn::UnifiedAttentionParams shape = hipattn::make_unified_params(
      {.num_seqs = num_seqs, .num_tokens = num_tokens, .max_seqlen_q = 37, .max_seqlen_k = 301, .num_q_heads = hq,
       .num_kv_heads = hk, .head_size = d, .num_blocks = num_blocks, .block_size = bs,
       .q_dtype = hipattn::DType::bf16, .kv_dtype = hipattn::DType::bf16});

  // Seeded random inputs in [-1, 1]; each sequence's pages taken from a shuffled list of the cache's pages.
  std::mt19937 rng(37);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  std::vector<bf16> q(size_t(num_tokens) * hq * d), k(size_t(num_blocks) * bs * hk * d), v(k.size());
  for (auto* t : {&q, &k, &v})
    for (bf16& x : *t) x = bf16::from_float(uni(rng));
  std::vector<int32_t> pages(num_blocks), table(size_t(num_seqs) * shape.block_table_stride, 0);
  std::iota(pages.begin(), pages.end(), 0);
  std::shuffle(pages.begin(), pages.end(), rng);
  for (int s = 0, next = 0; s < num_seqs; ++s)
    for (int j = 0; j * bs < kv_lens[s]; ++j) table[s * shape.block_table_stride + j] = pages[next++];

  // The float64 reference reads the same problem through host pointers.
  hipattn::UnifiedAttentionParams host = shape;
  host.q = q.data(), host.k_cache = k.data(), host.v_cache = v.data();
  host.block_table = table.data(), host.cu_seqlens_q = cu_seqlens_q.data(), host.seq_lens_k = kv_lens.data();
  const hipattn::reference::AttentionResult ref = hipattn::reference::unified_attention(host);

  DeviceBuffer dq(q), dk(k), dv(v), dtable(table), dcu(cu_seqlens_q), dlens(kv_lens), dout(q.size() * sizeof(bf16));
  dout.poison();
  hipattn::UnifiedAttentionParams p = shape;
  p.q = dq.ptr, p.k_cache = dk.ptr, p.v_cache = dv.ptr, p.out = dout.ptr;
  p.block_table = dtable.as<int32_t>(), p.cu_seqlens_q = dcu.as<int32_t>(), p.seq_lens_k = dlens.as<int32_t>();
  const size_t ws_bytes = hipattn::unified_attention_workspace_size(p);  // 0 unless the split-KV path is planned
  DeviceBuffer ws(ws_bytes);
  hipattn::prebuilt::unified_attention(p, ws.ptr, ws_bytes, nullptr);  // throws hipattn::Error on a bad problem
  HIPATTN_CHECK(hipattn::rt::get_last_error());
  HIPATTN_CHECK(hipattn::rt::device_synchronize());

  // bf16 output: P and O are each rounded to 8 significant bits; |O| <= 1 here.
  const double tol = 2e-2;
  const double max_err = max_abs_error(dout.to_host<bf16>(), ref.out);
  const bool pass = max_err <= tol;
  std::printf(
      "unified_attention: %s: max |out - float64 reference| = %.3g (tolerance %.g), %d seqs, %d tokens, "
      "%d/%d heads, head %d, bf16\n",
      pass ? "PASS" : "FAIL", max_err, tol, num_seqs, num_tokens, hq, hk, d);
  return pass ? 0 : 1;
}

}  // namespace

int main() { return example::run_example("unified_attention", run); }
