// emu/loader.cpp: reading an AMDGPU code object. The ELF (sections, symbols, the kernel
// descriptors) is read here; the metadata note comes from `llvm-readelf --notes` (YAML) and the
// instructions from `llvm-objdump -d` (LLVM's decoder), whose text this file parses into operands
// and modifiers. The build writes both outputs next to each code object (cmake/HipattnAmdgpu.cmake);
// those files are read instead of running the tools again in every test process.
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core.hpp"

namespace hipattn::emu {

const char* kind_name(Error::Kind k) {
  switch (k) {
    case Error::Kind::code_object: return "code object";
    case Error::Kind::unimplemented: return "unimplemented instruction";
    case Error::Kind::memory_fault: return "memory fault";
    case Error::Kind::hazard: return "wait-count hazard";
    case Error::Kind::lds_race: return "LDS race";
    case Error::Kind::launch: return "launch";
    case Error::Kind::limit: return "instruction limit";
  }
  return "?";
}
const char* gfx_name(Gfx g) { return g == Gfx::gfx942 ? "gfx942" : "gfx950"; }

std::unordered_map<std::string, Handler>& registry() {
  static std::unordered_map<std::string, Handler> r;
  return r;
}

namespace {

[[noreturn]] void co_fail(const std::string& path, const std::string& msg) {
  throw Error(Error::Kind::code_object, path + ": " + msg);
}

std::string env_or(const char* var, const char* fallback) {
  const char* v = std::getenv(var);
  return (v && *v) ? std::string(v) : std::string(fallback);
}

std::string run_tool(const std::string& cmd, const std::string& path) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) co_fail(path, "cannot run: " + cmd);
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  if (rc != 0) co_fail(path, "command failed (" + std::to_string(rc) + "): " + cmd);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) co_fail(path, "cannot open");
  std::string s(size_t(f.tellg()), '\0');
  f.seekg(0);
  if (!f.read(s.data(), std::streamsize(s.size()))) co_fail(path, "cannot read");
  return s;
}

// The file the build writes next to code object `path` (its ".co" replaced by `ext`); empty when there
// is none or it is older than the code object (then the caller runs the tool that writes it).
std::string fresh_sibling(const std::string& path, const char* ext) {
  if (path.size() < 3 || path.compare(path.size() - 3, 3, ".co") != 0) return {};
  const std::string sib = path.substr(0, path.size() - 3) + ext;
  struct stat c, s;
  if (stat(path.c_str(), &c) != 0 || stat(sib.c_str(), &s) != 0) return {};
  const bool older = std::pair(s.st_mtim.tv_sec, s.st_mtim.tv_nsec) < std::pair(c.st_mtim.tv_sec, c.st_mtim.tv_nsec);
  return older ? std::string() : sib;
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) {
    if (c == '\'') r += "'\\''";
    else r += c;
  }
  return r + "'";
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

int64_t parse_int(const std::string& t, bool* ok) {
  *ok = false;
  if (t.empty()) return 0;
  size_t i = 0;
  bool negative = false;
  if (t[0] == '-') { negative = true; i = 1; }
  if (i >= t.size()) return 0;
  uint64_t v = 0;
  if (t.compare(i, 2, "0x") == 0) {
    if (i + 2 >= t.size()) return 0;
    for (size_t j = i + 2; j < t.size(); ++j) {
      const char c = t[j];
      int d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      else return 0;
      v = v * 16 + d;
    }
  } else {
    for (size_t j = i; j < t.size(); ++j) {
      if (t[j] < '0' || t[j] > '9') return 0;
      v = v * 10 + (t[j] - '0');
    }
  }
  *ok = true;
  return negative ? -int64_t(v) : int64_t(v);
}

// "v[2:5]" / "v7" / "s[0:1]" / "a3" / "ttmp..." -> register operand.
bool parse_reg(const std::string& t, Operand& o) {
  if (t.size() < 2) return false;
  const char c = t[0];
  Operand::Kind k;
  if (c == 's') k = Operand::sgpr;
  else if (c == 'v') k = Operand::vgpr;
  else if (c == 'a') k = Operand::agpr;
  else return false;
  bool ok;
  if (t[1] == '[') {
    const size_t colon = t.find(':'), close = t.find(']');
    if (colon == std::string::npos || close == std::string::npos) return false;
    const int64_t lo = parse_int(t.substr(2, colon - 2), &ok);
    if (!ok) return false;
    const int64_t hi = parse_int(t.substr(colon + 1, close - colon - 1), &ok);
    if (!ok || hi < lo) return false;
    o.kind = k; o.reg = uint16_t(lo); o.count = uint8_t(hi - lo + 1);
    return true;
  }
  const int64_t r = parse_int(t.substr(1), &ok);
  if (!ok) return false;
  o.kind = k; o.reg = uint16_t(r); o.count = 1;
  return true;
}

