"""dmlops's verdict on every operator rule case (``tests/rule_cases``): the valid descs
validate, and each rule-breaking desc raises InvalidDescError naming ``STRUCT.Member``.

DirectML's verdict on the same descs: ``tests/directml/test_directml_operator_rules.py``.
"""

from __future__ import annotations

import importlib

import pytest

from dmlops.errors import InvalidDescError
from rule_cases import MODULES, RuleCase, all_cases, build

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_dmlops_verdict(case: RuleCase) -> None:
    desc = build(case)
    if case.rejects is None:
        desc.validate()
        return
    with pytest.raises(InvalidDescError) as caught:
        desc.validate()
    named = f"{desc.dml_name}.{case.rejects}"
    assert named in str(caught.value), f"expected the error to name {named}: {caught.value}"


@pytest.mark.parametrize("module", MODULES)
def test_every_group_has_valid_and_breaking_cases(module: str) -> None:
    cases = importlib.import_module(f"rule_cases.{module}").CASES
    assert any(c.rejects is None for c in cases), f"rule_cases.{module} has no valid desc"
    assert any(c.rejects is not None for c in cases), f"rule_cases.{module} breaks no rule"
