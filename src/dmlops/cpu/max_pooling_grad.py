"""MAX_POOLING_GRAD on the CPU (numba): recompute the forward argmax, add the gradient there.

Plane-private float32 accumulation, one rounding at the store (see :mod:`._pooling`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import NDArray

from ..descs.max_pooling_grad import MaxPoolingGradDesc
from ..enums import FeatureLevel
from ._pooling import gradient


def run(
    desc: MaxPoolingGradDesc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """``OutputGradient[i] = sum of InputGradient[o]`` over the windows ``o`` whose argmax is ``i``."""
    gradient(desc.window, inputs["InputTensor"], inputs["InputGradientTensor"], outputs["OutputGradientTensor"])
