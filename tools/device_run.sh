#!/usr/bin/env bash
# tools/device_run.sh: build on the GPU machine and run what it can check there, in one call.
#   tools/device_run.sh [tests] [bench] [sanitize] [examples] [consumer]
# Builds build-dev/ (CUDA backend, sm_90a, Release) with every core, then per argument:
#   tests     the device parity suite (tests/device) and the host suite
#   bench     the benchmark sweep (JSON to $OUT/bench.json when $OUT is set; BENCH_FILTER: a
#             --benchmark_filter regex, e.g. paged_decode/), then the dense-prefill peers
#             (bench/peers/sdpa_peers.py: PyTorch SDPA's cuDNN and flash backends on the target rows,
#             beside the sweep's figures; $OUT/peers.log, peers.json; PEERS=0 skips them)
#   tiles     the sm_90 dense-prefill tile sweep (bench/tiles_sm90.cu: candidate tiles and softmax
#             chain counts beside the shipped instance, outputs compared; $OUT/tiles.txt)
#   sanitize  compute-sanitizer memcheck over a subset of the device suite
#   examples  the examples
#   consumer  install build-dev, then build and run tests/consumer against it (the instance-library
#             consumer included)
# build.log and .ninja_log (per-file compile times) are copied to $OUT.
# Logs go to $OUT (or ./device-out) so that they come back from the device machine.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
start=$(date +%s)
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIPATTN_BACKEND=cuda >"$OUT/configure.log" 2>&1 ||
  { tail -30 "$OUT/configure.log"; exit 1; }
targets=(hipattn_device_tests hipattn_filter_tests hipattn_host_tests)
for a in "$@"; do
  case "$a" in
    bench) targets+=(hipattn_bench) ;;
    tiles) targets+=(hipattn_tiles_sm90) ;;
    examples) targets+=(hipattn_smoke hipattn_custom_variant hipattn_unified_attention hipattn_paged_decode hipattn_dense_prefill hipattn_mla_decode_merge) ;;
  esac
done
cmake --build build-dev -j "$(nproc)" --target "${targets[@]}" >"$OUT/build.log" 2>&1 ||
  { grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
cp build-dev/.ninja_log "$OUT/ninja_log.txt"
rc=0
for a in "$@"; do
  case "$a" in
    tests)
      ./build-dev/tests/hipattn_host_tests --gtest_brief=1 >"$OUT/host_tests.log" 2>&1 || rc=1
      tail -3 "$OUT/host_tests.log"
      ./build-dev/tests/hipattn_device_tests --gtest_brief=1 >"$OUT/device_tests.log" 2>&1 || rc=1
      grep -E "FAILED|PASSED|tests ran" "$OUT/device_tests.log" | tail -15
      ./build-dev/tests/hipattn_filter_tests --gtest_brief=1 >"$OUT/filter_tests.log" 2>&1 || rc=1
      grep -E "FAILED|PASSED|tests ran" "$OUT/filter_tests.log" | tail -5 ;;
    consumer)
      rm -rf build-dev/prefix build-dev/consumer
      cmake --install build-dev --prefix build-dev/prefix >/dev/null &&
        cmake -S tests/consumer -B build-dev/consumer -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build-dev/prefix" -DCMAKE_CUDA_ARCHITECTURES=90a \
          >"$OUT/consumer.log" 2>&1 &&
        cmake --build build-dev/consumer -j "$(nproc)" >>"$OUT/consumer.log" 2>&1 || { rc=1; tail -20 "$OUT/consumer.log"; }
      for e in build-dev/consumer/hipattn_consumer build-dev/consumer/hipattn_consumer_prebuilt; do
        [ -x "$e" ] && { "$e" 2>&1 | tail -8 || rc=1; }
      done ;;
    bench)
      ./build-dev/bench/hipattn_bench --benchmark_filter="${BENCH_FILTER:-.}" --benchmark_out="$OUT/bench.json" --benchmark_out_format=json \
        >"$OUT/bench.log" 2>&1 || rc=1
      tail -60 "$OUT/bench.log"
      if [ "${PEERS:-1}" != 0 ]; then
        python3 bench/peers/sdpa_peers.py --hipattn-json "$OUT/bench.json" --json "$OUT/peers.json" >"$OUT/peers.log" 2>&1 || rc=1
        tail -12 "$OUT/peers.log"
      fi ;;
    tiles)
      ./build-dev/bench/hipattn_tiles_sm90 >"$OUT/tiles.txt" 2>&1 || rc=1
      cat "$OUT/tiles.txt" ;;
    sanitize)
      compute-sanitizer --tool memcheck --error-exitcode 3 ./build-dev/tests/hipattn_device_tests \
        --gtest_brief=1 --gtest_filter='*Random*:*Edge*:*Error*:*PagedDecodeBoundary*:*PagedDecodeUnowned*:*PagedDecodeGraph*:PagedDecodeChained.*:*PagedDecodeSlidingWindowCases*:PagedDecodeRocm.*:MlaDecode.DtypesAndFp8Caches:MlaDecode.NoLse:MlaDecode.PlannedAndOnePartitionAgree:MlaDecode.OutputFormatsFp16:MergeStates.StridedLayoutsWithNaNPadding:MergeStates.EmptyPartsAreIgnored:Fp8Io.*:*Fp8IoSweep*q_fp8*_d96_*' >"$OUT/memcheck.log" 2>&1 || rc=1
      grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.log" | tail -5 ;;
    examples)
      for e in build-dev/examples/hipattn_*; do
        [ -x "$e" ] && { echo "== $e"; "$e" 2>&1 | tail -5 || rc=1; }
      done ;;
  esac
done
echo "total: $(( $(date +%s) - start )) s, rc=$rc"
exit $rc
