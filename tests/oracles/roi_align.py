"""Scalar-loop oracle for ROI_ALIGN, following the ROI_ALIGN1 page's pseudo-code.

ROI_ALIGN = ROI_ALIGN1 with InputPixelOffset 0.5, OutputPixelOffset -0.5 and
AlignRegionsToCorners FALSE. The pseudo-code's typos are fixed (spec erratum E17):
the Y step uses the Y sizes, loops take ``samples`` (not ``samples + 1``) points and
MAX starts from the type's lowest finite value and ignores NaN (DirectML 1.15.4, erratum
E29). Rulings 4-6 fill the gaps: ``ceil(|size| / output)`` samples per axis, out of
bounds unless ``-1 < x < W`` strictly (DirectML 1.15.4, erratum E28; else clamp),
nearest = floor(x + 0.5).

Sample coordinates are plain Python floats (IEEE double), one sample at a time; the
values are DirectML 1.15.4's float32 arithmetic (measured, tests/directml/
test_directml_roi_findings.py): a LINEAR sample lerps ``a + (b - a)·t`` along y first
(both columns), then along x, every operation rounded to float32, the clamped taps
included (so any infinite tap gives NaN); AVERAGE adds the samples into a float32
running sum from 0, rows of samples in order, each row's samples in order
(OutOfBoundsInputValue for a sample out of bounds), and divides it by the sample count
in float32.
"""

from __future__ import annotations

import math

import numpy as np

INPUT_PIXEL_OFFSET = 0.5
OUTPUT_PIXEL_OFFSET = -0.5


def _samples(size: float, out: int, lo: int, hi: int) -> int:
    ratio = abs(size) / out
    if math.isnan(ratio) or math.isinf(ratio):
        return lo
    return min(max(math.ceil(ratio), lo), hi)


F32 = np.float32


