"""The functional API of the data movement family: gather, slice1 and the generic operators.

GATHER
------
``dmlops.gather``: GATHER on arrays, with NumPy's ``take`` shape rule.

SLICE1
------
``dmlops.slice1``: SLICE1 on arrays.

The generic operators
---------------------
``cast``, ``slice``, ``join``, ``split``, ``padding``, ``padding1``, ``tile``,
``fill_value_constant``, ``fill_value_sequence``, ``depth_to_space(1)``,
``space_to_depth(1)``, ``slice_grad``: each
builds its operator's generic desc from arrays (packed tensors of the arrays' shapes),
members as keyword arguments named after the DML member in snake case, and executes
it; ``split`` returns a list of arrays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import DEFAULT_BACKEND
from ..descs.data_movement import GatherDesc, Slice1Desc, depth_space_sizes, gather_full_sizes, nd_sizes
from ..enums import FeatureLevel, TensorDataType
from ..errors import DescTypeError, InvalidDescError, TensorMismatchError
from ..tensor import TensorDesc
from ._common import (
    array_argument,
    check_out,
    generic_desc,
    input_tensor,
    int_tuple,
    optional_int_tuple,
    run_outputs,
    run_single_output,
    tensor_of,
)

# -- GATHER --------------------------------------------------------------------


def _invalid(member: str, rule: str, value: Any) -> InvalidDescError:
    """InvalidDescError naming the member; DescTypeError (also a TypeError) when ``value`` is not an integer."""
    cls = InvalidDescError if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else DescTypeError
    return cls(f"{GatherDesc.dml_name}.{member}: {rule}; got {value!r}", struct=GatherDesc.dml_name, member=member)


def gather_padded_shapes(
    x_shape: tuple[int, ...], indices_shape: tuple[int, ...], axis: int, index_dimensions: int
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int, tuple[int, ...]]:
    """How :func:`gather` maps NumPy-like shapes onto DML's padded form.

    Parameters
    ----------
    x_shape, indices_shape : tuple of int
        Shapes of the data and the indices.
    axis : int
        Normalised (non-negative) axis of ``x``.
    index_dimensions : int
        ``IndexDimensions``.

    Returns
    -------
    input_sizes, indices_sizes, output_sizes : tuple of int
        The three TensorDesc Sizes, all of length ``D``.
    dml_axis : int
        ``Axis`` shifted by the input's padding.
    result_shape : tuple of int
        The NumPy-like result shape, ``x.shape[:axis] + indices.shape[-k:] +
        x.shape[axis + 1:]`` with the indices' shape cropped (leading 1s) or padded
        with leading 1s to ``k = index_dimensions`` dimensions.
    """
    r, q, k = len(x_shape), len(indices_shape), index_dimensions
    # As ONNX Runtime's DmlOperatorGather: one DimensionCount for all three tensors,
    # large enough for the data, the indices and the output (rank r + k - 1).
    d = max(r, q, k, r + k - 1, 1)
    input_sizes = (1,) * (d - r) + tuple(x_shape)
    indices_sizes = (1,) * (d - q) + tuple(indices_shape)
    dml_axis = axis + d - r
    full = gather_full_sizes(input_sizes, indices_sizes, dml_axis, k)
    # d >= r + k - 1 means only the input's padding 1s can overflow the DimensionCount.
    excess = len(full) - d
    output_sizes = full[excess:] if excess > 0 else (1,) * -excess + full
    result_shape = (*x_shape[:axis], *indices_sizes[d - k :], *x_shape[axis + 1 :])
    return input_sizes, indices_sizes, output_sizes, dml_axis, result_shape


def gather(
    x: Any,
    indices: Any,
    *,
    axis: int,
    index_dimensions: int | None = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
    strict: bool = False,
) -> Any:
    """DML_GATHER with NumPy-like shapes: ``numpy.take(x, indices, axis)`` for valid indices.

    The result has shape ``x.shape[:axis] + indices.shape + x.shape[axis + 1:]``.

    Parameters
    ----------
    x : array
        The data (``InputTensor``), rank >= 1. NumPy, or the backend's array type; a
        Python sequence becomes ``np.asarray``.
    indices : array or sequence of int
        The indices (``IndicesTensor``): UINT32 at every feature level; INT32, INT64 and
        UINT64 from DML_FEATURE_LEVEL_3_0. A Python sequence becomes ``np.asarray``
        (int64, which needs FL >= 3_0). A 0-d array removes ``axis``.
    axis : int
        Axis of ``x`` to gather along; negative values count from the end.
    index_dimensions : int, optional
        ``IndexDimensions``; default ``indices.ndim``. A smaller value ignores leading
        dimensions of ``indices``, which must then be 1; a larger one treats ``indices``
        as padded with leading 1s. The result uses the last ``index_dimensions``
        dimensions of the (cropped or padded) indices shape.
    backend, feature_level, out
        As :func:`dmlops.execute`. ``out`` must have the result shape (or the padded
        DML output shape) and, for NumPy, be reshapeable to the padded shape without a
        copy; it is returned.
    strict : bool
        Raise :class:`~dmlops.errors.DataIndexError` for an index outside
        ``[-n, n)`` (signed types, FL >= 3_0) or ``[0, n)`` instead of clamping.

    Returns
    -------
    array
        The gathered values, bit-exact copies of elements of ``x``.

    Notes
    -----
    The NumPy-like shapes are mapped onto DML's padded form as ONNX Runtime's DML
    execution provider does (``DmlOperatorGather.cpp``): the data, the indices and
    the output are padded with leading 1s to one DimensionCount
    ``D = max(x.ndim, indices.ndim, x.ndim + index_dimensions - 1)``, ``Axis`` is
    shifted by the data's padding and ``IndexDimensions = indices.ndim``. The DML
    output is then reshaped to the NumPy-like result shape. ``D`` must be at most 8
    (4 exactly below DML_FEATURE_LEVEL_3_0).

    Out-of-range indices read what DirectML 1.15.4 reads (erratum E41): a negative
    index of a signed type is wrapped once by adding the axis size (FL >= 3_0; a
    UINT64 index is read as INT64), then the flat element address is taken modulo
    2^32 and clamped to the last element of the input's buffer, so an index past the
    axis reads on into the next rows (see
    :func:`dmlops.descs.data_movement.gather_read_addresses`). ``strict=True`` raises
    DataIndexError instead.

    Examples
    --------
    The page's Example 2 (rows of a 3x2 matrix):

    >>> import numpy as np, dmlops
    >>> x = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    >>> dmlops.gather(x, np.array([0, 1, 1, 2], dtype=np.uint32), axis=0)
    array([[1., 2.],
           [3., 4.],
           [3., 4.],
           [5., 6.]], dtype=float32)

    Negative indices need a signed index type:

    >>> dmlops.gather(x, np.array([-1, 0], dtype=np.int32), axis=1)
    array([[2., 1.],
           [4., 3.],
           [6., 5.]], dtype=float32)
    """
    x = array_argument(x, "gather", "x")
    indices = array_argument(indices, "gather", "indices")
    check_out(out, "gather")
    x_shape = tuple(int(s) for s in getattr(x, "shape", np.shape(x)))
    indices_shape = tuple(int(s) for s in indices.shape)
    rank = len(x_shape)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -rank <= axis < rank:
        raise _invalid("Axis", f"axis must be an integer in [-{rank}, {rank}) for x of rank {rank}", axis)
    axis = int(axis) % rank
    k = indices.ndim if index_dimensions is None else index_dimensions
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise _invalid("IndexDimensions", "index_dimensions must be a non-negative integer", index_dimensions)
    k = int(k)

    in_sizes, idx_sizes, out_sizes, dml_axis, result_shape = gather_padded_shapes(x_shape, indices_shape, axis, k)
    input_tensor = tensor_of(x, "x").with_sizes(in_sizes)
    indices_tensor = tensor_of(indices, "indices").with_sizes(idx_sizes)
    desc = GatherDesc(
        input_tensor=input_tensor,
        indices_tensor=indices_tensor,
        output_tensor=input_tensor.with_sizes(out_sizes),
        axis=dml_axis,
        index_dimensions=k,
    )
    # Validate first so that a bad desc is reported in DML terms, not as a reshape error.
    desc.validate(feature_level)

    target = None
    if out is not None:
        target = _padded_out(out, result_shape, out_sizes)
    result = run_single_output(
        desc,
        {"InputTensor": x.reshape(in_sizes), "IndicesTensor": indices.reshape(idx_sizes)},
        backend=backend,
        feature_level=feature_level,
        out=target,
        strict=strict,
    )
    if out is not None:
        return out
    return result.reshape(result_shape)


def _padded_out(out: Any, result_shape: tuple[int, ...], out_sizes: tuple[int, ...]) -> Any:
    """A view of ``out`` with the padded output shape (writes must reach ``out``)."""
    shape = tuple(int(s) for s in out.shape)
    if shape not in (result_shape, out_sizes):
        raise TensorMismatchError(
            f"{GatherDesc.dml_name}.OutputTensor: out must have shape {result_shape} (or {out_sizes}); got {shape}"
        )
    if shape == out_sizes:
        return out
    view = out.reshape(out_sizes)
    if isinstance(out, np.ndarray) and math.prod(shape) > 0 and not np.shares_memory(view, out):
        raise TensorMismatchError(
            f"{GatherDesc.dml_name}.OutputTensor: out cannot be reshaped to {out_sizes} without a copy "
            "(pass a contiguous array)"
        )
    return view


# -- SLICE1 --------------------------------------------------------------------


def slice1(
    x: Any,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int],
    *,
    output_sizes: Sequence[int] | None = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_SLICE1: copy the window ``offsets``/``sizes`` of ``x`` with signed ``strides``.

    Parameters
    ----------
    x : array
        The input tensor (any rank 1 to 8).
    offsets, sizes, strides : sequence of int
        ``InputWindowOffsets``, ``InputWindowSizes``, ``InputWindowStrides``.
    output_sizes : sequence of int, optional
        ``OutputTensor.Sizes``; defaults to every reachable element,
        ``1 + (sizes[i] - 1) // abs(strides[i])``.
    backend, feature_level, out
        As :func:`dmlops.execute`.

    Examples
    --------
    The page's Example 2 (negative stride):

    >>> import numpy as np, dmlops
    >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> dmlops.slice1(x, [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, -2, 2])[0, 0]
    array([[14., 16.],
           [ 6.,  8.]], dtype=float32)
    """
    tensor = tensor_of(x, "x")
    window = _window("slice1", offsets, sizes, strides)
    output_sizes = optional_int_tuple(output_sizes, "slice1", "output_sizes")
    if output_sizes is None:
        output_sizes = [1 + (s - 1) // abs(st) if st else 1 for s, st in zip(window["sizes"], window["strides"])]
    desc = Slice1Desc(
        input_tensor=tensor,
        output_tensor=tensor.with_sizes(output_sizes),
        **{f"input_window_{name}": v for name, v in window.items()},
    )
    return run_single_output(desc, {"InputTensor": x}, backend=backend, feature_level=feature_level, out=out)


def _window(function: str, offsets: Any, sizes: Any, strides: Any) -> dict[str, tuple[int, ...]]:
    """SLICE's, SLICE1's and SLICE_GRAD's window arrays: ``{"offsets": ..., "sizes": ..., "strides": ...}``."""
    given = {"offsets": offsets, "sizes": sizes, "strides": strides}
    return {name: int_tuple(value, function, name) for name, value in given.items()}


# -- the generic operators -----------------------------------------------------------


def _run(operator: str, members: dict[str, Any], inputs: dict[str, Any], **run: Any) -> Any:
    """Make the generic desc, validate it (its own rules included), execute, return the one output.

    ``run``: ``backend``, ``feature_level`` and ``out``, as :func:`dmlops.execute`.
    """
    desc = generic_desc(operator, **members)
    desc.validate(run["feature_level"])
    return run_single_output(desc, inputs, **run)


def _run_unary(
    operator: str, x: Any, tensor: TensorDesc, output: TensorDesc, members: dict[str, Any], **run: Any
) -> Any:
    """:func:`_run` for an operator of one InputTensor (``x``, ``tensor``), one OutputTensor and ``members``."""
    return _run(operator, {"input_tensor": tensor, "output_tensor": output, **members}, {"InputTensor": x}, **run)


def _data_type(dtype: Any) -> TensorDataType:
    """A NumPy dtype or a DML data type name."""
    return TensorDataType.from_any(dtype) if isinstance(dtype, str) else TensorDataType.from_numpy(np.dtype(dtype))


def cast(
    x: Any,
    dtype: Any,
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_CAST: ``x`` converted to ``dtype`` (a NumPy dtype or a DML data type name).

    Integers pass through a 32-bit register (64-bit when either type is 64 bits wide):
    the bits are kept into a type of the register's width and the value saturates into
    a narrower one; floats into integers truncate, saturate, NaN -> 0; into floats,
    round to nearest even (see :mod:`dmlops.descs.data_movement`).

    Examples
    --------
    >>> import numpy as np, dmlops
    >>> from dmlops.ops.data_movement import cast
    >>> cast(np.array([-1.5, 2.7, 300.0, np.nan], dtype=np.float32), np.uint8)
    array([  0,   2, 255,   0], dtype=uint8)
    >>> cast(np.array([-1, 255], dtype=np.int32), "UINT32")
    array([4294967295,        255], dtype=uint32)
    """
    x = array_argument(x, "cast", "x")
    check_out(out, "cast")
    data_type = _data_type(dtype)  # checked before x's data type
    tensor = tensor_of(x, "x")
    output = TensorDesc(data_type=data_type, sizes=tensor.sizes)
    return _run_unary("CAST", x, tensor, output, {}, backend=backend, feature_level=feature_level, out=out)


def slice(
    x: Any,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int],
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_SLICE: ``x[offsets[i] + strides[i] * o]`` for ``o`` in ``[0, sizes[i])`` per dimension.

    Strides are positive (SLICE1 takes negative ones); the last element read must be
    inside ``x``.

    Examples
    --------
    The page's example: every second element from the 10th, five of them.

    >>> import numpy as np
    >>> from dmlops.ops.data_movement import slice
    >>> slice(np.arange(20, dtype=np.float32).reshape(1, 1, 1, 20), [0, 0, 0, 10], [1, 1, 1, 5], [1, 1, 1, 2])
    array([[[[10., 12., 14., 16., 18.]]]], dtype=float32)
    """
    x, tensor = input_tensor(x, "slice", out=out)
    output = tensor.with_sizes(int_tuple(sizes, "slice", "sizes"))
    window = _window("slice", offsets, sizes, strides)
    return _run_unary("SLICE", x, tensor, output, window, backend=backend, feature_level=feature_level, out=out)


def join(
    arrays: Sequence[Any],
    *,
    axis: int,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_JOIN: the arrays concatenated along ``axis`` (``numpy.concatenate``; all of one rank and type).

    Examples
    --------
    >>> import numpy as np
    >>> from dmlops.ops.data_movement import join
    >>> join([np.array([[1, 2]], np.int32), np.array([[3, 4], [5, 6]], np.int32)], axis=0)
    array([[1, 2],
           [3, 4],
           [5, 6]], dtype=int32)
    """
    given = [array_argument(a, "join", f"arrays[{k}]") for k, a in enumerate(arrays)]
    check_out(out, "join")
    tensors = [tensor_of(a, f"arrays[{k}]") for k, a in enumerate(given)]
    if not tensors:
        raise InvalidDescError("DML_JOIN_OPERATOR_DESC.InputCount: must be at least 1; got 0")
    sizes = list(tensors[0].sizes)
    if 0 <= axis < len(sizes):
        sizes[axis] = sum(t.sizes[axis] if axis < len(t.sizes) else 1 for t in tensors)
    members = {"input_tensors": tensors, "output_tensor": tensors[0].with_sizes(sizes), "axis": axis}
    inputs = {f"InputTensors[{k}]": a for k, a in enumerate(given)}
    return _run("JOIN", members, inputs, backend=backend, feature_level=feature_level, out=out)


def split(
    x: Any,
    sizes: Sequence[int],
    *,
    axis: int,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
) -> list[Any]:
    """DML_SPLIT: consecutive pieces of ``x`` along ``axis`` with the given sizes, as a list.

    Examples
    --------
    >>> import numpy as np
    >>> from dmlops.ops.data_movement import split
    >>> [p.tolist() for p in split(np.arange(5, dtype=np.uint8), [2, 3], axis=0)]
    [[0, 1], [2, 3, 4]]
    """
    x, tensor = input_tensor(x, "split")
    pieces = int_tuple(sizes, "split", "sizes")
    outputs = []
    for n in pieces:
        shape = list(tensor.sizes)
        if 0 <= axis < len(shape):
            shape[axis] = n
        outputs.append(tensor.with_sizes(shape))
    desc = generic_desc("SPLIT", input_tensor=tensor, output_tensors=outputs, axis=axis)
    desc.validate(feature_level)
    members = [f"OutputTensors[{k}]" for k in range(len(outputs))]
    return list(run_outputs(desc, {"InputTensor": x}, members, backend=backend, feature_level=feature_level))


def padding(
    x: Any,
    start_padding: Sequence[int],
    end_padding: Sequence[int],
    *,
    padding_mode: Any = "CONSTANT",
    padding_value: float = 0.0,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_PADDING: ``x`` padded by ``start_padding``/``end_padding`` per dimension.

    ``padding_mode``: CONSTANT (``padding_value``, a FLOAT that DirectML converts to an
    integer type without saturation: :func:`dmlops.descs.data_movement.padding_value`),
    EDGE, REFLECTION, SYMMETRIC (FL 3_0) or WRAP (FL 6_4).

    Examples
    --------
    >>> import numpy as np
    >>> from dmlops.ops.data_movement import padding
    >>> padding(np.array([1, 2, 3], np.float32), [2], [1], padding_mode="REFLECTION")
    array([3., 2., 1., 2., 3., 2.], dtype=float32)
    """
    return _padding(
        "PADDING", x, start_padding, end_padding, padding_mode, padding_value,
        backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def padding1(
    x: Any,
    start_padding: Sequence[int],
    end_padding: Sequence[int],
    *,
    padding_mode: Any = "CONSTANT",
    padding_value: float | int = 0,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_PADDING1: as :func:`padding`, the value of ``x``'s own data type (PaddingValueDataType).

    Examples
    --------
    >>> import numpy as np
    >>> from dmlops.ops.data_movement import padding1
    >>> padding1(np.array([[1, 2]], np.int64), [1, 0], [0, 1], padding_value=-7)
    array([[-7, -7, -7],
           [ 1,  2, -7]])
    """
    return _padding(
        "PADDING1", x, start_padding, end_padding, padding_mode, padding_value,
        backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def _padding(
    operator: str,
    x: Any,
    start_padding: Sequence[int],
    end_padding: Sequence[int],
    padding_mode: Any,
    padding_value: Any,
    **run: Any,
) -> Any:
    name = operator.lower()
    x, tensor = input_tensor(x, name, out=run["out"])
    start = int_tuple(start_padding, name, "start_padding")
    end = int_tuple(end_padding, name, "end_padding")
    sizes = (
        [n + s + e for n, s, e in zip(tensor.sizes, start, end)]
        if len(start) == len(end) == len(tensor.sizes)
        else tensor.sizes
    )
    members = {"padding_mode": padding_mode, "padding_value": padding_value, "start_padding": start, "end_padding": end}
    if operator == "PADDING1":
        members["padding_value_data_type"] = tensor.data_type
    return _run_unary(operator, x, tensor, tensor.with_sizes(sizes), members, **run)


def tile(
    x: Any,
    repeats: Sequence[int],
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_TILE: ``x`` repeated ``repeats[i]`` times along each dimension (``numpy.tile`` of equal rank).

    Examples
    --------
    The page's example:

    >>> import numpy as np
    >>> from dmlops.ops.data_movement import tile
    >>> tile(np.array([[1, 2], [3, 4]], np.float32), [1, 2])
    array([[1., 2., 1., 2.],
           [3., 4., 3., 4.]], dtype=float32)
    """
    x, tensor = input_tensor(x, "tile", out=out)
    reps = int_tuple(repeats, "tile", "repeats")
    sizes = [n * r for n, r in zip(tensor.sizes, reps)] if len(reps) == len(tensor.sizes) else tensor.sizes
    members, output = {"repeats": reps}, tensor.with_sizes(sizes)
    return _run_unary("TILE", x, tensor, output, members, backend=backend, feature_level=feature_level, out=out)


def fill_value_constant(
    shape: Sequence[int],
    value: float | int,
    dtype: Any = np.float32,
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_FILL_VALUE_CONSTANT: an array of ``shape`` and ``dtype`` holding ``value``.

    Examples
    --------
    >>> from dmlops.ops.data_movement import fill_value_constant
    >>> fill_value_constant([2, 3], -4, "INT8")
    array([[-4, -4, -4],
           [-4, -4, -4]], dtype=int8)
    """
    tensor = _output_tensor(shape, dtype, "fill_value_constant")
    members = {"output_tensor": tensor, "value_data_type": tensor.data_type, "value": value}
    return _run("FILL_VALUE_CONSTANT", members, {}, backend=backend, feature_level=feature_level, out=out)


def fill_value_sequence(
    shape: Sequence[int],
    value_start: float | int,
    value_delta: float | int,
    dtype: Any = np.float32,
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_FILL_VALUE_SEQUENCE: element ``i`` (row-major) is ``value_start + i * value_delta``.

    Floats in float32 steps (``float32(i) * delta + start``, two roundings); integers
    with 32-bit wrap-around, the low bits stored. ``value_start`` and ``value_delta``
    must fit ``dtype`` (a negative step of an unsigned type is its wrapped value: 254 for
    -2 in UINT8).

    Examples
    --------
    The page's examples:

    >>> from dmlops.ops.data_movement import fill_value_sequence
    >>> fill_value_sequence([1, 1, 1, 3], 3, 2)
    array([[[[3., 5., 7.]]]], dtype=float32)
    >>> fill_value_sequence([1, 1, 2, 2], 10, 254, "UINT8")
    array([[[[10,  8],
             [ 6,  4]]]], dtype=uint8)
    """
    tensor = _output_tensor(shape, dtype, "fill_value_sequence")
    members = {
        "output_tensor": tensor,
        "value_data_type": tensor.data_type,
        "value_start": value_start,
        "value_delta": value_delta,
    }
    return _run("FILL_VALUE_SEQUENCE", members, {}, backend=backend, feature_level=feature_level, out=out)


def _output_tensor(shape: Sequence[int], dtype: Any, function: str) -> TensorDesc:
    return TensorDesc(data_type=_data_type(dtype), sizes=int_tuple(shape, function, "shape"))


def _depth_space(operator: str, x: Any, block_size: int, order: Any, **run: Any) -> Any:
    x, tensor = input_tensor(x, operator.lower(), out=run["out"])
    sizes = (
        depth_space_sizes(operator, tensor.sizes, block_size) if len(tensor.sizes) == 4 and block_size else tensor.sizes
    )
    members = {"block_size": block_size, **({"order": order} if operator.endswith("1") else {})}
    return _run_unary(operator, x, tensor, tensor.with_sizes(sizes), members, **run)


def depth_to_space(
    x: Any,
    block_size: int,
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_DEPTH_TO_SPACE: (N, C, H, W) -> (N, C / b², H b, W b), depth-column-row order.

    Examples
    --------
    >>> import numpy as np
    >>> from dmlops.ops.data_movement import depth_to_space
    >>> depth_to_space(np.arange(4, dtype=np.int32).reshape(1, 4, 1, 1), 2)[0, 0]
    array([[0, 1],
           [2, 3]], dtype=int32)
    """
    return _depth_space("DEPTH_TO_SPACE", x, block_size, None, backend=backend, feature_level=feature_level, out=out)


def depth_to_space1(
    x: Any,
    block_size: int,
    *,
    order: Any = "DEPTH_COLUMN_ROW",
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_DEPTH_TO_SPACE1: :func:`depth_to_space` with an Order (DEPTH_COLUMN_ROW or COLUMN_ROW_DEPTH).

    Examples
    --------
    >>> import numpy as np
    >>> from dmlops.ops.data_movement import depth_to_space1
    >>> x = np.arange(8, dtype=np.float32).reshape(1, 8, 1, 1)
    >>> depth_to_space1(x, 2, order="COLUMN_ROW_DEPTH")[0, 1]
    array([[4., 5.],
           [6., 7.]], dtype=float32)
    """
    return _depth_space("DEPTH_TO_SPACE1", x, block_size, order, backend=backend, feature_level=feature_level, out=out)


def space_to_depth(
    x: Any,
    block_size: int,
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_SPACE_TO_DEPTH: (N, C, H, W) -> (N, C b², H / b, W / b), the inverse of :func:`depth_to_space`.

    Examples
    --------
    >>> import numpy as np
    >>> from dmlops.ops.data_movement import space_to_depth
    >>> space_to_depth(np.arange(4, dtype=np.uint8).reshape(1, 1, 2, 2), 2).ravel()
    array([0, 1, 2, 3], dtype=uint8)
    """
    return _depth_space("SPACE_TO_DEPTH", x, block_size, None, backend=backend, feature_level=feature_level, out=out)


def space_to_depth1(
    x: Any,
    block_size: int,
    *,
    order: Any = "DEPTH_COLUMN_ROW",
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_SPACE_TO_DEPTH1: :func:`space_to_depth` with an Order, the inverse of :func:`depth_to_space1`.

    Examples
    --------
    >>> import numpy as np
    >>> from dmlops.ops.data_movement import depth_to_space1, space_to_depth1
    >>> x = np.arange(16, dtype=np.int64).reshape(1, 8, 1, 2)
    >>> bool((space_to_depth1(depth_to_space1(x, 2, order="COLUMN_ROW_DEPTH"), 2, order="COLUMN_ROW_DEPTH") == x).all())
    True
    """
    return _depth_space("SPACE_TO_DEPTH1", x, block_size, order, backend=backend, feature_level=feature_level, out=out)


def slice_grad(
    input_gradient: Any,
    output_sizes: Sequence[int],
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int],
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_SLICE_GRAD: the gradient of :func:`slice1`, zeros of ``output_sizes`` with ``input_gradient`` at the window.

    ``offsets``, ``sizes``, ``strides`` are SLICE1's InputWindowOffsets, InputWindowSizes
    and InputWindowStrides (signed, never 0).

    Examples
    --------
    The page's example (a 4x4 input, every second element of every second row):

    >>> import numpy as np
    >>> from dmlops.ops.data_movement import slice_grad
    >>> slice_grad(np.array([[1, 2], [3, 4]], np.float32), [4, 4], [0, 0], [4, 4], [2, 2])
    array([[1., 0., 2., 0.],
           [0., 0., 0., 0.],
           [3., 0., 4., 0.],
           [0., 0., 0., 0.]], dtype=float32)
    """
    input_gradient, tensor = input_tensor(input_gradient, "slice_grad", "input_gradient", out=out)
    members = {
        "input_gradient_tensor": tensor,
        "output_gradient_tensor": tensor.with_sizes(int_tuple(output_sizes, "slice_grad", "output_sizes")),
        **{f"input_window_{name}": v for name, v in _window("slice_grad", offsets, sizes, strides).items()},
    }
    inputs = {"InputGradientTensor": input_gradient}
    return _run("SLICE_GRAD", members, inputs, backend=backend, feature_level=feature_level, out=out)


# -- the indexing operators -----------------------------------------------------------


def _indices(indices: Any, function: str, argument: str = "indices") -> Any:
    """An index array (a Python sequence becomes int64, which needs FL >= 3_0)."""
    return array_argument(indices, function, argument)


def _padded(tensor: TensorDesc, rank: int) -> TensorDesc:
    """``tensor`` with leading 1s up to ``rank`` dimensions."""
    return tensor.with_sizes((1,) * (rank - len(tensor.sizes)) + tensor.sizes)


def gather_elements(
    x: Any,
    indices: Any,
    *,
    axis: int,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_GATHER_ELEMENTS: ``numpy.take_along_axis(x, indices, axis)`` (same ranks; any size along ``axis``).

    Negative indices of a signed type count from the end (FL 3_0); one outside the axis
    raises :class:`~dmlops.errors.DataIndexError` (DirectML's read is undefined, E160).

    Examples
    --------
    The page's example:

    >>> import numpy as np
    >>> from dmlops.ops.data_movement import gather_elements
    >>> x = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    >>> gather_elements(x, np.array([[1, 2, 0], [2, 0, 0]], np.uint32), axis=0)
    array([[4., 8., 3.],
           [7., 2., 3.]], dtype=float32)
    """
    x, tensor = input_tensor(x, "gather_elements", out=out)
    indices = _indices(indices, "gather_elements")
    index = tensor_of(indices, "indices")
    members = {"input_tensor": tensor, "indices_tensor": index, "output_tensor": tensor.with_sizes(index.sizes)}
    inputs = {"InputTensor": x, "IndicesTensor": indices}
    run = {"backend": backend, "feature_level": feature_level, "out": out}
    return _run("GATHER_ELEMENTS", {**members, "axis": axis}, inputs, **run)


def scatter_elements(
    x: Any,
    indices: Any,
    updates: Any,
    *,
    axis: int,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_SCATTER_ELEMENTS (alias SCATTER): a copy of ``x`` with ``updates`` put at ``indices`` along ``axis``.

    ``out[..., indices[i, j], ...] = updates[i, j]`` on ``axis``; ``indices`` and
    ``updates`` share one shape, no larger than ``x`` along ``axis``. Duplicate targets:
    the last update in row-major order (DirectML promises none, E163); an index outside
    the axis raises :class:`~dmlops.errors.DataIndexError`.

    Examples
    --------
    >>> import numpy as np
    >>> from dmlops.ops.data_movement import scatter_elements
    >>> indices, updates = np.array([[2], [0]], np.int32), np.array([[7], [8]], np.int32)
    >>> scatter_elements(np.zeros((2, 3), np.int32), indices, updates, axis=1)
    array([[0, 0, 7],
           [8, 0, 0]], dtype=int32)
    """
    x, tensor = input_tensor(x, "scatter_elements", out=out)
    indices = _indices(indices, "scatter_elements")
    updates, update = input_tensor(updates, "scatter_elements", "updates")
    members = {
        "input_tensor": tensor,
        "indices_tensor": tensor_of(indices, "indices"),
        "updates_tensor": update,
        "output_tensor": tensor,
        "axis": axis,
    }
    inputs = {"InputTensor": x, "IndicesTensor": indices, "UpdatesTensor": updates}
    return _run("SCATTER_ELEMENTS", members, inputs, backend=backend, feature_level=feature_level, out=out)


def _nd(
    operator: str, x: Any, indices: Any, batch_dimension_count: int
) -> tuple[Any, dict[str, Any], dict[str, Any], tuple[int, ...]]:
    """GATHER_ND(1)'s arrays, members, inputs and the NumPy-like result shape (one DimensionCount for all)."""
    function = operator.lower()
    x, tensor = input_tensor(x, function)
    indices = _indices(indices, function)
    index = tensor_of(indices, "indices")
    r, q = len(tensor.sizes), len(index.sizes)
    result = nd_sizes(tensor.sizes, index.sizes, r, q, batch_dimension_count) if r and q else tensor.sizes
    d = max(r, q, len(result), 1)
    padded_input, padded_indices = _padded(tensor, d), _padded(index, d)
    members: dict[str, Any] = {
        "input_tensor": padded_input,
        "indices_tensor": padded_indices,
        "output_tensor": _padded(tensor.with_sizes(result), d),
        "input_dimension_count": r,
        "indices_dimension_count": q,
    }
    if operator == "GATHER_ND1":
        members["batch_dimension_count"] = batch_dimension_count
    inputs = {"InputTensor": x.reshape(padded_input.sizes), "IndicesTensor": indices.reshape(padded_indices.sizes)}
    return x, members, inputs, result


def gather_nd(
    x: Any,
    indices: Any,
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
) -> Any:
    """DML_GATHER_ND: each index tuple (the last axis of ``indices``) picks a slice of ``x``.

    The result has shape ``indices.shape[:-1] + x.shape[indices.shape[-1]:]`` (ONNX
    GatherND with batch_dims 0). Indices outside their dimension read what DirectML
    reads for 32-bit data (E160) and raise :class:`~dmlops.errors.DataIndexError` otherwise.

    Examples
    --------
    The page's Example 1:

    >>> import numpy as np
    >>> from dmlops.ops.data_movement import gather_nd
    >>> gather_nd(np.array([[0, 1], [2, 3]], np.float32), np.array([[1], [0]], np.uint32))
    array([[2., 3.],
           [0., 1.]], dtype=float32)
    """
    return _gather_nd("GATHER_ND", x, indices, 0, backend=backend, feature_level=feature_level)


def gather_nd1(
    x: Any,
    indices: Any,
    *,
    batch_dimension_count: int = 0,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
) -> Any:
    """DML_GATHER_ND1: :func:`gather_nd` within each of the leading ``batch_dimension_count`` dimensions.

    The result has shape ``indices.shape[:-1] + x.shape[b + indices.shape[-1]:]`` (ONNX
    GatherND with ``batch_dims = b``).

    Examples
    --------
    >>> import numpy as np
    >>> from dmlops.ops.data_movement import gather_nd1
    >>> x = np.arange(8, dtype=np.int32).reshape(2, 2, 2)
    >>> gather_nd1(x, np.array([[[1]], [[0]]], np.uint32), batch_dimension_count=1)
    array([[[2, 3]],
    <BLANKLINE>
           [[4, 5]]], dtype=int32)
    """
    return _gather_nd("GATHER_ND1", x, indices, batch_dimension_count, backend=backend, feature_level=feature_level)


def _gather_nd(operator: str, x: Any, indices: Any, batch: int, **run: Any) -> Any:
    _, members, inputs, result = _nd(operator, x, indices, batch)
    return _run(operator, members, inputs, out=None, **run).reshape(result)


def scatter_nd(
    x: Any,
    indices: Any,
    updates: Any,
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
) -> Any:
    """DML_SCATTER_ND: a copy of ``x`` whose slices at the index tuples (``indices``'s last axis) are ``updates``.

    ``updates`` has shape ``indices.shape[:-1] + x.shape[indices.shape[-1]:]`` (ONNX
    ScatterND without reduction). Duplicate targets: the last update in row-major order
    (E163); an index outside its dimension raises :class:`~dmlops.errors.DataIndexError`.

    Examples
    --------
    The page's example:

    >>> import numpy as np
    >>> from dmlops.ops.data_movement import scatter_nd
    >>> x = np.arange(1, 9, dtype=np.float32)
    >>> scatter_nd(x, np.array([[4], [3], [1], [7]], np.uint32), np.array([9, 10, 11, 12], np.float32))
    array([ 1., 11.,  3., 10.,  9.,  6.,  7., 12.], dtype=float32)
    """
    x, tensor = input_tensor(x, "scatter_nd")
    indices = _indices(indices, "scatter_nd")
    updates, update = input_tensor(updates, "scatter_nd", "updates")
    members = {
        "input_tensor": tensor,
        "indices_tensor": tensor_of(indices, "indices"),
        "updates_tensor": update,
        "output_tensor": tensor,
        "input_dimension_count": len(tensor.sizes),
        "indices_dimension_count": len(indices.shape),
    }
    inputs = {"InputTensor": x, "IndicesTensor": indices, "UpdatesTensor": updates}
    return _run("SCATTER_ND", members, inputs, backend=backend, feature_level=feature_level, out=None)


def one_hot(
    indices: Any,
    values: Any,
    depth: int,
    *,
    axis: int,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_ONE_HOT: ``values[1]`` where the position along ``axis`` equals the index, ``values[0]`` elsewhere.

    ``indices`` keeps ``axis`` with size 1; the result has ``depth`` there. Negative
    indices of a signed type count from the end; others outside ``[-depth, depth)`` set
    nothing (an INT64 index is compared by its low 32 bits, E161). ``values`` (at least
    two elements: off, on) has the result's data type and rank.

    Examples
    --------
    The page's Example 3 (off 4, on 2):

    >>> import numpy as np
    >>> from dmlops.ops.data_movement import one_hot
    >>> one_hot(np.array([[0], [3], [2]], np.uint32), np.array([[4], [2]], np.float32), 4, axis=1)
    array([[2., 4., 4., 4.],
           [4., 4., 4., 2.],
           [4., 4., 2., 4.]], dtype=float32)
    """
    indices = _indices(indices, "one_hot")
    check_out(out, "one_hot")
    index = tensor_of(indices, "indices")
    values = array_argument(values, "one_hot", "values")
    value = tensor_of(values, "values")
    sizes = [depth if i == axis else s for i, s in enumerate(index.sizes)]
    members = {
        "indices_tensor": index,
        "values_tensor": value,
        "output_tensor": value.with_sizes(sizes),
        "axis": axis,
    }
    inputs = {"IndicesTensor": indices, "ValuesTensor": values}
    return _run("ONE_HOT", members, inputs, backend=backend, feature_level=feature_level, out=out)


def reverse_subsequences(
    x: Any,
    sequence_lengths: Any,
    *,
    axis: int,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_REVERSE_SUBSEQUENCES: the first ``sequence_lengths`` elements along ``axis`` reversed, the rest copied.

    ``sequence_lengths`` (UINT32, or UINT64 from FL 5_0) has ``x``'s shape with 1 on
    ``axis``. A length ``L`` past the axis size ``n``: position ``i < L`` reads ``min(L -
    1 - i, n - 1)``, as DirectML does (E162).

    Examples
    --------
    The page's Example 1:

    >>> import numpy as np
    >>> from dmlops.ops.data_movement import reverse_subsequences
    >>> x = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    >>> reverse_subsequences(x, np.array([[2], [4], [3]], np.uint32), axis=1)
    array([[ 2.,  1.,  3.,  4.],
           [ 8.,  7.,  6.,  5.],
           [11., 10.,  9., 12.]], dtype=float32)
    """
    x, tensor = input_tensor(x, "reverse_subsequences", out=out)
    lengths = array_argument(sequence_lengths, "reverse_subsequences", "sequence_lengths")
    members = {
        "input_tensor": tensor,
        "sequence_lengths_tensor": tensor_of(lengths, "sequence_lengths"),
        "output_tensor": tensor,
        "axis": axis,
    }
    inputs = {"InputTensor": x, "SequenceLengthsTensor": lengths}
    return _run("REVERSE_SUBSEQUENCES", members, inputs, backend=backend, feature_level=feature_level, out=out)


def diagonal_matrix(
    shape: Sequence[int],
    *,
    offset: int = 0,
    value: float = 1.0,
    dtype: Any = np.float32,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_DIAGONAL_MATRIX: ``value`` where ``column - row == offset`` in each matrix (the last two axes), 0 elsewhere.

    ``value`` is a FLOAT that reaches integer types as DirectML converts it (truncated,
    wrapped: :func:`dmlops.descs.data_movement.padding_value`).

    Examples
    --------
    >>> from dmlops.ops.data_movement import diagonal_matrix
    >>> diagonal_matrix([3, 2], offset=-1)
    array([[0., 0.],
           [1., 0.],
           [0., 1.]], dtype=float32)
    """
    tensor = _output_tensor(shape, dtype, "diagonal_matrix")
    members = {"output_tensor": tensor, "offset": offset, "value": value}
    return _run("DIAGONAL_MATRIX", members, {}, backend=backend, feature_level=feature_level, out=out)


def diagonal_matrix1(
    shape: Sequence[int],
    *,
    value: float | int = 1,
    diagonal_fill_begin: int = 0,
    diagonal_fill_end: int = 1,
    x: Any = None,
    dtype: Any = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_DIAGONAL_MATRIX1: ``value`` on the diagonals ``[begin, end)`` (outside ``[end, begin)`` when reversed).

    Elsewhere ``x`` (InputTensor, of ``shape``) or 0. ``dtype``: ``x``'s, else float32.

    Examples
    --------
    The page's strictly-upper-triangle example (``x`` kept above the diagonal):

    >>> import numpy as np
    >>> from dmlops.ops.data_movement import diagonal_matrix1
    >>> x = np.array([[4, 7, 3], [1, 2, 8]], np.float32)
    >>> diagonal_matrix1([2, 3], value=0, diagonal_fill_begin=-(2**31), diagonal_fill_end=1, x=x)
    array([[0., 7., 3.],
           [0., 0., 8.]], dtype=float32)
    """
    inputs: dict[str, Any] = {}
    members: dict[str, Any] = {"diagonal_fill_begin": diagonal_fill_begin, "diagonal_fill_end": diagonal_fill_end}
    if x is not None:
        x, given = input_tensor(x, "diagonal_matrix1", out=out)
        inputs["InputTensor"] = x
        members["input_tensor"] = given
        dtype = given.data_type.name if dtype is None else dtype
    tensor = _output_tensor(shape, np.float32 if dtype is None else dtype, "diagonal_matrix1")
    members |= {"output_tensor": tensor, "value_data_type": tensor.data_type, "value": value}
    return _run("DIAGONAL_MATRIX1", members, inputs, backend=backend, feature_level=feature_level, out=out)


def nonzero_coordinates(
    x: Any,
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
) -> Any:
    """DML_NONZERO_COORDINATES: the coordinates of ``x``'s nonzero elements, row-major, (count, x.ndim) UINT32.

    ``numpy.argwhere(x)`` with ``-0.0`` zero and NaN nonzero. The DML output's rows past
    the count are dropped.

    Examples
    --------
    The page's example:

    >>> import numpy as np
    >>> from dmlops.ops.data_movement import nonzero_coordinates
    >>> nonzero_coordinates(np.array([[1.0, 0.0, 0.0, 2.0], [-0.0, 3.5, 0.0, -5.2]], np.float32))
    array([[0, 0],
           [0, 3],
           [1, 1],
           [1, 3]], dtype=uint32)
    """
    x, tensor = input_tensor(x, "nonzero_coordinates")
    rank = max(len(tensor.sizes), 1)
    coordinates = TensorDesc(data_type=TensorDataType.UINT32, sizes=(math.prod(tensor.sizes), rank))
    desc = generic_desc(
        "NONZERO_COORDINATES",
        input_tensor=tensor,
        output_count_tensor=TensorDesc(data_type=TensorDataType.UINT32, sizes=(1,)),
        output_coordinates_tensor=coordinates,
    )
    desc.validate(feature_level)
    members = ["OutputCountTensor", "OutputCoordinatesTensor"]
    count, found = run_outputs(desc, {"InputTensor": x}, members, backend=backend, feature_level=feature_level)
    return found[: int(np.asarray(count).reshape(-1)[0])]


__all__ = [
    "cast",
    "depth_to_space",
    "depth_to_space1",
    "diagonal_matrix",
    "diagonal_matrix1",
    "fill_value_constant",
    "fill_value_sequence",
    "gather",
    "gather_elements",
    "gather_nd",
    "gather_nd1",
    "join",
    "nonzero_coordinates",
    "one_hot",
    "padding",
    "padding1",
    "reverse_subsequences",
    "scatter_elements",
    "scatter_nd",
    "slice",
    "slice1",
    "slice_grad",
    "space_to_depth",
    "space_to_depth1",
    "split",
    "tile",
]
