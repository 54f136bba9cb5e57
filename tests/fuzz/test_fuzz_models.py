"""Fuzz ``dmlops run`` with broken DxDispatch models: exit 2 with one message, never a traceback or hang.

Models start as valid single-operator models built from the desc strategies (every
operator), then get mutated at the JSON level (junk values, missing and wrong-typed
fields, unknown operators and commands, bindings to nothing, absurd sizes) or at the
text level (truncated, garbage bytes, deep nesting, huge literals). ``dmlops.cli.main``
runs in-process; whatever the input, it must return 0 (the mutation left a valid
model) or 2 with ``dmlops: error: ...`` on stderr, never 1 (internal error), never
raise, never print a traceback.

In-process runs cap buffers at 64 MiB (``MAX_BUFFER_BYTES``, the same check as the
4 GiB default) so an absurd size cannot take the machine's memory. A few subprocess
runs (``python -m dmlops``) under a wall-clock timeout and an address-space limit
prove that nothing hangs and that absurd sizes fail before allocating with the
default cap. Examples: ``DMLOPS_FUZZ_EXAMPLES`` (default 120) x 2 tests.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _desc_strategies import BUILDERS, JUNK, mutate
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

import dmlops.model.resources as model_resources
from dmlops.cli import main
from dmlops.descs import desc_from_json

EXAMPLES = int(os.environ.get("DMLOPS_FUZZ_EXAMPLES", "120"))
IN_PROCESS_CAP = 2**26
OPS = sorted(BUILDERS)
ABSURD = [2**31, 2**32, 2**40, 2**62, 2**64, 10**30, -1, 1.5, float("inf")]


@pytest.fixture(autouse=True, scope="module")
def _small_buffer_cap() -> Any:
    old = model_resources.MAX_BUFFER_BYTES
    model_resources.MAX_BUFFER_BYTES = IN_PROCESS_CAP
    yield
    model_resources.MAX_BUFFER_BYTES = old


def model_for(op: str, desc: dict[str, Any]) -> dict[str, Any]:
    """A DxDispatch model binding one resource per tensor of ``desc`` and printing the outputs."""
    resources: dict[str, Any] = {}
    bindings: dict[str, str] = {}
    prints = []
    try:
        parsed = desc_from_json(op, desc)
        tensors = {m: (t, m in parsed.tensors("output")) for m, t in parsed.tensors().items()}
    except Exception:  # an invalid desc: the model is invalid too, which is fine
        tensors = {}
    for member, (t, is_output) in tensors.items():
        size = max(t.data_type.size_in_bits // 8, 1)
        count = -(-t.total_tensor_size_in_bytes // size)
        name = member.lower()
        if is_output or member in ("BatchIndicesTensor", "IndicesTensor"):
            init: dict[str, Any] = {"valueCount": count, "value": 0}
        else:
            init = {"valueCount": count, "valueStart": 0, "valueDelta": 1}
        resources[name] = {"initialValuesDataType": t.data_type.name, "initialValues": init}
        bindings[member] = name
        if is_output:
            prints.append({"type": "print", "resource": name})
    return {
        "$schema": "./_schema.json",
        "resources": resources,
        "dispatchables": {"op": {"type": f"DML_OPERATOR_{op}", "desc": desc}},
        "commands": [{"type": "dispatch", "dispatchable": "op", "bindings": bindings}, *prints],
    }


def mutate_model(draw: Any, model: dict[str, Any]) -> Any:
    """One structural edit of a model dict."""
    where = draw(
        st.sampled_from(["top", "resource", "dispatchable", "desc", "command", "binding", "absurd", "hostile"])
    )
    model = json.loads(json.dumps(model))
    if where == "top":
        key = draw(st.sampled_from(["resources", "dispatchables", "commands"]))
        if draw(st.booleans()):
            del model[key]
        else:
            model[key] = draw(JUNK)
        return model if draw(st.integers(0, 9)) else draw(JUNK)
    if where == "resource" and model["resources"]:
        name = draw(st.sampled_from(sorted(model["resources"])))
        field = draw(
            st.sampled_from(
                ["initialValuesDataType", "initialValues", "sizeInBytes", "initialValuesOffsetInBytes", "x"]
            )
        )
        model["resources"][name][field] = draw(
            st.one_of(
                JUNK,
                st.fixed_dictionaries({"valueCount": JUNK, "value": JUNK}),
                st.fixed_dictionaries({"valueCount": st.integers(-2, 9), "valueStart": JUNK, "valueDelta": JUNK}),
                st.fixed_dictionaries({"sourcePath": st.sampled_from(["missing.npy", "missing.bin", ".", "x.png"])}),
                st.sampled_from(["deferred", [1, 2, "nan", "inf"], [[1]], {"valueCount": 3}]),
            )
        )
    elif where == "dispatchable":
        field = draw(st.sampled_from(["type", "desc", "executionFlags", "dmlCompileType", "bindings"]))
        model["dispatchables"]["op"][field] = draw(
            st.one_of(JUNK, st.sampled_from(["hlsl", "onnx", "DML_OPERATOR_GEMM", "SLICE1", "slice1", "GATHER"]))
        )
    elif where == "desc":
        desc = model["dispatchables"]["op"]["desc"]
        model["dispatchables"]["op"]["desc"] = mutate(draw, desc, draw(st.integers(1, 3)))
    elif where == "command":
        commands = model["commands"]
        i = draw(st.integers(0, len(commands)))
        new = draw(
            st.one_of(
                JUNK,
                st.fixed_dictionaries({"type": st.sampled_from(["dispatch", "print", "writeFile", "bogus"])}),
                st.fixed_dictionaries({"type": st.just("print"), "resource": JUNK}),
                st.fixed_dictionaries({"type": st.just("dispatch"), "dispatchable": JUNK, "bindings": JUNK}),
                st.fixed_dictionaries(
                    {"type": st.just("writeFile"), "resource": JUNK, "targetPath": st.sampled_from(["o.npy", 3])}
                ),
            )
        )
        if i < len(commands) and draw(st.booleans()):
            commands[i] = new
        else:
            commands.insert(i, new)
    elif where == "binding":
        bindings = model["commands"][0]["bindings"]
        if bindings:
            member = draw(st.sampled_from(sorted(bindings)))
            bindings[member] = draw(
                st.one_of(
                    JUNK,
                    st.fixed_dictionaries({"name": st.just(bindings[member]), "elementOffset": JUNK}),
                    st.lists(st.just(bindings[member]), min_size=2, max_size=2),
                )
            )
    elif where == "hostile":
        hostile_edit(draw, model)
    elif model["resources"]:
        name = draw(st.sampled_from(sorted(model["resources"])))
        resource = model["resources"][name]
        if draw(st.booleans()):
            resource["initialValues"] = {"valueCount": draw(st.sampled_from(ABSURD)), "value": 0}
        else:
            resource["sizeInBytes"] = draw(st.sampled_from(ABSURD))
    return model


# Files of the sandbox every fuzzed model runs in (see ``sandbox``): special files to read,
# and write targets that lead out of the output folder ({outside} is filled in per run).
HOSTILE_SOURCES = [
    "fifo.bin", "fifo.npy", "dir", "link_outside.bin", "header_bomb.npy", "/dev/zero", "/dev/urandom",
    "/dev/null", "/proc/self/mem", "{outside}/secret.bin", "nul\u0000byte.bin",
]  # fmt: skip
HOSTILE_TARGETS = [
    "../escape.npy", "../../../../escape/deep.dat", "{outside}/abs.npy", "link/into_outside.npy",
    "link_file.dat", "fifo_out.dat", "sub/../../escape.bin", "sub/deeper/fine.npy", "nul\u0000byte.npy", ".",
]  # fmt: skip


def hostile_edit(draw: Any, model: dict[str, Any]) -> None:
    """Special files as sources, path escapes as targets, broadcast bombs, huge counts."""
    kind = draw(st.sampled_from(["source", "target", "broadcast", "count"]))
    names = sorted(model["resources"])
    if kind == "source" and names:
        resource = model["resources"][draw(st.sampled_from(names))]
        resource["initialValues"] = {"sourcePath": draw(st.sampled_from(HOSTILE_SOURCES))}
    elif kind == "target" and names:
        command = {"type": "writeFile", "resource": draw(st.sampled_from(names))}
        command["targetPath"] = draw(st.sampled_from(HOSTILE_TARGETS))
        model["commands"].insert(draw(st.integers(0, len(model["commands"]))), command)
    elif kind == "broadcast":
        # Input tensors of huge logical size over a tiny buffer (all strides 0).
        desc = model["dispatchables"]["op"]["desc"]
        tensors = [k for k, v in desc.items() if isinstance(v, dict) and isinstance(v.get("Sizes"), list)]
        if tensors:
            tensor = desc[draw(st.sampled_from(sorted(tensors)))]
            tensor["Sizes"] = [draw(st.sampled_from([1, 65536, 2**20, 2**31])) for _ in tensor["Sizes"]]
            tensor["Strides"] = [0] * len(tensor["Sizes"])
            tensor.pop("TotalTensorSizeInBytes", None)
    elif names:
        resource = model["resources"][draw(st.sampled_from(names))]
        dtype = draw(st.sampled_from(["UINT8", "FLOAT32", "UINT64"]))
        count = draw(st.sampled_from([2**26, 2**30, 2**32, 2**40]))
        if draw(st.booleans()):
            resource.update(initialValuesDataType=dtype, initialValues={"valueCount": count, "value": 1})
        else:
            resource.update(
                initialValuesDataType=dtype, initialValues={"valueCount": count, "valueStart": 0, "valueDelta": 1}
            )


def mutate_text(draw: Any, text: str) -> bytes:
    """A text-level corruption of the serialized model."""
    kind = draw(st.sampled_from(["truncate", "insert", "bytes", "nest", "literal", "empty", "bom"]))
    if kind == "truncate":
        return text[: draw(st.integers(0, max(len(text) - 1, 0)))].encode()
    if kind == "insert":
        i = draw(st.integers(0, len(text)))
        return (text[:i] + draw(st.text(min_size=1, max_size=4)) + text[i:]).encode("utf-8", "surrogatepass")
    if kind == "bytes":
        return draw(st.binary(max_size=64))
    if kind == "nest":
        depth = draw(st.sampled_from([100, 5000, 200000]))
        return ('{"resources": ' + "[" * depth + "]" * depth + "}").encode()
    if kind == "literal":
        return text.replace(
            "0", draw(st.sampled_from(["1e999999", "NaN", "-Infinity", "9" * 5000, "0x10"])), 1
        ).encode()
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    return b""


HANG_GUARD_S = 60


class Hang(Exception):
    """A fuzzed run outlived HANG_GUARD_S (the alarm fired)."""


def _alarm(signum: int, frame: Any) -> None:
    raise Hang(f"a fuzzed run took over {HANG_GUARD_S} s")


def sandbox(root: Path) -> tuple[Path, Path]:
    """Files for the hostile mutations: (output folder, folder outside it that must stay untouched)."""
    out, outside = root / "out", root / "outside"
    out.mkdir()
    outside.mkdir()
    (outside / "secret.bin").write_bytes(b"do not touch")
    os.mkfifo(root / "fifo.bin")
    os.mkfifo(root / "fifo.npy")
    (root / "dir").mkdir()
    (root / "link_outside.bin").symlink_to(outside / "secret.bin")
    with open(root / "header_bomb.npy", "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (10**12,)})
    (out / "link").symlink_to(outside, target_is_directory=True)
    (out / "link_file.dat").symlink_to(outside / "secret.bin")
    os.mkfifo(out / "fifo_out.dat")
    return out, outside


def snapshot(root: Path, out: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` but inside ``out`` (links not followed), with regular files' bytes."""
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        if Path(folder) == out:
            dirs.clear()
            continue
        for name in [*dirs, *files]:
            path = Path(folder, name)
            found[str(path)] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return found


