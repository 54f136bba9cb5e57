"""ROI_ALIGN's arithmetic on DirectML 1.15.4 (erratum E38), probed with single samples and small grids.

A zero-size ROI ``[t + 0.5, u + 0.5, t + 0.5, u + 0.5]`` with one sample per output places one
sample at exactly ``(x, y) = (t, u)``; a ROI ``[t, u, t + n, u + m]`` with one output and
adaptive sampling places ``m x n`` samples at ``(t + i, u + j)``. With coordinates exact in
float32 the float64 sample coordinates of dmlops are DirectML's, so every probe compares
bit for bit. dmlops follows what they show on every backend: these are plain tests.
"""

from __future__ import annotations

import numpy as np
import pytest
from _directml import directml  # noqa: F401  (fixture)

import dmlops

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

F32 = np.float32


def _samples(image, t, u, backend, **kw):
    """One sample per ROI at (x, y) = (t[i], u[i])."""
    image = np.asarray(image, F32)
    t, u = np.atleast_1d(np.asarray(t, F32)), np.atleast_1d(np.asarray(u, F32))
    roi = np.stack([t + F32(0.5), u + F32(0.5), t + F32(0.5), u + F32(0.5)], 1).astype(F32)
    with np.errstate(all="ignore"):
        return dmlops.roi_align(
            image.reshape(1, 1, *image.shape), roi, np.zeros(len(t), np.uint32), 1,
            minimum_samples_per_output=1, maximum_samples_per_output=1, backend=backend, **kw,
        )[:, 0, 0, 0]  # fmt: skip


def _same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))


def _lerp(a, b, t):
    with np.errstate(all="ignore"):
        return a + (b - a) * t


@pytest.mark.parametrize("scale", [1.0, 1e30, "FLT_MAX"])
def test_linear_lerps_along_y_then_x_in_float32(scale) -> None:
    # 2000 samples of a 4x4 image at random multiples of 1/256: DirectML equals float32
    # a + (b - a)·t along y (both columns), then x, every one (x first matches 661-956 of
    # 2000, (1 - t)·a + t·b 15-1157, an FMA lerp 801-1968, depending on the magnitudes).
    rng = np.random.default_rng(0)
    if scale == "FLT_MAX":
        img = (rng.choice([-1, 1], (4, 4)) * rng.uniform(1e38, 3.4e38, (4, 4))).astype(F32)
    else:
        img = (rng.standard_normal((4, 4)) * rng.choice([1.0, scale], (4, 4))).astype(F32)
    t = (rng.integers(0, 3 * 256, 2000) / 256).astype(F32)
    u = (rng.integers(0, 3 * 256, 2000) / 256).astype(F32)
    got = _samples(img, t, u, "directml")
    x0, y0 = np.floor(t).astype(int), np.floor(u).astype(int)
    tx, ty = (t - x0).astype(F32), (u - y0).astype(F32)
    want = _lerp(_lerp(img[y0, x0], img[y0 + 1, x0], ty), _lerp(img[y0, x0 + 1], img[y0 + 1, x0 + 1], ty), tx)
    assert _same(got, want).all()
    assert _same(_samples(img, t, u, "numpy"), got).all()


def test_linear_infinite_taps_give_nan() -> None:
    # Every tap is lerped, the clamped ones too: an inf or nan tap gives nan even at weight 0
    # ([1, inf] at t = 0), and a 1-row image lerps each column with itself along y
    # (inf + (inf - inf)·0 = nan, so [1, inf] at t = 0.5 is nan, not inf as RESAMPLE2's).
    inf, nan = np.inf, np.nan
    cases = [
        ([[1, inf]], 0.0, 0.0), ([[1, inf]], 0.5, 0.0), ([[inf, 1]], 0.5, 0.0), ([[1, inf, 2]], 0.0, 0.0),
        ([[1, 2, inf]], 2.0, 0.0), ([[1, 2, inf]], 2.5, 0.0), ([[inf]], 0.25, 0.25), ([[1], [inf]], 0.0, 0.0),
        ([[1, 2], [inf, 3]], 0.5, 0.0), ([[1, inf], [2, 3]], 0.0, 0.5), ([[1, nan]], 0.0, 0.0),
    ]  # fmt: skip
    for image, t, u in cases:
        for backend in ("directml", "numpy"):
            assert np.isnan(_samples(image, t, u, backend)[0]), (image, t, u, backend)
    # no inf tap: [1, inf, 2] at x = 2 reads only the 2
    for backend in ("directml", "numpy"):
        assert _samples([[1, inf, 2]], 2.0, 0.0, backend)[0] == 2.0


