"""The data movement family's NumPy reference against the real DirectML (numpy vs directml).

A seeded differential fuzz per generic operator (``CAMPAIGN``): random descs (ranks 1
to 5, last dimensions mostly not divisible by 4, every data type this stack runs, every
mode enum value, strided and broadcast inputs, strided outputs), adversarial values
(NaN, +-inf, +-0, halves, integer extremes) and a share of invalid descs. A desc dmlops
rejects (``validate``, with :func:`~dmlops.descs.data_movement.validate_generic`) must be
rejected by DirectML's CreateOperator too, and one it accepts must be accepted; results
compare bit for bit. CAST's float-to-integer results that are lavapipe's conversion (NaN
and out-of-range values, see ``stack_conversion``) are left out, and cases DirectML
cannot compile here (DirectMLStackLimitError) are skipped.

``DMLOPS_DATA_MOVEMENT_CASES`` sets the cases per operator (default 12; the local
campaign ran 500).
"""

from __future__ import annotations

import dataclasses
import os
import zlib
from typing import Any

import numpy as np
import pytest
from _directml import directml, run_on_directml  # noqa: F401  (fixture)

import dmlops
from dmlops.descs import desc_from_json
from dmlops.descs.data_movement import GENERIC_OPERATORS, slice_grad_positions
from dmlops.descs.generic import GenericDesc
from dmlops.directml import create_operator
from dmlops.errors import DirectMLRejectedDescError, InvalidDescError
from dmlops.tensor import TensorDesc

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

CASES = int(os.environ.get("DMLOPS_DATA_MOVEMENT_CASES", "12"))
RUNNABLE = ("FLOAT32", "FLOAT64", "INT8", "UINT8", "INT32", "UINT32", "INT64", "UINT64")
"""The data types this stack runs (FLOAT16, INT16 and UINT16 are refused here)."""
NARROW = ("FLOAT32", "INT8", "UINT8", "INT32", "UINT32")
FILL_TYPES = NARROW
MODES = ("CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC", "WRAP")


# -- values ----------------------------------------------------------------------------


