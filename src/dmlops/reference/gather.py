"""GATHER in NumPy: ``np.take`` with normalised indices (bit-exact data movement)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.gather import GatherDesc
from ..enums import FeatureLevel
from ..errors import DataIndexError


def normalize_indices(
    indices: NDArray[Any], n: int, *, wrap_negative: bool, strict: bool, what: str = "IndicesTensor"
) -> NDArray[np.intp]:
    """Indices mapped into ``[0, n - 1]`` (ruling 2), as ``intp``.

    Parameters
    ----------
    indices : ndarray
        Index values of any integer dtype (the logical IndicesTensor).
    n : int
        Size of the gathered axis.
    wrap_negative : bool
        Add ``n`` once to negative values (signed index types from FL 3_0).
    strict : bool
        Raise :class:`DataIndexError` for the first (row-major) index outside
        ``[-n, n)`` (``[0, n)`` without ``wrap_negative``) instead of clamping.
    what : str
        Name used in the error message.

    Returns
    -------
    ndarray of intp
        Same shape as ``indices``.
    """
    if indices.dtype.kind == "u":
        # Compare and clamp in the unsigned type itself: a UINT64 index above 2^63 must
        # clamp to n - 1, never wrap through int64 to a negative number.
        top = indices.dtype.type(n - 1)
        bad = indices > top
        if strict:
            _raise_first(indices, bad, n, wrap_negative=False, what=what)
        return np.minimum(indices, top).astype(np.intp)
    values = indices.astype(np.int64)
    low = -n if wrap_negative else 0
    if strict:
        _raise_first(indices, (values < low) | (values >= n), n, wrap_negative=wrap_negative, what=what)
    if wrap_negative:
        # astype copied; only the negative entries are shifted, so large positive int64
        # values never overflow.
        negative = values < 0
        values[negative] += n
    return np.clip(values, 0, n - 1).astype(np.intp)


def _raise_first(indices: NDArray[Any], bad: NDArray[np.bool_], n: int, *, wrap_negative: bool, what: str) -> None:
    if not bad.any():
        return
    flat = int(np.argmax(bad.reshape(-1)))
    position = tuple(int(c) for c in np.unravel_index(flat, bad.shape))
    value = int(indices[position])
    allowed = f"[{-n}, {n})" if wrap_negative else f"[0, {n})"
    raise DataIndexError(
        f"{what}[{', '.join(str(c) for c in position)}]: index {value} is out of range {allowed} "
        f"for the gathered axis of size {n} (strict mode; DirectML would read an unspecified element)"
    )


def compute(
    desc: GatherDesc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``Output[pre, mid, post] = Input[pre, Indices[0.., mid], post]`` via ``np.take``.

    The indices' leading ``D - IndexDimensions`` dimensions (all 1) are dropped, the
    values are wrapped/clamped by :func:`normalize_indices`, ``np.take`` produces the
    un-aligned output (``desc.full_output_sizes()``), and a reshape right-aligns it to
    OutputTensor.Sizes (the dropped or prepended dimensions are all 1).
    """
    # Dropped leading output entries other than 1: DirectML computes the slab at
    # coordinate 0 of those dimensions (GatherDesc.leading_slab).
    desc, x_slab, indices_slab = desc.leading_slab()
    x = inputs["InputTensor"][x_slab]
    indices = inputs["IndicesTensor"][indices_slab]
    n = desc.input_tensor.sizes[desc.axis]
    wrap = desc.indices_tensor.data_type.is_signed_integer and feature_level >= FeatureLevel.V3_0
    index = normalize_indices(indices, n, wrap_negative=wrap, strict=strict, what=f"{desc.dml_name}.IndicesTensor")
    d = desc.dimension_count
    index = index.reshape(desc.indices_tensor.sizes[d - desc.index_dimensions :])
    # Indexing rather than np.take, which would first copy a strided or broadcast x whole.
    out = x[(slice(None),) * desc.axis + (index,)]
    return {"OutputTensor": out.reshape(desc.output_tensor.sizes)}
