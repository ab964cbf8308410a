// emu/ops_valu.cpp: vector ALU (VOP1, VOP2, VOPC, VOP3, VOP3P packed f32) except the matrix
// and cross-lane instructions (ops_matrix.cpp). Semantics: "AMD Instinct MI300 (CDNA3) ISA
// Reference Guide", chapter 7 "Vector ALU Operations" (7.1 operand and EXEC rules, 7.2 VCC/carry
// outputs, 7.3 modifiers: abs/neg/clamp/omod, 7.x packed math) and the opcode descriptions of 12.7
// (VOP2), 12.8 (VOP1), 12.9 (VOPC), 12.10 (VOP3P), 12.11 (VOP3A/B); CDNA4 ISA for gfx950's
// v_cvt_pk_bf16_f32, v_cvt_pk_f16_f32 and v_bitop3_b32. Transcendentals (v_exp_f32, v_log_f32,
// v_rcp_f32, ...) are computed exactly, not with the hardware's approximation (1 ulp).
#include <bit>

#include "core.hpp"

namespace hipattn::emu {
namespace {

using Lanes = uint32_t[kLanes];

// dst = ops[0]; sources from ops[first] on. The result lanes are EXEC (and DPP masks).
template <class F>
void vop_u32(Wave& w, const Instruction& in, int nsrc, F f, int first = 1) {
  Lanes s0{}, s1{}, s2{}, r{};
  read_src32(w, in, first, 0, s0);
  if (nsrc > 1) read_src32(w, in, first + 1, 1, s1);
  if (nsrc > 2) read_src32(w, in, first + 2, 2, s2);
  for (int l = 0; l < kLanes; ++l) r[l] = f(s0[l], s1[l], s2[l]);
  write_dst32(w, in, 0, r, false);
}

template <class F>
void vop_f32(Wave& w, const Instruction& in, int nsrc, F f, int first = 1) {
  float s0[kLanes]{}, s1[kLanes]{}, s2[kLanes]{};
  Lanes r{};
  read_srcf(w, in, first, 0, s0);
  if (nsrc > 1) read_srcf(w, in, first + 1, 1, s1);
  if (nsrc > 2) read_srcf(w, in, first + 2, 2, s2);
  for (int l = 0; l < kLanes; ++l) r[l] = as_u(f(s0[l], s1[l], s2[l]));
  write_dst32(w, in, 0, r, true);
}

// VOPC: ops[0] is the mask destination (vcc or an SGPR pair); inactive lanes write 0 (12.9).
template <class F>
void vopc(Wave& w, const Instruction& in, F f) {
  Lanes a{}, b{};
  read_src32(w, in, 1, 0, a);
  read_src32(w, in, 2, 1, b);
  const Operand& oa = in.ops[1];
  const Operand& ob = in.ops[2];
  uint64_t m = 0;
  const uint64_t ex = w.exec();
  for (int l = 0; l < kLanes; ++l)
    if ((ex >> l & 1) && f(a[l], b[l], oa, ob)) m |= 1ull << l;
  w.swrite64(in.ops[0], m);
}

template <class F>
void vopc64(Wave& w, const Instruction& in, F f) {
  uint64_t a[kLanes], b[kLanes];
  w.vread64(in.ops[1], a);
  w.vread64(in.ops[2], b);
  uint64_t m = 0;
  const uint64_t ex = w.exec();
  for (int l = 0; l < kLanes; ++l)
    if ((ex >> l & 1) && f(a[l], b[l])) m |= 1ull << l;
  w.swrite64(in.ops[0], m);
}

float fmod_src(float x, const Operand& o) {
  if (o.abs) x = std::fabs(x);
  if (o.neg) x = -x;
  return x;
}

// IEEE-754 maxNum/minNum as the VALU does them: a NaN operand yields the other operand.
float vmax(float a, float b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == 0.f && b == 0.f) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
float vmin(float a, float b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == 0.f && b == 0.f) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
float med3(float a, float b, float c) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c)) return vmin(vmin(a, b), c);
  const float mx = vmax(vmax(a, b), c);
  if (mx == a) return vmax(b, c);
  if (mx == b) return vmax(a, c);
  return vmax(a, b);
}

uint32_t cvt_u32_f32(float f) {
  if (std::isnan(f) || f <= 0.f) return 0;
  if (f >= 4294967296.f) return 0xFFFFFFFFu;
  return uint32_t(f);
}
int32_t cvt_i32_f32(float f) {
  if (std::isnan(f)) return 0;
  if (f <= -2147483648.f) return INT32_MIN;
  if (f >= 2147483648.f) return INT32_MAX;
  return int32_t(f);
}

int fexp(float f) { return int((as_u(f) >> 23) & 0xFF); }

}  // namespace

