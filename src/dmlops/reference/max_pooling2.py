"""MAX_POOLING2 in NumPy: windowed maximum and its linear index (bit-exact data movement)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import NDArray

from ..descs.max_pooling2 import MaxPooling2Desc
from ..enums import FeatureLevel
from ._pooling import window_argmax


def compute(
    desc: MaxPooling2Desc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``Output[o] = max over the window of o``; ``OutputIndices[o]`` = its row-major input index.

    The selected element is copied, so every data type (integers, signed zeros) comes
    out bit-exact; a window with nothing above the type's lowest finite value (only
    NaN, -inf or padding) gives that value, as DirectML does. Indices are returned in
    the indices tensor's own type (UINT32 or UINT64); a DML tensor has fewer than 2^32
    elements, so they fit.
    """
    # A zero Dilation changes which elements DirectML scans (PoolingWindow.scanned).
    values, indices, _ = window_argmax(inputs["InputTensor"], desc.window.scanned(), desc.output_tensor.sizes[2:])
    results = {"OutputTensor": values}
    if desc.output_indices_tensor is not None:
        results["OutputIndicesTensor"] = indices.astype(desc.output_indices_tensor.dtype)
    return results
