// tests/timing/hipattn_runs.cpp: the hipattn runs and work lists of the timing harness
// (hipattn_runs.hpp). The runs go through tests/emu's shared problem headers (the dispatcher's own plan,
// argument and geometry builders; the launches recorded through emu_dispatch.hpp's EmuLaunches); the
// work lists take the same plan and argument builders on a problem of the same shape with no tensor
// behind it (null or placeholder pointers: nothing is allocated, so full-size problems cost nothing),
// and walk each launch's grid with its scheduler's rules (kernels/common/work.hpp QBlockScheduler and
// DecodeTaskScheduler, kernels/dense_prefill/kernels.hpp dense_work, the reduces of
// kernels/unified/kernels.hpp and kernels/paged_decode/kernels.hpp), the tile ranges coming from the
// host functions the kernels call (qblock_tile_range, kv_tile_range, split_tiles) and planned tasks
// from the host planner the device planner equals (plan_decode_tasks_host).
#include "hipattn_runs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "emu_dense_prefill.hpp"
#include "emu_dispatch.hpp"
#include "emu_mla_decode.hpp"
#include "emu_paged_decode.hpp"
#include "emu_unified.hpp"
#include "../../testing/scenario_spec.hpp"

namespace hipattn::timing {

using testing::emu_dispatch::EmuLaunch;
using testing::emu_dispatch::EmuLaunches;
using testing::emu_dispatch::EmuTarget;

// ---- LaunchWork, WorkList, HipattnRun ----

int64_t LaunchWork::total() const {
  int64_t s = 0;
  for (int32_t w : work) s += w;
  return s;
}
int32_t LaunchWork::most() const { return work.empty() ? 0 : *std::max_element(work.begin(), work.end()); }
int64_t LaunchWork::busy() const {
  return std::count_if(work.begin(), work.end(), [](int32_t w) { return w > 0; });
}

const LaunchWork& WorkList::attention() const {
  for (const LaunchWork& l : launches)
    if (l.tile_kv > 0) return l;
  throw std::runtime_error("work list " + label + ": no attention launch");
}

bool HipattnRun::pass() const {
  if (launches.empty()) return false;
  for (const KernelRun& k : launches)
    if (!k.pass()) return false;
  return true;
}

// v_mfma_<type>_<M>x<N>x<K>[_<B>b]_<operands> (CDNA3 / CDNA4 spellings: v_mfma_f32_32x32x8_bf16,
// v_mfma_f32_16x16x32_fp8_fp8, v_mfma_f32_16x16x128_f8f6f4, v_mfma_f32_32x32x4_2b_f16; the encoding
// suffixes _e64 and the like after them).
// The metadata's .vgpr_count of a gfx90a+ kernel with AGPRs is already the unified total (the
// compiler's TotalNumVGPRs: the AGPRs from ACCUM_OFFSET on); the descriptor's offset + the AGPR count
// gives the same, and is the bound where the metadata counts the architectural VGPRs only.
int unified_vgprs(const emu::KernelInfo& k) {
  if (k.agpr_count <= 0) return k.vgpr_count;
  const int accum_offset = int((k.rsrc3 & 0x3fu) + 1) * 4;
  return std::max(k.vgpr_count, accum_offset + k.agpr_count);
}

namespace {

// ---- targets and code objects ----

Target target_of(emu::Gfx g) { return g == emu::Gfx::gfx950 ? Target::gfx950 : Target::gfx942; }

// The target as tests/emu's suites describe it (the planner's CU count: MI300X 304, MI355X 256; its
// fp8 format) with the family's code-object variable.
EmuTarget emu_target(HipattnFamily f, emu::Gfx g) {
  const bool b = g == emu::Gfx::gfx950;
  const char* env = nullptr;
  switch (f) {
    case HipattnFamily::dense_prefill:
      env = b ? "HIPATTN_EMU_DENSE_PREFILL_GFX950" : "HIPATTN_EMU_DENSE_PREFILL_GFX942";
      break;
    case HipattnFamily::unified: env = b ? "HIPATTN_EMU_DISPATCH_GFX950" : "HIPATTN_EMU_DISPATCH_GFX942"; break;
    case HipattnFamily::mla_decode: env = b ? "HIPATTN_EMU_MLA_DECODE_GFX950" : "HIPATTN_EMU_MLA_DECODE_GFX942"; break;
    case HipattnFamily::paged_decode:
      env = b ? "HIPATTN_EMU_PAGED_DECODE_GFX950" : "HIPATTN_EMU_PAGED_DECODE_GFX942";
      break;
  }
  return EmuTarget{g, target_of(g), b ? 256 : 304, b ? DType::fp8_e4m3fn : DType::fp8_e4m3fnuz, env};
}
const char* built_name(HipattnFamily f) {
  switch (f) {
    case HipattnFamily::dense_prefill: return "hipattn_isa_dense_prefill_all";
    case HipattnFamily::unified: return "hipattn_isa_dispatch_all";
    case HipattnFamily::mla_decode: return "hipattn_isa_mla_decode_all";
    default: return "hipattn_isa_paged_decode_all";
  }
}
std::shared_ptr<const emu::CodeObject> code_object(HipattnFamily f, const EmuTarget& t) {
  std::string why;
  auto co = testing::emu_dispatch::env_code_object(t, built_name(f), why);
  if (!co) throw std::runtime_error(why);
  return co;
}

// A placeholder device address for the pointers an argument builder offsets but a work list never
// reads (no tensor is behind it).
void* placeholder() { return reinterpret_cast<void*>(uintptr_t{0x100000000ull}); }

emu::Dim3 dim3_of(LaunchDim d) { return emu::Dim3{d.x, d.y, d.z}; }

// ---- what ran ----

KernelRun kernel_run(const EmuLaunch& l, const std::string& what) {
  KernelRun r;
  r.label = l.manifest + " | " + what;
  r.grid = dim3_of(l.grid);
  r.block = emu::Dim3{l.threads, 1, 1};
  r.lds_bytes = l.kernel->group_segment_fixed_size + l.dynamic_lds;
  r.vgprs = unified_vgprs(*l.kernel);
  r.stats = l.stats;
  return r;
}

HipattnRun make_run(const EmuLaunches& log, WorkList work) {
  HipattnRun run;
  run.label = work.label;
  for (const EmuLaunch& l : log.launches) run.launches.push_back(kernel_run(l, run.label));
  run.work = std::move(work);
  return run;
}

// The comparison of the call's output, on every launch of the call.
struct Check {
  int64_t compared = 0, bad = 0;
  double max_abs = 0, max_rel = 0;
  std::string detail;
};
void set_check(HipattnRun& run, const Check& c) {
  for (KernelRun& k : run.launches) {
    k.checked = true;
    k.compared = c.compared;
    k.bad = c.bad;
    k.max_abs_err = c.max_abs;
    k.max_rel_err = c.max_rel;
    k.detail = c.detail;
  }
}

void add_rel(double& rel, double got, double want);

// The check of an output compared in problem/fp8_io.hpp's formats (emu_dispatch.hpp's IoStats).
void set_io_check(HipattnRun& run, const testing::emu_dispatch::IoStats& st, const reference::AttentionResult& ref) {
  Check k;
  k.compared = st.checked;
  k.bad = st.bad;
  k.max_abs = st.max_abs;
  for (size_t i = 0; i < st.decoded.size(); ++i) add_rel(k.max_rel, st.decoded[i], ref.out[i]);
  char buf[96];
  std::snprintf(buf, sizeof buf, "max|err| lse %.2e", st.max_lse);
  k.detail = st.bad > 0 ? st.first_bad : buf;
  set_check(run, k);
}

// |got - want| / |want| over the elements with |want| >= 1/64 (smaller ones: the absolute tolerance).
void add_rel(double& rel, double got, double want) {
  if (std::fabs(want) >= 1.0 / 64 && std::isfinite(got)) rel = std::max(rel, std::fabs(got - want) / std::fabs(want));
}

std::string gfx_str(emu::Gfx g) { return emu::gfx_name(g); }

// ---- the schedulers' walks ----

// The 2D / 3D unified kernel's workgroups (kernels/common/work.hpp QBlockScheduler<kSplit>), x fastest.
template <class Cfg, class Args>
std::vector<int32_t> unified_tiles(const Args& a, const LaunchDim& grid, const std::vector<PlanTask>* tasks,
                                   bool split) {
  std::vector<int32_t> work;
  work.reserve(size_t(grid.x) * grid.y * grid.z);
  for (uint32_t z = 0; z < grid.z; ++z)
    for (uint32_t y = 0; y < grid.y; ++y)
      for (uint32_t x = 0; x < grid.x; ++x) {
        AttentionWork w;
        int32_t tb = 0, te = 0;
        if (split && tasks != nullptr) {
          const PlanTask& t = (*tasks)[x];
          if (t.item < 0) {
            work.push_back(0);
            continue;
          }
          w.seq = t.item;
          w.qb = 0;
          tb = t.tile_begin;
          te = t.tile_end;
        } else if (a.decode_grid) {
          w.seq = int32_t(x);
          w.qb = 0;
        } else {
          const int32_t qblock = int32_t(grid.x - 1 - x);
          w.seq = find_seq_idx(a.cu_seqlens_q, a.num_seqs, qblock, a.block_q);
          w.qb = qblock - seq_first_q_block(a.cu_seqlens_q, w.seq, a.block_q);
        }
        if (w.seq >= a.num_seqs) {
          work.push_back(0);
          continue;
        }
        w.q_len = a.cu_seqlens_q[w.seq + 1] - a.cu_seqlens_q[w.seq];
        if (w.qb * a.block_q >= w.q_len) {
          work.push_back(0);
          continue;
        }
        w.kv_len = a.seq_lens_k[w.seq];
        const KvTileRange r = qblock_tile_range(a, w, Cfg::kBN);
        int32_t b = r.tile_begin, e = r.tile_end;
        if (split) {
          if (tasks != nullptr)
            b = tb, e = te;
          else
            split_tiles(r.tile_begin, r.tile_end, a.num_segments, int32_t(z), b, e);
        }
        work.push_back(std::max(0, e - b));
      }
  return work;
}

// The paged-decode (and CDNA MLA) kernel's workgroups (kernels/common/work.hpp DecodeTaskScheduler):
// one dimension, slot-major over grid_y = kv heads x head chunks x q-blocks.
template <class Cfg, class Args>
std::vector<int32_t> decode_tiles(const Args& a, uint32_t grid_x, int32_t grid_y, const std::vector<PlanTask>* tasks) {
  std::vector<int32_t> work;
  work.reserve(grid_x);
  for (uint32_t x = 0; x < grid_x; ++x) {
    const int32_t slot = int32_t(x) / grid_y, y = int32_t(x) % grid_y;
    AttentionWork w;
    int32_t tb = 0, te = -1;
    if (tasks != nullptr) {
      const PlanTask& t = (*tasks)[size_t(slot)];
      if (t.item < 0) {
        work.push_back(0);
        continue;
      }
      w.seq = t.item;
      tb = t.tile_begin;
      te = t.tile_end;
    } else {
      w.seq = slot / a.num_segments;
      if (w.seq >= a.num_seqs) {
        work.push_back(0);
        continue;
      }
      tb = slot - w.seq * a.num_segments;  // the segment
    }
    w.qb = y % a.q_blocks;
    w.q_len = a.q_len;
    const int32_t kv = a.seq_lens_k[w.seq];
    w.kv_len = kv > 0 ? kv : 0;
    const KvTileRange r = qblock_tile_range(a, w, Cfg::kBN);
    int32_t b, e;
    if (te < 0) {
      split_tiles(r.tile_begin, r.tile_end, a.num_segments, tb, b, e);
    } else {
      b = std::max(r.tile_begin, tb);
      e = std::min(r.tile_end, te);
      if (e < b) e = b;
    }
    work.push_back(std::max(0, e - b));
  }
  return work;
}

// The host plan of a planned launch (the device planner equals it: emu_dispatch.hpp run_planner).
using testing::emu_dispatch::HostPlan;
HostPlan host_plan(const DecodePlanArgs& pa, const int32_t* lens) {
  HostPlan h = testing::emu_dispatch::host_plan(pa, lens);
  if (h.status != kPlanOk)
    throw std::runtime_error("the host plan overflows its " + std::to_string(pa.capacity) + " slots");
  return h;
}

LaunchWork planner_work(const DecodePlanArgs& pa) {
  LaunchWork l;
  l.manifest = testing::emu_dispatch::planner_manifest_text();
  l.role = "plan_decode_tasks";
  l.grid = emu::Dim3{1, 1, 1};
  l.block = emu::Dim3{uint32_t(kPlannerThreads), 1, 1};
  l.unit = "sequences planned (over " + std::to_string(pa.capacity) + " task slots)";
  l.work = {pa.num_items};
  return l;
}

// A reduce over `items` (token, head) rows, `per` a workgroup; parts(item): the partials it merges
// (0: written by the kernel).
template <class Parts>
LaunchWork reduce_work(std::string manifest, std::string role, LaunchDim grid, uint32_t threads, int64_t items,
                       int64_t per, int head_dim, Parts&& parts) {
  LaunchWork l;
  l.manifest = std::move(manifest);
  l.role = std::move(role);
  l.grid = dim3_of(grid);
  l.block = emu::Dim3{threads, 1, 1};
  l.unit = "partial rows of " + std::to_string(head_dim) + " floats merged";
  for (uint32_t b = 0; b < grid.x; ++b) {
    int64_t s = 0;
    for (int64_t i = int64_t(b) * per; i < std::min<int64_t>(items, int64_t(b + 1) * per); ++i) s += parts(i);
    l.work.push_back(int32_t(s));
  }
  return l;
}

template <class Cfg>
void set_tile(LaunchWork& l) {
  l.tile_kv = Cfg::kBN;
  l.tile_rows = Cfg::kBM;
  l.tile_macs = int64_t(Cfg::kBM) * Cfg::kBN * (Cfg::kDqk + Cfg::kDv);
  l.unit = "KV tiles of " + std::to_string(Cfg::kBN) + " keys";
}

// ---- dense prefill ----

void check_dense(const DensePrefillProblem& p) {
  const bool ok =
      (p.d_qk == 192 && p.d_v == 128) || ((p.d_qk == 64 || p.d_qk == 128 || p.d_qk == 256) && p.d_v == p.d_qk);
  if (!ok) throw std::invalid_argument("dense prefill: head sizes (64, 64), (128, 128), (256, 256), (192, 128)");
}

// The batched problem's params ([batch, seqlen, heads, d] tensors, no padding: emu_dense::DenseProblem's
// strides) over placeholder pointers.
DensePrefillParams dense_shape_params(const DensePrefillProblem& s) {
  DensePrefillParams p;
  p.dtype = s.bf16 ? DType::bf16 : DType::f16;
  p.q = p.k = p.v = placeholder();
  p.out = placeholder();
  p.q_stride_token = int64_t(s.heads_q) * s.d_qk;
  p.q_stride_head = s.d_qk;
  p.q_stride_batch = p.q_stride_token * s.seqlen_q;
  p.k_stride_token = int64_t(s.heads_kv) * s.d_qk;
  p.k_stride_head = s.d_qk;
  p.k_stride_batch = p.k_stride_token * s.seqlen_k;
  p.v_stride_token = int64_t(s.heads_kv) * s.d_v;
  p.v_stride_head = s.d_v;
  p.v_stride_batch = p.v_stride_token * s.seqlen_k;
  p.o_stride_token = int64_t(s.heads_q) * s.d_v;
  p.o_stride_head = s.d_v;
  p.o_stride_batch = p.o_stride_token * s.seqlen_q;
  p.num_seqs = s.batch;
  p.num_tokens_q = s.batch * s.seqlen_q;
  p.num_tokens_k = s.batch * s.seqlen_k;
  p.max_seqlen_q = s.seqlen_q;
  p.max_seqlen_k = s.seqlen_k;
  p.num_q_heads = s.heads_q;
  p.num_kv_heads = s.heads_kv;
  p.head_size_qk = s.d_qk;
  p.head_size_v = s.d_v;
  p.scale = 1.f / std::sqrt(float(s.d_qk));
  p.causal = s.causal;
  p.lse_stride_head = p.num_tokens_q;
  return p;
}

// The dense kernel's workgroups (kernels/dense_prefill/kernels.hpp DenseQBlockScheduler: workgroup
// (x, y) = item y x heads + x, dense_work's q-block slots by band, dense_tiles).
template <class Cfg>
LaunchWork dense_launch_work(const DensePrefillParams& p) {
  const dense_args_t<Cfg> a = detail::make_dense_skeleton_args<Cfg>(p);
  const DensePrefillCommon& c = a.dense;
  if (c.cu_seqlens_q != nullptr || !c.by_band) throw std::logic_error("dense_launch_work: batched problems only");
  LaunchWork l;
  l.manifest = testing::emu_dense::kernel_manifest_text<Cfg>();
  l.role = "dense_prefill";
  l.grid = emu::Dim3{uint32_t(p.num_q_heads), uint32_t(c.q_blocks), 1};
  l.block = emu::Dim3{uint32_t(Cfg::kThreads), 1, 1};
  l.dynamic_lds = uint32_t(Cfg::kSmemBytes);
  set_tile<Cfg>(l);
  const int32_t heads = c.num_q_heads;
  for (int32_t y = 0; y < c.q_blocks; ++y)
    for (int32_t x = 0; x < heads; ++x) {
      const int32_t slot = (y * heads + x) / heads;
      const int32_t band = slot / c.num_seqs;
      const int32_t q_len = c.max_seqlen_q, kv_len = c.max_seqlen_k;
      const int32_t qb = (q_len + c.block_q - 1) / c.block_q - 1 - band;
      if (qb < 0 || qb * c.block_q >= q_len) {
        l.work.push_back(0);
        continue;
      }
      const int32_t i_first = qb * Cfg::kBM, i_last = std::min(q_len, i_first + Cfg::kBM) - 1;
      const KvTileRange r =
          kv_tile_range(QBlockSpan{i_first, i_last, q_len, kv_len, c.causal, c.window_left}, Cfg::kBN);
      l.work.push_back(std::max(0, r.tile_end - r.tile_begin));
    }
  return l;
}

std::string plan_str(const WorkList& w) {
  std::string s;
  for (const LaunchWork& l : w.launches)
    s += (s.empty() ? "" : " + ") + l.role + "[" + std::to_string(l.grid.x) + "x" + std::to_string(l.grid.y) + "x" +
         std::to_string(l.grid.z) + "]";
  return s;
}

// ---- unified ----

const float kDummyFloat = 0.f;

// The problem's params as HostProblem::params builds them (testing/paged_problem.hpp: contiguous cache
// of used + 3 blocks), over placeholder pointers and the host arrays `cu` and `lens` (which the work
// list reads; the plan reads host values only), with its I/O (fp8 queries, output dtype).
UnifiedAttentionParams unified_shape_params(const UnifiedProblem& u, std::vector<int32_t>& cu,
                                            std::vector<int32_t>& lens) {
  const testing::ProblemSpec& s = u.spec;
  cu.assign(1, 0);
  lens.clear();
  int max_q = 0, max_k = 0, used = 0;
  for (auto [ql, kl] : s.seqs) {
    cu.push_back(cu.back() + ql);
    lens.push_back(kl);
    max_q = std::max(max_q, ql);
    max_k = std::max(max_k, kl);
    used += (kl + s.block_size - 1) / s.block_size;
  }
  UnifiedAttentionParams p =
      make_unified_params({.num_seqs = int32_t(s.seqs.size()),
                           .num_tokens = cu.back(),
                           .max_seqlen_q = max_q,
                           .max_seqlen_k = max_k,
                           .num_q_heads = s.num_q_heads,
                           .num_kv_heads = s.num_kv_heads,
                           .head_size = s.head_size,
                           .num_blocks = used + 3,
                           .block_size = s.block_size,
                           .max_blocks_per_seq = std::max(1, (max_k + s.block_size - 1) / s.block_size),
                           .layout = s.hnd ? KvLayout::hnd : KvLayout::nhd,
                           .q_dtype = s.bf16 ? DType::bf16 : DType::f16,
                           .kv_dtype = s.kv_dtype,
                           .kv_scale_mode = is_fp8(s.kv_dtype) ? s.scale_mode : KvScaleMode::none,
                           .qq_bias_stride = s.qq_bias ? s.qq_bias_stride : 0});
  p.q = p.k_cache = p.v_cache = placeholder();
  p.out = placeholder();
  p.cu_seqlens_q = cu.data();
  p.seq_lens_k = lens.data();
  p.causal = s.causal;
  p.window_left = s.window_left;
  p.softcap = s.softcap;
  p.sinks = s.sinks ? &kDummyFloat : nullptr;
  p.alibi_slopes = s.alibi ? &kDummyFloat : nullptr;
  p.qq_bias = s.qq_bias ? &kDummyFloat : nullptr;
  if (u.fp8_queries) {
    p.q_dtype = s.kv_dtype;
    p.q_scale.host = testing::emu_dispatch::kFp8QScale;
  }
  p.out_format.dtype = u.out;
  return p;
}

testing::emu_dispatch::IoSpec unified_io(const UnifiedProblem& u) {
  testing::emu_dispatch::IoSpec io;
  if (u.fp8_queries) {
    if (!is_fp8(u.spec.kv_dtype)) throw std::invalid_argument("fp8_queries needs an fp8 cache (spec.kv_dtype)");
    io.q = u.spec.kv_dtype;
  }
  io.out = u.out;
  return io;
}

template <class Cfg>
void unified_launch_work(const UnifiedAttentionParams& p, const UnifiedPlan& plan, WorkList& w) {
  const UnifiedLaunchGeometry g = make_unified_launch_geometry<Cfg>(p, plan);
  if (g.empty) return;
  const auto a = make_unified_kernel_args<Cfg>(p, plan, placeholder());
  HostPlan hp;
  const bool planned = g.split && plan.grid == UnifiedGrid::split_planned;
  if (planned) {
    const DecodePlanArgs pa = make_unified_plan_args(p, plan, placeholder(), Cfg::kBN);
    hp = host_plan(pa, p.seq_lens_k);
    w.launches.push_back(planner_work(pa));
  }
  LaunchWork l;
  l.manifest =
      g.split ? testing::emu_unified::kernel_3d_manifest<Cfg>() : testing::emu_unified::kernel_2d_manifest<Cfg>();
  l.role = g.split ? "unified_3d" : "unified_2d";
  l.grid = dim3_of(g.grid);
  l.block = emu::Dim3{g.threads, 1, 1};
  l.dynamic_lds = g.dynamic_lds;
  set_tile<Cfg>(l);
  l.work = unified_tiles<Cfg>(a, g.grid, planned ? &hp.tasks : nullptr, g.split);
  w.launches.push_back(std::move(l));
  if (g.split) {
    const int64_t items = int64_t(p.num_tokens) * p.num_q_heads;
    const auto parts = [&](int64_t item) -> int64_t {
      if (!planned) return plan.num_segments;
      const int32_t token = int32_t(item / p.num_q_heads);
      const int32_t seq =
          int32_t(std::upper_bound(p.cu_seqlens_q, p.cu_seqlens_q + p.num_seqs, token) - p.cu_seqlens_q) - 1;
      const int32_t n = hp.tasks[size_t(hp.item_task0[size_t(seq)])].parts;
      return n > 1 ? n : 0;
    };
    w.launches.push_back(reduce_work(testing::emu_unified::reduce_manifest_text<Cfg>(), "split_kv_reduce",
                                     g.reduce_grid, g.reduce_threads, items, g.reduce_items_per_block, Cfg::kD, parts));
  }
}

UnifiedPlan unified_plan_of(const UnifiedAttentionParams& p, const UnifiedProblem& u, const EmuTarget& t) {
  return plan_unified_attention(p, u.options, PlanDevice{t.target, t.cus});
}

std::string unified_plan_str(const UnifiedPlan& plan) {
  return std::string(tile_kind_name(plan.tile_kind)) + " tile" +
         (plan.pipeline == PlanPipeline::pingpong ? " ping-pong" : "") +
         (plan.head_chunks > 1 ? " x" + std::to_string(plan.head_chunks) + " head chunks" : std::string()) + ", " +
         (plan.grid == UnifiedGrid::split_planned   ? "3D planned/" + std::to_string(plan.capacity)
          : plan.grid == UnifiedGrid::split_uniform ? "3D x" + std::to_string(plan.num_segments)
                                                    : std::string("2D"));
}

// ---- paged decode ----

// The cache dtype of a problem on target t: the query's 16-bit type, or the target's fp8 format.
DType paged_kv_dtype(const PagedDecodeProblem& s, const EmuTarget& t) {
  return s.fp8_kv ? t.fp8 : s.bf16 ? DType::bf16 : DType::f16;
}

testing::DecodeSpec paged_spec(const PagedDecodeProblem& s, const EmuTarget& t) {
  testing::DecodeSpec d;
  d.bf16 = s.bf16;
  d.kv_dtype = paged_kv_dtype(s, t);
  d.scale_mode = s.fp8_kv ? KvScaleMode::per_tensor : KvScaleMode::none;
  d.num_q_heads = s.heads_q;
  d.num_kv_heads = s.heads_kv;
  d.head_size = s.head_size;
  d.block_size = s.page_size;
  d.q_len = s.q_len;
  d.ctx.assign(size_t(s.batch), s.ctx);
  d.seed = s.seed;
  return d;
}

// The problem as EmuDecodeProblem::params builds it (the unified shape of (q_len, ctx) sequences).
PagedDecodeParams paged_shape_params(const PagedDecodeProblem& s, const EmuTarget& t, std::vector<int32_t>& cu,
                                     std::vector<int32_t>& lens) {
  UnifiedProblem u;
  u.spec.bf16 = s.bf16;
  u.spec.kv_dtype = paged_kv_dtype(s, t);
  u.spec.scale_mode = KvScaleMode::per_tensor;  // read for fp8 caches only
  u.spec.num_q_heads = s.heads_q;
  u.spec.num_kv_heads = s.heads_kv;
  u.spec.head_size = s.head_size;
  u.spec.block_size = s.page_size;
  u.spec.seqs.assign(size_t(s.batch), {s.q_len, s.ctx});
  UnifiedAttentionParams up = unified_shape_params(u, cu, lens);
  up.cu_seqlens_q = nullptr;
  PagedDecodeParams p = paged_decode_params_from_unified(up, s.q_len);
  p.seq_lens_k = lens.data();
  return p;
}

template <class Cfg>
void paged_launch_work(const PagedDecodeParams& p, const PagedDecodePlan& plan, WorkList& w) {
  const PagedDecodeGeometry g = make_paged_decode_geometry<Cfg>(p, plan);
  if (g.empty) return;
  const paged_decode_args_t<Cfg> a = make_paged_decode_kernel_args<Cfg>(p, plan, placeholder());
  HostPlan hp;
  const bool planned = plan.split == SlotSplit::planned;
  if (planned) {
    const DecodePlanArgs pa = make_paged_decode_plan_args(p, plan, placeholder(), Cfg::kBN);
    hp = host_plan(pa, p.seq_lens_k);
    w.launches.push_back(planner_work(pa));
  }
  LaunchWork l;
  l.manifest = testing::emu_paged::kernel_manifest_text<Cfg>();
  l.role = "paged_decode";
  l.grid = dim3_of(g.grid);
  l.block = emu::Dim3{g.threads, 1, 1};
  l.dynamic_lds = g.dynamic_lds;
  set_tile<Cfg>(l);
  l.work = decode_tiles<Cfg>(a, g.grid.x, int32_t(plan.grid_y), planned ? &hp.tasks : nullptr);
  w.launches.push_back(std::move(l));
  if (g.reduce) {
    const int64_t items = int64_t(p.num_seqs) * p.q_len * p.num_q_heads;
    const auto parts = [&](int64_t item) -> int64_t {
      const int32_t seq = int32_t(item / p.num_q_heads) / p.q_len;
      const int32_t n = planned ? hp.tasks[size_t(hp.item_task0[size_t(seq)])].parts : plan.segments;
      return n > 1 ? n : 0;
    };
    w.launches.push_back(reduce_work(testing::emu_paged::reduce_manifest_text<Cfg>(), "paged_decode_reduce",
                                     g.reduce_grid, g.reduce_threads, items, split_kv_reduce_items_per_block(Cfg::kD),
                                     Cfg::kD, parts));
  }
}

std::string paged_plan_str(const PagedDecodePlan& plan) {
  return std::string(tile_kind_name(plan.tile_kind)) + " tile " +
         std::to_string(plan.rows_per_token) + "x" + std::to_string(plan.block_q) +
         (plan.head_chunks > 1 ? " x" + std::to_string(plan.head_chunks) + " head chunks" : std::string()) + ", " +
         (plan.split == SlotSplit::planned ? "planned/" + std::to_string(plan.capacity)
          : plan.segments > 1              ? "uniform x" + std::to_string(plan.segments)
                                           : std::string("one partition"));
}

// ---- MLA decode ----

testing::mla_test::MlaSpec mla_spec(const MlaDecodeProblem& s, const EmuTarget& t) {
  testing::mla_test::MlaSpec m;
  m.q_dtype = s.bf16 ? DType::bf16 : DType::f16;
  m.kv_dtype = s.fp8_kv ? t.fp8 : m.q_dtype;
  m.heads = s.heads;
  m.q_len = s.q_len;
  m.page_size = s.page_size;
  m.lens.assign(size_t(s.batch), s.ctx);
  m.seed = s.seed;
  return m;
}

// The host values the plan and the argument builders read, over placeholder pointers and the host
// array `lens`.
MlaDecodeParams mla_shape_params(const MlaDecodeProblem& s, const EmuTarget& t, std::vector<int32_t>& lens) {
  lens.assign(size_t(s.batch), s.ctx);
  MlaDecodeParams p;
  p.q = placeholder();
  p.q_dtype = s.bf16 ? DType::bf16 : DType::f16;
  p.q_stride_head = kMlaQkDim;
  p.q_stride_token = int64_t(s.heads) * kMlaQkDim;
  p.q_len = s.q_len;
  p.kv_cache = placeholder();
  p.kv_dtype = s.fp8_kv ? t.fp8 : p.q_dtype;
  p.kv_stride_page = int64_t(s.page_size) * kMlaQkDim;
  p.kv_stride_slot = kMlaQkDim;
  p.page_size = s.page_size;
  p.max_pages_per_seq = (s.ctx + s.page_size - 1) / s.page_size + 1;
  p.num_pages = s.batch * p.max_pages_per_seq;
  p.block_table_stride = p.max_pages_per_seq;
  p.seq_lens_k = lens.data();
  p.batch = s.batch;
  p.max_seqlen_k = s.ctx;
  p.num_heads = s.heads;
  p.scale = 1.f / std::sqrt(float(kMlaQkDim));
  p.out = placeholder();
  p.o_stride_head = kMlaLatentDim;
  p.o_stride_token = int64_t(s.heads) * kMlaLatentDim;
  return p;
}

template <class Cfg>
void mla_launch_work(const MlaDecodeParams& p, const MlaDecodePlan& plan, WorkList& w) {
  const auto a = make_mla_decode_cdna_args<Cfg>(p, plan, placeholder());
  HostPlan hp;
  const bool planned = plan.split == SlotSplit::planned;
  if (planned) {
    const DecodePlanArgs pa = make_mla_decode_plan_args(p, plan, placeholder());
    hp = host_plan(pa, p.seq_lens_k);
    w.launches.push_back(planner_work(pa));
  }
  LaunchWork l;
  l.manifest = testing::emu_mla::kernel_manifest_text<Cfg>();
  l.role = "mla_decode";
  l.grid = emu::Dim3{uint32_t(int64_t(plan.capacity) * plan.row_blocks), 1, 1};
  l.block = emu::Dim3{uint32_t(Cfg::kThreads), 1, 1};
  l.dynamic_lds = uint32_t(Cfg::kSmemBytes);
  set_tile<Cfg>(l);
  l.work = decode_tiles<Cfg>(a, l.grid.x, plan.row_blocks, planned ? &hp.tasks : nullptr);
  w.launches.push_back(std::move(l));
  if (planned) {
    const bool bf16 = compute_dtype(p.q_dtype, p.kv_dtype, output_dtype(p.q_dtype, p.out_format)) == DType::bf16;
    const int64_t items = int64_t(p.batch) * p.q_len * p.num_heads;
    const int64_t per = split_kv_reduce_items_per_block(kMlaLatentDim);
    const auto parts = [&](int64_t item) -> int64_t {
      const int32_t seq = int32_t(item / p.num_heads) / p.q_len;
      const int32_t n = hp.tasks[size_t(hp.item_task0[size_t(seq)])].parts;
      return n > 1 ? n : 0;
    };
    w.launches.push_back(reduce_work(testing::emu_mla::reduce_manifest_text(bf16), "paged_decode_reduce",
                                     LaunchDim{uint32_t((items + per - 1) / per), 1, 1},
                                     uint32_t(split_kv_reduce_threads(kMlaLatentDim)), items, per, kMlaLatentDim,
                                     parts));
  }
}

std::string mla_plan_str(const MlaDecodePlan& plan) {
  return std::to_string(plan.rows_per_token) + "x" + std::to_string(plan.block_q) + " rows, " +
         std::to_string(plan.row_blocks) + " row blocks, " +
         (plan.split == SlotSplit::planned ? "planned/" + std::to_string(plan.capacity) : std::string("one partition"));
}

}  // namespace

std::string code_object_missing(HipattnFamily family, emu::Gfx gfx) {
  const EmuTarget t = emu_target(family, gfx);
  const char* path = std::getenv(t.env);
  if (path != nullptr && *path != 0) return {};
  return std::string("$") + t.env + " is not set (the build sets it to tests/isa/" + built_name(family) + "-" +
         emu::gfx_name(gfx) + ".co; run under tests/emu/hipattn_emu_env.sh)";
}

std::shared_ptr<const emu::CodeObject> hipattn_code_object(HipattnFamily family, emu::Gfx gfx) {
  return code_object(family, emu_target(family, gfx));
}

// ---- 1. dense prefill ----

std::string DensePrefillProblem::str() const {
  return std::string(bf16 ? "bf16" : "f16") + " d" + std::to_string(d_qk) +
         (d_v != d_qk ? "/" + std::to_string(d_v) : "") + (causal ? " causal" : " non-causal") + " b" +
         std::to_string(batch) + " h" + std::to_string(heads_q) + "/" + std::to_string(heads_kv) + " s" +
         std::to_string(seqlen_q) + "/" + std::to_string(seqlen_k);
}

WorkList dense_prefill_work(const DensePrefillProblem& s, emu::Gfx gfx) {
  check_dense(s);
  const Target t = target_of(gfx);
  const DensePrefillParams p = dense_shape_params(s);
  throw_if_error(validate(p));
  WorkList w;
  const bool pingpong = detail::dense_pingpong(p, t);
  testing::emu_dense::visit_target_instance(t, s.bf16, s.d_qk, false, pingpong, [&]<class Cfg>() {
    if (p.num_tokens_q > 0 && p.num_seqs > 0) w.launches.push_back(dense_launch_work<Cfg>(p));
  });
  w.label =
      "dense prefill " + s.str() + " " + gfx_str(gfx) + (pingpong ? " ping-pong" : " skeleton") + ": " + plan_str(w);
  return w;
}

HipattnRun run_dense_prefill(const DensePrefillProblem& s, emu::Gfx gfx, bool check, const LaunchOptionsFor& opt) {
  using namespace testing::emu_dense;
  check_dense(s);
  const EmuTarget t = emu_target(HipattnFamily::dense_prefill, gfx);
  const auto co = code_object(HipattnFamily::dense_prefill, t);
  Case c{"timing", s.bf16, s.d_qk, s.heads_q, s.heads_kv, s.causal};
  c.batch = s.batch;
  c.batch_q = s.seqlen_q;
  c.batch_k = s.seqlen_k;
  c.seed = s.seed;
  DenseProblem dp(c);
  EmuLaunches log;
  log.options_for = opt;
  const RunResult r = run_dense(*co, t, dp, false, &log);
  WorkList w = dense_prefill_work(s, gfx);
  HipattnRun run = make_run(log, std::move(w));
  if (check) {
    const reference::AttentionResult ref = reference::dense_prefill(dp.params(false));
    const CompareStats st = compare(dp, ref, r.out, r.lse);
    Check k;
    k.compared = st.checked;
    k.bad = st.bad + st.touched_padding;
    k.max_abs = st.max_abs;
    const int64_t T = dp.tokens_q, H = c.q_heads, D = c.dv();
    for (int64_t tk = 0; tk < T; ++tk)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < D; ++d)
          add_rel(k.max_rel, to_double(r.out[size_t(dp.at(dp.os, int32_t(tk), dp.max_q, h) + d)], c.bf16),
                  ref.out[size_t((tk * H + h) * D + d)]);
    char buf[160];
    std::snprintf(buf, sizeof buf, "max|err| lse %.2e, %lld no-key rows, %lld padding elements written", st.max_lse,
                  static_cast<long long>(st.no_key), static_cast<long long>(st.touched_padding));
    k.detail = st.bad > 0 ? st.first_bad : buf;
    set_check(run, k);
  }
  return run;
}

