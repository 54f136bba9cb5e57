"""The reduction family on the cuda backend against the NumPy reference computed live.

REDUCE (every function), ARGMAX, ARGMIN, CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT, TOP_K
and TOP_K1 over seeded random cases: every data type the desc validates, every
AxisDirection and exclusive flag, axis sets unsorted, repeated and empty, inputs strided,
transposed, reversed (negative strides) and broadcast (0-strides) as CuPy views or flat
buffers with desc Strides, outputs padded, values with NaN, +-inf, +-0, ties, integer
extremes and subnormals, and shapes large enough for the split reductions, the copied
layouts and both kernels of each operator (dmlops.cuda.reduction).

Everything compares bit for bit (NaN equal to NaN), except REDUCE's float sums and
products (SUM, AVERAGE, L1, L2, SUM_SQUARE, LOG_SUM, LOG_SUM_EXP, MULTIPLY): both backends
accumulate in float64 and round once, in different orders of the float64 additions, so
the GPU's value before the final rounding lies within the float64 error bound of an
R-term sum of the reference's (see ``reduction_cases.sum_interval``).
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np
import pytest

import dmlops
from conftest import to_numpy
from dmlops.backends import load_backend
from dmlops.descs import desc_from_json
from dmlops.errors import BackendUnavailableError, InvalidDescError, UnsupportedError
from reduction_cases import dtype_of, random_axes, rng_for, same, within_sum_bound

pytestmark = pytest.mark.cuda

FLOATS = ("FLOAT32", "FLOAT16")
INTS = ("INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64")
SUM_FUNCTIONS = ("SUM", "AVERAGE", "L1", "L2", "SUM_SQUARE", "LOG_SUM", "LOG_SUM_EXP", "MULTIPLY")
FUNCTIONS = (*SUM_FUNCTIONS, "MAX", "MIN", "ARGMAX", "ARGMIN")
LAYOUTS = ("contiguous", "transposed", "reversed", "padded", "broadcast", "padded_output")
CASES = 5


@pytest.fixture(scope="module")
def cp() -> Any:
    try:
        load_backend("cuda")
    except BackendUnavailableError as exc:
        pytest.skip(str(exc))
    import cupy

    return cupy


def values(dtype: np.dtype[Any], rng: np.random.Generator, count: int, kind: str = "any") -> np.ndarray:
    """Adversarial values: specials, ties and extremes among ordinary ones ("small": products stay finite,
    "cancel": +-big terms cancelling, so float64 sums depend on the order)."""
    if dtype.kind == "f":
        finfo = np.finfo(dtype)
        if kind == "cancel":
            v = rng.standard_normal(count) * np.exp(rng.uniform(-10, 10, count))
            where = rng.choice(count, count // 10, replace=False)
            v[np.sort(where)] = (2.0**70 if dtype == np.float32 else 2.0**15) * (-1.0) ** np.arange(where.size)
            with np.errstate(over="ignore"):
                return v.astype(dtype)
        v = (
            rng.uniform(0.5, 1.5, count) * rng.choice([-1.0, 1.0], count)
            if kind == "small"
            else rng.standard_normal(count) * 4
        )
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, float(finfo.max), -float(finfo.max)]
        specials += [float(finfo.smallest_subnormal), 2.0]
        pick = rng.random(count)
        v = np.where(pick < 0.2, rng.choice(specials, count), v)
        v = np.where((pick >= 0.2) & (pick < 0.35), rng.choice([0.5, -0.0, 0.0, 3.0], count), v)  # ties
        with np.errstate(over="ignore"):
            return v.astype(dtype)
    info = np.iinfo(dtype)
    if kind == "small":
        return rng.integers(max(info.min, -3), min(info.max, 3), count, endpoint=True).astype(dtype)
    v = rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
    pick = rng.random(count)
    extremes = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=dtype)
    v = np.where(pick < 0.3, rng.choice(extremes, count), v)
    return np.where((pick >= 0.3) & (pick < 0.5), rng.integers(0, 3, count).astype(dtype), v).astype(dtype)


def random_shape(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(rng.choice([1, 2, 3, 5, 7, 33])) for _ in range(int(rng.integers(1, 6))))


def layout_input(
    cp: Any, rng: np.random.Generator, data: np.ndarray, layout: str, dtype_name: str, kind: str = "any"
) -> tuple[dict[str, Any], np.ndarray, Any]:
    """(InputTensor desc, the host array for numpy, the device array for cuda); ``data`` gets the logical values."""
    shape = data.shape
    tensor: dict[str, Any] = {"DataType": dtype_name, "Sizes": list(shape)}
    if layout == "transposed":  # memory holds the axes in a random order: a strided CuPy view
        perm = rng.permutation(len(shape))
        back = tuple(np.argsort(perm))
        return tensor, data, cp.ascontiguousarray(cp.asarray(data).transpose(perm)).transpose(back)
    if layout == "reversed":  # negative strides on random axes
        flips = tuple(slice(None, None, -1) if rng.random() < 0.6 else slice(None) for _ in shape)
        return tensor, data, cp.ascontiguousarray(cp.asarray(data)[flips])[flips]
    if layout in ("padded", "broadcast"):  # a flat buffer addressed by desc Strides
        strides, pitch = [], 1
        for n in reversed(shape):
            if layout == "broadcast" and rng.random() < 0.4:
                strides.append(0)
                continue
            strides.append(pitch)
            pitch *= n + (int(rng.integers(0, 3)) if layout == "padded" else 0)
        strides.reverse()
        span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        flat = values(data.dtype, rng, span, kind)
        data[...] = np.lib.stride_tricks.as_strided(flat, shape, [s * flat.itemsize for s in strides])
        tensor["Strides"] = strides
        return tensor, flat, cp.asarray(flat)
    return tensor, data, cp.asarray(data)


def padded_output(shape: tuple[int, ...], dtype_name: str) -> tuple[dict[str, Any], np.ndarray]:
    """(desc, host buffer): rows padded by 2 elements, the padding 7 (which must survive)."""
    strides, pitch = [], 1
    for n in reversed(shape):
        strides.append(pitch)
        pitch *= n + 2 if len(strides) == 1 else n
    strides.reverse()
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    return {"DataType": dtype_name, "Sizes": list(shape), "Strides": strides}, np.full(span, 7, dtype_of(dtype_name))


# -- the float sums' tolerance -------------------------------------------------------------


def check_float_sum(function: str, data: np.ndarray, axes: list[int], got: np.ndarray, expected: np.ndarray) -> None:
    g, e = got.ravel(), expected.ravel()
    ok, lo, hi = within_sum_bound(function, data, axes, g, e)
    bad = np.flatnonzero(~ok)
    if bad.size:
        shown = ", ".join(f"[{i}] cuda {g[i]!r} numpy {e[i]!r} bounds [{lo[i]!r}, {hi[i]!r}]" for i in bad[:6])
        pytest.fail(f"REDUCE {function}: {bad.size} of {g.size} outside the float64 order bound: {shown}")


def logical_view(buffer: np.ndarray, tensor: dict[str, Any]) -> np.ndarray:
    """The Sizes-shaped view of a flat output buffer through its desc Strides."""
    strides = [st * buffer.itemsize for st in tensor["Strides"]]
    return np.lib.stride_tricks.as_strided(buffer, tensor["Sizes"], strides)


# -- running a case --------------------------------------------------------------------------


def check(
    cp: Any,
    operator: str,
    body: dict[str, Any],
    host: np.ndarray,
    device: Any,
    outputs: dict[str, np.ndarray] | None = None,
    data: np.ndarray | None = None,
) -> str:
    """Run the desc on numpy and cuda and compare; 'invalid', 'refused' or 'ok'."""
    desc = desc_from_json(operator, body)
    try:
        desc.validate()
    except InvalidDescError:
        return "invalid"
    host_outs = {m: b.copy() for m, b in (outputs or {}).items()}
    dev_outs = {m: cp.asarray(b) for m, b in (outputs or {}).items()}
    try:
        expected = dmlops.execute(desc, {"InputTensor": host}, backend="numpy", outputs=host_outs or None)
    except UnsupportedError as exc:
        with pytest.raises(UnsupportedError) as refused:
            dmlops.execute(desc, {"InputTensor": device}, backend="cuda", outputs=dev_outs or None)
        assert str(refused.value) == str(exc)
        return "refused"
    got = dmlops.execute(desc, {"InputTensor": device}, backend="cuda", outputs=dev_outs or None)
    again = dmlops.execute(desc, {"InputTensor": device}, backend="cuda")
    function = body.get("Function")
    for member, e in expected.items():
        g = to_numpy(got[member])
        e = np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, member
        values = logical_view(g, body[member]) if outputs else g
        assert same(to_numpy(again[member]), values).all(), f"{operator}: {member} differs from run to run"
        if function in SUM_FUNCTIONS and e.dtype.kind == "f":
            assert data is not None
            if outputs:  # the padding kept bit for bit, the values within the bound
                t = body[member]
                written = np.zeros(e.shape, bool)
                logical_view(written, t)[...] = True
                assert same(g[~written], e[~written]).all(), f"{operator}: {member}'s padding was written"
                g, e = logical_view(g, t), logical_view(e, t)
            check_float_sum(function, data, body["Axes"], g, e)
            continue
        bad = np.flatnonzero(~same(g, e))
        if bad.size:
            shown = ", ".join(f"[{i}] cuda {g.flat[i]!r} numpy {e.flat[i]!r}" for i in bad[:6])
            pytest.fail(f"{operator} {body}: {member}: {bad.size} of {g.size} elements differ: {shown}")
    return "ok"


def reduce_case(
    cp: Any,
    operator: str,
    function: str | None,
    dtype_name: str,
    out_dtype: str,
    layout: str,
    shape: tuple[int, ...],
    axes: list[int],
    rng: np.random.Generator,
    kind: str,
    **attrs: Any,
) -> str:
    dtype = dtype_of(dtype_name)
    data = values(dtype, rng, math.prod(shape), kind).reshape(shape)
    reduced = set(axes)
    body: dict[str, Any] = {
        "OutputTensor": {"DataType": out_dtype, "Sizes": [1 if i in reduced else n for i, n in enumerate(shape)]},
        "Axes": axes,
        **attrs,
    }
    if function is not None:
        body["Function"] = function
    body["InputTensor"], host, device = layout_input(cp, rng, data, layout, dtype_name, kind)
    outputs = None
    if layout == "padded_output":
        body["OutputTensor"], buffer = padded_output(tuple(body["OutputTensor"]["Sizes"]), out_dtype)
        outputs = {"OutputTensor": buffer}
    return check(cp, operator, body, host, device, outputs, data)


def kind_for(function: str | None, dtype: np.dtype[Any], case: int) -> str:
    if function == "MULTIPLY":
        return "small"
    return "cancel" if case % 2 and dtype.kind == "f" else "any"


# -- REDUCE ------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype_name", FLOATS + INTS)
@pytest.mark.parametrize("function", FUNCTIONS)
def test_reduce_matches_the_reference(cp: Any, function: str, dtype_name: str, layout: str) -> None:
    rng = rng_for("REDUCE", function, dtype_name, layout)
    out_dtype = ("UINT32", "INT64", "UINT64", "INT32")[len(layout) % 4] if function.startswith("ARG") else dtype_name
    results = []
    for case in range(CASES):
        shape = random_shape(rng)
        axes = random_axes(rng, len(shape))
        kind = kind_for(function, dtype_of(dtype_name), case)
        results.append(reduce_case(cp, "REDUCE", function, dtype_name, out_dtype, layout, shape, axes, rng, kind))
    if set(results) == {"invalid"}:
        pytest.skip(f"REDUCE {function} takes no {dtype_name}")


LARGE = [
    ((3, 100_003), [1]),  # few long rows: reduce_rows split over blocks, scalar loads (odd length)
    ((2, 1 << 20), [1]),  # reduce_rows split, 16-byte vectors
    ((4096, 1024), [1]),  # a block per row, no split
    ((5000, 300), [0]),  # reduce_cols split over threads (kept stride 1)
    ((300, 7, 301), [0, 2]),  # two reduced axes apart: the copied layout, then reduce_rows
    ((64, 40, 50), [0, 1, 2]),  # everything into one output
    ((20000, 3), [1]),  # short rows of unit stride: a thread per row
]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "reversed"])
@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16", "INT32", "UINT64", "INT8"])
@pytest.mark.parametrize(
    "function", ["SUM", "AVERAGE", "L2", "LOG_SUM_EXP", "MULTIPLY", "MAX", "MIN", "ARGMAX", "ARGMIN"]
)
def test_reduce_large_matches_the_reference(cp: Any, function: str, dtype_name: str, layout: str) -> None:
    """Shapes that take the split reductions (several blocks or threads per row, a second pass),
    the vector loads and the copied layouts."""
    rng = rng_for("REDUCE large", function, dtype_name, layout)
    out_dtype = "UINT32" if function.startswith("ARG") else dtype_name
    results = []
    for case, (shape, axes) in enumerate(LARGE):
        kind = kind_for(function, dtype_of(dtype_name), case)
        results.append(reduce_case(cp, "REDUCE", function, dtype_name, out_dtype, layout, shape, axes, rng, kind))
    if set(results) == {"invalid"}:
        pytest.skip(f"REDUCE {function} takes no {dtype_name}")


@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16"])
def test_extremes_nan_and_zero_signs(cp: Any, dtype_name: str) -> None:
    """MAX / MIN skip NaN (all NaN: -inf / +inf) and keep the first of -0 / +0; ARG* pick index 0
    for a NaN first element and never a NaN elsewhere; ties by direction. Rows long enough for
    a block per row and a split, so the tie rules hold across threads and blocks."""
    dtype = dtype_of(dtype_name)
    n = 70_000
    rows = np.zeros((8, n), dtype)
    rows[0, :] = np.nan  # all NaN
    rows[1, 5::7] = -0.0  # +0 first, then -0 ties
    rows[2, :] = np.nan
    rows[2, 40_000] = 1.0
    rows[2, 60_000] = 1.0  # NaN except two equal maxima
    rows[3, 0] = np.nan
    rows[3, 1:] = 2.0  # NaN first
    rows[4, :] = -0.0
    rows[4, 50_000] = 0.0  # -0 first
    rows[5, :] = np.inf
    rows[5, 3] = -np.inf
    rows[6, :] = -1.0
    rows[6, [20_001, 33_333, 69_999]] = [0.0, -0.0, 0.0]  # MAX: a late first zero, +0
    rows[7, :] = 1.0
    rows[7, [12_345, 45_678]] = [-0.0, 0.0]  # MIN: a late first zero, -0
    for function in ("MAX", "MIN", "ARGMAX", "ARGMIN"):
        out = "UINT32" if function.startswith("ARG") else dtype_name
        body = {
            "InputTensor": {"DataType": dtype_name, "Sizes": [8, n]},
            "OutputTensor": {"DataType": out, "Sizes": [8, 1]},
            "Axes": [1],
            "Function": function,
        }
        assert check(cp, "REDUCE", body, rows, cp.asarray(rows), data=rows) == "ok"
        # the same columns of a (n, 8) tensor: a thread per column (reduce_cols), split
        cols = np.ascontiguousarray(rows.T)
        body = {
            "InputTensor": {"DataType": dtype_name, "Sizes": [n, 8]},
            "OutputTensor": {"DataType": out, "Sizes": [1, 8]},
            "Axes": [0],
            "Function": function,
        }
        assert check(cp, "REDUCE", body, cols, cp.asarray(cols), data=cols) == "ok"
    for operator in ("ARGMAX", "ARGMIN"):
        for direction in ("INCREASING", "DECREASING"):
            body = {
                "InputTensor": {"DataType": dtype_name, "Sizes": [8, n]},
                "OutputTensor": {"DataType": "INT64", "Sizes": [8, 1]},
                "Axes": [1],
                "AxisDirection": direction,
            }
            assert check(cp, operator, body, rows, cp.asarray(rows)) == "ok"


def test_reduce_results_are_identical_run_to_run(cp: Any) -> None:
    """The split sums fold their partials in a fixed order: no atomics."""
    rng = rng_for("determinism")
    x = cp.asarray(values(np.dtype(np.float32), rng, 2 * (1 << 20), "cancel").reshape(2, 1 << 20))
    first = dmlops.reduce(x, "SUM", axes=[1], backend="cuda")
    for _ in range(3):
        assert (dmlops.reduce(x, "SUM", axes=[1], backend="cuda") == first).all()


def test_integer_functions_without_integer_support_are_refused_as_the_reference_refuses(cp: Any) -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    for function in ("L1", "SUM_SQUARE", "AVERAGE"):
        body = {
            "InputTensor": {"DataType": "INT32", "Sizes": [2, 3]},
            "OutputTensor": {"DataType": "INT32", "Sizes": [2, 1]},
            "Axes": [1],
            "Function": function,
        }
        assert check(cp, "REDUCE", body, x, cp.asarray(x)) in ("refused", "invalid")


# -- ARGMAX, ARGMIN -----------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
@pytest.mark.parametrize("dtype_name", FLOATS + INTS)
@pytest.mark.parametrize("operator", ["ARGMAX", "ARGMIN"])
def test_arg_matches_the_reference(cp: Any, operator: str, dtype_name: str, direction: str, layout: str) -> None:
    rng = rng_for(operator, dtype_name, direction, layout)
    index = ("UINT32", "UINT64", "INT32", "INT64")[zlib.crc32(f"{dtype_name}{layout}".encode()) % 4]
    for _ in range(CASES):
        shape = random_shape(rng)
        axes = random_axes(rng, len(shape))
        reduce_case(cp, operator, None, dtype_name, index, layout, shape, axes, rng, "any", AxisDirection=direction)


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
@pytest.mark.parametrize("operator", ["ARGMAX", "ARGMIN"])
def test_arg_large_matches_the_reference(cp: Any, operator: str, direction: str) -> None:
    rng = rng_for(operator, direction, "large")
    for shape, axes in LARGE:
        reduce_case(
            cp, operator, None, "FLOAT32", "UINT32", "contiguous", shape, axes, rng, "any", AxisDirection=direction
        )


# -- CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT ---------------------------------------------------

CUMULATIVE_TYPES = ("FLOAT32", "FLOAT16", "INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64")


def cumulative_case(
    cp: Any, operator: str, dtype_name: str, layout: str, shape: tuple[int, ...], axis: int, kind: str, key: Any
) -> None:
    dtype = dtype_of(dtype_name)
    data = values(dtype, rng_for(key), math.prod(shape), kind).reshape(shape)
    flag = "HasExclusiveSum" if operator == "CUMULATIVE_SUMMATION" else "HasExclusiveProduct"
    for direction in ("INCREASING", "DECREASING"):
        for exclusive in (False, True):
            body: dict[str, Any] = {
                "OutputTensor": {"DataType": dtype_name, "Sizes": list(shape)},
                "Axis": axis,
                "AxisDirection": direction,
                flag: exclusive,
            }
            rng = rng_for(key, direction, exclusive)
            body["InputTensor"], host, device = layout_input(cp, rng, data.copy(), layout, dtype_name, kind)
            outputs = None
            if layout == "padded_output":
                body["OutputTensor"], buffer = padded_output(shape, dtype_name)
                outputs = {"OutputTensor": buffer}
            check(cp, operator, body, host, device, outputs)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype_name", CUMULATIVE_TYPES)
@pytest.mark.parametrize("operator", ["CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT"])
def test_cumulative_matches_the_reference(cp: Any, operator: str, dtype_name: str, layout: str) -> None:
    rng = rng_for(operator, dtype_name, layout)
    for case in range(CASES):
        shape = random_shape(rng)
        axis = int(rng.integers(len(shape)))
        kind = "small" if operator == "CUMULATIVE_PRODUCT" and case % 2 else ("cancel" if case % 3 == 1 else "any")
        cumulative_case(cp, operator, dtype_name, layout, shape, axis, kind, (operator, dtype_name, layout, case))


@pytest.mark.parametrize("scan_lines", [8, 16, 32])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "reversed"])
@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16", "INT32"])
@pytest.mark.parametrize("operator", ["CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT"])
def test_cumulative_large_matches_the_reference(
    cp: Any, operator: str, dtype_name: str, layout: str, scan_lines: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Long lines through the shared-memory tiles (scan_tiles: axis innermost, lines not a
    multiple of a warp's lines, a partial last chunk) at each lines-a-warp, and a thread per
    line (axis outermost)."""
    from dmlops.cuda import reduction

    monkeypatch.setattr(reduction, "SCAN_LINES", scan_lines)  # each lines-a-warp of scan_tiles
    cases = (((1000, 1031), 1), ((7, 2600), 1), ((1031, 700), 0), ((5, 37, 300), 2), ((70, 3, 40), 1))
    for shape, axis in cases:
        kind = "small" if operator == "CUMULATIVE_PRODUCT" else "any"
        cumulative_case(cp, operator, dtype_name, layout, shape, axis, kind, (operator, dtype_name, layout, shape))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_cumulative_in_place(cp: Any, direction: str, exclusive: bool) -> None:
    """The output bound to the input's own device array: each element is read before it is written."""
    rng = rng_for("in place", direction, exclusive)
    for x, axis in [(values(np.dtype(np.float32), rng, 3 * 50 * 40).reshape(3, 50, 40), a) for a in range(3)] + [
        (values(np.dtype(np.float32), rng, 5 * 1500).reshape(5, 1500), 1)  # long lines
    ]:
        body = {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": list(x.shape)},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": list(x.shape)},
            "Axis": axis,
            "AxisDirection": direction,
            "HasExclusiveSum": exclusive,
        }
        desc = desc_from_json("CUMULATIVE_SUMMATION", body)
        expected = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"]
        buffer = cp.asarray(x)
        dmlops.execute(desc, {"InputTensor": buffer}, backend="cuda", outputs={"OutputTensor": buffer})
        assert same(to_numpy(buffer), expected).all()


