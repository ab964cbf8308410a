#!/usr/bin/env python3
"""The layer directions of include/hipattn: each folder includes only itself and the folders below it.

    platform < numeric < {tile, paged} < arch < problem < kernels < dispatch;  reference: problem's level
Inside kernels/, the families (unified, paged_decode, dense_prefill, mla_decode) are siblings: each
reads the shared folders (common, the target skeletons cdna and sm90, merge), never another family,
and a shared folder reads no family. Usage: check_layers.py [INCLUDE_DIR] (default: include/ beside
this script's folder). Exit 1 on an include against these rules, naming the file, the line and the rule.
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
SHARED = {"common", "cdna", "sm90", "merge"}  # kernels/ folders every family may read
root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent / "include") / "hipattn"
errors = []
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
            errors.append(f"{where} ({rel[0]} may not include {to[0]})")
        elif rel[0] == to[0] == "kernels" and rel[1] != to[1] and to[1] not in SHARED:
            errors.append(f"{where} (kernels/{rel[1]} may not read the family {to[1]})")
for e in errors:
    print("error:", e)
print(f"check_layers: {len(errors)} errors")
sys.exit(1 if errors else 0)
