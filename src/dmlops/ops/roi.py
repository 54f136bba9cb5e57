"""The functional API of the ROI family: roi_align; roi_align1, roi_pooling and roi_align_grad (generic descs).

ROI_ALIGN
---------
``dmlops.roi_align``: ROI_ALIGN on arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import DEFAULT_BACKEND
from ..descs.roi import UINT32_MAX
from ..enums import FeatureLevel, InterpolationMode, ReduceFunction
from ..errors import ArgumentValueError, DataIndexError
from ._common import (
    array_argument,
    generic_desc,
    input_tensor,
    number_or_pair,
    run_outputs,
    run_single_output,
    tensor_of,
    wrong_type,
)

__all__ = ["roi_align", "roi_align1", "roi_align_grad", "roi_pooling"]

# -- ROI_ALIGN -----------------------------------------------------------------


def roi_align(
    x: Any,
    roi: Any,
    batch_indices: Any,
    output_size: int | Sequence[int],
    *,
    spatial_scale: float | Sequence[float] = 1.0,
    reduction_function: ReduceFunction | str = "AVERAGE",
    interpolation_mode: InterpolationMode | str = "LINEAR",
    out_of_bounds_input_value: float = 0.0,
    minimum_samples_per_output: int = 1,
    maximum_samples_per_output: int = UINT32_MAX,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_ROI_ALIGN: crop every ROI out of ``x`` and resize it to ``output_size``.

    Half-pixel semantics (ONNX RoiAlign-16 ``half_pixel``): with scale 1, the ROI
    ``[0, 0, W, H]`` and one sample per output, output pixel ``(i, j)`` samples input
    pixel centre ``(i, j)``. See :class:`~dmlops.descs.roi.RoiAlignDesc` for the
    exact sampling, out-of-bounds and reduction rules.

    Parameters
    ----------
    x : array of shape (BatchCount, ChannelCount, InputHeight, InputWidth)
        ``InputTensor``, float32 or float16.
    roi : array of shape (NumROIs, 4), (1, NumROIs, 4) or (1, 1, NumROIs, 4)
        ``ROITensor``: rows ``[x1, y1, x2, y2]`` (x first) in the coordinates that
        ``spatial_scale`` maps to input pixels; same dtype as ``x`` (a list is
        converted to it).
    batch_indices : array of NumROIs unsigned integers
        ``BatchIndicesTensor`` (uint32; uint64 from DML_FEATURE_LEVEL_5_0), shapes
        (NumROIs,) to (1, 1, 1, NumROIs); a list is converted to uint32. Every index
        must be below BatchCount, else :class:`~dmlops.errors.DataIndexError`.
    output_size : int or (int, int)
        ``(OutputHeight, OutputWidth)``; an int is used for both.
    spatial_scale : float or (float, float)
        ``SpatialScaleX`` and ``SpatialScaleY``: one value for both or ``(x, y)``
        (x first, like the ROI rows).
    reduction_function : {"AVERAGE", "MAX"}
        ``ReductionFunction`` over the samples of one output element.
    interpolation_mode : {"LINEAR", "NEAREST_NEIGHBOR"}
        ``InterpolationMode`` of each sample.
    out_of_bounds_input_value : float
        ``OutOfBoundsInputValue``: the value of samples outside the input.
    minimum_samples_per_output, maximum_samples_per_output : int
        ``MinimumSamplesPerOutput`` / ``MaximumSamplesPerOutput``: clamp of the
        per-axis sample count ``ceil(|scaled ROI size| / output size)``. The defaults
        (1, UINT32_MAX) are fully adaptive (ONNX ``sampling_ratio=0``); ``k, k`` gives
        a fixed ``k x k`` grid (ONNX/torchvision ``sampling_ratio=k``).
    backend, feature_level, out
        As :func:`dmlops.execute`.

    Returns
    -------
    array of shape (NumROIs, ChannelCount, OutputHeight, OutputWidth)
        ``OutputTensor``, same dtype as ``x``.

    Examples
    --------
    The identity crop: a ROI covering the whole 4x4 image, one sample per output.

    >>> import numpy as np, dmlops
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> roi = np.array([[0, 0, 4, 4]], dtype=np.float32)
    >>> y = dmlops.roi_align(x, roi, [0], 4, minimum_samples_per_output=1, maximum_samples_per_output=1)
    >>> bool((y == x).all())
    True
    """
    sampling = _sampling(
        reduction_function, interpolation_mode, out_of_bounds_input_value, minimum_samples_per_output,
        maximum_samples_per_output,
    )  # fmt: skip
    return _roi_align(
        "ROI_ALIGN", x, roi, batch_indices, output_size, spatial_scale, sampling,
        backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


def _sampling(
    reduction_function: Any, interpolation_mode: Any, out_of_bounds_input_value: Any, minimum: Any, maximum: Any
) -> dict[str, Any]:
    """The sampling members ROI_ALIGN and ROI_ALIGN1 share (enums are coerced, and rejected, by the desc)."""
    return {
        "reduction_function": reduction_function,
        "interpolation_mode": interpolation_mode,
        "out_of_bounds_input_value": out_of_bounds_input_value,
        "minimum_samples_per_output": minimum,
        "maximum_samples_per_output": maximum,
    }


def _roi_align(
    operator: str,
    x: Any,
    roi: Any,
    batch_indices: Any,
    output_size: int | Sequence[int],
    spatial_scale: float | Sequence[float],
    members: dict[str, Any],
    **run: Any,
) -> Any:
    """Build a ROI_ALIGN / ROI_ALIGN1 desc from arrays and run it (``run``: backend, feature_level, out)."""
    function = operator.lower()
    input_tensor = tensor_of(x, "x")
    roi = array_argument(roi, function, "roi", input_tensor.dtype)
    if not hasattr(batch_indices, "dtype"):
        batch_indices = array_argument(batch_indices, function, "batch_indices")
        if batch_indices.dtype.kind not in "iu":
            raise wrong_type(function, "batch_indices", "an array of integers", batch_indices)
        batch_indices = batch_indices.astype(np.int64)
        negative = np.flatnonzero(batch_indices.reshape(-1) < 0)
        if negative.size:
            r = int(negative[0])
            raise DataIndexError(
                f"batch_indices: ROI {r} has batch index {int(batch_indices.reshape(-1)[r])}, outside [0, BatchCount)"
            )
        batch_indices = batch_indices.astype(np.uint32)
    oh, ow = number_or_pair(output_size, function, "output_size", integer=True)
    sx, sy = number_or_pair(spatial_scale, function, "spatial_scale")
    roi_tensor = tensor_of(roi, "roi")
    # A 0-d roi gets NumROIs 1 here; the desc then refuses its DimensionCount.
    num_rois = roi_tensor.sizes[-2] if roi_tensor.dimension_count >= 2 else (roi_tensor.sizes or (1,))[0]
    channels = input_tensor.sizes[1] if input_tensor.dimension_count == 4 else 1
    # Enum names and numbers are coerced (and rejected with the member's name) by the desc.
    attrs: dict[str, Any] = dict(spatial_scale_x=sx, spatial_scale_y=sy, **members)
    desc = generic_desc(
        operator,
        input_tensor=input_tensor,
        roi_tensor=roi_tensor,
        batch_indices_tensor=tensor_of(batch_indices, "batch_indices"),
        output_tensor=input_tensor.with_sizes((num_rois, channels, int(oh), int(ow))),
        **attrs,
    )
    inputs = {"InputTensor": x, "ROITensor": roi, "BatchIndicesTensor": batch_indices}
    return run_single_output(desc, inputs, **run)


# -- ROI_ALIGN1 (generic desc) ---------------------------------------------------------------


def roi_align1(
    x: Any,
    roi: Any,
    batch_indices: Any,
    output_size: int | Sequence[int],
    *,
    spatial_scale: float | Sequence[float] = 1.0,
    reduction_function: ReduceFunction | str = "AVERAGE",
    interpolation_mode: InterpolationMode | str = "LINEAR",
    input_pixel_offset: float = 0.5,
    output_pixel_offset: float = -0.5,
    out_of_bounds_input_value: float = 0.0,
    minimum_samples_per_output: int = 1,
    maximum_samples_per_output: int = UINT32_MAX,
    align_regions_to_corners: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_ROI_ALIGN1: :func:`roi_align` with its pixel offsets and AlignRegionsToCorners as arguments.

    The defaults (0.5, -0.5, False) are ROI_ALIGN. TensorFlow's crop-and-resize is
    offsets 0 / 0, AlignRegionsToCorners True, one sample per output (samples on the
    region's corners; outside ``[0, size - 1]`` reads ``out_of_bounds_input_value``).

    >>> import numpy as np, dmlops.ops.roi as O
    >>> x = np.arange(8, dtype=np.float32).reshape(1, 1, 1, 8) * 10
    >>> O.roi_align1(x, [[0, 0, 3, 0]], [0], (1, 4), input_pixel_offset=0, output_pixel_offset=0,
    ...              align_regions_to_corners=True, maximum_samples_per_output=1).ravel().tolist()
    [0.0, 10.0, 20.0, 30.0]
    """
    sampling = _sampling(
        reduction_function, interpolation_mode, out_of_bounds_input_value, minimum_samples_per_output,
        maximum_samples_per_output,
    )  # fmt: skip
    members = {
        **sampling,
        "input_pixel_offset": float(input_pixel_offset),
        "output_pixel_offset": float(output_pixel_offset),
        "align_regions_to_corners": bool(align_regions_to_corners),
    }
    return _roi_align(
        "ROI_ALIGN1", x, roi, batch_indices, output_size, spatial_scale, members,
        backend=backend, feature_level=feature_level, out=out,
    )  # fmt: skip


# -- ROI_POOLING (generic desc) --------------------------------------------------------------


def roi_pooling(
    x: Any,
    roi: Any,
    pooled_size: int | Sequence[int],
    *,
    spatial_scale: float = 1.0,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_ROI_POOLING: the max of every bin of every region (Fast R-CNN's RoI pooling, ONNX MaxRoiPool).

    Each region's corners ``round(coordinate * spatial_scale)`` (halves to even) are
    inclusive; the region is split into ``pooled_size`` bins of whole pixels (bin ``p`` of
    ``n`` covers ``[floor(p * size / n), ceil((p + 1) * size / n))``), clamped to the input;
    an empty bin is 0. See :func:`dmlops.descs.roi.pooling_bins` for DirectML's exact
    arithmetic (batch IDs truncated and clamped, int32 wrap-around).

    Parameters
    ----------
    x : array of shape (BatchCount, ChannelCount, InputHeight, InputWidth)
        ``InputTensor``, float32 or float16.
    roi : array of shape (NumROIs, 5) or (1, 1, NumROIs, 5)
        ``ROITensor``: rows ``[batch_id, x1, y1, x2, y2]`` (the batch ID a float), same dtype
        as ``x`` (a list is converted to it); a 2-D array is passed as ``{1, 1, NumROIs, 5}``.
    pooled_size : int or (int, int)
        ``PooledSize`` as ``(Height, Width)``; an int is used for both.
    spatial_scale : float
        ``SpatialScale``: multiplies the corners into input pixels.
    backend, feature_level, out
        As :func:`dmlops.execute`.

    Returns
    -------
    array of shape (NumROIs, ChannelCount, PooledHeight, PooledWidth)
        ``OutputTensor``, same dtype as ``x``.

    Examples
    --------
    >>> import numpy as np, dmlops.ops.roi as O
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> O.roi_pooling(x, [[0, 0, 0, 3, 3]], 2).reshape(2, 2).tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """
    from ..descs.generic import Size2D

    x, x_tensor = input_tensor(x, "roi_pooling", out=out)
    roi = array_argument(roi, "roi_pooling", "roi", x_tensor.dtype)
    if roi.ndim == 2:
        roi = roi.reshape(1, 1, *roi.shape)
    height, width = number_or_pair(pooled_size, "roi_pooling", "pooled_size", integer=True)
    roi_tensor = tensor_of(roi, "roi")
    num_rois = roi_tensor.sizes[2] if roi_tensor.dimension_count == 4 else 1
    channels = x_tensor.sizes[1] if x_tensor.dimension_count == 4 else 1
    desc = generic_desc(
        "ROI_POOLING",
        input_tensor=x_tensor,
        roi_tensor=roi_tensor,
        output_tensor=x_tensor.with_sizes((num_rois, channels, int(height), int(width))),
        spatial_scale=float(spatial_scale),
        pooled_size=Size2D(width=int(width), height=int(height)),
    )
    inputs = {"InputTensor": x, "ROITensor": roi}
    return run_single_output(desc, inputs, backend=backend, feature_level=feature_level, out=out)


# -- ROI_ALIGN_GRAD (generic desc) -----------------------------------------------------------


def roi_align_grad(
    dy: Any,
    roi: Any,
    batch_indices: Any,
    x: Any = None,
    *,
    input_shape: Sequence[int] | None = None,
    spatial_scale: float | Sequence[float] = 1.0,
    reduction_function: ReduceFunction | str = "AVERAGE",
    interpolation_mode: InterpolationMode | str = "LINEAR",
    input_pixel_offset: float = 0.5,
    output_pixel_offset: float = -0.5,
    minimum_samples_per_output: int = 1,
    maximum_samples_per_output: int = UINT32_MAX,
    align_regions_to_corners: bool = False,
    return_input_gradient: bool = True,
    return_roi_gradient: bool = False,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Sequence[Any] | None = None,
) -> Any:
    """DML_ROI_ALIGN_GRAD: the gradients of :func:`roi_align1` with respect to its input and its ROIs.

    ``dy`` is the gradient of the forward's output (``InputGradientTensor``); ``x`` the
    forward's input (``InputTensor``: needed for MAX and for the ROI gradient); without
    it, ``input_shape`` gives the forward input's sizes. The sampling members are
    :func:`roi_align1`'s. Returns ``OutputGradientTensor`` (``return_input_gradient``),
    ``OutputROIGradientTensor`` (``return_roi_gradient``), or both as a tuple in that order.
    The ROI gradient is DirectML's (erratum E194; see
    :func:`dmlops.descs.roi.roi_gradient_coefficients`), not the forward's derivative.

    >>> import numpy as np, dmlops.ops.roi as O
    >>> dy = np.ones((1, 1, 1, 1), dtype=np.float32)
    >>> O.roi_align_grad(dy, [[0, 0, 2, 2]], [0], input_shape=(1, 1, 2, 2), maximum_samples_per_output=1)[0, 0].tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    function = "roi_align_grad"
    if not (return_input_gradient or return_roi_gradient):
        raise ArgumentValueError(f"dmlops.{function}: return_input_gradient or return_roi_gradient must be True")
    dy, dy_tensor = input_tensor(dy, function, "dy")
    roi = array_argument(roi, function, "roi", dy_tensor.dtype)
    batch_indices = array_argument(batch_indices, function, "batch_indices")
    if not hasattr(batch_indices, "dtype") or batch_indices.dtype.kind not in "iu":
        raise wrong_type(function, "batch_indices", "an array of integers", batch_indices)
    if batch_indices.dtype.kind == "i":
        batch_indices = batch_indices.astype(np.uint32)
    if x is not None:
        x, x_tensor = input_tensor(x, function, "x")
        shape = x_tensor.sizes
    elif input_shape is not None:
        shape = tuple(int(v) for v in input_shape)
    else:
        raise ArgumentValueError(f"dmlops.{function}: give x (the forward's input) or input_shape")
    sx, sy = number_or_pair(spatial_scale, function, "spatial_scale")
    roi_tensor = tensor_of(roi, "roi")
    members: dict[str, Any] = {
        **_sampling(
            reduction_function, interpolation_mode, 0.0, minimum_samples_per_output, maximum_samples_per_output
        ),
        "input_pixel_offset": float(input_pixel_offset),
        "output_pixel_offset": float(output_pixel_offset),
        "align_regions_to_corners": bool(align_regions_to_corners),
        "spatial_scale_x": sx,
        "spatial_scale_y": sy,
    }
    del members["out_of_bounds_input_value"]
    wanted = [
        m
        for m, on in (("OutputGradientTensor", return_input_gradient), ("OutputROIGradientTensor", return_roi_gradient))
        if on
    ]
    desc = generic_desc(
        "ROI_ALIGN_GRAD",
        input_tensor=None if x is None else x_tensor,
        input_gradient_tensor=dy_tensor,
        roi_tensor=roi_tensor,
        batch_indices_tensor=tensor_of(batch_indices, "batch_indices"),
        output_gradient_tensor=dy_tensor.with_sizes(shape) if return_input_gradient else None,
        output_roi_gradient_tensor=roi_tensor if return_roi_gradient else None,
        **members,
    )
    inputs = {"InputGradientTensor": dy, "ROITensor": roi, "BatchIndicesTensor": batch_indices}
    if x is not None:
        inputs["InputTensor"] = x
    result = run_outputs(desc, inputs, wanted, backend=backend, feature_level=feature_level, out=out)
    return result if len(result) > 1 else result[0]
