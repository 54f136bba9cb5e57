"""SLICE1 in NumPy: a strided view of the input (bit-exact data movement)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.slice1 import Slice1Desc
from ..enums import FeatureLevel


def compute(
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
