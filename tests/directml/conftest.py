"""The directml tests' terminal summary: how many differential cases ran (issue 18 asks CI to print it).

``test_differential.py`` counts into its ``COUNTS``; under pytest-xdist each worker sends its
counts to the controller (``workeroutput``), which adds them up before the summary.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

_FROM_WORKERS: list[dict[str, list[int]]] = []


def _local_counts() -> dict[str, list[int]] | None:
    module = sys.modules.get("test_differential")
    return getattr(module, "COUNTS", None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)
    counts = _local_counts()
    if output is not None and counts is not None:
        output["directml_counts"] = json.dumps(counts)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    data = getattr(node, "workeroutput", {}).get("directml_counts")
    if data:
        _FROM_WORKERS.append(json.loads(data) if isinstance(data, (str, bytes)) else data)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    config = terminalreporter.config
    if getattr(config, "_directml_summary_written", False):  # this conftest may be registered twice under xdist
        return
    parts = [*_FROM_WORKERS]
    local = _local_counts()
    if local is not None and not hasattr(terminalreporter.config, "workeroutput"):
        parts.append(local)
    run = sum(p["differential"][0] for p in parts)
    differed = sum(p["differential"][1] for p in parts)
    limit = sum(p["differential"][2] for p in parts)
    compared = sum(p["validation"][0] for p in parts)
    agreed = sum(p["validation"][1] for p in parts)
    if not (run or compared):
        return
    config._directml_summary_written = True
    terminalreporter.write_line(
        f"directml differential: {run} cases ran on numpy and directml ({differed} differed, none unexplained; "
        f"{limit} stack limits); validation parity: {compared} descs compared, {agreed} agreed"
    )
