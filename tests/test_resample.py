"""RESAMPLE2 and RESAMPLE_GRAD1: validation rules, loop oracle, adjoint, ties, clamping, torch parity."""

from __future__ import annotations

import importlib.util
import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlops
from conftest import TOLERANCES, assert_close
from dmlops import DescParseError, InvalidDescError, TensorDesc
from dmlops.descs.resampling import Resample2Desc, ResampleGrad1Desc
from oracles.resample import resample2_oracle, resample_grad1_oracle, round_to

HAS_TORCH = importlib.util.find_spec("torch") is not None
NEAREST = "NEAREST_NEIGHBOR"


def make_forward(
    in_sizes=(2, 2),
    out_sizes=(1, 3),
    in_type="FLOAT32",
    out_type=None,
    mode=NEAREST,
    direction="DECREASING",
    scales=(0.5, 1.5),
    ipo=(0.5, 0.5),
    opo=(-0.5, -0.5),
    in_strides=None,
) -> Resample2Desc:
    return Resample2Desc(
        input_tensor=TensorDesc(data_type=in_type, sizes=in_sizes, strides=in_strides),
        output_tensor=TensorDesc(data_type=out_type or in_type, sizes=out_sizes),
        interpolation_mode=mode,
        rounding_direction=direction,
        scales=scales,
        input_pixel_offsets=ipo,
        output_pixel_offsets=opo,
    )


def make_grad(
    in_sizes=(2, 2),
    out_sizes=(1, 3),
    in_type="FLOAT32",
    out_type=None,
    mode=NEAREST,
    direction="DECREASING",
    scales=(0.5, 1.5),
    ipo=(0.5, 0.5),
    opo=(-0.5, -0.5),
    in_strides=None,
) -> ResampleGrad1Desc:
    """Same parameter names as make_forward: ``in_sizes`` is the *forward* input (OutputGradientTensor)."""
    return ResampleGrad1Desc(
        input_gradient_tensor=TensorDesc(data_type=in_type, sizes=out_sizes, strides=in_strides),
        output_gradient_tensor=TensorDesc(data_type=out_type or in_type, sizes=in_sizes),
        interpolation_mode=mode,
        rounding_direction=direction,
        scales=scales,
        input_pixel_offsets=ipo,
        output_pixel_offsets=opo,
    )


BUILDERS = {"RESAMPLE2": (make_forward, "InputTensor", "OutputTensor"),
            "RESAMPLE_GRAD1": (make_grad, "InputGradientTensor", "OutputGradientTensor")}  # fmt: skip


# -- validation: each rule, one valid and one invalid desc -------------------------------------

INVALID = {
    "data types differ": (dict(out_type="FLOAT16"), r"{second}.DataType: must equal {first}.DataType"),
    "dimension counts differ": (
        dict(in_sizes=(1, 2, 2)),
        r"\.DimensionCount: must equal {first}.DimensionCount",
    ),
    "DimensionCount vs tensors": (
        dict(scales=(0.5, 1.5, 1.0), ipo=(0.5, 0.5, 0.5), opo=(-0.5, -0.5, -0.5)),
        r"_OPERATOR_DESC.DimensionCount: must match {first}.DimensionCount \(2\); got 3",
    ),
    "array lengths differ": (
        dict(ipo=(0.5,)),
        r"InputPixelOffsets: must have DimensionCount \(2, the length of Scales",
    ),
    "scale zero": (
        dict(scales=(0.0, 1.5)),
        r"Scales\[0\]: must be >= FLT_EPSILON \(1.1920928955078125e-07, 2\^-23\) and not NaN; got 0.0",
    ),
    "scale negative": (
        dict(scales=(0.5, -1.5)),
        r"Scales\[1\]: must be >= FLT_EPSILON \(1.1920928955078125e-07, 2\^-23\) and not NaN; got -1.5",
    ),
    "scale nan": (
        dict(scales=(math.nan, 1.5)),
        r"Scales\[0\]: must be >= FLT_EPSILON \(1.1920928955078125e-07, 2\^-23\) and not NaN; got nan",
    ),
    "scale underflows float32": (
        dict(scales=(1e-50, 1.5)),
        r"Scales\[0\]: must be >= FLT_EPSILON \(1.1920928955078125e-07, 2\^-23\) and not NaN; got 0.0",
    ),
    "scale below FLT_EPSILON": (
        dict(scales=(1e-30, 1.5)),
        r"Scales\[0\]: must be >= FLT_EPSILON \(1.1920928955078125e-07, 2\^-23\) and not NaN; got 1.00000",
    ),
    "input offset nan": (
        dict(ipo=(0.5, math.nan)),
        r"InputPixelOffsets\[1\]: must not be NaN \(\+-inf is accepted\); got nan",
    ),
    "output offset nan": (
        dict(opo=(math.nan, -0.5)),
        r"OutputPixelOffsets\[0\]: must not be NaN \(\+-inf is accepted\); got nan",
    ),
    "unsupported data type": (
        dict(in_type="INT32"),
        r"{first}.DataType: must be one of .*; got DML_TENSOR_DATA_TYPE_INT32",
    ),
    "five dimensions": (
        dict(in_sizes=(1, 1, 1, 2, 2), out_sizes=(1, 1, 1, 1, 3), scales=(1,) * 5, ipo=(0.5,) * 5, opo=(-0.5,) * 5),
        r"{first}.DimensionCount: must be 1 to 4 at DML_FEATURE_LEVEL_6_4; got 5",
    ),
    "zero size": (dict(in_sizes=(2, 0)), r"Sizes\[1\]: sizes may not be 0"),
}


@pytest.mark.parametrize("op", BUILDERS)
@pytest.mark.parametrize("case", INVALID, ids=str)
def test_rule_rejects(op: str, case: str) -> None:
    make, first, second = BUILDERS[op]
    kwargs, message = INVALID[case]
    with pytest.raises(InvalidDescError, match=message.format(first=first, second=second)) as info:
        make(**kwargs).validate()
    assert info.value.hresult == 0x80070057
    assert str(info.value).startswith(f"DML_{op}_OPERATOR_DESC.")


