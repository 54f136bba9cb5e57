"""A tensor too large for memory fails with a clear error before anything is allocated.

Each case runs in a subprocess whose address space is limited to 2 GiB: an allocation
that dmlops did not refuse up front then fails inside NumPy ("Unable to allocate ...",
MemoryError) instead of filling the machine, and the test can tell the two apart.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

_SCRIPT = """
import resource, sys
limit = 2 * 2**30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import numpy as np
import dmlops
from dmlops import TensorDesc
from dmlops.descs.data_movement import Slice1Desc

n = 2**31  # 16 GiB of FLOAT64: valid for DML (< 2^32 elements), from a 1-element broadcast input
desc = Slice1Desc(
    input_tensor=TensorDesc(data_type="FLOAT64", sizes=(n,), strides=(0,)),
    output_tensor=TensorDesc(data_type="FLOAT64", sizes=(n,)),
    input_window_offsets=(0,),
    input_window_sizes=(n,),
    input_window_strides=(1,),
)
try:
    dmlops.execute(desc, {"InputTensor": np.zeros(1)}, backend=sys.argv[1])
except dmlops.BackendUnavailableError as exc:
    print("UNAVAILABLE", exc)
except dmlops.DmlError as exc:
    print("DMLERROR", type(exc).__name__, exc)
except MemoryError as exc:
    print("MEMORYERROR", exc)
else:
    print("NO ERROR")
"""


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_output_too_large_is_refused_before_allocation(backend: str) -> None:
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, backend], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    line = proc.stdout.strip()
    if line.startswith("UNAVAILABLE"):
        pytest.skip(line)
    assert line.startswith("DMLERROR"), line
    assert "byte" in line or "memory" in line.lower(), line


test_output_too_large_is_refused_before_allocation.conformance = (
    "dmlops.execute (API)",
    "too-large tensor refused before allocation",
)  # type: ignore[attr-defined]
