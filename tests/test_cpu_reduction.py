"""The reduction family on the cpu backend against the NumPy reference computed live.

REDUCE (every function), ARGMAX, ARGMIN, CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT, TOP_K
and TOP_K1 over seeded random cases: every data type the desc validates, every
AxisDirection and exclusive flag, axis sets unsorted, repeated and empty, inputs strided,
transposed, reversed (negative NumPy strides) and broadcast (0-strides), outputs padded, and
values chosen to break wrong numerics: NaN, +-inf, +-0, ties, integer extremes, subnormals,
and float sums whose float64 result depends on the order of the additions.

Outputs compare bit for bit, NaN equal to NaN, except REDUCE's float sums (SUM, AVERAGE,
L1, L2, SUM_SQUARE, LOG_SUM, LOG_SUM_EXP): both backends add the same float64 terms, in
different orders (the cpu backend in SIMD lanes, the reference in NumPy's order), and
round once, so they agree to within the bound ``reduction_cases.sum_interval`` derives. Where
the reference refuses a desc, the cpu backend must refuse it with the same message.
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops.descs import desc_from_json
from dmlops.descs.reduction import OPERATORS as FAMILY_OPERATORS
from dmlops.errors import InvalidDescError, UnsupportedError
from reduction_cases import dtype_of, random_axes, rng_for, same, within_sum_bound

pytestmark = pytest.mark.cpu_backend
pytest.importorskip("numba")

FLOATS = ("FLOAT32", "FLOAT16")
INTS = ("INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64")
FUNCTIONS = ("SUM", "AVERAGE", "L1", "L2", "SUM_SQUARE", "LOG_SUM", "LOG_SUM_EXP", "MAX", "MIN", "MULTIPLY")
FUNCTIONS += ("ARGMAX", "ARGMIN")
LAYOUTS = ("contiguous", "transposed", "reversed", "padded", "broadcast", "padded_output")
CASES_PER_PARAM = 6


def values(dtype: np.dtype[Any], rng: np.random.Generator, count: int, kind: str) -> np.ndarray:
    """``count`` adversarial values: specials, ties and extremes mixed into ordinary ones.

    kind "cancel": floats of widely spread exponents and both signs, whose float64 sum
    depends on the order of the additions; "small": values whose products stay finite.
    """
    if dtype.kind == "f":
        finfo = np.finfo(dtype)
        if kind == "cancel":
            # ordinary values, and +-2^70 alternating (float32; FLOAT16 sums are exact in float64 anyway)
            # at a tenth of the positions: the big terms cancel, and which small ones they absorbed
            # on the way depends on the order of the additions
            v = rng.standard_normal(count) * np.exp(rng.uniform(-10, 10, count))
            big = 2.0**70 if dtype == np.float32 else 2.0**15
            where = np.sort(rng.choice(count, count // 10, replace=False))
            v[where] = big * (-1.0) ** np.arange(where.size)
            with np.errstate(over="ignore"):
                return v.astype(dtype)
        if kind == "small":
            v = rng.uniform(0.5, 1.5, count) * rng.choice([-1.0, 1.0], count)
        else:
            v = rng.standard_normal(count) * 4
        specials = np.array(
            [
                np.nan,
                np.inf,
                -np.inf,
                0.0,
                -0.0,
                1.0,
                -1.0,
                float(finfo.max),
                -float(finfo.max),
                float(finfo.smallest_subnormal),
                2.0,
            ]
        )
        pick = rng.random(count)
        v = np.where(pick < 0.25, rng.choice(specials, count), v)
        v = np.where((pick >= 0.25) & (pick < 0.4), rng.choice([0.5, -0.0, 0.0, 3.0], count), v)  # ties
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


def random_shape(rng: np.random.Generator, large: bool = False) -> tuple[int, ...]:
    if not large:
        return tuple(int(rng.choice([1, 2, 3, 5, 7])) for _ in range(int(rng.integers(1, 6))))
    # past the thread threshold, the tile width and the pairwise block: at most 455,100 elements
    ndim = int(rng.integers(1, 4))
    shape = [int(rng.choice([1, 2, 3])) for _ in range(ndim)]
    axes = rng.permutation(ndim)
    shape[axes[0]] = int(rng.choice([300, 1031, 4100]))
    if ndim > 1:
        shape[axes[1]] = 37
    return tuple(shape)


def layout_input(
    rng: np.random.Generator, data: np.ndarray, layout: str, dtype_name: str, kind: str = "any"
) -> tuple[dict[str, Any], Any]:
    """(InputTensor desc, the array to pass): a logical NumPy view, or a flat buffer with desc Strides."""
    shape = data.shape
    tensor: dict[str, Any] = {"DataType": dtype_name, "Sizes": list(shape)}
    if layout == "transposed":  # the memory holds the axes in a random order
        perm = rng.permutation(len(shape))
        return tensor, np.ascontiguousarray(data.transpose(perm)).transpose(np.argsort(perm))
    if layout == "reversed":  # negative NumPy strides on random axes
        flips = tuple(slice(None, None, -1) if rng.random() < 0.6 else slice(None) for _ in shape)
        return tensor, np.ascontiguousarray(data[flips])[flips]
    if layout in ("padded", "broadcast"):
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
        view = np.lib.stride_tricks.as_strided(flat, shape, [s * flat.itemsize for s in strides])
        view = view.copy()  # the logical values; the buffer is what the backends read
        data[...] = view
        tensor["Strides"] = strides
        return tensor, flat
    return tensor, data


def padded_output(shape: tuple[int, ...], dtype_name: str) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """(desc, buffer for numpy, buffer for cpu): rows padded by 2 elements, the padding filled with 7."""
    strides, pitch = [], 1
    for n in reversed(shape):
        strides.append(pitch)
        pitch *= n + 2 if len(strides) == 1 else n
    strides.reverse()
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    buffer = np.full(span, 7, dtype_of(dtype_name))
    return {"DataType": dtype_name, "Sizes": list(shape), "Strides": strides}, buffer, buffer.copy()


SUM_FUNCTIONS = ("SUM", "AVERAGE", "L1", "L2", "SUM_SQUARE", "LOG_SUM", "LOG_SUM_EXP")
"""REDUCE's float sums: float64 sums whose order of additions is the backend's."""


def logical_input(tensor: dict[str, Any], array: np.ndarray) -> np.ndarray:
    """The tensor's elements as an array of its Sizes (a flat buffer read through the desc's Strides)."""
    strides = tensor.get("Strides")
    if strides is None:
        return np.asarray(array)
    steps = [s * array.itemsize for s in strides]
    return np.lib.stride_tricks.as_strided(array, tensor["Sizes"], steps, writeable=False)


def sums_agree(function: str, x: np.ndarray, axes: list[int], got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: within the float64 order bound (``reduction_cases.sum_interval``), or bit for bit."""
    return within_sum_bound(function, x, axes, got.ravel(), want.ravel())[0].reshape(got.shape)


