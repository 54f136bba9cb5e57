"""GATHER against ONNX's Gather node tests and ORT CPU Gather-13 on random cases."""

from __future__ import annotations

import pytest

pytest.importorskip("onnx")

import numpy as np
from _dml_case import check, oracle
from _map_gather import CASES, EXCLUDE, PREFIXES, gather_case, to_dml
from _onnx_cases import load_node_case, node_model, node_test_names, run_ort

pytestmark = pytest.mark.oracles

NAMES = node_test_names(PREFIXES, exclude=EXCLUDE)


def test_every_onnx_gather_case_is_classified() -> None:
    assert NAMES, "no ONNX Gather node tests found"
    assert set(NAMES) <= set(CASES), sorted(set(NAMES) - set(CASES))


@oracle("GATHER", "ONNX node tests (Gather-13)")
@pytest.mark.parametrize("name", NAMES)
def test_onnx_gather(name: str, backend: str) -> None:
    reason = CASES[name]
    if reason:
        pytest.skip(f"inexpressible: {reason}")
    check(to_dml(load_node_case(name)), backend)


def _random_gathers(count: int) -> list[tuple[tuple[int, ...], tuple[int, ...], int, str, str]]:
    # Only indices in [-n, n): ONNX and ORT reject others, DML clamps (oracles.md §4.8).
    rng = np.random.RandomState(99)
    dtypes = ["float32", "float16", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
    index_types = ["int64", "int32"]
    cases = []
    while len(cases) < count:
        rank = int(rng.randint(1, 5))
        shape = tuple(int(s) for s in rng.randint(1, 5, size=rank))
        idx_rank = int(rng.randint(0, 4))
        if rank + idx_rank - 1 > 8:
            continue
        idx_shape = tuple(int(s) for s in rng.randint(1, 4, size=idx_rank))
        axis = int(rng.randint(-rank, rank))
        cases.append((shape, idx_shape, axis, dtypes[len(cases) % len(dtypes)], index_types[len(cases) % 2]))
    return cases


@oracle("GATHER", "onnxruntime CPU Gather-13 (random, negative indices)")
@pytest.mark.parametrize("shape, idx_shape, axis, dtype, index_type", _random_gathers(24))
def test_ort_gather_random(shape, idx_shape, axis, dtype, index_type, backend: str) -> None:
    pytest.importorskip("onnxruntime")
    from onnx import helper

    rng = np.random.RandomState(int(np.prod(shape)) * 31 + len(idx_shape) * 7 + axis + 8)
    data = (np.arange(int(np.prod(shape))) % 101).astype(dtype).reshape(shape)
    n = shape[axis]
    indices = rng.randint(-n, n, size=idx_shape).astype(index_type)
    feeds = {"data": data, "indices": indices}
    model = node_model("Gather", feeds, {"y": (helper.np_dtype_to_tensor_dtype(data.dtype), None)}, opset=13, axis=axis)
    (want,) = run_ort(model, feeds)
    case = gather_case(data, indices, axis, want)
    # A 0-d index (scalar) has IndexDimensions 0: the axis is removed and a leading 1 prepended.
    check(case, backend)
