#!/usr/bin/env bash
# .ci/amd-toolchain.sh -- install a ROCm-free AMDGPU device toolchain for hipattn.
#
#   bash .ci/amd-toolchain.sh [--force] [DIR]
#
# DIR defaults to $HIPATTN_AMD_TOOLCHAIN_DIR, else <repo>/.cache/amd-toolchain.
#
# What it installs (Debian 12 "bookworm" host, amd64; root is only needed to
# `apt-get install patchelf` from the system's sources when it is missing):
#   * clang/lld/llvm 21 from Debian trixie-backports, with their runtime
#     libraries (glibc, libstdc++, libLLVM, ...) from trixie;
#   * a small trixie "sysroot" (libc6-dev, libstdc++-N-dev, libgcc-N-dev,
#     linux-libc-dev) so HIP's host-side #includes (<cmath>, ...) never depend
#     on whatever g++ the host has or lacks;
#   * the HIP headers (libamdhip64-dev), rocPRIM (librocprim-dev) and the AMD
#     device bitcode libraries (rocm-device-libs-21) from Debian sid.
# That is enough to compile HIP *device* code for gfx942 / gfx950 into code
# objects (.co) and inspect them.  No ROCm, no GPU.
# For the full HIP build (host + device code, linked executables; CMake's HIP
# language, see DIR/hip-toolchain.cmake) it adds:
#   * clang-offload-bundler (from clang-tools-21; only that binary is kept),
#     which clang runs to bundle the code objects of all targets into the host
#     object, and the x86_64 compiler-rt builtins (from libclang-rt-21-dev;
#     only those are kept), which hip-lang's CMake package links;
#   * the HIP runtime library libamdhip64.so.6 (libamdhip64-6, sid), to link
#     against -- not its own dependencies (HSA runtime, comgr): the binaries
#     are linked, never run here;
#   * GoogleTest and Google Benchmark (libgtest-dev, libgmock-dev,
#     libbenchmark-dev, trixie), so that tests and benchmarks link against
#     libraries built for the same sysroot.
# The prefix has lib/x86_64-linux-gnu -> usr/lib/x86_64-linux-gnu and
# lib64 -> usr/lib64 (glibc's linker scripts name /lib/..., /lib64/...), and
# usr/lib/cmake/hip-lang points at Debian's hip-lang package (CMake 3.25
# looks for <rocm root>/lib/cmake/hip-lang, Debian installs it under
# lib/x86_64-linux-gnu/cmake).
#
# How:
#   * A PRIVATE apt configuration (APT_CONFIG, own sources/preferences/state/
#     cache under DIR/apt) is used for `apt-get update` and `apt-get download`.
#     The system's apt sources and state are never modified; the mirror is the
#     one the system already uses (read from /etc/apt/sources.list.d/
#     debian.sources or /etc/apt/sources.list; override with
#     HIPATTN_AMD_DEBIAN_MIRROR=http://host/debian).
#   * Packages are unpacked with `dpkg -x` into DIR/prefix (no dpkg database).
#   * Trixie binaries need trixie's glibc: every ELF executable under
#     prefix/usr/lib/llvm-21/bin gets the prefix's dynamic loader as
#     interpreter and the prefix's library dir as DT_RPATH (patchelf, from the
#     system apt); every library in the prefix gets DT_RPATH=$ORIGIN, so no
#     library is ever picked up from the host.
#   * Output: DIR/env.sh (bash) and DIR/env.cmake (CMake) describing the tools,
#     and DIR/hip-toolchain.cmake, a CMake toolchain file for the HIP build:
#       cmake -S . -B build-hip -G Ninja -DHIPATTN_BACKEND=hip \
#             --toolchain DIR/hip-toolchain.cmake
#
# Environment knobs:
#   HIPATTN_AMD_TOOLCHAIN_DIR   default install dir
#   HIPATTN_AMD_DEBIAN_MIRROR   Debian mirror URI (default: the system's)
#   HIPATTN_AMD_APT_KEYRING     initial keyring to verify the suites with
#                               (default /usr/share/keyrings/debian-archive-keyring.gpg)
#   HIPATTN_AMD_ALLOW_UNSIGNED  =1: if no keyring can verify trixie/sid, fall
#                               back to [trusted=yes] on the PRIVATE source
#                               list (last resort; off by default)
#   HIPATTN_AMD_KEEP_DEBS       =1: keep the downloaded .deb files in DIR/debs
set -euo pipefail

# Bump when the layout / package set changes so that cached installs get rebuilt.
LAYOUT_VERSION=2
LLVM_MAJOR=21

msg()  { printf '[amd-toolchain] %s\n' "$*" >&2; }
die()  { printf '[amd-toolchain] ERROR: %s\n' "$*" >&2; exit 1; }
warn() { printf '[amd-toolchain] WARNING: %s\n' "$*" >&2; }

# ----------------------------------------------------------------------------
# Arguments
# ----------------------------------------------------------------------------
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
FORCE=0
DIR=""
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) die "unknown option: $arg" ;;
    *) [[ -z "$DIR" ]] || die "more than one DIR given"; DIR=$arg ;;
  esac
done
DIR=${DIR:-${HIPATTN_AMD_TOOLCHAIN_DIR:-$REPO_ROOT/.cache/amd-toolchain}}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
# Paths end up in compiler flags (space-separated in env.sh) and in ELF
# interpreter/rpath fields: keep them simple.
[[ "$DIR" =~ ^[A-Za-z0-9_./+-]+$ ]] || die "DIR must not contain spaces or special characters: '$DIR'"

