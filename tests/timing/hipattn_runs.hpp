// tests/timing/hipattn_runs.hpp: the hipattn side of the timed emulator's side-by-side table: for a
// problem and a target (gfx942, gfx950), run the instance hipattn's dispatcher would choose, with its
// own plan, argument and geometry builders, on the emulator (every launch of the call: the device
// planner, the attention kernel, the reduce), optionally check the call's output against the float64
// reference, and say what ran (KernelRun, common.hpp). And, without running anything, the work list of
// a full-size problem: per workgroup of each launch, in dispatch order, how many KV tiles it walks,
// from the same plan, so that a per-tile cost measured on a reduced problem scales to the device.
//
// The runs share their problems, launches and comparisons with tests/emu (emu_dense_prefill.hpp,
// emu_mla_decode.hpp, emu_paged_decode.hpp, emu_unified.hpp); inputs are fresh random values (seeded),
// outputs poisoned before the call, every output element (and LSE, group scale) compared with the
// device suites' tolerances.
//
// Code objects (tests/isa, named by the environment as tests/emu's are: hipattn_emu_env.sh):
//   dense prefill  $HIPATTN_EMU_DENSE_PREFILL_GFX9xx   MLA decode    $HIPATTN_EMU_MLA_DECODE_GFX9xx
//   paged decode   $HIPATTN_EMU_PAGED_DECODE_GFX9xx    unified, fp8 prefill  $HIPATTN_EMU_DISPATCH_GFX9xx
// A run whose variable is unset throws std::runtime_error with code_object_missing()'s reason.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "emu.hpp"
#include "hipattn/dispatch/mla_decode_plan.hpp"    // MlaDecodeOptions
#include "hipattn/dispatch/paged_decode_plan.hpp"  // PagedDecodeOptions
#include "hipattn/dispatch/unified_plan.hpp"       // UnifiedOptions
#include "hipattn/numeric/dtype.hpp"
#include "../../testing/paged_problem.hpp"  // ProblemSpec

namespace hipattn::timing {

// ---- what a full-size problem would launch, not run ----

// One launch: its kernel, geometry, and the work of each workgroup.
struct LaunchWork {
  std::string manifest;  // the kernel's manifest (CodeObject::find_manifest finds it)
  std::string role;      // dense_prefill, unified_2d, unified_3d, split_kv_reduce, plan_decode_tasks,
                         // paged_decode, paged_decode_reduce, mla_decode
  emu::Dim3 grid, block;
  uint32_t dynamic_lds = 0;  // bytes (the kernel's fixed LDS comes from its code object)
  // What `work` counts:
  //   attention kernels (tile_kv > 0): KV tiles of tile_kv keys the workgroup walks (the mainloop's
  //     iterations: [t_begin, t_end) of its q-block, segment or planned task), whole tiles, partial
  //     and masked ones included; a workgroup with nothing to do (past its sequence, an empty slot): 0
  //   reduces: partial rows of head-size floats the workgroup merges (rows of a one-part sequence: 0)
  //   the planner (one workgroup): sequences planned
  std::string unit;
  int32_t tile_kv = 0;    // keys a KV tile; 0: not an attention kernel
  int32_t tile_rows = 0;  // query rows a tile (padding rows included: the MFMAs compute them)
  // Multiply-accumulates of the matrix instructions of one KV tile, every wave together:
  // tile_rows x tile_kv x (d_qk + d_v) (S = Q K^T and O += P V). The emulated launch's MFMAs
  // (mfma_macs of its op counts) are total() x tile_macs exactly: no MFMA runs outside the KV loop.
  int64_t tile_macs = 0;
  std::vector<int32_t> work;  // per workgroup, x fastest, then y, then z (grid.x * grid.y * grid.z entries)

