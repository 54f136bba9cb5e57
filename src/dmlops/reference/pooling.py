"""Pooling in NumPy: MAX_POOLING2, MAX_POOLING_GRAD and the generic neighbours.

The generic neighbours: MAX_POOLING, MAX_POOLING1, AVERAGE_POOLING, AVERAGE_POOLING1,
LP_POOLING, LP_POOLING1 (``compute_max_pooling``, ``compute_average_pooling``,
``compute_lp_pooling``), AVERAGE_POOLING_GRAD (``compute_average_pooling_grad``, the
forward's windows transposed) and MAX_UNPOOLING (``compute_max_unpooling``).

Shared helpers
--------------
Max-pooling argmax in NumPy, shared by MAX_POOLING2 and MAX_POOLING_GRAD.

The window is scanned one offset ``k`` at a time (row-major over the window, so in
increasing logical input index), each offset as one gather over every output
position at once; a running maximum keeps the first element that beats it. The rule
is DirectML's, measured on DirectML 1.15.4 (erratum E26): the running maximum starts
at the type's lowest finite value, not at the first element, so NaN and -inf never
win.

MAX_POOLING2
------------
MAX_POOLING2 in NumPy: windowed maximum and its linear index (bit-exact data movement).

MAX_POOLING_GRAD
----------------
MAX_POOLING_GRAD in NumPy: recompute the forward argmax, scatter-add the gradient there.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs.pooling import (
    MaxPooling2Desc,
    MaxPoolingGradDesc,
    PoolingWindow,
    average_divisors,
    generic_window,
    unpooling_targets,
    validate_generic,
)
from ..enums import FeatureLevel
from ..errors import UnsupportedError

# -- Shared helpers ------------------------------------------------------------


def _outer(arrays: Sequence[NDArray[Any]]) -> list[NDArray[Any]]:
    """1-D arrays reshaped to broadcast against each other as the axes of a grid.

    Like ``np.ix_``, but boolean arrays stay masks (``np.ix_`` turns them into positions).
    """
    last = len(arrays) - 1
    return [a.reshape((1,) * i + (-1,) + (1,) * (last - i)) for i, a in enumerate(arrays)]


def lowest(dtype: np.dtype[Any]) -> Any:
    """The value DirectML's running maximum starts from: the type's lowest finite value."""
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def window_offsets(
    x: NDArray[Any], window: PoolingWindow, output_spatial: Sequence[int]
) -> Iterator[tuple[NDArray[Any], NDArray[np.bool_], NDArray[np.int64]]]:
    """Each window offset ``k`` in row-major window order, gathered for every output at once.

    Yields ``(values, valid, flat)``, each broadcast to ``{N, C, *output_spatial}``:
    the element window offset ``k`` of each output reads (clipped into the input where
    it is padding), whether it is in bounds, and its flat index within one
    ``{[D], H, W}`` image. Window element ``k`` of output ``o`` reads input coordinate
    ``o * Stride + k * Dilation - StartPadding`` per spatial dimension; every pooling
    operator of the family scans its window in this order.
    """
    n, c = x.shape[:2]
    in_spatial = x.shape[2:]
    out_shape = (n, c, *output_spatial)
    # Per spatial dimension, the input coordinates of window offset k for every output o.
    coords = [
        [np.arange(n_out, dtype=np.int64) * s + k * d - p for k in range(w)]
        for n_out, s, d, p, w in zip(
            output_spatial, window.strides, window.dilations, window.start_padding, window.window_size
        )
    ]
    spatial_strides = [int(np.prod(in_spatial[i + 1 :], dtype=np.int64)) for i in range(len(in_spatial))]
    for offset in itertools.product(*(range(w) for w in window.window_size)):
        per_dim = [coords[i][k] for i, k in enumerate(offset)]
        inside = [(i >= 0) & (i < size) for i, size in zip(per_dim, in_spatial)]
        clipped = [np.clip(i, 0, size - 1) for i, size in zip(per_dim, in_spatial)]
        # Outer products over the spatial output axes, broadcast over N and C.
        valid = np.broadcast_to(functools.reduce(np.logical_and, _outer(inside)), out_shape)
        grid = _outer(clipped)
        flat = np.broadcast_to(sum(g * st for g, st in zip(grid, spatial_strides)), out_shape)
        index: tuple[Any, ...] = (slice(None), slice(None), *grid)
        yield np.broadcast_to(x[index], out_shape), valid, flat


def window_argmax(
    x: NDArray[Any], window: PoolingWindow, output_spatial: Sequence[int]
) -> tuple[NDArray[Any], NDArray[np.int64], NDArray[np.bool_]]:
    """Maximum of every pooling window, its row-major linear index into ``x``, and whether it has one.

    Parameters
    ----------
    x : ndarray
        The logical input ``{N, C, [D], H, W}`` (any strided view).
    window : PoolingWindow
        Strides, WindowSize, StartPadding, EndPadding, Dilations.
    output_spatial : sequence of int
        The output's spatial sizes (any: windows past the input are padding only).

    Returns
    -------
    values : ndarray
        ``{N, C, *output_spatial}`` in ``x.dtype``: the running maximum of each window.
    indices : ndarray of int64
        Linear index of each selected element over the whole logical input, treating
        it as a contiguous row-major array (batch and channel included); 0 for a
        window with no in-bounds element.
    nonempty : ndarray of bool
        False where a window holds only padding.

    Notes
    -----
    DirectML's selection rule, in window scan order (erratum E26, overturning ruling 7):

    * padding positions never take part;
    * the running maximum starts at the type's lowest finite value L (-FLT_MAX for
      FLOAT32), with the first in-bounds element's index;
    * an element replaces it only if strictly greater (ties keep the lowest index).

    So NaN never wins (a comparison with NaN is false) and a window of only NaN or
    -inf gives L at its first in-bounds element. A window of only padding gives L at
    index 0. Otherwise the value is the selected element, bit-exact.
    """
    n, c = x.shape[:2]
    in_spatial = x.shape[2:]
    out_shape = (n, c, *output_spatial)
    best = np.full(out_shape, lowest(x.dtype), dtype=x.dtype)
    best_spatial = np.zeros(out_shape, dtype=np.int64)  # flat index within one {D, H, W} image
    have = np.zeros(out_shape, dtype=bool)
    for values, valid, flat in window_offsets(x, window, output_spatial):
        np.copyto(best_spatial, flat, where=valid & ~have)  # the first in-bounds element's index
        with np.errstate(invalid="ignore"):
            take = valid & (values > best)  # False for NaN
        np.copyto(best, values, where=take)
        np.copyto(best_spatial, flat, where=take)
        have |= valid
    image = int(np.prod(in_spatial, dtype=np.int64))
    batch_channel = np.arange(n * c, dtype=np.int64).reshape(n, c, *([1] * len(in_spatial)))
    return best, np.where(have, best_spatial + batch_channel * image, 0), have


# -- MAX_POOLING2 --------------------------------------------------------------


def compute_max_pooling2(
    desc: MaxPooling2Desc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``Output[o] = max over the window of o``; ``OutputIndices[o]`` = its row-major input index.

    The selected element is copied, so every data type (integers, signed zeros) comes
    out bit-exact; a window with nothing above the type's lowest finite value (only
    NaN, -inf or padding) gives that value, as DirectML does. Indices are returned in
    the indices tensor's own type (UINT32 or UINT64); a DML tensor has fewer than 2^32
    elements, so they fit.
    """
    # A zero Dilation changes which elements DirectML scans (PoolingWindow.scanned).
    values, indices, _ = window_argmax(inputs["InputTensor"], desc.window.scanned(), desc.output_tensor.sizes[2:])
    results = {"OutputTensor": values}
    if desc.output_indices_tensor is not None:
        results["OutputIndicesTensor"] = indices.astype(desc.output_indices_tensor.dtype)
    return results


