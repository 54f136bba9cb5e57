"""Generic descs: one OperatorDesc subclass per catalogue row, built from its members.

Every DML_OPERATOR_TYPE without a hand-written desc class (``descs/__init__.py``'s
``REGISTRY``) gets a frozen dataclass made from its catalogue row
(:mod:`dmlops.catalogue`): one field per struct member in DirectML.h's order (count
members are derived from their arrays, as in the hand-written classes), named by the
house rule (``ATensor`` -> ``a_tensor``). The class is made on first use and cached.

It reads every member kind in the spellings of DxDispatch's JSON parser:

==================== ==================================================================
kind                 JSON
==================== ==================================================================
input, output        a tensor desc object; optional ones may be left out or null
input_array, ...     a JSON array of tensor desc objects (``Name[i]`` as bind points)
scale_bias           ``{"Scale": s, "Bias": b}``; may be left out
size_2d              ``{"Width": w, "Height": h}``
scalar_union         a number, or ``{"Float32": v}`` / ``{"UInt16": bits}`` ... named after
                     the union member of its data-type member (``ValueDataType``)
operator_desc        ``{"Type": "ACTIVATION_RELU", "Desc": {...}}`` or the members inline
                     beside ``Type``; parsed as a fused activation (its tensors NULL);
                     may be left out
operator_desc_array  a JSON array of those
==================== ==================================================================

Validation checks the structure: the operator's feature level (and the feature level
of each enum value and nested operator), every tensor desc by the
DML_BUFFER_TENSOR_DESC rules every desc shares, member types and ranges, count
members against their arrays, and a FusedActivation naming a fusable activation. It
also checks the facts of the operator's page (:mod:`dmlops.catalogue.page_facts`):
each tensor's data type and dimension count against the page's "Tensor support" table
of the highest feature level at or below the requested one, and the page's "must have
the same DataType / DimensionCount / Sizes" constraints, corrected where DirectML
1.15.4 disagrees with the page. Rules of an operator's own (axis ranges, output-size
formulas) are not checked yet: DirectML's CreateOperator (the ``directml`` backend)
is the judge of those until each family gets its own desc rules.

Examples
--------
>>> from dmlops.descs import desc_from_json
>>> add = desc_from_json("DML_OPERATOR_ELEMENT_WISE_ADD1", {
...     "ATensor": {"DataType": "FLOAT32", "Sizes": [3]},
...     "BTensor": {"DataType": "FLOAT32", "Sizes": [3]},
...     "OutputTensor": {"DataType": "FLOAT32", "Sizes": [3]},
...     "FusedActivation": {"Type": "ACTIVATION_ELU", "Alpha": 0.5}})
>>> type(add).__name__, add.fused_activation.alpha
('ElementWiseAdd1Desc', 0.5)
>>> add.validate("2_0"); add.to_dml_dict()["FusedActivation"]
{'Type': 'DML_OPERATOR_ACTIVATION_ELU', 'Desc': {'Alpha': 0.5}}
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np

from .. import catalogue, dml_json
from ..catalogue import FUSABLE_ACTIVATIONS, MemberSpec, OperatorSpec, page_facts
from ..enums import AxisDirection, DmlEnum, FeatureLevel, InterpolationMode, ReduceFunction, TensorDataType, _dml_names
from ..errors import DescParseError, InvalidDescError
from ..tensor import TensorDesc, check_member_names
from ._base import TENSOR_KINDS, MemberInfo, OperatorDesc, SupportTable, TensorSupport, _json_float

TENSOR_ARRAY_KINDS = ("input_array", "output_array")


class ScaleBias(NamedTuple):
    """DML_SCALE_BIAS."""

    scale: float
    bias: float


class Size2D(NamedTuple):
    """DML_SIZE_2D."""

    width: int
    height: int


class _Required:
    """The default of a member that must be given (so the error names STRUCT.Member)."""

    def __repr__(self) -> str:
        return "<required>"


REQUIRED: Any = _Required()

# -- enums -----------------------------------------------------------------------------------

_KNOWN_ENUMS: dict[str, type[DmlEnum]] = {
    "DML_TENSOR_DATA_TYPE": TensorDataType,
    "DML_INTERPOLATION_MODE": InterpolationMode,
    "DML_AXIS_DIRECTION": AxisDirection,
    "DML_REDUCE_FUNCTION": ReduceFunction,
}
_ENUMS: dict[str, type[DmlEnum]] = {}


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def enum_class(name: str) -> type[DmlEnum]:
    """The DmlEnum of a DML enumeration: dmlops's own where it has one, else one made from the catalogue."""
    cls = _KNOWN_ENUMS.get(name) or _ENUMS.get(name)
    if cls is None:
        spec = catalogue.enum(name)
        made: Any = DmlEnum(_camel(name.removeprefix("DML_")), [(v.name, v.value) for v in spec.values])  # type: ignore[call-arg, arg-type]
        made.__module__ = __name__
        cls = _ENUMS[name] = _dml_names(spec.prefix, spec.name)(made)
    return cls


