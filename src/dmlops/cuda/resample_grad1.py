"""RESAMPLE_GRAD1 on the GPU as a gather (no atomics; deterministic).

Each OutputGradient element sums, over the separable per-axis CSR lists of the forward
outputs that read it, weight * InputGradient (float32 for FLOAT16, rounded once).

When only the last two axes resample and the last one by 2 (every input column i is read
by outputs within 2 i + OFF + [0, L), L <= 4), FLOAT32/FLOAT16 take
``resample_grad_x2``: two outputs per thread, one vector load per InputGradient row
shared with the neighbouring lanes, per-axis dense weight tables. A column read by two
taps of one output (clamped borders) gets their weights summed once on the host, which
rounds differently from adding the two products (both are float32 sums of the same
terms; the difference is within float32 rounding of the reference).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from ..descs.resample_grad1 import ResampleGrad1Desc
from ..enums import FeatureLevel
from ._copy import C_TYPES, PlanCache, grid_for, index_type
from ._resample import csr_axes, resample_params, transpose_tables
from ._runtime import PackedLaunch, cupy_module, element_strides, get_kernel, params, plane_item_fields

_PLANS = PlanCache()
BLOCK = 256
USE_X2 = True
"""Whether eligible descs take ``resample_grad_x2`` (the benchmark compares both)."""


def run(
    desc: ResampleGrad1Desc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch RESAMPLE_GRAD1 on device views (see :func:`dmlops.cuda.execute`)."""
    dy = inputs["InputGradientTensor"]
    dx = outputs["OutputGradientTensor"]
    gs, ds = element_strides(dy), element_strides(dx)
    key = (id(desc), gs, ds)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _PLANS.put(key, _plan(desc, dy, dx, gs, ds))
    launch(plan, dy, dx)


class ResampleGradPlan(NamedTuple):
    """A RESAMPLE_GRAD1 launch plan of :func:`_plan`."""

    desc: ResampleGrad1Desc
    general: PackedLaunch
    """``resample_grad_hw`` or ``resample_grad`` over the transpose tables."""
    x2: tuple[PackedLaunch, PackedLaunch] | None
    """``resample_grad_x2`` (paired-store launch, scalar-store launch), where it applies."""


def launch(plan: ResampleGradPlan, dy: Any, dx: Any, use_x2: bool | None = None) -> None:
    """Run a plan of :func:`_plan` on device views."""
    if plan.x2 is not None and (USE_X2 if use_x2 is None else use_x2):
        if dy.data.ptr % (4 * dy.itemsize) == 0:  # the 4-element row loads
            paired, scalar = plan.x2
            (paired if dx.data.ptr % (2 * dx.itemsize) == 0 else scalar)(dy.data.ptr, dx.data.ptr)
            return
    plan.general(dy.data.ptr, dx.data.ptr)


def _plan(desc: ResampleGrad1Desc, dy: Any, dx: Any, gs: tuple[int, ...], ds: tuple[int, ...]) -> ResampleGradPlan:
    single = dy.dtype != np.float64  # FLOAT16/FLOAT32 accumulate in float32
    tables, offsets, identity, longest = transpose_tables(desc, np.float32 if single else np.float64)
    p, use32 = resample_params(dx.shape, dy.shape, gs, ds, offsets, identity)
    w = "float" if single else "double"
    t, it = C_TYPES[dy.dtype], index_type(use32)
    width = max(longest[2], longest[3])
    if identity & 3 == 3 and width <= 8:
        # Only the last two (padded) axes resample: the unrolled kernel (all loads in flight).
        lanes = 2 if width <= 2 else (4 if width <= 4 else 8)
        fn = get_kernel("resample.cu", f"resample_grad_hw<{t}, {w}, {it}, {lanes}>")
    else:
        fn = get_kernel("resample.cu", f"resample_grad<{t}, {w}, {it}>")
    x2 = _x2_plan(desc, dy, dx, gs, ds, identity) if use32 and single else None
    return ResampleGradPlan(desc, PackedLaunch(fn, grid_for(dx.size, BLOCK), BLOCK, 2, p, fixed=tables), x2)


