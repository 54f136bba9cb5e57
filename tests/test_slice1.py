"""SLICE1: validation rules, scalar-loop oracle, strided tensors, feature levels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlops
from conftest import assert_close
from dmlops import InvalidDescError, TensorDesc
from dmlops.descs.data_movement import Slice1Desc
from helpers import ALL_DTYPES, data_type, random_array
from oracles.slice1 import slice1_oracle


def make_desc(
    in_sizes=(1, 1, 4, 4),
    out_sizes=(1, 1, 2, 2),
    offsets=(0, 0, 0, 1),
    sizes=(1, 1, 4, 3),
    strides=(1, 1, -2, 2),
    in_type="FLOAT32",
    out_type="FLOAT32",
    tensor_strides=None,
    **tensor_kw,
) -> Slice1Desc:
    return Slice1Desc(
        input_tensor=TensorDesc(data_type=in_type, sizes=in_sizes, strides=tensor_strides, **tensor_kw),
        output_tensor=TensorDesc(data_type=out_type, sizes=out_sizes),
        input_window_offsets=offsets,
        input_window_sizes=sizes,
        input_window_strides=strides,
    )


# -- validation: each rule, one valid and one invalid desc -------------------------------------

INVALID = {
    "stride zero": (dict(strides=(1, 1, 0, 2)), r"InputWindowStrides\[2\]: strides may not be 0; got 0"),
    "empty window": (dict(sizes=(1, 1, 0, 3)), r"InputWindowSizes\[2\]: the input window may not be empty"),
    "window past input": (
        dict(offsets=(0, 0, 1, 1)),
        r"InputWindowOffsets\[2\]: .* must be <= InputTensor.Sizes\[2\] \(4\)",
    ),
    "output too large": (
        dict(out_sizes=(1, 1, 3, 2)),
        r"OutputTensor.Sizes\[2\]: must be in \[1, MaxCopiedElements\[2\] = 2\]; got 3",
    ),
    "data types differ": (dict(out_type="FLOAT16"), r"OutputTensor.DataType: must equal InputTensor.DataType"),
    "dimension counts differ": (
        dict(out_sizes=(1, 2, 2)),
        r"OutputTensor.DimensionCount: must equal InputTensor.DimensionCount",
    ),
    "array lengths differ": (dict(strides=(1, -2, 2)), r"InputWindowStrides: must have DimensionCount \(4"),
    "DimensionCount vs tensor": (
        dict(offsets=(0, 0, 0), sizes=(1, 4, 3), strides=(1, -2, 2)),
        r"DimensionCount: must match InputTensor.DimensionCount \(4\)",
    ),
    "zero size": (dict(in_sizes=(1, 0, 4, 4)), r"InputTensor.Sizes\[1\]: sizes may not be 0"),
    "unknown type": (
        dict(in_type="UNKNOWN", out_type="UNKNOWN"),
        r"InputTensor.DataType: DML_TENSOR_DATA_TYPE_UNKNOWN is never valid",
    ),
    "4-bit type": (
        dict(in_type="UINT4", out_type="UINT4"),
        r"InputTensor.DataType: 4-bit data types are not supported",
    ),
    "strides length": (dict(strides=(1, 1, -2, 2), **{"strides_t": None}), None),
}
INVALID.pop("strides length")


@pytest.mark.parametrize("case", INVALID, ids=str)
def test_rule_rejects(case: str) -> None:
    kwargs, message = INVALID[case]
    with pytest.raises(InvalidDescError, match=message) as info:
        make_desc(**kwargs).validate()
    assert info.value.hresult == 0x80070057
    assert str(info.value).startswith("DML_SLICE1_OPERATOR_DESC.")


def test_valid_desc_passes_every_rule() -> None:
    make_desc().validate()
    make_desc(out_sizes=(1, 1, 1, 1)).validate()  # output need not consume the window
    make_desc(strides=(1, 1, -3, -2), out_sizes=(1, 1, 2, 2)).validate()  # MaxCopied uses |stride|


def test_max_copied_divides_by_absolute_stride() -> None:
    # The page's formula 1 + (4 - 1) / -2 would be 0 in C; |stride| gives 2 (erratum E7).
    assert make_desc().max_copied_elements() == (1, 1, 2, 2)


@pytest.mark.parametrize(
    "tensor_kw, message",
    [
        (dict(tensor_strides=(16, 16, 4)), r"InputTensor.Strides: must have DimensionCount \(4\) elements; got 3"),
        (
            dict(tensor_strides=(16, 16, 4, 1), total_tensor_size_in_bytes=60),
            r"TotalTensorSizeInBytes: must be at least DMLCalcBufferTensorSize \(64\)",
        ),
        (dict(guaranteed_base_offset_alignment=3), r"GuaranteedBaseOffsetAlignment: must be 0 or a power of two"),
        (
            dict(guaranteed_base_offset_alignment=2),
            r"GuaranteedBaseOffsetAlignment: must be 0 or a power of two >= the element size and >= 16",
        ),
        (  # a power of two >= the element size, yet DirectML 1.15.4 rejects it (erratum E31)
            dict(guaranteed_base_offset_alignment=8),
            r"GuaranteedBaseOffsetAlignment: must be 0 or a power of two >= the element size and >= 16",
        ),
        (dict(flags="OWNED_BY_DML", total_tensor_size_in_bytes=(2**32) * 4), r"may not exceed 2\^32 - 1 elements"),
    ],
)
def test_buffer_tensor_desc_rules(tensor_kw, message) -> None:
    with pytest.raises(InvalidDescError, match=message):
        make_desc(**tensor_kw).validate()


def test_buffer_tensor_desc_valid_variants() -> None:
    make_desc(
        tensor_strides=(16, 16, 4, 1), total_tensor_size_in_bytes=64, guaranteed_base_offset_alignment=16
    ).validate()
    make_desc(flags="OWNED_BY_DML").validate()  # OWNED_BY_DML is fine on an input


def test_owned_by_dml_rejected_on_output() -> None:
    desc = Slice1Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(4,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(4,), flags="OWNED_BY_DML"),
        input_window_offsets=(0,),
        input_window_sizes=(4,),
        input_window_strides=(1,),
    )
    with pytest.raises(InvalidDescError, match=r"OutputTensor.Flags: .*only valid on inputs"):
        desc.validate()


def test_broadcast_output_rejected() -> None:
    desc = Slice1Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(4,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(4,), strides=(0,)),
        input_window_offsets=(0,),
        input_window_sizes=(4,),
        input_window_strides=(1,),
    )
    with pytest.raises(InvalidDescError, match=r"OutputTensor.Strides\[0\]: output tensors may not broadcast"):
        desc.validate()


# -- feature levels -----------------------------------------------------------------------------


def test_feature_level_gating() -> None:
    one_d = Slice1Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(4,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(2,)),
        input_window_offsets=(0,),
        input_window_sizes=(4,),
        input_window_strides=(2,),
    )
    with pytest.raises(InvalidDescError, match=r"InputTensor.DimensionCount: must be 4 to 5 at DML_FEATURE_LEVEL_2_1"):
        one_d.validate("2_1")
    one_d.validate("3_0")
    with pytest.raises(
        InvalidDescError, match=r"introduced in DML_FEATURE_LEVEL_2_1; not available at DML_FEATURE_LEVEL_2_0"
    ):
        make_desc().validate("2_0")
    f64 = make_desc(in_type="FLOAT64", out_type="FLOAT64")
    with pytest.raises(
        InvalidDescError,
        match=r"InputTensor.DataType: must be one of .* at DML_FEATURE_LEVEL_4_0; got DML_TENSOR_DATA_TYPE_FLOAT64",
    ):
        f64.validate("4_0")
    f64.validate("4_1")


# -- values -------------------------------------------------------------------------------------


@st.composite
def slice_cases(draw):
    rank = draw(st.integers(1, 5))
    in_sizes, offsets, sizes, strides, out_sizes = [], [], [], [], []
    for _ in range(rank):
        n = draw(st.integers(1, 6))
        off = draw(st.integers(0, n - 1))
        size = draw(st.integers(1, n - off))
        stride = draw(st.integers(1, 4)) * draw(st.sampled_from([1, -1]))
        out = draw(st.integers(1, 1 + (size - 1) // abs(stride)))
        in_sizes.append(n), offsets.append(off), sizes.append(size), strides.append(stride), out_sizes.append(out)
    dtype = draw(st.sampled_from(ALL_DTYPES))
    seed = draw(st.integers(0, 2**31 - 1))
    return in_sizes, offsets, sizes, strides, out_sizes, dtype, seed


@settings(max_examples=150, deadline=None)
@given(case=slice_cases())
def test_reference_matches_loop_oracle(case) -> None:
    in_sizes, offsets, sizes, strides, out_sizes, dtype, seed = case
    x = random_array(np.random.RandomState(seed), in_sizes, dtype)
    got = dmlops.slice1(x, offsets, sizes, strides, output_sizes=out_sizes)
    np.testing.assert_array_equal(got, slice1_oracle(x, offsets, sizes, strides, out_sizes))
    assert got.dtype == x.dtype


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_backends_match_oracle_8d(backend: str, dtype, seed: int) -> None:
    rng = np.random.RandomState(seed)
    in_sizes = tuple(rng.randint(1, 4, size=8))
    offsets = [int(rng.randint(0, n)) for n in in_sizes]
    sizes = [int(rng.randint(1, n - o + 1)) for n, o in zip(in_sizes, offsets)]
    strides = [int(rng.choice([-3, -2, -1, 1, 2, 3])) for _ in in_sizes]
    x = random_array(rng, in_sizes, dtype)
    got = dmlops.slice1(x, offsets, sizes, strides, backend=backend)
    out_sizes = [1 + (s - 1) // abs(t) for s, t in zip(sizes, strides)]
    assert_close(got, slice1_oracle(x, offsets, sizes, strides, out_sizes), exact=True)


def test_strided_input_buffer_and_broadcast(backend: str) -> None:
    # An NHWC-laid-out buffer described with NCHW sizes, and a broadcast (stride 0) channel.
    n, c, h, w = 1, 3, 4, 5
    nhwc = np.arange(n * h * w * c, dtype=np.float32)
    tensor = TensorDesc(data_type="FLOAT32", sizes=(n, c, h, w), strides=(h * w * c, 1, w * c, c))
    logical = nhwc.reshape(n, h, w, c).transpose(0, 3, 1, 2)
    desc = Slice1Desc(
        input_tensor=tensor,
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(1, 3, 2, 5)),
        input_window_offsets=(0, 0, 0, 0),
        input_window_sizes=(1, 3, 4, 5),
        input_window_strides=(1, -1, 3, 1),
    )
    got = dmlops.execute(desc, {"InputTensor": nhwc}, backend=backend)["OutputTensor"]
    assert_close(got, slice1_oracle(logical, (0, 0, 0, 0), (1, 3, 4, 5), (1, -1, 3, 1), (1, 3, 2, 5)), exact=True)

    row = np.array([1, 2, 3, 4], dtype=np.int16)
    bcast = TensorDesc(data_type="INT16", sizes=(3, 4), strides=(0, 1))
    desc = Slice1Desc(
        input_tensor=bcast,
        output_tensor=TensorDesc(data_type="INT16", sizes=(3, 2)),
        input_window_offsets=(0, 0),
        input_window_sizes=(3, 4),
        input_window_strides=(1, -2),
    )
    got = dmlops.execute(desc, {"InputTensor": row}, backend=backend)["OutputTensor"]
    assert_close(got, np.array([[4, 2]] * 3, dtype=np.int16), exact=True)


def test_strided_output_writes_only_addressed_elements() -> None:
    x = np.arange(6, dtype=np.float32)
    desc = Slice1Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(6,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(3,), strides=(2,)),
        input_window_offsets=(0,),
        input_window_sizes=(6,),
        input_window_strides=(-2,),
    )
    buffer = np.full(5, -7.0, dtype=np.float32)
    result = dmlops.execute(desc, {"InputTensor": x}, outputs={"OutputTensor": buffer})
    assert result["OutputTensor"] is buffer
    np.testing.assert_array_equal(buffer, [5, -7, 3, -7, 1])


def test_array_mismatches_are_clear() -> None:
    desc = make_desc()
    with pytest.raises(dmlops.TensorMismatchError, match=r"InputTensor: expected dtype float32 .* got float64"):
        dmlops.execute(desc, {"InputTensor": np.zeros((1, 1, 4, 4))})
    with pytest.raises(dmlops.TensorMismatchError, match=r"expected an array of shape \(1, 1, 4, 4\)"):
        dmlops.execute(desc, {"InputTensor": np.zeros((4, 4), dtype=np.float32)})
    with pytest.raises(dmlops.TensorMismatchError, match=r"too small"):
        dmlops.execute(desc, {"InputTensor": np.zeros(15, dtype=np.float32)})
    with pytest.raises(dmlops.TensorMismatchError, match=r"missing InputTensor"):
        dmlops.execute(desc, {})
    x = np.zeros((1, 1, 4, 4), dtype=np.float32)
    with pytest.raises(dmlops.TensorMismatchError, match=r"unexpected Extra"):
        dmlops.execute(desc, {"InputTensor": x, "Extra": x})
    with pytest.raises(dmlops.TensorMismatchError, match=r"unknown output member\(s\) Bogus"):
        dmlops.execute(desc, {"InputTensor": x}, outputs={"Bogus": x})


def test_dtypes_map_to_dml_types() -> None:
    assert data_type(np.float16).name == "FLOAT16"