# -- TOP_K, TOP_K1 ---------------------------------------------------------------------------------


def top_k_case(
    cp: Any, operator: str, dtype_name: str, layout: str, shape: list[int], axis: int, k: int, key: Any
) -> None:
    dtype = dtype_of(dtype_name)
    data = values(dtype, rng_for(key), math.prod(shape)).reshape(shape)
    sizes = [k if i == axis else s for i, s in enumerate(shape)]
    index = ("UINT32", "UINT64")[k % 2]
    for direction in ["INCREASING", "DECREASING"] if operator == "TOP_K1" else [None]:
        body: dict[str, Any] = {
            "OutputValueTensor": {"DataType": dtype_name, "Sizes": sizes},
            "OutputIndexTensor": {"DataType": index, "Sizes": sizes},
            "Axis": axis,
            "K": k,
        }
        if direction is not None:
            body["AxisDirection"] = direction
        body["InputTensor"], host, device = layout_input(cp, rng_for(key, direction), data.copy(), layout, dtype_name)
        outputs = None
        if layout == "padded_output":
            body["OutputValueTensor"], a = padded_output(tuple(sizes), dtype_name)
            body["OutputIndexTensor"], b = padded_output(tuple(sizes), index)
            outputs = {"OutputValueTensor": a, "OutputIndexTensor": b}
        check(cp, operator, body, host, device, outputs)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype_name", FLOATS + INTS)
