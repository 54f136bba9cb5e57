"""DxDispatch buffer resources: byte buffers and their initializers.

A resource is raw bytes; ``initialValuesDataType`` only says how the initializer is
written and how ``print`` shows the buffer. A buffer initialised as FLOAT32 may be
bound as UINT32 (DxDispatch Guide, "Resources"). Every size is checked against
:data:`MAX_BUFFER_BYTES` and the memory available BEFORE anything is allocated.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from .. import memory
from ..dml_json import as_float
from ..enums import TensorDataType
from ..errors import AllocationError, UnknownFieldWarning
from . import images
from .errors import ModelError, field_error
from .files import check_path_text, open_regular, readinto_exactly


def _max_buffer_bytes() -> int:
    value = os.environ.get("DMLOPS_MAX_BUFFER_BYTES", "")
    return int(value) if value.isdigit() else 2**32


MAX_BUFFER_BYTES = _max_buffer_bytes()
"""Largest buffer dmlops allocates: 4 GiB, or ``$DMLOPS_MAX_BUFFER_BYTES``.

DirectML tensors address at most 2^32 - 1 elements; a model asking for more than
this (or for more than the machine's available memory) is refused with a clear
error instead of an allocation failure.
"""

RAW_IMAGE_EXTENSIONS = (".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
"""Image files DxDispatch does not decode: read as raw bytes, with a warning."""
RESOURCE_FIELDS = (
    "initialValuesDataType",
    "initialValues",
    "sizeInBytes",
    "initialValuesOffsetInBytes",
    "resampleSize",
    "resampleMode",
)


Fill = Callable[[memoryview], None]
"""Writes an initializer's bytes into a view of exactly that many bytes of the buffer."""


@dataclass(frozen=True)
class ResourceSpec:
    """One buffer of a model, as read from its JSON.

    The initializer is kept as a recipe (``fill``), not as bytes: a buffer is
    allocated once and its initial values are written straight into it, so a
    4 GiB constant or file costs 4 GiB, not twice that.

    Attributes
    ----------
    name : str
        The resource's key in ``resources``.
    data_type : TensorDataType
        ``initialValuesDataType`` (UNKNOWN for the typed-list form).
    initial_byte_count : int
        Bytes of the initializer.
    size_in_bytes : int
        The buffer size: ``sizeInBytes``, else the initializer's size rounded up to 4.
    offset_in_bytes : int
        ``initialValuesOffsetInBytes``, where the initial bytes are placed.
    kind : str
        ``array``, ``constant``, ``sequence``, ``file`` or ``list``.
    fill : callable
        Writes the initializer into a ``memoryview`` of ``initial_byte_count`` bytes.
    """

    name: str
    data_type: TensorDataType
    initial_byte_count: int
    size_in_bytes: int
    offset_in_bytes: int
    kind: str
    fill: Fill = field(repr=False, compare=False)

    @property
    def deferred(self) -> bool:
        """``"initialValues": "deferred"``: a resource only ONNX dispatchables give memory to."""
        return self.kind == "deferred"

    @property
    def element_size(self) -> int:
        """Bytes per element of ``initialValuesDataType`` (0 for UNKNOWN)."""
        return self.data_type.size_in_bits // 8

    @property
    def element_count(self) -> int:
        """Elements in the initializer: what ``print`` shows (DxDispatch trims the padding)."""
        return self.initial_byte_count // self.element_size if self.element_size else 0

    @property
    def initial_values(self) -> bytes:
        """The initializer's bytes (made on each call)."""
        data = bytearray(self.initial_byte_count)
        self.fill(memoryview(data))
        return bytes(data)

    def allocate(self) -> bytearray:
        """A zeroed buffer of ``size_in_bytes`` holding the initial values at their offset."""
        buffer = bytearray(self.size_in_bytes)
        start = self.offset_in_bytes
        self.fill(memoryview(buffer)[start : start + self.initial_byte_count])
        return buffer


def _copy_fill(data: bytes) -> Fill:
    def fill(view: memoryview) -> None:
        view[:] = data

    return fill


def check_allocation(nbytes: int, what: str) -> None:
    """Refuse ``nbytes`` above the buffer cap or the available memory, before allocating."""
    if nbytes > MAX_BUFFER_BYTES:
        raise ModelError(
            f"{what} needs {nbytes} bytes, more than the largest buffer dmlops allocates "
            f"({MAX_BUFFER_BYTES} bytes; set DMLOPS_MAX_BUFFER_BYTES to change it)"
        )
    try:
        memory.check_allocation(nbytes, what)
    except AllocationError as exc:
        raise ModelError(str(exc)) from None


def warn_unknown(obj: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    """UnknownFieldWarning naming the fields of ``obj`` that dmlops does not read."""
    unknown = [k for k in obj if k not in known]
    if unknown:
        names = ", ".join(f"'{u}'" for u in unknown)
        warnings.warn(f"{where}: unknown field(s) {names} ignored", UnknownFieldWarning, stacklevel=2)


# -- scalar parsers (DxDispatch's ParseFloat32 / ParseInt8 / ParseUInt32 ...) --------------------


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int_error(dt: TensorDataType) -> str:
    return "Expected a signed integer." if dt.is_signed_integer else "Expected an unsigned integer."


def _check_int(v: Any, dt: TensorDataType) -> int:
    if not _is_int(v) or (v < 0 and not dt.is_signed_integer):
        raise ModelError(_int_error(dt))
    info = np.iinfo(dt.numpy_dtype)
    if not info.min <= v <= info.max:
        raise ModelError(f"{v} is out of range for {dt.name} [{info.min}, {info.max}].")
    return int(v)


def _to_float_type(values: NDArray[np.float64], dt: TensorDataType) -> NDArray[Any]:
    with np.errstate(over="ignore"):
        if dt is TensorDataType.FLOAT16:
            # DxDispatch parses FLOAT16 as float (rounded), then builds a half_float::half,
            # which truncates toward zero (half.hpp's default rounding style).
            return images.float32_to_half_bits(values.astype(np.float32)).view("<f2")
        return values.astype(dt.numpy_dtype)


def parse_scalar(v: Any, dt: TensorDataType) -> NDArray[Any]:
    """One value of type ``dt`` as a 1-element array (numbers; "nan"/"inf"/"-inf" for floats)."""
    if dt.is_float:
        f = as_float(v)
        if f is None:
            raise ModelError("Expected a number or 'NaN', 'Inf', or '-Inf'.")
        return _to_float_type(np.array([f]), dt)
    return np.array([_check_int(v, dt)], dtype=dt.numpy_dtype)


def parse_typed_array(values: list[Any], dt: TensorDataType) -> NDArray[Any]:
    """A JSON array of ``dt`` values; errors name the offending element."""
    if dt.is_float:
        if all(type(v) in (int, float) for v in values):
            try:
                return _to_float_type(np.array(values, dtype=np.float64), dt)
            except OverflowError:
                pass
        out = np.empty(len(values), dtype=np.float64)
        for i, v in enumerate(values):
            try:
                f = as_float(v)
            except OverflowError:
                f = math.inf if v > 0 else -math.inf
            if f is None:
                raise ModelError(f"element {i}: Expected a number or 'NaN', 'Inf', or '-Inf'; got {v!r}.")
            out[i] = f
        return _to_float_type(out, dt)
    if not all(type(v) is int for v in values):
        bad = next(i for i, v in enumerate(values) if type(v) is not int)
        raise ModelError(f"element {bad}: {_int_error(dt)[:-1]}; got {values[bad]!r}.")
    info = np.iinfo(dt.numpy_dtype)
    if values and (min(values) < info.min or max(values) > info.max):
        bad = next(i for i, v in enumerate(values) if not info.min <= v <= info.max)
        if values[bad] < 0 and not dt.is_signed_integer:
            raise ModelError(f"element {bad}: Expected an unsigned integer; got {values[bad]}.")
        raise ModelError(f"element {bad}: {values[bad]} is out of range for {dt.name} [{info.min}, {info.max}].")
    return np.array(values, dtype=dt.numpy_dtype)


def _uint_field(obj: Mapping[str, Any], name: str, *, required: bool = True, default: int = 0) -> int:
    if name not in obj:
        if required:
            raise ModelError(f"Field '{name}' is required.")
        return default
    v = obj[name]
    if not _is_int(v) or v < 0 or v >= 2**64:
        raise field_error(name, "Expected an unsigned integer.")
    return int(v)


def _data_type_field(obj: Mapping[str, Any]) -> TensorDataType:
    if "initialValuesDataType" not in obj:
        return TensorDataType.UNKNOWN
    v = obj["initialValuesDataType"]
    if not isinstance(v, str):
        raise field_error("initialValuesDataType", "Expected a string.")
    try:
        dt = TensorDataType.from_any(v)
    except ValueError as exc:
        raise field_error("initialValuesDataType", str(exc)) from None
    if dt.is_4bit:
        raise field_error("initialValuesDataType", f"{dt} is not supported by dmlops (4-bit data types).")
    return dt


# -- initializers ---------------------------------------------------------------------------------


def _require_type(dt: TensorDataType) -> None:
    if dt is TensorDataType.UNKNOWN:
        raise ModelError("Field 'initialValuesDataType' is required.")


def _count(obj: Mapping[str, Any], dt: TensorDataType, what: str) -> int:
    count = _uint_field(obj, "valueCount")
    check_allocation(count * dt.numpy_dtype.itemsize, f"{what} of {count} {dt.name} values")
    return count


def _constant(obj: Mapping[str, Any], dt: TensorDataType) -> tuple[int, Fill]:
    _require_type(dt)
    count = _count(obj, dt, "the constant initializer")
    if "value" not in obj:
        raise ModelError("Field 'value' is required.")
    try:
        value = parse_scalar(obj["value"], dt)
    except ModelError as exc:
        raise exc.within("Error parsing field 'value'") from None

    def fill(view: memoryview) -> None:
        np.frombuffer(view, dtype=dt.numpy_dtype).fill(value[0])

    return count * dt.numpy_dtype.itemsize, fill


def _sequence(obj: Mapping[str, Any], dt: TensorDataType) -> tuple[int, Fill]:
    _require_type(dt)
    count = _count(obj, dt, "the sequence initializer")
    parsed = {}
    for name in ("valueStart", "valueDelta"):
        if name not in obj:
            raise ModelError(f"Field '{name}' is required.")
        try:
            parsed[name] = parse_scalar(obj[name], dt)[0]
        except ModelError as exc:
            raise exc.within(f"Error parsing field '{name}'") from None

    def fill(view: memoryview) -> None:
        values = np.frombuffer(view, dtype=dt.numpy_dtype)
        if values.size and dt is TensorDataType.FLOAT16:
            _half_sequence(values.view(np.uint16), parsed["valueStart"], parsed["valueDelta"])
        elif values.size:
            values.fill(parsed["valueDelta"])
            values[0] = parsed["valueStart"]
            # DxDispatch does `value += valueDelta` in the element type: a running sum
            # rounded (floats) or wrapped (integers) at every step, which accumulate does.
            with np.errstate(over="ignore", invalid="ignore"):
                np.add.accumulate(values, out=values)

    return count * dt.numpy_dtype.itemsize, fill


def _half_sequence(out: NDArray[np.uint16], start: Any, delta: Any) -> None:
    """FLOAT16 ``value += valueDelta``: half + half in float, truncated back to half at each step.

    Each step maps one of 65,536 half values to the next, so the sequence repeats after
    at most 65,536 distinct values: those are computed one by one, the rest tiled.
    """
    d = np.float32(np.array(delta, dtype="<f2"))
    every = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view("<f2").astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        step = images.float32_to_half_bits(every + d)
    seen: dict[int, int] = {}
    h = int(np.array(start, dtype="<f2").view(np.uint16))
    i = 0
    while i < out.size and h not in seen:
        seen[h] = i
        out[i] = h
        h = int(step[h])
        i += 1
    if i < out.size:  # the values from index seen[h] repeat
        cycle = out[seen[h] : i].copy()
        rest = out[i:]
        rest[:] = np.resize(cycle, rest.size)


def resolve_input_file(source: str, base_dir: Path) -> Path:
    """DxDispatch's ResolveInputFilePath: ``base_dir/source`` if it exists, else the current directory."""
    first = base_dir / source
    if os.path.lexists(first):
        return first
    second = Path(source)
    if os.path.lexists(second):
        return second
    raise ModelError(f"file '{source}' not found (looked in '{base_dir}' and in the current directory)")


@dataclass(frozen=True)
class _NpyLayout:
    """What a .npy header says: where the data starts and how it is laid out."""

    data_offset: int
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    fortran_order: bool

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def _npy_layout(file: BinaryIO, source: str) -> _NpyLayout:
    """Read only the header of a .npy file (NumPy's format, versions 1 to 3)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(file)
        header = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}.get(version)
        if header is None:
            raise ValueError(f"unsupported .npy format version {version}")
        shape, fortran_order, dtype = header(file, max_header_size=2**16)
    except (ValueError, EOFError, OSError, SyntaxError, TypeError) as exc:
        raise ModelError(f"'{source}' is not a valid .npy file: {exc}") from None
    if dtype.hasobject:
        raise ModelError(f"'{source}' holds Python objects, which dmlops never reads")
    return _NpyLayout(file.tell(), dtype, tuple(int(d) for d in shape), bool(fortran_order))


def _npy_fill(path: Path, layout: _NpyLayout) -> Fill:
    """Read the array's bytes straight into the buffer, then fix byte order and axis order in place."""

    def fill(view: memoryview) -> None:
        with open_regular(path, "initializer file") as (file, _):
            file.seek(layout.data_offset)
            readinto_exactly(file, view)
        values = np.frombuffer(view, dtype=layout.dtype)
        if layout.dtype.byteorder == ">":
            values.byteswap(inplace=True)
        if layout.fortran_order and len(layout.shape) > 1:
            native = values.view(layout.dtype.newbyteorder("="))
            c_order = np.ascontiguousarray(native.reshape(layout.shape[::-1]).T)
            native[:] = c_order.reshape(-1)

    return fill


def _raw_fill(path: Path) -> Fill:
    def fill(view: memoryview) -> None:
        with open_regular(path, "initializer file") as (file, _):
            readinto_exactly(file, view)

    return fill


def _read_file(
    obj: Mapping[str, Any], init: Mapping[str, Any], dt: TensorDataType, base_dir: Path
) -> tuple[int, Fill, TensorDataType, str]:
    """A ``sourcePath`` initializer: checked now (a regular file, its size, a header), read at allocation.

    As DxDispatch: ``resampleSize``/``resampleMode`` are parsed for every file, used
    for ``.jpg``/``.png`` (decoded as images), and every other extension but ``.npy``
    is raw bytes (``.jpeg`` and ``.bmp`` too).
    """
    source = init.get("sourcePath")
    if not isinstance(source, str):
        raise field_error("sourcePath", "Expected a string.")
    check_path_text(source, "sourcePath")
    resample_size, resample_mode = images.resample_fields(obj)
    suffix = Path(source).suffix.lower()
    path = resolve_input_file(source, base_dir)
    if images.is_image_path(source):
        count, fill = images.image_initializer(path, source, dt, resample_size, resample_mode)
        return count, fill, dt, "image"
    _warn_resample(obj, f"'{source}' is not a .jpg or .png image")
    if suffix in RAW_IMAGE_EXTENSIONS:
        warnings.warn(
            f"'{source}' is read as raw bytes: DxDispatch decodes only .jpg and .png images",
            UnknownFieldWarning,
            stacklevel=2,
        )
    with open_regular(path, "initializer file") as (file, size):
        if suffix != ".npy":
            _require_type(dt)
            check_allocation(size, f"file '{source}'")
            return size, _raw_fill(path), dt, "file"
        layout = _npy_layout(file, source)
    file_type = _data_type_of(layout.dtype, source)
    available = size - layout.data_offset
    if layout.nbytes > available:
        raise ModelError(
            f"'{source}' is not a valid .npy file: its header says shape {layout.shape} of {layout.dtype} "
            f"({layout.nbytes} bytes) but only {available} bytes follow the header"
        )
    if dt is not TensorDataType.UNKNOWN and dt is not file_type:
        raise ModelError(f"Data type from file '{source}' does not match field 'initialValuesDataType'.")
    check_allocation(layout.nbytes, f"file '{source}'")
    return layout.nbytes, _npy_fill(path, layout), file_type, "file"


def _warn_resample(obj: Mapping[str, Any], why: str) -> None:
    present = [k for k in ("resampleSize", "resampleMode") if k in obj]
    if present:
        names = ", ".join(f"'{k}'" for k in present)
        warnings.warn(f"field(s) {names} ignored: {why}", UnknownFieldWarning, stacklevel=2)


def _data_type_of(dtype: np.dtype[Any], source: str) -> TensorDataType:
    try:
        return TensorDataType.from_numpy(dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype)
    except (ValueError, TypeError):
        raise ModelError(f"'{source}' holds NumPy dtype {dtype}, which has no DML_TENSOR_DATA_TYPE") from None


def _typed_list(values: list[Any]) -> bytes:
    """The list form: ``[{"type": "UINT32", "value": 6, "name": ...}, ...]`` packed back to back."""
    parts = []
    for i, entry in enumerate(values):
        if not isinstance(entry, Mapping):
            raise ModelError(
                f"element {i}: with initialValuesDataType UNKNOWN (or absent), 'initialValues' must be a "
                'list of {"type", "value"} objects'
            )
        warn_unknown(entry, ("type", "value", "name"), f"initialValues[{i}]")
        try:
            type_name = entry.get("type")
            if not isinstance(type_name, str):
                raise field_error("type", "Expected a string.")
            try:
                dt = TensorDataType.from_any(type_name)
            except ValueError as exc:
                raise field_error("type", str(exc)) from None
            if dt is TensorDataType.UNKNOWN or dt.is_4bit:
                raise field_error("type", f"{dt} has no element size.")
            if "value" not in entry:
                raise ModelError("Field 'value' is required.")
            try:
                parts.append(parse_scalar(entry["value"], dt).tobytes())
            except ModelError as exc:
                raise exc.within("Error parsing field 'value'") from None
        except ModelError as exc:
            raise exc.within(f"element {i}") from None
    return b"".join(parts)


def _deferred(name: str, obj: Mapping[str, Any], dt: TensorDataType) -> ResourceSpec:
    """``"initialValues": "deferred"``: no memory; DxDispatch leaves it to an ONNX dispatchable's output.

    DxDispatch reads nothing else of such a resource (its size is 0, its other fields
    unread), and only an ONNX dispatchable gives it memory, when ONNX Runtime allocates
    an output of a shape known only at run time. So a DirectML operator cannot bind it
    and ``print``/``writeFile`` find nothing (checked in the reader).
    """
    ignored = [k for k in ("sizeInBytes", "initialValuesOffsetInBytes", "resampleSize", "resampleMode") if k in obj]
    if ignored:
        names = ", ".join(f"'{k}'" for k in ignored)
        warnings.warn(
            f"resource '{name}': field(s) {names} ignored: the resource is deferred", UnknownFieldWarning, stacklevel=2
        )
    return ResourceSpec(name, dt, 0, 0, 0, "deferred", _copy_fill(b""))


def parse_resource(name: str, obj: Any, base_dir: Path) -> ResourceSpec:
    """Read one entry of ``resources`` (DxDispatch's ParseModelBufferDesc).

    Raises
    ------
    ModelError
        With DxDispatch's wording where it has one.
    """
    if not isinstance(obj, Mapping):
        raise ModelError("Expected a non-null JSON object.")
    warn_unknown(obj, RESOURCE_FIELDS, f"resource '{name}'")
    dt = _data_type_field(obj)
    if "initialValues" not in obj:
        raise ModelError("Field 'initialValues' is required.")
    init = obj["initialValues"]
    try:
        if isinstance(init, str):
            if init == "deferred":
                return _deferred(name, obj, dt)
            raise ModelError("The 'initialValues' string may only be 'deferred'.")
        if isinstance(init, list):
            if dt is TensorDataType.UNKNOWN:
                data, kind = _typed_list(init), "list"
            else:
                data, kind = parse_typed_array(init, dt).tobytes(), "array"
            count, fill = len(data), _copy_fill(data)
        elif isinstance(init, Mapping):
            generators = [k for k in ("value", "valueStart", "sourcePath") if k in init]
            if len(generators) > 1:
                raise ModelError(
                    "'initialValues' may contain a value, valueStart, or sourcePath, but they are mutually exclusive."
                )
            if not generators:
                raise ModelError("Error parsing 'initialValues' object: unknown generator type.")
            kind = {"value": "constant", "valueStart": "sequence", "sourcePath": "file"}[generators[0]]
            known = {
                "constant": ("value", "valueCount"),
                "sequence": ("valueStart", "valueDelta", "valueCount"),
                "file": ("sourcePath",),
            }[kind]
            warn_unknown(init, known, f"resource '{name}' initialValues")
            if kind == "constant":
                count, fill = _constant(init, dt)
            elif kind == "sequence":
                count, fill = _sequence(init, dt)
            else:
                count, fill, dt, kind = _read_file(obj, init, dt, base_dir)
        else:
            raise ModelError("Field 'initialValues' must be an array of numbers, an object, or deferred.")
    except ModelError as exc:
        raise exc.within("Error parsing field 'initialValues'") from None
    if kind not in ("file", "image"):
        _warn_resample(obj, "only image sourcePaths read them")
    if not count:
        raise ModelError("'initialValues' must be non-empty.")
    size = _uint_field(obj, "sizeInBytes", required=False, default=count)
    if "sizeInBytes" not in obj:
        size = (size + 3) & ~3  # unless set explicitly, round up to a multiple of 4 bytes
    offset = _uint_field(obj, "initialValuesOffsetInBytes", required=False)
    check_allocation(size, "the buffer (sizeInBytes)" if "sizeInBytes" in obj else "the buffer")
    if count + offset > size:
        raise ModelError(
            f"The buffer size ({size} bytes) is too small for the initialValues ({count} bytes) "
            f"at offset {offset} bytes."
        )
    return ResourceSpec(name, dt, count, size, offset, kind, fill)
