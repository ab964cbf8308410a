// emu/machine.cpp: memory, register access with the wait-count hazard check, SDWA / DPP source
// handling, LDS with race tracking, and the launch (kernel arguments, initial wave state, the wave
// scheduler with s_barrier).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core.hpp"
#include "timing.hpp"

namespace hipattn::emu {

// ---------------------------------------------------------------- memory
Memory::Memory() = default;
Memory::~Memory() = default;

uint64_t Memory::alloc(size_t bytes, const std::string& label) {
  if (bytes == 0) bytes = 1;
  Buffer b;
  b.base = next_;
  b.size = bytes;
  b.label = label;
  b.data.reset(new uint8_t[bytes]);
  std::memset(b.data.get(), 0xA5, bytes);  // never zero: a kernel must write what it reads back
  // 64 KiB guard gap after every buffer (accesses there hit no buffer and fault)
  next_ = (next_ + bytes + 0x10000 + 0xFFFF) & ~uint64_t(0xFFFF);
  const uint64_t base = b.base;
  buffers_.emplace(base, std::move(b));
  return base;
}

uint8_t* Memory::at(uint64_t addr, size_t bytes, const char* what) const {
  auto it = buffers_.upper_bound(addr);
  if (it != buffers_.begin()) {
    --it;
    const Buffer& b = it->second;
    if (addr >= b.base && addr + bytes <= b.base + b.size) return b.data.get() + (addr - b.base);
    if (addr >= b.base && addr < b.base + b.size + 0x10000) {
      throw Error(Error::Kind::memory_fault, std::string(what) + " of " + std::to_string(bytes) + " bytes at " + hex(addr) +
                                                 " runs past the end of buffer '" + b.label + "' (" + hex(b.base) + ", " +
                                                 std::to_string(b.size) + " bytes) by " +
                                                 std::to_string(addr + bytes - (b.base + b.size)) + " bytes");
    }
  }
  throw Error(Error::Kind::memory_fault, std::string(what) + " of " + std::to_string(bytes) + " bytes at " + hex(addr) +
                                             " is outside every buffer");
}

void Memory::write(uint64_t addr, const void* src, size_t bytes) { std::memcpy(at(addr, bytes, "host write"), src, bytes); }
void Memory::read(uint64_t addr, void* dst, size_t bytes) const { std::memcpy(dst, at(addr, bytes, "host read"), bytes); }

// ---------------------------------------------------------------- numeric helpers
float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const int exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  if (exp == 0x1F) return as_f(sign | 0x7F800000 | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return as_f(sign);
    float f = std::ldexp(float(mant), -24);
    return sign ? -f : f;
  }
  return as_f(sign | (uint32_t(exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t f32_to_f16(float f) {
  const uint32_t u = as_u(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000);
  if (std::isnan(f)) return uint16_t(sign | 0x7E00 | ((u >> 13) & 0x3FF));
  const float a = std::fabs(f);
  if (a >= 65520.f) return uint16_t(sign | 0x7C00);
  if (a < std::ldexp(1.f, -14)) {  // subnormal: round a * 2^24 to nearest even
    const float m = std::nearbyint(a * 16777216.f);
    return uint16_t(sign | uint16_t(m));
  }
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const float scaled = std::ldexp(a, 11 - e);  // 2^10 .. 2^11
  float m = std::nearbyint(scaled);
  int exp = e - 1;
  if (m >= 2048.f) { m /= 2.f; ++exp; }
  if (exp > 15) return uint16_t(sign | 0x7C00);
  return uint16_t(sign | uint16_t((exp + 15) << 10) | (uint16_t(m) & 0x3FF));
}

float bf16_to_f32(uint16_t h) { return as_f(uint32_t(h) << 16); }

uint16_t f32_to_bf16(float f) {
  const uint32_t u = as_u(f);
  if (std::isnan(f)) return uint16_t((u >> 16) | 0x40);
  const uint32_t r = u + 0x7FFF + ((u >> 16) & 1);
  return uint16_t(r >> 16);
}

// ---------------------------------------------------------------- wave: errors and hazards
std::string Wave::where() const {
  std::ostringstream s;
  s << launch->kernel->label().substr(0, 160) << " [" << gfx_name(launch->gfx) << "] workgroup (" << wg->id[0] << ","
    << wg->id[1] << "," << wg->id[2] << ") wave " << wave_id;
  if (cur) s << " pc " << hex(cur->addr) << ": " << cur->text;
  return s.str();
}

void Wave::fail(Error::Kind k, const std::string& msg) const {
  throw Error(k, std::string(kind_name(k)) + ": " + msg + "\n  at " + where());
}

void Wave::mark(Pending& p, uint8_t counter, uint32_t seq) {
  p.counter = counter;
  p.seq = seq;
  p.pc = cur ? cur->addr : 0;
}

// The in-order return queue a load's result comes back through: 1 vector memory (VMEM loads return
// in issue order, CDNA3 ISA 4.4), 2 LDS (DS instructions return in order among themselves), 0 other.
static int in_order_queue(const Instruction* in) {
  if (in == nullptr) return 0;
  const std::string& b = in->base;
  if (b.rfind("ds_", 0) == 0) return 2;
  if (b.rfind("buffer_load", 0) == 0 || b.rfind("global_load", 0) == 0 || b.rfind("flat_load", 0) == 0) return 1;
  return 0;
}

void Wave::check_ready(Pending& p, const char* file, int reg, bool write) {
  if (p.counter == 0) return;
  if ((p.counter == 1 && p.seq <= vm_done) || (p.counter == 2 && lgkm[p.seq - 1].done) || !launch->opt.check_waitcnt ||
      (p.counter == 2 && !launch->opt.check_lds_waitcnt && !lgkm[p.seq - 1].smem)) {
    p.counter = 0;
    return;
  }
  // A load overwriting the destination of an earlier load of the same in-order queue (a VMEM load
  // after a VMEM load, an LDS read after an LDS read) is not a hazard: the earlier result arrives
  // first and the later one replaces it (AITER's kernels drop speculative LDS reads this way on loop
  // exit). The handler marks the register pending on the new load right after this write.
  if (write && p.counter == in_order_queue(cur) && (p.counter == 1 || !lgkm[p.seq - 1].smem)) return;
  const char* cnt = p.counter == 1 ? "vmcnt" : "lgkmcnt";
  std::string issuer;
  for (const auto& in : *code)
    if (in.addr == p.pc) issuer = in.text;
  fail(Error::Kind::hazard, std::string(file) + std::to_string(reg) + (write ? " overwritten" : " read") +
                                " before the s_waitcnt " + cnt + " that covers its load at pc " + hex(p.pc) + " (" + issuer +
                                ")");
}

void Wave::waitcnt(int vmcnt, int lgkmcnt) {
  if (vmcnt >= 0) {
    const uint32_t allowed = std::min<uint32_t>(uint32_t(vmcnt), vm_issued);
    vm_done = std::max(vm_done, vm_issued - allowed);
  }
  if (lgkmcnt >= 0) {
    // LDS results return in issue order, scalar-memory results in any order (CDNA3 ISA 4.4): after
    // lgkmcnt(N) an LDS access is complete if more than N LDS accesses were issued from it on; a
    // scalar load only after lgkmcnt(0).
    int lds_from_here = 0;
    for (size_t i = lgkm.size(); i-- > lgkm_first_open;) {
      if (lgkmcnt == 0) { lgkm[i].done = true; continue; }
      if (!lgkm[i].smem && ++lds_from_here > lgkmcnt) lgkm[i].done = true;
    }
    while (lgkm_first_open < lgkm.size() && lgkm[lgkm_first_open].done) ++lgkm_first_open;
  }
}

// ---------------------------------------------------------------- scalar operands
static uint32_t special_const(Wave& w, const Operand& o) {
  switch (o.special_code) {
    case 235: return 0x10000u;  // src_shared_base: aperture high bits (emulated LDS aperture)
    case 236: return 0x10000u;
    case 237: return 0x20000u;  // src_private_base
    case 238: return 0x20000u;
    case 251: return w.vcc() == 0;
    case 252: return w.exec() == 0;
    case 253: return w.scc;
  }
  w.fail(Error::Kind::unimplemented, "special operand " + o.text);
}

static uint32_t imm32(const Operand& o) {
  if (o.is_float) return as_u(float(o.fval));
  return uint32_t(o.ival);
}

uint32_t Wave::sread32(const Operand& o) {
  switch (o.kind) {
    case Operand::sgpr:
      if (o.reg == kNull) return 0;
      check_ready(pend_s[o.reg], "s", o.reg, false);
      return s[o.reg];
    case Operand::imm: return imm32(o);
    case Operand::special: return special_const(*this, o);
    default: fail(Error::Kind::launch, "operand " + o.text + " is not scalar");
  }
}

uint64_t Wave::sread64(const Operand& o) {
  switch (o.kind) {
    case Operand::sgpr: {
      if (o.reg == kNull) return 0;
      check_ready(pend_s[o.reg], "s", o.reg, false);
      check_ready(pend_s[o.reg + 1], "s", o.reg + 1, false);
      return uint64_t(s[o.reg]) | (uint64_t(s[o.reg + 1]) << 32);
    }
    case Operand::imm:
      if (o.is_float) return as_u64(o.fval);
      return uint64_t(o.ival);
    case Operand::special: return special_const(*this, o);
    default: fail(Error::Kind::launch, "operand " + o.text + " is not scalar");
  }
}

void Wave::sread_n(const Operand& o, uint32_t* dst, int n) {
  if (o.kind != Operand::sgpr) fail(Error::Kind::launch, "operand " + o.text + " is not an SGPR range");
  for (int i = 0; i < n; ++i) {
    check_ready(pend_s[o.reg + i], "s", o.reg + i, false);
    dst[i] = s[o.reg + i];
  }
}

void Wave::swrite32(const Operand& o, uint32_t val) {
  if (o.kind != Operand::sgpr) fail(Error::Kind::launch, "destination " + o.text + " is not an SGPR");
  if (o.reg == kNull) return;
  check_ready(pend_s[o.reg], "s", o.reg, true);
  s[o.reg] = val;
}

void Wave::swrite64(const Operand& o, uint64_t val) {
  if (o.kind != Operand::sgpr) fail(Error::Kind::launch, "destination " + o.text + " is not an SGPR pair");
  if (o.reg == kNull) return;
  check_ready(pend_s[o.reg], "s", o.reg, true);
  check_ready(pend_s[o.reg + 1], "s", o.reg + 1, true);
  s[o.reg] = uint32_t(val);
  s[o.reg + 1] = uint32_t(val >> 32);
}

// ---------------------------------------------------------------- vector operands
std::array<uint32_t, kLanes>& Wave::vreg(const Operand& o, int dword, bool write) {
  const int r = o.reg + dword;
  if (o.kind == Operand::vgpr) {
    if (r >= 256) fail(Error::Kind::launch, "VGPR index out of range: " + o.text);
    check_ready(pend_v[r], "v", r, write);
    return v[r];
  }
  if (o.kind == Operand::agpr) {
    if (r >= 256) fail(Error::Kind::launch, "AGPR index out of range: " + o.text);
    check_ready(pend_a[r], "a", r, write);
    return a[r];
  }
  fail(Error::Kind::launch, "operand " + o.text + " is not a vector register");
}

void Wave::vread32(const Operand& o, uint32_t* out, int dword) {
  if (o.kind == Operand::vgpr || o.kind == Operand::agpr) {
    const auto& r = vreg(o, dword, false);
    std::memcpy(out, r.data(), sizeof(uint32_t) * kLanes);
    return;
  }
  uint32_t x;
  if (o.kind == Operand::sgpr) {
    Operand t = o;
    t.reg = uint16_t(o.reg + dword);
    x = sread32(t);
  } else if (o.kind == Operand::imm && dword == 1) {
    x = uint32_t(sread64(o) >> 32);
  } else {
    x = sread32(o);
  }
  for (int l = 0; l < kLanes; ++l) out[l] = x;
}

void Wave::vread64(const Operand& o, uint64_t* out) {
  if (o.kind == Operand::vgpr || o.kind == Operand::agpr) {
    const auto& lo = vreg(o, 0, false);
    const auto& hi = vreg(o, 1, false);
    for (int l = 0; l < kLanes; ++l) out[l] = uint64_t(lo[l]) | (uint64_t(hi[l]) << 32);
    return;
  }
  const uint64_t x = sread64(o);
  for (int l = 0; l < kLanes; ++l) out[l] = x;
}

void Wave::vwrite32(const Operand& o, const uint32_t* val, uint64_t mask, int dword) {
  auto& r = vreg(o, dword, true);
  for (int l = 0; l < kLanes; ++l)
    if (mask >> l & 1) r[l] = val[l];
}

void Wave::vwrite64(const Operand& o, const uint64_t* val, uint64_t mask) {
  auto& lo = vreg(o, 0, true);
  auto& hi = vreg(o, 1, true);
  for (int l = 0; l < kLanes; ++l)
    if (mask >> l & 1) { lo[l] = uint32_t(val[l]); hi[l] = uint32_t(val[l] >> 32); }
}

// ---------------------------------------------------------------- SDWA and DPP (CDNA3 ISA 6.1, 6.2)
static uint32_t sdwa_select(uint32_t x, int sel, bool sext) {
  switch (sel) {
    case 0: case 1: case 2: case 3: {
      const uint32_t b = (x >> (8 * sel)) & 0xFF;
      return sext ? uint32_t(int32_t(int8_t(b))) : b;
    }
    case 4: case 5: {
      const uint32_t h = (x >> (16 * (sel - 4))) & 0xFFFF;
      return sext ? uint32_t(int32_t(int16_t(h))) : h;
    }
    default: return x;
  }
}

// DPP source lane of `lane`, or -1 when the source is out of range (CDNA3 ISA 6.2, DPP_CTRL table).
static int dpp_source(int ctrl, int lane) {
  const int row = lane & ~15, in_row = lane & 15;
  if (ctrl >= 0 && ctrl <= 0xFF) return (lane & ~3) | ((ctrl >> (2 * (lane & 3))) & 3);
  if (ctrl >= 0x101 && ctrl <= 0x10F) { const int s = in_row + (ctrl & 15); return s < 16 ? row + s : -1; }
  if (ctrl >= 0x111 && ctrl <= 0x11F) { const int s = in_row - (ctrl & 15); return s >= 0 ? row + s : -1; }
  if (ctrl >= 0x121 && ctrl <= 0x12F) return row + ((in_row - (ctrl & 15)) & 15);
  if (ctrl == 0x130) return lane + 1 < 64 ? lane + 1 : -1;
  if (ctrl == 0x134) return (lane + 1) & 63;
  if (ctrl == 0x138) return lane - 1;
  if (ctrl == 0x13C) return (lane - 1) & 63;
  if (ctrl == 0x140) return row + (15 - in_row);
  if (ctrl == 0x141) return (lane & ~7) + (7 - (lane & 7));
  if (ctrl == 0x142) return lane >= 16 ? row - 1 : -1;       // row_bcast:15: lane 15 of the previous row
  if (ctrl == 0x143) return lane >= 32 ? 31 : -1;            // row_bcast:31
  if (ctrl >= 0x150 && ctrl <= 0x15F) return row + (ctrl & 15);  // row_newbcast:n: lane n of its own row
  return -2;
}

void read_src32(Wave& w, const Instruction& in, int op_index, int src_index, uint32_t* out) {
  const Operand& o = in.ops.at(op_index);
  w.vread32(o, out);
  if (in.mods.sdwa && src_index <= 1) {
    const int sel = src_index == 0 ? in.mods.src0_sel : in.mods.src1_sel;
    for (int l = 0; l < kLanes; ++l) out[l] = sdwa_select(out[l], sel, o.sext);
  }
  if (in.mods.dpp && src_index == 0) {
    uint32_t src[kLanes];
    std::memcpy(src, out, sizeof src);
    const uint64_t exec = w.exec();
    for (int l = 0; l < kLanes; ++l) {
      const int s = dpp_source(in.mods.dpp_ctrl, l);
      if (s == -2) w.fail(Error::Kind::unimplemented, "DPP control " + std::to_string(in.mods.dpp_ctrl));
      out[l] = (s >= 0 && (exec >> s & 1)) ? src[s] : 0u;  // invalid: 0 (bound_ctrl) or lane masked below
    }
  }
}

// Lanes a DPP instruction writes: row_mask / bank_mask, and (without bound_ctrl) only lanes whose
// source is valid.
uint64_t dpp_write_mask(Wave& w, const Instruction& in) {
  uint64_t m = w.exec();
  if (!in.mods.dpp) return m;
  for (int l = 0; l < kLanes; ++l) {
    const bool row_on = in.mods.row_mask >> (l / 16) & 1, bank_on = in.mods.bank_mask >> ((l & 15) / 4) & 1;
    const int s = dpp_source(in.mods.dpp_ctrl, l);
    const bool valid = s >= 0 && (w.exec() >> s & 1);
    if (!row_on || !bank_on || (!valid && !in.mods.bound_ctrl)) m &= ~(1ull << l);
  }
  return m;
}

void read_srcf(Wave& w, const Instruction& in, int op_index, int src_index, float* out) {
  uint32_t u[kLanes];
  read_src32(w, in, op_index, src_index, u);
  const Operand& o = in.ops.at(op_index);
  for (int l = 0; l < kLanes; ++l) {
    float f = as_f(u[l]);
    if (o.abs) f = std::fabs(f);
    if (o.neg) f = -f;
    out[l] = f;
  }
}

float apply_omod_clamp(const Instruction& in, float x) {
  switch (in.mods.omod) {
    case 1: x *= 2.f; break;
    case 2: x *= 4.f; break;
    case 3: x *= 0.5f; break;
    default: break;
  }
  if (in.mods.clamp) x = std::isnan(x) ? 0.f : std::min(1.f, std::max(0.f, x));
  return x;
}

void write_dst32(Wave& w, const Instruction& in, int op_index, uint32_t* val, bool is_float) {
  const Operand& d = in.ops.at(op_index);
  if (is_float && (in.mods.omod || in.mods.clamp))
    for (int l = 0; l < kLanes; ++l) val[l] = as_u(apply_omod_clamp(in, as_f(val[l])));
  uint64_t mask = dpp_write_mask(w, in);
  if (in.mods.sdwa && in.mods.dst_sel != 6) {
    uint32_t old[kLanes];
    w.vread32(d, old);
    const int sel = in.mods.dst_sel;
    const int shift = sel < 4 ? 8 * sel : 16 * (sel - 4);
    const uint32_t width_mask = sel < 4 ? 0xFFu : 0xFFFFu;
    for (int l = 0; l < kLanes; ++l) {
      const uint32_t field = (val[l] & width_mask) << shift;
      uint32_t r;
      if (in.mods.dst_unused == 2) r = (old[l] & ~(width_mask << shift)) | field;      // preserve
      else if (in.mods.dst_unused == 1) {                                              // sign-extend upward
        const uint32_t top = (val[l] & width_mask) >> (sel < 4 ? 7 : 15) & 1;
        const uint32_t above = shift + (sel < 4 ? 8 : 16) >= 32 ? 0 : ~0u << (shift + (sel < 4 ? 8 : 16));
        r = field | (top ? above : 0);
      } else r = field;                                                                 // pad with zeros
      val[l] = r;
    }
  }
  w.vwrite32(d, val, mask);
}

// ---------------------------------------------------------------- LDS and global memory
uint8_t* lds_access(Wave& w, uint64_t addr, size_t bytes, bool write, bool dma) {
  Workgroup& g = *w.wg;
  if (w.access_log) w.access_log->push_back({addr, uint32_t(bytes), true});
  if (addr + bytes > g.lds.size())
    w.fail(Error::Kind::memory_fault, std::string("LDS ") + (write ? "write" : "read") + " of " + std::to_string(bytes) +
                                          " bytes at " + hex(addr) + " outside the workgroup's " +
                                          std::to_string(g.lds.size()) + " bytes");
  if (!write && !g.dma_wave.empty() && w.launch->opt.check_waitcnt) {
    for (uint64_t b = addr; b < addr + bytes; ++b) {
      const int16_t dw = g.dma_wave[b];
      if (dw >= 0 && g.waves[dw]->vm_done < g.dma_seq[b])
        w.fail(Error::Kind::hazard, std::string("LDS byte ") + hex(b) + " read before the s_waitcnt vmcnt of wave " +
                                        std::to_string(dw) + " that covers the buffer load (LDS DMA) writing it");
    }
  }
  if (w.launch->opt.check_lds_race) {
    const uint32_t gen = g.generation, me = uint32_t(w.wave_id);
    for (uint64_t b = addr; b < addr + bytes; ++b) {
      const bool written_now = g.writer_gen[b] == gen && g.writer[b] >= 0 && uint32_t(g.writer[b]) != me;
      if (written_now)
        w.fail(Error::Kind::lds_race, std::string("LDS byte ") + hex(b) + (write ? " written" : " read") + " by wave " +
                                          std::to_string(me) + " after wave " + std::to_string(g.writer[b]) +
                                          " wrote it, with no s_barrier between");
      if (write) {
        const uint32_t others = g.reader_gen[b] == gen ? (g.readers[b] & ~(1u << me)) : 0u;
        if (others && !(dma && w.launch->opt.wave_quantum > 0)) {
          int o = 0;
          while (!(others >> o & 1)) ++o;
          w.fail(Error::Kind::lds_race, std::string("LDS byte ") + hex(b) + " written by wave " + std::to_string(me) +
                                            " after wave " + std::to_string(o) + " read it, with no s_barrier between");
        }
        g.writer[b] = int16_t(me);
        g.writer_gen[b] = gen;
      } else {
        if (g.reader_gen[b] != gen) { g.reader_gen[b] = gen; g.readers[b] = 0; }
        g.readers[b] |= 1u << me;
      }
    }
  }
  return g.lds.data() + addr;
}

uint8_t* global_access(Wave& w, uint64_t addr, size_t bytes, bool write, int lane) {
  if (w.access_log) w.access_log->push_back({addr, uint32_t(bytes), false});
  try {
    return w.launch->mem->at(addr, bytes, write ? "global store" : "global load");
  } catch (const Error& e) {
    w.fail(Error::Kind::memory_fault, std::string(e.what()) + " (lane " + std::to_string(lane) + ")");
  }
}

// ---------------------------------------------------------------- launch
namespace {

// VGPR indexing (CDNA3 ISA 6.6 "VGPR Indexing"; S_SET_GPR_IDX_ON in 12.3): while MODE.gpr_idx_en is
// set, a VALU instruction's VGPR operands named by M0[15:12] (bit 0 src0, 1 src1, 2 src2, 3 dst) are
// addressed relative to M0[7:0]: v[n] reads or writes v[n + M0[7:0]]. SGPR, constant and AGPR
// operands are unaffected. The destinations come first in LLVM's operand order (two of them for the
// carry-out forms: v_add_co_u32 vdst, vcc, ...; v_div_scale; v_mad_u64_u32), then src0, src1, src2.
// An index that takes an operand past the last VGPR is refused (the hardware reads v0 instead).
Instruction gpr_indexed(Wave& w, const Instruction& in) {
  Instruction r = in;
  const uint32_t m0 = w.s[kM0];
  const uint32_t idx = m0 & 0xFF, mask = (m0 >> 12) & 0xF;
  const std::string& b = in.base;
  const bool two_dst = b.find("_co_") != std::string::npos || b.rfind("v_div_scale", 0) == 0 ||
                       b == "v_mad_u64_u32" || b == "v_mad_i64_i32";
  const size_t ndst = b.rfind("v_cmp", 0) == 0 ? 1 : two_dst ? 2 : 1;
  for (size_t i = 0; i < r.ops.size(); ++i) {
    Operand& o = r.ops[i];
    if (o.kind != Operand::vgpr) continue;
    const int bit = i < ndst ? (i == 0 ? 3 : -1) : int(i - ndst);
    if (bit < 0 || bit > 3 || !((mask >> bit) & 1)) continue;
    if (o.reg + idx + o.count > w.v.size())
      w.fail(Error::Kind::launch, "VGPR index " + std::to_string(idx) + " takes " + o.text + " past the last VGPR");
    o.reg = uint16_t(o.reg + idx);
  }
  return r;
}

struct Scheduler {
  Launch& L;
  std::vector<std::unique_ptr<Wave>> waves;
  uint64_t executed = 0;
  std::vector<uint64_t>& counts;
  WorkgroupTrace* trace = nullptr;  // this workgroup's, when traced
  std::vector<Access> log;

  // Runs `w` until it ends, reaches an s_barrier, or has executed `quantum` instructions.
  void run(Wave& w, uint64_t quantum) {
    const auto& code = *w.code;
    std::vector<TraceOp>* ops = trace ? &trace->waves.at(size_t(w.wave_id)).ops : nullptr;
    w.access_log = ops ? &log : nullptr;
    while (!w.done && !w.at_barrier && quantum-- > 0) {
      if (w.pc >= code.size()) w.fail(Error::Kind::launch, "ran past the end of the kernel");
      const Instruction& in = code[w.pc];
      w.cur = &in;
      if (!in.fn) w.fail(Error::Kind::unimplemented, "no semantics for " + in.mnemonic);
      const size_t here = w.pc;
      w.pc = in.next;
      if (ops) log.clear();
      if (w.gpr_idx_en && in.base.rfind("v_", 0) == 0) {
        const Instruction indexed = gpr_indexed(w, in);
        w.cur = &indexed;
        in.fn(w, indexed);
        w.cur = &in;
      } else {
        in.fn(w, in);
      }
      if (ops) ops->push_back(trace_op(here, w.pc != in.next));
      ++counts[here];
      if (++executed > L.opt.max_instructions)
        w.fail(Error::Kind::limit, "more than " + std::to_string(L.opt.max_instructions) + " instructions");
    }
    w.access_log = nullptr;
  }
  TraceOp trace_op(size_t pc, bool jumped) const;
};

// What the timing layer needs of one executed instruction (timing.hpp TraceOp): LDS bank cycles from
// the lanes' addresses (docs/AMD-TIMING.md §7, rule 1), the 64-byte segments and bytes of vector memory.
TraceOp Scheduler::trace_op(size_t pc, bool jumped) const {
  TraceOp op;
  op.pc = uint32_t(pc);
  if (jumped) op.a = 1;
  if (log.empty()) return op;
  const int banks = L.gfx == Gfx::gfx942 ? 32 : 64;
  bool any_global = false;
  for (const auto& a : log) any_global = any_global || !a.lds;
  if (any_global) {  // vector memory (for LDS DMA the LDS side is written conflict-free, lane by lane)
    std::vector<uint64_t> segs;
    uint64_t bytes = 0;
    for (const auto& a : log)
      if (!a.lds) {
        bytes += a.bytes;
        for (uint64_t s = a.addr >> 6; s <= (a.addr + a.bytes - 1) >> 6; ++s) segs.push_back(s);
      }
    std::sort(segs.begin(), segs.end());
    op.a = uint32_t(std::unique(segs.begin(), segs.end()) - segs.begin());
    op.b = uint32_t(bytes);
    return op;
  }
  // LDS: lanes in order, in groups of `banks` dwords; a group takes as many bank cycles as the most
  // distinct dwords any one bank holds (the same dword read by several lanes is a broadcast).
  uint64_t bytes = 0, cycles = 0;
  std::vector<uint64_t> group;
  auto flush = [&] {
    if (group.empty()) return;
    std::sort(group.begin(), group.end());
    group.erase(std::unique(group.begin(), group.end()), group.end());
    std::vector<int> per_bank(size_t(banks), 0);
    int worst = 0;
    for (uint64_t dw : group) worst = std::max(worst, ++per_bank[dw % uint64_t(banks)]);
    cycles += uint64_t(worst);
    group.clear();
  };
  size_t in_group = 0;
  for (const auto& a : log) {
    bytes += a.bytes;
    const size_t dws = std::max<size_t>(1, (a.bytes + 3) / 4);
    if (in_group + dws > size_t(banks)) { flush(); in_group = 0; }
    for (size_t d = 0; d < dws; ++d) group.push_back((a.addr >> 2) + d);
    in_group += dws;
  }
  flush();
  op.a = uint32_t(cycles);
  op.b = uint32_t(bytes);
  return op;
}

void put(std::vector<uint8_t>& seg, uint32_t off, uint32_t size, uint64_t v) {
  if (off + size > seg.size()) seg.resize(off + size, 0);
  std::memcpy(seg.data() + off, &v, size);
}

}  // namespace

LaunchStats launch(const CodeObject& co, const KernelInfo& k, Dim3 grid, Dim3 block, uint32_t dynamic_lds,
                   const void* kernarg, size_t kernarg_bytes, Memory& mem, const LaunchOptions& opt) {
  auto bad = [&](const std::string& m) { throw Error(Error::Kind::launch, k.label().substr(0, 120) + ": " + m); };
  if (k.wavefront_size != 64) bad("wave size " + std::to_string(k.wavefront_size) + " (wave64 only)");
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (threads == 0 || threads > 1024) bad("block of " + std::to_string(threads) + " threads");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) bad("empty grid");
  if (k.private_segment_fixed_size > 0) bad("the kernel uses scratch, which the emulator does not provide");
  const uint32_t lds_limit = co.gfx() == Gfx::gfx942 ? 64 * 1024 : 160 * 1024;
  const uint64_t lds_bytes = uint64_t(k.group_segment_fixed_size) + dynamic_lds;
  if (lds_bytes > lds_limit)
    bad("LDS of " + std::to_string(lds_bytes) + " bytes exceeds the " + std::to_string(lds_limit) + " of " + gfx_name(co.gfx()));

  // kernel argument segment: explicit bytes, then the hidden arguments the metadata lists
  uint32_t explicit_end = 0;
  for (const auto& a : k.args)
    if (a.value_kind.rfind("hidden_", 0) != 0) explicit_end = std::max(explicit_end, a.offset + a.size);
  if (kernarg_bytes != explicit_end)
    bad("explicit kernel arguments of " + std::to_string(kernarg_bytes) + " bytes given, the metadata says " +
        std::to_string(explicit_end));
  std::vector<uint8_t> seg(std::max<uint32_t>(k.kernarg_segment_size, explicit_end), 0);
  if (kernarg_bytes) std::memcpy(seg.data(), kernarg, kernarg_bytes);
  const int dims = grid.z > 1 || block.z > 1 ? 3 : (grid.y > 1 || block.y > 1 ? 2 : 1);
  for (const auto& a : k.args) {
    const std::string& v = a.value_kind;
    if (v == "hidden_block_count_x") put(seg, a.offset, a.size, grid.x);
    else if (v == "hidden_block_count_y") put(seg, a.offset, a.size, grid.y);
    else if (v == "hidden_block_count_z") put(seg, a.offset, a.size, grid.z);
    else if (v == "hidden_group_size_x") put(seg, a.offset, a.size, block.x);
    else if (v == "hidden_group_size_y") put(seg, a.offset, a.size, block.y);
    else if (v == "hidden_group_size_z") put(seg, a.offset, a.size, block.z);
    else if (v == "hidden_grid_dims") put(seg, a.offset, a.size, dims);
    else if (v == "hidden_dynamic_lds_size") put(seg, a.offset, a.size, dynamic_lds);
    else if (v.rfind("hidden_", 0) == 0) put(seg, a.offset, a.size, 0);  // remainders, offsets, unused pointers
  }
  Launch L;
  L.co = &co;
  L.kernel = &k;
  L.gfx = co.gfx();
  L.mem = &mem;
  L.opt = opt;
  LaunchStats stats;
  L.stats = &stats;
  L.kernarg_addr = mem.alloc(seg.size(), "kernel arguments");
  mem.write(L.kernarg_addr, seg.data(), seg.size());
  // dispatch packet (hsa_kernel_dispatch_packet_t) for kernels that ask for the dispatch pointer
  {
    std::vector<uint8_t> pkt(64, 0);
    put(pkt, 2, 2, dims);
    put(pkt, 4, 2, block.x); put(pkt, 6, 2, block.y); put(pkt, 8, 2, block.z);
    put(pkt, 12, 4, uint64_t(grid.x) * block.x); put(pkt, 16, 4, uint64_t(grid.y) * block.y);
    put(pkt, 20, 4, uint64_t(grid.z) * block.z);
    put(pkt, 28, 4, lds_bytes);
    put(pkt, 40, 8, L.kernarg_addr);
    L.dispatch_addr = mem.alloc(64, "dispatch packet");
    mem.write(L.dispatch_addr, pkt.data(), 64);
  }

  const auto& code = co.code(k);
  std::vector<uint64_t> counts(code.size(), 0);
  size_t entry = SIZE_MAX;
  for (size_t i = 0; i < code.size(); ++i)
    if (code[i].addr == k.entry) entry = i;
  if (entry == SIZE_MAX) bad("entry point not found");

  if (opt.trace) {
    opt.trace->kernel = k;
    opt.trace->code = code;
    opt.trace->gfx = co.gfx();
    opt.trace->lds_bytes = uint32_t(lds_bytes);
    opt.trace->threads = uint32_t(threads);
    opt.trace->workgroups.clear();
  }
  const uint32_t user_sgprs = (k.rsrc2 >> 1) & 0x1F;  // COMPUTE_PGM_RSRC2.USER_SGPR_COUNT
  const int nwaves = int((threads + 63) / 64);
  Workgroup wg;
  wg.lds.assign(lds_bytes, 0);
  wg.writer.assign(lds_bytes, -1);
  wg.writer_gen.assign(lds_bytes, 0);
  wg.readers.assign(lds_bytes, 0);
  wg.reader_gen.assign(lds_bytes, 0);
  uint64_t total_exec = 0;
  for (uint32_t gz = 0; gz < grid.z; ++gz)
    for (uint32_t gy = 0; gy < grid.y; ++gy)
      for (uint32_t gx = 0; gx < grid.x; ++gx) {
        wg.id[0] = gx; wg.id[1] = gy; wg.id[2] = gz;
        // LDS starts with garbage, never zeros: a kernel must write what it reads
        std::fill(wg.lds.begin(), wg.lds.end(), uint8_t(0xCD));
        std::fill(wg.writer.begin(), wg.writer.end(), int16_t(-1));
        std::fill(wg.readers.begin(), wg.readers.end(), 0u);
        wg.generation += 2;
        if (!wg.dma_wave.empty()) std::fill(wg.dma_wave.begin(), wg.dma_wave.end(), int16_t(-1));
        wg.waves.clear();
        Scheduler sch{L, {}, 0, counts, nullptr, {}};
        Trace* tr = opt.trace;
        if (tr && tr->workgroups.size() < tr->max_workgroups) {
          WorkgroupTrace wt;
          wt.id[0] = gx; wt.id[1] = gy; wt.id[2] = gz;
          wt.waves.resize(size_t(nwaves));
          tr->workgroups.push_back(std::move(wt));
          sch.trace = &tr->workgroups.back();
        }
        for (int wi = 0; wi < nwaves; ++wi) {
          auto wp = std::make_unique<Wave>();
          Wave& w = *wp;
          w.launch = &L;
          w.wg = &wg;
          w.wave_id = wi;
          w.code = &code;
          w.pc = entry;
          // Initial state (AMDGPU ABI "Initial Kernel Execution State"): user SGPRs in order, then
          // the enabled system SGPRs.
          uint32_t si = 0;
          const uint16_t cp = k.code_properties;
          if (cp & 1) si += 4;  // private segment buffer: unused (no scratch)
          if (cp & 2) { w.s[si] = uint32_t(L.dispatch_addr); w.s[si + 1] = uint32_t(L.dispatch_addr >> 32); si += 2; }
          if (cp & 4) { si += 2; }  // queue pointer: none
          if (cp & 8) { w.s[si] = uint32_t(L.kernarg_addr); w.s[si + 1] = uint32_t(L.kernarg_addr >> 32); si += 2; }
          if (cp & 16) { si += 2; }  // dispatch id
          if (cp & 32) { si += 2; }  // flat scratch init
          if (cp & 64) { si += 1; }  // private segment size
          const uint32_t preload_len = k.kernarg_preload & 0x7F, preload_off = (k.kernarg_preload >> 7) & 0x1FF;
          for (uint32_t i = 0; i < preload_len; ++i) {
            uint32_t dw = 0;
            std::memcpy(&dw, seg.data() + 4 * (preload_off + i), 4);
            w.s[si++] = dw;
          }
          if (si > user_sgprs) bad("user SGPRs exceed USER_SGPR_COUNT");
          si = user_sgprs;
          if (k.rsrc2 >> 7 & 1) w.s[si++] = gx;
          if (k.rsrc2 >> 8 & 1) w.s[si++] = gy;
          if (k.rsrc2 >> 9 & 1) w.s[si++] = gz;
          if (k.rsrc2 >> 10 & 1) w.s[si++] = uint32_t(nwaves);  // workgroup info (not used by HIP kernels)
          if (k.rsrc2 & 1) w.s[si++] = 0;                        // private segment wave offset
          // work-item ids packed in v0 (gfx90a and later): x [9:0], y [19:10], z [29:20]
          uint64_t exec = 0;
          for (int l = 0; l < kLanes; ++l) {
            const uint64_t t = uint64_t(wi) * 64 + l;
            for (auto& r : w.v) r[l] = 0xDEADBEEFu;  // registers start with garbage
            for (auto& r : w.a) r[l] = 0xDEADBEEFu;
            if (t < threads) {
              exec |= 1ull << l;
              const uint32_t tx = uint32_t(t % block.x), ty = uint32_t((t / block.x) % block.y),
                             tz = uint32_t(t / (uint64_t(block.x) * block.y));
              w.v[0][l] = tx | (ty << 10) | (tz << 20);
            } else {
              w.v[0][l] = 0;
            }
          }
          w.set_exec(exec);
          w.s[kM0] = 0xFFFFFFFF;
          wg.waves.push_back(wp.get());
          sch.waves.push_back(std::move(wp));
        }
        for (;;) {
          // each live wave runs to its next barrier (wave_quantum 0), or the waves take turns of
          // wave_quantum instructions until every one has reached a barrier or ended
          const uint64_t quantum = opt.wave_quantum ? opt.wave_quantum : ~0ull;
          for (bool ran = true; ran;) {
            ran = false;
            for (auto& w : sch.waves)
              if (!w->done && !w->at_barrier) {
                sch.run(*w, quantum);
                ran = true;
              }
          }
          bool any_barrier = false;
          for (auto& w : sch.waves) any_barrier = any_barrier || w->at_barrier;
          if (!any_barrier) break;
          // every live wave has arrived: release them (s_barrier, CDNA3 ISA 4.5)
          wg.generation += 2;
          ++stats.barriers;
          for (auto& w : sch.waves) w->at_barrier = false;
        }
        total_exec += sch.executed;
        ++stats.workgroups;
        stats.waves += nwaves;
        if (total_exec > opt.max_instructions) bad("instruction limit");
      }
  stats.instructions = total_exec;
  for (size_t i = 0; i < code.size(); ++i)
    if (counts[i]) stats.op_counts[code[i].mnemonic] += counts[i];
  return stats;
}

}  // namespace hipattn::emu
