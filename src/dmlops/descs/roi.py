"""ROI descs and their semantics: ROI_ALIGN and its generic neighbour ROI_ALIGN1.

The family also *claims* ROI_ALIGN1, which keeps its generic (catalogue-made) desc
(:func:`claim`) and shares ROI_ALIGN's rules and sample machinery: ROI_ALIGN is
ROI_ALIGN1 with InputPixelOffset 0.5, OutputPixelOffset -0.5 and AlignRegionsToCorners
FALSE.

The desc class (:class:`RoiAlignDesc`) and the rules every backend reads: samples per
output (:func:`samples_per_output`), the taps of sample coordinates (:func:`sample_taps`),
the batch-index rule (:func:`batch_indices`, ruling 3) and the memory estimate per sample
(``SAMPLE_BYTES``).

ROI_POOLING (its bins: :func:`pooling_bins`) and ROI_ALIGN_GRAD (ROI_ALIGN1's samples and
taps, and the ROI gradient's factors :func:`roi_gradient_coefficients`) are claimed, as
ROI_ALIGN1, for every backend (:data:`claim`). Their own rules, each checked against DirectML 1.15.4's
CreateOperator (it wins where the pages are silent or say otherwise):

* ROI_ALIGN_GRAD: OutputGradientTensor or OutputROIGradientTensor (at least one);
  InputTensor when OutputROIGradientTensor is supplied or ReductionFunction is MAX (it
  may be left out otherwise). ROITensor and BatchIndicesTensor as ROI_ALIGN's
  (:func:`roi_count`). OutputGradientTensor has InputTensor's Sizes; InputGradientTensor
  is ``{NumROIs, ChannelCount, any, any}``, ChannelCount InputTensor's (or, without it,
  OutputGradientTensor's); OutputROIGradientTensor has ROITensor's Sizes exactly (a
  ``{1, NumROIs, 4}`` one for a ``{NumROIs, 4}`` ROITensor is rejected). The attribute
  rules are ROI_ALIGN's (:func:`validate_align_parameters`: AVERAGE or MAX, scales >= 0
  and finite, NaN accepted, ``1 <= Minimum <= Maximum``); the pixel offsets may be any
  float (NaN and infinities accepted).
* ROI_POOLING: ROITensor is ``{1, 1, NumROIs, 5}``, as the current page says (the stored
  copy's 2-D ``(num_rois, 5)`` is rejected, erratum E151); PooledSize entries >= 1;
  OutputTensor is ``{NumROIs, ChannelCount, PooledSize.Height, PooledSize.Width}``,
  ChannelCount InputTensor's. Any SpatialScale (0, negative, NaN, inf) is accepted.

What DirectML 1.15.4 computes for ROI_POOLING (measured on the ``directml`` backend,
tests/directml/test_directml_roi_neighbours.py; errata E190-E192):

* the batch: the BatchID float truncated toward zero, clamped to ``[0, BatchCount - 1]``
  (:func:`pooling_batches`, E191);
* the corners ``round(coordinate * SpatialScale)``, halves to even, the region
  ``max(x2 - x1 + 1, 1)`` pixels wide (an inverted region is its first pixel), the page's
  integer bin bounds in 32-bit arithmetic that wraps (:func:`pooling_bins`, E190);
* per bin the max from the type's lowest finite value, strictly greater replacing, rows
  then columns (NaN never wins, the first of +0 and -0 is kept); 0 for an empty bin (E192).

What DirectML 1.15.4 computes for ROI_ALIGN_GRAD (errata E193-E196): OutputGradientTensor
is the transpose of ROI_ALIGN1's sampling (each sample's share of its output's gradient,
1/(sY sX) for AVERAGE, the whole of it for the sample MAX picks, to its taps with the
bilinear weights); MAX picks as the forward (the first of equal samples, NaN never) with an
out-of-bounds sample competing as 0 (E195); OutputROIGradientTensor is not the forward's
derivative but the page's pseudo-code with DirectML's factors
(:func:`roi_gradient_coefficients`, E194). AVERAGE with InputTensor and no ROI gradient
removes this stack's device (E196).

A scaled corner beyond int32 or NaN is converted as D3D's ``ftoi`` does (saturated; NaN
to 0). This Wine + lavapipe stack converts it to INT_MIN instead (its x86 conversion), a
stack artefact that the differential test keeps out of its random cases.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..enums import FeatureLevel, InterpolationMode, OperatorType, ReduceFunction
from ..enums import TensorDataType as T
from ..errors import DataIndexError
from ..tensor import TensorDesc
from ._base import OperatorDesc, TensorSupport, attr_field, family_claim, tensor_field

# -- ROI_ALIGN -----------------------------------------------------------------

UINT32_MAX = 0xFFFFFFFF
"""``MaximumSamplesPerOutput`` that leaves the adaptive sample count unbounded (ONNX Runtime's mapping
of ``sampling_ratio = 0``)."""

_FLOATS = (T.FLOAT32, T.FLOAT16)


def _table(*index_types: T) -> dict[str, TensorSupport]:
    return {
        "InputTensor": TensorSupport.of(4, *_FLOATS),
        "ROITensor": TensorSupport.of((2, 4), *_FLOATS),
        "BatchIndicesTensor": TensorSupport.of((1, 4), *index_types),
        "OutputTensor": TensorSupport.of(4, *_FLOATS),
    }


def samples_per_output(scaled_size: float, output_size: int, minimum: int, maximum: int) -> int:
    """Samples along one axis for every output element (ruling 5).

    ``clamp(ceil(abs(scaled_size) / output_size), minimum, maximum)``: the page's
    "ScaledCropSize / OutputSize, clamped to Minimum/MaximumSamplesPerOutput", rounded
    up (ONNX Runtime maps ONNX's adaptive ``ceil(roi / output)`` onto Min = 1, Max =
    UINT32_MAX) and taken on ``abs`` so inverted regions count like upright ones.
    """
    ratio = abs(scaled_size) / output_size
    if not math.isfinite(ratio):
        # ROI coordinates of inf/nan: every sample coordinate is inf/nan, hence out of
        # bounds, so the count cannot change the result; take the cheapest.
        return minimum
    return min(max(math.ceil(ratio), minimum), maximum)


@dataclass(frozen=True, kw_only=True)
class RoiAlignDesc(OperatorDesc):
    """Performs an ROI Align operation (Mask R-CNN): crops of the input resized to the output size.

    For each ROI ``r`` (an ``[x1, y1, x2, y2]`` row of ``ROITensor``) the region of
    batch ``BatchIndicesTensor[r]`` is cut out of ``InputTensor``, sampled on a regular
    grid of ``OutputHeight·sY × OutputWidth·sX`` points and reduced per output
    element over its ``sY·sX`` samples. Per axis (X shown; Y is the same with
    ``SpatialScaleY``, ``OutputHeight`` and ``InputHeight``)::

        x1s = x1 * SpatialScaleX;  sizeX = x2 * SpatialScaleX - x1s    # may be 0 or < 0
        sX  = clamp(ceil(|sizeX| / OutputWidth), MinimumSamplesPerOutput, MaximumSamplesPerOutput)
        NX  = OutputWidth * sX;    stepX = sizeX / NX
        xin = (j + 0.5) * stepX + x1s - 0.5                           # sample j in [0, NX)

    A sample with ``xin < -1``, ``xin > InputWidth``, ``yin < -1`` or ``yin >
    InputHeight`` reads ``OutOfBoundsInputValue``; otherwise its coordinates are
    clamped to ``[0, InputWidth - 1]`` / ``[0, InputHeight - 1]`` and read with
    bilinear (LINEAR) or nearest-neighbour (``floor(x + 0.5)``) interpolation. AVERAGE
    is the mean of all ``sY·sX`` samples (out-of-bounds ones included with their
    value); MAX is the largest interpolated sample.

    Attributes
    ----------
    input_tensor : TensorDesc
        ``InputTensor`` of shape (BatchCount, ChannelCount, InputHeight, InputWidth).
    roi_tensor : TensorDesc
        ``ROITensor`` of shape (NumROIs, 4), (1, NumROIs, 4) or (1, 1, NumROIs, 4);
        rows are ``[x1, y1, x2, y2]`` before scaling.
    batch_indices_tensor : TensorDesc
        ``BatchIndicesTensor`` of shape (NumROIs,), (1, NumROIs), (1, 1, NumROIs) or
        (1, 1, 1, NumROIs): the batch each ROI is cut from.
    output_tensor : TensorDesc
        ``OutputTensor`` of shape (NumROIs, ChannelCount, OutputHeight, OutputWidth).
    reduction_function : ReduceFunction
        ``ReductionFunction``: AVERAGE or MAX.
    interpolation_mode : InterpolationMode
        ``InterpolationMode``: NEAREST_NEIGHBOR or LINEAR.
    spatial_scale_x, spatial_scale_y : float
        ``SpatialScaleX`` / ``SpatialScaleY``: multiply the ROI coordinates into input
        pixels (>= 0 and not infinite; NaN is accepted, as DirectML does).
    out_of_bounds_input_value : float
        ``OutOfBoundsInputValue``: the value of a sample outside the input.
    minimum_samples_per_output, maximum_samples_per_output : int
        ``MinimumSamplesPerOutput`` / ``MaximumSamplesPerOutput``: clamp of the
        per-axis sample count, ``1 <= Minimum <= Maximum``.

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_3_0; ``BatchIndicesTensor`` may be UINT64 from
    DML_FEATURE_LEVEL_5_0 (the seed revision of the page predates that table,
    erratum E16).

    DML_ROI_ALIGN is DML_ROI_ALIGN1 with InputPixelOffset 0.5, OutputPixelOffset
    -0.5 and AlignRegionsToCorners FALSE (the ROI_ALIGN1 page), i.e. ONNX RoiAlign-16
    ``coordinate_transformation_mode="half_pixel"`` and torchvision ``aligned=True``.
    Unlike ONNX's ``output_half_pixel`` mode no region is enlarged to 1 pixel.

    Where the page is silent dmlops follows these rulings (docs/errata.md):

    * sample counts are per axis, ``ceil`` of ``abs(size) / output`` (ruling 5);
      zero-size regions sample their one point;
    * out of bounds means ``x <= -1`` or ``x >= InputWidth`` (same in y), as DirectML
      1.15.4 computes (erratum E28); coordinates in ``(-1, 0)`` or ``(W - 1, W)`` clamp
      to the edge (ruling 6, erratum E24: the page mentions only coordinates beyond the
      input size);
    * NEAREST_NEIGHBOR rounds ``floor(x + 0.5)`` (ties up; ruling 4). The one
      DirectML-authored nearest example (ROI_ALIGN_GRAD page) needs ties down
      (erratum E18);
    * MAX takes the maximum of interpolated samples, starting from the type's lowest
      finite value and ignoring NaN, as DirectML 1.15.4 does (the ROI_ALIGN1 pseudo-code
      initialises it to 0, erratum E17; erratum E29);
    * the arithmetic is DirectML 1.15.4's (erratum E38): a LINEAR sample lerps
      ``a + (b - a)·t`` in float32 along y, then x, every tap read (an infinite tap gives
      NaN even at weight 0; a coordinate in (-1, 0) reads only the edge pixel); AVERAGE is
      a float32 running sum of the samples in row-major order, divided by their count;
    * a batch index outside ``[0, BatchCount)`` is undefined behaviour in DirectML;
      every dmlops backend raises :class:`~dmlops.errors.DataIndexError` (ruling 3).

    The page's metadata keyword ``dml_convolution_integer_operator_desc`` is a
    copy-paste leftover (E16).

    References
    ----------
    NS:directml.DML_ROI_ALIGN_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_ROI_ALIGN_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.ROI_ALIGN
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V3_0
    family: ClassVar[str] = "roi"
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V3_0: _table(T.UINT32),
        FeatureLevel.V5_0: _table(T.UINT32, T.UINT64),
    }
    input_pixel_offset: ClassVar[float] = 0.5
    """ROI_ALIGN1's InputPixelOffset that ROI_ALIGN implies."""
    output_pixel_offset: ClassVar[float] = -0.5
    """ROI_ALIGN1's OutputPixelOffset that ROI_ALIGN implies."""

    input_tensor: TensorDesc = tensor_field("InputTensor", "input")
    roi_tensor: TensorDesc = tensor_field("ROITensor", "input")
    batch_indices_tensor: TensorDesc = tensor_field("BatchIndicesTensor", "input")
    output_tensor: TensorDesc = tensor_field("OutputTensor", "output")
    reduction_function: ReduceFunction = attr_field("ReductionFunction", "enum", enum=ReduceFunction)
    interpolation_mode: InterpolationMode = attr_field("InterpolationMode", "enum", enum=InterpolationMode)
    spatial_scale_x: float = attr_field("SpatialScaleX", "float")
    spatial_scale_y: float = attr_field("SpatialScaleY", "float")
    out_of_bounds_input_value: float = attr_field("OutOfBoundsInputValue", "float")
    minimum_samples_per_output: int = attr_field("MinimumSamplesPerOutput", "uint")
    maximum_samples_per_output: int = attr_field("MaximumSamplesPerOutput", "uint")

    @property
    def num_rois(self) -> int:
        """``NumROIs`` (the second-to-last dimension of ``ROITensor``)."""
        return self.roi_tensor.sizes[-2] if self.roi_tensor.dimension_count >= 2 else self.roi_tensor.sizes[0]

    @property
    def batch_count(self) -> int:
        """``BatchCount`` (``InputTensor.Sizes[0]``)."""
        return self.input_tensor.sizes[0]

    def check_data(self, inputs: Mapping[str, Any], feature_level: FeatureLevel) -> None:
        """DataIndexError for a batch index outside ``[0, BatchCount)`` (every backend refuses it)."""
        batch_indices(self, inputs["BatchIndicesTensor"])

    def batch_index_error(self, roi: int, value: int) -> DataIndexError:
        """The error every backend raises for a batch index outside ``[0, BatchCount)`` (ruling 3)."""
        return batch_index_error(self, roi, value)

    def _validate(self, level: FeatureLevel) -> None:
        validate_roi_align(self)


