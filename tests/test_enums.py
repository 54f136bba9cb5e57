"""Enum values are DirectML.h's, and every spelling is accepted."""

from __future__ import annotations

import pytest

from dmlops.enums import (
    AxisDirection,
    FeatureLevel,
    InterpolationMode,
    OperatorType,
    ReduceFunction,
    TensorDataType,
    TensorFlags,
)

# Values copied from DirectML.h (DirectX-Headers, DML_TARGET_VERSION 0x6400), spec §1.1.
HEADER_VALUES = {
    TensorDataType: dict(UNKNOWN=0, FLOAT32=1, FLOAT16=2, UINT32=3, UINT16=4, UINT8=5, INT32=6, INT16=7, INT8=8,
                         FLOAT64=9, UINT64=10, INT64=11, UINT4=12, INT4=13),
    InterpolationMode: dict(NEAREST_NEIGHBOR=0, LINEAR=1),
    AxisDirection: dict(INCREASING=0, DECREASING=1),
    ReduceFunction: dict(ARGMAX=0, ARGMIN=1, AVERAGE=2, L1=3, L2=4, LOG_SUM=5, LOG_SUM_EXP=6, MAX=7, MIN=8,
                         MULTIPLY=9, SUM=10, SUM_SQUARE=11),
    TensorFlags: dict(NONE=0, OWNED_BY_DML=1),
    OperatorType: dict(GATHER=67, SLICE1=111, MAX_POOLING2=110, MAX_POOLING_GRAD=131, ROI_ALIGN=139,
                       ROI_ALIGN1=149, RESAMPLE2=161, RESAMPLE_GRAD1=162),
}  # fmt: skip


@pytest.mark.parametrize("enum_cls", HEADER_VALUES, ids=lambda c: c.__name__)
def test_values_match_directml_header(enum_cls) -> None:
    for name, value in HEADER_VALUES[enum_cls].items():
        assert enum_cls[name] == value


def test_feature_levels_are_ordered_header_values() -> None:
    assert [f.value for f in FeatureLevel] == [
        0x1000, 0x2000, 0x2100, 0x3000, 0x3100, 0x4000, 0x4100, 0x5000, 0x5100, 0x5200,
        0x6000, 0x6100, 0x6200, 0x6300, 0x6400,
    ]  # fmt: skip
    assert FeatureLevel.latest() is FeatureLevel.V6_4
    assert FeatureLevel.V2_1 < FeatureLevel.V3_0


@pytest.mark.parametrize("spelling", ["DML_INTERPOLATION_MODE_LINEAR", "LINEAR", "linear", 1, InterpolationMode.LINEAR])
def test_from_any_spellings(spelling) -> None:
    assert InterpolationMode.from_any(spelling) is InterpolationMode.LINEAR


@pytest.mark.parametrize("spelling", ["DML_FEATURE_LEVEL_3_0", "3_0", "3.0", "V3_0", 0x3000])
def test_feature_level_spellings(spelling) -> None:
    assert FeatureLevel.from_any(spelling) is FeatureLevel.V3_0


@pytest.mark.parametrize("bad", ["CUBIC", 7, True, None, 1.0, "DML_AXIS_DIRECTION_INCREASING"])
def test_from_any_rejects_with_dxdispatch_wording(bad) -> None:
    with pytest.raises(ValueError, match=r"is not a recognized value for DML_INTERPOLATION_MODE\."):
        InterpolationMode.from_any(bad)


def test_str_is_full_dml_name() -> None:
    assert str(TensorDataType.FLOAT16) == "DML_TENSOR_DATA_TYPE_FLOAT16"
    assert str(FeatureLevel.V6_4) == "DML_FEATURE_LEVEL_6_4"
    assert str(OperatorType.SLICE1) == "DML_OPERATOR_SLICE1"


def test_data_type_properties() -> None:
    assert TensorDataType.FLOAT16.size_in_bits == 16 and TensorDataType.INT4.size_in_bits == 4
    assert TensorDataType.INT64.is_signed_integer and not TensorDataType.UINT64.is_signed_integer
    assert TensorDataType.from_numpy("float16") is TensorDataType.FLOAT16
    from dmlops.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="not supported"):
        _ = TensorDataType.UINT4.numpy_dtype
