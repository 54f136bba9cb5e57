"""Operator rules as test cases: one valid desc and one desc per rule that breaks it.

Each module of this package holds ``CASES``, a list of :class:`RuleCase` for one group of
operators whose generic descs get their family's ``validate_generic``. Two tests read
them all: ``tests/test_operator_rules.py`` (dmlops's verdict, and the ``STRUCT.Member``
its error names; runs everywhere) and ``tests/directml/test_directml_operator_rules.py``
(DirectML's CreateOperator gives the same verdict). Where a page and DirectML disagree,
the case follows DirectML and says so in ``why``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

MODULES = (
    "convolution",
    "matrix",
    "normalization",
    "recurrent",
    "training",
    "quantized",
    "random",
    "indexing",
    "pooling_resampling_roi",
)
"""The case modules, one per group of operators."""


@dataclass(frozen=True)
class RuleCase:
    """A desc and the verdict both dmlops and DirectML must give it at feature level 6_4.

    ``rejects`` is the DML member (``"OutputTensor"``, ``"Axis"``) dmlops's
    InvalidDescError must name as ``DML_<OP>_OPERATOR_DESC.<member>``; None for a valid
    desc. ``why`` says which page rule (or DirectML finding, with its erratum) the case is.
    """

    name: str
    operator: str
    desc: dict[str, Any]
    rejects: str | None
    why: str = ""


def all_cases() -> list[RuleCase]:
    """Every module's cases, ids unique."""
    cases: list[RuleCase] = []
    for module in MODULES:
        cases += importlib.import_module(f"{__name__}.{module}").CASES
    names = [c.name for c in cases]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    assert not duplicated, f"rule case names repeat: {duplicated}"
    return cases


def build(case: RuleCase) -> Any:
    """The case's desc (parse warnings silenced: some cases are odd on purpose)."""
    import warnings

    from dmlops.descs import desc_from_json

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return desc_from_json(case.operator, case.desc)
