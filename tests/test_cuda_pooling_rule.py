"""The CUDA max-pooling kernels follow DirectML's selection rule through every path.

DirectML 1.15.4 (measured on its own backend) starts each window's running state at
(L, the first in-bounds element), L the type's lowest finite value, and replaces it only
with a strictly greater element: NaN never wins, a window of only NaN / -inf gives L at
its first in-bounds element, and a window of padding only (valid: MAX_POOLING2 accepts
any output size) gives L and index 0, its MAX_POOLING_GRAD gradient dropped. Every
specialised kernel (max_pool_k2d_m, the grad's single pass and two-pass forms, the
generic kernels with 32- and 64-bit offsets, 3-D) is checked here against a scalar-loop
oracle of that rule written for this file, on NaN / -inf windows, windows wholly in the
start or end padding, output sizes beyond the floor and ceil sizes, and windows larger
than the input. The descs are run through the backend's entry point without validation,
so these tests do not depend on the validation rules of the moment.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from dmlops import TensorDesc
from dmlops.descs.pooling import MaxPooling2Desc, MaxPoolingGradDesc
from dmlops.enums import FeatureLevel

NAMES = {
    np.float32: "FLOAT32",
    np.float16: "FLOAT16",
    np.int8: "INT8",
    np.uint8: "UINT8",
    np.int32: "INT32",
}


def lowest(dtype: Any) -> Any:
    """L: the lowest finite value of the data type."""
    dtype = np.dtype(dtype)
    return (np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)).min


def oracle_forward(x: np.ndarray, ws, st, ps, out_spatial) -> tuple[np.ndarray, np.ndarray]:
    """DirectML's MAX_POOLING2 (dilation 1), one window at a time: (values, indices)."""
    n, c = x.shape[:2]
    in_spatial = x.shape[2:]
    low = x.dtype.type(lowest(x.dtype))
    values = np.empty((n, c, *out_spatial), dtype=x.dtype)
    indices = np.empty((n, c, *out_spatial), dtype=np.int64)
    image = int(np.prod(in_spatial))
    for b, ch, *o in itertools.product(range(n), range(c), *(range(k) for k in out_spatial)):
        best_value, best_index = low, None
        for k in itertools.product(*(range(w) for w in ws)):
            coords = [oi * s - p + ki for oi, s, p, ki in zip(o, st, ps, k)]
            if not all(0 <= i < size for i, size in zip(coords, in_spatial)):
                continue  # padding never takes part
            v = x[(b, ch, *coords)]
            flat = int(np.ravel_multi_index(coords, in_spatial))
            if best_index is None:
                best_index = flat  # the first in-bounds element starts, with value L
            if v > best_value:  # strictly greater; NaN never
                best_value, best_index = v, flat
        values[(b, ch, *o)] = best_value
        indices[(b, ch, *o)] = 0 if best_index is None else (b * c + ch) * image + best_index
    return values, indices


def oracle_grad(x: np.ndarray, dy: np.ndarray, ws, st, ps) -> np.ndarray:
    """DirectML's MAX_POOLING_GRAD: dy of each window to its selected element (float32 sums)."""
    _, indices = oracle_forward(x, ws, st, ps, dy.shape[2:])
    empty = _padding_only(x.shape[2:], ws, st, ps, dy.shape)
    dx = np.zeros(x.size, dtype=np.float32)
    for i, g, drop in zip(indices.ravel(), dy.astype(np.float32).ravel(), empty.ravel()):
        if not drop:
            dx[i] += g
    return dx.reshape(x.shape).astype(x.dtype)


def _padding_only(in_spatial, ws, st, ps, out_shape) -> np.ndarray:
    """Whether each window holds no in-bounds element."""
    empty = np.zeros(out_shape, dtype=bool)
    for idx in np.ndindex(*out_shape):
        o = idx[2:]
        empty[idx] = any(
            not any(0 <= oi * s - p + k < size for k in range(w))
            for oi, s, p, w, size in zip(o, st, ps, ws, in_spatial)
        )
    return empty


