"""The training family: which operators it holds and their own rules.

ADAM_OPTIMIZER keeps the generic desc made from its catalogue row (:mod:`.generic`); this
module claims it (``family = "training"``) and adds the rules of its page that the
catalogue does not hold (:func:`validate_generic`). Only the ``directml`` backend runs it yet.

Rules, each checked against DirectML 1.15.4's CreateOperator (it wins where the page is
silent or says otherwise):

* ADAM_OPTIMIZER: TrainingStepTensor is a scalar, every Sizes[i] 1, of any DimensionCount
  the catalogue allows (1 to 8; its UINT32 DataType and the seven other tensors' equal
  Sizes and DataType are page facts). LearningRate, Beta1, Beta2 and Epsilon take any
  float: the page's 0 to 1 range for Beta1 and Beta2 is not enforced (negative values,
  values above 1, inf and NaN are accepted; erratum E122), nor is a sign on LearningRate
  or Epsilon.
"""

from __future__ import annotations

from typing import Any

from ..enums import FeatureLevel
from ._base import family_claim

FAMILY = "training"

OPERATORS: frozenset[str] = frozenset("ADAM_OPTIMIZER".split())
"""Every operator of the family."""


claim = family_claim(FAMILY, (OPERATORS, ("directml",)))


def _require_scalar(desc: Any, member: str) -> None:
    desc.require_sizes(member, (1,) * desc.tensor(member).dimension_count, "a scalar: every size 1")


def _check_adam(desc: Any) -> None:
    _require_scalar(desc, "TrainingStepTensor")


_RULES: dict[str, Any] = {"ADAM_OPTIMIZER": _check_adam}


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The rules of a training operator's own (see the module docstring): InvalidDescError naming ``STRUCT.Member``.

    Called by the generic desc's validation after the page facts; checked against
    DirectML 1.15.4's CreateOperator (tests/rule_cases/training.py).
    """
    _RULES[desc.operator_type.name](desc)


__all__ = ["FAMILY", "OPERATORS", "claim", "validate_generic"]
