"""The seven operators on the real DirectML, against the NumPy reference.

Every worked example of tests/vectors runs as it is and again with every tensor
strided (flat input buffers with junk in the gaps, preallocated flat output buffers
whose gaps must survive). Known divergences are xfail (strict) with their evidence.
"""

from __future__ import annotations

import numpy as np
import pytest
from _directml import (
    KNOWN_DIVERGENCES,
    addressed_mask,
    close,
    directml,  # noqa: F401  (fixture)
    flat_buffer,
    isclose_reason,
    restrided,
)

import dmlops
from dmlops.descs.data_movement import Slice1Desc
from dmlops.enums import FeatureLevel, TensorDataType
from dmlops.tensor import TensorDesc
from vector_cases import load_vectors

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

OPERATORS = ("gather", "slice1", "max_pooling2", "max_pooling_grad", "resample2", "resample_grad1", "roi_align")
VECTORS = [v for op in OPERATORS for v in load_vectors(op) if v.expect_invalid is None]


def _params() -> list[object]:
    params = []
    for v in VECTORS:
        reason = KNOWN_DIVERGENCES.get(v.name)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(v, id=v.name, marks=marks))
    return params


def test_every_operator_has_vectors() -> None:
    assert {v.name.split("/")[0] for v in VECTORS} == set(OPERATORS)


@pytest.mark.parametrize("vector", _params())
def test_vector(vector) -> None:
    desc, inputs, expected = vector.build()
    got = dmlops.execute(desc, inputs, backend="directml", feature_level=vector.feature_level)
    ref = dmlops.execute(desc, inputs, backend="numpy", feature_level=vector.feature_level)
    assert set(got) == set(ref)
    for member, want in ref.items():
        assert close(got[member], want), f"{member}: {isclose_reason(got[member], want)}"
    for member, want in expected.items():
        assert close(got[member], want), f"{member} vs the page: {isclose_reason(got[member], want)}"


def _junk(dtype: np.dtype) -> float:
    return float("nan") if dtype.kind == "f" else 77


def _sentinel(dtype: np.dtype) -> float:
    return -5.5 if dtype.kind == "f" else 123


@pytest.mark.parametrize("vector", _params())
def test_vector_strided(vector) -> None:
    plain, logical_inputs, _ = vector.build()
    desc = restrided(plain)
    desc.validate(vector.feature_level)
    tensors = desc.tensors()
    inputs = {m: flat_buffer(tensors[m], a, _junk(a.dtype)) for m, a in logical_inputs.items()}
    outputs = {}
    for member in desc.tensor_names("output"):
        t = tensors[member]
        outputs[member] = np.full(t.addressed_element_span, _sentinel(t.dtype), dtype=t.dtype)
    got = dmlops.execute(desc, inputs, backend="directml", feature_level=vector.feature_level, outputs=outputs)
    ref = dmlops.execute(plain, logical_inputs, backend="numpy", feature_level=vector.feature_level)
    for member, want in ref.items():
        t = tensors[member]
        buf = got[member]
        assert buf is outputs[member]
        mask = addressed_mask(t)
        assert np.all(buf[~mask] == _sentinel(t.dtype)), f"{member}: an element outside the strides was written"
        logical = np.lib.stride_tricks.as_strided(
            buf, shape=t.sizes, strides=[s * buf.itemsize for s in t.element_strides]
        )
        assert close(logical.copy(), want), f"{member}: {isclose_reason(logical, want)}"


def test_broadcast_input() -> None:
    # A 1x1x3x4 input whose rows all alias one stored row (stride 0).
    row = np.array([1.5, -2.0, 3.25, 8.0], dtype=np.float32)
    x_desc = TensorDesc(data_type=TensorDataType.FLOAT32, sizes=(1, 1, 3, 4), strides=(0, 0, 0, 1))
    desc = Slice1Desc(
        input_tensor=x_desc,
        output_tensor=TensorDesc(data_type=TensorDataType.FLOAT32, sizes=(1, 1, 2, 2)),
        input_window_offsets=(0, 0, 1, 0),
        input_window_sizes=(1, 1, 2, 4),
        input_window_strides=(1, 1, 1, -3),
    )
    got = dmlops.execute(desc, {"InputTensor": row}, backend="directml")["OutputTensor"]
    want = dmlops.execute(desc, {"InputTensor": row}, backend="numpy")["OutputTensor"]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[0, 0], [[8.0, 1.5], [8.0, 1.5]])


@pytest.mark.parametrize("data_type", ["FLOAT64", "INT8", "UINT8", "INT32", "UINT32", "INT64", "UINT64"])
def test_slice1_data_types(data_type: str) -> None:
    t = TensorDataType.from_any(data_type)
    x = (np.arange(24) * 7 - 50).astype(t.numpy_dtype).reshape(2, 3, 4)
    got = dmlops.slice1(x, offsets=[1, 0, 1], sizes=[1, 3, 3], strides=[1, -1, 2], backend="directml")
    want = dmlops.slice1(x, offsets=[1, 0, 1], sizes=[1, 3, 3], strides=[1, -1, 2])
    np.testing.assert_array_equal(got, want)


def test_every_feature_level_runs() -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    for level in FeatureLevel:
        if level < FeatureLevel.V2_1:  # SLICE1's level
            continue
        got = dmlops.slice1(x, offsets=[0, 0, 1, 1], sizes=[1, 1, 2, 2], strides=[1, 1, 1, 1], backend="directml")
        np.testing.assert_array_equal(got[0, 0], [[5, 6], [9, 10]])


@pytest.mark.parametrize("owned", [(True, False), (False, True), (True, True)], ids=["input", "indices", "both"])
def test_owned_by_dml_inputs_are_bound_at_initialization(owned) -> None:
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    idx = np.array([2, 0, 3], np.int32).reshape(1, 1, 1, 3)
    flag = {True: "OWNED_BY_DML", False: "NONE"}
    desc = dmlops.desc_from_json(
        "DML_OPERATOR_GATHER",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 4], "Flags": flag[owned[0]]},
            "IndicesTensor": {"DataType": "INT32", "Sizes": [1, 1, 1, 3], "Flags": flag[owned[1]]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
            "Axis": 3,
            "IndexDimensions": 1,
        },
    )
    got = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": idx}, backend="directml")["OutputTensor"]
    np.testing.assert_array_equal(got, x[..., [2, 0, 3]])
