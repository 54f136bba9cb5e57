"""The operator catalogue: its invariants, the hand-written descs against it, packing every row.

DirectML.h (DML_TARGET_VERSION 0x6400) declares 177 DML_OPERATOR_TYPE values after
DML_OPERATOR_INVALID: 174 through DML_FEATURE_LEVEL_6_3 (DxDispatch's schema and JSON
parser stop there) and RESAMPLE3, FOLD, UNFOLD at 6_4.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dmlops import catalogue, enums
from dmlops.catalogue import MEMBER_KINDS, OPERATORS, MemberSpec, OperatorSpec
from dmlops.descs import REGISTRY, desc_class, desc_from_json
from dmlops.directml import abi
from dmlops.enums import FeatureLevel, TensorDataType
from dmlops.tensor import TensorDesc

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
F32 = TensorDataType.FLOAT32


def test_every_operator_type_through_6_4():
    assert len(OPERATORS) == 177
    assert [op.value for op in OPERATORS] == list(range(1, 178))
    assert sum(op.feature_level <= FeatureLevel.V6_3 for op in OPERATORS) == 174
    assert sum(op.in_dxdispatch for op in OPERATORS) == 174
    assert {op.name for op in OPERATORS if not op.in_dxdispatch} == {"RESAMPLE3", "FOLD", "UNFOLD"}


def test_names_values_and_structs_are_unique():
    names = [n for op in OPERATORS for n in (op.name, *op.aliases)]
    assert len(names) == len(set(names))
    assert len({op.struct for op in OPERATORS}) == len(OPERATORS)
    assert catalogue.operator("SCATTER") is catalogue.operator("DML_OPERATOR_SCATTER_ELEMENTS")
    assert catalogue.operator(111) is catalogue.operator("SLICE1")
    with pytest.raises(KeyError, match="not a recognized value for DML_OPERATOR_TYPE"):
        catalogue.operator("slice1")  # DxDispatch's spellings are exact


def test_feature_levels_are_valid_and_follow_the_enum_order():
    levels = [op.feature_level for op in OPERATORS]
    assert all(isinstance(level, FeatureLevel) for level in levels)
    assert levels == sorted(levels)  # DirectML.h appends each level's operators in order
    assert Counter(str(level) for level in levels) == Counter(
        {
            "DML_FEATURE_LEVEL_1_0": 78,
            "DML_FEATURE_LEVEL_2_0": 18,
            "DML_FEATURE_LEVEL_2_1": 24,
            "DML_FEATURE_LEVEL_3_0": 20,
            "DML_FEATURE_LEVEL_3_1": 6,
            "DML_FEATURE_LEVEL_4_0": 3,
            "DML_FEATURE_LEVEL_4_1": 3,
            "DML_FEATURE_LEVEL_5_0": 4,
            "DML_FEATURE_LEVEL_5_1": 7,
            "DML_FEATURE_LEVEL_6_1": 1,
            "DML_FEATURE_LEVEL_6_2": 6,
            "DML_FEATURE_LEVEL_6_3": 4,
            "DML_FEATURE_LEVEL_6_4": 3,
        }
    )


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_members_are_consistent(op: OperatorSpec):
    names = op.member_names()
    assert len(names) == len(set(names))
    seen: dict[str, MemberSpec] = {}
    for m in op.members:
        assert m.kind in MEMBER_KINDS
        assert m.kind in abi.KINDS, f"{op.struct}.{m.name}: abi cannot pack {m.kind}"
        if m.optional:
            assert m.kind in ("input", "output", "scale_bias", "operator_desc")
        if m.kind in catalogue.ARRAY_KINDS:
            assert m.count is not None and seen[m.count].kind == "count", f"{op.struct}.{m.name}"
        else:
            assert m.count is None
        assert (m.kind == "enum") == (m.enum is not None)
        if m.enum is not None:
            catalogue.enum(m.enum)
        assert (m.kind == "scalar_union") == (m.data_type is not None)
        if m.data_type is not None:
            assert seen[m.data_type].enum == "DML_TENSOR_DATA_TYPE"
        seen[m.name] = m
    counted = op.count_members()
    assert {m.name for m in op.members if m.kind == "count"} == set(counted)
    assert any(m.kind in ("output", "output_array") for m in op.members), "every operator writes something"


def test_member_kind_totals():
    kinds = Counter(m.kind for op in OPERATORS for m in op.members)
    assert set(kinds) == set(MEMBER_KINDS)
    assert kinds["operator_desc"] == 8  # the FusedActivation members
    assert kinds["operator_desc_array"] == 3  # RNN, LSTM, GRU
    assert kinds["scalar_union"] == 9
    activations = {op.name for op in OPERATORS if op.name.startswith("ACTIVATION_")}
    assert {catalogue.operator(a).name for a in catalogue.FUSABLE_ACTIVATIONS} <= activations


def test_enums_agree_with_dmlops_enums():
    """The catalogue's enum tables hold the values enums.py already uses."""
    for cls in (
        enums.TensorDataType,
        enums.TensorType,
        enums.TensorFlags,
        enums.InterpolationMode,
        enums.AxisDirection,
        enums.ReduceFunction,
        enums.FeatureLevel,
    ):
        spec = next(e for e in catalogue.ENUMS if all(str(m).startswith(e.prefix) for m in cls) and _same(e, cls))
        assert {v.name: v.value for v in spec.values} == {str(m).removeprefix(spec.prefix): int(m) for m in cls}
    for member in enums.OperatorType:
        assert catalogue.operator(member.name).value == int(member)
    assert catalogue.enum("DML_PADDING_MODE").value_of("DML_PADDING_MODE_WRAP") == 4
    wrap = catalogue.enum("DML_PADDING_MODE").values[-1]
    assert wrap.feature_level == FeatureLevel.V6_4


