#!/usr/bin/env bash
# One call on the GPU machine (see docs/performance.md): environment, the cuda-marked
# parity tests, the NVRTC compile check, compute-sanitizer on the data-dependent kernels,
# the benchmark and the CUDA conformance page. Carry .whl with the python-rapidjson wheel (the
# `dmlops run` tests need it; the device has none) and, optionally, pytest-timeout's.
# Usage: bash bench/device_run.sh [tests] [sanitize] [bench] [conformance] [roi] [quick]
set -u
export PYTHONUNBUFFERED=1
scratch="${TMPDIR:-/tmp}"
OUT="${OUT:-$scratch/dmlops-out}"
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$scratch/dmlops-site" .whl/*.whl
    export PYTHONPATH="$scratch/dmlops-site:$PWD/src:$PWD/tests"
else
    export PYTHONPATH="$PWD/src:$PWD/tests"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv | tee "$OUT/env.txt"
python3 -m pip list 2>/dev/null | grep -i -E "^(cupy|torch|torchvision|numpy|pytest|hypothesis|json5|pytest-xdist|numba) " | tee -a "$OUT/env.txt"
python3 -c "import dmlops.cuda as c; print('cuda availability:', c.availability())" 2>&1 | tee -a "$OUT/env.txt"
# A per-test limit (pytest-timeout, when carried in .whl) names a hung kernel instead of eating the call.
timeout_opt=""
if python3 -c "import pytest_timeout" 2>/dev/null; then timeout_opt="--timeout=120 --timeout-method=thread"; fi
for step in "$@"; do
    case "$step" in
    tests)
        python3 -m pytest -q -p no:cacheprovider $timeout_opt -m cuda -n 8 -rfE tests/ > "$OUT/tests_full.log" 2>&1
        grep -E "^(FAILED|ERROR)" "$OUT/tests_full.log" | sed 's/ - .*//' | head -n 40 | tee "$OUT/tests.log"
        tail -n 3 "$OUT/tests_full.log" | tee -a "$OUT/tests.log"
        python3 -m pytest -q -p no:cacheprovider tests/test_cuda_kernels_compile.py tests/test_cuda_runtime.py 2>&1 | tail -n 15 | tee -a "$OUT/tests.log"
        ;;
    trace)
        python3 -m pytest -q -p no:cacheprovider -m cuda -x --tb=long tests/test_resample.py -k torch_interpolate_parity 2>&1 | tail -n 70 > "$OUT/trace.log"
        ;;
    sanitize)
        compute-sanitizer --tool memcheck --leak-check no --error-exitcode 9 python3 bench/sanitize_gpu.py 2>&1 | tail -n 25 | tee "$OUT/sanitize.log"
        echo "compute-sanitizer exit: ${PIPESTATUS[0]}" | tee -a "$OUT/sanitize.log"
        ;;
    bench)
        python3 bench/gpu.py --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
        ;;
    conformance)
        python3 scripts/conformance_report.py --output "$OUT/conformance-cuda.md" -- -m cuda > "$OUT/conformance.log" 2>&1
        tail -n 2 "$OUT/conformance.log"
        ;;
    roi)
        python3 -m pytest -q -p no:cacheprovider $timeout_opt -m cuda -n 8 -rfE tests/test_roi_align.py tests/conformance/test_conformance_roi_align.py tests/test_cuda_runtime.py 2>&1 | tail -n 15 | tee "$OUT/roi_tests.log"
        python3 bench/gpu.py --only roi --json "$OUT/bench_roi.json" 2>&1 | tee "$OUT/bench_roi.log"
        ;;
    quick)
        python3 bench/gpu.py --quick --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
        ;;
    esac
done
