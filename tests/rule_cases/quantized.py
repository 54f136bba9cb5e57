"""Rule cases of the quantized operators (see the package docstring)."""

from __future__ import annotations

from typing import Any

from rule_cases import RuleCase

ONE = (1, 1, 1, 1)


def _t(data_type: str, *sizes: int) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


def _dynamic(
    input_: tuple[int, ...] = (2, 3, 4, 5),
    output: tuple[int, ...] | None = None,
    scale: tuple[int, ...] = ONE,
    zero_point: tuple[int, ...] | None = None,
    quantized: str = "UINT8",
) -> dict[str, Any]:
    return {
        "InputTensor": _t("FLOAT32", *input_),
        "OutputTensor": _t(quantized, *(output or input_)),
        "OutputScaleTensor": _t("FLOAT32", *scale),
        "OutputZeroPointTensor": _t(quantized, *(zero_point or scale)),
    }


def _quantize(
    op: str,
    kind: str,
    tensors: list[tuple[str, tuple[int, ...]]],
    input_: tuple[int, ...] = (2, 3, 4, 8),
    output: tuple[int, ...] | None = None,
    quantized: str = "INT8",
) -> dict[str, Any]:
    """QUANTIZE (FLOAT32 -> ``quantized``) or DEQUANTIZE (``quantized`` -> FLOAT32)."""
    input_type, output_type = ("FLOAT32", quantized) if op == "QUANTIZE" else (quantized, "FLOAT32")
    return {
        "InputTensor": _t(input_type, *input_),
        "QuantizationType": kind,
        "QuantizationTensors": [_t(dt, *sizes) for dt, sizes in tensors],
        "OutputTensor": _t(output_type, *(output or input_)),
    }


def _quantize_cases(op: str) -> list[RuleCase]:
    p = op.lower()

    def case(name: str, rejects: str | None, why: str, *args: Any, **kwargs: Any) -> RuleCase:
        return RuleCase(f"{p}_{name}", op, _quantize(op, *args, **kwargs), rejects, why)

    scale = ("FLOAT32", ONE)
    return [
        case("valid_per_tensor_scale", None, "SCALE: one per-tensor scale", "SCALE", [scale]),
        case(
            "valid_per_channel_zero_point",
            None,
            "SCALE_ZERO_POINT: a scale and a zero point per channel, UINT8",
            "SCALE_ZERO_POINT",
            [("FLOAT32", (1, 3, 1, 1)), ("UINT8", (1, 3, 1, 1))],
            quantized="UINT8",
        ),
        case(
            "valid_blocked_last_axis",
            None,
            "blocks of 4 on the last axis: each scale size divides the input's",
            "SCALE_ZERO_POINT",
            [("FLOAT32", (2, 3, 4, 2)), ("INT8", (2, 3, 4, 2))],
        ),
        case(
            "valid_blocked_two_axes",
            None,
            "blocks on two axes at once (2 and 4 long) beside a broadcast and a full axis",
            "SCALE",
            [("FLOAT32", (1, 3, 2, 2))],
        ),
        case("valid_per_element", None, "a scale per element", "SCALE", [("FLOAT32", (2, 3, 4, 8))]),
        case("valid_1d_blocks", None, "1-D: 3 scales for 6 elements", "SCALE", [("FLOAT32", (3,))], input_=(6,)),
        case(
            "valid_8d",
            None,
            "8 dimensions",
            "SCALE_ZERO_POINT",
            [("FLOAT32", (1,) * 8), ("INT8", (1,) * 8)],
            input_=(1, 2, 1, 2, 1, 2, 1, 2),
        ),
        case("type_none_empty", "QuantizationType", "NONE is rejected with no tensors (E130)", "NONE", []),
        case("type_none_scale", "QuantizationType", "NONE is rejected with a scale (E130)", "NONE", [scale]),
        case("scale_no_tensor", "QuantizationTensorCount", "SCALE takes exactly one tensor", "SCALE", []),
        case(
            "scale_two_tensors",
            "QuantizationTensorCount",
            "SCALE takes exactly one tensor",
            "SCALE",
            [scale, ("INT8", ONE)],
        ),
        case(
            "zero_point_one_tensor",
            "QuantizationTensorCount",
            "SCALE_ZERO_POINT takes a scale and a zero point",
            "SCALE_ZERO_POINT",
            [scale],
        ),
        case(
            "zero_point_three_tensors",
            "QuantizationTensorCount",
            "SCALE_ZERO_POINT takes a scale and a zero point",
            "SCALE_ZERO_POINT",
            [scale, ("INT8", ONE), ("INT8", ONE)],
        ),
        case(
            "output_sizes",
            "OutputTensor.Sizes",
            "OutputTensor has InputTensor's Sizes",
            "SCALE",
            [scale],
            output=(2, 3, 4, 4),
        ),
        case(
            "scale_int8",
            "QuantizationTensors[0].DataType",
            "the scale is a float tensor",
            "SCALE",
            [("INT8", ONE)],
        ),
        case(
            "scale_block_not_dividing",
            "QuantizationTensors[0].Sizes[3]",
            "3 scales do not divide 8 elements",
            "SCALE",
            [("FLOAT32", (2, 3, 4, 3))],
        ),
        case(
            "scale_ceil_blocks",
            "QuantizationTensors[0].Sizes[0]",
            "no ragged last block: 4 scales for 7 elements rejected",
            "SCALE",
            [("FLOAT32", (4,))],
            input_=(7,),
        ),
        case(
            "scale_larger_than_input",
            "QuantizationTensors[0].Sizes[3]",
            "more scales than elements on an axis",
            "SCALE",
            [("FLOAT32", (1, 1, 1, 16))],
        ),
        case(
            "zero_point_data_type",
            "QuantizationTensors[1].DataType",
            "the zero point has the quantized tensor's DataType (UINT8 beside INT8)",
            "SCALE_ZERO_POINT",
            [scale, ("UINT8", ONE)],
        ),
        case(
            "zero_point_float",
            "QuantizationTensors[1].DataType",
            "the zero point has the quantized tensor's DataType (FLOAT32 beside INT8)",
            "SCALE_ZERO_POINT",
            [scale, ("FLOAT32", ONE)],
        ),
        case(
            "zero_point_sizes",
            "QuantizationTensors[1].Sizes",
            "the zero point has the scale's Sizes (per-tensor beside per-channel)",
            "SCALE_ZERO_POINT",
            [("FLOAT32", (1, 3, 1, 1)), ("INT8", ONE)],
        ),
        case(
            "zero_point_finer_than_scale",
            "QuantizationTensors[1].Sizes",
            "the zero point has the scale's Sizes, even where its own would divide the input's",
            "SCALE_ZERO_POINT",
            [("FLOAT32", (1, 1, 1, 2)), ("INT8", (1, 1, 1, 4))],
        ),
    ]


