"""ROI_POOLING and ROI_ALIGN_GRAD against independent oracles.

Slow scalar-loop oracles written from the pages (one output element at a time), with the
rules DirectML 1.15.4 adds (errata E190-E192, measured in
tests/directml/test_directml_roi_neighbours.py), and ONNX Runtime's MaxRoiPool where it
computes the same thing (``@pytest.mark.oracles``: no ties in the rounding, batch IDs in
range). ROI_POOLING's page has no worked example: its vectors (tests/vectors/roi_pooling)
are derivations from the page's formulas, checked against DirectML.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops.descs import desc_class, desc_from_json
from dmlops.errors import InvalidDescError
from dmlops.ops import roi as O

F32 = np.float32
FLT_MAX = float(np.finfo(F32).max)


def test_family_claims() -> None:
    cls = desc_class("ROI_POOLING")
    assert cls.family == "roi"
    assert cls.backends == ("numpy", "directml")


# -- ROI_POOLING ---------------------------------------------------------------------------------


def _round_half_even(v: float) -> int:
    """The page's ``round``, as DirectML rounds (E190): halves to even (Python's ``round``)."""
    return round(v)


def roi_pooling_oracle(x: np.ndarray, rois: np.ndarray, pooled: tuple[int, int], scale: float) -> np.ndarray:
    """Scalar loop from the page's formulas, plus DirectML's rules (E190-E192).

    The page: corners ``round(coordinate * SpatialScale)``, ``RegionHeight = y2 - y1 + 1``,
    ``StartY = (ph * RegionHeight) / PooledHeight + y1``, ``EndY = ((ph + 1) * RegionHeight
    + PooledHeight - 1) / PooledHeight + y1`` (integer division), clamped to the input.
    DirectML: a region of fewer than 1 pixel counts as 1 (E190), the batch ID truncates
    and clamps (E191), a running max from -FLT_MAX replaced by strictly greater values,
    rows then columns, and 0 for an empty bin (E192). Only for corners whose scaled values
    fit int32 comfortably (no wrap-around here).
    """
    n, c, h, w = x.shape
    ph_count, pw_count = pooled
    out = np.zeros((len(rois), c, ph_count, pw_count), F32)
    for r, (batch_id, *corners) in enumerate(rois):
        b = min(max(int(batch_id) if math.isfinite(batch_id) else 0, 0), n - 1)
        x1, y1, x2, y2 = (_round_half_even(float(F32(v) * F32(scale))) for v in corners)
        region_h, region_w = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for ch in range(c):
            for ph in range(ph_count):
                y0 = min(max(ph * region_h // ph_count + y1, 0), h)
                y9 = min(max(((ph + 1) * region_h + ph_count - 1) // ph_count + y1, 0), h)
                for pw in range(pw_count):
                    x0 = min(max(pw * region_w // pw_count + x1, 0), w)
                    x9 = min(max(((pw + 1) * region_w + pw_count - 1) // pw_count + x1, 0), w)
                    if y9 <= y0 or x9 <= x0:
                        continue  # empty bin: 0
                    best = F32(-FLT_MAX)
                    for yy in range(y0, y9):
                        for xx in range(x0, x9):
                            if x[b, ch, yy, xx] > best:
                                best = x[b, ch, yy, xx]
                    out[r, ch, ph, pw] = best
    return out


def _random_pooling(seed: int) -> tuple[np.ndarray, np.ndarray, tuple[int, int], float]:
    rng = np.random.default_rng(seed)
    n, c, h, w = (int(v) for v in rng.integers(1, [3, 3, 9, 9], endpoint=True))
    x = rng.integers(-3, 4, (n, c, h, w)).astype(F32)  # ties
    if seed % 3 == 0:
        x[rng.random(x.shape) < 0.2] = np.nan
        x[rng.random(x.shape) < 0.1] = -np.inf
        x[rng.random(x.shape) < 0.1] = -0.0
    count = int(rng.integers(1, 5))
    scale = float(F32(rng.choice([1.0, 0.5, 0.25, 2.0, 0.3])))
    rois = np.empty((count, 5), F32)
    rois[:, 0] = rng.uniform(-1, n + 1, count)
    rois[:, 1:] = rng.uniform(-3, 12, (count, 4)) / scale
    rois[::2, 1:] = np.round(rois[::2, 1:] * 2) / 2  # halves: ties of the rounding
    pooled = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    return x, rois, pooled, scale


@pytest.mark.parametrize("seed", range(40))
def test_roi_pooling_matches_the_loop_oracle(seed: int) -> None:
    x, rois, pooled, scale = _random_pooling(seed)
    got = O.roi_pooling(x, rois, pooled, spatial_scale=scale, backend="numpy")
    want = roi_pooling_oracle(x, rois, pooled, scale)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want)).all()


def _ort_max_roi_pool(x: np.ndarray, rois: np.ndarray, pooled: tuple[int, int], scale: float) -> np.ndarray:
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    node = helper.make_node("MaxRoiPool", ["X", "rois"], ["Y"], pooled_shape=list(pooled), spatial_scale=scale)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape)),
            helper.make_tensor_value_info("rois", TensorProto.FLOAT, list(rois.shape)),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    del onnx
    return session.run(None, {"X": x, "rois": rois})[0]


@pytest.mark.oracles
@pytest.mark.parametrize("seed", range(20))
def test_roi_pooling_matches_onnx_runtime(seed: int) -> None:
    """ONNX Runtime's MaxRoiPool (Caffe's float bins) where it is DirectML's: no halves, integer batch IDs in range."""
    rng = np.random.default_rng(100 + seed)
    n, c, h, w = 2, 3, int(rng.integers(3, 10)), int(rng.integers(3, 10))
    x = rng.standard_normal((n, c, h, w)).astype(F32)
    count, scale = 4, float(F32(rng.choice([1.0, 0.5, 0.25])))
    rois = np.empty((count, 5), F32)
    rois[:, 0] = rng.integers(0, n, count)
    rois[:, 1:] = (rng.integers(-2, 12, (count, 4)) + 0.25) / scale  # quarter pixels: no ties
    pooled = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    got = O.roi_pooling(x, rois, pooled, spatial_scale=scale, backend="numpy")
    np.testing.assert_array_equal(got, _ort_max_roi_pool(x, rois, pooled, scale))