def values(dtype_name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random values of a type, a third of them adversarial (NaN, inf, halves, extremes)."""
    dtype = np.dtype(dtype_name.lower())
    n = int(np.prod(shape))
    if dtype.kind == "f":
        base = rng.normal(0, 100, n)
        special = np.array(
            [
                np.nan,
                -np.nan,
                np.inf,
                -np.inf,
                0.0,
                -0.0,
                0.5,
                -0.5,
                1.5,
                -2.5,
                127.5,
                128.0,
                -128.5,
                -129.0,
                255.5,
                256.0,
                -1.0,
                2.0**31,
                -(2.0**31) - 256,
                2.0**32,
                2.0**32 - 256,
                2.0**63,
                2.0**64,
                -(2.0**63) * 1.5,
                1e-45,
                3.4e38,
                16777217.0,
                0.49999997,
                -0.99999994,
                65535.5,
            ]
        )
        pick = rng.random(n) < 0.35
        base[pick] = rng.choice(special, int(pick.sum()))
        out: np.ndarray = base.astype(dtype)
        return out.reshape(shape)
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    special_ints = [
        lo,
        hi,
        0,
        1,
        -1,
        lo + 1,
        hi - 1,
        127,
        128,
        255,
        256,
        -128,
        -129,
        2**31 - 1,
        2**31,
        2**32 - 1,
        2**24 + 1,
        2**53 + 1,
        2**63 - 1,
    ]
    special_ints = [v for v in special_ints if lo <= v <= hi]
    base_ints = rng.integers(lo, hi, n, dtype=dtype, endpoint=True)
    pick = rng.random(n) < 0.35
    base_ints[pick] = rng.choice(np.array(special_ints, dtype=dtype), int(pick.sum()))
    return base_ints.reshape(shape)


def _sizes(rng: np.random.Generator, rank: int, high: int = 6) -> list[int]:
    sizes = [int(v) for v in rng.integers(1, high, rank)]
    if rng.random() < 0.8 and sizes[-1] % 4 == 0:
        sizes[-1] += 1
    return sizes


def _t(dtype: str, sizes: list[int]) -> dict[str, Any]:
    return {"DataType": dtype, "Sizes": list(sizes)}


# -- descs -----------------------------------------------------------------------------


def make_desc(op: str, rng: np.random.Generator) -> dict[str, Any]:
    """A random DxDispatch-shaped desc of ``op``, invalid about one time in eight."""
    rank = int(rng.integers(1, 6))
    dt = str(rng.choice(RUNNABLE))
    bad = rng.random() < 0.125
    if op == "CAST":
        sizes = _sizes(rng, rank)
        out = list(sizes)
        if bad:
            out[-1] += 1
        # casts from or to 64-bit types do not compile on this stack: one in five draws them
        types = RUNNABLE if rng.random() < 0.2 else NARROW
        src, dst = str(rng.choice(types)), str(rng.choice(types))
        return {"InputTensor": _t(src, sizes), "OutputTensor": _t(dst, out)}
    if op == "SLICE":
        sizes = _sizes(rng, rank, 9)
        offsets, window, strides = [], [], []
        for n in sizes:
            stride = int(rng.integers(1, 4))
            size = int(rng.integers(1, (n - 1) // stride + 2))
            offsets.append(int(rng.integers(0, n - (size - 1) * stride)))
            window.append(size)
            strides.append(stride)
        out = list(window)
        if bad:
            i = int(rng.integers(rank))
            kind = int(rng.integers(4))
            if kind == 0:
                offsets[i] = sizes[i] - (window[i] - 1) * strides[i]  # the last read one past the end
            elif kind == 1:
                strides[i] = 0
            elif kind == 2:
                out[i] += 1
            else:
                strides[i] = 2**31
        return {
            "InputTensor": _t(dt, sizes),
            "OutputTensor": _t(dt, out),
            "Offsets": offsets,
            "Sizes": window,
            "Strides": strides,
        }
    if op in ("JOIN", "SPLIT"):
        sizes = _sizes(rng, rank)
        axis = int(rng.integers(rank))
        count = int(rng.integers(1, 5))
        parts = []
        for _ in range(count):
            p = list(sizes)
            p[axis] = int(rng.integers(1, 5))
            parts.append(p)
        whole = list(sizes)
        whole[axis] = sum(p[axis] for p in parts)
        if bad:
            kind = int(rng.integers(3))
            if kind == 0:
                whole[axis] += 1
            elif kind == 1:
                axis = rank
            else:
                parts[-1][(axis + 1) % rank] += 1 if rank > 1 else 0
                whole[axis] += 0 if rank > 1 else 1
        tensors = [_t(dt, p) for p in parts]
        if op == "JOIN":
            return {"InputTensors": tensors, "OutputTensor": _t(dt, whole), "Axis": axis}
        return {"InputTensor": _t(dt, whole), "OutputTensors": tensors, "Axis": axis}
    if op in ("PADDING", "PADDING1"):
        sizes = _sizes(rng, rank)
        mode = str(rng.choice(MODES))
        start = [int(rng.integers(0, 2 * n + 2)) if rng.random() < 0.7 else 0 for n in sizes]
        end = [int(rng.integers(0, 2 * n + 2)) if rng.random() < 0.7 else 0 for n in sizes]
        out = [n + s + e for n, s, e in zip(sizes, start, end)]
        desc: dict[str, Any] = {"PaddingMode": mode, "StartPadding": start, "EndPadding": end}
        if op == "PADDING":
            desc["PaddingValue"] = float(values("FLOAT32", (1,), rng)[0])
        else:
            desc["PaddingValueDataType"] = dt
            v = values(dt, (1,), rng)[0]
            desc["PaddingValue"] = float(v) if v.dtype.kind == "f" else int(v)
        if bad:
            if op == "PADDING1" and rng.random() < 0.5:
                other = str(
                    rng.choice([t for t in RUNNABLE if t != dt and t.startswith("FLOAT") == dt.startswith("FLOAT")])
                )
                desc["PaddingValueDataType"] = other
                desc["PaddingValue"] = 1.0 if other.startswith("FLOAT") else 1
            else:
                out[int(rng.integers(rank))] += 1
        return {"InputTensor": _t(dt, sizes), "OutputTensor": _t(dt, out), **desc}
    if op == "TILE":
        sizes = _sizes(rng, rank)
        repeats = [int(rng.integers(1, 4)) for _ in sizes]
        out = [n * r for n, r in zip(sizes, repeats)]
        if bad:
            i = int(rng.integers(rank))
            if rng.random() < 0.5:
                repeats[i] = 0
                out[i] = sizes[i]
            else:
                out[i] += 1
        return {"InputTensor": _t(dt, sizes), "OutputTensor": _t(dt, out), "Repeats": repeats}
    if op.startswith("FILL_VALUE"):
        # the types the page's (and dmlops's) support row names; DirectML also accepts 64-bit ones
        dt = str(rng.choice(FILL_TYPES))
        sizes = _sizes(rng, rank, 8)
        desc = {"OutputTensor": _t(dt, sizes), "ValueDataType": dt}
        members = ["Value"] if op == "FILL_VALUE_CONSTANT" else ["ValueStart", "ValueDelta"]
        for m in members:
            v = values(dt, (1,), rng)[0]
            desc[m] = float(v) if v.dtype.kind == "f" else int(v)
        if bad:
            other = str(rng.choice([t for t in FILL_TYPES if t != dt]))
            desc["ValueDataType"] = other
            for m in members:
                desc[m] = 1.0 if other.startswith("FLOAT") else 1
        return desc
    if op.startswith(("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")):
        b = int(rng.integers(1, 4))
        n, c, h, w = (int(v) for v in rng.integers(1, 4, 4))
        if op.startswith("DEPTH_TO_SPACE"):
            in_sizes, out_sizes = [n, c * b * b, h, w], [n, c, h * b, w * b]
        else:
            in_sizes, out_sizes = [n, c, h * b, w * b], [n, c * b * b, h, w]
        if bad:
            kind = int(rng.integers(3))
            if kind == 0:
                b = 0
            elif kind == 1:
                out_sizes[int(rng.integers(1, 4))] += 1
            else:
                in_sizes[1 if op.startswith("DEPTH") else 3] += 1
                b = max(b, 2)
        desc = {"InputTensor": _t(dt, in_sizes), "OutputTensor": _t(dt, out_sizes), "BlockSize": b}
        if op.endswith("1"):
            desc["Order"] = str(rng.choice(["DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH"]))
        return desc
    if op == "SLICE_GRAD":
        og = _sizes(rng, rank, 9)
        offsets, window, strides, ig = [], [], [], []
        for n in og:
            stride = int(rng.integers(1, 4)) * (1 if rng.random() < 0.5 else -1)
            off = int(rng.integers(0, n))
            size = int(rng.integers(0 if rng.random() < 0.1 else 1, n - off + 1))
            max_copied = 1 + (size - 1) // abs(stride) if size else 1
            # DirectML's bound: Offsets + (ig - 1) * |stride| < n, beyond SLICE1's MaxCopiedElements
            reach = (n - 1 - off) // abs(stride) + 1
            m = int(rng.integers(1, (reach if rng.random() < 0.2 else min(max_copied, reach)) + 1))
            offsets.append(off)
            window.append(size)
            strides.append(stride)
            ig.append(m)
        if bad:
            i = int(rng.integers(rank))
            kind = int(rng.integers(3))
            if kind == 0:
                strides[i] = 0
            elif kind == 1:
                window[i] = og[i] - offsets[i] + 1
            else:
                ig[i] = (og[i] - 1 - offsets[i]) // abs(strides[i]) + 2
        return {
            "InputGradientTensor": _t(dt, ig),
            "OutputGradientTensor": _t(dt, og),
            "InputWindowOffsets": offsets,
            "InputWindowSizes": window,
            "InputWindowStrides": strides,
        }
    raise AssertionError(op)


def padded(t: TensorDesc, rng: np.random.Generator, *, broadcast: bool) -> TensorDesc:
    """``t`` stored through gapped strides (a size > 1 dimension broadcast when ``broadcast``)."""
    strides = [0] * len(t.sizes)
    step = int(rng.integers(1, 3))
    for i in range(len(t.sizes) - 1, -1, -1):
        strides[i] = step
        step = step * t.sizes[i] + int(rng.integers(0, 3))
    if broadcast:
        wide = [i for i, n in enumerate(t.sizes) if n > 1]
        if wide:
            strides[int(rng.choice(wide))] = 0
    return TensorDesc(data_type=t.data_type, sizes=t.sizes, strides=tuple(strides))


def _writes_before_start(desc: Any) -> bool:
    return any(p.size and p.min() < 0 for p in slice_grad_positions(desc))


def restride(desc: GenericDesc, rng: np.random.Generator, *, keep_output: bool = False) -> GenericDesc:
    """The desc with some tensors stored through gapped strides, inputs sometimes broadcast."""
    changes: dict[str, Any] = {}
    for info in desc.member_infos():
        value = getattr(desc, info.attr)
        is_input = info.kind.startswith("input")
        if keep_output and not is_input:
            continue
        if info.kind in ("input", "output") and value is not None and rng.random() < 0.6:
            changes[info.attr] = padded(value, rng, broadcast=is_input and rng.random() < 0.3)
        elif info.kind in ("input_array", "output_array"):
            changes[info.attr] = tuple(
                padded(t, rng, broadcast=is_input and rng.random() < 0.3) if rng.random() < 0.6 else t for t in value
            )
    out: GenericDesc = dataclasses.replace(desc, **changes)
    return out


def build(op: str, seed: int) -> tuple[GenericDesc | None, dict[str, Any] | None, dict[str, np.ndarray]]:
    """(desc or None when construction is refused, the JSON, seeded logical inputs)."""
    rng = np.random.default_rng(zlib.crc32(f"{op}-{seed}".encode()))
    raw = make_desc(op, rng)
    try:
        desc: GenericDesc = desc_from_json(op, raw)  # type: ignore[assignment]
    except InvalidDescError:
        return None, raw, {}
    if rng.random() < 0.5:
        # SLICE_GRAD's writes before an axis's start land at packed flat addresses (measured
        # on packed outputs only): such a desc keeps its output packed
        desc = restride(desc, rng, keep_output=op == "SLICE_GRAD" and _writes_before_start(desc))
    inputs = {m: logical_input(t, rng) for m, t in desc.tensors("input").items()}
    return desc, raw, inputs


def logical_input(t: TensorDesc, rng: np.random.Generator) -> np.ndarray:
    """Seeded values for a tensor, the same along its broadcast (0-stride) dimensions."""
    x = values(t.data_type.name, t.sizes, rng)
    for axis, stride in enumerate(t.strides or ()):
        if stride == 0:
            x = np.broadcast_to(np.take(x, [0], axis=axis), x.shape)
    return np.ascontiguousarray(x)


def dmlops_accepts(desc: GenericDesc) -> bool:
    try:
        desc.validate()  # the operator's own rules included (descs.data_movement.validate_generic)
    except InvalidDescError:
        return False
    return True


def stack_conversion(x: np.ndarray, got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """CAST elements where DirectML's result is lavapipe's float-to-integer conversion, not D3D's.

    lavapipe gives INT_MIN for a NaN or >= 2^31 ``ftoi`` and 0xFFFFFFFF for a NaN or
    <= -1 ``ftou``, which CAST then saturates into the target type; D3D (and dmlops)
    give 0 for NaN and saturate the value itself.
    """
    if x.dtype.kind != "f" or got.dtype.kind == "f":
        return np.zeros(got.shape, dtype=bool)
    info = np.iinfo(got.dtype)
    with np.errstate(invalid="ignore"):
        if info.min < 0:
            odd = np.isnan(x) | (x >= 2.0**31)
            stack = np.full(got.shape, max(info.min, -(2**31)), dtype=got.dtype)
        else:
            odd = np.isnan(x) | (x <= -1)
            stack = np.full(got.shape, min(info.max, 2**32 - 1), dtype=got.dtype)
    mask: np.ndarray = np.broadcast_to(odd, got.shape) & (got == stack)
    return mask


def bits(a: np.ndarray) -> np.ndarray:
    """The element bit patterns, so that NaN payloads and -0 compare exactly."""
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


PARAMS = [
    pytest.param(op, seed, id=f"{op.lower()}-{seed}") for op in sorted(GENERIC_OPERATORS) for seed in range(CASES)
]


@pytest.mark.parametrize(("op", "seed"), PARAMS)
def test_reference_matches_directml(op: str, seed: int) -> None:
    desc, raw, inputs = build(op, seed)
    if desc is None:
        # refused while parsing/constructing: DirectML must refuse the same desc
        with pytest.raises(DirectMLRejectedDescError):
            create_operator(desc_from_json(op, raw or {}))
        return
    if not dmlops_accepts(desc):
        with pytest.raises(DirectMLRejectedDescError):
            create_operator(desc)
        return
    got = run_on_directml(desc, inputs)
    expected = dmlops.execute(desc, inputs, backend="numpy")
    assert set(got) == set(expected)
    for member, want in expected.items():
        have = got[member]
        assert have.dtype == want.dtype and have.shape == want.shape, member
        same = bits(have) == bits(want)
        if op == "CAST":
            same |= stack_conversion(inputs["InputTensor"], have, want)
        bad = np.flatnonzero(~same)
        if bad.size:
            shown = ", ".join(f"[{i}] numpy {want.flat[i]!r} directml {have.flat[i]!r}" for i in bad[:6])
            pytest.fail(f"{member}: {bad.size} of {have.size} elements differ: {shown}; desc {desc.to_dml_dict()}")


@pytest.mark.parametrize("dst", NARROW)
@pytest.mark.parametrize("src", NARROW)
def test_cast_every_pair_with_adversarial_values(src: str, dst: str) -> None:
    """Each pair of the types this stack casts: every special value, then 2000 seeded random ones."""
    rng = np.random.default_rng(zlib.crc32(f"cast-{src}-{dst}".encode()))
    x = values(src, (2003,), rng)  # 2003: not a multiple of 4
    desc = desc_from_json("CAST", {"InputTensor": _t(src, [2003]), "OutputTensor": _t(dst, [2003])})
    got = dmlops.execute(desc, {"InputTensor": x}, backend="directml")["OutputTensor"]
    want = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"]
    same = (bits(got) == bits(want)) | stack_conversion(x, got, want)
    bad = np.flatnonzero(~same)
    assert not bad.size, [(x[i], want[i], got[i]) for i in bad[:6]]
