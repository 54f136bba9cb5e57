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


KERNEL_CHUNKS_PER_THREAD = 16
"""Ranges per thread of :func:`run_kernel`: each is one numba call (about 2 us). The last-axis
REDUCE SUM of 256 MiB (2 threads) took the same with 16 per thread claimed through Python as
with 32 claimed inside compiled code (8.9 / 9.2 against 9.0 / 9.2 ms, settled rounds;
docs/performance.md)."""

PARALLEL_MIN_ELEMENTS = 1 << 16
"""Below this much work (elements touched) :func:`run_kernel` runs on the calling thread alone."""


def threads_for(elements: int, items: int | None = None) -> int:
    """Threads for a call touching ``elements``: one below PARALLEL_MIN_ELEMENTS, else all (at most ``items``)."""
    if elements < PARALLEL_MIN_ELEMENTS:
        return 1
    return thread_count() if items is None else min(thread_count(), items)


def run_kernel(kernel: Callable[..., Any], items: int, elements: int, *args: Any) -> list[Any]:
    """``kernel(*args, lo, hi)`` over the items ``[0, items)``: in ranges the threads claim, when large.

    ``kernel`` is a numba function compiled with ``nogil=True`` (and ``error_model="numpy"``
    where a division by zero must give inf or NaN, as ``parallel=True`` implied, instead of
    raising ZeroDivisionError) whose last two arguments bound
    the items it computes (planes, ROI tasks, lines, elements); each item is computed by one
    thread from start to end. ``elements`` measures the call's work: below
    ``PARALLEL_MIN_ELEMENTS`` one call on the calling thread does it all. Returns the calls'
    results (counts, for kernels that return them), in no particular order.

    Every CPU kernel runs this way rather than as a numba ``prange`` loop: numba's OpenMP
    workers spin for about a millisecond after each parallel region, and on the 2-core VM they
    took the cores from the executor's threads of the next operator (an 8 MiB ADD after a
    MAX_POOLING2 took about 0.9 ms longer than alone; docs/performance.md).
    """
    threads = threads_for(elements, items)
    if threads <= 1:
        return [kernel(*args, 0, items)]
    results: list[Any] = []  # list.append is atomic under the GIL
    on_threads(lambda lo, hi: results.append(kernel(*args, lo, hi)), items, threads, threads * KERNEL_CHUNKS_PER_THREAD)
    return results
