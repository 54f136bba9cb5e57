"""Hostile models and misuse of ``dmlops run``: every case of issue 17, as a regression test.

Writes stay in the output folder, reads never block or run unbounded, memory is known
before a run and bounded during it, parsing is linear, long runs are bounded. Cases that
could hang or exhaust memory if they regressed run as subprocesses under a wall-clock
timeout (a hang guard, not a performance threshold) and an address-space limit, so a
regression fails instead of hanging CI or swapping.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import dmlops.model.executor as executor_module
from dmlops.cli import main
from dmlops.model import Executor, load_model
from dmlops.model.formatting import CHUNK_ELEMENTS, format_print, iter_print
from dmlops.model.peak_memory import parse_size
from dmlops.model.timing import EXACT_SAMPLES, RELATIVE_RESOLUTION, MedianTimer, Progress

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "slice1_example2.json"

_LIMITED = """
import resource, runpy, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.argv = ["dmlops", *sys.argv[2:]]
runpy.run_module("dmlops", run_name="__main__")
"""


def run_limited(*args: object, cwd: Path, address_space: int = 2 * 2**30, timeout: int = 120) -> tuple[int, str, str]:
    """``dmlops ARGS`` in a subprocess under an address-space limit and a hang guard."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DMLOPS_")}
    proc = subprocess.run(
        [sys.executable, "-c", _LIMITED, str(address_space), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


def run_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error_line(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dmlops: error: "), err
    return lines[0]


def slice1_model(**commands: object) -> dict:
    model = json.loads(EXAMPLE.read_text())
    model["commands"] = [*model["commands"], *commands.get("extra", [])]  # type: ignore[list-item]
    return model


def write_model(folder: Path, model: object, name: str = "model.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(model if isinstance(model, str) else json.dumps(model))
    return path


def with_write(target: str) -> dict:
    return slice1_model(extra=[{"type": "writeFile", "resource": "out", "targetPath": target}])


# -- 1. writes are confined to --output_path --------------------------------------------------------


@pytest.mark.parametrize("target", ["{outside}/abs.npy", "../escape.npy", "../../../../elsewhere/deep.dat"])
def test_write_outside_output_path_is_refused(target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out_dir = tmp_path / "a" / "b" / "out"
    target = target.format(outside=outside)
    model = write_model(tmp_path, with_write(target))
    code, out, err = run_cli(capsys, "run", model, "--output_path", out_dir)
    line = one_error_line(code, err)
    assert target in line and "--allow-writes-outside-output-path" in line
    assert out == ""  # refused before the first command ran
    written = [p for p in tmp_path.rglob("*") if p.suffix in (".npy", ".dat")]
    assert written == []


def test_symlink_leading_outside_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    victim = tmp_path / "victim.npy"
    victim.write_bytes(b"precious")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "link.npy").symlink_to(victim)
    (out_dir / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    for target in ("link.npy", "dirlink/new.npy"):
        code, _, err = run_cli(capsys, "run", write_model(tmp_path, with_write(target)), "--output_path", out_dir)
        assert target in one_error_line(code, err)
    assert victim.read_bytes() == b"precious"
    assert not (tmp_path / "new.npy").exists()


def test_default_output_path_is_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, _, err = run_cli(capsys, "run", write_model(tmp_path, with_write("../up.npy")))
    assert "outside the output folder" in one_error_line(code, err)
    code, _out, err = run_cli(capsys, "run", write_model(tmp_path, with_write("sub/dir/in.npy")))
    assert (code, err) == (0, "")
    np.testing.assert_array_equal(np.load(work / "sub" / "dir" / "in.npy"), [14, 16, 6, 8])  # folders created inside


def test_allow_flag_restores_dxdispatch_behaviour(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "out"
    model = write_model(tmp_path, with_write("../escape.npy"))
    code, _out, err = run_cli(capsys, "run", model, "--output_path", out_dir, "--allow-writes-outside-output-path")
    assert (code, err) == (0, "")
    np.testing.assert_array_equal(np.load(tmp_path / "escape.npy"), [14, 16, 6, 8])


def test_nul_byte_in_target_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "run", write_model(tmp_path, with_write("a\u0000b.npy")), "--output_path", tmp_path)
    assert "NUL" in one_error_line(code, err)


# -- 2. reads are bounded and never block -----------------------------------------------------------


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("name", ["in.bin", "in.npy"])
def test_fifo_source_is_refused_without_blocking(name: str, tmp_path: Path) -> None:
    _fifo(tmp_path / name)
    model = slice1_model()
    model["resources"]["in"]["initialValues"] = {"sourcePath": name}
    code, _, err = run_limited("run", write_model(tmp_path, model), cwd=tmp_path, timeout=60)
    assert "is a FIFO (named pipe), not a regular file" in one_error_line(code, err)


def test_fifo_write_target_is_refused_without_blocking(tmp_path: Path) -> None:
    _fifo(tmp_path / "t.dat")
    code, _, err = run_limited("run", write_model(tmp_path, with_write("t.dat")), cwd=tmp_path, timeout=60)
    assert "FIFO" in one_error_line(code, err)


@pytest.mark.parametrize("command", ["run", "validate"])
def test_fifo_model_is_refused_without_blocking(command: str, tmp_path: Path) -> None:
    code, _, err = run_limited(command, _fifo(tmp_path / "model.json"), cwd=tmp_path, timeout=60)
    assert "FIFO" in one_error_line(code, err)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_device_sources_are_refused(device: str, tmp_path: Path) -> None:
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    model = slice1_model()
    model["resources"]["in"]["initialValues"] = {"sourcePath": device}
    model["resources"]["in"]["initialValuesDataType"] = "FLOAT32"
    code, _, err = run_limited("run", write_model(tmp_path, model), cwd=tmp_path, timeout=60)
    assert "character device, not a regular file" in one_error_line(code, err)
    code, _, err = run_limited("validate", device, cwd=tmp_path, timeout=60)
    assert "character device" in one_error_line(code, err)


def test_npy_header_is_checked_against_the_file_size(tmp_path: Path) -> None:
    with open(tmp_path / "huge.npy", "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (1_000_000_000_000,)})
        f.write(b"\0" * 16)
    assert (tmp_path / "huge.npy").stat().st_size < 200
    model = slice1_model()
    model["resources"]["in"]["initialValues"] = {"sourcePath": "huge.npy"}
    code, _, err = run_limited("run", write_model(tmp_path, model), cwd=tmp_path, address_space=2**30)
    line = one_error_line(code, err)
    assert "(1000000000000,)" in line and "4000000000000 bytes" in line and "16 bytes follow the header" in line


def test_npy_reads_into_the_buffer_with_byte_and_axis_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    np.save(tmp_path / "big_endian_fortran.npy", np.asfortranarray(values.astype(">f4")))
    model = slice1_model()
    model["resources"]["in"]["initialValues"] = {"sourcePath": "big_endian_fortran.npy"}
    code, out, err = run_cli(capsys, "run", write_model(tmp_path, model))
    assert (code, out, err) == (0, "Resource 'out': 14, 16, 6, 8\n", "")


def test_raw_source_reads_only_its_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.bin").write_bytes(np.arange(1, 17, dtype=np.float32).tobytes())
    model = slice1_model()
    model["resources"]["in"]["initialValues"] = {"sourcePath": "in.bin"}
    code, out, _ = run_cli(capsys, "run", write_model(tmp_path, model))
    assert (code, out) == (0, "Resource 'out': 14, 16, 6, 8\n")


# -- 3. memory is bounded and known before the run --------------------------------------------------


def broadcast_bomb() -> dict:
    """SLICE1 over a 65536 x 65536 broadcast (Strides [0, 0]) of a 64-byte buffer: 16 GiB if expanded."""
    return {
        "resources": {
            "in": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 16, "value": 3}},
            "out": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 256, "value": 0}},
        },
        "dispatchables": {
            "s": {
                "type": "DML_OPERATOR_SLICE1",
                "desc": {
                    "InputTensor": {"DataType": "FLOAT32", "Sizes": [65536, 65536], "Strides": [0, 0]},
                    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [16, 16]},
                    "DimensionCount": 2,
                    "InputWindowOffsets": [0, 0],
                    "InputWindowSizes": [65536, 65536],
                    "InputWindowStrides": [4096, 4096],
                },
            }
        },
        "commands": [
            {"type": "dispatch", "dispatchable": "s", "bindings": {"InputTensor": "in", "OutputTensor": "out"}},
            {"type": "print", "resource": "out"},
        ],
    }


def test_broadcast_input_is_never_expanded(tmp_path: Path) -> None:
    code, out, err = run_limited("run", write_model(tmp_path, broadcast_bomb()), cwd=tmp_path, address_space=2**31)
    assert (code, err) == (0, "")
    assert out == "Resource 'out': " + ", ".join(["3"] * 256) + "\n"


def test_aliased_input_is_copied_before_the_output_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # SLICE1 reversing a buffer onto itself: the input must be read before the output lands.
    model = {
        "resources": {"buf": {"initialValuesDataType": "FLOAT32", "initialValues": [1, 2, 3, 4]}},
        "dispatchables": {
            "r": {
                "type": "SLICE1",
                "desc": {
                    "InputTensor": {"DataType": "FLOAT32", "Sizes": [4]},
                    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4]},
                    "DimensionCount": 1,
                    "InputWindowOffsets": [0],
                    "InputWindowSizes": [4],
                    "InputWindowStrides": [-1],
                },
            }
        },
        "commands": [
            {"type": "dispatch", "dispatchable": "r", "bindings": {"InputTensor": "buf", "OutputTensor": "buf"}},
            {"type": "print", "resource": "buf"},
        ],
    }
    code, out, _ = run_cli(capsys, "run", write_model(tmp_path, model))
    assert (code, out) == (0, "Resource 'buf': 4, 3, 2, 1\n")


