// emu/ops_mem.cpp: vector memory (GLOBAL / FLAT) and LDS (DS) loads and stores. Semantics:
// "AMD Instinct MI300 (CDNA3) ISA Reference Guide", chapter 10 "Flat Memory Instructions" (10.1
// global addressing: saddr "off" -> 64-bit vaddr; else saddr + 32-bit unsigned vaddr; plus the signed
// instruction offset), chapter 11 "Data Share Operations" (11.x DS addressing: vaddr + unsigned
// 16-bit offset; ds_*2 offsets in units of the element size, st64 in units of 64 elements) and the
// opcode tables of 12.13 (DS) and 12.16 (FLAT / GLOBAL). Wait counts (4.4): every global access counts
// in vmcnt and every DS access in lgkmcnt; a load's destination registers are unavailable until the
// s_waitcnt that covers the access (checked in Wave's register accessors).
#include "core.hpp"

namespace hipattn::emu {
namespace {

// Per-lane global address of a GLOBAL/FLAT instruction whose address operand is ops[ai] and saddr
// operand ops[si].
void global_addresses(Wave& w, const Instruction& in, int ai, int si, uint64_t* addr) {
  const Operand& s = in.ops.at(si);
  if (s.kind == Operand::off) {
    w.vread64(in.ops.at(ai), addr);
  } else {
    const uint64_t base = w.sread64(s);
    uint32_t off[kLanes];
    w.vread32(in.ops.at(ai), off);
    for (int l = 0; l < kLanes; ++l) addr[l] = base + off[l];
  }
  for (int l = 0; l < kLanes; ++l) addr[l] += uint64_t(in.mods.offset);
}

// bytes: 1, 2 (zero- or sign-extended into a dword), 4, 8, 12, 16
void global_load(Wave& w, const Instruction& in, int bytes, bool sign = false) {
  uint64_t addr[kLanes];
  const bool flat = in.base.rfind("flat_", 0) == 0;
  if (flat) w.vread64(in.ops.at(1), addr);
  else global_addresses(w, in, 1, 2, addr);
  if (flat)
    for (int l = 0; l < kLanes; ++l) addr[l] += uint64_t(in.mods.offset);
  const int dwords = bytes < 4 ? 1 : bytes / 4;
  const Operand& d = in.ops.at(0);
  const uint64_t ex = w.exec();
  uint32_t val[4][kLanes] = {};
  for (int l = 0; l < kLanes; ++l) {
    if (!(ex >> l & 1)) continue;
    const uint8_t* p = global_access(w, addr[l], size_t(bytes), false, l);
    if (bytes == 1) val[0][l] = sign ? uint32_t(int32_t(int8_t(p[0]))) : p[0];
    else if (bytes == 2) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      val[0][l] = sign ? uint32_t(int32_t(int16_t(h))) : h;
    } else {
      for (int i = 0; i < dwords; ++i) std::memcpy(&val[i][l], p + 4 * i, 4);
    }
  }
  const uint32_t seq = w.issue_vm();
  for (int i = 0; i < dwords; ++i) {
    w.vwrite32(d, val[i], ex, i);
    auto& pend = d.kind == Operand::agpr ? w.pend_a : w.pend_v;
    w.mark(pend[d.reg + i], 1, seq);
  }
}

void global_store(Wave& w, const Instruction& in, int bytes) {
  uint64_t addr[kLanes];
  const bool flat = in.base.rfind("flat_", 0) == 0;
  if (flat) {
    w.vread64(in.ops.at(0), addr);
    for (int l = 0; l < kLanes; ++l) addr[l] += uint64_t(in.mods.offset);
  } else {
    global_addresses(w, in, 0, 2, addr);
  }
  const Operand& data = in.ops.at(1);
  const int dwords = bytes < 4 ? 1 : bytes / 4;
  uint32_t val[4][kLanes];
  for (int i = 0; i < dwords; ++i) w.vread32(data, val[i], i);
  const uint64_t ex = w.exec();
  for (int l = 0; l < kLanes; ++l) {
    if (!(ex >> l & 1)) continue;
    uint8_t* p = global_access(w, addr[l], size_t(bytes), true, l);
    if (bytes < 4) std::memcpy(p, &val[0][l], size_t(bytes));
    else for (int i = 0; i < dwords; ++i) std::memcpy(p + 4 * i, &val[i][l], 4);
  }
  w.issue_vm();
}

}  // namespace

