// testing/scenario_spec.hpp: a ProblemSpec from one of the scenario table's rows (shared by the
// parity suite and the benchmarks).
#pragma once
#include "../tests/data/unified_scenarios.hpp"
#include "paged_problem.hpp"

namespace hipattn::testing {

// The scenario's shape and features; KV in the Q dtype unless the caller changes kv_dtype / scale_mode.
inline ProblemSpec spec_from_scenario(const scenarios::UnifiedScenario& sc, uint64_t seed = 1) {
  ProblemSpec s;
  s.bf16 = sc.bf16;
  s.kv_dtype = sc.bf16 ? DType::bf16 : DType::f16;
  s.num_q_heads = sc.num_q_heads;
  s.num_kv_heads = sc.num_kv_heads;
  s.head_size = sc.head_size;
  s.block_size = sc.block_size;
  s.seqs = sc.seqs;
  s.window_left = sc.sliding_window > 0 ? sc.sliding_window - 1 : -1;  // vLLM's W keys include the query's own
  s.softcap = sc.softcap;
  s.alibi = sc.alibi;
  s.qq_bias = sc.qq_bias;
  s.qq_bias_stride = sc.qq_bias_stride;
  s.seed = seed;
  return s;
}

}  // namespace hipattn::testing