PREFIX=$DIR/prefix
LIBDIR=$PREFIX/usr/lib/x86_64-linux-gnu
LLVM_BIN=$PREFIX/usr/lib/llvm-$LLVM_MAJOR/bin
RESOURCE_DIR=$PREFIX/usr/lib/llvm-$LLVM_MAJOR/lib/clang/$LLVM_MAJOR
BITCODE_DIR=$RESOURCE_DIR/amdgcn/bitcode
ENV_SH=$DIR/env.sh
ENV_CMAKE=$DIR/env.cmake

# One installer per DIR at a time.
exec 9>"$DIR/.lock"
flock 9 || die "cannot lock $DIR/.lock"

# ----------------------------------------------------------------------------
# Fast path: already installed and working.
# ----------------------------------------------------------------------------
print_versions() {  # needs env.sh variables in the environment
  msg "clang:    $("$HIPATTN_AMD_CLANG" --version | awk 'NR == 1')"
  msg "HIP:      headers $HIPATTN_AMD_HIP_VERSION (package libamdhip64-dev $HIPATTN_AMD_HIP_PKG_VERSION)"
  msg "rocPRIM:  headers $HIPATTN_AMD_ROCPRIM_VERSION (package librocprim-dev $HIPATTN_AMD_ROCPRIM_PKG_VERSION)"
  msg "devlibs:  rocm-device-libs-$LLVM_MAJOR $HIPATTN_AMD_DEVICE_LIBS_PKG_VERSION"
  msg "runtime:  libamdhip64.so (package libamdhip64-$HIPATTN_AMD_HIP_SOVERSION $HIPATTN_AMD_HIP_RUNTIME_PKG_VERSION), link only"
}

if [[ $FORCE == 0 && -f "$ENV_SH" ]]; then
  if ( set +u
       # shellcheck disable=SC1090
       source "$ENV_SH"
       [[ "${HIPATTN_AMD_TOOLCHAIN_LAYOUT:-}" == "$LAYOUT_VERSION" ]] &&
       "$HIPATTN_AMD_CLANG" --version >/dev/null 2>&1 &&
       "$HIPATTN_AMD_READELF" --version >/dev/null 2>&1 &&
       "$HIPATTN_AMD_OFFLOAD_BUNDLER" --version >/dev/null 2>&1 &&
       [[ -f "$HIPATTN_AMD_HIP_TOOLCHAIN_FILE" ]] &&
       "$HIPATTN_AMD_LLD" --version >/dev/null 2>&1 ) ; then
    # shellcheck disable=SC1090
    source "$ENV_SH"
    msg "already installed in $DIR (use --force to reinstall)"
    print_versions
    exit 0
  fi
  msg "existing install in $DIR is stale or broken; reinstalling"
fi
HIP_TOOLCHAIN=$DIR/hip-toolchain.cmake
rm -f "$ENV_SH" "$ENV_CMAKE" "$HIP_TOOLCHAIN"   # env.sh is (re)written only after the self-test passes

# ----------------------------------------------------------------------------
# Host checks
# ----------------------------------------------------------------------------
command -v apt-get >/dev/null && command -v dpkg >/dev/null || die "apt-get/dpkg not found: a Debian host is required"
[[ $(dpkg --print-architecture) == amd64 ]] || die "only amd64 hosts are supported (got $(dpkg --print-architecture))"

if ! command -v patchelf >/dev/null; then
  [[ $(id -u) == 0 ]] || die "patchelf is missing: install it (apt-get install patchelf) or run this script as root"
  msg "installing patchelf from the system's apt sources"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends patchelf >/dev/null 2>&1 || {
    DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends patchelf >/dev/null
  } || die "could not install patchelf with the system apt"
fi

