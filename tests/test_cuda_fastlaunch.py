"""The compiled launch path (dmlops.cuda._fastlaunch): the C extension, its replay, its fallback.

Without a GPU: the extension is built into a temporary folder with the system compiler and
driven through a stand-in ``libcuda`` (a few lines of C that record what ``cuLaunchKernel``
was handed) and stand-in arrays, so the argument packing, the error paths and every check
of the replay run on CI. These skip where no compiler or Python headers exist. The
fallback (no compiler, DMLOPS_FASTLAUNCH=0) needs neither.

With a GPU (``cuda`` marks): every operator the replay covers gives the same bits through
the replay, the compiled launch and CuPy's launch, on fresh inputs per call.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dmlops
from conftest import backend_params
from dmlops.backends import load_backend
from dmlops.cuda import _fastlaunch as fl
from dmlops.errors import BackendUnavailableError

FAKE_CUDA = r"""
#include <string.h>
#include <time.h>
static int queue[8], queued = 0, sizes[16], n_sizes = 0;
unsigned char args_seen[16][256];
int calls = 0;
void *fn_seen, *stream_seen;
unsigned dims_seen[7];
volatile int block_next = 0, in_launch = 0, released = 0, saw_release = -1;
void fake_sizes(int n, const int *s) { n_sizes = n; memcpy(sizes, s, (unsigned)n * sizeof(int)); }
void fake_fail_next(int status) { queue[queued++] = status; }
void fake_block_next(void) { block_next = 1; in_launch = 0; released = 0; saw_release = -1; }
void fake_release(void) { released = 1; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra) {
    (void)extra;
    calls++;
    if (block_next) {  /* wait (at most 5 s) for another thread to call fake_release */
        struct timespec ms = {0, 1000000};
        block_next = 0;
        in_launch = 1;
        for (int i = 0; i < 5000 && !released; i++) nanosleep(&ms, NULL);
        saw_release = released;
    }
    if (queued) {
        int s = queue[0];
        memmove(queue, queue + 1, (unsigned)--queued * sizeof(int));
        if (s) return s;
    }
    unsigned d[7] = {gx, gy, gz, bx, by, bz, shared};
    memcpy(dims_seen, d, sizeof d);
    fn_seen = f;
    stream_seen = stream;
    for (int i = 0; i < n_sizes; i++) memcpy(args_seen[i], params[i], (unsigned)sizes[i]);
    return 0;
}
"""


class DriverError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"CUresult {status}")
        self.status = status


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, str]:
    """(the extension built into a folder of its own, the stand-in driver, its path)."""
    cc = fl.compiler()
    if cc is None or fl.python_include() is None:
        pytest.skip("no C compiler or Python headers here")
    folder = tmp_path_factory.mktemp("fastlaunch")
    source = folder / "fakecuda.c"
    source.write_text(FAKE_CUDA)
    lib = folder / "libfakecuda.so"
    subprocess.run([*cc, "-shared", "-fPIC", "-O1", str(source), "-o", str(lib)], check=True)
    ext = fl.load(fl.build(folder))  # its own file: a module of its own, never the one dmlops uses
    fake = ctypes.CDLL(str(lib))
    return ext, fake, str(lib)


@pytest.fixture
def ext(built: tuple[Any, Any, str]) -> Any:
    module, fake, lib = built
    contexts.clear()
    seen(fake, [])  # copy no arguments unless a test says how many
    module.init(lib, lambda: 0x5EED, lambda: contexts.append(1), DriverError)
    return module


contexts: list[int] = []


def seen(fake: Any, sizes: list[int]) -> None:
    """Have the stand-in driver copy these many bytes of each launch argument."""
    fake.fake_sizes(len(sizes), (ctypes.c_int * len(sizes))(*sizes))


def args_seen(fake: Any, sizes: list[int]) -> list[bytes]:
    """What the stand-in driver copied out of the last launch's argument array."""
    table = (ctypes.c_ubyte * 256 * 16).in_dll(fake, "args_seen")
    return [bytes(table[i][:n]) for i, n in enumerate(sizes)]


def u64(*values: int) -> list[bytes]:
    return [v.to_bytes(8, "little") for v in values]


# -- the extension, through a stand-in driver (no GPU) ------------------------------------------


def test_the_source_compiles_with_the_system_compiler(built: tuple[Any, Any, str]) -> None:
    module, _, _ = built
    assert hasattr(module, "Launch") and hasattr(module, "replay")


