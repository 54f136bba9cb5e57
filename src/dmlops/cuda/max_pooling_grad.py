"""MAX_POOLING_GRAD on the GPU as a gather (no atomics, no zero-fill; deterministic).

Two passes: the argmax of every window (the forward's rule: ties to the lowest index,
first NaN wins) is stored as its offset inside the window (one byte for windows of up
to 255 elements), then each OutputGradient element visits the windows that contain it
and sums the InputGradient of those that selected it, in float32 for FLOAT16, rounded
once. (A single-pass variant that re-evaluates every containing window per element,
``max_pool_grad`` in pooling.cu, measured 7x slower on 3x3/s2.)
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
        count = dx.size
        p, use32 = pool_params(desc.window, x.shape, dy.shape, xs, gs, ds, count)
        volume = 1
        for k in desc.window_size:
            volume *= k
        arg_c, arg_dtype = ("u8", "uint8") if volume <= 255 else ("i32", "int32")
        it = index_type(use32)
        t = C_TYPES[x.dtype]
        if len(desc.window_size) == 2 and max(desc.window_size) <= 4:
            kmax = max(2, max(desc.window_size))
            first = get_kernel("pooling.cu", f"max_pool_argmax2d<{t}, {arg_c}, {it}, {kmax}>")
        else:
            first = get_kernel("pooling.cu", f"max_pool_argmax<{t}, {arg_c}, {it}>")
        overlap = [-(-((k - 1) * d + 1) // st) for k, d, st in zip(desc.window_size, desc.dilations, desc.strides)]
        if len(overlap) == 2 and max(overlap) <= 4:
            # 2-D with at most 4 overlapping windows per axis: the unrolled gather.
            reach = max(2, max(overlap))
            second = get_kernel("pooling.cu", f"max_pool_grad_gather2d<{t}, {arg_c}, {it}, {reach}>")
        else:
            second = get_kernel("pooling.cu", f"max_pool_grad_gather<{t}, {arg_c}, {it}>")
        plan = _PLANS.put(
            key, (desc, first, second, grid_for(dy.size, BLOCK), grid_for(count, BLOCK), p, dy.size, arg_dtype)
        )
    _, first, second, blocks1, blocks2, p, n_out, arg_dtype = plan
    arg = cupy_module().empty(n_out, dtype=arg_dtype)
    first((blocks1,), (BLOCK,), (x, arg, p))
    second((blocks2,), (BLOCK,), (arg, dy, dx, p))
