#!/usr/bin/env python3
"""compare_code_objects.py: whether two builds of the same AMDGPU code objects generate the same kernels.

Usage:
    compare_code_objects.py [--show N] BASE_DIR NEW_DIR

For every <name>.co in BASE_DIR that NEW_DIR also holds, with the build's <name>.s (llvm-objdump -d)
and <name>.notes.txt (llvm-readelf --notes) beside each (cmake/HipattnAmdgpu.cmake writes them), it
compares, ignoring the kernels' names (which change when a configuration type is renamed):
  bodies     the multiset of kernel bodies: the disassembly split per kernel (the functions the notes
             name), each instruction reduced to its mnemonic and operands (addresses, encodings,
             `// ...` comments and `<symbol+0x..>` references dropped, symbol names replaced by `<sym>`);
  resources  the multiset of per-kernel resource records: each kernel's metadata entry of the notes
             (registers, LDS, scratch, kernarg layout, ...) less its .name and .symbol fields.
It prints one line per object (kernel counts, and `identical` or what differs) and, for an object
that differs, how many bodies or records are found on one side only and, for up to --show of them, the
first line where each differs from the other side's entry of the same rank.
Objects only in one directory are listed too.

Exit status: 0 when every object pair is identical, 1 when one differs (or exists on one side only),
2 on usage or read errors.  Python 3 standard library only.
"""

import argparse
import collections
import os
import re
import sys

SYMBOL_RE = re.compile(r"^[0-9a-fA-F]+ <(?P<name>[^>]+)>:\s*$")
INSN_RE = re.compile(r"^\s+(?P<text>[a-z_][a-z0-9_]*\b[^/]*)")
SYMREF_RE = re.compile(r"<[^>]*>")
MANGLED_RE = re.compile(r"\b_Z\w+")


def split_functions(asm_text):
    """{symbol: [normalized instruction]} of llvm-objdump -d output."""
    funcs, current = {}, None
    for line in asm_text.splitlines():
        m = SYMBOL_RE.match(line)
        if m:
            current = funcs.setdefault(m.group("name"), [])
            continue
        if current is None:
            continue
        m = INSN_RE.match(line)
        if m:
            current.append(normalize(m.group("text")))
    return {name: drop_padding(body) for name, body in funcs.items()}


# A zero word decodes as this instruction: what follows a kernel's last s_endpgm up to the next
# symbol's alignment is padding, not code, and may differ when kernels are laid out differently.
ZERO_WORD = "v_cndmask_b32_e32 v0, s0, v0, vcc"


def drop_padding(body):
    """The body without the zero words after its last s_endpgm."""
    end = len(body)
    while end > 0 and body[end - 1] == ZERO_WORD:
        end -= 1
    return body[:end] if end > 0 and body[end - 1] == "s_endpgm" else body


def normalize(insn):
    """An instruction without its comment, symbol references or names, whitespace collapsed."""
    insn = insn.split("//", 1)[0]
    insn = SYMREF_RE.sub("<sym>", insn)
    insn = MANGLED_RE.sub("<sym>", insn)
    return " ".join(insn.split())


def kernel_entries(notes_text):
    """[(kernel name, [normalized metadata lines less .name / .symbol])] of llvm-readelf --notes output."""
    entries, current, item_indent = [], None, None
    in_kernels = False
    for line in notes_text.splitlines():
        stripped = line.strip()
        if stripped.startswith("amdhsa.kernels:"):
            in_kernels, item_indent = True, None
            continue
        if in_kernels and re.match(r"^\s*amdhsa\.", line) or stripped in ("---", "..."):
            in_kernels = False
            continue
        if not in_kernels:
            continue
        indent = len(line) - len(line.lstrip())
        if stripped.startswith("- .") and (item_indent is None or indent == item_indent):
            item_indent = indent
            current = {"name": None, "lines": []}
            entries.append(current)
            stripped = stripped[2:]
        if current is None:
            continue
        key = stripped.split(":", 1)[0]
        if indent <= item_indent + 2 and key in (".name", ".symbol"):
            if key == ".name":
                current["name"] = stripped.split(":", 1)[1].strip().strip("'\"")
            continue
        current["lines"].append(" " * (indent - item_indent) + stripped)
    return [(e["name"], e["lines"]) for e in entries]


