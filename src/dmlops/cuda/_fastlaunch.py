"""The compiled launch path: a small C extension, built on first use, with CuPy's launch as the fallback.

Why: a tiny call's host time is what issue 20 compares with PyTorch's, and CuPy's Cython
``driver.launchKernel`` plus dmlops's Python around it cost more than torch's whole call
(docs/performance.md, runs 46-52). ``_fastlaunch.c`` holds two things:

* ``Launch``: a kernel launch whose arguments are packed once; a call stores its pointers
  and calls the driver's ``cuLaunchKernel`` (resolved with ``dlopen``/``dlsym`` from the
  libcuda CuPy loaded) on CuPy's current stream. :class:`~dmlops.cuda._runtime.PackedLaunch`
  is one when the extension loads, so every cuda operator launches through it.
* ``replay``: :func:`dmlops.execute` asks it first. A repeat call that an earlier call
  recorded (below) is checked and launched in C; anything that differs returns None and
  the call takes the full path.

Building: the C source ships in the package; the first process that needs it compiles it
with the system C compiler and Python's headers into the per-user cache
(``$DMLOPS_CACHE_DIR/fastlaunch`` or ``~/.cache/dmlops/fastlaunch``, beside the kernel
cache, made with mode 0o700), keyed by the source, the Python build, the machine, the C
library and the compiler; later processes load the cached file. A cached file is loaded
only when it and its folder belong to this user and nobody else may write them (else the
process builds into a private temporary folder of its own); one that fails to import is
deleted and built again, once. Without CuPy or ``libcuda`` nothing is compiled. Without
a compiler, headers, ``libcuda`` or its ``cuLaunchKernel``, or with
``DMLOPS_FASTLAUNCH=0``, dmlops launches through CuPy as before: :func:`status` says
which and why. Nothing else changes: results are bit-identical (the same kernels,
arguments and stream).

Recording: the second call of a desc (the first one that took ``backends._repeat_call``'s
path, so the full validation ran before) runs with the launches of its thread recorded.
It becomes a replay entry only when (a) its operator's implementation is one of
:data:`REPLAYABLE`, whose only device work is ``PackedLaunch`` launches, (b) the call is
not ``strict`` for an operator with data checks (``check_data``: a replay would skip
them), (c) every array is a CuPy array of its tensor's shape and dtype on the current
device (the backend's all-CuPy path), (d) every launch went through the extension (a
``PackedLaunch`` launched through CuPy leaves no record, and is counted per thread) and
used CuPy's current stream, and (e) every pointer it launched with lies inside exactly
one operand's memory: a per-call temporary (a flag, a staging buffer, an argmax array)
or operands that overlap (in place) leave the call unrecorded. A failure while building
the entry only leaves the call unrecorded. A desc whose recorded calls were refused
:data:`REFUSALS` times in a row is not recorded for its next :data:`BACKOFF` calls.

A replay re-launches the same launch objects (weak references: a plan dropped from its
cache drops the entry) with each pointer at the same byte offset from its operand, after
checking the tuning globals the implementation reads (the guards). It checks each operand
on its own, not whether two overlap: an in-place call (an output that is an input) of a
desc with an entry is replayed, with the launches the full path would make for it, since
no REPLAYABLE implementation chooses its launches by overlap (run_elementwise's driver copy
for large IDENTITY calls, which does, is never recorded).
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).with_name("_fastlaunch.c")
MODULE = "_dmlops_fastlaunch"
LIBCUDA = "libcuda.so.1"
BUILD_TIMEOUT_S = 120
CFLAGS = ("-O2", "-shared", "-fPIC", "-std=c99", "-fvisibility=hidden")

REPLAYABLE: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "dmlops.cuda.elementwise.run_elementwise": (
        (
            "dmlops.cuda.elementwise",
            (
                "CONTIG_SHAPE",
                "CONTIG_HINTS",
                "STREAM_MIN_BYTES",
                "CONTIG_RESIDENT",
                "RESIDENT_FUNCTORS",
                "STRIDED_VECTORS",
                "ROWS_2D",
                "HALF_PAIRS",
                "DRIVER_COPY_MIN_BYTES",
            ),
        ),
    ),
    "dmlops.cuda.elementwise.run_rows": (("dmlops.cuda.elementwise", ("ROW_WARP_MAX", "ROW_WIDE_ROWS", "ROW_CHUNKS")),),
    "dmlops.cuda.data_movement.run_slice1": (),
    "dmlops.cuda.data_movement.run_gather": (),
    "dmlops.cuda.pooling.run_max_pooling2": (),
    "dmlops.cuda.pooling.run_max_pooling_grad": (("dmlops.cuda.pooling", ("VARIANT",)),),
    "dmlops.cuda.resampling.run_resample2": (),
    "dmlops.cuda.resampling.run_resample_grad1": (("dmlops.cuda.resampling", ("USE_X2",)),),
}
"""Implementations (module.function) whose only device work is PackedLaunch launches, each
with the module globals (tuning switches) it reads per call or in its plan choice: a
replay checks them by identity. Per-call temporaries (a rebuilt flat input,
MAX_POOLING_GRAD's two-pass argmax array, a copied row) fail the pointer mapping, so those
calls are never recorded; strict calls of an operator with data checks (GATHER) are not
recorded either (module notes). An implementation that also runs CuPy operations on its
operands (a fill, a copy) must not be listed."""

MAX_OPERANDS, MAX_STEPS, MAX_POINTERS = 16, 8, 64
"""The C side's limits (``_fastlaunch.c``); larger calls are not recorded."""
MAX_ENTRIES = 1024
REFUSALS, BACKOFF = 3, 64
"""A desc whose recorded calls gave no entry REFUSALS times in a row skips the recording
(its cost, about as much as the call) for its next BACKOFF calls, then tries again."""

_LOCK = threading.Lock()
_STATE: list[Any] = []  # [module or None, reason or None, stream through C]
_ENTRIES: dict[int, tuple[Any, ...]] = {}
_REFUSED: dict[int, list[Any]] = {}  # id(desc) -> [desc, refusals in a row, calls left to skip]
_PRIVATE: list[Path] = []  # this process's own build folder, when the cache is not safe to use


def enabled() -> bool:
    """False when ``DMLOPS_FASTLAUNCH=0`` turns the compiled path off."""
    return os.environ.get("DMLOPS_FASTLAUNCH", "1").strip().lower() not in ("0", "false", "no", "off")


def cache_dir() -> Path:
    """Where the built extension is kept (beside the kernel cache, see ``_compile.cache_dir``)."""
    from ._compile import cache_dir as kernel_cache

    return kernel_cache().parent / "fastlaunch"


def compiler() -> list[str] | None:
    """The C compiler command (``$CC``, Python's own, ``cc`` or ``gcc``), or None."""
    for candidate in (os.environ.get("CC"), sysconfig.get_config_var("CC"), "cc", "gcc"):
        if not candidate:
            continue
        try:
            words = shlex.split(str(candidate))
        except ValueError:  # unbalanced quotes
            continue
        if words and shutil.which(words[0]):
            return words
    return None


def python_include() -> Path | None:
    """Python's header directory, if it holds ``Python.h``."""
    for key in ("include", "platinclude"):
        path = sysconfig.get_paths().get(key)
        if path and (Path(path) / "Python.h").is_file():
            return Path(path)
    return None


class BuildError(RuntimeError):
    """The extension could not be built here (the message says why)."""


def _private(path: Path, kind: int) -> bool:
    """Whether ``path`` is a ``kind`` (``stat.S_IFDIR``/``S_IFREG``) of this user that no one else may write."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _private_folder() -> Path:
    """A temporary folder of this process's own (mode 0o700), removed at exit."""
    if not _PRIVATE:
        folder = Path(tempfile.mkdtemp(prefix="dmlops-fastlaunch-"))
        atexit.register(shutil.rmtree, folder, True)
        _PRIVATE.append(folder)
    return _PRIVATE[0]


def build(directory: Path | None = None) -> Path:
    """Compile ``_fastlaunch.c`` (once per source, Python build, machine, C library and compiler); return the file.

    Raises :class:`BuildError` when there is no compiler, no Python headers, or the
    compile fails. A concurrent build in another process is harmless (atomic rename).
    The folder (default :func:`cache_dir`) is made with mode 0o700; where it or a cached
    file there belongs to another user or others may write it, the file is built into a
    private temporary folder instead (module notes).
    """
    cc = compiler()
    if cc is None:
        raise BuildError("no C compiler found ($CC, cc, gcc)")
    include = python_include()
    if include is None:
        raise BuildError("Python's headers (Python.h) are not installed")
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    text = SOURCE.read_bytes()
    facts = [text, sys.version, suffix, platform.machine(), "-".join(platform.libc_ver()), " ".join(cc + list(CFLAGS))]
    key = hashlib.sha256(b"\0".join(f if isinstance(f, bytes) else f.encode() for f in facts)).hexdigest()[:20]
    name = f"{MODULE}-{key}{suffix}"
    folder = directory if directory is not None else cache_dir()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        folder = _private_folder()
    if not _private(folder, stat.S_IFDIR):
        folder = _private_folder()
    target = folder / name
    if target.exists():
        if _private(target, stat.S_IFREG):
            return target
        folder = _private_folder()  # someone else's file, or writable by others: never loaded
        target = folder / name
        if target.is_file():
            return target
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=suffix)
        os.close(fd)
    except OSError as exc:
        raise BuildError(f"cannot write {folder} ({exc})") from None
    command = [*cc, *CFLAGS, "-I", str(include), str(SOURCE), "-o", tmp, "-ldl"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        if done.returncode != 0:
            raise BuildError(f"{' '.join(command)} failed:\n{done.stderr.strip()[-2000:]}")
        os.replace(tmp, target)  # atomic: another process never loads half a file
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"{cc[0]} could not run ({exc})") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def load(path: Path) -> Any:
    """Import the built extension from ``path``."""
    loader = importlib.machinery.ExtensionFileLoader(MODULE, str(path))
    spec = importlib.util.spec_from_file_location(MODULE, str(path), loader=loader)
    if spec is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _stream_source(ext: Any) -> bool:
    """Hand the extension CuPy's current-stream query; True when it reads it through C.

    CuPy's Cython modules export their C functions as capsules named by signature; the
    capsule is used only if its name is the signature the C side calls and it agrees with
    ``cupy.cuda.get_current_stream()`` on the null stream and on a stream of its own.
    Otherwise the extension calls the Python query (a little slower, the same answer).
    """
    from ._runtime import cupy_module

    cp = cupy_module()
    from cupy_backends.cuda.api import driver

    def python_stream() -> int:
        return int(cp.cuda.get_current_stream().ptr)

    runtime = cp.cuda.runtime

    def ensure_context() -> None:
        runtime.setDevice(runtime.getDevice())

    candidates: list[Any] = []
    for name in ("cupy.cuda.stream", "cupy_backends.cuda.stream"):
        try:
            capi = getattr(importlib.import_module(name), "__pyx_capi__", {})
        except ImportError:
            continue
        capsule = capi.get("get_current_stream_ptr")
        if capsule is not None:
            candidates.append(capsule)
    for capsule in candidates:
        try:
            ext.init(LIBCUDA, capsule, ensure_context, driver.CUDADriverError)
        except TypeError:  # another signature
            continue
        try:
            ok = ext.current_stream() == python_stream()
            with cp.cuda.Stream(non_blocking=True) as side:
                ok = ok and ext.current_stream() == side.ptr == python_stream()
        except Exception:
            ok = False
        if ok:
            return True
    ext.init(LIBCUDA, python_stream, ensure_context, driver.CUDADriverError)
    return False