# -- MAX_POOLING_GRAD ----------------------------------------------------------


def compute_max_pooling_grad(
    desc: MaxPoolingGradDesc, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``OutputGradient[i] = sum of InputGradient[o] over the windows o whose maximum is i``.

    The argmax is the forward's (MAX_POOLING2 with the same parameters and tie rule).
    The sums are formed in float64 and rounded once when stored; elements no window
    selects are 0. The gradient of a window holding only padding goes nowhere
    (DirectML 1.15.4, erratum E26).
    """
    x = inputs["InputTensor"]
    dy = inputs["InputGradientTensor"]
    _, indices, nonempty = window_argmax(x, desc.window, desc.input_gradient_tensor.sizes[2:])
    weights = np.where(nonempty, np.asarray(dy, dtype=np.float64), 0.0)
    # bincount adds the weights of repeated indices: overlapping windows sum.
    dx = np.bincount(indices.ravel(), weights=weights.ravel(), minlength=x.size)
    return {"OutputGradientTensor": dx.reshape(x.shape)}


# -- MAX_POOLING, MAX_POOLING1 (generic descs) ------------------------------------


def compute_max_pooling(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """MAX_POOLING and MAX_POOLING1: MAX_POOLING2 with Dilations 1 (the same argmax, bit-exact)."""
    validate_generic(desc, feature_level)
    values, indices, _ = window_argmax(inputs["InputTensor"], generic_window(desc), desc.output_tensor.sizes[2:])
    results = {"OutputTensor": values}
    if getattr(desc, "output_indices_tensor", None) is not None:
        results["OutputIndicesTensor"] = indices.astype(desc.output_indices_tensor.dtype)
    return results


# -- AVERAGE_POOLING, AVERAGE_POOLING1 ---------------------------------------------


def _summed_window(desc: Any) -> PoolingWindow:
    """The window AVERAGE_POOLING1 / LP_POOLING1 sum over; UnsupportedError for a zero Dilation.

    DirectML 1.15.4 accepts Dilations of 0, but sums such windows by a rule that is
    neither the literal geometry nor MAX_POOLING2's (:meth:`PoolingWindow.scanned`):
    with Dilations {0, 1} and WindowSize {3, 3} LP_POOLING1 (P 1) gives 3.56 times the
    single element's magnitude. Not characterised yet: the directml backend runs them.
    """
    window = generic_window(desc)
    if 0 in window.dilations:
        raise UnsupportedError(
            f"{desc.dml_name}: the numpy backend does not implement a Dilations entry of 0 "
            f"(Dilations {list(window.dilations)}; DirectML's result is not characterised); "
            "the directml backend runs it"
        )
    return window


def _window_sum(
    x: NDArray[Any], window: PoolingWindow, output_spatial: Sequence[int], term: Callable[[NDArray[Any]], Any]
) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
    """``term`` of the in-bounds elements added into a float32 sum from +0, in window order.

    Returns the sum and the number of in-bounds elements of each window (DirectML
    rounds after every addition, so the order is the row-major window scan).
    """
    out_shape = (*x.shape[:2], *output_spatial)
    total = np.zeros(out_shape, dtype=np.float32)
    count = np.zeros(out_shape, dtype=np.int64)
    with np.errstate(all="ignore"):
        for values, valid, _ in window_offsets(x, window, output_spatial):
            total = np.where(valid, total + term(values.astype(np.float32)), total).astype(np.float32)
            count += valid
    return total, count


def compute_average_pooling(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``sum / count`` in float32: count = in-bounds elements, or ``prod(WindowSize)`` with IncludePadding.

    DirectML 1.15.4 (probed): a float32 sum in row-major window order, one float32
    division; IncludePadding divides by the whole window's element count, also where
    the window reaches past EndPadding. A window without in-bounds elements gives NaN
    (0 / 0), or 0 with IncludePadding.
    """
    validate_generic(desc, feature_level)
    window = _summed_window(desc)
    total, count = _window_sum(inputs["InputTensor"], window, desc.output_tensor.sizes[2:], lambda v: v)
    if desc.include_padding:
        count = np.full_like(count, int(np.prod(window.window_size, dtype=np.int64)))
    with np.errstate(all="ignore"):
        return {"OutputTensor": (total / count.astype(np.float32)).astype(np.float32)}


# -- LP_POOLING, LP_POOLING1 ------------------------------------------------------------


def _power(base: NDArray[np.float32], exponent: np.float32) -> NDArray[np.float32]:
    """DirectML's float power of a non-negative base: ``exp2(exponent * log2(base))``, NaN as 0.

    In float64 here (the device's exp2/log2 approximations are not reproduced; results
    agree within float32 rounding). ``0^0`` is 1 (P 0).
    """
    b = np.asarray(base, dtype=np.float64)
    with np.errstate(all="ignore"):
        out = np.where(np.isnan(b), 0.0, np.power(b, np.float64(exponent)))
    return np.asarray(out, dtype=np.float32)


def compute_lp_pooling(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """``(sum |x|^P)^(1/P)`` over the in-bounds elements of each window, summed in float32.

    P 1 and 2 are exact float32 steps (``sum |x|``, ``sqrt(sum x*x)``), as DirectML
    1.15.4 computes them bit for bit; other P use DirectML's power (NaN elements
    contribute 0; agreement within float32 rounding). A window without in-bounds
    elements gives 0.
    """
    validate_generic(desc, feature_level)
    p = int(desc.p)
    x = inputs["InputTensor"]
    window = _summed_window(desc)
    out_spatial = desc.output_tensor.sizes[2:]
    if p == 0:
        # |x|^0 = 1 for every in-bounds element (NaN and 0 included), then s^(1/0) = s^inf:
        # inf for two or more elements, 1 for one, 0 for a window of only padding.
        _, count = _window_sum(x, window, out_spatial, np.zeros_like)
        return {"OutputTensor": np.where(count > 1, np.inf, count).astype(np.float32)}
    if p == 1:
        total, _ = _window_sum(x, window, out_spatial, np.abs)
        return {"OutputTensor": total}
    if p == 2:
        total, _ = _window_sum(x, window, out_spatial, lambda v: v * v)
        return {"OutputTensor": np.sqrt(total)}
    total, _ = _window_sum(x, window, out_spatial, lambda v: _power(np.abs(v), np.float32(p)))
    return {"OutputTensor": _power(total, np.float32(1) / np.float32(p))}


# -- AVERAGE_POOLING_GRAD -------------------------------------------------------------


def compute_average_pooling_grad(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """Each ``InputGradient[o] / count(o)`` added to the in-bounds elements of window ``o``.

    ``count(o)`` is :func:`~dmlops.descs.pooling.average_divisors` (with IncludePadding
    the window's part inside the padded input, erratum E171). The share ``g / count``
    is a float32 division, as the forward's; the shares an element receives are summed
    in float64 and rounded once when stored (DirectML's order of the float32 additions
    is its shader's: agreement within float32 rounding of the sum). A window without
    in-bounds elements sends nothing.
    """
    validate_generic(desc, feature_level)
    dy = inputs["InputGradientTensor"]
    shape = desc.output_gradient_tensor.sizes
    window = _summed_window(desc)
    # window_offsets gathers values too: a zero-strided stand-in for the forward input.
    ghost = np.broadcast_to(np.zeros((), dtype=np.float32), shape)
    offsets = [(valid, flat) for _, valid, flat in window_offsets(ghost, window, dy.shape[2:])]
    count = average_divisors(window, shape[2:], dy.shape[2:], include_padding=bool(desc.include_padding))
    if 0 in window.strides:
        offsets = []  # DirectML 1.15.4: a zero Stride sends nothing anywhere (module docstring of descs.pooling)
    with np.errstate(all="ignore"):
        share = (dy.astype(np.float32) / count.astype(np.float32)).astype(np.float64)
    image = int(np.prod(shape[2:], dtype=np.int64))
    planes = np.arange(shape[0] * shape[1], dtype=np.int64).reshape(shape[0], shape[1], *([1] * (len(shape) - 2)))
    dx = np.zeros(shape[0] * shape[1] * image, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # inf + -inf shares: NaN, as DirectML's sum
        for valid, flat in offsets:
            # Only the in-bounds elements: a masked weight of 0 would turn an infinite share into NaN.
            target = (planes * image + flat)[valid]
            dx += np.bincount(target, weights=np.broadcast_to(share, valid.shape)[valid], minlength=dx.size)
    return {"OutputGradientTensor": dx.reshape(shape)}


# -- MAX_UNPOOLING ---------------------------------------------------------------------


def compute_max_unpooling(
    desc: Any, inputs: Mapping[str, NDArray[Any]], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, NDArray[Any]]:
    """Zeros, then each input element copied to the flat output element its index names (bit-exact).

    The index rules (whole-tensor flat indices, low 32 bits, out-of-range ones dropped,
    conflicting duplicates refused) are :func:`~dmlops.descs.pooling.unpooling_targets`.
    """
    validate_generic(desc, feature_level)
    target, data = unpooling_targets(desc, inputs["IndicesTensor"], inputs["InputTensor"])
    out = np.zeros(desc.output_tensor.element_count, dtype=desc.output_tensor.dtype)
    out[target] = data
    return {"OutputTensor": out.reshape(desc.output_tensor.sizes)}


OPERATORS: dict[str, Callable[..., Any]] = {
    "MAX_POOLING2": compute_max_pooling2,
    "MAX_POOLING_GRAD": compute_max_pooling_grad,
    "MAX_POOLING": compute_max_pooling,
    "MAX_POOLING1": compute_max_pooling,
    "AVERAGE_POOLING": compute_average_pooling,
    "AVERAGE_POOLING1": compute_average_pooling,
    "LP_POOLING": compute_lp_pooling,
    "LP_POOLING1": compute_lp_pooling,
    "AVERAGE_POOLING_GRAD": compute_average_pooling_grad,
    "MAX_UNPOOLING": compute_max_unpooling,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
