"""The vector kernels read and write no element outside their arrays (guard pages).

``cpu/_vector_math.py`` and ``cpu/_vector_windows.py`` load and store partial vectors with
lane masks, and a streamed row's head vector starts before the row: their docstrings claim
no lane outside the arrays is touched. Here every array sits against an inaccessible page
(``mprotect(PROT_NONE)``), just after one or just before one, so a single stray lane faults.
The kernels run in a child process, so that a fault fails this test instead of killing the
run; the child also checks the results against NumPy formulas.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")

from dmlops.cpu import _vector_math

pytestmark = [
    pytest.mark.cpu_backend,
    pytest.mark.skipif(not _vector_math.available(), reason="the CPU has no AVX-512F: no vector kernels"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect through the C library"),
]

CHILD = textwrap.dedent(
    """
    import ctypes, mmap
    import numpy as np
    from numba import njit
    from dmlops.cpu import _vector_math, _vector_windows, elementwise

    PAGE = mmap.PAGESIZE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    keep = []

    def guarded(n, where, fill=7.0):
        '''n float32 elements right after an inaccessible page ("after") or right before one ("before").'''
        pages = -(-4 * n // PAGE) + 2
        memory = mmap.mmap(-1, pages * PAGE)
        keep.append(memory)
        whole = np.frombuffer(memory, np.float32)
        base = whole.ctypes.data
        for page in (0, pages - 1):
            if libc.mprotect(base + page * PAGE, PAGE, 0) != 0:
                raise OSError(ctypes.get_errno(), "mprotect")
        inner = PAGE // 4
        start = inner if where == "after" else (pages - 1) * inner - n
        array = whole[start : start + n]
        array[...] = fill
        return array

    apply = _vector_math.mapper()
    elementwise._row_kernels()
    softmax_pass = elementwise._SOFTMAX_PASS
    sums = _vector_windows.row_window_sums()

    @njit
    def run_pass(x, m, out, n, following, done, factor, target, stream):
        if stream:
            return softmax_pass(x, m, out, n, following, done, factor, target, True, True)
        return softmax_pass(x, m, out, n, following, done, factor, target, True, False)

    @njit
    def run_sums(acc, row, first, count, stride, taps, dilation):
        if stride == 1:
            sums(acc, row, first, count, 1, taps, dilation, True)
        else:
            sums(acc, row, first, count, 2, taps, dilation, True)

    rng = np.random.default_rng(3)
    checked = 0
    for n in (1, 5, 15, 16, 17, 31, 100, 1000, 1029):
        for where in ("after", "before"):
            values = (rng.standard_normal(n) * 4).astype(np.float32)
            for code, formula in ((_vector_math.EXP, np.exp), (_vector_math.SIGMOID, lambda v: 1 / (1 + np.exp(-v)))):
                for stream in (False, True):
                    x, out = guarded(n, where), guarded(n, "before" if where == "after" else "after")
                    x[...] = values
                    apply(code, x, out, stream)
                    want = formula(values.astype(np.float64))
                    assert np.all(np.abs(out - want) <= 1e-6 * want), (code, n, where, stream)
                    checked += 1
            for stream in (False, True):
                x, out, following, done = (guarded(n, where) for _ in range(4))
                x[...], following[...], done[...] = values, values[::-1], 1.0
                for offset in range(0, 16, 5):  # the target row's misalignment: a head vector before it
                    space = guarded(n + offset, where)
                    target = space[offset:] if where == "after" else space[:n]
                    m = np.float32(values.max())
                    total, largest = run_pass(x, m, out, n, following, done, np.float32(0.5), target, stream)
                    exps = np.exp(values.astype(np.float64) - m)
                    assert abs(total - exps.sum()) <= 1e-6 * exps.sum() and largest == values.max()
                    assert np.all(target == 0.5), (n, where, offset)
                    checked += 1
            for stride in (1, 2):
                for taps, dilation in ((1, 1), (3, 1), (2, 3)):
                    span = (taps - 1) * dilation + 1
                    count = (n - span) // stride + 1
                    if count < 1:
                        continue
                    row, acc = guarded(n, where), guarded(count, where)
                    row[...] = values
                    run_sums(acc, row, 0, count, stride, taps, dilation)  # the last column read is the row's last
                    starts = stride * np.arange(count)
                    want = sum(values[starts + k * dilation].astype(np.float64) for k in range(taps))
                    assert np.allclose(acc, want, rtol=1e-5, atol=1e-5), (n, where, stride, taps)
                    checked += 1
    print("checked", checked)
    """
)


def test_no_lane_outside_the_arrays_is_touched() -> None:
    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=900)
    assert child.returncode == 0, f"exit {child.returncode} (-11: a stray lane faulted)\n{child.stderr[-3000:]}"
    assert child.stdout.split() == ["checked", "316"]
