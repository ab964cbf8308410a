#!/usr/bin/env python3
"""Assert the instructions hipattn claims for its AMD code objects, and print their resources.

Usage:
    check_isa.py FILE.s...

Each FILE.s is `llvm-objdump -d` output of one code object, named <name>-<gfx>.s with the
`llvm-readelf --notes` output beside it as <name>-<gfx>.notes.txt and the kernel manifest as
<name>-<gfx>.manifest.txt (cmake/HipattnAmdgpu.cmake writes all three). Library kernels are told by
their manifest (tools/kernel_manifest.py: the HIPATTN_KERNEL_MANIFEST fields kernel=<role>, target=,
q=, kv=, dqk=, dv=, tile=, copy=, layout=, mainloop=, variant=, ...), never by their C++ names; the
atoms (plain functions) by their function name. <name> says what the object holds:
  *atoms*      one kernel per CDNA atom (tests/isa/atoms.hip): each must contain its instruction
               (the MFMA shape and type, ds_read_b64_tr_b16, the lane-op and conversion forms);
  *warp_tile*  kernel=warp_tile q= d= mt= kn= (tests/isa/warp_tile.hip): the tile's MFMA, its
               LDS reads and its row-reduction instructions, and no scratch or flat accesses;
  *unified*    the unified attention kernels (tests/isa/unified_kernels.hip, dispatch_all.hip), and the
               CDNA dense prefill kernels (dense_prefill_all.hip, the same skeleton): MFMA
               and the V read of the target in every 2D / 3D kernel built for the object's target,
               no MFMA, LDS or memory instruction in the instances of the other target (their
               bodies are empty in this device pass), no scratch or flat accesses in any kernel;
               an fp8-KV instance also holds the fp8 decode (v_lshl_add_u32 of the code's 7 bits
               at bit 20) and, where the target has one, the conversion that packs the decoded
               values to the 16-bit operand (gfx950: v_cvt_pk_bf16_f32 / v_cvt_pk_f16_f32, gfx942
               f16: v_cvt_f16_f32; gfx942 bf16 rounds with integer ops, nothing to name).
  *paged_decode*  the paged-decode kernels (tests/isa/paged_decode_all.hip, issue 10):
               kernel=paged_decode under the rules of a unified 2D / 3D kernel,
               kernel=paged_decode_reduce and the planner (kernel=plan_decode_tasks; no MFMA).
               Completeness: for each target, the paged_decode_all object must hold a paged_decode
               kernel for every configuration (the manifest less its kernel= field) of dispatch_all's
               unified_2d kernels (the skeleton's: mainloop=skeleton), one of the rocm layout for each
               of them (register-staged), and a paged_decode_reduce for every split_kv_reduce (same
               q, dv, threads), and the planner; so both objects of a target must be given together.
  *mla_decode*  the CDNA MLA decode kernels (tests/isa/mla_decode_all.hip, issue 12):
               kernel=mla_decode (target, q, kv, tile, ...) under the rules of a
               unified kernel (the target's 16-bit MFMA and V read, no fp8 MFMA, no LDS DMA, the fp8
               decode for fp8 caches; empty in the other target's object; the q8 kind of the target,
               the fp8 matrix path, also its fp8 MFMA), the reduce and the planner (no MFMA); every
               (dtype, cache kind) of the object's target must be there: 8 kernels.
In every function of every object, each v_permlane16_swap_b32 / v_permlane32_swap_b32 must have both
of its results read: the swap writes its vdst AND its src0 VGPR, and a reduction that reads only one
(issue 7: __builtin_bit_cast(float, h[1]) of the swap pair reads element 0, llvm#95673) leaves the
other dead. Scanning forward in the function from the swap, each of the two VGPRs must be read as a
source before an instruction overwrites it; a branch, s_endpgm or the end of the function first
counts as unknown (passes). The table's `swaps` column counts the swaps checked per kernel.
For every kernel it prints target, VGPR, AGPR, SGPR, LDS bytes, VGPR / SGPR spills, scratch bytes
and the MFMA count. Spills are reported, not judged (tools/amdgpu_resources.py fails on them).

Exit status: 0 if every check passes, 1 if one fails, 2 on usage or parse errors.
Python 3 standard library only.
"""

