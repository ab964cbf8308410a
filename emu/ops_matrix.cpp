// emu/ops_matrix.cpp: matrix (MFMA), accumulation-register moves, cross-lane operations and the
// gfx950 transposing LDS read.
//
// Sources (each handler names its section):
//   [CDNA3]  "AMD Instinct MI300 Instruction Set Architecture Reference Guide" (CDNA3):
//            ch. 7 "Matrix Arithmetic Instructions" (MFMA, ACC VGPRs), ch. 12 instruction
//            descriptions (VOP1 / VOP3 / VOP3P / DS opcode tables with pseudocode).
//   [CDNA4]  "AMD Instinct CDNA4 Instruction Set Architecture Reference Guide": ch. 7 (the new MFMA
//            shapes, f8f6f4), "MFMA Transpose Load from LDS" (DS_READ_B64_TR_B16), and the VOP1
//            opcodes V_PERMLANE16_SWAP_B32 / V_PERMLANE32_SWAP_B32.
//   [CALC]   ROCm/amd_matrix_instruction_calculator (--register-layout / --get-register for CDNA3):
//            the MFMA operand layouts, in calculator form "A[i][k]: lane i + M * floor(k / P), item
//            k % P" (P = A elements per lane), "B[k][j]: lane j + N * floor(k / P), item k % P",
//            "D[i][j]: lane j + M * floor(i / 4) % (64 / M), item 4 * floor(i / (256 / M)) + i % 4"
//            (single-block shapes); the CDNA4 16x16x32 / 32x32x16 shapes follow the same pattern
//            (CK Tile warp_gemm_attribute_mfma_impl.hpp: kAMLane, kABKLane, kABKPerLane, kCMLane,
//            kCM0PerLane of WarpGemmAttributeMfmaImpl{F16,Bf16}F32M16N16K32 / M32N32K16).
//   [OPUS]   the K order of the unscaled f8f6f4 shapes (fp8 e4m3 operands) within a lane, as AMD's
//            hardware-run test ROCm/aiter op_tests/opus/device/test_mfma_scale.cu loads them (see
//            shared/design/AMD-REVIEW.md, finding L1):
//              16x16x128:  row l % 16, k = 32 * (e / 8) + 8 * (l / 16) + e % 8
//              32x32x64:   row l % 32, k = 32 * (e / 16) + 16 * (l / 32) + e % 16
//            For an unscaled MFMA only the fact that A and B share one K map is observable.
//
// Arithmetic of the MFMAs: every product of two inputs (f16, bf16 or fp8) is exact in double, the
// products of one output element are summed in double in ascending k, C is added, and the result is
// rounded once to f32 (round to nearest even). The hardware accumulates in f32 in an order the ISA
// does not specify; this model is the exact result to within the double sum's error (~K * 2^-53
// relative), so a kernel that is right on this model is right on the hardware to within f32
// accumulation error. Inputs: f16 and bf16 subnormals are kept (not flushed); NaN / Inf propagate.
//
// What is not modeled and fails with Error::Kind::unimplemented: MFMA broadcast controls (cbsz,
// abid, blgp nonzero: also the f8f6f4 format selectors other than fp8 e4m3), MFMAs under a partial
// EXEC (the ISA text does not say what disabled lanes do), v_permlane*_swap under a partial EXEC
// (fi / bound_ctrl decide what inactive lanes give), and the MFMA issue hazards (s_nop counts).
#include <bit>
#include <cstdio>

#include "core.hpp"

