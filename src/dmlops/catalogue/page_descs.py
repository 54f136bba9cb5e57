"""Page-shaped descs for every catalogued operator: one valid desc, and one per page rule that breaks it.

Used to measure validation parity with DirectML's CreateOperator
(``scripts/generic_parity.py``, ``tests/directml/test_generic_validation_parity.py``)
and by the catalogue's own tests. A valid desc is built from the operator's page facts
(:mod:`dmlops.catalogue.page_facts`): for every tensor a data type and a dimension count
its support table allows at the level (the same within each "must have the same"
group), every size 1, and member values that suit such tensors (windows and strides of
1, paddings and axes of 0). Operators whose shapes are their own (GEMM, JOIN,
CONVOLUTION...) get a patch from ``SHAPES``.

Each rule gives one broken desc (:func:`broken_descs`): a data type outside a tensor's
row, a dimension count outside it, and, for each same-attribute constraint, one member
made to differ from the first.

Examples
--------
>>> from dmlops.catalogue import page_descs
>>> desc = page_descs.valid_json("ELEMENT_WISE_ADD", "6_4")
>>> desc["ATensor"]
{'DataType': 'FLOAT32', 'Sizes': [1, 1, 1, 1]}
>>> sorted(name for name, _, _ in page_descs.broken_descs("ELEMENT_WISE_ADD", "6_4"))[:2]
['ATensor.DataType', 'ATensor.DimensionCount']
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from ..enums import FeatureLevel, TensorDataType
from . import page_facts
from ._spec import OperatorSpec

__all__ = ["OPTIONAL_TENSORS", "RUNNABLE_TYPES", "SHAPES", "broken_descs", "table_at", "valid_json"]

RUNNABLE_TYPES = ("FLOAT32", "UINT32", "INT32", "UINT8", "INT8", "UINT64", "INT64", "FLOAT64")
"""Data types in the order a valid desc prefers them; FLOAT16, INT16 and UINT16 are left out
(the directml backend's stack reports them unsupported)."""

ARRAY_ELEMENTS = 2


def _t(dtype: str | None, *sizes: int) -> dict[str, Any]:
    return {"DataType": dtype, "Sizes": list(sizes)}


_ONE = (1, 1, 1, 1)
_U8, _U32, _I8, _F32 = "UINT8", "UINT32", "INT8", "FLOAT32"
_RNN_IO = {"InputTensor": _t(_F32, *_ONE), "OutputSequenceTensor": _t(_F32, *_ONE)}

SHAPES: dict[str, dict[str, Any]] = {
    **{
        f"ELEMENT_WISE_LOGICAL_{n}": {"OutputTensor": _t(_U8, *_ONE)}
        for n in ("AND", "EQUALS", "GREATER_THAN", "LESS_THAN", "NOT", "OR", "XOR")
    },
    **{
        f"ELEMENT_WISE_LOGICAL_{n}": {
            "ATensor": _t(_U8, *_ONE),
            "BTensor": _t(_U8, *_ONE),
            "OutputTensor": _t(_U8, *_ONE),
        }
        for n in ("AND", "OR", "XOR")
    },
    "ELEMENT_WISE_LOGICAL_NOT": {"InputTensor": _t(_U8, *_ONE), "OutputTensor": _t(_U8, *_ONE)},
    "ELEMENT_WISE_IS_NAN": {"OutputTensor": _t(_U8, *_ONE)},
    "REDUCE": {"Function": "SUM", "Axes": [3]},
    "ROI_POOLING": {"ROITensor": _t(_F32, 1, 1, 1, 5)},
    "SPLIT": {"InputTensor": _t(None, 1, 1, 1, 2), "Axis": 3},
    "JOIN": {"OutputTensor": _t(None, 1, 1, 1, 2), "Axis": 3},
    "VALUE_SCALE_2D": {"ChannelCount": 1, "Bias": [0.0]},
    "TOP_K": {"Axis": 3, "OutputIndexTensor": _t(_U32, *_ONE)},
    "TOP_K1": {"Axis": 3, "OutputIndexTensor": _t(_U32, *_ONE)},
    "RNN": {**_RNN_IO, "WeightTensor": _t(_F32, *_ONE), "RecurrenceTensor": _t(_F32, *_ONE)},
    "LSTM": {
        **_RNN_IO,
        "WeightTensor": _t(_F32, 1, 1, 4, 1),
        "RecurrenceTensor": _t(_F32, 1, 1, 4, 1),
        "ActivationDescs": [{"Type": "ACTIVATION_SIGMOID"}, {"Type": "ACTIVATION_TANH"}, {"Type": "ACTIVATION_TANH"}],
    },
    "GRU": {
        **_RNN_IO,
        "WeightTensor": _t(_F32, 1, 1, 3, 1),
        "RecurrenceTensor": _t(_F32, 1, 1, 3, 1),
        "ActivationDescs": [{"Type": "ACTIVATION_SIGMOID"}, {"Type": "ACTIVATION_TANH"}],
    },
    "MAX_UNPOOLING": {"IndicesTensor": _t(_U32, *_ONE)},
    "SCATTER_ELEMENTS": {"IndicesTensor": _t(_U32, *_ONE)},
    "ONE_HOT": {
        "IndicesTensor": _t(_U32, *_ONE),
        "ValuesTensor": _t(None, 1, 1, 1, 2),
        "OutputTensor": _t(None, 1, 1, 1, 2),
        "Axis": 3,
    },
    "REVERSE_SUBSEQUENCES": {"SequenceLengthsTensor": _t(_U32, *_ONE)},
    "RANDOM_GENERATOR": {"InputStateTensor": _t(_U32, 1, 1, 1, 6), "OutputTensor": _t(_U32, *_ONE)},
    "ADAM_OPTIMIZER": {"LearningRate": 0.01, "Beta1": 0.9, "Beta2": 0.999, "Epsilon": 1e-8},
    "GATHER_ND": {"IndicesTensor": _t(_U32, *_ONE), "InputDimensionCount": 4, "IndicesDimensionCount": 2},
    "GATHER_ND1": {
        "IndicesTensor": _t(_U32, *_ONE),
        "InputDimensionCount": 4,
        "IndicesDimensionCount": 2,
        "BatchDimensionCount": 0,
    },
    "GATHER_ELEMENTS": {"IndicesTensor": _t(_U32, *_ONE)},
    "ROI_ALIGN1": {
        "ReductionFunction": "AVERAGE",
        "ROITensor": _t(_F32, 1, 1, 1, 4),
        "BatchIndicesTensor": _t(_U32, *_ONE),
    },
    "ROI_ALIGN_GRAD": {
        "ReductionFunction": "AVERAGE",
        "ROITensor": _t(_F32, 1, 1, 1, 4),
        "BatchIndicesTensor": _t(_U32, *_ONE),
        "OutputGradientTensor": _t(_F32, *_ONE),
    },
    # The optional zero-point and bias tensors are present, so that their rules are measured too.
    "QUANTIZED_LINEAR_AVERAGE_POOLING": {
        "InputTensor": _t(_I8, *_ONE),
        "InputScaleTensor": _t(_F32, *_ONE),
        "InputZeroPointTensor": _t(_I8, *_ONE),
        "OutputScaleTensor": _t(_F32, *_ONE),
        "OutputZeroPointTensor": _t(_I8, *_ONE),
        "OutputTensor": _t(_I8, *_ONE),
    },
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": {
        "ATensor": _t(_I8, *_ONE),
        "AScaleTensor": _t(_F32, *_ONE),
        "AZeroPointTensor": _t(_I8, *_ONE),
        "BTensor": _t(_I8, *_ONE),
        "BScaleTensor": _t(_F32, *_ONE),
        "BZeroPointTensor": _t(_I8, *_ONE),
        "BiasTensor": _t(_F32, *_ONE),
        "OutputTensor": _t(_F32, *_ONE),
    },
    "MAX_POOLING1": {"OutputIndicesTensor": _t(_U32, *_ONE)},
    "CONVOLUTION": {"BiasTensor": _t(None, *_ONE)},
    "QUANTIZE": {
        "InputTensor": _t(_F32, *_ONE),
        "QuantizationType": "SCALE",
        "QuantizationTensors": [_t(_F32, *_ONE)],
        "OutputTensor": _t(_I8, *_ONE),
    },
    "DEQUANTIZE": {
        "InputTensor": _t(_I8, *_ONE),
        "QuantizationType": "SCALE",
        "QuantizationTensors": [_t(_F32, *_ONE)],
        "OutputTensor": _t(_F32, *_ONE),
    },
    # Query [batch, sequence, heads x head size], Key and Value [batch, key sequence, ...]:
    # the generic all-ones shapes lack the Query/Key/Value inputs DirectML requires.
    **{
        name: {
            "QueryTensor": _t(_F32, 1, 2, 4),
            "KeyTensor": _t(_F32, 1, 3, 4),
            "ValueTensor": _t(_F32, 1, 3, 4),
            "OutputTensor": _t(_F32, 1, 2, 4),
            "MaskType": "NONE",
            **heads,
        }
        for name, heads in (
            ("MULTIHEAD_ATTENTION", {"HeadCount": 2}),
            ("MULTIHEAD_ATTENTION1", {"QueryHeadCount": 2, "KeyValueHeadCount": 2}),
        )
    },
    "UNFOLD": {"OutputTensor": _t(None, 1, 1, 1)},
    "FOLD": {"InputTensor": _t(None, 1, 1, 1)},
}
"""operator -> members (JSON) that replace the generic ones in its valid desc; a tensor's
``DataType`` may be ``None``: the generic choice is kept."""

