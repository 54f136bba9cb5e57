"""Large plain IDENTITY on the CUDA backend through the driver's device-to-device copy (marked ``cuda``).

``DRIVER_COPY_MIN_BYTES`` (dmlops.cuda.elementwise): ELEMENT_WISE_IDENTITY and
ACTIVATION_IDENTITY between two dense runs of one data type, without ScaleBias, at or above
the threshold, are ``cudaMemcpyAsync``. Checked against the NumPy reference and the input's
own bits (random bit patterns: NaN payloads, signalling NaNs, -0, subnormals), on repeat calls
of one desc over the same arrays (no replay may skip the copy), at the threshold's boundary,
and on the layouts that must stay on the kernel. Without a GPU only the plan test runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops.cuda import _fastlaunch as fl
from dmlops.cuda import _runtime
from dmlops.cuda import elementwise as ew
from dmlops.descs import desc_from_json

OPS = ("ELEMENT_WISE_IDENTITY", "ACTIVATION_IDENTITY")
TYPES = {"FLOAT32": (np.float32, np.uint32), "FLOAT16": (np.float16, np.uint16)}


def _desc(op: str, dtype: str, n: int, in_strides: list[int] | None = None, **attrs: Any) -> Any:
    x: dict[str, Any] = {"DataType": dtype, "Sizes": [n]}
    if in_strides is not None:
        x["Strides"] = in_strides
    desc = desc_from_json(op, {"InputTensor": x, "OutputTensor": {"DataType": dtype, "Sizes": [n]}, **attrs})
    desc.validate()
    return desc


def _bits(dtype: str, n: int, seed: int) -> np.ndarray:
    """Random bit patterns of ``dtype`` (NaNs with payloads among them), the first few chosen:
    -0, +0, a signalling NaN, a negative quiet NaN with a payload, -inf, the smallest subnormal."""
    ftype, utype = TYPES[dtype]
    bits = np.random.default_rng(seed).integers(0, np.iinfo(utype).max, n, dtype=utype, endpoint=True)
    if ftype == np.float32:
        chosen = [0x80000000, 0, 0x7F800001, 0xFFC01234, 0xFF800000, 1]
    else:
        chosen = [0x8000, 0, 0x7C01, 0xFE34, 0xFC00, 1]
    bits[: len(chosen)] = chosen[:n]
    return bits.view(ftype)


def _same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    unsigned = np.dtype(f"u{got.dtype.itemsize}")
    return got.dtype == want.dtype and bool(np.array_equal(got.view(unsigned), want.view(unsigned)))


def _reference_agrees(op: str, got: np.ndarray, x: np.ndarray) -> None:
    """The NumPy reference's bits, NaN payloads included (both IDENTITYs keep them: errata E197)."""
    want = dmlops.execute(_desc(op, x.dtype.name.upper(), x.size), {"InputTensor": x}, backend="numpy")["OutputTensor"]
    assert _same_bits(got, want)


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """The (dst, src, bytes) of every driver copy made while the test runs."""
    made: list[tuple[int, int, int]] = []
    real = ew.driver_copy

    def counted(dst: int, src: int, nbytes: int) -> None:
        made.append((dst, src, nbytes))
        real(dst, src, nbytes)

    monkeypatch.setattr(ew, "driver_copy", counted)
    return made


def test_plans_know_which_calls_are_plain_copies() -> None:
    f32 = np.dtype(np.float32)
    for op in OPS:
        lay = ew.layout((4, 8), [(8, 1), (8, 1)])
        assert ew.Plan(_desc(op, "FLOAT32", 32), [f32], f32, lay).copy_bytes == 128
    strided = ew.layout((32,), [(2,), (1,)])
    assert ew.Plan(_desc("ELEMENT_WISE_IDENTITY", "FLOAT32", 32, [2]), [f32], f32, strided).copy_bytes == 0
    reverse = ew.layout((32,), [(-1,), (1,)])
    assert ew.Plan(_desc("ELEMENT_WISE_IDENTITY", "FLOAT32", 32), [f32], f32, reverse).copy_bytes == 0
    dense = ew.layout((32,), [(1,), (1,)])
    scaled = _desc("ELEMENT_WISE_IDENTITY", "FLOAT32", 32, ScaleBias={"Scale": 1.0, "Bias": 0.0})
    assert ew.Plan(scaled, [f32], f32, dense).copy_bytes == 0
    assert ew.Plan(_desc("ELEMENT_WISE_ABS", "FLOAT32", 32), [f32], f32, dense).copy_bytes == 0


