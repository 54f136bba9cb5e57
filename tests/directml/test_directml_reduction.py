"""The reduction family's NumPy reference against the real DirectML (numpy vs directml).

Seeded random cases per operator: every data type this stack runs (FLOAT16, INT16 and
UINT16 are not supported by it), every enum value (each DML_REDUCE_FUNCTION,
AxisDirection, the exclusive flags), random axis sets (unsorted, repeated, empty),
strided inputs, and adversarial values (NaN, +-inf, +-0, ties, integer extremes) among
random ones. ``DMLOPS_REDUCTION_CASES`` sets the number of cases per operator (12 by
default; the local campaign ran 500).

Integers, MAX, MIN, the indices, TOP_K's values and the cumulative operators compare
bit for bit. The float sums (SUM, AVERAGE, L1, L2, SUM_SQUARE, LOG_SUM, LOG_SUM_EXP,
MULTIPLY) compare within the float32 rounding of an n-term accumulation, since
DirectML's order of accumulation depends on the sizes (descs/reduction.py): within
``n * eps * sum(|term|)`` carried through the final sqrt / log / division, plus a few
ulps. TOP_K cases hold no NaN (DirectML's order of NaN is unspecified). Cases whose
shaders this stack cannot compile (DirectMLStackLimitError) are skipped: the 64-bit
integer CUMULATIVE_* and REDUCE MULTIPLY, all of them.

Local campaign (DirectML 1.15.4 under Wine, lavapipe): REDUCE 1200 cases (100 per
function; 1160 ran, 40 skipped), ARGMAX, ARGMIN, TOP_K, TOP_K1 500 each (all ran),
CUMULATIVE_SUMMATION and CUMULATIVE_PRODUCT 850 each (510 ran, 340 skipped); no
difference. Validation parity: 43 descs, dmlops and CreateOperator agree on each.
"""

from __future__ import annotations

import os
import zlib
from typing import Any

import numpy as np
import pytest
from _directml import (
    directml,  # noqa: F401  (fixture)
    flat_buffer,
    padded_strides,
    run_on_directml,
)

import dmlops
from dmlops.descs import desc_from_json
from dmlops.directml import create_operator
from dmlops.errors import DirectMLRejectedDescError, InvalidDescError
from dmlops.tensor import TensorDesc

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

CASES = int(os.environ.get("DMLOPS_REDUCTION_CASES", "12"))
EPS = float(np.finfo(np.float32).eps)

FUNCTIONS = "ARGMAX ARGMIN AVERAGE L1 L2 LOG_SUM LOG_SUM_EXP MAX MIN MULTIPLY SUM SUM_SQUARE".split()
FUNCTION_TYPES = {
    "ARGMAX": ("FLOAT32", "INT32", "INT8", "UINT32", "UINT8", "INT64", "UINT64"),
    "MAX": ("FLOAT32", "INT32", "INT8", "UINT32", "UINT8", "INT64", "UINT64"),
    "SUM": ("FLOAT32", "INT32", "UINT32", "INT64", "UINT64"),
    "FLOAT": ("FLOAT32",),
}
FUNCTION_TYPES["ARGMIN"] = FUNCTION_TYPES["MIN"] = FUNCTION_TYPES["ARGMAX"]
FUNCTION_TYPES["MULTIPLY"] = FUNCTION_TYPES["SUM"]
INDEX_TYPES = ("UINT32", "INT32", "INT64", "UINT64")
OPERATOR_TYPES = {
    "ARGMAX": FUNCTION_TYPES["ARGMAX"],
    "ARGMIN": FUNCTION_TYPES["ARGMAX"],
    "CUMULATIVE_SUMMATION": ("FLOAT32", "UINT32", "INT32", "INT64", "UINT64"),
    "CUMULATIVE_PRODUCT": ("FLOAT32", "UINT32", "INT32", "INT64", "UINT64"),
    "TOP_K": ("FLOAT32", "INT32", "INT8", "UINT32", "UINT8", "INT64", "UINT64"),
    "TOP_K1": ("FLOAT32", "INT32", "INT8", "UINT32", "UINT8", "INT64", "UINT64"),
}
SIZES = (1, 2, 3, 5, 6, 7, 9, 11, 13, 17, 31, 67)
"""Last dimensions not divisible by 4 where they can be (DirectML then avoids shaders this stack rejects)."""
OPERATORS = ("REDUCE", "ARGMAX", "ARGMIN", "CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT", "TOP_K", "TOP_K1")


