"""Rule cases of the pooling_resampling_roi operators (see the package docstring)."""

from __future__ import annotations

from rule_cases import RuleCase

CASES: list[RuleCase] = []
