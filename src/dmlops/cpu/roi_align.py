"""ROI_ALIGN on the CPU (numba).

The sample coordinates of every ROI and axis are computed up front in NumPy, in
float64 with exactly the reference's operations and order
(``(j - OutputPixelOffset) * step + start - InputPixelOffset``), so out-of-bounds
decisions and nearest-neighbour indices agree with the reference bit for bit. Each
sample becomes two taps and a weight plus an in-bounds flag (ruling 6: in bounds
when ``-1 <= x <= InputWidth``, then clamped; nearest = ``floor(x + 0.5)``).

Non-finite rule (as in the reference): a tap whose weight is exactly 0 is never
read, so an ``inf`` next to an exactly hit pixel does not turn into ``nan``.

**AVERAGE** is separable. The mean of output ``(oy, ox)`` is
``sum_{r, c} Ay[oy, r] * Ax[ox, c] * X[r, c]`` over the in-bounds samples, plus
``OutOfBoundsInputValue`` times the number of out-of-bounds samples, divided by
``sY * sX``. ``Ay[oy, r]`` (``Ax[ox, c]``) is the summed float64 weight of the taps of
row ``r`` (column ``c``) among output ``oy``'s in-bounds samples; taps of weight 0 are
dropped *before* summing, so every stored weight is positive and the set of elements
read is exactly the per-sample evaluation's: every in-bounds row tap of the output
meets every in-bounds column tap. ``inf``/``nan`` therefore propagate as they do
per sample, and no branch is left in the inner loops. Per ROI, one of two loop
orders is taken, whichever reads fewer elements:

* *rows first* (large or densely sampled regions, adaptive sampling):
  ``U[oy, :] = sum_r Ay[oy, r] * X[r, lo:hi+1]`` over contiguous row segments
  (multiply-adds that LLVM vectorises), then ``out[oy, ox] = sum_c Ax[ox, c] * U[oy, c]``;
  columns of ``U`` that no output weights are never read.
* *direct*: ``out[oy, ox] = sum_r Ay[oy, r] * sum_c Ax[ox, c] * X[r, c]``, for few samples
  spread over a wide region (e.g. two per output over hundreds of columns).

**MAX** is evaluated per sample: rows are interpolated first, then columns, skipping
taps of weight exactly 0; it starts from -inf and propagates NaN. An out-of-bounds
sample reads OutOfBoundsInputValue in both reductions.

Arithmetic is float32 (float64 for FLOAT64). One parallel task handles one ROI and a
block of channels; tasks are numbered channel block first, so each thread's
contiguous share of the (static) schedule spans every ROI and uneven ROI costs even
out. A bad batch index raises DataIndexError before anything is written (ruling 3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from ..descs.roi_align import RoiAlignDesc
from ..enums import FeatureLevel, InterpolationMode, ReduceFunction
from ..memory import check_allocation
from ..reference.roi_align import SAMPLE_BYTES, batch_indices
from ._common import call_parallel, kernel_view, load, store

CHANNEL_BLOCK = 16
"""Channels per parallel task (the scratch of the rows-first order is reused across them)."""

VECTOR_DISCOUNT = 4
"""Relative cost of a contiguous (vectorised) multiply-add against a gathered one."""

Samples = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[Any], NDArray[Any]]
Merged = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any], NDArray[np.int64], NDArray[np.int64]]


def axis_samples(
    desc: RoiAlignDesc, start: NDArray[np.float64], end: NDArray[np.float64], n_out: int, length: int
) -> Samples:
    """Samples of every ROI along one axis.

    Returns
    -------
    (samples, offsets, first, second, weight, in_bounds)
        ``samples[r]`` per output element, ROI ``r``'s samples at
        ``[offsets[r], offsets[r] + n_out * samples[r])`` of the flat tap arrays; the
        weight of ``second`` (``first`` has ``1 - weight``) in float64.
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
    with np.errstate(invalid="ignore", over="ignore"):
        step = size / count  # the reference: size / (n_out * s)
        coord = (j - desc.output_pixel_offset) * step[roi_of] + start[roi_of] - desc.input_pixel_offset
    in_bounds = (coord > -1.0) & (coord < length)  # strictly inside (-1, length): erratum E28
    c = np.clip(np.where(in_bounds, coord, 0.0), 0.0, length - 1.0)
    if desc.interpolation_mode is InterpolationMode.LINEAR:
        first = np.floor(c).astype(np.int64)
        second = np.minimum(first + 1, length - 1)
        weight = c - first
    else:
        first = np.floor(c + 0.5).astype(np.int64)
        second = first
        weight = np.zeros_like(c)
    return samples, offsets, first, second, weight, in_bounds


