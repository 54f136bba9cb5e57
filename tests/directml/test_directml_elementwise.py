"""The element-wise family's NumPy reference against the real DirectML (numpy vs directml).

One case per operator and data type (tests/oracles/elementwise.py): adversarial values
(NaN, +-inf, +-0, subnormals, integer extremes, shift counts >= the bit width, zero
divisors) among random ones. Exact operators compare bit for bit (NaN equal to NaN);
transcendental ones within ``TOLERANCE``. The quantization operators' results that are
lavapipe's float-to-integer conversion (``stack_conversion``) are left out.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest
from _directml import directml, fail_on_differences, run_on_directml, same_bits  # noqa: F401  (fixture)

import dmlops
from dmlops.descs import desc_from_json
from dmlops.directml import create_operator
from dmlops.enums import TensorDataType
from dmlops.errors import DirectMLRejectedDescError, InvalidDescError
from oracles.elementwise import (
    CASES,
    TOLERANCE,
    Case,
    case_id,
    check_long_rows_of_like_values,
    data,
    stack_conversion,
)
from oracles.elementwise_rules import RULE_DESCS

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]


def build(case: Case, dtype_name: str) -> tuple[Any, dict[str, np.ndarray]]:
    """The desc and seeded inputs of one case."""
    dtype = TensorDataType.from_any(dtype_name).numpy_dtype
    rng = np.random.default_rng(zlib.crc32(f"{case.operator}{case.attrs}{dtype_name}".encode()))
    inputs = {}
    for member in case.inputs:
        shape = (1,) * len(case.shape) if member in case.scalars else case.shape
        if member == "ConditionTensor":
            inputs[member] = rng.integers(0, 3, shape).astype(np.uint8)
        else:
            own = (
                TensorDataType.from_any(case.member_types[member]).numpy_dtype if member in case.member_types else dtype
            )
            inputs[member] = data(np.dtype(own), rng, kind=case.kind.get(member, "any"), shape=shape)
    desc: dict[str, Any] = {m: {"DataType": a.dtype.name.upper(), "Sizes": list(a.shape)} for m, a in inputs.items()}
    desc[case.output] = {"DataType": case.output_dtype or dtype_name, "Sizes": list(case.shape)}
    desc.update(case.attrs)
    return desc_from_json(case.operator, desc), inputs


PARAMS = [pytest.param(case, dt, id=case_id(case, dt)) for case in CASES for dt in case.dtypes]
_seen: set[str] = set()
PARAMS = [p for p in PARAMS if not (p.id in _seen or _seen.add(p.id))]  # type: ignore[func-returns-value]


def compare(case: Case, inputs: dict[str, np.ndarray], expected: np.ndarray, got: np.ndarray) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind != "f":
        bad = np.flatnonzero((got != expected) & ~stack_conversion(case.operator, inputs, expected, got))
    elif case.operator in TOLERANCE:
        rtol, atol = TOLERANCE[case.operator]
        with np.errstate(all="ignore"):
            close = np.abs(got.astype(np.float64) - expected) <= atol + rtol * np.abs(expected.astype(np.float64))
        close |= (got == expected) | (np.isnan(got) & np.isnan(expected))
        bad = np.flatnonzero(~close)
    else:
        bad = np.flatnonzero(~same_bits(got, expected))
    fail_on_differences(bad, got, expected)


@pytest.mark.parametrize("operator", ["ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX1"])
@pytest.mark.parametrize("engine", ["directml", "cpu"])  # ("backend" would be conftest's fixture parameter)
def test_long_rows_of_like_values_sum_without_drift(operator: str, engine: str) -> None:
    """DirectML's sum of a 1M-element row of like values is exact to the tolerance (0.03x of it at
    64K, less at 1M: no float32 running sum), so the cpu backend's must be too (its float32 lane
    sums were 8.7x off at 4M before its blocks)."""
    if engine == "cpu":
        pytest.importorskip("numba")
    check_long_rows_of_like_values(operator, 1 << 20, lambda desc, inputs: dmlops.execute(desc, inputs, backend=engine))


@pytest.mark.parametrize(("case", "dtype_name"), PARAMS)
def test_reference_matches_directml(case: Case, dtype_name: str) -> None:
    desc, inputs = build(case, dtype_name)
    try:
        desc.validate()
    except InvalidDescError:
        # dmlops rejects it: DirectML's CreateOperator must reject it too (validation parity)
        with pytest.raises(DirectMLRejectedDescError):
            create_operator(desc)
        return
    got = run_on_directml(desc, inputs)[case.output]
    expected = dmlops.execute(desc, inputs, backend="numpy")[case.output]
    compare(case, inputs, expected, got)


@pytest.mark.parametrize("case", list(RULE_DESCS), ids=str)
def test_createoperator_rules_beyond_the_tables(case: str) -> None:
    """E63: DirectML's CreateOperator gives the verdict tests/oracles/elementwise_rules.py records,
    and so does dmlops's validation."""
    op, desc_json, accepted = RULE_DESCS[case]
    desc = desc_from_json(op, desc_json)
    if accepted:
        create_operator(desc)
    else:
        with pytest.raises(DirectMLRejectedDescError):
            create_operator(desc)


SIGN_BIT_OPERATORS = {
    "ELEMENT_WISE_IDENTITY": lambda bits: bits,
    "ACTIVATION_IDENTITY": lambda bits: bits,
    "ELEMENT_WISE_ABS": lambda bits: bits & np.uint32(0x7FFFFFFF),
    "ELEMENT_WISE_NEGATE": lambda bits: bits ^ np.uint32(0x80000000),
}


@pytest.mark.parametrize("operator", list(SIGN_BIT_OPERATORS))
def test_copies_and_sign_bit_operators_keep_nan_payloads_bit_for_bit(operator: str) -> None:
    """E197: DirectML keeps every NaN's payload through these four, a signalling NaN's too (FLOAT32;
    this stack runs no FLOAT16), and the reference computes the same bits; an arithmetic operator
    (ADD of 0) quiets them, as the reference does."""
    bits = np.array([0x7F800001, 0x7FA12345, 0xFF800001, 0x7FC00001, 0xFFC12345, 0x80000000, 0x3F800000], np.uint32)
    x = bits.view(np.float32).reshape(1, 1, 1, -1)
    tensor = {"DataType": "FLOAT32", "Sizes": list(x.shape)}
    desc = desc_from_json(operator, {"InputTensor": tensor, "OutputTensor": tensor})
    for backend in ("directml", "numpy"):
        got = np.asarray(dmlops.execute(desc, {"InputTensor": x}, backend=backend)["OutputTensor"])
        assert [hex(v) for v in got.reshape(-1).view(np.uint32)] == [hex(v) for v in SIGN_BIT_OPERATORS[operator](bits)]
    add = desc_from_json("ELEMENT_WISE_ADD", {"ATensor": tensor, "BTensor": tensor, "OutputTensor": tensor})
    ins = {"ATensor": x, "BTensor": np.zeros_like(x)}
    quieted = [
        np.asarray(dmlops.execute(add, ins, backend=b)["OutputTensor"]).view(np.uint32) for b in ("directml", "numpy")
    ]
    assert np.array_equal(quieted[0], quieted[1]) and quieted[0].reshape(-1)[0] == 0x7FC00001
