"""GATHER in NumPy: ``np.take`` with normalised indices (bit-exact data movement)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import NDArray

from ..descs.gather import GatherDesc, normalize_indices
from ..enums import FeatureLevel


def compute(
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