def run_cli(content: bytes) -> tuple[int, str, str]:
    """``dmlops run`` on a model file holding ``content``: (exit code, stdout, stderr).

    The run happens in a sandbox folder whose output folder is ``out/``; afterwards
    nothing outside ``out/`` may have been created or changed, and an alarm turns a
    hang into a failure.
    """
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        out_dir, outside = sandbox(root)
        path = root / "model.json"
        path.write_bytes(content.replace(b"{outside}", str(outside).encode()))
        before = snapshot(root, out_dir)
        out, err = io.StringIO(), io.StringIO()
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(HANG_GUARD_S)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["run", str(path), "--output_path", str(out_dir)])
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        assert snapshot(root, out_dir) == before, f"a write outside the output folder: {err.getvalue()}"
        return code, out.getvalue(), err.getvalue()


def assert_clean_exit(code: int, stdout: str, stderr: str) -> str:
    assert "Traceback" not in stdout + stderr, stderr
    assert code in (0, 2), f"exit {code}: {stderr}"
    if code == 2:
        errors = [line for line in stderr.splitlines() if line.startswith("dmlops: error: ")]
        assert len(errors) == 1, stderr
        return "exit 2 (invalid model)"
    return "exit 0 (still a valid model)"


FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


@FUZZ_SETTINGS
@given(data=st.data())
def test_mutated_model_exits_cleanly(data: st.DataObject) -> None:
    op = data.draw(st.sampled_from(OPS), label="op")
    model: Any = model_for(op, BUILDERS[op](data.draw))
    for _ in range(data.draw(st.sampled_from([0, 1, 1, 2, 3]), label="edits")):
        if not isinstance(model, dict) or not all(k in model for k in ("resources", "dispatchables", "commands")):
            break
        if (
            not isinstance(model["commands"], list)
            or not model["commands"]
            or not isinstance(model["commands"][0], dict)
        ):
            break
        if not isinstance(model["dispatchables"], dict) or "op" not in model["dispatchables"]:
            break
        if not isinstance(model["dispatchables"]["op"], dict) or not isinstance(model["resources"], dict):
            break
        if not isinstance(model["commands"][0].get("bindings"), dict):
            break
        if not isinstance(model["dispatchables"]["op"].get("desc"), dict):
            break
        if not all(isinstance(r, dict) for r in model["resources"].values()):
            break
        model = mutate_model(data.draw, model)
    event(assert_clean_exit(*run_cli(json.dumps(model, allow_nan=True).encode())))