@pytest.mark.parametrize("op", BUILDERS)
def test_valid_descs_pass_every_rule(op: str) -> None:
    make = BUILDERS[op][0]
    make().validate()
    make(in_type="FLOAT16").validate()
    make(mode="LINEAR", direction="INCREASING").validate()
    make(scales=(np.finfo(np.float32).max, 2.0**-23)).validate()  # ORT passes FLT_MAX; FLT_EPSILON is DirectML's least
    make(ipo=(-3.0, 0.0), opo=(0.0, 7.25)).validate()  # any finite offset
    make(ipo=(math.inf, 0.0), opo=(-math.inf, 0.5)).validate()  # and +-inf, as DirectML 1.15.4
    make(in_sizes=(5,), out_sizes=(2,), scales=(0.4,), ipo=(0.5,), opo=(-0.5,)).validate()  # 1-D
    make(in_sizes=(1, 2, 3, 4), out_sizes=(2, 2, 2, 2), scales=(2, 1, 0.5, 0.5), ipo=(0,) * 4, opo=(0,) * 4).validate()


@pytest.mark.parametrize("op", BUILDERS)
@pytest.mark.parametrize(
    "field, value, message",
    [
        ("mode", 2, r"InterpolationMode: 2 is not a recognized value for DML_INTERPOLATION_MODE"),
        ("mode", "CUBIC", r"InterpolationMode: 'CUBIC' is not a recognized value"),
        ("direction", 5, r"RoundingDirection: 5 is not a recognized value for DML_AXIS_DIRECTION"),
        ("direction", True, r"RoundingDirection: True is not a recognized value"),
    ],
)
def test_invalid_enums_rejected(op: str, field: str, value, message: str) -> None:
    with pytest.raises(InvalidDescError, match=message):
        BUILDERS[op][0](**{field: value})


@pytest.mark.parametrize("op", BUILDERS)
def test_enum_spellings_accepted(op: str) -> None:
    make = BUILDERS[op][0]
    desc = make(mode="DML_INTERPOLATION_MODE_LINEAR", direction=0)
    assert desc.interpolation_mode is dmlops.InterpolationMode.LINEAR
    assert desc.rounding_direction is dmlops.AxisDirection.INCREASING


@pytest.mark.parametrize("op", BUILDERS)
def test_json_round_trip_and_parse_errors(op: str) -> None:
    desc = BUILDERS[op][0]()
    data = desc.to_dml_dict()
    assert data["DimensionCount"] == 2
    assert data["InterpolationMode"] == "NEAREST_NEIGHBOR"
    assert dmlops.desc_from_json(op, data, require_counts=True) == desc
    with pytest.raises(DescParseError, match=r"DimensionCount is 3 but 'Scales' has 2 elements"):
        dmlops.desc_from_json(op, {**data, "DimensionCount": 3})
    with pytest.raises(DescParseError, match=r"'InterpolationMode'.*not a recognized value"):
        dmlops.desc_from_json(op, {**data, "InterpolationMode": "DML_INTERPOLATION_MODE_CUBIC"})
    with pytest.raises(DescParseError, match=r"Scales.*Expected an array of floats"):
        dmlops.desc_from_json(op, {**data, "Scales": ["a", 1]})


def test_scales_are_float32_members() -> None:
    desc = make_forward(scales=(0.1, 1 / 3))
    assert desc.scales == (float(np.float32(0.1)), float(np.float32(1 / 3)))


# -- feature levels -----------------------------------------------------------------------------


@pytest.mark.parametrize("op", BUILDERS)
def test_introduced_at_5_1(op: str) -> None:
    desc = BUILDERS[op][0]()
    with pytest.raises(InvalidDescError, match=r"introduced in DML_FEATURE_LEVEL_5_1; not available at .*5_0"):
        desc.validate("5_0")
    desc.validate("5_1")


def test_resample2_int8_from_6_2() -> None:
    for t in ("INT8", "UINT8"):
        desc = make_forward(in_type=t)
        with pytest.raises(
            InvalidDescError,
            match=rf"InputTensor.DataType: must be one of FLOAT16, FLOAT32 at DML_FEATURE_LEVEL_6_1; got DML_TENSOR_DATA_TYPE_{t}",
        ):
            desc.validate("6_1")
        desc.validate("6_2")
        desc.validate("6_4")


def test_resample_grad1_never_integer() -> None:
    # erratum E15: the forward's INT8/UINT8 support does not extend to the gradient
    for level in ("5_1", "6_2", "6_4"):
        with pytest.raises(InvalidDescError, match=r"InputGradientTensor.DataType: must be one of FLOAT16, FLOAT32"):
            make_grad(in_type="UINT8").validate(level)


# -- values: loop oracle ------------------------------------------------------------------------

SCALE_CHOICES = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 1 / 3, 0.3, 1.7, 2.5]
OFFSET_CHOICES = [0.0, 0.5, -0.5, 0.25, 1.0, -1.25, 2.0]


@st.composite
def resample_cases(draw, max_rank=4):
    rank = draw(st.integers(1, max_rank))
    in_sizes, out_sizes, scales, ipo, opo = [], [], [], [], []
    for _ in range(rank):
        n = draw(st.integers(1, 5))
        m = draw(st.integers(1, 6))
        in_sizes.append(n)
        out_sizes.append(m)
        scale = draw(
            st.one_of(
                st.just(m / n),
                st.sampled_from(SCALE_CHOICES),
                st.floats(0.125, 4.0, width=32),
            )
        )
        scales.append(scale)
        ipo.append(draw(st.one_of(st.sampled_from(OFFSET_CHOICES), st.floats(-2, 2, width=32))))
        opo.append(draw(st.one_of(st.sampled_from(OFFSET_CHOICES), st.floats(-2, 2, width=32))))
    mode = draw(st.sampled_from([NEAREST, "LINEAR"]))
    direction = draw(st.sampled_from(["DECREASING", "INCREASING"]))
    seed = draw(st.integers(0, 2**31 - 1))
    return in_sizes, out_sizes, scales, ipo, opo, mode, direction, seed


def _random(rng: np.random.RandomState, shape, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.randint(info.min, int(info.max) + 1, size=shape).astype(dtype)
    return rng.uniform(-4, 4, size=shape).astype(dtype)


def _check(got, want64: np.ndarray, dtype) -> None:
    want = round_to(want64, dtype)
    if np.dtype(dtype).kind in "iu":
        # the float64 sums may differ in the last bit: allow one step at exact .5 ties
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.astype(np.int64), want.astype(np.int64), atol=1)
    else:
        assert_close(got, want)


