"""ONNX Gather -> DML_GATHER, as ORT's DirectML EP maps it (oracles.md §2.1).

``DmlOperatorGather.cpp``: the data, indices and output tensors are padded with
leading 1s to one DimensionCount ``D = max(rank data, rank indices, rank output)``;
``Axis = onnx_axis + (D - rank data)`` (``GetDmlAdjustedAxis``) and
``IndexDimensions = rank(indices)``. Negative indices need a signed IndicesTensor,
which DML accepts from feature level 3_0.
"""

from __future__ import annotations

import numpy as np
from _dml_case import DmlCase, Inexpressible, tensor
from _onnx_cases import NodeCase

CASES: dict[str, str | None] = {
    "gather_0": None,
    "gather_1": None,
    "gather_2d_indices": None,
    "gather_negative_indices": None,
}
PREFIXES = ("gather_",)
# GatherElements and GatherND are other DML operators (GATHER_ELEMENTS, GATHER_ND).
EXCLUDE = ("gather_elements", "gathernd")


def padded(shape: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """``shape`` with leading 1s up to ``rank`` dimensions."""
    return (1,) * (rank - len(shape)) + tuple(shape)


def gather_case(data: np.ndarray, indices: np.ndarray, axis: int, expected: np.ndarray) -> DmlCase:
    """The DML_GATHER call equivalent to ONNX ``Gather(data, indices, axis)``."""
    axis = axis + data.ndim if axis < 0 else axis
    d = max(data.ndim, indices.ndim, expected.ndim, 1)
    desc = {
        "InputTensor": tensor(data.dtype, padded(data.shape, d)),
        "IndicesTensor": tensor(indices.dtype, padded(indices.shape, d)),
        "OutputTensor": tensor(data.dtype, padded(expected.shape, d)),
        "Axis": axis + d - data.ndim,
        "IndexDimensions": indices.ndim,
    }
    inputs = {
        "InputTensor": data.reshape(padded(data.shape, d)),
        "IndicesTensor": indices.reshape(padded(indices.shape, d)),
    }
    return DmlCase(
        "GATHER",
        desc,
        inputs,
        {"OutputTensor": expected.reshape(padded(expected.shape, d))},
        note="ORT GatherHelper mapping (leading-1 padding)",
    )


def to_dml(case: NodeCase) -> DmlCase:
    """The GATHER call that reproduces an ONNX Gather node test."""
    reason = CASES.get(case.name)
    if reason:
        raise Inexpressible(reason)
    data, indices = case.inputs
    assert data is not None and indices is not None
    (y,) = case.outputs
    return gather_case(data, indices, int(case.attrs.get("axis", 0)), np.asarray(y))
