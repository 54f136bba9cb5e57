"""Operator attributes shared by the benchmark scripts (importable without a GPU or torch)."""

from __future__ import annotations

BILINEAR_2X = dict(
    interpolation_mode="LINEAR",
    rounding_direction="DECREASING",
    scales=(1.0, 1.0, 2.0, 2.0),
    input_pixel_offsets=(0.5,) * 4,
    output_pixel_offsets=(-0.5,) * 4,
)
"""RESAMPLE2 / RESAMPLE_GRAD1 attributes of torch's bilinear 2x upsampling (half-pixel, align_corners=False)."""

PADDING_BORDER_2 = dict(PaddingMode="CONSTANT", PaddingValue=0.0, StartPadding=[0, 0, 2, 2], EndPadding=[0, 0, 2, 2])
"""The data-movement benchmarks' PADDING desc members: a border of 2 zeros around each plane (124 -> 128)."""
