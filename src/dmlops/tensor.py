"""TensorDesc: the mirror of DML_BUFFER_TENSOR_DESC (spec section 7)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dml_json import parse_enum, parse_flags, parse_uint, parse_uint_array, warn_unknown_fields
from .enums import TensorDataType, TensorFlags, TensorType
from .errors import DescParseError, InvalidDescError

BUFFER_TENSOR_DESC = "DML_BUFFER_TENSOR_DESC"
MAX_ELEMENTS = 2**32 - 1
"""DML_BUFFER_TENSOR_DESC: TotalTensorSizeInBytes may not exceed 2^32 - 1 elements."""


def packed_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Row-major element strides of a packed tensor (DirectML's NULL Strides)."""
    strides = [1] * len(sizes)
    for i in range(len(sizes) - 2, -1, -1):
        strides[i] = strides[i + 1] * sizes[i + 1]
    return tuple(strides)


def calc_buffer_tensor_size(data_type: TensorDataType, sizes: Sequence[int], strides: Sequence[int] | None) -> int:
    """DMLCalcBufferTensorSize, bit-accurate like DirectMLX's version.

    Packed: product of sizes times the element size. Strided: (last index + 1) times
    the element size, where last index = sum((size - 1) * stride). Sizes are counted
    in bits so that 4-bit types round up to whole bytes, then the byte count is rounded
    up to a multiple of 4. Python integers do not overflow, unlike the page's 32-bit
    accumulator (erratum E23). UNKNOWN gives 0.
    """
    bits = data_type.size_in_bits
    if bits == 0:
        return 0
    if strides is None:
        count = math.prod(sizes)
    else:
        count = sum((s - 1) * st for s, st in zip(sizes, strides)) + 1
    size_bytes = (count * bits + 7) // 8
    return (size_bytes + 3) & ~3


def _as_uint(value: Any, where: str, *, struct: str = BUFFER_TENSOR_DESC) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InvalidDescError(
            f"{struct}.{where}: must be an unsigned integer; got {value!r}",
            struct=struct,
            member=where,
        )
    return int(value)


def _uint_tuple(values: Any, where: str) -> tuple[int, ...]:
    try:
        items = list(values)
    except TypeError:
        raise InvalidDescError(
            f"{BUFFER_TENSOR_DESC}.{where}: must be a sequence of unsigned integers; got {values!r}",
            struct=BUFFER_TENSOR_DESC,
            member=where,
        ) from None
    return tuple(_as_uint(v, f"{where}[{i}]") for i, v in enumerate(items))


