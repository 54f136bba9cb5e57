"""MAX_POOLING_GRAD on the GPU as a gather (no atomics, no zero-fill; deterministic).

2-D windows with dilation 1 and at most 5 x 5 elements / stride 5 take a lean two-pass
form with the window and stride known at compile time, 32-bit offsets and the thread
index decomposed by multiplication (``fast_div``): ``max_pool_argmax_k2d`` stores every
window's argmax (the forward's rule: ties to the lowest index, first NaN wins) as one
byte, then in ``max_pool_grad_blk2d`` every thread owns a 2 x 2 block of OutputGradient,
reads the InputGradient and argmax bytes of the few windows that contain it and writes
its block once (paired stores). Pass 1 by default (``two_pass4v``) takes 4 adjacent
windows per thread (``max_pool_argmax_k2d_m``: 9 input columns per row instead of 12,
the 4 bytes stored as one 32-bit word) and, where the layout allows, loads each row
segment with 16-byte loads plus one lane shuffle: 113.8 vs 139.2 µs (fp32) on an H100.
Pass 2 on 2 x 8 / 2 x 16 strips with 16-byte stores (``two_pass4vs``, ``two_pass4vs8``,
bitwise-equal sums) was slower on an H100 (121.5 / 119.7 vs 110.0 µs fp32, 150.1 / 110.1 vs
100.8 µs fp16) and stays a variant.
Measured on an H100 the two-pass form is about twice as fast as
recomputing the argmaxes in the same pass (in registers, ``blk``, or from a shared-memory
tile, ``tile``), which stay available to the benchmark. Other windows take two generic
passes: the argmax of every window is stored as its offset inside the window (one byte
for windows of up to 255 elements), then each OutputGradient element visits the windows
that contain it and sums the InputGradient of those that selected it. Sums are formed in
float32 for FLOAT16 and rounded once.
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
TILE = (32, 32)
"""OutputGradient rows x columns per block of the shared-memory tile kernel."""
FUSED_MAX = 5
"""Largest window extent and stride (per axis) of the 2-D fast paths."""
VARIANTS = ("two_pass", "two_pass4", "two_pass4v", "two_pass4vw", "two_pass4vs", "two_pass4vs8", "blk", "tile")
"""2-D fast paths: argmax bytes then a gather (``two_pass``; ``two_pass4``: pass 1 takes
4 adjacent windows per thread, ``two_pass4v``: the same with 16-byte row loads and lane
shuffles where the layout allows, ``two_pass4vw``: and pass 2 writes 2 x 4 blocks,
``two_pass4vs``: and pass 2 writes 2 x (32 bytes) strips with 16-byte stores, reading the
argmax bytes as 32-bit words and InputGradient as 4-element vectors, ``two_pass4vs8``: the
same with 2 x 8 strips for every type), one
pass recomputing the argmaxes in registers (``blk``), the shared-memory tile kernel
(``tile``); the benchmark times all of them."""
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
    if kind == "tile":
        first((blocks1,), (BLOCK,), (x, dy, dx, p))
        return
    if kind == "blk":
        fn = first if dx.data.ptr % (2 * dx.itemsize) == 0 else second  # second: scalar stores
        fn((blocks1,), (BLOCK,), (x, x, dy, dx, p, q1))
        return
    arg = cupy_module().empty(n_out, dtype=arg_dtype)
    if kind == "two_pass":
        if isinstance(first, tuple):  # (16-byte-load kernel or None, scalar kernel)
            fn1 = first[0] if first[0] is not None and x.data.ptr % 16 == 0 else first[1]
        else:
            fn1 = first
        fn1((blocks1,), (BLOCK,), (x, arg, p, q1))
        fn = second[0] if dx.data.ptr % (2 * dx.itemsize) == 0 else second[1]
        fn((blocks2,), (BLOCK,), (x, arg, dy, dx, p, q2))
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
    if fast and (variant or VARIANT) == "tile":
        fn = get_kernel(
            "pooling.cu", f"max_pool_grad_tile2d<{t}, {it}, {ws[0]}, {ws[1]}, {st[0]}, {st[1]}, {TILE[0]}, {TILE[1]}>"
        )
        tiles = x_shape[0] * x_shape[1] * -(-x_shape[2] // TILE[0]) * -(-x_shape[3] // TILE[1])
        return (desc, "tile", fn, None, max(1, min(tiles, 2**31 - 1)), 0, p, None, None, 0, "")
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
        flags = ("true" if vec else "false", "false")
        chosen = variant or VARIANT
        if chosen.startswith("two_pass"):
            pair = [get_kernel("pooling.cu", f"max_pool_grad_blk2d<{t}, {kk}, false, {v}>") for v in flags]
            threads2 = threads
            if chosen == "two_pass":
                first: Any = get_kernel("pooling.cu", f"max_pool_argmax_k2d<{t}, {kk}>")
                threads1 = n * c * oh * ow
                q1 = _div_params(threads1, ow, oh, c)
            else:
                if chosen.startswith("two_pass4vs"):
                    # Pass 2: 2 x BW strips, 16-byte stores (max_pool_grad_strip2d); the
                    # same sums in the same order as max_pool_grad_blk2d (bit-identical).
                    bw = 8 if chosen.endswith("8") else max(2, 32 // int(dtype.itemsize))
                    bxs = -(-w // bw)
                    threads2 = n * c * by * bxs
                    q = _div_params(threads2, bxs, by, c)
                    vld = "true" if gs[3] == 1 else "false"
                    pair = [
                        get_kernel("pooling.cu", f"max_pool_grad_strip2d<{t}, {kk}, {f}, {vld}, {bw}>") for f in flags
                    ]
                elif chosen.endswith("w"):
                    # Pass 2: 2 x 4 blocks of OutputGradient per thread (2 x 3 windows read
                    # instead of 2 x 4 for two 2 x 2 blocks at stride 2).
                    bw = 4
                    bx4 = -(-w // bw)
                    threads2 = n * c * by * bx4
                    q = _div_params(threads2, bx4, by, c)
                    pair = [get_kernel("pooling.cu", f"max_pool_grad_blk2d_w<{t}, {kk}, {f}, {bw}>") for f in flags]
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
                    chosen.startswith("two_pass4v")
                    and xs[3] == 1
                    and all(e % v == 0 for e in xs[:3])
                    and w % v == 0
                    and (v * itemsize) % 16 == 0
                    and pw <= v
                )
                fv = get_kernel("pooling.cu", f"max_pool_argmax_k2d_m<{t}, {kk}, {m}, true, {pw}>") if vec_ok else None
                first = (fv, scalar)
            return (
                desc,
                "two_pass",
                first,
                pair,
                grid_for(threads1, BLOCK),
                grid_for(threads2, BLOCK),
                p,
                q1,
                q,
                n_out,
                "uint8",
            )
        pair = [get_kernel("pooling.cu", f"max_pool_grad_blk2d<{t}, {kk}, true, {v}>") for v in flags]
        return (desc, "blk", pair[0], pair[1], grid_for(threads, BLOCK), 0, p, q, None, 0, "")
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
