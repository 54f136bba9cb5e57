"""MAX_POOLING2 and MAX_POOLING_GRAD: validation rules, loop oracle, ties, NaN, adjointness."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dmlops
from conftest import assert_close, backend_params
from dmlops import DescParseError, InvalidDescError, TensorDesc
from dmlops.descs.pooling import MaxPooling2Desc, MaxPoolingGradDesc
from helpers import ALL_DTYPES, random_array
from oracles.max_pooling import max_pool_grad_oracle, max_pool_oracle, pooled_size

FORWARD_DTYPES = [d for d in ALL_DTYPES if np.dtype(d) != np.float64]  # no FLOAT64 at any level
GRAD_DTYPES = [np.float32, np.float16]
E_INVALIDARG = 0x80070057


def dtype_id(d) -> str:
    return np.dtype(d).name


# -- desc builders --------------------------------------------------------------------------------


def make_forward(
    in_sizes=(1, 1, 3, 3),
    out_sizes=(1, 1, 2, 2),
    indices_sizes=None,
    in_type="FLOAT32",
    out_type="FLOAT32",
    indices_type="UINT32",
    with_indices=True,
    strides=(1, 1),
    window=(2, 2),
    start=(0, 0),
    end=(0, 0),
    dilations=(1, 1),
    indices_kw=None,
) -> MaxPooling2Desc:
    indices = None
    if with_indices:
        indices = TensorDesc(
            data_type=indices_type,
            sizes=out_sizes if indices_sizes is None else indices_sizes,
            **(indices_kw or {}),
        )
    return MaxPooling2Desc(
        input_tensor=TensorDesc(data_type=in_type, sizes=in_sizes),
        output_tensor=TensorDesc(data_type=out_type, sizes=out_sizes),
        output_indices_tensor=indices,
        strides=strides,
        window_size=window,
        start_padding=start,
        end_padding=end,
        dilations=dilations,
    )


def make_grad(
    in_sizes=(1, 1, 3, 3),
    dy_sizes=(1, 1, 2, 2),
    dx_sizes=None,
    in_type="FLOAT32",
    dy_type="FLOAT32",
    dx_type="FLOAT32",
    strides=(1, 1),
    window=(2, 2),
    start=(0, 0),
    end=(0, 0),
    dilations=(1, 1),
) -> MaxPoolingGradDesc:
    return MaxPoolingGradDesc(
        input_tensor=TensorDesc(data_type=in_type, sizes=in_sizes),
        input_gradient_tensor=TensorDesc(data_type=dy_type, sizes=dy_sizes),
        output_gradient_tensor=TensorDesc(data_type=dx_type, sizes=in_sizes if dx_sizes is None else dx_sizes),
        strides=strides,
        window_size=window,
        start_padding=start,
        end_padding=end,
        dilations=dilations,
    )


# -- validation: each rule, one valid and one invalid desc ------------------------------------------

# name -> (valid kwargs, invalid kwargs, message regex of the invalid one)
FORWARD_RULES = {
    "array lengths": (
        dict(),
        dict(dilations=(1, 1, 1)),
        r"Dilations: must have DimensionCount \(2, the length of Strides\) elements; got 3",
    ),
    "DimensionCount is spatial": (
        dict(
            in_sizes=(1, 1, 3, 3, 3),
            out_sizes=(1, 1, 2, 2, 2),
            strides=(1,) * 3,
            window=(2,) * 3,
            start=(0,) * 3,
            end=(0,) * 3,
            dilations=(1,) * 3,
        ),
        dict(in_sizes=(1, 1, 3, 3, 3), out_sizes=(1, 1, 3, 2, 2)),
        r"DimensionCount: must equal InputTensor.DimensionCount - 2 \(3\).*; got 2",
    ),
    "same DataType": (dict(), dict(out_type="FLOAT16"), r"OutputTensor.DataType: must equal InputTensor.DataType"),
    "same DimensionCount": (
        dict(),
        dict(out_sizes=(1, 1, 2, 2, 1), with_indices=False),
        r"OutputTensor.DimensionCount: must equal InputTensor.DimensionCount \(4\); got 5",
    ),
    "indices DimensionCount": (
        dict(),
        dict(indices_sizes=(1, 1, 1, 2, 2)),
        r"OutputIndicesTensor.DimensionCount: must equal InputTensor.DimensionCount \(4\); got 5",
    ),
    "indices Sizes": (
        dict(),
        dict(indices_sizes=(1, 1, 2, 1)),
        r"OutputIndicesTensor.Sizes: must equal OutputTensor.Sizes \(\(1, 1, 2, 2\)\)",
    ),
    "indices type": (
        dict(indices_type="UINT32"),
        dict(indices_type="INT32"),
        r"OutputIndicesTensor.DataType: must be one of UINT32, UINT64 at DML_FEATURE_LEVEL_6_4",
    ),
    "BatchCount copied": (
        dict(),
        dict(out_sizes=(2, 1, 2, 2)),
        r"OutputTensor.Sizes\[0\]: must equal InputTensor.Sizes\[0\]",
    ),
    "ChannelCount copied": (
        dict(),
        dict(out_sizes=(1, 3, 2, 2)),
        r"OutputTensor.Sizes\[1\]: must equal InputTensor.Sizes\[1\]",
    ),
    "tensor rank 4 to 5": (
        dict(),
        dict(in_sizes=(1, 3, 3), out_sizes=(1, 2, 2), strides=(1,), window=(2,), start=(0,), end=(0,), dilations=(1,)),
        r"InputTensor.DimensionCount: must be 4 to 5 at DML_FEATURE_LEVEL_6_4; got 3",
    ),
    "no FLOAT64": (
        dict(in_type="INT64", out_type="INT64"),
        dict(in_type="FLOAT64", out_type="FLOAT64"),
        r"InputTensor.DataType: must be one of .* at DML_FEATURE_LEVEL_6_4; got DML_TENSOR_DATA_TYPE_FLOAT64",
    ),
    "indices output may not broadcast": (
        dict(indices_kw=dict(strides=(4, 4, 2, 1))),
        dict(indices_kw=dict(strides=(4, 4, 0, 1))),
        r"OutputIndicesTensor.Strides\[2\]: output tensors may not broadcast",
    ),
    "indices not OWNED_BY_DML": (
        dict(),
        dict(indices_kw=dict(flags="OWNED_BY_DML")),
        r"OutputIndicesTensor.Flags: .*only valid on inputs",
    ),
}


@pytest.mark.parametrize("rule", FORWARD_RULES, ids=str)
def test_forward_rule(rule: str) -> None:
    valid, invalid, message = FORWARD_RULES[rule]
    make_forward(**valid).validate()
    with pytest.raises(InvalidDescError, match=message) as info:
        make_forward(**invalid).validate()
    assert info.value.hresult == E_INVALIDARG
    assert str(info.value).startswith("DML_MAX_POOLING2_OPERATOR_DESC.")


GRAD_RULES = {
    "array lengths": (
        dict(),
        dict(start=(0,)),
        r"StartPadding: must have DimensionCount \(2, the length of Strides\) elements; got 1",
    ),
    "DimensionCount is spatial": (
        dict(
            in_sizes=(1, 1, 3, 3, 3),
            dy_sizes=(1, 1, 2, 2, 2),
            strides=(1,) * 3,
            window=(2,) * 3,
            start=(0,) * 3,
            end=(0,) * 3,
            dilations=(1,) * 3,
        ),
        dict(in_sizes=(1, 1, 3, 3, 3), dy_sizes=(1, 1, 3, 2, 2)),
        r"DimensionCount: must equal InputTensor.DimensionCount - 2 \(3\)",
    ),
    "same DataType (InputGradient)": (
        dict(in_type="FLOAT16", dy_type="FLOAT16", dx_type="FLOAT16"),
        dict(dy_type="FLOAT16"),
        r"InputGradientTensor.DataType: must equal InputTensor.DataType",
    ),
    "same DataType (OutputGradient)": (
        dict(),
        dict(dx_type="FLOAT16"),
        r"OutputGradientTensor.DataType: must equal InputTensor.DataType",
    ),
    "same DimensionCount": (
        dict(),
        dict(dy_sizes=(1, 1, 1, 2, 2)),
        r"InputGradientTensor.DimensionCount: must equal InputTensor.DimensionCount \(4\); got 5",
    ),
    "InputTensor and OutputGradient Sizes": (
        dict(),
        dict(dx_sizes=(1, 1, 3, 4)),
        r"OutputGradientTensor.Sizes: must equal InputTensor.Sizes \(\(1, 1, 3, 3\)\)",
    ),
    "InputGradient spatial sizes: the floor size only (E27)": (
        dict(in_sizes=(1, 1, 5, 5), dy_sizes=(1, 1, 2, 2), strides=(2, 2)),  # floor size
        dict(in_sizes=(1, 1, 5, 5), dy_sizes=(1, 1, 3, 2), strides=(2, 2)),  # ceil size: DirectML rejects it
        r"InputGradientTensor.Sizes\[2\]: must be .* = 2 \(1 when .*\); got 3",
    ),
    "InputGradient spatial sizes: 1 when the window is larger than the input (E27)": (
        dict(dilations=(3, 2), dy_sizes=(1, 1, 1, 1)),
        dict(dilations=(3, 2), dy_sizes=(1, 1, 2, 1)),
        r"InputGradientTensor.Sizes\[2\]: must be .* = 1 \(1 when .*\); got 2",
    ),
    "InputGradient BatchCount": (
        dict(),
        dict(dy_sizes=(2, 1, 2, 2)),
        r"InputGradientTensor.Sizes\[0\]: must equal InputTensor.Sizes\[0\]",
    ),
    "InputGradient ChannelCount": (
        dict(),
        dict(dy_sizes=(1, 2, 2, 2)),
        r"InputGradientTensor.Sizes\[1\]: must equal InputTensor.Sizes\[1\]",
    ),
    "stride >= 1": (dict(), dict(strides=(1, 0)), r"Strides\[1\]: must be >= 1; got 0"),
    "window >= 1": (dict(), dict(window=(0, 2)), r"WindowSize\[0\]: must be >= 1; got 0"),
    "dilation >= 1": (dict(), dict(dilations=(0, 1)), r"Dilations\[0\]: must be >= 1"),
    "float types only": (
        dict(in_type="FLOAT16", dy_type="FLOAT16", dx_type="FLOAT16"),
        dict(in_type="INT8", dy_type="INT8", dx_type="INT8"),
        r"InputTensor.DataType: must be one of FLOAT16, FLOAT32 at DML_FEATURE_LEVEL_6_4; got DML_TENSOR_DATA_TYPE_INT8",
    ),
}


# Descs that dmlops's old rulings 7 and 8 rejected and DirectML 1.15.4's CreateOperator accepts
# (measured on the directml backend; erratum E27): any MAX_POOLING2 output size, windows larger
# than the padded input, windows of only padding.
ACCEPTED_BY_DIRECTML = {
    "forward: output larger than the ceil size": ("forward", dict(in_sizes=(1, 1, 5, 5), out_sizes=(1, 1, 9, 2), strides=(2, 2))),
    "forward: output smaller than the floor size": ("forward", dict(in_sizes=(1, 1, 4, 4), out_sizes=(1, 1, 2, 3))),
    "forward: window larger than the padded input": ("forward", dict(window=(3, 1), dilations=(2, 1), start=(1, 0), out_sizes=(1, 1, 1, 3))),
    "forward: a window of only start padding": ("forward", dict(start=(2, 0), out_sizes=(1, 1, 4, 2))),
    "forward: windows skipping the input by dilation": ("forward", dict(in_sizes=(1, 1, 1, 3), out_sizes=(1, 1, 1, 2), window=(2, 2), dilations=(3, 1), start=(1, 0), end=(2, 0))),
    "forward: Strides 0": ("forward", dict(strides=(0, 1))),
    "forward: WindowSize 0": ("forward", dict(window=(1, 0), out_sizes=(1, 1, 3, 4))),
    "forward: Dilations 0": ("forward", dict(dilations=(1, 0))),
    "forward: all three 0": ("forward", dict(strides=(0, 0), window=(0, 0), dilations=(0, 0))),
    "grad: a window of only end padding": ("grad", dict(end=(0, 2), dy_sizes=(1, 1, 2, 4))),
    "grad: window larger than the padded input": ("grad", dict(dilations=(3, 2), dy_sizes=(1, 1, 1, 1))),
}  # fmt: skip


@pytest.mark.parametrize("case", ACCEPTED_BY_DIRECTML, ids=str)
def test_descs_directml_accepts_are_valid(case: str) -> None:
    kind, kwargs = ACCEPTED_BY_DIRECTML[case]
    (make_forward if kind == "forward" else make_grad)(**kwargs).validate()


@pytest.mark.parametrize("rule", GRAD_RULES, ids=str)
def test_grad_rule(rule: str) -> None:
    valid, invalid, message = GRAD_RULES[rule]
    make_grad(**valid).validate()
    with pytest.raises(InvalidDescError, match=message) as info:
        make_grad(**invalid).validate()
    assert info.value.hresult == E_INVALIDARG
    assert str(info.value).startswith("DML_MAX_POOLING_GRAD_OPERATOR_DESC.")


# -- feature levels -------------------------------------------------------------------------------


def test_forward_feature_levels() -> None:
    with pytest.raises(InvalidDescError, match=r"introduced in DML_FEATURE_LEVEL_2_1; not available at .*2_0"):
        make_forward().validate("2_0")
    make_forward().validate("2_1")
    u8 = make_forward(in_type="UINT8", out_type="UINT8")
    with pytest.raises(InvalidDescError, match=r"InputTensor.DataType: must be one of FLOAT16, FLOAT32 at .*2_1"):
        u8.validate("2_1")
    u8.validate("3_0")
    i32 = make_forward(in_type="INT32", out_type="INT32")
    with pytest.raises(InvalidDescError, match=r"InputTensor.DataType: .* at DML_FEATURE_LEVEL_4_1; got .*INT32"):
        i32.validate("4_1")
    i32.validate("5_0")
    u64 = make_forward(indices_type="UINT64")
    with pytest.raises(InvalidDescError, match=r"OutputIndicesTensor.DataType: must be one of UINT32 at .*4_1"):
        u64.validate("4_1")
    u64.validate("5_0")
    # 5-D from the start, up to 5 D at every level
    five = make_forward(in_sizes=(1, 1, 2, 3, 3), out_sizes=(1, 1, 1, 2, 2), strides=(1,) * 3, window=(2,) * 3,
                        start=(0,) * 3, end=(0,) * 3, dilations=(1,) * 3)  # fmt: skip
    five.validate("2_1")


def test_grad_feature_levels() -> None:
    with pytest.raises(InvalidDescError, match=r"introduced in DML_FEATURE_LEVEL_3_0; not available at .*2_1"):
        make_grad().validate("2_1")
    make_grad().validate("3_0")
    five = make_grad(in_sizes=(1, 1, 2, 3, 3), dy_sizes=(1, 1, 1, 2, 2), strides=(1,) * 3, window=(2,) * 3,
                     start=(0,) * 3, end=(0,) * 3, dilations=(1,) * 3)  # fmt: skip
    with pytest.raises(
        InvalidDescError, match=r"InputTensor.DimensionCount: must be 4 at DML_FEATURE_LEVEL_3_1; got 5"
    ):
        five.validate("3_1")
    five.validate("4_0")


# -- DxDispatch JSON ------------------------------------------------------------------------------


def test_json_round_trip_and_counts() -> None:
    desc = make_forward()
    data = desc.to_dml_dict()
    assert data["DimensionCount"] == 2
    assert list(data)[:4] == ["InputTensor", "OutputTensor", "OutputIndicesTensor", "DimensionCount"]
    assert dmlops.desc_from_json("DML_OPERATOR_MAX_POOLING2", data) == desc
    no_indices = make_forward(with_indices=False)
    assert "OutputIndicesTensor" not in no_indices.to_dml_dict()
    assert (
        dmlops.desc_from_json("MAX_POOLING2", {**no_indices.to_dml_dict(), "OutputIndicesTensor": None}) == no_indices
    )
    grad = make_grad()
    assert MaxPoolingGradDesc.dml_member_names() == (
        "InputTensor", "InputGradientTensor", "OutputGradientTensor", "DimensionCount",
        "Strides", "WindowSize", "StartPadding", "EndPadding", "Dilations",
    )  # fmt: skip
    assert dmlops.desc_from_json("MAX_POOLING_GRAD", grad.to_dml_dict()) == grad
    with pytest.raises(DescParseError, match=r"DimensionCount is 3 but 'Strides' has 2 elements"):
        dmlops.desc_from_json("MAX_POOLING_GRAD", {**grad.to_dml_dict(), "DimensionCount": 3})


# -- values: random geometries vs the loop oracle -----------------------------------------------


def has_empty_window(n, out, window, stride, start, dilation) -> bool:
    """Brute force: some output position whose window reads only padding."""
    return any(all(not 0 <= o * stride + k * dilation - start < n for k in range(window)) for o in range(out))


def random_geometry(rng: np.random.RandomState, rank: int):
    """(in_sizes, out_sizes, window, strides, start, end, dilations, ceil_mode) of a valid desc."""
    while True:
        ceil_mode = bool(rng.randint(2))  # one mode for every axis, as the functional layer takes it
        spatial, outs, params = [], [], []
        for _ in range(rank):
            n = int(rng.randint(1, 7 if rank == 2 else 5))
            w, d, s = int(rng.randint(1, 4)), int(rng.randint(1, 3)), int(rng.randint(1, 4))
            p0, p1 = int(rng.randint(0, 3)), int(rng.randint(0, 3))
            eff = (w - 1) * d + 1
            if eff > n + p0 + p1:
                break
            out = pooled_size(n, w, s, p0, p1, d, ceil_mode)
            if has_empty_window(n, out, w, s, p0, d):
                break
            spatial.append(n), outs.append(out), params.append((w, s, p0, p1, d))
        else:
            nc = (int(rng.randint(1, 3)), int(rng.randint(1, 3)))
            window, strides, start, end, dilations = (tuple(v) for v in zip(*params))
            return (*nc, *spatial), (*nc, *outs), window, strides, start, end, dilations, ceil_mode


def tie_heavy(rng: np.random.RandomState, shape, dtype) -> np.ndarray:
    """Integer values in {0, 1, 2}: ties in almost every window."""
    return rng.randint(0, 3, size=shape).astype(dtype)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rank", [2, 3])
@pytest.mark.parametrize("dtype", FORWARD_DTYPES, ids=dtype_id)
def test_forward_matches_loop_oracle(backend: str, dtype, rank: int, seed: int) -> None:
    rng = np.random.RandomState(seed * 10 + rank)
    in_sizes, out_sizes, window, strides, start, end, dilations, ceil_mode = random_geometry(rng, rank)
    x = tie_heavy(rng, in_sizes, dtype) if seed % 2 else random_array(rng, in_sizes, dtype)
    index_dtype = np.uint64 if seed == 3 else np.uint32
    y, idx = dmlops.max_pooling2(
        x, window, strides=strides, start_padding=start, end_padding=end, dilations=dilations,
        return_indices=True, indices_dtype=index_dtype, ceil_mode=ceil_mode, backend=backend,
    )  # fmt: skip
    want_y, want_idx, _ = max_pool_oracle(x, window, strides, start, end, dilations, out_sizes[2:])
    assert_close(y, want_y, exact=True)
    assert_close(idx, want_idx.astype(index_dtype), exact=True)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rank", [2, 3])
@pytest.mark.parametrize("dtype", GRAD_DTYPES, ids=dtype_id)
def test_grad_matches_loop_oracle(backend: str, dtype, rank: int, seed: int) -> None:
    rng = np.random.RandomState(100 + seed * 10 + rank)
    in_sizes, out_sizes, window, strides, start, end, dilations, _ = random_geometry(rng, rank)
    # MAX_POOLING_GRAD takes the floor size only (erratum E27)
    out_sizes = (
        *in_sizes[:2],
        *(pooled_size(n, *p, False) for n, *p in zip(in_sizes[2:], window, strides, start, end, dilations)),
    )
    x = tie_heavy(rng, in_sizes, dtype) if seed % 2 == 0 else random_array(rng, in_sizes, dtype)
    dy = rng.uniform(-2, 2, size=out_sizes).astype(dtype)
    dx = dmlops.max_pooling_grad(
        x, dy, window, strides=strides, start_padding=start, end_padding=end, dilations=dilations,
        backend=backend, feature_level="4_0",
    )  # fmt: skip
    assert_close(dx, max_pool_grad_oracle(x, dy, window, strides, start, end, dilations).astype(dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64],
                         ids=dtype_id)  # fmt: skip
def test_integer_extremes_are_bit_exact(backend: str, dtype) -> None:
    info = np.iinfo(dtype)
    x = np.array([info.min, info.max, info.max - 1, info.min + 1, 0, info.max, 1, info.min], dtype=dtype)
    x = x.reshape(1, 2, 2, 2)
    y, idx = dmlops.max_pooling2(x, [1, 2], return_indices=True, backend=backend)
    assert_close(y, np.array([info.max, info.max - 1, info.max, 1], dtype=dtype).reshape(1, 2, 2, 1), exact=True)
    assert_close(idx, np.array([1, 2, 5, 6], dtype=np.uint32).reshape(1, 2, 2, 1), exact=True)


# -- adjointness (hypothesis) ---------------------------------------------------------------------


@st.composite
def pooling_cases(draw):
    rank = draw(st.sampled_from([2, 3]))
    ceil_mode = False  # MAX_POOLING_GRAD takes the floor size only (erratum E27)
    spatial, outs, params = [], [], []
    for _ in range(rank):
        n = draw(st.integers(1, 6 if rank == 2 else 4))
        w, s, d = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
        p0, p1 = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        assume((w - 1) * d + 1 <= n + p0 + p1)
        out = pooled_size(n, w, s, p0, p1, d, ceil_mode)
        assume(not has_empty_window(n, out, w, s, p0, d))
        spatial.append(n), outs.append(out), params.append((w, s, p0, p1, d))
    nc = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    window, strides, start, end, dilations = (tuple(v) for v in zip(*params))
    seed = draw(st.integers(0, 2**31 - 1))
    return (*nc, *spatial), (*nc, *outs), window, strides, start, end, dilations, ceil_mode, seed


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(case=pooling_cases())
def test_grad_is_adjoint_of_forward(backend: str, case) -> None:
    # <MAX_POOLING2(x), g> = <x, MAX_POOLING_GRAD(x, g)>, in float64. Small integer values make
    # every float32 sum exact, so ties (many, with values in {0, 1, 2}) cannot blur the identity.
    in_sizes, out_sizes, window, strides, start, end, dilations, ceil_mode, seed = case
    rng = np.random.RandomState(seed)
    x = tie_heavy(rng, in_sizes, np.float32)
    g = rng.randint(-8, 9, size=out_sizes).astype(np.float32)
    kw = dict(strides=strides, start_padding=start, end_padding=end, dilations=dilations, backend=backend)
    y = dmlops.max_pooling2(x, window, ceil_mode=ceil_mode, **kw)
    dx = dmlops.max_pooling_grad(x, g, window, **kw)
    y64, dx64 = np.asarray(y, dtype=np.float64), np.asarray(dx, dtype=np.float64)
    assert np.vdot(y64, g.astype(np.float64)) == np.vdot(x.astype(np.float64), dx64)
    # Every window has an in-bounds maximum, so the gradient is conserved.
    assert dx64.sum() == g.astype(np.float64).sum()


# -- zero Strides, WindowSize, Dilations (MAX_POOLING2 only) ----------------------------------------

# x of the directml probes (tests/directml/test_directml_findings.py::test_max_pooling2_zero_members):
# [[0 7 14 5] [12 3 10 1] [8 15 6 13] [4 11 2 9]]
ZERO_X = (np.arange(16, dtype=np.float32) * 7 % 16).reshape(1, 1, 4, 4)
RAMP_3X3 = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)


def _pool(x, out_hw, strides, window, dilations=(1, 1), start=(0, 0), backend="numpy"):
    desc = make_forward(
        in_sizes=x.shape, out_sizes=(*x.shape[:2], *out_hw), strides=strides, window=window, dilations=dilations,
        start=start,
    )  # fmt: skip
    got = dmlops.execute(desc, {"InputTensor": x}, backend=backend)
    return to_list(got["OutputTensor"][0, 0]), to_list(got["OutputIndicesTensor"][0, 0])


def test_zero_strides_windows_dilations(backend: str) -> None:
    # Values measured on DirectML 1.15.4 (PoolingWindow.scanned). Dilations {0, 1}: the two rows of
    # a 2x2 window read the same row, so the 1x2 windows' maxima.
    low = float(np.finfo(np.float32).min)
    y, i = _pool(ZERO_X, (3, 3), (1, 1), (2, 2), dilations=(0, 1), backend=backend)
    assert y == [[7, 14, 14], [12, 10, 10], [15, 15, 13]] and i == [[1, 2, 2], [4, 6, 6], [9, 9, 11]]
    # Strides {0, 1}: every output row reads the first row of windows.
    y, i = _pool(ZERO_X, (3, 3), (0, 1), (2, 2), backend=backend)
    assert y == [[12, 14, 14]] * 3 and i == [[4, 2, 2]] * 3
    # WindowSize {0, 2}: empty windows, as windows of only padding: -FLT_MAX at index 0.
    y, i = _pool(ZERO_X, (3, 3), (1, 1), (0, 2), backend=backend)
    assert y == [[low] * 3] * 3 and i == [[0] * 3] * 3
    # A zero Dilation on W makes the H window read only its first element: a 2x1 window is the identity.
    y, i = _pool(RAMP_3X3, (3, 3), (1, 1), (2, 1), dilations=(1, 0), backend=backend)
    assert y == to_list(RAMP_3X3[0, 0]) and i == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    y, i = _pool(RAMP_3X3, (3, 3), (1, 1), (2, 2), dilations=(1, 0), start=(1, 0), backend=backend)
    assert y == [[low] * 3, [1, 2, 3], [4, 5, 6]] and i == [[0, 0, 0], [0, 1, 2], [3, 4, 5]]
    # WindowSize 0 with Dilation 0 reads the one coordinate; with Dilation 1 nothing.
    y, i = _pool(RAMP_3X3, (3, 3), (1, 1), (0, 1), dilations=(0, 1), backend=backend)
    assert y == to_list(RAMP_3X3[0, 0])
    y, i = _pool(RAMP_3X3, (3, 3), (1, 1), (0, 1), dilations=(1, 0), backend=backend)
    assert y == [[low] * 3] * 3 and i == [[0] * 3] * 3


def test_scanned_window() -> None:
    from dmlops.descs.pooling import PoolingWindow

    w = PoolingWindow((1, 1, 1), (2, 3, 0), (0, 0, 0), (0, 0, 0), (1, 1, 1))
    assert w.scanned() is w
    w = PoolingWindow((1, 2, 1), (2, 0, 3), (1, 0, 0), (0, 0, 0), (2, 0, 1))
    # axis 1 (Dilation 0) reads one coordinate; axis 0, before it, only its first element; axis 2 unchanged
    assert w.scanned() == PoolingWindow((1, 2, 1), (1, 1, 3), (1, 0, 0), (0, 0, 0), (2, 1, 1))


@pytest.mark.parametrize("backend", backend_params("cpu"), indirect=True)
@pytest.mark.parametrize(
    ("stride", "window", "dilation", "pad"), [(2, 3, 1, 1), (1, 2, 1, 0), (3, 3, 2, 2), (2, 1, 1, 0)]
)
def test_cpu_interior_row_scan_matches_the_reference(
    backend: str, stride: int, window: int, dilation: int, pad: int
) -> None:
    """The cpu forward's row-vectorised scan of interior windows (many interior columns a row):
    ties, NaN, -inf and the lowest value everywhere, values and indices exactly as the reference."""
    from dmlops.cpu import pooling

    rng = np.random.default_rng(stride * 100 + window * 10 + dilation)
    for dtype in ("FLOAT32", "FLOAT16", "INT8"):
        np_type = np.dtype(dtype.lower())
        x = rng.integers(-3, 4, (2, 3, 9, 40)).astype(np_type)  # small integers: many ties
        if np_type.kind == "f":
            flat = x.reshape(-1)
            flat[rng.integers(0, flat.size, 60)] = np.nan
            flat[rng.integers(0, flat.size, 20)] = -np.inf
        x[0, 0, 2] = np.finfo(np_type).min if np_type.kind == "f" else np.iinfo(np_type).min  # a lowest row
        out_w = (40 + 2 * pad - dilation * (window - 1) - 1) // stride + 1
        out_h = (9 + 2 * pad - dilation * (window - 1) - 1) // stride + 1
        desc = make_forward(
            in_sizes=x.shape, out_sizes=(2, 3, out_h, out_w), in_type=dtype, out_type=dtype,
            strides=(stride, stride), window=(window, window), dilations=(dilation, dilation),
            start=(pad, pad), end=(pad, pad),
        )  # fmt: skip
        spans, _ = pooling._params(desc.window.scanned(), x.shape[2:], (out_h, out_w))
        ow_a, ow_b = pooling._interior_columns.py_func(spans, out_w, window)
        assert ow_b - ow_a >= 8, "the case must give the row scan several interior columns"
        want = dmlops.execute(desc, {"InputTensor": x})
        got = dmlops.execute(desc, {"InputTensor": x}, backend=backend)
        for member in want:
            assert_close(got[member], want[member], exact=True)


@pytest.mark.parametrize("backend", backend_params("cpu"), indirect=True)
def test_a_stride_wider_than_the_row(backend: str) -> None:
    # the row scan is left out (its phases would be stride-sized: 2^32 - 1 here), the scalar path serves
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 1, 8)
    desc = make_forward(in_sizes=x.shape, out_sizes=(1, 1, 1, 3), strides=(1, 2**32 - 1), window=(1, 2))
    want = dmlops.execute(desc, {"InputTensor": x})
    got = dmlops.execute(desc, {"InputTensor": x}, backend=backend)
    for member in want:
        assert_close(got[member], want[member], exact=True)


@pytest.mark.parametrize("seed", range(4))
def test_zero_members_match_reference_on_every_backend(backend: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(25):
        k = int(rng.integers(2, 4))
        nc = (1, int(rng.integers(1, 3)))
        x = rng.permutation(int(np.prod(nc) * 27)).astype(np.float32)[: int(np.prod(nc)) * 3**k]
        x = x.reshape(*nc, *(3,) * k)
        arrays = {name: tuple(int(v) for v in rng.integers(0, 3, size=k)) for name in ("s", "w", "d", "p", "e")}
        out = (*nc, *(int(v) for v in rng.integers(1, 5, size=k)))
        desc = make_forward(
            in_sizes=x.shape, out_sizes=out, strides=arrays["s"], window=arrays["w"], dilations=arrays["d"],
            start=arrays["p"], end=arrays["e"],
        )  # fmt: skip
        want = dmlops.execute(desc, {"InputTensor": x})
        got = dmlops.execute(desc, {"InputTensor": x}, backend=backend)
        for member in want:
            assert_close(got[member], want[member], exact=True)


# -- ties, NaN, -inf --------------------------------------------------------------------------------


def test_all_equal_windows_pick_lowest_index(backend: str) -> None:
    # seed 002: "the element with the lowest logical element index is chosen"
    x = np.ones((1, 2, 4, 4), dtype=np.float32)
    _, idx = dmlops.max_pooling2(x, [2, 2], strides=[2, 2], return_indices=True, backend=backend)
    assert_close(idx, np.array([[0, 2], [8, 10]], dtype=np.uint32)[None, None] + np.array([0, 16], dtype=np.uint32)[None, :, None, None], exact=True)  # fmt: skip
    # With padding and dilation the first *in-bounds* element of the row-major scan wins.
    idx = dmlops.max_pooling2(
        x, [2, 2], start_padding=[1, 1], dilations=[2, 2], return_indices=True, backend=backend
    )[1]  # fmt: skip
    # out 3x3; window (o - 1 + 2k): o=0 reads {-1, 1} -> 1; o=1 reads {0, 2} -> 0; o=2 reads {1, 3} -> 1
    first = np.array([1, 0, 1])
    want = (first[:, None] * 4 + first[None, :]).astype(np.uint32)
    assert_close(idx[0, 0], want, exact=True)
    dx = dmlops.max_pooling_grad(x, np.ones((1, 2, 2, 2), dtype=np.float32), [2, 2], strides=[2, 2], backend=backend)
    assert_close(dx[0, 1], np.array([[1, 0, 1, 0], [0, 0, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]], dtype=np.float32))


def test_ties_lowest_index_in_overlapping_windows(backend: str) -> None:
    x = np.array([[2, 1, 2], [2, 2, 0], [1, 2, 2]], dtype=np.float16).reshape(1, 1, 3, 3)
    _, idx = dmlops.max_pooling2(x, [2, 2], return_indices=True, backend=backend)
    assert_close(idx[0, 0], np.array([[0, 2], [3, 4]], dtype=np.uint32), exact=True)
    dx = dmlops.max_pooling_grad(
        x, np.array([1, 2, 4, 8], dtype=np.float16).reshape(1, 1, 2, 2), [2, 2], backend=backend
    )
    assert_close(dx[0, 0], np.array([[1, 0, 2], [4, 8, 0], [0, 0, 0]], dtype=np.float16))


def test_nan_never_wins(backend: str) -> None:
    # DirectML 1.15.4 (erratum E26, overturning ruling 7): the running maximum starts at -FLT_MAX
    # and only a strictly greater element replaces it, so NaN never wins (PyTorch propagates it).
    nan, low = np.nan, np.finfo(np.float32).min
    x = np.array([[1, nan, 3, nan], [5, 0, nan, 9]], dtype=np.float32).reshape(1, 1, 2, 4)
    y, idx = dmlops.max_pooling2(x, [2, 4], return_indices=True, backend=backend)
    assert_close(y, np.full((1, 1, 1, 1), 9, dtype=np.float32), exact=True)
    assert_close(idx, np.array([7], dtype=np.uint32).reshape(1, 1, 1, 1), exact=True)
    y, idx = dmlops.max_pooling2(x, [1, 2], strides=[1, 2], return_indices=True, backend=backend)
    np.testing.assert_array_equal(to_list(idx[0, 0]), [[0, 2], [4, 7]])
    np.testing.assert_array_equal(to_list(y[0, 0]), [[1, 3], [5, 9]])
    # A window of only NaN: -FLT_MAX at its first element (DirectML: [NaN, NaN] -> -3.4028235e+38, index 0).
    only_nan = np.array([nan, nan, 2], dtype=np.float32).reshape(1, 1, 1, 3)
    y, idx = dmlops.max_pooling2(only_nan, [1, 2], return_indices=True, backend=backend)
    np.testing.assert_array_equal(to_list(y[0, 0, 0]), [low, 2])
    np.testing.assert_array_equal(to_list(idx[0, 0, 0]), [0, 2])
    dx = dmlops.max_pooling_grad(x, np.full((1, 1, 1, 1), 5.0, dtype=np.float32), [2, 4], backend=backend)
    want = np.zeros((1, 1, 2, 4), dtype=np.float32)
    want[0, 0, 1, 3] = 5
    assert_close(dx, want)
    # DirectML: windows [NaN, NaN] and [NaN, 5] with dy [1, 10] give dx [1, 0, 10].
    dx = dmlops.max_pooling_grad(only_nan[..., [0, 1, 2]] * np.float32([1, 1, 2.5]), np.float32([[[[1, 10]]]]),
                                 [1, 2], backend=backend)  # fmt: skip
    np.testing.assert_array_equal(to_list(dx[0, 0, 0]), [1, 0, 10])


def test_only_minus_inf_gives_lowest_at_first_in_bounds(backend: str) -> None:
    # DirectML: a window whose maximum is -inf outputs the lowest finite value (-FLT_MAX; for FLOAT16,
    # which this stack cannot run, dmlops takes -65504 by the same rule) at its first in-bounds element.
    x = np.full((1, 1, 3, 3), -np.inf, dtype=np.float16)
    y, idx = dmlops.max_pooling2(
        x, [3, 3], strides=[2, 2], start_padding=[1, 1], end_padding=[1, 1], return_indices=True, backend=backend
    )  # fmt: skip
    assert_close(y, np.full((1, 1, 2, 2), -65504, dtype=np.float16), exact=True)
    assert_close(idx[0, 0], np.array([[0, 1], [3, 4]], dtype=np.uint32), exact=True)
    dx = dmlops.max_pooling_grad(
        x, np.ones((1, 1, 2, 2), dtype=np.float16), [3, 3], strides=[2, 2], start_padding=[1, 1], end_padding=[1, 1],
        backend=backend,
    )  # fmt: skip
    assert_close(dx[0, 0], np.array([[1, 1, 0], [1, 1, 0], [0, 0, 0]], dtype=np.float16))
    y = dmlops.max_pooling2(np.float32([[[[5, -np.inf, -np.inf]]]]), [1, 2], backend=backend)
    np.testing.assert_array_equal(to_list(y[0, 0, 0]), [5, np.finfo(np.float32).min])


def test_padding_only_windows(backend: str) -> None:
    # DirectML: N=1, C=2, [[1, 2], [3, 4]] with window 1 and padding 1 + 1 (output width 4): windows of
    # only padding give -FLT_MAX at index 0 (the literal 0, in every plane); the grad drops them.
    low = np.finfo(np.float32).min
    x = np.float32([1, 2, 3, 4]).reshape(1, 2, 1, 2)
    y, idx = dmlops.max_pooling2(x, [1, 1], start_padding=[0, 1], end_padding=[0, 1], return_indices=True,
                                 backend=backend)  # fmt: skip
    np.testing.assert_array_equal(to_list(y), np.float32([[[[low, 1, 2, low]], [[low, 3, 4, low]]]]))
    np.testing.assert_array_equal(to_list(idx), [[[[0, 0, 1, 0]], [[0, 2, 3, 0]]]])
    dx = dmlops.max_pooling_grad(np.float32([[[[1, 2]]]]), np.float32([[[[1, 10, 100, 1000]]]]), [1, 1],
                                 start_padding=[0, 2], backend=backend)  # fmt: skip
    np.testing.assert_array_equal(to_list(dx[0, 0, 0]), [100, 1000])


def to_list(a):
    from conftest import to_numpy

    return to_numpy(a).tolist()


# -- strided and broadcast TensorDescs --------------------------------------------------------------


def test_strided_input_and_broadcast(backend: str) -> None:
    # An NHWC buffer described with NCHW sizes: indices stay logical (NCHW row-major).
    n, c, h, w = 2, 3, 4, 5
    rng = np.random.RandomState(7)
    logical = rng.randint(0, 3, size=(n, c, h, w)).astype(np.float32)
    nhwc = np.ascontiguousarray(logical.transpose(0, 2, 3, 1)).reshape(-1)
    tensor = TensorDesc(data_type="FLOAT32", sizes=(n, c, h, w), strides=(h * w * c, 1, w * c, c))
    geometry = dict(strides=(2, 2), window_size=(2, 3), start_padding=(1, 0), end_padding=(0, 1), dilations=(1, 1))
    out_sizes = (n, c, 3, 2)
    desc = MaxPooling2Desc(
        input_tensor=tensor,
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=out_sizes),
        output_indices_tensor=TensorDesc(data_type="UINT32", sizes=out_sizes),
        **geometry,
    )
    got = dmlops.execute(desc, {"InputTensor": nhwc}, backend=backend)
    want_y, want_idx, _ = max_pool_oracle(logical, (2, 3), (2, 2), (1, 0), (0, 1), (1, 1), out_sizes[2:])
    assert_close(got["OutputTensor"], want_y, exact=True)
    assert_close(got["OutputIndicesTensor"], want_idx.astype(np.uint32), exact=True)

    grad_sizes = (n, c, 2, 2)  # the grad takes the floor size only (erratum E27)
    dy = rng.randint(-3, 4, size=grad_sizes).astype(np.float32)
    grad = MaxPoolingGradDesc(
        input_tensor=tensor,
        input_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=grad_sizes),
        output_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=(n, c, h, w)),
        **geometry,
    )
    dx = dmlops.execute(grad, {"InputTensor": nhwc, "InputGradientTensor": dy}, backend=backend)
    want_dx = max_pool_grad_oracle(logical, dy, (2, 3), (2, 2), (1, 0), (0, 1), (1, 1)).astype(np.float32)
    assert_close(dx["OutputGradientTensor"], want_dx)

    # Broadcast: one row (stride 0 over N, C and H); every window ties along H.
    row = np.array([3, 1, 4, 1, 5], dtype=np.int16)
    bcast = TensorDesc(data_type="INT16", sizes=(2, 2, 3, 5), strides=(0, 0, 0, 1))
    desc = MaxPooling2Desc(
        input_tensor=bcast,
        output_tensor=TensorDesc(data_type="INT16", sizes=(2, 2, 2, 4)),
        output_indices_tensor=TensorDesc(data_type="UINT64", sizes=(2, 2, 2, 4)),
        strides=(1, 1), window_size=(2, 2), start_padding=(0, 0), end_padding=(0, 0), dilations=(1, 1),
    )  # fmt: skip
    got = dmlops.execute(desc, {"InputTensor": row}, backend=backend)
    assert_close(got["OutputTensor"], np.broadcast_to(np.array([3, 4, 4, 5], dtype=np.int16), (2, 2, 2, 4)).copy(), exact=True)  # fmt: skip
    base = np.array([0, 2, 2, 4], dtype=np.uint64)
    want_idx = base + 5 * np.arange(2, dtype=np.uint64)[:, None]  # first row of each window (ties)
    want_idx = want_idx + 15 * np.arange(4, dtype=np.uint64).reshape(2, 2, 1, 1)
    assert_close(got["OutputIndicesTensor"], want_idx, exact=True)

    bgrad = MaxPoolingGradDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(1, 1, 3, 5), strides=(0, 0, 0, 1)),
        input_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=(1, 1, 2, 4), strides=(0, 0, 0, 0)),
        output_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=(1, 1, 3, 5)),
        strides=(1, 1), window_size=(2, 2), start_padding=(0, 0), end_padding=(0, 0), dilations=(1, 1),
    )  # fmt: skip
    inputs = {"InputTensor": row.astype(np.float32), "InputGradientTensor": np.array([2.0], dtype=np.float32)}
    dx = dmlops.execute(bgrad, inputs, backend=backend)["OutputGradientTensor"]
    want = np.zeros((3, 5), dtype=np.float32)
    want[0] = [2, 0, 4, 0, 2]  # windows of row pair (0, 1) pick row 0; of (1, 2) pick row 1
    want[1] = [2, 0, 4, 0, 2]
    assert_close(dx, want.reshape(1, 1, 3, 5))


# -- functional layer -------------------------------------------------------------------------------


def test_seed_example_functional(backend: str) -> None:
    x = np.array([[1, 2, 3], [2, 4, 2], [5, 6, 7]], dtype=np.float32).reshape(1, 1, 3, 3)
    y, idx = dmlops.max_pooling2(x, [2, 2], return_indices=True, backend=backend, feature_level="2_1")
    assert_close(y[0, 0], np.array([[4, 4], [6, 7]], dtype=np.float32), exact=True)
    assert_close(idx[0, 0], np.array([[4, 4], [7, 8]], dtype=np.uint32), exact=True)
    dy = np.array([[1, 2], [4, 5]], dtype=np.float32).reshape(1, 1, 2, 2)
    dx = dmlops.max_pooling_grad(x, dy, [2, 2], backend=backend, feature_level="3_0")
    assert_close(dx[0, 0], np.array([[0, 0, 0], [0, 3, 0], [0, 4, 5]], dtype=np.float32), exact=True)


def test_ceil_mode_size_and_values(backend: str) -> None:
    # ONNX test_maxpool_2d_ceil: 4x4, kernel 3, stride 2, ceil_mode -> 2x2 [[11, 12], [15, 16]]
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    y = dmlops.max_pooling2(x, [3, 3], strides=[2, 2], ceil_mode=True, backend=backend)
    assert_close(y[0, 0], np.array([[11, 12], [15, 16]], dtype=np.float32), exact=True)
    assert dmlops.max_pooling2(x, [3, 3], strides=[2, 2], backend=backend).shape == (1, 1, 1, 1)
    # A ceil window that would start past the input is dropped per axis (PyTorch, ONNX):
    # 7 high, window 2, stride 2, padding 1: ceil 5 would start at row 7; 6 wide keeps its ceil window.
    x = np.arange(42, dtype=np.float32).reshape(1, 1, 7, 6)
    y = dmlops.max_pooling2(
        x, [2, 3], strides=[2, 2], start_padding=[1, 1], end_padding=[1, 1], ceil_mode=True, backend=backend
    )  # fmt: skip
    assert y.shape == (1, 1, 4, 4)
    assert_close(y[0, 0, :, 3], np.array([5, 17, 29, 41], dtype=np.float32), exact=True)


def test_functional_out_and_errors() -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    y_out = np.empty((1, 1, 2, 2), dtype=np.float32)
    i_out = np.empty((1, 1, 2, 2), dtype=np.uint64)
    y, idx = dmlops.max_pooling2(x, [2, 2], strides=[2, 2], return_indices=True, indices_dtype=np.uint64,
                                 out=(y_out, i_out))  # fmt: skip
    assert y is y_out and idx is i_out
    np.testing.assert_array_equal(idx[0, 0], [[5, 7], [13, 15]])
    with pytest.raises(dmlops.TensorMismatchError, match=r"out must be a tuple"):
        dmlops.max_pooling2(x, [2, 2], return_indices=True, out=y_out)
    with pytest.raises(dmlops.TensorMismatchError, match=r"indices_dtype"):
        dmlops.max_pooling2(x, [2, 2], return_indices=True, indices_dtype="not a dtype")
    with pytest.raises(InvalidDescError, match=r"OutputIndicesTensor.DataType: must be one of UINT32, UINT64"):
        dmlops.max_pooling2(x, [2, 2], return_indices=True, indices_dtype=np.float32)
    with pytest.raises(InvalidDescError, match=r"OutputIndicesTensor.DataType: must be one of UINT32 at .*4_0"):
        dmlops.max_pooling2(x, [2, 2], return_indices=True, indices_dtype=np.uint64, feature_level="4_0")
    with pytest.raises(InvalidDescError, match=r"DimensionCount: must equal InputTensor.DimensionCount - 2"):
        dmlops.max_pooling2(x, [2, 2, 2])
    # A zero stride is valid for MAX_POOLING2 (DirectML accepts it), not for MAX_POOLING_GRAD.
    dmlops.max_pooling2(x, [2, 2], strides=[0, 1])
    with pytest.raises(InvalidDescError, match=r"Strides\[0\]: must be >= 1"):
        dmlops.max_pooling_grad(x, np.zeros((1, 1, 3, 3), dtype=np.float32), [2, 2], strides=[0, 1])
    # A window wider than the input is valid (DirectML accepts it, erratum E27): one window per row pair.
    wide = dmlops.max_pooling2(x, [2, 5])
    assert wide.shape == (1, 1, x.shape[2] - 1, 1)
    np.testing.assert_array_equal(wide[0, 0, :, 0], [x[0, 0, i : i + 2].max() for i in range(x.shape[2] - 1)])
    with pytest.raises(InvalidDescError, match=r"InputGradientTensor.Sizes\[2\]"):
        dmlops.max_pooling_grad(x, np.zeros((1, 1, 2, 2), dtype=np.float32), [2, 2])
    dx_out = np.full((1, 1, 4, 4), 9.0, dtype=np.float32)
    dx = dmlops.max_pooling_grad(x, np.ones((1, 1, 2, 2), dtype=np.float32), [2, 2], strides=[2, 2], out=dx_out)
    assert dx is dx_out and dx.sum() == 4  # untouched elements are written 0


# -- torch as a second oracle (oracles.md §3.2) ---------------------------------------------------


@pytest.mark.oracles
@pytest.mark.parametrize(
    "config", list(itertools.product([(2, 2), (3, 3), (2, 3)], [1, 2], [0, 1], [1, 2], [False, True]))
)
def test_matches_torch_cpu(config) -> None:
    torch = pytest.importorskip("torch")
    kernel, stride, pad, dilation, ceil_mode = config
    if pad * 2 > (min(kernel) - 1) * dilation + 1:
        pytest.skip("torch: pad must be at most half the effective kernel")
    rng = np.random.RandomState(sum(kernel) * 100 + stride * 10 + pad + dilation)
    x = rng.randint(0, 3, size=(2, 2, 7, 6)).astype(np.float32)
    xt = torch.from_numpy(x).requires_grad_(True)
    yt, it = torch.nn.functional.max_pool2d(
        xt, kernel, stride=stride, padding=pad, dilation=dilation, ceil_mode=ceil_mode, return_indices=True
    )
    dy = rng.randint(-3, 4, size=tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.from_numpy(dy))
    geometry = dict(strides=[stride] * 2, start_padding=[pad] * 2, end_padding=[pad] * 2, dilations=[dilation] * 2)
    y, idx = dmlops.max_pooling2(x, kernel, return_indices=True, ceil_mode=ceil_mode, **geometry)
    assert y.shape == tuple(yt.shape)
    plane = x.shape[2] * x.shape[3]
    torch_idx = it.numpy() + plane * np.arange(4).reshape(2, 2, 1, 1)  # torch indexes per (N, C) plane
    np.testing.assert_array_equal(y, yt.detach().numpy())
    np.testing.assert_array_equal(idx, torch_idx)
    floor_shape = dmlops.max_pooling2(x, kernel, **geometry).shape
    if tuple(yt.shape) == floor_shape:  # DirectML's grad takes the floor size only (erratum E27)
        np.testing.assert_array_equal(dmlops.max_pooling_grad(x, dy, kernel, **geometry), xt.grad.numpy())
    else:
        with pytest.raises(InvalidDescError, match=r"InputGradientTensor.Sizes"):
            dmlops.max_pooling_grad(x, dy, kernel, **geometry)


def test_output_size_helper_matches_formula() -> None:
    # window_size 3, dilation 2 -> effective 5; (7 + 1 + 0 - 5) / 2 = 1.5 -> floor 2, ceil 3
    window = make_forward(strides=(2, 2), window=(3, 3), start=(1, 1), end=(0, 0), dilations=(2, 2)).window
    assert window.effective_window() == (5, 5)
    assert window.output_sizes((7, 7)) == (2, 2)
    assert window.output_sizes((7, 7), ceil_mode=True) == (3, 3)
    assert math.isclose(pooled_size(7, 3, 2, 1, 0, 2, True), 3)
