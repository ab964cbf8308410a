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
AB_NEW_TARGETS=()
source tools/ab_build.sh
ab_build "$OLD"
echo "built both in $(( $(date +%s) - start )) s"
for side in old new; do cuobjdump -sass build-ab-$side/bench/hipattn_bench >"build-ab-$side/bench.sass"; done
python3 tools/compare_sass.py build-ab-old/bench.sass build-ab-new/bench.sass | tee "$OUT/compare_sass.txt" | head -60
echo "total $(( $(date +%s) - start )) s"