// Special operand names (CDNA3 ISA table of scalar operand codes).
bool parse_special(const std::string& t, Operand& o) {
  struct S { const char* n; uint16_t reg; uint8_t count; };
  static const S table[] = {{"vcc", kVccLo, 2}, {"vcc_lo", kVccLo, 1}, {"vcc_hi", kVccHi, 1},
                            {"exec", kExecLo, 2}, {"exec_lo", kExecLo, 1}, {"exec_hi", kExecHi, 1},
                            {"m0", kM0, 1}, {"flat_scratch", kFlatScratchLo, 2},
                            {"flat_scratch_lo", kFlatScratchLo, 1}, {"flat_scratch_hi", kFlatScratchLo + 1, 1},
                            {"xnack_mask", kXnackLo, 2}, {"xnack_mask_lo", kXnackLo, 1},
                            {"xnack_mask_hi", kXnackLo + 1, 1}};
  for (const S& s : table)
    if (t == s.n) { o.kind = Operand::sgpr; o.reg = s.reg; o.count = s.count; return true; }
  if (t == "null") { o.kind = Operand::sgpr; o.reg = kNull; o.count = 1; return true; }
  if (t == "off") { o.kind = Operand::off; return true; }
  struct C { const char* n; uint16_t code; };
  static const C consts[] = {{"src_shared_base", 235}, {"src_shared_limit", 236}, {"src_private_base", 237},
                             {"src_private_limit", 238}, {"src_pops_exiting_wave_id", 239},
                             {"src_vccz", 251}, {"src_execz", 252}, {"src_scc", 253}};
  for (const C& c : consts)
    if (t == c.n) { o.kind = Operand::special; o.special_code = c.code; return true; }
  return false;
}

Operand parse_operand(std::string t, const std::string& line) {
  Operand o;
  o.text = t;
  // source modifiers: -x, |x|, -|x|, neg(x), abs(x), sext(x)
  for (;;) {
    if (t.size() > 1 && t[0] == '-' && !(t[1] >= '0' && t[1] <= '9')) { o.neg = !o.neg; t = t.substr(1); continue; }
    if (t.size() > 2 && t.front() == '|' && t.back() == '|') { o.abs = true; t = t.substr(1, t.size() - 2); continue; }
    if (t.rfind("neg(", 0) == 0 && t.back() == ')') { o.neg = !o.neg; t = t.substr(4, t.size() - 5); continue; }
    if (t.rfind("abs(", 0) == 0 && t.back() == ')') { o.abs = true; t = t.substr(4, t.size() - 5); continue; }
    if (t.rfind("sext(", 0) == 0 && t.back() == ')') { o.sext = true; t = t.substr(5, t.size() - 6); continue; }
    break;
  }
  if (parse_special(t, o) || parse_reg(t, o)) return o;
  // s_set_gpr_idx_on / s_set_gpr_idx_mode: "gpr_idx(SRC0,DST)" -> the 4-bit mask SRC0 1, SRC1 2,
  // SRC2 4, DST 8 (the instruction's SIMM4 field; CDNA3 ISA 12.3 S_SET_GPR_IDX_ON).
  if (t.rfind("gpr_idx(", 0) == 0 && t.back() == ')') {
    o.kind = Operand::imm;
    std::stringstream ms(t.substr(8, t.size() - 9));
    std::string f;
    while (std::getline(ms, f, ',')) {
      f = trim(f);
      if (f == "SRC0") o.ival |= 1;
      else if (f == "SRC1") o.ival |= 2;
      else if (f == "SRC2") o.ival |= 4;
      else if (f == "DST") o.ival |= 8;
      else if (!f.empty()) throw Error(Error::Kind::code_object, "cannot parse operand '" + t + "' in: " + line);
    }
    return o;
  }
  bool ok;
  const int64_t iv = parse_int(t, &ok);
  if (ok) {
    o.kind = Operand::imm;
    o.ival = iv;
    o.is_literal = !(iv >= -16 && iv <= 64);
    return o;
  }
  // float inline constants (0.5, 1.0, 2.0, 4.0, their negatives, 0.15915494 = 1/(2 pi))
  char* end = nullptr;
  const double f = std::strtod(t.c_str(), &end);
  if (end && *end == '\0' && !t.empty()) {
    o.kind = Operand::imm;
    o.is_float = true;
    o.fval = (t == "0.15915494" || t == "-0.15915494") ? (t[0] == '-' ? -0.15915494309189535 : 0.15915494309189535) : f;
    return o;
  }
  throw Error(Error::Kind::code_object, "cannot parse operand '" + t + "' in: " + line);
}