def _operator_types() -> type[DmlEnum]:
    members = [(op.name, op.value) for op in catalogue.OPERATORS]
    made: Any = DmlEnum("CatalogueOperatorType", members)  # type: ignore[call-arg, arg-type]
    made.__module__ = __name__
    return _dml_names("DML_OPERATOR_", "DML_OPERATOR_TYPE")(made)


CatalogueOperatorType = _operator_types()
"""Every DML_OPERATOR_TYPE of the catalogue (``enums.OperatorType`` holds only a few)."""

_ENUM_VALUE_LEVELS: dict[tuple[str, int], FeatureLevel] = {
    (e.name, v.value): v.feature_level for e in catalogue.ENUMS for v in e.values if v.feature_level is not None
}

# -- scalar unions ---------------------------------------------------------------------------

_UNION_FIELDS = {
    TensorDataType.FLOAT16: "UInt16",
    TensorDataType.FLOAT32: "Float32",
    TensorDataType.FLOAT64: "Float64",
    TensorDataType.UINT8: "UInt8",
    TensorDataType.UINT16: "UInt16",
    TensorDataType.UINT32: "UInt32",
    TensorDataType.UINT64: "UInt64",
    TensorDataType.INT8: "Int8",
    TensorDataType.INT16: "Int16",
    TensorDataType.INT32: "Int32",
    TensorDataType.INT64: "Int64",
}
"""DML_SCALAR_UNION member DxDispatch reads for each data type (FLOAT16 as its bits)."""


