"""RESAMPLE_GRAD1 on the CPU (numba): the exact transpose of RESAMPLE2 as a gather.

Each OutputGradient element sums the InputGradient elements whose forward taps hit
it (see :mod:`._resample`): no atomics, no zero-fill pass, float32 accumulation
(FLOAT16 too), one rounding at the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import NDArray

from ..descs.resample_grad1 import ResampleGrad1Desc
from ..enums import FeatureLevel, InterpolationMode
from ._resample import apply, nearest_transpose


def run(
    desc: ResampleGrad1Desc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """``OutputGradient[i] = sum_o w(o, i) * InputGradient[o]`` into ``outputs["OutputGradientTensor"]``."""
    dy, dx = inputs["InputGradientTensor"], outputs["OutputGradientTensor"]
    if desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR:
        nearest_transpose(desc, dy, dx)
    else:
        apply(desc, dy, dx, transpose=True)
