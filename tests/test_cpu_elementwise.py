"""The element-wise family on the cpu backend, against the NumPy reference computed live.

Every differential case of ``tests/oracles/elementwise.py`` (adversarial values: NaN,
+-inf, signed zeros, subnormals, integer extremes, shift counts past the bit width),
also in FLOAT16 and FLOAT64 where the desc validates, at the case's small shape and at a
large one (threads, tiles); then strided, broadcast and flat-buffer layouts, preallocated
outputs, and outputs bound to an input's memory. Operators the reference computes exactly
compare bit for bit (NaN equal to NaN); transcendental ones within the directml
differential's TOLERANCE (FLOAT16: one of its ulps more).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops.backends import load_backend
from dmlops.descs import desc_from_json
from dmlops.enums import FeatureLevel, TensorDataType
from dmlops.errors import InvalidDescError, UnsupportedError
from oracles.elementwise import CASES, TOLERANCE, Case, case_id, check_long_rows_of_like_values, data

pytestmark = pytest.mark.cpu_backend
pytest.importorskip("numba")

LARGE = (2, 3, 97, 211)
"""122,802 elements: several threads, many tiles, a last size that is not a multiple of a vector."""


def run(desc: Any, inputs: dict[str, Any], backend: str, outputs: dict[str, Any] | None = None) -> dict[str, Any]:
    """``dmlops.execute``; on cpu through the backend module while the family's claim does not list cpu yet."""
    if backend == "cpu" and "cpu" not in desc.backends:
        desc.validate()
        module = load_backend("cpu")
        return dict(module.execute(desc, inputs, outputs, feature_level=FeatureLevel.latest(), strict=False))
    return dict(dmlops.execute(desc, inputs, backend=backend, outputs=outputs))


def build(case: Case, dtype_name: str, shape: tuple[int, ...]) -> tuple[Any, dict[str, np.ndarray]]:
    dtype = np.dtype(TensorDataType.from_any(dtype_name).numpy_dtype)
    rng = np.random.default_rng(zlib.crc32(f"{case.operator}{case.attrs}{dtype_name}{shape}".encode()))
    inputs = {}
    for member in case.inputs:
        own_shape = (1,) * len(shape) if member in case.scalars else shape
        if member == "ConditionTensor":
            inputs[member] = rng.integers(0, 3, own_shape).astype(np.uint8)
        else:
            own = dtype
            if member in case.member_types:
                own = np.dtype(TensorDataType.from_any(case.member_types[member]).numpy_dtype)
            inputs[member] = data(own, rng, kind=case.kind.get(member, "any"), shape=own_shape)
    desc: dict[str, Any] = {m: {"DataType": a.dtype.name.upper(), "Sizes": list(a.shape)} for m, a in inputs.items()}
    desc[case.output] = {"DataType": case.output_dtype or dtype_name, "Sizes": list(shape)}
    desc.update(case.attrs)
    return desc_from_json(case.operator, desc), inputs


