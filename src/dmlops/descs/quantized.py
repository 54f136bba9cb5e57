"""The quantized family: which operators it holds and their own rules.

DYNAMIC_QUANTIZE_LINEAR, QUANTIZE, DEQUANTIZE, QUANTIZED_LINEAR_AVERAGE_POOLING keep the
generic descs made from their catalogue rows (:mod:`.generic`); this module claims them
(``family = "quantized"``) and adds the rules of their pages that the catalogue does not
hold (:func:`validate_generic`), each checked against DirectML 1.15.4's CreateOperator. Only
the ``directml`` backend runs them yet.
"""

from __future__ import annotations

from typing import Any

from ..enums import FeatureLevel

FAMILY = "quantized"

OPERATORS: frozenset[str] = frozenset(
    ("DYNAMIC_QUANTIZE_LINEAR QUANTIZE DEQUANTIZE QUANTIZED_LINEAR_AVERAGE_POOLING").split()
)
"""Every operator of the family."""


def claim(operator: str) -> tuple[str, tuple[str, ...]] | None:
    """``(family, backends)`` for an operator of this family, None for any other.

    Read by :func:`dmlops.descs.generic.generic_desc_class` when it makes the class.
    """
    if operator not in OPERATORS:
        return None
    return FAMILY, ("directml",)


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The operator's own rules (beyond the page facts): InvalidDescError naming ``STRUCT.Member``."""


__all__ = ["FAMILY", "OPERATORS", "claim", "validate_generic"]
