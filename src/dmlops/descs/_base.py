"""OperatorDesc: the machinery shared by every DML operator desc mirror.

A desc is a frozen, keyword-only dataclass whose fields follow the DML struct's
member order. Each field carries its DML member name and kind in its metadata
(``tensor_field`` / ``attr_field``), the way DirectML's own DirectMLSchema.h
describes structs. Count members that only size arrays (``DimensionCount``) are not
fields: they are derived from the array lengths, and checked when a desc is read
from DxDispatch JSON.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from .. import dml_json
from ..enums import DmlEnum, FeatureLevel, OperatorType, TensorDataType, TensorFlags
from ..errors import DescParseError, DescTypeError, InvalidDescError
from ..tensor import MAX_ELEMENTS, TensorDesc, check_member_names, overlapping_elements

FieldKind = Literal[
    "input",
    "output",
    "uint",
    "int",
    "float",
    "bool",
    "enum",
    "uint_array",
    "int_array",
    "float_array",
    # the kinds only generic descs (descs/generic.py) have so far
    "input_array",
    "output_array",
    "scale_bias",
    "size_2d",
    "scalar_union",
    "operator_desc",
    "operator_desc_array",
]
TENSOR_KINDS = ("input", "output")
BUFFER_ALIGNMENT = 16
"""Bytes every DirectML buffer tensor is aligned to; a GuaranteedBaseOffsetAlignment below is refused."""


@dataclass(frozen=True)
class MemberInfo:
    """What dmlops knows about one member of a DML struct."""

    dml_name: str
    kind: FieldKind
    attr: str = ""
    optional: bool = False
    enum: type[DmlEnum] | None = None


def tensor_field(dml_name: str, kind: Literal["input", "output"], *, optional: bool = False) -> Any:
    """A ``const DML_TENSOR_DESC*`` member (``optional`` = ``_Maybenull_``)."""
    info = MemberInfo(dml_name, kind, optional=optional)
    if optional:
        return dataclasses.field(default=None, metadata={"dml": info})
    return dataclasses.field(metadata={"dml": info})


def attr_field(
    dml_name: str, kind: FieldKind, *, enum: type[DmlEnum] | None = None, default: Any = dataclasses.MISSING
) -> Any:
    """A scalar, enum or array member."""
    info = MemberInfo(dml_name, kind, enum=enum)
    return dataclasses.field(default=default, metadata={"dml": info})


@dataclass(frozen=True)
class TensorSupport:
    """One row of a page's "Tensor support" table."""

    dimension_counts: tuple[int, ...]
    data_types: frozenset[TensorDataType]

    @staticmethod
    def of(dims: int | tuple[int, int], *types: TensorDataType) -> TensorSupport:
        """``of((1, 8), FLOAT32, ...)`` for "1 to 8"; ``of(4, ...)`` for "4"."""
        lo, hi = (dims, dims) if isinstance(dims, int) else dims
        return TensorSupport(tuple(range(lo, hi + 1)), frozenset(types))


SupportTable = Mapping[FeatureLevel, Mapping[str, TensorSupport]]
"""Feature level -> tensor member -> support; the entry of the highest level <= the
requested one applies, exactly as the pages' "DML_FEATURE_LEVEL_X_Y and above" tables."""


def support_at(table: SupportTable, level: FeatureLevel) -> Mapping[str, TensorSupport] | None:
    """The table that applies at ``level`` (None below the first one)."""
    best = [fl for fl in table if fl <= level]
    return table[max(best)] if best else None


def _names(types: frozenset[TensorDataType]) -> str:
    return ", ".join(t.name for t in sorted(types, key=lambda t: t.name))


_MEMBER_INFOS: dict[type, tuple[MemberInfo, ...]] = {}


Claim = Callable[[str], "tuple[str, tuple[str, ...]] | None"]


def family_claim(family: str, *tiers: tuple[Collection[str], tuple[str, ...]]) -> Claim:
    """A family module's ``claim(operator)``: ``(family, backends)`` of the first tier holding it.

    Each tier is ``(operators, the backends that run them)``; None for an operator of no
    tier. Read by :func:`dmlops.descs.generic.generic_desc_class` when it makes the class.
    """

    def claim(operator: str) -> tuple[str, tuple[str, ...]] | None:
        for operators, backends in tiers:
            if operator in operators:
                return family, backends
        return None

    return claim


