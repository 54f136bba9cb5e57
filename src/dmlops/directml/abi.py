"""Operator descs laid out in DirectML's Windows x64 ABI, generically.

A desc becomes one blob: the operator's own struct at offset 0, then everything its
pointers point to (tensor descs, arrays, nested structs). Every pointer holds an
offset into the blob, and its position is listed in ``relocations``; the host adds
the blob's address to each (NULL pointers are 0 and are not listed). Nothing here
knows an operator: each member is packed by its kind, from the metadata desc classes
carry (``member_infos``, ``count_members``, ``dml_member_names``).

The member kinds and their C types (x64: pointers are 8 bytes, aligned to 8; a
struct is aligned to its widest member and padded to a multiple of it):

==================  ==========================================================
kind                C member
==================  ==========================================================
input, output       ``const DML_TENSOR_DESC*`` (NULL when optional and absent)
uint, int, float    ``UINT``, ``INT``, ``FLOAT``
bool                ``BOOL`` (4 bytes)
enum                any DML enumeration (4 bytes)
uint_array ...      ``const UINT*`` / ``const INT*`` / ``const FLOAT*`` (NULL when empty)
count               ``UINT`` count member (``DimensionCount``...)
scale_bias          ``const DML_SCALE_BIAS*`` (NULL when None)
size_2d             ``DML_SIZE_2D`` by value (Width, Height)
scalar_union        ``DML_SCALAR_UNION`` by value (8 bytes), typed by the nearest
                    preceding ``DML_TENSOR_DATA_TYPE`` enum member
operator_desc       ``const DML_OPERATOR_DESC*`` (a fused activation; NULL when None)
input_array, ...    ``const DML_TENSOR_DESC*`` to an array of tensor descs
operator_desc_array ``const DML_OPERATOR_DESC*`` to an array of operator descs
==================  ==========================================================
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..descs._base import TENSOR_KINDS, OperatorDesc
from ..enums import TensorDataType, TensorType
from ..errors import UnsupportedError
from ..tensor import TensorDesc

POINTER = (8, 8)
"""(size, alignment) of a pointer on x64."""


@dataclass(frozen=True)
class Member:
    """One member of a struct to pack: its DML name, kind and value."""

    name: str
    kind: str
    value: Any
    enum_type: type | None = None


@dataclass(frozen=True)
class RawOperator:
    """An operator desc given as its DML_OPERATOR_TYPE and raw members.

    For operators dmlops has no desc class for (the backend's self-test uses
    ELEMENT_WISE_IDENTITY and ELEMENT_WISE_ADD), and for nested descs in tests.
    """

    operator_type: int
    members: tuple[Member, ...]


@dataclass
class Blob:
    """Bytes being laid out, with the offsets of the pointers inside them."""

    data: bytearray = field(default_factory=bytearray)
    relocations: list[int] = field(default_factory=list)

    def alloc(self, size: int, align: int) -> int:
        """Reserve ``size`` zero bytes at the next multiple of ``align``; their offset."""
        start = -len(self.data) % align + len(self.data)
        self.data.extend(bytes(start - len(self.data) + size))
        return start

    def put(self, offset: int, fmt: str, *values: Any) -> None:
        """Write little-endian ``values`` at ``offset``."""
        struct.pack_into("<" + fmt, self.data, offset, *values)

    def pointer(self, at: int, target: int | None) -> None:
        """Store a pointer to ``target`` (a blob offset; None for NULL) at ``at``."""
        if target is None:
            self.put(at, "Q", 0)
            return
        self.put(at, "Q", target)
        self.relocations.append(at)


@dataclass(frozen=True)
class PackedDesc:
    """A desc in DirectML's ABI: the blob, its pointer positions, the operator type."""

    operator_type: int
    blob: bytes
    relocations: tuple[int, ...]


# -- kinds ------------------------------------------------------------------------------

Writer = Callable[[Blob, int, Any, "_Context"], None]


@dataclass(frozen=True)
class Kind:
    """How one member kind is laid out: inline size and alignment, and its writer."""

    size: int
    align: int
    write: Writer


@dataclass
class _Context:
    """What a member's writer may look at: the members written before it."""

    previous: list[Member] = field(default_factory=list)


