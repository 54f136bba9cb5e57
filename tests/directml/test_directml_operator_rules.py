"""DirectML's CreateOperator gives every operator rule case (``tests/rule_cases``) the
verdict dmlops gives it: the valid descs are accepted, each rule-breaking desc rejected.

A desc that makes DirectML's host process exit inside CreateOperator counts as rejected.
"""

from __future__ import annotations

import pytest
from _directml import directml  # noqa: F401  (fixture)

from dmlops.directml import create_operator
from dmlops.directml.host import HostCrashed
from dmlops.errors import DirectMLRejectedDescError
from rule_cases import RuleCase, all_cases, build

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_directml_verdict(case: RuleCase) -> None:
    desc = build(case)
    try:
        create_operator(desc)
        verdict = "valid"
    except DirectMLRejectedDescError as exc:
        verdict = f"rejected: {exc}"
    except HostCrashed as exc:
        verdict = f"rejected (host crashed): {exc}"
    expected = "valid" if case.rejects is None else f"rejected ({case.rejects})"
    assert (verdict == "valid") == (case.rejects is None), f"{case.why}\nexpected {expected}; DirectML: {verdict}"
