"""The pooling neighbours on the cpu and cuda backends, against the NumPy reference computed live.

AVERAGE_POOLING(1), LP_POOLING(1), AVERAGE_POOLING_GRAD and MAX_UNPOOLING over seeded random
descs: 2-D and 3-D windows, strides, paddings (wider than the window too), free output
sizes, IncludePadding, P from 0 to 7, Dilations for the *1 forms, zeros in Strides and
WindowSize, FLOAT32 and FLOAT16 (MAX_UNPOOLING: every type, UINT32 and UINT64 indices).
The data holds NaN, +-inf, signed zeros and large magnitudes (float32 sums whose order
matters). Strided inputs and outputs are bound as flat buffers. Everything the reference
computes exactly compares bit for bit (NaN equal to NaN); LP_POOLING with P other than
0, 1 and 2 within float32 rounding (the reference's stated tolerance). Refusals
(zero Dilations, conflicting MAX_UNPOOLING duplicates) must be the reference's, and a
refused MAX_UNPOOLING leaves the caller's output as it was.

Every comparison runs on cpu and on cuda (cuda cases carry the ``cuda`` mark and skip
without a GPU). The cuda kernels sum in the reference's order and type, so the same
bit-for-bit comparisons apply; only the LP_POOLING power differs in its last float64 bits
(the same tolerance as cpu's libm).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import dmlops
from conftest import backend_params, to_numpy
from dmlops.descs import desc_class, desc_from_json
from dmlops.errors import DataIndexError, UnsupportedError

BACKENDS = backend_params("cpu", "cuda")
"""The backends compared with the reference (through conftest's ``backend`` fixture: unavailable ones skip)."""

OPERATORS = (
    "AVERAGE_POOLING",
    "AVERAGE_POOLING1",
    "LP_POOLING",
    "LP_POOLING1",
    "AVERAGE_POOLING_GRAD",
    "MAX_UNPOOLING",
)
FLOATS = ("FLOAT32", "FLOAT16")
UNPOOLING_TYPES = ("FLOAT32", "FLOAT16", "UINT32", "UINT16", "UINT8", "INT32", "INT16", "INT8", "UINT64", "INT64")


def _rng(*key: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _numpy_dtype(name: str) -> np.dtype[Any]:
    return np.dtype(name.lower().replace("float", "float").replace("uint", "uint"))


def values(rng: np.random.Generator, dtype: np.dtype[Any], count: int) -> np.ndarray:
    """Mostly normal values; some large ones, NaN, +-inf and signed zeros (floats), or the type's full range."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
    x = rng.standard_normal(count) * rng.choice([1.0, 100.0], count)
    special = rng.random(count)
    x[special < 0.05] = rng.choice([1e4, -1e4, 3e4], int(np.sum(special < 0.05)))  # order matters in float32
    x[(special >= 0.05) & (special < 0.07)] = -0.0
    x[(special >= 0.07) & (special < 0.075)] = np.nan
    x[(special >= 0.075) & (special < 0.08)] = np.inf
    x[(special >= 0.08) & (special < 0.085)] = -np.inf
    return x.astype(dtype)


def layout(rng: np.random.Generator, sizes: list[int], kind: str) -> tuple[list[int] | None, int]:
    """(Strides or None, element count of the flat buffer): packed, transposed, or every other element padded."""
    if kind == "packed":
        return None, int(np.prod(sizes))
    dims = len(sizes)
    if kind == "transposed":  # the last two axes swapped in memory
        order = [*range(dims - 2), dims - 1, dims - 2]
    else:  # "padded": rows twice as long as the last size, batch innermost-first order kept
        order = list(range(dims))
    strides = [0] * dims
    step = 1
    for axis in reversed(order):
        strides[axis] = step
        step *= sizes[axis] * (2 if kind == "padded" and axis == dims - 1 else 1)
    return strides, step


def same(operator: str, got: np.ndarray, want: np.ndarray, *, tolerance: bool = False) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    if tolerance:
        eps = np.finfo(got.dtype).eps
        with np.errstate(all="ignore"):
            g, w = got.astype(np.float64), want.astype(np.float64)
            close = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= 4 * eps * np.abs(w))
    else:
        bits = np.dtype(f"u{got.dtype.itemsize}")
        close = got.view(bits) == want.view(bits)
        if got.dtype.kind == "f":
            close |= np.isnan(got) & np.isnan(want)
    bad = np.flatnonzero(~close)
    if bad.size:
        shown = ", ".join(f"[{i}] cpu {got.flat[i]!r} numpy {want.flat[i]!r}" for i in bad[:6])
        pytest.fail(f"{operator}: {bad.size} of {got.size} elements differ: {shown}")


def run_both(
    desc: Any, inputs: dict[str, np.ndarray], member: str, out_count: int, dtype: np.dtype[Any], backend: str
) -> None:
    """The reference and ``backend`` into flat output buffers prefilled with the same bits.

    Bit for bit, except LP_POOLING with P other than 0, 1 and 2: both fast backends form
    the float64 power differently from the reference's NumPy power (numba's pow on cpu,
    exp(P log x) in float64 on cuda), within 1e-13 relative, so the float32
    terms may round to neighbours next to a boundary; the sum of positive terms and the
    root keep that within 2 ulp of the result (4 allowed).
    """
    fill = np.full(out_count, 7, dtype)
    want = dmlops.execute(desc, inputs, backend="numpy", outputs={member: fill.copy()})[member]
    got_buffer = fill.copy()
    got = dmlops.execute(desc, inputs, backend=backend, outputs={member: got_buffer})[member]
    assert got is got_buffer
    tolerance = desc.operator_type.name.startswith("LP_POOLING") and int(desc.p) not in (0, 1, 2)
    same(desc.operator_type.name, to_numpy(got), want, tolerance=tolerance)


@pytest.mark.parametrize("backend_name", ["cpu", "cuda"])
def test_the_family_claims_them(backend_name: str) -> None:
    from importlib import import_module

    if backend_name == "cpu":
        pytest.importorskip("numba")
    table = import_module(f"dmlops.{backend_name}.pooling").OPERATORS
    for operator in OPERATORS:
        assert backend_name in desc_class(operator).backends
        assert operator in table


# -- AVERAGE_POOLING(1), LP_POOLING(1) --------------------------------------------------------------


def _window(rng: np.random.Generator, spatial: int, *, zeros: bool) -> dict[str, list[int]]:
    low = 0 if zeros and rng.random() < 0.15 else 1
    return {
        "Strides": [int(v) for v in rng.integers(low, 4, spatial)],
        "WindowSize": [int(v) for v in rng.integers(low, 5, spatial)],
        "StartPadding": [int(v) for v in rng.integers(0, 4, spatial)],
        "EndPadding": [int(v) for v in rng.integers(0, 4, spatial)],
    }


def _output_spatial(rng: np.random.Generator, body: dict[str, Any], in_spatial: list[int]) -> list[int]:
    """The floor-formula size where a window fits, else (and sometimes anyway) a free size: all are accepted."""
    sizes = []
    for i, n in enumerate(in_spatial):
        s, k, a, e = (body[m][i] for m in ("Strides", "WindowSize", "StartPadding", "EndPadding"))
        d = body.get("Dilations", [1] * len(in_spatial))[i]
        eff = (k - 1) * d + 1
        fits = s >= 1 and 1 <= eff <= n + a + e
        sizes.append((n + a + e - eff) // s + 1 if fits and rng.random() < 0.8 else int(rng.integers(1, 7)))
    return sizes


FORWARD_CASES = [(op, dt, seed) for op in OPERATORS[:4] for dt in FLOATS for seed in range(24)]


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize(("operator", "dtype_name", "seed"), FORWARD_CASES)
def test_forward_pooling_matches_the_reference(operator: str, dtype_name: str, seed: int, backend: str) -> None:
    rng = _rng(operator, dtype_name, seed)
    spatial = 2 if rng.random() < 0.75 else 3
    in_sizes = [int(rng.integers(1, 4)), int(rng.integers(1, 5))] + [int(v) for v in rng.integers(1, 12, spatial)]
    if seed % 8 == 7:  # larger planes: several threads and long rows
        in_sizes = [3, 5, *([9] * (spatial - 2)), 61, 67]
    body: dict[str, Any] = _window(rng, spatial, zeros=True)
    if operator.endswith("1"):
        body["Dilations"] = [int(v) for v in rng.integers(1, 4, spatial)]
    if operator.startswith("AVERAGE"):
        body["IncludePadding"] = bool(rng.random() < 0.5)
    else:
        body["P"] = int(rng.choice([0, 1, 1, 2, 2, 3, 4, 7]))
    out_sizes = [*in_sizes[:2], *_output_spatial(rng, body, in_sizes[2:])]
    in_kind, out_kind = rng.choice(["packed", "packed", "transposed", "padded"], 2)
    in_strides, in_count = layout(rng, in_sizes, str(in_kind))
    out_strides, out_count = layout(rng, out_sizes, str(out_kind))
    body["InputTensor"] = {"DataType": dtype_name, "Sizes": in_sizes}
    body["OutputTensor"] = {"DataType": dtype_name, "Sizes": out_sizes}
    if in_strides:
        body["InputTensor"]["Strides"] = in_strides
    if out_strides:
        body["OutputTensor"]["Strides"] = out_strides
    desc = desc_from_json(operator, body)
    dtype = _numpy_dtype(dtype_name)
    run_both(desc, {"InputTensor": values(rng, dtype, in_count)}, "OutputTensor", out_count, dtype, backend)


@pytest.mark.parametrize("backend", backend_params("cuda"), indirect=True)
@pytest.mark.parametrize("windows", [1, 2, 4])
def test_cuda_window_sums_fast_path_every_width(windows: int, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 2-D fast path (AVERAGE, P 1, P 2) with 1, 2 and 4 outputs per thread: bit for bit.

    Windows and strides of 1 to 5 (compile-time), paddings of 0 to 3, output widths that
    are not multiples of the outputs per thread, strided layouts, FLOAT32 and FLOAT16.
    """
    from dmlops.cuda import pooling as module

    monkeypatch.setattr(module, "SUM_WINDOWS", windows)
    for seed in range(18):
        rng = _rng("fast path", windows, seed)
        operator, extra = (
            ("AVERAGE_POOLING", {"IncludePadding": bool(seed % 2)}),
            ("LP_POOLING", {"P": 1}),
            ("LP_POOLING", {"P": 2}),
        )[seed % 3]
        in_sizes = [
            int(rng.integers(1, 3)),
            int(rng.integers(1, 4)),
            int(rng.integers(1, 20)),
            int(rng.integers(1, 40)),
        ]
        body: dict[str, Any] = {
            "Strides": [int(v) for v in rng.integers(1, 6, 2)],
            "WindowSize": [int(v) for v in rng.integers(1, 6, 2)],
            "StartPadding": [int(v) for v in rng.integers(0, 4, 2)],
            "EndPadding": [int(v) for v in rng.integers(0, 4, 2)],
            **extra,
        }
        out_sizes = [*in_sizes[:2], *_output_spatial(rng, body, in_sizes[2:])]
        dtype_name = FLOATS[seed % 2]
        in_kind, out_kind = rng.choice(["packed", "transposed", "padded"], 2)
        in_strides, in_count = layout(rng, in_sizes, str(in_kind))
        out_strides, out_count = layout(rng, out_sizes, str(out_kind))
        body["InputTensor"] = {"DataType": dtype_name, "Sizes": in_sizes}
        body["OutputTensor"] = {"DataType": dtype_name, "Sizes": out_sizes}
        if in_strides:
            body["InputTensor"]["Strides"] = in_strides
        if out_strides:
            body["OutputTensor"]["Strides"] = out_strides
        desc = desc_from_json(operator, body)  # a new desc: a new plan under this width
        dtype = _numpy_dtype(dtype_name)
        run_both(desc, {"InputTensor": values(rng, dtype, in_count)}, "OutputTensor", out_count, dtype, backend)


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize("operator", ["AVERAGE_POOLING1", "LP_POOLING1"])
def test_a_zero_dilation_is_refused_as_the_reference_refuses_it(operator: str, backend: str) -> None:
    body: dict[str, Any] = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        "Strides": [1, 1],
        "WindowSize": [2, 2],
        "StartPadding": [0, 0],
        "EndPadding": [0, 0],
        "Dilations": [0, 1],
        **({"IncludePadding": False} if operator.startswith("AVERAGE") else {"P": 2}),
    }
    desc = desc_from_json(operator, body)
    x = {"InputTensor": np.ones((1, 1, 3, 3), np.float32)}
    for name in ("numpy", backend):
        with pytest.raises(UnsupportedError, match="directml"):
            dmlops.execute(desc, x, backend=name)


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_average_pooling_sums_in_window_order(backend: str) -> None:
    # float32 sums whose result depends on the order: 1e8 + 1 - 1e8 = 0, 1e8 - 1e8 + 1 = 1
    x = np.array([1e8, 1, -1e8, 1e8, -1e8, 1], np.float32).reshape(1, 1, 1, 6)
    body = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 6]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 2]},
        "Strides": [1, 3],
        "WindowSize": [1, 3],
        "StartPadding": [0, 0],
        "EndPadding": [0, 0],
        "IncludePadding": False,
    }
    got = dmlops.execute(desc_from_json("AVERAGE_POOLING", body), {"InputTensor": x}, backend=backend)["OutputTensor"]
    np.testing.assert_array_equal(to_numpy(got).ravel(), [0, np.float32(1) / np.float32(3)])


