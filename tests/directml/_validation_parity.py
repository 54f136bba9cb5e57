"""Validation parity: dmlops's validation and DirectML's CreateOperator on the same descs.

Descs come from the valid builders of ``tests/fuzz/_desc_strategies.py`` (re-typed to
this stack's data types), from its ``mutate`` (junk values, deleted members, other ranks,
data types and sizes), and from :data:`RULE_BREAKERS`: one targeted edit per rule of
each desc's ``_validate`` and of the TensorDesc rules every desc shares. Each desc that
can be built goes to ``desc.validate(6_4)`` and to ``dmlops.directml.create_operator``
at 6_4 (CreateOperator checks a desc against everything the DLL supports, 6_4, so other
levels cannot be compared). Disagreements are classified by :data:`KNOWN_DISAGREEMENTS`,
a small explicit table of predicates, each with its reason; the rest are "unexplained".
"""

from __future__ import annotations

import copy
import json
import math
import struct
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from _desc_strategies import mutate
from _differential import BUILDERS, TYPE_GROUPS, Draw, run_seeded, stack_types
from hypothesis import strategies as st

from dmlops.descs import desc_class, desc_from_json
from dmlops.descs._base import OperatorDesc, support_at
from dmlops.enums import FeatureLevel, TensorDataType
from dmlops.errors import DirectMLRejectedDescError, DmlError, InvalidDescError

T = TensorDataType
LEVEL = FeatureLevel.V6_4
STACK_UNSUPPORTED_NAMES = ("FLOAT16", "INT16", "UINT16")


# -- targeted rule-breakers ----------------------------------------------------------------------------


def _tensors(d: dict[str, Any]) -> list[str]:
    return [k for k, v in d.items() if isinstance(v, dict) and "Sizes" in v]


def _outputs(op: str, d: dict[str, Any]) -> list[str]:
    return [m for m in desc_class(op).tensor_members("output") if m in d]


def _inputs(op: str, d: dict[str, Any]) -> list[str]:
    return [m for m in desc_class(op).tensor_members("input") if m in d]


Rule = Callable[[Draw, str, dict[str, Any]], None]


def _any_tensor(draw: Draw, op: str, d: dict[str, Any]) -> str:
    return str(draw(st.sampled_from(_tensors(d))))


def _zero_size(draw: Draw, op: str, d: dict[str, Any]) -> None:
    t = d[_any_tensor(draw, op, d)]
    t["Sizes"][draw(st.integers(0, len(t["Sizes"]) - 1))] = 0


def _rank_9(draw: Draw, op: str, d: dict[str, Any]) -> None:
    t = d[_any_tensor(draw, op, d)]
    t["Sizes"] = [1] * (9 - len(t["Sizes"])) + t["Sizes"]
    t.pop("Strides", None)


def _bad_flags(draw: Draw, op: str, d: dict[str, Any]) -> None:
    d[_any_tensor(draw, op, d)]["Flags"] = 2


def _owned_output(draw: Draw, op: str, d: dict[str, Any]) -> None:
    d[draw(st.sampled_from(_outputs(op, d)))]["Flags"] = "OWNED_BY_DML"


def _strides_length(draw: Draw, op: str, d: dict[str, Any]) -> None:
    t = d[_any_tensor(draw, op, d)]
    t["Strides"] = [1] * (len(t["Sizes"]) + draw(st.sampled_from([-1, 1])))


def _output_broadcast(draw: Draw, op: str, d: dict[str, Any]) -> None:
    t = d[draw(st.sampled_from(_outputs(op, d)))]
    if max(t["Sizes"]) == 1:
        t["Sizes"][-1] = 2
    i = max(range(len(t["Sizes"])), key=lambda j: t["Sizes"][j])
    strides = [math.prod(t["Sizes"][j + 1 :]) for j in range(len(t["Sizes"]))]
    strides[i] = 0
    t["Strides"] = strides


