// testing/paged_problem.hpp: random paged-attention problems for the parity suite and the
// benchmarks: host arrays (for the float64 reference) and their device copies.
//
// Pages are placed by a random permutation (a fragmented block table). Slots past each sequence's
// context, unused blocks and (optionally) everything below the used region are filled with NaN
// bytes; padded block-table entries hold an out-of-range id, so a kernel that reads what it must not
// either produces NaN or faults.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hipattn/numeric/numeric.hpp"
#include "hipattn/problem/unified_builder.hpp"
#include "hipattn/problem/unified_params.hpp"

namespace hipattn::testing {

// What to build.
struct ProblemSpec {
  bool bf16 = false;
  DType kv_dtype = DType::f16;  // f16/bf16 (must equal q's) or an fp8 type
  KvScaleMode scale_mode = KvScaleMode::none;
  int num_q_heads = 8, num_kv_heads = 2, head_size = 128, block_size = 16;
  std::vector<std::pair<int, int>> seqs;  // (q_len, kv_len)
  bool causal = true;
  int window_left = -1;
  float softcap = 0.f;
  bool alibi = false, qq_bias = false, sinks = false, lse = true;
  int qq_bias_stride = 0;
  bool hnd = false;             // HND cache layout instead of NHD
  int64_t min_cache_bytes = 0;  // device cache at least this large; used blocks placed at its end
  uint64_t seed = 1;
  bool fill_reference_data = true;  // false (benchmarks): no host cache; the device cache is filled
                                    // with random finite values on the device, nothing is NaN-filled
};

inline uint16_t float_to_16(float x, bool bf16) { return bf16 ? bfloat16_t::from_float(x).bits : half_t::from_float(x).bits; }

// The host side of a problem: compact cache (block ids 0..num_blocks-1) and every array.
struct HostProblem {
  ProblemSpec spec;
  int num_tokens = 0, num_seqs = 0, max_q = 0, max_k = 0, num_blocks = 0, max_blocks_per_seq = 0;
  int64_t stride_block = 0, stride_slot = 0, stride_head = 0;  // cache strides (elements)
  std::vector<uint16_t> q;
  std::vector<uint8_t> k_cache, v_cache;  // raw bytes of the cache elements
  std::vector<float> k_scale, v_scale;    // [1] or [num_blocks, block_size, num_kv_heads]
  std::vector<int32_t> block_table, cu_seqlens_q, seq_lens_k;
  std::vector<float> sinks, alibi_slopes, qq_bias;
  std::vector<uint16_t> out;
  std::vector<float> lse;
  int elem_bytes() const { return dtype_size(spec.kv_dtype); }
  KvLayout layout() const { return spec.hnd ? KvLayout::hnd : KvLayout::nhd; }

