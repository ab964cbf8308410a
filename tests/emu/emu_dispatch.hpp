// tests/emu/emu_dispatch.hpp: what the emulated dispatch tests of both families share (test_emu_unified,
// test_emu_paged_decode): a target and its code object named by an environment variable, the kernel
// manifests of a compile-time configuration (the constexpr text the kernels themselves carry:
// platform/fixed_string.hpp HIPATTN_KERNEL_MANIFEST), a launch by manifest, the
// device suites' tolerances (tests/common/compare.hpp), and the output in every format of
// problem/fp8_io.hpp with fp8 queries (IoSpec, IoHost, EmuIo, check_io_outputs).
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "emu.hpp"
#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/kernels/common/attention_config.hpp"  // kernel_manifest
#include "hipattn/kernels/common/split_merge.hpp"       // reduce_manifest
#include "hipattn/kernels/common/task_plan.hpp"         // planner_manifest
#include "hipattn/numeric/dtype.hpp"
#include "hipattn/numeric/numeric.hpp"
#include "../common/fp8_output_check.hpp"
#include "../common/tolerance.hpp"
#include "hipattn/problem/fp8_io.hpp"
#include "hipattn/reference/reference.hpp"

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

// ---- kernel manifests from the compile-time configuration ----
// The texts are built by the constexpr functions the kernels' HIPATTN_KERNEL_MANIFEST uses, so no
// spelling of a configuration is written twice; CodeObject::find_manifest matches them exactly.

// The manifest of a kernel role over a configuration: "kernel=unified_2d target=gfx942 ... variant=plain"
// (roles: unified_2d, unified_3d, paged_decode, dense_prefill, mla_decode).
template <class Cfg>
std::string manifest_of(const char* role) {
  return kernel_manifest<Cfg>(role).c_str();
}

// The manifest of a family's reduce as the dispatchers instantiate it (role "split_kv_reduce":
// unified, "paged_decode_reduce": paged decode): Cfg's dtype, Cfg::kD, split_kv_reduce_threads(kD).
template <class Cfg>
std::string reduce_manifest_of(const char* role) {
  return reduce_manifest(role, Cfg::kBf16, Cfg::kD, split_kv_reduce_threads(Cfg::kD)).c_str();
}

// The decode work planner's manifest (kernels/common/task_plan.hpp).
inline std::string planner_manifest_text() { return planner_manifest(kPlannerThreads).c_str(); }

// An emulated-device address as the pointer the dispatcher's argument builders take.
inline void* dev_ptr(uint64_t a) { return reinterpret_cast<void*>(static_cast<uintptr_t>(a)); }

// One launch of a run (what launch_kernel launched, and what the emulator counted), and the launches of
// a run in order with the emulator's options for each (the timing harnesses, tests/timing: a trace
// per launch travels in emu::LaunchOptions). The shared run functions (emu_<family>.hpp) take an
// optional EmuLaunches*; the tests pass none.
struct EmuLaunch {
  std::string manifest;
  const emu::KernelInfo* kernel = nullptr;
  LaunchDim grid;
  uint32_t threads = 0, dynamic_lds = 0;
  emu::LaunchStats stats;
  double seconds = 0;
};
struct EmuLaunches {
  emu::LaunchOptions options;  // every launch's, unless options_for is set
  std::function<emu::LaunchOptions(size_t index, const std::string& manifest)> options_for;
  std::vector<EmuLaunch> launches;
};

