"""Reading and writing tensors through their TensorDesc (Sizes + element Strides).

A DML tensor is a view of a buffer: element ``c`` lives at
``base + sum(c[i] * Strides[i])``. These helpers build NumPy views with exactly
that addressing, so strided and broadcast (stride 0) tensors need no copies, and
writes touch only the elements the desc addresses (ruling 16).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .errors import TensorMismatchError, UnsupportedError
from .tensor import TensorDesc

MAX_VIEW_BYTES = int(np.iinfo(np.intp).max)
"""The most bytes a NumPy array may span (its logical size, whatever its strides)."""


def view(buffer: NDArray[Any], tensor: TensorDesc, *, element_offset: int = 0, writeable: bool = False) -> NDArray[Any]:
    """The logical (``tensor.sizes``-shaped) view of a flat element buffer.

    ``buffer`` must be a 1-D contiguous array of the tensor's dtype. Raises
    TensorMismatchError when the desc would address elements outside it.
    """
    flat = buffer.reshape(-1)
    needed = element_offset + tensor.addressed_element_span
    if flat.size < needed:
        raise TensorMismatchError(
            f"buffer of {flat.size} elements is too small for a tensor addressing "
            f"{tensor.addressed_element_span} elements at element offset {element_offset} "
            f"(needs {needed})"
        )
    item = flat.itemsize
    if tensor.element_count * item > MAX_VIEW_BYTES:
        # Broadcast strides let a valid desc describe more logical bytes than a NumPy
        # array may span (2^63), e.g. Sizes [65536] * 4 with Strides [0] * 4.
        raise UnsupportedError(
            f"a tensor of {tensor.element_count} logical elements (Sizes {list(tensor.sizes)}) is larger "
            f"than NumPy can address ({MAX_VIEW_BYTES} bytes); dmlops cannot run this desc"
        )
    return np.lib.stride_tricks.as_strided(
        flat[element_offset:],
        shape=tensor.sizes,
        strides=[s * item for s in tensor.element_strides],
        writeable=writeable,
    )


def byte_view(
    data: bytearray | memoryview | NDArray[np.uint8],
    tensor: TensorDesc,
    *,
    byte_offset: int = 0,
    writeable: bool = False,
) -> NDArray[Any]:
    """The logical view of a tensor stored in raw bytes at ``byte_offset``."""
    raw = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1)
    dtype = tensor.dtype
    if byte_offset % dtype.itemsize:
        raise TensorMismatchError(f"byte offset {byte_offset} is not a multiple of the element size {dtype.itemsize}")
    span_bytes = tensor.addressed_element_span * dtype.itemsize
    if byte_offset + span_bytes > raw.size:
        raise TensorMismatchError(
            f"the tensor needs bytes [{byte_offset}, {byte_offset + span_bytes}) but the buffer has {raw.size} bytes"
        )
    usable = (raw.size - byte_offset) // dtype.itemsize * dtype.itemsize
    elements = raw[byte_offset : byte_offset + usable].view(dtype)
    if writeable and not elements.flags.writeable:
        raise TensorMismatchError("the buffer is read-only")
    return view(elements, tensor, writeable=writeable)


def is_flat_buffer_for(array: Any, tensor: TensorDesc) -> bool:
    """True when ``array`` should be read as the flat buffer a strided desc addresses.

    An array whose shape equals ``tensor.sizes`` is the logical tensor; any other
    1-D array is the buffer.
    """
    shape = tuple(array.shape)
    return shape != tensor.sizes and len(shape) == 1
