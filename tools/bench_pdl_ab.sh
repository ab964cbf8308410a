#!/usr/bin/env bash
# tools/bench_pdl_ab.sh [FILTER]: programmatic dependent launch off and on (HIPATTN_PDL=0 / 1), the same
# hipattn_bench binary (build-dev/, as tools/device_run.sh builds it), two interleaved rounds
# (off on off on), and a table of the medians: the A/B of bench/NOTES.md run v23. With PDL off every
# kernel is launched in stream order; the kernels themselves are the same (their griddepcontrol
# instructions return at once when the launch was not programmatic).
# Results: $OUT/pdl_{0,1}_{1,2}.json. Default FILTER: the short decode rows and long-context rows of the
# paged-decode and unified chains (planner -> kernel -> reduce), uniform and planned.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
FILTER=${1:-'^(paged_decode/(decode_d128_b16/(f16|fp8_e4m3fn_tensor)/(auto|planned|unified_auto)|serve_decode_b1_ctx128k/bf16/(auto|planned)|serve_decode_b64_ctx8k/bf16/(auto|planned))|unified/(decode_d128_b16|serve_decode_b1_ctx128k|serve_decode_mixed_15x2k_1x128k)/auto)/'}
BIN=./build-dev/bench/hipattn_bench
[ -x "$BIN" ] || { echo "no $BIN: run tools/device_run.sh bench first"; exit 1; }
for round in 1 2; do
  for pdl in 0 1; do
    HIPATTN_PDL=$pdl "$BIN" --benchmark_filter="$FILTER" --benchmark_out="$OUT/pdl_${pdl}_$round.json" \
      --benchmark_out_format=json >"$OUT/pdl_${pdl}_$round.log" 2>&1 || { tail -20 "$OUT/pdl_${pdl}_$round.log"; exit 1; }
  done
done
grep -m1 "ceilings" "$OUT/pdl_1_1.log"
python3 - "$OUT" <<'PY'
import glob, json, statistics, sys
t = {}
for f in sorted(glob.glob(sys.argv[1] + "/pdl_[01]_*.json")):
    side = f.split("/")[-1].split("_")[1]
    for b in json.load(open(f))["benchmarks"]:
        t.setdefault(b["name"].split("/iterations")[0], {}).setdefault(side, []).append(b["us"] if "us" in b else b["real_time"])
print(f"{'benchmark':58s} {'PDL off us':>16s} {'PDL on us':>16s} {'on/off':>7s}")
for name, d in t.items():
    o, n = d.get("0", []), d.get("1", [])
    if o and n:
        print(f"{name:58s} {' '.join(f'{x:7.1f}' for x in o):>16s} {' '.join(f'{x:7.1f}' for x in n):>16s} "
              f"{statistics.median(n) / statistics.median(o):7.3f}")
PY