@settings(max_examples=80, deadline=None)
@given(case=resample_cases(), dtype=st.sampled_from([np.float32, np.float16, np.uint8, np.int8]))
def test_reference_forward_matches_loop_oracle(case, dtype) -> None:
    in_sizes, out_sizes, scales, ipo, opo, mode, direction, seed = case
    x = _random(np.random.RandomState(seed), in_sizes, dtype)
    got = dmlops.resample2(
        x, out_sizes, interpolation_mode=mode, rounding_direction=direction, scales=scales,
        input_pixel_offsets=ipo, output_pixel_offsets=opo,
    )  # fmt: skip
    _check(got, resample2_oracle(x, out_sizes, scales, ipo, opo, mode, direction), dtype)
    if mode == NEAREST:  # a gather: bit-exact
        np.testing.assert_array_equal(
            got, round_to(resample2_oracle(x, out_sizes, scales, ipo, opo, mode, direction), dtype)
        )


@settings(max_examples=80, deadline=None)
@given(case=resample_cases(), dtype=st.sampled_from([np.float32, np.float16]))
def test_reference_grad_matches_loop_oracle(case, dtype) -> None:
    in_sizes, out_sizes, scales, ipo, opo, mode, direction, seed = case
    dy = _random(np.random.RandomState(seed), out_sizes, dtype)
    got = dmlops.resample_grad1(
        dy, in_sizes, interpolation_mode=mode, rounding_direction=direction, scales=scales,
        input_pixel_offsets=ipo, output_pixel_offsets=opo,
    )  # fmt: skip
    _check(got, resample_grad1_oracle(dy, in_sizes, scales, ipo, opo, mode, direction), dtype)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", [NEAREST, "LINEAR"])
@pytest.mark.parametrize("direction", ["DECREASING", "INCREASING"])
def test_backends_match_oracle(backend: str, mode: str, direction: str, seed: int) -> None:
    rng = np.random.RandomState(seed)
    rank = 1 + seed % 4
    in_sizes = [int(v) for v in rng.randint(1, 6, size=rank)]
    out_sizes = [int(v) for v in rng.randint(1, 7, size=rank)]
    scales = [float(rng.choice(SCALE_CHOICES)) if rng.rand() < 0.5 else m / n for n, m in zip(in_sizes, out_sizes)]
    ipo = [float(rng.choice(OFFSET_CHOICES)) for _ in range(rank)]
    opo = [float(rng.choice(OFFSET_CHOICES)) for _ in range(rank)]
    params = dict(
        interpolation_mode=mode,
        rounding_direction=direction,
        scales=scales,
        input_pixel_offsets=ipo,
        output_pixel_offsets=opo,
    )
    for dtype in (np.float32, np.float16):
        x = _random(rng, in_sizes, dtype)
        got = dmlops.resample2(x, out_sizes, backend=backend, **params)
        _check(np.asarray(got), resample2_oracle(x, out_sizes, scales, ipo, opo, mode, direction), dtype)
        dy = _random(rng, out_sizes, dtype)
        got = dmlops.resample_grad1(dy, in_sizes, backend=backend, **params)
        _check(np.asarray(got), resample_grad1_oracle(dy, in_sizes, scales, ipo, opo, mode, direction), dtype)
    x8 = _random(rng, in_sizes, np.uint8)
    got = dmlops.resample2(x8, out_sizes, backend=backend, **params)
    _check(np.asarray(got), resample2_oracle(x8, out_sizes, scales, ipo, opo, mode, direction), np.uint8)


# -- adjoint: <RESAMPLE2(x), g> == <x, RESAMPLE_GRAD1(g)> ---------------------------------------


def grad_params(forward: dict) -> dict:
    """RESAMPLE_GRAD1's parameters for the gradient of a RESAMPLE2: the offsets swapped (erratum E25)."""
    return {**forward, "input_pixel_offsets": forward["output_pixel_offsets"],
            "output_pixel_offsets": forward["input_pixel_offsets"]}  # fmt: skip


def _adjoint_gap(x, g, out_sizes, in_sizes, params, backend="numpy"):
    y = dmlops.resample2(x, out_sizes, backend=backend, **params).astype(np.float64)
    dx = dmlops.resample_grad1(g, in_sizes, backend=backend, **grad_params(params)).astype(np.float64)
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    lhs, rhs = float(np.vdot(y, g64)), float(np.vdot(x64, dx))
    scale = float(np.abs(y) @ np.abs(g64).ravel() if y.ndim == 1 else np.vdot(np.abs(y), np.abs(g64)))
    scale += float(np.vdot(np.abs(x64), np.abs(dx)))
    return lhs, rhs, scale


@settings(max_examples=80, deadline=None)
@given(case=resample_cases(), dtype=st.sampled_from([np.float32, np.float16]))
def test_grad_is_adjoint_of_forward(case, dtype) -> None:
    in_sizes, out_sizes, scales, ipo, opo, mode, direction, seed = case
    rng = np.random.RandomState(seed)
    x, g = _random(rng, in_sizes, dtype), _random(rng, out_sizes, dtype)
    params = dict(
        interpolation_mode=mode,
        rounding_direction=direction,
        scales=scales,
        input_pixel_offsets=ipo,
        output_pixel_offsets=opo,
    )
    # DirectML's RESAMPLE2 takes its LINEAR taps from the quotient and RESAMPLE_GRAD1 from
    # the coordinate (erratum E32): the two are transposes only while InputPixelOffsets lie
    # in [0, 1), where both rules select the same taps.
    if mode == "LINEAR":
        ipo = [v if 0 <= v < 1 else v % 1.0 for v in ipo]
        params["input_pixel_offsets"] = ipo
    lhs, rhs, scale = _adjoint_gap(x, g, out_sizes, in_sizes, params)
    # each side is one rounding per stored element away from the exact inner product
    tol = 2 * TOLERANCES[np.dtype(dtype)]["rtol"] * scale + 1e-12
    assert abs(lhs - rhs) <= tol, (lhs, rhs, tol)


@pytest.mark.parametrize("seed", range(3))
def test_adjoint_on_backend(backend: str, seed: int) -> None:
    rng = np.random.RandomState(100 + seed)
    in_sizes, out_sizes = [2, 3, 5, 4], [3, 2, 9, 4]
    params = dict(interpolation_mode="LINEAR", scales=[1.5, 0.7, 1.8, 1.0], input_pixel_offsets=[0.5, 0, 0.25, 0.5],
                  output_pixel_offsets=[-0.5, 0, 1, -0.5])  # fmt: skip
    x, g = _random(rng, in_sizes, np.float32), _random(rng, out_sizes, np.float32)
    lhs, rhs, scale = _adjoint_gap(x, g, out_sizes, in_sizes, params, backend)
    assert abs(lhs - rhs) <= 2e-5 * scale


