"""Data movement in NumPy: GATHER, SLICE1.

GATHER
------
GATHER in NumPy: an indexing gather when every index is in range (bit-exact data
movement); otherwise DirectML's flat read (erratum E41): the output reads the input's
bound buffer at :func:`~dmlops.descs.data_movement.gather_read_addresses`.

SLICE1
------
SLICE1 in NumPy: a strided view of the input (bit-exact data movement).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._numpy_io import input_memory
from ..descs.data_movement import GatherDesc, Slice1Desc, gather_read_addresses, normalize_indices
from ..enums import FeatureLevel

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
    index = tuple(
        slice(start, start + stride * n if start + stride * n >= 0 else None, stride)
        for start, stride, n in zip(desc.copy_start(), desc.input_window_strides, desc.output_tensor.sizes)
    )
    out = x[index]
    return {"OutputTensor": np.asarray(out)}


OPERATORS: dict[str, Callable[..., Any]] = {"GATHER": compute_gather, "SLICE1": compute_slice1}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
