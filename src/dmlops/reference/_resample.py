"""The separable resample shared by RESAMPLE2 (forward) and RESAMPLE_GRAD1 (transpose).

The N-D map is a product of one 1-D map per dimension, and each 1-D map has at most
two taps per output index. So both operators apply one sparse 1-D operator per axis:
the forward gathers (``np.take``) and weights, the transpose scatter-adds with
``np.add.reduceat`` over the runs of equal indices (tap indices never decrease with
``o``, because ``x(o)`` is monotone even after float32 rounding). Memory stays
proportional to the tensors: no dense input-by-output matrix is ever built, and the
axes are processed shrinking ones first, so no intermediate is larger than the
larger of the two tensors.

Numerics: coordinates in float32 (:func:`dmlops.descs._resample.input_coordinates`),
weights and sums in float64, rounded once when stored. NEAREST_NEIGHBOR forward is pure
data movement and keeps the input dtype (bit-exact).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ..descs.resample2 import Resample2Desc
from ..descs.resample_grad1 import ResampleGrad1Desc
from ..enums import AxisDirection, InterpolationMode
from ..memory import check_allocation

ResampleDesc = Resample2Desc | ResampleGrad1Desc
Weights = NDArray[np.float64]
Tap = tuple[NDArray[np.intp], Weights | None]
"""(input index per output index, weight per output index or None for weight 1)."""


def axis_taps(
    coordinates: NDArray[np.float32], size: int, mode: InterpolationMode, direction: AxisDirection
) -> list[Tap]:
    """The taps of one dimension for every output index.

    Parameters
    ----------
    coordinates : ndarray of float32
        ``x(o)`` for each output index.
    size : int
        The input size ``n`` along this dimension.
    mode, direction
        InterpolationMode and RoundingDirection.

    Returns
    -------
    list of (indices, weights)
        One tap for NEAREST_NEIGHBOR (weight None = 1), two for LINEAR.
    """
    x = coordinates.astype(np.float64)
    last = size - 1
    if mode is InterpolationMode.NEAREST_NEIGHBOR:
        # DECREASING = floor, INCREASING = ceil; then clamp to the edge. Clamping the
        # float first keeps +-inf coordinates (overflowed quotients) defined.
        rounded = np.floor(x) if direction is AxisDirection.DECREASING else np.ceil(x)
        return [(np.clip(rounded, 0, last).astype(np.intp), None)]
    # LINEAR: taps clamp(i0) with 1 - f and clamp(i0 + 1) with f. Limiting x to [-1, n]
    # first changes no tap (both taps are already clamped to the same edge element
    # beyond it) and keeps +-inf defined.
    x = np.clip(x, -1.0, float(size))
    i0 = np.floor(x)
    f = x - i0  # exact: x has 24 significant bits
    idx0 = np.clip(i0, 0, last).astype(np.intp)
    idx1 = np.clip(i0 + 1, 0, last).astype(np.intp)
    return [(idx0, 1.0 - f), (idx1, f)]


def desc_taps(desc: ResampleDesc) -> list[list[Tap]]:
    """The taps of every dimension of a RESAMPLE2 / RESAMPLE_GRAD1 desc."""
    sizes = desc.forward_input_sizes
    return [
        axis_taps(desc.input_coordinates(d), sizes[d], desc.interpolation_mode, desc.rounding_direction)
        for d in range(desc.dimension_count)
    ]


def _axis_order(source: Sequence[int], target: Sequence[int]) -> list[int]:
    """Axes in the order that keeps intermediates small: shrinking ones first."""
    return sorted(range(len(source)), key=lambda d: target[d] / source[d])


def _along(weights: NDArray[np.float64], axis: int, ndim: int) -> NDArray[np.float64]:
    shape = [1] * ndim
    shape[axis] = -1
    return weights.reshape(shape)


def _take(a: NDArray[Any], indices: NDArray[np.intp], axis: int) -> NDArray[Any]:
    """``np.take(a, indices, axis)`` by indexing, which reads a strided view in place.

    ``np.take`` first copies a non-contiguous array whole, which for a broadcast view
    (stride 0) means its full logical size.
    """
    return a[(slice(None),) * axis + (indices,)]


def _weighted(values: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """``values * weights`` where a weight of exactly 0 contributes 0 even against Inf/NaN."""
    with np.errstate(invalid="ignore"):
        product = values * weights
    if not np.all(weights):
        product = np.where(weights == 0, 0.0, product)
    return product


def _is_identity(taps: list[Tap], n_in: int, n_out: int) -> bool:
    if n_in != n_out:
        return False
    idx, w = taps[0]
    if not np.array_equal(idx, np.arange(n_in)):
        return False
    if w is None:
        return True
    # linear: first tap weight 1 everywhere means the second has weight 0 everywhere
    return bool(np.all(w == 1.0))


def resample(x: NDArray[Any], desc: ResampleDesc) -> NDArray[Any]:
    """The forward map: ``x`` has the forward input sizes, the result the output sizes.

    NEAREST_NEIGHBOR returns ``x``'s dtype (a gather); LINEAR returns float64.
    """
    taps = desc_taps(desc)
    source, target = desc.forward_input_sizes, desc.forward_output_sizes
    nearest = desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR
    # ``x`` is read in place (it may be a broadcast view far larger than its buffer): each
    # pass gathers its taps first, so arrays grow only as the output does. The float64
    # weights promote each gathered value exactly, as converting ``x`` first would.
    a: NDArray[Any] = x
    for d in _axis_order(source, target):
        if _is_identity(taps[d], source[d], target[d]):
            continue
        grown = math.prod(a.shape) // max(a.shape[d], 1) * target[d]
        check_allocation(grown * 8 * (1 if nearest else 3), f"{desc.dml_name}: resampling along dimension {d}")
        if nearest:
            a = _take(a, taps[d][0][0], d)
            continue
        (idx0, w0), (idx1, w1) = taps[d]  # linear taps always carry weights
        a = _weighted(_take(a, idx0, d), _along(cast(Weights, w0), d, a.ndim)) + _weighted(
            _take(a, idx1, d), _along(cast(Weights, w1), d, a.ndim)
        )
    return np.asarray(a) if nearest else np.asarray(a, dtype=np.float64)


def _scatter_add_sorted(
    result: NDArray[np.float64], indices: NDArray[np.intp], contributions: NDArray[np.float64]
) -> None:
    """``result[indices[k]] += contributions[k]`` along axis 0, summing in order of ``k``."""
    if indices.size == 0:
        return
    if np.any(indices[1:] < indices[:-1]):  # never for resample taps; kept for safety
        np.add.at(result, indices, contributions)
        return
    starts = np.flatnonzero(np.concatenate(([True], indices[1:] != indices[:-1])))
    result[indices[starts]] += np.add.reduceat(contributions, starts, axis=0)


def resample_transpose(g: NDArray[Any], desc: ResampleDesc) -> NDArray[np.float64]:
    """The transpose: ``g`` has the forward output sizes, the result the input sizes (float64)."""
    taps = desc_taps(desc)
    source, target = desc.forward_input_sizes, desc.forward_output_sizes
    check_allocation(g.size * 8, f"{desc.dml_name}: the gradient in float64")
    a: NDArray[np.float64] = g.astype(np.float64)
    # The transpose maps target -> source sizes: shrink first again.
    for d in _axis_order(target, source):
        if _is_identity(taps[d], source[d], target[d]):
            continue
        moved = np.moveaxis(a, d, 0)
        result = np.zeros((source[d], *moved.shape[1:]), dtype=np.float64)
        for idx, w in taps[d]:
            contributions = moved if w is None else _weighted(moved, _along(w, 0, moved.ndim))
            _scatter_add_sorted(result, idx, contributions)
        a = np.moveaxis(result, 0, d)
    return a
