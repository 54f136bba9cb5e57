"""AVERAGE_POOLING_GRAD, MAX_UNPOOLING, RESAMPLE_GRAD and VALUE_SCALE_2D against independent oracles.

Slow scalar-loop oracles written from the pages (one output element at a time), with the
rules DirectML 1.15.4 adds (errata E170-E172, measured in
tests/directml/test_directml_spatial_neighbours.py), and PyTorch where it has the same
operator (``@pytest.mark.oracles``). The page examples are vectors
(tests/vectors/average_pooling_grad, tests/vectors/resample_grad).
"""

from __future__ import annotations

import importlib
import itertools
from typing import Any

import numpy as np
import pytest

import dmlops
from conftest import backend_params, to_numpy
from dmlops.descs import desc_class, desc_from_json
from dmlops.errors import DataIndexError
from dmlops.ops import pooling as P
from dmlops.ops import resampling as R

F32 = np.float32


@pytest.mark.parametrize(
    ("operator", "family"),
    [
        ("AVERAGE_POOLING_GRAD", "pooling"),
        ("MAX_UNPOOLING", "pooling"),
        ("RESAMPLE_GRAD", "resampling"),
        ("VALUE_SCALE_2D", "resampling"),
    ],
)
def test_family_claims(operator: str, family: str) -> None:
    cls = desc_class(operator)
    assert cls.family == family
    assert cls.backends[0] == "numpy" and cls.backends[-1] == "directml"
    for backend in ("cpu", "cuda"):  # a backend is claimed exactly when its family module runs the operator
        table = importlib.import_module(f"dmlops.{backend}.{family}").OPERATORS
        assert (backend in cls.backends) == (operator in table), backend


# -- AVERAGE_POOLING_GRAD ------------------------------------------------------------------------


def average_pooling_grad_oracle(
    dy: np.ndarray, sizes: tuple[int, ...], window: list[int], strides: list[int], start: list[int], end: list[int],
    include_padding: bool,
) -> np.ndarray:  # fmt: skip
    """Scalar loop: every window of the forward (page: AVERAGE_POOLING), its divisor, its elements."""
    dx = np.zeros(sizes)
    spatial = sizes[2:]
    for o in itertools.product(*(range(m) for m in dy.shape[2:])):
        first = [o[i] * strides[i] - start[i] for i in range(len(spatial))]
        cells = [[c for c in range(f, f + k) if 0 <= c < n] for f, k, n in zip(first, window, spatial)]
        if include_padding:
            # E171: the window's part inside [-StartPadding, InputSize + EndPadding)
            divisor = 1
            for f, k, n, a, b in zip(first, window, spatial, start, end):
                divisor *= max(0, min(f + k, n + b) - max(f, -a))
        else:
            divisor = int(np.prod([len(c) for c in cells]))
        if 0 in strides:
            continue  # DirectML 1.15.4: a zero stride sends nothing
        for cell in itertools.product(*cells):
            dx[(slice(None), slice(None), *cell)] += dy[(slice(None), slice(None), *o)].astype(np.float64) / divisor
    return dx


@pytest.mark.parametrize("seed", range(40))
def test_average_pooling_grad_matches_loop_oracle(seed: int) -> None:
    rng = np.random.default_rng(seed)
    spatial = int(rng.integers(2, 4))
    sizes = (int(rng.integers(1, 3)), int(rng.integers(1, 3)), *(int(rng.integers(1, 6)) for _ in range(spatial)))
    window = [int(rng.integers(1, 4)) for _ in range(spatial)]
    strides = [int(rng.integers(0 if seed % 10 == 0 else 1, 3)) for _ in range(spatial)]
    start = [int(rng.integers(0, 3)) for _ in range(spatial)]
    end = [int(rng.integers(0, 3)) for _ in range(spatial)]
    out = [int(rng.integers(1, 6)) for _ in range(spatial)]  # free sizes: windows past EndPadding too
    include = bool(seed % 2)
    dy = rng.integers(-4, 5, (*sizes[:2], *out)).astype(F32)
    got = P.average_pooling_grad(
        dy, sizes, window, strides=strides, start_padding=start, end_padding=end, include_padding=include
    )
    want = average_pooling_grad_oracle(dy, sizes, window, strides, start, end, include)
    np.testing.assert_allclose(got, want.astype(F32), rtol=1e-6, atol=1e-6)