OPTIONAL_TENSORS: dict[str, tuple[str, ...]] = {
    "ELEMENT_WISE_QUANTIZE_LINEAR": ("ZeroPointTensor",),
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": ("ZeroPointTensor",),
    "GEMM": ("CTensor",),
    "MEAN_VARIANCE_NORMALIZATION": ("ScaleTensor", "BiasTensor"),
    "MEAN_VARIANCE_NORMALIZATION1": ("ScaleTensor", "BiasTensor"),
    "MEAN_VARIANCE_NORMALIZATION2": ("ScaleTensor", "BiasTensor"),
    "RNN": ("HiddenInitTensor", "SequenceLengthsTensor", "OutputSingleTensor"),
    "LSTM": (
        "HiddenInitTensor",
        "CellMemInitTensor",
        "SequenceLengthsTensor",
        "OutputSingleTensor",
        "OutputCellSingleTensor",
    ),
    "GRU": ("HiddenInitTensor", "SequenceLengthsTensor", "OutputSingleTensor"),
    "MATRIX_MULTIPLY_INTEGER": ("AZeroPointTensor", "BZeroPointTensor"),
    "QUANTIZED_LINEAR_MATRIX_MULTIPLY": ("AZeroPointTensor", "BZeroPointTensor", "OutputZeroPointTensor"),
    "CONVOLUTION_INTEGER": ("InputZeroPointTensor", "FilterZeroPointTensor"),
    "QUANTIZED_LINEAR_CONVOLUTION": (
        "InputZeroPointTensor",
        "FilterZeroPointTensor",
        "BiasTensor",
        "OutputZeroPointTensor",
    ),
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": ("AZeroPointTensor", "BZeroPointTensor", "OutputZeroPointTensor"),
    "ROI_ALIGN_GRAD": ("InputTensor",),
    "BATCH_NORMALIZATION_TRAINING": ("FusedAddTensor",),
    "DIAGONAL_MATRIX1": ("InputTensor",),
}
"""operator -> optional tensors present in its valid desc (generic all-ones shapes, which
DirectML 1.15.4 accepts), so that their page rules are measured too. The others stay out:
RNN/LSTM/GRU's BiasTensor and LSTM's PeepholeTensor, ROI_ALIGN_GRAD's
OutputROIGradientTensor and the attention operators' optional tensors need shapes of their
own (DirectML rejects the all-ones ones)."""


