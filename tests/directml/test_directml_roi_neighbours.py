"""ROI neighbours: the NumPy reference of ROI_POOLING and ROI_ALIGN_GRAD against the real DirectML.

Seeded random descs per operator (``CASES``, default 10; the local campaign runs with
``DMLOPS_ROI_NEIGHBOURS_CASES=500``): FLOAT32 (FLOAT16 this stack does not run), strided
(padded) inputs and outputs part of the time, every enum value, optional tensors present and
absent, and adversarial values: NaN, +-inf, +-0 and ties in the data; fractional, negative,
NaN, infinite and out-of-range batch IDs; inverted, empty, huge (int32-overflowing), NaN and
infinite ROI corners; zero, negative, NaN and infinite SpatialScale. ROI_POOLING is compared
bit for bit (a max: no arithmetic), NaN equal to NaN; ROI_ALIGN_GRAD within float32
rounding of its sums (:func:`sum_tolerance`: DirectML adds the contributions in its
shader's order).

Local campaign (DirectML 1.15.4 under Wine + lavapipe): see ``CAMPAIGN``.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from _directml import directml, fail_on_differences, padded_strides, run_on_directml, same_bits  # noqa: F401  (fixture)

import dmlops
from dmlops.descs import desc_from_json
from dmlops.directml import create_operator
from dmlops.errors import DataIndexError, DirectMLRejectedDescError, InvalidDescError

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

CASES = int(os.environ.get("DMLOPS_ROI_NEIGHBOURS_CASES", "10"))

CAMPAIGN = {
    "ROI_POOLING": (3000, 3000),
}
"""Local campaign, ``DMLOPS_ROI_NEIGHBOURS_CASES=3000`` (ROI_POOLING): (cases run, cases agreeing) per operator.
ROI_POOLING: bit for bit on all; its random cases keep scaled corners inside int32 (beyond
it this stack's conversion is not D3D's, :func:`test_roi_pooling_out_of_int32_corners_are_the_stacks`)."""

FLT_MAX = float(np.finfo(np.float32).max)


def _rng(operator: str, seed: int) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"{operator}-{seed}".encode()))


def _tensor(sizes: tuple[int, ...] | list[int], strided: bool = False) -> dict[str, Any]:
    t: dict[str, Any] = {"DataType": "FLOAT32", "Sizes": [int(s) for s in sizes]}
    if strided:
        t["Strides"] = list(padded_strides(tuple(int(s) for s in sizes)))
    return t


def floats(rng: np.random.Generator, shape: tuple[int, ...], *, specials: bool = True) -> np.ndarray:
    """Random float32 data: small integers (ties), normal values of several magnitudes, specials among them."""
    kind = int(rng.integers(0, 3))
    if kind == 0:
        x = rng.integers(-3, 4, shape).astype(np.float32)
    else:
        x = (rng.standard_normal(shape) * rng.choice([1.0, 100.0, 1e-3])).astype(np.float32)
    if specials and kind == 2:
        pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, FLT_MAX, -FLT_MAX, 1e-40], np.float32)
        mask = rng.random(shape) < 0.15
        x[mask] = rng.choice(pool, int(mask.sum()))
    return x


# -- case generators ---------------------------------------------------------------------------


def _pooling_corner(rng: np.random.Generator, length: int, scale: float) -> float:
    """A corner in ROI coordinates: mostly inside the input (halves: ties of the rounding), sometimes huge.

    Huge ones stay inside int32 once scaled: this stack converts a scaled corner beyond it
    (or NaN) to INT_MIN where D3D's ``ftoi`` saturates (NaN: 0), see
    :func:`test_roi_pooling_out_of_int32_corners_are_the_stacks`.
    """
    kind = rng.random()
    usable = scale > 0 and np.isfinite(scale)
    if kind < 0.08 and usable:
        return float(rng.choice([1.1e9, -1.1e9, 2.1e9, -2.1e9, 2.147e9, -2.147e9]) / scale)
    spread = length / scale if usable else float(length)
    value = rng.uniform(-0.3 * spread, 1.3 * spread)
    return float(np.round(value * 2) / 2) if kind < 0.4 else float(value)


def roi_pooling_case(seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Random regions (inverted, empty, outside, huge), batch IDs (fractional, out of range, NaN) and scales."""
    rng = _rng("ROI_POOLING", seed)
    n, c = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    h, w = int(rng.integers(1, 10)), int(rng.integers(1, 10))
    rois = int(rng.integers(1, 6))
    pooled = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
    scale = float(np.float32(rng.choice([1.0, 0.5, 0.25, 0.0625, 2.0, 0.3, rng.uniform(0, 3)])))
    if rng.random() < 0.05:
        scale = float(rng.choice([0.0, -0.0, -1.0, -0.5]))  # (NaN, inf: as corners beyond int32)
    box = np.empty((rois, 5), np.float32)
    for r in range(rois):
        batch = rng.integers(0, n) + (rng.random() if rng.random() < 0.3 else 0.0)
        if rng.random() < 0.1:
            batch = rng.choice([-0.7, -1.0, -5.0, n, n + 0.5, 1e10, np.nan, np.inf, -np.inf])
        box[r] = [batch, *(_pooling_corner(rng, size, scale) for size in (w, h, w, h))]
    y_sizes = (rois, c, *pooled)
    desc = {
        "InputTensor": _tensor((n, c, h, w), bool(rng.integers(0, 2))),
        "ROITensor": _tensor((1, 1, rois, 5), rng.random() < 0.3),
        "OutputTensor": _tensor(y_sizes, rng.random() < 0.3),
        "SpatialScale": scale,
        "PooledSize": {"Height": pooled[0], "Width": pooled[1]},
    }
    return desc, {"InputTensor": floats(rng, (n, c, h, w)), "ROITensor": box.reshape(1, 1, rois, 5)}


