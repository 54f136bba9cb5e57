"""The shapes of the catalogue's rows: an operator, one member of its struct, an enum.

The rows themselves are data, generated from DirectML's headers by
``scripts/gen_catalogue.py`` into ``_operators.py`` and ``_enums.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..enums import FeatureLevel

MemberKind = Literal[
    "input",
    "output",
    "input_array",
    "output_array",
    "uint",
    "int",
    "float",
    "bool",
    "enum",
    "count",
    "uint_array",
    "int_array",
    "float_array",
    "scale_bias",
    "size_2d",
    "scalar_union",
    "operator_desc",
    "operator_desc_array",
]
"""Every member kind of a DML_*_OPERATOR_DESC, named as ``dmlops.directml.abi.KINDS`` names them.

==================== =====================================================================
kind                 C member in DirectML.h
==================== =====================================================================
input, output        ``const DML_TENSOR_DESC*`` (``optional``: ``_Maybenull_``)
input_array, ...     ``_Field_size_(count) const DML_TENSOR_DESC*``
uint, int, float     ``UINT``, ``INT``, ``FLOAT``
bool                 ``BOOL``
enum                 a DML enumeration (``enum`` names it)
count                ``UINT`` that sizes the arrays whose ``count`` names it
uint_array, ...      ``_Field_size_(count) const UINT*`` / ``INT*`` / ``FLOAT*``
scale_bias           ``_Maybenull_ const DML_SCALE_BIAS*``
size_2d              ``DML_SIZE_2D`` (by value)
scalar_union         ``DML_SCALAR_UNION`` (by value), typed by the ``data_type`` member
operator_desc        ``_Maybenull_ const DML_OPERATOR_DESC*`` (a fused activation)
operator_desc_array  ``_Field_size_(count) const DML_OPERATOR_DESC*`` (RNN activations)
==================== =====================================================================
"""

MEMBER_KINDS: tuple[MemberKind, ...] = MemberKind.__args__  # type: ignore[attr-defined]
TENSOR_MEMBER_KINDS: tuple[MemberKind, ...] = ("input", "output", "input_array", "output_array")
ARRAY_KINDS: tuple[MemberKind, ...] = (
    "input_array",
    "output_array",
    "uint_array",
    "int_array",
    "float_array",
    "operator_desc_array",
)


@dataclass(frozen=True)
class MemberSpec:
    """One member of an operator's struct, in DirectML.h's order.

    ``enum`` is the DML enumeration of an ``enum`` member; ``count`` the count member
    sizing an array; ``data_type`` the DML_TENSOR_DATA_TYPE member typing a
    ``scalar_union``.
    """

    name: str
    kind: MemberKind
    optional: bool = False
    enum: str | None = None
    count: str | None = None
    data_type: str | None = None


@dataclass(frozen=True)
class OperatorSpec:
    """One DML_OPERATOR_TYPE: its value, struct, introducing feature level and members.

    ``aliases`` are other DML_OPERATOR_TYPE names with the same value (DirectML.h's
    ``DML_OPERATOR_SCATTER``); ``in_place`` is DxDispatch's schema flag (the output may
    alias an input); ``in_dxdispatch`` says whether DxDispatch's schema and JSON parser
    know the operator (they stop at DML_FEATURE_LEVEL_6_3).
    """

    name: str
    value: int
    feature_level: FeatureLevel
    struct: str
    members: tuple[MemberSpec, ...]
    aliases: tuple[str, ...] = ()
    in_place: bool = False
    in_dxdispatch: bool = True

    @property
    def dml_name(self) -> str:
        """``"DML_OPERATOR_SLICE1"``."""
        return f"DML_OPERATOR_{self.name}"

    def member_names(self) -> tuple[str, ...]:
        """Every member name in struct order, count members included."""
        return tuple(m.name for m in self.members)

    def member(self, name: str) -> MemberSpec:
        """The member called ``name``; KeyError naming the struct otherwise."""
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(f"{self.struct} has no member {name!r}")

    def count_members(self) -> dict[str, tuple[str, ...]]:
        """Count member -> the arrays it sizes, in struct order."""
        counts: dict[str, tuple[str, ...]] = {}
        for m in self.members:
            if m.count is not None:
                counts[m.count] = (*counts.get(m.count, ()), m.name)
        return counts


@dataclass(frozen=True)
class EnumValue:
    """One value of a DML enumeration; ``feature_level`` when it came after the enum itself."""

    name: str
    value: int
    feature_level: FeatureLevel | None = None


@dataclass(frozen=True)
class EnumSpec:
    """A DML enumeration of DirectML.h: its type name, value prefix and values.

    ``feature_level`` is the level whose header section declares the enum.
    """

    name: str
    prefix: str
    feature_level: FeatureLevel
    values: tuple[EnumValue, ...]

    def value_of(self, name: str) -> int:
        """The value of ``"DML_PADDING_MODE_EDGE"`` or ``"EDGE"`` (exact spelling, as DxDispatch)."""
        short = name.removeprefix(self.prefix)
        for v in self.values:
            if v.name == short:
                return v.value
        raise KeyError(f"'{name}' is not a recognized value for {self.name}.")
