"""``dmlops run|validate|list`` end to end: example outputs, errors, backends.

Expected lines are written from the seed pages' worked examples (and
shared/spec/dxdispatch-models.md section 7), not produced by the code.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dmlops.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# model -> the lines `dmlops run` prints (seed page examples; see examples/README.md)
EXPECTED = {
    # seed 003, SLICE1 Example 1 / Example 2
    "slice1_example1.json": ["Resource 'out': 2, 4, 10, 12"],
    "slice1_example2.json": ["Resource 'out': 14, 16, 6, 8"],
    # seed 004, GATHER Examples 1-5 (ex3 with IndexDimensions 1, erratum E2)
    "gather_example1.json": ["Resource 'out': 14, 12, 14, 11, 13"],
    "gather_example2.json": ["Resource 'out': 1, 2, 3, 4, 3, 4, 5, 6"],
    "gather_example3.json": ["Resource 'out': 2, 1, 4, 3, 6, 5"],
    "gather_example4.json": ["Resource 'out': 1, 3, 4, 6, 7, 9"],
    "gather_example5.json": ["Resource 'out': 1, 2, 3, 4, 3, 4, 5, 6"],
    # dxdispatch-models.md: negative indices (FL >= 3_0), INT32 [-1, 0]
    "gather_negative_indices.json": ["Resource 'out': 14, 11"],
    # seed 002: the forward MAX_POOLING2 values and indices, and the gradient
    "max_pooling2_example.json": ["Resource 'y': 4, 4, 6, 7", "Resource 'indices': 4, 4, 7, 8"],
    "max_pooling_grad_example.json": ["Resource 'dx': 0, 0, 0, 0, 3, 0, 0, 4, 5"],
    # seed 001: forward [[1,2],[3,4]] -> [1, 1, 2]; gradient [4,5,6] -> [[9,6],[0,0]] (E14 fixture)
    "resample2_example.json": ["Resource 'y': 1, 1, 2"],
    "resample_grad1_example.json": ["Resource 'dx': 9, 6, 0, 0"],
    # dxdispatch-models.md section 7: the identity crop returns the input
    "roi_align_identity.json": ["Resource 'y': " + ", ".join(str(i) for i in range(16))],
    "slice1_npy_writefile.json": [
        "Resource 'out': 14, 16, 6, 8",
        "Resource 'out' written to '{out}/slice1_out.npy'",
        "Resource 'out' written to '{out}/slice1_out.dat'",
    ],
    "slice1_strided_binding.json": ["Resource 'out': -1, -1, 14, 16, -1, -1, 6, 8, -1, -1, -1, -1"],
}


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_model(tmp_path: Path, model: object, name: str = "model.json") -> Path:
    path = tmp_path / name
    path.write_text(model if isinstance(model, str) else json.dumps(model))
    return path


def slice1_model() -> dict:
    return json.loads((EXAMPLES / "slice1_example2.json").read_text())


def test_every_example_has_an_expectation() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_output(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", EXAMPLES / name, "--output_path", tmp_path)
    assert (code, err) == (0, "")
    assert out.splitlines() == [line.format(out=tmp_path) for line in EXPECTED[name]]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_examples_on_every_backend(name: str, backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", EXAMPLES / name, "--backend", backend, "--output_path", tmp_path)
    assert (code, err) == (0, ""), err
    assert out.splitlines() == [line.format(out=tmp_path) for line in EXPECTED[name]]


def test_main_job_command_through_the_console_script() -> None:
    exe = Path(sys.executable).with_name("dmlops")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "dmlops"]
    result = subprocess.run(
        [*command, "run", "examples/slice1_example2.json"], cwd=ROOT, capture_output=True, text=True
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "Resource 'out': 14, 16, 6, 8\n", "")


def test_python_dash_m(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dmlops", "run", str(EXAMPLES / "gather_example1.json")], capture_output=True, text=True
    )
    assert result.stdout == "Resource 'out': 14, 12, 14, 11, 13\n"


def test_write_file_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run_cli(capsys, "run", EXAMPLES / "slice1_npy_writefile.json", "--output-path", tmp_path)
    assert code == 0
    npy = np.load(tmp_path / "slice1_out.npy")
    assert npy.dtype == np.float32 and npy.shape == (2, 2)
    np.testing.assert_array_equal(npy, [[14, 16], [6, 8]])
    raw = np.fromfile(tmp_path / "slice1_out.dat", dtype="<f4")
    np.testing.assert_array_equal(raw, [14, 16, 6, 8])


def test_iterations_timing_line(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("-i", "--dispatch_iterations", "--dispatch-iterations"):
        code, out, _ = run_cli(capsys, "run", EXAMPLES / "slice1_example2.json", flag, "3")
        lines = out.splitlines()
        assert code == 0 and lines[1] == "Resource 'out': 14, 16, 6, 8"
        assert lines[0].startswith("Dispatch 'slice1': 3 iterations, ") and lines[0].endswith(" ms median (CPU)")


def test_feature_level_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    for flag, level in (("--dml_feature_level", "6_4"), ("--dml-feature-level", "3.0"), ("--dml_feature_level", "4_1")):
        code, out, _ = run_cli(capsys, "run", EXAMPLES / "slice1_example2.json", flag, level)
        assert (code, out) == (0, "Resource 'out': 14, 16, 6, 8\n")


def test_feature_level_too_low_is_an_invalid_desc(capsys: pytest.CaptureFixture[str]) -> None:
    # SLICE1 came with 2_1; the gather example's 1-D tensors need 3_0.
    code, out, err = run_cli(capsys, "run", EXAMPLES / "slice1_example2.json", "--dml_feature_level", "2_0")
    assert code == 2 and out == ""
    assert "Failed to create dispatchable 'slice1'" in err and "introduced in DML_FEATURE_LEVEL_2_1" in err
    code, _, err = run_cli(capsys, "run", EXAMPLES / "gather_example1.json", "--dml_feature_level", "2.1")
    assert code == 2 and "DimensionCount" in err


def test_unknown_feature_level(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "run", EXAMPLES / "slice1_example2.json", "--dml_feature_level", "9_9")
    assert code == 2 and "unknown --dml_feature_level '9_9'" in err


def test_print_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "run", EXAMPLES / "slice1_example2.json", "--print_commands")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].startswith('Command 0 started: {"type":"dispatch"')
    assert lines[1:] == ["Command 0 completed", 'Command 1 started: {"type":"print","resource":"out"}',
                         "Resource 'out': 14, 16, 6, 8", "Command 1 completed"]  # fmt: skip


def test_model_option_and_input_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = json.loads((EXAMPLES / "slice1_npy_writefile.json").read_text())
    model["commands"] = model["commands"][:2]
    path = write_model(tmp_path, model)  # data/ is not next to this copy ...
    code, _, err = run_cli(capsys, "run", "-m", path)
    assert code == 2 and "file 'data/slice1_input.npy' not found" in err
    code, out, _ = run_cli(capsys, "run", "-m", path, "--input_path", EXAMPLES)  # ... but under --input_path
    assert (code, out) == (0, "Resource 'out': 14, 16, 6, 8\n")


@pytest.mark.parametrize(
    "flags", [["-d"], ["-a", "NVIDIA"], ["-q", "direct"], ["-r", "4"], ["-I", "5"], ["-w", "2"], ["-v", "1"],
              ["--pix_capture_type", "gpu"], ["--pix-capture-name", "x"], ["--disable_agility_sdk"], ["-s"]],
)  # fmt: skip
def test_dxdispatch_flags_accepted_with_a_warning(flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", EXAMPLES / "slice1_example2.json", *flags)
    assert (code, out) == (0, "Resource 'out': 14, 16, 6, 8\n")
    assert err.startswith("dmlops: warning: option ") and "has no meaning for dmlops" in err
    assert len(err.splitlines()) == 1


def test_validate(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "validate", EXAMPLES / "slice1_example2.json")
    assert (code, err) == (0, "")
    assert (
        out.startswith("Model '")
        and "is valid at DML_FEATURE_LEVEL_6_4: 2 resources, 1 dispatchables, 2 commands" in out
    )


def lines_with(name: str, out: str) -> list[str]:
    return next(line.split() for line in out.splitlines() if line.startswith(f"  {name} "))


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "list")
    assert code == 0
    for name in ("SLICE1", "GATHER", "MAX_POOLING2", "MAX_POOLING_GRAD", "RESAMPLE2", "RESAMPLE_GRAD1", "ROI_ALIGN"):
        assert f"  {name} " in out
    # the summary counts the operators per set of backends, and adds up to 177
    summary = next(line for line in out.splitlines() if line.startswith("Operators: 177 DML_OPERATOR_TYPEs: "))
    counts = [tuple(part.split(" on ", 1)) for part in re.split(r", (?=\d)", summary.split("TYPEs: ", 1)[1])]
    assert sum(int(n) for n, _ in counts) == 177
    # a line's backends, then possibly a note in parentheses (SCATTER_ELEMENTS's struct and alias)
    every = sum(1 for line in out.splitlines() if re.search(r" numpy, cpu, cuda, directml(  \(.*\))?$", line))
    assert (str(every), "every backend") in counts and every >= 147
    assert counts[-1][1] == "directml only"
    assert lines_with("ELEMENT_WISE_ADD", out)[1:] == ["1_0", "numpy,", "cpu,", "cuda,", "directml"]
    assert lines_with("ELEMENT_WISE_QUANTIZED_LINEAR_ADD", out)[1:] == ["4_0", "numpy,", "cpu,", "cuda,", "directml"]
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert lines["SLICE1"].split()[1:] == ["2_1", "numpy,", "cpu,", "cuda,", "directml"]
    assert lines["GEMM"].split()[1:] == ["1_0", "directml"]
    assert "struct DML_SCATTER_OPERATOR_DESC; alias SCATTER" in lines["SCATTER_ELEMENTS"]
    assert "not in DxDispatch" in lines["RESAMPLE3"]
    assert "numpy    available (default)" in out and "cuda" in out and "cpu" in out
    assert "Feature levels: 1_0, 2_0, 2_1" in out and "(default 6_4)" in out


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys)
    assert code == 2 and "usage: dmlops" in err


def test_unknown_backend(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", EXAMPLES / "slice1_example2.json", "--backend", "tpu")
    assert (code, out) == (2, "")
    assert err == "dmlops: error: unknown backend 'tpu' (known: cpu, cuda, directml, numpy, reference)\n"


# -- errors: exit 2, one line that says where and what, never a traceback -----------------------


def _set(path: list, value: object, *, delete: bool = False):
    def mutate(m: dict) -> None:
        target = m
        for key in path[:-1]:
            target = target[key]
        if delete:
            del target[path[-1]]
        else:
            target[path[-1]] = value

    return mutate


DESC = ["dispatchables", "slice1", "desc"]
ERRORS = {
    "DimensionCount not a uint": (
        _set([*DESC, "DimensionCount"], -1),
        "Failed to parse dispatchable 'slice1': Error parsing field 'DimensionCount': Expected an unsigned integer.",
    ),
    "DimensionCount missing": (
        _set([*DESC, "DimensionCount"], None, delete=True),
        "Failed to parse dispatchable 'slice1': Field 'DimensionCount' is required.",
    ),
    "DimensionCount vs arrays": (
        _set([*DESC, "DimensionCount"], 3),
        "Failed to parse dispatchable 'slice1': Error parsing field 'InputWindowOffsets': DimensionCount is 3 but "
        "'InputWindowOffsets' has 4 elements.",
    ),
    "bad enum": (
        _set([*DESC, "InputTensor", "DataType"], "FLOAT33"),
        "Failed to parse dispatchable 'slice1': Error parsing field 'InputTensor': Error parsing field 'DataType': "
        "'FLOAT33' is not a recognized value for DML_TENSOR_DATA_TYPE.",
    ),
    "invalid desc": (
        _set([*DESC, "InputWindowStrides"], [1, 1, 0, 2]),
        "Failed to create dispatchable 'slice1': DML_SLICE1_OPERATOR_DESC.InputWindowStrides[2]: strides may not be 0; got 0",
    ),
    "invalid tensor desc": (
        _set([*DESC, "OutputTensor", "DataType"], "FLOAT16"),
        "Failed to create dispatchable 'slice1': DML_SLICE1_OPERATOR_DESC.OutputTensor.DataType: must equal "
        "InputTensor.DataType",
    ),
    "unknown operator": (
        _set(["dispatchables", "slice1", "type"], "DML_OPERATOR_CONVOLUTION9"),
        "Failed to parse dispatchable 'slice1': operator type 'DML_OPERATOR_CONVOLUTION9' is not a DML_OPERATOR_TYPE "
        "known to dmlops",
    ),
    "hlsl dispatchable": (
        _set(["dispatchables", "slice1", "type"], "HLSL"),
        "Failed to parse dispatchable 'slice1': 'hlsl' dispatchables are not supported by dmlops",
    ),
    "onnx dispatchable": (
        _set(["dispatchables", "slice1", "type"], "onnx"),
        "'onnx' dispatchables are not supported by dmlops",
    ),
    "dmlSerializedGraph dispatchable": (
        _set(["dispatchables", "slice1", "type"], "dmlSerializedGraph"),
        "'dmlSerializedGraph' dispatchables are not supported by dmlops",
    ),
    "binding too small": (
        _set(["commands", 0, "bindings", "OutputTensor"], {"name": "out", "elementOffset": 1}),
        "Failed to parse command 0 (dispatch): dispatchable 'slice1': Bind point 'OutputTensor' (resource 'out', "
        "elementOffset 1 = byte 4): the tensor needs 16 bytes (TotalTensorSizeInBytes) but the buffer has 16 bytes, "
        "12 of them from the offset.",
    ),
    "binding missing": (
        _set(["commands", 0, "bindings", "InputTensor"], None, delete=True),
        "Bind point 'InputTensor' is required but no resource is bound to it.",
    ),
    "two resources on one bind point": (
        _set(["commands", 0, "bindings", "InputTensor"], ["in", "in"]),
        "Bind point 'InputTensor' requires 1 resources, but 2 were bound.",
    ),
    "unknown resource in binding": (
        _set(["commands", 0, "bindings", "InputTensor"], "nope"),
        "Bind point 'InputTensor': unknown resource 'nope'.",
    ),
    "unknown dispatchable": (
        _set(["commands", 0, "dispatchable"], "nope"),
        "Failed to parse command 0 (dispatch): Unknown dispatchable 'nope'.",
    ),
    "print unknown resource": (
        _set(["commands", 1, "resource"], "nope"),
        "Failed to parse command 1 (print): Unknown resource 'nope'.",
    ),
    "unknown command": (
        _set(["commands", 1, "type"], "dump"),
        "Failed to parse command 1 (dump): Unrecognized command type 'dump'",
    ),
    "commands missing": (_set(["commands"], None, delete=True), "Field 'commands' is required."),
    "absurd valueCount": (
        _set(["resources", "in", "initialValues", "valueCount"], 10**15),
        "Failed to parse resource 'in': Error parsing field 'initialValues': the sequence initializer of "
        "1000000000000000 FLOAT32 values needs 4000000000000000 bytes, more than the largest buffer dmlops allocates",
    ),
    "absurd sizeInBytes": (
        _set(["resources", "out", "sizeInBytes"], 10**18),
        "Failed to parse resource 'out': the buffer (sizeInBytes) needs 1000000000000000000 bytes, more than the "
        "largest buffer dmlops allocates",
    ),
    "sizeInBytes too small": (
        _set(["resources", "out", "sizeInBytes"], 8),
        "Failed to parse resource 'out': The buffer size (8 bytes) is too small for the initialValues (16 bytes) "
        "at offset 0 bytes.",
    ),
    "missing data type": (
        _set(["resources", "in", "initialValuesDataType"], None, delete=True),
        "Failed to parse resource 'in': Error parsing field 'initialValues': Field 'initialValuesDataType' is required.",
    ),
    "string in an integer array": (
        _set(["resources", "in"], {"initialValuesDataType": "UINT32", "initialValues": [1, "nan"]}),
        "Failed to parse resource 'in': Error parsing field 'initialValues': element 1: Expected an unsigned integer; "
        "got 'nan'.",
    ),
    "value out of range": (
        _set(["resources", "in"], {"initialValuesDataType": "INT8", "initialValues": [1, 300]}),
        "element 1: 300 is out of range for INT8 [-128, 127].",
    ),
    "empty initializer": (
        _set(["resources", "in", "initialValues"], []),
        "Failed to parse resource 'in': 'initialValues' must be non-empty.",
    ),
    "missing file": (
        _set(["resources", "in", "initialValues"], {"sourcePath": "missing.npy"}),
        "Failed to parse resource 'in': Error parsing field 'initialValues': file 'missing.npy' not found",
    ),
    "missing image file": (
        _set(["resources", "in", "initialValues"], {"sourcePath": "cat.png"}),
        "Error parsing field 'initialValues': file 'cat.png' not found",
    ),
    "deferred": (
        _set(["resources", "in", "initialValues"], "deferred"),
        "Failed to parse command 0 (dispatch): dispatchable 'slice1': Bind point 'InputTensor': resource 'in' is "
        "deferred; DxDispatch gives deferred resources memory only as outputs of ONNX dispatchables",
    ),
    "print deferred": (
        lambda m: (
            m["resources"].update(y={"initialValuesDataType": "FLOAT32", "initialValues": "deferred"}),
            m["commands"][1].update(resource="y"),
        ),
        "Failed to parse command 1 (print): Could not find deferred resource y: only an ONNX dispatchable gives a "
        "deferred resource memory",
    ),
    "top level not an object": (lambda m: m.clear(), "Field 'resources' is required."),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_invalid_model(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mutate, message = ERRORS[case]
    model = slice1_model()
    mutate(model)
    path = write_model(tmp_path, model)
    for command in ("run", "validate"):
        code, out, err = run_cli(capsys, command, path)
        assert (code, out) == (2, ""), err
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert err.startswith(f"dmlops: error: {path}: ")
        assert message in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{\n  "resources": {},\n  "dispatchables": {}\n  "commands": []\n}', "JSON syntax error at line 4, column 3"),
        ("[1, 2", "JSON syntax error"),
        ("", "is empty"),
        ("[]", "Expected a JSON object at the top level of the model."),
        (
            '{"resources": [], "dispatchables": {}, "commands": []}',
            "Error parsing field 'resources': Expected an object.",
        ),
    ],
)
def test_json_errors(text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_model(tmp_path, text)
    code, out, err = run_cli(capsys, "run", path)
    assert (code, out) == (2, "")
    assert message in err and len(err.splitlines()) == 1


def test_missing_model_and_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "run", tmp_path / "nope.json")
    assert code == 2 and err == f"dmlops: error: model file '{tmp_path / 'nope.json'}' does not exist\n"
    code, _, err = run_cli(capsys, "run", tmp_path)
    assert code == 2 and "is a directory" in err


def test_unreadable_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "data.dat").mkdir()
    model = slice1_model()
    model["resources"]["in"]["initialValues"] = {"sourcePath": "data.dat"}
    code, _, err = run_cli(capsys, "run", write_model(tmp_path, model))
    assert code == 2 and "'" + str(tmp_path / "data.dat") + "' is a directory, not a regular file" in err


def test_corrupt_npy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.npy").write_bytes(b"not a numpy file")
    model = slice1_model()
    model["resources"]["in"] = {"initialValues": {"sourcePath": "bad.npy"}}
    code, _, err = run_cli(capsys, "run", write_model(tmp_path, model))
    assert code == 2 and "'bad.npy' is not a valid .npy file" in err


def test_unknown_fields_warn_on_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = slice1_model()
    model["dispatchables"]["slice1"]["desc"]["InputWindowStride"] = [1, 1, 1, 1]
    model["resources"]["in"]["initialValue"] = 3
    model["commands"][1]["verbos"] = True
    model["commands"][0]["bindings"]["OutputIndicesTensor"] = "out"
    model["extra"] = 1
    code, out, err = run_cli(capsys, "run", write_model(tmp_path, model))
    assert (code, out) == (0, "Resource 'out': 14, 16, 6, 8\n")
    lines = err.splitlines()
    assert all(line.startswith("dmlops: warning: ") for line in lines)
    assert "dmlops: warning: model: unknown field(s) 'extra' ignored" in lines
    assert "dmlops: warning: resource 'in': unknown field(s) 'initialValue' ignored" in lines
    assert (
        "dmlops: warning: dispatchable 'slice1': DML_SLICE1_OPERATOR_DESC: unknown field(s) 'InputWindowStride' ignored"
        in lines
    )
    assert "dmlops: warning: command 1 (print): unknown field(s) 'verbos' ignored" in lines
    assert any("bind point 'OutputIndicesTensor' ignored" in line for line in lines)


def test_write_file_failure_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "blocker").write_text("a file where a folder should be")
    model = slice1_model()
    model["commands"].append({"type": "writeFile", "resource": "out", "targetPath": "blocker/out.npy"})
    code, out, err = run_cli(capsys, "run", write_model(tmp_path, model), "--output_path", tmp_path)
    assert code == 2 and out == "Resource 'out': 14, 16, 6, 8\n"
    assert "Failed to write resource 'out' (command 2): could not write" in err and len(err.splitlines()) == 1


def test_internal_error_is_one_line_exit_1(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import dmlops.model.executor as executor

    def boom(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(executor, "execute", boom)
    code, _, err = run_cli(capsys, "run", EXAMPLES / "slice1_example2.json")
    assert code == 1
    assert err == "dmlops: internal error: ZeroDivisionError: boom (this is a bug in dmlops; please report it)\n"


def test_errors_have_no_traceback_in_a_real_process(tmp_path: Path) -> None:
    model = slice1_model()
    model["dispatchables"]["slice1"]["desc"]["DimensionCount"] = "four"
    path = write_model(tmp_path, model)
    result = subprocess.run([sys.executable, "-m", "dmlops", "run", str(path)], capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"dmlops: error: {path}: Failed to parse dispatchable 'slice1': Error parsing field 'DimensionCount': "
        "Expected an unsigned integer.\n"
    )
