"""Tensors to and from the byte buffers DirectML binds, addressed by their TensorDesc.

A bound buffer holds TotalTensorSizeInBytes rounded up to a multiple of 4 (DirectML
requires at least that). Element ``c`` of a tensor lives at byte
``sum(c[i] * Strides[i]) * element size``; elements no stride reaches are zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import strided
from ..errors import TensorMismatchError
from ..tensor import TensorDesc


def buffer_size(tensor: TensorDesc) -> int:
    """Bytes to bind: TotalTensorSizeInBytes rounded up to 4, at least the addressed span."""
    return tensor.bound_size_in_bytes


def pack_input(member: str, tensor: TensorDesc, array: Any, logical: NDArray[Any]) -> bytes:
    """The buffer of one input.

    ``array`` is what the caller passed: a flat buffer is sent as it is (so elements
    between strides keep their values); a logical array is written through the strides.
    ``logical`` is its logical view (from ``bind_input``).
    """
    size = buffer_size(tensor)
    raw = np.zeros(size, dtype=np.uint8)
    given = np.asarray(array)
    if strided.is_flat_buffer_for(given, tensor):
        data = np.ascontiguousarray(given).view(np.uint8)[:size]
        raw[: data.size] = data
    else:
        view = strided.byte_view(raw, tensor, writeable=True)
        np.copyto(view, logical)
        # Strides that alias elements (0, or overlapping) store one value per address:
        # a logical array that gives aliased elements different values has no buffer.
        stored = np.ascontiguousarray(view).view(np.uint8)
        if not np.array_equal(stored, np.ascontiguousarray(logical).view(np.uint8)):
            raise TensorMismatchError(
                f"{member}: its Strides make elements share memory, and the logical array gives them different "
                "values, which no buffer can hold; pass the flat buffer the Strides address instead"
            )
    return raw.tobytes()


def read_output(tensor: TensorDesc, data: bytes) -> NDArray[Any]:
    """The logical view of an output buffer DirectML wrote."""
    return strided.byte_view(np.frombuffer(data, dtype=np.uint8), tensor)