def merged_taps(axis: Samples, n_out: int, wdtype: Any) -> Merged:
    """The distinct nonzero-weight taps of each (ROI, output element), weights summed.

    Returns
    -------
    (ptr, index, weight, n_in, span)
        Output element ``o`` of ROI ``r`` has taps ``index[ptr[k]:ptr[k + 1]]`` with
        ``k = r * n_out + o``, in increasing index order, with their weights summed in
        float64 (taps of weight exactly 0 dropped first, as the reference skips them)
        and then rounded to ``wdtype``; ``n_in[k]`` counts its in-bounds samples;
        ``span[r]`` = (lowest, highest) tap index of ROI ``r`` (highest < lowest if none).
    """
    samples, offsets, first, second, weight, in_bounds = axis
    n_roi = samples.size
    roi_of = np.repeat(np.arange(n_roi, dtype=np.int64), np.diff(offsets))
    j = np.arange(offsets[-1], dtype=np.int64) - offsets[:-1][roi_of]
    key = roi_of * n_out + j // samples[roi_of]
    n_in = np.bincount(key[in_bounds], minlength=n_roi * n_out).astype(np.int64)
    k, w = key[in_bounds], weight[in_bounds]
    keys = np.concatenate([k, k])
    index = np.concatenate([first[in_bounds], second[in_bounds]])
    weights = np.concatenate([1.0 - w, w])
    keep = weights != 0.0
    keys, index, weights = keys[keep], index[keep], weights[keep]
    order = np.argsort(keys * (int(index.max(initial=0)) + 1) + index, kind="stable")
    keys, index, weights = keys[order], index[order], weights[order]
    if keys.size:
        new = np.ones(keys.size, np.bool_)
        new[1:] = (keys[1:] != keys[:-1]) | (index[1:] != index[:-1])
        starts = np.flatnonzero(new)
        weights = np.add.reduceat(weights, starts)  # in sample order: deterministic
        keys, index = keys[starts], index[starts]
    ptr = np.zeros(n_roi * n_out + 1, np.int64)
    np.cumsum(np.bincount(keys, minlength=n_roi * n_out), out=ptr[1:])
    # Per ROI the entries are sorted by output element, then index: min/max over its segment.
    roi_ptr = ptr[::n_out]
    has = roi_ptr[1:] > roi_ptr[:-1]
    span = np.zeros((n_roi, 2), np.int64)
    span[:, 1] = -1
    if keys.size:
        starts = roi_ptr[:-1][has]  # strictly increasing: each segment ends where the next ROI starts
        span[has, 0] = np.minimum.reduceat(index, starts)
        span[has, 1] = np.maximum.reduceat(index, starts)
    return ptr, index, weights.astype(wdtype), n_in, span


