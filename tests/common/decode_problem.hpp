// tests/common/decode_problem.hpp: random paged-decode problems (PagedDecodeParams) for the parity
// suite (tests/device/test_paged_decode.cu), built on the unified ones (paged_problem.hpp).
//
// A DecodeProblem is a "master" set of sequences: every sequence has the same q_len (1 to 8) and its
// own context (0 included, shorter than q_len included); its K/V cache, scales, sinks and slopes live
// once on the device. A DecodeBatch is a batch of some of those sequences (indices into the master,
// any order, repeats allowed): its own device q rows, block-table rows, seq_lens_k, out and lse,
// over the master's cache. So one sequence can run alone and inside other batches over the same data
// (batch invariance), and a captured graph can be replayed with other sequences loaded into the same
// buffers (graph capture). The float64 reference of a batch runs on its gathered host arrays through
// to_unified_params (the unified reference, ALGORITHM.md sections 1-3), so only the sequences asked
// for are computed.
//
// Poisoning: as in paged_problem.hpp, slots past each context and unused blocks hold NaN bytes and
// padded block-table entries an out-of-range id. With DecodeSpec::poison_unowned the unowned slots
// hold NaN and +Inf (fp8, which has no Inf: NaN and the largest finite code), the per-(token, head)
// scales of unowned slots are NaN, and the padded block-table entries (extra_table_cols more per
// row) point at real blocks that hold nothing but that poison.
//
// ROCm cache layout: with DecodeSpec::rocm_layout the problem keeps its rows (NHD / HND) master cache
// for the float64 reference (and for unified_attention, which reads only rows), and also holds a copy
// of the very same element bytes (poison included: unowned slots, unused blocks) in the rocm layout
// (PagedDecodeParams::kv_layout = KvCacheLayout::rocm: K [blocks, kv heads, d / x, block, x], V
// [blocks, kv heads, d, block]), built on the host from the master's bytes. The device params of a
// batch (DecodeBatch::params) point at that copy; DecodeBatch::rows_params is the same problem over
// the rows cache. DecodeSpec::rocm_pad > 0 pads every K stride above the slot by rocm_pad x-element
// chunks and every V stride above the slot by rocm_pad 8-element groups (the padding NaN bytes).
//
// The sweep grids of issue 10 (tests/data/decode_sweeps.json, copied from the seed documents) are
// mirrored as constants in namespace decode_sweeps below.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "hipattn/problem/paged_decode_params.hpp"
#include "hipattn/problem/paged_decode_rules.hpp"
#include "hipattn/reference/reference.hpp"
#include "../../testing/paged_problem.hpp"