def _missing_prerequisite() -> str | None:
    """Why the extension could not be used here, from checks cheaper than a compile, or None."""
    if importlib.util.find_spec("cupy") is None:
        return "CuPy is not installed"
    try:
        ctypes.CDLL(LIBCUDA)
    except OSError as exc:
        return f"no CUDA driver ({exc})"
    return None


def _load_or_rebuild() -> Any:
    """Load the built extension; a cached file that fails to import is deleted and built again, once."""
    path = build()
    try:
        return load(path)
    except ImportError:
        try:
            path.unlink()
        except OSError:
            pass
        return load(build())


def extension() -> Any | None:
    """The loaded, initialised extension, or None (then :func:`status` says why)."""
    state = _STATE
    if state:
        return state[0]
    with _LOCK:
        if _STATE:
            return _STATE[0]
        module, reason, c_stream = None, None, False
        if not enabled():
            reason = "turned off (DMLOPS_FASTLAUNCH=0)"
        else:
            reason = _missing_prerequisite()  # before any compile
        if reason is None:
            try:
                module = _load_or_rebuild()
                c_stream = _stream_source(module)
                _enable_replay(module)
            except Exception as exc:  # no compiler, headers, symbol...: CuPy's launch instead
                module, reason = None, f"{type(exc).__name__}: {exc}"
        _STATE[:] = [module, reason, c_stream]
        return module


