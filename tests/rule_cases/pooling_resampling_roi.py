"""Rule cases of the pooling_resampling_roi operators (see the package docstring).

AVERAGE_POOLING_GRAD, MAX_UNPOOLING (descs/pooling.py), RESAMPLE_GRAD, RESAMPLE3,
VALUE_SCALE_2D (descs/resampling.py), ROI_ALIGN_GRAD and ROI_POOLING (descs/roi.py).
"""

from __future__ import annotations

from typing import Any

from rule_cases import RuleCase

INF = float("inf")
NAN = float("nan")
EPS = 2.0**-23
"""FLT_EPSILON, the smallest Scales entry DirectML accepts."""


def _t(sizes: tuple[int, ...], data_type: str = "FLOAT32") -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


def _case(operator: str, build: Any, name: str, rejects: str | None, why: str, **changes: Any) -> RuleCase:
    return RuleCase(f"{operator.lower()}_{name}", operator, build(**changes), rejects, why)


# -- AVERAGE_POOLING_GRAD --------------------------------------------------------------------


def _average_pooling_grad(
    dy: tuple[int, ...] = (2, 3, 4, 4),
    dx: tuple[int, ...] = (2, 3, 8, 8),
    strides: tuple[int, ...] = (2, 2),
    window: tuple[int, ...] = (2, 2),
    start: tuple[int, ...] = (0, 0),
    end: tuple[int, ...] = (0, 0),
    include_padding: bool = False,
) -> dict[str, Any]:
    return {
        "InputGradientTensor": _t(dy),
        "OutputGradientTensor": _t(dx),
        "Strides": list(strides),
        "WindowSize": list(window),
        "StartPadding": list(start),
        "EndPadding": list(end),
        "IncludePadding": include_padding,
    }


def _apg(name: str, rejects: str | None, why: str, **changes: Any) -> RuleCase:
    return _case("AVERAGE_POOLING_GRAD", _average_pooling_grad, name, rejects, why, **changes)


_D3 = {"strides": (1, 2, 2), "window": (2, 2, 2), "start": (0, 0, 0), "end": (0, 0, 0)}

AVERAGE_POOLING_GRAD = [
    _apg("valid_2x2_stride_2", None, "the gradient of a 2x2, stride-2 average pooling of 2x3x8x8"),
    _apg("valid_5d", None, "3 spatial dimensions", dy=(1, 2, 3, 4, 4), dx=(1, 2, 4, 8, 8), **_D3),
    _apg(
        "valid_padding_include",
        None,
        "padding wider than the window, IncludePadding",
        dy=(2, 3, 7, 7),
        dx=(2, 3, 4, 4),
        strides=(1, 1),
        start=(2, 2),
        end=(2, 2),
        include_padding=True,
    ),
    _apg(
        "valid_any_spatial_size",
        None,
        "InputGradientTensor's spatial sizes need not be the forward output's (the page's 'typically'): "
        "DirectML accepts 5x3 for a 4x4 forward output",
        dy=(2, 3, 5, 3),
    ),
    _apg(
        "valid_zero_stride_window", None, "DirectML accepts 0 in Strides and WindowSize", strides=(0, 1), window=(2, 0)
    ),
    _apg(
        "dimension_count_not_spatial",
        "DimensionCount",
        "DimensionCount is the spatial dimension count (2 for 4-D tensors)",
        **_D3,
    ),
    _apg(
        "dimension_count_5d_with_2",
        "DimensionCount",
        "DimensionCount is 3 for 5-D tensors",
        dy=(1, 2, 3, 4, 4),
        dx=(1, 2, 4, 8, 8),
    ),
    _apg("batch_differs", "InputGradientTensor.Sizes[0]", "N is the forward input's (DirectML)", dy=(1, 3, 4, 4)),
    _apg("channels_differ", "InputGradientTensor.Sizes[1]", "C is the forward input's (DirectML)", dy=(2, 1, 4, 4)),
]


# -- MAX_UNPOOLING --------------------------------------------------------------------------


def _max_unpooling(
    x: tuple[int, ...] = (2, 3, 2, 2),
    indices: tuple[int, ...] = (2, 3, 2, 2),
    y: tuple[int, ...] = (2, 3, 4, 4),
    data_type: str = "FLOAT32",
    index_type: str = "UINT32",
) -> dict[str, Any]:
    return {"InputTensor": _t(x, data_type), "IndicesTensor": _t(indices, index_type), "OutputTensor": _t(y, data_type)}