@pytest.mark.parametrize("operator", ["TOP_K", "TOP_K1"])
def test_top_k_matches_the_reference(cp: Any, operator: str, dtype_name: str, layout: str) -> None:
    rng = rng_for(operator, dtype_name, layout)
    for case in range(CASES):
        shape = list(random_shape(rng))
        axis = int(rng.integers(len(shape)))
        if case % 2:  # a line longer than a warp, and K past the register lists (32)
            shape[axis] = max(shape[axis], 70)
        n = shape[axis]
        k = int(rng.choice([1, min(n, 3), n, max(1, n // 2), min(n, 40), min(n, 8)]))
        top_k_case(cp, operator, dtype_name, layout, shape, axis, k, (operator, dtype_name, layout, case))


@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16", "INT64", "UINT8"])
@pytest.mark.parametrize("operator", ["TOP_K", "TOP_K1"])
def test_top_k_large_matches_the_reference(cp: Any, operator: str, dtype_name: str) -> None:
    """Many rows (the register lists, every K up to 32 and one past), a strided axis of a large
    input (copied with the axis innermost) and a long line."""
    for shape, axis, k in (
        ([2000, 1024], 1, 8),
        ([700, 333], 1, 32),
        ([500, 100], 1, 33),
        ([1000, 130], 0, 5),
        ([3, 100_000], 1, 17),
        ([300, 64], 1, 1),
    ):
        top_k_case(cp, operator, dtype_name, "contiguous", shape, axis, k, (operator, dtype_name, tuple(shape), k))


def test_top_k_ties_and_nan_order(cp: Any) -> None:
    """Equal values (-0 and +0 included) by ascending index in both directions; NaN the largest."""
    x = np.array([[np.nan, 1, 3, 2, np.nan, 3, -0.0, 0.0, 3, 1, -0.0]], np.float32)
    n = x.shape[1]
    for operator, direction in (("TOP_K", None), ("TOP_K1", "INCREASING"), ("TOP_K1", "DECREASING")):
        for k in (1, 4, n):
            body: dict[str, Any] = {
                "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, n]},
                "OutputValueTensor": {"DataType": "FLOAT32", "Sizes": [1, k]},
                "OutputIndexTensor": {"DataType": "UINT32", "Sizes": [1, k]},
                "Axis": 1,
                "K": k,
            }
            if direction:
                body["AxisDirection"] = direction
            assert check(cp, operator, body, x, cp.asarray(x)) == "ok"


# -- the claim ------------------------------------------------------------------------------------


def test_every_operator_of_the_family_runs_on_cuda() -> None:
    from dmlops.cuda import reduction as cuda
    from dmlops.descs import desc_class
    from dmlops.descs.reduction import OPERATORS as FAMILY_OPERATORS

    assert set(cuda.OPERATORS) == FAMILY_OPERATORS
    for operator in FAMILY_OPERATORS:
        assert "cuda" in desc_class(operator).backends