namespace hipattn::testing {

// ---- tests/data/decode_sweeps.json, as constants (keep in step with the file) ----
namespace decode_sweeps {
// "paged_decode": the MiniMax-M3-like config, and the context lengths named by its boundaries.
inline constexpr int kMiniMaxQHeads = 16, kMiniMaxKvHeads = 1, kMiniMaxHeadSize = 128;
inline constexpr int kMiniMaxPageSizes[] = {16, 64, 128};
inline constexpr int kMiniMaxQLens[] = {1, 2, 4};
inline constexpr int kBoundaryContexts[] = {0, 1, 255, 256, 257, 1027};
// "split_k_sliding_window_decode".
inline constexpr int kSwQHeads = 32, kSwKvHeads = 8, kSwHeadSize = 128;
inline constexpr int kSwPageSizes[] = {16, 32};
inline constexpr int kSwWindows[] = {1024, 4096};  // vLLM's sliding_window W: window_left = W - 1
inline constexpr int kSwContexts[] = {590, 2048, 6700, 8192};
}  // namespace decode_sweeps

struct DecodeSpec {
  bool bf16 = false;                            // q (and 16-bit KV) dtype
  DType kv_dtype = DType::f16;                  // 16-bit: follows bf16; or fp8_e4m3fn / fp8_e4m3fnuz
  KvScaleMode scale_mode = KvScaleMode::none;   // fp8: per_tensor (the default) or per_token_head
  bool host_scale = false;                      // per_tensor: pass the scales as host floats (pointers null)
  int num_q_heads = 8, num_kv_heads = 2, head_size = 128, block_size = 16;
  int q_len = 1;
  std::vector<int> ctx;                         // seq_lens_k of each master sequence
  int window_left = -1;
  float softcap = 0.f;
  bool alibi = false, sinks = false, lse = true, hnd = false;
  int lse_pad = 0;                              // lse_stride_head = num_tokens + lse_pad
  bool poison_unowned = false;                  // NaN / +Inf in unowned slots, padded entries -> poison blocks
  int extra_table_cols = 0;                     // padded block-table columns past the longest context
  bool rocm_layout = false;                     // the kernel reads a rocm-layout copy of the cache
  int rocm_pad = 0;                             // rocm: padding units on each stride above the slot
  uint64_t seed = 1;
};

inline std::string describe(const DecodeSpec& s) {
  std::string kv = s.kv_dtype == DType::fp8_e4m3fn     ? "e4m3fn"
                   : s.kv_dtype == DType::fp8_e4m3fnuz ? "e4m3fnuz"
                                                       : (s.bf16 ? "bf16" : "f16");
  if (is_fp8(s.kv_dtype))
    kv += s.scale_mode == KvScaleMode::per_token_head ? "/token-head" : (s.host_scale ? "/tensor-host" : "/tensor-ptr");
  std::string c;
  for (size_t i = 0; i < s.ctx.size() && i < 8; ++i) c += (i ? "," : "") + std::to_string(s.ctx[i]);
  if (s.ctx.size() > 8) c += ",...(" + std::to_string(s.ctx.size()) + ")";
  return std::string(s.bf16 ? "bf16" : "f16") + " kv=" + kv + " h=" + std::to_string(s.num_q_heads) + "/" +
         std::to_string(s.num_kv_heads) + " d=" + std::to_string(s.head_size) + " page=" + std::to_string(s.block_size) +
         (s.hnd ? " HND" : " NHD") + " q_len=" + std::to_string(s.q_len) + " ctx={" + c + "}" +
         (s.window_left >= 0 ? " wl=" + std::to_string(s.window_left) : "") + (s.softcap > 0 ? " softcap" : "") +
         (s.alibi ? " alibi" : "") + (s.sinks ? " sinks" : "") + (s.lse ? " lse" : "") +
         (s.poison_unowned ? " poison" : "") +
         (s.rocm_layout ? " rocm" + (s.rocm_pad ? "+pad" + std::to_string(s.rocm_pad) : std::string()) : std::string());
}

// The strides (elements) of the rocm-layout copy of a decode problem's cache (DecodeSpec::rocm_pad).
struct RocmStrides {
  int64_t x = 0;  // elements of a chunk (16 bytes)
  int64_t k_slot = 0, k_chunk = 0, k_head = 0, k_block = 0;
  int64_t v_dim = 0, v_head = 0, v_block = 0;  // v_stride_slot is 1
};
inline RocmStrides rocm_strides(const DecodeSpec& s) {
  const DType kv = is_fp8(s.kv_dtype) ? s.kv_dtype : (s.bf16 ? DType::bf16 : DType::f16);
  PagedDecodeParams p;
  p.kv_dtype = kv;
  p.num_kv_heads = s.num_kv_heads;
  p.head_size = s.head_size;
  p.block_size = s.block_size;
  set_packed_rocm_kv_layout(p);
  RocmStrides r;
  r.x = rocm_kv_chunk_elems(kv);
  const int64_t kp = int64_t(s.rocm_pad) * r.x, vp = int64_t(s.rocm_pad) * 8;  // 16-byte / 8-slot units
  r.k_slot = p.k_stride_slot;
  r.k_chunk = p.k_stride_chunk + kp;
  r.k_head = (s.head_size / std::max<int64_t>(1, r.x)) * r.k_chunk + kp;
  r.k_block = s.num_kv_heads * r.k_head + kp;
  r.v_dim = p.v_stride_dim + vp;
  r.v_head = s.head_size * r.v_dim + vp;
  r.v_block = s.num_kv_heads * r.v_head + vp;
  return r;
}
// Sets p's cache to the rocm layout of strides `r` (pointers untouched).
inline void set_rocm_layout(PagedDecodeParams& p, const RocmStrides& r) {
  p.kv_layout = KvCacheLayout::rocm;
  p.k_stride_slot = r.k_slot;
  p.k_stride_chunk = r.k_chunk;
  p.k_stride_head = r.k_head;
  p.k_stride_block = r.k_block;
  p.v_stride_slot = 1;
  p.v_stride_dim = r.v_dim;
  p.v_stride_head = r.v_head;
  p.v_stride_block = r.v_block;
}

// The rocm-layout copy of a host problem's cache: every element of every block, slot and head (the
// poison of unowned slots and unused blocks included) at its rocm position; padding NaN bytes.
inline void make_rocm_cache(const HostProblem& h, const RocmStrides& r, std::vector<uint8_t>& k, std::vector<uint8_t>& v) {
  const int eb = h.elem_bytes(), bs = h.spec.block_size, hk = h.spec.num_kv_heads, d = h.spec.head_size;
  k.assign(size_t(h.num_blocks) * size_t(r.k_block) * eb, 0xFF);
  v.assign(size_t(h.num_blocks) * size_t(r.v_block) * eb, 0xFF);
  for (int blk = 0; blk < h.num_blocks; ++blk)
    for (int hh = 0; hh < hk; ++hh)
      for (int slot = 0; slot < bs; ++slot) {
        const int64_t src = blk * h.stride_block + slot * h.stride_slot + hh * h.stride_head;
        for (int e = 0; e < d; ++e) {
          const int64_t kd = blk * r.k_block + hh * r.k_head + (e / r.x) * r.k_chunk + slot * r.k_slot + e % r.x;
          const int64_t vd = blk * r.v_block + hh * r.v_head + e * r.v_dim + slot;
          std::memcpy(&k[size_t(kd) * eb], &h.k_cache[size_t(src + e) * eb], size_t(eb));
          std::memcpy(&v[size_t(vd) * eb], &h.v_cache[size_t(src + e) * eb], size_t(eb));
        }
      }
}

inline ProblemSpec to_problem_spec(const DecodeSpec& d) {
  ProblemSpec s;
  s.bf16 = d.bf16;
  s.kv_dtype = is_fp8(d.kv_dtype) ? d.kv_dtype : (d.bf16 ? DType::bf16 : DType::f16);
  s.scale_mode = !is_fp8(d.kv_dtype) ? KvScaleMode::none
                 : d.scale_mode == KvScaleMode::none ? KvScaleMode::per_tensor
                                                     : d.scale_mode;
  s.num_q_heads = d.num_q_heads;
  s.num_kv_heads = d.num_kv_heads;
  s.head_size = d.head_size;
  s.block_size = d.block_size;
  for (int c : d.ctx) s.seqs.push_back({d.q_len, c});
  s.causal = true;
  s.window_left = d.window_left;
  s.softcap = d.softcap;
  s.alibi = d.alibi;
  s.sinks = d.sinks;
  s.lse = d.lse;
  s.hnd = d.hnd;
  s.seed = d.seed;
  return s;
}

// The paged-decode problem with the fields of a unified one (the library's conversion).
inline PagedDecodeParams paged_from_unified(const UnifiedAttentionParams& u, int32_t q_len) {
  return paged_decode_params_from_unified(u, q_len);
}

// The host traits that bound a problem (for paged_decode_workspace_size).
inline PagedDecodeTraits traits_of(const PagedDecodeParams& p) {
  PagedDecodeTraits t;
  t.max_num_seqs = p.num_seqs;
  t.max_q_len = p.q_len;
  t.num_q_heads = p.num_q_heads;
  t.num_kv_heads = p.num_kv_heads;
  t.max_head_size = p.head_size;
  t.max_seqlen_k = p.max_seqlen_k;
  return t;
}

// The two poison codes of an element of `dt`: NaN and +Inf (fp8: NaN and the largest finite value).
inline void poison_bytes(DType dt, int which, uint8_t* dst) {
  uint16_t v = 0;
  switch (dt) {
    case DType::f16: v = which ? 0x7C00 : 0x7E00; break;
    case DType::bf16: v = which ? 0x7F80 : 0x7FC0; break;
    case DType::fp8_e4m3fn: dst[0] = which ? 0x7E : 0x7F; return;
    case DType::fp8_e4m3fnuz: dst[0] = which ? 0x7F : 0x80; return;
    default: return;
  }
  std::memcpy(dst, &v, 2);
}

// Widen the block table by `extra` padded columns (out-of-range ids), and with `poison` write
// NaN / +Inf into every unowned slot, NaN into the per-(token, head) scales of unowned slots, and point
// every padded entry at a block that no sequence owns.
inline void adjust_host_problem(HostProblem& h, int extra, bool poison) {
  const int bs = h.spec.block_size, hk = h.spec.num_kv_heads, d = h.spec.head_size, n = h.num_seqs;
  if (extra > 0) {
    const int old = h.max_blocks_per_seq, wide = old + extra;
    std::vector<int32_t> t(size_t(n) * wide, 0x3fffffff);
    for (int b = 0; b < n; ++b)
      for (int c = 0; c < old; ++c) t[size_t(b) * wide + c] = h.block_table[size_t(b) * old + c];
    h.block_table = std::move(t);
    h.max_blocks_per_seq = wide;
  }
  if (!poison) return;
  const int mb = h.max_blocks_per_seq;
  std::vector<uint8_t> owned(size_t(h.num_blocks) * bs, 0), referenced(size_t(h.num_blocks), 0);
  for (int b = 0; b < n; ++b)
    for (int j = 0; j < h.seq_lens_k[b]; ++j) {
      const int blk = h.block_table[size_t(b) * mb + j / bs];
      owned[size_t(blk) * bs + j % bs] = 1;
      referenced[size_t(blk)] = 1;
    }
  std::vector<int32_t> spare;
  for (int blk = 0; blk < h.num_blocks; ++blk)
    if (!referenced[size_t(blk)]) spare.push_back(blk);
  size_t k = 0;
  for (int b = 0; b < n && !spare.empty(); ++b)
    for (int c = (h.seq_lens_k[b] + bs - 1) / bs; c < mb; ++c) h.block_table[size_t(b) * mb + c] = spare[k++ % spare.size()];
  const int eb = h.elem_bytes();
  size_t parity = 0;
  for (int blk = 0; blk < h.num_blocks; ++blk)
    for (int slot = 0; slot < bs; ++slot) {
      if (owned[size_t(blk) * bs + slot]) continue;
      for (int hh = 0; hh < hk; ++hh) {
        const int64_t base = blk * h.stride_block + slot * h.stride_slot + hh * h.stride_head;
        for (int e = 0; e < d; ++e, ++parity) {
          poison_bytes(h.spec.kv_dtype, int(parity & 1), &h.k_cache[size_t(base + e) * eb]);
          poison_bytes(h.spec.kv_dtype, int((parity >> 1) & 1), &h.v_cache[size_t(base + e) * eb]);
        }
        if (h.k_scale.size() > 1) {
          const size_t si = (size_t(blk) * bs + slot) * hk + hh;
          h.k_scale[si] = NAN;
          h.v_scale[si] = NAN;
        }
      }
    }
}

inline HostProblem make_decode_host(const DecodeSpec& s) {
  HostProblem h(to_problem_spec(s));
  adjust_host_problem(h, s.extra_table_cols, s.poison_unowned);
  return h;
}

// Seeded random decode problems: ragged contexts 0 .. 32K (kept to a modest total of KV and of
// reference work), every feature, layout, KV dtype and scale mode drawn at random.
inline DecodeSpec random_decode_spec(uint64_t seed) {
  std::mt19937_64 r(seed);
  auto pick = [&](std::initializer_list<int> xs) { return *(xs.begin() + r() % xs.size()); };
  DecodeSpec s;
  s.seed = seed;
  s.bf16 = r() % 2;
  s.num_kv_heads = pick({1, 2, 4, 8});
  const int group = pick({1, 2, 3, 4, 8, 16});
  while (s.num_kv_heads > 1 && s.num_kv_heads * group > 32) s.num_kv_heads /= 2;
  s.num_q_heads = s.num_kv_heads * group;
  s.head_size = pick({64, 96, 128, 192, 256});
  s.block_size = pick({1, 7, 16, 16, 32, 64, 128});
  s.q_len = 1 + int(r() % 8);
  const int n = 1 + int(r() % 6);
  for (int b = 0; b < n; ++b) {
    const int kind = int(r() % 6);
    s.ctx.push_back(kind == 0 ? int(r() % 3) : kind <= 3 ? int(r() % 2001) : int(r() % 32769));
  }
  s.window_left = r() % 3 == 0 ? pick({0, 1, 63, 64, 500, 1023, 4095}) : -1;
  s.softcap = r() % 4 == 0 ? 30.f : 0.f;
  s.alibi = r() % 4 == 0;
  s.sinks = r() % 3 == 0;
  s.lse = r() % 4 != 0;
  s.lse_pad = r() % 2 ? int(r() % 5) : 0;
  s.hnd = r() % 2;
  const int kv = int(r() % 4);
  s.kv_dtype = kv == 0 ? DType::fp8_e4m3fn : kv == 1 ? DType::fp8_e4m3fnuz : (s.bf16 ? DType::bf16 : DType::f16);
  const int sm = int(r() % 3);
  s.scale_mode = sm == 2 ? KvScaleMode::per_token_head : KvScaleMode::per_tensor;
  s.host_scale = sm == 1;
  s.poison_unowned = r() % 2;
  s.extra_table_cols = int(r() % 3);
  // Keep the float64 reference (q_len x heads x visible keys x 2d) and the cache fill modest: halve
  // the longest context until both are.
  auto visible = [&](int c) {
    int64_t v = 0;
    for (int i = 0; i < s.q_len; ++i) {
      const int64_t pos = int64_t(c) - s.q_len + i;
      if (pos >= 0) v += s.window_left >= 0 ? std::min<int64_t>(pos + 1, s.window_left + 1) : pos + 1;
    }
    return v;
  };
  for (;;) {
    int64_t work = 0, fill = 0;
    for (int c : s.ctx) {
      work += visible(c) * s.num_q_heads * 2 * s.head_size;
      fill += int64_t(c) * s.num_kv_heads * s.head_size * 2;
    }
    if (work <= 40'000'000 && fill <= 12'000'000) break;
    *std::max_element(s.ctx.begin(), s.ctx.end()) /= 2;
  }
  return s;
}

// The host side of a master problem (its arrays, and the reference of any of its batches).
struct DecodeHostProblem {
  DecodeSpec spec;
  HostProblem h;
  RocmStrides rocm;                       // spec.rocm_layout: the strides of the copy below
  std::vector<uint8_t> rocm_k, rocm_v;    // spec.rocm_layout: the cache bytes in the rocm layout
  explicit DecodeHostProblem(const DecodeSpec& s) : spec(s), h(make_decode_host(s)) {
    if (spec.rocm_layout) {
      rocm = rocm_strides(spec);
      make_rocm_cache(h, rocm, rocm_k, rocm_v);
    }
  }
  DecodeHostProblem(const DecodeHostProblem&) = delete;
  DecodeHostProblem& operator=(const DecodeHostProblem&) = delete;

