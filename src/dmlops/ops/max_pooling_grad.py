"""``dmlops.max_pooling_grad``: MAX_POOLING_GRAD on arrays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backends import DEFAULT_BACKEND
from ..descs.max_pooling_grad import MaxPoolingGradDesc
from ..enums import FeatureLevel
from ._common import run_single_output, tensor_of
from .max_pooling2 import pooling_window


def max_pooling_grad(
    x: Any,
    dy: Any,
    window_size: Sequence[int],
    *,
    strides: Sequence[int] | None = None,
    start_padding: Sequence[int] | None = None,
    end_padding: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_MAX_POOLING_GRAD: the gradient of max pooling with respect to its input.

    Parameters
    ----------
    x : array
        ``InputTensor``, the forward input ``{N, C, [D], H, W}`` (FLOAT32/FLOAT16).
    dy : array
        ``InputGradientTensor``, shaped as the forward output (floor or ceil-mode
        size; its shape selects which), same dtype as ``x``.
    window_size, strides, start_padding, end_padding, dilations
        As :func:`dmlops.max_pooling2` (defaults: strides and dilations 1, paddings 0).
    backend, feature_level, out
        As :func:`dmlops.execute`.

    Returns
    -------
    array
        ``OutputGradientTensor``, shaped as ``x``: each ``dy`` element added at the
        position of its window's maximum (ties: lowest index), 0 elsewhere.

    Examples
    --------
    The page's example:

    >>> import numpy as np, dmlops
    >>> x = np.array([[1, 2, 3], [2, 4, 2], [5, 6, 7]], dtype=np.float32).reshape(1, 1, 3, 3)
    >>> dy = np.array([[1, 2], [4, 5]], dtype=np.float32).reshape(1, 1, 2, 2)
    >>> dmlops.max_pooling_grad(x, dy, [2, 2])[0, 0]
    array([[0., 0., 0.],
           [0., 3., 0.],
           [0., 4., 5.]], dtype=float32)
    """
    input_tensor = tensor_of(x, "x")
    window = pooling_window(window_size, strides, start_padding, end_padding, dilations, function="max_pooling_grad")
    desc = MaxPoolingGradDesc(
        input_tensor=input_tensor,
        input_gradient_tensor=tensor_of(dy, "dy"),
        output_gradient_tensor=input_tensor,
        strides=window.strides,
        window_size=window.window_size,
        start_padding=window.start_padding,
        end_padding=window.end_padding,
        dilations=window.dilations,
    )
    return run_single_output(
        desc,
        {"InputTensor": x, "InputGradientTensor": dy},
        backend=backend,
        feature_level=feature_level,
        out=out,
        output_member="OutputGradientTensor",
    )