EMU_OP("global_load_dword", "flat_load_dword") { global_load(w, in, 4); }
EMU_OP("global_load_dwordx2", "flat_load_dwordx2") { global_load(w, in, 8); }
EMU_OP("global_load_dwordx3", "flat_load_dwordx3") { global_load(w, in, 12); }
EMU_OP("global_load_dwordx4", "flat_load_dwordx4") { global_load(w, in, 16); }
EMU_OP("global_load_ubyte", "flat_load_ubyte") { global_load(w, in, 1, false); }
EMU_OP("global_load_sbyte", "flat_load_sbyte") { global_load(w, in, 1, true); }
EMU_OP("global_load_ushort", "flat_load_ushort") { global_load(w, in, 2, false); }
EMU_OP("global_load_sshort", "flat_load_sshort") { global_load(w, in, 2, true); }
EMU_OP("global_store_dword", "flat_store_dword") { global_store(w, in, 4); }
EMU_OP("global_store_dwordx2", "flat_store_dwordx2") { global_store(w, in, 8); }
EMU_OP("global_store_dwordx3", "flat_store_dwordx3") { global_store(w, in, 12); }
EMU_OP("global_store_dwordx4", "flat_store_dwordx4") { global_store(w, in, 16); }
EMU_OP("global_store_byte", "flat_store_byte") { global_store(w, in, 1); }
EMU_OP("global_store_short", "flat_store_short") { global_store(w, in, 2); }

// ---------------------------------------------------------------- LDS (chapter 11)
namespace {

enum class Half { none, lo, hi };

// LDS address of element e (of `count`) of a DS access: vaddr + offset, or for the two-element forms
// vaddr + offset0 / offset1 in units of the element size (x64 for st64).
uint64_t ds_address(const Instruction& in, uint32_t base, int e, int count, int bytes, int stride) {
  if (count == 1) return uint64_t(base) + uint64_t(in.mods.offset);
  return uint64_t(base) + uint64_t(e == 0 ? in.mods.offset0 : in.mods.offset1) * bytes * stride;
}

// ds_read*: ops = vdst, vaddr. `bytes` per element; `count` elements (ds_read2: 2 at offset0/offset1
// in units of `bytes` (x64 for st64)).
void ds_read(Wave& w, const Instruction& in, int bytes, bool sign = false, int count = 1, int stride = 1,
             Half half = Half::none) {
  uint32_t base[kLanes];
  w.vread32(in.ops.at(1), base);
  const Operand& d = in.ops.at(0);
  const uint64_t ex = w.exec();
  const int elem_dwords = bytes < 4 ? 1 : bytes / 4;
  uint32_t val[4][kLanes] = {};
  uint32_t old[kLanes] = {};
  if (half != Half::none) w.vread32(d, old);
  for (int l = 0; l < kLanes; ++l) {
    if (!(ex >> l & 1)) continue;
    for (int e = 0; e < count; ++e) {
      const uint8_t* p = lds_access(w, ds_address(in, base[l], e, count, bytes, stride), size_t(bytes), false);
      if (bytes == 1) val[e][l] = sign ? uint32_t(int32_t(int8_t(p[0]))) : p[0];
      else if (bytes == 2) {
        uint16_t h;
        std::memcpy(&h, p, 2);
        if (half == Half::lo) val[e][l] = (old[l] & 0xFFFF0000u) | h;
        else if (half == Half::hi) val[e][l] = (old[l] & 0xFFFFu) | (uint32_t(h) << 16);
        else val[e][l] = sign ? uint32_t(int32_t(int16_t(h))) : h;
      } else {
        for (int i = 0; i < elem_dwords; ++i) std::memcpy(&val[e * elem_dwords + i][l], p + 4 * i, 4);
      }
    }
  }
  const uint32_t seq = w.issue_lgkm(false);
  const int total = count * elem_dwords;
  for (int i = 0; i < total; ++i) {
    w.vwrite32(d, val[i], ex, i);
    auto& pend = d.kind == Operand::agpr ? w.pend_a : w.pend_v;
    w.mark(pend[d.reg + i], 2, seq);
  }
}

// ds_write*: ops = vaddr, data0 [, data1]
void ds_write(Wave& w, const Instruction& in, int bytes, int count = 1, int stride = 1, Half half = Half::none) {
  uint32_t base[kLanes];
  w.vread32(in.ops.at(0), base);
  const int elem_dwords = bytes < 4 ? 1 : bytes / 4;
  uint32_t val[2][4][kLanes];
  for (int e = 0; e < count; ++e)
    for (int i = 0; i < elem_dwords; ++i) w.vread32(in.ops.at(1 + e), val[e][i], i);
  const uint64_t ex = w.exec();
  for (int l = 0; l < kLanes; ++l) {
    if (!(ex >> l & 1)) continue;
    for (int e = 0; e < count; ++e) {
      uint8_t* p = lds_access(w, ds_address(in, base[l], e, count, bytes, stride), size_t(bytes), true);
      if (bytes < 4) {
        const uint32_t v = half == Half::hi ? val[e][0][l] >> 16 : val[e][0][l];
        std::memcpy(p, &v, size_t(bytes));
      } else {
        for (int i = 0; i < elem_dwords; ++i) std::memcpy(p + 4 * i, &val[e][i][l], 4);
      }
    }
  }
  w.issue_lgkm(false);
}

}  // namespace