def check(operator: str, body: dict[str, Any], inputs: dict[str, Any], outputs: dict[str, Any] | None = None) -> str:
    """Run the desc on numpy and cpu and compare every output ('invalid', 'refused' or 'ok').

    Bit for bit, but REDUCE's float sums within ``reduction_cases.sum_interval``'s bound."""
    desc = desc_from_json(operator, body)
    try:
        desc.validate()
    except InvalidDescError:
        return "invalid"
    outs_numpy = {m: b for m, (b, _) in (outputs or {}).items()}
    outs_cpu = {m: c for m, (_, c) in (outputs or {}).items()}
    try:
        expected = dmlops.execute(desc, inputs, backend="numpy", outputs=outs_numpy or None)
    except UnsupportedError as exc:
        with pytest.raises(UnsupportedError) as refused:
            dmlops.execute(desc, inputs, backend="cpu", outputs=outs_cpu or None)
        assert str(refused.value) == str(exc)
        return "refused"
    got = dmlops.execute(desc, inputs, backend="cpu", outputs=outs_cpu or None)
    for member, e in expected.items():
        g = got[member]
        assert g.dtype == e.dtype and g.shape == e.shape, member
        function = body.get("Function")
        ok = same(np.asarray(g), np.asarray(e))  # an output buffer's padding too
        if operator == "REDUCE" and function in SUM_FUNCTIONS and e.dtype.kind == "f":
            x = logical_input(body["InputTensor"], inputs["InputTensor"])
            tensor = body["OutputTensor"]
            where = logical_input(tensor, np.arange(e.size)) if "Strides" in tensor else np.arange(e.size)
            where = where.reshape(tensor["Sizes"])
            gv, ev = np.asarray(g).ravel()[where], np.asarray(e).ravel()[where]
            ok = ok.ravel()
            ok[where.ravel()] = sums_agree(function, x, list(body["Axes"]), gv, ev).ravel()
        bad = np.flatnonzero(~ok)
        if bad.size:
            shown = ", ".join(f"[{i}] cpu {g.flat[i]!r} numpy {e.flat[i]!r}" for i in bad[:6])
            pytest.fail(f"{operator} {body}: {member}: {bad.size} of {g.size} elements differ: {shown}")
    return "ok"


