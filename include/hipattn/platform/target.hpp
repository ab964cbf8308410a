// hipattn/platform/target.hpp: the hardware targets the library knows, by name.
#pragma once
#include <cstdint>
#include <string_view>

#include "hipattn/platform/config.hpp"

namespace hipattn {

// A hardware target the library knows. `host` stands for no device; the planner serves neither it
// nor `other`.
enum class Target : uint8_t { host, gfx942, gfx950, sm90, other };

constexpr std::string_view target_name(Target t) {
  switch (t) {
    case Target::host: return "host";
    case Target::gfx942: return "gfx942";
    case Target::gfx950: return "gfx950";
    case Target::sm90: return "sm_90";
    case Target::other: return "other";
  }
  return "?";
}

// The wave (warp) size of a device target: 64 on CDNA, 32 on sm_90 (0 for host / other).
HIPATTN_HOST_DEVICE constexpr int target_wave_size(Target t) {
  return t == Target::gfx942 || t == Target::gfx950 ? 64 : t == Target::sm90 ? 32 : 0;
}

// CDNA (wave64, MFMA) or not.
HIPATTN_HOST_DEVICE constexpr bool is_cdna(Target t) { return t == Target::gfx942 || t == Target::gfx950; }

// LDS (shared memory) of one CU / SM in bytes: MI300 64 KiB, MI355X 160 KiB, H100 / H200 228 KiB.
HIPATTN_HOST_DEVICE constexpr int target_lds_bytes(Target t) {
  return t == Target::gfx942 ? 64 * 1024 : t == Target::gfx950 ? 160 * 1024 : t == Target::sm90 ? 228 * 1024 : 0;
}

// Parse a device architecture name as the runtime reports it ("gfx942:sramecc+:xnack-", "sm_90").
inline Target target_from_arch_name(std::string_view name) {
  if (name.substr(0, 6) == "gfx950") return Target::gfx950;
  if (name.substr(0, 6) == "gfx942") return Target::gfx942;
  if (name == "sm_90" || name == "sm_90a") return Target::sm90;
  return Target::other;
}

}  // namespace hipattn