def test_a_launch_packs_pointers_fixed_pointers_and_structs(ext: Any, built: tuple[Any, Any, str]) -> None:
    _, fake, _ = built
    struct = np.zeros((), dtype=[("count", "<i8"), ("scale", "<f8"), ("dims", "<i8", (3,))])
    struct["count"], struct["scale"], struct["dims"] = 1000, -2.5, (7, 8, 9)
    launch = ext.Launch()
    launch._arm(0xF00D, (3, 2, 1), (128, 1, 1), 96, 2, (0xAB00,), (struct.tobytes(),))
    sizes = [8, 8, 8, struct.dtype.itemsize]
    seen(fake, sizes)
    launch(0x1000, 0x2000)
    assert args_seen(fake, sizes) == [*u64(0x1000, 0x2000, 0xAB00), struct.tobytes()]
    assert list((ctypes.c_uint * 7).in_dll(fake, "dims_seen")) == [3, 2, 1, 128, 1, 1, 96]
    assert ctypes.c_void_p.in_dll(fake, "fn_seen").value == 0xF00D
    assert ctypes.c_void_p.in_dll(fake, "stream_seen").value == 0x5EED  # the current stream
    assert launch._pointers == (0x1000, 0x2000, 0xAB00)
    launch(0x3000, 0x4000, stream=0x77)
    assert ctypes.c_void_p.in_dll(fake, "stream_seen").value == 0x77
    assert args_seen(fake, sizes)[:2] == u64(0x3000, 0x4000)


def test_a_launch_refuses_what_it_cannot_pack(ext: Any) -> None:
    launch = ext.Launch()
    with pytest.raises(RuntimeError, match="never armed"):
        launch(1)
    launch._arm(1, (1, 1, 1), (32, 1, 1), 0, 2, (), ())
    with pytest.raises(TypeError, match="at most 2 pointers"):
        launch(1, 2, 3)
    with pytest.raises(TypeError, match="pointers are ints"):
        launch(1.5)
    with pytest.raises(TypeError, match="stream= only"):
        launch(1, 2, other=3)
    with pytest.raises(ValueError, match="32 bits"):
        launch._arm(1, (2**32, 1, 1), (32, 1, 1), 0, 2, (), ())


def test_driver_errors_raise_and_a_missing_context_is_made_once(ext: Any, built: tuple[Any, Any, str]) -> None:
    _, fake, _ = built
    launch = ext.Launch()
    launch._arm(1, (1, 1, 1), (32, 1, 1), 0, 1, (), ())
    calls = ctypes.c_int.in_dll(fake, "calls")
    before = calls.value
    fake.fake_fail_next(201)  # CUDA_ERROR_INVALID_CONTEXT: make the context current, launch again
    launch(5)
    assert contexts == [1] and calls.value == before + 2
    fake.fake_fail_next(700)
    with pytest.raises(DriverError) as info:
        launch(5)
    assert info.value.status == 700
    fake.fake_fail_next(201)
    fake.fake_fail_next(201)  # a second refusal is an error, not a loop
    with pytest.raises(DriverError):
        launch(5)


def test_an_empty_grid_launches_nothing(ext: Any, built: tuple[Any, Any, str]) -> None:
    _, fake, _ = built
    launch = ext.Launch()
    launch._arm(1, (0, 1, 1), (32, 1, 1), 0, 1, (), ())
    calls = ctypes.c_int.in_dll(fake, "calls")
    before = calls.value
    launch(5)
    assert calls.value == before


def test_subclasses_get_attributes_and_weak_references(ext: Any) -> None:
    class Sub(ext.Launch):  # type: ignore[name-defined,misc]
        pass

    launch = Sub()
    launch.grid = (1, 1, 1)
    ref = weakref.ref(launch)
    assert ref() is launch
    del launch
    assert ref() is None


def test_a_launch_before_init_raises(built: tuple[Any, Any, str], tmp_path: Path) -> None:
    module, _, _ = built
    copy = tmp_path / Path(module.__file__).name
    shutil.copy(module.__file__, copy)  # another file: a fresh module state, never initialised
    fresh = fl.load(copy)
    launch = fresh.Launch()
    launch._arm(1, (1, 1, 1), (32, 1, 1), 0, 1, (), ())
    with pytest.raises(RuntimeError, match="not initialised"):
        launch(5)
    with pytest.raises(RuntimeError, match="not initialised"):
        launch(5, stream=3)


def _launch_in_thread(launch: Any, *pointers: int) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def go() -> None:
        try:
            launch(*pointers)
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    thread = threading.Thread(target=go)
    thread.start()
    return thread, errors