def _reduce_body(
    operator: str, function: str | None, dtype_name: str, out_dtype: str, shape: Any, axes: list[int]
) -> dict[str, Any]:
    reduced = set(axes)
    body: dict[str, Any] = {
        "InputTensor": {"DataType": dtype_name, "Sizes": list(shape)},
        "OutputTensor": {"DataType": out_dtype, "Sizes": [1 if i in reduced else n for i, n in enumerate(shape)]},
        "Axes": axes,
    }
    if function is not None:
        body["Function"] = function
    return body


def run_reduction_cases(
    operator: str, function: str | None, dtype_name: str, layout: str, out_dtype: str, large: bool, **attrs: Any
) -> list[str]:
    rng = rng_for(operator, function, dtype_name, layout, out_dtype, large, attrs)
    dtype = dtype_of(dtype_name)
    results = []
    for case in range(CASES_PER_PARAM if not large else 2):
        shape = random_shape(rng, large)
        axes = random_axes(rng, len(shape))
        kind = "small" if function == "MULTIPLY" else ("cancel" if case % 2 and dtype.kind == "f" else "any")
        data = values(dtype, rng, math.prod(shape), kind).reshape(shape)
        body = _reduce_body(operator, function, dtype_name, out_dtype, shape, axes)
        body["InputTensor"], x = layout_input(rng, data, layout, dtype_name, kind)
        body.update(attrs)
        outputs = None
        if layout == "padded_output":
            body["OutputTensor"], a, b = padded_output(tuple(body["OutputTensor"]["Sizes"]), out_dtype)
            outputs = {"OutputTensor": (a, b)}
        results.append(check(operator, body, {"InputTensor": x}, outputs))
    return results


# -- REDUCE ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype_name", FLOATS + INTS)
@pytest.mark.parametrize("function", FUNCTIONS)
def test_reduce_matches_the_reference(function: str, dtype_name: str, layout: str) -> None:
    out_dtype = "UINT32" if function in ("ARGMAX", "ARGMIN") else dtype_name
    results = run_reduction_cases("REDUCE", function, dtype_name, layout, out_dtype, large=False)
    if set(results) == {"invalid"}:
        pytest.skip(f"REDUCE {function} takes no {dtype_name}")


@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16", "INT32", "UINT64"])
@pytest.mark.parametrize("function", ["SUM", "L2", "LOG_SUM_EXP", "AVERAGE", "MAX", "MIN", "MULTIPLY", "ARGMIN"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "broadcast"])
def test_reduce_large_matches_the_reference(function: str, dtype_name: str, layout: str) -> None:
    """Shapes past the thread threshold, the tile width and the pairwise block (several levels)."""
    out_dtype = "INT64" if function == "ARGMIN" else dtype_name
    results = run_reduction_cases("REDUCE", function, dtype_name, layout, out_dtype, large=True)
    if set(results) == {"invalid"}:
        pytest.skip(f"REDUCE {function} takes no {dtype_name}")


def test_integer_functions_without_integer_support_are_refused_as_the_reference_refuses() -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    for function in ("L1", "SUM_SQUARE"):
        body = _reduce_body("REDUCE", function, "INT32", "INT32", x.shape, [1])
        assert check("REDUCE", body, {"InputTensor": x}) == "refused"


