// Includes the installed headers (host-only build), builds the README's problem description and
// validates it and an empty one.
#include <cstdio>

#include "hipattn/hipattn.hpp"

int main() {
  // The README's problem ("Use from another CMake project"), over fake 256-byte-aligned addresses.
  hipattn::UnifiedAttentionParams p = hipattn::make_unified_params({
      .num_seqs = 4, .num_tokens = 300, .max_seqlen_q = 128, .max_seqlen_k = 4096,
      .num_q_heads = 32, .num_kv_heads = 8, .head_size = 128,
      .num_blocks = 2048, .block_size = 16, .layout = hipattn::KvLayout::nhd,
      .q_dtype = hipattn::DType::bf16, .kv_dtype = hipattn::DType::bf16});
  const auto at = [](unsigned long a) { return reinterpret_cast<void*>(a << 8); };
  p.q = at(1); p.k_cache = at(2); p.v_cache = at(3); p.out = at(4);
  p.block_table = static_cast<const int32_t*>(at(5));
  p.cu_seqlens_q = static_cast<const int32_t*>(at(6));
  p.seq_lens_k = static_cast<const int32_t*>(at(7));
  const hipattn::ValidationReport built = hipattn::validate(p);
  std::printf("hipattn consumer: validate(built) -> %s\n", built.ok() ? "ok" : built.summary().c_str());

  hipattn::UnifiedAttentionParams empty;  // empty: validation must name the first bad field
  const hipattn::ValidationReport s = hipattn::validate(empty);
  std::printf("hipattn consumer: validate(empty) -> %zu issues, first %s: %s\n", s.size(), s.field().c_str(),
              s.message().c_str());
  return built.ok() && !s.ok() ? 0 : 1;  // the built problem validates, an empty one must not
}
