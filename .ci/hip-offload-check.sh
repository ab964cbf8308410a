#!/usr/bin/env bash
# .ci/hip-offload-check.sh TOOLCHAIN_DIR TARGETS BINARY...
#
# Fails unless every HIP executable BINARY carries, in its .hip_fatbin section, code objects for
# every AMD target of TARGETS (a CMake list or a space-separated one, e.g. "gfx942;gfx950"). The
# bundles are unpacked with llvm-objdump --offloading and each code object is checked with
# llvm-readelf: its ELF header names the target (e_flags) and its metadata note says
# amdhsa.target: amdgcn-amd-amdhsa--<gfx>. Prints one line per binary and target, and the section's
# size. Nothing is run.
# TOOLCHAIN_DIR: the install of .ci/amd-toolchain.sh (its env.sh names the LLVM tools).
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 TOOLCHAIN_DIR TARGETS BINARY..." >&2; exit 2; }
# shellcheck disable=SC1091
source "$1/env.sh"
read -r -a targets <<<"${2//;/ }"
shift 2

fail() { echo "hip-offload-check: FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for bin in "$@"; do
  [[ -f $bin && -x $bin ]] || fail "$bin: no such executable"
  size=$("$HIPATTN_AMD_READELF" -S -W "$bin" | awk '$2 == ".hip_fatbin" { print $6 }')
  [[ -n $size ]] || fail "$bin: no .hip_fatbin section"
  size=$(( 16#$size ))
  # llvm-objdump writes <input>.<bundle index>.<bundle entry id> next to its input: a link in $tmp.
  rm -rf "$tmp/x" && mkdir "$tmp/x"
  ln -s "$(realpath "$bin")" "$tmp/x/bin"
  "$HIPATTN_AMD_OBJDUMP" --offloading "$tmp/x/bin" >"$tmp/objdump.log" 2>&1 ||
    { cat "$tmp/objdump.log" >&2; fail "$bin: llvm-objdump --offloading failed"; }
  for gfx in "${targets[@]}"; do
    shopt -s nullglob
    cos=("$tmp"/x/bin.*.hipv4-amdgcn-amd-amdhsa--"$gfx")
    shopt -u nullglob
    [[ ${#cos[@]} -gt 0 ]] || fail "$bin: no $gfx code object in its .hip_fatbin"
    kernels=0
    for co in "${cos[@]}"; do
      flags=$("$HIPATTN_AMD_READELF" --file-header "$co" | awk '$1 == "Machine:" { m = $2 } $1 == "Flags:" { $1 = ""; f = $0 } END { print m f }')
      [[ $flags =~ ^EM_AMDGPU\ 0x[0-9a-fA-F]+,\ $gfx(,|$) ]] || fail "$bin: ${co##*/}: ELF header says '$flags', not $gfx"
      "$HIPATTN_AMD_READELF" --notes "$co" >"$tmp/notes.txt"
      grep -q "amdhsa.target: *amdgcn-amd-amdhsa--$gfx\b" "$tmp/notes.txt" ||
        fail "$bin: ${co##*/}: metadata note does not name $gfx"
      kernels=$(( kernels + $(grep -c '\.symbol:' "$tmp/notes.txt" || true) ))
    done
    printf '%-42s %-7s %4d code objects, %5d kernels; e_flags: %s\n' \
      "${bin#"$PWD/"}" "$gfx" "${#cos[@]}" "$kernels" "${flags#EM_AMDGPU }"
  done
  printf '%-42s .hip_fatbin: %d bytes\n' "${bin#"$PWD/"}" "$size"
done
