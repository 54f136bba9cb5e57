"""The README's Python examples run, and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs_and_prints_what_it_says(index: int) -> None:
    block = BLOCKS[index]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block, f"README block {index}", "exec"), {})
    output = " ".join(printed.getvalue().split())
    # Every single-line "# ..." comment right after a print(...) is a claim about its output.
    for line in block.splitlines():
        m = re.match(r"\s*print\(.*\)\s+#\s+(.*)$", line)
        if m:
            claim = m.group(1).replace("...", "").strip()
            assert " ".join(claim.split()) in output, (claim, output)


def test_readme_has_blocks_and_both_setup_commands() -> None:
    text = README.read_text()
    assert len(BLOCKS) >= 2
    assert "dmlops run examples/slice1_example2.json" in text
    assert 'pip install -e ".[test,cli,cpu,oracles]" && python -m pytest -q -n 2' in text
    assert (README.parent / "examples" / "slice1_example2.json").is_file()