// "swizzle(SWAP,16)" and the other ds_swizzle macro forms (LLVM's printer) -> encoded offset.
int parse_swizzle(const std::string& v) {
  bool ok;
  const int64_t direct = parse_int(v, &ok);
  if (ok) return int(direct);
  if (v.rfind("swizzle(", 0) != 0) return -1;
  std::string body = v.substr(8, v.size() - 9);
  std::vector<std::string> f;
  std::stringstream ss(body);
  std::string item;
  while (std::getline(ss, item, ',')) f.push_back(trim(item));
  if (f.empty()) return -1;
  // Bit-masked mode (offset[15] = 0): and_mask [4:0], or_mask [9:5], xor_mask [14:10].
  auto bitmask = [](int and_m, int or_m, int xor_m) { return (and_m & 31) | ((or_m & 31) << 5) | ((xor_m & 31) << 10); };
  if (f[0] == "SWAP" && f.size() == 2) return bitmask(31, 0, int(parse_int(f[1], &ok)));
  if (f[0] == "REVERSE" && f.size() == 2) return bitmask(31, 0, int(parse_int(f[1], &ok)) - 1);
  if (f[0] == "BROADCAST" && f.size() == 3) {
    const int size = int(parse_int(f[1], &ok)), lane = int(parse_int(f[2], &ok));
    return bitmask(32 - size, lane, 0);
  }
  if (f[0] == "BITMASK_PERM" && f.size() == 2) {
    std::string m = f[1];
    if (m.size() == 7 && m.front() == '"') m = m.substr(1, 5);
    int and_m = 0, or_m = 0, xor_m = 0;
    for (int i = 0; i < 5; ++i) {
      const int bit = 1 << (4 - i);
      switch (m[i]) {
        case '0': break;
        case '1': or_m |= bit; break;
        case 'p': and_m |= bit; break;
        case 'i': and_m |= bit; xor_m |= bit; break;
      }
    }
    return bitmask(and_m, or_m, xor_m);
  }
  if (f[0] == "QUAD_PERM" && f.size() == 5) {
    int sel = 0;
    for (int i = 0; i < 4; ++i) sel |= int(parse_int(f[1 + i], &ok)) << (2 * i);
    return 0x8000 | sel;
  }
  return -1;
}

std::vector<int> parse_list(const std::string& v) {  // "[1,0,1]"
  std::vector<int> r;
  bool ok;
  std::string body = v;
  if (!body.empty() && body.front() == '[') body = body.substr(1);
  if (!body.empty() && body.back() == ']') body.pop_back();
  std::stringstream ss(body);
  std::string item;
  while (std::getline(ss, item, ',')) r.push_back(int(parse_int(trim(item), &ok)));
  return r;
}

int list_mask(const std::string& v) {
  int m = 0;
  const auto l = parse_list(v);
  for (size_t i = 0; i < l.size(); ++i) m |= (l[i] & 1) << i;
  return m;
}

