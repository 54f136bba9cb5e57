"""TensorDesc: the mirror of DML_BUFFER_TENSOR_DESC (spec section 7)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .dml_json import parse_enum, parse_flags, parse_uint, parse_uint_array, warn_unknown_fields
from .enums import TensorDataType, TensorFlags, TensorType
from .errors import DescParseError, DescTypeError, InvalidDescError
from .memory import check_allocation

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


OVERLAP_SEARCH_LIMIT = 1 << 22
"""Candidates (step vectors or offsets) the exact overlap search enumerates at once."""

Overlap = tuple[tuple[int, ...], tuple[int, ...]]


def overlapping_elements(sizes: Sequence[int], strides: Sequence[int]) -> Overlap | None:
    """Two element indices of a strided tensor at the same address, or None if there are none.

    Exact for any sizes and (non-negative, element) strides. Elements ``p != q`` share an
    address when ``sum(d[i] * strides[i]) == 0`` for ``d = p - q``, a non-zero step
    vector with ``|d[i]| < sizes[i]``. A dimension of size 1 has no step, so its stride
    never matters; a stride of 0 on a larger dimension overlaps at once. Then:

    1. **Sufficient test.** With the dimensions sorted by stride, if every stride exceeds
       the extent ``sum((size - 1) * stride)`` of the smaller ones, offsets are mixed-radix
       numbers and all distinct (packed, padded and permuted layouts). This is the common
       case and costs a sort of at most 8 dimensions.
    2. **Reduction.** A dimension whose stride exceeds the extent of *all* the others
       cannot take part in a collision (a step along it is never undone by the others),
       so it is dropped, largest stride first; what remains is the "core".
    3. **Exact search on the core**, the cheapest of:
       a. enumerate the step vectors of every core dimension but the one with most
          elements, ``L``: their sums ``v`` collide when ``v == 0`` for a non-zero step,
          or when ``v`` is a multiple ``k * strides[L]`` with ``0 < |k| < sizes[L]``
          (then ``d[L] = -k``); cost ``prod(2 * size - 1)`` over the others;
       b. enumerate the core's offsets and sort them; cost its element count;
       c. beyond ``OVERLAP_SEARCH_LIMIT`` candidates for both, mark the offsets in a
          byte map of the addressed span, ``OVERLAP_SEARCH_LIMIT`` offsets at a time
          (memory: one byte per addressed element, at most the output buffer's own
          element count, checked with :func:`dmlops.memory.check_allocation`).

    Returns
    -------
    (p, q) or None
        Two distinct indices (full rank, size-1 dimensions at 0) at the same offset.
    """
    dims = [i for i, n in enumerate(sizes) if n > 1]
    for i in dims:
        if strides[i] == 0:
            p = [0] * len(sizes)
            p[i] = 1
            return tuple(p), (0,) * len(sizes)
    # 1. Sufficient test, dimensions by increasing stride.
    dims.sort(key=lambda i: strides[i])
    extent = 0
    for i in dims:
        if strides[i] <= extent:
            break
        extent += (sizes[i] - 1) * strides[i]
    else:
        return None
    # 2. Drop dimensions that out-stride all the others, largest stride first.
    core = list(dims)
    rest = sum((sizes[i] - 1) * strides[i] for i in core)
    while core:
        top = core[-1]
        rest -= (sizes[top] - 1) * strides[top]
        if strides[top] <= rest:
            rest += (sizes[top] - 1) * strides[top]
            break
        core.pop()
    # 3. Exact search on the core (at least two dimensions: one alone never collides).
    longest = max(core, key=lambda i: sizes[i])
    others = [i for i in core if i != longest]
    steps = math.prod(2 * sizes[i] - 1 for i in others)
    elements = math.prod(sizes[i] for i in core)
    if steps <= OVERLAP_SEARCH_LIMIT and (steps <= elements or elements > OVERLAP_SEARCH_LIMIT):
        d = _colliding_step(sizes, strides, others, longest)
    elif elements <= OVERLAP_SEARCH_LIMIT:
        d = _colliding_offsets(sizes, strides, core)
    else:
        d = _colliding_offsets_mapped(sizes, strides, core)
    if d is None:
        return None
    # p - q = d with both in range: p takes the positive steps, q the negative ones.
    return tuple(max(v, 0) for v in d), tuple(max(-v, 0) for v in d)


def _colliding_step(sizes: Sequence[int], strides: Sequence[int], others: list[int], longest: int) -> list[int] | None:
    """3a: a non-zero step vector whose offsets cancel, searched over ``others``, solving ``longest``."""
    grids = np.meshgrid(*(np.arange(1 - sizes[i], sizes[i], dtype=np.int64) for i in others), indexing="ij")
    sums = sum((g * strides[i] for g, i in zip(grids, others)), np.zeros_like(grids[0])).reshape(-1)
    n, s = sizes[longest], strides[longest]
    origin = np.ravel_multi_index(tuple(sizes[i] - 1 for i in others), grids[0].shape)
    hits = (sums % s == 0) & (np.abs(sums) < n * s)
    hits[origin] = False  # the zero step of ``others`` needs d[longest] = 0: no step at all
    found = np.flatnonzero(hits)
    if not found.size:
        return None
    d = [0] * len(sizes)
    for g, i in zip(grids, others):
        d[i] = int(g.reshape(-1)[found[0]])
    d[longest] = -int(sums[found[0]]) // s
    return d


def _offsets(sizes: Sequence[int], strides: Sequence[int], dims: list[int]) -> NDArray[np.int64]:
    """Element offsets of the sub-tensor spanned by ``dims`` (C order over ``dims``)."""
    grid = np.zeros((1,) * len(dims), dtype=np.int64)
    for k, i in enumerate(dims):
        shape = [1] * len(dims)
        shape[k] = sizes[i]
        grid = grid + np.arange(sizes[i], dtype=np.int64).reshape(shape) * strides[i]
    return grid.reshape(-1)


def _step_between(sizes: Sequence[int], dims: list[int], a: int, b: int) -> list[int]:
    """The step vector from flat index ``b`` to ``a`` of the sub-tensor spanned by ``dims``."""
    shape = tuple(sizes[i] for i in dims)
    d = [0] * len(sizes)
    for i, x, y in zip(dims, np.unravel_index(a, shape), np.unravel_index(b, shape)):
        d[i] = int(x) - int(y)
    return d


def _colliding_offsets(sizes: Sequence[int], strides: Sequence[int], core: list[int]) -> list[int] | None:
    """3b: sort the core's offsets and look for a repeat."""
    offsets = _offsets(sizes, strides, core)
    order = np.argsort(offsets, kind="stable")
    repeats = np.flatnonzero(offsets[order][1:] == offsets[order][:-1])
    if not repeats.size:
        return None
    return _step_between(sizes, core, int(order[repeats[0] + 1]), int(order[repeats[0]]))