// ---- 5. unified ----

std::string UnifiedProblem::str() const {
  std::string seqs;
  int n = 0;
  for (auto [q, k] : spec.seqs) {
    if (n++ == 6) {
      seqs += ",.. " + std::to_string(spec.seqs.size()) + " seqs";
      break;
    }
    seqs += (seqs.empty() ? "" : ",") + std::to_string(q) + "/" + std::to_string(k);
  }
  std::string d = std::string(spec.bf16 ? "bf16" : "f16") + " kv=" + std::string(dtype_name(spec.kv_dtype)) +
                  (fp8_queries ? " q=" + std::string(dtype_name(spec.kv_dtype)) : std::string()) +
                  (out ? " out=" + std::string(dtype_name(*out)) : std::string()) + " d" +
                  std::to_string(spec.head_size) + " h" + std::to_string(spec.num_q_heads) + "/" +
                  std::to_string(spec.num_kv_heads) + " page" + std::to_string(spec.block_size) + " q/kv=" + seqs +
                  (spec.causal ? "" : " non-causal");
  if (spec.window_left >= 0) d += " window " + std::to_string(spec.window_left);
  if (spec.softcap > 0) d += " softcap";
  if (spec.alibi) d += " alibi";
  if (spec.qq_bias) d += " qq-bias";
  if (spec.sinks) d += " sinks";
  return d;
}

