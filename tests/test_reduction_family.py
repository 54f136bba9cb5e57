"""The reduction family on the NumPy reference: page examples, hand-worked values, the operators' own rules.

REDUCE (every DML_REDUCE_FUNCTION), ARGMAX, ARGMIN, CUMULATIVE_SUMMATION,
CUMULATIVE_PRODUCT, TOP_K and TOP_K1; the rules DirectML 1.15.4 follows where the pages
are silent (descs/reduction.py) have a case each. tests/directml/test_directml_reduction.py
checks the same against the real DirectML.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops.descs import desc_class, desc_from_json
from dmlops.errors import InvalidDescError

NAN, INF = np.nan, np.inf
PAGE_3X3 = np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], dtype=np.float32)
ARGMAX_3X3 = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)
CUMULATIVE_1134 = np.array([[[[2, 1, 3, 5], [3, 8, 7, 3], [9, 6, 2, 4]]]], dtype=np.float32)
TOP_K_A = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], dtype=np.float32)
TOP_K_B = np.array([[[[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]]]], dtype=np.float32)


def tensor(data_type: str, sizes: Any) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


# -- page examples ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("axes", "expected"),
    [([0], [[6, 6, 9]]), ([1], [[6], [7], [8]]), ([0, 1], [[21]])],
    ids=["example1-columns", "example2-rows", "example3-all"],
)
def test_reduce_page_examples(axes: list[int], expected: Any) -> None:
    # Example 3's comment lists a 5 where the input holds 4; its result, 21, is the input's sum.
    np.testing.assert_array_equal(dmlops.reduce(PAGE_3X3, "SUM", axes=axes), np.array(expected, np.float32))


@pytest.mark.parametrize(
    ("axes", "expected"),
    [([0], [[1, 2, 1]]), ([1], [[2], [2], [1]]), ([0, 1], [[7]])],
    ids=["example1-columns", "example2-rows", "example3-all"],
)
def test_argmax_page_examples(axes: list[int], expected: Any) -> None:
    got = dmlops.argmax(ARGMAX_3X3, axes=axes, axis_direction="INCREASING")
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got, np.array(expected))


@pytest.mark.parametrize(
    ("axes", "expected"),
    [([0], [[0, 1, 2]]), ([1], [[0], [1], [0]]), ([0, 1], [[4]])],
    ids=["example1-columns", "example2-rows", "example3-all"],
)
def test_argmin_page_examples(axes: list[int], expected: Any) -> None:
    np.testing.assert_array_equal(dmlops.argmin(ARGMAX_3X3, axes=axes), np.array(expected))
    np.testing.assert_array_equal(dmlops.reduce(ARGMAX_3X3, "ARGMIN", axes=axes), np.array(expected))


def test_argmax_page_tie_examples() -> None:
    x = np.array([3, 2, 1, 2, 3], np.float32)
    assert dmlops.argmax(x, axes=[0], axis_direction="INCREASING")[0] == 0
    assert dmlops.argmax(x, axes=[0], axis_direction="DECREASING")[0] == 4
    y = np.array([1, 2, 3, 2, 1], np.float32)
    assert dmlops.argmin(y, axes=[0], axis_direction="INCREASING")[0] == 0
    assert dmlops.argmin(y, axes=[0], axis_direction="DECREASING")[0] == 4


@pytest.mark.parametrize(
    ("axis", "direction", "exclusive", "expected"),
    [
        (3, "INCREASING", False, [[2, 3, 6, 11], [3, 11, 18, 21], [9, 15, 17, 21]]),
        (3, "INCREASING", True, [[0, 2, 3, 6], [0, 3, 11, 18], [0, 9, 15, 17]]),
        (3, "DECREASING", False, [[11, 9, 8, 5], [21, 18, 10, 3], [21, 12, 6, 4]]),
        (2, "INCREASING", False, [[2, 1, 3, 5], [5, 9, 10, 8], [14, 15, 12, 12]]),
    ],
    ids=["example1", "example2-exclusive", "example3-decreasing", "example4-axis2"],
)
def test_cumulative_summation_page_examples(axis: int, direction: str, exclusive: bool, expected: Any) -> None:
    got = dmlops.cumulative_summation(CUMULATIVE_1134, axis, axis_direction=direction, has_exclusive_sum=exclusive)
    np.testing.assert_array_equal(got, np.array([[expected]], np.float32))


@pytest.mark.parametrize(
    ("axis", "direction", "exclusive", "expected"),
    [
        (3, "INCREASING", False, [[2, 2, 6, 30], [3, 24, 168, 504], [9, 54, 108, 432]]),
        (3, "INCREASING", True, [[1, 2, 2, 6], [1, 3, 24, 168], [1, 9, 54, 108]]),
        (3, "DECREASING", False, [[30, 15, 15, 5], [504, 168, 21, 3], [432, 48, 8, 4]]),
        (2, "INCREASING", False, [[2, 1, 3, 5], [6, 8, 21, 15], [54, 48, 42, 60]]),
    ],
    ids=["example1", "example2-exclusive", "example3-decreasing", "example4-axis2"],
)
def test_cumulative_product_page_examples(axis: int, direction: str, exclusive: bool, expected: Any) -> None:
    got = dmlops.cumulative_product(CUMULATIVE_1134, axis, axis_direction=direction, has_exclusive_product=exclusive)
    np.testing.assert_array_equal(got, np.array([[expected]], np.float32))


@pytest.mark.parametrize(
    ("x", "axis", "k", "direction", "values", "indices"),
    [
        (TOP_K_A, 3, 2, "DECREASING", [[11, 10], [9, 8], [7, 6]], [[3, 2], [2, 3], [3, 2]]),
        (TOP_K_A, 2, 2, "DECREASING", [[4, 5, 10, 11], [3, 2, 9, 8]], [[2, 2, 0, 0], [1, 1, 1, 1]]),
        (TOP_K_B, 3, 3, "DECREASING", [[3, 2, 2], [5, 5, 4], [6, 6, 6]], [[3, 1, 2], [2, 3, 1], [0, 1, 2]]),
        (TOP_K_B, 3, 3, "INCREASING", [[1, 2, 2], [3, 4, 5], [6, 6, 6]], [[0, 1, 2], [0, 1, 2], [0, 1, 2]]),
    ],
    ids=["example1", "example2-axis2", "example3-ties", "example4-increasing"],
)
def test_top_k1_page_examples(x: np.ndarray, axis: int, k: int, direction: str, values: Any, indices: Any) -> None:
    got_values, got_indices = dmlops.top_k1(x, axis, k, axis_direction=direction)
    np.testing.assert_array_equal(got_values, np.array([[values]], np.float32))
    np.testing.assert_array_equal(got_indices, np.array([[indices]], np.uint32))
    if direction == "DECREASING":  # the page: TOP_K1 DECREASING is TOP_K
        v, i = dmlops.top_k(x, axis, k)
        np.testing.assert_array_equal(v, got_values)
        np.testing.assert_array_equal(i, got_indices)


# -- every REDUCE function, hand-worked ---------------------------------------------------------

ROWS = np.array([[1, -2, 4], [0.5, 0.5, 3]], np.float32)
HAND = {
    "SUM": [3, 4],
    "AVERAGE": [1, 4 / 3],
    "L1": [7, 4],
    "L2": [np.sqrt(21), np.sqrt(9.5)],
    "SUM_SQUARE": [21, 9.5],
    "LOG_SUM": [np.log(3), np.log(4)],
    "LOG_SUM_EXP": [np.log(np.exp(1) + np.exp(-2) + np.exp(4)), np.log(2 * np.exp(0.5) + np.exp(3))],
    "MAX": [4, 3],
    "MIN": [-2, 0.5],
    "MULTIPLY": [-8, 0.75],
    "ARGMAX": [2, 2],
    "ARGMIN": [1, 0],
}


@pytest.mark.parametrize("function", sorted(HAND))
def test_every_reduce_function_by_hand(function: str) -> None:
    got = dmlops.reduce(ROWS, function, axes=[1])
    assert got.shape == (2, 1)
    np.testing.assert_allclose(got.ravel(), np.array(HAND[function], np.float32), rtol=1e-6)


def test_reduce_over_several_axes_and_argmax_index_over_them() -> None:
    x = np.zeros((2, 3, 4), np.float32)
    x[1, 0, 2] = 9
    # the index counts over the reduced axes (0 and 2) in row-major order: 1 * 4 + 2
    for axes in ([0, 2], [2, 0], [2, 0, 2]):
        np.testing.assert_array_equal(dmlops.argmax(x, axes=axes).ravel(), [6, 0, 0])
        np.testing.assert_array_equal(dmlops.reduce(x, "ARGMAX", axes=axes).ravel(), [6, 0, 0])
    np.testing.assert_array_equal(dmlops.reduce(x, "SUM", axes=[2, 0]).ravel(), [9, 0, 0])
    ties = np.array([[1, 5, 5], [5, 2, 5]], np.float32)
    assert dmlops.argmax(ties).ravel()[0] == 1
    assert dmlops.argmax(ties, axis_direction="DECREASING").ravel()[0] == 5


def test_empty_axes_reduce_each_element_alone() -> None:
    x = np.array([1.5, -2, 0], np.float32)
    np.testing.assert_array_equal(dmlops.reduce(x, "L2", axes=[]), [1.5, 2, 0])
    np.testing.assert_array_equal(dmlops.reduce(x, "SUM_SQUARE", axes=[]), [2.25, 4, 0])
    np.testing.assert_array_equal(dmlops.argmax(x, axes=[]), [0, 0, 0])


# -- DirectML's rules where the pages are silent ------------------------------------------------


def test_max_min_skip_nan_and_all_nan_gives_the_infinity() -> None:
    x = np.array([[NAN, 1, 2], [1, NAN, 2], [NAN, NAN, NAN], [-INF, NAN, 1]], np.float32)
    np.testing.assert_array_equal(dmlops.reduce(x, "MAX", axes=[1]).ravel(), [2, 2, -INF, 1])
    np.testing.assert_array_equal(dmlops.reduce(x, "MIN", axes=[1]).ravel(), [1, 1, INF, -INF])


def test_sums_start_from_positive_zero() -> None:
    # DirectML's sequential sums start from +0, so -0s sum to +0 (its halving tree for
    # 4..64 elements and SUM over no axes keep -0: the sign of a zero sum is order's)
    z = np.full((3, 5), -0.0, np.float32)
    for function in ("SUM", "AVERAGE"):
        for axes in ([1], [0, 1]):
            assert not np.signbit(dmlops.reduce(z, function, axes=axes)).any(), (function, axes)
    assert np.signbit(dmlops.reduce(z, "MULTIPLY", axes=[1])).all()


def test_max_min_keep_the_first_of_equal_zeros() -> None:
    x = np.array([[-0.0, 0.0, -0.0], [0.0, -0.0, 0.0]], np.float32)
    for function in ("MAX", "MIN"):
        assert list(np.signbit(dmlops.reduce(x, function, axes=[1]).ravel())) == [True, False]


def test_argmax_argmin_nan_rule() -> None:
    x = np.array(
        [[NAN, 1, 2], [1, NAN, 2], [1, 2, NAN], [NAN, NAN, NAN], [-INF, NAN, 1], [-INF, NAN, -INF]], np.float32
    )
    np.testing.assert_array_equal(dmlops.argmax(x, axes=[1]).ravel(), [0, 2, 1, 0, 2, 0])
    np.testing.assert_array_equal(dmlops.argmax(x, axes=[1], axis_direction="DECREASING").ravel(), [0, 2, 1, 0, 2, 2])
    np.testing.assert_array_equal(dmlops.argmin(x, axes=[1]).ravel(), [0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(dmlops.argmin(x, axes=[1], axis_direction="DECREASING").ravel(), [0, 0, 0, 0, 0, 2])
    np.testing.assert_array_equal(dmlops.reduce(x, "ARGMAX", axes=[1]).ravel(), [0, 2, 1, 0, 2, 0])


def test_integer_sum_and_product_wrap_around() -> None:
    i32 = np.iinfo(np.int32)
    x = np.array([[i32.max, 1, 5], [i32.min, -1, 3]], np.int32)
    np.testing.assert_array_equal(dmlops.reduce(x, "SUM", axes=[1]).ravel(), [-2147483643, -2147483646])
    np.testing.assert_array_equal(dmlops.reduce(np.array([65536, 65536, 3], np.int32), "MULTIPLY"), [0])
    np.testing.assert_array_equal(dmlops.reduce(np.array([2**32 - 1, 5], np.uint32), "SUM"), [4])
    np.testing.assert_array_equal(dmlops.reduce(np.array([2**62] * 3, np.int64), "SUM"), [-(2**62)])
    np.testing.assert_array_equal(dmlops.reduce(np.array([2**63, 2**63, 5], np.uint64), "SUM"), [5])
    c = np.array([[[[i32.max, 1, 5, i32.max]]]], np.int32)
    np.testing.assert_array_equal(dmlops.cumulative_summation(c, 3).ravel(), [i32.max, i32.min, i32.min + 5, 4])


def test_float_reductions_have_no_rescaling() -> None:
    x = np.array([[1000, 1000, 0.5], [100, 0, 0], [3e19, 0, 0]], np.float32)
    np.testing.assert_array_equal(dmlops.reduce(x, "LOG_SUM_EXP", axes=[1]).ravel()[:2], [INF, INF])
    assert np.isinf(dmlops.reduce(x, "L2", axes=[1]).ravel()[2])


def test_cumulative_float32_steps_and_exclusive_start() -> None:
    x = np.array([[[[1, 2**24, 1, 1, 1]]]], np.float32)
    got = dmlops.cumulative_summation(x, 3).ravel() - np.float32(2**24)
    np.testing.assert_array_equal(got, [1 - 2**24, 0, 0, 0, 0])  # each 1 is lost against 2^24
    got = dmlops.cumulative_summation(x, 3, axis_direction="DECREASING").ravel() - np.float32(2**24)
    np.testing.assert_array_equal(got, [4, 4, 3 - 2**24, 2 - 2**24, 1 - 2**24])
    z = np.full((1, 1, 1, 3), -0.0, np.float32)
    assert not np.signbit(dmlops.cumulative_summation(z, 3)).any()  # the tally starts from +0
    assert list(np.signbit(dmlops.cumulative_product(z, 3, has_exclusive_product=True).ravel())) == [0, 1, 0]


def test_top_k_ties_by_ascending_index_in_both_directions() -> None:
    x = np.array([[-0.0, 0.0, -0.0, 0.0, 1]], np.float32)
    values, indices = dmlops.top_k1(x, 1, 5, axis_direction="DECREASING")
    np.testing.assert_array_equal(indices, [[4, 0, 1, 2, 3]])
    assert list(np.signbit(values.ravel())) == [False, True, False, True, False]
    _, indices = dmlops.top_k1(x, 1, 5, axis_direction="INCREASING")
    np.testing.assert_array_equal(indices, [[0, 1, 2, 3, 4]])
    ints = np.array([[2, 1, 1, 0, 2, 2, 1]], np.int32)
    values, indices = dmlops.top_k(ints, 1, 7)
    np.testing.assert_array_equal(indices, [[0, 4, 5, 1, 2, 6, 3]])
    np.testing.assert_array_equal(values, [[2, 2, 2, 1, 1, 1, 0]])


def test_strided_input_is_read_through_its_strides() -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 6)[::2, ::3]  # (2, 2), not contiguous
    np.testing.assert_array_equal(dmlops.reduce(x, "SUM", axes=[1]).ravel(), x.sum(axis=1))
    desc = desc_from_json(
        "REDUCE",
        {
            "Function": "SUM",
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2], "Strides": [12, 3]},
            "OutputTensor": tensor("FLOAT32", [2, 1]),
            "Axes": [1],
        },
    )
    flat = np.arange(24, dtype=np.float32)
    out = dmlops.execute(desc, {"InputTensor": flat}, backend="numpy")["OutputTensor"]
    np.testing.assert_array_equal(out.ravel(), [0 + 3, 12 + 15])


# -- the operators' own rules: every rule passes and fails --------------------------------------

VALID = {
    "REDUCE": {
        "Function": "SUM",
        "InputTensor": tensor("FLOAT32", [2, 3, 5]),
        "OutputTensor": tensor("FLOAT32", [1, 3, 1]),
        "Axes": [2, 0],
    },
    "ARGMAX": {
        "InputTensor": tensor("FLOAT32", [2, 3, 5]),
        "OutputTensor": tensor("UINT32", [1, 3, 1]),
        "Axes": [0, 2, 2],
        "AxisDirection": "DECREASING",
    },
    "CUMULATIVE_PRODUCT": {
        "InputTensor": tensor("FLOAT32", [2, 3, 5]),
        "OutputTensor": tensor("FLOAT32", [2, 3, 5]),
        "Axis": 2,
        "AxisDirection": "INCREASING",
        "HasExclusiveProduct": False,
    },
    "TOP_K1": {
        "InputTensor": tensor("FLOAT32", [2, 3, 5]),
        "OutputValueTensor": tensor("FLOAT32", [2, 3, 5]),
        "OutputIndexTensor": tensor("UINT32", [2, 3, 5]),
        "Axis": 2,
        "K": 5,  # K may equal the size (DirectML accepts it; the page says "less than")
        "AxisDirection": "INCREASING",
    },
}

INVALID = [
    ("REDUCE", {"Axes": [0, 3]}, r"DML_REDUCE_OPERATOR_DESC\.Axes\[1\]"),
    ("REDUCE", {"OutputTensor": tensor("FLOAT32", [2, 3, 1])}, r"OutputTensor\.Sizes\[0\]"),
    ("REDUCE", {"OutputTensor": tensor("FLOAT32", [1, 2, 1])}, r"OutputTensor\.Sizes\[1\]"),
    ("REDUCE", {"OutputTensor": tensor("FLOAT32", [3, 1])}, r"OutputTensor\.DimensionCount"),
    ("REDUCE", {"OutputTensor": tensor("INT32", [1, 3, 1])}, r"OutputTensor\.DataType"),
    ("REDUCE", {"Function": "ARGMAX"}, r"OutputTensor\.DataType"),  # FLOAT32 is no index type
    ("ARGMAX", {"Axes": [0, 5]}, r"DML_ARGMAX_OPERATOR_DESC\.Axes\[1\]"),
    ("ARGMAX", {"OutputTensor": tensor("UINT32", [2, 3, 1])}, r"OutputTensor\.Sizes\[0\]"),
    ("ARGMAX", {"OutputTensor": tensor("FLOAT32", [1, 3, 1])}, r"OutputTensor\.DataType"),
    ("CUMULATIVE_PRODUCT", {"Axis": 3}, r"DML_CUMULATIVE_PRODUCT_OPERATOR_DESC\.Axis"),
    ("TOP_K1", {"Axis": 3}, r"DML_TOP_K1_OPERATOR_DESC\.Axis"),
    ("TOP_K1", {"K": 0}, r"DML_TOP_K1_OPERATOR_DESC\.K"),
    ("TOP_K1", {"K": 6}, r"DML_TOP_K1_OPERATOR_DESC\.K"),
    ("TOP_K1", {"K": 4}, r"OutputValueTensor\.Sizes\[2\]"),
    ("TOP_K1", {"OutputIndexTensor": tensor("UINT32", [2, 3, 4])}, r"OutputIndexTensor\.Sizes\[2\]"),
    ("TOP_K1", {"OutputIndexTensor": tensor("INT32", [2, 3, 5])}, r"OutputIndexTensor\.DataType"),
]


def with_changes(operator: str, changes: dict[str, Any]) -> dict[str, Any]:
    base = dict(VALID[operator])
    base.update(changes)
    return base


@pytest.mark.parametrize("operator", sorted(VALID))
def test_valid_descs_pass(operator: str) -> None:
    desc_from_json(operator, VALID[operator]).validate()


@pytest.mark.parametrize(("operator", "changes", "match"), INVALID, ids=[m.split("\\.")[-1] for _, _, m in INVALID])
def test_each_rule_raises_naming_the_member(operator: str, changes: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidDescError, match=match):
        desc_from_json(operator, with_changes(operator, changes)).validate()


def test_family_and_backends() -> None:
    for operator in ("REDUCE", "ARGMAX", "ARGMIN", "CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT", "TOP_K", "TOP_K1"):
        cls = desc_class(operator)
        assert cls.family == "reduction"
        assert "numpy" in cls.backends


def test_functional_api_misuse() -> None:
    with pytest.raises(TypeError):
        dmlops.cumulative_summation(CUMULATIVE_1134, 3.0)
    with pytest.raises(TypeError):
        dmlops.reduce(PAGE_3X3, "SUM", axes=[0.5])
    with pytest.raises(InvalidDescError, match=r"\.K"):
        dmlops.top_k(TOP_K_A, 3, 5)


def test_feature_levels_gate_operators_and_dimension_counts() -> None:
    argmax = desc_from_json("ARGMAX", VALID["ARGMAX"])
    with pytest.raises(InvalidDescError, match="introduced in DML_FEATURE_LEVEL_3_0"):
        argmax.validate("2_1")
    reduce_3d = desc_from_json("REDUCE", VALID["REDUCE"])
    reduce_3d.validate("3_0")
    with pytest.raises(InvalidDescError, match=r"InputTensor\.DimensionCount"):
        reduce_3d.validate("2_1")
    product = desc_from_json("CUMULATIVE_PRODUCT", VALID["CUMULATIVE_PRODUCT"])
    product.validate("4_0")
    with pytest.raises(InvalidDescError, match=r"InputTensor\.DimensionCount"):
        product.validate("3_1")
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    np.testing.assert_array_equal(dmlops.reduce(x, "ARGMAX", axes=[3], feature_level="1_0").ravel(), [1, 1])
