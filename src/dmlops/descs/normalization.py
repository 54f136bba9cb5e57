"""The normalization family: which operators it holds and their own rules.

BATCH_NORMALIZATION, BATCH_NORMALIZATION_GRAD, BATCH_NORMALIZATION_TRAINING,
BATCH_NORMALIZATION_TRAINING_GRAD, MEAN_VARIANCE_NORMALIZATION,
MEAN_VARIANCE_NORMALIZATION1, MEAN_VARIANCE_NORMALIZATION2, LOCAL_RESPONSE_NORMALIZATION,
LOCAL_RESPONSE_NORMALIZATION_GRAD, LP_NORMALIZATION keep the generic descs made from their
catalogue rows (:mod:`.generic`); this module claims them (``family = "normalization"``) and
adds the rules of their pages that the catalogue does not hold (:func:`validate_generic`).
Only the ``directml`` backend runs them yet.

Rules, each checked against DirectML 1.15.4's CreateOperator at DML_FEATURE_LEVEL_6_4 (it
wins where the pages are silent or say otherwise):

* Broadcast tensors (:data:`BROADCAST_TENSORS`): every ``Sizes[i]`` is 1 or
  InputTensor's ``Sizes[i]`` (a statistic over the axes where it is 1). The tensors of one
  operator may broadcast differently (BATCH_NORMALIZATION's MeanTensor ``{1,C,1,1}`` with a
  ScaleTensor ``{1,1,1,1}``) unless the page's same-Sizes constraint ties them (the
  gradients' MeanTensor, VarianceTensor, ScaleTensor and their two outputs; TRAINING's
  ScaleTensor, BiasTensor and its OutputMeanTensor, OutputVarianceTensor).
  BATCH_NORMALIZATION_*: MeanTensor / VarianceTensor / ScaleTensor / BiasTensor as present;
  MEAN_VARIANCE_NORMALIZATION*: the optional ScaleTensor and BiasTensor. Epsilon is
  unchecked (0, negative and NaN are accepted).
* BATCH_NORMALIZATION: ``Spatial`` has no effect from FL 4_0; below it, FALSE requires
  MeanTensor's and VarianceTensor's last two dimensions (Height, Width) unbroadcast.
* MEAN_VARIANCE_NORMALIZATION1 / 2: every ``Axes[i]`` below InputTensor's DimensionCount;
  ``Axes`` may be empty, unsorted or repeat an axis (more entries than dimensions too);
  OutputTensor has InputTensor's Sizes (the pages list it only as the output's
  dimensions, not among the tensor constraints). Every UseMean / UseVariance pair is
  accepted.
* MEAN_VARIANCE_NORMALIZATION / 1: ScaleTensor and BiasTensor come together below FL 5_2
  (from 5_2 each is optional alone, as they always are for MEAN_VARIANCE_NORMALIZATION2);
  MEAN_VARIANCE_NORMALIZATION1 below FL 4_0 broadcasts them on all but the channel axis
  (``Sizes[1]`` is InputTensor's). DirectML 1.15.4 judges every requested feature level by
  its own (it creates MEAN_VARIANCE_NORMALIZATION2, a 6_3 operator, at 5_0), so these
  gated rules, like BATCH_NORMALIZATION's Spatial rule, are the pages' alone.
* LOCAL_RESPONSE_NORMALIZATION(_GRAD): ``LocalSize >= 1`` (any larger value, even
  beyond the sizes, is accepted); Alpha, Beta and Bias are unchecked (0, negative, NaN,
  inf accepted).
* LP_NORMALIZATION: ``Axis`` below InputTensor's DimensionCount; ``P`` is 1 or 2; Epsilon
  unchecked.
"""

from __future__ import annotations

from typing import Any

from ..enums import FeatureLevel
from ._base import family_claim

FAMILY = "normalization"

OPERATORS: frozenset[str] = frozenset(
    (
        "BATCH_NORMALIZATION BATCH_NORMALIZATION_GRAD BATCH_NORMALIZATION_TRAINING "
        "BATCH_NORMALIZATION_TRAINING_GRAD MEAN_VARIANCE_NORMALIZATION "
        "MEAN_VARIANCE_NORMALIZATION1 MEAN_VARIANCE_NORMALIZATION2 "
        "LOCAL_RESPONSE_NORMALIZATION LOCAL_RESPONSE_NORMALIZATION_GRAD LP_NORMALIZATION"
    ).split()
)
"""Every operator of the family."""

_GRAD_STATISTICS = ("MeanTensor", "VarianceTensor", "ScaleTensor")
_SCALE_BIAS = ("ScaleTensor", "BiasTensor")

BROADCAST_TENSORS: dict[str, tuple[str, ...]] = {
    "BATCH_NORMALIZATION": ("MeanTensor", "VarianceTensor", "ScaleTensor", "BiasTensor"),
    "BATCH_NORMALIZATION_GRAD": _GRAD_STATISTICS,
    "BATCH_NORMALIZATION_TRAINING": _SCALE_BIAS,
    "BATCH_NORMALIZATION_TRAINING_GRAD": _GRAD_STATISTICS,
    "MEAN_VARIANCE_NORMALIZATION": _SCALE_BIAS,
    "MEAN_VARIANCE_NORMALIZATION1": _SCALE_BIAS,
    "MEAN_VARIANCE_NORMALIZATION2": _SCALE_BIAS,
}
"""operator -> the tensors (when present) whose every size is 1 or InputTensor's."""

