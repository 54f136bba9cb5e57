"""Rule cases of the indexing operators (see the package docstring)."""

from __future__ import annotations

from typing import Any

from rule_cases import RuleCase


def _t(data_type: str, *sizes: int) -> dict[str, Any]:
    return {"DataType": data_type, "Sizes": list(sizes)}


def _elements(
    op: str, input_: tuple[int, ...], indices: tuple[int, ...], axis: int, output: tuple[int, ...] | None = None
) -> dict[str, Any]:
    """GATHER_ELEMENTS (output: the indices' sizes unless given) or SCATTER_ELEMENTS (updates
    the indices' sizes, output the input's unless given)."""
    desc = {"InputTensor": _t("FLOAT32", *input_), "IndicesTensor": _t("INT32", *indices), "Axis": axis}
    if op == "GATHER_ELEMENTS":
        return desc | {"OutputTensor": _t("FLOAT32", *(output or indices))}
    return desc | {"UpdatesTensor": _t("FLOAT32", *indices), "OutputTensor": _t("FLOAT32", *(output or input_))}


def _gather_elements(*args: Any, **kwargs: Any) -> dict[str, Any]:
    return _elements("GATHER_ELEMENTS", *args, **kwargs)


def _scatter_elements(*args: Any, **kwargs: Any) -> dict[str, Any]:
    return _elements("SCATTER_ELEMENTS", *args, **kwargs)


def _gather_nd(
    input_: tuple[int, ...],
    indices: tuple[int, ...],
    output: tuple[int, ...],
    input_dims: int,
    indices_dims: int,
    batch: int | None = None,
) -> dict[str, Any]:
    desc = {
        "InputTensor": _t("FLOAT32", *input_),
        "IndicesTensor": _t("UINT32", *indices),
        "OutputTensor": _t("FLOAT32", *output),
        "InputDimensionCount": input_dims,
        "IndicesDimensionCount": indices_dims,
    }
    return desc if batch is None else desc | {"BatchDimensionCount": batch}


def _scatter_nd(
    input_: tuple[int, ...],
    indices: tuple[int, ...],
    updates: tuple[int, ...],
    input_dims: int,
    indices_dims: int,
    output: tuple[int, ...] | None = None,
) -> dict[str, Any]:
    return {
        "InputTensor": _t("FLOAT32", *input_),
        "IndicesTensor": _t("INT64", *indices),
        "UpdatesTensor": _t("FLOAT32", *updates),
        "OutputTensor": _t("FLOAT32", *(output or input_)),
        "InputDimensionCount": input_dims,
        "IndicesDimensionCount": indices_dims,
    }


def _one_hot(indices: tuple[int, ...], values: tuple[int, ...], output: tuple[int, ...], axis: int) -> dict[str, Any]:
    return {
        "IndicesTensor": _t("INT32", *indices),
        "ValuesTensor": _t("UINT8", *values),
        "OutputTensor": _t("UINT8", *output),
        "Axis": axis,
    }


def _reverse(
    input_: tuple[int, ...], lengths: tuple[int, ...], axis: int, output: tuple[int, ...] | None = None
) -> dict[str, Any]:
    return {
        "InputTensor": _t("FLOAT32", *input_),
        "SequenceLengthsTensor": _t("UINT32", *lengths),
        "OutputTensor": _t("FLOAT32", *(output or input_)),
        "Axis": axis,
    }


def _diagonal(output: tuple[int, ...], offset: int, value: float, data_type: str = "FLOAT32") -> dict[str, Any]:
    return {"OutputTensor": _t(data_type, *output), "Offset": offset, "Value": value}


def _diagonal1(
    output: tuple[int, ...],
    begin: int,
    end: int,
    input_: tuple[int, ...] | None = None,
    data_type: str = "FLOAT32",
    value_type: str | None = None,
) -> dict[str, Any]:
    desc = {
        "OutputTensor": _t(data_type, *output),
        "ValueDataType": value_type or data_type,
        "Value": 7,
        "DiagonalFillBegin": begin,
        "DiagonalFillEnd": end,
    }
    return desc if input_ is None else desc | {"InputTensor": _t(data_type, *input_)}


