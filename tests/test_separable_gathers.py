"""PADDING(1), DEPTH_TO_SPACE(1) and SPACE_TO_DEPTH(1) as separable gathers (descs/_separable_gathers.py).

The tables are checked against the NumPy reference's own formulas on every mode, order,
block size and data type (through ``gather_with_numpy``, which states what a table
means); then the cuda backend, which runs these operators from the tables
(cuda/_table_copy.py), against the reference, bit for bit, on strided, reversed and
broadcast inputs, strided outputs, FLOAT16 NaN payloads and 64-bit types.
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
    }


@pytest.mark.parametrize(("kind", "op", "variant", "dtype", "n"), cases())
def test_tables_read_what_the_reference_reads(kind: str, op: str, variant: str, dtype: str, n: int) -> None:
    desc, x = build(kind, op, variant, dtype, n)
    desc.validate()
    want = dmlops.execute(desc, {"InputTensor": x})["OutputTensor"]
    got = gather_with_numpy(separable_gather(desc), x, want.dtype)
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("backend", backend_params("cuda"), indirect=True)
@pytest.mark.parametrize(("kind", "op", "variant", "dtype", "n"), cases())
def test_cuda_matches_the_reference(backend: str, kind: str, op: str, variant: str, dtype: str, n: int) -> None:
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
