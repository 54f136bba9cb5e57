"""Data movement descs and their semantics: GATHER, SLICE1 and the generic data movement operators.

The desc classes (:class:`GatherDesc`, :class:`Slice1Desc`: struct mirror, validation,
output sizes) and the rules every backend reads: GATHER's un-aligned output sizes
(:func:`gather_full_sizes`) and leading slab (:meth:`GatherDesc.leading_slab`), its
out-of-range reads (:meth:`GatherDesc.reads_outside`, :func:`gather_read_addresses`:
DirectML's flat address clamp, erratum E41), and its strict-mode check
(:meth:`GatherDesc.check_data`, :func:`normalize_indices`).

The other operators of the family (``GENERIC_OPERATORS``: CAST, SLICE, SLICE_GRAD, JOIN,
SPLIT, PADDING, PADDING1, TILE, FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE, DEPTH_TO_SPACE,
DEPTH_TO_SPACE1, SPACE_TO_DEPTH, SPACE_TO_DEPTH1) and the indexing operators below keep
the generic descs made from their catalogue rows (:mod:`.generic`); :func:`claim` gives
them this family, and :func:`validate_generic` (which their ``validate()`` calls) holds
the rules of their own that each page states, checked against DirectML 1.15.4's
CreateOperator (DirectML wins where they differ).

Rules DirectML 1.15.4 follows (probed on the ``directml`` backend):

* CAST of any pair of data types. Integers are read into a 32-bit register (64-bit
  when either type is 64 bits wide), sign-extended from a signed type, zero-extended
  from an unsigned one. Into an integer type as wide as the register the bits are
  kept (INT32 -1 -> UINT32 4294967295); into a narrower one the register's value, read
  with the target's signedness, saturates (UINT32 4294967295 -> INT8 -1, INT32 -1 ->
  UINT8 255, UINT8 255 -> INT8 127). Floats into integers truncate toward zero and
  saturate to the target's range, NaN -> 0 (D3D's ftoi/ftou; this stack's lavapipe
  gives INT_MIN for NaN and values >= 2^31 into signed types, and all ones for NaN and
  values <= -1 into unsigned ones, before the saturation). Integers into floats and
  FLOAT64 into FLOAT32 round to nearest even. Casts from or to 64-bit types and
  FLOAT64 do not compile on this stack: those follow the same rules unmeasured.
* SLICE copies ``InputTensor[Offsets + Strides * o]``: Sizes equal OutputTensor.Sizes,
  Strides are in ``[1, 2^31 - 1]`` and the last element read,
  ``Offsets[i] + (Sizes[i] - 1) * Strides[i]``, is inside the input.
* SLICE_GRAD scatters InputGradientTensor to SLICE1's window positions in zeros, but
  DirectML does not apply SLICE1's MaxCopiedElements: it requires the window inside
  OutputGradientTensor and ``InputWindowOffsets[i] + (InputGradientTensor.Sizes[i] -
  1) * |InputWindowStrides[i]|`` inside it too, and accepts an empty window (Sizes 0).
  With a negative stride, positions can then fall before an axis's start: see
  ``reference/data_movement.py``'s ``compute_slice_grad``.
* JOIN and SPLIT: at least one piece, Axis < DimensionCount, equal sizes off the axis,
  the pieces' sizes along it summing to the whole's.
* PADDING and PADDING1 accept any padding size in every mode: REFLECTION, SYMMETRIC and
  WRAP keep folding past the input (:func:`padding_indices`; REFLECTION of a size-1 axis
  repeats the element). PADDING's FLOAT value reaches integer outputs as x86 truncation
  of the float32 value, wrapped, not saturated (:func:`padding_value`); PADDING1's
  PaddingValueDataType must equal OutputTensor.DataType.
* TILE: Repeats >= 1, OutputTensor.Sizes = InputTensor.Sizes * Repeats.
* FILL_VALUE_CONSTANT and FILL_VALUE_SEQUENCE: ValueDataType equals OutputTensor.DataType.
  The sequence is ``float32(i) * ValueDelta + ValueStart`` in float32 steps for floats,
  wrap-around integer arithmetic (32-bit, 64-bit for 64-bit types) for integers.
  DirectML also accepts and runs INT64, UINT64 and FLOAT64 (FILL_VALUE_CONSTANT) and
  INT64, UINT64 (FILL_VALUE_SEQUENCE) outputs, which the catalogue's support rows do not
  list yet; the reference computes them as DirectML does.
* DEPTH_TO_SPACE(1) and SPACE_TO_DEPTH(1): BlockSize >= 1, the channel count (depth to
  space) or height and width (space to depth) divisible, OutputTensor.Sizes as
  :func:`depth_space_sizes`.

The indexing operators (``INDEXING_OPERATORS``: GATHER_ELEMENTS, GATHER_ND, GATHER_ND1,
SCATTER_ELEMENTS (alias SCATTER), SCATTER_ND, ONE_HOT, REVERSE_SUBSEQUENCES,
DIAGONAL_MATRIX, DIAGONAL_MATRIX1, NONZERO_COORDINATES) run on numpy, cpu, cuda and directml;
their rules, checked against DirectML 1.15.4's CreateOperator (errata E140 to E143, E164):

* GATHER_ELEMENTS: ``Axis`` below the DimensionCount; IndicesTensor has InputTensor's
  Sizes off ``Axis`` (any size on it, larger than the input's too); OutputTensor has
  IndicesTensor's Sizes.
* SCATTER_ELEMENTS: the same ``Axis`` and IndicesTensor rules, but
  ``IndicesTensor.Sizes[Axis] <= InputTensor.Sizes[Axis]``, which the page does not
  state (E142); UpdatesTensor has IndicesTensor's Sizes, OutputTensor InputTensor's.
* GATHER_ND, GATHER_ND1, SCATTER_ND: ``InputDimensionCount`` and ``IndicesDimensionCount``
  in ``[1, DimensionCount]`` of their tensor (SCATTER_ND's page excludes the
  DimensionCount, E143), the sizes before those meaningful dimensions 1;
  GATHER_ND1's ``BatchDimensionCount`` below both counts (its page: below both
  DimensionCounts, E141); the index tuple size (IndicesTensor's last size) at most
  ``InputDimensionCount - BatchDimensionCount`` (the pages: InputTensor.DimensionCount,
  E140). OutputTensor (GATHER_ND(1)) or UpdatesTensor (SCATTER_ND) has the sizes of
  :func:`nd_sizes` with leading 1s; DirectML does not compare the batch sizes of input
  and indices (the output takes the indices'). SCATTER_ND's OutputTensor has
  InputTensor's Sizes; its IndicesTensor and UpdatesTensor may have other
  DimensionCounts than InputTensor; its IndicesTensor may not broadcast (a Stride of 0
  on a size above 1, which GATHER_ND accepts; not on the page, E164).
* ONE_HOT: ``Axis`` below the DimensionCount; IndicesTensor has OutputTensor's Sizes
  with 1 on ``Axis`` (OutputTensor's size there may be 1); ValuesTensor holds at least
  2 elements, in any shape.
* REVERSE_SUBSEQUENCES: ``Axis`` below the DimensionCount; SequenceLengthsTensor has
  InputTensor's Sizes with 1 on ``Axis``; OutputTensor has InputTensor's Sizes.
* DIAGONAL_MATRIX: no rule beyond the support rows (any ``Offset``, NaN or out-of-range
  ``Value``s included).
* DIAGONAL_MATRIX1: ``ValueDataType`` equals OutputTensor.DataType; a present InputTensor
  has OutputTensor's Sizes (the page states only DataType and DimensionCount); any
  ``DiagonalFillBegin`` / ``DiagonalFillEnd``.
* NONZERO_COORDINATES: OutputCountTensor has one element (any DimensionCount);
  OutputCoordinatesTensor is ``{1..., M, N}`` (2-D at least: its support row), with M InputTensor's element
  count and N from the input's :func:`effective_rank` to its DimensionCount.

What DirectML 1.15.4 computes for them (measured by tests/directml/test_directml_indexing.py,
600 seeded cases per operator; the helpers every backend uses are below ``_RULES``' rules):

* Indices: a negative value of a signed type moves by ``+ n`` once (FL 3_0), a UINT64 one
  of 2^63 or more as if negative (:func:`index_values`). GATHER_ND(1) reads an
  out-of-range coordinate of 32-bit data through GATHER's flat clamp
  (:func:`flat_addresses`); GATHER_ELEMENTS's and 8-/64-bit reads differ, and scatters
  write out-of-range elements into other elements' places: undefined, so
  :func:`check_indices` refuses them (E160, E163). Duplicate scatter targets: DirectML
  promises no winner; the reference takes the last update in row-major order (E163).
  SCATTER_ND's UpdatesTensor of more dimensions than the input and the indices: only
  its slab at coordinate 0 of the extra leading dimensions is written (E165).
* ONE_HOT: OffValue = ValuesTensor's first element, OnValue its second; out-of-range
  indices set nothing, an INT64 one compared by its low 32 bits (:func:`one_hot_positions`, E161).
* REVERSE_SUBSEQUENCES: a length past the axis clamps the source coordinate, not the
  length (:func:`reverse_sources`, E162).
* DIAGONAL_MATRIX(1): :func:`diagonal_fill`'s band; DIAGONAL_MATRIX's FLOAT Value reaches
  integer types as PADDING's (:func:`padding_value`). NONZERO_COORDINATES: NaN is
  nonzero, both zeros zero, coordinates row-major, zero rows past the count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..enums import FeatureLevel, OperatorType
from ..enums import TensorDataType as T
from ..errors import DataIndexError
from ..tensor import TensorDesc
from ._base import OperatorDesc, TensorSupport, attr_field, dims_text, family_claim, tensor_field

# -- GATHER --------------------------------------------------------------------

# The page's "Tensor support" tables, one per feature level ("X and above").
_DATA_1_0 = (T.FLOAT32, T.FLOAT16)
_DATA_2_1 = (T.FLOAT32, T.FLOAT16, T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8)
_DATA_4_1 = (T.FLOAT64, *_DATA_2_1, T.INT64, T.UINT64)
_INDICES_1_0 = (T.UINT32,)
_INDICES_3_0 = (T.INT64, T.INT32, T.UINT64, T.UINT32)


def _gather_rows(dims: int | tuple[int, int], data: tuple[T, ...], indices: tuple[T, ...]) -> dict[str, TensorSupport]:
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
      DimensionCount, its overflowing leading entries are dropped (erratum E5). The
      page implies they must be 1; DirectML 1.15.4 accepts any and computes the slab
      of the full output at coordinate 0 of the dropped dimensions
      (:meth:`leading_slab`), which dmlops follows. So Example 3 as printed
      (``IndexDimensions = 2``) is valid, but its printed output is that of
      ``IndexDimensions = 1`` (erratum E2). When ``full`` is shorter (IndexDimensions
      0), DirectML also accepts any ``OutputTensor.Sizes[0]``, and so does dmlops:
      output slab ``o`` reads ``o * InputTensor``'s element count past slab 0 when
      InputTensor.Strides is NULL (past the input: clamped as below), the same
      elements as slab 0 when Strides are given (erratum E41).
    * The titles of Examples 4 and 5 count axes of the unpadded tensors; ``Axis``
      counts axes of the padded ones, and the desc fields are authoritative (E3).
      The page's "The DimensionCount and DataType of this tensor must match
      InputTensor.DimensionCount" means DimensionCount and DataType both match the
      input's (E3).
    * Invalid indices: the page promises only that reads stay within the input's
      memory (E4). DirectML 1.15.4 wraps a negative index of a signed type once (from
      3_0), then clamps the *flat* read address into the bound buffer, and dmlops
      follows it on every backend (:func:`gather_read_addresses`, erratum E41; ruling
      2's per-axis clamp is overturned). ``strict=True`` in :func:`dmlops.execute`
      raises :class:`~dmlops.errors.DataIndexError` for any index outside the axis.

    References
    ----------
    NS:directml.DML_GATHER_OPERATOR_DESC
    """

    dml_name: ClassVar[str] = "DML_GATHER_OPERATOR_DESC"
    operator_type: ClassVar[OperatorType] = OperatorType.GATHER
    introduced: ClassVar[FeatureLevel] = FeatureLevel.V1_0
    family: ClassVar[str] = "data_movement"
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V1_0: _gather_rows(4, _DATA_1_0, _INDICES_1_0),
        FeatureLevel.V2_1: _gather_rows(4, _DATA_2_1, _INDICES_1_0),
        FeatureLevel.V3_0: _gather_rows((1, 8), _DATA_2_1, _INDICES_3_0),
        FeatureLevel.V4_1: _gather_rows((1, 8), _DATA_4_1, _INDICES_3_0),
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
        """The OutputTensor.Sizes DirectML requires: ``full`` right-aligned to DimensionCount.

        When ``full`` (:meth:`full_output_sizes`) is longer than DimensionCount, its
        leading entries that do not fit are dropped, whatever they are: DirectML 1.15.4
        accepts the desc and computes the slab of the full output at coordinate 0 of
        the dropped dimensions (:meth:`leading_slab`). When it is shorter, it is padded
        with leading 1s.
        """
        d = self.dimension_count
        full = self.full_output_sizes()
        excess = len(full) - d
        return full[excess:] if excess > 0 else (1,) * -excess + full

    def wraps_negative(self, feature_level: FeatureLevel) -> bool:
        """Whether a negative index is wrapped once (``+ n``): signed index types from FL 3_0."""
        return self.indices_tensor.data_type.is_signed_integer and feature_level >= FeatureLevel.V3_0

    def extra_slabs(self) -> bool:
        """IndexDimensions 0 with ``OutputTensor.Sizes[0] > 1``: slabs past the first (E37, E41)."""
        return len(self.full_output_sizes()) < self.dimension_count and self.output_tensor.sizes[0] > 1

    def reads_outside(self, indices: NDArray[Any], feature_level: FeatureLevel) -> bool:
        """True when some output element reads outside InputTensor's elements as a per-axis gather.

        ``indices`` is the logical IndicesTensor. That is: an index outside ``[-n, n)``
        (signed, FL >= 3_0) or ``[0, n)`` among those the output reads (the leading slab's),
        or slabs past the first (:meth:`extra_slabs`). Then the backends read through
        :func:`gather_read_addresses`; otherwise a plain per-axis gather gives the same.
        """
        if self.extra_slabs():
            return True
        desc, _, indices_slab = self.leading_slab()
        n = desc.input_tensor.sizes[desc.axis]
        return not indices_in_range(
            np.asarray(indices)[indices_slab], n, wrap_negative=self.wraps_negative(feature_level)
        )

    def check_data(self, inputs: Mapping[str, Any], feature_level: FeatureLevel) -> None:
        """DataIndexError for the first IndicesTensor value outside the gathered axis (strict mode)."""
        desc, _, indices_slab = self.leading_slab()
        n = desc.input_tensor.sizes[desc.axis]
        wrap = desc.indices_tensor.data_type.is_signed_integer and feature_level >= FeatureLevel.V3_0
        indices = np.asarray(inputs["IndicesTensor"])[indices_slab]
        normalize_indices(indices, n, wrap_negative=wrap, strict=True, what=f"{desc.dml_name}.IndicesTensor")

    def leading_slab(self) -> tuple[GatherDesc, tuple[slice, ...], tuple[slice, ...]]:
        """An equivalent desc whose dropped leading output entries are all 1, and the slices that make it.

        DirectML 1.15.4 computes a desc whose ``full`` output sizes have more than
        DimensionCount entries, the dropped leading ones not all 1, as the slab of the
        full output at coordinate 0 of every dropped dimension (probed with 2-D and
        3-D tensors, IndexDimensions 2 and 3, dropped entries from InputTensor's leading
        dimensions and from IndicesTensor's). The dropped dimensions are the first
        ``IndexDimensions - 1`` of ``InputTensor.Sizes[0:Axis] ++ IndicesTensor.Sizes[D -
        IndexDimensions:D]``, so the slab is InputTensor and IndicesTensor restricted to
        coordinate 0 there: returns (the desc with those Sizes set to 1, the slices of
        the logical InputTensor, the slices of the logical IndicesTensor). Unchanged
        (``self`` and full slices) when nothing non-1 is dropped.
        """
        d = self.dimension_count
        excess = len(self.full_output_sizes()) - d
        if excess <= 0 or all(s == 1 for s in self.full_output_sizes()[:excess]):
            return self, (slice(None),) * d, (slice(None),) * d
        from_input = min(excess, self.axis)
        first_index = d - self.index_dimensions
        from_indices = excess - from_input
        x_slices = tuple(slice(0, 1) if i < from_input else slice(None) for i in range(d))
        i_slices = tuple(
            slice(0, 1) if first_index <= i < first_index + from_indices else slice(None) for i in range(d)
        )

        def cut(t: TensorDesc, slices: tuple[slice, ...]) -> TensorDesc:
            sizes = tuple(1 if sl.stop == 1 else n for n, sl in zip(t.sizes, slices))
            if t.strides is None:  # packed: its minimal size shrinks with it
                return replace(t, sizes=sizes, total_tensor_size_in_bytes=-1)
            return replace(t, sizes=sizes)

        reduced = replace(
            self, input_tensor=cut(self.input_tensor, x_slices), indices_tensor=cut(self.indices_tensor, i_slices)
        )
        return reduced, x_slices, i_slices

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
        compared = self.output_tensor.sizes
        if len(self.full_output_sizes()) < d:
            # IndexDimensions 0: DirectML accepts any OutputTensor.Sizes[0] (E37); the
            # slabs past the first read as gather_read_addresses says (E41).
            expected, compared = expected[1:], compared[1:]
        if compared != expected:
            expected = self.output_sizes()
            raise self.invalid(
                "OutputTensor.Sizes",
                f"must be {dims_text(expected)} (InputTensor.Sizes with Axis {self.axis} replaced by the last "
                f"{self.index_dimensions} IndicesTensor.Sizes, right-aligned to DimensionCount {d}"
                f"{'; Sizes[0] may be any' if len(self.full_output_sizes()) < d else ''})",
                self.output_tensor.sizes,
            )


