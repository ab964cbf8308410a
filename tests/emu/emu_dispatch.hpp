// tests/emu/emu_dispatch.hpp: what the emulated dispatch tests of both families share (test_emu_unified,
// test_emu_paged_decode): a target and its code object named by an environment variable, the kernel
// names of a compile-time configuration in llvm-cxxfilt's spelling, a launch by name parts, and the
// device suites' tolerances (tests/common/compare.hpp).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "emu.hpp"
#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/numeric/dtype.hpp"

namespace hipattn::testing::emu_dispatch {

// An emulated target: its gfx, the planner's CU count (MI300X: 304, MI355X: 256), its fp8 KV format
// and the environment variable naming its code object.
struct EmuTarget {
  emu::Gfx gfx;
  Target target;
  int cus;
  DType fp8;
  const char* env;
};

// The code object named by $env, loaded once per process; null (with the reason) when the variable
// is unset. `built` names the object the build sets it to.
inline std::shared_ptr<const emu::CodeObject> env_code_object(const EmuTarget& t, const std::string& built,
                                                              std::string& why) {
  static std::mutex m;
  static std::map<std::string, std::shared_ptr<const emu::CodeObject>> cache;
  const char* path = std::getenv(t.env);
  if (path == nullptr || *path == 0) {
    why = std::string("$") + t.env + " is not set (the build sets it to tests/isa/" + built + "-" + emu::gfx_name(t.gfx) +
          ".co when the AMD toolchain is present)";
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  auto co = emu::CodeObject::load(path);
  if (co->gfx() != t.gfx) throw std::runtime_error(std::string(path) + " is not a " + emu::gfx_name(t.gfx) + " code object");
  cache[path] = co;
  return co;
}

// ---- kernel names from the compile-time configuration (llvm-cxxfilt's spelling) ----

template <class V>
struct VariantName;
template <bool kSoftcap, bool kAlibi, bool kQQBias>
struct VariantName<StandardVariant<kSoftcap, kAlibi, kQQBias>> {
  static std::string get() {
    auto b = [](bool x) { return std::string(x ? "true" : "false"); };
    return "hipattn::StandardVariant<" + b(kSoftcap) + ", " + b(kAlibi) + ", " + b(kQQBias) + ">";
  }
};

template <class T>
std::string offset_name() {
  static_assert(std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t>, "offset type");
  if constexpr (std::is_same_v<T, int32_t>) return "int";
  else return std::is_same_v<int64_t, long> ? "long" : "long long";
}

inline std::string bool_name(bool b) { return b ? "true" : "false"; }

// "hipattn::UnifiedConfig<true, (hipattn::KvKind)0, 64, 1, 2, 1, 16, 2, hipattn::StandardVariant<...>, long, 0,
//  (hipattn::Target)1, (hipattn::CopyModel)1, hipattn::RowKvLayout>"
template <class Cfg>
std::string config_name() {
  return "hipattn::UnifiedConfig<" + bool_name(Cfg::kBf16) + ", (hipattn::KvKind)" + std::to_string(int(Cfg::kKv)) +
         ", " + std::to_string(Cfg::kD) + ", " + std::to_string(Cfg::kWarpsM) + ", " + std::to_string(Cfg::kWarpsN) +
         ", " + std::to_string(Cfg::kMT) + ", " + std::to_string(Cfg::kKN) + ", " + std::to_string(Cfg::kStages) +
         ", " + VariantName<typename Cfg::Variant>::get() + ", " + offset_name<typename Cfg::Offset>() + ", " +
         std::to_string(Cfg::kPageSize) + ", (hipattn::Target)" + std::to_string(int(Cfg::kTarget)) +
         ", (hipattn::CopyModel)" + std::to_string(int(Cfg::kCopy)) + ", hipattn::" +
         (Cfg::kRowLayout ? "RowKvLayout" : "RocmKvLayout") + ">";
}

// The name parts of a family's reduce (kernel "unified": split_kv_reduce_kernel with SplitKvReduceArgs;
// "paged_decode": paged_decode_reduce_kernel with PagedDecodeReduceArgs).
template <class Cfg>
std::vector<std::string> reduce_parts(const std::string& kernel, const std::string& args) {
  return {"void hipattn::" + kernel + "<" + bool_name(Cfg::kBf16) + ", " + std::to_string(Cfg::kD) + ", " +
          std::to_string(split_kv_reduce_threads(Cfg::kD)) + ">(hipattn::" + args + ")"};
}

// Launch the one kernel whose name holds every part.
inline emu::LaunchStats launch_kernel(const emu::CodeObject& co, const std::vector<std::string>& parts,
                                      UnifiedLaunchDim grid, uint32_t threads, uint32_t lds, const void* args,
                                      size_t bytes, emu::Memory& mem) {
  const emu::KernelInfo& k = co.find(parts);
  return emu::launch(co, k, emu::Dim3{grid.x, grid.y, grid.z}, emu::Dim3{threads, 1, 1}, lds, args, bytes, mem);
}

// One configuration of the instance table on a target, as the dispatchers of both families pick it:
// (q dtype, KV dtype, full variant, head size, tile kind) and the KV loader policy (the default, or
// the register-staged fallback of an LDS-DMA instance).
struct TableEntry {
  DType q, kv;
  bool full, fp8;
  int d;
  UnifiedTileKind kind;
  UnifiedTile tile;
  CopyModel kv_copy;
};
// Calls f(entry) for every configuration of the table on target t: (q dtype, KV kind, variant, head
// size, tile kind), plus the register-staged fallback of each LDS-DMA one. Returns how many.
template <class F>
int for_each_table_entry(Target t, F&& f) {
  int n = 0;
  for (DType q : {DType::f16, DType::bf16})
    for (DType kv : {DType::f16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz})
      for (bool full : {false, true})
        for (int d : UnifiedInstanceTable::head_sizes)
          for (UnifiedTileKind kind : {UnifiedTileKind::decode, UnifiedTileKind::prefill}) {
            const bool fp8 = kv != DType::f16;
            TableEntry e{q, kv == DType::f16 ? q : kv, full, fp8, d, kind, unified_tile(kind, d, t, fp8),
                         unified_default_copy(kind, d, t, fp8)};
            f(e), ++n;
            if (e.kv_copy == CopyModel::lds_dma) {
              e.kv_copy = CopyModel::register_staged;
              f(e), ++n;
            }
          }
  return n;
}

// The kernel of `parts` keeps the budget its tile's residency assumes (unified_residency, the
// planners' fill): VGPRs + AGPRs (allocated in granules of 8) within the tile's register budget, and
// its LDS (static + the configuration's dynamic bytes) lets `residency` workgroups share a CU; no
// scratch.
template <class Cfg>
void expect_tile_budget(const emu::CodeObject& co, const std::vector<std::string>& parts, const UnifiedTile& tile, bool fp8,
                        Target target, emu::Gfx gfx) {
  const int residency = unified_residency(tile, Cfg::kD, fp8, target);
  const emu::KernelInfo& k = co.find(parts);
  const int regs = (k.vgpr_count + 7) / 8 * 8 + (k.agpr_count + 7) / 8 * 8;
  EXPECT_LE(regs, tile.regs) << emu::gfx_name(gfx) << ": " << parts[0] << " uses " << k.vgpr_count << " VGPRs + "
                             << k.agpr_count << " AGPRs";
  const uint32_t lds = k.group_segment_fixed_size + Cfg::kSmemBytes;
  EXPECT_LE(int64_t(residency) * lds, int64_t(target_limits(target).lds_bytes)) << parts[0];
  EXPECT_EQ(k.private_segment_fixed_size, 0u) << parts[0] << ": scratch";
}

// The device suites' tolerances (tests/common/compare.hpp): |out - ref| <= atol + rtol |ref|.
struct Tolerance {
  double atol, rtol;
};
inline Tolerance out_tolerance(bool bf16) { return bf16 ? Tolerance{1.6e-2, 1.6e-2} : Tolerance{3e-3, 3e-3}; }
inline constexpr Tolerance kLseTolerance{2e-3, 1e-3};

}  // namespace hipattn::testing::emu_dispatch