def _colliding_offsets_mapped(sizes: Sequence[int], strides: Sequence[int], core: list[int]) -> list[int] | None:
    """3c: mark every offset in a byte map, a block of inner dimensions at a time."""
    span = sum((sizes[i] - 1) * strides[i] for i in core) + 1
    check_allocation(span, f"the overlap check of an output of {math.prod(sizes[i] for i in core)} elements")
    inner: list[int] = []
    for i in core:  # increasing stride: the innermost block holds the smallest strides
        if math.prod(sizes[j] for j in inner) * sizes[i] > OVERLAP_SEARCH_LIMIT:
            break
        inner.append(i)
    outer = [i for i in core if i not in inner]
    block = _offsets(sizes, strides, inner)
    within = _colliding_offsets(sizes, strides, inner) if inner else None
    if within is not None:
        return within
    seen = np.zeros(span, dtype=np.bool_)
    for index in np.ndindex(*(sizes[i] for i in outer)):
        base = sum(k * strides[i] for k, i in zip(index, outer))
        offsets = block + base
        taken = np.flatnonzero(seen[offsets])
        if taken.size:
            return _first_step_to(sizes, strides, core, inner, outer, index, int(offsets[taken[0]]), int(taken[0]))
        seen[offsets] = True
    return None


def _first_step_to(
    sizes: Sequence[int],
    strides: Sequence[int],
    core: list[int],
    inner: list[int],
    outer: list[int],
    index: tuple[int, ...],
    offset: int,
    position: int,
) -> list[int]:
    """The step from the first element at ``offset`` to element (``index``, ``position``)."""
    block = _offsets(sizes, strides, inner)
    shape = tuple(sizes[i] for i in inner)
    later = dict(zip(outer, index)) | dict(zip(inner, (int(v) for v in np.unravel_index(position, shape))))
    for earlier_index in np.ndindex(*(sizes[i] for i in outer)):
        base = sum(k * strides[i] for k, i in zip(earlier_index, outer))
        hit = np.flatnonzero(block + base == offset)
        if hit.size:
            earlier = dict(zip(outer, earlier_index))
            earlier |= dict(zip(inner, (int(v) for v in np.unravel_index(int(hit[0]), shape))))
            d = [0] * len(sizes)
            for i in core:
                d[i] = later[i] - earlier[i]
            return d
    raise AssertionError("unreachable: the offset was marked by an earlier block")


