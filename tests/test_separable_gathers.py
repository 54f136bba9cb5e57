"""PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1) and TILE as separable gathers (descs/_separable_gathers.py).

The tables are checked against the NumPy reference's own formulas on every mode, order,
block size and data type (through ``gather_with_numpy``, which states what a table
means; TILE's also through the element offsets of strided inputs); then the cuda backend,
which runs these operators from the tables (cuda/_table_copy.py), and the cpu backend,
which runs PADDING(1) and TILE from them (cpu/data_movement.py's ``_separable_rows``),
against the reference, bit for bit, on strided, reversed and broadcast inputs, strided
outputs, FLOAT16 NaN payloads and 64-bit types.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import dmlops
from conftest import backend_params, to_numpy
from dmlops.descs import desc_from_json
from dmlops.descs._separable_gathers import GATHERS, gather_with_numpy, separable_gather

MODES = ("CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC", "WRAP")
TYPES = ("FLOAT32", "FLOAT16", "INT8", "UINT16", "INT32", "UINT64", "FLOAT64")


def rng_for(*key: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def values(dtype: np.dtype[Any], shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random bits: every pattern of the type (NaN payloads included) must be moved unchanged."""
    raw = rng.integers(0, 256, int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def padding_case(op: str, mode: str, dtype: str, rng: np.random.Generator, rank: int) -> tuple[Any, np.ndarray]:
    sizes = [int(v) for v in rng.integers(1, 6, rank)]
    if mode == "REFLECTION":  # DirectML reflects at most size - 1 elements on a side
        limits = [s - 1 for s in sizes]
    elif mode == "SYMMETRIC":
        limits = sizes
    else:
        limits = [4] * rank
    start = [int(rng.integers(0, lim + 1)) for lim in limits]
    end = [int(rng.integers(0, lim + 1)) for lim in limits]
    body: dict[str, Any] = {
        "InputTensor": {"DataType": dtype, "Sizes": sizes},
        "OutputTensor": {"DataType": dtype, "Sizes": [s + a + b for s, a, b in zip(sizes, start, end)]},
        "PaddingMode": mode,
        "StartPadding": start,
        "EndPadding": end,
    }
    if op == "PADDING":
        body["PaddingValue"] = -177.75
    else:
        body["PaddingValueDataType"] = dtype
        body["PaddingValue"] = 3
    desc = desc_from_json(op, body)
    return desc, values(np.dtype(desc.input_tensor.dtype), tuple(sizes), rng)


def depth_case(op: str, order: str, block: int, dtype: str, rng: np.random.Generator) -> tuple[Any, np.ndarray]:
    n, c, h, w = 2, int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 5))
    deep, shallow = [n, c * block * block, h, w], [n, c, h * block, w * block]
    ins, outs = (deep, shallow) if op.startswith("DEPTH") else (shallow, deep)
    body: dict[str, Any] = {
        "InputTensor": {"DataType": dtype, "Sizes": ins},
        "OutputTensor": {"DataType": dtype, "Sizes": outs},
        "BlockSize": block,
    }
    if op.endswith("1"):
        body["Order"] = order
    desc = desc_from_json(op, body)
    return desc, values(np.dtype(desc.input_tensor.dtype), tuple(ins), rng)


def cases() -> list[Any]:
    out = []
    for op in ("PADDING", "PADDING1"):
        for mode in MODES:
            for dtype in TYPES:
                for rank in (1, 3, 5):
                    out.append(pytest.param("pad", op, mode, dtype, rank, id=f"{op}-{mode}-{dtype}-{rank}d"))
    for op in ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1"):
        for order in ("DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH") if op.endswith("1") else ("DEPTH_COLUMN_ROW",):
            for block in (1, 2, 3):
                for dtype in ("FLOAT32", "FLOAT16", "INT8", "UINT64"):
                    out.append(pytest.param("depth", op, order, dtype, block, id=f"{op}-{order}-{dtype}-b{block}"))
    return out


