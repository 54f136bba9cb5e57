"""DxDispatch's whole model format: image initializers and targets, deferred resources,
init-time bindings, several dispatchables, timing lines, refused dispatchable kinds.

Expected values are written from DxDispatch's sources (ImageReaderWriter.cpp,
JsonParsers.cpp, Executor.cpp, DmlDispatchable.cpp, half.hpp at microsoft/DirectML
a9614e8) and from DML_TENSOR_FLAGS' page, not produced by the code under test.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dmlops.cli import main
from dmlops.model import ModelError, load_model
from dmlops.model.images import float32_to_half_bits

ROOT = Path(__file__).resolve().parent
SAMPLES = [
    *sorted((ROOT / "directml" / "models" / "dxdispatch").glob("*.json")),
    *sorted((ROOT / "models" / "dxdispatch").glob("*.json")),
]
NON_DML = {
    "hlsl_add_fp16.json": "'hlsl' dispatchables are not supported by dmlops: they are HLSL compute shaders",
    "hlsl_add_fp32.json": "'hlsl' dispatchables are not supported by dmlops: they are HLSL compute shaders",
    "onnx_gemm.json": "'onnx' dispatchables are not supported by dmlops: they are ONNX models",
    "onnx_dynamic_shapes.json": "'onnx' dispatchables are not supported by dmlops: they are ONNX models",
    "dmlSerializedGraph_matmul_add.json": "'dmlSerializedGraph' dispatchables are not supported by dmlops",
}


def run_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_model(folder: Path, model: dict[str, Any], name: str = "model.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(model))
    return path


def print_values(out: str, name: str) -> list[float]:
    line = next(x for x in out.splitlines() if x.startswith(f"Resource '{name}': "))
    return [float(v) for v in line.split(": ", 1)[1].split(", ")]


def one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2 and out == "", err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


# -- rapidjson reads every sample model -------------------------------------------------------------


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_rapidjson_reads_every_dxdispatch_sample(path: Path) -> None:
    from dmlops.model.reader import read_json_file

    doc = read_json_file(path)
    assert {"resources", "dispatchables", "commands"} <= set(doc)


@pytest.mark.parametrize("name", sorted(NON_DML))
def test_non_dml_sample_models_are_refused(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "models" / "dxdispatch" / name
    for command in ("run", "validate"):
        err = one_line_error(*run_cli(capsys, command, path))
        assert NON_DML[name] in err and "run this model with DxDispatch on Windows" in err


def test_onnx_model_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(b"\x08\x07\x12\x00")
    err = one_line_error(*run_cli(capsys, "run", path))
    assert "is an ONNX model" in err and "dmlops runs DirectML operator models (.json) only" in err


# -- images -----------------------------------------------------------------------------------------


def image_model(source: str, resample: list[int] | None, dtype: str = "FLOAT32", **extra: Any) -> dict[str, Any]:
    resource: dict[str, Any] = {"initialValuesDataType": dtype, "initialValues": {"sourcePath": source}, **extra}
    if resample is not None:
        resource["resampleSize"] = resample
    return {"resources": {"img": resource}, "dispatchables": {}, "commands": [{"type": "print", "resource": "img"}]}


@pytest.fixture
def pil() -> Any:
    return pytest.importorskip("PIL.Image")


def test_png_reads_as_nchw_rgb_over_255(pil: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hwc = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3) * 7  # H=2, W=3, RGB
    pil.fromarray(hwc).save(tmp_path / "x.png")
    path = write_model(tmp_path, image_model("x.png", [1, 3, 2, 3]))
    code, out, err = run_cli(capsys, "run", path)
    assert code == 0, err
    # ImageReaderWriter: dst[c * H * W + pixel] = float(src[pixel * C + c]) / 255.0f
    expected = hwc.transpose(2, 0, 1).astype(np.float32).ravel() / np.float32(255)
    assert np.array_equal(np.float32(print_values(out, "img")), np.float32([float(f"{v:.6g}") for v in expected]))
    values = load_model(path).resources["img"]
    assert values.kind == "image" and values.initial_byte_count == 3 * 2 * 3 * 4
    assert np.array_equal(np.frombuffer(values.initial_values, np.float32), expected)


def test_rgba_gray_and_palette_images(pil: Any, tmp_path: Path) -> None:
    gray = np.array([[0, 51], [102, 255]], dtype=np.uint8)
    pil.fromarray(gray).save(tmp_path / "g.png")  # mode L: replicated into R, G, B; alpha 255
    res = load_model(write_model(tmp_path, image_model("g.png", [1, 4, 2, 2]))).resources["img"]
    planes = np.frombuffer(res.initial_values, np.float32).reshape(4, 2, 2)
    for c in range(3):
        assert np.array_equal(planes[c], gray / np.float32(255))
    assert np.all(planes[3] == 1.0)
    rgba = np.zeros((1, 2, 4), dtype=np.uint8)
    rgba[0, 0] = (10, 20, 30, 0)
    rgba[0, 1] = (40, 50, 60, 128)
    pil.fromarray(rgba).save(tmp_path / "a.png")  # RGB: alpha dropped, colours kept (no premultiplication)
    res = load_model(write_model(tmp_path, image_model("a.png", [1, 3, 1, 2]))).resources["img"]
    assert np.array_equal(np.frombuffer(res.initial_values, np.float32) * 255, np.float32([10, 40, 20, 50, 30, 60]))


def test_float16_image_truncates_like_half_hpp(pil: Any, tmp_path: Path) -> None:
    levels = np.arange(256, dtype=np.uint8).reshape(16, 16)
    pil.fromarray(levels).save(tmp_path / "l.png")
    res = load_model(write_model(tmp_path, image_model("l.png", [1, 3, 16, 16], "FLOAT16"))).resources["img"]
    got = np.frombuffer(res.initial_values, np.uint16)[:256]
    as_float = levels.ravel().astype(np.float32) / np.float32(255)
    truncated = as_float.view(np.uint32)
    # half.hpp with HALF_ROUND_STYLE -1 keeps the top 10 mantissa bits (normal halves here).
    exponent = (truncated >> 23).astype(np.int64) - 127
    normal = exponent >= -14
    expected = ((exponent + 15) << 10) | ((truncated & 0x7FFFFF) >> 13)
    assert np.array_equal(got[1:][normal[1:]], expected[1:][normal[1:]])
    assert got[0] == 0
    # ...which is not numpy's round-to-nearest for some levels.
    assert np.any(got != as_float.astype(np.float16).view(np.uint16))


def test_half_truncation_table() -> None:
    cases = [
        (1.2, 0x3CCC),  # round-to-nearest would give 0x3CCD
        (-1.2, 0xBCCC),
        (65519.0, 0x7BFF),
        (65535.0, 0x7BFF),  # truncated, not rounded to infinity
        (65536.0, 0x7C00),  # overflow: infinity
        (float("inf"), 0x7C00),
        (-float("inf"), 0xFC00),
        (2.0**-24, 0x0001),
        (2.0**-25, 0x0000),
        (0.0, 0x0000),
        (-0.0, 0x8000),
    ]
    got = float32_to_half_bits(np.array([v for v, _ in cases], dtype=np.float32))
    assert [hex(v) for v in got] == [hex(bits) for _, bits in cases]
    assert np.isnan(float32_to_half_bits(np.float32([np.nan])).view(np.float16))[0]


def test_json_float16_values_truncate_like_half_hpp(tmp_path: Path) -> None:
    model = {
        "resources": {
            "a": {"initialValuesDataType": "FLOAT16", "initialValues": [1.2, -1.2, 65519, 65536, 0.1]},
            "c": {"initialValuesDataType": "FLOAT16", "initialValues": {"valueCount": 2, "value": 1.2}},
            # value += valueDelta in half: float sum, truncated at every step
            "s": {
                "initialValuesDataType": "FLOAT16",
                "initialValues": {"valueCount": 4, "valueStart": 2047, "valueDelta": 1.5},
            },
            "t": {
                "initialValuesDataType": "FLOAT16",
                "initialValues": {"valueCount": 4, "valueStart": 0, "valueDelta": 0.1},
            },
        },
        "dispatchables": {},
        "commands": [],
    }
    res = load_model(write_model(tmp_path, model)).resources
    bits = {name: np.frombuffer(r.initial_values, np.uint16).tolist() for name, r in res.items()}
    assert bits["a"] == [0x3CCC, 0xBCCC, 0x7BFF, 0x7C00, 0x2E66]
    assert bits["c"] == [0x3CCC, 0x3CCC]
    # 2048.5 and 2049.5 truncate to 2048 (round-to-nearest would reach 2050, 2052)
    assert np.frombuffer(res["s"].initial_values, np.float16).tolist() == [2047, 2048, 2048, 2048]
    assert bits["t"] == [0x0000, 0x2E66, 0x3266, 0x34CC]  # 0, 0.1, 0.2, 0.3 as halves


def test_image_is_scaled_to_resample_size(pil: Any, tmp_path: Path) -> None:
    rng = np.random.RandomState(0)
    hwc = rng.randint(0, 256, size=(6, 8, 3)).astype(np.uint8)
    pil.fromarray(hwc).save(tmp_path / "big.png")
    res = load_model(write_model(tmp_path, image_model("big.png", [1, 3, 3, 4]))).resources["img"]
    planes = np.frombuffer(res.initial_values, np.float32).reshape(3, 3, 4)
    for c in range(3):  # each channel scaled on its own with a bicubic filter
        band = pil.fromarray(hwc[:, :, c]).resize((4, 3), pil.Resampling.BICUBIC)
        assert np.array_equal(planes[c] * np.float32(255), np.asarray(band, dtype=np.float32))


def test_dxdispatch_image_io_model_validates(pil: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pil.fromarray(np.full((20, 30, 3), 200, dtype=np.uint8)).save(tmp_path / "chihuahua.jpg", quality=95)
    model = ROOT / "models" / "dxdispatch" / "image_io.json"
    code, out, err = run_cli(capsys, "validate", model, "--input_path", tmp_path)
    assert code == 0, err
    assert "3 resources, 1 dispatchables, 2 commands" in out
    res = load_model(model, input_path=tmp_path).resources["input"]
    assert res.initial_byte_count == 3 * 512 * 512 * 4
    values = np.frombuffer(res.initial_values, np.float32)
    assert np.all(np.abs(values * 255 - 200) <= 2)  # a flat JPEG stays flat after scaling


IMAGE_ERRORS = {
    "no resampleSize": (dict(resample=None), "needs 'resampleSize' [1, C, H, W]"),
    "three dims": (
        dict(resample=[3, 2, 2]),
        "Field 'resampleSize' must be empty or have four dimensions in N,C,H,W order. N must be 1.",
    ),
    "two channels": (dict(resample=[1, 2, 2, 2]), "C must be 3 (RGB) or 4 (RGBA) for an image; got 2."),
    "zero width": (dict(resample=[1, 3, 2, 0]), "H and W must be at least 1"),
    "uint8": (dict(resample=[1, 3, 2, 2], dtype="UINT8"), "unsupported data type UINT8"),
    "mode": (dict(resample=[1, 3, 2, 2], resampleMode="crop"), "Field 'resampleMode' must be 'scale' for image files."),
    "huge": (
        dict(resample=[1, 4, 100000, 100000]),
        "image 'x.png' at resampleSize [1, 4, 100000, 100000] needs 160000000000 bytes, more than the largest buffer",
    ),
}


@pytest.mark.parametrize("case", sorted(IMAGE_ERRORS))
def test_image_errors(pil: Any, case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kwargs, message = IMAGE_ERRORS[case]
    pil.fromarray(np.zeros((2, 2, 3), dtype=np.uint8)).save(tmp_path / "x.png")
    path = write_model(tmp_path, image_model("x.png", **kwargs))
    for command in ("run", "validate"):
        err = one_line_error(*run_cli(capsys, command, path))
        assert "Failed to parse resource 'img'" in err and message in err, err


def test_not_an_image(pil: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.png").write_bytes(b"GIF89a but not really")
    err = one_line_error(*run_cli(capsys, "run", write_model(tmp_path, image_model("x.png", [1, 3, 2, 2]))))
    assert "'x.png' is not an image Pillow can read" in err


def test_image_bomb_header_is_refused_before_decoding(
    pil: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A valid 65535 x 65535 PNG header with no pixel data: refused on its header alone.
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 65535, 65535, 8, 2, 0, 0, 0)
    (tmp_path / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b""))
    err = one_line_error(*run_cli(capsys, "run", write_model(tmp_path, image_model("x.png", [1, 3, 2, 2]))))
    assert "too large to decode" in err or "decoding image 'x.png' (65535 x 65535) needs" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_image_source_must_be_a_regular_file(pil: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(tmp_path / "x.png")
    err = one_line_error(*run_cli(capsys, "run", write_model(tmp_path, image_model("x.png", [1, 3, 2, 2]))))
    assert "is a FIFO (named pipe), not a regular file" in err


def test_pillow_missing_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "x.png").write_bytes(b"\x89PNG")
    monkeypatch.setitem(sys.modules, "PIL", None)
    err = one_line_error(*run_cli(capsys, "validate", write_model(tmp_path, image_model("x.png", [1, 3, 2, 2]))))
    assert "reading image 'x.png' needs Pillow, which is not installed (pip install \"dmlops[images]\")" in err


def test_other_image_extensions_are_raw_bytes(tmp_path: Path) -> None:
    (tmp_path / "x.bmp").write_bytes(b"BM\x00\x01")
    model = load_model(write_model(tmp_path, image_model("x.bmp", None, dtype="UINT8")))
    assert model.resources["img"].initial_values == b"BM\x00\x01"
    assert any("read as raw bytes: DxDispatch decodes only .jpg and .png" in w for w in model.warnings)


def write_model_for_target(values: list[float], target: str, dims: list[int] | None, dtype: str = "FLOAT32") -> dict:
    command: dict[str, Any] = {"type": "writeFile", "resource": "t", "targetPath": target}
    if dims is not None:
        command["dimensions"] = dims
    return {
        "resources": {"t": {"initialValuesDataType": dtype, "initialValues": values}},
        "dispatchables": {},
        "commands": [command],
    }


def test_write_png_clamps_and_truncates(pil: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # [1, 3, 1, 2] planar: R = (v0, v1), G = (v2, v3), B = (v4, v5)
    values: list[Any] = [0.5, -1.0, 0.999, 2.0, "nan", 1.0 / 255.0]
    path = write_model(tmp_path, write_model_for_target(values, "out/img.png", [1, 3, 1, 2]))
    code, out, err = run_cli(capsys, "run", path, "--output_path", tmp_path)
    assert code == 0, err
    assert out == f"Resource 't' written to '{tmp_path / 'out' / 'img.png'}'\n"
    with pil.open(tmp_path / "out" / "img.png") as image:
        assert image.mode == "RGB" and image.size == (2, 1)
        pixels = np.asarray(image)
    # (uint8)(max(0, min(1, v)) * 255): 127.5 -> 127, 0, 254.745 -> 254, 255, NaN -> 255, 1.0000001 -> 1
    one = int(np.float32(np.float32(1) / np.float32(255)) * np.float32(255))
    assert pixels.tolist() == [[[127, 254, 255], [0, 255, one]]]


def test_write_gray_png_default_dims_and_float16(pil: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_model(tmp_path, write_model_for_target([0.25, 0.5], "g.png", None, dtype="FLOAT16"))
    code, _, err = run_cli(capsys, "run", path, "--output_path", tmp_path)
    assert code == 0, err
    with pil.open(tmp_path / "g.png") as image:  # no dimensions: C = H = W = 1, grayscale
        assert image.mode == "L" and image.size == (1, 1) and np.asarray(image).tolist() == [[63]]


def test_write_jpg_rgba_drops_alpha(pil: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = [0.5] * 4 + [0.5] * 4 + [0.5] * 4 + [0.0] * 4  # 2 x 2 RGBA
    path = write_model(tmp_path, write_model_for_target(values, "x.jpg", [1, 4, 2, 2]))
    code, _, err = run_cli(capsys, "run", path, "--output_path", tmp_path)
    assert code == 0, err
    with pil.open(tmp_path / "x.jpg") as image:
        assert image.format == "JPEG" and image.mode == "RGB" and image.size == (2, 2)
        assert np.all(np.abs(np.asarray(image, dtype=int) - 127) <= 2)


def test_write_jpeg_extension_is_raw(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_model(tmp_path, write_model_for_target([0.5, 1.0], "x.jpeg", [1, 1, 1, 2]))
    code, _, err = run_cli(capsys, "run", path, "--output_path", tmp_path)
    assert code == 0, err
    assert (tmp_path / "x.jpeg").read_bytes() == np.float32([0.5, 1.0]).tobytes()


TARGET_ERRORS = {
    "two channels": (dict(dims=[1, 2, 1, 1]), "Unsupported channel count 2 for image file"),
    "uint8": (dict(dims=[1, 1, 1, 2], dtype="UINT8"), "resource 't' is UINT8; images are written from FLOAT32"),
    "too small": (dict(dims=[1, 3, 2, 2]), "need 3 x 2 x 2 FLOAT32 values (48 bytes) but resource 't' has 8 bytes"),
    "zero height": (dict(dims=[1, 1, 0, 2]), "must be at least 1"),
}


@pytest.mark.parametrize("case", sorted(TARGET_ERRORS))
def test_image_target_errors(pil: Any, case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kwargs, message = TARGET_ERRORS[case]
    values = [0, 1] if kwargs.get("dtype") == "UINT8" else [0.5, 1.0]
    path = write_model(tmp_path, write_model_for_target(values, "x.png", **kwargs))
    for command in ("run", "validate"):
        err = one_line_error(*run_cli(capsys, command, path))
        assert "Failed to parse command 0 (writeFile)" in err and message in err, err
    assert not (tmp_path / "x.png").exists()


def test_image_target_outside_output_folder_is_refused(
    pil: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    path = write_model(tmp_path, write_model_for_target([0.5], "../escape.png", None))
    err = one_line_error(*run_cli(capsys, "run", path, "--output_path", out_dir))
    assert "writeFile target '../escape.png' resolves to" in err and "outside the output folder" in err
    assert not (tmp_path / "escape.png").exists()


# -- deferred resources ---------------------------------------------------------------------------------


def slice_model(**resources: Any) -> dict[str, Any]:
    return {
        "resources": {
            "in": {
                "initialValuesDataType": "FLOAT32",
                "initialValues": {"valueCount": 4, "valueStart": 1, "valueDelta": 1},
            },
            "out": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 2, "value": 0}},
            **resources,
        },
        "dispatchables": {
            "slice": {
                "type": "SLICE1",
                "desc": {
                    "InputTensor": {"DataType": "FLOAT32", "Sizes": [4]},
                    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2]},
                    "DimensionCount": 1,
                    "InputWindowOffsets": [1],
                    "InputWindowSizes": [2],
                    "InputWindowStrides": [1],
                },
            }
        },
        "commands": [
            {"type": "dispatch", "dispatchable": "slice", "bindings": {"InputTensor": "in", "OutputTensor": "out"}},
            {"type": "print", "resource": "out"},
        ],
    }


def test_unused_deferred_resource_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = slice_model(later={"initialValuesDataType": "FLOAT32", "initialValues": "deferred", "sizeInBytes": 64})
    path = write_model(tmp_path, model)
    code, out, err = run_cli(capsys, "run", path)
    assert code == 0 and out == "Resource 'out': 2, 3\n", err
    assert "field(s) 'sizeInBytes' ignored: the resource is deferred" in err
    res = load_model(path).resources["later"]
    assert res.deferred and res.size_in_bytes == 0


def test_deferred_write_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = slice_model(later={"initialValues": "deferred"})
    model["commands"].append({"type": "writeFile", "resource": "later", "targetPath": "later.npy"})
    err = one_line_error(*run_cli(capsys, "run", write_model(tmp_path, model)))
    assert "Failed to parse command 2 (writeFile): Could not find deferred resource later" in err


# -- init-time bindings (OWNED_BY_DML), several dispatchables and commands ------------------------------


def owned_model() -> dict[str, Any]:
    model = slice_model(other={"initialValuesDataType": "FLOAT32", "initialValues": [10, 20, 30, 40]})
    owned = model["dispatchables"]["slice"]
    owned["desc"]["InputTensor"]["Flags"] = "OWNED_BY_DML"
    owned["bindings"] = {"InputTensor": "in"}
    overwrite = json.loads(json.dumps(owned))
    overwrite["desc"]["InputTensor"]["Flags"] = "NONE"
    overwrite["desc"]["OutputTensor"]["Sizes"] = [4]
    overwrite["desc"]["InputWindowOffsets"], overwrite["desc"]["InputWindowSizes"] = [0], [4]
    del overwrite["bindings"]
    model["dispatchables"]["copy"] = overwrite
    model["commands"] = [
        {"type": "dispatch", "dispatchable": "slice", "bindings": {"OutputTensor": "out"}},
        {"type": "print", "resource": "out"},
        {"type": "dispatch", "dispatchable": "copy", "bindings": {"InputTensor": "other", "OutputTensor": "in"}},
        {"type": "print", "resource": "in"},
        {"type": "dispatch", "dispatchable": "slice", "bindings": {"OutputTensor": "out"}},
        {"type": "print", "resource": "out"},
    ]
    return model


def test_owned_by_dml_input_is_taken_at_initialization(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", write_model(tmp_path, owned_model()))
    assert code == 0, err
    # The second dispatch of 'slice' still reads the initial [1, 2, 3, 4]: DirectML copied it
    # into the persistent resource at initialization, before 'copy' overwrote the buffer.
    assert out.splitlines() == ["Resource 'out': 2, 3", "Resource 'in': 10, 20, 30, 40", "Resource 'out': 2, 3"]


def test_owned_by_dml_binding_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = owned_model()
    model["commands"][0]["bindings"]["InputTensor"] = "in"
    err = one_line_error(*run_cli(capsys, "run", write_model(tmp_path, model)))
    assert "Failed to parse command 0 (dispatch): dispatchable 'slice': Bind point 'InputTensor' is flagged " in err
    assert "binding it at execution is an error (DML_TENSOR_FLAGS)" in err

    model = owned_model()
    del model["dispatchables"]["slice"]["bindings"]
    err = one_line_error(*run_cli(capsys, "validate", write_model(tmp_path, model)))
    assert "Failed to initialize dispatchable 'slice': Bind point 'InputTensor' is flagged OWNED_BY_DML, so it " in err

    model = owned_model()
    model["dispatchables"]["slice"]["bindings"]["OutputTensor"] = "out"
    code, _, err = run_cli(capsys, "run", write_model(tmp_path, model))
    assert code == 0, err
    assert "bind point 'OutputTensor' ignored (only OWNED_BY_DML inputs are bound at initialization" in err

    model = owned_model()
    model["dispatchables"]["slice"]["bindings"]["InputTensor"] = "nope"
    err = one_line_error(*run_cli(capsys, "run", write_model(tmp_path, model)))
    assert "Failed to initialize dispatchable 'slice': Bind point 'InputTensor': unknown resource 'nope'." in err


def test_dxdispatch_owned_tensors_sample(capsys: pytest.CaptureFixture[str]) -> None:
    model = load_model(ROOT / "directml" / "models" / "dxdispatch" / "dml_owned_tensors.json")
    spec = model.dispatchables["add"]
    assert [(b.member, b.resource) for b in spec.init_bound] == [("ATensor", "A")]
    dispatch = model.commands[0]
    assert [b.member for b in dispatch.bindings] == ["BTensor", "OutputTensor"]  # type: ignore[union-attr]


def test_owned_copies_count_in_the_peak(tmp_path: Path) -> None:
    from dmlops.model.peak_memory import estimate_peak

    model = load_model(write_model(tmp_path, owned_model()))
    assert estimate_peak(model, "numpy").buffers == 16 + 8 + 16 + 16  # in, out, other + the owned copy of 'in'


# -- timing lines ------------------------------------------------------------------------------------


def test_timing_line_is_dxdispatch_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", write_model(tmp_path, slice_model()), "-i", "5")
    assert code == 0, err
    # Executor.cpp: "Dispatch '{}': {} iterations, {:.4f} ms median (CPU)"
    assert re.fullmatch(r"Dispatch 'slice': 5 iterations, \d+\.\d{4} ms median \(CPU\)", out.splitlines()[0])


@pytest.mark.cuda
def test_cuda_timing_line_has_gpu_median(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dmlops.backends import backend_status

    reason = backend_status().get("cuda")
    if reason is not None:
        pytest.skip(f"cuda: {reason}")
    code, out, err = run_cli(capsys, "run", write_model(tmp_path, slice_model()), "-i", "4", "--backend", "cuda")
    assert code == 0, err
    # "..., {:.4f} ms median (CPU), {:.6f} ms median (GPU)"
    line = out.splitlines()[0]
    assert re.fullmatch(
        r"Dispatch 'slice': 4 iterations, \d+\.\d{4} ms median \(CPU\), \d+\.\d{6} ms median \(GPU\)", line
    )
    assert out.splitlines()[1] == "Resource 'out': 2, 3"


def test_model_error_type_is_exported() -> None:
    assert issubclass(ModelError, Exception)