@FUZZ_SETTINGS
@given(data=st.data())
def test_corrupted_model_text_exits_cleanly(data: st.DataObject) -> None:
    op = data.draw(st.sampled_from(OPS), label="op")
    text = json.dumps(model_for(op, BUILDERS[op](data.draw)))
    event(assert_clean_exit(*run_cli(mutate_text(data.draw, text))))


for _test, _what in (
    (test_mutated_model_exits_cleanly, f"hypothesis fuzz: mutated models, {EXAMPLES} examples"),
    (test_corrupted_model_text_exits_cleanly, f"hypothesis fuzz: corrupted model text, {EXAMPLES} examples"),
):
    _test.conformance = ("dmlops run (CLI)", _what)  # type: ignore[attr-defined]


def test_valid_generated_models_run() -> None:
    # The generator itself must produce runnable models, or the fuzzing above proves little.
    desc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 4, 4]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
        "DimensionCount": 4,
        "InputWindowOffsets": [0, 0, 0, 1],
        "InputWindowSizes": [1, 1, 4, 3],
        "InputWindowStrides": [1, 1, 2, 2],
    }
    code, out, err = run_cli(json.dumps(model_for("SLICE1", desc)).encode())
    assert (code, err) == (0, "")
    assert "Resource 'outputtensor': 1, 3, 9, 11" in out


