#!/usr/bin/env python3
"""A static performance model of the unified-attention and paged-decode AMD kernels (issues 9, 10), from their code objects.

Usage:
    amdgpu_model.py [--mca PATH] [--latency-us X] [--min-decode-frac F] FILE.s...

Each FILE.s is `llvm-objdump -d` output of one code object, named <name>-<gfx>.s, with the
`llvm-readelf --notes` output beside it as <name>-<gfx>.notes.txt and the kernel manifest as
<name>-<gfx>.manifest.txt (cmake/HipattnAmdgpu.cmake writes all three; tools/kernel_manifest.py the
manifest). Kernels are told by their manifest (the HIPATTN_KERNEL_MANIFEST fields: kernel role,
target, q, kv, dqk, dv, tile, copy, layout, mainloop, variant), never by their C++ names. For every
unified 2D / 3D kernel (kernel=unified_2d / unified_3d), every paged-decode kernel (paged_decode,
issue 10: the same configurations; "pd" in the table) and every dense prefill kernel built for the
object's target (target=<gfx>), and every CDNA MLA decode kernel ("mla", issue 12: kernel=mla_decode;
both its bandwidth and its llvm-mca rows, neither gated), it prints, the instance's name ending in its
KV loader policy (staged: register-staged loads; dma: buffer loads that write LDS):
  regs        the unified VGPR count a lane (arch VGPRs and AGPRs, granules of 8), from the notes
  lds         bytes per workgroup: the static LDS of the notes + the dynamic LDS of the configuration
              (the formula of kernels/unified/config.hpp's unified_lds_layout, written again here)
  waves/SIMD  min(8, 512 / regs); WG/CU: the least of what LDS (64 KiB gfx942, 160 KiB gfx950), the
              thread slots (2048) and the registers (4 SIMDs) allow
  loop        the main loop (the backward branch whose body holds the most MFMAs): its vector-memory
              loads per iteration and the most load bytes a wave has in flight in it, found by walking
              the loop body twice and retiring loads at each `s_waitcnt vmcnt(N)` (in order, as the
              hardware counts them)
  predicted   decode bandwidth by Little's law: in-flight bytes per CU x CUs / latency, capped at HBM;
              MI300X: 304 CUs, 5.3 TB/s; MI355X: 256 CUs, 8.0 TB/s (AMD's data sheets)
  MFMA frac   prefill only: llvm-mca's cycles for one loop iteration (one KV tile; branches left out)
              and for its MFMAs alone; min(1, waves/SIMD x MFMA cycles / tile cycles) estimates how busy
              a SIMD's matrix unit is (llvm-mca's scheduling model, in-order issue of one wave;
              llvm-mca 21 crashes on buffer loads, so they are costed as global loads of the same width)
The latency (default 1.0 us) is the conservative end of the 0.4-1 us loaded HBM latency that
the design documents' AMD review (finding P3) works with; --latency-us changes it.

Gates (exit status 1): a decode kernel predicted below --min-decode-frac (default 0.8) of HBM; a main
loop that waits after every single load (never more than one load in flight); no main loop found in
a 2D / 3D / paged-decode kernel. Exit status 2 on usage or parse errors.
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

DEVICES = {"gfx942": ("MI300X", 304, 5.3e12, 64 * 1024), "gfx950": ("MI355X", 256, 8.0e12, 160 * 1024)}
SYMBOL_RE = re.compile(r"^(?P<addr>[0-9a-fA-F]+) <(?P<name>[^>]+)>:\s*$")
INSN_RE = re.compile(r"^\s+(?P<op>[a-z_][a-z0-9_]*)\b(?P<rest>[^/]*)(?://\s*(?P<addr>[0-9A-Fa-f]+):[^<]*(?:<(?P<tsym>[^>+]+)\+0x(?P<toff>[0-9a-fA-F]+)>)?)?")
VMEM_LOAD_RE = re.compile(r"^(global|buffer|flat)_load_(?:lds_)?(?P<w>dword(?:x(?P<n>\d))?|u?byte|u?short|b\d+|d16\w*)")
VMCNT_RE = re.compile(r"vmcnt\((\d+)\)")
# The kernel roles the model reads (the manifest's kernel= field) and their short names in the table.
ROLE_NAMES = {"unified_2d": "2d", "unified_3d": "3d", "paged_decode": "pd", "dense_prefill": "dense", "mla_decode": "mla"}
# llvm-mca 21 crashes on MUBUF loads (buffer_load_*, with or without `lds`); for its cycle count a
# buffer load is replaced by the global load of the same width (same issue cost, a VGPR destination).
# The destinations rotate over eight 4-register ranges that the instructions given do not use (VGPRs,
# else AGPRs), so that no replaced load depends on another or on the loop's own registers (an LDS-DMA
# load writes no VGPR; one shared fake destination had serialized them on the load latency: the
# gfx950 LDS-DMA skeleton at d = 128, 671 -> 461 cycles).
REG_RE = re.compile(r"\b([va])(?:\[(\d+):(\d+)\]|(\d+))\b")


def free_ranges(lines, count=8):
    """`count` register ranges of 4 ("v[a:b]" / "a[a:b]") that no line names, VGPRs first."""
    used = {"v": set(), "a": set()}
    for line in lines:
        for kind, lo, hi, one in REG_RE.findall(line):
            a, b = (int(lo), int(hi)) if lo else (int(one), int(one))
            used[kind].update(range(a, b + 1))
    out = []
    for kind in ("v", "a"):
        for base in range(252, -1, -4):  # from the top: the fewest kernels reach there
            if len(out) < count and not used[kind] & set(range(base, base + 4)):
                out.append((kind, base))
    return out or [("v", 252)]
MCA_BUFFER_RE = re.compile(r"^buffer_load_(?P<w>dword(?:x(?P<n>\d))?)\b.*$")


def load_tool_module(name):
    """tools/<name>.py as a module (amdgpu_resources: the notes parser; kernel_manifest: the manifests)."""
    path = os.path.join(HERE, f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def instance_of(manifest):
    """The configuration the model reads from a kernel's manifest fields, or None for a kernel it does not
    model (reduces, the planner). dv is set only where V is narrower than K and not read from the K
    stage (dense prefill's (192, 128)); the MLA kernels (d_qk 576, V the first 512 columns of the K
    stage) are sized by mla_lds."""
    role = manifest.get("kernel")
    if role not in ROLE_NAMES:
        return None
    wm, wn, mt, kn, st = (int(x) for x in manifest["tile"].split("x"))
    d, dv = int(manifest["dqk"]), int(manifest["dv"])
    mla = role == "mla_decode"
    layout = manifest["layout"]
    return {"role": role, "target": manifest["target"], "bf16": manifest["q"] == "bf16", "kv": manifest["kv"],
            "d": d, "dv": None if mla or dv == d else dv, "wm": wm, "wn": wn, "mt": mt, "kn": kn, "st": st,
            "pp": manifest.get("mainloop") == "pingpong", "mla": mla, "variant": manifest["variant"],
            "loader": manifest["copy"] + ("" if layout == "row" else f" {layout}")}


def mla_lds(c):
    """MLA: Q (rows x 576) + stages of keys x 576, 16-bit (V read from the K stage), the loader's scale
    slots; the fp8 matrix path: Q and K tiles of code pairs, 288 a row in a 320-pair pitch, and a 16-bit
    V stage of 512 columns."""
    q8 = c["kv"].endswith("_q8")
    row = 320 * 2 if q8 else 576 * 2
    return c["wm"] * 16 * row + c["st"] * c["kn"] * (row + (512 * 2 if q8 else 0)) + 2 * c["st"] * c["kn"] * 4


def parse_functions(text):
    """{symbol: (start address, [(address, mnemonic, operands, branch target offset or None)])}."""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = SYMBOL_RE.match(line)
        if m:
            cur = funcs.setdefault(m.group("name"), (int(m.group("addr"), 16), []))
            continue
        if cur is None:
            continue
        m = INSN_RE.match(line)
        if not m or not m.group("addr"):
            continue
        toff = int(m.group("toff"), 16) if m.group("toff") and m.group("tsym") else None
        cur[1].append((int(m.group("addr"), 16) - cur[0], m.group("op"), m.group("rest").strip(), toff))
    return funcs


def load_bytes(op):
    m = VMEM_LOAD_RE.match(op)
    if not m:
        return 0
    w = m.group("w")
    if w.startswith("dword"):
        return 4 * int(m.group("n") or 1)
    if w in ("ubyte", "byte"):
        return 1
    if w in ("ushort", "short") or w.startswith("d16"):
        return 2
    if w.startswith("b"):
        return int(w[1:]) // 8
    return 4


def main_loop(insns):
    """(start index, end index) of the backward branch range holding the most MFMAs, or None."""
    index_of = {off: i for i, (off, _, _, _) in enumerate(insns)}
    best, best_mfma = None, 0
    for i, (off, op, _, toff) in enumerate(insns):
        if not op.startswith("s_cbranch") and op != "s_branch":
            continue
        if toff is None or toff > off or toff not in index_of:
            continue
        j = index_of[toff]
        n = sum(1 for k in range(j, i + 1) if insns[k][1].startswith("v_mfma"))
        if n > best_mfma:
            best, best_mfma = (j, i), n
    return best


def phased_loop(insns):
    """The ping-pong schedule's tile loop: the shortest backward branch range holding MFMAs and exactly two
    s_barriers (one tile's two phases; the compiler's other backward ranges span the peeled first
    and last tiles too), else exactly four (the mainloop's two tiles an iteration, each step knowing its
    stages: kernels/cdna/pingpong_mainloop.hpp), or None."""
    index_of = {off: i for i, (off, _, _, _) in enumerate(insns)}
    for barriers in (2, 4):
        best = None
        for i, (off, op, _, toff) in enumerate(insns):
            if (not op.startswith("s_cbranch") and op != "s_branch") or toff is None or toff > off or toff not in index_of:
                continue
            j = index_of[toff]
            seg = insns[j:i + 1]
            if any(x[1].startswith("v_mfma") for x in seg) and sum(1 for x in seg if x[1] == "s_barrier") == barriers:
                if best is None or i - j < best[1] - best[0]:
                    best = (j, i)
        if best is not None:
            return best
    return None


# Instructions of the logits' edge-tile mask: compares, selects and integer / scalar ALU (no memory
# operation, wait, barrier, transcendental or MFMA).
EDGE_MASK_OPS_RE = re.compile(r"^(v_cmp\w*|v_cndmask\w*|v_add\w*|v_sub\w*|v_mov\w*|v_and\w*|v_or\w*|v_xor\w*|"
                              r"v_lshl\w*|v_lshr\w*|v_ashr\w*|v_max_i32\w*|v_min_i32\w*|v_mul_lo\w*|"
                              r"s_(?!waitcnt|barrier|setprio|sched|cbranch|branch|nop|sleep)\w+)$")


def edge_only(insns, loop):
    """Indices of the loop's instructions that only edge tiles run: the ranges a forward conditional branch
    skips when they hold nothing but the mask's compares and selects (one v_cndmask or more). Interior tiles
    (tile/tile_range.hpp KvTileRange::is_interior: every key visible to every row) take the branch."""
    index_of = {off: i for i, (off, _, _, _) in enumerate(insns)}
    j, i = loop
    skip = set()
    for k in range(j, i + 1):
        off, op, _, toff = insns[k]
        if not op.startswith("s_cbranch") or toff is None or toff <= off or toff not in index_of:
            continue
        t = index_of[toff]
        block = insns[k + 1:t]
        if t > i + 1 or not block:
            continue
        if all(EDGE_MASK_OPS_RE.match(x[1]) for x in block) and any(x[1].startswith("v_cndmask") for x in block):
            skip.update(range(k + 1, t))
    return skip


def loop_in_flight(insns, loop):
    """(loads per iteration, most bytes a lane has in flight, most loads in flight) over two passes."""
    j, i = loop
    body = insns[j:i + 1]
    outstanding = []
    loads = sum(1 for _, op, _, _ in body if load_bytes(op))
    max_bytes = max_count = 0
    for rnd in range(2):
        for _, op, rest, _ in body:
            b = load_bytes(op)
            if b:
                outstanding.append(b)
            elif op == "s_waitcnt":
                m = VMCNT_RE.search(rest)
                if m:
                    n = int(m.group(1))
                    while len(outstanding) > n:
                        outstanding.pop(0)
            if rnd == 1:
                max_bytes = max(max_bytes, sum(outstanding))
                max_count = max(max_count, len(outstanding))
    return loads, max_bytes, max_count


def mca_cycles(mca, target, lines, iterations=20):
    """llvm-mca's cycles per iteration of `lines` (instruction text) on `target`, or None."""
    if not mca or not lines:
        return None
    free = free_ranges(lines, 9)
    vfree = [r for r in free if r[0] == "v"]
    addr = f"v[{vfree[0][1]}:{vfree[0][1] + 1}]" if vfree else "v[254:255]"  # (an address is a VGPR pair)
    dsts = [r for r in free if r != (vfree[0] if vfree else None)] or free
    def mca_text(line, k):
        m = MCA_BUFFER_RE.match(line)
        if not m:
            return line
        n = int(m["n"] or 1)
        kind, base = dsts[k % len(dsts)]
        dst = f"{kind}{base}" if n == 1 else f"{kind}[{base}:{base + n - 1}]"
        return f"global_load_{m['w']} {dst}, {addr}, off"
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(mca_text(l, k) for k, l in enumerate(lines)) + "\n")
        path = f.name
    try:
        r = subprocess.run([mca, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={target}", f"-iterations={iterations}", path],
                           capture_output=True, text=True)
    finally:
        os.unlink(path)
    m = re.search(r"Total Cycles:\s+(\d+)", r.stdout)
    return int(m.group(1)) / iterations if r.returncode == 0 and m else None


def lds_layout(wm, wn, mt, kn, stages, d, fp8, fp8_staging=False, q8=False, dv=None):
    """kernels/unified/config.hpp unified_lds_layout for a CDNA target (register-staged loads; with
    fp8_staging, the layout of the loader before issue 9: fp8 codes staged in LDS, then converted;
    q8, the fp8 matrix path: Q and K tiles of code pairs, V 16-bit)."""
    bm, bn = wm * 16 * mt, wn * kn
    pitch = (d + 63) // 64 * 64
    pitch8 = (d // 2 + 63) // 64 * 64
    q = bm * (pitch8 if q8 else pitch) * 2
    if fp8 and fp8_staging:
        kv = stages * 2 * bn * d + 2 * bn * pitch * 2
    elif q8:
        kv = stages * (bn * pitch8 * 2 + bn * pitch * 2)
    else:
        kv = stages * bn * (pitch + (pitch if dv is None else (dv + 63) // 64 * 64)) * 2
    scales = 2 * stages * bn * 4
    merge = wn * bm * (d + 2) * 4 if wn > 1 else 0
    return max(q + kv + scales, merge)


def default_mca():
    """llvm-mca beside the toolchain's llvm-readelf or llvm-cxxfilt (.ci/amd-toolchain.sh's env.sh), or ""."""
    for var in ("HIPATTN_AMD_READELF", "HIPATTN_AMD_CXXFILT"):
        tool = os.environ.get(var, "")
        cand = os.path.join(os.path.dirname(tool), "llvm-mca") if os.path.dirname(tool) else ""
        if cand and os.path.exists(cand):
            return cand
    return ""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--latency-us", type=float, default=1.0)
    ap.add_argument("--min-decode-frac", type=float, default=0.8)
    ap.add_argument("--mca", default=os.environ.get("HIPATTN_AMD_MCA", ""),
                    help="llvm-mca (default: beside $HIPATTN_AMD_READELF or $HIPATTN_AMD_CXXFILT); the "
                         "prefill rows get its cycles per tile")
    ap.add_argument("--fp8-lds-staging", action="store_true",
                    help="objects of the loader before issue 9 (fp8 staged through LDS): size their LDS so")
    args = ap.parse_args(argv)
    args.mca = args.mca or default_mca()
    res = load_tool_module("amdgpu_resources")
    manifest = load_tool_module("kernel_manifest")

    rows, failures, seen = [], [], set()
    for path in args.files:
        base = os.path.basename(path)
        m = re.search(r"-(gfx9\d\d)\.s$", base)
        if not m:
            print(f"amdgpu_model: error: {path}: name must end in -<gfx>.s", file=sys.stderr)
            return 2
        target = m.group(1)
        notes_path = path[:-2] + ".notes.txt"
        try:
            with open(path) as f:
                funcs = parse_functions(f.read())
            with open(notes_path) as f:
                kernels = res.parse_notes(f.read(), notes_path)
            manifests = manifest.load(path)
        except (OSError, ValueError) as e:
            print(f"amdgpu_model: error: {e} (cmake/HipattnAmdgpu.cmake writes the .manifest.txt beside the .s: "
                  f"tools/kernel_manifest.py)", file=sys.stderr)
            return 2
        dev_name, cus, hbm, lds_cu = DEVICES[target]
        for k in kernels:
            c = instance_of(manifests.get(k["kernel"], {}))
            if c is None or c["target"] != target:
                continue  # reduce kernels, the planner; the other target's (empty) instances
            wm, wn, mt, kn, st, d, dv = (c[x] for x in ("wm", "wn", "mt", "kn", "st", "d", "dv"))
            pp, mla, variant, loader = c["pp"], c["mla"], c["variant"], c["loader"]
            fp8 = c["kv"] != "same16"
            key = (target, c["role"], c["bf16"], c["kv"], d, dv, wm, wn, mt, kn, st, variant, loader)
            if key in seen:
                continue
            seen.add(key)
            # the notes' .vgpr_count of gfx90a and later is the unified count (arch VGPRs, then AGPRs):
            # .agpr_count is part of it, not more
            regs = (max(k["vgpr"], k["agpr"]) + 7) // 8 * 8
            lds = (k["lds"] or 0) + (mla_lds(c) if mla else
                                     lds_layout(wm, wn, mt, kn, st, d, fp8, args.fp8_lds_staging, q8=c["kv"].endswith("_q8"), dv=dv))
            waves = wm * wn
            per_simd = min(8, 512 // max(regs, 1))
            wg_cu = max(0, min(lds_cu // max(lds, 1), 4 * per_simd // waves, 2048 // (waves * 64)))
            insns = funcs.get(k["kernel"], (0, []))[1]
            loop = phased_loop(insns) if pp else main_loop(insns)
            # MLA rows are q_len x heads (16 to 1024): both rows are reported, neither gated (no AMD target in issue 12)
            decode = wm * 16 * mt == 16 and not mla
            kind = "mla" if mla else "decode" if decode else "prefill"
            name = (f"{ROLE_NAMES[c['role']]}{' pingpong' if pp else ''} {'bf16' if c['bf16'] else 'f16'} "
                    f"{c['kv']} d{d}{f'/{dv}' if dv else ''} {kind} {wm}x{wn}x{mt}x{kn}x{st} {variant} {loader}")
            if loop is None:
                failures.append(f"{base}: {name}: no main loop found")
                continue
            loads, lane_bytes, max_loads = loop_in_flight(insns, loop)
            wave_bytes = lane_bytes * 64
            cu_bytes = wave_bytes * waves * wg_cu
            bw = min(hbm, cu_bytes * cus / (args.latency_us * 1e-6))
            frac = bw / hbm
            # Prefill: llvm-mca's cycles for one tile (one loop iteration, branches left out) against the
            # cycles of its MFMAs alone; a SIMD's matrix unit is shared by its resident waves.
            mca_loop = mca_mfma = mca_interior = None
            # The waves a SIMD holds on average: what the registers allow, or fewer where LDS or the
            # thread slots bound the workgroups a CU (4 SIMDs)
            resident = max(1.0, min(per_simd, wg_cu * waves / 4))

            def tile_cycles(body):
                """llvm-mca's cycles of one tile of `body`; the ping-pong schedule's
                (kernels/cdna/pingpong_mainloop.hpp): the loop's two phases (the code between its
                s_barriers; the loop is rotated, so its last segment and its first are one phase) run in
                turns, a wave of each group on every SIMD; one tile of a pair takes two intervals of
                max(phase) cycles and gives each wave its MFMAs"""
                if not pp:
                    return mca_cycles(args.mca, target, body)
                segs, cur = [], []
                for b in body:
                    if b.startswith("s_barrier"):
                        segs.append(cur)
                        cur = []
                    else:
                        cur.append(b)
                segs.append(cur)
                phases = [segs[-1] + segs[0]] + segs[1:-1]
                phase_cycles = [mca_cycles(args.mca, target, ph) or 0 for ph in phases if ph]
                # per tile: two phases a tile (the loop body holds one tile or two)
                return max(phase_cycles) * 2 if phase_cycles and max(phase_cycles) else None

            def frac_of(cycles):
                # (the ping-pong: half the resident waves issue MFMAs in an interval, two intervals a tile)
                return f"{min(1.0, resident * mca_mfma / cycles):.2f}" if cycles and mca_mfma else ""

            if not decode:
                j, i = loop
                edge = edge_only(insns, loop)
                keep = [k for k in range(j, i + 1) if not insns[k][1].startswith(("s_cbranch", "s_branch"))]
                text = {k: f"{insns[k][1]} {insns[k][2]}".strip() for k in keep}
                body = [text[k] for k in keep]
                mca_mfma = mca_cycles(args.mca, target, [b for b in body if b.startswith("v_mfma")])
                if pp and mca_mfma:  # one tile's MFMAs (a body of two tiles has four barriers)
                    mca_mfma /= max(1, sum(1 for b in body if b.startswith("s_barrier")) // 2)
                mca_loop = tile_cycles(body)
                # interior tiles: the same loop without the edge tiles' mask
                mca_interior = tile_cycles([text[k] for k in keep if k not in edge]) if edge else mca_loop
            mfma_frac = frac_of(mca_loop)
            interior_frac = frac_of(mca_interior)
            rows.append([name, target, regs, lds, per_simd, wg_cu, loads, max_loads, wave_bytes // 1024,
                         cu_bytes // 1024, f"{bw / 1e12:.2f}", f"{frac:.2f}" + (" <" if decode and frac < args.min_decode_frac else ""),
                         f"{mca_loop:.0f}" if mca_loop else "", f"{mca_mfma:.0f}" if mca_mfma else "", mfma_frac,
                         f"{mca_interior:.0f}" if mca_interior else "", interior_frac])
            if loads > 1 and max_loads <= 1:
                failures.append(f"{base}: {name}: the main loop waits after every load ({loads} loads, never two in flight)")
            if decode and frac < args.min_decode_frac:
                failures.append(f"{base}: {name}: predicted {frac:.2f} of {dev_name} HBM < {args.min_decode_frac}")

    cols = ["instance", "target", "regs", "lds", "waves/SIMD", "WG/CU", "loads/iter", "max in flight",
            "KiB/wave", "KiB/CU", "TB/s", "of HBM", "mca cyc/tile", "MFMA cyc", "MFMA frac", "interior cyc",
            "interior frac"]
    rows.sort(key=lambda r: (r[1], "prefill" in r[0], r[0]))
    width = [max(len(str(x)) for x in col) for col in zip(cols, *rows)] if rows else [len(c) for c in cols]
    print("  ".join(str(c).ljust(w) for c, w in zip(cols, width)))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, width)))
    print(f"\nmodel: Little's law at {args.latency_us} us loaded HBM latency; MI300X 304 CUs 5.3 TB/s, "
          f"MI355X 256 CUs 8.0 TB/s; decode gate {args.min_decode_frac} of HBM; prefill: llvm-mca cycles of one "
          f"tile, of its MFMAs alone, and min(1, waves/SIMD x MFMA / tile) (reported, not gated; goal 0.6); "
          f"interior: the same without the code only edge tiles run (the mask)"
          + ("" if args.mca else " [no llvm-mca: not computed]"))
    for f in failures:
        print(f"amdgpu_model: FAIL: {f}", file=sys.stderr)
    if not rows:
        print("amdgpu_model: error: no unified or paged-decode kernels found", file=sys.stderr)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