def _mu(name: str, rejects: str | None, why: str, **changes: Any) -> RuleCase:
    return _case("MAX_UNPOOLING", _max_unpooling, name, rejects, why, **changes)


MAX_UNPOOLING = [
    _mu("valid_2x", None, "unpooling a 2x2 max pooling of 2x3x4x4"),
    _mu("valid_uint64_int32", None, "UINT64 indices, INT32 data (FL 5_0)", data_type="INT32", index_type="UINT64"),
    _mu(
        "valid_output_any_sizes",
        None,
        "OutputTensor's sizes are free: smaller than the input, other N and C (DirectML)",
        y=(1, 1, 1, 3),
    ),
    _mu("indices_width_differs", "IndicesTensor.Sizes", "IndicesTensor has InputTensor's sizes", indices=(2, 3, 2, 1)),
    _mu(
        "indices_channels_differ", "IndicesTensor.Sizes", "IndicesTensor has InputTensor's sizes", indices=(2, 1, 2, 2)
    ),
]


# -- RESAMPLE_GRAD, RESAMPLE3 ---------------------------------------------------------------


def _resample_members(
    scales: tuple[float, ...], input_offsets: tuple[float, ...] | None, output_offsets: tuple[float, ...] | None
) -> dict[str, Any]:
    n = len(scales)
    return {
        "Scales": list(scales),
        "InputPixelOffsets": list(input_offsets or (0.5,) * n),
        "OutputPixelOffsets": list(output_offsets or (-0.5,) * n),
    }


def _resample_grad(
    dy: tuple[int, ...] = (2, 3, 8, 8),
    dx: tuple[int, ...] = (2, 3, 4, 4),
    mode: str = "LINEAR",
    scales: tuple[float, ...] = (1.0, 1.0, 2.0, 2.0),
    input_offsets: tuple[float, ...] | None = None,
    output_offsets: tuple[float, ...] | None = None,
) -> dict[str, Any]:
    return {
        "InputGradientTensor": _t(dy),
        "OutputGradientTensor": _t(dx),
        "InterpolationMode": mode,
        **_resample_members(scales, input_offsets, output_offsets),
    }


def _resample3(
    x: tuple[int, ...] = (1, 3, 8, 8),
    y: tuple[int, ...] = (1, 3, 2, 2),
    mode: str = "LINEAR",
    rounding: str = "INCREASING",
    scales: tuple[float, ...] = (1.0, 1.0, 0.25, 0.25),
    input_offsets: tuple[float, ...] | None = None,
    output_offsets: tuple[float, ...] | None = None,
    antialiased: bool = True,
    data_type: str = "FLOAT32",
) -> dict[str, Any]:
    return {
        "InputTensor": _t(x, data_type),
        "OutputTensor": _t(y, data_type),
        "InterpolationMode": mode,
        "RoundingDirection": rounding,
        **_resample_members(scales, input_offsets, output_offsets),
        "Antialiased": antialiased,
    }


def _rg(name: str, rejects: str | None, why: str, **changes: Any) -> RuleCase:
    return _case("RESAMPLE_GRAD", _resample_grad, name, rejects, why, **changes)


def _r3(name: str, rejects: str | None, why: str, **changes: Any) -> RuleCase:
    return _case("RESAMPLE3", _resample3, name, rejects, why, **changes)


def _scale_cases(make: Any, scales: tuple[float, ...]) -> list[RuleCase]:
    """The Scales rules RESAMPLE_GRAD and RESAMPLE3 share with RESAMPLE2 (entry 2 changed)."""

    def at2(value: float) -> tuple[float, ...]:
        return (*scales[:2], value, *scales[3:])

    return [
        make(
            "valid_scale_flt_epsilon",
            None,
            "FLT_EPSILON is the smallest Scales entry DirectML accepts",
            scales=at2(EPS),
        ),
        make("valid_scale_inf", None, "DirectML accepts +inf in Scales", scales=at2(INF)),
        make(
            "valid_nan_inf_offsets",
            None,
            "DirectML accepts NaN and infinite pixel offsets",
            input_offsets=(0.5, 0.5, NAN, 0.5),
            output_offsets=(-0.5, INF, -0.5, -INF),
        ),
        make("dimension_count_3", "DimensionCount", "DimensionCount is the tensors' (4)", scales=scales[1:]),
        make("scale_zero", "Scales[2]", "Scales entries >= FLT_EPSILON (DirectML)", scales=at2(0.0)),
        make("scale_negative", "Scales[2]", "Scales entries >= FLT_EPSILON (DirectML)", scales=at2(-2.0)),
        make("scale_below_epsilon", "Scales[2]", "2^-24 is below FLT_EPSILON (DirectML)", scales=at2(EPS / 2)),
        make("scale_nan", "Scales[2]", "DirectML rejects a NaN scale", scales=at2(NAN)),
    ]


