"""Splitting a call's work over threads, in chunks claimed as threads come free.

The work is cut into chunks; the calling thread and the executor's threads each take the
next unclaimed chunk until none is left (:func:`on_threads`). Against one fixed range per
thread this keeps every thread busy to the end when one starts late (a wake-up costs about
70 us on the 2-core VM, far more when another process holds the core) or runs slower
(another library's workers still spinning on a core): on a memory-bound reduction the
calling thread finished 124-146 of 256 equal chunks (docs/performance.md).

Every item is processed by one thread, start to end, so a result never depends on the
thread count or the chunking.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def thread_count() -> int:
    """Worker count: numba's thread count, so ``NUMBA_NUM_THREADS`` governs every CPU kernel."""
    import numba  # the cpu backend's requirement

    return max(1, int(numba.get_num_threads()))


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=thread_count(), thread_name_prefix="dmlops-cpu")
        return _pool


PYTHON_CHUNKS_PER_THREAD = 8
"""Chunks per thread of :func:`on_threads` by default: each costs a Python call."""


def on_threads(work: Callable[[int, int], Any], items: int, threads: int, chunks: int | None = None) -> None:
    """``work(lo, hi)`` over ``[0, items)`` in ``chunks`` contiguous ranges, claimed by ``threads`` threads.

    The calling thread works too; the executor's threads join as they wake (a wake-up takes
    about 70 us on the 2-core VM, and far longer when another process holds the core), so
    none waits for a late one at the end. Returns once every range has finished; the first
    exception raised by ``work`` is raised here, after the other threads have stopped.
    """
    chunks = max(1, min(items, threads * PYTHON_CHUNKS_PER_THREAD if chunks is None else chunks))
    if threads <= 1 or chunks <= 1:
        work(0, items)
        return
    claims = itertools.count()  # next() on it is atomic under the GIL
    failed: list[BaseException] = []

    def claim_and_work() -> None:
        for c in claims:
            if c >= chunks or failed:
                return
            try:
                work(items * c // chunks, items * (c + 1) // chunks)
            except BaseException as exc:
                failed.append(exc)
                return

    futures = [_executor().submit(claim_and_work) for _ in range(min(threads, chunks) - 1)]
    claim_and_work()
    for f in futures:
        f.result()
    if failed:
        raise failed[0]
