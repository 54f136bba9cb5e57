"""The reduction family in NumPy: REDUCE (every function), ARGMAX, ARGMIN, CUMULATIVE_*, TOP_K, TOP_K1.

The rules each function follows (NaN, ties, integer wrap-around, float32 steps) are
DirectML 1.15.4's, probed and listed in ``descs/reduction.py``. Float sums are taken in
float64 and rounded once when stored (DirectML's float32 order of accumulation depends
on the sizes, see there); the cumulative operators run in the input type, sequentially,
as DirectML does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs import reduction as rules
from ..enums import FeatureLevel
from ..errors import UnsupportedError

Array = NDArray[Any]
F32 = np.float32


def _to_end(x: Array, axes: tuple[int, ...]) -> Array:
    """``x`` with the kept axes first and the reduced ones flattened, row-major in axis order, into the last."""
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, kept + list(axes))
    return moved.reshape([x.shape[i] for i in kept] + [int(np.prod([x.shape[i] for i in axes], dtype=np.int64))])


def _wide(x: Array) -> Any:
    return np.uint64 if x.dtype.kind == "u" else np.int64


def _first_equal(flat: Array, target: Array) -> Array:
    """The element of each row equal to ``target`` met first (keeps the sign of a zero)."""
    first = np.argmax(flat == target[..., None], axis=-1)
    return np.take_along_axis(flat, first[..., None], axis=-1)[..., 0]


def _extreme(flat: Array, largest: bool) -> Array:
    """MAX / MIN of each row: NaN skipped (all NaN: -inf / +inf), the first of equal values kept."""
    if flat.dtype.kind == "f":
        flat = np.where(np.isnan(flat), -np.inf if largest else np.inf, flat).astype(flat.dtype)
    m = flat.max(axis=-1) if largest else flat.min(axis=-1)
    return _first_equal(flat, m) if flat.dtype.kind == "f" else m


def arg_index(flat: Array, largest: bool, decreasing: bool) -> Array:
    """ARGMAX / ARGMIN of each row, as DirectML's scan from the first element.

    INCREASING: the first element strictly greater (less) than the best so far;
    DECREASING: the last one greater (less) or equal. NaN compares false, so a NaN
    first element wins and NaN elsewhere never does.
    """
    if flat.dtype.kind == "f":
        nan = np.isnan(flat)
        best = _extreme(flat, largest)
        hit = (flat == best[..., None]) & ~nan
    else:
        best = flat.max(axis=-1) if largest else flat.min(axis=-1)
        hit = flat == best[..., None]
    n = flat.shape[-1]
    index = n - 1 - np.argmax(hit[..., ::-1], axis=-1) if decreasing else np.argmax(hit, axis=-1)
    if flat.dtype.kind == "f":
        index = np.where(nan[..., 0] | ~hit.any(axis=-1), 0, index)
    return np.asarray(index, dtype=np.int64)


def _sum(x: Array) -> Array:
    """Row sums in float64 from a +0 accumulator, as DirectML's sequential sums: -0s sum to +0."""
    return x.sum(axis=-1) + 0.0


def _float_function(function: str, flat: Array) -> Array:
    x = flat.astype(np.float64)
    if function == "SUM":
        return _sum(x)
    if function == "AVERAGE":
        return _sum(x) / flat.shape[-1]
    if function == "L1":
        return np.abs(x).sum(axis=-1)
    if function == "SUM_SQUARE":
        return (x * x).sum(axis=-1)
    if function == "L2":
        # the sum of squares is a float32 value: beyond 3.4e38 it is inf
        return np.sqrt((x * x).sum(axis=-1).astype(F32).astype(np.float64))
    if function == "LOG_SUM":
        return np.log(x.sum(axis=-1).astype(F32).astype(np.float64))
    if function == "LOG_SUM_EXP":
        # no rescaling by the maximum: each exp and the sum are float32 values (exp(89) is inf)
        e = np.exp(x).astype(F32).astype(np.float64)
        return np.log(e.sum(axis=-1).astype(F32).astype(np.float64))
    if function == "MULTIPLY":
        return x.prod(axis=-1)
    raise AssertionError(function)


