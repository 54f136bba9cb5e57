"""Splitting a call's work over threads, in chunks claimed as threads come free.

Two routes. Python work (:func:`on_threads`: NumPy calls, or numba kernels called per chunk)
runs on the executor's threads, which claim chunk numbers from a shared counter. A numba
kernel with a ``prange`` form runs on numba's own threads (OpenMP), which claim chunks with
an atomic counter inside the compiled code:

A kernel ``kernel(*args, lo, hi)`` processes items ``lo .. hi - 1`` of ``[0, items)``. Its
``prange`` form runs one loop per thread; each thread claims the next of ``chunks`` contiguous
ranges with an atomic counter until none is left. Against one fixed range per thread this
keeps both cores busy to the end when one thread starts late or runs slower: on the 2-core
VM the calling thread finished 124-146 of 256 equal chunks of a memory-bound reduction
(docs/performance.md), so fixed halves would wait up to 14 % for the slower thread.

Every item is still processed by one thread, start to end, so a result never depends on
the thread count or the chunking.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

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
"""Chunks a compiled call's items are cut into, per thread (fewer where there are fewer items)."""
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
