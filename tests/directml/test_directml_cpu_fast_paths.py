"""The cpu backend's fast paths of this family against the real DirectML (cpu vs directml), bit for bit.

The streamed and vectorised paths serve large tensors only; here their thresholds are lowered
so that small cases take them: CAST's vector conversions (FLOAT32 to INT8 and UINT8; FLOAT16
and the 16-bit integers do not run on this stack), the row copies of JOIN and SPLIT, the
separable-row kernel of PADDING(1) and TILE, and MAX_POOLING2's interior row scan (ties, NaN,
-inf, dilation, indices). CAST's elements that are lavapipe's own float-to-integer conversion
(NaN and values outside the target's range; docs/errata.md, after E55) are left out.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from _directml import directml  # noqa: F401  (fixture)

import dmlops
from dmlops.descs import desc_from_json

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml"), pytest.mark.cpu_backend]
pytest.importorskip("numba")


@pytest.fixture(autouse=True)
def fast_paths_for_small_tensors(monkeypatch: pytest.MonkeyPatch) -> None:
    from dmlops.cpu import _stream

    monkeypatch.setattr(_stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(_stream, "COPY_MIN_ROW", 8)


def t(data_type: str, sizes: Any) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


def same_as_directml(op: str, body: dict[str, Any], inputs: dict[str, np.ndarray]) -> None:
    desc = desc_from_json(op, body)
    desc.validate()
    want = dmlops.execute(desc, inputs, backend="directml")
    got = dmlops.execute(desc, inputs, backend="cpu")
    for member, w in want.items():
        g, w = np.asarray(got[member]), np.asarray(w)
        bits = f"u{w.dtype.itemsize}"
        differ = np.flatnonzero(g.reshape(-1).view(bits) != w.reshape(-1).view(bits))
        assert differ.size == 0, f"{op} {member}: {differ.size} differ, first {differ[:5]}"


@pytest.mark.parametrize(("target", "lo", "hi"), [("INT8", -128, 127), ("UINT8", 0, 255)])
def test_cast_vector_conversion(target: str, lo: int, hi: int) -> None:
    rng = np.random.default_rng(hi)
    edges = [b + d for b in (lo, hi, 0) for d in (-0.99, -0.5, -0.0, 0.0, 0.5, 0.99)]
    x = np.concatenate([np.array(edges, np.float32), rng.uniform(lo - 0.99, hi + 0.99, 3001).astype(np.float32)])
    x = x[(x > lo - 1) & (x < hi + 1)]  # in range after truncation (see the module docstring)
    same_as_directml(
        "CAST", {"InputTensor": t("FLOAT32", [x.size]), "OutputTensor": t(target, [x.size])}, {"InputTensor": x}
    )


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_join_and_split_row_copies(axis: int) -> None:
    rng = np.random.default_rng(axis)
    a, b = (rng.standard_normal((3, 5, 77)).astype(np.float32) for _ in range(2))
    joined = [3, 5, 77]
    joined[axis] *= 2
    parts = [t("FLOAT32", a.shape), t("FLOAT32", b.shape)]
    same_as_directml(
        "JOIN",
        {"InputTensors": parts, "OutputTensor": t("FLOAT32", joined), "Axis": axis},
        {"InputTensors[0]": a, "InputTensors[1]": b},
    )
    y = rng.standard_normal(joined).astype(np.float32)
    same_as_directml(
        "SPLIT", {"InputTensor": t("FLOAT32", joined), "OutputTensors": parts, "Axis": axis}, {"InputTensor": y}
    )


@pytest.mark.parametrize(
    ("op", "mode"), list(itertools.product(("PADDING", "PADDING1"), ("CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC")))
)
@pytest.mark.parametrize("data_type", ["FLOAT32", "INT8", "UINT32"])
def test_padding_rows(op: str, mode: str, data_type: str) -> None:
    x = np.random.default_rng(len(mode)).integers(-100, 100, (2, 3, 5, 37)).astype(data_type.lower())
    body: dict[str, Any] = {
        "InputTensor": t(data_type, x.shape),
        "OutputTensor": t(data_type, (2, 4, 8, 45)),
        "PaddingMode": mode,
        "StartPadding": [0, 1, 2, 4],
        "EndPadding": [0, 0, 1, 4],
    }
    body |= {"PaddingValue": -7.0} if op == "PADDING" else {"PaddingValueDataType": data_type, "PaddingValue": 9}
    same_as_directml(op, body, {"InputTensor": x})


@pytest.mark.parametrize("data_type", ["FLOAT32", "INT8", "UINT32"])
def test_tile_rows(data_type: str) -> None:
    x = np.random.default_rng(7).integers(0, 200, (2, 3, 33)).astype(data_type.lower())
    body = {"InputTensor": t(data_type, x.shape), "OutputTensor": t(data_type, (4, 3, 99)), "Repeats": [2, 1, 3]}
    same_as_directml("TILE", body, {"InputTensor": x})


@pytest.mark.parametrize(("stride", "window", "dilation", "pad"), [(2, 3, 1, 1), (1, 2, 1, 0), (3, 3, 2, 2)])
@pytest.mark.parametrize("data_type", ["FLOAT32", "INT8"])
def test_max_pooling_interior_rows(stride: int, window: int, dilation: int, pad: int, data_type: str) -> None:
    rng = np.random.default_rng(stride * 10 + window)
    x = rng.integers(-3, 4, (1, 2, 9, 40)).astype(data_type.lower())  # small integers: many ties
    if data_type == "FLOAT32":
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 40)] = np.nan
        flat[rng.integers(0, flat.size, 10)] = -np.inf
    span = dilation * (window - 1) + 1
    out = (1, 2, (9 + 2 * pad - span) // stride + 1, (40 + 2 * pad - span) // stride + 1)
    body = {
        "InputTensor": t(data_type, x.shape),
        "OutputTensor": t(data_type, out),
        "OutputIndicesTensor": t("UINT32", out),
        "Strides": [stride] * 2,
        "WindowSize": [window] * 2,
        "StartPadding": [pad] * 2,
        "EndPadding": [pad] * 2,
        "Dilations": [dilation] * 2,
    }
    same_as_directml("MAX_POOLING2", body, {"InputTensor": x})