def validate_roi_align(desc: Any) -> None:
    """The rules ROI_ALIGN and ROI_ALIGN1 share (their pages' tensor shapes, reductions, scales, samples)."""
    # "InputTensor, OutputTensor, and ROITensor must have the same DataType."
    desc.require_same("DataType", "InputTensor", "ROITensor", "OutputTensor")
    num_rois = roi_count(desc)
    _require_roi_planes(desc, "OutputTensor", num_rois, "InputTensor")
    validate_align_parameters(desc)


def roi_count(desc: Any) -> int:
    """NumROIs of a ROI_ALIGN* desc, after checking ROITensor's and BatchIndicesTensor's shapes."""
    roi = desc.roi_tensor.sizes
    if roi[-1] != 4 or any(s != 1 for s in roi[:-2]):
        raise desc.invalid("ROITensor.Sizes", "must be {NumROIs, 4}, {1, NumROIs, 4} or {1, 1, NumROIs, 4}", roi)
    num_rois: int = roi[-2]
    bi = desc.batch_indices_tensor.sizes
    if any(s != 1 for s in bi[:-1]):
        raise desc.invalid(
            "BatchIndicesTensor.Sizes",
            "must be {NumROIs}, {1, NumROIs}, {1, 1, NumROIs} or {1, 1, 1, NumROIs}",
            bi,
        )
    if bi[-1] != num_rois:
        raise desc.invalid("BatchIndicesTensor.Sizes", f"must hold NumROIs ({num_rois}, from ROITensor) indices", bi)
    return num_rois


