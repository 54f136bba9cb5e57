"""Ruling 11: an output TensorDesc whose strides make two elements share an address is invalid."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlops
import dmlops.tensor as tensor_module
from dmlops import InvalidDescError, TensorDesc
from dmlops.descs import desc_from_json
from dmlops.tensor import overlapping_elements


def _brute_force(sizes: list[int], strides: list[int]) -> bool:
    offsets = [sum(i * s for i, s in zip(index, strides)) for index in itertools.product(*map(range, sizes))]
    return len(set(offsets)) < len(offsets)


def _check_witness(sizes: list[int], strides: list[int], witness: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    p, q = witness
    assert p != q
    assert all(0 <= a < n for a, n in zip(p, sizes)) and all(0 <= a < n for a, n in zip(q, sizes))
    assert sum(a * s for a, s in zip(p, strides)) == sum(a * s for a, s in zip(q, strides))


def _slice1(out_sizes: list[int], out_strides: list[int] | None) -> dmlops.OperatorDesc:
    rank = len(out_sizes)
    out: dict[str, object] = {"DataType": "FLOAT32", "Sizes": out_sizes}
    if out_strides is not None:
        out["Strides"] = out_strides
    return desc_from_json(
        "SLICE1",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": out_sizes},
            "OutputTensor": out,
            "InputWindowOffsets": [0] * rank,
            "InputWindowSizes": out_sizes,
            "InputWindowStrides": [1] * rank,
        },
    )


@pytest.mark.parametrize(
    ("sizes", "strides"),
    [
        pytest.param([1, 1, 2, 2], [1, 1, 1, 1], id="2x2-all-ones"),
        pytest.param([2, 3], [2, 1], id="rows-overlap-by-one"),
        pytest.param([3, 2], [1, 2], id="columns-overlap"),
        pytest.param([5, 4], [3, 4], id="4x3-equals-3x4"),
        pytest.param([65535, 65535], [1, 65534], id="4e9-elements-2d"),
        pytest.param([15] * 8, [14**i for i in range(8)], id="8-dims-radix-14"),
    ],
)
def test_overlapping_output_strides_are_refused(sizes: list[int], strides: list[int]) -> None:
    with pytest.raises(InvalidDescError, match=r"DML_SLICE1_OPERATOR_DESC\.OutputTensor\.Strides: output elements"):
        _slice1(sizes, strides).validate()


@pytest.mark.parametrize(
    ("sizes", "strides"),
    [
        pytest.param([2, 2], [1, 2], id="transposed"),
        pytest.param([1, 1, 2, 2], [9, 7, 5, 1], id="size-1-strides-never-matter"),
        pytest.param([2, 3, 4], [40, 12, 2], id="padded"),
        pytest.param([2, 3, 4], [1, 8, 2], id="permuted-interleaved"),
        pytest.param([3, 2], [2, 3], id="interleaved-not-mixed-radix"),
        pytest.param([65535, 65535], [1, 65535], id="4e9-elements-transposed"),
        pytest.param([2, 2], [1, 1 << 31], id="far-apart"),
        pytest.param([4, 4], [3, 4], id="3-and-4-never-meet-within-4"),
    ],
)
def test_non_overlapping_output_strides_are_accepted(sizes: list[int], strides: list[int]) -> None:
    _slice1(sizes, strides).validate()
    assert overlapping_elements(sizes, strides) is None


def test_inputs_may_overlap_and_broadcast() -> None:
    desc = desc_from_json(
        "SLICE1",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2], "Strides": [1, 1]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2]},
            "InputWindowOffsets": [0, 0],
            "InputWindowSizes": [2, 2],
            "InputWindowStrides": [1, 1],
        },
    )
    desc.validate()
    got = dmlops.execute(desc, {"InputTensor": np.arange(4, dtype=np.float32)})["OutputTensor"]
    np.testing.assert_array_equal(got, [[0, 1], [1, 2]])


def test_strides_are_unsigned() -> None:
    # DML_BUFFER_TENSOR_DESC.Strides is const UINT*: a negative stride cannot even be built.
    with pytest.raises(InvalidDescError, match=r"Strides\[1\]: must be an unsigned integer"):
        TensorDesc(data_type="FLOAT32", sizes=(2, 2), strides=(2, -1))


@pytest.mark.parametrize("limit", [1 << 22, 8, 1], ids=["default", "limit-8", "limit-1"])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_overlap_search_is_exact(limit: int, data: st.DataObject) -> None:
    # Against a brute-force set of offsets, with the search limit lowered so that every
    # exact method (step vectors, sorted offsets, byte map) runs.
    rank = data.draw(st.integers(1, 4))
    sizes = data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    strides = data.draw(st.lists(st.integers(0, 13), min_size=rank, max_size=rank))
    saved = tensor_module.OVERLAP_SEARCH_LIMIT
    tensor_module.OVERLAP_SEARCH_LIMIT = limit
    try:
        witness = overlapping_elements(sizes, strides)
    finally:
        tensor_module.OVERLAP_SEARCH_LIMIT = saved
    assert (witness is not None) == _brute_force(sizes, strides)
    if witness is not None:
        _check_witness(sizes, strides, witness)


def test_byte_map_search(monkeypatch: pytest.MonkeyPatch) -> None:
    # Strides (3, 5, 7) on 2x2x2 interleave without a mixed-radix order (offsets 0, 3, 5, 7,
    # 8, 10, 12, 15) and no dimension out-strides the others; with the limit at 4 neither
    # the step search (27 candidates) nor the sort (8 offsets) may run: the byte map decides.
    monkeypatch.setattr(tensor_module, "OVERLAP_SEARCH_LIMIT", 4)
    assert overlapping_elements([2, 2, 2], [3, 5, 7]) is None
    witness = overlapping_elements([2, 2, 2], [3, 5, 8])  # 3 + 5 = 8
    assert witness is not None
    _check_witness([2, 2, 2], [3, 5, 8], witness)
