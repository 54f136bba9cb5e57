"""DML_SLICE1_OPERATOR_DESC."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..enums import FeatureLevel, OperatorType
from ..enums import TensorDataType as T
from ..tensor import TensorDesc
from ._base import OperatorDesc, TensorSupport, attr_field, tensor_field

_TYPES_2_1 = (T.FLOAT32, T.FLOAT16, T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8)
_TYPES_4_1 = (*_TYPES_2_1, T.FLOAT64, T.INT64, T.UINT64)


def _rows(dims: int | tuple[int, int], types: tuple[T, ...]) -> dict[str, TensorSupport]:
    row = TensorSupport.of(dims, *types)
    return {"InputTensor": row, "OutputTensor": row}


@dataclass(frozen=True, kw_only=True)
class Slice1Desc(OperatorDesc):
    """Extracts a single subregion (a "slice") of an input tensor.

    ``OutputTensor[o] = InputTensor[CopyStart + InputWindowStrides * o]`` where
    ``CopyStart[i] = InputWindowOffsets[i] + (InputWindowSizes[i] - 1 if
    InputWindowStrides[i] < 0 else 0)``.

    Attributes
    ----------
    input_tensor : TensorDesc
        ``InputTensor``, the tensor to slice.
    output_tensor : TensorDesc
        ``OutputTensor``; same DataType and DimensionCount as the input.
    input_window_offsets : tuple of int
        ``InputWindowOffsets``, first element of the window per dimension.
    input_window_sizes : tuple of int
        ``InputWindowSizes``, window extent per dimension (>= 1).
    input_window_strides : tuple of int
        ``InputWindowStrides``, signed step per dimension; never 0.

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_2_1; 1 to 8 dimensions from 3_0 (4 or 5 before);
    64-bit types from 4_1.

    Unlike the page's Members section, which types ``InputWindowStrides`` as
    ``const UINT*``, the strides are signed (its Syntax block, DirectML.h and
    DxDispatch's schema say ``INT``; erratum E6). The page's ``MaxCopiedElements``
    formula divides by the signed stride; dmlops divides by ``abs(stride)`` as
    DirectMLX does (E7). Example 2 writes ``InputWindowSizes[0]`` where ``[2]`` is
    meant (E8).

    References
    ----------
    NS:directml.DML_SLICE1_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_SLICE1_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.SLICE1
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V2_1
    module: ClassVar[str] = "slice1"
    count_members: ClassVar[dict[str, tuple[str, ...]]] = {
        "DimensionCount": ("InputWindowOffsets", "InputWindowSizes", "InputWindowStrides")
    }
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V2_1: _rows((4, 5), _TYPES_2_1),
        FeatureLevel.V3_0: _rows((1, 8), _TYPES_2_1),
        FeatureLevel.V4_1: _rows((1, 8), _TYPES_4_1),
    }

    input_tensor: TensorDesc = tensor_field("InputTensor", "input")
    output_tensor: TensorDesc = tensor_field("OutputTensor", "output")
    input_window_offsets: tuple[int, ...] = attr_field("InputWindowOffsets", "uint_array")
    input_window_sizes: tuple[int, ...] = attr_field("InputWindowSizes", "uint_array")
    input_window_strides: tuple[int, ...] = attr_field("InputWindowStrides", "int_array")

    @property
    def dimension_count(self) -> int:
        """``DimensionCount`` (derived from the window arrays)."""
        return len(self.input_window_offsets)

    def copy_start(self) -> tuple[int, ...]:
        """The page's CopyStart: negative strides start at the window's last element."""
        return tuple(
            off + (size - 1 if stride < 0 else 0)
            for off, size, stride in zip(self.input_window_offsets, self.input_window_sizes, self.input_window_strides)
        )

    def max_copied_elements(self) -> tuple[int, ...]:
        """``1 + (InputWindowSizes[i] - 1) // abs(InputWindowStrides[i])`` (erratum E7)."""
        return tuple(
            1 + (size - 1) // abs(stride) for size, stride in zip(self.input_window_sizes, self.input_window_strides)
        )

    def _validate(self, level: FeatureLevel) -> None:
        self.require_same("DataType", "InputTensor", "OutputTensor")
        self.require_same("DimensionCount", "InputTensor", "OutputTensor")
        dims = self.input_tensor.dimension_count
        if self.dimension_count != dims:
            raise self.invalid(
                "DimensionCount", f"must match InputTensor.DimensionCount ({dims})", self.dimension_count
            )
        in_sizes = self.input_tensor.sizes
        out_sizes = self.output_tensor.sizes
        for i, (off, size, stride) in enumerate(
            zip(self.input_window_offsets, self.input_window_sizes, self.input_window_strides)
        ):
            if size < 1:
                raise self.invalid(f"InputWindowSizes[{i}]", "the input window may not be empty", size)
            if off + size > in_sizes[i]:
                raise self.invalid(
                    f"InputWindowOffsets[{i}]",
                    f"InputWindowOffsets[{i}] + InputWindowSizes[{i}] ({off} + {size}) must be "
                    f"<= InputTensor.Sizes[{i}] ({in_sizes[i]})",
                    off,
                )
            if stride == 0:
                raise self.invalid(f"InputWindowStrides[{i}]", "strides may not be 0", stride)
            max_copied = 1 + (size - 1) // abs(stride)
            if not 1 <= out_sizes[i] <= max_copied:
                raise self.invalid(
                    f"OutputTensor.Sizes[{i}]",
                    f"must be in [1, MaxCopiedElements[{i}] = {max_copied}]",
                    out_sizes[i],
                )
