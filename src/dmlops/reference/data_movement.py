"""Data movement in NumPy: GATHER, SLICE1, and the generic operators CAST, SLICE, JOIN, SPLIT, PADDING(1), TILE.

GATHER
------
GATHER in NumPy: an indexing gather when every index is in range (bit-exact data
movement); otherwise DirectML's flat read (erratum E41): the output reads the input's
bound buffer at :func:`~dmlops.descs.data_movement.gather_read_addresses`.

SLICE1
------
SLICE1 in NumPy: a strided view of the input (bit-exact data movement).

The generic operators
---------------------
Each moves the elements bit-exactly (its desc's own rules were checked by
``validate()``); CAST converts by DirectML's rules (the module docstring of
:mod:`dmlops.descs.data_movement`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._numpy_io import input_memory
from ..descs.data_movement import (
    GatherDesc,
    Slice1Desc,
    gather_read_addresses,
    normalize_indices,
    padding_indices,
    padding_value,
    slice_grad_positions,
    slice_window,
)
from ..enums import FeatureLevel
from ..tensor import packed_strides

# -- GATHER --------------------------------------------------------------------


def compute_gather(
    desc: GatherDesc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``Output[pre, mid, post] = Input[pre, Indices[0.., mid], post]``.

    When some read falls outside the input's elements (an out-of-range index, or
    IndexDimensions 0 with OutputTensor.Sizes[0] > 1: ``desc.reads_outside``), every
    output element reads the input's bound buffer at its flat address (E41).
    Otherwise the indices' leading ``D - IndexDimensions`` dimensions (all 1) are
    dropped, the values wrapped by :func:`normalize_indices` (which then changes
    nothing else), indexing produces the un-aligned output
    (``desc.full_output_sizes()``), and a reshape right-aligns it to OutputTensor.Sizes
    (the dropped or prepended dimensions are all 1).
    """
    if strict:
        desc.check_data(inputs, feature_level)  # DataIndexError for an index out of range
    if desc.reads_outside(inputs["IndicesTensor"], feature_level):
        memory = input_memory(desc.input_tensor, inputs["InputTensor"])
        return {"OutputTensor": memory[gather_read_addresses(desc, inputs["IndicesTensor"], feature_level)]}
    # Dropped leading output entries other than 1: DirectML computes the slab at
    # coordinate 0 of those dimensions (GatherDesc.leading_slab).
    desc, x_slab, indices_slab = desc.leading_slab()
    x = inputs["InputTensor"][x_slab]
    indices = inputs["IndicesTensor"][indices_slab]
    n = desc.input_tensor.sizes[desc.axis]
    wrap = desc.indices_tensor.data_type.is_signed_integer and feature_level >= FeatureLevel.V3_0
    index = normalize_indices(indices, n, wrap_negative=wrap, strict=strict, what=f"{desc.dml_name}.IndicesTensor")
    d = desc.dimension_count
    index = index.reshape(desc.indices_tensor.sizes[d - desc.index_dimensions :])
    # Indexing rather than np.take, which would first copy a strided or broadcast x whole.
    out = x[(slice(None),) * desc.axis + (index,)]
    return {"OutputTensor": out.reshape(desc.output_tensor.sizes)}


# -- SLICE1 --------------------------------------------------------------------


