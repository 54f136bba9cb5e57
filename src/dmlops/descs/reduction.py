"""The reduction family: which operators it holds, their own rules, and what DirectML computes.

REDUCE, ARGMAX, ARGMIN, CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT, TOP_K and TOP_K1 keep
the generic descs made from their catalogue rows (:mod:`.generic`); this module claims
them (``family = "reduction"``), adds the rules of their pages that the catalogue does
not hold (:func:`validate_generic`) and the shapes every backend needs
(:func:`reduced_axes`, :func:`reduced_sizes`, :func:`top_k_sizes`).

Rules, each checked against DirectML 1.15.4's CreateOperator (it wins where the pages
are silent or say otherwise):

* REDUCE / ARGMAX / ARGMIN: every ``Axes[i]`` below InputTensor's DimensionCount;
  ``Axes`` may be unsorted, repeat an axis (the set is reduced) or be empty (each
  element is reduced alone); OutputTensor has InputTensor's DimensionCount and Sizes
  except 1 on the reduced axes. REDUCE's OutputTensor has InputTensor's DataType except
  for ARGMAX and ARGMIN (an index type).
* CUMULATIVE_*: ``Axis`` below the DimensionCount. CUMULATIVE_SUMMATION's page allows
  4 dimensions only, but CreateOperator accepts 1 to 8 (as CUMULATIVE_PRODUCT's
  FL 4_0 row); the catalogue follows DirectML (erratum E74; results bit-exact on ranks 1 to 8).
* TOP_K / TOP_K1: ``Axis`` below the DimensionCount; ``1 <= K <= InputTensor.Sizes[Axis]``
  (DirectML accepts ``K`` equal to the size, which TOP_K1's page excludes); both outputs
  have InputTensor's Sizes except ``K`` on ``Axis``.

What DirectML 1.15.4 computes (probed on the ``directml`` backend):

* Integer SUM / MULTIPLY and CUMULATIVE_* wrap around in the type's width (32 or 64 bits).
* MAX / MIN skip NaN (an all-NaN set gives -inf for MAX, +inf for MIN); of equal values
  (-0 and +0) the first met is kept.
* ARGMAX / ARGMIN (and REDUCE's, which are their INCREASING form) scan the reduced
  elements in row-major order of the reduced axes (in axis order, whatever the order of
  ``Axes``) from the first: INCREASING keeps the first element strictly greater (less),
  DECREASING the last greater or equal. A NaN is never greater, so a NaN first element
  wins and NaN anywhere else never does. The index counts over the reduced axes only.
* Float SUM and the functions built on it (AVERAGE = sum / n, L1, L2 = sqrt(sum of
  squares), SUM_SQUARE, LOG_SUM = log(sum), LOG_SUM_EXP = log(sum(exp)), MULTIPLY)
  accumulate in float32 with no rescaling: LOG_SUM_EXP of 100 overflows to inf, as do
  squares above 1.8e19. The order of float32 accumulation depends on the shape (probed
  bit for bit against candidate orders on random data): a reduction of the last axis
  alone, of up to about 1000 elements that are not a power of two, adds sequentially
  in index order from a +0 accumulator (118 of 118 cases; -0s sum to +0); any
  reduction of 4, 8, 16, 32 or 64 elements is a halving tree, ``x[i] + x[i + n/2]``
  (49 of 49; -0s sum to -0, as in SUM over no axes, which passes each element
  through); longer rows (3000, 4097) are summed in blocks, and outer axes or several
  axes in orders not pinned down (neither row-major, column-major nor axis by axis
  throughout). So the reference sums in float64 from +0 and rounds once, and differs
  from DirectML by at most the float32 rounding of an n-term sum (tests compare within
  ``2 n eps sum(|term|)``, a zero sum's sign by value; the campaign's largest
  difference was half of that bound, and 70 to 92% of the results were bit-exact).
* CUMULATIVE_SUMMATION / CUMULATIVE_PRODUCT run sequentially in the axis direction in
  the input type (float32 steps, bit for bit); the exclusive forms start from +0 / 1.
* TOP_K / TOP_K1 order equal values by ascending index in either direction (-0 equals
  +0). With NaN in a sequence DirectML's order is neither NaN-first nor NaN-last
  (``[nan, 1, 3, 2, nan, 3]``, K = 6, gives ``[3, 3, nan, 2, 1, nan]``): unspecified
  here; the reference sorts NaN as the largest value.
"""

