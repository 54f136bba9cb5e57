"""Case-building helpers shared by the reduction family's backend tests (test_cpu_reduction,
test_cuda_reduction): seeded generators, data types, axis sets, a bitwise comparison and
the float sums' order bound. Importable without numba or a GPU."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from dmlops.enums import TensorDataType


def rng_for(*key: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def dtype_of(name: str) -> np.dtype[Any]:
    return np.dtype(TensorDataType.from_any(name).numpy_dtype)


def same(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Elementwise: equal bits, or both NaN."""
    if got.dtype.kind != "f":
        return got == expected
    bits = np.dtype(f"u{got.dtype.itemsize}")
    return (got.view(bits) == expected.view(bits)) | (np.isnan(got) & np.isnan(expected))


def random_axes(rng: np.random.Generator, ndim: int) -> list[int]:
    """Unsorted, sometimes repeated, sometimes empty or every axis."""
    pick = rng.random()
    if pick < 0.1:
        return []
    if pick < 0.25:
        return [int(a) for a in rng.permutation(ndim)]
    axes = [int(a) for a in rng.choice(ndim, int(rng.integers(1, ndim + 1)), replace=False)]
    if rng.random() < 0.3:
        axes.append(axes[0])
    return axes


# -- the float sums' tolerance -------------------------------------------------------------


def to_end(x: np.ndarray, axes: list[int]) -> np.ndarray:
    """(kept elements, reduced elements) in the reference's order."""
    red = sorted(set(axes))
    kept = [i for i in range(x.ndim) if i not in red]
    moved = np.transpose(x, kept + red)
    return moved.reshape(-1, int(np.prod([x.shape[i] for i in red], dtype=np.int64)))


def sum_interval(
    function: str, rows: np.ndarray, out_dtype: np.dtype[Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, ill-conditioned) bounds of every row's result on the GPU.

    Both backends add the same float64 terms t (the reference's: x, |x|, x^2, or float32
    exp(x)) in different orders; each float64 sum of R terms is within (R - 1) 2^-53
    sum(|t|) of the exact one, so the two differ by at most E = R 2^-52 sum(|t|) (plus, for
    LOG_SUM_EXP, one float32 ulp per term where the two exp functions round differently).
    The monotonic steps after the sum (/ R, float32 rounding then sqrt or log, rounding to
    the output type) map [S - E, S + E] onto the bounds, widened by one output ulp for the
    last float64 bit of sqrt / log / exp. MULTIPLY: the products agree to a relative
    2 R 2^-53 unless some order could overflow or underflow float64 (then ill-conditioned:
    anything goes). A sum whose bound reaches below 0 under a log is ill-conditioned too.
    """
    x = rows.astype(np.float64)
    n = x.shape[-1]
    with np.errstate(all="ignore"):
        if function == "MULTIPLY":
            p = x.prod(axis=-1)
            finite = np.isfinite(x) & (x != 0)
            logs = np.where(finite, np.log2(np.abs(np.where(finite, x, 1.0))), 0.0)
            ill = (np.where(logs > 0, logs, 0).sum(axis=-1) > 1000) | (np.where(logs < 0, logs, 0).sum(axis=-1) < -1000)
            e = np.abs(p) * 2 * n * 2.0**-53
            lo, hi = p - e, p + e
        else:
            t = {"L1": np.abs(x), "L2": x * x, "SUM_SQUARE": x * x}.get(function, x)
            if function == "LOG_SUM_EXP":
                t = np.exp(x).astype(np.float32).astype(np.float64)
            s = t.sum(axis=-1) + 0.0
            a = np.abs(t).sum(axis=-1)
            e = n * 2.0**-52 * a + (2.0**-23 * a if function == "LOG_SUM_EXP" else 0.0)
            lo, hi = s - e, s + e
            ill = np.zeros(s.shape, bool)
            if function == "AVERAGE":
                lo, hi = lo / n, hi / n
            if function in ("L2", "LOG_SUM", "LOG_SUM_EXP"):
                lo32, hi32 = lo.astype(np.float32).astype(np.float64), hi.astype(np.float32).astype(np.float64)
                post = np.sqrt if function == "L2" else np.log
                ill = function != "L2" and (lo32 <= 0) & (hi32 >= 0)
                lo, hi = post(lo32), post(hi32)
        lo_out = np.nextafter(lo.astype(out_dtype), out_dtype.type(-np.inf))
        hi_out = np.nextafter(hi.astype(out_dtype), out_dtype.type(np.inf))
    return lo_out, hi_out, np.asarray(ill)


def within_sum_bound(
    function: str, data: np.ndarray, axes: list[int], got: np.ndarray, expected: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(agrees, low, high) per output element of a REDUCE float sum, in row-major order.

    An element agrees when it equals the reference's bit for bit (NaN equal to NaN), lies
    finite inside :func:`sum_interval`'s bounds, or its row is ill-conditioned.
    """
    lo, hi, ill = sum_interval(function, to_end(data, axes), expected.dtype)
    finite = np.isfinite(expected.astype(np.float64))
    with np.errstate(invalid="ignore"):
        inside = finite & (got >= lo) & (got <= hi)
    return same(got, expected) | inside | ill, lo, hi
