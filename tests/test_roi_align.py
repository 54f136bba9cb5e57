"""ROI_ALIGN: validation rules, feature levels, loop oracle, edge semantics, strides, ONNX Runtime parity."""

from __future__ import annotations

import numpy as np
import pytest

import dmlops
from conftest import assert_close, backend_params
from dmlops import AllocationError, DataIndexError, InvalidDescError, TensorDesc
from dmlops.descs.roi import UINT32_MAX, RoiAlignDesc, samples_per_output
from oracles.roi_align import roi_align_oracle, rois_sampling_the_bounds


def make_desc(
    in_sizes=(2, 3, 5, 6),
    roi_sizes=(4, 4),
    bi_sizes=(4,),
    out_sizes=(4, 3, 2, 3),
    in_type="FLOAT32",
    roi_type="FLOAT32",
    bi_type="UINT32",
    out_type="FLOAT32",
    **attrs,
) -> RoiAlignDesc:
    kwargs = dict(
        reduction_function="AVERAGE",
        interpolation_mode="LINEAR",
        spatial_scale_x=1.0,
        spatial_scale_y=1.0,
        out_of_bounds_input_value=0.0,
        minimum_samples_per_output=1,
        maximum_samples_per_output=UINT32_MAX,
    )
    kwargs.update(attrs)
    return RoiAlignDesc(
        input_tensor=TensorDesc(data_type=in_type, sizes=in_sizes),
        roi_tensor=TensorDesc(data_type=roi_type, sizes=roi_sizes),
        batch_indices_tensor=TensorDesc(data_type=bi_type, sizes=bi_sizes),
        output_tensor=TensorDesc(data_type=out_type, sizes=out_sizes),
        **kwargs,
    )


# -- validation: each rule, one valid and one invalid desc -------------------------------------

VALID = {
    "default": {},
    "ROI {1, NumROIs, 4}": dict(roi_sizes=(1, 4, 4)),
    "ROI {1, 1, NumROIs, 4}": dict(roi_sizes=(1, 1, 4, 4)),
    "BatchIndices {1, NumROIs}": dict(bi_sizes=(1, 4)),
    "BatchIndices {1, 1, NumROIs}": dict(bi_sizes=(1, 1, 4)),
    "BatchIndices {1, 1, 1, NumROIs}": dict(bi_sizes=(1, 1, 1, 4)),
    "float16": dict(in_type="FLOAT16", roi_type="FLOAT16", out_type="FLOAT16"),
    "any output size": dict(out_sizes=(4, 3, 9, 1)),
    "MAX": dict(reduction_function="MAX"),
    "NEAREST": dict(interpolation_mode="NEAREST_NEIGHBOR"),
    "Min == Max": dict(minimum_samples_per_output=3, maximum_samples_per_output=3),
    "zero scales (and -0)": dict(spatial_scale_x=0.0, spatial_scale_y=-0.0),
    "a NaN scale (DirectML accepts it, E31)": dict(spatial_scale_x=float("nan")),
    "OutOfBoundsInputValue nan": dict(out_of_bounds_input_value=float("nan")),
    "OutOfBoundsInputValue -inf": dict(out_of_bounds_input_value=-np.inf),
}

INVALID = {
    "Input 3-D": (
        dict(in_sizes=(3, 5, 6)),
        r"InputTensor.DimensionCount: must be 4 at DML_FEATURE_LEVEL_6_4; got 3",
    ),
    "Output 5-D": (dict(out_sizes=(1, 4, 3, 2, 3)), r"OutputTensor.DimensionCount: must be 4 at"),
    "ROI 1-D": (dict(roi_sizes=(4,)), r"ROITensor.DimensionCount: must be 2 to 4 at"),
    "ROI 5-D": (dict(roi_sizes=(1, 1, 1, 4, 4)), r"ROITensor.DimensionCount: must be 2 to 4 at"),
    "ROI last dim not 4": (
        dict(roi_sizes=(4, 5)),
        r"ROITensor.Sizes: must be \{NumROIs, 4\}, \{1, NumROIs, 4\} or \{1, 1, NumROIs, 4\}; got \(4, 5\)",
    ),
    "ROI leading dim not 1": (dict(roi_sizes=(2, 2, 4)), r"ROITensor.Sizes: must be .*; got \(2, 2, 4\)"),
    "BatchIndices 5-D": (dict(bi_sizes=(1, 1, 1, 1, 4)), r"BatchIndicesTensor.DimensionCount: must be 1 to 4"),
    "BatchIndices leading dim not 1": (
        dict(bi_sizes=(4, 1)),
        r"BatchIndicesTensor.Sizes: must be \{NumROIs\}, \{1, NumROIs\}, .*; got \(4, 1\)",
    ),
    "BatchIndices count": (
        dict(bi_sizes=(3,)),
        r"BatchIndicesTensor.Sizes: must hold NumROIs \(4, from ROITensor\) indices; got \(3,\)",
    ),
    "Output NumROIs": (
        dict(out_sizes=(3, 3, 2, 3)),
        r"OutputTensor.Sizes\[0\]: must be NumROIs \(4, from ROITensor\); got 3",
    ),
    "Output channels": (
        dict(out_sizes=(4, 2, 2, 3)),
        r"OutputTensor.Sizes\[1\]: must be ChannelCount \(3, InputTensor.Sizes\[1\]\); got 2",
    ),
    "ROI data type": (
        dict(roi_type="FLOAT16"),
        r"ROITensor.DataType: must equal InputTensor.DataType \(DML_TENSOR_DATA_TYPE_FLOAT32\)",
    ),
    "Output data type": (dict(out_type="FLOAT16"), r"OutputTensor.DataType: must equal InputTensor.DataType"),
    "Input FLOAT64": (
        dict(in_type="FLOAT64", roi_type="FLOAT64", out_type="FLOAT64"),
        r"InputTensor.DataType: must be one of FLOAT16, FLOAT32 at",
    ),
    "BatchIndices INT32": (dict(bi_type="INT32"), r"BatchIndicesTensor.DataType: must be one of UINT32, UINT64 at"),
    "BatchIndices FLOAT32": (dict(bi_type="FLOAT32"), r"BatchIndicesTensor.DataType: must be one of"),
    "ReductionFunction SUM": (
        dict(reduction_function="SUM"),
        r"ReductionFunction: must be DML_REDUCE_FUNCTION_AVERAGE or DML_REDUCE_FUNCTION_MAX; "
        r"got DML_REDUCE_FUNCTION_SUM",
    ),
    "ReductionFunction MIN": (dict(reduction_function="MIN"), r"ReductionFunction: must be"),
    "Min 0": (dict(minimum_samples_per_output=0), r"MinimumSamplesPerOutput: must be at least 1; got 0"),
    "Max < Min": (
        dict(minimum_samples_per_output=3, maximum_samples_per_output=2),
        r"MaximumSamplesPerOutput: must be >= MinimumSamplesPerOutput \(3\); got 2",
    ),
    "SpatialScaleX inf": (dict(spatial_scale_x=np.inf), r"SpatialScaleX: must be >= 0 and not infinite .*; got inf"),
    "SpatialScaleY negative (DirectML rejects it, E31)": (
        dict(spatial_scale_y=-0.25),
        r"SpatialScaleY: must be >= 0 and not infinite .*; got -0.25",
    ),
    "zero size": (dict(in_sizes=(2, 3, 0, 6)), r"InputTensor.Sizes\[2\]: sizes may not be 0"),
}


