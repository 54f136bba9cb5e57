"""ROI_ALIGN in NumPy, vectorised across ROIs, in float64.

Every axis of every ROI is reduced to a list of samples (two taps and a weight each,
plus an in-bounds flag); see :class:`~dmlops.descs.roi_align.RoiAlignDesc` for the
formulas. The lists of a chunk of ROIs are computed together, flat, ROI after ROI
(:class:`_Axes`), with exactly the operations of one ROI's (:func:`_axis`). Two
formulations share them:

* **AVERAGE, finite input (separable)**. A bilinear (or nearest) sample is a product
  of a row weight and a column weight, so the mean of the in-bounds samples of
  output ``(oy, ox)`` is ``(Ay @ X[c] @ Ax.T)[oy, ox]`` with banded matrices ``Ay``
  (OutputHeight x crop rows) and ``Ax`` (OutputWidth x crop columns) that sum the
  tap weights of each output's samples. Out-of-bounds samples add
  ``OutOfBoundsInputValue`` times their count, ``sY·sX - inY[oy]·inX[ox]``. ROIs whose
  crops have the same shape are stacked, so one ``matmul`` serves them all; each ROI
  and channel is still its own small product, the very BLAS call a one-ROI-at-a-time
  evaluation makes, so the sums round exactly as they would one ROI at a time (a first
  pass finds the crop shapes; ROIs are then taken in order of shape).
* **MAX (per sample)**. Every sample is evaluated, rows interpolated first, then
  columns, for ROIs stacked by sample counts, and reduced with DirectML's max (erratum
  E29: from the type's lowest finite value, NaN never wins; :func:`max_keys`).
* **AVERAGE over a crop with inf/nan (per sample, one ROI at a time)**. A dense matmul
  would turn a far-away ``inf`` into ``0·inf = nan``, so such ROIs (rare: the crops
  are checked only when the input holds a non-finite value) are evaluated per sample,
  blocks of sample rows of one output row at a time.

The result is bit-identical to evaluating the ROIs one at a time with these formulas
(dmlops's reference before it was vectorised; ``tests/test_roi_align.py`` checks that
the chunk and block sizes do not change a bit).

Memory: ROIs are taken in chunks whose per-ROI arrays (sample lists at ``SAMPLE_BYTES``
a sample, weight matrices, per-output counts) hold at most ``CHUNK_ELEMENTS`` float64
values; within a chunk, stacks of ROIs x channels are taken in blocks of at most
``STACK_ELEMENTS`` values, and the per-sample path's blocks hold at most
``BLOCK_ELEMENTS``. Besides the float64 result (NumROIs x ChannelCount x OutputHeight
x OutputWidth, rounded once by the caller) the extra memory is therefore bounded
whatever NumROIs is, except that one ROI whose samples alone exceed a chunk gets a
chunk of its own (its sample counts are checked with
:func:`dmlops.memory.check_allocation`), and that a block holds at least one channel of
one crop (at most ``InputHeight x InputWidth``) or one row of samples.

Non-finite values: arithmetic is IEEE, except that a tap whose weight is exactly 0
is skipped, so an ``inf`` beside an exactly hit pixel does not make the sample
``nan``. MAX ignores ``nan`` and never goes below the lowest finite value, as
DirectML's does. A sample whose coordinate is ``nan`` (a ROI with
non-finite coordinates) is out of bounds.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.roi_align import RoiAlignDesc
from ..enums import FeatureLevel, InterpolationMode, ReduceFunction
from ..memory import check_allocation

BLOCK_ELEMENTS = 1 << 21
"""Float64 values (16 MiB) a block of channels x samples may hold."""

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class _Axis:
    """The samples of one ROI along one axis."""

    samples: int  # per output element (sX or sY)
    first: NDArray[np.intp]  # tap with weight 1 - weight (the only tap for NEAREST)
    second: NDArray[np.intp]  # tap with weight ``weight``
    weight: F64
    in_bounds: NDArray[np.bool_]

    @property
    def lo(self) -> int:
        return int(self.first[self.in_bounds].min())

    @property
    def hi(self) -> int:
        return int(self.second[self.in_bounds].max())


SAMPLE_BYTES = 128
"""Bytes per sample assumed for an axis's coordinate, tap and weight arrays and their
temporaries: an estimate (the CPU backend's tap merge holds more at its peak). The check
catches sample grids that miss the memory by far, as absurd sample counts do."""


def _axis(desc: RoiAlignDesc, start: float, end: float, n_out: int, length: int) -> _Axis:
    """Sample coordinates of one ROI along one axis (``start``/``end`` already scaled)."""
    size = np.array([end - start])
    samples = _samples_per_output(desc, size, n_out)
    # Sample counts go up to 2^32 - 1 per output: refuse (AllocationError) rather than fail
    # inside NumPy when the coordinates and taps of one axis cannot fit in memory.
    count = n_out * int(samples[0])
    check_allocation(count * SAMPLE_BYTES, f"{desc.dml_name}: the {count} samples of one ROI along one axis")
    return _axes(desc, np.array([start]), np.array([end]), samples, n_out, length).one(0)


def _lerp(a: F64, b: F64, w: F64) -> F64:
    """``(1 - w)·a + w·b`` with zero-weight taps skipped (no ``0·inf``)."""
    with np.errstate(invalid="ignore"):
        return np.where(w == 1.0, 0.0, (1.0 - w) * a) + np.where(w == 0.0, 0.0, w * b)


def _per_sample(plane: NDArray[Any], ay: _Axis, ax: _Axis, oob: float, linear: bool, out: F64) -> None:
    """AVERAGE of every sample evaluated explicitly, in blocks (crops holding inf or nan)."""
    n_c, oh, ow = out.shape
    sy, sx = ay.samples, ax.samples
    xlo, xhi = ax.lo, ax.hi
    cols = plane[:, :, xlo : xhi + 1]
    # Out-of-bounds columns read any crop column; their values are overwritten below.
    x_first = np.where(ax.in_bounds, ax.first - xlo, 0)
    x_second = np.where(ax.in_bounds, ax.second - xlo, 0)
    x_out = ~ax.in_bounds
    per_row = max(x_first.size, xhi - xlo + 1)
    chunk = min(n_c, max(1, BLOCK_ELEMENTS // per_row))
    rows_per_block = min(sy, max(1, BLOCK_ELEMENTS // (chunk * per_row)))
    for c0 in range(0, n_c, chunk):
        planes = cols[c0 : c0 + chunk]
        for oy in range(oh):
            acc: F64 | None = None
            for r0 in range(oy * sy, (oy + 1) * sy, rows_per_block):
                rows = np.arange(r0, min(r0 + rows_per_block, (oy + 1) * sy))
                first = np.asarray(planes[:, ay.first[rows], :], dtype=np.float64)
                if linear:
                    second = np.asarray(planes[:, ay.second[rows], :], dtype=np.float64)
                    row_vals = _lerp(first, second, ay.weight[rows][:, None])
                    vals = _lerp(row_vals[..., x_first], row_vals[..., x_second], ax.weight)
                else:
                    vals = first[..., x_first]
                # The whole sample reads OutOfBoundsInputValue if its row or column is out of bounds.
                vals[:, ~ay.in_bounds[rows], :] = oob
                vals[:, :, x_out] = oob
                part = vals.reshape(vals.shape[0], rows.size, ow, sx).sum(axis=(1, 3))
                acc = part if acc is None else acc + part
            assert acc is not None
            out[c0 : c0 + chunk, oy] = acc / (sy * sx)


STACK_ELEMENTS = 1 << 17
"""Float64 values (1 MiB) of one block of stacked ROIs x channels: small enough to stay in
cache and in memory the allocator reuses (page faults on fresh large arrays cost more than
the arithmetic of these small products)."""

CHUNK_ELEMENTS = BLOCK_ELEMENTS
"""Float64 values (16 MiB) the sample lists, weight matrices and per-output counts of a chunk
of ROIs may hold (a sample costs ``SAMPLE_BYTES`` / 8 values)."""


@dataclass(frozen=True)
class _Axes:
    """The samples of a chunk of ROIs along one axis, flat: ROI ``r`` owns ``[start[r], start[r + 1])``."""

    samples: NDArray[np.int64]  # per output element of each ROI (sX or sY)
    start: NDArray[np.int64]
    roi: NDArray[np.int64]  # ROI of each sample
    bin: NDArray[np.int64]  # output element of each sample
    first: NDArray[np.intp]  # tap with weight 1 - weight (the only tap for NEAREST)
    second: NDArray[np.intp]  # tap with weight ``weight``
    weight: F64
    in_bounds: NDArray[np.bool_]

    def one(self, r: int) -> _Axis:
        """ROI ``r``'s samples as an :class:`_Axis`."""
        s = slice(self.start[r], self.start[r + 1])
        return _Axis(int(self.samples[r]), self.first[s], self.second[s], self.weight[s], self.in_bounds[s])

    def span(self) -> tuple[NDArray[np.bool_], NDArray[np.intp], NDArray[np.intp]]:
        """Per ROI: whether any sample is in bounds, the lowest and the highest in-bounds tap."""
        starts = self.start[:-1]
        has = np.logical_or.reduceat(self.in_bounds, starts)
        lo = np.minimum.reduceat(np.where(self.in_bounds, self.first, np.iinfo(np.intp).max), starts)
        hi = np.maximum.reduceat(np.where(self.in_bounds, self.second, -1), starts)
        return has, lo, hi

    def matrices(self, n_out: int, lo: NDArray[np.intp], width: NDArray[np.intp]) -> tuple[F64, NDArray[np.int64]]:
        """Every ROI's (n_out, width[r]) matrix of summed tap weights, flat, and where each starts.

        Entry ``[o, t - lo[r]]`` sums the weights of ROI ``r``'s in-bounds taps ``t`` of output
        ``o`` (ROIs of width 0 get none). ``bincount`` adds in array order, so an entry sums
        its first taps in sample order, then its second taps, exactly as ``np.add.at`` over
        one ROI's firsts then seconds would.
        """
        size = n_out * width
        offset = np.zeros(size.size + 1, np.int64)
        np.cumsum(size, out=offset[1:])
        ok = self.in_bounds & (width[self.roi] > 0)
        roi, weight = self.roi[ok], self.weight[ok]
        row = offset[:-1][roi] + self.bin[ok] * width[roi] - lo[roi]
        flat = np.bincount(
            np.concatenate([row + self.first[ok], row + self.second[ok]]),
            np.concatenate([1.0 - weight, weight]),
            minlength=int(offset[-1]),
        )
        return flat.astype(np.float64, copy=False), offset  # (float64 already: the weights are)

    def in_bounds_per_output(self, n_out: int) -> F64:
        """(ROIs, n_out): the in-bounds samples of each output element."""
        n_roi = self.samples.size
        counts = np.bincount((self.roi * n_out + self.bin)[self.in_bounds], minlength=n_roi * n_out)
        return counts.astype(np.float64).reshape(n_roi, n_out)


def _samples_per_output(desc: RoiAlignDesc, size: F64, n_out: int) -> NDArray[np.int64]:
    """:func:`~dmlops.descs.roi_align.samples_per_output` of every ROI (ruling 5)."""
    lo, hi = desc.minimum_samples_per_output, desc.maximum_samples_per_output
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = np.abs(size) / n_out
        finite = np.isfinite(ratio)
        return np.where(finite, np.clip(np.ceil(np.where(finite, ratio, 0.0)), lo, hi), lo).astype(np.int64)


def _axes(desc: RoiAlignDesc, start: F64, end: F64, samples: NDArray[np.int64], n_out: int, length: int) -> _Axes:
    """Sample coordinates of a chunk of ROIs along one axis: :func:`_axis`'s operations, flat."""
    count = n_out * samples
    offsets = np.zeros(count.size + 1, np.int64)
    np.cumsum(count, out=offsets[1:])
    roi = np.repeat(np.arange(count.size), count)
    j = np.arange(offsets[-1]) - offsets[:-1][roi]  # sample index within its ROI
    with np.errstate(invalid="ignore", over="ignore"):
        step = (end - start) / count
        # ROI_ALIGN1: xin = (j - OutputPixelOffset)·step + x1s - InputPixelOffset, offsets -0.5 / 0.5.
        coord = (j - desc.output_pixel_offset) * step[roi] + start[roi] - desc.input_pixel_offset
    # DirectML 1.15.4 (erratum E28, refining ruling 6): a sample is in bounds only strictly inside
    # (-1, length), so exactly -1 or length reads OutOfBoundsInputValue (nan too); (-1, 0) and
    # (L-1, L) clamp to the edge.
    in_bounds = (coord > -1.0) & (coord < length)
    c = np.clip(np.where(in_bounds, coord, 0.0), 0.0, length - 1.0)
    if desc.interpolation_mode is InterpolationMode.LINEAR:
        first = np.floor(c).astype(np.intp)
        second = np.minimum(first + 1, length - 1)
        weight = c - first
    else:
        # Ruling 4: nearest = floor(x + 0.5), ties go up; c <= L-1 keeps it in range.
        first = np.floor(c + 0.5).astype(np.intp)
        second = first
        weight = np.zeros_like(c)
    return _Axes(samples, offsets, roi, j // samples[roi], first, second, weight, in_bounds)


def _groups(first: NDArray[np.intp], second: NDArray[np.intp]) -> list[NDArray[np.intp]]:
    """Indices grouped by equal (first, second) keys of non-negative integers, each group in increasing order."""
    if not first.size:
        return []
    key = first.astype(np.int64) * (int(second.max()) + 1) + second
    order = np.argsort(key, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(key[order])) + 1)


def _average_separable(
    x: NDArray[Any],
    batch: NDArray[np.int64],
    ay: _Axes,
    ax: _Axes,
    lo: NDArray[np.intp],
    size: NDArray[np.intp],
    oob: float,
    out: F64,
    at: NDArray[np.intp],
    input_finite: bool,
) -> NDArray[np.bool_]:
    """AVERAGE as ``Ay @ X[c] @ Ax.T`` into ``out[at[r]]`` for the ROIs ``r`` of a chunk.

    ``lo``, ``size``: (2, ROIs) first row and column of each crop and its height and width,
    0 for ROIs without in-bounds samples on both axes (skipped). Returns whether each ROI's
    crop was finite (checked per crop unless ``input_finite``); the others' outputs are to
    be redone per sample.
    """
    n_c, oh, ow = out.shape[1:]
    (ylo, xlo), (height, width) = lo, size
    flat_y, at_y = ay.matrices(oh, ylo, height)
    flat_x, at_x = ax.matrices(ow, xlo, width)
    total = ay.samples.astype(np.float64) * ax.samples  # sY·sX, rounded once as a Python int would be
    oob_count = total[:, None, None] - ay.in_bounds_per_output(oh)[:, :, None] * ax.in_bounds_per_output(ow)[:, None, :]
    # Out-of-bounds samples count in the mean with OutOfBoundsInputValue (skip 0·inf).
    with np.errstate(invalid="ignore"):
        oob_sum = np.where(oob_count > 0, oob * oob_count, 0.0)
    finite = np.ones(height.size, np.bool_)
    rois = np.flatnonzero(height)
    # ROIs with crops of one shape are stacked: one matmul, the same products per ROI and channel.
    for group in _groups(height[rois], width[rois]):
        group = rois[group]
        h, w = int(height[group[0]]), int(width[group[0]])
        # windows[b, c, y, x] is the (h, w) crop at (y, x): NumPy's sliding_window_view, built
        # directly. Indexing it copies whole crop rows (4x faster here than np.take of elements).
        windows = np.lib.stride_tricks.as_strided(
            x, (*x.shape[:2], x.shape[2] - h + 1, x.shape[3] - w + 1, h, w), x.strides + x.strides[2:], writeable=False
        )
        per_channel = h * w + h * ow + oh * ow  # the crop, X @ Ax.T, the result
        channels = min(n_c, max(1, STACK_ELEMENTS // per_channel))
        per_block = max(1, STACK_ELEMENTS // (channels * per_channel))
        for g0 in range(0, group.size, per_block):
            g = group[g0 : g0 + per_block]
            a_y = flat_y[at_y[g][:, None] + np.arange(oh * h)].reshape(-1, 1, oh, h)
            a_x_t = flat_x[at_x[g][:, None] + np.arange(ow * w)].reshape(-1, 1, ow, w).transpose(0, 1, 3, 2)
            for c0 in range(0, n_c, channels):
                c1 = min(c0 + channels, n_c)
                crop = np.asarray(windows[batch[g], c0:c1, ylo[g], xlo[g]], dtype=np.float64)  # (ROIs, c1 - c0, h, w)
                if not input_finite:
                    finite[g] &= np.isfinite(crop).all(axis=(1, 2, 3))
                with np.errstate(invalid="ignore", over="ignore"):
                    result = a_y @ (crop @ a_x_t)  # per ROI and channel: (oh, h) @ (h, w) @ (w, ow)
                    result += oob_sum[g][:, None]
                    result /= total[g][:, None, None, None]
                out[at[g], c0:c1] = result
    return finite


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

    def read(self, rows: NDArray[np.intp], x_: NDArray[np.intp]) -> F64:
        """(ROIs, channels, rows, columns) float64 values at ``rows`` (from :meth:`rows`) and columns ``x_``."""
        columns = x_[:, None, None, :]
        if self.flat is not None:
            return np.take(self.flat, rows + columns).astype(np.float64)
        _, n_c, h, _ = self.x.shape
        plane, y = np.divmod(rows, h)
        batch, channel = np.divmod(plane, n_c)
        return np.asarray(self.x[batch, channel, y, columns], dtype=np.float64)


def _max_per_sample(
    x: NDArray[Any],
    batch: NDArray[np.int64],
    ay: _Axes,
    ax: _Axes,
    rois: NDArray[np.intp],
    oob: float,
    low: float,
    linear: bool,
    out: F64,
    at: NDArray[np.intp],
) -> None:
    """MAX of every sample into ``out[at[r]]`` for the ROIs ``rois`` of a chunk, stacked by sample counts.

    DirectML's MAX (erratum E29): from ``low``, the type's lowest finite value; NaN never wins.
    """
    n_c, oh, ow = out.shape[1:]
    taps = _Taps(x)
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
                acc = np.full((g.size, c1 - c0, oh, ow), -np.inf)
                for r0, r1 in row_blocks:
                    jy = ay.start[g][:, None] + np.arange(r0, r1)
                    y0, y1, wy, in_y = ay.first[jy], ay.second[jy], ay.weight[jy], ay.in_bounds[jy]
                    row0 = taps.rows(batch[g], c0, c1, y0)
                    if linear:
                        w_y = wy[:, None, :, None]
                        row1 = taps.rows(batch[g], c0, c1, y1)
                        # Rows first, then columns, as _per_sample does.
                        left = _lerp(taps.read(row0, x0), taps.read(row1, x0), w_y)
                        right = _lerp(taps.read(row0, x1), taps.read(row1, x1), w_y)
                        vals = _lerp(left, right, wx[:, None, None, :])
                    else:
                        vals = taps.read(row0, x0)
                    # The whole sample reads OutOfBoundsInputValue if its row or column is out of bounds.
                    vals = max_keys(np.where(in_y[:, None, :, None] & in_x[:, None, None, :], vals, oob), low)
                    grid = vals.reshape(g.size, c1 - c0, -1, min(r1 - r0, sy), ow, sx)
                    # The max over each output's samples, one sample offset at a time (NumPy's
                    # reduction over short strided axes is ~10x slower).
                    part = functools.reduce(np.maximum, (grid[..., k] for k in range(sx)))
                    part = functools.reduce(np.maximum, (part[:, :, :, k] for k in range(grid.shape[3])))
                    span = slice(r0 // sy, r0 // sy + part.shape[2])
                    acc[:, :, span] = np.maximum(acc[:, :, span], part)
                out[at[g], c0:c1] = acc


def max_keys(values: NDArray[np.float64], low: float) -> NDArray[np.float64]:
    """Samples as DirectML's MAX sees them (erratum E29): NaN and anything below ``low`` become ``low``.

    DirectML folds a running max() that starts at the type's lowest finite value ``low`` and
    is replaced only by a strictly greater sample, so NaN never wins and -inf never beats
    the start. The max of these keys is that result, in any order.
    """
    return np.where(values > low, values, low)


def _all_finite(x: NDArray[Any]) -> bool:
    """Whether every element of the (N, C, H, W) input is finite, checked a block of planes at a time."""
    step = max(1, STACK_ELEMENTS // max(1, x.shape[2] * x.shape[3]))
    return all(np.isfinite(x[b, c0 : c0 + step]).all() for b in range(x.shape[0]) for c0 in range(0, x.shape[1], step))


def _chunks(
    desc: RoiAlignDesc, size_x: F64, size_y: F64, samples_x: NDArray[np.int64], samples_y: NDArray[np.int64]
) -> list[slice]:
    """Consecutive ROIs whose per-ROI arrays fit ``CHUNK_ELEMENTS`` together (or one ROI alone).

    Per ROI: the sample lists (``SAMPLE_BYTES`` per sample), the weight matrices (a crop
    spans at most ``|size| + 3`` pixels, and at most the input) and the per-output counts.
    """
    _, _, oh, ow = desc.output_tensor.sizes
    _, _, h, w = desc.input_tensor.sizes
    nx, ny = samples_x.astype(np.float64) * ow, samples_y.astype(np.float64) * oh
    with np.errstate(invalid="ignore"):
        crop_w = np.where(np.isfinite(size_x), np.minimum(np.abs(size_x) + 3, w), w)
        crop_h = np.where(np.isfinite(size_y), np.minimum(np.abs(size_y) + 3, h), h)
    cost = (nx + ny) * (SAMPLE_BYTES // 8) + oh * crop_h + ow * crop_w + 4 * oh * ow
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


def batch_indices(desc: RoiAlignDesc, indices: NDArray[Any]) -> NDArray[np.int64]:
    """The NumROIs batch indices as int64; DataIndexError for one outside ``[0, BatchCount)``."""
    flat = np.asarray(indices).reshape(-1)
    bad = np.flatnonzero(flat >= desc.batch_count)
    if bad.size:
        raise desc.batch_index_error(int(bad[0]), int(flat[bad[0]]))
    return flat.astype(np.int64)


def compute(
    desc: RoiAlignDesc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """ROI_ALIGN of every ROI, a chunk of ROIs at a time, in float64."""
    x = inputs["InputTensor"]
    rois = np.asarray(inputs["ROITensor"], dtype=np.float64).reshape(-1, 4)
    batch = batch_indices(desc, inputs["BatchIndicesTensor"])
    out = np.empty(desc.output_tensor.sizes, dtype=np.float64)
    _, _, oh, ow = desc.output_tensor.sizes
    _, _, h, w = desc.input_tensor.sizes
    oob = desc.out_of_bounds_input_value
    low = float(np.finfo(x.dtype).min)  # where DirectML's MAX starts (erratum E29)
    with np.errstate(invalid="ignore", over="ignore"):
        x1, x2 = rois[:, 0] * desc.spatial_scale_x, rois[:, 2] * desc.spatial_scale_x
        y1, y2 = rois[:, 1] * desc.spatial_scale_y, rois[:, 3] * desc.spatial_scale_y
        samples_x = _samples_per_output(desc, x2 - x1, ow)
        samples_y = _samples_per_output(desc, y2 - y1, oh)
    reduce_max = desc.reduction_function is ReduceFunction.MAX
    linear = desc.interpolation_mode is InterpolationMode.LINEAR

    def chunks(order: NDArray[np.intp]) -> Iterator[tuple[NDArray[np.intp], _Axes, _Axes]]:
        """ROIs ``order[chunk]`` with their samples."""
        for chunk in _chunks(desc, (x2 - x1)[order], (y2 - y1)[order], samples_x[order], samples_y[order]):
            at = order[chunk]
            ax = _axes(desc, x1[at], x2[at], samples_x[at], ow, w)
            ay = _axes(desc, y1[at], y2[at], samples_y[at], oh, h)
            yield at, ax, ay

    # ROIs are stacked when their crops (AVERAGE) or sample counts (MAX) agree, so they are
    # taken in that order; for AVERAGE a first pass finds the crops: (rows, columns) x ROIs.
    n_rois = rois.shape[0]
    lo, size = np.zeros((2, n_rois), np.intp), np.zeros((2, n_rois), np.intp)
    if reduce_max:
        order = np.lexsort((samples_x, samples_y))
    else:
        for at, ax, ay in chunks(np.arange(n_rois)):
            (has_y, ylo, yhi), (has_x, xlo, xhi) = ay.span(), ax.span()
            inside = has_y & has_x
            lo[:, at] = ylo, xlo
            size[:, at] = np.where(inside, yhi - ylo + 1, 0), np.where(inside, xhi - xlo + 1, 0)
        order = np.lexsort((size[1], size[0]))
    # One pass over the input spares a finiteness check per crop in the common case.
    input_finite = reduce_max or _all_finite(x)
    for at, ax, ay in chunks(order):
        inside = ax.span()[0] & ay.span()[0] if reduce_max else size[0, at] > 0
        # every sample of these ROIs is out of bounds
        out[at[~inside]] = max_keys(np.float64(oob), low) if reduce_max else oob
        if reduce_max:
            _max_per_sample(x, batch[at], ay, ax, np.flatnonzero(inside), oob, low, linear, out, at)
            continue
        finite = _average_separable(x, batch[at], ay, ax, lo[:, at], size[:, at], oob, out, at, input_finite)
        for r in map(int, np.flatnonzero(inside & ~finite)):
            _per_sample(x[batch[at[r]]], ay.one(r), ax.one(r), oob, linear, out[at[r]])
    return {"OutputTensor": out}
