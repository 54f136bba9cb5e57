"""Resampling on the CUDA backend: RESAMPLE2, RESAMPLE_GRAD1.

Shared helpers
--------------
Host-side tables shared by RESAMPLE2 and RESAMPLE_GRAD1 (kernels/resample.cu).

The per-axis taps come from the semantics layer (:mod:`dmlops.descs.resampling`, float32
coordinates, DirectML's LINEAR taps), so every selected index equals the reference's. They are padded
to four axes with identity maps and uploaded once per plan.

RESAMPLE2
---------
RESAMPLE2 on the GPU over host-built per-axis taps.

Four-dimensional FLOAT32 / FLOAT16 tensors whose first two axes map every index to
itself (only height and width resample, the common case) take ``resample_fwd_hw``: a
thread per ``HW_OUTPUTS`` outputs of a row, its coordinates by fast division, the row's
and columns' taps (offsets and weights, one 16-byte record each) from two small tables.
On rows of at least 32 x ``HW_OUTPUTS`` outputs a thread takes every 32nd output of its
warp's run (coalesced table loads and stores, see :func:`strided_outputs`), on shorter
rows adjacent ones. Everything else takes ``resample_fwd``, which walks the taps of all
four axes. Both interpolate as DirectML does (float32 lerps, outermost axis first,
erratum E33): identical bits.

RESAMPLE_GRAD1
--------------
RESAMPLE_GRAD1 on the GPU as a gather (no atomics; deterministic).

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

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..descs._base import run_as
from ..descs.resampling import (
    Resample2Desc,
    ResampleDesc,
    ResampleGrad1Desc,
    desc_taps,
    resample2_equivalent,
    resample_grad1_equivalent,
    value_scale_terms,
)
from ..enums import FeatureLevel, InterpolationMode
from ._copy import C_TYPES, PlanCache, grid_for, index_type
from ._plan import max_abs_offset
from ._runtime import PackedLaunch, cupy_module, element_strides, get_kernel, params, plane_item_fields

# -- Shared helpers ------------------------------------------------------------

AXES = 4


def _pad(values: Sequence[int], fill: int) -> list[int]:
    values = [int(v) for v in values]
    return [fill] * (AXES - len(values)) + values


def forward_axes(desc: ResampleDesc) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], int]:
    """Per axis (padded to four) the forward's (idx0, idx1, t), and the bit mask of interpolated axes.

    NEAREST_NEIGHBOR: idx0 is the one tap. LINEAR: DirectML's taps and weights
    (:meth:`~dmlops.descs.resampling.ResampleParameters.linear_axes`).
    """
    pad = AXES - desc.dimension_count
    zero = np.zeros(1, np.int64)
    axes = [(zero, zero, np.zeros(1, np.float32))] * pad
    interp = 0
    if desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR:
        for ((first, _),) in desc_taps(desc):
            index = first.astype(np.int64)
            axes.append((index, index, np.zeros(index.size, np.float32)))
        return axes, interp
    for a, axis in enumerate(desc.linear_axes()):
        axes.append((axis.first.astype(np.int64), axis.second.astype(np.int64), axis.weight))
        interp |= int(axis.interpolates) << (pad + a)
    return axes, interp


def forward_tables(desc: ResampleDesc) -> tuple[list[Any], list[int], int]:
    """Device arrays (idx0, idx1, t) for all axes, each axis' offset into them, the interpolated-axes mask."""
    axes, interp = forward_axes(desc)
    offsets = [int(v) for v in np.cumsum([0] + [a[0].size for a in axes[:-1]])]
    cp = cupy_module()
    arrays = [cp.asarray(np.concatenate([a[k] for a in axes])) for k in range(3)]
    return arrays, offsets, interp


