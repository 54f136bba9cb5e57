"""Generic descs (descs/generic.py) for every catalogued operator: parse, validate, round-trip, errors.

For each of the 177 DML_OPERATOR_TYPEs a minimal desc is built from its catalogue row
alone, in DxDispatch's JSON spelling, then read with ``desc_from_json``, validated at the
operator's own feature level and written back with ``to_dml_dict``. Structural errors
(a missing member, a wrong JSON type, an unknown enum value, a count member that does not
match its array, an invalid tensor desc, a level below the operator's) name the struct
and the member.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from dmlops import catalogue
from dmlops.catalogue import OPERATORS, MemberSpec, OperatorSpec, page_descs, page_facts
from dmlops.descs import REGISTRY, desc_class, desc_from_json
from dmlops.descs.generic import GenericDesc, ScaleBias, Size2D, generic_desc_class
from dmlops.enums import FeatureLevel, TensorDataType
from dmlops.errors import DescParseError, DescTypeError, InvalidDescError, UnsupportedError

TENSOR = {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]}
N = 2  # elements of every array


def json_value(m: MemberSpec) -> Any:
    """A structurally valid DxDispatch JSON value for a member, from its kind alone."""
    if m.kind in ("input", "output"):
        return dict(TENSOR)
    if m.kind in ("input_array", "output_array"):
        return [dict(TENSOR) for _ in range(N)]
    if m.kind == "enum":
        return "FLOAT32" if m.enum == "DML_TENSOR_DATA_TYPE" else catalogue.enum(m.enum or "").values[0].name
    return {
        "count": N,
        "uint": 1,
        "int": 0,
        "float": 1.5,
        "bool": False,
        "uint_array": [1] * N,
        "int_array": [0] * N,
        "float_array": [1.0] * N,
        "scale_bias": {"Scale": 2, "Bias": 1},
        "size_2d": {"Width": 2, "Height": 2},
        "scalar_union": 1.5,
        "operator_desc": {"Type": "ACTIVATION_RELU"},
        "operator_desc_array": [{"Type": "ACTIVATION_SIGMOID"}, {"Type": "DML_OPERATOR_ACTIVATION_TANH", "Desc": {}}],
    }[m.kind]


def minimal_json(op: OperatorSpec) -> dict[str, Any]:
    """Every member but the optional ones (left out, as DxDispatch allows)."""
    return {m.name: json_value(m) for m in op.members if not m.optional}


def full_json(op: OperatorSpec) -> dict[str, Any]:
    """Every member, the optional ones included."""
    return {m.name: json_value(m) for m in op.members}


def _raises(exc_type: type[Exception], op: OperatorSpec, member: str, fn: Any) -> InvalidDescError:
    with pytest.raises(exc_type) as info:
        fn()
    err = info.value
    assert isinstance(err, InvalidDescError)
    assert err.struct == op.struct, str(err)
    assert err.member.split(".")[0].split("[")[0] == member, (err.member, str(err))
    assert op.struct in str(err) and member in str(err)
    return err


def test_every_operator_has_a_desc_class():
    classes = {op.name: desc_class(op.name) for op in OPERATORS}
    generic = {n for n, c in classes.items() if issubclass(c, GenericDesc)}
    assert len(generic) == len(OPERATORS) - len(REGISTRY) == 170
    assert not any(issubclass(desc_class(n), GenericDesc) for n in REGISTRY)  # hand-written keep priority
    assert desc_class("SCATTER") is desc_class("DML_OPERATOR_SCATTER_ELEMENTS")
    assert generic_desc_class("GEMM") is desc_class("DML_OPERATOR_GEMM")  # cached
    with pytest.raises(UnsupportedError, match="not a DML_OPERATOR_TYPE"):
        desc_class("gemm")  # DxDispatch's spellings are exact


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_parse_validate_round_trip(op: OperatorSpec):
    cls = desc_class(op.name)
    for source in (minimal_json(op), full_json(op)):
        desc = desc_from_json(op.dml_name, source, require_counts=True)
        assert type(desc) is cls
        # (validation against the page's rules: test_page_shaped_desc_validates, below)
        out = desc.to_dml_dict()
        again = desc_from_json(op.name, out, require_counts=True)
        assert again == desc
        assert again.to_dml_dict() == out
        # the same desc through the Python API (member attributes by keyword)
        kwargs = {i.attr: getattr(desc, i.attr) for i in desc.member_infos()}
        assert cls(**kwargs) == desc
        # inputs and outputs by kind, tensor arrays element by element
        expected_inputs = sum(
            1 if m.kind == "input" else N for m in op.members if m.kind in ("input", "input_array") and m.name in source
        )
        assert len(desc.tensors("input")) == expected_inputs
        expected_outputs = sum(
            1 if m.kind == "output" else N
            for m in op.members
            if m.kind in ("output", "output_array") and m.name in source
        )
        assert len(desc.tensors("output")) == expected_outputs


@pytest.mark.parametrize("op", [op for op in OPERATORS if op.name not in REGISTRY], ids=lambda op: op.name)
def test_page_shaped_desc_validates(op: OperatorSpec):
    """The page-shaped desc (catalogue.page_descs) passes every page rule at each table's level and 6_4."""
    levels = {op.feature_level, FeatureLevel.V6_4} | {
        fl for fl in page_facts.support(op.name) if fl >= op.feature_level
    }
    for level in sorted(levels):
        desc = desc_from_json(op.name, page_descs.valid_json(op.name, level))
        desc.validate(level)


