"""Scalar-loop oracle for SLICE1, straight from the page's pseudo-code."""

from __future__ import annotations

import itertools

import numpy as np


def slice1_oracle(x: np.ndarray, offsets, sizes, strides, output_sizes) -> np.ndarray:
    # CopyStart = InputWindowOffsets; if InputWindowStrides[i] < 0: CopyStart[i] += InputWindowSizes[i] - 1
    copy_start = [o + (s - 1 if st < 0 else 0) for o, s, st in zip(offsets, sizes, strides)]
    out = np.empty(tuple(output_sizes), dtype=x.dtype)
    for coord in itertools.product(*(range(n) for n in output_sizes)):
        # OutputTensor[OutputCoordinates] = InputTensor[CopyStart + InputWindowStrides * OutputCoordinates]
        src = tuple(c0 + st * c for c0, st, c in zip(copy_start, strides, coord))
        out[coord] = x[src]
    return out