def _snake(name: str) -> str:
    """PascalCase DML member name -> snake_case attribute (``ROITensor`` -> ``roi_tensor``)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


# -- the base of generic descs ---------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GenericDesc(OperatorDesc):
    """Base of the descs made from catalogue rows (see the module docstring).

    ``fused`` marks a desc nested as a FusedActivation or an RNN activation: its tensor
    members are NULL, as DirectML requires there.
    """

    spec: ClassVar[OperatorSpec]
    """The catalogue row the class was made from."""
    backends: ClassVar[tuple[str, ...]] = ("directml",)

    fused: bool = dataclasses.field(default=False, repr=False)

    # -- members ------------------------------------------------------------------------------

    @classmethod
    def dml_member_names(cls) -> tuple[str, ...]:
        """Every member in DirectML.h's order, count members included (the catalogue row's)."""
        return cls.spec.member_names()

    @classmethod
    def tensor_members(cls, kind: Literal["input", "output"]) -> tuple[str, ...]:
        """DML names of the tensor members of ``kind``, tensor arrays included (by their name)."""
        return tuple(i.dml_name for i in cls.member_infos() if i.kind in (kind, f"{kind}_array"))

    def tensor_slots(self, kind: Literal["input", "output"]) -> tuple[str, ...]:
        """Binding order: tensor arrays expanded to ``Name[i]``, NULL optional members included."""
        slots: list[str] = []
        for info in self.member_infos():
            if info.kind == kind:
                slots.append(info.dml_name)
            elif info.kind == f"{kind}_array":
                slots.extend(f"{info.dml_name}[{i}]" for i in range(len(getattr(self, info.attr))))
        return tuple(slots)

    def tensors(self, kind: Literal["input", "output"] | None = None) -> dict[str, TensorDesc]:
        """Bound tensors by DML name, the elements of tensor arrays as ``Name[i]``."""
        by_kind: dict[str | None, dict[str, TensorDesc]] | None = self.__dict__.get("_tensors")
        if by_kind is None:
            by_kind = {None: {}, "input": {}, "output": {}}
            for info in self.member_infos():
                value = getattr(self, info.attr)
                if info.kind in TENSOR_KINDS and value is not None:
                    named = [(info.dml_name, value)]
                elif info.kind in TENSOR_ARRAY_KINDS:
                    named = [(f"{info.dml_name}[{i}]", t) for i, t in enumerate(value)]
                else:
                    continue
                for name, tensor in named:
                    by_kind[None][name] = tensor
                    by_kind[info.kind.removesuffix("_array")][name] = tensor
            object.__setattr__(self, "_tensors", by_kind)
        return dict(by_kind[kind])

    # -- construction (Python API) ---------------------------------------------------------------

    def _coerce(self, info: MemberInfo, value: Any) -> Any:
        where = info.dml_name
        kind: str = info.kind
        is_tensor = kind in TENSOR_KINDS or kind in TENSOR_ARRAY_KINDS
        if value is REQUIRED:
            if self.fused and is_tensor:
                return () if kind in TENSOR_ARRAY_KINDS else None
            raise self.type_error(where, "is required", value)
        if self.fused and is_tensor:
            if value is None or (kind in TENSOR_ARRAY_KINDS and not value):
                return () if kind in TENSOR_ARRAY_KINDS else None
            raise self.type_error(where, "must be NULL in a fused activation", value)
        if kind in TENSOR_ARRAY_KINDS:
            items = self._sequence(where, value)
            return tuple(
                super(GenericDesc, self)._coerce(MemberInfo(f"{where}[{i}]", "input"), t) for i, t in enumerate(items)
            )
        if kind == "scale_bias":
            if value is None:
                return None
            scale, bias = self._pair(where, value, ("Scale", "Bias"))
            return ScaleBias(
                self._scalar("float", scale, f"{where}.Scale"), self._scalar("float", bias, f"{where}.Bias")
            )
        if kind == "size_2d":
            width, height = self._pair(where, value, ("Width", "Height"))
            return Size2D(
                self._scalar("uint", width, f"{where}.Width"), self._scalar("uint", height, f"{where}.Height")
            )
        if kind == "scalar_union":
            return self._scalar_union(where, value)
        if kind == "operator_desc":
            return None if value is None else self._nested(where, value)
        if kind == "operator_desc_array":
            return tuple(self._nested(f"{where}[{i}]", v) for i, v in enumerate(self._sequence(where, value)))
        return super()._coerce(info, value)

    def _sequence(self, where: str, value: Any) -> list[Any]:
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise self.type_error(where, "must be a sequence", value)
        return list(value)

    def _pair(self, where: str, value: Any, names: tuple[str, str]) -> tuple[Any, Any]:
        if isinstance(value, Mapping):
            missing = [n for n in names if n not in value]
            if missing:
                raise self.type_error(where, f"must have {names[0]} and {names[1]}", value)
            return value[names[0]], value[names[1]]
        items = self._sequence(where, value)
        if len(items) != 2:
            raise self.type_error(where, f"must be ({names[0]}, {names[1]})", value)
        return items[0], items[1]

    def _scalar_union(self, where: str, value: Any) -> Any:
        data_type_member = self.spec.member(where).data_type or ""
        data_type = getattr(self, _snake(data_type_member))
        if data_type not in _UNION_FIELDS:
            raise self.invalid(data_type_member, "is not a data type a DML_SCALAR_UNION holds", data_type)
        if data_type.is_float:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise self.type_error(where, "must be a number", value)
            # Rounded once to the union member's type, as DirectML reads it.
            return float(np.asarray(value, dtype=np.float64).astype(data_type.numpy_dtype))
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise self.type_error(where, f"must be an integer ({data_type.name})", value)
        info = np.iinfo(data_type.numpy_dtype)
        if not info.min <= int(value) <= info.max:
            raise self.invalid(where, f"must fit {data_type.name} ({info.min} to {info.max})", int(value))
        return int(value)

    def _nested(self, where: str, value: Any) -> GenericDesc:
        if isinstance(value, Mapping):
            try:
                return parse_operator_desc(value)
            except DescParseError as exc:
                raise self.parse_error(f"Error parsing field '{where}': {exc.detail}", where) from None
        if not isinstance(value, GenericDesc) or not value.fused:
            raise self.type_error(
                where, "must be a fused operator desc (e.g. generic_desc_class('ACTIVATION_RELU')(fused=True))", value
            )
        return value

    # -- validation ---------------------------------------------------------------------------------

    def _validate(self, level: FeatureLevel) -> None:
        """The page's same-attribute constraints, enum value levels and nested operators."""
        if not self.fused:
            self._check_function_support(level)
            for members, attributes in page_facts.same_rules(self.spec.name):
                expanded = [slot for m in members for slot in self._slots(m)]
                for attribute in attributes:
                    self.require_same(attribute, *expanded)  # type: ignore[arg-type]
            # the operator's own rules (axis ranges, output sizes): its family module's
            # validate_generic(desc, level), where it has one
            if self.family:
                family = importlib.import_module(f"{__package__}.{self.family}")
                family_rules = getattr(family, "validate_generic", None)
                if family_rules is not None:
                    family_rules(self, level)
        for info in self.member_infos():
            value = getattr(self, info.attr)
            if info.kind == "enum":
                spec = self.spec.member(info.dml_name)
                introduced = _ENUM_VALUE_LEVELS.get((spec.enum or "", int(value)))
                if introduced is not None and introduced > level:
                    raise self.invalid(
                        info.dml_name, f"{value} was introduced in {introduced}; not available at {level}", value
                    )
            elif info.kind == "operator_desc" and value is not None:
                if value.spec.name not in FUSABLE_ACTIVATIONS:
                    fusable = ", ".join(FUSABLE_ACTIVATIONS)
                    raise self.invalid(
                        info.dml_name, f"must be one of the fusable activations ({fusable})", value.spec.dml_name
                    )
                self._validate_nested(info.dml_name, value, level)
            elif info.kind == "operator_desc_array":
                for i, nested in enumerate(value):
                    if not nested.spec.name.startswith("ACTIVATION_"):
                        raise self.invalid(
                            f"{info.dml_name}[{i}]", "must be an activation operator", nested.spec.dml_name
                        )
                    self._validate_nested(f"{info.dml_name}[{i}]", nested, level)

    def _check_function_support(self, level: FeatureLevel) -> None:
        """The data types of the desc's own Function, where the page has a table per function.

        REDUCE: the desc-level row is the union over the functions; each tensor's data type
        must also be in its Function's row. DirectML 1.15.4 agrees with every function's row
        (docs/directml-generic-parity.md).
        """
        function = getattr(self, "function", None)
        if not isinstance(function, DmlEnum):
            return
        tables = page_facts.function_support(self.spec.name, function.name)
        rows = next((rows for at, rows in tables.items() if at <= level), None)  # newest first
        for member, row in (rows or {}).items():
            for slot in self._slots(member):
                data_type = self.tensor(slot).data_type
                if data_type not in row.data_types:
                    allowed = ", ".join(sorted(t.name for t in row.data_types))
                    raise self.invalid(
                        f"{slot}.DataType",
                        f"must be one of {allowed} for Function {function.name} at {level}",
                        data_type,
                    )

    def _slots(self, member: str) -> list[str]:
        """A tensor member's bound names: itself, or ``Name[i]`` for each element of a tensor array."""
        if self.spec.member(member).kind in TENSOR_ARRAY_KINDS:
            return [f"{member}[{i}]" for i in range(len(getattr(self, _snake(member))))]
        return [member]

    def _validate_nested(self, where: str, nested: GenericDesc, level: FeatureLevel) -> None:
        try:
            nested.validate(level)
        except InvalidDescError as exc:
            raise InvalidDescError(f"{self.dml_name}.{where}: {exc}", struct=self.dml_name, member=where) from None

    # -- DxDispatch JSON ------------------------------------------------------------------------------

    @classmethod
    def from_dml_dict(
        cls, desc: Mapping[str, Any], *, require_counts: bool = False, fused: bool = False
    ) -> GenericDesc:
        """Build a desc from DxDispatch's ``desc`` object (see the module docstring for the spellings).

        ``fused``: a nested operator (FusedActivation): its tensor members are not read.
        """
        if not isinstance(desc, Mapping):
            raise cls.parse_error("Expected a JSON object for the operator desc.")
        check_member_names(desc, cls.dml_name)
        known = [m.name for m in cls.spec.members if not (fused and m.kind in (*TENSOR_KINDS, *TENSOR_ARRAY_KINDS))]
        dml_json.warn_unknown_fields(desc, known, cls.dml_name)
        values: dict[str, Any] = {}
        try:
            for m in cls.spec.members:
                if m.kind == "count" or (fused and m.kind in (*TENSOR_KINDS, *TENSOR_ARRAY_KINDS)):
                    continue
                values[m.name] = _read(cls, desc, m, values)
            for count, arrays in cls.spec.count_members().items():
                if count not in desc:
                    if require_counts:
                        raise DescParseError(f"Field '{count}' is required.", member=count)
                    continue
                n = dml_json.parse_uint(desc, count)
                for name in arrays:
                    got = len(values[name])
                    if got != n:
                        raise DescParseError(
                            f"Error parsing field '{name}': {count} is {n} but '{name}' has {got} elements.",
                            member=name,
                        )
        except DescParseError as exc:
            raise cls.parse_error(exc.detail, exc.member) from None
        attrs = {_snake(name): value for name, value in values.items()}
        return cls(**attrs, fused=fused)

    def to_dml_dict(self) -> dict[str, Any]:
        """DxDispatch's ``desc`` object (round-trips through from_dml_dict)."""
        out: dict[str, Any] = {}
        counts = self.counts()
        for m in self.spec.members:
            if m.kind == "count":
                out[m.name] = counts[m.name]
                continue
            value = getattr(self, _snake(m.name))
            if value is None or (self.fused and m.kind in (*TENSOR_KINDS, *TENSOR_ARRAY_KINDS)):
                continue
            out[m.name] = _to_json(m.kind, value)
        return out