  int num_seqs() const { return h.num_seqs; }
  int q_len() const { return spec.q_len; }
  int64_t row_elems() const { return int64_t(spec.num_q_heads) * spec.head_size; }  // one token's q / out
  float k_scale_value() const { return h.k_scale.empty() ? 1.f : h.k_scale[0]; }
  float v_scale_value() const { return h.v_scale.empty() ? 1.f : h.v_scale[0]; }
  bool host_scale() const { return spec.host_scale && h.k_scale.size() == 1; }
  std::vector<int> all() const {
    std::vector<int> v(static_cast<size_t>(num_seqs()));
    for (int i = 0; i < num_seqs(); ++i) v[size_t(i)] = i;
    return v;
  }

  // The host problem of the sequences `idx` (gathered q rows, block-table rows and lengths), its
  // pointers valid while `g` lives, over the rows cache (spec.rocm_layout or not); then the reference of it (through to_unified_params, as the brief
  // of the family says: cu_seqlens_q = 0, q_len, 2 q_len, ...; host-float scales passed as pointers).
  struct Gathered {
    std::vector<uint16_t> q;
    std::vector<int32_t> bt, sk, cu;
  };
  PagedDecodeParams host_params(const std::vector<int>& idx, Gathered& g) const {
    const int64_t qrow = int64_t(q_len()) * row_elems();
    const int64_t mb = h.max_blocks_per_seq;
    g.q.clear(), g.bt.clear(), g.sk.clear(), g.cu.assign(1, 0);
    for (int s : idx) {
      g.q.insert(g.q.end(), h.q.begin() + s * qrow, h.q.begin() + (s + 1) * qrow);
      g.bt.insert(g.bt.end(), h.block_table.begin() + s * mb, h.block_table.begin() + (s + 1) * mb);
      g.sk.push_back(h.seq_lens_k[size_t(s)]);
      g.cu.push_back(g.cu.back() + q_len());
    }
    UnifiedAttentionParams u = const_cast<HostProblem&>(h).host_params();
    PagedDecodeParams p = paged_from_unified(u, q_len());
    p.q = g.q.data();
    p.block_table = g.bt.data();
    p.seq_lens_k = g.sk.data();
    p.num_seqs = int32_t(idx.size());
    p.out = nullptr;
    p.lse = nullptr;
    if (host_scale()) {
      p.k_scale = p.v_scale = nullptr;
      p.k_scale_value = k_scale_value();
      p.v_scale_value = v_scale_value();
    }
    return p;
  }
  reference::AttentionResult reference(const std::vector<int>& idx, int window_left) const {
    Gathered g;
    PagedDecodeParams p = host_params(idx, g);
    p.window_left = window_left;
    const float ks = p.k_scale_value_or_one(), vs = p.v_scale_value_or_one();
    return reference::unified_attention(to_unified_params(p, g.cu.data(), &ks, &vs));
  }
  reference::AttentionResult reference(const std::vector<int>& idx) const { return reference(idx, spec.window_left); }
};

}  // namespace hipattn::testing