namespace hipattn::emu {
namespace {

// LDS-pipeline instructions (DS_*) return their result through lgkmcnt ([CDNA3] 4.4 "Data
// Dependency Resolution"): the destination is pending until an s_waitcnt lgkmcnt covers it.
void mark_lgkm(Wave& w, const Operand& d, uint32_t seq) {
  for (int i = 0; i < d.count; ++i) {
    Pending& p = d.kind == Operand::agpr ? w.pend_a[d.reg + i] : w.pend_v[d.reg + i];
    w.mark(p, 2, seq);
  }
}

void need_ops(Wave& w, const Instruction& in, size_t n) {
  if (in.ops.size() != n)
    w.fail(Error::Kind::code_object, "expected " + std::to_string(n) + " operands, found " + std::to_string(in.ops.size()));
}

// ---------------------------------------------------------------- fp8 e4m3 decoding
// gfx942 reads the FNUZ variant ([CDNA3] 7.x "FP8 / BF8" data formats; calculator: "FP8 (AMD
// 4-bit exponent, 3-bit mantissa)"): exponent bias 8, 0x80 is the only NaN, no negative zero, no
// infinity (max 240). gfx950 reads OCP e4m3fn ([CDNA4] FP8 formats, OCP 8-bit floating point
// specification): bias 7, S.1111.111 is NaN, negative zero exists, no infinity (max 448).
double fp8_e4m3(uint8_t c, Gfx g) {
  const int sign = c >> 7, e = (c >> 3) & 15, m = c & 7;
  double v;
  if (g == Gfx::gfx942) {
    if (c == 0x80) return std::nan("");
    v = e == 0 ? std::ldexp(double(m), -10) : std::ldexp(double(8 + m), e - 8 - 3);
  } else {
    if ((c & 0x7F) == 0x7F) return std::nan("");
    v = e == 0 ? std::ldexp(double(m), -9) : std::ldexp(double(8 + m), e - 7 - 3);
  }
  return sign ? -v : v;
}

// ---------------------------------------------------------------- MFMA
enum class In { f16, bf16, fp8, f8f6f4 };

struct Mfma {
  int m;              // M = N (single block)
  int k;              // K
  In in;
  bool gfx950_only;
  int elem_bits() const { return in == In::f16 || in == In::bf16 ? 16 : 8; }
  int per_lane() const { return k * m / 64; }                         // A / B elements per lane (P)
  int ab_dwords() const { return per_lane() * elem_bits() / 32; }
  int c_dwords() const { return m * m / 64; }
  // K index of element e of lane l of A (and of B): [CALC] for the gfx9 pattern, [OPUS] for f8f6f4.
  int k_of(int l, int e) const {
    if (in == In::f8f6f4) return m == 16 ? 32 * (e / 8) + 8 * (l / 16) + e % 8 : 32 * (e / 16) + 16 * (l / 32) + e % 16;
    return per_lane() * (l / m) + e;
  }
  // Row of element e of lane l of C / D ([CALC] D[i][j] layout, inverted); the column is l % m.
  int c_row(int l, int e) const { return m == 16 ? 4 * (l / 16) + e : 8 * (e / 4) + 4 * (l / 32) + e % 4; }
};

double mfma_elem(const Mfma& s, const uint32_t* dw, int e, Gfx g) {
  switch (s.in) {
    case In::f16: return f16_to_f32(uint16_t(dw[e / 2] >> (16 * (e % 2))));
    case In::bf16: return bf16_to_f32(uint16_t(dw[e / 2] >> (16 * (e % 2))));
    case In::fp8: return fp8_e4m3(uint8_t(dw[e / 4] >> (8 * (e % 4))), g);
    case In::f8f6f4: return fp8_e4m3(uint8_t(dw[e / 4] >> (8 * (e % 4))), Gfx::gfx950);  // cbsz = blgp = 0: fp8 e4m3
  }
  return 0;
}

// D = A * B + C: operands vdst (AGPR or VGPR range), src0 = A, src1 = B (VGPR or AGPR ranges),
// src2 = C (AGPR / VGPR range, or an inline constant for every element). [CDNA3] 7.1 "Matrix
// arithmetic" / [CDNA4] 7.1; layouts per [CALC] / [OPUS] above.
void run_mfma(Wave& w, const Instruction& in, const Mfma& s) {
  need_ops(w, in, 4);
  const Gfx g = w.launch->gfx;
  if (s.gfx950_only && g != Gfx::gfx950) w.fail(Error::Kind::unimplemented, in.base + " exists on gfx950 only");
  if (in.mods.cbsz || in.mods.abid || in.mods.blgp)
    w.fail(Error::Kind::unimplemented, "MFMA with cbsz/abid/blgp (broadcast or, for f8f6f4, a non-fp8 format) is not modeled");
  if (w.exec() != kAllLanes)
    w.fail(Error::Kind::unimplemented, "MFMA with EXEC = " + hex(w.exec()) + " (not all lanes): not modeled");
  const Operand &D = in.ops[0], &A = in.ops[1], &B = in.ops[2], &C = in.ops[3];
  if (A.count != s.ab_dwords() || B.count != s.ab_dwords() || D.count != s.c_dwords() ||
      (C.kind != Operand::imm && C.count != s.c_dwords()))
    w.fail(Error::Kind::unimplemented, "operand sizes do not match " + in.base + " (f8f6f4: only fp8 x fp8 is modeled)");
  const int M = s.m, K = s.k, P = s.per_lane();
  // operands (through the accessors: the wait-count check sees every register read)
  std::vector<uint32_t> a(size_t(kLanes) * s.ab_dwords()), b(a.size()), c(size_t(kLanes) * s.c_dwords());
  for (int d = 0; d < s.ab_dwords(); ++d) {
    const auto& ra = w.vreg(A, d, false);
    for (int l = 0; l < kLanes; ++l) a[size_t(l) * s.ab_dwords() + d] = ra[l];
    const auto& rb = w.vreg(B, d, false);
    for (int l = 0; l < kLanes; ++l) b[size_t(l) * s.ab_dwords() + d] = rb[l];
  }
  if (C.kind == Operand::imm) {
    const uint32_t x = w.sread32(C);
    std::fill(c.begin(), c.end(), x);
  } else {
    for (int d = 0; d < s.c_dwords(); ++d) {
      const auto& rc = w.vreg(C, d, false);
      for (int l = 0; l < kLanes; ++l) c[size_t(l) * s.c_dwords() + d] = rc[l];
    }
  }
  std::vector<double> am(size_t(M) * K), bm(size_t(K) * M);  // A[i][k], B[k][j]
  for (int l = 0; l < kLanes; ++l)
    for (int e = 0; e < P; ++e) {
      const int k = s.k_of(l, e);
      am[size_t(l % M) * K + k] = mfma_elem(s, &a[size_t(l) * s.ab_dwords()], e, g);
      bm[size_t(k) * M + l % M] = mfma_elem(s, &b[size_t(l) * s.ab_dwords()], e, g);
    }
  std::vector<uint32_t> out(c.size());
  for (int l = 0; l < kLanes; ++l)
    for (int e = 0; e < s.c_dwords(); ++e) {
      const int i = s.c_row(l, e), j = l % M;
      double sum = 0.0;
      for (int k = 0; k < K; ++k) sum += am[size_t(i) * K + k] * bm[size_t(k) * M + j];
      sum += double(as_f(c[size_t(l) * s.c_dwords() + e]));
      out[size_t(l) * s.c_dwords() + e] = as_u(float(sum));
    }
  for (int d = 0; d < s.c_dwords(); ++d) {
    auto& rd = w.vreg(D, d, true);
    for (int l = 0; l < kLanes; ++l) rd[l] = out[size_t(l) * s.c_dwords() + d];
  }
}

#define EMU_MFMA(SHAPE, ...) \
  EMU_OP(__VA_ARGS__) { static const Mfma s = SHAPE; run_mfma(w, in, s); }

// gfx942 and gfx950 ([CDNA3] 7.1 table of MFMA opcodes; [CDNA4] keeps them). LLVM prints the
// "_1k" bf16 forms as v_mfma_f32_{16x16x16,32x32x8}_bf16 for gfx942 / gfx950; the older spellings
// are registered too.
EMU_MFMA((Mfma{16, 16, In::f16, false}), "v_mfma_f32_16x16x16_f16", "v_mfma_f32_16x16x16f16")
EMU_MFMA((Mfma{16, 16, In::bf16, false}), "v_mfma_f32_16x16x16_bf16", "v_mfma_f32_16x16x16bf16_1k")
EMU_MFMA((Mfma{32, 8, In::f16, false}), "v_mfma_f32_32x32x8_f16", "v_mfma_f32_32x32x8f16")
EMU_MFMA((Mfma{32, 8, In::bf16, false}), "v_mfma_f32_32x32x8_bf16", "v_mfma_f32_32x32x8bf16_1k")
// fp8 x fp8 ([CDNA3] 7.1, V_MFMA_F32_16X16X32_FP8_FP8 / 32X32X16): 8 codes per lane in a b64.
EMU_MFMA((Mfma{16, 32, In::fp8, false}), "v_mfma_f32_16x16x32_fp8_fp8")
EMU_MFMA((Mfma{32, 16, In::fp8, false}), "v_mfma_f32_32x32x16_fp8_fp8")
// gfx950 only ([CDNA4] 7.1): 8 x 16-bit per lane.
EMU_MFMA((Mfma{16, 32, In::f16, true}), "v_mfma_f32_16x16x32_f16")
EMU_MFMA((Mfma{16, 32, In::bf16, true}), "v_mfma_f32_16x16x32_bf16")
EMU_MFMA((Mfma{32, 16, In::f16, true}), "v_mfma_f32_32x32x16_f16")
EMU_MFMA((Mfma{32, 16, In::bf16, true}), "v_mfma_f32_32x32x16_bf16")
// [CDNA4] V_MFMA_F32_16X16X128_F8F6F4 / 32X32X64 (the unscaled form of V_MFMA_SCALE_*): fp8 e4m3
// operands only (cbsz = blgp = 0; 32 codes per lane in 8 VGPRs), K order per [OPUS].
EMU_MFMA((Mfma{16, 128, In::f8f6f4, true}), "v_mfma_f32_16x16x128_f8f6f4")
EMU_MFMA((Mfma{32, 64, In::f8f6f4, true}), "v_mfma_f32_32x32x64_f8f6f4")

// ---------------------------------------------------------------- ACC VGPR moves
// [CDNA3] 7.2 / VOP3P opcodes V_ACCVGPR_READ_B32 (VGPR <- AGPR), V_ACCVGPR_WRITE_B32 (AGPR <- VGPR or
// inline constant: LLVM rejects other sources, "source operand must be either a VGPR or an inline
// constant"), V_ACCVGPR_MOV_B32 (AGPR <- AGPR). Ordinary VALU moves under EXEC.
void acc_move(Wave& w, const Instruction& in, Operand::Kind dst_kind, bool src_agpr) {
  need_ops(w, in, 2);
  if (in.ops[0].kind != dst_kind) w.fail(Error::Kind::code_object, "unexpected destination register file");
  if (src_agpr && in.ops[1].kind != Operand::agpr) w.fail(Error::Kind::code_object, "source must be an AGPR");
  uint32_t v[kLanes];
  w.vread32(in.ops[1], v);
  w.vwrite32(in.ops[0], v, w.exec());
}
EMU_OP("v_accvgpr_read_b32", "v_accvgpr_read") { acc_move(w, in, Operand::vgpr, true); }
EMU_OP("v_accvgpr_write_b32", "v_accvgpr_write") { acc_move(w, in, Operand::agpr, false); }
EMU_OP("v_accvgpr_mov_b32") { acc_move(w, in, Operand::agpr, true); }

// ---------------------------------------------------------------- lane reads / writes
// [CDNA3] VOP3 V_READLANE_B32: SGPR <- VGPR of lane (src1 & 63); src1 an SGPR, M0 or inline
// constant; ignores EXEC.
EMU_OP("v_readlane_b32") {
  need_ops(w, in, 3);
  const uint32_t lane = w.sread32(in.ops[2]) & 63;
  uint32_t v[kLanes];
  w.vread32(in.ops[1], v);
  w.swrite32(in.ops[0], v[lane]);
}
// [CDNA3] VOP3 V_WRITELANE_B32: VGPR of lane (src1 & 63) <- scalar src0; ignores EXEC.
EMU_OP("v_writelane_b32") {
  need_ops(w, in, 3);
  const uint32_t val = w.sread32(in.ops[1]);
  const uint32_t lane = w.sread32(in.ops[2]) & 63;
  auto& r = w.vreg(in.ops[0], 0, true);
  r[lane] = val;
}
// [CDNA3] VOP1 V_READFIRSTLANE_B32: SGPR <- VGPR of the lowest active lane (lane 0 when EXEC = 0).
EMU_OP("v_readfirstlane_b32") {
  need_ops(w, in, 2);
  const uint64_t exec = w.exec();
  const int lane = exec ? std::countr_zero(exec) : 0;
  uint32_t v[kLanes];
  w.vread32(in.ops[1], v);
  w.swrite32(in.ops[0], v[lane]);
}

// ---------------------------------------------------------------- permlane swaps (gfx950)
// [CDNA4] VOP1 V_PERMLANE16_SWAP_B32 / V_PERMLANE32_SWAP_B32, "vdst, src0": both registers are
// read and written. 16: each odd 16-lane row of VDST trades with the even row of SRC0 below it
// (VDST lanes 16..31 <-> SRC0 lanes 0..15, VDST 48..63 <-> SRC0 32..47); 32: VDST lanes 32..63 <->
// SRC0 lanes 0..31. (LLVM: llvm.amdgcn.permlane{16,32}.swap(vdst_old, src0, fi, bound_ctrl) returns
// {new vdst, new src0}; "rows 2 and 3 of the first operand are swapped with rows 0 and 1 of the
// second".) fi / bound_ctrl only matter for lanes disabled by EXEC, which is not modeled.
void permlane_swap(Wave& w, const Instruction& in, int stride) {
  need_ops(w, in, 2);
  if (w.launch->gfx != Gfx::gfx950) w.fail(Error::Kind::unimplemented, in.base + " exists on gfx950 only");
  if (w.exec() != kAllLanes)
    w.fail(Error::Kind::unimplemented, in.base + " with EXEC = " + hex(w.exec()) + ": inactive-lane (fi / bound_ctrl) semantics not modeled");
  const Operand &vd = in.ops[0], &s0 = in.ops[1];
  if (vd.kind != Operand::vgpr || s0.kind != Operand::vgpr) w.fail(Error::Kind::code_object, "operands must be VGPRs");
  uint32_t d[kLanes], s[kLanes];
  w.vread32(vd, d);
  w.vread32(s0, s);
  const bool same = vd.reg == s0.reg;
  uint32_t* src = same ? d : s;  // one register: the pairs of lanes trade within it
  for (int l = 0; l < kLanes; ++l) {
    const bool upper = stride == 32 ? l >= 32 : (l & 16) != 0;  // a VDST lane that trades
    if (!upper) continue;
    const int partner = l - stride;                            // the SRC0 lane it trades with
    std::swap(d[l], src[partner]);
  }
  w.vwrite32(vd, d, kAllLanes);
  if (!same) w.vwrite32(s0, s, kAllLanes);
}
EMU_OP("v_permlane16_swap_b32") { permlane_swap(w, in, 16); }
EMU_OP("v_permlane32_swap_b32") { permlane_swap(w, in, 32); }

// ---------------------------------------------------------------- DS lane exchanges (no LDS memory)
// [CDNA3] DS_SWIZZLE_B32 "vdst, vdata offset:<pattern>": offset[15] = 1: quad-permute mode, lane
// 4q + i reads lane 4q + offset[2i+1:2i]; offset[15] = 0: bit-mask mode within each 32-lane half,
// lane j reads ((j & and_mask) | or_mask) ^ xor_mask with and_mask = offset[4:0], or_mask =
// offset[9:5], xor_mask = offset[14:10]. A disabled source lane gives 0 ("thread_valid[j] ?
// thread_in[j] : 0"). Counts in lgkmcnt like every DS instruction.
EMU_OP("ds_swizzle_b32") {
  need_ops(w, in, 2);
  const int off = in.mods.swizzle;
  if (off < 0) w.fail(Error::Kind::code_object, "ds_swizzle_b32 offset not parsed");
  if (in.mods.gds) w.fail(Error::Kind::unimplemented, "GDS");
  uint32_t src[kLanes], out[kLanes];
  w.vread32(in.ops[1], src);
  const uint64_t exec = w.exec();
  for (int l = 0; l < kLanes; ++l) {
    int s;
    if (off & 0x8000) {
      s = (l & ~3) | ((off >> (2 * (l & 3))) & 3);
    } else {
      const int and_m = off & 31, or_m = (off >> 5) & 31, xor_m = (off >> 10) & 31;
      s = (l & 32) | ((((l & 31) & and_m) | or_m) ^ xor_m);
    }
    out[l] = (exec >> s & 1) ? src[s] : 0u;
  }
  const uint32_t seq = w.issue_lgkm(false);
  w.vwrite32(in.ops[0], out, exec);
  mark_lgkm(w, in.ops[0], seq);
}

// [CDNA3] DS_BPERMUTE_B32 "vdst, vaddr, vdata offset:N" (backward permute, a gather): active lane
// l reads vdata of lane ((vaddr[l] + offset) / 4) & 63; a disabled source lane gives 0.
EMU_OP("ds_bpermute_b32") {
  need_ops(w, in, 3);
  uint32_t addr[kLanes], data[kLanes], out[kLanes];
  w.vread32(in.ops[1], addr);
  w.vread32(in.ops[2], data);
  const uint64_t exec = w.exec();
  for (int l = 0; l < kLanes; ++l) {
    const int s = int(((addr[l] + uint32_t(in.mods.offset)) >> 2) & 63);
    out[l] = (exec >> s & 1) ? data[s] : 0u;
  }
  const uint32_t seq = w.issue_lgkm(false);
  w.vwrite32(in.ops[0], out, exec);
  mark_lgkm(w, in.ops[0], seq);
}

// [CDNA3] DS_PERMUTE_B32 (forward permute, a scatter): every active lane l sends vdata[l] to lane
// ((vaddr[l] + offset) / 4) & 63; active lanes then take what they were sent, 0 if nothing (of two
// senders to one lane the higher lane wins: lanes are processed in ascending order).
EMU_OP("ds_permute_b32") {
  need_ops(w, in, 3);
  uint32_t addr[kLanes], data[kLanes], tmp[kLanes] = {};
  w.vread32(in.ops[1], addr);
  w.vread32(in.ops[2], data);
  const uint64_t exec = w.exec();
  for (int l = 0; l < kLanes; ++l)
    if (exec >> l & 1) tmp[((addr[l] + uint32_t(in.mods.offset)) >> 2) & 63] = data[l];
  const uint32_t seq = w.issue_lgkm(false);
  w.vwrite32(in.ops[0], tmp, exec);
  mark_lgkm(w, in.ops[0], seq);
}

// ---------------------------------------------------------------- transposing LDS read (gfx950)
// [CDNA4] "MFMA Transpose Load from LDS", DS_READ_B64_TR_B16 "vdst[2], vaddr offset:N": within each
// 16-lane group, lane i supplies the LDS address (vaddr + offset) of 8 bytes = row i / 4, columns
// 4 * (i % 4) .. + 3 of a 4 x 16 block of 16-bit values, and receives column i of the block: its
// element j (bits [16j, 16j + 16) of vdst) is block row j, i.e. element i % 4 of what lane
// 4 j + i / 4 of the group addressed. Sources for this reading (AMD-REVIEW.md section 2): the ISA
// prose ("each lane holds 4 consecutive M or N values"), AITER's hardware test
// op_tests/opus/device/test_tr_load_f16.cu, and Mojo's _load_tr16_b64_row. The ISA requires EXEC to
// be all ones; anything else is reported. Addresses must be 8-byte aligned (checked: the emulator
// does not model unaligned transpose reads).
// Both transpose reads: `Elem` the element type (uint16_t: _tr_b16, uint8_t: _tr_b8). Lane i of a
// 16-lane group addresses 8 bytes = kPer = 8 / sizeof(Elem) elements, row i / (16 / kPer) of a
// kPer x 16 block, and receives column i: its element j is element i % kPer of what lane
// (16 / kPer) j + i / kPer of the group addressed.
template <class Elem>
void ds_read_b64_tr(Wave& w, const Instruction& in, const char* name) {
  constexpr int kPer = int(8 / sizeof(Elem)), kLanesPerRow = 16 / kPer;
  need_ops(w, in, 2);
  if (w.launch->gfx != Gfx::gfx950) w.fail(Error::Kind::unimplemented, std::string(name) + " exists on gfx950 only");
  if (in.ops[0].count != 2) w.fail(Error::Kind::code_object, std::string(name) + " writes two VGPRs");
  if (w.exec() != kAllLanes)
    w.fail(Error::Kind::launch, std::string(name) + " with EXEC = " + hex(w.exec()) +
                                    ": the ISA requires EXEC = all ones for transpose loads (a divergent caller "
                                    "would get wrong data on hardware)");
  uint32_t addr[kLanes];
  w.vread32(in.ops[1], addr);
  Elem row[kLanes][kPer];
  for (int l = 0; l < kLanes; ++l) {
    const uint32_t a = addr[l] + uint32_t(in.mods.offset);
    if (a % 8)
      w.fail(Error::Kind::memory_fault,
             std::string(name) + " lane " + std::to_string(l) + " address " + hex(a) + " is not 8-byte aligned");
    std::memcpy(row[l], lds_access(w, a, 8, false), 8);
  }
  uint32_t out[2][kLanes];
  for (int l = 0; l < kLanes; ++l) {
    const int g = l & ~15, i = l & 15;
    Elem e[kPer];
    for (int j = 0; j < kPer; ++j) e[j] = row[g + kLanesPerRow * j + i / kPer][i % kPer];
    std::memcpy(&out[0][l], e, 4);
    std::memcpy(&out[1][l], reinterpret_cast<const uint8_t*>(e) + 4, 4);
  }
  const uint32_t seq = w.issue_lgkm(false);
  w.vwrite32(in.ops[0], out[0], kAllLanes, 0);
  w.vwrite32(in.ops[0], out[1], kAllLanes, 1);
  mark_lgkm(w, in.ops[0], seq);
}

EMU_OP("ds_read_b64_tr_b16") { ds_read_b64_tr<uint16_t>(w, in, "ds_read_b64_tr_b16"); }

// [CDNA4] "MFMA Transpose Load from LDS", DS_READ_B64_TR_B8 "vdst[2], vaddr offset:N": the 8-bit
// form of the above. Within each 16-lane group, lane i supplies the LDS address of 8 bytes = row i / 2,
// columns 8 * (i % 2) .. + 7 of an 8 x 16 block of bytes, and receives column i of the block: its byte
// j (bits [8j, 8j + 8) of vdst) is block row j, i.e. byte i % 8 of what lane 2 j + i / 8 of the group
// addressed. Sources: the ISA's K split of the transpose reads (one b64_tr_b8 covers 8 consecutive K
// values per lane, as b64_tr_b16 covers 4: LLVM AMDGPU usage docs, "K-position split by intrinsic"),
// and the lane map of the b16 form above carried to 2 lanes x 8 bytes per 16-byte row (the same map
// as a public gfx950 kernel library's `arch_cdna4::ds_read_b64_tr_b8::map`, "bunnies": source lane L,
// byte k -> lane 8 (L % 2) + k, byte L / 2 % 8, within L's 16-lane group). AITER's gfx950 fp8 forward
// kernel, which reads V through this instruction, matches the float64 reference with this map
// (tests/timing/test_aiter_fwd.cpp). EXEC all ones and 8-byte alignment as above.
EMU_OP("ds_read_b64_tr_b8") { ds_read_b64_tr<uint8_t>(w, in, "ds_read_b64_tr_b8"); }

}  // namespace
}  // namespace hipattn::emu
