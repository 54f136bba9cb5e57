"""The DxDispatch model reader: initializers, byte buffers, bindings, number formatting."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from dmlops.cli import main
from dmlops.enums import TensorDataType
from dmlops.errors import UnknownFieldWarning
from dmlops.model import Executor, ModelError, load_model, parse_json_text, parse_model
from dmlops.model.formatting import format_print, format_value

MODELS = Path(__file__).resolve().parent / "models"


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- initializers -------------------------------------------------------------------------------

INITIALIZER_LINES = [
    # arrays: "nan"/"inf"/"-inf" strings, -0, %g's 6 significant digits, float32 overflow -> inf
    "Resource 'array_f32': 1, 0.1, 1e-07, nan, inf, -inf, -0, 1.23457e+08, inf",
    "Resource 'array_i8': -128, -1, 0, 127",
    "Resource 'array_u64': 0, 18446744073709551615",
    # FLOAT16: 0.1 rounds to 0.0999756; 70000 overflows to inf; printed through float
    "Resource 'array_f16': 1, 0.0999756, 65504, inf, 3",
    "Resource 'constant_f64': 2.5, 2.5, 2.5",
    "Resource 'constant_nan': nan, nan",
    "Resource 'sequence_i32': 10, 7, 4, 1, -2",
    "Resource 'sequence_u8_wraps': 254, 255, 0, 1",
    "Resource 'sequence_f32': 0, 0.1, 0.2, 0.3",
    "Resource 'npy_i16': -3, -2, -1, 0, 1, 2",
    "Resource 'npy_typed': -3, -2, -1, 0, 1, 2",
    "Resource 'npy_big_endian': 1.5, 2.5",
    "Resource 'dat_f64': 0.5, -0.25, 1e-07, 1.23457e+08",
    "Resource 'bin_u16': 7, 8, 9, 10",
    # print shows the initializer's element count, not sizeInBytes ...
    "Resource 'sized': 7, 8",
    # ... from byte 0 of the buffer, as DxDispatch does, whatever initialValuesOffsetInBytes is
    "Resource 'offset': 0, 0",
    "Resource 'array_i8':",
    "[0] -128 (0x80)",
    "[1] -1 (0xFF)",
    "[2] 0 (0x00)",
    "[3] 127 (0x7F)",
]


def test_every_initializer_form(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "run", MODELS / "initializers.json", "--output_path", tmp_path)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[: len(INITIALIZER_LINES)] == INITIALIZER_LINES
    assert lines[len(INITIALIZER_LINES) :] == [
        f"Resource '{name}' written to '{tmp_path / name}.bin'" for name in ("sized", "offset", "typed_list")
    ]
    # sizeInBytes is honoured (not rounded); the data sits at initialValuesOffsetInBytes
    assert (tmp_path / "sized.bin").read_bytes() == np.array([7, 8, 0, 0, 0, 0], "<f4").tobytes()
    assert (tmp_path / "offset.bin").read_bytes() == np.array([0, 0, 5, 6], "<u4").tobytes()
    # the typed-list form packs its values back to back
    assert (tmp_path / "typed_list.bin").read_bytes() == np.uint32(6).tobytes() + np.float32(0.5).tobytes()


def test_resource_specs() -> None:
    model = load_model(MODELS / "initializers.json")
    res = model.resources
    assert res["array_f16"].data_type is TensorDataType.FLOAT16
    assert res["array_f16"].size_in_bytes == 12  # 10 bytes rounded up to 4
    assert res["array_f16"].element_count == 5
    assert res["sized"].size_in_bytes == 24  # explicit sizeInBytes: not rounded
    assert res["npy_i16"].data_type is TensorDataType.INT16  # the .npy's own dtype
    assert res["typed_list"].data_type is TensorDataType.UNKNOWN
    assert {r.kind for r in res.values()} == {"array", "constant", "sequence", "file", "list"}


def test_sequence_accumulates_in_the_element_type() -> None:
    # DxDispatch: `value += delta` in float32, so rounding errors accumulate like this.
    doc = {
        "resources": {
            "s": {
                "initialValuesDataType": "FLOAT32",
                "initialValues": {"valueCount": 50, "valueStart": 0, "valueDelta": 0.1},
            }
        },
        "dispatchables": {},
        "commands": [],
    }
    model = parse_model(doc, path=Path("m.json"))
    got = np.frombuffer(model.resources["s"].initial_values, "<f4")
    expected = [np.float32(0)]
    for _ in range(49):
        expected.append(np.float32(expected[-1] + np.float32(0.1)))
    np.testing.assert_array_equal(got, expected)


def test_npy_type_mismatch(tmp_path: Path) -> None:
    doc = {
        "resources": {"x": {"initialValuesDataType": "FLOAT32", "initialValues": {"sourcePath": "data/int16_2x3.npy"}}},
        "dispatchables": {},
        "commands": [],
    }
    with pytest.raises(
        ModelError, match=r"Data type from file 'data/int16_2x3.npy' does not match field 'initialValuesDataType'"
    ):
        parse_model(doc, path=MODELS / "x.json")


@pytest.mark.parametrize(
    ("initial", "message"),
    [
        ({"valueCount": 2, "value": 1, "valueStart": 0}, "mutually exclusive"),
        ({"valueCount": 2}, "unknown generator type"),
        ({"valueCount": -1, "value": 0}, "Error parsing field 'valueCount': Expected an unsigned integer."),
        ({"valueCount": 2, "valueStart": 0}, "Field 'valueDelta' is required."),
        ({"valueCount": 2, "value": "x"}, "Error parsing field 'value': Expected a number or 'NaN', 'Inf', or '-Inf'."),
        (5, "must be an array of numbers, an object, or deferred"),
    ],
)
def test_initializer_errors(initial: object, message: str) -> None:
    doc = {
        "resources": {"r": {"initialValuesDataType": "FLOAT32", "initialValues": initial}},
        "dispatchables": {},
        "commands": [],
    }
    with pytest.raises(ModelError, match=r"^Failed to parse resource 'r': ") as info:
        parse_model(doc, path=Path("m.json"))
    assert message in str(info.value)


def test_buffer_cap_is_checked_before_allocating(monkeypatch: pytest.MonkeyPatch) -> None:
    import dmlops.model.resources as resources

    monkeypatch.setattr(resources, "MAX_BUFFER_BYTES", 64)
    doc = {
        "resources": {"r": {"initialValuesDataType": "FLOAT64", "initialValues": {"valueCount": 9, "value": 0}}},
        "dispatchables": {},
        "commands": [],
    }
    with pytest.raises(ModelError, match="needs 72 bytes, more than the largest buffer dmlops allocates"):
        parse_model(doc, path=Path("m.json"))


# -- strided bindings ---------------------------------------------------------------------------


def test_strided_bindings_with_element_offsets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "run", MODELS / "strided_binding.json", "--output_path", tmp_path)
    assert (code, err) == (0, "")
    # SLICE1 example 2 (14, 16, 6, 8) written at elements 5, 7, 9, 11; every other byte untouched
    assert out.splitlines()[0] == "Resource 'out': -7, -7, -7, -7, -7, 14, -7, 16, -7, 6, -7, 8, -7, -7"
    expected = np.full(14, -7, dtype="<f4")
    expected[[5, 7, 9, 11]] = [14, 16, 6, 8]
    assert (tmp_path / "out.dat").read_bytes() == expected.tobytes()
    npy = np.load(tmp_path / "out.npy")
    assert npy.shape == (2, 7)
    np.testing.assert_array_equal(npy.reshape(-1), expected)


def test_untouched_bytes_survive_on_every_backend(
    backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Sentinel bit patterns (NaN payloads) in the gaps must come back bit for bit.
    sentinel = np.array([0x7FC01234], dtype="<u4").view("<f4")[0]
    model = json.loads(parse_json_text_file(MODELS / "strided_binding.json"))
    model["resources"]["out"] = {
        "initialValuesDataType": "UINT32",
        "initialValues": {"valueCount": 14, "value": 0x7FC01234},
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    code, _, err = run(capsys, "run", path, "--backend", backend, "--output_path", tmp_path)
    assert code == 0, err
    got = np.fromfile(tmp_path / "out.dat", dtype="<u4")
    expected = np.full(14, 0x7FC01234, dtype="<u4")
    expected[[5, 7, 9, 11]] = np.array([14, 16, 6, 8], dtype="<f4").view("<u4")
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(sentinel)


def test_binding_offset_must_align_with_the_tensor_type(tmp_path: Path) -> None:
    model = json.loads(parse_json_text_file(MODELS / "strided_binding.json"))
    model["commands"][0]["bindings"]["OutputTensor"] = {"name": "out", "elementOffset": 1, "elementSizeInBytes": 2}
    with pytest.raises(ModelError, match=r"byte 2\): the byte offset is not a multiple of the FLOAT32 element size 4"):
        parse_model(model, path=MODELS / "m.json")


def test_element_offset_counts_elements_of_the_resource_type() -> None:
    # elementOffset is in units of the resource's initialValuesDataType (DxDispatch ResolveBindings):
    # an INT8-initialised buffer bound as FLOAT32 at elementOffset 4 starts at byte 4.
    doc = json.loads(parse_json_text_file(MODELS / "strided_binding.json"))
    doc["resources"]["out"] = {"initialValuesDataType": "INT8", "initialValues": {"valueCount": 64, "value": 0}}
    doc["commands"][0]["bindings"]["OutputTensor"] = {"name": "out", "elementOffset": 4}
    model = parse_model(doc, path=MODELS / "m.json")
    out = model.commands[0].bindings[1]
    assert (out.member, out.resource, out.byte_offset) == ("OutputTensor", "out", 4)
    executor = Executor(model)
    executor.dispatch(model.commands[0])
    raw = np.frombuffer(bytes(executor.buffers["out"]), dtype="<f4")
    assert raw[1] == 14 and raw[3] == 16 and raw[5] == 6 and raw[7] == 8 and raw[0] == 0


def parse_json_text_file(path: Path) -> str:
    return json.dumps(parse_json_text(path.read_text()))


# -- JSON ---------------------------------------------------------------------------------------


def test_json5_comments_and_trailing_commas() -> None:
    assert parse_json_text('// c\n{"a": [1, 2,], /* d */ "b": "nan",}') == {"a": [1, 2], "b": "nan"}


def test_json_syntax_error_has_line_and_column() -> None:
    with pytest.raises(
        ModelError, match=r"^JSON syntax error at line 3, column 9: Missing a colon after a name of object member$"
    ):
        parse_json_text('{\n  "a": 1,\n    "b" 2\n}')


def test_unknown_fields_are_collected_not_raised() -> None:
    doc = json.loads(parse_json_text_file(MODELS / "strided_binding.json"))
    doc["dispatchables"]["slice1"]["desc"]["Bogus"] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownFieldWarning)
        model = parse_model(doc, path=MODELS / "m.json")
    assert model.warnings == ["dispatchable 'slice1': DML_SLICE1_OPERATOR_DESC: unknown field(s) 'Bogus' ignored"]


# -- number formatting (C++ operator<< defaults = %g, 6 significant digits) --------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (np.float32(14), "14"),
        (np.float32(0.1), "0.1"),
        (np.float32(1e-7), "1e-07"),
        (np.float32(123456789), "1.23457e+08"),
        (np.float64(1e16), "1e+16"),
        (np.float64(0.0001), "0.0001"),
        (np.float64(100000), "100000"),
        (np.float64(1000000), "1e+06"),
        (np.float32("nan"), "nan"),
        (-np.float32("nan"), "nan"),
        (np.float32("inf"), "inf"),
        (np.float32("-inf"), "-inf"),
        (np.float16(0.1), "0.0999756"),
        (np.int64(-5), "-5"),
        (np.uint8(255), "255"),
    ],
)
def test_format_value(value: object, text: str) -> None:
    assert format_value(value) == text


def test_format_print_verbose() -> None:
    values = np.array([1.0, -2.5] + [0.0] * 9, dtype="<f4")
    lines = format_print("r", values, verbose=True).splitlines()
    assert lines[:3] == ["Resource 'r':", "[ 0] 1 (0x3F800000)", "[ 1] -2.5 (0xC0200000)"]
    assert lines[-1] == "[10] 0 (0x00000000)"
    assert format_print("r", values[:2]) == "Resource 'r': 1, -2.5"


def test_invalid_utf8_is_one_clear_error(tmp_path: Path) -> None:
    # rapidjson decodes the bytes itself; dmlops keeps no decoded copy of the model.
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"resources": "\xff"}')
    with pytest.raises(ModelError, match=r"^the model is not UTF-8 text \(byte 15\)$"):
        load_model(path)