from __future__ import annotations

from typing import Any

from ..enums import FeatureLevel
from ._base import family_claim

FAMILY = "reduction"

OPERATORS: frozenset[str] = frozenset(
    "REDUCE ARGMAX ARGMIN CUMULATIVE_SUMMATION CUMULATIVE_PRODUCT TOP_K TOP_K1".split()
)
"""Every operator of the family."""

REFERENCE_OPERATORS: frozenset[str] = OPERATORS
"""The operators the NumPy reference implements (``reference/reduction.py``'s ``OPERATORS``);
the cpu backend runs the same (``cpu/reduction.py``)."""

ARG_FUNCTIONS = ("ARGMAX", "ARGMIN")
"""REDUCE's functions whose output is an index type."""


claim = family_claim(FAMILY, (REFERENCE_OPERATORS, ("numpy", "cpu", "cuda", "directml")), (OPERATORS, ("directml",)))


def reduced_axes(desc: Any) -> tuple[int, ...]:
    """The set of axes REDUCE / ARGMAX / ARGMIN reduce, sorted (``Axes`` may be unsorted or repeat one)."""
    return tuple(sorted({int(a) for a in desc.axes}))


def reduced_sizes(sizes: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """The output sizes of a reduction: 1 on the reduced axes, the input's elsewhere."""
    return tuple(1 if i in axes else s for i, s in enumerate(sizes))


def top_k_sizes(sizes: tuple[int, ...], axis: int, k: int) -> tuple[int, ...]:
    """TOP_K's output sizes: the input's, with ``K`` on ``Axis``."""
    return tuple(k if i == axis else s for i, s in enumerate(sizes))


def _axis_in_range(desc: Any, member: str, axis: int) -> None:
    desc.require_axis(member, axis, desc.input_tensor.dimension_count)


def _check_reduction(desc: Any) -> None:
    for i, axis in enumerate(desc.axes):
        _axis_in_range(desc, f"Axes[{i}]", int(axis))
    axes = reduced_axes(desc)
    expected = reduced_sizes(desc.input_tensor.sizes, axes)
    desc.require_sizes("OutputTensor", expected, "InputTensor.Sizes with 1 on the reduced Axes")
    function = getattr(desc, "function", None)
    if function is not None and function.name not in ARG_FUNCTIONS:
        if desc.output_tensor.data_type != desc.input_tensor.data_type:
            raise desc.invalid(
                "OutputTensor.DataType",
                f"must be InputTensor.DataType ({desc.input_tensor.data_type.name}) for Function {function.name}",
                desc.output_tensor.data_type,
            )


def _check_cumulative(desc: Any) -> None:
    _axis_in_range(desc, "Axis", int(desc.axis))


def _check_top_k(desc: Any) -> None:
    axis, k = int(desc.axis), int(desc.k)
    _axis_in_range(desc, "Axis", axis)
    n = desc.input_tensor.sizes[axis]
    if not 1 <= k <= n:
        raise desc.invalid("K", f"must be in [1, InputTensor.Sizes[Axis]] ([1, {n}])", k)
    expected = top_k_sizes(desc.input_tensor.sizes, axis, k)
    for member in ("OutputValueTensor", "OutputIndexTensor"):
        desc.require_sizes(member, expected, "InputTensor.Sizes with K on Axis")


_RULES: dict[str, Any] = {
    "REDUCE": _check_reduction,
    "ARGMAX": _check_reduction,
    "ARGMIN": _check_reduction,
    "CUMULATIVE_SUMMATION": _check_cumulative,
    "CUMULATIVE_PRODUCT": _check_cumulative,
    "TOP_K": _check_top_k,
    "TOP_K1": _check_top_k,
}


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The rules of a reduction operator's own (see the module docstring): InvalidDescError naming ``STRUCT.Member``.

    Called by the generic desc's validation after the page facts (support rows,
    same-attribute constraints); checked against DirectML 1.15.4's CreateOperator
    (tests/directml/test_directml_reduction.py).
    """
    _RULES[desc.operator_type.name](desc)


__all__ = [
    "ARG_FUNCTIONS",
    "FAMILY",
    "OPERATORS",
    "REFERENCE_OPERATORS",
    "claim",
    "reduced_axes",
    "reduced_sizes",
    "top_k_sizes",
    "validate_generic",
]
