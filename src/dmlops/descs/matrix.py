"""The matrix family: which operators it holds and their own rules.

GEMM, MATRIX_MULTIPLY_INTEGER, MATRIX_MULTIPLY_INTEGER_TO_FLOAT,
QUANTIZED_LINEAR_MATRIX_MULTIPLY, MULTIHEAD_ATTENTION, MULTIHEAD_ATTENTION1 keep the generic
descs made from their catalogue rows (:mod:`.generic`); this module claims them (``family =
"matrix"``) and adds the rules of their pages that the catalogue does not hold
(:func:`validate_generic`), each checked against DirectML 1.15.4's CreateOperator (it wins
where the pages are silent or say otherwise). Only the ``directml`` backend runs them yet.

Rules:

* The four matrix multiplications (GEMM, MATRIX_MULTIPLY_INTEGER, ..._TO_FLOAT,
  QUANTIZED_LINEAR_MATRIX_MULTIPLY) read every tensor as 4-D, with leading 1s where it has
  fewer dimensions (:func:`padded`): ATensor is {b0, b1, M, K} ({b0, b1, K, M} with TransA
  TRANSPOSE), BTensor {b0, b1, K, N} ({b0, b1, N, K} with TransB), OutputTensor {b0, b1, M, N}
  (:func:`matmul_dims`). The batch sizes are equal: DirectML broadcasts none (a 1 against a
  2 is rejected). So the DimensionCounts of A, B and Output may differ where the padded
  Sizes agree (a 2-D A, a {1, K, N} B and a {1, 1, M, N} Output), which the pages of
  ..._TO_FLOAT and QUANTIZED_LINEAR_MATRIX_MULTIPLY forbid (E102; the catalogue's
  same-DimensionCount rules already follow DirectML). GEMM's four tensors have one
  DimensionCount and CTensor has OutputTensor's Sizes (page facts; the 2018 copy of the
  page let C broadcast, DirectML does not).
* Scales and zero points, padded to 4-D: all 1s (per tensor), or M on dimension 2 for A's
  and Output's (per row, {1, 1, M, 1}), N on dimension 3 for B's (per column,
  {1, 1, 1, N}); a 1-D {M} is {1, 1, 1, M} and rejected (E102). Where a scale has a zero
  point, the zero point has the scale's Sizes (E100 for ..._TO_FLOAT, E101 for
  QUANTIZED_LINEAR_MATRIX_MULTIPLY: the pages let each be per tensor or per row on its
  own). ..._TO_FLOAT's BiasTensor has OutputTensor's Sizes (page fact); its A and B may
  have different integer DataTypes (INT8, UINT8, INT32, UINT32 in any pair).
"""

from __future__ import annotations

from typing import Any

from ..enums import FeatureLevel

FAMILY = "matrix"

OPERATORS: frozenset[str] = frozenset(
    (
        "GEMM MATRIX_MULTIPLY_INTEGER MATRIX_MULTIPLY_INTEGER_TO_FLOAT "
        "QUANTIZED_LINEAR_MATRIX_MULTIPLY MULTIHEAD_ATTENTION MULTIHEAD_ATTENTION1"
    ).split()
)
"""Every operator of the family."""


def claim(operator: str) -> tuple[str, tuple[str, ...]] | None:
    """``(family, backends)`` for an operator of this family, None for any other.

    Read by :func:`dmlops.descs.generic.generic_desc_class` when it makes the class.
    """
    if operator not in OPERATORS:
        return None
    return FAMILY, ("directml",)


MATMUL_RANK = 4
"""The matrix multiplications read every tensor as 4-D, with leading 1s where it has fewer."""

QUANTIZATION_TENSORS: dict[str, tuple[tuple[str, str | None, str], ...]] = {
    "MATRIX_MULTIPLY_INTEGER": (("AZeroPointTensor", None, "M"), ("BZeroPointTensor", None, "N")),
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": (
        ("AScaleTensor", "AZeroPointTensor", "M"),
        ("BScaleTensor", "BZeroPointTensor", "N"),
    ),
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": (
        ("AScaleTensor", "AZeroPointTensor", "M"),
        ("BScaleTensor", "BZeroPointTensor", "N"),
        ("OutputScaleTensor", "OutputZeroPointTensor", "M"),
    ),
}
"""Per operator: (scale or zero-point tensor, its zero point when the first is a scale, the
axis it may run along: ``"M"`` per row, ``"N"`` per column)."""