@pytest.mark.parametrize("case", VALID, ids=str)
def test_rule_accepts(case: str) -> None:
    make_desc(**VALID[case]).validate()


@pytest.mark.parametrize("case", INVALID, ids=str)
def test_rule_rejects(case: str) -> None:
    kwargs, message = INVALID[case]
    with pytest.raises(InvalidDescError, match=message) as info:
        make_desc(**kwargs).validate()
    assert info.value.hresult == 0x80070057
    assert str(info.value).startswith("DML_ROI_ALIGN_OPERATOR_DESC.")


@pytest.mark.parametrize(
    "attrs, message",
    [
        (dict(interpolation_mode=2), r"InterpolationMode: 2 is not a recognized value for DML_INTERPOLATION_MODE"),
        (dict(reduction_function="MEAN"), r"ReductionFunction: 'MEAN' is not a recognized value"),
        (dict(maximum_samples_per_output=2**32), r"MaximumSamplesPerOutput: must be an unsigned 32-bit integer"),
        (dict(minimum_samples_per_output=-1), r"MinimumSamplesPerOutput: must be an unsigned 32-bit integer"),
        (dict(spatial_scale_x="1"), r"SpatialScaleX: must be a number"),
    ],
)
def test_member_types_rejected_at_construction(attrs, message) -> None:
    with pytest.raises(InvalidDescError, match=message):
        make_desc(**attrs)


def test_members_are_coerced() -> None:
    desc = make_desc(reduction_function="DML_REDUCE_FUNCTION_MAX", interpolation_mode=0, spatial_scale_x=0.1)
    assert desc.reduction_function is dmlops.ReduceFunction.MAX
    assert desc.interpolation_mode is dmlops.InterpolationMode.NEAREST_NEIGHBOR
    assert desc.spatial_scale_x == float(np.float32(0.1))  # DML FLOAT members are 32-bit
    assert desc.num_rois == 4 and desc.batch_count == 2


def test_json_round_trip() -> None:
    desc = make_desc(roi_sizes=(1, 1, 4, 4), out_of_bounds_input_value=-np.inf, reduction_function="MAX")
    data = desc.to_dml_dict()
    assert data["ReductionFunction"] == "MAX" and data["OutOfBoundsInputValue"] == "-inf"
    assert dmlops.desc_from_json("DML_OPERATOR_ROI_ALIGN", data) == desc


# -- feature levels -----------------------------------------------------------------------------


def test_feature_level_gating() -> None:
    desc = make_desc()
    with pytest.raises(
        InvalidDescError, match=r"introduced in DML_FEATURE_LEVEL_3_0; not available at DML_FEATURE_LEVEL_2_1"
    ):
        desc.validate("2_1")
    desc.validate("3_0")
    u64 = make_desc(bi_type="UINT64")
    with pytest.raises(
        InvalidDescError,
        match=r"BatchIndicesTensor.DataType: must be one of UINT32 at DML_FEATURE_LEVEL_4_1; "
        r"got DML_TENSOR_DATA_TYPE_UINT64",
    ):
        u64.validate("4_1")
    u64.validate("5_0")
    u64.validate()


def test_samples_per_output_rule() -> None:
    # Ruling 5: per axis ceil(|size| / output), clamped to [Min, Max].
    assert samples_per_output(8.0, 4, 1, UINT32_MAX) == 2
    assert samples_per_output(8.5, 4, 1, UINT32_MAX) == 3
    assert samples_per_output(-8.5, 4, 1, UINT32_MAX) == 3  # inverted regions count by |size|
    assert samples_per_output(0.0, 4, 1, UINT32_MAX) == 1  # zero-size: sample the point
    assert samples_per_output(100.0, 4, 2, 5) == 5
    assert samples_per_output(1.0, 4, 2, 5) == 2
    assert samples_per_output(float("inf"), 4, 2, 5) == 2  # all samples out of bounds anyway


# -- values against the loop oracle -------------------------------------------------------------