def _require_roi_planes(desc: Any, member: str, num_rois: int, image: str) -> None:
    """Tensor ``member`` (one plane per ROI) is ``{NumROIs, ChannelCount, ...}``, ChannelCount ``image``'s."""
    sizes = desc.tensor(member).sizes
    channels = desc.tensor(image).sizes[1]
    if sizes[0] != num_rois:
        raise desc.invalid(f"{member}.Sizes[0]", f"must be NumROIs ({num_rois}, from ROITensor)", sizes[0])
    if sizes[1] != channels:
        raise desc.invalid(f"{member}.Sizes[1]", f"must be ChannelCount ({channels}, {image}.Sizes[1])", sizes[1])


def validate_align_parameters(desc: Any) -> None:
    """ROI_ALIGN*'s attribute rules: the reduction, the spatial scales and the sample-count clamp."""
    if desc.reduction_function not in (ReduceFunction.AVERAGE, ReduceFunction.MAX):
        raise desc.invalid(
            "ReductionFunction",
            "must be DML_REDUCE_FUNCTION_AVERAGE or DML_REDUCE_FUNCTION_MAX",
            desc.reduction_function,
        )
    for member, value in (("SpatialScaleX", desc.spatial_scale_x), ("SpatialScaleY", desc.spatial_scale_y)):
        # DirectML 1.15.4's CreateOperator (erratum E31): negative or infinite scales are
        # rejected (even -1e-30; -0 passes), NaN is accepted (every sample then lies
        # out of bounds).
        if value < 0 or math.isinf(value):
            raise desc.invalid(member, "must be >= 0 and not infinite (NaN is accepted)", value)
    lo, hi = desc.minimum_samples_per_output, desc.maximum_samples_per_output
    if lo < 1:
        raise desc.invalid("MinimumSamplesPerOutput", "must be at least 1", lo)
    if hi < lo:
        raise desc.invalid("MaximumSamplesPerOutput", f"must be >= MinimumSamplesPerOutput ({lo})", hi)