// ---------------------------------------------------------------- moves and bit operations
EMU_OP("v_mov_b32") { vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) { return a; }); }
EMU_OP("v_mov_b64") {  // gfx940+
  uint64_t a[kLanes];
  w.vread64(in.ops[1], a);
  w.vwrite64(in.ops[0], a, w.exec());
}
EMU_OP("v_pk_mov_b32") {  // gfx90a+: D.lo = op_sel[0] ? S0.hi : S0.lo; D.hi = op_sel[1] ? S1.hi : S1.lo
  uint64_t a[kLanes], b[kLanes], r[kLanes];
  w.vread64(in.ops[1], a);
  w.vread64(in.ops[2], b);
  for (int l = 0; l < kLanes; ++l) {
    const uint32_t lo = uint32_t((in.mods.op_sel & 1) ? a[l] >> 32 : a[l]);
    const uint32_t hi = uint32_t((in.mods.op_sel & 2) ? b[l] >> 32 : b[l]);
    r[l] = uint64_t(lo) | (uint64_t(hi) << 32);
  }
  w.vwrite64(in.ops[0], r, w.exec());
}
EMU_OP("v_and_b32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return a & b; }); }
EMU_OP("v_or_b32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return a | b; }); }
EMU_OP("v_xor_b32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return a ^ b; }); }
EMU_OP("v_not_b32") { vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) { return ~a; }); }
EMU_OP("v_and_or_b32") { vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return (a & b) | c; }); }
EMU_OP("v_or3_b32") { vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return a | b | c; }); }
EMU_OP("v_xad_u32") { vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return (a ^ b) + c; }); }
EMU_OP("v_lshlrev_b32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return b << (a & 31); }); }
EMU_OP("v_lshrrev_b32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return b >> (a & 31); }); }
EMU_OP("v_ashrrev_i32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return uint32_t(int32_t(b) >> (a & 31)); }); }
EMU_OP("v_lshl_add_u32") { vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return (a << (b & 31)) + c; }); }
EMU_OP("v_add_lshl_u32") { vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return (a + b) << (c & 31); }); }
EMU_OP("v_lshl_or_b32") { vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return (a << (b & 31)) | c; }); }
EMU_OP("v_bfe_u32") {
  vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) {
    const uint32_t off = b & 31, width = c & 31;
    return width == 0 ? 0u : (a >> off) & ((1u << width) - 1);
  });
}
EMU_OP("v_bfe_i32") {
  vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) {
    const uint32_t off = b & 31, width = c & 31;
    if (width == 0) return 0u;
    const uint32_t f = (a >> off) & ((1u << width) - 1);
    return uint32_t(int32_t(f << (32 - width)) >> (32 - width));
  });
}
EMU_OP("v_bfi_b32") { vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return (a & b) | (~a & c); }); }
EMU_OP("v_bfm_b32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return ((1u << (a & 31)) - 1) << (b & 31); }); }
EMU_OP("v_alignbit_b32") {
  vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t(((uint64_t(a) << 32) | b) >> (c & 31)); });
}
EMU_OP("v_alignbyte_b32") {
  vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t(((uint64_t(a) << 32) | b) >> (8 * (c & 3))); });
}
EMU_OP("v_bcnt_u32_b32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return uint32_t(std::popcount(a)) + b; }); }
EMU_OP("v_ffbh_u32") { vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) { return a ? uint32_t(std::countl_zero(a)) : ~0u; }); }
EMU_OP("v_ffbl_b32") { vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) { return a ? uint32_t(std::countr_zero(a)) : ~0u; }); }
// v_perm_b32 (12.11): byte selector per result byte over the 8 bytes {S0, S1} (S1 is bytes 0-3).
EMU_OP("v_perm_b32") {
  vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) {
    const uint64_t bytes = (uint64_t(a) << 32) | b;
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) {
      const uint32_t sel = (c >> (8 * i)) & 0xFF;
      uint32_t v;
      if (sel <= 7) v = uint32_t(bytes >> (8 * sel)) & 0xFF;
      else if (sel == 8) v = (b & 0x8000) ? 0xFF : 0;
      else if (sel == 9) v = (b & 0x80000000u) ? 0xFF : 0;
      else if (sel == 10) v = (a & 0x8000) ? 0xFF : 0;
      else if (sel == 11) v = (a & 0x80000000u) ? 0xFF : 0;
      else if (sel == 12) v = 0;
      else v = 0xFF;
      r |= v << (8 * i);
    }
    return r;
  });
}
// v_bitop3_b32 (CDNA4): each result bit is bitop3[{S0 bit, S1 bit, S2 bit}] (S0 the high index bit).
EMU_OP("v_bitop3_b32") {
  const int t = in.mods.bitop3;
  vop_u32(w, in, 3, [t](uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r = 0;
    for (int i = 0; i < 32; ++i) {
      const int idx = ((a >> i & 1) << 2) | ((b >> i & 1) << 1) | (c >> i & 1);
      r |= uint32_t((t >> idx) & 1) << i;
    }
    return r;
  });
}
EMU_OP("v_lshlrev_b64") {
  Lanes s;
  uint64_t b[kLanes], r[kLanes];
  read_src32(w, in, 1, 0, s);
  w.vread64(in.ops[2], b);
  for (int l = 0; l < kLanes; ++l) r[l] = b[l] << (s[l] & 63);
  w.vwrite64(in.ops[0], r, w.exec());
}
EMU_OP("v_lshrrev_b64") {
  Lanes s;
  uint64_t b[kLanes], r[kLanes];
  read_src32(w, in, 1, 0, s);
  w.vread64(in.ops[2], b);
  for (int l = 0; l < kLanes; ++l) r[l] = b[l] >> (s[l] & 63);
  w.vwrite64(in.ops[0], r, w.exec());
}
EMU_OP("v_ashrrev_i64") {
  Lanes s;
  uint64_t b[kLanes], r[kLanes];
  read_src32(w, in, 1, 0, s);
  w.vread64(in.ops[2], b);
  for (int l = 0; l < kLanes; ++l) r[l] = uint64_t(int64_t(b[l]) >> (s[l] & 63));
  w.vwrite64(in.ops[0], r, w.exec());
}
// v_lshl_add_u64 (gfx940+): D = (S0 << S1) + S2, 64-bit
EMU_OP("v_lshl_add_u64") {
  uint64_t a[kLanes], c[kLanes], r[kLanes];
  Lanes s;
  w.vread64(in.ops[1], a);
  read_src32(w, in, 2, 1, s);
  w.vread64(in.ops[3], c);
  for (int l = 0; l < kLanes; ++l) r[l] = (a[l] << (s[l] & 7)) + c[l];
  w.vwrite64(in.ops[0], r, w.exec());
}