def _band(start: np.ndarray, outs: np.ndarray, weights: np.ndarray, stride: int) -> tuple[int, int, np.ndarray] | None:
    """The band of an axis: (offset, length, dense weights), or None.

    Input i must be read only by outputs ``stride * i + offset + [0, length)``, length <= 4.

    The dense table has 4 float32 weights per input (0 where no output reads it); the
    weights of repeated entries (two taps of one output on one input) are summed.
    """
    n = start.size - 1
    counts = np.diff(start)
    rows = np.repeat(np.arange(n), counts)
    if rows.size == 0:
        return None
    rel = outs.astype(np.int64) - stride * rows
    off, length = int(rel.min()), int(rel.max() - rel.min() + 1)
    if length > 4:
        return None
    dense = np.zeros((n, 4), np.float64)
    np.add.at(dense, (rows, rel - off), weights.astype(np.float32).astype(np.float64))
    return off, length, dense.astype(np.float32)


def x2_params(threads: int, div: tuple[int, int, int], gst: Any, dst: Any, w: int, sh: int, offh: int) -> np.void:
    """The ResampleX2Params struct: ``div`` = (pairs per row, H, C) with their fast_div magic numbers."""
    return params(
        *plane_item_fields(threads, *div),
        ("x_stride", "i8", list(gst)),
        ("y_stride", "i8", list(dst)),
        ("w", "i8", w),
        ("sh", "i8", sh),
        ("offh", "i8", offh),
    )


def _x2_plan(
    desc: ResampleGrad1Desc, dy: Any, dx: Any, gs: tuple[int, ...], ds: tuple[int, ...], identity: int
) -> tuple[PackedLaunch, PackedLaunch] | None:
    """The ``resample_grad_x2`` (paired-store, scalar-store) launches of a desc, or None where it does not apply."""
    if identity & 3 != 3 or dx.ndim < 2:
        return None
    _, starts, outs, weights = csr_axes(desc)
    pad = 4 - dx.ndim
    size = (1,) * pad + tuple(int(v) for v in dx.shape)
    ysize = (1,) * pad + tuple(int(v) for v in dy.shape)
    gst = (0,) * pad + gs
    dst = (0,) * pad + ds
    n, c, h, w = size
    pairs = -(-w // 2)
    # Every lane loads InputGradient columns [4l, 4l + 4) of its row with one aligned vector.
    if gst[3] != 1 or 4 * pairs > ysize[3] or any(s % 4 for s in gst[:3]):
        return None
    wband = _band(starts[3], outs[3], weights[3], 2)
    if wband is None:
        return None
    off, length, dense_w = wband
    if off < -4 or off + 2 + length - 4 > 4:
        return None
    sh = max(1, round(ysize[2] / h))
    hband = _band(starts[2], outs[2], weights[2], sh)
    if hband is None:
        return None
    offh, _, dense_h = hband
    threads = n * c * h * pairs
    if threads >= 2**31:
        return None
    q = x2_params(threads, (pairs, h, c), gst, dst, w, sh, offh)
    vec = dst[3] == 1 and w % 2 == 0 and all(s % 2 == 0 for s in dst[:3])
    t = C_TYPES[dy.dtype]
    name = f"resample_grad_x2<{t}, {length}, {off}, " + "{}>"
    cp = cupy_module()
    dense = (cp.asarray(dense_h), cp.asarray(dense_w))
    blocks = grid_for(threads, BLOCK)
    paired, scalar = (
        PackedLaunch(get_kernel("resample.cu", name.format(v)), blocks, BLOCK, 2, q, fixed=dense)
        for v in ("true" if vec else "false", "false")
    )
    return paired, scalar
