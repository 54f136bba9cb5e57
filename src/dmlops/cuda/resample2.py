"""RESAMPLE2 on the GPU over host-built per-axis taps.

Four-dimensional FLOAT32 / FLOAT16 tensors whose first two axes map every index to
itself (only height and width resample, the common case) take ``resample_fwd_hw``: a
thread per ``HW_OUTPUTS`` outputs of a row, its coordinates by fast division, the row's
and columns' taps (offsets and weights, one 16-byte record each) from two small tables.
On rows of at least 32 x ``HW_OUTPUTS`` outputs a thread takes every 32nd output of its
warp's run (coalesced table loads and stores, see :func:`strided_outputs`), on shorter
rows adjacent ones. Everything else takes ``resample_fwd``, which walks the taps of all
four axes. Both interpolate as DirectML does (float32 lerps, outermost axis first,
erratum E33): identical bits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..descs.resample2 import Resample2Desc
from ..enums import FeatureLevel, InterpolationMode
from ._copy import C_TYPES, PlanCache, grid_for, index_type
from ._resample import forward_axes, forward_tables, resample_params
from ._runtime import PackedLaunch, cupy_module, element_strides, get_kernel, params, plane_item_fields

_PLANS = PlanCache()
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


def run(
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
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        launch = _hw_launch(desc, x, y, xs, ys)
        if launch is None:
            tables, offsets, interp = forward_tables(desc)
            p, use32 = resample_params(y.shape, x.shape, xs, ys, offsets, interp=interp)
            linear = desc.interpolation_mode is InterpolationMode.LINEAR
            name = f"resample_fwd<{C_TYPES[x.dtype]}, {'true' if linear else 'false'}, {index_type(use32)}>"
            launch = PackedLaunch(get_kernel("resample.cu", name), grid_for(y.size, BLOCK), BLOCK, 2, p, fixed=tables)
        plan = _PLANS.put(key, (desc, launch))
    plan[1](x.data.ptr, y.data.ptr)
