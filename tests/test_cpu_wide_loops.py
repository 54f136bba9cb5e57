"""The cpu backend's numba-built ufuncs: wide loops, and outputs that are not contiguous.

The float32 transcendentals' contiguous tiles run a loop that LLVM vectorises with 64-byte
vectors (``elementwise._wide_loops``); other layouts the ufunc numba built from the same
scalar function. Both must give the same bits for every float32 class (the accuracy of
either against the reference is tested in test_cpu_elementwise.py), and a contiguous call
through the backend must use the loop. Where the CPU has AVX-512, EXP, SIGMOID and GELU run
on ``_vector_math``'s kernels instead, for every layout (tests/test_cpu_vector_math.py); the
loop serves ERF there, and the others where the CPU lacks it.

numba's ufunc loops write a strided or reversed output as if it were contiguous when every
input is contiguous (wrong elements, or past the output's end); every operator served by a
numba ufunc is checked against the reference with such outputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlops
from dmlops.descs import desc_from_json

pytest.importorskip("numba")

from dmlops.cpu import elementwise

SPECIALS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.17e-38, 88.72, 88.73, -87.3, -104.0, -200.0, 3.9, 4.1, 13.3],
    np.float32,
)


def _inputs(size: int) -> np.ndarray:
    rng = np.random.default_rng(size)
    x = (rng.standard_normal(size) * np.exp(rng.uniform(-6, 5, size))).astype(np.float32)
    x[rng.choice(size, size // 4, replace=False)] = rng.choice(SPECIALS, size // 4)
    x.view(np.uint32)[size // 2] = 0x7FC00123  # a NaN with a payload
    x.view(np.uint32)[size // 3] = 0xFF800001  # a signalling NaN, negative
    return x


def _wide_loop_names() -> list[str]:
    """The ufuncs whose contiguous calls take the wide loop on this CPU."""
    return [name for name in ("exp", "sigmoid", "erf", "gelu") if elementwise._numba_ufuncs()[name].vector is None]


@pytest.mark.parametrize("name", ["exp", "sigmoid", "erf", "gelu"])
@pytest.mark.parametrize("size", [1, 15, 16, 17, 1000, 4099])
def test_wide_loop_gives_the_ufunc_s_bits(name: str, size: int) -> None:
    fn = elementwise._numba_ufuncs()[name]
    if name not in _wide_loop_names():
        pytest.skip(
            f"{name} runs on the vector kernels here (test_cpu_vector_math.py); test_cpu_generic_target.py reruns this without them"
        )
    x = _inputs(size)
    wide, narrow = np.empty_like(x), np.empty_like(x)
    fn(x, out=wide)  # contiguous: the wide loop
    fn.ufunc(x, out=narrow)
    assert np.array_equal(wide.view(np.uint32), narrow.view(np.uint32))
    strided = np.empty(2 * size, np.float32)[::2]
    fn(x, out=strided)  # not contiguous: the ufunc, into a scratch array
    assert np.array_equal(strided.view(np.uint32), narrow.view(np.uint32))
    inplace = x.copy()
    fn(inplace, out=inplace)
    assert np.array_equal(inplace.view(np.uint32), narrow.view(np.uint32))


@pytest.mark.parametrize("operator", ["ELEMENT_WISE_EXP", "ACTIVATION_SIGMOID", "ELEMENT_WISE_ERF", "ACTIVATION_GELU"])
def test_contiguous_calls_take_the_wide_loop(monkeypatch: pytest.MonkeyPatch, operator: str) -> None:
    calls: list[int] = []
    if operator.split("_", 2)[-1].lower() not in _wide_loop_names():
        pytest.skip(
            f"{operator} runs on the vector kernels here (test_cpu_vector_math.py); test_cpu_generic_target.py reruns this without them"
        )
    fn = elementwise._numba_ufuncs()[operator.split("_", 2)[-1].lower()]
    real = fn.loop

    def spy(code: int, x: np.ndarray, out: np.ndarray) -> None:  # the wide loop itself, not the ufunc
        calls.append(x.size)
        real(code, x, out)

    monkeypatch.setattr(fn, "loop", spy)
    shape = [300, 70]
    desc = desc_from_json(
        operator,
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": shape},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": shape},
        },
    )
    x = _inputs(300 * 70).reshape(shape)
    got = dmlops.execute(desc, {"InputTensor": x}, backend="cpu")["OutputTensor"]
    want = elementwise._numba_ufuncs()[operator.split("_", 2)[-1].lower()].ufunc(x)
    assert sum(calls) == x.size
    assert np.array_equal(np.asarray(got).view(np.uint32), want.view(np.uint32))


NUMBA_UFUNC_OPERATORS = [
    ("ELEMENT_WISE_EXP", {}),
    ("ACTIVATION_SIGMOID", {}),
    ("ELEMENT_WISE_ERF", {}),
    ("ACTIVATION_GELU", {}),
    ("ACTIVATION_RELU", {}),
    ("ELEMENT_WISE_MAX", {}),
    ("ELEMENT_WISE_MIN", {}),
    ("ELEMENT_WISE_ADD1", {"FusedActivation": {"Type": "ACTIVATION_RELU"}}),
]


@pytest.mark.parametrize(("operator", "extra"), NUMBA_UFUNC_OPERATORS)
@pytest.mark.parametrize("layout", ["every other", "reversed", "transposed"])
def test_outputs_that_are_not_contiguous(operator: str, extra: dict, layout: str) -> None:
    shape = [37, 41]
    tensor = {"DataType": "FLOAT32", "Sizes": shape}
    binary = operator in ("ELEMENT_WISE_MAX", "ELEMENT_WISE_MIN", "ELEMENT_WISE_ADD1")
    names = ["ATensor", "BTensor"] if binary else ["InputTensor"]
    desc = desc_from_json(operator, {**{n: tensor for n in names}, "OutputTensor": tensor, **extra})
    rng = np.random.default_rng(len(operator))
    inputs = {n: (rng.standard_normal(shape) * 3).astype(np.float32) for n in names}
    guard = np.full(4 * 37 * 41, 7.0, np.float32)
    if layout == "every other":
        out = guard[1 : 1 + 2 * 37 * 41 : 2].reshape(shape)
    elif layout == "reversed":
        out = guard[1000 : 1000 + 37 * 41][::-1].reshape(shape)
    else:
        out = guard[: 37 * 41].reshape(shape[::-1]).T
    before = guard.copy()
    dmlops.execute(desc, inputs, backend="cpu", outputs={"OutputTensor": out})
    want = dmlops.execute(desc, inputs, backend="numpy")["OutputTensor"]
    np.testing.assert_allclose(out, want, rtol=2e-4, atol=1e-6)
    untouched = np.ones(guard.size, bool)
    untouched[np.unique(np.arange(guard.size).reshape(-1)[_positions(guard, out)])] = False
    assert np.array_equal(guard[untouched], before[untouched])  # nothing written outside the output


def _positions(base: np.ndarray, view: np.ndarray) -> np.ndarray:
    """The indices into 1-D ``base`` of ``view``'s elements."""
    start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize
    index = np.full(view.shape, start, np.int64)
    for axis, stride in enumerate(view.strides):
        shape = [1] * view.ndim
        shape[axis] = view.shape[axis]
        index = index + (np.arange(view.shape[axis]) * (stride // base.itemsize)).reshape(shape)
    return index.reshape(-1)
