"""The self-test that stands between set-up and availability.

On this stack every failure mode seen so far returns S_OK with wrong numbers, so the
backend proves itself on data whose answers are known before it says it is usable:
ELEMENT_WISE_IDENTITY with a scale and bias, ELEMENT_WISE_ADD, and a SLICE1 with a
strided input, a negative window stride and a strided output.
"""

from __future__ import annotations

import numpy as np

from ..descs.data_movement import Slice1Desc
from ..enums import FeatureLevel, TensorDataType
from ..tensor import TensorDesc
from . import abi, protocol

ELEMENT_WISE_IDENTITY = 1
ELEMENT_WISE_ADD = 4
"""DML_OPERATOR_TYPE values of the two operators dmlops has no desc class for."""


def _float_tensor(sizes: tuple[int, ...]) -> TensorDesc:
    return TensorDesc(data_type=TensorDataType.FLOAT32, sizes=sizes)


def _check(name: str, got: np.ndarray, expected: np.ndarray) -> str | None:
    if got.shape == expected.shape and np.array_equal(got, expected):
        return None
    return f"{name} returned {got.ravel()[:8].tolist()}..., expected {expected.ravel()[:8].tolist()}..."


def identity_and_add() -> str | None:
    """IDENTITY (x * 2 + 1, DML_SCALE_BIAS) and ADD on known data, packed from raw members."""
    from . import run_packed

    t = _float_tensor((1, 1, 3, 5))
    x = (np.arange(15, dtype=np.float32) * 1.5 + 0.25).reshape(t.sizes)
    y = (np.arange(15, dtype=np.float32)[::-1] * 10 - 3).reshape(t.sizes)
    m = abi.Member
    identity = abi.RawOperator(
        ELEMENT_WISE_IDENTITY,
        (m("InputTensor", "input", t), m("OutputTensor", "output", t), m("ScaleBias", "scale_bias", (2.0, 1.0))),
    )
    add = abi.RawOperator(
        ELEMENT_WISE_ADD, (m("ATensor", "input", t), m("BTensor", "input", t), m("OutputTensor", "output", t))
    )
    level = int(FeatureLevel.V1_0)
    bound = protocol.INPUT_BOUND
    (out,) = run_packed(abi.pack(identity), level, [(bound, x.tobytes())], [(1, x.nbytes)], where="IDENTITY")
    failure = _check("ELEMENT_WISE_IDENTITY", np.frombuffer(out, np.float32).reshape(t.sizes), x * 2 + 1)
    if failure:
        return failure
    (out,) = run_packed(
        abi.pack(add), level, [(bound, x.tobytes()), (bound, y.tobytes())], [(1, x.nbytes)], where="ADD"
    )
    return _check("ELEMENT_WISE_ADD", np.frombuffer(out, np.float32).reshape(t.sizes), x + y)


def strided_slice() -> str | None:
    """SLICE1 through the backend's own packing: strided input and output, stride -2."""
    from . import run

    # A 4x6 logical input stored with a row pitch of 8 elements.
    x_desc = TensorDesc(data_type=TensorDataType.FLOAT32, sizes=(1, 1, 4, 6), strides=(32, 32, 8, 1))
    # A 2x3 output stored transposed (column-major).
    y_desc = TensorDesc(data_type=TensorDataType.FLOAT32, sizes=(1, 1, 2, 3), strides=(6, 6, 1, 2))
    desc = Slice1Desc(
        input_tensor=x_desc,
        output_tensor=y_desc,
        input_window_offsets=(0, 0, 0, 1),
        input_window_sizes=(1, 1, 4, 5),
        input_window_strides=(1, 1, -2, 2),
    )
    level = FeatureLevel.latest()
    desc.validate(level)
    x = np.arange(24, dtype=np.float32).reshape(1, 1, 4, 6) * 3 + 7
    got = run(desc, {"InputTensor": x}, None, feature_level=level)["OutputTensor"]
    expected = x[:, :, [3, 1]][:, :, :, [1, 3, 5]]
    return _check("SLICE1 (strided)", got, expected)


def run_self_test() -> str | None:
    """None when every check passed, else what went wrong."""
    for check in (identity_and_add, strided_slice):
        failure = check()
        if failure is not None:
            return failure
    return None
