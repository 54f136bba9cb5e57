"""The catalogue: every DML_OPERATOR_TYPE of DirectML.h, as data.

One row per operator (``OPERATORS``, in DML_OPERATOR_TYPE order): its short name, value,
the feature level that introduced it, its struct, and its members in DirectML.h's order
with their kinds (:data:`MEMBER_KINDS`), optionality, enum types, count members and the
data-type member of each DML_SCALAR_UNION. ``ENUMS`` holds every other enumeration of
DirectML.h with its values. Both are generated from the headers by
``scripts/gen_catalogue.py``; the hand-written desc classes in :mod:`dmlops.descs` are
checked against them.

Examples
--------
>>> from dmlops import catalogue
>>> op = catalogue.operator("DML_OPERATOR_SLICE1")
>>> op.value, str(op.feature_level), op.member_names()[2:4]
(111, 'DML_FEATURE_LEVEL_2_1', ('DimensionCount', 'InputWindowOffsets'))
>>> op.count_members()
{'DimensionCount': ('InputWindowOffsets', 'InputWindowSizes', 'InputWindowStrides')}
>>> catalogue.enum("DML_PADDING_MODE").value_of("DML_PADDING_MODE_WRAP")
4
"""

from __future__ import annotations

from . import page_facts
from ._enums import ENUMS
from ._operators import FUSABLE_ACTIVATIONS, OPERATORS
from ._spec import (
    ARRAY_KINDS,
    MEMBER_KINDS,
    TENSOR_MEMBER_KINDS,
    EnumSpec,
    EnumValue,
    MemberKind,
    MemberSpec,
    OperatorSpec,
)

__all__ = [
    "ARRAY_KINDS",
    "ENUMS",
    "FUSABLE_ACTIVATIONS",
    "MEMBER_KINDS",
    "OPERATORS",
    "TENSOR_MEMBER_KINDS",
    "EnumSpec",
    "EnumValue",
    "MemberKind",
    "MemberSpec",
    "OperatorSpec",
    "enum",
    "operator",
    "page_facts",
]

_BY_NAME: dict[str, OperatorSpec] = {n: op for op in OPERATORS for n in (op.name, *op.aliases)}
_BY_VALUE: dict[int, OperatorSpec] = {op.value: op for op in OPERATORS}
_ENUMS: dict[str, EnumSpec] = {e.name: e for e in ENUMS}


def operator(key: str | int) -> OperatorSpec:
    """The row of ``"DML_OPERATOR_SLICE1"``, ``"SLICE1"`` (exact spelling, as DxDispatch) or 111.

    Aliases resolve to their operator (``"SCATTER"`` is SCATTER_ELEMENTS). KeyError otherwise.
    """
    if isinstance(key, int):
        return _BY_VALUE[key]
    found = _BY_NAME.get(key.removeprefix("DML_OPERATOR_"))
    if found is None:
        raise KeyError(f"'{key}' is not a recognized value for DML_OPERATOR_TYPE.")
    return found


def enum(name: str) -> EnumSpec:
    """The DML enumeration called ``name`` (``"DML_PADDING_MODE"``)."""
    return _ENUMS[name]
