"""RESAMPLE2 on the CPU (numba).

NEAREST_NEIGHBOR is a bit-exact gather; LINEAR interpolates one dimension after the
other in float32, as DirectML does (:func:`._resample.interpolate`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import NDArray

from ..descs.resample2 import Resample2Desc
from ..enums import FeatureLevel, InterpolationMode
from ._resample import interpolate, nearest_forward


def run(
    desc: Resample2Desc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """``OutputTensor = RESAMPLE2(InputTensor)``, written into ``outputs["OutputTensor"]``."""
    x, out = inputs["InputTensor"], outputs["OutputTensor"]
    if desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR:
        nearest_forward(desc, x, out)
    else:
        interpolate(desc, x, out)
