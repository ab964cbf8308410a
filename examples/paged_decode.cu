// Paged decode through the instance library, checked against the float64 reference.
//
// A speculative-verify step: 3 sequences of 33, 260 and 1101 keys each ask q_len = 2 new tokens; 8
// query heads over 2 KV heads, head 128, bf16, a cache of 16-token pages in shuffled order. The
// params come from hipattn::make_unified_params through paged_decode_params_from_unified (every
// stride filled); the workspace is sized once from bounds (PagedDecodeTraits), as an engine does at
// start-up; the call goes through hipattn::prebuilt::paged_decode (the hipattn_instances library: this
// file compiles no kernel). The reference is the unified one of the same problem (to_unified_params).
// The output is poisoned (NaN bits) before the launch. With no GPU it says so and exits 0.
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
  const std::vector<int32_t> kv_lens{33, 260, 1101};  // context + the 2 new tokens
  const int num_seqs = 3, q_len = 2, hq = 8, hk = 2, d = 128, bs = 16, max_len = 1101;
  int num_blocks = 0;
  for (int32_t l : kv_lens) num_blocks += (l + bs - 1) / bs;
  // The unified problem of these shapes (every stride filled), as paged decode's params.
  const hipattn::UnifiedAttentionParams u = hipattn::make_unified_params(
      {.num_seqs = num_seqs, .num_tokens = num_seqs * q_len, .max_seqlen_q = q_len, .max_seqlen_k = max_len,
       .num_q_heads = hq, .num_kv_heads = hk, .head_size = d, .num_blocks = num_blocks, .block_size = bs,
       .q_dtype = hipattn::DType::bf16, .kv_dtype = hipattn::DType::bf16});
  const hipattn::PagedDecodeParams shape = hipattn::paged_decode_params_from_unified(u, q_len);

  // Seeded random inputs in [-1, 1]; each sequence's pages taken from a shuffled list of the cache's pages.
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  std::vector<bf16> q(size_t(num_seqs) * q_len * hq * d), k(size_t(num_blocks) * bs * hk * d), v(k.size());
  for (auto* t : {&q, &k, &v})
    for (bf16& x : *t) x = bf16::from_float(uni(rng));
  std::vector<int32_t> pages(num_blocks), table(size_t(num_seqs) * shape.block_table_stride, 0);
  std::iota(pages.begin(), pages.end(), 0);
  std::shuffle(pages.begin(), pages.end(), rng);
  for (int s = 0, next = 0; s < num_seqs; ++s)
    for (int j = 0; j * bs < kv_lens[s]; ++j) table[s * shape.block_table_stride + j] = pages[next++];

  // The float64 reference: the unified problem that computes the same thing (query row r of sequence s
  // is token s * q_len + r), over host pointers.
  hipattn::PagedDecodeParams host = shape;
  host.q = q.data(), host.k_cache = k.data(), host.v_cache = v.data();
  host.block_table = table.data(), host.seq_lens_k = kv_lens.data();
  const std::vector<int32_t> cu_seqlens_q{0, 2, 4, 6};
  const hipattn::reference::AttentionResult ref =
      hipattn::reference::unified_attention(hipattn::to_unified_params(host, cu_seqlens_q.data()));

  // Once, from bounds: a workspace that serves every step within them (graph capture included).
  const hipattn::PagedDecodeTraits traits{.max_num_seqs = num_seqs,
                                          .max_q_len = q_len,
                                          .num_q_heads = hq,
                                          .num_kv_heads = hk,
                                          .max_head_size = d,
                                          .max_seqlen_k = max_len};
  const size_t ws_bytes = hipattn::paged_decode_workspace_size(traits);
  DeviceBuffer ws(ws_bytes);

  DeviceBuffer dq(q), dk(k), dv(v), dtable(table), dlens(kv_lens), dout(q.size() * sizeof(bf16));
  dout.poison();
  hipattn::PagedDecodeParams p = shape;
  p.q = dq.ptr, p.k_cache = dk.ptr, p.v_cache = dv.ptr, p.out = dout.ptr;
  p.block_table = dtable.as<int32_t>(), p.seq_lens_k = dlens.as<int32_t>();
  hipattn::prebuilt::paged_decode(p, ws.ptr, ws_bytes, nullptr);  // throws hipattn::Error on a bad problem
  HIPATTN_CHECK(hipattn::rt::get_last_error());
  HIPATTN_CHECK(hipattn::rt::device_synchronize());

  // bf16 output: P and O are each rounded to 8 significant bits; |O| <= 1 here.
  const double tol = 2e-2;
  const double max_err = max_abs_error(dout.to_host<bf16>(), ref.out);
  const bool pass = max_err <= tol;
  std::printf(
      "paged_decode: %s: max |out - float64 reference| = %.3g (tolerance %.g), %d seqs x q_len %d, "
      "%d/%d heads, head %d, bf16\n",
      pass ? "PASS" : "FAIL", max_err, tol, num_seqs, q_len, hq, hk, d);
  return pass ? 0 : 1;
}

}  // namespace

int main() { return example::run_example("paged_decode", run); }
