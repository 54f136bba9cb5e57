"""Parameters shared by MAX_POOLING2 and MAX_POOLING_GRAD (kernels/pooling.cu)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..descs._pooling import PoolingWindow
from ._plan import max_abs_offset
from ._runtime import params, plane_item_fields


def _spatial3(values: Sequence[int], fill: int) -> list[int]:
    """Pad a 2-D spatial array to 3-D with a leading entry ``fill``."""
    values = [int(v) for v in values]
    return [fill] * (3 - len(values)) + values


def _strides5(strides: Sequence[int]) -> list[int]:
    """``{N, C, [D], H, W}`` strides as five entries (a missing D gets stride 0)."""
    s = [int(v) for v in strides]
    return s if len(s) == 5 else [s[0], s[1], 0, s[2], s[3]]


def pool_params(
    window: PoolingWindow,
    input_sizes: Sequence[int],
    output_sizes: Sequence[int],
    x_strides: Sequence[int],
    y_strides: Sequence[int],
    z_strides: Sequence[int],
    count: int,
) -> tuple[np.void, bool]:
    """(the PoolParams struct, whether 32-bit offsets are exact)."""
    n, c = int(input_sizes[0]), int(input_sizes[1])
    p = params(
        ("count", "i8", count),
        ("n", "i8", n),
        ("c", "i8", c),
        ("in_size", "i8", _spatial3(input_sizes[2:], 1)),
        ("out_size", "i8", _spatial3(output_sizes[2:], 1)),
        ("stride", "i8", _spatial3(window.strides, 1)),
        ("window", "i8", _spatial3(window.window_size, 1)),
        ("pad", "i8", _spatial3(window.start_padding, 0)),
        ("dil", "i8", _spatial3(window.dilations, 1)),
        ("x_stride", "i8", _strides5(x_strides)),
        ("y_stride", "i8", _strides5(y_strides)),
        ("z_stride", "i8", _strides5(z_strides)),
    )
    elements = int(np.prod(input_sizes)) + int(np.prod(output_sizes))
    # Window coordinates o * Stride - StartPadding + k * Dilation, also of windows of
    # padding only (any output size, any padding): the 32-bit kernels form them in int.
    reach = max(
        int(o) * int(s) + int(pad) + (int(k) - 1) * int(d) + int(i)
        for o, s, pad, k, d, i in zip(
            output_sizes[2:], window.strides, window.start_padding, window.window_size, window.dilations,
            input_sizes[2:],
        )
    )  # fmt: skip
    biggest = max(
        max_abs_offset(input_sizes, x_strides),
        max_abs_offset(output_sizes, y_strides),
        max_abs_offset(output_sizes if len(z_strides) == len(output_sizes) else input_sizes, z_strides),
        4 * elements,
        reach,
    )
    return p, biggest < 2**30


def div_params(count: int, d0: int, d1: int, c: int) -> np.void:
    """PoolDivParams: ``count`` threads decomposed by (d0, d1, C), with fast_div magic numbers."""
    return params(*plane_item_fields(count, d0, d1, c))