#if defined(HIPATTN_HAS_DEVICE)
#include "compare.hpp"
#include "hipattn/dispatch/paged_decode.hpp"
#include "hipattn/dispatch/unified_attention.hpp"

namespace hipattn::testing {

// A non-blocking stream (destroyed with the object).
struct TestStream {
  rt::stream_t s{};
  TestStream() {
#if defined(HIPATTN_BACKEND_HIP)
    HIPATTN_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
#else
    HIPATTN_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
#endif
  }
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;
  ~TestStream() {
#if defined(HIPATTN_BACKEND_HIP)
    (void)hipStreamDestroy(s);
#else
    (void)cudaStreamDestroy(s);
#endif
  }
  void sync() const {
#if defined(HIPATTN_BACKEND_HIP)
    HIPATTN_CHECK(hipStreamSynchronize(s));
#else
    HIPATTN_CHECK(cudaStreamSynchronize(s));
#endif
  }
};

// The master problem: host arrays and their device copies.
// The master problem: host arrays and their device copies (and, with spec.rocm_layout, the device
// copy of the rocm-layout cache, block ids shifted by dp.block_base as the rows cache's).
struct DecodeProblem : DecodeHostProblem {
  DeviceProblem dp;
  DeviceBuffer rk, rv;
  explicit DecodeProblem(const DecodeSpec& s) : DecodeHostProblem(s), dp(h) {
    if (!spec.rocm_layout) return;
    const size_t eb = size_t(h.elem_bytes()), base = size_t(dp.block_base);
    rk = DeviceBuffer(size_t(dp.device_blocks) * size_t(rocm.k_block) * eb);
    rv = DeviceBuffer(size_t(dp.device_blocks) * size_t(rocm.v_block) * eb);
    HIPATTN_CHECK(rt::memset_async(rk.ptr, 0xFF, rk.bytes, nullptr));
    HIPATTN_CHECK(rt::memset_async(rv.ptr, 0xFF, rv.bytes, nullptr));
    HIPATTN_CHECK(rt::device_synchronize());
    HIPATTN_CHECK(rt::memcpy_h2d(rk.as<char>() + base * size_t(rocm.k_block) * eb, rocm_k.data(), rocm_k.size()));
    HIPATTN_CHECK(rt::memcpy_h2d(rv.as<char>() + base * size_t(rocm.v_block) * eb, rocm_v.data(), rocm_v.size()));
    HIPATTN_CHECK(rt::device_synchronize());
  }
};

// A batch of master sequences with its own q, block table, lengths and outputs on the device.
struct DecodeBatch {
  const DecodeProblem& m;
  std::vector<int> idx;
  int num_tokens = 0;
  int64_t lse_stride = 0;
  DeviceBuffer q, bt, sk, out, lse;

