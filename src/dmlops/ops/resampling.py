"""The functional API of the resampling family: resample2, resample_grad1 and the generic neighbours.

The generic descs' functions: resample, resample1, upsample_2d (``dmlops.ops.resampling``).

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

from ..backends import DEFAULT_BACKEND
from ..descs.resampling import (
    Resample2Desc,
    ResampleGrad1Desc,
    default_scales,
    parameter_fields,
    parse_interpolation_mode,
)
from ..enums import AxisDirection, FeatureLevel, InterpolationMode
from ..errors import TensorMismatchError
from ._common import int_tuple, optional_number_tuple, run_single_output, tensor_of

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
    input_tensor = tensor_of(x, "x")
    output_sizes = int_tuple(output_sizes, "resample2", "output_sizes")
    scales = optional_number_tuple(scales, "resample2", "scales")
    input_pixel_offsets = optional_number_tuple(input_pixel_offsets, "resample2", "input_pixel_offsets")
    output_pixel_offsets = optional_number_tuple(output_pixel_offsets, "resample2", "output_pixel_offsets")
    dims = len(output_sizes)
    if dims != input_tensor.dimension_count:
        raise TensorMismatchError(
            f"output_sizes must have one entry per dimension of x ({input_tensor.dimension_count}); got {dims}"
        )
    desc = Resample2Desc(
        input_tensor=input_tensor,
        output_tensor=input_tensor.with_sizes(output_sizes),
        **parameter_fields(
            input_tensor.sizes,
            output_sizes,
            interpolation_mode=interpolation_mode,
            rounding_direction=rounding_direction,
            scales=scales,
            input_pixel_offsets=input_pixel_offsets,
            output_pixel_offsets=output_pixel_offsets,
        ),
    )
    return run_single_output(desc, {"InputTensor": x}, backend=backend, feature_level=feature_level, out=out)


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
    gradient_tensor = tensor_of(dy, "dy")
    input_sizes = int_tuple(input_sizes, "resample_grad1", "input_sizes")
    scales = optional_number_tuple(scales, "resample_grad1", "scales")
    input_pixel_offsets = optional_number_tuple(input_pixel_offsets, "resample_grad1", "input_pixel_offsets")
    output_pixel_offsets = optional_number_tuple(output_pixel_offsets, "resample_grad1", "output_pixel_offsets")
    dims = len(input_sizes)
    if dims != gradient_tensor.dimension_count:
        raise TensorMismatchError(
            f"input_sizes must have one entry per dimension of dy ({gradient_tensor.dimension_count}); got {dims}"
        )
    desc = ResampleGrad1Desc(
        input_gradient_tensor=gradient_tensor,
        output_gradient_tensor=gradient_tensor.with_sizes(input_sizes),
        **parameter_fields(
            input_sizes,
            gradient_tensor.sizes,
            interpolation_mode=interpolation_mode,
            rounding_direction=rounding_direction,
            scales=scales,
            input_pixel_offsets=input_pixel_offsets,
            output_pixel_offsets=output_pixel_offsets,
            gradient=True,
        ),
    )
    return run_single_output(
        desc,
        {"InputGradientTensor": dy},
        backend=backend,
        feature_level=feature_level,
        out=out,
        output_member="OutputGradientTensor",
    )


# -- RESAMPLE, RESAMPLE1, UPSAMPLE_2D: generic descs -------------------------------------


def _generic_resample(
    operator: str,
    x: Any,
    output_sizes: Sequence[int],
    members: dict[str, Any],
    *,
    backend: str,
    feature_level: FeatureLevel | str | None,
    out: Any,
) -> Any:
    from ..descs import desc_class

    input_tensor = tensor_of(x, "x")
    sizes = int_tuple(output_sizes, operator.lower(), "output_sizes")
    if len(sizes) != input_tensor.dimension_count:
        raise TensorMismatchError(
            f"output_sizes must have one entry per dimension of x ({input_tensor.dimension_count}); got {len(sizes)}"
        )
    cls: Any = desc_class(operator)
    desc = cls(input_tensor=input_tensor, output_tensor=input_tensor.with_sizes(sizes), **members)
    return run_single_output(desc, {"InputTensor": x}, backend=backend, feature_level=feature_level, out=out)


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
    input_tensor = tensor_of(x, "x")
    fields = parameter_fields(
        input_tensor.sizes,
        int_tuple(output_sizes, "resample1", "output_sizes"),
        interpolation_mode=interpolation_mode,
        rounding_direction=None,
        scales=optional_number_tuple(scales, "resample1", "scales"),
        input_pixel_offsets=optional_number_tuple(input_pixel_offsets, "resample1", "input_pixel_offsets"),
        output_pixel_offsets=optional_number_tuple(output_pixel_offsets, "resample1", "output_pixel_offsets"),
    )
    del fields["rounding_direction"]
    return _generic_resample(
        "RESAMPLE1", x, output_sizes, fields, backend=backend, feature_level=feature_level, out=out
    )


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
    input_tensor = tensor_of(x, "x")
    sizes = int_tuple(output_sizes, "resample", "output_sizes")
    given = optional_number_tuple(scales, "resample", "scales")
    fields = {
        "interpolation_mode": parse_interpolation_mode(interpolation_mode),
        "scales": given if given is not None else default_scales(input_tensor.sizes, sizes),
    }
    return _generic_resample("RESAMPLE", x, sizes, fields, backend=backend, feature_level=feature_level, out=out)


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
    input_tensor = tensor_of(x, "x")
    sizes = (*input_tensor.sizes[:-2], input_tensor.sizes[-2] * height, input_tensor.sizes[-1] * width)
    fields = {
        "scale_size": Size2D(width=width, height=height),
        "interpolation_mode": parse_interpolation_mode(interpolation_mode),
    }
    return _generic_resample("UPSAMPLE_2D", x, sizes, fields, backend=backend, feature_level=feature_level, out=out)