# -- Semantics every backend reads: samples and batch indices ----------------

SAMPLE_BYTES = 128
"""Bytes per sample assumed for an axis's coordinate, tap and weight arrays and their
temporaries: an estimate (the CPU backend's tables hold less). The check catches sample
grids that miss the memory by far, as absurd sample counts do."""


def sample_taps(
    desc: Any, coord: NDArray[np.float64], length: int, mode: InterpolationMode | None = None
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64], NDArray[np.bool_]]:
    """(first, second, weight, in_bounds) of sample coordinates along an axis of ``length`` pixels.

    DirectML 1.15.4 (erratum E28, refining ruling 6): a sample is in bounds only strictly
    inside (-1, length), so exactly -1 or length reads OutOfBoundsInputValue (nan too).
    LINEAR (erratum E38): taps ``floor(c)`` and ``floor(c) + 1`` of the coordinate
    clamped to ``[0, length - 1]``, the second clamped too, weight ``c - floor(c)``;
    a coordinate in (-1, 0) has both taps on pixel 0 (DirectML clamps the tap indices,
    so the pixel after the edge is not read). NEAREST: ``floor(c + 0.5)`` (ruling 4,
    ties go up; ``c <= L - 1`` keeps it in range), both taps on it.

    ROI_ALIGN1 with AlignRegionsToCorners (DirectML 1.15.4, probed): a sample is in
    bounds only inside ``[0, length - 1]``, both ends included (TensorFlow's
    crop-and-resize extrapolation rule): -0.0001 and 7.0001 on 8 pixels read
    OutOfBoundsInputValue, 0 and 7 the edge pixels.

    ``mode`` overrides the desc's InterpolationMode (ROI_ALIGN_GRAD's ROI gradient takes the
    LINEAR taps' slopes in either mode, erratum E194).
    """
    if getattr(desc, "align_regions_to_corners", False):
        in_bounds = (coord >= 0.0) & (coord <= length - 1.0)
    else:
        in_bounds = (coord > -1.0) & (coord < length)
    c = np.clip(np.where(in_bounds, coord, 0.0), 0.0, length - 1.0)
    if (mode or desc.interpolation_mode) is InterpolationMode.LINEAR:
        first = np.floor(c).astype(np.intp)
        second = np.where(in_bounds & (coord < 0.0), first, np.minimum(first + 1, length - 1))
        weight = c - first
    else:
        first = np.floor(c + 0.5).astype(np.intp)
        second = first
        weight = np.zeros_like(c)
    return first, second, weight, in_bounds


