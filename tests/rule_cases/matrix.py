"""Rule cases of the matrix operators (see the package docstring)."""

from __future__ import annotations

from typing import Any

from rule_cases import RuleCase


def _t(data_type: str, *sizes: int) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


def _gemm(a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...], **members: Any) -> dict[str, Any]:
    desc = {"ATensor": _t("FLOAT32", *a), "BTensor": _t("FLOAT32", *b), "OutputTensor": _t("FLOAT32", *out)}
    desc |= {"TransA": "NONE", "TransB": "NONE", "Alpha": 1.0, "Beta": 1.0}
    return desc | members


_QUANTIZED_TENSORS = {
    # member: (operand whose DataType it takes, default Sizes)
    "AScaleTensor": ("scale", (1, 1, 1, 1)),
    "AZeroPointTensor": ("A", None),
    "BScaleTensor": ("scale", (1, 1, 1, 1)),
    "BZeroPointTensor": ("B", None),
    "OutputScaleTensor": ("scale", (1, 1, 1, 1)),
    "OutputZeroPointTensor": ("Output", None),
    "BiasTensor": ("Output", None),
}
_MEMBERS = {
    "MATRIX_MULTIPLY_INTEGER": ("AZeroPointTensor", "BZeroPointTensor"),
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": (
        "AScaleTensor",
        "AZeroPointTensor",
        "BScaleTensor",
        "BZeroPointTensor",
        "BiasTensor",
    ),
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": (
        "AScaleTensor",
        "AZeroPointTensor",
        "BScaleTensor",
        "BZeroPointTensor",
        "OutputScaleTensor",
        "OutputZeroPointTensor",
    ),
}
_OUTPUT_TYPE = {
    "MATRIX_MULTIPLY_INTEGER": "INT32",
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": "FLOAT32",
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": "UINT8",
}


def _quantized(
    op: str,
    a: tuple[int, ...],
    b: tuple[int, ...],
    out: tuple[int, ...],
    types: tuple[str, str] = ("UINT8", "UINT8"),
    **sizes: tuple[int, ...],
) -> dict[str, Any]:
    """A desc of a quantized matrix multiplication: the scales all 1s unless given, a zero
    point or bias only where ``sizes`` names it."""
    data_types = {"A": types[0], "B": types[1], "Output": _OUTPUT_TYPE[op], "scale": "FLOAT32"}
    desc = {"ATensor": _t(types[0], *a), "BTensor": _t(types[1], *b), "OutputTensor": _t(_OUTPUT_TYPE[op], *out)}
    for member in _MEMBERS[op]:
        operand, default = _QUANTIZED_TENSORS[member]
        shape = sizes.get(member, default)
        if shape is not None:
            desc[member] = _t(data_types[operand], *shape)
    return desc


_NO_BROADCAST = "the batch sizes of ATensor, BTensor and OutputTensor are equal (DirectML broadcasts none)"
_PADDED = "DirectML reads each tensor as 4-D with leading 1s"

