"""Resampling on the CPU backend (numba): RESAMPLE2, RESAMPLE_GRAD1.

Shared helpers
--------------
Separable resampling kernels shared by RESAMPLE2 (forward) and RESAMPLE_GRAD1 (transpose).

Both operators apply one sparse 1-D operator per dimension. The per-dimension taps
come from the semantics layer (:func:`dmlops.descs.resampling.desc_taps`: float32
coordinates, floor/ceil, clamps), so every backend selects the same indices. Each
1-D operator is stored as CSR rows (target index -> source indices and weights),
the transpose simply swapping the roles; taps of weight exactly 0 are dropped (no
``0 * inf``), as in the reference.

The kernel is a gather (no atomics, no zero-filled output pass): each parallel task
owns one output plane (dims 0 and 1) and accumulates, in float32 (float64 for
FLOAT64 and the integer types), first along the last dimension into a small
per-task scratch (source rows x target columns), then along dimension 2 into the
output, rounding once at the store.

NEAREST_NEIGHBOR's transpose (RESAMPLE_GRAD1) has its own kernel. Every
InputGradient element goes to exactly one OutputGradient element, and along each of
dimensions 2 and 3 the elements sent to one target index form a contiguous run of
source indices (the nearest index is monotone in the coordinate). Each target row
therefore sums whole source rows (contiguous adds that vectorise) into a scratch row,
then adds up the runs of that row: no CSR lookup per element.

RESAMPLE2
---------
RESAMPLE2 on the CPU (numba).

NEAREST_NEIGHBOR is a bit-exact gather; LINEAR interpolates one dimension after the
other in float32, as DirectML does (:func:`interpolate`).

RESAMPLE_GRAD1
--------------
RESAMPLE_GRAD1 on the CPU (numba): the exact transpose of RESAMPLE2 as a gather.

Each OutputGradient element sums the InputGradient elements whose forward taps hit
it (shared helpers above): no atomics, no zero-fill pass, float32 accumulation
(FLOAT16 too), one rounding at the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..descs._base import run_as
from ..descs.resampling import (
    Resample2Desc,
    ResampleDesc,
    ResampleGrad1Desc,
    desc_taps,
    resample2_equivalent,
    resample_grad1_equivalent,
    value_scale_terms,
)
from ..enums import FeatureLevel, InterpolationMode
from ._common import kernel_view, load, store
from ._copy import run_chunks
from ._threads import run_kernel

# -- Shared helpers ------------------------------------------------------------

Csr = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any]]


def pad4(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Left-pad a 1- to 4-D shape with 1s to 4-D."""
    return (1,) * (4 - len(shape)) + tuple(shape)


def axis_csr(desc: ResampleDesc, weight_dtype: Any) -> list[Csr]:
    """Per dimension (padded to 4), the CSR rows of the transpose (forward input index -> its outputs).

    Only RESAMPLE_GRAD1 sums weights: RESAMPLE2 LINEAR interpolates (:func:`interpolate`).
    """
    taps = desc_taps(desc)
    n_in = desc.forward_input_sizes
    rows: list[Csr] = []
    for _ in range(4 - len(taps)):
        rows.append((np.array([0, 1], np.int64), np.zeros(1, np.int64), np.ones(1, weight_dtype)))
    for d, axis in enumerate(taps):
        target_idx, source_idx, weights = [], [], []
        for idx, w in axis:
            o = np.arange(idx.size, dtype=np.int64)
            w64 = np.ones(idx.size) if w is None else np.asarray(w, dtype=np.float64)
            keep = w64 != 0.0
            target_idx.append(o[keep])
            source_idx.append(idx[keep].astype(np.int64))
            weights.append(w64[keep])
        # transposed: rows are forward input indices, their entries the forward outputs
        s, t, w = np.concatenate(target_idx), np.concatenate(source_idx), np.concatenate(weights)
        n_rows = n_in[d]
        order = np.lexsort((s, t))  # by row, then by source index
        t, s, w = t[order], s[order], w[order]
        ptr = np.zeros(n_rows + 1, np.int64)
        np.cumsum(np.bincount(t, minlength=n_rows), out=ptr[1:])
        rows.append((ptr, s, w.astype(weight_dtype)))
    return rows