  explicit HostProblem(const ProblemSpec& s) : spec(s) {
    std::mt19937_64 rng(s.seed);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::uniform_real_distribution<float> uni(0.f, 1.f);
    num_seqs = static_cast<int>(s.seqs.size());
    cu_seqlens_q.push_back(0);
    for (auto [ql, kl] : s.seqs) {
      cu_seqlens_q.push_back(cu_seqlens_q.back() + ql);
      seq_lens_k.push_back(kl);
      max_q = std::max(max_q, ql);
      max_k = std::max(max_k, kl);
    }
    num_tokens = cu_seqlens_q.back();
    const int bs = s.block_size, hk = s.num_kv_heads, d = s.head_size;
    max_blocks_per_seq = std::max(1, (max_k + bs - 1) / bs);
    int used = 0;
    for (auto [ql, kl] : s.seqs) used += (kl + bs - 1) / bs;
    num_blocks = used + 3;  // a few never-referenced blocks, NaN-filled
    const CacheStrides cs = cache_strides(layout(), bs, hk, d);
    stride_block = cs.block, stride_slot = cs.slot, stride_head = cs.head;
    // Block table: a random permutation of the used blocks; padded entries hold an invalid id.
    std::vector<int32_t> perm(num_blocks);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    block_table.assign(size_t(num_seqs) * max_blocks_per_seq, 0x3fffffff);
    int next = 0;
    for (int b = 0; b < num_seqs; ++b)
      for (int pg = 0; pg < (seq_lens_k[b] + bs - 1) / bs; ++pg) block_table[size_t(b) * max_blocks_per_seq + pg] = perm[next++];
    // Cache: NaN everywhere, then real values in owned slots.
    const size_t elems = size_t(num_blocks) * stride_block;
    const bool fp8 = is_fp8(s.kv_dtype);
    if (s.fill_reference_data) {
      k_cache.assign(elems * elem_bytes(), 0xFF);
      v_cache.assign(elems * elem_bytes(), 0xFF);
    }
    if (fp8) {
      if (s.scale_mode == KvScaleMode::per_tensor) {
        k_scale = {0.015f + 0.01f * uni(rng)};
        v_scale = {0.015f + 0.01f * uni(rng)};
      } else {
        k_scale.resize(size_t(num_blocks) * bs * hk);
        v_scale.resize(k_scale.size());
        for (auto& x : k_scale) x = 0.01f + 0.02f * uni(rng);
        for (auto& x : v_scale) x = 0.01f + 0.02f * uni(rng);
      }
    }
    for (int b = 0; b < num_seqs && s.fill_reference_data; ++b)
      for (int j = 0; j < seq_lens_k[b]; ++j) {
        const int blk = block_table[size_t(b) * max_blocks_per_seq + j / bs], slot = j % bs;
        for (int h = 0; h < hk; ++h) {
          const int64_t base = blk * stride_block + slot * stride_slot + h * stride_head;
          const size_t si = (size_t(blk) * bs + slot) * hk + h;
          for (int e = 0; e < d; ++e) {
            const float kx = normal(rng), vx = normal(rng);
            put(k_cache, base + e, kx, fp8 ? (s.scale_mode == KvScaleMode::per_tensor ? k_scale[0] : k_scale[si]) : 1.f);
            put(v_cache, base + e, vx, fp8 ? (s.scale_mode == KvScaleMode::per_tensor ? v_scale[0] : v_scale[si]) : 1.f);
          }
        }
      }
    q.resize(size_t(num_tokens) * s.num_q_heads * d);
    for (auto& x : q) x = float_to_16(normal(rng), s.bf16);
    if (s.sinks) { sinks.resize(s.num_q_heads); for (auto& x : sinks) x = 2.f * normal(rng); }
    if (s.alibi) {
      alibi_slopes.resize(s.num_q_heads);
      for (int h = 0; h < s.num_q_heads; ++h) alibi_slopes[h] = std::exp2(-8.f * (h + 1) / s.num_q_heads);
    }
    if (s.qq_bias) {
      if (s.qq_bias_stride < 1) throw std::invalid_argument("qq_bias_stride");
      qq_bias.resize(size_t(std::max(1, max_q)) * s.qq_bias_stride);
      for (auto& x : qq_bias) x = normal(rng);
    }
    out.assign(q.size(), 0xFFFF);
    lse.assign(size_t(s.num_q_heads) * std::max(1, num_tokens), NAN);
  }

  void put(std::vector<uint8_t>& cache, int64_t idx, float x, float scale) {
    switch (spec.kv_dtype) {
      case DType::fp8_e4m3fn: cache[idx] = fp8_e4m3fn_t::from_float(x / scale).bits; break;
      case DType::fp8_e4m3fnuz: cache[idx] = fp8_e4m3fnuz_t::from_float(x / scale).bits; break;
      default: {
        const uint16_t b = float_to_16(x, spec.bf16);
        std::memcpy(&cache[idx * 2], &b, 2);
      }
    }
  }

