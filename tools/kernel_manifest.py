#!/usr/bin/env python3
"""kernel_manifest.py: write the kernel manifest of an AMDGPU code object (<code object>.manifest.txt).

Usage:
    kernel_manifest.py [--output FILE] CODE_OBJECT.co...

Every library kernel starts with HIPATTN_KERNEL_MANIFEST (include/hipattn/platform/fixed_string.hpp):
in an AMD device pass a used local constant whose symbol is the kernel's own encoding wrapped as
`_ZZ<encoding>E16hipattn_manifest` (kernel `_Z<encoding>`), holding a NUL-terminated text of
space-separated key=value fields ("kernel=unified_2d target=gfx942 q=bf16 ...").  This script reads
those constants straight from the ELF (section headers, .symtab / .strtab, the bytes at st_value in
their section) and writes, beside each code object, `<code object minus .co>.manifest.txt`: one line
per kernel, `<kernel mangled symbol>\\t<fields>`, sorted.  --output names the file instead (one code
object only).

The consumers (tools/amdgpu_model.py, tools/amdgpu_resources.py, tests/isa/check_isa.py) import this
file and call load(path) -> {kernel symbol: {key: value}}; fields(text) parses one manifest text.

Exit status: 0 on success; 1 on a malformed manifest (a manifest symbol whose kernel is not a FUNC
symbol of the object, a text that is not key=value fields, an unterminated text); 2 on usage or ELF
errors.  Python 3 standard library only.
"""

import argparse
import os
import struct
import sys

MANIFEST_PREFIX = "_ZZ"
MANIFEST_SUFFIX = "E16hipattn_manifest"
SHT_SYMTAB, SHT_NOBITS = 2, 8
STT_FUNC = 2


class ElfError(Exception):
    """The file is not a readable ELF64 little-endian object."""


class ManifestError(Exception):
    """A manifest in the object is malformed."""


def manifest_path(code_object):
    """<code object minus .co>.manifest.txt (the file this script writes)."""
    base = code_object[:-3] if code_object.endswith(".co") else code_object
    return base + ".manifest.txt"


def sibling_manifest(path):
    """The manifest beside a build output named <base>.co / .s / .notes.txt / .manifest.txt."""
    for ext in (".manifest.txt", ".notes.txt", ".co", ".s"):
        if path.endswith(ext):
            return path[: -len(ext)] + ".manifest.txt"
    return path + ".manifest.txt"


def fields(text):
    """{key: value} of one manifest text ("kernel=unified_2d target=gfx942 ..."); raises ValueError on a
    field that is not key=value or on a repeated key."""
    out = {}
    for item in text.split():
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"manifest field {item!r} is not key=value")
        if key in out:
            raise ValueError(f"manifest key {key!r} repeated")
        out[key] = value
    return out


def config_text(manifest):
    """A kernel's configuration: its manifest fields without the kernel role, as text (two kernel roles
    over one configuration give the same text)."""
    return " ".join(f"{k}={v}" for k, v in manifest.items() if k != "kernel")


# The short role names of the attention kernels in tables.
ATTENTION_ROLES = {"unified_2d": "2d", "unified_3d": "3d", "paged_decode": "pd", "dense_prefill": "dense"}


def attention_short_name(m):
    """"2d bf16 same16 d128 1x2x1x16x1 plain staged @gfx942" (non-default offset / page size appended)."""
    name = ATTENTION_ROLES[m["kernel"]] + (" pingpong" if m.get("mainloop") == "pingpong" else "")
    name += f" {m['q']} {m['kv']} d{m['dqk']}" + (f"/{m['dv']}" if m["dv"] != m["dqk"] else "")
    name += f" {m['tile']} {m['variant']} {m['copy']}" + ("" if m["layout"] == "row" else f" {m['layout']}")
    name += ("" if m.get("offset", "64") == "64" else f" off{m['offset']}")
    name += ("" if m.get("page", "0") == "0" else f" page{m['page']}")
    return name + f" @{m['target']}"


def short_name(m):
    """A short display name of a kernel from its manifest fields (the known roles; else the fields)."""
    role = m.get("kernel")
    try:
        if role in ATTENTION_ROLES:
            return attention_short_name(m)
        if role == "mla_decode":
            return f"mla {m['q']} {m['kv']} d{m['dqk']}/{m['dv']} {m['tile']} {m['variant']} v={m['v']} @{m['target']}"
        if role in ("split_kv_reduce", "paged_decode_reduce"):
            return f"{'reduce' if role == 'split_kv_reduce' else 'pd reduce'} {m['q']} d{m['dv']} t{m['threads']}"
        if role == "plan_decode_tasks":
            return f"planner t{m['threads']}"
        if role == "merge_states":
            return f"merge_states {m['in']}->{m['out']}"
        if role == "warp_tile":
            return f"warp_tile {m['q']} d{m['d']} mt{m['mt']} kn{m['kn']}"
    except KeyError:
        pass
    return " ".join(f"{k}={v}" for k, v in m.items())