def test_linear_coordinates_below_zero_read_only_the_first_pixel() -> None:
    # In (-1, 0) both taps are pixel 0 (DirectML clamps floor(x) and floor(x) + 1): the pixel
    # after it is not read, so an inf there does not make nan, and 3e38 next to -3e38 does not
    # overflow (found in the campaign: a MAX over such samples gave 9.2e37, not -FLT_MAX).
    inf = np.inf
    for image, t, u, want in [
        ([[1, inf, 3]], -0.5, 0.0, 1.0), ([[1, inf, 3]], -0.01, 0.0, 1.0), ([[1, inf, 3]], -0.99, 0.0, 1.0),
        ([[1], [inf]], 0.0, -0.5, 1.0), ([[3e38, -3e38]], -0.5, 0.0, F32(3e38)),
    ]:  # fmt: skip
        for backend in ("directml", "numpy"):
            assert _samples(image, t, u, backend)[0] == want, (image, t, u, backend)


def test_average_is_a_float32_running_sum_in_sample_order() -> None:
    # 400 outputs of 1..5 x 1..5 samples, partly out of bounds: DirectML adds the samples into a
    # float32 sum from +0, sample rows in order and each row in order, then divides by the
    # count (400 of 400 in each of 4 runs; x-major order 276-333, a multiplication by the
    # float32 reciprocal 311-331, pairwise 256-278, a float64 sum 213-256).
    rng = np.random.default_rng(1)
    h = w = 10
    img = (rng.standard_normal((h, w)) * rng.choice([1.0, 1e3, 1e-3], (h, w))).astype(F32)
    for trial in range(40):
        n, m = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        t = F32(rng.integers(-6 * 64, w * 64) / 64)
        u = F32(rng.integers(-6 * 64, h * 64) / 64)
        roi = np.array([[t, u, t + n, u + m]], F32)
        kw = dict(out_of_bounds_input_value=float(F32(rng.standard_normal() * 10)))
        got = dmlops.roi_align(img.reshape(1, 1, h, w), roi, [0], 1, backend="directml", **kw)
        want = dmlops.roi_align(img.reshape(1, 1, h, w), roi, [0], 1, backend="numpy", **kw)
        assert _same(got, want).all(), (trial, roi)


def test_average_adds_out_of_bounds_samples_one_by_one() -> None:
    # No shortcut for samples out of bounds, also when every sample is: two samples of
    # OutOfBoundsInputValue 3e38 give inf, 7 of 0.1 give 0.10000001 (the float32 sum / 7).
    img = np.ones((1, 1, 2, 2), F32)
    for oob, n, want in [(3e38, 2, np.inf), (1e38, 4, np.inf), (0.1, 3, F32(0.1)), (0.1, 7, F32(0.10000001))]:
        for backend in ("directml", "numpy"):
            with np.errstate(all="ignore"):
                got = dmlops.roi_align(
                    img, np.array([[10, 10, 10 + n, 11]], F32), [0], 1, out_of_bounds_input_value=oob, backend=backend
                )
            assert got[0, 0, 0, 0] == want, (oob, n, backend)
    # a sum of -0 samples is +0 (the sum starts at +0); a MAX of one NEAREST -0 sample is -0,
    # of one LINEAR -0 sample +0 (-0 + (-0 - -0)·t)
    zeros = np.full((1, 2), -0.0, F32)
    for backend in ("directml", "numpy"):
        assert not np.signbit(_samples(zeros, 0.25, 0.0, backend)[0])
        assert not np.signbit(_samples(zeros, 0.25, 0.0, backend, reduction_function="MAX")[0])
        nearest = _samples(zeros, 0.25, 0.0, backend, reduction_function="MAX", interpolation_mode="NEAREST_NEIGHBOR")
        assert np.signbit(nearest[0])


def test_max_ignores_nan_samples() -> None:
    # MAX (erratum E29) from -FLT_MAX: a LINEAR sample made nan by an inf tap is skipped.
    inf = np.inf
    lowest = np.finfo(F32).min
    for image, mode, want in [
        ([[inf, 1]], "LINEAR", lowest), ([[np.nan, 1]], "LINEAR", lowest), ([[-inf, 1]], "LINEAR", lowest),
        ([[inf, 1]], "NEAREST_NEIGHBOR", inf), ([[np.nan, 1]], "NEAREST_NEIGHBOR", lowest),
    ]:  # fmt: skip
        for backend in ("directml", "numpy"):
            got = _samples(image, 0.0, 0.0, backend, reduction_function="MAX", interpolation_mode=mode)[0]
            assert got == want, (image, mode, backend)
