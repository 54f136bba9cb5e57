"""The ``directml`` backend: the real DirectML.dll, run through Wine on this machine.

``dmlops directml setup`` prepares the stack (see :mod:`dmlops.directml.setup`). A
host program (``host/dml_host.c``) runs under Wine, started once per Python process;
each :func:`execute` packs the desc in DirectML's x64 ABI (:mod:`.abi`), sends it with
the input buffers, and reads the outputs back through their TensorDescs. The host
knows no operator: CreateOperator, CompileOperator, the initializer, the dispatch and
the read-back are the same for all of them.

The stack fails silently (S_OK with garbage) when something is wrong, so the backend
reports itself available only after a self-test on known data (:mod:`.selftest`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from .._numpy_io import bind_all
from ..descs._base import OperatorDesc
from ..enums import FeatureLevel, TensorFlags
from ..errors import (
    E_INVALIDARG,
    BackendUnavailableError,
    DirectMLError,
    DirectMLRejectedDescError,
    DirectMLStackLimitError,
    DmlError,
    UnsupportedError,
)
from . import abi, buffers, protocol, stack
from .host import MANAGER

SETUP_HINT = "run `dmlops directml setup`"


class _Session:
    """What this process learned about the stack: the host's INFO, the self-test's verdict."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.info: protocol.Info | None = None
        self.verdict: str | None = None
        self.checked = False


_SESSION = _Session()


def info() -> protocol.Info:
    """The host's feature support (maximum feature level, data types), asked once."""
    if _SESSION.info is None:
        levels = [int(level) for level in FeatureLevel]
        status, payload = MANAGER.request(protocol.CMD_INFO, protocol.info_payload(levels))
        _raise_for_status(status, payload, what="feature query")
        _SESSION.info = protocol.parse_info(payload)
    return _SESSION.info


def availability() -> str | None:
    """None when the stack is set up and passed its self-test in this process, else why not."""
    if _SESSION.checked:  # the self-test ran in this process: its verdict stands
        return _SESSION.verdict
    state = stack.read_state()
    if state is None:
        return f"not set up: {SETUP_HINT}"
    p = stack.paths()
    missing = [f.name for f in (p.dll, p.exe) if not f.exists()]
    if not p.prefix.is_dir():
        missing.append("the Wine prefix")
    if stack.wine_binary() is None:
        missing.append("Wine")
    if missing:
        return f"set-up incomplete ({', '.join(missing)} missing): {SETUP_HINT}"
    if state.get("host_source") != stack.source_digest():
        return f"the host program is out of date with this dmlops: {SETUP_HINT}"
    with _SESSION.lock:
        if not _SESSION.checked:
            from .selftest import run_self_test

            try:
                failure = run_self_test()
            except DmlError as exc:
                failure = str(exc)
            _SESSION.verdict = None if failure is None else f"self-test failed: {failure}"
            _SESSION.checked = True
        return _SESSION.verdict


def refused_data_type(desc: OperatorDesc) -> str | None:
    """Why a desc's data types cannot run on this stack, or None."""
    supported = info().data_type_supported
    for member, tensor in desc.tensors().items():
        dt = tensor.data_type
        if int(dt) >= len(supported) or not supported[int(dt)]:
            return (
                f"{desc.dml_name}.{member}.DataType: DirectML on this stack (Wine's vkd3d on lavapipe) reports "
                f"{dt} unsupported (IDMLDevice::CheckFeatureSupport); got {dt}"
            )
    return None


def run_packed(
    packed: abi.PackedDesc,
    feature_level: int,
    inputs: list[tuple[int, bytes]],
    outputs: list[tuple[int, int]],
    *,
    create_only: bool = False,
    where: str = "",
    validated: bool = False,
) -> list[bytes]:
    """Send one packed operator to the host; the output buffers in binding order.

    ``validated`` says that dmlops's validation accepted the desc, so that a rejection by
    CreateOperator is reported as a validation divergence.
    """
    payload = protocol.operator_payload(packed, feature_level, inputs, outputs)
    command = protocol.CMD_CREATE if create_only else protocol.CMD_RUN
    status, reply = MANAGER.request(command, payload)
    _raise_for_status(status, reply, what=where or f"DML_OPERATOR_TYPE {packed.operator_type}", validated=validated)
    return [] if create_only else protocol.parse_outputs(reply)


