"""MAX_POOLING2 on the CPU (numba): windowed maximum and its row-major linear index.

The selected element is copied, so every type is bit-exact (see :mod:`._pooling`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import NDArray

from ..descs.max_pooling2 import MaxPooling2Desc
from ..enums import FeatureLevel
from ._pooling import forward


def run(
    desc: MaxPooling2Desc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Window maxima into ``OutputTensor``; indices into ``OutputIndicesTensor`` when present."""
    # A zero Dilation changes which elements DirectML scans (PoolingWindow.scanned).
    forward(desc.window.scanned(), inputs["InputTensor"], outputs["OutputTensor"], outputs.get("OutputIndicesTensor"))
