"""Pooling on the CUDA backend: MAX_POOLING2, MAX_POOLING_GRAD and the generic neighbours.

The neighbours: MAX_POOLING and MAX_POOLING1 (as their MAX_POOLING2 equivalent),
AVERAGE_POOLING(1) and LP_POOLING(1) (window sums), AVERAGE_POOLING_GRAD (a gather) and
MAX_UNPOOLING (a scatter), in kernels/avg_pool.cu on MAX_POOLING2's PoolParams
(:func:`pool_params`). They follow the reference's numerics step for step, so their
results are bit-identical to it, except LP_POOLING with P other than 0, 1 and 2 (a
float64 power whose last float64 bits differ from libm's; within the reference's stated
tolerance):

* AVERAGE_POOLING(1), LP_POOLING(1): one thread per output sums a float32 term of each
  in-bounds element from +0 in row-major window order, then divides (AVERAGE), takes a
  square root (P 2) or a power (other P). 2-D windows up to ``FUSED_MAX`` with dilation 1
  (AVERAGE, P 1, P 2) take ``pool_sum_k2d``: window and stride known at compile time,
  ``SUM_WINDOWS`` adjacent outputs per thread sharing their input columns.
* AVERAGE_POOLING_GRAD: each OutputGradient element sums, in float64, the float32 shares
  ``g[o] / divisor(o)`` of the windows holding it in increasing window offset (the
  reference's order), and is rounded once. No atomics.
* MAX_UNPOOLING: a zeroed packed scratch, a scatter of raw bits, a check pass that raises
  a device flag for conflicting duplicates; the flag is read once, and the caller's output
  is written (a strided copy of the scratch) only when it is clear.

Shared helpers
--------------
Parameters shared by MAX_POOLING2 and MAX_POOLING_GRAD (kernels/pooling.cu).

MAX_POOLING2
------------
MAX_POOLING2 on the GPU (values and indices bit-exact).

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

MAX_POOLING_GRAD
----------------
MAX_POOLING_GRAD on the GPU as a gather (no atomics, no zero-fill; deterministic).

2-D windows with dilation 1 and at most 5 x 5 elements / stride 5 have fast paths with
the window and stride known at compile time, 32-bit offsets and the thread index
decomposed by multiplication (``fast_div``).

FLOAT32 and FLOAT16 take one pass where the windows allow (``stream``, :func:`_stream`):
``max_pool_grad_stream2d`` walks column strips down the rows, a lane per window column,
keeping the argmax and InputGradient of the window rows the current block row needs in
registers; InputTensor, InputGradientTensor and OutputGradientTensor are each read or
written once and no argmax array goes through memory. Otherwise a two-pass form. Pass 1, ``max_pool_argmax_k2d_m``,
stores every window's argmax (the forward's rule, kernels/pooling.cu: ties to the lowest
index, NaN and -inf count as the type's lowest finite value; 255 for a window of padding
only, whose InputGradient is dropped) as one byte, 4 adjacent windows per thread (9 input columns per row instead of 12,
the 4 bytes stored as one 32-bit word) and, where the layout allows, each row segment
loaded with 16-byte loads plus one lane shuffle (``two_pass4v``; ``two_pass4`` is the
same with scalar loads). Pass 2, ``max_pool_grad_blk2d``: every thread owns a 2 x 2
block of OutputGradient, reads the InputGradient and argmax bytes of the few windows that
contain it and writes its block once (paired stores); where the stride divides 2 the
block's offsets inside its windows are compile-time constants (``_block_offset``), so its
window tests fold away. Under ``two_pass4v_row16``, 2-byte types (FLOAT16) take ``max_pool_grad_row16`` instead where
the layout allows: every thread owns 16 contiguous bytes of one OutputGradient row,
consecutive threads consecutive chunks, written with one 16-byte store (same sums in the
same order: identical bits).

Other designs were measured on an H100 and removed (docs/performance.md, "Earlier runs"):
one window per thread in pass 1, pass 2 on 2 x 4 blocks or 16-byte strips, and one-pass
kernels recomputing every argmax of a 2 x 2 block in registers or from a shared-memory
tile were all slower. Other windows take two generic passes: the argmax of every window is stored as
its offset inside the window (one byte for windows of up to 255 elements), then each
OutputGradient element visits the windows that contain it and sums the InputGradient of
those that selected it. Sums are formed in float32 for FLOAT16 and rounded once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..descs._base import run_as
from ..descs.pooling import (
    MaxPooling2Desc,
    MaxPoolingGradDesc,
    PoolingWindow,
    generic_window,
    max_pooling2_equivalent,
    unpooling_targets,
)
from ..enums import FeatureLevel
from ..errors import UnsupportedError
from ._copy import C_TYPES, PlanCache, grid_for, index_type
from ._plan import max_abs_offset
from ._runtime import PackedLaunch, cupy_module, element_strides, fast_div, get_kernel, params, plane_item_fields

# -- Shared helpers ------------------------------------------------------------


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


# -- MAX_POOLING2 --------------------------------------------------------------

_MAX_POOLING2_PLANS = PlanCache()
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


def run_max_pooling2(
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
    plan = _MAX_POOLING2_PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _MAX_POOLING2_PLANS.put(key, (desc, _launch(desc, x, y, z, xs, ys, zs)))
    plan[1](x.data.ptr, y.data.ptr, (z if z is not None else y).data.ptr)


# -- MAX_POOLING_GRAD ----------------------------------------------------------

_MAX_POOLING_GRAD_PLANS = PlanCache()
FUSED_MAX = 5
"""Largest window extent and stride (per axis) of the 2-D fast path."""
VARIANTS = ("two_pass4", "two_pass4v", "two_pass4v_row16", "stream")
"""2-D fast path: pass 1 with 4 adjacent windows per thread and scalar loads (``two_pass4``)
or 16-byte row loads with lane shuffles where the layout allows (``two_pass4v``);
``two_pass4v_row16`` is ``two_pass4v`` with pass 2 on 16-byte row chunks where the layout
allows (:func:`_row16`); ``stream`` is one pass down column strips where the windows
allow (:func:`_stream`, else ``two_pass4v_row16``)."""
STREAM_ROWS = 8
"""Block rows per warp of ``max_pool_grad_stream2d`` (each strip recomputes the window rows
its first block row shares with the strip above: one for 3 x 3 / stride 2)."""
WINDOWS = 4
"""Adjacent windows per thread in pass 1 of ``two_pass4``/``two_pass4v``."""
VARIANT: str | None = None
"""The 2-D fast path :func:`run` takes; None: ``stream`` for the element sizes of
:data:`STREAM_ITEMSIZES`, else ``two_pass4v_row16``."""
STREAM_ITEMSIZES = (4, 2)
"""Element sizes whose default 2-D fast path is ``stream``. On the H100 (workload of
docs/performance.md, kernel only, 2026-11-25) FLOAT32 took 93.7 µs in one pass against
99.6 in two (two_pass4v); FLOAT16 66.5 against 84.2 (two_pass4v_row16), since the single
pass converts and compares its keys where it uses them, not where it loads them (when it
converted FLOAT16 at the load, one step ahead, it took 105 µs: every step waited for the
loads meant for the next)."""
ROW16_ITEMSIZES = (2,)
"""Element sizes whose pass 2 takes ``max_pool_grad_row16`` under the default variant."""


def run_max_pooling_grad(
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
    plan = _MAX_POOLING_GRAD_PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _MAX_POOLING_GRAD_PLANS.put(key, _plan(desc, x.shape, dy.shape, xs, gs, ds, x.dtype))
    launch(plan, x, dy, dx)


class PoolGradPlan(NamedTuple):
    """A MAX_POOLING_GRAD launch plan of :func:`_plan` (its kernels' PackedLaunches)."""

    desc: MaxPoolingGradDesc
    kind: str
    """``stream`` (one pass), ``two_pass`` (the 2-D fast path) or ``generic``."""
    first: Any
    """stream: (paired-store launch or None, scalar launch); two_pass: (16-byte-load launch
    or None, scalar launch) of pass 1; generic: the pass 1 launch."""
    second: Any
    """two_pass: (paired-store launch, scalar launch, (row16 launch, InputGradient alignment
    in bytes) or None) of pass 2; generic: the pass 2 launch; stream: None."""
    arg_count: int
    """Elements of the argmax array between the passes (0 for one pass)."""
    arg_dtype: str | None


def launch(plan: PoolGradPlan, x: Any, dy: Any, dx: Any) -> None:
    """Run a plan of :func:`_plan` on device views."""
    if plan.kind == "stream":
        paired, scalar = plan.first
        fn = paired if paired is not None and dx.data.ptr % (2 * dx.itemsize) == 0 else scalar
        fn(x.data.ptr, dy.data.ptr, dx.data.ptr)
        return
    arg = cupy_module().empty(plan.arg_count, dtype=plan.arg_dtype)
    first_pass(plan, x, arg)
    second_pass(plan, arg, dy, dx)


def first_pass(plan: PoolGradPlan, x: Any, arg: Any) -> None:
    """Pass 1 of a plan: every window's argmax into ``arg`` (``plan.arg_count`` elements)."""
    fn = plan.first
    if plan.kind == "two_pass":
        vec, scalar = plan.first
        fn = vec if vec is not None and x.data.ptr % 16 == 0 else scalar
    fn(x.data.ptr, arg.data.ptr)


def second_pass(plan: PoolGradPlan, arg: Any, dy: Any, dx: Any) -> None:
    """Pass 2 of a plan: OutputGradient from pass 1's ``arg`` and InputGradient."""
    pointers = (arg.data.ptr, dy.data.ptr, dx.data.ptr)
    if plan.kind != "two_pass":
        plan.second(*pointers)
        return
    paired, scalar, row = plan.second
    if row is not None and dx.data.ptr % 16 == 0 and dy.data.ptr % row[1] == 0:
        row[0](*pointers)
    elif dx.data.ptr % (2 * dx.itemsize) == 0:
        paired(*pointers)
    else:
        scalar(*pointers)


def _block_offset(block: int, window: int, stride: int, pad: int) -> int:
    """The in-window offset of a block's first element in its first window, or -1.

    The offset (kh or kw) of a ``block``-aligned element in the first window that holds
    it is the same for every block when the stride divides ``block``. For i a multiple
    of the stride, the first window is ceil((i + pad - window + 1) / stride)
    and the offset i + pad - first * stride = pad - stride * floor((pad - window + stride) / stride).
    """
    if block % stride:
        return -1
    return pad - stride * ((pad - window + stride) // stride)


def _row16(
    t: str,
    ws: tuple[int, ...],
    st: tuple[int, ...],
    pw: int,
    shape: tuple[int, int, int, int],
    gs: tuple[int, ...],
    ds: tuple[int, ...],
    itemsize: int,
) -> tuple[Any, int, Any, int] | None:
    """``max_pool_grad_row16`` (kernel, blocks, div params, InputGradient alignment) or None.

    None where OutputGradient cannot be cut into aligned 16-byte row chunks. The
    alignment is in bytes (checked per call).

    A chunk is cw = 16 / itemsize columns; both gradients need unit inner strides, the
    window stride must divide cw so that a column's offset in its windows is the same in
    every chunk (compile time: ``dw``), and at most 5 window columns may touch a chunk
    (two argmax words).
    """
    n, c, h, w = shape
    cw = 16 // itemsize
    nwx = (cw + ws[1] - 2) // st[1] + 1
    aligned = ds[3] == 1 and w % cw == 0 and all(e % cw == 0 for e in ds[:3])
    if not (aligned and gs[3] == 1 and cw % st[1] == 0 and nwx <= 5):
        return None
    off = pw - ws[1] + st[1]
    dw = ws[1] - st[1] + off % st[1]  # kw of a chunk's first column in its first window
    first = off // st[1]  # first window column of chunk 0
    # InputGradient loads of gv elements: every chunk's first window column, the row and
    # plane strides (and the base, per call) multiples of gv.
    gv = next(
        g
        for g in (4, 2, 1)
        if g == 1
        or (
            g * itemsize <= 16
            and g <= nwx
            and (cw // st[1]) % g == 0
            and first % g == 0
            and all(e % g == 0 for e in gs[:3])
        )
    )
    kk = f"{ws[0]}, {ws[1]}, {st[0]}, {st[1]}"
    fn = get_kernel("pooling.cu", f"max_pool_grad_row16<{t}, {kk}, {dw}, {gv}>")
    threads = n * c * h * (w // cw)
    return fn, grid_for(threads, BLOCK), div_params(threads, w // cw, h, c), gv * itemsize


def _stream(
    t: str,
    ws: tuple[int, ...],
    st: tuple[int, ...],
    pads: tuple[int, ...],
    shape: tuple[int, int, int, int],
    out_w: int,
    xs: tuple[int, ...],
    ds: tuple[int, ...],
) -> tuple[tuple[Any, Any], int, Any] | None:
    """``max_pool_grad_stream2d``: ((paired-store kernel or None, scalar kernel), blocks, params).

    None where a block of OutputGradient meets more than 3 x 3 windows (registers), or
    where the last column block of a plane would need a window column that the lanes of
    the next plane compute (OW > ceil(W / SW) + DLO_W).
    """
    n, c, h, w = shape

    def reach(k: int, s: int, pad: int) -> tuple[int, int]:
        # windows i + lo .. i + hi hold block i: lo = ceil((P - K + 1) / S), hi = floor((S - 1 + P) / S)
        return -((k - 1 - pad) // s), (s - 1 + pad) // s

    lo_h, hi_h = reach(ws[0], st[0], pads[0])
    lo_w, hi_w = reach(ws[1], st[1], pads[1])
    nbw = -(-w // st[1])
    if hi_h - lo_h > 2 or hi_w - lo_w > 2 or out_w > nbw + lo_w:
        return None
    kk = f"{ws[0]}, {ws[1]}, {st[0]}, {st[1]}, {pads[0]}, {pads[1]}"
    scalar = get_kernel("pooling.cu", f"max_pool_grad_stream2d<{t}, {kk}, false>")
    # Paired stores (a block row is one pair: unit inner stride, even width and strides;
    # the pointer's alignment is checked per call), and InputTensor of unit inner stride.
    vec = st[1] == 2 and ds[3] == 1 and xs[3] == 1 and w % 2 == 0 and all(v % 2 == 0 for v in ds[:3])
    paired = get_kernel("pooling.cu", f"max_pool_grad_stream2d<{t}, {kk}, true>") if vec else None
    sp = _stream_params(n * c, nbw, -(-h // st[0]), c, hi_w - lo_w)
    warps = int(sp["col_warps"]) * int(sp["strips"])
    return (paired, scalar), grid_for(32 * warps, BLOCK), sp


def _stream_params(planes: int, nbw: int, nbh: int, c: int, ew: int) -> Any:
    """StreamParams: ``planes`` x ``nbw`` column blocks, 32 - ``ew`` per warp, ``nbh`` block rows."""
    blocks = planes * nbw
    return params(
        ("blocks", "i8", blocks),
        ("col_warps", "i8", -(-blocks // (32 - ew))),
        ("strips", "i8", -(-nbh // STREAM_ROWS)),
        ("strip_rows", "i8", STREAM_ROWS),
        ("dv", "i8", [*fast_div(nbw), *fast_div(c)]),
        ("div", "i8", [nbw, c]),
    )


def _plan(
    desc: MaxPoolingGradDesc,
    x_shape: tuple[int, ...],
    dy_shape: tuple[int, ...],
    xs: tuple[int, ...],
    gs: tuple[int, ...],
    ds: tuple[int, ...],
    dtype: Any,
    variant: str | None = None,
) -> PoolGradPlan:
    """The launch plan of a desc for these shapes, strides and data type.

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
        q = div_params(threads, bx, by, c)
        # Paired stores: unit inner stride, an even width, even row/plane strides (the
        # pointer's alignment is checked per call).
        vec = ds[3] == 1 and w % 2 == 0 and all(v % 2 == 0 for v in ds[:3])
        kk = f"{ws[0]}, {ws[1]}, {st[0]}, {st[1]}"
        flags = ("true" if vec else "false", "false")  # (paired stores, scalar stores)
        itemsize = int(dtype.itemsize)
        chosen = variant or VARIANT or ("stream" if itemsize in STREAM_ITEMSIZES else "two_pass4v_row16")
        if chosen not in VARIANTS:
            raise ValueError(f"unknown MAX_POOLING_GRAD variant {chosen!r} (known: {', '.join(VARIANTS)})")
        if chosen == "stream":
            pads = tuple(int(v) for v in desc.window.start_padding)
            stream = _stream(t, ws, st, pads, (n, c, h, w), ow, xs, ds)
            if stream is not None:
                (paired_fn, scalar_fn), blocks, sp = stream
                paired = PackedLaunch(paired_fn, blocks, BLOCK, 3, p, sp) if paired_fn is not None else None
                return PoolGradPlan(
                    desc, "stream", (paired, PackedLaunch(scalar_fn, blocks, BLOCK, 3, p, sp)), None, 0, None
                )
            chosen = "two_pass4v_row16"
        dh, dw = (_block_offset(2, k, s, int(pad)) for k, s, pad in zip(ws, st, desc.window.start_padding))
        pair = [get_kernel("pooling.cu", f"max_pool_grad_blk2d<{t}, {kk}, {v}, {dh}, {dw}>") for v in flags]
        m = WINDOWS
        qw = -(-ow // m)
        threads1 = n * c * oh * qw
        q1 = div_params(threads1, qw, oh, c)
        scalar = get_kernel("pooling.cu", f"max_pool_argmax_k2d_m<{t}, {kk}, {m}, false, 0>")
        v = m * st[1]
        pw = int(desc.window.start_padding[1])
        # 16-byte row loads: unit inner stride, rows / planes / width multiples of
        # the M * SW columns one thread owns (the pointer is checked per call).
        vec_ok = (
            chosen in ("two_pass4v", "two_pass4v_row16")
            and xs[3] == 1
            and all(e % v == 0 for e in xs[:3])
            and w % v == 0
            and (v * itemsize) % 16 == 0
            and pw <= v
        )
        fv = get_kernel("pooling.cu", f"max_pool_argmax_k2d_m<{t}, {kk}, {m}, true, {pw}>") if vec_ok else None
        # By default row16 serves 2-byte types only: on the H100 it made FLOAT16 faster
        # (89 vs 100 us) and FLOAT32 slower (123 vs 111 us); a named variant always uses it.
        use_row16 = chosen == "two_pass4v_row16" and (variant == chosen or itemsize in ROW16_ITEMSIZES)
        row = _row16(t, ws, st, pw, (n, c, h, w), gs, ds, itemsize) if use_row16 else None
        blocks1, blocks2 = grid_for(threads1, BLOCK), grid_for(threads, BLOCK)
        return PoolGradPlan(
            desc,
            "two_pass",
            (
                PackedLaunch(fv, blocks1, BLOCK, 2, p, q1) if fv is not None else None,
                PackedLaunch(scalar, blocks1, BLOCK, 2, p, q1),
            ),
            (
                *(PackedLaunch(k, blocks2, BLOCK, 3, p, q) for k in pair),
                (PackedLaunch(row[0], row[1], BLOCK, 3, p, row[2]), row[3]) if row is not None else None,
            ),
            -(-n_out // 4) * 4,  # whole 32-bit words: row16 reads the argmax bytes as words
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
    return PoolGradPlan(
        desc,
        "generic",
        PackedLaunch(first, grid_for(n_out, BLOCK), BLOCK, 2, p),
        PackedLaunch(second, grid_for(count, BLOCK), BLOCK, 3, p),
        n_out,
        arg_dtype,
    )


# -- AVERAGE_POOLING(1), LP_POOLING(1) -------------------------------------------------------

_SUM_PLANS = PlanCache()
SUM_MODES = {"AVERAGE": 0, "LP1": 1, "LP2": 2, "LPP": 3, "LP0": 4}
"""``PoolSumMode`` of kernels/avg_pool.cu: the term each element adds and the window's finish."""
SUM_FAST_MODES = (0, 1, 2)
"""Modes of the 2-D fast path ``pool_sum_k2d`` (no power, no count-only LP 0)."""
SUM_WINDOWS = 2
"""Adjacent outputs per thread of ``pool_sum_k2d`` (1, 2 or 4; they share input columns)."""
SUM_FAST_TYPES = FAST_TYPES
"""Data types of the window sums' 2-D fast path (emptied by the benchmark to time the general kernel)."""


def summed_window(desc: Any) -> PoolingWindow:
    """The window AVERAGE_POOLING(1) / LP_POOLING(1) sum over; UnsupportedError for a zero Dilation, as the reference.

    DirectML 1.15.4's sum over a zero-Dilation window is not characterised (the reference
    refuses it too); the directml backend runs it.
    """
    window = generic_window(desc)
    if 0 in window.dilations:
        raise UnsupportedError(
            f"{desc.dml_name}: the cuda backend does not implement a Dilations entry of 0 "
            f"(Dilations {list(window.dilations)}; DirectML's result is not characterised); "
            "the directml backend runs it"
        )
    return window


def _sum_launch(desc: Any, mode: int, x: Any, y: Any, xs: tuple[int, ...], ys: tuple[int, ...]) -> PackedLaunch:
    """The window-sum launch of a desc for these arrays' shapes, strides and type (pointers: x, y)."""
    window = summed_window(desc)
    count = int(y.size)
    p, use32 = pool_params(window, x.shape, y.shape, xs, ys, ys, count)
    exponent = np.float32(max(int(getattr(desc, "p", 1)), 1))
    full = int(np.prod(window.window_size, dtype=np.int64)) if getattr(desc, "include_padding", False) else -1
    # The reference's exponents: float32(P) and the float32 quotient 1 / float32(P), each widened to float64.
    s = params(
        ("p", "f8", float(exponent)),
        ("inv_p", "f8", float(np.float32(1) / exponent)),
        ("full", "i8", full),
    )
    t = C_TYPES[x.dtype]
    ws, st = tuple(window.window_size), tuple(window.strides)
    fast = len(ws) == 2 and tuple(window.dilations) == (1, 1) and min(ws + st) >= 1 and max(ws + st) <= FUSED_MAX
    if fast and use32 and mode in SUM_FAST_MODES and x.dtype in SUM_FAST_TYPES:
        n, c, _, _ = x.shape
        oh, ow = y.shape[2:]
        m = SUM_WINDOWS
        qw = -(-ow // m)
        threads = n * c * oh * qw
        fn = get_kernel("avg_pool.cu", f"pool_sum_k2d<{t}, {mode}, {ws[0]}, {ws[1]}, {st[0]}, {st[1]}, {m}>")
        return PackedLaunch(fn, grid_for(threads, BLOCK), BLOCK, 2, p, div_params(threads, qw, oh, c), s)
    fn = get_kernel("avg_pool.cu", f"pool_sum<{t}, {mode}, {index_type(use32)}>")
    return PackedLaunch(fn, grid_for(count, BLOCK), BLOCK, 2, p, s)


def _run_sums(desc: Any, mode: int, inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> None:
    x, y = inputs["InputTensor"], outputs["OutputTensor"]
    xs, ys = element_strides(x), element_strides(y)
    key = (id(desc), xs, ys)
    plan = _SUM_PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _SUM_PLANS.put(key, (desc, _sum_launch(desc, mode, x, y, xs, ys)))
    plan[1](x.data.ptr, y.data.ptr)


def run_average_pooling(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """AVERAGE_POOLING(1): float32 window sum / count (``prod(WindowSize)`` with IncludePadding), as the reference."""
    _run_sums(desc, SUM_MODES["AVERAGE"], inputs, outputs)


def run_lp_pooling(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """LP_POOLING(1): ``(sum |x|^P)^(1/P)`` summed in float32 (P 0, 1, 2 exact; others float64 ``pow``)."""
    p = int(desc.p)
    _run_sums(
        desc, {0: SUM_MODES["LP0"], 1: SUM_MODES["LP1"], 2: SUM_MODES["LP2"]}.get(p, SUM_MODES["LPP"]), inputs, outputs
    )


# -- AVERAGE_POOLING_GRAD ------------------------------------------------------------------------

_AVG_GRAD_PLANS = PlanCache()


def _avg_grad_launch(desc: Any, dy: Any, dx: Any, gs: tuple[int, ...], ds: tuple[int, ...]) -> PackedLaunch:
    window = generic_window(desc)
    count = int(dx.size)
    # As MAX_POOLING_GRAD's: the forward input is OutputGradientTensor (sizes and strides in
    # x and z), the forward output InputGradientTensor (y).
    p, use32 = pool_params(window, dx.shape, dy.shape, ds, gs, ds, count)
    g = params(
        ("include_padding", "i8", 1 if desc.include_padding else 0),
        ("active", "i8", 0 if 0 in window.strides else 1),  # a zero Stride: zeros (descs.pooling)
        ("end_pad", "i8", _spatial3(window.end_padding, 0)),
    )
    fn = get_kernel("avg_pool.cu", f"avg_pool_grad<{C_TYPES[dx.dtype]}, {index_type(use32)}>")
    return PackedLaunch(fn, grid_for(count, BLOCK), BLOCK, 2, p, g)


def run_average_pooling_grad(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """A gather: each element sums ``float32(g[o]) / divisor(o)`` in float64 over its windows, reference order."""
    dy, dx = inputs["InputGradientTensor"], outputs["OutputGradientTensor"]
    gs, ds = element_strides(dy), element_strides(dx)
    key = (id(desc), gs, ds)
    plan = _AVG_GRAD_PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _AVG_GRAD_PLANS.put(key, (desc, _avg_grad_launch(desc, dy, dx, gs, ds)))
    plan[1](dy.data.ptr, dx.data.ptr)


# -- MAX_UNPOOLING ---------------------------------------------------------------------------------

_UNPOOL_PLANS = PlanCache()
_RAW = {1: ("u8", "uint8"), 2: ("u16", "uint16"), 4: ("u32", "uint32"), 8: ("u64", "uint64")}
"""Element size -> (the kernels' raw type, the scratch's dtype): MAX_UNPOOLING moves bits."""


def _unpool_launches(
    desc: Any, x: Any, indices: Any, xs: tuple[int, ...], js: tuple[int, ...]
) -> tuple[PackedLaunch, PackedLaunch]:
    raw = _RAW[x.dtype.itemsize][0]
    idx = {"uint32": "u32", "uint64": "u64"}[str(indices.dtype)]
    p = params(
        ("count", "i8", int(x.size)),
        ("out_count", "i8", int(desc.output_tensor.element_count)),
        ("size", "i8", [int(v) for v in x.shape]),
        ("x_stride", "i8", list(xs)),
        ("i_stride", "i8", list(js)),
    )
    blocks = grid_for(int(x.size), BLOCK)
    scatter = get_kernel("avg_pool.cu", f"max_unpool_scatter<{raw}, {idx}>")
    check = get_kernel("avg_pool.cu", f"max_unpool_check<{raw}, {idx}>")
    return PackedLaunch(scatter, blocks, BLOCK, 3, p), PackedLaunch(check, blocks, BLOCK, 4, p)


def run_max_unpooling(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Zeros, then each input element copied (bit for bit) to the flat output element its index names.

    The writes go to a packed scratch first; the conflict flag is read once, and the
    caller's output is written only when there is no conflict (a refusal leaves it as it
    was, as the reference's). The index rules are :func:`~dmlops.descs.pooling.unpooling_targets`'s.
    """
    cp = cupy_module()
    x, indices, out = inputs["InputTensor"], inputs["IndicesTensor"], outputs["OutputTensor"]
    xs, js = element_strides(x), element_strides(indices)
    key = (id(desc), xs, js)
    plan = _UNPOOL_PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _UNPOOL_PLANS.put(key, (desc, _unpool_launches(desc, x, indices, xs, js)))
    scatter, check = plan[1]
    scratch = cp.zeros(int(desc.output_tensor.element_count), dtype=_RAW[x.dtype.itemsize][1])
    flag = cp.zeros(1, dtype=cp.int32)
    scatter(x.data.ptr, indices.data.ptr, scratch.data.ptr)
    check(x.data.ptr, indices.data.ptr, scratch.data.ptr, flag.data.ptr)
    if int(flag.get()[0]):
        unpooling_targets(desc, indices.get(), x.get())  # raises DataIndexError with the reference's message
        raise AssertionError("MAX_UNPOOLING: a clash the reference's check does not see")  # pragma: no cover
    cp.copyto(out, scratch.view(out.dtype).reshape(out.shape))


OPERATORS: dict[str, Callable[..., Any]] = {
    "MAX_POOLING2": run_max_pooling2,
    "MAX_POOLING_GRAD": run_max_pooling_grad,
    **{name: run_as(max_pooling2_equivalent, run_max_pooling2) for name in ("MAX_POOLING", "MAX_POOLING1")},
    "AVERAGE_POOLING": run_average_pooling,
    "AVERAGE_POOLING1": run_average_pooling,
    "LP_POOLING": run_lp_pooling,
    "LP_POOLING1": run_lp_pooling,
    "AVERAGE_POOLING_GRAD": run_average_pooling_grad,
    "MAX_UNPOOLING": run_max_unpooling,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