def _output_overlap(draw: Draw, op: str, d: dict[str, Any]) -> None:
    t = d[draw(st.sampled_from(_outputs(op, d)))]
    if max(t["Sizes"]) == 1:
        t["Sizes"][-1] = 2
    t["Strides"] = [1] * len(t["Sizes"])


def _total_too_small(draw: Draw, op: str, d: dict[str, Any]) -> None:
    t = d[_any_tensor(draw, op, d)]
    t["TotalTensorSizeInBytes"] = 1


def _bad_alignment(draw: Draw, op: str, d: dict[str, Any]) -> None:
    d[_any_tensor(draw, op, d)]["GuaranteedBaseOffsetAlignment"] = draw(st.sampled_from([3, 6, 2]))


def _unknown_type(draw: Draw, op: str, d: dict[str, Any]) -> None:
    d[_any_tensor(draw, op, d)]["DataType"] = "UNKNOWN"


def _four_bit(draw: Draw, op: str, d: dict[str, Any]) -> None:
    d[_any_tensor(draw, op, d)]["DataType"] = draw(st.sampled_from(["UINT4", "INT4"]))


def _type_not_in_table(draw: Draw, op: str, d: dict[str, Any]) -> None:
    """A data type outside the member's support row (and runnable here), on the whole type group."""
    table = support_at(desc_class(op).support, LEVEL) or {}
    group = draw(st.sampled_from([g for g in TYPE_GROUPS[op] if any(m in d for m in g)]))
    allowed = set.intersection(*[set(table[m].data_types) for m in group if m in table and m in d])
    others = sorted(t.name for t in stack_types() - allowed)
    if not others:
        return
    name = draw(st.sampled_from(others))
    for m in group:
        if m in d:
            d[m]["DataType"] = name


def _rank_not_in_table(draw: Draw, op: str, d: dict[str, Any]) -> None:
    """Every tensor one dimension longer (or shorter), outside the support table where it is narrow."""
    delta = draw(st.sampled_from([1, -1]))
    for m in _tensors(d):
        t = d[m]
        t.pop("Strides", None)
        t["Sizes"] = [1, *t["Sizes"]] if delta > 0 else (t["Sizes"][1:] or [1])


def _type_mismatch(*members: str) -> Rule:
    def rule(draw: Draw, op: str, d: dict[str, Any]) -> None:
        m = draw(st.sampled_from([x for x in members if x in d]))
        current = d[m]["DataType"]
        others = sorted(t.name for t in stack_types() if t.name != current)
        d[m]["DataType"] = draw(st.sampled_from(others))

    return rule


def _rank_mismatch(*members: str) -> Rule:
    def rule(draw: Draw, op: str, d: dict[str, Any]) -> None:
        t = d[draw(st.sampled_from([x for x in members if x in d]))]
        t.pop("Strides", None)
        t["Sizes"] = [1, *t["Sizes"]] if len(t["Sizes"]) < 8 else t["Sizes"][1:]

    return rule


def _size_off(member: str, index: int | None = None, delta: Callable[[Draw], int] | None = None) -> Rule:
    """One size of ``member`` changed (index drawn when None) by a drawn non-zero delta."""

    def rule(draw: Draw, op: str, d: dict[str, Any]) -> None:
        t = d[member]
        i = draw(st.integers(0, len(t["Sizes"]) - 1)) if index is None else index % len(t["Sizes"])
        step = delta(draw) if delta else draw(st.sampled_from([1, 2, -1]))
        t["Sizes"][i] = max(1, t["Sizes"][i] + step) if t["Sizes"][i] + step >= 1 else t["Sizes"][i] + 1
        t.pop("Strides", None)

    return rule


def _set(key: str, value: Callable[[Draw, dict[str, Any]], Any]) -> Rule:
    def rule(draw: Draw, op: str, d: dict[str, Any]) -> None:
        d[key] = value(draw, d)

    return rule


def _array_item(key: str, values: list[Any]) -> Rule:
    def rule(draw: Draw, op: str, d: dict[str, Any]) -> None:
        items = list(d[key])
        items[draw(st.integers(0, len(items) - 1))] = draw(st.sampled_from(values))
        d[key] = items

    return rule