@pytest.mark.oracles
@pytest.mark.parametrize("include_padding", [False, True])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_average_pooling_grad_matches_torch(include_padding: bool, ceil_mode: bool) -> None:
    """PyTorch's avg_pool2d backward: count_include_pad clips the window to the padded input too (E171)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = torch.tensor(rng.standard_normal((2, 3, 7, 6)).astype(F32), requires_grad=True)
    y = torch.nn.functional.avg_pool2d(
        x, (3, 2), stride=(2, 2), padding=(1, 1), ceil_mode=ceil_mode, count_include_pad=include_padding
    )
    dy = rng.standard_normal(tuple(y.shape)).astype(F32)
    y.backward(torch.tensor(dy))
    got = P.average_pooling_grad(
        dy, (2, 3, 7, 6), [3, 2], strides=[2, 2], start_padding=[1, 1], end_padding=[1, 1],
        include_padding=include_padding,
    )  # fmt: skip
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-5, atol=1e-6)


# -- MAX_UNPOOLING --------------------------------------------------------------------------------


def max_unpooling_oracle(x: np.ndarray, indices: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """Scalar loop (page): zeros, then each value at its flat output element; out of range: no write (E170: 32 bits)."""
    out = np.zeros(int(np.prod(sizes)), dtype=x.dtype)
    for value, index in zip(x.reshape(-1), indices.reshape(-1)):
        index = int(index) % 2**32
        if index < out.size:
            out[index] = value
    return out.reshape(sizes)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.uint64])
@pytest.mark.parametrize("index_dtype", [np.uint32, np.uint64])
def test_max_unpooling_matches_loop_oracle(dtype: Any, index_dtype: Any) -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 100, (2, 3, 2, 3)).astype(dtype)
    sizes = (2, 3, 4, 5)
    indices = rng.permutation(130)[: x.size].astype(index_dtype).reshape(x.shape)  # some past the 120 elements
    if index_dtype == np.uint64:
        indices.flat[:3] += np.uint64(1 << 32)  # read as the low 32 bits (E170)
    got = P.max_unpooling(x, indices, sizes)
    np.testing.assert_array_equal(got, max_unpooling_oracle(x, indices, sizes))
    assert got.dtype == dtype


def test_max_unpooling_indices_count_over_the_whole_tensor() -> None:
    x = np.arange(1, 9, dtype=F32).reshape(2, 2, 1, 2)
    got = P.max_unpooling(x, np.array([15, 14, 13, 12, 11, 10, 9, 8], dtype=np.uint32).reshape(x.shape), [2, 2, 2, 2])
    np.testing.assert_array_equal(got.reshape(-1), [0] * 8 + [8, 7, 6, 5, 4, 3, 2, 1])


def test_max_unpooling_duplicates() -> None:
    x = np.array([5, 5, 7], dtype=F32).reshape(1, 1, 1, 3)
    same = P.max_unpooling(x, np.array([2, 2, 0], dtype=np.uint32).reshape(x.shape), [1, 1, 1, 3])
    np.testing.assert_array_equal(same.reshape(-1), [7, 0, 5])
    with pytest.raises(DataIndexError, match="undefined"):
        P.max_unpooling(x, np.array([2, 1, 2], dtype=np.uint32).reshape(x.shape), [1, 1, 1, 3])


@pytest.mark.oracles
def test_max_unpooling_inverts_torch_max_pool() -> None:
    """PyTorch's max_unpool2d; its indices count within each plane, DirectML's over the whole tensor."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((2, 3, 6, 8)).astype(F32))
    pooled, plane_indices = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
    want = torch.nn.functional.max_unpool2d(pooled, plane_indices, 2, output_size=(6, 8)).numpy()
    planes = np.arange(6, dtype=np.int64).reshape(2, 3, 1, 1) * 48
    indices = (plane_indices.numpy() + planes).astype(np.uint32)
    np.testing.assert_array_equal(P.max_unpooling(pooled.numpy(), indices, (2, 3, 6, 8)), want)
    # and dmlops's own max pooling indices feed it directly
    values, own = P.max_pooling2(x.numpy(), [2, 2], strides=[2, 2], return_indices=True)
    np.testing.assert_array_equal(P.max_unpooling(values, own, (2, 3, 6, 8)), want)