# -- AVERAGE_POOLING_GRAD ----------------------------------------------------------------------------

GRAD_CASES = [(dt, seed) for dt in FLOATS for seed in range(40)]


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize(("dtype_name", "seed"), GRAD_CASES)
def test_average_pooling_grad_matches_the_reference(dtype_name: str, seed: int, backend: str) -> None:
    rng = _rng("AVERAGE_POOLING_GRAD", dtype_name, seed)
    spatial = 2 if rng.random() < 0.75 else 3
    sizes = [int(rng.integers(1, 4)), int(rng.integers(1, 5))] + [int(v) for v in rng.integers(1, 12, spatial)]
    if seed % 8 == 7:
        sizes = [3, 5, *([9] * (spatial - 2)), 61, 67]
    body: dict[str, Any] = _window(rng, spatial, zeros=True)
    body["IncludePadding"] = bool(rng.random() < 0.5)
    # InputGradientTensor: the forward output's size, or any other (DirectML accepts them)
    dy_sizes = [*sizes[:2], *_output_spatial(rng, body, sizes[2:])]
    dy_kind, dx_kind = rng.choice(["packed", "packed", "transposed", "padded"], 2)
    dy_strides, dy_count = layout(rng, dy_sizes, str(dy_kind))
    dx_strides, dx_count = layout(rng, sizes, str(dx_kind))
    body["InputGradientTensor"] = {"DataType": dtype_name, "Sizes": dy_sizes}
    body["OutputGradientTensor"] = {"DataType": dtype_name, "Sizes": sizes}
    if dy_strides:
        body["InputGradientTensor"]["Strides"] = dy_strides
    if dx_strides:
        body["OutputGradientTensor"]["Strides"] = dx_strides
    desc = desc_from_json("AVERAGE_POOLING_GRAD", body)
    dtype = _numpy_dtype(dtype_name)
    inputs = {"InputGradientTensor": values(rng, dtype, dy_count)}
    run_both(desc, inputs, "OutputGradientTensor", dx_count, dtype, backend)


