"""Rule cases of the normalization operators (see the package docstring)."""

from __future__ import annotations

from typing import Any

from rule_cases import RuleCase


def _t(*sizes: int) -> dict[str, Any]:
    return {"DataType": "FLOAT32", "Sizes": list(sizes)}


X = (2, 3, 4, 5)
"""The input of most cases: N=2, C=3, H=4, W=5."""
C = (1, 3, 1, 1)
"""Per-channel statistics of X."""


def _batch_norm(stats: tuple[int, ...] = C, x: tuple[int, ...] = X, **members: Any) -> dict[str, Any]:
    desc = {
        "InputTensor": _t(*x),
        "MeanTensor": _t(*stats),
        "VarianceTensor": _t(*stats),
        "ScaleTensor": _t(*stats),
        "BiasTensor": _t(*stats),
        "OutputTensor": _t(*x),
        "Spatial": True,
        "Epsilon": 1e-5,
    }
    return {**desc, **{k: _t(*v) if isinstance(v, tuple) else v for k, v in members.items()}}


def _batch_norm_grad(stats: tuple[int, ...] = C, x: tuple[int, ...] = X) -> dict[str, Any]:
    data = ("InputTensor", "InputGradientTensor", "OutputGradientTensor")
    statistics = (
        "MeanTensor",
        "VarianceTensor",
        "ScaleTensor",
        "OutputScaleGradientTensor",
        "OutputBiasGradientTensor",
    )
    return {**{m: _t(*x) for m in data}, **{m: _t(*stats) for m in statistics}, "Epsilon": 1e-5}


def _batch_norm_training(stats: tuple[int, ...] = C, x: tuple[int, ...] = X, fused_add: bool = True) -> dict[str, Any]:
    desc = {
        "InputTensor": _t(*x),
        "ScaleTensor": _t(*stats),
        "BiasTensor": _t(*stats),
        "OutputTensor": _t(*x),
        "OutputMeanTensor": _t(*stats),
        "OutputVarianceTensor": _t(*stats),
        "Epsilon": 1e-5,
    }
    return {**desc, "FusedAddTensor": _t(*x)} if fused_add else desc


def _mvn(
    version: str,
    scale: tuple[int, ...] | None = C,
    bias: tuple[int, ...] | None = C,
    x: tuple[int, ...] = X,
    **members: Any,
) -> dict[str, Any]:
    desc: dict[str, Any] = {"InputTensor": _t(*x), "OutputTensor": _t(*x), "Epsilon": 1e-5}
    if scale is not None:
        desc["ScaleTensor"] = _t(*scale)
    if bias is not None:
        desc["BiasTensor"] = _t(*bias)
    desc |= {
        "": {"CrossChannel": False, "NormalizeVariance": True},
        "1": {"Axes": [0, 2, 3], "NormalizeVariance": True},
        "2": {"Axes": [0, 2, 3], "UseMean": True, "UseVariance": True},
    }[version]
    return {**desc, **{k: _t(*v) if isinstance(v, tuple) else v for k, v in members.items()}}


def _lrn(grad: bool, local_size: int, cross_channel: bool = True) -> dict[str, Any]:
    tensors = (
        ("InputTensor", "InputGradientTensor", "OutputGradientTensor") if grad else ("InputTensor", "OutputTensor")
    )
    attributes = {"CrossChannel": cross_channel, "LocalSize": local_size, "Alpha": 1e-4, "Beta": 0.75, "Bias": 1.0}
    return {**{m: _t(*X) for m in tensors}, **attributes}


def _lp(axis: int, p: int) -> dict[str, Any]:
    return {"InputTensor": _t(*X), "OutputTensor": _t(*X), "Axis": axis, "Epsilon": 1e-5, "P": p}