def _nonzero(input_: tuple[int, ...], count: tuple[int, ...], coordinates: tuple[int, ...]) -> dict[str, Any]:
    return {
        "InputTensor": _t("INT8", *input_),
        "OutputCountTensor": _t("UINT32", *count),
        "OutputCoordinatesTensor": _t("UINT32", *coordinates),
    }


_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1

GATHER_ELEMENTS_CASES = [
    RuleCase(
        "gather_elements_valid_page_example",
        "GATHER_ELEMENTS",
        _gather_elements((3, 3), (2, 3), 0),
        None,
        "the page's example: {3, 3} gathered to {2, 3} along axis 0",
    ),
    RuleCase(
        "gather_elements_valid_indices_longer_on_axis",
        "GATHER_ELEMENTS",
        _gather_elements((2, 3, 4), (2, 3, 9), 2),
        None,
        "IndicesTensor may be longer than the input on Axis (9 of 4)",
    ),
    RuleCase(
        "gather_elements_valid_1d", "GATHER_ELEMENTS", _gather_elements((5,), (7,), 0), None, "1-D (FL 3_0 and above)"
    ),
    RuleCase(
        "gather_elements_axis_out_of_range",
        "GATHER_ELEMENTS",
        _gather_elements((3, 3), (2, 3), 2),
        "Axis",
        "Axis must be below InputTensor.DimensionCount",
    ),
    RuleCase(
        "gather_elements_indices_off_axis",
        "GATHER_ELEMENTS",
        _gather_elements((3, 3), (2, 2), 0),
        "IndicesTensor.Sizes[1]",
        "IndicesTensor has InputTensor's Sizes off Axis",
    ),
    RuleCase(
        "gather_elements_indices_off_axis_no_broadcast",
        "GATHER_ELEMENTS",
        _gather_elements((2, 3, 4), (2, 1, 5), 2),
        "IndicesTensor.Sizes[1]",
        "a size of 1 off Axis does not broadcast",
    ),
    RuleCase(
        "gather_elements_output_sizes",
        "GATHER_ELEMENTS",
        _gather_elements((3, 3), (2, 3), 0, output=(3, 3)),
        "OutputTensor.Sizes",
        "OutputTensor has IndicesTensor's Sizes",
    ),
]

SCATTER_ELEMENTS_CASES = [
    RuleCase(
        "scatter_elements_valid",
        "SCATTER_ELEMENTS",
        _scatter_elements((2, 5, 3), (2, 4, 3), 1),
        None,
        "4 updates per row scattered along axis 1 of 5",
    ),
    RuleCase(
        "scatter_elements_valid_alias_full_axis",
        "SCATTER",
        _scatter_elements((3, 4), (3, 4), 0),
        None,
        "the SCATTER alias; IndicesTensor as long as the input on Axis",
    ),
    RuleCase(
        "scatter_elements_axis_out_of_range",
        "SCATTER_ELEMENTS",
        _scatter_elements((3, 3), (2, 3), 2),
        "Axis",
        "Axis must be below the DimensionCount",
    ),
    RuleCase(
        "scatter_elements_indices_off_axis",
        "SCATTER_ELEMENTS",
        _scatter_elements((3, 3), (2, 4), 0),
        "IndicesTensor.Sizes[1]",
        "IndicesTensor has InputTensor's Sizes off Axis",
    ),
    RuleCase(
        "scatter_elements_indices_longer_on_axis",
        "SCATTER_ELEMENTS",
        _scatter_elements((2, 3), (2, 4), 1),
        "IndicesTensor.Sizes[1]",
        "IndicesTensor.Sizes[Axis] <= InputTensor.Sizes[Axis]: DirectML's rule, the page allows any (E142)",
    ),
    RuleCase(
        "scatter_elements_updates_sizes",
        "SCATTER_ELEMENTS",
        _scatter_elements((3, 3), (2, 3), 0) | {"UpdatesTensor": _t("FLOAT32", 3, 3)},
        "UpdatesTensor.Sizes",
        "UpdatesTensor has IndicesTensor's Sizes",
    ),
    RuleCase(
        "scatter_elements_output_sizes",
        "SCATTER_ELEMENTS",
        _scatter_elements((3, 3), (2, 3), 0, output=(3, 4)),
        "OutputTensor.Sizes",
        "OutputTensor has InputTensor's Sizes",
    ),
]

