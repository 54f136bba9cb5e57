"""Pooling on the CPU backend (numba): MAX_POOLING2, MAX_POOLING_GRAD and the generic neighbours.

The neighbours: MAX_POOLING and MAX_POOLING1 (as their MAX_POOLING2 equivalent),
AVERAGE_POOLING(1) and LP_POOLING(1) (one window-sum kernel), AVERAGE_POOLING_GRAD (a
plane-private float64 scatter) and MAX_UNPOOLING (a bit-copying scatter). Each follows the
reference's numerics step for step (see their sections below), so the results are
bit-identical to it except LP_POOLING with P other than 0, 1 and 2 (libm ``pow``, as the
reference's, within its stated tolerance).

Shared helpers
--------------
Max-pooling kernels shared by MAX_POOLING2 and MAX_POOLING_GRAD.

Every tensor is viewed as 5-D ``{N, C, D, H, W}`` (a 2-D pooling gets D = 1 with a
window of 1), and each parallel task owns one ``(n, c)`` plane. The argmax rule is
the reference's (:mod:`dmlops.reference.pooling`), DirectML's: row-major window
scan, padding never takes part, the running maximum starts at the type's lowest
finite value at the first in-bounds element, and a later element replaces it only if
strictly greater (so NaN never wins). Values are compared exactly (FLOAT16 decoded to
float32, integers natively).

The gradient is a plane-private scatter: each task zeroes a float32 (float64 for
FLOAT64) scratch plane, adds every InputGradient element of the plane at its
window's argmax and stores the plane once, rounded. No atomics, deterministic. For
2-D pooling, in the forward pass and the gradient alike (``_interior_row``), the windows
of an output row that lie wholly inside the input row are scanned together
(stride-de-interleaved rows, a branch-free compare-and-select that vectorises), with the
same compares per window in the same order as ``_argmax``.

MAX_POOLING2
------------
MAX_POOLING2 on the CPU (numba): windowed maximum and its row-major linear index.

The selected element is copied, so every type is bit-exact.

MAX_POOLING_GRAD
----------------
MAX_POOLING_GRAD on the CPU (numba): recompute the forward argmax, add the gradient there.

Plane-private float32 accumulation, one rounding at the store.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..descs._base import run_as
from ..descs.pooling import (
    MaxPooling2Desc,
    MaxPoolingGradDesc,
    PoolingWindow,
    average_divisors,
    generic_window,
    max_pooling2_equivalent,
    unpooling_targets,
)
from ..enums import FeatureLevel
from ..errors import UnsupportedError
from ._common import kernel_view, key, load, store
from ._threads import run_kernel
from ._vector_math import available as _vector_available
from ._vector_windows import row_window_sums

_ROW_SUMS = row_window_sums()
_VECTORS = _vector_available()  # without AVX-512 the old de-interleaving loop is faster than the fallback

# -- Shared helpers ------------------------------------------------------------


@njit(cache=True, inline="always")
def _argmax(xp, od, oh, ow, spans, dl, half, low):  # type: ignore[no-untyped-def]  # pragma: no cover
    """(d, h, w, running maximum) of one window of plane ``xp``; d = -1 if it holds only padding."""
    fd, d0, d1 = spans[0, 0, od], spans[0, 1, od], spans[0, 2, od]
    fh, h0, h1 = spans[1, 0, oh], spans[1, 1, oh], spans[1, 2, oh]
    fw, w0, w1 = spans[2, 0, ow], spans[2, 1, ow], spans[2, 2, ow]
    if d0 >= d1 or h0 >= h1 or w0 >= w1:
        return -1, 0, 0, low
    # DirectML: the maximum starts at the lowest finite value, at the first in-bounds element.
    bd, bh, bw = fd + d0 * dl[0], fh + h0 * dl[1], fw + w0 * dl[2]
    best = low
    for kd in range(d0, d1):
        d = fd + kd * dl[0]
        for kh in range(h0, h1):
            row = xp[d, fh + kh * dl[1]]
            for kw in range(w0, w1):
                v = key(row[fw + kw * dl[2]], half)
                if v > best:  # strictly greater: ties keep the first, NaN never wins
                    best = v
                    bd, bh, bw = d, fh + kh * dl[1], fw + kw * dl[2]
    return bd, bh, bw, best


@njit(cache=True, inline="always")
def _interior_columns(spans, out_w, window_w):  # type: ignore[no-untyped-def]  # pragma: no cover
    """[ow_a, ow_b): the output columns whose windows lie wholly inside the input row (no padding column)."""
    ow_a = 0
    while ow_a < out_w and not (spans[2, 1, ow_a] == 0 and spans[2, 2, ow_a] == window_w):
        ow_a += 1
    ow_b = ow_a
    while ow_b < out_w and spans[2, 1, ow_b] == 0 and spans[2, 2, ow_b] == window_w:
        ow_b += 1
    return ow_a, ow_b


@njit(cache=True, inline="always")
def _interior_row(xp, oh, ow_a, n_int, spans, dl, half, low, stride_w, window_w, phases, best, arg):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The argmax of the interior windows of output row ``oh`` of a 2-D pooling, together.

    ``best[j]``, ``arg[j]``: the running maximum (compare space) and the plane-linear index of
    column ``ow_a + j``'s window. Returns False when the window's rows are all padding. The
    windows are scanned one window element at a time in row-major order: per column the same
    sequence of compares as ``_argmax``, so ties and NaN select the same element.
    """
    size_w = xp.shape[2]
    fh, h0, h1 = spans[1, 0, oh], spans[1, 1, oh], spans[1, 2, oh]
    if h0 >= h1:
        return False
    base_w = spans[2, 0, ow_a]
    h = fh + h0 * dl[1]
    for j in range(n_int):
        best[j] = low
        arg[j] = h * size_w + base_w + j * stride_w
    for kh in range(h0, h1):
        h = fh + kh * dl[1]
        row = xp[0, h]
        # de-interleave the row by the stride: every window element then reads a contiguous
        # run, and the compare-and-select loop vectorises
        for p in range(stride_w):
            php = phases[p]
            for i in range((size_w - p + stride_w - 1) // stride_w):
                php[i] = key(row[p + i * stride_w], half)
        for kw in range(window_w):
            off = base_w + kw * dl[2]
            start = off // stride_w
            run = phases[off - start * stride_w, start : start + n_int]
            lin = h * size_w + off
            for j in range(n_int):
                v = run[j]
                b = best[j]
                take = v > b  # NaN never wins
                best[j] = v if take else b
                arg[j] = lin + j * stride_w if take else arg[j]
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def _forward(x, out, indices, has_indices, spans, dl, half, low, low_element, compare, stride_w, window_w, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    _, c_, size_d, size_h, size_w = x.shape
    _, _, out_d, out_h, out_w = out.shape
    image = size_d * size_h * size_w
    # 2-D pooling (one depth slice, in bounds): interior columns through the row-vectorised scan
    # (a window stride of 0, which every column shares, an empty window, and a stride wider than
    # the row, where at most one window is interior and the phases would be stride-sized, take
    # the scalar path)
    flat = size_d == 1 and out_d == 1 and spans[0, 1, 0] < spans[0, 2, 0] and 0 < stride_w <= size_w and window_w > 0
    ow_a, ow_b = _interior_columns(spans, out_w, window_w)
    n_int = ow_b - ow_a if flat else 0
    n_phase = (size_w + stride_w - 1) // stride_w if flat else 1
    for plane in range(lo, hi):
        n = plane // c_
        c = plane - n * c_
        xp = x[n, c]
        op = out[n, c]
        ip = indices[n, c] if has_indices else indices[0, 0]
        best = np.empty(max(n_int, 1), compare.dtype)  # (compare: an empty array of the compare type)
        arg = np.empty(max(n_int, 1), np.int64)
        phases = np.empty((stride_w if n_int > 0 else 0, n_phase), compare.dtype)
        for od in range(out_d):
            for oh in range(out_h):
                scanned = n_int > 0 and _interior_row(
                    xp, oh, ow_a, n_int, spans, dl, half, low, stride_w, window_w, phases, best, arg
                )
                for ow in range(out_w):
                    if scanned and ow_a <= ow < ow_b:
                        j = ow - ow_a
                        h, w = arg[j] // size_w, arg[j] - arg[j] // size_w * size_w
                        op[od, oh, ow] = xp[0, h, w] if best[j] > low else low_element
                        if has_indices:
                            ip[od, oh, ow] = plane * image + arg[j]
                        continue
                    d, h, w, best_ = _argmax(xp, od, oh, ow, spans, dl, half, low)
                    if d < 0:  # only padding: the lowest value at index 0, as DirectML
                        op[od, oh, ow] = low_element
                        if has_indices:
                            ip[od, oh, ow] = 0
                        continue
                    # the element itself (bit-exact), unless nothing beat the lowest value
                    op[od, oh, ow] = xp[d, h, w] if best_ > low else low_element
                    if has_indices:
                        ip[od, oh, ow] = plane * image + (d * size_h + h) * size_w + w


@njit(cache=True, nogil=True, error_model="numpy")
def _grad(x, dy, dx, spans, dl, half, zero, stride_w, window_w, low, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    _, c_, size_d, size_h, size_w = x.shape
    _, _, out_d, out_h, out_w = dy.shape
    # 2-D pooling (one depth slice, in bounds): the row-vectorised scan (_interior_row)
    # (a window stride of 0, which every column shares, an empty window, and a stride wider than
    # the row, where at most one window is interior and the phases would be stride-sized, take
    # the scalar path)
    flat = size_d == 1 and out_d == 1 and spans[0, 1, 0] < spans[0, 2, 0] and 0 < stride_w <= size_w and window_w > 0
    ow_a, ow_b = _interior_columns(spans, out_w, window_w)
    n_int = ow_b - ow_a if flat else 0
    n_phase = (size_w + stride_w - 1) // stride_w if flat else 1
    for plane in range(lo, hi):
        n = plane // c_
        c = plane - n * c_
        xp = x[n, c]
        gp = dy[n, c]
        acc = np.zeros(size_d * size_h * size_w, zero.dtype)
        best = np.empty(max(n_int, 1), zero.dtype)
        arg = np.empty(max(n_int, 1), np.int64)
        phases = np.empty((stride_w if n_int > 0 else 0, n_phase), zero.dtype)
        for od in range(out_d):
            for oh in range(out_h):
                grow = gp[od, oh]
                for ow in range(out_w):
                    if ow_a <= ow < ow_b and n_int > 0:
                        continue
                    d, h, w, _ = _argmax(xp, od, oh, ow, spans, dl, half, low)
                    if d >= 0:  # a window of only padding sends its gradient nowhere
                        acc[(d * size_h + h) * size_w + w] += load(grow[ow], half)
                if n_int > 0 and _interior_row(
                    xp, oh, ow_a, n_int, spans, dl, half, low, stride_w, window_w, phases, best, arg
                ):
                    for j in range(n_int):
                        acc[arg[j]] += load(grow[ow_a + j], half)
        op = dx[n, c]
        for d in range(size_d):
            for h in range(size_h):
                orow = op[d, h]
                base = (d * size_h + h) * size_w
                for w in range(size_w):
                    orow[w] = store(acc[base + w], orow[w], half)


def _lowest(dtype: np.dtype[Any], kernel_dtype: np.dtype[Any]) -> tuple[Any, Any]:
    """(the lowest finite value in compare space, the same as a kernel element): where DirectML's maximum starts.

    Compare space is float32 for FLOAT16 (whose kernel elements are raw uint16 bits).
    """
    if dtype == np.float16:
        low = np.float16(np.finfo(np.float16).min)
        return np.float32(low), low.view(np.uint16)
    low = np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min
    return dtype.type(low), kernel_dtype.type(low)


def _as5d(a: NDArray[Any]) -> NDArray[Any]:
    return a if a.ndim == 5 else a[:, :, np.newaxis]


def _params(window: PoolingWindow, in_spatial: tuple[int, ...], out_spatial: tuple[int, ...]) -> tuple[Any, Any]:
    """(spans, dilations) of a window for the kernels.

    ``spans[axis, :, o]`` holds the first input coordinate of output ``o``'s window and
    its in-bounds offsets ``[k0, k1)``, so padding is skipped without per-element tests.
    """
    pad = 3 - window.spatial_dimension_count
    strides = (1,) * pad + tuple(window.strides)
    sizes = (1,) * pad + tuple(window.window_size)
    starts = (0,) * pad + tuple(window.start_padding)
    dilations = np.array((1,) * pad + tuple(window.dilations), dtype=np.int64)
    n_in = (1,) * pad + tuple(in_spatial)
    n_out = (1,) * pad + tuple(out_spatial)
    spans = np.zeros((3, 3, max(n_out)), dtype=np.int64)
    for axis in range(3):
        o = np.arange(n_out[axis], dtype=np.int64)
        first = o * strides[axis] - starts[axis]
        dil = int(dilations[axis])
        k0 = np.where(first < 0, (-first + dil - 1) // dil, 0)
        k1 = np.minimum(sizes[axis], np.where(first <= n_in[axis] - 1, (n_in[axis] - 1 - first) // dil + 1, 0))
        spans[axis, 0, : o.size], spans[axis, 1, : o.size], spans[axis, 2, : o.size] = first, k0, k1
    return spans, dilations


def forward(window: PoolingWindow, x: NDArray[Any], out: NDArray[Any], indices: NDArray[Any] | None) -> None:
    """MAX_POOLING2: the window maxima into ``out`` and, if given, their linear indices."""
    xk, half = kernel_view(_as5d(x))
    ok, _ = kernel_view(_as5d(out))
    has = indices is not None
    ik = _as5d(indices) if indices is not None else np.zeros((1, 1, 1, 1, 1), np.uint64)
    low, low_element = _lowest(x.dtype, xk.dtype)
    compare = np.zeros(0, np.asarray(low).dtype)
    params = _params(window, x.shape[2:], out.shape[2:])
    planes = xk.shape[0] * xk.shape[1]
    run_kernel(
        _forward, planes, xk.size, xk, ok, ik, has, *params, half, low, low_element, compare, *_row_geometry(window)
    )


def gradient(window: PoolingWindow, x: NDArray[Any], dy: NDArray[Any], dx: NDArray[Any]) -> None:
    """MAX_POOLING_GRAD: ``dy`` scatter-added at each window's argmax, into ``dx``."""
    xk, half = kernel_view(_as5d(x))
    dyk, _ = kernel_view(_as5d(dy))
    dxk, _ = kernel_view(_as5d(dx))
    zero = np.zeros(0, np.float64 if x.dtype == np.float64 else np.float32)
    low, _ = _lowest(x.dtype, xk.dtype)
    params = _params(window, x.shape[2:], dy.shape[2:])
    run_kernel(
        _grad, xk.shape[0] * xk.shape[1], xk.size, xk, dyk, dxk, *params, half, zero, *_row_geometry(window), low
    )


def _row_geometry(window: PoolingWindow) -> tuple[int, int]:
    """(stride, window size) along the last spatial axis: the row-vectorised scan's."""
    spatial = window.spatial_dimension_count
    return int(window.strides[spatial - 1]), int(window.window_size[spatial - 1])


# -- MAX_POOLING2 --------------------------------------------------------------


def run_max_pooling2(
    desc: MaxPooling2Desc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Window maxima into ``OutputTensor``; indices into ``OutputIndicesTensor`` when present."""
    # A zero Dilation changes which elements DirectML scans (PoolingWindow.scanned).
    forward(desc.window.scanned(), inputs["InputTensor"], outputs["OutputTensor"], outputs.get("OutputIndicesTensor"))


# -- MAX_POOLING_GRAD ----------------------------------------------------------


def run_max_pooling_grad(
    desc: MaxPoolingGradDesc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """``OutputGradient[i] = sum of InputGradient[o]`` over the windows ``o`` whose argmax is ``i``."""
    gradient(desc.window, inputs["InputTensor"], inputs["InputGradientTensor"], outputs["OutputGradientTensor"])


# -- AVERAGE_POOLING, AVERAGE_POOLING1, LP_POOLING, LP_POOLING1 ---------------------------
#
# One kernel sums a term of every in-bounds element of each window into a float32 from +0,
# in row-major window order (kd, kh, kw), each addition rounded: the reference's order and
# DirectML's. The term and the finish are chosen by ``mode`` (loop-invariant: LLVM unswitches
# it out of the window loops):
#
#   _AVERAGE  term x,      finish sum / float32(count)  (count: in-bounds, or prod(WindowSize))
#   _LP1      term |x|,    finish sum
#   _LP2      term x * x,  finish sqrt(sum)             (float32 multiply and sqrt: correctly rounded)
#   _LPP      term |x|^P,  finish sum^(1/P)             (float64 libm pow rounded to float32, NaN as 0)
#   _LP0      no sum,      finish inf for 2+ in-bounds elements, else their count (|x|^0 = 1, s^inf)

_AVERAGE, _LP1, _LP2, _LPP, _LP0 = 0, 1, 2, 3, 4


@njit(cache=True, inline="always")
def _power(base, exponent):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The reference's DirectML power of a non-negative float32: float64 ``pow`` rounded to float32, NaN as 0."""
    if base != base:
        return np.float32(0.0)
    return np.float32(math.pow(np.float64(base), exponent))


@njit(cache=True, inline="always")
def _term(v, mode, p):  # type: ignore[no-untyped-def]  # pragma: no cover
    """What one in-bounds element adds to its window's float32 sum (float32 in, float32 out)."""
    if mode == _AVERAGE:
        return v
    if mode == _LP1:
        return abs(v)
    if mode == _LP2:
        return v * v
    return _power(abs(v), p)


@njit(cache=True, inline="always")
def _finish(total, count, mode, inv_p, full):  # type: ignore[no-untyped-def]  # pragma: no cover
    """A window's float32 result from its sum and its number of in-bounds elements."""
    if mode == _AVERAGE:
        # one float32 division; 0 / 0 = NaN for a window of only padding
        return total / np.float32(full if full >= 0 else count)
    if mode == _LP1:
        return total
    if mode == _LP2:
        return np.sqrt(total)
    if mode == _LPP:
        return _power(total, inv_p)
    return np.float32(np.inf) if count > 1 else np.float32(count)


@njit(cache=True, inline="always")
def _deinterleave(row, phases, stride_w, half, mode, p):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``phases[ph, i]`` = the term of ``row[ph + i * stride_w]``: every window's elements along W contiguous."""
    size_w = row.size
    if stride_w == 2 and mode == _AVERAGE:  # constants (stride, term), so the loop vectorises
        even, odd = phases[0], phases[1]
        for i in range(size_w // 2):
            even[i] = load(row[2 * i], half)
            odd[i] = load(row[2 * i + 1], half)
        if size_w % 2:
            even[size_w // 2] = load(row[size_w - 1], half)
        return
    for ph in range(stride_w):
        php = phases[ph]
        for i in range((size_w - ph + stride_w - 1) // stride_w):
            php[i] = _term(load(row[ph + i * stride_w], half), mode, p)


@njit(cache=True, nogil=True, error_model="numpy")
def _window_sums(x, out, spans, dl, half, mode, p, inv_p, full, stride_w, window_w, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    _, c_, _, _, size_w = x.shape
    _, _, out_d, out_h, out_w = out.shape
    # Interior output columns: windows wholly inside the row (every kw in bounds), a contiguous run
    # (summed together unless the stride is 0 or wider than the row: see _forward)
    ow_a, ow_b = _interior_columns(spans, out_w, window_w)
    n_int = ow_b - ow_a if 1 <= stride_w <= size_w and mode != _LP0 else 0
    n_phase = (size_w + stride_w - 1) // stride_w if n_int > 0 else 1
    # AVERAGE of float32 rows of stride 1 or 2: the interior sums a row at a time on vectors
    vector_rows = _VECTORS and mode == _AVERAGE and half is None and stride_w in (1, 2) and x.strides[4] == 4
    for plane in range(lo, hi):
        n = plane // c_
        c = plane - n * c_
        xp = x[n, c]
        op = out[n, c]
        acc = np.empty(max(n_int, 1), np.float32)
        phases = np.empty((stride_w if n_int > 0 else 1, n_phase), np.float32)
        for od in range(out_d):
            fd, d0, d1 = spans[0, 0, od], spans[0, 1, od], spans[0, 2, od]
            for oh in range(out_h):
                fh, h0, h1 = spans[1, 0, oh], spans[1, 1, oh], spans[1, 2, oh]
                rows = max(d1 - d0, 0) * max(h1 - h0, 0)
                orow = op[od, oh]
                skip = ow_b - ow_a if n_int > 0 else 0  # the interior columns, summed together below
                for k in range(out_w - skip):
                    ow = k if k < ow_a else k + skip
                    fw, w0, w1 = spans[2, 0, ow], spans[2, 1, ow], spans[2, 2, ow]
                    total = np.float32(0.0)
                    if mode != _LP0:
                        for kd in range(d0, d1):
                            for kh in range(h0, h1):
                                row = xp[fd + kd * dl[0], fh + kh * dl[1]]
                                for kw in range(w0, w1):
                                    total += _term(load(row[fw + kw * dl[2]], half), mode, p)
                    orow[ow] = store(_finish(total, rows * max(w1 - w0, 0), mode, inv_p, full), orow[ow], half)
                if n_int == 0:
                    continue
                # The interior columns of the output row together: each window element in row-major
                # order (kd, kh, kw) is added to every column's sum at once, so each sum sees the
                # same additions in the same order as the scalar loop above. The row's terms are
                # de-interleaved by the stride first (:func:`_deinterleave`): every kw then reads a
                # contiguous run, and the addition loop vectorises. Up to three kw are added in one
                # pass over acc, still in kw order (a 3-wide window: one pass over acc, not three).
                base_w = spans[2, 0, ow_a]
                fresh = True  # the first pass writes acc from +0, as the scalar sums start (no memset call a row)
                for kd in range(d0, d1):
                    for kh in range(h0, h1):
                        if vector_rows:  # one pass a row, on 64-byte vectors (_vector_windows)
                            row = xp[fd + kd * dl[0], fh + kh * dl[1]]
                            if stride_w == 1:
                                _ROW_SUMS(acc, row, base_w, n_int, 1, window_w, dl[2], fresh)
                            else:
                                _ROW_SUMS(acc, row, base_w, n_int, 2, window_w, dl[2], fresh)
                            fresh = False
                            continue
                        _deinterleave(xp[fd + kd * dl[0], fh + kh * dl[1]], phases, stride_w, half, mode, p)
                        kw = 0
                        while kw < window_w:  # up to three kw a pass over acc, added in kw order
                            off = base_w + kw * dl[2]
                            first = off // stride_w
                            ra = phases[off - first * stride_w, first : first + n_int]
                            if kw + 3 <= window_w:
                                off += dl[2]
                                first = off // stride_w
                                rb = phases[off - first * stride_w, first : first + n_int]
                                off += dl[2]
                                first = off // stride_w
                                rc = phases[off - first * stride_w, first : first + n_int]
                                if fresh:
                                    for j in range(n_int):
                                        acc[j] = ((np.float32(0.0) + ra[j]) + rb[j]) + rc[j]
                                else:
                                    for j in range(n_int):
                                        acc[j] = ((acc[j] + ra[j]) + rb[j]) + rc[j]
                                kw += 3
                            elif fresh:
                                for j in range(n_int):
                                    acc[j] = np.float32(0.0) + ra[j]
                                kw += 1
                            else:
                                for j in range(n_int):
                                    acc[j] += ra[j]
                                kw += 1
                            fresh = False
                if fresh:  # no in-bounds row: every sum is +0
                    acc[:] = 0
                count = rows * window_w
                # through a slice indexed from 0: orow[ow_a + j] could be negative to numba, whose
                # wraparound select made LLVM store with scatters
                dst = orow[ow_a : ow_a + n_int]
                if mode == _AVERAGE:  # the mode's branches out of the loop: the divisions vectorise
                    divisor = np.float32(full if full >= 0 else count)
                    for j in range(n_int):
                        dst[j] = store(acc[j] / divisor, dst[j], half)
                else:
                    for j in range(n_int):
                        dst[j] = store(_finish(acc[j], count, mode, inv_p, full), dst[j], half)


def _summed_window(desc: Any) -> PoolingWindow:
    """The window AVERAGE_POOLING(1) / LP_POOLING(1) sum over; UnsupportedError for a zero Dilation, as the reference.

    DirectML 1.15.4's sum over a zero-Dilation window is not characterised (the reference
    refuses it too); the directml backend runs it.
    """
    window = generic_window(desc)
    if 0 in window.dilations:
        raise UnsupportedError(
            f"{desc.dml_name}: the cpu backend does not implement a Dilations entry of 0 "
            f"(Dilations {list(window.dilations)}; DirectML's result is not characterised); "
            "the directml backend runs it"
        )
    return window


def _pool_sums(desc: Any, x: NDArray[Any], out: NDArray[Any], mode: int, p: int = 1, full: int = -1) -> None:
    """Run :func:`_window_sums` over ``desc``'s window (``full`` >= 0: divide by it instead of the count)."""
    xk, half = kernel_view(_as5d(x))
    ok, _ = kernel_view(_as5d(out))
    exponent = np.float32(max(p, 1))
    # The reference's exponents: float32(P) and the float32 quotient 1 / float32(P), each widened to float64.
    powers = np.float64(exponent), np.float64(np.float32(1) / exponent)
    window = _summed_window(desc)
    spans, dl = _params(window, x.shape[2:], out.shape[2:])
    last = (int(window.strides[-1]), int(window.window_size[-1]))
    run_kernel(_window_sums, xk.shape[0] * xk.shape[1], xk.size, xk, ok, spans, dl, half, mode, *powers, full, *last)


def run_average_pooling(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """AVERAGE_POOLING(1): float32 window sum / count (``prod(WindowSize)`` with IncludePadding), as the reference."""
    full = int(np.prod(generic_window(desc).window_size, dtype=np.int64)) if desc.include_padding else -1
    _pool_sums(desc, inputs["InputTensor"], outputs["OutputTensor"], _AVERAGE, full=full)


def run_lp_pooling(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """LP_POOLING(1): ``(sum |x|^P)^(1/P)`` summed in float32 (P 0, 1, 2 exact; others libm ``pow``)."""
    p = int(desc.p)
    mode = {0: _LP0, 1: _LP1, 2: _LP2}.get(p, _LPP)
    _pool_sums(desc, inputs["InputTensor"], outputs["OutputTensor"], mode, p)


# -- AVERAGE_POOLING_GRAD ----------------------------------------------------------------
#
# Each task owns one (n, c) plane: a float64 scratch plane of the output gradient, zeroed,
# receives share[o] = float64(float32(g[o]) / float32(divisor[o])) at every in-bounds element
# of window o. The loop runs window offset k (row-major) outermost, outputs o inside, so each
# element receives its shares in increasing k: the reference's order of float64 additions
# (one bincount per offset), hence the same sums bit for bit (NaN, inf and signed zeros
# included: the scratch starts at +0). The plane is stored once, rounded to the tensor type.


@njit(cache=True, nogil=True, error_model="numpy")
def _average_grad(dy, dx, divisor, spans, half, active, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    _, c_, out_d, out_h, out_w = dy.shape
    _, _, size_d, size_h, size_w = dx.shape
    win_d, win_h, win_w = spans[0, 3, 0], spans[1, 3, 0], spans[2, 3, 0]
    for plane in range(lo, hi):
        n = plane // c_
        c = plane - n * c_
        gp = dy[n, c]
        acc = np.zeros((size_d, size_h, size_w), np.float64)
        if active:
            share = np.empty((out_d, out_h, out_w), np.float64)
            for od in range(out_d):
                for oh in range(out_h):
                    for ow in range(out_w):
                        # the float32 division, as the forward's (a window of only padding sends nothing)
                        share[od, oh, ow] = np.float64(load(gp[od, oh, ow], half) / divisor[od, oh, ow])
            for kd in range(win_d):
                for kh in range(win_h):
                    for kw in range(win_w):
                        for od in range(out_d):
                            if not spans[0, 1, od] <= kd < spans[0, 2, od]:
                                continue
                            d = spans[0, 0, od] + kd
                            for oh in range(out_h):
                                if not spans[1, 1, oh] <= kh < spans[1, 2, oh]:
                                    continue
                                arow = acc[d, spans[1, 0, oh] + kh]
                                srow = share[od, oh]
                                for ow in range(out_w):
                                    if spans[2, 1, ow] <= kw < spans[2, 2, ow]:
                                        arow[spans[2, 0, ow] + kw] += srow[ow]
        op = dx[n, c]
        for d in range(size_d):
            for h in range(size_h):
                orow = op[d, h]
                arow = acc[d, h]
                for w in range(size_w):
                    orow[w] = store(arow[w], orow[w], half)


def run_average_pooling_grad(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Each ``InputGradient[o] / divisor(o)`` (float32) added, in float64, to the in-bounds elements of window ``o``.

    ``divisor`` is :func:`~dmlops.descs.pooling.average_divisors` (erratum E171). A zero
    Stride gives zeros everywhere (DirectML 1.15.4: every window sends nothing).
    """
    dy, dx = inputs["InputGradientTensor"], outputs["OutputGradientTensor"]
    window = generic_window(desc)
    spatial = window.spatial_dimension_count
    counts = average_divisors(window, dx.shape[2:], dy.shape[2:], include_padding=bool(desc.include_padding))
    # int64 -> float32 as the reference converts its counts
    divisor = counts.astype(np.float32).reshape((1,) * (3 - spatial) + counts.shape)
    spans, _ = _params(window, dx.shape[2:], dy.shape[2:])
    # spans[axis, 3, 0]: the axis's WindowSize (the offset loop's extent)
    sizes = np.zeros((3, 1, spans.shape[2]), np.int64)
    sizes[:, 0, 0] = (1,) * (3 - spatial) + tuple(window.window_size)
    dyk, half = kernel_view(_as5d(dy))
    dxk, _ = kernel_view(_as5d(dx))
    active = 0 not in window.strides
    spans = np.concatenate((spans, sizes), axis=1)
    run_kernel(_average_grad, dyk.shape[0] * dyk.shape[1], dxk.size, dyk, dxk, divisor, spans, half, active)


# -- MAX_UNPOOLING -------------------------------------------------------------------------
#
# Data movement on the elements' bits (every type viewed as the unsigned integer of its
# width): the flat output is zeroed, then every input element in bounds (index modulo 2^32 <
# the output's element count, erratum E170) is written at its index, in parallel over
# planes, into a flat scratch. Conflicting duplicates (the reference's DataIndexError) are
# found afterwards: a second pass compares every written element with what its target
# holds, which differs for at least one writer of any target written with different bits.
# Only then does the reference's own check run, for its exact message; the caller's output
# is written only when there is none (the reference leaves it untouched on a refusal).


@njit(cache=True, nogil=True, error_model="numpy")
def _unpool(x, indices, out, count, check, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    # planes [lo, hi): each element in bounds written at its index (check False), or counted
    # where its target holds other bits (check True: the second pass)
    _, c_, size_h, size_w = x.shape
    clashes = 0
    for plane in range(lo, hi):
        n = plane // c_
        c = plane - n * c_
        for h in range(size_h):
            for w in range(size_w):
                t = np.uint64(indices[n, c, h, w]) & np.uint64(0xFFFFFFFF)
                if t < count:
                    if not check:
                        out[t] = x[n, c, h, w]
                    elif out[t] != x[n, c, h, w]:
                        clashes += 1
    return clashes


def run_max_unpooling(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Zeros, then each input element copied (bit for bit) to the flat output element its index names.

    The index rules are :func:`~dmlops.descs.pooling.unpooling_targets`'s. The writes go
    to a flat scratch, copied into the output only when no conflicting duplicates were
    found: a refusal leaves the caller's output as it was, as the reference's does.
    """
    x, indices, out = inputs["InputTensor"], inputs["IndicesTensor"], outputs["OutputTensor"]
    bits = np.dtype(f"u{x.dtype.itemsize}")
    flat = np.zeros(out.size, out.dtype)  # the flat row-major output, checked before it is stored
    count = np.uint64(desc.output_tensor.element_count)
    planes, xb, fb = x.shape[0] * x.shape[1], x.view(bits), flat.view(bits)
    run_kernel(_unpool, planes, x.size, xb, indices, fb, count, False)
    if sum(run_kernel(_unpool, planes, x.size, xb, indices, fb, count, True)):
        unpooling_targets(desc, indices, x)  # raises DataIndexError with the reference's message
        raise AssertionError("MAX_UNPOOLING: a clash the reference's check does not see")  # pragma: no cover
    np.copyto(out, flat.reshape(out.shape))


OPERATORS: dict[str, Callable[..., Any]] = {
    "MAX_POOLING2": run_max_pooling2,
    "MAX_POOLING_GRAD": run_max_pooling_grad,
    **{name: run_as(max_pooling2_equivalent, run_max_pooling2) for name in ("MAX_POOLING", "MAX_POOLING1")},
    "AVERAGE_POOLING": run_average_pooling,
    "AVERAGE_POOLING1": run_average_pooling,
    "LP_POOLING": run_lp_pooling,
    "LP_POOLING1": run_lp_pooling,
    "AVERAGE_POOLING_GRAD": run_average_pooling_grad,
    "MAX_UNPOOLING": run_max_unpooling,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
