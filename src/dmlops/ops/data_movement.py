"""The functional API of the data movement family: gather, slice1.

GATHER
------
``dmlops.gather``: GATHER on arrays, with NumPy's ``take`` shape rule.

SLICE1
------
``dmlops.slice1``: SLICE1 on arrays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import DEFAULT_BACKEND
from ..descs.data_movement import GatherDesc, Slice1Desc, gather_full_sizes
from ..enums import FeatureLevel
from ..errors import DescTypeError, InvalidDescError, TensorMismatchError
from ._common import array_argument, check_out, int_tuple, optional_int_tuple, run_single_output, tensor_of

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
    input_tensor = tensor_of(x, "x")
    offsets = int_tuple(offsets, "slice1", "offsets")
    sizes = int_tuple(sizes, "slice1", "sizes")
    strides = int_tuple(strides, "slice1", "strides")
    output_sizes = optional_int_tuple(output_sizes, "slice1", "output_sizes")
    if output_sizes is None:
        output_sizes = [1 + (s - 1) // abs(st) if st else 1 for s, st in zip(sizes, strides)]
    desc = Slice1Desc(
        input_tensor=input_tensor,
        output_tensor=input_tensor.with_sizes(output_sizes),
        input_window_offsets=offsets,
        input_window_sizes=sizes,
        input_window_strides=strides,
    )
    return run_single_output(desc, {"InputTensor": x}, backend=backend, feature_level=feature_level, out=out)