GATHER_ND_CASES = [
    RuleCase(
        "gather_nd_valid_page_example_5d",
        "GATHER_ND",
        _gather_nd((3, 4, 5, 6, 7), (1, 1, 1, 2, 3), (1, 1, 2, 6, 7), 5, 3),
        None,
        "the page's {1, 2} array of 3-tuples into {3, 4, 5, 6, 7}",
    ),
    RuleCase(
        "gather_nd_valid_meaningful_dims",
        "GATHER_ND",
        _gather_nd((1, 2, 2, 2), (1, 1, 2, 2), (1, 1, 2, 2), 3, 2),
        None,
        "the page's example 2: leading 1s outside the meaningful dimensions",
    ),
    RuleCase(
        "gather_nd_valid_full_tuple",
        "GATHER_ND",
        _gather_nd((3, 4), (5, 2), (1, 5), 2, 2),
        None,
        "tuples of InputDimensionCount coordinates gather single elements",
    ),
    RuleCase(
        "gather_nd_input_dimension_count_zero",
        "GATHER_ND",
        _gather_nd((2, 2), (2, 1), (2, 2), 0, 2),
        "InputDimensionCount",
        "InputDimensionCount in [1, InputTensor.DimensionCount]",
    ),
    RuleCase(
        "gather_nd_input_dimension_count_too_large",
        "GATHER_ND",
        _gather_nd((2, 2), (2, 1), (2, 2), 3, 2),
        "InputDimensionCount",
        "InputDimensionCount in [1, InputTensor.DimensionCount]",
    ),
    RuleCase(
        "gather_nd_indices_dimension_count_zero",
        "GATHER_ND",
        _gather_nd((2, 2), (2, 1), (2, 2), 2, 0),
        "IndicesDimensionCount",
        "IndicesDimensionCount in [1, IndicesTensor.DimensionCount]",
    ),
    RuleCase(
        "gather_nd_indices_dimension_count_too_large",
        "GATHER_ND",
        _gather_nd((2, 2), (2, 1), (2, 2), 2, 3),
        "IndicesDimensionCount",
        "IndicesDimensionCount in [1, IndicesTensor.DimensionCount]",
    ),
    RuleCase(
        "gather_nd_input_leading_size",
        "GATHER_ND",
        _gather_nd((2, 2, 2), (1, 3, 1), (1, 3, 2), 2, 2),
        "InputTensor.Sizes[0]",
        "the input's sizes before InputDimensionCount are 1",
    ),
    RuleCase(
        "gather_nd_indices_leading_size",
        "GATHER_ND",
        _gather_nd((1, 2, 2), (2, 3, 1), (1, 3, 2), 3, 2),
        "IndicesTensor.Sizes[0]",
        "the indices' sizes before IndicesDimensionCount are 1",
    ),
    RuleCase(
        "gather_nd_tuple_above_input_dimension_count",
        "GATHER_ND",
        _gather_nd((1, 2), (3, 2), (1, 3), 1, 2),
        "IndicesTensor.Sizes[1]",
        "the tuple size must not exceed InputDimensionCount; the page says InputTensor.DimensionCount (E140)",
    ),
    RuleCase(
        "gather_nd_output_sizes",
        "GATHER_ND",
        _gather_nd((2, 2), (2, 1), (2, 3), 2, 2),
        "OutputTensor.Sizes[1]",
        "OutputTensor: the indices' leading sizes, then the input's past the tuple",
    ),
    RuleCase(
        "gather_nd_output_too_many_dimensions",
        "GATHER_ND",
        _gather_nd((2, 3, 4), (2, 3, 1), (2, 3, 4), 3, 3),
        "OutputTensor.DimensionCount",
        "{2, 3} tuples of 1 gathering {3, 4} slices need 4 dimensions",
    ),
]

