#!/usr/bin/env bash
# (run on the device machine from the repository root: `bash tools/device/<script>`; $OUT is where logs go)
# Device run: build the device tests + the bench (sm_90a), the whole device suite, memcheck of the MLA
# subset, then the MLA target rows of the bench (ceilings measured in the same run).
set -uo pipefail
T0=$(date +%s)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIPATTN_BACKEND=cuda -DCMAKE_CUDA_COMPILER=$NVCC \
  -DHIPATTN_BUILD_EXAMPLES=OFF > $OUT/configure.log 2>&1 || { tail -30 $OUT/configure.log; exit 1; }
cmake --build build-dev -j 16 --target hipattn_device_tests hipattn_bench > $OUT/build.log 2>&1 || { grep -B2 -A10 "error" $OUT/build.log | head -80; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
grep -i "spill" $OUT/build.log | grep -v " 0 bytes spill stores, 0 bytes spill loads" | grep -i mla | head -5
./build-dev/tests/hipattn_device_tests --gtest_brief=1 > $OUT/device.log 2>&1; rc=$?
echo "device suite rc=$rc $(( $(date +%s) - T0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " $OUT/device.log | head -5; grep -E "FAILED|Failure" $OUT/device.log | head -20
compute-sanitizer --tool memcheck --error-exitcode 9 ./build-dev/tests/hipattn_device_tests --gtest_brief=1 \
  --gtest_filter='MlaDecode.Fp8QueriesOverFp8Caches:MlaDecode.SplitQueryAndStrides' > $OUT/memcheck.log 2>&1
echo "memcheck rc=$? $(( $(date +%s) - T0 )) s"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | tail -3
if [ $(( $(date +%s) - T0 )) -gt 450 ]; then echo "bench skipped (time)"; exit 0; fi
./build-dev/bench/hipattn_bench --benchmark_filter='mla_decode/target_h(128_b64_ctx8k_mtp1_(bf16|fp8q_fp8)|16_b64_ctx8k_mtp1_(bf16|fp8|fp8q_fp8))/' --benchmark_out=$OUT/bench.json --benchmark_out_format=json > $OUT/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - T0 )) s"; grep -E "ceilings|^mla" $OUT/bench.txt | cut -c1-200
