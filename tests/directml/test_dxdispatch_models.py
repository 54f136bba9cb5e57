"""DxDispatch's own sample models (``DxDispatch/models/dml_*.json``) run on the real DirectML.

Each prints what its operator computes; the expected lines (tests/dxdispatch_expected.py)
were checked by hand against NumPy formulas. Skips where the directml backend is absent;
tests/test_dxdispatch_models_numpy.py runs the same models on numpy.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _directml import directml  # noqa: F401  (fixture)

from dmlops.cli import main
from dxdispatch_expected import EXPECTED, MODELS

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_model_runs_on_directml(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Run from a copy: dml_element_wise_add_npy writes its outputs beside the model.
    for f in MODELS.glob(f"{name.removesuffix('_npy')}*"):
        shutil.copy(f, tmp_path)
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--backend", "directml", f"{name}.json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    for want in EXPECTED[name]:
        assert any(line.startswith(want) if want.endswith(": ") else line == want for line in lines), (want, out)


def test_npy_sample_model_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    for f in MODELS.glob("dml_element_wise_add*"):
        shutil.copy(f, tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--backend", "directml", "dml_element_wise_add_npy.json"]) == 0
    a = np.load(tmp_path / "dml_element_wise_add_input.npy").astype(np.float32)
    b = np.fromfile(tmp_path / "dml_element_wise_add_input.dat", dtype=np.float32)
    np.testing.assert_array_equal(np.load(tmp_path / "dml_element_wise_add_output.npy"), a + b)


def test_fp16_sample_model_is_a_limit_of_this_stack(capsys: pytest.CaptureFixture[str]) -> None:
    """ELEMENT_WISE_CLIP1 on FLOAT16: lavapipe has no FLOAT16, DirectML says so (docs/directml.md)."""
    assert main(["run", "--backend", "directml", str(MODELS / "dml_scalar_union_fp16.json")]) == 2
    assert "DML_TENSOR_DATA_TYPE_FLOAT16 unsupported" in capsys.readouterr().err


def test_every_sample_model_validates(capsys: pytest.CaptureFixture[str]) -> None:
    """``dmlops validate`` reads all of them, FLOAT16 included (no backend needed)."""
    for path in sorted(MODELS.glob("*.json")):
        assert main(["validate", str(path)]) == 0, capsys.readouterr().err
