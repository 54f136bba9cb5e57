"""ROI_ALIGN in NumPy, one ROI at a time, in float64.

Every axis of every ROI is reduced to a list of samples (two taps and a weight each,
plus an in-bounds flag); see :class:`~dmlops.descs.roi_align.RoiAlignDesc` for the
formulas. Two formulations share those lists:

* **AVERAGE, finite input (separable)**. A bilinear (or nearest) sample is a product
  of a row weight and a column weight, so the mean of the in-bounds samples of
  output ``(oy, ox)`` is ``(Ay @ X[c] @ Ax.T)[oy, ox]`` with banded matrices ``Ay``
  (OutputHeight x crop rows) and ``Ax`` (OutputWidth x crop columns) that sum the
  tap weights of each output's samples. Out-of-bounds samples add
  ``OutOfBoundsInputValue`` times their count, ``sY·sX - inY[oy]·inX[ox]``.
* **MAX, or an input crop with inf/nan (per sample)**. Samples are evaluated
  explicitly: rows are interpolated first, then columns, for a block of sample rows
  of one output row at a time, and reduced. (A dense matmul would turn a far-away
  ``inf`` into ``0·inf = nan``, so non-finite crops take this path.)

Memory: ROIs are processed one at a time, and within a ROI channels and sample rows
are processed in blocks of at most ``BLOCK_ELEMENTS`` float64 values. Besides the
float64 result (NumROIs x ChannelCount x OutputHeight x OutputWidth, rounded once
by the caller) the extra memory is ``O(BLOCK_ELEMENTS + crop + NX + NY)`` where the
crop is at most one channel of one input plane (``InputHeight x InputWidth``) and
``NX = OutputWidth·sX``, ``NY = OutputHeight·sY`` are the sample counts of one ROI.
Nothing is ever allocated per NumROIs x ChannelCount x samples.

Non-finite values: arithmetic is IEEE, except that a tap whose weight is exactly 0
is skipped, so an ``inf`` beside an exactly hit pixel does not make the sample
``nan``. MAX propagates ``nan``. A sample whose coordinate is ``nan`` (a ROI with
non-finite coordinates) is out of bounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.roi_align import RoiAlignDesc, samples_per_output
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

    def bins(self) -> NDArray[np.intp]:
        return np.arange(self.first.size) // self.samples

    def matrix(self, n_out: int, lo: int, hi: int) -> F64:
        """(n_out, hi - lo + 1): summed tap weights of the in-bounds samples of each output."""
        m = np.zeros((n_out, hi - lo + 1))
        ok = self.in_bounds
        bins = self.bins()[ok]
        np.add.at(m, (bins, self.first[ok] - lo), 1.0 - self.weight[ok])
        np.add.at(m, (bins, self.second[ok] - lo), self.weight[ok])
        return m

    def in_bounds_per_output(self, n_out: int) -> F64:
        return np.bincount(self.bins()[self.in_bounds], minlength=n_out).astype(np.float64)


SAMPLE_BYTES = 128
"""Bytes per sample assumed for an axis's coordinate, tap and weight arrays and their
temporaries: an estimate (the CPU backend's tap merge holds more at its peak). The check
catches sample grids that miss the memory by far, as absurd sample counts do."""


def _axis(desc: RoiAlignDesc, start: float, end: float, n_out: int, length: int) -> _Axis:
    """Sample coordinates along one axis (``start``/``end`` already scaled)."""
    size = end - start
    s = samples_per_output(size, n_out, desc.minimum_samples_per_output, desc.maximum_samples_per_output)
    # Sample counts go up to 2^32 - 1 per output: refuse (AllocationError) rather than fail
    # inside NumPy when the coordinates and taps of one axis cannot fit in memory.
    check_allocation(n_out * s * SAMPLE_BYTES, f"{desc.dml_name}: the {n_out * s} samples of one ROI along one axis")
    step = size / (n_out * s)
    # ROI_ALIGN1: xin = (j - OutputPixelOffset)·step + x1s - InputPixelOffset, offsets -0.5 / 0.5.
    with np.errstate(invalid="ignore"):
        coord = (np.arange(n_out * s) - desc.output_pixel_offset) * step + start - desc.input_pixel_offset
    # Ruling 6: only x < -1 or x > length is out of bounds (nan too); [-1, 0) and (L-1, L] clamp.
    in_bounds = (coord >= -1.0) & (coord <= length)
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
    return _Axis(s, first, second, weight, in_bounds)


def _lerp(a: F64, b: F64, w: F64) -> F64:
    """``(1 - w)·a + w·b`` with zero-weight taps skipped (no ``0·inf``)."""
    with np.errstate(invalid="ignore"):
        return np.where(w == 1.0, 0.0, (1.0 - w) * a) + np.where(w == 0.0, 0.0, w * b)


def _average_separable(plane: NDArray[Any], ay: _Axis, ax: _Axis, oob: float, out: F64) -> bool:
    """AVERAGE as ``Ay @ X[c] @ Ax.T``; False (nothing written) if the crop is not finite."""
    n_c, oh, ow = out.shape
    ylo, yhi, xlo, xhi = ay.lo, ay.hi, ax.lo, ax.hi
    a_y = ay.matrix(oh, ylo, yhi)
    a_x_t = ax.matrix(ow, xlo, xhi).T
    crop = plane[:, ylo : yhi + 1, xlo : xhi + 1]
    per_channel = crop.shape[1] * crop.shape[2]
    chunk = max(1, BLOCK_ELEMENTS // per_channel)
    for c0 in range(0, n_c, chunk):
        block = np.asarray(crop[c0 : c0 + chunk], dtype=np.float64)
        if not np.isfinite(block).all():
            return False
        out[c0 : c0 + chunk] = a_y @ (block @ a_x_t)
    total = ay.samples * ax.samples
    oob_count = total - np.outer(ay.in_bounds_per_output(oh), ax.in_bounds_per_output(ow))
    # Out-of-bounds samples count in the mean with OutOfBoundsInputValue (skip 0·inf).
    with np.errstate(invalid="ignore"):
        out += np.where(oob_count > 0, oob * oob_count, 0.0)
    out /= total
    return True


def _per_sample(
    plane: NDArray[Any], ay: _Axis, ax: _Axis, oob: float, reduce_max: bool, linear: bool, out: F64
) -> None:
    """Evaluate every sample explicitly, in blocks; reduce with max or mean."""
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
                grid = vals.reshape(vals.shape[0], rows.size, ow, sx)
                part = grid.max(axis=(1, 3)) if reduce_max else grid.sum(axis=(1, 3))
                if acc is None:
                    acc = part
                elif reduce_max:
                    acc = np.maximum(acc, part)  # propagates nan, like max()
                else:
                    acc += part
            assert acc is not None
            out[c0 : c0 + chunk, oy] = acc if reduce_max else acc / (sy * sx)


def _one_roi(desc: RoiAlignDesc, plane: NDArray[Any], roi: F64, out: F64) -> None:
    """Fill ``out`` (ChannelCount, OutputHeight, OutputWidth) for one ROI of ``plane`` (C, H, W)."""
    _, _, oh, ow = desc.output_tensor.sizes
    _, _, h, w = desc.input_tensor.sizes
    oob = desc.out_of_bounds_input_value
    x1, y1, x2, y2 = (float(v) for v in roi)
    with np.errstate(invalid="ignore", over="ignore"):
        ax = _axis(desc, x1 * desc.spatial_scale_x, x2 * desc.spatial_scale_x, ow, w)
        ay = _axis(desc, y1 * desc.spatial_scale_y, y2 * desc.spatial_scale_y, oh, h)
    if not ax.in_bounds.any() or not ay.in_bounds.any():
        out[...] = oob  # every sample is out of bounds
        return
    reduce_max = desc.reduction_function is ReduceFunction.MAX
    if not reduce_max and _average_separable(plane, ay, ax, oob, out):
        return
    linear = desc.interpolation_mode is InterpolationMode.LINEAR
    _per_sample(plane, ay, ax, oob, reduce_max, linear, out)


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
    """ROI_ALIGN of every ROI, one at a time, in float64."""
    x = inputs["InputTensor"]
    rois = np.asarray(inputs["ROITensor"], dtype=np.float64).reshape(-1, 4)
    batch = batch_indices(desc, inputs["BatchIndicesTensor"])
    out = np.empty(desc.output_tensor.sizes, dtype=np.float64)
    for r in range(rois.shape[0]):
        _one_roi(desc, x[batch[r]], rois[r], out[r])
    return {"OutputTensor": out}
