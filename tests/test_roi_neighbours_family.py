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
from conftest import backend_params, to_numpy
from dmlops.descs import desc_class, desc_from_json
from dmlops.errors import DataIndexError, InvalidDescError
from dmlops.ops import roi as O

F32 = np.float32
FLT_MAX = float(np.finfo(F32).max)


BACKENDS = ("numpy", "cpu", "cuda")
"""The backends every test of this module runs on (cuda cases skip without a GPU)."""


@pytest.mark.parametrize("name", ["ROI_POOLING", "ROI_ALIGN1", "ROI_ALIGN_GRAD"])
def test_family_claims(name: str) -> None:
    cls = desc_class(name)
    assert cls.family == "roi"
    assert cls.backends == ("numpy", "cpu", "cuda", "directml")


def _on(backend: str, base: np.ndarray, view: Any = None) -> Any:
    """``view(base)`` with ``base`` on the backend's device (CuPy for cuda), so strided views reach its kernels."""
    if backend == "cuda":
        base = pytest.importorskip("cupy").asarray(base)
    return view(base) if view is not None else base


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


@pytest.mark.parametrize("backend", backend_params(*BACKENDS), indirect=True)
@pytest.mark.parametrize("seed", range(40))
def test_roi_pooling_matches_the_loop_oracle(backend: str, seed: int) -> None:
    """Bit for bit (no arithmetic on the values; NaN never wins, so the outputs hold no NaN)."""
    x, rois, pooled, scale = _random_pooling(seed)
    got = to_numpy(O.roi_pooling(x, rois, pooled, spatial_scale=scale, backend=backend))
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


@pytest.mark.parametrize("backend", backend_params(*BACKENDS), indirect=True)
def test_roi_pooling_rules(backend: str) -> None:
    """E190-E192: halves to even, an inverted region, clamped batch IDs (hostile ones too), NaN and empty bins."""

    def pool(x: np.ndarray, rois: Any, pooled: Any) -> np.ndarray:
        return to_numpy(O.roi_pooling(x, np.asarray(rois, F32), pooled, backend=backend)).ravel()

    x = np.arange(48, dtype=F32).reshape(1, 1, 6, 8)
    two = np.concatenate([x, x + 100])
    np.testing.assert_array_equal(pool(x, [[0, v, 0, v, 0] for v in (0.5, 1.5, 2.5)], 1), [0, 2, 2])
    np.testing.assert_array_equal(pool(x, [[0, 5, 4, 2, 1]], (2, 2)), [37] * 4)
    ids = [1.7, -0.7, 7, np.inf, np.nan, -np.inf, 3e9, -3e9]
    np.testing.assert_array_equal(pool(two, [[b, 1, 1, 1, 1] for b in ids], 1), [109, 9, 109, 109, 9, 9, 109, 9])
    y = x.copy()
    y[0, 0, 0, :3] = [np.nan, -np.inf, -0.0]
    got = pool(y, [[0, 0, 0, 1, 0], [0, 1, 0, 2, 0], [0, 20, 20, 30, 30]], 1)
    np.testing.assert_array_equal(got, [-FLT_MAX, 0, 0])
    assert np.signbit(got[1]) and not np.signbit(got[2])


@pytest.mark.parametrize("backend", backend_params(*BACKENDS), indirect=True)
def test_roi_pooling_huge_regions_wrap_as_int32(backend: str) -> None:
    """E190: 2e9 + 1 pixels in 7 bins overflow the unsigned 32-bit products: every bin empty; corners past int32 saturate."""
    x = np.arange(48, dtype=F32).reshape(1, 1, 6, 8)
    assert not to_numpy(O.roi_pooling(x, [[0, -1e9, 0, 1e9, 0]], (1, 7), backend=backend)).any()
    rois = np.array([[0, -1e10, -1e10, 1e10, 1e10], [0, np.nan, 1, 1e30, 2]], F32)
    got = to_numpy(O.roi_pooling(x, rois, (2, 3), backend=backend))
    np.testing.assert_array_equal(got, O.roi_pooling(x, rois, (2, 3), backend="numpy"))


