"""Shared fixtures: the backend matrix and seeded RNGs.

Every backend-parametrised test runs on ``numpy`` (the reference), ``cpu`` (numba)
and ``cuda``. A backend that cannot run here is skipped with the reason, except the
ones named in ``DMLOPS_REQUIRE_BACKENDS`` (comma-separated; CI sets ``numpy,cpu``),
which fail instead, so CI can never skip what it is supposed to test.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

import numpy as np
import pytest

from dmlops.backends import load_backend
from dmlops.errors import BackendUnavailableError, UnsupportedError

BACKEND_NAMES = ("numpy", "cpu", "cuda")
# A backend whose dependency is installed must run: only a missing extra (or GPU) skips.
_REQUIRED = {b for b in os.environ.get("DMLOPS_REQUIRE_BACKENDS", "numpy").split(",") if b}
if importlib.util.find_spec("numba") is not None:
    _REQUIRED.add("cpu")


def _backend_marks(name: str) -> list[pytest.MarkDecorator]:
    return {"cuda": [pytest.mark.cuda], "cpu": [pytest.mark.cpu_backend]}.get(name, [])


def backend_params(*names: str) -> list[object]:
    """``pytest.param`` objects for the given backends (all by default), with marks."""
    return [pytest.param(n, marks=_backend_marks(n), id=n) for n in (names or BACKEND_NAMES)]


# Suites that also run on the real DirectML (the directml backend, issue 18): the conformance
# cases. The seed vectors run there from tests/directml; the rest of the suite checks dmlops's
# own backends against each other.
DIRECTML_SUITES = ("conformance",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the directml instances of the backend fixture for DIRECTML_SUITES only."""
    keep, drop = [], []
    for item in items:
        spec = getattr(item, "callspec", None)
        on_directml = spec is not None and spec.params.get("backend") == "directml"
        (drop if on_directml and item.path.parent.name not in DIRECTML_SUITES else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    """On the directml backend, a limit of the host stack (FLOAT16/INT16/UINT16, DXIL shaders) skips the test.

    DirectML refuses them on this stack with an UnsupportedError naming the reason; such a
    case says nothing about DirectML's semantics, so it is skipped with that reason, not failed.
    """
    try:
        return (yield)
    except UnsupportedError as exc:
        spec = getattr(item, "callspec", None)
        if spec is None or spec.params.get("backend") != "directml":
            raise
        pytest.skip(f"not runnable on this DirectML stack: {exc}")


@pytest.fixture(params=backend_params("cuda"))
def gpu(request: pytest.FixtureRequest) -> Any:
    """CuPy, for tests that build device arrays themselves (skips without a usable GPU, or fails where required)."""
    load_backend_or_skip("cuda")
    import cupy

    return cupy


@pytest.fixture(params=[*backend_params(), pytest.param("directml", marks=[pytest.mark.directml], id="directml")])
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend name; unavailable ones skip (or fail when required)."""
    name: str = request.param
    load_backend_or_skip(name)
    return name


def load_backend_or_skip(name: str) -> None:
    """Load backend ``name``; skip the test where it is unavailable (fail where it is required)."""
    try:
        load_backend(name)
    except BackendUnavailableError as exc:
        if name in _REQUIRED:
            pytest.fail(f"required backend unavailable: {exc}")
        pytest.skip(str(exc))


def to_numpy(array: object) -> np.ndarray:
    """Bring a backend's result (NumPy, CuPy, torch) back to NumPy for comparison."""
    if isinstance(array, np.ndarray):
        return array
    get = getattr(array, "get", None)  # CuPy
    if callable(get):
        return np.asarray(get())
    cpu = getattr(array, "cpu", None)  # torch
    if callable(cpu):
        return np.asarray(cpu().numpy())
    return np.asarray(array)


def run_in_threads(work: Any, args: list[tuple[Any, ...]]) -> None:
    """``work(*a)`` for each ``a`` of ``args``, each on a thread of its own, all at once; the first
    exception a thread raised is raised here once every thread has finished."""
    import threading

    errors: list[BaseException] = []

    def guarded(*a: Any) -> None:
        try:
            work(*a)
        except BaseException as exc:  # reported by the calling thread
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=a) for a in args]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


# Documented tolerances of the fast backends vs the float64 reference (ruling 10):
# data movement is exact; arithmetic within these.
TOLERANCES = {
    np.dtype(np.float64): dict(rtol=1e-12, atol=1e-12),
    np.dtype(np.float32): dict(rtol=1e-5, atol=1e-6),
    np.dtype(np.float16): dict(rtol=2e-3, atol=2e-3),
}


def assert_close(actual: object, expected: np.ndarray, *, exact: bool = False) -> None:
    """Exact for integers and data movement; dtype tolerance for float arithmetic."""
    got = to_numpy(actual)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if exact or expected.dtype.kind not in "f":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, equal_nan=True, **TOLERANCES[expected.dtype])


# -- the directml differential campaign's counts, printed at the end of the run ---------------------
# tests/directml/test_differential.py keeps COUNTS; under pytest-xdist each worker sends its own
# to the controller, which adds them up (issue 18: CI prints how many cases ran).

_DIRECTML_COUNTS: dict[str, list[int]] = {"differential": [0, 0, 0], "validation": [0, 0]}


def _local_counts() -> dict[str, list[int]] | None:
    module = sys.modules.get("test_differential")
    counts = getattr(module, "COUNTS", None)
    return counts if isinstance(counts, dict) else None


def _add_counts(counts: dict[str, list[int]] | None) -> None:
    for key, values in (counts or {}).items():
        total = _DIRECTML_COUNTS.setdefault(key, [0] * len(values))
        for i, v in enumerate(values):
            total[i] += int(v)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the counts to the controller
        workeroutput["directml_counts"] = _local_counts()
    else:
        _add_counts(_local_counts())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _add_counts(getattr(node, "workeroutput", {}).get("directml_counts"))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    run, differed, limit = _DIRECTML_COUNTS["differential"][:3]
    compared, agreed = _DIRECTML_COUNTS["validation"][:2]
    if run or compared:
        terminalreporter.write_line(
            f"directml differential: {run} cases ran on numpy and directml ({differed} differed, none unexplained; "
            f"{limit} stack limits); validation parity: {compared} descs compared, {agreed} agreed"
        )
