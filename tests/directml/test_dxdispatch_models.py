"""DxDispatch's own sample models (``DxDispatch/models/dml_*.json``) run on the real DirectML.

Each prints what its operator computes; the expected lines were checked by hand against
NumPy formulas (noted beside each). Skips where the directml backend is absent.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _directml import directml  # noqa: F401  (fixture)

from dmlops.cli import main

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]
MODELS = Path(__file__).parent / "models" / "dxdispatch"

EXPECTED: dict[str, list[str]] = {
    # 3x3 of 1..9 cross-correlated with a 2x2 filter of 0.5
    "dml_convolution_2d": ["Resource 'output': 6, 8, 12, 14"],
    "dml_convolution_3d": ["Resource 'output': 4, 4, 4, 4, 4, 4, 4, 4"],
    # cumprod([2, 4, 8, 3])
    "dml_cumulative_product": ["Resource 'Out': 2, 8, 64, 192"],
    "dml_element_wise_add": ["Resource 'Out': 6, 10, -2"],
    # ELU(alpha 0.5) of [6, 10, -2]: 0.5 * (exp(-2) - 1) = -0.432332
    "dml_element_wise_add1": ["Resource 'Out': 6, 10, -0.432332"],
    "dml_element_wise_add_npy": ["Resource 'Out': "],  # checked against the files below
    "dml_element_wise_clip": ["Resource 'A': -2.5, -2.5, -2, -1, 0, 1, 2, 2.5, 2.5"],
    # 2 * [1, 2, 3] + 10
    "dml_element_wise_identity": ["Resource 'Out': 12, 14, 16"],
    # 3.2 + 1.5 * k
    "dml_fill_value_sequence": ["Resource 'Out': 3.2, 4.7, 6.2, 7.7, 9.2"],
    # outer([1, 2, 3], [4, 5, 6]) + 2
    "dml_gemm": ["Resource 'output': 6, 7, 8, 10, 12, 14, 14, 17, 20"],
    "dml_gemm_graph": ["Resource 'output': " + ", ".join(["32"] * 1024)],
    # A[0:3], B[0:2], A[4:9]
    "dml_join": ["Resource 'Out': 1, 2, 3, 100, 115, 5, 6, 7, 8, 9"],
    "dml_owned_tensors": ["Resource 'Out': 6, 10, -2"],
    "dml_reduce": ["Resource 'input': 1, 2, 3, 4, 5, 6, 7, 8, 9", "Resource 'output': 6, 15, 24"],
    "dml_slice": ["Resource 'output': 7, 9, 12, 14, 17, 19"],
    "dml_split": ["Resource 'Out1': 1, 2", "Resource 'Out2': 3, 4", "Resource 'Out3': 5, 6"],
    # bilinear 2x upsampling of [[1, 2], [3, 4]] (half-pixel centres, edges clamped)
    "dml_upsample_2d": [
        "Resource 'output': 1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4"
    ],
}


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
