"""The element-wise family on the CUDA backend against the NumPy reference (marked ``cuda``).

Every operator and data type of tests/oracles/elementwise.py (plus FLOAT16 for the float
cases) on adversarial values; exact operators bit for bit (NaN equal to NaN), the
transcendental ones within TOLERANCE (FLOAT16: one FLOAT16 rounding more). Then the
layouts: strided and broadcast TensorDescs, negative-stride and misaligned device
views, 8 dimensions, ``outputs=`` arrays written only where addressed, the row kernel
on long rows and on non-trailing axes. Without a GPU every test here skips.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops.backends import load_backend
from dmlops.cuda import elementwise as cuda_elementwise
from dmlops.cuda.elementwise import OPERATORS as CUDA_OPERATORS
from dmlops.descs import desc_from_json
from dmlops.enums import FeatureLevel, TensorDataType
from dmlops.errors import InvalidDescError, UnsupportedError
from oracles.elementwise import CASES, TOLERANCE, Case, case_id, check_long_rows_of_like_values, data


def run_cuda(desc: Any, inputs: dict[str, Any], outputs: dict[str, Any] | None = None) -> dict[str, Any]:
    """``dmlops.execute(backend="cuda")``; the cuda entry point directly while the family's
    claim (descs/elementwise.py) does not list cuda yet."""
    if "cuda" in desc.backends:
        return dmlops.execute(desc, inputs, backend="cuda", outputs=outputs)
    desc.validate()
    module = load_backend("cuda")
    return module.execute(desc, inputs, outputs, feature_level=FeatureLevel.latest(), strict=False)  # type: ignore[no-any-return]


def build(case: Case, dtype_name: str) -> tuple[Any, dict[str, np.ndarray]]:
    """The desc and seeded inputs of one case (as tests/directml/test_directml_elementwise.py)."""
    dtype = TensorDataType.from_any(dtype_name).numpy_dtype
    rng = np.random.default_rng(zlib.crc32(f"{case.operator}{case.attrs}{dtype_name}".encode()))
    inputs = {}
    for member in case.inputs:
        shape = (1,) * len(case.shape) if member in case.scalars else case.shape
        if member == "ConditionTensor":
            inputs[member] = rng.integers(0, 3, shape).astype(np.uint8)
        else:
            own = dtype
            if member in case.member_types:
                own = TensorDataType.from_any(case.member_types[member]).numpy_dtype
            inputs[member] = data(np.dtype(own), rng, kind=case.kind.get(member, "any"), shape=shape)
    desc: dict[str, Any] = {m: {"DataType": a.dtype.name.upper(), "Sizes": list(a.shape)} for m, a in inputs.items()}
    out_dtype = case.output_dtype or dtype_name
    desc[case.output] = {"DataType": out_dtype, "Sizes": list(case.shape)}
    attrs = dict(case.attrs)
    if dtype_name == "FLOAT16" and attrs.get("MinMaxDataType") == "FLOAT32":
        attrs["MinMaxDataType"] = "FLOAT16"
    desc.update(attrs)
    return desc_from_json(case.operator, desc), inputs


def _dtypes(case: Case) -> tuple[str, ...]:
    return (*case.dtypes, "FLOAT16") if "FLOAT32" in case.dtypes else case.dtypes


PARAMS = [pytest.param(case, dt, id=case_id(case, dt)) for case in CASES for dt in _dtypes(case)]
_seen: set[str] = set()
PARAMS = [p for p in PARAMS if not (p.id in _seen or _seen.add(p.id))]  # type: ignore[func-returns-value]


def compare(operator: str, expected: np.ndarray, got: np.ndarray) -> None:
    """Bit for bit (NaN equal to NaN), or within TOLERANCE for the approximated operators."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind != "f":
        bad = np.flatnonzero(got != expected)
    elif operator in TOLERANCE:
        rtol, atol = TOLERANCE[operator]
        if got.dtype == np.float16:
            rtol = max(rtol, 2e-3)  # float32 arithmetic, then one FLOAT16 rounding
        e64, g64 = expected.astype(np.float64), got.astype(np.float64)
        with np.errstate(all="ignore"):
            close = np.abs(g64 - e64) <= atol + rtol * np.abs(e64)
        close |= (got == expected) | (np.isnan(got) & np.isnan(expected))
        bad = np.flatnonzero(~close)
    else:
        bits = np.dtype(f"u{got.dtype.itemsize}")
        same = (got.view(bits) == expected.view(bits)) | (np.isnan(got) & np.isnan(expected))
        bad = np.flatnonzero(~same)
    if bad.size:
        shown = ", ".join(f"[{i}] numpy {expected.flat[i]!r} cuda {got.flat[i]!r}" for i in bad[:6])
        pytest.fail(f"{bad.size} of {got.size} elements differ: {shown}")


@pytest.mark.parametrize(("case", "dtype_name"), PARAMS)
def test_cuda_matches_reference(gpu, case: Case, dtype_name: str) -> None:
    desc, inputs = build(case, dtype_name)
    try:
        desc.validate()
    except InvalidDescError as exc:
        pytest.skip(f"not a valid desc: {exc}")
    if case.operator not in CUDA_OPERATORS:
        with pytest.raises(UnsupportedError, match="cuda backend does not implement"):
            run_cuda(desc, inputs)
        return
    try:
        expected = dmlops.execute(desc, inputs, backend="numpy")[case.output]
    except UnsupportedError:
        with pytest.raises(UnsupportedError, match="cuda backend does not implement"):
            run_cuda(desc, inputs)
        return
    got = run_cuda(desc, inputs)[case.output]
    assert isinstance(got, np.ndarray)
    compare(case.operator, expected, got)


def test_float_modulus_is_refused_naming_the_backends(gpu) -> None:
    desc = desc_from_json(
        "ELEMENT_WISE_MODULUS_FLOOR",
        {m: {"DataType": "FLOAT32", "Sizes": [4]} for m in ("ATensor", "BTensor", "OutputTensor")},
    )
    x = np.ones(4, np.float32)
    with pytest.raises(UnsupportedError, match=r"MODULUS_FLOOR.*FLOAT32.*directml"):
        run_cuda(desc, {"ATensor": x, "BTensor": x})


# -- layouts ----------------------------------------------------------------------------------------


def _desc(op: str, members: dict[str, tuple[str, list[int], list[int] | None]], **attrs: Any) -> Any:
    body: dict[str, Any] = {}
    for m, (dt, sizes, strides) in members.items():
        body[m] = {"DataType": dt, "Sizes": sizes, **({"Strides": strides} if strides is not None else {})}
    body.update(attrs)
    return desc_from_json(op, body)


LAYOUT_OPS = [
    ("ELEMENT_WISE_ADD", {}),
    ("ELEMENT_WISE_MULTIPLY", {}),
    ("ELEMENT_WISE_MAX", {}),
    ("ELEMENT_WISE_DIFFERENCE_SQUARE", {}),
    ("ELEMENT_WISE_ADD1", {"FusedActivation": {"Type": "ACTIVATION_RELU"}}),
    ("ELEMENT_WISE_LOGICAL_LESS_THAN", {}),
]


