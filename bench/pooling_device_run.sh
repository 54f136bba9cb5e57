#!/usr/bin/env bash
# One device call for the CUDA max-pooling kernels (DirectML's selection rule): the
# pooling tests on the GPU, compute-sanitizer over bench/sanitize_gpu.py, and the pooling
# workloads of bench/gpu.py (maxpool: MAX_POOLING_GRAD; forward: MAX_POOLING2 and RESAMPLE2)
# before and after, alternated twice. "Before" is the tree in .baseline (git archive of the
# commit before the change, carried: `git archive COMMIT src bench | tar -x -C .baseline`).
# Usage: bash bench/pooling_device_run.sh [tests] [sanitize] [bench]
set -u
export PYTHONUNBUFFERED=1
OUT="${OUT:-${TMPDIR:-/tmp}/dmlops-out}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src:$PWD/tests"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv | tee "$OUT/env.txt"
python3 -c "import dmlops.cuda as c; print('cuda availability:', c.availability())" 2>&1 | tee -a "$OUT/env.txt"
for step in "$@"; do
    case "$step" in
    tests)
        python3 -m pytest -q -p no:cacheprovider -m cuda -n 8 -rfE -k pool \
            tests/test_cuda_pooling_rule.py tests/test_max_pooling.py tests/test_cuda_runtime.py \
            tests/test_vectors.py tests/conformance/test_conformance_max_pooling.py > "$OUT/tests_full.log" 2>&1
        grep -E "^(FAILED|ERROR)" "$OUT/tests_full.log" | sed 's/ - .*//' | head -n 40
        tail -n 3 "$OUT/tests_full.log"
        ;;
    sanitize)
        timeout 300 compute-sanitizer --tool memcheck --leak-check no --error-exitcode 9 python3 bench/sanitize_gpu.py 2>&1 | tail -n 25 > "$OUT/sanitize.log"
        echo "compute-sanitizer exit: ${PIPESTATUS[0]}" >> "$OUT/sanitize.log"
        tail -n 4 "$OUT/sanitize.log"
        ;;
    bench)
        for round in 1 2; do
            (cd .baseline && DMLOPS_CACHE_DIR="${TMPDIR:-/tmp}/dmlops-cache-before" PYTHONPATH="$PWD/src" timeout 100 python3 bench/gpu.py --only maxpool,forward) > "$OUT/bench_before_$round.log" 2>&1
            PYTHONPATH="$PWD/src" DMLOPS_CACHE_DIR="${TMPDIR:-/tmp}/dmlops-cache-after" timeout 100 python3 bench/gpu.py --only maxpool,forward > "$OUT/bench_after_$round.log" 2>&1
        done
        head -n 1 "$OUT/bench_after_1.log"
        for f in "$OUT"/bench_*.log; do echo "== $(basename "$f")"; grep -E "MaxPool|max-pool|!!" "$f"; done
        ;;
    esac
done