def _same(spec: catalogue.EnumSpec, cls: type[enums.DmlEnum]) -> bool:
    return {v.name for v in spec.values} == {str(m).removeprefix(spec.prefix) for m in cls}


# -- the hand-written descs --------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_hand_written_desc_matches_catalogue(name: str):
    cls = desc_class(name)
    spec = catalogue.operator(name)
    assert cls.dml_name == spec.struct
    assert int(cls.operator_type) == spec.value
    assert cls.introduced == spec.feature_level
    assert cls.dml_member_names() == spec.member_names()
    assert dict(cls.count_members) == spec.count_members()
    for info in cls.member_infos():
        m = spec.member(info.dml_name)
        assert info.kind == m.kind, info.dml_name
        if info.kind in ("input", "output"):
            assert info.optional == m.optional, info.dml_name
        if info.enum is not None:
            assert all(str(v).startswith(catalogue.enum(m.enum or "").prefix) for v in info.enum)


def _valid_vector(name: str) -> dict[str, Any]:
    folder = VECTORS / name.lower()
    for path in sorted(folder.glob("*.json")):
        case = json.loads(path.read_text())
        if "expected" in case:
            return case
    raise AssertionError(f"no valid vector for {name}")


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_catalogue_packs_hand_written_descs_byte_for_byte(name: str):
    """A RawOperator laid out from the catalogue alone packs exactly as the desc class does."""
    case = _valid_vector(name)
    desc = desc_from_json(case["operator"], case["desc"])
    spec = catalogue.operator(name)
    attrs = {i.dml_name: i.attr for i in desc.member_infos()}
    counts = desc.counts()
    members = tuple(
        abi.Member(m.name, m.kind, counts[m.name] if m.kind == "count" else getattr(desc, attrs[m.name]))
        for m in spec.members
    )
    expected = abi.pack(desc)
    got = abi.pack(abi.RawOperator(spec.value, members))
    assert (got.blob, got.relocations) == (expected.blob, expected.relocations)


# -- every row packs ---------------------------------------------------------------------

TENSOR = TensorDesc(data_type=F32, sizes=(1, 1, 2, 2))
ARRAY_LENGTH = 2


def relu() -> abi.RawOperator:
    """A fused ACTIVATION_RELU: its tensors NULL, as the fused-activations page requires."""
    spec = catalogue.operator("ACTIVATION_RELU")
    return abi.RawOperator(spec.value, tuple(abi.Member(m.name, m.kind, None) for m in spec.members))


def page_value(m: MemberSpec) -> Any:
    """A plausible value of a member from its kind alone."""
    if m.kind in ("input", "output"):
        return None if m.optional else TENSOR
    if m.kind in ("input_array", "output_array"):
        return (TENSOR,) * ARRAY_LENGTH
    if m.kind == "operator_desc":
        return relu()
    if m.kind == "operator_desc_array":
        return (relu(),) * ARRAY_LENGTH
    if m.kind in ("uint_array", "int_array"):
        return (1,) * ARRAY_LENGTH
    if m.kind == "float_array":
        return (1.0,) * ARRAY_LENGTH
    if m.kind == "enum":
        return F32 if m.enum == "DML_TENSOR_DATA_TYPE" else catalogue.enum(m.enum or "").values[0].value
    return {
        "count": ARRAY_LENGTH,
        "uint": 1,
        "int": 0,
        "float": 1.0,
        "bool": False,
        "scale_bias": (1.0, 0.0),
        "size_2d": (2, 2),
        "scalar_union": 0.0,
    }[m.kind]