GEMM_CASES = [
    RuleCase(
        "gemm_valid_batched_with_c",
        "GEMM",
        _gemm((2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), CTensor=_t("FLOAT32", 2, 3, 4, 6)),
        None,
        "{2, 3} batches of {4, 5} x {5, 6} plus C",
    ),
    RuleCase(
        "gemm_valid_2d_both_transposed",
        "GEMM",
        _gemm((5, 4), (6, 5), (4, 6), TransA="TRANSPOSE", TransB="TRANSPOSE", Beta=0.0),
        None,
        "2-D (FL 4_0), A {K, M} and B {N, K} transposed",
    ),
    RuleCase(
        "gemm_valid_3d_fused_relu",
        "GEMM",
        _gemm((3, 4, 5), (3, 5, 6), (3, 4, 6), FusedActivation={"Type": "ACTIVATION_RELU"}),
        None,
        "3-D, no CTensor, fused RELU",
    ),
    RuleCase(
        "gemm_k_mismatch",
        "GEMM",
        _gemm((2, 3, 4, 5), (2, 3, 4, 6), (2, 3, 4, 6)),
        "BTensor.Sizes[2]",
        "B's K must be A's K",
    ),
    RuleCase(
        "gemm_trans_a_ignored",
        "GEMM",
        _gemm((2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), TransA="TRANSPOSE"),
        "BTensor.Sizes[2]",
        "TransA makes A {K, M}: K = 4",
    ),
    RuleCase(
        "gemm_trans_b_ignored",
        "GEMM",
        _gemm((1, 1, 4, 5), (1, 1, 5, 6), (1, 1, 4, 5), TransB="TRANSPOSE"),
        "BTensor.Sizes[3]",
        "TransB makes B {N, K}: K (5) is B's last dimension",
    ),
    RuleCase(
        "gemm_output_m",
        "GEMM",
        _gemm((2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 3, 6)),
        "OutputTensor.Sizes[2]",
        "OutputTensor is {batch, M, N}: M",
    ),
    RuleCase(
        "gemm_output_n",
        "GEMM",
        _gemm((2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 7)),
        "OutputTensor.Sizes[3]",
        "OutputTensor is {batch, M, N}: N",
    ),
    RuleCase(
        "gemm_a_batch_broadcast",
        "GEMM",
        _gemm((1, 1, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6)),
        "BTensor.Sizes[0]",
        _NO_BROADCAST,
    ),
    RuleCase(
        "gemm_b_batch_broadcast",
        "GEMM",
        _gemm((2, 3, 4, 5), (2, 1, 5, 6), (2, 3, 4, 6)),
        "BTensor.Sizes[1]",
        _NO_BROADCAST,
    ),
    RuleCase(
        "gemm_output_batch",
        "GEMM",
        _gemm((2, 3, 4, 5), (2, 3, 5, 6), (1, 3, 4, 6)),
        "OutputTensor.Sizes[0]",
        _NO_BROADCAST,
    ),
    RuleCase(
        "gemm_c_broadcast",
        "GEMM",
        _gemm((2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), CTensor=_t("FLOAT32", 1, 1, 1, 6)),
        "OutputTensor.Sizes",
        "CTensor has OutputTensor's Sizes (the current page; its 2018 copy allowed broadcasting, DirectML does not)",
    ),
]

_MMI = "MATRIX_MULTIPLY_INTEGER"
MATRIX_MULTIPLY_INTEGER_CASES = [
    RuleCase(
        "matrix_multiply_integer_valid_per_row_column",
        _MMI,
        _quantized(
            _MMI,
            (2, 3, 4, 5),
            (2, 3, 5, 6),
            (2, 3, 4, 6),
            ("INT8", "UINT8"),
            AZeroPointTensor=(1, 1, 4, 1),
            BZeroPointTensor=(1, 1, 1, 6),
        ),
        None,
        "per-row A and per-column B zero points",
    ),
    RuleCase(
        "matrix_multiply_integer_valid_mixed_ranks",
        _MMI,
        _quantized(_MMI, (4, 5), (1, 5, 6), (1, 1, 4, 6), AZeroPointTensor=(4, 1), BZeroPointTensor=(6,)),
        None,
        f"{_PADDED}: ranks may differ where the padded Sizes agree",
    ),
    RuleCase(
        "matrix_multiply_integer_valid_per_tensor_1d",
        _MMI,
        _quantized(_MMI, (3, 4, 5), (3, 5, 6), (3, 4, 6), AZeroPointTensor=(1,), BZeroPointTensor=(1, 1)),
        None,
        "per-tensor zero points of 1 and 2 dimensions",
    ),
    RuleCase(
        "matrix_multiply_integer_k_mismatch",
        _MMI,
        _quantized(_MMI, (2, 3, 4, 5), (2, 3, 4, 6), (2, 3, 4, 6)),
        "BTensor.Sizes[2]",
        "B is {batch, K, N}",
    ),
    RuleCase(
        "matrix_multiply_integer_output_m",
        _MMI,
        _quantized(_MMI, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 5, 6)),
        "OutputTensor.Sizes[2]",
        "OutputTensor is {batch, M, N}",
    ),
    RuleCase(
        "matrix_multiply_integer_output_n",
        _MMI,
        _quantized(_MMI, (4, 5), (5, 6), (4, 5)),
        "OutputTensor.Sizes[1]",
        "OutputTensor is {batch, M, N}",
    ),
    RuleCase(
        "matrix_multiply_integer_b_batch",
        _MMI,
        _quantized(_MMI, (2, 3, 4, 5), (1, 3, 5, 6), (2, 3, 4, 6)),
        "BTensor.Sizes[0]",
        _NO_BROADCAST,
    ),
    RuleCase(
        "matrix_multiply_integer_output_drops_batch",
        _MMI,
        _quantized(_MMI, (3, 4, 5), (3, 5, 6), (4, 6)),
        "OutputTensor.DimensionCount",
        f"{_PADDED}: a 2-D OutputTensor has batch 1, A's is 3",
    ),
    RuleCase(
        "matrix_multiply_integer_a_zero_point_columns",
        _MMI,
        _quantized(_MMI, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), AZeroPointTensor=(1, 1, 1, 4)),
        "AZeroPointTensor.Sizes[3]",
        "AZeroPointTensor is {1, 1, 1, 1} or {1, 1, M, 1}",
    ),
    RuleCase(
        "matrix_multiply_integer_a_zero_point_k_rows",
        _MMI,
        _quantized(_MMI, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), AZeroPointTensor=(1, 1, 5, 1)),
        "AZeroPointTensor.Sizes[2]",
        "AZeroPointTensor's rows are M (4)",
    ),
    RuleCase(
        "matrix_multiply_integer_a_zero_point_batch",
        _MMI,
        _quantized(_MMI, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), AZeroPointTensor=(2, 3, 4, 1)),
        "AZeroPointTensor.Sizes[0]",
        "no per-batch zero points",
    ),
    RuleCase(
        "matrix_multiply_integer_a_zero_point_1d_m",
        _MMI,
        _quantized(_MMI, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), AZeroPointTensor=(4,)),
        "AZeroPointTensor.Sizes[0]",
        f"{_PADDED}: {{4}} is {{1, 1, 1, 4}}, not per row",
    ),
    RuleCase(
        "matrix_multiply_integer_b_zero_point_rows",
        _MMI,
        _quantized(_MMI, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), BZeroPointTensor=(1, 1, 6, 1)),
        "BZeroPointTensor.Sizes[2]",
        "BZeroPointTensor is {1, 1, 1, 1} or {1, 1, 1, N}",
    ),
    RuleCase(
        "matrix_multiply_integer_b_zero_point_n",
        _MMI,
        _quantized(_MMI, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), BZeroPointTensor=(1, 1, 1, 3)),
        "BZeroPointTensor.Sizes[3]",
        "BZeroPointTensor's columns are N (6)",
    ),
]