@njit(cache=True)
def _lerp(a, b, w, one):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``(1 - w) * a + w * b`` with taps of weight exactly 0 skipped."""
    zero = one - one
    r = zero
    if w != one:
        r += (one - w) * a
    if w != zero:  # (compare with a fixed zero: ``r - r`` is nan once r is inf)
        r += w * b
    return r


@njit(cache=True, parallel=True)
def _roi_align(  # type: ignore[no-untyped-def]  # pragma: no cover
    x, out, batch, form, cblock, oob, half, low,
    ymerged_ptr, ymerged_idx, ymerged_w, y_in, xmerged_ptr, xmerged_idx, xmerged_w, x_in, xspan,
    sy_, oy_, y0_, y1_, wy_, iny_, sx_, ox_, x0_, x1_, wx_, inx_,
):  # fmt: skip
    n_roi, n_c, out_h, out_w = out.shape
    one = xmerged_w.dtype.type(1)
    zero = one - one
    oobv = xmerged_w.dtype.type(oob)
    n_cb = (n_c + cblock - 1) // cblock
    for task in prange(n_roi * n_cb):
        cb = task // n_roi
        r = task - cb * n_roi
        b = batch[r]
        sy, sx = sy_[r], sx_[r]
        n_samples = xmerged_w.dtype.type(sy * sx)
        c_end = min(n_c, (cb + 1) * cblock)
        kind = form[r]
        if kind == 0:  # AVERAGE, rows first
            lo = xspan[r, 0]
            width = xspan[r, 1] - lo + 1
            u = np.empty((out_h, max(width, 1)), xmerged_w.dtype)
            accs = np.empty(out_h, xmerged_w.dtype)
            for c in range(cb * cblock, c_end):
                xp = x[b, c]
                for oy in range(out_h):
                    urow = u[oy]
                    k0 = r * out_h + oy
                    e, e1 = ymerged_ptr[k0], ymerged_ptr[k0 + 1]
                    if e == e1:
                        for k in range(width):
                            urow[k] = zero
                        continue
                    # slices, so that the contiguous loops vectorise (no index wraparound)
                    wa, sa = ymerged_w[e], xp[ymerged_idx[e], lo : lo + width]
                    for k in range(width):
                        urow[k] = wa * load(sa[k], half)
                    e += 1
                    while e + 1 < e1:  # two rows per pass: half the scratch traffic
                        wa, sa = ymerged_w[e], xp[ymerged_idx[e], lo : lo + width]
                        wb, sb = ymerged_w[e + 1], xp[ymerged_idx[e + 1], lo : lo + width]
                        for k in range(width):
                            urow[k] += wa * load(sa[k], half) + wb * load(sb[k], half)
                        e += 2
                    if e < e1:
                        wa, sa = ymerged_w[e], xp[ymerged_idx[e], lo : lo + width]
                        for k in range(width):
                            urow[k] += wa * load(sa[k], half)
                for ox in range(out_w):
                    k1 = r * out_w + ox
                    for oy in range(out_h):
                        accs[oy] = zero
                    for e in range(xmerged_ptr[k1], xmerged_ptr[k1 + 1]):
                        wx = xmerged_w[e]
                        col = xmerged_idx[e] - lo
                        for oy in range(out_h):
                            accs[oy] += wx * u[oy, col]
                    nx = x_in[k1]
                    for oy in range(out_h):
                        n_in = y_in[r * out_h + oy] * nx
                        if n_in == 0:
                            acc = oobv
                        else:
                            acc = accs[oy]
                            n_oob = sy * sx - n_in
                            if n_oob > 0:  # skipped when 0: no 0 * inf
                                acc += xmerged_w.dtype.type(n_oob) * oobv
                            acc = acc / n_samples
                        out[r, c, oy, ox] = store(acc, out[r, c, oy, ox], half)
        elif kind == 1:  # AVERAGE, direct
            for c in range(cb * cblock, c_end):
                xp = x[b, c]
                for oy in range(out_h):
                    k0 = r * out_h + oy
                    ny = y_in[k0]
                    for ox in range(out_w):
                        k1 = r * out_w + ox
                        n_in = ny * x_in[k1]
                        if n_in == 0:
                            acc = oobv
                        else:
                            acc = zero
                            for e in range(ymerged_ptr[k0], ymerged_ptr[k0 + 1]):
                                row = xp[ymerged_idx[e]]
                                t = zero
                                for f in range(xmerged_ptr[k1], xmerged_ptr[k1 + 1]):
                                    t += xmerged_w[f] * load(row[xmerged_idx[f]], half)
                                acc += ymerged_w[e] * t
                            n_oob = sy * sx - n_in
                            if n_oob > 0:
                                acc += xmerged_w.dtype.type(n_oob) * oobv
                            acc = acc / n_samples
                        out[r, c, oy, ox] = store(acc, out[r, c, oy, ox], half)
        else:  # MAX, per sample
            oy0, ox0 = oy_[r], ox_[r]
            for c in range(cb * cblock, c_end):
                xp = x[b, c]
                for oy in range(out_h):
                    for ox in range(out_w):
                        acc = low  # DirectML's MAX: from the lowest finite value (erratum E29)
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
                                if v > acc:  # strictly greater: NaN never wins
                                    acc = v
                        out[r, c, oy, ox] = store(acc, out[r, c, oy, ox], half)


def _average_form(ym: Merged, xm: Merged, out_h: int, out_w: int) -> NDArray[np.int64]:
    """Per ROI the AVERAGE loop order: 0 rows first, 1 direct (fewer element reads wins).

    Rows first reads ``nnz(Ay) * width`` contiguous elements (vectorised, discounted by
    ``VECTOR_DISCOUNT``) and ``OutputHeight * nnz(Ax)`` scratch entries; direct reads
    ``nnz(Ay) * nnz(Ax)`` gathered elements.
    """
    n_roi = xm[4].shape[0]
    nnz_y = np.diff(ym[0][::out_h])
    nnz_x = np.diff(xm[0][::out_w])
    width = np.maximum(xm[4][:, 1] - xm[4][:, 0] + 1, 0)
    rows_first = nnz_y * width / VECTOR_DISCOUNT + out_h * nnz_x
    direct = nnz_y * nnz_x
    return np.where(rows_first <= direct, 0, 1).astype(np.int64)[:n_roi]


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
    _, n_c, out_h, out_w = desc.output_tensor.sizes
    _, _, height, width = desc.input_tensor.sizes
    wdtype = np.float64 if x.dtype == np.float64 else np.float32
    with np.errstate(invalid="ignore", over="ignore"):
        xs = axis_samples(desc, rois[:, 0] * desc.spatial_scale_x, rois[:, 2] * desc.spatial_scale_x, out_w, width)
        ys = axis_samples(desc, rois[:, 1] * desc.spatial_scale_y, rois[:, 3] * desc.spatial_scale_y, out_h, height)
    n_roi = rois.shape[0]
    if desc.reduction_function is ReduceFunction.MAX:
        form = np.full(n_roi, 2, np.int64)
        empty = (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, wdtype), np.zeros(0, np.int64))
        ym, xm = empty, empty
        xspan = np.zeros((0, 2), np.int64)
    else:
        ym_full, xm_full = merged_taps(ys, out_h, wdtype), merged_taps(xs, out_w, wdtype)
        form = _average_form(ym_full, xm_full, out_h, out_w)
        ym, xm, xspan = ym_full[:4], xm_full[:4], xm_full[4]
    # MAX's per-sample tables: weights in the compute type
    per_sample_y = (*ys[:4], ys[4].astype(wdtype), ys[5])
    per_sample_x = (*xs[:4], xs[4].astype(wdtype), xs[5])
    xk, half = kernel_view(x)
    ok, _ = kernel_view(outputs["OutputTensor"])
    call_parallel(
        _roi_align,
        xk,
        ok,
        batch,
        form,
        min(CHANNEL_BLOCK, max(n_c, 1)),
        float(desc.out_of_bounds_input_value),
        half,
        np.dtype(wdtype).type(np.finfo(x.dtype).min),  # where DirectML's MAX starts
        *ym,
        *xm,
        xspan,
        *per_sample_y,
        *per_sample_x,
    )