def status() -> dict[str, Any]:
    """Whether the compiled path is in use here: ``active``, ``reason`` (when not), ``c_stream``."""
    extension()
    module, reason, c_stream = _STATE
    return {"active": module is not None, "reason": reason, "c_stream": bool(c_stream)}


# -- recording and replay ------------------------------------------------------------------------


def _enable_replay(ext: Any) -> None:
    from .. import backends
    from ._runtime import _bind_hot_names

    ndarray, get_device_id = _bind_hot_names()
    ext.configure_replay(_ENTRIES, ndarray, get_device_id)
    backends.register_fast_path("dmlops.cuda", ext.replay, execute_recorded)


def clear() -> None:
    """Forget every replay entry and refusal (the next call of each desc takes the full path)."""
    _ENTRIES.clear()
    _REFUSED.clear()


def _qualified(impl: Any) -> str:
    return f"{getattr(impl, '__module__', '')}.{getattr(impl, '__qualname__', '')}"


def execute_recorded(
    module: Any,
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any] | None,
    backend: str,
    feature_level: Any,
    strict: bool,
    level: Any,
) -> dict[str, Any]:
    """``module.execute`` with this thread's launches recorded, remembered for replay when it qualifies."""
    from ._runtime import desc_info, unrecorded_launches

    ext = _STATE[0] if _STATE else None
    guards = REPLAYABLE.get(_qualified(desc_info(desc).impl)) if ext is not None else None
    refused = _REFUSED.get(id(desc))
    if refused is not None and refused[0] is desc and refused[2] > 0:
        refused[2] -= 1
        guards = None
    if guards is not None and strict and _has_data_checks(desc):
        guards = None  # a replay would skip the data checks strict mode asks for
    if ext is None or guards is None:
        result: dict[str, Any] = module.execute(desc, inputs, outputs, feature_level=level, strict=strict)
        return result
    log: list[Any] = []
    recording = ext.start_recording(log)
    unrecorded = unrecorded_launches()
    try:
        result = module.execute(desc, inputs, outputs, feature_level=level, strict=strict)
    finally:
        if recording:
            ext.stop_recording(log)
    if recording:
        entry = None
        if unrecorded_launches() == unrecorded:  # else some launch went through CuPy, unseen by the log
            try:
                entry = _entry(desc, inputs, outputs, result, backend, feature_level, strict, log, guards)
            except Exception:  # a failure to build the entry must not fail a call whose work is done
                entry = None
        _remember(desc, entry)
    return result