def test_print_streams_in_bounded_pieces() -> None:
    values = np.arange(3 * CHUNK_ELEMENTS + 5, dtype=np.float32)
    pieces = list(iter_print("x", values))
    assert "".join(pieces) == "Resource 'x': " + ", ".join(f"{v:g}" for v in values.tolist())
    assert max(len(p) for p in pieces) < 16 * CHUNK_ELEMENTS
    verbose = list(iter_print("x", values[:40], verbose=True))
    assert "".join(verbose) == format_print("x", values[:40], verbose=True)
    assert "".join(verbose).splitlines()[1] == "[ 0] 0 (0x00000000)"


def test_print_memory_does_not_grow_with_the_buffer(tmp_path: Path) -> None:
    count = 1 << 21
    model = {
        "resources": {"big": {"initialValuesDataType": "UINT8", "initialValues": {"valueCount": count, "value": 7}}},
        "dispatchables": {},
        "commands": [{"type": "print", "resource": "big"}],
    }
    executor = Executor(load_model(write_model(tmp_path, model)), out=io.StringIO())
    sink = io.StringIO()
    executor.out = sink
    tracemalloc.start()
    try:
        executor.run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sink.getvalue() == "Resource 'big': " + ", ".join(["7"] * count) + "\n"
    # The whole line is 6 MiB of text; building it at once as before took hundreds of MiB of
    # str objects. The sink itself holds the text, so the bound is the text plus a few pieces.
    assert peak < len(sink.getvalue()) * 4 + 32 * 2**20


