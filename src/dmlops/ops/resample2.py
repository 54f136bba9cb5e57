"""``dmlops.resample2``: RESAMPLE2 on arrays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backends import DEFAULT_BACKEND
from ..descs._resample import parameter_fields
from ..descs.resample2 import Resample2Desc
from ..enums import AxisDirection, FeatureLevel, InterpolationMode
from ..errors import TensorMismatchError
from ._common import int_tuple, optional_number_tuple, run_single_output, tensor_of


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
