// tests/emu/test_emu_unified.cpp: the shipped unified-attention kernels of gfx942 and gfx950, executed
// on the emulator (emu.hpp) and compared with the float64 reference.
//
// The kernels come from the whole dispatch table's code object (tests/isa/dispatch_all.hip); each case
// plans like the dispatcher (dispatch/unified_plan.hpp, with the target's CU count), picks the very
// instance the dispatcher would launch (visit_unified_config, dispatch/unified_launch.hpp), builds its
// arguments and grids with the dispatcher's own builders, and runs the 2D kernel, or the 3D split-KV
// kernel (after the device planner, whose tasks must equal the host plan's, for a planned split) and then
// the reduce (emu_unified.hpp, shared with tests/timing). Problems are tiny (the emulator runs some tens of millions of
// instructions per second), but together they reach every feature: head sizes 64 / 96 / 128 / 192 /
// 256 (96: LDS rows of a 128-element pitch, tile/lds_layout.hpp), both fp8 KV formats with both scale
// modes, sliding window, softcap, ALiBi, QQ-bias, sinks, page sizes 1, 5, 7 and 16, NaN in every
// unowned cache slot (testing/paged_problem.hpp), causal and not, GQA, decode rows next to
// prefill chunks, the decode and prefill tiles, empty sequences; and vLLM's fp8 attention contract
// (problem/fp8_io.hpp, the io_* cases): fp8 queries of both formats with host and device q_scale over
// 16-bit and fp8 caches, 16-bit outputs (the compute dtype), fp8 outputs per tensor and per group (UE8M0,
// a group fp8 max of 224, row- and column-major scales), saturation and NaN; every element decoded
// with the scale it was written with, the kernel's group scales against the reference's.
// Tolerances are the device suites' (tests/device/test_unified_attention.cu, test_fp8_io.cu).
//
// Code objects: $HIPATTN_EMU_DISPATCH_GFX942 / $HIPATTN_EMU_DISPATCH_GFX950 (each test skips, saying
// so, when its variable is unset).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/loader_policies.hpp"
#include "../../testing/paged_problem.hpp"
#include "../common/random_spec.hpp"
#include "emu.hpp"
#include "emu_dispatch.hpp"
#include "emu_unified.hpp"
#include "hipattn/dispatch/unified_launch.hpp"
#include "hipattn/dispatch/unified_plan.hpp"
#include "hipattn/problem/unified_rules.hpp"
#include "hipattn/reference/reference.hpp"