// ---------------------------------------------------------------- integer arithmetic
EMU_OP("v_add_u32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return a + b; }); }
EMU_OP("v_sub_u32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return a - b; }); }
EMU_OP("v_subrev_u32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return b - a; }); }
EMU_OP("v_add3_u32") { vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return a + b + c; }); }
EMU_OP("v_add_i32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return a + b; }); }
EMU_OP("v_sub_i32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return a - b; }); }
EMU_OP("v_mul_lo_u32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return a * b; }); }
EMU_OP("v_mul_hi_u32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return uint32_t((uint64_t(a) * b) >> 32); }); }
EMU_OP("v_mul_hi_i32") {
  vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return uint32_t(uint64_t(int64_t(int32_t(a)) * int32_t(b)) >> 32); });
}
EMU_OP("v_mul_u32_u24") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return (a & 0xFFFFFF) * (b & 0xFFFFFF); }); }
EMU_OP("v_mad_u32_u24") {
  vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return (a & 0xFFFFFF) * (b & 0xFFFFFF) + c; });
}
EMU_OP("v_min_i32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return int32_t(a) < int32_t(b) ? a : b; }); }
EMU_OP("v_max_i32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return int32_t(a) > int32_t(b) ? a : b; }); }
EMU_OP("v_min_u32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return a < b ? a : b; }); }
EMU_OP("v_max_u32") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return a > b ? a : b; }); }
EMU_OP("v_min3_i32") {
  vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t(std::min({int32_t(a), int32_t(b), int32_t(c)})); });
}
EMU_OP("v_max3_i32") {
  vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t(std::max({int32_t(a), int32_t(b), int32_t(c)})); });
}
EMU_OP("v_min3_u32") { vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return std::min({a, b, c}); }); }
EMU_OP("v_max3_u32") { vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return std::max({a, b, c}); }); }
EMU_OP("v_med3_i32") {
  vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) {
    int32_t v[3] = {int32_t(a), int32_t(b), int32_t(c)};
    std::sort(v, v + 3);
    return uint32_t(v[1]);
  });
}

// Carry-out forms (7.2): ops = dst, carry-out mask, src0, src1 [, carry-in mask]
namespace {
template <class F>
void vop_carry(Wave& w, const Instruction& in, bool carry_in, F f) {
  Lanes a, b, r;
  read_src32(w, in, 2, 0, a);
  read_src32(w, in, 3, 1, b);
  const uint64_t cin = carry_in ? w.sread64(in.ops.at(4)) : 0;
  const uint64_t ex = w.exec();
  uint64_t cout = 0;
  for (int l = 0; l < kLanes; ++l) {
    bool c = false;
    r[l] = f(a[l], b[l], bool(cin >> l & 1), c);
    if ((ex >> l & 1) && c) cout |= 1ull << l;
  }
  write_dst32(w, in, 0, r, false);
  w.swrite64(in.ops[1], cout);
}
}  // namespace
EMU_OP("v_add_co_u32") {
  vop_carry(w, in, false, [](uint32_t a, uint32_t b, bool, bool& c) { const uint64_t s = uint64_t(a) + b; c = s >> 32; return uint32_t(s); });
}
EMU_OP("v_addc_co_u32") {
  vop_carry(w, in, true, [](uint32_t a, uint32_t b, bool ci, bool& c) { const uint64_t s = uint64_t(a) + b + ci; c = s >> 32; return uint32_t(s); });
}
EMU_OP("v_sub_co_u32") {
  vop_carry(w, in, false, [](uint32_t a, uint32_t b, bool, bool& c) { c = b > a; return a - b; });
}
EMU_OP("v_subrev_co_u32") {
  vop_carry(w, in, false, [](uint32_t a, uint32_t b, bool, bool& c) { c = a > b; return b - a; });
}
EMU_OP("v_subb_co_u32") {
  vop_carry(w, in, true, [](uint32_t a, uint32_t b, bool ci, bool& c) { c = uint64_t(b) + ci > a; return a - b - ci; });
}
EMU_OP("v_subbrev_co_u32") {
  vop_carry(w, in, true, [](uint32_t a, uint32_t b, bool ci, bool& c) { c = uint64_t(a) + ci > b; return b - a - ci; });
}
// v_mad_u64_u32 / v_mad_i64_i32 (VOP3B): {D64, carry-out} = S0 * S1 + S2 (64-bit)
namespace {
template <bool kSigned>
void mad64(Wave& w, const Instruction& in) {
  Lanes a, b;
  uint64_t c[kLanes], r[kLanes];
  read_src32(w, in, 2, 0, a);
  read_src32(w, in, 3, 1, b);
  w.vread64(in.ops[4], c);
  uint64_t cout = 0;
  const uint64_t ex = w.exec();
  for (int l = 0; l < kLanes; ++l) {
    bool carry;
    if constexpr (kSigned) {
      const __int128 s = (__int128)(int64_t(int32_t(a[l])) * int64_t(int32_t(b[l]))) + (__int128)int64_t(c[l]);
      r[l] = uint64_t(s);
      carry = s > INT64_MAX || s < INT64_MIN;
    } else {
      const unsigned __int128 s = (unsigned __int128)(uint64_t(a[l]) * b[l]) + c[l];
      r[l] = uint64_t(s);
      carry = (s >> 64) != 0;
    }
    if ((ex >> l & 1) && carry) cout |= 1ull << l;
  }
  w.vwrite64(in.ops[0], r, ex);
  w.swrite64(in.ops[1], cout);
}
}  // namespace
EMU_OP("v_mad_u64_u32") { mad64<false>(w, in); }
EMU_OP("v_mad_i64_i32") { mad64<true>(w, in); }

// v_cndmask_b32 (12.7): D = mask[lane] ? S1 : S0 (float abs/neg modifiers allowed in VOP3)
EMU_OP("v_cndmask_b32") {
  Lanes a, b, r;
  read_src32(w, in, 1, 0, a);
  read_src32(w, in, 2, 1, b);
  const uint64_t m = w.sread64(in.ops.at(3));
  auto mods = [](uint32_t x, const Operand& o) {
    if (o.abs) x &= 0x7FFFFFFFu;
    if (o.neg) x ^= 0x80000000u;
    return x;
  };
  for (int l = 0; l < kLanes; ++l) r[l] = (m >> l & 1) ? mods(b[l], in.ops[2]) : mods(a[l], in.ops[1]);
  write_dst32(w, in, 0, r, false);
}

