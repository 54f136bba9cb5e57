"""ROI operators in NumPy: ROI_ALIGN and ROI_ALIGN1 (its generic neighbour, the same machinery).

ROI_ALIGN
---------
ROI_ALIGN in NumPy, vectorised across ROIs, in DirectML's float32 arithmetic.

Every axis of every ROI is reduced to a list of samples (two taps and a weight each,
plus an in-bounds flag); see :class:`~dmlops.descs.roi.RoiAlignDesc` for the
formulas. The lists of a chunk of ROIs are computed together, flat, ROI after ROI
(:class:`_Axes`); sample coordinates are float64, as before.

Every sample is then evaluated with DirectML 1.15.4's arithmetic (measured against the
real DirectML: ``tests/directml/test_directml_roi_findings.py``, erratum E38):

* **LINEAR** lerps ``a + (b - a)·t`` along y first (both tap columns), then along x,
  each operation rounded to float32 (no FMA). Clamped taps are lerped too (at the last
  pixel both taps are that pixel), so an infinite tap gives NaN even at weight 0, and
  ``b - a`` overflows near FLT_MAX. A coordinate in ``(-1, 0)`` reads only the first
  pixel: DirectML clamps the tap indices ``floor(c)`` and ``floor(c) + 1``, so the
  pixel after the edge is not a tap (its weight would be 0: it matters only when it is
  infinite or far from the edge's value).
* **AVERAGE** adds the samples of an output into a float32 running sum that starts at
  +0, sample rows in order and each row's samples in order (a sample out of bounds adds
  OutOfBoundsInputValue, also when every sample is), then divides by the sample count
  in float32.
* **MAX** folds from the type's lowest finite value; only a strictly greater sample
  replaces, so NaN never wins (erratum E29; :func:`max_keys`).

ROIs with the same sample counts are stacked and evaluated together, in blocks of
ROIs x channels x sample rows; a block's running sums continue the previous block's in
order (``np.add.accumulate``, sequential), so the result is bit-identical to evaluating
the ROIs one at a time (``tests/test_roi_align.py`` checks that the chunk and block
sizes do not change a bit).

Memory: ROIs are taken in chunks whose per-ROI arrays (sample lists at ``SAMPLE_BYTES``
a sample, per-output accumulators) hold at most ``CHUNK_ELEMENTS`` float64 values;
within a chunk, blocks of stacked ROIs x channels x samples hold at most
``STACK_ELEMENTS`` values (at least one row of one output's samples). Besides the
result (NumROIs x ChannelCount x OutputHeight x OutputWidth) the extra memory is
therefore bounded whatever NumROIs is, except that one ROI whose samples alone exceed a
chunk gets a chunk of its own (its sample counts are checked with
:func:`dmlops.memory.check_allocation`).

Time: about 20 ns a sample. A desc with more than ``SAMPLE_LIMIT`` samples in all (adaptive
sampling of regions far larger than the input) is refused with UnsupportedError; the cpu
and cuda backends, which visit only the in-bounds samples, run it.

A sample whose coordinate is ``nan`` (a ROI with non-finite coordinates) is out of
bounds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.roi import (
    SAMPLE_BYTES,
    RoiAlignDesc,
    batch_indices,
    image_tensor,
    pooling_bins,
    roi_gradient_coefficients,
    sample_taps,
    validate_generic,
)
from ..enums import FeatureLevel, InterpolationMode, ReduceFunction
from ..errors import UnsupportedError
from ..memory import check_allocation

# -- ROI_ALIGN -----------------------------------------------------------------

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]

STACK_ELEMENTS = 1 << 17
"""Values (float32 samples, at most 1 MiB of float64) of one block of stacked ROIs x channels
x samples: small enough to stay in cache and in memory the allocator reuses."""

SAMPLE_LIMIT = 1 << 32
"""Samples (ROIs x channels x outputs x samples per output) the reference evaluates at most:
about 20 ns each, so a minute or two. Beyond it (adaptive sampling of regions far larger
than the input reaches 10^12 samples per output) it raises UnsupportedError instead of
running for hours; the cpu and cuda backends visit only the in-bounds run of samples."""

CHUNK_ELEMENTS = 1 << 21
"""Float64 values (16 MiB) the sample lists and per-output accumulators of a chunk of ROIs
may hold (a sample costs ``SAMPLE_BYTES`` / 8 values)."""


@dataclass(frozen=True)
class _Axes:
    """The samples of a chunk of ROIs along one axis, flat: ROI ``r`` owns ``[start[r], start[r + 1])``."""

    samples: NDArray[np.int64]  # per output element of each ROI (sX or sY)
    start: NDArray[np.int64]
    first: NDArray[np.intp]  # tap with weight 1 - weight (the only tap for NEAREST)
    second: NDArray[np.intp]  # tap with weight ``weight``
    weight: F32  # float32, as DirectML's lerp takes it
    in_bounds: NDArray[np.bool_]


def _samples_per_output(desc: RoiAlignDesc, size: F64, n_out: int) -> NDArray[np.int64]:
    """:func:`~dmlops.descs.roi.samples_per_output` of every ROI (ruling 5)."""
    lo, hi = desc.minimum_samples_per_output, desc.maximum_samples_per_output
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = np.abs(size) / n_out
        finite = np.isfinite(ratio)
        return np.where(finite, np.clip(np.ceil(np.where(finite, ratio, 0.0)), lo, hi), lo).astype(np.int64)


def _axes(
    desc: RoiAlignDesc,
    start: F64,
    end: F64,
    samples: NDArray[np.int64],
    n_out: int,
    length: int,
    mode: InterpolationMode | None = None,
) -> _Axes:
    """Sample coordinates of a chunk of ROIs along one axis (``start``/``end`` already scaled; ``mode``: the taps')."""
    count = n_out * samples
    offsets = np.zeros(count.size + 1, np.int64)
    np.cumsum(count, out=offsets[1:])
    roi = np.repeat(np.arange(count.size), count)
    j = np.arange(offsets[-1]) - offsets[:-1][roi]  # sample index within its ROI
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if getattr(desc, "align_regions_to_corners", False):
            # ROI_ALIGN1 AlignRegionsToCorners: the first and last samples on the region's
            # corners; one sample alone at the region's centre (OutputPixelOffset unused).
            step = (end - start) / (count - 1)
            coord = (j - desc.output_pixel_offset) * step[roi] + start[roi] - desc.input_pixel_offset
            centre = (start + (end - start) / 2 - desc.input_pixel_offset)[roi]
            coord = np.where(count[roi] == 1, centre, coord)
        else:
            step = (end - start) / count
            # ROI_ALIGN1: xin = (j - OutputPixelOffset)·step + x1s - InputPixelOffset (ROI_ALIGN: 0.5 / -0.5).
            coord = (j - desc.output_pixel_offset) * step[roi] + start[roi] - desc.input_pixel_offset
    first, second, weight, in_bounds = sample_taps(desc, coord, length, mode)
    return _Axes(samples, offsets, first, second, weight.astype(np.float32), in_bounds)


def _groups(first: NDArray[np.intp], second: NDArray[np.intp]) -> list[NDArray[np.intp]]:
    """Indices grouped by equal (first, second) keys of non-negative integers, each group in increasing order."""
    if not first.size:
        return []
    key = first.astype(np.int64) * (int(second.max()) + 1) + second
    order = np.argsort(key, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(key[order])) + 1)


