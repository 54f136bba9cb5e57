"""Rule cases of the convolution operators (see the package docstring)."""

from __future__ import annotations

from typing import Any

from rule_cases import RuleCase


def _t(data_type: str, *sizes: int) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


def _windows(n: int, **arrays: Any) -> dict[str, Any]:
    """Strides, Dilations (ones) and paddings (zeros) of ``n`` axes, overridden by ``arrays``."""
    base = {"Strides": [1] * n, "Dilations": [1] * n, "StartPadding": [0] * n, "EndPadding": [0] * n}
    return {**base, **{k: list(v) for k, v in arrays.items()}}


# -- CONVOLUTION ----------------------------------------------------------------------


def _conv(
    inp: tuple[int, ...] = (2, 4, 8, 8),
    filt: tuple[int, ...] = (6, 4, 3, 3),
    out: tuple[int, ...] = (2, 6, 6, 6),
    bias: tuple[int, ...] | None = (1, 6, 1, 1),
    direction: str = "FORWARD",
    groups: int = 1,
    n: int | None = None,
    **arrays: Any,
) -> dict[str, Any]:
    n = len(inp) - 2 if n is None else n
    desc = {
        "InputTensor": _t("FLOAT32", *inp),
        "FilterTensor": _t("FLOAT32", *filt),
        "OutputTensor": _t("FLOAT32", *out),
        "Mode": "CROSS_CORRELATION",
        "Direction": direction,
        **_windows(n, **{"OutputPadding": [0] * n, **arrays}),
        "GroupCount": groups,
    }
    if bias is not None:
        desc["BiasTensor"] = _t("FLOAT32", *bias)
    return desc


# BACKWARD: 4 input channels, 6 output channels in 2 groups, 3x3 to 8x8 with Strides 2.
_BACKWARD = {
    "inp": (1, 4, 3, 3),
    "filt": (4, 3, 3, 3),
    "out": (1, 6, 8, 8),
    "direction": "BACKWARD",
    "groups": 2,
    "Strides": (2, 2),
    "OutputPadding": (1, 1),
}


def _conv_case(name: str, rejects: str | None, why: str, **kwargs: Any) -> RuleCase:
    return RuleCase(f"convolution_{name}", "CONVOLUTION", _conv(**kwargs), rejects, why)


