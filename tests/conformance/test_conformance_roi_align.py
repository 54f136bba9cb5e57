"""ROI_ALIGN against ONNX RoiAlign node tests, ORT CPU RoiAlign-16 and DML-verified vectors.

onnxruntime's CPU RoiAlign at opset 16 with ``coordinate_transformation_mode=half_pixel``
computes what torchvision's ``roi_align(aligned=True)`` computes (oracles.md §3.3;
torchvision itself is a multi-GB install and is left out of CI). onnxruntime 1.31 has
no RoiAlign-22 kernel, so the random cases are built at opset 16.
"""

from __future__ import annotations

import itertools

import pytest

pytest.importorskip("onnx")

import numpy as np
from _dml_case import DmlCase, check, oracle
from _map_roialign import CASES, DML_VERIFIED, NOTES, PREFIXES, dml_verified_case, roi_align_desc, to_dml
from _onnx_cases import load_node_case, node_model, node_test_names, run_ort

from oracles.roi_align import rois_sampling_the_bounds

pytestmark = pytest.mark.oracles

NAMES = node_test_names(PREFIXES)


def test_every_onnx_roialign_case_is_classified() -> None:
    assert NAMES, "no ONNX RoiAlign node tests found"
    assert set(NAMES) <= set(CASES), sorted(set(NAMES) - set(CASES))


@oracle("ROI_ALIGN", "ONNX node tests (RoiAlign-22)")
@pytest.mark.parametrize("name", NAMES)
def test_onnx_roialign(name: str, backend: str, record_property) -> None:
    reason = CASES[name]
    if reason:
        pytest.skip(f"known divergence: {reason}")
    if name in NOTES:
        record_property("note", NOTES[name])
    check(to_dml(load_node_case(name)), backend)


@oracle("ROI_ALIGN", "DirectML-verified vectors (dml-semantics.md §4.3, ORT roialign_test.cc)")
@pytest.mark.parametrize("name", DML_VERIFIED)
def test_dml_verified_vectors(name: str, backend: str) -> None:
    check(dml_verified_case(name), backend)


def _rois(rng: np.random.RandomState, n: int, h: int, w: int, scale: float, min_px: float) -> np.ndarray:
    """ROIs on a 1/8 grid (exact in float32), partly outside the image, at least ``min_px`` after scaling.

    Grid-aligned coordinates keep ``ceil(size / output)`` away from float rounding, so the adaptive
    sample count is the same in float32 (ORT) and float64.
    """
    rois = np.empty((n, 4), np.float32)
    for r in range(n):
        x1 = rng.randint(-16, 8 * w + 8) / 8
        y1 = rng.randint(-16, 8 * h + 8) / 8
        width = max(rng.randint(0, 8 * w) / 8, min_px)
        height = max(rng.randint(0, 8 * h) / 8, min_px)
        rois[r] = np.array([x1, y1, x1 + width, y1 + height]) / scale
    return rois


ORT_CONFIGS = list(itertools.product([1.0, 0.5, 0.25], [0, 1, 2, 3]))


@oracle("ROI_ALIGN", "onnxruntime CPU RoiAlign-16 half_pixel (= torchvision aligned=True)")
@pytest.mark.parametrize("spatial_scale, sampling_ratio", ORT_CONFIGS)
def test_ort_roialign_half_pixel(spatial_scale: float, sampling_ratio: int, backend: str, record_property) -> None:
    """Fixed (1-3) and adaptive (0) sample counts; 2 batches; ROIs partly outside the image.

    Adaptive counts: ROIs are at least 1 px (ORT gives 0 samples, hence 0, for an empty
    ROI; DML samples the point). Fixed counts also get sub-pixel and zero-size ROIs, where
    neither side enlarges the region.
    """
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto

    seed = int(spatial_scale * 8) * 10 + sampling_ratio
    rng = np.random.RandomState(seed)
    for _ in range(3):
        h, w = (int(v) for v in rng.randint(3, 9, size=2))
        out_h, out_w = (int(v) for v in rng.randint(1, 5, size=2))
        x = rng.uniform(-1, 1, size=(2, 3, h, w)).astype(np.float32)
        rois = _rois(rng, 6, h, w, spatial_scale, min_px=1.0 if sampling_ratio == 0 else 0.0)
        batch = rng.randint(0, 2, size=6).astype(np.int64)
        feeds = {"X": x, "rois": rois, "batch_indices": batch}
        model = node_model(
            "RoiAlign",
            feeds,
            {"Y": (TensorProto.FLOAT, None)},
            opset=16,
            coordinate_transformation_mode="half_pixel",
            mode="avg",
            output_height=out_h,
            output_width=out_w,
            sampling_ratio=sampling_ratio,
            spatial_scale=spatial_scale,
        )
        (want,) = run_ort(model, feeds)
        # ORT keeps samples exactly on -1 and InputWidth/Height in bounds; DirectML does not (erratum
        # E28): those ROIs are left out of the comparison.
        lo, hi = (sampling_ratio, sampling_ratio) if sampling_ratio else (1, 0xFFFFFFFF)
        keep = ~rois_sampling_the_bounds(
            x.shape,
            rois,
            (out_h, out_w),
            spatial_scale=(np.float32(spatial_scale),) * 2,
            min_samples=lo,
            max_samples=hi,
        )
        rois, batch, want = rois[keep], batch[keep], want[keep]
        desc = roi_align_desc(x, rois, (out_h, out_w), spatial_scale=spatial_scale, sampling_ratio=sampling_ratio)
        inputs = {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": batch.astype(np.uint32)}
        check(DmlCase("ROI_ALIGN", desc, inputs, {"OutputTensor": want}, rtol=1e-5, atol=2e-6), backend)
    record_property("subcases", 3)