  // The problem description over the given pointers (host or device).
  UnifiedAttentionParams params(const void* q_, const void* k_, const void* v_, const int32_t* bt, const int32_t* cu,
                                const int32_t* sk, const float* ks, const float* vs, const float* sinks_,
                                const float* slopes, const float* qq, void* out_, float* lse_, int32_t nblocks) const {
    const auto& s = spec;
    UnifiedAttentionParams p = make_unified_params({.num_seqs = num_seqs,
                                                    .num_tokens = num_tokens,
                                                    .max_seqlen_q = max_q,
                                                    .max_seqlen_k = max_k,
                                                    .num_q_heads = s.num_q_heads,
                                                    .num_kv_heads = s.num_kv_heads,
                                                    .head_size = s.head_size,
                                                    .num_blocks = nblocks,
                                                    .block_size = s.block_size,
                                                    .max_blocks_per_seq = max_blocks_per_seq,
                                                    .layout = layout(),
                                                    .q_dtype = s.bf16 ? DType::bf16 : DType::f16,
                                                    .kv_dtype = s.kv_dtype,
                                                    .kv_scale_mode = is_fp8(s.kv_dtype) ? s.scale_mode : KvScaleMode::none,
                                                    .qq_bias_stride = s.qq_bias ? s.qq_bias_stride : 0});
    p.q = q_;
    p.k_cache = k_;
    p.v_cache = v_;
    p.k_scale = ks;
    p.v_scale = vs;
    p.block_table = bt;
    p.cu_seqlens_q = cu;
    p.seq_lens_k = sk;
    p.causal = s.causal;
    p.window_left = s.window_left;
    p.softcap = s.softcap;
    p.sinks = sinks_;
    p.alibi_slopes = slopes;
    p.qq_bias = qq;
    p.out = out_;
    p.lse = lse_;
    return p;
  }

  UnifiedAttentionParams host_params() {
    return params(q.data(), k_cache.data(), v_cache.data(), block_table.data(), cu_seqlens_q.data(), seq_lens_k.data(),
                  k_scale.empty() ? nullptr : k_scale.data(), v_scale.empty() ? nullptr : v_scale.data(),
                  sinks.empty() ? nullptr : sinks.data(), alibi_slopes.empty() ? nullptr : alibi_slopes.data(),
                  qq_bias.empty() ? nullptr : qq_bias.data(), out.data(), spec.lse ? lse.data() : nullptr, num_blocks);
  }
};

}  // namespace hipattn::testing

#if defined(HIPATTN_HAS_DEVICE)
#include "hipattn/platform/runtime.hpp"

namespace hipattn::testing {

// Fill n bytes with a hash of their index: finite values (16-bit: |x| < 2; fp8: codes without NaN).
static __global__ void fill_random_kernel(uint8_t* p, size_t n, uint32_t seed, int elem_bytes) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 15; x *= 2246822519u; x ^= x >> 13;
    if (elem_bytes == 1) p[i] = static_cast<uint8_t>(x & 0x77);            // |code| small, never NaN
    else p[i] = (i & 1) ? static_cast<uint8_t>(0x30 | (x & 0x8F)) : static_cast<uint8_t>(x);  // exponent small
  }
}