GENERATORS: dict[str, Callable[[int], tuple[dict[str, Any], dict[str, np.ndarray]]]] = {
    "ROI_POOLING": roi_pooling_case,
}

EXACT = frozenset(("ROI_POOLING",))
"""Operators compared bit for bit; the others within :func:`sum_tolerance`."""


# -- comparison ----------------------------------------------------------------------------


def sum_tolerance(magnitude: np.ndarray) -> np.ndarray:
    """Float32 rounding of a sum whose terms have absolute sum ``magnitude``, in any order (per element).

    ``n`` float32 additions of ``n + 1`` terms stay within ``n u magnitude``; ``64 u
    magnitude`` covers the sums here (a few dozen terms at most per element).
    """
    return 64 * 2.0**-24 * magnitude


def compare(operator: str, expected: np.ndarray, got: np.ndarray, magnitude: np.ndarray | None) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if operator in EXACT or magnitude is None:
        bad = np.flatnonzero(~same_bits(got, expected))
    else:
        with np.errstate(all="ignore"):
            e, g = expected.astype(np.float64), got.astype(np.float64)
            # A non-finite result (an infinite or NaN term) must match exactly.
            close = np.isfinite(e) & (np.abs(g - e) <= sum_tolerance(magnitude))
        close |= same_bits(got, expected)
        bad = np.flatnonzero(~close)
    fail_on_differences(bad, got, expected)


def check(operator: str, desc_json: dict[str, Any], inputs: dict[str, np.ndarray]) -> None:
    desc = desc_from_json(operator, desc_json)
    try:
        desc.validate()
    except InvalidDescError:
        # dmlops rejects it: DirectML's CreateOperator must reject it too (validation parity)
        with pytest.raises(DirectMLRejectedDescError):
            create_operator(desc)
        return
    try:
        expected = dmlops.execute(desc, inputs, backend="numpy")
    except DataIndexError as exc:
        pytest.skip(f"refused by the reference (undefined in DirectML): {exc}")
    got = run_on_directml(desc, inputs)
    scale = MAGNITUDES[operator](desc, inputs) if operator in MAGNITUDES else {}
    for member, array in expected.items():
        compare(operator, array, got[member], scale.get(member))


MAGNITUDES: dict[str, Callable[[Any, dict[str, np.ndarray]], dict[str, np.ndarray]]] = {}
"""Per inexact operator: the absolute sum of the terms of every output element."""


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("operator", sorted(GENERATORS))
def test_matches_directml(operator: str, seed: int) -> None:
    desc, inputs = GENERATORS[operator](seed)
    check(operator, desc, inputs)


# -- the findings, one desc each ------------------------------------------------------------------


def _pool(x: np.ndarray, rois: list[list[float]], pooled: tuple[int, int], scale: float = 1.0) -> tuple[Any, Any]:
    """(numpy, directml) outputs of ROI_POOLING."""
    box = np.array(rois, np.float32).reshape(1, 1, -1, 5)
    desc = desc_from_json(
        "ROI_POOLING",
        {
            "InputTensor": _tensor(x.shape),
            "ROITensor": _tensor(box.shape),
            "OutputTensor": _tensor((box.shape[2], x.shape[1], *pooled)),
            "SpatialScale": scale,
            "PooledSize": {"Height": pooled[0], "Width": pooled[1]},
        },
    )
    inputs = {"InputTensor": x, "ROITensor": box}
    return dmlops.execute(desc, inputs, backend="numpy")["OutputTensor"], run_on_directml(desc, inputs)["OutputTensor"]


RAMP = np.arange(48, dtype=np.float32).reshape(1, 1, 6, 8)


