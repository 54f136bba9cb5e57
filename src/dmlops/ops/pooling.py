"""The functional API of the pooling family: max_pooling2, max_pooling_grad and the generic neighbours.

The generic descs' functions: max_pooling, max_pooling1, average_pooling, average_pooling1,
lp_pooling, lp_pooling1, average_pooling_grad, max_unpooling (``dmlops.ops.pooling``).

MAX_POOLING2
------------
``dmlops.max_pooling2``: MAX_POOLING2 on arrays.

MAX_POOLING_GRAD
----------------
``dmlops.max_pooling_grad``: MAX_POOLING_GRAD on arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import DEFAULT_BACKEND
from ..descs.pooling import MaxPoolingGradDesc, PoolingWindow
from ..enums import FeatureLevel, TensorDataType
from ..errors import TensorMismatchError
from ..tensor import TensorDesc
from ._common import (
    array_argument,
    generic_desc,
    input_tensor,
    int_tuple,
    optional_int_tuple,
    run_outputs,
    run_single_output,
    tensor_of,
)

__all__ = [
    "average_pooling",
    "average_pooling1",
    "average_pooling_grad",
    "lp_pooling",
    "lp_pooling1",
    "max_pooling",
    "max_pooling1",
    "max_pooling2",
    "max_pooling_grad",
    "max_unpooling",
]

# -- MAX_POOLING2 --------------------------------------------------------------


def pooling_window(
    window_size: Sequence[int],
    strides: Sequence[int] | None,
    start_padding: Sequence[int] | None,
    end_padding: Sequence[int] | None,
    dilations: Sequence[int] | None,
    *,
    function: str = "max_pooling2",
) -> PoolingWindow:
    """The five window arrays with their defaults (strides and dilations 1, paddings 0).

    ArgumentTypeError (naming ``dmlops.<function>`` and the argument) for anything but
    sequences of integers.
    """
    window = int_tuple(window_size, function, "window_size")
    n = len(window)
    given = {
        name: optional_int_tuple(value, function, name)
        for name, value in (
            ("strides", strides),
            ("start_padding", start_padding),
            ("end_padding", end_padding),
            ("dilations", dilations),
        )
    }
    return PoolingWindow(
        strides=given["strides"] if given["strides"] is not None else (1,) * n,
        window_size=window,
        start_padding=given["start_padding"] if given["start_padding"] is not None else (0,) * n,
        end_padding=given["end_padding"] if given["end_padding"] is not None else (0,) * n,
        dilations=given["dilations"] if given["dilations"] is not None else (1,) * n,
    )


def _window_members(window: PoolingWindow, *, dilations: bool = True) -> dict[str, tuple[int, ...]]:
    """The desc members of ``window``: Strides, WindowSize, StartPadding, EndPadding (and Dilations)."""
    members = {
        "strides": window.strides,
        "window_size": window.window_size,
        "start_padding": window.start_padding,
        "end_padding": window.end_padding,
    }
    if dilations:
        members["dilations"] = window.dilations
    return members


def forward_output_sizes(input_sizes: Sequence[int], window: PoolingWindow, *, ceil_mode: bool) -> tuple[int, ...]:
    """``{N, C, *spatial}`` of the forward output.

    With ``ceil_mode`` each axis gets the ceil-mode size (one more window where the
    division is inexact) unless that last window would start past the end of the
    input, where PyTorch and ONNX drop it (it would hold only padding).

    A window larger than the padded input gives size 1 on its axis (one window over
    all of it, as DirectML takes it). Where no size can be computed (rank mismatch, a
    zero stride) a placeholder is returned so that the desc's validation, not this
    helper, names the rule that fails.
    """
    spatial = input_sizes[2:]
    if len(spatial) != window.spatial_dimension_count or min(window.strides, default=1) < 1:
        return tuple(input_sizes)  # reported by validate()
    floor = window.gradient_output_sizes(spatial)  # the floor size, or 1 where no window fits
    out = []
    for n, lo, padded, eff, stride, pad in zip(
        spatial, floor, window.padded_sizes(spatial), window.effective_window(), window.strides, window.start_padding
    ):
        hi = lo + 1 if ceil_mode and eff <= padded and (padded - eff) % stride else lo
        # The last window starts at input coordinate (hi - 1) * stride - pad.
        out.append(hi if (hi - 1) * stride - pad < n else lo)
    return (*input_sizes[:2], *out)


def max_pooling2(
    x: Any,
    window_size: Sequence[int],
    *,
    strides: Sequence[int] | None = None,
    start_padding: Sequence[int] | None = None,
    end_padding: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    return_indices: bool = False,
    indices_dtype: Any = np.uint32,
    ceil_mode: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_MAX_POOLING2: maximum over sliding (dilated) windows of ``x``.

    Parameters
    ----------
    x : array
        ``{N, C, H, W}`` or ``{N, C, D, H, W}``.
    window_size : sequence of int
        ``WindowSize``, one entry per spatial dimension.
    strides, start_padding, end_padding, dilations : sequence of int, optional
        ``Strides`` (default 1), ``StartPadding``/``EndPadding`` (default 0) and
        ``Dilations`` (default 1). Padding never takes part in the maximum.
    return_indices : bool
        Also return ``OutputIndicesTensor``: the row-major linear index of every
        selected element over the whole input (batch and channel included).
    indices_dtype : dtype
        ``np.uint32`` (default) or ``np.uint64`` (DML_FEATURE_LEVEL_5_0 and above).
    ceil_mode : bool
        Use the ceil-mode output size: one more window per axis where the last one
        would be partial, as ONNX Runtime passes for ``ceil_mode=1``, except
        where that window would start past the end of the input (PyTorch and ONNX
        drop it then).
    backend, feature_level
        As :func:`dmlops.execute`.
    out : array or tuple of arrays, optional
        Preallocated ``OutputTensor``, or ``(OutputTensor, OutputIndicesTensor)`` when
        ``return_indices``.

    Returns
    -------
    array or (array, array)
        The pooled values (dtype of ``x``, bit-exact), plus the indices when asked.

    Examples
    --------
    The forward example of the MAX_POOLING_GRAD page:

    >>> import numpy as np, dmlops
    >>> x = np.array([[1, 2, 3], [2, 4, 2], [5, 6, 7]], dtype=np.float32).reshape(1, 1, 3, 3)
    >>> y, i = dmlops.max_pooling2(x, [2, 2], return_indices=True)
    >>> y[0, 0], i[0, 0]
    (array([[4., 4.],
           [6., 7.]], dtype=float32), array([[4, 4],
           [7, 8]], dtype=uint32))
    """
    return _pooling(
        "MAX_POOLING2", x, window_size, strides, start_padding, end_padding, dilations, ceil_mode, {},
        indices_dtype if return_indices else None, backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


# -- MAX_POOLING_GRAD ----------------------------------------------------------


def max_pooling_grad(
    x: Any,
    dy: Any,
    window_size: Sequence[int],
    *,
    strides: Sequence[int] | None = None,
    start_padding: Sequence[int] | None = None,
    end_padding: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_MAX_POOLING_GRAD: the gradient of max pooling with respect to its input.

    Parameters
    ----------
    x : array
        ``InputTensor``, the forward input ``{N, C, [D], H, W}`` (FLOAT32/FLOAT16).
    dy : array
        ``InputGradientTensor``, shaped as the forward output (floor or ceil-mode
        size; its shape selects which), same dtype as ``x``.
    window_size, strides, start_padding, end_padding, dilations
        As :func:`dmlops.max_pooling2` (defaults: strides and dilations 1, paddings 0).
    backend, feature_level, out
        As :func:`dmlops.execute`.

    Returns
    -------
    array
        ``OutputGradientTensor``, shaped as ``x``: each ``dy`` element added at the
        position of its window's maximum (ties: lowest index), 0 elsewhere.

    Examples
    --------
    The page's example:

    >>> import numpy as np, dmlops
    >>> x = np.array([[1, 2, 3], [2, 4, 2], [5, 6, 7]], dtype=np.float32).reshape(1, 1, 3, 3)
    >>> dy = np.array([[1, 2], [4, 5]], dtype=np.float32).reshape(1, 1, 2, 2)
    >>> dmlops.max_pooling_grad(x, dy, [2, 2])[0, 0]
    array([[0., 0., 0.],
           [0., 3., 0.],
           [0., 4., 5.]], dtype=float32)
    """
    input_tensor = tensor_of(x, "x")
    window = pooling_window(window_size, strides, start_padding, end_padding, dilations, function="max_pooling_grad")
    desc = MaxPoolingGradDesc(
        input_tensor=input_tensor,
        input_gradient_tensor=tensor_of(dy, "dy"),
        output_gradient_tensor=input_tensor,
        **_window_members(window),
    )
    inputs = {"InputTensor": x, "InputGradientTensor": dy}
    return run_single_output(desc, inputs, backend=backend, feature_level=feature_level, out=out)


# -- MAX_POOLING, MAX_POOLING1, AVERAGE_POOLING(1), LP_POOLING(1): generic descs -----------


_DILATED = frozenset({"MAX_POOLING2", "AVERAGE_POOLING1", "LP_POOLING1"})
"""The pooling operators with a Dilations member (MAX_POOLING1 has none)."""


def _pooling(
    operator: str,
    x: Any,
    window_size: Sequence[int],
    strides: Sequence[int] | None,
    start_padding: Sequence[int] | None,
    end_padding: Sequence[int] | None,
    dilations: Sequence[int] | None,
    ceil_mode: bool,
    members: dict[str, Any],
    indices_dtype: Any = None,
    **run: Any,
) -> Any:
    """Build the operator's desc from arrays and run it (the shared body of the forward pooling functions).

    ``indices_dtype``: None, or the data type of an OutputIndicesTensor to return too
    (``out`` is then a ``(values, indices)`` tuple); ``run``: ``backend``, ``feature_level``, ``out``.
    """
    input_tensor = tensor_of(x, "x")
    window = pooling_window(window_size, strides, start_padding, end_padding, dilations, function=operator.lower())
    out_sizes = forward_output_sizes(input_tensor.sizes, window, ceil_mode=ceil_mode)
    fields: dict[str, Any] = {
        "input_tensor": input_tensor,
        "output_tensor": input_tensor.with_sizes(out_sizes),
        **_window_members(window, dilations=operator in _DILATED),
        **members,
    }
    outputs = ["OutputTensor"]
    if indices_dtype is not None:
        try:
            index_type = TensorDataType.from_numpy(indices_dtype)
        except (TypeError, ValueError) as exc:
            raise TensorMismatchError(f"indices_dtype: {exc}") from None
        fields["output_indices_tensor"] = TensorDesc(data_type=index_type, sizes=out_sizes)
        outputs.append("OutputIndicesTensor")
    desc = generic_desc(operator, **fields)
    out = run.pop("out")
    if indices_dtype is None:
        out = None if out is None else (out,)
    elif out is not None and (not isinstance(out, tuple) or len(out) != 2):
        raise TensorMismatchError("out must be a tuple (values, indices) when return_indices is True")
    result = run_outputs(desc, {"InputTensor": x}, outputs, out=out, **run)
    return result if indices_dtype is not None else result[0]


def max_pooling(
    x: Any,
    window_size: Sequence[int],
    *,
    strides: Sequence[int] | None = None,
    start_padding: Sequence[int] | None = None,
    end_padding: Sequence[int] | None = None,
    ceil_mode: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_MAX_POOLING: :func:`max_pooling2` without dilations or indices (same rules, bit-exact).

    >>> import numpy as np, dmlops.ops.pooling as P
    >>> x = np.array([[1, 2, 3], [2, 4, 2], [5, 6, 7]], dtype=np.float32).reshape(1, 1, 3, 3)
    >>> P.max_pooling(x, [2, 2])[0, 0]
    array([[4., 4.],
           [6., 7.]], dtype=float32)
    """
    return _pooling(
        "MAX_POOLING", x, window_size, strides, start_padding, end_padding, None, ceil_mode, {},
        backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def max_pooling1(
    x: Any,
    window_size: Sequence[int],
    *,
    strides: Sequence[int] | None = None,
    start_padding: Sequence[int] | None = None,
    end_padding: Sequence[int] | None = None,
    return_indices: bool = False,
    indices_dtype: Any = np.uint32,
    ceil_mode: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_MAX_POOLING1: :func:`max_pooling2` without dilations; indices as there.

    >>> import numpy as np, dmlops.ops.pooling as P
    >>> x = np.array([[1, 2, 3], [2, 4, 2], [5, 6, 7]], dtype=np.float32).reshape(1, 1, 3, 3)
    >>> P.max_pooling1(x, [2, 2], return_indices=True)[1][0, 0]
    array([[4, 4],
           [7, 8]], dtype=uint32)
    """
    return _pooling(
        "MAX_POOLING1", x, window_size, strides, start_padding, end_padding, None, ceil_mode, {},
        indices_dtype if return_indices else None, backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def average_pooling(
    x: Any,
    window_size: Sequence[int],
    *,
    strides: Sequence[int] | None = None,
    start_padding: Sequence[int] | None = None,
    end_padding: Sequence[int] | None = None,
    include_padding: bool = False,
    ceil_mode: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_AVERAGE_POOLING: the mean over each window (float32 sum in window order, one division).

    ``include_padding`` divides by the window's element count, else by the in-bounds count.

    >>> import numpy as np, dmlops.ops.pooling as P
    >>> x = np.array([1, 2, 3, 4, 5, 6, 7], dtype=np.float32).reshape(1, 1, 1, 7)
    >>> P.average_pooling(x, [1, 3], strides=[1, 2], start_padding=[0, 1], end_padding=[0, 1]).ravel()
    array([1.5, 3. , 5. , 6.5], dtype=float32)
    """
    return _pooling(
        "AVERAGE_POOLING", x, window_size, strides, start_padding, end_padding, None, ceil_mode,
        {"include_padding": bool(include_padding)}, backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def average_pooling1(
    x: Any,
    window_size: Sequence[int],
    *,
    strides: Sequence[int] | None = None,
    start_padding: Sequence[int] | None = None,
    end_padding: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    include_padding: bool = False,
    ceil_mode: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_AVERAGE_POOLING1: :func:`average_pooling` with Dilations (default 1)."""
    return _pooling(
        "AVERAGE_POOLING1", x, window_size, strides, start_padding, end_padding, dilations, ceil_mode,
        {"include_padding": bool(include_padding)}, backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def lp_pooling(
    x: Any,
    window_size: Sequence[int],
    *,
    p: int = 2,
    strides: Sequence[int] | None = None,
    start_padding: Sequence[int] | None = None,
    end_padding: Sequence[int] | None = None,
    ceil_mode: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_LP_POOLING: ``(sum |x|^P)^(1/P)`` over each window's in-bounds elements.

    >>> import numpy as np, dmlops.ops.pooling as P
    >>> x = np.array([3, 4, -2, 0.5], dtype=np.float32).reshape(1, 1, 1, 4)
    >>> P.lp_pooling(x, [1, 2], p=2).ravel()
    array([5.       , 4.472136 , 2.0615528], dtype=float32)
    """
    return _pooling(
        "LP_POOLING", x, window_size, strides, start_padding, end_padding, None, ceil_mode,
        {"p": int(p)}, backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def lp_pooling1(
    x: Any,
    window_size: Sequence[int],
    *,
    p: int = 2,
    strides: Sequence[int] | None = None,
    start_padding: Sequence[int] | None = None,
    end_padding: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    ceil_mode: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_LP_POOLING1: :func:`lp_pooling` with Dilations (default 1)."""
    return _pooling(
        "LP_POOLING1", x, window_size, strides, start_padding, end_padding, dilations, ceil_mode,
        {"p": int(p)}, backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


# -- AVERAGE_POOLING_GRAD, MAX_UNPOOLING: generic descs ---------------------------------------


def average_pooling_grad(
    dy: Any,
    input_sizes: Sequence[int],
    window_size: Sequence[int],
    *,
    strides: Sequence[int] | None = None,
    start_padding: Sequence[int] | None = None,
    end_padding: Sequence[int] | None = None,
    include_padding: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_AVERAGE_POOLING_GRAD: the gradient of :func:`average_pooling` with respect to its input.

    ``dy`` (InputGradientTensor) is shaped as the forward output; ``input_sizes`` is the
    forward input's shape (OutputGradientTensor.Sizes). Each ``dy`` element is divided by
    its window's count and added to the window's in-bounds elements; with
    ``include_padding`` the count is the window's part inside the padded input (erratum
    E171: not ``prod(window_size)`` for a window past ``end_padding``).

    The page's example:

    >>> import numpy as np, dmlops.ops.pooling as P
    >>> dy = np.array([[1, 2], [3, 4]], dtype=np.float32).reshape(1, 1, 2, 2)
    >>> P.average_pooling_grad(dy, [1, 1, 3, 3], [2, 2])[0, 0]
    array([[0.25, 0.75, 0.5 ],
           [1.  , 2.5 , 1.5 ],
           [0.75, 1.75, 1.  ]], dtype=float32)
    """
    array, tensor = input_tensor(dy, "average_pooling_grad", "dy", out=out)
    window = pooling_window(window_size, strides, start_padding, end_padding, None, function="average_pooling_grad")
    sizes = int_tuple(input_sizes, "average_pooling_grad", "input_sizes")
    desc = generic_desc(
        "AVERAGE_POOLING_GRAD",
        input_gradient_tensor=tensor,
        output_gradient_tensor=tensor.with_sizes(sizes),
        include_padding=bool(include_padding),
        **_window_members(window, dilations=False),
    )
    inputs = {"InputGradientTensor": array}
    return run_single_output(desc, inputs, backend=backend, feature_level=feature_level, out=out)


def max_unpooling(
    x: Any,
    indices: Any,
    output_sizes: Sequence[int],
    *,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_MAX_UNPOOLING: zeros of ``output_sizes``, each ``x`` element written at its flat index.

    ``indices`` (IndicesTensor, shaped as ``x``; a list becomes uint32) are row-major
    element indices of the whole output, as :func:`max_pooling2` returns them; one past
    the output writes nothing, a UINT64 one is read as its low 32 bits (erratum E170).
    Duplicate indices with different values are refused (DataIndexError: undefined).

    >>> import numpy as np, dmlops.ops.pooling as P
    >>> x = np.array([4, 7], dtype=np.float32).reshape(1, 1, 1, 2)
    >>> P.max_unpooling(x, np.array([1, 4], dtype=np.uint32).reshape(1, 1, 1, 2), [1, 1, 2, 3]).tolist()
    [[[[0.0, 4.0, 0.0], [0.0, 7.0, 0.0]]]]
    """
    array, tensor = input_tensor(x, "max_unpooling", out=out)
    index_array = array_argument(indices, "max_unpooling", "indices")
    if not hasattr(indices, "dtype"):
        index_array = index_array.astype(np.uint32)
    sizes = int_tuple(output_sizes, "max_unpooling", "output_sizes")
    desc = generic_desc(
        "MAX_UNPOOLING",
        input_tensor=tensor,
        indices_tensor=tensor_of(index_array, "indices"),
        output_tensor=tensor.with_sizes(sizes),
    )
    inputs = {"InputTensor": array, "IndicesTensor": index_array}
    return run_single_output(desc, inputs, backend=backend, feature_level=feature_level, out=out)
