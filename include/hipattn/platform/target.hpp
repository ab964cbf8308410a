// hipattn/platform/target.hpp: the hardware targets the library knows, by name, and one row of facts
// per target (TargetTraits).
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

// The instruction-set family of a target: what its kernels are written against.
enum class TargetFamily : uint8_t { none, cdna, hopper };

// The fp8 encoding a target's matrix unit reads (none: it has no fp8 matrix instructions the library
// uses). numeric/kv_kind.hpp derives the q8 kinds a target compiles from it.
enum class Fp8Format : uint8_t { none, e4m3fn, e4m3fnuz };

// What one CU (SM) of a target offers: the facts the planner and the configurations' static checks
// read. A new target is one row of target_traits. Registers: CDNA counts a SIMD lane's VGPRs + AGPRs
// (512) against a wave's per-lane use; sm_90 counts a sub-partition's registers (16 K of the SM's
// 64 K) against a thread's use times its threads.
struct TargetTraits {
  TargetFamily family = TargetFamily::none;
  int wave_size = 0;           // threads of a wave (warp)
  int lds_bytes = 0;           // LDS (shared memory) of one CU / SM
  int lds_reserved = 0;        // bytes the runtime reserves per resident workgroup
  int max_threads = 0;         // resident threads per CU / SM
  int simds = 0;               // SIMDs (sub-partitions) per CU / SM
  int regs_per_simd = 0;       // register budget of one SIMD: per lane (CDNA) or per sub-partition (sm_90)
  int max_waves_per_simd = 0;  // resident waves a SIMD schedules
  Fp8Format mma_fp8 = Fp8Format::none;  // the fp8 format the matrix unit reads
};

// The row of a target (all zero for host / other). MI300 (gfx942): 64 KiB of LDS; MI355X (gfx950):
// 160 KiB; H100 / H200 (sm_90): 228 KiB, 1 KiB of it reserved per resident workgroup.
HIPATTN_HOST_DEVICE constexpr TargetTraits target_traits(Target t) {
  switch (t) {
    case Target::gfx942: return {TargetFamily::cdna, 64, 64 * 1024, 0, 2048, 4, 512, 8, Fp8Format::e4m3fnuz};
    case Target::gfx950: return {TargetFamily::cdna, 64, 160 * 1024, 0, 2048, 4, 512, 8, Fp8Format::e4m3fn};
    case Target::sm90: return {TargetFamily::hopper, 32, 228 * 1024, 1024, 2048, 4, 16384, 16, Fp8Format::e4m3fn};
    default: return {};
  }
}

// The wave (warp) size of a device target: 64 on CDNA, 32 on sm_90 (0 for host / other).
HIPATTN_HOST_DEVICE constexpr int target_wave_size(Target t) { return target_traits(t).wave_size; }

// CDNA (wave64, MFMA) or not.
HIPATTN_HOST_DEVICE constexpr bool is_cdna(Target t) { return target_traits(t).family == TargetFamily::cdna; }

// LDS (shared memory) of one CU / SM in bytes.
HIPATTN_HOST_DEVICE constexpr int target_lds_bytes(Target t) { return target_traits(t).lds_bytes; }

// Parse a device architecture name as the runtime reports it ("gfx942:sramecc+:xnack-", "sm_90").
inline Target target_from_arch_name(std::string_view name) {
  if (name.substr(0, 6) == "gfx950") return Target::gfx950;
  if (name.substr(0, 6) == "gfx942") return Target::gfx942;
  if (name == "sm_90" || name == "sm_90a") return Target::sm90;
  return Target::other;
}

}  // namespace hipattn