PAIRED_SCALE_BIAS_BELOW: dict[str, FeatureLevel] = {
    "MEAN_VARIANCE_NORMALIZATION": FeatureLevel.V5_2,
    "MEAN_VARIANCE_NORMALIZATION1": FeatureLevel.V5_2,
}
"""operator -> the feature level below which ScaleTensor and BiasTensor are both present or both absent."""

LP_ORDERS = (1, 2)
"""LP_NORMALIZATION's allowed ``P``."""


claim = family_claim(FAMILY, (OPERATORS, ("directml",)))


def _input_sizes(desc: Any) -> tuple[int, ...]:
    return tuple(desc.input_tensor.sizes)


def _check_broadcast(desc: Any, members: tuple[str, ...]) -> None:
    """Each present tensor's ``Sizes[i]`` is 1 or InputTensor's (same DimensionCount: a page fact)."""
    sizes = _input_sizes(desc)
    tensors = desc.tensors()
    for member in members:
        tensor = tensors.get(member)
        if tensor is None:
            continue
        for i, (got, want) in enumerate(zip(tensor.sizes, sizes)):
            if got not in (1, want):
                raise desc.invalid(f"{member}.Sizes[{i}]", f"must be 1 or InputTensor.Sizes[{i}] ({want})", got)


def _check_unbroadcast(desc: Any, members: tuple[str, ...], axes: range, rule: str) -> None:
    """Each present tensor's Sizes on ``axes`` are InputTensor's."""
    sizes = _input_sizes(desc)
    tensors = desc.tensors()
    for member in members:
        tensor = tensors.get(member)
        if tensor is None:
            continue
        for i in axes:
            if tensor.sizes[i] != sizes[i]:
                raise desc.invalid(
                    f"{member}.Sizes[{i}]", f"must be InputTensor.Sizes[{i}] ({sizes[i]}) {rule}", tensor.sizes[i]
                )


def _check_batch_normalization(desc: Any, level: FeatureLevel) -> None:
    _check_broadcast(desc, BROADCAST_TENSORS[desc.operator_type.name])
    if desc.operator_type.name == "BATCH_NORMALIZATION" and level < FeatureLevel.V4_0 and not desc.spatial:
        rank = desc.input_tensor.dimension_count
        spatial_axes = range(max(rank - 2, 0), rank)  # Height and Width
        _check_unbroadcast(
            desc, ("MeanTensor", "VarianceTensor"), spatial_axes, "when Spatial is FALSE below DML_FEATURE_LEVEL_4_0"
        )


def _check_mean_variance(desc: Any, level: FeatureLevel) -> None:
    name = desc.operator_type.name
    below = PAIRED_SCALE_BIAS_BELOW.get(name)
    if below is not None and level < below:
        scale, bias = desc.scale_tensor is not None, desc.bias_tensor is not None
        if scale != bias:
            missing = "BiasTensor" if scale else "ScaleTensor"
            other = "ScaleTensor" if scale else "BiasTensor"
            raise desc.invalid(missing, f"is required with {other} below {below}", None)
    _check_broadcast(desc, BROADCAST_TENSORS[name])
    if name == "MEAN_VARIANCE_NORMALIZATION1" and level < FeatureLevel.V4_0:
        channel_axis = range(1, min(desc.input_tensor.dimension_count, 2))
        _check_unbroadcast(desc, _SCALE_BIAS, channel_axis, "(the channel axis) below DML_FEATURE_LEVEL_4_0")
    axes = getattr(desc, "axes", None)
    if axes is not None:
        rank = desc.input_tensor.dimension_count
        for i, axis in enumerate(axes):
            desc.require_axis(f"Axes[{i}]", int(axis), rank)
        desc.require_sizes("OutputTensor", _input_sizes(desc), "InputTensor.Sizes")


def _check_local_response(desc: Any, level: FeatureLevel) -> None:
    if int(desc.local_size) < 1:
        raise desc.invalid("LocalSize", "must be at least 1", int(desc.local_size))


def _check_lp(desc: Any, level: FeatureLevel) -> None:
    desc.require_axis("Axis", int(desc.axis), desc.input_tensor.dimension_count)
    if int(desc.p) not in LP_ORDERS:
        raise desc.invalid("P", "must be 1 or 2", int(desc.p))


_RULES: dict[str, Any] = {
    "BATCH_NORMALIZATION": _check_batch_normalization,
    "BATCH_NORMALIZATION_GRAD": _check_batch_normalization,
    "BATCH_NORMALIZATION_TRAINING": _check_batch_normalization,
    "BATCH_NORMALIZATION_TRAINING_GRAD": _check_batch_normalization,
    "MEAN_VARIANCE_NORMALIZATION": _check_mean_variance,
    "MEAN_VARIANCE_NORMALIZATION1": _check_mean_variance,
    "MEAN_VARIANCE_NORMALIZATION2": _check_mean_variance,
    "LOCAL_RESPONSE_NORMALIZATION": _check_local_response,
    "LOCAL_RESPONSE_NORMALIZATION_GRAD": _check_local_response,
    "LP_NORMALIZATION": _check_lp,
}


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """A normalization operator's own rules (see the module docstring): InvalidDescError naming ``STRUCT.Member``.

    Called by the generic desc's validation after the page facts (support rows,
    same-attribute constraints); checked against DirectML 1.15.4's CreateOperator
    (tests/rule_cases/normalization.py).
    """
    _RULES[desc.operator_type.name](desc, level)


__all__ = [
    "BROADCAST_TENSORS",
    "FAMILY",
    "LP_ORDERS",
    "OPERATORS",
    "PAIRED_SCALE_BIAS_BELOW",
    "claim",
    "validate_generic",
]