// ---------------------------------------------------------------- compares (12.9)
namespace {
bool fcmp_u(float a, float b) { return std::isnan(a) || std::isnan(b); }
}  // namespace
#define EMU_VCMP_F(NAME, EXPR)                                                                \
  EMU_OP(NAME) {                                                                              \
    vopc(w, in, [](uint32_t x, uint32_t y, const Operand& ox, const Operand& oy) {           \
      [[maybe_unused]] const float a = fmod_src(as_f(x), ox), b = fmod_src(as_f(y), oy);      \
      return bool(EXPR);                                                                      \
    });                                                                                       \
  }
EMU_VCMP_F("v_cmp_f_f32", false)
EMU_VCMP_F("v_cmp_lt_f32", a < b)
EMU_VCMP_F("v_cmp_eq_f32", a == b)
EMU_VCMP_F("v_cmp_le_f32", a <= b)
EMU_VCMP_F("v_cmp_gt_f32", a > b)
EMU_VCMP_F("v_cmp_lg_f32", a < b || a > b)
EMU_VCMP_F("v_cmp_ge_f32", a >= b)
EMU_VCMP_F("v_cmp_o_f32", !fcmp_u(a, b))
EMU_VCMP_F("v_cmp_u_f32", fcmp_u(a, b))
EMU_VCMP_F("v_cmp_nge_f32", !(a >= b))
EMU_VCMP_F("v_cmp_nlg_f32", !(a < b || a > b))
EMU_VCMP_F("v_cmp_ngt_f32", !(a > b))
EMU_VCMP_F("v_cmp_nle_f32", !(a <= b))
EMU_VCMP_F("v_cmp_neq_f32", !(a == b))
EMU_VCMP_F("v_cmp_nlt_f32", !(a < b))
EMU_VCMP_F("v_cmp_tru_f32", true)
#undef EMU_VCMP_F
#define EMU_VCMP_I(NAME, T, OP) \
  EMU_OP(NAME) { vopc(w, in, [](uint32_t x, uint32_t y, const Operand&, const Operand&) { return T(x) OP T(y); }); }
EMU_VCMP_I("v_cmp_lt_i32", int32_t, <) EMU_VCMP_I("v_cmp_eq_i32", int32_t, ==) EMU_VCMP_I("v_cmp_le_i32", int32_t, <=)
EMU_VCMP_I("v_cmp_gt_i32", int32_t, >) EMU_VCMP_I("v_cmp_ne_i32", int32_t, !=) EMU_VCMP_I("v_cmp_ge_i32", int32_t, >=)
EMU_VCMP_I("v_cmp_lt_u32", uint32_t, <) EMU_VCMP_I("v_cmp_eq_u32", uint32_t, ==) EMU_VCMP_I("v_cmp_le_u32", uint32_t, <=)
EMU_VCMP_I("v_cmp_gt_u32", uint32_t, >) EMU_VCMP_I("v_cmp_ne_u32", uint32_t, !=) EMU_VCMP_I("v_cmp_ge_u32", uint32_t, >=)
#undef EMU_VCMP_I
// 16-bit integer compares: the low halves of the sources
#define EMU_VCMP_I16(NAME, T, OP) \
  EMU_OP(NAME) { vopc(w, in, [](uint32_t x, uint32_t y, const Operand&, const Operand&) { return T(x) OP T(y); }); }
EMU_VCMP_I16("v_cmp_lt_i16", int16_t, <) EMU_VCMP_I16("v_cmp_eq_i16", int16_t, ==) EMU_VCMP_I16("v_cmp_le_i16", int16_t, <=)
EMU_VCMP_I16("v_cmp_gt_i16", int16_t, >) EMU_VCMP_I16("v_cmp_ne_i16", int16_t, !=) EMU_VCMP_I16("v_cmp_ge_i16", int16_t, >=)
EMU_VCMP_I16("v_cmp_lt_u16", uint16_t, <) EMU_VCMP_I16("v_cmp_eq_u16", uint16_t, ==) EMU_VCMP_I16("v_cmp_le_u16", uint16_t, <=)
EMU_VCMP_I16("v_cmp_gt_u16", uint16_t, >) EMU_VCMP_I16("v_cmp_ne_u16", uint16_t, !=) EMU_VCMP_I16("v_cmp_ge_u16", uint16_t, >=)
#undef EMU_VCMP_I16
#define EMU_VCMP_I64(NAME, T, OP) \
  EMU_OP(NAME) { vopc64(w, in, [](uint64_t x, uint64_t y) { return T(x) OP T(y); }); }
EMU_VCMP_I64("v_cmp_lt_i64", int64_t, <) EMU_VCMP_I64("v_cmp_eq_i64", int64_t, ==) EMU_VCMP_I64("v_cmp_le_i64", int64_t, <=)
EMU_VCMP_I64("v_cmp_gt_i64", int64_t, >) EMU_VCMP_I64("v_cmp_ne_i64", int64_t, !=) EMU_VCMP_I64("v_cmp_ge_i64", int64_t, >=)
EMU_VCMP_I64("v_cmp_lt_u64", uint64_t, <) EMU_VCMP_I64("v_cmp_eq_u64", uint64_t, ==) EMU_VCMP_I64("v_cmp_le_u64", uint64_t, <=)
EMU_VCMP_I64("v_cmp_gt_u64", uint64_t, >) EMU_VCMP_I64("v_cmp_ne_u64", uint64_t, !=) EMU_VCMP_I64("v_cmp_ge_u64", uint64_t, >=)
#undef EMU_VCMP_I64
// v_cmp_class_f32: S1 is a mask of classes (0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0,
// 6 +0, 7 +denormal, 8 +normal, 9 +inf)
EMU_OP("v_cmp_class_f32") {
  vopc(w, in, [](uint32_t x, uint32_t m, const Operand& ox, const Operand&) {
    const float a = fmod_src(as_f(x), ox);
    int c;
    const bool neg = std::signbit(a);
    if (std::isnan(a)) c = (as_u(a) & 0x400000u) ? 1 : 0;
    else if (std::isinf(a)) c = neg ? 2 : 9;
    else if (a == 0.f) c = neg ? 5 : 6;
    else if (std::fpclassify(a) == FP_SUBNORMAL) c = neg ? 4 : 7;
    else c = neg ? 3 : 8;
    return bool(m >> c & 1);
  });
}

