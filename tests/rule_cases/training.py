"""Rule cases of the training operators (see the package docstring)."""

from __future__ import annotations

from rule_cases import RuleCase

CASES: list[RuleCase] = []