def test_roi_pooling_rounds_corners_half_to_even() -> None:
    """E190: 0.5, 1.5, 2.5, 3.5 round to 0, 2, 2, 4 (the single pixel of a one-point region)."""
    rois = [[0, v, 0, v, 0] for v in (0.5, 1.5, 2.5, 3.5)]
    ours, theirs = _pool(RAMP, rois, (1, 1))
    np.testing.assert_array_equal(theirs.reshape(-1), [0, 2, 2, 4])
    np.testing.assert_array_equal(ours, theirs)


def test_roi_pooling_inverted_region_is_its_first_pixel() -> None:
    """E190: x2 < x1 and y2 < y1 make a 1x1 region at (x1, y1), not an empty one."""
    ours, theirs = _pool(RAMP, [[0, 5, 4, 2, 1]], (2, 3))
    np.testing.assert_array_equal(theirs, np.full((1, 1, 2, 3), 37, np.float32))
    np.testing.assert_array_equal(ours, theirs)


def test_roi_pooling_int32_arithmetic_wraps() -> None:
    """E190: a region of 2e9 + 1 pixels overflows the bin bounds (int32): every bin is empty."""
    ours, theirs = _pool(RAMP, [[0, -1e9, 0, 1e9, 0]], (1, 7))
    np.testing.assert_array_equal(theirs, np.zeros((1, 1, 1, 7), np.float32))
    np.testing.assert_array_equal(ours, theirs)


def test_roi_pooling_batch_ids_truncate_and_clamp() -> None:
    """E191: 1.7 -> 1, -0.7 and -5 -> 0, 7 and +inf -> the last batch, NaN -> 0."""
    x = np.stack([RAMP[0], RAMP[0] + 100])
    ids = [0.99, 1.7, -0.7, -5, 7, np.inf, np.nan]
    ours, theirs = _pool(x, [[b, 1, 1, 1, 1] for b in ids], (1, 1))
    np.testing.assert_array_equal(theirs.reshape(-1), [9, 109, 9, 9, 109, 109, 9])
    np.testing.assert_array_equal(ours, theirs)


def test_roi_pooling_max_ignores_nan_and_empty_bins_are_zero() -> None:
    """E192: NaN never wins, -inf gives -FLT_MAX; a bin outside the input is 0."""
    x = RAMP.copy()
    x[0, 0, 0, :3] = [np.nan, -np.inf, 5]
    rois = [[0, 0, 0, 0, 0], [0, 1, 0, 1, 0], [0, 0, 0, 2, 0], [0, 20, 20, 30, 30]]
    ours, theirs = _pool(x, rois, (1, 1))
    np.testing.assert_array_equal(theirs.reshape(-1), [-FLT_MAX, -FLT_MAX, 5, 0])
    np.testing.assert_array_equal(ours, theirs)


def test_roi_pooling_keeps_the_first_of_tied_zeros() -> None:
    """E192: of -0 and +0 the first in row-major order is the result (rows first, then columns)."""
    x = np.array([[-1, -0.0], [0.0, -1]], np.float32).reshape(1, 1, 2, 2)
    ours, theirs = _pool(x, [[0, 0, 0, 1, 1], [0, 0, 1, 1, 1]], (1, 1))
    np.testing.assert_array_equal(np.signbit(theirs.reshape(-1)), [True, False])
    assert same_bits(ours, theirs).all()


@pytest.mark.parametrize(
    ("corner", "pooled", "stack", "d3d"),
    [
        (np.inf, 2, [2, 2], [8, 0]),
        (1e10, 2, [2, 2], [8, 0]),
        (np.nan, 4, [8, 0, 0, 0], [3, 3, 3, 3]),
    ],
)
def test_roi_pooling_out_of_int32_corners_are_the_stacks(
    corner: float, pooled: int, stack: list[float], d3d: list[float]
) -> None:
    """A scaled corner beyond int32 (or NaN): this stack converts it to INT_MIN; D3D's ``ftoi`` saturates (NaN: 0).

    ROI x from 1 (2 for NaN) to ``corner`` on ``RAMP + 1``: x2 = INT_MIN makes the region 1
    pixel wide (2 - INT_MIN wraps negative; for x1 = 2 it is INT_MAX wide, wrapped, and the
    first of 4 bins reaches past the input); D3D's x2 = INT_MAX makes it INT_MAX pixels wide
    (x2 = 0 for NaN: 1 pixel). The reference follows D3D, the random cases keep scaled
    corners inside int32; this test pins what lavapipe does.
    """
    first = 2 if np.isnan(corner) else 1
    ours, theirs = _pool(RAMP + 1, [[0, first, 0, corner, 0]], (1, pooled))
    np.testing.assert_array_equal(theirs.reshape(-1), stack)
    np.testing.assert_array_equal(ours.reshape(-1), d3d)