# -- fixed malformed models, in-process and as subprocesses ------------------------------------------

_SLICE = model_for(
    "SLICE1",
    {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [4]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2]},
        "DimensionCount": 1,
        "InputWindowOffsets": [0],
        "InputWindowSizes": [4],
        "InputWindowStrides": [2],
    },
)


def _edit(path: tuple[Any, ...], value: Any) -> bytes:
    model = json.loads(json.dumps(_SLICE))
    target = model
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(model).encode()


MALFORMED: dict[str, bytes] = {
    "empty file": b"",
    "not json": b"this is not json",
    "a list": b"[1, 2, 3]",
    "truncated": json.dumps(_SLICE).encode()[:-7],
    "invalid utf-8": b'{"resources": "\xff\xfe"}',
    "deep nesting": b"[" * 300000 + b"]" * 300000,
    "missing commands": json.dumps({k: v for k, v in _SLICE.items() if k != "commands"}).encode(),
    "resources is a list": _edit(("resources",), []),
    "unknown operator": _edit(("dispatchables", "op", "type"), "DML_OPERATOR_NOPE"),
    "hlsl dispatchable": _edit(("dispatchables", "op", "type"), "hlsl"),
    "desc field wrong type": _edit(("dispatchables", "op", "desc", "InputWindowSizes"), "four"),
    "desc field missing": _edit(("dispatchables", "op", "desc", "InputWindowStrides"), None),
    "unknown data type": _edit(("resources", "inputtensor", "initialValuesDataType"), "FLOAT128"),
    "binding to nothing": _edit(("commands", 0, "bindings", "InputTensor"), "nope"),
    "print nothing": _edit(("commands", 1, "resource"), "nope"),
    "unknown command": _edit(("commands", 1, "type"), "launchMissiles"),
    "negative valueCount": _edit(("resources", "inputtensor", "initialValues", "valueCount"), -4),
    "absurd valueCount 2^40": _edit(("resources", "inputtensor", "initialValues", "valueCount"), 2**40),
    "absurd valueCount 2^31": _edit(("resources", "inputtensor", "initialValues", "valueCount"), 2**31),
    "absurd sizeInBytes 2^62": _edit(("resources", "outputtensor", "sizeInBytes"), 2**62),
    "absurd sizeInBytes 8 GiB": _edit(("resources", "outputtensor", "sizeInBytes"), 2**33),
    "absurd tensor Sizes": _edit(("dispatchables", "op", "desc", "InputTensor", "Sizes"), [2**31, 2**31]),
    "absurd elementOffset": _edit(
        ("commands", 0, "bindings", "InputTensor"), {"name": "inputtensor", "elementOffset": 2**40}
    ),
    "missing source file": _edit(("resources", "inputtensor", "initialValues"), {"sourcePath": "missing.npy"}),
}


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_model_in_process(name: str) -> None:
    code, out, err = run_cli(MALFORMED[name])
    assert code == 2, (code, err)
    assert_clean_exit(code, out, err)