def _raise_for_status(status: int, payload: bytes, *, what: str, validated: bool = False) -> None:
    if status == protocol.STATUS_OK:
        return
    if status == protocol.STATUS_BAD_REQUEST:
        raise DirectMLError(f"{what}: the DirectML host refused the request: {payload.decode('ascii', 'replace')}")
    call, hresult = protocol.parse_failure(payload)
    message = f"{what}: {call} failed with HRESULT 0x{hresult:08X}"
    if call == "IDMLDevice::CreateOperator" and hresult == E_INVALIDARG:
        verdict = (
            "dmlops validated this desc but DirectML's IDMLDevice::CreateOperator returned E_INVALIDARG "
            "(0x80070057): a validation divergence"
            if validated
            else "DirectML's IDMLDevice::CreateOperator returned E_INVALIDARG (0x80070057): DirectML rejects this desc"
        )
        raise DirectMLRejectedDescError(f"{what}: {verdict}", struct=what)
    if call == "IDMLDevice::CompileOperator":
        raise DirectMLStackLimitError(
            f"{message}. DirectML accepted the desc (CreateOperator succeeded) but could not compile it here: a "
            "limit of this stack (DirectML chose a DXIL shader, which Wine's vkd3d cannot run), not a verdict "
            "on the desc",
            call=call,
            hresult=hresult,
        )
    raise DirectMLError(message, call=call, hresult=hresult)


def _input_kind(tensor: Any) -> int:
    if tensor is None:
        return protocol.INPUT_UNBOUND
    if tensor.flags & TensorFlags.OWNED_BY_DML:
        return protocol.INPUT_OWNED_BY_DML
    return protocol.INPUT_BOUND


def create_operator(desc: OperatorDesc, feature_level: FeatureLevel | None = None) -> None:
    """IDMLDevice::CreateOperator alone: DirectML's own verdict on a desc (validation parity).

    Raises DirectMLRejectedDescError when DirectML rejects it; dmlops's validation is
    not run.
    """
    level = FeatureLevel.latest() if feature_level is None else FeatureLevel.from_any(feature_level)
    run_packed(abi.pack(desc), int(level), [], [], create_only=True, where=desc.dml_name)


def execute(
    desc: OperatorDesc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any] | None,
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> dict[str, Any]:
    """Run a validated desc on DirectML; outputs keyed by DML member name."""
    reason = availability()
    if reason is not None:
        raise BackendUnavailableError(f"backend 'directml' is not available: {reason}")
    return run(desc, inputs, outputs, feature_level=feature_level, strict=strict, validated=True)


def run(
    desc: OperatorDesc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any] | None,
    *,
    feature_level: FeatureLevel,
    strict: bool = False,
    validated: bool = False,
) -> dict[str, Any]:
    """:func:`execute` without the availability check and without dmlops's validation.

    The self-test and differential tests run through it. ``validated`` says that the
    caller validated the desc (then a CreateOperator rejection is a validation divergence).
    """
    refused = refused_data_type(desc)
    if refused is not None:
        raise UnsupportedError(refused)
    ins, outs = bind_all(desc, inputs, outputs)
    if strict:
        # DirectML clamps data-dependent indices and never raises: strict checks are
        # dmlops's own, the semantics layer's (they raise DataIndexError).
        desc.check_data(ins, feature_level)
    # Binding order: tensor arrays (JOIN's InputTensors) bind one buffer per element.
    in_members = desc.tensor_slots("input")
    out_members = desc.tensor_slots("output")
    tensors = desc.tensors()
    in_buffers = []
    for member in in_members:
        tensor = tensors.get(member)
        kind = _input_kind(tensor)
        where = f"{desc.dml_name}.{member}"
        data = b"" if tensor is None else buffers.pack_input(where, tensor, inputs[member], ins[member])
        in_buffers.append((kind, data))
    out_sizes = [
        (protocol.OUTPUT_UNBOUND, 0) if m not in tensors else (protocol.OUTPUT_BOUND, buffers.buffer_size(tensors[m]))
        for m in out_members
    ]
    results = run_packed(
        abi.pack(desc), int(feature_level), in_buffers, out_sizes, where=desc.dml_name, validated=validated
    )
    returned = {}
    for member, data in zip(out_members, results):
        if member not in outs:
            continue
        target, ret = outs[member]
        target[...] = buffers.read_output(tensors[member], data)
        returned[member] = ret
    return returned