// ---------------------------------------------------------------- f32 arithmetic
EMU_OP("v_add_f32") { vop_f32(w, in, 2, [](float a, float b, float) { return a + b; }); }
EMU_OP("v_sub_f32") { vop_f32(w, in, 2, [](float a, float b, float) { return a - b; }); }
EMU_OP("v_subrev_f32") { vop_f32(w, in, 2, [](float a, float b, float) { return b - a; }); }
EMU_OP("v_mul_f32") { vop_f32(w, in, 2, [](float a, float b, float) { return a * b; }); }
EMU_OP("v_mul_legacy_f32") { vop_f32(w, in, 2, [](float a, float b, float) { return (a == 0.f || b == 0.f) ? 0.f : a * b; }); }
EMU_OP("v_max_f32") { vop_f32(w, in, 2, [](float a, float b, float) { return vmax(a, b); }); }
EMU_OP("v_min_f32") { vop_f32(w, in, 2, [](float a, float b, float) { return vmin(a, b); }); }
EMU_OP("v_max3_f32") { vop_f32(w, in, 3, [](float a, float b, float c) { return vmax(vmax(a, b), c); }); }
EMU_OP("v_min3_f32") { vop_f32(w, in, 3, [](float a, float b, float c) { return vmin(vmin(a, b), c); }); }
EMU_OP("v_med3_f32") { vop_f32(w, in, 3, [](float a, float b, float c) { return med3(a, b, c); }); }
EMU_OP("v_fma_f32", "v_mad_f32") { vop_f32(w, in, 3, [](float a, float b, float c) { return std::fma(a, b, c); }); }
// v_fmac_f32 / v_mac_f32: D = S0 * S1 + D
EMU_OP("v_fmac_f32", "v_mac_f32") {
  float a[kLanes], b[kLanes];
  Lanes d, r;
  read_srcf(w, in, 1, 0, a);
  read_srcf(w, in, 2, 1, b);
  w.vread32(in.ops[0], d);
  for (int l = 0; l < kLanes; ++l) r[l] = as_u(std::fma(a[l], b[l], as_f(d[l])));
  write_dst32(w, in, 0, r, true);
}
// v_fmamk_f32 D, S0, K, S1 = S0 * K + S1; v_fmaak_f32 D, S0, S1, K = S0 * S1 + K: both are an fma
// of the operands in printed order.
EMU_OP("v_fmamk_f32", "v_fmaak_f32", "v_madmk_f32", "v_madak_f32") {
  vop_f32(w, in, 3, [](float a, float b, float c) { return std::fma(a, b, c); });
}
EMU_OP("v_ldexp_f32") {
  Lanes e;
  read_src32(w, in, 2, 1, e);
  float a[kLanes];
  read_srcf(w, in, 1, 0, a);
  Lanes r;
  for (int l = 0; l < kLanes; ++l) r[l] = as_u(std::ldexp(a[l], int32_t(e[l])));
  write_dst32(w, in, 0, r, true);
}
EMU_OP("v_exp_f32") { vop_f32(w, in, 1, [](float a, float, float) { return std::exp2(a); }); }
EMU_OP("v_log_f32") { vop_f32(w, in, 1, [](float a, float, float) { return std::log2(a); }); }
EMU_OP("v_rcp_f32", "v_rcp_iflag_f32") { vop_f32(w, in, 1, [](float a, float, float) { return 1.f / a; }); }
EMU_OP("v_rsq_f32") { vop_f32(w, in, 1, [](float a, float, float) { return 1.f / std::sqrt(a); }); }
EMU_OP("v_sqrt_f32") { vop_f32(w, in, 1, [](float a, float, float) { return std::sqrt(a); }); }
EMU_OP("v_sin_f32") { vop_f32(w, in, 1, [](float a, float, float) { return float(std::sin(double(a) * 2 * M_PI)); }); }
EMU_OP("v_cos_f32") { vop_f32(w, in, 1, [](float a, float, float) { return float(std::cos(double(a) * 2 * M_PI)); }); }
EMU_OP("v_trunc_f32") { vop_f32(w, in, 1, [](float a, float, float) { return std::trunc(a); }); }
EMU_OP("v_floor_f32") { vop_f32(w, in, 1, [](float a, float, float) { return std::floor(a); }); }
EMU_OP("v_ceil_f32") { vop_f32(w, in, 1, [](float a, float, float) { return std::ceil(a); }); }
EMU_OP("v_rndne_f32") { vop_f32(w, in, 1, [](float a, float, float) { return std::nearbyint(a); }); }
EMU_OP("v_fract_f32") { vop_f32(w, in, 1, [](float a, float, float) { return std::isinf(a) ? std::nanf("") : std::fmin(a - std::floor(a), 0x1.fffffep-1f); }); }
EMU_OP("v_frexp_mant_f32") {
  vop_f32(w, in, 1, [](float a, float, float) { int e; return (std::isnan(a) || std::isinf(a)) ? a : std::frexp(a, &e); });
}
EMU_OP("v_frexp_exp_i32_f32") {
  vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) {
    int e = 0;
    const float f = as_f(a);
    if (std::isnan(f) || std::isinf(f)) return 0u;
    std::frexp(f, &e);
    return uint32_t(e);
  });
}
// Division helpers (12.11 V_DIV_SCALE_F32, V_DIV_FMAS_F32, V_DIV_FIXUP_F32).
// v_div_scale_f32 D, VCC, S0, S1 (denominator), S2 (numerator)
EMU_OP("v_div_scale_f32") {
  float s0[kLanes], s1[kLanes], s2[kLanes];
  read_srcf(w, in, 2, 0, s0);
  read_srcf(w, in, 3, 1, s1);
  read_srcf(w, in, 4, 2, s2);
  Lanes r;
  uint64_t vcc = 0;
  const uint64_t ex = w.exec();
  for (int l = 0; l < kLanes; ++l) {
    float d = s0[l];
    bool flag = false;
    const float num = s2[l], den = s1[l];
    auto denorm = [](double x) { return x != 0 && std::fabs(x) < 1.1754943508222875e-38; };
    if (num == 0.f || den == 0.f) d = std::nanf("");
    else if (fexp(num) - fexp(den) >= 96) { flag = true; if (s0[l] == den) d = std::ldexp(s0[l], 64); }
    else if (std::fpclassify(den) == FP_SUBNORMAL) d = std::ldexp(s0[l], 64);
    else if (denorm(1.0 / den) && denorm(double(num) / den)) { flag = true; if (s0[l] == den) d = std::ldexp(s0[l], 64); }
    else if (denorm(1.0 / den)) d = std::ldexp(s0[l], -64);
    else if (denorm(double(num) / den)) { flag = true; if (s0[l] == num) d = std::ldexp(s0[l], 64); }
    else if (fexp(num) <= 23) d = std::ldexp(s0[l], 64);
    r[l] = as_u(d);
    if (flag && (ex >> l & 1)) vcc |= 1ull << l;
  }
  write_dst32(w, in, 0, r, true);
  w.swrite64(in.ops[1], vcc);
}
// v_div_fmas_f32: D = fma(S0, S1, S2), times 2^32 in lanes whose VCC is set
EMU_OP("v_div_fmas_f32") {
  const uint64_t vcc = w.vcc();
  float a[kLanes], b[kLanes], c[kLanes];
  read_srcf(w, in, 1, 0, a);
  read_srcf(w, in, 2, 1, b);
  read_srcf(w, in, 3, 2, c);
  Lanes r;
  for (int l = 0; l < kLanes; ++l) {
    float d = std::fma(a[l], b[l], c[l]);
    if (vcc >> l & 1) d = std::ldexp(d, 32);
    r[l] = as_u(d);
  }
  write_dst32(w, in, 0, r, true);
}
// v_div_fixup_f32: S0 quotient, S1 denominator, S2 numerator: special cases, else the quotient
// with the sign of num / den.
EMU_OP("v_div_fixup_f32") {
  vop_f32(w, in, 3, [](float q, float den, float num) {
    const bool sign = std::signbit(den) != std::signbit(num);
    const float inf = std::numeric_limits<float>::infinity();
    if (std::isnan(num)) return num;
    if (std::isnan(den)) return den;
    if (den == 0.f && num == 0.f) return std::nanf("");
    if (std::isinf(den) && std::isinf(num)) return std::nanf("");
    if (den == 0.f || std::isinf(num)) return sign ? -inf : inf;
    if (std::isinf(den) || num == 0.f) return sign ? -0.f : 0.f;
    if (fexp(num) - fexp(den) < -150) return sign ? -0.f : 0.f;
    if (fexp(den) == 255) return sign ? -inf : inf;
    return sign ? -std::fabs(q) : std::fabs(q);
  });
}

