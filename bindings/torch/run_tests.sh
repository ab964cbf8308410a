#!/usr/bin/env bash
# bindings/torch/run_tests.sh: build torch.ops.hipattn and run its test suite, on the GPU machine.
#
#   OUT=$OUT bash bindings/torch/run_tests.sh        # from the repository root
#
# Configures this repository with PyTorch on CMAKE_PREFIX_PATH (CUDA, sm_90a; tests, benchmarks and
# examples off), builds the target hipattn_torch_ops (libhipattn_torch_ops.so over its instance
# library) with -j$(nproc), then runs bindings/torch/tests/test_ops.py under pytest, or, where pytest
# is not installed, under the small runner below (every test_* function, each parametrized case).
# Logs go to $OUT when set (env.txt, configure.log, build.log, tests.log, pytest.xml), else to
# <build>/logs. Environment: PYTHON (python3), HIPATTN_TORCH_BUILD (<repo>/build-torch), CUDACXX.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${HIPATTN_TORCH_BUILD:-$ROOT/build-torch}
LOGS=${OUT:-$BUILD/logs}
PY=${PYTHON:-python3}
mkdir -p "$LOGS" "$BUILD"

if [[ -z "${CUDACXX:-}" ]] && ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
{
  "$PY" -c 'import torch; print("torch", torch.__version__, "| CUDA", torch.version.cuda, "| C++11 ABI",
            torch._C._GLIBCXX_USE_CXX11_ABI, "| GPU", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)'
  "${CUDACXX:-nvcc}" --version | tail -2 || echo "nvcc: not on PATH (CMake will look for it)"
  cmake --version | head -1
  "$PY" -c 'import pytest; print("pytest", pytest.__version__)' 2>/dev/null || echo "pytest: not installed (the runner below is used)"
  echo "cores: $(nproc)"
} 2>&1 | tee "$LOGS/env.txt"
"$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else "no CUDA device visible to PyTorch")'

TORCH_PREFIX=$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')
TORCH_ABI=$("$PY" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)

SECONDS=0
cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DHIPATTN_BACKEND=cuda \
  -DHIPATTN_CUDA_ARCHITECTURES=90a -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" -DHIPATTN_TORCH_CXX11_ABI="$TORCH_ABI" \
  -DHIPATTN_BUILD_TESTS=OFF -DHIPATTN_BUILD_BENCH=OFF -DHIPATTN_BUILD_EXAMPLES=OFF -DHIPATTN_BUILD_TORCH=ON \
  2>&1 | tee "$LOGS/configure.log"
cmake --build "$BUILD" --target hipattn_torch_ops -j"$(nproc)" 2>&1 | tee "$LOGS/build.log"
echo "configure + build: ${SECONDS} s" | tee -a "$LOGS/build.log"

export HIPATTN_TORCH_LIB="$BUILD/bindings/torch/libhipattn_torch_ops.so"
export PYTHONPATH="$ROOT/bindings/torch${PYTHONPATH:+:$PYTHONPATH}"
TESTS="$ROOT/bindings/torch/tests/test_ops.py"
SECONDS=0
if "$PY" -c 'import pytest' >/dev/null 2>&1; then
  "$PY" -m pytest -v -rs -p no:cacheprovider "$TESTS" --junitxml="$LOGS/pytest.xml" 2>&1 | tee "$LOGS/tests.log"
else
  "$PY" - "$TESTS" <<'EOF' 2>&1 | tee "$LOGS/tests.log"
# The runner without pytest: every test_* function of the module in definition order, each case of
# a parametrize shim (__hipattn_params__ = (name, values, ids)) once; Skip counts as skipped.
import importlib.util, sys, time, traceback
spec = importlib.util.spec_from_file_location("test_ops", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
counts = {"PASSED": 0, "FAILED": 0, "SKIPPED": 0}
for name, fn in list(vars(mod).items()):
    if not name.startswith("test_") or not callable(fn):
        continue
    params = getattr(fn, "__hipattn_params__", None)
    if params is None:
        runs = [((), name)]
    else:
        _, values, ids = params
        runs = [((v,), f"{name}[{ids[i] if ids else i}]") for i, v in enumerate(values)]
    for args, label in runs:
        t0 = time.time()
        try:
            fn(*args)
            verdict = "PASSED"
        except mod.Skip as e:
            verdict = "SKIPPED"
            print(f"  skipped: {e}")
        except Exception:
            verdict = "FAILED"
            traceback.print_exc()
        counts[verdict] += 1
        print(f"{verdict} {label} ({time.time() - t0:.1f} s)", flush=True)
print(f"== {counts['PASSED']} passed, {counts['FAILED']} failed, {counts['SKIPPED']} skipped ==")
sys.exit(1 if counts["FAILED"] or not counts["PASSED"] else 0)
EOF
fi
echo "tests: ${SECONDS} s" | tee -a "$LOGS/tests.log"