@pytest.mark.parametrize("op", [op for op in OPERATORS if op.name not in REGISTRY], ids=lambda op: op.name)
def test_each_broken_page_rule_is_rejected_naming_the_member(op: OperatorSpec):
    """One desc per page rule (a data type, a dimension count, a same-attribute constraint) is refused."""
    for rule, slot, bad in page_descs.broken_descs(op.name, FeatureLevel.V6_4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            desc = desc_from_json(op.name, bad)
        with pytest.raises(InvalidDescError) as info:
            desc.validate("6_4")
        assert info.value.struct == op.struct
        assert str(info.value).startswith(f"{op.struct}."), str(info.value)
        if not rule.startswith("same"):
            assert slot in str(info.value) or rule.split(".")[1] in str(info.value), (rule, str(info.value))


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_structural_errors_name_the_member(op: OperatorSpec):
    if op.name in REGISTRY:
        pytest.skip("hand-written desc: its own tests cover its errors")
    good = minimal_json(op)
    required = [m for m in op.members if not m.optional and m.kind != "count"]
    first = required[0]
    # a required member left out
    bad = {k: v for k, v in good.items() if k != first.name}
    err = _raises(DescParseError, op, first.name, lambda: desc_from_json(op.name, bad))
    assert f"Field '{first.name}' is required." in str(err)
    # a member of the wrong JSON type
    for m in required:
        wrong: Any = "x" if m.kind != "enum" else 3
        if m.kind in ("float", "scalar_union"):
            wrong = "one"
        _raises(DescParseError, op, m.name, lambda m=m, wrong=wrong: desc_from_json(op.name, {**good, m.name: wrong}))
    # an unknown enum value
    for m in (m for m in op.members if m.kind == "enum"):
        err = _raises(DescParseError, op, m.name, lambda m=m: desc_from_json(op.name, {**good, m.name: "BOGUS"}))
        assert f"'BOGUS' is not a recognized value for {m.enum}." in str(err)
    # a count member that does not match its arrays
    for count, arrays in op.count_members().items():
        _raises(DescParseError, op, arrays[0], lambda count=count: desc_from_json(op.name, {**good, count: N + 1}))
    # Python API: a required member left out, an array one element short
    desc = desc_from_json(op.name, good)
    kwargs = {i.attr: getattr(desc, i.attr) for i in desc.member_infos()}
    attr = next(i.attr for i in desc.member_infos() if i.dml_name == first.name)
    _raises(DescTypeError, op, first.name, lambda: type(desc)(**{k: v for k, v in kwargs.items() if k != attr}))
    for arrays in op.count_members().values():
        if len(arrays) > 1:
            short = next(i.attr for i in desc.member_infos() if i.dml_name == arrays[1])
            bad_desc = type(desc)(**{**kwargs, short: getattr(desc, short)[:1]})
            _raises(InvalidDescError, op, arrays[1], lambda d=bad_desc: d.validate())
    # a tensor desc that breaks DML_BUFFER_TENSOR_DESC's rules
    tensor = next(m for m in op.members if m.kind in ("input", "output", "input_array", "output_array"))
    zero = {"DataType": "FLOAT32", "Sizes": [1, 0, 2, 2]}
    value = [zero, dict(TENSOR)] if tensor.kind.endswith("_array") else zero
    bad_desc = desc_from_json(op.name, {**good, tensor.name: value})
    err = _raises(InvalidDescError, op, tensor.name, lambda: bad_desc.validate())
    assert "Sizes[1]: sizes may not be 0" in str(err)
    # the level below the one that introduced the operator
    if op.feature_level > FeatureLevel.V1_0:
        below = max(level for level in FeatureLevel if level < op.feature_level)
        with pytest.raises(InvalidDescError, match=f"was introduced in {op.feature_level}; not available at {below}"):
            desc.validate(below)


T3 = {"DataType": "FLOAT32", "Sizes": [3]}


def test_fused_activation_spellings_and_rules():
    base = {"ATensor": T3, "BTensor": T3, "OutputTensor": T3}
    inline = desc_from_json(
        "ELEMENT_WISE_ADD1", {**base, "FusedActivation": {"type": "ACTIVATION_LINEAR", "Alpha": 2, "Beta": 1}}
    )
    wrapped = desc_from_json(
        "ELEMENT_WISE_ADD1",
        {**base, "FusedActivation": {"Type": "DML_OPERATOR_ACTIVATION_LINEAR", "desc": {"Alpha": 2, "Beta": 1}}},
    )
    assert inline == wrapped and inline.fused_activation.fused and inline.fused_activation.alpha == 2.0
    assert inline.tensors() == wrapped.tensors() and len(inline.tensors()) == 3
    op = catalogue.operator("ELEMENT_WISE_ADD1")
    # not a fusable activation
    softmax = desc_from_json("ELEMENT_WISE_ADD1", {**base, "FusedActivation": {"Type": "ACTIVATION_SOFTMAX"}})
    err = _raises(InvalidDescError, op, "FusedActivation", softmax.validate)
    assert "fusable activations" in str(err)
    # an activation newer than the level asked for (CELU is 3_0, ADD1 2_0; 4-D tensors, as 2_0's table requires)
    t4 = {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]}
    base4 = {"ATensor": t4, "BTensor": t4, "OutputTensor": t4}
    celu = desc_from_json("ELEMENT_WISE_ADD1", {**base4, "FusedActivation": {"Type": "ACTIVATION_CELU", "Alpha": 1}})
    celu.validate("3_0")
    _raises(InvalidDescError, op, "FusedActivation", lambda: celu.validate("2_0"))
    # errors inside the nested desc
    err = _raises(
        DescParseError,
        op,
        "FusedActivation",
        lambda: desc_from_json("ELEMENT_WISE_ADD1", {**base, "FusedActivation": {"Type": "ACTIVATION_ELU"}}),
    )
    assert "Field 'Alpha' is required." in str(err)
    _raises(
        DescParseError,
        op,
        "FusedActivation",
        lambda: desc_from_json("ELEMENT_WISE_ADD1", {**base, "FusedActivation": {"Type": "ACTIVATION_NOPE"}}),
    )
    _raises(
        DescParseError,
        op,
        "FusedActivation",
        lambda: desc_from_json("ELEMENT_WISE_ADD1", {**base, "FusedActivation": 3}),
    )
    # Python API: a fused desc, not a full one
    relu = generic_desc_class("ACTIVATION_RELU")
    add1 = generic_desc_class("ELEMENT_WISE_ADD1")
    tensors = {"a_tensor": T3, "b_tensor": T3, "output_tensor": T3}
    assert add1(**tensors, fused_activation=relu(fused=True)).to_dml_dict()["FusedActivation"] == {
        "Type": "DML_OPERATOR_ACTIVATION_RELU",
        "Desc": {},
    }
    full_relu = relu(input_tensor=T3, output_tensor=T3)
    _raises(DescTypeError, op, "FusedActivation", lambda: add1(**tensors, fused_activation=full_relu))


