"""The copy programs (``dmlops.descs._copy_programs``) on the cpu and cuda backends, bit for bit
against the NumPy reference, which computes the same operators by their own formulas.

Seeded random descs of SLICE, SLICE_GRAD, JOIN, SPLIT, TILE, PADDING(1) (every mode, padding wider
than the input), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1) and FILL_VALUE_CONSTANT over every
data type, with dense and strided (gapped) inputs and outputs.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import dmlops
from conftest import backend_params, to_numpy
from dmlops.descs import desc_from_json
from dmlops.descs._copy_programs import PROGRAMS, Copy, Fill, copy_program

TYPES = ("FLOAT32", "FLOAT16", "FLOAT64", "INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64")
MODES = ("CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC", "WRAP")
SEEDS = range(8)


def gapped(sizes: list[int]) -> list[int]:
    """Strides with a gap after every element and row: nothing contiguous."""
    strides, step = [0] * len(sizes), 2
    for i in range(len(sizes) - 1, -1, -1):
        strides[i], step = step, step * sizes[i] + 1
    return strides


def tensor(data_type: str, sizes: list[int], rng: np.random.Generator) -> dict[str, Any]:
    t: dict[str, Any] = {"DataType": data_type, "Sizes": list(sizes)}
    if rng.random() < 0.4:
        t["Strides"] = gapped(sizes)
    return t


def _sizes(rng: np.random.Generator, rank: int) -> list[int]:
    return [int(v) for v in rng.integers(1, 6, rank)]


def make(op: str, seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A random valid desc of ``op`` and its inputs (values: every bit pattern of the type)."""
    rng = np.random.default_rng(zlib.crc32(f"{op}-{seed}".encode()))
    dt = str(rng.choice(TYPES))
    rank = int(rng.integers(1, 6))
    sizes = _sizes(rng, rank)
    desc: dict[str, Any]
    if op == "SLICE":
        strides = [int(v) for v in rng.integers(1, 4, rank)]
        out = [int(rng.integers(1, (n - 1) // s + 2)) for n, s in zip(sizes, strides)]
        offsets = [int(rng.integers(0, n - (o - 1) * s)) for n, o, s in zip(sizes, out, strides)]
        desc = {"Offsets": offsets, "Sizes": out, "Strides": strides}
        desc |= {"InputTensor": tensor(dt, sizes, rng), "OutputTensor": tensor(dt, out, rng)}
    elif op == "SLICE_GRAD":  # every window position in range (the others: numpy and directml only)
        offsets, window, strides, grad = [], [], [], []
        for n in sizes:
            size = int(rng.integers(1, n + 1))
            stride = int(rng.choice([1, 2, 3, -1, -2])) if n > 1 else 1
            offsets.append(int(rng.integers(0, n - size + 1)))
            window.append(size)
            strides.append(stride)
            grad.append(-(-size // abs(stride)))
        desc = {"InputWindowOffsets": offsets, "InputWindowSizes": window, "InputWindowStrides": strides}
        desc |= {"InputGradientTensor": tensor(dt, grad, rng), "OutputGradientTensor": tensor(dt, sizes, rng)}
    elif op in ("JOIN", "SPLIT"):
        axis = int(rng.integers(0, rank))
        parts = [[*sizes[:axis], int(rng.integers(1, 4)), *sizes[axis + 1 :]] for _ in range(int(rng.integers(1, 4)))]
        joined = [*sizes[:axis], sum(p[axis] for p in parts), *sizes[axis + 1 :]]
        many = [tensor(dt, p, rng) for p in parts]
        desc = {"Axis": axis}
        if op == "JOIN":
            desc |= {"InputTensors": many, "OutputTensor": tensor(dt, joined, rng)}
        else:
            desc |= {"InputTensor": tensor(dt, joined, rng), "OutputTensors": many}
    elif op == "TILE":
        repeats = [int(v) for v in rng.integers(1, 4, rank)]
        out = [n * r for n, r in zip(sizes, repeats)]
        desc = {"InputTensor": tensor(dt, sizes, rng), "OutputTensor": tensor(dt, out, rng), "Repeats": repeats}
    elif op in ("PADDING", "PADDING1"):
        start = [int(v) for v in rng.integers(0, 7, rank)]
        end = [int(v) for v in rng.integers(0, 7, rank)]
        out = [n + s + e for n, s, e in zip(sizes, start, end)]
        desc = {"InputTensor": tensor(dt, sizes, rng), "OutputTensor": tensor(dt, out, rng)}
        desc |= {"PaddingMode": str(rng.choice(MODES)), "StartPadding": start, "EndPadding": end}
        value = float(rng.choice([-1.5, 7.0, 300.25, np.nan]))
        if op == "PADDING":
            desc["PaddingValue"] = value
        else:
            kind = np.dtype(dt.lower())
            desc["PaddingValueDataType"] = dt
            desc["PaddingValue"] = 7.0 if kind.kind == "f" else int(np.iinfo(kind).max) - 3
    elif op in ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1"):
        b = int(rng.integers(1, 4))
        n, c, h, w = _sizes(rng, 4)
        deep, shallow = [n, c * b * b, h, w], [n, c, h * b, w * b]
        into, out = (deep, shallow) if op.startswith("DEPTH") else (shallow, deep)
        desc = {"InputTensor": tensor(dt, into, rng), "OutputTensor": tensor(dt, out, rng), "BlockSize": b}
        if op.endswith("1"):
            desc["Order"] = str(rng.choice(["DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH"]))
    else:  # FILL_VALUE_CONSTANT
        kind = np.dtype(dt.lower())
        value = -2.75 if kind.kind == "f" else int(np.iinfo(kind).min) + 5
        desc = {"OutputTensor": tensor(dt, sizes, rng), "ValueDataType": dt, "Value": value}
    built = desc_from_json(op, desc)
    inputs = {}
    for member, t in built.tensors("input").items():
        raw = rng.integers(0, 256, t.element_count * t.dtype.itemsize, dtype=np.uint8)
        inputs[member] = raw.view(t.dtype).reshape(t.sizes)
    return desc, inputs


PARAMS = [pytest.param(op, seed, id=f"{op.lower()}-{seed}") for op in PROGRAMS for seed in SEEDS]


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
@pytest.mark.parametrize(("op", "seed"), PARAMS)
def test_backend_runs_the_program_as_the_reference_computes(backend: str, op: str, seed: int) -> None:
    desc_json, inputs = make(op, seed)
    desc = desc_from_json(op, desc_json)
    desc.validate()
    expected = dmlops.execute(desc, inputs)
    got = dmlops.execute(desc, inputs, backend=backend)
    assert set(got) == set(expected)
    for member, want in expected.items():
        have = to_numpy(got[member])
        assert have.dtype == want.dtype and have.shape == want.shape
        bits = np.dtype(f"u{want.dtype.itemsize}")
        differ = np.flatnonzero(have.view(bits) != want.view(bits))
        assert differ.size == 0, f"{member}: {differ.size} elements differ, first at {differ[:5]}"


def test_padding_folds_wide_pads_into_runs_of_the_output_itself() -> None:
    desc = desc_from_json(
        "PADDING1",
        {
            "InputTensor": {"DataType": "INT32", "Sizes": [3, 4]},
            "OutputTensor": {"DataType": "INT32", "Sizes": [3, 15]},
            "PaddingMode": "REFLECTION",
            "PaddingValueDataType": "INT32",
            "PaddingValue": 0,
            "StartPadding": [0, 5],
            "EndPadding": [0, 6],
        },
    )
    steps = copy_program(desc)
    assert isinstance(steps[0], Copy) and steps[0].src.member == "InputTensor"
    # reflection of 4 columns has period 6: 5 columns before, 6 after, in runs of steps -1 and +1
    pads = steps[1:]
    assert all(isinstance(s, Copy) and s.src.member == "OutputTensor" for s in pads)
    assert sum(s.sizes[1] for s in pads) == 11
    assert {s.src.matrix[1][1] for s in pads} == {-1, 1}


def test_constant_padding_and_fills_are_fill_steps() -> None:
    desc = desc_from_json(
        "PADDING",
        {
            "InputTensor": {"DataType": "INT8", "Sizes": [2, 2]},
            "OutputTensor": {"DataType": "INT8", "Sizes": [4, 3]},
            "PaddingMode": "CONSTANT",
            "PaddingValue": 177.9,
            "StartPadding": [1, 0],
            "EndPadding": [1, 1],
        },
    )
    fills = [s for s in copy_program(desc) if isinstance(s, Fill)]
    assert [s.sizes for s in fills] == [(1, 2), (1, 2), (4, 1)]
    assert all(s.value == np.int8(-79) for s in fills)  # 177 wrapped, as DirectML converts (E-padding value)


def test_slice_grad_positions_before_the_axis_are_left_to_numpy_and_directml() -> None:
    body = {
        "InputGradientTensor": {"DataType": "FLOAT32", "Sizes": [3]},
        "OutputGradientTensor": {"DataType": "FLOAT32", "Sizes": [4]},
        "InputWindowOffsets": [0],
        "InputWindowSizes": [2],
        "InputWindowStrides": [-1],
    }
    desc = desc_from_json("SLICE_GRAD", body)
    desc.validate()  # positions 1, 0, -1: DirectML writes the last at a flat address (the reference too)
    with pytest.raises(dmlops.UnsupportedError, match="numpy and directml"):
        copy_program(desc)


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
def test_tile_of_eight_dimensions(backend: str) -> None:
    """Sixteen iteration axes that do not collapse (repeat and element per axis): the cpu copy
    program and cuda's tables (TILE runs from them on cuda; its copy program's step splitting
    is tested through the Repeats-all-1 route and the copy-program tests)."""
    body = {
        "InputTensor": {"DataType": "INT16", "Sizes": [2, 1, 2, 2, 1, 2, 2, 3]},
        "OutputTensor": {"DataType": "INT16", "Sizes": [4, 2, 2, 4, 3, 2, 4, 3]},
        "Repeats": [2, 2, 1, 2, 3, 1, 2, 1],
    }
    desc = desc_from_json("TILE", body)
    desc.validate()
    x = np.arange(96, dtype=np.int16).reshape(2, 1, 2, 2, 1, 2, 2, 3)
    want = dmlops.execute(desc, {"InputTensor": x})["OutputTensor"]
    np.testing.assert_array_equal(
        to_numpy(dmlops.execute(desc, {"InputTensor": x}, backend=backend)["OutputTensor"]), want
    )
