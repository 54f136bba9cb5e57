"""Scalar-loop oracle for GATHER, straight from the page's size rule and pseudo-code.

``output[...] = input[..., indices[...], ...]``: every output coordinate is lifted to
the un-aligned ("full") coordinate, split into pre / mid / post, and one input element
is read per output element. Index values are handled as Python ints (so UINT64 values
above 2^63 stay positive), wrapped once when negative for signed types from FL 3_0,
then clamped per axis (ruling 2).
"""

from __future__ import annotations

import itertools

import numpy as np


def gather_oracle(
    x: np.ndarray,
    indices: np.ndarray,
    axis: int,
    index_dimensions: int,
    output_sizes,
    *,
    wrap_negative: bool | None = None,
) -> np.ndarray:
    """x, indices: logical arrays of the same rank D; output_sizes: OutputTensor.Sizes."""
    d = x.ndim
    k = index_dimensions
    assert indices.ndim == d and len(output_sizes) == d
    if wrap_negative is None:
        wrap_negative = indices.dtype.kind == "i"
    n = x.shape[axis]
    full_len = d + k - 1  # Axis + IndexDimensions + (D - Axis - 1)
    out = np.empty(tuple(output_sizes), dtype=x.dtype)
    for coord in itertools.product(*(range(s) for s in output_sizes)):
        # right-alignment: dropped leading entries had size 1 (coordinate 0); when the full
        # form is shorter (IndexDimensions 0), the output's leading 1 is not part of it.
        if full_len >= d:
            full = (0,) * (full_len - d) + coord
        else:
            assert coord[0] == 0
            full = coord[d - full_len :]
        pre, mid, post = full[:axis], full[axis : axis + k], full[axis + k :]
        index_coord = (0,) * (d - k) + tuple(mid)
        value = int(indices[index_coord])
        if wrap_negative and value < 0:
            value += n
        value = min(max(value, 0), n - 1)
        out[coord] = x[(*pre, value, *post)]
    return out


def expected_output_sizes(input_sizes, indices_sizes, axis: int, index_dimensions: int) -> tuple[int, ...] | None:
    """The page's OutputTensor.Sizes, or None when the overflowing entries are not all 1."""
    d = len(input_sizes)
    full = [*input_sizes[:axis], *indices_sizes[d - index_dimensions :], *input_sizes[axis + 1 :]]
    while len(full) > d:
        if full[0] != 1:
            return None
        full.pop(0)
    while len(full) < d:
        full.insert(0, 1)
    return tuple(full)
