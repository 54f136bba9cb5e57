"""Case-building helpers shared by the reduction family's backend tests (test_cpu_reduction,
test_cuda_reduction): seeded generators, data types, axis sets and a bitwise comparison.
Importable without numba or a GPU."""

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
