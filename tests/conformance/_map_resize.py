"""ONNX Resize / Upsample -> DML_RESAMPLE2 (and RESAMPLE_GRAD1), oracles.md §2.4.

DML maps output index ``o`` to ``x = (o - OutputPixelOffset) / Scale - InputPixelOffset``.
Per axis, as ORT's ``DmlOperatorResize.cpp`` (``ComputePixelOffsetsAndScales`` and the
nearest-mode block) does, except where ORT departs from the ONNX expected outputs (then
this mapping follows ONNX, see the notes in ``axis_params``):

==================== ===================================== ============================ =========
mode                 Scale                                 InputPixelOffset             OutputPO
==================== ===================================== ============================ =========
half_pixel           s                                     0.5                          -0.5
half_pixel_symmetric s                                     0.5 - (in/2)(1 - out/(s in)) -0.5
pytorch_half_pixel   s (FLT_MAX when s·in is 1)            0.5 (0 when s·in is 1)       -0.5 (0)
align_corners        (s·in - 1)/(in - 1) (FLT_MAX if 1)    0                            0
asymmetric           s                                     0                            0
tf_half_pixel_for_nn s                                     0                            -0.5
tf_crop_and_resize   (s·in - 1)/((end - start)(in - 1))    -start (in - 1)              0
==================== ===================================== ============================ =========

Nearest modes then set RoundingDirection and adjust InputPixelOffset:
round_prefer_floor INCREASING +0.5, round_prefer_ceil DECREASING -0.5, floor DECREASING,
ceil INCREASING. Upsample is asymmetric with floor.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _dml_case import FLT_MAX, DmlCase, Inexpressible, tensor
from _onnx_cases import NodeCase

_CUBIC = "DML has no cubic interpolation (RESAMPLE2 is NEAREST_NEIGHBOR or LINEAR)"
_ANTIALIAS = "antialias needs RESAMPLE3 (Antialiased), not RESAMPLE2"

# Every ONNX Resize/Upsample node test: None when expressible, else the reason it is not.
CASES: dict[str, str | None] = {
    "resize_downsample_scales_cubic": _CUBIC,
    "resize_downsample_scales_cubic_A_n0p5_exclude_outside": _CUBIC,
    "resize_downsample_scales_cubic_align_corners": _CUBIC,
    "resize_downsample_scales_cubic_antialias": _CUBIC,
    "resize_downsample_scales_linear": None,
    "resize_downsample_scales_linear_align_corners": None,
    "resize_downsample_scales_linear_antialias": _ANTIALIAS,
    "resize_downsample_scales_linear_half_pixel_symmetric": None,
    "resize_downsample_scales_nearest": None,
    "resize_downsample_sizes_cubic": _CUBIC,
    "resize_downsample_sizes_cubic_antialias": _CUBIC,
    "resize_downsample_sizes_linear_antialias": _ANTIALIAS,
    "resize_downsample_sizes_linear_pytorch_half_pixel": None,
    "resize_downsample_sizes_nearest": None,
    "resize_downsample_sizes_nearest_not_larger": None,
    "resize_downsample_sizes_nearest_not_smaller": None,
    "resize_tf_crop_and_resize": None,
    "resize_tf_crop_and_resize_axes_2_3": None,
    "resize_tf_crop_and_resize_axes_3_2": None,
    "resize_tf_crop_and_resize_extrapolation_value": (
        "extrapolation_value: DML clamps coordinates to the edge instead of extrapolating "
        "(ORT's QueryResize rejects extrapolation_value != 0 for the DML EP)"
    ),
    "resize_upsample_scales_cubic": _CUBIC,
    "resize_upsample_scales_cubic_A_n0p5_exclude_outside": _CUBIC,
    "resize_upsample_scales_cubic_align_corners": _CUBIC,
    "resize_upsample_scales_cubic_asymmetric": _CUBIC,
    "resize_upsample_scales_linear": None,
    "resize_upsample_scales_linear_align_corners": None,
    "resize_upsample_scales_linear_half_pixel_symmetric": None,
    "resize_upsample_scales_nearest": None,
    "resize_upsample_scales_nearest_axes_2_3": None,
    "resize_upsample_scales_nearest_axes_3_2": None,
    "resize_upsample_sizes_cubic": _CUBIC,
    "resize_upsample_sizes_nearest": None,
    "resize_upsample_sizes_nearest_axes_2_3": None,
    "resize_upsample_sizes_nearest_axes_3_2": None,
    "resize_upsample_sizes_nearest_ceil_half_pixel": None,
    "resize_upsample_sizes_nearest_floor_align_corners": None,
    "resize_upsample_sizes_nearest_not_larger": None,
    "resize_upsample_sizes_nearest_not_smaller": None,
    "resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric": None,
    "upsample_nearest": None,
}
PREFIXES = ("resize_", "upsample_")

# Where ORT's DML EP itself departs from the ONNX expected outputs (oracles.md §2.4); this
# mapping follows ONNX there. Listed so the report can say which cases ORT-DML would fail.
ORT_DML_DIVERGES: dict[str, str] = {
    "resize_downsample_scales_linear_align_corners": (
        "align_corners with fractional scale*in: ONNX uses length_resized = scale*in, ORT the integer size"
    ),
    "resize_downsample_sizes_linear_pytorch_half_pixel": (
        "pytorch_half_pixel: ORT tests the input length for 1, ONNX the output length"
    ),
    "resize_tf_crop_and_resize": "tf_crop_and_resize: ORT divides by max(span, 1); the span here is below 1",
    "resize_tf_crop_and_resize_axes_2_3": "tf_crop_and_resize: ORT divides by max(span, 1); the span here is below 1",
    "resize_tf_crop_and_resize_axes_3_2": "tf_crop_and_resize: ORT divides by max(span, 1); the span here is below 1",
}

_NEAREST_MODES = {
    # nearest_mode -> (RoundingDirection, InputPixelOffset adjustment)
    "round_prefer_floor": ("INCREASING", 0.5),
    "round_prefer_ceil": ("DECREASING", -0.5),
    "floor": ("DECREASING", 0.0),
    "ceil": ("INCREASING", 0.0),
}


def axis_params(
    mode: str, n_in: int, n_out: int, scale: float, roi: tuple[float, float] = (0.0, 1.0)
) -> tuple[float, float, float]:
    """(Scale, InputPixelOffset, OutputPixelOffset) of one axis for an ONNX coordinate mode.

    ``scale`` is ONNX's scale factor (``n_out / n_in`` for sizes with the stretch policy);
    ``length_resized = scale * n_in`` may be fractional, and ONNX uses it (not ``n_out``)
    in align_corners, pytorch_half_pixel, half_pixel_symmetric and tf_crop_and_resize.
    """
    length = scale * n_in
    if mode == "half_pixel":
        return scale, 0.5, -0.5
    if mode == "half_pixel_symmetric":
        return scale, 0.5 - (n_in / 2) * (1 - n_out / length), -0.5
    if mode == "pytorch_half_pixel":
        # ONNX tests the output length for 1 (ORT tests the input length).
        return (FLT_MAX, 0.0, 0.0) if length == 1 else (scale, 0.5, -0.5)
    if mode == "align_corners":
        if length == 1 or n_in == 1:
            return FLT_MAX, 0.0, 0.0
        return (length - 1) / (n_in - 1), 0.0, 0.0
    if mode == "asymmetric":
        return scale, 0.0, 0.0
    if mode == "tf_half_pixel_for_nn":
        return scale, 0.0, -0.5
    if mode == "tf_crop_and_resize":
        start, end = roi
        if length == 1:
            return FLT_MAX, -0.5 * (start + end) * (n_in - 1), 0.0
        if n_in == 1:
            return FLT_MAX, 0.0, 0.0
        # ORT divides by max(span, 1), which is wrong when the span is below 1.
        return (length - 1) / ((end - start) * (n_in - 1)), -start * (n_in - 1), 0.0
    raise Inexpressible(f"unknown coordinate_transformation_mode {mode!r}")


def _onnx_scales(case: NodeCase, x: np.ndarray) -> tuple[list[float], list[tuple[float, float]]]:
    """Per-axis ONNX scale factors and roi (start, end), as onnx.reference computes them."""
    rank = x.ndim
    if case.op_type == "Upsample":
        return [float(s) for s in np.asarray(case.inputs[1])], [(0.0, 1.0)] * rank
    inputs = list(case.inputs) + [None] * 4
    roi_in, scales_in, sizes_in = inputs[1], inputs[2], inputs[3]
    axes = case.attrs.get("axes")
    axes = list(range(rank)) if axes is None else [a + rank if a < 0 else a for a in axes]
    roi = [(0.0, 1.0)] * rank
    if roi_in is not None and roi_in.size:
        n = len(axes)
        for i, a in enumerate(axes):
            roi[a] = (float(roi_in[i]), float(roi_in[n + i]))
    scales = [1.0] * rank
    if scales_in is not None and scales_in.size:
        for i, a in enumerate(axes):
            scales[a] = float(scales_in[i])
        return scales, roi
    assert sizes_in is not None
    for i, a in enumerate(axes):
        scales[a] = int(sizes_in[i]) / x.shape[a]
    policy = case.attrs.get("keep_aspect_ratio_policy", "stretch")
    if policy != "stretch":
        pick = min if policy == "not_larger" else max
        s = pick(scales[a] for a in axes)
        scales = [s if a in axes else 1.0 for a in range(rank)]
    return scales, roi


def resample_params(case: NodeCase) -> dict[str, Any]:
    """The RESAMPLE2 / RESAMPLE_GRAD1 attribute members for an ONNX Resize/Upsample test."""
    reason = CASES.get(case.name)
    if reason:
        raise Inexpressible(reason)
    x = case.inputs[0]
    assert x is not None
    (y,) = case.outputs
    attrs = case.attrs
    mode = attrs.get("mode", "nearest")
    if mode not in ("nearest", "linear"):
        raise Inexpressible(_CUBIC)
    if attrs.get("antialias", 0):
        raise Inexpressible(_ANTIALIAS)
    if case.op_type == "Upsample":
        ctm, nearest_mode = "asymmetric", "floor"
    else:
        ctm = attrs.get("coordinate_transformation_mode", "half_pixel")
        nearest_mode = attrs.get("nearest_mode", "round_prefer_floor")
    scales, roi = _onnx_scales(case, x)
    params = [axis_params(ctm, n_in, n_out, s, r) for n_in, n_out, s, r in zip(x.shape, y.shape, scales, roi)]
    if ctm == "tf_crop_and_resize":
        # DML clamps to the edge; ONNX extrapolates outside [0, in-1]: only comparable when nothing is outside.
        for (s, ipo, opo), n_in, n_out in zip(params, x.shape, y.shape):
            xs = (np.arange(n_out) - opo) / np.float64(np.float32(s)) - ipo
            if (xs < -1e-6).any() or (xs > n_in - 1 + 1e-6).any():
                raise Inexpressible("tf_crop_and_resize samples outside the input (extrapolation)")
    direction = "DECREASING"
    if mode == "nearest":
        direction, adjust = _NEAREST_MODES[nearest_mode]
        params = [(s, ipo + adjust, opo) for s, ipo, opo in params]
    return {
        "InterpolationMode": "NEAREST_NEIGHBOR" if mode == "nearest" else "LINEAR",
        "RoundingDirection": direction,
        "DimensionCount": x.ndim,
        "Scales": [p[0] for p in params],
        "InputPixelOffsets": [p[1] for p in params],
        "OutputPixelOffsets": [p[2] for p in params],
    }


def grad_params(forward: dict) -> dict:
    """RESAMPLE_GRAD1's parameters for the gradient of a RESAMPLE2 with ``forward``'s.

    DirectML names RESAMPLE_GRAD1's offsets after the grad's own tensors (erratum E25):
    its InputPixelOffsets are the forward's OutputPixelOffsets, and the other way round.
    """
    return {
        **forward,
        "InputPixelOffsets": forward["OutputPixelOffsets"],
        "OutputPixelOffsets": forward["InputPixelOffsets"],
    }


def forward_case(case: NodeCase) -> DmlCase:
    """RESAMPLE2 reproducing the ONNX expected output."""
    params = resample_params(case)
    x = case.inputs[0]
    assert x is not None
    (y,) = case.outputs
    desc = {"InputTensor": tensor(x.dtype, x.shape), "OutputTensor": tensor(y.dtype, y.shape), **params}
    return DmlCase("RESAMPLE2", desc, {"InputTensor": x}, {"OutputTensor": y}, rtol=1e-5, atol=1e-5)


def onnx_adjoint(case: NodeCase, dy: np.ndarray) -> np.ndarray:
    """``dX = J^T dY`` with J probed column by column: ``dX[i] = <Resize(e_i), dY>``.

    Resize is linear in X, so this is the exact adjoint of the ONNX forward, computed
    with ``onnx.reference`` as the forward oracle (no DML involved).
    """
    from onnx.reference import ReferenceEvaluator

    x = case.inputs[0]
    assert x is not None
    session = ReferenceEvaluator(case.model)
    names = [vi.name for vi in case.model.graph.input]
    feeds_fixed = {n: a for n, a in zip(names, [a for a in case.inputs if a is not None])}
    dx = np.zeros(x.size, dtype=np.float64)
    probe = np.zeros(x.size, dtype=x.dtype)
    for i in range(x.size):
        probe[:] = 0
        probe[i] = 1
        feeds = {**feeds_fixed, names[0]: probe.reshape(x.shape)}
        (column,) = session.run(None, feeds)
        dx[i] = float(np.dot(np.asarray(column, np.float64).ravel(), dy.astype(np.float64).ravel()))
    return dx.reshape(x.shape)


def grad_case(case: NodeCase, seed: int = 0) -> DmlCase:
    """RESAMPLE_GRAD1 for the forward's parameters against the ONNX forward's exact adjoint."""
    params = grad_params(resample_params(case))
    x = case.inputs[0]
    assert x is not None
    (y,) = case.outputs
    dy = np.random.RandomState(seed).uniform(-1, 1, size=y.shape).astype(np.float32)
    dx = onnx_adjoint(case, dy).astype(np.float32)
    desc = {
        "InputGradientTensor": tensor(np.float32, y.shape),
        "OutputGradientTensor": tensor(np.float32, x.shape),
        **params,
    }
    return DmlCase(
        "RESAMPLE_GRAD1", desc, {"InputGradientTensor": dy}, {"OutputGradientTensor": dx}, rtol=1e-5, atol=1e-5
    )
