// tests/timing/aiter_decode.hpp: harnesses that run AITER's hand-written decode code objects (MLA decode
// with persistent scheduling, paged-attention decode) on the emulator, with the argument layouts and
// launch geometry of AITER's launchers, and check every output element against a float64 reference.
//
// Sources of the facts used here (ROCm/aiter, read with the search tools; layouts and meanings only, no
// AITER code is copied):
//   * MLA: csrc/py_itfs_cu/asm_mla.cu (struct KernelArgs: every field padded to 16 bytes; persistent
//     launch: grid = (work_indptr.size(0) - 1) = number of CUs, block 256; ptr_STP = a device table whose
//     entries 0 / 1 are the addresses of work_indptr / work_info_set), aiter/mla.py (persistent mode:
//     partial output [rows, 1, heads, 512] f32 and partial LSE [rows, 1, heads, 1] f32, final output
//     [tokens, heads, 512] bf16, then mla_reduce_v1 merges the splits), op_tests/test_mla_persistent.py
//     (page size 1, kv_granularity max(page, 16), max_split_per_batch 32, fast_mode: the v1.2 generator),
//     csrc/kernels/mla/metadata/v1_2_device.cuh and v1_comm.cuh (the generator, MlaWorkInfo).
//     Every MLA object overwrites s_log2_plen with 0 (read from its disassembly): page size 1 only.
//   * PA: csrc/py_itfs_cu/asm_pa.cu (pa_fwd: grid (kv heads, batch), block 256, sclg2e = log2(e)/sqrt(d),
//     K [blocks, kv heads, d/8, block, 8], V [blocks, kv heads, block/8, d, 8] (op_tests asm_V_shuffle),
//     block tables [batch, mblk] int32, context lengths [batch] int32, output [tokens, heads, d] bf16).
//     The objects' own 272-byte layout (--notes) has a field `mtp` at 224 before GQA (240) and QTP (256).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "emu.hpp"

namespace hipattn::timing {

// ---------------------------------------------------------------- MLA decode (persistent)
struct AiterMlaKernel {
  std::string file;    // the code object, under calibration_dir()
  std::string symbol;  // its kernel (mangled)
  std::string name;    // e.g. "gfx942/mla_a16w16_qh16_m16x4_n16x1_coex0_mask1_ps"
  emu::Gfx gfx = emu::Gfx::gfx942;
  bool fp8 = false;    // Q and KV fp8 e4m3 (a8w8; gfx942 e4m3fnuz, gfx950 e4m3fn) with per-tensor scales, else bf16
  int q_heads = 16;    // query heads per KV head (the object's gqa ratio; MLA has one KV head)
  int q_len = 1;       // the most query tokens per sequence the object takes (m16x4: up to 4)
  // Mnemonics of the object the emulator does not implement yet (empty: it can run).
  std::vector<std::string> missing;
};
// The MLA objects of AITER's mla_asm.csv present under calibration_dir() (none when it is empty).
std::vector<AiterMlaKernel> aiter_mla_kernels();

// One decode step: `batch` sequences of `ctx` cached tokens each, `q_len` new tokens each (bottom-right
// causal among them), `heads` query heads on one latent KV head (576 = kv_lora 512 + rope 64; V = the
// first 512 of the same row). Sequence b holds ctx - (b % 3) * 5 tokens (varied lengths), at least 1.
struct MlaShape {
  int batch = 1, heads = 16, ctx = 64, q_len = 1;
  int page_size = 1;  // tokens per page of the KV cache (these objects take 1)
};

// The persistent schedule AITER's v1.2 generator (get_mla_metadata_v1, fast_mode) makes for a shape.
struct MlaWork {
  int batch, partial_qo_loc, qo_start, qo_end, kv_start, kv_end, kv_offset;
};
struct MlaSchedule {
  std::vector<int> work_indptr;         // [num_cus + 1]
  std::vector<MlaWork> works;           // MlaWorkInfo, 8 int32 each on the device (last one padding)
  std::vector<int> reduce_indptr;       // [q tiles + 1]: the partials of each split q tile
  std::vector<int> reduce_final_map;    // [q tiles][2]: qo_start, qo_end of each split q tile
  std::vector<int> reduce_partial_map;  // first partial row of each split
  int partial_rows = 0;                 // rows of the partial output / LSE buffers the works use
};
MlaSchedule aiter_mla_schedule(const AiterMlaKernel& k, const MlaShape& s, int num_cus);

// A persistent launch: grid = `num_cus` workgroups of 256 threads, each walking its part of the work list.
// With `check`, inputs are random (never zero), every output buffer is NaN before the launch, the split
// partials are merged on the host in float64 (AITER's separate mla_reduce_v1 kernel is not among the
// objects) and every element of the final output, of every partial output and of every partial LSE is
// compared with the float64 reference.
KernelRun run_aiter_mla(const AiterMlaKernel& k, const MlaShape& s, int num_cus, uint64_t seed,
                        const emu::LaunchOptions& opt, bool check);
// Per workgroup (dispatch order, x): the KV blocks of 16 tokens (the generator's kv_granularity) of its
// work items, summed over the items (ceil((kv_end - kv_start) / 16) each).
std::vector<int> aiter_mla_work(const AiterMlaKernel& k, const MlaShape& s, int num_cus);

// ---------------------------------------------------------------- paged attention decode
struct AiterPaKernel {
  std::string file, symbol, name;
  emu::Gfx gfx = emu::Gfx::gfx942;
  int gqa = 8;          // query heads per KV head
  int block_size = 16;  // tokens per page
  int head_dim = 128;
  std::vector<std::string> missing;
};
// pa_bf16_noquant_gqa8_1tg_4w of each target present under calibration_dir().
std::vector<AiterPaKernel> aiter_pa_kernels();

// One decode token per sequence; sequences hold about `ctx` tokens (the last page partial when ctx is
// not a multiple of page_size; sequence b holds max(1, ctx - (b % 3) * 5) tokens), pages scattered at
// random in the cache.
struct PaShape {
  int batch = 1, heads_q = 8, heads_kv = 1, ctx = 64, page_size = 16;
};
// grid = (heads_kv, batch), block 256; no split (each workgroup does a whole sequence).
KernelRun run_aiter_pa(const AiterPaKernel& k, const PaShape& s, uint64_t seed, const emu::LaunchOptions& opt,
                       bool check);
// Per workgroup (dispatch order: x = KV head fastest, then y = sequence): KV pages it reads.
std::vector<int> aiter_pa_work(const AiterPaKernel& k, const PaShape& s);

}  // namespace hipattn::timing