CONVOLUTION_CASES = [
    _conv_case("valid_3x3_bias", None, "a 3x3 convolution of a batch of two, with bias"),
    _conv_case(
        "valid_backward_grouped", None, "transposed: FilterTensor {InputChannels, OutputChannels / G}", **_BACKWARD
    ),
    _conv_case(
        "valid_depthwise_5d",
        None,
        "depth-wise 3-D convolution: GroupCount = channels, FilterTensor {4, 1, ...}",
        inp=(1, 4, 5, 5, 5),
        filt=(4, 1, 3, 3, 3),
        out=(1, 4, 5, 5, 5),
        bias=(1, 4, 1, 1, 1),
        groups=4,
        StartPadding=(1, 1, 1),
        EndPadding=(1, 1, 1),
    ),
    _conv_case(
        "valid_1d_no_bias",
        None,
        "3-D tensors, one spatial axis, no BiasTensor",
        inp=(1, 4, 9),
        filt=(6, 4, 3),
        out=(1, 6, 7),
        bias=None,
    ),
    _conv_case(
        "valid_any_spatial_output",
        None,
        "E90: DirectML checks no spatial output size (4x7 where the formula gives 6x6) and accepts 0 in Strides, Dilations",
        out=(2, 6, 4, 7),
        Strides=(0, 1),
        Dilations=(1, 0),
    ),
    _conv_case(
        "valid_dimension_count_1_on_4d",
        None,
        "E91: 1 array entry beside 4-D tensors (applied to W)",
        n=1,
        OutputPadding=(5,),
    ),
    _conv_case(
        "valid_dimension_count_3_on_4d",
        None,
        "E91: 3 array entries beside 4-D tensors (applied to {1, H, W})",
        n=3,
        OutputPadding=(0, 5, 5),
    ),
    _conv_case(
        "valid_forward_output_padding",
        None,
        "E92: OutputPadding below the output size, forward too",
        OutputPadding=(5, 1),
    ),
    _conv_case("dimension_count_4", "DimensionCount", "E91: a DimensionCount above 3 is rejected", n=4),
    _conv_case("dimension_count_0", "DimensionCount", "E91: DimensionCount 0 is rejected", n=0),
    _conv_case("batch", "OutputTensor.Sizes[0]", "the output keeps the input's batch", out=(1, 6, 6, 6)),
    _conv_case("group_count_0", "GroupCount", "GroupCount is at least 1", groups=0),
    _conv_case(
        "group_count_divides",
        "GroupCount",
        "GroupCount divides both channel counts (4 and 6)",
        groups=4,
        filt=(6, 1, 3, 3),
    ),
    _conv_case(
        "filter_output_channels",
        "FilterTensor.Sizes[0]",
        "forward FilterTensor.Sizes[0] is OutputChannels",
        filt=(5, 4, 3, 3),
    ),
    _conv_case(
        "filter_group_channels",
        "FilterTensor.Sizes[1]",
        "forward FilterTensor.Sizes[1] is InputChannels / GroupCount",
        groups=2,
    ),
    _conv_case(
        "backward_filter_input_channels",
        "FilterTensor.Sizes[0]",
        "backward FilterTensor.Sizes[0] is InputChannels",
        **{**_BACKWARD, "filt": (6, 2, 3, 3)},
    ),
    _conv_case(
        "backward_filter_group_channels",
        "FilterTensor.Sizes[1]",
        "backward FilterTensor.Sizes[1] is OutputChannels / GroupCount",
        **{**_BACKWARD, "filt": (4, 6, 3, 3)},
    ),
    _conv_case("bias_channels", "BiasTensor.Sizes[1]", "BiasTensor is {1, OutputChannels, 1, 1}", bias=(1, 1, 1, 1)),
    _conv_case("bias_spatial", "BiasTensor.Sizes[2]", "BiasTensor is {1, OutputChannels, 1, 1}", bias=(1, 6, 6, 6)),
    _conv_case(
        "output_padding",
        "OutputPadding[1]",
        "E92: OutputPadding[i] below the output's size on its axis",
        **{**_BACKWARD, "OutputPadding": (1, 8)},
    ),
    _conv_case(
        "output_padding_missing_axis",
        "OutputPadding[0]",
        "E92: with 3 entries beside 4-D tensors the first applies to a size of 1",
        n=3,
        OutputPadding=(1, 0, 0),
    ),
]


# -- CONVOLUTION_INTEGER --------------------------------------------------------------


def _integer(
    inp: tuple[int, ...] = (1, 3, 8, 8),
    filt: tuple[int, ...] = (8, 3, 3, 3),
    out: tuple[int, ...] = (1, 8, 6, 6),
    izp: tuple[int, ...] | None = (1, 1, 1, 1),
    fzp: tuple[int, ...] | None = (1, 8, 1, 1),
    groups: int = 1,
    n: int | None = None,
    **arrays: Any,
) -> dict[str, Any]:
    desc = {
        "InputTensor": _t("UINT8", *inp),
        "FilterTensor": _t("INT8", *filt),
        "OutputTensor": _t("INT32", *out),
        **_windows(len(inp) - 2 if n is None else n, **arrays),
        "GroupCount": groups,
    }
    if izp is not None:
        desc["InputZeroPointTensor"] = _t("UINT8", *izp)
    if fzp is not None:
        desc["FilterZeroPointTensor"] = _t("INT8", *fzp)
    return desc


def _integer_case(name: str, rejects: str | None, why: str, **kwargs: Any) -> RuleCase:
    return RuleCase(f"convolution_integer_{name}", "CONVOLUTION_INTEGER", _integer(**kwargs), rejects, why)