def test_scalar_unions_scale_bias_and_size_2d():
    fill = {"OutputTensor": T3, "ValueDataType": "FLOAT32", "ValueStart": {"Float32": 2.5}, "ValueDelta": -1}
    desc = desc_from_json("FILL_VALUE_SEQUENCE", fill)
    assert (desc.value_start, desc.value_delta) == (2.5, -1.0)
    half = desc_from_json("FILL_VALUE_SEQUENCE", {**fill, "ValueDataType": "FLOAT16", "ValueStart": {"UInt16": 0x3C00}})
    assert half.value_start == 1.0
    ints = desc_from_json(
        "FILL_VALUE_SEQUENCE", {**fill, "ValueDataType": "INT8", "ValueStart": {"Int8": -3}, "ValueDelta": 2}
    )
    assert (ints.value_start, ints.value_delta) == (-3, 2) and ints.to_dml_dict()["ValueStart"] == -3
    op = catalogue.operator("FILL_VALUE_SEQUENCE")
    _raises(
        DescParseError,
        op,
        "ValueStart",
        lambda: desc_from_json("FILL_VALUE_SEQUENCE", {**fill, "ValueDataType": "INT8", "ValueStart": 300}),
    )
    _raises(
        DescParseError,
        op,
        "ValueDelta",
        lambda: desc_from_json(
            "FILL_VALUE_SEQUENCE", {**fill, "ValueDataType": "UINT8", "ValueStart": 1, "ValueDelta": 0.5}
        ),
    )
    _raises(
        DescParseError,
        op,
        "ValueStart",
        lambda: desc_from_json("FILL_VALUE_SEQUENCE", {**fill, "ValueStart": {"Int32": 1}}),
    )
    cls = generic_desc_class("FILL_VALUE_SEQUENCE")
    _raises(
        InvalidDescError,
        op,
        "ValueStart",
        lambda: cls(output_tensor=T3, value_data_type="UINT8", value_start=-1, value_delta=1),
    )
    assert cls(output_tensor=T3, value_data_type="FLOAT32", value_start=0.1, value_delta=1).value_start == float(
        np.float32(0.1)
    )

    identity = desc_from_json(
        "ELEMENT_WISE_IDENTITY", {"InputTensor": T3, "OutputTensor": T3, "ScaleBias": {"Scale": 2, "Bias": 10}}
    )
    assert identity.scale_bias == ScaleBias(2.0, 10.0)
    op = catalogue.operator("ELEMENT_WISE_IDENTITY")
    err = _raises(
        DescParseError,
        op,
        "ScaleBias",
        lambda: desc_from_json(
            "ELEMENT_WISE_IDENTITY", {"InputTensor": T3, "OutputTensor": T3, "ScaleBias": {"Scale": 2}}
        ),
    )
    assert "Field 'Bias' is required." in str(err)
    upsample = desc_from_json(
        "UPSAMPLE_2D",
        {"InputTensor": TENSOR, "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 4, 4]},
         "ScaleSize": {"Width": 2, "Height": 2}, "InterpolationMode": "LINEAR"},
    )  # fmt: skip
    assert upsample.scale_size == Size2D(2, 2)


