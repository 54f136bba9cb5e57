"""DML_GATHER_OPERATOR_DESC."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..enums import FeatureLevel, OperatorType
from ..enums import TensorDataType as T
from ..tensor import TensorDesc
from ._base import OperatorDesc, TensorSupport, attr_field, dims_text, tensor_field

# The page's "Tensor support" tables, one per feature level ("X and above").
_DATA_1_0 = (T.FLOAT32, T.FLOAT16)
_DATA_2_1 = (T.FLOAT32, T.FLOAT16, T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8)
_DATA_4_1 = (T.FLOAT64, *_DATA_2_1, T.INT64, T.UINT64)
_INDICES_1_0 = (T.UINT32,)
_INDICES_3_0 = (T.INT64, T.INT32, T.UINT64, T.UINT32)


def _rows(dims: int | tuple[int, int], data: tuple[T, ...], indices: tuple[T, ...]) -> dict[str, TensorSupport]:
    row = TensorSupport.of(dims, *data)
    return {"InputTensor": row, "IndicesTensor": TensorSupport.of(dims, *indices), "OutputTensor": row}


def gather_full_sizes(
    input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...], axis: int, index_dimensions: int
) -> tuple[int, ...]:
    """The output sizes before right-alignment (length ``D + IndexDimensions - 1``).

    ``InputTensor.Sizes[0:Axis] ++ IndicesTensor.Sizes[D - IndexDimensions:D] ++
    InputTensor.Sizes[Axis + 1:D]``.
    """
    d = len(indices_sizes)
    return (*input_sizes[:axis], *indices_sizes[d - index_dimensions :], *input_sizes[axis + 1 :])


@dataclass(frozen=True, kw_only=True)
class GatherDesc(OperatorDesc):
    """Gathers slices of the input along ``Axis`` at the positions held by the indices.

    With the output coordinates (right-aligned, see :meth:`output_sizes`) split into
    ``pre`` (``Axis`` coordinates), ``mid`` (``IndexDimensions`` coordinates) and
    ``post`` (the rest)::

        OutputTensor[pre, mid, post] = InputTensor[pre, IndicesTensor[0.., mid], post]

    where the leading ``D - IndexDimensions`` coordinates of the indices, all of size 1,
    are 0.

    Attributes
    ----------
    input_tensor : TensorDesc
        ``InputTensor``, the tensor to read from.
    indices_tensor : TensorDesc
        ``IndicesTensor``; same DimensionCount as the input. UINT32 below
        DML_FEATURE_LEVEL_3_0; INT32, INT64, UINT32 or UINT64 from 3_0.
    output_tensor : TensorDesc
        ``OutputTensor``; same DataType and DimensionCount as the input, Sizes as
        :meth:`output_sizes`.
    axis : int
        ``Axis``, in ``[0, DimensionCount)`` of the padded tensors.
    index_dimensions : int
        ``IndexDimensions``, the number of trailing dimensions of the indices that are
        meaningful, in ``[0, DimensionCount]``.

    Notes
    -----
    Introduced in DML_FEATURE_LEVEL_1_0 (4-D, FLOAT32/FLOAT16 data, UINT32 indices);
    integer data types from 2_1; 1 to 8 dimensions and INT32/INT64/UINT64 indices from
    3_0; FLOAT64/INT64/UINT64 data from 4_1.

    Deviations from and defects of the DirectML page (spec section 9.2):

    * The page says ``IndexDimensions`` ranges over ``[0, IndicesTensor.DimensionCount)``;
      its own Examples 1 and 3, DirectMLX and ONNX Runtime all use
      ``IndexDimensions == DimensionCount``, so dmlops accepts the inclusive range
      ``[0, DimensionCount]`` (erratum E1, ruling 14).
    * The dimensions of the indices before the last ``IndexDimensions`` must be 1
      ("irrelevant leading ones"); dmlops rejects a desc where they are not, since
      DirectML would otherwise ignore real index data.
    * Right-alignment: when ``full`` (see :func:`gather_full_sizes`) is longer than
      DimensionCount, its overflowing leading entries are dropped and must all be 1,
      wherever they come from (input or indices; erratum E5); otherwise the desc is
      invalid. Example 3 as printed (``IndexDimensions = 2``) fails this rule: its
      data and output correspond to ``IndexDimensions = 1`` (erratum E2).
    * The titles of Examples 4 and 5 count axes of the unpadded tensors; ``Axis``
      counts axes of the padded ones, and the desc fields are authoritative (E3).
      The page's "The DimensionCount and DataType of this tensor must match
      InputTensor.DimensionCount" means DimensionCount and DataType both match the
      input's (E3).
    * Invalid indices: DirectML promises only that reads stay within the input's
      memory (E4). dmlops wraps a negative index of a signed type once (from 3_0),
      then clamps it to ``[0, n - 1]`` of the gathered axis; ``strict=True`` in
      :func:`dmlops.execute` raises :class:`~dmlops.errors.DataIndexError` instead
      (ruling 2).

    References
    ----------
    NS:directml.DML_GATHER_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_GATHER_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.GATHER
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V1_0
    module: ClassVar[str] = "gather"
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V1_0: _rows(4, _DATA_1_0, _INDICES_1_0),
        FeatureLevel.V2_1: _rows(4, _DATA_2_1, _INDICES_1_0),
        FeatureLevel.V3_0: _rows((1, 8), _DATA_2_1, _INDICES_3_0),
        FeatureLevel.V4_1: _rows((1, 8), _DATA_4_1, _INDICES_3_0),
    }

    input_tensor: TensorDesc = tensor_field("InputTensor", "input")
    indices_tensor: TensorDesc = tensor_field("IndicesTensor", "input")
    output_tensor: TensorDesc = tensor_field("OutputTensor", "output")
    axis: int = attr_field("Axis", "uint")
    index_dimensions: int = attr_field("IndexDimensions", "uint")

    @property
    def dimension_count(self) -> int:
        """The shared DimensionCount D of the three tensors (the input's)."""
        return self.input_tensor.dimension_count

    def full_output_sizes(self) -> tuple[int, ...]:
        """The output sizes before right-alignment, ``D + IndexDimensions - 1`` long."""
        return gather_full_sizes(self.input_tensor.sizes, self.indices_tensor.sizes, self.axis, self.index_dimensions)

    def output_sizes(self) -> tuple[int, ...]:
        """The OutputTensor.Sizes the page requires, right-aligned to DimensionCount.

        Raises
        ------
        InvalidDescError
            When the entries that do not fit in DimensionCount are not all 1.
        """
        d = self.dimension_count
        full = self.full_output_sizes()
        excess = len(full) - d
        if excess > 0:
            dropped = full[:excess]
            if any(s != 1 for s in dropped):
                raise self.invalid(
                    "IndexDimensions",
                    f"the output sizes InputTensor.Sizes[0:Axis] ++ IndicesTensor.Sizes[D-IndexDimensions:D] ++ "
                    f"InputTensor.Sizes[Axis+1:D] = {dims_text(full)} have {len(full)} entries, more than "
                    f"DimensionCount ({d}), and the leading ones that do not fit ({dims_text(dropped)}) are not "
                    f"all 1 (original rank of InputTensor + IndexDimensions - 1 must be <= DimensionCount)",
                    self.index_dimensions,
                )
            return full[excess:]
        return (1,) * -excess + full

    def _validate(self, level: FeatureLevel) -> None:
        self.require_same("DimensionCount", "InputTensor", "IndicesTensor", "OutputTensor")
        self.require_same("DataType", "InputTensor", "OutputTensor")
        d = self.dimension_count
        if self.axis >= d:
            raise self.invalid("Axis", f"must be in [0, InputTensor.DimensionCount) = [0, {d})", self.axis)
        if self.index_dimensions > d:
            # Inclusive upper bound: erratum E1, ruling 14.
            raise self.invalid(
                "IndexDimensions", f"must be in [0, IndicesTensor.DimensionCount] = [0, {d}]", self.index_dimensions
            )
        indices_sizes = self.indices_tensor.sizes
        for i in range(d - self.index_dimensions):
            if indices_sizes[i] != 1:
                raise self.invalid(
                    f"IndicesTensor.Sizes[{i}]",
                    f"the dimensions of IndicesTensor before the last IndexDimensions ({self.index_dimensions}) "
                    f"must be 1, as IndexDimensions counts every meaningful index dimension "
                    f"(IndicesTensor.Sizes = {dims_text(indices_sizes)})",
                    indices_sizes[i],
                )
        expected = self.output_sizes()
        if self.output_tensor.sizes != expected:
            raise self.invalid(
                "OutputTensor.Sizes",
                f"must be {dims_text(expected)} (InputTensor.Sizes with Axis {self.axis} replaced by the last "
                f"{self.index_dimensions} IndicesTensor.Sizes, right-aligned to DimensionCount {d})",
                self.output_tensor.sizes,
            )