def _spec(name: str) -> OperatorSpec:
    from . import operator

    return operator(name)


def table_at(name: str, level: FeatureLevel) -> dict[str, page_facts.SupportRow]:
    """The support rows that apply at ``level`` (empty when the page has no table)."""
    tables = page_facts.support(name)
    best = [fl for fl in tables if fl <= level]
    return tables[max(best)] if best else {}


def _groups(name: str, attribute: str) -> list[set[str]]:
    groups: list[set[str]] = []
    for members, attributes in page_facts.same_rules(name):
        if attribute in attributes:
            merged = set(members)
            for g in [g for g in groups if g & merged]:
                merged |= g
                groups.remove(g)
            groups.append(merged)
    return groups


def _choose(name: str, spec: OperatorSpec, level: FeatureLevel) -> tuple[dict[str, str], dict[str, int]]:
    """A data type and a dimension count per tensor member, agreeing within each group."""
    rows = table_at(name, level)
    tensors = [m.name for m in spec.members if m.kind in ("input", "output", "input_array", "output_array")]
    types: dict[str, str] = {}
    dims: dict[str, int] = {}
    for attribute, out in (("DataType", types), ("DimensionCount", dims)):
        done: set[str] = set()
        groups = _groups(name, attribute) + [{t} for t in tensors]
        for group in groups:
            group = {m for m in group if m in tensors} - done
            if not group:
                continue
            done |= group
            if attribute == "DataType":
                # the types this stack runs first, then any the rows share (FLOAT16 where only it fits)
                order = [*RUNNABLE_TYPES, *(t.name for t in TensorDataType if t.name not in RUNNABLE_TYPES)]
                allowed = [t for t in order if all(_type_ok(rows.get(m), t) for m in group)]
                choice: Any = allowed[0] if allowed else "FLOAT32"
            else:
                counts = [d for d in (4, 3, 5, 2, 1, 6, 7, 8) if all(_dims_ok(rows.get(m), d) for m in group)]
                choice = counts[0] if counts else 4
            for m in group:
                out[m] = choice
    return types, dims


