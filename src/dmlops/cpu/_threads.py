"""Splitting a call's work over threads, in chunks claimed as threads come free.

The work is cut into chunks; the calling thread and the executor's threads each take the
next unclaimed chunk until none is left. Against one fixed range per thread this keeps
every thread busy to the end when one starts late (a wake-up costs about 70 us on the
2-core VM, far more when another process holds the core) or runs slower (another
library's workers still spinning on a core): on a memory-bound reduction the calling
thread finished 124-146 of 256 equal chunks (docs/performance.md). Two forms:

* :func:`on_threads`: Python work, ``work(lo, hi)`` per chunk (NumPy calls, or numba
  kernels called per chunk); the chunk numbers come from a shared Python counter.
* :func:`run_claimed`: a compiled kernel that claims its chunks itself (:func:`claim`, an
  atomic counter), called once per thread, so there is no Python call per chunk.

Every item is processed by one thread, start to end, so a result never depends on the
thread count or the chunking.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import njit, types
from numba.extending import intrinsic

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def thread_count() -> int:
    """Worker count: numba's thread count, so ``NUMBA_NUM_THREADS`` governs every CPU kernel."""
    try:
        import numba

        return max(1, int(numba.get_num_threads()))
    except Exception:  # pragma: no cover - numba is this backend's requirement
        return 1


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=thread_count(), thread_name_prefix="dmlops-cpu")
        return _pool


CHUNKS_PER_THREAD = 32
"""Chunks per thread of :func:`run_claimed` (fewer where there are fewer items)."""
PYTHON_CHUNKS_PER_THREAD = 8
"""Chunks per thread of :func:`on_threads`: each costs a Python call (about 10-20 us), so fewer."""


@intrinsic
def _fetch_add(typingctx: Any, counter: Any) -> Any:  # pragma: no cover - compiled
    """``counter[0] += 1`` atomically (sequentially consistent); returns the old value."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.atomic_rmw("add", array.data, ir.Constant(ir.IntType(64), 1), "seq_cst")

    return types.int64(counter), codegen


@njit(cache=True, nogil=True, inline="always")
def claim(counter, items, chunks):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """The next unclaimed chunk's range ``(lo, hi)`` of ``[0, items)``, or ``(0, 0)`` when none is left."""
    c = _fetch_add(counter)  # type: ignore[call-arg,var-annotated]
    if c >= chunks:
        return 0, 0
    return items * c // chunks, items * (c + 1) // chunks


def chunk_count(items: int, threads: int) -> int:
    """How many chunks a call of ``items`` items on ``threads`` threads is cut into."""
    return max(1, min(items, threads * CHUNKS_PER_THREAD))


def on_threads(work: Callable[[int, int], Any], items: int, threads: int, chunks: int | None = None) -> None:
    """``work(lo, hi)`` over ``[0, items)`` in ``chunks`` contiguous ranges, claimed by ``threads`` threads.

    The calling thread works too; the executor's threads join as they wake (a wake-up takes
    about 70 us on the 2-core VM, and far longer when another process holds the core), so
    none waits for a late one at the end. Returns once every range has finished; the first
    exception raised by ``work`` is raised here, after the other threads have stopped.
    """
    if chunks is None:
        chunks = max(1, min(items, threads * PYTHON_CHUNKS_PER_THREAD))
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


def run_claimed(claiming: Callable[..., Any], items: int, threads: int, *args: Any) -> None:
    """``claiming(counter, items, chunks, *args)`` on ``threads`` threads sharing one counter.

    ``claiming`` is a compiled kernel that processes the chunks it claims (:func:`claim`) until
    none is left, so the chunks go to whichever thread is free, with no Python call per
    chunk. The calling thread runs it too; the call returns once every thread has stopped.
    """
    chunks = chunk_count(items, threads)
    counter = np.zeros(1, np.int64)
    futures = [_executor().submit(claiming, counter, items, chunks, *args) for _ in range(threads - 1)]
    try:
        claiming(counter, items, chunks, *args)
    finally:  # every thread has stopped (or failed) before the call returns or raises
        for f in futures:
            f.exception()
    for f in futures:
        f.result()