def _pooling(
    input_: tuple[int, ...] = (1, 3, 6, 6),
    output: tuple[int, ...] = (1, 3, 3, 3),
    input_scale: tuple[int, ...] = ONE,
    output_scale: tuple[int, ...] = ONE,
    input_zero_point: tuple[int, ...] | str | None = "scale",
    output_zero_point: tuple[int, ...] | str | None = "scale",
    strides: tuple[int, ...] = (2, 2),
    window: tuple[int, ...] = (2, 2),
    padding: tuple[int, ...] = (0, 0),
    dilations: tuple[int, ...] | None = None,
    data_type: str = "INT8",
    include_padding: bool = False,
) -> dict[str, Any]:
    desc: dict[str, Any] = {
        "InputTensor": _t(data_type, *input_),
        "InputScaleTensor": _t("FLOAT32", *input_scale),
        "OutputScaleTensor": _t("FLOAT32", *output_scale),
        "OutputTensor": _t(data_type, *output),
        "Strides": list(strides),
        "WindowSize": list(window),
        "StartPadding": list(padding),
        "EndPadding": list(padding),
        "Dilations": list(dilations or (1,) * len(strides)),
        "IncludePadding": include_padding,
    }
    for member, sizes, scale in (
        ("InputZeroPointTensor", input_zero_point, input_scale),
        ("OutputZeroPointTensor", output_zero_point, output_scale),
    ):
        if sizes is not None:
            desc[member] = _t(data_type, *(scale if sizes == "scale" else sizes))
    return desc


_QLAP = "QUANTIZED_LINEAR_AVERAGE_POOLING"


def _qlap(name: str, rejects: str | None, why: str, **kwargs: Any) -> RuleCase:
    return RuleCase(f"quantized_linear_average_pooling_{name}", _QLAP, _pooling(**kwargs), rejects, why)


