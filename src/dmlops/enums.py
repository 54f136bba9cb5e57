"""DirectML enumerations, with the values of ``DirectML.h``.

Every enum accepts the full DML name (``"DML_INTERPOLATION_MODE_LINEAR"``), the
short name (``"LINEAR"``), the integer value or the member through
:meth:`DmlEnum.from_any`; ``str()`` gives the full DML name.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from .errors import UnknownEnumValueError, UnknownFeatureLevelError

_E = TypeVar("_E", bound="DmlEnum")
_T = TypeVar("_T", bound=type)

# enum class -> (member prefix, DML type name); kept outside the classes because
# every attribute of an Enum body would become a member.
_NAMES: dict[type, tuple[str, str]] = {}


def _dml_names(prefix: str, type_name: str) -> Callable[[_T], _T]:
    def register(cls: _T) -> _T:
        _NAMES[cls] = (prefix, type_name)
        return cls

    return register


def _prefix(cls: type) -> str:
    return _NAMES[cls][0]


def _type_name(cls: type) -> str:
    return _NAMES[cls][1]


class DmlEnum(enum.IntEnum):
    """An IntEnum whose members print as their DirectML.h names."""

    def __str__(self) -> str:
        return f"{_prefix(type(self))}{self._short_name()}"

    def _short_name(self) -> str:
        return self.name

    @classmethod
    def from_any(cls: type[_E], value: Any) -> _E:
        """Return the member for a member, an int value, a full or a short DML name.

        Names are matched case-insensitively. Anything else raises
        :class:`~dmlops.errors.UnknownEnumValueError` (a ``ValueError``) with DxDispatch's
        wording.
        """
        if isinstance(value, cls):
            return value
        if isinstance(value, bool):
            raise cls._unknown(f"{value!r} is not a recognized value for {_type_name(cls)}.")
        if isinstance(value, (int, np.integer)):
            try:
                return cls(int(value))
            except ValueError:
                raise cls._unknown(f"{int(value)} is not a recognized value for {_type_name(cls)}.") from None
        if isinstance(value, str):
            found = cls._by_name().get(value.upper())
            if found is not None:
                return found
        raise cls._unknown(f"'{value}' is not a recognized value for {_type_name(cls)}.")

    @classmethod
    def _unknown(cls, message: str) -> UnknownEnumValueError:
        return UnknownEnumValueError(message)

    @classmethod
    def _by_name(cls: type[_E]) -> dict[str, _E]:
        names: dict[str, _E] = {}
        for member in cls:
            short = member._short_name()
            names[short.upper()] = member
            names[f"{_prefix(cls)}{short}".upper()] = member
            names[member.name.upper()] = member
        return names


@_dml_names("DML_TENSOR_DATA_TYPE_", "DML_TENSOR_DATA_TYPE")
class TensorDataType(DmlEnum):
    """DML_TENSOR_DATA_TYPE."""

    UNKNOWN = 0
    FLOAT32 = 1
    FLOAT16 = 2
    UINT32 = 3
    UINT16 = 4
    UINT8 = 5
    INT32 = 6
    INT16 = 7
    INT8 = 8
    FLOAT64 = 9
    UINT64 = 10
    INT64 = 11
    UINT4 = 12
    INT4 = 13

    @property
    def size_in_bits(self) -> int:
        """Bits per element (4 for the packed 4-bit types, 0 for UNKNOWN)."""
        return _BITS[self]

    @property
    def is_4bit(self) -> bool:
        """True for UINT4/INT4, which dmlops does not support."""
        return self in (TensorDataType.UINT4, TensorDataType.INT4)

    @property
    def is_float(self) -> bool:
        """True for FLOAT16/32/64."""
        return self in FLOAT_TYPES

    @property
    def is_signed_integer(self) -> bool:
        """True for INT8/16/32/64 (and INT4)."""
        return self in (
            TensorDataType.INT8,
            TensorDataType.INT16,
            TensorDataType.INT32,
            TensorDataType.INT64,
            TensorDataType.INT4,
        )

    @property
    def numpy_dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of one element.

        Raises ``UnsupportedError`` for the 4-bit types and ``ValueError`` for UNKNOWN.
        """
        from .errors import UnsupportedError

        if self.is_4bit:
            raise UnsupportedError(f"{self} is not supported by dmlops (4-bit data types)")
        if self is TensorDataType.UNKNOWN:
            raise ValueError("DML_TENSOR_DATA_TYPE_UNKNOWN has no element type")
        return np.dtype(_NUMPY[self])

    @classmethod
    def from_numpy(cls, dtype: Any) -> TensorDataType:
        """The DML data type of a NumPy dtype (or anything ``np.dtype`` accepts)."""
        dt = np.dtype(dtype)
        for member, name in _NUMPY.items():
            if np.dtype(name) == dt:
                return member
        raise ValueError(f"no DML_TENSOR_DATA_TYPE for NumPy dtype {dt}")


_BITS = {
    TensorDataType.UNKNOWN: 0,
    TensorDataType.FLOAT32: 32,
    TensorDataType.FLOAT16: 16,
    TensorDataType.UINT32: 32,
    TensorDataType.UINT16: 16,
    TensorDataType.UINT8: 8,
    TensorDataType.INT32: 32,
    TensorDataType.INT16: 16,
    TensorDataType.INT8: 8,
    TensorDataType.FLOAT64: 64,
    TensorDataType.UINT64: 64,
    TensorDataType.INT64: 64,
    TensorDataType.UINT4: 4,
    TensorDataType.INT4: 4,
}

