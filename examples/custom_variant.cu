// A logit variant of your own, run end to end through the public entry point.
//
// DistanceTemperature divides every logit by a temperature that grows with the key's distance from
// the query, with a per-head strength it reads from its own device array (its data travels with the
// value), then applies a softcap. It overrides only the hooks it changes (tile/variants.hpp):
// row() loads the row's strength once, logit() transforms each score.
//
// The example builds a small paged problem with hipattn::make_unified_params, runs
// hipattn::unified_attention(params, variant, ...) on the GPU, and compares with a float64 host
// computation of the same formula. With no GPU it says so and exits 0.
//
// The variant's kernels are compiled in this translation unit; the instance filter kOnlyF16D128
// limits them to what the program calls (f16 queries, f16 KV, head 128: one instance, both tile
// kinds, 2D and 3D). Without the filter every q dtype x KV kind x head size would be compiled.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "hipattn/hipattn.hpp"

namespace {

struct DistanceTemperature : hipattn::VariantBase {
  static constexpr bool kTransformsLogits = true;
  const float* strength = nullptr;  // [num_q_heads], device memory
  float softcap = 30.f;

  struct Row {
    float strength = 0.f;
  };
  HIPATTN_HOST_DEVICE Row row(const hipattn::RowInfo& r) const { return {strength[r.q_head]}; }

  template <class Math>
  HIPATTN_HOST_DEVICE float logit(float s, const hipattn::RowInfo& r, const Row& row, int32_t j, Math math) const {
    s = s / (1.f + row.strength * static_cast<float>(r.pos - j));
    return softcap * math.tanh(s / softcap);
  }
};

bool ok(hipattn::rt::error_t e, const char* what) {
  if (e == hipattn::rt::success) return true;
  std::printf("custom variant: %s failed: %s\n", what, hipattn::rt::error_string(e));
  return false;
}

}  // namespace

