"""The pooling, resampling and roi families' generic neighbours: NumPy reference against the real DirectML.

Seeded random descs per operator (``CASES`` per operator, default 12; the local campaign
runs with ``DMLOPS_POOLING_RESAMPLING_CASES=500``): every data type the stack runs,
4-D and 5-D inputs with a last dimension not divisible by 4, strided (padded) inputs
half of the time, zeros in Strides/WindowSize/Dilations, padding-only windows, output
sizes beside the floor formula's, and adversarial values (NaN, +-inf, +-0, ties,
+-FLT_MAX). Exact operators compare bit for bit (NaN equal to NaN); LP_POOLING with a
P other than 1 or 2 within float32 rounding (DirectML's power is the device's
``exp2(log2)``). Descs whose shaders this stack cannot compile
(DirectMLStackLimitError) are skipped and counted by pytest.
"""

from __future__ import annotations

import os
import zlib
from typing import Any

import numpy as np
import pytest
from _directml import directml, padded_strides  # noqa: F401  (fixture)

import dmlops
from dmlops.descs import desc_from_json
from dmlops.directml import create_operator
from dmlops.errors import DirectMLRejectedDescError, DirectMLStackLimitError, InvalidDescError, UnsupportedError

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

CASES = int(os.environ.get("DMLOPS_POOLING_RESAMPLING_CASES", "12"))

ALL_TYPES = ("FLOAT32", "INT8", "UINT8", "INT32", "UINT32", "INT64", "UINT64")
"""Every data type this stack runs (FLOAT16, INT16 and UINT16 it does not)."""