RESAMPLE_GRAD = [
    _rg("valid_linear_2x", None, "the gradient of a 2x LINEAR upsample of 2x3x4x4"),
    _rg(
        "valid_page_example",
        None,
        "the page's example's desc: nearest, 0.5x in height and 1.5x in width (its numbers: erratum E150)",
        dy=(1, 1, 1, 3),
        dx=(1, 1, 2, 2),
        mode="NEAREST_NEIGHBOR",
        scales=(1.0, 1.0, 0.5, 1.5),
    ),
    _rg(
        "valid_sizes_free",
        None,
        "the tensors' sizes need not follow Scales, nor share N and C (DirectML)",
        dy=(1, 2, 7, 3),
        dx=(3, 1, 2, 2),
    ),
    *_scale_cases(_rg, (1.0, 1.0, 2.0, 2.0)),
]

RESAMPLE3 = [
    _r3("valid_antialiased_downscale", None, "a 4x antialiased LINEAR downscale of 1x3x8x8"),
    _r3(
        "valid_nearest_decreasing_up",
        None,
        "nearest, rounding down, 2x upscale, not antialiased",
        y=(1, 3, 16, 16),
        mode="NEAREST_NEIGHBOR",
        rounding="DECREASING",
        scales=(1.0, 1.0, 2.0, 2.0),
        antialiased=False,
    ),
    _r3(
        "valid_antialiased_nearest",
        None,
        "Antialiased with NEAREST_NEIGHBOR is accepted (the page: it only filters LINEAR downscales)",
        mode="NEAREST_NEIGHBOR",
    ),
    _r3(
        "valid_antialiased_upscale_int8",
        None,
        "Antialiased on an INT8 upscale is accepted",
        y=(1, 3, 16, 16),
        scales=(1.0, 1.0, 2.0, 2.0),
        data_type="INT8",
    ),
    _r3("valid_1d", None, "1 dimension", x=(8,), y=(3,), scales=(0.4,)),
    _r3(
        "valid_sizes_free",
        None,
        "OutputTensor need not be InputTensor times Scales (cropped or clamped)",
        y=(2, 1, 5, 3),
    ),
    *_scale_cases(_r3, (1.0, 1.0, 0.25, 0.25)),
]


# -- VALUE_SCALE_2D -------------------------------------------------------------------------


def _value_scale_2d(
    sizes: tuple[int, ...] = (2, 3, 4, 5), bias: tuple[float, ...] = (0.1, -0.2, 0.3), scale: float = 0.5
) -> dict[str, Any]:
    return {"InputTensor": _t(sizes), "OutputTensor": _t(sizes), "Scale": scale, "Bias": list(bias)}


def _vs(name: str, rejects: str | None, why: str, **changes: Any) -> RuleCase:
    return _case("VALUE_SCALE_2D", _value_scale_2d, name, rejects, why, **changes)


VALUE_SCALE_2D = [
    _vs("valid_3_channels", None, "a bias per channel of an RGB batch"),
    _vs("valid_1_channel", None, "one channel", sizes=(2, 1, 4, 5), bias=(0.25,)),
    _vs(
        "valid_any_floats",
        None,
        "DirectML accepts any Scale and Bias (NaN, inf, negative)",
        scale=NAN,
        bias=(INF, -1.0, NAN),
    ),
    _vs("channel_count_2", "ChannelCount", "ChannelCount is 1 or 3", sizes=(2, 2, 4, 5), bias=(0.1, 0.2)),
    _vs("channel_count_4", "ChannelCount", "ChannelCount is 1 or 3", sizes=(2, 4, 4, 5), bias=(0.1, 0.2, 0.3, 0.4)),
    _vs("channel_count_1_of_3", "ChannelCount", "ChannelCount equals InputTensor's channels", bias=(0.1,)),
    _vs("channel_count_3_of_1", "ChannelCount", "ChannelCount equals InputTensor's channels", sizes=(2, 1, 4, 5)),
]


# -- ROI_ALIGN_GRAD -------------------------------------------------------------------------