def run_as(make: Callable[[Any], Any], run: Callable[..., Any]) -> Callable[..., Any]:
    """A backend's implementation of an operator that runs as another operator's desc.

    ``run(make(desc), inputs, outputs, **options)``, the equivalent desc made once per desc
    (:meth:`OperatorDesc.derived`): e.g. RESAMPLE1 as its RESAMPLE2 equivalent.
    """

    def run_equivalent(desc: Any, inputs: Any, outputs: Any, **options: Any) -> Any:
        return run(desc.derived(make), inputs, outputs, **options)

    run_equivalent.__doc__ = f"{make.__name__} of the desc, run by {run.__name__}."
    return run_equivalent


@dataclass(frozen=True, kw_only=True)
class OperatorDesc:
    """Base of every operator desc. Subclasses are frozen keyword-only dataclasses."""

    dml_name: ClassVar[str]
    """The struct name, e.g. ``DML_SLICE1_OPERATOR_DESC``."""
    operator_type: ClassVar[OperatorType]
    """The DML_OPERATOR_TYPE, e.g. ``OperatorType.SLICE1``."""
    introduced: ClassVar[FeatureLevel]
    """The feature level that introduced the operator."""
    family: ClassVar[str]
    """The operator's family: basename of the module that implements it in every layer
    (``descs/``, ``reference/``, ``cpu/``, ``cuda/``, ``ops/``), e.g. ``"data_movement"``
    for SLICE1; ``""`` for a generic desc, which no family implements yet."""
    count_members: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """Count members and the array members they size, e.g. DimensionCount."""
    support: ClassVar[SupportTable] = {}
    """The page's tensor-support tables."""
    backends: ClassVar[tuple[str, ...]] = ("numpy", "cpu", "cuda", "directml")
    """The backends that implement the operator (a generic desc: directml only)."""

    # -- construction -----------------------------------------------------------

    def __post_init__(self) -> None:
        for info in self.member_infos():
            value = getattr(self, info.attr)
            object.__setattr__(self, info.attr, self._coerce(info, value))

    def _coerce(self, info: MemberInfo, value: Any) -> Any:
        where = info.dml_name
        if info.kind in TENSOR_KINDS:
            if value is None and info.optional:
                return None
            if isinstance(value, Mapping):
                try:
                    return TensorDesc.from_dml_dict(value)
                except DescParseError as exc:
                    raise self.parse_error(f"Error parsing field '{where}': {exc.detail}", where) from None
            if not isinstance(value, TensorDesc):
                raise self.type_error(where, "must be a TensorDesc (or a DxDispatch tensor dict)", value)
            return value
        if info.kind == "enum":
            assert info.enum is not None
            try:
                return info.enum.from_any(value)
            except ValueError as exc:
                if isinstance(value, (str, int, np.integer, DmlEnum)):
                    raise self.invalid(where, str(exc).rstrip("."), value) from None
                raise self.type_error(where, str(exc).rstrip("."), value) from None
        if info.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise self.type_error(where, "must be a bool", value)
            return bool(value)
        if info.kind in ("uint", "int", "float"):
            return self._scalar(info.kind, value, where)
        # arrays
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise self.type_error(where, "must be a sequence", value)
        elem_kind = info.kind.removesuffix("_array")
        return tuple(self._scalar(elem_kind, v, f"{where}[{i}]") for i, v in enumerate(value))

    def _scalar(self, kind: str, value: Any, where: str) -> Any:
        if kind == "float":
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise self.type_error(where, "must be a number", value)
            # DML FLOAT members are 32-bit: round once, as DirectML would read them.
            return float(np.float32(value))
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise self.type_error(where, f"must be an {'unsigned ' if kind == 'uint' else ''}integer", value)
        value = int(value)
        if kind == "uint" and not 0 <= value <= 0xFFFFFFFF:
            raise self.invalid(where, "must be an unsigned 32-bit integer", value)
        if kind == "int" and not -(2**31) <= value < 2**31:
            raise self.invalid(where, "must be a signed 32-bit integer", value)
        return value

    # -- introspection ------------------------------------------------------------

    @classmethod
    def member_infos(cls) -> tuple[MemberInfo, ...]:
        """The dataclass-backed members, in struct order (count members excluded)."""
        cached = _MEMBER_INFOS.get(cls)
        if cached is None:
            cached = tuple(
                dataclasses.replace(f.metadata["dml"], attr=f.name)
                for f in dataclasses.fields(cls)
                if "dml" in f.metadata
            )
            _MEMBER_INFOS[cls] = cached
        return cached

    @classmethod
    def dml_member_names(cls) -> tuple[str, ...]:
        """Every member of the DML struct in ABI order, count members included."""
        names: list[str] = []
        counted = {arr: count for count, arrays in cls.count_members.items() for arr in arrays}
        for info in cls.member_infos():
            count = counted.get(info.dml_name)
            if count is not None and count not in names:
                names.append(count)
            names.append(info.dml_name)
        return tuple(names)

    @classmethod
    def tensor_members(cls, kind: Literal["input", "output"]) -> tuple[str, ...]:
        """DML names of the input (or output) tensor members, optional ones included."""
        return tuple(i.dml_name for i in cls.member_infos() if i.kind == kind)

    def tensor_slots(self, kind: Literal["input", "output"]) -> tuple[str, ...]:
        """The binding order of ``kind``: every tensor member, NULL optional ones included.

        The same as :meth:`tensor_members` but where a desc has tensor arrays (generic
        descs: ``InputTensors[0]``, ``InputTensors[1]``...).
        """
        return self.tensor_members(kind)

    def tensors(self, kind: Literal["input", "output"] | None = None) -> dict[str, TensorDesc]:
        """Bound tensor members (optional ones left out when NULL), by DML name."""
        by_kind: dict[str | None, dict[str, TensorDesc]] | None = self.__dict__.get("_tensors")
        if by_kind is None:
            # Immutable desc: compute once, outside the dataclass fields.
            by_kind = {None: {}, "input": {}, "output": {}}
            for info in self.member_infos():
                value = getattr(self, info.attr) if info.kind in TENSOR_KINDS else None
                if value is not None:
                    by_kind[None][info.dml_name] = value
                    by_kind[info.kind][info.dml_name] = value
            object.__setattr__(self, "_tensors", by_kind)
        return dict(by_kind[kind])

    def tensor_names(self, kind: Literal["input", "output"]) -> frozenset[str]:
        """DML names of the bound input (or output) tensor members, cached (the desc is immutable)."""
        names: dict[str, frozenset[str]] | None = self.__dict__.get("_tensor_names")
        if names is None:
            names = {k: frozenset(self.tensors(k)) for k in ("input", "output")}
            object.__setattr__(self, "_tensor_names", names)
        return names[kind]

    def tensor(self, dml_name: str) -> TensorDesc:
        """The TensorDesc of one member by DML name."""
        return self.tensors()[dml_name]

    def counts(self) -> dict[str, int]:
        """Derived count members (length of the first array each one sizes)."""
        by_name = {i.dml_name: i for i in self.member_infos()}
        return {count: len(getattr(self, by_name[arrays[0]].attr)) for count, arrays in self.count_members.items()}

    # -- errors -------------------------------------------------------------------

    def invalid(self, member: str, rule: str, value: Any) -> InvalidDescError:
        """``InvalidDescError("<struct>.<member>: <rule>; got <value>")``."""
        shown = str(value) if isinstance(value, (DmlEnum, tuple)) else repr(value)
        return InvalidDescError(f"{self.dml_name}.{member}: {rule}; got {shown}", struct=self.dml_name, member=member)

    def type_error(self, member: str, rule: str, value: Any) -> DescTypeError:
        """As :meth:`invalid`, for a member of the wrong Python type (also a ``TypeError``)."""
        shown = str(value) if isinstance(value, (DmlEnum, tuple)) else repr(value)
        message = f"{self.dml_name}.{member}: {rule}; got {shown}"
        return DescTypeError(message, struct=self.dml_name, member=member)

    @classmethod
    def parse_error(cls, detail: str, member: str = "") -> DescParseError:
        """A DescParseError attributed to this struct."""
        return DescParseError(detail, struct=cls.dml_name, member=member)

    # -- data checks ----------------------------------------------------------------

    def check_data(self, inputs: Mapping[str, Any], feature_level: FeatureLevel) -> None:
        """The strict-mode data checks (``strict=True``): DataIndexError for an index DirectML would clamp.

        ``inputs`` are the logical input arrays (NumPy), keyed by DML member name. The
        reference runs the same rules while computing; a backend that cannot raise
        mid-kernel (the real DirectML) calls this first. Most operators have no
        data-dependent rule: nothing to check.
        """

    # -- validation -----------------------------------------------------------------

    def validate(self, feature_level: FeatureLevel | str | int | None = None) -> None:
        """Check every rule of the DML page at ``feature_level`` (default: latest).

        Raises :class:`InvalidDescError` at the first violation, naming the struct,
        member and value, as DirectML's debug layer does for E_INVALIDARG.
        """
        level = FeatureLevel.latest() if feature_level is None else FeatureLevel.from_any(feature_level)
        # A desc is immutable, so a level it passed once it always passes: remember it
        # (outside the dataclass fields) to keep repeated execute() calls cheap.
        passed: frozenset[FeatureLevel] = self.__dict__.get("_passed_levels", frozenset())
        if level in passed:
            return
        self._validate_uncached(level)
        object.__setattr__(self, "_passed_levels", passed | {level})

    def _validate_uncached(self, level: FeatureLevel) -> None:
        if level < self.introduced:
            raise InvalidDescError(
                f"{self.dml_name}: {self.operator_type} was introduced in {self.introduced}; not available at {level}",
                struct=self.dml_name,
            )
        self._check_counts()
        table = support_at(self.support, level)
        for member, tensor in self.tensors().items():
            kind = "output" if member in self.tensor_names("output") else "input"
            self._check_tensor(member, tensor, kind, table.get(member) if table else None, level)
        self._validate(level)

    def _check_counts(self) -> None:
        by_name = {i.dml_name: i for i in self.member_infos()}
        for count, arrays in self.count_members.items():
            n = len(getattr(self, by_name[arrays[0]].attr))
            for name in arrays[1:]:
                got = len(getattr(self, by_name[name].attr))
                if got != n:
                    raise self.invalid(name, f"must have {count} ({n}, the length of {arrays[0]}) elements", got)

    def _check_tensor(
        self,
        member: str,
        t: TensorDesc,
        kind: str,
        support: TensorSupport | None,
        level: FeatureLevel,
    ) -> None:
        """The DML_BUFFER_TENSOR_DESC rules plus the operator's support-table row."""
        if t.data_type is TensorDataType.UNKNOWN:
            raise self.invalid(f"{member}.DataType", "DML_TENSOR_DATA_TYPE_UNKNOWN is never valid", t.data_type)
        if t.data_type.is_4bit:
            raise self.invalid(f"{member}.DataType", "4-bit data types are not supported by dmlops", t.data_type)
        if t.flags & ~TensorFlags.OWNED_BY_DML:
            raise self.invalid(f"{member}.Flags", "OWNED_BY_DML is the only valid flag", t.flags)
        if t.flags & TensorFlags.OWNED_BY_DML and kind == "output":
            raise self.invalid(f"{member}.Flags", "DML_TENSOR_FLAG_OWNED_BY_DML is only valid on inputs", t.flags)
        max_dims = 8 if level >= FeatureLevel.V3_0 else 5
        if not 1 <= t.dimension_count <= max_dims:
            raise self.invalid(
                f"{member}.DimensionCount", f"must be between 1 and {max_dims} at {level}", t.dimension_count
            )
        for i, size in enumerate(t.sizes):
            if size == 0:
                raise self.invalid(f"{member}.Sizes[{i}]", "sizes may not be 0", size)
        if t.strides is not None:
            if len(t.strides) != t.dimension_count:
                raise self.invalid(
                    f"{member}.Strides", f"must have DimensionCount ({t.dimension_count}) elements", len(t.strides)
                )
            if kind == "output":
                for i, (size, stride) in enumerate(zip(t.sizes, t.strides)):
                    # Ruling 11: a 0 stride on an output would write one element many times.
                    if stride == 0 and size > 1:
                        raise self.invalid(
                            f"{member}.Strides[{i}]",
                            "output tensors may not broadcast (stride 0 with size > 1)",
                            stride,
                        )
        minimum = t.minimum_size_in_bytes
        if t.total_tensor_size_in_bytes < minimum:
            raise self.invalid(
                f"{member}.TotalTensorSizeInBytes",
                f"must be at least DMLCalcBufferTensorSize ({minimum})",
                t.total_tensor_size_in_bytes,
            )
        element_bytes = t.data_type.size_in_bits / 8
        if t.total_tensor_size_in_bytes / element_bytes > MAX_ELEMENTS:
            raise self.invalid(
                f"{member}.TotalTensorSizeInBytes", "may not exceed 2^32 - 1 elements", t.total_tensor_size_in_bytes
            )
        if kind == "output" and t.strides is not None:
            # Ruling 11 (a dmlops ruling): no two output elements may share an address, or the
            # result would depend on the write order. Beside the stride-0 rule above, it runs
            # after the size checks, which bound the addressed span to 2^32 - 1 elements.
            overlap = overlapping_elements(t.sizes, t.strides)
            if overlap is not None:
                p, q = overlap
                offset = sum(i * s for i, s in zip(p, t.strides))
                raise self.invalid(
                    f"{member}.Strides",
                    f"output elements may not overlap: elements {dims_text(p)} and {dims_text(q)} "
                    f"are both at element offset {offset}",
                    t.strides,
                )
        align = t.guaranteed_base_offset_alignment
        # The page: a power of two >= the element size; DirectML 1.15.4 also rejects 1 to 8
        # whatever the element size (buffer tensors are always 16-byte aligned, erratum E31).
        if align and (align & (align - 1) or align < max(element_bytes, BUFFER_ALIGNMENT)):
            raise self.invalid(
                f"{member}.GuaranteedBaseOffsetAlignment",
                f"must be 0 or a power of two >= the element size and >= {BUFFER_ALIGNMENT}",
                align,
            )
        if support is None:
            return
        if t.data_type not in support.data_types:
            raise self.invalid(
                f"{member}.DataType",
                f"must be one of {_names(support.data_types)} at {level}",
                t.data_type,
            )
        if t.dimension_count not in support.dimension_counts:
            dims = support.dimension_counts
            allowed = str(dims[0]) if len(dims) == 1 else f"{dims[0]} to {dims[-1]}"
            raise self.invalid(f"{member}.DimensionCount", f"must be {allowed} at {level}", t.dimension_count)

    def _validate(self, level: FeatureLevel) -> None:
        """Operator-specific rules; subclasses override."""

    # -- shared rule helpers ----------------------------------------------------------

    def require_same(self, attribute: Literal["DataType", "DimensionCount", "Sizes"], *members: str) -> None:
        """The page's "X and Y must have the same DataType/DimensionCount/Sizes"."""
        tensors = self.tensors()
        present = [m for m in members if m in tensors]
        if not present:
            return
        first = present[0]

        def get(t: TensorDesc) -> Any:
            return {"DataType": t.data_type, "DimensionCount": t.dimension_count, "Sizes": t.sizes}[attribute]

        for m in present[1:]:
            if get(tensors[m]) != get(tensors[first]):
                raise self.invalid(
                    f"{m}.{attribute}",
                    f"must equal {first}.{attribute} ({get(tensors[first])})",
                    get(tensors[m]),
                )

    def derived(self, make: Callable[[Any], Any]) -> Any:
        """``make(self)``, computed once per desc object (descs are immutable).

        E.g. the equivalent desc a backend runs, so that its plan caches (keyed by the
        desc's identity) hit from one call to the next.
        """
        try:  # the hit, on every call of a hot path: two lookups
            return self.__dict__["_derived"][make]
        except KeyError:
            cache: dict[Any, Any] = self.__dict__.setdefault("_derived", {})
            value = cache[make] = make(self)
            return value

    def require_sizes(self, member: str, expected: Sequence[int], rule: str) -> None:
        """Tensor ``member`` has ``len(expected)`` dimensions and these Sizes (``rule`` says why).

        The error names ``member.DimensionCount`` or the first ``member.Sizes[i]`` that differs.
        """
        tensor = self.tensor(member)
        if tensor.dimension_count != len(expected):
            raise self.invalid(f"{member}.DimensionCount", f"must be {len(expected)} ({rule})", tensor.dimension_count)
        for i, (got, want) in enumerate(zip(tensor.sizes, expected)):
            if got != want:
                raise self.invalid(f"{member}.Sizes[{i}]", f"must be {want} ({rule})", got)

    def require_axis(self, member: str, axis: int, rank: int, of: str = "InputTensor.DimensionCount") -> None:
        """``0 <= axis < rank``; the error names ``member`` and what ``rank`` is (``of``)."""
        if not 0 <= axis < rank:
            raise self.invalid(member, f"must be less than {of} ({rank})", axis)

    def require_data_type(self, member: str, allowed: Iterable[TensorDataType], rule: str) -> None:
        """Tensor ``member``'s DataType is one of ``allowed`` (``rule`` says why)."""
        allowed = tuple(allowed)
        data_type = self.tensor(member).data_type
        if data_type not in allowed:
            names = ", ".join(t.name for t in allowed)
            raise self.invalid(f"{member}.DataType", f"must be {names} ({rule})", data_type)

    # -- DxDispatch JSON --------------------------------------------------------------

    @classmethod
    def from_dml_dict(cls, desc: Mapping[str, Any], *, require_counts: bool = False) -> OperatorDesc:
        """Build a desc from DxDispatch's ``desc`` object (DML member names).

        Count members (``DimensionCount``) are checked against the array lengths when
        present, and required when ``require_counts`` (DxDispatch's parser requires
        them). Unknown members raise an :class:`~dmlops.errors.UnknownFieldWarning`.
        """
        if not isinstance(desc, Mapping):
            raise cls.parse_error("Expected a JSON object for the operator desc.")
        check_member_names(desc, cls.dml_name)
        dml_json.warn_unknown_fields(desc, cls.dml_member_names(), cls.dml_name)
        kwargs: dict[str, Any] = {}
        try:
            for info in cls.member_infos():
                kwargs[info.attr] = cls._read_member(desc, info)
            for count, arrays in cls.count_members.items():
                if count not in desc:
                    if require_counts:
                        raise DescParseError(f"Field '{count}' is required.", member=count)
                    continue
                n = dml_json.parse_uint(desc, count)
                by_name = {i.dml_name: i for i in cls.member_infos()}
                for name in arrays:
                    got = len(kwargs[by_name[name].attr])
                    if got != n:
                        raise DescParseError(
                            f"Error parsing field '{name}': {count} is {n} but '{name}' has {got} elements.",
                            member=name,
                        )
        except DescParseError as exc:
            raise cls.parse_error(exc.detail, exc.member) from None
        return cls(**kwargs)

    @staticmethod
    def _read_member(desc: Mapping[str, Any], info: MemberInfo) -> Any:
        name = info.dml_name
        if info.kind in TENSOR_KINDS:
            if info.optional and desc.get(name) is None:
                return None
            value = dml_json.require(desc, name)
            try:
                return TensorDesc.from_dml_dict(value)
            except DescParseError as exc:
                raise DescParseError(f"Error parsing field '{name}': {exc.detail}", member=name) from None
            except InvalidDescError as exc:
                raise DescParseError(f"Error parsing field '{name}': {exc}", member=name) from None
        readers: dict[str, Callable[[Mapping[str, Any], str], Any]] = {
            "uint": dml_json.parse_uint,
            "float": dml_json.parse_float,
            "bool": dml_json.parse_bool,
            "uint_array": dml_json.parse_uint_array,
            "int_array": dml_json.parse_int_array,
            "float_array": dml_json.parse_float_array,
        }
        if info.kind == "enum":
            assert info.enum is not None
            return dml_json.parse_enum(desc, name, info.enum)
        if info.kind == "int":
            value = dml_json.require(desc, name)
            if not dml_json.is_int(value):
                raise DescParseError(f"Error parsing field '{name}': Expected an integer.", member=name)
            return value
        return readers[info.kind](desc, name)

    def to_dml_dict(self) -> dict[str, Any]:
        """DxDispatch's ``desc`` object for this desc (round-trips through from_dml_dict)."""
        out: dict[str, Any] = {}
        counts = self.counts()
        counted = {arr: count for count, arrays in self.count_members.items() for arr in arrays}
        for info in self.member_infos():
            count = counted.get(info.dml_name)
            if count is not None and count not in out:
                out[count] = counts[count]
            value = getattr(self, info.attr)
            if info.kind in TENSOR_KINDS:
                if value is not None:
                    out[info.dml_name] = value.to_dml_dict()
            elif info.kind == "enum":
                out[info.dml_name] = value.name
            elif info.kind == "float":
                out[info.dml_name] = _json_float(value)
            elif info.kind == "float_array":
                out[info.dml_name] = [_json_float(v) for v in value]
            elif info.kind.endswith("_array"):
                out[info.dml_name] = list(value)
            else:
                out[info.dml_name] = value
        return out


def _json_float(v: float) -> float | str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def iter_members(desc: OperatorDesc) -> Iterator[tuple[MemberInfo, Any]]:
    """(member info, value) pairs of a desc in struct order."""
    for info in desc.member_infos():
        yield info, getattr(desc, info.attr)


def dims_text(values: Sequence[int]) -> str:
    """``{1, 2, 3}``, DirectML's way of printing sizes."""
    return "{" + ", ".join(str(v) for v in values) + "}"