def _window(ws, st, ps, pe) -> dict[str, Any]:
    return dict(strides=st, window_size=ws, start_padding=ps, end_padding=pe, dilations=(1,) * len(ws))


def _floor_sizes(in_spatial, ws, st, ps, pe) -> tuple[int, ...]:
    """MAX_POOLING_GRAD's output size: the floor size, or 1 where the window is larger than the padded input."""
    return tuple(
        max(1, (n + a + b - w) // s + 1) if n + a + b >= w else 1 for n, w, s, a, b in zip(in_spatial, ws, st, ps, pe)
    )


def _data(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    """Small values (many ties), and for float types NaN, -inf and -FLT_MAX regions."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, min(info.max, info.min + 6), size=shape, endpoint=True).astype(dtype)
        return x  # includes the type's minimum (ties with L)
    x = rng.integers(-3, 3, size=shape).astype(dtype)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=max(1, flat.size // 6), replace=False)
    flat[picks[0::3]] = np.nan
    flat[picks[1::3]] = -np.inf
    flat[picks[2::3]] = lowest(dtype)
    x[0, 0, ...] = np.nan  # a plane of NaN: every window L at its first in-bounds element
    if x.shape[1] > 1:
        x[0, 1, ...] = -np.inf
    return x


def _run(desc: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """The CUDA backend's entry point, without validation."""
    from dmlops import cuda

    return cuda.execute(desc, inputs, None, feature_level=FeatureLevel.latest(), strict=False)


# -- MAX_POOLING2 ------------------------------------------------------------------------------

# (input shape, window, strides, start padding, end padding, output spatial sizes beyond the floor)
FORWARD = {
    "beyond ceil": ((2, 3, 9, 11), (3, 3), (2, 2), (1, 1), (1, 1), (1, 2)),
    "start padding only": ((2, 2, 7, 16), (2, 2), (2, 2), (3, 4), (0, 0), (0, 0)),
    "window larger than input": ((1, 2, 2, 3), (5, 5), (3, 1), (0, 0), (0, 0), (1, 3)),
    "window 1 padding 1": ((1, 2, 1, 2), (1, 1), (1, 1), (0, 1), (0, 1), (0, 0)),
    "3x2 beyond floor": ((2, 3, 8, 45), (3, 2), (1, 2), (2, 1), (3, 2), (2, 3)),
    "padding both ends": ((1, 1, 5, 40), (4, 4), (5, 5), (6, 7), (6, 7), (0, 0)),
    "tiny input, many windows": ((1, 1, 3, 3), (2, 3), (1, 1), (0, 0), (0, 0), (3, 5)),
}


def _forward_desc(x_shape, dtype, ws, st, ps, pe, extra, index_type="UINT32") -> MaxPooling2Desc:
    out = tuple(f + e for f, e in zip(_floor_sizes(x_shape[2:], ws, st, ps, pe), extra))
    out_shape = (*x_shape[:2], *out)
    name = NAMES[dtype]
    return MaxPooling2Desc(
        input_tensor=TensorDesc(data_type=name, sizes=x_shape),
        output_tensor=TensorDesc(data_type=name, sizes=out_shape),
        output_indices_tensor=TensorDesc(data_type=index_type, sizes=out_shape),
        **_window(ws, st, ps, pe),
    )


def _check_forward(cp, desc: MaxPooling2Desc, x: np.ndarray) -> None:
    w = desc.window
    want_y, want_i = oracle_forward(x, w.window_size, w.strides, w.start_padding, desc.output_tensor.sizes[2:])
    got = _run(desc, {"InputTensor": cp.asarray(x)})
    got_y, got_i = cp.asnumpy(got["OutputTensor"]), cp.asnumpy(got["OutputIndicesTensor"])
    np.testing.assert_array_equal(got_y.view(np.uint8), want_y.view(np.uint8), err_msg="OutputTensor bits")
    np.testing.assert_array_equal(got_i.astype(np.int64), want_i, err_msg="OutputIndicesTensor")


def _force(monkeypatch, module: Any, path: str) -> None:
    """Route a module's plans: ``generic`` (no 2-D fast path), ``generic64`` (64-bit offsets too)."""
    if path in ("generic", "generic64"):
        monkeypatch.setattr(module, "FUSED_MAX", 0)
    if path == "generic64":
        original = module.pool_params
        monkeypatch.setattr(module, "pool_params", lambda *a: (original(*a)[0], False))


@pytest.mark.parametrize("case", FORWARD, ids=str)
@pytest.mark.parametrize(
    "dtype, path",
    [(t, p) for t in (np.float32, np.float16) for p in ("fast", "generic", "generic64")]
    + [(t, p) for t in (np.int8, np.uint8, np.int32) for p in ("generic", "generic64")],
    ids=lambda v: v if isinstance(v, str) else np.dtype(v).name,
)
def test_max_pooling2_rule(gpu, monkeypatch, case, dtype, path) -> None:
    from dmlops.cuda import pooling as mp2
    from dmlops.cuda._copy import C_TYPES
    from dmlops.cuda._runtime import get_kernel

    shape, ws, st, ps, pe, extra = FORWARD[case]
    _force(monkeypatch, mp2, path)
    desc = _forward_desc(shape, dtype, ws, st, ps, pe, extra)
    x = _data(shape, dtype, seed=len(case))
    _check_forward(gpu, desc, x)
    launch = next(plan[1] for plan in mp2._MAX_POOLING2_PLANS.plans.values() if plan[0] is desc)
    t = C_TYPES[np.dtype(dtype)]
    kk = f"{ws[0]}, {ws[1]}, {st[0]}, {st[1]}"
    name = {
        "fast": f"max_pool_k2d_m<{t}, u32, {kk}, 4>",
        "generic": f"max_pool<{t}, u32, int>",
        "generic64": f"max_pool<{t}, u32, long long>",
    }[path]
    assert launch.fn is get_kernel("pooling.cu", name)


def test_max_pooling2_rule_3d(gpu) -> None:
    """The generic kernel in 3-D: padding-only windows along D, beyond the floor sizes."""
    shape, ws, st, ps, pe = (1, 2, 3, 4, 5), (2, 2, 2), (2, 1, 2), (2, 0, 1), (1, 1, 3)
    for dtype in (np.float32, np.float16, np.int8):
        desc = _forward_desc(shape, dtype, ws, st, ps, pe, (1, 0, 1))
        _check_forward(gpu, desc, _data(shape, dtype, seed=5))


@pytest.mark.parametrize("path", ["fast", "generic", "generic64"])
def test_max_pooling2_directml_evidence(gpu, monkeypatch, path) -> None:
    """What DirectML 1.15.4 output (docs/directml.md), through each kernel."""
    from dmlops.cuda import pooling as mp2

    _force(monkeypatch, mp2, path)
    low = np.float32(lowest(np.float32))
    cases = [
        # window 3 over one row: [NaN, 1, 2] -> 2 at 2; [1, NaN, 0] -> 1 at 0; [NaN, NaN] (window 2) -> L at 0
        ([np.nan, 1, 2], (1, 3), (1, 1), (0, 0), 1, [2], [2]),
        ([1, np.nan, 0], (1, 3), (1, 1), (0, 0), 1, [1], [0]),
        ([np.nan, np.nan], (1, 2), (1, 1), (0, 0), 1, [low], [0]),
        ([5, -np.inf, -np.inf], (1, 2), (1, 1), (0, 0), 2, [5, low], [0, 1]),
    ]
    for row, ws, st, ps, ow, values, indices in cases:
        x = np.array(row, dtype=np.float32).reshape(1, 1, 1, -1)
        desc = _forward_desc(
            x.shape, np.float32, ws, st, ps, ps, (0, ow - _floor_sizes(x.shape[2:], ws, st, ps, ps)[1])
        )
        got = _run(desc, {"InputTensor": gpu.asarray(x)})
        np.testing.assert_array_equal(gpu.asnumpy(got["OutputTensor"]).ravel(), np.array(values, np.float32))
        np.testing.assert_array_equal(gpu.asnumpy(got["OutputIndicesTensor"]).ravel(), indices)
    # N=1, C=2, [[1, 2], [3, 4]], window 1, padding 1 + 1: output width 4.
    x = np.array([1, 2, 3, 4], dtype=np.float32).reshape(1, 2, 1, 2)
    desc = _forward_desc(x.shape, np.float32, (1, 1), (1, 1), (0, 1), (0, 1), (0, 0))
    got = _run(desc, {"InputTensor": gpu.asarray(x)})
    np.testing.assert_array_equal(
        gpu.asnumpy(got["OutputTensor"]).ravel(), np.array([low, 1, 2, low, low, 3, 4, low], np.float32)
    )
    np.testing.assert_array_equal(gpu.asnumpy(got["OutputIndicesTensor"]).ravel(), [0, 0, 1, 0, 0, 2, 3, 0])


# -- MAX_POOLING_GRAD --------------------------------------------------------------------------

# (input shape, window, strides, start padding, end padding); InputGradient has the floor sizes
GRAD = {
    "padding-only windows at both ends": ((2, 3, 9, 16), (3, 3), (2, 2), (3, 4), (3, 4)),
    "2x2 start padding 2": ((1, 2, 7, 45), (2, 2), (2, 2), (2, 2), (1, 3)),
    "window larger than input": ((1, 2, 2, 3), (5, 5), (1, 1), (0, 0), (0, 0)),
    "window 1 start padding 2": ((1, 2, 1, 2), (1, 1), (1, 1), (0, 2), (0, 0)),
    "3x2 uneven padding": ((2, 2, 11, 24), (3, 2), (1, 2), (4, 2), (0, 5)),
    "4x4 padding 5": ((1, 1, 6, 8), (4, 4), (2, 2), (5, 5), (5, 5)),
    "5x5 stride 5 one window": ((1, 1, 3, 3), (5, 5), (5, 5), (1, 1), (1, 1)),
    "3x3 stride 2 plain": ((2, 3, 13, 24), (3, 3), (2, 2), (1, 1), (1, 1)),
}
GRAD_PATHS = ("stream", "two_pass4", "two_pass4v", "two_pass4v_row16", "generic", "generic64")


def _grad_desc(x_shape, dtype, ws, st, ps, pe) -> MaxPoolingGradDesc:
    dy_shape = (*x_shape[:2], *_floor_sizes(x_shape[2:], ws, st, ps, pe))
    name = NAMES[dtype]
    return MaxPoolingGradDesc(
        input_tensor=TensorDesc(data_type=name, sizes=x_shape),
        input_gradient_tensor=TensorDesc(data_type=name, sizes=dy_shape),
        output_gradient_tensor=TensorDesc(data_type=name, sizes=x_shape),
        **_window(ws, st, ps, pe),
    )


def _grad_on_path(cp, monkeypatch, desc: MaxPoolingGradDesc, x: np.ndarray, dy: np.ndarray, path: str) -> Any:
    """OutputGradient through one path (a 2-D variant of _plan, or the generic kernels); returns (dx, plan kind)."""
    from dmlops.cuda import pooling as mpg
    from dmlops.cuda._runtime import element_strides

    gx, gdy = cp.asarray(x), cp.asarray(dy)
    out = cp.full(x.shape, np.nan, dtype=x.dtype)  # every element must be written
    with monkeypatch.context() as m:
        _force(m, mpg, path)
        variant = path if path in mpg.VARIANTS else None
        plan = mpg._plan(
            desc, x.shape, dy.shape, element_strides(gx), element_strides(gdy), element_strides(out), gx.dtype, variant
        )
    mpg.launch(plan, gx, gdy, out)
    return cp.asnumpy(out), plan.kind


def _close(got: np.ndarray, want: np.ndarray, dtype: Any) -> None:
    tol = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float16: dict(rtol=2e-3, atol=2e-3)}[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), **tol)