_MMF = "MATRIX_MULTIPLY_INTEGER_TO_FLOAT"
MATRIX_MULTIPLY_INTEGER_TO_FLOAT_CASES = [
    RuleCase(
        "matrix_multiply_integer_to_float_valid_full",
        _MMF,
        _quantized(
            _MMF,
            (2, 3, 4, 5),
            (2, 3, 5, 6),
            (2, 3, 4, 6),
            ("INT32", "UINT8"),
            AScaleTensor=(1, 1, 4, 1),
            AZeroPointTensor=(1, 1, 4, 1),
            BScaleTensor=(1, 1, 1, 6),
            BZeroPointTensor=(1, 1, 1, 6),
            BiasTensor=(2, 3, 4, 6),
        ),
        None,
        "per-row A, per-column B, bias; A and B of different DataTypes",
    ),
    RuleCase(
        "matrix_multiply_integer_to_float_valid_mixed_ranks",
        _MMF,
        _quantized(
            _MMF,
            (4, 5),
            (1, 5, 6),
            (4, 6),
            ("INT8", "INT8"),
            AScaleTensor=(4, 1),
            BScaleTensor=(6,),
            BZeroPointTensor=(6,),
        ),
        None,
        f"{_PADDED}: ranks may differ where the padded Sizes agree (the page asks for equal DimensionCounts)",
    ),
    RuleCase(
        "matrix_multiply_integer_to_float_k_mismatch",
        _MMF,
        _quantized(_MMF, (2, 3, 4, 5), (2, 3, 6, 6), (2, 3, 4, 6)),
        "BTensor.Sizes[2]",
        "B is {batch, K, N}",
    ),
    RuleCase(
        "matrix_multiply_integer_to_float_output_n",
        _MMF,
        _quantized(_MMF, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 7)),
        "OutputTensor.Sizes[3]",
        "OutputTensor is {batch, M, N}",
    ),
    RuleCase(
        "matrix_multiply_integer_to_float_a_batch",
        _MMF,
        _quantized(_MMF, (1, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6)),
        "BTensor.Sizes[0]",
        _NO_BROADCAST,
    ),
    RuleCase(
        "matrix_multiply_integer_to_float_a_scale_columns",
        _MMF,
        _quantized(_MMF, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), AScaleTensor=(1, 1, 1, 4)),
        "AScaleTensor.Sizes[3]",
        "AScaleTensor is {1, 1, 1, 1} or {1, 1, M, 1}",
    ),
    RuleCase(
        "matrix_multiply_integer_to_float_b_scale_k",
        _MMF,
        _quantized(_MMF, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), BScaleTensor=(1, 1, 5, 6)),
        "BScaleTensor.Sizes[2]",
        "BScaleTensor is {1, 1, 1, 1} or {1, 1, 1, N}",
    ),
    RuleCase(
        "matrix_multiply_integer_to_float_a_zero_point_not_scale",
        _MMF,
        _quantized(
            _MMF, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), AScaleTensor=(1, 1, 1, 1), AZeroPointTensor=(1, 1, 4, 1)
        ),
        "AZeroPointTensor.Sizes[2]",
        "E100: AZeroPointTensor has AScaleTensor's Sizes (DirectML; the page lets each be per tensor or per row)",
    ),
    RuleCase(
        "matrix_multiply_integer_to_float_b_zero_point_not_scale",
        _MMF,
        _quantized(
            _MMF, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), BScaleTensor=(1, 1, 1, 6), BZeroPointTensor=(1, 1, 1, 1)
        ),
        "BZeroPointTensor.Sizes[3]",
        "E100: BZeroPointTensor has BScaleTensor's Sizes",
    ),
    RuleCase(
        "matrix_multiply_integer_to_float_bias_broadcast",
        _MMF,
        _quantized(_MMF, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), BiasTensor=(1, 1, 1, 6)),
        "OutputTensor.Sizes",
        "BiasTensor has OutputTensor's Sizes (page fact; no broadcasting)",
    ),
]