WorkList unified_work(const UnifiedProblem& u, emu::Gfx gfx) {
  const EmuTarget t = emu_target(HipattnFamily::unified, gfx);
  std::vector<int32_t> cu, lens;
  const UnifiedAttentionParams p = unified_shape_params(u, cu, lens);
  const UnifiedPlan plan = unified_plan_of(p, u, t);
  WorkList w;
  testing::emu_unified::visit_target_config(t.target, p, plan,
                                            [&]<class Cfg>() { unified_launch_work<Cfg>(p, plan, w); });
  w.label = "unified " + u.str() + " " + gfx_str(gfx) + " " + unified_plan_str(plan) + ": " + plan_str(w);
  return w;
}

HipattnRun run_unified(const UnifiedProblem& u, emu::Gfx gfx, bool check, const LaunchOptionsFor& opt) {
  using namespace testing::emu_unified;
  const EmuTarget t = emu_target(HipattnFamily::unified, gfx);
  const auto co = code_object(HipattnFamily::unified, t);
  testing::HostProblem h(u.spec);
  const testing::emu_dispatch::IoSpec ios = unified_io(u);
  const testing::emu_dispatch::IoHost io(ios, h.spec.bf16, h.spec.kv_dtype, h.num_tokens, h.spec.num_q_heads,
                                         h.spec.head_size, h.q);
  EmuProblem ep(h, io);
  EmuLaunches log;
  log.options_for = opt;
  const RunResult r = run_on_emulator(*co, t, ep, u.options.path, u.options.num_segments, std::nullopt, u.options.split,
                                      u.options.pipeline, &log);
  if (!r.plan_mismatch.empty())
    throw std::runtime_error("unified " + u.str() + ": the device plan: " + r.plan_mismatch);
  WorkList w = unified_work(u, gfx);
  HipattnRun run = make_run(log, std::move(w));
  if (check) {
    const reference::AttentionResult ref = io_reference(h, io);
    const testing::emu_dispatch::IoStats st = compare(h, io, ref, r);
    set_io_check(run, st, ref);
  }
  return run;
}

