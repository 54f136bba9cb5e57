"""Generic descs run end to end on the real DirectML, checked against NumPy formulas.

Each case is a DxDispatch-shaped desc read with ``desc_from_json`` and run with
``dmlops.execute(..., backend="directml")``; tensor arrays bind as ``Name[i]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from _directml import directml  # noqa: F401  (fixture)

import dmlops
from dmlops.descs import desc_from_json

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]


def T(*sizes: int, dtype: str = "FLOAT32") -> dict[str, Any]:
    return {"DataType": dtype, "Sizes": list(sizes)}


rng = np.random.default_rng(19)
A = rng.uniform(-4, 4, (2, 3, 4, 5)).astype(np.float32)
B = rng.uniform(-4, 4, (2, 3, 4, 5)).astype(np.float32)
M = rng.uniform(-2, 2, (1, 1, 3, 4)).astype(np.float32)
N = rng.uniform(-2, 2, (1, 1, 4, 2)).astype(np.float32)
IMG = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 2, 2)
S = (2, 3, 4, 5)

CASES: dict[str, tuple[str, dict[str, Any], dict[str, np.ndarray], Callable[..., dict[str, np.ndarray]]]] = {
    "add1_relu": (
        "ELEMENT_WISE_ADD1",
        {"ATensor": T(*S), "BTensor": T(*S), "OutputTensor": T(*S), "FusedActivation": {"Type": "ACTIVATION_RELU"}},
        {"ATensor": A, "BTensor": B},
        lambda: {"OutputTensor": np.maximum(A + B, 0)},
    ),
    "clip1": (
        "ELEMENT_WISE_CLIP1",
        {"InputTensor": T(*S), "OutputTensor": T(*S), "MinMaxDataType": "FLOAT32", "Min": -1.5, "Max": {"Float32": 2}},
        {"InputTensor": A},
        lambda: {"OutputTensor": np.clip(A, -1.5, 2)},
    ),
    "identity_scale_bias": (
        "ELEMENT_WISE_IDENTITY",
        {"InputTensor": T(*S), "OutputTensor": T(*S), "ScaleBias": {"Scale": 0.5, "Bias": 3}},
        {"InputTensor": A},
        lambda: {"OutputTensor": 0.5 * A + 3},
    ),
    "join": (
        "JOIN",
        {"InputCount": 2, "InputTensors": [T(*S), T(2, 3, 4, 5)], "OutputTensor": T(2, 3, 8, 5), "Axis": 2},
        {"InputTensors[0]": A, "InputTensors[1]": B},
        lambda: {"OutputTensor": np.concatenate([A, B], axis=2)},
    ),
    "split": (
        "SPLIT",
        {"InputTensor": T(*S), "OutputCount": 2, "OutputTensors": [T(2, 1, 4, 5), T(2, 2, 4, 5)], "Axis": 1},
        {"InputTensor": A},
        lambda: {"OutputTensors[0]": A[:, :1], "OutputTensors[1]": A[:, 1:]},
    ),
    "cast": (
        "CAST",
        {"InputTensor": T(*S), "OutputTensor": T(*S, dtype="INT32")},
        {"InputTensor": np.abs(A) * 10},  # non-negative: the stack's negative float->int is not D3D12's
        lambda: {"OutputTensor": np.trunc(np.abs(A) * 10).astype(np.int32)},
    ),
    "fill_value_sequence": (
        "FILL_VALUE_SEQUENCE",
        {"OutputTensor": T(1, 1, 2, 3), "ValueDataType": "FLOAT32", "ValueStart": 3.5, "ValueDelta": -0.5},
        {},
        lambda: {"OutputTensor": (3.5 - 0.5 * np.arange(6, dtype=np.float32)).reshape(1, 1, 2, 3)},
    ),
    "reduce_sum": (
        "REDUCE",
        {"Function": "SUM", "InputTensor": T(*S), "OutputTensor": T(2, 1, 4, 1), "AxisCount": 2, "Axes": [1, 3]},
        {"InputTensor": A},
        lambda: {"OutputTensor": A.sum(axis=(1, 3), keepdims=True)},
    ),
    "gemm": (
        "GEMM",
        {
            "ATensor": T(1, 1, 3, 4),
            "BTensor": T(1, 1, 4, 2),
            "CTensor": T(1, 1, 3, 2),
            "OutputTensor": T(1, 1, 3, 2),
            "TransA": "NONE",
            "TransB": "NONE",
            "Alpha": 2,
            "Beta": 0.5,
        },
        {"ATensor": M, "BTensor": N, "CTensor": np.ones((1, 1, 3, 2), np.float32)},
        lambda: {"OutputTensor": 2 * M @ N + 0.5},
    ),
    "cumulative_summation": (
        "CUMULATIVE_SUMMATION",
        {
            "InputTensor": T(*S),
            "OutputTensor": T(*S),
            "Axis": 3,
            "AxisDirection": "DECREASING",
            "HasExclusiveSum": True,
        },
        {"InputTensor": A},
        lambda: {"OutputTensor": np.flip(np.cumsum(np.flip(A, 3), axis=3), 3) - A},
    ),
    # SLICE's Sizes are the output's: elements Offsets + i * Strides
    "slice": (
        "SLICE",
        {
            "InputTensor": T(*S),
            "OutputTensor": T(1, 2, 2, 2),
            "DimensionCount": 4,
            "Offsets": [1, 0, 1, 0],
            "Sizes": [1, 2, 2, 2],
            "Strides": [1, 2, 2, 3],
        },
        {"InputTensor": A},
        lambda: {"OutputTensor": A[1:2, 0:3:2, 1:4:2, 0:5:3]},
    ),
    "upsample_2d_nearest": (
        "UPSAMPLE_2D",
        {
            "InputTensor": T(1, 1, 2, 2),
            "OutputTensor": T(1, 1, 4, 6),
            "ScaleSize": {"Width": 3, "Height": 2},
            "InterpolationMode": "NEAREST_NEIGHBOR",
        },
        {"InputTensor": IMG},
        lambda: {"OutputTensor": IMG.repeat(2, axis=2).repeat(3, axis=3)},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_generic_operator_on_directml(case: str) -> None:
    operator, desc_json, inputs, expected = CASES[case]
    desc = desc_from_json(operator, desc_json, require_counts=True)
    got = dmlops.execute(desc, inputs, backend="directml")
    want = expected()
    assert got.keys() == want.keys()
    for member, value in want.items():
        np.testing.assert_allclose(got[member], value, rtol=1e-5, atol=1e-5, err_msg=member)
        assert got[member].dtype == value.dtype, member


def test_rnn_with_activation_array_runs() -> None:
    """operator_desc_array (RNN's ActivationDescs): one forward step of tanh(x W^T + h R^T), h0 = 0."""
    x = rng.uniform(-1, 1, (1, 1, 1, 3)).astype(np.float32)
    w = rng.uniform(-1, 1, (1, 1, 2, 3)).astype(np.float32)
    r = rng.uniform(-1, 1, (1, 1, 2, 2)).astype(np.float32)
    desc = desc_from_json(
        "RNN",
        {"InputTensor": T(1, 1, 1, 3), "WeightTensor": T(1, 1, 2, 3), "RecurrenceTensor": T(1, 1, 2, 2),
         "OutputSingleTensor": T(1, 1, 1, 2), "ActivationDescCount": 1,
         "ActivationDescs": [{"Type": "ACTIVATION_TANH"}], "Direction": "FORWARD"},
    )  # fmt: skip
    got = dmlops.execute(desc, {"InputTensor": x, "WeightTensor": w, "RecurrenceTensor": r}, backend="directml")
    np.testing.assert_allclose(got["OutputSingleTensor"][0, 0, 0], np.tanh(w[0, 0] @ x[0, 0, 0]), rtol=1e-5, atol=1e-6)