def image_tensor(desc: Any) -> TensorDesc:
    """The forward input's tensor: InputTensor, or (ROI_ALIGN_GRAD without it) OutputGradientTensor, its sizes."""
    tensor: TensorDesc = desc.input_tensor if desc.input_tensor is not None else desc.output_gradient_tensor
    return tensor


def batch_index_error(desc: Any, roi: int, value: int) -> DataIndexError:
    """The error every backend raises for a batch index outside ``[0, BatchCount)`` (ruling 3)."""
    return DataIndexError(
        f"{desc.dml_name}.BatchIndicesTensor: ROI {roi} has batch index {value}, outside "
        f"[0, BatchCount = {image_tensor(desc).sizes[0]}) (undefined behaviour in DirectML; dmlops refuses it)"
    )


def batch_indices(desc: Any, indices: NDArray[Any]) -> NDArray[np.int64]:
    """The NumROIs batch indices as int64; DataIndexError for one outside ``[0, BatchCount)``.

    ``desc`` is a ROI_ALIGN, ROI_ALIGN1 or ROI_ALIGN_GRAD desc.
    """
    flat = np.asarray(indices).reshape(-1)
    bad = np.flatnonzero(flat >= image_tensor(desc).sizes[0])
    if bad.size:
        raise batch_index_error(desc, int(bad[0]), int(flat[bad[0]]))
    return flat.astype(np.int64)