UnifiedOptions unified_plan_options(const UnifiedProblem& u, emu::Gfx gfx) {
  const EmuTarget t = emu_target(HipattnFamily::unified, gfx);
  std::vector<int32_t> cu, lens;
  const UnifiedAttentionParams p = unified_shape_params(u, cu, lens);
  const UnifiedPlan plan = unified_plan_of(p, u, t);
  UnifiedOptions o;
  o.path = plan.split() ? UnifiedPath::three_d : UnifiedPath::two_d;
  o.split = plan.grid == UnifiedGrid::split_planned   ? UnifiedSplit::planned
            : plan.grid == UnifiedGrid::split_uniform ? UnifiedSplit::uniform
                                                      : UnifiedSplit::automatic;
  o.pipeline = plan.pipeline == PlanPipeline::pingpong ? UnifiedPipeline::pingpong : UnifiedPipeline::skeleton;
  return o;
}

std::vector<std::string> unified_scenario_names(const std::string& group) {
  std::vector<std::string> v;
  for (const auto& sc : scenarios::unified_scenarios())
    if (group.empty() || group == sc.group) v.push_back(sc.name);
  return v;
}

UnifiedProblem unified_scenario(const std::string& name, uint64_t seed) {
  for (const auto& sc : scenarios::unified_scenarios())
    if (name == sc.name) {
      UnifiedProblem u;
      u.spec = testing::spec_from_scenario(sc, seed);
      return u;
    }
  throw std::invalid_argument("no unified scenario named " + name);
}