// Launch the one kernel whose manifest is `manifest` (recorded in `log` when given).
inline emu::LaunchStats launch_kernel(const emu::CodeObject& co, const std::string& manifest, LaunchDim grid,
                                      uint32_t threads, uint32_t lds, const void* args, size_t bytes, emu::Memory& mem,
                                      EmuLaunches* log = nullptr) {
  const emu::KernelInfo& k = co.find_manifest(manifest);
  emu::LaunchOptions opt;
  if (log != nullptr) opt = log->options_for ? log->options_for(log->launches.size(), manifest) : log->options;
  const auto t0 = std::chrono::steady_clock::now();
  emu::LaunchStats st =
      emu::launch(co, k, emu::Dim3{grid.x, grid.y, grid.z}, emu::Dim3{threads, 1, 1}, lds, args, bytes, mem, opt);
  if (log != nullptr)
    log->launches.push_back(EmuLaunch{manifest, &k, grid, threads, lds, st,
                                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
  return st;
}

// ---- the decode work planner (kernels/common/task_plan.hpp) ----

// The host plan of a planner launch's arguments over the host copy of its lengths, and its status
// (kPlanOk, or kPlanOverflow).
struct HostPlan {
  int32_t status = kPlanOk;
  std::vector<PlanTask> tasks;     // [capacity]
  std::vector<int32_t> item_task0; // [num_items]
};
inline HostPlan host_plan(const DecodePlanArgs& pa, const int32_t* lens) {
  HostPlan h;
  h.tasks.resize(size_t(pa.capacity));
  h.item_task0.resize(size_t(pa.num_items));
  std::vector<int32_t> n(size_t(pa.num_items)), first(size_t(pa.num_items));
  h.status = plan_decode_tasks_host(lens, pa.num_items, pa.shape, pa.capacity, pa.fixed_tiles, h.tasks.data(),
                                    h.item_task0.data(), n.data(), first.data(), pa.wave_slots);
  return h;
}

// What the device planner wrote, against the host plan of the same lengths.
struct PlannerRun {
  uint64_t instructions = 0;
  std::string mismatch;  // the first difference from the host plan (status, item_task0, a slot); empty: equal
  int tasks = 0, most_parts = 0;  // tasks of the device plan, the most of one item
};
// Launches plan_decode_tasks_kernel with `pa` (its buffers in `mem`) as the dispatchers do before a
// planned kernel, and compares its plan with host_plan over `lens` (the host copy of pa.seq_lens_k).
inline PlannerRun run_planner(const emu::CodeObject& co, const DecodePlanArgs& pa, const std::vector<int32_t>& lens,
                              emu::Memory& mem, EmuLaunches* log = nullptr) {
  PlannerRun r;
  r.instructions =
      launch_kernel(co, planner_manifest_text(), LaunchDim{1, 1, 1}, kPlannerThreads, 0, &pa, sizeof(pa), mem, log)
          .instructions;
  const HostPlan want = host_plan(pa, lens.data());
  const int32_t status = mem.download<int32_t>(reinterpret_cast<uint64_t>(pa.status), 1)[0];
  const auto tasks = mem.download<PlanTask>(reinterpret_cast<uint64_t>(pa.tasks), size_t(pa.capacity));
  const auto task0 = mem.download<int32_t>(reinterpret_cast<uint64_t>(pa.item_task0), lens.size());
  if (want.status != kPlanOk) r.mismatch = "the host plan's status is " + std::to_string(want.status);
  else if (status != want.status) r.mismatch = "the device plan's status is " + std::to_string(status);
  else if (task0 != want.item_task0) r.mismatch = "item_task0 differs from the host plan";
  for (int32_t s = 0; s < pa.capacity; ++s) {
    const PlanTask &x = tasks[size_t(s)], &y = want.tasks[size_t(s)];
    if (!(x.item == y.item && x.tile_begin == y.tile_begin && x.tile_end == y.tile_end && x.part == y.part &&
          x.parts == y.parts) && r.mismatch.empty())
      r.mismatch = "slot " + std::to_string(s) + " differs from the host plan";
    if (x.item >= 0) {
      ++r.tasks;
      r.most_parts = std::max<int>(r.most_parts, x.parts);
    }
  }
  return r;
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
  bool q8 = false;  // the fp8 matrix path: queries and cache in the target's q8 format, q the compute dtype
};
// The fp8 format of a target's q8 instances (numeric/kv_kind.hpp).
inline DType q8_format(Target t) { return t == Target::gfx942 ? DType::fp8_e4m3fnuz : DType::fp8_e4m3fn; }
// The tile kinds of a family at a head size: decode and prefill; paged decode (`verify`) adds the
// verify tile where the target's table has one (verify_tile_served).
inline std::vector<UnifiedTileKind> table_tile_kinds(Target t, int d, bool verify) {
  std::vector<UnifiedTileKind> kinds{UnifiedTileKind::decode, UnifiedTileKind::prefill};
  if (verify && verify_tile_served(t, d)) kinds.push_back(UnifiedTileKind::verify);
  return kinds;
}
// Calls f(entry) for every configuration of the table on target t: (q dtype, KV kind, variant, head
// size, tile kind), plus the register-staged fallback of each LDS-DMA one, plus the fp8 matrix path's
// (TableEntry::q8). `verify`: paged decode's table (with the verify tiles). Returns how many.
template <class F>
int for_each_table_entry(Target t, F&& f, bool verify = false) {
  int n = 0;
  for (DType q : {DType::f16, DType::bf16})
    for (DType kv : {DType::f16, DType::fp8_e4m3fn, DType::fp8_e4m3fnuz})
      for (bool full : {false, true})
        for (int d : UnifiedInstanceTable::head_sizes)
          for (UnifiedTileKind kind : table_tile_kinds(t, d, verify)) {
            const bool fp8 = kv != DType::f16;
            TableEntry e{q, kv == DType::f16 ? q : kv, full, fp8, d, kind, unified_tile(kind, d, t, fp8),
                         unified_default_copy(kind, d, t, fp8)};
            f(e), ++n;
            if (e.kv_copy == CopyModel::lds_dma) {
              e.kv_copy = CopyModel::register_staged;
              f(e), ++n;
            }
          }
  // the fp8 matrix path's
  for (DType q : {DType::f16, DType::bf16})
    for (bool full : {false, true})
      for (int d : UnifiedInstanceTable::head_sizes)
        for (UnifiedTileKind kind : table_tile_kinds(t, d, verify)) {
          const KvKind k = t == Target::gfx942 ? KvKind::e4m3fnuz_q8 : KvKind::e4m3fn_q8;
          f(TableEntry{q, q8_format(t), full, true, d, kind, unified_tile(kind, d, t, true),
                       unified_default_copy(kind, d, t, k), true}), ++n;
        }
  return n;
}
// The dtypes of an entry's problem (unified or paged-decode params): the fp8 matrix path's queries
// and cache in the target's format, with a 16-bit output of the entry's type (the compute dtype).
template <class P>
void set_entry_dtypes(P& p, const TableEntry& e, Target t) {
  p.q_dtype = e.q8 ? q8_format(t) : e.q;
  p.kv_dtype = e.kv;
  if (e.q8) p.out_format.dtype = e.q;
}

// The kernel of `manifest` keeps the budget its tile's residency assumes (unified_residency, the
// planners' fill): VGPRs + AGPRs (allocated in granules of 8) within the tile's register budget, and
// its LDS (static + the configuration's dynamic bytes) lets `residency` workgroups share a CU; no
// scratch. The residency is the configuration's own KV kind's (the fp8 matrix path's code tiles take
// less LDS than a converted cache's, which the planners count: at least as many fit).
template <class Cfg>
void expect_tile_budget(const emu::CodeObject& co, const std::string& manifest, const UnifiedTile& tile,
                        Target target, emu::Gfx gfx) {
  const int residency = unified_residency(tile, Cfg::kD, Cfg::kKv, target);
  const emu::KernelInfo& k = co.find_manifest(manifest);
  const int regs = (k.vgpr_count + 7) / 8 * 8 + (k.agpr_count + 7) / 8 * 8;
  EXPECT_LE(regs, tile.regs) << emu::gfx_name(gfx) << ": " << manifest << " uses " << k.vgpr_count << " VGPRs + "
                             << k.agpr_count << " AGPRs";
  const uint32_t lds = k.group_segment_fixed_size + Cfg::kSmemBytes;
  EXPECT_LE(int64_t(residency) * lds, int64_t(target_lds_bytes(target))) << manifest;
  EXPECT_EQ(k.private_segment_fixed_size, 0u) << manifest << ": scratch";
}

// The device suites' tolerances (tests/common/tolerance.hpp).
using ::hipattn::testing::kLseTolerance;
using ::hipattn::testing::out_tolerance;
using ::hipattn::testing::Tolerance;


// ---- the output in every format, and fp8 queries (problem/fp8_io.hpp) ----
//
// A case's fp8 I/O: the query dtype (fp8 queries are the codes of the problem's 16-bit queries divided
// by kFp8QScale) and the output format. Both harnesses place the tensors in emulated memory, poison
// the output (NaN codes of its format) and the group scales (NaN) before every run, and check every
// output element after decoding it with the scale it was written with (the per-tensor scale, or the
// kernel's own group scale, itself checked against the reference's): |got - want| <= atol + rtol |want|
// with the 16-bit tolerance of the instance's type (compute_dtype) plus, for fp8, half an fp8 step
// (rtol + 2^-4) and half the smallest fp8 subnormal times the scale (atol); a reference value beyond
// the format's range (|want| / scale > max (1 + rtol)) must be the saturated +-max; a NaN one NaN.
// The rules of tests/common/fp8_output_check.hpp, which the GPU suites use too.

struct IoSpec {
  DType q = DType::f16;              // fp8_e4m3fn / fp8_e4m3fnuz: fp8 queries; a 16-bit value: the problem's own
  bool device_q_scale = false;       // q_scale as a device scalar (else the host float)
  std::optional<DType> out;          // out_format.dtype (unset: the query's 16-bit type)
  int group = 0;                     // fp8 output: 0 per tensor, else the group size
  bool ue8m0 = false;
  float group_max = 0.f;             // out_format.group_fp8_max (0: the format's)
  bool device_out_scale = false;     // the per-tensor output scale as a device scalar
  float out_scale = 0.f;             // the per-tensor output scale (0: default_out_scale)
  bool col_major_scales = false;     // group scales [groups][tokens] (token stride 1), else [tokens][groups]
  bool saturates = false;            // built to saturate (a tiny per-tensor scale): some elements must
};

inline constexpr float kFp8QScale = 1.f / 48.f;  // |x| < ~4 -> codes up to ~192, inside both formats
// Outputs within |O| < ~3 land near the top of the format.
inline float default_out_scale(DType out) { return out == DType::fp8_e4m3fnuz ? 1.f / 64.f : 1.f / 128.f; }

inline uint8_t fp8_from_float(DType d, float x) {
  return d == DType::fp8_e4m3fn ? fp8_e4m3fn_t::from_float(x).bits : fp8_e4m3fnuz_t::from_float(x).bits;
}
// A byte whose repetition is NaN in every element of `d` (e4m3fnuz's only NaN is 0x80; 0xFF is -240).

// The host side of a case's I/O over a problem of T tokens, H heads, head size D whose 16-bit queries
// (of the instance's type: bf16 or not) are `q16`.
struct IoHost {
  IoSpec spec;
  DType q_dtype = DType::f16, kv_dtype = DType::f16, out = DType::f16, compute = DType::f16;
  int64_t T = 0, H = 0, D = 0, groups = 0;
  std::vector<uint8_t> q8;  // fp8 queries: the codes
  float q_scale = 1.f, out_scale = 1.f;

  IoHost(const IoSpec& s, bool bf16, DType kv, int64_t t, int64_t h, int64_t d, const std::vector<uint16_t>& q16)
      : spec(s), kv_dtype(kv), T(t), H(h), D(d) {
    const DType q16_dtype = bf16 ? DType::bf16 : DType::f16;
    q_dtype = is_fp8(s.q) ? s.q : q16_dtype;
    OutputFormat f;
    f.dtype = s.out;
    out = output_dtype(q_dtype, f);
    compute = compute_dtype(q_dtype, kv, out);
    if (compute != q16_dtype)
      throw std::invalid_argument("IoHost: the problem's 16-bit type is not the instance's (compute_dtype)");
    groups = is_fp8(out) && s.group > 0 ? d / s.group : 0;
    if (is_fp8(q_dtype)) {
      q_scale = kFp8QScale;
      q8.resize(q16.size());
      for (size_t i = 0; i < q16.size(); ++i) {
        const float x = bf16 ? bfloat16_t::from_bits(q16[i]).to_float() : half_t::from_bits(q16[i]).to_float();
        q8[i] = fp8_from_float(q_dtype, x / q_scale);
      }
    }
    if (is_fp8(out) && s.group == 0) out_scale = s.out_scale > 0.f ? s.out_scale : default_out_scale(out);
  }

  bool fp8_out() const { return is_fp8(out); }
  size_t out_bytes() const { return size_t(T * H * D) * dtype_size(out); }
  size_t group_scale_count() const { return size_t(T * H * groups); }
  int64_t gs_stride_token() const { return spec.col_major_scales ? 1 : H * groups; }
  int64_t gs_stride_group() const { return spec.col_major_scales ? T : 1; }
  int64_t gs_index(int64_t t, int64_t h, int64_t g) const {
    return t * gs_stride_token() + (h * groups + g) * gs_stride_group();
  }

  // Sets p's query dtype and pointer, q_scale and output format (P: UnifiedAttentionParams or
  // PagedDecodeParams). The pointers: the fp8 codes, the device scalars (null: the host floats) and
  // the group scales; host pointers for the reference, emulated-device ones for the kernels.
  template <class P>
  void apply(P& p, const void* q8_ptr, const float* q_scale_ptr, const float* out_scale_ptr, float* group_scale) const {
    if (is_fp8(q_dtype)) {
      p.q = q8_ptr;
      p.q_dtype = q_dtype;
      if (spec.device_q_scale) p.q_scale.device = q_scale_ptr;
      else p.q_scale.host = q_scale;
    }
    p.out_format.dtype = spec.out;
    if (fp8_out() && spec.group == 0) {
      if (spec.device_out_scale) p.out_format.scale.device = out_scale_ptr;
      else p.out_format.scale.host = out_scale;
    }
    if (fp8_out() && spec.group > 0) {
      p.out_format.group_size = spec.group;
      p.out_format.group_scale = group_scale;
      p.out_format.group_ue8m0 = spec.ue8m0;
      p.out_format.group_fp8_max = spec.group_max;
      p.out_format.group_scale_stride_token = gs_stride_token();
      p.out_format.group_scale_stride_group = gs_stride_group();
    }
  }
  OutputFormat format() const {
    UnifiedAttentionParams p;
    apply(p, nullptr, nullptr, nullptr, nullptr);
    return p.out_format;
  }
  std::string describe() const {
    std::string d = "q=" + std::string(dtype_name(q_dtype));
    if (is_fp8(q_dtype)) d += spec.device_q_scale ? "(dev scale)" : "(host scale)";
    d += " out=" + std::string(dtype_name(out));
    if (fp8_out())
      d += spec.group > 0 ? "(group " + std::to_string(spec.group) + (spec.ue8m0 ? " ue8m0" : "") +
                                (spec.group_max > 0 ? " max " + std::to_string(int(spec.group_max)) : "") +
                                (spec.col_major_scales ? " col-major" : "") + ")"
                          : "(tensor 1/" + std::to_string(int(std::lround(1.0 / out_scale))) +
                                (spec.device_out_scale ? " dev" : " host") + ")";
    return d;
  }
};

// The I/O tensors of a case in emulated memory (addresses; 0 where unused) and their poisoning.
struct EmuIo {
  uint64_t q8 = 0, q_scale = 0, out_scale = 0, group_scale = 0;
  size_t group_scale_bytes = 0;
  EmuIo() = default;
  EmuIo(const IoHost& io, emu::Memory& mem) {
    if (!io.q8.empty()) q8 = mem.upload(io.q8, "q (fp8 codes)");
    if (is_fp8(io.q_dtype) && io.spec.device_q_scale) q_scale = mem.upload(std::vector<float>{io.q_scale}, "q_scale");
    if (io.fp8_out() && io.spec.group == 0 && io.spec.device_out_scale)
      out_scale = mem.upload(std::vector<float>{io.out_scale}, "out_scale");
    if (io.group_scale_count() > 0) {
      group_scale_bytes = io.group_scale_count() * sizeof(float);
      group_scale = mem.alloc(group_scale_bytes, "group_scale");
    }
  }
  template <class P>
  void apply(const IoHost& io, P& p) const {
    auto ptr = [](uint64_t a) { return reinterpret_cast<float*>(static_cast<uintptr_t>(a)); };
    io.apply(p, ptr(q8), ptr(q_scale), ptr(out_scale), ptr(group_scale));
  }
  void poison(emu::Memory& mem) const {
    if (group_scale_bytes == 0) return;
    const std::vector<uint8_t> nan(group_scale_bytes, 0xFF);
    mem.write(group_scale, nan.data(), group_scale_bytes);
  }
  std::vector<float> group_scales(const emu::Memory& mem, const IoHost& io) const {
    return group_scale_bytes ? mem.download<float>(group_scale, io.group_scale_count()) : std::vector<float>{};
  }
};

// The outputs of one launch against the reference: counts, the first failure, the largest errors,
// and every element decoded (for comparing two launches).
struct IoStats {
  int64_t bad = 0, checked = 0, saturated = 0, nan = 0, scales = 0;
  double max_abs = 0, max_lse = 0;
  std::string first_bad;
  std::vector<double> decoded, scale;  // [T][H][D]: each element decoded, and the scale it was written with
  void fail(const std::string& what) {
    if (bad++ == 0) first_bad = what;
  }
};

// The tolerance of an output element of `io`'s format written with `scale` (1 for 16-bit).
inline Tolerance io_tolerance(const IoHost& io, double scale) {
  return output_element_tolerance(out_tolerance(io.compute == DType::bf16), io.out, scale);
}

// Checks the group scales (first: the elements decode with them) and every output element of
// `out` ([T][H][D] compact, io.out's bytes) against the reference.
inline IoStats check_io_outputs(const IoHost& io, const reference::AttentionResult& ref, const std::vector<uint8_t>& out,
                                const std::vector<float>& gscale) {
  IoStats st;
  const int64_t T = io.T, H = io.H, D = io.D;
  const Tolerance base = out_tolerance(io.compute == DType::bf16);
  const OutputFormat fmt = io.format();
  if (io.groups > 0) {
    const std::vector<double> want_s = reference::output_group_scales(ref, T, H, D, io.out, fmt);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t g = 0; g < io.groups; ++g) {
          const double got = gscale[size_t(io.gs_index(t, h, g))], want = want_s[size_t((t * H + h) * io.groups + g)];
          ++st.checked, ++st.scales;
          const bool ok = group_scale_matches(got, want, io.spec.ue8m0, base.rtol);
          if (!ok)
            st.fail("group_scale[t " + std::to_string(t) + ", h " + std::to_string(h) + ", g " + std::to_string(g) +
                    "] = " + std::to_string(got) + ", want " + std::to_string(want));
        }
  }
  st.decoded.resize(size_t(T * H * D));
  st.scale.assign(size_t(T * H * D), 1.0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t d = 0; d < D; ++d) {
        const size_t i = size_t((t * H + h) * D + d);
        const double want = ref.out[i];
        const double scale = !io.fp8_out()  ? 1.0
                             : io.groups > 0 ? double(gscale[size_t(io.gs_index(t, h, d / io.spec.group))])
                                             : double(io.out_scale);
        const double got = decode_output(io.out, out.data(), i) * scale;
        st.decoded[i] = got;
        st.scale[i] = scale;
        ++st.checked;
        const OutputElementCheck e = check_output_element(io.out, base, got, want, scale);
        st.nan += e.nan;
        st.saturated += e.saturated;
        if (!e.ok) {
          char c[16];
          std::snprintf(c, sizeof(c), "0x%02x", unsigned(out[i * dtype_size(io.out)]));
          st.fail("out[t " + std::to_string(t) + ", h " + std::to_string(h) + ", d " + std::to_string(d) + "] = " +
                  std::to_string(got) + " (byte " + c + "), want " + (e.saturated ? "the saturated max of " : "") +
                  std::to_string(want));
        }
        if (!e.nan && !e.saturated) st.max_abs = std::max(st.max_abs, std::isfinite(e.err) ? e.err : INFINITY);
      }
  return st;
}

// Two launches of the same problem (say 2D and 3D) agree: each decoded element within the format's
// tolerance of the other (fp8: both may round to neighbouring codes, so twice it; NaN where both are).
// Returns how many elements differ beyond that.
inline int64_t io_disagreements(const IoHost& io, const IoStats& a, const IoStats& b) {
  int64_t n = 0;
  const double k = io.fp8_out() ? 2.0 : 1.0;
  for (size_t i = 0; i < a.decoded.size(); ++i) {
    const double x = a.decoded[i], y = b.decoded[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    const Tolerance tol = io_tolerance(io, std::max(a.scale[i], b.scale[i]));
    if (!(std::fabs(x - y) <= k * (tol.atol + tol.rtol * std::fabs(x)))) ++n;
  }
  return n;
}

}  // namespace hipattn::testing::emu_dispatch