def _wait_in_launch(fake: Any) -> None:
    in_launch = ctypes.c_int.in_dll(fake, "in_launch")
    for _ in range(5000):
        if in_launch.value:
            return
        time.sleep(0.001)
    raise AssertionError("the launch never reached the driver")


def test_the_gil_is_released_around_the_driver_call(ext: Any, built: tuple[Any, Any, str]) -> None:
    """The stand-in driver blocks until another thread calls it back; that thread runs Python
    to do so, which it can only while the launching thread has released the GIL."""
    _, fake, _ = built
    launch = ext.Launch()
    launch._arm(1, (1, 1, 1), (32, 1, 1), 0, 1, (), ())
    fake.fake_block_next()
    thread, errors = _launch_in_thread(launch, 5)
    _wait_in_launch(fake)
    fake.fake_release()
    thread.join()
    assert errors == []
    assert ctypes.c_int.in_dll(fake, "saw_release").value == 1


def test_a_rearm_during_a_launch_keeps_the_packing_in_use(ext: Any, built: tuple[Any, Any, str]) -> None:
    _, fake, _ = built
    first, second = bytes(range(1, 33)), bytes(range(101, 133))
    launch = ext.Launch()
    launch._arm(7, (1, 1, 1), (32, 1, 1), 0, 1, (0xAB00,), (first,))
    sizes = [8, 8, 32]
    seen(fake, sizes)
    fake.fake_block_next()
    thread, errors = _launch_in_thread(launch, 0x1000)
    _wait_in_launch(fake)
    launch._arm(9, (1, 1, 1), (32, 1, 1), 0, 1, (0xCD00,), (second,))  # while the first call is in the driver
    junk = [bytes(32) * 4 for _ in range(1000)]  # reuse freed memory, if any was freed
    fake.fake_release()
    thread.join()
    assert errors == [] and junk
    assert args_seen(fake, sizes) == [*u64(0x1000, 0xAB00), first]  # the packing the call started with
    assert ctypes.c_void_p.in_dll(fake, "fn_seen").value == 7
    launch(0x2000)
    assert args_seen(fake, sizes) == [*u64(0x2000, 0xCD00), second]
    assert ctypes.c_void_p.in_dll(fake, "fn_seen").value == 9


# -- the replay, with stand-in arrays -----------------------------------------------------------


class Memory:
    def __init__(self, ptr: int, device_id: int = 0) -> None:
        self.ptr, self.device_id = ptr, device_id