@pytest.mark.parametrize("order", ["pairwise", "sequential"])
def test_order_sensitive_float_sums_stay_within_the_bound(order: str) -> None:
    """Sums whose float64 value depends on the order of the additions: SUM over the last axis
    (NumPy adds pairwise, the cpu backend in SIMD lanes) and over the first (both add row after
    row); the exact sums, rounded once, differ from the reference's on some outputs, so the data
    does exercise the order, and the cpu backend's results must still lie within the bound."""
    rng = rng_for("order", order)
    shape = (40, 1000) if order == "pairwise" else (1000, 40)
    axes = [1] if order == "pairwise" else [0]
    lines = values(np.dtype(np.float32), rng, math.prod(shape), "cancel").reshape(40, 1000)
    x = lines if order == "pairwise" else np.ascontiguousarray(lines.T)  # each summed line balanced
    body = _reduce_body("REDUCE", "SUM", "FLOAT32", "FLOAT32", shape, axes)
    assert check("REDUCE", body, {"InputTensor": x}) == "ok"
    rows = x.astype(np.float64).T if order == "sequential" else x.astype(np.float64)
    exact = np.array([math.fsum(r) for r in rows], np.float32)
    reference = dmlops.reduce(x, "SUM", axes=axes).ravel()
    assert (exact != reference).any(), "the data is not order-sensitive; the test would prove nothing"


STRESS_SHAPES = {
    # (shape, axes): long odd rows, rows past several SIMD widths and the gather block, axis 0
    # with few columns (a tile narrower than a vector), uneven thread ranges, every axis at once
    "long odd row": ((3, 100_003), [1]),
    "odd rows": ((257, 1031), [1]),
    "short rows": ((4099, 7), [1]),
    "axis 0, 3 columns": ((100_001, 3), [0]),
    "axis 0, 4100 columns": ((37, 4100), [0]),
    "axis 0, uneven": ((4097, 257), [0]),
    "middle axis": ((5, 2049, 33), [1]),
    "two axes strided": ((33, 65, 97), [0, 2]),
    "every axis": ((1031, 67), [0, 1]),
}


@pytest.mark.parametrize("function", ["SUM", "AVERAGE", "L1", "L2", "SUM_SQUARE", "LOG_SUM", "LOG_SUM_EXP"])
@pytest.mark.parametrize("case", list(STRESS_SHAPES))
def test_float_sums_of_stress_shapes_stay_within_the_bound(case: str, function: str) -> None:
    """The cpu backend's own summation orders (SIMD lanes, blocks, columns, thread ranges) on
    order-sensitive data (cancelling +-2^70 terms) with NaN and +-inf in some lines: within the
    bound, the non-finite results bit for bit."""
    shape, axes = STRESS_SHAPES[case]
    rng = rng_for("stress", case, function)
    body = _reduce_body("REDUCE", function, "FLOAT32", "FLOAT32", shape, axes)
    # ordinary values (a tight bound) and cancelling ones; exp(2^70) is inf: nothing left to cancel
    for kind in ("any",) if function == "LOG_SUM_EXP" else ("any", "cancel"):
        x = values(np.dtype(np.float32), rng, math.prod(shape), kind)
        if kind == "any":  # no finfo.max among them (a sum of two overflows), most exps finite
            x = np.where(np.abs(x) < 1e30, x / 16, rng.choice([np.inf, -np.inf, np.nan], x.size)).astype(np.float32)
        specials = rng.choice(x.size, 5, replace=False)
        x[specials] = [np.nan, np.inf, -np.inf, np.inf, np.nan]
        x = x.reshape(shape)
        assert check("REDUCE", body, {"InputTensor": x}) == "ok"
        if function == "SUM":  # transposed in memory: the same sums through the other loop order
            assert check("REDUCE", body, {"InputTensor": np.ascontiguousarray(x.T).T}) == "ok"