def random_case(seed: int, dtype, *, fixed: int | None):
    rng = np.random.RandomState(seed)
    n, c = 2, 2
    h, w = rng.randint(3, 8), rng.randint(3, 8)
    oh, ow = rng.randint(1, 4), rng.randint(1, 4)
    x = (rng.permutation(n * c * h * w) - n * c * h * w / 2 + rng.uniform(0, 0.5, n * c * h * w)).astype(dtype)
    x = x.reshape(n, c, h, w)
    sx, sy = rng.choice([1.0, 0.5, 0.25]), rng.choice([1.0, 0.5])
    rois = []
    for kind in ["inside", "partly", "outside", "zero", "inverted", "point", "inside", "partly"]:
        if kind == "inside":
            x1, y1 = rng.uniform(0, w / sx), rng.uniform(0, h / sy)
            x2, y2 = rng.uniform(x1, w / sx), rng.uniform(y1, h / sy)
        elif kind == "partly":
            x1, y1 = rng.uniform(-3 / sx, w / sx), rng.uniform(-3 / sy, h / sy)
            x2, y2 = x1 + rng.uniform(0, 2 * w / sx), y1 + rng.uniform(0, 2 * h / sy)
        elif kind == "outside":
            x1, y1 = rng.uniform(w + 1.5, w + 4) / sx, rng.uniform(-4, 4) / sy
            x2, y2 = x1 + rng.uniform(0, 3), y1 + rng.uniform(0, 5)
        elif kind == "zero":
            x1, y1 = rng.uniform(-2, w + 1) / sx, rng.uniform(-2, h + 1) / sy
            x2, y2 = x1, y1 + rng.uniform(0, 3)
        elif kind == "inverted":
            x2, y2 = rng.uniform(0, w / sx), rng.uniform(0, h / sy)
            x1, y1 = x2 + rng.uniform(0, w / sx), y2 + rng.uniform(0, h / sy)
        else:  # point
            x1 = x2 = rng.uniform(-1, w) / sx
            y1 = y2 = rng.uniform(-1, h) / sy
        rois.append([x1, y1, x2, y2])
    rois = np.array(rois).astype(dtype)
    batch = rng.randint(0, n, len(rois)).astype(np.uint32)
    lo, hi = (fixed, fixed) if fixed else (1, UINT32_MAX)
    return x, rois, batch, (oh, ow), (float(np.float32(sx)), float(np.float32(sy))), lo, hi


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("samples", [None, 1, 2, 3], ids=lambda s: "adaptive" if s is None else f"fixed{s}")
@pytest.mark.parametrize("mode", ["LINEAR", "NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("reduction", ["AVERAGE", "MAX"])
def test_matches_loop_oracle(backend: str, reduction: str, mode: str, samples, dtype, seed: int) -> None:
    x, rois, batch, out_size, scale, lo, hi = random_case(seed, dtype, fixed=samples)
    oob = -2.5 if seed % 2 else 0.0
    got = dmlops.roi_align(
        x,
        rois,
        batch,
        out_size,
        spatial_scale=scale,
        reduction_function=reduction,
        interpolation_mode=mode,
        out_of_bounds_input_value=oob,
        minimum_samples_per_output=lo,
        maximum_samples_per_output=hi,
        backend=backend,
    )
    want = roi_align_oracle(
        x, rois, batch, out_size, spatial_scale=scale, reduction=reduction, mode=mode, oob=oob,
        min_samples=lo, max_samples=hi,
    )  # fmt: skip
    assert_close(got, want.astype(dtype))


def test_adaptive_clamped_by_min_and_max(backend: str) -> None:
    rng = np.random.RandomState(7)
    x = rng.uniform(-5, 5, (1, 2, 9, 11)).astype(np.float32)
    rois = np.array([[0.3, 0.1, 10.7, 8.9], [10.0, 8.0, 1.0, 0.5], [2.0, 2.0, 2.25, 7.0]], dtype=np.float32)
    batch = np.zeros(3, dtype=np.uint32)
    for lo, hi in [(1, 2), (2, 3), (3, UINT32_MAX)]:
        for reduction in ("AVERAGE", "MAX"):
            got = dmlops.roi_align(
                x, rois, batch, (2, 3), reduction_function=reduction, minimum_samples_per_output=lo,
                maximum_samples_per_output=hi, backend=backend,
            )  # fmt: skip
            want = roi_align_oracle(x, rois, batch, (2, 3), reduction=reduction, min_samples=lo, max_samples=hi)
            assert_close(got, want.astype(np.float32))


@pytest.mark.parametrize("backend", backend_params("numpy", "cpu"))
def test_sample_grids_too_large_for_memory_are_refused(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """MinimumSamplesPerOutput near 2^31 asks for billions of samples per axis: the NumPy
    and CPU backends refuse with AllocationError (exit 2 from the CLI) before allocating.
    Found by the model fuzzer, where NumPy's own MemoryError surfaced as an internal error."""
    import dmlops.memory

    monkeypatch.setattr(dmlops.memory, "available_memory", lambda: 1 << 30)
    x = np.ones((1, 1, 4, 4), dtype=np.float32)
    with pytest.raises(AllocationError, match=r"DML_ROI_ALIGN_OPERATOR_DESC: the \d+ samples"):
        dmlops.roi_align(
            x, [[0, 0, 3, 3]], [0], 1, minimum_samples_per_output=2**31 - 1, maximum_samples_per_output=UINT32_MAX,
            backend=backend,
        )  # fmt: skip


@pytest.mark.parametrize("width", [80, 77])
@pytest.mark.parametrize("out_size", [(7, 7), (2, 1), (11, 13)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("samples", [None, 2], ids=lambda s: "adaptive" if s is None else f"fixed{s}")
@pytest.mark.parametrize("mode", ["LINEAR", "NEAREST_NEIGHBOR"])
def test_average_over_large_regions(backend: str, mode: str, samples, dtype, out_size, width) -> None:
    # Regions wide enough that one output row's column taps fill several warps (7x7), a
    # single output column has more taps than a warp has lanes (2x1 adaptive), taps are
    # shared by neighbouring outputs (11x13 over a small region), and rows or columns of
    # outputs have no in-bounds sample (regions past the edges): every evaluation order
    # of the GPU's separable AVERAGE kernel, with rows read in 16-byte chunks (width 80)
    # and element by element (77).
    rng = np.random.RandomState(11)
    x = rng.uniform(-4, 4, (2, 3, 30, width)).astype(dtype)
    rois = np.array(
        [
            [0.0, 0.0, 80.0, 30.0],
            [-30.0, -12.0, 50.0, 20.0],
            [31.3, 7.2, 34.1, 9.9],
            [75.0, 28.0, 96.0, 41.0],
            [70.5, 25.5, 2.5, 1.5],
            [-9.0, 3.0, 79.5, 29.5],
        ],
        dtype=dtype,
    )
    batch = np.array([0, 1, 1, 0, 1, 0], dtype=np.uint32)
    lo, hi = (samples, samples) if samples else (1, UINT32_MAX)
    kw = dict(interpolation_mode=mode, out_of_bounds_input_value=-1.25, minimum_samples_per_output=lo,
              maximum_samples_per_output=hi)  # fmt: skip
    got = dmlops.roi_align(x, rois, batch, out_size, backend=backend, **kw)
    want = roi_align_oracle(
        x, rois, batch, out_size, mode=mode, oob=-1.25, min_samples=lo, max_samples=hi
    )  # fmt: skip
    assert_close(got, want.astype(dtype))


def test_max_of_negative_values_starts_from_minus_inf(backend: str) -> None:
    # The ROI_ALIGN1 pseudo-code starts MAX at 0 (erratum E17); all-negative inputs expose it.
    x = -np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    got = dmlops.roi_align(x, [[0, 0, 4, 4]], [0], 2, reduction_function="MAX", backend=backend)
    assert_close(got, np.array([[[[-1, -3], [-9, -11]]]], dtype=np.float32))  # samples on pixel centres


def test_max_takes_interpolated_samples_not_corner_terms(backend: str) -> None:
    # ONNX-CPU's max mode takes the largest weighted corner; DML the largest whole sample.
    x = np.array([[[[0, 10], [20, 30]]]], dtype=np.float32)
    got = dmlops.roi_align(
        x, [[0.5, 0.5, 1.5, 1.5]], [0], 1, reduction_function="MAX", minimum_samples_per_output=1,
        maximum_samples_per_output=1, backend=backend,
    )  # fmt: skip
    assert_close(got, np.array([[[[15.0]]]], dtype=np.float32))  # sample at (0.5, 0.5): the mean of 4


# -- nearest ties, out-of-bounds boundaries -----------------------------------------------------


def one_sample(x, roi, out_size, backend, **kw):
    return dmlops.roi_align(
        x, np.array([roi], dtype=x.dtype), [0], out_size, minimum_samples_per_output=1,
        maximum_samples_per_output=1, backend=backend, **kw,
    )[0, 0]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: np.dtype(d).name)
def test_nearest_half_pixel_ties_go_up(backend: str, dtype) -> None:
    x = np.arange(20, dtype=dtype).reshape(1, 1, 4, 5)
    # x1s = 0.5, step 1: xin = j + 0.5 (every sample a tie); y: ROI [1.5, 3.5] over 2 rows -> 1.5, 2.5.
    got = one_sample(x, [0.5, 1.5, 5.5, 3.5], (2, 5), backend, interpolation_mode="NEAREST_NEIGHBOR")
    # floor(x + 0.5): 0.5->1, 1.5->2, ..., 4.5 (<= W, clamped to 4) -> 4; rows 1.5->2, 2.5->3.
    want = np.array([[11, 12, 13, 14, 14], [16, 17, 18, 19, 19]], dtype=dtype)
    assert_close(got, want, exact=True)
    # Just below a tie rounds down: x1s = 0.5 - 2^-10 (exact in float16 too).
    got = one_sample(x, [0.5 - 2**-10, 0, 5.5 - 2**-10, 1], (1, 5), backend, interpolation_mode="NEAREST_NEIGHBOR")
    assert_close(got, np.array([[0, 1, 2, 3, 4]], dtype=dtype), exact=True)


@pytest.mark.parametrize("mode", ["LINEAR", "NEAREST_NEIGHBOR"])
def test_out_of_bounds_boundaries(backend: str, mode: str) -> None:
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4) + 1
    kw = dict(interpolation_mode=mode, out_of_bounds_input_value=-7.0)
    # DirectML 1.15.4 (erratum E28): in bounds only strictly inside (-1, InputWidth).
    # x1s = -1, step 1: xin = -1 (exactly -1: out of bounds), 0, 1, 2.
    got = one_sample(x, [-1, 0, 3, 1], (1, 4), backend, **kw)
    assert_close(got, np.array([[-7, 1, 2, 3]], dtype=np.float32), exact=True)
    # x1s = -1 + 1/16: xin = -0.9375 is in bounds, clamped to column 0.
    got = one_sample(x, [-0.9375, 0, 3.0625, 1], (1, 4), backend, **kw)
    assert got[0, 0] == 1.0
    # One sample at the ROI's x1s: xin = 4 = InputWidth exactly is out of bounds;
    # 4 - 1/16 is in bounds, clamped to column 3.
    got = one_sample(x, [4, 0, 5, 1], (1, 1), backend, **kw)
    assert_close(got, np.array([[-7]], dtype=np.float32), exact=True)
    got = one_sample(x, [3.9375, 0, 4.9375, 1], (1, 1), backend, **kw)
    assert_close(got, np.array([[4]], dtype=np.float32), exact=True)
    # Same in y: yin = -1 and yin = 3 = InputHeight read -7; just inside clamps to rows 0 and 2.
    got = one_sample(x, [0, -1, 1, 3], (4, 1), backend, **kw)
    assert_close(got, np.array([[-7], [1], [5], [9]], dtype=np.float32), exact=True)
    got = one_sample(x, [0, 3, 1, 4], (1, 1), backend, **kw)
    assert_close(got, np.array([[-7]], dtype=np.float32), exact=True)
    got = one_sample(x, [0, 2.9375, 1, 3.9375], (1, 1), backend, **kw)
    assert_close(got, np.array([[9]], dtype=np.float32), exact=True)
    got = one_sample(x, [0, -0.9375, 1, 0.0625], (1, 1), backend, **kw)
    assert_close(got, np.array([[1]], dtype=np.float32), exact=True)


def test_out_of_bounds_samples_count_in_the_average(backend: str) -> None:
    x = np.full((1, 1, 2, 2), 4.0, dtype=np.float32)
    # Two samples along x: xin = -1.5 (out) and 0.5 (in, = 4); mean of -2 and 4 is 1.
    got = dmlops.roi_align(
        x, [[-1.5, 0, 0.5, 1]], [0], 1, out_of_bounds_input_value=-2.0, minimum_samples_per_output=2,
        maximum_samples_per_output=2, backend=backend,
    )  # fmt: skip
    # y samples: yin = 0.25 - 0.5 = -0.25 and 0.75 - 0.5 = 0.25 (in); x: -1.5 + 0.5·... see oracle
    want = roi_align_oracle(x, [[-1.5, 0, 0.5, 1]], [0], (1, 1), oob=-2.0, min_samples=2, max_samples=2)
    assert_close(got, want.astype(np.float32))
    assert got[0, 0, 0, 0] == 1.0


def test_everything_out_of_bounds_reads_the_value(backend: str) -> None:
    x = np.ones((1, 2, 3, 3), dtype=np.float16)
    for reduction in ("AVERAGE", "MAX"):
        got = dmlops.roi_align(
            x, [[10, 10, 20, 20], [-30, 0, -5, 2]], [0, 0], (2, 2), out_of_bounds_input_value=3.5,
            reduction_function=reduction, backend=backend,
        )  # fmt: skip
        assert_close(got, np.full((2, 2, 2, 2), 3.5, dtype=np.float16), exact=True)


def test_non_finite_values(backend: str) -> None:
    # DirectML 1.15.4's arithmetic (erratum E38): a LINEAR sample is a + (b - a)·t along y, then
    # along x, in float32, every tap read, so an inf or nan tap gives nan even at weight 0. On
    # pixel centres (t = 0) the second taps are the next column and row: samples before an inf
    # or nan pixel in x or y are nan. MAX ignores nan (erratum E29): a MAX of only nan gives -FLT_MAX.
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 0, 3] = np.inf
    x[0, 0, 3, 0] = np.nan
    roi = [[0, 0, 4, 4]]
    lowest = np.finfo(np.float32).min
    for reduction in ("AVERAGE", "MAX"):
        got = dmlops.roi_align(
            x, roi, [0], 4, reduction_function=reduction, maximum_samples_per_output=1, backend=backend
        )
        want = x.copy()
        want[0, 0, 0, 2:] = np.nan  # (0, 2) lerps with column 3 at t = 0; (0, 3) with itself
        want[0, 0, 2:, 0] = np.nan  # likewise along y
        if reduction == "MAX":
            want = np.where(np.isnan(want), lowest, want)
        assert_close(got, want, exact=True)
        # NEAREST reads one pixel: inf stays inf, nan is nan (AVERAGE) or ignored (MAX).
        got = dmlops.roi_align(
            x, roi, [0], 4, reduction_function=reduction, interpolation_mode="NEAREST_NEIGHBOR",
            maximum_samples_per_output=1, backend=backend,
        )  # fmt: skip
        assert_close(got, x if reduction == "AVERAGE" else np.where(np.isnan(x), lowest, x), exact=True)
        got = dmlops.roi_align(x, roi, [0], 2, reduction_function=reduction, backend=backend)
        want = roi_align_oracle(x, roi, [0], (2, 2), reduction=reduction)
        assert_close(got, want.astype(np.float32))
        # AVERAGE: bins (0, 1) and (1, 0) hold a nan sample; MAX skips it (bin (0, 1): max of 5.5, 6.5, nan, nan).
        if reduction == "AVERAGE":
            assert np.isnan(got[0, 0, 0, 1]) and np.isnan(got[0, 0, 1, 0]) and got[0, 0, 1, 1] == 12.5
        else:
            assert got[0, 0, 0, 1] == 7.0 and got[0, 0, 1, 1] == 15.0
    got = dmlops.roi_align(x[:, :, :2, :2], roi, [0], 2, out_of_bounds_input_value=np.inf, backend=backend)
    # Samples at 0..3 on a 2x2 image: bin (0, 0) is inside (mean 2.5), every other bin reads x = 3 > W.
    assert got[0, 0, 0, 0] == 2.5 and np.isinf(got.reshape(-1)[1:]).all()


def test_linear_arithmetic_is_directml_float32_lerp(backend: str) -> None:
    # Hand-computed (erratum E38): one sample at (x, y) = (t + 0.5 - 0.5, u + 0.5 - 0.5) of a
    # zero-size ROI [t + 0.5, u + 0.5, t + 0.5, u + 0.5].
    def sample(image, t, u, **kw):
        image = np.asarray(image, np.float32).reshape(1, 1, *np.shape(image))
        roi = np.array([[t + 0.5, u + 0.5, t + 0.5, u + 0.5]], np.float32)
        return dmlops.roi_align(
            image, roi, [0], 1, minimum_samples_per_output=1, maximum_samples_per_output=1, backend=backend, **kw
        )[0, 0, 0, 0]

    inf, big = np.inf, np.float32(3e38)
    with np.errstate(all="ignore"):
        # [1, inf] at t = 0: 1 + (inf - 1)·0 = nan; at t = 0.5 along x: inf, but the 1-row image's
        # y lerp of the inf column with itself, inf + (inf - inf)·0, is nan first.
        assert np.isnan(sample([[1, inf]], 0.0, 0.0))
        assert np.isnan(sample([[1, inf]], 0.5, 0.0))
        assert np.isnan(sample([[inf]], 0.25, 0.25))
        # a coordinate in (-1, 0) has both taps on pixel 0: the inf after it is not read
        assert sample([[1, inf, 3]], -0.5, 0.0) == 1.0
        assert sample([[1], [inf]], 0.0, -0.5) == 1.0
        # near FLT_MAX, b - a overflows: [[3e38, -3e38], [-3e38, 3e38]] at (0.5, 0.5), y first
        # (each column: 3e38 + (-inf)·0.5 = -inf), then x: -inf + (inf - -inf)·0.5 = nan.
        img = np.array([[big, -big], [-big, big]], np.float32)
        col0 = img[0, 0] + (img[1, 0] - img[0, 0]) * np.float32(0.5)
        col1 = img[0, 1] + (img[1, 1] - img[0, 1]) * np.float32(0.5)
        want = col0 + (col1 - col0) * np.float32(0.5)
        assert np.isnan(want)
        np.testing.assert_array_equal(sample(img, 0.5, 0.5), want)
        # rounding: y then x, no FMA, float32 (an exact value that the float64 weighted sum misses)
        img = np.array([[1, 2**24], [3, 7]], np.float32)
        t, u = np.float32(0.375), np.float32(0.625)
        col0 = img[0, 0] + (img[1, 0] - img[0, 0]) * u
        col1 = img[0, 1] + (img[1, 1] - img[0, 1]) * u
        np.testing.assert_array_equal(sample(img, float(t), float(u)), col0 + (col1 - col0) * t)


def test_average_is_a_float32_running_sum_in_sample_order(backend: str) -> None:
    # AVERAGE (erratum E38): samples added in row-major order into a float32 sum from +0, then
    # divided by the count. Three samples along x: 1e8, 1, -1e8 gives (1e8 + 1 - 1e8) / 3 = 0 in
    # float32 (1 is lost), 1/3 in exact arithmetic. Out-of-bounds samples count in order too:
    # two samples of OutOfBoundsInputValue 3e38 overflow the sum to inf even when all are out.
    x = np.array([[1e8, 1, -1e8]], np.float32).reshape(1, 1, 1, 3)
    got = dmlops.roi_align(x, [[0, 0, 3, 1]], [0], 1, backend=backend)
    assert got[0, 0, 0, 0] == 0.0
    with np.errstate(all="ignore"):
        got = dmlops.roi_align(x, [[10, 10, 12, 11]], [0], 1, out_of_bounds_input_value=3e38, backend=backend)
        assert np.isposinf(got[0, 0, 0, 0])
        got = dmlops.roi_align(x, [[-3, 0, 3, 1]], [0], 1, out_of_bounds_input_value=0.1, backend=backend)
    # samples at x = -2.5, -1.5 (out: 0.1 each) ... -0.5, 0.5, 1.5, 2.5 -> 0.1 + 0.1 + 1e8 + ...
    f, half = np.float32, np.float32(0.5)
    want = f(0)
    for v in (f(0.1), f(0.1), f(1e8), f(1e8) + (f(1) - f(1e8)) * half, f(1) + (f(-1e8) - f(1)) * half, f(-1e8)):
        want = want + v
    assert got[0, 0, 0, 0] == np.float32(want / np.float32(6))
    # +0 start: a sum of -0 samples is +0.
    got = dmlops.roi_align(np.full((1, 1, 2, 2), -0.0, np.float32), [[0, 0, 2, 2]], [0], 1, backend=backend)
    assert got[0, 0, 0, 0] == 0 and not np.signbit(got[0, 0, 0, 0])


# -- batch indices ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [2, 7, 2**32 - 1])
def test_bad_batch_index_raises(backend: str, bad: int) -> None:
    x = np.zeros((2, 1, 3, 3), dtype=np.float32)
    rois = np.zeros((3, 4), dtype=np.float32)
    with pytest.raises(DataIndexError, match=rf"ROI 1 has batch index {bad}, outside \[0, BatchCount = 2\)"):
        dmlops.roi_align(x, rois, np.array([1, bad, 0], dtype=np.uint32), 2, backend=backend)
    with pytest.raises(IndexError):
        dmlops.roi_align(x, rois, np.array([0, 1, 2**40], dtype=np.uint64), 2, backend=backend)


def test_negative_batch_index_in_a_list_raises() -> None:
    x = np.zeros((2, 1, 3, 3), dtype=np.float32)
    with pytest.raises(DataIndexError, match=r"ROI 0 has batch index -1"):
        dmlops.roi_align(x, [[0, 0, 1, 1]], [-1], 2)


def test_uint64_batch_indices(backend: str) -> None:
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, (3, 2, 4, 5)).astype(np.float32)
    rois = np.array([[0, 0, 5, 4], [1, 1, 3, 2], [-1, 2, 4, 3]], dtype=np.float32)
    b32 = np.array([2, 0, 1], dtype=np.uint32)
    got = dmlops.roi_align(x, rois, b32.astype(np.uint64), 2, backend=backend)
    assert_close(got, roi_align_oracle(x, rois, b32, (2, 2)).astype(np.float32))
    with pytest.raises(InvalidDescError, match=r"must be one of UINT32 at DML_FEATURE_LEVEL_4_1"):
        dmlops.roi_align(x, rois, b32.astype(np.uint64), 2, backend=backend, feature_level="4_1")


# -- strided and broadcast tensors --------------------------------------------------------------


def test_strided_and_broadcast_inputs(backend: str) -> None:
    rng = np.random.RandomState(11)
    n, c, h, w = 2, 3, 5, 6
    nhwc = rng.uniform(-4, 4, n * h * w * c).astype(np.float32)
    logical = nhwc.reshape(n, h, w, c).transpose(0, 3, 1, 2)
    rois = np.array([[0.5, 0.25, 5.5, 4.0], [6.0, 5.0, -1.0, -0.5], [2.0, 1.0, 2.0, 1.0]], dtype=np.float32)
    batch = np.array([1, 0, 1], dtype=np.uint32)
    # ROIs stored as {1, NumROIs, 4} rows with padding between them (row stride 6).
    roi_buffer = np.zeros(6 * 3, dtype=np.float32)
    roi_buffer.reshape(3, 6)[:, :4] = rois
    desc = RoiAlignDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(n, c, h, w), strides=(h * w * c, 1, w * c, c)),
        roi_tensor=TensorDesc(data_type="FLOAT32", sizes=(1, 3, 4), strides=(18, 6, 1)),
        batch_indices_tensor=TensorDesc(data_type="UINT32", sizes=(1, 3)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(3, c, 2, 3)),
        reduction_function="AVERAGE",
        interpolation_mode="LINEAR",
        spatial_scale_x=1.0,
        spatial_scale_y=1.0,
        out_of_bounds_input_value=-1.0,
        minimum_samples_per_output=1,
        maximum_samples_per_output=4,
    )
    inputs = {"InputTensor": nhwc, "ROITensor": roi_buffer, "BatchIndicesTensor": batch.reshape(1, 3)}
    got = dmlops.execute(desc, inputs, backend=backend)["OutputTensor"]
    want = roi_align_oracle(logical, rois, batch, (2, 3), oob=-1.0, max_samples=4)
    assert_close(got, want.astype(np.float32))

    # Broadcast: one plane shared by both batches (stride 0) and by all channels (stride 0).
    plane = rng.uniform(-4, 4, h * w).astype(np.float32)
    bcast = dmlops.execute(
        RoiAlignDesc(
            **{
                **{f: getattr(desc, f) for f in ("roi_tensor", "batch_indices_tensor", "output_tensor")},
                "input_tensor": TensorDesc(data_type="FLOAT32", sizes=(n, c, h, w), strides=(0, 0, w, 1)),
                "reduction_function": "MAX",
                "interpolation_mode": "NEAREST_NEIGHBOR",
                "spatial_scale_x": 1.0,
                "spatial_scale_y": 1.0,
                "out_of_bounds_input_value": -1.0,
                "minimum_samples_per_output": 2,
                "maximum_samples_per_output": 2,
            }
        ),
        {"InputTensor": plane, "ROITensor": roi_buffer, "BatchIndicesTensor": batch.reshape(1, 3)},
        backend=backend,
    )["OutputTensor"]
    logical_b = np.broadcast_to(plane.reshape(1, 1, h, w), (n, c, h, w))
    want = roi_align_oracle(
        logical_b, rois, batch, (2, 3), reduction="MAX", mode="NEAREST_NEIGHBOR", oob=-1.0, min_samples=2,
        max_samples=2,
    )  # fmt: skip
    assert_close(bcast, want.astype(np.float32))


