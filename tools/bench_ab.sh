#!/usr/bin/env bash
# tools/bench_ab.sh OLD_SRC [FILTER]: the benchmark sweep of an older source tree (OLD_SRC, e.g. from
# `git archive REV | tar -x -C .ab/old`) and of this tree, built and run on the same GPU in one call,
# interleaved A B A B, so that a change is judged against figures measured in the same run.
# Results: $OUT/ab_{old,new}_{1,2}.json and a table of medians per benchmark.
set -uo pipefail
cd "$(dirname "$0")/.."
OLD=$1
FILTER=${2:-'unified/(serve_|decode_d128_b16|mixed_d128_b16).*auto'}
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
start=$(date +%s)
AB_NEW_TARGETS=(hipattn_custom_variant)
source tools/ab_build.sh
ab_build "$OLD"
echo "built both in $(( $(date +%s) - start )) s"
./build-ab-new/examples/hipattn_custom_variant 2>&1 | tee "$OUT/custom_variant.log"
for round in 1 2; do
  for side in old new; do
    ./build-ab-$side/bench/hipattn_bench --benchmark_filter="$FILTER" --benchmark_out="$OUT/ab_${side}_$round.json" \
      --benchmark_out_format=json >"$OUT/ab_${side}_$round.log" 2>&1 || { tail -20 "$OUT/ab_${side}_$round.log"; exit 1; }
  done
done
python3 - "$OUT" <<'PY'
import json, sys, glob, statistics
out = sys.argv[1]
t = {}
for f in sorted(glob.glob(out + "/ab_*_*.json")):
    side = f.split("/")[-1].split("_")[1]
    for b in json.load(open(f))["benchmarks"]:
        t.setdefault(b["name"].split("/iterations")[0], {}).setdefault(side, []).append(b["us"] if "us" in b else b["real_time"])
print(f"{'benchmark':60s} {'old us':>18s} {'new us':>18s} {'new/old':>8s}")
for name, d in t.items():
    o, n = d.get("old", []), d.get("new", [])
    if not o or not n: continue
    print(f"{name:60s} {' '.join(f'{x:8.1f}' for x in o):>18s} {' '.join(f'{x:8.1f}' for x in n):>18s} {statistics.median(n)/statistics.median(o):8.3f}")
PY
echo "total $(( $(date +%s) - start )) s"
