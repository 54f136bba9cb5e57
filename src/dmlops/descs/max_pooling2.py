"""DML_MAX_POOLING2_OPERATOR_DESC."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..enums import FeatureLevel, OperatorType
from ..enums import TensorDataType as T
from ..tensor import TensorDesc
from ._base import OperatorDesc, TensorSupport, attr_field, tensor_field
from ._pooling import POOLING_ARRAYS, PoolingParameters, validate_pooling

_TYPES_2_1 = (T.FLOAT32, T.FLOAT16)
_TYPES_3_0 = (*_TYPES_2_1, T.INT8, T.UINT8)
_TYPES_5_0 = (*_TYPES_3_0, T.INT64, T.INT32, T.INT16, T.UINT64, T.UINT32, T.UINT16)


def _rows(types: tuple[T, ...], index_types: tuple[T, ...]) -> dict[str, TensorSupport]:
    data = TensorSupport.of((4, 5), *types)
    return {
        "InputTensor": data,
        "OutputTensor": data,
        "OutputIndicesTensor": TensorSupport.of((4, 5), *index_types),
    }


@dataclass(frozen=True, kw_only=True)
class MaxPooling2Desc(PoolingParameters, OperatorDesc):
    """Maximum over a sliding (dilated) window, optionally with the index of the maximum.

    Per spatial dimension, window element ``k`` of output position ``o`` reads input
    coordinate ``o * Strides + k * Dilations - StartPadding``; padding positions never
    participate. ``OutputIndicesTensor`` receives the row-major linear index of the
    selected element over the whole logical input ``{N, C, [D], H, W}``.

    Attributes
    ----------
    input_tensor : TensorDesc
        ``InputTensor``, ``{N, C, H, W}`` or ``{N, C, D, H, W}``.
    output_tensor : TensorDesc
        ``OutputTensor``; same DataType and DimensionCount; N and C copied, spatial
        sizes free (usually the pooling formula's floor or ceil-mode size).
    output_indices_tensor : TensorDesc or None
        ``OutputIndicesTensor`` (optional): the Sizes of OutputTensor; UINT32, or
        UINT64 from DML_FEATURE_LEVEL_5_0.
    strides, window_size, start_padding, end_padding, dilations : tuple of int
        ``Strides``, ``WindowSize``, ``StartPadding``, ``EndPadding``, ``Dilations``:
        one entry per spatial dimension (``DimensionCount`` = InputTensor.DimensionCount - 2).

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_2_1 (4 to 5 dimensions, FLOAT32/FLOAT16); INT8 and
    UINT8 from 3_0; INT64, INT32, INT16, UINT64, UINT32, UINT16 from 5_0. Integer
    data is data movement: the output is bit-exact.

    Deviations from and additions to the DirectML page:

    * The page's output-size formula omits Dilations (erratum E11). DirectML's
      CreateOperator accepts any spatial output size, and windows larger than the
      padded input (erratum E27, overturning ruling 8): windows past the input hold
      only padding.
    * Ties: the first element in row-major window order, which is the lowest logical
      index, wins (the page's "first value encountered"; erratum E12).
    * NaN, -inf and padding-only windows (undocumented; DirectML 1.15.4, erratum E26,
      overturning ruling 7): the running maximum starts at the type's lowest finite
      value (-FLT_MAX for FLOAT32) at the window's first in-bounds element, and only a
      strictly greater element replaces it. NaN never wins; a window of only NaN or
      -inf outputs -FLT_MAX at its first in-bounds element; a window of only padding
      outputs -FLT_MAX at index 0. PyTorch instead propagates NaN.

    References
    ----------
    NS:directml.DML_MAX_POOLING2_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_MAX_POOLING2_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.MAX_POOLING2
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V2_1
    module: ClassVar[str] = "max_pooling2"
    count_members: ClassVar[dict[str, tuple[str, ...]]] = {"DimensionCount": POOLING_ARRAYS}
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V2_1: _rows(_TYPES_2_1, (T.UINT32,)),
        FeatureLevel.V3_0: _rows(_TYPES_3_0, (T.UINT32,)),
        FeatureLevel.V5_0: _rows(_TYPES_5_0, (T.UINT32, T.UINT64)),
    }

    input_tensor: TensorDesc = tensor_field("InputTensor", "input")
    output_tensor: TensorDesc = tensor_field("OutputTensor", "output")
    output_indices_tensor: TensorDesc | None = tensor_field("OutputIndicesTensor", "output", optional=True)
    strides: tuple[int, ...] = attr_field("Strides", "uint_array")
    window_size: tuple[int, ...] = attr_field("WindowSize", "uint_array")
    start_padding: tuple[int, ...] = attr_field("StartPadding", "uint_array")
    end_padding: tuple[int, ...] = attr_field("EndPadding", "uint_array")
    dilations: tuple[int, ...] = attr_field("Dilations", "uint_array")

    def _validate(self, level: FeatureLevel) -> None:
        self.require_same("DataType", "InputTensor", "OutputTensor")
        self.require_same("DimensionCount", "InputTensor", "OutputTensor", "OutputIndicesTensor")
        validate_pooling(
            self, self.window, "InputTensor", self.input_tensor, "OutputTensor", self.output_tensor, gradient=False
        )
        # "OutputTensor and OutputIndicesTensor both have the same tensor sizes."
        self.require_same("Sizes", "OutputTensor", "OutputIndicesTensor")
