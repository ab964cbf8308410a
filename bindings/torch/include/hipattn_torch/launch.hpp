// hipattn_torch/launch.hpp: the device half of the PyTorch ops (bindings/torch/src/launch.cu,
// compiled by the device compiler over the binding's instance library), called by the op layer
// (src/ops.cpp, compiled by the host compiler with PyTorch's headers).
//
// Plain functions over hipattn's params: no PyTorch type and no exception crosses this boundary (the
// two sides may be built with different C++ library ABIs: PyTorch's wheels choose theirs). A
// hipattn::Error thrown inside becomes a Status carrying its code and its what() text; `stream` is
// the caller's cudaStream_t (hipStream_t with HIP) as a void*.
#pragma once
#include <cstddef>

#include "hipattn/platform/error.hpp"
#include "hipattn/problem/dense_prefill_params.hpp"
#include "hipattn/problem/merge_params.hpp"
#include "hipattn/problem/mla_decode_params.hpp"
#include "hipattn/problem/paged_decode_params.hpp"
#include "hipattn/problem/unified_params.hpp"

namespace hipattn::torch_ops {

struct Status {
  bool ok = true;
  ErrorCode code = ErrorCode::runtime;
  char message[2048] = {};
};

// Bytes of the unified-attention workspace of `p` on the current device (0 unless the 3D path is chosen).
Status unified_workspace_bytes(const UnifiedAttentionParams& p, size_t* bytes) noexcept;
// hipattn::prebuilt::unified_attention on `stream`.
Status launch_unified(const UnifiedAttentionParams& p, void* workspace, size_t workspace_bytes, void* stream) noexcept;

// hipattn::paged_decode_workspace_size(traits) on the current device.
Status paged_decode_workspace_bytes(const PagedDecodeTraits& t, size_t* bytes) noexcept;
Status launch_paged_decode(const PagedDecodeParams& p, void* workspace, size_t workspace_bytes, void* stream) noexcept;

// hipattn::mla_decode_workspace_size(traits) on the current device.
Status mla_decode_workspace_bytes(const MlaDecodeTraits& t, size_t* bytes) noexcept;
Status launch_mla_decode(const MlaDecodeParams& p, void* workspace, size_t workspace_bytes, void* stream) noexcept;

Status launch_merge(const MergeAttentionStatesParams& p, void* stream) noexcept;
Status launch_dense_prefill(const DensePrefillParams& p, void* stream) noexcept;

}  // namespace hipattn::torch_ops