// ---------------------------------------------------------------- conversions
EMU_OP("v_cvt_f32_u32") { vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) { return as_u(float(a)); }); }
EMU_OP("v_cvt_f32_i32") { vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) { return as_u(float(int32_t(a))); }); }
// V_CVT_F32_UBYTE{0..3} (12.8): byte n of the source, unsigned, to f32
EMU_OP("v_cvt_f32_ubyte0") { vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) { return as_u(float(a & 0xFFu)); }); }
EMU_OP("v_cvt_f32_ubyte1") { vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) { return as_u(float((a >> 8) & 0xFFu)); }); }
EMU_OP("v_cvt_f32_ubyte2") { vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) { return as_u(float((a >> 16) & 0xFFu)); }); }
EMU_OP("v_cvt_f32_ubyte3") { vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) { return as_u(float(a >> 24)); }); }
EMU_OP("v_cvt_u32_f32") {
  float a[kLanes];
  read_srcf(w, in, 1, 0, a);
  Lanes r;
  for (int l = 0; l < kLanes; ++l) r[l] = cvt_u32_f32(a[l]);
  write_dst32(w, in, 0, r, false);
}
EMU_OP("v_cvt_i32_f32") {
  float a[kLanes];
  read_srcf(w, in, 1, 0, a);
  Lanes r;
  for (int l = 0; l < kLanes; ++l) r[l] = uint32_t(cvt_i32_f32(a[l]));
  write_dst32(w, in, 0, r, false);
}
// v_cvt_f16_f32: D.f16 = S0 (round to nearest even); the high half is written with zeros
EMU_OP("v_cvt_f16_f32") {
  float a[kLanes];
  read_srcf(w, in, 1, 0, a);
  Lanes r;
  for (int l = 0; l < kLanes; ++l) r[l] = f32_to_f16(a[l]);
  write_dst32(w, in, 0, r, false);
}
EMU_OP("v_cvt_f32_f16") {
  Lanes a, r;
  read_src32(w, in, 1, 0, a);
  const Operand& o = in.ops[1];
  for (int l = 0; l < kLanes; ++l) {
    float f = f16_to_f32(uint16_t(a[l]));
    if (o.abs) f = std::fabs(f);
    if (o.neg) f = -f;
    r[l] = as_u(f);
  }
  write_dst32(w, in, 0, r, true);
}
// gfx950: v_cvt_pk_f16_f32 / v_cvt_pk_bf16_f32 D = {S1 -> hi, S0 -> lo}, round to nearest even
namespace {
template <class Cvt>
void cvt_pk(Wave& w, const Instruction& in, Cvt cvt) {
  float a[kLanes], b[kLanes];
  read_srcf(w, in, 1, 0, a);
  read_srcf(w, in, 2, 1, b);
  Lanes r;
  for (int l = 0; l < kLanes; ++l) r[l] = uint32_t(cvt(a[l])) | (uint32_t(cvt(b[l])) << 16);
  write_dst32(w, in, 0, r, false);
}
}  // namespace
EMU_OP("v_cvt_pk_f16_f32") { cvt_pk(w, in, f32_to_f16); }
EMU_OP("v_cvt_pk_bf16_f32") { cvt_pk(w, in, f32_to_bf16); }
// v_cvt_pk_fp8_f32 ([CDNA3] 12.11 VOP3A opcode table, V_CVT_PK_FP8_F32; [CDNA3] "FP8 and BF8"
// conversions; [CDNA4] the same opcode with the OCP format): D.u16[op_sel[3]] = {fp8(S1) -> byte 1,
// fp8(S0) -> byte 0}; the other 16-bit half of D is kept (VDST is read). gfx942 writes e4m3fnuz
// (bias 8, max 240, 0x80 the only NaN, no -0), gfx950 OCP e4m3fn (bias 7, max 448, S.1111.111 NaN).
// Rounding is to nearest even; subnormal results are kept. There is no infinity: a NaN or infinite
// input, or a finite one whose rounded magnitude exceeds the largest finite value, gives NaN (AMD's
// own simulator was corrected to this for E4M3: ROCm/rocm-systems PR #8800) unless the clamp bit is
// set, which saturates to +-max (infinities too; NaN stays NaN; LLVM does not assemble clamp for
// this opcode on gfx942 / gfx950). op_sel prints as [src0, src1, dst]: the dst bit is the
// destination-word select. Tested in tests/emu/test_emu_fp8_convert.cpp.
namespace {
uint32_t f32_to_fp8_e4m3(float f, Gfx g, bool clamp) {
  const bool fnuz = g == Gfx::gfx942;
  const int bias = fnuz ? 8 : 7;
  const double maxv = fnuz ? 240.0 : 448.0;
  const uint32_t sign = std::signbit(f) ? 0x80u : 0u;
  const uint32_t nan = fnuz ? 0x80u : (0x7Fu | sign);
  if (std::isnan(f)) return nan;
  double a = std::fabs(double(f));
  const uint32_t max_code = fnuz ? 0x7Fu : 0x7Eu;
  if (std::isinf(f)) return clamp ? (max_code | sign) : nan;
  // quantum: 2^(e - 3) for a normal in [2^e, 2^(e+1)), 2^(1 - bias - 3) for the subnormal range
  const int min_e = 1 - bias;
  int e = a > 0 ? std::ilogb(a) : min_e;
  if (e < min_e) e = min_e;
  const double q = std::ldexp(1.0, e - 3);
  double r = std::nearbyint(a / q) * q;  // round to nearest even (the host's default rounding mode)
  if (r > maxv) {
    if (!clamp) return nan;
    r = maxv;
  }
  if (r == 0) return fnuz ? 0u : sign;
  uint32_t code;
  if (r < std::ldexp(1.0, min_e)) {
    code = uint32_t(r / std::ldexp(1.0, min_e - 3));  // subnormal: 0.mmm x 2^min_e
  } else {
    const int re = std::ilogb(r);
    code = (uint32_t(re + bias) << 3) | (uint32_t(r / std::ldexp(1.0, re - 3)) - 8);
  }
  return code | sign;
}
}  // namespace
EMU_OP("v_cvt_pk_fp8_f32") {
  float a[kLanes], b[kLanes];
  read_srcf(w, in, 1, 0, a);
  read_srcf(w, in, 2, 1, b);
  Lanes old, r;
  w.vread32(in.ops[0], old);
  const bool hi = (in.mods.op_sel & 0xC) != 0;
  const Gfx g = w.launch->gfx;
  for (int l = 0; l < kLanes; ++l) {
    const uint32_t pk = f32_to_fp8_e4m3(a[l], g, in.mods.clamp) | (f32_to_fp8_e4m3(b[l], g, in.mods.clamp) << 8);
    r[l] = hi ? (old[l] & 0xFFFFu) | (pk << 16) : (old[l] & 0xFFFF0000u) | pk;
  }
  write_dst32(w, in, 0, r, false);
}
// v_cvt_pkrtz_f16_f32: the same with round toward zero
EMU_OP("v_cvt_pkrtz_f16_f32") {
  cvt_pk(w, in, [](float f) {
    const uint16_t h = f32_to_f16(f);
    return std::fabs(f16_to_f32(h)) > std::fabs(f) && !std::isinf(f) ? uint16_t(h - 1) : h;
  });
}
// v_pack_b32_f16: D = {S1.f16 (op_sel[1] picks its high half), S0.f16 (op_sel[0])}
EMU_OP("v_pack_b32_f16") {
  Lanes a, b, r;
  read_src32(w, in, 1, 0, a);
  read_src32(w, in, 2, 1, b);
  for (int l = 0; l < kLanes; ++l) {
    uint16_t lo = uint16_t((in.mods.op_sel & 1) ? a[l] >> 16 : a[l]);
    uint16_t hi = uint16_t((in.mods.op_sel & 2) ? b[l] >> 16 : b[l]);
    if (in.ops[1].neg) lo ^= 0x8000;
    if (in.ops[2].neg) hi ^= 0x8000;
    if (in.ops[1].abs) lo &= 0x7FFF;
    if (in.ops[2].abs) hi &= 0x7FFF;
    r[l] = uint32_t(lo) | (uint32_t(hi) << 16);
  }
  write_dst32(w, in, 0, r, false);
}