# -- rounding direction at exact ties, edge clamping ------------------------------------------------

TIE_CASES = [
    # (in, out, scale, ipo, opo, DECREASING indices, INCREASING indices)
    pytest.param(4, 4, 1.0, 0.0, 0.5, [0, 0, 1, 2], [0, 1, 2, 3], id="x=o-0.5 (half ties)"),
    pytest.param(4, 4, 1.0, 0.0, 0.0, [0, 1, 2, 3], [0, 1, 2, 3], id="x=o (integers)"),
    pytest.param(2, 4, 2.0, 0.0, 0.0, [0, 0, 1, 1], [0, 1, 1, 1], id="x=o/2"),
    pytest.param(4, 2, 0.5, 0.5, -0.5, [0, 2], [1, 3], id="half-pixel 4->2 (x=2o+0.5)"),
    pytest.param(3, 3, 1.0, 0.5, -0.5, [0, 1, 2], [0, 1, 2], id="half-pixel identity"),
    pytest.param(3, 1, 1 / 3, 0.5, -0.5, [1], [1], id="3->1: float32 gives x=1.0 exactly"),
]


@pytest.mark.parametrize("n, m, scale, ipo, opo, dec, inc", TIE_CASES)
def test_nearest_ties_follow_rounding_direction(backend: str, n, m, scale, ipo, opo, dec, inc) -> None:
    x = np.arange(10, 10 + 10 * n, 10, dtype=np.float32)
    for direction, idx in (("DECREASING", dec), ("INCREASING", inc)):
        params = dict(
            interpolation_mode=NEAREST,
            rounding_direction=direction,
            scales=[scale],
            input_pixel_offsets=[ipo],
            output_pixel_offsets=[opo],
        )
        got = dmlops.resample2(x, [m], backend=backend, **params)
        assert_close(got, x[idx], exact=True)
        # the grad sends each dy to the same index
        dy = np.arange(1, m + 1, dtype=np.float32)
        want = np.zeros(n, dtype=np.float64)
        np.add.at(want, idx, dy)
        assert_close(
            dmlops.resample_grad1(dy, [n], backend=backend, **grad_params(params)), want.astype(np.float32), exact=True
        )


def test_float32_coordinates_are_documented_choice() -> None:
    # (0 + 0.5) * float32(1 / float32(1/3)) - 0.5: float32 arithmetic gives exactly 1.0 (the
    # middle pixel); float64 division would give 0.99999996 and floor to 0.
    desc = make_forward(in_sizes=(3,), out_sizes=(1,), scales=(1 / 3,), ipo=(0.5,), opo=(-0.5,))
    assert desc.input_coordinates(0).dtype == np.float32
    assert desc.input_coordinates(0)[0] == 1.0
    assert (0.5 / float(np.float32(1 / 3)) - 0.5) < 1.0


def test_coordinates_multiply_by_the_reciprocal(backend: str) -> None:
    # DirectML multiplies by float32(1 / Scale) (erratum E34). With Scales 1.2, 15 -> 18 and
    # InputPixelOffset 0.5, some outputs land exactly on an integer by one rule and just
    # below it by the other. The expected indices are DirectML 1.15.4's, probed, except o = 0,
    # which floors to -1: DirectML reads the last element there on this stack (the ftou
    # artefact, see errata), D3D12 and dmlops clamp to 0.
    scale = 1.2000000476837158
    x = np.arange(15, dtype=np.float32)
    params = dict(interpolation_mode=NEAREST, rounding_direction="DECREASING", scales=[scale],
                  input_pixel_offsets=[0.5], output_pixel_offsets=[0.0])  # fmt: skip
    o = np.arange(18, dtype=np.float32)
    by_division = np.clip(np.floor(o / np.float32(scale) - np.float32(0.5)), 0, 14)
    directml = np.array([0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 7, 8, 9, 10, 11, 12, 12, 13], np.float32)
    assert not np.array_equal(directml, by_division)  # the probe separates the two rules
    assert_close(dmlops.resample2(x, [18], backend=backend, **params), directml, exact=True)


def test_linear_edge_taps_accumulate_on_edge(backend: str) -> None:
    # InputPixelOffset -1.5: DirectML's first tap is floor(q) = o with weight t = x - o = 1.5
    # (erratum E32), an extrapolation from taps (o, o + 1); o = 2 has both taps clamped to 2.
    # Probed on DirectML 1.15.4: [25, 35, 30] (the page's floor(x) would give [25, 30, 30]).
    params = dict(interpolation_mode="LINEAR", scales=[1.0], input_pixel_offsets=[-1.5], output_pixel_offsets=[0.0])
    x = np.array([10, 20, 30], dtype=np.float32)
    assert_close(dmlops.resample2(x, [3], backend=backend, **params), np.array([25, 35, 30], dtype=np.float32))
    # The grad's InputPixelOffsets go with its gradient input (E25): the forward it
    # transposes has InputPixelOffset 0 and OutputPixelOffset -1.5, x(o) = o + 1.5.
    dy = np.ones(3, dtype=np.float32)
    assert_close(dmlops.resample_grad1(dy, [3], backend=backend, **params), np.array([0, 0.5, 2.5], dtype=np.float32))
    # InputPixelOffset 5: frac(q) = 0 < 5, so i0 = o - 1 and t = -4: o = 0 reads the edge
    # twice, o = 1 gives 10 + 10 * -4 (DirectML: [10, -30]).
    params = dict(interpolation_mode="LINEAR", scales=[1.0], input_pixel_offsets=[5.0], output_pixel_offsets=[0.0])
    assert_close(dmlops.resample2(x, [2], backend=backend, **params), np.array([10, -30], dtype=np.float32))
    assert_close(dmlops.resample_grad1(dy[:2], [3], backend=backend, **params), np.array([2, 0, 0], dtype=np.float32))


def test_nearest_edge_clamping(backend: str) -> None:
    x = np.array([1, 2, 3], dtype=np.float32)
    params = dict(interpolation_mode=NEAREST, scales=[1.0], input_pixel_offsets=[-2.0], output_pixel_offsets=[0.0])
    assert_close(
        dmlops.resample2(x, [4], backend=backend, **params), np.array([3, 3, 3, 3], dtype=np.float32), exact=True
    )
    assert_close(
        dmlops.resample_grad1(np.ones(4, np.float32), [3], backend=backend, **params),
        np.array([0, 0, 4], np.float32),
        exact=True,
    )