_QLMM = "QUANTIZED_LINEAR_MATRIX_MULTIPLY"
QUANTIZED_LINEAR_MATRIX_MULTIPLY_CASES = [
    RuleCase(
        "quantized_linear_matrix_multiply_valid_full",
        _QLMM,
        _quantized(
            _QLMM,
            (2, 3, 4, 5),
            (2, 3, 5, 6),
            (2, 3, 4, 6),
            ("INT8", "UINT8"),
            AScaleTensor=(1, 1, 4, 1),
            AZeroPointTensor=(1, 1, 4, 1),
            BScaleTensor=(1, 1, 1, 6),
            BZeroPointTensor=(1, 1, 1, 6),
            OutputScaleTensor=(1, 1, 4, 1),
            OutputZeroPointTensor=(1, 1, 4, 1),
        ),
        None,
        "per-row A and Output, per-column B",
    ),
    RuleCase(
        "quantized_linear_matrix_multiply_valid_mixed_ranks",
        _QLMM,
        _quantized(
            _QLMM,
            (4, 5),
            (5, 6),
            (1, 1, 4, 6),
            AScaleTensor=(4, 1),
            AZeroPointTensor=(4, 1),
            BScaleTensor=(6,),
            OutputScaleTensor=(1,),
        ),
        None,
        f"{_PADDED}: 2-D A and B, 4-D OutputTensor (the page asks for equal DimensionCounts)",
    ),
    RuleCase(
        "quantized_linear_matrix_multiply_k_mismatch",
        _QLMM,
        _quantized(_QLMM, (2, 3, 4, 5), (2, 3, 4, 6), (2, 3, 4, 6)),
        "BTensor.Sizes[2]",
        "B is {batch, K, N}",
    ),
    RuleCase(
        "quantized_linear_matrix_multiply_output_m",
        _QLMM,
        _quantized(_QLMM, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 3, 6)),
        "OutputTensor.Sizes[2]",
        "OutputTensor is {batch, M, N}",
    ),
    RuleCase(
        "quantized_linear_matrix_multiply_output_batch",
        _QLMM,
        _quantized(_QLMM, (2, 3, 4, 5), (2, 3, 5, 6), (2, 1, 4, 6)),
        "OutputTensor.Sizes[1]",
        _NO_BROADCAST,
    ),
    RuleCase(
        "quantized_linear_matrix_multiply_a_scale_batch",
        _QLMM,
        _quantized(_QLMM, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), AScaleTensor=(2, 1, 4, 1)),
        "AScaleTensor.Sizes[0]",
        "AScaleTensor is {1, 1, 1, 1} or {1, 1, M, 1}",
    ),
    RuleCase(
        "quantized_linear_matrix_multiply_b_scale_rows",
        _QLMM,
        _quantized(_QLMM, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), BScaleTensor=(1, 1, 6, 1)),
        "BScaleTensor.Sizes[2]",
        "BScaleTensor is {1, 1, 1, 1} or {1, 1, 1, N}",
    ),
    RuleCase(
        "quantized_linear_matrix_multiply_output_scale_columns",
        _QLMM,
        _quantized(_QLMM, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), OutputScaleTensor=(1, 1, 1, 6)),
        "OutputScaleTensor.Sizes[3]",
        "OutputScaleTensor is per tensor or per row, not per column",
    ),
    RuleCase(
        "quantized_linear_matrix_multiply_a_zero_point_not_scale",
        _QLMM,
        _quantized(
            _QLMM, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), AScaleTensor=(1, 1, 4, 1), AZeroPointTensor=(1, 1, 1, 1)
        ),
        "AZeroPointTensor.Sizes[2]",
        "E101: AZeroPointTensor has AScaleTensor's Sizes (DirectML; the page lets each be per tensor or per row)",
    ),
    RuleCase(
        "quantized_linear_matrix_multiply_b_zero_point_not_scale",
        _QLMM,
        _quantized(_QLMM, (2, 3, 4, 5), (2, 3, 5, 6), (2, 3, 4, 6), BZeroPointTensor=(1, 1, 1, 6)),
        "BZeroPointTensor.Sizes[3]",
        "E101: BZeroPointTensor has BScaleTensor's Sizes",
    ),
    RuleCase(
        "quantized_linear_matrix_multiply_output_zero_point_not_scale",
        _QLMM,
        _quantized(
            _QLMM,
            (2, 3, 4, 5),
            (2, 3, 5, 6),
            (2, 3, 4, 6),
            OutputScaleTensor=(1, 1, 4, 1),
            OutputZeroPointTensor=(1, 1, 1, 1),
        ),
        "OutputZeroPointTensor.Sizes[2]",
        "E101: OutputZeroPointTensor has OutputScaleTensor's Sizes",
    ),
]

