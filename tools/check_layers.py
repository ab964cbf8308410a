#!/usr/bin/env python3
"""The layer directions of include/hipattn: each folder includes only itself and the folders below it.

    platform < numeric < {tile, paged} < arch < problem < kernels < dispatch;  reference: problem's level
Usage: check_layers.py [INCLUDE_DIR]   (default: include/ beside this script's folder). Exit 1 on an
include against the order, naming the file, the line and the rule. Two rules of issue 37 are reported
but not yet enforced, while the files that break them are being moved: kernels/ reading problem/, and
one family's kernels/<family>/ reading another's (families are siblings over the shared kernels/
folders: common, cdna, sm90, merge).
"""
import pathlib
import re
import sys

BELOW = {  # folder: the folders it may include besides itself
    "platform": set(), "numeric": {"platform"}, "tile": {"platform", "numeric"},
    "paged": {"platform", "numeric"}, "arch": {"platform", "numeric", "tile"},
    "problem": {"platform", "numeric"}, "reference": {"platform", "numeric", "problem"},
    "kernels": {"platform", "numeric", "tile", "paged", "arch"},
    "dispatch": {"platform", "numeric", "tile", "paged", "arch", "problem", "kernels"},
}
PENDING = {("kernels", "problem")}  # issue 37: reported, not yet an error
# kernels/ folders every family may read (and that may read a family): the parts of every target
# (common), the target-specific skeletons (cdna, sm90) and the merge of partial states (merge).
SHARED = {"common", "cdna", "sm90", "merge"}
root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent / "include") / "hipattn"
errors, pending = [], []
for f in sorted(root.rglob("*.hpp")):
    rel = f.relative_to(root).parts
    if len(rel) == 1:
        continue  # the umbrella headers include every layer
    for n, line in enumerate(f.read_text().splitlines(), 1):
        m = re.match(r'\s*#\s*include\s+"hipattn/([^"]+)"', line)
        if not m:
            continue
        to = m.group(1).split("/")
        where = f"{f.relative_to(root.parent)}:{n}: includes hipattn/{m.group(1)}"
        if to[0] != rel[0] and to[0] not in BELOW[rel[0]]:
            (pending if (rel[0], to[0]) in PENDING else errors).append(f"{where} ({rel[0]} may not include {to[0]})")
        elif rel[0] == to[0] == "kernels" and rel[1] != to[1] and not SHARED & {rel[1], to[1]}:
            pending.append(f"{where} (family {rel[1]} reads family {to[1]})")
for p in pending:
    print("pending (issue 37):", p)
for e in errors:
    print("error:", e)
print(f"check_layers: {len(errors)} errors, {len(pending)} pending")
sys.exit(1 if errors else 0)
