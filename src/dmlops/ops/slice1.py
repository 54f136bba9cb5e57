"""``dmlops.slice1``: SLICE1 on arrays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backends import DEFAULT_BACKEND
from ..descs.slice1 import Slice1Desc
from ..enums import FeatureLevel
from ._common import int_tuple, optional_int_tuple, run_single_output, tensor_of


def slice1(
    x: Any,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int],
    *,
    output_sizes: Sequence[int] | None = None,
    backend: str = DEFAULT_BACKEND,
    feature_level: FeatureLevel | str | None = None,
    out: Any = None,
) -> Any:
    """DML_SLICE1: copy the window ``offsets``/``sizes`` of ``x`` with signed ``strides``.

    Parameters
    ----------
    x : array
        The input tensor (any rank 1 to 8).
    offsets, sizes, strides : sequence of int
        ``InputWindowOffsets``, ``InputWindowSizes``, ``InputWindowStrides``.
    output_sizes : sequence of int, optional
        ``OutputTensor.Sizes``; defaults to every reachable element,
        ``1 + (sizes[i] - 1) // abs(strides[i])``.
    backend, feature_level, out
        As :func:`dmlops.execute`.

    Examples
    --------
    The page's Example 2 (negative stride):

    >>> import numpy as np, dmlops
    >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> dmlops.slice1(x, [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, -2, 2])[0, 0]
    array([[14., 16.],
           [ 6.,  8.]], dtype=float32)
    """
    input_tensor = tensor_of(x, "x")
    offsets = int_tuple(offsets, "slice1", "offsets")
    sizes = int_tuple(sizes, "slice1", "sizes")
    strides = int_tuple(strides, "slice1", "strides")
    output_sizes = optional_int_tuple(output_sizes, "slice1", "output_sizes")
    if output_sizes is None:
        output_sizes = [1 + (s - 1) // abs(st) if st else 1 for s, st in zip(sizes, strides)]
    desc = Slice1Desc(
        input_tensor=input_tensor,
        output_tensor=input_tensor.with_sizes(output_sizes),
        input_window_offsets=offsets,
        input_window_sizes=sizes,
        input_window_strides=strides,
    )
    return run_single_output(desc, {"InputTensor": x}, backend=backend, feature_level=feature_level, out=out)