CONVOLUTION_INTEGER_CASES = [
    _integer_case("valid_per_channel", None, "UINT8 input, INT8 filter, a per-channel filter zero point"),
    _integer_case(
        "valid_grouped_per_tensor",
        None,
        "GroupCount 2 with per-tensor zero points",
        inp=(1, 4, 8, 8),
        filt=(8, 2, 3, 3),
        fzp=(1, 1, 1, 1),
        groups=2,
    ),
    _integer_case("valid_no_zero_points", None, "both zero points absent", izp=None, fzp=None),
    _integer_case(
        "valid_1d_2d_zero_point",
        None,
        "E94: 3-D tensors, a per-channel zero point {1, M} of 2 dimensions",
        inp=(1, 3, 9),
        filt=(8, 3, 3),
        out=(1, 8, 7),
        izp=(1,),
        fzp=(1, 8),
    ),
    _integer_case("valid_dimension_count_3", None, "E93: DimensionCount 3 beside 4-D tensors (the page: only 2)", n=3),
    _integer_case("batch", "OutputTensor.Sizes[0]", "the output keeps the input's batch", out=(2, 8, 6, 6)),
    _integer_case("group_count_0", "GroupCount", "GroupCount is at least 1", groups=0),
    _integer_case("group_count_divides", "GroupCount", "GroupCount divides both channel counts", groups=2),
    _integer_case(
        "filter_output_channels", "FilterTensor.Sizes[0]", "FilterTensor.Sizes[0] is OutputChannels", filt=(4, 3, 3, 3)
    ),
    _integer_case(
        "filter_input_channels", "FilterTensor.Sizes[1]", "FilterTensor.Sizes[1] is InputChannels", filt=(8, 1, 3, 3)
    ),
    _integer_case("input_zero_point", "InputZeroPointTensor.Sizes[1]", "one input zero point", izp=(1, 3, 1, 1)),
    _integer_case(
        "filter_zero_point_channels",
        "FilterZeroPointTensor.Sizes[1]",
        "per channel: {1, OutputChannels, 1, 1}",
        fzp=(1, 3, 1, 1),
    ),
    _integer_case(
        "filter_zero_point_axis", "FilterZeroPointTensor.Sizes[0]", "the channels at index 1, not 0", fzp=(8, 1, 1, 1)
    ),
]


# -- QUANTIZED_LINEAR_CONVOLUTION -----------------------------------------------------

_ONE = (1, 1, 1, 1)


def _quantized(
    inp: tuple[int, ...] = (1, 3, 8, 8),
    filt: tuple[int, ...] = (8, 3, 3, 3),
    out: tuple[int, ...] = (1, 8, 6, 6),
    scales: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] = (_ONE, (1, 8, 1, 1), _ONE),
    zero_points: tuple[tuple[int, ...] | None, ...] = (_ONE, (1, 8, 1, 1), _ONE),
    bias: tuple[int, ...] | None = (1, 8, 1, 1),
    groups: int = 1,
    n: int | None = None,
) -> dict[str, Any]:
    desc = {
        "InputTensor": _t("UINT8", *inp),
        "FilterTensor": _t("INT8", *filt),
        "OutputTensor": _t("UINT8", *out),
        **_windows(len(inp) - 2 if n is None else n),
        "GroupCount": groups,
    }
    for prefix, data_type, scale, zero_point in zip(
        ("Input", "Filter", "Output"), ("UINT8", "INT8", "UINT8"), scales, zero_points
    ):
        desc[f"{prefix}ScaleTensor"] = _t("FLOAT32", *scale)
        if zero_point is not None:
            desc[f"{prefix}ZeroPointTensor"] = _t(data_type, *zero_point)
    if bias is not None:
        desc["BiasTensor"] = _t("INT32", *bias)
    return desc


def _quantized_case(name: str, rejects: str | None, why: str, **kwargs: Any) -> RuleCase:
    return RuleCase(
        f"quantized_linear_convolution_{name}", "QUANTIZED_LINEAR_CONVOLUTION", _quantized(**kwargs), rejects, why
    )