# -- Generic neighbour: ROI_ALIGN1 -------------------------------------------------------------

FAMILY = "roi"

GENERIC_OPERATORS: frozenset[str] = frozenset(("ROI_ALIGN1", "ROI_ALIGN_GRAD", "ROI_POOLING"))
"""The catalogue operators this family implements through their generic descs.

ROI_ALIGN1 per axis (DirectML 1.15.4, probed on the ``directml`` backend)::

    NX = OutputWidth * sX                       # sX as ROI_ALIGN (ruling 5)
    step = sizeX / NX                           # AlignRegionsToCorners FALSE
    step = sizeX / (NX - 1)                     # TRUE, NX > 1
    xin = (j - OutputPixelOffset) * step + x1s - InputPixelOffset
    xin = x1s + sizeX / 2 - InputPixelOffset    # TRUE, NX = 1 (the region's centre)

With AlignRegionsToCorners a sample is in bounds only inside ``[0, InputWidth - 1]``
(ends included); without, as ROI_ALIGN, strictly inside ``(-1, InputWidth)``
(:func:`sample_taps`). Validation is ROI_ALIGN's (:func:`validate_roi_align`).
"""


DIRECTML_OPERATORS: frozenset[str] = frozenset()
"""The family's operators that only the ``directml`` backend runs (their rules: the module docstring)."""

ROI_POOLING_BOX = 5
"""Values per ROI_POOLING region: ``[BatchID, x1, y1, x2, y2]``."""


claim = family_claim(
    FAMILY,
    (GENERIC_OPERATORS, ("numpy", "cpu", "cuda", "directml")),
    (DIRECTML_OPERATORS, ("directml",)),
)


def _check_roi_align_grad(desc: Any) -> None:
    outputs = desc.tensor_names("output")
    if not outputs:
        raise desc.invalid(
            "OutputGradientTensor", "OutputGradientTensor or OutputROIGradientTensor must be supplied", None
        )
    if desc.input_tensor is None:
        if "OutputROIGradientTensor" in outputs:
            raise desc.invalid("InputTensor", "must be supplied when OutputROIGradientTensor is", None)
        if desc.reduction_function is ReduceFunction.MAX:
            raise desc.invalid("InputTensor", "must be supplied when ReductionFunction is MAX", None)
    num_rois = roi_count(desc)
    # the forward input: InputTensor, which OutputGradientTensor (when both are there) matches
    desc.require_same("Sizes", "InputTensor", "OutputGradientTensor")
    image = "InputTensor" if desc.input_tensor is not None else "OutputGradientTensor"
    _require_roi_planes(desc, "InputGradientTensor", num_rois, image)
    desc.require_same("Sizes", "ROITensor", "OutputROIGradientTensor")
    validate_align_parameters(desc)


