"""DML_RESAMPLE2_OPERATOR_DESC."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..enums import AxisDirection, FeatureLevel, InterpolationMode, OperatorType
from ..tensor import TensorDesc
from ._base import OperatorDesc, TensorSupport, attr_field, tensor_field
from ._resample import FLOAT_TYPES, INT8_TYPES, RESAMPLE_ARRAYS, ResampleParameters, rows, validate_resample


@dataclass(frozen=True, kw_only=True)
class Resample2Desc(ResampleParameters, OperatorDesc):
    """Resamples every dimension of a tensor by nearest-neighbour or linear interpolation.

    For each dimension ``d`` and output index ``o`` the input coordinate is
    ``x = (o - OutputPixelOffsets[d]) / Scales[d] - InputPixelOffsets[d]``, evaluated in
    float32 (see :mod:`dmlops.descs._resample`).

    * NEAREST_NEIGHBOR: index ``floor(x)`` for RoundingDirection DECREASING, ``ceil(x)``
      for INCREASING, clamped to ``[0, n - 1]``.
    * LINEAR: ``i0 = floor(x)``, ``f = x - i0``; taps ``clamp(i0)`` with weight ``1 - f``
      and ``clamp(i0 + 1)`` with weight ``f``; the N-D result is the separable product over
      all dimensions. RoundingDirection has no effect.

    Attributes
    ----------
    input_tensor : TensorDesc
        ``InputTensor``.
    output_tensor : TensorDesc
        ``OutputTensor``; same DataType and DimensionCount as the input, any sizes.
    interpolation_mode : InterpolationMode
        ``InterpolationMode``.
    rounding_direction : AxisDirection
        ``RoundingDirection`` (nearest-neighbour only).
    scales : tuple of float
        ``Scales``, output/input size ratio per dimension; finite and > 0.
    input_pixel_offsets, output_pixel_offsets : tuple of float
        ``InputPixelOffsets``/``OutputPixelOffsets``; 0.5 / -0.5 select pixel centres.

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_5_1 (1 to 4 dimensions, FLOAT32/FLOAT16); INT8 and
    UINT8 from 6_2. Integer outputs are computed in float64 and rounded half to even,
    then saturated (the weights are convex, so saturation never triggers).

    The page's remark that NEAREST_NEIGHBOR with DECREASING equals RESAMPLE1 "with
    OutputPixelOffsets adjusted an additional -0.5" holds only for Scales 1; the exact
    statement is InputPixelOffsets -0.5 (erratum E13).

    A tap whose weight is exactly 0 is not read, so an output that falls exactly on an
    input element copies it even when a neighbour is Inf or NaN (identity resampling is
    a copy). DirectML's behaviour there is undocumented.

    References
    ----------
    NS:directml.DML_RESAMPLE2_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_RESAMPLE2_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.RESAMPLE2
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V5_1
    module: ClassVar[str] = "resample2"
    count_members: ClassVar[dict[str, tuple[str, ...]]] = {"DimensionCount": RESAMPLE_ARRAYS}
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V5_1: rows("InputTensor", "OutputTensor", FLOAT_TYPES),
        FeatureLevel.V6_2: rows("InputTensor", "OutputTensor", (*FLOAT_TYPES, *INT8_TYPES)),
    }

    input_tensor: TensorDesc = tensor_field("InputTensor", "input")
    output_tensor: TensorDesc = tensor_field("OutputTensor", "output")
    interpolation_mode: InterpolationMode = attr_field("InterpolationMode", "enum", enum=InterpolationMode)
    rounding_direction: AxisDirection = attr_field("RoundingDirection", "enum", enum=AxisDirection)
    scales: tuple[float, ...] = attr_field("Scales", "float_array")
    input_pixel_offsets: tuple[float, ...] = attr_field("InputPixelOffsets", "float_array")
    output_pixel_offsets: tuple[float, ...] = attr_field("OutputPixelOffsets", "float_array")

    @property
    def forward_input_sizes(self) -> tuple[int, ...]:
        """Sizes of the tensor being resampled (``InputTensor.Sizes``)."""
        return self.input_tensor.sizes

    @property
    def forward_output_sizes(self) -> tuple[int, ...]:
        """Sizes of the resampled tensor (``OutputTensor.Sizes``)."""
        return self.output_tensor.sizes

    def forward_pixel_offsets(self, d: int) -> tuple[float, float]:
        """``(InputPixelOffsets[d], OutputPixelOffsets[d])``: this desc is the forward."""
        return self.input_pixel_offsets[d], self.output_pixel_offsets[d]

    def _validate(self, level: FeatureLevel) -> None:
        validate_resample(
            self, "InputTensor", "OutputTensor", self.scales, self.input_pixel_offsets, self.output_pixel_offsets
        )