@pytest.mark.parametrize("backend", backend_params(*BACKENDS), indirect=True)
def test_roi_pooling_strided_input_and_float16(backend: str) -> None:
    x = np.arange(2 * 3 * 5 * 7, dtype=F32).reshape(2, 3, 5, 7)
    rois = np.array([[1, 0, 1, 5, 4], [0, 2, 0, 6, 2]], F32)
    want = roi_pooling_oracle(x, rois, (2, 3), 1.0)
    got = O.roi_pooling(np.asfortranarray(x), rois, (2, 3), backend=backend)
    np.testing.assert_array_equal(to_numpy(got), want)
    # a transposed (channels-last) view and a strided output, on the backend's device
    nhwc = _on(backend, np.ascontiguousarray(x.transpose(0, 2, 3, 1)), lambda a: a.transpose(0, 3, 1, 2))
    out = _on(backend, np.zeros((2, 3, 2, 6), F32), lambda a: a[..., ::2])
    O.roi_pooling(nhwc, rois, (2, 3), backend=backend, out=out)
    np.testing.assert_array_equal(to_numpy(out), want)
    half = to_numpy(O.roi_pooling(x.astype(np.float16), rois.astype(np.float16), (2, 3), backend=backend))
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half, want.astype(np.float16))


@pytest.mark.parametrize("backend", backend_params(*BACKENDS), indirect=True)
def test_roi_pooling_float16_max_starts_at_its_lowest(backend: str) -> None:
    x = np.full((1, 1, 2, 2), -np.inf, np.float16)
    assert to_numpy(O.roi_pooling(x, [[0, 0, 0, 1, 1]], 1, backend=backend)).item() == -65504.0


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


# -- ROI_ALIGN_GRAD ------------------------------------------------------------------------------


def _sample_coordinates(first: float, last: float, outputs: int, samples: int, ipo: float, opo: float, corners: bool):
    """ROI_ALIGN1's sample coordinates along one axis, from its page (scaled corners given)."""
    count = outputs * samples
    if corners:
        if count == 1:
            return [first + (last - first) / 2 - ipo]
        return [(k - opo) * (last - first) / (count - 1) + first - ipo for k in range(count)]
    return [(k - opo) * (last - first) / count + first - ipo for k in range(count)]


def _taps(c: float, length: int, corners: bool, nearest: bool) -> tuple[int, int, float] | None:
    """(first, second, weight) of a coordinate, None out of bounds (the forward's rules, errata E24, E28)."""
    inside = 0 <= c <= length - 1 if corners else -1 < c < length
    if not inside:
        return None
    cc = min(max(c, 0.0), length - 1.0)
    if nearest:
        t = math.floor(cc + 0.5)
        return t, t, 0.0
    lo = math.floor(cc)
    hi = lo if c < 0 else min(lo + 1, length - 1)
    return lo, hi, cc - lo