def values(rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    """Random data with ties, and for floats NaN, +-inf, +-0 and +-FLT_MAX among it."""
    kind = rng.integers(0, 3)
    if dtype.kind == "f":
        if kind == 0:  # ties
            x = rng.integers(-3, 4, shape).astype(dtype)
        else:
            x = (rng.standard_normal(shape) * rng.choice([1.0, 100.0, 1e-3])).astype(dtype)
        if kind == 2:
            specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4028235e38, -3.4028235e38], dtype)
            mask = rng.random(shape) < 0.15
            x[mask] = rng.choice(specials, int(mask.sum()))
        return x
    info = np.iinfo(dtype)
    if kind == 0:
        lo, hi = max(info.min, -3), min(info.max, 3)
        return rng.integers(lo, hi + 1, shape, dtype=dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _tensor(data_type: str, sizes: tuple[int, ...], strided: bool) -> dict[str, Any]:
    t: dict[str, Any] = {"DataType": data_type, "Sizes": list(sizes)}
    if strided:
        t["Strides"] = list(padded_strides(sizes))
    return t


# -- pooling ---------------------------------------------------------------------------------

POOLING = ("MAX_POOLING", "MAX_POOLING1", "AVERAGE_POOLING", "AVERAGE_POOLING1", "LP_POOLING", "LP_POOLING1")


def pooling_case(operator: str, seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A random desc (DxDispatch JSON) and inputs of one pooling operator."""
    rng = np.random.default_rng(zlib.crc32(f"{operator}-{seed}".encode()))
    spatial = int(rng.integers(2, 4))
    sizes = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    sizes += [int(rng.integers(1, 6)) for _ in range(spatial - 1)]
    last = int(rng.integers(1, 12))
    sizes.append(last + 1 if last % 4 == 0 else last)
    dilated = operator.endswith("1") and operator != "MAX_POOLING1"
    zeros = rng.random() < 0.15  # zeros in Strides / WindowSize / Dilations

    def pick(lo: int, hi: int) -> list[int]:
        return [int(rng.integers(0 if zeros else lo, hi + 1)) for _ in range(spatial)]

    window, strides, dilations = pick(1, 4), pick(1, 3), pick(1, 3) if dilated else [1] * spatial
    start, end = [int(rng.integers(0, 4)) for _ in range(spatial)], [int(rng.integers(0, 4)) for _ in range(spatial)]
    out = []
    for n, k, s, d, a, b in zip(sizes[2:], window, strides, dilations, start, end):
        eff = (k - 1) * d + 1
        floor = (n + a + b - eff) // s + 1 if s and eff <= n + a + b else 1
        out.append(max(1, floor + int(rng.choice([0, 0, 0, 1, -1, 2]))))
    if operator.startswith("MAX"):
        data_type = str(rng.choice(ALL_TYPES))
    else:
        data_type = "FLOAT32"
    strided = bool(rng.integers(0, 2))
    x = values(rng, np.dtype(data_type.lower()), tuple(sizes))
    desc: dict[str, Any] = {
        "InputTensor": _tensor(data_type, tuple(sizes), strided),
        "OutputTensor": _tensor(data_type, (*sizes[:2], *out), False),
        "Strides": strides,
        "WindowSize": window,
        "StartPadding": start,
        "EndPadding": end,
    }
    if dilated:
        desc["Dilations"] = dilations
    if operator == "MAX_POOLING1" and rng.random() < 0.7:
        index_type = "UINT64" if rng.random() < 0.3 else "UINT32"
        desc["OutputIndicesTensor"] = _tensor(index_type, (*sizes[:2], *out), False)
    if operator.startswith("AVERAGE"):
        desc["IncludePadding"] = bool(rng.integers(0, 2))
    if operator.startswith("LP"):
        desc["P"] = int(rng.choice([1, 2, 2, 3, 4, 0, 7]))
    return desc, {"InputTensor": x}


def _approximate(operator: str, desc: Any) -> bool:
    return operator.startswith("LP_POOLING") and int(desc.p) not in (1, 2)


# -- comparison -------------------------------------------------------------------------------


def compare(expected: np.ndarray, got: np.ndarray, *, approximate: bool, signed_zero: bool = True) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if not signed_zero and got.dtype.kind == "f":
        # MAX_POOLING's maximum of -0 and +0: DirectML's sign depends on its shader (the
        # errata row beside E37); dmlops keeps the selected element's bits.
        got, expected = got + np.float32(0), expected + np.float32(0)
    if got.dtype.kind != "f":
        bad = np.flatnonzero(got != expected)
    elif approximate:
        with np.errstate(all="ignore"):
            e, g = expected.astype(np.float64), got.astype(np.float64)
            close = np.abs(g - e) <= 1e-30 + 4e-6 * np.abs(e)
        close |= (got == expected) | (np.isnan(got) & np.isnan(expected))
        bad = np.flatnonzero(~close)
    else:
        same = (got.view(np.uint32) == expected.view(np.uint32)) | (np.isnan(got) & np.isnan(expected))
        bad = np.flatnonzero(~same)
    if bad.size:
        shown = ", ".join(f"[{i}] numpy {expected.flat[i]!r} directml {got.flat[i]!r}" for i in bad[:6])
        pytest.fail(f"{bad.size} of {got.size} elements differ: {shown}")


def check(operator: str, desc_json: dict[str, Any], inputs: dict[str, np.ndarray]) -> None:
    desc = desc_from_json(operator, desc_json)
    try:
        desc.validate()
        dmlops.execute(desc, inputs, backend="numpy")  # the family's own rules run here too
    except UnsupportedError as exc:
        pytest.skip(f"not implemented by the numpy backend: {exc}")
    except InvalidDescError:
        # dmlops rejects it: DirectML's CreateOperator must reject it too (validation parity)
        with pytest.raises(DirectMLRejectedDescError):
            create_operator(desc)
        return
    try:
        got = dmlops.execute(desc, inputs, backend="directml")
    except DirectMLStackLimitError as exc:
        pytest.skip(f"{type(exc).__name__}: not comparable here")
    except DirectMLRejectedDescError:
        pytest.fail("dmlops validates this desc but DirectML's CreateOperator rejects it (a validation divergence)")
    expected = dmlops.execute(desc, inputs, backend="numpy")
    for member, array in expected.items():
        compare(
            array, got[member], approximate=_approximate(operator, desc), signed_zero=not operator.startswith("MAX")
        )


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("operator", POOLING)
def test_pooling_matches_directml(operator: str, seed: int) -> None:
    desc, inputs = pooling_case(operator, seed)
    check(operator, desc, inputs)


@pytest.mark.parametrize(
    ("operator", "change"),
    [
        (
            "MAX_POOLING",
            {"Strides": [1, 1, 1], "WindowSize": [1, 1, 1], "StartPadding": [0] * 3, "EndPadding": [0] * 3},
        ),
        ("AVERAGE_POOLING", {"OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 2, 3, 3]}}),
        ("MAX_POOLING1", {"OutputIndicesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 3, 2]}}),
    ],
)
def test_pooling_rules_match_createoperator(operator: str, change: dict[str, Any]) -> None:
    """Each rule dmlops adds to the catalogue's is one DirectML's CreateOperator enforces."""
    desc: dict[str, Any] = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
        "Strides": [1, 1],
        "WindowSize": [1, 1],
        "StartPadding": [0, 0],
        "EndPadding": [0, 0],
        **({"IncludePadding": True} if operator.startswith("AVERAGE") else {}),
    }
    desc.update(change)
    parsed = desc_from_json(operator, desc)
    with pytest.raises(InvalidDescError):
        dmlops.execute(parsed, {"InputTensor": np.zeros((1, 1, 3, 3), np.float32)}, backend="numpy")
    with pytest.raises(DirectMLRejectedDescError):
        create_operator(parsed)
