"""Multi-threaded NumPy copies for the data-movement operators.

``np.copyto`` releases the GIL, and one core does not saturate memory bandwidth on
a strided or reversed copy (measured on 2 cores: a full reverse of 256 MiB took
27 ms on one thread, 20 ms on two; ``[:, :, ::2, ::2]`` 32 vs 18-24 ms). A plain
contiguous-to-contiguous copy is at NumPy's speed on one thread and got slower when
split, so NumPy's copy leaves it whole. Large copies whose rows are contiguous in both
views (contiguous ones included) go to ``_stream.copy`` instead: whole vectors with
streaming stores, over the threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._threads import on_threads, thread_count

PARALLEL_MIN_BYTES = 1 << 21
"""Below this many output bytes a copy runs on the calling thread."""


def split_axis(shape: tuple[int, ...], parts: int) -> int | None:
    """The first axis long enough to give every worker a chunk, or None."""
    for axis, n in enumerate(shape):
        if n >= parts:
            return axis
    return None


def run_chunks(shape: tuple[int, ...], nbytes: int, work: Callable[[tuple[slice, ...]], Any]) -> None:
    """Call ``work(index)`` on disjoint chunks of an array of ``shape``, in parallel when large.

    ``index`` is a tuple of slices selecting one chunk (along one axis).
    """
    parts = thread_count()
    axis = split_axis(shape, parts) if parts > 1 and nbytes >= PARALLEL_MIN_BYTES else None
    if axis is None:
        work(tuple(slice(None) for _ in shape))
        return
    lead = (slice(None),) * axis
    on_threads(lambda lo, hi: work((*lead, slice(lo, hi))), shape[axis], parts)


def copy_into(out: NDArray[Any], source: NDArray[Any]) -> None:
    """``np.copyto(out, source)`` bit-exactly, split over threads when that pays."""
    if out.dtype != source.dtype:
        raise TypeError("copy_into copies between equal dtypes only")  # internal misuse
    # Same-dtype copies move bits; viewing float16 as uint16 guarantees NaN payloads survive.
    if out.dtype.kind == "f":
        uint = np.dtype(f"u{out.dtype.itemsize}")
        out, source = out.view(uint), source.view(uint)
    from . import _stream  # (it imports this module)

    if _stream.copies(out, source):  # large, rows contiguous: whole vectors, streamed
        _stream.copy(out, source)
        return
    contiguous = out.flags.c_contiguous and source.flags.c_contiguous
    if contiguous or out.size == 0:
        np.copyto(out, source)
        return

    def work(index: tuple[slice, ...]) -> None:
        np.copyto(out[index], source[index])

    run_chunks(out.shape, out.nbytes, work)