def test_constant_initializer_is_written_straight_into_its_buffer(tmp_path: Path) -> None:
    nbytes = 64 * 2**20
    model = {
        "resources": {
            "c": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": nbytes // 4, "value": 1}}
        },
        "dispatchables": {},
        "commands": [],
    }
    path = write_model(tmp_path, model)
    tracemalloc.start()
    try:
        executor = Executor(load_model(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.frombuffer(executor.buffers["c"], np.float32)[-1] == 1
    assert peak < nbytes * 1.25  # one buffer, not the values and then a copy of them


def test_peak_memory_limit_refuses_early_with_the_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = write_model(tmp_path, slice1_model())
    code, out, err = run_cli(capsys, "run", model, "--max_memory", "64")
    line = one_error_line(code, err)
    assert (
        "needs about" in line and "buffers 80" in line and "dispatch 'slice1'" in line and "limit of 64 bytes" in line
    )
    assert out == ""
    monkeypatch.setenv("DMLOPS_MAX_MEMORY", "100")
    code, _, err = run_cli(capsys, "run", model)
    assert "DMLOPS_MAX_MEMORY" in one_error_line(code, err)
    monkeypatch.setenv("DMLOPS_MAX_MEMORY", "1M")
    assert run_cli(capsys, "run", model)[0] == 0
    code, _, err = run_cli(capsys, "run", model, "--max_memory", "lots")
    assert "--max_memory" in one_error_line(code, err)


@pytest.mark.parametrize(
    ("text", "value"), [("1000", 1000), ("4G", 4 * 2**30), ("512MiB", 512 * 2**20), ("1.5k", 1536)]
)
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value


def test_memory_error_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(executor_module, "execute", exhausted)
    code, _, err = run_cli(capsys, "run", EXAMPLE)
    assert "out of memory" in one_error_line(code, err)


# -- 4. parsing is linear ---------------------------------------------------------------------------


def big_model_text(megabytes: int, comment: bool) -> str:
    values = list(range(megabytes * 2**20 // 9))
    model = slice1_model()
    model["resources"]["pad"] = {"initialValuesDataType": "UINT32", "initialValues": values}
    text = json.dumps(model)
    return "// a comment makes this DxDispatch's lenient JSON\n" + text if comment else text


@pytest.mark.parametrize("comment", [False, True])
def test_big_model_validates(comment: bool, tmp_path: Path) -> None:
    path = write_model(tmp_path, big_model_text(8, comment))
    code, out, err = run_limited("validate", path, cwd=tmp_path, timeout=120)
    assert (code, err) == (0, "") and "is valid" in out


@pytest.mark.parametrize(
    "text",
    ["{" + " " * 20_000_000, "[" * 5_000_000, "/*" * 5_000_000, '"\\"' * 5_000_000, "//\n" * 5_000_000],
    ids=["whitespace", "nesting", "open-comments", "escaped-quotes", "line-comments"],
)
def test_bombs_are_refused(text: str, tmp_path: Path) -> None:
    code, _, err = run_limited("validate", write_model(tmp_path, text), cwd=tmp_path, timeout=120)
    assert "JSON syntax error" in one_error_line(code, err)


def test_dxdispatch_dialect_only() -> None:
    from dmlops.model import parse_json_text
    from dmlops.model.errors import ModelError

    assert parse_json_text('{"a": [1, 2, /* c */], // d\n "b": NaN,}')["a"] == [1, 2]
    for json5_only in ("{'a': 1}", "{a: 1}", "[0x10]", "[+1]", "[.5]"):
        with pytest.raises(ModelError, match="JSON syntax error at line 1"):
            parse_json_text(json5_only)


# -- 5. long runs are visible and bounded -----------------------------------------------------------


def test_milliseconds_to_run_bounds_a_huge_iteration_count(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", EXAMPLE, "-i", "1000000000", "-t", "200")
    assert (code, err) == (0, "")
    first = out.splitlines()[0]
    assert first.startswith("Dispatch 'slice1': ") and "ms median (CPU)" in first
    assert 1 <= int(first.split()[2]) < 1_000_000_000
    assert out.splitlines()[1] == "Resource 'out': 14, 16, 6, 8"


def test_iterations_alone_still_count_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "run", EXAMPLE, "-i", "7")
    assert code == 0 and out.startswith("Dispatch 'slice1': 7 iterations, ")


def test_median_timer_exact_then_bounded() -> None:
    one = MedianTimer()
    one.add(3.0)
    assert one.median() == 3.0  # a single sample is its own median
    rng = np.random.RandomState(0)
    small = rng.lognormal(size=1001)
    timer = MedianTimer()
    for v in small:
        timer.add(float(v))
    warm = small[1:].tolist()  # DxDispatch drops the first sample as warm-up
    assert timer.median() == sorted(warm)[len(warm) // 2]
    big = rng.lognormal(size=EXACT_SAMPLES * 3)
    timer = MedianTimer()
    for v in big:
        timer.add(float(v))
    exact = sorted(big[1:].tolist())[(len(big) - 1) // 2]
    assert abs(timer.median() - exact) <= exact * RELATIVE_RESOLUTION * 1.01
    assert timer._samples == [] and timer.count == len(big)  # folded into the fixed histogram


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_terminals_only() -> None:
    term = _Terminal()
    bar = Progress("dispatch 'x'", 10, None, stream=term, after_s=0)
    bar.update(5)
    bar.close()
    assert "dispatch 'x' [############            ] 5/10 iterations" in term.getvalue()
    assert term.getvalue().endswith("\r")  # erased
    pipe = io.StringIO()
    quiet = Progress("dispatch 'x'", 10, None, stream=pipe, after_s=0)
    quiet.update(5)
    quiet.close()
    assert pipe.getvalue() == ""


def test_slow_reference_dispatch_suggests_the_cpu_backend(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(executor_module, "SLOW_REFERENCE_DISPATCH_S", 0.0)
    code, _out, err = run_cli(capsys, "run", EXAMPLE, "-i", "3")
    assert code == 0
    assert err.count("dmlops: warning: dispatch 'slice1' took") == 1 and "--backend cpu" in err


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_broadcast_beyond_what_numpy_addresses_is_exit_2(
    backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Valid for DirectML (the buffer is 4 bytes), but 2^64 logical elements: no NumPy view spans that.
    if backend == "cpu":
        pytest.importorskip("numba")
    model = broadcast_bomb()
    desc = model["dispatchables"]["s"]["desc"]
    desc.update(
        InputTensor={"DataType": "FLOAT32", "Sizes": [65536] * 4, "Strides": [0] * 4},
        OutputTensor={"DataType": "FLOAT32", "Sizes": [1, 1, 1, 1]},
        DimensionCount=4,
        InputWindowOffsets=[0] * 4,
        InputWindowSizes=[65536] * 4,
        InputWindowStrides=[65536] * 4,
    )
    code, _out, err = run_cli(capsys, "run", write_model(tmp_path, model), "--backend", backend)
    assert "larger than NumPy can address" in one_error_line(code, err)


BROADCAST_DISPATCHABLES = {
    # Each input is a 2^31-element broadcast of one buffer element; the outputs are tiny. The
    # reference must gather before it converts, never expand the input (np.take would copy it whole).
    "RESAMPLE2 LINEAR": {
        "type": "DML_OPERATOR_RESAMPLE2",
        "desc": {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [2**31], "Strides": [0]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [3]},
            "InterpolationMode": "LINEAR",
            "RoundingDirection": "DECREASING",
            "DimensionCount": 1,
            "Scales": [2.0],
            "InputPixelOffsets": [-0.2],
            "OutputPixelOffsets": [2.0],
        },
    },
    "GATHER": {
        "type": "DML_OPERATOR_GATHER",
        "desc": {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2**15, 2**16], "Strides": [0, 0, 0, 0]},
            "IndicesTensor": {"DataType": "UINT32", "Sizes": [1, 1, 1, 3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2**15, 3]},
            "Axis": 3,
            "IndexDimensions": 1,
        },
    },
}


@pytest.mark.parametrize("name", BROADCAST_DISPATCHABLES)
def test_reference_reads_broadcast_inputs_in_place(name: str, tmp_path: Path) -> None:
    dispatchable = BROADCAST_DISPATCHABLES[name]
    tensors = dispatchable["desc"]
    resources, bindings, prints = {}, {}, []
    for member, tensor in tensors.items():
        if not isinstance(tensor, dict):
            continue
        count = 1 if "Strides" in tensor else int(np.prod(tensor["Sizes"]))
        resources[member] = {
            "initialValuesDataType": tensor["DataType"],
            "initialValues": {"valueCount": count, "value": 1},
        }
        bindings[member] = member
        if member == "OutputTensor":
            prints.append({"type": "print", "resource": member})
    model = {
        "resources": resources,
        "dispatchables": {"d": dispatchable},
        "commands": [{"type": "dispatch", "dispatchable": "d", "bindings": bindings}, *prints],
    }
    code, out, err = run_limited("run", write_model(tmp_path, model), cwd=tmp_path, address_space=2**31, timeout=120)
    assert (code, err) == (0, "")
    assert set(out.split(": ")[1].strip().split(", ")) == {"1"}