def values(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...], kind: str) -> np.ndarray:
    """Random values with ties and adversarial ones; ``kind`` bounds them where accumulation order matters."""
    n = int(np.prod(shape))
    if dtype.kind == "f":
        if kind == "product":
            x = rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n)
        elif kind == "exp":
            x = rng.uniform(-40, 40, n)
        else:
            x = rng.normal(0, 100, n)
        x = np.where(rng.random(n) < 0.2, np.round(x), x)  # ties
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0] if kind != "no_nan" else [np.inf, -np.inf, 0.0, -0.0]
        if kind == "exact":
            specials += [3.4e38, -3.4e38, 1e-45, -1e-45]
        pick = rng.random(n) < rng.choice([0.0, 0.05, 0.3])
        x = np.where(pick, rng.choice(specials, n), x)
        return x.astype(np.float32).reshape(shape)
    info = np.iinfo(dtype)
    if kind == "product":
        lo, hi = (-4, 5) if info.min < 0 else (0, 9)
        x = rng.integers(lo, hi, n)
    elif rng.random() < 0.5:
        x = rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
    else:
        x = rng.integers(max(info.min, -3), min(info.max, 3), n, endpoint=True, dtype=dtype)  # many ties
    extremes = np.array([info.min, info.max, 0], dtype=dtype)
    x = np.where(rng.random(n) < 0.1, rng.choice(extremes, n), x.astype(dtype))
    return x.astype(dtype).reshape(shape)


def shape_of(rng: np.random.Generator, rank: int, budget: int = 4096) -> tuple[int, ...]:
    while True:
        shape = tuple(int(rng.choice(SIZES[:8] if rank > 2 else SIZES)) for _ in range(rank))
        if int(np.prod(shape)) <= budget:
            return shape


def tensor(data_type: str, sizes: tuple[int, ...], strides: tuple[int, ...] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"DataType": data_type, "Sizes": list(sizes)}
    if strides is not None:
        t["Strides"] = list(strides)
    return t


