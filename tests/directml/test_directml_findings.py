"""Targeted probes where DirectML 1.15.4 and dmlops's old rulings disagreed, reduced to the smallest case.

They were found by a local differential campaign (hypothesis descs from tests/fuzz, about 400
per operator). Where DirectML computes something deterministic on a valid desc, dmlops now
follows it (docs/errata.md, E26 and E27) and the probe is a plain test; GATHER's out-of-range
indices stay a strict xfail: the page calls their values undefined and dmlops keeps ruling 2.
"""

from __future__ import annotations

import numpy as np
import pytest
from _directml import directml  # noqa: F401  (fixture)

import dmlops
from dmlops.directml import create_operator
from dmlops.errors import DirectMLRejectedDescError, InvalidDescError

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]


@pytest.mark.xfail(
    strict=True,
    reason="DirectML clamps the flat read address into the input's memory, not the index per axis: "
    "GATHER of [[1,2,3],[4,5,6]] along axis 1 with UINT32 index 5 gives [6, 6] (the last element of the "
    "tensor), index 3 gives [4, 6] (row 0 reads on into row 1); ruling 2's per-axis clamp gives [3, 6]. "
    "Integer arithmetic only, so not the stack's float conversion",
)
def test_gather_out_of_range_index() -> None:
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    for index in (5, 3):
        i = np.array([index], np.uint32)
        np.testing.assert_array_equal(
            dmlops.gather(x, i, axis=1, backend="directml"), dmlops.gather(x, i, axis=1), err_msg=f"index {index}"
        )


def test_max_pooling2_nan() -> None:
    # DirectML's MAX_POOLING2 ignores NaN and starts from -FLT_MAX: a 1x1 window on NaN gives
    # -3.4028235e+38, a 2x2 window holding NaN and 1, 2, 3 gives 3 (erratum E26).
    y = np.array([np.nan, 1, 2, 3], np.float32).reshape(1, 1, 2, 2)
    for window in ([1, 1], [2, 2]):
        got = dmlops.max_pooling2(y, window_size=window, backend="directml")
        np.testing.assert_array_equal(got, dmlops.max_pooling2(y, window_size=window), err_msg=str(window))


def _pooling(grad: bool, w_in: int, w_out: int, stride: int, window: int, dilation: int) -> dmlops.OperatorDesc:
    spatial = {
        "Strides": [1, stride],
        "WindowSize": [1, window],
        "StartPadding": [0, 0],
        "EndPadding": [0, 0],
        "Dilations": [1, dilation],
    }
    x = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, w_in]}
    y = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, w_out]}
    if grad:
        desc = {"InputTensor": x, "InputGradientTensor": y, "OutputGradientTensor": x, **spatial}
        return dmlops.desc_from_json("DML_OPERATOR_MAX_POOLING_GRAD", desc)
    return dmlops.desc_from_json("DML_OPERATOR_MAX_POOLING2", {"InputTensor": x, "OutputTensor": y, **spatial})


def test_max_pooling_grad_ceil_size() -> None:
    # DirectML's MAX_POOLING_GRAD accepts only the floor-rounded size (input 5, window 2, dilation 2,
    # stride 3: width 1, not the ceil-rounded 2); probed over widths 1..12 for four window settings,
    # exactly one is accepted each time (erratum E27). dmlops agrees.
    create_operator(_pooling(True, 5, 1, 3, 2, 2))
    _pooling(True, 5, 1, 3, 2, 2).validate()
    desc = _pooling(True, 5, 2, 3, 2, 2)
    with pytest.raises(InvalidDescError):
        desc.validate()
    with pytest.raises(DirectMLRejectedDescError):
        create_operator(desc)


@pytest.mark.parametrize("width", range(1, 13))
def test_max_pooling2_any_output_size(width: int) -> None:
    # DirectML's MAX_POOLING2 CreateOperator accepts every output size (input 7, window 2, dilation 2,
    # stride 2: widths 1..12), and computes windows past the input as padding only (erratum E27).
    desc = _pooling(False, 7, width, 2, 2, 2)
    desc.validate()
    create_operator(desc)
    x = np.arange(7, dtype=np.float32).reshape(1, 1, 1, 7)
    np.testing.assert_array_equal(
        dmlops.execute(desc, {"InputTensor": x}, backend="directml")["OutputTensor"],
        dmlops.execute(desc, {"InputTensor": x})["OutputTensor"],
    )