def _type_ok(row: page_facts.SupportRow | None, dtype: str) -> bool:
    return row is None or TensorDataType[dtype] in row.data_types


def _dims_ok(row: page_facts.SupportRow | None, d: int) -> bool:
    return row is None or row.dims[0] <= d <= row.dims[1]


def _scalar(member: str, kind: str, spec: OperatorSpec, types: dict[str, str]) -> Any:
    lower = member.lower()
    if kind == "uint":
        return 0 if ("axis" in lower or "offset" in lower) else 1
    if kind == "int":
        return 0
    if kind == "float":
        return 1.0
    if kind == "bool":
        return False
    return None


def valid_json(name: str, level: FeatureLevel | str = FeatureLevel.V6_4, *, optional: bool = True) -> dict[str, Any]:
    """A DxDispatch JSON desc of ``name`` that the page's rules accept at ``level``.

    ``optional=False`` leaves out the optional tensors of ``OPTIONAL_TENSORS`` too.
    """
    level = FeatureLevel.from_any(level)
    spec = _spec(name)
    types, dims = _choose(spec.name, spec, level)
    spatial = any(m.name in ("WindowSize", "WindowSizes", "FilterTensor", "Dilations") for m in spec.members)
    first_dims = next(iter(dims.values()), 4)
    desc: dict[str, Any] = {}
    for m in spec.members:
        lower = m.name.lower()
        if m.kind in ("input", "output"):
            if m.optional and (not optional or m.name not in OPTIONAL_TENSORS.get(spec.name, ())):
                continue
            desc[m.name] = _t(types[m.name], *([1] * dims[m.name]))
        elif m.kind in ("input_array", "output_array"):
            desc[m.name] = [_t(types[m.name], *([1] * dims[m.name])) for _ in range(ARRAY_ELEMENTS)]
        elif m.kind == "count":
            continue
        elif m.kind in ("uint_array", "int_array", "float_array"):
            n = first_dims - 2 if spatial else first_dims
            if m.count and m.count not in ("DimensionCount",) and not spatial:
                n = first_dims
            value: Any = 0 if ("padding" in lower or "offset" in lower or "axes" in lower) else 1
            if m.kind == "float_array":
                value = 0.5 if "inputpixeloffsets" in lower else -0.5 if "outputpixeloffsets" in lower else 1.0
            desc[m.name] = [value] * max(n, 1)
        elif m.kind == "enum":
            if m.enum == "DML_TENSOR_DATA_TYPE":
                desc[m.name] = next(iter(types.values()), "FLOAT32")
            else:
                from . import enum

                desc[m.name] = enum(m.enum or "").values[0].name
        elif m.kind == "scalar_union":
            desc[m.name] = 0
        elif m.kind == "size_2d":
            desc[m.name] = {"Width": 1, "Height": 1}
        elif m.kind in ("scale_bias", "operator_desc"):
            continue
        elif m.kind == "operator_desc_array":
            desc[m.name] = [{"Type": "ACTIVATION_SIGMOID"}]
        else:
            desc[m.name] = _scalar(m.name, m.kind, spec, types)
    rows = table_at(spec.name, level)
    for member, value in copy.deepcopy(SHAPES.get(spec.name, {})).items():
        if value is None:
            desc.pop(member, None)
            continue
        row = rows.get(member)
        if isinstance(value, dict) and value.get("DataType") and row is not None:
            if TensorDataType[value["DataType"]] not in row.data_types:
                value["DataType"] = None  # the page's table at this level wins over the shape's type
        _keep_types(value, desc.get(member))
        desc[member] = value
    return desc


