"""Rule cases of the indexing operators (see the package docstring)."""

from __future__ import annotations

from rule_cases import RuleCase

CASES: list[RuleCase] = []
