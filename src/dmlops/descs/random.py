"""The random family: which operators it holds and their own rules.

RANDOM_GENERATOR keeps the generic desc made from its catalogue row (:mod:`.generic`);
this module claims it (``family = "random"``) and adds the rules of its page that the
catalogue does not hold (:func:`validate_generic`). Only the ``directml`` backend runs it yet.

Rules, each checked against DirectML 1.15.4's CreateOperator:

* RANDOM_GENERATOR: the state of the generator ``Type`` (PHILOX_4X32_10, the only one:
  a 128-bit counter and a 64-bit key) is 6 UINT32 elements laid out ``{1, ..., 1, 6}``
  (``{1, 1, 1, 6}``, ``{6, 1, 1, 1}`` and ``{1, 1, 2, 3}`` rejected); OutputStateTensor,
  where present, has InputStateTensor's Sizes (a page fact). DirectML accepts that
  layout in 1 to 8 dimensions, where the page (and the catalogue's row) says 4 (erratum
  E133). OutputTensor may have any Sizes.
"""

from __future__ import annotations

from typing import Any

from ..enums import FeatureLevel

FAMILY = "random"

OPERATORS: frozenset[str] = frozenset("RANDOM_GENERATOR".split())
"""Every operator of the family."""

STATE_ELEMENTS: dict[str, int] = {"PHILOX_4X32_10": 6}
"""RANDOM_GENERATOR: Type -> the UINT32 elements of its state (the last size of the state tensors)."""


def claim(operator: str) -> tuple[str, tuple[str, ...]] | None:
    """``(family, backends)`` for an operator of this family, None for any other.

    Read by :func:`dmlops.descs.generic.generic_desc_class` when it makes the class.
    """
    if operator not in OPERATORS:
        return None
    return FAMILY, ("directml",)


def state_sizes(generator_type: str, dimension_count: int) -> tuple[int, ...]:
    """The Sizes of a ``dimension_count``-D state tensor of ``generator_type``: ``{1, ..., 1, elements}``."""
    return (1,) * (dimension_count - 1) + (STATE_ELEMENTS[generator_type],)


def _check_random_generator(desc: Any) -> None:
    kind = desc.type.name
    expected = state_sizes(kind, desc.input_state_tensor.dimension_count)
    desc.require_sizes("InputStateTensor", expected, f"the state of {kind}")


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The rules of a random operator's own (see the module docstring): InvalidDescError naming ``STRUCT.Member``.

    Called by the generic desc's validation after the page facts (support rows,
    same-attribute constraints); checked against DirectML 1.15.4's CreateOperator.
    """
    _check_random_generator(desc)


__all__ = ["FAMILY", "OPERATORS", "STATE_ELEMENTS", "claim", "state_sizes", "validate_generic"]