def _scalar(fmt: str) -> Writer:
    def write(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
        blob.put(at, fmt, value)

    return write


def _write_bool(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
    blob.put(at, "i", 1 if value else 0)


def _write_enum(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
    blob.put(at, "I", int(value))


def _array(fmt: str) -> Writer:
    def write(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
        values = list(value)
        if not values:
            blob.pointer(at, None)
            return
        target = blob.alloc(4 * len(values), 4)
        blob.put(target, f"{len(values)}{fmt}", *values)
        blob.pointer(at, target)

    return write


def write_tensor_desc(blob: Blob, at: int, tensor: TensorDesc) -> None:
    """A DML_TENSOR_DESC (16 bytes) at ``at``, pointing at its DML_BUFFER_TENSOR_DESC.

    DML_BUFFER_TENSOR_DESC (48 bytes): DataType @0, Flags @4, DimensionCount @8,
    Sizes @16, Strides @24 (NULL when packed), TotalTensorSizeInBytes (UINT64) @32,
    GuaranteedBaseOffsetAlignment @40.
    """
    blob.put(at, "I", int(TensorType.BUFFER))
    buffer = blob.alloc(48, 8)
    blob.pointer(at + 8, buffer)
    n = tensor.dimension_count
    blob.put(buffer, "III", int(tensor.data_type), int(tensor.flags), n)
    sizes = blob.alloc(4 * n, 4)
    blob.put(sizes, f"{n}I", *tensor.sizes)
    blob.pointer(buffer + 16, sizes)
    if tensor.strides is None:
        blob.pointer(buffer + 24, None)
    else:
        strides = blob.alloc(4 * n, 4)
        blob.put(strides, f"{n}I", *tensor.strides)
        blob.pointer(buffer + 24, strides)
    blob.put(buffer + 32, "QI", tensor.total_tensor_size_in_bytes, tensor.guaranteed_base_offset_alignment)


def _write_pointed(blob: Blob, at: int, items: list[Any], write_one: Callable[[Blob, int, Any], None]) -> None:
    """A pointer at ``at`` to ``items`` packed back to back as 16-byte structs (NULL when empty).

    DML_TENSOR_DESC and DML_OPERATOR_DESC are both { enum Type; const void* Desc; }: 16
    bytes, 8-aligned, so single members and arrays of either share this.
    """
    if not items:
        blob.pointer(at, None)
        return
    target = blob.alloc(16 * len(items), 8)
    blob.pointer(at, target)
    for i, item in enumerate(items):
        write_one(blob, target + 16 * i, item)


def _write_tensor(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
    _write_pointed(blob, at, [] if value is None else [value], write_tensor_desc)


def _write_tensor_array(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
    _write_pointed(blob, at, list(value), write_tensor_desc)


def _write_scale_bias(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
    # DML_SCALE_BIAS { FLOAT Scale; FLOAT Bias; }
    if value is None:
        blob.pointer(at, None)
        return
    scale, bias = value
    target = blob.alloc(8, 4)
    blob.put(target, "ff", scale, bias)
    blob.pointer(at, target)


def _write_size_2d(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
    # DML_SIZE_2D { UINT Width; UINT Height; }
    width, height = value
    blob.put(at, "II", width, height)


_UNION_FORMATS = {
    TensorDataType.INT8: "b",
    TensorDataType.INT16: "h",
    TensorDataType.INT32: "i",
    TensorDataType.INT64: "q",
    TensorDataType.UINT8: "B",
    TensorDataType.UINT16: "H",
    TensorDataType.UINT32: "I",
    TensorDataType.UINT64: "Q",
    TensorDataType.FLOAT16: "e",
    TensorDataType.FLOAT32: "f",
    TensorDataType.FLOAT64: "d",
}


def _write_scalar_union(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
    # DML_SCALAR_UNION: 8 bytes; the member used is the one of the data type named by
    # the struct's preceding DML_TENSOR_DATA_TYPE member (ValueDataType, MinMaxDataType).
    data_type = next(
        (m.value for m in reversed(ctx.previous) if m.kind == "enum" and isinstance(m.value, TensorDataType)),
        None,
    )
    if data_type is None:
        raise UnsupportedError("DML_SCALAR_UNION member without a preceding DML_TENSOR_DATA_TYPE member")
    fmt = _UNION_FORMATS.get(data_type)
    if fmt is None:
        raise UnsupportedError(f"DML_SCALAR_UNION of {data_type} is not supported")
    blob.put(at, fmt, np.array(value).astype(data_type.numpy_dtype).item())


def _write_operator_desc(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
    _write_pointed(blob, at, [] if value is None else [value], _write_operator)


def _write_operator_desc_array(blob: Blob, at: int, value: Any, ctx: _Context) -> None:
    _write_pointed(blob, at, list(value), _write_operator)


def _write_operator(blob: Blob, at: int, op: OperatorDesc | RawOperator) -> None:
    """A DML_OPERATOR_DESC { DML_OPERATOR_TYPE Type; const void* Desc; } at ``at``."""
    op_type, members = _operator_members(op)
    blob.put(at, "I", op_type)
    blob.pointer(at + 8, write_struct(blob, members))


KINDS: dict[str, Kind] = {
    "input": Kind(*POINTER, _write_tensor),
    "output": Kind(*POINTER, _write_tensor),
    "uint": Kind(4, 4, _scalar("I")),
    "count": Kind(4, 4, _scalar("I")),
    "int": Kind(4, 4, _scalar("i")),
    "float": Kind(4, 4, _scalar("f")),
    "bool": Kind(4, 4, _write_bool),
    "enum": Kind(4, 4, _write_enum),
    "uint_array": Kind(*POINTER, _array("I")),
    "int_array": Kind(*POINTER, _array("i")),
    "float_array": Kind(*POINTER, _array("f")),
    "scale_bias": Kind(*POINTER, _write_scale_bias),
    "size_2d": Kind(8, 4, _write_size_2d),
    "scalar_union": Kind(8, 8, _write_scalar_union),
    "operator_desc": Kind(*POINTER, _write_operator_desc),
    "input_array": Kind(*POINTER, _write_tensor_array),
    "output_array": Kind(*POINTER, _write_tensor_array),
    "operator_desc_array": Kind(*POINTER, _write_operator_desc_array),
}
"""Member kind -> layout. A new DirectML member kind is one entry here."""


def struct_layout(members: Sequence[Member]) -> tuple[list[int], int, int]:
    """(member offsets, struct size, struct alignment) under the x64 C rules."""
    offsets = []
    size = 0
    align = 1
    for m in members:
        kind = _kind(m)
        size += -size % kind.align
        offsets.append(size)
        size += kind.size
        align = max(align, kind.align)
    size += -size % align
    return offsets, size, align


def write_struct(blob: Blob, members: Sequence[Member]) -> int:
    """Lay out a struct of ``members`` in ``blob`` (then what it points to); its offset."""
    offsets, size, align = struct_layout(members)
    start = blob.alloc(max(size, 1), align)
    ctx = _Context()
    for m, offset in zip(members, offsets):
        _kind(m).write(blob, start + offset, m.value, ctx)
        ctx.previous.append(m)
    return start


def _kind(m: Member) -> Kind:
    kind = KINDS.get(m.kind)
    if kind is None:
        raise UnsupportedError(f"{m.name}: the directml backend cannot pack members of kind {m.kind!r}")
    return kind


def desc_members(desc: OperatorDesc) -> tuple[Member, ...]:
    """A desc's members in ABI order (``dml_member_names``), count members included."""
    infos = {i.dml_name: i for i in desc.member_infos()}
    counts = desc.counts()
    members = []
    for name in desc.dml_member_names():
        if name in counts:
            members.append(Member(name, "count", counts[name]))
            continue
        info = infos[name]
        value = getattr(desc, info.attr)
        if info.kind not in TENSOR_KINDS and info.kind != "enum" and value is None and not info.optional:
            raise UnsupportedError(f"{desc.dml_name}.{name}: no value to pack")
        members.append(Member(name, info.kind, value, info.enum))
    return tuple(members)


def _operator_members(op: OperatorDesc | RawOperator) -> tuple[int, Sequence[Member]]:
    if isinstance(op, RawOperator):
        return op.operator_type, op.members
    return int(op.operator_type), desc_members(op)


def pack(op: OperatorDesc | RawOperator) -> PackedDesc:
    """The blob of an operator desc: its struct at offset 0, then its pointees."""
    op_type, members = _operator_members(op)
    blob = Blob()
    start = write_struct(blob, members)
    assert start == 0  # the host reads the operator's struct at the blob's start
    blob.data.extend(bytes(-len(blob.data) % 8))
    return PackedDesc(op_type, bytes(blob.data), tuple(blob.relocations))
