// tests/timing/common.hpp: what the timing harnesses share. A harness runs one kernel (one of AITER's
// code objects from ../shared/calibration, or the hipattn instance the dispatcher would choose) on the
// emulator (emu.hpp) for one problem shape, optionally checks its output against the float64
// reference, and says what it launched. The timing layer (emu/timing.hpp) replays the trace such a run
// records (LaunchOptions::trace) on its model of a compute unit.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <string>
#include <sys/stat.h>

#include "emu.hpp"

namespace hipattn::timing {

// One functional launch: what ran, over which grid, and how its output compared with the reference.
struct KernelRun {
  std::string label;            // e.g. "aiter fwd_hd128_bf16_rtne gfx942 b1 h2/2 s256/512"
  emu::Dim3 grid, block;
  uint32_t lds_bytes = 0;       // per workgroup (fixed + dynamic)
  int vgprs = 0;                // unified VGPR + AGPR registers per lane (occupancy)
  emu::LaunchStats stats;
  bool checked = false;         // compared with the float64 reference
  int64_t compared = 0;         // elements compared
  int64_t bad = 0;              // elements outside the tolerance (or not written)
  double max_abs_err = 0, max_rel_err = 0;
  std::string detail;           // the first bad element, or why the run could not check
  bool pass() const { return checked && compared > 0 && bad == 0; }
};

// Where AITER's calibration objects are: $HIPATTN_CALIBRATION_DIR (set by the build's
// hipattn_emu_env.sh, default ../shared/calibration beside the source tree); empty when it names no
// folder with an aiter/ subfolder. The objects are read in place, never copied or linked.
inline std::string calibration_dir() {
  const char* e = std::getenv("HIPATTN_CALIBRATION_DIR");
  if (e == nullptr || *e == 0) return {};
  struct stat st;
  const std::string aiter = std::string(e) + "/aiter";
  if (stat(aiter.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {};
  return e;
}

// Multiply-accumulates of the MFMAs an emulated launch executed: the sum over its v_mfma* mnemonics
// of count x M x N x K (x blocks) of the mnemonic's shape; throws on an MFMA whose shape it cannot read.
inline int64_t mfma_macs(const emu::LaunchStats& st) {
  static const std::regex shape(R"(^v_mfma_[a-z0-9]+_(\d+)x(\d+)x(\d+)(?:_?(\d+)b)?(?:_|$))");
  int64_t macs = 0;
  for (const auto& [m, n] : st.op_counts) {
    if (m.rfind("v_mfma", 0) != 0 && m.rfind("v_smfmac", 0) != 0) continue;
    std::smatch g;
    if (m.rfind("v_smfmac", 0) == 0 || !std::regex_search(m, g, shape))
      throw std::runtime_error("mfma_macs: cannot read the shape of " + m);
    const int64_t blocks = g[4].matched ? std::stoll(g[4].str()) : 1;
    macs += int64_t(n) * std::stoll(g[1].str()) * std::stoll(g[2].str()) * std::stoll(g[3].str()) * blocks;
  }
  return macs;
}
// Executed MFMA instructions of a launch (every wave).
inline int64_t mfma_count(const emu::LaunchStats& st) {
  int64_t c = 0;
  for (const auto& [m, n] : st.op_counts)
    if (m.rfind("v_mfma", 0) == 0 || m.rfind("v_smfmac", 0) == 0) c += int64_t(n);
  return c;
}

// The code object at `path`, loaded once per process (harnesses run the same object many times).
inline std::shared_ptr<const emu::CodeObject> load_cached(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const emu::CodeObject>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  auto co = emu::CodeObject::load(path);
  cache[path] = co;
  return co;
}

}  // namespace hipattn::timing