SUBPROCESS_CASES = [
    "deep nesting",
    "absurd valueCount 2^31",
    "absurd sizeInBytes 8 GiB",
    "absurd tensor Sizes",
    "truncated",
]

_LIMIT_MEMORY = """
import resource, runpy, sys
limit = 2 * 2**30  # an unguarded multi-GiB allocation fails here instead of filling the machine
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.argv = ["dmlops", *sys.argv[1:]]
runpy.run_module("dmlops", run_name="__main__")
"""


@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_malformed_model_subprocess_no_hang(name: str, tmp_path: Path) -> None:
    """The real command with the default 4 GiB cap: exit 2 with one message, within a generous timeout."""
    path = tmp_path / "model.json"
    path.write_bytes(MALFORMED[name])
    env = {k: v for k, v in os.environ.items() if k != "DMLOPS_MAX_BUFFER_BYTES"}
    proc = subprocess.run(
        [sys.executable, "-c", _LIMIT_MEMORY, "run", str(path), "--output_path", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard for CI, not a performance threshold
        env=env,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "MemoryError" not in proc.stderr and "Unable to allocate" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith("dmlops: error: "), proc.stderr


test_malformed_model_in_process.conformance = ("dmlops run (CLI)", "fixed malformed models, in-process")  # type: ignore[attr-defined]
test_malformed_model_subprocess_no_hang.conformance = (  # type: ignore[attr-defined]
    "dmlops run (CLI)",
    "fixed malformed models, subprocess (2 GiB address-space limit, hang guard)",
)