def test_smallest_scale_is_flt_epsilon(backend: str) -> None:
    # DirectML rejects every scale below FLT_EPSILON (erratum E31), so the quotient never
    # overflows; at FLT_EPSILON itself o >= 1 maps far past the last element.
    x = np.array([1, 2, 3], dtype=np.float32)
    for mode in (NEAREST, "LINEAR"):
        params = dict(interpolation_mode=mode, input_pixel_offsets=[0.0], output_pixel_offsets=[0.0])
        got = dmlops.resample2(x, [6], backend=backend, scales=[2.0**-23], **params)
        assert_close(got, np.array([1, 3, 3, 3, 3, 3], dtype=np.float32), exact=True)
        for scale in (float(np.nextafter(np.float32(2.0**-23), np.float32(0))), 1e-38, 0.0):
            with pytest.raises(InvalidDescError, match=r"Scales\[0\]"):
                dmlops.resample2(x, [6], backend=backend, scales=[scale], **params)


def test_grad_is_not_the_adjoint_outside_unit_offsets() -> None:
    # InputPixelOffset -1.5 (x = o + 1.5): RESAMPLE2 extrapolates from taps (o, o + 1) with
    # weight 1.5, RESAMPLE_GRAD1 spreads over (o + 1, o + 2) with weight 0.5 (probed on
    # DirectML 1.15.4: [25, 35, 30] forward, [0, 0.5, 2.5] gradient of ones). The gradient
    # of the forward would be [-0.5, 1, 2.5].
    fwd = dict(interpolation_mode="LINEAR", scales=[1.0], input_pixel_offsets=[-1.5], output_pixel_offsets=[0.0])
    x, g = np.array([10, 20, 30], np.float32), np.ones(3, np.float32)
    assert_close(dmlops.resample2(x, [3], **fwd), np.array([25, 35, 30], np.float32))
    assert_close(dmlops.resample_grad1(g, [3], **grad_params(fwd)), np.array([0, 0.5, 2.5], np.float32))


def test_linear_identity_interpolates_the_first_dimension(backend: str) -> None:
    # Every dimension an identity map: DirectML still interpolates the first one, with taps o
    # and o + 1 at weight 0 (erratum E33), so an infinity turns itself and its left
    # neighbour into NaN (1 + (inf - 1) * 0). Probed: [1, inf, 2] gives [nan, nan, 2].
    x = np.array([1, np.inf, -np.inf, np.nan, 5], dtype=np.float32)
    got = dmlops.resample2(x, [5], interpolation_mode="LINEAR", backend=backend)
    np.testing.assert_array_equal(np.asarray(got), np.array([np.nan, np.nan, np.nan, np.nan, 5], np.float32))
    # Only the first: along an identity second dimension nothing spreads (probed on
    # [[1, 2], [inf, 3]] -> [[nan, 2], [nan, 3]]).
    x2 = np.array([[1, 2], [np.inf, 3]], np.float32)
    got = dmlops.resample2(
        x2,
        [2, 2],
        interpolation_mode="LINEAR",
        scales=[1, 1],
        input_pixel_offsets=[0, 0],
        output_pixel_offsets=[0, 0],
        backend=backend,
    )
    np.testing.assert_array_equal(np.asarray(got), np.array([[np.nan, 2], [np.nan, 3]], np.float32))
    # The grad keeps its weighted sum: a tap of weight 0 is not read.
    got = dmlops.resample_grad1(x, [5], interpolation_mode="LINEAR", backend=backend)
    np.testing.assert_array_equal(np.asarray(got), x)


def test_integer_outputs_truncate_toward_zero(backend: str) -> None:
    # x = o - 0.5: interior outputs are exact midpoints of neighbours. DirectML 1.15.4 converts
    # the interpolated value toward zero (erratum E30): it gives exactly these outputs.
    params = dict(interpolation_mode="LINEAR", scales=[1.0], input_pixel_offsets=[0.0], output_pixel_offsets=[0.5])
    x = np.array([0, 1, 2, 3, 255], dtype=np.uint8)
    got = dmlops.resample2(x, [5], backend=backend, **params)
    # 0, 0.5 -> 0, 1.5 -> 1, 2.5 -> 2, 129 -> 129
    assert_close(got, np.array([0, 0, 1, 2, 129], dtype=np.uint8))
    xi = np.array([-128, -127, 127, 126], dtype=np.int8)
    got = dmlops.resample2(xi, [4], backend=backend, **params)
    # -128, -127.5 -> -127, 0 -> 0, 126.5 -> 126
    assert_close(got, np.array([-128, -127, 0, 126], dtype=np.int8))


# -- tensor layouts ---------------------------------------------------------------------------------


def test_strided_and_broadcast_inputs(backend: str) -> None:
    n, c, h, w = 1, 3, 4, 5
    nhwc = np.arange(n * h * w * c, dtype=np.float32) * 0.5
    logical = nhwc.reshape(n, h, w, c).transpose(0, 3, 1, 2)
    params = dict(scales=(1.0, 1.0, 1.5, 0.6), ipo=(0.5, 0.5, 0.5, 0.5), opo=(-0.5, -0.5, -0.5, -0.5))
    for mode in (NEAREST, "LINEAR"):
        desc = make_forward(
            in_sizes=(n, c, h, w), out_sizes=(1, 3, 6, 3), mode=mode, in_strides=(h * w * c, 1, w * c, c), **params
        )
        got = dmlops.execute(desc, {"InputTensor": nhwc}, backend=backend)["OutputTensor"]
        want = resample2_oracle(logical, (1, 3, 6, 3), params["scales"], params["ipo"], params["opo"], mode)
        assert_close(got, want.astype(np.float32))
        # the grad reads an NHWC-strided InputGradientTensor
        dy_nhwc = np.arange(6 * 3 * 3, dtype=np.float32)
        dy_logical = dy_nhwc.reshape(1, 6, 3, 3).transpose(0, 3, 1, 2)
        gdesc = make_grad(in_sizes=(n, c, h, w), out_sizes=(1, 3, 6, 3), mode=mode, in_strides=(54, 1, 9, 3), **params)
        got = dmlops.execute(gdesc, {"InputGradientTensor": dy_nhwc}, backend=backend)["OutputGradientTensor"]
        want = resample_grad1_oracle(dy_logical, (n, c, h, w), params["scales"], params["ipo"], params["opo"], mode)
        assert_close(got, want.astype(np.float32))

    # broadcast (stride 0) rows
    row = np.array([1, 2, 4, 8], dtype=np.float32)
    logical = np.broadcast_to(row, (3, 4))
    bparams = dict(scales=(2.0, 0.5), ipo=(0.5, 0.5), opo=(-0.5, -0.5))
    desc = make_forward(in_sizes=(3, 4), out_sizes=(6, 2), mode="LINEAR", in_strides=(0, 1), **bparams)
    got = dmlops.execute(desc, {"InputTensor": row}, backend=backend)["OutputTensor"]
    assert_close(
        got, resample2_oracle(logical, (6, 2), bparams["scales"], bparams["ipo"], bparams["opo"]).astype(np.float32)
    )
    gdesc = make_grad(in_sizes=(3, 4), out_sizes=(6, 2), mode="LINEAR", in_strides=(1, 0), **bparams)
    col = np.array([1, 2, 3, 4, 5, 6], dtype=np.float32)
    got = dmlops.execute(gdesc, {"InputGradientTensor": col}, backend=backend)["OutputGradientTensor"]
    want = resample_grad1_oracle(
        np.broadcast_to(col[:, None], (6, 2)), (3, 4), bparams["scales"], bparams["ipo"], bparams["opo"]
    )
    assert_close(got, want.astype(np.float32))