  DecodeBatch(const DecodeProblem& master, std::vector<int> seqs) : m(master), idx(std::move(seqs)) {
    num_tokens = int(idx.size()) * m.q_len();
    lse_stride = std::max(1, num_tokens) + m.spec.lse_pad;
    q = DeviceBuffer(std::max<size_t>(16, size_t(num_tokens) * m.row_elems() * 2));
    bt = DeviceBuffer(std::max<size_t>(16, idx.size() * size_t(m.h.max_blocks_per_seq) * 4));
    sk = DeviceBuffer(std::max<size_t>(16, idx.size() * 4));
    out = DeviceBuffer(std::max<size_t>(16, size_t(num_tokens) * m.row_elems() * 2));
    lse = DeviceBuffer(size_t(m.spec.num_q_heads) * lse_stride * 4);
    load(idx);
  }

  // (Re)load the q rows, block-table rows and lengths of master sequences `seqs` (same count).
  void load(const std::vector<int>& seqs) {
    if (seqs.size() != idx.size()) throw std::invalid_argument("DecodeBatch::load: another batch size");
    idx = seqs;
    DecodeHostProblem::Gathered g;
    (void)m.host_params(idx, g);
    for (auto& x : g.bt)
      if (x >= 0 && x < m.h.num_blocks) x += m.dp.block_base;
    if (!g.q.empty()) HIPATTN_CHECK(rt::memcpy_h2d(q.ptr, g.q.data(), g.q.size() * 2));
    if (!g.bt.empty()) HIPATTN_CHECK(rt::memcpy_h2d(bt.ptr, g.bt.data(), g.bt.size() * 4));
    if (!g.sk.empty()) HIPATTN_CHECK(rt::memcpy_h2d(sk.ptr, g.sk.data(), g.sk.size() * 4));
    // A pageable copy may return before its DMA lands: finish it (and the master's copies) before
    // any launch on a non-blocking stream.
    HIPATTN_CHECK(rt::device_synchronize());
  }
  std::vector<int32_t> seq_lens() const {
    std::vector<int32_t> v;
    for (int s : idx) v.push_back(m.h.seq_lens_k[size_t(s)]);
    return v;
  }

