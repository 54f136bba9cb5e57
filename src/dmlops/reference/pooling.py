"""Pooling in NumPy: MAX_POOLING2, MAX_POOLING_GRAD.

Shared helpers
--------------
Max-pooling argmax in NumPy, shared by MAX_POOLING2 and MAX_POOLING_GRAD.

The window is scanned one offset ``k`` at a time (row-major over the window, so in
increasing logical input index), each offset as one gather over every output
position at once; a running maximum keeps the first element that beats it. The rule
is DirectML's, measured on DirectML 1.15.4 (erratum E26): the running maximum starts
at the type's lowest finite value, not at the first element, so NaN and -inf never
win.

MAX_POOLING2
------------
MAX_POOLING2 in NumPy: windowed maximum and its linear index (bit-exact data movement).

MAX_POOLING_GRAD
----------------
MAX_POOLING_GRAD in NumPy: recompute the forward argmax, scatter-add the gradient there.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.pooling import MaxPooling2Desc, MaxPoolingGradDesc, PoolingWindow
from ..enums import FeatureLevel

# -- Shared helpers ------------------------------------------------------------


def _outer(arrays: Sequence[NDArray[Any]]) -> list[NDArray[Any]]:
    """1-D arrays reshaped to broadcast against each other as the axes of a grid.

    Like ``np.ix_``, but boolean arrays stay masks (``np.ix_`` turns them into positions).
    """
    last = len(arrays) - 1
    return [a.reshape((1,) * i + (-1,) + (1,) * (last - i)) for i, a in enumerate(arrays)]


def lowest(dtype: np.dtype[Any]) -> Any:
    """The value DirectML's running maximum starts from: the type's lowest finite value."""
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def window_argmax(
    x: NDArray[Any], window: PoolingWindow, output_spatial: Sequence[int]
) -> tuple[NDArray[Any], NDArray[np.int64], NDArray[np.bool_]]:
    """Maximum of every pooling window, its row-major linear index into ``x``, and whether it has one.

    Parameters
    ----------
    x : ndarray
        The logical input ``{N, C, [D], H, W}`` (any strided view).
    window : PoolingWindow
        Strides, WindowSize, StartPadding, EndPadding, Dilations.
    output_spatial : sequence of int
        The output's spatial sizes (any: windows past the input are padding only).

    Returns
    -------
    values : ndarray
        ``{N, C, *output_spatial}`` in ``x.dtype``: the running maximum of each window.
    indices : ndarray of int64
        Linear index of each selected element over the whole logical input, treating
        it as a contiguous row-major array (batch and channel included); 0 for a
        window with no in-bounds element.
    nonempty : ndarray of bool
        False where a window holds only padding.

    Notes
    -----
    DirectML's selection rule, in window scan order (erratum E26, overturning ruling 7):

    * padding positions never take part;
    * the running maximum starts at the type's lowest finite value L (-FLT_MAX for
      FLOAT32), with the first in-bounds element's index;
    * an element replaces it only if strictly greater (ties keep the lowest index).

    So NaN never wins (a comparison with NaN is false) and a window of only NaN or
    -inf gives L at its first in-bounds element. A window of only padding gives L at
    index 0. Otherwise the value is the selected element, bit-exact.
    """
    n, c = x.shape[:2]
    in_spatial = x.shape[2:]
    out_shape = (n, c, *output_spatial)
    best = np.full(out_shape, lowest(x.dtype), dtype=x.dtype)
    best_spatial = np.zeros(out_shape, dtype=np.int64)  # flat index within one {D, H, W} image
    have = np.zeros(out_shape, dtype=bool)
    # Per spatial dimension, the input coordinates of window offset k for every output o.
    coords = [
        [np.arange(n_out, dtype=np.int64) * s + k * d - p for k in range(w)]
        for n_out, s, d, p, w in zip(
            output_spatial, window.strides, window.dilations, window.start_padding, window.window_size
        )
    ]
    spatial_strides = [int(np.prod(in_spatial[i + 1 :], dtype=np.int64)) for i in range(len(in_spatial))]
    for offset in itertools.product(*(range(w) for w in window.window_size)):
        per_dim = [coords[i][k] for i, k in enumerate(offset)]
        inside = [(i >= 0) & (i < size) for i, size in zip(per_dim, in_spatial)]
        clipped = [np.clip(i, 0, size - 1) for i, size in zip(per_dim, in_spatial)]
        # Outer products over the spatial output axes, broadcast over N and C.
        valid = functools.reduce(np.logical_and, _outer(inside))
        grid = _outer(clipped)
        flat = np.broadcast_to(sum(g * st for g, st in zip(grid, spatial_strides)), out_shape)
        index: tuple[Any, ...] = (slice(None), slice(None), *grid)
        values = x[index]
        np.copyto(best_spatial, flat, where=valid & ~have)  # the first in-bounds element's index
        with np.errstate(invalid="ignore"):
            take = valid & (values > best)  # False for NaN
        np.copyto(best, values, where=take)
        np.copyto(best_spatial, flat, where=take)
        have |= valid
    image = int(np.prod(in_spatial, dtype=np.int64))
    batch_channel = np.arange(n * c, dtype=np.int64).reshape(n, c, *([1] * len(in_spatial)))
    return best, np.where(have, best_spatial + batch_channel * image, 0), have


# -- MAX_POOLING2 --------------------------------------------------------------


def compute_max_pooling2(
    desc: MaxPooling2Desc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``Output[o] = max over the window of o``; ``OutputIndices[o]`` = its row-major input index.

    The selected element is copied, so every data type (integers, signed zeros) comes
    out bit-exact; a window with nothing above the type's lowest finite value (only
    NaN, -inf or padding) gives that value, as DirectML does. Indices are returned in
    the indices tensor's own type (UINT32 or UINT64); a DML tensor has fewer than 2^32
    elements, so they fit.
    """
    # A zero Dilation changes which elements DirectML scans (PoolingWindow.scanned).
    values, indices, _ = window_argmax(inputs["InputTensor"], desc.window.scanned(), desc.output_tensor.sizes[2:])
    results = {"OutputTensor": values}
    if desc.output_indices_tensor is not None:
        results["OutputIndicesTensor"] = indices.astype(desc.output_indices_tensor.dtype)
    return results


# -- MAX_POOLING_GRAD ----------------------------------------------------------


def compute_max_pooling_grad(
    desc: MaxPoolingGradDesc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``OutputGradient[i] = sum of InputGradient[o] over the windows o whose maximum is i``.

    The argmax is the forward's (MAX_POOLING2 with the same parameters and tie rule).
    The sums are formed in float64 and rounded once when stored; elements no window
    selects are 0. The gradient of a window holding only padding goes nowhere
    (DirectML 1.15.4, erratum E26).
    """
    x = inputs["InputTensor"]
    dy = inputs["InputGradientTensor"]
    _, indices, nonempty = window_argmax(x, desc.window, desc.input_gradient_tensor.sizes[2:])
    weights = np.where(nonempty, np.asarray(dy, dtype=np.float64), 0.0)
    # bincount adds the weights of repeated indices: overlapping windows sum.
    dx = np.bincount(indices.ravel(), weights=weights.ravel(), minlength=x.size)
    return {"OutputGradientTensor": dx.reshape(x.shape)}


OPERATORS: dict[str, Callable[..., Any]] = {
    "MAX_POOLING2": compute_max_pooling2,
    "MAX_POOLING_GRAD": compute_max_pooling_grad,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
