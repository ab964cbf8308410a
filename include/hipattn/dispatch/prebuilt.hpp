// hipattn/dispatch/prebuilt.hpp: the entry points of an instance library.
//
//   hipattn_add_unified_instances(attn_instances ...)          # CMake: the library (README)
//   target_link_libraries(app PRIVATE attn_instances)
//
//   #include "hipattn/dispatch/prebuilt.hpp"
//   hipattn::prebuilt::unified_attention(params, ws, bytes, stream);   // launches through the library
//   hipattn::prebuilt::paged_decode(params, ws, bytes, stream);
//
// The generated registry translation unit of the library defines these functions; this header only
// declares them, so a translation unit that calls them compiles no kernel, and one that calls them
// without linking an instance library fails to link (it never compiles the whole table instead).
// hipattn::unified_attention / paged_decode (the header-only entry points) are other functions: they
// compile their filter's instances where they are called, whatever is linked.
//
// Each linked module (executable or shared object) holds at most one instance library, and its
// registry is private to it: the functions below have hidden visibility and the library is compiled
// with hidden visibility, so two shared objects in one process, each with an instance library of its
// own, never see each other's instances.
#pragma once
#include <cstddef>
#include <vector>

#include "hipattn/dispatch/paged_decode.hpp"
#include "hipattn/dispatch/unified_attention.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#define HIPATTN_PREBUILT_LOCAL __attribute__((visibility("hidden")))

namespace hipattn {

// One entry of an instance library: a standard instance behind a fixed signature.
template <class LaunchFn>
struct PrebuiltInstance {
  UnifiedInstanceKey key;
  LaunchFn launch = nullptr;
};
using UnifiedPrebuiltInstance = PrebuiltInstance<detail::UnifiedLaunchFn>;
using PagedDecodePrebuiltInstance = PrebuiltInstance<detail::PagedDecodeLaunchFn>;

namespace prebuilt {

// The library's instances (both families are built for the same keys).
HIPATTN_PREBUILT_LOCAL const std::vector<UnifiedPrebuiltInstance>& unified_instances();
HIPATTN_PREBUILT_LOCAL const std::vector<PagedDecodePrebuiltInstance>& paged_decode_instances();

// As hipattn::unified_attention / paged_decode, over the library's instances: a problem whose
// instance is not in it throws Error(unsupported, "instance") naming the key and what was built.
HIPATTN_PREBUILT_LOCAL void unified_attention(const UnifiedAttentionParams& p, void* workspace,
                                              size_t workspace_bytes, rt::stream_t stream,
                                              const UnifiedOptions& opt = {});
HIPATTN_PREBUILT_LOCAL void paged_decode(const PagedDecodeParams& p, void* workspace, size_t workspace_bytes,
                                         rt::stream_t stream, const PagedDecodeOptions& opt = {});

// The launcher of `key` among `lib`, or Error(unsupported, "instance") naming the key and what was built.
template <class LaunchFn>
LaunchFn find(const std::vector<PrebuiltInstance<LaunchFn>>& lib, const UnifiedInstanceKey& key) {
  std::vector<UnifiedInstanceKey> built;
  for (const PrebuiltInstance<LaunchFn>& e : lib) {
    if (e.key == key) return e.launch;
    built.push_back(e.key);
  }
  throw unified_instance_missing(key, built);
}

}  // namespace prebuilt
}  // namespace hipattn

// Explicit instantiation (definition) / declaration of one standard instance of both families, and
// its registry entries: what the generated translation units contain. TARGET: gfx942 | gfx950 |
// sm90; KV: a KvKind enumerator; VARIANT: plain | full.
#define HIPATTN_PREBUILT_KEY(TARGET, BF16, KV, D, VARIANT) \
  ::hipattn::UnifiedInstanceKey { ::hipattn::Target::TARGET, BF16, ::hipattn::KvKind::KV, D, ::hipattn::UnifiedVariantKind::VARIANT }