class _Taps:
    """Reads ``x[batch, channel, y, x]`` for stacks of ROIs, channels, sample rows and columns.

    A C-contiguous input is read with ``np.take`` on its flat view at computed element
    indices (about 3x faster than indexing with four index arrays); any other layout
    (strided, broadcast) through the four index arrays.
    """

    def __init__(self, x: NDArray[Any]) -> None:
        self.x = x
        self.flat = x.reshape(-1) if x.flags.c_contiguous else None

    def rows(self, batch: NDArray[np.int64], c0: int, c1: int, y: NDArray[np.intp]) -> NDArray[np.intp]:
        """(ROIs, channels, rows, 1): the flat index of column 0 of each row (or its row index)."""
        _, n_c, h, w = self.x.shape
        planes = batch[:, None, None, None] * n_c + np.arange(c0, c1)[None, :, None, None]
        if self.flat is None:
            return planes * h + y[:, None, :, None]
        return (planes * h + y[:, None, :, None]) * w

    def read(self, rows: NDArray[np.intp], x_: NDArray[np.intp]) -> F32:
        """(ROIs, channels, rows, columns) float32 values at ``rows`` (from :meth:`rows`) and columns ``x_``."""
        columns = x_[:, None, None, :]
        if self.flat is not None:
            return np.take(self.flat, rows + columns).astype(np.float32)
        _, n_c, h, _ = self.x.shape
        plane, y = np.divmod(rows, h)
        batch, channel = np.divmod(plane, n_c)
        return np.asarray(self.x[batch, channel, y, columns], dtype=np.float32)


