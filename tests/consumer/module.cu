// One shared object over an instance library made by the installed hipattn_add_unified_instances(),
// built twice by tests/consumer/CMakeLists.txt: libconsumer_a (bf16 queries, 16-bit KV, head 128,
// both standard variants) and libconsumer_b (f16, head 64, plain), as two Python extensions would be.
// This translation unit compiles no kernel: hipattn::prebuilt::unified_attention launches through
// the library that this shared object links. Its one exported function, consumer_<module>_check:
//   without a GPU: the registry this module sees holds exactly its own library's instances (each
//                  module's registry is private: the other module's never shows here), and a key
//                  outside them throws Error(unsupported, "instance") naming what was built;
//   with a GPU:    a built instance runs (every output element written, finite) and a problem of the
//                  other dtype throws the same error from prebuilt::unified_attention itself.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn/hipattn.hpp"

namespace {

// This module's instances: CONSUMER_A = 1 (libconsumer_a) or 0 (libconsumer_b), a compile definition.
#if CONSUMER_A
#define CONSUMER_CHECK consumer_a_check
#define CONSUMER_NAME "a"
#define CONSUMER_EXPECT "built: targets sm_90; q bf16; kv same16; d 128; variants plain, full (2 instances)"
constexpr bool kBf16 = true;
constexpr int kHead = 128;
#else
#define CONSUMER_CHECK consumer_b_check
#define CONSUMER_NAME "b"
#define CONSUMER_EXPECT "built: targets sm_90; q f16; kv same16; d 64; variants plain (1 instances)"
constexpr bool kBf16 = false;
constexpr int kHead = 64;
#endif

int failures = 0;
void expect(bool ok, const std::string& what) {
  std::printf("hipattn prebuilt consumer %s: %s: %s\n", CONSUMER_NAME, ok ? "ok" : "FAILED", what.c_str());
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

constexpr hipattn::DType kDType = kBf16 ? hipattn::DType::bf16 : hipattn::DType::f16;
constexpr hipattn::DType kOtherDType = kBf16 ? hipattn::DType::f16 : hipattn::DType::bf16;

hipattn::UnifiedAttentionParams problem(hipattn::DType dt) {
  return hipattn::make_unified_params({.num_seqs = 2, .num_tokens = 9, .max_seqlen_q = 8, .max_seqlen_k = 200,
                                       .num_q_heads = 8, .num_kv_heads = 2, .head_size = kHead, .num_blocks = 16,
                                       .block_size = 16, .q_dtype = dt, .kv_dtype = dt});
}

// A random 16-bit value in [-1, 1] of this module's dtype.
uint16_t random_16(std::mt19937& rng) {
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  const float f = uni(rng);
  return kBf16 ? hipattn::bfloat16_t::from_float(f).bits : hipattn::half_t::from_float(f).bits;
}
float from_16(uint16_t x) {
  return kBf16 ? hipattn::bfloat16_t::from_bits(x).to_float() : hipattn::half_t::from_bits(x).to_float();
}

}  // namespace

// Returns the number of failed checks.
extern "C" __attribute__((visibility("default"))) int CONSUMER_CHECK() {
  using hipattn::InstanceKey;
  failures = 0;
  const auto lib = hipattn::prebuilt::unified_instances();
  std::vector<InstanceKey> keys;
  for (const auto& e : lib) keys.push_back(e.key);
  expect(hipattn::describe_instances(keys) == CONSUMER_EXPECT,
         "this module's registry: " + hipattn::describe_instances(keys) + " (want " CONSUMER_EXPECT ")");
  expect(hipattn::prebuilt::paged_decode_instances().size() == lib.size(), "paged decode has the same keys");
  // module a's library holds every family (MLA: its bf16 16-bit-cache row; dense prefill: d 128, plain
  // and softcap), module b's only unified attention and paged decode (the alias function)
  expect(hipattn::prebuilt::mla_decode_instances().size() == (CONSUMER_A ? 1u : 0u), "its MLA instances");
  expect(hipattn::prebuilt::dense_prefill_instances().size() == (CONSUMER_A ? 2u : 0u), "its dense prefill instances");
  const InstanceKey mine{hipattn::Family::unified, hipattn::Target::sm90, kBf16, hipattn::KvKind::same16, kHead, kHead,
                         hipattn::VariantKind::plain};
  expect(hipattn::find_instance(lib, mine) != nullptr, "its plain instance is found");
  InstanceKey other = mine;
  other.bf16 = !kBf16;
  expect_unsupported([&] { (void)hipattn::find_instance(lib, other); },
                     hipattn::to_string(other) + " is not compiled in; " + CONSUMER_EXPECT);
  if (!CONSUMER_A) {
    const InstanceKey mla{.family = hipattn::Family::mla_decode, .head_size = 576, .head_size_v = 512};
    expect_unsupported([&] { (void)hipattn::find_instance(hipattn::prebuilt::mla_decode_instances(), mla); },
                       "mla_decode sm_90 bf16 kv=same16 d=576/512 plain is not compiled in; no instances of this "
                       "family were built");
  }

  int n = 0;
  if (hipattn::rt::get_device_count(&n) != hipattn::rt::success || n == 0) {
    std::printf("hipattn prebuilt consumer %s: no GPU present: launches skipped\n", CONSUMER_NAME);
    return failures;
  }
  const hipattn::rt::DeviceProperties& props = hipattn::rt::cached_device_properties();
  std::printf("hipattn prebuilt consumer %s: device %s (target %s)\n", CONSUMER_NAME, props.arch_name.c_str(),
              std::string(hipattn::target_name(props.target)).c_str());
  // One launch of a built instance over random data, the output poisoned with NaN first.
  hipattn::UnifiedAttentionParams p = problem(kDType);
  const int lens[2] = {8, 200};  // q lengths 1 and 8
  std::vector<int32_t> cu = {0, 1, 9}, seq_k = {lens[0], lens[1]}, table(2 * 16);
  for (int i = 0; i < 32; ++i) table[i] = i % 16;
  std::mt19937 rng(7);
  const size_t q_elems = size_t(9) * 8 * kHead, kv_elems = size_t(16) * 16 * 2 * kHead;
  std::vector<uint16_t> q(q_elems), kv(kv_elems), out(q_elems, kBf16 ? 0x7fc0 : 0x7e00);  // out: NaN poison
  for (auto& x : q) x = random_16(rng);
  for (auto& x : kv) x = random_16(rng);
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
  hipattn::prebuilt::unified_attention(p, ws, ws_bytes, nullptr);
  expect(hipattn::rt::device_synchronize() == hipattn::rt::success, "launch of a built instance");
  hipattn::rt::memcpy_d2h(out.data(), dout, q_elems * 2);
  size_t bad = 0;
  for (uint16_t x : out)
    if (!std::isfinite(from_16(x))) ++bad;
  expect(bad == 0, std::to_string(q_elems - bad) + " of " + std::to_string(q_elems) + " outputs written and finite");

  hipattn::UnifiedAttentionParams p_other = p;
  p_other.q_dtype = p_other.kv_dtype = kOtherDType;
  expect_unsupported([&] { hipattn::prebuilt::unified_attention(p_other, ws, ws_bytes, nullptr); },
                     hipattn::to_string(other) + " is not compiled in");
  for (void* b : {dq, dk, dv, dout, dtab, dcu, dlen, ws})
    if (b) hipattn::rt::free_device(b);
  return failures;
}