// ---- 2. fp8 prefill ----

std::string Fp8PrefillProblem::str() const {
  return "fp8 d" + std::to_string(d) + (causal ? " causal" : " non-causal") + " b" + std::to_string(batch) + " h" +
         std::to_string(heads_q) + "/" + std::to_string(heads_kv) + " s" + std::to_string(seqlen_q) + "/" +
         std::to_string(seqlen_k) + " page" + std::to_string(page_size);
}

UnifiedProblem fp8_prefill_unified(const Fp8PrefillProblem& s, emu::Gfx gfx) {
  UnifiedProblem u;
  u.spec.bf16 = true;
  u.spec.kv_dtype = testing::emu_dispatch::q8_format(target_of(gfx));
  u.spec.scale_mode = KvScaleMode::per_tensor;
  u.spec.num_q_heads = s.heads_q;
  u.spec.num_kv_heads = s.heads_kv;
  u.spec.head_size = s.d;
  u.spec.block_size = s.page_size;
  u.spec.seqs.assign(size_t(s.batch), {s.seqlen_q, s.seqlen_k});
  u.spec.causal = s.causal;
  u.spec.seed = s.seed;
  u.fp8_queries = true;
  u.out = DType::bf16;
  u.options = s.options;
  return u;
}

namespace {
void expect_q8(const WorkList& w) {
  const std::string& m = w.attention().manifest;
  if (m.find("_q8 ") == std::string::npos)
    throw std::runtime_error("fp8 prefill: the dispatcher did not pick the fp8 matrix path (" + m + ")");
}
}  // namespace