@pytest.mark.parametrize("function", ["SUM", "L2", "MAX", "MIN", "MULTIPLY"])
def test_outer_axes_that_do_not_merge_are_walked_in_order(function: str) -> None:
    """Columns reduced over two outer axes that do not merge in memory (a padded view), 4n + 1 and
    4n + 3 reduced elements: the tile kernels' four-at-a-time walk over the reduced offsets."""
    rng = rng_for("outer axes", function)
    for shape in ((13, 11, 300), (5, 3, 257)):
        kind = "small" if function == "MULTIPLY" else "any"
        big = values(np.dtype(np.float32), rng, shape[0] * (shape[1] + 1) * shape[2], kind)
        x = big.reshape(shape[0], shape[1] + 1, shape[2])[:, : shape[1], :]
        body = _reduce_body("REDUCE", function, "FLOAT32", "FLOAT32", shape, [0, 1])
        assert check("REDUCE", body, {"InputTensor": x}) == "ok"
        body = _reduce_body("REDUCE", function, "INT32", "INT32", shape, [0, 1])
        if function in ("SUM", "MAX", "MIN", "MULTIPLY"):
            padded = (shape[0], shape[1] + 1, shape[2])  # wrapping sums and products, the same walk
            xi = rng.integers(-(2**31), 2**31, padded, dtype=np.int64).astype(np.int32)
            assert check("REDUCE", body, {"InputTensor": xi[:, : shape[1], :]}) == "ok"


@pytest.mark.parametrize("function", ["MAX", "MIN"])
@pytest.mark.parametrize("case", list(STRESS_SHAPES))
def test_float32_max_min_bit_for_bit_on_stress_shapes(case: str, function: str) -> None:
    """MAX / MIN on integer keys (contiguous lines and columns): the first of equal zeros, NaN
    skipped, all-NaN lines -inf / +inf, exactly as the reference's scan; transposed too."""
    shape, axes = STRESS_SHAPES[case]
    rng = rng_for("extreme", case, function)
    x = rng.choice(np.array([-0.0, 0.0, -1.0, np.nan, -np.inf], np.float32), math.prod(shape)).reshape(shape)
    if case == "short rows":
        x[::3] = np.nan  # whole lines of NaN
    if case == "odd rows":
        x[5:9] = rng.standard_normal((4, shape[1])).astype(np.float32)
    body = _reduce_body("REDUCE", function, "FLOAT32", "FLOAT32", shape, axes)
    for data in (x, np.ascontiguousarray(x.T).T, -x):
        assert check("REDUCE", body, {"InputTensor": data}) == "ok"


# -- ARGMAX, ARGMIN ---------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
@pytest.mark.parametrize("dtype_name", FLOATS + INTS)
@pytest.mark.parametrize("operator", ["ARGMAX", "ARGMIN"])
def test_arg_matches_the_reference(operator: str, dtype_name: str, direction: str, layout: str) -> None:
    index = ("UINT32", "UINT64", "INT32", "INT64")[zlib.crc32(f"{dtype_name}{layout}".encode()) % 4]
    run_reduction_cases(operator, None, dtype_name, layout, index, large=False, AxisDirection=direction)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("operator", ["ARGMAX", "ARGMIN"])
def test_arg_large_matches_the_reference(operator: str, layout: str) -> None:
    for direction in ("INCREASING", "DECREASING"):
        run_reduction_cases(operator, None, "FLOAT32", layout, "UINT32", large=True, AxisDirection=direction)


# -- CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT -----------------------------------------------------------

CUMULATIVE_TYPES = ("FLOAT32", "FLOAT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64")


def run_cumulative_cases(operator: str, dtype_name: str, layout: str, large: bool) -> None:
    rng = rng_for(operator, dtype_name, layout, large)
    dtype = dtype_of(dtype_name)
    flag = "HasExclusiveSum" if operator == "CUMULATIVE_SUMMATION" else "HasExclusiveProduct"
    for case in range(CASES_PER_PARAM if not large else 2):
        shape = random_shape(rng, large)
        axis = int(rng.integers(len(shape)))
        kind = (
            "small"
            if operator == "CUMULATIVE_PRODUCT" and case % 2
            else ("cancel" if case % 3 == 1 and dtype.kind == "f" else "any")
        )
        data = values(dtype, rng, math.prod(shape), kind).reshape(shape)
        for direction in ("INCREASING", "DECREASING"):
            for exclusive in (False, True):
                body: dict[str, Any] = {
                    "OutputTensor": {"DataType": dtype_name, "Sizes": list(shape)},
                    "Axis": axis,
                    "AxisDirection": direction,
                    flag: exclusive,
                }
                body["InputTensor"], x = layout_input(
                    rng_for(case, direction, exclusive), data.copy(), layout, dtype_name, kind
                )
                outputs = None
                if layout == "padded_output":
                    body["OutputTensor"], a, b = padded_output(shape, dtype_name)
                    outputs = {"OutputTensor": (a, b)}
                check(operator, body, {"InputTensor": x}, outputs)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype_name", CUMULATIVE_TYPES)