def roi_align_grad_oracle(
    x: np.ndarray | None, dy: np.ndarray, rois: np.ndarray, batch: np.ndarray, shape: tuple[int, ...], **p: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Scalar loop: every sample of ROI_ALIGN1's forward (its page), its share of the output's gradient to its taps.

    The ROI gradient: the page's pseudo-code with DirectML's factors (E194) and MAX's pick (E195).
    """
    _, c, h, w = shape
    dx, droi = np.zeros(shape), np.zeros((len(rois), 4))
    for r, (x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        x1, x2, y1, y2 = x1 * p["sx"], x2 * p["sx"], y1 * p["sy"], y2 * p["sy"]
        oh, ow = dy.shape[2:]
        sy = min(max(math.ceil(abs(y2 - y1) / oh), p["lo"]), p["hi"])
        sx = min(max(math.ceil(abs(x2 - x1) / ow), p["lo"]), p["hi"])
        ys = _sample_coordinates(y1, y2, oh, sy, p["ipo"], p["opo"], p["corners"])
        xs = _sample_coordinates(x1, x2, ow, sx, p["ipo"], p["opo"], p["corners"])
        b = int(batch[r])
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    cells = [(a, e) for a in range(i * sy, (i + 1) * sy) for e in range(j * sx, (j + 1) * sx)]
                    if p["max"]:
                        best, pick = -FLT_MAX, None
                        for a, e in cells:  # row-major; out of bounds competes as 0 (E195)
                            ty, tx = (
                                _taps(ys[a], h, p["corners"], p["nearest"]),
                                _taps(xs[e], w, p["corners"], p["nearest"]),
                            )
                            v = 0.0
                            if ty and tx:
                                rows = (1 - ty[2]) * x[b, ch, ty[0]] + ty[2] * x[b, ch, ty[1]]
                                v = (1 - tx[2]) * rows[tx[0]] + tx[2] * rows[tx[1]]
                            if v > best:
                                best, pick = v, (a, e)
                        cells = [pick] if pick else []
                        share = float(dy[r, ch, i, j])
                    else:
                        share = float(dy[r, ch, i, j]) / (sy * sx)
                    for a, e in cells:
                        ty, tx = (
                            _taps(ys[a], h, p["corners"], p["nearest"]),
                            _taps(xs[e], w, p["corners"], p["nearest"]),
                        )
                        if not (ty and tx):
                            continue
                        for yy, wy in ((ty[0], 1 - ty[2]), (ty[1], ty[2])):
                            for xx, wx in ((tx[0], 1 - tx[2]), (tx[1], tx[2])):
                                dx[b, ch, yy, xx] += share * wy * wx
                        if x is None:
                            continue
                        ly, lx = _taps(ys[a], h, p["corners"], False), _taps(xs[e], w, p["corners"], False)
                        tl, tr = x[b, ch, ly[0], lx[0]], x[b, ch, ly[0], lx[1]]
                        bl, br = x[b, ch, ly[1], lx[0]], x[b, ch, ly[1], lx[1]]
                        gx = share * ((1 - ly[2]) * (tr - tl) + ly[2] * (br - bl))
                        gy = share * ((1 - lx[2]) * (bl - tl) + lx[2] * (br - tr))
                        span_x, steps_x = (w - 1, ow * sx - 1) if p["corners"] else (w, ow * sx)
                        span_y, steps_y = (h - 1, oh * sy - 1) if p["corners"] else (h, oh * sy)
                        fx = j * span_x / steps_x if steps_x else span_x / 2
                        fy = i * span_y / steps_y if steps_y else span_y / 2
                        droi[r] += [gx * (span_x - fx), gy * (span_y - fy), gx * fx, gy * fy]
    return dx, droi


def _grad_case(seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    rng = np.random.default_rng(seed)
    shape = (2, 2, int(rng.integers(2, 7)), int(rng.integers(2, 7)))
    rois, oh, ow = 3, int(rng.integers(1, 4)), int(rng.integers(1, 4))
    p = {
        "sx": float(F32(rng.choice([1.0, 0.5, 1.7]))),
        "sy": float(F32(rng.choice([1.0, 0.5, 1.3]))),
        "ipo": float(F32(rng.choice([0.5, 0.0, 0.3]))),
        "opo": float(F32(rng.choice([-0.5, 0.0, 0.2]))),
        "lo": 1,
        "hi": int(rng.choice([1, 2, 3, 0xFFFFFFFF])),
        "corners": bool(seed % 4 == 3),
        "nearest": bool(seed % 3 == 2),
        "max": bool(seed % 2),
    }
    data = {
        "x": rng.integers(-3, 4, shape).astype(F32) if seed % 5 == 0 else rng.standard_normal(shape).astype(F32),
        "dy": rng.standard_normal((rois, shape[1], oh, ow)).astype(F32),
        "rois": (rng.uniform(-1.5, [shape[3] + 1.5, shape[2] + 1.5] * 2, (rois, 4)) / ([p["sx"], p["sy"]] * 2)),
        "batch": rng.integers(0, 2, rois).astype(np.uint32),
    }
    data["rois"] = data["rois"].astype(F32)
    return p, data


def _grad_api(p: dict[str, Any], d: dict[str, Any], **kw: Any) -> Any:
    return O.roi_align_grad(
        d["dy"], d["rois"], d["batch"], d["x"],
        spatial_scale=(p["sx"], p["sy"]),
        reduction_function="MAX" if p["max"] else "AVERAGE",
        interpolation_mode="NEAREST_NEIGHBOR" if p["nearest"] else "LINEAR",
        input_pixel_offset=p["ipo"], output_pixel_offset=p["opo"],
        minimum_samples_per_output=p["lo"], maximum_samples_per_output=p["hi"],
        align_regions_to_corners=p["corners"], **kw,
    )  # fmt: skip


@pytest.mark.parametrize("backend", backend_params(*BACKENDS), indirect=True)
@pytest.mark.parametrize("seed", range(40))
def test_roi_align_grad_matches_the_loop_oracle(backend: str, seed: int) -> None:
    p, d = _grad_case(seed)
    dx, droi = (to_numpy(v) for v in _grad_api(p, d, return_roi_gradient=True, backend=backend))
    want_dx, want_droi = roi_align_grad_oracle(d["x"], d["dy"], d["rois"], d["batch"], d["x"].shape, **p)
    # float32 weights and sums against the oracle's float64
    np.testing.assert_allclose(dx, want_dx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(droi, want_droi, rtol=1e-4, atol=1e-3)


def _forward(p: dict[str, Any], x: np.ndarray, rois: np.ndarray, batch: np.ndarray, oh: int, ow: int) -> np.ndarray:
    return O.roi_align1(
        x, rois, batch, (oh, ow),
        spatial_scale=(p["sx"], p["sy"]),
        reduction_function="MAX" if p["max"] else "AVERAGE",
        interpolation_mode="NEAREST_NEIGHBOR" if p["nearest"] else "LINEAR",
        input_pixel_offset=p["ipo"], output_pixel_offset=p["opo"],
        minimum_samples_per_output=p["lo"], maximum_samples_per_output=p["hi"],
        align_regions_to_corners=p["corners"],
    )  # fmt: skip


@pytest.mark.parametrize("seed", [s for s in range(24) if s % 2 == 0])
def test_roi_align_grad_is_the_adjoint_of_roi_align1(seed: int) -> None:
    """AVERAGE is linear in x: <dy, ROI_ALIGN1(x)> = <ROI_ALIGN_GRAD(dy), x> for every x (the forward reference)."""
    p, d = _grad_case(seed)
    oh, ow = d["dy"].shape[2:]
    dx = _grad_api(p, d)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        probe = rng.standard_normal(d["x"].shape).astype(F32)
        lhs = float(np.sum(d["dy"].astype(np.float64) * _forward(p, probe, d["rois"], d["batch"], oh, ow)))
        rhs = float(np.sum(dx.astype(np.float64) * probe))
        assert lhs == pytest.approx(rhs, rel=1e-4, abs=1e-4)


@pytest.mark.parametrize("seed", range(12))
def test_roi_align_grad_roi_gradient_against_finite_differences(seed: int) -> None:
    """E194's factors sum to the axis length L (L - 1 with corners): dROI[x1] + dROI[x2] = L / SpatialScaleX * dF/dshift.

    F = <dy, ROI_ALIGN1(x, rois + shift)> (the forward reference, LINEAR, fixed sample
    counts so the shift moves every sample by shift * SpatialScale); central differences of
    a small shift, ROIs whose samples stay inside one cell.
    """
    p, d = _grad_case(seed)
    p.update(nearest=False, hi=2, lo=2)
    _, _, h, w = d["x"].shape
    oh, ow = d["dy"].shape[2:]
    _, droi = _grad_api(p, d, return_roi_gradient=True)
    eps = 1e-3
    for axis, (scale, length) in enumerate(((p["sx"], w), (p["sy"], h))):
        shift = np.zeros(4, F32)
        shift[[axis, axis + 2]] = eps / scale
        plus = _forward(p, d["x"], d["rois"] + shift, d["batch"], oh, ow).astype(np.float64)
        minus = _forward(p, d["x"], d["rois"] - shift, d["batch"], oh, ow).astype(np.float64)
        derivative = ((plus - minus) * d["dy"]).sum(axis=(1, 2, 3)) / (2 * eps)  # per ROI, per pixel of shift
        span = length - 1 if p["corners"] else length
        got = droi[:, axis] + droi[:, axis + 2]
        np.testing.assert_allclose(got, span * derivative, rtol=2e-2, atol=2e-2 * (1 + np.abs(got).max()))


def test_roi_align_grad_roi_gradient_is_not_the_forward_derivative() -> None:
    """E194: DirectML's dROI[x2] for one sample at output 0 is 0; the forward's derivative is not."""
    x = np.arange(30, dtype=F32).reshape(1, 1, 5, 6) ** 1.5
    dy = np.ones((1, 1, 1, 1), F32)
    _, droi = O.roi_align_grad(
        dy, [[0.7, 1.2, 4.1, 3.4]], [0], x, maximum_samples_per_output=1, return_roi_gradient=True
    )
    assert droi[0, 2] == 0 and droi[0, 3] == 0 and droi[0, 0] != 0


def test_roi_align_grad_max_out_of_bounds_sample_competes_as_zero() -> None:
    """E195: the first sample (out of bounds, 0) beats the negative in-bounds ones: no gradient anywhere."""
    x = -np.ones((1, 1, 2, 2), F32)
    dy = np.ones((1, 1, 1, 1), F32)
    dx = O.roi_align_grad(dy, [[-4, -4, 2, 2]], [0], x, reduction_function="MAX", minimum_samples_per_output=2,
                          maximum_samples_per_output=2)  # fmt: skip
    assert not dx.any()
    dx = O.roi_align_grad(dy, [[-4, -4, 2, 2]], [0], -x, reduction_function="MAX", minimum_samples_per_output=2,
                          maximum_samples_per_output=2)  # fmt: skip
    assert dx.sum() == 1


def test_roi_align_grad_api() -> None:
    dy = np.ones((1, 1, 1, 1), F32)
    with pytest.raises(dmlops.ArgumentValueError):
        O.roi_align_grad(dy, [[0, 0, 2, 2]], [0])
    with pytest.raises(InvalidDescError, match="InputTensor"):
        O.roi_align_grad(dy, [[0, 0, 2, 2]], [0], input_shape=(1, 1, 2, 2), reduction_function="MAX")
    droi = O.roi_align_grad(dy, [[0, 0, 2, 2]], [0], np.ones((1, 1, 2, 2), F32), return_input_gradient=False,
                            return_roi_gradient=True)  # fmt: skip
    assert droi.shape == (1, 4) and not droi.any()  # a flat input has no slopes


# -- ROI_ALIGN1 and ROI_ALIGN_GRAD on every backend ----------------------------------------------


def _forward_on(backend: str, p: dict[str, Any], x: Any, d: dict[str, Any], **kw: Any) -> np.ndarray:
    oh, ow = d["dy"].shape[2:]
    return to_numpy(
        O.roi_align1(
            x, d["rois"], d["batch"], (oh, ow),
            spatial_scale=(p["sx"], p["sy"]),
            reduction_function="MAX" if p["max"] else "AVERAGE",
            interpolation_mode="NEAREST_NEIGHBOR" if p["nearest"] else "LINEAR",
            input_pixel_offset=p["ipo"], output_pixel_offset=p["opo"],
            minimum_samples_per_output=p["lo"], maximum_samples_per_output=p["hi"],
            align_regions_to_corners=p["corners"], backend=backend, **kw,
        )
    )  # fmt: skip


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("seed", range(40))
def test_roi_align1_matches_the_reference(backend: str, dtype: Any, seed: int) -> None:
    """Bit for bit: the same float64 sample coordinates and float32 lerps and sums as the reference (erratum E38).

    The cases cover both offsets, AlignRegionsToCorners (seed % 4 == 3, one sample per
    output included), NEAREST, MAX, adaptive and fixed sample counts, and ROIs reaching
    1.5 pixels past the input on every side (out-of-bounds samples, read as -7.5 here).
    """
    p, d = _grad_case(seed)
    x = d["x"].astype(dtype)
    d = {**d, "rois": d["rois"].astype(dtype)}
    want = _forward_on("numpy", p, x, d, out_of_bounds_input_value=-7.5)
    got = _forward_on(backend, p, x, d, out_of_bounds_input_value=-7.5)
    assert got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
@pytest.mark.parametrize("seed", range(0, 40, 5))
def test_roi_align1_strided_input(backend: str, seed: int) -> None:
    """A channels-last view and a view with gaps read the same elements as the contiguous input."""
    p, d = _grad_case(seed)
    want = _forward_on("numpy", p, d["x"], d)
    nhwc = _on(backend, np.ascontiguousarray(d["x"].transpose(0, 2, 3, 1)), lambda a: a.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(_forward_on(backend, p, nhwc, d), want)
    gaps = np.zeros((*d["x"].shape[:3], 2 * d["x"].shape[3]), F32)
    gaps[..., ::2] = d["x"]
    np.testing.assert_array_equal(_forward_on(backend, p, _on(backend, gaps, lambda a: a[..., ::2]), d), want)


@pytest.mark.parametrize("backend", backend_params(*BACKENDS), indirect=True)
def test_roi_align1_corners_single_sample_is_the_centre(backend: str) -> None:
    """AlignRegionsToCorners with one sample: the region's centre, whatever OutputPixelOffset (x 1..4 -> 2.5).

    Samples on the edges [0, 7] are in bounds; a hair outside reads OutOfBoundsInputValue.
    """
    ramp = np.arange(8, dtype=F32).reshape(1, 1, 1, 8) * 10
    kw: dict[str, Any] = dict(align_regions_to_corners=True, maximum_samples_per_output=1, backend=backend)
    got = O.roi_align1(ramp, [[1, 0, 4, 0]], [0], (1, 1), input_pixel_offset=0, output_pixel_offset=7, **kw)
    assert to_numpy(got).item() == 25.0
    rois = [[0, 0, 7, 0], [-0.001, 0, 7.001, 0]]
    got = O.roi_align1(ramp, rois, [0, 0], (1, 2), input_pixel_offset=0, output_pixel_offset=0,
                       out_of_bounds_input_value=-1, **kw)  # fmt: skip
    np.testing.assert_array_equal(to_numpy(got).reshape(2, 2), [[0, 70], [-1, -1]])


HOSTILE_BATCHES = [(np.uint32, 2), (np.uint32, 2**32 - 1), (np.uint64, 2**63), (np.uint64, 2**64 - 1)]


@pytest.mark.parametrize("backend", backend_params(*BACKENDS), indirect=True)
@pytest.mark.parametrize(("index_type", "bad"), HOSTILE_BATCHES, ids=lambda v: str(v))
def test_roi_align1_and_grad_refuse_hostile_batch_indices(backend: str, index_type: Any, bad: int) -> None:
    """Ruling 3: a batch index outside [0, BatchCount) raises DataIndexError naming the ROI (no fault, no read)."""
    x = np.ones((2, 1, 4, 4), F32)
    batch = np.array([0, bad, 1], index_type)
    rois = np.array([[0, 0, 2, 2]] * 3, F32)
    with pytest.raises(DataIndexError, match=rf"ROI 1 has batch index {bad}"):
        O.roi_align1(x, rois, batch, 2, backend=backend)
    if index_type is np.uint64:
        return  # ROI_ALIGN_GRAD's BatchIndicesTensor is UINT32 only
    dy = np.ones((3, 1, 2, 2), F32)
    with pytest.raises(DataIndexError, match=rf"ROI 1 has batch index {bad}"):
        O.roi_align_grad(dy, rois, batch, x, reduction_function="MAX", return_roi_gradient=True, backend=backend)
    with pytest.raises(DataIndexError, match=rf"ROI 1 has batch index {bad}"):
        O.roi_align_grad(dy, rois, batch, input_shape=(2, 1, 4, 4), backend=backend)


def _grad_tolerance(dtype: Any, d: dict[str, Any]) -> tuple[float, float, float]:
    """(rtol, atol of the input gradient, atol of the ROI gradient) against the reference.

    Both sum float64 terms and round once to ``dtype``; only the order of the float64 sums
    differs (cpu: sample by sample; cuda: a gather per input pixel and a block tree; the
    reference: einsum). A float64 sum of k terms is within k·2^-53·Σ|terms| of the exact one, far
    below 1e-12·Σ|terms| here, and the rounding to ``dtype`` may then land one ulp
    (≤ 2^-23 or 2^-10 relative) apart. Σ|terms| of an input-gradient element is at most
    Σ|dy| (weights ≤ 1); of a ROI-gradient entry at most Σ|dy| · 2 max|x| · the axis length.
    """
    dy = float(np.abs(d["dy"].astype(np.float64)).sum())
    x = float(np.abs(d["x"].astype(np.float64)).max())
    ulp = 2.0**-23 if dtype == np.float32 else 2.0**-10
    tiny = float(np.finfo(dtype).smallest_subnormal)
    return ulp, 1e-12 * dy + tiny, 1e-12 * dy * 2 * x * max(d["x"].shape[2:]) + tiny


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("seed", range(40))
def test_roi_align_grad_matches_the_reference(backend: str, dtype: Any, seed: int) -> None:
    """Both gradients against the reference within the float64 summation-order tolerance (:func:`_grad_tolerance`).

    The MAX pick is exact (the forward's float32 samples); only sums are reordered.
    """
    p, d = _grad_case(seed)
    d = {k: v.astype(dtype) if k != "batch" else v for k, v in d.items()}
    want = _grad_api(p, d, return_roi_gradient=True, backend="numpy")
    got = [to_numpy(v) for v in _grad_api(p, d, return_roi_gradient=True, backend=backend)]
    rtol, atol_dx, atol_roi = _grad_tolerance(dtype, d)
    assert got[0].dtype == got[1].dtype == dtype
    np.testing.assert_allclose(got[0], want[0], rtol=rtol, atol=atol_dx)
    np.testing.assert_allclose(got[1], want[1], rtol=rtol, atol=atol_roi)


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
@pytest.mark.parametrize("seed", [0, 2, 4, 6, 8])
def test_roi_align_grad_without_input_and_strided(backend: str, seed: int) -> None:
    """AVERAGE without InputTensor (input_shape), and a channels-last InputTensor with the ROI gradient."""
    p, d = _grad_case(seed)  # even seeds: AVERAGE
    rtol, atol_dx, atol_roi = _grad_tolerance(np.float32, d)
    kw = dict(
        spatial_scale=(p["sx"], p["sy"]), input_pixel_offset=p["ipo"], output_pixel_offset=p["opo"],
        maximum_samples_per_output=p["hi"], align_regions_to_corners=p["corners"],
        interpolation_mode="NEAREST_NEIGHBOR" if p["nearest"] else "LINEAR",
    )  # fmt: skip
    want = O.roi_align_grad(d["dy"], d["rois"], d["batch"], input_shape=d["x"].shape, **kw)
    got = O.roi_align_grad(d["dy"], d["rois"], d["batch"], input_shape=d["x"].shape, backend=backend, **kw)
    np.testing.assert_allclose(to_numpy(got), want, rtol=rtol, atol=atol_dx)
    want_dx, want_droi = _grad_api(p, d, return_roi_gradient=True)
    nhwc = _on(backend, np.ascontiguousarray(d["x"].transpose(0, 2, 3, 1)), lambda a: a.transpose(0, 3, 1, 2))
    got_dx, got_droi = _grad_api(p, {**d, "x": nhwc}, return_roi_gradient=True, backend=backend)
    np.testing.assert_allclose(to_numpy(got_dx), want_dx, rtol=rtol, atol=atol_dx)
    np.testing.assert_allclose(to_numpy(got_droi), want_droi, rtol=rtol, atol=atol_roi)


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
@pytest.mark.parametrize("seed", [1, 3, 4, 7])
def test_roi_align_grad_is_identical_run_to_run(backend: str, seed: int) -> None:
    """Both gradients sum in a fixed order (no atomics on cuda): two runs agree bit for bit."""
    p, d = _grad_case(seed)
    first = [to_numpy(v) for v in _grad_api(p, d, return_roi_gradient=True, backend=backend)]
    again = [to_numpy(v) for v in _grad_api(p, d, return_roi_gradient=True, backend=backend)]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
