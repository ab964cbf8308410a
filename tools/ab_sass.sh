#!/usr/bin/env bash
# tools/ab_sass.sh OLD_SRC: build the benchmark (every family's instances) of an older source tree
# (OLD_SRC, e.g. from `git archive REV | tar -x -C _base --strip-components=0`) and of this tree on the
# GPU machine, half the cores each, into build-ab-old / build-ab-new (the trees tools/bench_ab.sh then
# reuses), and compare their machine code kernel by kernel (tools/compare_sass.py): a structural
# change that renames types but generates the same code reports every body identical.
set -uo pipefail
cd "$(dirname "$0")/.."
OLD=$1
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
start=$(date +%s)
for side in old new; do
  src=$([ $side = old ] && echo "$OLD" || echo .)
  cmake -S "$src" -B build-ab-$side -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIPATTN_BACKEND=cuda \
    -DHIPATTN_BUILD_TESTS=OFF -DHIPATTN_BUILD_EXAMPLES=$([ $side = new ] && echo ON || echo OFF) \
    >"$OUT/ab_configure_$side.log" 2>&1 || { tail -20 "$OUT/ab_configure_$side.log"; exit 1; }
done
(cmake --build build-ab-old -j $(( $(nproc) / 2 )) --target hipattn_bench >"$OUT/ab_build_old.log" 2>&1; echo $? >"$OUT/ab_build_old.rc") &
cmake --build build-ab-new -j $(( $(nproc) / 2 )) --target hipattn_bench >"$OUT/ab_build_new.log" 2>&1
echo $? >"$OUT/ab_build_new.rc"
wait
for side in old new; do
  [ "$(cat "$OUT/ab_build_$side.rc")" = 0 ] || { grep -E "error|FAILED" "$OUT/ab_build_$side.log" | head -20; exit 1; }
done
echo "built both in $(( $(date +%s) - start )) s"
for side in old new; do cuobjdump -sass build-ab-$side/bench/hipattn_bench >"build-ab-$side/bench.sass"; done
python3 tools/compare_sass.py build-ab-old/bench.sass build-ab-new/bench.sass | tee "$OUT/compare_sass.txt" | head -60
echo "total $(( $(date +%s) - start )) s"