  int64_t workgroups() const { return int64_t(grid.x) * grid.y * grid.z; }
  int64_t total() const;
  int32_t most() const;  // the largest entry
  int64_t busy() const;  // workgroups with work > 0
};

// Every launch of a call, in launch order.
struct WorkList {
  std::string label;  // the problem, the target and the plan
  std::vector<LaunchWork> launches;
  // The attention kernel's launch (the one with tile_kv > 0).
  const LaunchWork& attention() const;
};

// mfma_macs / mfma_count (what a launch executed): common.hpp.

// Unified VGPR + AGPR registers a lane of `k` holds (gfx90a+: the AGPRs start at the descriptor's
// ACCUM_OFFSET, COMPUTE_PGM_RSRC3 bits 5:0, in units of 4; the code object's .vgpr_count is that total
// when the kernel has AGPRs), unrounded (the hardware allocates granules of 8: COMPUTE_PGM_RSRC1 bits 5:0).
int unified_vgprs(const emu::KernelInfo& k);

// ---- runs ----

// The call's launches on the emulator and what ran. Every launch's KernelRun carries the comparison
// of the call's output (written by its last launch) when the run checked.
struct HipattnRun {
  std::string label;                // the problem, the target and the plan
  std::vector<KernelRun> launches;  // in launch order; label: "<manifest> | <problem>"
  WorkList work;                    // the work list of this problem (the same launches)
  bool pass() const;                // checked, and every launch passes
};

// The emulator's options for each launch of a run (its index in the call, its kernel's manifest),
// e.g. a trace per launch; unset: emu::LaunchOptions{}.
using LaunchOptionsFor = std::function<emu::LaunchOptions(size_t index, const std::string& manifest)>;

// Which code object runs a class.
enum class HipattnFamily { dense_prefill, unified, mla_decode, paged_decode };
// Why `family`'s code object for `gfx` is not available (its variable unset), or empty.
std::string code_object_missing(HipattnFamily family, emu::Gfx gfx);
// The family's code object (loaded once per process); throws std::runtime_error when missing.
std::shared_ptr<const emu::CodeObject> hipattn_code_object(HipattnFamily family, emu::Gfx gfx);

// 1. Dense prefill (dispatch/dense_prefill.hpp, the CDNA path): batched [batch, seqlen, heads, d]
// tensors, bottom-right causal or not. Head sizes (d_qk, d_v): (64, 64), (128, 128), (256, 256),
// (192, 128). gfx950 takes the ping-pong instance at d 128 / 256 (detail::dense_pingpong).
struct DensePrefillProblem {
  bool bf16 = true;
  int d_qk = 128, d_v = 128;
  bool causal = true;
  int batch = 1, heads_q = 8, heads_kv = 8, seqlen_q = 128, seqlen_k = 128;
  uint64_t seed = 1;
  std::string str() const;
};
HipattnRun run_dense_prefill(const DensePrefillProblem& p, emu::Gfx gfx, bool check, const LaunchOptionsFor& opt = {});
WorkList dense_prefill_work(const DensePrefillProblem& p, emu::Gfx gfx);

// 5. Unified attention (dispatch/unified_attention.hpp) of a ProblemSpec (testing/paged_problem.hpp;
// the scenario table: unified_scenario) with the planner's options, and optionally fp8 queries in the
// cache's fp8 format (problem/fp8_io.hpp; their codes are the 16-bit queries / 48) and an output dtype.
struct UnifiedProblem {
  testing::ProblemSpec spec;
  bool fp8_queries = false;     // queries in spec.kv_dtype (an fp8 type), q_scale 1/48 on the host
  std::optional<DType> out;     // out_format.dtype (unset: the query's 16-bit type)
  UnifiedOptions options = {};  // path / split / pipeline as unified_attention() takes them
  std::string str() const;
};
HipattnRun run_unified(const UnifiedProblem& p, emu::Gfx gfx, bool check, const LaunchOptionsFor& opt = {});
WorkList unified_work(const UnifiedProblem& p, emu::Gfx gfx);
// The scenario table's rows (tests/data/unified_scenarios.hpp: the 13 "default" ones and the
// "serving" ones bench/bench_unified.cu runs), as testing/scenario_spec.hpp's ProblemSpec (16-bit KV).
std::vector<std::string> unified_scenario_names(const std::string& group = "");  // "", "default", "serving"
UnifiedProblem unified_scenario(const std::string& name, uint64_t seed = 1);
// The options that make the dispatcher plan another problem the way it plans `u` on `gfx`: the path
// (2D / 3D), the split (uniform / planned) and the pipeline (skeleton / ping-pong); the tile kind
// follows from the rows (max q_len x group <= 16: the decode tile) and is the caller's to keep. For a
// reduced problem whose per-tile cost stands for u's (small grids alone often go 3D).
UnifiedOptions unified_plan_options(const UnifiedProblem& u, emu::Gfx gfx);

// 2. fp8 prefill through the fp8 matrix path: fp8 queries and KV cache in the target's q8 format
// (e4m3fnuz on gfx942, e4m3fn on gfx950; per-tensor K / V scales), a bf16 output; unified attention's
// q8 instance (kv=<format>_q8). Runs throw if the dispatcher picks another instance.
struct Fp8PrefillProblem {
  int d = 128;
  bool causal = true;
  int batch = 1, heads_q = 8, heads_kv = 8, seqlen_q = 128, seqlen_k = 128;
  int page_size = 16;
  UnifiedOptions options = {};
  uint64_t seed = 1;
  std::string str() const;
};
UnifiedProblem fp8_prefill_unified(const Fp8PrefillProblem& p, emu::Gfx gfx);  // the unified problem it runs
HipattnRun run_fp8_prefill(const Fp8PrefillProblem& p, emu::Gfx gfx, bool check, const LaunchOptionsFor& opt = {});
WorkList fp8_prefill_work(const Fp8PrefillProblem& p, emu::Gfx gfx);

// 3. MLA decode 576 / 512 (dispatch/mla_decode.hpp, the CDNA skeleton instance): 16-bit queries over
// a 16-bit cache or the target's fp8 format (scale on the device); every sequence `ctx` keys, q_len
// query tokens (MTP), pages of page_size slots. The automatic split (one task a sequence, or planned
// task slots: the planner, the kernel and the reduce), or the options' split.
struct MlaDecodeProblem {
  bool bf16 = true;
  bool fp8_kv = false;
  int batch = 1, heads = 16, ctx = 256, q_len = 1, page_size = 64;
  MlaDecodeOptions options = {};  // split (automatic / one_partition / planned) and workgroup budget
  uint64_t seed = 1;
  std::string str() const;
};
HipattnRun run_mla_decode(const MlaDecodeProblem& p, emu::Gfx gfx, bool check, const LaunchOptionsFor& opt = {});
WorkList mla_decode_work(const MlaDecodeProblem& p, emu::Gfx gfx);

// 4. Paged decode (dispatch/paged_decode.hpp): 16-bit KV (NHD), every sequence `ctx` keys, q_len
// query tokens, the automatic plan (one partition, uniform segments and the reduce, or the planner,
// the kernel over its tasks and the reduce), or the options' split.
struct PagedDecodeProblem {
  bool bf16 = true;
  bool fp8_kv = false;  // the cache in the target's fp8 format (EmuTarget::fp8), one scale a tensor
  int batch = 1, heads_q = 64, heads_kv = 8, head_size = 128, ctx = 256, page_size = 16, q_len = 1;
  PagedDecodeOptions options = {};  // split (automatic / one_partition / uniform / planned), segments, budget
  uint64_t seed = 1;
  std::string str() const;
};
HipattnRun run_paged_decode(const PagedDecodeProblem& p, emu::Gfx gfx, bool check, const LaunchOptionsFor& opt = {});
WorkList paged_decode_work(const PagedDecodeProblem& p, emu::Gfx gfx);

}  // namespace hipattn::timing
