"""GATHER: validation rules, feature levels, scalar-loop oracle, index clamping, strided inputs."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmlops
from conftest import assert_close, to_numpy
from dmlops import DataIndexError, InvalidDescError, TensorDesc
from dmlops.descs.data_movement import GatherDesc
from helpers import ALL_DTYPES, random_array
from oracles.gather import expected_output_sizes, gather_oracle

INDEX_DTYPES = [np.uint32, np.int32, np.int64, np.uint64]
DTYPE_ID = lambda d: np.dtype(d).name  # noqa: E731


def make_desc(
    in_sizes=(1, 1, 3, 2),
    idx_sizes=(1, 1, 1, 4),
    out_sizes=(1, 1, 4, 2),
    axis=2,
    index_dimensions=1,
    in_type="FLOAT32",
    idx_type="UINT32",
    out_type="FLOAT32",
    in_strides=None,
    idx_strides=None,
    in_total=-1,
) -> GatherDesc:
    return GatherDesc(
        input_tensor=TensorDesc(
            data_type=in_type, sizes=in_sizes, strides=in_strides, total_tensor_size_in_bytes=in_total
        ),
        indices_tensor=TensorDesc(data_type=idx_type, sizes=idx_sizes, strides=idx_strides),
        output_tensor=TensorDesc(data_type=out_type, sizes=out_sizes),
        axis=axis,
        index_dimensions=index_dimensions,
    )


def run(desc: GatherDesc, x, idx, backend: str, **kw):
    result = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": idx}, backend=backend, **kw)
    return to_numpy(result["OutputTensor"])


# -- validation: each rule, one valid and one invalid desc -------------------------------------

# rule -> (valid desc kwargs, invalid desc kwargs, message regex)
RULES = {
    "indices DimensionCount": (
        dict(),
        dict(idx_sizes=(1, 1, 4)),
        r"IndicesTensor.DimensionCount: must equal InputTensor.DimensionCount \(4\); got 3",
    ),
    "output DimensionCount": (
        dict(),
        dict(out_sizes=(1, 4, 2)),
        r"OutputTensor.DimensionCount: must equal InputTensor.DimensionCount \(4\); got 3",
    ),
    "data types": (
        dict(in_type="FLOAT16", out_type="FLOAT16"),
        dict(out_type="FLOAT16"),
        r"OutputTensor.DataType: must equal InputTensor.DataType \(DML_TENSOR_DATA_TYPE_FLOAT32\)",
    ),
    "Axis < D": (
        dict(axis=3, out_sizes=(1, 1, 3, 4)),
        dict(axis=4),
        r"Axis: must be in \[0, InputTensor.DimensionCount\) = \[0, 4\); got 4",
    ),
    "IndexDimensions <= D (inclusive, E1)": (
        dict(in_sizes=(1, 1, 1, 3), idx_sizes=(2, 3, 1, 4), out_sizes=(2, 3, 1, 4), axis=3, index_dimensions=4),
        dict(index_dimensions=5),
        r"^DML_GATHER_OPERATOR_DESC.IndexDimensions: must be in \[0, IndicesTensor.DimensionCount\] = \[0, 4\]; got 5$",
    ),
    "IndexDimensions 0 removes the axis": (
        dict(idx_sizes=(1, 1, 1, 1), out_sizes=(1, 1, 1, 2), index_dimensions=0),
        dict(idx_sizes=(1, 1, 1, 4), out_sizes=(1, 1, 1, 2), index_dimensions=0),
        r"IndicesTensor.Sizes\[3\]: the dimensions of IndicesTensor before the last IndexDimensions \(0\) must be 1",
    ),
    "leading index dims are 1": (
        dict(idx_sizes=(1, 1, 1, 4)),
        dict(idx_sizes=(1, 1, 2, 4)),
        r"IndicesTensor.Sizes\[2\]: the dimensions of IndicesTensor before the last IndexDimensions \(1\) must be 1.*; got 2$",
    ),
    "OutputTensor.Sizes": (
        dict(),
        dict(out_sizes=(1, 1, 2, 4)),
        r"OutputTensor.Sizes: must be \{1, 1, 4, 2\} .*; got \(1, 1, 2, 4\)$",
    ),
    "index data type": (
        dict(idx_type="INT64"),
        dict(idx_type="INT16"),
        r"IndicesTensor.DataType: must be one of INT32, INT64, UINT32, UINT64 at DML_FEATURE_LEVEL_6_4; "
        r"got DML_TENSOR_DATA_TYPE_INT16",
    ),
    "zero size": (
        dict(),
        dict(idx_sizes=(1, 1, 1, 0), out_sizes=(1, 1, 0, 2)),
        r"IndicesTensor.Sizes\[3\]: sizes may not be 0",
    ),
    "indices strides length": (
        dict(idx_strides=(4, 4, 4, 1)),
        dict(idx_strides=(4, 1)),
        r"IndicesTensor.Strides: must have DimensionCount \(4\) elements; got 2",
    ),
}


@pytest.mark.parametrize("rule", RULES, ids=str)
def test_rule(rule: str) -> None:
    valid, invalid, message = RULES[rule]
    make_desc(**valid).validate()
    with pytest.raises(InvalidDescError, match=message) as info:
        make_desc(**invalid).validate()
    assert info.value.hresult == 0x80070057
    assert str(info.value).startswith("DML_GATHER_OPERATOR_DESC.")


# DirectML 1.15.4 accepts leading output entries that do not fit DimensionCount whatever they are
# (the page implies they must be 1, erratum E5) and computes the slab at coordinate 0 of the dropped
# dimensions; values measured on the directml backend (tests/directml/test_directml_findings.py).
DROPPED_LEADING = {
    # dropped entry from InputTensor: Output[m0, m1] = Input[0, Indices[m0, m1]]
    "from the input": (
        dict(in_sizes=(2, 3), idx_sizes=(2, 2), out_sizes=(2, 2), axis=1, index_dimensions=2),
        [[0, 1], [2, 1]],
        [[1, 2], [3, 2]],
    ),
    # dropped entry from IndicesTensor: Output[m1, p] = Input[Indices[0, m1], p]
    "from the indices": (
        dict(in_sizes=(3, 2), idx_sizes=(2, 2), out_sizes=(2, 2), axis=0, index_dimensions=2),
        [[0, 1], [2, 1]],
        [[1, 2], [3, 4]],
    ),
    # both: full {2, 3, 2, 2, 2} -> Output[m0, m1, m2] = Input[0, 0, Indices[m0, m1, m2]]
    "from both": (
        dict(in_sizes=(2, 3, 4), idx_sizes=(2, 2, 2), out_sizes=(2, 2, 2), axis=2, index_dimensions=3),
        [[[1, 2], [0, 3]], [[3, 3], [2, 2]]],
        [[[2, 3], [1, 4]], [[4, 4], [3, 3]]],
    ),
}


@pytest.mark.parametrize("case", DROPPED_LEADING, ids=str)
def test_dropped_leading_output_entries_read_the_first_slab(backend: str, case: str) -> None:
    kwargs, indices, want = DROPPED_LEADING[case]
    desc = make_desc(**kwargs)
    desc.validate()
    x = np.arange(1, np.prod(kwargs["in_sizes"]) + 1, dtype=np.float32).reshape(kwargs["in_sizes"])
    got = run(desc, x, np.array(indices, np.uint32), backend)
    np.testing.assert_array_equal(got, np.array(want, np.float32))
    # a strided input, and strict mode (only the indices of the slab are read)
    wide = np.zeros((*x.shape[:-1], 2 * x.shape[-1]), np.float32)
    wide[..., ::2] = x
    strides = tuple(s // 4 for s in wide[..., ::2].strides)
    strided = make_desc(**kwargs, in_strides=strides)
    got = dmlops.execute(strided, {"InputTensor": wide.ravel(), "IndicesTensor": np.array(indices, np.uint32)},
                         backend=backend, strict=True)["OutputTensor"]  # fmt: skip
    np.testing.assert_array_equal(to_numpy(got), np.array(want, np.float32))


def test_index_dimensions_0_any_leading_output_size(backend: str) -> None:
    # DirectML accepts any OutputTensor.Sizes[0] here (E37) and so does dmlops: slab o reads
    # o * (element count) past slab 0 with NULL Strides (past the input: clamped to its last
    # element), slab 0 again with explicit Strides (E41; probed on DirectML 1.15.4).
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    idx = np.array([[1]], np.uint32)
    desc = make_desc(in_sizes=(2, 3), idx_sizes=(1, 1), out_sizes=(3, 2), axis=1, index_dimensions=0)
    desc.validate()
    np.testing.assert_array_equal(run(desc, x, idx, backend), [[2, 5], [6, 6], [6, 6]])
    strided = make_desc(
        in_sizes=(2, 3), idx_sizes=(1, 1), out_sizes=(3, 2), axis=1, index_dimensions=0, in_strides=(3, 1)
    )
    np.testing.assert_array_equal(run(strided, x, idx, backend), [[2, 5], [2, 5], [2, 5]])
    # a larger buffer (TotalTensorSizeInBytes) holds the slabs: Input {4, 3}, Output {3, 4}
    buf = np.arange(100, dtype=np.float32)
    big = make_desc(in_sizes=(4, 3), idx_sizes=(1, 1), out_sizes=(3, 4), axis=1, index_dimensions=0, in_total=400)
    np.testing.assert_array_equal(run(big, buf, np.array([[1]], np.uint32), backend), np.arange(1, 36, 3).reshape(3, 4))
    # the trailing sizes are still checked
    with pytest.raises(InvalidDescError, match=r"OutputTensor.Sizes: must be \{1, 2\}.*Sizes\[0\] may be any"):
        make_desc(in_sizes=(2, 3), idx_sizes=(1, 1), out_sizes=(2, 3), axis=1, index_dimensions=0).validate()


def test_member_coercion_errors() -> None:
    with pytest.raises(InvalidDescError, match=r"DML_GATHER_OPERATOR_DESC.Axis: must be an unsigned 32-bit integer"):
        make_desc(axis=-1)
    with pytest.raises(InvalidDescError, match=r"IndexDimensions: must be an unsigned integer"):
        make_desc(index_dimensions=1.0)


def test_output_sizes_right_alignment() -> None:
    # Example 4: full {1, 3, 1, 2} drops its leading 1.
    desc = make_desc(in_sizes=(1, 3, 3), idx_sizes=(1, 1, 2), out_sizes=(3, 1, 2), axis=2, index_dimensions=2)
    assert desc.full_output_sizes() == (1, 3, 1, 2)
    assert desc.output_sizes() == (3, 1, 2)
    # IndexDimensions 0: full {3} is padded with a leading 1.
    desc = make_desc(in_sizes=(3, 2), idx_sizes=(1, 1), out_sizes=(1, 3), axis=1, index_dimensions=0)
    assert desc.output_sizes() == (1, 3)
    desc.validate()


def test_json_round_trip() -> None:
    desc = make_desc(idx_type="INT64")
    data = desc.to_dml_dict()
    assert list(data) == ["InputTensor", "IndicesTensor", "OutputTensor", "Axis", "IndexDimensions"]
    assert dmlops.desc_from_json("DML_OPERATOR_GATHER", data) == desc


# -- feature levels -----------------------------------------------------------------------------


def test_feature_level_index_types() -> None:
    int32 = make_desc(idx_type="INT32")
    with pytest.raises(
        InvalidDescError,
        match=r"IndicesTensor.DataType: must be one of UINT32 at DML_FEATURE_LEVEL_2_1; got DML_TENSOR_DATA_TYPE_INT32",
    ):
        int32.validate("2_1")
    int32.validate("3_0")
    make_desc(idx_type="UINT64").validate("3_0")
    make_desc().validate("1_0")


def test_feature_level_dimension_counts() -> None:
    one_d = make_desc(in_sizes=(4,), idx_sizes=(5,), out_sizes=(5,), axis=0, index_dimensions=1)
    for level in ("1_0", "2_1"):
        with pytest.raises(
            InvalidDescError, match=rf"InputTensor.DimensionCount: must be 4 at DML_FEATURE_LEVEL_{level}"
        ):
            one_d.validate(level)
    one_d.validate("3_0")
    eight_d = make_desc(in_sizes=(1,) * 7 + (3,), idx_sizes=(1,) * 7 + (2,), out_sizes=(1,) * 7 + (2,), axis=7)
    eight_d.validate("3_0")
    with pytest.raises(InvalidDescError, match=r"InputTensor.DimensionCount: must be between 1 and 5"):
        eight_d.validate("2_1")


def test_feature_level_data_types() -> None:
    f64 = make_desc(in_type="FLOAT64", out_type="FLOAT64")
    with pytest.raises(
        InvalidDescError,
        match=r"InputTensor.DataType: must be one of .* at DML_FEATURE_LEVEL_4_0; got DML_TENSOR_DATA_TYPE_FLOAT64",
    ):
        f64.validate("4_0")
    f64.validate("4_1")
    int8 = make_desc(in_type="INT8", out_type="INT8")
    with pytest.raises(InvalidDescError, match=r"InputTensor.DataType: must be one of FLOAT16, FLOAT32 at .*1_0"):
        int8.validate("1_0")
    int8.validate("2_1")


def test_introduced_in_1_0() -> None:
    assert GatherDesc.introduced == dmlops.FeatureLevel.V1_0
    assert set(GatherDesc.support) == {dmlops.FeatureLevel.from_any(v) for v in ("1_0", "2_1", "3_0", "4_1")}


# -- values: reference and backends vs the loop oracle ------------------------------------------


@st.composite
def gather_cases(draw, max_rank: int = 8):
    """A valid padded desc: DimensionCount D, Axis, IndexDimensions K and fitting sizes."""
    d = draw(st.integers(1, max_rank))
    axis = draw(st.integers(0, d - 1))
    k = draw(st.integers(0, d))
    in_sizes = [draw(st.integers(1, 3)) for _ in range(d)]
    idx_tail = [draw(st.integers(1, 3)) for _ in range(k)]
    # Keep the product small: 8-D tensors of size-3 dims are slow to loop over.
    while np.prod(in_sizes) * max(1, np.prod(idx_tail)) > 400:
        j = int(np.argmax(in_sizes + idx_tail))
        (in_sizes if j < d else idx_tail)[j if j < d else j - d] = 1
    # Entries of the full sizes that overflow D must be 1 (E5): set their sources to 1.
    for j in range(k - 1):
        if j < axis:
            in_sizes[j] = 1
        else:
            idx_tail[j - axis] = 1
    idx_sizes = [1] * (d - k) + idx_tail
    out_sizes = expected_output_sizes(in_sizes, idx_sizes, axis, k)
    assert out_sizes is not None
    dtype = draw(st.sampled_from(ALL_DTYPES))
    idx_dtype = draw(st.sampled_from(INDEX_DTYPES))
    seed = draw(st.integers(0, 2**31 - 1))
    return tuple(in_sizes), tuple(idx_sizes), out_sizes, axis, k, dtype, idx_dtype, seed


def random_indices(rng: np.random.RandomState, shape, dtype, n: int, *, valid_only: bool = False) -> np.ndarray:
    """Valid indices with out-of-range ones mixed in (negative ones for signed types)."""
    dtype = np.dtype(dtype)
    lo = -n if dtype.kind == "i" else 0
    values = rng.randint(lo, n, size=shape).astype(dtype)
    if valid_only:
        return values
    info = np.iinfo(dtype)
    wild = [int(info.max), n, n + 3, int(info.max) - 1]
    if dtype.kind == "i":
        wild += [int(info.min), -n - 1, -n - 7]
    mask = rng.uniform(size=shape) < 0.2
    picks = rng.randint(0, len(wild), size=int(np.sum(mask)))
    values[mask] = np.array([wild[p] for p in picks], dtype=dtype)
    return values


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=gather_cases())
def test_matches_loop_oracle(backend: str, case) -> None:
    in_sizes, idx_sizes, out_sizes, axis, k, dtype, idx_dtype, seed = case
    rng = np.random.RandomState(seed)
    x = random_array(rng, in_sizes, dtype)
    idx = random_indices(rng, idx_sizes, idx_dtype, in_sizes[axis])
    desc = make_desc(
        in_sizes=in_sizes,
        idx_sizes=idx_sizes,
        out_sizes=out_sizes,
        axis=axis,
        index_dimensions=k,
        in_type=dmlops.TensorDataType.from_numpy(dtype),
        out_type=dmlops.TensorDataType.from_numpy(dtype),
        idx_type=dmlops.TensorDataType.from_numpy(idx_dtype),
    )
    got = run(desc, x, idx, backend)
    assert_close(got, gather_oracle(x, idx, axis, k, out_sizes), exact=True)


@pytest.mark.parametrize("idx_dtype", INDEX_DTYPES, ids=DTYPE_ID)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_ID)
def test_every_type_pair_1d_and_8d(backend: str, dtype, idx_dtype) -> None:
    rng = np.random.RandomState(7)
    for in_sizes, idx_sizes, axis, k in [
        ((5,), (7,), 0, 1),
        ((1, 1, 2, 1, 3, 1, 2, 4), (1, 1, 1, 1, 1, 1, 2, 3), 7, 2),
        ((2, 1, 2, 3, 1, 2, 1, 2), (1, 1, 1, 1, 1, 1, 1, 1), 3, 0),
    ]:
        out_sizes = expected_output_sizes(in_sizes, idx_sizes, axis, k)
        x = random_array(rng, in_sizes, dtype)
        idx = random_indices(rng, idx_sizes, idx_dtype, in_sizes[axis])
        t = dmlops.TensorDataType.from_numpy
        desc = make_desc(
            in_sizes=in_sizes,
            idx_sizes=idx_sizes,
            out_sizes=out_sizes,
            axis=axis,
            index_dimensions=k,
            in_type=t(dtype),
            out_type=t(dtype),
            idx_type=t(idx_dtype),
        )
        assert_close(run(desc, x, idx, backend), gather_oracle(x, idx, axis, k, out_sizes), exact=True)


def test_data_movement_is_bit_exact(backend: str) -> None:
    # NaN payloads, signed zeros, infinities and subnormals survive the copy unchanged.
    for dtype, utype in [(np.float16, np.uint16), (np.float32, np.uint32), (np.float64, np.uint64)]:
        bits = np.array([0x7E01, 0xFE02, 0x8000, 0x7C00, 0x0001, 0x3C00], dtype=np.uint64)
        if dtype is np.float32:
            bits = np.array([0x7FC00123, 0xFFA00001, 0x80000000, 0x7F800000, 0x00000001, 0x3F800000], dtype=np.uint64)
        elif dtype is np.float64:
            bits = np.array(
                [0x7FF8000000000123, 0xFFF4000000000001, 1 << 63, 0x7FF0000000000000, 1, 0x3FF0000000000000],
                dtype=np.uint64,
            )
        x = bits.astype(utype).view(dtype)
        idx = np.array([5, 4, 3, 2, 1, 0], dtype=np.uint32)
        got = to_numpy(dmlops.gather(x, idx, axis=0, backend=backend))
        np.testing.assert_array_equal(got.view(utype), x[::-1].view(utype))


# -- out-of-range and negative indices: DirectML's flat address clamp (E41) ------------------------

N = 4  # size of the gathered axis below
X = np.array([10, 11, 12, 13], dtype=np.float32)


@pytest.mark.parametrize(
    "idx_dtype, values, expected",
    [
        (np.uint32, [0, 3, 4, 7, 2**32 - 1], [10, 13, 13, 13, 13]),
        # the address is taken modulo 2^32 (2^32 + 2 -> 2); UINT64 reads as INT64 and wraps once:
        # 2^64 - 4 is -4 -> 0, 2^64 - 1 is -1 -> 3, 2^63 is -2^63 -> -2^63 + 4 = 4 mod 2^32
        (np.uint64, [0, 3, 4, 2**63 - 1, 2**63, 2**64 - 1, 2**64 - 4, 2**32 + 2], [10, 13, 13, 13, 13, 13, 10, 12]),
        # one wrap (+4); what is still negative addresses far past the end (mod 2^32): the last element
        (np.int32, [0, -1, -4, -5, -(2**31), 4, 2**31 - 1], [10, 13, 10, 13, 13, 13, 13]),
        (np.int64, [-2, -4, -5, -(2**63), 5, 2**63 - 1, 2**32 + 1, -(2**32) - 3], [12, 10, 13, 13, 13, 13, 11, 11]),
    ],
    ids=["uint32", "uint64", "int32", "int64"],
)
def test_flat_clamp(backend: str, idx_dtype, values, expected) -> None:
    idx = np.array(values, dtype=idx_dtype)
    desc = make_desc(
        in_sizes=(N,),
        idx_sizes=(len(values),),
        out_sizes=(len(values),),
        axis=0,
        idx_type=dmlops.TensorDataType.from_numpy(idx_dtype),
    )
    got = run(desc, X, idx, backend)
    assert_close(got, np.array(expected, dtype=np.float32), exact=True)
    # no value outside the input, ever (DirectML's only promise)
    assert set(got.tolist()) <= set(X.tolist())


def test_flat_clamp_in_4d(backend: str) -> None:
    # The clamp is of the flat address, not per axis (Axis 1 of size 3, stride 4): index 7 of
    # batch 0 reads past row ends into batch 1, then the last element; -7 wraps once to -4,
    # a negative address: the last element.
    x = np.arange(2 * 3 * 2 * 2, dtype=np.int16).reshape(2, 3, 2, 2)
    idx = np.array([7, -7, -1, 1], dtype=np.int64).reshape(1, 1, 1, 4)
    desc = make_desc(
        in_sizes=(2, 3, 2, 2),
        idx_sizes=(1, 1, 1, 4),
        out_sizes=(2, 4, 2, 2),
        axis=1,
        in_type="INT16",
        out_type="INT16",
        idx_type="INT64",
    )
    got = run(desc, x, idx, backend)
    assert_close(got, gather_oracle(x, idx, 1, 1, (2, 4, 2, 2)), exact=True)
    want = x[:, [2, 0, 2, 1]].copy()
    want[:, :2] = 23  # 0 * 12 + 7 * 4 = 28 and every negative address: clamped to element 23
    assert_close(got, want, exact=True)


def test_flat_clamp_reads_the_buffer(backend: str) -> None:
    # What lies between and after the tensor's elements is read as the bound buffer holds it:
    # the caller's flat buffer, or zeros around the logical elements (probed on DirectML 1.15.4).
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    buf = np.array([1, 2, 3, 99, 4, 5, 6, 77], np.float32)
    gap = make_desc(in_sizes=(2, 3), idx_sizes=(1, 1), out_sizes=(2, 1), axis=1, in_strides=(4, 1))
    for value, flat, logical in ((3, [99, 6], [0, 6]), (4, [4, 6], [4, 6]), (100, [6, 6], [6, 6])):
        idx = np.array([[value]], np.uint32)
        np.testing.assert_array_equal(run(gap, buf, idx, backend).ravel(), flat, err_msg=f"flat {value}")
        np.testing.assert_array_equal(run(gap, x, idx, backend).ravel(), logical, err_msg=f"logical {value}")
    # TotalTensorSizeInBytes 40: the buffer's elements 6..9, read from a flat buffer; a logical
    # array holds only the tensor's elements, the rest read 0.
    big = make_desc(in_sizes=(2, 3), idx_sizes=(1, 1), out_sizes=(2, 1), axis=1, in_total=40)
    flat10 = np.arange(1, 11, dtype=np.float32)
    for value, flat, logical in ((5, [6, 9], [6, 0]), (8, [9, 10], [0, 0]), (100, [10, 10], [0, 0])):
        idx = np.array([[value]], np.uint32)
        np.testing.assert_array_equal(run(big, flat10, idx, backend).ravel(), flat, err_msg=f"flat {value}")
        np.testing.assert_array_equal(run(big, x, idx, backend).ravel(), logical, err_msg=f"logical {value}")
    # INT8 {1, 3}: the buffer rounds up to 4 bytes; index 3 and beyond read the fourth byte
    i8 = make_desc(in_sizes=(1, 3), idx_sizes=(1, 1), out_sizes=(1, 1), axis=1, in_type="INT8", out_type="INT8")
    for value in (3, 4, 100):
        idx = np.array([[value]], np.uint32)
        assert run(i8, np.array([[1, 2, 3]], np.int8), idx, backend).ravel().tolist() == [0]
        assert run(i8, np.array([1, 2, 3, 9, 8], np.int8), idx, backend).ravel().tolist() == [9]
    # broadcast (stride 0) input: the buffer is one row
    bc = make_desc(in_sizes=(2, 3), idx_sizes=(1, 1), out_sizes=(2, 1), axis=1, in_strides=(0, 1))
    row = np.array([1, 2, 3], np.float32)
    for value, want in ((1, [2, 2]), (3, [3, 3])):
        got = run(bc, row, np.array([[value]], np.uint32), backend)
        np.testing.assert_array_equal(got.ravel(), want, err_msg=str(value))
    axis_bc = make_desc(in_sizes=(2, 3), idx_sizes=(1, 1), out_sizes=(2, 1), axis=1, in_strides=(1, 0))
    np.testing.assert_array_equal(run(axis_bc, row[:2], np.array([[100]], np.uint32), backend).ravel(), [1, 2])


def test_flat_reads_of_a_strided_flat_buffer(backend: str) -> None:
    # A flat buffer whose elements are not adjacent (every second byte, or reversed): flat
    # reads past the one-element tensor take the buffer's elements 1 to 3 (the bound buffer
    # is 4 bytes), as numpy's binding reads them, never raw memory beside the view.
    desc = make_desc(in_sizes=(1, 1, 1, 1), idx_sizes=(1, 1, 1, 1), out_sizes=(1, 1, 1, 1), axis=3,
                     in_type="UINT8", out_type="UINT8")  # fmt: skip
    desc.validate()
    for buffer, want in (
        (np.arange(8, dtype=np.uint8)[::2], [2, 4, 6, 6]),
        (np.arange(8, dtype=np.uint8)[::-1], [6, 5, 4, 4]),
    ):
        got = [run(desc, buffer, np.full((1, 1, 1, 1), i, np.uint32), backend).item() for i in (1, 2, 3, 7)]
        assert got == want, (buffer.tolist(), got)


def test_flat_clamp_matches_oracle(backend: str) -> None:
    # Seeded descs with gaps, broadcast and packed strides, flat buffers exactly the addressed
    # span (as every backend binds them), hostile indices of every type, IndexDimensions 0 slabs;
    # rows wide enough for vector loads and the cuda backend's row kernel.
    rng = np.random.RandomState(41)
    done = 0
    while done < 60:
        d = rng.randint(1, 4)
        axis = rng.randint(0, d)
        k = rng.randint(0, d + 1)
        in_sizes = [int(v) for v in rng.randint(1, 4, size=d)]
        if rng.rand() < 0.3:
            in_sizes[-1] = int(rng.choice([8, 16, 64]))
        idx_tail = [int(v) for v in rng.randint(1, 4, size=k)]
        idx_sizes = [1] * (d - k) + idx_tail
        full = [*in_sizes[:axis], *idx_tail, *in_sizes[axis + 1 :]]
        if len(full) > d and any(v != 1 for v in full[: len(full) - d]):
            continue
        out_sizes = list(expected_output_sizes(in_sizes, idx_sizes, axis, k) or ())
        if not out_sizes:
            continue
        if k == 0 and rng.rand() < 0.5:
            out_sizes[0] = int(rng.randint(2, 4))
        layout = rng.choice(["packed", "gaps", "broadcast"])
        strides = None
        if layout != "packed":
            strides, step = [0] * d, 1
            for i in range(d - 1, -1, -1):
                strides[i] = 0 if layout == "broadcast" and rng.rand() < 0.4 else step
                step = step * in_sizes[i] + (int(rng.randint(0, 3)) if layout == "gaps" else 0)
        dtype = [np.float32, np.float16, np.int8, np.float64][rng.randint(4)]
        idx_dtype = INDEX_DTYPES[rng.randint(len(INDEX_DTYPES))]
        t = dmlops.TensorDataType.from_numpy
        desc = make_desc(
            in_sizes=tuple(in_sizes), idx_sizes=tuple(idx_sizes), out_sizes=tuple(out_sizes), axis=axis,
            index_dimensions=k, in_type=t(dtype), out_type=t(dtype), idx_type=t(idx_dtype),
            in_strides=None if strides is None else tuple(strides),
        )  # fmt: skip
        desc.validate()
        span = desc.input_tensor.addressed_element_span
        buffer = random_array(rng, (span,), dtype)
        x = np.lib.stride_tricks.as_strided(
            buffer, in_sizes, [e * buffer.itemsize for e in desc.input_tensor.element_strides]
        ).copy()
        idx = random_indices(rng, idx_sizes, idx_dtype, in_sizes[axis])
        if idx_dtype == np.uint64 and idx.size:
            idx.reshape(-1)[0] = 2**64 - 1 - rng.randint(0, 4)  # INT64 -1 .. -4: wraps
        want = gather_oracle(x, idx, axis, k, out_sizes, strides=strides, buffer=buffer)
        flat_arg = buffer if strides is not None or rng.rand() < 0.5 else x
        got = run(desc, flat_arg, idx, backend)
        assert_close(got, want, exact=True)
        done += 1


def test_strict_mode(backend: str) -> None:
    desc = make_desc(in_sizes=(1, 4), idx_sizes=(2, 3), out_sizes=(2, 3), axis=1, index_dimensions=2, idx_type="INT32")
    x = X.reshape(1, 4)
    ok = np.array([[0, -1, -4], [3, 2, 1]], dtype=np.int32)
    assert_close(run(desc, x, ok, backend, strict=True), X[[[0, 3, 0], [3, 2, 1]]], exact=True)
    bad = np.array([[0, -1, -4], [3, 9, -5]], dtype=np.int32)
    with pytest.raises(
        DataIndexError, match=re.escape("DML_GATHER_OPERATOR_DESC.IndicesTensor[1, 1]: index 9 is out of range [-4, 4)")
    ):
        run(desc, x, bad, backend, strict=True)
    # DataIndexError is an IndexError too
    with pytest.raises(IndexError, match=r"IndicesTensor\[0, 0\]: index -5"):
        run(desc, x, np.full((2, 3), -5, dtype=np.int32), backend, strict=True)
    # without strict the same data reads clamped flat addresses, never raises (9 -> 13;
    # -5 wraps to -1, a negative address -> the last element)
    assert_close(run(desc, x, bad, backend), X[[[0, 3, 0], [3, 3, 3]]], exact=True)
    # unsigned: values above 2^63 are out of range, not negative
    u64 = make_desc(in_sizes=(1, 4), idx_sizes=(1, 2), out_sizes=(1, 2), axis=1, idx_type="UINT64")
    with pytest.raises(
        DataIndexError, match=re.escape(f"IndicesTensor[0, 1]: index {2**64 - 1} is out of range [0, 4)")
    ):
        run(u64, x, np.array([[3, 2**64 - 1]], dtype=np.uint64), backend, strict=True)


# -- strided and broadcast TensorDescs ----------------------------------------------------------


def test_strided_input_buffer(backend: str) -> None:
    # An NHWC buffer described with NCHW sizes; gather channels (Axis 1).
    n, c, h, w = 1, 3, 2, 4
    nhwc = np.arange(n * h * w * c, dtype=np.float32)
    logical = nhwc.reshape(n, h, w, c).transpose(0, 3, 1, 2)
    idx = np.array([2, 0, 2, 1, 7], dtype=np.uint32).reshape(1, 1, 1, 5)
    desc = make_desc(
        in_sizes=(n, c, h, w),
        idx_sizes=(1, 1, 1, 5),
        out_sizes=(1, 5, h, w),
        axis=1,
        in_strides=(h * w * c, 1, w * c, c),
    )
    got = run(desc, nhwc, idx, backend)
    strides = (h * w * c, 1, w * c, c)
    assert_close(got, gather_oracle(logical, idx, 1, 1, (1, 5, h, w), strides=strides, buffer=nhwc), exact=True)


def test_broadcast_input_and_indices(backend: str) -> None:
    # Input row broadcast over 3 rows (stride 0); indices one row broadcast over the batch.
    row = np.array([5, 6, 7, 8], dtype=np.uint8)
    idx_row = np.array([3, 3, 0], dtype=np.int64)
    desc = make_desc(
        in_sizes=(1, 3, 4), idx_sizes=(1, 2, 3), out_sizes=(3, 2, 3), axis=2, index_dimensions=2,
        in_type="UINT8", out_type="UINT8", idx_type="INT64", in_strides=(0, 0, 1), idx_strides=(0, 0, 1),
    )  # fmt: skip
    got = run(desc, row, idx_row, backend)
    logical_x = np.broadcast_to(row, (1, 3, 4))
    logical_idx = np.broadcast_to(idx_row, (1, 2, 3))
    assert_close(got, gather_oracle(logical_x, logical_idx, 2, 2, (3, 2, 3)), exact=True)
    assert_close(got, np.broadcast_to(np.array([8, 8, 5], dtype=np.uint8), (3, 2, 3)).copy(), exact=True)


def test_strided_output_writes_only_addressed_elements() -> None:
    desc = GatherDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(4,)),
        indices_tensor=TensorDesc(data_type="UINT32", sizes=(3,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(3,), strides=(2,)),
        axis=0,
        index_dimensions=1,
    )
    buffer = np.full(5, -1.0, dtype=np.float32)
    dmlops.execute(
        desc,
        {"InputTensor": X, "IndicesTensor": np.array([3, 0, 1], dtype=np.uint32)},
        outputs={"OutputTensor": buffer},
    )
    np.testing.assert_array_equal(buffer, [13, -1, 10, -1, 11])


# -- the functional wrapper vs numpy.take ---------------------------------------------------------


@st.composite
def take_cases(draw):
    r = draw(st.integers(1, 4))
    q = draw(st.integers(0, 4))  # D = max(r, q, r + q - 1) <= 7
    x_shape = tuple(draw(st.integers(1, 3)) for _ in range(r))
    idx_shape = tuple(draw(st.integers(1, 3)) for _ in range(q))
    axis = draw(st.integers(-r, r - 1))
    dtype = draw(st.sampled_from(ALL_DTYPES))
    idx_dtype = draw(st.sampled_from(INDEX_DTYPES))
    seed = draw(st.integers(0, 2**31 - 1))
    return x_shape, idx_shape, axis, dtype, idx_dtype, seed


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=take_cases())
def test_wrapper_matches_numpy_take(backend: str, case) -> None:
    x_shape, idx_shape, axis, dtype, idx_dtype, seed = case
    rng = np.random.RandomState(seed)
    x = random_array(rng, x_shape, dtype)
    idx = random_indices(rng, idx_shape, idx_dtype, x_shape[axis], valid_only=True)
    got = dmlops.gather(x, idx, axis=axis, backend=backend)
    want = np.take(x, idx.astype(np.int64), axis=axis)
    assert_close(got, want, exact=True)


def test_wrapper_examples_and_options() -> None:
    x = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    # Example 3 with NumPy-like shapes: 1-D indices along axis 1.
    np.testing.assert_array_equal(dmlops.gather(x, np.array([1, 0], dtype=np.uint32), axis=1), [[2, 1], [4, 3], [6, 5]])
    # Scalar index removes the axis; D stays the rank of x.
    np.testing.assert_array_equal(dmlops.gather(x, np.uint32(2), axis=0), [5, 6])
    np.testing.assert_array_equal(dmlops.gather(x[0], np.int64(-1), axis=0), np.float32(2))
    # index_dimensions smaller than indices.ndim ignores leading 1s; larger pads with 1s.
    idx = np.array([[2, 0]], dtype=np.uint32)
    assert dmlops.gather(x, idx, axis=0).shape == (1, 2, 2)
    assert dmlops.gather(x, idx, axis=0, index_dimensions=1).shape == (2, 2)
    assert dmlops.gather(x, idx, axis=0, index_dimensions=3).shape == (1, 1, 2, 2)
    with pytest.raises(InvalidDescError, match=r"IndicesTensor.Sizes\[0\]: .* must be 1"):
        dmlops.gather(x, np.zeros((2, 2), dtype=np.uint32), axis=0, index_dimensions=1)
    # Python lists become int64 indices, which need FL >= 3_0.
    np.testing.assert_array_equal(dmlops.gather(x, [2, -3], axis=0), [[5, 6], [1, 2]])
    with pytest.raises(
        InvalidDescError, match=r"IndicesTensor.DataType: must be one of UINT32 at DML_FEATURE_LEVEL_2_1"
    ):
        dmlops.gather(x.reshape(1, 1, 3, 2), [0], axis=2, feature_level="2_1")
    # 4-D at FL 1_0 with UINT32 indices is fine.
    got = dmlops.gather(x.reshape(1, 1, 3, 2), np.array([0], dtype=np.uint32), axis=3, feature_level="1_0")
    np.testing.assert_array_equal(got, [[[[1], [3], [5]]]])
    with pytest.raises(InvalidDescError, match=r"Axis: axis must be an integer in \[-2, 2\)"):
        dmlops.gather(x, idx, axis=2)
    with pytest.raises(InvalidDescError, match=r"DimensionCount: must be between 1 and 8"):
        dmlops.gather(np.zeros((1,) * 5, dtype=np.float32), np.zeros((1,) * 5, dtype=np.uint32), axis=0)
    with pytest.raises(DataIndexError, match=r"IndicesTensor\[0, 1\]: index 3"):
        dmlops.gather(x, np.array([0, 3], dtype=np.uint32), axis=0, strict=True)


def test_wrapper_out() -> None:
    x = np.arange(6, dtype=np.int32).reshape(3, 2)
    idx = np.array([2, 0], dtype=np.int32)
    out = np.full((2, 2), -1, dtype=np.int32)
    assert dmlops.gather(x, idx, axis=0, out=out) is out
    np.testing.assert_array_equal(out, [[4, 5], [0, 1]])
    # a non-contiguous out is written through
    buffer = np.zeros((2, 3), dtype=np.int32)
    view = buffer[:, ::-1].T
    dmlops.gather(x, np.array([1, 1], dtype=np.uint32), axis=1, out=view)
    np.testing.assert_array_equal(buffer, [[5, 3, 1], [5, 3, 1]])
    # a scalar index: out has the NumPy-like shape (2,), the DML output is (1, 2)
    row = np.zeros(2, dtype=np.int32)
    assert dmlops.gather(x, np.uint32(1), axis=0, out=row) is row
    np.testing.assert_array_equal(row, [2, 3])
    with pytest.raises(dmlops.TensorMismatchError, match=r"out must have shape \(2, 2\)"):
        dmlops.gather(x, idx, axis=0, out=np.zeros((4,), dtype=np.int32))
