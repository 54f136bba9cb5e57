"""AVERAGE_POOLING's row sums on 64-byte vectors (``cpu/_vector_windows.py``).

Oracle: the window sum written as a Python loop over float32 values, each addition rounded
to float32 in the scalar kernel's order (``(((s + r[c]) + r[c + d]) + ...)``), so the vector
sums must match it bit for bit. Through the backend, AVERAGE_POOLING is checked against the
reference in test_cpu_pooling_neighbours.py.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from dmlops.cpu import _vector_math, _vector_windows


def _oracle(
    acc: np.ndarray, row: np.ndarray, first: int, count: int, stride: int, taps: int, dilation: int, fresh: bool
) -> np.ndarray:
    out = acc.copy()
    for j in range(count):
        total = np.float32(0.0) if fresh else acc[j]
        for kw in range(taps):
            total = np.float32(total + row[first + stride * j + kw * dilation])
        out[j] = total
    return out


def _kernel():  # type: ignore[no-untyped-def]
    from numba import njit

    sums = _vector_windows.row_window_sums()

    @njit
    def call(acc, row, first, count, stride, taps, dilation, fresh):  # type: ignore[no-untyped-def]
        if stride == 1:
            sums(acc, row, first, count, 1, taps, dilation, fresh)
        else:
            sums(acc, row, first, count, 2, taps, dilation, fresh)

    return call


@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("taps", [1, 2, 3, 5])
@pytest.mark.parametrize("dilation", [1, 2])
@pytest.mark.parametrize("count", [1, 15, 16, 17, 33, 56])
def test_row_sums_match_the_scalar_order(stride: int, taps: int, dilation: int, count: int) -> None:
    call = _kernel()
    rng = np.random.default_rng(count * 7 + taps)
    first = 3
    width = first + stride * (count - 1) + (taps - 1) * dilation + 1  # the last column read is the row's last
    row = (rng.standard_normal(width) * np.exp(rng.uniform(-8, 8, width))).astype(np.float32)
    row[rng.choice(width, width // 8)] = -0.0
    for fresh in (True, False):
        acc = np.full(count + 16, 5.5, np.float32)
        acc[:count] = rng.standard_normal(count).astype(np.float32)
        want = _oracle(acc, row, first, count, stride, taps, dilation, fresh)
        call(acc, row, first, count, stride, taps, dilation, fresh)
        assert np.array_equal(acc.view(np.uint32), want.view(np.uint32))  # past count: untouched (5.5)


def test_the_vectors_are_used_here() -> None:
    """On this CI's CPUs (AVX-512) the intrinsic builds its vector loop, not the scalar fallback."""
    if not _vector_math.available():
        pytest.skip("the CPU has no AVX-512F")
    call = _kernel()
    acc, row = np.zeros(32, np.float32), np.arange(80, dtype=np.float32)
    call(acc, row, 0, 32, 2, 3, 1, True)
    assert np.array_equal(acc, 3 * (2 * np.arange(32) + 1).astype(np.float32))
    asm = "".join(call.inspect_asm().values())  # (the test's own function is never cached)
    assert "zmm" in asm and "%k" in asm  # 64-byte vectors and lane masks: the vector loop, not the scalar one
