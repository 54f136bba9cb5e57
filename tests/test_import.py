"""``import dmlops`` loads only the standard library and NumPy."""

from __future__ import annotations

import subprocess
import sys


def test_import_pulls_in_only_stdlib_and_numpy() -> None:
    code = (
        "import sys; before = set(sys.modules); import dmlops; "
        "new = {m.split('.')[0] for m in set(sys.modules) - before}; "
        "std = set(sys.stdlib_module_names); "
        "print(sorted(n for n in new if n not in std and n not in {'numpy', 'dmlops'} and not n.startswith('_')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]", out


def test_functional_names_resolve_lazily() -> None:
    import dmlops

    assert callable(dmlops.slice1)
    assert dmlops.Slice1Desc.dml_name == "DML_SLICE1_OPERATOR_DESC"