def _array_length(*keys: str) -> Rule:
    def rule(draw: Draw, op: str, d: dict[str, Any]) -> None:
        key = draw(st.sampled_from(list(keys)))
        items = list(d[key])
        d[key] = [*items, items[-1]] if draw(st.booleans()) or len(items) < 2 else items[:-1]
        d.pop("DimensionCount", None)

    return rule


COMMON_RULES: dict[str, Rule] = {
    "Sizes[i] = 0": _zero_size,
    "DimensionCount > 8": _rank_9,
    "Flags other than OWNED_BY_DML": _bad_flags,
    "OWNED_BY_DML on an output": _owned_output,
    "Strides of the wrong length": _strides_length,
    "output stride 0 (broadcast output)": _output_broadcast,
    "overlapping output strides (ruling 11)": _output_overlap,
    "TotalTensorSizeInBytes too small": _total_too_small,
    "GuaranteedBaseOffsetAlignment not a power of two >= element size": _bad_alignment,
    "DataType UNKNOWN": _unknown_type,
    "4-bit DataType": _four_bit,
    "DataType outside the support table": _type_not_in_table,
    "DimensionCount outside the support table": _rank_not_in_table,
}

_POOL = {
    "Strides[i] = 0": _array_item("Strides", [0]),
    "WindowSize[i] = 0": _array_item("WindowSize", [0]),
    "Dilations[i] = 0": _array_item("Dilations", [0]),
    "window larger than the padded input": _array_item("WindowSize", [9, 12]),
    "DimensionCount != spatial dimensions": _array_length(
        "Strides", "WindowSize", "StartPadding", "EndPadding", "Dilations"
    ),
    "large padding (padding-only windows)": _array_item("StartPadding", [3, 5, 8]),
}

