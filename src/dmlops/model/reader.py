"""Reading DxDispatch JSON models into dataclasses, checked up front.

Everything DxDispatch checks while parsing and creating dispatchables, and what
DirectML would reject at operator creation or binding time, is checked here, so
that ``dmlops validate`` and ``dmlops run`` fail before any command runs, with one
message that carries a context chain (resource/dispatchable/command -> field ->
reason). Parser rules follow DxDispatch's ``JsonParsers.cpp``; see
``shared/spec/dxdispatch-models.md`` sections 3 and 8.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import memory
from ..descs import desc_class
from ..descs._base import OperatorDesc
from ..enums import FeatureLevel, TensorDataType, TensorFlags
from ..errors import AllocationError, DescParseError, InvalidDescError, UnknownFieldWarning, UnsupportedError
from ..tensor import TensorDesc
from . import images
from .errors import ModelError, context, field_error
from .files import check_path_text, read_regular_file
from .resources import ResourceSpec, parse_resource, warn_unknown

TOP_LEVEL_FIELDS = ("$schema", "resources", "dispatchables", "commands")
NON_DML_DISPATCHABLES = {"hlsl": "hlsl", "onnx": "onnx", "dmlserializedgraph": "dmlSerializedGraph"}
NON_DML_REASONS = {
    "hlsl": "they are HLSL compute shaders, compiled by DXC and run by Direct3D 12",
    "onnx": "they are ONNX models, run by ONNX Runtime's DirectML execution provider",
    "dmlSerializedGraph": "they are DirectML graphs serialized by ONNX Runtime, which dmlops does not deserialize",
}
EXECUTION_FLAGS = ("NONE", "ALLOW_HALF_PRECISION_COMPUTATION", "DISABLE_META_COMMANDS", "DESCRIPTORS_VOLATILE")
COMPILE_TYPES = ("DmlCompileOp", "DmlCompileGraph")
HLSL_BINDING_FIELDS = ("format", "counter", "counterOffsetBytes", "shape")


# -- the model's dataclasses ----------------------------------------------------------------------


@dataclass(frozen=True)
class Binding:
    """One binding source: a resource, optionally at an element offset.

    ``elementOffset`` counts elements of ``elementSizeInBytes`` bytes, which defaults
    to the element size of the resource's ``initialValuesDataType`` (as in DxDispatch's
    ``ResolveBindings``), not of the bound tensor's DataType.
    """

    resource: str
    element_offset: int = 0
    element_size_in_bytes: int | None = None
    element_count: int | None = None


@dataclass(frozen=True)
class BoundTensor:
    """A tensor member resolved to a resource and a byte offset, checked to fit."""

    member: str
    tensor: TensorDesc
    resource: str
    byte_offset: int


@dataclass(frozen=True)
class DispatchableSpec:
    """A DML operator dispatchable with its validated desc."""

    name: str
    operator_type: str
    desc: OperatorDesc
    execution_flags: tuple[str, ...] = ()
    compile_type: str = "DmlCompileOp"
    init_bindings: Mapping[str, tuple[Binding, ...]] = field(default_factory=dict)
    init_bound: tuple[BoundTensor, ...] = ()
    """The OWNED_BY_DML inputs, bound at initialization: their values are taken before the first command."""


@dataclass(frozen=True)
class DispatchCommand:
    """``{"type": "dispatch", "dispatchable": ..., "bindings": ...}`` with its bindings resolved."""

    index: int
    text: str
    dispatchable: str
    bindings: tuple[BoundTensor, ...]


@dataclass(frozen=True)
class PrintCommand:
    """``{"type": "print", "resource": ..., "verbose": false}``."""

    index: int
    text: str
    resource: str
    verbose: bool = False


@dataclass(frozen=True)
class WriteFileCommand:
    """``{"type": "writeFile", "resource": ..., "targetPath": ..., "dimensions": [...]}``."""

    index: int
    text: str
    resource: str
    target_path: str
    dimensions: tuple[int, ...] | None = None


Command = DispatchCommand | PrintCommand | WriteFileCommand


@dataclass
class Model:
    """A parsed, validated DxDispatch model.

    Attributes
    ----------
    path : Path
        The model file.
    feature_level : FeatureLevel
        The level the descs were validated at.
    resources, dispatchables : dict
        By name, in file order.
    commands : list
        In file order.
    warnings : list of str
        One line per ignored field or flag, with its context.
    """

    path: Path
    feature_level: FeatureLevel
    resources: dict[str, ResourceSpec]
    dispatchables: dict[str, DispatchableSpec]
    commands: list[Command]
    warnings: list[str]


# -- JSON -----------------------------------------------------------------------------------------

_PARSE_MODE_NAME = "PM_COMMENTS | PM_TRAILING_COMMAS"
_RAPIDJSON_POSITION = re.compile(r"^Parse error at offset (\d+): (.*)$", re.S)

MAX_MODEL_BYTES = 2**30
"""Largest model file dmlops reads (1 GiB); parsing needs several times the file's size."""


