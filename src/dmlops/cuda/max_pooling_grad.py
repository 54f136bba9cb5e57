"""MAX_POOLING_GRAD on the GPU as a gather (no atomics, no zero-fill; deterministic).

2-D windows with dilation 1 and at most 5 x 5 elements / stride 5 take one fused pass
(``max_pool_grad_tile2d``): each block stages an input tile in shared memory, computes
the argmax of every window touching its OutputGradient tile (the forward's rule: ties
to the lowest index, first NaN wins) and gathers. Other windows take two passes: the
argmax of every window is stored as its offset inside the window (one byte for windows
of up to 255 elements), then each OutputGradient element visits the windows that
contain it and sums the InputGradient of those that selected it. Sums are formed in
float32 for FLOAT16 and rounded once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..descs.max_pooling_grad import MaxPoolingGradDesc
from ..enums import FeatureLevel
from ._copy import C_TYPES, PlanCache, grid_for, index_type
from ._pooling import pool_params
from ._runtime import cupy_module, element_strides, get_kernel

_PLANS = PlanCache()
BLOCK = 256
TILE = (32, 32)
"""OutputGradient rows x columns per block of the fused 2-D kernel."""
FUSED_MAX = 5
"""Largest window extent and stride (per axis) of the fused 2-D kernel."""


def run(
    desc: MaxPoolingGradDesc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch MAX_POOLING_GRAD on device views (see :func:`dmlops.cuda.execute`)."""
    x = inputs["InputTensor"]
    dy = inputs["InputGradientTensor"]
    dx = outputs["OutputGradientTensor"]
    xs, gs, ds = element_strides(x), element_strides(dy), element_strides(dx)
    key = (id(desc), xs, gs, ds)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _PLANS.put(key, _plan(desc, x.shape, dy.shape, xs, gs, ds, x.dtype))
    _, first, second, blocks1, blocks2, p, n_out, arg_dtype = plan
    if second is None:  # the fused 2-D kernel
        first((blocks1,), (BLOCK,), (x, dy, dx, p))
        return
    arg = cupy_module().empty(n_out, dtype=arg_dtype)
    first((blocks1,), (BLOCK,), (x, arg, p))
    second((blocks2,), (BLOCK,), (arg, dy, dx, p))


def _plan(
    desc: MaxPoolingGradDesc,
    x_shape: tuple[int, ...],
    dy_shape: tuple[int, ...],
    xs: tuple[int, ...],
    gs: tuple[int, ...],
    ds: tuple[int, ...],
    dtype: Any,
) -> tuple[Any, ...]:
    """(desc, kernel 1, kernel 2 or None, blocks 1, blocks 2, params, argmax count, argmax dtype)."""
    count = 1
    for n in x_shape:
        count *= n
    n_out = 1
    for n in dy_shape:
        n_out *= n
    p, use32 = pool_params(desc.window, x_shape, dy_shape, xs, gs, ds, count)
    it = index_type(use32)
    t = C_TYPES[dtype]
    ws, st = tuple(desc.window_size), tuple(desc.strides)
    if len(ws) == 2 and tuple(desc.dilations) == (1, 1) and max(ws + st) <= FUSED_MAX:
        fn = get_kernel(
            "pooling.cu", f"max_pool_grad_tile2d<{t}, {it}, {ws[0]}, {ws[1]}, {st[0]}, {st[1]}, {TILE[0]}, {TILE[1]}>"
        )
        tiles = x_shape[0] * x_shape[1] * -(-x_shape[2] // TILE[0]) * -(-x_shape[3] // TILE[1])
        return (desc, fn, None, max(1, min(tiles, 2**31 - 1)), 0, p, 0, "")
    volume = 1
    for k in ws:
        volume *= k
    arg_c, arg_dtype = ("u8", "uint8") if volume <= 255 else ("i32", "int32")
    if len(ws) == 2 and max(ws) <= 4:
        first = get_kernel("pooling.cu", f"max_pool_argmax2d<{t}, {arg_c}, {it}, {max(2, max(ws))}>")
    else:
        first = get_kernel("pooling.cu", f"max_pool_argmax<{t}, {arg_c}, {it}>")
    overlap = [-(-((k - 1) * d + 1) // s) for k, d, s in zip(ws, desc.dilations, st)]
    if len(overlap) == 2 and max(overlap) <= 4:
        # 2-D with at most 4 overlapping windows per axis: the unrolled gather.
        second = get_kernel("pooling.cu", f"max_pool_grad_gather2d<{t}, {arg_c}, {it}, {max(2, max(overlap))}>")
    else:
        second = get_kernel("pooling.cu", f"max_pool_grad_gather<{t}, {arg_c}, {it}>")
    return (desc, first, second, grid_for(n_out, BLOCK), grid_for(count, BLOCK), p, n_out, arg_dtype)
