"""Helpers shared by the functional wrappers in :mod:`dmlops.ops`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..backends import DEFAULT_BACKEND, execute
from ..descs import desc_class
from ..descs._base import OperatorDesc
from ..enums import FeatureLevel, TensorDataType
from ..errors import ArgumentTypeError, ArgumentValueError, TensorMismatchError
from ..tensor import TensorDesc


def wrong_type(function: str, argument: str, expected: str, value: Any) -> ArgumentTypeError:
    """``ArgumentTypeError("dmlops.<function>: <argument> must be <expected>; got <type> <value>")``."""
    shown = f"{value!r:.80}"
    return ArgumentTypeError(f"dmlops.{function}: {argument} must be {expected}; got {type(value).__name__} {shown}")


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _sequence(value: Any, function: str, argument: str, expected: str) -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise wrong_type(function, argument, expected, value)
    try:
        return list(value)
    except TypeError:  # a 0-d array
        raise wrong_type(function, argument, expected, value) from None


def int_tuple(value: Any, function: str, argument: str) -> tuple[int, ...]:
    """A sequence of integers (Python or NumPy, not bool) as a tuple of ints; ArgumentTypeError otherwise."""
    items = _sequence(value, function, argument, "a sequence of integers")
    for i, v in enumerate(items):
        if not _is_int(v):
            raise wrong_type(function, f"{argument}[{i}]", "an integer", v)
    return tuple(int(v) for v in items)


def optional_int_tuple(value: Any, function: str, argument: str) -> tuple[int, ...] | None:
    """:func:`int_tuple`, or None for None."""
    return None if value is None else int_tuple(value, function, argument)


def number_tuple(value: Any, function: str, argument: str) -> tuple[int | float, ...]:
    """A sequence of real numbers (not bool) as a tuple; ArgumentTypeError otherwise."""
    items = _sequence(value, function, argument, "a sequence of numbers")
    for i, v in enumerate(items):
        if not _is_number(v):
            raise wrong_type(function, f"{argument}[{i}]", "a number", v)
    return tuple(items)


def optional_number_tuple(value: Any, function: str, argument: str) -> tuple[int | float, ...] | None:
    """:func:`number_tuple`, or None for None."""
    return None if value is None else number_tuple(value, function, argument)


def number_or_pair(value: Any, function: str, argument: str, *, integer: bool = False) -> tuple[Any, Any]:
    """``v`` -> ``(v, v)``; a pair -> its two items; ArgumentTypeError (ArgumentValueError for a wrong length)."""
    check, kind = (_is_int, "an integer") if integer else (_is_number, "a number")
    if check(value):
        return value, value
    items = _sequence(value, function, argument, f"{kind} or a pair of them")
    if len(items) != 2:
        raise ArgumentValueError(f"dmlops.{function}: {argument} must be {kind} or a pair of them; got {value!r:.80}")
    for i, v in enumerate(items):
        if not check(v):
            raise wrong_type(function, f"{argument}[{i}]", kind, v)
    return items[0], items[1]


def array_argument(value: Any, function: str, argument: str, dtype: Any = None) -> Any:
    """An array as given (anything with ``shape`` and ``dtype``), or ``np.asarray(value, dtype)``.

    ArgumentTypeError when the value is not numeric array data (None, strings, dicts, objects).
    """
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return value
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):  # ragged nesting
        raise wrong_type(function, argument, "an array of numbers", value) from None
    if array.dtype.kind not in "biuf":
        raise wrong_type(function, argument, "an array of numbers", value)
    return array if dtype is None else array.astype(dtype)


def check_out(out: Any, function: str) -> None:
    """ArgumentTypeError unless ``out`` is None or an array (something with ``shape`` and ``dtype``)."""
    if out is not None and not (hasattr(out, "shape") and hasattr(out, "dtype")):
        raise wrong_type(function, "out", "None or an array", out)


def data_type_of(array: Any, what: str) -> TensorDataType:
    """DML data type of a NumPy/CuPy array or a torch tensor (by dtype name)."""
    dtype = getattr(array, "dtype", None)
    if dtype is None:
        given = array
        array = np.asarray(array)
        dtype = array.dtype
        if dtype.kind not in "biuf":
            shown = f"{given!r:.80}"
            raise ArgumentTypeError(f"{what} must be an array of numbers; got {type(given).__name__} {shown}")
    try:
        return TensorDataType.from_numpy(dtype)
    except TypeError:
        # torch dtypes are not NumPy dtypes: "torch.float32" -> "float32"
        return TensorDataType.from_numpy(str(dtype).removeprefix("torch."))
    except ValueError as exc:
        raise TensorMismatchError(f"{what}: {exc}") from None


def tensor_of(array: Any, what: str) -> TensorDesc:
    """A packed TensorDesc with the array's shape and data type."""
    shape = tuple(int(s) for s in getattr(array, "shape", np.shape(array)))
    return TensorDesc(data_type=data_type_of(array, what), sizes=shape)


def input_tensor(
    value: Any, function: str, argument: str = "x", *, what: str | None = None, out: Any = None
) -> tuple[Any, TensorDesc]:
    """An input argument as ``(array, packed TensorDesc)``, with ``out`` checked in between.

    :func:`array_argument`, then :func:`check_out`, then :func:`tensor_of` (``what`` names
    the tensor in its errors; default ``argument``).
    """
    array = array_argument(value, function, argument)
    check_out(out, function)
    return array, tensor_of(array, argument if what is None else what)


def generic_desc(operator: str, **members: Any) -> Any:
    """The desc of ``operator`` (its catalogue desc or hand-written class), members as snake_case keywords."""
    cls: Any = desc_class(operator)
    return cls(**members)


def run_outputs(
    desc: OperatorDesc,
    inputs: Mapping[str, Any],
    output_members: Sequence[str],
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Sequence[Any] | None = None,
    strict: bool = False,
) -> tuple[Any, ...]:
    """Execute ``desc`` and return the arrays of ``output_members``, in order.

    ``out``: None, or one preallocated array (or None) per output member.
    """
    outputs = None if out is None else {m: a for m, a in zip(output_members, out) if a is not None}
    result = execute(desc, inputs, backend=backend, feature_level=feature_level, outputs=outputs, strict=strict)
    return tuple(result[m] for m in output_members)


def run_single_output(
    desc: OperatorDesc,
    inputs: Mapping[str, Any],
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
    strict: bool = False,
    output_member: str | None = None,
) -> Any:
    """Execute ``desc`` and return its one output array (``output_member``; default the desc's one output)."""
    if output_member is None:
        (output_member,) = desc.tensor_names("output")
    outputs = None if out is None else (out,)
    (result,) = run_outputs(
        desc, inputs, (output_member,), backend=backend, feature_level=feature_level, out=outputs, strict=strict
    )
    return result
