// hipattn/dispatch/prebuilt.hpp: the entry points of an instance library.
//
//   hipattn_add_instances(attn_instances FAMILIES unified paged_decode mla_decode dense_prefill ...)  # CMake
//   target_link_libraries(app PRIVATE attn_instances)
//
//   #include "hipattn/dispatch/prebuilt.hpp"
//   hipattn::prebuilt::unified_attention(params, ws, bytes, stream);   // launches through the library
//   hipattn::prebuilt::paged_decode(params, ws, bytes, stream);
//   hipattn::prebuilt::mla_decode(params, ws, bytes, stream);
//   hipattn::prebuilt::dense_prefill(params, stream);
//
// The generated registry translation unit of the library defines these functions; this header only
// declares them, so a translation unit that calls them compiles no kernel, and one that calls them
// without linking an instance library fails to link (it never compiles the whole table instead).
// hipattn::unified_attention and the other header-only entry points are other functions: they
// compile their filter's instances where they are called, whatever is linked. A family the library
// was not built for has no entries: its entry point throws Error(unsupported, "instance").
//
// Each linked module (executable or shared object) holds at most one instance library, and its
// registry is private to it: the functions below have hidden visibility and the library is compiled
// with hidden visibility, so two shared objects in one process, each with an instance library of its
// own, never see each other's instances.
#pragma once
#include <cstddef>
#include <span>

#include "hipattn/dispatch/dense_prefill.hpp"
#include "hipattn/dispatch/mla_decode.hpp"
#include "hipattn/dispatch/paged_decode.hpp"
#include "hipattn/dispatch/registry.hpp"
#include "hipattn/dispatch/unified_attention.hpp"

#if defined(HIPATTN_HAS_DEVICE)
#define HIPATTN_PREBUILT_LOCAL __attribute__((visibility("hidden")))

namespace hipattn::prebuilt {

// The library's instances, family by family (the registry translation unit's lists).
HIPATTN_PREBUILT_LOCAL std::span<const InstanceEntry<detail::UnifiedLaunchFn>> unified_instances();
HIPATTN_PREBUILT_LOCAL std::span<const InstanceEntry<detail::PagedDecodeLaunchFn>> paged_decode_instances();
HIPATTN_PREBUILT_LOCAL std::span<const InstanceEntry<detail::MlaDecodeLaunchFn>> mla_decode_instances();
HIPATTN_PREBUILT_LOCAL std::span<const InstanceEntry<detail::DensePrefillLaunchFn>> dense_prefill_instances();

// As the header-only entry points of the same names, over the library's instances: a problem whose
// instance is not in it throws Error(unsupported, "instance") naming the key and what was built.
HIPATTN_PREBUILT_LOCAL void unified_attention(const UnifiedAttentionParams& p, void* workspace,
                                              size_t workspace_bytes, rt::stream_t stream,
                                              const UnifiedOptions& opt = {});
HIPATTN_PREBUILT_LOCAL void paged_decode(const PagedDecodeParams& p, void* workspace, size_t workspace_bytes,
                                         rt::stream_t stream, const PagedDecodeOptions& opt = {});
HIPATTN_PREBUILT_LOCAL void mla_decode(const MlaDecodeParams& p, void* workspace, size_t workspace_bytes,
                                       rt::stream_t stream, const MlaDecodeOptions& opt = {});
HIPATTN_PREBUILT_LOCAL void dense_prefill(const DensePrefillParams& p, rt::stream_t stream);

}  // namespace hipattn::prebuilt

// What the generated translation units contain. An instance is a row of the table
// (problem/instance_table.hpp): FAMILY unified | paged_decode | mla_decode | dense_prefill; TARGET
// gfx942 | gfx950 | sm90; BF16 true | false; KV a KvKind enumerator; DQK, DV the head sizes; VARIANT a
// VariantKind enumerator.
#define HIPATTN_INSTANCE_KEY(FAMILY, TARGET, BF16, KV, DQK, DV, VARIANT)                                      \
  ::hipattn::InstanceKey {                                                                                  \
    ::hipattn::Family::FAMILY, ::hipattn::Target::TARGET, BF16, ::hipattn::KvKind::KV, DQK, DV,              \
        ::hipattn::VariantKind::VARIANT                                                                     \
  }
