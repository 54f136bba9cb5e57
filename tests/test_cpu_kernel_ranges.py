"""The cpu backend's numba kernels split into ranges over the threads (``_threads.run_kernel``).

Small calls run as one range on the calling thread, so the operator suites, whose cases are
mostly small, seldom reach the threaded path. Here every call is split (no size threshold,
three ranges a thread, so ranges start and end mid-tensor) and each kernel family's oracle
tests run again through that path: the loop oracles and the reference, as in their own
modules.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from dmlops.cpu import _threads

pytestmark = pytest.mark.cpu_backend

F32, F16 = np.float32, np.float16

CASES: list[tuple[str, str, dict[str, Any]]] = [
    # (test module, oracle test, its arguments other than the backend)
    *[
        ("test_max_pooling", "test_forward_matches_loop_oracle", {"dtype": F32, "rank": rank, "seed": seed})
        for rank in (2, 3)
        for seed in range(3)
    ],
    ("test_max_pooling", "test_forward_matches_loop_oracle", {"dtype": F16, "rank": 2, "seed": 1}),
    *[("test_max_pooling", "test_grad_matches_loop_oracle", {"dtype": F32, "rank": 2, "seed": s}) for s in range(3)],
    *[
        ("test_cpu_pooling_neighbours", "test_forward_pooling_matches_the_reference", {"operator": op, **p})
        for op in ("AVERAGE_POOLING", "AVERAGE_POOLING1", "LP_POOLING", "LP_POOLING1")
        for p in (
            {"dtype_name": "FLOAT32", "seed": 7},
            {"dtype_name": "FLOAT16", "seed": 15},
            {"dtype_name": "FLOAT32", "seed": 2},
        )
    ],
    *[
        (
            "test_cpu_pooling_neighbours",
            "test_average_pooling_grad_matches_the_reference",
            {"dtype_name": dt, "seed": s},
        )
        for dt, s in (("FLOAT32", 7), ("FLOAT16", 15), ("FLOAT32", 1))
    ],
    *[
        (
            "test_cpu_pooling_neighbours",
            "test_max_unpooling_matches_the_reference",
            {"dtype_name": dt, "index_name": it, "seed": s},
        )
        for dt, it, s in (("FLOAT32", "UINT32", 0), ("INT8", "UINT64", 1), ("FLOAT16", "UINT64", 2))
    ],
    ("test_cpu_pooling_neighbours", "test_max_unpooling_large", {}),
    *[
        (
            "test_cpu_pooling_neighbours",
            "test_max_unpooling_refuses_conflicting_duplicates_as_the_reference",
            {"dtype_name": dt},
        )
        for dt in ("FLOAT32", "UINT8")
    ],
    *[
        ("test_resample", "test_backends_match_oracle", {"mode": mode, "direction": "DECREASING", "seed": s})
        for mode in ("NEAREST_NEIGHBOR", "LINEAR")
        for s in (1, 2, 3)
    ],
    *[("test_resample", "test_adjoint_on_backend", {"seed": s}) for s in range(2)],
    *[
        (
            "test_roi_align",
            "test_matches_loop_oracle",
            {"reduction": red, "mode": mode, "samples": n, "dtype": F32, "seed": 1},
        )
        for red in ("AVERAGE", "MAX")
        for mode, n in (("LINEAR", None), ("LINEAR", 2), ("NEAREST_NEIGHBOR", 1))
    ],
    *[("test_roi_neighbours_family", "test_roi_pooling_matches_the_loop_oracle", {"seed": s}) for s in range(3)],
    *[("test_roi_neighbours_family", "test_roi_align_grad_matches_the_loop_oracle", {"seed": s}) for s in range(3)],
    *[
        ("test_random_family", "test_backend_matches_reference", {"sizes": sizes})
        for sizes in ((2, 3, 5), (1, 1, 1, 1001), (1 << 16) + 3)
    ],
    *[
        ("test_data_movement_family", "test_cast_backend_matches_the_reference_bit_for_bit", {"src": s, "dst": d})
        for s, d in (
            ("FLOAT32", "INT32"),
            ("FLOAT64", "UINT64"),
            ("INT64", "INT16"),
            ("INT32", "UINT8"),
            ("UINT64", "INT64"),
        )
    ],
]
"""One or more cases of every kernel that ``run_kernel`` runs, other than the reductions (tests/test_cpu_threads.py)."""

BACKEND_ARGUMENT = {"test_random_family": "fast_backend"}
"""The backend argument's name where it is not ``backend``."""


@pytest.fixture(params=[1, 3], ids=lambda n: f"{n}-per-thread")
def every_call_split(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kernel call split over the threads, ``request.param`` ranges a thread."""
    monkeypatch.setattr(_threads, "PARALLEL_MIN_ELEMENTS", 0)
    monkeypatch.setattr(_threads, "KERNEL_CHUNKS_PER_THREAD", request.param)


def test_the_threaded_path_is_taken(every_call_split: None) -> None:
    """A small call, split: more than one range, and each item computed once."""
    seen: list[tuple[int, int]] = []
    _threads.run_kernel(lambda lo, hi: seen.append((lo, hi)), 10, 1)
    assert len(seen) > 1 and sorted(i for lo, hi in seen for i in range(lo, hi)) == list(range(10))


@pytest.mark.parametrize(("module", "test", "arguments"), CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_oracle_holds_with_every_call_split(
    every_call_split: None, module: str, test: str, arguments: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    function = getattr(importlib.import_module(module), test)
    extra = {"monkeypatch": monkeypatch} if "monkeypatch" in function.__code__.co_varnames else {}
    function(**{BACKEND_ARGUMENT.get(module, "backend"): "cpu"}, **arguments, **extra)