// A device buffer (freed on destruction).
struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) : bytes(n) { if (n) HIPATTN_CHECK(rt::malloc_device(&ptr, n)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr(o.ptr), bytes(o.bytes) { o.ptr = nullptr; o.bytes = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept { std::swap(ptr, o.ptr); std::swap(bytes, o.bytes); return *this; }
  ~DeviceBuffer() { if (ptr) (void)rt::free_device(ptr); }
  template <class T> T* as() const { return static_cast<T*>(ptr); }
  template <class T> static DeviceBuffer from(const std::vector<T>& v) {
    DeviceBuffer b(v.size() * sizeof(T));
    if (!v.empty()) HIPATTN_CHECK(rt::memcpy_h2d(b.ptr, v.data(), b.bytes));
    return b;
  }
};

// Device copies of a HostProblem. With spec.min_cache_bytes the device cache is larger than the
// host one and the used blocks sit at its end (block ids shifted by `block_base`), so offsets pass
// 2 GiB; the region below is NaN-filled (or left as is when fill_reference_data is false).
struct DeviceProblem {
  const HostProblem& h;
  int32_t block_base = 0, device_blocks = 0;
  DeviceBuffer q, k, v, bt, cu, sk, ks, vs, sinks, slopes, qq, out, lse;

  explicit DeviceProblem(const HostProblem& hp) : h(hp) {
    const int64_t block_bytes = h.stride_block * h.elem_bytes();
    const int64_t need = int64_t(h.num_blocks) * block_bytes;
    device_blocks = h.num_blocks;
    if (h.spec.min_cache_bytes > need) {
      device_blocks = int32_t((h.spec.min_cache_bytes + block_bytes - 1) / block_bytes);
      block_base = device_blocks - h.num_blocks;
    }
    const size_t total = size_t(device_blocks) * block_bytes;
    k = DeviceBuffer(total);
    v = DeviceBuffer(total);
    if (block_base > 0 && h.spec.fill_reference_data) {
      HIPATTN_CHECK(rt::memset_async(k.ptr, 0xFF, total - size_t(need), nullptr));
      HIPATTN_CHECK(rt::memset_async(v.ptr, 0xFF, total - size_t(need), nullptr));
      HIPATTN_CHECK(rt::device_synchronize());
    }
    if (h.spec.fill_reference_data) {
      HIPATTN_CHECK(rt::memcpy_h2d(k.as<char>() + size_t(block_base) * block_bytes, h.k_cache.data(), size_t(need)));
      HIPATTN_CHECK(rt::memcpy_h2d(v.as<char>() + size_t(block_base) * block_bytes, h.v_cache.data(), size_t(need)));
    } else {
      fill_random_kernel<<<1024, 256>>>(k.as<uint8_t>(), total, 0x1234u, h.elem_bytes());
      HIPATTN_CHECK_LAUNCH();
      fill_random_kernel<<<1024, 256>>>(v.as<uint8_t>(), total, 0x9876u, h.elem_bytes());
      HIPATTN_CHECK_LAUNCH();
      HIPATTN_CHECK(rt::device_synchronize());
    }
    std::vector<int32_t> table = h.block_table;
    for (auto& x : table) if (x < h.num_blocks) x += block_base;  // padded entries stay invalid
    bt = DeviceBuffer::from(table);
    cu = DeviceBuffer::from(h.cu_seqlens_q);
    sk = DeviceBuffer::from(h.seq_lens_k);
    if (!h.k_scale.empty()) {
      if (h.k_scale.size() == 1) {
        ks = DeviceBuffer::from(h.k_scale);
        vs = DeviceBuffer::from(h.v_scale);
      } else {  // per (slot, head): shift to the device block ids too
        const size_t per_block = size_t(h.spec.block_size) * h.spec.num_kv_heads;
        std::vector<float> kd(size_t(device_blocks) * per_block, 1.f), vd(kd.size(), 1.f);
        std::copy(h.k_scale.begin(), h.k_scale.end(), kd.begin() + size_t(block_base) * per_block);
        std::copy(h.v_scale.begin(), h.v_scale.end(), vd.begin() + size_t(block_base) * per_block);
        ks = DeviceBuffer::from(kd);
        vs = DeviceBuffer::from(vd);
      }
    }
    sinks = DeviceBuffer::from(h.sinks);
    slopes = DeviceBuffer::from(h.alibi_slopes);
    qq = DeviceBuffer::from(h.qq_bias);
    q = DeviceBuffer::from(h.q);
    out = DeviceBuffer(std::max<size_t>(16, h.q.size() * 2));
    lse = DeviceBuffer(std::max<size_t>(16, h.lse.size() * 4));
  }

  UnifiedAttentionParams params() const {
    return h.params(q.ptr, k.ptr, v.ptr, bt.as<int32_t>(), cu.as<int32_t>(), sk.as<int32_t>(), ks.as<float>(),
                    vs.as<float>(), sinks.as<float>(), slopes.as<float>(), qq.as<float>(), out.ptr,
                    h.spec.lse ? lse.as<float>() : nullptr, device_blocks);
  }
  // Fill the outputs with NaN bytes so that every element must be written.
  void poison(rt::stream_t s = nullptr) {
    HIPATTN_CHECK(rt::memset_async(out.ptr, 0xFF, out.bytes, s));
    HIPATTN_CHECK(rt::memset_async(lse.ptr, 0xFF, lse.bytes, s));
  }
  void download(std::vector<uint16_t>& o, std::vector<float>& l) const {
    o.resize(h.q.size());
    l.resize(h.lse.size());
    if (!o.empty()) HIPATTN_CHECK(rt::memcpy_d2h(o.data(), out.ptr, o.size() * 2));
    if (!l.empty() && h.spec.lse) HIPATTN_CHECK(rt::memcpy_d2h(l.data(), lse.ptr, l.size() * 4));
  }
};

}  // namespace hipattn::testing
#endif