@pytest.mark.parametrize("operator", ["CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT"])
def test_cumulative_matches_the_reference(operator: str, dtype_name: str, layout: str) -> None:
    run_cumulative_cases(operator, dtype_name, layout, large=False)


@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16", "INT32"])
@pytest.mark.parametrize("operator", ["CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT"])
def test_cumulative_large_matches_the_reference(operator: str, dtype_name: str) -> None:
    run_cumulative_cases(operator, dtype_name, "transposed", large=True)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_cumulative_in_place(direction: str, exclusive: bool) -> None:
    """The output bound to the input's own array: each element is read before it is written."""
    rng = rng_for("in place", direction, exclusive)
    x = values(np.dtype(np.float32), rng, 3 * 50 * 40, "any").reshape(3, 50, 40)
    for axis in range(3):
        body = {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": list(x.shape)},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": list(x.shape)},
            "Axis": axis,
            "AxisDirection": direction,
            "HasExclusiveSum": exclusive,
        }
        desc = desc_from_json("CUMULATIVE_SUMMATION", body)
        expected = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"]
        buffer = x.copy()
        dmlops.execute(desc, {"InputTensor": buffer}, backend="cpu", outputs={"OutputTensor": buffer})
        assert same(buffer, expected).all()


@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16", "INT32"])
@pytest.mark.parametrize("operator", ["CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT"])
def test_cumulative_lines_scanned_four_at_a_time(operator: str, dtype_name: str) -> None:
    """Many lines (four scanned together, then the rest one by one, over uneven thread ranges):
    contiguous, reversed and along a middle axis, every direction and exclusive flag."""
    rng = rng_for("four lines", operator, dtype_name)
    flag = "HasExclusiveSum" if operator == "CUMULATIVE_SUMMATION" else "HasExclusiveProduct"
    kind = "small" if operator == "CUMULATIVE_PRODUCT" else "cancel" if dtype_name == "FLOAT32" else "any"
    for shape, axis in (((1027, 67), 1), ((3, 1031, 23), 1), ((7, 5), 1), ((2, 3, 4099), 2)):
        data = values(dtype_of(dtype_name), rng, math.prod(shape), kind).reshape(shape)
        for direction in ("INCREASING", "DECREASING"):
            for exclusive in (False, True):
                body: dict[str, Any] = {
                    "InputTensor": {"DataType": dtype_name, "Sizes": list(shape)},
                    "OutputTensor": {"DataType": dtype_name, "Sizes": list(shape)},
                    "Axis": axis,
                    "AxisDirection": direction,
                    flag: exclusive,
                }
                for x in (data, data[::-1, ...].copy()[::-1, ...]):
                    assert check(operator, body, {"InputTensor": x}) == "ok"


# -- TOP_K, TOP_K1 ----------------------------------------------------------------------------------------