def build(kind: str, op: str, variant: str, dtype: str, n: int) -> tuple[Any, np.ndarray]:
    rng = rng_for(kind, op, variant, dtype, n)
    return padding_case(op, variant, dtype, rng, n) if kind == "pad" else depth_case(op, variant, n, dtype, rng)


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def test_every_operator_has_a_gather() -> None:
    assert set(GATHERS) == {
        "PADDING",
        "PADDING1",
        "DEPTH_TO_SPACE",
        "DEPTH_TO_SPACE1",
        "SPACE_TO_DEPTH",
        "SPACE_TO_DEPTH1",
        "TILE",
    }


@pytest.mark.parametrize(("kind", "op", "variant", "dtype", "n"), cases())
def test_tables_read_what_the_reference_reads(kind: str, op: str, variant: str, dtype: str, n: int) -> None:
    desc, x = build(kind, op, variant, dtype, n)
    desc.validate()
    want = dmlops.execute(desc, {"InputTensor": x})["OutputTensor"]
    got = gather_with_numpy(separable_gather(desc), x, want.dtype)
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
@pytest.mark.parametrize(("kind", "op", "variant", "dtype", "n"), cases())
def test_backend_matches_the_reference(backend: str, kind: str, op: str, variant: str, dtype: str, n: int) -> None:
    desc, x = build(kind, op, variant, dtype, n)
    desc.validate()
    want = dmlops.execute(desc, {"InputTensor": x})["OutputTensor"]
    got = to_numpy(dmlops.execute(desc, {"InputTensor": x}, backend=backend)["OutputTensor"])
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("backend", backend_params("cuda"), indirect=True)
@pytest.mark.parametrize("layout", ["reversed", "transposed", "broadcast", "strided_output", "wide_rows"])
def test_cuda_layouts(backend: str, layout: str) -> None:
    """Input views of any strides (the table folds them in) and outputs written only where addressed."""
    import cupy as cp

    rng = rng_for("layout", layout)
    if layout == "wide_rows":  # rows longer than a block's threads, rows of one element
        sizes = [3, 1000]
    else:
        sizes = [4, 3, 5]
    base = cp.asarray(values(np.dtype(np.float32), (6, 7, 8), rng))
    x = {
        "reversed": base[::-1, ::-2, ::-1][:4, :3, :5],
        "transposed": base.transpose(2, 0, 1)[:4, :3, :5],
        "broadcast": cp.broadcast_to(base[:1, :3, :5], (4, 3, 5)),
        "strided_output": base[:4, :3, :5],
        "wide_rows": cp.asarray(values(np.dtype(np.float32), (3, 1000), rng)),
    }[layout]
    start, end = [1] * len(sizes), [2] * len(sizes)
    out_sizes = [s + 3 for s in sizes]
    body: dict[str, Any] = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": sizes},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": out_sizes},
        "PaddingMode": "REFLECTION",
        "PaddingValue": 0.0,
        "StartPadding": start,
        "EndPadding": end,
    }
    outputs = None
    if layout == "strided_output":
        body["OutputTensor"]["Strides"] = [200, 20, 2]
        body["OutputTensor"]["TotalTensorSizeInBytes"] = 4 * (6 * 200 + 7 * 20 + 7 * 2 + 1)
        flat = cp.full(6 * 200 + 7 * 20 + 7 * 2 + 1, 12345.0, dtype=cp.float32)
        outputs = {"OutputTensor": flat}
    desc = desc_from_json("PADDING", body)
    want = dmlops.execute(desc, {"InputTensor": cp.asnumpy(x)})["OutputTensor"]
    got = dmlops.execute(desc, {"InputTensor": x}, backend=backend, outputs=outputs)["OutputTensor"]
    if outputs is None:
        np.testing.assert_array_equal(bits(to_numpy(got)), bits(want))
        return
    host = cp.asnumpy(flat)
    view = np.lib.stride_tricks.as_strided(host, out_sizes, [4 * s for s in (200, 20, 2)])
    np.testing.assert_array_equal(bits(view.copy()), bits(want))
    written = np.zeros(host.size, dtype=bool)
    np.lib.stride_tricks.as_strided(written, out_sizes, [s for s in (200, 20, 2)])[...] = True
    assert (host[~written] == 12345.0).all()  # nothing else touched


