// tests/timing/aiter_fwd.hpp: AITER's prefill forward code objects (fmha fwd v3, hand-written assembly,
// ../shared/calibration/aiter/<gfx>/fwd_*.co) run on the emulator with their launcher's argument layout
// and grid, checked against a float64 reference.
//
// What the launcher does (ROCm/aiter csrc/cpp_itfs/mha_fwd.cu, fmha_fwd_v3 / init_fmha_fwd_v3_args /
// get_grid_dim; struct fmha_fwd_v3_args in csrc/include/mha_fwd.h; docs/AMD-TIMING.md section 4), as
// this harness repeats it for batch mode (BSHD, no padding, no group mode):
//   * arguments: one packed struct, every field padded to 16 bytes (offsets in the objects'
//     `llvm-readelf --notes`); strides in bytes; Ts = ts_qo * Seqs; scalar = softmax scale;
//     gqa = heads_q / heads_kv; msk_opt = 5, or 3 when causal and (heads_q % 8 != 0 or
//     seqlen_q > 16384), 0 for gfx942's d192 object; lse = 1 (the LSE is written: [b, h, s_q] f32);
//     fp8 objects: per-tensor descales of Q, K, V (one f32 each, batch / head strides 0);
//   * block: 256 threads for d_qk 192 / d_v 128, else 512;
//   * grid: (ceil(ceil(s_q / ts_qo) / tg_div), heads_q, batch), tg_div = 2 when causal (a workgroup
//     takes a head and a tail Q tile), else 1; gfx942's d192 object: (heads_q, ceil(s_q / ts_qo), batch).
// The causal mask is bottom-right (key j visible to query i when j <= i + s_k - s_q).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "emu.hpp"

namespace hipattn::timing {

struct AiterFwdKernel {
  std::string file;    // absolute path of the code object
  std::string name;    // file stem, e.g. "fwd_hd128_bf16_rtne"
  std::string symbol;  // kernel symbol (AITER's csv knl_name)
  emu::Gfx gfx = emu::Gfx::gfx942;
  int d_qk = 128, d_v = 128;
  bool causal = false, fp8 = false;
  int ts_qo = 256, ts_kv = 32;  // Q rows per tile, keys per KV tile (csv)
  int block_threads = 512;
};

// The batch-mode forward objects present under calibration_dir() (AITER's fmha_fwd.csv of each target,
// rows of mode 0 whose code object exists), gfx942 first; empty when there is no calibration folder.
std::vector<AiterFwdKernel> aiter_fwd_kernels();
// The one of aiter_fwd_kernels() whose target and file stem match; nullptr when absent.
const AiterFwdKernel* find_aiter_fwd(emu::Gfx gfx, const std::string& name);

struct FwdShape {
  int batch = 1, heads_q = 1, heads_kv = 1, seqlen_q = 256, seqlen_k = 256;
};

// The launcher's msk_opt (tune_opt) for this kernel and shape.
int aiter_fwd_msk_opt(const AiterFwdKernel& k, const FwdShape& s);
// The launcher's grid.
emu::Dim3 aiter_fwd_grid(const AiterFwdKernel& k, const FwdShape& s);
// Per workgroup, in dispatch order (x fastest, then y, then z): the Q tiles it processes, as the
// kernel's prologue remaps its workgroup ids (msk_opt) and pairs a head and a tail tile (tg_div = 2).
std::vector<std::vector<int>> aiter_fwd_q_tiles(const AiterFwdKernel& k, const FwdShape& s);
// Per workgroup, in dispatch order: the number of ts_kv-key tiles it processes (the sum over its Q
// tiles of the kernel's KV loop trip count: all ceil(s_k / ts_kv) tiles, or for causal tile t the
// tiles up to key min((t + 1) ts_qo + s_k - s_q, s_k), at least one). Checked against the MFMAs the
// emulator executes: MFMA MACs = sum(work) x aiter_fwd_macs_per_tile, with no constant part.
std::vector<int> aiter_fwd_work(const AiterFwdKernel& k, const FwdShape& s);
// Multiply-accumulates of one ts_qo x ts_kv tile: QK^T (ts_qo ts_kv d_qk) plus PV (ts_qo ts_kv d_v).
int64_t aiter_fwd_macs_per_tile(const AiterFwdKernel& k);

// Tolerances of the comparison with the float64 reference (see aiter_fwd.cpp for why these values).
struct FwdTolerance {
  double out_rel_scale;  // |O - ref| <= out_rel_scale * max|ref O| (over the whole output)
  double lse_abs;        // |LSE - ref| <= lse_abs (natural log)
};
FwdTolerance aiter_fwd_tolerance(const AiterFwdKernel& k);

// Whether the harness runs `k` on `s` (why not, in `why`): the launcher's and the object's limits, and
// the shapes the reference can check (causal needs seqlen_q <= seqlen_k: no row without keys).
bool aiter_fwd_supported(const AiterFwdKernel& k, const FwdShape& s, std::string* why = nullptr);

// The emulator options these objects need on top of the defaults (emu.hpp LaunchOptions): the waves
// of a workgroup interleaved (all of them: the gfx950 fp8 and d192 objects refill an LDS buffer by DMA
// while other waves' reads of it, issued earlier in the same barrier interval, are in flight), and for
// gfx950's fp8 object no lgkmcnt check of LDS results (it feeds MFMAs with ds_read_b64_tr_b8 results
// that no s_waitcnt covers, e.g. lgkmcnt(8) with 8 reads outstanding, relying on the MFMA issue time
// in between to outlast the LDS latency: a timing fact the functional emulator cannot check). Every
// other check stays on. A caller (the tests, the timing layer) starts from these and passes them to
// run_aiter_fwd.
emu::LaunchOptions aiter_fwd_options(const AiterFwdKernel& k);

// One launch of `k` over `s` with fresh random inputs from `seed` (bf16, or fp8 codes with per-tensor
// descales), O and LSE poisoned with NaN; `opt` goes to emu::launch unchanged. With `check`, every O and
// LSE element is compared with the float64 reference. An emulator error (fault, hazard, race,
// unimplemented instruction) is caught and reported in `detail` (the run then does not pass), as is a
// shape aiter_fwd_supported refuses. KernelRun::max_abs_err / max_rel_err are O's (rel: of max|ref O|);
// vgprs is the descriptor's unified VGPR + AGPR count (granule 8).
KernelRun run_aiter_fwd(const AiterFwdKernel& k, const FwdShape& s, uint64_t seed, const emu::LaunchOptions& opt,
                        bool check);

}  // namespace hipattn::timing