def is_identity_axis(axis: list[Any], n_in: int, n_out: int) -> bool:
    """True when an axis maps every index to itself with weight 1 (no table needed)."""
    if n_in != n_out:
        return False
    idx, w = axis[0]
    if not np.array_equal(idx, np.arange(n_in)) or (w is not None and not np.all(np.asarray(w) == 1.0)):
        return False
    return len(axis) == 1 or bool(np.all(np.asarray(axis[1][1]) == 0.0))


def csr_axes(desc: ResampleDesc) -> tuple[int, list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Host CSR lists of the transpose, padded to four axes: (identity mask, starts, outs, weights).

    For each forward input index i of an axis: the (output index, weight) pairs whose
    forward tap reads i, zero weights dropped, sorted by output index.
    """
    taps = desc_taps(desc)
    n_in = desc.forward_input_sizes
    n_out = desc.forward_output_sizes
    pad = AXES - len(taps)
    mask = (1 << pad) - 1
    for d, axis in enumerate(taps):
        if is_identity_axis(axis, n_in[d], n_out[d]):
            mask |= 1 << (pad + d)
    starts: list[np.ndarray] = [np.array([0, 1], np.int64)] * pad
    outs: list[np.ndarray] = [np.zeros(1, np.int64)] * pad
    weights: list[np.ndarray] = [np.ones(1)] * pad
    for d, axis in enumerate(taps):
        rows, cols, vals = [], [], []
        for idx, w in axis:
            o = np.arange(idx.size, dtype=np.int64)
            ww = np.ones(idx.size) if w is None else np.asarray(w, dtype=np.float64)
            keep = ww != 0.0
            rows.append(idx[keep].astype(np.int64))
            cols.append(o[keep])
            vals.append(ww[keep])
        r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
        order = np.lexsort((c, r))
        r, c, v = r[order], c[order], v[order]
        start = np.searchsorted(r, np.arange(n_in[d] + 1)).astype(np.int64)
        starts.append(start)
        outs.append(c)
        weights.append(v)
    return mask, starts, outs, weights


def transpose_tables(desc: ResampleDesc, weight_dtype: Any = np.float64) -> tuple[list[Any], list[int], int, list[int]]:
    """Per-axis CSR lists of the transpose (device arrays) and each axis' offset.

    For each forward input index i: the (output index, weight) pairs whose tap reads i
    (zero weights dropped). Returns device arrays (start, outs, weights) and each
    axis' offset into ``start``, the bit mask of identity axes (padded to four axes) and
    each axis' longest list.
    Weights are stored as ``weight_dtype`` (float32 when the kernel accumulates in
    float32), indices as int32.
    """
    mask, starts, outs, weights = csr_axes(desc)
    longest = [int(np.max(np.diff(st))) if st.size > 1 else 0 for st in starts]
    base = np.cumsum([0] + [o.size for o in outs[:-1]])
    starts = [s + b for s, b in zip(starts, base)]
    offsets = [int(v) for v in np.cumsum([0] + [s.size for s in starts[:-1]])]
    cp = cupy_module()
    arrays = [
        cp.asarray(np.concatenate(starts).astype(np.int32)),
        cp.asarray(np.concatenate(outs).astype(np.int32)),
        cp.asarray(np.concatenate(weights).astype(weight_dtype)),
    ]
    return arrays, offsets, mask, longest


def resample_params(
    write_sizes: Sequence[int],
    read_sizes: Sequence[int],
    read_strides: Sequence[int],
    write_strides: Sequence[int],
    offsets: Sequence[int],
    identity: int = 0,
    interp: int = 0,
) -> tuple[np.void, bool]:
    """(the ResampleParams struct, whether 32-bit offsets are exact)."""
    count = int(np.prod(write_sizes))
    p = params(
        ("count", "i8", count),
        ("out_size", "i8", _pad(write_sizes, 1)),
        ("in_size", "i8", _pad(read_sizes, 1)),
        ("x_stride", "i8", _pad(read_strides, 0)),
        ("y_stride", "i8", _pad(write_strides, 0)),
        ("tab_off", "i8", list(offsets)),
        ("identity", "i8", identity),
        ("interp", "i8", interp),
    )
    biggest = max(max_abs_offset(read_sizes, read_strides), max_abs_offset(write_sizes, write_strides), 4 * count)
    return p, biggest < 2**30


# -- RESAMPLE2 -----------------------------------------------------------------

_RESAMPLE2_PLANS = PlanCache()
BLOCK = 256
FAST_TYPES = (np.dtype(np.float32), np.dtype(np.float16))
"""Data types of ``resample_fwd_hw``."""
HW_OUTPUTS = 4
"""Outputs of one row per thread of ``resample_fwd_hw``, adjacent or 32 apart (:func:`strided_outputs`);
they share the thread's decomposition and row taps."""


STRIDED_OUTPUTS = True
"""Whether ``resample_fwd_hw`` may give a thread every 32nd output of its warp's run (:func:`strided_outputs`)."""


def strided_outputs(out_w: int) -> bool:
    """Whether ``resample_fwd_hw`` takes a row's outputs strided across a warp.

    A warp then covers 32 x HW_OUTPUTS consecutive outputs and each of its loads of the
    column tables, the input and each store is one coalesced run. With adjacent outputs
    per thread (one vector store each), the lanes' column-table records lie HW_OUTPUTS
    apart, so each table load of a warp spans several cache lines: on the H100 that
    bounded the 2x upsample of the benchmark (docs/performance.md). Rows shorter than
    32 x HW_OUTPUTS keep adjacent outputs, so no lanes idle.
    """
    return STRIDED_OUTPUTS and out_w >= 32 * HW_OUTPUTS


def hw_params(
    out_shape: tuple[int, ...], xs: tuple[int, ...], ys: tuple[int, ...], vec_store: bool = False, interp: int = 0
) -> np.void:
    """The ResampleHWParams struct for an output of ``out_shape`` (N, C, OH, OW), HW_OUTPUTS per thread."""
    n, c, oh, ow = out_shape
    if strided_outputs(ow):
        groups = -(-ow // (32 * HW_OUTPUTS))
        count = n * c * oh * groups * 32
    else:
        groups = -(-ow // HW_OUTPUTS)
        count = n * c * oh * groups
    return params(
        *plane_item_fields(count, groups, oh, c),
        ("out_w", "i8", ow),
        ("vec_store", "i8", int(vec_store)),
        ("interp", "i8", interp),
        ("x_stride", "i8", list(xs)),
        ("y_stride", "i8", list(ys)),
    )


def _axis_taps(first: np.ndarray, second: np.ndarray, weight: np.ndarray, stride: int) -> np.ndarray:
    """One axis's taps as ``resample_fwd_hw``'s HWTaps records.

    int32 [n, 4]: the two element offsets (index x ``stride``), the bits of the float32
    weight t, and 0.
    """
    out = np.zeros((first.size, 4), dtype=np.int32)
    out[:, 0] = np.asarray(first, np.int64) * stride
    out[:, 1] = np.asarray(second, np.int64) * stride
    out[:, 2] = np.asarray(weight, np.float32).view(np.int32)
    return out


def _hw_launch(desc: Resample2Desc, x: Any, y: Any, xs: tuple[int, ...], ys: tuple[int, ...]) -> PackedLaunch | None:
    """``resample_fwd_hw`` for this desc and these strides, or None where it does not apply."""
    if x.ndim != 4 or x.dtype not in FAST_TYPES:
        return None
    axes, interp = forward_axes(desc)
    # Axes 0 and 1 must read every index as it is, without interpolation.
    if interp & 0b11 or not all(np.array_equal(axes[a][0], np.arange(x.shape[a])) for a in (0, 1)):
        return None
    if x.shape[:2] != y.shape[:2]:
        return None
    _, use32 = resample_params(y.shape, x.shape, xs, ys, [0, 0, 0, 0])
    if not use32:
        return None
    cp = cupy_module()
    tables = [cp.asarray(_axis_taps(*axes[a], xs[a])) for a in (2, 3)]  # rows, columns (offsets fit 32 bits)
    linear = "true" if desc.interpolation_mode is InterpolationMode.LINEAR else "false"
    strided = "true" if strided_outputs(y.shape[3]) else "false"
    fn = get_kernel("resample.cu", f"resample_fwd_hw<{C_TYPES[x.dtype]}, {linear}, {HW_OUTPUTS}, {strided}>")
    # One vector store per thread: unit column stride, whole groups per row, every row
    # start a whole number of groups from a base aligned to a group (part of the plan key).
    vec = ys[3] == 1 and y.shape[3] % HW_OUTPUTS == 0 and all(s % HW_OUTPUTS == 0 for s in ys[:3])
    vec = vec and y.data.ptr % (HW_OUTPUTS * y.itemsize) == 0
    p = hw_params(y.shape, xs, ys, vec, interp >> 2)
    return PackedLaunch(fn, grid_for(int(p["count"]), BLOCK), BLOCK, 2, p, fixed=tables)


def run_resample2(
    desc: Resample2Desc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch RESAMPLE2 on device views (see :func:`dmlops.cuda.execute`)."""
    x = inputs["InputTensor"]
    y = outputs["OutputTensor"]
    xs, ys = element_strides(x), element_strides(y)
    key = (id(desc), xs, ys, y.data.ptr % (HW_OUTPUTS * y.itemsize) == 0)  # the vector stores' alignment
    plan = _RESAMPLE2_PLANS.get(key)
    if plan is None or plan[0] is not desc:
        launch = _hw_launch(desc, x, y, xs, ys)
        if launch is None:
            tables, offsets, interp = forward_tables(desc)
            p, use32 = resample_params(y.shape, x.shape, xs, ys, offsets, interp=interp)
            linear = desc.interpolation_mode is InterpolationMode.LINEAR
            name = f"resample_fwd<{C_TYPES[x.dtype]}, {'true' if linear else 'false'}, {index_type(use32)}>"
            launch = PackedLaunch(get_kernel("resample.cu", name), grid_for(y.size, BLOCK), BLOCK, 2, p, fixed=tables)
        plan = _RESAMPLE2_PLANS.put(key, (desc, launch))
    plan[1](x.data.ptr, y.data.ptr)


# -- RESAMPLE_GRAD1 ------------------------------------------------------------

_RESAMPLE_GRAD1_PLANS = PlanCache()
USE_X2 = True
"""Whether eligible descs take ``resample_grad_x2`` (the benchmark compares both)."""


def run_resample_grad1(
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
    plan = _RESAMPLE_GRAD1_PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _RESAMPLE_GRAD1_PLANS.put(key, _plan(desc, dy, dx, gs, ds))
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


def run_value_scale_2d(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """VALUE_SCALE_2D: ``x * Scale`` then ``+ Bias[c]`` in float32 CuPy arithmetic.

    One kernel per operation, so the product is rounded before the addition, as DirectML
    computes it (``descs.resampling.value_scale_terms``).
    """
    cp = cupy_module()
    scale, bias = value_scale_terms(desc)
    x, out = inputs["InputTensor"], outputs["OutputTensor"]
    v = x.astype(cp.float32, copy=False) * scale
    v += cp.asarray(bias)
    out[...] = v


OPERATORS: dict[str, Callable[..., Any]] = {
    "RESAMPLE2": run_resample2,
    "RESAMPLE_GRAD1": run_resample_grad1,
    **{name: run_as(resample2_equivalent, run_resample2) for name in ("RESAMPLE", "RESAMPLE1", "UPSAMPLE_2D")},
    "RESAMPLE_GRAD": run_as(resample_grad1_equivalent, run_resample_grad1),
    "VALUE_SCALE_2D": run_value_scale_2d,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