def lerp(a: F32, b: F32, t: F32) -> F32:
    """DirectML's ``a + (b - a)·t``, every operation rounded to float32 (no FMA)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return a + (b - a) * t


def _per_sample(
    x: NDArray[Any],
    batch: NDArray[np.int64],
    ay: _Axes,
    ax: _Axes,
    rois: NDArray[np.intp],
    oob: float,
    low: float,
    linear: bool,
    reduce_max: bool,
    out: F64,
    at: NDArray[np.intp],
) -> None:
    """Every sample, reduced into ``out[at[r]]`` for the ROIs ``rois`` of a chunk, stacked by sample counts.

    MAX (erratum E29): from ``low``, the type's lowest finite value; NaN never wins.
    AVERAGE: a float32 running sum from +0 in sample order (rows of samples, then the
    samples of a row), divided by the sample count in float32.
    """
    n_c, oh, ow = out.shape[1:]
    taps = _Taps(x)
    oob32 = np.float32(oob)
    budget = STACK_ELEMENTS // 2  # about eight arrays of a block's size are alive at once (taps, lerps)
    for group in _groups(ay.samples[rois], ax.samples[rois]):
        group = rois[group]
        sy, sx = int(ay.samples[group[0]]), int(ax.samples[group[0]])
        nx = ow * sx
        # A block: ROIs x channels x sample rows x nx samples, whole output rows where they fit,
        # else a part of one output row.
        if sy * nx <= budget:
            rows = sy * min(oh, budget // (sy * nx))
            row_blocks = [(r0, min(r0 + rows, oh * sy)) for r0 in range(0, oh * sy, rows)]
        else:
            rows = max(1, budget // nx)
            row_blocks = [
                (r0, min(r0 + rows, (oy + 1) * sy)) for oy in range(oh) for r0 in range(oy * sy, (oy + 1) * sy, rows)
            ]
        channels = min(n_c, max(1, budget // (rows * nx)))
        per_block = max(1, budget // (channels * rows * nx))
        for g0 in range(0, group.size, per_block):
            g = group[g0 : g0 + per_block]
            jx = ax.start[g][:, None] + np.arange(nx)
            x0, x1, wx, in_x = ax.first[jx], ax.second[jx], ax.weight[jx], ax.in_bounds[jx]
            for c0 in range(0, n_c, channels):
                c1 = min(c0 + channels, n_c)
                acc = np.full((g.size, c1 - c0, oh, ow), np.float32(low) if reduce_max else np.float32(0.0))
                for r0, r1 in row_blocks:
                    jy = ay.start[g][:, None] + np.arange(r0, r1)
                    y0, y1, wy, in_y = ay.first[jy], ay.second[jy], ay.weight[jy], ay.in_bounds[jy]
                    row0 = taps.rows(batch[g], c0, c1, y0)
                    if linear:
                        w_y = wy[:, None, :, None]
                        row1 = taps.rows(batch[g], c0, c1, y1)
                        # Along y first (both tap columns), then along x (erratum E38).
                        left = lerp(taps.read(row0, x0), taps.read(row1, x0), w_y)
                        right = lerp(taps.read(row0, x1), taps.read(row1, x1), w_y)
                        vals = lerp(left, right, wx[:, None, None, :])
                    else:
                        vals = taps.read(row0, x0)
                    # The whole sample reads OutOfBoundsInputValue if its row or column is out of bounds.
                    vals = np.where(in_y[:, None, :, None] & in_x[:, None, None, :], vals, oob32)
                    # (ROIs, channels, output rows, sample rows of each, ow, sx)
                    grid = vals.reshape(g.size, c1 - c0, -1, min(r1 - r0, sy), ow, sx)
                    span = slice(r0 // sy, r0 // sy + grid.shape[2])
                    if reduce_max:
                        keys = max_keys(grid, low)
                        # The max over each output's samples, one sample offset at a time (NumPy's
                        # reduction over short strided axes is ~10x slower).
                        part = functools.reduce(np.maximum, (keys[..., k] for k in range(sx)))
                        part = functools.reduce(np.maximum, (part[:, :, :, k] for k in range(grid.shape[3])))
                        acc[:, :, span] = np.maximum(acc[:, :, span], part)
                    else:
                        # The running sum goes on in sample order: the sums so far, then this
                        # block's samples row by row, added one after the other (accumulate is
                        # sequential; reduce would sum pairwise).
                        ordered = grid.transpose(0, 1, 2, 4, 3, 5).reshape(*grid.shape[:3], ow, -1)
                        with np.errstate(invalid="ignore", over="ignore"):
                            sums = np.add.accumulate(
                                np.concatenate([acc[:, :, span, :, None], ordered], axis=-1), axis=-1
                            )
                        acc[:, :, span] = sums[..., -1]
                if not reduce_max:
                    with np.errstate(invalid="ignore", over="ignore"):
                        acc = acc / np.float32(sy * sx)
                out[at[g], c0:c1] = acc


def max_keys(values: NDArray[Any], low: float) -> NDArray[Any]:
    """Samples as DirectML's MAX sees them (erratum E29): NaN and anything below ``low`` become ``low``.

    DirectML folds a running max() that starts at the type's lowest finite value ``low`` and
    is replaced only by a strictly greater sample, so NaN never wins and -inf never beats
    the start. The max of these keys is that result, in any order.
    """
    return np.where(values > low, values, values.dtype.type(low))


def _chunks(samples_x: NDArray[np.int64], samples_y: NDArray[np.int64], desc: RoiAlignDesc) -> list[slice]:
    """Consecutive ROIs whose per-ROI arrays fit ``CHUNK_ELEMENTS`` together (or one ROI alone).

    Per ROI: the sample lists (``SAMPLE_BYTES`` per sample) and the per-output accumulators.
    """
    _, _, oh, ow = desc.output_tensor.sizes
    nx, ny = samples_x.astype(np.float64) * ow, samples_y.astype(np.float64) * oh
    cost = (nx + ny) * (SAMPLE_BYTES // 8) + 4 * oh * ow
    for r in np.flatnonzero(cost > CHUNK_ELEMENTS):
        # Sample counts go up to 2^32 - 1 per output: refuse (AllocationError) rather than fail
        # inside NumPy when the coordinates and taps of one ROI cannot fit in memory.
        for count in (int(nx[r]), int(ny[r])):
            check_allocation(count * SAMPLE_BYTES, f"{desc.dml_name}: the {count} samples of one ROI along one axis")
    ends = np.cumsum(cost)
    chunks, start = [], 0
    while start < cost.size:
        before = ends[start - 1] if start else 0.0
        stop = max(start + 1, int(np.searchsorted(ends, before + CHUNK_ELEMENTS, side="right")))
        chunks.append(slice(start, stop))
        start = stop
    return chunks


def compute_roi_align(
    desc: RoiAlignDesc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """ROI_ALIGN of every ROI, a chunk of ROIs at a time, in DirectML's float32 arithmetic."""
    x = inputs["InputTensor"]
    rois = np.asarray(inputs["ROITensor"], dtype=np.float64).reshape(-1, 4)
    batch = batch_indices(desc, inputs["BatchIndicesTensor"])
    out = np.empty(desc.output_tensor.sizes, dtype=np.float64)
    _, _, oh, ow = desc.output_tensor.sizes
    _, _, h, w = desc.input_tensor.sizes
    low = float(np.finfo(x.dtype).min)  # where DirectML's MAX starts (erratum E29)
    with np.errstate(invalid="ignore", over="ignore"):
        x1, x2 = rois[:, 0] * desc.spatial_scale_x, rois[:, 2] * desc.spatial_scale_x
        y1, y2 = rois[:, 1] * desc.spatial_scale_y, rois[:, 3] * desc.spatial_scale_y
        samples_x = _samples_per_output(desc, x2 - x1, ow)
        samples_y = _samples_per_output(desc, y2 - y1, oh)
    reduce_max = desc.reduction_function is ReduceFunction.MAX
    linear = desc.interpolation_mode is InterpolationMode.LINEAR
    # ROIs with the same sample counts are stacked, so they are taken in that order.
    order = np.lexsort((samples_x, samples_y))
    chunks = _chunks(samples_x[order], samples_y[order], desc)  # refuses what memory cannot hold
    per_roi = desc.output_tensor.element_count // max(1, rois.shape[0])  # channels x outputs
    total = int(np.sum(samples_x.astype(np.float64) * samples_y) * per_roi)
    if total > SAMPLE_LIMIT:
        raise UnsupportedError(
            f"{desc.dml_name}: the numpy reference evaluates every sample, and these ROIs have {total} "
            f"(more than its limit of {SAMPLE_LIMIT}); the cpu and cuda backends skip the out-of-bounds ones"
        )
    for chunk in chunks:
        at = order[chunk]
        ax = _axes(desc, x1[at], x2[at], samples_x[at], ow, w)
        ay = _axes(desc, y1[at], y2[at], samples_y[at], oh, h)
        every = np.arange(at.size)
        _per_sample(x, batch[at], ay, ax, every, desc.out_of_bounds_input_value, low, linear, reduce_max, out, at)
    return {"OutputTensor": out}


