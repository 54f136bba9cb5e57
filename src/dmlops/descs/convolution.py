"""The convolution family: which operators it holds and their own rules.

CONVOLUTION, CONVOLUTION_INTEGER, QUANTIZED_LINEAR_CONVOLUTION, FOLD, UNFOLD keep the
generic descs made from their catalogue rows (:mod:`.generic`); this module claims them
(``family = "convolution"``) and adds the rules of their pages that the catalogue does not
hold (:func:`validate_generic`). Only the ``directml`` backend runs them yet.

Rules, each checked against DirectML 1.15.4's CreateOperator (it wins where the pages
are silent or say otherwise):

* CONVOLUTION, CONVOLUTION_INTEGER, QUANTIZED_LINEAR_CONVOLUTION: OutputTensor.Sizes[0]
  is InputTensor.Sizes[0]; ``GroupCount >= 1`` divides both channel counts
  (InputTensor.Sizes[1] and OutputTensor.Sizes[1]); FilterTensor is
  ``{OutputChannels, InputChannels / GroupCount, ...}`` forward and (CONVOLUTION's
  BACKWARD direction) ``{InputChannels, OutputChannels / GroupCount, ...}``; its spatial
  sizes are free. DirectML checks no spatial output size and accepts 0 in ``Strides``
  and ``Dilations`` (erratum E90), so neither is enforced here.
* CONVOLUTION: DimensionCount from 1 to 3 whatever the tensors' rank (E91): the
  arrays apply to the output's last ``DimensionCount`` spatial sizes, with sizes of 1
  before them where there are fewer (a 4-D output with 3 entries reads ``{1, H, W}``);
  ``OutputPadding[i]`` is below that size,
  in both directions (E92). BiasTensor is ``{1, OutputChannels, 1, ...}``.
* CONVOLUTION_INTEGER, QUANTIZED_LINEAR_CONVOLUTION: any DimensionCount (the page says
  only 2; E93). The input and output scale and zero-point tensors hold one element; the
  filter's are per tensor (all ones) or per channel (OutputChannels at index 1, ones
  elsewhere, at any of their dimension counts: ``{1, M}`` too; E94), and in
  QUANTIZED_LINEAR_CONVOLUTION FilterScaleTensor and FilterZeroPointTensor have the same
  Sizes. Its BiasTensor is ``{1, OutputChannels, 1, ...}`` of 3 or 4 dimensions.
* FOLD, UNFOLD (columns ``{N, C * prod(WindowSizes), L}``, image ``{N, C, spatial...}``;
  FOLD's output and UNFOLD's input are the image): DimensionCount from 1 to the image's
  DimensionCount − 2; the windows run over the image's leading DimensionCount spatial
  axes, and CreateOperator ignores the sizes of any after them (E95; what runs there is not
  characterised; a larger DimensionCount crashes DirectML's host); each ``WindowSizes``,
  ``Strides`` and ``Dilations`` entry is at least 1; the dilated window fits the padded
  image on each axis; the columns tensor's Sizes are ``{N, C * prod(WindowSizes), L}``,
  ``L`` the product over the axes of
  ``(size + StartPadding + EndPadding - Dilations * (WindowSizes - 1) - 1) // Strides + 1``.
"""

from __future__ import annotations

import math
from typing import Any

from ..enums import FeatureLevel
from ._base import family_claim

FAMILY = "convolution"

OPERATORS: frozenset[str] = frozenset(
    ("CONVOLUTION CONVOLUTION_INTEGER QUANTIZED_LINEAR_CONVOLUTION FOLD UNFOLD").split()
)
"""Every operator of the family."""

PER_TENSOR = "one element"
PER_CHANNEL = "{1, OutputTensor.Sizes[1], 1, ...}"
EITHER = f"{PER_TENSOR} or {PER_CHANNEL}"