WorkList fp8_prefill_work(const Fp8PrefillProblem& s, emu::Gfx gfx) {
  WorkList w = unified_work(fp8_prefill_unified(s, gfx), gfx);
  expect_q8(w);
  return w;
}

HipattnRun run_fp8_prefill(const Fp8PrefillProblem& s, emu::Gfx gfx, bool check, const LaunchOptionsFor& opt) {
  HipattnRun r = run_unified(fp8_prefill_unified(s, gfx), gfx, check, opt);
  expect_q8(r.work);
  return r;
}

// ---- 3. MLA decode ----

std::string MlaDecodeProblem::str() const {
  return std::string(bf16 ? "bf16" : "f16") + (fp8_kv ? " fp8 kv" : "") + " b" + std::to_string(batch) + " h" +
         std::to_string(heads) + " ctx" + std::to_string(ctx) + " q" + std::to_string(q_len) + " page" +
         std::to_string(page_size);
}

WorkList mla_decode_work(const MlaDecodeProblem& s, emu::Gfx gfx) {
  const EmuTarget t = emu_target(HipattnFamily::mla_decode, gfx);
  std::vector<int32_t> lens;
  const MlaDecodeParams p = mla_shape_params(s, t, lens);
  const MlaDecodePlan plan = plan_mla_decode(p, s.options, PlanDevice{t.target, t.cus});
  const bool bf16 = compute_dtype(p.q_dtype, p.kv_dtype, output_dtype(p.q_dtype, p.out_format)) == DType::bf16;
  WorkList w;
  testing::emu_mla::visit_config(t.target, bf16, p.kv_dtype, mla_decode_cdna_q8(p.q_dtype, p.kv_dtype, t.target),
                                 [&]<class Cfg>() { mla_launch_work<Cfg>(p, plan, w); });
  w.label = "mla decode " + s.str() + " " + gfx_str(gfx) + " " + mla_plan_str(plan) + ": " + plan_str(w);
  return w;
}