QUANTIZED_LINEAR_CONVOLUTION_CASES = [
    _quantized_case("valid_per_channel", None, "per-channel filter scale and zero point, INT32 bias"),
    _quantized_case(
        "valid_per_tensor_no_optionals",
        None,
        "per-tensor filter scale, no zero point and no bias",
        scales=(_ONE, _ONE, _ONE),
        zero_points=(None, None, None),
        bias=None,
    ),
    _quantized_case(
        "valid_depthwise",
        None,
        "GroupCount = channels, FilterTensor {3, 1, 3, 3}",
        filt=(3, 1, 3, 3),
        out=(1, 3, 6, 6),
        scales=(_ONE, (1, 3, 1, 1), _ONE),
        zero_points=(_ONE, (1, 3, 1, 1), _ONE),
        bias=(1, 3, 1, 1),
        groups=3,
    ),
    _quantized_case(
        "valid_2d_filter_scale_3d_bias",
        None,
        "E94: a {1, M} filter scale and zero point, a 3-D bias {1, M, 1} beside 4-D tensors",
        scales=(_ONE, (1, 8), _ONE),
        zero_points=(_ONE, (1, 8), _ONE),
        bias=(1, 8, 1),
    ),
    _quantized_case(
        "valid_dimension_count_1", None, "E93: DimensionCount 1 beside 4-D tensors (the page: only 2)", n=1
    ),
    _quantized_case("valid_dimension_count_0", None, "E93: DimensionCount 0 (empty arrays) accepted too", n=0),
    _quantized_case("batch", "OutputTensor.Sizes[0]", "the output keeps the input's batch", out=(2, 8, 6, 6)),
    _quantized_case("group_count_0", "GroupCount", "GroupCount is at least 1", groups=0),
    _quantized_case("group_count_divides", "GroupCount", "GroupCount divides both channel counts", groups=2),
    _quantized_case(
        "filter_output_channels", "FilterTensor.Sizes[0]", "FilterTensor.Sizes[0] is OutputChannels", filt=(4, 3, 3, 3)
    ),
    _quantized_case(
        "filter_input_channels", "FilterTensor.Sizes[1]", "FilterTensor.Sizes[1] is InputChannels", filt=(8, 1, 3, 3)
    ),
    _quantized_case(
        "input_scale", "InputScaleTensor.Sizes[1]", "one input scale", scales=((1, 3, 1, 1), (1, 8, 1, 1), _ONE)
    ),
    _quantized_case(
        "input_zero_point",
        "InputZeroPointTensor.Sizes[1]",
        "one input zero point",
        zero_points=((1, 3, 1, 1), (1, 8, 1, 1), _ONE),
    ),
    _quantized_case(
        "output_scale", "OutputScaleTensor.Sizes[1]", "one output scale", scales=(_ONE, (1, 8, 1, 1), (1, 8, 1, 1))
    ),
    _quantized_case(
        "output_zero_point",
        "OutputZeroPointTensor.Sizes[1]",
        "one output zero point",
        zero_points=(_ONE, (1, 8, 1, 1), (1, 8, 1, 1)),
    ),
    _quantized_case(
        "filter_scale_channels",
        "FilterScaleTensor.Sizes[1]",
        "per channel: {1, OutputChannels, 1, 1}",
        scales=(_ONE, (1, 3, 1, 1), _ONE),
        zero_points=(_ONE, None, _ONE),
    ),
    _quantized_case(
        "filter_zero_point_like_scale",
        "FilterZeroPointTensor.Sizes",
        "E94: the filter scale and zero point are both per tensor or both per channel",
        zero_points=(_ONE, _ONE, _ONE),
    ),
    _quantized_case("bias_channels", "BiasTensor.Sizes[1]", "BiasTensor is {1, OutputChannels, 1, 1}", bias=_ONE),
]


# -- FOLD, UNFOLD ---------------------------------------------------------------------


def _fold(inp: tuple[int, ...], out: tuple[int, ...], windows: tuple[int, ...], **arrays: Any) -> dict[str, Any]:
    return {
        "InputTensor": _t("FLOAT32", *inp),
        "OutputTensor": _t("FLOAT32", *out),
        "WindowSizes": list(windows),
        **_windows(len(windows), **arrays),
    }


def _fold_case(operator: str, name: str, rejects: str | None, why: str, *shape: Any, **arrays: Any) -> RuleCase:
    return RuleCase(f"{operator.lower()}_{name}", operator, _fold(*shape, **arrays), rejects, why)


