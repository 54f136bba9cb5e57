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
* MULTIHEAD_ATTENTION / MULTIHEAD_ATTENTION1 (HeadCount = QueryHeadCount = KeyValueHeadCount
  for the first): head counts at least 1 (HeadCount 0 kills DirectML's host), and
  KeyValueHeadCount divides QueryHeadCount; exactly one tensor carries each of the query,
  key and value (:data:`ATTENTION_SOURCES`), and a stacked query with key needs equal head
  counts. Query, Key, Value and Output share one DimensionCount (3, or 4/5 with leading 1s).
  With batch B, sequence S, key sequence L (S with StackedQueryKey), past sequence P (0
  without PastKeyTensor), T = P + L, head size h (Query's hidden / query heads, or the
  stacked tensors' last size), value head size v (Value's hidden / key-value heads, else h):
  Query {B, S, Hq h}, Key {B, L, Hkv h}, Value {B, L, Hkv v}, stacked {B, S|L, heads,
  2|3, h}, Output {B, S, Hq v}, Bias {(Hq + Hkv) h + Hkv v}, RelativePositionBias
  {B, Hq, S, T}, PastKey/PastValue (both or neither) {B, Hkv, P, h|v}, OutputPresentKey /
  Value {B, Hkv, T, h|v}, each with any leading 1s and no broadcasting. The past and present
  values take v, which the page gives as the head size (E103); MULTIHEAD_ATTENTION1's page
  leaves the head counts "TBD" (E104). MaskTensor per MaskType (:data:`MASK_SHAPES`):
  absent with NONE, BOOLEAN {B, Hq, S, T}, KEY_SEQUENCE_LENGTH {1, B},
  KEY_SEQUENCE_END_START {2, B}, KEY_QUERY_SEQUENCE_LENGTH_START_END {3B + 2}.
  MULTIHEAD_ATTENTION1's PastSequenceLengthsTensor is not checked: any desc holding it
  (INT32 or FLOAT32, with or without a past) hangs CreateOperator on this stack (E105).
"""

from __future__ import annotations

from typing import Any

from ..enums import FeatureLevel
from ._base import family_claim

FAMILY = "matrix"

OPERATORS: frozenset[str] = frozenset(
    (
        "GEMM MATRIX_MULTIPLY_INTEGER MATRIX_MULTIPLY_INTEGER_TO_FLOAT "
        "QUANTIZED_LINEAR_MATRIX_MULTIPLY MULTIHEAD_ATTENTION MULTIHEAD_ATTENTION1"
    ).split()
)
"""Every operator of the family."""


claim = family_claim(FAMILY, (OPERATORS, ("directml",)))


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


ATTENTION_SOURCES: dict[str, tuple[str, ...]] = {
    "query": ("QueryTensor", "StackedQueryKeyTensor", "StackedQueryKeyValueTensor"),
    "key": ("KeyTensor", "StackedQueryKeyTensor", "StackedKeyValueTensor", "StackedQueryKeyValueTensor"),
    "value": ("ValueTensor", "StackedKeyValueTensor", "StackedQueryKeyValueTensor"),
}
"""The tensors that may carry each of MULTIHEAD_ATTENTION's query, key and value: exactly one."""

UNSTACKED_ATTENTION_TENSORS = ("QueryTensor", "KeyTensor", "ValueTensor", "OutputTensor")
"""The {batch, sequence, hidden} tensors: 3-D, or 4-/5-D with leading 1s, all of one DimensionCount."""


def _head_counts(desc: Any) -> tuple[str, int, str, int]:
    """``(query member, query heads, key/value member, key/value heads)``."""
    if desc.operator_type.name == "MULTIHEAD_ATTENTION":
        return "HeadCount", int(desc.head_count), "HeadCount", int(desc.head_count)
    return "QueryHeadCount", int(desc.query_head_count), "KeyValueHeadCount", int(desc.key_value_head_count)


def _require_trailing(desc: Any, member: str, expected: tuple[int, ...], rule: str) -> None:
    """Tensor ``member`` (if present) is ``expected``, with any further leading dimensions 1."""
    tensor = desc.tensors().get(member)
    if tensor is None:
        return
    sizes = tensor.sizes
    lead = len(sizes) - len(expected)
    if lead < 0:
        raise desc.invalid(f"{member}.DimensionCount", f"must be at least {len(expected)} ({rule})", len(sizes))
    for i, (got, want) in enumerate(zip(sizes, (1,) * lead + expected)):
        if got != want:
            raise desc.invalid(f"{member}.Sizes[{i}]", f"must be {want} ({rule}, leading 1s allowed)", got)


def _heads_split(desc: Any, member: str, heads: int, heads_member: str) -> int:
    """The head size of a {..., heads * headSize} tensor: its last size divided by ``heads``."""
    sizes = desc.tensor(member).sizes
    if sizes[-1] % heads:
        rule = f"must be a multiple of {heads_member} ({heads}): heads x head size"
        raise desc.invalid(f"{member}.Sizes[{len(sizes) - 1}]", rule, sizes[-1])
    return sizes[-1] // heads


def _check_attention(desc: Any) -> None:
    tensors = desc.tensors()
    q_member, q_heads, kv_member, kv_heads = _head_counts(desc)
    for member, heads in ((q_member, q_heads), (kv_member, kv_heads)):
        if heads < 1:
            raise desc.invalid(member, "must be at least 1", heads)
    if q_heads % kv_heads:
        raise desc.invalid(kv_member, f"must divide {q_member} ({q_heads})", kv_heads)
    source = {}
    for role, members in ATTENTION_SOURCES.items():
        present = [m for m in members if m in tensors]
        if len(present) != 1:
            named = present[1] if present else members[0]
            raise desc.invalid(named, f"exactly one of {', '.join(members)} carries the {role}", present)
        source[role] = present[0]
    stacked = {source["query"], source["key"]} & {"StackedQueryKeyTensor", "StackedQueryKeyValueTensor"}
    if stacked and q_heads != kv_heads:
        raise desc.invalid(kv_member, f"must equal {q_member} ({q_heads}) with {stacked.pop()}", kv_heads)
    desc.require_same("DimensionCount", *UNSTACKED_ATTENTION_TENSORS)

    # Batch, sequence and head size from the query's tensor, the key's sequence from its own.
    if source["query"] == "QueryTensor":
        batch, seq = tensors["QueryTensor"].sizes[-3:-1]
        head = _heads_split(desc, "QueryTensor", q_heads, q_member)
    else:
        batch, seq, _, _, head = tensors[source["query"]].sizes
    kv_seq = tensors["KeyTensor"].sizes[-2] if source["key"] == "KeyTensor" else None
    if source["key"] == "StackedKeyValueTensor":
        kv_seq = tensors["StackedKeyValueTensor"].sizes[1]
    kv_seq = seq if kv_seq is None else kv_seq
    value_head = _heads_split(desc, "ValueTensor", kv_heads, kv_member) if "ValueTensor" in tensors else head
    past = tensors["PastKeyTensor"].sizes[-2] if "PastKeyTensor" in tensors else 0
    total = past + kv_seq

    shapes = {
        "QueryTensor": ((batch, seq, q_heads * head), "{batch, sequence, heads x head size}"),
        "StackedQueryKeyTensor": ((batch, seq, q_heads, 2, head), "{batch, sequence, heads, 2, head size}"),
        "StackedQueryKeyValueTensor": ((batch, seq, q_heads, 3, head), "{batch, sequence, heads, 3, head size}"),
        "KeyTensor": ((batch, kv_seq, kv_heads * head), "{batch, key sequence, heads x head size}"),
        "StackedKeyValueTensor": ((batch, kv_seq, kv_heads, 2, head), "{batch, key sequence, heads, 2, head size}"),
        "ValueTensor": ((batch, kv_seq, kv_heads * value_head), "{batch, key sequence, heads x value head size}"),
        "OutputTensor": ((batch, seq, q_heads * value_head), "{batch, sequence, heads x value head size}"),
        "BiasTensor": (((q_heads + kv_heads) * head + kv_heads * value_head,), "{query + key + value hidden sizes}"),
        "RelativePositionBiasTensor": ((batch, q_heads, seq, total), "{batch, heads, sequence, past + key sequence}"),
        "PastKeyTensor": ((batch, kv_heads, past, head), "{batch, heads, past sequence, head size}"),
        "PastValueTensor": ((batch, kv_heads, past, value_head), "{batch, heads, past sequence, value head size}"),
        "OutputPresentKeyTensor": ((batch, kv_heads, total, head), "{batch, heads, past + key sequence, head size}"),
        "OutputPresentValueTensor": (
            (batch, kv_heads, total, value_head),
            "{batch, heads, past + key sequence, value head size}",
        ),
    }
    if ("PastKeyTensor" in tensors) != ("PastValueTensor" in tensors):
        missing = "PastValueTensor" if "PastKeyTensor" in tensors else "PastKeyTensor"
        raise desc.invalid(missing, "PastKeyTensor and PastValueTensor are both present or both null", None)
    for member, (expected, rule) in shapes.items():
        _require_trailing(desc, member, expected, rule)
    _check_attention_mask(desc, batch, (batch, q_heads, seq, total))


MASK_SHAPES: dict[str, str] = {
    "BOOLEAN": "{batch, heads, sequence, past + key sequence}",
    "KEY_SEQUENCE_LENGTH": "{1, batch}",
    "KEY_SEQUENCE_END_START": "{2, batch}",
    "KEY_QUERY_SEQUENCE_LENGTH_START_END": "{3 x batch + 2}",
}
"""MaskTensor's Sizes per MaskType (leading 1s allowed); MaskType NONE takes no MaskTensor."""


def _check_attention_mask(desc: Any, batch: int, scores: tuple[int, int, int, int]) -> None:
    mask_type = desc.mask_type.name
    if "MaskTensor" not in desc.tensors():
        return
    if mask_type == "NONE":
        raise desc.invalid("MaskTensor", "must be null with MaskType NONE", desc.mask_tensor.sizes)
    expected = {
        "BOOLEAN": scores,
        "KEY_SEQUENCE_LENGTH": (1, batch),
        "KEY_SEQUENCE_END_START": (2, batch),
        "KEY_QUERY_SEQUENCE_LENGTH_START_END": (3 * batch + 2,),
    }[mask_type]
    _require_trailing(desc, "MaskTensor", expected, f"{MASK_SHAPES[mask_type]} with MaskType {mask_type}")


_RULES: dict[str, Any] = {
    "GEMM": _check_matmul,
    "MATRIX_MULTIPLY_INTEGER": _check_matmul,
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": _check_matmul,
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": _check_matmul,
    "MULTIHEAD_ATTENTION": _check_attention,
    "MULTIHEAD_ATTENTION1": _check_attention,
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