class FakeArray:
    """What the replay reads of a CuPy array: shape, dtype, strides, data.ptr, data.device_id."""

    next_ptr = 1 << 20

    def __init__(self, shape: tuple[int, ...], dtype: Any = np.float32, ptr: int | None = None, strides: Any = None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.strides = strides or tuple(
            int(np.prod(self.shape[i + 1 :], dtype=np.int64)) * self.dtype.itemsize for i in range(len(self.shape))
        )
        if ptr is None:
            ptr = FakeArray.next_ptr
            FakeArray.next_ptr += 1 << 16
        self.data = Memory(ptr)


class Replay:
    """A replay table over FakeArray with one recorded entry: y = f(a, b), one launch."""

    def __init__(self, ext: Any, fake: Any) -> None:
        self.ext, self.fake = ext, fake
        self.device = 0
        self.entries: dict[int, Any] = {}
        ext.configure_replay(self.entries, FakeArray, lambda: self.device)
        self.desc = object()

        class Sub(ext.Launch):  # type: ignore[name-defined,misc]
            pass  # like PackedLaunch's compiled class: weak references need a subclass

        self.launch = Sub()
        self.launch._arm(1, (1, 1, 1), (32, 1, 1), 0, 3, (), ())
        self.a, self.b, self.y = FakeArray((4, 8)), FakeArray((4, 8)), FakeArray((4, 8))
        self.guard = {"SWITCH": True}

        def spec(member: str, arr: FakeArray) -> tuple[Any, ...]:
            return (member, arr.shape, arr.dtype, arr.strides, arr.data.ptr & 255)

        self.entries[id(self.desc)] = (
            self.desc,
            "cuda",
            None,
            False,
            0,
            (spec("ATensor", self.a), spec("BTensor", self.b)),
            (spec("OutputTensor", self.y),),
            ((weakref.ref(self.launch), ((0, 0), (1, 4), (2, 0))),),  # B's pointer one element in
            ((self.guard, "SWITCH", True),),
        )

    def __call__(self, inputs: Any, outputs: Any, backend: str = "cuda", level: Any = None, strict: Any = False) -> Any:
        return self.ext.replay(self.desc, inputs, outputs, backend, level, strict)


def test_a_replay_launches_with_each_operands_pointer_and_offset(ext: Any, built: tuple[Any, Any, str]) -> None:
    _, fake, _ = built
    r = Replay(ext, fake)
    a, b, y = FakeArray((4, 8)), FakeArray((4, 8)), FakeArray((4, 8))
    seen(fake, [8, 8, 8])
    result = r({"ATensor": a, "BTensor": b}, {"OutputTensor": y})
    assert result == {"OutputTensor": y} and result["OutputTensor"] is y
    assert args_seen(fake, [8, 8, 8]) == u64(a.data.ptr, b.data.ptr + 4, y.data.ptr)


def test_a_replay_allocates_missing_outputs(ext: Any, built: tuple[Any, Any, str]) -> None:
    _, fake, _ = built
    r = Replay(ext, fake)
    a, b = FakeArray((4, 8)), FakeArray((4, 8))
    result = r({"ATensor": a, "BTensor": b}, None)
    assert isinstance(result["OutputTensor"], FakeArray) and result["OutputTensor"].shape == (4, 8)
    assert r({"ATensor": a, "BTensor": b}, {"OutputTensor": None})["OutputTensor"] is not result["OutputTensor"]


@pytest.mark.parametrize(
    "change",
    [
        "shape",
        "dtype",
        "strides",
        "alignment",
        "array device",
        "current device",
        "type",
        "missing input",
        "extra input",
        "unknown output",
        "backend",
        "level",
        "strict",
        "guard",
        "plan dropped",
        "inputs not a dict",
    ],
)
def test_a_replay_declines_every_difference(ext: Any, built: tuple[Any, Any, str], change: str) -> None:
    _, fake, _ = built
    r = Replay(ext, fake)
    a, b, y = FakeArray((4, 8)), FakeArray((4, 8)), FakeArray((4, 8))
    inputs: Any = {"ATensor": a, "BTensor": b}
    outputs: dict[str, Any] = {"OutputTensor": y}
    call: dict[str, Any] = {}
    assert r(inputs, outputs) is not None  # the unchanged call replays
    if change == "shape":
        inputs["BTensor"] = FakeArray((8, 4))
    elif change == "dtype":
        inputs["BTensor"] = FakeArray((4, 8), np.float16, strides=b.strides)
    elif change == "strides":
        inputs["BTensor"] = FakeArray((4, 8), strides=(4, 16))
    elif change == "alignment":
        inputs["BTensor"] = FakeArray((4, 8), ptr=b.data.ptr + 4)
    elif change == "array device":
        y.data.device_id = 1
    elif change == "current device":
        r.device = 1
    elif change == "type":
        inputs["BTensor"] = np.zeros((4, 8), np.float32)
    elif change == "missing input":
        del inputs["BTensor"]
    elif change == "extra input":
        inputs["CTensor"] = FakeArray((4, 8))
    elif change == "unknown output":
        outputs["OtherTensor"] = FakeArray((4, 8))
    elif change == "backend":
        call["backend"] = "numpy"
    elif change == "level":
        call["level"] = "6_4"
    elif change == "strict":
        call["strict"] = True
    elif change == "guard":
        r.guard["SWITCH"] = False
    elif change == "plan dropped":
        del r.launch
    elif change == "inputs not a dict":
        inputs = list(inputs.items())
    calls = ctypes.c_int.in_dll(fake, "calls").value
    assert r(inputs, outputs, **call) is None
    assert ctypes.c_int.in_dll(fake, "calls").value == calls  # nothing launched


def test_a_replay_of_an_unknown_desc_is_none(ext: Any, built: tuple[Any, Any, str]) -> None:
    _, fake, _ = built
    r = Replay(ext, fake)
    assert ext.replay(object(), {}, None, "cuda", None, False) is None
    assert r({"ATensor": r.a, "BTensor": r.b}, {"OutputTensor": r.y}) is not None


def _with_steps(r: Replay, steps: tuple[Any, ...]) -> None:
    entry = r.entries[id(r.desc)]
    r.entries[id(r.desc)] = (*entry[:7], steps, entry[8])


@pytest.mark.parametrize(
    "bad", ["operand past the end", "negative operand", "too many pointers", "not an int", "plan dropped"]
)
def test_a_replay_launches_every_step_or_none(ext: Any, built: tuple[Any, Any, str], bad: str) -> None:
    """Three steps, the third one unusable: nothing launches (the caller then runs the call
    once through the full path; an in-place call launched in part and then again would not
    be the same call)."""
    _, fake, _ = built
    r = Replay(ext, fake)
    ref = weakref.ref(r.launch)
    good = ((0, 0), (1, 4), (2, 0))
    third: Any = {
        "operand past the end": ((0, 0), (3, 0), (2, 0)),
        "negative operand": ((0, 0), (-1, 0), (2, 0)),
        "too many pointers": ((0, 0), (1, 0), (2, 0), (2, 8)),
        "not an int": ((0, 0), (1, 0.5), (2, 0)),
        "plan dropped": good,
    }[bad]
    calls = ctypes.c_int.in_dll(fake, "calls")
    inputs, outputs = {"ATensor": r.a, "BTensor": r.b}, {"OutputTensor": r.y}
    _with_steps(r, ((ref, good), (ref, good), (ref, good)))
    before = calls.value
    assert r(inputs, outputs) is not None
    assert calls.value == before + 3
    third_ref: Any = ref
    if bad == "plan dropped":
        gone = type(r.launch)()
        third_ref = weakref.ref(gone)
        del gone
    _with_steps(r, ((ref, good), (ref, good), (third_ref, third)))
    before = calls.value
    assert r(inputs, outputs) is None
    assert calls.value == before  # not even the first two


def test_recording_keeps_the_launches_of_one_thread(ext: Any) -> None:
    launch = ext.Launch()
    launch._arm(1, (1, 1, 1), (32, 1, 1), 0, 2, (), ())
    log: list[Any] = []
    assert ext.start_recording(log) is True
    assert ext.start_recording([]) is False  # one recording at a time
    launch(10, 20)
    other = threading.Thread(target=lambda: launch(30, 40))
    other.start()
    other.join()
    launch(50, 60, stream=9)
    ext.stop_recording(log)
    launch(70, 80)
    assert log == [(launch, (10, 20), False), (launch, (50, 60), True)]


# -- the pointer mapping of a recorded call ----------------------------------------------------


def test_extents_cover_negative_and_zero_strides() -> None:
    assert fl._extent((4, 8), (32, 4), 4) == (0, 128)
    assert fl._extent((4, 8), (32, -4), 4) == (-28, 100)
    assert fl._extent((4, 8), (0, 4), 4) == (0, 32)


# -- the fallback ----------------------------------------------------------------------------


def test_without_a_compiler_the_build_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(fl, "compiler", lambda: None)
    with pytest.raises(fl.BuildError, match="no C compiler"):
        fl.build(tmp_path)
    assert not list(tmp_path.iterdir())


def test_without_headers_the_build_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(fl, "compiler", lambda: ["cc"])
    monkeypatch.setattr(fl, "python_include", lambda: None)
    with pytest.raises(fl.BuildError, match=r"Python\.h"):
        fl.build(tmp_path)


def test_a_failing_compile_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if fl.compiler() is None or fl.python_include() is None:
        pytest.skip("no C compiler or Python headers here")
    broken = tmp_path / "broken.c"
    broken.write_text("this is not C\n")
    monkeypatch.setattr(fl, "SOURCE", broken)
    with pytest.raises(fl.BuildError, match="failed"):
        fl.build(tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".so"]  # no half-built file left


@pytest.mark.parametrize("reason", ["off", "no compiler"])
def test_the_fallback_reports_why_and_builds_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, reason: str
) -> None:
    monkeypatch.setattr(fl, "_STATE", [])
    monkeypatch.setenv("DMLOPS_CACHE_DIR", str(tmp_path))
    if reason == "off":
        monkeypatch.setenv("DMLOPS_FASTLAUNCH", "0")
    else:
        monkeypatch.setattr(fl, "compiler", lambda: None)
    assert fl.extension() is None
    state = fl.status()
    assert state["active"] is False
    assert ("DMLOPS_FASTLAUNCH=0" if reason == "off" else "no C compiler") in state["reason"]
    assert not (tmp_path / "fastlaunch").exists() or not list((tmp_path / "fastlaunch").glob("*.so"))


