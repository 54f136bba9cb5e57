"""SLICE1 against ONNX's Slice node tests (and ORT CPU Slice on random windows)."""

from __future__ import annotations

import pytest

pytest.importorskip("onnx")

import numpy as np
from _dml_case import DmlCase, check, oracle, tensor
from _map_slice import CASES, PREFIXES, slice_window, to_dml
from _onnx_cases import load_node_case, node_model, node_test_names, run_ort

pytestmark = pytest.mark.oracles

NAMES = node_test_names(PREFIXES)


def test_every_onnx_slice_case_is_classified() -> None:
    assert NAMES, "no ONNX Slice node tests found"
    assert set(NAMES) <= set(CASES), sorted(set(NAMES) - set(CASES))


@oracle("SLICE1", "ONNX node tests (Slice-13)")
@pytest.mark.parametrize("name", NAMES)
def test_onnx_slice(name: str, backend: str) -> None:
    reason = CASES[name]
    if reason:
        pytest.skip(f"inexpressible: {reason}")
    check(to_dml(load_node_case(name)), backend)


def _random_slices(count: int) -> list[tuple[tuple[int, ...], list[int], list[int], list[int], list[int], str]]:
    rng = np.random.RandomState(1234)
    cases = []
    dtypes = ["float32", "float16", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
    while len(cases) < count:
        rank = int(rng.randint(1, 7))
        shape = tuple(int(s) for s in rng.randint(1, 6, size=rank))
        axes = [int(a) for a in rng.permutation(rank)[: rng.randint(1, rank + 1)]]
        starts, ends, steps = [], [], []
        for a in axes:
            n = shape[a]
            step = int(rng.choice([-3, -2, -1, 1, 2, 3]))
            starts.append(int(rng.randint(-n - 2, n + 2)))
            ends.append(int(rng.choice([rng.randint(-n - 2, n + 2), 2**31 - 1, -(2**31)])))
            steps.append(step)
        *_, out = slice_window(shape, starts, ends, axes, steps)
        if 0 in out:
            continue  # empty outputs are not expressible (SLICE1 needs a non-empty window)
        cases.append((shape, starts, ends, axes, steps, dtypes[len(cases) % len(dtypes)]))
    return cases


@oracle("SLICE1", "onnxruntime CPU Slice-13 (random windows)")
@pytest.mark.parametrize("shape, starts, ends, axes, steps, dtype", _random_slices(24))
def test_ort_slice_random(shape, starts, ends, axes, steps, dtype, backend: str) -> None:
    pytest.importorskip("onnxruntime")
    x = (np.arange(int(np.prod(shape))) % 97).astype(dtype).reshape(shape)
    feeds = {
        "x": x,
        "starts": np.array(starts, np.int64),
        "ends": np.array(ends, np.int64),
        "axes": np.array(axes, np.int64),
        "steps": np.array(steps, np.int64),
    }
    from onnx import helper

    model = node_model("Slice", feeds, {"y": (helper.np_dtype_to_tensor_dtype(x.dtype), None)}, opset=13)
    (want,) = run_ort(model, feeds)
    offsets, sizes, strides, out = slice_window(shape, starts, ends, axes, steps)
    desc = {
        "InputTensor": tensor(x.dtype, shape),
        "OutputTensor": tensor(x.dtype, out),
        "DimensionCount": len(shape),
        "InputWindowOffsets": offsets,
        "InputWindowSizes": sizes,
        "InputWindowStrides": strides,
    }
    check(DmlCase("SLICE1", desc, {"InputTensor": x}, {"OutputTensor": want}), backend)