@pytest.mark.parametrize("dtype", list(TYPES))
@pytest.mark.parametrize("op", OPS)
def test_large_identity_keeps_every_bit(gpu: Any, copies: list[Any], op: str, dtype: str) -> None:
    """At the default threshold (the L2 cache size): the driver's copy, the input's bits exactly,
    and the same bits as the kernel gives (the threshold set out of reach)."""
    cp = gpu
    itemsize = np.dtype(TYPES[dtype][0]).itemsize
    n = ew._device_numbers(_runtime.current_device())[3] // (2 * itemsize) + 5
    x = _bits(dtype, n, n + itemsize)
    desc = _desc(op, dtype, n)
    dx = cp.asarray(x)
    got = dmlops.execute(desc, {"InputTensor": dx}, backend="cuda")["OutputTensor"].get()
    assert len(copies) == 1 and copies[0][2] == n * itemsize
    assert _same_bits(got, x)
    _reference_agrees(op, got, x)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ew, "DRIVER_COPY_MIN_BYTES", 1 << 62)
        kernel = dmlops.execute(desc, {"InputTensor": dx}, backend="cuda")["OutputTensor"].get()
    assert len(copies) == 1
    assert _same_bits(kernel, got)  # the kernel path keeps the bits too (its sign-bit functors)


@pytest.mark.parametrize("dtype", list(TYPES))
@pytest.mark.parametrize("op", OPS)
def test_repeat_calls_over_the_same_arrays_copy_every_time(
    gpu: Any, copies: list[Any], monkeypatch: pytest.MonkeyPatch, op: str, dtype: str
) -> None:
    """The second and later calls of a desc (recorded, then replay candidates) with the same
    arrays, new contents each time: every call copies, none is kept for replay, and each
    counts as unrecorded work (what makes a recording give no entry)."""
    cp = gpu
    monkeypatch.setattr(ew, "DRIVER_COPY_MIN_BYTES", 1 << 16)
    n = 50_000
    desc = _desc(op, dtype, n)
    dx = cp.empty(n, dtype=TYPES[dtype][0])
    out = cp.empty_like(dx)
    for call in range(5):
        x = _bits(dtype, n, call)
        dx.set(x)
        before = _runtime.unrecorded_launches()
        dmlops.execute(desc, {"InputTensor": dx}, outputs={"OutputTensor": out}, backend="cuda")
        assert _runtime.unrecorded_launches() == before + 1, call
        assert _same_bits(out.get(), x), call
    assert len(copies) == 5
    assert id(desc) not in fl._ENTRIES
    # in place, the very same memory: nothing to copy, nothing changed, still never recorded
    for _ in range(3):
        dmlops.execute(desc, {"InputTensor": out}, outputs={"OutputTensor": out}, backend="cuda")
        assert _same_bits(out.get(), x)
    assert len(copies) == 5 and id(desc) not in fl._ENTRIES


@pytest.mark.parametrize("op", OPS)
def test_small_identity_stays_on_the_replayed_kernel(gpu: Any, copies: list[Any], op: str) -> None:
    cp = gpu
    if fl.extension() is None:
        pytest.skip(f"the compiled launch path is not active here: {fl.status()['reason']}")
    n = 4096
    desc = _desc(op, "FLOAT32", n)
    dx = cp.empty(n, dtype=np.float32)
    out = cp.empty_like(dx)
    for call in range(5):
        x = _bits("FLOAT32", n, 100 + call)
        dx.set(x)
        dmlops.execute(desc, {"InputTensor": dx}, outputs={"OutputTensor": out}, backend="cuda")
        got = out.get()
        nan = np.isnan(x)
        assert np.array_equal(np.isnan(got), nan) and _same_bits(got[~nan], x[~nan]), call
    assert id(desc) in fl._ENTRIES
    assert copies == []


