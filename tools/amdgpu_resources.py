#!/usr/bin/env python3
"""Print per-kernel AMDGPU resource usage and fail on register spills.

Usage:
    amdgpu_resources.py [--allow-scratch] [--allow-sgpr-spill] [--demangle] [--readelf PATH] FILE...

Each FILE is either
  * the text output of `llvm-readelf --notes <code object>` (e.g. the
    <name>-<gfx>.notes.txt files written by cmake/HipattnAmdgpu.cmake), or
  * an AMDGPU code object (.co / any ELF file); llvm-readelf is then run on
    it: --readelf, else $HIPATTN_AMD_READELF (see .ci/amd-toolchain.sh's
    env.sh), else llvm-readelf from PATH.

For every kernel it prints: name, target, vgpr, agpr, sgpr, vgpr_spill,
sgpr_spill, lds (.group_segment_fixed_size, bytes) and scratch
(.private_segment_fixed_size, bytes; "+dyn" when .uses_dynamic_stack).

With --demangle, a kernel with a kernel manifest (tools/kernel_manifest.py: <name>.manifest.txt
beside <name>.notes.txt, or the manifest constants of a code object given directly) is shown by a
short name built from its manifest fields ("2d bf16 same16 d128 1x2x1x16x1 plain staged @gfx942");
any other kernel by its demangled C++ name ($HIPATTN_AMD_CXXFILT, llvm-cxxfilt or c++filt).

With --output FILE the table is written to FILE only when the check passes
(for build rules: a failing check leaves no stale output behind).

Exit status: 0 if all kernels are clean; 1 if any kernel spills VGPRs/SGPRs
or, unless --allow-scratch, uses scratch memory (private segment > 0 or a
dynamic stack); 2 on usage, readelf or parse errors.

Python 3 standard library only.
"""

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys

# Fields read from each kernel entry of the amdhsa.kernels list.
INT_FIELDS = {
    "vgpr": ".vgpr_count",
    "agpr": ".agpr_count",
    "sgpr": ".sgpr_count",
    "vgpr_spill": ".vgpr_spill_count",
    "sgpr_spill": ".sgpr_spill_count",
    "lds": ".group_segment_fixed_size",
    "scratch": ".private_segment_fixed_size",
}
COLUMNS = ["kernel", "target", "vgpr", "agpr", "sgpr", "vgpr_spill", "sgpr_spill", "lds", "scratch", "status"]


class ParseError(Exception):
    pass


def parse_notes(text, origin):
    """Parse `llvm-readelf --notes` output of one or more code objects.

    llvm-readelf prints the NT_AMDGPU_METADATA msgpack note as a YAML document
    between '---' and '...'.  Its layout is fixed (2-space indentation):

        amdhsa.kernels:
          - .agpr_count:     0
            .args:
              - .address_space:  global      <- deeper levels: ignored
            .name:           _Z3fooPf
            ...
        amdhsa.target:   amdgcn-amd-amdhsa--gfx942

    Only the subset needed here is parsed; no YAML library is required.
    Returns a list of kernel dicts.
    """
    kernels = []
    doc = None  # lines of the current YAML document
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == "---":
            doc = []
        elif stripped == "..." and doc is not None:
            kernels.extend(_parse_document(doc, origin))
            doc = None
        elif doc is not None:
            doc.append(line)
    if doc is not None:
        raise ParseError(f"{origin}: unterminated AMDGPU metadata document")
    return kernels