def raw_operator(spec: OperatorSpec, **overrides: Any) -> abi.RawOperator:
    """A RawOperator of ``spec`` built from the catalogue, with ``overrides`` by member name."""
    unknown = set(overrides) - set(spec.member_names())
    assert not unknown, unknown
    return abi.RawOperator(
        spec.value,
        tuple(abi.Member(m.name, m.kind, overrides.get(m.name, page_value(m))) for m in spec.members),
    )


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.name)
def test_every_operator_packs(op: OperatorSpec):
    packed = abi.pack(raw_operator(op))
    assert packed.operator_type == op.value
    offsets, size, _ = abi.struct_layout([abi.Member(m.name, m.kind, None) for m in op.members])
    assert len(packed.blob) >= size
    # Every pointer member of the operator's own struct is set, but the optional tensors left NULL.
    pointers = {
        o
        for m, o in zip(op.members, offsets)
        if m.kind not in ("scalar_union", "size_2d") and abi.KINDS[m.kind].size == 8
    }
    optional_null = {o for m, o in zip(op.members, offsets) if m.optional and m.kind in ("input", "output")}
    assert {r for r in packed.relocations if r < size} == pointers - optional_null


# -- the real DirectML -------------------------------------------------------------------


@pytest.fixture(scope="module")
def directml() -> None:
    """Skips when the directml backend is unavailable; fails when CI requires it."""
    import os

    from dmlops.backends import load_backend
    from dmlops.errors import BackendUnavailableError

    try:
        load_backend("directml")
    except BackendUnavailableError as exc:
        if "directml" in os.environ.get("DMLOPS_REQUIRE_BACKENDS", "").split(","):
            pytest.fail(f"required backend unavailable: {exc}")
        pytest.skip(str(exc))


def T(*sizes: int) -> TensorDesc:
    return TensorDesc(data_type=F32, sizes=sizes)


CREATE_CASES: dict[str, dict[str, Any]] = {
    # operator_desc: a fused ACTIVATION_RELU with NULL tensors
    "ELEMENT_WISE_ADD1": {},
    # scalar_union typed by MinMaxDataType
    "ELEMENT_WISE_CLIP1": {"ScaleBias": None, "Min": -1.0, "Max": 1.0},
    # input_array with its count member
    "JOIN": {"InputTensors": (T(1, 1, 2, 2), T(1, 1, 2, 2)), "OutputTensor": T(1, 1, 4, 2), "Axis": 2},
    # two scalar_unions typed by one ValueDataType
    "FILL_VALUE_SEQUENCE": {"ValueStart": 0.0, "ValueDelta": 1.0},
    # size_2d by value
    "UPSAMPLE_2D": {"OutputTensor": T(1, 1, 4, 4), "ScaleSize": (2, 2)},
    # float_array sized by ChannelCount
    "VALUE_SCALE_2D": {"ChannelCount": 1, "Bias": (0.0,)},
    # DML_FEATURE_LEVEL_6_4, absent from DxDispatch: DML_OPERATOR_TYPE 175 exists in DirectML 1.15.4
    "RESAMPLE3": {
        "OutputTensor": T(1, 1, 4, 4),
        "DimensionCount": 4,
        "Scales": (1.0, 1.0, 2.0, 2.0),
        "InputPixelOffsets": (0.5,) * 4,
        "OutputPixelOffsets": (-0.5,) * 4,
    },
}


@pytest.mark.directml
@pytest.mark.parametrize("name", sorted(CREATE_CASES))
def test_directml_creates_catalogue_built_descs(directml: None, name: str):
    """DirectML's CreateOperator accepts descs laid out from the catalogue alone."""
    from dmlops.directml import run_packed

    spec = catalogue.operator(name)
    run_packed(abi.pack(raw_operator(spec, **CREATE_CASES[name])), int(FeatureLevel.V6_4), [], [], create_only=True)


@pytest.mark.directml
def test_directml_rejects_a_broken_catalogue_built_desc(directml: None):
    """The control: the same JOIN with an output one row too tall is E_INVALIDARG."""
    from dmlops.directml import run_packed
    from dmlops.errors import DirectMLRejectedDescError

    case = {**CREATE_CASES["JOIN"], "OutputTensor": T(1, 1, 5, 2)}
    with pytest.raises(DirectMLRejectedDescError):
        run_packed(
            abi.pack(raw_operator(catalogue.operator("JOIN"), **case)), int(FeatureLevel.V6_4), [], [], create_only=True
        )
