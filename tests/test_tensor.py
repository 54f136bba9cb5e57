"""TensorDesc: DMLCalcBufferTensorSize, DxDispatch parsing, strided views."""

from __future__ import annotations

import numpy as np
import pytest

from dmlops import DescParseError, InvalidDescError, TensorDesc, calc_buffer_tensor_size
from dmlops.enums import TensorDataType
from dmlops.strided import byte_view, view


@pytest.mark.parametrize(
    "data_type, sizes, strides, expected",
    [
        # the examples of spec §7 (DMLCalcBufferTensorSize)
        ("FLOAT16", (1, 1, 3, 5), None, 32),  # 30 bytes rounded up to a DWORD multiple
        ("FLOAT32", (2, 3), (0, 1), 12),
        ("FLOAT32", (1, 1, 3, 5), (15, 1, 5, 1), 60),
        ("UINT4", (3,), None, 4),  # 12 bits -> 2 bytes -> 4
        ("UINT8", (5,), None, 8),
        ("UNKNOWN", (5,), None, 0),
        # no 32-bit overflow of the last index (erratum E23)
        ("FLOAT32", (2,), (2**32,), (2**32 + 1) * 4),
    ],
)
def test_calc_buffer_tensor_size(data_type, sizes, strides, expected) -> None:
    assert calc_buffer_tensor_size(TensorDataType.from_any(data_type), sizes, strides) == expected


def test_total_size_defaults_to_calc() -> None:
    assert TensorDesc(data_type="FLOAT16", sizes=(1, 1, 3, 5)).total_tensor_size_in_bytes == 32
    assert TensorDesc(data_type="FLOAT16", sizes=(3,), total_tensor_size_in_bytes=64).total_tensor_size_in_bytes == 64


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(data_type="FLOAT33", sizes=(1,)), r"DataType: 'FLOAT33' is not a recognized value"),
        (dict(data_type="FLOAT32", sizes=(1.5,)), r"Sizes\[0\]: must be an unsigned integer; got 1.5"),
        (dict(data_type="FLOAT32", sizes=(-1,)), r"Sizes\[0\]: must be an unsigned integer"),
        (dict(data_type="FLOAT32", sizes=(2,), strides=(-1,)), r"Strides\[0\]: must be an unsigned integer"),
        (dict(data_type="FLOAT32", sizes=5), r"Sizes: must be a sequence"),
    ],
)
def test_construction_type_errors(kwargs, message) -> None:
    with pytest.raises(InvalidDescError, match=message):
        TensorDesc(**kwargs)


def test_from_dml_dict_short_and_long_forms() -> None:
    short = TensorDesc.from_dml_dict({"DataType": "DML_TENSOR_DATA_TYPE_INT8", "Sizes": [2, 3], "Strides": [1, 2]})
    long = TensorDesc.from_dml_dict(
        {"Type": "BUFFER", "Desc": {"DataType": "INT8", "Sizes": [2, 3], "Strides": [1, 2]}}
    )
    assert short == long
    assert short.to_dml_dict() == {"DataType": "INT8", "Sizes": [2, 3], "Strides": [1, 2]}
    assert TensorDesc.from_dml_dict(short.to_dml_dict()) == short


@pytest.mark.parametrize(
    "obj, message",
    [
        ({"Sizes": [1]}, r"Field 'DataType' is required\."),
        ({"DataType": "FLOAT32"}, r"Field 'Sizes' is required\."),
        (
            {"DataType": "FLOAT32", "Sizes": [1, -2]},
            r"Error parsing field 'Sizes': Expected an array of unsigned integers\.",
        ),
        ({"DataType": 1, "Sizes": [1]}, r"Error parsing field 'DataType': Expected a string\."),
        ({"DataType": "FLOAT32", "Sizes": [1, 2], "DimensionCount": 3}, r"DimensionCount is 3 but 'Sizes' has 2"),
        ({"DataType": "FLOAT32", "Sizes": [1, 2], "Strides": [1]}, r"'Strides' has 1 elements but 'Sizes' has 2"),
        ({"Type": "INVALID", "Desc": {}}, r"only DML_TENSOR_TYPE_BUFFER"),
        ([1, 2], r"Expected a JSON object"),
    ],
)
def test_from_dml_dict_errors(obj, message) -> None:
    with pytest.raises(DescParseError, match=message):
        TensorDesc.from_dml_dict(obj)


def test_unknown_tensor_fields_warn() -> None:
    from dmlops import UnknownFieldWarning

    with pytest.warns(UnknownFieldWarning, match="'Stirdes'"):
        TensorDesc.from_dml_dict({"DataType": "FLOAT32", "Sizes": [2], "Stirdes": [1]})


def test_view_addresses_elements_through_strides() -> None:
    buffer = np.arange(20, dtype=np.int32)
    t = TensorDesc(data_type="INT32", sizes=(2, 3), strides=(10, 3))
    np.testing.assert_array_equal(view(buffer, t, element_offset=1), [[1, 4, 7], [11, 14, 17]])
    with pytest.raises(Exception, match="too small"):
        view(buffer, t, element_offset=5)


def test_byte_view_writes_only_addressed_bytes() -> None:
    raw = bytearray(b"\xaa" * 24)
    t = TensorDesc(data_type="UINT16", sizes=(3,), strides=(2,))
    v = byte_view(raw, t, byte_offset=4, writeable=True)
    v[...] = [1, 2, 3]
    assert raw[:4] == b"\xaa" * 4
    assert raw[4:14] == b"\x01\x00\xaa\xaa\x02\x00\xaa\xaa\x03\x00"
    assert raw[14:] == b"\xaa" * 10


@pytest.mark.parametrize(
    "kwargs, member",
    [
        (dict(sizes=(2**32,)), r"Sizes\[0\]"),
        (dict(sizes=(4,), strides=(2**32,)), r"Strides\[0\]"),
        (dict(sizes=(4,), guaranteed_base_offset_alignment=2**32), "GuaranteedBaseOffsetAlignment"),
    ],
)
def test_uint_members_fit_32_bits(kwargs, member) -> None:
    # UINT members of DML_BUFFER_TENSOR_DESC: a value that does not fit could not be packed for
    # DirectML (the directml backend once raised a raw struct.error for it).
    with pytest.raises(InvalidDescError, match=member + r": must be an unsigned integer below 2\^32"):
        TensorDesc(data_type="FLOAT32", **kwargs)