EMU_OP("ds_read_b32") { ds_read(w, in, 4); }
EMU_OP("ds_read_b64") { ds_read(w, in, 8); }
EMU_OP("ds_read_b96") { ds_read(w, in, 12); }
EMU_OP("ds_read_b128") { ds_read(w, in, 16); }
EMU_OP("ds_read_u8") { ds_read(w, in, 1, false); }
EMU_OP("ds_read_i8") { ds_read(w, in, 1, true); }
EMU_OP("ds_read_u16") { ds_read(w, in, 2, false); }
EMU_OP("ds_read_i16") { ds_read(w, in, 2, true); }
EMU_OP("ds_read_u16_d16") { ds_read(w, in, 2, false, 1, 1, Half::lo); }
EMU_OP("ds_read_u16_d16_hi") { ds_read(w, in, 2, false, 1, 1, Half::hi); }
EMU_OP("ds_read2_b32") { ds_read(w, in, 4, false, 2, 1); }
EMU_OP("ds_read2_b64") { ds_read(w, in, 8, false, 2, 1); }
EMU_OP("ds_read2st64_b32") { ds_read(w, in, 4, false, 2, 64); }
EMU_OP("ds_read2st64_b64") { ds_read(w, in, 8, false, 2, 64); }
EMU_OP("ds_write_b8") { ds_write(w, in, 1); }
EMU_OP("ds_write_b16") { ds_write(w, in, 2); }
EMU_OP("ds_write_b8_d16_hi") { ds_write(w, in, 1, 1, 1, Half::hi); }
EMU_OP("ds_write_b16_d16_hi") { ds_write(w, in, 2, 1, 1, Half::hi); }
EMU_OP("ds_write_b32") { ds_write(w, in, 4); }
EMU_OP("ds_write_b64") { ds_write(w, in, 8); }
EMU_OP("ds_write_b96") { ds_write(w, in, 12); }
EMU_OP("ds_write_b128") { ds_write(w, in, 16); }
EMU_OP("ds_write2_b32") { ds_write(w, in, 4, 2, 1); }
EMU_OP("ds_write2_b64") { ds_write(w, in, 8, 2, 1); }
EMU_OP("ds_write2st64_b32") { ds_write(w, in, 4, 2, 64); }
EMU_OP("ds_write2st64_b64") { ds_write(w, in, 8, 2, 64); }

}  // namespace hipattn::emu

