"""Operators the cpu and cuda backends run as another operator's desc, against the reference.

RESAMPLE, RESAMPLE1 and UPSAMPLE_2D run as their RESAMPLE2 equivalent, RESAMPLE_GRAD as
its RESAMPLE_GRAD1 equivalent (``descs/resampling.py``), MAX_POOLING and MAX_POOLING1 as
their MAX_POOLING2 equivalent (``descs/pooling.py``). The NumPy reference computes the
same operators from the same rules; here seeded random descs (every mode, scales below,
at and above 1, pixel offsets, windows with padding and strides, the data types each
operator takes) compare each fast backend with it: bit for bit for pooling and NEAREST,
within the backends' float tolerance for LINEAR (conftest's ``assert_close``).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import dmlops
from conftest import assert_close, backend_params
from dmlops.descs import desc_from_json

OPERATORS = ("RESAMPLE", "RESAMPLE1", "UPSAMPLE_2D", "RESAMPLE_GRAD", "MAX_POOLING", "MAX_POOLING1")
SCALES = (0.5, 1.0, 1.5, 2.0, 3.0)
OFFSETS = (0.0, 0.5, -0.5, 0.25)


def _t(data_type: str, sizes: list[int]) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": sizes}


def make(op: str, seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A random valid desc of ``op`` and its inputs."""
    rng = np.random.default_rng(zlib.crc32(f"{op}-{seed}".encode()))
    pick = lambda values: values[int(rng.integers(0, len(values)))]  # noqa: E731
    sizes = [int(v) for v in rng.integers(1, 4, 2)] + [int(v) for v in rng.integers(2, 9, 2)]
    mode = pick(("NEAREST_NEIGHBOR", "LINEAR"))
    dt = pick(("FLOAT32", "FLOAT16"))
    desc: dict[str, Any]
    if op.startswith("MAX_POOLING"):
        dt = pick(("FLOAT32", "FLOAT16", "INT8", "UINT8")) if op == "MAX_POOLING1" else dt
        window = [int(v) for v in rng.integers(1, 4, 2)]
        strides = [int(v) for v in rng.integers(1, 3, 2)]
        start = [int(rng.integers(0, w)) for w in window]
        end = [int(rng.integers(0, w)) for w in window]
        out = [max(1, (n + s + e - w) // st + 1) for n, s, e, w, st in zip(sizes[2:], start, end, window, strides)]
        desc = {"InputTensor": _t(dt, sizes), "OutputTensor": _t(dt, sizes[:2] + out)}
        desc |= {"Strides": strides, "WindowSize": window, "StartPadding": start, "EndPadding": end}
        if op == "MAX_POOLING1":
            desc["OutputIndicesTensor"] = _t(pick(("UINT32", "UINT64")), sizes[:2] + out)
    elif op == "UPSAMPLE_2D":
        scale = {"Height": int(rng.integers(1, 4)), "Width": int(rng.integers(1, 4))}
        out = [*sizes[:2], sizes[2] * scale["Height"], sizes[3] * scale["Width"]]
        desc = {"InputTensor": _t(dt, sizes), "OutputTensor": _t(dt, out), "ScaleSize": scale}
        desc["InterpolationMode"] = mode
    else:
        scales = [1.0, 1.0, pick(SCALES), pick(SCALES)]
        out = [max(1, int(n * s)) for n, s in zip(sizes, scales)]
        if op == "RESAMPLE1" and mode == "NEAREST_NEIGHBOR":
            dt = pick(("FLOAT32", "FLOAT16", "INT8", "UINT8"))
        forward = {"InterpolationMode": mode, "Scales": scales}
        if op != "RESAMPLE":
            forward |= {"InputPixelOffsets": [pick(OFFSETS) for _ in range(4)]}
            forward |= {"OutputPixelOffsets": [pick(OFFSETS) for _ in range(4)]}
        if op == "RESAMPLE_GRAD":
            desc = {"InputGradientTensor": _t(dt, out), "OutputGradientTensor": _t(dt, sizes)} | forward
        else:
            desc = {"InputTensor": _t(dt, sizes), "OutputTensor": _t(dt, out)} | forward
    built = desc_from_json(op, desc)
    inputs: dict[str, np.ndarray] = {}
    for member, tensor in built.tensors("input").items():
        if tensor.dtype.kind == "f":
            x = np.round(rng.normal(0, 4, tensor.sizes) * 4) / 4  # quarters: ties and exact sums
        else:
            info = np.iinfo(tensor.dtype)
            x = rng.integers(info.min, info.max, tensor.sizes, endpoint=True)
        inputs[member] = x.astype(tensor.dtype)
    return desc, inputs


PARAMS = [pytest.param(op, seed, id=f"{op.lower()}-{seed}") for op in OPERATORS for seed in range(10)]


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
@pytest.mark.parametrize(("op", "seed"), PARAMS)
def test_backend_matches_the_reference(backend: str, op: str, seed: int) -> None:
    desc_json, inputs = make(op, seed)
    desc = desc_from_json(op, desc_json)
    desc.validate()
    expected = dmlops.execute(desc, inputs)
    got = dmlops.execute(desc, inputs, backend=backend)
    assert set(got) == set(expected)
    exact = op.startswith("MAX_POOLING") or desc_json.get("InterpolationMode") == "NEAREST_NEIGHBOR"
    exact = exact and op != "RESAMPLE_GRAD"  # a NEAREST gradient sums the taps of one element
    for member, want in expected.items():
        assert_close(got[member], want, exact=exact)


@pytest.mark.parametrize("backend", backend_params("cpu"), indirect=True)
def test_the_equivalent_desc_is_made_once_per_desc(backend: str) -> None:
    desc_json, inputs = make("RESAMPLE1", 0)
    desc = desc_from_json("RESAMPLE1", desc_json)
    dmlops.execute(desc, inputs, backend=backend)
    first = next(iter(desc.__dict__["_derived"].values()))
    dmlops.execute(desc, inputs, backend=backend)
    assert next(iter(desc.__dict__["_derived"].values())) is first
