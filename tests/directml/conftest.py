"""The directml tests' terminal summary: how many differential cases ran (issue 18 asks CI to print it)."""

from __future__ import annotations

import sys
from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    module = sys.modules.get("test_differential")
    counts = getattr(module, "COUNTS", None)
    if not counts or not (counts["differential"][0] or counts["validation"][0]):
        return
    run, differed, limit = counts["differential"]
    compared, agreed = counts["validation"]
    terminalreporter.write_line(
        f"directml differential: {run} cases ran on numpy and directml ({differed} differed, none unexplained; "
        f"{limit} stack limits); validation parity: {compared} descs compared, {agreed} agreed"
    )