def load(path):
    """{kernel mangled symbol: {key: value}} of a .manifest.txt (or of the manifest beside a .co, .s or
    .notes.txt). Raises OSError when it is missing, ValueError on a malformed line."""
    result = {}
    with open(sibling_manifest(path), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            symbol, tab, text = line.partition("\t")
            if not tab:
                raise ValueError(f"{path}:{n}: no tab between symbol and fields")
            result[symbol] = fields(text)
    return result


def read_sections(data):
    """The section headers: [(name offset, type, addr, offset, size, link)] of an ELF64 LE file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not an ELF64 little-endian file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shoff == 0 or shoff + shnum * shentsize > len(data):
        raise ElfError("truncated or missing section header table")
    sections = []
    for i in range(shnum):
        name, typ, _, addr, offset, size, link = struct.unpack_from("<IIQQQQI", data, shoff + i * shentsize)
        sections.append((name, typ, addr, offset, size, link))
    return sections, shstrndx


def c_string(data, offset):
    end = data.find(b"\0", offset)
    if end < 0:
        raise ElfError(f"unterminated string at {offset:#x}")
    return data[offset:end].decode("utf-8", errors="replace")


def read_symbols(data, sections):
    """[(name, type, section index, value, size)] of .symtab."""
    symtabs = [s for s in sections if s[1] == SHT_SYMTAB]
    if not symtabs:
        raise ElfError("no .symtab")
    _, _, _, offset, size, link = symtabs[0]
    strtab = sections[link][3]
    symbols = []
    for at in range(offset, offset + size - 23, 24):
        name, info, _, shndx, value, sym_size = struct.unpack_from("<IBBHQQ", data, at)
        if name:
            symbols.append((c_string(data, strtab + name), info & 0xF, shndx, value, sym_size))
    return symbols


def symbol_bytes(data, sections, shndx, value, size):
    """The bytes of a symbol: its section's file bytes at value - sh_addr."""
    if shndx == 0 or shndx >= len(sections):
        raise ManifestError("symbol in no section")
    _, typ, addr, offset, sec_size, _ = sections[shndx]
    if typ == SHT_NOBITS or value < addr or value + size > addr + sec_size:
        raise ManifestError("symbol outside its section's file bytes")
    start = offset + value - addr
    return data[start:start + size]


def manifest_text(raw):
    """The NUL-terminated text of a manifest constant (FixedString: chars, then its length)."""
    end = raw.find(b"\0")
    if end <= 0:
        raise ManifestError("empty or unterminated manifest text")
    text = raw[:end].decode("ascii")
    fields(text)  # raises ValueError when malformed
    return text


def read_manifests(path):
    """{kernel symbol: manifest text} of one code object."""
    with open(path, "rb") as f:
        data = f.read()
    sections, _ = read_sections(data)
    symbols = read_symbols(data, sections)
    functions = {name for name, typ, _, _, _ in symbols if typ == STT_FUNC}
    result = {}
    for name, _, shndx, value, size in symbols:
        if not (name.startswith(MANIFEST_PREFIX) and name.endswith(MANIFEST_SUFFIX)):
            continue
        kernel = "_Z" + name[len(MANIFEST_PREFIX):-len(MANIFEST_SUFFIX)]
        if kernel not in functions:
            raise ManifestError(f"{name}: its kernel {kernel} is not a FUNC symbol of the object")
        try:
            text = manifest_text(symbol_bytes(data, sections, shndx, value, size))
        except (ManifestError, ValueError, UnicodeDecodeError) as e:
            raise ManifestError(f"{name}: {e}")
        if kernel in result and result[kernel] != text:
            raise ManifestError(f"{kernel}: two different manifests")
        result[kernel] = text
    return result


def write_manifest(manifests, output):
    """Write `symbol<TAB>fields` lines, sorted by symbol (through a temporary: no partial file)."""
    tmp = output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for kernel in sorted(manifests):
            f.write(f"{kernel}\t{manifests[kernel]}\n")
    os.replace(tmp, output)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("code_objects", nargs="+", metavar="CODE_OBJECT")
    ap.add_argument("--output", help="the manifest file (one code object only)")
    args = ap.parse_args(argv)
    if args.output and len(args.code_objects) != 1:
        ap.error("--output takes one code object")
    for path in args.code_objects:
        output = args.output or manifest_path(path)
        try:
            manifests = read_manifests(path)
        except (OSError, ElfError, struct.error) as e:
            print(f"kernel_manifest: error: {path}: {e}", file=sys.stderr)
            remove_stale(output)
            return 2
        except ManifestError as e:
            print(f"kernel_manifest: malformed manifest in {path}: {e}", file=sys.stderr)
            remove_stale(output)
            return 1
        write_manifest(manifests, output)
    return 0


def remove_stale(output):
    """A failed run leaves no manifest behind (a build rule would take an old one as up to date)."""
    if os.path.exists(output):
        os.remove(output)


if __name__ == "__main__":
    sys.exit(main())
