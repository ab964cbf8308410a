// hipattn/problem/instance_key.hpp: the key of one compiled instance of any family (what a launch needs
// to find its kernels: family, target, q dtype, KV kind, head sizes, variant) and its names.
#pragma once
#include <cstdint>
#include <string>

#include "hipattn/numeric/kv_kind.hpp"
#include "hipattn/platform/target.hpp"

namespace hipattn {

// The kernel families. unified: unified attention (2D, 3D split-KV); paged_decode: paged decode with
// its planner; mla_decode: MLA decode (576 / 512); dense_prefill: dense prefill.
enum class Family : uint8_t { unified, paged_decode, mla_decode, dense_prefill };

constexpr const char* family_name(Family f) {
  return f == Family::paged_decode ? "paged_decode"
         : f == Family::mla_decode ? "mla_decode"
         : f == Family::dense_prefill ? "dense_prefill"
                                      : "unified";
}

// The logit variant of an instance: the standard ones (tile/variants.hpp: plain, scale only; full:
// softcap / ALiBi / QQ-bias, each gated at run time; softcap: softcap only, dense prefill's) or a
// caller's (custom: the custom-variant entry points).
enum class VariantKind : uint8_t { plain, full, custom, softcap };

constexpr const char* variant_kind_name(VariantKind v) {
  return v == VariantKind::plain ? "plain" : v == VariantKind::full ? "full" : v == VariantKind::softcap ? "softcap" : "custom";
}

// One compiled instance: a structural type (a template argument of the families' launch functions).
// unified / paged_decode: both tile kinds, and the 2D / 3D kernels with their reduce, or the decode
// kernel, its planner and reduce; mla_decode: the MLA kernel, planner and reduce; dense_prefill: the
// target's dense kernels (sm_90's warp-specialised one; CDNA's skeleton and ping-pong ones).
struct InstanceKey {
  Family family = Family::unified;
  Target target = Target::sm90;
  bool bf16 = true;
  KvKind kv = KvKind::same16;
  int32_t head_size = 128;    // d_qk
  int32_t head_size_v = 128;  // d_v
  VariantKind variant = VariantKind::plain;

  friend constexpr bool operator==(const InstanceKey&, const InstanceKey&) = default;
};

// "unified sm_90 bf16 kv=e4m3fn d=128 full" ("d=192/128" where d_v differs)
inline std::string to_string(const InstanceKey& k) {
  std::string d = std::to_string(k.head_size);
  if (k.head_size_v != k.head_size) d += "/" + std::to_string(k.head_size_v);
  return std::string(family_name(k.family)) + " " + std::string(target_name(k.target)) + (k.bf16 ? " bf16" : " f16") +
         " kv=" + kv_kind_name(k.kv) + " d=" + d + " " + variant_kind_name(k.variant);
}

}  // namespace hipattn