import argparse
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def load_tool_module(name):
    """tools/<name>.py: amdgpu_resources (the notes parser shared with the resource check),
    kernel_manifest (the kernel manifests)."""
    path = os.path.join(REPO, "tools", f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MANIFEST = load_tool_module("kernel_manifest")


SYMBOL_RE = re.compile(r"^[0-9a-fA-F]+ <(?P<name>[^>]+)>:\s*$")
INSN_RE = re.compile(r"^\s+(?P<op>[a-z_][a-z0-9_]*)\b")


def parse_asm_insns(text):
    """{symbol: [(mnemonic, operand text), ...]} from llvm-objdump -d output (comments dropped)."""
    funcs = {}
    current = None
    for line in text.splitlines():
        m = SYMBOL_RE.match(line)
        if m:
            current = funcs.setdefault(m.group("name"), [])
            continue
        if current is None:
            continue
        m = INSN_RE.match(line)
        if m:
            current.append((m.group("op"), line[m.end():].split("//", 1)[0].strip()))
    return funcs


def parse_asm(text):
    """{symbol: [mnemonic, ...]} from llvm-objdump -d output."""
    return {name: [op for op, _ in insns] for name, insns in parse_asm_insns(text).items()}


# ---- permlane swap results (issue 7) ----
SWAP_RE = re.compile(r"^v_permlane(16|32)_swap_b32(_e32|_e64)?$")
VGPR_RE = re.compile(r"\bv(?:(\d+)\b|\[(\d+):(\d+)\])")
# The scan stops (result unknown: pass) at control flow.
STOP_RE = re.compile(r"^s_(branch|cbranch_\w+|setpc_b64|swappc_b64|endpgm\w*|trap|call_b64)$")
# Instructions whose first operand is not a VGPR they write: stores, DS / memory ops without return,
# waits and other no-result ops. Atomics count as reading all their operands (returning or not).
NO_DEST_RE = re.compile(r"^(ds_(?!read|load|bpermute|permute|swizzle|\w*_rtn_)\w+|"
                        r"(buffer|global|flat|scratch)_(store|atomic|load_lds)\w*|s_\w+|exp\w*)$")
LDS_DMA_RE = re.compile(r"\blds\b")  # buffer_load_* ... lds: the data goes to LDS, not to a VGPR
# Instructions that also read the VGPR they write (accumulate into it, or write part of it).
READS_DEST_RE = re.compile(r"^(v_(pk_)?(mac|fmac)\w*|v_dot\d+c\w*|v_writelane\w*|\w*_d16\w*|v_swap\w*|"
                           r"v_permlane\d+_swap\w*)$")
# ... or by a modifier: SDWA preserve, DPP with lanes / banks masked off, a 16-bit op_sel write to the
# high half.
READS_DEST_MODS_RE = re.compile(r"UNUSED_PRESERVE|row_mask:0x[0-9a-e]\b|bank_mask:0x[0-9a-e]\b|"
                                r"op_sel:\[[^\]]*1\]")


def split_operands(text):
    """Top-level comma-separated operands (commas inside [...] stay: op_sel:[0,1], v[4:7])."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def vgprs(operand):
    """The VGPR numbers an operand names (v7 -> {7}, v[4:7] -> {4, 5, 6, 7})."""
    regs = set()
    for m in VGPR_RE.finditer(operand):
        if m.group(1) is not None:
            regs.add(int(m.group(1)))
        else:
            regs.update(range(int(m.group(2)), int(m.group(3)) + 1))
    return regs


def vgpr_access(op, operands):
    """(written VGPRs, read VGPRs) of one instruction, approximately: the first operand is the
    destination unless NO_DEST_RE says there is none; a destination the instruction also reads
    (READS_DEST_RE, preserving SDWA / DPP forms) counts as read."""
    ops = split_operands(operands)
    if not ops:
        return set(), set()
    if NO_DEST_RE.match(op) or (op.startswith("buffer_load") and LDS_DMA_RE.search(operands)):
        return set(), set().union(*(vgprs(o) for o in ops))
    written = vgprs(ops[0])
    read = set().union(set(), *(vgprs(o) for o in ops[1:]))
    if READS_DEST_RE.match(op) or READS_DEST_MODS_RE.search(operands):
        read |= written
    return written, read


def check_swaps(insns):
    """(checked, unknown, problems) for the permlane swaps of one function's [(mnemonic, operands)]:
    each swap's two result VGPRs must be read before they are overwritten."""
    checked, unknown, problems = 0, 0, []
    for i, (op, operands) in enumerate(insns):
        if not SWAP_RE.match(op):
            continue
        regs = [r for o in split_operands(operands)[:2] for r in sorted(vgprs(o))]
        if len(regs) != 2:
            problems.append(f"cannot read the two VGPRs of `{op} {operands}`")
            continue
        checked += 1
        pending = dict.fromkeys(regs)  # reg -> None while undecided
        for op2, operands2 in insns[i + 1:]:
            if STOP_RE.match(op2):
                break
            written, read = vgpr_access(op2, operands2)
            for r in regs:
                if pending[r] is None:
                    if r in read:
                        pending[r] = "read"
                    elif r in written:
                        pending[r] = f"overwritten by `{op2} {operands2}` before it is read"
            if all(v is not None for v in pending.values()):
                break
        if any(v is None for v in pending.values()):
            unknown += 1
        for r in regs:
            if pending[r] not in (None, "read"):
                role = "vdst" if r == regs[0] else "src0"
                problems.append(f"`{op} {operands}` (#{checked}): result v{r} ({role}) {pending[r]}")
    return checked, unknown, problems


def function_name(symbol):
    """The name of a plain (global, non-template) function from its mangled symbol: _Z<len><name><params>
    -> name (the atoms of tests/isa/atoms.hip); the symbol itself when it is not of that form."""
    m = re.match(r"_Z(\d+)", symbol)
    if not m:
        return symbol
    return symbol[m.end():m.end() + int(m.group(1))]


# ---- what each kernel must (and must not) contain ----
# LLVM 21 prints the gfx942 bf16 MFMAs as v_mfma_f32_*_bf16 (older: *bf16_1k); accept both.
def mfma(shape, typ):
    if typ == "bf16":
        return rf"v_mfma_f32_{shape}_?bf16(_1k)?"
    if typ == "f16":
        return rf"v_mfma_f32_{shape}_?f16"
    return rf"v_mfma_f32_{shape}_{typ}"


ATOM_RULES = {
    # kernel name: (targets, required mnemonic regexes, forbidden mnemonic regexes)
    "atom_cdna3_mfma_16x16x16_f16": (None, [mfma("16x16x16", "f16")], []),
    "atom_cdna3_mfma_16x16x16_bf16": (None, [mfma("16x16x16", "bf16")], []),
    "atom_cdna3_mfma_32x32x8_f16": (None, [mfma("32x32x8", "f16")], []),
    "atom_cdna3_mfma_32x32x8_bf16": (None, [mfma("32x32x8", "bf16")], []),
    "atom_cdna3_mfma_16x16x32_fp8": (None, [mfma("16x16x32", "fp8_fp8")], []),
    "atom_cdna3_mfma_32x32x16_fp8": (None, [mfma("32x32x16", "fp8_fp8")], []),
    "atom_cdna3_lds_reads": (None, [r"ds_read_b128", r"ds_read_u16(_d16(_hi)?)?"], [r"flat_\w+"]),
    "atom_cdna3_lane_ops": (None, [r"ds_swizzle_b32", r"ds_bpermute_b32"], []),
    "atom_cdna3_math": (None, [r"v_exp_f32(_e32|_e64)?", r"v_rcp_f32(_e32|_e64)?"], []),
    "atom_cdna4_mfma_16x16x32_f16": ({"gfx950"}, [r"v_mfma_f32_16x16x32_f16"], []),
    "atom_cdna4_mfma_16x16x32_bf16": ({"gfx950"}, [r"v_mfma_f32_16x16x32_bf16"], []),
    "atom_cdna4_mfma_32x32x16_f16": ({"gfx950"}, [r"v_mfma_f32_32x32x16_f16"], []),
    "atom_cdna4_mfma_32x32x16_bf16": ({"gfx950"}, [r"v_mfma_f32_32x32x16_bf16"], []),
    "atom_cdna4_mfma_16x16x128_fp8": ({"gfx950"}, [r"v_mfma_f32_16x16x128_f8f6f4"], [r"v_mfma_scale\w+"]),
    "atom_cdna4_mfma_32x32x64_fp8": ({"gfx950"}, [r"v_mfma_f32_32x32x64_f8f6f4"], [r"v_mfma_scale\w+"]),
    "atom_cdna4_lds_read_tr16": ({"gfx950"}, [r"ds_read_b64_tr_b16"], [r"flat_\w+"]),
    "atom_cdna4_lane_ops": ({"gfx950"}, [r"v_permlane16_swap_b32(_e32|_e64)?", r"v_permlane32_swap_b32(_e32|_e64)?"],
                            [r"ds_bpermute_b32", r"ds_swizzle_b32"]),
    "atom_cdna4_math": ({"gfx950"}, [r"v_cvt_pk_bf16_f32"], []),
}

# Scratch shows as scratch_* / buffer stores (spills) and in the notes' scratch bytes (checked for every
# kernel); buffer loads are allowed: the LDS-DMA loader's buffer_load_* ... lds (required below where
# an instance uses that loader, forbidden in the others).
NO_SCRATCH = [r"scratch_\w+", r"buffer_store_\w+", r"flat_\w+"]


def tile_rules(target, bf16):
    typ = "bf16" if bf16 else "f16"
    if target == "gfx950":
        return [mfma("16x16x32", typ), r"ds_read_b128", r"ds_read_b64_tr_b16",
                r"v_permlane32_swap_b32(_e32|_e64)?", r"v_permlane16_swap_b32(_e32|_e64)?"]
    return [mfma("16x16x16", typ), r"ds_read_b128", r"ds_read_u16(_d16(_hi)?)?", r"ds_swizzle_b32",
            r"ds_bpermute_b32"]


# The attention kernel roles of the manifests (kernel=...), the reduce of each object kind and the
# decode work planner (kernels/common/task_plan.hpp).
ATTENTION_ROLES = ("unified_2d", "unified_3d", "paged_decode", "dense_prefill")
REDUCE_ROLES = {"unified": "split_kv_reduce", "paged_decode": "paged_decode_reduce"}
PLANNER_ROLE = "plan_decode_tasks"
# The q8 kinds (the fp8 matrix path): QK^T by the target's fp8 MFMA, one format per target.
Q8_KINDS = {"e4m3fn_q8": "gfx950", "e4m3fnuz_q8": "gfx942"}
# Paged decode's verify tile (MTP verify rows 17-32, up to d 128: dispatch/tiles/gfx942.hpp and
# gfx950.hpp, *_verify_head), which the unified table does not have: manifest tile field and the
# largest head size.
VERIFY_TILES = {"gfx942": ("2x1x1x16x1", 128), "gfx950": ("2x1x1x32x2", 128)}


def display_name(symbol, manifest):
    """A kernel's name in the table and the messages: a short one from its manifest, else its function name."""
    return MANIFEST.short_name(manifest) if manifest else function_name(symbol)


def has(ops, pattern):
    rx = re.compile(rf"^(?:{pattern})$")
    return any(rx.match(op) for op in ops)


# The fp8 KV decode (numeric/fp8.hpp fp8_e4m3_to_float_normal_only, in cdna3::dequant_fp8x4_with):
# the code's 7 magnitude bits shifted to bit 20 and the exponent offset added, one v_lshl_add_u32.
FP8_DECODE = (r"v_lshl_add_u32(_e64)?", r"^v\d+, v\d+, 20, ")


def fp8_pack_rule(target, bf16):
    """The conversion instruction that packs decoded fp8 values to the 16-bit MFMA operand (Arch::pack2),
    or None where the target has none (gfx942 bf16: integer RNE)."""
    if target == "gfx950":
        return r"v_cvt_pk_bf16_f32" if bf16 else r"v_cvt_pk_f16_f32"
    return None if bf16 else r"v_cvt_f16_f32(_e32|_e64)?"


def has_operands(insns, op_pattern, operand_pattern):
    rx, ro = re.compile(rf"^(?:{op_pattern})$"), re.compile(operand_pattern)
    return any(rx.match(op) and ro.search(operands) for op, operands in insns)


def count(ops, pattern):
    rx = re.compile(rf"^(?:{pattern})$")
    return sum(1 for op in ops if rx.match(op))


def mla_rules(target, m, insns):
    """(required, forbidden, problems) of a kernel=mla_decode kernel built for `target`: the target's
    16-bit MFMA and V read, no LDS DMA, the fp8 decode for fp8 caches; the q8 kind of the target (the fp8
    matrix path) also its fp8 MFMA (gfx950: 16x16x128 f8f6f4 per 128 columns and 16x16x32 for the last 64)."""
    required = [r"v_mfma_f32_16x16x(16|32)_?b?f16(_1k)?"]
    required += [r"ds_read_b64_tr_b16"] if target == "gfx950" else [r"ds_read_u16(_d16(_hi)?)?"]
    forbidden, problems = [r"buffer_load_\w+"], []
    fp8_mfma = [mfma("16x16x32", "fp8_fp8"), r"v_mfma_f32_16x16x128_f8f6f4"]
    if m["kv"] in Q8_KINDS:  # the fp8 matrix path: QK^T (576 deep) by the target's fp8 MFMA
        if Q8_KINDS[m["kv"]] != target:
            problems.append(f"{m['kv']} built for {target}")
        required += fp8_mfma if target == "gfx950" else [fp8_mfma[0]]
        if target != "gfx950":
            forbidden += [fp8_mfma[1]]
        forbidden += [r"v_mfma_scale\w+"]
    else:
        forbidden += fp8_mfma
    required += fp8_rules(target, m, insns, problems)
    return required, forbidden, problems


def fp8_rules(target, m, insns, problems):
    """fp8 KV (decoded in registers, V only on the fp8 matrix path, packed to the 16-bit operand): the
    pack instruction the target has; a missing fp8 decode is appended to `problems`."""
    if m["kv"] == "same16":
        return []
    if not has_operands(insns, *FP8_DECODE):
        problems.append(f"missing the fp8 decode ({FP8_DECODE[0]} ..., 20, ...)")
    pack = fp8_pack_rule(target, m["q"] == "bf16")
    return [pack] if pack else []


def attention_rules(target, m, insns):
    """(required, forbidden, problems) of an attention kernel (unified_2d / unified_3d / paged_decode /
    dense_prefill) built for `target`: the 16-bit MFMA and V read of the target, the KV loader policy
    (copy=dma: LDS DMA buffer loads, dwordx4 on gfx950, dword on gfx942), the ping-pong schedule's
    barriers and priorities (kernels/cdna/pingpong_mainloop.hpp), the fp8 matrix path, the fp8 decode.
    Ping-pong waves of 32 rows (tile ...x2x..., the 32-row tile of arch/cdna3/warp_tile32.hpp, gfx950 only)
    run 32x32x16 MFMAs and reduce a row over lanes l and l ^ 32 (one permlane32 swap)."""
    forbidden, problems = [], []
    if m["mainloop"] == "pingpong" and m["tile"].split("x")[2] == "2":
        required = [r"v_mfma_f32_32x32x16_?b?f16", r"v_permlane32_swap_b32(_e32|_e64)?"]
        forbidden += [r"v_mfma_f32_16x16x(16|32)_?b?f16(_1k)?"]
        if target != "gfx950":
            problems.append(f"a 32-row ping-pong tile built for {target}")
    else:
        required = [r"v_mfma_f32_16x16x(16|32)_?b?f16(_1k)?"]
    required += [r"ds_read_b64_tr_b16"] if target == "gfx950" else [r"ds_read_u16(_d16(_hi)?)?"]
    if m["copy"] == "dma":
        required += [r"buffer_load_dwordx4" if target == "gfx950" else r"buffer_load_dword"]
    else:
        forbidden += [r"buffer_load_\w+"]
    if m["mainloop"] == "pingpong":
        required += [r"s_barrier", r"s_setprio"]
        if m["copy"] != "dma":
            problems.append("a ping-pong instance without the LDS-DMA loader")
    fp8_mfma = [mfma("16x16x32", "fp8_fp8"), r"v_mfma_f32_16x16x128_f8f6f4"]
    if m["kv"] in Q8_KINDS:  # the fp8 matrix path: QK^T by the fp8 MFMA of the format the target reads
        if Q8_KINDS[m["kv"]] != target:
            problems.append(f"{m['kv']} built for {target}")
        d = int(m["dqk"])
        # gfx950: 16x16x128 f8f6f4 (unscaled) per 128 head columns, 16x16x32 for the rest
        if target == "gfx950" and d >= 128:
            required += [fp8_mfma[1]]
        if target != "gfx950" or d % 128:
            required += [fp8_mfma[0]]
        if target != "gfx950":
            forbidden += [fp8_mfma[1]]
        forbidden += [r"v_mfma_scale\w+"]
    else:
        forbidden += fp8_mfma
    required += fp8_rules(target, m, insns, problems)
    return required, forbidden, problems


# An instance of the other target: its body is empty in this device pass.
EMPTY_BODY = [r"v_mfma\w+", r"ds_\w+", r"global_\w+", r"buffer_\w+"]


def object_kind(base):
    """What an object holds, from its name: atoms, warp_tile, mla, paged_decode, unified, or None."""
    if "atoms" in base:
        return "atoms"
    if "warp_tile" in base:
        return "warp_tile"
    if "mla_decode" in base:
        return "mla"
    if "paged_decode" in base:
        return "paged_decode"
    if "unified" in base or "dispatch_all" in base or "dense_prefill" in base:
        return "unified"
    return None


def kernel_rules(kind, target, sym, m, insns, table_sets):
    """(required, forbidden, problems) of one kernel of an object of `kind` (m: its manifest fields, or
    {}); records what the completeness check compares in table_sets (cfgs, reduces, planners) when the
    object is one of the two tables."""
    role = m.get("kernel")
    if kind == "atoms":
        rule = ATOM_RULES.get(function_name(sym))
        if rule is None:
            return [], [], ["kernel without a rule in check_isa.py"]
        targets, req, forb = rule
        problems = [f"built for {target}, expected only on {sorted(targets)}"] if targets and target not in targets else []
        return list(req), list(forb), problems
    if kind == "warp_tile":
        if role != "warp_tile":
            return [], [], ["not a kernel=warp_tile kernel (tests/isa/warp_tile.hip)"]
        return tile_rules(target, m["q"] == "bf16"), [], []
    if kind == "mla":
        if role == "mla_decode":
            return ([], EMPTY_BODY, []) if m["target"] != target else mla_rules(target, m, insns)
        if role in (PLANNER_ROLE, "paged_decode_reduce"):
            return [], [r"v_mfma\w+"], []
        return [], [], [f"unexpected kernel in a {kind} object"]
    if table_sets is not None:
        record_table_kernel(m, table_sets)
    if role in ATTENTION_ROLES:
        if (role == "paged_decode") != (kind == "paged_decode"):
            return [], [], [f"{role} in a {kind} object"]
        return ([], EMPTY_BODY, []) if m["target"] != target else attention_rules(target, m, insns)
    if role in (PLANNER_ROLE, REDUCE_ROLES[kind]):
        return [], [r"v_mfma\w+"], []  # integer work / the split merge: no matrix instruction
    return [], [], [f"unexpected kernel in a {kind} object"]


def record_table_kernel(m, table_sets):
    """What the paged-decode completeness check compares: the configurations of the table's 2D kernels
    (dispatch_all: unified_2d; paged_decode_all: paged_decode; the skeleton's only: the ping-pong
    instances of unified attention's prefill q-blocks are a schedule of the 2D grid, which paged decode
    does not launch), the reduces' (q, dv, threads), the planners."""
    role, (table, cfgs, reduces, planners) = m.get("kernel"), table_sets
    if role == ("unified_2d" if table == "dispatch" else "paged_decode") and m["mainloop"] != "pingpong":
        cfgs.add(MANIFEST.config_text(m))
    elif role == ("split_kv_reduce" if table == "dispatch" else "paged_decode_reduce"):
        reduces.add((m["q"], m["dv"], m["threads"]))
    elif role == PLANNER_ROLE:
        planners.add(MANIFEST.config_text(m))


def check_paged_decode_tables(tables, failures):
    """Issue 10: the paged-decode family launches every configuration of the unified dispatch table (both
    tile kinds, every loader policy, both targets' instances), one of the rocm layout for each (not the
    fp8 matrix path's), its own verify tile of each up to the verify tile's head size, and a reduce per
    split-KV reduce. Returns the summary lines."""
    pd_counts = []
    for target, t in sorted(tables.items()):
        if "dispatch" not in t or "paged" not in t:
            have, lack = ("dispatch_all", "paged_decode_all") if "dispatch" in t else ("paged_decode_all", "dispatch_all")
            failures.append(f"{target}: {have} given without {lack}: the paged-decode completeness check needs both")
            continue
        dbase, (_, dcfgs, dred, _) = t["dispatch"]
        pbase, (_, pcfgs_all, pred, pplan) = t["paged"]
        # The rocm cache layout: the register-staged configuration of every tile of the table (same
        # instance and tile shape; the staged loader keeps at most two stages).
        rocm = {c for c in pcfgs_all if MANIFEST.fields(c)["layout"] == "rocm"}
        pcfgs = pcfgs_all - rocm

        def tile_key(c):
            return tuple((k, v) for k, v in MANIFEST.fields(c).items() if k not in ("copy", "layout"))
        for c in sorted(rocm):
            if MANIFEST.fields(c)["copy"] != "staged":
                failures.append(f"{pbase}: paged_decode {c}: the rocm layout loads register-staged (copy=staged)")
        rocm_keys = {tile_key(c) for c in rocm}
        for c in sorted(dcfgs):
            # (the fp8 matrix path never takes the rocm layout: paged_decode_instance_key converts there)
            if MANIFEST.fields(c)["kv"] not in Q8_KINDS and tile_key(c) not in rocm_keys:
                failures.append(f"{pbase}: no rocm-layout paged_decode kernel for {c} (a configuration of {dbase})")
        # The verify tile: one configuration of each of the table's (q, kv, head size, variant, loader
        # policy) up to its head size, and only those.
        # (Each object holds the manifests of both targets' kernels: the verify tile is the manifest's target's.)
        def verify_of(c):
            f = MANIFEST.fields(c)
            vtile, vmax = VERIFY_TILES.get(f["target"], (None, 0))
            return vtile, int(f["dqk"]) <= vmax
        def untiled(c):
            return tuple((k, v) for k, v in MANIFEST.fields(c).items() if k != "tile")
        verify = {c for c in pcfgs if verify_of(c) == (MANIFEST.fields(c)["tile"], True)}
        want_verify = {untiled(c) for c in dcfgs if verify_of(c)[0] and verify_of(c)[1]}
        for key in sorted(want_verify - {untiled(c) for c in verify}):
            failures.append(f"{pbase}: no verify-tile paged_decode kernel of {dict(key)}")
        pcfgs = pcfgs - (verify - dcfgs)
        for c in sorted(dcfgs - pcfgs):
            failures.append(f"{pbase}: no paged_decode kernel of {c} (a configuration of {dbase})")
        for c in sorted(pcfgs - dcfgs):
            failures.append(f"{pbase}: paged_decode kernel of {c} is no configuration of {dbase}")
        for r in sorted(dred - pred):
            failures.append(f"{pbase}: no paged_decode_reduce q={r[0]} dv={r[1]} threads={r[2]} (a split-KV reduce of {dbase})")
        for r in sorted(pred - dred):
            failures.append(f"{pbase}: paged_decode_reduce q={r[0]} dv={r[1]} threads={r[2]} has no split-KV reduce in {dbase}")
        if not pplan:
            failures.append(f"{pbase}: no plan_decode_tasks kernel")
        if not pcfgs:
            failures.append(f"{pbase}: no paged_decode kernel")
        pd_counts.append(f"{target}: {len(pcfgs)} paged_decode + {len(verify)} verify-tile + {len(rocm)} of the rocm "
                         f"layout, {len(pred)} reduces")
    return pd_counts


def read_object(path, res):
    """(functions' [(mnemonic, operands)] by symbol, the notes' kernels, the manifests) of one FILE.s;
    raises OSError / ValueError."""
    notes_path = path[:-2] + ".notes.txt"
    with open(path, encoding="utf-8", errors="replace") as f:
        func_insns = parse_asm_insns(f.read())
    with open(notes_path, encoding="utf-8", errors="replace") as f:
        kernels = res.parse_notes(f.read(), notes_path)
    if not kernels:
        raise ValueError(f"{notes_path}: no kernels")
    return func_insns, kernels, MANIFEST.load(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE.s")
    args = ap.parse_args(argv)

    res = load_tool_module("amdgpu_resources")
    failures = []
    rows = []
    swap_totals = [0, 0]  # permlane swaps checked, of which unknown (control flow before a verdict)
    # target -> {"dispatch" | "paged": (object, (table, {configuration}, {(q, dv, threads) of reduces}, {planner}))}
    tables = {}
    for path in args.files:
        base = os.path.basename(path)
        m = re.search(r"-(gfx\w+)\.s$", base)
        if not m:
            print(f"check_isa: error: {path}: name must end in -<gfx>.s", file=sys.stderr)
            return 2
        target = m.group(1)
        kind = object_kind(base)
        if kind is None:
            print(f"check_isa: error: {path}: cannot tell atoms / warp_tile / unified / paged_decode from the name",
                  file=sys.stderr)
            return 2
        # what the completeness check compares (dispatch_all's against paged_decode_all's, per target)
        table = "dispatch" if "dispatch_all" in base else "paged" if kind == "paged_decode" else None
        table_sets = None
        if table:
            table_sets = tables.setdefault(target, {}).setdefault(table, (base, (table, set(), set(), set())))[1]
        try:
            func_insns, kernels, manifests = read_object(path, res)
        except (OSError, ValueError, res.ParseError) as e:
            print(f"check_isa: error: {e} (the .manifest.txt: cmake/HipattnAmdgpu.cmake, tools/kernel_manifest.py)",
                  file=sys.stderr)
            return 2
        funcs = {name: [op for op, _ in insns] for name, insns in func_insns.items()}

        def fail(kernel, what):
            failures.append(f"{base}: {display_name(kernel, manifests.get(kernel))}: {what}")

        # Permlane swap results, in every function of the object (kernels and any callees).
        swaps = {}
        for sym, insns in func_insns.items():
            checked, unknown, problems = check_swaps(insns)
            swaps[sym] = (checked, unknown)
            for prob in problems:
                fail(sym, prob)
            swap_totals[0] += checked
            swap_totals[1] += unknown

        seen_atoms = set()
        mla_seen = set()
        for k in kernels:
            sym = k["kernel"]
            man = manifests.get(sym, {})
            ops = funcs.get(sym)
            if ops is None:
                fail(sym, "no disassembly for this kernel")
                continue
            if (k["scratch"] or 0) > 0 or k["dynamic_stack"]:
                fail(sym, f"uses scratch ({k['scratch']} bytes/lane{', dynamic stack' if k['dynamic_stack'] else ''})")
            required, forbidden, problems = kernel_rules(kind, target, sym, man, func_insns[sym], table_sets)
            forbidden = (list(NO_SCRATCH) if kind != "atoms" else [r"scratch_\w+"]) + forbidden
            for prob in problems:
                fail(sym, prob)
            if kind == "atoms" and function_name(sym) in ATOM_RULES:
                seen_atoms.add(function_name(sym))
            if man.get("kernel") == "mla_decode" and man["target"] == target:
                mla_seen.add((man["q"], man["kv"]))
            for pat in required:
                if not has(ops, pat):
                    fail(sym, f"missing {pat}")
            for pat in forbidden:
                n = count(ops, pat)
                if n:
                    fail(sym, f"{n} x forbidden {pat}")
            rows.append([display_name(sym, man), target, k["vgpr"], k["agpr"], k["sgpr"], k["lds"], k["vgpr_spill"],
                         k["sgpr_spill"], k["scratch"], count(ops, r"v_mfma\w+"), swaps.get(sym, (0, 0))[0]])
        if kind == "mla":
            q8 = [kv for kv, t in Q8_KINDS.items() if t == target]  # the target's fp8 matrix path
            want = {(q, kv) for q in ("bf16", "f16") for kv in ["same16", "e4m3fn", "e4m3fnuz"] + q8}
            for q, kv in sorted(want - mla_seen):
                failures.append(f"{base}: no mla_decode kernel for {target}, q {q}, kv {kv}")
        if kind == "atoms":
            want = {n for n, (t, _, _) in ATOM_RULES.items() if t is None or target in t}
            for missing in sorted(want - seen_atoms):
                failures.append(f"{base}: atom kernel {missing} not built")

    pd_counts = check_paged_decode_tables(tables, failures)

    cols = ["kernel", "target", "vgpr", "agpr", "sgpr", "lds", "vgpr_spill", "sgpr_spill", "scratch", "mfma",
            "swaps"]
    table = [[("-" if v is None else str(v)) for v in r] for r in rows]
    widths = [max(len(c), *(len(r[i]) for r in table)) for i, c in enumerate(cols)]
    line = lambda r: "  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
    print(line(cols))
    print(line(["-" * w for w in widths]))
    for r in table:
        print(line(r))
    spills = sum(1 for r in rows if (r[6] or 0) > 0 or (r[7] or 0) > 0)
    if spills:
        print(f"\nnote: {spills} kernel(s) spill (see vgpr_spill / sgpr_spill); the resource test fails on them")
    print(f"\npermlane swaps: {swap_totals[0]} checked (vdst and src0 each read before overwritten); "
          f"{swap_totals[1]} of them with a result undecided at a branch / end of function (passes)")
    if pd_counts:
        print("paged decode covers the unified dispatch table: " + "; ".join(pd_counts))
    if failures:
        print("\ncheck_isa: FAIL", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        return 1
    print(f"\ncheck_isa: OK ({len(rows)} kernels in {len(args.files)} code objects)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
