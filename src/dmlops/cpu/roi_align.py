"""ROI_ALIGN on the CPU (numba).

The sample coordinates of every ROI and axis are computed up front in NumPy, in
float64 with exactly the reference's operations and order
(``(j - OutputPixelOffset) * step + start - InputPixelOffset``), so out-of-bounds
decisions and nearest-neighbour indices agree with the reference bit for bit. Each
sample becomes two taps and a weight plus an in-bounds flag (ruling 6: in bounds
when ``-1 <= x <= InputWidth``, then clamped; nearest = ``floor(x + 0.5)``).

The kernel runs one parallel task per (ROI, channel) pair; ROIs differ a lot in cost
under adaptive sampling, and spreading the pairs evens that out. Per sample it
interpolates rows first, then columns, skipping taps of weight exactly 0 (so an
``inf`` next to an exactly hit pixel does not turn into ``nan``, as in the
reference), in float32 (float64 for FLOAT64). AVERAGE is the mean of all samples,
out-of-bounds ones counted with OutOfBoundsInputValue; MAX starts from -inf and
propagates NaN.

A bad batch index raises DataIndexError before anything is written (ruling 3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from ..descs.roi_align import RoiAlignDesc
from ..enums import FeatureLevel, InterpolationMode, ReduceFunction
from ..reference.roi_align import batch_indices
from ._common import call_parallel, kernel_view, load, store


def axis_samples(
    desc: RoiAlignDesc, start: NDArray[np.float64], end: NDArray[np.float64], n_out: int, length: int, wdtype: Any
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[Any], NDArray[Any]]:
    """Samples of every ROI along one axis.

    Returns
    -------
    (samples, offsets, first, second, weight, in_bounds)
        ``samples[r]`` per output element, ROI ``r``'s samples at
        ``[offsets[r], offsets[r] + n_out * samples[r])`` of the flat tap arrays.
    """
    size = end - start
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        ratio = np.abs(size) / n_out
        finite = np.isfinite(ratio)
        lo, hi = desc.minimum_samples_per_output, desc.maximum_samples_per_output
        samples = np.where(finite, np.clip(np.ceil(np.where(finite, ratio, 0.0)), lo, hi), lo).astype(np.int64)
    count = n_out * samples
    offsets = np.zeros(samples.size + 1, np.int64)
    np.cumsum(count, out=offsets[1:])
    roi_of = np.repeat(np.arange(samples.size), count)
    j = (np.arange(offsets[-1], dtype=np.int64) - offsets[:-1][roi_of]).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        step = size / count  # the reference: size / (n_out * s)
        coord = (j - desc.output_pixel_offset) * step[roi_of] + start[roi_of] - desc.input_pixel_offset
    in_bounds = (coord >= -1.0) & (coord <= length)
    c = np.clip(np.where(in_bounds, coord, 0.0), 0.0, length - 1.0)
    if desc.interpolation_mode is InterpolationMode.LINEAR:
        first = np.floor(c).astype(np.int64)
        second = np.minimum(first + 1, length - 1)
        weight = c - first
    else:
        first = np.floor(c + 0.5).astype(np.int64)
        second = first
        weight = np.zeros_like(c)
    return samples, offsets, first, second, weight.astype(wdtype), in_bounds


@njit(cache=True)
def _lerp(a, b, w, one):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``(1 - w) * a + w * b`` with taps of weight exactly 0 skipped."""
    r = one - one
    if w != one:
        r += (one - w) * a
    if w != r - r:
        r += w * b
    return r