def _parse_document(lines, origin):
    # The document is indented as a whole (llvm-readelf nests it under the
    # note); find the indentation of its top-level keys ("amdhsa.*:").
    base = None
    for line in lines:
        m = re.match(r"^(\s*)amdhsa\.", line)
        if m:
            base = len(m.group(1))
            break
    if base is None:
        return []
    target = None
    kernels = []
    current = None
    in_kernels = False
    top_re = re.compile(r"^ {%d}(amdhsa\.[\w.]+):\s*(.*)$" % base)
    item_re = re.compile(r"^ {%d}- (\.\w+):\s*(.*)$" % (base + 2))
    key_re = re.compile(r"^ {%d}(\.\w+):\s*(.*)$" % (base + 4))
    for line in lines:
        m = top_re.match(line)
        if m:
            key, value = m.groups()
            in_kernels = key == "amdhsa.kernels"
            if key == "amdhsa.target":
                target = value.strip().strip("'\"")
            continue
        if not in_kernels:
            continue
        m = item_re.match(line)
        if m:  # a new kernel entry starts (its first key is on the '- ' line)
            current = {}
            kernels.append(current)
            current[m.group(1)] = m.group(2).strip()
            continue
        m = key_re.match(line)
        if m and current is not None:
            current[m.group(1)] = m.group(2).strip()
    result = []
    for k in kernels:
        if ".name" not in k:
            raise ParseError(f"{origin}: kernel entry without .name")
        row = {"kernel": k[".name"].strip("'\""), "file": origin}
        row["target"] = _short_target(target)
        for col, key in INT_FIELDS.items():
            value = k.get(key)
            try:
                row[col] = int(value, 0) if value is not None else None
            except ValueError:
                raise ParseError(f"{origin}: kernel {row['kernel']}: {key} is not an integer: {value!r}")
        row["dynamic_stack"] = k.get(".uses_dynamic_stack", "false") == "true"
        result.append(row)
    return result


def _short_target(target):
    """amdgcn-amd-amdhsa--gfx942:sramecc+ -> gfx942:sramecc+"""
    if not target:
        return "?"
    return target.split("--", 1)[1] if "--" in target else target


def find_tool(explicit, env_var, names):
    if explicit:
        return explicit
    if os.environ.get(env_var):
        return os.environ[env_var]
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    return None


def read_input(path, readelf):
    if path == "-":
        return sys.stdin.read()
    with open(path, "rb") as f:  # read once: path may be a pipe
        data = f.read()
    if data[:4] == b"\x7fELF":
        if not os.path.isfile(path):
            raise ParseError(f"{path}: code objects must be regular files")
        if not readelf:
            raise ParseError(f"{path}: is a code object but no llvm-readelf was found "
                             "(pass --readelf or source the toolchain env.sh)")
        proc = subprocess.run([readelf, "--notes", path], capture_output=True, text=True)
        if proc.returncode != 0:
            raise ParseError(f"{path}: {readelf} --notes failed: {proc.stderr.strip()}")
        return proc.stdout
    return data.decode("utf-8", errors="replace")


def demangle(names, cxxfilt):
    if not cxxfilt or not names:
        return names
    proc = subprocess.run([cxxfilt], input="\n".join(names) + "\n", capture_output=True, text=True)
    out = proc.stdout.splitlines()
    return out if proc.returncode == 0 and len(out) == len(names) else names


