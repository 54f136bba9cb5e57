"""Every ``from dmlops... import name`` in bench/ and scripts/ resolves.

Those scripts run on the device or by hand, never in CI, so a renamed or moved name would
otherwise only show there (bench/roi_workload.py once imported a helper that no longer
existed, which broke bench/gpu.py).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted([*ROOT.glob("bench/*.py"), *ROOT.glob("scripts/*.py")])


def _dmlops_imports(path: Path) -> list[tuple[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "dmlops" or node.module.startswith("dmlops."):
                found += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names if alias.name.startswith("dmlops")]
    return found


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_dmlops_names_resolve(path: Path) -> None:
    for module, name in _dmlops_imports(path):
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:  # an optional backend (cupy, numba) is not installed here
            if module.startswith("dmlops.cuda") and "cupy" in str(exc).lower():
                continue
            raise
        if name and name != "*":
            assert hasattr(mod, name) or importlib.util.find_spec(f"{module}.{name}") is not None, (
                f"{path.name}: {module} has no {name}"
            )