def _to_json(kind: str, value: Any) -> Any:
    if kind in TENSOR_KINDS:
        return value.to_dml_dict()
    if kind in TENSOR_ARRAY_KINDS:
        return [t.to_dml_dict() for t in value]
    if kind == "enum":
        return value.name
    if kind == "float" or (kind == "scalar_union" and isinstance(value, float)):
        return _json_float(value)
    if kind == "float_array":
        return [_json_float(v) for v in value]
    if kind in ("uint_array", "int_array"):
        return list(value)
    if kind == "scale_bias":
        return {"Scale": _json_float(value.scale), "Bias": _json_float(value.bias)}
    if kind == "size_2d":
        return {"Width": value.width, "Height": value.height}
    if kind == "operator_desc":
        return {"Type": value.spec.dml_name, "Desc": value.to_dml_dict()}
    if kind == "operator_desc_array":
        return [_to_json("operator_desc", v) for v in value]
    return value


# -- reading members -----------------------------------------------------------------------------


def _wrap(name: str, exc: DescParseError) -> DescParseError:
    return DescParseError(f"Error parsing field '{name}': {exc.detail}", member=name)


def _tensor(name: str, value: Any) -> TensorDesc:
    try:
        return TensorDesc.from_dml_dict(value)
    except DescParseError as exc:
        raise _wrap(name, exc) from None
    except InvalidDescError as exc:
        raise DescParseError(f"Error parsing field '{name}': {exc}", member=name) from None