GATHER_ND1_CASES = [
    RuleCase(
        "gather_nd1_valid_page_batch_example",
        "GATHER_ND1",
        _gather_nd((1, 3, 2, 2), (1, 3, 2, 2), (1, 1, 3, 2), 3, 3, 1),
        None,
        "the page's example 2: 3 batches of 2-tuples",
    ),
    RuleCase(
        "gather_nd1_valid_batch_sizes_differ",
        "GATHER_ND1",
        _gather_nd((1, 3, 2, 2), (1, 2, 2, 2), (1, 1, 2, 2), 3, 3, 1),
        None,
        "DirectML does not compare the batch sizes: the output takes the indices' (2 of 3)",
    ),
    RuleCase(
        "gather_nd1_valid_no_batch",
        "GATHER_ND1",
        _gather_nd((2, 2), (2, 1), (2, 2), 2, 2, 0),
        None,
        "BatchDimensionCount 0 is GATHER_ND",
    ),
    RuleCase(
        "gather_nd1_input_dimension_count_too_large",
        "GATHER_ND1",
        _gather_nd((2, 2), (2, 1), (2, 2), 3, 2, 0),
        "InputDimensionCount",
        "InputDimensionCount in [1, InputTensor.DimensionCount]",
    ),
    RuleCase(
        "gather_nd1_indices_dimension_count_zero",
        "GATHER_ND1",
        _gather_nd((2, 2), (2, 1), (2, 2), 2, 0, 0),
        "IndicesDimensionCount",
        "IndicesDimensionCount in [1, IndicesTensor.DimensionCount]",
    ),
    RuleCase(
        "gather_nd1_batch_not_below_indices_dimension_count",
        "GATHER_ND1",
        _gather_nd((2, 3, 4), (1, 2, 1), (1, 2, 4), 3, 2, 2),
        "BatchDimensionCount",
        "BatchDimensionCount < IndicesDimensionCount; the page: < IndicesTensor.DimensionCount (E141)",
    ),
    RuleCase(
        "gather_nd1_batch_not_below_input_dimension_count",
        "GATHER_ND1",
        _gather_nd((1, 1, 4), (2, 3, 1), (1, 2, 3), 1, 3, 2),
        "BatchDimensionCount",
        "BatchDimensionCount < InputDimensionCount; the page: < InputTensor.DimensionCount (E141)",
    ),
    RuleCase(
        "gather_nd1_input_leading_size",
        "GATHER_ND1",
        _gather_nd((2, 2, 2), (1, 3, 1), (1, 3, 2), 2, 2, 0),
        "InputTensor.Sizes[0]",
        "the input's sizes before InputDimensionCount are 1",
    ),
    RuleCase(
        "gather_nd1_indices_leading_size",
        "GATHER_ND1",
        _gather_nd((1, 2, 2), (2, 3, 1), (1, 3, 2), 3, 2, 0),
        "IndicesTensor.Sizes[0]",
        "the indices' sizes before IndicesDimensionCount are 1",
    ),
    RuleCase(
        "gather_nd1_tuple_reaches_into_batch",
        "GATHER_ND1",
        _gather_nd((2, 3, 4), (2, 2, 3), (1, 2, 2), 3, 3, 1),
        "IndicesTensor.Sizes[2]",
        "the tuple size must not exceed InputDimensionCount - BatchDimensionCount (E140)",
    ),
    RuleCase(
        "gather_nd1_output_sizes",
        "GATHER_ND1",
        _gather_nd((1, 3, 4, 5), (1, 2, 2, 1), (1, 3, 2, 5), 3, 3, 1),
        "OutputTensor.Sizes[1]",
        "OutputTensor: the indices' batch and leading sizes, then the input's past batch and tuple",
    ),
    RuleCase(
        "gather_nd1_output_too_many_dimensions",
        "GATHER_ND1",
        _gather_nd((2, 3, 4), (2, 3, 1), (2, 3, 4), 3, 3, 0),
        "OutputTensor.DimensionCount",
        "the gathered sizes need 4 dimensions",
    ),
]