#define HIPATTN_UNIFIED_INSTANCE(TARGET, BF16, KV, D, VARIANT)                                                  \
  template void ::hipattn::detail::launch_unified_standard<::hipattn::Target::TARGET, BF16, ::hipattn::KvKind::KV, \
                                                           D, ::hipattn::UnifiedVariantKind::VARIANT>(            \
      const ::hipattn::UnifiedAttentionParams&, const ::hipattn::UnifiedPlan&, void*, ::hipattn::rt::stream_t);
#define HIPATTN_PAGED_DECODE_INSTANCE(TARGET, BF16, KV, D, VARIANT)                                             \
  template void ::hipattn::detail::launch_paged_decode_standard<::hipattn::Target::TARGET, BF16,                  \
                                                                ::hipattn::KvKind::KV, D,                         \
                                                                ::hipattn::UnifiedVariantKind::VARIANT>(          \
      const ::hipattn::PagedDecodeParams&, const ::hipattn::PagedDecodePlan&, void*, ::hipattn::rt::stream_t);
#define HIPATTN_PREBUILT_INSTANCE(TARGET, BF16, KV, D, VARIANT) \
  HIPATTN_UNIFIED_INSTANCE(TARGET, BF16, KV, D, VARIANT)        \
  HIPATTN_PAGED_DECODE_INSTANCE(TARGET, BF16, KV, D, VARIANT)
#define HIPATTN_PREBUILT_EXTERN_INSTANCE(TARGET, BF16, KV, D, VARIANT) \
  extern HIPATTN_UNIFIED_INSTANCE(TARGET, BF16, KV, D, VARIANT)        \
  extern HIPATTN_PAGED_DECODE_INSTANCE(TARGET, BF16, KV, D, VARIANT)
#define HIPATTN_UNIFIED_REGISTRY_ENTRY(TARGET, BF16, KV, D, VARIANT)                                           \
  ::hipattn::UnifiedPrebuiltInstance {                                                                          \
    HIPATTN_PREBUILT_KEY(TARGET, BF16, KV, D, VARIANT),                                                         \
        &::hipattn::detail::launch_unified_standard<::hipattn::Target::TARGET, BF16, ::hipattn::KvKind::KV, D,   \
                                                    ::hipattn::UnifiedVariantKind::VARIANT>                    \
  }
#define HIPATTN_PAGED_DECODE_REGISTRY_ENTRY(TARGET, BF16, KV, D, VARIANT)                                      \
  ::hipattn::PagedDecodePrebuiltInstance {                                                                      \
    HIPATTN_PREBUILT_KEY(TARGET, BF16, KV, D, VARIANT),                                                         \
        &::hipattn::detail::launch_paged_decode_standard<::hipattn::Target::TARGET, BF16, ::hipattn::KvKind::KV, \
                                                         D, ::hipattn::UnifiedVariantKind::VARIANT>            \
  }

// The entry points over the registry: the body of the generated registry translation unit, after its
// two lists (`unified_instances()` and `paged_decode_instances()` defined above it).
#define HIPATTN_PREBUILT_ENTRY_POINTS()                                                                           \
  namespace hipattn::prebuilt {                                                                                   \
  void unified_attention(const UnifiedAttentionParams& p, void* ws, size_t ws_bytes, rt::stream_t s,             \
                         const UnifiedOptions& opt) {                                                             \
    const UnifiedPlan plan = detail::prepare_unified_call(p, ws, ws_bytes, opt);                                 \
    ::hipattn::prebuilt::find(unified_instances(), unified_instance_key(p, rt::cached_device_properties().target))(p, plan, ws, s);   \
  }                                                                                                               \
  void paged_decode(const PagedDecodeParams& p, void* ws, size_t ws_bytes, rt::stream_t s,                        \
                    const PagedDecodeOptions& opt) {                                                              \
    const PagedDecodePlan plan = detail::prepare_paged_decode_call(p, ws, ws_bytes, opt);                        \
    if (p.num_seqs == 0) return;                                                                                  \
    ::hipattn::prebuilt::find(paged_decode_instances(), paged_decode_instance_key(p, rt::cached_device_properties().target))(         \
        p, plan, ws, s);                                                                                          \
  }                                                                                                               \
  }
#endif  // HIPATTN_HAS_DEVICE
