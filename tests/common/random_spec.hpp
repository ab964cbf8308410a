// tests/common/random_spec.hpp: seeded random unified-attention problems (ragged batches mixing
// decode rows, prefill chunks and empty rows; every feature drawn at random), shared by the GPU
// parity suite and the emulated AMD tier, which draws the same features over smaller sizes.
#pragma once
#include <algorithm>
#include <initializer_list>
#include <random>
#include <vector>

#include "../../testing/paged_problem.hpp"

namespace hipattn::testing {

// Size bounds of a random problem; the draws (and so the features of a seed) do not depend on them.
struct RandomSizes {
  int max_seqs = 5;          // 1 .. max_seqs sequences
  int max_prefill_q = 90;    // prefill chunks of 1 .. max_prefill_q tokens
  int max_extra_keys = 400;  // kv_len = q_len + 0 .. max_extra_keys - 1
  std::vector<int> page_sizes = {1, 5, 16, 16, 32, 64, 128};
  int qq_bias_stride = 96;
};

inline ProblemSpec random_spec(uint64_t seed, const RandomSizes& z = {}) {
  std::mt19937_64 r(seed);
  auto pick = [&](std::initializer_list<int> xs) { return *(xs.begin() + r() % xs.size()); };
  ProblemSpec s;
  s.seed = seed;
  s.bf16 = r() % 2;
  s.num_kv_heads = pick({1, 2, 4});
  s.num_q_heads = s.num_kv_heads * pick({1, 2, 3, 4, 5, 8, 16});
  s.head_size = pick({64, 128, 256});
  s.block_size = z.page_sizes[r() % z.page_sizes.size()];
  s.causal = r() % 4 != 0;
  const int nseq = 1 + int(r() % z.max_seqs);
  for (int b = 0; b < nseq; ++b) {
    const int kind = b == 0 ? int(r() % 3) : int(r() % 4);  // the first row is never empty
    int q = kind == 0 ? 1 : kind == 1 ? 1 + int(r() % 8) : kind == 2 ? 1 + int(r() % z.max_prefill_q) : 0;
    int k = q + int(r() % z.max_extra_keys);
    if (kind == 3) k = (r() % 2) ? 0 : int(r() % 50);  // zero-length rows
    if (!s.causal && kind != 3 && r() % 4 == 0) k = std::max(0, q - 3);
    s.seqs.push_back({q, k});
  }
  s.window_left = r() % 3 == 0 ? int(r() % 100) : -1;
  s.softcap = r() % 4 == 0 ? 20.f : 0.f;
  s.alibi = r() % 4 == 0;
  s.sinks = r() % 3 == 0;
  if (r() % 4 == 0) { s.qq_bias = true; s.qq_bias_stride = z.qq_bias_stride; }
  s.hnd = r() % 3 == 0;
  const int kv = int(r() % 4);
  s.kv_dtype = kv == 0 ? DType::fp8_e4m3fn : kv == 1 ? DType::fp8_e4m3fnuz : (s.bf16 ? DType::bf16 : DType::f16);
  s.scale_mode = r() % 2 ? KvScaleMode::per_tensor : KvScaleMode::per_token_head;
  return s;
}

}  // namespace hipattn::testing