SCATTER_ND_CASES = [
    RuleCase(
        "scatter_nd_indices_broadcast",
        "SCATTER_ND",
        _scatter_nd((4, 3), (2, 1), (2, 3), 2, 2)
        | {"IndicesTensor": {"DataType": "INT32", "Sizes": [2, 1], "Strides": [0, 1]}},
        "IndicesTensor.Strides[0]",
        "a broadcast IndicesTensor (Stride 0 on a size above 1): not on the page (E164)",
    ),
    RuleCase(
        "scatter_nd_valid_indices_strided",
        "SCATTER_ND",
        _scatter_nd((4, 3), (2, 1), (2, 3), 2, 2)
        | {"IndicesTensor": {"DataType": "INT32", "Sizes": [2, 1], "Strides": [2, 1]}},
        None,
        "a gapped (not broadcast) IndicesTensor is accepted",
    ),
    RuleCase(
        "scatter_nd_valid_page_example",
        "SCATTER_ND",
        _scatter_nd((8,), (4, 1), (4,), 1, 2),
        None,
        "the page's example: 4 updates into 8 elements; IndicesTensor 2-D beside a 1-D input",
    ),
    RuleCase(
        "scatter_nd_valid_full_dimension_counts",
        "SCATTER_ND",
        _scatter_nd((3, 4), (2, 1), (2, 4), 2, 2),
        None,
        "InputDimensionCount and IndicesDimensionCount equal to the DimensionCounts, which the page excludes (E143)",
    ),
    RuleCase(
        "scatter_nd_valid_updates_other_rank",
        "SCATTER_ND",
        _scatter_nd((1, 1, 3, 4), (1, 1, 5, 2), (1, 5), 2, 2),
        None,
        "UpdatesTensor 2-D beside 4-D tensors: the sizes right-aligned",
    ),
    RuleCase(
        "scatter_nd_input_dimension_count_zero",
        "SCATTER_ND",
        _scatter_nd((3, 4), (2, 1), (2, 4), 0, 2),
        "InputDimensionCount",
        "InputDimensionCount in [1, InputTensor.DimensionCount]",
    ),
    RuleCase(
        "scatter_nd_input_dimension_count_too_large",
        "SCATTER_ND",
        _scatter_nd((3, 4), (2, 1), (2, 4), 3, 2),
        "InputDimensionCount",
        "InputDimensionCount in [1, InputTensor.DimensionCount]",
    ),
    RuleCase(
        "scatter_nd_indices_dimension_count_too_large",
        "SCATTER_ND",
        _scatter_nd((3, 4), (2, 1), (2, 4), 2, 3),
        "IndicesDimensionCount",
        "IndicesDimensionCount in [1, IndicesTensor.DimensionCount]",
    ),
    RuleCase(
        "scatter_nd_input_leading_size",
        "SCATTER_ND",
        _scatter_nd((2, 3, 4), (1, 2, 1), (1, 2, 4), 2, 2),
        "InputTensor.Sizes[0]",
        "the input's sizes before InputDimensionCount are 1",
    ),
    RuleCase(
        "scatter_nd_indices_leading_size",
        "SCATTER_ND",
        _scatter_nd((1, 3, 4), (3, 2, 1), (1, 2, 4), 2, 2),
        "IndicesTensor.Sizes[0]",
        "the indices' sizes before IndicesDimensionCount are 1",
    ),
    RuleCase(
        "scatter_nd_tuple_above_input_dimension_count",
        "SCATTER_ND",
        _scatter_nd((1, 3, 4), (1, 2, 3), (1, 1, 2), 2, 2),
        "IndicesTensor.Sizes[2]",
        "the tuple size must not exceed InputDimensionCount; the page says InputTensor.DimensionCount (E140)",
    ),
    RuleCase(
        "scatter_nd_updates_sizes",
        "SCATTER_ND",
        _scatter_nd((3, 4), (2, 1), (2, 3), 2, 2),
        "UpdatesTensor.Sizes[1]",
        "UpdatesTensor: the indices' leading sizes, then the input's past the tuple",
    ),
    RuleCase(
        "scatter_nd_updates_too_few_dimensions",
        "SCATTER_ND",
        _scatter_nd((3, 4), (2, 1), (4,), 2, 2),
        "UpdatesTensor.DimensionCount",
        "{2} tuples updating rows of 4 need a 2-D UpdatesTensor",
    ),
    RuleCase(
        "scatter_nd_output_sizes",
        "SCATTER_ND",
        _scatter_nd((3, 4), (2, 1), (2, 4), 2, 2, output=(3, 5)),
        "OutputTensor.Sizes",
        "OutputTensor has InputTensor's Sizes",
    ),
]

