"""The functional API of the resampling family: resample2, resample_grad1 and the generic neighbours.

The generic descs' functions: resample, resample1, upsample_2d, resample_grad, value_scale_2d
(``dmlops.ops.resampling``).

RESAMPLE2
---------
``dmlops.resample2``: RESAMPLE2 on arrays.

RESAMPLE_GRAD1
--------------
``dmlops.resample_grad1``: RESAMPLE_GRAD1 on arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import DEFAULT_BACKEND
from ..descs import desc_class
from ..descs.resampling import parameter_fields, parse_interpolation_mode
from ..enums import AxisDirection, FeatureLevel, InterpolationMode
from ..errors import TensorMismatchError
from ._common import (
    generic_desc,
    input_tensor,
    int_tuple,
    number_tuple,
    optional_number_tuple,
    run_single_output,
    tensor_of,
    wrong_type,
)

__all__ = ["resample", "resample1", "resample2", "resample_grad", "resample_grad1", "upsample_2d", "value_scale_2d"]

# -- RESAMPLE2 -----------------------------------------------------------------


def resample2(
    x: Any,
    output_sizes: Sequence[int],
    *,
    interpolation_mode: InterpolationMode | str = "LINEAR",
    rounding_direction: AxisDirection | str = "DECREASING",
    scales: Sequence[float] | None = None,
    input_pixel_offsets: Sequence[float] | None = None,
    output_pixel_offsets: Sequence[float] | None = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_RESAMPLE2: resample every dimension of ``x`` to ``output_sizes``.

    Parameters
    ----------
    x : array
        The input tensor, 1 to 4 dimensions; FLOAT32/FLOAT16 (INT8/UINT8 from 6_2).
    output_sizes : sequence of int
        ``OutputTensor.Sizes``, one per dimension of ``x``.
    interpolation_mode : str or InterpolationMode
        ``"LINEAR"`` (default) or ``"NEAREST_NEIGHBOR"`` (``"nearest"`` also accepted).
    rounding_direction : str or AxisDirection
        Nearest-neighbour rounding: ``"DECREASING"`` (floor, default) or ``"INCREASING"``
        (ceil). DirectMLX defaults to INCREASING; dmlops defaults to floor.
    scales : sequence of float, optional
        ``Scales``; default ``output_sizes[d] / x.shape[d]`` in float32, as DirectMLX.
    input_pixel_offsets, output_pixel_offsets : sequence of float, optional
        Defaults 0.5 and -0.5 per dimension (pixel centres, ONNX half_pixel), as DirectMLX.
    backend, feature_level, out
        As :func:`dmlops.execute`.

    Returns
    -------
    array
        The resampled tensor, same dtype as ``x``.

    Raises
    ------
    TensorMismatchError
        If the sizes given do not have one entry per dimension of the array.

    Examples
    --------
    >>> import numpy as np, dmlops
    >>> dmlops.resample2(np.array([1, 2, 3, 4], dtype=np.float32), [8])
    array([1.  , 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4.  ], dtype=float32)
    """
    return _resample(
        "RESAMPLE2", x, output_sizes, interpolation_mode, rounding_direction, scales, input_pixel_offsets,
        output_pixel_offsets, backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


# -- RESAMPLE_GRAD1 ------------------------------------------------------------


def resample_grad1(
    dy: Any,
    input_sizes: Sequence[int],
    *,
    interpolation_mode: InterpolationMode | str = "LINEAR",
    rounding_direction: AxisDirection | str = "DECREASING",
    scales: Sequence[float] | None = None,
    input_pixel_offsets: Sequence[float] | None = None,
    output_pixel_offsets: Sequence[float] | None = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_RESAMPLE_GRAD1: the gradient of :func:`dmlops.resample2` with respect to its input.

    Parameters
    ----------
    dy : array
        ``InputGradientTensor``: the gradient of the forward output (its sizes).
        FLOAT32/FLOAT16, 1 to 4 dimensions.
    input_sizes : sequence of int
        The forward input's sizes, i.e. ``OutputGradientTensor.Sizes``.
    mode, rounding_direction, scales
        The forward's parameters, as :func:`dmlops.resample2` (Scales default to
        ``dy.shape[d] / input_sizes[d]``).
    input_pixel_offsets, output_pixel_offsets
        ``InputPixelOffsets`` and ``OutputPixelOffsets`` of RESAMPLE_GRAD1, which DirectML
        names after the grad's own tensors (erratum E25): ``input_pixel_offsets`` is the
        forward's *output* pixel offsets and ``output_pixel_offsets`` its *input* pixel
        offsets. The defaults, -0.5 / 0.5, make this the gradient of
        :func:`dmlops.resample2` with its defaults.
    backend, feature_level, out
        As :func:`dmlops.execute`.

    Returns
    -------
    array
        The gradient of the forward input, shape ``input_sizes``, same dtype as ``dy``.

    Raises
    ------
    TensorMismatchError
        If the sizes given do not have one entry per dimension of the array.

    Examples
    --------
    The page's example (erratum E14 parameters):

    >>> import numpy as np, dmlops
    >>> dy = np.array([[4, 5, 6]], dtype=np.float32)
    >>> dmlops.resample_grad1(dy, [2, 2], interpolation_mode="NEAREST_NEIGHBOR", scales=[0.5, 1.5])
    array([[9., 6.],
           [0., 0.]], dtype=float32)
    """
    return _resample(
        "RESAMPLE_GRAD1", dy, input_sizes, interpolation_mode, rounding_direction, scales, input_pixel_offsets,
        output_pixel_offsets, backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def _resample(
    operator: str,
    array: Any,
    sizes: Sequence[int],
    interpolation_mode: Any,
    rounding_direction: Any,
    scales: Sequence[float] | None,
    input_pixel_offsets: Sequence[float] | None,
    output_pixel_offsets: Sequence[float] | None,
    **run: Any,
) -> Any:
    """Build a RESAMPLE, RESAMPLE1, RESAMPLE2, RESAMPLE_GRAD or RESAMPLE_GRAD1 desc from arrays and run it.

    ``array`` is the forward's input ``x`` and ``sizes`` its output sizes, or for
    RESAMPLE_GRAD(1) the gradient ``dy`` and the forward's input sizes. The parameters
    get DirectMLX's defaults (:func:`~dmlops.descs.resampling.parameter_fields`); those
    the operator lacks (RESAMPLE1: RoundingDirection; RESAMPLE: the offsets too) are left
    out. ``run``: ``backend``, ``feature_level``, ``out``.
    """
    function, gradient = operator.lower(), operator.startswith("RESAMPLE_GRAD")
    array_name, sizes_name = ("dy", "input_sizes") if gradient else ("x", "output_sizes")
    tensor = tensor_of(array, array_name)
    target = int_tuple(sizes, function, sizes_name)
    given: dict[str, Any] = {
        name: optional_number_tuple(value, function, name)
        for name, value in (
            ("scales", scales),
            ("input_pixel_offsets", input_pixel_offsets),
            ("output_pixel_offsets", output_pixel_offsets),
        )
    }
    if len(target) != tensor.dimension_count:
        raise TensorMismatchError(
            f"{sizes_name} must have one entry per dimension of {array_name} ({tensor.dimension_count}); "
            f"got {len(target)}"
        )
    forward_sizes = (target, tensor.sizes) if gradient else (tensor.sizes, target)
    fields = parameter_fields(
        *forward_sizes, interpolation_mode=interpolation_mode, rounding_direction=rounding_direction,
        gradient=gradient, **given,
    )  # fmt: skip
    members = {info.attr for info in desc_class(operator).member_infos()}
    fields = {name: value for name, value in fields.items() if name in members}
    if gradient:
        desc = generic_desc(
            operator, input_gradient_tensor=tensor, output_gradient_tensor=tensor.with_sizes(target), **fields
        )
        return run_single_output(desc, {"InputGradientTensor": array}, **run)
    desc = generic_desc(operator, input_tensor=tensor, output_tensor=tensor.with_sizes(target), **fields)
    return run_single_output(desc, {"InputTensor": array}, **run)


# -- RESAMPLE, RESAMPLE1, UPSAMPLE_2D: generic descs -------------------------------------


def resample1(
    x: Any,
    output_sizes: Sequence[int],
    *,
    interpolation_mode: InterpolationMode | str = "LINEAR",
    scales: Sequence[float] | None = None,
    input_pixel_offsets: Sequence[float] | None = None,
    output_pixel_offsets: Sequence[float] | None = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_RESAMPLE1: :func:`resample2` without RoundingDirection; nearest picks ``floor(x + 0.5)``.

    Defaults as :func:`resample2` (Scales out/in, offsets 0.5 / -0.5). On INT8/UINT8
    tensors DirectML's nearest picks ``floor(x)``.

    >>> import numpy as np, dmlops.ops.resampling as R
    >>> x = np.array([1, 2, 3, 4], dtype=np.float32).reshape(1, 1, 1, 4)
    >>> R.resample1(x, [1, 1, 1, 7], interpolation_mode="NEAREST_NEIGHBOR").ravel()
    array([1., 1., 2., 3., 3., 4., 4.], dtype=float32)
    """
    return _resample(
        "RESAMPLE1", x, output_sizes, interpolation_mode, None, scales, input_pixel_offsets, output_pixel_offsets,
        backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def resample(
    x: Any,
    output_sizes: Sequence[int],
    *,
    interpolation_mode: InterpolationMode | str = "LINEAR",
    scales: Sequence[float] | None = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_RESAMPLE: :func:`resample1` with the offsets fixed at 0.5 / -0.5 (pixel centres).

    >>> import numpy as np, dmlops.ops.resampling as R
    >>> R.resample(np.array([1, 2, 3, 4], dtype=np.float32).reshape(1, 1, 1, 4), [1, 1, 1, 8]).ravel()
    array([1.  , 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4.  ], dtype=float32)
    """
    return _resample(
        "RESAMPLE", x, output_sizes, interpolation_mode, None, scales, None, None,
        backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def upsample_2d(
    x: Any,
    scale_size: tuple[int, int],
    *,
    interpolation_mode: InterpolationMode | str = "NEAREST_NEIGHBOR",
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_UPSAMPLE_2D: upsample H and W of a 4-D or 5-D ``x`` by ``scale_size = (height, width)``.

    >>> import numpy as np, dmlops.ops.resampling as R
    >>> x = np.array([1, 2, 3, 10], dtype=np.float32).reshape(1, 1, 1, 4)
    >>> R.upsample_2d(x, (1, 2), interpolation_mode="LINEAR").ravel().tolist()
    [1.0, 1.25, 1.75, 2.25, 2.75, 4.75, 8.25, 10.0]
    """
    from ..descs.generic import Size2D

    height, width = int_tuple(scale_size, "upsample_2d", "scale_size")
    tensor = tensor_of(x, "x")
    sizes = (*tensor.sizes[:-2], tensor.sizes[-2] * height, tensor.sizes[-1] * width)
    fields = {
        "scale_size": Size2D(width=width, height=height),
        "interpolation_mode": parse_interpolation_mode(interpolation_mode),
    }
    desc = generic_desc("UPSAMPLE_2D", input_tensor=tensor, output_tensor=tensor.with_sizes(sizes), **fields)
    return run_single_output(desc, {"InputTensor": x}, backend=backend, feature_level=feature_level, out=out)


def resample_grad(
    dy: Any,
    input_sizes: Sequence[int],
    *,
    interpolation_mode: InterpolationMode | str = "LINEAR",
    scales: Sequence[float] | None = None,
    input_pixel_offsets: Sequence[float] | None = None,
    output_pixel_offsets: Sequence[float] | None = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_RESAMPLE_GRAD: the gradient of :func:`resample1` (4-D, FLOAT32/FLOAT16).

    As :func:`resample_grad1` without RoundingDirection: NEAREST_NEIGHBOR is the transpose
    of RESAMPLE1's ``floor(x + 0.5)``. The offsets are named after this operator's own
    tensors (erratum E172): ``input_pixel_offsets`` is the forward's *output* pixel
    offsets (default -0.5), ``output_pixel_offsets`` its *input* pixel offsets (default 0.5).

    The page's example (erratum E150: InputPixelOffsets 0.5, OutputPixelOffsets 0):

    >>> import numpy as np, dmlops.ops.resampling as R
    >>> dy = np.array([4, 5, 6], dtype=np.float32).reshape(1, 1, 1, 3)
    >>> R.resample_grad(dy, [1, 1, 2, 2], interpolation_mode="NEAREST_NEIGHBOR", scales=[1, 1, 0.5, 1.5],
    ...                 input_pixel_offsets=[0.5] * 4, output_pixel_offsets=[0] * 4)[0, 0]
    array([[9., 6.],
           [0., 0.]], dtype=float32)
    """
    return _resample(
        "RESAMPLE_GRAD", dy, input_sizes, interpolation_mode, None, scales, input_pixel_offsets, output_pixel_offsets,
        backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def value_scale_2d(
    x: Any,
    *,
    scale: float = 1.0,
    bias: Sequence[float],
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_VALUE_SCALE_2D: ``x * scale + bias[c]`` per channel of an ``{N, C, H, W}`` ``x`` (C 1 or 3).

    Float32 arithmetic, the product rounded before the addition (bit-exact with DirectML).

    >>> import numpy as np, dmlops.ops.resampling as R
    >>> x = np.ones((1, 3, 1, 2), dtype=np.float32)
    >>> R.value_scale_2d(x, scale=2.0, bias=[0.5, -1.0, 10.0]).reshape(3, 2).tolist()
    [[2.5, 2.5], [1.0, 1.0], [12.0, 12.0]]
    """
    array, tensor = input_tensor(x, "value_scale_2d", out=out)
    if not isinstance(scale, (int, float, np.integer, np.floating)) or isinstance(scale, bool):
        raise wrong_type("value_scale_2d", "scale", "a number", scale)
    biases = tuple(float(v) for v in number_tuple(bias, "value_scale_2d", "bias"))
    desc = generic_desc("VALUE_SCALE_2D", input_tensor=tensor, output_tensor=tensor, scale=float(scale), bias=biases)
    return run_single_output(desc, {"InputTensor": array}, backend=backend, feature_level=feature_level, out=out)