def compare(operator: str, got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind != "f":
        bad = np.flatnonzero(got != expected)
    elif operator in TOLERANCE:
        rtol, atol = TOLERANCE[operator]
        if got.dtype == np.float16:
            rtol, atol = rtol + 2**-10, atol + 2**-24
        with np.errstate(all="ignore"):
            g, e = got.astype(np.float64), expected.astype(np.float64)
            close = (np.abs(g - e) <= atol + rtol * np.abs(e)) | (g == e) | (np.isnan(g) & np.isnan(e))
        bad = np.flatnonzero(~close)
    else:
        bits = np.dtype(f"u{got.dtype.itemsize}")
        same = (got.view(bits) == expected.view(bits)) | (np.isnan(got) & np.isnan(expected))
        bad = np.flatnonzero(~same)
    if bad.size:
        shown = ", ".join(f"[{i}] cpu {got.flat[i]!r} numpy {expected.flat[i]!r}" for i in bad[:6])
        pytest.fail(f"{operator}: {bad.size} of {got.size} elements differ: {shown}")


def _params() -> list[Any]:
    params, seen = [], set()
    for case in CASES:
        dtypes = list(case.dtypes)
        if "FLOAT32" in dtypes:  # the float cases in the other float types too, where they validate
            dtypes += ["FLOAT16", "FLOAT64"]
        for dt in dtypes:
            for size in ("small", "large"):
                pid = f"{case_id(case, dt)}-{size}"
                if pid not in seen:
                    seen.add(pid)
                    params.append(pytest.param(case, dt, size, id=pid))
    return params


@pytest.mark.parametrize(("case", "dtype_name", "size"), _params())
def test_cpu_matches_the_reference(case: Case, dtype_name: str, size: str) -> None:
    shape = case.shape
    if size == "large":
        shape = LARGE if case.shape == (1, 1, 6, 7) else tuple(n * 4 for n in case.shape)
    desc, inputs = build(case, dtype_name, shape)
    try:
        desc.validate()
    except InvalidDescError:
        pytest.skip(f"{dtype_name} does not validate for {case.operator}")
    try:
        expected = run(desc, inputs, "numpy")[case.output]
    except UnsupportedError:
        with pytest.raises(UnsupportedError, match="directml"):
            run(desc, inputs, "cpu")
        return
    got = run(desc, inputs, "cpu")[case.output]
    compare(case.operator, got, expected)


def test_every_reference_operator_runs_on_cpu() -> None:
    from dmlops.cpu import elementwise as cpu
    from dmlops.descs.elementwise import REFERENCE_OPERATORS

    assert REFERENCE_OPERATORS <= set(cpu.OPERATORS)
    tested = {case.operator for case in CASES}
    assert REFERENCE_OPERATORS <= tested | {"ELEMENT_WISE_ADD"}


# -- layouts: strides, broadcasts, flat buffers, preallocated and aliased outputs -----------------------

SHAPE = (3, 4, 70, 90)
"""75,600 elements: past the cpu backend's threshold for threads and tiles (its small calls skip them)."""
PITCH = 101
"""The padded output's row pitch."""


def _desc(operator: str, tensors: dict[str, tuple[str, tuple[int, ...] | None]], **attrs: Any) -> Any:
    body: dict[str, Any] = {}
    for member, (dtype, strides) in tensors.items():
        body[member] = {"DataType": dtype, "Sizes": list(SHAPE)}
        if strides is not None:
            body[member]["Strides"] = list(strides)
    body.update(attrs)
    return desc_from_json(operator, body)


LAYOUT_OPS = [
    ("ELEMENT_WISE_ADD", "FLOAT32", {}),
    ("ELEMENT_WISE_ADD", "INT8", {}),
    ("ELEMENT_WISE_MAX", "FLOAT32", {}),
    ("ELEMENT_WISE_DIFFERENCE_SQUARE", "FLOAT32", {}),
    ("ELEMENT_WISE_MODULUS_FLOOR", "INT32", {}),
    ("ELEMENT_WISE_ADD1", "FLOAT32", {"FusedActivation": {"Type": "ACTIVATION_RELU"}}),
    ("ELEMENT_WISE_ADD1", "FLOAT32", {"FusedActivation": {"Type": "ACTIVATION_ELU", "Alpha": 0.5}}),
    ("ELEMENT_WISE_ATAN_YX", "FLOAT32", {}),
]


@pytest.mark.parametrize(("operator", "dtype_name", "attrs"), LAYOUT_OPS, ids=lambda v: str(v).lower())
@pytest.mark.parametrize("layout", ["broadcast_row", "broadcast_scalar", "transposed", "padded_output"])
def test_strided_and_broadcast_layouts(operator: str, dtype_name: str, attrs: dict[str, Any], layout: str) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{operator}{layout}".encode()))
    dtype = np.dtype(TensorDataType.from_any(dtype_name).numpy_dtype)
    n, c, h, w = SHAPE
    a_strides: tuple[int, ...] | None = None
    b_strides: tuple[int, ...] | None = None
    o_strides: tuple[int, ...] | None = None
    b_count = n * c * h * w
    if layout == "broadcast_row":  # B: one row of w values read for every (n, c, h)
        b_strides, b_count = (0, 0, 0, 1), w
    elif layout == "broadcast_scalar":
        b_strides, b_count = (0, 0, 0, 0), 1
    elif layout == "transposed":  # A stored (w, h, c, n)
        a_strides = (1, n, n * c, n * c * h)
    else:  # the output rows padded to PITCH elements
        o_strides = (c * h * PITCH, h * PITCH, PITCH, 1)
    desc = _desc(
        operator,
        {
            "ATensor": (dtype_name, a_strides),
            "BTensor": (dtype_name, b_strides),
            "OutputTensor": (dtype_name, o_strides),
        },
        **attrs,
    )
    a = data(dtype, rng, shape=(n * c * h * w,))
    b = data(dtype, rng, shape=(b_count,))
    if operator == "ELEMENT_WISE_ATAN_YX":
        a, b = (np.where(np.isfinite(v), v, 1).astype(dtype) for v in (a, b))
    inputs = {"ATensor": a, "BTensor": b}
    out_count = n * c * h * PITCH if o_strides else n * c * h * w
    expected_buffer = np.full(out_count, 7, dtype)
    got_buffer = expected_buffer.copy()
    run(desc, inputs, "numpy", {"OutputTensor": expected_buffer})
    returned = run(desc, inputs, "cpu", {"OutputTensor": got_buffer})["OutputTensor"]
    assert returned is got_buffer
    compare(operator, got_buffer, expected_buffer)  # the padding (7) untouched on both


@pytest.mark.parametrize(
    ("operator", "attrs", "kind"),
    [
        ("ELEMENT_WISE_EXP", {}, "small"),
        ("ELEMENT_WISE_IDENTITY", {"ScaleBias": {"Scale": 0.75, "Bias": -0.5}}, "any"),
        ("ELEMENT_WISE_CLIP", {"Min": -1.5, "Max": 2.0}, "any"),
        ("ACTIVATION_SIGMOID", {}, "any"),
        ("ACTIVATION_GELU", {}, "any"),
        ("ACTIVATION_SOFTMAX1", {"Axes": [1, 3]}, "small"),
        ("ACTIVATION_LOG_SOFTMAX1", {"Axes": [3]}, "small"),
        ("ACTIVATION_HARDMAX1", {"Axes": [0, 2]}, "any"),
    ],
)
def test_unary_reads_a_strided_input_buffer(operator: str, attrs: dict[str, Any], kind: str) -> None:
    rng = np.random.default_rng(zlib.crc32(operator.encode()))
    n, c, h, w = SHAPE
    strides = (2 * c * h * w, 2 * h * w, 1, 2 * h)  # every other element, (h, w) transposed
    desc = _desc(operator, {"InputTensor": ("FLOAT32", strides), "OutputTensor": ("FLOAT32", None)}, **attrs)
    x = data(np.dtype(np.float32), rng, kind=kind, shape=(2 * n * c * h * w,))
    expected = run(desc, {"InputTensor": x}, "numpy")["OutputTensor"]
    out = np.empty(SHAPE, np.float32)
    assert run(desc, {"InputTensor": x}, "cpu", {"OutputTensor": out})["OutputTensor"] is out
    compare(operator, out, expected)


IN_PLACE = [
    ("ELEMENT_WISE_ADD", "FLOAT32", ("ATensor", "BTensor"), {}),
    ("ELEMENT_WISE_MAX", "FLOAT32", ("ATensor", "BTensor"), {}),
    ("ELEMENT_WISE_DIFFERENCE_SQUARE", "FLOAT32", ("ATensor", "BTensor"), {}),
    ("ELEMENT_WISE_MODULUS_FLOOR", "INT8", ("ATensor", "BTensor"), {}),
    ("ELEMENT_WISE_IF", "FLOAT32", ("ConditionTensor", "ATensor", "BTensor"), {}),
    ("ELEMENT_WISE_CLIP", "FLOAT32", ("InputTensor",), {"Min": -1.0, "Max": 1.0}),
    ("ELEMENT_WISE_EXP", "FLOAT32", ("InputTensor",), {"ScaleBias": {"Scale": 0.5, "Bias": 1.0}}),
    ("ACTIVATION_SIGMOID", "FLOAT32", ("InputTensor",), {}),
    ("ACTIVATION_SOFTMAX1", "FLOAT32", ("InputTensor",), {"Axes": [3]}),
    ("ACTIVATION_HARDMAX1", "FLOAT32", ("InputTensor",), {"Axes": [1, 2]}),
]


@pytest.mark.parametrize(("operator", "dtype_name", "members", "attrs"), IN_PLACE, ids=lambda v: str(v).lower())
@pytest.mark.parametrize("alias", ["same", "shifted"])
def test_output_bound_to_an_input(
    operator: str, dtype_name: str, members: tuple[str, ...], attrs: dict[str, Any], alias: str
) -> None:
    """The output is an input's own array ("same", every input in turn) or overlaps it one element further."""
    rng = np.random.default_rng(zlib.crc32(f"{operator}{alias}".encode()))
    dtype = np.dtype(TensorDataType.from_any(dtype_name).numpy_dtype)
    tensors = {m: ("UINT8" if m == "ConditionTensor" else dtype_name, None) for m in members}
    out_member = "OutputTensor"
    desc = _desc(operator, {**tensors, out_member: (dtype_name, None)}, **attrs)
    size = int(np.prod(SHAPE))
    for target in [m for m in members if m != "ConditionTensor"]:
        buffers = {
            m: (
                rng.integers(0, 3, size + 1).astype(np.uint8)
                if m == "ConditionTensor"
                else data(dtype, rng, kind="small", shape=(size + 1,))
            )
            for m in members
        }
        inputs = {m: buf[1:].reshape(SHAPE) for m, buf in buffers.items()}
        expected = run(desc, {m: v.copy() for m, v in inputs.items()}, "numpy")[out_member]
        out = inputs[target] if alias == "same" else buffers[target][:-1].reshape(SHAPE)
        run(desc, inputs, "cpu", {out_member: out})
        compare(operator, out, expected)


def test_float16_fast_paths_round_once() -> None:
    # float32 arithmetic rounded to float16 equals float64 rounded to float16 (24 >= 2 * 11 + 2 bits)
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(100_003) * 100).astype(np.float16)
    b = (rng.standard_normal(100_003) * 0.01).astype(np.float16)
    body = {m: {"DataType": "FLOAT16", "Sizes": [a.size]} for m in ("ATensor", "BTensor", "OutputTensor")}
    for op in ("ADD", "SUBTRACT", "MULTIPLY", "DIVIDE"):
        desc = desc_from_json(f"ELEMENT_WISE_{op}", body)
        ins = {"ATensor": a, "BTensor": b}
        compare(desc.operator_type.name, run(desc, ins, "cpu")["OutputTensor"], run(desc, ins, "numpy")["OutputTensor"])


