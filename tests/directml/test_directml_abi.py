"""The x64 ABI packer against hand-computed layouts (no Wine needed).

Offsets are worked out by hand from DirectML.h's struct definitions under the x64 C
rules: pointers 8 bytes aligned to 8, UINT/INT/FLOAT/BOOL/enums 4 bytes, a struct
aligned to its widest member and padded to a multiple of that.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from dmlops import desc_from_json
from dmlops.directml import abi, protocol
from dmlops.enums import TensorDataType
from dmlops.errors import UnsupportedError
from dmlops.tensor import TensorDesc

F32 = TensorDataType.FLOAT32


def u32(blob: bytes, at: int) -> int:
    return struct.unpack_from("<I", blob, at)[0]


def ptr(packed: abi.PackedDesc, at: int) -> int | None:
    """The blob offset a pointer field holds (None for NULL), checking it is relocated."""
    value = struct.unpack_from("<Q", packed.blob, at)[0]
    if at in packed.relocations:
        return value
    assert value == 0, f"unrelocated non-NULL pointer at {at}"
    return None


def read_tensor(packed: abi.PackedDesc, at: int) -> dict:
    """Decode the DML_TENSOR_DESC a pointer at ``at`` points to."""
    td = ptr(packed, at)
    assert td is not None and td % 8 == 0
    assert u32(packed.blob, td) == 1  # DML_TENSOR_TYPE_BUFFER
    b = ptr(packed, td + 8)
    assert b is not None and b % 8 == 0
    blob = packed.blob
    data_type, flags, n = struct.unpack_from("<III", blob, b)
    sizes_at, strides_at = ptr(packed, b + 16), ptr(packed, b + 24)
    total, align = struct.unpack_from("<QI", blob, b + 32)
    assert sizes_at is not None
    return {
        "DataType": data_type,
        "Flags": flags,
        "Sizes": list(struct.unpack_from(f"<{n}I", blob, sizes_at)),
        "Strides": None if strides_at is None else list(struct.unpack_from(f"<{n}I", blob, strides_at)),
        "TotalTensorSizeInBytes": total,
        "GuaranteedBaseOffsetAlignment": align,
    }


def array(packed: abi.PackedDesc, at: int, fmt: str, n: int) -> list:
    target = ptr(packed, at)
    assert target is not None
    return list(struct.unpack_from(f"<{n}{fmt}", packed.blob, target))


def test_struct_layout_rules() -> None:
    m = abi.Member
    offsets, size, align = abi.struct_layout(
        [m("A", "uint", 1), m("B", "input", None), m("C", "float", 0.0), m("D", "size_2d", (1, 2))]
    )
    assert offsets == [0, 8, 16, 20] and size == 32 and align == 8


def test_slice1_layout() -> None:
    # DML_SLICE1_OPERATOR_DESC: InputTensor @0, OutputTensor @8, DimensionCount @16,
    # (pad), InputWindowOffsets @24, InputWindowSizes @32, InputWindowStrides @40; 48 bytes.
    desc = desc_from_json(
        "DML_OPERATOR_SLICE1",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 4, 4], "Strides": [16, 16, 1, 4]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
            "InputWindowOffsets": [0, 0, 0, 1],
            "InputWindowSizes": [1, 1, 4, 3],
            "InputWindowStrides": [1, 1, -2, 2],
        },
    )
    packed = abi.pack(desc)
    assert packed.operator_type == 111
    assert read_tensor(packed, 0) == {
        "DataType": 1,
        "Flags": 0,
        "Sizes": [1, 1, 4, 4],
        "Strides": [16, 16, 1, 4],
        "TotalTensorSizeInBytes": 64,
        "GuaranteedBaseOffsetAlignment": 0,
    }
    assert read_tensor(packed, 8)["Strides"] is None
    assert read_tensor(packed, 8)["TotalTensorSizeInBytes"] == 16
    assert u32(packed.blob, 16) == 4
    assert u32(packed.blob, 20) == 0  # padding
    assert array(packed, 24, "I", 4) == [0, 0, 0, 1]
    assert array(packed, 32, "I", 4) == [1, 1, 4, 3]
    assert array(packed, 40, "i", 4) == [1, 1, -2, 2]
    # Every relocation is an 8-aligned pointer slot inside the blob.
    assert all(r % 8 == 0 and r + 8 <= len(packed.blob) for r in packed.relocations)
    assert len(packed.blob) % 8 == 0


def test_resample2_layout() -> None:
    # InputTensor @0, OutputTensor @8, InterpolationMode @16, RoundingDirection @20,
    # DimensionCount @24, (pad), Scales @32, InputPixelOffsets @40, OutputPixelOffsets @48.
    desc = desc_from_json(
        "DML_OPERATOR_RESAMPLE2",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 3]},
            "InterpolationMode": "DML_INTERPOLATION_MODE_LINEAR",
            "RoundingDirection": "DML_AXIS_DIRECTION_DECREASING",
            "Scales": [0.5, 1.5],
            "InputPixelOffsets": [0.5, 0.25],
            "OutputPixelOffsets": [-0.5, -0.25],
        },
    )
    packed = abi.pack(desc)
    assert packed.operator_type == 161
    assert struct.unpack_from("<III", packed.blob, 16) == (1, 1, 2)
    assert array(packed, 32, "f", 2) == [0.5, 1.5]
    assert array(packed, 40, "f", 2) == [0.5, 0.25]
    assert array(packed, 48, "f", 2) == [-0.5, -0.25]
    assert read_tensor(packed, 8)["Sizes"] == [1, 3]


def test_roi_align_layout() -> None:
    # Four tensor pointers (0..32), then ReductionFunction @32, InterpolationMode @36,
    # SpatialScaleX @40, SpatialScaleY @44, OutOfBoundsInputValue @48,
    # MinimumSamplesPerOutput @52, MaximumSamplesPerOutput @56; 60 -> padded to 64.
    desc = desc_from_json(
        "DML_OPERATOR_ROI_ALIGN",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 4, 4]},
            "ROITensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
            "BatchIndicesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 1, 1]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
            "ReductionFunction": "DML_REDUCE_FUNCTION_MAX",
            "InterpolationMode": "DML_INTERPOLATION_MODE_LINEAR",
            "SpatialScaleX": 0.5,
            "SpatialScaleY": 0.25,
            "OutOfBoundsInputValue": -3.0,
            "MinimumSamplesPerOutput": 2,
            "MaximumSamplesPerOutput": 7,
        },
    )
    packed = abi.pack(desc)
    _, size, _ = abi.struct_layout(abi.desc_members(desc))
    assert size == 64
    assert struct.unpack_from("<IIfffII", packed.blob, 32) == (7, 1, 0.5, 0.25, -3.0, 2, 7)
    assert read_tensor(packed, 16)["DataType"] == int(TensorDataType.UINT32)


def test_max_pooling2_optional_tensor_is_null() -> None:
    # InputTensor @0, OutputTensor @8, OutputIndicesTensor @16 (NULL), DimensionCount @24,
    # Strides @32, WindowSize @40, StartPadding @48, EndPadding @56, Dilations @64; 72 bytes.
    desc = desc_from_json(
        "DML_OPERATOR_MAX_POOLING2",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
            "Strides": [1, 1],
            "WindowSize": [2, 2],
            "StartPadding": [0, 0],
            "EndPadding": [0, 0],
            "Dilations": [1, 1],
        },
    )
    packed = abi.pack(desc)
    assert ptr(packed, 16) is None
    assert u32(packed.blob, 24) == 2
    assert array(packed, 40, "I", 2) == [2, 2]
    assert array(packed, 64, "I", 2) == [1, 1]


def test_gather_layout() -> None:
    # InputTensor @0, IndicesTensor @8, OutputTensor @16, Axis @24, IndexDimensions @28; 32 bytes.
    desc = desc_from_json(
        "DML_OPERATOR_GATHER",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
            "IndicesTensor": {"DataType": "INT32", "Sizes": [1, 1, 1, 5]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 5]},
            "Axis": 3,
            "IndexDimensions": 1,
        },
    )
    packed = abi.pack(desc)
    assert struct.unpack_from("<II", packed.blob, 24) == (3, 1)
    assert sorted(packed.relocations)[:3] == [0, 8, 16]


def t(*sizes: int) -> TensorDesc:
    return TensorDesc(data_type=F32, sizes=sizes)


m = abi.Member


def test_scale_bias_pointer() -> None:
    # DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC: InputTensor, OutputTensor, ScaleBias*; 24 bytes.
    op = abi.RawOperator(
        1,
        (m("InputTensor", "input", t(4)), m("OutputTensor", "output", t(4)), m("ScaleBias", "scale_bias", (2.0, -1.5))),
    )
    packed = abi.pack(op)
    assert array(packed, 16, "f", 2) == [2.0, -1.5]
    none = abi.pack(abi.RawOperator(1, (*op.members[:2], m("ScaleBias", "scale_bias", None))))
    assert ptr(none, 16) is None


def test_size_2d_by_value() -> None:
    # DML_UPSAMPLE_2D_OPERATOR_DESC: InputTensor @0, OutputTensor @8, ScaleSize {Width @16,
    # Height @20}, InterpolationMode @24; 28 -> 32 bytes.
    members = (
        m("InputTensor", "input", t(1, 1, 2, 2)),
        m("OutputTensor", "output", t(1, 1, 4, 6)),
        m("ScaleSize", "size_2d", (3, 2)),
        m("InterpolationMode", "enum", 1),
    )
    assert abi.struct_layout(members)[1] == 32
    packed = abi.pack(abi.RawOperator(66, members))
    assert struct.unpack_from("<III", packed.blob, 16) == (3, 2, 1)


@pytest.mark.parametrize(
    ("data_type", "value", "fmt"),
    [
        (TensorDataType.FLOAT32, 1.5, "<f"),
        (TensorDataType.FLOAT64, -0.1, "<d"),
        (TensorDataType.INT64, -2, "<q"),
        (TensorDataType.UINT8, 200, "<B"),
        (TensorDataType.INT32, -7, "<i"),
        (TensorDataType.FLOAT16, 0.5, "<e"),
    ],
)
def test_scalar_union_follows_its_data_type_member(data_type, value, fmt) -> None:
    # DML_FILL_VALUE_CONSTANT_OPERATOR_DESC: OutputTensor @0, ValueDataType @8, (pad),
    # Value (DML_SCALAR_UNION, 8 bytes, 8-aligned) @16; 24 bytes.
    members = (
        m("OutputTensor", "output", t(4)),
        m("ValueDataType", "enum", data_type),
        m("Value", "scalar_union", value),
    )
    assert abi.struct_layout(members)[1] == 24
    packed = abi.pack(abi.RawOperator(0, members))
    assert u32(packed.blob, 8) == int(data_type)
    union = packed.blob[16:24]
    size = struct.calcsize(fmt)
    assert struct.unpack_from(fmt, union)[0] == pytest.approx(value)
    assert union[size:] == bytes(8 - size)  # the rest of the union stays zero


def test_clip1_layout_two_unions() -> None:
    # DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC: InputTensor, OutputTensor, ScaleBias* (0..24),
    # MinMaxDataType @24, Min @32, Max @40; 48 bytes.
    members = (
        m("InputTensor", "input", t(4)),
        m("OutputTensor", "output", t(4)),
        m("ScaleBias", "scale_bias", None),
        m("MinMaxDataType", "enum", TensorDataType.FLOAT32),
        m("Min", "scalar_union", -1.0),
        m("Max", "scalar_union", 2.5),
    )
    offsets, size, _ = abi.struct_layout(members)
    assert offsets == [0, 8, 16, 24, 32, 40] and size == 48
    packed = abi.pack(abi.RawOperator(0, members))
    assert struct.unpack_from("<f", packed.blob, 32)[0] == -1.0
    assert struct.unpack_from("<f", packed.blob, 40)[0] == 2.5


def test_scalar_union_needs_a_data_type() -> None:
    with pytest.raises(UnsupportedError, match="DML_TENSOR_DATA_TYPE"):
        abi.pack(abi.RawOperator(0, (m("Value", "scalar_union", 1.0),)))


def test_nested_fused_activation() -> None:
    # DML_ELEMENT_WISE_ADD1_OPERATOR_DESC: ATensor, BTensor, OutputTensor, FusedActivation
    # (const DML_OPERATOR_DESC*) @24; 32 bytes. The DML_OPERATOR_DESC {Type @0, Desc @8}
    # points at DML_ACTIVATION_LINEAR_OPERATOR_DESC {InputTensor NULL, OutputTensor NULL,
    # Alpha @16, Beta @20}; 24 bytes.
    linear = abi.RawOperator(
        48,
        (
            m("InputTensor", "input", None),
            m("OutputTensor", "output", None),
            m("Alpha", "float", 2.0),
            m("Beta", "float", 0.5),
        ),
    )
    add1 = abi.RawOperator(
        (105),
        (
            m("ATensor", "input", t(4)),
            m("BTensor", "input", t(4)),
            m("OutputTensor", "output", t(4)),
            m("FusedActivation", "operator_desc", linear),
        ),
    )
    packed = abi.pack(add1)
    op_desc = ptr(packed, 24)
    assert op_desc is not None and op_desc % 8 == 0
    assert u32(packed.blob, op_desc) == 48
    inner = ptr(packed, op_desc + 8)
    assert inner is not None
    assert ptr(packed, inner) is None and ptr(packed, inner + 8) is None
    assert struct.unpack_from("<ff", packed.blob, inner + 16) == (2.0, 0.5)
    no_activation = abi.pack(abi.RawOperator(105, (*add1.members[:3], m("FusedActivation", "operator_desc", None))))
    assert ptr(no_activation, 24) is None


def test_array_of_tensor_descs() -> None:
    # DML_JOIN_OPERATOR_DESC: InputCount @0, (pad), InputTensors @8 (an array of
    # DML_TENSOR_DESC, 16 bytes each), OutputTensor @16, Axis @24; 32 bytes.
    members = (
        m("InputCount", "count", 2),
        m("InputTensors", "input_array", (t(1, 2), t(1, 3))),
        m("OutputTensor", "output", t(1, 5)),
        m("Axis", "uint", 1),
    )
    assert abi.struct_layout(members)[1] == 32
    packed = abi.pack(abi.RawOperator(0, members))
    first = ptr(packed, 8)
    assert first is not None
    # Each element of the array is a DML_TENSOR_DESC; decode them through a fake pointer.
    sizes = []
    for i in range(2):
        td = first + 16 * i
        assert u32(packed.blob, td) == 1
        b = ptr(packed, td + 8)
        assert b is not None
        n = u32(packed.blob, b + 8)
        sizes.append(list(struct.unpack_from(f"<{n}I", packed.blob, ptr(packed, b + 16))))
    assert sizes == [[1, 2], [1, 3]]
    assert u32(packed.blob, 24) == 1


def test_array_of_operator_descs() -> None:
    # e.g. DML_LSTM_OPERATOR_DESC's ActivationDescCount + ActivationDescs: a contiguous
    # array of DML_OPERATOR_DESC (16 bytes each).
    sigmoid = abi.RawOperator(46, (m("InputTensor", "input", None), m("OutputTensor", "output", None)))
    tanh = abi.RawOperator(47, (m("InputTensor", "input", None), m("OutputTensor", "output", None)))
    members = (m("ActivationDescCount", "count", 2), m("ActivationDescs", "operator_desc_array", (sigmoid, tanh)))
    packed = abi.pack(abi.RawOperator(0, members))
    first = ptr(packed, 8)
    assert first is not None
    assert [u32(packed.blob, first), u32(packed.blob, first + 16)] == [46, 47]
    assert ptr(packed, first + 8) is not None and ptr(packed, first + 24) is not None


def test_bool_int_and_empty_arrays() -> None:
    members = (m("Flag", "bool", True), m("Offset", "int", -3), m("Values", "float_array", ()))
    packed = abi.pack(abi.RawOperator(0, members))
    assert struct.unpack_from("<ii", packed.blob, 0) == (1, -3)
    assert ptr(packed, 8) is None


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(UnsupportedError, match="kind 'matrix'"):
        abi.pack(abi.RawOperator(0, (m("X", "matrix", 1),)))


def test_protocol_round_trip() -> None:
    packed = abi.pack(
        abi.RawOperator(
            1, (m("InputTensor", "input", t(2)), m("OutputTensor", "output", t(2)), m("ScaleBias", "scale_bias", None))
        )
    )
    payload = protocol.operator_payload(packed, 0x6400, [(1, b"\x01" * 8), (0, b"")], [(1, 8)])
    op_type, level, flags, blob_size, n_reloc = struct.unpack_from("<IIIQI", payload)
    assert (op_type, level, flags, blob_size, n_reloc) == (1, 0x6400, 0, len(packed.blob), len(packed.relocations))
    reply = struct.pack("<IQ", 2, 8) + np.arange(2, dtype=np.float32).tobytes() + struct.pack("<Q", 0)
    assert protocol.parse_outputs(reply) == [np.arange(2, dtype=np.float32).tobytes(), b""]
    failure = struct.pack("<I", 5) + b"Abc()" + struct.pack("<I", 0x80070057)
    assert protocol.parse_failure(failure) == ("Abc()", 0x80070057)
    assert protocol.frame(3, b"xy") == struct.pack("<IQ", 3, 2) + b"xy"