int main() {
  int n = 0;
  if (hipattn::rt::get_device_count(&n) != hipattn::rt::success || n == 0) {
    std::printf("custom variant: no GPU present\n");
    return 0;
  }
  // One sequence: 5 new tokens after 70 cached ones; 4 q heads over 2 kv heads, head 128, page 16.
  const int q_len = 5, kv_len = 75, hq = 4, hk = 2, d = 128, bs = 16;
  const int blocks = (kv_len + bs - 1) / bs;
  hipattn::UnifiedAttentionParams p = hipattn::make_unified_params(
      {.num_seqs = 1, .num_tokens = q_len, .max_seqlen_q = q_len, .max_seqlen_k = kv_len, .num_q_heads = hq,
       .num_kv_heads = hk, .head_size = d, .num_blocks = blocks, .block_size = bs,
       .q_dtype = hipattn::DType::f16, .kv_dtype = hipattn::DType::f16});

  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  auto half = [](float x) { return hipattn::half_t::from_float(x); };
  std::vector<hipattn::half_t> q(size_t(q_len) * hq * d), k(size_t(blocks) * bs * hk * d), v(k.size());
  for (auto& x : q) x = half(nd(rng));
  for (auto& x : k) x = half(nd(rng));
  for (auto& x : v) x = half(nd(rng));
  std::vector<int32_t> table(blocks), cu{0, q_len}, lens{kv_len};
  for (int b = 0; b < blocks; ++b) table[b] = blocks - 1 - b;  // pages in reverse order
  std::vector<float> strength(hq);
  for (int h = 0; h < hq; ++h) strength[h] = 0.002f * float(h + 1);

  void *dq, *dk, *dv, *dout, *dtab, *dcu, *dlen, *dstr;
  const size_t out_bytes = q.size() * 2;
  if (!ok(hipattn::rt::malloc_device(&dq, q.size() * 2), "malloc") || !ok(hipattn::rt::malloc_device(&dk, k.size() * 2), "malloc") ||
      !ok(hipattn::rt::malloc_device(&dv, v.size() * 2), "malloc") || !ok(hipattn::rt::malloc_device(&dout, out_bytes), "malloc") ||
      !ok(hipattn::rt::malloc_device(&dtab, blocks * 4), "malloc") || !ok(hipattn::rt::malloc_device(&dcu, 8), "malloc") ||
      !ok(hipattn::rt::malloc_device(&dlen, 4), "malloc") || !ok(hipattn::rt::malloc_device(&dstr, hq * 4), "malloc"))
    return 1;
  if (!ok(hipattn::rt::memcpy_h2d(dq, q.data(), q.size() * 2), "copy") ||
      !ok(hipattn::rt::memcpy_h2d(dk, k.data(), k.size() * 2), "copy") ||
      !ok(hipattn::rt::memcpy_h2d(dv, v.data(), v.size() * 2), "copy") ||
      !ok(hipattn::rt::memcpy_h2d(dtab, table.data(), blocks * 4), "copy") ||
      !ok(hipattn::rt::memcpy_h2d(dcu, cu.data(), 8), "copy") || !ok(hipattn::rt::memcpy_h2d(dlen, lens.data(), 4), "copy") ||
      !ok(hipattn::rt::memcpy_h2d(dstr, strength.data(), hq * 4), "copy") ||
      !ok(hipattn::rt::memset_async(dout, 0xFF, out_bytes, nullptr), "memset"))  // poison: every element must be written
    return 1;
  p.q = dq;
  p.k_cache = dk;
  p.v_cache = dv;
  p.out = dout;
  p.block_table = static_cast<const int32_t*>(dtab);
  p.cu_seqlens_q = static_cast<const int32_t*>(dcu);
  p.seq_lens_k = static_cast<const int32_t*>(dlen);

  DistanceTemperature variant;
  variant.strength = static_cast<const float*>(dstr);
  const size_t ws_bytes = hipattn::unified_attention_workspace_size(p);
  void* ws = nullptr;
  if (ws_bytes && !ok(hipattn::rt::malloc_device(&ws, ws_bytes), "malloc")) return 1;
  using F = hipattn::InstanceFilter;
  constexpr F kOnlyF16D128{.q_dtypes = F::q_bit(false), .kv_kinds = F::bit_of(hipattn::KvKind::same16),
                           .head_sizes = F::heads(128)};
  hipattn::unified_attention<kOnlyF16D128>(p, variant, ws, ws_bytes, nullptr);
  if (!ok(hipattn::rt::device_synchronize(), "unified_attention")) return 1;
  std::vector<hipattn::half_t> out(q.size());
  if (!ok(hipattn::rt::memcpy_d2h(out.data(), dout, out_bytes), "copy")) return 1;

  // float64 reference of the same formula (causal, bottom-right)
  double max_err = 0.0;
  const int ctx = kv_len - q_len, group = hq / hk;
  for (int i = 0; i < q_len; ++i)
    for (int h = 0; h < hq; ++h) {
      const int kh = h / group, pos = ctx + i;
      std::vector<double> logit(pos + 1);
      double mx = -INFINITY;
      for (int j = 0; j <= pos; ++j) {
        const int blk = table[j / bs], slot = j % bs;
        double s = 0;
        for (int c = 0; c < d; ++c)
          s += double(q[(size_t(i) * hq + h) * d + c].to_float()) *
               double(k[((size_t(blk) * bs + slot) * hk + kh) * d + c].to_float());
        s *= p.scale;
        s /= 1.0 + double(strength[h]) * (pos - j);
        logit[j] = 30.0 * std::tanh(s / 30.0);
        mx = std::max(mx, logit[j]);
      }
      double l = 0;
      std::vector<double> o(d, 0.0);
      for (int j = 0; j <= pos; ++j) {
        const double w = std::exp(logit[j] - mx);
        l += w;
        const int blk = table[j / bs], slot = j % bs;
        for (int c = 0; c < d; ++c) o[c] += w * double(v[((size_t(blk) * bs + slot) * hk + kh) * d + c].to_float());
      }
      for (int c = 0; c < d; ++c)
        max_err = std::max(max_err, std::fabs(double(out[(size_t(i) * hq + h) * d + c].to_float()) - o[c] / l));
    }
  const bool pass = max_err <= 3e-3;
  std::printf("custom variant: %d x %d heads, head %d, %d keys: max |out - float64 reference| = %.3g (%s)\n", q_len,
              hq, d, kv_len, max_err, pass ? "pass" : "FAIL");
  for (void* x : {dq, dk, dv, dout, dtab, dcu, dlen, dstr, ws}) ok(hipattn::rt::free_device(x), "free");
  return pass ? 0 : 1;
}