def test_roi_pooling_worked_by_hand() -> None:
    """A 4x6 ramp, the ROI (x 1..4, y 0..3) in 2x3 bins: rows [0, 2) and [2, 4); columns [1, 3), [2, 4), [3, 5)."""
    x = np.arange(24, dtype=F32).reshape(1, 1, 4, 6)
    got = O.roi_pooling(x, [[0, 1, 0, 4, 3]], (2, 3))
    np.testing.assert_array_equal(got[0, 0], [[8, 9, 10], [20, 21, 22]])


def test_roi_pooling_rules() -> None:
    """E190-E192 on the numpy backend: halves to even, an inverted region, clamped batch IDs, NaN and empty bins."""
    x = np.arange(48, dtype=F32).reshape(1, 1, 6, 8)
    two = np.concatenate([x, x + 100])
    np.testing.assert_array_equal(O.roi_pooling(x, [[0, v, 0, v, 0] for v in (0.5, 1.5, 2.5)], 1).ravel(), [0, 2, 2])
    np.testing.assert_array_equal(O.roi_pooling(x, [[0, 5, 4, 2, 1]], (2, 2)).ravel(), [37] * 4)
    ids = [1.7, -0.7, 7, np.inf, np.nan]
    np.testing.assert_array_equal(O.roi_pooling(two, [[b, 1, 1, 1, 1] for b in ids], 1).ravel(), [109, 9, 109, 109, 9])
    y = x.copy()
    y[0, 0, 0, :3] = [np.nan, -np.inf, -0.0]
    got = O.roi_pooling(y, [[0, 0, 0, 1, 0], [0, 1, 0, 2, 0], [0, 20, 20, 30, 30]], 1).ravel()
    np.testing.assert_array_equal(got, [-FLT_MAX, 0, 0])
    assert np.signbit(got[1]) and not np.signbit(got[2])


def test_roi_pooling_huge_regions_wrap_as_int32() -> None:
    """E190: 2e9 + 1 pixels in 7 bins overflow the unsigned 32-bit products: every bin empty."""
    x = np.arange(48, dtype=F32).reshape(1, 1, 6, 8)
    assert not O.roi_pooling(x, [[0, -1e9, 0, 1e9, 0]], (1, 7)).any()


def test_roi_pooling_strided_input_and_float16() -> None:
    x = np.arange(2 * 3 * 5 * 7, dtype=F32).reshape(2, 3, 5, 7)
    rois = np.array([[1, 0, 1, 5, 4], [0, 2, 0, 6, 2]], F32)
    want = roi_pooling_oracle(x, rois, (2, 3), 1.0)
    np.testing.assert_array_equal(O.roi_pooling(np.asfortranarray(x), rois, (2, 3)), want)
    half = O.roi_pooling(x.astype(np.float16), rois.astype(np.float16), (2, 3))
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half, want.astype(np.float16))


def test_roi_pooling_float16_max_starts_at_its_lowest() -> None:
    x = np.full((1, 1, 2, 2), -np.inf, np.float16)
    assert O.roi_pooling(x, [[0, 0, 0, 1, 1]], 1).item() == -65504.0


def test_roi_pooling_rejects_a_bad_desc() -> None:
    desc: dict[str, Any] = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 4, 4]},
        "ROITensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 4]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 1, 1, 1]},
        "SpatialScale": 1.0,
        "PooledSize": {"Height": 1, "Width": 1},
    }
    with pytest.raises(InvalidDescError, match="ROITensor"):
        dmlops.execute(desc_from_json("ROI_POOLING", desc), {}, backend="numpy")


def test_roi_pooling_api_out_and_4d_rois() -> None:
    x = np.arange(16, dtype=F32).reshape(1, 1, 4, 4)
    out = np.empty((1, 1, 2, 2), F32)
    result = O.roi_pooling(x, np.array([[[[0, 0, 0, 3, 3]]]], F32), [2, 2], out=out)
    np.testing.assert_array_equal(out.reshape(-1), [5, 7, 13, 15])
    assert result is out or np.shares_memory(result, out) or np.array_equal(result, out)
