// emu/core.hpp: the emulator's internal model: parsed operands and instructions, the wave's
// state with its wait-count bookkeeping, the workgroup (LDS with race tracking), and the handler
// registry. Handlers (ops_*.cpp) read and write registers only through Wave's accessors, which is
// where the wait-count hazard check lives.
#pragma once
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "emu.hpp"

namespace hipattn::emu {

constexpr int kLanes = 64;
constexpr uint64_t kAllLanes = ~0ull;

// SGPR index space of the hardware operand encoding (CDNA3 ISA 3.1.1 / table "SGPR and special
// register operands"): s0..s101, flat_scratch 102-103, xnack_mask 104-105, vcc 106-107, m0 124,
// exec 126-127. ttmp (108-123) are not used by kernels.
enum SReg : uint16_t {
  kFlatScratchLo = 102, kXnackLo = 104, kVccLo = 106, kVccHi = 107, kM0 = 124, kNull = 125,
  kExecLo = 126, kExecHi = 127, kNumSRegs = 128
};

struct Operand {
  enum Kind : uint8_t { none, sgpr, vgpr, agpr, imm, special, off };
  Kind kind = none;
  uint16_t reg = 0;   // first register
  uint8_t count = 1;  // 32-bit registers covered
  bool neg = false, abs = false, sext = false;
  // imm: integer value (inline integers sign-extended) or a float inline constant (fimm) or a literal.
  bool is_float = false, is_literal = false;
  int64_t ival = 0;
  double fval = 0.0;
  // special constant sources (src_shared_base, src_private_base, ...): their operand code.
  uint16_t special_code = 0;
  std::string text;
};

// Instruction modifiers as llvm-objdump prints them.
struct Modifiers {
  int64_t offset = 0;
  int offset0 = 0, offset1 = 0;
  bool glc = false, slc = false, nt = false, sc0 = false, sc1 = false, gds = false, lds = false;
  bool offen = false, idxen = false;
  bool clamp = false;
  int omod = 0;  // 0: none, 1: mul:2, 2: mul:4, 3: div:2
  uint8_t op_sel = 0, op_sel_hi = 0x7, neg_lo = 0, neg_hi = 0;
  bool has_op_sel_hi = false;
  // DPP (CDNA3 ISA 6.2 / "DPP" encoding)
  bool dpp = false;
  int dpp_ctrl = -1;  // encoded DPP_CTRL
  uint8_t row_mask = 0xF, bank_mask = 0xF;
  bool bound_ctrl = false;
  // SDWA (CDNA3 ISA 6.1 "SDWA"): selectors 0-3 bytes, 4-5 words, 6 dword
  bool sdwa = false;
  uint8_t dst_sel = 6, dst_unused = 0, src0_sel = 6, src1_sel = 6;
  // MFMA broadcast controls
  int cbsz = 0, abid = 0, blgp = 0;
  // ds_swizzle_b32 offset (encoded)
  int swizzle = -1;
  // s_waitcnt
  int vmcnt = -1, expcnt = -1, lgkmcnt = -1;
  // v_bitop3
  int bitop3 = 0;
  // DPP fetch-inactive (fi:1) / permlane swap fi
  bool fi = false;
  // branch target (absolute address) for SOPP branches
  uint64_t target = 0;
};

struct Wave;
struct Instruction;
using Handler = void (*)(Wave&, const Instruction&);

struct Instruction {
  uint64_t addr = 0;
  uint32_t size = 4;
  std::string mnemonic;  // as printed, e.g. v_add_f32_e32
  std::string base;      // without the encoding suffix (_e32, _e64, _sdwa, _dpp)
  enum Enc : uint8_t { plain, e32, e64, sdwa, dpp } enc = plain;
  std::vector<Operand> ops;
  Modifiers mods;
  std::string text;  // the whole line, for error messages
  Handler fn = nullptr;
  size_t next = 0;   // index of the next instruction; branch index resolved by the loader
  size_t target_index = SIZE_MAX;
};

// ---- handler registry ----
std::unordered_map<std::string, Handler>& registry();
struct Register {
  Register(std::initializer_list<const char*> names, Handler h) {
    for (const char* n : names) registry()[n] = h;
  }
};
#define EMU_CAT2(a, b) a##b
#define EMU_CAT(a, b) EMU_CAT2(a, b)
// EMU_OP("s_add_u32", "other_name") { body using `w` and `in` }  (unique names via __COUNTER__, so
// several EMU_OPs may come from one macro line)
#define EMU_OP(...) EMU_OP_I(__COUNTER__, __VA_ARGS__)
#define EMU_OP_I(N, ...) EMU_OP_II(N, __VA_ARGS__)
#define EMU_OP_II(N, ...)                                                                               \
  static void EMU_CAT(emu_op_, N)(::hipattn::emu::Wave & w, const ::hipattn::emu::Instruction& in);    \
  static ::hipattn::emu::Register EMU_CAT(emu_reg_, N)({__VA_ARGS__}, &EMU_CAT(emu_op_, N));            \
  static void EMU_CAT(emu_op_, N)([[maybe_unused]] ::hipattn::emu::Wave & w,                           \
                                  [[maybe_unused]] const ::hipattn::emu::Instruction& in)

// ---- workgroup ----
struct Workgroup {
  std::vector<uint8_t> lds;
  // race tracking, per LDS byte: the last writer wave and its barrier generation; the reader waves
  // (bit mask) of the current generation.
  std::vector<int16_t> writer;
  std::vector<uint32_t> writer_gen;
  std::vector<uint32_t> readers;
  std::vector<uint32_t> reader_gen;
  uint32_t generation = 1;
  uint32_t id[3] = {0, 0, 0};
  // LDS bytes written by a buffer load with `lds` (LDS DMA, counted in the issuing wave's vmcnt):
  // the issuing wave (-1: none) and its vmcnt sequence number; reading such a byte before that wave's
  // s_waitcnt vmcnt covers the load is a hazard. Allocated on the first DMA of a launch.
  std::vector<int16_t> dma_wave;
  std::vector<uint32_t> dma_seq;
  std::vector<Wave*> waves;
};

struct Launch {
  const CodeObject* co = nullptr;
  const KernelInfo* kernel = nullptr;
  Gfx gfx = Gfx::gfx942;
  Memory* mem = nullptr;
  LaunchOptions opt;
  LaunchStats* stats = nullptr;
  uint64_t kernarg_addr = 0, dispatch_addr = 0;
};

// ---- wave ----
struct Pending {
  uint8_t counter = 0;  // 0 none, 1 vmcnt, 2 lgkmcnt
  uint32_t seq = 0;     // event number in that counter's sequence
  uint64_t pc = 0;      // issuing instruction, for messages
};

// One memory access of one lane, logged while a traced launch executes an instruction (timing.hpp).
struct Access {
  uint64_t addr;
  uint32_t bytes;
  bool lds;
};

struct LgkmEvent {
  bool smem;
  bool done;
};

struct Wave {
  Launch* launch = nullptr;
  Workgroup* wg = nullptr;
  int wave_id = 0;  // within the workgroup
  const std::vector<Instruction>* code = nullptr;
  size_t pc = 0;  // index into code
  bool done = false, at_barrier = false;
  uint32_t s[kNumSRegs] = {};
  std::vector<std::array<uint32_t, kLanes>> v, a;  // v[reg][lane], a[reg][lane]
  bool scc = false;
  uint32_t mode = 0;
  // MODE.gpr_idx_en (CDNA3 ISA 6.6 "VGPR Indexing"): set by s_set_gpr_idx_on, cleared by
  // s_set_gpr_idx_off. While set, the VGPR operands of VALU instructions that M0[15:12] names are
  // offset by M0[7:0] (the scheduler rewrites the instruction's operands: gpr_indexed in machine.cpp).
  bool gpr_idx_en = false;
  // wait-count state (CDNA3 ISA 4.4 "Data Dependency Resolution", s_waitcnt)
  Pending pend_s[kNumSRegs];
  std::vector<Pending> pend_v, pend_a;
  uint32_t vm_issued = 0, vm_done = 0;
  std::vector<LgkmEvent> lgkm;  // every LDS / SMEM event in issue order
  size_t lgkm_first_open = 0;
  const Instruction* cur = nullptr;
  std::vector<Access>* access_log = nullptr;  // set while a traced launch executes an instruction

