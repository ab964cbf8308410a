// The device half of the PyTorch ops (hipattn_torch/launch.hpp): the entry points of the binding's
// instance library (hipattn::prebuilt, dispatch/prebuilt.hpp) and the merge kernel, behind plain
// functions that turn every exception into a Status. Compiled by the device compiler; no PyTorch here.
#include <cstdio>
#include <exception>

#include "hipattn/dispatch/merge_attention_states.hpp"
#include "hipattn/dispatch/prebuilt.hpp"
#include "hipattn_torch/launch.hpp"

namespace hipattn::torch_ops {
namespace {

Status failed(ErrorCode code, const char* what) {
  Status s;
  s.ok = false;
  s.code = code;
  std::snprintf(s.message, sizeof(s.message), "%s", what);
  return s;
}

template <class F>
Status guarded(F&& f) noexcept {
  try {
    f();
    return Status{};
  } catch (const Error& e) {
    return failed(e.code(), e.what());
  } catch (const std::exception& e) {
    return failed(ErrorCode::runtime, e.what());
  } catch (...) {
    return failed(ErrorCode::runtime, "hipattn: runtime: unknown exception");
  }
}

rt::stream_t as_stream(void* s) { return static_cast<rt::stream_t>(s); }

}  // namespace

Status unified_workspace_bytes(const UnifiedAttentionParams& p, size_t* bytes) noexcept {
  return guarded([&] { *bytes = unified_attention_workspace_size(p); });
}
Status launch_unified(const UnifiedAttentionParams& p, void* ws, size_t ws_bytes, void* stream) noexcept {
  return guarded([&] { prebuilt::unified_attention(p, ws, ws_bytes, as_stream(stream)); });
}
Status paged_decode_workspace_bytes(const PagedDecodeTraits& t, size_t* bytes) noexcept {
  return guarded([&] { *bytes = paged_decode_workspace_size(t); });
}
Status launch_paged_decode(const PagedDecodeParams& p, void* ws, size_t ws_bytes, void* stream) noexcept {
  return guarded([&] { prebuilt::paged_decode(p, ws, ws_bytes, as_stream(stream)); });
}
Status mla_decode_workspace_bytes(const MlaDecodeTraits& t, size_t* bytes) noexcept {
  return guarded([&] { *bytes = mla_decode_workspace_size(t); });
}
Status launch_mla_decode(const MlaDecodeParams& p, void* ws, size_t ws_bytes, void* stream) noexcept {
  return guarded([&] { prebuilt::mla_decode(p, ws, ws_bytes, as_stream(stream)); });
}
Status launch_merge(const MergeAttentionStatesParams& p, void* stream) noexcept {
  return guarded([&] { merge_attention_states(p, as_stream(stream)); });
}
Status launch_dense_prefill(const DensePrefillParams& p, void* stream) noexcept {
  return guarded([&] { prebuilt::dense_prefill(p, as_stream(stream)); });
}

}  // namespace hipattn::torch_ops
