"""The separable gathers on wider elements (cuda/_table_copy.py's ``widened``).

Where each group of ``f`` adjacent outputs reads ``f`` adjacent inputs (FLOAT16 PADDING with
even borders, TILE of even rows, WRAP borders), the cuda backend moves ``f`` narrow elements
as one wide one. Host checks: the wide tables, run the way the kernel runs them (written
plainly below on flat buffers of raw bits), write the same bytes as the narrow tables, and
both match the NumPy reference, over many random descs, input strides and output strides,
with the cases that must not widen named. Device checks: the backend against the reference,
bit for bit, at aligned addresses (the wide launch) and one element off (the narrow one).
"""

from __future__ import annotations

import zlib
from functools import reduce
from typing import Any

import numpy as np
import pytest

import dmlops
from conftest import backend_params, to_numpy
from dmlops.cuda._table_copy import Tables, gather_tables, widened
from dmlops.descs import desc_from_json

MODES = ("CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC", "WRAP")
TYPES = ("FLOAT16", "INT8", "UINT16", "FLOAT32", "INT32", "UINT64")


def rng_for(*key: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def dense(sizes: list[int]) -> list[int]:
    strides, step = [0] * len(sizes), 1
    for i in range(len(sizes) - 1, -1, -1):
        strides[i], step = step, step * sizes[i]
    return strides


def span(sizes: list[int], strides: list[int]) -> int:
    return 1 + sum((n - 1) * s for n, s in zip(sizes, strides))


def axes(vectors: Any) -> list[np.ndarray]:
    """Vector ``d`` along axis ``d`` of the output's rank (np.ix_ without its reading of booleans)."""
    rank = len(vectors)
    return [np.asarray(v).reshape([-1 if k == d else 1 for k in range(rank)]) for d, v in enumerate(vectors)]


def run_tables(t: Tables, x: np.ndarray, y: np.ndarray) -> None:
    """What the kernel does, on flat arrays of ``t.itemsize``-byte elements: ``y[dst(o)] = x[src(o)]``,
    or the fill where a table marks padding."""
    src = sum(axes(t.offsets))
    pad = reduce(np.logical_or, axes(t.marks))
    dst = sum(axes([np.arange(n) * s for n, s in zip(t.sizes, t.ostrides)]))
    fill = np.array(t.fill_bits, dtype=np.uint64).astype(y.dtype)
    y[dst] = np.where(pad, fill, x[np.where(pad, 0, src)])


def random_case(seed: int) -> tuple[Any, list[int], list[int]]:
    """A PADDING, PADDING1 or TILE desc likely to widen (even sizes and borders, mostly), with input
    strides (dense, or gaps between rows of even or odd length) and output strides (dense, or gaps)."""
    rng = rng_for("widen", seed)
    dtype = TYPES[seed % len(TYPES)]
    rank = int(rng.integers(1, 5))
    sizes = [int(v) for v in rng.integers(1, 5, rank) * rng.choice([1, 2, 4], rank)]
    if seed % 3 == 2:
        repeats = [int(v) for v in rng.integers(1, 4, rank)]
        out_sizes = [n * r for n, r in zip(sizes, repeats)]
        body: dict[str, Any] = {"Repeats": repeats}
        op = "TILE"
    else:
        mode = MODES[int(rng.integers(0, len(MODES)))]
        cap = [s - 1 if mode == "REFLECTION" else s if mode == "SYMMETRIC" else 4 for s in sizes]
        start = [min(int(rng.choice([0, 2, 4, 1])), c) for c in cap]
        end = [min(int(rng.choice([0, 2, 4, 3])), c) for c in cap]
        out_sizes = [s + a + b for s, a, b in zip(sizes, start, end)]
        body = {"PaddingMode": mode, "StartPadding": start, "EndPadding": end}
        op = "PADDING" if seed % 2 else "PADDING1"
        if op == "PADDING":
            body["PaddingValue"] = -177.75
        else:
            body["PaddingValueDataType"] = dtype
            body["PaddingValue"] = 3
    xstrides = dense(sizes)
    if rank > 1 and rng.random() < 0.4:  # a gap after each row: of even or odd length
        xstrides[-2] = sizes[-1] + int(rng.integers(1, 4))
        for i in range(rank - 3, -1, -1):
            xstrides[i] = xstrides[i + 1] * sizes[i + 1]
    ystrides = dense(out_sizes)
    if rank > 1 and rng.random() < 0.3:
        ystrides = [s * 2 for s in ystrides[:-1]] + [1]
    body["InputTensor"] = {"DataType": dtype, "Sizes": sizes}
    body["OutputTensor"] = {"DataType": dtype, "Sizes": out_sizes}
    desc = desc_from_json(op, body)
    desc.validate()
    return desc, xstrides, ystrides


SEEDS = range(240)


def test_wide_tables_write_what_the_narrow_ones_write() -> None:
    """Every widened gather (at 2, 4 and 8 bytes at most) writes the narrow gather's bytes, and
    both the reference's; enough cases widen that the check is not empty."""
    widened_at = {2: 0, 4: 0, 8: 0}
    for seed in SEEDS:
        desc, xstrides, ystrides = random_case(seed)
        rng = rng_for("widen-values", seed)
        dtype = np.dtype(desc.input_tensor.dtype)
        item = dtype.itemsize
        sizes, out_sizes = list(desc.input_tensor.sizes), list(desc.output_tensor.sizes)
        xbytes = rng.integers(0, 256, -(-span(sizes, xstrides) * item // 16) * 16, dtype=np.uint8)
        logical = np.lib.stride_tricks.as_strided(xbytes.view(dtype), sizes, [s * item for s in xstrides])
        want = dmlops.execute(desc, {"InputTensor": np.ascontiguousarray(logical)})["OutputTensor"]
        t = gather_tables(desc, tuple(xstrides), tuple(out_sizes), tuple(ystrides), dtype)
        room = -(-span(out_sizes, ystrides) * item // 16) * 16
        narrow = np.full(room, 0xA5, dtype=np.uint8)
        run_tables(t, xbytes.view(f"u{item}"), narrow.view(f"u{item}"))
        got = np.lib.stride_tricks.as_strided(narrow.view(dtype), out_sizes, [s * item for s in ystrides])
        assert got.tobytes() == np.ascontiguousarray(want).tobytes(), (seed, "narrow")
        for most in widened_at:
            found = widened(t, most)
            if found is None:
                continue
            f, w = found
            assert f >= 2 and w.itemsize == f * item <= most and w.sizes[-1] * f == out_sizes[-1]
            widened_at[most] += 1
            wide = np.full(room, 0xA5, dtype=np.uint8)
            run_tables(w, xbytes.view(f"u{w.itemsize}"), wide.view(f"u{w.itemsize}"))
            assert wide.tobytes() == narrow.tobytes(), (seed, most)  # outside the output's elements too
    assert widened_at[2] >= 5 and widened_at[4] >= 30 and widened_at[8] >= 30, widened_at


def _padding(dtype: str, sizes: list[int], start: list[int], end: list[int], mode: str = "CONSTANT") -> Any:
    body = {
        "InputTensor": {"DataType": dtype, "Sizes": sizes},
        "OutputTensor": {"DataType": dtype, "Sizes": [s + a + b for s, a, b in zip(sizes, start, end)]},
        "PaddingMode": mode,
        "PaddingValue": 1.5,
        "StartPadding": start,
        "EndPadding": end,
    }
    desc = desc_from_json("PADDING", body)
    desc.validate()
    return desc


def _tile(dtype: str, sizes: list[int], repeats: list[int]) -> Any:
    body = {
        "InputTensor": {"DataType": dtype, "Sizes": sizes},
        "OutputTensor": {"DataType": dtype, "Sizes": [n * r for n, r in zip(sizes, repeats)]},
        "Repeats": repeats,
    }
    desc = desc_from_json("TILE", body)
    desc.validate()
    return desc


def _factor(desc: Any, most: int, xstrides: list[int] | None = None, ystrides: list[int] | None = None) -> int:
    sizes, out = list(desc.input_tensor.sizes), list(desc.output_tensor.sizes)
    t = gather_tables(
        desc, tuple(xstrides or dense(sizes)), tuple(out), tuple(ystrides or dense(out)), desc.output_tensor.dtype
    )
    found = widened(t, most)
    return 0 if found is None else found[0]


def test_which_gathers_widen() -> None:
    """The bench's FLOAT16 PADDING (2 on each side) and TILE 2 x 2 widen to 4 bytes (TILE to 8 where
    allowed); odd borders, odd output or input strides, reflected borders and DEPTH_TO_SPACE's block
    columns do not."""
    pad = _padding("FLOAT16", [2, 3, 12, 12], [0, 0, 2, 2], [0, 0, 2, 2])
    assert _factor(pad, 4) == 2 and _factor(pad, 8) == 2  # w - 2 is even, not a multiple of 4
    assert _factor(pad, 2) == 0  # nothing wider than the element
    assert _factor(_padding("INT8", [3, 12], [0, 4], [0, 4]), 4) == 4
    assert _factor(_padding("INT8", [3, 12], [0, 2], [0, 2]), 4) == 2
    assert _factor(_padding("FLOAT32", [3, 12], [0, 2], [0, 2]), 4) == 0
    assert _factor(_padding("FLOAT32", [3, 12], [0, 2], [0, 2]), 8) == 2
    tile = _tile("FLOAT16", [2, 3, 8, 8], [1, 1, 2, 2])
    assert _factor(tile, 4) == 2 and _factor(tile, 8) == 4 and _factor(tile, 16) == 8
    assert _factor(_padding("FLOAT16", [3, 12], [0, 1], [0, 1]), 4) == 0  # odd border
    assert _factor(_padding("FLOAT16", [3, 12], [0, 2], [0, 1]), 4) == 0  # odd row
    assert _factor(_padding("FLOAT16", [3, 12], [0, 2], [0, 2], "REFLECTION"), 4) == 0  # 2, 1 | 0, 1 ...
    assert _factor(_padding("FLOAT16", [3, 12], [0, 2], [0, 2], "WRAP"), 4) == 2  # 10, 11 | 0, 1 ...
    assert _factor(pad, 4, xstrides=[3 * 145, 145, 12, 1]) == 0  # input rows 145 apart: odd
    assert _factor(pad, 4, xstrides=[3 * 146, 146, 12, 1]) == 2
    assert _factor(pad, 4, ystrides=[3 * 16 * 17, 16 * 17, 17, 1]) == 0  # output rows 17 apart
    assert _factor(pad, 4, ystrides=[3 * 16 * 18, 16 * 18, 18, 1]) == 2
    assert _factor(pad, 4, ystrides=[3 * 16 * 32, 16 * 32, 2, 32]) == 0  # output rows not contiguous
    assert _factor(tile, 4, xstrides=[3 * 8 * 8, 8 * 8, 1, 8]) == 0  # the input transposed
    body = {
        "InputTensor": {"DataType": "FLOAT16", "Sizes": [1, 8, 4, 4]},
        "OutputTensor": {"DataType": "FLOAT16", "Sizes": [1, 2, 8, 8]},
        "BlockSize": 2,
        "Order": "COLUMN_ROW_DEPTH",
    }
    dts = desc_from_json("DEPTH_TO_SPACE1", body)
    dts.validate()
    assert _factor(dts, 16) == 0  # adjacent outputs read two channels


def test_runs_must_start_at_a_wide_element() -> None:
    """Adjacent inputs from an odd offset straddle two wide elements: not widened."""

    def tables(inner: list[int], outer: list[int]) -> Tables:
        o = (np.array(outer), np.array(inner))
        marks = (np.zeros(len(outer), dtype=bool), np.zeros(len(inner), dtype=bool))
        return Tables(o, marks, (len(outer), len(inner)), (len(inner), 1), 2, 0)

    assert widened(tables([1, 2, 5, 6], [0, 8]), 4) is None
    assert widened(tables([0, 1, 4, 5], [0, 9]), 4) is None  # an odd row offset
    found = widened(tables([0, 1, 4, 5], [0, 8]), 4)
    assert found is not None and found[0] == 2
    assert [o.tolist() for o in found[1].offsets] == [[0, 4], [0, 2]]


def test_wide_fill_repeats_the_narrow_fill() -> None:
    desc = _padding("FLOAT16", [3, 4], [2, 2], [0, 2])
    t = gather_tables(desc, (4, 1), (5, 8), (8, 1), np.float16)
    found = widened(t, 8)
    assert found is not None
    f, w = found
    assert f == 2 and t.fill_bits == 0x3E00  # 1.5
    assert w.fill_bits == 0x3E003E00 and w.itemsize == 4
    assert [m.tolist() for m in w.marks] == [[True, True, False, False, False], [True, False, False, True]]


# -- on the device -------------------------------------------------------------------------------

DEVICE_CASES = [
    pytest.param(kind, dtype, shift, id=f"{kind}-{dtype}-{shift}")
    for kind in ("pad", "pad_wrap", "pad_odd", "tile", "tile_strided_out")
    for dtype in ("FLOAT16", "INT8", "UINT16", "FLOAT32", "UINT64")
    for shift in ("aligned", "input_off", "output_off")
]


@pytest.mark.parametrize("backend", backend_params("cuda"), indirect=True)
@pytest.mark.parametrize("most", [4, 8])
@pytest.mark.parametrize(("kind", "dtype", "shift"), DEVICE_CASES)
def test_cuda_widened_gathers(
    backend: str, kind: str, dtype: str, shift: str, most: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backend against the reference, bit for bit: widened (to at most ``most`` bytes) where the
    addresses allow, narrow with the input or the output one element off its alignment; nothing
    outside the output written."""
    import cupy as cp

    from dmlops.cuda import _table_copy

    monkeypatch.setattr(_table_copy, "WIDEN_BYTES", most)
    monkeypatch.setattr(_table_copy, "WIDEN_ITEMS_BELOW", 8)  # FLOAT32 too
    picked: list[int] = []
    real_pick = _table_copy.TablePlan.pick

    def pick(plan: Any, xp: int, yp: int) -> Any:
        launch = real_pick(plan, xp, yp)
        picked.append(plan.wide_bytes if launch is plan.wide_launch else plan.tables.itemsize)
        return launch

    monkeypatch.setattr(_table_copy.TablePlan, "pick", pick)
    rng = rng_for("widen-device", kind, dtype, shift)
    desc = {
        "pad": lambda: _padding(dtype, [3, 5, 36], [0, 2, 4], [1, 0, 4]),
        "pad_wrap": lambda: _padding(dtype, [2, 3, 40], [0, 0, 4], [0, 1, 8], "WRAP"),
        "pad_odd": lambda: _padding(dtype, [3, 5, 36], [0, 2, 3], [1, 0, 3]),
        "tile": lambda: _tile(dtype, [3, 2, 24], [2, 3, 2]),
        "tile_strided_out": lambda: _tile(dtype, [3, 2, 24], [1, 2, 4]),
    }[kind]()
    np_dtype = np.dtype(desc.input_tensor.dtype)
    sizes, out_sizes = list(desc.input_tensor.sizes), list(desc.output_tensor.sizes)
    count = int(np.prod(sizes))
    raw = rng.integers(0, 256, (count + 16) * np_dtype.itemsize, dtype=np.uint8).view(np_dtype)
    at = 1 if shift == "input_off" else 0
    want = dmlops.execute(desc, {"InputTensor": raw[at : at + count].reshape(sizes)})["OutputTensor"]
    base = cp.asarray(raw)
    x = base[at : at + count].reshape(sizes)
    if kind == "tile_strided_out":  # rows 8 elements apart beyond their length
        ostrides = dense(out_sizes)
        ostrides = [s // out_sizes[-1] * (out_sizes[-1] + 8) for s in ostrides[:-1]] + [1]
        room = span(out_sizes, ostrides) + 16
        flat = cp.full(room * np_dtype.itemsize, 0x5A, dtype=cp.uint8).view(np_dtype)
        at = 1 if shift == "output_off" else 0
        y = cp.lib.stride_tricks.as_strided(flat[at:], out_sizes, [s * np_dtype.itemsize for s in ostrides])
    else:
        ostrides = dense(out_sizes)
        room = int(np.prod(out_sizes)) + 16
        flat = cp.full(room * np_dtype.itemsize, 0x5A, dtype=cp.uint8).view(np_dtype)
        at = 1 if shift == "output_off" else 0
        y = flat[at : at + int(np.prod(out_sizes))].reshape(out_sizes)
    before = cp.asnumpy(flat).view(np.uint8).copy()
    got = dmlops.execute(desc, {"InputTensor": x}, backend=backend, outputs={"OutputTensor": y})["OutputTensor"]
    assert to_numpy(got).tobytes() == np.ascontiguousarray(want).tobytes()
    factor = _factor(desc, most, ystrides=ostrides) if shift == "aligned" and np_dtype.itemsize < 8 else 0
    assert picked == [np_dtype.itemsize * (factor or 1)]
    after = cp.asnumpy(flat).view(np.uint8)
    written = np.zeros(room, dtype=bool)
    np.lib.stride_tricks.as_strided(written[at:], out_sizes, ostrides)[...] = True
    mask = np.repeat(written, np_dtype.itemsize)
    assert (after[~mask] == before[~mask]).all()  # nothing else touched