def test_division_magic_divides_every_row_index() -> None:
    """The kernel's 32-bit rows are divided by a multiply-high and a shift (Div<int>): the host's
    magic numbers must give the exact quotient for every index below 2**31, at any divisor."""
    from dmlops.cuda._table_copy import division_magic

    rng = rng_for("magic")
    divisors = [*range(1, 1030), *(int(d) for d in rng.integers(1, 2**31, 500)), 2**31 - 1, 2**30 + 1, 3 << 29]
    for d in divisors:
        m, s = division_magic(d)
        n = np.concatenate(
            [rng.integers(0, 2**31, 200), [0, 1, d - 1, d, d + 1, 2**31 - 1, (2**31 - 1) // d * d - 1]]
        ).astype(np.uint64) % np.uint64(2**31)
        hi = (n * np.uint64(m)) >> np.uint64(32)  # mulhi of two 32-bit unsigned numbers
        assert (hi + n < 2**32).all()  # the kernel's sum fits 32 bits
        np.testing.assert_array_equal((hi + n) >> np.uint64(s), n // np.uint64(d), err_msg=f"divisor {d}")
    with pytest.raises(ValueError):
        division_magic(0)


# -- TILE ----------------------------------------------------------------------------------

TILE_TYPES = ("FLOAT32", "FLOAT16", "FLOAT64", "INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64")
TILE_SEEDS = range(6)


def gapped(sizes: list[int]) -> list[int]:
    """Strides with a gap after every element and row (nothing contiguous)."""
    strides, step = [0] * len(sizes), 2
    for i in range(len(sizes) - 1, -1, -1):
        strides[i], step = step, step * sizes[i] + 1
    return strides


def transposed(sizes: list[int]) -> list[int]:
    """Dense strides with the axes in reverse order (the first axis innermost)."""
    strides, step = [0] * len(sizes), 1
    for i, n in enumerate(sizes):
        strides[i], step = step, step * n
    return strides


def span(sizes: list[int], strides: list[int]) -> int:
    return 1 + sum((n - 1) * s for n, s in zip(sizes, strides))


def tile_case(dtype: str, seed: int, layout: str = "dense") -> tuple[Any, list[int]]:
    """A TILE desc of 1 to 8 axes (``layout``: the input's desc strides: dense, gapped or transposed)."""
    rng = rng_for("tile", dtype, seed)
    rank = int(rng.integers(1, 9))
    sizes = [int(v) for v in rng.integers(1, 7 if rank <= 3 else 4, rank)]
    repeats = [int(v) for v in rng.integers(1, 4, rank)]
    x: dict[str, Any] = {"DataType": dtype, "Sizes": sizes}
    if layout != "dense":
        x["Strides"] = gapped(sizes) if layout == "gapped" else transposed(sizes)
    out = {"DataType": dtype, "Sizes": [n * r for n, r in zip(sizes, repeats)]}
    desc = desc_from_json("TILE", {"InputTensor": x, "OutputTensor": out, "Repeats": repeats})
    desc.validate()
    return desc, sizes


TILE_CASES = [
    pytest.param(dtype, seed, layout, id=f"TILE-{dtype}-{seed}-{layout}")
    for dtype in TILE_TYPES
    for seed in TILE_SEEDS
    for layout in ("dense", "gapped", "transposed")
]


def test_tile_tables_read_each_input_coordinate_once_per_repeat() -> None:
    """Axis d reads only input axis d, every coordinate of it Repeats[d] times, in order."""
    desc = desc_from_json(
        "TILE",
        {
            "InputTensor": {"DataType": "INT8", "Sizes": [3, 1, 4]},
            "OutputTensor": {"DataType": "INT8", "Sizes": [6, 5, 4]},
            "Repeats": [2, 5, 1],
        },
    )
    desc.validate()
    gather = separable_gather(desc)
    assert [t.tolist() for t in gather.coordinates] == [
        [[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 0, 0], [1, 0, 0], [2, 0, 0]],
        [[0, 0, 0]] * 5,
        [[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 0, 3]],
    ]
    assert not any(p.any() for p in gather.padding) and gather.fill is None


@pytest.mark.parametrize(("dtype", "seed", "layout"), TILE_CASES)
def test_tile_tables_read_what_the_reference_reads(dtype: str, seed: int, layout: str) -> None:
    """The tables' logical gather, and their element offsets into a buffer laid out by the desc's
    strides, against the reference's ``np.tile`` (which reads that buffer through the same strides)."""
    desc, sizes = tile_case(dtype, seed, layout)
    rng = rng_for("tile-values", dtype, seed, layout)
    strides = list(desc.input_tensor.strides or transposed(sizes[::-1])[::-1])
    flat = values(np.dtype(desc.input_tensor.dtype), (span(sizes, strides),), rng)
    want = dmlops.execute(desc, {"InputTensor": flat})["OutputTensor"]
    gather = separable_gather(desc)
    logical = np.lib.stride_tricks.as_strided(flat, sizes, [s * flat.itemsize for s in strides])
    np.testing.assert_array_equal(bits(gather_with_numpy(gather, logical, want.dtype)), bits(want))
    offsets = gather.element_offsets(tuple(strides))
    index = sum(np.ix_(*offsets)) if offsets else np.zeros((), dtype=np.int64)
    np.testing.assert_array_equal(bits(flat[index]), bits(want))


def _tile_on_cuda(backend: str, desc: Any, x: Any, outputs: Any = None) -> np.ndarray:
    return to_numpy(dmlops.execute(desc, {"InputTensor": x}, backend=backend, outputs=outputs)["OutputTensor"])


@pytest.mark.parametrize("backend", backend_params("cuda"), indirect=True)
@pytest.mark.parametrize("as_gather", [True, False], ids=["gather", "copy_program"])
@pytest.mark.parametrize(("dtype", "seed", "layout"), TILE_CASES)
def test_cuda_tile_matches_the_reference(
    backend: str, dtype: str, seed: int, layout: str, as_gather: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table path, and the copy program it replaced (still the path of Repeats all 1: its
    steps of up to 16 iteration axes split where they do not collapse)."""
    from dmlops.cuda import _table_copy

    monkeypatch.setattr(_table_copy, "TILE_AS_GATHER", as_gather)
    desc, sizes = tile_case(dtype, seed, layout)
    x = values(np.dtype(desc.input_tensor.dtype), tuple(sizes), rng_for("tile-values", dtype, seed, layout))
    want = dmlops.execute(desc, {"InputTensor": x})["OutputTensor"]
    np.testing.assert_array_equal(bits(_tile_on_cuda(backend, desc, x)), bits(want))


@pytest.mark.parametrize("backend", backend_params("cuda"), indirect=True)
@pytest.mark.parametrize(
    "layout", ["reversed", "transposed", "broadcast", "flat_strided", "strided_output", "wide_rows", "rows_of_one"]
)
def test_cuda_tile_layouts(backend: str, layout: str) -> None:
    """Device input views of any strides, desc strides over a flat buffer, an output written only where addressed."""
    import cupy as cp

    rng = rng_for("tile-layout", layout)
    sizes, repeats = {"wide_rows": ([2, 700], [2, 3]), "rows_of_one": ([5, 3, 1], [2, 1, 1])}.get(
        layout, ([4, 3, 5], [2, 3, 2])
    )
    base = cp.asarray(values(np.dtype(np.float16), (6, 7, 8), rng))
    x = {
        "reversed": lambda: base[::-1, ::-2, ::-1][:4, :3, :5],
        "transposed": lambda: base.transpose(2, 0, 1)[:4, :3, :5],
        "broadcast": lambda: cp.broadcast_to(base[:1, :3, :5], (4, 3, 5)),
        "flat_strided": lambda: base.ravel()[: span(sizes, [1, 4, 12])],
        "strided_output": lambda: base[:4, :3, :5],
    }.get(layout, lambda: cp.asarray(values(np.dtype(np.float16), tuple(sizes), rng)))()
    out_sizes = [n * r for n, r in zip(sizes, repeats)]
    body: dict[str, Any] = {
        "InputTensor": {"DataType": "FLOAT16", "Sizes": sizes},
        "OutputTensor": {"DataType": "FLOAT16", "Sizes": out_sizes},
        "Repeats": repeats,
    }
    if layout == "flat_strided":
        body["InputTensor"]["Strides"] = [1, 4, 12]
    outputs = None
    out_strides = [200, 20, 2]
    room = span(out_sizes, out_strides) + 7
    if layout == "strided_output":
        body["OutputTensor"]["Strides"] = out_strides
        body["OutputTensor"]["TotalTensorSizeInBytes"] = 2 * room
        flat = cp.full(room, 1234.0, dtype=cp.float16)
        outputs = {"OutputTensor": flat}
    desc = desc_from_json("TILE", body)
    desc.validate()
    want = dmlops.execute(desc, {"InputTensor": cp.asnumpy(x)})["OutputTensor"]
    got = _tile_on_cuda(backend, desc, x, outputs)
    if outputs is None:
        np.testing.assert_array_equal(bits(got), bits(want))
        return
    host = cp.asnumpy(flat)
    np.testing.assert_array_equal(
        bits(np.lib.stride_tricks.as_strided(host, out_sizes, [2 * s for s in out_strides]).copy()), bits(want)
    )
    written = np.zeros(host.size, dtype=bool)
    np.lib.stride_tricks.as_strided(written, out_sizes, out_strides)[...] = True
    assert (host[~written] == 1234.0).all()  # nothing else touched


@pytest.mark.parametrize("backend", backend_params("cuda"), indirect=True)
@pytest.mark.parametrize("route", ["gather", "all_ones", "switched_off"])
def test_cuda_tile_routes(backend: str, route: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """TILE runs from its tables; a TILE of Repeats 1 (a copy), or TILE_AS_GATHER off, runs its copy program."""
    from dmlops.cuda import _table_copy
    from dmlops.cuda import data_movement as dm

    taken: list[str] = []
    for name in ("run_separable_gather", "run_copy_program"):
        real = getattr(dm, name)
        monkeypatch.setattr(dm, name, lambda *a, _real=real, _name=name, **k: (taken.append(_name), _real(*a, **k))[1])
    if route == "switched_off":
        monkeypatch.setattr(_table_copy, "TILE_AS_GATHER", False)
    sizes, repeats = [3, 4, 5], ([1, 1, 1] if route == "all_ones" else [2, 1, 3])
    desc = desc_from_json(
        "TILE",
        {
            "InputTensor": {"DataType": "INT32", "Sizes": sizes},
            "OutputTensor": {"DataType": "INT32", "Sizes": [n * r for n, r in zip(sizes, repeats)]},
            "Repeats": repeats,
        },
    )
    desc.validate()
    x = values(np.dtype(np.int32), tuple(sizes), rng_for("tile-route", route))
    want = dmlops.execute(desc, {"InputTensor": x})["OutputTensor"]
    np.testing.assert_array_equal(_tile_on_cuda(backend, desc, x), want)
    assert taken == ["run_separable_gather" if route == "gather" else "run_copy_program"]


@pytest.mark.parametrize("backend", backend_params("cpu"), indirect=True)
@pytest.mark.parametrize(("dtype", "seed", "layout"), TILE_CASES)
def test_cpu_tile_matches_the_reference(backend: str, dtype: str, seed: int, layout: str) -> None:
    desc, sizes = tile_case(dtype, seed, layout)
    x = values(np.dtype(desc.input_tensor.dtype), tuple(sizes), rng_for("cpu-tile-values", dtype, seed, layout))
    want = dmlops.execute(desc, {"InputTensor": x})["OutputTensor"]
    got = dmlops.execute(desc, {"InputTensor": x}, backend=backend)["OutputTensor"]
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("backend", backend_params("cpu"), indirect=True)
@pytest.mark.parametrize("op", ["PADDING", "TILE"])
@pytest.mark.parametrize(
    "layout", ["reversed", "transposed", "broadcast", "strided_rows", "gapped_rows", "columns", "aliased"]
)
def test_cpu_layouts(backend: str, op: str, layout: str) -> None:
    """Input views of any strides; outputs whose rows are contiguous but not adjacent (the row
    kernel), outputs whose last axis is strided and outputs that overlap the input (the copy
    program): the elements outside the output view are left alone."""
    rng = rng_for("cpu-layout", op, layout)
    base = values(np.dtype(np.float32), (6, 7, 40), rng)
    x = {
        "reversed": lambda: base[::-1, ::-2, ::-1][:4, :3, :33],
        "transposed": lambda: base.transpose(1, 0, 2)[:4, :3, :33],
        "broadcast": lambda: np.broadcast_to(base[:1, :3, :33], (4, 3, 33)),
    }.get(layout, lambda: base[:4, :3, :33].copy())()
    if op == "PADDING":
        body: dict[str, Any] = {"PaddingMode": "REFLECTION", "PaddingValue": 0.0}
        body |= {"StartPadding": [1, 2, 5], "EndPadding": [0, 1, 7]}
        out_sizes = [5, 6, 45]
    else:
        body = {"Repeats": [2, 1, 3]}
        out_sizes = [8, 3, 99]
    desc = desc_from_json(
        op,
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [4, 3, 33]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": out_sizes},
            **body,
        },
    )
    desc.validate()
    want = dmlops.execute(desc, {"InputTensor": np.ascontiguousarray(x)})["OutputTensor"]
    room = np.full((16, 14, 2 * out_sizes[2] + 3), -5.5, np.float32)
    out = {
        "strided_rows": lambda: room[: out_sizes[0], 1 : 1 + out_sizes[1], 3 : 3 + out_sizes[2]],
        "gapped_rows": lambda: room[::2, ::2][: out_sizes[0], : out_sizes[1], : out_sizes[2]],
        "columns": lambda: room[: out_sizes[0], : out_sizes[1], ::2][..., : out_sizes[2]],
    }.get(layout, lambda: np.empty(out_sizes, np.float32))()
    if layout == "aliased":  # the output overlaps the input's memory: the copy program's buffered copies
        x = room[: out_sizes[0], : out_sizes[1], : out_sizes[2]][:4, :3, :33]
        x[...] = values(np.dtype(np.float32), (4, 3, 33), rng)
        want = dmlops.execute(desc, {"InputTensor": x.copy()})["OutputTensor"]
        out = room[: out_sizes[0], : out_sizes[1], : out_sizes[2]]
    before = room.copy()
    from dmlops.cpu import data_movement

    ran: list[bool] = []
    real = data_movement._separable_rows

    def spy(*args: Any) -> Any:
        ran.append(True)
        return real(*args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(data_movement, "_separable_rows", spy)
        dmlops.execute(desc, {"InputTensor": x}, backend=backend, outputs={"OutputTensor": out})
    np.testing.assert_array_equal(bits(out), bits(want))
    # the row kernel serves outputs with contiguous rows; a strided last axis or an overlap keeps the copy program
    assert bool(ran) == (layout not in ("columns", "aliased"))
    if np.shares_memory(out, room):  # nothing outside the output view touched
        written = np.zeros(room.size, bool)
        first = (out.__array_interface__["data"][0] - room.__array_interface__["data"][0]) // 4
        element_strides = [s // 4 for s in out.strides]
        np.lib.stride_tricks.as_strided(written[first:], out.shape, element_strides)[...] = True
        untouched = ~written.reshape(room.shape)
        assert np.array_equal(bits(room[untouched]), bits(before[untouched]))