# -- RESAMPLE_GRAD --------------------------------------------------------------------------------


def resample1_taps(o: int, n: int, scale: float, ipo: float, opo: float, mode: str) -> list[tuple[int, float]]:
    """RESAMPLE1's taps of forward output ``o`` (page: x = (o - opo) / scale - ipo; nearest floor(x + 0.5))."""
    x = float(F32(F32(F32(o) - F32(opo)) * F32(F32(1) / F32(scale))) - F32(ipo))
    if mode == "NEAREST_NEIGHBOR":
        return [(min(max(int(np.floor(x + 0.5)), 0), n - 1), 1.0)]
    i0 = int(np.floor(x))
    t = x - i0
    return [(min(max(i0, 0), n - 1), 1 - t), (min(max(i0 + 1, 0), n - 1), t)]


def resample_grad_oracle(dy: np.ndarray, sizes: tuple[int, ...], desc: dict[str, Any]) -> np.ndarray:
    """Scalar loop: every InputGradient element sent to its forward taps (offsets named after the grad's tensors, E172)."""
    dx = np.zeros(sizes)
    for o in itertools.product(*(range(m) for m in dy.shape)):
        per_dim = [
            resample1_taps(o[d], sizes[d], desc["Scales"][d], desc["OutputPixelOffsets"][d],
                           desc["InputPixelOffsets"][d], desc["InterpolationMode"])
            for d in range(len(sizes))
        ]  # fmt: skip
        for taps in itertools.product(*per_dim):
            weight = float(np.prod([w for _, w in taps]))
            dx[tuple(i for i, _ in taps)] += weight * float(dy[o])
    return dx


@pytest.mark.parametrize("seed", range(30))
def test_resample_grad_matches_loop_oracle(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = (int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 6)))
    out = tuple(max(1, n + int(rng.integers(-1, 4))) for n in sizes)
    desc = {
        "InterpolationMode": ["NEAREST_NEIGHBOR", "LINEAR"][seed % 2],
        "Scales": [float(F32(m / n)) for n, m in zip(sizes, out)],
        "InputPixelOffsets": [float(F32(rng.choice([-0.5, 0.0, 0.25]))) for _ in sizes],
        "OutputPixelOffsets": [float(F32(rng.choice([0.5, 0.0, 0.75]))) for _ in sizes],
    }
    dy = rng.integers(-4, 5, out).astype(F32)
    got = R.resample_grad(
        dy, sizes, interpolation_mode=desc["InterpolationMode"], scales=desc["Scales"],
        input_pixel_offsets=desc["InputPixelOffsets"], output_pixel_offsets=desc["OutputPixelOffsets"],
    )  # fmt: skip
    np.testing.assert_allclose(got, resample_grad_oracle(dy, sizes, desc), rtol=1e-6, atol=1e-5)


