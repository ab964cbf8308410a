// A consumer of an instance library made by the installed hipattn_add_unified_instances() (bf16
// queries, 16-bit KV, head 128, both standard variants). This translation unit compiles no kernel:
// unified_attention launches through the library's registry.
//   without a GPU: the registry holds exactly the requested instances, and a key outside them throws
//                  Error(unsupported, "instance") naming what was built;
//   with a GPU:    a built instance runs (every output element written, finite) and an f16 problem
//                  throws the same error from unified_attention itself.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hipattn/hipattn.hpp"

namespace {

int failures = 0;
void expect(bool ok, const std::string& what) {
  std::printf("hipattn prebuilt consumer: %s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

// `call` must throw Error(unsupported, "instance") whose message holds `words`.
template <class Call>
void expect_unsupported(Call&& call, const std::string& words) {
  try {
    call();
    expect(false, "no error for a problem outside the library");
  } catch (const hipattn::Error& e) {
    const std::string msg = e.what();
    expect(e.code() == hipattn::ErrorCode::unsupported && e.field() == "instance" &&
               msg.find(words) != std::string::npos,
           msg);
  }
}

hipattn::UnifiedAttentionParams problem(hipattn::DType dt) {
  return hipattn::make_unified_params({.num_seqs = 2, .num_tokens = 9, .max_seqlen_q = 8, .max_seqlen_k = 200,
                                       .num_q_heads = 8, .num_kv_heads = 2, .head_size = 128, .num_blocks = 16,
                                       .block_size = 16, .q_dtype = dt, .kv_dtype = dt});
}

}  // namespace

int main() {
  using hipattn::UnifiedInstanceKey;
  const auto& lib = hipattn::unified_prebuilt_instances();
  expect(lib.size() == 2, "registry holds " + std::to_string(lib.size()) + " instances (2 requested)");
  UnifiedInstanceKey plain{hipattn::Target::sm90, true, hipattn::KvKind::same16, 128, hipattn::UnifiedVariantKind::plain};
  UnifiedInstanceKey full = plain;
  full.variant = hipattn::UnifiedVariantKind::full;
  expect(hipattn::find_unified_prebuilt(plain) != nullptr && hipattn::find_unified_prebuilt(full) != nullptr,
         "both requested instances are found");
  UnifiedInstanceKey f16 = plain;
  f16.bf16 = false;
  expect_unsupported([&] { (void)hipattn::find_unified_prebuilt(f16); },
                     "sm_90 f16 kv=same16 d=128 plain is not compiled in; built: targets sm_90; q bf16; kv same16; "
                     "d 128; variants plain, full (2 instances)");

  int n = 0;
  if (hipattn::rt::get_device_count(&n) != hipattn::rt::success || n == 0) {
    std::printf("hipattn prebuilt consumer: no GPU present: launches skipped\n");
    return failures ? 1 : 0;
  }
  // One launch of a built instance over random data, the output poisoned with NaN first.
  hipattn::UnifiedAttentionParams p = problem(hipattn::DType::bf16);
  const int lens[2] = {8, 200};  // q lengths 1 and 8
  std::vector<int32_t> cu = {0, 1, 9}, seq_k = {lens[0], lens[1]}, table(2 * 16);
  for (int i = 0; i < 32; ++i) table[i] = i % 16;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  auto bf16 = [&] {  // a random bf16 in [-1, 1] (truncated float)
    const float f = uni(rng);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<uint16_t>(u >> 16);
  };
  const size_t q_elems = 9 * 8 * 128, kv_elems = size_t(16) * 16 * 2 * 128;
  std::vector<uint16_t> q(q_elems), kv(kv_elems), out(q_elems, 0x7fc0);  // out: NaN poison
  for (auto& x : q) x = bf16();
  for (auto& x : kv) x = bf16();
  void *dq, *dk, *dv, *dout, *dtab, *dcu, *dlen;
  hipattn::rt::malloc_device(&dq, q_elems * 2);
  hipattn::rt::malloc_device(&dk, kv_elems * 2);
  hipattn::rt::malloc_device(&dv, kv_elems * 2);
  hipattn::rt::malloc_device(&dout, q_elems * 2);
  hipattn::rt::malloc_device(&dtab, table.size() * 4);
  hipattn::rt::malloc_device(&dcu, cu.size() * 4);
  hipattn::rt::malloc_device(&dlen, seq_k.size() * 4);
  hipattn::rt::memcpy_h2d(dq, q.data(), q_elems * 2);
  hipattn::rt::memcpy_h2d(dk, kv.data(), kv_elems * 2);
  hipattn::rt::memcpy_h2d(dv, kv.data(), kv_elems * 2);
  hipattn::rt::memcpy_h2d(dout, out.data(), q_elems * 2);
  hipattn::rt::memcpy_h2d(dtab, table.data(), table.size() * 4);
  hipattn::rt::memcpy_h2d(dcu, cu.data(), cu.size() * 4);
  hipattn::rt::memcpy_h2d(dlen, seq_k.data(), seq_k.size() * 4);
  p.q = dq; p.k_cache = dk; p.v_cache = dv; p.out = dout;
  p.block_table = static_cast<const int32_t*>(dtab);
  p.cu_seqlens_q = static_cast<const int32_t*>(dcu);
  p.seq_lens_k = static_cast<const int32_t*>(dlen);
  p.max_seqlen_k = 200;
  p.block_table_stride = 16;
  const size_t ws_bytes = hipattn::unified_attention_workspace_size(p);
  void* ws = nullptr;
  if (ws_bytes) hipattn::rt::malloc_device(&ws, ws_bytes);
  hipattn::unified_attention(p, ws, ws_bytes, nullptr);
  expect(hipattn::rt::device_synchronize() == hipattn::rt::success, "launch of a built instance");
  hipattn::rt::memcpy_d2h(out.data(), dout, q_elems * 2);
  size_t bad = 0;
  for (uint16_t x : out) {
    uint32_t u = uint32_t(x) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    if (!std::isfinite(f)) ++bad;
  }
  expect(bad == 0, std::to_string(q_elems - bad) + " of " + std::to_string(q_elems) + " outputs written and finite");

  hipattn::UnifiedAttentionParams p16 = p;
  p16.q_dtype = p16.kv_dtype = hipattn::DType::f16;
  expect_unsupported([&] { hipattn::unified_attention(p16, ws, ws_bytes, nullptr); }, "sm_90 f16 kv=same16 d=128 plain");
  for (void* b : {dq, dk, dv, dout, dtab, dcu, dlen, ws})
    if (b) hipattn::rt::free_device(b);
  return failures ? 1 : 0;
}