@pytest.mark.parametrize("dtype", ["FLOAT32", "FLOAT16", "INT32", "UINT8"])
@pytest.mark.parametrize(("op", "attrs"), LAYOUT_OPS, ids=[o[0].lower() for o in LAYOUT_OPS])
def test_broadcast_and_strided_descs(gpu, strided_vectors: bool, op: str, attrs: dict[str, Any], dtype: str) -> None:
    """B broadcast along rows (stride 0), A padded rows, the output a strided flat buffer."""
    if "FusedActivation" in attrs and not dtype.startswith("FLOAT"):
        pytest.skip("fused activations take floats")
    out_dtype = "UINT8" if "LOGICAL" in op else dtype
    sizes = [3, 5, 37]
    desc = _desc(
        op,
        {
            "ATensor": (dtype, sizes, [5 * 40, 40, 1]),
            "BTensor": (dtype, sizes, [0, 37, 1]),
            "OutputTensor": (out_dtype, sizes, [5 * 38, 38, 1]),
        },
        **attrs,
    )
    try:
        desc.validate()
    except InvalidDescError as exc:
        pytest.skip(f"not a valid desc: {exc}")
    rng = np.random.default_rng(7)
    np_dtype = TensorDataType.from_any(dtype).numpy_dtype
    a = data(np.dtype(np_dtype), rng, shape=(3 * 5 * 40,))
    b = data(np.dtype(np_dtype), rng, shape=(5 * 37,))
    out_np = TensorDataType.from_any(out_dtype).numpy_dtype
    sentinel = np.full(3 * 5 * 38, 77, dtype=out_np)
    expected = sentinel.copy()
    dmlops.execute(desc, {"ATensor": a, "BTensor": b}, backend="numpy", outputs={"OutputTensor": expected})
    got = sentinel.copy()
    run_cuda(desc, {"ATensor": a, "BTensor": b}, {"OutputTensor": got})
    compare(op, expected, got)  # the padding keeps its 77s in both


@pytest.mark.parametrize("offset", [0, 1, 3])
@pytest.mark.parametrize("n", [1, 7, 64, 4099])
@pytest.mark.parametrize(
    ("dtype", "op"), [("float16", "ELEMENT_WISE_ADD"), ("float32", "ACTIVATION_GELU"), ("int8", "ELEMENT_WISE_BIT_XOR")]
)
def test_contiguous_vectors_tails_and_misaligned_views(gpu, dtype: str, op: str, n: int, offset: int) -> None:
    cp = gpu
    rng = np.random.default_rng(n + offset)
    dt = np.dtype(dtype)
    name = {"float16": "FLOAT16", "float32": "FLOAT32", "int8": "INT8"}[dtype]
    members = ("ATensor", "BTensor") if op.startswith("ELEMENT_WISE") else ("InputTensor",)
    desc = _desc(op, {**{m: (name, [n], None) for m in members}, "OutputTensor": (name, [n], None)})
    host = {m: data(dt, rng, shape=(n + offset,))[offset:] for m in members}
    device = {m: cp.asarray(data(dt, rng, shape=(n + offset,)))[offset:] for m in members}
    for m in members:
        device[m][...] = cp.asarray(host[m])
    expected = dmlops.execute(desc, host, backend="numpy")["OutputTensor"]
    out = cp.full(n + offset, 5, dtype=dt)
    run_cuda(desc, device, {"OutputTensor": out[offset:]})
    compare(op, expected, out[offset:].get())
    assert (out[:offset].get() == 5).all()


CONTIGUOUS_CASES = [("float16", "ELEMENT_WISE_ADD"), ("float32", "ACTIVATION_GELU"), ("int8", "ELEMENT_WISE_BIT_XOR")]
"""(dtype, operator) of the contiguous kernel's settings tests: paired halves, a transcendental, integers."""