// The launcher of a family and its signature (after the template argument list).
#define HIPATTN_LAUNCHER_unified launch_unified_standard
#define HIPATTN_LAUNCHER_paged_decode launch_paged_decode_standard
#define HIPATTN_LAUNCHER_mla_decode launch_mla_decode_standard
#define HIPATTN_LAUNCHER_dense_prefill launch_dense_prefill_standard
#define HIPATTN_SIGNATURE_unified \
  (const ::hipattn::UnifiedAttentionParams&, const ::hipattn::UnifiedPlan&, void*, ::hipattn::rt::stream_t)
#define HIPATTN_SIGNATURE_paged_decode \
  (const ::hipattn::PagedDecodeParams&, const ::hipattn::PagedDecodePlan&, void*, ::hipattn::rt::stream_t)
#define HIPATTN_SIGNATURE_mla_decode \
  (const ::hipattn::MlaDecodeParams&, const ::hipattn::MlaDecodePlan&, void*, ::hipattn::rt::stream_t)
#define HIPATTN_SIGNATURE_dense_prefill (const ::hipattn::DensePrefillParams&, ::hipattn::rt::stream_t)

// Explicit instantiation (definition) / declaration of one row's launcher, and its registry entry.
#define HIPATTN_INSTANCE(FAMILY, TARGET, BF16, KV, DQK, DV, VARIANT)                                            \
  template void ::hipattn::detail::HIPATTN_LAUNCHER_##FAMILY<HIPATTN_INSTANCE_KEY(FAMILY, TARGET, BF16, KV, DQK, DV, \
                                                                                  VARIANT)> HIPATTN_SIGNATURE_##FAMILY;
#define HIPATTN_EXTERN_INSTANCE(FAMILY, TARGET, BF16, KV, DQK, DV, VARIANT) \
  extern HIPATTN_INSTANCE(FAMILY, TARGET, BF16, KV, DQK, DV, VARIANT)
#define HIPATTN_REGISTRY_ENTRY(FAMILY, TARGET, BF16, KV, DQK, DV, VARIANT)                                  \
  {HIPATTN_INSTANCE_KEY(FAMILY, TARGET, BF16, KV, DQK, DV, VARIANT),                                        \
   &::hipattn::detail::HIPATTN_LAUNCHER_##FAMILY<HIPATTN_INSTANCE_KEY(FAMILY, TARGET, BF16, KV, DQK, DV, VARIANT)>}

// The entry points over the registry: the body of the generated registry translation unit, after its
// four lists (`unified_instances()` ... `dense_prefill_instances()`, defined above it).
#define HIPATTN_PREBUILT_ENTRY_POINTS()                                                                      \
  namespace hipattn::prebuilt {                                                                              \
  void unified_attention(const UnifiedAttentionParams& p, void* ws, size_t ws_bytes, rt::stream_t s,        \
                         const UnifiedOptions& opt) {                                                        \
    const UnifiedPlan plan = detail::prepare_unified_call(p, ws, ws_bytes, opt);                            \
    find_instance(unified_instances(), unified_instance_key(p, rt::cached_device_properties().target))(     \
        p, plan, ws, s);                                                                                     \
  }                                                                                                          \
  void paged_decode(const PagedDecodeParams& p, void* ws, size_t ws_bytes, rt::stream_t s,                   \
                    const PagedDecodeOptions& opt) {                                                         \
    const PagedDecodePlan plan = detail::prepare_paged_decode_call(p, ws, ws_bytes, opt);                   \
    if (p.num_seqs == 0) return;                                                                             \
    find_instance(paged_decode_instances(),                                                                  \
                  paged_decode_instance_key(p, rt::cached_device_properties().target))(p, plan, ws, s);     \
  }                                                                                                          \
  void mla_decode(const MlaDecodeParams& p, void* ws, size_t ws_bytes, rt::stream_t s,                       \
                  const MlaDecodeOptions& opt) {                                                             \
    const MlaDecodePlan plan = detail::prepare_mla_decode_call(p, ws, ws_bytes, opt);                       \
    if (p.batch == 0) return;                                                                                \
    find_instance(mla_decode_instances(), mla_decode_instance_key(p, rt::cached_device_properties().target))( \
        p, plan, ws, s);                                                                                     \
  }                                                                                                          \
  void dense_prefill(const DensePrefillParams& p, rt::stream_t s) {                                          \
    throw_if_error(validate(p));                                                                             \
    if (p.num_seqs == 0 || p.num_tokens_q == 0) return;                                                      \
    find_instance(dense_prefill_instances(), dense_prefill_instance_key(p, checked_device().target))(p, s); \
  }                                                                                                          \
  }
#endif  // HIPATTN_HAS_DEVICE
