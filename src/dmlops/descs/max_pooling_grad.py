"""DML_MAX_POOLING_GRAD_OPERATOR_DESC."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..enums import FeatureLevel, OperatorType
from ..enums import TensorDataType as T
from ..tensor import TensorDesc
from ._base import OperatorDesc, TensorSupport, attr_field, tensor_field
from ._pooling import POOLING_ARRAYS, PoolingParameters, validate_pooling


def _rows(dims: int | tuple[int, int]) -> dict[str, TensorSupport]:
    row = TensorSupport.of(dims, T.FLOAT32, T.FLOAT16)
    return {"InputTensor": row, "InputGradientTensor": row, "OutputGradientTensor": row}


@dataclass(frozen=True, kw_only=True)
class MaxPoolingGradDesc(PoolingParameters, OperatorDesc):
    """Backpropagation of max pooling (see :class:`~dmlops.descs.max_pooling2.MaxPooling2Desc`).

    Recomputes the forward maximum of every window of ``InputTensor`` (same window
    parameters and tie rule) and adds each ``InputGradientTensor`` element into
    ``OutputGradientTensor`` at the position of its window's maximum. Overlapping
    windows that select the same element sum; untouched elements are 0.

    Attributes
    ----------
    input_tensor : TensorDesc
        ``InputTensor``, the forward pass's input ``{N, C, [D], H, W}``.
    input_gradient_tensor : TensorDesc
        ``InputGradientTensor``, sized as the forward output: the floor size only (1
        where the dilated window is larger than the padded input).
    output_gradient_tensor : TensorDesc
        ``OutputGradientTensor``, sized as InputTensor.
    strides, window_size, start_padding, end_padding, dilations : tuple of int
        As MAX_POOLING2's members of the same names.

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_3_0 with 4-D tensors; 4 to 5 dimensions from 4_0;
    FLOAT32 and FLOAT16 only. The three tensors share DataType and DimensionCount;
    InputTensor and OutputGradientTensor share Sizes.

    The page says the only valid DimensionCount is 2, which its own
    DML_FEATURE_LEVEL_4_0 table (5-D tensors) contradicts: 2 or 3 (erratum E10). The
    page's copy lacks the Syntax block; the member order is DirectML.h's. The argmax
    is MAX_POOLING2's (ties to the lowest logical index, NaN never wins: erratum E26);
    the gradient of a window holding only padding goes nowhere. DirectML accepts only
    the floor-size InputGradientTensor, not the ceil-mode size (erratum E27).

    References
    ----------
    NS:directml.DML_MAX_POOLING_GRAD_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_MAX_POOLING_GRAD_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.MAX_POOLING_GRAD
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V3_0
    module: ClassVar[str] = "max_pooling_grad"
    count_members: ClassVar[dict[str, tuple[str, ...]]] = {"DimensionCount": POOLING_ARRAYS}
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V3_0: _rows(4),
        FeatureLevel.V4_0: _rows((4, 5)),
    }

    input_tensor: TensorDesc = tensor_field("InputTensor", "input")
    input_gradient_tensor: TensorDesc = tensor_field("InputGradientTensor", "input")
    output_gradient_tensor: TensorDesc = tensor_field("OutputGradientTensor", "output")
    strides: tuple[int, ...] = attr_field("Strides", "uint_array")
    window_size: tuple[int, ...] = attr_field("WindowSize", "uint_array")
    start_padding: tuple[int, ...] = attr_field("StartPadding", "uint_array")
    end_padding: tuple[int, ...] = attr_field("EndPadding", "uint_array")
    dilations: tuple[int, ...] = attr_field("Dilations", "uint_array")

    def _validate(self, level: FeatureLevel) -> None:
        members = ("InputTensor", "InputGradientTensor", "OutputGradientTensor")
        self.require_same("DataType", *members)
        self.require_same("DimensionCount", *members)
        self.require_same("Sizes", "InputTensor", "OutputGradientTensor")
        validate_pooling(
            self,
            self.window,
            "InputTensor",
            self.input_tensor,
            "InputGradientTensor",
            self.input_gradient_tensor,
            gradient=True,
        )