def parse_json_text(text: str | bytes | bytearray) -> Any:
    """Parse a model as DxDispatch does: rapidjson with comments and trailing commas.

    DxDispatch calls rapidjson with ``kParseCommentsFlag | kParseTrailingCommasFlag``;
    dmlops uses the same parser (python-rapidjson) with the same flags, so it accepts
    what DxDispatch accepts and nothing of JSON5 beyond (no single quotes, unquoted keys
    or hex numbers), in time linear in the text. Unlike DxDispatch, the literals
    ``NaN``, ``Infinity`` and ``-Infinity`` are accepted, as Python's ``json`` does.
    Syntax errors become ModelError with rapidjson's wording, line and column.
    """
    import rapidjson

    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    try:
        return rapidjson.loads(
            data,
            parse_mode=rapidjson.PM_COMMENTS | rapidjson.PM_TRAILING_COMMAS,
            number_mode=rapidjson.NM_NAN,
        )
    except RecursionError:
        raise ModelError("JSON syntax error: the document is nested too deeply") from None
    except UnicodeDecodeError as exc:  # rapidjson decodes UTF-8 itself
        raise ModelError(f"the model is not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:
        match = _RAPIDJSON_POSITION.match(str(exc))
        if not match:
            raise ModelError(f"JSON syntax error: {exc}") from None
        offset, what = int(match.group(1)), match.group(2)
        line = data.count(b"\n", 0, offset) + 1
        column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        raise ModelError(f"JSON syntax error at line {line}, column {column}: {what.rstrip('.')}") from None


def read_json_file(path: Path) -> Any:
    """Read and parse a model file: a regular file of at most MAX_MODEL_BYTES, UTF-8 text."""
    data = read_regular_file(path, "model file", max_bytes=MAX_MODEL_BYTES)
    if data.startswith(b"\xef\xbb\xbf"):
        del data[:3]
    if not data.strip():
        raise ModelError(f"model file '{path}' is empty")
    # Parsed as read: no decoded copy of the text (rapidjson checks the UTF-8 itself).
    return parse_json_text(data)


# -- pieces ---------------------------------------------------------------------------------------


def _string_field(obj: Mapping[str, Any], name: str) -> str:
    if name not in obj:
        raise ModelError(f"Field '{name}' is required.")
    value = obj[name]
    if not isinstance(value, str):
        raise field_error(name, "Expected a string.")
    return value


def _uint_field(obj: Mapping[str, Any], name: str) -> int | None:
    if name not in obj:
        return None
    v = obj[name]
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**64:
        raise field_error(name, "Expected an unsigned integer.")
    return v


def _binding_source(value: Any, where: str) -> Binding:
    if isinstance(value, str):
        return Binding(value)
    if not isinstance(value, Mapping):
        raise ModelError("Expected a resource name, a binding object, or an array of them.")
    known = ("name", "elementOffset", "elementSizeInBytes", "elementCount", *HLSL_BINDING_FIELDS)
    warn_unknown(value, known, where)
    ignored = [k for k in HLSL_BINDING_FIELDS if k in value]
    if ignored:
        names = ", ".join(f"'{k}'" for k in ignored)
        warnings.warn(
            f"{where}: field(s) {names} only apply to HLSL/ONNX bindings; ignored", UnknownFieldWarning, stacklevel=2
        )
    name = _string_field(value, "name")
    size = _uint_field(value, "elementSizeInBytes")
    return Binding(
        name,
        element_offset=_uint_field(value, "elementOffset") or 0,
        element_size_in_bytes=size or None,
        element_count=_uint_field(value, "elementCount"),
    )


def _bindings(obj: Any, where: str) -> dict[str, tuple[Binding, ...]]:
    if not isinstance(obj, Mapping):
        raise ModelError("Expected an object field named 'bindings'.")
    out = {}
    for point, value in obj.items():
        with context(f"Error parsing binding '{point}'"):
            items = value if isinstance(value, list) else [value]
            out[point] = tuple(_binding_source(v, f"{where}, binding '{point}'") for v in items)
    return out


def _execution_flags(value: Any) -> tuple[str, ...]:
    names = value if isinstance(value, list) else [value]
    flags = []
    for v in names:
        if not isinstance(v, str):
            raise field_error("executionFlags", "Expected a string or an array of strings.")
        short = v.removeprefix("DML_EXECUTION_FLAG_")
        if short not in EXECUTION_FLAGS:
            raise field_error("executionFlags", f"'{v}' is not a recognized value for DML_EXECUTION_FLAGS.")
        flags.append(short)
    return tuple(flags)


def _parse_dispatchable(
    name: str, obj: Any, level: FeatureLevel, resources: Mapping[str, ResourceSpec]
) -> DispatchableSpec:
    if not isinstance(obj, Mapping):
        raise ModelError("Expected a non-null JSON object.", context=(f"Failed to parse dispatchable '{name}'",))
    with context(f"Failed to parse dispatchable '{name}'"):
        type_key = "type" if "type" in obj or "Type" not in obj else "Type"
        op_type = _string_field(obj, type_key)
        kind = NON_DML_DISPATCHABLES.get(op_type.lower())
        if kind is not None:
            raise ModelError(
                f"'{kind}' dispatchables are not supported by dmlops: {NON_DML_REASONS[kind]}; dmlops runs "
                "DirectML operators only (run this model with DxDispatch on Windows)"
            )
        known = ("type", "Type", "desc", "Desc", "executionFlags", "dmlCompileType", "bindings")
        warn_unknown(obj, known, f"dispatchable '{name}'")
        try:
            cls = desc_class(op_type)
        except UnsupportedError as exc:
            raise ModelError(str(exc)) from None
        except ImportError as exc:
            raise ModelError(
                f"operator type '{op_type}' is registered but its implementation is missing ({exc})"
            ) from None
        desc_key = "desc" if "desc" in obj or "Desc" not in obj else "Desc"
        if desc_key not in obj:
            raise ModelError(f"Field '{desc_key}' is required.")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                desc = cls.from_dml_dict(obj[desc_key], require_counts=True)
            except DescParseError as exc:
                raise ModelError(exc.detail) from None
        for w in caught:
            warnings.warn(f"dispatchable '{name}': {w.message}", UnknownFieldWarning, stacklevel=2)
        flags = _execution_flags(obj["executionFlags"]) if "executionFlags" in obj else ()
        compile_type = obj.get("dmlCompileType", "DmlCompileOp")
        if compile_type not in COMPILE_TYPES:
            raise field_error("dmlCompileType", f"Expected one of {', '.join(COMPILE_TYPES)}; got {compile_type!r}.")
        init_bindings = _bindings(obj["bindings"], f"dispatchable '{name}'") if "bindings" in obj else {}
    # DxDispatch creates every dispatchable before running a command; DirectML
    # validates the desc at creation (IDMLDevice::CreateOperator -> E_INVALIDARG).
    with context(f"Failed to create dispatchable '{name}'"):
        try:
            desc.validate(level)
        except InvalidDescError as exc:
            raise ModelError(str(exc)) from None
    spec = DispatchableSpec(name, op_type, desc, flags, compile_type, init_bindings)
    # Then DxDispatch initializes it: DirectML copies each OWNED_BY_DML input, bound here,
    # into the operator's persistent resource, before any command runs.
    with context(f"Failed to initialize dispatchable '{name}'"):
        init_bound = resolve_bindings(
            spec, init_bindings, resources, f"dispatchable '{name}' bindings", initialization=True
        )
    return replace(spec, init_bound=init_bound)


def _owned(tensor: TensorDesc) -> bool:
    return bool(tensor.flags & TensorFlags.OWNED_BY_DML)


def resolve_bindings(
    spec: DispatchableSpec,
    bindings: Mapping[str, tuple[Binding, ...]],
    resources: Mapping[str, ResourceSpec],
    where: str,
    *,
    initialization: bool = False,
) -> tuple[BoundTensor, ...]:
    """Check bindings against the desc and the buffers; byte offsets per member.

    At execution (a dispatch command), every tensor member the desc declares must be
    bound except OWNED_BY_DML inputs, which DirectML takes at initialization only (from
    the dispatchable's ``bindings``; binding one at execution is an error, as
    DML_TENSOR_FLAGS says). With ``initialization``, exactly the OWNED_BY_DML inputs
    are bound and other bind points are ignored with a warning. Each binding names one
    existing, non-deferred resource, at an offset aligned to the element size (and
    GuaranteedBaseOffsetAlignment), with at least TotalTensorSizeInBytes bytes from the
    offset to the end of the buffer (DirectML's DML_BUFFER_BINDING rule).
    """
    tensors = spec.desc.tensors()
    declared = set(spec.desc.tensor_members("input")) | set(spec.desc.tensor_members("output"))
    # A tensor array (JOIN's InputTensors) is one bind point bound to a list of resources,
    # one per element; the desc names its elements InputTensors[0], InputTensors[1]...
    arrays: dict[str, int] = {}
    for member in tensors:
        base, _, index = member.partition("[")
        if index:
            arrays[base] = arrays.get(base, 0) + 1
    owned = {m.partition("[")[0] for m, t in tensors.items() if _owned(t)}
    for point in bindings:
        if point not in tensors and point not in arrays:
            why = "the desc leaves this optional tensor null" if point in declared else "no such tensor member"
            known = ", ".join(tensors)
            warnings.warn(
                f"{where}: bind point '{point}' ignored ({why}; bind points of {spec.desc.dml_name}: {known})",
                UnknownFieldWarning,
                stacklevel=2,
            )
        elif initialization and point not in owned:
            warnings.warn(
                f"{where}: bind point '{point}' ignored (only OWNED_BY_DML inputs are bound at initialization; "
                "bind it in the dispatch command)",
                UnknownFieldWarning,
                stacklevel=2,
            )
        elif not initialization and point in owned:
            raise ModelError(
                f"Bind point '{point}' is flagged OWNED_BY_DML: DirectML takes it once, at initialization, from "
                "the dispatchable's 'bindings', and binding it at execution is an error (DML_TENSOR_FLAGS)."
            )
    bound = []
    for member, tensor in tensors.items():
        point, _, index = member.partition("[")
        if (point in owned) != initialization:
            continue
        sources = bindings.get(point)
        if sources is None and initialization:
            raise ModelError(
                f"Bind point '{point}' is flagged OWNED_BY_DML, so it must be bound in the dispatchable's "
                "'bindings' (DirectML copies it at initialization)."
            )
        if sources is None:
            raise ModelError(f"Bind point '{point}' is required but no resource is bound to it.")
        expected = arrays.get(point, 1)
        if len(sources) != expected:
            raise ModelError(f"Bind point '{point}' requires {expected} resources, but {len(sources)} were bound.")
        b = sources[int(index.rstrip("]")) if index else 0]
        res = resources.get(b.resource)
        if res is None:
            raise ModelError(f"Bind point '{member}': unknown resource '{b.resource}'.")
        if res.deferred:
            raise ModelError(
                f"Bind point '{member}': resource '{b.resource}' is deferred; DxDispatch gives deferred resources "
                "memory only as outputs of ONNX dispatchables, so a DirectML operator cannot bind one."
            )
        element_size = b.element_size_in_bytes or res.element_size
        if b.element_offset and not element_size:
            raise ModelError(
                f"Bind point '{member}': elementOffset needs 'elementSizeInBytes' because resource "
                f"'{b.resource}' has no initialValuesDataType."
            )
        byte_offset = b.element_offset * element_size
        item = tensor.data_type.size_in_bits // 8
        label = (
            f"Bind point '{member}' (resource '{b.resource}', elementOffset {b.element_offset} = byte {byte_offset})"
        )
        if byte_offset % item:
            raise ModelError(
                f"{label}: the byte offset is not a multiple of the {tensor.data_type.name} element size {item}."
            )
        align = tensor.guaranteed_base_offset_alignment
        if align and byte_offset % align:
            raise ModelError(f"{label}: the byte offset is not a multiple of GuaranteedBaseOffsetAlignment {align}.")
        needed = tensor.total_tensor_size_in_bytes
        if byte_offset + needed > res.size_in_bytes:
            left = max(res.size_in_bytes - byte_offset, 0)
            raise ModelError(
                f"{label}: the tensor needs {needed} bytes (TotalTensorSizeInBytes) but the buffer has "
                f"{res.size_in_bytes} bytes, {left} of them from the offset."
            )
        bound.append(BoundTensor(member, tensor, b.resource, byte_offset))
    return tuple(bound)


def _parse_command(
    index: int,
    obj: Any,
    resources: Mapping[str, ResourceSpec],
    dispatchables: Mapping[str, DispatchableSpec],
) -> Command:
    if not isinstance(obj, Mapping):
        raise ModelError("Expected a non-null JSON object.")
    text = json.dumps(obj, separators=(",", ":"), allow_nan=True)
    ctype = _string_field(obj, "type")
    kind = ctype.lower()
    where = f"command {index} ({ctype})"
    if kind == "dispatch":
        warn_unknown(obj, ("type", "dispatchable", "bindings", "threadGroupCount"), where)
        if "threadGroupCount" in obj:
            warnings.warn(
                f"{where}: 'threadGroupCount' only applies to HLSL dispatchables; ignored",
                UnknownFieldWarning,
                stacklevel=2,
            )
        name = _string_field(obj, "dispatchable")
        spec = dispatchables.get(name)
        if spec is None:
            raise ModelError(f"Unknown dispatchable '{name}'.")
        if "bindings" not in obj:
            raise ModelError("Expected an object field named 'bindings'.")
        with context(f"dispatchable '{name}'"):
            bindings = _bindings(obj["bindings"], where)
            bound = resolve_bindings(spec, bindings, resources, where)
        return DispatchCommand(index, text, name, bound)
    if kind == "print":
        warn_unknown(obj, ("type", "resource", "verbose"), where)
        name = _string_field(obj, "resource")
        res = resources.get(name)
        if res is None:
            raise ModelError(f"Unknown resource '{name}'.")
        _check_not_deferred(res)
        if res.data_type is TensorDataType.UNKNOWN:
            raise ModelError(f"Resource '{name}' has no initialValuesDataType, so it cannot be printed.")
        verbose = obj.get("verbose", False)
        if not isinstance(verbose, bool):
            raise field_error("verbose", "Expected a bool.")
        return PrintCommand(index, text, name, verbose)
    if kind == "writefile":
        warn_unknown(obj, ("type", "resource", "targetPath", "dimensions"), where)
        name = _string_field(obj, "resource")
        res = resources.get(name)
        if res is None:
            raise ModelError(f"Unknown resource '{name}'.")
        _check_not_deferred(res)
        target = _string_field(obj, "targetPath")
        if not target:
            raise field_error("targetPath", "Expected a non-empty path.")
        check_path_text(target, "targetPath")
        dims = obj.get("dimensions")
        if dims is not None:
            if not isinstance(dims, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= 0xFFFFFFFF for d in dims
            ):
                raise field_error("dimensions", "Expected an array of unsigned integers.")
            dims = tuple(dims)
        if images.is_image_path(target):
            images.check_image_target(target, dims, res.data_type, res.size_in_bytes, name)
        if target.lower().endswith(".npy"):
            if res.data_type is TensorDataType.UNKNOWN:
                raise ModelError(f"Resource '{name}' has no initialValuesDataType, so it cannot be written as .npy.")
            if dims is not None:
                count = 1
                for d in dims:
                    count *= d
                if count * res.element_size > res.size_in_bytes:
                    raise ModelError(
                        f"'dimensions' {list(dims)} hold {count} elements ({count * res.element_size} bytes) "
                        f"but resource '{name}' has {res.size_in_bytes} bytes."
                    )
        return WriteFileCommand(index, text, name, target, dims)
    raise ModelError(f"Unrecognized command type '{ctype}' (expected dispatch, print or writeFile).")


def _check_not_deferred(res: ResourceSpec) -> None:
    if res.deferred:
        raise ModelError(
            f"Could not find deferred resource {res.name}: only an ONNX dispatchable gives a deferred "
            "resource memory, and dmlops runs DirectML operators only."
        )


def _object_field(doc: Mapping[str, Any], name: str, kind: type) -> Any:
    if name not in doc:
        raise ModelError(f"Field '{name}' is required.")
    value = doc[name]
    if not isinstance(value, kind):
        what = "an object" if kind is dict else "an array"
        raise field_error(name, f"Expected {what}.")
    return value


def parse_model(
    doc: Any,
    *,
    path: Path,
    input_path: Path | None = None,
    feature_level: FeatureLevel | str | None = None,
) -> Model:
    """Check a parsed JSON document and build the :class:`Model`.

    Parameters
    ----------
    doc : Any
        The parsed JSON.
    path : Path
        The model file (relative ``sourcePath`` s resolve against its folder).
    input_path : Path, optional
        Folder to resolve ``sourcePath`` against instead (``--input_path``).
    feature_level : FeatureLevel or str, optional
        Validation level of the descs (default: the latest).
    """
    level = FeatureLevel.latest() if feature_level is None else FeatureLevel.from_any(feature_level)
    base_dir = input_path if input_path is not None else path.parent
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if not isinstance(doc, Mapping):
            raise ModelError("Expected a JSON object at the top level of the model.")
        warn_unknown(doc, TOP_LEVEL_FIELDS, "model")
        raw_resources = _object_field(doc, "resources", dict)
        raw_dispatchables = _object_field(doc, "dispatchables", dict)
        raw_commands = _object_field(doc, "commands", list)
        resources = {}
        for name, obj in raw_resources.items():
            with context(f"Failed to parse resource '{name}'"):
                resources[name] = parse_resource(name, obj, base_dir)
        total = sum(r.size_in_bytes for r in resources.values())
        try:
            memory.check_allocation(total, "the model's buffers")
        except AllocationError as exc:
            raise ModelError(str(exc)) from None
        dispatchables = {
            name: _parse_dispatchable(name, obj, level, resources) for name, obj in raw_dispatchables.items()
        }
        commands = []
        for i, obj in enumerate(raw_commands):
            label = f"Failed to parse command {i}"
            if isinstance(obj, Mapping) and isinstance(obj.get("type"), str):
                label += f" ({obj['type']})"
            with context(label):
                commands.append(_parse_command(i, obj, resources, dispatchables))
    messages = [str(w.message) for w in caught if issubclass(w.category, UnknownFieldWarning)]
    return Model(path, level, resources, dispatchables, commands, messages)


def load_model(
    path: str | Path,
    *,
    input_path: str | Path | None = None,
    feature_level: FeatureLevel | str | None = None,
) -> Model:
    """Read, parse and validate a DxDispatch model file.

    Raises
    ------
    ModelError
        For any problem, with one message that says where and what.
    """
    path = Path(path)
    if path.suffix.lower() == ".onnx":
        raise ModelError(
            f"'{path}' is an ONNX model, which DxDispatch runs through ONNX Runtime's DirectML execution "
            "provider; dmlops runs DirectML operator models (.json) only"
        )
    doc = read_json_file(path)
    return parse_model(
        doc,
        path=path,
        input_path=None if input_path is None else Path(input_path),
        feature_level=feature_level,
    )
