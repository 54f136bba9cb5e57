"""ONNX RoiAlign -> DML_ROI_ALIGN (oracles.md §2.3, §3.3, §4; dml-semantics.md §4.3).

ORT's ``DmlOperatorRoiAlign.cpp`` builds ROI_ALIGN1 with ReductionFunction avg ->
AVERAGE, LINEAR, SpatialScaleX = SpatialScaleY = spatial_scale,
OutOfBoundsInputValue 0, Min = Max = sampling_ratio (Min 1, Max UINT32_MAX when the
ratio is 0), InputPixelOffset 0.5 for half_pixel (0 for output_half_pixel),
OutputPixelOffset -0.5 and unsigned batch indices. DML_ROI_ALIGN is ROI_ALIGN1 with
InputPixelOffset 0.5 / OutputPixelOffset -0.5, so:

* half_pixel (RoiAlign-16 default, torchvision ``aligned=True``) maps directly;
* output_half_pixel (RoiAlign-10) maps onto ROI_ALIGN by adding ``0.5 / spatial_scale``
  to every ROI coordinate. ONNX also enlarges regions below 1 pixel to 1 pixel in that
  mode and DML does not, so the trick is exact only while every scaled ROI is >= 1 px.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _dml_case import DmlCase, Inexpressible, tensor
from _onnx_cases import NodeCase

UINT32_MAX = 2**32 - 1

CASES: dict[str, str | None] = {
    "roialign_aligned_true": None,
    "roialign_aligned_false": None,
    "roialign_mode_max": (
        "mode=max: the ONNX expected output is the max of weighted bilinear corners (onnx#4764, "
        "onnxruntime#6146); DML takes the max of whole bilinear samples (onnxruntime PR #7354)"
    ),
}
PREFIXES = ("roialign",)
NOTES = {
    "roialign_aligned_false": "output_half_pixel: ROI_ALIGN with 0.5/spatial_scale added to every ROI coordinate",
}


def roi_align_desc(
    x: np.ndarray,
    rois: np.ndarray,
    output_hw: tuple[int, int],
    *,
    spatial_scale: float,
    sampling_ratio: int,
    mode: str = "avg",
    index_type: Any = np.uint32,
) -> dict[str, Any]:
    """The DML_ROI_ALIGN desc ORT's DML EP builds for RoiAlign-16 half_pixel."""
    num_rois = rois.shape[0]
    minimum, maximum = (sampling_ratio, sampling_ratio) if sampling_ratio > 0 else (1, UINT32_MAX)
    return {
        "InputTensor": tensor(x.dtype, x.shape),
        "ROITensor": tensor(rois.dtype, rois.shape),
        "BatchIndicesTensor": tensor(index_type, (num_rois,)),
        "OutputTensor": tensor(x.dtype, (num_rois, x.shape[1], *output_hw)),
        "ReductionFunction": "AVERAGE" if mode == "avg" else "MAX",
        "InterpolationMode": "LINEAR",
        "SpatialScaleX": spatial_scale,
        "SpatialScaleY": spatial_scale,
        "OutOfBoundsInputValue": 0.0,
        "MinimumSamplesPerOutput": minimum,
        "MaximumSamplesPerOutput": maximum,
    }


def to_dml(case: NodeCase) -> DmlCase:
    """The ROI_ALIGN call reproducing an ONNX RoiAlign node test."""
    reason = CASES.get(case.name)
    if reason:
        raise Inexpressible(reason)
    x, rois, batch = case.inputs
    assert x is not None and rois is not None and batch is not None
    (y,) = case.outputs
    attrs = case.attrs
    scale = float(attrs.get("spatial_scale", 1.0))
    ratio = int(attrs.get("sampling_ratio", 0))
    ctm = attrs.get("coordinate_transformation_mode", "half_pixel" if case.opset >= 16 else "output_half_pixel")
    if ctm == "output_half_pixel":
        sizes = (rois[:, 2:] - rois[:, :2]) * scale
        if (sizes < 1).any():
            raise Inexpressible("output_half_pixel with a ROI under 1 px: ONNX enlarges it to 1 px, DML does not")
        rois = (rois.astype(np.float64) + 0.5 / scale).astype(rois.dtype)
    elif ctm != "half_pixel":
        raise Inexpressible(f"coordinate_transformation_mode {ctm!r}")
    out_hw = (int(attrs.get("output_height", 1)), int(attrs.get("output_width", 1)))
    desc = roi_align_desc(x, rois, out_hw, spatial_scale=scale, sampling_ratio=ratio, mode=attrs.get("mode", "avg"))
    inputs = {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": batch.astype(np.uint32)}
    # The ONNX expected values are rounded to 4 decimals.
    return DmlCase("ROI_ALIGN", desc, inputs, {"OutputTensor": y}, rtol=0, atol=1.5e-4, note=NOTES.get(case.name, ""))


# -- the DirectML-verified vectors of dml-semantics.md §4.3 (ORT roialign_test.cc AvgModePositive) --

DML_VERIFIED_ROIS = np.array(
    [[7, 5, 7, 5], [-15, -15, -15, -15], [-10, 21, -10, 21], [13, 8, 13, 8], [-14, 19, -14, 19]], dtype=np.float32
)
# Per ROI, the constant value of each of the 3 channels.
DML_VERIFIED = {
    # InputPixelOffset 0 / OutputPixelOffset -0.5 (RoiAlign-10): ORT's block labelled "DML has the correct outputs".
    "opset10_output_half_pixel": [
        (2, 27, 52),
        (0, 25, 50),
        (6.5625, 31.5625, 56.5625),
        (3.3125, 28.3125, 53.3125),
        (5.9375, 30.9375, 55.9375),
    ],
    # InputPixelOffset 0.5 / OutputPixelOffset -0.5 (RoiAlign-16 half_pixel), AvgModePositive_half_pixel.
    "opset16_half_pixel": [
        (0, 25, 50),
        (0, 0, 0),
        (0, 0, 0),
        (0.3125, 25.3125, 50.3125),
        (0, 0, 0),
    ],
}


def dml_verified_case(name: str) -> DmlCase:
    """X = arange(75) as {1,3,5,5}; spatial scale 1/16; output 3x4; sampling ratio 2; avg."""
    x = np.arange(75, dtype=np.float32).reshape(1, 3, 5, 5)
    scale = 1.0 / 16
    rois = DML_VERIFIED_ROIS
    if name == "opset10_output_half_pixel":
        # InputPixelOffset 0 == InputPixelOffset 0.5 with every coordinate moved by 0.5 / scale (= 8). Exact for
        # DML even for these zero-size ROIs: DML never enlarges a region, so only the offset moves.
        rois = rois + np.float32(0.5 / scale)
    desc = roi_align_desc(x, rois, (3, 4), spatial_scale=scale, sampling_ratio=2)
    want = np.array(DML_VERIFIED[name], dtype=np.float32)[:, :, None, None] * np.ones((1, 1, 3, 4), np.float32)
    inputs = {"InputTensor": x, "ROITensor": rois, "BatchIndicesTensor": np.zeros(5, np.uint32)}
    return DmlCase("ROI_ALIGN", desc, inputs, {"OutputTensor": want}, rtol=0, atol=1e-5)
