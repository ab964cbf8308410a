// emu/timing.hpp: the timing layer of the emulator. A functional launch (emu.hpp) records, when
// LaunchOptions::trace is set, what every wave executed: the instruction, and for memory instructions
// what the addresses made of it (LDS bank-conflict cycles, 64-byte segments, bytes). This file replays
// such a trace on a model of one compute unit (4 SIMDs, their issue rules, the matrix pipe, the LDS,
// the vector-memory path with a latency and the CU's share of HBM bandwidth, s_waitcnt, s_barrier,
// s_setprio), and scales one CU's time to the device.
//
// Every rule and number is in docs/AMD-TIMING.md with its source (§6 parameters, §7 rules); the comments here
// name the rule, that file gives the evidence. Units: shader clocks unless a name says otherwise.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core.hpp"  // Instruction
#include "emu.hpp"

namespace hipattn::emu {

// ---------------------------------------------------------------- the trace
// One executed instruction of one wave. `pc` indexes the kernel's code (CodeObject::code).
//   LDS (ds_*):          a = bank cycles the access needs (conflicts included), b = bytes
//   vector memory:        a = distinct 64-byte segments touched, b = bytes moved (both for LDS DMA)
//   branches:             a = 1 when taken
struct TraceOp {
  uint32_t pc = 0;
  uint32_t a = 0, b = 0;
};

struct WaveTrace {
  std::vector<TraceOp> ops;
};

struct WorkgroupTrace {
  uint32_t id[3] = {0, 0, 0};
  std::vector<WaveTrace> waves;
};

// Filled by launch() when LaunchOptions::trace points at it: the first `max_workgroups` workgroups of
// the grid, in dispatch order (x fastest). It keeps its own copy of the kernel's description and code,
// so it outlives the code object.
struct Trace {
  uint64_t max_workgroups = UINT64_MAX;
  KernelInfo kernel;
  std::vector<Instruction> code;
  Gfx gfx = Gfx::gfx942;
  uint32_t lds_bytes = 0;    // per workgroup, fixed + dynamic
  uint32_t threads = 0;      // per workgroup
  std::vector<WorkgroupTrace> workgroups;
};

// ---------------------------------------------------------------- the model of one CU
// The parameters of one target (docs/AMD-TIMING.md §6 gives each one's source).
struct CuParams {
  Gfx gfx = Gfx::gfx942;
  int cus = 304;                  // compute units of the device
  double clock_ghz = 2.1;         // the shader clock the kernel runs at (fitted: clock under load)
  double peak_clock_ghz = 2.1;    // the data sheet's
  int lds_banks = 32;             // 4-byte banks; one bank cycle serves `lds_banks` dwords
  int lds_port_clocks = 2;        // clocks a SIMD pair's LDS port takes per bank cycle (half the CU's rate)
  uint32_t lds_bytes = 64 * 1024; // per CU
  int wave_slots_per_simd = 8;
  int regs_per_simd_lane = 512;   // unified VGPR + AGPR file per SIMD lane
  double l1_bytes_per_clk = 64;   // vector L1 to the CU (one 64-byte segment per clock)
  int xcds = 8;                   // accelerator dies; each has its own L2
  double l2_xcd_bytes_per_clk = 2048 * 0.9;  // one XCD's L2 read bandwidth (16 channels x 128 B, arbitration 0.9)
  double l2_cu_max_bytes_per_clk = 128;      // the most one CU reads from L2 per clock
  int active_cus = 0;             // CUs the grid occupies (0: all): they share L2 and HBM
  double hbm_tb_s = 4.2;          // device memory bandwidth the CUs share
  double lat_l2_ns = 107;         // vector load, L2 hit, issue to data
  double lat_hbm_ns = 350;        // vector load from HBM
  int lat_lds = 27;               // LDS read, issue to data after its port time
  int lat_smem = 64;              // scalar load
  int lat_barrier = 16;           // last arrival to release
  int trans_clocks = 16;          // transcendental VALU op of a wave
  int busy_cus() const { return active_cus > 0 && active_cus < cus ? active_cus : cus; }
  // the CU's share of HBM bytes per clock when every busy CU streams
  double hbm_bytes_per_clk() const { return hbm_tb_s * 1e12 / (double(busy_cus()) * clock_ghz * 1e9); }
  // the CU's share of its XCD's L2 (busy CUs spread evenly over the XCDs), at most what one CU reads
  double l2_bytes_per_clk() const {
    const double per_xcd = std::max(1.0, double(busy_cus()) / xcds);
    return std::min(l2_cu_max_bytes_per_clk, l2_xcd_bytes_per_clk / per_xcd);
  }
  double lat_l2() const { return lat_l2_ns * clock_ghz; }
  double lat_hbm() const { return lat_hbm_ns * clock_ghz; }
};
CuParams mi300x_params();  // gfx942
CuParams mi355x_params();  // gfx950

// The instruction classes the issue model knows (one functional unit / issue port each).
enum class IssueClass : uint8_t {
  valu, trans, pk_f32, mfma, salu, smem, vmem, lds, branch,  // use a port
  nop, waitcnt, barrier, setprio, endpgm, internal,          // do not
  unknown                                                    // no rule: the model refuses it
};
const char* issue_class_name(IssueClass c);

// Static timing facts of one instruction (from its mnemonic and operands).
struct OpInfo {
  IssueClass cls = IssueClass::unknown;
  int passes = 0;        // MFMA: matrix-pipe passes (4 clocks each)
  int src_bytes = 0;     // MFMA: bytes per lane of the widest A/B source
  int nop = 0;           // s_nop N: N + 1 wait states
  int vmcnt = -1, lgkmcnt = -1;
  int prio = 0;          // s_setprio
  bool lds_dma = false;  // vector memory that writes LDS
  bool store = false;
};
OpInfo classify(const Instruction& in, Gfx gfx);
// Mnemonics of `k` the model has no rule for (empty when it can time every instruction).
std::vector<std::string> untimed_mnemonics(const CodeObject& co, const KernelInfo& k);

// What one CU did while running a set of workgroups.
struct CuResult {
  double cycles = 0;                 // until the last workgroup ended
  std::vector<double> wg_start, wg_end;
  uint64_t instructions = 0;
  double nop_clocks = 0;             // s_nop wait states (4 clocks each), summed over the waves
  double mfma_busy = 0;              // matrix-pipe clocks, summed over the 4 SIMDs
  double valu_busy = 0;              // VALU-port clocks, summed over the SIMDs
  double lds_busy = 0, vmem_bytes = 0, dram_bytes = 0;
  double vmem_path = 0;              // clocks of the CU's vector-memory path (64-byte segments)
  int resident = 0;                  // workgroups resident at once
};

// How many workgroups of `t`'s kernel fit on one CU (registers, wave slots, LDS).
int resident_workgroups(const Trace& t, const CuParams& p);

// Runs workgroups `wgs` of `t` (indices into t.workgroups; each may repeat) on one CU: `resident`
// at a time (0: as occupancy allows), the next starting when one ends. `dram_fraction` of every
// vector-memory byte comes from HBM (the rest from L2): the caller derives it from the problem's
// footprint (docs/AMD-TIMING.md §7, rule 8).
CuResult simulate_cu(const Trace& t, const std::vector<int>& wgs, const CuParams& p, double dram_fraction,
                     int resident = 0);

// ---------------------------------------------------------------- from one CU to the device
// A workgroup's time as prologue + per_tile x tiles (fitted on two simulated lengths, with the CU
// full of workgroups of that length), and the device's makespan when the grid's workgroups
// (work[i] tiles each, in dispatch order) go to the first free of cus x resident slots.
struct LinearCost {
  double prologue = 0, per_tile = 0;  // clocks
};
double device_cycles(const std::vector<int>& work, const LinearCost& c, int cus, int resident);

}  // namespace hipattn::emu