int sdwa_sel(const std::string& v) {
  static const char* names[] = {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"};
  for (int i = 0; i < 7; ++i)
    if (v == names[i]) return i;
  return -1;
}

// DPP controls as printed by LLVM -> DPP_CTRL encoding (CDNA3 ISA "DPP" table).
int dpp_ctrl(const std::string& key, const std::string& v) {
  bool ok;
  if (key == "quad_perm") {
    const auto l = parse_list(v);
    if (l.size() != 4) return -1;
    return l[0] | (l[1] << 2) | (l[2] << 4) | (l[3] << 6);
  }
  const int n = int(parse_int(v, &ok));
  if (key == "row_shl") return 0x100 + n;
  if (key == "row_shr") return 0x110 + n;
  if (key == "row_ror") return 0x120 + n;
  if (key == "wave_shl") return 0x130;
  if (key == "wave_rol") return 0x134;
  if (key == "wave_shr") return 0x138;
  if (key == "wave_ror") return 0x13C;
  if (key == "row_mirror") return 0x140;
  if (key == "row_half_mirror") return 0x141;
  if (key == "row_bcast") return n == 15 ? 0x142 : 0x143;
  if (key == "row_newbcast") return 0x150 + n;  // gfx90a and later
  return -1;
}

bool is_modifier_token(const std::string& t) {
  static const char* flags[] = {"glc", "slc", "nt", "sc0", "sc1", "gds", "lds", "offen", "idxen", "clamp",
                                "row_mirror", "row_half_mirror", "bound_ctrl:0", "bound_ctrl:1", "wave_shl:1",
                                "wave_shr:1", "wave_rol:1", "wave_ror:1", "tfe", "lwe", "a16", "d16"};
  for (const char* f : flags)
    if (t == f) return true;
  return t.find(':') != std::string::npos && t.find('[') != 0 && t.rfind("s[", 0) != 0 &&
         t.rfind("v[", 0) != 0 && t.rfind("a[", 0) != 0 && t.rfind("|", 0) != 0 && t.rfind("-", 0) != 0;
}

void apply_modifier(Instruction& in, const std::string& t) {
  Modifiers& m = in.mods;
  const size_t c = t.find(':');
  const std::string key = c == std::string::npos ? t : t.substr(0, c);
  const std::string val = c == std::string::npos ? std::string() : t.substr(c + 1);
  bool ok;
  if (key == "offset") {
    if (in.base == "ds_swizzle_b32") m.swizzle = parse_swizzle(val);
    else m.offset = parse_int(val, &ok);
  } else if (key == "offset0") m.offset0 = int(parse_int(val, &ok));
  else if (key == "offset1") m.offset1 = int(parse_int(val, &ok));
  else if (key == "glc") m.glc = true;
  else if (key == "slc") m.slc = true;
  else if (key == "nt") m.nt = true;
  else if (key == "sc0") m.sc0 = true;
  else if (key == "sc1") m.sc1 = true;
  else if (key == "gds") m.gds = true;
  else if (key == "lds") m.lds = true;
  else if (key == "offen") m.offen = true;
  else if (key == "idxen") m.idxen = true;
  else if (key == "clamp") m.clamp = true;
  else if (key == "mul") m.omod = parse_int(val, &ok) == 2 ? 1 : 2;
  else if (key == "div") m.omod = 3;
  else if (key == "op_sel") m.op_sel = uint8_t(list_mask(val));
  else if (key == "op_sel_hi") { m.op_sel_hi = uint8_t(list_mask(val)); m.has_op_sel_hi = true; }
  else if (key == "neg_lo") m.neg_lo = uint8_t(list_mask(val));
  else if (key == "neg_hi") m.neg_hi = uint8_t(list_mask(val));
  else if (key == "row_mask") m.row_mask = uint8_t(parse_int(val, &ok));
  else if (key == "bank_mask") m.bank_mask = uint8_t(parse_int(val, &ok));
  else if (key == "bound_ctrl") m.bound_ctrl = true;  // LLVM prints bound_ctrl:0 for BOUND_CTRL = 1
  else if (key == "dst_sel") m.dst_sel = uint8_t(sdwa_sel(val));
  else if (key == "dst_unused") m.dst_unused = val == "UNUSED_PAD" ? 0 : val == "UNUSED_SEXT" ? 1 : 2;
  else if (key == "src0_sel") m.src0_sel = uint8_t(sdwa_sel(val));
  else if (key == "src1_sel") m.src1_sel = uint8_t(sdwa_sel(val));
  else if (key == "cbsz") m.cbsz = int(parse_int(val, &ok));
  else if (key == "abid") m.abid = int(parse_int(val, &ok));
  else if (key == "blgp") m.blgp = int(parse_int(val, &ok));
  else if (key == "bitop3") m.bitop3 = int(parse_int(val, &ok));
  else if (key == "fi") m.fi = parse_int(val, &ok) != 0;
  else if (dpp_ctrl(key, val) >= 0) { m.dpp_ctrl = dpp_ctrl(key, val); m.dpp = true; }
  else throw Error(Error::Kind::code_object, "unknown modifier '" + t + "' in: " + in.text);
}

// s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0), or a raw immediate (gfx9 encoding:
// vmcnt = [3:0] | [15:14] << 4, expcnt = [6:4], lgkmcnt = [11:8]).
void parse_waitcnt(Instruction& in, const std::vector<std::string>& toks) {
  bool ok;
  for (const std::string& t0 : toks) {
    std::string t = t0;
    if (!t.empty() && t.back() == ',') t.pop_back();
    for (const char* name : {"vmcnt", "expcnt", "lgkmcnt"}) {
      const std::string n = name;
      if (t.rfind(n + "(", 0) == 0) {
        const int v = int(parse_int(t.substr(n.size() + 1, t.size() - n.size() - 2), &ok));
        if (n == "vmcnt") in.mods.vmcnt = v;
        else if (n == "expcnt") in.mods.expcnt = v;
        else in.mods.lgkmcnt = v;
      }
    }
    const int64_t raw = parse_int(t, &ok);
    if (ok) {
      in.mods.vmcnt = int((raw & 0xF) | ((raw >> 14) & 3) << 4);
      in.mods.expcnt = int((raw >> 4) & 7);
      in.mods.lgkmcnt = int((raw >> 8) & 0xF);
      if (in.mods.vmcnt == 63) in.mods.vmcnt = -1;
      if (in.mods.lgkmcnt == 15) in.mods.lgkmcnt = -1;
    }
  }
}

bool is_branch(const std::string& m) {
  return m == "s_branch" || m.rfind("s_cbranch_", 0) == 0;
}

// One line of llvm-objdump -d: "\tmnemonic operands, ... modifiers   // ADDR: HEX HEX <label>"
bool parse_line(const std::string& line, Instruction& in) {
  const size_t cpos = line.find("//");
  if (cpos == std::string::npos) return false;
  const std::string body = trim(line.substr(0, cpos));
  const std::string comment = trim(line.substr(cpos + 2));
  if (body.empty()) return false;
  // comment: "00000000E500: C00A0200 0000009C <sym+0x..>"
  const size_t colon = comment.find(':');
  if (colon == std::string::npos) return false;
  bool ok;
  in.addr = uint64_t(parse_int("0x" + comment.substr(0, colon), &ok));
  if (!ok) return false;
  std::stringstream cs(comment.substr(colon + 1));
  std::string word;
  int words = 0;
  uint32_t first_word = 0;
  while (cs >> word) {
    if (word[0] == '<') break;
    const int64_t w = parse_int("0x" + word, &ok);
    if (!ok) break;
    if (words == 0) first_word = uint32_t(w);
    ++words;
  }
  in.size = uint32_t(words * 4);
  in.text = body;
  std::stringstream ss(body);
  std::vector<std::string> toks;
  std::string t;
  while (ss >> t) toks.push_back(t);
  in.mnemonic = toks[0];
  in.base = in.mnemonic;
  for (auto [suf, enc] : {std::pair{"_e32", Instruction::e32}, std::pair{"_e64", Instruction::e64},
                          std::pair{"_sdwa", Instruction::sdwa}, std::pair{"_dpp", Instruction::dpp}}) {
    const std::string s = suf;
    if (in.base.size() > s.size() && in.base.compare(in.base.size() - s.size(), s.size(), s) == 0) {
      in.base = in.base.substr(0, in.base.size() - s.size());
      in.enc = enc;
      break;
    }
  }
  if (in.enc == Instruction::sdwa) in.mods.sdwa = true;
  toks.erase(toks.begin());
  if (in.base == "s_waitcnt") { parse_waitcnt(in, toks); return true; }
  if (is_branch(in.base)) {
    // SOPP simm16 in words, relative to the next instruction (CDNA3 ISA 4.3 "Branching").
    const int16_t simm = int16_t(first_word & 0xFFFF);
    in.mods.target = in.addr + 4 + int64_t(simm) * 4;
    return true;
  }
  // operands: the first token and every token after one that ends in ','; then modifiers
  size_t i = 0;
  if (!toks.empty() && !is_modifier_token(toks[0])) {
    for (;;) {
      std::string tok = toks[i++];
      const bool more = !tok.empty() && tok.back() == ',';
      if (more) tok.pop_back();
      in.ops.push_back(parse_operand(tok, body));
      if (!more || i >= toks.size()) break;
    }
  }
  for (; i < toks.size(); ++i) apply_modifier(in, toks[i]);
  if (in.mods.dpp_ctrl >= 0) in.mods.dpp = true;
  return true;
}

// ---- YAML subset of llvm-readelf --notes ----
struct NoteKernel {
  std::map<std::string, std::string> fields;
  std::vector<KernelArg> args;
};

std::vector<NoteKernel> parse_notes(const std::string& text, const std::string& path) {
  std::vector<NoteKernel> out;
  std::stringstream ss(text);
  std::string line;
  bool in_kernels = false, in_args = false;
  while (std::getline(ss, line)) {
    if (line.rfind("amdhsa.kernels:", 0) == 0) { in_kernels = true; continue; }
    if (!in_kernels) continue;
    if (!line.empty() && line[0] != ' ' && line[0] != '-') { in_kernels = false; continue; }
    const size_t ind = line.find_first_not_of(' ');
    if (ind == std::string::npos) continue;
    std::string rest = line.substr(ind);
    if (ind == 2 && rest.rfind("- ", 0) == 0) {  // new kernel
      out.emplace_back();
      in_args = false;
      rest = rest.substr(2);
    } else if (out.empty()) {
      continue;
    }
    NoteKernel& k = out.back();
    if (rest.rfind(".args:", 0) == 0) { in_args = true; continue; }
    if (in_args) {
      if (rest.rfind("- ", 0) == 0) {
        k.args.emplace_back();
        rest = rest.substr(2);
      } else if (int(ind) <= 4) {
        in_args = false;
      }
    }
    const size_t c = rest.find(':');
    if (c == std::string::npos) continue;
    const std::string key = rest.substr(0, c), val = trim(rest.substr(c + 1));
    if (in_args && !k.args.empty()) {
      bool ok;
      if (key == ".offset") k.args.back().offset = uint32_t(parse_int(val, &ok));
      else if (key == ".size") k.args.back().size = uint32_t(parse_int(val, &ok));
      else if (key == ".value_kind") k.args.back().value_kind = val;
    } else {
      k.fields[key] = val;
    }
  }
  if (out.empty()) co_fail(path, "no amdhsa.kernels in the metadata note");
  return out;
}

}  // namespace