@dataclass(frozen=True, kw_only=True)
class TensorDesc:
    """A DML_BUFFER_TENSOR_DESC: data type, sizes and optional element strides.

    Attributes
    ----------
    data_type : TensorDataType
        ``DataType``; any of DML_TENSOR_DATA_TYPE (names and ints accepted).
    sizes : tuple of int
        ``Sizes``, elements per dimension, outermost first.
    strides : tuple of int or None
        ``Strides`` in elements; None means packed row-major. 0 broadcasts a dimension.
    flags : TensorFlags
        ``Flags``: NONE or OWNED_BY_DML.
    total_tensor_size_in_bytes : int
        ``TotalTensorSizeInBytes``; defaults to DMLCalcBufferTensorSize.
    guaranteed_base_offset_alignment : int
        ``GuaranteedBaseOffsetAlignment``: 0 or a power of two >= the element size.

    Notes
    -----
    Construction only normalises types; the rules of the DML pages are checked by
    the operator desc that owns the tensor (``OperatorDesc.validate``), because the
    allowed data types and dimension counts depend on the operator and feature level.
    """

    data_type: TensorDataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    flags: TensorFlags = TensorFlags.NONE
    total_tensor_size_in_bytes: int = field(default=-1)
    guaranteed_base_offset_alignment: int = 0

    def __post_init__(self) -> None:
        try:
            data_type = TensorDataType.from_any(self.data_type)
        except ValueError as exc:
            raise InvalidDescError(
                f"{BUFFER_TENSOR_DESC}.DataType: {exc}", struct=BUFFER_TENSOR_DESC, member="DataType"
            ) from None
        try:
            flags = TensorFlags.from_any(self.flags)
        except ValueError as exc:
            raise InvalidDescError(
                f"{BUFFER_TENSOR_DESC}.Flags: {exc}", struct=BUFFER_TENSOR_DESC, member="Flags"
            ) from None
        sizes = _uint_tuple(self.sizes, "Sizes")
        strides = None if self.strides is None else _uint_tuple(self.strides, "Strides")
        alignment = _as_uint(self.guaranteed_base_offset_alignment, "GuaranteedBaseOffsetAlignment")
        total = self.total_tensor_size_in_bytes
        if isinstance(total, (int, np.integer)) and not isinstance(total, bool) and total == -1:
            if strides is not None and len(strides) != len(sizes):
                total = 0  # invalid desc; validate() reports the Strides length first
            else:
                total = calc_buffer_tensor_size(data_type, sizes, strides)
        else:
            total = _as_uint(total, "TotalTensorSizeInBytes")
        object.__setattr__(self, "data_type", data_type)
        object.__setattr__(self, "flags", flags)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "strides", strides)
        object.__setattr__(self, "total_tensor_size_in_bytes", total)
        object.__setattr__(self, "guaranteed_base_offset_alignment", alignment)

    # -- derived quantities -------------------------------------------------------

    @property
    def dimension_count(self) -> int:
        """``DimensionCount`` (derived from Sizes)."""
        return len(self.sizes)

    @property
    def element_count(self) -> int:
        """Number of logical elements (product of Sizes)."""
        return math.prod(self.sizes)

    @property
    def element_strides(self) -> tuple[int, ...]:
        """The strides in elements, packed row-major when Strides is NULL."""
        return self.strides if self.strides is not None else packed_strides(self.sizes)

    @property
    def dtype(self) -> np.dtype[Any]:
        """NumPy dtype of one element (UnsupportedError for 4-bit types)."""
        return self.data_type.numpy_dtype

    @property
    def minimum_size_in_bytes(self) -> int:
        """DMLCalcBufferTensorSize of this desc (ignores TotalTensorSizeInBytes)."""
        return calc_buffer_tensor_size(self.data_type, self.sizes, self.strides)

    @property
    def addressed_element_span(self) -> int:
        """Elements from the first to one past the last element the desc addresses."""
        return sum((s - 1) * st for s, st in zip(self.sizes, self.element_strides)) + 1

    def with_sizes(self, sizes: Sequence[int]) -> TensorDesc:
        """A packed desc of the same data type with other sizes."""
        return TensorDesc(data_type=self.data_type, sizes=tuple(sizes))

    # -- DxDispatch JSON ----------------------------------------------------------

    @classmethod
    def from_dml_dict(cls, value: Any) -> TensorDesc:
        """Parse DxDispatch's DML_TENSOR_DESC object (short or long form).

        Short form: ``{"DataType", "Sizes", ["Strides", "Flags", "DimensionCount",
        "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment"]}``.
        Long form: ``{"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": {short form}}``.
        Raises :class:`DescParseError` with DxDispatch's wording.
        """
        if not isinstance(value, Mapping):
            raise DescParseError("Expected a JSON object for a DML_TENSOR_DESC.")
        if "Desc" in value:
            try:
                kind = TensorType.from_any(value.get("Type", "BUFFER"))
            except ValueError as exc:
                raise DescParseError(f"Error parsing field 'Type': {exc}") from None
            if kind is not TensorType.BUFFER:
                raise DescParseError(
                    f"Error parsing field 'Type': only DML_TENSOR_TYPE_BUFFER tensors exist; got {kind}"
                )
            try:
                return cls.from_dml_dict(value["Desc"])
            except DescParseError as exc:
                raise DescParseError(f"Error parsing field 'Desc': {exc.detail}") from None
        known = {
            "DataType",
            "Flags",
            "DimensionCount",
            "Sizes",
            "Strides",
            "TotalTensorSizeInBytes",
            "GuaranteedBaseOffsetAlignment",
            "Type",
        }
        warn_unknown_fields(value, known, BUFFER_TENSOR_DESC)
        data_type = parse_enum(value, "DataType", TensorDataType, required=True)
        flags = parse_flags(value)
        sizes = parse_uint_array(value, "Sizes", required=True) or ()
        strides = parse_uint_array(value, "Strides", required=False)
        if "DimensionCount" in value:
            count = parse_uint(value, "DimensionCount")
            if count != len(sizes):
                raise DescParseError(
                    f"Error parsing field 'DimensionCount': DimensionCount is {count} but "
                    f"'Sizes' has {len(sizes)} elements."
                )
        if strides is not None and len(strides) != len(sizes):
            raise DescParseError(
                f"Error parsing field 'Strides': 'Strides' has {len(strides)} elements but 'Sizes' has {len(sizes)}."
            )
        total = parse_uint(value, "TotalTensorSizeInBytes") if "TotalTensorSizeInBytes" in value else -1
        align = parse_uint(value, "GuaranteedBaseOffsetAlignment") if "GuaranteedBaseOffsetAlignment" in value else 0
        return cls(
            data_type=data_type,
            sizes=sizes,
            strides=strides,
            flags=flags,
            total_tensor_size_in_bytes=total,
            guaranteed_base_offset_alignment=align,
        )

    def to_dml_dict(self) -> dict[str, Any]:
        """The short DxDispatch form; Strides and non-default members only when set."""
        out: dict[str, Any] = {"DataType": self.data_type.name, "Sizes": list(self.sizes)}
        if self.strides is not None:
            out["Strides"] = list(self.strides)
        if self.flags is not TensorFlags.NONE:
            out["Flags"] = self.flags.name
        if self.total_tensor_size_in_bytes != self.minimum_size_in_bytes:
            out["TotalTensorSizeInBytes"] = self.total_tensor_size_in_bytes
        if self.guaranteed_base_offset_alignment:
            out["GuaranteedBaseOffsetAlignment"] = self.guaranteed_base_offset_alignment
        return out
