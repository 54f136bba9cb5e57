"""The cpu backend's streaming-store path (``dmlops.cpu._stream``) against the NumPy reference.

The path serves large element-wise results only; here its size threshold is lowered so
that small tensors take it, and every case checks that it did. Layouts cover what the
kernel handles separately: an output not aligned to 64 bytes (plain stores up to the
first boundary), a last partial vector, a broadcast row whose length is not a multiple
of a vector (vectors that cross the end of a row), either operand broadcast, and an
output bound to an input. Values include NaN (with payloads), +-inf, signed zeros and
subnormals; every result must equal the reference's bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops.descs import desc_from_json
from dmlops.errors import InvalidDescError

pytestmark = pytest.mark.cpu_backend
pytest.importorskip("numba")

from dmlops.cpu import _stream, elementwise  # noqa: E402

if not _stream.available():  # pragma: no cover - x86-64 only
    pytest.skip("streaming stores are used on x86-64 only", allow_module_level=True)

UNARY = ["ELEMENT_WISE_IDENTITY", "ACTIVATION_IDENTITY", "ELEMENT_WISE_ABS", "ELEMENT_WISE_NEGATE", "ACTIVATION_RELU"]
BINARY = [
    "ELEMENT_WISE_ADD",
    "ELEMENT_WISE_ADD1",
    "ELEMENT_WISE_SUBTRACT",
    "ELEMENT_WISE_MULTIPLY",
    "ELEMENT_WISE_DIVIDE",
    "ELEMENT_WISE_MAX",
    "ELEMENT_WISE_MIN",
]
SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1.0, -1.0, 3.5, -3.5]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Streaming for every size; the list of operations :func:`_stream.run` was called with."""
    monkeypatch.setattr(_stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(elementwise, "PARALLEL_MIN", 1)  # below it a call runs as one plain tile
    seen: list[int] = []
    real = _stream.run

    def spy(op: int, *args: Any) -> None:
        seen.append(op)
        real(op, *args)

    monkeypatch.setattr(_stream, "run", spy)
    return seen


def _values(dtype: np.dtype, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    a = (rng.standard_normal(shape) * 4).astype(dtype)
    flat = a.reshape(-1)
    picks = rng.integers(0, flat.size, flat.size // 4)
    flat[picks] = np.array(SPECIALS, dtype)[rng.integers(0, len(SPECIALS), picks.size)]
    if dtype.kind == "f":  # a NaN with a payload: IDENTITY must keep it
        flat.view(f"u{dtype.itemsize}")[0] = np.array(np.nan, dtype).view(f"u{dtype.itemsize}") | 1
    return a


def _misaligned(shape: tuple[int, ...], dtype: np.dtype, offset: int) -> np.ndarray:
    """An empty array of ``shape`` whose data starts ``offset`` elements after a 64-byte boundary."""
    size = int(np.prod(shape))
    raw = np.empty(size + 64, dtype)
    start = (-raw.ctypes.data % 64) // dtype.itemsize + offset
    return raw[start : start + size].reshape(shape)


def _desc(operator: str, dtype_name: str, members: dict[str, Any], out_shape: tuple[int, ...], **attrs: Any) -> Any:
    spec = {m: {"DataType": dtype_name, "Sizes": list(out_shape), **extra} for m, extra in members.items()}
    spec["OutputTensor"] = {"DataType": dtype_name, "Sizes": list(out_shape)}
    spec.update(attrs)
    try:
        desc = desc_from_json(operator, spec)
        desc.validate()
        return desc
    except InvalidDescError as exc:
        pytest.skip(f"{operator} does not take {dtype_name}: {exc}")


def _check(desc: Any, inputs: dict[str, np.ndarray], out: np.ndarray) -> None:
    """Bit for bit against the reference (any NaN matching any NaN, except IDENTITY's copies, which
    keep payloads), and bit for bit, NaNs included, against the cpu backend's ordinary path."""
    expected = dmlops.execute(desc, {k: v.copy() for k, v in inputs.items()}, backend="numpy")["OutputTensor"]
    copies = {k: v.copy() for k, v in inputs.items()}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(elementwise, "_run_stream", lambda *args: False)
        plain = dmlops.execute(desc, copies, backend="cpu")["OutputTensor"]
    got = np.asarray(dmlops.execute(desc, inputs, backend="cpu", outputs={"OutputTensor": out})["OutputTensor"])
    bits = f"u{out.dtype.itemsize}"
    same = got.view(bits) == expected.view(bits)
    if out.dtype.kind == "f" and "IDENTITY" not in desc.operator_type.name:
        same |= np.isnan(got) & np.isnan(expected)
    bad = np.flatnonzero(~same)
    assert bad.size == 0, (
        f"{bad.size} elements differ, first at {bad[0]}: {got.flat[bad[0]]!r} != {expected.flat[bad[0]]!r}"
    )
    assert np.array_equal(got.view(bits), plain.view(bits)), "the streamed result differs from the ordinary path's"


@pytest.mark.parametrize("operator", UNARY)
@pytest.mark.parametrize("dtype_name", ["FLOAT32", "FLOAT16", "INT32", "UINT8"])
@pytest.mark.parametrize(("shape", "offset"), [((3, 1001), 0), ((3, 1001), 5), ((7, 129), 13), ((40,), 3)])
def test_unary(calls: list[int], operator: str, dtype_name: str, shape: tuple[int, ...], offset: int) -> None:
    if operator != "ELEMENT_WISE_IDENTITY" and operator != "ACTIVATION_IDENTITY" and dtype_name != "FLOAT32":
        pytest.skip("the other operators stream float32 and float64 only")
    desc = _desc(operator, dtype_name, {"InputTensor": {}}, shape)
    dtype = np.dtype(desc.tensor("OutputTensor").data_type.numpy_dtype)
    rng = np.random.default_rng(sum(shape) + offset)
    x = _values(dtype, shape, rng) if dtype.kind == "f" else rng.integers(0, 100, shape).astype(dtype)
    _check(desc, {"InputTensor": x}, _misaligned(shape, dtype, offset))
    assert calls, "the streaming path was not taken"


@pytest.mark.parametrize("operator", BINARY)
@pytest.mark.parametrize(
    "layout", ["contiguous", "misaligned", "row_b", "row_a", "row_not_whole_vectors", "in_place", "in_place_row"]
)
def test_binary(calls: list[int], operator: str, layout: str) -> None:
    rows, n = (5, 1000) if layout == "row_not_whole_vectors" else (4, 1024)
    if layout == "misaligned":
        n = 777
    shape = (rows, n)
    row = {"Sizes": [rows, n], "Strides": [0, 1]}
    members: dict[str, Any] = {"ATensor": {}, "BTensor": {}}
    if layout in ("row_b", "row_not_whole_vectors", "in_place_row"):
        members["BTensor"] = row
    if layout == "row_a":
        members["ATensor"] = row
    desc = _desc(operator, "FLOAT32", members, shape)
    rng = np.random.default_rng(len(layout) + n)
    a = _values(np.dtype(np.float32), (n,) if "Strides" in members["ATensor"] else shape, rng)
    b = _values(np.dtype(np.float32), (n,) if "Strides" in members["BTensor"] else shape, rng)
    out = _misaligned(shape, np.dtype(np.float32), 7 if layout == "misaligned" else 0)
    if layout.startswith("in_place"):
        out[...] = a
        a = out
    _check(desc, {"ATensor": a, "BTensor": b}, out)
    assert calls, "the streaming path was not taken"


def test_add1_with_a_fused_relu_keeps_its_signed_zeros(calls: list[int]) -> None:
    # DirectML's fused RELU is x * (x > 0): -0 for a negative sum, NaN for -inf + x, +-0 kept
    shape = (2, 1024)
    desc = _desc("ELEMENT_WISE_ADD1", "FLOAT32", {"ATensor": {}, "BTensor": {}}, shape)
    fused = desc_from_json(
        "ELEMENT_WISE_ADD1",
        {
            **{m: {"DataType": "FLOAT32", "Sizes": list(shape)} for m in ("ATensor", "BTensor", "OutputTensor")},
            "FusedActivation": {"Type": "ACTIVATION_RELU"},
        },
    )
    rng = np.random.default_rng(3)
    a, b = _values(np.dtype(np.float32), shape, rng), _values(np.dtype(np.float32), shape, rng)
    a[0, :4], b[0, :4] = [-np.inf, -1.0, -0.0, 2.0], [1.0, 0.5, -0.0, -2.0]
    _check(fused, {"ATensor": a, "BTensor": b}, np.empty(shape, np.float32))
    assert calls == [_stream.ADD_RELU]
    got = dmlops.execute(fused, {"ATensor": a, "BTensor": b}, backend="cpu")["OutputTensor"]
    assert np.isnan(got[0, 0]) and np.signbit(got[0, 1]) and np.signbit(got[0, 2]) and not np.signbit(got[0, 3])
    del desc


def test_small_results_keep_ordinary_stores() -> None:
    # the default threshold: a result that fits in the cache does not stream
    x = np.ones((64, 64), np.float32)
    assert not _stream.worth_it(x)
    assert _stream.worth_it(np.empty(_stream.STREAM_MIN_BYTES // 4, np.float32))
    assert "ELEMENT_WISE_ADD" in elementwise._STREAM_OPS


# -- streamed copies (``_stream.copy``: JOIN, SPLIT, SLICE1 and the copy programs) -----


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """Streamed copies for every size and row of 8 elements or more; the shapes :func:`_stream.copy` copied."""
    monkeypatch.setattr(_stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(_stream, "COPY_MIN_ROW", 8)
    seen: list[tuple[int, ...]] = []
    real = _stream.copy

    def spy(out: np.ndarray, source: np.ndarray) -> None:
        seen.append(out.shape)
        real(out, source)

    monkeypatch.setattr(_stream, "copy", spy)
    return seen


def _bits_equal(got: np.ndarray, want: np.ndarray) -> bool:
    bits = f"u{want.dtype.itemsize}"
    return bool(np.array_equal(np.asarray(got).view(bits), want.view(bits)))


@pytest.mark.parametrize("dtype_name", ["UINT8", "FLOAT16", "FLOAT32", "FLOAT64"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_join_and_split_stream_their_rows(copies: list[tuple[int, ...]], dtype_name: str, axis: int) -> None:
    dtype = np.dtype(dtype_name.lower())
    rng = np.random.default_rng(axis)
    parts = [_values_bits(dtype, (3, 5, 77), rng), _values_bits(dtype, (3, 5, 77), rng)]
    joined = [3, 5, 77]
    joined[axis] *= 2
    tensor = lambda sizes: {"DataType": dtype_name, "Sizes": list(sizes)}  # noqa: E731
    join = desc_from_json(
        "JOIN", {"InputTensors": [tensor(p.shape) for p in parts], "OutputTensor": tensor(joined), "Axis": axis}
    )
    inputs = {f"InputTensors[{i}]": p for i, p in enumerate(parts)}
    want = dmlops.execute(join, inputs, backend="numpy")["OutputTensor"]
    for offset in (0, 3):  # an output aligned to 64 bytes, and one a few elements after
        out = _misaligned(tuple(joined), dtype, offset)
        dmlops.execute(join, inputs, backend="cpu", outputs={"OutputTensor": out})
        assert _bits_equal(out, want)
    assert copies, "JOIN did not take the streamed copy"
    split = desc_from_json(
        "SPLIT", {"InputTensor": tensor(joined), "OutputTensors": [tensor(p.shape) for p in parts], "Axis": axis}
    )
    copies.clear()
    got = dmlops.execute(split, {"InputTensor": want}, backend="cpu")
    for i, p in enumerate(parts):
        assert _bits_equal(got[f"OutputTensors[{i}]"], p)
    assert copies, "SPLIT did not take the streamed copy"


def test_slice_streams_rows_of_reversed_and_strided_views(copies: list[tuple[int, ...]]) -> None:
    # SLICE1 of whole rows with the outer axes reversed and stepped: rows contiguous in both views
    x = _values_bits(np.dtype(np.float32), (9, 6, 100), np.random.default_rng(5))
    desc = desc_from_json(
        "SLICE1",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [9, 6, 100]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [3, 6, 97]},
            "InputWindowOffsets": [1, 0, 2],
            "InputWindowSizes": [8, 6, 97],
            "InputWindowStrides": [-3, -1, 1],
        },
    )
    want = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"]
    got = dmlops.execute(desc, {"InputTensor": x}, backend="cpu")["OutputTensor"]
    assert _bits_equal(got, want)
    assert copies == [(3, 6, 97)]


def test_copies_leave_overlaps_short_rows_and_small_copies_to_numpy() -> None:
    big = np.empty(_stream.STREAM_MIN_BYTES // 4 + 1024, np.float32)
    assert _stream.copies(big[1024:], big[:-1024].copy())
    assert not _stream.copies(big[1024:], big[:-1024])  # overlapping memory: NumPy buffers it
    assert not _stream.copies(big[: _stream.STREAM_MIN_BYTES // 8], big[-(_stream.STREAM_MIN_BYTES // 8) :])
    rows = np.empty((_stream.STREAM_MIN_BYTES // 16, 16), np.float32)  # 4x the threshold, rows of 16
    long_rows = np.empty((_stream.STREAM_MIN_BYTES // 256, 128), np.float32)  # 2x, rows of 128
    assert _stream.copies(long_rows, np.zeros_like(long_rows))
    assert not _stream.copies(rows[:, :8], np.zeros_like(rows[:, :8]))  # rows of 8: below COPY_MIN_ROW
    assert not _stream.copies(long_rows[:, ::2], np.zeros_like(long_rows[:, ::2]))  # a strided last axis
    repeated = np.lib.stride_tricks.as_strided(long_rows, (2, *long_rows.shape), (0, *long_rows.strides))
    assert not _stream.copies(repeated, np.zeros(repeated.shape, np.float32))  # an output repeating elements


def _values_bits(dtype: np.dtype, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random bits of ``dtype`` (every pattern, NaN payloads included, must be copied unchanged)."""
    return rng.integers(0, 256, int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8).view(dtype).reshape(shape)
