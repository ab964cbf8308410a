// hipattn/dispatch/registry.hpp: one instance registry for every family.
//
// A family's launcher is a function template over an instance key (a row of problem/instance_table.hpp)
// behind a fixed signature, e.g. detail::launch_unified_standard<kKey>. A registry is a list of
// (key, launcher) entries, searched by the key of a call:
//   - header-only: the entry points build it at compile time from the rows their filter admits on the
//     backend's targets (compiled in the calling translation unit): header_registry<Launchers, Filter>;
//   - prebuilt: the registry translation unit of an instance library lists the rows it was built for
//     (hipattn_add_instances, dispatch/prebuilt.hpp).
// Both search with find_instance, whose miss names the key and what was built. The compile-time walk
// for_each_instance serves code that needs the configuration types themselves (the emulated tests,
// tests/isa).
#pragma once
#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "hipattn/dispatch/device.hpp"
#include "hipattn/problem/instances.hpp"

namespace hipattn {

// One entry of a registry: an instance's key and its launcher.
template <class LaunchFn>
struct InstanceEntry {
  InstanceKey key;
  LaunchFn launch = nullptr;
};

// The table's rows of family kF on the targets of `Targets` that kFilter admits, in table order. A
// custom variant (kCustom) has one row per shape: the plain row's, its variant set to custom (the
// filter's `variants` field is not read for it).
template <Family kF, InstanceFilter kFilter, class Targets, bool kCustom = false>
struct AdmittedKeys;
template <Family kF, InstanceFilter kFilter, Target... kTs, bool kCustom>
struct AdmittedKeys<kF, kFilter, TargetList<kTs...>, kCustom> {
  static constexpr bool admits(InstanceKey k) {
    if (k.family != kF || !((k.target == kTs) || ...)) return false;
    if (kCustom) {
      if (k.variant != VariantKind::plain) return false;
      k.variant = VariantKind::custom;
    }
    return kFilter.admits(k);
  }
  static constexpr size_t kCount = [] {
    size_t n = 0;
    for (const InstanceKey& k : kInstanceTable) n += admits(k) ? 1 : 0;
    return n;
  }();
  static constexpr std::array<InstanceKey, kCount> keys = [] {
    std::array<InstanceKey, kCount> a{};
    size_t i = 0;
    for (InstanceKey k : kInstanceTable) {
      if (!admits(k)) continue;
      if (kCustom) k.variant = VariantKind::custom;
      a[i++] = k;
    }
    return a;
  }();
};

// Calls g.template operator()<kKey>() for every row AdmittedKeys lists (compile-time: exactly those
// instances are instantiated by g).
template <Family kF, InstanceFilter kFilter, bool kCustom = false, class Targets, class G>
void for_each_instance(Targets, G&& g) {
  using Keys = AdmittedKeys<kF, kFilter, Targets, kCustom>;
  [&]<size_t... I>(std::index_sequence<I...>) {
    (g.template operator()<Keys::keys[I]>(), ...);
  }(std::make_index_sequence<Keys::kCount>{});
}

// The keys for_each_instance visits.
template <Family kF, InstanceFilter kFilter, bool kCustom = false, class Targets>
std::vector<InstanceKey> instance_keys(Targets) {
  using Keys = AdmittedKeys<kF, kFilter, Targets, kCustom>;
  return std::vector<InstanceKey>(Keys::keys.begin(), Keys::keys.end());
}

// The launcher of `key` among `entries`, or Error(unsupported) naming the key and what was built.
template <class LaunchFn>
LaunchFn find_instance(std::span<const InstanceEntry<LaunchFn>> entries, const InstanceKey& key) {
  for (const InstanceEntry<LaunchFn>& e : entries)
    if (e.key == key) return e.launch;  // every launch comes here: no allocation on a hit
  std::vector<InstanceKey> built;
  built.reserve(entries.size());
  for (const InstanceEntry<LaunchFn>& e : entries) built.push_back(e.key);
  throw instance_missing(key, built);
}

// The registry of the header-only entry points: an entry for every row kFilter admits on the
// backend's targets, built at compile time. Launchers: the family's launcher set, a type with
//   static constexpr Family kFamily; using LaunchFn = ...; static constexpr bool kCustom;
//   template <InstanceKey kK> static constexpr LaunchFn get();   // &launcher<kK>
#if defined(HIPATTN_HAS_DEVICE)
template <class Launchers, InstanceFilter kFilter>
std::span<const InstanceEntry<typename Launchers::LaunchFn>> header_registry() {
  using Fn = typename Launchers::LaunchFn;
  using Keys = AdmittedKeys<Launchers::kFamily, kFilter, BackendTargets, Launchers::kCustom>;
  static constexpr auto kEntries = []<size_t... I>(std::index_sequence<I...>) {
    return std::array<InstanceEntry<Fn>, sizeof...(I)>{
        InstanceEntry<Fn>{Keys::keys[I], Launchers::template get<Keys::keys[I]>()}...};
  }(std::make_index_sequence<Keys::kCount>{});
  return kEntries;
}
#endif

}  // namespace hipattn
