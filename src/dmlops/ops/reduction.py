"""The functional API of the reduction family: REDUCE, ARGMAX, ARGMIN, CUMULATIVE_*, TOP_K, TOP_K1.

Each function builds the operator's generic desc from a NumPy-like array, validates it
and executes it. Reductions keep the reduced axes with size 1, as DirectML does::

    dmlops.reduce(x, "SUM", axes=[1])           # REDUCE, every DML_REDUCE_FUNCTION
    dmlops.argmax(x, axes=[0, 1], axis_direction="DECREASING")
    dmlops.cumulative_summation(x, axis=3, has_exclusive_sum=True)
    values, indices = dmlops.top_k1(x, axis=3, k=2, axis_direction="DECREASING")

``axes=None`` reduces every axis. Index outputs are UINT32 unless ``output_dtype`` /
``index_dtype`` says otherwise (INT32, INT64, UINT32, UINT64 as each page allows).

>>> import numpy as np, dmlops
>>> x = np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], dtype=np.float32)
>>> dmlops.reduce(x, "SUM", axes=[0])
array([[6., 6., 9.]], dtype=float32)
>>> dmlops.argmax(x, axes=[1]).ravel()
array([2, 2, 1], dtype=uint32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import DEFAULT_BACKEND
from ..descs.reduction import reduced_sizes, top_k_sizes
from ..enums import AxisDirection, FeatureLevel, ReduceFunction, TensorDataType
from ..tensor import TensorDesc
from ._common import check_out, generic_desc, input_tensor, int_tuple, run_outputs, run_single_output, wrong_type


def _input(x: Any, function: str, out: Any = None) -> tuple[Any, TensorDesc]:
    """``x`` as ``(array, TensorDesc)``, then ``out`` checked."""
    array, tensor = input_tensor(x, function, what=f"dmlops.{function}: x")
    check_out(out, function)
    return array, tensor


def _axes(axes: Any, rank: int, function: str) -> tuple[int, ...]:
    return tuple(range(rank)) if axes is None else int_tuple(axes, function, "axes")


def _data_type(dtype: Any, default: TensorDataType) -> TensorDataType:
    return default if dtype is None else TensorDataType.from_numpy(np.dtype(dtype))


def _run(operator: str, array: Any, members: dict[str, Any], **run: Any) -> Any:
    """Run ``operator``'s generic desc (``members``) on ``array`` (InputTensor); return its one output."""
    return run_single_output(generic_desc(operator, **members), {"InputTensor": array}, **run)


def _reduced(tensor: TensorDesc, axes: tuple[int, ...], output_dtype: Any, default: TensorDataType) -> TensorDesc:
    """The output of a reduction of ``tensor`` over ``axes``: size 1 on them, ``output_dtype`` or ``default``."""
    return TensorDesc(data_type=_data_type(output_dtype, default), sizes=reduced_sizes(tensor.sizes, tuple(set(axes))))


