"""Data movement in NumPy: GATHER, SLICE1.

GATHER
------
GATHER in NumPy: ``np.take`` with normalised indices (bit-exact data movement).

SLICE1
------
SLICE1 in NumPy: a strided view of the input (bit-exact data movement).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.data_movement import GatherDesc, Slice1Desc, normalize_indices
from ..enums import FeatureLevel

# -- GATHER --------------------------------------------------------------------


def compute_gather(
    desc: GatherDesc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``Output[pre, mid, post] = Input[pre, Indices[0.., mid], post]`` via ``np.take``.

    The indices' leading ``D - IndexDimensions`` dimensions (all 1) are dropped, the
    values are wrapped/clamped by :func:`normalize_indices`, ``np.take`` produces the
    un-aligned output (``desc.full_output_sizes()``), and a reshape right-aligns it to
    OutputTensor.Sizes (the dropped or prepended dimensions are all 1).
    """
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