def _check_contiguous(cp: Any, dtype: str, op: str, n: int, offset: int, seed: int, broadcast: bool = False) -> None:
    """One 1-D call of ``n`` elements, operands and output ``offset`` elements into their buffers
    (the vector width follows the alignment), B one broadcast element if ``broadcast``: the
    reference's bits, and nothing written outside the output view."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    name = {"float16": "FLOAT16", "float32": "FLOAT32", "int8": "INT8"}[dtype]
    members = ("ATensor", "BTensor") if op.startswith("ELEMENT_WISE") else ("InputTensor",)
    one = {m: broadcast and m == "BTensor" for m in members}
    desc = _desc(op, {**{m: (name, [n], [0] if one[m] else None) for m in members}, "OutputTensor": (name, [n], None)})
    host = {m: data(dt, rng, shape=(1 if one[m] else n,)) for m in members}
    device = {}
    for m in members:
        device[m] = cp.zeros(host[m].shape[0] + offset, dtype=dt)[offset:]
        device[m][...] = cp.asarray(host[m])
    expected = dmlops.execute(desc, host, backend="numpy")["OutputTensor"]
    out = cp.full(n + offset + 5, 5, dtype=dt)
    run_cuda(desc, device, {"OutputTensor": out[offset : offset + n]})
    compare(op, expected, out[offset : offset + n].get())
    assert (out[:offset].get() == 5).all() and (out[offset + n :].get() == 5).all()


@pytest.mark.parametrize(
    ("shape", "hints"),
    [((256, 1), 1), ((256, 1), 2), ((256, 1), 3), ((128, 2), 3), ((128, 1), 0), ((256, 1), 4), ((256, 2), 7)],
)
@pytest.mark.parametrize(("n", "offset"), [(4099, 0), (4099, 2), (1000003, 0)])
@pytest.mark.parametrize(("dtype", "op"), CONTIGUOUS_CASES)
def test_contiguous_kernel_shapes_and_cache_hints(
    gpu, monkeypatch, dtype: str, op: str, n: int, offset: int, shape: tuple[int, int], hints: int
) -> None:
    """The contiguous kernel's other block shapes and streaming cache hints (CONTIG_SHAPE,
    CONTIG_HINTS; 16-, 8-, 4- and 2-byte vectors by the offset) give the reference's bits,
    and write nothing outside the output view."""
    monkeypatch.setattr(cuda_elementwise, "CONTIG_SHAPE", shape)
    monkeypatch.setattr(cuda_elementwise, "CONTIG_HINTS", {1: hints, 2: hints, 4: hints})
    monkeypatch.setattr(cuda_elementwise, "STREAM_MIN_BYTES", 0)  # the hints at every size
    _check_contiguous(gpu, dtype, op, n, offset, n + offset + hints)


@pytest.mark.parametrize(("per_sm", "shape"), [(6, (256, 1)), (4, (256, 1)), (12, (128, 2))])  # 4: over 48 KiB a block
@pytest.mark.parametrize(("n", "offset"), [(4099, 2), (1000003, 0), (3000011, 4)])
@pytest.mark.parametrize(("dtype", "op"), CONTIGUOUS_CASES)
def test_contiguous_kernel_occupancy_cap(
    gpu, monkeypatch, dtype: str, op: str, n: int, offset: int, per_sm: int, shape: tuple[int, int]
) -> None:
    """The contiguous kernel held to a few resident blocks per multiprocessor (CONTIG_RESIDENT:
    shared memory reserved per block) gives the reference's bits, writes nothing outside the
    output view, and a broadcast operand (stride 0) still reads its one element."""
    size = np.dtype(dtype).itemsize
    monkeypatch.setattr(cuda_elementwise, "CONTIG_RESIDENT", {(size, arity): per_sm for arity in (1, 2)})
    monkeypatch.setattr(cuda_elementwise, "CONTIG_SHAPE", shape)
    monkeypatch.setattr(cuda_elementwise, "RESIDENT_FUNCTORS", None)  # GELU and BIT_XOR capped too
    monkeypatch.setattr(cuda_elementwise, "STREAM_MIN_BYTES", 0)  # the cap at every size
    for broadcast in (False, True) if op.startswith("ELEMENT_WISE") else (False,):
        _check_contiguous(gpu, dtype, op, n, offset, n + offset + per_sm + broadcast, broadcast)


@pytest.mark.parametrize("dtype", ["FLOAT32", "FLOAT16", "INT8"])
@pytest.mark.parametrize(("a_strides", "b_strides"), [([48, 1], [0, 1]), ([48, 1], [1, 0]), ([40, 1], [80, 1])])
def test_vectorised_rows_of_strided_layouts(
    gpu, strided_vectors: bool, dtype: str, a_strides: list[int], b_strides: list[int]
) -> None:
    """Rows of 40 (a multiple of every vector width): padded rows, row and column broadcasts."""
    sizes = [6, 40]
    desc = _desc(
        "ELEMENT_WISE_MULTIPLY",
        {
            "ATensor": (dtype, sizes, a_strides),
            "BTensor": (dtype, sizes, b_strides),
            "OutputTensor": (dtype, sizes, None),
        },
    )
    rng = np.random.default_rng(5)
    np_dtype = np.dtype(TensorDataType.from_any(dtype).numpy_dtype)
    a = data(np_dtype, rng, shape=(6 * 48,))
    b = data(np_dtype, rng, shape=(6 * 80,))
    expected = dmlops.execute(desc, {"ATensor": a, "BTensor": b}, backend="numpy")["OutputTensor"]
    compare("ELEMENT_WISE_MULTIPLY", expected, run_cuda(desc, {"ATensor": a, "BTensor": b})["OutputTensor"])


@pytest.fixture(params=[0, 1, 4], ids=["strided", "rows2d_1", "rows2d_4"])
def rows_2d(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Two-dimensional layouts on ew_strided (0) or on ew_rows2d with 1 or 4 vectors a thread."""
    monkeypatch.setattr(cuda_elementwise, "ROWS_2D", int(request.param))
    return int(request.param)