def _integer_function(desc: Any, function: str, flat: Array) -> Array:
    wide = _wide(flat)
    if function == "SUM":  # wraps around in the type's width
        return flat.astype(wide).sum(axis=-1, dtype=wide).astype(flat.dtype)
    if function == "MULTIPLY":
        return flat.astype(wide).prod(axis=-1, dtype=wide).astype(flat.dtype)
    raise UnsupportedError(f"{desc.dml_name}: Function {function} takes no integer tensor")


def compute_reduce(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """REDUCE: ``Function`` over the set of ``Axes``, the output keeping size-1 reduced axes."""
    x = np.asarray(inputs["InputTensor"])
    axes = rules.reduced_axes(desc)
    flat = _to_end(x, axes)
    out_sizes = rules.reduced_sizes(x.shape, axes)
    function = desc.function.name
    result: Array
    with np.errstate(all="ignore"):
        if function in rules.ARG_FUNCTIONS:
            result = arg_index(flat, function == "ARGMAX", decreasing=False)
        elif function in ("MAX", "MIN"):
            result = _extreme(flat, function == "MAX")
        elif flat.dtype.kind == "f":
            result = _float_function(function, flat)
        else:
            result = _integer_function(desc, function, flat)
    return {"OutputTensor": np.asarray(result).reshape(out_sizes)}


def compute_arg(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """ARGMAX / ARGMIN: the index over the reduced axes, ties by ``AxisDirection``."""
    x = np.asarray(inputs["InputTensor"])
    axes = rules.reduced_axes(desc)
    largest = desc.operator_type.name == "ARGMAX"
    with np.errstate(all="ignore"):
        index = arg_index(_to_end(x, axes), largest, decreasing=desc.axis_direction.name == "DECREASING")
    return {"OutputTensor": index.reshape(rules.reduced_sizes(x.shape, axes))}


def compute_cumulative(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """CUMULATIVE_SUMMATION / CUMULATIVE_PRODUCT: a running tally in the input type, sequential along ``Axis``."""
    x = np.asarray(inputs["InputTensor"])
    axis = int(desc.axis)
    summation = desc.operator_type.name == "CUMULATIVE_SUMMATION"
    exclusive = bool(desc.has_exclusive_sum if summation else desc.has_exclusive_product)
    decreasing = desc.axis_direction.name == "DECREASING"
    y = np.flip(x, axis) if decreasing else x
    op = np.add if summation else np.multiply
    with np.errstate(all="ignore"):
        tally = op.accumulate(y, axis=axis, dtype=x.dtype)
        if summation and x.dtype.kind == "f":
            tally = tally + x.dtype.type(0)  # the tally starts from +0: a sum of -0s is +0
    if exclusive:
        first = np.full_like(np.take(tally, [0], axis=axis), 0 if summation else 1)
        tally = np.concatenate([first, np.take(tally, range(x.shape[axis] - 1), axis=axis)], axis=axis)
    return {"OutputTensor": np.flip(tally, axis) if decreasing else tally}


def top_k_order(x: Array, k: int, largest: bool) -> Array:
    """Indices of the ``k`` largest (smallest) elements of each last-axis row, equal values by ascending index."""
    n = x.shape[-1]
    if largest:
        # a stable ascending sort of the reversed row, read backwards: descending, ties by ascending index
        order = n - 1 - np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    else:
        order = np.argsort(x, axis=-1, kind="stable")
    return order[..., :k]


def compute_top_k(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """TOP_K / TOP_K1: the ``K`` largest (TOP_K, TOP_K1 DECREASING) or smallest values along ``Axis``."""
    x = np.asarray(inputs["InputTensor"])
    axis, k = int(desc.axis), int(desc.k)
    largest = desc.operator_type.name == "TOP_K" or desc.axis_direction.name == "DECREASING"
    moved = np.moveaxis(x, axis, -1)
    order = top_k_order(moved, k, largest)
    values = np.take_along_axis(moved, order, axis=-1)
    return {
        "OutputValueTensor": np.moveaxis(values, -1, axis),
        "OutputIndexTensor": np.moveaxis(order.astype(np.int64), -1, axis),
    }


OPERATORS: dict[str, Callable[..., Any]] = {
    "REDUCE": compute_reduce,
    "ARGMAX": compute_arg,
    "ARGMIN": compute_arg,
    "CUMULATIVE_SUMMATION": compute_cumulative,
    "CUMULATIVE_PRODUCT": compute_cumulative,
    "TOP_K": compute_top_k,
    "TOP_K1": compute_top_k,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
