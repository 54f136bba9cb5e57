"""Resampling in NumPy: RESAMPLE2, RESAMPLE_GRAD1 and the generic neighbours.

RESAMPLE, RESAMPLE1 and UPSAMPLE_2D run as the equivalent RESAMPLE2 desc
(``compute_resample1``, :func:`dmlops.descs.resampling.resample2_equivalent`), RESAMPLE_GRAD
as the equivalent RESAMPLE_GRAD1 (``compute_resample_grad``); VALUE_SCALE_2D
(``compute_value_scale_2d``) is a per-channel scale and bias.

Shared helpers
--------------
RESAMPLE2 (forward) and RESAMPLE_GRAD1 (transpose) in NumPy.

The N-D map is a product of one 1-D map per dimension, each with at most two taps per
output index (:mod:`dmlops.descs.resampling` holds the tap rules, DirectML's included).

* NEAREST_NEIGHBOR forward is a gather per axis (bit-exact, any dtype).
* LINEAR forward follows DirectML's arithmetic: for each output element, the corners
  of its taps are interpolated one dimension after the other, outermost first, as
  ``a + (b - a) * t`` in float32 (erratum E33). The corners are gathered straight into
  the output's shape, so memory stays a few output-sized arrays.
* The transpose scatter-adds per axis with ``np.add.reduceat`` over the runs of equal
  indices (tap indices never decrease with ``o``), weights and sums in float64, rounded
  once when stored; the axes are processed shrinking ones first, so no intermediate is
  larger than the larger of the two tensors.

RESAMPLE2
---------
RESAMPLE2 in NumPy: the separable forward resample.

RESAMPLE_GRAD1
--------------
RESAMPLE_GRAD1 in NumPy: the transpose of RESAMPLE2.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.resampling import (
    Resample2Desc,
    ResampleDesc,
    ResampleGrad1Desc,
    Tap,
    desc_taps,
    resample2_equivalent,
    resample_grad1_equivalent,
    validate_generic,
    value_scale_terms,
)
from ..enums import FeatureLevel, InterpolationMode
from ..memory import check_allocation

# -- Shared helpers ------------------------------------------------------------


def _axis_order(source: Sequence[int], target: Sequence[int]) -> list[int]:
    """Axes in the order that keeps intermediates small: shrinking ones first."""
    return sorted(range(len(source)), key=lambda d: target[d] / source[d])


def _along(weights: NDArray[Any], axis: int, ndim: int) -> NDArray[Any]:
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


def _gather_axes(x: NDArray[Any], indices: Sequence[NDArray[np.intp]]) -> NDArray[Any]:
    """``x`` gathered along every axis (NEAREST_NEIGHBOR), shrinking axes first.

    ``x`` is read in place (it may be a broadcast view far larger than its buffer): each
    pass gathers, so arrays grow only as the output does.
    """
    a = x
    for d in sorted(range(x.ndim), key=lambda d: indices[d].size / max(x.shape[d], 1)):
        idx = indices[d]
        if idx.size == a.shape[d] and np.array_equal(idx, np.arange(idx.size)):
            continue
        check_allocation(
            math.prod(a.shape) // max(a.shape[d], 1) * idx.size * a.itemsize, f"resampling along dimension {d}"
        )
        a = _take(a, idx, d)
    return a


def resample(x: NDArray[Any], desc: ResampleDesc) -> NDArray[Any]:
    """The forward map: ``x`` has the forward input sizes, the result the output sizes.

    NEAREST_NEIGHBOR returns ``x``'s dtype (a gather). LINEAR returns float32: DirectML
    interpolates one dimension after the other, outermost first, as ``a + (b - a) * t``
    in float32 (so an infinite tap gives NaN and values near FLT_MAX may overflow, as on
    DirectML; erratum E33); dimensions whose map is the identity are only gathered.
    """
    if desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR:
        return _gather_axes(x, [taps[0][0] for taps in desc_taps(desc)])
    axes = desc.linear_axes()
    out_shape = tuple(axis.first.size for axis in axes)
    # Corner values are gathered straight into the output's shape, so memory stays a few
    # output-sized arrays whatever the sizes (no intermediate grows along one axis while
    # another still has to shrink).
    check_allocation(math.prod(out_shape) * 4 * (2 * len(axes) + 2), f"{desc.dml_name}: interpolating")
    interpolated = [d for d, axis in enumerate(axes) if axis.interpolates]
    grids = [_along(axis.first, d, len(axes)) for d, axis in enumerate(axes)]

    def corner(level: int) -> NDArray[np.float32]:
        # The value after interpolating dimensions interpolated[:level], at the corner
        # the grids currently name for the others: the last lerp taken is the innermost.
        if level == 0:
            return np.broadcast_to(x[tuple(grids)], out_shape).astype(np.float32)
        d = interpolated[level - 1]
        axis = axes[d]
        grids[d] = _along(axis.second, d, len(axes))
        hi = corner(level - 1)
        grids[d] = _along(axis.first, d, len(axes))
        lo = corner(level - 1)
        with np.errstate(over="ignore", invalid="ignore"):
            return lo + (hi - lo) * _along(axis.weight, d, len(axes))  # float32, no fused multiply-add

    return corner(len(interpolated))


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


# -- RESAMPLE2 -----------------------------------------------------------------


def compute_resample2(
    desc: Resample2Desc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``OutputTensor = RESAMPLE2(InputTensor)``.

    NEAREST_NEIGHBOR is a gather and returns the input dtype; LINEAR returns float64,
    which the common store rounds once (nearest even for floats; for INT8/UINT8 half to
    even, then saturated).
    """
    return {"OutputTensor": resample(inputs["InputTensor"], desc)}