def _batch_norm_cases() -> list[RuleCase]:
    op = "BATCH_NORMALIZATION"
    return [
        RuleCase("batch_normalization_valid", op, _batch_norm(), None, "per-channel statistics {1,C,1,1}"),
        RuleCase(
            "batch_normalization_valid_mixed_broadcasts",
            op,
            _batch_norm(ScaleTensor=(1, 1, 1, 1), BiasTensor=X, Spatial=False),
            None,
            "each statistic broadcasts on its own axes (no same-Sizes rule ties them); Spatial FALSE "
            "with broadcast Height/Width has no effect from FL 4_0",
        ),
        RuleCase(
            "batch_normalization_valid_5d",
            op,
            _batch_norm(stats=(1, 3, 1, 1, 1), x=(2, 3, 2, 4, 5)),
            None,
            "NCDHW input, per-channel statistics",
        ),
        RuleCase(
            "batch_normalization_mean_channels",
            op,
            _batch_norm(MeanTensor=(1, 4, 1, 1)),
            "MeanTensor.Sizes[1]",
            "a statistic's size is 1 or InputTensor's",
        ),
        RuleCase(
            "batch_normalization_variance_batch",
            op,
            _batch_norm(VarianceTensor=(4, 3, 1, 1)),
            "VarianceTensor.Sizes[0]",
            "a statistic's size is 1 or InputTensor's",
        ),
        RuleCase(
            "batch_normalization_scale_over_unit_axis",
            op,
            _batch_norm(x=(2, 1, 4, 5), MeanTensor=(1, 1, 1, 1), VarianceTensor=(1, 1, 1, 1), BiasTensor=(1, 1, 1, 1)),
            "ScaleTensor.Sizes[1]",
            "a statistic cannot be larger than InputTensor on an axis where InputTensor is 1",
        ),
        RuleCase(
            "batch_normalization_bias_width",
            op,
            _batch_norm(BiasTensor=(1, 3, 4, 6)),
            "BiasTensor.Sizes[3]",
            "a statistic's size is 1 or InputTensor's",
        ),
    ]


def _batch_norm_grad_cases() -> list[RuleCase]:
    cases = []
    for op in ("BATCH_NORMALIZATION_GRAD", "BATCH_NORMALIZATION_TRAINING_GRAD"):
        prefix = op.lower()
        cases += [
            RuleCase(f"{prefix}_valid", op, _batch_norm_grad(), None, "per-channel statistics {1,C,1,1}"),
            RuleCase(
                f"{prefix}_valid_unreduced",
                op,
                _batch_norm_grad(stats=X),
                None,
                "statistics of InputTensor's Sizes (nothing summed)",
            ),
            RuleCase(
                f"{prefix}_valid_3d_all_reduced",
                op,
                _batch_norm_grad(stats=(1, 1, 1), x=(4, 6, 8)),
                None,
                "3-D input, statistics over every axis",
            ),
            RuleCase(
                f"{prefix}_stats_channels",
                op,
                _batch_norm_grad(stats=(1, 4, 1, 1)),
                "MeanTensor.Sizes[1]",
                "MeanTensor/VarianceTensor/ScaleTensor sizes are 1 or InputTensor's",
            ),
            RuleCase(
                f"{prefix}_stats_batch",
                op,
                _batch_norm_grad(stats=(4, 3, 1, 1)),
                "MeanTensor.Sizes[0]",
                "MeanTensor/VarianceTensor/ScaleTensor sizes are 1 or InputTensor's",
            ),
        ]
    return cases


def _batch_norm_training_cases() -> list[RuleCase]:
    op = "BATCH_NORMALIZATION_TRAINING"
    return [
        RuleCase("batch_normalization_training_valid", op, _batch_norm_training(), None, "per-channel, with FusedAdd"),
        RuleCase(
            "batch_normalization_training_valid_no_fused_add",
            op,
            _batch_norm_training(stats=(2, 1, 1, 1), fused_add=False),
            None,
            "FusedAddTensor is optional; statistics per batch item",
        ),
        RuleCase(
            "batch_normalization_training_scale_channels",
            op,
            _batch_norm_training(stats=(1, 6, 1, 1)),
            "ScaleTensor.Sizes[1]",
            "ScaleTensor/BiasTensor sizes are 1 or InputTensor's",
        ),
        RuleCase(
            "batch_normalization_training_scale_height",
            op,
            _batch_norm_training(stats=(1, 3, 2, 1)),
            "ScaleTensor.Sizes[2]",
            "ScaleTensor/BiasTensor sizes are 1 or InputTensor's",
        ),
    ]