def load_manifest_module():
    """tools/kernel_manifest.py (beside this file)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_manifest.py")
    spec = importlib.util.spec_from_file_location("kernel_manifest", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def manifests_of(path, manifest):
    """{kernel symbol: manifest fields} of one input: read from the ELF of a code object, from the
    .manifest.txt beside a notes file; {} when there is none."""
    try:
        if os.path.isfile(path):
            with open(path, "rb") as f:
                is_elf = f.read(4) == b"\x7fELF"
            if is_elf:
                return {k: manifest.fields(t) for k, t in manifest.read_manifests(path).items()}
        if os.path.exists(manifest.sibling_manifest(path)):
            return manifest.load(path)
    except (OSError, ValueError, manifest.ElfError, manifest.ManifestError):
        pass
    return {}


def display_names(rows, cxxfilt):
    """Each row's display name: the manifest's short name where the kernel has a manifest, else its
    demangled name."""
    manifest = load_manifest_module()
    by_file = {path: manifests_of(path, manifest) for path in {r["file"] for r in rows} if path != "-"}
    names = [r["kernel"] for r in rows]
    demangled = demangle(names, cxxfilt) if cxxfilt else names
    out = []
    for r, dem in zip(rows, demangled):
        m = by_file.get(r["file"], {}).get(r["kernel"])
        out.append(manifest.short_name(m) if m else dem)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="FILE", help=".notes.txt (llvm-readelf --notes output; '-' = stdin) or code object")
    ap.add_argument("--allow-scratch", action="store_true",
                    help="do not fail on scratch use (private segment > 0 / dynamic stack); spills still fail")
    ap.add_argument("--allow-sgpr-spill", action="store_true",
                    help="report SGPR spills (which the compiler places in VGPR lanes with v_writelane, "
                         "no memory traffic) as 'sgpr-spill' without failing; VGPR spills still fail")
    ap.add_argument("--demangle", action="store_true",
                    help="readable kernel names: the short name of a kernel's manifest (tools/kernel_manifest.py), "
                         "else the demangled name ($HIPATTN_AMD_CXXFILT, llvm-cxxfilt or c++filt)")
    ap.add_argument("--readelf", help="llvm-readelf to use for code objects (default: $HIPATTN_AMD_READELF)")
    ap.add_argument("--output", metavar="FILE",
                    help="write the table to FILE instead of stdout, and only if the check passes "
                         "(on failure FILE is removed and the table goes to stdout); for build rules")
    args = ap.parse_args(argv)

    readelf = find_tool(args.readelf, "HIPATTN_AMD_READELF", ["llvm-readelf", "llvm-readelf-21"])
    rows = []
    try:
        for path in args.files:
            kernels = parse_notes(read_input(path, readelf), path)
            if not kernels:
                raise ParseError(f"{path}: no AMDGPU kernel metadata found")
            rows.extend(kernels)
    except (OSError, ParseError) as e:
        print(f"amdgpu_resources: error: {e}", file=sys.stderr)
        return 2

    if args.demangle:
        cxxfilt = find_tool(None, "HIPATTN_AMD_CXXFILT", ["llvm-cxxfilt", "c++filt"])
        if not cxxfilt:
            print("amdgpu_resources: warning: no demangler found", file=sys.stderr)
        for row, name in zip(rows, display_names(rows, cxxfilt)):
            row["kernel"] = name

    failed = False
    table = []
    for r in rows:
        problems = []
        if (r["vgpr_spill"] or 0) > 0:
            problems.append("SPILL")
        if (r["sgpr_spill"] or 0) > 0:
            problems.append("sgpr-spill" if args.allow_sgpr_spill else "SPILL")
        uses_scratch = (r["scratch"] or 0) > 0 or r["dynamic_stack"]
        if uses_scratch:
            problems.append("scratch" if args.allow_scratch else "SCRATCH")
        if any(p.isupper() for p in problems):
            failed = True
        cells = dict(r)
        cells["status"] = ",".join(problems) or "ok"
        if r["dynamic_stack"]:
            cells["scratch"] = f"{r['scratch']}+dyn"
        table.append([("-" if cells[c] is None else str(cells[c])) for c in COLUMNS])

    widths = [max(len(c), *(len(row[i]) for row in table)) for i, c in enumerate(COLUMNS)]
    numeric = set(range(2, 9))
    def fmt(row):
        return "  ".join(v.rjust(w) if i in numeric else v.ljust(w)
                         for i, (v, w) in enumerate(zip(row, widths))).rstrip()
    text = "\n".join([fmt(COLUMNS), fmt(["-" * w for w in widths])] + [fmt(row) for row in table]) + "\n"
    if args.output and not failed:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        if args.output and os.path.exists(args.output):
            os.remove(args.output)
        sys.stdout.write(text)

    if failed:
        what = "spills" if args.allow_scratch else "spills or scratch use"
        print(f"amdgpu_resources: FAIL: kernel(s) with {what} (see status column)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
