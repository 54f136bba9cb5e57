"""MAX_POOLING2 on the GPU (values and indices bit-exact).

2-D windows with dilation 1 and at most ``FUSED_MAX`` elements / stride per axis, in
FLOAT32 or FLOAT16 with 32-bit offsets, take ``max_pool_k2d_m``: the window and stride
known at compile time, ``WINDOWS`` adjacent windows per thread sharing their input
columns, the thread index decomposed by multiplication (``fast_div``). Everything else
takes ``max_pool``, one thread per output element (zero Strides or WindowSize
included). Both scan a window row-major with DirectML's rule (kernels/pooling.cu):
keys ``(isnan(v) or v < L) ? L : v`` with L the type's lowest finite value, the first
in-bounds element starts, a strictly greater key replaces; the output value is the
running key (L for a window of only NaN / -inf), and a window of padding only (any
output size is valid) writes L and index 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..descs.max_pooling2 import MaxPooling2Desc
from ..enums import FeatureLevel
from ._copy import C_TYPES, PlanCache, grid_for, index_type
from ._pooling import div_params, pool_params
from ._runtime import PackedLaunch, element_strides, get_kernel
from .max_pooling_grad import FUSED_MAX, WINDOWS

_PLANS = PlanCache()
BLOCK = 256
FAST_TYPES = (np.dtype(np.float32), np.dtype(np.float16))
"""Data types of the 2-D fast path."""


def _launch(desc: MaxPooling2Desc, x: Any, y: Any, z: Any, xs: Any, ys: Any, zs: Any) -> PackedLaunch:
    """The kernel launch of a desc for these arrays' shapes, strides and types (pointers: x, y, z)."""
    count = y.size
    # A zero Dilation changes which elements DirectML scans (PoolingWindow.scanned); the
    # result has Dilations >= 1. Zero Strides / WindowSize take the generic kernel.
    window = desc.window.scanned()
    p, use32 = pool_params(window, x.shape, y.shape, xs, ys, zs, count)
    idx_c = "NoIndexOut" if z is None else {"uint32": "u32", "uint64": "u64"}[str(z.dtype)]
    t = C_TYPES[x.dtype]
    ws, st = tuple(window.window_size), tuple(window.strides)
    fast = len(ws) == 2 and tuple(window.dilations) == (1, 1) and min(ws + st) >= 1 and max(ws + st) <= FUSED_MAX
    if fast and use32 and x.dtype in FAST_TYPES:
        n, c, _, _ = x.shape
        oh, ow = y.shape[2:]
        qw = -(-ow // WINDOWS)
        threads = n * c * oh * qw
        kk = f"{ws[0]}, {ws[1]}, {st[0]}, {st[1]}"
        fn = get_kernel("pooling.cu", f"max_pool_k2d_m<{t}, {idx_c}, {kk}, {WINDOWS}>")
        return PackedLaunch(fn, grid_for(threads, BLOCK), BLOCK, 3, p, div_params(threads, qw, oh, c))
    fn = get_kernel("pooling.cu", f"max_pool<{t}, {idx_c}, {index_type(use32)}>")
    return PackedLaunch(fn, grid_for(count, BLOCK), BLOCK, 3, p)


def run(
    desc: MaxPooling2Desc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch MAX_POOLING2 on device views (see :func:`dmlops.cuda.execute`)."""
    x = inputs["InputTensor"]
    y = outputs["OutputTensor"]
    z = outputs.get("OutputIndicesTensor")
    xs, ys = element_strides(x), element_strides(y)
    zs = element_strides(z) if z is not None else ys
    key = (id(desc), xs, ys, zs)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _PLANS.put(key, (desc, _launch(desc, x, y, z, xs, ys, zs)))
    plan[1](x.data.ptr, y.data.ptr, (z if z is not None else y).data.ptr)
