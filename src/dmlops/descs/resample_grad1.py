"""DML_RESAMPLE_GRAD1_OPERATOR_DESC."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..enums import AxisDirection, FeatureLevel, InterpolationMode, OperatorType
from ..tensor import TensorDesc
from ._base import OperatorDesc, TensorSupport, attr_field, tensor_field
from ._resample import FLOAT_TYPES, RESAMPLE_ARRAYS, ResampleParameters, rows, validate_resample


@dataclass(frozen=True, kw_only=True)
class ResampleGrad1Desc(ResampleParameters, OperatorDesc):
    """Backpropagation of :class:`~dmlops.descs.resample2.Resample2Desc`.

    The exact transpose of the forward map with the *forward's* parameters:
    ``OutputGradient[i] = sum over o of w(o, i) * InputGradient[o]``, where ``w(o, i)`` is
    the weight RESAMPLE2 gives input element ``i`` in output element ``o`` (nearest: 1
    for the selected index; linear: the product of the per-dimension tap weights).
    Clamped taps accumulate on the edge element; elements no output reads get 0.

    Attributes
    ----------
    input_gradient_tensor : TensorDesc
        ``InputGradientTensor``, sized like the forward *output*.
    output_gradient_tensor : TensorDesc
        ``OutputGradientTensor``, sized like the forward *input*; same DataType and
        DimensionCount as InputGradientTensor.
    interpolation_mode : InterpolationMode
        ``InterpolationMode`` of the forward resample.
    rounding_direction : AxisDirection
        ``RoundingDirection`` of the forward resample (nearest-neighbour only).
    scales : tuple of float
        ``Scales`` of the forward resample (forward output/input), finite and > 0.
    input_pixel_offsets : tuple of float
        ``InputPixelOffsets``: the pixel offsets of InputGradientTensor, i.e. the
        forward's ``OutputPixelOffsets``.
    output_pixel_offsets : tuple of float
        ``OutputPixelOffsets``: the pixel offsets of OutputGradientTensor, i.e. the
        forward's ``InputPixelOffsets``.

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_5_1: 1 to 4 dimensions, FLOAT32/FLOAT16 only at
    every level; the forward's INT8/UINT8 support from 6_2 does not extend here
    (erratum E15).

    The page's example gives no offsets or RoundingDirection; it reproduces with
    DECREASING, Scales {0.5, 1.5} and the half-pixel offsets of either naming, and not
    with DirectMLX's INCREASING default (erratum E14). The remark's "OutputPixelOffsets
    adjusted an additional -0.5" is exact only for Scales 1 (erratum E13).

    Unlike the page, which says the parameters are the forward's, DirectML 1.15.4 names
    the two offsets after this operator's own tensors (erratum E25, overturning ruling 9
    for the grad): the gradient of a RESAMPLE2 with InputPixelOffsets ``a`` and
    OutputPixelOffsets ``b`` is this operator with InputPixelOffsets ``b`` and
    OutputPixelOffsets ``a`` (same Scales, mode and RoundingDirection).

    References
    ----------
    NS:directml.DML_RESAMPLE_GRAD1_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_RESAMPLE_GRAD1_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.RESAMPLE_GRAD1
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V5_1
    module: ClassVar[str] = "resample_grad1"
    count_members: ClassVar[dict[str, tuple[str, ...]]] = {"DimensionCount": RESAMPLE_ARRAYS}
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V5_1: rows("InputGradientTensor", "OutputGradientTensor", FLOAT_TYPES),
    }

    input_gradient_tensor: TensorDesc = tensor_field("InputGradientTensor", "input")
    output_gradient_tensor: TensorDesc = tensor_field("OutputGradientTensor", "output")
    interpolation_mode: InterpolationMode = attr_field("InterpolationMode", "enum", enum=InterpolationMode)
    rounding_direction: AxisDirection = attr_field("RoundingDirection", "enum", enum=AxisDirection)
    scales: tuple[float, ...] = attr_field("Scales", "float_array")
    input_pixel_offsets: tuple[float, ...] = attr_field("InputPixelOffsets", "float_array")
    output_pixel_offsets: tuple[float, ...] = attr_field("OutputPixelOffsets", "float_array")

    @property
    def forward_input_sizes(self) -> tuple[int, ...]:
        """Sizes of the forward resample's input (``OutputGradientTensor.Sizes``)."""
        return self.output_gradient_tensor.sizes

    @property
    def forward_output_sizes(self) -> tuple[int, ...]:
        """Sizes of the forward resample's output (``InputGradientTensor.Sizes``)."""
        return self.input_gradient_tensor.sizes

    def forward_pixel_offsets(self, d: int) -> tuple[float, float]:
        """The forward's ``(InputPixelOffset, OutputPixelOffset)``: this desc's two offsets swapped.

        DirectML names RESAMPLE_GRAD1's offsets after its own tensors: InputPixelOffsets
        belong to InputGradientTensor, on the forward's output side, and
        OutputPixelOffsets to OutputGradientTensor, on the forward's input side (DirectML
        1.15.4, measured; docs/errata.md).
        """
        return self.output_pixel_offsets[d], self.input_pixel_offsets[d]

    def _validate(self, level: FeatureLevel) -> None:
        validate_resample(
            self,
            "InputGradientTensor",
            "OutputGradientTensor",
            self.scales,
            self.input_pixel_offsets,
            self.output_pixel_offsets,
        )