OP_RULES: dict[str, dict[str, Rule]] = {
    "GATHER": {
        "tensors' DimensionCount differ": _rank_mismatch("IndicesTensor", "OutputTensor"),
        "Input/Output DataType differ": _type_mismatch("OutputTensor"),
        "Axis >= DimensionCount": _set(
            "Axis", lambda draw, d: len(d["InputTensor"]["Sizes"]) + draw(st.integers(0, 2))
        ),
        "IndexDimensions > DimensionCount": _set(
            "IndexDimensions", lambda draw, d: len(d["InputTensor"]["Sizes"]) + draw(st.integers(1, 2))
        ),
        "IndicesTensor leading size != 1": _size_off("IndicesTensor", 0, lambda draw: draw(st.integers(1, 2))),
        "OutputTensor.Sizes wrong": _size_off("OutputTensor"),
    },
    "SLICE1": {
        "Input/Output DataType differ": _type_mismatch("OutputTensor"),
        "Output DimensionCount differs": _rank_mismatch("OutputTensor"),
        "DimensionCount != tensor rank": _array_length("InputWindowOffsets", "InputWindowSizes", "InputWindowStrides"),
        "InputWindowSizes[i] = 0": _array_item("InputWindowSizes", [0]),
        "offset + size > input size": _array_item("InputWindowOffsets", [7, 9]),
        "InputWindowStrides[i] = 0": _array_item("InputWindowStrides", [0]),
        "output size > MaxCopiedElements": _size_off("OutputTensor", None, lambda draw: draw(st.integers(1, 3))),
    },
    "MAX_POOLING2": {
        "Input/Output DataType differ": _type_mismatch("OutputTensor"),
        "tensors' DimensionCount differ": _rank_mismatch("OutputTensor", "OutputIndicesTensor"),
        "OutputTensor batch/channel != input's": _size_off("OutputTensor", None, lambda draw: 1),
        "output spatial size not floor/ceil": _size_off(
            "OutputTensor", -1, lambda draw: draw(st.sampled_from([2, 3, -2]))
        ),
        "OutputIndicesTensor sizes != OutputTensor's": _size_off("OutputIndicesTensor"),
        **_POOL,
    },
    "MAX_POOLING_GRAD": {
        "DataType differ": _type_mismatch("InputGradientTensor", "OutputGradientTensor"),
        "tensors' DimensionCount differ": _rank_mismatch("InputGradientTensor", "OutputGradientTensor"),
        "OutputGradientTensor sizes != InputTensor's": _size_off("OutputGradientTensor"),
        "InputGradientTensor batch/channel != input's": _size_off("InputGradientTensor", 0, lambda draw: 1),
        "gradient spatial size not floor/ceil": _size_off(
            "InputGradientTensor", -1, lambda draw: draw(st.sampled_from([1, 2, -1]))
        ),
        **_POOL,
    },
    "RESAMPLE2": {
        "Input/Output DataType differ": _type_mismatch("OutputTensor"),
        "tensors' DimensionCount differ": _rank_mismatch("OutputTensor"),
        "DimensionCount != tensor rank": _array_length("Scales", "InputPixelOffsets", "OutputPixelOffsets"),
        "Scales[i] <= 0 or not finite": _array_item("Scales", [0.0, -1.0, "inf", "nan"]),
        "pixel offset not finite": _array_item("InputPixelOffsets", ["inf", "-inf", "nan"]),
    },
    "RESAMPLE_GRAD1": {
        "DataType differ": _type_mismatch("OutputGradientTensor"),
        "tensors' DimensionCount differ": _rank_mismatch("OutputGradientTensor"),
        "DimensionCount != tensor rank": _array_length("Scales", "InputPixelOffsets", "OutputPixelOffsets"),
        "Scales[i] <= 0 or not finite": _array_item("Scales", [0.0, -1.0, "inf", "nan"]),
        "pixel offset not finite": _array_item("OutputPixelOffsets", ["inf", "-inf", "nan"]),
    },
    "ROI_ALIGN": {
        "DataType differ": _type_mismatch("ROITensor", "OutputTensor"),
        "ROITensor last size != 4": _size_off("ROITensor", -1),
        "ROITensor leading size != 1": _size_off("ROITensor", 0, lambda draw: 1),
        "BatchIndicesTensor leading size != 1": _size_off("BatchIndicesTensor", 0, lambda draw: 1),
        "BatchIndicesTensor count != NumROIs": _size_off("BatchIndicesTensor", -1),
        "OutputTensor.Sizes[0] != NumROIs": _size_off("OutputTensor", 0),
        "OutputTensor.Sizes[1] != ChannelCount": _size_off("OutputTensor", 1),
        "ReductionFunction not AVERAGE/MAX": _set(
            "ReductionFunction", lambda draw, d: draw(st.sampled_from(["SUM", "MIN"]))
        ),
        "SpatialScale not finite": _set("SpatialScaleX", lambda draw, d: draw(st.sampled_from(["inf", "nan"]))),
        "MinimumSamplesPerOutput = 0": _set("MinimumSamplesPerOutput", lambda draw, d: 0),
        "MaximumSamplesPerOutput < Minimum": _set(
            "MaximumSamplesPerOutput", lambda draw, d: max(0, d["MinimumSamplesPerOutput"] - 1)
        ),
    },
}


# -- verdicts ------------------------------------------------------------------------------------------


@dataclass
class Verdicts:
    """dmlops's and DirectML's verdict on one desc."""

    op: str
    desc: OperatorDesc
    source: str
    dmlops: str | None
    """None when dmlops accepts, else the member its InvalidDescError names."""
    dmlops_message: str
    directml: bool
    """True when CreateOperator accepted."""

    @property
    def outcome(self) -> str:
        """agree-accept, agree-reject, dmlops-only-reject or directml-only-reject."""
        if self.dmlops is None:
            return "agree-accept" if self.directml else "directml-only-reject"
        return "dmlops-only-reject" if self.directml else "agree-reject"