def test_an_operator_the_reference_refuses_is_refused_on_cpu_too() -> None:
    body = {m: {"DataType": "FLOAT32", "Sizes": [4]} for m in ("ATensor", "BTensor", "OutputTensor")}
    desc = desc_from_json("ELEMENT_WISE_MODULUS_FLOOR", body)
    x = np.ones(4, np.float32)
    with pytest.raises(UnsupportedError, match="directml"):
        run(desc, {"ATensor": x, "BTensor": x}, "cpu")


def test_gelu_tail_and_specials() -> None:
    x = np.array([-np.inf, -3e38, -170.5, -6.0, -5.6, -4.0, -1e-40, 0.0, -0.0, 1e-40, 5.6, 3e38, np.inf, np.nan])
    body = {m: {"DataType": "FLOAT32", "Sizes": [x.size]} for m in ("InputTensor", "OutputTensor")}
    desc = desc_from_json("ACTIVATION_GELU", body)
    ins = {"InputTensor": x.astype(np.float32)}
    compare("ACTIVATION_GELU", run(desc, ins, "cpu")["OutputTensor"], run(desc, ins, "numpy")["OutputTensor"])


def test_the_layout_shapes_take_the_threaded_tiled_path() -> None:
    from dmlops.cpu.elementwise import PARALLEL_MIN

    assert np.prod(SHAPE) >= PARALLEL_MIN and np.prod(LARGE) >= PARALLEL_MIN


