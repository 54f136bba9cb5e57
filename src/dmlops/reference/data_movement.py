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
    along,
    cast_array,
    check_indices,
    coordinates_in_range,
    diagonal_fill,
    elements_coordinates,
    flat_addresses,
    gather_read_addresses,
    nd_coordinates,
    normalize_indices,
    one_hot_positions,
    padding_indices,
    padding_value,
    refuse_duplicates,
    reverse_sources,
    sequence_values,
    slice_grad_positions,
    slice_window,
    wraps_negative,
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
    """Element ``i`` (row-major) is ``ValueStart + i * ValueDelta`` (``descs.data_movement.sequence_values``)."""
    sizes = desc.output_tensor.sizes
    values = sequence_values(desc, np.arange(int(np.prod(sizes)), dtype=np.int64))
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


# -- the indexing operators ------------------------------------------------------------


def _read(what: str, tensor: Any, x: Array, coordinates: list[NDArray[np.int64]]) -> Array:
    """``x`` at ``coordinates`` (broadcasting together); DirectML's flat clamp where one is outside (E160).

    The flat clamp reproduces DirectML 1.15.4 for 32-bit data only; an out-of-range
    read of 8- or 64-bit data gets other bytes (of neighbouring elements, or values
    found nowhere in the input), so dmlops refuses it: DataIndexError.
    """
    if coordinates_in_range(tensor.sizes, coordinates):
        return np.asarray(x[tuple(c.astype(np.intp) for c in coordinates)])
    if tensor.dtype.itemsize != 4:
        check_indices(what, coordinates, tensor.sizes, range(len(tensor.sizes)), scatter=False)
    return input_memory(tensor, x)[flat_addresses(tensor, coordinates)]


def _write(out: Array, coordinates: list[NDArray[np.int64]], updates: Array) -> Array:
    """``out`` (C-contiguous, modified) with ``updates`` stored at ``coordinates`` (every one in range).

    Where several updates target one element the last in row-major order wins: what
    small probes of DirectML 1.15.4 gave, one of the outcomes DirectML allows (larger
    cases end with another update; the pages promise no order, E163).
    """
    shape = np.broadcast_shapes(updates.shape, *(c.shape for c in coordinates))
    flat = np.ravel_multi_index(tuple(np.broadcast_to(c, shape) for c in coordinates), out.shape).reshape(-1)
    values = np.broadcast_to(updates, shape).reshape(-1)
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    last = flat.size - 1 - first_from_end
    out.reshape(-1)[flat[last]] = values[last]
    return out