def _retype(draw: Draw, op: str, d: dict[str, Any]) -> None:
    table = support_at(desc_class(op).support, LEVEL) or {}
    types = stack_types()
    for group in TYPE_GROUPS[op]:
        present = [m for m in group if m in d]
        allowed = set(types)
        for m in present:
            if m in table:
                allowed &= table[m].data_types
        if present and allowed:
            name = draw(st.sampled_from(sorted(t.name for t in allowed)))
            for m in present:
                d[m]["DataType"] = name


def draw_desc(draw: Draw, op: str) -> tuple[dict[str, Any], str]:
    """A desc dict and where it came from (valid, mutated, or the rule it breaks)."""
    d = BUILDERS[op](draw)
    _retype(draw, op, d)
    source = draw(st.sampled_from(["valid", "mutated", "rule", "rule"]))
    if source == "mutated":
        d = mutate(draw, d, draw(st.integers(1, 3)))
        return d, "mutated"
    if source == "rule":
        rules = {**COMMON_RULES, **OP_RULES[op]}
        name = draw(st.sampled_from(sorted(rules)))
        d = copy.deepcopy(d)
        try:
            rules[name](draw, op, d)
        except (KeyError, IndexError, TypeError, ValueError):
            return d, f"rule not applicable: {name}"
        return d, f"rule: {name}"
    return d, "valid"