def test_enum_value_feature_levels():
    """DML_PADDING_MODE_WRAP came with 6_4: PADDING1 (3_0) may not use it at 6_3."""
    desc = desc_from_json(
        "PADDING1",
        {"InputTensor": TENSOR, "OutputTensor": TENSOR, "PaddingMode": "DML_PADDING_MODE_WRAP",
         "PaddingValueDataType": "FLOAT32", "PaddingValue": 0, "DimensionCount": 4,
         "StartPadding": [0, 0, 0, 0], "EndPadding": [0, 0, 0, 0]},
    )  # fmt: skip
    desc.validate("6_4")
    _raises(InvalidDescError, catalogue.operator("PADDING1"), "PaddingMode", lambda: desc.validate("6_3"))


def test_tensor_arrays_are_bound_element_by_element():
    join = desc_from_json(
        "JOIN",
        {
            "InputCount": 2,
            "InputTensors": [T3, {"DataType": "FLOAT32", "Sizes": [2]}],
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [5]},
            "Axis": 0,
        },
    )
    assert list(join.tensors("input")) == ["InputTensors[0]", "InputTensors[1]"]
    assert join.tensor_slots("input") == ("InputTensors[0]", "InputTensors[1]")
    assert join.tensor_members("input") == ("InputTensors",)
    assert join.counts() == {"InputCount": 2}


@pytest.mark.parametrize("backend", ["numpy", "cpu", "cuda"])
def test_other_backends_refuse_at_once_naming_directml(backend: str):
    import dmlops

    gemm = desc_from_json(
        "GEMM",
        {"ATensor": {"DataType": "FLOAT32", "Sizes": [2, 2]}, "BTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]},
         "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]}, "TransA": "NONE", "TransB": "NONE",
         "Alpha": 1, "Beta": 0},
    )  # fmt: skip
    x = np.ones((2, 2), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused before any backend is loaded or warns
        with pytest.raises(UnsupportedError) as info:
            dmlops.execute(gemm, {"ATensor": x, "BTensor": x}, backend=backend)
    message = str(info.value)
    assert "DML_OPERATOR_GEMM" in message and f"backend '{backend}'" in message and "directml" in message


def test_members_carry_dmlops_enums():
    """DML_TENSOR_DATA_TYPE members are TensorDataType (the packer types scalar unions by it)."""
    clip = desc_from_json(
        "ELEMENT_WISE_CLIP1", {"InputTensor": T3, "OutputTensor": T3, "MinMaxDataType": "FLOAT32", "Min": -1, "Max": 1}
    )
    assert clip.min_max_data_type is TensorDataType.FLOAT32
    assert str(desc_from_json("REDUCE", {"Function": "SUM", "InputTensor": TENSOR, "OutputTensor": TENSOR,
                                         "AxisCount": 1, "Axes": [3]}).function) == "DML_REDUCE_FUNCTION_SUM"  # fmt: skip
