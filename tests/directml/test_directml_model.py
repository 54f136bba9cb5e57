"""A DxDispatch model with two dispatches, strided tensors and elementOffset bindings on directml."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from _directml import directml  # noqa: F401  (fixture)

from dmlops.cli import main
from dmlops.model import Executor, load_model

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]
MODEL = Path(__file__).parent / "models" / "two_dispatches_strided.json"


def _run(backend: str) -> dict[str, np.ndarray]:
    executor = Executor(load_model(MODEL), backend=backend, out=io.StringIO())
    executor.run()
    return {name: np.frombuffer(bytes(buf), dtype=np.uint8) for name, buf in executor.buffers.items()}


def test_model_matches_numpy_buffer_for_buffer() -> None:
    got, want = _run("directml"), _run("numpy")
    assert got.keys() == want.keys()
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    x = 0.5 + 1.25 * np.arange(28)
    mid = got["mid"].view(np.float32)
    # SLICE1: rows 3 and 1, columns 0, 2, 4 of the 4x5 matrix at element 2 (row pitch 6).
    window = [[x[2 + 6 * r + c] for c in (0, 2, 4)] for r in (3, 1)]
    np.testing.assert_array_equal(mid[4:16:2], np.ravel(window))
    np.testing.assert_array_equal(mid[[0, 1, 2, 3, 5, 7, 9, 11, 13, 15, 16, 17, 18, 19]], -1)
    y = got["y"].view(np.float32)
    gathered = np.array(window)[:, [2, 0, 1, 2]]
    np.testing.assert_array_equal(y[3:11], gathered.T.ravel())  # Strides [16, 16, 1, 2]: transposed
    np.testing.assert_array_equal(y[[0, 1, 2, 11, 12, 13, 14, 15]], -5)


def test_dmlops_run_backend_directml(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--backend", "directml", str(MODEL)]) == 0
    on_directml = capsys.readouterr().out
    assert main(["run", str(MODEL)]) == 0
    assert on_directml == capsys.readouterr().out
    assert "Resource 'y': -5, -5, -5, 30.5, 15.5, 25.5" in on_directml