def verdicts(op: str, d: dict[str, Any], source: str) -> Verdicts | str:
    """Both verdicts, or why the desc cannot be compared (a string)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            desc = desc_from_json(op, d)
        except (InvalidDescError, TypeError, ValueError):
            return "not constructible (a parse or type error: nothing to send)"
    for arrays in type(desc).count_members.values():
        by_name = {i.dml_name: i for i in desc.member_infos()}
        if len({len(getattr(desc, by_name[a].attr)) for a in arrays}) > 1:
            return "arrays of different lengths (the struct has one DimensionCount: DirectML cannot see it)"
    names = {t.data_type.name for t in desc.tensors().values()}
    if names & set(STACK_UNSUPPORTED_NAMES):
        return "16-bit data type (unsupported on this stack)"
    try:
        desc.validate(LEVEL)
        dml_verdict, message = None, ""
    except InvalidDescError as exc:
        dml_verdict, message = exc.member or "?", str(exc)
    try:
        from dmlops.directml import create_operator

        create_operator(desc, LEVEL)
        accepted = True
    except DirectMLRejectedDescError:
        accepted = False
    except DmlError as exc:
        return f"DirectML failed: {type(exc).__name__}"
    except (struct.error, OverflowError) as exc:
        # A member too wide for its C type (e.g. GuaranteedBaseOffsetAlignment >= 2^32): dmlops.directml
        # cannot pack it, so DirectML never sees it.
        return f"not packable ({type(exc).__name__})"
    return Verdicts(op, desc, source, dml_verdict, message, accepted)


# -- known disagreements ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class KnownDisagreement:
    """An accepted or pending validation disagreement, with its reason."""

    key: str
    op: str
    outcome: str
    reason: str
    applies: Callable[[Verdicts], bool]


def _pool_floor_sizes(desc: Any) -> tuple[int, ...]:
    return tuple(desc.window.output_sizes(desc.input_tensor.sizes[2:]))


def _mp2_output_size(v: Verdicts) -> bool:
    if v.dmlops and v.dmlops.startswith("WindowSize"):
        return "must fit in the padded input" in v.dmlops_message
    return bool(v.dmlops) and v.dmlops.startswith("OutputTensor.Sizes[")


def _mpg_not_floor(v: Verdicts) -> bool:
    desc: Any = v.desc
    try:
        floor = _pool_floor_sizes(desc)
    except ValueError:
        return False
    return tuple(desc.input_gradient_tensor.sizes[2:]) != floor


def _overlapping_output(v: Verdicts) -> bool:
    return bool(v.dmlops) and v.dmlops.endswith(".Strides") and "overlap" in v.dmlops_message


def _four_bit_types(v: Verdicts) -> bool:
    return any(t.data_type.is_4bit for t in v.desc.tensors().values())


KNOWN_DISAGREEMENTS: tuple[KnownDisagreement, ...] = (
    KnownDisagreement(
        "max-pooling2-any-output-size",
        "MAX_POOLING2",
        "dmlops-only-reject",
        "DirectML's CreateOperator accepts any output size (padding-only windows give -FLT_MAX); the lead is "
        "changing dmlops to follow (rulings 7 and 8 overturned)",
        _mp2_output_size,
    ),
    KnownDisagreement(
        "max-pooling-grad-floor-only",
        "MAX_POOLING_GRAD",
        "directml-only-reject",
        "DirectML accepts only the floor-rounded InputGradientTensor size; dmlops also accepts the ceil size "
        "(ruling 8 overturned for the grad; the lead is changing it)",
        _mpg_not_floor,
    ),
    KnownDisagreement(
        "overlapping-output",
        "*",
        "dmlops-only-reject",
        "ruling 11: dmlops refuses output Strides whose elements overlap (the result would depend on the write "
        "order); DirectML's CreateOperator does not check it",
        _overlapping_output,
    ),
    KnownDisagreement(
        "four-bit",
        "*",
        "dmlops-only-reject",
        "ruling 13: dmlops does not support the 4-bit types (UINT4/INT4); DirectML accepts them where its tables do",
        _four_bit_types,
    ),
)


def _offset_nan(v: Verdicts) -> bool:
    return bool(v.dmlops) and "PixelOffsets[" in v.dmlops and "NaN" in v.dmlops_message


def _alignment_below_16(v: Verdicts) -> bool:
    return any(0 < t.guaranteed_base_offset_alignment < 16 for t in v.desc.tensors().values())


def _negative_spatial_scale(v: Verdicts) -> bool:
    desc: Any = v.desc
    return desc.spatial_scale_x < 0 or desc.spatial_scale_y < 0


def _nan_spatial_scale(v: Verdicts) -> bool:
    desc: Any = v.desc
    return bool(v.dmlops) and (math.isnan(desc.spatial_scale_x) or math.isnan(desc.spatial_scale_y))


def _zero_dilation(v: Verdicts) -> bool:
    return (
        bool(v.dmlops)
        and v.dmlops.split("[")[0] in ("Dilations", "Strides", "WindowSize")
        and "got 0" in (v.dmlops_message)
    )


def _scale_inf(v: Verdicts) -> bool:
    desc: Any = v.desc
    return bool(v.dmlops) and v.dmlops.startswith("Scales[") and any(math.isinf(x) and x > 0 for x in desc.scales)


def _pool_grad_count(v: Verdicts) -> bool:
    desc: Any = v.desc
    return v.dmlops == "DimensionCount" and len(desc.strides) > desc.input_tensor.dimension_count - 2


def _gather_leading_indices(v: Verdicts) -> bool:
    return bool(v.dmlops) and v.dmlops.startswith("IndicesTensor.Sizes[")


NEW_DISAGREEMENTS: tuple[KnownDisagreement, ...] = (
    KnownDisagreement(
        "gather-leading-index-sizes",
        "GATHER",
        "dmlops-only-reject",
        "new (reported): DirectML accepts some GATHER IndicesTensor with a size other than 1 before its last "
        "IndexDimensions dimensions (Input {2,2}, Indices {2,1}, Output {2,1}, Axis 1, IndexDimensions 1), "
        "rejects others, and crashes in CreateOperator on others (Input {1,1,1,2}, Indices {3,1,1,1}, Output "
        "{1,1,1,1}, Axis 3, IndexDimensions 1: the host process dies, no HRESULT)",
        _gather_leading_indices,
    ),
    KnownDisagreement(
        "resample-scale-inf",
        "*",
        "dmlops-only-reject",
        "new (reported): DirectML's CreateOperator accepts Scales[i] = +inf (RESAMPLE2, RESAMPLE_GRAD1); it "
        "rejects 0, negative and NaN scales as dmlops does",
        _scale_inf,
    ),
    KnownDisagreement(
        "max-pooling-grad-dimension-count",
        "MAX_POOLING_GRAD",
        "dmlops-only-reject",
        "known, kept (E36): DirectML's MAX_POOLING_GRAD accepts window arrays longer than the spatial dimensions "
        "(DimensionCount 3 with 4-D tensors) but computes no pooling gradient with them; dmlops requires "
        "InputTensor.DimensionCount - 2",
        _pool_grad_count,
    ),
    KnownDisagreement(
        "pixel-offset-nan",
        "*",
        "dmlops-only-reject",
        "kept (E40): DirectML's CreateOperator accepts NaN InputPixelOffsets/OutputPixelOffsets; every result that "
        "is not NaN depends on a NaN-to-integer conversion, which lavapipe does as 0xFFFFFFFF/INT_MIN (D3D12: 0), "
        "so it cannot be observed here; +-inf is accepted by dmlops",
        _offset_nan,
    ),
    KnownDisagreement(
        "alignment-below-16",
        "*",
        "directml-only-reject",
        "new (reported): DirectML rejects a GuaranteedBaseOffsetAlignment below 16 (probed 1..8 on INT8, UINT8, "
        "FLOAT32, INT64: rejected; 16 and 32 accepted); dmlops accepts any power of two >= the element size",
        _alignment_below_16,
    ),
    KnownDisagreement(
        "roi-negative-spatial-scale",
        "ROI_ALIGN",
        "directml-only-reject",
        "new (reported): DirectML rejects a negative SpatialScaleX/Y (even -1e-30; 0 and -0 pass); dmlops "
        "accepts any finite scale",
        _negative_spatial_scale,
    ),
    KnownDisagreement(
        "roi-nan-spatial-scale",
        "ROI_ALIGN",
        "dmlops-only-reject",
        "new (reported): DirectML accepts a NaN SpatialScaleX/Y (its check rejects < 0 and +-inf only); dmlops "
        "requires finite",
        _nan_spatial_scale,
    ),
    KnownDisagreement(
        "max-pooling2-zero-dilation",
        "MAX_POOLING2",
        "dmlops-only-reject",
        "new (reported): DirectML's MAX_POOLING2 accepts Dilations[i] = 0, Strides[i] = 0 and WindowSize[i] = 0 "
        "(a 0 dilation "
        "makes the window's elements along i read one position: 4x4 input, 2x2 window, Dilations {0, 1} gives "
        "the 1x2 windows' maxima); MAX_POOLING_GRAD rejects a 0 dilation like dmlops",
        _zero_dilation,
    ),
)
"""Disagreements found by this campaign, reported to the lead, pending a decision on dmlops's rules."""


