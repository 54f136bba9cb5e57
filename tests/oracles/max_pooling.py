"""Scalar-loop oracles for MAX_POOLING2 and MAX_POOLING_GRAD, written from the pages.

Independent of ``dmlops.reference``: every output element walks its window with
plain Python loops, exactly as the dossier words the rules (dml-semantics §3).
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def pooled_size(n: int, window: int, stride: int, start: int, end: int, dilation: int, ceil_mode: bool) -> int:
    """floor((n + start + end - effective) / stride) + 1, or the ceil-mode count."""
    effective = (window - 1) * dilation + 1
    span = n + start + end - effective
    if ceil_mode:
        return math.ceil(span / stride) + 1
    return span // stride + 1


def lowest(dtype):
    """Where DirectML's running maximum starts: the type's lowest finite value."""
    dtype = np.dtype(dtype)
    return dtype.type(np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min)


def max_pool_oracle(x: np.ndarray, window, strides, start, end, dilations, output_spatial):
    """(values, flat row-major indices, non-empty mask) of MAX_POOLING2, one output element at a time.

    DirectML 1.15.4's rule (erratum E26): the maximum starts at the type's lowest
    finite value, at the window's first in-bounds element; only a strictly greater
    element replaces it (NaN compares false). A window of only padding: the lowest
    value at index 0.
    """
    n_batch, n_chan, *in_spatial = x.shape
    values = np.zeros((n_batch, n_chan, *output_spatial), dtype=x.dtype)
    indices = np.zeros((n_batch, n_chan, *output_spatial), dtype=np.int64)
    nonempty = np.zeros((n_batch, n_chan, *output_spatial), dtype=bool)
    for b in range(n_batch):
        for ch in range(n_chan):
            for o in itertools.product(*(range(s) for s in output_spatial)):
                best = lowest(x.dtype)
                best_index = None
                # Row-major scan of the window: increasing logical index.
                for k in itertools.product(*(range(w) for w in window)):
                    coord = [o[d] * strides[d] + k[d] * dilations[d] - start[d] for d in range(len(window))]
                    if any(c < 0 or c >= in_spatial[d] for d, c in enumerate(coord)):
                        continue  # padding never participates
                    value = x[(b, ch, *coord)]
                    here = int(np.ravel_multi_index((b, ch, *coord), x.shape))
                    if best_index is None:
                        best_index = here
                    if value > best:
                        best, best_index = value, here
                values[(b, ch, *o)] = best
                indices[(b, ch, *o)] = 0 if best_index is None else best_index
                nonempty[(b, ch, *o)] = best_index is not None
    return values, indices, nonempty


def max_pool_grad_oracle(x: np.ndarray, dy: np.ndarray, window, strides, start, end, dilations) -> np.ndarray:
    """float64 MAX_POOLING_GRAD: dy added at each window's argmax (windows of only padding: nowhere)."""
    _, indices, nonempty = max_pool_oracle(x, window, strides, start, end, dilations, dy.shape[2:])
    dx = np.zeros(x.size, dtype=np.float64)
    for o in np.ndindex(*dy.shape):
        if nonempty[o]:
            dx[indices[o]] += float(dy[o])
    return dx.reshape(x.shape)