@njit(cache=True, nogil=True, error_model="numpy")
def _separable(src, dst, p0, i0, w0, p1, i1, w1, p2, i2, w2, p3, i3, w3, half, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    _, d1, d2, d3 = dst.shape
    s2 = src.shape[2]
    used = np.zeros(s2, np.bool_)
    for e in range(i2.size):
        used[i2[e]] = True
    zero = w3.dtype.type(0)
    for plane in range(lo, hi):
        a = plane // d1
        b = plane - a * d1
        # stage 1: along the last dimension, source rows x target columns
        tmp = np.zeros((s2, d3), w3.dtype)
        for e0 in range(p0[a], p0[a + 1]):
            for e1 in range(p1[b], p1[b + 1]):
                w01 = w0[e0] * w1[e1]
                sp = src[i0[e0], i1[e1]]
                for r in range(s2):
                    if not used[r]:
                        continue
                    row = sp[r]
                    trow = tmp[r]
                    for c in range(d3):
                        acc = zero
                        for e3 in range(p3[c], p3[c + 1]):
                            acc += w3[e3] * load(row[i3[e3]], half)
                        trow[c] += w01 * acc
        # stage 2: along dimension 2, as row axpys (vectorisable), then one rounding store
        out = dst[a, b]
        acc_row = np.empty(d3, w3.dtype)
        for r in range(d2):
            acc_row[:] = zero
            for e2 in range(p2[r], p2[r + 1]):
                w = w2[e2]
                trow = tmp[i2[e2]]
                for c in range(d3):
                    acc_row[c] += w * trow[c]
            orow = out[r]
            for c in range(d3):
                orow[c] = store(acc_row[c], orow[c], half)


@njit(cache=True, nogil=True, error_model="numpy")
def _nearest(src, dst, i0, i1, i2, i3, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    _, d1, d2, d3 = dst.shape
    for plane in range(lo, hi):
        a = plane // d1
        b = plane - a * d1
        sp = src[i0[a], i1[b]]
        out = dst[a, b]
        for r in range(d2):
            row = sp[i2[r]]
            orow = out[r]
            for c in range(d3):
                orow[c] = row[i3[c]]


@njit(cache=True, nogil=True, error_model="numpy")
def _nearest_transpose(src, dst, p0, i0, p1, i1, r_lo, r_hi, c_lo, c_hi, half, like, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    _, d1, d2, d3 = dst.shape
    s3 = src.shape[3]
    zero = like.dtype.type(0)
    for plane in range(lo, hi):
        a = plane // d1
        b = plane - a * d1
        out = dst[a, b]
        tmp = np.empty(s3, like.dtype)
        for r in range(d2):
            for k in range(s3):
                tmp[k] = zero
            for e0 in range(p0[a], p0[a + 1]):
                for e1 in range(p1[b], p1[b + 1]):
                    sp = src[i0[e0], i1[e1]]
                    for sr in range(r_lo[r], r_hi[r]):
                        row = sp[sr]
                        for k in range(s3):
                            tmp[k] += load(row[k], half)
            orow = out[r]
            for c in range(d3):
                acc = zero
                for k in range(c_lo[c], c_hi[c]):
                    acc += tmp[k]
                orow[c] = store(acc, orow[c], half)


def _runs(ptr: NDArray[np.int64], idx: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """Per CSR row the source run ``[lo, hi)`` if every row's indices are consecutive, else None."""
    n = ptr.size - 1
    lo, hi = np.zeros(n, np.int64), np.zeros(n, np.int64)
    filled = ptr[1:] > ptr[:-1]
    if idx.size:
        same_row = np.repeat(np.arange(n), np.diff(ptr))
        steps = np.diff(idx)[same_row[1:] == same_row[:-1]]
        if np.any(steps != 1):
            return None
        lo[filled] = idx[ptr[:-1][filled]]
        hi[filled] = idx[ptr[1:][filled] - 1] + 1
    return lo, hi


def nearest_transpose(desc: ResampleDesc, source: NDArray[Any], target: NDArray[Any]) -> None:
    """RESAMPLE_GRAD1 for NEAREST_NEIGHBOR: every source element added to its one target."""
    src, half = kernel_view(source.reshape(pad4(source.shape)))
    dst, _ = kernel_view(_view4(target))
    dtype = _compute_dtype(source.dtype)
    rows = axis_csr(desc, dtype)
    runs2, runs3 = _runs(rows[2][0], rows[2][1]), _runs(rows[3][0], rows[3][1])
    if runs2 is None or runs3 is None:  # not monotone (not expected): the general kernel
        _planes(_separable, src, dst, *[a for row in rows for a in row], half)
        return
    zero = np.zeros(0, dtype)
    _planes(_nearest_transpose, src, dst, *rows[0][:2], *rows[1][:2], *runs2, *runs3, half, zero)


def _compute_dtype(dtype: np.dtype[Any]) -> Any:
    return np.float32 if dtype in (np.float16, np.float32) else np.float64


def linear_transpose(desc: ResampleDesc, source: NDArray[Any], target: NDArray[Any]) -> None:
    """RESAMPLE_GRAD1 for LINEAR: the transposed weighted sums of ``source`` into ``target``."""
    src, half = kernel_view(source.reshape(pad4(source.shape)))
    dst, _ = kernel_view(_view4(target))
    rows = axis_csr(desc, _compute_dtype(source.dtype))
    flat = [a for row in rows for a in row]
    _planes(_separable, src, dst, *flat, half)


@njit(cache=True)
def _lerp(a, b, t):  # type: ignore[no-untyped-def]  # pragma: no cover
    """DirectML's float32 interpolation ``a + (b - a) * t`` (no fused multiply-add)."""
    return a + (b - a) * t


@njit(cache=True, nogil=True, error_model="numpy")
def _interpolate(src, dst, f0, s0, t0, f1, s1, t1, f2, s2, t2, f3, s3, t3, interp, half, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    _, d1, d2, d3 = dst.shape
    for plane in range(lo, hi):
        a = plane // d1
        b = plane - a * d1
        v = np.empty(16, np.float32)  # corner (k0, k1, k2, k3) at 8 k0 + 4 k1 + 2 k2 + k3
        out = dst[a, b]
        for r in range(d2):
            for c in range(d3):
                for k in range(16):
                    k0, k1, k2, k3 = k >> 3, (k >> 2) & 1, (k >> 1) & 1, k & 1
                    if (
                        (k0 and not interp[0])
                        or (k1 and not interp[1])
                        or (k2 and not interp[2])
                        or (k3 and not interp[3])
                    ):
                        continue
                    i0 = s0[a] if k0 else f0[a]
                    i1 = s1[b] if k1 else f1[b]
                    i2 = s2[r] if k2 else f2[r]
                    i3 = s3[c] if k3 else f3[c]
                    v[k] = np.float32(load(src[i0, i1, i2, i3], half))
                # outermost dimension first, each as a float32 lerp
                if interp[0]:
                    for k in range(8):
                        v[k] = _lerp(v[k], v[k + 8], t0[a])
                if interp[1]:
                    for k in range(4):
                        v[k] = _lerp(v[k], v[k + 4], t1[b])
                if interp[2]:
                    for k in range(2):
                        v[k] = _lerp(v[k], v[k + 2], t2[r])
                if interp[3]:
                    v[0] = _lerp(v[0], v[1], t3[c])
                out[r, c] = store(v[0], out[r, c], half)


def interpolate(desc: ResampleDesc, source: NDArray[Any], target: NDArray[Any]) -> None:
    """LINEAR forward as DirectML computes it: per-dimension float32 lerps, outermost first.

    See :meth:`dmlops.descs.resampling.ResampleParameters.linear_axes` (erratum E33).
    """
    src, half = kernel_view(source.reshape(pad4(source.shape)))
    dst, _ = kernel_view(_view4(target))
    axes = desc.linear_axes()
    one = np.zeros(1, np.int64)
    tables: list[Any] = [one, one, np.zeros(1, np.float32)] * (4 - len(axes))
    for axis in axes:
        tables += [axis.first.astype(np.int64), axis.second.astype(np.int64), axis.weight]
    interp = np.array([False] * (4 - len(axes)) + [axis.interpolates for axis in axes])
    _planes(_interpolate, src, dst, *tables, interp, half)


def nearest_forward(desc: ResampleDesc, source: NDArray[Any], target: NDArray[Any]) -> None:
    """NEAREST_NEIGHBOR forward: a pure gather, bit-exact for every type."""
    taps = desc_taps(desc)
    idx = [np.zeros(1, np.int64)] * (4 - len(taps)) + [t[0][0].astype(np.int64) for t in taps]
    src = _bits(source.reshape(pad4(source.shape)))
    dst = _bits(_view4(target))
    _planes(_nearest, src, dst, *idx)


def _planes(kernel: Any, src: NDArray[Any], dst: NDArray[Any], *args: Any) -> None:
    """``kernel(src, dst, *args, lo, hi)`` over the target's planes (its first two dimensions), on the threads."""
    run_kernel(kernel, dst.shape[0] * dst.shape[1], max(src.size, dst.size), src, dst, *args)


def _bits(a: NDArray[Any]) -> NDArray[Any]:
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.kind == "f" else a


def _view4(a: NDArray[Any]) -> NDArray[Any]:
    """A writeable 4-D view of an output view (adding leading size-1 dims never copies)."""
    return a[(np.newaxis,) * (4 - a.ndim)]


# -- RESAMPLE2 -----------------------------------------------------------------


def run_resample2(
    desc: Resample2Desc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """``OutputTensor = RESAMPLE2(InputTensor)``, written into ``outputs["OutputTensor"]``."""
    x, out = inputs["InputTensor"], outputs["OutputTensor"]
    if desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR:
        nearest_forward(desc, x, out)
    else:
        interpolate(desc, x, out)


# -- RESAMPLE_GRAD1 ------------------------------------------------------------


def run_resample_grad1(
    desc: ResampleGrad1Desc,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """``OutputGradient[i] = sum_o w(o, i) * InputGradient[o]`` into ``outputs["OutputGradientTensor"]``."""
    dy, dx = inputs["InputGradientTensor"], outputs["OutputGradientTensor"]
    if desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR:
        nearest_transpose(desc, dy, dx)
    else:
        linear_transpose(desc, dy, dx)


def run_value_scale_2d(
    desc: Any,
    inputs: Mapping[str, NDArray[Any]],
    outputs: Mapping[str, NDArray[Any]],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """VALUE_SCALE_2D: ``x * Scale`` then ``+ Bias[c]``, over threads.

    Two float32 operations, no fused multiply-add, as DirectML (``descs.resampling.value_scale_terms``).
    """
    scale, bias = value_scale_terms(desc)
    x, out = inputs["InputTensor"], outputs["OutputTensor"]
    biases = np.broadcast_to(bias, out.shape)

    def work(index: tuple[slice, ...]) -> None:
        with np.errstate(all="ignore"):
            v = np.multiply(x[index], scale, dtype=np.float32)
            v += biases[index]
        np.copyto(out[index], v, casting="unsafe")

    run_chunks(out.shape, out.nbytes, work)


OPERATORS: dict[str, Callable[..., Any]] = {
    "RESAMPLE2": run_resample2,
    "RESAMPLE_GRAD1": run_resample_grad1,
    **{name: run_as(resample2_equivalent, run_resample2) for name in ("RESAMPLE", "RESAMPLE1", "UPSAMPLE_2D")},
    "RESAMPLE_GRAD": run_as(resample_grad1_equivalent, run_resample_grad1),
    "VALUE_SCALE_2D": run_value_scale_2d,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
