"""Binding NumPy arrays to TensorDescs, shared by the NumPy-based backends."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import strided
from .descs._base import OperatorDesc
from .errors import TensorMismatchError
from .memory import check_allocation
from .tensor import TensorDesc


def bind_input(desc: OperatorDesc, member: str, array: Any) -> NDArray[Any]:
    """The logical read-only view of an input array.

    Accepts the logical array (shape == Sizes) or, for any desc, the flat 1-D buffer
    that its Strides address. The dtype must be the desc's exactly.
    """
    tensor = desc.tensor(member)
    arr = np.asarray(array)
    _check_dtype(desc, member, tensor, arr)
    if tuple(arr.shape) == tensor.sizes:
        return arr
    if strided.is_flat_buffer_for(arr, tensor):
        try:
            return strided.view(np.ascontiguousarray(arr), tensor)
        except TensorMismatchError as exc:
            raise TensorMismatchError(f"{desc.dml_name}.{member}: {exc}") from None
    raise TensorMismatchError(
        f"{desc.dml_name}.{member}: expected an array of shape {tensor.sizes} (or the flat "
        f"buffer its Strides address); got shape {tuple(arr.shape)}"
    )


def input_memory(tensor: TensorDesc, logical: NDArray[Any]) -> NDArray[Any]:
    """The buffer DirectML would bind for an input, as a 1-D array of its elements.

    ``tensor.bound_size_in_bytes // itemsize`` elements (TotalTensorSizeInBytes, at least
    the addressed span, rounded up to 4 bytes), as ``dmlops.directml.buffers.pack_input``
    binds them: the caller's flat buffer when ``logical`` is :func:`bind_input`'s view of
    one (cut or extended with zeros to that length), else the logical elements stored
    through the Strides into zeros. For reads outside a tensor's elements (GATHER's
    out-of-range indices, erratum E41); a copy, never a view.
    """
    count = tensor.bound_size_in_bytes // tensor.dtype.itemsize
    memory = np.zeros(count, dtype=logical.dtype)
    flat = flat_buffer_of(logical, tensor)
    if flat is not None:
        m = min(count, flat.size)
        memory[:m] = flat[:m]
    elif logical.size:
        # Aliased elements (Strides 0, overlaps) hold one value per address: the last one
        # in row-major order (a flat index assignment stores in order).
        address = np.zeros(logical.shape, dtype=np.intp)
        for axis, (n, stride) in enumerate(zip(logical.shape, tensor.element_strides)):
            shape = [1] * logical.ndim
            shape[axis] = n
            address += (np.arange(n, dtype=np.intp) * stride).reshape(shape)
        memory[address.reshape(-1)] = logical.reshape(-1)
    return memory


def flat_buffer_of(logical: NDArray[Any], tensor: TensorDesc) -> NDArray[Any] | None:
    """The flat buffer a :func:`bind_input` view was made from, or None for a logical array.

    ``strided.view`` makes the view with ``as_strided`` (whose ``base`` is not an
    ndarray) over the 1-D contiguous buffer, from its first element and with the
    desc's Strides; an array the caller passed as the logical tensor is returned by
    :func:`bind_input` as it is, and is not a flat buffer even when it views one.
    """
    holder = logical.base
    if holder is None or isinstance(holder, np.ndarray):
        return None
    flat = getattr(holder, "base", None)
    if not isinstance(flat, np.ndarray) or flat.ndim != 1 or not flat.flags.c_contiguous:
        return None
    item = logical.itemsize
    if (
        flat.dtype != logical.dtype
        or flat.__array_interface__["data"][0] != logical.__array_interface__["data"][0]
        or any(n > 1 and s != e * item for n, s, e in zip(logical.shape, logical.strides, tensor.element_strides))
    ):
        return None
    return flat


def bind_output(desc: OperatorDesc, member: str, out: Any | None) -> tuple[NDArray[Any], Any]:
    """(writeable logical view, object to return) for an output member.

    Without ``out`` a fresh array of shape Sizes is allocated. With ``out`` the view
    addresses it through the desc, so only addressed elements are written.
    """
    tensor = desc.tensor(member)
    if out is None:
        arr = np.empty(tensor.sizes, dtype=tensor.dtype)
        return arr, arr
    if not isinstance(out, np.ndarray):
        raise TensorMismatchError(f"{desc.dml_name}.{member}: out must be a NumPy array; got {type(out).__name__}")
    _check_dtype(desc, member, tensor, out)
    if not out.flags.writeable:
        raise TensorMismatchError(f"{desc.dml_name}.{member}: out is read-only")
    if tuple(out.shape) == tensor.sizes:
        return out, out
    if strided.is_flat_buffer_for(out, tensor) and out.flags.c_contiguous:
        try:
            return strided.view(out, tensor, writeable=True), out
        except TensorMismatchError as exc:
            raise TensorMismatchError(f"{desc.dml_name}.{member}: {exc}") from None
    raise TensorMismatchError(
        f"{desc.dml_name}.{member}: out must have shape {tensor.sizes} (or be the contiguous "
        f"flat buffer its Strides address); got shape {tuple(out.shape)}"
    )


def _check_dtype(desc: OperatorDesc, member: str, tensor: TensorDesc, arr: NDArray[Any]) -> None:
    if arr.dtype != tensor.dtype:
        raise TensorMismatchError(
            f"{desc.dml_name}.{member}: expected dtype {tensor.dtype} ({tensor.data_type}); got {arr.dtype}"
        )


def store(result: NDArray[Any], target: NDArray[Any]) -> None:
    """Write a computed result into an output view, rounding once.

    Floats round to nearest even (NumPy's float64 -> float16/32 conversion is a single
    correctly rounded step). Float results stored into integer tensors are truncated
    toward zero, as DirectML converts them (D3D's ftoi/ftou; erratum E30), and saturated
    to the type's range; NaN becomes 0.
    """
    if target.dtype.kind in "iu" and result.dtype.kind == "f":
        result = _saturating_integers(result, target.dtype)
    with np.errstate(over="ignore"):  # a float result beyond the target type's range stores +-inf
        np.copyto(target, result, casting="unsafe")


def _saturating_integers(result: NDArray[Any], dtype: np.dtype[Any]) -> NDArray[Any]:
    """Floats as D3D's ftoi/ftou convert them: truncated toward zero, saturated, NaN -> 0.

    The bounds are compared in float64, never in the result's own type: float32(UINT32_MAX)
    is 2^32, whose cast would wrap to 0, and float64(INT64_MAX) is 2^63, so a value at or
    above the float bound saturates instead of being cast.
    """
    info = np.iinfo(dtype)
    r = np.trunc(np.asarray(result, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        high = r >= float(info.max)
        low = r <= float(info.min)
        inside = np.where(high | low | np.isnan(r), 0, r).astype(dtype)
    return np.where(high, dtype.type(info.max), np.where(low, dtype.type(info.min), inside))


def bind_all(
    desc: OperatorDesc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any] | None,
    *,
    scratch_bytes_per_element: int = 0,
) -> tuple[dict[str, NDArray[Any]], dict[str, tuple[NDArray[Any], Any]]]:
    """Bind every input and output of a validated desc.

    Before anything is allocated, the outputs to allocate (plus
    ``scratch_bytes_per_element`` of working memory per output element, e.g. 8 for
    the reference's float64 results) are checked against the available memory.
    """
    given = outputs or {}
    needed = sum(
        t.element_count * (t.dtype.itemsize + scratch_bytes_per_element)
        for m, t in desc.tensors("output").items()
        if given.get(m) is None
    )
    check_allocation(needed, f"{desc.dml_name}: allocating the outputs")
    ins = {m: bind_input(desc, m, a) for m, a in inputs.items()}
    outs = {m: bind_output(desc, m, (outputs or {}).get(m)) for m in desc.tensors("output")}
    return ins, outs