def _roi_align_grad(
    x: tuple[int, ...] | None = (2, 3, 8, 8),
    dy: tuple[int, ...] = (4, 3, 2, 2),
    roi: tuple[int, ...] = (4, 4),
    batch_indices: tuple[int, ...] = (4,),
    dx: tuple[int, ...] | None = (2, 3, 8, 8),
    droi: tuple[int, ...] | None = None,
    reduction: str = "AVERAGE",
    mode: str = "LINEAR",
    scale_x: float = 0.25,
    scale_y: float = 0.25,
    input_offset: float = 0.5,
    output_offset: float = -0.5,
    minimum: int = 1,
    maximum: int = 4,
    corners: bool = False,
) -> dict[str, Any]:
    desc: dict[str, Any] = {
        "InputGradientTensor": _t(dy),
        "ROITensor": _t(roi),
        "BatchIndicesTensor": _t(batch_indices, "UINT32"),
        "ReductionFunction": reduction,
        "InterpolationMode": mode,
        "SpatialScaleX": scale_x,
        "SpatialScaleY": scale_y,
        "InputPixelOffset": input_offset,
        "OutputPixelOffset": output_offset,
        "MinimumSamplesPerOutput": minimum,
        "MaximumSamplesPerOutput": maximum,
        "AlignRegionsToCorners": corners,
    }
    for member, sizes in (("InputTensor", x), ("OutputGradientTensor", dx), ("OutputROIGradientTensor", droi)):
        if sizes is not None:
            desc[member] = _t(sizes)
    return desc


def _rag(name: str, rejects: str | None, why: str, **changes: Any) -> RuleCase:
    return _case("ROI_ALIGN_GRAD", _roi_align_grad, name, rejects, why, **changes)


ROI_ALIGN_GRAD = [
    _rag("valid_average", None, "the gradient of a 2x2 LINEAR AVERAGE ROI align of 4 regions"),
    _rag("valid_average_without_input", None, "InputTensor may be left out for AVERAGE without ROI gradients", x=None),
    _rag("valid_max_both_gradients", None, "MAX with both gradients", reduction="MAX", droi=(4, 4)),
    _rag("valid_roi_gradient_only", None, "OutputGradientTensor may be left out", dx=None, droi=(4, 4)),
    _rag(
        "valid_4d_rois",
        None,
        "{1, 1, NumROIs, 4} regions, {1, 1, 1, NumROIs} batch indices, any InputGradientTensor spatial sizes",
        roi=(1, 1, 4, 4),
        batch_indices=(1, 1, 1, 4),
        droi=(1, 1, 4, 4),
        dy=(4, 3, 5, 7),
    ),
    _rag(
        "valid_no_input_channels_from_gradient",
        None,
        "without InputTensor, ChannelCount is OutputGradientTensor's",
        x=None,
        dx=(2, 2, 8, 8),
        dy=(4, 2, 2, 2),
    ),
    _rag(
        "valid_parameter_edges",
        None,
        "DirectML accepts a 0 and a NaN scale, any pixel offsets, Minimum = Maximum, corners with nearest",
        scale_x=0.0,
        scale_y=NAN,
        input_offset=NAN,
        output_offset=-INF,
        minimum=2,
        maximum=2,
        mode="NEAREST_NEIGHBOR",
        corners=True,
    ),
    _rag("no_outputs", "OutputGradientTensor", "at least one of the two outputs", dx=None),
    _rag("max_without_input", "InputTensor", "MAX needs InputTensor", x=None, reduction="MAX"),
    _rag("roi_gradient_without_input", "InputTensor", "OutputROIGradientTensor needs InputTensor", x=None, droi=(4, 4)),
    _rag("reduction_sum", "ReductionFunction", "AVERAGE or MAX", reduction="SUM"),
    _rag("roi_leading_size", "ROITensor.Sizes", "ROITensor's leading sizes are 1", roi=(2, 4, 4)),
    _rag("roi_five_values", "ROITensor.Sizes", "4 values per region", roi=(4, 5)),
    _rag("batch_indices_2d", "BatchIndicesTensor.Sizes", "{1, NumROIs}, not {2, 2}", batch_indices=(2, 2)),
    _rag("batch_indices_count", "BatchIndicesTensor.Sizes", "one batch index per region", batch_indices=(3,)),
    _rag("input_gradient_rois", "InputGradientTensor.Sizes[0]", "N is NumROIs", dy=(3, 3, 2, 2)),
    _rag("input_gradient_channels", "InputGradientTensor.Sizes[1]", "C is InputTensor's", dy=(4, 2, 2, 2)),
    _rag(
        "input_gradient_channels_no_input",
        "InputGradientTensor.Sizes[1]",
        "C is OutputGradientTensor's when InputTensor is left out",
        x=None,
        dx=(2, 2, 8, 8),
    ),
    _rag(
        "output_gradient_sizes",
        "OutputGradientTensor.Sizes",
        "OutputGradientTensor has InputTensor's sizes",
        dx=(2, 3, 8, 9),
    ),
    _rag(
        "roi_gradient_rank",
        "OutputROIGradientTensor.Sizes",
        "OutputROIGradientTensor has ROITensor's sizes exactly ({1, 4, 4} for {4, 4} is rejected)",
        droi=(1, 4, 4),
    ),
    _rag(
        "roi_gradient_sizes",
        "OutputROIGradientTensor.Sizes",
        "OutputROIGradientTensor has ROITensor's sizes",
        droi=(4, 5),
    ),
    _rag("scale_x_negative", "SpatialScaleX", "scales >= 0 (erratum E31, as ROI_ALIGN)", scale_x=-1.0),
    _rag("scale_y_infinite", "SpatialScaleY", "finite scales (erratum E31, as ROI_ALIGN)", scale_y=INF),
    _rag("minimum_samples_zero", "MinimumSamplesPerOutput", "at least 1 sample", minimum=0),
    _rag("maximum_below_minimum", "MaximumSamplesPerOutput", "Maximum >= Minimum", minimum=3, maximum=2),
]