# -- the float32 SOFTMAX / LOG_SOFTMAX row kernel ---------------------------------------------------------


def _row_case(rows: int, n: int, rng: np.random.Generator) -> np.ndarray:
    x = (rng.standard_normal((rows, n)) * 30).astype(np.float32)
    specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 3e38, -3e38, 1e-45, -104.5, 89.0]
    for r in range(0, rows, 3):  # a special value in every third row, at a varying position
        x[r, (r * 7) % n] = specials[(r // 3) % len(specials)]
    if rows > 4:
        x[1] = np.nan  # all NaN
        x[2] = -np.inf  # all -inf
        x[4, ::2] = np.nan  # NaN and numbers
    return x


@pytest.mark.parametrize("operator", ["ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX1"])
@pytest.mark.parametrize(
    ("rows", "n", "layout"),
    [
        (1, 1, "contiguous"),  # one element
        (3, 1, "contiguous"),  # rows of one: exp(0) / 1
        (77_777, 1, "contiguous"),  # odd count of one-element rows: threads split it
        (5, 17, "contiguous"),
        (4_099, 33, "contiguous"),  # odd rows over threads, a row not a multiple of a vector
        (2, 300_001, "contiguous"),  # rows longer than the L2 cache
        (1_031, 96, "strided_rows"),  # rows read from a padded buffer
        (1_031, 96, "strided_elements"),  # every other element of each row
        (1_031, 96, "transposed"),  # the reduced axis is the outer one in memory
        (1_031, 96, "broadcast"),  # one row read through 0-strides (a read-only view)
    ],
)
def test_row_kernel_against_the_reference(operator: str, rows: int, n: int, layout: str) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{operator}{rows}{n}{layout}".encode()))
    x = _row_case(rows, n, rng)
    tensor: dict[str, Any] = {"DataType": "FLOAT32", "Sizes": [rows, n]}
    if layout == "strided_rows":
        buffer = np.full((rows, n + 5), np.float32(7)).ravel()
        buffer.reshape(rows, n + 5)[:, :n] = x
        tensor["Strides"], given = [n + 5, 1], buffer
    elif layout == "strided_elements":
        buffer = np.full((rows, 2 * n), np.float32(7))
        buffer[:, ::2] = x
        tensor["Strides"], given = [2 * n, 2], buffer.ravel()
    elif layout == "transposed":
        tensor["Strides"], given = [1, rows], np.ascontiguousarray(x.T).ravel()
    elif layout == "broadcast":
        tensor["Strides"], given = [0, 1], x[3]
    else:
        given = x
    body = {"InputTensor": tensor, "OutputTensor": {"DataType": "FLOAT32", "Sizes": [rows, n]}, "Axes": [1]}
    desc = desc_from_json(operator, body)
    expected = run(desc, {"InputTensor": given}, "numpy")["OutputTensor"]
    got = run(desc, {"InputTensor": given}, "cpu")["OutputTensor"]
    compare(operator, got, expected)


@pytest.mark.parametrize("operator", ["ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX1"])
def test_row_kernel_in_place_and_into_a_padded_output(operator: str) -> None:
    rng = np.random.default_rng(zlib.crc32(operator.encode()))
    rows, n = 1_025, 130
    x = _row_case(rows, n, rng)
    body: dict[str, Any] = {m: {"DataType": "FLOAT32", "Sizes": [rows, n]} for m in ("InputTensor", "OutputTensor")}
    desc = desc_from_json(operator, {**body, "Axes": [1]})
    expected = run(desc, {"InputTensor": x}, "numpy")["OutputTensor"]
    same = x.copy()
    run(desc, {"InputTensor": same}, "cpu", {"OutputTensor": same})
    compare(operator, same, expected)
    body["OutputTensor"]["Strides"] = [n + 3, 1]
    padded = np.full(rows * (n + 3), np.float32(7))
    run(desc_from_json(operator, {**body, "Axes": [1]}), {"InputTensor": x}, "cpu", {"OutputTensor": padded})
    compare(operator, padded.reshape(rows, n + 3)[:, :n], expected)
    assert (padded.reshape(rows, n + 3)[:, n:] == 7).all()


def test_row_kernel_extremes() -> None:
    """Rows whose maximum is at exp's clamps; a sum reaching LOG_SOFTMAX's floor; huge spreads."""
    x = np.array(
        [
            [88.72, 88.73, -1e30, 0.0],
            [-1e30, -1e30, -1e30, -1e30],
            [3e38, -3e38, 3e38, 1.0],
            [-50.0, 50.0, 1e-45, -1e-45],
            [np.nan, -np.inf, np.inf, 1.0],
            [np.inf, np.inf, 0.0, 0.0],
        ],
        np.float32,
    )
    for operator in ("ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX1"):
        body = {m: {"DataType": "FLOAT32", "Sizes": list(x.shape)} for m in ("InputTensor", "OutputTensor")}
        desc = desc_from_json(operator, {**body, "Axes": [1]})
        expected = run(desc, {"InputTensor": x}, "numpy")["OutputTensor"]
        compare(operator, run(desc, {"InputTensor": x}, "cpu")["OutputTensor"], expected)


@pytest.mark.parametrize("operator", ["ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX1"])
@pytest.mark.parametrize("layout", ["contiguous", "strided_elements"])  # the vector pass; the scalar loops
def test_a_long_row_of_like_values_sums_without_drift(operator: str, layout: str) -> None:
    """4M elements in one row: float32 blocks added in float64 (float32 lane sums were 8.7x the tolerance off)."""
    check_long_rows_of_like_values(
        operator, 1 << 22, lambda desc, inputs: run(desc, inputs, "cpu"), strided=layout == "strided_elements"
    )


def test_gelu_over_a_dense_range_and_random_bits() -> None:
    """The float32 GELU (erfc form, no cancellation in the negative tail) within TOLERANCE everywhere."""
    rng = np.random.default_rng(20)
    bits = rng.integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([np.linspace(-14, 14, 200_001, dtype=np.float32), bits])
    body = {m: {"DataType": "FLOAT32", "Sizes": [x.size]} for m in ("InputTensor", "OutputTensor")}
    desc = desc_from_json("ACTIVATION_GELU", body)
    ins = {"InputTensor": x}
    compare("ACTIVATION_GELU", run(desc, ins, "cpu")["OutputTensor"], run(desc, ins, "numpy")["OutputTensor"])


@pytest.mark.parametrize("dtype_name", ["FLOAT16", "FLOAT32", "FLOAT64", "INT8", "UINT16", "INT64"])
def test_large_contiguous_identity_keeps_every_bit(dtype_name: str) -> None:
    """The threaded unsigned-integer copy of a large contiguous IDENTITY: NaN payloads and odd sizes kept."""
    dtype = np.dtype(TensorDataType.from_any(dtype_name).numpy_dtype)
    size = 3 * (1 << 16) + 7
    rng = np.random.default_rng(size)
    x = rng.integers(0, 256, size * dtype.itemsize, dtype=np.uint8).view(dtype)  # every bit pattern: NaN payloads
    body = {m: {"DataType": dtype_name, "Sizes": [size]} for m in ("InputTensor", "OutputTensor")}
    desc = desc_from_json("ELEMENT_WISE_IDENTITY", body)
    got = run(desc, {"InputTensor": x}, "cpu")["OutputTensor"]
    assert got.tobytes() == x.tobytes()


@pytest.mark.parametrize(
    ("operator", "attrs"),
    [
        ("ELEMENT_WISE_ADD", {}),
        ("ELEMENT_WISE_MAX", {}),
        ("ELEMENT_WISE_ADD1", {"FusedActivation": {"Type": "ACTIVATION_RELU"}}),
        ("ELEMENT_WISE_DIFFERENCE_SQUARE", {}),  # two passes: not the row-tile path
    ],
)
@pytest.mark.parametrize(
    ("rows", "n", "which"),
    [
        (1_001, 97, "B"),  # rows not a multiple of a tile's
        (3, 131_073, "B"),  # rows too long for a tile: the plain path
        (70_001, 2, "A"),  # the broadcast operand first
        (999, 300, "AB"),  # both operands rows
        (999, 300, "B in place"),  # the output is A's memory
    ],
)
def test_broadcast_rows_in_tiles(operator: str, attrs: dict[str, Any], rows: int, n: int, which: str) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{operator}{rows}{n}{which}".encode()))
    f32 = np.dtype(np.float32)
    body: dict[str, Any] = {
        m: {"DataType": "FLOAT32", "Sizes": [rows, n]} for m in ("ATensor", "BTensor", "OutputTensor")
    }
    inputs = {}
    for member in ("ATensor", "BTensor"):
        if member[0] in which.split()[0]:
            body[member]["Strides"] = [0, 1]
            inputs[member] = data(f32, rng, shape=(n,))
        else:
            inputs[member] = data(f32, rng, shape=(rows, n))
    desc = desc_from_json(operator, {**body, **attrs})
    expected = run(desc, {m: v.copy() for m, v in inputs.items()}, "numpy")["OutputTensor"]
    out = inputs["ATensor"] if which.endswith("in place") else np.full((rows, n), np.float32(7))
    run(desc, inputs, "cpu", {"OutputTensor": out})
    compare(operator, out.reshape(rows, n), expected.reshape(rows, n))