// ---------------------------------------------------------------- buffer (MUBUF) loads and stores
// CDNA3 ISA chapter 9 "Vector Memory Buffer Instructions": the 128-bit resource V# in four SGPRs
// (9.1.5: base address [47:0], stride [61:48], num_records [95:64]); the address (9.1.6) is
// base + soffset + inst_offset + (offen ? voffset : 0) (+ index * stride with idxen: not emulated);
// range checking (9.1.8) for raw buffers (stride 0), per dword of a multi-dword access: the dword at
// byte offset soffset + (voffset + inst_offset) + 4 d is out of range when that offset + 4 >
// num_records (the SGPR offset counts toward the check; only voffset + inst_offset wraps at 32 bits:
// as AMD's own CDNA simulator was corrected to match gfx950 hardware, ROCm/rocm-systems PR #10928
// "Model GFX9/CDNA buffer range check"); out-of-range dwords load 0, stores to them are dropped.
// AITER's hand-written kernels rely on this: they walk K / V tiles through soffset with num_records
// set to the sequence's bytes, so the prefetch past the last tile reads zeros. With `lds` (LDS DMA, 9.1.10) the data goes to LDS
// at M0 + inst_offset + lane * size instead of VGPRs, counted in vmcnt like any buffer load.
namespace hipattn::emu {
namespace {

struct BufferAccess {
  uint64_t base = 0;
  uint32_t num_records = 0, stride = 0;
  uint64_t soffset = 0;
};

BufferAccess buffer_resource(Wave& w, const Instruction& in, int rsrc_op, int soff_op) {
  uint32_t v[4];
  w.sread_n(in.ops.at(rsrc_op), v, 4);
  BufferAccess b;
  b.base = uint64_t(v[0]) | (uint64_t(v[1] & 0xFFFF) << 32);
  b.stride = (v[1] >> 16) & 0x3FFF;
  b.num_records = v[2];
  const Operand& so = in.ops.at(soff_op);
  b.soffset = so.kind == Operand::imm ? uint64_t(so.ival) : w.sread32(so);
  if (in.mods.idxen) w.fail(Error::Kind::unimplemented, "buffer access with idxen");
  // A stride with idxen off (AITER's hand-written kernels set stride 4 on raw byte buffers): the index
  // is 0, the address is the raw one above (9.1.6), and the offset is range-checked against num_records
  // in bytes as for a raw buffer (9.1.8 lists stride != 0 only for structured, indexed access).
  // Swizzled resources (V# bit 63) are not modeled.
  if (b.stride != 0 && (v[1] >> 31))
    w.fail(Error::Kind::unimplemented, "buffer resource with swizzle enabled");
  return b;
}

// LDS DMA (a buffer load with `lds`, gfx950's global_load_lds_*): the `bytes` of every active lane
// (val[dword][lane]) go to LDS at lds_base + lane * bytes, and each byte is marked as written by this
// wave's vmcnt event `seq`: reading it before the wave's s_waitcnt vmcnt covers the load is a hazard
// (machine.cpp, lds_access).
void lds_dma_write(Wave& w, uint64_t ex, uint64_t lds_base, int bytes, const uint32_t (*val)[kLanes], uint32_t seq) {
  Workgroup& g = *w.wg;
  if (g.dma_wave.empty()) {
    g.dma_wave.assign(g.lds.size(), -1);
    g.dma_seq.assign(g.lds.size(), 0);
  }
  const int dwords = bytes / 4;
  for (int l = 0; l < kLanes; ++l) {
    if (!(ex >> l & 1)) continue;
    const uint64_t at = lds_base + uint64_t(l) * bytes;
    uint8_t* p = lds_access(w, at, size_t(bytes), true, true);
    for (int d = 0; d < dwords; ++d) std::memcpy(p + 4 * d, &val[d][l], 4);
    for (int i = 0; i < bytes; ++i) {
      g.dma_wave[at + i] = int16_t(w.wave_id);
      g.dma_seq[at + i] = seq;
    }
  }
}

// buffer_load_* vdata, vaddr, srsrc, soffset  |  buffer_load_* vaddr, srsrc, soffset ... lds
void buffer_load(Wave& w, const Instruction& in, int bytes) {
  const bool to_lds = in.mods.lds;
  const int a = to_lds ? 0 : 1;  // index of vaddr (a VGPR, or `off` without offen)
  const bool has_vaddr = in.mods.offen;
  const int rs = a + 1, so = a + 2;
  const BufferAccess b = buffer_resource(w, in, rs, so);
  uint32_t voff[kLanes] = {};
  if (has_vaddr) w.vread32(in.ops.at(a), voff);
  const uint64_t ex = w.exec();
  const int dwords = bytes / 4;
  uint32_t val[4][kLanes] = {};
  for (int l = 0; l < kLanes; ++l) {
    if (!(ex >> l & 1)) continue;
    const uint64_t off = b.soffset + uint32_t(voff[l] + uint32_t(in.mods.offset));
    for (int d = 0; d < dwords; ++d) {
      if (off + 4 * (d + 1) > b.num_records) continue;  // out of range: 0
      const uint8_t* p = global_access(w, b.base + off + 4 * d, 4, false, l);
      std::memcpy(&val[d][l], p, 4);
    }
  }
  const uint32_t seq = w.issue_vm();
  if (to_lds) {
    lds_dma_write(w, ex, (w.s[kM0] & 0x3FFFFu) + uint64_t(in.mods.offset), bytes, val, seq);
    return;
  }
  const Operand& d = in.ops.at(0);
  for (int i = 0; i < dwords; ++i) {
    w.vwrite32(d, val[i], ex, i);
    auto& pend = d.kind == Operand::agpr ? w.pend_a : w.pend_v;
    w.mark(pend[d.reg + i], 1, seq);
  }
}

// buffer_store_* vdata, vaddr, srsrc, soffset
void buffer_store(Wave& w, const Instruction& in, int bytes) {
  const bool has_vaddr = in.mods.offen;
  const int rs = 2, so = 3;  // vdata, vaddr (or `off`), srsrc, soffset
  const BufferAccess b = buffer_resource(w, in, rs, so);
  uint32_t voff[kLanes] = {};
  if (has_vaddr) w.vread32(in.ops.at(1), voff);
  const int dwords = bytes / 4;
  uint32_t val[4][kLanes];
  for (int i = 0; i < dwords; ++i) w.vread32(in.ops.at(0), val[i], i);
  const uint64_t ex = w.exec();
  for (int l = 0; l < kLanes; ++l) {
    if (!(ex >> l & 1)) continue;
    const uint64_t off = b.soffset + uint32_t(voff[l] + uint32_t(in.mods.offset));
    for (int d = 0; d < dwords; ++d) {
      if (off + 4 * (d + 1) > b.num_records) continue;  // out of range: dropped
      uint8_t* p = global_access(w, b.base + off + 4 * d, 4, true, l);
      std::memcpy(p, &val[d][l], 4);
    }
  }
  w.issue_vm();
}

}  // namespace

EMU_OP("buffer_load_dword") { buffer_load(w, in, 4); }
EMU_OP("buffer_load_dwordx2") { buffer_load(w, in, 8); }
EMU_OP("buffer_load_dwordx3") { buffer_load(w, in, 12); }
EMU_OP("buffer_load_dwordx4") { buffer_load(w, in, 16); }
EMU_OP("buffer_store_dword") { buffer_store(w, in, 4); }
EMU_OP("buffer_store_dwordx2") { buffer_store(w, in, 8); }
EMU_OP("buffer_store_dwordx3") { buffer_store(w, in, 12); }
EMU_OP("buffer_store_dwordx4") { buffer_store(w, in, 16); }

// ---------------------------------------------------------------- global load to LDS (gfx950)
// [CDNA4] 10.x "Global Load LDS" (GLOBAL_LOAD_LDS_DWORD{,X3,X4}, FLAT encoding with the LDS bit):
// the global address is formed as for any GLOBAL load (saddr `off`: 64-bit vaddr, else saddr +
// 32-bit vaddr, plus the signed instruction offset); the data goes to LDS at M0 + inst_offset +
// lane * size (the instruction offset applies to both addresses, as for MUBUF `lds`: LLVM's
// llvm.amdgcn.global.load.lds "imm offset (applied to both global and LDS address)"), not to VGPRs,
// counted in vmcnt like any global load; every active lane's access is bounds-checked (no range
// check: these are not buffer accesses). The LDS bytes are hazards until the wave's vmcnt wait
// covers the load, as for buffer_load ... lds.
namespace {
void global_load_lds(Wave& w, const Instruction& in, int bytes) {
  if (in.ops.size() != 2) w.fail(Error::Kind::code_object, in.base + ": expected vaddr, saddr");
  if (w.launch->gfx != Gfx::gfx950 && bytes > 4)
    w.fail(Error::Kind::unimplemented, in.base + " exists on gfx950 only");
  uint64_t addr[kLanes];
  global_addresses(w, in, 0, 1, addr);
  const uint64_t ex = w.exec();
  const int dwords = bytes / 4;
  uint32_t val[4][kLanes] = {};
  for (int l = 0; l < kLanes; ++l) {
    if (!(ex >> l & 1)) continue;
    const uint8_t* p = global_access(w, addr[l], size_t(bytes), false, l);
    for (int d = 0; d < dwords; ++d) std::memcpy(&val[d][l], p + 4 * d, 4);
  }
  const uint32_t seq = w.issue_vm();
  lds_dma_write(w, ex, (w.s[kM0] & 0x3FFFFu) + uint64_t(in.mods.offset), bytes, val, seq);
}
}  // namespace
EMU_OP("global_load_lds_dword") { global_load_lds(w, in, 4); }
EMU_OP("global_load_lds_dwordx3") { global_load_lds(w, in, 12); }
EMU_OP("global_load_lds_dwordx4") { global_load_lds(w, in, 16); }

}  // namespace hipattn::emu
