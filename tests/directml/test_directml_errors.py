"""How the directml backend fails: HRESULTs named, rejected descs, stack limits, refusals, crashes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _directml import directml  # noqa: F401  (fixture)

import dmlops
from dmlops import directml as backend
from dmlops.descs.data_movement import Slice1Desc
from dmlops.directml import abi, protocol
from dmlops.directml.host import MANAGER, HostCrashed
from dmlops.directml.selftest import ELEMENT_WISE_ADD
from dmlops.enums import FeatureLevel, TensorDataType
from dmlops.errors import (
    E_INVALIDARG,
    DirectMLError,
    DirectMLRejectedDescError,
    DirectMLStackLimitError,
    InvalidDescError,
    UnsupportedError,
)
from dmlops.tensor import TensorDesc
from vector_cases import load_vectors

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]
F32 = TensorDataType.FLOAT32


def _slice(
    strides: tuple[int, ...], data_type: TensorDataType = F32, window: tuple[int, ...] = (1, 1, 2, 2)
) -> Slice1Desc:
    return Slice1Desc(
        input_tensor=TensorDesc(data_type=data_type, sizes=(1, 1, 4, 4)),
        output_tensor=TensorDesc(data_type=data_type, sizes=(1, 1, 2, 2)),
        input_window_offsets=(0, 0, 0, 0),
        input_window_sizes=window,
        input_window_strides=strides,
    )


def test_rejected_desc_is_a_validation_divergence() -> None:
    # dmlops rejects a zero window stride; bypassing its validation, DirectML must too.
    desc = _slice((1, 1, 1, 0))
    with pytest.raises(InvalidDescError):
        desc.validate()
    x = np.zeros((1, 1, 4, 4), np.float32)
    with pytest.raises(DirectMLRejectedDescError, match="DirectML rejects this desc") as info:
        backend.run(desc, {"InputTensor": x}, None, feature_level=FeatureLevel.latest())
    assert isinstance(info.value, InvalidDescError)
    # What execute() reports, having validated the desc first:
    with pytest.raises(DirectMLRejectedDescError, match=r"dmlops validated this desc.*a validation divergence"):
        backend.run(desc, {"InputTensor": x}, None, feature_level=FeatureLevel.latest(), validated=True)
    assert "E_INVALIDARG" in str(info.value) and info.value.hresult == E_INVALIDARG
    with pytest.raises(DirectMLRejectedDescError):
        backend.create_operator(desc)
    backend.create_operator(_slice((1, 1, 1, 1)))  # the valid one is accepted


def test_compile_failure_is_a_stack_limit() -> None:
    # DirectML picks a DXIL shader for a FLOAT32 ADD of 4 elements, which vkd3d 1.6 cannot run.
    t = TensorDesc(data_type=F32, sizes=(4,))
    m = abi.Member
    op = abi.RawOperator(ELEMENT_WISE_ADD, (m("A", "input", t), m("B", "input", t), m("Out", "output", t)))
    data = np.ones(4, np.float32).tobytes()
    with pytest.raises(DirectMLStackLimitError, match="limit of this stack") as info:
        backend.run_packed(abi.pack(op), 0x1000, [(1, data), (1, data)], [(1, 16)], where="ADD")
    assert info.value.call == "IDMLDevice::CompileOperator"
    assert isinstance(info.value, UnsupportedError)
    assert re.search(r"IDMLDevice::CompileOperator failed with HRESULT 0x[0-9A-F]{8}", str(info.value))


def test_failed_call_names_the_call_and_hresult() -> None:
    # No DirectML device exists for a feature level from the future.
    packed = abi.pack(_slice((1, 1, 1, 1)))
    with pytest.raises(DirectMLError) as info:
        backend.run_packed(packed, 0x9900, [], [], create_only=True, where="probe")
    assert info.value.call == "DMLCreateDevice1"
    assert info.value.hresult & 0x80000000
    assert f"DMLCreateDevice1 failed with HRESULT 0x{info.value.hresult:08X}" in str(info.value)


@pytest.mark.parametrize("data_type", ["FLOAT16", "INT16", "UINT16"])
def test_unsupported_data_types_are_refused(data_type: str) -> None:
    t = TensorDataType.from_any(data_type)
    x = np.zeros((1, 1, 4, 4), t.numpy_dtype)
    with pytest.raises(UnsupportedError, match=rf"{data_type} unsupported"):
        dmlops.execute(_slice((1, 1, 1, 1), t), {"InputTensor": x}, backend="directml")


def test_malformed_request_is_reported() -> None:
    status, payload = MANAGER.request(protocol.CMD_RUN, b"\x01\x02")
    assert status == protocol.STATUS_BAD_REQUEST and b"malformed" in payload


def test_host_restarts_after_a_crash() -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    dmlops.execute(_slice((1, 1, 1, 1)), {"InputTensor": x}, backend="directml")
    host = MANAGER._host
    assert host is not None
    host.process.kill()
    host.process.wait()
    starts = MANAGER.starts
    got = dmlops.execute(_slice((1, 1, 2, 2), window=(1, 1, 4, 4)), {"InputTensor": x}, backend="directml")[
        "OutputTensor"
    ]
    np.testing.assert_array_equal(got[0, 0], [[0, 2], [8, 10]])
    assert MANAGER.starts == starts + 1


def test_timeout_kills_the_host() -> None:
    with pytest.raises(HostCrashed, match="deadline"):
        MANAGER.request(protocol.CMD_INFO, protocol.info_payload([0x1000]), timeout=0)
    status, _ = MANAGER.request(protocol.CMD_INFO, protocol.info_payload([0x1000]))
    assert status == protocol.STATUS_OK


def test_an_exception_inside_directml_ends_the_host_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # MULTIHEAD_ATTENTION with HeadCount 0 divides by zero inside CreateOperator. Wine's debugger,
    # were it started, would keep the dead host alive until the request's deadline.
    from rule_cases import all_cases, build

    case = next(c for c in all_cases() if c.name == "multihead_attention_head_count_zero")
    monkeypatch.setenv("DMLOPS_DIRECTML_TIMEOUT", "60")
    with pytest.raises(HostCrashed, match="the host exited"):
        backend.create_operator(build(case))
    status, _ = MANAGER.request(protocol.CMD_INFO, protocol.info_payload([0x1000]))
    assert status == protocol.STATUS_OK


def test_feature_query() -> None:
    info = backend.info()
    assert info.max_feature_level >= int(FeatureLevel.V6_4)
    assert info.data_type_supported[int(TensorDataType.FLOAT32)]


# Validation parity on the vectors dmlops rejects. DirectML's CreateOperator checks a desc
# against what the DLL supports (6_4 here), whatever minimum feature level the device was
# created with, so rejections that depend on the feature level are not comparable.
_LEVEL_DEPENDENT = {
    "max_pooling_grad/invalid_5d_at_3_0",
    "resample2/int8_rejected_at_6_1",
    "roi_align/uint64_batch_indices_before_5_0",
}
_ACCEPTED_BY_DIRECTML: dict[str, str] = {}
"""Vectors dmlops rejects and DirectML accepts (validation divergences), with the evidence: none left."""


def _invalid_params() -> list[object]:
    params = []
    for v in load_vectors():
        if v.expect_invalid is None or v.name in _LEVEL_DEPENDENT:
            continue
        reason = _ACCEPTED_BY_DIRECTML.get(v.name)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(v, id=v.name, marks=marks))
    return params


@pytest.mark.parametrize("vector", _invalid_params())
def test_directml_rejects_what_dmlops_rejects(vector) -> None:
    desc = dmlops.desc_from_json(vector.operator, vector.desc)
    with pytest.raises(DirectMLRejectedDescError):
        backend.create_operator(desc, vector.feature_level)


def test_aliased_logical_input_without_a_buffer_is_refused() -> None:
    # Stride 0 makes the three rows one row in memory: a logical array whose rows differ
    # has no buffer DirectML could read, so it is refused rather than silently merged.
    desc = Slice1Desc(
        input_tensor=TensorDesc(data_type=F32, sizes=(1, 1, 3, 4), strides=(0, 0, 0, 1)),
        output_tensor=TensorDesc(data_type=F32, sizes=(1, 1, 3, 4)),
        input_window_offsets=(0, 0, 0, 0),
        input_window_sizes=(1, 1, 3, 4),
        input_window_strides=(1, 1, 1, 1),
    )
    differing = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    with pytest.raises(dmlops.TensorMismatchError, match=r"InputTensor: its Strides make elements share memory"):
        dmlops.execute(desc, {"InputTensor": differing}, backend="directml")
    consistent = np.broadcast_to(np.arange(4, dtype=np.float32), (1, 1, 3, 4))
    got = dmlops.execute(desc, {"InputTensor": consistent}, backend="directml")["OutputTensor"]
    np.testing.assert_array_equal(got, consistent)