def run_top_k_cases(operator: str, dtype_name: str, layout: str, large: bool) -> None:
    rng = rng_for(operator, dtype_name, layout, large)
    dtype = dtype_of(dtype_name)
    for case in range(CASES_PER_PARAM if not large else 2):
        shape = list(random_shape(rng, large))
        axis = int(rng.integers(len(shape)))
        if case % 2:  # a line longer than the insertion buffer's K
            shape[axis] = max(shape[axis], 70)
        n = shape[axis]
        k = int(rng.choice([1, min(n, 3), n, max(1, n // 2), min(n, 40)]))
        data = values(dtype, rng, math.prod(shape), "any").reshape(shape)
        index = "UINT32" if case % 2 else "UINT64"
        sizes = [k if i == axis else s for i, s in enumerate(shape)]
        directions = ["INCREASING", "DECREASING"] if operator == "TOP_K1" else [None]
        for direction in directions:
            body: dict[str, Any] = {
                "OutputValueTensor": {"DataType": dtype_name, "Sizes": sizes},
                "OutputIndexTensor": {"DataType": index, "Sizes": sizes},
                "Axis": axis,
                "K": k,
            }
            if direction is not None:
                body["AxisDirection"] = direction
            body["InputTensor"], x = layout_input(rng_for(case, direction), data.copy(), layout, dtype_name)
            outputs = None
            if layout == "padded_output":
                body["OutputValueTensor"], a, b = padded_output(tuple(sizes), dtype_name)
                body["OutputIndexTensor"], c, d = padded_output(tuple(sizes), index)
                outputs = {"OutputValueTensor": (a, b), "OutputIndexTensor": (c, d)}
            check(operator, body, {"InputTensor": x}, outputs)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype_name", FLOATS + INTS)
@pytest.mark.parametrize("operator", ["TOP_K", "TOP_K1"])
def test_top_k_matches_the_reference(operator: str, dtype_name: str, layout: str) -> None:
    run_top_k_cases(operator, dtype_name, layout, large=False)


@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16", "INT64"])
@pytest.mark.parametrize("operator", ["TOP_K", "TOP_K1"])
def test_top_k_large_matches_the_reference(operator: str, dtype_name: str) -> None:
    run_top_k_cases(operator, dtype_name, "contiguous", large=True)


@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16", "INT32"])
@pytest.mark.parametrize("operator", ["TOP_K", "TOP_K1"])
def test_top_k_blocks_skipped_keep_ties_and_nan_order(operator: str, dtype_name: str) -> None:
    """Lines of several key blocks (odd lengths, ties and NaN across block boundaries, lines
    sorted either way so that no block or every block is skipped), K below, at and above the
    insertion buffer's limit, contiguous and strided lines."""
    rng = rng_for("top k blocks", operator, dtype_name)
    dtype = dtype_of(dtype_name)
    n = 1000
    lines = [
        values(dtype, rng, n, "any"),
        rng.integers(0, 4, n).astype(dtype),  # ties everywhere
        np.sort(values(dtype, rng, n, "any")),  # ascending: a new best in every block
        np.sort(values(dtype, rng, n, "any"))[::-1].copy(),  # descending: every later block skipped
    ]
    if dtype.kind == "f":
        nan_line = values(dtype, rng, n, "any")
        nan_line[rng.choice(n, 40, replace=False)] = np.nan
        zeros = rng.choice(np.array([-0.0, 0.0, -1.0], dtype), n)
        lines += [nan_line, zeros]
    data = np.stack(lines * 40)  # 160 or 240 lines: past the thread threshold
    directions = ["INCREASING", "DECREASING"] if operator == "TOP_K1" else [None]
    for k in (1, 8, 32, 33):
        for direction in directions:
            for axis, x in ((1, data), (0, np.ascontiguousarray(data.T))):
                sizes = [k if i == axis else s for i, s in enumerate(x.shape)]
                body: dict[str, Any] = {
                    "InputTensor": {"DataType": dtype_name, "Sizes": list(x.shape)},
                    "OutputValueTensor": {"DataType": dtype_name, "Sizes": sizes},
                    "OutputIndexTensor": {"DataType": "UINT32", "Sizes": sizes},
                    "Axis": axis,
                    "K": k,
                }
                if direction is not None:
                    body["AxisDirection"] = direction
                assert check(operator, body, {"InputTensor": x}) == "ok"


# -- the claim ---------------------------------------------------------------------------------------


def test_every_operator_of_the_family_runs_on_cpu() -> None:
    from dmlops.cpu import reduction as cpu
    from dmlops.descs import desc_class

    assert set(cpu.OPERATORS) == FAMILY_OPERATORS
    for operator in FAMILY_OPERATORS:
        assert "cpu" in desc_class(operator).backends