def _lerp(a: np.float32, b: np.float32, t: np.float32) -> np.float32:
    """DirectML's ``a + (b - a)·t``, each operation rounded to float32 (no FMA)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return F32(a + F32(F32(b - a) * t))


def _taps(c: float, length: int) -> tuple[int, int, np.float32]:
    """The LINEAR taps and weight of an in-bounds coordinate.

    The coordinate is clamped to ``[0, length - 1]``; in ``(-1, 0)`` both taps are the
    first pixel (DirectML clamps the tap indices ``floor(c)`` and ``floor(c) + 1``, so
    the pixel after the edge is never read), in ``(length - 1, length)`` both the last.
    """
    if c < 0.0:
        return 0, 0, F32(0.0)
    c = min(c, length - 1.0)
    c0 = math.floor(c)
    return c0, min(c0 + 1, length - 1), F32(c - c0)


def _read(plane: np.ndarray, y: float, x: float, linear: bool, oob: float) -> np.float32:
    h, w = plane.shape
    if not (-1.0 < x < w and -1.0 < y < h):  # DirectML: strictly inside (E28); nan compares false
        return F32(oob)
    if not linear:
        x = min(max(x, 0.0), w - 1.0)
        y = min(max(y, 0.0), h - 1.0)
        return F32(plane[math.floor(y + 0.5), math.floor(x + 0.5)])
    x0, x1, tx = _taps(x, w)
    y0, y1, ty = _taps(y, h)
    # y first (each column), then x; clamped taps (x1 == x0) are lerped too: inf gives NaN.
    left = _lerp(F32(plane[y0, x0]), F32(plane[y1, x0]), ty)
    right = _lerp(F32(plane[y0, x1]), F32(plane[y1, x1]), ty)
    return _lerp(left, right, tx)


def roi_align_oracle(
    x: np.ndarray,
    rois: np.ndarray,
    batch_indices: np.ndarray,
    output_size: tuple[int, int],
    *,
    spatial_scale: tuple[float, float] = (1.0, 1.0),
    reduction: str = "AVERAGE",
    mode: str = "LINEAR",
    oob: float = 0.0,
    min_samples: int = 1,
    max_samples: int = 0xFFFFFFFF,
) -> np.ndarray:
    """float64 result of shape (NumROIs, C, OutputHeight, OutputWidth).

    ``spatial_scale`` is ``(x, y)``; the scales and ``oob`` should already be float32
    values (DML FLOAT members), as the desc stores them.
    """
    out_h, out_w = output_size
    rois = np.asarray(rois, dtype=np.float64).reshape(-1, 4)
    batch_indices = np.asarray(batch_indices).reshape(-1)
    n_rois, channels = rois.shape[0], x.shape[1]
    linear = mode == "LINEAR"
    out = np.empty((n_rois, channels, out_h, out_w))
    for r in range(n_rois):
        b = int(batch_indices[r])
        x1, y1, x2, y2 = (float(v) for v in rois[r])
        # scaledRegion = region * SpatialScale
        sx1, sx2 = x1 * spatial_scale[0], x2 * spatial_scale[0]
        sy1, sy2 = y1 * spatial_scale[1], y2 * spatial_scale[1]
        size_x, size_y = sx2 - sx1, sy2 - sy1
        samples_x = _samples(size_x, out_w, min_samples, max_samples)
        samples_y = _samples(size_y, out_h, min_samples, max_samples)
        # outputSampleToInputScale = scaledRegionSize / (OutputSize * samples)
        step_x = size_x / (out_w * samples_x)
        step_y = size_y / (out_h * samples_y)
        for c in range(channels):
            plane = x[b, c]
            for oy in range(out_h):
                for ox in range(out_w):
                    # DirectML's MAX (erratum E29): from the lowest finite value, only a greater sample
                    # replaces; AVERAGE: a float32 running sum from 0
                    acc = F32(np.finfo(x.dtype).min) if reduction == "MAX" else F32(0.0)
                    for jy in range(oy * samples_y, oy * samples_y + samples_y):
                        yin = (jy - OUTPUT_PIXEL_OFFSET) * step_y + sy1 - INPUT_PIXEL_OFFSET
                        for jx in range(ox * samples_x, ox * samples_x + samples_x):
                            xin = (jx - OUTPUT_PIXEL_OFFSET) * step_x + sx1 - INPUT_PIXEL_OFFSET
                            v = _read(plane, yin, xin, linear, oob)
                            if reduction == "MAX":
                                if v > acc:  # False for NaN
                                    acc = v
                            else:
                                with np.errstate(invalid="ignore", over="ignore"):
                                    acc = F32(acc + v)
                    if reduction != "MAX":
                        with np.errstate(invalid="ignore", over="ignore"):
                            acc = F32(acc / F32(samples_x * samples_y))
                    out[r, c, oy, ox] = acc
    return out


def rois_sampling_the_bounds(
    x_shape: tuple[int, ...],
    rois: np.ndarray,
    output_size: tuple[int, int],
    *,
    spatial_scale: tuple[float, float] = (1.0, 1.0),
    min_samples: int = 1,
    max_samples: int = 0xFFFFFFFF,
) -> np.ndarray:
    """Which ROIs have a sample exactly on -1 or on InputWidth / InputHeight.

    There DirectML reads OutOfBoundsInputValue (erratum E28) while ONNX Runtime's CPU
    kernel (``y < -1 || y > height``) still clamps into the image: comparisons with ORT
    leave these ROIs out.
    """
    out_h, out_w = output_size
    h, w = x_shape[2], x_shape[3]
    hit = np.zeros(len(rois), dtype=bool)
    for r, (x1, y1, x2, y2) in enumerate(np.asarray(rois, dtype=np.float64).reshape(-1, 4)):
        for lo, hi, scale, out, length in ((x1, x2, spatial_scale[0], out_w, w), (y1, y2, spatial_scale[1], out_h, h)):
            start, size = lo * scale, (hi - lo) * scale
            samples = _samples(size, out, min_samples, max_samples)
            step = size / (out * samples)
            coords = [(j - OUTPUT_PIXEL_OFFSET) * step + start - INPUT_PIXEL_OFFSET for j in range(out * samples)]
            hit[r] |= any(c in (-1.0, float(length)) for c in coords)
    return hit
