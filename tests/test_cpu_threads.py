"""The cpu backend's split of a call's work over threads (``dmlops.cpu._threads``).

Threads claim chunks of a call's items from a shared counter. Checked here: every item is
processed exactly once whatever the thread and chunk counts, in at most one chunk per item;
a reduction's result does not depend on the thread count or the
chunking; and a reduction's cached plan is per layout, so a repeat call with another layout
of the same shape is planned anew. The values themselves are checked against the NumPy
reference in tests/test_cpu_reduction.py.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.cpu_backend
numba = pytest.importorskip("numba")

import dmlops  # noqa: E402
from conftest import run_in_threads  # noqa: E402
from dmlops.cpu import _threads, reduction  # noqa: E402
from dmlops.descs import desc_from_json  # noqa: E402


@numba.njit(nogil=True)
def _mark(owner, lo, hi):  # type: ignore[no-untyped-def]
    """owner[i] += 1 for every item of the range: a GIL-free kernel, as the reductions' are."""
    for i in range(lo, hi):
        owner[i] += 1


@pytest.mark.parametrize(("threads", "items"), [(1, 10), (2, 1), (2, 7), (2, 1000), (4, 999), (2, 10**6)])
def test_every_item_is_claimed_once(threads: int, items: int) -> None:
    """The threads' claimed ranges partition the items, also with compiled work running on both at once."""
    owner = np.zeros(items, np.int64)
    _threads.on_threads(lambda lo, hi: _mark(owner, lo, hi), items, threads, threads * 16)
    assert (owner == 1).all()


@pytest.mark.parametrize(("items", "chunks"), [(10, 10), (7, 3), (1000, 64), (999, 37), (5, 20), (1, 2)])
def test_claims_are_contiguous_ranges_in_order(items: int, chunks: int) -> None:
    ranges: list[tuple[int, int]] = []
    _threads.on_threads(lambda lo, hi: ranges.append((lo, hi)), items, 2, chunks)
    bounds = np.array(sorted(ranges), np.int64)
    assert len(bounds) == min(chunks, items)  # never an empty chunk
    assert bounds[0, 0] == 0 and bounds[-1, 1] == items
    assert (bounds[1:, 0] == bounds[:-1, 1]).all() and (bounds[:, 1] > bounds[:, 0]).all()


def _reduce(function: str, x: np.ndarray, axes: list[int]) -> np.ndarray:
    sizes = [1 if a in axes else n for a, n in enumerate(x.shape)]
    body = {"Function": function, "Axes": axes, "InputTensor": {"DataType": "FLOAT32", "Sizes": list(x.shape)}}
    body["OutputTensor"] = {"DataType": "FLOAT32", "Sizes": sizes}
    desc = desc_from_json("REDUCE", body)
    return np.asarray(dmlops.execute(desc, {"InputTensor": x}, backend="cpu")["OutputTensor"])


CASES = [("SUM", (300, 1000), [1]), ("SUM", (1000, 300), [0]), ("MAX", (300, 1000), [1]), ("MIN", (64, 9, 257), [0, 2])]


@pytest.mark.parametrize(("function", "shape", "axes"), CASES)
def test_results_do_not_depend_on_threads_or_chunks(
    function: str, shape: tuple[int, ...], axes: list[int], monkeypatch: Any
) -> None:
    rng = np.random.default_rng(5)
    # spread exponents: a float64 sum of these depends on the order of its additions
    x = (rng.standard_normal(shape) * np.exp(rng.uniform(-20, 20, shape))).astype(np.float32)
    x.reshape(-1)[::97] = np.float32(-0.0)
    want = _reduce(function, x, axes)
    results = []
    for per_thread in (1, 3, 1000):
        monkeypatch.setattr(_threads, "KERNEL_CHUNKS_PER_THREAD", per_thread)
        results.append(_reduce(function, x, axes))
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        results.append(_reduce(function, x, axes))
    finally:
        numba.set_num_threads(previous)
    for got in results:
        assert got.tobytes() == want.tobytes()