CHANNEL_TENSORS: dict[str, dict[str, str]] = {
    "CONVOLUTION": {"BiasTensor": PER_CHANNEL},
    "CONVOLUTION_INTEGER": {"InputZeroPointTensor": PER_TENSOR, "FilterZeroPointTensor": EITHER},
    "QUANTIZED_LINEAR_CONVOLUTION": {
        "InputScaleTensor": PER_TENSOR,
        "InputZeroPointTensor": PER_TENSOR,
        "FilterScaleTensor": EITHER,
        "FilterZeroPointTensor": EITHER,
        "BiasTensor": PER_CHANNEL,
        "OutputScaleTensor": PER_TENSOR,
        "OutputZeroPointTensor": PER_TENSOR,
    },
}
"""operator -> the shape of each of its bias, scale and zero-point tensors (at any of their
dimension counts): one element, OutputChannels at index 1 and ones elsewhere, or either."""

DIMENSION_COUNTS: dict[str, tuple[int, int]] = {"CONVOLUTION": (1, 3)}
"""The DimensionCount range CreateOperator accepts, whatever the tensors' rank (the integer
convolutions: any, 0 included)."""

FOLD_TENSORS: dict[str, tuple[str, str]] = {
    "FOLD": ("OutputTensor", "InputTensor"),
    "UNFOLD": ("InputTensor", "OutputTensor"),
}
"""FOLD / UNFOLD -> (the image tensor ``{N, C, spatial...}``, the columns tensor ``{N, C*K, L}``)."""


claim = family_claim(FAMILY, (OPERATORS, ("directml",)))


def block_counts(desc: Any, spatial: tuple[int, ...]) -> tuple[int, ...]:
    """The number of window positions along each windowed axis (FOLD, UNFOLD).

    The windowed axes are the leading DimensionCount of ``spatial``, the image's spatial sizes.
    """
    return tuple(
        (size + int(start) + int(end) - int(dilation) * (int(window) - 1) - 1) // int(stride) + 1
        for size, window, stride, dilation, start, end in zip(
            spatial, desc.window_sizes, desc.strides, desc.dilations, desc.start_padding, desc.end_padding
        )
    )


def _dimension_count(desc: Any) -> int:
    return len(desc.strides)