CASES: list[RuleCase] = [
    *GEMM_CASES,
    *MATRIX_MULTIPLY_INTEGER_CASES,
    *MATRIX_MULTIPLY_INTEGER_TO_FLOAT_CASES,
    *QUANTIZED_LINEAR_MATRIX_MULTIPLY_CASES,
]


def _attention(op: str, heads: tuple[int, int] = (2, 2), mask_type: str = "NONE", **sizes: Any) -> dict[str, Any]:
    """A MULTIHEAD_ATTENTION(1) desc: FLOAT32 tensors (MaskTensor INT32) of the Sizes given."""
    desc: dict[str, Any] = {"Scale": 0.5, "MaskFilterValue": -10000.0, "MaskType": mask_type}
    if op == "MULTIHEAD_ATTENTION":
        desc["HeadCount"] = heads[0]
    else:
        desc |= {"QueryHeadCount": heads[0], "KeyValueHeadCount": heads[1]}
    for member, shape in sizes.items():
        if shape is not None:
            desc[member] = _t("INT32" if member == "MaskTensor" else "FLOAT32", *shape)
    return desc


# batch 2, sequence 3, key sequence 4, 2 heads of size 4, value head size 5, past sequence 5
_QKV = {"QueryTensor": (2, 3, 8), "KeyTensor": (2, 4, 8), "ValueTensor": (2, 4, 10), "OutputTensor": (2, 3, 10)}
_PAST = {"PastKeyTensor": (2, 2, 5, 4), "PastValueTensor": (2, 2, 5, 5)}
_PRESENT = {"OutputPresentKeyTensor": (2, 2, 9, 4), "OutputPresentValueTensor": (2, 2, 9, 5)}


