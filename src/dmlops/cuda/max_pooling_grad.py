"""MAX_POOLING_GRAD on the GPU as a gather (no atomics, no zero-fill; deterministic).

2-D windows with dilation 1 and at most 5 x 5 elements / stride 5 take a lean two-pass
form with the window and stride known at compile time, 32-bit offsets and the thread
index decomposed by multiplication (``fast_div``). Pass 1, ``max_pool_argmax_k2d_m``,
stores every window's argmax (the forward's rule: ties to the lowest index, first NaN
wins) as one byte, 4 adjacent windows per thread (9 input columns per row instead of 12,
the 4 bytes stored as one 32-bit word) and, where the layout allows, each row segment
loaded with 16-byte loads plus one lane shuffle (``two_pass4v``; ``two_pass4`` is the
same with scalar loads). Pass 2, ``max_pool_grad_blk2d``: every thread owns a 2 x 2
block of OutputGradient, reads the InputGradient and argmax bytes of the few windows that
contain it and writes its block once (paired stores).

Other designs were measured on an H100 and removed (docs/performance.md, "Earlier runs"):
one window per thread in pass 1, pass 2 on 2 x 4 blocks or 16-byte strips, and one-pass
kernels recomputing the argmaxes in registers or from a shared-memory tile were all
slower. Other windows take two generic passes: the argmax of every window is stored as
its offset inside the window (one byte for windows of up to 255 elements), then each
OutputGradient element visits the windows that contain it and sums the InputGradient of
those that selected it. Sums are formed in float32 for FLOAT16 and rounded once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..descs.max_pooling_grad import MaxPoolingGradDesc
from ..enums import FeatureLevel
from ._copy import C_TYPES, PlanCache, grid_for, index_type
from ._pooling import pool_params
from ._runtime import cupy_module, element_strides, fast_div, get_kernel, params

_PLANS = PlanCache()
BLOCK = 256
FUSED_MAX = 5
"""Largest window extent and stride (per axis) of the 2-D fast path."""
VARIANTS = ("two_pass4", "two_pass4v")
"""2-D fast path: pass 1 with 4 adjacent windows per thread and scalar loads (``two_pass4``)
or 16-byte row loads with lane shuffles where the layout allows (``two_pass4v``)."""
WINDOWS = 4
"""Adjacent windows per thread in pass 1 of ``two_pass4``/``two_pass4v``."""
VARIANT = "two_pass4v"
"""The 2-D fast path :func:`run` takes."""


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
    launch(plan, x, dy, dx)


def launch(plan: tuple[Any, ...], x: Any, dy: Any, dx: Any) -> None:
    """Run a plan of :func:`_plan` on device views."""
    _, kind, first, second, blocks1, blocks2, p, q1, q2, n_out, arg_dtype = plan
    arg = cupy_module().empty(n_out, dtype=arg_dtype)
    if kind == "two_pass":
        # (16-byte-load kernel or None, scalar kernel); (paired-store kernel, scalar-store kernel)
        fn1 = first[0] if first[0] is not None and x.data.ptr % 16 == 0 else first[1]
        fn1((blocks1,), (BLOCK,), (x, arg, p, q1))
        fn = second[0] if dx.data.ptr % (2 * dx.itemsize) == 0 else second[1]
        fn((blocks2,), (BLOCK,), (arg, dy, dx, p, q2))
        return
    first((blocks1,), (BLOCK,), (x, arg, p))
    second((blocks2,), (BLOCK,), (arg, dy, dx, p))


def _div_params(count: int, d0: int, d1: int, c: int) -> Any:
    """PoolDivParams: ``count`` threads decomposed by (d0, d1, C)."""
    dv: list[int] = []
    for d in (d0, d1, c):
        dv.extend(fast_div(d))
    return params(("count", "i8", count), ("dv", "i8", dv), ("div", "i8", [d0, d1, c]))


def _plan(
    desc: MaxPoolingGradDesc,
    x_shape: tuple[int, ...],
    dy_shape: tuple[int, ...],
    xs: tuple[int, ...],
    gs: tuple[int, ...],
    ds: tuple[int, ...],
    dtype: Any,
    variant: str | None = None,
) -> tuple[Any, ...]:
    """(desc, kind, kernel 1, kernel 2, blocks 1, blocks 2, params, div params 1 and 2, argmax count and dtype).

    ``variant`` overrides :data:`VARIANT` (benchmarks).
    """
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
    fast = len(ws) == 2 and tuple(desc.dilations) == (1, 1) and max(ws + st) <= FUSED_MAX
    if fast and use32:
        n, c, h, w = (int(v) for v in x_shape)
        oh, ow = int(dy_shape[2]), int(dy_shape[3])
        bx, by = -(-w // 2), -(-h // 2)
        threads = n * c * by * bx
        q = _div_params(threads, bx, by, c)
        # Paired stores: unit inner stride, an even width, even row/plane strides (the
        # pointer's alignment is checked per call).
        vec = ds[3] == 1 and w % 2 == 0 and all(v % 2 == 0 for v in ds[:3])
        kk = f"{ws[0]}, {ws[1]}, {st[0]}, {st[1]}"
        flags = ("true" if vec else "false", "false")  # (paired stores, scalar stores)
        chosen = variant or VARIANT
        if chosen not in VARIANTS:
            raise ValueError(f"unknown MAX_POOLING_GRAD variant {chosen!r} (known: {', '.join(VARIANTS)})")
        pair = [get_kernel("pooling.cu", f"max_pool_grad_blk2d<{t}, {kk}, {v}>") for v in flags]
        m = WINDOWS
        qw = -(-ow // m)
        threads1 = n * c * oh * qw
        q1 = _div_params(threads1, qw, oh, c)
        scalar = get_kernel("pooling.cu", f"max_pool_argmax_k2d_m<{t}, {kk}, {m}, false, 0>")
        v = m * st[1]
        pw = int(desc.window.start_padding[1])
        itemsize = int(dtype.itemsize)
        # 16-byte row loads: unit inner stride, rows / planes / width multiples of
        # the M * SW columns one thread owns (the pointer is checked per call).
        vec_ok = (
            chosen == "two_pass4v"
            and xs[3] == 1
            and all(e % v == 0 for e in xs[:3])
            and w % v == 0
            and (v * itemsize) % 16 == 0
            and pw <= v
        )
        fv = get_kernel("pooling.cu", f"max_pool_argmax_k2d_m<{t}, {kk}, {m}, true, {pw}>") if vec_ok else None
        return (
            desc,
            "two_pass",
            (fv, scalar),
            pair,
            grid_for(threads1, BLOCK),
            grid_for(threads, BLOCK),
            p,
            q1,
            q,
            n_out,
            "uint8",
        )
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
    return (
        desc,
        "generic",
        first,
        second,
        grid_for(n_out, BLOCK),
        grid_for(count, BLOCK),
        p,
        None,
        None,
        n_out,
        arg_dtype,
    )
