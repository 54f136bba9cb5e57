"""The generic neighbours of the pooling, resampling and roi seed operators: page examples, hand-worked values, rules.

Every expected value here was worked by hand from the rule it tests (and agrees with
DirectML 1.15.4: tests/directml/test_directml_pooling_resampling.py).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops.descs import desc_class, desc_from_json
from dmlops.errors import InvalidDescError, UnsupportedError
from dmlops.ops import pooling as P
from dmlops.ops import resampling as R
from dmlops.ops import roi as O

F32 = np.float32


def row(*values: float) -> np.ndarray:
    """A {1, 1, 1, W} FLOAT32 input."""
    return np.array(values, dtype=F32).reshape(1, 1, 1, -1)


PAGE_X = np.array([[1, 2, 3], [2, 4, 2], [5, 6, 7]], dtype=F32).reshape(1, 1, 3, 3)
"""The forward example of the MAX_POOLING_GRAD page (2x2 window, stride 1)."""


# -- the family claims its operators ---------------------------------------------------------


@pytest.mark.parametrize(
    "operator", ["MAX_POOLING", "MAX_POOLING1", "AVERAGE_POOLING", "AVERAGE_POOLING1", "LP_POOLING", "LP_POOLING1"]
)
def test_pooling_family_claims(operator: str) -> None:
    cls = desc_class(operator)
    assert cls.family == "pooling"
    assert cls.backends[0] == "numpy" and cls.backends[-1] == "directml"
    for backend in ("cpu", "cuda"):  # a backend is claimed exactly when its family module runs the operator
        table = importlib.import_module(f"dmlops.{backend}.pooling").OPERATORS
        assert (backend in cls.backends) == (operator in table), backend


# -- MAX_POOLING, MAX_POOLING1 ---------------------------------------------------------------


def test_max_pooling_page_example() -> None:
    np.testing.assert_array_equal(P.max_pooling(PAGE_X, [2, 2])[0, 0], [[4, 4], [6, 7]])
    values, indices = P.max_pooling1(PAGE_X, [2, 2], return_indices=True)
    np.testing.assert_array_equal(values[0, 0], [[4, 4], [6, 7]])
    np.testing.assert_array_equal(indices[0, 0], [[4, 4], [7, 8]])
    assert indices.dtype == np.uint32


def test_max_pooling1_equals_max_pooling2_without_dilations() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (2, 3, 5, 7)).astype(F32)  # ties
    kw: dict[str, Any] = {"strides": [2, 1], "start_padding": [1, 2], "end_padding": [0, 1]}
    got = P.max_pooling1(x, [3, 2], return_indices=True, **kw)
    want = dmlops.max_pooling2(x, [3, 2], return_indices=True, **kw)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_max_pooling_padding_only_windows_and_nan() -> None:
    # E26: the maximum starts at -FLT_MAX, NaN never wins; windows of only padding give -FLT_MAX at index 0
    x = row(np.nan, 1, 2, np.nan)
    values, indices = P.max_pooling1(x, [1, 2], start_padding=[0, 2], end_padding=[0, 2], return_indices=True)
    lo = np.finfo(F32).min
    np.testing.assert_array_equal(values.ravel(), [lo, lo, 1, 2, 2, lo, lo])
    np.testing.assert_array_equal(indices.ravel(), [0, 0, 1, 2, 2, 3, 0])


# -- AVERAGE_POOLING, AVERAGE_POOLING1 ----------------------------------------------------------


def test_average_pooling_include_padding() -> None:
    x = row(1, 2, 3, 4, 5, 6, 7)
    kw: dict[str, Any] = {"strides": [1, 2], "start_padding": [0, 1], "end_padding": [0, 1]}
    np.testing.assert_array_equal(P.average_pooling(x, [1, 3], **kw).ravel(), [1.5, 3, 5, 6.5])
    # (0 + 1 + 2) / 3 ... (6 + 7 + 0) / 3
    np.testing.assert_array_equal(
        P.average_pooling(x, [1, 3], include_padding=True, **kw).ravel(), F32([3, 9, 15, 13]) / F32(3)
    )


def test_average_pooling_counts_the_whole_window_past_end_padding() -> None:
    # IncludePadding divides by prod(WindowSize) even where the window reaches past EndPadding
    x = row(1, 2, 3, 4)
    desc = desc_from_json(
        "AVERAGE_POOLING",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 5]},
            "Strides": [1, 1],
            "WindowSize": [1, 3],
            "StartPadding": [0, 0],
            "EndPadding": [0, 0],
            "IncludePadding": True,
        },
    )
    got = dmlops.execute(desc, {"InputTensor": x}, backend="numpy")["OutputTensor"].ravel()
    np.testing.assert_array_equal(got, F32([6, 9, 7, 4, 0]) / F32(3))
    without = desc_from_json("AVERAGE_POOLING", {**desc.to_dml_dict(), "IncludePadding": False})
    got = dmlops.execute(without, {"InputTensor": x}, backend="numpy")["OutputTensor"].ravel()
    np.testing.assert_array_equal(got, [2, 3, 3.5, 4, np.nan])  # a window of only padding: 0 / 0


def test_average_pooling_sums_in_float32_window_order() -> None:
    # ((1e8 + 1) - 1e8) in float32 is 0 (float64 would give 1 / 3)
    assert P.average_pooling(row(1e8, 1, -1e8), [1, 3]).ravel()[0] == 0
    assert P.average_pooling(row(1, 1e8, -1e8), [1, 3]).ravel()[0] == 0
    assert P.average_pooling(row(1e8, -1e8, 1), [1, 3]).ravel()[0] == F32(1) / F32(3)


def test_average_pooling1_dilations() -> None:
    x = row(1, 2, 3, 4, 5, 6, 7)
    np.testing.assert_array_equal(P.average_pooling1(x, [1, 2], dilations=[1, 3]).ravel(), [2.5, 3.5, 4.5, 5.5])


def test_summed_windows_with_zero_dilation_are_not_implemented() -> None:
    with pytest.raises(UnsupportedError, match="Dilations"):
        P.average_pooling1(row(1, 2, 3), [1, 2], dilations=[1, 0])
    with pytest.raises(UnsupportedError, match="Dilations"):
        P.lp_pooling1(row(1, 2, 3), [1, 2], dilations=[0, 1])


# -- LP_POOLING, LP_POOLING1 -----------------------------------------------------------------------


def test_lp_pooling_p1_p2_exact() -> None:
    x = row(3, 4, -2, 0.5)
    np.testing.assert_array_equal(P.lp_pooling(x, [1, 2], p=1).ravel(), [7, 6, 2.5])
    np.testing.assert_array_equal(P.lp_pooling(x, [1, 2], p=2).ravel(), np.sqrt(F32([25, 20, 4.25])))


def test_lp_pooling_other_p() -> None:
    got = P.lp_pooling(row(3, 4, -2, 0.5), [1, 2], p=3).ravel()
    np.testing.assert_allclose(got, np.cbrt([91, 72, 8.125]), rtol=1e-6)


def test_lp_pooling_p0_and_padding() -> None:
    # x^0 = 1 for every in-bounds element: s^inf is inf for 2 or more, 1 for one, 0 for none
    x = row(1, 0, np.nan, 4)
    got = P.lp_pooling(x, [1, 2], p=0, start_padding=[0, 3], end_padding=[0, 1]).ravel()
    np.testing.assert_array_equal(got, [0, 0, 1, np.inf, np.inf, np.inf, 1])
    np.testing.assert_array_equal(P.lp_pooling(x, [1, 2], p=2, start_padding=[0, 2]).ravel()[:2], [0, 1])


def test_lp_pooling1_dilations() -> None:
    np.testing.assert_array_equal(P.lp_pooling1(row(3, 9, 4), [1, 2], p=2, dilations=[1, 2]).ravel(), [5])


# -- operator rules (the same ones DirectML's CreateOperator enforces) ---------------------------------


def _pool_json(**change: Any) -> dict[str, Any]:
    desc: dict[str, Any] = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
        "Strides": [1, 1],
        "WindowSize": [1, 1],
        "StartPadding": [0, 0],
        "EndPadding": [0, 0],
    }
    desc.update(change)
    return desc


@pytest.mark.parametrize(
    ("operator", "change", "member"),
    [
        (
            "MAX_POOLING",
            {"Strides": [1] * 3, "WindowSize": [1] * 3, "StartPadding": [0] * 3, "EndPadding": [0] * 3},
            "DML_MAX_POOLING_OPERATOR_DESC.DimensionCount",
        ),
        (
            "LP_POOLING",
            {"P": 2, "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 2, 3, 3]}},
            "DML_LP_POOLING_OPERATOR_DESC.OutputTensor.Sizes[1]",
        ),
        (
            "MAX_POOLING1",
            {"OutputIndicesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 3, 2]}},
            "DML_MAX_POOLING1_OPERATOR_DESC",
        ),
    ],
)
def test_pooling_rules(operator: str, change: dict[str, Any], member: str) -> None:
    desc = desc_from_json(operator, _pool_json(**change))
    with pytest.raises(InvalidDescError, match=member.replace(".", r"\.").replace("[", r"\[")):
        dmlops.execute(desc, {"InputTensor": np.zeros((1, 1, 3, 3), F32)}, backend="numpy")


def test_pooling_accepts_what_directml_accepts() -> None:
    # zero Strides / WindowSize, any output size, any P (CreateOperator accepts each)
    desc = desc_from_json(
        "LP_POOLING",
        _pool_json(P=0, Strides=[0, 1], WindowSize=[1, 0], OutputTensor={"DataType": "FLOAT32", "Sizes": [1, 1, 7, 9]}),
    )
    got = dmlops.execute(desc, {"InputTensor": np.ones((1, 1, 3, 3), F32)}, backend="numpy")["OutputTensor"]
    np.testing.assert_array_equal(got, np.zeros((1, 1, 7, 9), F32))  # an empty window: 0


# -- RESAMPLE, RESAMPLE1, UPSAMPLE_2D -------------------------------------------------------------


@pytest.mark.parametrize("operator", ["RESAMPLE", "RESAMPLE1", "UPSAMPLE_2D"])
def test_resampling_family_claims(operator: str) -> None:
    cls = desc_class(operator)
    assert cls.family == "resampling"
    assert cls.backends == ("numpy", "cpu", "cuda", "directml")  # cpu, cuda: as their RESAMPLE2 equivalent


def test_resample1_nearest_rounds_halves_up() -> None:
    # x = (o - OPO) / S - IPO with 0 / 0 and Scale 2: x = o / 2, floor(x + 0.5): halves go up
    x = row(10, 20, 30)
    got = R.resample1(x, [1, 1, 1, 6], interpolation_mode="NEAREST_NEIGHBOR", scales=[1, 1, 1, 2],
                      input_pixel_offsets=[0] * 4, output_pixel_offsets=[0] * 4)  # fmt: skip
    np.testing.assert_array_equal(got.ravel(), [10, 20, 20, 30, 30, 30])


def test_resample1_nearest_int8_floors() -> None:
    # INT8/UINT8: DirectML takes floor(x) (x = o / 2 - 0.25 with the pixel-centre offsets)
    x = np.array([1, 2, 3, 4], dtype=np.int8).reshape(1, 1, 1, 4)
    got = R.resample1(x, [1, 1, 1, 8], interpolation_mode="NEAREST_NEIGHBOR")
    np.testing.assert_array_equal(got.ravel(), [1, 1, 1, 2, 2, 3, 3, 4])  # index -1 clamps to 0
    got = R.resample1(x.astype(F32), [1, 1, 1, 8], interpolation_mode="NEAREST_NEIGHBOR")
    np.testing.assert_array_equal(got.ravel(), [1, 1, 2, 2, 3, 3, 4, 4])


def test_resample_is_resample1_with_pixel_centres() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 3, 5)).astype(F32)
    for mode in ("LINEAR", "NEAREST_NEIGHBOR"):
        np.testing.assert_array_equal(
            R.resample(x, [1, 2, 7, 3], interpolation_mode=mode),
            R.resample1(x, [1, 2, 7, 3], interpolation_mode=mode),
        )


def test_resample1_linear_is_resample2() -> None:
    x = row(2, 126, -2, 50, 7)  # offsets outside [0, 1): RESAMPLE2's quotient rule (E32) too
    kw: dict[str, Any] = {"scales": [1, 1, 1, 1], "input_pixel_offsets": [0.5, 0.5, 0.5, -1.5]}
    kw["output_pixel_offsets"] = [-0.5, -0.5, -0.5, 0.0]
    got = R.resample1(x, [1, 1, 1, 5], **kw)
    np.testing.assert_array_equal(got, dmlops.resample2(x, [1, 1, 1, 5], **kw))
    np.testing.assert_array_equal(got.ravel(), [188, -66, 76, -14.5, 7])


def test_upsample_2d_page_shape_and_values() -> None:
    x = np.arange(6, dtype=F32).reshape(1, 1, 2, 3)
    np.testing.assert_array_equal(R.upsample_2d(x, (2, 1))[0, 0], [[0, 1, 2], [0, 1, 2], [3, 4, 5], [3, 4, 5]])
    np.testing.assert_array_equal(
        R.upsample_2d(x, (2, 1), interpolation_mode="LINEAR")[0, 0],
        [[0, 1, 2], [0.75, 1.75, 2.75], [2.25, 3.25, 4.25], [3, 4, 5]],
    )


def test_upsample_2d_divides_and_always_interpolates() -> None:
    # (o + 0.5) / 3 divided, not times float32(1 / 3): 2.3333335 and 5.333333 here
    got = R.upsample_2d(row(1, 2, 3, 10), (1, 3), interpolation_mode="LINEAR").ravel()
    assert got[5] == F32(2.3333335) and got[8] == F32(5.333333)
    # a 1x1 upsample still lerps a + (b - a) * 0: [-FLT_MAX, FLT_MAX] -> [NaN, FLT_MAX]
    big = np.finfo(F32).max
    got = R.upsample_2d(row(-big, big), (1, 1), interpolation_mode="LINEAR").ravel()
    assert np.isnan(got[0]) and got[1] == big


@pytest.mark.parametrize(
    ("operator", "desc", "member"),
    [
        (
            "RESAMPLE",
            {"InterpolationMode": "LINEAR", "Scales": [1, 1, 2]},
            "DML_RESAMPLE_OPERATOR_DESC.ScaleCount",
        ),
        (
            "RESAMPLE1",
            {"InterpolationMode": "LINEAR", "Scales": [1, 1, 1, 0.0], "InputPixelOffsets": [0.5] * 4,
             "OutputPixelOffsets": [-0.5] * 4},
            r"DML_RESAMPLE1_OPERATOR_DESC.Scales\[3\]",
        ),
        (
            "UPSAMPLE_2D",
            {"InterpolationMode": "LINEAR", "ScaleSize": {"Width": 0, "Height": 1}},
            "DML_UPSAMPLE_2D_OPERATOR_DESC.ScaleSize.Width",
        ),
        (
            "UPSAMPLE_2D",
            {"InterpolationMode": "LINEAR", "ScaleSize": {"Width": 2, "Height": 1}},
            r"DML_UPSAMPLE_2D_OPERATOR_DESC.OutputTensor.Sizes\[3\]",
        ),
    ],
)  # fmt: skip
def test_resampling_rules(operator: str, desc: dict[str, Any], member: str) -> None:
    tensors = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 5]},
    }
    parsed = desc_from_json(operator, {**tensors, **desc})
    with pytest.raises(InvalidDescError, match=member):
        dmlops.execute(parsed, {"InputTensor": np.zeros((1, 1, 2, 3), F32)}, backend="numpy")


# -- ROI_ALIGN1 ---------------------------------------------------------------------------------------

RAMP = np.arange(8, dtype=F32).reshape(1, 1, 1, 8) * 10
"""[0, 10, ..., 70]: a sample at x reads 10 x (LINEAR)."""


def test_roi_family_claims() -> None:
    cls = desc_class("ROI_ALIGN1")
    assert cls.family == "roi"
    assert cls.backends == ("numpy", "cpu", "cuda", "directml")


def _roi1(roi: list[float], ow: int, **kw: Any) -> np.ndarray:
    kw.setdefault("maximum_samples_per_output", 1)
    kw.setdefault("out_of_bounds_input_value", -999.0)
    return np.asarray(O.roi_align1(RAMP, [roi], [0], (1, ow), **kw)).ravel()


def test_roi_align1_defaults_are_roi_align() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 5, 7)).astype(F32)
    rois = np.array([[0.5, 1, 5, 4], [6, 4, 1, 0.25]], dtype=F32)
    for reduction in ("AVERAGE", "MAX"):
        got = O.roi_align1(x, rois, [1, 0], (3, 2), reduction_function=reduction, maximum_samples_per_output=3)
        want = dmlops.roi_align(x, rois, [1, 0], (3, 2), reduction_function=reduction, maximum_samples_per_output=3)
        np.testing.assert_array_equal(got, want)


def test_roi_align1_offsets() -> None:
    # xin = (j - OutputPixelOffset) * step + x1 - InputPixelOffset, step = 4 / 3
    got = _roi1([1, 0, 5, 0], 3, input_pixel_offset=0.0, output_pixel_offset=0.0)
    np.testing.assert_allclose(got, [10, 10 + 40 / 3, 10 + 80 / 3], rtol=1e-6)
    got = _roi1([1, 0, 5, 0], 3, input_pixel_offset=0.5, output_pixel_offset=0.0)
    np.testing.assert_allclose(got, [5, 5 + 40 / 3, 5 + 80 / 3], rtol=1e-6)
    # InputPixelOffset 1 puts the one row at y = -1: out of bounds (E28)
    np.testing.assert_array_equal(_roi1([1, 0, 5, 0], 3, input_pixel_offset=1.0, output_pixel_offset=0.0), [-999] * 3)


def test_roi_align1_align_regions_to_corners() -> None:
    corners: dict[str, Any] = {"input_pixel_offset": 0.0, "output_pixel_offset": 0.0, "align_regions_to_corners": True}
    np.testing.assert_array_equal(_roi1([0, 0, 3, 0], 4, **corners), [0, 10, 20, 30])  # step 3 / (4 - 1)
    np.testing.assert_array_equal(_roi1([1, 0, 5, 0], 1, **corners), [30])  # one sample: the centre
    np.testing.assert_array_equal(_roi1([1, 0, 5, 0], 1, **{**corners, "output_pixel_offset": 0.25}), [30])
    np.testing.assert_array_equal(_roi1([1, 0, 5, 0], 3, **{**corners, "output_pixel_offset": 0.25}), [5, 25, 45])
    # two samples per output over [1, 5]: 1, 7/3, 11/3, 5
    got = _roi1([1, 0, 5, 0], 2, minimum_samples_per_output=2, maximum_samples_per_output=2, **corners)
    np.testing.assert_allclose(got, [50 / 3, 130 / 3], rtol=1e-6)


def test_roi_align1_corners_bounds_are_the_pixels() -> None:
    # with AlignRegionsToCorners only [0, W - 1] is in bounds, both ends included
    corners: dict[str, Any] = {"input_pixel_offset": 0.0, "output_pixel_offset": 0.0, "align_regions_to_corners": True}
    np.testing.assert_array_equal(_roi1([-0.0001, 0, 7, 0], 2, **corners), [-999, 70])
    np.testing.assert_array_equal(_roi1([0, 0, 7.0001, 0], 2, **corners), [0, -999])
    np.testing.assert_array_equal(_roi1([0, 0, 7, 0], 2, **corners), [0, 70])
    # a row at y = -0.3 is out of bounds with it, in bounds (clamped) without it
    off: dict[str, Any] = {"input_pixel_offset": 0.3, "output_pixel_offset": 0.0}
    np.testing.assert_array_equal(_roi1([1, 0, 5, 0], 3, align_regions_to_corners=True, **off), [-999] * 3)
    np.testing.assert_allclose(_roi1([1, 0, 5, 0], 3, **off), [7, 7 + 40 / 3, 7 + 80 / 3], rtol=1e-6)


def test_roi_align1_rules() -> None:
    with pytest.raises(InvalidDescError, match=r"DML_ROI_ALIGN1_OPERATOR_DESC\.ReductionFunction"):
        O.roi_align1(RAMP, [[0, 0, 1, 1]], [0], 2, reduction_function="SUM")
    with pytest.raises(InvalidDescError, match=r"DML_ROI_ALIGN1_OPERATOR_DESC\.MinimumSamplesPerOutput"):
        O.roi_align1(RAMP, [[0, 0, 1, 1]], [0], 2, minimum_samples_per_output=0)
    with pytest.raises(InvalidDescError, match=r"DML_ROI_ALIGN1_OPERATOR_DESC\.SpatialScaleX"):
        O.roi_align1(RAMP, [[0, 0, 1, 1]], [0], 2, spatial_scale=(-1.0, 1.0))
    with pytest.raises(dmlops.DataIndexError):
        O.roi_align1(RAMP, [[0, 0, 1, 1]], [1], 2)
