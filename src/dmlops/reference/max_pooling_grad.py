"""MAX_POOLING_GRAD in NumPy: recompute the forward argmax, scatter-add the gradient there."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.max_pooling_grad import MaxPoolingGradDesc
from ..enums import FeatureLevel
from ._pooling import window_argmax


def compute(
    desc: MaxPoolingGradDesc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``OutputGradient[i] = sum of InputGradient[o] over the windows o whose maximum is i``.

    The argmax is the forward's (MAX_POOLING2 with the same parameters and tie rule).
    The sums are formed in float64 and rounded once when stored; elements no window
    selects are 0. The gradient of a window holding only padding goes nowhere
    (DirectML 1.15.4, erratum E26).
    """
    x = inputs["InputTensor"]
    dy = inputs["InputGradientTensor"]
    _, indices, nonempty = window_argmax(x, desc.window, desc.input_gradient_tensor.sizes[2:])
    weights = np.where(nonempty, np.asarray(dy, dtype=np.float64), 0.0)
    # bincount adds the weights of repeated indices: overlapping windows sum.
    dx = np.bincount(indices.ravel(), weights=weights.ravel(), minlength=x.size)
    return {"OutputGradientTensor": dx.reshape(x.shape)}