def _keep_types(value: Any, generic: Any) -> None:
    if isinstance(value, dict) and "DataType" in value and value["DataType"] is None:
        value["DataType"] = generic["DataType"] if isinstance(generic, dict) else "FLOAT32"
    elif isinstance(value, list):
        for i, v in enumerate(value):
            g = generic[i] if isinstance(generic, list) and i < len(generic) else generic
            if isinstance(g, list):
                g = g[0] if g else None
            _keep_types(v, g)


def _tensor_slots(desc: dict[str, Any], spec: OperatorSpec) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(member, slot name, tensor JSON) of every tensor present in ``desc``."""
    for m in spec.members:
        value = desc.get(m.name)
        if value is None:
            continue
        if m.kind in ("input", "output"):
            yield m.name, m.name, value
        elif m.kind in ("input_array", "output_array"):
            for i, t in enumerate(value):
                yield m.name, f"{m.name}[{i}]", t


def broken_descs(name: str, level: FeatureLevel | str = FeatureLevel.V6_4) -> list[tuple[str, str, dict[str, Any]]]:
    """(rule, member, desc): the valid desc with one page rule broken, one desc per rule.

    ``rule`` is ``"<member>.DataType"`` / ``"<member>.DimensionCount"`` for a support row and
    ``"same <Attribute>: <members>"`` for a constraint.
    """
    level = FeatureLevel.from_any(level)
    spec = _spec(name)
    base = valid_json(name, level)
    rows = table_at(spec.name, level)
    out: list[tuple[str, str, dict[str, Any]]] = []
    slots = list(_tensor_slots(base, spec))
    for member, slot, _ in slots:
        row = rows.get(member)
        if row is None or (slot.endswith("]") and not slot.endswith("[0]")):
            continue
        # The whole same-attribute group changes with the member, so that only the table's rule breaks.
        for attribute, values in (
            ("DataType", [t for t in RUNNABLE_TYPES if TensorDataType[t] not in row.data_types][:1]),
            ("DimensionCount", [d for d in (row.dims[0] - 1, row.dims[1] + 1) if 1 <= d <= 8]),
        ):
            group = next((g for g in _groups(spec.name, attribute) if member in g), {member})
            targets = [s for m, s, _ in slots if m in group]
            for value in values:
                change: dict[str, Any] = {"DataType": value} if attribute == "DataType" else {"Sizes": [1] * int(value)}
                desc = base
                for target in targets:
                    desc = _patched(desc, spec, target, change)
                out.append((f"{member}.{attribute}", slot, desc))
    for members, attributes in page_facts.same_rules(spec.name):
        present = [s for m in members for mm, s, _ in _tensor_slots(base, spec) if mm == m]
        if len(present) < 2:
            continue
        target = present[-1]
        current = dict(_tensor_slots_by_slot(base, spec)[target])
        for attribute in attributes:
            patch: dict[str, Any]
            if attribute == "DataType":
                others = [t for t in RUNNABLE_TYPES if t != current["DataType"]]
                row = rows.get(target.split("[")[0])
                fitting = [t for t in others if row is None or TensorDataType[t] in row.data_types]
                patch = {"DataType": (fitting or others)[0]}
            elif attribute == "DimensionCount":
                n = len(current["Sizes"])
                row = rows.get(target.split("[")[0])
                options = [d for d in (n - 1, n + 1) if 1 <= d <= 8 and (row is None or _dims_ok(row, d))]
                patch = {"Sizes": [1] * (options[0] if options else (n + 1 if n < 8 else n - 1))}
            else:
                patch = {"Sizes": [*current["Sizes"][:-1], current["Sizes"][-1] + 1]}
            out.append((f"same {attribute}: {', '.join(members)}", target, _patched(base, spec, target, patch)))
    return out


def _tensor_slots_by_slot(desc: dict[str, Any], spec: OperatorSpec) -> dict[str, dict[str, Any]]:
    return {slot: t for _, slot, t in _tensor_slots(desc, spec)}


def _patched(base: dict[str, Any], spec: OperatorSpec, slot: str, patch: dict[str, Any]) -> dict[str, Any]:
    desc = copy.deepcopy(base)
    member, _, index = slot.partition("[")
    target = desc[member][int(index.rstrip("]"))] if index else desc[member]
    target.update(patch)
    target.pop("Strides", None)
    return desc
