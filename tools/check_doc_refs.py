#!/usr/bin/env python3
# tools/check_doc_refs.py: checks the references that comments and docs make: ALGORITHM.md section numbers, repository paths, markdown section names.
"""Prints each broken reference as file:line: what is wrong, and exits 1 if there is any.

(a) "ALGORITHM.md section 5.1", "ALGORITHM.md sections 6 and 13", "ALGORITHM 5.2", "ALGORITHM.md §1-4":
    every number must be a numbered heading of ALGORITHM.md ("## 5. ..." or "### 5.1 ...").
(b) repository paths: hipattn/<...>.hpp (under include/), include/..., tests/..., tools/..., docs/...,
    bench/..., cmake/..., examples/..., .ci/..., and paths relative to include/hipattn (kernels/common/x.hpp);
    a ":line" suffix must be within the file. Names with placeholders (<, {, *, $, ...) are skipped.
(c) section names: README section "X", README, "X", docs/TESTING.md "X", bench/NOTES.md "X": X must
    begin a heading of that markdown file. (d) "NEXT.md item N": docs/NEXT.md has no numbered items.
The folders scanned and the include/hipattn layer folders are read from the tree, so the check
stays valid when files move.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCAN_DIRS = ["include", "tests", "tools", "bench", "docs", "examples", "cmake", ".ci"]
SCAN_EXT = (".hpp", ".h", ".cpp", ".cu", ".hip", ".py", ".sh", ".md", ".txt", ".cmake", ".json", ".in")
PATH_ROOTS = ["include", "tests", "tools", "docs", "bench", "cmake", "examples", ".ci"]

WS = r"(?:[ \t]|\n[ \t]*(?://+|#+|\*+)?[ \t]*)+"  # blanks, also across a line break and a comment leader
WSO = "(?:" + WS + ")?"
NUM = r"\d{1,2}(?:\.\d{1,2})?"
ALG_RE = re.compile(r"ALGORITHM(?:\.md)?(?:'s)?,?(?:" + WS + r"sections?" + WS + r"|" + WSO + r"§" + WSO + r"|" + WS + r")"
                    r"(" + NUM + r"(?:" + WSO + r"(?:-|–|,|/|and|or)" + WSO + NUM + r")*)(?![\d.]\d)")
MD_RE = re.compile(r"(README(?:\.md)?|[\w./-]+\.md)(?:'s)?,?(?:" + WS + r"sections?)?" + WS + r"\"([^\"\n]+)\"")
PATH_CHARS = r"[\w.+-]+(?:/[\w.+<>{}*$-]+)*"


def files():
    out = [f for f in sorted(os.listdir(ROOT)) if f.endswith(".md") or f == "CMakeLists.txt"]
    for d in SCAN_DIRS:
        for base, dirs, names in os.walk(os.path.join(ROOT, d)):
            dirs[:] = sorted(x for x in dirs if not x.startswith("build"))
            for n in sorted(names):
                if n.endswith(SCAN_EXT) or n == "run" or n == "CMakeLists.txt":
                    out.append(os.path.relpath(os.path.join(base, n), ROOT))
    return out


def headings(md):
    try:
        with open(os.path.join(ROOT, md), encoding="utf-8") as f:
            return [re.sub(r"^#+\s*", "", l).strip() for l in f if l.startswith("#")]
    except OSError:
        return None


def algorithm_sections():
    nums = set()
    for h in headings("ALGORITHM.md") or []:
        m = re.match(r"(\d+(?:\.\d+)*)\.?\s", h)
        if m:
            nums.add(m.group(1))
    return nums


def path_regex():
    layer = [d for d in sorted(os.listdir(os.path.join(ROOT, "include", "hipattn")))
             if os.path.isdir(os.path.join(ROOT, "include", "hipattn", d))]
    roots = "|".join(re.escape(r) for r in PATH_ROOTS + ["hipattn"] + layer)
    return re.compile(r"(?<![\w/.$:{}-])((?:" + roots + r")/" + PATH_CHARS + r")(:\d+(?:-\d+)?)?"), set(layer)


def check_path(path, suffix, layer):
    path = path.rstrip(".,;:)'`\"-")
    base = path.rsplit("/", 1)[-1]
    if any(c in path for c in "<>{}*$") or "..." in path or re.search(r"(^|_)X(\.|$)", base):
        return None  # a placeholder
    if base.startswith("hipattn_"):
        return None  # a build output (the project's targets are named hipattn_*)
    first = path.split("/", 1)[0]
    if first == "hipattn":
        cands = [os.path.join("include", path)]
    elif first in layer:
        if not re.search(r"\.(hpp|h)$", path):
            return None  # a folder name in prose ("tile/" as a word, "problem/ no longer ...")
        cands = [os.path.join("include", "hipattn", path)]
    else:
        cands = [path]
    for c in cands:
        full = os.path.join(ROOT, c)
        if not os.path.exists(full) and "." not in os.path.basename(c):
            if first == "cmake":
                return None  # "cmake/<package>" of an installed package, not this folder
            d = os.path.dirname(full)  # a stem naming a source file or a target: tests/isa/unified_kernels
            if os.path.isdir(d) and any(n.startswith(os.path.basename(c) + ".") for n in os.listdir(d)):
                return None
        if os.path.exists(full):
            if suffix and os.path.isfile(full):
                last = int(suffix[1:].split("-")[-1])
                with open(full, encoding="utf-8", errors="replace") as f:
                    n = sum(1 for _ in f)
                if last > n:
                    return f"{path}{suffix}: the file has {n} lines"
            return None
    return f"{path}: no such file or folder"


def main():
    sections = algorithm_sections()
    path_re, layer = path_regex()
    md_heads = {}
    errors = []
    for rel in files():
        if rel == "tools/check_doc_refs.py":
            continue  # its own examples
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        line_of = lambda pos: text.count("\n", 0, pos) + 1
        for m in ALG_RE.finditer(text):
            for a, sep, b in re.findall(r"(" + NUM + r")(?:\s*(-|–)\s*(" + NUM + r"))?", m.group(1)):
                nums = [a] if not sep else [str(i) for i in range(int(float(a)), int(float(b)) + 1)] \
                    if "." not in a + b else [a, b]
                for n in nums:
                    if n not in sections:
                        errors.append(f"{rel}:{line_of(m.start())}: ALGORITHM.md has no section {n}")
        for m in MD_RE.finditer(text):
            md, name = m.group(1), m.group(2).strip()
            md = "README.md" if md in ("README", "README.md") else md
            if md not in md_heads:
                md_heads[md] = headings(md)
            hs = md_heads[md]
            if hs is None or not name or name.startswith(("#", "/")) or len(name) > 80:
                continue  # not a repository markdown file, or not a section name
            if not any(h == name or h.startswith(name) for h in hs):
                errors.append(f"{rel}:{line_of(m.start())}: {md} has no section \"{name}\"")
        for m in re.finditer(r"NEXT(?:\.md)?,? items? \d", text):
            errors.append(f"{rel}:{line_of(m.start())}: docs/NEXT.md has no numbered items (cite CHANGELOG.md or the line)")
        for m in path_re.finditer(text):
            err = check_path(m.group(1), m.group(2), layer)
            if err:
                errors.append(f"{rel}:{line_of(m.start())}: {err}")
    for e in errors:
        print(e)
    print(f"check_doc_refs: {len(errors)} broken reference(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