# -- out-of-range reads: DirectML's flat address clamp (erratum E41) -----------------------------------


def indices_in_range(indices: NDArray[Any], n: int, *, wrap_negative: bool) -> bool:
    """True when every index lies in ``[-n, n)`` (``wrap_negative``) or ``[0, n)``."""
    if indices.size == 0:
        return True
    if indices.dtype.kind == "u":
        return bool(indices.max() <= indices.dtype.type(n - 1))
    low = -n if wrap_negative else 0
    return bool(int(indices.min()) >= low and int(indices.max()) < n)


def gather_read_addresses(desc: GatherDesc, indices: NDArray[Any], feature_level: FeatureLevel) -> NDArray[np.intp]:
    """The element of InputTensor's bound buffer that every output element reads (DirectML 1.15.4).

    Returns an ``intp`` array of shape OutputTensor.Sizes: element addresses into the
    buffer bound to InputTensor, ``InputTensor.bound_size_in_bytes // itemsize`` elements
    (TotalTensorSizeInBytes, at least the addressed span, rounded up to 4 bytes). With
    the output coordinate split into ``pre`` / ``mid`` / ``post`` (:class:`GatherDesc`)
    and ``S = InputTensor``'s element strides::

        i = IndicesTensor[0.., mid]              # the raw value; UINT64 read as INT64
        i = i + n   if i < 0 (signed, FL >= 3_0) # one wrap, as ruling 2
        a = sum(pre * S[:Axis]) + i * S[Axis] + sum(post * S[Axis + 1:]) + o0 * S_extra
        address = min(a mod 2^32, buffer elements - 1)

    ``o0 * S_extra`` only with IndexDimensions 0 and ``OutputTensor.Sizes[0] > 1``: ``o0``
    is the output's leading coordinate and ``S_extra`` the element count of InputTensor
    when its Strides are NULL, 0 when they are given. Dropped leading output entries
    (:meth:`GatherDesc.leading_slab`) have coordinate 0. The arithmetic is modulo 2^64,
    then 2^32, so an index still negative after the wrap, or a UINT64 index of 2^32 or
    more, wraps the 32-bit address (then usually clamps to the last element). A UINT64
    index of 2^63 or more is negative as INT64 and wraps like one (``2^64 - 1`` reads
    element ``n - 1``); UINT32 indices never wrap.

    Bytes of the buffer past the tensor's elements read as the buffer holds them: the
    caller's values when it passed the flat buffer, zero when it passed the logical
    array (see ``dmlops._numpy_io.input_memory``). Probes on DirectML 1.15.4
    (``tests/directml/test_directml_findings.py``): ``[[1, 2, 3], [4, 5, 6]]``, Axis 1,
    UINT32 index 3 -> ``[4, 6]``, 5 -> ``[6, 6]``; INT32/INT64 -4 -> ``[6, 3]`` (row 0's
    address -1 wraps past the end), -7 -> ``[6, 6]``; UINT64 / INT64 ``2^32 + 1`` ->
    ``[2, 5]``; UINT64 ``2^63`` -> ``[4, 6]``, ``2^64 - 1`` -> ``[3, 6]``; UINT32
    ``2^32 - 1`` -> ``[6, 3]``; Axis 0 UINT32 1431655766 (``3 i = 2^32 + 2``) -> ``[3, 4, 5]``; Strides
    ``{4, 1}`` with the flat buffer ``[1, 2, 3, 99, 4, 5, 6, 77]``: index 3 -> ``[99, 6]``
    (the logical array: ``[0, 6]``); INT8 ``{1, 3}``: index 3 reads the buffer's fourth
    byte; Strides ``{0, 1}``: index 3 -> the last element; with IndexDimensions 0, Input
    ``{4, 3}`` NULL strides, Output ``{3, 4}``: slab 1 reads elements 12.. (clamped), with
    Strides ``{3, 1}`` slab 0 again.
    """
    t = desc.input_tensor
    d = desc.dimension_count
    k = desc.index_dimensions
    axis = desc.axis
    strides = t.element_strides
    full = desc.full_output_sizes()
    excess = max(len(full) - d, 0)
    # full coordinates with the dropped leading ones fixed at 0
    sizes = [1 if f < excess else s for f, s in enumerate(full)]
    values = np.asarray(indices).reshape(desc.indices_tensor.sizes[d - k :] if k else ())
    mid_dropped = max(0, excess - axis)  # dropped dimensions among mid (the first ones)
    values = np.asarray(values[tuple(slice(0, 1) if m < mid_dropped else slice(None) for m in range(k))])
    if values.dtype.kind == "u" and values.dtype != np.uint64:
        raw = values.astype(np.uint64)
    else:
        # DirectML reads a UINT64 index as INT64: one of 2^63 or more is negative and wraps.
        signed = values.astype(np.int64)
        if desc.wraps_negative(feature_level) or values.dtype == np.uint64:
            signed[signed < 0] += t.sizes[axis]  # (astype copied) only negatives move: no overflow
        raw = signed.astype(np.uint64)  # two's complement: exact modulo 2^64
    address = np.zeros(sizes, dtype=np.uint64)
    full_len = len(full)

    def along(f: int, values: NDArray[Any]) -> NDArray[Any]:
        shape = [1] * full_len
        shape[f] = values.size
        return values.reshape(shape)

    for f in range(axis):
        address += along(f, np.arange(sizes[f], dtype=np.uint64) * np.uint64(strides[f]))
    mid_shape = [1] * axis + list(values.shape) + [1] * (full_len - axis - k)
    address += raw.reshape(mid_shape) * np.uint64(strides[axis])  # wraps modulo 2^64
    for f in range(axis + k, full_len):
        dim = f - k + 1
        address += along(f, np.arange(sizes[f], dtype=np.uint64) * np.uint64(strides[dim]))
    out_sizes = desc.output_tensor.sizes
    if full_len < d:  # IndexDimensions 0: the output's leading dimension
        extra = t.element_count if t.strides is None else 0
        address = address[None] + (np.arange(out_sizes[0], dtype=np.uint64) * np.uint64(extra)).reshape(
            (-1,) + (1,) * full_len
        )
    address = address.reshape(out_sizes) & np.uint64(2**32 - 1)
    last = t.bound_size_in_bytes // t.dtype.itemsize - 1
    return np.minimum(address, np.uint64(last)).astype(np.intp)