def _has_data_checks(desc: Any) -> bool:
    """Whether the desc's operator has strict-mode data checks (its own ``check_data``)."""
    from ..descs._base import OperatorDesc

    return type(desc).check_data is not OperatorDesc.check_data


def _remember(desc: Any, entry: tuple[Any, ...] | None) -> None:
    """Keep a recorded call's entry, or count its refusal (:data:`REFUSALS`, :data:`BACKOFF`)."""
    key = id(desc)
    if entry is not None:
        _REFUSED.pop(key, None)
        if len(_ENTRIES) >= MAX_ENTRIES:
            _ENTRIES.clear()
        _ENTRIES[key] = entry
        return
    refused = _REFUSED.get(key)
    if refused is None or refused[0] is not desc:
        if len(_REFUSED) >= MAX_ENTRIES:
            _REFUSED.clear()
        refused = _REFUSED[key] = [desc, 0, 0]  # holds the desc: its id is not reused meanwhile
    refused[1] += 1
    if refused[1] >= REFUSALS:
        refused[1], refused[2] = 0, BACKOFF


def _extent(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> tuple[int, int]:
    """Byte offsets ``[lo, hi)`` from element 0 that an array of these byte strides covers."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + itemsize


def _entry(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any] | None,
    result: Mapping[str, Any],
    backend: str,
    feature_level: Any,
    strict: bool,
    log: list[Any],
    guards: tuple[tuple[str, tuple[str, ...]], ...],
) -> tuple[Any, ...] | None:
    """The replay entry of a recorded call, or None when it does not qualify (module notes)."""
    from ._runtime import _bind_hot_names, desc_info

    ext = _STATE[0]
    ndarray, get_device_id = _bind_hot_names()
    device = int(get_device_id())
    info = desc_info(desc)
    if type(inputs) is not dict or (outputs is not None and type(outputs) is not dict):
        return None
    if type(result) is not dict or result.keys() != {m for m, _, _ in info.outputs}:
        return None
    operands: list[tuple[int, int, int]] = []  # (pointer, lo, hi) in bytes

    def spec(member: str, obj: Any, sizes: tuple[int, ...], dtype: Any) -> tuple[Any, ...] | None:
        if type(obj) is not ndarray or obj.shape != sizes or obj.dtype != dtype or obj.data.device_id != device:
            return None
        if obj.size == 0:
            return None
        ptr = int(obj.data.ptr)
        strides = tuple(obj.strides)
        lo, hi = _extent(obj.shape, strides, obj.itemsize)
        operands.append((ptr, ptr + lo, ptr + hi))
        return (member, tuple(obj.shape), obj.dtype, strides, ptr & 255)

    in_specs = []
    for member, sizes, dtype in info.inputs:
        if member not in inputs:
            return None
        s = spec(member, inputs[member], sizes, dtype)
        if s is None:
            return None
        in_specs.append(s)
    out_specs = []
    for member, sizes, dtype in info.outputs:
        given = outputs.get(member) if outputs else None
        if given is not None and result[member] is not given:
            return None
        s = spec(member, result[member], sizes, dtype)
        if s is None:
            return None
        out_specs.append(s)
    if not log or len(operands) > MAX_OPERANDS or len(log) > MAX_STEPS:
        return None  # no launch recorded: the work went some other way, which a replay would skip
    steps = []
    for launch, pointers, stream_given in log:
        if stream_given or not isinstance(launch, ext.Launch) or len(pointers) > MAX_POINTERS:
            return None
        if type(launch).__weakrefoffset__ == 0:  # a plain Launch: no weak reference to keep
            return None
        mapping = []
        for p in pointers:
            found = [i for i, (_, lo, hi) in enumerate(operands) if lo <= p < hi]
            if len(found) != 1:  # a temporary, or operands that overlap
                return None
            mapping.append((found[0], p - operands[found[0]][0]))
        steps.append((weakref.ref(launch), tuple(mapping)))
    checks: list[tuple[dict[str, Any], str, Any]] = []
    for module_name, names in guards:
        namespace = vars(sys.modules[module_name])
        checks.extend((namespace, name, namespace[name]) for name in names)
    return (
        desc,
        backend,
        feature_level,
        strict,
        device,
        tuple(in_specs),
        tuple(out_specs),
        tuple(steps),
        tuple(checks),
    )


__all__ = [
    "REPLAYABLE",
    "BuildError",
    "build",
    "cache_dir",
    "clear",
    "compiler",
    "enabled",
    "execute_recorded",
    "extension",
    "load",
    "python_include",
    "status",
]
