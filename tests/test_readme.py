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
    claims = _claims(block)
    assert claims or "print(" not in block
    for claim in claims:
        assert claim in output, (claim, output)


def _claims(block: str) -> list[str]:
    """What each print(...) says it prints: its trailing comment, or the comment lines below it."""
    claims = []
    lines = block.splitlines()
    for i, line in enumerate(lines):
        if not re.match(r"\s*print\(", line):
            continue
        inline = re.match(r".*\)\s+#\s+(.*)$", line)
        if inline:
            parts = [inline.group(1)]
        else:
            parts = []
            for following in lines[i + 1 :]:
                m = re.match(r"\s*#\s(.*)$", following)
                if not m:
                    break
                parts.append(m.group(1))
        text = " ".join(" ".join(parts).replace("...", " ").split())
        if text:
            claims.append(text)
    return claims


def test_readme_has_blocks_and_both_setup_commands() -> None:
    text = README.read_text()
    assert len(BLOCKS) >= 2
    assert "dmlops run examples/slice1_example2.json" in text
    assert 'pip install -e ".[test,cli,cpu,oracles]" && python -m pytest -q -n 2' in text
    assert (README.parent / "examples" / "slice1_example2.json").is_file()
