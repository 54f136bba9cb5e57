"""Scalar-loop oracle for GATHER, straight from the page's size rule and DirectML's read rule.

``output[...] = input[..., indices[...], ...]``: every output coordinate is lifted to
the un-aligned ("full") coordinate, split into pre / mid / post, and one input element
is read per output element. The read follows DirectML 1.15.4 (erratum E41): index
values are Python ints (UINT64 values of 2^63 and more read as INT64: negative), wrapped
once when negative for signed types from FL 3_0 and UINT64; then the element address ``sum(c_i *
Strides_i)`` (the raw index along the axis) is taken modulo 2^32 and clamped to the last
element of the bound buffer (TotalTensorSizeInBytes, at least the addressed span,
rounded up to 4 bytes), which holds the caller's flat buffer, or the logical elements
stored through the strides into zeros. With IndexDimensions 0, the output's leading
coordinate adds ``o0 * element count`` (Strides NULL) or nothing (Strides given).
Written without dmlops (no desc, no strided helper): every address is computed here.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def _packed(sizes) -> list[int]:
    strides = [1] * len(sizes)
    for i in range(len(sizes) - 2, -1, -1):
        strides[i] = strides[i + 1] * sizes[i + 1]
    return strides


def oracle_memory(x: np.ndarray, strides=None, *, buffer: np.ndarray | None = None, total_bytes: int = 0) -> list:
    """The bound buffer's elements, as a list: ``buffer`` (flat) or ``x`` stored through ``strides``."""
    sizes = x.shape
    element_strides = list(strides) if strides is not None else _packed(sizes)
    span = sum((s - 1) * st for s, st in zip(sizes, element_strides)) + 1
    item = x.dtype.itemsize
    count = ((max(total_bytes, span * item) + 3) // 4 * 4) // item
    memory = [x.dtype.type(0)] * count
    if buffer is not None:
        for a in range(min(count, buffer.size)):
            memory[a] = buffer[a]
    else:
        for coord in itertools.product(*(range(s) for s in sizes)):
            memory[sum(c * st for c, st in zip(coord, element_strides))] = x[coord]
    return memory


def gather_oracle(
    x: np.ndarray,
    indices: np.ndarray,
    axis: int,
    index_dimensions: int,
    output_sizes,
    *,
    wrap_negative: bool | None = None,
    strides=None,
    buffer: np.ndarray | None = None,
    total_bytes: int = 0,
) -> np.ndarray:
    """x, indices: logical arrays of the same rank D; output_sizes: OutputTensor.Sizes.

    ``strides``: InputTensor.Strides in elements (None: NULL, packed); ``buffer``: the
    flat buffer the caller passed (else ``x`` is the logical array); ``total_bytes``:
    TotalTensorSizeInBytes when larger than the minimum.
    """
    d = x.ndim
    k = index_dimensions
    assert indices.ndim == d and len(output_sizes) == d
    if wrap_negative is None:
        wrap_negative = indices.dtype.kind == "i"
    n = x.shape[axis]
    element_strides = list(strides) if strides is not None else _packed(x.shape)
    extra_stride = math.prod(x.shape) if strides is None else 0
    memory = oracle_memory(x, strides, buffer=buffer, total_bytes=total_bytes)
    full_len = d + k - 1  # Axis + IndexDimensions + (D - Axis - 1)
    out = np.empty(tuple(output_sizes), dtype=x.dtype)
    for coord in itertools.product(*(range(s) for s in output_sizes)):
        # right-alignment: dropped leading entries read coordinate 0; when the full form
        # is shorter (IndexDimensions 0), the output's leading coordinate is not part of it.
        extra = 0
        if full_len >= d:
            full = (0,) * (full_len - d) + coord
        else:
            extra = coord[0] * extra_stride
            full = coord[d - full_len :]
        pre, mid, post = full[:axis], full[axis : axis + k], full[axis + k :]
        index_coord = (0,) * (d - k) + tuple(mid)
        value = int(indices[index_coord])
        if indices.dtype == np.uint64 and value >= 2**63:
            value -= 2**64  # DirectML reads UINT64 indices as INT64, and wraps them once
        if (wrap_negative or indices.dtype == np.uint64) and value < 0:
            value += n
        input_coord = (*pre, value, *post)
        address = extra + sum(c * st for c, st in zip(input_coord, element_strides))
        address = min(address % 2**32, len(memory) - 1)
        out[coord] = memory[address]
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
