// emu/ops_scalar.cpp: scalar ALU (SOP2, SOPK, SOP1, SOPC), program control (SOPP) and scalar
// memory (SMEM). Semantics: "AMD Instinct MI300 (CDNA3) ISA Reference Guide", chapter 4 "Program
// Flow Control" (branches, s_waitcnt, s_barrier), chapter 5 "Scalar ALU Operations" (5.1-5.3:
// SCC results; the per-opcode descriptions in 12.1-12.5) and chapter 6 "Scalar Memory Operations".
// CDNA4 keeps these encodings and semantics for every opcode below.
#include <bit>

#include "core.hpp"

namespace hipattn::emu {
namespace {

uint32_t S(Wave& w, const Instruction& in, int i) { return w.sread32(in.ops.at(i)); }
uint64_t S64(Wave& w, const Instruction& in, int i) { return w.sread64(in.ops.at(i)); }
void D(Wave& w, const Instruction& in, uint32_t v) { w.swrite32(in.ops.at(0), v); }
void D64(Wave& w, const Instruction& in, uint64_t v) { w.swrite64(in.ops.at(0), v); }
int32_t simm16(const Instruction& in, int i) { return int32_t(int16_t(uint16_t(in.ops.at(i).ival))); }

}  // namespace

// ---- SOP1 / SOPK moves (12.2, 12.4)
EMU_OP("s_mov_b32") { D(w, in, S(w, in, 1)); }
EMU_OP("s_mov_b64") { D64(w, in, S64(w, in, 1)); }
EMU_OP("s_cmov_b32") { if (w.scc) D(w, in, S(w, in, 1)); }
EMU_OP("s_cmov_b64") { if (w.scc) D64(w, in, S64(w, in, 1)); }
EMU_OP("s_movk_i32") { D(w, in, uint32_t(simm16(in, 1))); }
EMU_OP("s_cmovk_i32") { if (w.scc) D(w, in, uint32_t(simm16(in, 1))); }
EMU_OP("s_not_b32") { const uint32_t r = ~S(w, in, 1); D(w, in, r); w.scc = r != 0; }
EMU_OP("s_not_b64") { const uint64_t r = ~S64(w, in, 1); D64(w, in, r); w.scc = r != 0; }
EMU_OP("s_brev_b32") {
  uint32_t x = S(w, in, 1), r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  D(w, in, r);
}
EMU_OP("s_abs_i32") {
  const int32_t x = int32_t(S(w, in, 1));
  const uint32_t r = x < 0 ? uint32_t(0) - uint32_t(x) : uint32_t(x);
  D(w, in, r);
  w.scc = r != 0;
}
EMU_OP("s_bcnt1_i32_b32") { const uint32_t r = uint32_t(std::popcount(S(w, in, 1))); D(w, in, r); w.scc = r != 0; }
EMU_OP("s_bcnt1_i32_b64") { const uint32_t r = uint32_t(std::popcount(S64(w, in, 1))); D(w, in, r); w.scc = r != 0; }
EMU_OP("s_ff1_i32_b32") { const uint32_t x = S(w, in, 1); D(w, in, x ? uint32_t(std::countr_zero(x)) : ~0u); }
EMU_OP("s_ff1_i32_b64") { const uint64_t x = S64(w, in, 1); D(w, in, x ? uint32_t(std::countr_zero(x)) : ~0u); }
EMU_OP("s_flbit_i32_b32") { const uint32_t x = S(w, in, 1); D(w, in, x ? uint32_t(std::countl_zero(x)) : ~0u); }
EMU_OP("s_sext_i32_i8") { D(w, in, uint32_t(int32_t(int8_t(S(w, in, 1))))); }
EMU_OP("s_sext_i32_i16") { D(w, in, uint32_t(int32_t(int16_t(S(w, in, 1))))); }
EMU_OP("s_getpc_b64") { D64(w, in, w.cur->addr + 4); }

// saveexec (12.2): D = EXEC; EXEC = f(S0, EXEC); SCC = EXEC != 0
#define EMU_SAVEEXEC(NAME, EXPR)                      \
  EMU_OP(NAME) {                                      \
    const uint64_t s0 = S64(w, in, 1), ex = w.exec(); \
    D64(w, in, ex);                                   \
    const uint64_t r = (EXPR);                        \
    w.set_exec(r);                                    \
    w.scc = r != 0;                                   \
  }
EMU_SAVEEXEC("s_and_saveexec_b64", s0 & ex)
EMU_SAVEEXEC("s_or_saveexec_b64", s0 | ex)
EMU_SAVEEXEC("s_xor_saveexec_b64", s0 ^ ex)
EMU_SAVEEXEC("s_andn2_saveexec_b64", s0 & ~ex)
EMU_SAVEEXEC("s_orn2_saveexec_b64", s0 | ~ex)
EMU_SAVEEXEC("s_nand_saveexec_b64", ~(s0 & ex))
EMU_SAVEEXEC("s_nor_saveexec_b64", ~(s0 | ex))
EMU_SAVEEXEC("s_xnor_saveexec_b64", ~(s0 ^ ex))
EMU_SAVEEXEC("s_andn1_saveexec_b64", ~s0 & ex)
EMU_SAVEEXEC("s_orn1_saveexec_b64", ~s0 | ex)
#undef EMU_SAVEEXEC

// ---- SOP2 (12.1)
EMU_OP("s_add_u32") {
  const uint64_t r = uint64_t(S(w, in, 1)) + S(w, in, 2);
  D(w, in, uint32_t(r));
  w.scc = r >> 32;
}
EMU_OP("s_addc_u32") {
  const uint64_t r = uint64_t(S(w, in, 1)) + S(w, in, 2) + (w.scc ? 1 : 0);
  D(w, in, uint32_t(r));
  w.scc = r >> 32;
}
EMU_OP("s_sub_u32") {
  const uint32_t a = S(w, in, 1), b = S(w, in, 2);
  D(w, in, a - b);
  w.scc = b > a;
}
EMU_OP("s_subb_u32") {
  const uint32_t a = S(w, in, 1), b = S(w, in, 2), c = w.scc ? 1 : 0;
  D(w, in, a - b - c);
  w.scc = uint64_t(b) + c > a;
}
EMU_OP("s_add_i32") {
  const int32_t a = int32_t(S(w, in, 1)), b = int32_t(S(w, in, 2));
  const int32_t r = int32_t(uint32_t(a) + uint32_t(b));
  D(w, in, uint32_t(r));
  w.scc = ((a >= 0) == (b >= 0)) && ((r >= 0) != (a >= 0));  // signed overflow
}
EMU_OP("s_sub_i32") {
  const int32_t a = int32_t(S(w, in, 1)), b = int32_t(S(w, in, 2));
  const int32_t r = int32_t(uint32_t(a) - uint32_t(b));
  D(w, in, uint32_t(r));
  w.scc = ((a >= 0) != (b >= 0)) && ((r >= 0) != (a >= 0));
}
EMU_OP("s_addk_i32") {
  const int32_t a = int32_t(S(w, in, 0)), b = simm16(in, 1);
  const int32_t r = int32_t(uint32_t(a) + uint32_t(b));
  D(w, in, uint32_t(r));
  w.scc = ((a >= 0) == (b >= 0)) && ((r >= 0) != (a >= 0));
}
EMU_OP("s_mulk_i32") { D(w, in, uint32_t(int32_t(S(w, in, 0)) * simm16(in, 1))); }
EMU_OP("s_mul_i32") { D(w, in, S(w, in, 1) * S(w, in, 2)); }
EMU_OP("s_mul_hi_u32") { D(w, in, uint32_t((uint64_t(S(w, in, 1)) * S(w, in, 2)) >> 32)); }
EMU_OP("s_mul_hi_i32") {
  D(w, in, uint32_t(uint64_t(int64_t(int32_t(S(w, in, 1))) * int64_t(int32_t(S(w, in, 2)))) >> 32));
}
EMU_OP("s_min_i32") { const int32_t a = int32_t(S(w, in, 1)), b = int32_t(S(w, in, 2)); D(w, in, uint32_t(a < b ? a : b)); w.scc = a < b; }
EMU_OP("s_min_u32") { const uint32_t a = S(w, in, 1), b = S(w, in, 2); D(w, in, a < b ? a : b); w.scc = a < b; }
EMU_OP("s_max_i32") { const int32_t a = int32_t(S(w, in, 1)), b = int32_t(S(w, in, 2)); D(w, in, uint32_t(a > b ? a : b)); w.scc = a > b; }
EMU_OP("s_max_u32") { const uint32_t a = S(w, in, 1), b = S(w, in, 2); D(w, in, a > b ? a : b); w.scc = a > b; }
EMU_OP("s_cselect_b32") { const uint32_t a = S(w, in, 1), b = S(w, in, 2); D(w, in, w.scc ? a : b); }
EMU_OP("s_cselect_b64") { const uint64_t a = S64(w, in, 1), b = S64(w, in, 2); D64(w, in, w.scc ? a : b); }

#define EMU_LOGIC(NAME32, NAME64, EXPR)                                                     \
  EMU_OP(NAME32) { const uint32_t a = S(w, in, 1), b = S(w, in, 2); const uint32_t r = (EXPR); D(w, in, r); w.scc = r != 0; } \
  EMU_OP(NAME64) { const uint64_t a = S64(w, in, 1), b = S64(w, in, 2); const uint64_t r = (EXPR); D64(w, in, r); w.scc = r != 0; }
EMU_LOGIC("s_and_b32", "s_and_b64", a & b)
EMU_LOGIC("s_or_b32", "s_or_b64", a | b)
EMU_LOGIC("s_xor_b32", "s_xor_b64", a ^ b)
EMU_LOGIC("s_andn2_b32", "s_andn2_b64", a & ~b)
EMU_LOGIC("s_orn2_b32", "s_orn2_b64", a | ~b)
EMU_LOGIC("s_nand_b32", "s_nand_b64", ~(a & b))
EMU_LOGIC("s_nor_b32", "s_nor_b64", ~(a | b))
EMU_LOGIC("s_xnor_b32", "s_xnor_b64", ~(a ^ b))
#undef EMU_LOGIC

EMU_OP("s_lshl_b32") { const uint32_t r = S(w, in, 1) << (S(w, in, 2) & 31); D(w, in, r); w.scc = r != 0; }
EMU_OP("s_lshl_b64") { const uint64_t r = S64(w, in, 1) << (S(w, in, 2) & 63); D64(w, in, r); w.scc = r != 0; }
EMU_OP("s_lshr_b32") { const uint32_t r = S(w, in, 1) >> (S(w, in, 2) & 31); D(w, in, r); w.scc = r != 0; }
EMU_OP("s_lshr_b64") { const uint64_t r = S64(w, in, 1) >> (S(w, in, 2) & 63); D64(w, in, r); w.scc = r != 0; }
EMU_OP("s_ashr_i32") { const uint32_t r = uint32_t(int32_t(S(w, in, 1)) >> (S(w, in, 2) & 31)); D(w, in, r); w.scc = r != 0; }
EMU_OP("s_ashr_i64") { const uint64_t r = uint64_t(int64_t(S64(w, in, 1)) >> (S(w, in, 2) & 63)); D64(w, in, r); w.scc = r != 0; }
// s_lshlN_add_u32 (gfx9): D = (S0 << N) + S1, SCC = unsigned overflow
#define EMU_LSHL_ADD(NAME, N)                                              \
  EMU_OP(NAME) {                                                           \
    const uint64_t r = (uint64_t(S(w, in, 1)) << N) + S(w, in, 2);         \
    D(w, in, uint32_t(r));                                                 \
    w.scc = r >> 32;                                                       \
  }
EMU_LSHL_ADD("s_lshl1_add_u32", 1)
EMU_LSHL_ADD("s_lshl2_add_u32", 2)
EMU_LSHL_ADD("s_lshl3_add_u32", 3)
EMU_LSHL_ADD("s_lshl4_add_u32", 4)
#undef EMU_LSHL_ADD
EMU_OP("s_bfe_u32") {
  const uint32_t x = S(w, in, 1), c = S(w, in, 2), off = c & 31, width = (c >> 16) & 0x7F;
  const uint32_t r = width == 0 ? 0 : (x >> off) & (width >= 32 ? ~0u : ((1u << width) - 1));
  D(w, in, r);
  w.scc = r != 0;
}
EMU_OP("s_bfe_i32") {
  const uint32_t x = S(w, in, 1), c = S(w, in, 2), off = c & 31, width = (c >> 16) & 0x7F;
  int32_t r = 0;
  if (width > 0) {
    const uint32_t f = (x >> off) & (width >= 32 ? ~0u : ((1u << width) - 1));
    r = width >= 32 ? int32_t(f) : int32_t(f << (32 - width)) >> (32 - width);
  }
  D(w, in, uint32_t(r));
  w.scc = r != 0;
}
EMU_OP("s_bfm_b32") { D(w, in, ((1u << (S(w, in, 1) & 31)) - 1) << (S(w, in, 2) & 31)); }
EMU_OP("s_pack_ll_b32_b16") { D(w, in, (S(w, in, 1) & 0xFFFF) | (S(w, in, 2) << 16)); }
EMU_OP("s_pack_lh_b32_b16") { D(w, in, (S(w, in, 1) & 0xFFFF) | (S(w, in, 2) & 0xFFFF0000u)); }
EMU_OP("s_pack_hh_b32_b16") { D(w, in, (S(w, in, 1) >> 16) | (S(w, in, 2) & 0xFFFF0000u)); }

// ---- SOPC (12.3)
#define EMU_CMP(NAME, T, OP) EMU_OP(NAME) { w.scc = T(S(w, in, 0)) OP T(S(w, in, 1)); }
EMU_CMP("s_cmp_eq_i32", int32_t, ==) EMU_CMP("s_cmp_lg_i32", int32_t, !=) EMU_CMP("s_cmp_gt_i32", int32_t, >)
EMU_CMP("s_cmp_ge_i32", int32_t, >=) EMU_CMP("s_cmp_lt_i32", int32_t, <) EMU_CMP("s_cmp_le_i32", int32_t, <=)
EMU_CMP("s_cmp_eq_u32", uint32_t, ==) EMU_CMP("s_cmp_lg_u32", uint32_t, !=) EMU_CMP("s_cmp_gt_u32", uint32_t, >)
EMU_CMP("s_cmp_ge_u32", uint32_t, >=) EMU_CMP("s_cmp_lt_u32", uint32_t, <) EMU_CMP("s_cmp_le_u32", uint32_t, <=)
#undef EMU_CMP
EMU_OP("s_cmp_eq_u64") { w.scc = S64(w, in, 0) == S64(w, in, 1); }
EMU_OP("s_cmp_lg_u64") { w.scc = S64(w, in, 0) != S64(w, in, 1); }
EMU_OP("s_bitcmp0_b32") { w.scc = ((S(w, in, 0) >> (S(w, in, 1) & 31)) & 1) == 0; }
EMU_OP("s_bitcmp1_b32") { w.scc = ((S(w, in, 0) >> (S(w, in, 1) & 31)) & 1) == 1; }
EMU_OP("s_bitcmp0_b64") { w.scc = ((S64(w, in, 0) >> (S(w, in, 1) & 63)) & 1) == 0; }
EMU_OP("s_bitcmp1_b64") { w.scc = ((S64(w, in, 0) >> (S(w, in, 1) & 63)) & 1) == 1; }
// SOPK compares: S0 against the 16-bit immediate (signed for _i32, zero-extended for _u32)
#define EMU_CMPK(NAME, T, OP, IMM) EMU_OP(NAME) { w.scc = T(S(w, in, 0)) OP T(IMM); }
EMU_CMPK("s_cmpk_eq_i32", int32_t, ==, simm16(in, 1)) EMU_CMPK("s_cmpk_lg_i32", int32_t, !=, simm16(in, 1))
EMU_CMPK("s_cmpk_gt_i32", int32_t, >, simm16(in, 1)) EMU_CMPK("s_cmpk_ge_i32", int32_t, >=, simm16(in, 1))
EMU_CMPK("s_cmpk_lt_i32", int32_t, <, simm16(in, 1)) EMU_CMPK("s_cmpk_le_i32", int32_t, <=, simm16(in, 1))
EMU_CMPK("s_cmpk_eq_u32", uint32_t, ==, uint16_t(in.ops.at(1).ival)) EMU_CMPK("s_cmpk_lg_u32", uint32_t, !=, uint16_t(in.ops.at(1).ival))
EMU_CMPK("s_cmpk_gt_u32", uint32_t, >, uint16_t(in.ops.at(1).ival)) EMU_CMPK("s_cmpk_ge_u32", uint32_t, >=, uint16_t(in.ops.at(1).ival))
EMU_CMPK("s_cmpk_lt_u32", uint32_t, <, uint16_t(in.ops.at(1).ival)) EMU_CMPK("s_cmpk_le_u32", uint32_t, <=, uint16_t(in.ops.at(1).ival))
#undef EMU_CMPK

// ---- SOPP: program control (chapter 4, 12.5)
EMU_OP("s_nop", "v_nop", "s_setprio", "s_sleep", "s_icache_inv", "s_dcache_inv", "s_dcache_wb", "s_ttracedata") {}
EMU_OP("s_endpgm") { w.done = true; }
EMU_OP("s_branch") { w.pc = in.target_index; }
EMU_OP("s_cbranch_scc0") { if (!w.scc) w.pc = in.target_index; }
EMU_OP("s_cbranch_scc1") { if (w.scc) w.pc = in.target_index; }
EMU_OP("s_cbranch_vccz") { if (w.vcc() == 0) w.pc = in.target_index; }
EMU_OP("s_cbranch_vccnz") { if (w.vcc() != 0) w.pc = in.target_index; }
EMU_OP("s_cbranch_execz") { if (w.exec() == 0) w.pc = in.target_index; }
EMU_OP("s_cbranch_execnz") { if (w.exec() != 0) w.pc = in.target_index; }
// s_waitcnt (4.4): wait until at most N events of each counter are outstanding.
EMU_OP("s_waitcnt") { w.waitcnt(in.mods.vmcnt, in.mods.lgkmcnt); }
// s_barrier (4.5): the wave waits until every live wave of the workgroup has reached a barrier.
EMU_OP("s_barrier") { w.at_barrier = true; }
EMU_OP("s_trap", "s_sethalt") { w.fail(Error::Kind::launch, "the kernel trapped"); }
EMU_OP("s_getreg_b32") { D(w, in, 0); }
EMU_OP("s_setreg_b32", "s_setreg_imm32_b32") {}  // MODE changes (rounding, denormals): not modelled

// VGPR indexing mode (CDNA3 ISA 6.6 "VGPR Indexing"; opcodes in 12.3 SOPC and 12.5 SOPP):
// s_set_gpr_idx_on S0, SIMM4: MODE.gpr_idx_en = 1; M0[7:0] = S0[7:0]; M0[15:12] = SIMM4.
// s_set_gpr_idx_off: MODE.gpr_idx_en = 0. s_set_gpr_idx_idx S0: M0[7:0] = S0[7:0].
// s_set_gpr_idx_mode SIMM4: M0[15:12] = SIMM4. The other bits of M0 are kept. The indexing itself is
// applied to VALU operands by the scheduler (gpr_indexed, machine.cpp).
namespace {
Operand m0_operand() {
  Operand o;
  o.kind = Operand::sgpr;
  o.reg = kM0;
  return o;
}
}  // namespace
EMU_OP("s_set_gpr_idx_on") {
  const uint32_t idx = S(w, in, 0) & 0xFF, mode = uint32_t(in.ops.at(1).ival) & 0xF;
  const Operand m0 = m0_operand();
  w.swrite32(m0, (w.sread32(m0) & ~0xF0FFu) | idx | (mode << 12));
  w.gpr_idx_en = true;
}
EMU_OP("s_set_gpr_idx_off") { w.gpr_idx_en = false; }
EMU_OP("s_set_gpr_idx_idx") {
  const Operand m0 = m0_operand();
  w.swrite32(m0, (w.sread32(m0) & ~0xFFu) | (S(w, in, 0) & 0xFF));
}
EMU_OP("s_set_gpr_idx_mode") {
  const Operand m0 = m0_operand();
  w.swrite32(m0, (w.sread32(m0) & ~0xF000u) | ((uint32_t(in.ops.at(0).ival) & 0xF) << 12));
}

// ---- SMEM (chapter 6, 12.6): s_load_dword{,x2,x4,x8,x16} sdst, sbase, offset
namespace {
void smem_load(Wave& w, const Instruction& in, int dwords) {
  const uint64_t base = w.sread64(in.ops.at(1));
  int64_t off = in.mods.offset;
  if (in.ops.size() > 2) {
    const Operand& o = in.ops.at(2);
    off += o.kind == Operand::imm ? o.ival : int64_t(w.sread32(o));
  }
  const uint64_t addr = (base + uint64_t(off)) & ~uint64_t(3);  // dword aligned: low bits ignored
  uint32_t buf[16];
  uint8_t* p;
  try {
    p = w.launch->mem->at(addr, 4 * dwords, "scalar load");
  } catch (const Error& e) {
    w.fail(Error::Kind::memory_fault, e.what());
  }
  std::memcpy(buf, p, 4 * dwords);
  const Operand& d = in.ops.at(0);
  const uint32_t seq = w.issue_lgkm(true);
  for (int i = 0; i < dwords; ++i) {
    Operand r = d;
    r.reg = uint16_t(d.reg + i);
    r.count = 1;
    w.swrite32(r, buf[i]);
    w.mark(w.pend_s[d.reg + i], 2, seq);
  }
}
}  // namespace
EMU_OP("s_load_dword") { smem_load(w, in, 1); }
EMU_OP("s_load_dwordx2") { smem_load(w, in, 2); }
EMU_OP("s_load_dwordx4") { smem_load(w, in, 4); }
EMU_OP("s_load_dwordx8") { smem_load(w, in, 8); }
EMU_OP("s_load_dwordx16") { smem_load(w, in, 16); }

}  // namespace hipattn::emu
