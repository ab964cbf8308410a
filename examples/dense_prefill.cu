// Dense prefill through the instance library, checked against the float64 reference.
//
// Packed varlen: two sequences in one q / k / v buffer, addressed by cu_seqlens_q / cu_seqlens_k; a
// whole 64-token prompt, and a 20-token chunk whose keys include 80 earlier ones (causal,
// bottom-right: its first query sees keys 0..80). 8 query heads over 2 KV heads, head 128, bf16, with
// the LSE written too. No workspace; the call goes through hipattn::prebuilt::dense_prefill (the
// hipattn_instances library: this file compiles no kernel). The output and the LSE are poisoned (NaN
// bits) before the launch, so every element must be written. With no GPU it says so and exits 0.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "example_util.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/reference/dense_prefill.hpp"

namespace {
using bf16 = hipattn::bfloat16_t;
using example::DeviceBuffer, example::max_abs_error;

int run() {
  const std::vector<int32_t> cu_q{0, 64, 84}, cu_k{0, 64, 164};  // q lengths 64, 20; k lengths 64, 100
  const int num_seqs = 2, tq = 84, tk = 164, hq = 8, hk = 2, d = 128;
  hipattn::DensePrefillParams shape;
  shape.dtype = hipattn::DType::bf16;
  shape.num_seqs = num_seqs, shape.num_tokens_q = tq, shape.num_tokens_k = tk;
  shape.max_seqlen_q = 64, shape.max_seqlen_k = 100;
  shape.num_q_heads = hq, shape.num_kv_heads = hk, shape.head_size_qk = d, shape.head_size_v = d;
  shape.q_stride_token = int64_t(hq) * d, shape.q_stride_head = d;  // q, out [tq, hq, d]
  shape.o_stride_token = int64_t(hq) * d, shape.o_stride_head = d;
  shape.k_stride_token = int64_t(hk) * d, shape.k_stride_head = d;  // k, v [tk, hk, d]
  shape.v_stride_token = int64_t(hk) * d, shape.v_stride_head = d;
  shape.lse_stride_head = tq;  // lse [hq, tq]
  shape.scale = 1.f / std::sqrt(float(d));
  shape.causal = true;

  // Seeded random inputs in [-1, 1].
  std::mt19937 rng(64);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  std::vector<bf16> q(size_t(tq) * hq * d), k(size_t(tk) * hk * d), v(k.size());
  for (auto* t : {&q, &k, &v})
    for (bf16& x : *t) x = bf16::from_float(uni(rng));

  // The float64 reference reads the same problem through host pointers.
  hipattn::DensePrefillParams host = shape;
  host.q = q.data(), host.k = k.data(), host.v = v.data(), host.cu_seqlens_q = cu_q.data(),
  host.cu_seqlens_k = cu_k.data();
  const hipattn::reference::AttentionResult ref = hipattn::reference::dense_prefill(host);

  DeviceBuffer dq(q), dk(k), dv(v), dcu_q(cu_q), dcu_k(cu_k);
  DeviceBuffer dout(q.size() * sizeof(bf16)), dlse(size_t(hq) * tq * sizeof(float));
  dout.poison();
  dlse.poison();
  hipattn::DensePrefillParams p = shape;
  p.q = dq.ptr, p.k = dk.ptr, p.v = dv.ptr, p.out = dout.ptr, p.lse = dlse.as<float>();
  p.cu_seqlens_q = dcu_q.as<int32_t>(), p.cu_seqlens_k = dcu_k.as<int32_t>();
  hipattn::prebuilt::dense_prefill(p, nullptr);  // throws hipattn::Error on a bad problem
  HIPATTN_CHECK(hipattn::rt::get_last_error());
  HIPATTN_CHECK(hipattn::rt::device_synchronize());

  // bf16 output: P and O are each rounded to 8 significant bits; |O| <= 1 here. The LSE is fp32.
  const double tol = 2e-2, lse_tol = 5e-3;
  const double err = max_abs_error(dout.to_host<bf16>(), ref.out),
               lse_err = max_abs_error(dlse.to_host<float>(), ref.lse);
  const bool pass = err <= tol && lse_err <= lse_tol;
  std::printf(
      "dense_prefill: %s: max |out - float64 reference| = %.3g (tolerance %.g), max |lse - reference| = %.3g "
      "(tolerance %.g), %d seqs, %d queries, %d keys, %d/%d heads, head %d, bf16, causal\n",
      pass ? "PASS" : "FAIL", err, tol, lse_err, lse_tol, num_seqs, tq, tk, hq, hk, d);
  return pass ? 0 : 1;
}

}  // namespace

int main() { return example::run_example("dense_prefill", run); }
