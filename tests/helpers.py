"""Small helpers shared by the operator test modules."""

from __future__ import annotations

import numpy as np

from dmlops.enums import TensorDataType

ALL_DTYPES = [
    np.float64, np.float32, np.float16,
    np.int64, np.int32, np.int16, np.int8,
    np.uint64, np.uint32, np.uint16, np.uint8,
]  # fmt: skip


def random_array(rng: np.random.RandomState, shape, dtype) -> np.ndarray:
    """Distinct-ish values of any dtype (JAX's rand_unique_int spirit for small tensors)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "f":
        values = rng.permutation(n).astype(np.float64) - n // 2 + rng.uniform(0, 0.5, size=n).round(3)
    elif dtype.kind == "u":
        values = rng.permutation(n) % min(int(np.iinfo(dtype).max) + 1, 2**62)
    else:
        lo = max(np.iinfo(dtype).min, -(n // 2))
        values = (rng.permutation(n) + lo) % 128 if dtype.itemsize == 1 else rng.permutation(n) + lo
    return values.astype(dtype).reshape(shape)


def data_type(dtype) -> TensorDataType:
    return TensorDataType.from_numpy(dtype)