@pytest.mark.parametrize("case", GRAD, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("path", GRAD_PATHS)
def test_max_pooling_grad_rule(gpu, monkeypatch, case, dtype, path) -> None:
    shape, ws, st, ps, pe = GRAD[case]
    desc = _grad_desc(shape, dtype, ws, st, ps, pe)
    x = _data(shape, dtype, seed=len(case))
    dy = np.random.default_rng(1).standard_normal(desc.input_gradient_tensor.sizes).astype(dtype)
    want = oracle_grad(x, dy, ws, st, ps)
    got, kind = _grad_on_path(gpu, monkeypatch, desc, x, dy, path)
    _close(got, want, dtype)
    assert (kind == "generic") == path.startswith("generic")


def test_max_pooling_grad_rule_3d(gpu) -> None:
    """The generic kernels in 3-D, with padding-only windows along D."""
    shape, ws, st, ps, pe = (1, 2, 3, 4, 5), (2, 2, 2), (2, 1, 2), (2, 0, 2), (1, 0, 2)
    for dtype in (np.float32, np.float16):
        desc = _grad_desc(shape, dtype, ws, st, ps, pe)
        x = _data(shape, dtype, seed=3)
        dy = np.random.default_rng(2).standard_normal(desc.input_gradient_tensor.sizes).astype(dtype)
        got = _run(desc, {"InputTensor": gpu.asarray(x), "InputGradientTensor": gpu.asarray(dy)})
        _close(gpu.asnumpy(got["OutputGradientTensor"]), oracle_grad(x, dy, ws, st, ps), dtype)


@pytest.mark.parametrize("path", GRAD_PATHS)
def test_max_pooling_grad_directml_evidence(gpu, monkeypatch, path) -> None:
    """What DirectML 1.15.4 output (docs/directml.md), through each path."""
    cases = [
        # window 1, start padding 2 on [1, 2]: the two padding-only windows' gradients are dropped
        ([1, 2], (1, 1), (1, 1), (0, 2), [1, 10, 100, 1000], [100, 1000]),
        # window 2 over [NaN, NaN, 5]: the all-NaN window selects its first element
        ([np.nan, np.nan, 5], (1, 2), (1, 1), (0, 0), [1, 10], [1, 0, 10]),
    ]
    for row, ws, st, ps, dy_row, want in cases:
        x = np.array(row, dtype=np.float32).reshape(1, 1, 1, -1)
        dy = np.array(dy_row, dtype=np.float32).reshape(1, 1, 1, -1)
        desc = _grad_desc(x.shape, np.float32, ws, st, ps, (0, 0))
        assert desc.input_gradient_tensor.sizes == dy.shape
        got, _ = _grad_on_path(gpu, monkeypatch, desc, x, dy, path)
        np.testing.assert_array_equal(got.ravel(), np.array(want, np.float32))


def test_oracle_matches_the_directml_evidence() -> None:
    """The oracle itself (no GPU): DirectML's outputs of docs/directml.md."""
    low = np.float32(lowest(np.float32))
    x = np.array([1, 2, 3, 4], dtype=np.float32).reshape(1, 2, 1, 2)
    y, i = oracle_forward(x, (1, 1), (1, 1), (0, 1), (1, 4))
    np.testing.assert_array_equal(y.ravel(), [low, 1, 2, low, low, 3, 4, low])
    np.testing.assert_array_equal(i.ravel(), [0, 0, 1, 0, 0, 2, 3, 0])
    x = np.array([5, -np.inf, -np.inf], dtype=np.float32).reshape(1, 1, 1, 3)
    y, i = oracle_forward(x, (1, 2), (1, 1), (0, 0), (1, 2))
    np.testing.assert_array_equal(y.ravel(), [5, low])
    np.testing.assert_array_equal(i.ravel(), [0, 1])
    x = np.array([1, 2], dtype=np.float32).reshape(1, 1, 1, 2)
    dy = np.array([1, 10, 100, 1000], dtype=np.float32).reshape(1, 1, 1, 4)
    np.testing.assert_array_equal(oracle_grad(x, dy, (1, 1), (1, 1), (0, 2)).ravel(), [100, 1000])
    x = np.array([np.nan, np.nan, 5], dtype=np.float32).reshape(1, 1, 1, 3)
    dy = np.array([1, 10], dtype=np.float32).reshape(1, 1, 1, 2)
    np.testing.assert_array_equal(oracle_grad(x, dy, (1, 2), (1, 1), (0, 0)).ravel(), [1, 0, 10])