  Wave() : v(256), a(256), pend_v(256), pend_a(256) {}

  uint64_t exec() const { return uint64_t(s[kExecLo]) | (uint64_t(s[kExecHi]) << 32); }
  void set_exec(uint64_t m) { s[kExecLo] = uint32_t(m); s[kExecHi] = uint32_t(m >> 32); }
  uint64_t vcc() const { return uint64_t(s[kVccLo]) | (uint64_t(s[kVccHi]) << 32); }
  void set_vcc(uint64_t m) { s[kVccLo] = uint32_t(m); s[kVccHi] = uint32_t(m >> 32); }

  [[noreturn]] void fail(Error::Kind k, const std::string& msg) const;
  std::string where() const;

  // hazard bookkeeping
  void check_ready(Pending& p, const char* file, int reg, bool write);
  void mark(Pending& p, uint8_t counter, uint32_t seq);
  uint32_t issue_vm() { return ++vm_issued; }
  uint32_t issue_lgkm(bool smem) { lgkm.push_back({smem, false}); return uint32_t(lgkm.size()); }
  void waitcnt(int vmcnt, int lgkmcnt);

  // ---- scalar operands ----
  uint32_t sread32(const Operand& o);
  uint64_t sread64(const Operand& o);
  void swrite32(const Operand& o, uint32_t v);
  void swrite64(const Operand& o, uint64_t v);
  void sread_n(const Operand& o, uint32_t* dst, int n);  // n dwords of an SGPR range