def _mha_cases(op: str) -> list[RuleCase]:
    prefix = op.lower()
    heads = "HeadCount" if op == "MULTIHEAD_ATTENTION" else "QueryHeadCount"

    def case(name: str, rejects: str | None, why: str, mask_type: str = "NONE", **sizes: Any) -> RuleCase:
        return RuleCase(f"{prefix}_{name}", op, _attention(op, mask_type=mask_type, **sizes), rejects, why)

    return [
        case(
            "valid_past_present_bias",
            None,
            "separate Q/K/V, value head size 5 beside head size 4, past and present",
            BiasTensor=(26,),
            RelativePositionBiasTensor=(2, 2, 3, 9),
            **_QKV,
            **_PAST,
            **_PRESENT,
        ),
        case(
            "valid_4d_leading_ones",
            None,
            "Q, K, V and Output 4-D with a leading 1 (all of one DimensionCount)",
            QueryTensor=(1, 2, 3, 8),
            KeyTensor=(1, 2, 4, 8),
            ValueTensor=(1, 2, 4, 10),
            OutputTensor=(1, 2, 3, 10),
        ),
        case(
            "valid_stacked_qkv_boolean_mask",
            None,
            "StackedQueryKeyValueTensor, a 5-D Output and a BOOLEAN mask {batch, heads, S, T}",
            "BOOLEAN",
            StackedQueryKeyValueTensor=(2, 3, 2, 3, 4),
            OutputTensor=(1, 1, 2, 3, 8),
            MaskTensor=(2, 2, 3, 3),
            BiasTensor=(1, 24),
        ),
        case(
            "valid_stacked_kv_key_lengths",
            None,
            "Query with StackedKeyValueTensor; KEY_SEQUENCE_LENGTH mask {1, batch}",
            "KEY_SEQUENCE_LENGTH",
            QueryTensor=(2, 3, 8),
            StackedKeyValueTensor=(2, 4, 2, 2, 4),
            OutputTensor=(2, 3, 8),
            MaskTensor=(1, 2),
        ),
        case(
            "valid_stacked_qk_start_end",
            None,
            "StackedQueryKeyTensor with Value; KEY_QUERY_SEQUENCE_LENGTH_START_END mask {3 batch + 2}",
            "KEY_QUERY_SEQUENCE_LENGTH_START_END",
            StackedQueryKeyTensor=(2, 3, 2, 2, 4),
            ValueTensor=(2, 3, 10),
            OutputTensor=(2, 3, 10),
            MaskTensor=(8,),
        ),
        case(
            "no_value",
            "ValueTensor",
            "exactly one of Value, StackedKeyValue, StackedQueryKeyValue",
            **{**_QKV, "ValueTensor": None},
        ),
        case(
            "query_twice",
            "StackedQueryKeyValueTensor",
            "Query and StackedQueryKeyValue are exclusive",
            **_QKV,
            StackedQueryKeyValueTensor=(2, 3, 2, 3, 4),
        ),
        case(
            "key_twice",
            "StackedKeyValueTensor",
            "StackedQueryKey and StackedKeyValue both carry the key",
            StackedQueryKeyTensor=(2, 3, 2, 2, 4),
            StackedKeyValueTensor=(2, 3, 2, 2, 4),
            OutputTensor=(2, 3, 8),
        ),
        case(
            "ranks_differ",
            "OutputTensor.DimensionCount",
            "Q, K, V and Output have one DimensionCount (a 4-D Q needs a 4-D Output)",
            **{**_QKV, "QueryTensor": (1, 2, 3, 8), "KeyTensor": (1, 2, 4, 8), "ValueTensor": (1, 2, 4, 10)},
        ),
        case(
            "query_leading_not_one",
            "QueryTensor.Sizes[0]",
            "4-D Q: the leading dimension is 1",
            **{
                **_QKV,
                "QueryTensor": (2, 2, 3, 8),
                "KeyTensor": (1, 2, 4, 8),
                "ValueTensor": (1, 2, 4, 10),
                "OutputTensor": (1, 2, 3, 10),
            },
        ),
        case(
            "heads_split_query",
            "QueryTensor.Sizes[2]",
            f"the query hidden size is a multiple of {heads}",
            **{**_QKV, "QueryTensor": (2, 3, 7)},
        ),
        case(
            "key_hidden",
            "KeyTensor.Sizes[2]",
            "Key's hidden size is Query's (heads x head size)",
            **{**_QKV, "KeyTensor": (2, 4, 12)},
        ),
        case(
            "value_sequence", "ValueTensor.Sizes[1]", "Value's sequence is Key's", **{**_QKV, "ValueTensor": (2, 5, 10)}
        ),
        case(
            "key_batch",
            "KeyTensor.Sizes[0]",
            "Key's batch is Query's (no broadcasting)",
            **{**_QKV, "KeyTensor": (1, 4, 8)},
        ),
        case(
            "output_hidden",
            "OutputTensor.Sizes[2]",
            "Output is {batch, sequence, heads x value head size}",
            **{**_QKV, "OutputTensor": (2, 3, 8)},
        ),
        case(
            "stacked_qkv_count",
            "StackedQueryKeyValueTensor.Sizes[3]",
            "StackedQueryKeyValue stacks 3 on its fourth dimension",
            StackedQueryKeyValueTensor=(2, 3, 2, 2, 4),
            OutputTensor=(2, 3, 8),
        ),
        case(
            "stacked_kv_heads",
            "StackedKeyValueTensor.Sizes[2]",
            "StackedKeyValue's third dimension is the head count",
            QueryTensor=(2, 3, 8),
            StackedKeyValueTensor=(2, 4, 1, 2, 8),
            OutputTensor=(2, 3, 8),
        ),
        case(
            "stacked_qk_value_sequence",
            "ValueTensor.Sizes[1]",
            "with StackedQueryKey the key sequence is the query's",
            StackedQueryKeyTensor=(2, 3, 2, 2, 4),
            ValueTensor=(2, 4, 10),
            OutputTensor=(2, 3, 10),
        ),
        case(
            "bias_size",
            "BiasTensor.Sizes[0]",
            "Bias is {query + key + value hidden} = 8 + 8 + 10",
            **_QKV,
            BiasTensor=(24,),
        ),
        case(
            "bias_leading_not_one", "BiasTensor.Sizes[0]", "Bias's leading dimensions are 1", **_QKV, BiasTensor=(2, 26)
        ),
        case(
            "relative_position_bias_broadcast",
            "RelativePositionBiasTensor.Sizes[0]",
            "RelativePositionBias is {batch, heads, S, T}: no broadcasting",
            **_QKV,
            RelativePositionBiasTensor=(1, 2, 3, 4),
        ),
        case(
            "relative_position_bias_total",
            "RelativePositionBiasTensor.Sizes[3]",
            "with a past, T is past + key sequence (9)",
            **_QKV,
            **_PAST,
            RelativePositionBiasTensor=(2, 2, 3, 4),
        ),
        case(
            "past_key_alone",
            "PastValueTensor",
            "PastKey and PastValue come together",
            **_QKV,
            PastKeyTensor=(2, 2, 5, 4),
        ),
        case(
            "past_value_head_size",
            "PastValueTensor.Sizes[3]",
            "E103: PastValue's last dimension is the value head size (5), not the head size",
            **_QKV,
            PastKeyTensor=(2, 2, 5, 4),
            PastValueTensor=(2, 2, 5, 4),
        ),
        case(
            "past_sequences_differ",
            "PastValueTensor.Sizes[2]",
            "PastValue's sequence is PastKey's",
            **_QKV,
            PastKeyTensor=(2, 2, 5, 4),
            PastValueTensor=(2, 2, 6, 5),
        ),
        case(
            "present_without_past_total",
            "OutputPresentKeyTensor.Sizes[2]",
            "with a past, OutputPresentKey holds past + key sequence (9)",
            **_QKV,
            **_PAST,
            OutputPresentKeyTensor=(2, 2, 4, 4),
        ),
        case(
            "present_value_head_size",
            "OutputPresentValueTensor.Sizes[3]",
            "E103: OutputPresentValue's last dimension is the value head size",
            **_QKV,
            OutputPresentValueTensor=(2, 2, 4, 4),
        ),
        case("mask_with_type_none", "MaskTensor", "MaskType NONE takes no MaskTensor", **_QKV, MaskTensor=(2, 2, 3, 4)),
        case(
            "boolean_mask_broadcast",
            "MaskTensor.Sizes[1]",
            "a BOOLEAN mask is {batch, heads, S, T}: no broadcasting",
            "BOOLEAN",
            **_QKV,
            MaskTensor=(2, 1, 3, 4),
        ),
        case(
            "key_lengths_mask_shape",
            "MaskTensor.Sizes[0]",
            "a KEY_SEQUENCE_LENGTH mask is {1, batch}",
            "KEY_SEQUENCE_LENGTH",
            **_QKV,
            MaskTensor=(2, 2),
        ),
        case(
            "end_start_mask_shape",
            "MaskTensor.DimensionCount",
            "a KEY_SEQUENCE_END_START mask is {2, batch}",
            "KEY_SEQUENCE_END_START",
            **_QKV,
            MaskTensor=(2,),
        ),
        case(
            "start_end_mask_shape",
            "MaskTensor.Sizes[0]",
            "a KEY_QUERY_SEQUENCE_LENGTH_START_END mask is {3 batch + 2}",
            "KEY_QUERY_SEQUENCE_LENGTH_START_END",
            **_QKV,
            MaskTensor=(6,),
        ),
    ]


