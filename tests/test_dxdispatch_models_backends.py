"""DxDispatch's own sample models on the cpu and cuda backends, wherever they implement every operator.

The same expected lines as on the numpy reference (tests/dxdispatch_expected.py: what the real
DirectML prints); a backend must print them too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import backend_params
from dmlops.cli import main
from dmlops.descs import desc_class
from dmlops.model.reader import load_model
from dxdispatch_expected import EXPECTED, FP16_ONLY, MODELS

ALL = {**EXPECTED, **FP16_ONLY}


def _runs_on(name: str, backend: str) -> bool:
    model = load_model(MODELS / f"{name}.json")
    return all(backend in desc_class(d.desc.operator_type.name).backends for d in model.dispatchables.values())


def test_the_models_the_reference_runs_run_on_cpu_and_cuda() -> None:
    for backend in ("cpu", "cuda"):
        assert [n for n in ALL if _runs_on(n, "numpy")] == [n for n in ALL if _runs_on(n, backend)], backend


@pytest.mark.parametrize("backend", backend_params("cpu", "cuda"), indirect=True)
@pytest.mark.parametrize("name", sorted(n for n in ALL if _runs_on(n, "numpy")))
def test_sample_model_on_backend(
    backend: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for f in MODELS.glob(f"{name.removesuffix('_npy')}*"):
        shutil.copy(f, tmp_path)  # dml_element_wise_add_npy writes its outputs beside the model
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--backend", backend, f"{name}.json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    for want in ALL[name]:
        assert any(line.startswith(want) if want.endswith(": ") else line == want for line in lines), (want, out)
