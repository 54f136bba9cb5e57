"""The framed binary protocol between Python and the host program (host/dml_host.c).

Request: u32 command, u64 payload length, payload. Reply: u32 status, u64 payload
length, payload. Everything little-endian. The host's source comment is the
reference for each command's payload.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from .abi import PackedDesc

CMD_QUIT = 0
CMD_INFO = 1
CMD_RUN = 2
CMD_CREATE = 3

STATUS_OK = 0
STATUS_CALL_FAILED = 1
STATUS_BAD_REQUEST = 2

HEADER = struct.Struct("<IQ")
"""Both frames start with (u32 command or status, u64 payload length)."""

INPUT_UNBOUND = 0
INPUT_BOUND = 1
INPUT_OWNED_BY_DML = 2
OUTPUT_UNBOUND = 0
OUTPUT_BOUND = 1


def frame(command: int, payload: bytes = b"") -> bytes:
    """A request frame."""
    return HEADER.pack(command, len(payload)) + payload


def info_payload(levels: Sequence[int]) -> bytes:
    """INFO: the feature levels to ask CheckFeatureSupport about."""
    return struct.pack(f"<I{len(levels)}I", len(levels), *levels)


@dataclass(frozen=True)
class Info:
    """The INFO reply: the maximum feature level and per-data-type support."""

    max_feature_level: int
    data_type_supported: tuple[bool, ...]
    """Indexed by DML_TENSOR_DATA_TYPE value (0 = UNKNOWN)."""


def parse_info(payload: bytes) -> Info:
    """Decode an INFO reply payload."""
    level, n = struct.unpack_from("<II", payload)
    flags = struct.unpack_from(f"<{n}I", payload, 8)
    return Info(level, tuple(bool(f) for f in flags))


def operator_payload(
    packed: PackedDesc,
    feature_level: int,
    inputs: Sequence[tuple[int, bytes]],
    outputs: Sequence[tuple[int, int]],
    *,
    execution_flags: int = 0,
) -> bytes:
    """RUN/CREATE: the packed desc, then (kind, bytes) per input and (kind, size) per output."""
    parts = [
        struct.pack(
            f"<IIIQI{len(packed.relocations)}Q",
            packed.operator_type,
            feature_level,
            execution_flags,
            len(packed.blob),
            len(packed.relocations),
            *packed.relocations,
        ),
        packed.blob,
        struct.pack("<I", len(inputs)),
    ]
    for kind, data in inputs:
        parts.append(struct.pack("<IQ", kind, len(data)))
        if kind != INPUT_UNBOUND:
            parts.append(data)
    parts.append(struct.pack("<I", len(outputs)))
    parts.extend(struct.pack("<IQ", kind, size) for kind, size in outputs)
    return b"".join(parts)


def parse_outputs(payload: bytes) -> list[bytes]:
    """Decode a RUN reply: the output buffers in binding order (b"" for unbound ones)."""
    (n,) = struct.unpack_from("<I", payload)
    at = 4
    outputs = []
    for _ in range(n):
        (size,) = struct.unpack_from("<Q", payload, at)
        at += 8
        outputs.append(payload[at : at + size])
        at += size
    return outputs


def parse_failure(payload: bytes) -> tuple[str, int]:
    """Decode a failed-call reply: (the call's name, its HRESULT as an unsigned 32-bit int)."""
    (n,) = struct.unpack_from("<I", payload)
    name = payload[4 : 4 + n].decode("ascii", "replace")
    (hresult,) = struct.unpack_from("<I", payload, 4 + n)
    return name, hresult
