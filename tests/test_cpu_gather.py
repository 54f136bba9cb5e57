"""The cpu backend's vector gather (``cpu/_gather.py``) and the GATHER_ELEMENTS rows that use it.

The intrinsic is checked lane by lane against the index rule written out in Python (wrap
once when negative, out of range left unwritten and counted), for every index and element
width; the kernel end to end against the NumPy reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops.descs import desc_from_json

pytest.importorskip("numba")

from numba import njit

from dmlops.cpu import _threads
from dmlops.cpu._gather import LANES, gather_step
from test_cpu_stream import _misaligned, _values

STEP = gather_step()


@njit(cache=False)
def _steps(src, idx, dst, start, n, wrap):  # type: ignore[no-untyped-def]
    missed = 0
    j = start
    while j + LANES <= idx.size:
        missed += STEP(src, idx, dst, j, n, wrap)
        j += LANES
    return missed, j


def _expected(src: np.ndarray, idx: np.ndarray, dst: np.ndarray, start: int, stop: int, wrap: bool) -> int:
    """The rule, one element at a time in Python integers: returns the count out of range."""
    n, missed = src.size, 0
    for k in range(start, stop):
        v = int(idx[k])
        if idx.dtype == np.uint64 and v >= 2**63:  # read as a signed 64-bit value
            v -= 2**64
        if wrap and v < 0:
            v += n
        if 0 <= v < n:
            dst[k] = src[v]
        else:
            missed += 1
    return missed


@pytest.mark.parametrize("element", ["u1", "u2", "u4", "u8"])
@pytest.mark.parametrize("index", ["i4", "u4", "i8", "u8"])
@pytest.mark.parametrize("wrap", [False, True])
@pytest.mark.parametrize("start", [0, 3])
def test_gather_step_follows_the_index_rule(element: str, index: str, wrap: bool, start: int) -> None:
    rng = np.random.default_rng(hash((element, index, wrap, start)) % 2**32)
    n = 37
    info = np.iinfo(element)
    src = rng.integers(info.min, info.max, n, dtype=element, endpoint=True)
    edges = [0, n - 1, n, n + 1, -1, -n, -n - 1, 2**31 - 1, -(2**31), 2**32 - 1, 2**63 - 1, -(2**63)]
    picks = [int(v) for v in rng.integers(-2 * n, 2 * n, 64)] + edges
    idx = np.array([v % 2**64 if index == "u8" else v for v in picks], dtype=object)
    idx = np.array([v for v in idx if np.iinfo(index).min <= v <= np.iinfo(index).max], dtype=index)
    sentinel = np.array(info.max // 3, element)
    got = np.full(idx.size, sentinel)
    want = got.copy()
    missed, stop = _steps(src, idx, got, start, n, wrap)
    assert stop > start + LANES  # several whole steps ran
    assert missed == _expected(src, idx, want, start, stop, wrap)
    assert np.array_equal(got, want)  # lanes out of range, and those outside the steps, keep the sentinel
    assert missed > 0 and (got == sentinel).sum() >= missed


@pytest.mark.parametrize(("shape", "offset"), [((8, 1024), 0), ((4, 3, 77), 5), ((300, 9), 1)])
@pytest.mark.parametrize("dtype_name", ["FLOAT32", "INT64", "FLOAT16", "UINT8"])
@pytest.mark.parametrize("threads", [1, 2])
def test_gather_elements_rows(
    monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...], offset: int, dtype_name: str, threads: int
) -> None:
    # along a last axis of unit strides: vectors of LANES for 4- and 8-byte elements, then a
    # tail one by one; into misaligned outputs, over one thread or several
    monkeypatch.setattr(_threads, "PARALLEL_MIN_ELEMENTS", 1 if threads > 1 else 1 << 62)
    desc = desc_from_json(
        "GATHER_ELEMENTS",
        {
            "InputTensor": {"DataType": dtype_name, "Sizes": list(shape)},
            "IndicesTensor": {"DataType": "INT64", "Sizes": list(shape)},
            "OutputTensor": {"DataType": dtype_name, "Sizes": list(shape)},
            "Axis": len(shape) - 1,
        },
    )
    dtype = np.dtype(desc.tensor("OutputTensor").data_type.numpy_dtype)
    rng = np.random.default_rng(offset + len(shape))
    x: Any = _values(dtype, shape, rng) if dtype.kind == "f" else rng.integers(0, 2**40, shape).astype(dtype)
    idx = rng.integers(-shape[-1], shape[-1], shape).astype(np.int64)
    out = _misaligned(shape, dtype, offset)
    ins = {"InputTensor": x, "IndicesTensor": idx}
    expected = dmlops.execute(desc, ins, backend="numpy")["OutputTensor"]
    dmlops.execute(desc, ins, backend="cpu", outputs={"OutputTensor": out})
    bits = f"u{dtype.itemsize}"
    assert np.array_equal(out.view(bits), expected.view(bits))
    # an index out of range, inside a vector step and in a tail: the reference's error
    for where in ((0,) * (len(shape) - 1) + (1,), (-1,) * len(shape)):
        bad = idx.copy()
        bad[where] = shape[-1] + 1
        ins_bad = {"InputTensor": x, "IndicesTensor": bad}
        with pytest.raises(Exception) as cpu_error:
            dmlops.execute(desc, ins_bad, backend="cpu", outputs={"OutputTensor": out})
        with pytest.raises(Exception) as ref_error:
            dmlops.execute(desc, ins_bad, backend="numpy")
        assert type(cpu_error.value) is type(ref_error.value) and str(cpu_error.value) == str(ref_error.value)


def test_byte_misaligned_arrays_take_the_scalar_loop() -> None:
    # the vector gather assumes naturally aligned elements: an input whose data starts one byte
    # into a buffer is gathered one element at a time, with the same result
    shape = (16, 64)
    desc = desc_from_json(
        "GATHER_ELEMENTS",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": list(shape)},
            "IndicesTensor": {"DataType": "INT64", "Sizes": list(shape)},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": list(shape)},
            "Axis": 1,
        },
    )
    rng = np.random.default_rng(3)
    values = rng.standard_normal(shape).astype(np.float32)
    raw = np.zeros(values.nbytes + 1, np.uint8)
    raw[1:] = values.view(np.uint8).reshape(-1)
    x = np.frombuffer(raw.data, np.float32, values.size, offset=1).reshape(shape)
    assert not x.flags.aligned
    idx = rng.integers(-shape[1], shape[1], shape)
    got = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": idx}, backend="cpu")["OutputTensor"]
    want = np.take_along_axis(values, np.where(idx < 0, idx + shape[1], idx), axis=1)
    assert np.array_equal(np.asarray(got).view(np.uint32), want.view(np.uint32))
