"""Splitting a call's work over threads, in chunks claimed as threads come free.

The work is cut into chunks; the calling thread and the helper threads each take the
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
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

_JOBS: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
"""Work offered to the helper threads: each job is one helper's share of one call."""
_helpers: list[threading.Thread] = []
_helpers_lock = threading.Lock()


def thread_count() -> int:
    """Worker count: numba's thread count, so ``NUMBA_NUM_THREADS`` governs every CPU kernel."""
    import numba  # the cpu backend's requirement

    return max(1, int(numba.get_num_threads()))


def _serve() -> None:
    while True:
        _JOBS.get()()


def _ensure_helpers(count: int) -> None:
    """At least ``count`` helper threads (daemons, started on first need, never stopped)."""
    if len(_helpers) >= count:
        return
    with _helpers_lock:
        while len(_helpers) < count:
            helper = threading.Thread(target=_serve, name=f"dmlops-cpu-{len(_helpers)}", daemon=True)
            helper.start()
            _helpers.append(helper)


def _forget_helpers_after_fork() -> None:  # a forked child has none of its parent's threads
    global _JOBS, _helpers_lock
    _JOBS = queue.SimpleQueue()
    _helpers.clear()
    _helpers_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers_after_fork)


class _Call:
    """One :func:`on_threads` call: its chunks, the claims on them, and the helpers that joined it.

    The caller waits only for helpers that started before it ran out of chunks: a helper that
    starts later (still waking, or busy with another call) finds the call closed and leaves at
    once, so no call waits for a thread that is not working on it, and a call made from inside
    another's work cannot deadlock on the helpers.
    """

    __slots__ = ("active", "bounds", "chunks", "claims", "failed", "finished", "lock", "open", "work")

    def __init__(self, work: Callable[[int, int], Any], bounds: list[int]) -> None:
        self.work, self.bounds, self.chunks = work, bounds, len(bounds) - 1
        self.claims = itertools.count()  # next() on it is atomic under the GIL
        self.failed: list[BaseException] = []
        self.lock = threading.Lock()
        self.open = True
        self.active = 0
        self.finished: queue.SimpleQueue[None] = queue.SimpleQueue()

    def claim_and_work(self) -> None:
        bounds, chunks, work, failed = self.bounds, self.chunks, self.work, self.failed
        for c in self.claims:
            if c >= chunks or failed:
                return
            try:
                work(bounds[c], bounds[c + 1])
            except BaseException as exc:
                failed.append(exc)
                return

    def help(self) -> None:
        with self.lock:
            if not self.open:
                return
            self.active += 1
        try:
            self.claim_and_work()
        finally:
            with self.lock:
                self.active -= 1
                last = self.active == 0 and not self.open
            if last:
                self.finished.put(None)

    def close_and_wait(self) -> None:
        with self.lock:
            self.open = False
            waiting = self.active > 0
        if waiting:
            self.finished.get()


PYTHON_CHUNKS_PER_THREAD = 8
"""Chunks per thread of :func:`on_threads` by default: each costs a Python call."""


def _equal_bounds(items: int, chunks: int) -> list[int]:
    return [items * c // chunks for c in range(chunks + 1)]


def _guided_bounds(items: int, threads: int, smallest: int) -> list[int]:
    """Bounds of ranges that shrink as the work runs out.

    Each range is a ``2 * threads``-th of what is left, at least ``smallest``: the first are long
    (fewer Python calls), the last short, so no thread finishes long after the others (the
    256 MiB last-axis REDUCE SUM on two threads: 10.1-10.5 against 10.7-11.6 ms with 32 equal
    ranges, whose last took 0.33 ms; docs/performance.md).
    """
    bounds, done = [0], 0
    while done < items:
        done = min(items, done + max(smallest, -(-(items - done) // (2 * threads))))
        bounds.append(done)
    return bounds


def on_threads(
    work: Callable[[int, int], Any], items: int, threads: int, chunks: int | None = None, *, guided: bool = False
) -> None:
    """``work(lo, hi)`` over ``[0, items)`` in ``chunks`` contiguous ranges, claimed by ``threads`` threads.

    ``guided``: ranges that shrink as the work runs out (the first a ``2 * threads``-th of it,
    none shorter than a quarter of a ``chunks``-th) instead of ``chunks`` equal ones.

    The calling thread works too; the helper threads join as they wake (a wake-up takes
    about 70 us on the 2-core VM, and far longer when another process holds the core), so
    none waits for a late one at the end. Returns once every range has finished; the first
    exception raised by ``work`` is raised here, after the other threads have stopped.

    The helpers take their jobs from a plain ``queue.SimpleQueue``: offering a job costs
    about 27 us when the caches are cold (after a large operator), a
    ``ThreadPoolExecutor.submit`` 120 us (docs/performance.md).
    """
    chunks = max(1, min(items, threads * PYTHON_CHUNKS_PER_THREAD if chunks is None else chunks))
    if threads <= 1 or chunks <= 1:
        work(0, items)
        return
    bounds = _guided_bounds(items, threads, -(-items // (4 * chunks))) if guided else _equal_bounds(items, chunks)
    call = _Call(work, bounds)
    helpers = min(threads, len(bounds) - 1) - 1
    _ensure_helpers(helpers)
    for _ in range(helpers):
        _JOBS.put(call.help)
    call.claim_and_work()
    call.close_and_wait()
    if call.failed:
        raise call.failed[0]


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
    took the cores from the helper threads of the next operator (an 8 MiB ADD after a
    MAX_POOLING2 took about 0.9 ms longer than alone; docs/performance.md).
    """
    threads = threads_for(elements, items)
    if threads <= 1:
        return [kernel(*args, 0, items)]
    results: list[Any] = []  # list.append is atomic under the GIL
    on_threads(
        lambda lo, hi: results.append(kernel(*args, lo, hi)),
        items,
        threads,
        threads * KERNEL_CHUNKS_PER_THREAD,
        guided=True,
    )
    return results