_MHA1 = "MULTIHEAD_ATTENTION1"
# grouped-query attention: 4 query heads over 2 key/value heads of size 4, value head size 5
_GQA = {"QueryTensor": (2, 3, 16), "KeyTensor": (2, 4, 8), "ValueTensor": (2, 4, 10), "OutputTensor": (2, 3, 20)}
MULTIHEAD_ATTENTION_CASES = [
    *_mha_cases("MULTIHEAD_ATTENTION"),
    RuleCase(
        "multihead_attention_head_count_zero",
        "MULTIHEAD_ATTENTION",
        _attention("MULTIHEAD_ATTENTION", (0, 0), **_QKV),
        "HeadCount",
        "HeadCount 0 (DirectML's host dies in CreateOperator)",
    ),
    RuleCase(
        "multihead_attention_head_count_divides_value",
        "MULTIHEAD_ATTENTION",
        _attention("MULTIHEAD_ATTENTION", (4, 4), **_QKV),
        "ValueTensor.Sizes[2]",
        "Value's hidden size (10) is a multiple of HeadCount (4)",
    ),
]
MULTIHEAD_ATTENTION1_CASES = [
    *_mha_cases(_MHA1),
    RuleCase(
        "multihead_attention1_valid_grouped",
        _MHA1,
        _attention(
            _MHA1,
            (4, 2),
            "BOOLEAN",
            **_GQA,
            PastKeyTensor=(2, 2, 5, 4),
            PastValueTensor=(2, 2, 5, 5),
            OutputPresentKeyTensor=(2, 2, 9, 4),
            RelativePositionBiasTensor=(2, 4, 3, 9),
            MaskTensor=(2, 4, 3, 9),
            BiasTensor=(34,),
        ),
        None,
        "E104: K, V, past and present take KeyValueHeadCount; Output, mask and RelativePositionBias QueryHeadCount",
    ),
    RuleCase(
        "multihead_attention1_valid_grouped_stacked_kv",
        _MHA1,
        _attention(
            _MHA1, (4, 2), QueryTensor=(2, 3, 16), StackedKeyValueTensor=(2, 4, 2, 2, 4), OutputTensor=(2, 3, 16)
        ),
        None,
        "E104: StackedKeyValue holds KeyValueHeadCount heads",
    ),
    RuleCase(
        "multihead_attention1_heads_not_multiple",
        _MHA1,
        _attention(
            _MHA1, (3, 2), QueryTensor=(2, 3, 12), KeyTensor=(2, 4, 8), ValueTensor=(2, 4, 10), OutputTensor=(2, 3, 15)
        ),
        "KeyValueHeadCount",
        "E104: KeyValueHeadCount divides QueryHeadCount",
    ),
    RuleCase(
        "multihead_attention1_more_kv_heads",
        _MHA1,
        _attention(
            _MHA1, (2, 4), QueryTensor=(2, 3, 8), KeyTensor=(2, 4, 16), ValueTensor=(2, 4, 20), OutputTensor=(2, 3, 10)
        ),
        "KeyValueHeadCount",
        "E104: KeyValueHeadCount divides QueryHeadCount",
    ),
    RuleCase(
        "multihead_attention1_stacked_qkv_grouped",
        _MHA1,
        _attention(_MHA1, (4, 2), StackedQueryKeyValueTensor=(2, 3, 4, 3, 4), OutputTensor=(2, 3, 16)),
        "KeyValueHeadCount",
        "E104: stacked query with key needs equal head counts",
    ),
    RuleCase(
        "multihead_attention1_past_query_heads",
        _MHA1,
        _attention(_MHA1, (4, 2), **_GQA, PastKeyTensor=(2, 4, 5, 4), PastValueTensor=(2, 4, 5, 5)),
        "PastKeyTensor.Sizes[1]",
        "E104: PastKey has KeyValueHeadCount heads",
    ),
    RuleCase(
        "multihead_attention1_mask_kv_heads",
        _MHA1,
        _attention(_MHA1, (4, 2), "BOOLEAN", **_GQA, MaskTensor=(2, 2, 3, 4)),
        "MaskTensor.Sizes[1]",
        "E104: a BOOLEAN mask has QueryHeadCount heads",
    ),
    RuleCase(
        "multihead_attention1_output_kv_heads",
        _MHA1,
        _attention(_MHA1, (4, 2), **{**_GQA, "OutputTensor": (2, 3, 10)}),
        "OutputTensor.Sizes[2]",
        "E104: Output is QueryHeadCount x value head size",
    ),
]

CASES += [*MULTIHEAD_ATTENTION_CASES, *MULTIHEAD_ATTENTION1_CASES]