def test_a_plan_is_per_layout() -> None:
    """The same shape in two layouts (C order and a transposed view): each call gets its own plan."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((512, 384)).astype(np.float32)
    b = np.ascontiguousarray(a.T).T  # a's values, column-major
    reduction._PLANS.clear()
    got_a = _reduce("MAX", a, [1])
    got_b = _reduce("MAX", b, [1])
    got_a_again = _reduce("MAX", a, [1])
    assert len(reduction._PLANS) == 2
    want = a.max(axis=1, keepdims=True)
    for got in (got_a, got_b, got_a_again):
        assert np.array_equal(got, want)


@pytest.mark.parametrize(
    ("threads", "items", "chunks"), [(1, 10, None), (2, 10, None), (2, 3, 3), (3, 1000, 17), (2, 5, 1)]
)
def test_on_threads_covers_every_item_once(threads: int, items: int, chunks: int | None) -> None:
    seen = np.zeros(items, np.int64)
    ranges: list[tuple[int, int]] = []

    def work(lo: int, hi: int) -> None:
        ranges.append((lo, hi))  # list.append is atomic under the GIL
        seen[lo:hi] += 1

    _threads.on_threads(work, items, threads, chunks)
    assert (seen == 1).all()
    want = chunks if chunks is not None else min(items, threads * _threads.PYTHON_CHUNKS_PER_THREAD)
    assert len(ranges) == (1 if threads == 1 else want)


@pytest.mark.parametrize(("threads", "items", "chunks"), [(2, 16384, 32), (2, 7, 32), (3, 1000, 17), (2, 100, 3)])
def test_guided_ranges_cover_every_item_once_and_shrink(threads: int, items: int, chunks: int) -> None:
    seen = np.zeros(items, np.int64)
    ranges: list[tuple[int, int]] = []

    def work(lo: int, hi: int) -> None:
        ranges.append((lo, hi))
        seen[lo:hi] += 1

    _threads.on_threads(work, items, threads, chunks, guided=True)
    assert (seen == 1).all()
    lengths = [hi - lo for lo, hi in sorted(ranges)]
    smallest = -(-items // (4 * chunks))
    assert lengths[0] == max(smallest, -(-items // (2 * threads)))  # the first: a 2*threads-th of the work
    assert all(a >= b for a, b in itertools.pairwise(lengths[:-1]))  # never growing, the remainder aside
    assert min(lengths[:-1], default=smallest) >= smallest
    if items == 16384:  # the last-axis REDUCE benchmark's rows: ranges of 128 rows at the end
        assert lengths[-2] == 128 and len(lengths) < 2 * chunks


def test_on_threads_raises_the_work_s_error_after_every_thread_stopped() -> None:
    running = []

    def work(lo: int, hi: int) -> None:
        running.append(lo)
        if lo == 0:
            raise ValueError("chunk 0 failed")

    with pytest.raises(ValueError, match="chunk 0 failed"):
        _threads.on_threads(work, 100, 2, 10)
    count = len(running)
    assert 1 <= count <= 10  # later chunks may be skipped once a failure is seen, never run after return
    assert len(running) == count


def test_a_call_inside_another_call_s_work_completes() -> None:
    """Nested calls (every chunk of an outer call runs an inner one) finish: a caller never waits
    for a helper that has not joined its call."""
    outer_items, inner_items = 8, 50
    seen = np.zeros((outer_items, inner_items), np.int64)

    def outer(lo: int, hi: int) -> None:
        for row in range(lo, hi):
            _threads.on_threads(
                lambda a, b, r=row: seen.__setitem__((r, slice(a, b)), seen[r, a:b] + 1), inner_items, 4, 5
            )

    _threads.on_threads(outer, outer_items, 4, outer_items)
    assert (seen == 1).all()


def test_calls_from_several_threads_at_once() -> None:
    """User threads sharing the helpers: every call covers its own items exactly once."""
    results: list[bool] = []

    def user(seed: int) -> None:
        owner = np.zeros(10_000 + seed, np.int64)
        for _ in range(20):
            _threads.on_threads(lambda lo, hi: _mark(owner, lo, hi), owner.size, 2, 32)
        results.append(bool((owner == 20).all()))

    run_in_threads(user, [(s,) for s in range(4)])
    assert results == [True] * 4


def test_a_forked_child_gets_helpers_of_its_own() -> None:
    """A child forked after the helpers started has none of their threads: it starts new ones."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    _threads.on_threads(lambda lo, hi: None, 10, 2, 10)  # the parent's helpers are running
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_child_covers_every_item_with_two_threads)


def _child_covers_every_item_with_two_threads() -> bool:
    import threading

    names: set[str] = set()
    owner = np.zeros(64, np.int64)

    def work(lo: int, hi: int) -> None:
        names.add(threading.current_thread().name)
        owner[lo:hi] += 1
        if len(names) < 2:  # give the helper time to join
            threading.Event().wait(0.01)

    _threads.on_threads(work, 64, 2, 64)
    return bool((owner == 1).all()) and len(names) == 2
