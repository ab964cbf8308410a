// hipattn/problem/unified_instances.hpp: what the unified family is compiled for, in one table.
//
// Read by validation (problem/unified_rules.hpp: a head size outside the table is `unsupported` on
// every call, the workspace query included), by dispatch (dispatch/unified_launch.hpp's
// for_each_unified_instance instantiates exactly these head sizes), by the CMake function
// hipattn_add_unified_instances (cmake/hipattnInstances.cmake reads the head_sizes line below) and so
// by CI (tests/isa/dispatch_all.hip and the tests' instance library compile what the dispatcher can
// launch). Adding a head size here adds its kernels everywhere; a head size the kernels cannot serve
// fails to compile, not at run time.
//
// Below the table: the key of one compiled instance (what a launch needs: target, q dtype, KV kind,
// head size, variant) and the instance filter, the compile-time subset of the table a translation
// unit or an instance library builds (the same filter for the header-only entry points, the custom-
// variant entry point and hipattn_add_unified_instances() of the installed CMake package).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn {

struct UnifiedInstanceTable {
  // Head sizes (d_qk == d_v) with compiled unified-attention kernels.
  static constexpr std::array<int32_t, 5> head_sizes{64, 96, 128, 192, 256};

  static constexpr bool has_head_size(int32_t d) {
    for (int32_t h : head_sizes)
      if (h == d) return true;
    return false;
  }
};

// The logit variant of an instance: the two standard ones (tile/variants.hpp's PlainVariant: scale
// only; FullVariant: softcap / ALiBi / QQ-bias, each gated at run time) or a caller's.
enum class UnifiedVariantKind : uint8_t { plain, full, custom };

constexpr const char* variant_kind_name(UnifiedVariantKind v) {
  return v == UnifiedVariantKind::plain ? "plain" : v == UnifiedVariantKind::full ? "full" : "custom";
}

// One compiled instance of the unified family: both tile kinds (decode, prefill) and both paths (2D,
// 3D split-KV with its reduce) of (target, q dtype, KV kind, head size, variant).
struct UnifiedInstanceKey {
  Target target = Target::sm90;
  bool bf16 = true;
  KvKind kv = KvKind::same16;
  int32_t head_size = 128;
  UnifiedVariantKind variant = UnifiedVariantKind::plain;

  friend constexpr bool operator==(const UnifiedInstanceKey&, const UnifiedInstanceKey&) = default;
};

// "sm_90 bf16 kv=e4m3fn d=128 full"
inline std::string to_string(const UnifiedInstanceKey& k) {
  return std::string(target_name(k.target)) + (k.bf16 ? " bf16" : " f16") + " kv=" + kv_kind_name(k.kv) +
         " d=" + std::to_string(k.head_size) + " " + variant_kind_name(k.variant);
}

// A subset of the instance table, as a product of per-field sets (bit masks). A structural type: it
// is a template argument of the entry points (unified_attention<Filter>(...)).
//   targets:    bit (1 << int(Target)), e.g. bit_of(Target::sm90)
//   q_dtypes:   bit 0 f16, bit 1 bf16
//   kv_kinds:   bit (1 << int(KvKind))
//   head_sizes: bit i = UnifiedInstanceTable::head_sizes[i]
//   variants:   bit (1 << int(UnifiedVariantKind)); the standard entry point reads plain / full, the
//               custom-variant one ignores this field
struct UnifiedInstanceFilter {
  uint32_t targets = ~0u;
  uint32_t q_dtypes = ~0u;
  uint32_t kv_kinds = ~0u;
  uint32_t head_sizes = ~0u;
  uint32_t variants = ~0u;

  static constexpr uint32_t bit_of(Target t) { return 1u << static_cast<int>(t); }
  static constexpr uint32_t bit_of(KvKind k) { return 1u << static_cast<int>(k); }
  static constexpr uint32_t bit_of(UnifiedVariantKind v) { return 1u << static_cast<int>(v); }
  static constexpr uint32_t q_bit(bool bf16) { return bf16 ? 2u : 1u; }
  // The head-size bit of `d` (0 when the table has no such head size).
  static constexpr uint32_t head_bit(int32_t d) {
    for (size_t i = 0; i < UnifiedInstanceTable::head_sizes.size(); ++i)
      if (UnifiedInstanceTable::head_sizes[i] == d) return 1u << i;
    return 0u;
  }
  template <class... D>
  static constexpr uint32_t heads(D... d) { return (head_bit(static_cast<int32_t>(d)) | ...); }

  constexpr bool admits(const UnifiedInstanceKey& k) const {
    return (targets & bit_of(k.target)) && (q_dtypes & q_bit(k.bf16)) && (kv_kinds & bit_of(k.kv)) &&
           (head_sizes & head_bit(k.head_size)) &&
           (k.variant == UnifiedVariantKind::custom || (variants & bit_of(k.variant)));
  }
};

// Every instance of the table.
inline constexpr UnifiedInstanceFilter kAllUnifiedInstances{};

// "targets sm_90; q f16, bf16; kv same16; d 64, 128; variants plain, full (16 instances)": a set of
// keys summarized field by field, for the `unsupported` error of a call outside what was built.
inline std::string describe_instances(const std::vector<UnifiedInstanceKey>& keys) {
  if (keys.empty()) return "no unified-attention instances were built";
  std::string t, q, kv, d, v;
  auto add = [](std::string& list, const std::string& item) {
    const std::string padded = ", " + list + ",";
    if (padded.find(", " + item + ",") != std::string::npos) return;
    list += (list.empty() ? "" : ", ") + item;
  };
  for (const UnifiedInstanceKey& k : keys) {
    add(t, std::string(target_name(k.target)));
    add(q, k.bf16 ? "bf16" : "f16");
    add(kv, kv_kind_name(k.kv));
    add(d, std::to_string(k.head_size));
    add(v, variant_kind_name(k.variant));
  }
  return "built: targets " + t + "; q " + q + "; kv " + kv + "; d " + d + "; variants " + v + " (" +
         std::to_string(keys.size()) + " instances)";
}

}  // namespace hipattn
