"""Data movement on the CPU backend: GATHER, SLICE1, CAST, the copy programs and the indexing operators.

GATHER
------
GATHER on the CPU: ``np.take(..., out=, mode="clip")`` into the output view, over threads.

The indices are normalised first (one wrap of negative signed indices) into one
``intp`` copy (small next to the rows they select): signed indices in one numba pass
that also counts the indices outside the axis, unsigned ones with ``np.minimum`` in
their own type and a comparison. When one is out of range, or IndexDimensions 0 has
OutputTensor.Sizes[0] > 1, the gather reads the input's bound buffer at
:func:`~dmlops.descs.data_movement.gather_read_addresses` instead (DirectML's flat
address clamp, erratum E41; the same NumPy code as the reference). Strict mode uses the semantics layer's
:func:`~dmlops.descs.data_movement.normalize_indices`, which raises DataIndexError for
the first bad index; the reference's NumPy passes took 20 ms for 1M int64 indices
(a sixth of the benchmark gather), the numba pass 0.5 ms. ``mode="clip"`` then
never changes an index; it is chosen because ``np.take(out=)`` buffers the whole
output in its default ``mode="raise"``. Bit-exact for every type.

SLICE1
------
SLICE1 on the CPU: one strided view of the input, copied into the output view.

The copy is :func:`._copy.copy_into`'s: large copies whose rows are contiguous in both
views stream whole vectors (``_stream.copy``), others are NumPy's ``np.copyto`` of the
(negative- or positive-stride) view, split over threads when large and strided;
bit-exact for every type.

CAST
----
CAST on the CPU: into float types ``np.copyto(..., casting="unsafe")`` (NumPy's
``astype``: rounding to nearest even, as the reference). Between contiguous arrays on
x86-64, FLOAT32 to FLOAT16 (with F16C) and floats to 8- and 16-bit integers run as 64-byte
vector conversions with streaming stores for large outputs (:func:`._stream.convert`: the
hardware's rounding, NumPy's NaN bits; DirectML's truncation and saturation); elsewhere
FLOAT32 to FLOAT16 is one numba pass on the bits (NumPy's conversion rule, NaN payloads
included, in integer operations). Other casts into integer types run one numba
pass per element with the reference's rules (:func:`~dmlops.descs.data_movement.cast_array`:
floats truncated with NaN -> 0 and saturated; integers through a 32- or 64-bit register,
saturated with the target's signedness), over threads. FLOAT16 sources and views that
are not contiguous run ``cast_array`` itself on blocks of the output, so its temporaries
stay small. Bit-exact for every pair of types.

The copy programs
-----------------
SLICE, JOIN, SPLIT, DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1) and FILL_VALUE_CONSTANT run their
copy programs (:mod:`dmlops.descs._copy_programs`): each step is a strided view of its
source and destination arrays (``as_strided`` from the step's start element), copied as
SLICE1's are, or filled. PADDING(1) and TILE run one pass over the output's rows from
their separable-gather tables (``_separable_rows``; outputs whose last axis is strided,
that repeat elements or overlap the input keep the copy program). Bit-exact for every type.

The indexing operators
----------------------
GATHER_ELEMENTS, SCATTER_ELEMENTS, ONE_HOT, REVERSE_SUBSEQUENCES, DIAGONAL_MATRIX(1) and
NONZERO_COORDINATES are numba kernels (``nogil``, on the backend's threads) that read
and write every array through its own strides (broadcast, reversed and strided views
and outputs in place, no copies), elements moved as unsigned integers of their size
(bit-exact for every type). Each applies the semantics layer's rules per element
(:func:`~dmlops.descs.data_movement.index_values`' one wrap, ``one_hot_positions``,
``reverse_sources``, ``diagonal_fill``, ``padding_value``). An index out of range is
counted by the kernel, and the semantics layer's ``check_indices`` then raises the
reference's DataIndexError. A scatter first copies the input into the output, then
writes its updates in row-major order per line along Axis (threads take whole blocks of
lines), so the last duplicate wins as in the reference (E163); strict mode's checks
are the semantics layer's (``check_indices``, ``refuse_duplicates``).

GATHER_ND(1) and SCATTER_ND take the coordinates from ``nd_coordinates`` (index-sized
arrays), turn each index tuple into its slab's start offset, and copy the slabs with
one kernel (gathers over threads, scatters on one thread in row-major order). Reads
out of range take the reference's path: DirectML's flat clamp for 32-bit data
(``flat_addresses``, E160), DataIndexError otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .._numpy_io import input_memory
from ..descs._copy_programs import PROGRAMS, Affine, Fill, copy_program
from ..descs._separable_gathers import separable_gather
from ..descs.data_movement import (
    GatherDesc,
    Slice1Desc,
    cast_array,
    check_indices,
    coordinates_in_range,
    elements_coordinates,
    flat_addresses,
    gather_read_addresses,
    nd_coordinates,
    normalize_indices,
    padding_value,
    refuse_duplicates,
    sequence_values,
    wraps_negative,
)
from ..enums import FeatureLevel
from . import _stream
from ._common import flat_memory as _memory
from ._copy import copy_into, run_chunks
from ._gather import LANES, gather_step
from ._repeat import Repeat
from ._threads import on_threads, run_kernel, threads_for

# -- GATHER --------------------------------------------------------------------


@njit(cache=True)
def _normalize_signed(indices, n, wrap, out):  # type: ignore[no-untyped-def]  # pragma: no cover
    top = n - 1
    bad = 0
    for i in range(indices.size):
        v = np.int64(indices[i])
        if wrap and v < 0:  # one wrap
            v += n
        if v < 0 or v > top:
            bad += 1
        out[i] = min(max(v, 0), top)
    return bad


def normalized(indices: NDArray[Any], n: int, *, wrap: bool, strict: bool, what: str) -> NDArray[np.intp] | None:
    """``normalize_indices`` without its temporaries when not strict; None when an index is out of range.

    Strict mode raises DataIndexError for the first index out of range instead.
    """
    if strict:
        return normalize_indices(indices, n, wrap_negative=wrap, strict=True, what=what)
    out = np.empty(indices.shape, np.intp)
    if indices.dtype.kind == "u":
        top = indices.dtype.type(n - 1)
        if indices.size and indices.max() > top:
            return None
        np.copyto(out, indices, casting="unsafe")  # every value <= n - 1
    elif _normalize_signed(np.ascontiguousarray(indices).reshape(-1), n, wrap, out.reshape(-1)):
        return None
    return out


def _reshaped(out: NDArray[Any], shape: tuple[int, ...]) -> NDArray[Any] | None:
    """``out`` viewed with ``shape`` (only size-1 dims differ), or None if that needs a copy."""
    view = out.view()
    try:
        view.shape = shape
    except AttributeError:
        return None
    return view


def run_gather(
    desc: GatherDesc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """``Output[pre, mid, post] = Input[pre, Indices[0.., mid], post]`` into ``outputs["OutputTensor"]``."""
    # Dropped leading output entries other than 1: DirectML computes the slab at
    # coordinate 0 of those dimensions (GatherDesc.leading_slab).
    original = desc
    desc, x_slab, indices_slab = desc.leading_slab()
    x = inputs["InputTensor"][x_slab]
    axis = desc.axis
    n = desc.input_tensor.sizes[axis]
    wrap = desc.wraps_negative(feature_level)
    index = normalized(
        np.asarray(inputs["IndicesTensor"])[indices_slab],
        n,
        wrap=wrap,
        strict=strict,
        what=f"{desc.dml_name}.IndicesTensor",
    )
    if index is None or original.extra_slabs():
        # A read outside the input's elements: DirectML's flat address clamp (E41).
        memory = input_memory(original.input_tensor, inputs["InputTensor"])
        address = gather_read_addresses(original, inputs["IndicesTensor"], feature_level)
        np.copyto(outputs["OutputTensor"], memory[address])
        return
    d = desc.dimension_count
    index = index.reshape(desc.indices_tensor.sizes[d - desc.index_dimensions :])
    target = outputs["OutputTensor"]
    full = desc.full_output_sizes()
    out = _reshaped(target, full)
    scratch = None
    if out is None:  # a strided output view that cannot take the un-aligned shape
        scratch = np.empty(full, dtype=target.dtype)
        out = scratch
    # Copy bits: float types as unsigned integers of their size (NaN payloads survive).
    if x.dtype.kind == "f":
        uint = np.dtype(f"u{x.dtype.itemsize}")
        x, out = x.view(uint), out.view(uint)
    k = index.ndim

    def work(chunk: tuple[slice, ...]) -> None:
        # chunk slices the full output along one axis; map it onto x or the indices.
        pre, mid, post = chunk[:axis], chunk[axis : axis + k], chunk[axis + k :]
        select: tuple[slice, ...] = (*pre, slice(None), *post)
        source = x[select]
        # (an empty tuple would index a 0-d array down to a scalar)
        target_chunk = out[chunk] if chunk else out
        np.take(source, index[mid] if mid else index, axis=axis, out=target_chunk, mode="clip")

    run_chunks(full, out.nbytes, work)
    if scratch is not None:
        np.copyto(target, scratch.reshape(target.shape))


# -- SLICE1 --------------------------------------------------------------------


def window_view(desc: Slice1Desc, x: NDArray[Any]) -> NDArray[Any]:
    """``Input[CopyStart + InputWindowStrides * o]`` for every output coordinate ``o``, as a view."""
    index = tuple(
        slice(start, start + stride * n if start + stride * n >= 0 else None, stride)
        for start, stride, n in zip(desc.copy_start(), desc.input_window_strides, desc.output_tensor.sizes)
    )
    return x[index]


def run_slice1(
    desc: Slice1Desc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Copy the window into ``outputs["OutputTensor"]``."""
    copy_into(outputs["OutputTensor"], window_view(desc, inputs["InputTensor"]))


