#!/usr/bin/env python3
"""Compare the machine code of two CUDA binaries kernel by kernel, whatever the kernels are named.

    compare_sass.py OLD.sass NEW.sass     (each: `cuobjdump -sass BINARY` output)

Each function's body is normalized (addresses, encodings and symbol names dropped) and the two
binaries' bodies are compared as multisets: a refactoring that renames configuration types but
generates the same code leaves the multisets equal. Prints the counts, how many bodies match, and
the names of the functions on either side whose body has no twin on the other; exit status 1 when
any body differs.
"""
import collections
import re
import sys

FUNC_RE = re.compile(r"^\s*Function : (\S+)")
ADDR_RE = re.compile(r"/\*[0-9a-f]{4,}\*/")
ENC_RE = re.compile(r"/\* 0x[0-9a-f]+ \*/")
SYM_RE = re.compile(r"`\([^)]*\)")


def functions(path):
    """{name: [normalized instruction lines]} of one cuobjdump -sass listing."""
    out, name = {}, None
    for line in open(path, errors="replace"):
        m = FUNC_RE.match(line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        if name is None or "/*" not in line:
            continue
        text = SYM_RE.sub("`(SYM)", ENC_RE.sub("", ADDR_RE.sub("", line)))
        text = " ".join(text.split())
        if text:
            out[name].append(text)
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    old, new = functions(argv[1]), functions(argv[2])
    body = lambda f: "\n".join(f)
    old_bodies = collections.Counter(body(f) for f in old.values())
    new_bodies = collections.Counter(body(f) for f in new.values())
    common = old_bodies & new_bodies
    only_old = old_bodies - new_bodies
    only_new = new_bodies - old_bodies
    print(f"compare_sass: {len(old)} functions before, {len(new)} after; {sum(common.values())} bodies identical; "
          f"{sum(only_old.values())} only before, {sum(only_new.values())} only after")
    for label, side, rest in (("before", old, only_old), ("after", new, only_new)):
        for name, f in sorted(side.items()):
            if rest[body(f)] > 0:
                print(f"  only {label}: {name} ({len(f)} instructions)")
    return 1 if only_old or only_new else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
