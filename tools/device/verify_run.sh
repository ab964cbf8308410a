#!/usr/bin/env bash
# (run on the device machine from the repository root: `bash tools/device/<script>`; $OUT is where logs go)
# Device run: build the device + host tests (sm_90a), run the device suite, memcheck a subset.
set -uo pipefail
T0=$(date +%s)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIPATTN_BACKEND=cuda -DCMAKE_CUDA_COMPILER=$NVCC \
  -DHIPATTN_BUILD_BENCH=OFF -DHIPATTN_BUILD_EXAMPLES=OFF > $OUT/configure.log 2>&1 || { tail -30 $OUT/configure.log; exit 1; }
cmake --build build-dev -j 16 --target hipattn_device_tests > $OUT/build.log 2>&1 || { grep -B2 -A10 "error" $OUT/build.log | head -80; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
grep -i "spill" $OUT/build.log | grep -v " 0 bytes spill stores, 0 bytes spill loads" | sort | uniq -c | head -20 > $OUT/spills.txt
./build-dev/tests/hipattn_device_tests --gtest_brief=1 > $OUT/device.log 2>&1; rc=$?
echo "device suite rc=$rc $(( $(date +%s) - T0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " $OUT/device.log | head -5; grep -E "FAILED" $OUT/device.log | head -20; tail -3 $OUT/device.log
compute-sanitizer --tool memcheck --error-exitcode 9 ./build-dev/tests/hipattn_device_tests --gtest_brief=1 \
  --gtest_filter='MlaDecode.HeadsQLenPagesBf16:MlaDecode.SplitQueryAndStrides:MlaDecode.DtypesAndFp8Caches:PagedDecodeFeatures.*:PagedDecodeUnowned.*:PagedDecodeRocm.AgreesWithRowsLayout:UnifiedEdge.HeadSize96:UnifiedEdge.ZeroLengthSequencesAndSinks:Fp8Io.*Decode*' > $OUT/memcheck.log 2>&1
echo "memcheck rc=$? $(( $(date +%s) - T0 )) s"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | tail -4
