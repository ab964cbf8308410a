// hipattn/platform/target.hpp: the compile target as a constexpr value, and per-target constants.
#pragma once
#include <cstdint>
#include <string_view>

#include "hipattn/platform/config.hpp"

namespace hipattn {

// A hardware target the library knows. `host` is the host pass (or a host-only build).
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

// The target of the current compilation pass (constexpr; usable in `if constexpr`).
HIPATTN_HOST_DEVICE constexpr Target current_target() {
#if defined(HIPATTN_TARGET_GFX950)
  return Target::gfx950;
#elif defined(HIPATTN_TARGET_GFX942)
  return Target::gfx942;
#elif defined(HIPATTN_TARGET_SM90)
  return Target::sm90;
#elif defined(HIPATTN_TARGET_OTHER_DEVICE)
  return Target::other;
#else
  return Target::host;
#endif
}

// Lanes per wavefront / warp: 64 on CDNA, 32 on NVIDIA.
HIPATTN_HOST_DEVICE constexpr int wave_size(Target t) {
  return (t == Target::gfx942 || t == Target::gfx950) ? 64 : 32;
}

// Shared memory (LDS) bytes one workgroup may use: 64 KiB on gfx942, 160 KiB on gfx950,
// 227 KiB on sm_90 (opt-in through cudaFuncSetAttribute; 48 KiB without it).
HIPATTN_HOST_DEVICE constexpr uint32_t lds_bytes_per_workgroup(Target t) {
  switch (t) {
    case Target::gfx942: return 64u * 1024u;
    case Target::gfx950: return 160u * 1024u;
    case Target::sm90: return 227u * 1024u;
    default: return 48u * 1024u;
  }
}

// The target's family, for the per-ISA header selection in arch/.
HIPATTN_HOST_DEVICE constexpr bool is_cdna(Target t) { return t == Target::gfx942 || t == Target::gfx950; }

// Parse a device architecture name as the runtime reports it ("gfx942:sramecc+:xnack-", "sm_90").
inline Target target_from_arch_name(std::string_view name) {
  if (name.substr(0, 6) == "gfx950") return Target::gfx950;
  if (name.substr(0, 6) == "gfx942") return Target::gfx942;
  if (name == "sm_90" || name == "sm_90a") return Target::sm90;
  return Target::other;
}

}  // namespace hipattn
