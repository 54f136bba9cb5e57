"""RESAMPLE2 in NumPy: the separable forward resample (see :mod:`._resample`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import NDArray

from ..descs.resample2 import Resample2Desc
from ..enums import FeatureLevel
from ._resample import resample


def compute(
    desc: Resample2Desc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``OutputTensor = RESAMPLE2(InputTensor)``.

    NEAREST_NEIGHBOR is a gather and returns the input dtype; LINEAR returns float64,
    which the common store rounds once (nearest even for floats; for INT8/UINT8 half to
    even, then saturated).
    """
    return {"OutputTensor": resample(inputs["InputTensor"], desc)}
