"""RESAMPLE_GRAD1 in NumPy: the transpose of RESAMPLE2 (see :mod:`._resample`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import NDArray

from ..descs.resample_grad1 import ResampleGrad1Desc
from ..enums import FeatureLevel
from ._resample import resample_transpose


def compute(
    desc: ResampleGrad1Desc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``OutputGradient[i] = sum_o w(o, i) * InputGradient[o]``, summed in float64 and rounded once."""
    return {"OutputGradientTensor": resample_transpose(inputs["InputGradientTensor"], desc)}
