// emu/emu.hpp: a functional emulator of gfx942 (CDNA3) and gfx950 (CDNA4) code objects, for
// executing hipattn's AMD kernels in CI without an AMD GPU.
//
// What it does:
//   * loads an AMDGPU code object (ELF): the kernel descriptor (`<kernel>.kd`), the metadata note
//     (argument layout, hidden arguments, LDS and register counts, read with llvm-readelf --notes),
//     and the instructions (decoded by LLVM: llvm-objdump -d; this emulator has no decoder of its own);
//   * executes one kernel launch functionally: wave64 with EXEC, VCC, SCC, M0; SGPR, VGPR and AGPR
//     files; LDS per workgroup (fixed + dynamic bytes of the launch); global memory as host buffers
//     with bounds checks (an access outside every buffer is an error); the waves of a workgroup
//     interleaved at s_barrier; workgroups one after another;
//   * checks what a functional run would hide but hardware punishes:
//       - wait counts: a vector-memory, LDS or scalar-memory result arrives only at the s_waitcnt that
//         covers it (vmcnt in order; LDS in order within lgkmcnt; scalar loads out of order, so only
//         lgkmcnt(0) covers them). Reading (or overwriting) a destination register before then is an
//         error naming the kernel, the program counter and the instruction;
//       - LDS races: an LDS byte written by one wave and read or written by another wave of the same
//         workgroup with no s_barrier between them is an error.
//
// What it cannot show: timing, real memory latency, real concurrency between workgroups, the hardware's
// exact transcendental approximations (v_exp_f32, v_rcp_f32, ... are computed exactly), and the
// instruction-issue hazards that need s_nop (MFMA result latency and the like).
//
// Instruction semantics follow AMD's "AMD Instinct MI300 (CDNA3) Instruction Set Architecture" and
// "AMD Instinct CDNA4 Instruction Set Architecture" reference guides; each handler cites its section.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hipattn::emu {

// Every failure of the emulator: a fault of the kernel (out-of-bounds access, hazard, race), an
// instruction the emulator does not implement, or a malformed code object.
class Error : public std::runtime_error {
 public:
  enum class Kind { code_object, unimplemented, memory_fault, hazard, lds_race, launch, limit };
  Error(Kind k, const std::string& what) : std::runtime_error(what), kind(k) {}
  Kind kind;
};
const char* kind_name(Error::Kind k);

enum class Gfx { gfx942, gfx950 };
const char* gfx_name(Gfx g);

// The LLVM tools the loader runs (defaults: $HIPATTN_AMD_OBJDUMP, $HIPATTN_AMD_READELF,
// $HIPATTN_AMD_CXXFILT, else the same names on PATH).
struct Tools {
  std::string objdump, readelf, cxxfilt;
  static Tools from_env();
};

struct KernelArg {
  uint32_t offset = 0, size = 0;
  std::string value_kind;  // by_value, global_buffer, hidden_block_count_x, ...
};

struct KernelInfo {
  std::string name;       // mangled symbol
  std::string demangled;  // llvm-cxxfilt's spelling
  // The kernel's manifest (platform/fixed_string.hpp HIPATTN_KERNEL_MANIFEST: "kernel=unified_2d
  // target=gfx942 ..."), read from the constant _ZZ<encoding>E16hipattn_manifest of the code object;
  // empty for a kernel without one (the emulator's and tests/isa's own test kernels).
  std::string manifest;
  // How messages name the kernel: its manifest, else its demangled name, else its symbol.
  const std::string& label() const { return !manifest.empty() ? manifest : !demangled.empty() ? demangled : name; }
  uint64_t entry = 0;     // address of the first instruction
  uint64_t code_end = 0;  // one past the last byte of its code (its symbol's size, else the next kernel)
  uint32_t group_segment_fixed_size = 0, private_segment_fixed_size = 0, kernarg_segment_size = 0;
  uint32_t kernarg_align = 8;
  int sgpr_count = 0, vgpr_count = 0, agpr_count = 0, wavefront_size = 64;
  std::vector<KernelArg> args;
  // kernel descriptor fields
  uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;
  uint16_t code_properties = 0;
  uint16_t kernarg_preload = 0;
};

struct Instruction;  // decoded by LLVM, parsed here (core.hpp)

class CodeObject {
 public:
  // Loads `path` (an AMDGPU ELF code object). Throws Error(code_object) when it cannot.
  static std::shared_ptr<const CodeObject> load(const std::string& path, const Tools& tools = Tools::from_env());
  ~CodeObject();

  Gfx gfx() const { return gfx_; }
  const std::string& path() const { return path_; }
  const std::vector<KernelInfo>& kernels() const { return kernels_; }
  // By mangled name; throws when absent.
  const KernelInfo& kernel(const std::string& mangled) const;
  // The one kernel whose demangled name contains every one of `parts`; throws when none or several.
  // For test kernels without a manifest; library kernels are found by find_manifest.
  const KernelInfo& find(const std::vector<std::string>& parts) const;
  // The one kernel whose manifest equals `fields` exactly (the text the kernel's configuration spells,
  // e.g. hipattn::kernel_manifest<Cfg>("unified_2d").c_str()); throws Error(code_object) naming the
  // text when none or several match.
  const KernelInfo& find_manifest(const std::string& fields) const;
  // The mnemonics (as llvm-objdump prints them, e.g. v_add_f32_e32) of one kernel's instructions.
  std::set<std::string> mnemonics(const KernelInfo& k) const;
  // Byte offset in the file of the instruction at `addr` (to patch a copy of the code object).
  uint64_t file_offset(uint64_t addr) const;
  // Instructions of one kernel, in address order (disassembled by LLVM on first use).
  const std::vector<Instruction>& code(const KernelInfo& k) const;
  // Disassemble every kernel now, in one LLVM run (for tools that read them all).
  void disassemble_all() const;