# -- on the GPU: the same bits through every path ---------------------------------------------


@pytest.fixture(params=backend_params("cuda"))
def gpu(request: pytest.FixtureRequest) -> Any:
    try:
        load_backend("cuda")
    except BackendUnavailableError as exc:
        pytest.skip(str(exc))
    import cupy

    return cupy


def _cases(cp: Any) -> list[tuple[str, Any, Any]]:
    """(name, desc, a function of a seed giving fresh inputs) for every operator the replay covers."""
    from dmlops.descs import desc_from_json
    from dmlops.descs.data_movement import GatherDesc, Slice1Desc
    from dmlops.descs.pooling import MaxPooling2Desc, MaxPoolingGradDesc
    from dmlops.descs.resampling import Resample2Desc, ResampleGrad1Desc
    from dmlops.tensor import TensorDesc

    def rand(seed: int, shape: tuple[int, ...]) -> Any:
        return cp.asarray(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))

    def ew(op: str, members: tuple[str, ...], **attrs: Any) -> Any:
        body: dict[str, Any] = {m: {"DataType": "FLOAT32", "Sizes": [1000]} for m in (*members, "OutputTensor")}
        body.update(attrs)
        return desc_from_json(op, body)

    one, two = ("InputTensor",), ("ATensor", "BTensor")
    cases: list[tuple[str, Any, Any]] = []
    for op, members, attrs in [
        ("ELEMENT_WISE_IDENTITY", one, {}),
        ("ELEMENT_WISE_ABS", one, {}),
        ("ELEMENT_WISE_EXP", one, {}),
        ("ACTIVATION_SIGMOID", one, {}),
        ("ACTIVATION_GELU", one, {}),
        ("ELEMENT_WISE_ADD", two, {}),
        ("ELEMENT_WISE_MULTIPLY", two, {}),
        ("ELEMENT_WISE_MAX", two, {}),
        ("ELEMENT_WISE_ADD1", two, {"FusedActivation": {"Type": "ACTIVATION_RELU"}}),
    ]:
        desc = ew(op, members, **attrs)
        cases.append((op, desc, lambda s, m=members: {k: rand(s + i, (1000,)) for i, k in enumerate(m)}))
    bcast = desc_from_json(
        "ELEMENT_WISE_ADD",
        {
            "ATensor": {"DataType": "FLOAT32", "Sizes": [10, 100]},
            "BTensor": {"DataType": "FLOAT32", "Sizes": [10, 100], "Strides": [0, 1]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [10, 100]},
        },
    )
    cases.append(
        (
            "broadcast ADD",
            bcast,
            lambda s: {"ATensor": rand(s, (10, 100)), "BTensor": cp.broadcast_to(rand(s + 1, (100,)), (10, 100))},
        )
    )
    soft = desc_from_json(
        "ACTIVATION_SOFTMAX1",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [4, 1000]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 1000]},
            "Axes": [1],
        },
    )
    cases.append(("SOFTMAX1", soft, lambda s: {"InputTensor": rand(s, (4, 1000))}))
    shape = (4, 8, 16, 16)
    cases.append(
        (
            "SLICE1",
            Slice1Desc(
                input_tensor=TensorDesc(data_type="FLOAT32", sizes=shape),
                output_tensor=TensorDesc(data_type="FLOAT32", sizes=(4, 8, 7, 16)),
                input_window_offsets=(0, 0, 1, 0),
                input_window_sizes=(4, 8, 14, 16),
                input_window_strides=(1, 1, -2, 1),
            ),
            lambda s: {"InputTensor": rand(s, shape)},
        )
    )
    cases.append(
        (
            "GATHER",
            GatherDesc(
                input_tensor=TensorDesc(data_type="FLOAT32", sizes=(64, 32)),
                indices_tensor=TensorDesc(data_type="INT32", sizes=(1, 50)),
                output_tensor=TensorDesc(data_type="FLOAT32", sizes=(50, 32)),
                axis=0,
                index_dimensions=1,
            ),
            lambda s: {
                "InputTensor": rand(s, (64, 32)),
                "IndicesTensor": cp.asarray(np.random.default_rng(s).integers(0, 64, (1, 50)).astype(np.int32)),
            },
        )
    )
    window = dict(strides=(2, 2), window_size=(3, 3), start_padding=(1, 1), end_padding=(0, 0), dilations=(1, 1))
    pooled = (4, 8, 8, 8)
    cases.append(
        (
            "MAX_POOLING2",
            MaxPooling2Desc(
                input_tensor=TensorDesc(data_type="FLOAT32", sizes=shape),
                output_tensor=TensorDesc(data_type="FLOAT32", sizes=pooled),
                output_indices_tensor=TensorDesc(data_type="UINT32", sizes=pooled),
                **window,
            ),
            lambda s: {"InputTensor": rand(s, shape)},
        )
    )
    cases.append(
        (
            "MAX_POOLING_GRAD",
            MaxPoolingGradDesc(
                input_tensor=TensorDesc(data_type="FLOAT32", sizes=shape),
                input_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=pooled),
                output_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=shape),
                **window,
            ),
            lambda s: {"InputTensor": rand(s, shape), "InputGradientTensor": rand(s + 1, pooled)},
        )
    )
    big = (4, 8, 32, 32)
    scales = dict(
        interpolation_mode="LINEAR",
        rounding_direction="DECREASING",
        scales=(1.0, 1.0, 2.0, 2.0),
        input_pixel_offsets=(0.5,) * 4,
        output_pixel_offsets=(-0.5,) * 4,
    )
    cases.append(
        (
            "RESAMPLE2",
            Resample2Desc(
                input_tensor=TensorDesc(data_type="FLOAT32", sizes=shape),
                output_tensor=TensorDesc(data_type="FLOAT32", sizes=big),
                **scales,
            ),
            lambda s: {"InputTensor": rand(s, shape)},
        )
    )
    cases.append(
        (
            "RESAMPLE_GRAD1",
            ResampleGrad1Desc(
                input_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=big),
                output_gradient_tensor=TensorDesc(data_type="FLOAT32", sizes=shape),
                **scales,
            ),
            lambda s: {"InputGradientTensor": rand(s, big)},
        )
    )
    return cases