# FOLD's image is its output, UNFOLD's its input: each case is written once, image first.
_FOLD_CASES: list[tuple[str, str | None, str, tuple[int, ...], tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ("valid_page_example", None, "the page's example: 3x3 windows over 4x4", (1, 1, 4, 4), (1, 9, 4), (3, 3), {}),
    (
        "valid_padded_two_channels",
        None,
        "the page's example 3: 2 channels, padding {1, 0}",
        (1, 2, 4, 4),
        (1, 18, 8),
        (3, 3),
        {"StartPadding": (1, 0), "EndPadding": (1, 0)},
    ),
    (
        "valid_strided_floor",
        None,
        "Strides 2 over 4: (4 - 3) // 2 + 1 = 1 position per axis",
        (1, 1, 4, 4),
        (1, 9, 1),
        (3, 3),
        {"Strides": (2, 2)},
    ),
    (
        "valid_dilated_3d",
        None,
        "3 spatial axes, Dilations 2: 2 positions per axis",
        (2, 1, 4, 4, 4),
        (2, 8, 8),
        (2, 2, 2),
        {"Dilations": (2, 2, 2)},
    ),
    (
        "valid_window_fits_padding",
        None,
        "a window larger than the image fits its padding",
        (1, 1, 2, 2),
        (1, 9, 1),
        (3, 3),
        {"StartPadding": (1, 1)},
    ),
    (
        "valid_leading_axes",
        None,
        "E95: DimensionCount 1 beside a 4-D image: windows over Sizes[2] only, Sizes[3] ignored",
        (1, 1, 4, 7),
        (1, 3, 2),
        (3,),
        {},
    ),
    ("dimension_count_0", "DimensionCount", "DimensionCount is at least 1", (1, 1, 4, 4), (1, 1, 1), (), {}),
    (
        "dimension_count_above_image",
        "DimensionCount",
        "E95: DimensionCount above the image's spatial axes (DirectML's host crashes)",
        (1, 1, 4),
        (1, 9, 1),
        (3, 3),
        {},
    ),
    ("window_0", "WindowSizes[0]", "WindowSizes entries are at least 1", (1, 1, 4, 4), (1, 9, 4), (0, 3), {}),
    ("strides_0", "Strides[1]", "Strides entries are at least 1", (1, 1, 4, 4), (1, 9, 4), (3, 3), {"Strides": (1, 0)}),
    (
        "dilations_0",
        "Dilations[0]",
        "Dilations entries are at least 1",
        (1, 1, 4, 4),
        (1, 9, 4),
        (3, 3),
        {"Dilations": (0, 1)},
    ),
    (
        "window_too_large",
        "WindowSizes[1]",
        "the dilated window fits the padded image (3 > 2, even with Strides 2)",
        (1, 1, 4, 2),
        (1, 9, 1),
        (3, 3),
        {"Strides": (2, 2)},
    ),
]


def _columns_cases(operator: str, columns: str) -> list[RuleCase]:
    """The three size rules of the columns tensor {N, C * prod(WindowSizes), L}, image {1, 2, 4, 4}."""
    rows = [
        ("columns_batch", "Sizes[0]", "the columns keep the image's batch", (2, 18, 4)),
        ("columns_channels", "Sizes[1]", "C * prod(WindowSizes) = 18", (1, 9, 4)),
        ("columns_positions", "Sizes[2]", "2 x 2 window positions", (1, 18, 9)),
    ]
    return [
        _fold_case(operator, name, f"{columns}.{member}", why, *_image_first(operator, (1, 2, 4, 4), sizes), (3, 3))
        for name, member, why, sizes in rows
    ]


def _image_first(operator: str, image: tuple[int, ...], columns: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """(InputTensor sizes, OutputTensor sizes) of ``operator`` from the image's and the columns'."""
    return (columns, image) if operator == "FOLD" else (image, columns)


FOLD_UNFOLD_CASES = [
    _fold_case(operator, name, rejects, why, *_image_first(operator, image, columns), windows, **arrays)
    for operator in ("FOLD", "UNFOLD")
    for name, rejects, why, image, columns, windows, arrays in _FOLD_CASES
] + [
    case
    for operator, columns in (("FOLD", "InputTensor"), ("UNFOLD", "OutputTensor"))
    for case in _columns_cases(operator, columns)
]


CASES: list[RuleCase] = [
    *CONVOLUTION_CASES,
    *CONVOLUTION_INTEGER_CASES,
    *QUANTIZED_LINEAR_CONVOLUTION_CASES,
    *FOLD_UNFOLD_CASES,
]
