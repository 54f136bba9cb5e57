"""The cpu backend's 64-byte-vector line reductions (``cpu/_vector_lines.py``) against Python oracles.

Sums of integer-valued float32 elements are exact in float64 in any order, so they must
equal ``math.fsum`` exactly; extremes must equal the largest (smallest) non-NaN element,
-inf (+inf) when there is none, with either sign for a zero result (callers look up the
line's first zero). Only whole steps are read: elements after them must not count.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("numba")

from numba import njit

from dmlops.cpu._vector_lines import STEP, line_extreme, line_sum

SUM = line_sum()
EXTREME = line_extreme()


@njit(cache=False)
def _sum(a, start, count):  # type: ignore[no-untyped-def]
    return SUM(a, start, count)


@njit(cache=False)
def _extreme(a, start, count, largest):  # type: ignore[no-untyped-def]
    return EXTREME(a, start, count, True) if largest else EXTREME(a, start, count, False)


@pytest.mark.parametrize("count", [0, STEP - 1, STEP, 3 * STEP + 5, 40 * STEP])
@pytest.mark.parametrize("start", [0, 1, 7])
def test_line_sum_is_exact_on_integer_valued_floats(start: int, count: int) -> None:
    rng = np.random.default_rng(count * 31 + start)
    a = rng.integers(-(2**20), 2**20, start + count + STEP).astype(np.float32)
    a[start : start + count : 5] *= np.float32(2.0**12)  # every partial sum stays an integer below 2^53: exact
    whole = count // STEP * STEP
    assert _sum(a, start, count) == math.fsum(a[start : start + whole].astype(np.float64))


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("count", [0, STEP, 3 * STEP + 5])
@pytest.mark.parametrize("start", [0, 5])
def test_line_extreme_skips_nan_and_reads_whole_steps(largest: bool, count: int, start: int) -> None:
    rng = np.random.default_rng(count + largest + 7 * start)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5], np.float32)
    whole = count // STEP * STEP
    for trial in range(40):
        a = rng.choice(specials, count + 3) if trial % 2 else rng.standard_normal(count + 3).astype(np.float32)
        if trial % 5 == 0:
            a[:] = np.nan  # no number at all
        a[whole:] = np.inf if largest else -np.inf  # after the whole steps: must not count
        part = a[:whole][~np.isnan(a[:whole])]
        want = (part.max() if largest else part.min()) if part.size else np.float32(-np.inf if largest else np.inf)
        a = np.concatenate([np.full(start, np.inf if largest else -np.inf, np.float32), a])  # before start: not read
        for view in (a, a.view(np.int32)):
            got = np.array(_extreme(view, start, count, largest), np.int32).view(np.float32)
            assert got == want  # +0 == -0: a zero's sign is the caller's to settle
            assert not np.isnan(got)