  // ---- vector operands (all 64 lanes) ----
  // 32-bit value of `o` for every lane (SGPR / constants broadcast). `dword` selects the dword of a
  // multi-register operand. No float modifiers are applied.
  void vread32(const Operand& o, uint32_t* out, int dword = 0);
  void vread64(const Operand& o, uint64_t* out);
  // Writes lanes of `mask` (pass exec()).
  void vwrite32(const Operand& o, const uint32_t* val, uint64_t mask, int dword = 0);
  void vwrite64(const Operand& o, const uint64_t* val, uint64_t mask);
  // direct register access with hazard checks
  std::array<uint32_t, kLanes>& vreg(const Operand& o, int dword, bool write);
};

// ---- helpers shared by handlers ----
inline std::string hex(uint64_t v) {
  static const char* d = "0123456789abcdef";
  std::string r;
  do { r.insert(r.begin(), d[v & 15]); v >>= 4; } while (v);
  return "0x" + r;
}
inline float as_f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t as_u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline double as_d(uint64_t u) { double f; std::memcpy(&f, &u, 8); return f; }
inline uint64_t as_u64(double f) { uint64_t u; std::memcpy(&u, &f, 8); return u; }
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);  // round to nearest even, IEEE overflow to inf
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);  // round to nearest even, NaN kept quiet

// Source operand i (index into in.ops) as 32-bit values with SDWA selection and DPP applied to the
// first source (src index 0 = in.ops[first_src]).
void read_src32(Wave& w, const Instruction& in, int op_index, int src_index, uint32_t* out);
// Float view of source: applies neg/abs modifiers (VOP3 / SDWA) to f32 values.
void read_srcf(Wave& w, const Instruction& in, int op_index, int src_index, float* out);
// Destination write of a VALU result with SDWA dst_sel and clamp/omod for floats (is_float).
void write_dst32(Wave& w, const Instruction& in, int op_index, uint32_t* val, bool is_float);
float apply_omod_clamp(const Instruction& in, float x);
// Lanes a VALU instruction writes: EXEC, narrowed by DPP row/bank masks and invalid DPP sources.
uint64_t dpp_write_mask(Wave& w, const Instruction& in);
// Host pointer of LDS bytes [addr, addr + bytes) of the wave's workgroup: bounds-checked, and
// checked for races with other waves of the workgroup since the last s_barrier.
// `dma`: a write by an LDS DMA (LaunchOptions::wave_quantum > 0 relaxes the race check for those).
uint8_t* lds_access(Wave& w, uint64_t addr, size_t bytes, bool write, bool dma = false);
// Global memory access of one lane (bounds-checked).
uint8_t* global_access(Wave& w, uint64_t addr, size_t bytes, bool write, int lane);

}  // namespace hipattn::emu
