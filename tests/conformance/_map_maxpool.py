"""ONNX MaxPool -> DML_MAX_POOLING2 (forward, with indices) and DML_MAX_POOLING_GRAD.

oracles.md §2.5, following ORT's ``DmlOperatorPooling.cpp`` / ``OperatorHelper.cpp``:
WindowSize = kernel_shape, Strides, Dilations, Start/EndPadding from ``pads``. auto_pad
SAME_UPPER / SAME_LOWER put the odd unit of padding at the end / start
(``ResolveAutoPadding``). For ``ceil_mode`` EndPadding is grown until DML's floor
formula gives the expected size. 1-D pooling is right-aligned into 4-D (window and
stride 1 on the leading spatial axis).

The node tests only carry ``Y`` (two carry ``Indices``). The indices oracle is
onnxruntime's CPU MaxPool with its second output (it picks the lowest index on ties,
as DML does); MAX_POOLING_GRAD's oracle is ``dx = scatter_add(dy, Indices)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _dml_case import DmlCase, Inexpressible, tensor
from _onnx_cases import NodeCase, node_model, run_ort

# Every ONNX MaxPool node test: None when expressible (forward and grad), else the reason.
CASES: dict[str, str | None] = {
    "maxpool_1d_default": None,
    "maxpool_2d_ceil": None,
    "maxpool_2d_ceil_output_size_reduce_by_one": None,
    "maxpool_2d_default": None,
    "maxpool_2d_dilations": None,
    "maxpool_2d_pads": None,
    "maxpool_2d_precomputed_pads": None,
    "maxpool_2d_precomputed_same_upper": None,
    "maxpool_2d_precomputed_strides": None,
    "maxpool_2d_same_lower": None,
    "maxpool_2d_same_upper": None,
    "maxpool_2d_strides": None,
    "maxpool_2d_uint8": None,
    "maxpool_3d_default": None,
    "maxpool_3d_dilations": None,
    "maxpool_3d_dilations_use_ref_impl": None,
    "maxpool_3d_dilations_use_ref_impl_large": None,
    "maxpool_with_argmax_2d_precomputed_pads": None,
    "maxpool_with_argmax_2d_precomputed_strides": None,
}
# Cases whose gradient cannot be checked (the forward still is).
GRAD_CASES: dict[str, str] = {
    "maxpool_2d_uint8": "MAX_POOLING_GRAD takes FLOAT32/FLOAT16 only (the input is UINT8)",
}
# Notes on cases that needed more than the plain mapping.
NOTES: dict[str, str] = {
    "maxpool_with_argmax_2d_precomputed_strides": (
        "storage_order=1 (column-major Indices, which ORT's DML EP rejects): "
        "the expected Indices are converted to DML's row-major order before comparing"
    ),
    "maxpool_2d_ceil": "ceil_mode: EndPadding grown by 1 so that the floor formula gives the ONNX size",
    "maxpool_1d_default": "1-D pooling right-aligned into 4-D (window 1 on the leading spatial axis)",
}
PREFIXES = ("maxpool_",)


def pooling_params(x_shape: tuple[int, ...], y_shape: tuple[int, ...], attrs: dict[str, Any]) -> dict[str, list[int]]:
    """Strides/WindowSize/Start/EndPadding/Dilations of the (already 4-D/5-D) pooling."""
    k = len(x_shape) - 2
    kernel = list(attrs["kernel_shape"])
    strides = list(attrs.get("strides", [1] * k))
    dilations = list(attrs.get("dilations", [1] * k))
    pads = list(attrs.get("pads", [0] * 2 * k))
    start, end = pads[:k], pads[k:]
    auto_pad = attrs.get("auto_pad", "NOTSET")
    spatial = x_shape[2:]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        start, end = [], []
        for n, kk, s, d in zip(spatial, kernel, strides, dilations):
            out = -(-n // s)
            total = max((out - 1) * s + (kk - 1) * d + 1 - n, 0)
            small, big = total // 2, total - total // 2
            start.append(small if auto_pad == "SAME_UPPER" else big)
            end.append(big if auto_pad == "SAME_UPPER" else small)
    elif auto_pad == "VALID":
        start, end = [0] * k, [0] * k
    # ceil_mode (or any remaining mismatch): grow EndPadding until the floor formula fits.
    for i, (n, kk, s, d, want) in enumerate(zip(spatial, kernel, strides, dilations, y_shape[2:])):
        effective = (kk - 1) * d + 1
        while (n + start[i] + end[i] - effective) // s + 1 < want:
            end[i] += 1
        if (n + start[i] + end[i] - effective) // s + 1 != want:
            raise Inexpressible(f"output size {want} on spatial axis {i} does not follow the floor formula")
    return {"Strides": strides, "WindowSize": kernel, "StartPadding": start, "EndPadding": end, "Dilations": dilations}


def _as_4d(case: NodeCase) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """(x, y, attrs) with 1-D pooling right-aligned into 2-D spatial pooling."""
    x = case.inputs[0]
    assert x is not None
    y = case.outputs[0]
    attrs = dict(case.attrs)
    if x.ndim == 3:
        x = x[:, :, None, :]
        y = y[:, :, None, :]
        attrs["kernel_shape"] = [1, *attrs["kernel_shape"]]
        for key, fill in (("strides", 1), ("dilations", 1)):
            if key in attrs:
                attrs[key] = [fill, *attrs[key]]
        if "pads" in attrs:
            p = attrs["pads"]
            attrs["pads"] = [0, p[0], 0, p[1]]
    return x, y, attrs


def ort_indices(case: NodeCase) -> np.ndarray:
    """Row-major flat argmax indices from onnxruntime CPU MaxPool (second output)."""
    from onnx import TensorProto, helper

    x = case.inputs[0]
    assert x is not None
    attrs = {k: v for k, v in case.attrs.items() if k != "storage_order"}
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    last_error: Exception | None = None
    for opset in (case.opset, 12):
        model = node_model(
            "MaxPool", {"x": x}, {"y": (elem, None), "indices": (TensorProto.INT64, None)}, opset=opset, **attrs
        )
        try:
            _, indices = run_ort(model, {"x": x})
            return indices
        except Exception as exc:  # an opset this onnxruntime lacks: retry at 12
            last_error = exc
    raise Inexpressible(f"onnxruntime CPU MaxPool with Indices failed: {last_error}")


def expected_indices(case: NodeCase) -> np.ndarray:
    """The Indices oracle: ONNX's own expected Indices when present, else ORT CPU's."""
    if len(case.outputs) > 1:
        indices = np.asarray(case.outputs[1])
        if case.attrs.get("storage_order", 0) == 1:
            x = case.inputs[0]
            assert x is not None
            h, w = x.shape[2], x.shape[3]
            plane, rest = np.divmod(indices, h * w)
            col, row = np.divmod(rest, h)  # column-major: index = w * H + h
            indices = plane * h * w + row * w + col
        return indices
    return ort_indices(case)


def forward_case(case: NodeCase) -> DmlCase:
    """MAX_POOLING2 with OutputIndicesTensor (UINT64) against ONNX Y and the indices oracle."""
    reason = CASES.get(case.name)
    if reason:
        raise Inexpressible(reason)
    x, y, attrs = _as_4d(case)
    params = pooling_params(x.shape, y.shape, attrs)
    indices = expected_indices(case).reshape(y.shape).astype(np.uint64)
    desc = {
        "InputTensor": tensor(x.dtype, x.shape),
        "OutputTensor": tensor(y.dtype, y.shape),
        "OutputIndicesTensor": tensor(np.uint64, y.shape),
        "DimensionCount": x.ndim - 2,
        **params,
    }
    return DmlCase(
        "MAX_POOLING2",
        desc,
        {"InputTensor": x},
        {"OutputTensor": y, "OutputIndicesTensor": indices},
        note=NOTES.get(case.name, ""),
    )


def grad_case(case: NodeCase, seed: int = 0) -> DmlCase:
    """MAX_POOLING_GRAD against ``dx = scatter_add(dy, Indices)``."""
    reason = CASES.get(case.name) or GRAD_CASES.get(case.name)
    if reason:
        raise Inexpressible(reason)
    x, y, attrs = _as_4d(case)
    params = pooling_params(x.shape, y.shape, attrs)
    indices = expected_indices(case).ravel().astype(np.int64)
    dy = np.random.RandomState(seed).uniform(-1, 1, size=y.shape).astype(x.dtype)
    dx = np.zeros(x.size, dtype=np.float64)
    np.add.at(dx, indices, dy.astype(np.float64).ravel())
    desc = {
        "InputTensor": tensor(x.dtype, x.shape),
        "InputGradientTensor": tensor(x.dtype, y.shape),
        "OutputGradientTensor": tensor(x.dtype, x.shape),
        "DimensionCount": x.ndim - 2,
        **params,
    }
    return DmlCase(
        "MAX_POOLING_GRAD",
        desc,
        {"InputTensor": x, "InputGradientTensor": dy},
        {"OutputGradientTensor": dx.astype(x.dtype).reshape(x.shape)},
        rtol=1e-6,
        atol=1e-6,
        note=NOTES.get(case.name, ""),
    )
