// tests/emu/kernels/merge.hip: the merge of partial attention states (kernels/merge/merge_states.hpp,
// merge_states_kernel<partial dtype, out dtype>) for the AMD targets, run on the emulator by
// test_emu_merge.cpp against the float64 reference (reference/merge.hpp). The dispatcher
// (dispatch/merge_attention_states.hpp) picks the instance from (partial_dtype, out_dtype); these are
// four of its nine: (bf16, bf16), (f16, f16), (f32, bf16), (f32, f32).
#include "hipattn/kernels/merge/merge_states.hpp"

template __global__ void hipattn::merge_states_kernel<hipattn::DType::bf16, hipattn::DType::bf16>(const hipattn::MergeStatesArgs);
template __global__ void hipattn::merge_states_kernel<hipattn::DType::f16, hipattn::DType::f16>(const hipattn::MergeStatesArgs);
template __global__ void hipattn::merge_states_kernel<hipattn::DType::f32, hipattn::DType::bf16>(const hipattn::MergeStatesArgs);
template __global__ void hipattn::merge_states_kernel<hipattn::DType::f32, hipattn::DType::f32>(const hipattn::MergeStatesArgs);