def _check_channels(desc: Any) -> int:
    """Batch, GroupCount and FilterTensor's leading sizes; returns the output channel count."""
    inputs, outputs = desc.input_tensor.sizes, desc.output_tensor.sizes
    if outputs[0] != inputs[0]:
        raise desc.invalid("OutputTensor.Sizes[0]", f"must be InputTensor.Sizes[0] ({inputs[0]})", outputs[0])
    groups = int(desc.group_count)
    if groups < 1:
        raise desc.invalid("GroupCount", "must be at least 1", groups)
    if inputs[1] % groups or outputs[1] % groups:
        raise desc.invalid(
            "GroupCount",
            f"must divide InputTensor.Sizes[1] ({inputs[1]}) and OutputTensor.Sizes[1] ({outputs[1]})",
            groups,
        )
    direction = getattr(desc, "direction", None)  # CONVOLUTION's; the integer ones run forward
    backward = direction is not None and direction.name == "BACKWARD"
    rows, columns = ("InputTensor", "OutputTensor") if backward else ("OutputTensor", "InputTensor")
    filters = desc.filter_tensor.sizes
    expected = (desc.tensor(rows).sizes[1], desc.tensor(columns).sizes[1] // groups)
    rules = (f"{rows}.Sizes[1]", f"{columns}.Sizes[1] / GroupCount")
    for i, (got, want, rule) in enumerate(zip(filters, expected, rules)):
        if got != want:
            raise desc.invalid(f"FilterTensor.Sizes[{i}]", f"must be {rule} ({want})", got)
    return int(outputs[1])


def _check_channel_tensors(desc: Any, channels: int) -> None:
    tensors = desc.tensors()
    for member, shape in CHANNEL_TENSORS[desc.operator_type.name].items():
        tensor = tensors.get(member)
        if tensor is None:
            continue
        ones = (1,) * tensor.dimension_count
        if shape == PER_TENSOR or (shape == EITHER and tensor.sizes == ones):
            desc.require_sizes(member, ones, shape)
        else:
            desc.require_sizes(member, tuple(channels if i == 1 else 1 for i in range(tensor.dimension_count)), shape)


def _check_output_padding(desc: Any) -> None:
    # The arrays apply to the output's last DimensionCount spatial sizes, missing ones read as 1
    # (DirectML views a 3-D output as 4-D or 5-D): OutputPadding[i] must be below that size (E92).
    count = _dimension_count(desc)
    spatial = (1,) * (count - desc.output_tensor.dimension_count + 2) + tuple(desc.output_tensor.sizes[2:])
    aligned = spatial[len(spatial) - count :]
    for i, (padding, size) in enumerate(zip(desc.output_padding, aligned)):
        if int(padding) >= size:
            raise desc.invalid(
                f"OutputPadding[{i}]", f"must be less than the output's size on its axis ({size})", padding
            )


def _check_convolution(desc: Any) -> None:
    name = desc.operator_type.name
    low, high = DIMENSION_COUNTS.get(name, (0, _dimension_count(desc)))
    if not low <= _dimension_count(desc) <= high:
        raise desc.invalid("DimensionCount", f"must be in [{low}, {high}]", _dimension_count(desc))
    channels = _check_channels(desc)
    _check_channel_tensors(desc, channels)
    if name == "QUANTIZED_LINEAR_CONVOLUTION":
        desc.require_same("Sizes", "FilterScaleTensor", "FilterZeroPointTensor")
    if name == "CONVOLUTION":
        _check_output_padding(desc)


def _check_fold(desc: Any) -> None:
    image_member, columns_member = FOLD_TENSORS[desc.operator_type.name]
    image = desc.tensor(image_member)
    count, spatial_count = _dimension_count(desc), image.dimension_count - 2
    if not 1 <= count <= spatial_count:
        # the windows run over the leading DimensionCount spatial axes (E95); above: a crash
        raise desc.invalid(
            "DimensionCount", f"must be in [1, {image_member}.DimensionCount - 2 ({spatial_count})]", count
        )
    arrays = {"WindowSizes": desc.window_sizes, "Strides": desc.strides, "Dilations": desc.dilations}
    for member, values in arrays.items():
        for i, value in enumerate(values):
            if int(value) < 1:
                raise desc.invalid(f"{member}[{i}]", "must be at least 1", value)
    spatial = image.sizes[2:]
    blocks_per_axis = block_counts(desc, spatial)
    for i, blocks in enumerate(blocks_per_axis):
        if blocks < 1:
            raise desc.invalid(
                f"WindowSizes[{i}]",
                f"the dilated window must fit {image_member}.Sizes[{i + 2}] ({spatial[i]}) with its padding",
                desc.window_sizes[i],
            )
    expected = (image.sizes[0], image.sizes[1] * math.prod(desc.window_sizes), math.prod(blocks_per_axis))
    desc.require_sizes(columns_member, expected, "{N, C * prod(WindowSizes), the number of window positions}")


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The rules of a convolution operator's own (see the module docstring): InvalidDescError naming ``STRUCT.Member``.

    Called by the generic desc's validation after the page facts (support rows,
    same-attribute constraints); checked against DirectML 1.15.4's CreateOperator
    (tests/rule_cases/convolution.py).
    """
    if desc.operator_type.name in FOLD_TENSORS:
        _check_fold(desc)
    else:
        _check_convolution(desc)


__all__ = [
    "CHANNEL_TENSORS",
    "DIMENSION_COUNTS",
    "EITHER",
    "FAMILY",
    "FOLD_TENSORS",
    "OPERATORS",
    "PER_CHANNEL",
    "PER_TENSOR",
    "block_counts",
    "claim",
    "validate_generic",
]
