"""ONNX Slice -> DML_SLICE1, as ORT's DirectML EP maps it (oracles.md §2.2).

``SliceHelper::Initialize`` in ORT's ``OperatorHelper.cpp`` (used by
``DmlOperatorSlice.cpp``): axes that are not listed keep offset 0, the full size and
stride 1. For each listed axis: add ``dim`` to a negative start/end; if the step is
negative swap them and add 1 to both (the window ``[end+1, start+1)``); clamp the start
to ``>= 0`` and the end to ``<= dim``; then ``InputWindowOffsets = start``,
``InputWindowSizes = max(end - start, 0)``, ``InputWindowStrides = step`` and the
output size is ``ceil(size / |step|)``.
"""

from __future__ import annotations

import numpy as np
from _dml_case import DmlCase, Inexpressible, tensor
from _onnx_cases import NodeCase

# Every ONNX Slice node test: None when expressible, else the reason it is not.
CASES: dict[str, str | None] = {
    "slice": None,
    "slice_neg": None,
    "slice_end_out_of_bounds": None,
    "slice_default_axes": None,
    "slice_default_steps": None,
    "slice_neg_steps": None,
    "slice_negative_axes": None,
    "slice_start_out_of_bounds": "empty output [20, 0, 5]: SLICE1 requires a non-empty window and OutputSizes >= 1",
}
PREFIXES = ("slice",)


def slice_window(
    shape: tuple[int, ...], starts: list[int], ends: list[int], axes: list[int], steps: list[int]
) -> tuple[list[int], list[int], list[int], list[int]]:
    """(offsets, sizes, strides, output sizes) of an ONNX Slice, ORT-DML style."""
    rank = len(shape)
    offsets, sizes, strides = [0] * rank, list(shape), [1] * rank
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = axis + rank if axis < 0 else axis
        dim = shape[axis]
        if start < 0:
            start += dim
        if end < 0:
            end += dim
        if step < 0:
            start, end = end + 1, start + 1
        start = max(start, 0)
        end = min(end, dim)
        offsets[axis], sizes[axis], strides[axis] = start, max(end - start, 0), step
    out = [-(-size // abs(step)) for size, step in zip(sizes, strides)]
    return offsets, sizes, strides, out


def to_dml(case: NodeCase) -> DmlCase:
    """The SLICE1 call that reproduces an ONNX Slice node test."""
    reason = CASES.get(case.name)
    if reason:
        raise Inexpressible(reason)
    x, starts, ends, axes, steps = (list(case.inputs) + [None] * 5)[:5]
    assert x is not None and starts is not None and ends is not None
    rank = x.ndim
    axes_l = list(range(len(starts))) if axes is None else [int(a) for a in axes]
    steps_l = [1] * len(starts) if steps is None else [int(s) for s in steps]
    offsets, sizes, strides, out = slice_window(
        x.shape, [int(s) for s in starts], [int(e) for e in ends], axes_l, steps_l
    )
    if 0 in sizes:
        raise Inexpressible("empty window: SLICE1 requires InputWindowSizes >= 1")
    desc = {
        "InputTensor": tensor(x.dtype, x.shape),
        "OutputTensor": tensor(x.dtype, out),
        "DimensionCount": rank,
        "InputWindowOffsets": offsets,
        "InputWindowSizes": sizes,
        "InputWindowStrides": strides,
    }
    (y,) = case.outputs
    assert tuple(y.shape) == tuple(out), (y.shape, out)
    return DmlCase("SLICE1", desc, {"InputTensor": x}, {"OutputTensor": np.asarray(y)}, note="ORT SliceHelper mapping")
