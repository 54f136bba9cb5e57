"""A DML operator call as data: a DxDispatch-shaped desc, inputs and expected outputs.

Mappings build descs as DxDispatch ``desc`` dicts (DML member names), so they are
pure data that does not depend on the Python field names of the desc classes, and
every conformance case is also a valid DxDispatch operator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import dmlops
from conftest import to_numpy
from dmlops.descs import desc_from_json
from dmlops.enums import TensorDataType

FLT_MAX = float(np.finfo(np.float32).max)


class Inexpressible(Exception):
    """The ONNX case has no DML equivalent (the message says why)."""


@dataclass
class DmlCase:
    """One DML operator invocation and what an independent oracle says it returns.

    Attributes
    ----------
    op : str
        Short DML operator type (``"SLICE1"``).
    desc : dict
        The DxDispatch ``desc`` object.
    inputs : dict
        DML input member -> logical array (shape == Sizes).
    expected : dict
        DML output member -> oracle output. Members left out are not compared.
    feature_level : str or None
        Validation level (None: latest).
    rtol, atol : float
        Tolerance for float outputs (0 = bit-exact).
    note : str
        How the case was mapped, for reports.
    """

    op: str
    desc: dict[str, Any]
    inputs: dict[str, np.ndarray]
    expected: dict[str, np.ndarray]
    feature_level: str | None = None
    rtol: float = 0.0
    atol: float = 0.0
    note: str = ""


def tensor(dtype: Any, sizes: Sequence[int]) -> dict[str, Any]:
    """DxDispatch short-form tensor desc of a packed tensor."""
    return {"DataType": TensorDataType.from_numpy(np.dtype(dtype)).name, "Sizes": [int(s) for s in sizes]}


def run(case: DmlCase, backend: str = "numpy") -> dict[str, np.ndarray]:
    """Build the desc from its DxDispatch form and execute it on ``backend``."""
    desc = desc_from_json(case.op, case.desc)
    result = dmlops.execute(desc, case.inputs, backend=backend, feature_level=case.feature_level)
    return {k: to_numpy(v) for k, v in result.items()}


def check(case: DmlCase, backend: str = "numpy") -> None:
    """Run ``case`` and compare every expected output (exact, or within rtol/atol)."""
    got = run(case, backend)
    for member, want in case.expected.items():
        have = got[member]
        assert have.shape == want.shape, (member, have.shape, want.shape)
        if case.rtol == 0 and case.atol == 0:
            np.testing.assert_array_equal(have, want.astype(have.dtype), err_msg=member)
        else:
            np.testing.assert_allclose(
                have.astype(np.float64), want.astype(np.float64), rtol=case.rtol, atol=case.atol, err_msg=member
            )


def oracle(op: str, name: str) -> Any:
    """Tag a test function with the DML operator it checks and the oracle it uses.

    ``scripts/conformance_report.py`` groups results by these tags.
    """

    def tag(fn: Any) -> Any:
        fn.conformance = (op, name)
        return fn

    return tag
