"""Operator attributes shared by the GPU scripts (importable without a GPU or torch)."""

from __future__ import annotations

BILINEAR_2X = dict(
    interpolation_mode="LINEAR",
    rounding_direction="DECREASING",
    scales=(1.0, 1.0, 2.0, 2.0),
    input_pixel_offsets=(0.5,) * 4,
    output_pixel_offsets=(-0.5,) * 4,
)
"""RESAMPLE2 / RESAMPLE_GRAD1 attributes of torch's bilinear 2x upsampling (half-pixel, align_corners=False)."""
