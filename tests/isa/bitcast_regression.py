#!/usr/bin/env python3
"""Issue 7 regression: elem_as_float (hipattn/arch/cdna4/lane_bits.hpp) reads the element it names.

Usage:
    bitcast_regression.py --clang CLANG --include DIR --workdir DIR SOURCE [-- CXXFLAGS...]

Compiles SOURCE (tests/isa/bitcast_regression.cpp) with the AMD toolchain's clang for the host
target, twice:
  1. to LLVM IR (-O2 -S -emit-llvm): each hipattn_bcr_helper* function must extract the element
     its name says (`extractelement <N x i32|float> %x, i64 I`, or for a vector passed as an i64
     `lshr i64 %x, 32` / a bare trunc; an IR shape not recognised defers to the executable); what
     hipattn_bcr_raw_e1, the raw __builtin_bit_cast(float, h[1]), extracts is printed (element 0
     while llvm#95673 is open) but not judged;
  2. to a static host executable, which is run and must exit 0. The toolchain's sysroot holds
     libc.a but not the shared libm the dynamic link needs, hence -static; if the link fails anyway,
     that is reported and the IR check alone decides.
Exit status: 0 pass, 1 fail, 2 usage or tool errors.
"""

import argparse
import os
import re
import subprocess
import sys

HELPERS = {  # function: element it must extract
    "hipattn_bcr_helper_e0": 0,
    "hipattn_bcr_helper_e1": 1,
    "hipattn_bcr_helper4_e2": 2,
    "hipattn_bcr_helper4_e3": 3,
}
RAW = "hipattn_bcr_raw_e1"
EXTRACT_RE = re.compile(r"extractelement <\d+ x (?:i32|float)> %[\w.]+, i(?:32|64) (\d+)")
# A 2 x 32-bit vector passed as one 64-bit value: element 1 is `lshr i64 %x, 32`, element 0 a bare trunc.
LSHR32_RE = re.compile(r"lshr i64 %[\w.]+, 32\b")
TRUNC_RE = re.compile(r"trunc i64 %[\w.]+ to i32")


def element_read(body):
    """The element index a one-element read in `body` extracts, or None when the IR shape is unknown."""
    if body is None:
        return None
    got = [int(x) for x in EXTRACT_RE.findall(body)]
    if got:
        return got[0] if len(got) == 1 else None
    if LSHR32_RE.search(body):
        return 1
    if TRUNC_RE.search(body):
        return 0
    return None


def functions(ir):
    """{name: body} of the `define`s in an LLVM IR module."""
    out = {}
    for m in re.finditer(r"^define [^@]*@([\w.$]+)\(.*?^}", ir, re.M | re.S):
        out[m.group(1)] = m.group(0)
    return out


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True)


def main(argv):
    if "--" in argv:
        i = argv.index("--")
        argv, cxxflags = argv[:i], argv[i + 1:]
    else:
        cxxflags = []
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clang", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("source")
    args = ap.parse_args(argv)
    os.makedirs(args.workdir, exist_ok=True)
    base = [args.clang, "-x", "c++", "-std=c++20", "-O2", "-Wall", "-Wextra", "-Werror",
            "-Wno-unused-command-line-argument", *cxxflags, "-I" + args.include, args.source]
    failures = []

    # 1. LLVM IR.
    ll = os.path.join(args.workdir, "bitcast_regression.ll")
    p = run(base + ["-S", "-emit-llvm", "-o", ll])
    if p.returncode != 0:
        print(p.stdout + p.stderr, file=sys.stderr)
        print("bitcast_regression: error: the IR compile failed", file=sys.stderr)
        return 2
    with open(ll, encoding="utf-8") as f:
        funcs = functions(f.read())
    unknown = []
    for name, want in list(HELPERS.items()) + [(RAW, None)]:
        got = element_read(funcs.get(name))
        if want is None:
            print(f"IR  {name}: reads element {'?' if got is None else got} "
                  f"(raw __builtin_bit_cast(float, h[1]); reported, not judged)")
        elif got is None:
            print(f"IR  {name}: cannot tell which element from the IR (the executable decides)")
            unknown.append(name)
        elif got == want:
            print(f"IR  {name}: reads element {want}  ok")
        else:
            print(f"IR  {name}: reads element {got}, want {want}  FAIL")
            failures.append(f"IR of {name}")

    # 2. Host executable.
    exe = os.path.join(args.workdir, "bitcast_regression")
    p = run(base + ["-static", "-o", exe])
    if p.returncode != 0:
        tail = (p.stdout + p.stderr).strip().splitlines()[-3:]
        print("note: no host executable (link failed); the IR check alone decides:\n  " + "\n  ".join(tail))
        if unknown:
            failures.append("no executable, and the IR of " + ", ".join(unknown) + " cannot be read")
    else:
        p = run([exe])
        print(p.stdout, end="")
        if p.returncode != 0:
            print(p.stderr, end="", file=sys.stderr)
            failures.append(f"{exe} exited {p.returncode}")

    if failures:
        print("bitcast_regression: FAIL: " + "; ".join(failures), file=sys.stderr)
        return 1
    print("bitcast_regression: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