// ---------------------------------------------------------------- VOP3P packed f32 (gfx90a+)
// D.lo = f(S0[op_sel], S1[op_sel], ...), D.hi = f(S0[op_sel_hi], ...); neg_lo / neg_hi negate.
namespace {
template <class F>
void pk_f32(Wave& w, const Instruction& in, int nsrc, F f) {
  uint64_t s[3][kLanes] = {};
  for (int i = 0; i < nsrc; ++i) {
    const Operand& o = in.ops.at(1 + i);
    if (o.kind == Operand::imm) {
      // a constant is one 32-bit value (an inline float as f32) in both halves of the pair
      const uint32_t c = o.is_float ? as_u(float(o.fval)) : uint32_t(o.ival);
      for (int l = 0; l < kLanes; ++l) s[i][l] = uint64_t(c) | (uint64_t(c) << 32);
    } else {
      w.vread64(o, s[i]);
    }
  }
  const uint8_t hi_sel = in.mods.has_op_sel_hi ? in.mods.op_sel_hi : 0x7;
  uint64_t r[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    float lo_in[3] = {}, hi_in[3] = {};
    for (int i = 0; i < nsrc; ++i) {
      const uint64_t v = s[i][l];
      lo_in[i] = as_f(uint32_t((in.mods.op_sel >> i & 1) ? v >> 32 : v));
      hi_in[i] = as_f(uint32_t((hi_sel >> i & 1) ? v >> 32 : v));
      if (in.mods.neg_lo >> i & 1) lo_in[i] = -lo_in[i];
      if (in.mods.neg_hi >> i & 1) hi_in[i] = -hi_in[i];
    }
    const float lo = apply_omod_clamp(in, f(lo_in[0], lo_in[1], lo_in[2]));
    const float hi = apply_omod_clamp(in, f(hi_in[0], hi_in[1], hi_in[2]));
    r[l] = uint64_t(as_u(lo)) | (uint64_t(as_u(hi)) << 32);
  }
  w.vwrite64(in.ops[0], r, w.exec());
}
}  // namespace
EMU_OP("v_pk_fma_f32") { pk_f32(w, in, 3, [](float a, float b, float c) { return std::fma(a, b, c); }); }
EMU_OP("v_pk_mul_f32") { pk_f32(w, in, 2, [](float a, float b, float) { return a * b; }); }
EMU_OP("v_pk_add_f32") { pk_f32(w, in, 2, [](float a, float b, float) { return a + b; }); }

}  // namespace hipattn::emu