CASES: list[RuleCase] = [
    RuleCase("dynamic_quantize_linear_valid", "DYNAMIC_QUANTIZE_LINEAR", _dynamic(), None, "UINT8, 4-D"),
    RuleCase(
        "dynamic_quantize_linear_valid_1d_int8",
        "DYNAMIC_QUANTIZE_LINEAR",
        _dynamic((7,), scale=(1,), quantized="INT8"),
        None,
        "INT8, 1-D",
    ),
    RuleCase(
        "dynamic_quantize_linear_valid_8d",
        "DYNAMIC_QUANTIZE_LINEAR",
        _dynamic((1, 2, 1, 2, 1, 2, 1, 2), scale=(1,) * 8),
        None,
        "8 dimensions",
    ),
    RuleCase(
        "dynamic_quantize_linear_output_sizes",
        "DYNAMIC_QUANTIZE_LINEAR",
        _dynamic(output=(2, 3, 4, 4)),
        "OutputTensor.Sizes",
        "OutputTensor has InputTensor's Sizes",
    ),
    RuleCase(
        "dynamic_quantize_linear_output_reshaped",
        "DYNAMIC_QUANTIZE_LINEAR",
        _dynamic(output=(3, 2, 4, 5)),
        "OutputTensor.Sizes",
        "OutputTensor has InputTensor's Sizes, not just its element count",
    ),
    RuleCase(
        "dynamic_quantize_linear_scale_per_channel",
        "DYNAMIC_QUANTIZE_LINEAR",
        _dynamic(scale=(1, 3, 1, 1), zero_point=ONE),
        "OutputScaleTensor.Sizes[1]",
        "OutputScaleTensor holds one element",
    ),
    RuleCase(
        "dynamic_quantize_linear_zero_point_two",
        "DYNAMIC_QUANTIZE_LINEAR",
        _dynamic(zero_point=(1, 1, 1, 2)),
        "OutputZeroPointTensor.Sizes[3]",
        "OutputZeroPointTensor holds one element",
    ),
    *_quantize_cases("QUANTIZE"),
    *_quantize_cases("DEQUANTIZE"),
    _qlap("valid", None, "2x2 windows, stride 2, per-tensor scales and zero points"),
    _qlap("valid_no_zero_points", None, "both zero points absent", input_zero_point=None, output_zero_point=None),
    _qlap("valid_input_zero_point_only", None, "one zero point without the other", output_zero_point=None),
    _qlap(
        "valid_uint8_padding",
        None,
        "UINT8, padding counted in the average",
        data_type="UINT8",
        padding=(1, 1),
        output=(1, 3, 4, 4),
        include_padding=True,
    ),
    _qlap(
        "valid_5d",
        None,
        "5-D input, 3 spatial dimensions",
        input_=(1, 2, 4, 4, 4),
        output=(1, 2, 2, 2, 2),
        input_scale=(1,) * 5,
        output_scale=(1,) * 5,
        strides=(2, 2, 2),
        window=(2, 2, 2),
        padding=(0, 0, 0),
    ),
    _qlap(
        "valid_per_channel",
        None,
        "per-channel scales and zero points {1, C, 1, 1}",
        input_scale=(1, 3, 1, 1),
        output_scale=(1, 3, 1, 1),
    ),
    _qlap(
        "valid_any_scale_sizes",
        None,
        "DirectML accepts scale Sizes other than {1, 1, 1, 1} and {1, C, 1, 1} (E132)",
        input_scale=(9, 9, 9, 9),
        output_scale=(3,),
    ),
    _qlap(
        "valid_any_output_size",
        None,
        "DirectML accepts spatial output sizes off the page's formula (E131)",
        output=(1, 3, 4, 2),
    ),
    _qlap(
        "valid_zero_stride_window_dilation",
        None,
        "DirectML accepts 0 in Strides, WindowSize and Dilations (E131)",
        strides=(0, 2),
        window=(2, 0),
        dilations=(0, 1),
    ),
    _qlap(
        "dimension_count",
        "DimensionCount",
        "DimensionCount is InputTensor's DimensionCount - 2",
        strides=(2, 2, 2),
        window=(2, 2, 2),
        padding=(0, 0, 0),
    ),
    _qlap("output_batch", "OutputTensor.Sizes[0]", "OutputTensor's N is InputTensor's", output=(2, 3, 3, 3)),
    _qlap("output_channels", "OutputTensor.Sizes[1]", "OutputTensor's C is InputTensor's", output=(1, 2, 3, 3)),
    _qlap(
        "input_zero_point_sizes",
        "InputZeroPointTensor.Sizes[1]",
        "InputZeroPointTensor has InputScaleTensor's Sizes (per-tensor beside per-channel)",
        input_scale=(1, 3, 1, 1),
        input_zero_point=ONE,
    ),
    _qlap(
        "input_zero_point_per_channel",
        "InputZeroPointTensor.Sizes[1]",
        "InputZeroPointTensor has InputScaleTensor's Sizes (per-channel beside per-tensor)",
        input_zero_point=(1, 3, 1, 1),
    ),
    _qlap(
        "output_zero_point_sizes",
        "OutputZeroPointTensor.Sizes[1]",
        "OutputZeroPointTensor has OutputScaleTensor's Sizes",
        output_scale=(1, 3, 1, 1),
        output_zero_point=ONE,
    ),
]