# -- ROI_POOLING ----------------------------------------------------------------------------


def _roi_pooling(
    x: tuple[int, ...] = (2, 3, 8, 8),
    roi: tuple[int, ...] = (1, 1, 4, 5),
    y: tuple[int, ...] = (4, 3, 2, 3),
    height: int = 2,
    width: int = 3,
    scale: float = 0.0625,
) -> dict[str, Any]:
    return {
        "InputTensor": _t(x),
        "ROITensor": _t(roi),
        "OutputTensor": _t(y),
        "SpatialScale": scale,
        "PooledSize": {"Height": height, "Width": width},
    }


def _rp(name: str, rejects: str | None, why: str, **changes: Any) -> RuleCase:
    return _case("ROI_POOLING", _roi_pooling, name, rejects, why, **changes)


ROI_POOLING = [
    _rp("valid_2x3", None, "4 regions pooled to 2x3 from a 1/16-scale feature map"),
    _rp(
        "valid_pooled_larger_than_input",
        None,
        "PooledSize larger than the input and a negative SpatialScale are accepted",
        y=(4, 3, 10, 12),
        height=10,
        width=12,
        scale=-1.0,
    ),
    _rp(
        "roi_four_values",
        "ROITensor.Sizes",
        "5 values per region ([BatchID, x1, y1, x2, y2]; erratum E151)",
        roi=(1, 1, 4, 4),
    ),
    _rp(
        "roi_leading_size",
        "ROITensor.Sizes",
        "ROITensor is {1, 1, NumROIs, 5} (erratum E151)",
        roi=(1, 2, 4, 5),
        y=(8, 3, 2, 3),
    ),
    _rp("pooled_height_zero", "PooledSize.Height", "PooledSize entries >= 1", height=0, y=(4, 3, 1, 3)),
    _rp("pooled_width_zero", "PooledSize.Width", "PooledSize entries >= 1", width=0, y=(4, 3, 2, 1)),
    _rp("output_rois", "OutputTensor.Sizes[0]", "N is NumROIs", y=(3, 3, 2, 3)),
    _rp("output_channels", "OutputTensor.Sizes[1]", "C is InputTensor's", y=(4, 2, 2, 3)),
    _rp("output_height", "OutputTensor.Sizes[2]", "H is PooledSize.Height", y=(4, 3, 3, 3)),
    _rp("output_width", "OutputTensor.Sizes[3]", "W is PooledSize.Width", y=(4, 3, 2, 2)),
]


CASES: list[RuleCase] = [
    *AVERAGE_POOLING_GRAD,
    *MAX_UNPOOLING,
    *RESAMPLE_GRAD,
    *RESAMPLE3,
    *VALUE_SCALE_2D,
    *ROI_ALIGN_GRAD,
    *ROI_POOLING,
]