def compute_roi_align1(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """ROI_ALIGN1: ROI_ALIGN's machinery with the desc's own offsets and AlignRegionsToCorners."""
    validate_generic(desc, feature_level)
    return compute_roi_align(desc, inputs, feature_level=feature_level, strict=strict)


# -- ROI_POOLING ---------------------------------------------------------------------------------


def _first_max(a: NDArray[Any], axis: int) -> NDArray[Any]:
    """The first element (along ``axis``) equal to the maximum: +0 and -0 tie, the earlier one is kept."""
    top = np.expand_dims(a.max(axis=axis), axis)
    first = np.argmax(a == top, axis=axis)
    return np.take_along_axis(a, np.expand_dims(first, axis), axis).squeeze(axis)


def compute_roi_pooling(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """ROI_POOLING: the max of every bin (:func:`~dmlops.descs.roi.pooling_bins`), 0 for an empty bin.

    The max is DirectML's (erratum E192): a running max over the bin's rows, each row left
    to right, that starts at the type's lowest finite value and is replaced only by a
    strictly greater element. So NaN never wins, a bin of -inf or NaN gives the lowest
    finite value (:func:`max_keys`, as ROI_ALIGN's MAX), and of +0 and -0 the first in
    row-major order is kept. Exact: no arithmetic on the values.
    """
    validate_generic(desc, feature_level)
    x = inputs["InputTensor"]
    bins = pooling_bins(desc, inputs["ROITensor"])
    out = np.zeros(desc.output_tensor.sizes, dtype=x.dtype)
    keys = max_keys(np.asarray(x), float(np.finfo(x.dtype).min))
    _, _, h, w = x.shape
    rows, columns = np.arange(h), np.arange(w)
    for r, batch in enumerate(bins.batch):
        # (PooledWidth, W) and (PooledHeight, H) masks of each bin's columns and rows
        in_x = (columns >= bins.x_start[r][:, None]) & (columns < bins.x_end[r][:, None])
        in_y = (rows >= bins.y_start[r][:, None]) & (rows < bins.y_end[r][:, None])
        # The first max of each row's part of a bin (C, H, PooledWidth), then the first of the
        # rows' (C, PooledHeight, PooledWidth): the first in row-major order. -inf marks "no
        # element" (keys are finite or +inf), so an empty bin comes out -inf.
        by_row = _first_max(np.where(in_x, keys[batch][:, :, None, :], -np.inf), axis=-1)
        by_bin = _first_max(np.where(in_y[:, :, None], by_row[:, None], -np.inf), axis=2)
        out[r] = np.where(np.isneginf(by_bin), 0, by_bin)
    return {"OutputTensor": out}


# -- ROI_ALIGN_GRAD --------------------------------------------------------------------------


def _tap_matrix(
    first: NDArray[np.intp], second: NDArray[np.intp], weight: F64, live: NDArray[np.bool_], length: int
) -> F64:
    """(samples, length): each in-bounds sample's interpolation weights on its two taps (both on one tap add up)."""
    m = np.zeros((first.size, length))
    rows = np.arange(first.size)
    np.add.at(m, (rows, first), np.where(live, 1.0 - weight, 0.0))
    np.add.at(m, (rows, second), np.where(live, weight, 0.0))
    return m


def _samples(x: NDArray[Any], ay: _Axes, ax: _Axes, ys: slice, xs: slice, linear: bool) -> tuple[F32, F32, F32, F32]:
    """(top-left, top-right, bottom-left, bottom-right) taps of every sample of one ROI: (C, NY, NX) float32 each."""
    y0, y1, x0, x1 = ay.first[ys], ay.second[ys], ax.first[xs], ax.second[xs]
    if not linear:
        y1, x1 = y0, x0
    grid = np.ix_(np.arange(x.shape[0]), y0, x0)
    return (
        np.asarray(x[grid], np.float32),
        np.asarray(x[np.ix_(np.arange(x.shape[0]), y0, x1)], np.float32),
        np.asarray(x[np.ix_(np.arange(x.shape[0]), y1, x0)], np.float32),
        np.asarray(x[np.ix_(np.arange(x.shape[0]), y1, x1)], np.float32),
    )


def _sample_gradient(
    desc: Any, dy: F64, taps: tuple[F32, F32, F32, F32] | None, ay: _Axes, ax: _Axes, ys: slice, xs: slice, r: int
) -> F64:
    """(C, NY, NX): the share of ``InputGradientTensor[r]`` each sample of ROI ``r`` receives (0 out of bounds).

    AVERAGE: every sample ``1 / (sY * sX)`` of its output's gradient. MAX: the whole gradient
    to the sample the forward's MAX picks (:func:`max_keys`: from the lowest finite value,
    NaN never wins; the first of equal samples in row-major order); an out-of-bounds sample
    competes as 0 and, picked, passes its gradient to nothing.
    """
    sy, sx = int(ay.samples[r]), int(ax.samples[r])
    live = ay.in_bounds[ys][:, None] & ax.in_bounds[xs][None, :]
    share = np.repeat(np.repeat(dy[r], sy, axis=1), sx, axis=2)  # (C, NY, NX)
    if desc.reduction_function is ReduceFunction.AVERAGE:
        return np.where(live, share / (sy * sx), 0.0)
    assert taps is not None  # MAX needs InputTensor (validated)
    values = _interpolate(taps, ay.weight[ys], ax.weight[xs])
    low = float(np.finfo(np.float32).min)
    # An out-of-bounds sample competes with the value 0 (DirectML 1.15.4, erratum E195: as if
    # OutOfBoundsInputValue were 0); when it wins, its gradient goes nowhere.
    keys = max_keys(np.where(live, values, np.float32(0.0)), low)
    oh, ow = dy.shape[2:]
    blocks = keys.reshape(-1, oh, sy, ow, sx).transpose(0, 1, 3, 2, 4).reshape(-1, oh, ow, sy * sx)
    # the forward's pick: the first sample strictly above all before it, i.e. the first max (above low)
    best = np.argmax(blocks == blocks.max(axis=-1, keepdims=True), axis=-1)
    picked = np.zeros_like(blocks, dtype=bool)
    np.put_along_axis(picked, best[..., None], True, axis=-1)
    picked &= blocks > low  # no sample above the start value: the forward keeps ``low``, no sample gets it
    picked = picked.reshape(-1, oh, ow, sy, sx).transpose(0, 1, 3, 2, 4).reshape(share.shape)
    return np.where(picked & live, share, 0.0)


def _interpolate(taps: tuple[F32, F32, F32, F32], wy: F32, wx: F32) -> F32:
    """The forward's samples from their taps: lerp along y, then x, in float32 (erratum E38)."""
    tl, tr, bl, br = taps
    left = lerp(tl, bl, wy[:, None])
    right = lerp(tr, br, wy[:, None])
    return lerp(left, right, wx[None, :])


def compute_roi_align_grad(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """ROI_ALIGN_GRAD: the transpose of ROI_ALIGN1's sampling (OutputGradientTensor) and DirectML's ROI gradient.

    Each ROI's samples are ROI_ALIGN1's (:func:`_axes`: the same sample counts, coordinates and
    taps); a sample's share of its output's gradient (:func:`_sample_gradient`) goes to its
    taps with the bilinear weights (NEAREST: to its one pixel), accumulated in float64.
    OutputROIGradientTensor: per in-bounds sample, its share times the bilinear slopes
    ``dv/dx = (1 - ty)(tr - tl) + ty(br - bl)`` and ``dv/dy = (1 - tx)(bl - tl) + tx(br - tr)``
    of the taps ``floor(c)`` and ``floor(c) + 1`` (clamped as the forward's), times DirectML's
    factors (:func:`~dmlops.descs.roi.roi_gradient_coefficients`, erratum E194).
    """
    validate_generic(desc, feature_level)
    x = inputs.get("InputTensor")
    dy = np.asarray(inputs["InputGradientTensor"], dtype=np.float64)
    rois = np.asarray(inputs["ROITensor"], dtype=np.float64).reshape(-1, 4)
    batch = batch_indices(desc, inputs["BatchIndicesTensor"])
    image = image_tensor(desc)
    _, channels, h, w = image.sizes
    _, _, oh, ow = desc.input_gradient_tensor.sizes
    linear = desc.interpolation_mode is InterpolationMode.LINEAR
    corners = bool(desc.align_regions_to_corners)
    with np.errstate(invalid="ignore", over="ignore"):
        x1, x2 = rois[:, 0] * desc.spatial_scale_x, rois[:, 2] * desc.spatial_scale_x
        y1, y2 = rois[:, 1] * desc.spatial_scale_y, rois[:, 3] * desc.spatial_scale_y
        samples_x = _samples_per_output(desc, x2 - x1, ow)
        samples_y = _samples_per_output(desc, y2 - y1, oh)
    total = int(np.sum(samples_x.astype(np.float64) * samples_y) * channels * oh * ow)
    if total > SAMPLE_LIMIT:
        raise UnsupportedError(
            f"{desc.dml_name}: {total} samples, more than the numpy reference's limit of {SAMPLE_LIMIT}"
        )
    ax = _axes(desc, x1, x2, samples_x, ow, w)
    ay = _axes(desc, y1, y2, samples_y, oh, h)
    # The ROI gradient's slopes come from the LINEAR taps in either mode (erratum E194).
    lin = InterpolationMode.LINEAR
    lx, ly = (
        (ax, ay) if linear else (_axes(desc, x1, x2, samples_x, ow, w, lin), _axes(desc, y1, y2, samples_y, oh, h, lin))
    )
    dx = np.zeros(image.sizes)
    droi = np.zeros((rois.shape[0], 4))
    for r in range(rois.shape[0]):
        ys, xs = slice(ay.start[r], ay.start[r + 1]), slice(ax.start[r], ax.start[r + 1])
        taps = None if x is None else _samples(x[batch[r]], ay, ax, ys, xs, linear)
        g = _sample_gradient(desc, dy, taps, ay, ax, ys, xs, r)
        wy, wx = ay.weight[ys].astype(np.float64), ax.weight[xs].astype(np.float64)
        if not linear:
            wy, wx = np.zeros_like(wy), np.zeros_like(wx)
        my = _tap_matrix(ay.first[ys], ay.second[ys], wy, ay.in_bounds[ys], h)  # (NY, H)
        mx = _tap_matrix(ax.first[xs], ax.second[xs], wx, ax.in_bounds[xs], w)  # (NX, W)
        dx[batch[r]] += np.einsum("yh,cyx,xw->chw", my, g, mx)
        if x is not None and taps is not None:
            slope_taps = taps if linear else _samples(x[batch[r]], ly, lx, ys, xs, True)
            tl, tr, bl, br = (t.astype(np.float64) for t in slope_taps)
            ty, tx = ly.weight[ys].astype(np.float64)[None, :, None], lx.weight[xs].astype(np.float64)[None, None, :]
            with np.errstate(invalid="ignore", over="ignore"):
                slope_x = (1 - ty) * (tr - tl) + ty * (br - bl)
                slope_y = (1 - tx) * (bl - tl) + tx * (br - tr)
                fx1, fx2 = roi_gradient_coefficients(ow, int(samples_x[r]), w, corners)
                fy1, fy2 = roi_gradient_coefficients(oh, int(samples_y[r]), h, corners)
                gx, gy = np.where(g != 0, g * slope_x, 0.0), np.where(g != 0, g * slope_y, 0.0)
                droi[r] = [(gx * fx1).sum(), (gy * fy1[:, None]).sum(), (gx * fx2).sum(), (gy * fy2[:, None]).sum()]
    outputs = {"OutputGradientTensor": dx, "OutputROIGradientTensor": droi.reshape(desc.roi_tensor.sizes)}
    return {m: outputs[m] for m in desc.tensor_names("output")}


OPERATORS: dict[str, Callable[..., Any]] = {
    "ROI_ALIGN": compute_roi_align,
    "ROI_ALIGN_GRAD": compute_roi_align_grad,
    "ROI_ALIGN1": compute_roi_align1,
    "ROI_POOLING": compute_roi_pooling,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