@pytest.mark.oracles
@pytest.mark.parametrize("factor", [2, 3])
def test_resample_grad_linear_matches_torch(factor: int) -> None:
    """PyTorch's bilinear (align_corners=False) backward: RESAMPLE_GRAD LINEAR with pixel-centre offsets."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(factor)
    x = torch.tensor(rng.standard_normal((2, 3, 4, 5)).astype(F32), requires_grad=True)
    y = torch.nn.functional.interpolate(x, scale_factor=factor, mode="bilinear", align_corners=False)
    dy = rng.standard_normal(tuple(y.shape)).astype(F32)
    y.backward(torch.tensor(dy))
    got = R.resample_grad(dy, (2, 3, 4, 5), interpolation_mode="LINEAR")
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-5, atol=1e-5)


# -- VALUE_SCALE_2D -------------------------------------------------------------------------------


def value_scale_2d_oracle(x: np.ndarray, scale: float, bias: list[float]) -> np.ndarray:
    """Scalar loop (page): every element times Scale plus its channel's Bias, two float32 roundings."""
    out = np.empty_like(x)
    for index in np.ndindex(*x.shape):
        with np.errstate(all="ignore"):
            out[index] = F32(F32(x[index] * F32(scale)) + F32(bias[index[1]]))
    return out


VALUE_SCALE_BACKENDS = backend_params("numpy", "cpu", "cuda")


@pytest.mark.parametrize("backend", VALUE_SCALE_BACKENDS, indirect=True)
@pytest.mark.parametrize("channels", [1, 3])
def test_value_scale_2d_matches_loop_oracle(backend: str, channels: int) -> None:
    rng = np.random.default_rng(channels)
    x = rng.standard_normal((2, channels, 3, 4)).astype(F32)
    x.flat[:5] = [np.nan, np.inf, -np.inf, -0.0, 1e-40]
    bias = [float(F32(v)) for v in rng.standard_normal(channels)]
    got = to_numpy(R.value_scale_2d(x, scale=-1.7, bias=bias, backend=backend))
    want = value_scale_2d_oracle(x, -1.7, bias)
    # bit for bit, NaN payloads too (as DirectML); on cuda a NaN comes back canonical (the GPU's
    # arithmetic), so there a NaN is compared as NaN
    nan = np.isnan(want) if backend == "cuda" else np.zeros(want.shape, bool)
    np.testing.assert_array_equal(np.isnan(got)[nan], nan[nan])
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


@pytest.mark.parametrize("backend", VALUE_SCALE_BACKENDS, indirect=True)
def test_value_scale_2d_no_fused_multiply_add(backend: str) -> None:
    """(1 + 2^-12)^2 - (1 + 2^-11): 0 with the product rounded first (DirectML), 2^-24 fused."""
    x = np.full((1, 1, 1, 1), 1 + 2**-12, dtype=F32)
    got = to_numpy(R.value_scale_2d(x, scale=1 + 2**-12, bias=[-(1 + 2**-11)], backend=backend))
    assert got.item() == 0.0


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
def test_value_scale_2d_half_and_strided_output_match_the_reference(backend: str) -> None:
    rng = np.random.default_rng(5)
    body = {
        "InputTensor": {"DataType": "FLOAT16", "Sizes": [2, 3, 4, 5]},
        "OutputTensor": {"DataType": "FLOAT16", "Sizes": [2, 3, 4, 5], "Strides": [121, 40, 10, 2]},
        "Scale": 3.3,
        "ChannelCount": 3,
        "Bias": [-1.0, 0.25, 1e4],
    }
    desc = desc_from_json("VALUE_SCALE_2D", body)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float16)
    want = dmlops.execute(desc, {"InputTensor": x})["OutputTensor"]
    got = to_numpy(dmlops.execute(desc, {"InputTensor": x}, backend=backend)["OutputTensor"])
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_value_scale_2d_desc_from_json() -> None:
    desc = desc_from_json(
        "VALUE_SCALE_2D",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 3, 1, 1]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 3, 1, 1]},
            "Scale": 2.0,
            "ChannelCount": 3,
            "Bias": [1, 2, 3],
        },
    )
    out = dmlops.execute(desc, {"InputTensor": np.ones((1, 3, 1, 1), F32)}, backend="numpy")["OutputTensor"]
    np.testing.assert_array_equal(out.reshape(-1), [3, 4, 5])