@njit(cache=True, parallel=True)
def _roi_align(x, out, batch, sy_, oy_, y0_, y1_, wy_, iny_, sx_, ox_, x0_, x1_, wx_, inx_, oob, reduce_max, sep, half):  # type: ignore[no-untyped-def]  # pragma: no cover
    n_roi, n_c, out_h, out_w = out.shape
    one = wx_.dtype.type(1)
    zero = one - one
    oobv = wx_.dtype.type(oob)
    for task in prange(n_roi * n_c):
        r = task // n_c
        c = task - r * n_c
        b = batch[r]
        sy, sx = sy_[r], sx_[r]
        oy0, ox0 = oy_[r], ox_[r]
        inv = one / wx_.dtype.type(sy * sx)
        xp = x[b, c]  # plane and row views: no 4-D index arithmetic per tap
        if not reduce_max and sep[r, 0]:
            # Separable AVERAGE: T[row, ox] = sum over the in-bounds x samples of bin ox of the
            # x-interpolated row, then each output sums y-interpolations of T over its y samples.
            ylo = sep[r, 1]
            n_rows = sep[r, 2] - ylo + 1
            t = np.empty((n_rows, out_w), wx_.dtype)
            for i in range(n_rows):
                row = xp[ylo + i]
                for ox in range(out_w):
                    acc = zero
                    for kx in range(sx):
                        jx = ox0 + ox * sx + kx
                        if inx_[jx]:
                            wx = wx_[jx]
                            if wx != one:
                                acc += (one - wx) * load(row[x0_[jx]], half)
                            if wx != zero:
                                acc += wx * load(row[x1_[jx]], half)
                    t[i, ox] = acc
            for oy in range(out_h):
                n_in_y = 0
                for ky in range(sy):
                    n_in_y += iny_[oy0 + oy * sy + ky]
                for ox in range(out_w):
                    n_in_x = 0
                    for kx in range(sx):
                        n_in_x += inx_[ox0 + ox * sx + kx]
                    acc = zero
                    for ky in range(sy):
                        jy = oy0 + oy * sy + ky
                        if iny_[jy]:
                            wy = wy_[jy]
                            if wy != one:
                                acc += (one - wy) * t[y0_[jy] - ylo, ox]
                            if wy != zero:
                                acc += wy * t[y1_[jy] - ylo, ox]
                    n_oob = sy * sx - n_in_y * n_in_x
                    if n_oob > 0:
                        acc += wx_.dtype.type(n_oob) * oobv
                    out[r, c, oy, ox] = store(acc * inv, out[r, c, oy, ox], half)
            continue
        for oy in range(out_h):
            for ox in range(out_w):
                acc = -np.inf * one if reduce_max else zero
                for ky in range(sy):
                    jy = oy0 + oy * sy + ky
                    wy, yin = wy_[jy], iny_[jy]
                    row0 = xp[y0_[jy]]
                    row1 = xp[y1_[jy]]
                    for kx in range(sx):
                        jx = ox0 + ox * sx + kx
                        if yin and inx_[jx]:
                            xa, xb, wx = x0_[jx], x1_[jx], wx_[jx]
                            top = load(row0[xa], half)
                            bot = load(row1[xa], half)
                            left = _lerp(top, bot, wy, one)
                            if wx != zero:
                                top = load(row0[xb], half)
                                bot = load(row1[xb], half)
                                v = _lerp(left, _lerp(top, bot, wy, one), wx, one)
                            else:
                                v = left
                        else:
                            v = oobv
                        if reduce_max:
                            if acc == acc and (v != v or v > acc):  # NaN propagates
                                acc = v
                        else:
                            acc += v
                if not reduce_max:
                    acc = acc * inv
                out[r, c, oy, ox] = store(acc, out[r, c, oy, ox], half)


def _separable_plan(ys: tuple[Any, ...], xs: tuple[Any, ...], out_h: int, out_w: int) -> NDArray[np.int64]:
    """Per ROI ``(use separable AVERAGE, first crop row, last crop row)``.

    The separable form costs about ``crop rows * OutputWidth * sX * 2`` taps plus
    ``OutputHeight * sY * 2 * OutputWidth``; evaluating samples directly costs
    ``OutputHeight * OutputWidth * sY * sX * 4``. Large adaptive sample counts favour the
    former, small fixed ones (sr=2 on big regions) the latter.
    """
    sy, oy, y0, y1, _, iny = ys
    sx = xs[0]
    n = sy.size
    plan = np.zeros((n, 3), np.int64)
    roi_of = np.repeat(np.arange(n), np.diff(oy))
    big = np.iinfo(np.int64).max
    lo = np.full(n, big, np.int64)
    hi = np.full(n, -1, np.int64)
    np.minimum.at(lo, roi_of[iny], y0[iny])
    np.maximum.at(hi, roi_of[iny], y1[iny])
    rows = hi - lo + 1
    cost_sep = rows * out_w * sx * 2 + out_h * sy * 2 * out_w
    cost_direct = out_h * out_w * sy * sx * 4
    plan[:, 0] = (hi >= 0) & (cost_sep < cost_direct)
    plan[:, 1] = np.where(hi >= 0, lo, 0)
    plan[:, 2] = np.where(hi >= 0, hi, 0)
    return plan


def run(
    desc: RoiAlignDesc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """ROI_ALIGN of every ROI into ``outputs["OutputTensor"]``."""
    x = inputs["InputTensor"]
    batch = batch_indices(desc, inputs["BatchIndicesTensor"])
    rois = np.asarray(inputs["ROITensor"], dtype=np.float64).reshape(-1, 4)
    _, _, out_h, out_w = desc.output_tensor.sizes
    _, _, height, width = desc.input_tensor.sizes
    wdtype = np.float64 if x.dtype == np.float64 else np.float32
    with np.errstate(invalid="ignore", over="ignore"):
        xs = axis_samples(
            desc, rois[:, 0] * desc.spatial_scale_x, rois[:, 2] * desc.spatial_scale_x, out_w, width, wdtype
        )
        ys = axis_samples(
            desc, rois[:, 1] * desc.spatial_scale_y, rois[:, 3] * desc.spatial_scale_y, out_h, height, wdtype
        )
    sep = _separable_plan(ys, xs, out_h, out_w)
    xk, half = kernel_view(x)
    ok, _ = kernel_view(outputs["OutputTensor"])
    call_parallel(
        _roi_align,
        xk,
        ok,
        batch,
        *ys,
        *xs,
        float(desc.out_of_bounds_input_value),
        desc.reduction_function is ReduceFunction.MAX,
        sep,
        half,
    )