# -- MAX_UNPOOLING ------------------------------------------------------------------------------------

UNPOOLING_CASES = [(dt, it, seed) for dt in UNPOOLING_TYPES for it in ("UINT32", "UINT64") for seed in range(3)]


def _strided_buffer(a: np.ndarray, strides: list[int], count: int) -> np.ndarray:
    """A flat buffer of ``count`` zeros holding ``a``'s logical elements at these element strides."""
    buffer = np.zeros(count, a.dtype)
    np.lib.stride_tricks.as_strided(buffer, a.shape, [s * a.itemsize for s in strides])[...] = a
    return buffer


def _unpooling(
    rng: np.random.Generator, dtype_name: str, index_name: str, *, duplicates: str, out_kind: str | None = None
) -> tuple[Any, dict[str, np.ndarray], int]:
    in_sizes = [int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 9)), int(rng.integers(1, 9))]
    out_sizes = [int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 13)), int(rng.integers(1, 13))]
    count = int(np.prod(out_sizes))
    n = int(np.prod(in_sizes))
    dtype, itype = _numpy_dtype(dtype_name), _numpy_dtype(index_name)
    # distinct targets, some past the output, some 2^32 above an in-range one (read as its low 32 bits: E170)
    idx = rng.permutation(max(count + 8, n))[:n].astype(np.uint64)
    if index_name == "UINT64":
        wrap = rng.random(n) < 0.1
        idx[wrap] += np.uint64(1 << 32)
    x = values(rng, dtype, n)
    if duplicates != "none" and n > 2:
        # element 1 also writes element 0's target (targets are otherwise distinct), in range
        idx[0] = np.uint64(rng.integers(0, count)) if idx[0] % np.uint64(1 << 32) >= count else idx[0]
        idx[2:][idx[2:] % np.uint64(1 << 32) == idx[0] % np.uint64(1 << 32)] = np.uint64(count)  # now past the end
        idx[1] = idx[0]
        if duplicates == "same":
            x[1] = x[0]
        else:
            x[1] = x[0] + 1 if dtype.kind in "iu" else np.float64(x[0] or 1) * 2
    in_kind, drawn_out_kind = rng.choice(["packed", "packed", "transposed", "padded"], 2)
    in_strides, in_count = layout(rng, in_sizes, str(in_kind))
    out_strides, out_count = layout(rng, out_sizes, out_kind or str(drawn_out_kind))
    body: dict[str, Any] = {
        "InputTensor": {"DataType": dtype_name, "Sizes": in_sizes},
        "IndicesTensor": {"DataType": index_name, "Sizes": in_sizes},
        "OutputTensor": {"DataType": dtype_name, "Sizes": out_sizes},
    }
    inputs = {"InputTensor": x.reshape(in_sizes), "IndicesTensor": idx.astype(itype).reshape(in_sizes)}
    if in_strides:  # the same logical elements (values and indices), scattered into strided buffers
        for member in ("InputTensor", "IndicesTensor"):
            body[member]["Strides"] = in_strides
            inputs[member] = _strided_buffer(inputs[member], in_strides, in_count)
    if out_strides:
        body["OutputTensor"]["Strides"] = out_strides
    return desc_from_json("MAX_UNPOOLING", body), inputs, out_count


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize(("dtype_name", "index_name", "seed"), UNPOOLING_CASES)
def test_max_unpooling_matches_the_reference(dtype_name: str, index_name: str, seed: int, backend: str) -> None:
    rng = _rng("MAX_UNPOOLING", dtype_name, index_name, seed)
    desc, inputs, out_count = _unpooling(rng, dtype_name, index_name, duplicates="same" if seed == 2 else "none")
    run_both(desc, inputs, "OutputTensor", out_count, _numpy_dtype(dtype_name), backend)


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_max_unpooling_large(backend: str) -> None:
    rng = _rng("MAX_UNPOOLING", "large")
    x = values(rng, np.dtype(np.float32), 8 * 16 * 56 * 56).reshape(8, 16, 56, 56)
    idx = rng.permutation(8 * 16 * 112 * 112)[: x.size].astype(np.uint32).reshape(x.shape)
    body = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": list(x.shape)},
        "IndicesTensor": {"DataType": "UINT32", "Sizes": list(x.shape)},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [8, 16, 112, 112]},
    }
    run_both(
        desc_from_json("MAX_UNPOOLING", body),
        {"InputTensor": x, "IndicesTensor": idx},
        "OutputTensor",
        8 * 16 * 112 * 112,
        np.dtype(np.float32),
        backend,
    )


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize("index_name", ["UINT32", "UINT64"])
def test_max_unpooling_hostile_indices(index_name: str, backend: str) -> None:
    """The largest indices of each type, 2^32 and 2^32 + k (their low 32 bits: E170), the element count itself."""
    out_sizes = [2, 3, 4, 5]
    count = int(np.prod(out_sizes))  # 120
    top = (1 << 64) - 1 if index_name == "UINT64" else (1 << 32) - 1
    hostile = [top, count, count + 1, (1 << 32) - 1, count - 1, 0, 7, 2**31, 2**31 - 1, 2**31 + 5]
    if index_name == "UINT64":
        # 2^32 + 3 writes element 3; 2^33 + 9 element 9; 2^63 + 11 element 11; 2^32 + count nothing
        hostile += [(1 << 32) + 3, (1 << 33) + 9, (1 << 63) + 11, (1 << 32) + count, (1 << 64) - (1 << 32) + 1]
    else:
        hostile += [3, 9, 11, count + 2, 1]
    idx = np.array(hostile + [200 + i for i in range(2 * 3 * 4 * 1 - len(hostile))], np.uint64)
    x = np.arange(1, idx.size + 1, dtype=np.float32)
    in_sizes = [2, 3, 4, 1]
    body = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": in_sizes},
        "IndicesTensor": {"DataType": index_name, "Sizes": in_sizes},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": out_sizes},
    }
    inputs = {
        "InputTensor": x.reshape(in_sizes),
        "IndicesTensor": idx.astype(_numpy_dtype(index_name)).reshape(in_sizes),
    }
    desc = desc_from_json("MAX_UNPOOLING", body)
    run_both(desc, inputs, "OutputTensor", count, np.dtype(np.float32), backend)
    got = to_numpy(dmlops.execute(desc, inputs, backend=backend)["OutputTensor"]).ravel()
    assert got[count - 1] == 5 and got[0] == 6 and got[7] == 7 and got[3] == 11 and got[1] == 15 and got[2] == 0


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16", "INT8", "UINT64"])
def test_max_unpooling_refuses_conflicting_duplicates_as_the_reference(dtype_name: str, backend: str) -> None:
    """The reference's DataIndexError and message; the caller's output (packed or strided) keeps its bits."""
    for seed in range(4):
        rng = _rng("MAX_UNPOOLING", "clash", dtype_name, seed)
        out_kind = ("packed", "transposed", "padded", None)[seed]
        desc, inputs, out_count = _unpooling(rng, dtype_name, "UINT32", duplicates="different", out_kind=out_kind)
        if desc.input_tensor.element_count <= 2:
            continue
        with pytest.raises(DataIndexError) as want:
            dmlops.execute(desc, inputs, backend="numpy")
        dtype = _numpy_dtype(dtype_name)
        fill = np.full(out_count, 7, dtype)
        given = fill.copy()
        with pytest.raises(DataIndexError) as got:
            dmlops.execute(desc, inputs, backend=backend, outputs={"OutputTensor": given})
        assert str(got.value) == str(want.value)
        np.testing.assert_array_equal(given, fill)  # untouched


@pytest.mark.cuda
def test_max_unpooling_refusal_leaves_a_device_output_untouched() -> None:
    """On cuda with CuPy arrays (written in place, no host copy): the refusal leaves the device buffer as it was."""
    cp = pytest.importorskip("cupy")
    from dmlops.backends import load_backend
    from dmlops.errors import BackendUnavailableError

    try:
        load_backend("cuda")
    except BackendUnavailableError as exc:
        pytest.skip(str(exc))
    for seed, out_kind in enumerate(("packed", "transposed")):
        rng = _rng("MAX_UNPOOLING", "clash", "device", seed)
        desc, inputs, out_count = _unpooling(rng, "FLOAT32", "UINT64", duplicates="different", out_kind=out_kind)
        given = cp.full(out_count, 7, dtype=cp.float32)
        device_inputs = {m: cp.asarray(a) for m, a in inputs.items()}
        with pytest.raises(DataIndexError) as got:
            dmlops.execute(desc, device_inputs, backend="cuda", outputs={"OutputTensor": given})
        with pytest.raises(DataIndexError) as want:
            dmlops.execute(desc, inputs, backend="numpy")
        assert str(got.value) == str(want.value)
        assert bool(cp.all(given == 7))