@pytest.fixture(params=[True, False], ids=["pairs", "elements"])
def half_pairs(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """FLOAT16 ADD / SUBTRACT / MULTIPLY two halves per instruction, or element by element."""
    monkeypatch.setattr(cuda_elementwise, "HALF_PAIRS", bool(request.param))
    return bool(request.param)


# (sizes, A strides, A elements, B strides, B elements): a broadcast row, padded A rows, rows of odd length (one element a vector),
# a broadcast column, B transposed (no vectors), one row, one column
TWO_D_LAYOUTS = [
    ([13, 40], [48, 1], 13 * 48, [0, 1], 40),
    ([9, 37], [37, 1], 9 * 37, [0, 1], 37),
    ([11, 64], [64, 1], 11 * 64, [1, 0], 11),
    ([10, 24], [24, 1], 240, [1, 10], 240),
    ([1, 72], [72, 1], 72, [0, 1], 72),
    ([70, 1], [1, 1], 70, [0, 1], 1),
]


@pytest.mark.parametrize("dtype", ["FLOAT16", "FLOAT32", "INT8"])
@pytest.mark.parametrize("op", ["ELEMENT_WISE_ADD", "ELEMENT_WISE_SUBTRACT", "ELEMENT_WISE_MULTIPLY"])
@pytest.mark.parametrize(
    "layout", TWO_D_LAYOUTS, ids=lambda v: "x".join(map(str, v[0])) + "_b" + "_".join(map(str, v[3]))
)
def test_two_dimensional_layouts_bit_for_bit(
    gpu, rows_2d: int, half_pairs: bool, dtype: str, op: str, layout: tuple[Any, ...]
) -> None:
    """ew_rows2d and its fallbacks against the reference, bit for bit, on flat buffers."""
    sizes, a_strides, a_n, b_strides, b_n = layout
    desc = _desc(
        op,
        {
            "ATensor": (dtype, sizes, a_strides),
            "BTensor": (dtype, sizes, b_strides),
            "OutputTensor": (dtype, sizes, None),
        },
    )
    desc.validate()
    rng = np.random.default_rng(a_n + b_n)
    np_dtype = np.dtype(TensorDataType.from_any(dtype).numpy_dtype)
    a, b = data(np_dtype, rng, shape=(a_n,)), data(np_dtype, rng, shape=(b_n,))
    expected = dmlops.execute(desc, {"ATensor": a, "BTensor": b}, backend="numpy")["OutputTensor"]
    compare(op, expected, run_cuda(desc, {"ATensor": a, "BTensor": b})["OutputTensor"])


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("view", ["misaligned", "reversed_rows", "in_place"])
def test_two_dimensional_device_views(gpu, rows_2d: int, half_pairs: bool, dtype: Any, view: str) -> None:
    """Row broadcasts on device views: rows starting off a vector boundary (narrower vectors),
    rows in reverse order (a negative row stride), and the output written over A."""
    cp = gpu
    rng = np.random.default_rng(11)
    base = cp.asarray(data(np.dtype(dtype), rng, shape=(17 * 65,)).reshape(17, 65))
    a = base[::-1, :64] if view == "reversed_rows" else base[:, 1:]
    row = cp.asarray(data(np.dtype(dtype), rng, shape=(65,)))[1:]
    rows, cols = a.shape
    name = "FLOAT16" if dtype == np.float16 else "FLOAT32"
    desc = _desc("ELEMENT_WISE_ADD", {m: (name, [rows, cols], None) for m in ("ATensor", "BTensor", "OutputTensor")})
    b = cp.broadcast_to(row, (rows, cols))
    expected = dmlops.execute(desc, {"ATensor": a.get(), "BTensor": b.get()}, backend="numpy")["OutputTensor"]
    if view == "in_place":
        first = base[:, 0].get()
        run_cuda(desc, {"ATensor": a, "BTensor": b}, {"OutputTensor": a})
        got = a.get()
        np.testing.assert_array_equal(base[:, 0].get().view(np.uint8), first.view(np.uint8))  # untouched
    else:
        got = run_cuda(desc, {"ATensor": a, "BTensor": b})["OutputTensor"].get()
    compare("ELEMENT_WISE_ADD", expected, got)


@pytest.mark.parametrize("op", ["ELEMENT_WISE_ADD", "ELEMENT_WISE_SUBTRACT", "ELEMENT_WISE_MULTIPLY"])
@pytest.mark.parametrize("layout", ["contiguous", "column_broadcast"])
def test_float16_pairs_on_every_float16_value(gpu, rows_2d: int, op: str, layout: str) -> None:
    """All 65536 FLOAT16 bit patterns against 40 others (zeros, subnormals, the largest
    values, infinities, NaN, random ones) through the pair instructions: the reference's bits."""
    cp = gpu
    x = np.arange(65536, dtype=np.uint16).view(np.float16)
    rng = np.random.default_rng(2)
    special = np.array([0, 0x8000, 1, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x3C00, 0x3BFF])
    others = np.concatenate([special, rng.integers(0, 65536, 40 - special.size)]).astype(np.uint16).view(np.float16)
    a = np.tile(x, (others.size, 1))
    if layout == "contiguous":
        b = np.repeat(others, x.size).reshape(a.shape)
        b_desc: list[int] | None = None
    else:
        b = others
        b_desc = [1, 0]
    sizes = list(a.shape)
    desc = _desc(
        op,
        {
            "ATensor": ("FLOAT16", sizes, None),
            "BTensor": ("FLOAT16", sizes, b_desc),
            "OutputTensor": ("FLOAT16", sizes, None),
        },
    )
    desc.validate()
    expected = dmlops.execute(desc, {"ATensor": a, "BTensor": b}, backend="numpy")["OutputTensor"]
    got = run_cuda(desc, {"ATensor": cp.asarray(a), "BTensor": cp.asarray(b)})["OutputTensor"]
    compare(op, expected, got.get())


def test_pair_functors_only_where_every_operand_is_float16() -> None:
    """The *H2 names: FLOAT16 in and out, no fused activation (ADD, SUBTRACT, MULTIPLY take no ScaleBias)."""
    h = {m: ("FLOAT16", [4, 8], None) for m in ("ATensor", "BTensor", "OutputTensor")}
    f16 = [np.dtype(np.float16)] * 2
    lay = cuda_elementwise.layout((32,), [(1,), (1,), (1,)])
    assert cuda_elementwise.Plan(_desc("ELEMENT_WISE_ADD", h), f16, f16[0], lay).head.startswith("OpAddH2,")
    assert cuda_elementwise.Plan(_desc("ELEMENT_WISE_MULTIPLY", h), f16, f16[0], lay).head.startswith("OpMultiplyH2,")
    plain1 = _desc("ELEMENT_WISE_ADD1", h)
    assert cuda_elementwise.Plan(plain1, f16, f16[0], lay).head.startswith("OpAddH2,")
    fused = _desc("ELEMENT_WISE_ADD1", h, FusedActivation={"Type": "ACTIVATION_RELU"})
    assert cuda_elementwise.Plan(fused, f16, f16[0], lay).head.startswith("OpAdd,")
    f32 = {m: ("FLOAT32", [4, 8], None) for m in ("ATensor", "BTensor", "OutputTensor")}
    assert cuda_elementwise.Plan(
        _desc("ELEMENT_WISE_SUBTRACT", f32), [np.dtype(np.float32)] * 2, np.dtype(np.float32), lay
    ).head.startswith("OpSubtract,")


def test_sign_bit_functors_only_for_plain_float_calls() -> None:
    """Float IDENTITY / ABS / NEGATE into the same type without ScaleBias take the bit functors
    (SIGN_BITS); with ScaleBias, or on integers (ABS and NEGATE saturate), the value functors."""
    lay = cuda_elementwise.layout((8,), [(1,), (1,)])

    def head(op: str, dtype: str, **attrs: Any) -> str:
        desc = _desc(op, {"InputTensor": (dtype, [8], None), "OutputTensor": (dtype, [8], None)}, **attrs)
        dt = np.dtype(TensorDataType.from_any(dtype).numpy_dtype)
        return str(cuda_elementwise.Plan(desc, [dt], dt, lay).head)

    for dtype in ("FLOAT16", "FLOAT32"):
        assert head("ELEMENT_WISE_IDENTITY", dtype).startswith("OpIdentityBits,")
        assert head("ACTIVATION_IDENTITY", dtype).startswith("OpIdentityBits,")
        assert head("ELEMENT_WISE_ABS", dtype).startswith("OpAbsBits,")
        assert head("ELEMENT_WISE_NEGATE", dtype).startswith("OpNegateBits,")
        scaled = {"ScaleBias": {"Scale": 2.0, "Bias": 1.0}}
        assert head("ELEMENT_WISE_ABS", dtype, **scaled).startswith("OpAbs, NoFused, true,")
        assert head("ELEMENT_WISE_IDENTITY", dtype, **scaled).startswith("OpIdentity, NoFused, true,")
    assert head("ELEMENT_WISE_IDENTITY", "FLOAT64").startswith("OpIdentityBits,")
    assert head("ELEMENT_WISE_ABS", "INT8").startswith("OpAbs,")
    assert head("ELEMENT_WISE_NEGATE", "INT32").startswith("OpNegate,")
    assert head("ELEMENT_WISE_IDENTITY", "UINT16").startswith("OpIdentity,")


def test_negative_stride_and_broadcast_device_views(gpu) -> None:
    cp = gpu
    rng = np.random.default_rng(3)
    a = cp.asarray(rng.standard_normal((6, 8, 10)).astype(np.float32))[::-1, :, ::-2]
    b = cp.broadcast_to(cp.asarray(rng.standard_normal((1, 8, 1)).astype(np.float32)), (6, 8, 5))
    desc = _desc(
        "ELEMENT_WISE_SUBTRACT", {m: ("FLOAT32", [6, 8, 5], None) for m in ("ATensor", "BTensor", "OutputTensor")}
    )
    got = run_cuda(desc, {"ATensor": a, "BTensor": b})["OutputTensor"]
    expected = dmlops.execute(desc, {"ATensor": a.get(), "BTensor": b.get()}, backend="numpy")["OutputTensor"]
    compare("ELEMENT_WISE_SUBTRACT", expected, got.get())


def test_eight_dimensions_with_mixed_strides(gpu) -> None:
    cp = gpu
    rng = np.random.default_rng(8)
    shape = (2, 3, 2, 3, 2, 2, 3, 5)
    base = cp.asarray(rng.standard_normal((3, 3, 2, 4, 2, 2, 3, 7)).astype(np.float32))
    a = base[1:, :, :, 1:, :, ::-1, :, 1:6]
    c = cp.asarray(rng.integers(0, 2, shape).astype(np.uint8))
    b = cp.asarray(rng.standard_normal(shape[::-1]).astype(np.float32)).transpose(tuple(range(7, -1, -1)))
    desc = _desc(
        "ELEMENT_WISE_IF",
        {
            "ConditionTensor": ("UINT8", list(shape), None),
            **{m: ("FLOAT32", list(shape), None) for m in ("ATensor", "BTensor", "OutputTensor")},
        },
    )
    got = run_cuda(desc, {"ConditionTensor": c, "ATensor": a, "BTensor": b})["OutputTensor"]
    expected = np.where(c.get() != 0, a.get(), b.get())
    np.testing.assert_array_equal(got.get(), expected)


def test_float16_gelu_on_every_float16_value(gpu) -> None:
    """FLOAT16 GELU's own formula (Abramowitz-Stegun's erfc, fast float32 steps) on all 65536
    bit patterns: within the family's tolerance of the reference, NaN where it is NaN."""
    x = np.arange(65536, dtype=np.uint16).view(np.float16)
    t = {"DataType": "FLOAT16", "Sizes": [65536]}
    desc = desc_from_json("ACTIVATION_GELU", {"InputTensor": t, "OutputTensor": t})
    expected = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"]
    got = run_cuda(desc, {"InputTensor": x})["OutputTensor"]
    compare("ACTIVATION_GELU", expected, got)


@pytest.mark.parametrize("zero_points", [True, False])
@pytest.mark.parametrize("output", ["packed", "strided"])
def test_quantized_linear_add_table_and_both_conversions(gpu, zero_points: bool, output: str) -> None:
    """The six scalars reach the kernel through its device table, and the NaN conversion
    follows the output: clamped as a float (NaN -> Min) with an OutputZeroPointTensor and a
    packed output, converted as QUANTIZE_LINEAR (NaN -> 0) otherwise (a strided output)."""
    rng = np.random.default_rng(7)
    shape = [3, 5, 7]
    a = rng.integers(-128, 128, shape).astype(np.int8)
    b = rng.integers(0, 256, shape).astype(np.uint8)
    f = np.float32
    scalars = {
        "AScaleTensor": np.full([1, 1, 1], 0.37, f),
        "BScaleTensor": np.full([1, 1, 1], np.nan if output == "strided" else 0.11, f),
        "OutputScaleTensor": np.full([1, 1, 1], 0.29, f),
    }
    if zero_points:
        scalars |= {
            "AZeroPointTensor": np.full([1, 1, 1], -3, np.int8),
            "BZeroPointTensor": np.full([1, 1, 1], 200, np.uint8),
            "OutputZeroPointTensor": np.full([1, 1, 1], -7, np.int8),
        }
    inputs = {"ATensor": a, "BTensor": b, **scalars}
    spec: dict[str, Any] = {m: {"DataType": v.dtype.name.upper(), "Sizes": list(v.shape)} for m, v in inputs.items()}
    spec["OutputTensor"] = {"DataType": "INT8", "Sizes": shape}
    if output == "strided":
        spec["OutputTensor"]["Strides"] = [40, 8, 1]
        spec["OutputTensor"]["TotalTensorSizeInBytes"] = 120
    desc = desc_from_json("ELEMENT_WISE_QUANTIZED_LINEAR_ADD", spec)
    expected = dmlops.execute(desc, inputs, backend="numpy")["OutputTensor"]
    got = run_cuda(desc, inputs)["OutputTensor"]
    compare("ELEMENT_WISE_QUANTIZED_LINEAR_ADD", expected, got)
    if output == "strided":  # every value NaN: converted to 0 on this path
        assert (got == 0).all()


def test_scale_bias_on_integer_and_half_inputs(gpu) -> None:
    rng = np.random.default_rng(11)
    for dt, name in ((np.int8, "INT8"), (np.float16, "FLOAT16"), (np.uint32, "UINT32")):
        x = data(np.dtype(dt), rng, shape=(9, 13))
        if dt == np.uint32:
            # scaled values within UINT32: the reference's store clips in float32 there, so
            # 4294967295 becomes 2^32 and wraps to 0 where DirectML saturates (not compared)
            x //= 2
        desc = _desc(
            "ELEMENT_WISE_IDENTITY",
            {"InputTensor": (name, [9, 13], None), "OutputTensor": (name, [9, 13], None)},
            ScaleBias={"Scale": 1.37, "Bias": -2.25},
        )
        expected = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"]
        compare("ELEMENT_WISE_IDENTITY", expected, run_cuda(desc, {"InputTensor": x})["OutputTensor"])


# -- the row kernel -----------------------------------------------------------------------------------


@pytest.fixture(params=["block", "warp", "wide", "chunks"])
def row_kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every row kernel: one block per row; one warp per row (up to ROW_WARP_MAX); a block
    of ROW_WIDE_BLOCK threads per row (rows of up to 16K, however few); SOFTMAX /
    LOG_SOFTMAX rows beyond 16 * ROW_BLOCK in chunks (with few rows, the default)."""
    kind = request.param
    monkeypatch.setattr(cuda_elementwise, "ROW_WARP_MAX", 0 if kind == "block" else 1024)
    monkeypatch.setattr(cuda_elementwise, "ROW_WIDE_ROWS", 0 if kind == "wide" else 1 << 62)
    monkeypatch.setattr(cuda_elementwise, "ROW_CHUNKS", kind == "chunks")
    return str(kind)


@pytest.fixture(params=[False, True], ids=["scalar", "vectors"])
def strided_vectors(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """The strided kernel with and without vectors along the innermost dimension (STRIDED_VECTORS)."""
    monkeypatch.setattr(cuda_elementwise, "STRIDED_VECTORS", bool(request.param))
    return bool(request.param)


@pytest.mark.parametrize("length", [1, 33, 256, 1000, 4096, 4097, 5000, 8192, 3 * 4096 + 5, 16384, 16385])
@pytest.mark.parametrize("op", ["ACTIVATION_SOFTMAX", "ACTIVATION_LOG_SOFTMAX", "ACTIVATION_HARDMAX"])
@pytest.mark.parametrize("dtype", ["FLOAT32", "FLOAT16"])
def test_rows_of_every_length(gpu, row_kernel: str, op: str, length: int, dtype: str) -> None:
    rng = np.random.default_rng(length)
    np_dtype = TensorDataType.from_any(dtype).numpy_dtype
    x = (rng.standard_normal((5, length)) * 4).astype(np_dtype)
    if length > 3:
        x[1, 2] = x[1, 3] = x[1].max() + 1  # a tie: the first wins
        x[2, 0] = np.nan  # a NaN first element
        x[3, 1] = np.nan
    desc = _desc(op, {"InputTensor": (dtype, [5, length], None), "OutputTensor": (dtype, [5, length], None)})
    expected = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"]
    compare(op, expected, run_cuda(desc, {"InputTensor": x})["OutputTensor"])


@pytest.mark.parametrize("op", ["ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX1", "ACTIVATION_HARDMAX1"])
@pytest.mark.parametrize("axes", [[1], [0, 2], [1, 3], [3]])
def test_rows_over_any_axes_and_strided_outputs(gpu, row_kernel: str, op: str, axes: list[int]) -> None:
    cp = gpu
    rng = np.random.default_rng(len(axes))
    shape = [3, 4, 5, 6]
    x = cp.asarray(rng.standard_normal((3, 4, 5, 12)).astype(np.float32))[..., ::2]
    desc = _desc(op, {"InputTensor": ("FLOAT32", shape, None), "OutputTensor": ("FLOAT32", shape, None)}, Axes=axes)
    out = cp.full((3, 4, 5, 12), 9.0, dtype=np.float32)
    run_cuda(desc, {"InputTensor": x}, {"OutputTensor": out[..., 1::2]})
    expected = dmlops.execute(desc, {"InputTensor": x.get()}, backend="numpy")["OutputTensor"]
    compare(op, expected, out[..., 1::2].get())
    assert (out[..., ::2].get() == 9.0).all()


def _rows_with_special_chunks(length: int, rng: np.random.Generator) -> np.ndarray:
    """Rows of ``length`` (three chunks and a bit) whose specials sit in some chunks only."""
    c = 4096  # ROW_CHUNK
    x = rng.standard_normal((12, length)) * 4
    x[1, :c] = -np.inf  # a chunk of -inf: it adds nothing
    x[2, c + 7] = np.inf  # +inf: inf - inf, the row is NaN
    x[3, 2 * c + 1] = np.nan  # a NaN in one chunk: the row's sum is NaN
    x[4] = -np.inf  # a row of -inf: NaN
    x[5] = np.nan  # a row of NaN
    x[6] = -np.inf
    x[6, -1] = 1.5  # one number, in the last (partial) chunk
    x[7, c : 2 * c : 2] = np.nan
    x[7, c + 1 : 2 * c : 2] = -np.inf  # a chunk of NaN and -inf
    x[8, 2 * c + 9] = 200.0  # every other chunk's exps underflow against it
    x[9, [5, 3 * c]] = np.inf  # +inf in two chunks
    x[10, : 3 * c] = -np.inf
    x[10, 3 * c :] = np.nan  # -inf chunks, then a chunk of NaN
    x[11, ::2] = 0.0
    x[11, 1::2] = -0.0
    return x


@pytest.mark.parametrize("op", ["ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX1"])
@pytest.mark.parametrize("dtype", ["FLOAT32", "FLOAT16"])
def test_long_rows_with_specials_in_some_chunks(gpu, row_kernel: str, op: str, dtype: str) -> None:
    """Every kernel against the reference on the NaN and infinity rules, chunk by chunk."""
    length = 3 * 4096 + 17
    np_dtype = TensorDataType.from_any(dtype).numpy_dtype
    x = _rows_with_special_chunks(length, np.random.default_rng(9)).astype(np_dtype)
    members = {"InputTensor": (dtype, [12, length], None), "OutputTensor": (dtype, [12, length], None)}
    desc = _desc(op, members, Axes=[1])
    expected = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"]
    compare(op, expected, run_cuda(desc, {"InputTensor": x})["OutputTensor"])
    inplace = gpu.asarray(x)
    run_cuda(desc, {"InputTensor": inplace}, {"OutputTensor": inplace})  # each chunk read before it is written
    compare(op, expected, inplace.get())


@pytest.mark.parametrize("op", ["ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX1"])
def test_a_long_row_of_like_values_sums_without_drift(gpu, row_kernel: str, op: str) -> None:
    """16M elements in one row, in chunks or (the other kernels' settings) on a block of 256
    re-reading it: float64 sums both (64K float32 exps a thread were 3x the tolerance off)."""
    check_long_rows_of_like_values(op, 1 << 24, run_cuda)


# -- NaN payloads through the copies and sign-bit operators (errata E197) ----------------------------

SIGN_BIT_OPS = {
    # operator: the output bits from the input bits (DirectML's, probed on FLOAT32: E197)
    "ELEMENT_WISE_IDENTITY": lambda bits, sign: bits,
    "ACTIVATION_IDENTITY": lambda bits, sign: bits,
    "ELEMENT_WISE_ABS": lambda bits, sign: bits & ~sign,
    "ELEMENT_WISE_NEGATE": lambda bits, sign: bits ^ sign,
}
UNSIGNED = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}
FLOAT_NAMES = {np.float16: "FLOAT16", np.float32: "FLOAT32", np.float64: "FLOAT64"}


def _payload_bits(dtype: Any, n: int, seed: int) -> np.ndarray:
    """``n`` bit patterns of ``dtype``: three in four NaNs with random payloads and signs,
    signalling and quiet, the rest random bits (infinities, zeros, subnormals, numbers)."""
    unsigned = np.dtype(UNSIGNED[dtype])
    width = 8 * unsigned.itemsize
    mantissa = {16: 10, 32: 23, 64: 52}[width]
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2**width, n, dtype=np.uint64, endpoint=False).astype(unsigned)
    exponent = unsigned.type(((1 << (width - 1 - mantissa)) - 1) << mantissa)
    nan = (raw | exponent).astype(unsigned)
    nan[(nan & unsigned.type((1 << mantissa) - 1)) == 0] |= unsigned.type(1)  # not an infinity
    bits = np.where(rng.random(n) < 0.75, nan, raw).astype(unsigned)
    bits[: min(n, 4)] = [exponent | 1, exponent | (1 << (mantissa - 1)) | 5, 0, 1 << (width - 1)][: min(n, 4)]
    return bits


SIGN_BIT_LAYOUTS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...] | None, Callable[[Any], Any]]] = {
    # name: (the input view of a (17, 66) device array, the output buffer's shape (None: the
    # output is the input view, in place), the output view of that buffer)
    "misaligned": (lambda a: a.reshape(-1)[1:1000], (1200,), lambda b: b[3:1002]),  # narrower vectors, a tail
    "reversed_rows": (lambda a: a[::-1, 1:], (17, 67), lambda b: b[:, 2:]),  # a negative row stride
    "transposed": (
        lambda a: a.reshape(-1)[:1024].reshape(4, 4, 64).transpose(2, 0, 1),
        (64, 4, 6),
        lambda b: b[:, :, 1:5],
    ),
    "row_broadcast": (lambda a: cupy_broadcast(a[3, :64], (9, 64)), (9, 66), lambda b: b[:, 1:65]),  # stride 0
    "one_value": (lambda a: cupy_broadcast(a[0, 1], (1001,)), (1003,), lambda b: b[1:1002]),  # 1-D, stride 0
    "in_place": (lambda a: a.reshape(-1)[:1111], None, lambda b: b),
    "in_place_rows": (lambda a: a[:, 1:], None, lambda b: b),  # padded rows, written over
}


def cupy_broadcast(x: Any, shape: tuple[int, ...]) -> Any:
    import cupy

    return cupy.broadcast_to(x, shape)


TWO_D_SIGN_BIT_LAYOUTS = ("reversed_rows", "row_broadcast", "in_place_rows")
"""The layouts that collapse to two dimensions: each on ew_strided and on ew_rows2d (1 and 4 vectors a thread)."""


@pytest.mark.parametrize(
    ("layout", "rows_2d"),
    [(name, 0) for name in SIGN_BIT_LAYOUTS] + [(name, r) for name in TWO_D_SIGN_BIT_LAYOUTS for r in (1, 4)],
    ids=lambda v: v if isinstance(v, str) else f"rows2d_{v}",
)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=["FLOAT16", "FLOAT32", "FLOAT64"])
@pytest.mark.parametrize("op", list(SIGN_BIT_OPS))
def test_copies_and_sign_bit_operators_keep_nan_payloads_in_every_layout(
    gpu, monkeypatch, op: str, dtype: Any, layout: str, rows_2d: int
) -> None:
    """Every NaN keeps its payload through IDENTITY, ABS and NEGATE (signalling NaNs too, either
    sign) on misaligned, strided, broadcast and in-place device views, through ew_contig,
    ew_strided and ew_rows2d: the exact bit formulas on every element, and every element of
    the output's buffer outside the view keeps its bits."""
    cp = gpu
    inp, shape, out = SIGN_BIT_LAYOUTS[layout]
    monkeypatch.setattr(cuda_elementwise, "ROWS_2D", rows_2d)
    unsigned = UNSIGNED[dtype]
    sign = unsigned(1 << (8 * np.dtype(unsigned).itemsize - 1))
    bits = cp.asarray(_payload_bits(dtype, 17 * 66, zlib.crc32(f"{op}{layout}".encode())).reshape(17, 66))
    x = inp(bits.view(dtype))
    if shape is None:
        buffer, y = bits.view(dtype), x
        addressed = inp(cp.arange(buffer.size).reshape(buffer.shape))
    else:
        buffer = cp.full(shape, np.frombuffer(b"\x55" * np.dtype(unsigned).itemsize, unsigned)[0], unsigned).view(dtype)
        y = out(buffer)
        addressed = out(cp.arange(buffer.size).reshape(buffer.shape))
    name = FLOAT_NAMES[dtype]
    desc = _desc(op, {"InputTensor": (name, list(x.shape), None), "OutputTensor": (name, list(y.shape), None)})
    try:
        desc.validate()
    except InvalidDescError as exc:
        pytest.skip(f"not a valid desc: {exc}")
    source = x.view(unsigned).get()
    expected = buffer.view(unsigned).get().reshape(-1)
    expected[addressed.get().reshape(-1)] = SIGN_BIT_OPS[op](source, sign).reshape(-1)
    run_cuda(desc, {"InputTensor": x}, {"OutputTensor": y})
    np.testing.assert_array_equal(buffer.view(unsigned).get().reshape(-1), expected)


def test_sign_bit_operators_with_scale_bias_compute_the_value(gpu) -> None:
    """With ScaleBias the value is computed (x * 1 + 0 in float32, which quiets a signalling
    NaN): the reference's values, NaN where it is NaN; without it the bits (the test above)."""
    x = np.array([0x7C01, 0xFC01, 0x7E00, 0x3C00, 0xBC00, 0x8000, 0x0001], np.uint16).view(np.float16)
    t = {"DataType": "FLOAT16", "Sizes": [x.size]}
    for op in ("ELEMENT_WISE_IDENTITY", "ELEMENT_WISE_ABS"):
        desc = desc_from_json(op, {"InputTensor": t, "OutputTensor": t, "ScaleBias": {"Scale": 1.0, "Bias": 0.0}})
        expected = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"]
        got = np.asarray(run_cuda(desc, {"InputTensor": x})["OutputTensor"])  # host inputs: a host result
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        np.testing.assert_array_equal(got[~np.isnan(got)], expected[~np.isnan(expected)])


# -- the plan layer (no GPU needed) ------------------------------------------------------------------


def test_the_table_covers_the_family() -> None:
    from dmlops.descs.elementwise import OPERATORS, REFERENCE_OPERATORS

    assert set(CUDA_OPERATORS) == REFERENCE_OPERATORS <= OPERATORS


def test_layouts_collapse_and_pick_the_contiguous_kernel() -> None:
    lay = cuda_elementwise.layout((4, 5, 6), [(30, 6, 1), (0, 0, 0), (30, 6, 1)])
    assert lay.sizes == (120,) and lay.contiguous  # a dense input, a broadcast scalar
    row = cuda_elementwise.layout((8, 16), [(16, 1), (0, 1), (16, 1)])
    assert row.sizes == (8, 16) and not row.contiguous
    reverse = cuda_elementwise.layout((10,), [(-1,), (1,)])
    assert not reverse.contiguous
    assert cuda_elementwise.layout((3, 0), [(0, 1), (0, 1)]).count == 0
    assert cuda_elementwise.layout((1, 1), [(5, 7), (1, 1)]).count == 1
    assert cuda_elementwise.layout((2**30,), [(1,), (1,)]).fits_int32() is False


def test_cache_hints_only_above_the_streaming_size(monkeypatch) -> None:
    monkeypatch.setattr(cuda_elementwise, "CONTIG_HINTS", {2: 3, 4: 2})
    monkeypatch.setattr(cuda_elementwise, "STREAM_MIN_BYTES", 1 << 20)
    assert cuda_elementwise.contig_hints(1 << 20, 2) == 0
    assert cuda_elementwise.contig_hints((1 << 20) + 1, 2) == 3
    assert cuda_elementwise.contig_hints((1 << 20) + 1, 4) == 2
    assert cuda_elementwise.contig_hints(1 << 30, 8) == 0
    monkeypatch.setattr(cuda_elementwise, "CONTIG_HINTS", {})
    assert cuda_elementwise.contig_hints(1 << 30, 2) == 0


def test_occupancy_cap_only_for_large_two_input_arithmetic(monkeypatch) -> None:
    monkeypatch.setattr(cuda_elementwise, "CONTIG_RESIDENT", {(2, 2): 6, (4, 2): 5})
    monkeypatch.setattr(cuda_elementwise, "STREAM_MIN_BYTES", 1 << 20)
    resident = cuda_elementwise.contig_resident
    assert resident((1 << 20) + 1, 2, 2, "OpAddH2", "NoFused") == 6
    assert resident((1 << 20) + 1, 4, 2, "OpMax", "FusedRelu") == 5
    assert resident(1 << 20, 2, 2, "OpAddH2", "NoFused") == 0  # fits the streaming size
    assert resident(1 << 30, 2, 1, "OpAbs", "NoFused") == 0  # one input: not in the table
    assert resident(1 << 30, 8, 2, "OpAdd", "NoFused") == 0
    assert resident(1 << 30, 4, 2, "OpPow", "NoFused") == 0  # not a RESIDENT_FUNCTORS functor
    assert resident(1 << 30, 4, 2, "OpAdd", "ActGelu") == 0  # a fused activation other than RELU
    monkeypatch.setattr(cuda_elementwise, "RESIDENT_FUNCTORS", None)
    assert resident(1 << 30, 4, 2, "OpPow", "ActGelu") == 5


def test_occupancy_cap_reserves_shared_memory(gpu, monkeypatch) -> None:
    """A capped plan launches with the shared memory that fits at most that many blocks."""
    cp = gpu
    monkeypatch.setattr(cuda_elementwise, "STREAM_MIN_BYTES", 0)
    n = 1 << 16
    desc = _desc("ELEMENT_WISE_ADD", {m: ("FLOAT16", [n], None) for m in ("ATensor", "BTensor", "OutputTensor")})
    desc.validate()
    a = cp.ones(n, dtype=cp.float16)
    plan = cuda_elementwise.Plan(desc, [a.dtype] * 2, a.dtype, cuda_elementwise.layout((n,), [(1,)] * 3))
    launch = plan.launch_for([a.data.ptr] * 3)
    _, per_sm, reserved, _ = cuda_elementwise._device_numbers(cp.cuda.Device().id)
    assert launch.shared > 0 and launch.shared % 1024 == 0
    assert 6 * (launch.shared + reserved) <= per_sm < 7 * (launch.shared + reserved)


def test_cache_hint_kernels_compile_to_streaming_accesses() -> None:
    """NVRTC (no GPU needed): ew_contig with H = 1 / 2 / 3 emits ld.global.cs / st.global.cs
    for 16-, 8- and 4-byte vectors, and H = 0 none."""
    from dmlops.cuda._compile import compile_source, nvrtc_module
    from dmlops.cuda._runtime import kernel_source

    try:
        nvrtc_module().getVersion()
    except Exception as exc:  # no CuPy, or CuPy without the NVRTC library
        pytest.skip(f"NVRTC is not importable here ({type(exc).__name__}: {exc})")
    heads = {
        "OpAddH2, NoFused, false, half_t, half_t, half_t, half_t": (8, 4, 2),
        "ActGelu, NoFused, false, float, float, float, float": (4, 2, 1),
    }
    for h in (0, 1, 2, 3):
        names = [f"ew_contig<{head}, {vec}, 256, 1, {h}>" for head, vecs in heads.items() for vec in vecs]
        ptx = compile_source(kernel_source("elementwise.cu"), "elementwise.cu", names, "compute_90")[0].decode()
        loads = {w for w in ("v4.s32", "v2.s32", "s32") if f"ld.global.cs.{w} " in ptx}
        stores = {w for w in ("v4.s32", "v2.s32", "s32") if f"st.global.cs.{w} " in ptx}
        assert loads == ({"v4.s32", "v2.s32", "s32"} if h & 1 else set())
        assert stores == ({"v4.s32", "v2.s32", "s32"} if h & 2 else set())
    # H & 4: the L2 prefetch-size hint on 16-byte loads only (plain or streaming)
    for h in (4, 7):
        names = [f"ew_contig<{head}, {vec}, 256, 1, {h}>" for head, vecs in heads.items() for vec in vecs]
        ptx = compile_source(kernel_source("elementwise.cu"), "elementwise.cu", names, "compute_90")[0].decode()
        assert f"ld.global{'.cs' if h & 1 else ''}.L2::256B.v4.s32 " in ptx
        assert "L2::256B.v2" not in ptx and "L2::256B.s32" not in ptx


def test_vector_width_follows_alignment_and_the_widest_operand() -> None:
    assert cuda_elementwise.vector_width([4, 4, 4], [0, 16, 32], [True, True, True]) == 4
    assert cuda_elementwise.vector_width([2, 2], [0, 2], [True, True]) == 1
    assert cuda_elementwise.vector_width([2, 2], [0, 4], [True, True]) == 2
    assert cuda_elementwise.vector_width([4, 1], [0, 4], [True, True]) == 4  # float32 in, UINT8 out
    assert cuda_elementwise.vector_width([4, 4], [3, 0], [False, True]) == 4  # a broadcast operand's pointer


def test_row_stride_of_row_layouts() -> None:
    assert cuda_elementwise.row_stride((6, 10), (10, 1), 1) == 10
    assert cuda_elementwise.row_stride((6, 10), (16, 1), 1) == 16
    assert cuda_elementwise.row_stride((6, 10), (1, 6), 1) is None
    assert cuda_elementwise.row_stride((2, 3, 4, 5), (60, 20, 5, 1), 2) == 20
    assert cuda_elementwise.row_stride((2, 3, 4, 5), (80, 20, 5, 1), 2) is None  # kept axes not one stride


def test_integer_bounds_convert_as_directml() -> None:
    i8, i32 = np.dtype(np.int8), np.dtype(np.int32)
    assert cuda_elementwise._bound(-1.5, i8) == -1 and cuda_elementwise._bound(1.5, i8) == 1
    assert cuda_elementwise._bound(1e9, i8) == 127 and cuda_elementwise._bound(float("-inf"), i8) == -128
    assert cuda_elementwise._bound(float("nan"), i8) == 0 and cuda_elementwise._bound(float("nan"), i32) == -(2**31)
    assert cuda_elementwise._bound(300, i8) == 300


@pytest.mark.parametrize(
    ("op", "dtype", "scale_bias"),
    [
        ("ELEMENT_WISE_EXP", "INT32", True),  # float-only operators refuse ScaleBias'd integers
        ("ELEMENT_WISE_DIVIDE", "INT64", False),  # 32-bit register rules
        ("ELEMENT_WISE_MODULUS_FLOOR", "FLOAT32", False),
    ],
)
def test_refusals_name_the_operator_and_the_runners(op: str, dtype: str, scale_bias: bool) -> None:
    desc = desc_class_of(op, dtype, scale_bias)
    dt = np.dtype(TensorDataType.from_any(dtype).numpy_dtype)
    spec = cuda_elementwise.OP_TABLE[op]
    with pytest.raises(UnsupportedError, match=rf"{op}.*{dtype}.*runs on: numpy"):
        cuda_elementwise._check_types(desc, spec, [dt] * len(desc.tensor_slots("input")), scale_bias)


def desc_class_of(op: str, dtype: str, scale_bias: bool) -> Any:
    members = ("InputTensor",) if op == "ELEMENT_WISE_EXP" else ("ATensor", "BTensor")
    body: dict[str, Any] = {m: {"DataType": dtype, "Sizes": [4]} for m in (*members, "OutputTensor")}
    if scale_bias:
        body["ScaleBias"] = {"Scale": 2.0, "Bias": 1.0}
    return desc_from_json(op, body)