def _object(name: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DescParseError(f"Error parsing field '{name}': Expected a non-null JSON object.", member=name)
    return value


def _array(name: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise DescParseError(f"Error parsing field '{name}': Expected an array.", member=name)
    return value


def _read(cls: type[GenericDesc], desc: Mapping[str, Any], m: MemberSpec, values: Mapping[str, Any]) -> Any:
    name = m.name
    if m.optional and desc.get(name) is None:
        return None
    if m.kind in TENSOR_KINDS:
        return _tensor(name, dml_json.require(desc, name))
    if m.kind in TENSOR_ARRAY_KINDS:
        items = _array(name, dml_json.require(desc, name))
        return tuple(_tensor(f"{name}[{i}]", t) for i, t in enumerate(items))
    try:
        if m.kind == "scale_bias":
            obj = _object(name, desc[name])
            return ScaleBias(dml_json.parse_float(obj, "Scale"), dml_json.parse_float(obj, "Bias"))
        if m.kind == "size_2d":
            obj = _object(name, dml_json.require(desc, name))
            return Size2D(dml_json.parse_uint(obj, "Width"), dml_json.parse_uint(obj, "Height"))
        if m.kind == "scalar_union":
            return _read_scalar_union(desc, name, values[m.data_type or ""])
    except DescParseError as exc:
        if exc.member == name:
            raise
        raise _wrap(name, exc) from None
    if m.kind == "operator_desc":
        try:
            return parse_operator_desc(desc[name])
        except DescParseError as exc:
            raise _wrap(name, exc) from None
    if m.kind == "operator_desc_array":
        items = _array(name, dml_json.require(desc, name))
        parsed = []
        for i, item in enumerate(items):
            try:
                parsed.append(parse_operator_desc(item))
            except DescParseError as exc:
                raise _wrap(f"{name}[{i}]", exc) from None
        return tuple(parsed)
    info = MemberInfo(name, m.kind, optional=m.optional, enum=enum_class(m.enum) if m.enum else None)  # type: ignore[arg-type]
    return OperatorDesc._read_member(desc, info)


def _read_scalar_union(desc: Mapping[str, Any], name: str, data_type: TensorDataType) -> Any:
    value = dml_json.require(desc, name)
    field = _UNION_FIELDS.get(data_type)
    if field is None:
        raise DescParseError(
            f"Error parsing field '{name}': Data type not supported for DML_SCALAR_UNION.", member=name
        )
    if isinstance(value, Mapping):
        if data_type is TensorDataType.FLOAT16:  # {"UInt16": bits}
            bits = dml_json.parse_uint(value, field)
            if bits > 0xFFFF:
                raise DescParseError(
                    f"Error parsing field '{field}': Expected a 16-bit unsigned integer.", member=field
                )
            return float(np.array(bits, dtype=np.uint16).view(np.float16))
        if data_type.is_float:
            return dml_json.parse_float(value, field)
        value = dml_json.require(value, field)
    elif data_type.is_float:
        number = dml_json.as_float(value)
        if number is None:
            raise DescParseError(
                f"Error parsing field '{name}': Expected a non-null JSON object or number.", member=name
            )
        return number
    if not dml_json.is_int(value):
        raise DescParseError(f"Error parsing field '{name}': Expected an integer.", member=name)
    info = np.iinfo(data_type.numpy_dtype)
    if not info.min <= value <= info.max:
        raise DescParseError(f"Error parsing field '{name}': Expected a {data_type.name} value.", member=name)
    return int(value)


def parse_operator_desc(value: Any) -> GenericDesc:
    """A nested DML_OPERATOR_DESC as DxDispatch reads one (fused: its tensors NULL).

    ``{"Type": "ACTIVATION_RELU", "Desc": {...}}``, ``{"type": ..., "desc": ...}``, or the
    members beside ``Type``.
    """
    if not isinstance(value, Mapping):
        raise DescParseError("Expected a non-null JSON object.")
    type_key = "Type" if "Type" in value else "type"
    if type_key not in value:
        raise DescParseError("Expected a member 'Type' with the operator type.")
    op_type = value[type_key]
    if not isinstance(op_type, str):
        raise DescParseError("The member 'Type' must be a string.")
    try:
        cls = generic_desc_class(op_type)
    except KeyError as exc:
        raise DescParseError(str(exc).strip("\"'")) from None
    desc_key = "Desc" if "Desc" in value else "desc" if "desc" in value else None
    body = value[desc_key] if desc_key else {k: v for k, v in value.items() if k != type_key}
    try:
        return cls.from_dml_dict(body, fused=True)
    except DescParseError as exc:
        raise DescParseError(f"{op_type}: {exc.detail}", member=exc.member) from None


# -- the classes -------------------------------------------------------------------------------------

_CLASSES: dict[str, type[GenericDesc]] = {}
_RESERVED = {f.name for f in dataclasses.fields(GenericDesc)} | set(dir(GenericDesc))


def generic_desc_class(operator_type: str) -> type[GenericDesc]:
    """The generic desc class of a catalogued operator (``"DML_OPERATOR_GEMM"`` or ``"GEMM"``), cached.

    KeyError (DxDispatch's wording) for names that are not DML_OPERATOR_TYPEs.
    """
    spec = catalogue.operator(operator_type)
    cls = _CLASSES.get(spec.name)
    if cls is None:
        cls = _CLASSES[spec.name] = _make_class(spec)
    return cls


class _LevelSupport(dict[str, TensorSupport]):
    """One level's support rows by member; ``Name[i]`` of a tensor array reads ``Name``'s row."""

    def get(self, key: str, default: Any = None) -> Any:
        """The row of ``key``, or of the tensor array ``key`` is an element of."""
        if key in self:
            return self[key]
        return super().get(key.split("[", 1)[0], default)


def _support_table(spec: OperatorSpec) -> SupportTable:
    table: dict[FeatureLevel, _LevelSupport] = {}
    for level, rows in page_facts.support(spec.name).items():
        table[level] = _LevelSupport(
            {
                member: TensorSupport(tuple(range(row.dims[0], row.dims[1] + 1)), frozenset(row.data_types))
                for member, row in rows.items()
            }
        )
    return table


def _claimed(name: str) -> tuple[str, tuple[str, ...]] | None:
    """``(family, backends)`` from the family module that claims a catalogue row (``GENERIC_FAMILIES``)."""
    from . import GENERIC_FAMILIES

    for family in GENERIC_FAMILIES:
        found: tuple[str, tuple[str, ...]] | None = importlib.import_module(f"{__package__}.{family}").claim(name)
        if found is not None:
            return found
    return None


def _make_class(spec: OperatorSpec) -> type[GenericDesc]:
    claimed = _claimed(spec.name)
    fields: list[tuple[str, Any, Any]] = []
    for m in spec.members:
        if m.kind == "count":
            continue
        attr = _snake(m.name)
        if attr in _RESERVED:
            raise AssertionError(f"{spec.struct}.{m.name}: attribute {attr!r} clashes with GenericDesc")
        info = MemberInfo(m.name, m.kind, optional=m.optional, enum=enum_class(m.enum) if m.enum else None)
        default = None if m.optional else REQUIRED
        fields.append((attr, Any, dataclasses.field(default=default, metadata={"dml": info})))
    namespace = {
        "dml_name": spec.struct,
        "operator_type": CatalogueOperatorType[spec.name],
        "introduced": spec.feature_level,
        "family": claimed[0] if claimed else "",  # "": directml only, no dmlops family implements it yet
        "count_members": spec.count_members(),
        "spec": spec,
        "support": _support_table(spec),
        **({"backends": claimed[1]} if claimed else {}),
        "__doc__": f"{spec.struct} ({spec.feature_level}), made from the catalogue and its page's facts.",
    }
    cls = dataclasses.make_dataclass(
        _camel(spec.name) + "Desc", fields, bases=(GenericDesc,), namespace=namespace, frozen=True, kw_only=True
    )
    cls.__module__ = __name__
    return cls


__all__ = [
    "REQUIRED",
    "CatalogueOperatorType",
    "GenericDesc",
    "ScaleBias",
    "Size2D",
    "enum_class",
    "generic_desc_class",
    "parse_operator_desc",
]