ONE_HOT_CASES = [
    RuleCase(
        "one_hot_valid_page_example",
        "ONE_HOT",
        _one_hot((1, 1, 3, 1), (1, 1, 1, 2), (1, 1, 3, 4), 3),
        None,
        "the page's example 1",
    ),
    RuleCase(
        "one_hot_valid_values_3_elements",
        "ONE_HOT",
        _one_hot((2, 1, 4, 5), (1, 1, 3, 1), (2, 3, 4, 5), 1),
        None,
        "ValuesTensor of 3 elements (the third unused), a middle axis",
    ),
    RuleCase(
        "one_hot_valid_output_axis_size_1",
        "ONE_HOT",
        _one_hot((4, 1), (2, 1), (4, 1), 1),
        None,
        "OutputTensor's size on Axis may be 1",
    ),
    RuleCase(
        "one_hot_axis_out_of_range",
        "ONE_HOT",
        _one_hot((1, 1, 3, 1), (1, 1, 1, 2), (1, 1, 3, 4), 4),
        "Axis",
        "Axis must be below the DimensionCount",
    ),
    RuleCase(
        "one_hot_indices_axis_size",
        "ONE_HOT",
        _one_hot((2, 3), (1, 2), (2, 3), 0),
        "IndicesTensor.Sizes[0]",
        "IndicesTensor's size on Axis is 1",
    ),
    RuleCase(
        "one_hot_indices_off_axis",
        "ONE_HOT",
        _one_hot((1, 1, 2, 1), (1, 1, 1, 2), (1, 1, 3, 4), 3),
        "IndicesTensor.Sizes[2]",
        "IndicesTensor has OutputTensor's Sizes off Axis",
    ),
    RuleCase(
        "one_hot_indices_off_axis_no_broadcast",
        "ONE_HOT",
        _one_hot((1, 1, 1, 1), (1, 1, 1, 2), (1, 1, 3, 4), 3),
        "IndicesTensor.Sizes[2]",
        "a size of 1 off Axis does not broadcast",
    ),
    RuleCase(
        "one_hot_values_one_element",
        "ONE_HOT",
        _one_hot((1, 1, 3, 1), (1, 1, 1, 1), (1, 1, 3, 4), 3),
        "ValuesTensor.Sizes",
        "ValuesTensor holds at least 2 elements",
    ),
]