def _check_roi_pooling(desc: Any) -> None:
    roi = desc.roi_tensor.sizes
    if roi[:2] != (1, 1) or roi[3] != ROI_POOLING_BOX:
        raise desc.invalid("ROITensor.Sizes", f"must be {{1, 1, NumROIs, {ROI_POOLING_BOX}}}", roi)
    pooled = desc.pooled_size
    for name in ("Height", "Width"):
        value = int(getattr(pooled, name.lower()))
        if value < 1:
            raise desc.invalid(f"PooledSize.{name}", "must be >= 1", value)
    channels = desc.input_tensor.sizes[1]
    desc.require_sizes(
        "OutputTensor",
        (roi[2], channels, int(pooled.height), int(pooled.width)),
        "{NumROIs, InputTensor's ChannelCount, PooledSize.Height, PooledSize.Width}",
    )


# -- ROI_ALIGN_GRAD: the ROI gradient's coefficients --------------------------------------------


def roi_gradient_coefficients(
    n_out: int, samples: int, length: int, corners: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per sample along one axis: the factors of ``dValue/dCoordinate`` in the gradients of the two corners.

    DirectML 1.15.4 (erratum E194), for sample ``k`` of ``NX = n_out * samples`` (output
    ``j = k // samples``) on an axis of ``length`` input pixels::

        dROI[last corner]  += dValue/dx * j * length / NX
        dROI[first corner] += dValue/dx * (length - j * length / NX)

    and with AlignRegionsToCorners ``length - 1`` and ``NX - 1`` in place of ``length`` and
    ``NX`` (``NX = 1``: half of ``length - 1`` each). ``dValue/dx`` is the bilinear sample's
    slope along the axis times the sample's share of the incoming gradient. The derivative
    of the forward (``xin = (k - OutputPixelOffset) * (x2 - x1) * SpatialScaleX / NX + x1 *
    SpatialScaleX - InputPixelOffset``) would be ``SpatialScaleX * (1 - (k -
    OutputPixelOffset) / NX)`` and ``SpatialScaleX * (k - OutputPixelOffset) / NX``:
    DirectML's factors are not it (the output index for the sample's, no scale, no offsets,
    times the axis length). Their sum is the axis length (``length - 1`` with corners)
    whatever the sample, so ``dROI[first] + dROI[last]`` is that length over
    ``SpatialScaleX`` times the derivative of the forward for a shift of the whole ROI
    (tests/test_roi_neighbours_family.py checks it by finite differences).
    """
    count = n_out * samples
    j = np.arange(count) // samples
    span, steps = (length - 1.0, count - 1) if corners else (float(length), count)
    last = (j * (span / steps) if steps > 0 else np.full(count, span / 2)).astype(np.float64)
    return span - last, last


# -- ROI_POOLING: the bins of every region -----------------------------------------------------

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def wrap_int32(values: NDArray[np.int64]) -> NDArray[np.int64]:
    """``values`` wrapped to int32 (two's complement), kept as int64: DirectML's integer arithmetic."""
    return ((values - INT32_MIN) & 0xFFFFFFFF) + INT32_MIN


def float_to_int32(values: NDArray[Any]) -> NDArray[np.int64]:
    """D3D's ``ftoi``: truncation toward zero, saturated to int32, NaN to 0 (as int64)."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.trunc(np.clip(np.nan_to_num(v, nan=0.0), INT32_MIN, INT32_MAX)).astype(np.int64)


@dataclass(frozen=True)
class PoolingBins:
    """ROI_POOLING's windows: per ROI its batch, per ROI and bin the half-open ``[start, end)`` rows and columns.

    ``y_start``/``y_end`` are (NumROIs, PooledHeight), ``x_start``/``x_end`` (NumROIs,
    PooledWidth), already clamped to the input; a bin with ``end <= start`` on either axis is
    empty (its output is 0).
    """

    batch: NDArray[np.int64]
    y_start: NDArray[np.int64]
    y_end: NDArray[np.int64]
    x_start: NDArray[np.int64]
    x_end: NDArray[np.int64]


def pooling_batches(desc: Any, batch_ids: NDArray[Any]) -> NDArray[np.int64]:
    """ROI_POOLING's BatchID column as batch indices (DirectML 1.15.4, erratum E191).

    The float is truncated toward zero (``ftoi``: NaN gives 0, infinities saturate) and then
    clamped to ``[0, BatchCount - 1]``: 1.7 reads batch 1, -0.7 and -5 batch 0, 7 or +inf
    the last batch. DirectML clamps explicitly (an out-of-range read would give zeros), so
    dmlops follows it rather than refusing.
    """
    return np.clip(float_to_int32(batch_ids), 0, desc.input_tensor.sizes[0] - 1)


def _pooling_axis(
    first: NDArray[Any], last: NDArray[Any], scale: float, pooled: int, length: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``[start, end)`` of every bin of every ROI along one axis, clamped to ``[0, length]``.

    DirectML 1.15.4 (erratum E190): the corners are ``round(coordinate * SpatialScale)``
    (the product in float32, rounded half to even, converted with ``ftoi``); the region
    spans ``size = max(last - first + 1, 1)`` pixels (int32; an inverted region is its
    first pixel); bin ``p`` is ``[p * size / pooled, ((p + 1) * size + pooled - 1) /
    pooled)`` (the page's floor and ceil) offset by ``first``. The products and quotients
    are unsigned 32-bit (PooledSize is a UINT: HLSL's ``int * uint`` is unsigned), the sum
    with ``first`` wraps, and the clamp to the input is signed: regions near 2^31 pixels
    overflow exactly as DirectML's do.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        a = float_to_int32(np.rint(first.astype(np.float32) * np.float32(scale)))
        b = float_to_int32(np.rint(last.astype(np.float32) * np.float32(scale)))
    size = np.maximum(wrap_int32(b - a + 1), 1)[:, None]
    p = np.arange(pooled, dtype=np.int64)[None, :]
    start = ((p * size) & 0xFFFFFFFF) // pooled
    end = (((p + 1) * size + pooled - 1) & 0xFFFFFFFF) // pooled
    start, end = wrap_int32(start + a[:, None]), wrap_int32(end + a[:, None])
    return np.clip(start, 0, length), np.clip(end, 0, length)


def pooling_bins(desc: Any, rois: NDArray[Any]) -> PoolingBins:
    """The bins of ROI_POOLING for its ``(NumROIs, 5)`` rows ``[BatchID, x1, y1, x2, y2]``."""
    rois = np.asarray(rois).reshape(-1, ROI_POOLING_BOX)
    _, _, height, width = desc.input_tensor.sizes
    pooled = desc.pooled_size
    y_start, y_end = _pooling_axis(rois[:, 2], rois[:, 4], desc.spatial_scale, int(pooled.height), height)
    x_start, x_end = _pooling_axis(rois[:, 1], rois[:, 3], desc.spatial_scale, int(pooled.width), width)
    return PoolingBins(pooling_batches(desc, rois[:, 0]), y_start, y_end, x_start, x_end)


_RULES: dict[str, Any] = {
    "ROI_ALIGN1": validate_roi_align,
    "ROI_ALIGN_GRAD": _check_roi_align_grad,
    "ROI_POOLING": _check_roi_pooling,
}


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The operator rules of the family's generic descs (beyond the catalogue's).

    ROI_ALIGN1: ROI_ALIGN's (:func:`validate_roi_align`); ROI_ALIGN_GRAD and ROI_POOLING:
    see the module docstring.
    """
    _RULES[desc.operator_type.name](desc)