def compute_slice1(
    desc: Slice1Desc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``Output[o] = Input[CopyStart + InputWindowStrides * o]`` as one basic-indexing view."""
    x = inputs["InputTensor"]
    out = x[slice_window(desc.copy_start(), desc.input_window_strides, desc.output_tensor.sizes)]
    return {"OutputTensor": np.asarray(out)}


# -- CAST ----------------------------------------------------------------------

Array = NDArray[Any]


def cast_array(x: Array, target: np.dtype[Any]) -> Array:
    """``x`` converted to ``target`` as DirectML's CAST converts (bit-exact, see the descs module).

    Integers pass through a 32-bit register (64-bit when either type is): kept as bits
    into a type of the register's width, saturated (read with the target's signedness)
    into a narrower one. Floats into integers: truncated, NaN -> 0, saturated. Into
    floats: rounded to nearest even.
    """
    target = np.dtype(target)
    if target.kind == "f":
        with np.errstate(over="ignore"):  # FLOAT64 beyond FLOAT32's range rounds to inf
            return x.astype(target)
    info = np.iinfo(target)
    if x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            t = np.trunc(np.where(np.isnan(x), 0, x).astype(np.float64))
            # clip in float64 first: info.max of a 64-bit type is not a float64, but every
            # value above 2^63 (2^64) saturates the same
            out = np.clip(t, float(info.min), float(info.max))
            big = t >= float(info.max)
            result = np.where(big, info.max, out.astype(np.int64 if info.min < 0 else np.uint64, copy=False))
        return result.astype(target)
    width = 64 if max(x.dtype.itemsize, target.itemsize) == 8 else 32
    if width == 32:
        bits = x.astype(np.int64) & 0xFFFFFFFF  # the register's pattern
        signed = np.where(bits >= 2**31, bits - 2**32, bits)
        unsigned = bits
    else:
        signed = x.astype(np.int64)  # wraps a UINT64 >= 2^63 to its negative pattern
        unsigned = x.astype(np.uint64)  # wraps negatives to their pattern
    if info.min < 0:
        return np.clip(signed, info.min, info.max).astype(target)
    return np.minimum(unsigned, np.asarray(info.max, dtype=unsigned.dtype)).astype(target)


def compute_cast(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """``Output = cast(Input)`` element by element."""
    return {"OutputTensor": cast_array(inputs["InputTensor"], desc.output_tensor.dtype)}


# -- SLICE ---------------------------------------------------------------------


def compute_slice(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """``Output[o] = Input[Offsets + Strides * o]`` (SLICE1's window with positive strides)."""
    x = inputs["InputTensor"]
    return {"OutputTensor": np.asarray(x[slice_window(desc.offsets, desc.strides, desc.sizes)])}


# -- JOIN, SPLIT -----------------------------------------------------------------


def compute_join(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """The inputs concatenated along ``Axis``, in order."""
    parts = [inputs[f"InputTensors[{k}]"] for k in range(len(desc.input_tensors))]
    return {"OutputTensor": np.concatenate(parts, axis=desc.axis)}


def compute_split(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """Consecutive pieces of the input along ``Axis``, one per output, in order."""
    x = inputs["InputTensor"]
    ends = np.cumsum([t.sizes[desc.axis] for t in desc.output_tensors])[:-1]
    return {f"OutputTensors[{k}]": part for k, part in enumerate(np.split(x, ends, axis=desc.axis))}


# -- PADDING, PADDING1 -------------------------------------------------------------


def compute_padding(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """Each output coordinate reads the input at :func:`padding_indices` per axis (or PaddingValue)."""
    x = inputs["InputTensor"]
    mode = desc.padding_mode.name
    index = [padding_indices(mode, n, s, e) for n, s, e in zip(x.shape, desc.start_padding, desc.end_padding)]
    if mode != "CONSTANT":
        return {"OutputTensor": x[np.ix_(*index)]}
    # PADDING's FLOAT value is converted as DirectML converts it on the host; PADDING1's has the type
    if getattr(desc, "padding_value_data_type", None) is None:
        value = padding_value(desc.padding_value, desc.output_tensor.data_type)
    else:
        value = np.asarray(desc.padding_value, dtype=x.dtype)
    out = np.full(desc.output_tensor.sizes, value, dtype=x.dtype)
    inner = tuple(slice(s, s + n) for s, n in zip(desc.start_padding, x.shape))
    out[inner] = x
    return {"OutputTensor": out}


# -- TILE ----------------------------------------------------------------------


def compute_tile(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """``Output[o] = Input[o mod InputTensor.Sizes]``."""
    return {"OutputTensor": np.tile(inputs["InputTensor"], desc.repeats)}


# -- FILL_VALUE_CONSTANT, FILL_VALUE_SEQUENCE -------------------------------------------


def compute_fill_value_constant(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """Every output element is Value."""
    return {"OutputTensor": np.full(desc.output_tensor.sizes, desc.value, dtype=desc.output_tensor.dtype)}


def compute_fill_value_sequence(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """Element ``i`` (row-major) is ``ValueStart + i * ValueDelta``, as DirectML 1.15.4 computes it.

    Floats: ``float32(i) * ValueDelta`` then ``+ ValueStart``, each rounded to float32 (no
    running sum, no fused multiply-add: a delta of inf makes element 0 NaN). Integers:
    32-bit wrap-around arithmetic, the low bits stored (INT8 120, 123, 126, -127...).
    """
    sizes = desc.output_tensor.sizes
    dtype = desc.output_tensor.dtype
    count = int(np.prod(sizes))
    i = np.arange(count, dtype=np.int64)
    if dtype.kind == "f":
        with np.errstate(all="ignore"):
            step = i.astype(np.float32) * np.float32(desc.value_delta)
            values = (step + np.float32(desc.value_start)).astype(dtype)
    else:
        bits = 8 * max(dtype.itemsize, 4)
        mask = (1 << bits) - 1
        start, delta = np.uint64(int(desc.value_start) & mask), np.uint64(int(desc.value_delta) & mask)
        # uint64 arithmetic wraps modulo 2^64, which keeps the low 32 (or 64) bits exact
        raw = (start + i.astype(np.uint64) * delta) & np.uint64(mask)
        values = raw.astype(dtype)  # the low bits, two's complement
    return {"OutputTensor": values.reshape(sizes)}


# -- DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1) -------------------------------------------------


def compute_depth_to_space(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """Channels into ``BlockSize x BlockSize`` blocks: ``Input[n, c', h, w]`` to ``Output[n, c, h*b + i, w*b + j]``.

    DEPTH_COLUMN_ROW (DEPTH_TO_SPACE, and DEPTH_TO_SPACE1's default): ``c' = (i * b + j)
    * C_out + c``; COLUMN_ROW_DEPTH: ``c' = c * b * b + i * b + j``.
    """
    x = inputs["InputTensor"]
    b = desc.block_size
    n, c, h, w = x.shape
    co = c // (b * b)
    if _order(desc) == "DEPTH_COLUMN_ROW":
        out = x.reshape(n, b, b, co, h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        out = x.reshape(n, co, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return {"OutputTensor": out.reshape(n, co, h * b, w * b)}


def compute_space_to_depth(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """The inverse of :func:`compute_depth_to_space` with the same BlockSize and Order."""
    x = inputs["InputTensor"]
    b = desc.block_size
    n, c, h, w = x.shape
    blocks = x.reshape(n, c, h // b, b, w // b, b)
    if _order(desc) == "DEPTH_COLUMN_ROW":
        out = blocks.transpose(0, 3, 5, 1, 2, 4)
    else:
        out = blocks.transpose(0, 1, 3, 5, 2, 4)
    return {"OutputTensor": out.reshape(n, c * b * b, h // b, w // b)}


def _order(desc: Any) -> str:
    order = getattr(desc, "order", None)
    return "DEPTH_COLUMN_ROW" if order is None else str(order.name)


# -- SLICE_GRAD ----------------------------------------------------------------------


def compute_slice_grad(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """Zeros, with InputGradientTensor scattered to SLICE1's window positions (:func:`slice_grad_positions`).

    Where DirectML lets a coordinate fall before the start of an axis (negative strides
    with InputGradientTensor sizes beyond SLICE1's MaxCopiedElements, or an empty
    window), DirectML 1.15.4 writes at the packed flat address ``sum(coordinate[i] *
    packed_stride[i])`` when it lies inside the tensor (so column -1 of row 1 is the last
    column of row 0) and drops the write otherwise, ignoring the coordinate of an axis
    of size 1 (an empty window with a negative stride there writes at 0); dmlops does the
    same, later writes (row-major) winning where two land on one element.
    """
    g = inputs["InputGradientTensor"]
    sizes = desc.output_gradient_tensor.sizes
    out = np.zeros(sizes, dtype=g.dtype)
    positions = [np.zeros_like(p) if n == 1 else p for p, n in zip(slice_grad_positions(desc), sizes)]
    if all(p.size == 0 or p.min() >= 0 for p in positions):
        out[np.ix_(*positions)] = g
        return {"OutputGradientTensor": out}
    flat = np.zeros(g.shape, dtype=np.intp)
    for axis, (p, stride) in enumerate(zip(positions, packed_strides(sizes))):
        shape = [1] * g.ndim
        shape[axis] = p.size
        flat = flat + (p * stride).reshape(shape)
    inside = (flat >= 0) & (flat < out.size)
    out.reshape(-1)[flat[inside]] = g[inside]
    return {"OutputGradientTensor": out}


OPERATORS: dict[str, Callable[..., Any]] = {
    "GATHER": compute_gather,
    "SLICE1": compute_slice1,
    "CAST": compute_cast,
    "SLICE": compute_slice,
    "JOIN": compute_join,
    "SPLIT": compute_split,
    "PADDING": compute_padding,
    "PADDING1": compute_padding,
    "TILE": compute_tile,
    "FILL_VALUE_CONSTANT": compute_fill_value_constant,
    "FILL_VALUE_SEQUENCE": compute_fill_value_sequence,
    "DEPTH_TO_SPACE": compute_depth_to_space,
    "DEPTH_TO_SPACE1": compute_depth_to_space,
    "SPACE_TO_DEPTH": compute_space_to_depth,
    "SPACE_TO_DEPTH1": compute_space_to_depth,
    "SLICE_GRAD": compute_slice_grad,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
