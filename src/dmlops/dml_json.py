"""Readers for DxDispatch's JSON spelling of DML struct fields.

Each raises :class:`DescParseError` with DxDispatch's own wording
(``Error parsing field 'X': Expected an unsigned integer.``) so that messages from
dmlops read like the ones DirectML users already know.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from .enums import DmlEnum, TensorFlags
from .errors import DescParseError, UnknownFieldWarning

_E = TypeVar("_E", bound=DmlEnum)

_FLOAT_STRINGS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "+inf": math.inf}


def is_uint(v: Any) -> bool:
    """JSON unsigned integer (bools are not integers here)."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def is_int(v: Any) -> bool:
    """JSON integer of either sign."""
    return isinstance(v, int) and not isinstance(v, bool)


def as_float(v: Any) -> float | None:
    """A JSON number or one of the strings "nan", "inf", "-inf"; None otherwise."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        return _FLOAT_STRINGS.get(v.strip().lower())
    return None


def require(obj: Mapping[str, Any], name: str) -> Any:
    """The field's value, or DxDispatch's "Field 'X' is required." error."""
    if name not in obj:
        raise DescParseError(f"Field '{name}' is required.", member=name)
    return obj[name]


def parse_uint(obj: Mapping[str, Any], name: str) -> int:
    """A required UINT field."""
    v = require(obj, name)
    if not is_uint(v) or v > 0xFFFFFFFF:
        raise DescParseError(f"Error parsing field '{name}': Expected an unsigned integer.", member=name)
    return int(v)


def parse_float(obj: Mapping[str, Any], name: str) -> float:
    """A required FLOAT field (numbers or "nan"/"inf"/"-inf")."""
    f = as_float(require(obj, name))
    if f is None:
        raise DescParseError(f"Error parsing field '{name}': Expected a float.", member=name)
    return f


def parse_bool(obj: Mapping[str, Any], name: str) -> bool:
    """A required BOOL field (JSON true/false only, as DxDispatch)."""
    v = require(obj, name)
    if not isinstance(v, bool):
        raise DescParseError(f"Error parsing field '{name}': Expected a bool.", member=name)
    return v


def parse_uint_array(obj: Mapping[str, Any], name: str, *, required: bool = True) -> tuple[int, ...] | None:
    """A UINT array field; None when optional and absent (or null)."""
    if obj.get(name) is None:
        if required:
            raise DescParseError(f"Field '{name}' is required.", member=name)
        return None
    v = obj[name]
    if not isinstance(v, list) or not all(is_uint(x) and x <= 0xFFFFFFFF for x in v):
        raise DescParseError(f"Error parsing field '{name}': Expected an array of unsigned integers.", member=name)
    return tuple(int(x) for x in v)


def parse_int_array(obj: Mapping[str, Any], name: str) -> tuple[int, ...]:
    """A required INT array field (negative values allowed)."""
    v = require(obj, name)
    if not isinstance(v, list) or not all(is_int(x) and -(2**31) <= x < 2**31 for x in v):
        raise DescParseError(f"Error parsing field '{name}': Expected an array of integers.", member=name)
    return tuple(int(x) for x in v)


def parse_float_array(obj: Mapping[str, Any], name: str) -> tuple[float, ...]:
    """A required FLOAT array field."""
    v = require(obj, name)
    values = [as_float(x) for x in v] if isinstance(v, list) else None
    if values is None or any(x is None for x in values):
        raise DescParseError(f"Error parsing field '{name}': Expected an array of floats.", member=name)
    return tuple(float(x) for x in values if x is not None)


def parse_enum(obj: Mapping[str, Any], name: str, enum_cls: type[_E], *, required: bool = True) -> Any:
    """An enum field written as its full or short DML name."""
    if name not in obj:
        if required:
            raise DescParseError(f"Field '{name}' is required.", member=name)
        return None
    v = obj[name]
    if not isinstance(v, str):
        raise DescParseError(f"Error parsing field '{name}': Expected a string.", member=name)
    try:
        return enum_cls.from_any(v)
    except ValueError as exc:
        raise DescParseError(f"Error parsing field '{name}': {exc}", member=name) from None


def parse_flags(obj: Mapping[str, Any]) -> TensorFlags:
    """DML_TENSOR_FLAGS: one name or an array of names OR-ed together."""
    if "Flags" not in obj:
        return TensorFlags.NONE
    v = obj["Flags"]
    names = v if isinstance(v, list) else [v]
    bits = 0
    for name in names:
        if not isinstance(name, str):
            raise DescParseError(
                "Error parsing field 'Flags': Expected a string or an array of strings.",
                member="Flags",
            )
        try:
            bits |= TensorFlags.from_any(name)
        except ValueError as exc:
            raise DescParseError(f"Error parsing field 'Flags': {exc}", member="Flags") from None
    return TensorFlags(bits)


def warn_unknown_fields(obj: Mapping[str, Any], known: Iterable[str], where: str) -> list[str]:
    """Warn (UnknownFieldWarning) about fields DxDispatch's parser would silently ignore."""
    unknown = sorted(set(obj) - set(known))
    if unknown:
        names = ", ".join(f"'{u}'" for u in unknown)
        warnings.warn(f"{where}: unknown field(s) {names} ignored", UnknownFieldWarning, stacklevel=3)
    return unknown
