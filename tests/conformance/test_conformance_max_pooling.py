"""MAX_POOLING2 / MAX_POOLING_GRAD against ONNX MaxPool node tests, ORT CPU and torch.

* MAX_POOLING2 with OutputIndicesTensor: Y from the ONNX expected output; Indices from
  ONNX (the argmax tests) or onnxruntime CPU MaxPool's second output.
* MAX_POOLING_GRAD: ``dx = scatter_add(dy, Indices)`` with the same indices.
* torch ``max_pool2d`` / ``max_pool3d`` autograd on tie-heavy inputs (values in
  {0, 1, 2}): torch CPU, ORT CPU and DML all let the lowest index win a tie.
"""

from __future__ import annotations

import itertools

import pytest

pytest.importorskip("onnx")

import numpy as np
from _dml_case import DmlCase, check, oracle, tensor
from _map_maxpool import CASES, GRAD_CASES, NOTES, PREFIXES, forward_case, grad_case
from _onnx_cases import load_node_case, node_test_names

pytestmark = pytest.mark.oracles

NAMES = node_test_names(PREFIXES)


def test_every_onnx_maxpool_case_is_classified() -> None:
    assert NAMES, "no ONNX MaxPool node tests found"
    assert set(NAMES) <= set(CASES), sorted(set(NAMES) - set(CASES))


@oracle("MAX_POOLING2", "ONNX node tests (MaxPool-22) + ORT CPU Indices")
@pytest.mark.parametrize("name", NAMES)
def test_onnx_maxpool_forward(name: str, backend: str, record_property) -> None:
    pytest.importorskip("onnxruntime")
    reason = CASES[name]
    if reason:
        pytest.skip(f"inexpressible: {reason}")
    if name in NOTES:
        record_property("note", NOTES[name])
    check(forward_case(load_node_case(name)), backend)


@oracle("MAX_POOLING_GRAD", "ONNX node tests (MaxPool-22): scatter_add(dy, ORT CPU Indices)")
@pytest.mark.parametrize("name", NAMES)
def test_onnx_maxpool_grad(name: str, backend: str) -> None:
    pytest.importorskip("onnxruntime")
    reason = CASES[name] or GRAD_CASES.get(name)
    if reason:
        pytest.skip(f"inexpressible: {reason}")
    check(grad_case(load_node_case(name)), backend)


# -- torch autograd, tie-heavy -----------------------------------------------------------------