def test_strided_output_writes_only_addressed_elements() -> None:
    desc = Resample2Desc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(2,)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(4,), strides=(2,)),
        interpolation_mode="LINEAR",
        rounding_direction="DECREASING",
        scales=(2.0,),
        input_pixel_offsets=(0.5,),
        output_pixel_offsets=(-0.5,),
    )
    buffer = np.full(7, -7.0, dtype=np.float32)
    result = dmlops.execute(desc, {"InputTensor": np.array([0, 4], np.float32)}, outputs={"OutputTensor": buffer})
    assert result["OutputTensor"] is buffer
    np.testing.assert_array_equal(buffer, [0, -7, 1, -7, 3, -7, 4])


# -- functional wrappers ----------------------------------------------------------------------------


def test_wrapper_defaults_follow_directmlx() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    explicit = dmlops.resample2(
        x, [4, 2], interpolation_mode="LINEAR", scales=[2.0, float(np.float32(2) / np.float32(3))],
        input_pixel_offsets=[0.5, 0.5], output_pixel_offsets=[-0.5, -0.5],
    )  # fmt: skip
    np.testing.assert_array_equal(dmlops.resample2(x, [4, 2]), explicit)
    dy = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_array_equal(
        dmlops.resample_grad1(dy, [2, 3]),
        dmlops.resample_grad1(
            dy, [2, 3], scales=[2.0, 2 / 3], input_pixel_offsets=[-0.5] * 2, output_pixel_offsets=[0.5] * 2
        ),  # the forward's defaults swapped: RESAMPLE_GRAD1 names offsets after its own tensors (E25)
    )
    # "nearest" is accepted for NEAREST_NEIGHBOR; DECREASING is the default rounding
    np.testing.assert_array_equal(
        dmlops.resample2(x, [4, 6], interpolation_mode="nearest"),
        dmlops.resample2(x, [4, 6], interpolation_mode="NEAREST_NEIGHBOR", rounding_direction="DECREASING"),
    )


def test_wrapper_out_and_feature_level() -> None:
    x = np.arange(4, dtype=np.float32)
    out = np.empty(8, dtype=np.float32)
    assert dmlops.resample2(x, [8], out=out) is out
    dy = np.ones(8, dtype=np.float16)
    gout = np.empty(4, dtype=np.float16)
    assert dmlops.resample_grad1(dy, [4], out=gout) is gout
    np.testing.assert_array_equal(gout, np.float16([2.0, 2.0, 2.0, 2.0]))
    with pytest.raises(InvalidDescError, match=r"not available at DML_FEATURE_LEVEL_5_0"):
        dmlops.resample2(x, [8], feature_level="5_0")
    with pytest.raises(InvalidDescError, match=r"DimensionCount: must match InputTensor.DimensionCount \(1\); got 2"):
        dmlops.resample2(x, [8], scales=[2.0, 1.0], input_pixel_offsets=[0.5, 0.5], output_pixel_offsets=[0, 0])
    with pytest.raises(
        dmlops.TensorMismatchError, match=r"output_sizes must have one entry per dimension of x \(1\); got 2"
    ):
        dmlops.resample2(x, [8, 1])
    with pytest.raises(
        dmlops.TensorMismatchError, match=r"input_sizes must have one entry per dimension of dy \(1\); got 2"
    ):
        dmlops.resample_grad1(out, [4, 1])


# -- memory stays proportional to the tensors ----------------------------------------------------------


@pytest.mark.parametrize("mode", [NEAREST, "LINEAR"])
def test_memory_is_separable(mode: str) -> None:
    # (1, 3000) -> (3000, 1): a dense map (or upsampling first) would need 3000 x 3000 elements.
    x = np.arange(3000, dtype=np.float32).reshape(1, 3000)
    dy = np.ones((3000, 1), dtype=np.float32)
    tracemalloc.start()
    try:
        y = dmlops.resample2(x, [3000, 1], interpolation_mode=mode)
        dx = dmlops.resample_grad1(dy, [1, 3000], interpolation_mode=mode)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000  # a few float64 copies of 3000-element tensors; 3000^2 would be 36+ MB
    assert y.shape == (3000, 1) and dx.shape == (1, 3000)
    np.testing.assert_allclose(dx.sum(), 3000, rtol=1e-6)  # the grad conserves the total


# -- torch F.interpolate parity (spec oracles 3.1) -----------------------------------------------------

SIZE_PAIRS = [(4, 8), (8, 4), (3, 7), (5, 2), (6, 6), (1, 4), (4, 1), (7, 3), (2, 5), (14, 2), (6, 4), (3, 9)]


def _dyadic(v: float) -> bool:
    return v > 0 and math.frexp(v)[0] == 0.5


def _torch_nearest_agrees(n: int, m: int) -> bool:
    """torch picks floor(o * float32(n/m)); DML divides by float32(m/n). Oracles 3.1: they can land
    on different integers when the ratio is not a power of two; keep sizes where they agree."""
    if _dyadic(m / n):
        return True
    s_dml = np.float32(m) / np.float32(n)
    s_torch = np.float32(n) / np.float32(m)
    o = np.arange(m, dtype=np.float32)
    return bool(np.array_equal(np.floor(o / s_dml), np.floor(o * s_torch)))