REVERSE_SUBSEQUENCES_CASES = [
    RuleCase(
        "reverse_subsequences_valid_page_example",
        "REVERSE_SUBSEQUENCES",
        _reverse((1, 1, 3, 4), (1, 1, 3, 1), 3),
        None,
        "the page's example 1",
    ),
    RuleCase(
        "reverse_subsequences_valid_middle_axis",
        "REVERSE_SUBSEQUENCES",
        _reverse((2, 3, 4, 5), (2, 1, 4, 5), 1),
        None,
        "the page's {2, 3, 4, 5} with Axis 1",
    ),
    RuleCase(
        "reverse_subsequences_valid_1d", "REVERSE_SUBSEQUENCES", _reverse((5,), (1,), 0), None, "one sequence, 1-D"
    ),
    RuleCase(
        "reverse_subsequences_axis_out_of_range",
        "REVERSE_SUBSEQUENCES",
        _reverse((1, 1, 3, 4), (1, 1, 3, 1), 4),
        "Axis",
        "Axis must be below InputTensor.DimensionCount",
    ),
    RuleCase(
        "reverse_subsequences_lengths_axis_size",
        "REVERSE_SUBSEQUENCES",
        _reverse((1, 1, 3, 4), (1, 1, 3, 4), 3),
        "SequenceLengthsTensor.Sizes[3]",
        "SequenceLengthsTensor's size on Axis is 1",
    ),
    RuleCase(
        "reverse_subsequences_lengths_off_axis",
        "REVERSE_SUBSEQUENCES",
        _reverse((1, 1, 3, 4), (1, 1, 2, 1), 3),
        "SequenceLengthsTensor.Sizes[2]",
        "SequenceLengthsTensor has InputTensor's Sizes off Axis",
    ),
    RuleCase(
        "reverse_subsequences_output_sizes",
        "REVERSE_SUBSEQUENCES",
        _reverse((1, 1, 3, 4), (1, 1, 3, 1), 3, output=(1, 1, 3, 5)),
        "OutputTensor.Sizes",
        "OutputTensor has InputTensor's Sizes",
    ),
]

DIAGONAL_MATRIX_CASES = [
    RuleCase(
        "diagonal_matrix_valid_page_identity",
        "DIAGONAL_MATRIX",
        _diagonal((1, 1, 3, 3), 0, 1.0),
        None,
        "the page's identity matrix",
    ),
    RuleCase(
        "diagonal_matrix_valid_offset_past_matrix",
        "DIAGONAL_MATRIX",
        _diagonal((2, 3, 3, 2), -3, 1.0),
        None,
        "an Offset that moves the diagonal out of the matrix (the page's last example), batches {2, 3}",
    ),
    RuleCase(
        "diagonal_matrix_valid_extreme_offset_int_value",
        "DIAGONAL_MATRIX",
        _diagonal((4, 5), _INT_MIN, 1e30, "INT8"),
        None,
        "any Offset (INT_MIN) and a Value out of INT8's range; 2-D",
    ),
    RuleCase(
        "diagonal_matrix_1d_output",
        "DIAGONAL_MATRIX",
        _diagonal((5,), 0, 1.0),
        "OutputTensor.DimensionCount",
        "no rule of its own: the support rows' 2 to 4 dimensions",
    ),
]

DIAGONAL_MATRIX1_CASES = [
    RuleCase(
        "diagonal_matrix1_valid_page_strip",
        "DIAGONAL_MATRIX1",
        _diagonal1((4, 5), 0, 3),
        None,
        "the page's 3-wide strip, no InputTensor",
    ),
    RuleCase(
        "diagonal_matrix1_valid_inverted_with_input",
        "DIAGONAL_MATRIX1",
        _diagonal1((2, 4, 5), _INT_MAX, _INT_MIN, (2, 4, 5), "INT64"),
        None,
        "Begin > End inverts the fill; extreme INTs; INT64 with an InputTensor",
    ),
    RuleCase(
        "diagonal_matrix1_value_data_type",
        "DIAGONAL_MATRIX1",
        _diagonal1((4, 5), 0, 1, value_type="INT32"),
        "ValueDataType",
        "ValueDataType equals OutputTensor.DataType",
    ),
    RuleCase(
        "diagonal_matrix1_input_sizes",
        "DIAGONAL_MATRIX1",
        _diagonal1((2, 4, 5), 0, 1, (1, 4, 5)),
        "OutputTensor.Sizes",
        "an InputTensor has OutputTensor's Sizes (DirectML's rule; the page names DataType and DimensionCount only)",
    ),
]