def test_strided_output_and_out_argument() -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    out = np.full((1, 1, 4, 4), -3.0, dtype=np.float32)
    result = dmlops.roi_align(x, [[0, 0, 4, 4]], [0], 4, maximum_samples_per_output=1, out=out)
    assert result is out
    np.testing.assert_array_equal(out, x)


def test_wrapper_arguments() -> None:
    x = np.arange(30, dtype=np.float32).reshape(1, 1, 5, 6)
    roi = np.array([[0, 0, 6, 5]], dtype=np.float32)
    # spatial_scale=(sx, sy) and output_size=(h, w)
    a = dmlops.roi_align(x, roi * np.float32(2), [0], (5, 6), spatial_scale=(0.5, 0.5), maximum_samples_per_output=1)
    np.testing.assert_array_equal(a, x)
    b = dmlops.roi_align(x, roi * np.array([2, 4, 2, 4], dtype=np.float32), [0], (5, 6), spatial_scale=(0.5, 0.25))
    np.testing.assert_array_equal(b, dmlops.roi_align(x, roi, [0], (5, 6)))
    with pytest.raises(ValueError, match="spatial_scale must be a number or a pair"):
        dmlops.roi_align(x, roi, [0], 2, spatial_scale=(1.0, 2.0, 3.0))
    with pytest.raises(InvalidDescError, match=r"BatchIndicesTensor.DataType"):
        dmlops.roi_align(x, roi, np.array([0], dtype=np.int64), 2)