@pytest.mark.parametrize("dtype", list(TYPES))
@pytest.mark.parametrize("offsets", [(0, 0), (1, 3), (2, 0)])
def test_the_threshold_boundary_and_offset_views(
    gpu: Any, copies: list[Any], monkeypatch: pytest.MonkeyPatch, dtype: str, offsets: tuple[int, int]
) -> None:
    """One element below the threshold: the kernel; at it: the driver's copy. Both the input's
    values, on views that start inside their buffers (misaligned for the kernel's vectors), and
    nothing written outside the output view."""
    cp = gpu
    ftype = TYPES[dtype][0]
    itemsize = np.dtype(ftype).itemsize
    at = 1000
    monkeypatch.setattr(ew, "DRIVER_COPY_MIN_BYTES", 2 * at * itemsize)
    src_off, dst_off = offsets
    for n, driver in ((at - 1, False), (at, True)):
        x = _bits(dtype, n, n + src_off)
        dx = cp.zeros(n + src_off, dtype=ftype)[src_off:]
        dx.set(x)
        buf = cp.full(n + dst_off + 4, 7, dtype=ftype)
        before = len(copies)
        dmlops.execute(
            _desc("ELEMENT_WISE_IDENTITY", dtype, n),
            {"InputTensor": dx},
            outputs={"OutputTensor": buf[dst_off : dst_off + n]},
            backend="cuda",
        )
        assert (len(copies) > before) is driver, n
        host = buf.get()
        got = host[dst_off : dst_off + n]
        if driver:
            assert _same_bits(got, x)
        nan = np.isnan(x)
        assert np.array_equal(np.isnan(got), nan) and _same_bits(got[~nan], x[~nan]), n
        assert (host[:dst_off] == 7).all() and (host[dst_off + n :] == 7).all()


def test_strided_overlapping_and_scaled_calls_take_the_kernel(
    gpu: Any, copies: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the threshold at 0 (every size): a strided device view, a strided TensorDesc,
    ScaleBias, a reversed view and a partly overlapping output stay on the kernel."""
    cp = gpu
    monkeypatch.setattr(ew, "DRIVER_COPY_MIN_BYTES", 0)
    n = 3001
    x = np.random.default_rng(5).standard_normal(2 * n).astype(np.float32)
    dx = cp.asarray(x)
    plain = _desc("ELEMENT_WISE_IDENTITY", "FLOAT32", n)
    got = dmlops.execute(plain, {"InputTensor": dx[::2]}, backend="cuda")["OutputTensor"]
    assert _same_bits(got.get(), x[::2])
    got = dmlops.execute(plain, {"InputTensor": dx[n:][::-1]}, backend="cuda")["OutputTensor"]
    assert _same_bits(got.get(), x[n:][::-1])
    strided = _desc("ACTIVATION_IDENTITY", "FLOAT32", n, [2])
    got = dmlops.execute(strided, {"InputTensor": dx[: 2 * n - 1]}, backend="cuda")["OutputTensor"]
    assert _same_bits(got.get(), x[::2])
    scaled = _desc("ELEMENT_WISE_IDENTITY", "FLOAT32", n, ScaleBias={"Scale": 1.5, "Bias": -0.25})
    got = dmlops.execute(scaled, {"InputTensor": dx[:n]}, backend="cuda")["OutputTensor"]
    want = dmlops.execute(scaled, {"InputTensor": x[:n]}, backend="numpy")["OutputTensor"]
    assert _same_bits(got.get(), want)
    assert copies == []
    # the output one element past the input in the same buffer: the kernel (its own race), never a copy
    dmlops.execute(plain, {"InputTensor": dx[:n]}, outputs={"OutputTensor": dx[1 : n + 1]}, backend="cuda")
    cp.cuda.get_current_stream().synchronize()
    assert copies == []
    # apart in the same buffer: a copy
    dx.set(x)
    dmlops.execute(plain, {"InputTensor": dx[:n]}, outputs={"OutputTensor": dx[n : 2 * n]}, backend="cuda")
    assert len(copies) == 1
    host = dx.get()
    assert _same_bits(host[n:], x[:n]) and _same_bits(host[:n], x[:n])


def test_the_copy_runs_on_the_current_stream(gpu: Any, copies: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Queued behind a fill on a non-blocking stream: the copy sees the fill's values."""
    cp = gpu
    monkeypatch.setattr(ew, "DRIVER_COPY_MIN_BYTES", 0)
    n = 1 << 22
    desc = _desc("ELEMENT_WISE_IDENTITY", "FLOAT32", n)
    dx = cp.zeros(n, dtype=np.float32)
    out = cp.zeros(n, dtype=np.float32)
    cp.cuda.Device().synchronize()
    with cp.cuda.Stream(non_blocking=True) as side:
        for value in (1.0, 2.0, 3.0):
            dx *= 0.0
            dx += value
            dmlops.execute(desc, {"InputTensor": dx}, outputs={"OutputTensor": out}, backend="cuda")
            assert bool((out == value).all()), value
        side.synchronize()
    assert len(copies) == 3