Tools Tools::from_env() {
  Tools t;
  t.objdump = env_or("HIPATTN_AMD_OBJDUMP", "llvm-objdump");
  t.readelf = env_or("HIPATTN_AMD_READELF", "llvm-readelf");
  t.cxxfilt = env_or("HIPATTN_AMD_CXXFILT", "llvm-cxxfilt");
  return t;
}

CodeObject::~CodeObject() {
  if (!asm_.empty()) munmap(const_cast<char*>(asm_.data()), asm_.size());
}

std::shared_ptr<const CodeObject> CodeObject::load(const std::string& path, const Tools& tools) {
  std::shared_ptr<CodeObject> co(new CodeObject());
  co->path_ = path;
  const std::string bytes = read_file(path);
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) co_fail(path, "not an ELF file");
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  if (eh.e_machine != EM_AMDGPU) co_fail(path, "not an AMDGPU ELF (e_machine " + std::to_string(eh.e_machine) + ")");
  const unsigned mach = eh.e_flags & 0xFF;  // EF_AMDGPU_MACH
  if (mach == 0x4C) co->gfx_ = Gfx::gfx942;
  else if (mach == 0x4F) co->gfx_ = Gfx::gfx950;
  else co_fail(path, "unsupported EF_AMDGPU_MACH 0x" + std::to_string(mach) + " (gfx942 and gfx950 only)");
  auto section = [&](int i) {
    Elf64_Shdr sh;
    if (eh.e_shoff + (i + 1) * sizeof(Elf64_Shdr) > bytes.size()) co_fail(path, "truncated section table");
    std::memcpy(&sh, bytes.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  const Elf64_Shdr shstr = section(eh.e_shstrndx);
  std::vector<Elf64_Shdr> secs;
  for (int i = 0; i < eh.e_shnum; ++i) secs.push_back(section(i));
  auto sec_name = [&](const Elf64_Shdr& s) { return std::string(bytes.data() + shstr.sh_offset + s.sh_name); };
  const Elf64_Shdr* symtab = nullptr;
  for (const auto& s : secs) {
    if (sec_name(s) == ".text") { co->text_addr_ = s.sh_addr; co->text_offset_ = s.sh_offset; co->text_size_ = s.sh_size; }
    if (s.sh_type == SHT_SYMTAB) symtab = &s;
  }
  if (!symtab || co->text_size_ == 0) co_fail(path, "no .text or .symtab");
  const Elf64_Shdr& strtab = secs.at(symtab->sh_link);
  std::map<std::string, std::pair<uint64_t, uint64_t>> syms;  // name -> (value, size)
  for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= symtab->sh_size; off += sizeof(Elf64_Sym)) {
    Elf64_Sym sym;
    std::memcpy(&sym, bytes.data() + symtab->sh_offset + off, sizeof sym);
    if (sym.st_name == 0) continue;
    syms[std::string(bytes.data() + strtab.sh_offset + sym.st_name)] = {sym.st_value, sym.st_size};
  }
  auto file_of_addr = [&](uint64_t addr) -> uint64_t {
    for (const auto& s : secs)
      if (s.sh_type != SHT_NOBITS && s.sh_addr != 0 && addr >= s.sh_addr && addr < s.sh_addr + s.sh_size)
        return s.sh_offset + (addr - s.sh_addr);
    co_fail(path, "address not in any section");
  };

  // metadata
  const std::string notes_path = fresh_sibling(path, ".notes.txt");
  const auto notes = parse_notes(notes_path.empty() ? run_tool(shell_quote(tools.readelf) + " --notes " + shell_quote(path), path)
                                                    : read_file(notes_path),
                                 path);
  std::string names;
  for (const auto& nk : notes) {
    KernelInfo k;
    auto get = [&](const char* key) -> std::string {
      auto it = nk.fields.find(key);
      return it == nk.fields.end() ? std::string() : it->second;
    };
    bool ok;
    k.name = get(".name");
    k.group_segment_fixed_size = uint32_t(parse_int(get(".group_segment_fixed_size"), &ok));
    k.private_segment_fixed_size = uint32_t(parse_int(get(".private_segment_fixed_size"), &ok));
    k.kernarg_segment_size = uint32_t(parse_int(get(".kernarg_segment_size"), &ok));
    k.kernarg_align = uint32_t(parse_int(get(".kernarg_segment_align"), &ok));
    k.sgpr_count = int(parse_int(get(".sgpr_count"), &ok));
    k.vgpr_count = int(parse_int(get(".vgpr_count"), &ok));
    k.agpr_count = int(parse_int(get(".agpr_count"), &ok));
    k.wavefront_size = int(parse_int(get(".wavefront_size"), &ok));
    k.args = nk.args;
    const std::string kd_name = get(".symbol");
    auto kd = syms.find(kd_name);
    auto fn = syms.find(k.name);
    if (kd == syms.end() || fn == syms.end()) co_fail(path, "kernel " + k.name + " has no symbol or descriptor");
    // Kernel descriptor (AMDGPU ABI "Kernel Descriptor", 64 bytes).
    const uint64_t kdo = file_of_addr(kd->second.first);
    auto rd32 = [&](uint64_t o) { uint32_t v; std::memcpy(&v, bytes.data() + kdo + o, 4); return v; };
    int64_t entry_off;
    std::memcpy(&entry_off, bytes.data() + kdo + 16, 8);
    k.entry = kd->second.first + entry_off;
    k.rsrc3 = rd32(44);
    k.rsrc1 = rd32(48);
    k.rsrc2 = rd32(52);
    std::memcpy(&k.code_properties, bytes.data() + kdo + 56, 2);
    std::memcpy(&k.kernarg_preload, bytes.data() + kdo + 58, 2);
    if (k.entry != fn->second.first) co_fail(path, "kernel " + k.name + ": descriptor entry does not match the symbol");
    // The manifest constant of kernel _Z<encoding>: _ZZ<encoding>E16hipattn_manifest, NUL-terminated text.
    if (k.name.rfind("_Z", 0) == 0) {
      auto man = syms.find("_ZZ" + k.name.substr(2) + "E16hipattn_manifest");
      if (man != syms.end()) {
        const uint64_t mo = file_of_addr(man->second.first);
        if (mo + man->second.second > bytes.size()) co_fail(path, "kernel " + k.name + ": manifest outside the file");
        const std::string raw = bytes.substr(mo, man->second.second);
        const size_t end = raw.find('\0');
        if (end == std::string::npos || end == 0) co_fail(path, "kernel " + k.name + ": empty or unterminated manifest");
        k.manifest = raw.substr(0, end);
      }
    }
    co->kernels_.push_back(k);
    names += k.name + "\n";
  }
  // Where each kernel's code ends: its symbol's size when it has one, else the next kernel's entry or the
  // end of .text (hand-written objects give their kernels size 0).
  for (auto& k : co->kernels_) {
    const uint64_t size = syms.at(k.name).second;
    k.code_end = co->text_addr_ + co->text_size_;
    if (size > 0) k.code_end = k.entry + size;
    else
      for (const auto& o : co->kernels_)
        if (o.entry > k.entry && o.entry < k.code_end) k.code_end = o.entry;
  }
  // demangled names (one llvm-cxxfilt run)
  {
    // a private temporary file: tests in parallel processes load the same code object
    const char* tmpdir = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/hipattn-emu-names-XXXXXX";
    const int fd = mkstemp(tmpl.data());
    if (fd < 0) co_fail(path, "cannot create a temporary file in " + tmpl);
    const bool written = write(fd, names.data(), names.size()) == ssize_t(names.size());
    close(fd);
    if (!written) {
      std::remove(tmpl.c_str());
      co_fail(path, "cannot write " + tmpl);
    }
    std::string dem;
    try {
      dem = run_tool(shell_quote(tools.cxxfilt) + " < " + shell_quote(tmpl), path);
    } catch (...) {
      std::remove(tmpl.c_str());
      throw;
    }
    std::remove(tmpl.c_str());
    std::stringstream ds(dem);
    std::string l;
    for (auto& k : co->kernels_) {
      if (!std::getline(ds, l)) break;
      k.demangled = l;
    }
  }
  // instructions: disassembled per kernel on first use (CodeObject::code)
  co->tools_ = tools;
  co->asm_path_ = fresh_sibling(path, ".s");
  return co;
}