# -- CAST ----------------------------------------------------------------------

CAST_BLOCK = 1 << 16
"""Elements per block where ``cast_array`` runs on blocks (its float64/int64 temporaries)."""


@njit(cache=True, nogil=True, error_model="numpy")
def _float_to_int(x, out, lo, hi, first, end):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # truncate, NaN -> 0, saturate (the bounds compared in float64: 2^63 and 2^64 saturate)
    flo, fhi = np.float64(lo), np.float64(hi)
    for i in range(first, end):
        v = np.float64(x[i])
        if v != v:
            out[i] = 0
        elif v >= fhi:
            out[i] = hi
        elif v <= flo:
            out[i] = lo
        else:
            out[i] = np.trunc(v)


@njit(cache=True, nogil=True, error_model="numpy")
def _int_to_signed(x, out, lo, hi, width32, first, end):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # the register's value read as signed (32-bit: the low 32 bits' two's complement), saturated
    for i in range(first, end):
        v = np.int64(x[i])
        if width32:
            v = v & 0xFFFFFFFF
            if v >= 2147483648:
                v -= 4294967296
        out[i] = min(max(v, lo), hi)


@njit(cache=True, nogil=True, error_model="numpy")
def _int_to_unsigned(x, out, hi, width32, first, end):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # the register's value read as unsigned (32-bit: the low 32 bits), saturated to the maximum
    for i in range(first, end):
        v = np.uint64(np.int64(x[i]))  # the two's complement bits (a UINT64 keeps its own)
        if width32:
            v = v & np.uint64(0xFFFFFFFF)
        out[i] = min(v, hi)


@njit(cache=True, nogil=True, error_model="numpy")
def _float32_to_float16_bits(src, dst, first, end):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # FLOAT32 bits -> FLOAT16 bits, rounding to nearest even, exactly as NumPy's astype (the
    # reference): in integers, so that the loop vectorises (NumPy's own conversion is scalar here).
    for i in range(first, end):
        u = np.int64(src[i])
        a = u & 0x7FFFFFFF
        if a >= 0x7F800000:  # inf, NaN: the mantissa's top ten bits kept, a NaN kept a NaN (NumPy's rule)
            h = 0x7C00 + ((a & 0x7FFFFF) >> 13)
            if a > 0x7F800000 and h == 0x7C00:
                h = 0x7C01
        elif a >= 0x47800000:  # 2^16 and above: inf (65520 up to 2^16 reach it by rounding, below)
            h = 0x7C00
        elif a >= 0x38800000:  # a normal FLOAT16: exponent rebiased by -112, 13 bits rounded off
            h = (a - 0x38000000 + 0x0FFF + ((a >> 13) & 1)) >> 13
        else:  # a subnormal FLOAT16 or zero: round(|x| 2^24), nearest even
            e = a >> 23
            m = (a & 0x7FFFFF) | (0x800000 if e > 0 else 0)
            shift = 126 - e if e > 0 else 125
            if shift > 24:
                h = 0
            else:
                h = m >> shift
                rest = m & ((1 << shift) - 1)
                half = 1 << (shift - 1)
                if rest > half or (rest == half and (h & 1) == 1):
                    h += 1
        dst[i] = ((u >> 16) & 0x8000) | h


def _cast_blocks(x: NDArray[Any], out: NDArray[Any]) -> None:
    """``cast_array`` on blocks of ``CAST_BLOCK`` elements (any layout), one thread."""
    with np.nditer(
        [x, out],
        flags=["external_loop", "buffered", "zerosize_ok"],
        op_flags=[["readonly"], ["writeonly"]],
        buffersize=CAST_BLOCK,
    ) as it:
        for src, dst in it:
            dst[...] = cast_array(src, out.dtype)


