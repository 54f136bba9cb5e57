"""The reduction family on the cpu backend, bit for bit against the NumPy reference computed live.

REDUCE (every function), ARGMAX, ARGMIN, CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT, TOP_K
and TOP_K1 over seeded random cases: every data type the desc validates, every
AxisDirection and exclusive flag, axis sets unsorted, repeated and empty, inputs strided,
transposed, reversed (negative NumPy strides) and broadcast (0-strides), outputs padded, and
values chosen to break wrong numerics: NaN, +-inf, +-0, ties, integer extremes, subnormals,
and float sums whose float64 result depends on the order of the additions (so the cpu
backend must add in NumPy's pairwise or sequential order exactly as the reference does).
Outputs compare bit for bit, NaN equal to NaN; where the reference refuses a desc, the cpu
backend must refuse it with the same message.
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
from dmlops.enums import TensorDataType
from dmlops.errors import InvalidDescError, UnsupportedError

pytestmark = pytest.mark.cpu_backend
pytest.importorskip("numba")

FLOATS = ("FLOAT32", "FLOAT16")
INTS = ("INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64")
FUNCTIONS = ("SUM", "AVERAGE", "L1", "L2", "SUM_SQUARE", "LOG_SUM", "LOG_SUM_EXP", "MAX", "MIN", "MULTIPLY")
FUNCTIONS += ("ARGMAX", "ARGMIN")
LAYOUTS = ("contiguous", "transposed", "reversed", "padded", "broadcast", "padded_output")
CASES_PER_PARAM = 6


def rng_for(*key: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def dtype_of(name: str) -> np.dtype[Any]:
    return np.dtype(TensorDataType.from_any(name).numpy_dtype)


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


def same(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Elementwise: equal bits, or both NaN."""
    if got.dtype.kind != "f":
        return got == expected
    bits = np.dtype(f"u{got.dtype.itemsize}")
    return (got.view(bits) == expected.view(bits)) | (np.isnan(got) & np.isnan(expected))


def check(operator: str, body: dict[str, Any], inputs: dict[str, Any], outputs: dict[str, Any] | None = None) -> str:
    """Run the desc on numpy and cpu and compare every output bit for bit; 'invalid', 'refused' or 'ok'."""
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
        bad = np.flatnonzero(~same(np.asarray(g), np.asarray(e)))
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


def random_axes(rng: np.random.Generator, ndim: int) -> list[int]:
    """Unsorted, sometimes repeated, sometimes empty or every axis."""
    pick = rng.random()
    if pick < 0.1:
        return []
    if pick < 0.25:
        return [int(a) for a in rng.permutation(ndim)]
    axes = [int(a) for a in rng.choice(ndim, int(rng.integers(1, ndim + 1)), replace=False)]
    if rng.random() < 0.3:
        axes.append(axes[0])
    return axes


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
def test_float_sums_add_in_the_reference_order(order: str) -> None:
    """Sums whose float64 value depends on the order of the additions: SUM over the last axis
    (NumPy adds pairwise) and over the first (NumPy adds row after row); the exact sums, rounded
    once, differ from the reference's on some outputs, so the test sees a wrong order."""
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


# -- the claim ---------------------------------------------------------------------------------------


def test_every_operator_of_the_family_runs_on_cpu() -> None:
    from dmlops.cpu import reduction as cpu
    from dmlops.descs import desc_class

    assert set(cpu.OPERATORS) == FAMILY_OPERATORS
    for operator in FAMILY_OPERATORS:
        assert "cpu" in desc_class(operator).backends