  // The device problem over the cache the spec asks for: the rocm copy with spec.rocm_layout, else
  // the rows cache.
  PagedDecodeParams params() const {
    PagedDecodeParams p = rows_params();
    if (m.spec.rocm_layout) {
      p.k_cache = m.rk.ptr;
      p.v_cache = m.rv.ptr;
      set_rocm_layout(p, m.rocm);
    }
    return p;
  }
  // The same problem over the rows (NHD / HND) cache, whatever the spec: the one to_unified_params
  // (unified_attention) takes.
  PagedDecodeParams rows_params() const {
    PagedDecodeParams p = paged_from_unified(m.dp.params(), m.q_len());
    p.q = q.ptr;
    p.block_table = bt.as<int32_t>();
    p.seq_lens_k = sk.as<int32_t>();
    p.num_seqs = int32_t(idx.size());
    p.out = out.ptr;
    p.lse = m.spec.lse ? lse.as<float>() : nullptr;
    p.lse_stride_head = lse_stride;
    if (m.host_scale()) {
      p.k_scale = p.v_scale = nullptr;
      p.k_scale_value = m.k_scale_value();
      p.v_scale_value = m.v_scale_value();
    }
    return p;
  }

  void poison(rt::stream_t s = nullptr) const {
    HIPATTN_CHECK(rt::memset_async(out.ptr, 0xFF, out.bytes, s));
    HIPATTN_CHECK(rt::memset_async(lse.ptr, 0xFF, lse.bytes, s));
  }
  void download(std::vector<uint16_t>& o, std::vector<float>& l) const {
    o.resize(size_t(num_tokens) * m.row_elems());
    l.resize(size_t(m.spec.num_q_heads) * lse_stride);
    if (!o.empty()) HIPATTN_CHECK(rt::memcpy_d2h(o.data(), out.ptr, o.size() * 2));
    HIPATTN_CHECK(rt::memcpy_d2h(l.data(), lse.ptr, l.size() * 4));
  }
};

// Every output element (and LSE, when the batch has one) against the reference of the batch.
inline CompareStats compare_decode(const DecodeBatch& b, const reference::AttentionResult& ref,
                                   const std::vector<uint16_t>& out, const std::vector<float>& lse) {
  const bool bf16 = b.m.spec.bf16;
  const Tolerance tol = out_tolerance(bf16);
  CompareStats st;
  for (size_t i = 0; i < out.size(); ++i) {
    const double got = bf16 ? bfloat16_t::from_bits(out[i]).to_float() : half_t::from_bits(out[i]).to_float();
    const double want = ref.out[i];
    const double err = std::fabs(got - want);
    st.sum_sq_err += std::isfinite(err) ? err * err : 1e30;
    st.sum_sq_ref += want * want;
    ++st.checked;
    if (!(err <= tol.atol + tol.rtol * std::fabs(want))) {
      if (st.bad++ == 0)
        st.first_bad = "out[token " + std::to_string(i / b.m.row_elems()) + ", head " +
                       std::to_string(i % b.m.row_elems() / b.m.spec.head_size) + ", d " +
                       std::to_string(i % b.m.spec.head_size) + "] = " + std::to_string(got) + ", want " +
                       std::to_string(want);
    } else {
      st.max_abs = std::max(st.max_abs, err);
    }
  }
  if (b.m.spec.lse) {
    const int64_t T = b.num_tokens;
    for (int64_t hh = 0; hh < b.m.spec.num_q_heads; ++hh)
      for (int64_t t = 0; t < T; ++t) {
        const double got = lse[size_t(hh * b.lse_stride + t)], want = ref.lse[size_t(hh * T + t)];
        ++st.checked;
        const bool ok = std::isinf(want) ? (got == want)
                                         : std::fabs(got - want) <= kLseTolerance.atol + kLseTolerance.rtol * std::fabs(want);
        if (!ok && st.bad++ == 0)
          st.first_bad = "lse[head " + std::to_string(hh) + ", token " + std::to_string(t) + "] = " + std::to_string(got) +
                         ", want " + std::to_string(want);
      }
  }
  return st;
}

// The plan paged_decode makes for (p, opt) on this device.
inline PagedDecodePlan device_plan(const PagedDecodeParams& p, const PagedDecodeOptions& opt) {
  return plan_paged_decode(p, opt, plan_device(rt::cached_device_properties()));
}

// After a planned call: the device plan in the workspace (status, item_task0, every task slot)
// equals the host plan of the same lengths (plan_decode_tasks_host), and every item's tasks cover
// its visible tiles. Returns the most parts of one item (0 for an unplanned call).
inline int check_device_plan(const PagedDecodeParams& p, const PagedDecodeOptions& opt, void* ws,
                             const std::vector<int32_t>& seq_lens) {
  const PagedDecodePlan plan = device_plan(p, opt);
  if (plan.split != SlotSplit::planned) return 0;
  const PagedDecodeBuffers b = paged_decode_buffers(p, plan, ws);
  std::vector<PlanTask> tasks(size_t(plan.capacity)), want(tasks.size());
  std::vector<int32_t> task0(size_t(p.num_seqs)), want0(task0.size()), n(task0.size()), first(task0.size());
  int32_t status = -1;
  HIPATTN_CHECK(rt::memcpy_d2h(tasks.data(), b.tasks, tasks.size() * sizeof(PlanTask)));
  HIPATTN_CHECK(rt::memcpy_d2h(task0.data(), b.item_task0, task0.size() * 4));
  HIPATTN_CHECK(rt::memcpy_d2h(&status, b.status, 4));
  const DecodeItemShape shape{p.q_len, plan.tile.keys(), true, p.window_left};
  const int32_t hs = plan_decode_tasks_host(seq_lens.data(), p.num_seqs, shape, plan.capacity, plan.fixed_tiles,
                                            want.data(), want0.data(), n.data(), first.data(), plan.wave_slots);
  EXPECT_EQ(status, kPlanOk) << "the device planner overflowed its slots (" << plan.reason << ")";
  EXPECT_EQ(hs, kPlanOk) << "the host plan overflowed (" << plan.reason << ")";
  EXPECT_EQ(task0, want0) << "item_task0 differs from the host plan";
  int most = 0;
  for (size_t s = 0; s < tasks.size(); ++s) {
    const PlanTask &x = tasks[s], &y = want[s];
    EXPECT_TRUE(x.item == y.item && x.tile_begin == y.tile_begin && x.tile_end == y.tile_end && x.part == y.part &&
                x.parts == y.parts)
        << "slot " << s << ": device {" << x.item << ", " << x.tile_begin << ", " << x.tile_end << ", " << x.part << "/"
        << x.parts << "} host {" << y.item << ", " << y.tile_begin << ", " << y.tile_end << ", " << y.part << "/"
        << y.parts << "}";
    if (x.item >= 0) most = std::max<int>(most, x.parts);
  }
  return most;
}

}  // namespace hipattn::testing
#endif  // HIPATTN_HAS_DEVICE