def torch_case(
    spatial: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: int,
    pad: int,
    dilation: int,
    ceil_mode: bool,
    seed: int,
    dtype: str = "float32",
) -> DmlCase | None:
    """MAX_POOLING_GRAD vs torch max_pool{2,3}d backward; None when torch rejects the config."""
    import torch
    import torch.nn.functional as F

    k = len(spatial)
    if any(pad > kk // 2 for kk in kernel):
        return None  # torch: pad should be at most half of the kernel size
    rng = np.random.RandomState(seed)
    x_np = rng.randint(0, 3, size=(2, 2, *spatial)).astype(dtype)
    x = torch.tensor(x_np, requires_grad=True)
    pool = F.max_pool2d if k == 2 else F.max_pool3d
    try:
        y = pool(x, kernel, stride=stride, padding=pad, dilation=dilation, ceil_mode=ceil_mode)
    except RuntimeError:
        return None  # output too small
    dy = rng.randint(1, 5, size=tuple(y.shape)).astype(dtype)
    y.backward(torch.from_numpy(dy))
    assert x.grad is not None
    end = []
    for n, kk, o in zip(spatial, kernel, y.shape[2:]):
        # ceil_mode: extra EndPadding (out-1)*s + (k-1)*d + 1 - (in + 2p) (oracles.md §3.2).
        end.append(pad + max((o - 1) * stride + (kk - 1) * dilation + 1 - (n + 2 * pad), 0))
    desc = {
        "InputTensor": tensor(x_np.dtype, x_np.shape),
        "InputGradientTensor": tensor(x_np.dtype, dy.shape),
        "OutputGradientTensor": tensor(x_np.dtype, x_np.shape),
        "DimensionCount": k,
        "Strides": [stride] * k,
        "WindowSize": list(kernel),
        "StartPadding": [pad] * k,
        "EndPadding": end,
        "Dilations": [dilation] * k,
    }
    tol = 1e-3 if dtype == "float16" else 0.0
    return DmlCase(
        "MAX_POOLING_GRAD",
        desc,
        {"InputTensor": x_np, "InputGradientTensor": dy},
        {"OutputGradientTensor": x.grad.numpy()},
        rtol=tol,
        atol=tol,
    )


@oracle("MAX_POOLING_GRAD", "torch max_pool2d/3d backward (CPU), tie-heavy inputs")
@pytest.mark.parametrize("kernel", [(2, 2), (3, 3), (2, 3)], ids=str)
def test_torch_max_pool2d_ties(kernel: tuple[int, int], backend: str, record_property) -> None:
    """Strides 1/2, pad 0/1, dilation 1/2, ceil mode off/on, two input shapes, values in {0,1,2}."""
    pytest.importorskip("torch")
    ran = 0
    for (stride, pad, dilation, ceil_mode), spatial in itertools.product(
        itertools.product([1, 2], [0, 1], [1, 2], [False, True]), [(7, 6), (5, 8)]
    ):
        case = torch_case(spatial, kernel, stride, pad, dilation, ceil_mode, seed=ran)
        if case is None:
            continue
        check(case, backend)
        ran += 1
    assert ran >= 16
    record_property("subcases", ran)


@oracle("MAX_POOLING_GRAD", "torch max_pool2d/3d backward (CPU), tie-heavy inputs")
@pytest.mark.parametrize(
    "kernel, stride, pad, dilation, ceil_mode",
    [((2, 2, 2), 1, 0, 1, False), ((3, 2, 2), 2, 1, 1, True), ((2, 3, 2), 1, 1, 2, False), ((3, 3, 3), 2, 0, 1, True)],
)
def test_torch_max_pool3d_ties(kernel, stride, pad, dilation, ceil_mode, backend: str) -> None:
    pytest.importorskip("torch")
    case = torch_case((5, 6, 4), kernel, stride, pad, dilation, ceil_mode, seed=3)
    assert case is not None
    check(case, backend)


@oracle("MAX_POOLING_GRAD", "torch max_pool2d/3d backward (CPU), tie-heavy inputs")
def test_torch_max_pool2d_ties_float16(backend: str) -> None:
    pytest.importorskip("torch")
    for seed, (stride, pad) in enumerate(itertools.product([1, 2], [0, 1])):
        case = torch_case((6, 6), (2, 2), stride, pad, 1, False, seed=seed, dtype="float16")
        assert case is not None
        check(case, backend)


@oracle("MAX_POOLING_GRAD", "torch max_pool2d/3d backward (CPU), tie-heavy inputs")
def test_seed_example_matches_torch(backend: str) -> None:
    pytest.importorskip("torch")
    # The page's example: 3x3 input, 2x2 window, stride 1 -> [[0,0,0],[0,3,0],[0,4,5]] (index 4 receives 1+2).
    import torch

    x_np = np.array([[1, 2, 3], [2, 4, 2], [5, 6, 7]], np.float32)[None, None]
    dy = np.array([[1, 2], [4, 5]], np.float32)[None, None]
    x = torch.tensor(x_np, requires_grad=True)
    torch.nn.functional.max_pool2d(x, 2, stride=1).backward(torch.from_numpy(dy))
    assert x.grad is not None
    want = np.array([[0, 0, 0], [0, 3, 0], [0, 4, 5]], np.float32)[None, None]
    np.testing.assert_array_equal(x.grad.numpy(), want)
    desc = {
        "InputTensor": tensor(np.float32, (1, 1, 3, 3)),
        "InputGradientTensor": tensor(np.float32, (1, 1, 2, 2)),
        "OutputGradientTensor": tensor(np.float32, (1, 1, 3, 3)),
        "DimensionCount": 2,
        "Strides": [1, 1],
        "WindowSize": [2, 2],
        "StartPadding": [0, 0],
        "EndPadding": [0, 0],
        "Dilations": [1, 1],
    }
    inputs = {"InputTensor": x_np, "InputGradientTensor": dy}
    check(DmlCase("MAX_POOLING_GRAD", desc, inputs, {"OutputGradientTensor": want}), backend)