 private:
  CodeObject() = default;
  std::string path_;
  Gfx gfx_ = Gfx::gfx942;
  std::vector<KernelInfo> kernels_;
  uint64_t text_addr_ = 0, text_offset_ = 0, text_size_ = 0;
  Tools tools_;
  std::string asm_path_;  // the build's llvm-objdump -d of this file; empty when absent or older
  mutable std::mutex code_mutex_;
  mutable std::map<std::string, std::vector<Instruction>> code_;  // by mangled name, filled on use
  mutable std::string_view asm_;                                  // asm_path_ mapped on first use
  mutable std::map<std::string, std::string_view> asm_pieces_;    // asm_ by symbol
  const std::map<std::string, std::string_view>* build_asm() const;
  std::set<std::string> kernel_names() const;
};

// Device global memory: host buffers at device addresses, with guard gaps between them.
class Memory {
 public:
  Memory();
  ~Memory();
  uint64_t alloc(size_t bytes, const std::string& label);
  void write(uint64_t addr, const void* src, size_t bytes);
  void read(uint64_t addr, void* dst, size_t bytes) const;
  template <class T>
  uint64_t upload(const std::vector<T>& v, const std::string& label) {
    const uint64_t a = alloc(v.size() * sizeof(T) > 0 ? v.size() * sizeof(T) : 1, label);
    if (!v.empty()) write(a, v.data(), v.size() * sizeof(T));
    return a;
  }
  template <class T>
  std::vector<T> download(uint64_t addr, size_t count) const {
    std::vector<T> v(count);
    if (count) read(addr, v.data(), count * sizeof(T));
    return v;
  }
  // Host pointer of [addr, addr + bytes) inside one buffer; throws Error(memory_fault) otherwise,
  // with `what` describing the access.
  uint8_t* at(uint64_t addr, size_t bytes, const char* what) const;

 private:
  struct Buffer {
    uint64_t base, size;
    std::string label;
    std::unique_ptr<uint8_t[]> data;
  };
  std::map<uint64_t, Buffer> buffers_;
  uint64_t next_ = 0x100000000ull;
};

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

struct Trace;  // timing.hpp

struct LaunchOptions {
  bool check_waitcnt = true;   // wait-count hazards
  bool check_lds_race = true;  // LDS accesses of two waves with no barrier between
  uint64_t max_instructions = 2'000'000'000ull;  // per launch, all waves together
  // Timing the ISA does not promise but hand-written kernels (AITER's) rely on; off by default, and
  // hipattn's kernels must pass without them.
  //  * wave_quantum: how the waves of a workgroup share the emulated CU between barriers: 0 runs each
  //    wave to its next s_barrier in turn; N > 0 lets them take turns of N instructions (1: lockstep,
  //    as the hardware runs them side by side), for kernels whose waves reuse LDS without a barrier in
  //    between. With N > 0 an LDS DMA write (buffer_load ... lds, global_load_lds_*) to a byte another
  //    wave read earlier in the same barrier interval is not a race: the DMA's data lands a
  //    global-memory round trip after its issue, long after the earlier LDS read returned (AITER
  //    refills a K / V buffer this way while the other waves' reads of it are in flight). Other
  //    cross-wave reuse is still reported (such kernels run with check_lds_race off).
  //  * check_lds_waitcnt = false: LDS (DS) results are not checked against lgkmcnt (vector-memory,
  //    scalar-memory and LDS DMA results still are). For a kernel that uses an LDS result with no
  //    covering s_waitcnt, relying on the clocks its instructions in between take (MFMA issue) to
  //    outlast the LDS latency: a functional emulator cannot tell whether they do.
  uint32_t wave_quantum = 0;
  bool check_lds_waitcnt = true;
  // When set, the launch records what each wave of its first trace->max_workgroups workgroups
  // executed, for the timing layer (timing.hpp); the launch is otherwise unchanged.
  Trace* trace = nullptr;
};

struct LaunchStats {
  uint64_t instructions = 0, workgroups = 0, waves = 0, barriers = 0;
  std::map<std::string, uint64_t> op_counts;  // executed mnemonics
};

// Run `kernel` of `co` over `grid` x `block` with `dynamic_lds` extra LDS bytes and the explicit
// kernel arguments `kernarg` (the bytes of the by-value arguments, laid out as the metadata says:
// for hipattn kernels, the one argument struct). Hidden arguments are filled from the launch.
LaunchStats launch(const CodeObject& co, const KernelInfo& kernel, Dim3 grid, Dim3 block, uint32_t dynamic_lds,
                   const void* kernarg, size_t kernarg_bytes, Memory& mem, const LaunchOptions& opt = {});

// Whether the emulator implements `mnemonic` (llvm-objdump's spelling, encoding suffix included).
bool implemented(const std::string& mnemonic);

}  // namespace hipattn::emu