# -- RESAMPLE_GRAD1 ------------------------------------------------------------


def compute_resample_grad1(
    desc: ResampleGrad1Desc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``OutputGradient[i] = sum_o w(o, i) * InputGradient[o]``, summed in float64 and rounded once."""
    return {"OutputGradientTensor": resample_transpose(inputs["InputGradientTensor"], desc)}


# -- RESAMPLE, RESAMPLE1, UPSAMPLE_2D (generic descs) ----------------------------------


def compute_resample1(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """RESAMPLE, RESAMPLE1 and UPSAMPLE_2D: the equivalent RESAMPLE2 (NEAREST: ``floor(x + 0.5)``)."""
    validate_generic(desc, feature_level)
    return {"OutputTensor": resample(inputs["InputTensor"], resample2_equivalent(desc))}


# -- RESAMPLE_GRAD (generic desc) ---------------------------------------------------------


def compute_resample_grad(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """RESAMPLE_GRAD: the equivalent RESAMPLE_GRAD1's transpose (NEAREST: of ``floor(x + 0.5)``).

    The rule is :func:`~dmlops.descs.resampling.resample_grad1_equivalent` (erratum E172).
    """
    validate_generic(desc, feature_level)
    return {"OutputGradientTensor": resample_transpose(inputs["InputGradientTensor"], resample_grad1_equivalent(desc))}


# -- VALUE_SCALE_2D ----------------------------------------------------------------------


def compute_value_scale_2d(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``x * Scale + Bias[c]`` in float32, two rounded operations (no fused multiply-add).

    DirectML 1.15.4 agrees bit for bit on FLOAT32 (NaN, infinities, signed zeros and
    subnormals kept, :func:`~dmlops.descs.resampling.value_scale_terms`).
    """
    validate_generic(desc, feature_level)
    scale, bias = value_scale_terms(desc)
    x = inputs["InputTensor"].astype(np.float32)
    with np.errstate(all="ignore"):
        return {"OutputTensor": (x * scale).astype(np.float32) + bias}


OPERATORS: dict[str, Callable[..., Any]] = {
    "RESAMPLE2": compute_resample2,
    "RESAMPLE_GRAD1": compute_resample_grad1,
    "RESAMPLE": compute_resample1,
    "RESAMPLE1": compute_resample1,
    "UPSAMPLE_2D": compute_resample1,
    "VALUE_SCALE_2D": compute_value_scale_2d,
    "RESAMPLE_GRAD": compute_resample_grad,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