def run_cast(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """``Output = cast(Input)`` into the output view (see the module docstring)."""
    x, out = inputs["InputTensor"], outputs["OutputTensor"]
    x = _readable(x, out)  # an overlapping input: threads would write parts another has not read yet
    if _stream.converts(x, out):  # FLOAT32 -> FLOAT16, floats -> 8- and 16-bit integers: vectors
        _stream.convert(out, x)
        return
    if x.dtype == np.float32 and out.dtype == np.float16 and x.flags.c_contiguous and out.flags.c_contiguous:
        bits32, bits16 = x.reshape(-1).view(np.uint32), out.reshape(-1).view(np.uint16)
        run_kernel(_float32_to_float16_bits, x.size, x.size, bits32, bits16)
        return
    if out.dtype.kind == "f":

        def work(index: tuple[slice, ...]) -> None:
            np.copyto(out[index], x[index], casting="unsafe")

        with np.errstate(over="ignore"):  # FLOAT64 beyond FLOAT32's range rounds to inf
            run_chunks(out.shape, out.nbytes, work)
        return
    if x.dtype == np.float16 or not (x.flags.c_contiguous and out.flags.c_contiguous):
        _cast_blocks(x, out)
        return
    src, dst = x.reshape(-1), out.reshape(-1)
    info = np.iinfo(out.dtype)
    width32 = max(x.dtype.itemsize, out.dtype.itemsize) < 8
    if x.dtype.kind == "f":
        run_kernel(_float_to_int, src.size, src.size, src, dst, info.min, info.max)
    elif info.min < 0:
        run_kernel(_int_to_signed, src.size, src.size, src, dst, info.min, info.max, width32)
    else:
        run_kernel(_int_to_unsigned, src.size, src.size, src, dst, np.uint64(info.max), width32)


# -- FILL_VALUE_SEQUENCE -----------------------------------------------------------


def run_fill_value_sequence(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """The semantics layer's ``sequence_values``, block by block of the output over threads."""
    out = outputs["OutputTensor"]
    rows = out.reshape(-1) if out.flags.c_contiguous else None
    if rows is None:  # a strided output: one pass through a packed temporary
        out[...] = sequence_values(desc, np.arange(out.size, dtype=np.int64)).reshape(out.shape)
        return

    def work(index: tuple[slice, ...]) -> None:
        part = index[0]
        for first in range(part.start or 0, part.stop if part.stop is not None else rows.size, CAST_BLOCK):
            last = min(first + CAST_BLOCK, part.stop if part.stop is not None else rows.size)
            rows[first:last] = sequence_values(desc, np.arange(first, last, dtype=np.int64))

    run_chunks(rows.shape, rows.nbytes, work)


# -- the copy programs -------------------------------------------------------------


def step_view(array: NDArray[Any], where: Affine, sizes: tuple[int, ...]) -> NDArray[Any]:
    """The elements ``where`` maps ``sizes`` to, as a view of ``array`` (read-only for a source)."""
    itemsize = array.itemsize
    _, strides = where.element_map([s // itemsize for s in array.strides])
    origin = array[tuple(slice(i, i + 1) for i in where.start)]  # a view whose first element is the start
    return np.lib.stride_tricks.as_strided(
        origin, shape=sizes, strides=[s * itemsize for s in strides], writeable=array.flags.writeable
    )


def run_copy_program(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Run the desc's copy program, step by step, into the output views."""
    arrays = {**inputs, **outputs}
    for step in copy_program(desc):
        dst = step_view(arrays[step.dst.member], step.dst, step.sizes)
        if isinstance(step, Fill):
            dst[...] = step.value
        else:
            copy_into(dst, step_view(arrays[step.src.member], step.src, step.sizes))


# -- the separable gathers (PADDING, TILE) --------------------------------------------
#
# ``Output[o] = Input[sum_d table_d[o_d]]`` (``descs._separable_gathers``) in one pass over the
# output's rows: each row's input offset and padding flag come from the outer axes' tables,
# and the row itself is a few segments of the innermost table (a fill, or a run of inputs at a
# constant step: PADDING's interior and TILE's repeats are runs of step 1, REFLECTION's
# borders step -1). Every output line is written once, in order; a copy program writes the
# borders in separate passes that come back to lines already written (PADDING ran at 0.70x
# the best peer that way). Plain stores: streaming stores measured slower here, both from a
# scratch row buffer (24-65 against 19-38 ms for the benchmark's PADDING) and element by
# element (``movnti``, 24.4 against 19.2 ms). Bits are moved: bit-exact for every type.


@njit(cache=True)
def _segments(offsets, pads):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # the innermost table as rows of (first column, length, input offset, input step, is fill):
    # maximal runs of fills, or of inputs at a constant step (greedy, left to right)
    n = offsets.size
    out = np.empty((n, 5), np.int64)
    count = 0
    j = 0
    while j < n:
        k = j + 1
        if pads[j]:
            while k < n and pads[k]:
                k += 1
            out[count, 0], out[count, 1], out[count, 2], out[count, 3], out[count, 4] = j, k - j, 0, 0, 1
        else:
            step = offsets[k] - offsets[j] if k < n and not pads[k] else 1
            while k < n and not pads[k] and offsets[k] - offsets[k - 1] == step:
                k += 1
            out[count, 0], out[count, 1], out[count, 2], out[count, 3], out[count, 4] = j, k - j, offsets[j], step, 0
        count += 1
        j = k
    return out[:count].copy()


@njit(cache=True, nogil=True, boundscheck=False)
def _separable_rows(x, x0, out, o0, os_, sizes, offsets, pads, starts, segments, fill, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # rows [lo, hi) of the output grid ``sizes``; outer axis d's table entries are
    # offsets/pads[starts[d] + c]; row r's elements go to out[prow + j] (the last axis contiguous)
    width = sizes[-1]
    for r in range(lo, hi):
        q, base, prow, padded = r, x0, o0, False
        for d in range(sizes.size - 2, -1, -1):
            c = q % sizes[d]
            q //= sizes[d]
            base += offsets[starts[d] + c]
            padded |= pads[starts[d] + c]
            prow += c * os_[d]
        if padded:
            for j in range(width):
                out[U(prow + j)] = fill
            continue
        for k in range(segments.shape[0]):
            p, n = prow + segments[k, 0], segments[k, 1]
            if segments[k, 4]:
                for j in range(n):
                    out[U(p + j)] = fill
                continue
            step, src = segments[k, 3], base + segments[k, 2]
            if step == 1:
                for j in range(n):
                    out[U(p + j)] = x[U(src + j)]
            else:
                for j in range(n):
                    out[U(p + j)] = x[U(src + j * step)]
    return 0


def _separable_takes(x: Array, out: Array) -> bool:
    """Whether :func:`run_separable_gather` serves these arrays: an output with contiguous rows, no overlap.

    (An output that repeats elements, a 0 stride, keeps the copy program, which writes them in order.)
    """
    return bool(
        out.ndim >= 1
        and out.strides[-1] == out.itemsize
        and all(s != 0 for s, n in zip(out.strides, out.shape) if n > 1)
        and _aligned(out)
        and _aligned(x)
        and out.itemsize in (1, 2, 4, 8)
        and not np.may_share_memory(x, out)
    )


def run_separable_gather(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """PADDING(1) and TILE as one pass over the output's rows (see the section comment)."""
    x, out = inputs["InputTensor"], outputs["OutputTensor"]
    if not _separable_takes(x, out):
        run_copy_program(desc, inputs, outputs, feature_level=feature_level, strict=strict)
        return
    gather = separable_gather(desc)
    xm, x0, xs = _memory(_bits(x))
    om, o0, os_ = _memory(_bits(out), writeable=True)
    tables = gather.element_offsets(tuple(int(v) for v in xs))
    outer = tables[:-1]
    starts = np.cumsum([0] + [len(t) for t in outer], dtype=np.int64)
    offsets = np.concatenate([*outer, np.zeros(1, np.int64)])
    pads = np.concatenate([*gather.padding[:-1], np.zeros(1, bool)])
    segments = _segments(np.ascontiguousarray(tables[-1], np.int64), np.ascontiguousarray(gather.padding[-1]))
    fill = np.asarray(0 if gather.fill is None else gather.fill, out.dtype).reshape(1).view(om.dtype)[0]
    sizes, rows = _grid(out.shape)
    _parallel(_separable_rows, rows, out.size, xm, x0, om, o0, os_, sizes, offsets, pads, starts, segments, fill)


# -- the indexing operators --------------------------------------------------------
#
# Every kernel sees its arrays as (1-D memory, offset of element 0, element strides) over
# one grid (the result's or the indices' sizes), walks the grid's rows (every dimension
# but the last, row-major) in [lo, hi) and the last dimension inside a row, and moves
# elements as unsigned integers of their size, so every type (FLOAT16 included) is
# copied bit for bit. Index rules are the semantics layer's (index_values,
# one_hot_positions, reverse_sources, diagonal_fill), written per element; where an
# index is out of range the kernels count it and the Python side raises through the
# same helpers the reference uses (check_indices), so the errors are the reference's.

U = np.uint64
"""The kernels index memory with ``U(offset)``: numba then skips its negative-index wraparound
(a signed index costs a compare and select per access: 52 -> 30 ms for the 16M-element
GATHER_ELEMENTS benchmark on one thread). Every offset is in range, so the cast is exact."""

Array = NDArray[Any]


def _bits(a: Array) -> Array:
    """``a`` viewed as unsigned integers of its itemsize (the kernels copy bits)."""
    return a.view(np.dtype(f"u{a.itemsize}")) if a.dtype.kind in "fb" else a


def _aligned(a: Array) -> bool:
    return all(s % a.itemsize == 0 for s in a.strides)


def _readable(a: Array, *outs: Array) -> Array:
    """``a``, or a copy when an output overlaps it (outputs are written while inputs are read) or it is unaligned."""
    return a.copy() if not _aligned(a) or any(np.may_share_memory(a, o) for o in outs) else a


def _same_view(a: Array, b: Array) -> bool:
    """``a`` and ``b`` address the same elements in the same order."""
    return bool(
        a.shape == b.shape
        and a.strides == b.strides
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    )


def _out_memory(out: Array) -> tuple[Array, int, Array]:
    """:func:`_memory` of an output's bits, writeable (what the kernels write)."""
    return _memory(_bits(out), writeable=True)


class _Out:
    """An output written through its memory, or through an aligned scratch array copied in afterwards."""

    def __init__(self, out: Array, *, keep: bool = False) -> None:
        self.out = out
        if _aligned(out):
            self.array = out
        else:  # ``keep``: the scratch starts as the output's values (a scatter's copied input)
            self.array = out.copy() if keep else np.empty(out.shape, out.dtype)

    def memory(self) -> tuple[Array, int, Array]:
        return _out_memory(self.array)

    def done(self) -> None:
        if self.array is not self.out:
            np.copyto(self.out, self.array)


def _grid(shape: tuple[int, ...]) -> tuple[Array, int]:
    """(int64 sizes of a grid of at least one dimension, its row count)."""
    sizes = np.array(shape if shape else (1,), np.int64)
    return sizes, int(np.prod(sizes[:-1]))


def _parallel(kernel: Callable[..., Any], rows: int, elements: int, *args: Any, unit: int = 1) -> int:
    """``kernel(*args, lo, hi)`` over ``rows`` in ranges of whole ``unit``s (``run_kernel``).

    Returns the sum of the kernels' results (their counts of indices out of range). ``rows``
    is a multiple of ``unit``.
    """
    if unit <= 1:
        return sum(int(count) for count in run_kernel(kernel, rows, elements, *args))

    def whole_units(*a: Any) -> Any:  # the kernel over the rows of units [lo, hi)
        return kernel(*a[:-2], a[-2] * unit, a[-1] * unit)

    return sum(int(count) for count in run_kernel(whole_units, rows // unit, elements, *args))


def _index_wraps(indices: Array, data_type: Any, feature_level: FeatureLevel) -> bool:
    """:func:`index_values`'s wrap: signed types from FL 3_0, and UINT64 (read as INT64) always."""
    return wraps_negative(data_type, feature_level) or indices.dtype == np.uint64


@njit(cache=True, nogil=True)
def _row_coordinates(r, sizes, c):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # c[0 .. d-2] = the outer coordinates of row r of a grid of ``sizes`` (rows: all but the last axis)
    q = r
    for i in range(sizes.size - 2, -1, -1):
        c[i] = q % sizes[i]
        q //= sizes[i]


@njit(cache=True, nogil=True)
def _row_offset(base, c, strides):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # the element offset of a row: base plus its outer coordinates c (c.size - 1 of them) times the strides
    for i in range(c.size - 1):
        base += c[i] * strides[i]
    return base


@njit(cache=True, nogil=True)
def _gather_elements(x, xo, xs, xa, idx, io, is_, out, oo, os_, sizes, n, wrap, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # out[o] = x[o with o[Axis] = wrap(idx[o])]; xs has 0 on Axis, xa is x's stride there.
    d = sizes.size
    bad = 0
    sx, si, so = xs[d - 1], is_[d - 1], os_[d - 1]  # (locals: numba reloads array elements after stores)
    c = np.zeros(d, np.int64)
    for r in range(lo, hi):
        _row_coordinates(r, sizes, c)
        px, pi, po = _row_offset(xo, c, xs), _row_offset(io, c, is_), _row_offset(oo, c, os_)
        for j in range(sizes[d - 1]):
            v = np.int64(idx[U(pi + j * si)])  # a UINT64 >= 2^63 reads as negative (index_values)
            if wrap and v < 0:
                v += n
            if v < 0 or v >= n:
                bad += 1
                continue
            out[U(po + j * so)] = x[U(px + j * sx + v * xa)]
    return bad


@njit(cache=True, nogil=True, inline="always")
def _row_views(r, c, sizes, x, xo, xs, idx, io, is_, out, oo, os_, n):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # row r of a last-axis GATHER_ELEMENTS whose three last strides are 1: the input row (n
    # elements), the index row and the output row as slices (c: scratch for the coordinates)
    m = sizes[sizes.size - 1]
    _row_coordinates(r, sizes, c)
    px, pi, po = _row_offset(xo, c, xs), _row_offset(io, c, is_), _row_offset(oo, c, os_)
    return x[px : px + n], idx[pi : pi + m], out[po : po + m]


_GATHER_STEP = gather_step()


@njit(cache=True, nogil=True, boundscheck=False)
def _gather_elements_rows(x, xo, xs, idx, io, is_, out, oo, os_, sizes, n, wrap, vector, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # _gather_elements along a last Axis whose three strides are 1: each row a slice, so the
    # inner loop has no stride arithmetic; with vector (elements of 4 or 8 bytes) LANES elements
    # at a time through one vector gather (_gather.py), the rest one by one
    bad = 0
    c = np.zeros(sizes.size, np.int64)
    lanes = LANES if vector else 0
    for r in range(lo, hi):
        xr, ir, orow = _row_views(r, c, sizes, x, xo, xs, idx, io, is_, out, oo, os_, n)
        m = orow.size
        j = 0
        if vector:
            while j + lanes <= m:
                bad += _GATHER_STEP(xr, ir, orow, j, n, wrap)
                j += lanes
        for k in range(j, m):
            v = np.int64(ir[k])  # a UINT64 >= 2^63 reads as negative (index_values)
            if wrap and v < 0:
                v += n
            if U(v) < U(n):  # unsigned: a negative index is out of range too
                orow[k] = xr[U(v)]
            else:
                bad += 1
    return bad


@njit(cache=True, nogil=True)
def _scatter_elements(x, xo, xs, xa, fuse, upd, uo, us, idx, io, is_, out, oo, os_, oa, sizes, n, wrap, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # out[u with u[Axis] = wrap(idx[u])] = upd[u], row-major: the last duplicate wins (E163).
    # fuse (Axis the last dimension): each output row is first copied from the input's, while in cache.
    d = sizes.size
    bad = 0
    su, si, so = us[d - 1], is_[d - 1], os_[d - 1]
    c = np.zeros(d, np.int64)
    for r in range(lo, hi):
        _row_coordinates(r, sizes, c)
        px, pu = _row_offset(xo, c, xs), _row_offset(uo, c, us)
        pi, po = _row_offset(io, c, is_), _row_offset(oo, c, os_)
        if fuse:
            for j in range(n):
                out[U(po + j * oa)] = x[U(px + j * xa)]
        for j in range(sizes[d - 1]):
            v = np.int64(idx[U(pi + j * si)])
            if wrap and v < 0:
                v += n
            if v < 0 or v >= n:
                bad += 1
                continue
            out[U(po + j * so + v * oa)] = upd[U(pu + j * su)]
    return bad


def _elements_error(
    desc: Any, indices: Array, feature_level: FeatureLevel, sizes: tuple[int, ...], scatter: bool
) -> None:
    """Raise the reference's DataIndexError for an index outside its axis (found by a kernel)."""
    axis = int(desc.axis)
    wrap = wraps_negative(desc.indices_tensor.data_type, feature_level)
    coordinates = elements_coordinates(desc.indices_tensor.sizes, axis, indices, sizes[axis], wrap_negative=wrap)
    check_indices(f"{desc.dml_name}.IndicesTensor", coordinates, sizes, [axis], scatter=scatter)
    raise AssertionError("a kernel found an index out of range that check_indices accepts")  # pragma: no cover


def _off_axis(strides: Array, axis: int) -> tuple[Array, int]:
    """(the strides with 0 on ``axis``, the stride on ``axis``)."""
    off = strides.copy()
    off[axis] = 0
    return off, int(strides[axis])


def run_gather_elements(
    desc: Any,
    inputs: Mapping[str, Array],
    outputs: Mapping[str, Array],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> Repeat | None:
    """``Output[o] = Input[o with o[Axis] = Indices[o]]``; DataIndexError for an index outside the axis (E160).

    Returns the call's repeat (``_repeat``) unless it read a copy of an input or wrote a scratch output.
    """
    target = outputs["OutputTensor"]
    x = _readable(inputs["InputTensor"], target)
    indices = _readable(inputs["IndicesTensor"], target)
    out = _Out(target)
    launch = _gather_elements_launch(desc, x, indices, out.array, feature_level)
    launch(x, indices, out.array)
    out.done()
    if x is not inputs["InputTensor"] or indices is not inputs["IndicesTensor"] or out.array is not target:
        return None
    return Repeat(lambda ins, outs: launch(ins["InputTensor"], ins["IndicesTensor"], outs["OutputTensor"]))


def _gather_elements_launch(
    desc: Any, x: Array, indices: Array, target: Array, feature_level: FeatureLevel
) -> Callable[[Array, Array, Array], None]:
    """``launch(x, indices, out)``: GATHER_ELEMENTS's kernel, planned for arrays of these layouts."""
    axis, n = int(desc.axis), desc.input_tensor.sizes[int(desc.axis)]
    wrap = _index_wraps(indices, desc.indices_tensor.data_type, feature_level)
    _, xo, xs = _memory(_bits(x))
    _, io, is_ = _memory(indices)
    _, oo, os_ = _out_memory(target)
    xs, xa = _off_axis(xs, axis)
    sizes, rows = _grid(target.shape)
    rows_kernel = axis == target.ndim - 1 and xa == 1 and is_[-1] == 1 and os_[-1] == 1
    kernel: Callable[..., Any] = _gather_elements_rows if rows_kernel else _gather_elements
    # the vector gather's loads and stores assume elements at addresses that are multiples of their size
    vector = target.itemsize in (4, 8) and all(a.flags.aligned for a in (x, indices, target))

    def launch(x: Array, indices: Array, out: Array) -> None:
        if not out.size:
            return
        xm, im, om = _memory(_bits(x))[0], _memory(indices)[0], _out_memory(out)[0]
        if rows_kernel:
            args: tuple[Any, ...] = (xm, xo, xs, im, io, is_, om, oo, os_, sizes, n, wrap, vector)
        else:
            args = (xm, xo, xs, xa, im, io, is_, om, oo, os_, sizes, n, wrap)
        if _parallel(kernel, rows, out.size, *args):
            _elements_error(desc, indices, feature_level, desc.input_tensor.sizes, scatter=False)

    return launch


def run_scatter_elements(
    desc: Any,
    inputs: Mapping[str, Array],
    outputs: Mapping[str, Array],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """``Output = Input``, then ``Output[u with u[Axis] = Indices[u]] = Updates[u]`` (the last duplicate wins).

    Threads take whole blocks of rows in which every line along Axis lies (all rows when
    Axis is the last dimension), so each line's updates land in row-major order.
    """
    target = outputs["OutputTensor"]
    indices = _readable(inputs["IndicesTensor"], target)
    updates = _readable(inputs["UpdatesTensor"], target)
    axis, sizes_in = int(desc.axis), desc.input_tensor.sizes
    what = f"{desc.dml_name}.IndicesTensor"
    if strict:  # the duplicates' check needs every coordinate: the semantics layer's NumPy passes
        wrap_strict = wraps_negative(desc.indices_tensor.data_type, feature_level)
        coordinates = elements_coordinates(
            desc.indices_tensor.sizes, axis, inputs["IndicesTensor"], sizes_in[axis], wrap_negative=wrap_strict
        )
        check_indices(what, coordinates, sizes_in, [axis], scatter=True)
        refuse_duplicates(what, sizes_in, coordinates)
    x = inputs["InputTensor"]
    d = len(indices.shape)
    # Axis last: the kernel copies each output row just before its updates (one pass over the output)
    fuse = axis == d - 1 and indices.size > 0 and _aligned(target) and not np.may_share_memory(x, target)
    if not fuse and not _same_view(x, target):  # an output bound to the input's own elements holds them
        copy_into(target, x)
    if indices.size == 0:
        return
    wrap = _index_wraps(indices, desc.indices_tensor.data_type, feature_level)
    out = _Out(target, keep=True)
    xm, xo, xs = _memory(_bits(_readable(x)))
    xs, xa = _off_axis(xs, axis)
    um, uo, us = _memory(_bits(updates))
    im, io, is_ = _memory(indices)
    om, oo, os_ = out.memory()
    os_, oa = _off_axis(os_, axis)
    sizes, rows = _grid(indices.shape)
    unit = int(np.prod(sizes[axis : d - 1])) if axis < d - 1 else 1  # rows of one block of lines
    args = (xm, xo, xs, xa, fuse, um, uo, us, im, io, is_, om, oo, os_, oa, sizes, sizes_in[axis], wrap)
    if _parallel(_scatter_elements, rows, indices.size, *args, unit=unit):
        _elements_error(desc, inputs["IndicesTensor"], feature_level, sizes_in, scatter=True)
    out.done()


@njit(cache=True, nogil=True)
def _one_hot(idx, io, is_, values, out, oo, os_, sizes, axis, n, wrap, whole, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # out[o] = values[1] where o[Axis] is the index's position (one_hot_positions), values[0] elsewhere
    d = sizes.size
    off, on = values[0], values[1]
    c = np.zeros(d, np.int64)
    for r in range(lo, hi):
        _row_coordinates(r, sizes, c)
        pi, po, along = _row_offset(io, c, is_), _row_offset(oo, c, os_), c[axis]
        for j in range(sizes[d - 1]):
            raw = idx[U(pi + j * is_[d - 1])]
            if whole:  # UINT64: compared whole
                p = np.int64(raw) if np.uint64(raw) < np.uint64(n) else np.int64(-1)
            else:  # the others by the low 32 bits after the one wrap (E161)
                v = np.int64(raw)
                if wrap and v < 0:
                    v += n
                p = v & 0xFFFFFFFF
                if p >= n:
                    p = -1
            at = j if axis == d - 1 else along
            out[U(po + j * os_[d - 1])] = on if at == p else off
    return 0


def run_one_hot(
    desc: Any,
    inputs: Mapping[str, Array],
    outputs: Mapping[str, Array],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """OffValue (ValuesTensor's first element) everywhere but OnValue (its second) at each index along Axis."""
    target = outputs["OutputTensor"]
    indices = _readable(inputs["IndicesTensor"], target)
    axis, n = int(desc.axis), target.shape[int(desc.axis)]
    values = _bits(np.asarray(inputs["ValuesTensor"]).reshape(-1)[:2].astype(target.dtype))  # bits kept
    wrap = wraps_negative(desc.indices_tensor.data_type, feature_level)
    out = _Out(target)
    im, io, is_ = _memory(indices)
    is_[axis] = 0  # IndicesTensor has size 1 on Axis: broadcast along it
    om, oo, os_ = out.memory()
    sizes, rows = _grid(target.shape)
    if target.size:
        args = (im, io, is_, values, om, oo, os_, sizes, axis, n, wrap, indices.dtype == np.uint64)
        _parallel(_one_hot, rows, target.size, *args)
    out.done()


@njit(cache=True, nogil=True)
def _reverse(x, xo, xs, xa, lengths, lo_, ls, out, oo, os_, sizes, axis, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # out[o] = x[o with o[Axis] = reverse_sources(...)]: i < L reads min(L - 1 - i, n - 1) (E162), else i
    d = sizes.size
    n = sizes[axis]
    c = np.zeros(d, np.int64)
    for r in range(lo, hi):
        _row_coordinates(r, sizes, c)
        px, pl, po, along = _row_offset(xo, c, xs), _row_offset(lo_, c, ls), _row_offset(oo, c, os_), c[axis]
        for j in range(sizes[d - 1]):
            length = np.int64(lengths[U(pl + j * ls[d - 1])]) & 0xFFFFFFFF  # the low 32 bits
            i = j if axis == d - 1 else along
            src = min(length - 1 - i, n - 1) if i < length else i
            out[U(po + j * os_[d - 1])] = x[U(px + j * xs[d - 1] + src * xa)]
    return 0


def run_reverse_subsequences(
    desc: Any,
    inputs: Mapping[str, Array],
    outputs: Mapping[str, Array],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """The first ``SequenceLengths`` elements along Axis reversed, the rest copied (lengths past the axis: E162)."""
    target = outputs["OutputTensor"]
    x = _readable(inputs["InputTensor"], target)
    lengths = _readable(inputs["SequenceLengthsTensor"], target)
    axis = int(desc.axis)
    out = _Out(target)
    xm, xo, xs = _memory(_bits(x))
    xs, xa = _off_axis(xs, axis)
    lm, lo_, ls = _memory(lengths)
    ls[axis] = 0  # size 1 on Axis: broadcast along it
    om, oo, os_ = out.memory()
    sizes, rows = _grid(target.shape)
    if target.size:
        _parallel(_reverse, rows, target.size, xm, xo, xs, xa, lm, lo_, ls, om, oo, os_, sizes, axis)
    out.done()


@njit(cache=True, nogil=True)
def _diagonal(x, xo, xs, value, out, oo, os_, sizes, begin, end, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # diagonal_fill: Value where (end >= begin) xor (column - row >= begin) xor (column - row < end), x elsewhere
    d = sizes.size
    inverted = end >= begin
    c = np.zeros(d, np.int64)
    for r in range(lo, hi):
        _row_coordinates(r, sizes, c)
        px, po, row = _row_offset(xo, c, xs), _row_offset(oo, c, os_), c[d - 2] if d >= 2 else 0
        for j in range(sizes[d - 1]):
            top_x = j - row
            if inverted ^ (top_x >= begin) ^ (top_x < end):
                out[U(po + j * os_[d - 1])] = value
            else:
                out[U(po + j * os_[d - 1])] = x[U(px + j * xs[d - 1])]
    return 0


def _run_diagonal(target: Array, x: Array | None, value: Any, begin: int, end: int) -> None:
    """``target`` = ``value`` on :func:`diagonal_fill`'s band, ``x`` (or 0) elsewhere."""
    if x is None:
        x = np.zeros((1,) * target.ndim, target.dtype)  # strides 0 below: every read is 0
    x = _readable(x, target)
    out = _Out(target)
    xm, xo, xs = _memory(_bits(np.broadcast_to(x, target.shape)))
    om, oo, os_ = out.memory()
    bits = _bits(np.asarray(value, dtype=target.dtype))[()]
    sizes, rows = _grid(target.shape)
    # the band's bounds are compared with column - row (|.| < 2^31): clip them into int64
    lo_, hi_ = -(2**62), 2**62
    begin, end = min(max(begin, lo_), hi_), min(max(end, lo_), hi_)
    if target.size:
        _parallel(_diagonal, rows, target.size, xm, xo, xs, bits, om, oo, os_, sizes, begin, end)
    out.done()


def run_diagonal_matrix(
    desc: Any,
    inputs: Mapping[str, Array],
    outputs: Mapping[str, Array],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Value on the diagonal ``column - row = Offset``, 0 elsewhere (the FLOAT Value as PADDING's: padding_value)."""
    offset = int(desc.offset)
    value = padding_value(desc.value, desc.output_tensor.data_type)
    _run_diagonal(outputs["OutputTensor"], None, value, offset, offset + 1)


def run_diagonal_matrix1(
    desc: Any,
    inputs: Mapping[str, Array],
    outputs: Mapping[str, Array],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Value where :func:`diagonal_fill` says, InputTensor (or 0) elsewhere."""
    target = outputs["OutputTensor"]
    value = np.asarray(desc.value, dtype=target.dtype)
    begin, end = int(desc.diagonal_fill_begin), int(desc.diagonal_fill_end)
    _run_diagonal(target, inputs.get("InputTensor"), value, begin, end)


@njit(cache=True, nogil=True)
def _nonzero(x, xo, xs, mask, sizes, out, oo, os_, n, start, write, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # Count (write False) or store from row ``start`` (write True) the coordinates of the nonzero
    # elements of rows [lo, hi): (bits & mask) != 0, mask dropping a float's sign bit (both zeros are zero).
    d = sizes.size
    coordinate = np.zeros(d, np.int64)
    found = 0
    for r in range(lo, hi):
        _row_coordinates(r, sizes, coordinate)
        px = _row_offset(xo, coordinate, xs)
        for j in range(sizes[d - 1]):
            if x[U(px + j * xs[d - 1])] & mask:
                if write:
                    coordinate[d - 1] = j
                    po = oo + (start + found) * os_[0]
                    for k in range(n):  # the last N entries (the dropped leading ones are 0)
                        out[U(po + k * os_[1])] = np.uint32(coordinate[d - n + k])
                found += 1
    return found


def run_nonzero_coordinates(
    desc: Any,
    inputs: Mapping[str, Array],
    outputs: Mapping[str, Array],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """The count of nonzero input elements (``x != 0``: NaN nonzero), their coordinates row-major, zero rows after.

    Two passes over threads: each range of rows counts, then stores from its prefix sum.
    """
    count_out = outputs["OutputCountTensor"]
    target = outputs["OutputCoordinatesTensor"]
    x = _bits(_readable(inputs["InputTensor"], count_out, target))
    m, n = target.shape[-2], target.shape[-1]
    coordinates = _reshaped(target, (m, n))
    assert coordinates is not None  # only leading sizes of 1 are dropped: always a view
    out = _Out(coordinates)
    xm, xo, xs = _memory(x)
    om, oo, os_ = out.memory()
    ones = np.iinfo(x.dtype).max
    mask = x.dtype.type(ones >> 1 if inputs["InputTensor"].dtype.kind == "f" else ones)
    sizes, rows = _grid(x.shape)
    threads = threads_for(x.size, rows)
    bounds = [rows * i // threads for i in range(threads + 1)]
    args = (xm, xo, xs, mask, sizes, om, oo, os_, n)

    def pass_(write: bool, starts: list[int]) -> list[int]:
        # one range per thread: counts first, then each range stores from its prefix sum
        counts = [0] * threads

        def ranges(lo: int, hi: int) -> None:
            for i in range(lo, hi):
                counts[i] = int(_nonzero(*args, starts[i], write, bounds[i], bounds[i + 1]))

        if x.size:
            on_threads(ranges, threads, threads, threads)
        return counts

    counts = pass_(False, [0] * threads)
    starts = [0, *itertools.accumulate(counts)]
    total = starts[-1]
    if total:
        pass_(True, starts)
    out.array[total:] = 0  # rows past the count: zeros, as DirectML 1.15.4 leaves them
    out.done()
    count_out[...] = np.uint32(total)


# -- GATHER_ND, GATHER_ND1, SCATTER_ND ------------------------------------------------


@njit(cache=True, nogil=True)
def _slabs(src, so, ss, src_rows, dst, do, ds, dst_rows, sizes, slab_rows, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # dst[row g, t] = src[row g, t] over the grid (index tuples g, slab coordinates t): each side's
    # element is its row's start (``*_rows[g]``, or -1: from its own strides) plus the slab offset.
    d = sizes.size
    c = np.zeros(d, np.int64)
    for r in range(lo, hi):
        g = r // slab_rows
        _row_coordinates(r, sizes, c)
        ps = _row_offset(src_rows[g] if src_rows.size else so, c, ss)
        pd = _row_offset(dst_rows[g] if dst_rows.size else do, c, ds)
        for j in range(sizes[d - 1]):
            dst[U(pd + j * ds[d - 1])] = src[U(ps + j * ss[d - 1])]
    return 0


def _row_starts(
    origin: int, strides: Array, coordinates: list[NDArray[np.int64]], grid: tuple[int, ...], axes: int
) -> Array:
    """Each index tuple's slab start: ``origin`` + its coordinates on the first ``axes`` axes times their strides."""
    start = np.full(grid, origin, np.int64)
    for c, stride in zip(coordinates[:axes], strides[:axes]):
        if stride and c.size:
            start += np.broadcast_to(c.reshape(c.shape[: len(grid)]), grid) * np.int64(stride)
    return start.reshape(-1)


def _nd(
    desc: Any, indices: Array, feature_level: FeatureLevel, batch: int
) -> tuple[list[NDArray[np.int64]], tuple[int, ...], int]:
    """:func:`nd_coordinates`, the result shape, and its count of grid dimensions (the indices' but the last)."""
    coordinates, shape = nd_coordinates(
        desc.input_tensor,
        indices,
        int(desc.input_dimension_count),
        int(desc.indices_dimension_count),
        batch,
        wrap_negative=wraps_negative(desc.indices_tensor.data_type, feature_level),
    )
    return coordinates, shape, int(desc.indices_dimension_count) - 1


def _copy_slabs(
    src: tuple[Array, int, Array],
    dst: tuple[Array, int, Array],
    shape: tuple[int, ...],
    grid: int,
    src_rows: Array | None,
    dst_rows: Array | None,
    *,
    ordered: bool,
) -> None:
    """Copy over the result grid ``shape`` (``grid`` index-tuple dimensions, then the slab's).

    ``src`` and ``dst`` are (memory, origin, strides) from :func:`_memory`; the side with
    ``*_rows`` (one slab start per tuple) has strides whose last ``len(shape) - grid`` are
    the slab's, the other side is viewed with ``shape``. ``ordered``: one thread, so the
    tuples' slabs land in row-major order (a scatter's duplicates: the last wins).
    """
    slab = len(shape) - grid
    empty = np.zeros(0, np.int64)

    def strides(s: Array, rows: Array | None) -> Array:
        if rows is None:  # viewed with shape (a 0-d view: _memory's [0] dropped)
            own = s[: len(shape)] if shape else s[:0]
        else:  # zeros on the grid (the row start holds it), then the slab's
            own = np.concatenate([np.zeros(grid, np.int64), s[len(s) - slab :] if slab else s[:0]])
        return own if slab else np.append(own, 0)  # no slab: a trailing dimension of size 1

    sizes, rows = _grid(shape if slab else (*shape, 1))
    per_tuple = int(np.prod(sizes[grid:-1]))  # grid rows of one slab
    args = (
        src[0],
        src[1],
        strides(src[2], src_rows),
        empty if src_rows is None else src_rows,
        dst[0],
        dst[1],
        strides(dst[2], dst_rows),
        empty if dst_rows is None else dst_rows,
        sizes,
        per_tuple,
    )
    if int(np.prod(shape)) == 0:
        return
    if ordered:
        _slabs(*args, 0, rows)
    else:
        _parallel(_slabs, rows, int(np.prod(shape)), *args)


def run_gather_nd(
    desc: Any,
    inputs: Mapping[str, Array],
    outputs: Mapping[str, Array],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """GATHER_ND and GATHER_ND1: each index tuple (within its batch) selects a slab of the input.

    Coordinates as :func:`nd_coordinates` (index-sized arrays); the slabs are copied by
    one kernel over threads. Out of range: the reference's flat clamp read (E160) or its error.
    """
    target = outputs["OutputTensor"]
    x = _readable(inputs["InputTensor"], target)
    batch = int(getattr(desc, "batch_dimension_count", 0))
    coordinates, shape, grid = _nd(desc, inputs["IndicesTensor"], feature_level, batch)
    what = f"{desc.dml_name}.IndicesTensor"
    tensor = desc.input_tensor
    d = tensor.dimension_count
    if strict:
        check_indices(what, coordinates, tensor.sizes, range(d - int(desc.input_dimension_count), d), scatter=False)
    if not coordinates_in_range(tensor.sizes, coordinates):
        # DirectML's flat clamp (32-bit data; the others refused): the reference's read
        if tensor.dtype.itemsize != 4:
            check_indices(what, coordinates, tensor.sizes, range(d), scatter=False)
        read = input_memory(tensor, inputs["InputTensor"])[flat_addresses(tensor, coordinates)]
        np.copyto(target, read.reshape(target.shape))
        return
    view = _reshaped(target, shape)
    array = np.empty(shape, target.dtype) if view is None else view  # (a strided output keeping its 1s)
    out = _Out(array)
    xm, xo, xs = _memory(_bits(x))
    slab = len(shape) - grid
    starts = _row_starts(xo, xs, coordinates, shape[:grid], d - slab)
    _copy_slabs((xm, xo, xs), out.memory(), shape, grid, starts, None, ordered=False)
    out.done()
    if view is None:
        np.copyto(target, array.reshape(target.shape))


def run_scatter_nd(
    desc: Any,
    inputs: Mapping[str, Array],
    outputs: Mapping[str, Array],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """``Output = Input``, then each index tuple's slab of Output is replaced by its slab of Updates.

    The reference's rules: indices outside the input refused, duplicates' last update
    wins (strict mode refuses them), UpdatesTensor of more dimensions: one slab (E165).
    The slabs are written on one thread, in row-major order.
    """
    target = outputs["OutputTensor"]
    tensor = desc.input_tensor
    d = tensor.dimension_count
    coordinates, shape, grid = _nd(desc, inputs["IndicesTensor"], feature_level, 0)
    updates = _readable(inputs["UpdatesTensor"], target)
    view = _reshaped(updates, shape)
    updates = updates.reshape(shape) if view is None else view
    cut = len(shape) - max(d, desc.indices_tensor.dimension_count)
    if cut > 0:  # E165: only the slab at coordinate 0 of the extra leading dimensions
        cut_slab = (slice(0, 1),) * cut
        coordinates = [c[cut_slab] for c in coordinates]
        updates = updates[cut_slab]
        shape = updates.shape
    what = f"{desc.dml_name}.IndicesTensor"
    check_indices(what, coordinates, tensor.sizes, range(d - int(desc.input_dimension_count), d), scatter=True)
    if strict:
        refuse_duplicates(what, tensor.sizes, coordinates)
    x = inputs["InputTensor"]
    if not _same_view(x, target):
        copy_into(target, x)
    out = _Out(target, keep=True)
    om, oo, os_ = out.memory()
    slab = len(shape) - grid
    starts = _row_starts(oo, os_, coordinates, shape[:grid], d - slab)
    _copy_slabs(_memory(_bits(updates)), (om, oo, os_), shape, grid, None, starts, ordered=True)
    out.done()


OPERATORS: dict[str, Callable[..., Any]] = {
    "GATHER": run_gather,
    "SLICE1": run_slice1,
    "CAST": run_cast,
    "FILL_VALUE_SEQUENCE": run_fill_value_sequence,
    **{name: run_copy_program for name in PROGRAMS},
    **{name: run_separable_gather for name in ("PADDING", "PADDING1", "TILE")},
    "GATHER_ELEMENTS": run_gather_elements,
    "GATHER_ND": run_gather_nd,
    "GATHER_ND1": run_gather_nd,
    "SCATTER_ELEMENTS": run_scatter_elements,
    "SCATTER_ND": run_scatter_nd,
    "ONE_HOT": run_one_hot,
    "REVERSE_SUBSEQUENCES": run_reverse_subsequences,
    "DIAGONAL_MATRIX": run_diagonal_matrix,
    "DIAGONAL_MATRIX1": run_diagonal_matrix1,
    "NONZERO_COORDINATES": run_nonzero_coordinates,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