def classify(v: Verdicts) -> str:
    """The key of the known disagreement that explains ``v``, or "unexplained"."""
    for known in (*KNOWN_DISAGREEMENTS, *NEW_DISAGREEMENTS):
        if known.op in ("*", v.op) and known.outcome == v.outcome and known.applies(v):
            return known.key
    return "unexplained"


KNOWN_FAILURES: dict[str, str] = {
    "GATHER": "new (reported): DirectML's CreateOperator crashes the host process (no HRESULT) on GATHER descs "
    "whose IndicesTensor has a size other than 1 before its last IndexDimensions dimensions, which dmlops "
    "rejects (IndicesTensor.Sizes[i] must be 1); DirectML should return E_INVALIDARG",
}
"""Operators whose CreateOperator fails other than with E_INVALIDARG on some descs dmlops rejects."""


# -- minimising ------------------------------------------------------------------------------------------


def _size(d: dict[str, Any]) -> tuple[int, int]:
    elements = sum(
        math.prod(t["Sizes"]) for t in d.values() if isinstance(t, dict) and isinstance(t.get("Sizes"), list)
    )
    return elements, len(json.dumps(d, default=str))


def _candidates(d: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            for key in ("Strides", "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment", "Flags"):
                if key in v:
                    c = copy.deepcopy(d)
                    del c[k][key]
                    out.append(c)
            sizes = v.get("Sizes")
            if isinstance(sizes, list):
                for i, s in enumerate(sizes):
                    if isinstance(s, int) and s > 1:
                        for new in (1, s // 2, s - 1):
                            c = copy.deepcopy(d)
                            c[k]["Sizes"][i] = new
                            c[k].pop("Strides", None)
                            out.append(c)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                if isinstance(x, (int, float)) and not isinstance(x, bool) and x not in (0, 1):
                    for new in (0, 1):
                        c = copy.deepcopy(d)
                        c[k][i] = type(x)(new)
                        out.append(c)
    return out


def minimise(op: str, d: dict[str, Any], keep: Callable[[Verdicts], bool], budget: int = 150) -> dict[str, Any]:
    """Greedy shrinking of a desc dict while ``keep`` holds (fewer elements, fewer members)."""
    best = d
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for c in sorted(_candidates(best), key=_size):
            if _size(c) >= _size(best):
                continue
            tries += 1
            v = verdicts(op, c, "minimising")
            if isinstance(v, Verdicts) and keep(v):
                best = c
                improved = True
                break
            if tries >= budget:
                break
    return best


# -- the campaign ----------------------------------------------------------------------------------------


@dataclass
class ParityTally:
    """Counts of one operator's validation parity campaign."""

    op: str
    drawn: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    not_compared: dict[str, int] = field(default_factory=dict)
    kinds: dict[tuple[str, str], int] = field(default_factory=dict)
    """(outcome, known key or "unexplained") -> count, for disagreements."""
    examples: dict[tuple[str, str, str], tuple[dict[str, Any], Verdicts]] = field(default_factory=dict)
    """(outcome, kind, dmlops member or rule) -> the smallest desc dict seen, and its verdicts."""
    sources: dict[str, dict[str, int]] = field(default_factory=dict)
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    """DirectML failures other than E_INVALIDARG (a crashed host...) -> the smallest desc dict."""

    def add(self, d: dict[str, Any], v: Verdicts | str) -> None:
        """Count one drawn desc."""
        self.drawn += 1
        if isinstance(v, str):
            self.not_compared[v] = self.not_compared.get(v, 0) + 1
            if v.startswith("DirectML failed"):
                old = self.failures.get(v)
                if old is None or _size(d) < _size(old):
                    self.failures[v] = d
            return
        self.outcomes[v.outcome] = self.outcomes.get(v.outcome, 0) + 1
        per_source = self.sources.setdefault(v.source, {})
        per_source[v.outcome] = per_source.get(v.outcome, 0) + 1
        if v.outcome.startswith("agree"):
            return
        kind = classify(v)
        self.kinds[(v.outcome, kind)] = self.kinds.get((v.outcome, kind), 0) + 1
        key = (v.outcome, kind, v.dmlops or v.source)
        old = self.examples.get(key)
        if old is None or _size(d) < _size(old[0]):
            self.examples[key] = (d, v)

    @property
    def unexplained(self) -> int:
        """Disagreements that no known entry explains."""
        return sum(n for (_, kind), n in self.kinds.items() if kind == "unexplained")

    def minimise_examples(self, budget: int = 150) -> None:
        """Shrink each example while it keeps its outcome, kind and dmlops member."""
        for key, (d, v) in list(self.examples.items()):
            outcome, kind, member = key

            def keep(w: Verdicts, outcome: str = outcome, kind: str = kind, member: str = member) -> bool:
                return w.outcome == outcome and classify(w) == kind and (w.dmlops or member) == member

            small = minimise(self.op, d, keep, budget)
            w = verdicts(self.op, small, v.source)
            if isinstance(w, Verdicts):
                self.examples[key] = (small, w)


def parity_campaign(op: str, cases: int, seed: int, tally: ParityTally | None = None) -> ParityTally:
    """Draw ``cases`` descs of ``op`` (seeded) and count the verdicts."""
    tally = tally or ParityTally(op)

    def body(data: st.DataObject) -> None:
        d, source = draw_desc(data.draw, op)
        tally.add(d, verdicts(op, d, source))

    run_seeded(body, cases, seed)
    return tally