def compute_gather_elements(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """``Output[o] = Input[o with o[Axis] = Indices[o]]``; DataIndexError for an index outside the axis (E160)."""
    axis = int(desc.axis)
    wrap = wraps_negative(desc.indices_tensor.data_type, feature_level)
    coordinates = elements_coordinates(
        desc.indices_tensor.sizes, axis, inputs["IndicesTensor"], desc.input_tensor.sizes[axis], wrap_negative=wrap
    )
    # Out-of-range reads: mostly DirectML's flat clamp, but not always (garbage seen for
    # 32-bit data too), so dmlops refuses them whatever ``strict`` (E160).
    check_indices(f"{desc.dml_name}.IndicesTensor", coordinates, desc.input_tensor.sizes, [axis], scatter=False)
    return {"OutputTensor": np.asarray(inputs["InputTensor"][tuple(c.astype(np.intp) for c in coordinates)])}


def compute_gather_nd(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """GATHER_ND and GATHER_ND1: each index tuple (within its batch) selects a slice of the input.

    Coordinates as :func:`~dmlops.descs.data_movement.nd_coordinates`; a tuple value
    outside its dimension, or a batch coordinate past the input's, reads through
    DirectML's flat clamp (E160).
    """
    batch = int(getattr(desc, "batch_dimension_count", 0))
    coordinates, _ = nd_coordinates(
        desc.input_tensor,
        inputs["IndicesTensor"],
        int(desc.input_dimension_count),
        int(desc.indices_dimension_count),
        batch,
        wrap_negative=wraps_negative(desc.indices_tensor.data_type, feature_level),
    )
    what = f"{desc.dml_name}.IndicesTensor"
    if strict:
        d = desc.input_tensor.dimension_count
        axes = range(d - int(desc.input_dimension_count), d)  # the batch coordinates as well as the tuples
        check_indices(what, coordinates, desc.input_tensor.sizes, axes, scatter=False)
    out = _read(what, desc.input_tensor, inputs["InputTensor"], coordinates)
    return {"OutputTensor": out.reshape(desc.output_tensor.sizes)}


def compute_scatter_elements(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """``Output = Input``, then ``Output[u with u[Axis] = Indices[u]] = Updates[u]``.

    An index outside its axis (after the one wrap) raises DataIndexError: DirectML's
    write is undefined (:func:`~dmlops.descs.data_movement.check_indices`). Duplicate
    targets: the last update in row-major order (E163; strict mode refuses them).
    """
    axis = int(desc.axis)
    sizes = desc.input_tensor.sizes
    wrap = wraps_negative(desc.indices_tensor.data_type, feature_level)
    coordinates = elements_coordinates(
        desc.indices_tensor.sizes, axis, inputs["IndicesTensor"], sizes[axis], wrap_negative=wrap
    )
    return _scatter(desc, inputs, coordinates, [axis], strict=strict)


def compute_scatter_nd(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """``Output = Input``, then each index tuple's slice of Output is replaced by its slice of Updates.

    Coordinates as :func:`~dmlops.descs.data_movement.nd_coordinates` (no batch);
    indices outside the input and duplicate targets as :func:`compute_scatter_elements`;
    an UpdatesTensor of more dimensions than the input and indices as DirectML reads it (E165).
    """
    d = desc.input_tensor.dimension_count
    input_dimensions = int(desc.input_dimension_count)
    coordinates, shape = nd_coordinates(
        desc.input_tensor,
        inputs["IndicesTensor"],
        input_dimensions,
        int(desc.indices_dimension_count),
        0,
        wrap_negative=wraps_negative(desc.indices_tensor.data_type, feature_level),
    )
    updates = inputs["UpdatesTensor"].reshape(shape)
    # An UpdatesTensor of more dimensions than InputTensor and IndicesTensor: DirectML
    # 1.15.4 scatters only its slab at coordinate 0 of the leading dimensions past the
    # larger of their DimensionCounts (E165).
    cut = len(shape) - max(d, desc.indices_tensor.dimension_count)
    if cut > 0:
        slab = (slice(0, 1),) * cut
        coordinates = [c[slab] for c in coordinates]
        updates = updates[slab]
    return _scatter(
        desc, {**inputs, "UpdatesTensor": updates}, coordinates, range(d - input_dimensions, d), strict=strict
    )


def _scatter(
    desc: Any,
    inputs: Mapping[str, Array],
    coordinates: list[NDArray[np.int64]],
    axes: Any,
    *,
    strict: bool,
) -> dict[str, Array]:
    what = f"{desc.dml_name}.IndicesTensor"
    x = inputs["InputTensor"]
    check_indices(what, coordinates, desc.input_tensor.sizes, axes, scatter=True)
    if strict:
        refuse_duplicates(what, x.shape, coordinates)
    out = np.array(x, copy=True, order="C")
    return {"OutputTensor": _write(out, coordinates, inputs["UpdatesTensor"])}


def compute_one_hot(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """OffValue (ValuesTensor's first element) everywhere but OnValue (its second) at each index along Axis.

    Positions as :func:`~dmlops.descs.data_movement.one_hot_positions` (out-of-range
    indices set nothing, as the page says; INT64 ones by their low 32 bits, E161).
    """
    axis = int(desc.axis)
    sizes = desc.output_tensor.sizes
    values = inputs["ValuesTensor"].reshape(-1)
    wrap = wraps_negative(desc.indices_tensor.data_type, feature_level)
    position = one_hot_positions(inputs["IndicesTensor"], sizes[axis], wrap_negative=wrap)
    on = along(axis, len(sizes), sizes[axis]) == position
    return {"OutputTensor": np.where(on, values[1], values[0])}


def compute_reverse_subsequences(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """The first ``SequenceLengths`` elements along Axis reversed, the rest copied (lengths past the axis: E162)."""
    x = inputs["InputTensor"]
    axis = int(desc.axis)
    source = reverse_sources(inputs["SequenceLengthsTensor"], x.shape[axis], x.ndim, axis)
    source = np.broadcast_to(source, x.shape).astype(np.intp)
    return {"OutputTensor": np.take_along_axis(x, source, axis=axis)}


def compute_diagonal_matrix(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """Value on the diagonal ``column - row = Offset`` of every matrix, 0 elsewhere.

    The FLOAT Value reaches integer outputs as PADDING's does (x86 truncation of the
    float32 value, wrapped, not saturated: :func:`~dmlops.descs.data_movement.padding_value`;
    200.7 into INT8 is -56, NaN into INT32 is INT32_MIN), as probed on DirectML 1.15.4.
    """
    tensor = desc.output_tensor
    value = padding_value(desc.value, tensor.data_type)
    fill = diagonal_fill(tensor.sizes, int(desc.offset), int(desc.offset) + 1)
    out = np.where(fill, value, np.zeros((), dtype=tensor.dtype)).astype(tensor.dtype)
    return {"OutputTensor": np.broadcast_to(out, tensor.sizes).copy()}


def compute_diagonal_matrix1(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """Value where :func:`~dmlops.descs.data_movement.diagonal_fill` says, InputTensor (or 0) elsewhere."""
    tensor = desc.output_tensor
    value = np.asarray(desc.value, dtype=tensor.dtype)
    fill = diagonal_fill(tensor.sizes, int(desc.diagonal_fill_begin), int(desc.diagonal_fill_end))
    x = inputs.get("InputTensor")
    rest = np.zeros((), dtype=tensor.dtype) if x is None else x
    return {"OutputTensor": np.broadcast_to(np.where(fill, value, rest), tensor.sizes).astype(tensor.dtype)}


def compute_nonzero_coordinates(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """The count of nonzero input elements, and their coordinates in row-major order.

    Nonzero: ``x != 0``, so both zeros are zero and NaN is nonzero. Each coordinate is
    its last N entries (N = OutputCoordinatesTensor's last size; the dropped leading
    ones are 0). Rows past the count are undefined on the page; DirectML 1.15.4 leaves
    zeros there, and so does dmlops.
    """
    x = inputs["InputTensor"]
    coordinates = desc.output_coordinates_tensor.sizes
    m, n = coordinates[-2], coordinates[-1]
    found = np.argwhere(x != 0)[:, x.ndim - n :].astype(np.uint32)
    out = np.zeros((m, n), dtype=np.uint32)
    out[: len(found)] = found
    count = np.full(desc.output_count_tensor.sizes, len(found), dtype=np.uint32)
    return {"OutputCountTensor": count, "OutputCoordinatesTensor": out.reshape(coordinates)}


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
    "GATHER_ELEMENTS": compute_gather_elements,
    "GATHER_ND": compute_gather_nd,
    "GATHER_ND1": compute_gather_nd,
    "SCATTER_ELEMENTS": compute_scatter_elements,
    "SCATTER_ND": compute_scatter_nd,
    "ONE_HOT": compute_one_hot,
    "REVERSE_SUBSEQUENCES": compute_reverse_subsequences,
    "DIAGONAL_MATRIX": compute_diagonal_matrix,
    "DIAGONAL_MATRIX1": compute_diagonal_matrix1,
    "NONZERO_COORDINATES": compute_nonzero_coordinates,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
