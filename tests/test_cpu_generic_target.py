"""The cpu backend compiled for a CPU without AVX-512, on a machine that has it.

On AVX-512 hosts EXP, SIGMOID, GELU, SOFTMAX and AVERAGE_POOLING's row sums run on the IR
vector kernels (``cpu/_vector_math.py``, ``cpu/_vector_windows.py``), so their other paths
(the numba ufuncs, the scalar SOFTMAX rows, the de-interleaving window sums, and the
intrinsics' compiled fallbacks that the kernels type but do not take) would go untested
here. This runs those paths' tests again in a child process with ``NUMBA_CPU_NAME=generic``
(numba then compiles for a generic x86-64, and the vector kernels report themselves
unavailable) and a cache directory of its own. On a CPU without AVX-512 the main run already
takes these paths, and the test skips.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

from dmlops.cpu import _vector_math

pytestmark = [
    pytest.mark.cpu_backend,
    pytest.mark.skipif(not _vector_math.available(), reason="no AVX-512F: the main run takes these paths"),
]

TESTS = Path(__file__).parent

SELECTION = {
    # file: the -k expression of the tests whose paths depend on the vector kernels
    "test_cpu_wide_loops.py": "",
    "test_cpu_elementwise.py": "row_kernel or long_row or EXP or SIGMOID or GELU or SOFTMAX",
    "test_cpu_pooling_neighbours.py": "cpu and (forward_pooling or average_pooling_sums)",
    "test_cpu_vector_windows.py": "",
}


def test_the_non_avx512_paths_match_the_reference(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CPU_NAME": "generic", "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    env.pop("NUMBA_CPU_FEATURES", None)
    probe = "from dmlops.cpu import _vector_math, elementwise, pooling; "
    probe += "print(_vector_math.available(), elementwise._VECTORS, pooling._VECTORS)"
    seen = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert seen.stdout.split() == ["False", "False", "False"]  # the vector kernels are off in the child
    for name, expression in SELECTION.items():
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", str(TESTS / name)]
        if expression:
            command += ["-k", expression]
        child = subprocess.run(command, env=env, cwd=TESTS.parent, capture_output=True, text=True, timeout=900)
        summary = child.stdout.strip().splitlines()[-1] if child.stdout.strip() else child.stderr[-2000:]
        assert child.returncode == 0, f"{name}: {summary}\n{child.stdout[-4000:]}"
        passed = re.search(r"(\d+) passed", summary)
        assert passed and int(passed.group(1)) > 0, f"{name}: {summary}"
