"""Host-side tables shared by RESAMPLE2 and RESAMPLE_GRAD1 (kernels/resample.cu).

The per-axis taps come from the semantics layer (:mod:`dmlops.descs._resample`, float32
coordinates, DirectML's LINEAR taps), so every selected index equals the reference's. They are padded
to four axes with identity maps and uploaded once per plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..enums import InterpolationMode
from ..reference._resample import ResampleDesc, desc_taps
from ._plan import max_abs_offset
from ._runtime import cupy_module, params

AXES = 4


def _pad(values: Sequence[int], fill: int) -> list[int]:
    values = [int(v) for v in values]
    return [fill] * (AXES - len(values)) + values


def forward_axes(desc: ResampleDesc) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], int]:
    """Per axis (padded to four) the forward's (idx0, idx1, t), and the bit mask of interpolated axes.

    NEAREST_NEIGHBOR: idx0 is the one tap. LINEAR: DirectML's taps and weights
    (:meth:`~dmlops.descs._resample.ResampleParameters.linear_axes`).
    """
    pad = AXES - desc.dimension_count
    zero = np.zeros(1, np.int64)
    axes = [(zero, zero, np.zeros(1, np.float32))] * pad
    interp = 0
    if desc.interpolation_mode is InterpolationMode.NEAREST_NEIGHBOR:
        for ((first, _),) in desc_taps(desc):
            index = first.astype(np.int64)
            axes.append((index, index, np.zeros(index.size, np.float32)))
        return axes, interp
    for a, axis in enumerate(desc.linear_axes()):
        axes.append((axis.first.astype(np.int64), axis.second.astype(np.int64), axis.weight))
        interp |= int(axis.interpolates) << (pad + a)
    return axes, interp


def forward_tables(desc: ResampleDesc) -> tuple[list[Any], list[int], int]:
    """Device arrays (idx0, idx1, t) for all axes, each axis' offset into them, the interpolated-axes mask."""
    axes, interp = forward_axes(desc)
    offsets = [int(v) for v in np.cumsum([0] + [a[0].size for a in axes[:-1]])]
    cp = cupy_module()
    arrays = [cp.asarray(np.concatenate([a[k] for a in axes])) for k in range(3)]
    return arrays, offsets, interp


def is_identity_axis(axis: list[Any], n_in: int, n_out: int) -> bool:
    """True when an axis maps every index to itself with weight 1 (no table needed)."""
    if n_in != n_out:
        return False
    idx, w = axis[0]
    if not np.array_equal(idx, np.arange(n_in)) or (w is not None and not np.all(np.asarray(w) == 1.0)):
        return False
    return len(axis) == 1 or bool(np.all(np.asarray(axis[1][1]) == 0.0))


def csr_axes(desc: ResampleDesc) -> tuple[int, list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Host CSR lists of the transpose, padded to four axes: (identity mask, starts, outs, weights).

    For each forward input index i of an axis: the (output index, weight) pairs whose
    forward tap reads i, zero weights dropped, sorted by output index.
    """
    taps = desc_taps(desc)
    n_in = desc.forward_input_sizes
    n_out = desc.forward_output_sizes
    pad = AXES - len(taps)
    mask = (1 << pad) - 1
    for d, axis in enumerate(taps):
        if is_identity_axis(axis, n_in[d], n_out[d]):
            mask |= 1 << (pad + d)
    starts: list[np.ndarray] = [np.array([0, 1], np.int64)] * pad
    outs: list[np.ndarray] = [np.zeros(1, np.int64)] * pad
    weights: list[np.ndarray] = [np.ones(1)] * pad
    for d, axis in enumerate(taps):
        rows, cols, vals = [], [], []
        for idx, w in axis:
            o = np.arange(idx.size, dtype=np.int64)
            ww = np.ones(idx.size) if w is None else np.asarray(w, dtype=np.float64)
            keep = ww != 0.0
            rows.append(idx[keep].astype(np.int64))
            cols.append(o[keep])
            vals.append(ww[keep])
        r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
        order = np.lexsort((c, r))
        r, c, v = r[order], c[order], v[order]
        start = np.searchsorted(r, np.arange(n_in[d] + 1)).astype(np.int64)
        starts.append(start)
        outs.append(c)
        weights.append(v)
    return mask, starts, outs, weights


def transpose_tables(desc: ResampleDesc, weight_dtype: Any = np.float64) -> tuple[list[Any], list[int], int, list[int]]:
    """Per-axis CSR lists of the transpose (device arrays) and each axis' offset.

    For each forward input index i: the (output index, weight) pairs whose tap reads i
    (zero weights dropped). Returns device arrays (start, outs, weights) and each
    axis' offset into ``start``, the bit mask of identity axes (padded to four axes) and
    each axis' longest list.
    Weights are stored as ``weight_dtype`` (float32 when the kernel accumulates in
    float32), indices as int32.
    """
    mask, starts, outs, weights = csr_axes(desc)
    longest = [int(np.max(np.diff(st))) if st.size > 1 else 0 for st in starts]
    base = np.cumsum([0] + [o.size for o in outs[:-1]])
    starts = [s + b for s, b in zip(starts, base)]
    offsets = [int(v) for v in np.cumsum([0] + [s.size for s in starts[:-1]])]
    cp = cupy_module()
    arrays = [
        cp.asarray(np.concatenate(starts).astype(np.int32)),
        cp.asarray(np.concatenate(outs).astype(np.int32)),
        cp.asarray(np.concatenate(weights).astype(weight_dtype)),
    ]
    return arrays, offsets, mask, longest


def resample_params(
    write_sizes: Sequence[int],
    read_sizes: Sequence[int],
    read_strides: Sequence[int],
    write_strides: Sequence[int],
    offsets: Sequence[int],
    identity: int = 0,
    interp: int = 0,
) -> tuple[np.void, bool]:
    """(the ResampleParams struct, whether 32-bit offsets are exact)."""
    count = int(np.prod(write_sizes))
    p = params(
        ("count", "i8", count),
        ("out_size", "i8", _pad(write_sizes, 1)),
        ("in_size", "i8", _pad(read_sizes, 1)),
        ("x_stride", "i8", _pad(read_strides, 0)),
        ("y_stride", "i8", _pad(write_strides, 0)),
        ("tab_off", "i8", list(offsets)),
        ("identity", "i8", identity),
        ("interp", "i8", interp),
    )
    biggest = max(max_abs_offset(read_sizes, read_strides), max_abs_offset(write_sizes, write_strides), 4 * count)
    return p, biggest < 2**30