def check_member_names(obj: Mapping[Any, Any], struct: str) -> None:
    """DescTypeError unless every key of a DxDispatch desc dict is a string (JSON's are)."""
    bad = [k for k in obj if not isinstance(k, str)]
    if bad:
        shown = ", ".join(repr(k) for k in bad[:5])
        raise DescTypeError(f"{struct}: member names must be strings; got {shown}", struct=struct)


def _as_uint(value: Any, where: str, *, struct: str = BUFFER_TENSOR_DESC, bits: int = 32) -> int:
    """A UINT member (``bits`` 64 for UINT64 ones): an integer in [0, 2^bits)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise DescTypeError(
            f"{struct}.{where}: must be an unsigned integer; got {value!r}",
            struct=struct,
            member=where,
        )
    if not 0 <= value < 1 << bits:
        raise InvalidDescError(
            f"{struct}.{where}: must be an unsigned integer below 2^{bits}; got {value!r}", struct=struct, member=where
        )
    return int(value)


def _uint_tuple(values: Any, where: str) -> tuple[int, ...]:
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__"):
        raise DescTypeError(
            f"{BUFFER_TENSOR_DESC}.{where}: must be a sequence of unsigned integers; got {values!r}",
            struct=BUFFER_TENSOR_DESC,
            member=where,
        )
    try:
        items = list(values)
    except TypeError:  # e.g. a 0-d array
        raise DescTypeError(
            f"{BUFFER_TENSOR_DESC}.{where}: must be a sequence of unsigned integers; got {values!r}",
            struct=BUFFER_TENSOR_DESC,
            member=where,
        ) from None
    return tuple(_as_uint(v, f"{where}[{i}]") for i, v in enumerate(items))


def _enum_member_error(member: str, exc: ValueError, value: Any) -> InvalidDescError:
    """InvalidDescError for an unknown name or value; DescTypeError when it is not even a name or value."""
    message = f"{BUFFER_TENSOR_DESC}.{member}: {exc}"
    if isinstance(value, (str, int, np.integer)):
        return InvalidDescError(message, struct=BUFFER_TENSOR_DESC, member=member)
    return DescTypeError(f"{message} (got {type(value).__name__})", struct=BUFFER_TENSOR_DESC, member=member)


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
            raise _enum_member_error("DataType", exc, self.data_type) from None
        try:
            flags = TensorFlags.from_any(self.flags)
        except ValueError as exc:
            raise _enum_member_error("Flags", exc, self.flags) from None
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
            total = _as_uint(total, "TotalTensorSizeInBytes", bits=64)
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

    @property
    def bound_size_in_bytes(self) -> int:
        """Bytes of the buffer bound to this tensor.

        TotalTensorSizeInBytes (at least the addressed span) rounded up to a multiple of 4,
        as DirectML requires.
        """
        span = self.addressed_element_span * self.dtype.itemsize
        return (max(self.total_tensor_size_in_bytes, span) + 3) & ~3

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
        check_member_names(value, BUFFER_TENSOR_DESC)
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