def _torch_params(mode: str, spatial_in, spatial_out):
    k = len(spatial_in)
    scales = [1.0, 1.0] + [float(np.float32(m) / np.float32(n)) for n, m in zip(spatial_in, spatial_out)]
    if mode == "nearest":
        return dict(interpolation_mode=NEAREST, rounding_direction="DECREASING", scales=scales,
                    input_pixel_offsets=[0.5, 0.5] + [0.0] * k, output_pixel_offsets=[-0.5, -0.5] + [0.0] * k)  # fmt: skip
    return dict(
        interpolation_mode="LINEAR",
        scales=scales,
        input_pixel_offsets=[0.5] * (2 + k),
        output_pixel_offsets=[-0.5] * (2 + k),
    )


@pytest.mark.oracles
@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (dmlops[oracles])")
@pytest.mark.parametrize("torch_mode", ["nearest", "linear"])
@pytest.mark.parametrize("spatial", [1, 2])
@pytest.mark.parametrize("pair_index", range(len(SIZE_PAIRS)))
def test_torch_interpolate_parity(backend: str, torch_mode: str, spatial: int, pair_index: int) -> None:
    import torch
    import torch.nn.functional as F

    n_h, m_h = SIZE_PAIRS[pair_index]
    n_w, m_w = SIZE_PAIRS[(pair_index + 5) % len(SIZE_PAIRS)]
    spatial_in, spatial_out = ([n_w], [m_w]) if spatial == 1 else ([n_h, n_w], [m_h, m_w])
    if torch_mode == "nearest" and not all(_torch_nearest_agrees(n, m) for n, m in zip(spatial_in, spatial_out)):
        pytest.skip(
            "float32 index-boundary hazard (spec oracles 3.1): torch multiplies by float(in/out), DirectML by 1/float(out/in)"
        )
    rng = np.random.RandomState(pair_index)
    in_sizes = [2, 3, *spatial_in]
    out_sizes = [2, 3, *spatial_out]
    x = rng.uniform(-2, 2, size=in_sizes).astype(np.float32)
    g = rng.uniform(-2, 2, size=out_sizes).astype(np.float32)
    mode = torch_mode if torch_mode == "nearest" else ("linear" if spatial == 1 else "bilinear")
    xt = torch.from_numpy(x).requires_grad_(True)
    kwargs = {} if mode == "nearest" else {"align_corners": False}
    yt = F.interpolate(xt, size=tuple(spatial_out), mode=mode, **kwargs)
    yt.backward(torch.from_numpy(g))
    params = _torch_params(torch_mode, spatial_in, spatial_out)
    got = dmlops.resample2(x, out_sizes, backend=backend, **params)
    if torch_mode == "nearest":
        assert_close(got, yt.detach().numpy(), exact=True)
    else:
        # DirectML's float32 lerps a + (b - a) t (erratum E33) round differently from torch's
        # weighted sum: a few float32 ulps of the largest input, not of the (possibly small) result.
        bound = 16 * float(np.finfo(np.float32).eps) * float(np.abs(x).max())
        np.testing.assert_allclose(got, yt.detach().numpy(), rtol=1e-5, atol=bound)
    dx = dmlops.resample_grad1(g, in_sizes, backend=backend, **grad_params(params))
    if torch_mode == "nearest":
        assert_close(dx, xt.grad.numpy())
    else:
        # DirectML's coordinates multiply by the float32 reciprocal of the scale (erratum E34):
        # a tap torch weighs exactly 0 may get a weight of a few ulps.
        bound = (
            16
            * float(np.finfo(np.float32).eps)
            * float(np.abs(g).max())
            * max(m / n for n, m in zip(in_sizes, out_sizes))
        )
        np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=1e-5, atol=bound)


@pytest.mark.oracles
@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (dmlops[oracles])")
def test_torch_reproduces_seed_example_and_linear_grad() -> None:
    import torch
    import torch.nn.functional as F

    # oracles 3.1: torch 'nearest' reproduces the seed page's example
    x = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], requires_grad=True)
    y = F.interpolate(x, size=(1, 3), mode="nearest")
    y.backward(torch.tensor([[[[4.0, 5.0, 6.0]]]]))
    assert y.detach().numpy().ravel().tolist() == [1, 1, 2]
    assert x.grad.numpy()[0, 0].tolist() == [[9, 6], [0, 0]]
    # oracles 4.6: the forward convention's linear 4 -> 8 grad equals torch's
    x = torch.tensor([[[1.0, 2.0, 3.0, 4.0]]], requires_grad=True)
    F.interpolate(x, size=8, mode="linear", align_corners=False).backward(torch.arange(1.0, 9.0).reshape(1, 1, 8))
    assert x.grad.numpy().ravel().tolist() == [3.25, 7, 11, 14.75]


def test_infinite_scale_is_valid(backend: str) -> None:
    # DirectML 1.15.4 accepts Scales = +inf (erratum E31): every coordinate is -InputPixelOffset.
    # LINEAR with InputPixelOffsets -1.5 reads x = 1.5 everywhere: (20 + 30) / 2 (DirectML: 25).
    x = np.array([10, 20, 30, 40], dtype=np.float32)
    got = dmlops.resample2(
        x, [3], interpolation_mode="LINEAR", scales=[math.inf], input_pixel_offsets=[-1.5], output_pixel_offsets=[0.0],
        backend=backend,
    )  # fmt: skip
    assert_close(got, np.full(3, 25.0, dtype=np.float32), exact=True)


# Probed on DirectML 1.15.4 (x = [10, 20, 30, 40], RESAMPLE2 LINEAR, Scales 1, one dimension).
INFINITE_OFFSET_CASES = [
    # InputPixelOffsets +inf: the first lane's quotient rule gives taps (0, 0) at weight -inf
    # (NaN); the other lanes' floor(-inf) gives weight NaN.
    (4, math.inf, 0.0, [math.nan] * 4),
    # -inf: weight +inf on taps (0, 1) at o = 0, NaN elsewhere.
    (4, -math.inf, 0.0, [math.inf, math.nan, math.nan, math.nan]),
    # Six outputs: one output per thread, every one by the quotient rule.
    (6, -math.inf, 0.0, [math.inf, math.inf, math.inf, math.inf, math.inf, math.nan]),
    # OutputPixelOffsets +-inf: the quotient is infinite, every weight NaN.
    (4, 0.25, math.inf, [math.nan] * 4),
    (4, 0.25, -math.inf, [math.nan] * 4),
]


