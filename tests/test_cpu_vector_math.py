"""The cpu backend's float32 EXP, SIGMOID, GELU and SOFTMAX on 64-byte vectors (``cpu/_vector_math.py``).

Oracles: float64 NumPy (``np.exp``, the logistic function, ``math.erf``) rounded to float32,
with the error bounds the module documents; IEEE's rules for the special values; and the
element's own result computed alone (a lane's result depends on that lane only, so position,
layout and the masked last vector must not change a bit). Where the CPU lacks AVX-512 the
kernels are not used and these tests skip; the numba ufuncs then serve, tested in
test_cpu_wide_loops.py and test_cpu_elementwise.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dmlops
from dmlops.descs import desc_from_json

pytest.importorskip("numba")

from dmlops.cpu import _vector_math, elementwise

pytestmark = pytest.mark.skipif(not _vector_math.available(), reason="the CPU has no AVX-512F")

CODES = {"exp": _vector_math.EXP, "sigmoid": _vector_math.SIGMOID, "gelu": _vector_math.GELU}


def _apply(name: str, x: np.ndarray, stream: bool = False) -> np.ndarray:
    out = np.full(x.shape, 7.0, np.float32)
    _vector_math.mapper()(CODES[name], x.reshape(-1), out.reshape(-1), stream)
    return out


def _sample(size: int, low: float, high: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate(
        [rng.uniform(low, high, size).astype(np.float32), (rng.standard_normal(size) * 4).astype(np.float32)]
    )


def _ulps(got: np.ndarray, want64: np.ndarray) -> np.ndarray:
    """|got - want| in units of the last place of the float32 ``want`` (rounded from ``want64``)."""
    want = want64.astype(np.float32)
    return np.abs(got.astype(np.float64) - want64) / np.spacing(np.abs(want)).astype(np.float64)


def test_exp_is_within_one_unit_in_the_last_place() -> None:
    x = _sample(400_000, -87.0, 88.7, 1)
    want = np.exp(x.astype(np.float64))
    got = _apply("exp", x)
    assert np.max(np.abs(got - want) / want) <= 2.0**-23  # one unit of a float32 in [1, 2)


def test_exp_underflows_gradually_and_overflows_to_infinity() -> None:
    x = np.linspace(-104.5, -87.0, 20_001, dtype=np.float32)  # subnormal and smallest normal results
    got = _apply("exp", x)
    want = np.exp(x.astype(np.float64))
    smallest = np.float64(2.0**-149)
    assert np.all(np.abs(got - want) <= smallest)  # within one subnormal step (correctly scaled)
    assert np.all(np.diff(got) >= 0)  # monotone across the subnormal range
    edges = np.array([88.72283, 88.722839, 88.7229, 1e30, np.inf, -103.98, -104.0, -1e30, -np.inf], np.float32)
    got = _apply("exp", edges)
    assert np.isfinite(got[0]) and got[0] > 3.4e38
    assert np.all(np.isinf(got[1:5])) and np.all(got[1:5] > 0)
    assert got[5] == np.float32(2.0**-149) * 1 or got[5] == 0  # exp(-103.98) = 1.1e-45: one step or none
    assert np.array_equal(got[6:], np.zeros(3, np.float32))


def test_nan_stays_nan() -> None:
    x = np.array([np.nan, -np.nan, 1.0, np.nan], np.float32)
    x.view(np.uint32)[3] = 0xFF800001  # a signalling NaN
    for name in CODES:
        got = _apply(name, x)
        assert np.isnan(got[[0, 1, 3]]).all() and not np.isnan(got[2]), name


def test_sigmoid_is_within_three_units_and_saturates() -> None:
    x = _sample(400_000, -87.0, 20.0, 2)
    x64 = x.astype(np.float64)
    want = 1.0 / (1.0 + np.exp(-x64))
    assert _ulps(_apply("sigmoid", x), want).max() <= 3.0
    edges = np.array([np.inf, 100.0, -np.inf, -100.0, 0.0, -0.0], np.float32)
    assert np.array_equal(_apply("sigmoid", edges), np.array([1, 1, 0, 0, 0.5, 0.5], np.float32))


def test_gelu_is_within_the_documented_error() -> None:
    # gelu32's comment: at most 0.15 of TOLERANCE (1e-6 absolute + 2e-4 relative) from the float64 GELU
    x = _sample(200_000, -14.0, 14.0, 3)
    x64 = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    want = 0.5 * x64 * (1.0 + erf(x64 / math.sqrt(2.0)))
    err = np.abs(_apply("gelu", x) - want)
    assert np.all(err <= 0.15 * (1e-6 + 2e-4 * np.abs(want)))
    edges = np.array([np.inf, -np.inf, 0.0, -0.0, 30.0, -30.0], np.float32)
    got = _apply("gelu", edges)
    assert got[0] == np.inf and np.isnan(got[1])  # -inf * Phi(-inf) = -inf * 0
    assert np.array_equal(got[2:].view(np.uint32), np.array([0.0, -0.0, 30.0, -0.0], np.float32).view(np.uint32))


@pytest.mark.parametrize("name", list(CODES))
@pytest.mark.parametrize("size", [1, 15, 16, 17, 33, 1000])
def test_a_lane_s_result_depends_on_that_lane_alone(name: str, size: int) -> None:
    x = _sample(size, -90.0, 90.0, size)[:size]
    whole = _apply(name, x)
    alone = np.concatenate([_apply(name, x[i : i + 1]) for i in range(size)])  # each in a masked vector
    assert np.array_equal(whole.view(np.uint32), alone.view(np.uint32))
    for stream in (False, True):  # streamed: a masked head up to a 64-byte boundary, whole lines, a masked tail
        for offset in (16, 17, 29):
            guard = np.full(size + 64, 7.0, np.float32)  # the masked vectors write nothing outside
            _vector_math.mapper()(CODES[name], x, guard[offset : offset + size], stream)
            assert np.all(guard[:offset] == 7.0) and np.all(guard[offset + size :] == 7.0)
            assert np.array_equal(guard[offset : offset + size].view(np.uint32), whole.view(np.uint32))


@pytest.mark.parametrize(
    ("operator", "name"), [("ELEMENT_WISE_EXP", "exp"), ("ACTIVATION_SIGMOID", "sigmoid"), ("ACTIVATION_GELU", "gelu")]
)
@pytest.mark.parametrize("layout", ["contiguous", "strided input", "strided output", "in place"])
def test_every_layout_gives_the_kernel_s_bits(operator: str, name: str, layout: str) -> None:
    shape = [129, 67]
    rng = np.random.default_rng(len(layout))
    x = (rng.standard_normal(shape) * 6).astype(np.float32)
    want = _apply(name, x)
    tensor = {"DataType": "FLOAT32", "Sizes": shape}
    desc = desc_from_json(operator, {"InputTensor": tensor, "OutputTensor": tensor})
    if layout == "strided input":
        source = np.zeros((shape[0], 2 * shape[1]), np.float32)[:, ::2]
        source[...] = x
        got = dmlops.execute(desc, {"InputTensor": source}, backend="cpu")["OutputTensor"]
    elif layout == "strided output":
        got = np.zeros((shape[0], 2 * shape[1]), np.float32)[:, ::2]
        dmlops.execute(desc, {"InputTensor": x}, backend="cpu", outputs={"OutputTensor": got})
    elif layout == "in place":
        got = x.copy()
        dmlops.execute(desc, {"InputTensor": got}, backend="cpu", outputs={"OutputTensor": got})
    else:
        got = dmlops.execute(desc, {"InputTensor": x}, backend="cpu")["OutputTensor"]
    assert np.array_equal(np.asarray(got).view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("operator", ["ELEMENT_WISE_EXP", "ACTIVATION_SIGMOID", "ACTIVATION_GELU"])
def test_the_backend_calls_the_vector_kernel(monkeypatch: pytest.MonkeyPatch, operator: str) -> None:
    calls: list[int] = []
    real = _vector_math.mapper()

    def spy(code: int, x: np.ndarray, out: np.ndarray, stream: bool) -> None:
        calls.append(x.size)
        real(code, x, out, stream)

    for name in ("exp", "sigmoid", "gelu"):
        monkeypatch.setattr(elementwise._numba_ufuncs()[name], "apply", spy)
    shape = [300, 70]
    tensor = {"DataType": "FLOAT32", "Sizes": shape}
    desc = desc_from_json(operator, {"InputTensor": tensor, "OutputTensor": tensor})
    x = np.linspace(-20, 20, 300 * 70, dtype=np.float32).reshape(shape)
    dmlops.execute(desc, {"InputTensor": x}, backend="cpu")
    assert sum(calls) == x.size


@pytest.mark.parametrize("stream", [False, True])
def test_softmax_pass(stream: bool) -> None:
    fn = _softmax_pass_kernel()
    rng = np.random.default_rng(5)
    for n in (1, 15, 16, 17, 100, 1025, 3000):  # 3000: several float32 blocks
        x = (rng.standard_normal(n) * 10).astype(np.float32)
        following = (rng.standard_normal(n + 16) * 10).astype(np.float32)
        following[n] = 1e30  # past count: never read
        following[: n // 2] = np.nan  # NaN never wins
        done = rng.standard_normal(n + 16).astype(np.float32)
        factor = np.float32(0.37)
        m = np.float32(x.max())
        out = np.full(n + 16, 7.0, np.float32)
        guard = np.full(n + 48, 7.0, np.float32)
        target = guard[5 : 5 + n]  # not 64-byte aligned: a masked head when streamed
        total, largest = fn(x, m, out, n, following, done, factor, target, True, stream)
        exact = np.exp((x - m).astype(np.float64))  # x - m is exact here: m is one of x's float32
        assert np.all(np.abs(out[:n] - exact) <= 2.0**-23 * exact)
        assert np.all(out[n:] == 7.0)
        assert abs(float(total) - math.fsum(out[:n].astype(np.float64))) <= 4e-6 * float(
            total
        )  # 64-term float32 blocks
        assert abs(float(total) - exact.sum()) <= 1e-6 * n * exact.sum()
        numbers = following[:n][~np.isnan(following[:n])]
        assert largest == (numbers.max() if numbers.size else -np.inf)
        assert np.array_equal(target, done[:n] * factor)  # the previous row: float32 products
        assert np.all(guard[:5] == 7.0) and np.all(guard[5 + n :] == 7.0)
        for offset in range(16):  # the sum's bits do not depend on where the streamed target row sits
            other = np.empty(n + 48, np.float32)[offset : offset + n]
            again, _ = fn(x, m, out, n, following, done, factor, other, True, stream)
            assert np.float64(again).view(np.uint64) == np.float64(total).view(np.uint64)
            assert np.array_equal(other, target)
        untouched = target.copy()
        fn(x, m, out, n, following, done, np.float32(2.0), target, False, stream)
        assert np.array_equal(target, untouched)  # no previous row: nothing written


def _softmax_pass_kernel():  # type: ignore[no-untyped-def]
    from numba import njit

    elementwise._row_kernels()
    vector = elementwise._SOFTMAX_PASS

    @njit
    def call(x, m, out, n, following, done, factor, target, previous, stream):  # type: ignore[no-untyped-def]
        if stream:
            return vector(x, m, out, n, following, done, factor, target, previous, True)
        return vector(x, m, out, n, following, done, factor, target, previous, False)

    return call


@pytest.mark.parametrize("shape", [[37, 1029], [4100, 1029], [1, 40], [2, 16]])  # [4100, 1029] is streamed
def test_softmax_rows_match_the_reference(shape: list[int]) -> None:
    rng = np.random.default_rng(6)
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    if shape[0] > 7:
        x[3, 5] = np.nan
        x[4] = -np.inf
        x[5] = np.nan
        x[6, ::2] = 0.0
        x[6, 1::2] = -0.0
        x[7, 9] = np.inf
    tensor = {"DataType": "FLOAT32", "Sizes": shape}
    desc = desc_from_json("ACTIVATION_SOFTMAX1", {"InputTensor": tensor, "OutputTensor": tensor, "Axes": [1]})
    got = dmlops.execute(desc, {"InputTensor": x}, backend="cpu")["OutputTensor"]
    want = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-9)
    inplace = x.copy()
    dmlops.execute(desc, {"InputTensor": inplace}, backend="cpu", outputs={"OutputTensor": inplace})
    np.testing.assert_array_equal(inplace, got)