namespace {
// The instructions of kernel `name` in llvm-objdump -d output `dis`: parsed, branch targets resolved
// to indices (a branch out of the kernel is an error), handlers looked up.
std::vector<Instruction> kernel_code(const std::string& dis, const KernelInfo& k, const std::string& path) {
  const std::string& name = k.name;
  std::vector<Instruction> code;
  std::stringstream ds(dis);
  std::string line;
  // By address, not by symbol header: hand-written objects (AITER's) put local labels in the symbol
  // table, which llvm-objdump prints as headers inside the kernel.
  while (std::getline(ds, line)) {
    if (line.empty() || (line[0] != '\t' && line[0] != ' ')) continue;
    Instruction in;
    if (!parse_line(line, in)) continue;
    if (in.addr < k.entry || in.addr >= k.code_end) continue;
    code.push_back(std::move(in));
  }
  if (code.empty()) co_fail(path, "no instructions found for " + name);
  std::map<uint64_t, size_t> index;
  for (size_t i = 0; i < code.size(); ++i) index[code[i].addr] = i;
  for (size_t i = 0; i < code.size(); ++i) {
    Instruction& in = code[i];
    in.next = i + 1;
    if (is_branch(in.base)) {
      auto it = index.find(in.mods.target);
      if (it == index.end()) co_fail(path, "branch target outside its kernel at " + std::to_string(in.addr) + ": " + in.text);
      in.target_index = it->second;
    }
    auto h = registry().find(in.mnemonic);
    if (h == registry().end()) h = registry().find(in.base);
    in.fn = h == registry().end() ? nullptr : h->second;
  }
  return code;
}

// llvm-objdump -d output `dis` split at the kernels' symbol headers ("<addr> <symbol>:"), so that each
// kernel's parse reads only its own lines.
std::map<std::string, std::string_view> split_symbols(std::string_view dis, const std::set<std::string>& kernels) {
  std::map<std::string, std::string_view> pieces;
  std::string cur;
  size_t start = 0;
  for (size_t pos = 0, eol; pos < dis.size(); pos = eol) {
    eol = std::min(dis.find('\n', pos), dis.size() - 1) + 1;
    const std::string_view line = dis.substr(pos, eol - pos);
    if (line[0] != '\t' && line[0] != ' ' && line.find(">:") != std::string_view::npos) {
      const size_t lt = line.find('<');
      std::string sym(line.substr(lt + 1, line.rfind(">:") - lt - 1));
      if (!kernels.count(sym)) continue;  // a local label inside a kernel (hand-written objects)
      if (!cur.empty()) pieces.emplace(cur, dis.substr(start, pos - start));
      cur = std::move(sym);
      start = pos;
    }
  }
  if (!cur.empty()) pieces.emplace(cur, dis.substr(start));
  return pieces;
}

// empty when absent (kernel_code then says the kernel has no instructions)
std::string piece(const std::map<std::string, std::string_view>& pieces, const std::string& name) {
  auto it = pieces.find(name);
  return it == pieces.end() ? std::string() : std::string(it->second);
}
}  // namespace