@pytest.mark.parametrize("size, ipo, opo, want", INFINITE_OFFSET_CASES)
def test_infinite_pixel_offsets_follow_directml(backend: str, size: int, ipo: float, opo: float, want) -> None:
    x = np.array([10, 20, 30, 40], dtype=np.float32)
    got = dmlops.resample2(
        x, [size], interpolation_mode="LINEAR", scales=[1.0 if size == 4 else 1.5], input_pixel_offsets=[ipo],
        output_pixel_offsets=[opo], backend=backend,
    )  # fmt: skip
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float32))


@pytest.mark.parametrize("mode", [NEAREST, "LINEAR"])
def test_infinite_pixel_offsets_clamp_to_an_edge(backend: str, mode: str) -> None:
    # x = +inf reads the last element (DirectML: the same); x = -inf the first (this
    # oracle's lavapipe gives the last there: its ftou of a negative float, errata "-").
    x = np.array([10, 20, 30, 40], dtype=np.float32)
    plus = dmlops.resample2(
        x, [3], interpolation_mode=mode, scales=[0.5], input_pixel_offsets=[-math.inf], output_pixel_offsets=[0.0],
        backend=backend,
    )  # fmt: skip
    if mode == NEAREST:
        np.testing.assert_array_equal(plus, [40, 40, 40])
        minus = dmlops.resample2(
            x, [3], interpolation_mode=mode, scales=[0.5], input_pixel_offsets=[math.inf], output_pixel_offsets=[0.0],
            backend=backend,
        )  # fmt: skip
        np.testing.assert_array_equal(minus, [10, 10, 10])
    # The gradient of an infinite coordinate goes to the edge it clamps to (DirectML,
    # LINEAR: [111111, 0, 0, 0] for InputPixelOffsets +inf, [0, 0, 0, 111111] for -inf).
    g = np.array([1, 10, 100, 1000, 10000, 100000], dtype=np.float32)
    for offset, edge in ((math.inf, 0), (-math.inf, 3)):
        got = dmlops.resample_grad1(
            g, [4], interpolation_mode=mode, scales=[1.5], input_pixel_offsets=[offset], output_pixel_offsets=[0.5],
            backend=backend,
        )  # fmt: skip
        want = np.zeros(4, np.float32)
        want[edge] = g.sum()
        np.testing.assert_array_equal(got, want)


# DirectML 1.15.4 RESAMPLE2 LINEAR, x = [0, 1, 4, ..., 63^2] (64 elements), Scales 1,
# InputPixelOffsets -1.25: x(o) = o + 1.25. Where several outputs share a thread, only the
# first of each group takes the quotient rule (taps o, o + 1 at weight 1.25); the others take
# floor(x) (taps o + 1, o + 2 at weight 0.25).
VECTOR_LANE_CASES = [
    (3, "QQQ"),
    (4, "QPPP"),
    (7, "QQQQQQQ"),
    (8, "QPPPPPPP"),
    (12, "QPPPQPPPQPPP"),
    (17, "Q" + "P" * 7 + "Q" + "P" * 7 + "Q"),
]


@pytest.mark.parametrize("size, lanes", VECTOR_LANE_CASES)
def test_linear_vector_lanes_follow_directml(backend: str, size: int, lanes: str) -> None:
    x = np.arange(64, dtype=np.float32) ** 2
    got = dmlops.resample2(
        x, [size], interpolation_mode="LINEAR", scales=[1.0], input_pixel_offsets=[-1.25], output_pixel_offsets=[0.0],
        backend=backend,
    )  # fmt: skip
    o = np.arange(size)
    quotient = x[o] + (x[o + 1] - x[o]) * np.float32(1.25)
    page = x[o + 1] + (x[o + 2] - x[o + 1]) * np.float32(0.25)
    want = np.where(np.array(list(lanes)) == "Q", quotient, page).astype(np.float32)
    np.testing.assert_array_equal(got, want)


def test_linear_vector_lanes_on_the_first_dimension(backend: str) -> None:
    # DirectML 1.15.4, [0, 1, 2] x [0, 10] -> (4, 2), Scales {1, 1}, InputPixelOffsets
    # {1.25, 0}: x(o) = o - 1.25 on the first dimension. Row 0 takes the quotient rule
    # (taps 0, 0); rows 1 to 3 floor(x): taps (0, 0), (0, 1) at 0.75, (1, 2) at 0.75.
    x = np.array([[0, 10], [100, 110], [200, 210]], dtype=np.float32)
    got = dmlops.resample2(x, [4, 2], interpolation_mode="LINEAR", scales=[1.0, 1.0], input_pixel_offsets=[1.25, 0.0],
                           output_pixel_offsets=[0.0, 0.0], backend=backend)  # fmt: skip
    np.testing.assert_array_equal(got, [[0, 10], [0, 10], [75, 85], [175, 185]])


def test_identity_dimension_reads_the_first_tap(backend: str) -> None:
    # DirectML 1.15.4: Scales {3, 1}, InputPixelOffsets {2.25, -0.5}, OutputPixelOffsets
    # {-1.5, 0.5} on a 4 x 3 input: the second dimension is an identity map, not interpolated,
    # and reads the quotient rule's first tap o - 1 (weight 1 ignored): columns 0, 0, 1, 2, 2, ...
    rng = np.random.default_rng(0)
    x = (rng.normal(size=(4, 3)) * 10).astype(np.float32)
    kw = dict(interpolation_mode="LINEAR", backend=backend)
    got = dmlops.resample2(x, [7, 6], scales=[3.0, 1.0], input_pixel_offsets=[2.25, -0.5],
                           output_pixel_offsets=[-1.5, 0.5], **kw)  # fmt: skip
    rows = dmlops.resample2(x, [7, 3], scales=[3.0, 1.0], input_pixel_offsets=[2.25, 0.0],
                            output_pixel_offsets=[-1.5, 0.0], **kw)  # fmt: skip
    np.testing.assert_array_equal(got, rows[:, [0, 0, 1, 2, 2, 2]])
    # Every dimension an identity map: the first is interpolated with its weights (1 here).
    one = dmlops.resample2(np.array([1, 10, 100], np.float32), [5], scales=[1.0], input_pixel_offsets=[-0.5],
                           output_pixel_offsets=[0.5], **kw)  # fmt: skip
    np.testing.assert_array_equal(one, [1, 10, 100, 100, 100])