HipattnRun run_mla_decode(const MlaDecodeProblem& s, emu::Gfx gfx, bool check, const LaunchOptionsFor& opt) {
  using namespace testing::emu_mla;
  const EmuTarget t = emu_target(HipattnFamily::mla_decode, gfx);
  const auto co = code_object(HipattnFamily::mla_decode, t);
  const MlaHost h(mla_spec(s, t));
  EmuMla em(h);
  EmuLaunches log;
  log.options_for = opt;
  const RunResult r = run_on_emulator(*co, t, em, s.options, &log);
  if (!r.plan_mismatch.empty())
    throw std::runtime_error("mla decode " + s.str() + ": the device plan: " + r.plan_mismatch);
  WorkList w = mla_decode_work(s, gfx);
  HipattnRun run = make_run(log, std::move(w));
  if (check) {
    const reference::AttentionResult ref = h.reference();
    const MlaCompare st = compare_mla(h, r.got, ref);
    Check k;
    k.compared = st.compared;
    k.bad = st.bad;
    k.max_abs = st.worst;
    k.max_rel = st.worst_rel;
    char buf[96];
    std::snprintf(buf, sizeof buf, "max|err| lse %.2e", st.worst_lse);
    k.detail = st.bad > 0 ? st.failures.front() : buf;
    set_check(run, k);
  }
  return run;
}