# Explicit little-endian: DirectML buffers are little-endian on every platform.
_NUMPY = {
    TensorDataType.FLOAT32: "<f4",
    TensorDataType.FLOAT16: "<f2",
    TensorDataType.UINT32: "<u4",
    TensorDataType.UINT16: "<u2",
    TensorDataType.UINT8: "u1",
    TensorDataType.INT32: "<i4",
    TensorDataType.INT16: "<i2",
    TensorDataType.INT8: "i1",
    TensorDataType.FLOAT64: "<f8",
    TensorDataType.UINT64: "<u8",
    TensorDataType.INT64: "<i8",
}

FLOAT_TYPES = frozenset({TensorDataType.FLOAT16, TensorDataType.FLOAT32, TensorDataType.FLOAT64})
ALL_NUMERIC_TYPES = frozenset(_NUMPY)
"""Every data type dmlops can hold in memory (FLOAT16 .. INT64, no 4-bit)."""


@_dml_names("DML_TENSOR_TYPE_", "DML_TENSOR_TYPE")
class TensorType(DmlEnum):
    """DML_TENSOR_TYPE."""

    INVALID = 0
    BUFFER = 1


@_dml_names("DML_TENSOR_FLAG_", "DML_TENSOR_FLAGS")
class TensorFlags(DmlEnum):
    """DML_TENSOR_FLAGS (OWNED_BY_DML is the only valid bit)."""

    NONE = 0
    OWNED_BY_DML = 1


@_dml_names("DML_INTERPOLATION_MODE_", "DML_INTERPOLATION_MODE")
class InterpolationMode(DmlEnum):
    """DML_INTERPOLATION_MODE."""

    NEAREST_NEIGHBOR = 0
    LINEAR = 1


@_dml_names("DML_AXIS_DIRECTION_", "DML_AXIS_DIRECTION")
class AxisDirection(DmlEnum):
    """DML_AXIS_DIRECTION (RESAMPLE2's RoundingDirection: INCREASING = ceil, DECREASING = floor)."""

    INCREASING = 0
    DECREASING = 1


@_dml_names("DML_REDUCE_FUNCTION_", "DML_REDUCE_FUNCTION")
class ReduceFunction(DmlEnum):
    """DML_REDUCE_FUNCTION."""

    ARGMAX = 0
    ARGMIN = 1
    AVERAGE = 2
    L1 = 3
    L2 = 4
    LOG_SUM = 5
    LOG_SUM_EXP = 6
    MAX = 7
    MIN = 8
    MULTIPLY = 9
    SUM = 10
    SUM_SQUARE = 11


@_dml_names("DML_FEATURE_LEVEL_", "DML_FEATURE_LEVEL")
class FeatureLevel(DmlEnum):
    """DML_FEATURE_LEVEL, ordered: ``FeatureLevel.V3_0 < FeatureLevel.V6_4``.

    Accepts ``"DML_FEATURE_LEVEL_3_0"``, ``"3_0"``, ``"3.0"``, ``"V3_0"`` and ``0x3000``.
    """

    V1_0 = 0x1000
    V2_0 = 0x2000
    V2_1 = 0x2100
    V3_0 = 0x3000
    V3_1 = 0x3100
    V4_0 = 0x4000
    V4_1 = 0x4100
    V5_0 = 0x5000
    V5_1 = 0x5100
    V5_2 = 0x5200
    V6_0 = 0x6000
    V6_1 = 0x6100
    V6_2 = 0x6200
    V6_3 = 0x6300
    V6_4 = 0x6400

    def _short_name(self) -> str:
        return self.name[1:]

    @classmethod
    def from_any(cls, value: Any) -> FeatureLevel:
        """As :meth:`DmlEnum.from_any`, also accepting ``"6.4"`` and ``"6_4"``.

        Anything else (``"9_9"``, ``3.5``, ``None``, other objects) raises
        :class:`~dmlops.errors.UnknownFeatureLevelError`, which lists the known levels.
        A float is refused even when it looks like a level: ``5.1`` cannot tell 5_1 from 5_10.
        """
        if isinstance(value, str):
            value = value.strip().replace(".", "_")
        return super().from_any(value)

    @classmethod
    def _unknown(cls, message: str) -> UnknownEnumValueError:
        known = ", ".join(level._short_name() for level in cls)
        return UnknownFeatureLevelError(f"{message.rstrip('.')} (known feature levels: {known}).")

    @classmethod
    def latest(cls) -> FeatureLevel:
        """The newest feature level dmlops knows (the default for validation)."""
        return _LATEST_LEVEL


_LATEST_LEVEL = max(FeatureLevel)  # once: FeatureLevel.latest() runs on every execute


@_dml_names("DML_OPERATOR_", "DML_OPERATOR_TYPE")
class OperatorType(DmlEnum):
    """DML_OPERATOR_TYPE values of the operators dmlops knows about."""

    MAX_POOLING = 58
    SLICE = 60
    UPSAMPLE_2D = 66
    GATHER = 67
    MAX_POOLING1 = 91
    MAX_UNPOOLING = 92
    RESAMPLE = 96
    GATHER_ELEMENTS = 107
    GATHER_ND = 108
    MAX_POOLING2 = 110
    SLICE1 = 111
    RESAMPLE1 = 116
    MAX_POOLING_GRAD = 131
    RESAMPLE_GRAD = 134
    SLICE_GRAD = 135
    ROI_ALIGN = 139
    GATHER_ND1 = 140
    ROI_ALIGN1 = 149
    ROI_ALIGN_GRAD = 150
    RESAMPLE2 = 161
    RESAMPLE_GRAD1 = 162
    RESAMPLE3 = 175