def _fresh_outputs(cp: Any, desc: Any) -> dict[str, Any]:
    """Every output poisoned (NaN / all ones), so an unwritten element shows."""
    out = {}
    for member, t in desc.tensors("output").items():
        arr = cp.empty(t.sizes, dtype=t.dtype)
        arr.view(np.uint8).fill(0xFF)
        out[member] = arr
    return out


def _bits(arrays: dict[str, Any]) -> dict[str, bytes]:
    return {m: a.get().tobytes() for m, a in arrays.items()}


@pytest.fixture
def cuda_launch_path(gpu: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A switch between the compiled launch and CuPy's, each with empty plan and replay caches."""
    from dmlops.cuda import _runtime

    if fl.extension() is None:
        pytest.skip(f"the compiled launch path is not active here: {fl.status()['reason']}")

    def clear_plans() -> None:
        import gc

        for module in ("elementwise", "data_movement", "pooling", "resampling"):
            mod = __import__(f"dmlops.cuda.{module}", fromlist=["_"])
            for value in vars(mod).values():
                if type(value).__name__ == "PlanCache":
                    value.plans.clear()
        fl.clear()
        gc.collect()

    from dmlops import backends

    replay, recorders = backends._REPLAY, dict(backends._RECORDERS)
    compiled_class = _runtime._fast_launch_class()  # before any patch below hides it

    def use(compiled: bool) -> None:
        clear_plans()
        monkeypatch.setattr(_runtime, "_FAST_CLASS", [compiled_class if compiled else None])
        # CuPy's launch, as without the extension: no replay either
        monkeypatch.setattr(backends, "_REPLAY", replay if compiled else None)
        monkeypatch.setattr(backends, "_RECORDERS", recorders if compiled else {})

    yield use
    clear_plans()


def test_every_replayed_operator_gives_the_bits_of_cupys_launch(gpu: Any, cuda_launch_path: Any) -> None:
    cp = gpu
    for name, desc, make in _cases(cp):
        desc.validate()
        results = {}
        for compiled in (False, True):
            cuda_launch_path(compiled)
            got = []
            for seed in range(4):  # call 1: full path; 2: recorded; 3-4: replayed (compiled)
                out = _fresh_outputs(cp, desc)
                dmlops.execute(desc, make(seed), outputs=out, backend="cuda")
                got.append(_bits(out))
            replayed = id(desc) in fl._ENTRIES
            assert replayed is compiled, f"{name}: replay entry {replayed}"
            results[compiled] = got
        assert results[True] == results[False], name
        # and each call's own inputs: call 4 against the numpy reference's bits where exact
        expected = dmlops.execute(desc, {k: v.get() for k, v in make(3).items()}, backend="numpy")
        for member, want in expected.items():
            got_arr = np.frombuffer(results[True][3][member], dtype=np.asarray(want).dtype).reshape(np.shape(want))
            np.testing.assert_allclose(got_arr, want, rtol=2e-6, atol=1e-6, err_msg=name)


def test_a_replay_follows_new_arrays_views_and_missing_outputs(gpu: Any) -> None:
    cp = gpu
    if fl.extension() is None:
        pytest.skip("the compiled launch path is not active here")
    from dmlops.descs import desc_from_json

    desc = desc_from_json(
        "ELEMENT_WISE_ADD",
        {m: {"DataType": "FLOAT32", "Sizes": [7, 9]} for m in ("ATensor", "BTensor", "OutputTensor")},
    )
    desc.validate()
    for _ in range(6):
        a = cp.random.standard_normal((7, 9), dtype=cp.float32)
        b = cp.random.standard_normal((7, 9), dtype=cp.float32)
        y = dmlops.execute(desc, {"ATensor": a, "BTensor": b}, backend="cuda")["OutputTensor"]
        cp.testing.assert_array_equal(y, a + b)
    assert id(desc) in fl._ENTRIES
    # a transposed view: other strides, the full path (and a new entry), still right
    at = cp.random.standard_normal((9, 7), dtype=cp.float32).T
    for _ in range(3):
        y = dmlops.execute(desc, {"ATensor": at, "BTensor": b}, backend="cuda")["OutputTensor"]
        cp.testing.assert_array_equal(y, at + b)
    # in place (the output is A): never recorded, since pointers would map to two operands
    for _ in range(3):
        a2 = cp.random.standard_normal((7, 9), dtype=cp.float32)
        want = a2 + b
        dmlops.execute(desc, {"ATensor": a2, "BTensor": b}, outputs={"OutputTensor": a2}, backend="cuda")
        cp.testing.assert_array_equal(a2, want)
    # on another stream
    with cp.cuda.Stream(non_blocking=True) as side:
        for _ in range(3):
            y = dmlops.execute(desc, {"ATensor": a, "BTensor": b}, backend="cuda")["OutputTensor"]
        side.synchronize()
        cp.testing.assert_array_equal(y, a + b)


def test_strict_gather_is_never_replayed_and_still_raises(gpu: Any) -> None:
    cp = gpu
    from dmlops.descs.data_movement import GatherDesc
    from dmlops.errors import DataIndexError
    from dmlops.tensor import TensorDesc

    desc = GatherDesc(
        input_tensor=TensorDesc(data_type="FLOAT32", sizes=(8, 4)),
        indices_tensor=TensorDesc(data_type="INT32", sizes=(1, 3)),
        output_tensor=TensorDesc(data_type="FLOAT32", sizes=(3, 4)),
        axis=0,
        index_dimensions=1,
    )
    x = cp.arange(32, dtype=cp.float32).reshape(8, 4)
    good = cp.asarray([[1, 2, 3]], dtype=cp.int32)
    for _ in range(3):
        y = dmlops.execute(desc, {"InputTensor": x, "IndicesTensor": good}, backend="cuda", strict=True)
    cp.testing.assert_array_equal(y["OutputTensor"], x[1:4])
    entry = fl._ENTRIES.get(id(desc))
    assert entry is None or entry[3] is not True
    with pytest.raises(DataIndexError):
        dmlops.execute(
            desc,
            {"InputTensor": x, "IndicesTensor": cp.asarray([[1, 9, 3]], dtype=cp.int32)},
            backend="cuda",
            strict=True,
        )


def test_replays_from_several_threads_keep_their_own_arrays(gpu: Any) -> None:
    cp = gpu
    from dmlops.descs import desc_from_json

    desc = desc_from_json(
        "ELEMENT_WISE_MULTIPLY",
        {m: {"DataType": "FLOAT32", "Sizes": [4096]} for m in ("ATensor", "BTensor", "OutputTensor")},
    )
    desc.validate()
    errors: list[str] = []

    def work(seed: int) -> None:
        try:
            with cp.cuda.Device(0):
                for i in range(50):
                    a = cp.full(4096, seed + i, dtype=cp.float32)
                    b = cp.full(4096, 2, dtype=cp.float32)
                    y = dmlops.execute(desc, {"ATensor": a, "BTensor": b}, backend="cuda")["OutputTensor"]
                    if not bool((y == 2 * (seed + i)).all()):
                        errors.append(f"thread {seed} call {i}")
        except Exception as exc:  # reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=work, args=(100 * k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_call_whose_launches_went_unrecorded_is_never_replayed(
    gpu: Any, cuda_launch_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Launches through CuPy (not the extension) leave no record: such a call must not become an
    entry, which would replay as nothing."""
    from dmlops.cuda import _runtime

    cp = gpu
    cuda_launch_path(True)
    monkeypatch.setattr(_runtime, "_FAST_CLASS", [None])
    name, desc, make = _cases(cp)[5]  # ADD
    desc.validate()
    for seed in range(4):
        inputs = make(seed)
        out = dmlops.execute(desc, inputs, backend="cuda")["OutputTensor"]
        cp.testing.assert_array_equal(out, inputs["ATensor"] + inputs["BTensor"])
    assert id(desc) not in fl._ENTRIES, name