# ----------------------------------------------------------------------------
# Mirror: the one the system already uses for its main (non-security) suite.
# ----------------------------------------------------------------------------
detect_mirror() {
  local f=/etc/apt/sources.list.d/debian.sources uri=""
  if [[ -r $f ]]; then
    # deb822: stanzas separated by blank lines; take the first URI of the
    # first "Types: deb" stanza that is not a security archive.
    uri=$(awk '
      function flush() { if (types ~ /(^| )deb( |$)/ && uris != "" && uris !~ /security/ && out == "") { split(uris, u, " "); out = u[1] } types=""; uris="" }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      tolower($1) == "types:" { $1=""; types=$0 }
      tolower($1) == "uris:"  { $1=""; uris=$0; sub(/^ +/, "", uris) }
      END { flush(); print out }' "$f")
  fi
  if [[ -z $uri && -r /etc/apt/sources.list ]]; then
    uri=$(awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                             if ($i !~ /security/) { print $i; exit } }' /etc/apt/sources.list)
  fi
  printf '%s' "${uri%/}"
}
MIRROR=${HIPATTN_AMD_DEBIAN_MIRROR:-$(detect_mirror)}
[[ -n $MIRROR ]] || die "could not find a Debian mirror in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list; set HIPATTN_AMD_DEBIAN_MIRROR=http://<host>/debian"
msg "install dir: $DIR"
msg "mirror:      $MIRROR"

# ----------------------------------------------------------------------------
# Private apt configuration.  APT_CONFIG is read before /etc/apt/apt.conf.d,
# and it points Dir::Etc::Parts at an empty dir, so none of the system's apt
# hooks (appstream, packagekit, ...) or pins apply.  The system's network
# settings (proxy, Check-Valid-Until, ...) are carried over.
# ----------------------------------------------------------------------------
APT_DIR=$DIR/apt
rm -rf "$APT_DIR"
mkdir -p "$APT_DIR"/{empty,state/lists/partial,cache/archives/partial,keyring}
: >"$APT_DIR/state/status"
{
  echo "Dir::Etc::Parts \"$APT_DIR/empty\";"
  echo "Dir::Etc::Main \"$APT_DIR/empty/none\";"
  echo "Dir::Etc::SourceList \"$APT_DIR/sources.list\";"
  echo "Dir::Etc::SourceParts \"$APT_DIR/empty\";"
  echo "Dir::Etc::Preferences \"$APT_DIR/preferences\";"
  echo "Dir::Etc::PreferencesParts \"$APT_DIR/empty\";"
  echo "Dir::State \"$APT_DIR/state\";"
  echo "Dir::State::Lists \"$APT_DIR/state/lists\";"
  echo "Dir::State::status \"$APT_DIR/state/status\";"
  echo "Dir::Cache \"$APT_DIR/cache\";"
  echo "Dir::Cache::archives \"$APT_DIR/cache/archives\";"
  echo 'APT::Architecture "amd64";'
  echo 'APT::Architectures { "amd64"; };'
  echo 'APT::Sandbox::User "root";'   # downloads land in root-owned dirs
  echo 'Acquire::Languages "none";'
  echo 'Acquire::Retries "3";'
  # from the system config: proxies/HTTP settings and date checks (a host
  # whose apt is set up for a snapshot mirror disables Valid-Until checks)
  apt-config dump 2>/dev/null |
    grep -iE '^Acquire::((http|https|ftp)::|Check-Valid-Until |Check-Date |Max-FutureTime |ForceIPv[46] )' || true
} >"$APT_DIR/apt.conf"

# Candidates: trixie (500) > trixie-backports (100) > sid (50).  So the
# LLVM 21 packages (absent from trixie) come from trixie-backports, their
# library dependencies from trixie, and sid is only used where asked for
# explicitly (name/sid).
cat >"$APT_DIR/preferences" <<'EOF'
Package: *
Pin: release n=trixie-backports
Pin-Priority: 100

Package: *
Pin: release n=sid
Pin-Priority: 50
EOF

papt()       { APT_CONFIG=$APT_DIR/apt.conf apt-get -q "$@"; }
papt_cache() { APT_CONFIG=$APT_DIR/apt.conf apt-cache "$@"; }

# write_sources OPTIONS SUITE...  (OPTIONS goes inside [...] of each line)
write_sources() {
  local opts=$1; shift
  : >"$APT_DIR/sources.list"
  for s in "$@"; do echo "deb [$opts] $MIRROR $s main" >>"$APT_DIR/sources.list"; done
}
# private_update KEYRING SUITE...
private_update() {
  local keyring=$1; shift
  write_sources "signed-by=$keyring" "$@"
  papt update --error-on=any >"$APT_DIR/update.log" 2>&1
}

SUITES=(trixie trixie-backports sid)
KEYRING=${HIPATTN_AMD_APT_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
[[ -r $KEYRING ]] || die "keyring $KEYRING not found (install debian-archive-keyring)"

msg "apt-get update (private state: $APT_DIR) for: ${SUITES[*]}"
if ! private_update "$KEYRING" "${SUITES[@]}"; then
  sed 's/^/    /' "$APT_DIR/update.log" >&2
  # Signature trouble is the likely cause (old keyring without trixie/sid
  # keys).  Walk the chain of trust: the current keyring verifies some suite,
  # whose (signed) debian-archive-keyring package verifies the next one.
  warn "private apt-get update failed with $KEYRING; trying newer debian-archive-keyring packages"
  for s in trixie sid; do
    private_update "$KEYRING" "$s" || { msg "  cannot verify $s with $KEYRING"; continue; }
    rm -rf "$APT_DIR/keyring/$s" && mkdir -p "$APT_DIR/keyring/$s"
    ( cd "$APT_DIR/keyring/$s" && papt download "debian-archive-keyring/$s" >/dev/null 2>&1 ) || continue
    dpkg -x "$APT_DIR/keyring/$s"/debian-archive-keyring_*.deb "$APT_DIR/keyring/$s/root"
    for k in debian-archive-keyring.pgp debian-archive-keyring.gpg; do
      if [[ -f $APT_DIR/keyring/$s/root/usr/share/keyrings/$k ]]; then
        cp "$APT_DIR/keyring/$s/root/usr/share/keyrings/$k" "$APT_DIR/keyring/debian-archive-keyring-$s.gpg"
        KEYRING=$APT_DIR/keyring/debian-archive-keyring-$s.gpg
        msg "  now using the debian-archive-keyring from $s"
        break
      fi
    done
  done
  if ! private_update "$KEYRING" "${SUITES[@]}"; then
    sed 's/^/    /' "$APT_DIR/update.log" >&2
    if [[ ${HIPATTN_AMD_ALLOW_UNSIGNED:-0} == 1 ]]; then
      # LAST RESORT, explicitly requested: skip signature checks, on the
      # PRIVATE source list only.  The system's sources are untouched.
      warn "HIPATTN_AMD_ALLOW_UNSIGNED=1: using [trusted=yes] on the private source list"
      write_sources "trusted=yes" "${SUITES[@]}"
      papt update >"$APT_DIR/update.log" 2>&1 || { cat "$APT_DIR/update.log" >&2; die "apt-get update failed even unsigned"; }
    else
      die "cannot fetch/verify ${SUITES[*]} from $MIRROR (see log above). Set HIPATTN_AMD_APT_KEYRING to a keyring with the trixie/sid keys, or HIPATTN_AMD_ALLOW_UNSIGNED=1 as a last resort."
    fi
  fi
fi

# ----------------------------------------------------------------------------
# Package selection.  No versions are pinned: names are resolved against the
# current indices (sid moves).
# ----------------------------------------------------------------------------
# apt-cache depends --important: only Depends/Pre-Depends; print package names.
deps_of() { papt_cache depends --important "$@" | awk '/^ / && $1 ~ /Depends:$/ && $2 !~ /^</ { print $2 }' | sort -u; }
have_pkg() { [[ -n $(papt_cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" { print $2 }') ]]; }

# 1. the tools themselves (trixie-backports)
TOOL_PKGS=("clang-$LLVM_MAJOR" "lld-$LLVM_MAJOR" "llvm-$LLVM_MAJOR" "libclang-common-$LLVM_MAJOR-dev")
for p in "${TOOL_PKGS[@]}"; do have_pkg "$p" || die "package $p not found in trixie-backports at $MIRROR"; done
TOOL_DEPS=$(deps_of "${TOOL_PKGS[@]}")

# 2. runtime shared libraries: the library dependencies of the tools, and
#    theirs, recursively.  Only library packages are kept (lib*, zlib1g);
#    libclang1-N (the libclang C API) is not used by the driver.
is_runtime_lib() { [[ $1 =~ ^(lib|zlib) && ! $1 =~ -(dev|common|data|doc|bin)$ && ! $1 =~ ^libclang1- ]]; }
seeds=()
for p in $TOOL_DEPS; do is_runtime_lib "$p" && seeds+=("$p"); done
RUNTIME_PKGS=()
for p in $(papt_cache depends --important --recurse "${seeds[@]}" | awk '/^[^ <]/' | sort -u); do
  is_runtime_lib "$p" && RUNTIME_PKGS+=("$p")
done

# 3. sysroot for HIP's host-side headers: the C/C++ development packages
#    clang-N itself depends on (libstdc++-14-dev etc. in trixie), plus kernel
#    headers.
SYSROOT_PKGS=(linux-libc-dev)
for p in $(deps_of clang-$LLVM_MAJOR); do
  [[ $p =~ ^(libc6-dev|libstdc\+\+-[0-9]+-dev|libgcc-[0-9]+-dev)$ ]] && SYSROOT_PKGS+=("$p")
done
[[ ${#SYSROOT_PKGS[@]} -ge 4 ]] || die "could not determine the libc/libstdc++/libgcc dev packages from clang-$LLVM_MAJOR's dependencies"

# 4. HIP headers, rocPRIM and device bitcode libraries (sid)
SID_PKGS=(libamdhip64-dev librocprim-dev "rocm-device-libs-$LLVM_MAJOR")
for p in "${SID_PKGS[@]}"; do
  [[ $(papt_cache policy "$p") == *" sid/main "* ]] || die "package $p not found in sid at $MIRROR"
done

# 5. the full HIP build (see the header): clang-offload-bundler and the
#    compiler-rt builtins (trixie-backports, pruned to those files after
#    unpacking, so no dependency of theirs is needed), the HIP runtime library
#    of the same version as libamdhip64-dev (sid), GoogleTest / Google
#    Benchmark for the trixie sysroot (trixie) with benchmark's shared library.
HIPBUILD_PKGS=("clang-tools-$LLVM_MAJOR" "libclang-rt-$LLVM_MAJOR-dev" libgtest-dev libgmock-dev libbenchmark-dev)
for p in $(deps_of libbenchmark-dev); do [[ $p =~ ^libbenchmark[0-9] ]] && HIPBUILD_PKGS+=("$p"); done
for p in "${HIPBUILD_PKGS[@]}"; do have_pkg "$p" || die "package $p not found at $MIRROR"; done
HIP_RUNTIME_PKG=$(deps_of libamdhip64-dev/sid | grep -E '^libamdhip64-[0-9]+$' | head -n1 || true)
[[ -n $HIP_RUNTIME_PKG ]] || die "could not find the HIP runtime package among libamdhip64-dev's (sid) dependencies"
SID_PKGS+=("$HIP_RUNTIME_PKG")

# ----------------------------------------------------------------------------
# Download and unpack
# ----------------------------------------------------------------------------
DEBS=$DIR/debs
rm -rf "$DEBS" "$PREFIX"
mkdir -p "$DEBS" "$PREFIX"
ALL=("${TOOL_PKGS[@]}" "${RUNTIME_PKGS[@]}" "${SYSROOT_PKGS[@]}" "${HIPBUILD_PKGS[@]}")
for p in "${SID_PKGS[@]}"; do ALL+=("$p/sid"); done
msg "downloading ${#ALL[@]} packages: ${ALL[*]}"
( cd "$DEBS" && papt download "${ALL[@]}" >"$APT_DIR/download.log" 2>&1 ) ||
  { cat "$APT_DIR/download.log" >&2; die "apt-get download failed"; }

msg "unpacking into $PREFIX"
: >"$DIR/packages.txt"
# Packages of which only a few files are kept: package name -> paths (globs)
# relative to the package root.  They are unpacked aside and those copied.
declare -A KEEP_ONLY=(
  ["clang-tools-$LLVM_MAJOR"]="usr/lib/llvm-$LLVM_MAJOR/bin/clang-offload-bundler"
  ["libclang-rt-$LLVM_MAJOR-dev"]="usr/lib/llvm-$LLVM_MAJOR/lib/clang/$LLVM_MAJOR/lib/linux/libclang_rt.builtins-x86_64.a usr/lib/llvm-$LLVM_MAJOR/lib/clang/$LLVM_MAJOR/lib/linux/clang_rt.crt*-x86_64.o"
)
for deb in "$DEBS"/*.deb; do
  pkg=$(dpkg-deb --show --showformat='${Package}' "$deb")
  if [[ -n ${KEEP_ONLY[$pkg]:-} ]]; then
    rm -rf "$DIR/partial" && mkdir -p "$DIR/partial"
    dpkg -x "$deb" "$DIR/partial" || die "dpkg -x $deb failed"
    read -r -a globs <<<"${KEEP_ONLY[$pkg]}"
    for g in "${globs[@]}"; do
      found=0
      for f in "$DIR/partial"/$g; do
        [[ -e $f ]] || continue
        mkdir -p "$PREFIX/$(dirname "${f#"$DIR/partial/"}")"
        cp -a "$f" "$PREFIX/${f#"$DIR/partial/"}"; found=1
      done
      [[ $found == 1 ]] || die "$pkg has no $g"
    done
    rm -rf "$DIR/partial"
  else
    dpkg -x "$deb" "$PREFIX" || die "dpkg -x $deb failed"
  fi
  dpkg-deb --show --showformat='${Package} ${Version}\n' "$deb" >>"$DIR/packages.txt"
done
sort -o "$DIR/packages.txt" "$DIR/packages.txt"
rm -rf "$PREFIX"/usr/share/{doc,man,info,lintian,bug}

# Absolute symlinks would point into the host; re-root them in the prefix.
while IFS= read -r -d '' link; do
  ln -sfn "$PREFIX$(readlink "$link")" "$link"
done < <(find "$PREFIX" -type l -lname '/*' -print0)

# glibc's linker scripts (usr/lib/x86_64-linux-gnu/libc.so, libm.so) name
# /lib/x86_64-linux-gnu/... and /lib64/ld-linux-x86-64.so.2, which the linker
# looks up inside the sysroot: link those two dirs as a merged-/usr system
# has them.  Not the whole of /lib: clang would then find the GCC installation
# as <prefix>/lib/gcc/..., and its header paths (lib/gcc/.../../../../include)
# would be wrong once normalized, in depfiles too (every build rebuilds all).
mkdir -p "$PREFIX/lib"
for d in lib/x86_64-linux-gnu lib64; do
  [[ -e $PREFIX/usr/$d ]] || die "$PREFIX/usr/$d missing"
  if [[ -d $PREFIX/$d && ! -L $PREFIX/$d ]]; then
    cp -a "$PREFIX/$d/." "$PREFIX/usr/$d/" && rm -rf "${PREFIX:?}/$d"
  fi
done
ln -sfn ../usr/lib/x86_64-linux-gnu "$PREFIX/lib/x86_64-linux-gnu"
ln -sfn usr/lib64 "$PREFIX/lib64"
# CMake 3.25 looks for <rocm root>/lib/cmake/hip-lang/hip-lang-config.cmake;
# Debian has it in the multiarch dir.  With the rocm root <prefix>/usr, the
# package's own relative paths (../../../../lib/x86_64-linux-gnu/libamdhip64...)
# land on <prefix>/lib/x86_64-linux-gnu, the link to usr/lib/x86_64-linux-gnu.
[[ -f $LIBDIR/cmake/hip-lang/hip-lang-config.cmake ]] || die "libamdhip64-dev has no cmake/hip-lang package"
mkdir -p "$PREFIX/usr/lib/cmake"
ln -sfn ../x86_64-linux-gnu/cmake/hip-lang "$PREFIX/usr/lib/cmake/hip-lang"
# The host linker: clang looks for `ld` in its own dir, then in the GCC installation's binutils
# dir (<prefix>/usr/x86_64-linux-gnu/bin, empty: no binutils here), then on the PATH -- the
# host's GNU ld, for the host's glibc.  lld in the binutils dir makes every host link made with
# --sysroot=<prefix> use lld, -fuse-ld or not.
mkdir -p "$PREFIX/usr/x86_64-linux-gnu/bin"
ln -sfn "../../lib/llvm-$LLVM_MAJOR/bin/ld.lld" "$PREFIX/usr/x86_64-linux-gnu/bin/ld"

# ----------------------------------------------------------------------------
# Make the trixie binaries run on the bookworm host.
# ----------------------------------------------------------------------------
LDSO=$LIBDIR/ld-linux-x86-64.so.2
[[ -x $LDSO ]] || die "trixie dynamic loader missing at $LDSO"
is_elf() { [[ -f $1 && ! -L $1 && $(head -c4 "$1" | od -An -c | tr -d ' ') == '177ELF' ]]; }

msg "patching ELF interpreter/rpath (patchelf $(patchelf --version | awk '{print $2}'))"
# Libraries: DT_RPATH=$ORIGIN so their own dependencies resolve next to them
# (DT_RPATH, unlike DT_RUNPATH, is searched before LD_LIBRARY_PATH).  The
# loader and libc are left alone.
while IFS= read -r -d '' f; do
  case ${f##*/} in ld-linux-x86-64.so.2|libc.so.6) continue ;; esac
  is_elf "$f" || continue
  patchelf --force-rpath --set-rpath '$ORIGIN' "$f"
done < <(find "$LIBDIR" -maxdepth 1 -type f -name '*.so*' -print0)
# Executables: the prefix's glibc loader + the prefix's library dir.
TOOLS=()
for f in "$LLVM_BIN"/*; do
  is_elf "$f" || continue
  patchelf --set-interpreter "$LDSO" --force-rpath --set-rpath "$LIBDIR" "$f"
  TOOLS+=("$f")
done

# Every dependency of every tool must resolve inside the prefix.
bad=0
for f in "${TOOLS[@]}"; do
  out=$("$LDSO" --list "$f" 2>&1) || { msg "cannot load ${f##*/}: $out"; bad=1; continue; }
  leaks=$(awk -v p="$PREFIX/" '/=>/ { if ($3 == "not" || index($3, p) != 1) print "    " $0 }' <<<"$out")
  [[ -z $leaks ]] || { msg "${f##*/} resolves libraries outside the prefix:"; echo "$leaks" >&2; bad=1; }
done
[[ $bad == 0 ]] || die "some toolchain binaries have unresolved/host libraries (see above); a runtime library package is missing"

# ----------------------------------------------------------------------------
# Describe the toolchain
# ----------------------------------------------------------------------------
CLANG=$LLVM_BIN/clang++
LLD=$LLVM_BIN/ld.lld
READELF=$LLVM_BIN/llvm-readelf
OBJDUMP=$LLVM_BIN/llvm-objdump
CXXFILT=$LLVM_BIN/llvm-cxxfilt
OBJCOPY=$LLVM_BIN/llvm-objcopy
BUNDLER=$LLVM_BIN/clang-offload-bundler
HIP_INCLUDE=$PREFIX/usr/include
ROCPRIM_INCLUDE=$PREFIX/usr/include
HIP_SOVERSION=${HIP_RUNTIME_PKG#libamdhip64-}
for f in "$CLANG" "$LLD" "$READELF" "$OBJDUMP" "$OBJCOPY" "$BUNDLER" "$HIP_INCLUDE/hip/hip_runtime.h" \
         "$ROCPRIM_INCLUDE/rocprim/rocprim.hpp" "$BITCODE_DIR/ocml.bc" \
         "$RESOURCE_DIR/include/__clang_hip_runtime_wrapper.h" \
         "$RESOURCE_DIR/lib/linux/libclang_rt.builtins-x86_64.a" \
         "$LIBDIR/libamdhip64.so.$HIP_SOVERSION" "$PREFIX/usr/lib/cmake/hip-lang/hip-lang-config.cmake" \
         "$LIBDIR/cmake/GTest/GTestConfig.cmake" "$LIBDIR/cmake/benchmark/benchmarkConfig.cmake"; do
  [[ -e $f ]] || die "expected file missing after unpacking: $f"
done
# Flags beyond `-x hip --offload-arch=gfxNNN` (and --cuda-device-only
# --no-gpu-bundle-output for bare code objects):
#   --sysroot      : host headers (glibc, libstdc++) from the trixie sysroot,
#                    never from the host's /usr/include
#   --rocm-path    : HIP headers (<prefix>/usr/include/hip, share/hip/version)
#   --rocm-device-lib-path : ocml/ockl/oclc_*.bc
#   --ld-path      : the device linker (lld)
# clang finds its resource dir (<prefix>/usr/lib/llvm-21/lib/clang/21, with
# __clang_hip_runtime_wrapper.h) relative to its own binary.
CXXFLAGS=(--sysroot="$PREFIX" --rocm-path="$PREFIX/usr" --rocm-device-lib-path="$BITCODE_DIR" --ld-path="$LLD")

hdr_define() { awk -v n="$2" '$1 == "#define" && $2 == n { $1 = $2 = ""; sub(/^ +/, ""); print; exit }' "$1"; }
HIP_VERSION="$(hdr_define "$HIP_INCLUDE/hip/hip_version.h" HIP_VERSION_MAJOR).$(hdr_define "$HIP_INCLUDE/hip/hip_version.h" HIP_VERSION_MINOR).$(hdr_define "$HIP_INCLUDE/hip/hip_version.h" HIP_VERSION_PATCH)"
RP=$ROCPRIM_INCLUDE/rocprim/rocprim_version.hpp
ROCPRIM_VERSION="$(hdr_define "$RP" ROCPRIM_VERSION_MAJOR).$(hdr_define "$RP" ROCPRIM_VERSION_MINOR).$(hdr_define "$RP" ROCPRIM_VERSION_PATCH)"
pkg_version() { awk -v p="$1" '$1 == p { print $2 }' "$DIR/packages.txt"; }

# ----------------------------------------------------------------------------
# Self-test: MFMA kernels for gfx942 and gfx950, checked with readelf/objdump.
# ----------------------------------------------------------------------------
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/selftest.hip" <<'EOF'
#include <hip/hip_runtime.h>
#if !defined(__gfx950__)
// rocPRIM 6.4 does not support gfx950 (#error in rocprim/intrinsics/atomic.hpp)
#include <rocprim/rocprim.hpp>
#endif
typedef float floatx16 __attribute__((ext_vector_type(16)));
#if defined(__gfx950__)
// gfx950: v_mfma_f32_32x32x16_bf16, operands are 8 x __bf16
typedef __bf16 bf16x8 __attribute__((ext_vector_type(8)));
__global__ void selftest_mfma(const bf16x8* a, const bf16x8* b, floatx16* c) {
  const int i = threadIdx.x;
  c[i] = __builtin_amdgcn_mfma_f32_32x32x16_bf16(a[i], b[i], c[i], 0, 0, 0);
}
#else
// gfx942: v_mfma_f32_32x32x8_bf16 (the "_1k" builtin), operands are 4 x bf16 as short
typedef short shortx4 __attribute__((ext_vector_type(4)));
__global__ void selftest_mfma(const shortx4* a, const shortx4* b, floatx16* c) {
  const int i = threadIdx.x;
  c[i] = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a[i], b[i], c[i], 0, 0, 0);
  if (i == 0) c[1][0] = static_cast<float>(rocprim::lane_id());
}
#endif
EOF
declare -A EXPECT=([gfx942]=v_mfma_f32_32x32x8_bf16 [gfx950]=v_mfma_f32_32x32x16_bf16)
for arch in gfx942 gfx950; do
  co=$TMP/selftest-$arch.co
  msg "self-test: compiling for $arch"
  "$CLANG" -x hip --offload-arch="$arch" --cuda-device-only --no-gpu-bundle-output \
      -O3 -std=c++20 "${CXXFLAGS[@]}" "$TMP/selftest.hip" -o "$co" 2>"$TMP/cc.log" ||
    { cat "$TMP/cc.log" >&2; die "self-test compile for $arch failed"; }
  "$READELF" --notes "$co" >"$TMP/notes-$arch.txt" || die "llvm-readelf --notes failed on $co"
  grep -q "amdhsa.target: *amdgcn-amd-amdhsa--$arch" "$TMP/notes-$arch.txt" || die "code object for $arch has an unexpected target"
  grep -E '^\s+(- )?\.(name|vgpr_count|agpr_count|sgpr_count|vgpr_spill_count|sgpr_spill_count|group_segment_fixed_size|private_segment_fixed_size):' \
    "$TMP/notes-$arch.txt" | sed "s/^[ -]*/  [$arch] /" >&2
  "$OBJDUMP" -d --mcpu="$arch" "$co" >"$TMP/dis-$arch.s" || die "llvm-objdump failed on $co"
  line=$(grep -m1 "${EXPECT[$arch]} " "$TMP/dis-$arch.s") || die "no ${EXPECT[$arch]} in the $arch disassembly"
  msg "  [$arch] objdump: $(sed 's/^\s*//; s/\s*\/\/.*//' <<<"$line")"
done

# Self-test of the full HIP build: the same kernel and a host main() compiled
# for the host and both targets and linked against the HIP runtime, with the
# flags hip-toolchain.cmake gives CMake (CMake adds --hip-link, --rtlib and
# -unwindlib through hip-lang's package); the executable must carry a
# .hip_fatbin bundle with both targets' code objects.  (No -fuse-ld: the sysroot's ld is lld.)
cat >>"$TMP/selftest.hip" <<'EOF'
// Linked, never run (the kernel's signature differs per target).
int main() {
  void* p = nullptr;
  if (hipMalloc(&p, 1 << 12) != hipSuccess) return 1;
  hipLaunchKernelGGL(selftest_mfma, dim3(1), dim3(64), 0, 0, nullptr, nullptr, nullptr);
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}
EOF
msg "self-test: host + gfx942 + gfx950 executable"
"$CLANG" -x hip --offload-arch=gfx942 --offload-arch=gfx950 -O2 -std=c++20 \
    --sysroot="$PREFIX" --rocm-path="$PREFIX/usr" --rocm-device-lib-path="$BITCODE_DIR" \
    "$TMP/selftest.hip" -o "$TMP/selftest" -Wl,--allow-shlib-undefined \
    --hip-link --rtlib=compiler-rt -unwindlib=libgcc 2>"$TMP/cc.log" ||
  { cat "$TMP/cc.log" >&2; die "self-test of the full HIP build (compile + link) failed"; }
"$OBJCOPY" --dump-section .hip_fatbin="$TMP/selftest.hipfb" "$TMP/selftest" "$TMP/selftest.stripped" ||
  die "the self-test executable has no .hip_fatbin section"
bundles=$("$BUNDLER" --list --type=o --input="$TMP/selftest.hipfb") || die "clang-offload-bundler --list failed"
for arch in gfx942 gfx950; do
  grep -qx "hipv4-amdgcn-amd-amdhsa--$arch" <<<"$bundles" || die "the self-test executable has no $arch code object (bundle: $bundles)"
done
"$READELF" --dynamic "$TMP/selftest" | grep -q "Shared library: \[libamdhip64.so.$HIP_SOVERSION\]" ||
  die "the self-test executable does not link libamdhip64.so.$HIP_SOVERSION"
msg "  bundle: $(tr '\n' ' ' <<<"$bundles")"

# ----------------------------------------------------------------------------
# CMake toolchain file for the full HIP build
# ----------------------------------------------------------------------------
cat >"$HIP_TOOLCHAIN.tmp" <<EOF
# Generated by .ci/amd-toolchain.sh -- a CMake toolchain file.  Do not edit.
#   cmake -S . -B build-hip -G Ninja -DHIPATTN_BACKEND=hip --toolchain $HIP_TOOLCHAIN
# Host and device code are compiled by the prefix's clang $("$CLANG" -dumpversion) against its trixie
# sysroot (glibc, libstdc++, GoogleTest and Google Benchmark of the same distribution), HIP
# $HIP_VERSION from Debian sid.  The executables link libamdhip64.so.$HIP_SOVERSION and trixie's
# glibc: they run on a system with those (and a GPU), not on this host.
set(CMAKE_SYSROOT "$PREFIX")
set(CMAKE_C_COMPILER "$LLVM_BIN/clang")
set(CMAKE_CXX_COMPILER "$CLANG")
set(CMAKE_HIP_COMPILER "$CLANG")
# <root>/lib/cmake/hip-lang is where CMake 3.25 looks for the HIP runtime's package.
set(CMAKE_HIP_COMPILER_ROCM_ROOT "$PREFIX/usr")
set(CMAKE_HIP_FLAGS_INIT "--sysroot=$PREFIX --rocm-path=$PREFIX/usr --rocm-device-lib-path=$BITCODE_DIR")
# --sysroot is in the HIP flags too: CMake identifies the HIP compiler by compiling and linking a
# HIP program with those flags alone, before it adds CMAKE_SYSROOT.  The same link is why the
# prefix has usr/x86_64-linux-gnu/bin/ld -> lld, which clang finds first.
# CMake 3.25 has no default implicit include directory for HIP (it has <sysroot>/usr/include for C,
# CXX and CUDA): without one, hip-lang's include directory (<sysroot>/usr/include here) is passed
# as -isystem while CMake checks the compiler, ahead of libstdc++'s headers, and <cmath>'s
# #include_next <math.h> fails.  CMake replaces it with the detected list.
set(CMAKE_HIP_IMPLICIT_INCLUDE_DIRECTORIES "$PREFIX/usr/include")
# --allow-shlib-undefined: libamdhip64's own dependencies (the HSA runtime, comgr and through it
# libLLVM, libnuma, ...) are not installed: the executables are only linked here, and a system
# that runs them has its own.  lld already skips the check for a shared library whose
# dependencies it did not see; the flag says so explicitly.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld -Wl,--allow-shlib-undefined")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld -Wl,--allow-shlib-undefined")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-fuse-ld=lld -Wl,--allow-shlib-undefined")
# Libraries, headers and packages come from the sysroot only (never the host's /usr); programs
# (python3, ...) from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The test executables cannot run here: GoogleTest lists their tests when ctest runs, not after
# the link.
set(CMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE PRE_TEST)
EOF

# ----------------------------------------------------------------------------
# Write env.sh / env.cmake (env.sh last: its presence means "installed")
# ----------------------------------------------------------------------------
{
  echo "# Generated by .ci/amd-toolchain.sh -- source me.  Do not edit."
  echo "# Device-only compile:  \$HIPATTN_AMD_CLANG -x hip --offload-arch=gfx942 --cuda-device-only"
  echo "#   --no-gpu-bundle-output -O3 -std=c++20 \$HIPATTN_AMD_CXXFLAGS foo.hip -o foo.co"
  printf 'export %s="%s"\n' \
    HIPATTN_AMD_TOOLCHAIN_DIR "$DIR" \
    HIPATTN_AMD_TOOLCHAIN_LAYOUT "$LAYOUT_VERSION" \
    HIPATTN_AMD_PREFIX "$PREFIX" \
    HIPATTN_AMD_CLANG "$CLANG" \
    HIPATTN_AMD_LLD "$LLD" \
    HIPATTN_AMD_READELF "$READELF" \
    HIPATTN_AMD_OBJDUMP "$OBJDUMP" \
    HIPATTN_AMD_CXXFILT "$CXXFILT" \
    HIPATTN_AMD_OBJCOPY "$OBJCOPY" \
    HIPATTN_AMD_OFFLOAD_BUNDLER "$BUNDLER" \
    HIPATTN_AMD_HIP_TOOLCHAIN_FILE "$HIP_TOOLCHAIN" \
    HIPATTN_AMD_HIP_INCLUDE "$HIP_INCLUDE" \
    HIPATTN_AMD_ROCPRIM_INCLUDE "$ROCPRIM_INCLUDE" \
    HIPATTN_AMD_DEVICE_LIBS "$BITCODE_DIR" \
    HIPATTN_AMD_CXXFLAGS "${CXXFLAGS[*]}" \
    HIPATTN_AMD_CLANG_VERSION "$("$CLANG" -dumpversion)" \
    HIPATTN_AMD_HIP_VERSION "$HIP_VERSION" \
    HIPATTN_AMD_HIP_PKG_VERSION "$(pkg_version libamdhip64-dev)" \
    HIPATTN_AMD_HIP_SOVERSION "$HIP_SOVERSION" \
    HIPATTN_AMD_HIP_RUNTIME_PKG_VERSION "$(pkg_version "$HIP_RUNTIME_PKG")" \
    HIPATTN_AMD_ROCPRIM_VERSION "$ROCPRIM_VERSION" \
    HIPATTN_AMD_ROCPRIM_PKG_VERSION "$(pkg_version librocprim-dev)" \
    HIPATTN_AMD_DEVICE_LIBS_PKG_VERSION "$(pkg_version rocm-device-libs-$LLVM_MAJOR)"
} >"$ENV_SH.tmp"
# shellcheck disable=SC1090
source "$ENV_SH.tmp"
{
  echo "# Generated by .ci/amd-toolchain.sh -- include() me.  Do not edit."
  for v in HIPATTN_AMD_TOOLCHAIN_DIR HIPATTN_AMD_TOOLCHAIN_LAYOUT HIPATTN_AMD_PREFIX HIPATTN_AMD_CLANG \
           HIPATTN_AMD_LLD HIPATTN_AMD_READELF HIPATTN_AMD_OBJDUMP HIPATTN_AMD_CXXFILT \
           HIPATTN_AMD_OBJCOPY HIPATTN_AMD_OFFLOAD_BUNDLER HIPATTN_AMD_HIP_TOOLCHAIN_FILE \
           HIPATTN_AMD_HIP_INCLUDE HIPATTN_AMD_ROCPRIM_INCLUDE HIPATTN_AMD_DEVICE_LIBS \
           HIPATTN_AMD_CLANG_VERSION HIPATTN_AMD_HIP_VERSION HIPATTN_AMD_ROCPRIM_VERSION; do
    echo "set($v \"${!v}\")"
  done
  printf 'set(HIPATTN_AMD_CXXFLAGS'; printf ' "%s"' "${CXXFLAGS[@]}"; printf ')\n'
} >"$ENV_CMAKE"

# The .debs and apt indices are not needed any more (the prefix is the cache).
[[ ${HIPATTN_AMD_KEEP_DEBS:-0} == 1 ]] || rm -rf "$DEBS"
rm -rf "$APT_DIR/state/lists" "$APT_DIR/cache"
mv "$HIP_TOOLCHAIN.tmp" "$HIP_TOOLCHAIN"
mv "$ENV_SH.tmp" "$ENV_SH"

msg "installed $(wc -l <"$DIR/packages.txt") packages ($(du -sh "$PREFIX" | cut -f1)), list in $DIR/packages.txt"
print_versions
msg "env: source $ENV_SH   (CMake: $ENV_CMAKE; HIP build: --toolchain $HIP_TOOLCHAIN)"