def make_case(operator: str, seed: int) -> tuple[dict[str, Any], np.ndarray, dict[str, Any]]:
    """``(desc JSON, input buffer, facts for the comparison)`` of one seeded case."""
    rng = np.random.default_rng(zlib.crc32(f"{operator}-{seed}".encode()))
    facts: dict[str, Any] = {}
    rank = int(rng.integers(1, 6))  # CUMULATIVE_SUMMATION too: DirectML takes 1 to 8 dimensions (E74)
    shape = shape_of(rng, rank)
    desc: dict[str, Any] = {}
    kind = "any"
    if operator == "REDUCE":
        function = FUNCTIONS[seed % len(FUNCTIONS)]
        types = FUNCTION_TYPES.get(function, FUNCTION_TYPES["FLOAT"])
        data_type = types[(seed // len(FUNCTIONS)) % len(types)]
        facts["function"] = function
        desc["Function"] = function
        kind = {"MULTIPLY": "product", "LOG_SUM_EXP": "exp"}.get(function, "any")
        if function in ("MAX", "MIN", "ARGMAX", "ARGMIN"):
            kind = "exact"
    else:
        types = OPERATOR_TYPES[operator]
        data_type = types[seed % len(types)]
        if operator == "CUMULATIVE_PRODUCT":
            kind = "product"
        elif operator.startswith("TOP_K"):
            kind = "no_nan"
        elif operator.startswith("ARG"):
            kind = "exact"
    dtype = np.dtype(data_type.lower())
    x = values(rng, dtype, shape, kind)
    strided = bool(rng.random() < 0.3)
    strides = padded_strides(shape) if strided else None
    in_tensor = tensor(data_type, shape, strides)
    if operator in ("REDUCE", "ARGMAX", "ARGMIN"):
        count = int(rng.integers(0, rank + 1))
        axes = [int(a) for a in rng.choice(rank, count, replace=False)]
        if axes and rng.random() < 0.2:
            axes.append(axes[0])  # a repeated axis reduces it once
        reduced = set(axes)
        out_shape = tuple(1 if i in reduced else s for i, s in enumerate(shape))
        is_index = operator != "REDUCE" or desc["Function"] in ("ARGMAX", "ARGMIN")
        out_type = INDEX_TYPES[seed % len(INDEX_TYPES)] if is_index else data_type
        desc.update(InputTensor=in_tensor, OutputTensor=tensor(out_type, out_shape), Axes=axes)
        if operator != "REDUCE":
            desc["AxisDirection"] = ("INCREASING", "DECREASING")[(seed // 2) % 2]
        facts["n"] = int(np.prod([shape[a] for a in reduced])) if reduced else 1
    elif operator.startswith("CUMULATIVE"):
        axis = int(rng.integers(0, rank))
        flag = "HasExclusiveSum" if operator == "CUMULATIVE_SUMMATION" else "HasExclusiveProduct"
        desc.update(
            InputTensor=in_tensor,
            OutputTensor=tensor(data_type, shape),
            Axis=axis,
            AxisDirection=("INCREASING", "DECREASING")[(seed // 2) % 2],
            **{flag: bool((seed // 4) % 2)},
        )
    else:
        axis = int(rng.integers(0, rank))
        k = int(rng.integers(1, shape[axis] + 1))
        out_shape = tuple(k if i == axis else s for i, s in enumerate(shape))
        desc.update(
            InputTensor=in_tensor,
            OutputValueTensor=tensor(data_type, out_shape),
            OutputIndexTensor=tensor("UINT32", out_shape),
            Axis=axis,
            K=k,
        )
        if operator == "TOP_K1":
            desc["AxisDirection"] = ("INCREASING", "DECREASING")[(seed // 2) % 2]
    facts["logical"] = x
    buffer = flat_buffer(TensorDesc.from_dml_dict(in_tensor), x, 0) if strided else x
    return desc, buffer, facts


def _terms(function: str, x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if function in ("SUM_SQUARE", "L2"):
            return x * x
        if function == "LOG_SUM_EXP":
            return np.exp(x)
        return np.abs(x)


def float_bound(function: str, facts: dict[str, Any], desc: Any, want: np.ndarray) -> np.ndarray:
    """How far DirectML's float32 accumulation may be from the reference's (see the module docstring)."""
    from dmlops.descs.reduction import reduced_axes

    axes = reduced_axes(desc)
    n = facts["n"]
    with np.errstate(all="ignore"):
        magnitude = np.sum(_terms(function, facts["logical"]), axis=axes, keepdims=True) if axes else None
        if magnitude is None:
            magnitude = _terms(function, facts["logical"])
        bound = 2.0 * n * EPS * magnitude
        w = np.abs(want.astype(np.float64))
        if function == "AVERAGE":
            bound = bound / n
        elif function == "L2":
            bound = bound / np.maximum(2 * w, np.finfo(np.float32).tiny)
        elif function in ("LOG_SUM", "LOG_SUM_EXP"):
            s = np.exp(want.astype(np.float64))
            bound = bound / np.maximum(s, np.finfo(np.float32).tiny)
        elif function == "MULTIPLY":
            bound = 2.0 * n * EPS * w
    return bound + 4 * EPS * w + 1e-45


def compare(desc: Any, facts: dict[str, Any], member: str, want: np.ndarray, got: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    function = facts.get("function")
    if want.dtype.kind != "f" or function in (None, "MAX", "MIN"):
        if want.dtype.kind == "f":
            same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
        else:
            same = got == want
        bad = np.flatnonzero(~same)
    else:
        bound = float_bound(function, facts, desc, want)
        with np.errstate(all="ignore"):
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            ok = (diff <= bound) | (got == want) | (np.isnan(got) & np.isnan(want))
        bad = np.flatnonzero(~ok)
    if bad.size:
        shown = ", ".join(f"[{i}] numpy {want.flat[i]!r} directml {got.flat[i]!r}" for i in bad[:6])
        pytest.fail(f"{member}: {bad.size} of {got.size} elements differ: {shown}")


def _id(operator: str, seed: int) -> str:
    if operator == "REDUCE":
        return f"reduce-{FUNCTIONS[seed % len(FUNCTIONS)].lower()}-{seed}"
    return f"{operator.lower()}-{seed}"


PARAMS = [pytest.param(op, seed, id=_id(op, seed)) for op in OPERATORS for seed in range(CASES)]


@pytest.mark.parametrize(("operator", "seed"), PARAMS)
def test_reference_matches_directml(operator: str, seed: int) -> None:
    desc_json, buffer, facts = make_case(operator, seed)
    desc = desc_from_json(operator, desc_json)
    want = dmlops.execute(desc, {"InputTensor": buffer}, backend="numpy")
    got = run_on_directml(desc, {"InputTensor": buffer})
    for member in want:
        compare(desc, facts, member, want[member], got[member])


# -- validation parity: dmlops's verdict is DirectML's CreateOperator's ------------------------


def _t(data_type: str, sizes: list[int]) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": sizes}


def _with_k(sizes: list[int], axis: int, k: int) -> list[int]:
    """TOP_K's output sizes (the last axis replaced when ``axis`` is out of range)."""
    return [*sizes[:3], k] if axis >= len(sizes) else [k if i == axis else s for i, s in enumerate(sizes)]


PARITY: list[tuple[str, str, dict[str, Any]]] = []
_R = {"Function": "SUM", "InputTensor": _t("FLOAT32", [2, 3, 5]), "OutputTensor": _t("FLOAT32", [1, 3, 1])}
for name, axes, out in [
    ("sorted", [0, 2], None),
    ("unsorted", [2, 0], None),
    ("repeated", [0, 0, 2], None),
    ("empty", [], [2, 3, 5]),
    ("out_of_range", [0, 3], None),
    ("not_one_on_reduced", [0, 2], [2, 3, 1]),
    ("wrong_kept_size", [0, 2], [1, 2, 1]),
    ("fewer_dimensions", [0, 2], [3, 1]),
]:
    for operator in ("REDUCE", "ARGMAX"):
        d = dict(_R)
        if operator == "ARGMAX":
            d = {k: v for k, v in d.items() if k != "Function"} | {"AxisDirection": "DECREASING"}
        d["Axes"] = axes
        out_type = "UINT32" if operator == "ARGMAX" else "FLOAT32"
        d["OutputTensor"] = _t(out_type, out if out is not None else [1, 3, 1])
        PARITY.append((f"{operator.lower()}-{name}", operator, d))
PARITY += [
    ("reduce-sum-int32-output", "REDUCE", _R | {"Axes": [0, 2], "OutputTensor": _t("INT32", [1, 3, 1])}),
    ("reduce-argmax-float-output", "REDUCE", _R | {"Function": "ARGMAX", "Axes": [0, 2]}),
    (
        "reduce-argmax-int64-output",
        "REDUCE",
        _R | {"Function": "ARGMAX", "Axes": [0, 2], "OutputTensor": _t("INT64", [1, 3, 1])},
    ),
]
_C = {
    "InputTensor": _t("FLOAT32", [1, 2, 3, 5]),
    "OutputTensor": _t("FLOAT32", [1, 2, 3, 5]),
    "AxisDirection": "INCREASING",
}
for operator, flag in (("CUMULATIVE_SUMMATION", "HasExclusiveSum"), ("CUMULATIVE_PRODUCT", "HasExclusiveProduct")):
    for axis in (0, 3, 4):
        PARITY.append((f"{operator.lower()}-axis{axis}", operator, _C | {"Axis": axis, flag: True}))
for operator in ("TOP_K", "TOP_K1"):
    extra = {"AxisDirection": "INCREASING"} if operator == "TOP_K1" else {}
    for name, axis, k, value_k, index_k, index_type in [
        ("k1", 3, 1, 1, 1, "UINT32"),
        ("k_equals_size", 3, 5, 5, 5, "UINT32"),
        ("k_above_size", 3, 6, 6, 6, "UINT32"),
        ("k0", 3, 0, 0, 0, "UINT32"),
        ("axis_out_of_range", 4, 2, 2, 2, "UINT32"),
        ("value_size_not_k", 3, 2, 3, 2, "UINT32"),
        ("index_size_not_k", 3, 2, 2, 1, "UINT32"),
        ("int32_indices", 3, 2, 2, 2, "INT32"),
        ("uint64_indices", 3, 2, 2, 2, "UINT64"),
    ]:
        sizes = [1, 2, 3, 5]
        d = {
            "InputTensor": _t("FLOAT32", sizes),
            "OutputValueTensor": _t("FLOAT32", _with_k(sizes, axis, value_k)),
            "OutputIndexTensor": _t(index_type, _with_k(sizes, axis, index_k)),
            "Axis": axis,
            "K": k,
        } | extra
        PARITY.append((f"{operator.lower()}-{name}", operator, d))


@pytest.mark.parametrize(("name", "operator", "desc_json"), PARITY, ids=[p[0] for p in PARITY])
def test_validation_agrees_with_create_operator(name: str, operator: str, desc_json: dict[str, Any]) -> None:
    desc = desc_from_json(operator, desc_json)
    try:
        desc.validate()
        ours = None
    except InvalidDescError as exc:
        ours = str(exc)
    try:
        create_operator(desc)
        theirs = None
    except DirectMLRejectedDescError as exc:
        theirs = str(exc)
    assert (ours is None) == (theirs is None), f"dmlops: {ours or 'valid'}; DirectML: {theirs or 'valid'}"
