"""DxDispatch's own sample models on the numpy reference, wherever it implements their operators.

The expected lines are the ones the real DirectML prints (tests/dxdispatch_expected.py,
checked by hand against NumPy formulas; tests/directml/test_dxdispatch_models.py runs them
on DirectML). A model with an operator the reference does not implement yet fails with one
clear message naming the backends that run it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dmlops.cli import main
from dmlops.descs import desc_class
from dmlops.model.reader import load_model
from dxdispatch_expected import EXPECTED, FP16_ONLY, MODELS


def _numpy_runs(name: str) -> bool:
    model = load_model(MODELS / f"{name}.json")
    return all("numpy" in desc_class(d.desc.operator_type.name).backends for d in model.dispatchables.values())


ALL = {**EXPECTED, **FP16_ONLY}
RUNS = sorted(name for name in ALL if _numpy_runs(name))


def test_most_sample_models_run_on_numpy() -> None:
    # of the 18 DML-operator models and the FLOAT16 one, all but CONVOLUTION (2), GEMM (2) and RNN
    assert len(RUNS) >= 13, RUNS
    assert {"dml_join", "dml_split", "dml_reduce", "dml_scalar_union_fp16"} <= set(RUNS)


@pytest.mark.parametrize("name", sorted(ALL))
def test_sample_model_on_numpy(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for f in MODELS.glob(f"{name.removesuffix('_npy')}*"):
        shutil.copy(f, tmp_path)  # dml_element_wise_add_npy writes its outputs beside the model
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--backend", "numpy", f"{name}.json"])
    out, err = capsys.readouterr()
    if name not in RUNS:
        assert code == 2 and "directml" in err and "Traceback" not in err, err
        return
    assert code == 0, err
    lines = out.splitlines()
    for want in ALL[name]:
        assert any(line.startswith(want) if want.endswith(": ") else line == want for line in lines), (want, out)
