"""The cpu backend's vector conversions for CAST (``dmlops.cpu._stream.convert``) against the reference.

FLOAT32 -> FLOAT16 and floats -> 8- and 16-bit integers between contiguous arrays run as
64-byte vector conversions. The kernel handles separately the elements before the output's
first 64-byte boundary, the whole vectors (streamed for large outputs, plain otherwise) and
the last partial vector; here outputs start at every offset within a vector, the streaming
threshold is lowered so that small tensors stream too, and every result must equal the NumPy
reference's bit for bit (FLOAT16 NaN payloads included).
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlops
from cast_cases import float16_edges
from dmlops.descs import desc_from_json

pytestmark = pytest.mark.cpu_backend
pytest.importorskip("numba")

from dmlops.cpu import _stream  # noqa: E402

if not _stream.available():  # pragma: no cover - x86-64 only
    pytest.skip("the vector conversions are used on x86-64 only", allow_module_level=True)


def _misaligned(size: int, dtype: np.dtype, offset: int) -> np.ndarray:
    """An empty 1-D array whose data starts ``offset`` elements after a 64-byte boundary."""
    raw = np.empty(size + 128, dtype)
    start = (-raw.ctypes.data % 64) // dtype.itemsize + offset
    return raw[start : start + size]


def _integer_probes(dtype: np.dtype, source: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """Values around the target's bounds and zero, NaN and +-inf, and random values far beyond the range."""
    info = np.iinfo(dtype)
    around = [
        b + d for b in (info.min, info.max, 0) for d in (-1.5, -1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.99, 1.0)
    ]
    specials = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 1e-40, -1e-40, 1e30, -1e30]
    wide = rng.uniform(-3.0 * abs(info.min) - 7, 3.0 * info.max + 7, 2000)
    return np.concatenate([around, specials, wide]).astype(source)


def _cast(x: np.ndarray, out: np.ndarray, target: str) -> None:
    """CAST ``x`` into ``out`` on the cpu backend, and check it against the reference bit for bit."""
    desc = desc_from_json(
        "CAST",
        {
            "InputTensor": {"DataType": x.dtype.name.upper(), "Sizes": [x.size]},
            "OutputTensor": {"DataType": target, "Sizes": [x.size]},
        },
    )
    assert _stream.converts(x, out), "the vector path does not take this case"
    with np.errstate(over="ignore", invalid="ignore"):
        want = dmlops.execute(desc, {"InputTensor": x})["OutputTensor"]
    dmlops.execute(desc, {"InputTensor": x}, backend="cpu", outputs={"OutputTensor": out})
    bits = f"u{out.itemsize}"
    differ = np.flatnonzero(out.view(bits) != want.view(bits))
    assert differ.size == 0, [(x[i], out[i], want[i]) for i in differ[:5]]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("offset", [0, 1, 7, 31])
def test_float32_to_float16(monkeypatch: pytest.MonkeyPatch, stream: bool, offset: int) -> None:
    if not _stream._has_f16c():  # pragma: no cover - every x86-64 CPU since 2013 has F16C
        pytest.skip("no F16C: the bit pass serves this cast")
    if stream:
        monkeypatch.setattr(_stream, "STREAM_MIN_BYTES", 0)
    rng = np.random.default_rng(offset)
    bits = np.concatenate([float16_edges(), rng.integers(0, 2**32, 1 << 16, dtype=np.uint64).astype(np.uint32)])
    x = _misaligned(bits.size, np.dtype(np.float32), (offset * 3) % 16)
    x.view(np.uint32)[...] = bits
    _cast(x, _misaligned(bits.size, np.dtype(np.float16), offset), "FLOAT16")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("source", ["FLOAT32", "FLOAT64"])
@pytest.mark.parametrize("target", ["INT8", "UINT8", "INT16", "UINT16"])
@pytest.mark.parametrize("offset", [0, 3, 29])
def test_floats_to_narrow_integers(
    monkeypatch: pytest.MonkeyPatch, stream: bool, source: str, target: str, offset: int
) -> None:
    if stream:
        monkeypatch.setattr(_stream, "STREAM_MIN_BYTES", 0)
    dtype, src = np.dtype(target.lower()), np.dtype(source.lower())
    values = _integer_probes(dtype, src, np.random.default_rng(offset))
    x = _misaligned(values.size, src, offset % 5)
    x[...] = values
    _cast(x, _misaligned(values.size, dtype, offset), target)


@pytest.mark.parametrize("size", [1, 63, 64, 65, 200_003])
def test_sizes_around_a_vector_and_over_threads(size: int) -> None:
    # shorter than a vector, exactly one, one more, and large enough for several threads
    x = np.random.default_rng(size).standard_normal(size).astype(np.float32) * 300
    _cast(x, np.empty(size, np.int8), "INT8")
    _cast(x, np.empty(size, np.float16), "FLOAT16")


def test_pairs_left_to_the_scalar_kernels() -> None:
    # 32- and 64-bit integer targets (their bounds are not floats), integer sources, strided views
    x = np.zeros(256, np.float32)
    assert not _stream.converts(x, np.empty(256, np.int32))
    assert not _stream.converts(x, np.empty(256, np.uint64))
    assert not _stream.converts(x.astype(np.int32), np.empty(256, np.int8))
    assert not _stream.converts(x[::2], np.empty(128, np.int8))
    assert not _stream.converts(x, np.empty(512, np.int8)[::2])
    assert not _stream.converts(x.astype(np.float64), np.empty(256, np.float16))


def test_an_output_overlapping_its_input() -> None:
    # FLOAT32 -> INT16 into the second half of the input's own bytes: element k's result lands on input
    # element n/2 + k/2, which a pass in order reads later (the reference reads every input first)
    n = 1 << 20
    raw = (np.random.default_rng(3).standard_normal(n) * 1000).astype(np.float32)
    want = np.where(np.isnan(raw), 0, np.clip(np.trunc(raw), -32768, 32767)).astype(np.int16)
    x = raw.copy()
    desc = desc_from_json(
        "CAST",
        {"InputTensor": {"DataType": "FLOAT32", "Sizes": [n]}, "OutputTensor": {"DataType": "INT16", "Sizes": [n]}},
    )
    out = x.view(np.int16)[n:]
    dmlops.execute(desc, {"InputTensor": x}, backend="cpu", outputs={"OutputTensor": out})
    assert np.array_equal(out, want)