// The build's disassembly split by symbol, mapped on first use (the caller holds code_mutex_): the
// dispatch table's is ~200 MB, of which a test reads one kernel's lines; null when there is none.
const std::map<std::string, std::string_view>* CodeObject::build_asm() const {
  if (asm_path_.empty()) return nullptr;
  if (asm_.empty()) {
    const int fd = open(asm_path_.c_str(), O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
      if (fd >= 0) close(fd);
      co_fail(asm_path_, "cannot open, or empty");
    }
    void* m = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) co_fail(asm_path_, "cannot map");
    asm_ = std::string_view(static_cast<const char*>(m), size_t(st.st_size));
    asm_pieces_ = split_symbols(asm_, kernel_names());
  }
  return &asm_pieces_;
}

// One kernel's instructions, parsed on first use: its piece of the build's disassembly, else of
// `llvm-objdump --disassemble-symbols=<kernel>` (a test of one kernel of the dispatch table does not
// pay for the other 150).
const std::vector<Instruction>& CodeObject::code(const KernelInfo& k) const {
  std::lock_guard<std::mutex> lock(code_mutex_);
  auto found = code_.find(k.name);
  if (found != code_.end()) return found->second;
  const auto* pieces = build_asm();
  const std::string dis =
      pieces ? piece(*pieces, k.name)
             : run_tool(shell_quote(tools_.objdump) + " -d --mcpu=" + gfx_name(gfx_) + " --start-address=" +
                            std::to_string(k.entry) + " --stop-address=" + std::to_string(k.code_end) + " " +
                            shell_quote(path_),
                        path_);
  return code_.emplace(k.name, kernel_code(dis, k, path_)).first->second;
}