namespace hipattn::emu {
// ---------------------------------------------------------------- 16-bit integer (VOP2, 12.7): the
// result is the low 16 bits, the high half is written with zeros (gfx9 16-bit VOP1/VOP2 behaviour).
EMU_OP("v_add_u16") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return (a + b) & 0xFFFFu; }); }
EMU_OP("v_sub_u16") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return (a - b) & 0xFFFFu; }); }
EMU_OP("v_subrev_u16") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return (b - a) & 0xFFFFu; }); }
EMU_OP("v_mul_lo_u16") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return (a * b) & 0xFFFFu; }); }
EMU_OP("v_lshlrev_b16") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return (b << (a & 15)) & 0xFFFFu; }); }
EMU_OP("v_lshrrev_b16") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return (b & 0xFFFFu) >> (a & 15); }); }
EMU_OP("v_ashrrev_i16") {
  vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return uint32_t(int16_t(b) >> (a & 15)) & 0xFFFFu; });
}
}  // namespace hipattn::emu

namespace hipattn::emu {
// ---------------------------------------------------------------- 24-bit multiplies, bit reverse (12.7, 12.8)
namespace {
int64_t sext24(uint32_t x) { return int64_t(int32_t(x << 8) >> 8); }
}  // namespace
EMU_OP("v_mul_i32_i24") { vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return uint32_t(sext24(a) * sext24(b)); }); }
EMU_OP("v_mul_hi_i32_i24") {
  vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return uint32_t(uint64_t(sext24(a) * sext24(b)) >> 32); });
}
EMU_OP("v_mul_hi_u32_u24") {
  vop_u32(w, in, 2, [](uint32_t a, uint32_t b, uint32_t) { return uint32_t((uint64_t(a & 0xFFFFFF) * (b & 0xFFFFFF)) >> 32); });
}
EMU_OP("v_mad_i32_i24") {
  vop_u32(w, in, 3, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t(sext24(a) * sext24(b) + int32_t(c)); });
}
EMU_OP("v_bfrev_b32") {
  vop_u32(w, in, 1, [](uint32_t a, uint32_t, uint32_t) {
    uint32_t r = 0;
    for (int i = 0; i < 32; ++i) r |= ((a >> i) & 1u) << (31 - i);
    return r;
  });
}

// v_fma_mix{,lo,hi}_f16 (VOP3P, 12.10): each source is f32, or f16 when op_sel_hi[i] is set (then
// op_sel[i] picks its high half); neg_lo[i] negates and neg_hi[i] takes the absolute value. The fma
// is done in f32; mixlo / mixhi round to f16 into the low / high half and keep the other half.
namespace {
void fma_mix(Wave& w, const Instruction& in, int mode /*0 f32, 1 lo, 2 hi*/) {
  float src[3][kLanes];
  for (int i = 0; i < 3; ++i) {
    const Operand& o = in.ops.at(1 + i);
    uint32_t u[kLanes];
    w.vread32(o, u);
    const bool f16 = (in.mods.has_op_sel_hi ? in.mods.op_sel_hi : 0) >> i & 1;
    for (int l = 0; l < kLanes; ++l) {
      float f;
      if (f16) {
        if (o.kind == Operand::imm && o.is_float) f = float(o.fval);
        else f = f16_to_f32(uint16_t((in.mods.op_sel >> i & 1) ? u[l] >> 16 : u[l]));
      } else {
        f = as_f(u[l]);
      }
      if (in.mods.neg_hi >> i & 1) f = std::fabs(f);
      if (in.mods.neg_lo >> i & 1) f = -f;
      if (o.abs) f = std::fabs(f);
      if (o.neg) f = -f;
      src[i][l] = f;
    }
  }
  uint32_t old[kLanes], r[kLanes];
  if (mode) w.vread32(in.ops[0], old);
  for (int l = 0; l < kLanes; ++l) {
    const float f = apply_omod_clamp(in, std::fma(src[0][l], src[1][l], src[2][l]));
    if (mode == 0) r[l] = as_u(f);
    else if (mode == 1) r[l] = (old[l] & 0xFFFF0000u) | f32_to_f16(f);
    else r[l] = (old[l] & 0xFFFFu) | (uint32_t(f32_to_f16(f)) << 16);
  }
  w.vwrite32(in.ops[0], r, w.exec());
}
}  // namespace
EMU_OP("v_fma_mix_f32", "v_mad_mix_f32") { fma_mix(w, in, 0); }
EMU_OP("v_fma_mixlo_f16", "v_mad_mixlo_f16") { fma_mix(w, in, 1); }
EMU_OP("v_fma_mixhi_f16", "v_mad_mixhi_f16") { fma_mix(w, in, 2); }
}  // namespace hipattn::emu