def _mvn_cases() -> list[RuleCase]:
    cases = []
    for version in ("", "1", "2"):
        op = f"MEAN_VARIANCE_NORMALIZATION{version}"
        prefix = op.lower()
        cases += [
            RuleCase(f"{prefix}_valid", op, _mvn(version), None, "per-channel Scale and Bias"),
            RuleCase(f"{prefix}_valid_no_scale_bias", op, _mvn(version, None, None), None, "both optional"),
            RuleCase(
                f"{prefix}_valid_scale_alone",
                op,
                _mvn(version, scale=(1, 1, 1, 1), bias=None),
                None,
                "ScaleTensor without BiasTensor (allowed from FL 5_2)",
            ),
            RuleCase(
                f"{prefix}_valid_bias_alone",
                op,
                _mvn(version, scale=None, bias=X),
                None,
                "BiasTensor without ScaleTensor (allowed from FL 5_2), unbroadcast",
            ),
            RuleCase(
                f"{prefix}_scale_channels",
                op,
                _mvn(version, scale=(1, 4, 1, 1)),
                "ScaleTensor.Sizes[1]",
                "ScaleTensor sizes are 1 or InputTensor's",
            ),
            RuleCase(
                f"{prefix}_bias_batch",
                op,
                _mvn(version, bias=(3, 3, 1, 1), scale=None),
                "BiasTensor.Sizes[0]",
                "BiasTensor sizes are 1 or InputTensor's",
            ),
        ]
        if not version:
            cases.append(
                RuleCase(
                    f"{prefix}_valid_cross_channel",
                    op,
                    _mvn(version, CrossChannel=True, NormalizeVariance=False),
                    None,
                    "CrossChannel, mean only",
                )
            )
            continue
        cases += [
            RuleCase(
                f"{prefix}_valid_axes_empty",
                op,
                _mvn(version, Axes=[]),
                None,
                "no Axes (each element alone) is accepted",
            ),
            RuleCase(
                f"{prefix}_valid_axes_unsorted_repeated",
                op,
                _mvn(version, Axes=[3, 2, 2, 3, 0]),
                None,
                "Axes may be unsorted, repeat an axis and outnumber the dimensions' count",
            ),
            RuleCase(
                f"{prefix}_valid_3d",
                op,
                _mvn(version, scale=(1, 1, 8), bias=(1, 1, 8), x=(2, 6, 8), Axes=[2]),
                None,
                "layer normalization of a 3-D input over its last axis",
            ),
            RuleCase(
                f"{prefix}_axis_out_of_range",
                op,
                _mvn(version, Axes=[0, 4]),
                "Axes[1]",
                "every axis below InputTensor's DimensionCount",
            ),
            RuleCase(
                f"{prefix}_output_sizes",
                op,
                _mvn(version, OutputTensor=(2, 3, 4, 6)),
                "OutputTensor.Sizes[3]",
                "OutputTensor has InputTensor's Sizes",
            ),
        ]
    cases.append(
        RuleCase(
            "mean_variance_normalization2_valid_no_mean_no_variance",
            "MEAN_VARIANCE_NORMALIZATION2",
            _mvn("2", UseMean=False, UseVariance=False),
            None,
            "every UseMean/UseVariance pair is accepted",
        )
    )
    return cases


def _lrn_cases() -> list[RuleCase]:
    cases = []
    for op in ("LOCAL_RESPONSE_NORMALIZATION", "LOCAL_RESPONSE_NORMALIZATION_GRAD"):
        grad, prefix = op.endswith("GRAD"), op.lower()
        cases += [
            RuleCase(f"{prefix}_valid", op, _lrn(grad, 5), None, "AlexNet's LRN: 5 channels"),
            RuleCase(
                f"{prefix}_valid_spatial_large_window",
                op,
                _lrn(grad, 7, cross_channel=False),
                None,
                "a spatial window larger than the input is accepted (clipped)",
            ),
            RuleCase(
                f"{prefix}_valid_even_window",
                op,
                _lrn(grad, 2),
                None,
                "an even LocalSize is accepted",
            ),
            RuleCase(f"{prefix}_local_size_zero", op, _lrn(grad, 0), "LocalSize", "LocalSize is at least 1"),
        ]
    return cases


def _lp_cases() -> list[RuleCase]:
    op = "LP_NORMALIZATION"
    return [
        RuleCase("lp_normalization_valid", op, _lp(1, 2), None, "L2 over the channels"),
        RuleCase(
            "lp_normalization_valid_l1_last_axis",
            op,
            {**_lp(3, 1), "Epsilon": 0.0},
            None,
            "L1 over the last axis; Epsilon 0 is accepted",
        ),
        *(
            RuleCase(
                f"lp_normalization_valid_{len(sizes)}d",
                op,
                {
                    "InputTensor": {"DataType": "FLOAT32", "Sizes": list(sizes)},
                    "OutputTensor": {"DataType": "FLOAT32", "Sizes": list(sizes)},
                    "Axis": len(sizes) - 1,
                    "Epsilon": 1e-5,
                    "P": 2,
                },
                None,
                "1 to 8 dimensions from 3_1 (the current page; the catalogue's stored copy said 4)",
            )
            for sizes in ((6,), (2, 3), (2, 1, 2, 3, 2), (1, 2, 1, 2, 1, 2, 1, 3))
        ),
        RuleCase("lp_normalization_axis_out_of_range", op, _lp(4, 2), "Axis", "Axis below the DimensionCount"),
        RuleCase("lp_normalization_p_zero", op, _lp(1, 0), "P", "P is 1 or 2"),
        RuleCase("lp_normalization_p_three", op, _lp(1, 3), "P", "P is 1 or 2"),
    ]


CASES: list[RuleCase] = [
    *_batch_norm_cases(),
    *_batch_norm_grad_cases(),
    *_batch_norm_training_cases(),
    *_mvn_cases(),
    *_lrn_cases(),
    *_lp_cases(),
]