def _axis(value: Any, function: str, argument: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise wrong_type(function, argument, "an integer", value)
    return int(value)


def reduce(
    x: Any,
    function: ReduceFunction | str | int,
    axes: Any = None,
    *,
    output_dtype: Any = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_OPERATOR_REDUCE: ``function`` (a DML_REDUCE_FUNCTION) over ``axes`` (all when None).

    The output has ``x``'s data type (UINT32 for ARGMAX and ARGMIN) unless ``output_dtype``
    is given, and ``x``'s shape with 1 on the reduced axes.
    """
    array, tensor = _input(x, "reduce", out)
    fn = ReduceFunction.from_any(function)
    axes_t = _axes(axes, tensor.dimension_count, "reduce")
    default = TensorDataType.UINT32 if fn.name in ("ARGMAX", "ARGMIN") else tensor.data_type
    output = _reduced(tensor, axes_t, output_dtype, default)
    members = {"function": fn, "input_tensor": tensor, "output_tensor": output, "axes": axes_t}
    return _run("REDUCE", array, members, backend=backend, feature_level=feature_level, out=out)


def _arg(operator: str, x: Any, axes: Any, axis_direction: Any, output_dtype: Any, **run: Any) -> Any:
    name = operator.lower()
    array, tensor = _input(x, name, run["out"])
    axes_t = _axes(axes, tensor.dimension_count, name)
    members = {
        "input_tensor": tensor,
        "output_tensor": _reduced(tensor, axes_t, output_dtype, TensorDataType.UINT32),
        "axes": axes_t,
        "axis_direction": AxisDirection.from_any(axis_direction),
    }
    return _run(operator, array, members, **run)


def argmax(
    x: Any,
    axes: Any = None,
    *,
    axis_direction: AxisDirection | str | int = "INCREASING",
    output_dtype: Any = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_OPERATOR_ARGMAX: index of the largest element over ``axes`` (counted over those axes only).

    ``axis_direction`` INCREASING returns the first of equal maxima, DECREASING the last.
    """
    return _arg("ARGMAX", x, axes, axis_direction, output_dtype, backend=backend, feature_level=feature_level, out=out)


def argmin(
    x: Any,
    axes: Any = None,
    *,
    axis_direction: AxisDirection | str | int = "INCREASING",
    output_dtype: Any = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_OPERATOR_ARGMIN: index of the smallest element over ``axes``; ties as :func:`argmax`."""
    return _arg("ARGMIN", x, axes, axis_direction, output_dtype, backend=backend, feature_level=feature_level, out=out)


_EXCLUSIVE = {"CUMULATIVE_SUMMATION": "has_exclusive_sum", "CUMULATIVE_PRODUCT": "has_exclusive_product"}
"""The member (and argument) of each cumulative operator that leaves the element itself out."""


def _cumulative(operator: str, x: Any, axis: Any, direction: Any, exclusive: Any, **run: Any) -> Any:
    name, exclusive_member = operator.lower(), _EXCLUSIVE[operator]
    array, tensor = _input(x, name, run["out"])
    if not isinstance(exclusive, (bool, np.bool_)):
        raise wrong_type(name, exclusive_member, "a bool", exclusive)
    members = {
        "input_tensor": tensor,
        "output_tensor": TensorDesc(data_type=tensor.data_type, sizes=tensor.sizes),
        "axis": _axis(axis, name, "axis"),
        "axis_direction": AxisDirection.from_any(direction),
        exclusive_member: bool(exclusive),
    }
    return _run(operator, array, members, **run)


def cumulative_summation(
    x: Any,
    axis: int,
    *,
    axis_direction: AxisDirection | str | int = "INCREASING",
    has_exclusive_sum: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_OPERATOR_CUMULATIVE_SUMMATION: running sums along ``axis`` (exclusive: without the element itself)."""
    return _cumulative(
        "CUMULATIVE_SUMMATION", x, axis, axis_direction, has_exclusive_sum,
        backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def cumulative_product(
    x: Any,
    axis: int,
    *,
    axis_direction: AxisDirection | str | int = "INCREASING",
    has_exclusive_product: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_OPERATOR_CUMULATIVE_PRODUCT: running products along ``axis`` (exclusive: without the element itself)."""
    return _cumulative(
        "CUMULATIVE_PRODUCT", x, axis, axis_direction, has_exclusive_product,
        backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def _top_k(
    operator: str, x: Any, axis: Any, k: Any, direction: Any, index_dtype: Any, backend: str, feature_level: Any
) -> tuple[Any, Any]:
    name = operator.lower()
    array, tensor = _input(x, name)
    axis_i, k_i = _axis(axis, name, "axis"), _axis(k, name, "k")
    sizes = top_k_sizes(tensor.sizes, axis_i, k_i)
    members: dict[str, Any] = {
        "input_tensor": tensor,
        "output_value_tensor": TensorDesc(data_type=tensor.data_type, sizes=sizes),
        "output_index_tensor": TensorDesc(data_type=_data_type(index_dtype, TensorDataType.UINT32), sizes=sizes),
        "axis": axis_i,
        "k": k_i,
    }
    if direction is not None:
        members["axis_direction"] = AxisDirection.from_any(direction)
    desc = generic_desc(operator, **members)
    outputs = ("OutputValueTensor", "OutputIndexTensor")
    values, indices = run_outputs(desc, {"InputTensor": array}, outputs, backend=backend, feature_level=feature_level)
    return values, indices


def top_k(
    x: Any,
    axis: int,
    k: int,
    *,
    index_dtype: Any = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
) -> tuple[Any, Any]:
    """DML_OPERATOR_TOP_K: ``(values, indices)`` of the ``k`` largest elements along ``axis``.

    Largest first; equal values by ascending index.
    """
    return _top_k("TOP_K", x, axis, k, None, index_dtype, backend, feature_level)


def top_k1(
    x: Any,
    axis: int,
    k: int,
    *,
    axis_direction: AxisDirection | str | int = "DECREASING",
    index_dtype: Any = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
) -> tuple[Any, Any]:
    """DML_OPERATOR_TOP_K1: ``(values, indices)`` of the ``k`` largest (DECREASING) or smallest (INCREASING).

    Values sorted in ``axis_direction``'s order; equal values by ascending index either way.
    """
    return _top_k("TOP_K1", x, axis, k, axis_direction, index_dtype, backend, feature_level)


FUNCTIONS = {f.__name__: f for f in (reduce, argmax, argmin, cumulative_summation, cumulative_product, top_k, top_k1)}
"""Function name -> function."""

__all__ = ["FUNCTIONS", *FUNCTIONS]