namespace hipattn::testing {
namespace {

// ---- the device and its code object ----

using namespace emu_dispatch;
using namespace emu_unified;
const EmuTarget kGfx942{emu::Gfx::gfx942, Target::gfx942, 304, DType::fp8_e4m3fnuz, "HIPATTN_EMU_DISPATCH_GFX942"};
const EmuTarget kGfx950{emu::Gfx::gfx950, Target::gfx950, 256, DType::fp8_e4m3fn, "HIPATTN_EMU_DISPATCH_GFX950"};

// The dispatch table's code object of a target (null, with the reason, when the environment names none).
std::shared_ptr<const emu::CodeObject> dispatch_code_object(const EmuTarget& t, std::string& why) {
  return env_code_object(t, "hipattn_isa_dispatch_all", why);
}

// ---- the cases ----

struct Case {
  const char* name;
  ProblemSpec spec;
  std::vector<UnifiedPath> paths = {UnifiedPath::two_d, UnifiedPath::three_d};
  int segments = 0;  // 3D: forced segment count (0: the planner's)
  std::optional<CopyModel> kv_copy = std::nullopt;  // the plan's KV loader policy replaced
  UnifiedSplit split = UnifiedSplit::automatic;     // 3D: uniform segments or the device planner's tasks
  IoSpec io = {};          // fp8 queries and the output format (problem/fp8_io.hpp); default: 16-bit
  bool nan_value = false;  // a NaN at column 5 of the value of key 3 of sequence 0, kv head 0
  // The targets whose dispatcher must pick the fp8 matrix path (a q8 instance: bit 0 gfx942's
  // e4m3fnuz_q8, bit 1 gfx950's e4m3fn_q8); every other run must not.
  int q8_on = 0;
  // Whether gfx950's forced-2D runs must take the ping-pong schedule (dispatch/unified_plan.hpp
  // unified_pingpong_refusal, unified_pingpong_preferred), written here from the rule, not asked of
  // the planner; every other run must not (unset: not checked, the random cases).
  std::optional<bool> pingpong = false;
  // gfx950's 2D runs ask for the ping-pong (UnifiedOptions::pipeline; the automatic plan takes it at
  // d = 256 only)
  bool force_pingpong = false;
};

// A NaN in the value row of key 3 of sequence 0 (kv head 0, column 5): every row of that sequence
// sees the key (it needs >= 4 keys and no window that hides key 3), so column 5 of its heads of kv
// head 0 is NaN in the reference and must be NaN in any output format (a group's scale ignores it).
void put_nan_value(HostProblem& h) {
  const int bs = h.spec.block_size;
  const int blk = h.block_table[3 / bs], slot = 3 % bs;
  const int64_t idx = blk * h.stride_block + slot * h.stride_slot + 5;
  switch (h.spec.kv_dtype) {
    case DType::fp8_e4m3fn: h.v_cache[size_t(idx)] = 0x7F; break;
    case DType::fp8_e4m3fnuz: h.v_cache[size_t(idx)] = 0x80; break;
    default: h.v_cache[size_t(idx) * 2] = 0xFF, h.v_cache[size_t(idx) * 2 + 1] = 0xFF;
  }
}

ProblemSpec base_spec(bool bf16, int d, int block_size, std::vector<std::pair<int, int>> seqs, uint64_t seed) {
  ProblemSpec s;
  s.bf16 = bf16;
  s.kv_dtype = bf16 ? DType::bf16 : DType::f16;
  s.num_q_heads = 4;
  s.num_kv_heads = 2;  // GQA, group 2
  s.head_size = d;
  s.block_size = block_size;
  s.seqs = std::move(seqs);
  s.seed = seed;
  return s;
}

// Ragged batches mixing decode rows, prefill chunks and empty rows, features on and off: the device
// suite's generator (tests/common/random_spec.hpp) with q lengths <= 24 and kv lengths <= 160, since
// the emulator runs a few million instructions a second.
ProblemSpec small_random_spec(uint64_t seed) {
  RandomSizes z;
  z.max_seqs = 4;
  z.max_prefill_q = 24;
  z.max_extra_keys = 136;
  z.page_sizes = {1, 5, 16, 16, 32, 64};
  z.qq_bias_stride = 32;
  return random_spec(seed, z);
}

// A case whose gfx950 2D runs take the ping-pong (16-bit, d = 128 or 256, plain variant, prefill
// tile): on their own at d = 256, asked for at d = 128.
Case pp_case(Case c) {
  c.pingpong = true;
  c.force_pingpong = c.spec.head_size == 128;
  return c;
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  // head sizes x page sizes, a decode row next to a prefill chunk (decode tile: 6 x 2 rows <= 16)
  v.push_back({"d64_bf16_page16", base_spec(true, 64, 16, {{1, 37}, {6, 29}}, 11)});
  v.push_back({"d128_f16_page1", base_spec(false, 128, 1, {{1, 19}, {5, 12}}, 12)});
  v.push_back({"d256_bf16_page5", base_spec(true, 256, 5, {{1, 33}, {4, 21}}, 13)});
  // prefill tiles (9 tokens x group 2 = 18 rows > 16), every head size
  v.push_back({"d64_f16_prefill_tile", base_spec(false, 64, 16, {{9, 40}, {1, 17}}, 14)});
  v.push_back(pp_case({"d128_bf16_prefill_tile_page5", base_spec(true, 128, 5, {{9, 30}, {1, 11}}, 15)}));
  v.push_back(pp_case({"d256_f16_prefill_tile", base_spec(false, 256, 16, {{9, 26}, {1, 9}}, 16)}));
  // head 192 (24 chunks a row: the loader's moving-column mapping), decode and prefill tiles, fp8
  v.push_back({"d192_bf16_page16", base_spec(true, 192, 16, {{1, 35}, {5, 23}}, 18)});
  v.push_back({"d192_f16_prefill_tile_page5", base_spec(false, 192, 5, {{9, 28}, {1, 13}}, 19)});
  {
    ProblemSpec s = base_spec(true, 192, 16, {{1, 30}, {4, 19}}, 20);
    s.kv_dtype = DType::fp8_e4m3fnuz;
    s.scale_mode = KvScaleMode::per_token_head;
    v.push_back({"d192_fp8_e4m3fnuz_per_token_head", s});
  }
  // head 96 (Phi-3 class: 12 chunks a row, 6 for fp8, in LDS rows of a 128-element pitch; the
  // loader's moving-column mapping), decode and prefill tiles, both fp8 formats, a forced 3D split
  v.push_back({"d96_bf16_page16", base_spec(true, 96, 16, {{1, 35}, {5, 23}}, 61)});
  v.push_back({"d96_f16_prefill_tile_page5", base_spec(false, 96, 5, {{9, 28}, {1, 13}}, 62)});
  {
    ProblemSpec s = base_spec(true, 96, 16, {{1, 30}, {4, 19}}, 63);
    s.kv_dtype = DType::fp8_e4m3fnuz;
    s.scale_mode = KvScaleMode::per_token_head;
    v.push_back({"d96_fp8_e4m3fnuz_per_token_head", s});
  }
  {
    ProblemSpec s = base_spec(false, 96, 7, {{10, 31}, {1, 22}}, 64);
    s.kv_dtype = DType::fp8_e4m3fn;
    s.scale_mode = KvScaleMode::per_tensor;
    s.window_left = 11;
    s.sinks = true;
    v.push_back({"d96_fp8_e4m3fn_prefill_tile_window", s});
  }
  {
    ProblemSpec s = base_spec(true, 96, 16, {{1, 70}, {1, 9}, {1, 41}}, 65);
    s.num_q_heads = 6;  // group 3
    Case c{"d96_bf16_group3_decode_only_3seg", s};
    c.segments = 3;
    v.push_back(c);
  }
  // gfx950's register-staged fallback of its LDS-DMA instances (16-bit caches beyond the DMA
  // loader's 4 GiB buffer range: unified_kv_copy), forced on small problems; on gfx942 it is the
  // default anyway
  {
    Case c{"d64_bf16_page16_staged_fallback", base_spec(true, 64, 16, {{1, 37}, {6, 29}}, 71)};
    c.kv_copy = CopyModel::register_staged;
    v.push_back(c);
  }
  {
    Case c{"d64_f16_prefill_tile_staged_fallback", base_spec(false, 64, 5, {{9, 28}, {1, 13}}, 72)};
    c.kv_copy = CopyModel::register_staged;
    v.push_back(c);
  }
  {
    ProblemSpec s = base_spec(true, 128, 16, {{1, 39}, {5, 26}}, 73);
    s.sinks = true;
    s.window_left = 9;
    s.softcap = 15.f;
    Case c{"d128_full_staged_fallback", s};
    c.kv_copy = CopyModel::register_staged;
    v.push_back(c);
  }
  // pure decode, planned 3D (the device planner's tasks: kernels/common/task_plan.hpp): a long
  // sequence split over many tasks next to one-task sequences written directly, an empty context, a
  // one-key context; then fp8 with per-(token, head) scales, sinks and a window (only the window's
  // tiles planned)
  {
    Case c{"d128_bf16_decode_planned_mixed", base_spec(true, 128, 16, {{1, 300}, {1, 9}, {1, 0}, {1, 77}, {1, 1}}, 91)};
    c.paths = {UnifiedPath::two_d, UnifiedPath::three_d};
    c.split = UnifiedSplit::planned;
    v.push_back(c);
  }
  {
    ProblemSpec s = base_spec(false, 64, 5, {{1, 200}, {1, 33}, {1, 0}}, 92);
    s.kv_dtype = DType::fp8_e4m3fnuz;
    s.scale_mode = KvScaleMode::per_token_head;
    s.sinks = true;
    s.window_left = 40;
    Case c{"d64_fp8_decode_planned_window_sinks", s};
    c.paths = {UnifiedPath::two_d, UnifiedPath::three_d};
    c.split = UnifiedSplit::planned;
    v.push_back(c);
  }
  // pure decode (the decode grid: one q-block per sequence), 3D with 3 forced segments
  {
    Case c{"d128_bf16_decode_only_3seg", base_spec(true, 128, 16, {{1, 40}, {1, 9}}, 17)};
    c.segments = 3;
    v.push_back(c);
  }
  // fp8 KV: both formats x both scale modes
  {
    ProblemSpec s = base_spec(false, 128, 16, {{1, 35}, {5, 22}}, 21);
    s.kv_dtype = DType::fp8_e4m3fn;
    s.scale_mode = KvScaleMode::per_tensor;
    v.push_back({"fp8_e4m3fn_per_tensor", s});
  }
  {
    ProblemSpec s = base_spec(true, 128, 5, {{1, 27}, {6, 31}}, 22);
    s.kv_dtype = DType::fp8_e4m3fn;
    s.scale_mode = KvScaleMode::per_token_head;
    v.push_back({"fp8_e4m3fn_per_token_head", s});
  }
  {
    ProblemSpec s = base_spec(true, 64, 16, {{1, 38}, {4, 20}}, 23);
    s.kv_dtype = DType::fp8_e4m3fnuz;
    s.scale_mode = KvScaleMode::per_tensor;
    v.push_back({"fp8_e4m3fnuz_per_tensor", s});
  }
  {
    ProblemSpec s = base_spec(false, 256, 1, {{1, 18}, {5, 14}}, 24);
    s.kv_dtype = DType::fp8_e4m3fnuz;
    s.scale_mode = KvScaleMode::per_token_head;
    v.push_back({"fp8_e4m3fnuz_per_token_head", s});
  }
  // logit features (the full variant): softcap, ALiBi, QQ-bias, sinks, sliding window
  {
    ProblemSpec s = base_spec(false, 128, 16, {{1, 36}, {6, 27}}, 31);
    s.softcap = 20.f;
    v.push_back({"softcap", s});
  }
  {
    ProblemSpec s = base_spec(true, 64, 5, {{1, 33}, {5, 24}}, 32);
    s.alibi = true;
    v.push_back({"alibi", s});
  }
  {
    ProblemSpec s = base_spec(false, 128, 16, {{1, 21}, {6, 30}}, 33);
    s.qq_bias = true;
    s.qq_bias_stride = 8;
    v.push_back({"qq_bias", s});
  }
  {
    ProblemSpec s = base_spec(true, 128, 16, {{1, 39}, {5, 26}}, 34);
    s.sinks = true;
    s.window_left = 9;
    v.push_back({"sinks_window", s});
  }
  {
    ProblemSpec s = base_spec(true, 256, 16, {{1, 30}, {9, 33}}, 35);
    s.softcap = 20.f;
    s.alibi = true;
    s.qq_bias = true;
    s.qq_bias_stride = 12;
    s.sinks = true;
    s.window_left = 13;
    s.kv_dtype = DType::fp8_e4m3fn;
    s.scale_mode = KvScaleMode::per_token_head;
    v.push_back({"all_features_fp8_prefill_tile", s});
  }
  // not causal, an empty sequence and a query with no key
  {
    ProblemSpec s = base_spec(false, 64, 16, {{1, 23}, {0, 7}, {4, 2}, {3, 0}}, 41);
    s.causal = false;
    s.sinks = true;
    v.push_back({"non_causal_empty_rows", s});
  }
  // larger shapes (cheap: the emulator runs them in well under a second): several q-blocks per
  // sequence, two head chunks (group 64 > the d=256 prefill tile's 32 rows), long contexts split over
  // many segments, the HND cache layout
  v.push_back(pp_case({"d128_bf16_prefill_multi_qblock", base_spec(true, 128, 16, {{70, 120}, {1, 50}, {33, 33}}, 51)}));
  {
    ProblemSpec s = base_spec(false, 256, 16, {{1, 150}, {2, 61}}, 52);
    s.num_q_heads = 64;
    s.num_kv_heads = 1;
    s.sinks = true;
    v.push_back(pp_case({"d256_f16_group64_head_chunks", s}));
  }
  {
    ProblemSpec s = base_spec(true, 128, 16, {{1, 300}, {3, 181}, {1, 77}}, 53);
    s.num_q_heads = 16;
    s.kv_dtype = DType::fp8_e4m3fnuz;
    s.scale_mode = KvScaleMode::per_token_head;
    Case c{"d128_fp8_group8_long_7seg", s};
    c.segments = 7;
    v.push_back(c);
  }
  {
    ProblemSpec s = base_spec(false, 256, 5, {{1, 90}, {12, 64}}, 54);
    s.hnd = true;
    s.window_left = 40;
    v.push_back(pp_case({"d256_f16_hnd_window", s}));
  }
  // gfx950's ping-pong schedule on unified attention's prefill q-blocks (kernels/common/
  // pingpong_mainloop.hpp; 128-row q-blocks of eight waves, 32-key tiles): GQA 4 with several q-blocks
  // and a sequence with no query; pages of 7 slots (a tile spans pages) with a window, sinks and LSE;
  // pages of one slot, not causal, a query with no key; a long context (13 tiles: the block ids read
  // a tile ahead through a ring of two); a forced 3D path beside it (the skeleton's, for agreement);
  // d = 128 asks for it (pp_case), d = 256 takes it automatically
  {
    ProblemSpec s = base_spec(true, 128, 16, {{40, 100}, {1, 33}, {0, 12}, {25, 25}}, 301);
    s.num_q_heads = 16;
    s.num_kv_heads = 4;
    v.push_back(pp_case({"pp_d128_bf16_gqa4_multi", s}));
  }
  {
    ProblemSpec s = base_spec(false, 128, 7, {{33, 90}, {17, 17}}, 302);
    s.window_left = 30;
    s.sinks = true;
    v.push_back(pp_case({"pp_d128_f16_page7_window_sinks", s}));
  }
  {
    ProblemSpec s = base_spec(true, 256, 1, {{20, 70}, {3, 0}, {5, 9}}, 303);
    s.causal = false;
    v.push_back(pp_case({"pp_d256_bf16_page1_noncausal", s}));
  }
  {
    ProblemSpec s = base_spec(false, 128, 16, {{16, 400}, {8, 8}}, 304);
    s.num_q_heads = 8;  // group 4: 64 rows of the first sequence's one q-block
    v.push_back(pp_case({"pp_d128_f16_long_context", s}));
  }
  {
    ProblemSpec s = base_spec(true, 256, 5, {{12, 80}, {7, 40}}, 305);
    s.softcap = 25.f;  // the full variant keeps the skeleton's tile
    s.alibi = true;
    s.window_left = 50;
    v.push_back({"pp_refused_d256_full_variant", s});
  }
  {
    ProblemSpec s = base_spec(true, 128, 16, {{12, 60}, {9, 30}}, 306);
    s.softcap = 25.f;  // d = 128 with softcap: the skeleton's tile
    v.push_back({"pp_refused_d128_softcap", s});
  }
  // d = 128, plain, prefill tile, not asked for: the automatic plan keeps the skeleton's tile
  v.push_back({"pp_auto_d128_skeleton", base_spec(false, 128, 16, {{20, 60}, {7, 7}}, 307)});
  // fp8 queries and fp8 outputs (problem/fp8_io.hpp, vLLM's fp8 attention contract): both query
  // formats with host and device q_scale over 16-bit and fp8 caches (the instance's 16-bit type:
  // compute_dtype, also the type of a 16-bit output), fp8 outputs per tensor (both formats, host and
  // device scale) and per group (16, 32, 64, 128; UE8M0; e4m3fnuz with vLLM's ROCm max 224; row- and
  // column-major scales; head sizes 64 to 256), saturation, a NaN kept NaN. 2D (the attention epilogue) and 3D with 3
  // uniform segments (the reduce); a pure decode batch planned (one-task sequences stored by the 3D
  // kernel's epilogue, the others by the reduce).
  auto io_case = [&](const char* name, ProblemSpec s, IoSpec io, bool nan_value = false, int q8_on = 0) {
    Case c{name, s};
    c.io = io;
    c.nan_value = nan_value;
    c.q8_on = q8_on;
    c.segments = 3;
    c.split = UnifiedSplit::uniform;
    v.push_back(c);
  };
  {
    // e4m3fn queries (device scale) over a bf16 cache: the bf16 instance, a bf16 output; sinks
    ProblemSpec s = base_spec(true, 128, 16, {{1, 37}, {6, 29}}, 201);
    s.sinks = true;
    io_case("io_q_e4m3fn_bf16kv_out_bf16", s, {.q = DType::fp8_e4m3fn, .device_q_scale = true, .out = DType::bf16});
  }
  {
    // e4m3fnuz queries (host scale) over an e4m3fn cache (per-(token, head) scales): the fp16
    // instance; an e4m3fn output with a device per-tensor scale
    ProblemSpec s = base_spec(false, 64, 5, {{1, 33}, {5, 24}}, 202);
    s.kv_dtype = DType::fp8_e4m3fn;
    s.scale_mode = KvScaleMode::per_token_head;
    io_case("io_q_e4m3fnuz_fp8kv_out_e4m3fn_tensor", s,
            {.q = DType::fp8_e4m3fnuz, .out = DType::fp8_e4m3fn, .device_out_scale = true});
  }
  {
    // e4m3fn queries (host scale) over an fp16 cache, the prefill tile (9 tokens x group 2 rows), d 96;
    // an e4m3fnuz output with a host per-tensor scale; a window
    ProblemSpec s = base_spec(false, 96, 7, {{9, 30}, {1, 11}}, 203);
    s.window_left = 20;
    io_case("io_q_e4m3fn_f16kv_prefill_out_e4m3fnuz_tensor", s, {.q = DType::fp8_e4m3fn, .out = DType::fp8_e4m3fnuz});
  }
  {
    // bf16 queries, an e4m3fn output in groups of 64 (row-major scales), softcap
    ProblemSpec s = base_spec(true, 128, 16, {{1, 36}, {6, 27}}, 204);
    s.softcap = 20.f;
    io_case("io_bf16_out_e4m3fn_group64", s, {.out = DType::fp8_e4m3fn, .group = 64});
  }
  {
    // e4m3fn queries (device scale) over an e4m3fnuz cache (per tensor), d 256, the prefill tile; an
    // e4m3fn output in groups of 32, UE8M0 scales, column-major
    ProblemSpec s = base_spec(false, 256, 16, {{9, 26}, {1, 9}}, 205);
    s.kv_dtype = DType::fp8_e4m3fnuz;
    s.scale_mode = KvScaleMode::per_tensor;
    io_case("io_q_e4m3fn_fp8kv_out_e4m3fn_group32_ue8m0", s,
            {.q = DType::fp8_e4m3fn, .device_q_scale = true, .out = DType::fp8_e4m3fn, .group = 32, .ue8m0 = true,
             .col_major_scales = true},
            false, 1);  // gfx942: the fp8 matrix path, the queries re-encoded as fnuz codes of half their value
  }
  {
    // fp16 queries, an e4m3fnuz output in groups of 32 with fp8_max 224 (vLLM's ROCm value), the
    // prefill tile, ALiBi and sinks
    ProblemSpec s = base_spec(false, 64, 16, {{9, 40}, {1, 17}}, 206);
    s.alibi = true;
    s.sinks = true;
    io_case("io_f16_out_e4m3fnuz_group32_max224", s, {.out = DType::fp8_e4m3fnuz, .group = 32, .group_max = 224.f});
  }
  {
    // saturation: a per-tensor scale of 1/2048 (|O| above ~0.2 saturates to +-448) with e4m3fn
    // queries (device scale); a NaN value element stays NaN
    ProblemSpec s = base_spec(true, 64, 16, {{5, 40}, {1, 23}}, 207);
    io_case("io_saturate_nan_out_e4m3fn_tensor", s,
            {.q = DType::fp8_e4m3fn, .device_q_scale = true, .out = DType::fp8_e4m3fn, .device_out_scale = true,
             .out_scale = 1.f / 2048.f, .saturates = true},
            true);
  }
  {
    // the NaN value element in an e4m3fnuz output per group of 64 (the group's scale ignores the NaN;
    // the element is e4m3fnuz's NaN 0x80), e4m3fnuz queries (device scale) over an fp16 cache
    ProblemSpec s = base_spec(false, 128, 5, {{4, 38}, {1, 20}}, 208);
    io_case("io_nan_q_e4m3fnuz_out_e4m3fnuz_group64", s,
            {.q = DType::fp8_e4m3fnuz, .device_q_scale = true, .out = DType::fp8_e4m3fnuz, .group = 64}, true);
  }
  {
    // group 16 (the reduce's maximum over 4 lanes) at d 96 (6 groups a head), the prefill tile:
    // e4m3fnuz queries (device scale) over an e4m3fnuz cache (per tensor), an e4m3fn output
    ProblemSpec s = base_spec(false, 96, 16, {{9, 28}, {1, 13}}, 210);
    s.kv_dtype = DType::fp8_e4m3fnuz;
    s.scale_mode = KvScaleMode::per_tensor;
    io_case("io_d96_q_e4m3fnuz_fp8kv_out_e4m3fn_group16", s,
            {.q = DType::fp8_e4m3fnuz, .device_q_scale = true, .out = DType::fp8_e4m3fn, .group = 16}, false, 1);
  }
  {
    // d 192 (3 groups of 64 a head), bf16, an e4m3fnuz output, UE8M0 scales, column-major
    ProblemSpec s = base_spec(true, 192, 16, {{1, 35}, {5, 23}}, 211);
    io_case("io_d192_bf16_out_e4m3fnuz_group64_ue8m0", s,
            {.out = DType::fp8_e4m3fnuz, .group = 64, .ue8m0 = true, .col_major_scales = true});
  }
  {
    // gfx950's ping-pong epilogue (2D): an e4m3fn output in groups of 64, bf16, the prefill tile
    ProblemSpec s = base_spec(true, 128, 16, {{20, 52}, {9, 33}}, 213);
    s.sinks = true;
    io_case("io_pp_d128_bf16_out_e4m3fn_group64", s, {.out = DType::fp8_e4m3fn, .group = 64});
    v.back().pingpong = true;
    v.back().force_pingpong = true;
  }
  {
    // group 128 (one group a head: the reduce's maximum over 32 lanes), fp16, sinks and a window
    ProblemSpec s = base_spec(false, 128, 16, {{1, 39}, {5, 26}}, 212);
    s.sinks = true;
    s.window_left = 9;
    io_case("io_d128_f16_out_e4m3fn_group128", s, {.out = DType::fp8_e4m3fn, .group = 128});
  }
  {
    // pure decode, planned 3D: e4m3fn queries over an e4m3fn cache (per-(token, head) scales), an
    // e4m3fn output in groups of 32, column-major scales
    ProblemSpec s = base_spec(true, 128, 16, {{1, 300}, {1, 9}, {1, 0}, {1, 77}}, 209);
    s.bf16 = false;
    s.kv_dtype = DType::fp8_e4m3fn;
    s.scale_mode = KvScaleMode::per_token_head;
    Case c{"io_decode_planned_q_e4m3fn_out_e4m3fn_group32", s};
    c.io = {.q = DType::fp8_e4m3fn, .out = DType::fp8_e4m3fn, .group = 32, .col_major_scales = true};
    c.split = UnifiedSplit::planned;
    c.q8_on = 2;
    v.push_back(c);
  }
  // The fp8 matrix path (issue 13: numeric/kv_kind.hpp's q8 kinds): fp8 queries and cache in
  // the format the target's fp8 MFMA reads, QK^T on the codes (cdna3/warp_tile.hpp), P V in 16-bit.
  // Head sizes 64 to 256 (96: the last 32-column step of 8-byte reads), Q in registers (decode tile,
  // d <= 128) and read from LDS (prefill tile, d > 128), e4m3fn queries over an e4m3fnuz cache on
  // gfx942 (re-encoded, 2 into the score scale), every feature, 16-bit outputs of both types.
  {
    // e4m3fn over e4m3fn (gfx950), decode tile, d 64, host q scale, per-tensor K / V scales, f16 out
    ProblemSpec s = base_spec(false, 64, 16, {{1, 45}, {2, 30}}, 221);
    s.kv_dtype = DType::fp8_e4m3fn;
    s.scale_mode = KvScaleMode::per_tensor;
    io_case("io_q8_fn_d64_decode", s, {.q = DType::fp8_e4m3fn, .out = DType::f16}, false, 2);
  }
  {
    // e4m3fnuz over e4m3fnuz (gfx942), the prefill tile, d 128, per-(token, head) scales, softcap,
    // ALiBi, a window, sinks, device q scale, bf16 out
    ProblemSpec s = base_spec(true, 128, 16, {{9, 40}, {1, 19}}, 222);
    s.kv_dtype = DType::fp8_e4m3fnuz;
    s.scale_mode = KvScaleMode::per_token_head;
    s.softcap = 15.f;
    s.alibi = true;
    s.sinks = true;
    s.window_left = 24;
    io_case("io_q8_fnuz_d128_prefill_full", s, {.q = DType::fp8_e4m3fnuz, .device_q_scale = true, .out = DType::bf16},
            false, 1);
  }
  {
    // e4m3fn over e4m3fn (gfx950), the prefill tile, d 256 (Q read from LDS), an e4m3fn output per
    // group of 64
    ProblemSpec s = base_spec(false, 256, 16, {{9, 26}, {1, 12}}, 223);
    s.kv_dtype = DType::fp8_e4m3fn;
    s.scale_mode = KvScaleMode::per_tensor;
    io_case("io_q8_fn_d256_prefill_group64", s, {.q = DType::fp8_e4m3fn, .out = DType::fp8_e4m3fn, .group = 64},
            false, 2);
  }
  {
    // e4m3fn over e4m3fnuz (gfx942: re-encoded queries), decode tile, d 192, f16 out
    ProblemSpec s = base_spec(false, 192, 5, {{1, 33}, {1, 21}}, 224);
    s.kv_dtype = DType::fp8_e4m3fnuz;
    s.scale_mode = KvScaleMode::per_tensor;
    io_case("io_q8_fn_over_fnuz_d192_decode", s, {.q = DType::fp8_e4m3fn, .device_q_scale = true, .out = DType::f16},
            false, 1);
  }
  {
    // e4m3fn over e4m3fn (gfx950), d 96 (the 8-byte last step), the prefill tile, bf16 out
    ProblemSpec s = base_spec(true, 96, 16, {{9, 29}, {1, 14}}, 225);
    s.kv_dtype = DType::fp8_e4m3fn;
    s.scale_mode = KvScaleMode::per_token_head;
    io_case("io_q8_fn_d96_prefill", s, {.q = DType::fp8_e4m3fn, .out = DType::bf16}, false, 2);
  }
  // a seeded random sweep (the device suite's generator at emulator sizes): every path
  for (int i = 0; i < 8; ++i) {
    static const char* const names[] = {"random0", "random1", "random2", "random3",
                                        "random4", "random5", "random6", "random7"};
    Case c{names[i], small_random_spec(88000 + i)};
    c.paths = {UnifiedPath::automatic, UnifiedPath::two_d, UnifiedPath::three_d};
    c.pingpong = std::nullopt;
    v.push_back(c);
  }
  return v;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = all_cases();
  return c;
}

std::string describe(const ProblemSpec& s) {
  std::string seqs;
  for (auto [q, k] : s.seqs) seqs += (seqs.empty() ? "" : ",") + std::to_string(q) + "/" + std::to_string(k);
  std::string d = std::string(s.bf16 ? "bf16" : "f16") + " kv=" + std::string(dtype_name(s.kv_dtype));
  if (is_fp8(s.kv_dtype)) d += s.scale_mode == KvScaleMode::per_tensor ? "(per-tensor)" : "(per-token-head)";
  d += " d=" + std::to_string(s.head_size) + " heads=" + std::to_string(s.num_q_heads) + "/" +
       std::to_string(s.num_kv_heads) + " page=" + std::to_string(s.block_size) + (s.hnd ? " HND" : "") +
       " q/kv=" + seqs + (s.causal ? " causal" : " non-causal");
  if (s.window_left >= 0) d += " window=" + std::to_string(s.window_left);
  if (s.softcap > 0) d += " softcap";
  if (s.alibi) d += " alibi";
  if (s.qq_bias) d += " qq-bias";
  if (s.sinks) d += " sinks";
  return d;
}

const char* path_name(UnifiedPath p) { return p == UnifiedPath::two_d ? "2d" : p == UnifiedPath::three_d ? "3d" : "auto"; }

struct Param {
  const EmuTarget* target;
  int index;
};

void PrintTo(const Param& p, std::ostream* os) { *os << emu::gfx_name(p.target->gfx) << " " << cases()[p.index].name; }

class EmuUnified : public ::testing::TestWithParam<Param> {};

TEST_P(EmuUnified, MatchesReference) {
  const Param prm = GetParam();
  const EmuTarget& t = *prm.target;
  const Case& c = cases()[prm.index];
  std::string why;
  const auto co = dispatch_code_object(t, why);
  if (!co) GTEST_SKIP() << why;
  HostProblem h(c.spec);
  if (c.nan_value) put_nan_value(h);
  const IoHost io(c.io, h.spec.bf16, h.spec.kv_dtype, h.num_tokens, h.spec.num_q_heads, h.spec.head_size, h.q);
  const reference::AttentionResult ref = io_reference(h, io);
  EmuProblem ep(h, io);
  const bool io_case = is_fp8(c.io.q) || c.io.out.has_value();
  std::printf("  %-7s %-32s %s%s%s\n", emu::gfx_name(t.gfx), c.name, describe(c.spec).c_str(),
              io_case ? (" " + io.describe()).c_str() : "", c.nan_value ? " NaN value" : "");
  IoStats outs[2];
  int k = 0;
  for (UnifiedPath path : c.paths) {
    SCOPED_TRACE(std::string(emu::gfx_name(t.gfx)) + " " + c.name + " path=" + path_name(path));
    RunResult r;
    try {
      const bool force_pp = c.force_pingpong && t.target == Target::gfx950 && path == UnifiedPath::two_d;
      r = run_on_emulator(*co, t, ep, path, path == UnifiedPath::three_d ? c.segments : 0, c.kv_copy,
                          path == UnifiedPath::three_d ? c.split : UnifiedSplit::automatic,
                          force_pp ? UnifiedPipeline::pingpong : UnifiedPipeline::automatic);
    } catch (const emu::Error& e) {
      ADD_FAILURE() << "emulator " << emu::kind_name(e.kind) << ": " << e.what();
      continue;
    }
    // the fp8 matrix path exactly where the case says (the kernel's name: kv=e4m3fn_q8 / kv=e4m3fnuz_q8)
    const bool q8_want = (c.q8_on >> (t.target == Target::gfx950 ? 1 : 0)) & 1;
    const bool q8_ran = r.kernel.find(std::string(" kv=") + kv_kind_name(KvKind::e4m3fn_q8) + " ") != std::string::npos ||
                        r.kernel.find(std::string(" kv=") + kv_kind_name(KvKind::e4m3fnuz_q8) + " ") != std::string::npos;
    EXPECT_EQ(q8_ran, q8_want) << "fp8 matrix path: " << r.kernel;
    // the ping-pong exactly where the case says (gfx950, forced 2D)
    const bool pp_ran = r.kernel.find(" mainloop=pingpong ") != std::string::npos;
    if (c.pingpong) {
      const bool pp_want = *c.pingpong && t.target == Target::gfx950 && path == UnifiedPath::two_d;
      EXPECT_EQ(pp_ran, pp_want) << "ping-pong schedule: " << r.kernel;
    }
    EXPECT_TRUE(r.plan_mismatch.empty()) << r.plan_mismatch;
    IoStats st = compare(h, io, ref, r);
    EXPECT_EQ(st.bad, 0) << st.bad << " of " << st.checked << " checks failed; first: " << st.first_bad << " ["
                         << r.kernel << "]";
    if (c.nan_value) {
      EXPECT_GT(st.nan, 0) << "the NaN value element reaches the output";
    }
    if (c.io.saturates) {
      EXPECT_GT(st.saturated, 0) << "some elements exceed the format's range";
    }
    std::printf("  %-7s %-32s %-2s %-22s max|err| out %.2e lse %.2e  %9llu instr %6.2f s", emu::gfx_name(t.gfx), c.name,
                path_name(path), r.plan.c_str(), st.max_abs, st.max_lse, static_cast<unsigned long long>(r.instructions),
                r.seconds);
    if (io.fp8_out())
      std::printf("  (%lld group scales, %lld saturated, %lld NaN)", static_cast<long long>(st.scales),
                  static_cast<long long>(st.saturated), static_cast<long long>(st.nan));
    std::printf("\n");
    if (path != UnifiedPath::automatic && k < 2) outs[k++] = std::move(st);
  }
  // 2D and 3D compute the same function in another order: they agree within the dtype's rounding.
  if (k == 2) {
    const int64_t disagree = io_disagreements(io, outs[0], outs[1]);
    EXPECT_EQ(disagree, 0) << c.name << ": 2D and 3D outputs differ beyond rounding";
  }
}

std::vector<Param> all_params(const EmuTarget& t) {
  std::vector<Param> v;
  for (int i = 0; i < int(cases().size()); ++i) v.push_back({&t, i});
  return v;
}
std::string param_name(const ::testing::TestParamInfo<Param>& i) { return cases()[i.param.index].name; }

INSTANTIATE_TEST_SUITE_P(Gfx942, EmuUnified, ::testing::ValuesIn(all_params(kGfx942)), param_name);
INSTANTIATE_TEST_SUITE_P(Gfx950, EmuUnified, ::testing::ValuesIn(all_params(kGfx950)), param_name);

// The instance names the tests look for are the ones the code object holds: every kernel of the
// dispatch table is found exactly once (CodeObject::find throws on none or several).
// Calls f.template operator()<Cfg>(tile, fp8) for the configuration of every (q dtype, KV kind,
// variant, head size, tile kind) of the dispatch table on target t.
template <class F>
void for_each_dispatch_config(const EmuTarget& t, F&& f) {
  for_each_table_entry(t.target, [&](const TableEntry& e) {
    UnifiedAttentionParams p;
    set_entry_dtypes(p, e, t.target);
    p.softcap = e.full ? 10.f : 0.f;
    p.head_size = e.d;
    UnifiedPlan plan;
    plan.tile_kind = e.kind;
    plan.kv_copy = e.kv_copy;
    visit_target_config(t.target, p, plan, [&]<class Cfg>() { f.template operator()<Cfg>(e.tile, e.fp8); });
  });
}
// The number of configurations for_each_dispatch_config visits on t.
int dispatch_configs(const EmuTarget& t) { return for_each_table_entry(t.target, [](const TableEntry&) {}); }

// Calls f.template operator()<Cfg>(tile) for gfx950's ping-pong instances (PlanPipeline::pingpong: q dtype x
// head size x variant where unified_pingpong_head holds; their 2D kernel only); returns how many.
template <class F>
int for_each_pingpong_config(F&& f) {
  int n = 0;
  for (DType q : {DType::f16, DType::bf16})
    for (bool full : {false, true})
      for (int d : UnifiedInstanceTable::head_sizes) {
        if (!unified_pingpong_head(d, full)) continue;
        UnifiedAttentionParams p;
        p.q_dtype = p.kv_dtype = q;
        p.softcap = full ? 10.f : 0.f;
        p.head_size = d;
        UnifiedPlan plan;
        plan.tile_kind = UnifiedTileKind::prefill;
        plan.pipeline = PlanPipeline::pingpong;
        bool visited = false;
        visit_target_config(Target::gfx950, p, plan, [&]<class Cfg>() {
          if constexpr (pingpong_schedule<Cfg>()) {
            f.template operator()<Cfg>(gfx950_pingpong_tile(d));
            visited = true;
          }
        });
        EXPECT_TRUE(visited) << "d " << d << ": the plan's ping-pong visited another instance";
        ++n;
      }
  return n;
}

TEST(EmuUnifiedNames, EveryDispatchedInstanceIsInTheCodeObject) {
  for (const EmuTarget* t : {&kGfx942, &kGfx950}) {
    std::string why;
    const auto co = dispatch_code_object(*t, why);
    if (!co) GTEST_SKIP() << why;
    int found = 0;
    for_each_dispatch_config(*t, [&]<class Cfg>(const UnifiedTile&, bool) {
      for (const auto& manifest : {kernel_2d_manifest<Cfg>(), kernel_3d_manifest<Cfg>(), reduce_manifest_text<Cfg>()}) {
        EXPECT_NO_THROW((void)co->find_manifest(manifest)) << emu::gfx_name(t->gfx) << ": " << manifest;
        ++found;
      }
    });
    EXPECT_EQ(found, dispatch_configs(*t) * 3);
  }
  // gfx950's ping-pong instances: 2D kernels (f16 / bf16 x d 128 and 256, plain variant)
  std::string why;
  const auto co = dispatch_code_object(kGfx950, why);
  if (!co) GTEST_SKIP() << why;
  const int pp = for_each_pingpong_config([&]<class Cfg>(const UnifiedTile&) {
    EXPECT_NO_THROW((void)co->find_manifest(kernel_2d_manifest<Cfg>())) << kernel_2d_manifest<Cfg>();
  });
  EXPECT_EQ(pp, 4);
}

// The residency the planner assumes (unified_residency: LDS, thread slots, the tile's register
// budget) holds for the compiled kernels: every 2D / 3D kernel of the dispatch table stays within its
// tile's budget of VGPRs + AGPRs (allocated in granules of 8), and its LDS (static + the dynamic bytes
// the launch asks) is the configuration's; the hardware then holds at least `residency` workgroups.
TEST(EmuUnifiedResidency, KernelsKeepTheTileBudget) {
  for (const EmuTarget* t : {&kGfx942, &kGfx950}) {
    std::string why;
    const auto co = dispatch_code_object(*t, why);
    if (!co) GTEST_SKIP() << why;
    int checked = 0;
    for_each_dispatch_config(*t, [&]<class Cfg>(const UnifiedTile& tile, bool) {
      for (const auto& manifest : {kernel_2d_manifest<Cfg>(), kernel_3d_manifest<Cfg>()}) {
        expect_tile_budget<Cfg>(*co, manifest, tile, t->target, t->gfx);
        ++checked;
      }
    });
    int pp = 0;
    if (t->target == Target::gfx950)
      pp = for_each_pingpong_config([&]<class Cfg>(const UnifiedTile& tile) {
        expect_tile_budget<Cfg>(*co, kernel_2d_manifest<Cfg>(), tile, t->target, t->gfx);
        ++checked;
      });
    EXPECT_EQ(checked, dispatch_configs(*t) * 2 + pp);
    std::printf("  %s: %d kernels within their tile's register budget and LDS residency\n", emu::gfx_name(t->gfx),
                checked);
  }
}

// ---- the other CDNA loader policy (tests/common/loader_policies.hpp), from tests/isa/unified_kernels ----

// The unified_kernels code object of a target, or null (with the reason).
std::shared_ptr<const emu::CodeObject> unified_code_object(const EmuTarget& t, std::string& why) {
  const std::string var = std::string("HIPATTN_EMU_UNIFIED_") + (t.target == Target::gfx950 ? "GFX950" : "GFX942");
  const char* path = std::getenv(var.c_str());
  if (path == nullptr || *path == 0) {
    why = "$" + var + " is not set (the build sets it to tests/isa/hipattn_isa_unified_kernels-" +
          emu::gfx_name(t.gfx) + ".co when the AMD toolchain is present)";
    return nullptr;
  }
  return emu::CodeObject::load(path);
}

// gfx942's LDS-DMA loader (dword DMA, two stages) and gfx950's register-staged loader at d = 64 and
// 128 and LDS-DMA loader at d = 256, on the tiles the dispatcher would pick: 2D, bf16, 16-bit KV, plain
// variant, the decode and the prefill tile, pages of 1, 5 and 16 slots, NaN in every unowned slot.
template <int kD, UnifiedTileKind kKind, Target kT>
void check_other_copy(const emu::CodeObject& co, const EmuTarget& t, int page, uint64_t seed) {
  using Cfg = other_copy_config_t<true, kD, kKind, PlainVariant, kT>;
  const bool decode = kKind == UnifiedTileKind::decode;
  // decode tile: one query a sequence (2 rows); prefill tile: 9 tokens x group 2 = 18 rows > 16
  ProblemSpec spec = base_spec(true, kD, page, decode ? std::vector<std::pair<int, int>>{{1, 37}, {1, 61}}
                                                     : std::vector<std::pair<int, int>>{{9, 40}, {1, 17}}, seed);
  HostProblem h(spec);
  const IoHost io(IoSpec{}, h.spec.bf16, h.spec.kv_dtype, h.num_tokens, h.spec.num_q_heads, h.spec.head_size, h.q);
  const reference::AttentionResult ref = io_reference(h, io);
  EmuProblem ep(h, io);
  const RunResult r = run_planned(t, ep, UnifiedPath::two_d, 0, std::nullopt,
                                  [&](const UnifiedAttentionParams& p, const UnifiedPlan& plan, uint64_t ws, RunResult& res) {
                                    ASSERT_EQ(plan.tile_kind, kKind);
                                    launch_config<Cfg>(co, p, plan, ws, ep, res);
                                  });
  const IoStats st = compare(h, io, ref, r);
  EXPECT_EQ(st.bad, 0) << st.bad << " of " << st.checked << " out of tolerance; first: " << st.first_bad << " ["
                       << r.kernel << "]";
  std::printf("  %-7s d%-3d %-7s page %-2d %-6s max|err| out %.2e lse %.2e  %9llu instr\n", emu::gfx_name(t.gfx), kD,
              decode ? "decode" : "prefill", page, Cfg::kCopy == CopyModel::lds_dma ? "dma" : "staged", st.max_abs,
              st.max_lse, static_cast<unsigned long long>(r.instructions));
}

template <Target kT>
void check_other_copies(const EmuTarget& t) {
  std::string why;
  const auto co = unified_code_object(t, why);
  if (!co) GTEST_SKIP() << why;
  check_other_copy<64, UnifiedTileKind::decode, kT>(*co, t, 16, 81);
  check_other_copy<64, UnifiedTileKind::prefill, kT>(*co, t, 5, 82);
  check_other_copy<128, UnifiedTileKind::decode, kT>(*co, t, 1, 83);
  check_other_copy<128, UnifiedTileKind::prefill, kT>(*co, t, 16, 84);
  check_other_copy<256, UnifiedTileKind::decode, kT>(*co, t, 5, 85);
  check_other_copy<256, UnifiedTileKind::prefill, kT>(*co, t, 16, 86);
}

TEST(EmuLoaderPolicy, Gfx942LdsDma) { check_other_copies<Target::gfx942>(kGfx942); }
TEST(EmuLoaderPolicy, Gfx950RegisterStagedAndLdsDma) { check_other_copies<Target::gfx950>(kGfx950); }

}  // namespace
}  // namespace hipattn::testing