def test_blocked_evaluation_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Force tiny blocks so the channel chunks and sample-row sub-blocks of the reference run.
    import dmlops.reference.roi as ref

    x, rois, batch, out_size, scale, _, _ = random_case(5, np.float32, fixed=None)
    x = np.concatenate([x] * 3, axis=1)  # 6 channels
    x[1, 4, 0, 0] = np.inf
    kw = dict(spatial_scale=scale, minimum_samples_per_output=2, maximum_samples_per_output=7)
    expected = {r: dmlops.roi_align(x, rois, batch, out_size, reduction_function=r, **kw) for r in ("AVERAGE", "MAX")}
    # Blocks of part of one output row's samples: the running sums go on across blocks, bit for bit.
    monkeypatch.setattr(ref, "STACK_ELEMENTS", 5)
    for r, want in expected.items():
        got = dmlops.roi_align(x, rois, batch, out_size, reduction_function=r, **kw)
        np.testing.assert_array_equal(got, want)


def _many_rois(seed: int, n_rois: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Many ROIs of few crop shapes and sample counts, some partly or wholly outside, some inverted."""
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
    size = rng.choice([0.0, 1.5, 3.0, 6.5], size=(n_rois, 2)) * rng.choice([1, 1, 1, -1], size=(n_rois, 2))
    corner = rng.uniform(-4, 13, size=(n_rois, 2))
    rois = np.concatenate([corner, corner + size], axis=1).astype(np.float32)
    return x, rois, rng.randint(0, 2, n_rois).astype(np.uint32)


@pytest.mark.parametrize("reduction", ["AVERAGE", "MAX"])
@pytest.mark.parametrize("mode", ["LINEAR", "NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("non_finite", [False, True], ids=["finite", "inf-nan"])
def test_vectorised_reference_is_bit_identical_to_one_roi_at_a_time(
    reduction: str, mode: str, non_finite: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reference stacks ROIs by crop shape (AVERAGE) or sample counts (MAX) and takes them
    # in chunks and blocks; none of that may change a bit: each ROI alone, and tiny chunks and
    # stacks, give the very same float64 results (before rounding) as one call over all ROIs.
    import dmlops.reference.roi as ref
    from dmlops.enums import FeatureLevel

    x, rois, batch = _many_rois(3, 60)
    if non_finite:
        x[0, 1, 4, 5], x[1, 2, 0, 0], x[1, 0, 8, 10] = np.inf, np.nan, -np.inf
    kw = dict(reduction_function=reduction, interpolation_mode=mode, minimum_samples_per_output=1)

    def run(r: np.ndarray, b: np.ndarray, image: np.ndarray = x) -> np.ndarray:
        desc = RoiAlignDesc(
            input_tensor=TensorDesc(data_type="FLOAT32", sizes=x.shape),
            roi_tensor=TensorDesc(data_type="FLOAT32", sizes=r.shape),
            batch_indices_tensor=TensorDesc(data_type="UINT32", sizes=b.shape),
            output_tensor=TensorDesc(data_type="FLOAT32", sizes=(r.shape[0], 3, 2, 3)),
            spatial_scale_x=1.0,
            spatial_scale_y=0.5,
            out_of_bounds_input_value=-0.25,
            maximum_samples_per_output=UINT32_MAX,
            **kw,
        )
        inputs = {"InputTensor": image, "ROITensor": r, "BatchIndicesTensor": b}
        return ref.compute_roi_align(desc, inputs, feature_level=FeatureLevel.latest(), strict=False)["OutputTensor"]

    everything = run(rois, batch)
    one_at_a_time = np.concatenate([run(rois[i : i + 1], batch[i : i + 1]) for i in range(len(rois))])
    np.testing.assert_array_equal(everything.view(np.uint64), one_at_a_time.view(np.uint64))
    # A non-contiguous input is read through index arrays instead of a flat take: same values.
    padded = np.zeros((2, 3, 10, 14), np.float32)
    padded[:, :, 1:, 2:13] = x
    np.testing.assert_array_equal(run(rois, batch, padded[:, :, 1:, 2:13]).view(np.uint64), everything.view(np.uint64))
    monkeypatch.setattr(ref, "CHUNK_ELEMENTS", 600)
    monkeypatch.setattr(ref, "STACK_ELEMENTS", 50)
    np.testing.assert_array_equal(run(rois, batch).view(np.uint64), everything.view(np.uint64))


# -- ONNX Runtime CPU RoiAlign-16 half_pixel parity ----------------------------------------------


def _ort_roi_align(x, rois, batch, out_size, *, spatial_scale: float, sampling_ratio: int) -> np.ndarray:
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    node = helper.make_node(
        "RoiAlign",
        ["X", "rois", "batch_indices"],
        ["Y"],
        mode="avg",
        output_height=out_size[0],
        output_width=out_size[1],
        sampling_ratio=sampling_ratio,
        spatial_scale=spatial_scale,
        coordinate_transformation_mode="half_pixel",
    )
    graph = helper.make_graph(
        [node],
        "roi_align",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape)),
            helper.make_tensor_value_info("rois", TensorProto.FLOAT, list(rois.shape)),
            helper.make_tensor_value_info("batch_indices", TensorProto.INT64, [rois.shape[0]]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [rois.shape[0], x.shape[1], *out_size])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {"X": x, "rois": rois, "batch_indices": batch.astype(np.int64)}
    return session.run(None, feeds)[0]


@pytest.mark.oracles
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("sampling_ratio", [0, 1, 2, 3], ids=lambda s: "adaptive" if s == 0 else f"fixed{s}")
def test_onnxruntime_half_pixel_parity(backend: str, sampling_ratio: int, seed: int) -> None:
    # ORT's DML EP maps RoiAlign-16 half_pixel to exactly ROI_ALIGN's offsets, sampling_ratio k
    # to Min = Max = k and 0 to Min 1 / Max UINT32_MAX (spec 4.3). ROI sizes are integer multiples
    # of the output size so ORT's float32 ceil(roi / out) is exact; OOB value 0 as ORT.
    rng = np.random.RandomState(seed)
    n, c, h, w = 2, 3, 12, 14
    x = rng.uniform(-10, 10, (n, c, h, w)).astype(np.float32)
    out_h, out_w = rng.randint(1, 4), rng.randint(1, 4)
    spatial_scale = float(rng.choice([1.0, 0.5, 0.25]))
    rois = []
    for _ in range(8):
        x1, y1 = rng.randint(-4, w + 2) / 2, rng.randint(-4, h + 2) / 2  # half pixels, may leave the image
        # ONNX's adaptive count is 0 for a zero-size ROI (output 0); DML samples the point (spec 4.3).
        smallest = 0 if sampling_ratio else 1
        kx, ky = rng.randint(smallest, 6), rng.randint(smallest, 6)
        rois.append(np.array([x1, y1, x1 + kx * out_w, y1 + ky * out_h]) / spatial_scale)
    rois = np.array(rois, dtype=np.float32)
    batch = rng.randint(0, n, len(rois)).astype(np.uint32)
    lo, hi = (sampling_ratio, sampling_ratio) if sampling_ratio else (1, UINT32_MAX)
    want = _ort_roi_align(x, rois, batch, (out_h, out_w), spatial_scale=spatial_scale, sampling_ratio=sampling_ratio)
    got = dmlops.roi_align(
        x, rois, batch, (out_h, out_w), spatial_scale=spatial_scale, minimum_samples_per_output=lo,
        maximum_samples_per_output=hi, backend=backend,
    )  # fmt: skip
    # ORT keeps samples exactly on -1 and InputWidth/Height in bounds; DirectML does not (E28).
    on_bounds = rois_sampling_the_bounds(
        x.shape, rois, (out_h, out_w), spatial_scale=(np.float32(spatial_scale),) * 2, min_samples=lo, max_samples=hi
    )
    assert (~on_bounds).sum() >= 2
    np.testing.assert_allclose(got[~on_bounds], want[~on_bounds], rtol=1e-5, atol=1e-5)


@pytest.mark.oracles
def test_onnxruntime_reproduces_the_dml_verified_vector() -> None:
    # The vector of tests/vectors/roi_align/half_pixel_zero_size_rois.json through ORT CPU as well.
    x = np.arange(75, dtype=np.float32).reshape(1, 3, 5, 5)
    rois = np.array(
        [[7, 5, 7, 5], [-15, -15, -15, -15], [-10, 21, -10, 21], [13, 8, 13, 8], [-14, 19, -14, 19]],
        dtype=np.float32,
    )
    batch = np.zeros(5, dtype=np.uint32)
    want = _ort_roi_align(x, rois, batch, (3, 4), spatial_scale=1 / 16, sampling_ratio=2)
    got = dmlops.roi_align(
        x, rois, batch, (3, 4), spatial_scale=1 / 16, minimum_samples_per_output=2, maximum_samples_per_output=2
    )
    np.testing.assert_array_equal(got, want)


def _add_one_at_a_time(acc: np.float32, v: np.float32, count: int) -> np.float32:
    for _ in range(count):
        nxt = np.float32(acc + v)
        if nxt == acc or nxt != nxt:
            return nxt
        acc = nxt
    return acc


def test_repeated_out_of_bounds_additions_are_exact_and_fast() -> None:
    # AVERAGE adds OutOfBoundsInputValue once per out-of-bounds sample into a float32 sum
    # (E38); the kernels jump over runs of equal increments. Bit-exact against one addition
    # at a time, including ties, sign changes, subnormals and sums that stop changing.
    pytest.importorskip("numba")
    from dmlops.cpu.roi import _add_repeated

    f = np.float32
    rng = np.random.default_rng(7)
    for _ in range(3000):
        acc = f(rng.choice([0.0, rng.normal() * 10.0 ** rng.integers(-40, 39)]))
        v = f(rng.normal() * 10.0 ** rng.integers(-40, 39))
        if rng.random() < 0.3:
            v = f(f(2.0) ** rng.integers(-149, 20) * rng.choice([1, -1, 1.5, -1.5, 0.5, 3]))
        if rng.random() < 0.3 and acc != 0:
            v = f(-acc / rng.integers(1, 10**5))
        count = int(rng.choice([0, 1, 2, 3, 5, 100, 10**4, 2 * 10**5]))
        got, want = f(_add_repeated(acc, v, count)), _add_one_at_a_time(acc, v, count)
        assert got.view(np.uint32) == want.view(np.uint32) or (got != got and want != want), (acc, v, count)
    # 10^12 additions of 1 from 0 stop at 2^24; of 0.1 at 2^21 (where 0.1 is below half an ulp)
    assert _add_repeated(f(0), f(1), 10**12) == 2.0**24
    assert _add_repeated(f(0), f(0.1), 10**12) == 2.0**21


def test_reference_refuses_what_it_cannot_finish() -> None:
    """Adaptive sampling of a region a million pixels across: 10^11 samples per output.
    The numpy reference, which evaluates every sample, refuses it at once (UnsupportedError
    naming its limit) instead of running for hours; below the limit it runs."""
    from dmlops.errors import UnsupportedError
    from dmlops.reference import roi as reference_roi

    x = np.full((1, 2, 9, 12), 2.0, np.float32)
    boxes = np.array([[-5e5, -5e5, 5e5, 5e5]], np.float32)
    desc = make_desc(
        in_sizes=(1, 2, 9, 12), roi_sizes=(1, 4), bi_sizes=(1,), out_sizes=(1, 2, 2, 3), out_of_bounds_input_value=-1.0
    )
    feeds = {"InputTensor": x, "ROITensor": boxes, "BatchIndicesTensor": np.zeros(1, np.uint32)}
    with pytest.raises(UnsupportedError, match=r"evaluates every sample.*more than its limit of 4294967296"):
        dmlops.execute(desc, feeds, backend="numpy")
    small = np.array([[-50, -50, 50, 50]], np.float32)  # 50 x 34 samples per output
    assert 2 * 6 * 50 * 34 < reference_roi.SAMPLE_LIMIT
    out = dmlops.execute(desc, {**feeds, "ROITensor": small}, backend="numpy")["OutputTensor"]
    assert out.shape == (1, 2, 2, 3) and np.all(np.isfinite(out))
