"""Data movement on the CPU backend: GATHER, SLICE1, CAST and the copy programs.

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

The copy is NumPy's (``np.copyto`` of a negative/positive-stride view), split over
threads for large strided copies; bit-exact for every type.

CAST
----
CAST on the CPU: into float types ``np.copyto(..., casting="unsafe")`` (NumPy's
``astype``: rounding to nearest even, as the reference); into integer types one numba
pass per element with the reference's rules (:func:`~dmlops.descs.data_movement.cast_array`:
floats truncated with NaN -> 0 and saturated; integers through a 32- or 64-bit register,
saturated with the target's signedness), over threads. FLOAT16 sources and views that
are not contiguous run ``cast_array`` itself on blocks of the output, so its temporaries
stay small. Bit-exact for every pair of types.

The copy programs
-----------------
SLICE, JOIN, SPLIT, TILE, PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1) and
FILL_VALUE_CONSTANT run their copy programs (:mod:`dmlops.descs._copy_programs`): each
step is a strided view of its source and destination arrays (``as_strided`` from the
step's start element), copied as SLICE1's are, or filled. Bit-exact for every type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from .._numpy_io import input_memory
from ..descs._copy_programs import PROGRAMS, Affine, Fill, copy_program
from ..descs.data_movement import (
    GatherDesc,
    Slice1Desc,
    cast_array,
    gather_read_addresses,
    normalize_indices,
    sequence_values,
)
from ..enums import FeatureLevel
from ._common import call_parallel
from ._copy import copy_into, run_chunks

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


@njit(cache=True, parallel=True)
def _float_to_int(x, out, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # truncate, NaN -> 0, saturate (the bounds compared in float64: 2^63 and 2^64 saturate)
    flo, fhi = np.float64(lo), np.float64(hi)
    for i in prange(x.size):
        v = np.float64(x[i])
        if v != v:
            out[i] = 0
        elif v >= fhi:
            out[i] = hi
        elif v <= flo:
            out[i] = lo
        else:
            out[i] = np.trunc(v)


@njit(cache=True, parallel=True)
def _int_to_signed(x, out, lo, hi, width32):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # the register's value read as signed (32-bit: the low 32 bits' two's complement), saturated
    for i in prange(x.size):
        v = np.int64(x[i])
        if width32:
            v = v & 0xFFFFFFFF
            if v >= 2147483648:
                v -= 4294967296
        out[i] = min(max(v, lo), hi)


@njit(cache=True, parallel=True)
def _int_to_unsigned(x, out, hi, width32):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    # the register's value read as unsigned (32-bit: the low 32 bits), saturated to the maximum
    for i in prange(x.size):
        v = np.uint64(np.int64(x[i]))  # the two's complement bits (a UINT64 keeps its own)
        if width32:
            v = v & np.uint64(0xFFFFFFFF)
        out[i] = min(v, hi)


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
        call_parallel(_float_to_int, src, dst, info.min, info.max)
    elif info.min < 0:
        call_parallel(_int_to_signed, src, dst, info.min, info.max, width32)
    else:
        call_parallel(_int_to_unsigned, src, dst, np.uint64(info.max), width32)


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


OPERATORS: dict[str, Callable[..., Any]] = {
    "GATHER": run_gather,
    "SLICE1": run_slice1,
    "CAST": run_cast,
    "FILL_VALUE_SEQUENCE": run_fill_value_sequence,
    **{name: run_copy_program for name in PROGRAMS},
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