def read_object(directory, base):
    """(kernel bodies, resource records) of <base>.s / <base>.notes.txt in `directory`, each a Counter
    of tuples (a kernel's normalized instructions; its metadata lines)."""
    with open(os.path.join(directory, base + ".s"), encoding="utf-8", errors="replace") as f:
        funcs = split_functions(f.read())
    with open(os.path.join(directory, base + ".notes.txt"), encoding="utf-8", errors="replace") as f:
        entries = kernel_entries(f.read())
    bodies, records = collections.Counter(), collections.Counter()
    for name, lines in entries:
        if name not in funcs:
            raise ValueError(f"{directory}/{base}.s: no disassembly of kernel {name}")
        bodies[tuple(funcs[name])] += 1
        records[tuple(lines)] += 1
    return bodies, records, len(entries)


def describe_difference(only_base, only_new, what, show):
    """Lines describing up to `show` entries found on one side only: their count and length, and the
    first line where each differs from the other side's entry of the same rank (entries sorted)."""
    base, new = sorted(only_base.elements()), sorted(only_new.elements())
    out = [f"    {what}: {len(base)} only in base, {len(new)} only in new"]
    for i in range(min(show, max(len(base), len(new)))):
        b = base[i] if i < len(base) else ()
        n = new[i] if i < len(new) else ()
        k = next((j for j in range(max(len(b), len(n))) if j >= len(b) or j >= len(n) or b[j] != n[j]), None)
        if k is None:
            continue
        at = lambda e: e[k] if k < len(e) else "(end)"
        out.append(f"      #{i}: {len(b)} / {len(n)} lines; first difference at line {k}: base `{at(b)}` new `{at(n)}`")
    return out


def compare_pair(base_dir, new_dir, base, show):
    """(identical?, report lines) of one object pair."""
    b_bodies, b_records, b_n = read_object(base_dir, base)
    n_bodies, n_records, n_n = read_object(new_dir, base)
    same_bodies, same_records = b_bodies == n_bodies, b_records == n_records
    verdict = "identical" if same_bodies and same_records else \
        f"DIFFERENT (bodies {'same' if same_bodies else 'differ'}, resources {'same' if same_records else 'differ'})"
    lines = [f"{base}.co: kernels {b_n} base / {n_n} new; bodies {sum(b_bodies.values())} / {sum(n_bodies.values())} "
             f"({len(b_bodies)} / {len(n_bodies)} distinct); {verdict}"]
    if not same_bodies:
        lines += describe_difference(b_bodies - n_bodies, n_bodies - b_bodies, "kernel bodies", show)
    if not same_records:
        lines += describe_difference(b_records - n_records, n_records - b_records, "resource records", show)
    return same_bodies and same_records and b_n == n_n, lines


def object_bases(directory):
    return {f[:-3] for f in os.listdir(directory) if f.endswith(".co")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("base_dir")
    ap.add_argument("new_dir")
    ap.add_argument("--show", type=int, default=3, help="differing entries shown per object (default 3)")
    args = ap.parse_args(argv)
    try:
        base_objs, new_objs = object_bases(args.base_dir), object_bases(args.new_dir)
    except OSError as e:
        print(f"compare_code_objects: error: {e}", file=sys.stderr)
        return 2
    all_same = True
    for base in sorted(base_objs | new_objs):
        if base not in base_objs or base not in new_objs:
            print(f"{base}.co: only in {'base' if base in base_objs else 'new'}")
            all_same = False
            continue
        try:
            same, lines = compare_pair(args.base_dir, args.new_dir, base, args.show)
        except (OSError, ValueError) as e:
            print(f"compare_code_objects: error: {e}", file=sys.stderr)
            return 2
        all_same = all_same and same
        print("\n".join(lines))
    print("all identical" if all_same else "differences found")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