NONZERO_COORDINATES_CASES = [
    RuleCase(
        "nonzero_coordinates_valid_page_example",
        "NONZERO_COORDINATES",
        _nonzero((1, 1, 2, 4), (1, 1, 1, 1), (1, 1, 8, 3)),
        None,
        "the page's example: N = 3 between the effective rank 2 and 4",
    ),
    RuleCase(
        "nonzero_coordinates_valid_ranks_differ",
        "NONZERO_COORDINATES",
        _nonzero((2, 3, 4), (1,), (24, 3)),
        None,
        "OutputCountTensor 1-D and OutputCoordinatesTensor 2-D beside a 3-D input",
    ),
    RuleCase(
        "nonzero_coordinates_valid_all_ones",
        "NONZERO_COORDINATES",
        _nonzero((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1)),
        None,
        "effective rank 0: N = 1 accepted",
    ),
    RuleCase(
        "nonzero_coordinates_count_not_scalar",
        "NONZERO_COORDINATES",
        _nonzero((1, 1, 2, 4), (1, 1, 1, 2), (1, 1, 8, 3)),
        "OutputCountTensor.Sizes[3]",
        "OutputCountTensor's sizes are all 1",
    ),
    RuleCase(
        "nonzero_coordinates_coordinates_1d",
        "NONZERO_COORDINATES",
        _nonzero((1,), (1,), (1,)),
        "OutputCoordinatesTensor.DimensionCount",
        "OutputCoordinatesTensor is at least {M, N}; the catalogue's row allows 1-D",
    ),
    RuleCase(
        "nonzero_coordinates_n_below_effective_rank",
        "NONZERO_COORDINATES",
        _nonzero((2, 3, 1), (1, 1, 1), (1, 6, 2)),
        "OutputCoordinatesTensor.Sizes[2]",
        "N >= the effective rank (3: a trailing 1 counts)",
    ),
    RuleCase(
        "nonzero_coordinates_n_above_dimension_count",
        "NONZERO_COORDINATES",
        _nonzero((1, 1, 2, 4), (1, 1, 1, 1), (1, 1, 8, 5)),
        "OutputCoordinatesTensor.Sizes[3]",
        "N <= InputTensor.DimensionCount",
    ),
    RuleCase(
        "nonzero_coordinates_m_not_element_count",
        "NONZERO_COORDINATES",
        _nonzero((1, 1, 2, 4), (1, 1, 1, 1), (1, 1, 9, 3)),
        "OutputCoordinatesTensor.Sizes[2]",
        "M is InputTensor's element count",
    ),
    RuleCase(
        "nonzero_coordinates_leading_size",
        "NONZERO_COORDINATES",
        _nonzero((1, 1, 2, 4), (1, 1, 1, 1), (1, 2, 8, 3)),
        "OutputCoordinatesTensor.Sizes[1]",
        "OutputCoordinatesTensor's leading sizes are 1",
    ),
]

CASES: list[RuleCase] = [
    *GATHER_ELEMENTS_CASES,
    *SCATTER_ELEMENTS_CASES,
    *GATHER_ND_CASES,
    *GATHER_ND1_CASES,
    *SCATTER_ND_CASES,
    *ONE_HOT_CASES,
    *REVERSE_SUBSEQUENCES_CASES,
    *DIAGONAL_MATRIX_CASES,
    *DIAGONAL_MATRIX1_CASES,
    *NONZERO_COORDINATES_CASES,
]
