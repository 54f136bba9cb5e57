"""ROI operators on the CPU backend (numba): ROI_ALIGN, ROI_ALIGN1, ROI_ALIGN_GRAD and ROI_POOLING.

ROI_ALIGN1 runs on ROI_ALIGN's kernel (:func:`axis_samples` takes the desc's offsets and
AlignRegionsToCorners; ROI_ALIGN's are 0.5, -0.5 and FALSE). ROI_ALIGN_GRAD evaluates the
same samples one at a time in float64 (:func:`run_roi_align_grad`).

ROI_ALIGN
---------
ROI_ALIGN on the CPU (numba), in DirectML's float32 arithmetic.

The sample coordinates of every ROI and axis are computed up front in NumPy, in
float64 with exactly the reference's operations and order
(``(j - OutputPixelOffset) * step + start - InputPixelOffset``) and turned into taps by
the semantics layer's :func:`~dmlops.descs.roi.sample_taps`, so out-of-bounds
decisions, taps and weights agree with the reference bit for bit. Every sample is then
computed as DirectML 1.15.4 does (erratum E38), with the reference's operations, so the
two backends agree bit for bit:

* LINEAR: ``a + (b - a)·t`` along y first (both tap columns), then along x, in float32,
  clamped taps included (an infinite tap gives NaN even at weight 0);
* AVERAGE: a float32 running sum from +0, sample rows in order, each row's samples in
  order, OutOfBoundsInputValue for a sample out of bounds; divided by the sample count;
* MAX: from the type's lowest finite value, only a strictly greater sample replaces
  (NaN never wins, erratum E29).

The in-bounds samples of an output along an axis are one run (coordinates are affine
in the sample index): only the run is evaluated; the samples around it read
OutOfBoundsInputValue, added one at a time until the running sum stops changing (a
region far larger than the input costs the samples that read it, not all of them).

Two loop forms per ROI evaluate the very same operations (whichever reads fewer elements,
:func:`_average_form`):

* *rows first* (0): for each in-bounds sample row, the y-lerp of every column of the
  ROI's column span into a scratch row (vectorised), then each sample's x-lerp from it;
* *direct* (1): each sample's four taps, for few samples spread over a wide span.

One parallel task handles one ROI and a block of channels; tasks are numbered channel
block first, so each thread's contiguous share of the (static) schedule spans every ROI
and uneven ROI costs even out. A bad batch index raises DataIndexError before anything
is written (ruling 3).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..descs.roi import (
    SAMPLE_BYTES,
    batch_indices,
    image_tensor,
    pooling_bins,
    roi_gradient_coefficients,
    sample_taps,
)
from ..enums import FeatureLevel, InterpolationMode, ReduceFunction
from ..memory import check_allocation
from ._common import kernel_view, load, store
from ._threads import run_kernel

# -- ROI_ALIGN -----------------------------------------------------------------

CHANNEL_BLOCK = 16
"""Channels per parallel task (the scratch row of the rows-first form is reused across them)."""

Samples = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[Any], NDArray[Any]]
Runs = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]


def axis_samples(
    desc: Any,
    start: NDArray[np.float64],
    end: NDArray[np.float64],
    n_out: int,
    length: int,
    mode: InterpolationMode | None = None,
) -> Samples:
    """Samples of every ROI along one axis (``desc``: ROI_ALIGN, ROI_ALIGN1 or ROI_ALIGN_GRAD; ``mode``: the taps').

    ROI_ALIGN is ROI_ALIGN1 with its implied offsets (0.5, -0.5) and no
    AlignRegionsToCorners; with it the samples span the corners (``step = size / (NX -
    1)``, one sample alone at the region's centre), as the reference's ``_axes``.

    Returns
    -------
    (samples, offsets, first, second, weight, in_bounds)
        ``samples[r]`` per output element, ROI ``r``'s samples at
        ``[offsets[r], offsets[r] + n_out * samples[r])`` of the flat tap arrays; the
        weight of ``second`` in float64 (the lerp's ``t``).
    """
    size = end - start
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        ratio = np.abs(size) / n_out
        finite = np.isfinite(ratio)
        lo, hi = desc.minimum_samples_per_output, desc.maximum_samples_per_output
        samples = np.where(finite, np.clip(np.ceil(np.where(finite, ratio, 0.0)), lo, hi), lo).astype(np.int64)
    total = int(np.sum(samples, dtype=np.float64) * n_out)  # float64: no int64 wrap for absurd counts
    check_allocation(total * SAMPLE_BYTES, f"{desc.dml_name}: the {total} samples of the ROIs along one axis")
    count = n_out * samples
    offsets = np.zeros(samples.size + 1, np.int64)
    np.cumsum(count, out=offsets[1:])
    roi_of = np.repeat(np.arange(samples.size), count)
    j = (np.arange(offsets[-1], dtype=np.int64) - offsets[:-1][roi_of]).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if getattr(desc, "align_regions_to_corners", False):
            # ROI_ALIGN1 AlignRegionsToCorners (the reference's operations, in its order)
            step = size / (count - 1)
            coord = (j - desc.output_pixel_offset) * step[roi_of] + start[roi_of] - desc.input_pixel_offset
            centre = (start + size / 2 - desc.input_pixel_offset)[roi_of]
            coord = np.where(count[roi_of] == 1, centre, coord)
        else:
            step = size / count  # the reference: size / (n_out * s)
            coord = (j - desc.output_pixel_offset) * step[roi_of] + start[roi_of] - desc.input_pixel_offset
    first, second, weight, in_bounds = sample_taps(desc, coord, length, mode)
    return samples, offsets, first.astype(np.int64), second.astype(np.int64), weight, in_bounds


def sample_runs(axis: Samples, n_out: int) -> Runs:
    """The run of in-bounds samples of each (ROI, output element), and each ROI's tap span.

    Returns
    -------
    (lo, hi, n_in, span_lo, span)
        Output element ``o`` of ROI ``r`` (``k = r * n_out + o``) has its in-bounds samples
        at ``[lo[k], hi[k])`` of its ``samples[r]`` (coordinates are affine in the sample
        index, so they are one run); ``span[r]`` = (lowest, highest) in-bounds tap of ROI
        ``r`` (highest < lowest if none). ``n_in[r]`` counts ROI ``r``'s in-bounds samples.
    """
    samples, offsets, first, second, _, in_bounds = axis
    n_roi = samples.size
    roi_of = np.repeat(np.arange(n_roi, dtype=np.int64), np.diff(offsets))
    j = np.arange(offsets[-1], dtype=np.int64) - offsets[:-1][roi_of]
    key = roi_of * n_out + j // samples[roi_of]
    inside = np.flatnonzero(in_bounds)
    count = np.bincount(key[inside], minlength=n_roi * n_out).astype(np.int64)
    lo = np.zeros(n_roi * n_out, np.int64)
    if inside.size:
        keys = key[inside]
        starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
        lo[keys[starts]] = (j % samples[roi_of])[inside[starts]]
    hi = lo + count
    span = np.zeros((n_roi, 2), np.int64)
    span[:, 1] = -1
    if offsets[-1]:
        big = np.iinfo(np.int64).max
        span[:, 0] = np.minimum.reduceat(np.where(in_bounds, first, big), offsets[:-1])
        span[:, 1] = np.maximum.reduceat(np.where(in_bounds, second, -1), offsets[:-1])
        span[span[:, 1] < 0] = (0, -1)
    n_in = np.bincount(roi_of[inside], minlength=n_roi).astype(np.int64)
    return lo, hi, n_in, span[:, 0].copy(), span


@njit(cache=True)
def _lerp(a, b, t):  # type: ignore[no-untyped-def]  # pragma: no cover
    """DirectML's ``a + (b - a) * t`` (each operation rounded to the compute type)."""
    return a + (b - a) * t


@njit(cache=True)
def _binade(x):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Frexp's exponent of a float32 value; the subnormals form one binade (-126)."""
    return max(math.frexp(np.float64(x))[1], -126)


@njit(cache=True)
def _add_repeated(acc, v, count):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``count`` float32 additions of ``v`` to the running sum, in O(binades) steps (exact).

    Within one binade of the sum the increment ``fl(s + v) - s`` is the same for every
    ``s`` once two consecutive steps agree (rounding sees ``s`` only through the parity of
    ``s / ulp``), so a run of steps whose exact sums stay in the binade (one ulp of margin)
    is one multiply-add; it stops once the sum no longer changes (NaN stays NaN). The same
    algorithm as the cuda kernels' ``add_repeated``.
    """
    k = count
    while k > 0:
        nxt = acc + v
        if nxt == acc or nxt != nxt:
            return nxt
        jumped = False
        if k >= 3 and acc != 0 and nxt != 0 and (acc > 0) == (nxt > 0):
            nxt2 = nxt + v
            d = np.float64(nxt) - np.float64(acc)  # exact
            e = _binade(acc)
            if (
                np.float64(nxt2) - np.float64(nxt) == d
                and nxt2 != 0
                and (nxt2 > 0) == (acc > 0)
                and _binade(nxt) == e
                and _binade(nxt2) == e
            ):
                a, step, w = abs(np.float64(acc)), abs(d), abs(np.float64(v))
                ulp = math.ldexp(1.0, max(e, -125) - 24)
                hi = math.ldexp(1.0, e)
                lo = math.ldexp(1.0, e - 1) if e > -126 else 0.0
                if (d > 0) == (acc > 0):  # |sum| grows: every exact sum below hi - ulp
                    j = math.floor((hi - ulp - a - w) / step) + 1
                    while j > 0 and a + (j - 1) * step + w + ulp >= hi:
                        j -= 1
                else:  # |sum| shrinks: every exact sum at least lo + ulp, never through 0
                    j = math.floor((a - w - ulp - lo) / step) + 1
                    while j > 0 and (a - (j - 1) * step - w - ulp < lo or a - j * step <= 0.0):
                        j -= 1
                j = min(j, k)
                if j >= 2:
                    acc = np.float32(np.float64(acc) + j * d)  # exact: inside the binade
                    k -= j
                    jumped = True
        if not jumped:
            acc = nxt
            k -= 1
    return acc


@njit(cache=True, nogil=True, error_model="numpy")
def _roi_align(  # type: ignore[no-untyped-def]  # pragma: no cover
    x, out, batch, form, cblock, oob, half, low, reduce_max, linear,
    sy_, oy_, y0_, y1_, wy_, ylo_, yhi_, sx_, ox_, x0_, x1_, wx_, xlo_, xhi_, xspan, first_task, end_task,
):  # fmt: skip
    n_roi, n_c, out_h, out_w = out.shape
    one = wx_.dtype.type(1)
    zero = one - one
    oobv = wx_.dtype.type(oob)
    for task in range(first_task, end_task):
        cb = task // n_roi
        r = task - cb * n_roi
        b = batch[r]
        sy, sx = sy_[r], sx_[r]
        n_samples = wx_.dtype.type(sy * sx)
        oy0, ox0 = oy_[r], ox_[r]
        c_end = min(n_c, (cb + 1) * cblock)
        lo = xspan[r, 0]
        width = xspan[r, 1] - lo + 1
        scratch = linear and form[r] == 0 and width > 0
        col = np.empty(max(width, 1) if scratch else 1, wx_.dtype)
        acc = np.empty(out_w, wx_.dtype)
        for c in range(cb * cblock, c_end):
            xp = x[b, c]
            for oy in range(out_h):
                k0 = r * out_h + oy
                ylo, yhi = ylo_[k0], yhi_[k0]
                for ox in range(out_w):
                    k1 = r * out_w + ox
                    if reduce_max:
                        a = low
                        # some sample out of bounds (only a greater value replaces: order is irrelevant)
                        if (ylo > 0 or yhi < sy or xlo_[k1] > 0 or xhi_[k1] < sx) and oobv > a:
                            a = oobv
                        acc[ox] = a
                    elif yhi == ylo:
                        acc[ox] = _add_repeated(zero, oobv, sy * sx)
                    else:
                        acc[ox] = _add_repeated(zero, oobv, ylo * sx)
                for ky in range(ylo, yhi):
                    jy = oy0 + oy * sy + ky
                    wy = wy_[jy]
                    row0 = xp[y0_[jy]]
                    row1 = xp[y1_[jy]]
                    if scratch:
                        for k in range(width):
                            col[k] = _lerp(load(row0[lo + k], half), load(row1[lo + k], half), wy)
                    for ox in range(out_w):
                        k1 = r * out_w + ox
                        xlo, xhi = xlo_[k1], xhi_[k1]
                        a = acc[ox]
                        if not reduce_max:
                            a = _add_repeated(a, oobv, xlo)
                        for kx in range(xlo, xhi):
                            jx = ox0 + ox * sx + kx
                            xa, xb = x0_[jx], x1_[jx]
                            if not linear:
                                v = load(row0[xa], half)
                            elif scratch:
                                v = _lerp(col[xa - lo], col[xb - lo], wx_[jx])
                            else:
                                left = _lerp(load(row0[xa], half), load(row1[xa], half), wy)
                                right = _lerp(load(row0[xb], half), load(row1[xb], half), wy)
                                v = _lerp(left, right, wx_[jx])
                            if reduce_max:
                                if v > a:  # strictly greater: NaN never wins (erratum E29)
                                    a = v
                            else:
                                a = a + v
                        if not reduce_max:
                            a = _add_repeated(a, oobv, sx - xhi)
                        acc[ox] = a
                for ox in range(out_w):
                    a = acc[ox]
                    if not reduce_max:
                        if yhi > ylo:
                            a = _add_repeated(a, oobv, (sy - yhi) * sx)
                        a = a / n_samples
                    out[r, c, oy, ox] = store(a, out[r, c, oy, ox], half)


def _average_form(ym: Runs, xm: Runs, out_h: int, out_w: int) -> NDArray[np.int64]:
    """Per ROI the loop form (AVERAGE and MAX): 0 rows first, 1 direct (fewer element reads wins).

    Rows first lerps ``width`` columns per in-bounds sample row (contiguous, vectorised)
    and reads two scratch entries per in-bounds sample; direct reads four taps per sample.
    """
    width = np.maximum(xm[4][:, 1] - xm[4][:, 0] + 1, 0)
    rows_first = 2 * width + 2 * xm[2]  # per in-bounds sample row: xm[2] = in-bounds samples along x
    direct = 4 * xm[2]
    return np.where(rows_first <= direct, 0, 1).astype(np.int64)


def run_roi_align(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """ROI_ALIGN (or ROI_ALIGN1: its own offsets and corners) of every ROI into ``outputs["OutputTensor"]``."""
    x = inputs["InputTensor"]
    batch = batch_indices(desc, inputs["BatchIndicesTensor"])
    rois = np.asarray(inputs["ROITensor"], dtype=np.float64).reshape(-1, 4)
    _, n_c, out_h, out_w = desc.output_tensor.sizes
    _, _, height, width = desc.input_tensor.sizes
    wdtype = np.float64 if x.dtype == np.float64 else np.float32
    with np.errstate(invalid="ignore", over="ignore"):
        xs = axis_samples(desc, rois[:, 0] * desc.spatial_scale_x, rois[:, 2] * desc.spatial_scale_x, out_w, width)
        ys = axis_samples(desc, rois[:, 1] * desc.spatial_scale_y, rois[:, 3] * desc.spatial_scale_y, out_h, height)
    yr, xr = sample_runs(ys, out_h), sample_runs(xs, out_w)
    form = _average_form(yr, xr, out_h, out_w)
    xk, half = kernel_view(x)
    ok, _ = kernel_view(outputs["OutputTensor"])
    cblock = min(CHANNEL_BLOCK, max(n_c, 1))
    tasks = ok.shape[0] * -(-n_c // cblock)  # (channel block, ROI) pairs
    run_kernel(
        _roi_align,
        tasks,
        ok.size * 4,  # the work: at least four taps an output element
        xk,
        ok,
        batch,
        form,
        cblock,
        float(desc.out_of_bounds_input_value),
        half,
        np.dtype(wdtype).type(np.finfo(x.dtype).min),  # where DirectML's MAX starts
        desc.reduction_function is ReduceFunction.MAX,
        desc.interpolation_mode is InterpolationMode.LINEAR,
        ys[0], ys[1], ys[2], ys[3], ys[4].astype(wdtype), yr[0], yr[1],
        xs[0], xs[1], xs[2], xs[3], xs[4].astype(wdtype), xr[0], xr[1], xr[4],
    )  # fmt: skip


# -- ROI_POOLING ----------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def _roi_pooling(x, half, batch, y0, y1, x0, x1, lowest, out, first_job, end_job):  # type: ignore[no-untyped-def]  # pragma: no cover
    # DirectML's max (E192): from the type's lowest finite value, replaced only by a strictly
    # greater element, row by row, left to right; the chosen element's bits are copied; an
    # empty bin is 0. Parallel over (ROI, channel).
    channels = out.shape[1]
    for job in range(first_job, end_job):
        r, c = job // channels, job % channels
        b = batch[r]
        for ph in range(out.shape[2]):
            for pw in range(out.shape[3]):
                best, chosen, found = lowest, -1, False
                for h in range(y0[r, ph], y1[r, ph]):
                    for w in range(x0[r, pw], x1[r, pw]):
                        found = True
                        v = load(x[b, c, h, w], half)
                        if v > best:
                            best, chosen = v, h * x.shape[3] + w
                if chosen >= 0:
                    out[r, c, ph, pw] = x[b, c, chosen // x.shape[3], chosen % x.shape[3]]
                elif found:
                    out[r, c, ph, pw] = store(lowest, out[r, c, ph, pw], half)
                else:
                    out[r, c, ph, pw] = 0


def run_roi_pooling(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """ROI_POOLING: the semantics layer's bins (:func:`~dmlops.descs.roi.pooling_bins`), maxed by one numba pass."""
    x, half = kernel_view(inputs["InputTensor"])
    out, _ = kernel_view(outputs["OutputTensor"])
    bins = pooling_bins(desc, inputs["ROITensor"])
    lowest = float(np.finfo(inputs["InputTensor"].dtype).min)
    jobs = out.shape[0] * out.shape[1]  # (ROI, channel) pairs
    bounds = (bins.batch, bins.y_start, bins.y_end, bins.x_start, bins.x_end)
    run_kernel(_roi_pooling, jobs, max(x.size, out.size), x, half, *bounds, lowest, out)


# -- ROI_ALIGN_GRAD ------------------------------------------------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def _roi_align_grad(  # type: ignore[no-untyped-def]  # pragma: no cover
    x, has_x, dy, batch, reduce_max, linear, low, fy1_, fx1_, dx, droi,
    sy_, oy_, y0_, y1_, wy_, iny_, ly0_, ly1_, lwy_,
    sx_, ox_, x0_, x1_, wx_, inx_, lx0_, lx1_, lwx_, first_channel, end_channel,
):  # fmt: skip
    # The reference's compute_roi_align_grad, one sample at a time. Parallel over channels:
    # a channel's input gradient and its (ROI, channel) ROI-gradient partials are its task's
    # alone. The weights are the forward's float32 ones; the input gradient and the ROI
    # gradient accumulate in float64 (the reference's einsum and sums, in another order).
    n_roi, _, out_h, out_w = dy.shape
    for c in range(first_channel, end_channel):
        for r in range(n_roi):
            b = batch[r]
            sy, sx = sy_[r], sx_[r]
            for oh in range(out_h):
                for ow in range(out_w):
                    share = dy[r, c, oh, ow]
                    pick = -1
                    if reduce_max:
                        # The forward's MAX pick (erratum E29): from ``low``, a strictly greater sample
                        # replaces; an out-of-bounds sample competes as 0 (erratum E195).
                        best = low
                        for ky in range(sy):
                            jy = oy_[r] + oh * sy + ky
                            for kx in range(sx):
                                jx = ox_[r] + ow * sx + kx
                                v = np.float32(0.0)
                                if iny_[jy] and inx_[jx]:
                                    wy, wx = wy_[jy], wx_[jx]
                                    left = _lerp(x[b, c, y0_[jy], x0_[jx]], x[b, c, y1_[jy], x0_[jx]], wy)
                                    right = _lerp(x[b, c, y0_[jy], x1_[jx]], x[b, c, y1_[jy], x1_[jx]], wy)
                                    v = _lerp(left, right, wx)
                                if v > best:
                                    best, pick = v, ky * sx + kx
                        if pick < 0:
                            continue
                    else:
                        share = share / (sy * sx)
                    for k in range(sy * sx):
                        if reduce_max and k != pick:
                            continue
                        jy = oy_[r] + oh * sy + k // sx
                        jx = ox_[r] + ow * sx + k % sx
                        if not (iny_[jy] and inx_[jx]):
                            continue
                        wy = np.float64(wy_[jy]) if linear else 0.0
                        wx = np.float64(wx_[jx]) if linear else 0.0
                        ya, yb, xa, xb = y0_[jy], y1_[jy], x0_[jx], x1_[jx]
                        dx[b, c, ya, xa] += (1.0 - wy) * share * (1.0 - wx)
                        dx[b, c, ya, xb] += (1.0 - wy) * share * wx
                        dx[b, c, yb, xa] += wy * share * (1.0 - wx)
                        dx[b, c, yb, xb] += wy * share * wx
                        if not has_x or share == 0:
                            continue
                        # The ROI gradient (erratum E194): the LINEAR taps' slopes in either mode.
                        ya, yb, xa, xb = ly0_[jy], ly1_[jy], lx0_[jx], lx1_[jx]
                        tl, tr = np.float64(x[b, c, ya, xa]), np.float64(x[b, c, ya, xb])
                        bl, br = np.float64(x[b, c, yb, xa]), np.float64(x[b, c, yb, xb])
                        ty, tx = np.float64(lwy_[jy]), np.float64(lwx_[jx])
                        gx = share * ((1 - ty) * (tr - tl) + ty * (br - bl))
                        gy = share * ((1 - tx) * (bl - tl) + tx * (br - tr))
                        droi[r, c, 0] += gx * fx1_[r, ow, 0]
                        droi[r, c, 1] += gy * fy1_[r, oh, 0]
                        droi[r, c, 2] += gx * fx1_[r, ow, 1]
                        droi[r, c, 3] += gy * fy1_[r, oh, 1]


def _coefficients(n_out: int, samples: NDArray[np.int64], length: int, corners: bool) -> NDArray[np.float64]:
    """(ROIs, n_out, 2): per ROI and output the (first, last) corner factors of its samples (erratum E194).

    :func:`~dmlops.descs.roi.roi_gradient_coefficients` depends on a sample only through
    its output index, so one row per output.
    """
    out = np.empty((samples.size, n_out, 2))
    for r, s in enumerate(samples):
        first, last = roi_gradient_coefficients(n_out, int(s), length, corners)
        out[r, :, 0], out[r, :, 1] = first[:: int(s)], last[:: int(s)]
    return out


def run_roi_align_grad(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """ROI_ALIGN_GRAD: the reference's transpose of ROI_ALIGN1's sampling and DirectML's ROI gradient, sample by sample.

    The samples are ROI_ALIGN1's (:func:`axis_samples`); float64 accumulation as the
    reference, rounded once into the outputs (the order of the float64 sums differs).
    """
    x_in = inputs.get("InputTensor")
    dy = np.asarray(inputs["InputGradientTensor"], dtype=np.float64)
    rois = np.asarray(inputs["ROITensor"], dtype=np.float64).reshape(-1, 4)
    batch = batch_indices(desc, inputs["BatchIndicesTensor"])
    image = image_tensor(desc)
    n, n_c, height, width = image.sizes
    _, _, out_h, out_w = desc.input_gradient_tensor.sizes
    linear = desc.interpolation_mode is InterpolationMode.LINEAR
    corners = bool(desc.align_regions_to_corners)
    with np.errstate(invalid="ignore", over="ignore"):
        x1, x2 = rois[:, 0] * desc.spatial_scale_x, rois[:, 2] * desc.spatial_scale_x
        y1, y2 = rois[:, 1] * desc.spatial_scale_y, rois[:, 3] * desc.spatial_scale_y
        xs = axis_samples(desc, x1, x2, out_w, width)
        ys = axis_samples(desc, y1, y2, out_h, height)
        lin = InterpolationMode.LINEAR
        lxs = xs if linear else axis_samples(desc, x1, x2, out_w, width, lin)
        lys = ys if linear else axis_samples(desc, y1, y2, out_h, height, lin)
    has_x = x_in is not None
    x = np.asarray(x_in, dtype=np.float32) if has_x else np.zeros((1, 1, 1, 1), np.float32)
    dx = np.zeros((n, n_c, height, width))
    droi = np.zeros((rois.shape[0], n_c, 4))
    f32 = np.float32
    run_kernel(
        _roi_align_grad,
        n_c,
        dy.size * 4,
        x, has_x, dy, batch, desc.reduction_function is ReduceFunction.MAX, linear, f32(np.finfo(f32).min),
        _coefficients(out_h, ys[0], height, corners), _coefficients(out_w, xs[0], width, corners), dx, droi,
        ys[0], ys[1], ys[2], ys[3], ys[4].astype(f32), ys[5], lys[2], lys[3], lys[4].astype(f32),
        xs[0], xs[1], xs[2], xs[3], xs[4].astype(f32), xs[5], lxs[2], lxs[3], lxs[4].astype(f32),
    )  # fmt: skip
    if "OutputGradientTensor" in outputs:
        outputs["OutputGradientTensor"][...] = dx
    if "OutputROIGradientTensor" in outputs:
        out = outputs["OutputROIGradientTensor"]
        out[...] = droi.sum(axis=1).reshape(out.shape)


OPERATORS: dict[str, Callable[..., Any]] = {
    "ROI_ALIGN": run_roi_align,
    "ROI_ALIGN1": run_roi_align,  # ROI_ALIGN's kernel: the desc carries the offsets and AlignRegionsToCorners
    "ROI_ALIGN_GRAD": run_roi_align_grad,
    "ROI_POOLING": run_roi_pooling,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