void CodeObject::disassemble_all() const {
  std::lock_guard<std::mutex> lock(code_mutex_);
  const auto* pieces = build_asm();
  std::string dis;  // without the build's: one llvm-objdump run, split here
  std::map<std::string, std::string_view> split;
  if (!pieces) {
    dis = run_tool(shell_quote(tools_.objdump) + " -d --mcpu=" + gfx_name(gfx_) + " " + shell_quote(path_), path_);
    split = split_symbols(dis, kernel_names());
    pieces = &split;
  }
  for (const auto& k : kernels_)
    if (!code_.count(k.name)) code_.emplace(k.name, kernel_code(piece(*pieces, k.name), k, path_));
}

std::set<std::string> CodeObject::kernel_names() const {
  std::set<std::string> r;
  for (const auto& k : kernels_) r.insert(k.name);
  return r;
}

const KernelInfo& CodeObject::kernel(const std::string& mangled) const {
  for (const auto& k : kernels_)
    if (k.name == mangled) return k;
  throw Error(Error::Kind::code_object, path_ + ": no kernel " + mangled);
}

const KernelInfo& CodeObject::find(const std::vector<std::string>& parts) const {
  const KernelInfo* hit = nullptr;
  int n = 0;
  for (const auto& k : kernels_) {
    bool all = true;
    for (const auto& p : parts) all = all && k.demangled.find(p) != std::string::npos;
    if (all) { hit = &k; ++n; }
  }
  std::string desc;
  for (const auto& p : parts) desc += " [" + p + "]";
  if (n != 1) throw Error(Error::Kind::code_object, path_ + ": " + std::to_string(n) + " kernels match" + desc);
  return *hit;
}

const KernelInfo& CodeObject::find_manifest(const std::string& fields) const {
  const KernelInfo* hit = nullptr;
  int n = 0;
  for (const auto& k : kernels_)
    if (k.manifest == fields) hit = &k, ++n;
  if (n != 1)
    throw Error(Error::Kind::code_object, path_ + ": " + std::to_string(n) + " kernels with the manifest [" + fields + "]");
  return *hit;
}

std::set<std::string> CodeObject::mnemonics(const KernelInfo& k) const {
  std::set<std::string> r;
  for (const auto& in : code(k)) r.insert(in.mnemonic);
  return r;
}


uint64_t CodeObject::file_offset(uint64_t addr) const {
  if (addr < text_addr_ || addr >= text_addr_ + text_size_) throw Error(Error::Kind::code_object, "address outside .text");
  return text_offset_ + (addr - text_addr_);
}

bool implemented(const std::string& mnemonic) {
  if (registry().count(mnemonic)) return true;
  for (const char* suf : {"_e32", "_e64", "_sdwa", "_dpp"}) {
    const std::string s = suf;
    if (mnemonic.size() > s.size() && mnemonic.compare(mnemonic.size() - s.size(), s.size(), s) == 0)
      return registry().count(mnemonic.substr(0, mnemonic.size() - s.size())) > 0;
  }
  return false;
}

}  // namespace hipattn::emu