// ---- 4. paged decode ----

std::string PagedDecodeProblem::str() const {
  return std::string(bf16 ? "bf16" : "f16") + (fp8_kv ? " fp8 kv" : "") + " d" + std::to_string(head_size) + " b" +
         std::to_string(batch) + " h" + std::to_string(heads_q) + "/" + std::to_string(heads_kv) + " ctx" +
         std::to_string(ctx) + " q" + std::to_string(q_len) + " page" + std::to_string(page_size);
}

WorkList paged_decode_work(const PagedDecodeProblem& s, emu::Gfx gfx) {
  const EmuTarget t = emu_target(HipattnFamily::paged_decode, gfx);
  std::vector<int32_t> cu, lens;
  const PagedDecodeParams p = paged_shape_params(s, t, cu, lens);
  const PagedDecodePlan plan = plan_paged_decode(p, s.options, PlanDevice{t.target, t.cus});
  WorkList w;
  testing::emu_paged::visit_target_config(t.target, p, plan, [&]<class Cfg>() { paged_launch_work<Cfg>(p, plan, w); });
  w.label = "paged decode " + s.str() + " " + gfx_str(gfx) + " " + paged_plan_str(plan) + ": " + plan_str(w);
  return w;
}

HipattnRun run_paged_decode(const PagedDecodeProblem& s, emu::Gfx gfx, bool check, const LaunchOptionsFor& opt) {
  using namespace testing::emu_paged;
  const EmuTarget t = emu_target(HipattnFamily::paged_decode, gfx);
  const auto co = code_object(HipattnFamily::paged_decode, t);
  const testing::DecodeSpec spec = paged_spec(s, t);
  const testing::DecodeHostProblem m(spec);
  const testing::emu_dispatch::IoHost io({}, spec.bf16, m.h.spec.kv_dtype, int64_t(m.num_seqs()) * m.q_len(),
                                         spec.num_q_heads, spec.head_size, m.h.q);
  EmuDecodeProblem ep(m, io);
  EmuLaunches log;
  log.options_for = opt;
  const RunResult r = run_on_emulator(*co, t, ep, s.options, std::nullopt, &log);
  if (!r.plan_mismatch.empty())
    throw std::runtime_error("paged decode " + s.str() + ": the device plan: " + r.plan_mismatch);
  WorkList w = paged_decode_work(s, gfx);
  HipattnRun run = make_run(log, std::move(w));
  if (check) {
    const reference::AttentionResult ref = io_reference(m, io);
    const testing::emu_dispatch::IoStats st = compare(ep, ref, r);
    set_io_check(run, st, ref);
  }
  return run;
}

}  // namespace hipattn::timing