# -- strict mode: the index check (ruling 2) -------------------------------------------------------------


def normalize_indices(
    indices: NDArray[Any], n: int, *, wrap_negative: bool, strict: bool, what: str = "IndicesTensor"
) -> NDArray[np.intp]:
    """Indices mapped into ``[0, n - 1]`` (ruling 2's per-axis clamp), as ``intp``.

    Strict mode's check (the first bad index raises). DirectML does not clamp per axis
    (erratum E41): the backends use this only where every index is in range (or to
    raise), and :func:`gather_read_addresses` otherwise.

    Parameters
    ----------
    indices : ndarray
        Index values of any integer dtype (the logical IndicesTensor).
    n : int
        Size of the gathered axis.
    wrap_negative : bool
        Add ``n`` once to negative values (signed index types from FL 3_0).
    strict : bool
        Raise :class:`DataIndexError` for the first (row-major) index outside
        ``[-n, n)`` (``[0, n)`` without ``wrap_negative``) instead of clamping.
    what : str
        Name used in the error message.

    Returns
    -------
    ndarray of intp
        Same shape as ``indices``.
    """
    if indices.dtype.kind == "u":
        # Compare and clamp in the unsigned type itself: a UINT64 index above 2^63 must
        # clamp to n - 1, never wrap through int64 to a negative number.
        top = indices.dtype.type(n - 1)
        bad = indices > top
        if strict:
            _raise_first(indices, bad, n, wrap_negative=False, what=what)
        return np.minimum(indices, top).astype(np.intp)
    values = indices.astype(np.int64)
    low = -n if wrap_negative else 0
    if strict:
        _raise_first(indices, (values < low) | (values >= n), n, wrap_negative=wrap_negative, what=what)
    if wrap_negative:
        # astype copied; only the negative entries are shifted, so large positive int64
        # values never overflow.
        negative = values < 0
        values[negative] += n
    return np.clip(values, 0, n - 1).astype(np.intp)


