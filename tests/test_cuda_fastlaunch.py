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
from dmlops.cuda import _fastlaunch as fl

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
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.itemsize = self.dtype.itemsize


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


class Recorder:
    """``_entry`` and ``execute_recorded`` over FakeArray: ADD of (4, 8) FLOAT32 as the desc, an
    implementation (listed in REPLAYABLE for the test) that makes the launches it is given."""

    def __init__(self, ext: Any, fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        from dmlops.cuda import _runtime
        from dmlops.descs import desc_from_json

        self.ext, self.fake = ext, fake
        self.desc = desc_from_json(
            "ELEMENT_WISE_ADD",
            {m: {"DataType": "FLOAT32", "Sizes": [4, 8]} for m in ("ATensor", "BTensor", "OutputTensor")},
        )
        self.entries: dict[int, Any] = {}
        monkeypatch.setattr(_runtime, "_bind_hot_names", lambda: (FakeArray, lambda: 0))
        monkeypatch.setattr(fl, "_STATE", [ext, None, False])
        monkeypatch.setattr(fl, "_ENTRIES", self.entries)
        monkeypatch.setattr(fl, "_REFUSED", {})
        ext.configure_replay(self.entries, FakeArray, lambda: 0)

        class Sub(ext.Launch):  # type: ignore[name-defined,misc]
            pass

        self.launch = Sub()
        self.launch._arm(1, (1, 1, 1), (32, 1, 1), 0, 3, (), ())
        self.pointers: Any = None  # a function of (inputs, outputs) -> the launch's pointers
        self.executed = 0

        def impl() -> None:
            pass

        _runtime.desc_info(self.desc).impl = impl
        monkeypatch.setitem(fl.REPLAYABLE, fl._qualified(impl), ())
        self.module = self

    def execute(self, desc: Any, inputs: Any, outputs: Any, *, feature_level: Any, strict: bool) -> dict[str, Any]:
        self.executed += 1
        out = dict(outputs or {})
        out.setdefault("OutputTensor", FakeArray((4, 8)))
        self.launch(*self.pointers(inputs, out))
        return out

    def record(self, inputs: Any, outputs: Any = None, strict: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = fl.execute_recorded(self, self.desc, inputs, outputs, "cuda", None, strict, None)
        return result

    def replay(self, inputs: Any, outputs: Any = None) -> Any:
        return self.ext.replay(self.desc, inputs, outputs, "cuda", None, False)


def _ptr(a: FakeArray) -> int:
    return int(a.data.ptr)


def test_a_recorded_call_maps_each_pointer_to_its_operand_and_offset(
    ext: Any, built: tuple[Any, Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Negative strides (a view whose element 0 is not its lowest address) and pointers inside
    an operand: the replay finds the same offsets from the new arrays."""
    _, fake, _ = built
    rec = Recorder(ext, fake, monkeypatch)
    rev = (32, -4)  # each row reversed: element (i, 0) is the row's last address

    def arrays() -> tuple[FakeArray, FakeArray, FakeArray]:
        base = FakeArray.next_ptr
        FakeArray.next_ptr += 1 << 16
        return FakeArray((4, 8), ptr=base + 28, strides=rev), FakeArray((4, 8)), FakeArray((4, 8))

    # the launch reads A from its lowest address (28 bytes below element 0), B one row in
    rec.pointers = lambda i, o: (_ptr(i["ATensor"]) - 28, _ptr(i["BTensor"]) + 32, _ptr(o["OutputTensor"]) + 124)
    a, b, y = arrays()
    rec.record({"ATensor": a, "BTensor": b}, {"OutputTensor": y})
    steps = rec.entries[id(rec.desc)][7]
    assert [m for _, m in steps] == [((0, -28), (1, 32), (2, 124))]
    a2, b2, y2 = arrays()
    seen(fake, [8, 8, 8])
    calls = ctypes.c_int.in_dll(fake, "calls").value
    assert rec.replay({"ATensor": a2, "BTensor": b2}, {"OutputTensor": y2}) == {"OutputTensor": y2}
    assert ctypes.c_int.in_dll(fake, "calls").value == calls + 1
    assert args_seen(fake, [8, 8, 8]) == u64(_ptr(a2) - 28, _ptr(b2) + 32, _ptr(y2) + 124)


@pytest.mark.parametrize("case", ["temporary", "past the end", "in place", "plain Launch", "stream given"])
def test_a_recorded_call_that_cannot_be_mapped_is_no_entry(
    ext: Any, built: tuple[Any, Any, str], monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    _, fake, _ = built
    rec = Recorder(ext, fake, monkeypatch)
    a, b, y = FakeArray((4, 8)), FakeArray((4, 8)), FakeArray((4, 8))
    outputs = {"OutputTensor": y}
    temp = FakeArray((4, 8))
    if case == "temporary":
        rec.pointers = lambda i, o: (_ptr(i["ATensor"]), _ptr(temp), _ptr(o["OutputTensor"]))
    elif case == "past the end":
        rec.pointers = lambda i, o: (_ptr(i["ATensor"]), _ptr(i["BTensor"]) + 128, _ptr(o["OutputTensor"]))
    elif case == "in place":
        outputs = {"OutputTensor": a}
        rec.pointers = lambda i, o: (_ptr(i["ATensor"]), _ptr(i["BTensor"]), _ptr(o["OutputTensor"]))
    elif case == "plain Launch":  # no weak reference possible: the entry is refused, the call not failed
        plain = ext.Launch()
        plain._arm(1, (1, 1, 1), (32, 1, 1), 0, 3, (), ())
        rec.launch = plain
        rec.pointers = lambda i, o: (_ptr(i["ATensor"]), _ptr(i["BTensor"]), _ptr(o["OutputTensor"]))
    else:
        launch = rec.launch
        rec.pointers = lambda i, o: (_ptr(i["ATensor"]), _ptr(i["BTensor"]), _ptr(o["OutputTensor"]))
        rec.launch = lambda *p: launch(*p, stream=5)
    result = rec.record({"ATensor": a, "BTensor": b}, outputs)
    assert result["OutputTensor"] is outputs["OutputTensor"] and rec.executed == 1
    assert rec.entries == {}


def test_a_failure_while_building_the_entry_never_fails_the_call(
    ext: Any, built: tuple[Any, Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, fake, _ = built
    rec = Recorder(ext, fake, monkeypatch)
    from dmlops.cuda import _runtime

    name = fl._qualified(_runtime.desc_info(rec.desc).impl)
    monkeypatch.setitem(fl.REPLAYABLE, name, (("dmlops.no_such_module", ("SWITCH",)),))  # a renamed guard
    rec.pointers = lambda i, o: (_ptr(i["ATensor"]), _ptr(i["BTensor"]), _ptr(o["OutputTensor"]))
    y = FakeArray((4, 8))
    assert rec.record({"ATensor": FakeArray((4, 8)), "BTensor": FakeArray((4, 8))}, {"OutputTensor": y}) == {
        "OutputTensor": y
    }
    assert rec.entries == {} and rec.executed == 1


def test_strict_calls_of_operators_with_data_checks_are_not_recorded(
    ext: Any, built: tuple[Any, Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, fake, _ = built
    rec = Recorder(ext, fake, monkeypatch)
    rec.pointers = lambda i, o: (_ptr(i["ATensor"]), _ptr(i["BTensor"]), _ptr(o["OutputTensor"]))
    inputs = {"ATensor": FakeArray((4, 8)), "BTensor": FakeArray((4, 8))}
    rec.record(inputs, strict=True)  # ADD has no data checks: strict changes nothing
    assert id(rec.desc) in rec.entries and rec.entries[id(rec.desc)][3] is True
    rec.entries.clear()
    monkeypatch.setattr(type(rec.desc), "check_data", lambda self, inputs, level: None)
    rec.record(inputs, strict=True)
    assert rec.entries == {} and rec.executed == 2
    rec.record(inputs, strict=False)  # without strict the checks do not run anyway
    assert id(rec.desc) in rec.entries


def test_a_call_with_a_launch_through_cupy_is_not_recorded(
    ext: Any, built: tuple[Any, Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One launch recorded, another through PackedLaunch's CuPy path (counted per thread): a
    replay would make only the first, so no entry."""
    from dmlops.cuda import _runtime

    _, fake, _ = built
    rec = Recorder(ext, fake, monkeypatch)

    def pointers(i: Any, o: Any) -> tuple[int, ...]:
        _runtime._THREAD.unrecorded = _runtime.unrecorded_launches() + 1  # what PackedLaunch.__call__ counts
        return (_ptr(i["ATensor"]), _ptr(i["BTensor"]), _ptr(o["OutputTensor"]))

    rec.pointers = pointers
    rec.record({"ATensor": FakeArray((4, 8)), "BTensor": FakeArray((4, 8))})
    assert rec.entries == {} and rec.executed == 1


def test_repeated_refusals_pause_the_recording(
    ext: Any, built: tuple[Any, Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, fake, _ = built
    rec = Recorder(ext, fake, monkeypatch)
    tried: list[int] = []
    real_entry = fl._entry

    def counting(*args: Any) -> Any:
        tried.append(1)
        return real_entry(*args)

    monkeypatch.setattr(fl, "_entry", counting)
    a, b = FakeArray((4, 8)), FakeArray((4, 8))
    rec.pointers = lambda i, o: (_ptr(i["ATensor"]), _ptr(i["BTensor"]), _ptr(o["OutputTensor"]))
    for _ in range(fl.REFUSALS + fl.BACKOFF):  # in place: refused each time it is tried
        rec.record({"ATensor": a, "BTensor": b}, {"OutputTensor": a})
    assert len(tried) == fl.REFUSALS and rec.executed == fl.REFUSALS + fl.BACKOFF
    rec.record({"ATensor": a, "BTensor": b})  # the pause is over: tried, and it qualifies
    assert len(tried) == fl.REFUSALS + 1 and id(rec.desc) in rec.entries


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


@pytest.mark.parametrize("reason", ["off", "no compiler", "no CuPy", "no driver"])
def test_the_fallback_reports_why_and_builds_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, reason: str
) -> None:
    monkeypatch.setattr(fl, "_STATE", [])
    monkeypatch.setenv("DMLOPS_CACHE_DIR", str(tmp_path))
    compiled: list[int] = []

    def no_compiler() -> None:
        compiled.append(1)
        return None

    monkeypatch.setattr(fl, "compiler", no_compiler)
    expected = {"off": "DMLOPS_FASTLAUNCH=0", "no compiler": "no C compiler", "no CuPy": "CuPy", "no driver": "driver"}
    if reason == "off":
        monkeypatch.setenv("DMLOPS_FASTLAUNCH", "0")
    elif reason == "no compiler":
        monkeypatch.setattr(fl, "_missing_prerequisite", lambda: None)
    elif reason == "no CuPy":
        real = fl.importlib.util.find_spec
        monkeypatch.setattr(fl.importlib.util, "find_spec", lambda name: None if name == "cupy" else real(name))
    else:
        monkeypatch.setattr(fl, "LIBCUDA", "libdmlops-no-such-driver.so.1")
    assert fl.extension() is None
    state = fl.status()
    assert state["active"] is False
    assert expected[reason] in state["reason"]
    assert compiled == ([1] if reason == "no compiler" else [])  # the cheap checks come before any build
    assert not (tmp_path / "fastlaunch").exists() or not list((tmp_path / "fastlaunch").glob("*.so"))


# -- the build cache ---------------------------------------------------------------------------


@pytest.fixture
def can_build() -> None:
    if fl.compiler() is None or fl.python_include() is None:
        pytest.skip("no C compiler or Python headers here")


def test_the_cache_folder_is_private_and_a_cached_file_is_reused(can_build: None, tmp_path: Path) -> None:
    folder = tmp_path / "a" / "fastlaunch"
    path = fl.build(folder)
    assert path.parent == folder and (folder.stat().st_mode & 0o777) == 0o700
    stamp = path.stat().st_mtime_ns
    assert fl.build(folder) == path and path.stat().st_mtime_ns == stamp  # loaded as is, not rebuilt


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_cache_others_may_write_is_never_loaded(
    can_build: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    monkeypatch.setattr(fl, "_PRIVATE", [])
    folder = tmp_path / "fastlaunch"
    path = fl.build(folder)
    (path if what == "file" else folder).chmod(0o666 if what == "file" else 0o777)
    other = fl.build(folder)
    assert other.parent != folder and other.name == path.name
    assert (other.parent.stat().st_mode & 0o777) == 0o700
    assert fl.load(other).Launch  # built there, and loads


def test_the_cache_key_names_the_machine_and_c_library(
    can_build: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = fl.build(tmp_path)
    monkeypatch.setattr(fl.platform, "machine", lambda: "other-machine")
    second = fl.build(tmp_path)
    monkeypatch.setattr(fl.platform, "libc_ver", lambda: ("otherlibc", "9.9"))
    third = fl.build(tmp_path)
    assert len({first.name, second.name, third.name}) == 3


def test_a_cached_file_that_fails_to_import_is_built_again(
    can_build: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DMLOPS_CACHE_DIR", str(tmp_path))
    path = fl.build()
    assert path.parent == tmp_path / "fastlaunch"
    path.write_bytes(b"not a shared object")
    module = fl._load_or_rebuild()
    assert module.Launch and path.read_bytes()[:4] == b"\x7fELF"


def test_cc_is_split_like_a_shell_would(monkeypatch: pytest.MonkeyPatch) -> None:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler here")
    monkeypatch.setenv("CC", f"'{gcc}' -DNAME='a b'")
    assert fl.compiler() == [gcc, "-DNAME=a b"]


# -- on the GPU: the same bits through every path ---------------------------------------------


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

    def counted(*args: Any) -> Any:
        done = replay(*args)
        if done is not None:
            REPLAYED.append(args[0])
        return done

    def use(compiled: bool) -> None:
        clear_plans()
        monkeypatch.setattr(_runtime, "_FAST_CLASS", [compiled_class if compiled else None])
        # CuPy's launch, as without the extension: no replay either
        monkeypatch.setattr(backends, "_REPLAY", counted if compiled else None)
        monkeypatch.setattr(backends, "_RECORDERS", recorders if compiled else {})

    REPLAYED.clear()
    yield use
    clear_plans()


REPLAYED: list[Any] = []
"""The descs of the calls the replay ran (it returned a result), under ``cuda_launch_path``."""


def test_every_replayed_operator_gives_the_bits_of_cupys_launch(gpu: Any, cuda_launch_path: Any) -> None:
    cp = gpu
    for name, desc, make in _cases(cp):
        desc.validate()
        results = {}
        for compiled in (False, True):
            cuda_launch_path(compiled)
            got = []
            REPLAYED.clear()
            # compiled: call 1 is recorded (the CuPy-launch pass before already made the full
            # checks of this desc, so it takes the repeat-call path), calls 2-4 are replayed
            for seed in range(4):
                out = _fresh_outputs(cp, desc)
                dmlops.execute(desc, make(seed), outputs=out, backend="cuda")
                got.append(_bits(out))
            replayed = id(desc) in fl._ENTRIES
            assert replayed is compiled, f"{name}: replay entry {replayed}"
            # the replay itself gave calls 2-4 (not a full path behind a declined replay)
            assert len(REPLAYED) == (3 if compiled else 0), f"{name}: {len(REPLAYED)} replayed calls"
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
    # in place (the output is A): such a call is never recorded (its pointers map to two
    # operands), and it misses this desc's entry (made for the transposed A's strides)
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


def test_an_in_place_call_after_an_entry_is_replayed_once(
    gpu: Any, cuda_launch_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry recorded on separate arrays replays an in-place call (the output is the first
    input): the same bits as the full path, each element written once (ADD gives a + b, not a + 2b)."""
    from dmlops import backends

    cp = gpu
    cuda_launch_path(True)
    # the element-wise ones: each element read and written by the same thread, so in place
    # is well defined (a pooling or softmax kernel in place would race with itself)
    same_shape = [c for c in _cases(cp) if c[0].startswith(("ELEMENT_WISE", "ACTIVATION", "broadcast"))]
    assert len(same_shape) == 10
    for name, desc, make in same_shape:
        desc.validate()
        for seed in range(3):  # full path, recorded, replayed: an entry exists
            dmlops.execute(desc, make(seed), backend="cuda")
        assert id(desc) in fl._ENTRIES, name
        inputs = make(10)
        member = next(iter(desc.tensors("input")))
        start = inputs[member].copy()
        REPLAYED.clear()
        dmlops.execute(desc, inputs, outputs={"OutputTensor": inputs[member]}, backend="cuda")
        assert REPLAYED == [desc], name
        # the full path on the same values, the replay off
        again = {m: (start.copy() if m == member else v) for m, v in inputs.items()}
        with monkeypatch.context() as m:
            m.setattr(backends, "_REPLAY", None)
            dmlops.execute(desc, again, outputs={"OutputTensor": again[member]}, backend="cuda")
        assert inputs[member].get().tobytes() == again[member].get().tobytes(), name
        if name == "ELEMENT_WISE_ADD":
            cp.testing.assert_array_equal(inputs[member], start + inputs["BTensor"])


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


def test_every_replay_guard_names_a_module_global() -> None:
    """A guard names the tuning switches its implementation reads; a misspelt or stale name guards nothing."""
    import importlib

    for impl, guards in fl.REPLAYABLE.items():
        module_name, function = impl.rsplit(".", 1)
        assert hasattr(importlib.import_module(module_name), function), impl
        for guarded_module, names in guards:
            module = importlib.import_module(guarded_module)
            missing = [n for n in names if not hasattr(module, n)]
            assert not missing, f"{impl}: {guarded_module} has no {missing}"