def padded(sizes: tuple[int, ...], rank: int = MATMUL_RANK) -> tuple[int, ...]:
    """``sizes`` with leading 1s up to ``rank`` dimensions."""
    return (1,) * (rank - len(sizes)) + tuple(sizes)


def matmul_dims(desc: Any) -> tuple[tuple[int, int], int, int, int]:
    """``(batch, M, K, N)`` of a matrix multiplication, each tensor padded to 4-D.

    Batch, M and K come from ATensor (after TransA), N from BTensor (after TransB).
    """
    a = padded(desc.a_tensor.sizes)
    b = padded(desc.b_tensor.sizes)
    m, k = (a[3], a[2]) if _transposed(desc, "trans_a") else (a[2], a[3])
    n = b[2] if _transposed(desc, "trans_b") else b[3]
    return (a[0], a[1]), m, k, n


def _transposed(desc: Any, member: str) -> bool:
    trans = getattr(desc, member, None)
    return trans is not None and trans.name == "TRANSPOSE"


def _require_padded(desc: Any, member: str, expected: tuple[int, ...], rule: str) -> None:
    """Tensor ``member``, padded to 4-D, has Sizes ``expected``.

    The error names the first Sizes[i] that differs, or DimensionCount where the
    difference falls on a padded dimension.
    """
    sizes = desc.tensor(member).sizes
    lead = MATMUL_RANK - len(sizes)
    for i, (got, want) in enumerate(zip(padded(sizes), expected)):
        if got != want:
            if i < lead:
                raise desc.invalid(
                    f"{member}.DimensionCount", f"must reach dimension {i} of 4 to hold {want} ({rule})", len(sizes)
                )
            raise desc.invalid(f"{member}.Sizes[{i - lead}]", f"must be {want} ({rule})", got)


def _check_matmul(desc: Any) -> None:
    batch, m, k, n = matmul_dims(desc)
    b_shape = (*batch, n, k) if _transposed(desc, "trans_b") else (*batch, k, n)
    _require_padded(desc, "BTensor", b_shape, "ATensor's batch sizes and K; no broadcasting")
    _require_padded(desc, "OutputTensor", (*batch, m, n), "{ATensor's batch sizes, M, N}")
    tensors = desc.tensors()
    for first, zero_point, axis in QUANTIZATION_TENSORS.get(desc.operator_type.name, ()):
        if first in tensors:
            _check_quantization_sizes(desc, first, axis, m if axis == "M" else n)
            if zero_point in tensors:
                desc.require_sizes(zero_point, tensors[first].sizes, f"{first}.Sizes")


def _check_quantization_sizes(desc: Any, member: str, axis: str, count: int) -> None:
    """A scale or zero point, padded to 4-D, is all 1s (per tensor) or carries ``count``.

    ``count`` sits on the row axis for ``"M"`` ({1, 1, M, 1}), the column axis for ``"N"``
    ({1, 1, 1, N}).
    """
    at = 2 if axis == "M" else 3
    sizes = desc.tensor(member).sizes
    lead = MATMUL_RANK - len(sizes)
    for i, size in enumerate(padded(sizes)):
        if size == 1 or (i == at and size == count):
            continue
        shape = "{1, 1, M, 1}" if axis == "M" else "{1, 1, 1, N}"
        allowed = f"1 or {axis} ({count})" if i == at else "1"
        rule = f"must be {allowed}: Sizes all 1s or {shape} with {axis} = {count}, padded with leading 1s to 4-D"
        raise desc.invalid(f"{member}.Sizes[{i - lead}]", rule, size)


_RULES: dict[str, Any] = {
    "GEMM": _check_matmul,
    "MATRIX_MULTIPLY_INTEGER": _check_matmul,
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": _check_matmul,
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": _check_matmul,
}


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The operator's own rules (see the module docstring): InvalidDescError naming ``STRUCT.Member``.

    Called by the generic desc's validation after the page facts; checked against
    DirectML 1.15.4's CreateOperator (tests/rule_cases/matrix.py).
    """
    rule = _RULES.get(desc.operator_type.name)
    if rule is not None:
        rule(desc)


__all__ = ["FAMILY", "OPERATORS", "claim", "validate_generic"]