def _raise_first(indices: NDArray[Any], bad: NDArray[np.bool_], n: int, *, wrap_negative: bool, what: str) -> None:
    if not bad.any():
        return
    flat = int(np.argmax(bad.reshape(-1)))
    position = tuple(int(c) for c in np.unravel_index(flat, bad.shape))
    value = int(indices[position])
    allowed = f"[{-n}, {n})" if wrap_negative else f"[0, {n})"
    raise DataIndexError(
        f"{what}[{', '.join(str(c) for c in position)}]: index {value} is out of range {allowed} "
        f"for the gathered axis of size {n} (strict mode; DirectML would read an unspecified element)"
    )


# -- SLICE1 --------------------------------------------------------------------

_TYPES_2_1 = (T.FLOAT32, T.FLOAT16, T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8)
_TYPES_4_1 = (*_TYPES_2_1, T.FLOAT64, T.INT64, T.UINT64)


def _slice1_rows(dims: int | tuple[int, int], types: tuple[T, ...]) -> dict[str, TensorSupport]:
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
    family: ClassVar[str] = "data_movement"
    count_members: ClassVar[dict[str, tuple[str, ...]]] = {
        "DimensionCount": ("InputWindowOffsets", "InputWindowSizes", "InputWindowStrides")
    }
    support: ClassVar[dict[FeatureLevel, dict[str, TensorSupport]]] = {
        FeatureLevel.V2_1: _slice1_rows((4, 5), _TYPES_2_1),
        FeatureLevel.V3_0: _slice1_rows((1, 8), _TYPES_2_1),
        FeatureLevel.V4_1: _slice1_rows((1, 8), _TYPES_4_1),
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


# -- the generic data movement operators -------------------------------------------

FAMILY = "data_movement"

GENERIC_OPERATORS: frozenset[str] = frozenset(
    """CAST SLICE JOIN SPLIT PADDING PADDING1 TILE FILL_VALUE_CONSTANT FILL_VALUE_SEQUENCE
    DEPTH_TO_SPACE DEPTH_TO_SPACE1 SPACE_TO_DEPTH SPACE_TO_DEPTH1 SLICE_GRAD""".split()
)
"""The operators of this family that keep their generic descs and run on numpy
(``reference/data_movement.py``'s ``OPERATORS``) and directml."""

INDEXING_OPERATORS: frozenset[str] = frozenset(
    """GATHER_ELEMENTS GATHER_ND GATHER_ND1 SCATTER_ELEMENTS SCATTER_ND ONE_HOT REVERSE_SUBSEQUENCES
    DIAGONAL_MATRIX DIAGONAL_MATRIX1 NONZERO_COORDINATES""".split()
)
"""The indexing operators: generic descs too, run on numpy (``reference/data_movement.py``), cpu, cuda and directml."""

COPY_PROGRAM_OPERATORS: frozenset[str] = frozenset(
    """SLICE SLICE_GRAD JOIN SPLIT TILE PADDING PADDING1 DEPTH_TO_SPACE DEPTH_TO_SPACE1 SPACE_TO_DEPTH
    SPACE_TO_DEPTH1 FILL_VALUE_CONSTANT""".split()
)
"""The generic operators the cpu and cuda backends run as copy programs (:mod:`._copy_programs`)."""

CUDA_OPERATORS: frozenset[str] = COPY_PROGRAM_OPERATORS | INDEXING_OPERATORS | {"CAST", "FILL_VALUE_SEQUENCE"}
"""The generic operators of the family the cuda backend runs (``cuda/data_movement.py``)."""

claim = family_claim(
    FAMILY,
    (CUDA_OPERATORS, ("numpy", "cpu", "cuda", "directml")),
    (GENERIC_OPERATORS | INDEXING_OPERATORS, ("numpy", "cpu", "directml")),
)


def cast_array(x: NDArray[Any], target: np.dtype[Any]) -> NDArray[Any]:
    """``x`` converted to ``target`` as DirectML's CAST converts (bit-exact; every backend's rule).

    Integers pass through a 32-bit register (64-bit when either type is): kept as bits
    into a type of the register's width, saturated (read with the target's signedness)
    into a narrower one. Floats into integers: truncated, NaN -> 0, saturated. Into
    floats: rounded to nearest even.
    """
    target = np.dtype(target)
    if target.kind == "f":
        with np.errstate(over="ignore"):  # FLOAT64 beyond FLOAT32's range rounds to inf
            return x.astype(target)
    info = np.iinfo(target)
    if x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            t = np.trunc(np.where(np.isnan(x), 0, x).astype(np.float64))
            # clip in float64 first: info.max of a 64-bit type is not a float64, but every
            # value above 2^63 (2^64) saturates the same
            out = np.clip(t, float(info.min), float(info.max))
            big = t >= float(info.max)
            result = np.where(big, info.max, out.astype(np.int64 if info.min < 0 else np.uint64, copy=False))
        return result.astype(target)
    width = 64 if max(x.dtype.itemsize, target.itemsize) == 8 else 32
    if width == 32:
        bits = x.astype(np.int64) & 0xFFFFFFFF  # the register's pattern
        signed = np.where(bits >= 2**31, bits - 2**32, bits)
        unsigned = bits
    else:
        signed = x.astype(np.int64)  # wraps a UINT64 >= 2^63 to its negative pattern
        unsigned = x.astype(np.uint64)  # wraps negatives to their pattern
    if info.min < 0:
        return np.clip(signed, info.min, info.max).astype(target)
    return np.minimum(unsigned, np.asarray(info.max, dtype=unsigned.dtype)).astype(target)


def sequence_values(desc: Any, index: Any) -> Any:
    """FILL_VALUE_SEQUENCE's elements at the row-major positions ``index`` (int64; a NumPy or CuPy array).

    As DirectML 1.15.4 computes them. Floats: ``float32(i) * ValueDelta`` then
    ``+ ValueStart``, each rounded to float32 (no running sum, no fused multiply-add: a
    delta of inf makes element 0 NaN). Integers: 32-bit wrap-around arithmetic (64-bit
    for 64-bit types), the low bits stored (INT8 120, 123, 126, -127...).
    """
    dtype = desc.output_tensor.dtype
    if dtype.kind == "f":
        with np.errstate(all="ignore"):
            step = index.astype(np.float32) * np.float32(desc.value_delta)
            return (step + np.float32(desc.value_start)).astype(dtype)
    bits = 8 * max(dtype.itemsize, 4)
    mask = (1 << bits) - 1
    start, delta = np.uint64(int(desc.value_start) & mask), np.uint64(int(desc.value_delta) & mask)
    # uint64 arithmetic wraps modulo 2^64, which keeps the low 32 (or 64) bits exact
    raw = (start + index.astype(np.uint64) * delta) & np.uint64(mask)
    return raw.astype(dtype)  # the low bits, two's complement


def slice_window(offsets: tuple[int, ...], strides: tuple[int, ...], sizes: tuple[int, ...]) -> tuple[slice, ...]:
    """Basic-indexing slices reading ``Input[Offsets + Strides * o]`` for ``o`` in ``[0, sizes)``.

    Shared by SLICE (positive strides) and SLICE1/SLICE_GRAD (``offsets`` = CopyStart,
    signed strides).
    """
    return tuple(
        slice(start, start + stride * n if start + stride * n >= 0 else None, stride)
        for start, stride, n in zip(offsets, strides, sizes)
    )


def padding_indices(mode: str, n: int, start: int, end: int) -> NDArray[np.intp]:
    """Input coordinate each output coordinate of one axis reads (-1: the padding value).

    ``i = o - StartPadding`` for ``o`` in ``[0, n + StartPadding + EndPadding)``, mapped
    by the mode: CONSTANT keeps ``[0, n)`` and marks the rest -1; EDGE clamps;
    REFLECTION folds with period ``2 (n - 1)`` (edges not repeated; ``n = 1`` reads
    element 0); SYMMETRIC folds with period ``2 n`` (edges repeated); WRAP repeats with
    period ``n``. Padding wider than the input keeps folding, as the page's examples.
    """
    i = np.arange(-start, n + end, dtype=np.intp)
    if mode == "CONSTANT":
        return np.where((i >= 0) & (i < n), i, -1)
    if mode == "EDGE":
        return np.clip(i, 0, n - 1)
    if mode == "REFLECTION":
        if n == 1:
            return np.zeros_like(i)
        m = np.mod(i, 2 * (n - 1))
        return np.where(m < n, m, 2 * (n - 1) - m)
    if mode == "SYMMETRIC":
        m = np.mod(i, 2 * n)
        return np.where(m < n, m, 2 * n - 1 - m)
    if mode == "WRAP":
        return np.mod(i, n)
    raise ValueError(f"unknown padding mode {mode}")


def _x86_truncate(v: float, bits: int) -> int:
    """x86's CVTTSS2SI: truncated toward zero; NaN or out of range -> the "integer indefinite" -2^(bits-1)."""
    if not math.isfinite(v) or not -(2.0 ** (bits - 1)) <= math.trunc(v) < 2.0 ** (bits - 1):
        return -(2 ** (bits - 1))
    return math.trunc(v)


def padding_value(value: float, data_type: T) -> Any:
    """PADDING's FLOAT ``PaddingValue`` as an element of ``data_type``, as DirectML 1.15.4 converts it.

    DirectML converts on the host, as a C++ cast compiled for x86-64 does: a float type
    takes the float32 value; INT8, UINT8, INT16, UINT16 and INT32 take the low bits of a
    32-bit truncating conversion, UINT32 and INT64 of a 64-bit one (NaN and values out of
    the conversion's range give its integer indefinite, -2^31 or -2^63, so NaN pads an
    INT32 with INT32_MIN and an INT8 with 0); UINT64 converts ``[2^63, 2^64)`` exactly
    and everything else as INT64. So 177.9 pads INT8 with -79 (177 wrapped) and -1.5
    pads UINT8 with 255: no saturation, unlike CAST.
    """
    v = float(np.float32(value))
    dtype = data_type.numpy_dtype
    if data_type.is_float:
        return dtype.type(v)
    if data_type is T.UINT64 and 2.0**63 <= v < 2.0**64:  # NaN and inf fail both tests
        r = int(v)
    elif data_type in (T.UINT32, T.INT64, T.UINT64):
        r = _x86_truncate(v, 64)
    else:
        r = _x86_truncate(v, 32)
    return _wrap(r, dtype)


def _wrap(r: int, dtype: np.dtype[Any]) -> Any:
    """The integer ``r`` kept to the low bits of ``dtype`` (two's complement)."""
    bits = 8 * dtype.itemsize
    r &= 2**bits - 1
    if dtype.kind == "i" and r >= 2 ** (bits - 1):
        r -= 2**bits
    return dtype.type(r)


def _same_rank(desc: Any, member: str, array: tuple[int, ...], tensor: str = "InputTensor") -> None:
    dims = desc.tensor(tensor).dimension_count
    if len(array) != dims:
        raise desc.invalid(member, f"must have {tensor}.DimensionCount ({dims}) elements", len(array))


def _check_slice(desc: Any) -> None:
    in_sizes = desc.input_tensor.sizes
    out_sizes = desc.output_tensor.sizes
    _same_rank(desc, "Offsets", desc.offsets)
    for i, (off, size, stride) in enumerate(zip(desc.offsets, desc.sizes, desc.strides)):
        if size != out_sizes[i]:
            raise desc.invalid(f"Sizes[{i}]", f"must equal OutputTensor.Sizes[{i}] ({out_sizes[i]})", size)
        # DirectML reads the strides as signed (SLICE1's INT): 0 and >= 2^31 are rejected.
        if not 1 <= stride < 2**31:
            raise desc.invalid(f"Strides[{i}]", "must be in [1, 2^31 - 1]", stride)
        last = off + (size - 1) * stride
        if last >= in_sizes[i]:
            raise desc.invalid(
                f"Offsets[{i}]",
                f"the last element read, Offsets[{i}] + (Sizes[{i}] - 1) * Strides[{i}] "
                f"({off} + {size - 1} * {stride} = {last}), must be < InputTensor.Sizes[{i}] ({in_sizes[i]})",
                off,
            )


def _check_join_split(desc: Any, whole: str, parts: str) -> None:
    whole_sizes = desc.tensor(whole).sizes
    dims = len(whole_sizes)
    pieces = [t.sizes for t in getattr(desc, "input_tensors" if parts == "InputTensors" else "output_tensors")]
    if not pieces:
        raise desc.invalid(parts, "must hold at least one tensor", 0)
    if not 0 <= desc.axis < dims:
        raise desc.invalid("Axis", f"must be in [0, {whole}.DimensionCount - 1 = {dims - 1}]", desc.axis)
    total = 0
    for k, sizes in enumerate(pieces):
        for d in range(dims):
            if d != desc.axis and sizes[d] != whole_sizes[d]:
                raise desc.invalid(
                    f"{parts}[{k}].Sizes[{d}]",
                    f"must equal {whole}.Sizes[{d}] ({whole_sizes[d]}) off the axis",
                    sizes[d],
                )
        total += sizes[desc.axis]
    if total != whole_sizes[desc.axis]:
        raise desc.invalid(
            f"{whole}.Sizes[{desc.axis}]",
            f"must be the sum of the {parts}' sizes along Axis ({total})",
            whole_sizes[desc.axis],
        )


def _check_padding(desc: Any) -> None:
    in_sizes = desc.input_tensor.sizes
    out_sizes = desc.output_tensor.sizes
    _same_rank(desc, "StartPadding", desc.start_padding)
    for i, (n, start, end) in enumerate(zip(in_sizes, desc.start_padding, desc.end_padding)):
        if out_sizes[i] != n + start + end:
            raise desc.invalid(
                f"OutputTensor.Sizes[{i}]",
                f"must be InputTensor.Sizes[{i}] + StartPadding[{i}] + EndPadding[{i}] ({n} + {start} + {end})",
                out_sizes[i],
            )
    value_type = getattr(desc, "padding_value_data_type", None)
    if value_type is not None and value_type != desc.output_tensor.data_type:
        raise desc.invalid(
            "PaddingValueDataType",
            f"must equal OutputTensor.DataType ({desc.output_tensor.data_type.name})",
            value_type,
        )


def _check_tile(desc: Any) -> None:
    _same_rank(desc, "Repeats", desc.repeats)
    in_sizes = desc.input_tensor.sizes
    out_sizes = desc.output_tensor.sizes
    if len(out_sizes) != len(in_sizes):
        raise desc.invalid(
            "OutputTensor.DimensionCount", f"must equal InputTensor.DimensionCount ({len(in_sizes)})", len(out_sizes)
        )
    for i, (n, r) in enumerate(zip(in_sizes, desc.repeats)):
        if r == 0:
            raise desc.invalid(f"Repeats[{i}]", "must be at least 1", r)
        if out_sizes[i] != n * r:
            raise desc.invalid(
                f"OutputTensor.Sizes[{i}]", f"must be InputTensor.Sizes[{i}] * Repeats[{i}] ({n} * {r})", out_sizes[i]
            )


def _check_value_type(desc: Any) -> None:
    value_type = desc.value_data_type
    if value_type != desc.output_tensor.data_type:
        raise desc.invalid(
            "ValueDataType", f"must equal OutputTensor.DataType ({desc.output_tensor.data_type.name})", value_type
        )


def depth_space_sizes(operator: str, sizes: tuple[int, ...], block: int) -> tuple[int, ...]:
    """The output sizes of DEPTH_TO_SPACE(1) / SPACE_TO_DEPTH(1) for input ``sizes`` (N, C, H, W)."""
    n, c, h, w = sizes
    if operator.startswith("DEPTH_TO_SPACE"):
        return (n, c // (block * block), h * block, w * block)
    return (n, c * block * block, h // block, w // block)


def _check_depth_space(desc: Any) -> None:
    block = desc.block_size
    if block < 1:
        raise desc.invalid("BlockSize", "must be at least 1", block)
    _, c, h, w = desc.input_tensor.sizes
    if desc.operator_type.name.startswith("DEPTH_TO_SPACE"):
        if c % (block * block):
            raise desc.invalid(
                "InputTensor.Sizes[1]",
                f"the channel count must be a multiple of BlockSize * BlockSize ({block * block})",
                c,
            )
    else:
        for i, (name, v) in enumerate((("height", h), ("width", w)), start=2):
            if v % block:
                raise desc.invalid(
                    f"InputTensor.Sizes[{i}]", f"the {name} must be a multiple of BlockSize ({block})", v
                )
    want = depth_space_sizes(desc.operator_type.name, desc.input_tensor.sizes, block)
    if desc.output_tensor.sizes != want:
        raise desc.invalid("OutputTensor.Sizes", f"must be {dims_text(want)}", dims_text(desc.output_tensor.sizes))


def slice_grad_positions(desc: Any) -> list[NDArray[np.intp]]:
    """Per axis, the OutputGradientTensor coordinate each InputGradientTensor coordinate is written to.

    ``CopyStart[i] + InputWindowStrides[i] * o`` with SLICE1's CopyStart (``InputWindowOffsets[i]
    + InputWindowSizes[i] - 1`` for a negative stride). DirectML accepts InputGradientTensor
    sizes beyond SLICE1's MaxCopiedElements (see :func:`_check_slice_grad`), so with a
    negative stride a coordinate can be negative.
    """
    positions = []
    for off, size, stride, n in zip(
        desc.input_window_offsets,
        desc.input_window_sizes,
        desc.input_window_strides,
        desc.input_gradient_tensor.sizes,
    ):
        start = off + size - 1 if stride < 0 else off
        positions.append(start + stride * np.arange(n, dtype=np.intp))
    return positions


def _check_slice_grad(desc: Any) -> None:
    # DirectML 1.15.4's rule, measured over 5292 one-dimensional descs (the page refers to
    # SLICE1, whose MaxCopiedElements bound DirectML does not apply here): the window is
    # inside OutputGradientTensor, and so is Offsets + (InputGradientTensor.Sizes - 1) * |stride|.
    _same_rank(desc, "InputWindowOffsets", desc.input_window_offsets, "InputGradientTensor")
    out_sizes = desc.output_gradient_tensor.sizes
    for i, (off, size, stride, m) in enumerate(
        zip(
            desc.input_window_offsets,
            desc.input_window_sizes,
            desc.input_window_strides,
            desc.input_gradient_tensor.sizes,
        )
    ):
        n = out_sizes[i]
        if stride == 0:
            raise desc.invalid(f"InputWindowStrides[{i}]", "strides may not be 0", stride)
        if off + size > n:
            raise desc.invalid(
                f"InputWindowOffsets[{i}]",
                f"InputWindowOffsets[{i}] + InputWindowSizes[{i}] ({off} + {size}) must be "
                f"<= OutputGradientTensor.Sizes[{i}] ({n})",
                off,
            )
        reach = off + (m - 1) * abs(stride)
        if reach >= n:
            raise desc.invalid(
                f"InputGradientTensor.Sizes[{i}]",
                f"InputWindowOffsets[{i}] + (InputGradientTensor.Sizes[{i}] - 1) * |InputWindowStrides[{i}]| "
                f"({off} + {m - 1} * {abs(stride)} = {reach}) must be < OutputGradientTensor.Sizes[{i}] ({n})",
                m,
            )


# -- the indexing operators (directml only) -------------------------------------


def nd_sizes(
    input_sizes: tuple[int, ...],
    indices_sizes: tuple[int, ...],
    input_dimensions: int,
    indices_dimensions: int,
    batch: int = 0,
) -> tuple[int, ...]:
    """GATHER_ND(1)'s OutputTensor / SCATTER_ND's UpdatesTensor sizes before right-alignment.

    The indices' meaningful sizes but the last (the index tuples), then the input's
    meaningful sizes past the ``batch`` and the tuple's coordinates. The batch sizes are
    the indices' (DirectML does not compare them with the input's).
    """
    meaningful_input = input_sizes[len(input_sizes) - input_dimensions :]
    meaningful_indices = indices_sizes[len(indices_sizes) - indices_dimensions :]
    return (*meaningful_indices[:-1], *meaningful_input[batch + meaningful_indices[-1] :])


def effective_rank(sizes: tuple[int, ...]) -> int:
    """The DimensionCount less the leading sizes of 1 (NONZERO_COORDINATES)."""
    leading = next((i for i, s in enumerate(sizes) if s != 1), len(sizes))
    return len(sizes) - leading


def _sizes_off_axis(desc: Any, member: str, of: str, axis: int, on_axis: int | None = None) -> None:
    """``member`` has ``of``'s Sizes except on ``Axis`` (any size there, or ``on_axis``)."""
    own = desc.tensor(member).sizes
    want = [(own[i] if on_axis is None else on_axis) if i == axis else s for i, s in enumerate(desc.tensor(of).sizes)]
    desc.require_sizes(member, want, f"{of}.Sizes off Axis" + ("" if on_axis is None else f", {on_axis} on Axis"))


def _right_aligned(desc: Any, member: str, want: tuple[int, ...], rule: str) -> None:
    """``member``'s Sizes are ``want`` with leading 1s up to its DimensionCount."""
    rank = desc.tensor(member).dimension_count
    if len(want) > rank:
        rule = f"must be at least {len(want)} ({rule}: {dims_text(want)})"
        raise desc.invalid(f"{member}.DimensionCount", rule, rank)
    desc.require_sizes(member, (1,) * (rank - len(want)) + want, rule)


def _check_gather_elements(desc: Any) -> None:
    axis = int(desc.axis)
    desc.require_axis("Axis", axis, desc.input_tensor.dimension_count)
    _sizes_off_axis(desc, "IndicesTensor", "InputTensor", axis)
    desc.require_same("Sizes", "IndicesTensor", "OutputTensor")


def _check_scatter_elements(desc: Any) -> None:
    axis = int(desc.axis)
    desc.require_axis("Axis", axis, desc.input_tensor.dimension_count)
    _sizes_off_axis(desc, "IndicesTensor", "InputTensor", axis)
    n, m = desc.input_tensor.sizes[axis], desc.indices_tensor.sizes[axis]
    if m > n:  # not on the page, which allows any size on Axis (E142)
        raise desc.invalid(f"IndicesTensor.Sizes[{axis}]", f"must be at most InputTensor.Sizes[Axis] ({n})", m)
    desc.require_same("Sizes", "IndicesTensor", "UpdatesTensor")
    desc.require_same("Sizes", "InputTensor", "OutputTensor")


def _check_nd(desc: Any, result: str) -> None:
    """GATHER_ND, GATHER_ND1 (``result`` OutputTensor) and SCATTER_ND (UpdatesTensor)."""
    input_dims, indices_dims = int(desc.input_dimension_count), int(desc.indices_dimension_count)
    for member, count, tensor in (
        ("InputDimensionCount", input_dims, "InputTensor"),
        ("IndicesDimensionCount", indices_dims, "IndicesTensor"),
    ):
        sizes = desc.tensor(tensor).sizes
        # SCATTER_ND's page excludes the DimensionCount itself, which DirectML accepts (E143).
        if not 1 <= count <= len(sizes):
            raise desc.invalid(member, f"must be in [1, {tensor}.DimensionCount = {len(sizes)}]", count)
        for i, s in enumerate(sizes[: len(sizes) - count]):
            if s != 1:
                raise desc.invalid(f"{tensor}.Sizes[{i}]", f"must be 1 (a leading size outside {member})", s)
    batch = int(getattr(desc, "batch_dimension_count", 0))
    if batch >= min(input_dims, indices_dims):  # the page bounds it by the DimensionCounts (E141)
        raise desc.invalid(
            "BatchDimensionCount",
            f"must be less than InputDimensionCount ({input_dims}) and IndicesDimensionCount ({indices_dims})",
            batch,
        )
    indices_sizes = desc.indices_tensor.sizes
    last = len(indices_sizes) - 1
    if indices_sizes[last] > input_dims - batch:  # the page says InputTensor.DimensionCount (E140)
        raise desc.invalid(
            f"IndicesTensor.Sizes[{last}]",
            f"the index tuple size must be at most InputDimensionCount - BatchDimensionCount ({input_dims - batch})",
            indices_sizes[last],
        )
    want = nd_sizes(desc.input_tensor.sizes, indices_sizes, input_dims, indices_dims, batch)
    _right_aligned(desc, result, want, "the indices' sizes but the last, then the input's past the index tuple")
    if result == "UpdatesTensor":
        desc.require_same("Sizes", "InputTensor", "OutputTensor")
        _unbroadcast(desc, "IndicesTensor")


def _unbroadcast(desc: Any, member: str) -> None:
    """No Strides of 0 on a size above 1: SCATTER_ND's IndicesTensor (not on the page, E164)."""
    tensor = desc.tensor(member)
    for i, (n, stride) in enumerate(zip(tensor.sizes, tensor.strides or ())):
        if stride == 0 and n > 1:
            raise desc.invalid(f"{member}.Strides[{i}]", f"may not broadcast (0) a dimension of size {n}", stride)


def _check_one_hot(desc: Any) -> None:
    axis = int(desc.axis)
    desc.require_axis("Axis", axis, desc.indices_tensor.dimension_count, of="IndicesTensor.DimensionCount")
    _sizes_off_axis(desc, "IndicesTensor", "OutputTensor", axis, on_axis=1)
    values = desc.values_tensor.sizes
    if math.prod(values) < 2:
        raise desc.invalid("ValuesTensor.Sizes", "must hold at least 2 elements (OffValue, OnValue)", values)


def _check_reverse_subsequences(desc: Any) -> None:
    axis = int(desc.axis)
    desc.require_axis("Axis", axis, desc.input_tensor.dimension_count)
    _sizes_off_axis(desc, "SequenceLengthsTensor", "InputTensor", axis, on_axis=1)
    desc.require_same("Sizes", "InputTensor", "OutputTensor")


def _check_diagonal_matrix1(desc: Any) -> None:
    _check_value_type(desc)
    desc.require_same("Sizes", "InputTensor", "OutputTensor")  # not on the page; an absent InputTensor passes


def _check_nonzero_coordinates(desc: Any) -> None:
    count = desc.output_count_tensor
    desc.require_sizes("OutputCountTensor", (1,) * count.dimension_count, "a single element")
    coordinates = desc.output_coordinates_tensor.sizes
    rank = len(coordinates)  # at least 2 ({M, N}): the catalogue's support row
    input_sizes = desc.input_tensor.sizes
    low, high, n = effective_rank(input_sizes), len(input_sizes), coordinates[-1]
    if not low <= n <= high:
        raise desc.invalid(
            f"OutputCoordinatesTensor.Sizes[{rank - 1}]",
            f"N must be in [the input's effective rank {low}, InputTensor.DimensionCount {high}]",
            n,
        )
    want = (*(1,) * (rank - 2), math.prod(input_sizes), n)
    desc.require_sizes("OutputCoordinatesTensor", want, "{1..., M = InputTensor's element count, N}")


# -- the indexing operators: what DirectML 1.15.4 computes (shared by every backend) ------------


def index_values(indices: NDArray[Any], n: int, *, wrap_negative: bool) -> NDArray[np.int64]:
    """Index values as int64, a negative one moved by ``+ n`` once (``wrap_negative``).

    As GATHER (E41): a UINT64 index is read as INT64, so one of 2^63 or more is
    negative and wraps too; UINT32 indices never do. Values outside ``[0, n)`` after
    the wrap stay as they are: :func:`flat_addresses` and the scatters decide.
    """
    values = indices.astype(np.int64)  # wraps a UINT64 >= 2^63 to its negative pattern
    if wrap_negative or indices.dtype == np.uint64:
        negative = values < 0
        values[negative] += n  # (astype copied) only negatives move: no overflow
    return values


def wraps_negative(data_type: T, feature_level: FeatureLevel) -> bool:
    """Negative indices count from the end: signed index types from FL 3_0 (every indexing page)."""
    return data_type.is_signed_integer and feature_level >= FeatureLevel.V3_0


def flat_addresses(tensor: TensorDesc, coordinates: list[NDArray[Any]]) -> NDArray[np.intp]:
    """The element of ``tensor``'s bound buffer that a read at ``coordinates`` gets (E41, E160).

    ``coordinates``: one int64 array per dimension of ``tensor``, broadcasting together
    (an index past its axis, or negative after the wrap, included). DirectML 1.15.4
    reads ``sum(coordinate[i] * Strides[i])`` modulo 2^32, clamped to the last element
    of the bound buffer (TotalTensorSizeInBytes): GATHER's flat clamp
    (:func:`gather_read_addresses`), measured for GATHER_ELEMENTS and GATHER_ND(1) too.
    """
    address = np.zeros((), dtype=np.uint64)
    for c, stride in zip(coordinates, tensor.element_strides):
        # two's complement: a negative coordinate is exact modulo 2^64
        address = address + np.asarray(c, dtype=np.int64).astype(np.uint64) * np.uint64(stride)
    address = address & np.uint64(2**32 - 1)
    last = tensor.bound_size_in_bytes // tensor.dtype.itemsize - 1
    return np.minimum(address, np.uint64(last)).astype(np.intp)


def coordinates_in_range(sizes: tuple[int, ...], coordinates: list[NDArray[Any]]) -> bool:
    """True when every coordinate lies in ``[0, sizes[i])``."""
    return all(np.size(c) == 0 or (int(np.min(c)) >= 0 and int(np.max(c)) < n) for c, n in zip(coordinates, sizes))


def along(axis: int, rank: int, n: int) -> NDArray[np.int64]:
    """``arange(n)`` shaped to broadcast along ``axis`` of a rank-``rank`` array."""
    shape = [1] * rank
    shape[axis] = n
    return np.arange(n, dtype=np.int64).reshape(shape)


def elements_coordinates(
    sizes: tuple[int, ...], axis: int, indices: NDArray[Any], n: int, *, wrap_negative: bool
) -> list[NDArray[np.int64]]:
    """GATHER_ELEMENTS / SCATTER_ELEMENTS: the data coordinates of each index element.

    The index's own coordinate on every axis but ``Axis``, its (wrapped) value there.
    ``sizes``: IndicesTensor.Sizes; ``n``: the data tensor's size on ``Axis``.
    """
    rank = len(sizes)
    values = index_values(indices, n, wrap_negative=wrap_negative)
    return [values if i == axis else along(i, rank, s) for i, s in enumerate(sizes)]


def nd_coordinates(
    data: TensorDesc,
    indices: NDArray[Any],
    input_dimensions: int,
    indices_dimensions: int,
    batch: int,
    *,
    wrap_negative: bool,
) -> tuple[list[NDArray[np.int64]], tuple[int, ...]]:
    """GATHER_ND(1) / SCATTER_ND: the data coordinates of every result element, and the result shape.

    The result (GATHER_ND(1)'s OutputTensor, SCATTER_ND's UpdatesTensor, before the
    leading 1s of :func:`nd_sizes`) has the indices' meaningful sizes but the last, then
    the data's meaningful sizes past the batch and the index tuple. Its element ``(b,
    j, t)`` (``batch`` batch coordinates, the tuple's position, the trailing ones)
    reads or writes data coordinate ``(0..., b, tuple(b, j), t)``, each tuple value
    wrapped once along its own dimension. The batch coordinate is the indices' (DirectML
    does not compare batch sizes: one past the data's batch reads through
    :func:`flat_addresses`).
    """
    d = data.dimension_count
    meaningful = data.sizes[d - input_dimensions :]
    idx = indices.reshape(tuple(indices.shape[indices.ndim - indices_dimensions :]))
    k = int(idx.shape[-1])
    trailing = meaningful[batch + k :]
    shape = (*idx.shape[:-1], *trailing)
    rank = len(shape)
    pad = (1,) * len(trailing)
    coordinates: list[NDArray[np.int64]] = [np.zeros((1,) * rank, dtype=np.int64)] * (d - input_dimensions)
    coordinates += [along(j, rank, idx.shape[j]) for j in range(batch)]
    for t in range(k):
        n = meaningful[batch + t]
        coordinates.append(index_values(idx[..., t], n, wrap_negative=wrap_negative).reshape(idx.shape[:-1] + pad))
    coordinates += [along(rank - len(trailing) + j, rank, s) for j, s in enumerate(trailing)]
    return coordinates, shape


def check_indices(
    what: str, coordinates: list[NDArray[Any]], sizes: tuple[int, ...], axes: range | list[int], *, scatter: bool
) -> None:
    """DataIndexError for the first coordinate outside its axis among ``axes`` (strict mode; scatters always).

    A scatter's write outside its axis lands at the flat address inside the buffer,
    racing the writes of other elements, or is dropped past it (probed on DirectML
    1.15.4): undefined, so dmlops refuses it even without ``strict``.
    """
    for axis in axes:
        c = np.broadcast_to(coordinates[axis], np.broadcast_shapes(*(np.shape(c) for c in coordinates)))
        n = sizes[axis]
        bad = (c < 0) | (c >= n)
        if bad.any():
            position = tuple(int(p) for p in np.unravel_index(int(np.argmax(bad)), bad.shape))
            effect = "writes an undefined element" if scatter else "reads an unspecified element"
            raise DataIndexError(
                f"{what}: the index at result position {list(position)} points to {int(c[position])} on an axis of "
                f"size {n} (after the one wrap of a negative index); DirectML {effect}"
            )


def refuse_duplicates(what: str, shape: tuple[int, ...], coordinates: list[NDArray[Any]]) -> None:
    """Strict mode: DataIndexError when two scatter updates target one element (the pages leave the winner open).

    ``coordinates`` as :func:`check_indices`' (every one in range); the element named is
    the lowest (row-major) of those targeted more than once.
    """
    full = np.broadcast_shapes(*(np.shape(c) for c in coordinates))
    flat = np.ravel_multi_index(tuple(np.broadcast_to(c, full) for c in coordinates), shape).reshape(-1)
    values, counts = np.unique(flat, return_counts=True)
    if (counts > 1).any():
        target = np.unravel_index(int(values[np.argmax(counts > 1)]), shape)
        raise DataIndexError(
            f"{what}: several updates target element {[int(t) for t in target]} (strict mode; "
            "DirectML does not say which one wins)"
        )


def one_hot_positions(indices: NDArray[Any], n: int, *, wrap_negative: bool) -> NDArray[np.int64]:
    """ONE_HOT: the position of OnValue per index, -1 where every element is OffValue.

    The page: a negative index counts from the end, one outside ``[-n, n)`` sets nothing.
    DirectML 1.15.4 compares a UINT64 index whole, but an INT64 one by its low 32 bits
    after the wrap (E161): ``2^32 + 1`` sets position 1, ``2^32 - 1`` nothing.
    """
    if indices.dtype == np.uint64:
        return np.where(indices < np.uint64(n), indices.astype(np.int64), -1)
    values = indices.astype(np.int64)
    if wrap_negative:
        values = np.where(values < 0, values + n, values)
    low = values & 0xFFFFFFFF  # the unsigned low 32 bits (a wrapped value still negative: >= 2^31)
    return np.where(low < n, low, -1)


def reverse_sources(lengths: NDArray[Any], n: int, rank: int, axis: int) -> NDArray[np.int64]:
    """REVERSE_SUBSEQUENCES: the input coordinate along ``Axis`` each output coordinate reads.

    ``L`` is the length's low 32 bits (a UINT64 length is read so). Coordinate ``i < L``
    reads ``min(L - 1 - i, n - 1)``, every other one ``i``. The page says a length past
    the axis behaves as if clamped to ``n``; DirectML 1.15.4 clamps the source
    coordinate instead, so length 4 of an axis of 3 reads ``[2, 2, 1]``, not ``[2, 1, 0]`` (E162).
    """
    length = lengths.astype(np.uint64).astype(np.int64) & 0xFFFFFFFF
    i = along(axis, rank, n)
    return np.where(i < length, np.minimum(length - 1 - i, n - 1), i)


def diagonal_fill(sizes: tuple[int, ...], begin: int, end: int) -> NDArray[np.bool_]:
    """DIAGONAL_MATRIX(1): True where Value goes, over the last two dimensions (broadcast over the rest).

    With ``topX = x - y`` (column less row), the DIAGONAL_MATRIX1 page's rule: Value where
    ``(end >= begin) xor (topX >= begin) xor (topX < end)``: ``[begin, end)`` when begin
    <= end, outside ``[end, begin)`` otherwise (an empty range when equal). DIAGONAL_MATRIX
    is ``[Offset, Offset + 1)``.
    """
    rank = len(sizes)
    top_x = along(rank - 1, rank, sizes[-1]) - along(rank - 2, rank, sizes[-2])
    fill: NDArray[np.bool_] = bool(end >= begin) ^ (top_x >= begin) ^ (top_x < end)
    return fill


_RULES: dict[str, Any] = {
    "CAST": lambda desc: None,  # any pair of data types; same Sizes (the page's constraint)
    "SLICE": _check_slice,
    "JOIN": lambda desc: _check_join_split(desc, "OutputTensor", "InputTensors"),
    "SPLIT": lambda desc: _check_join_split(desc, "InputTensor", "OutputTensors"),
    "PADDING": _check_padding,
    "PADDING1": _check_padding,
    "TILE": _check_tile,
    "FILL_VALUE_CONSTANT": _check_value_type,
    "FILL_VALUE_SEQUENCE": _check_value_type,
    "DEPTH_TO_SPACE": _check_depth_space,
    "DEPTH_TO_SPACE1": _check_depth_space,
    "SPACE_TO_DEPTH": _check_depth_space,
    "SPACE_TO_DEPTH1": _check_depth_space,
    "SLICE_GRAD": _check_slice_grad,
    "GATHER_ELEMENTS": _check_gather_elements,
    "GATHER_ND": lambda desc: _check_nd(desc, "OutputTensor"),
    "GATHER_ND1": lambda desc: _check_nd(desc, "OutputTensor"),
    "SCATTER_ELEMENTS": _check_scatter_elements,
    "SCATTER_ND": lambda desc: _check_nd(desc, "UpdatesTensor"),
    "ONE_HOT": _check_one_hot,
    "REVERSE_SUBSEQUENCES": _check_reverse_subsequences,
    "DIAGONAL_MATRIX": lambda desc: None,  # any Offset and Value; 2 to 4 dimensions (the support rows)
    "DIAGONAL_MATRIX1": _check_diagonal_matrix1,
    "NONZERO_COORDINATES": _check_nonzero_coordinates,
}


def check_rules(desc: Any) -> None:
    """The rules of a generic data movement operator's own: InvalidDescError naming ``STRUCT.Member``.

    Beside the structural and page-fact checks of ``desc.validate()``, which calls this
    through :func:`validate_generic`; checked against DirectML 1.15.4's CreateOperator
    (tests/directml/test_directml_data_movement.py).
    """
    rule = _RULES.get(desc.operator_type.name)
    if rule is not None:
        rule(desc)


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The hook :class:`~dmlops.descs.generic.GenericDesc` calls from ``validate()``: :func:`check_rules`."""
    check_rules(desc)
