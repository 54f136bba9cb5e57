"""NVRTC compilation of the kernel sources, with an on-disk cache of the binaries.

dmlops compiles with NVRTC itself rather than through ``cupy.RawModule``: CuPy appends
``-ftz=true`` to every NVRTC compile (``cupy.cuda.compiler``), and the last option wins.
Flush-to-zero turns float32 subnormal inputs and results into zero, comparisons included,
so a max pool could not tell 1e-40 from 2e-40 and an interpolation of subnormals would
come out as 0, where the reference (NumPy) keeps them. ``COMPILE_OPTIONS`` say
``--ftz=false`` explicitly; the binaries are loaded through CuPy's ``Module``.

Binaries are cached under ``$DMLOPS_CACHE_DIR`` (default ``$XDG_CACHE_HOME/dmlops`` or
``~/.cache/dmlops``), keyed by the source text, the name expression, the options, the
target architecture and the NVRTC version. An unwritable cache only costs recompiling.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

COMPILE_OPTIONS = ("--std=c++17", "--ftz=false", "--prec-div=true", "--prec-sqrt=true")
"""NVRTC options: IEEE float32 arithmetic (subnormals kept, correctly rounded division and
square root; no fast-math), so coordinates and interpolation follow IEEE rounding."""

_CACHE_FORMAT = "1"


def nvrtc_module() -> Any:
    """CuPy's NVRTC bindings (ImportError where CuPy or the NVRTC library is missing)."""
    from cupy_backends.cuda.libs import nvrtc

    return nvrtc


def compile_source(text: str, filename: str, names: list[str], arch: str) -> tuple[bytes, list[str]]:
    """Compile ``text`` with COMPILE_OPTIONS for ``arch``; the binary and the lowered names.

    ``arch`` ``"sm_90"`` gives a CUBIN, ``"compute_90"`` PTX. Raises RuntimeError with the
    compiler log when NVRTC rejects the source.
    """
    nvrtc = nvrtc_module()
    prog = nvrtc.createProgram(text, filename, [], [])
    try:
        for name in names:
            nvrtc.addNameExpression(prog, name)
        try:
            nvrtc.compileProgram(prog, [*COMPILE_OPTIONS, f"--gpu-architecture={arch}"])
        except nvrtc.NVRTCError as exc:
            raise RuntimeError(f"NVRTC could not compile {filename} ({exc}):\n{nvrtc.getProgramLog(prog)}") from None
        if arch.startswith("sm_"):
            binary = bytes(nvrtc.getCUBIN(prog))
        else:
            ptx = nvrtc.getPTX(prog)
            binary = (ptx.encode() if isinstance(ptx, str) else bytes(ptx)).rstrip(b"\0") + b"\0"
        lowered = [nvrtc.getLoweredName(prog, name) for name in names]
    finally:
        nvrtc.destroyProgram(prog)
    return binary, lowered


def cache_dir() -> Path:
    """Where compiled kernels are kept (see the module docstring)."""
    explicit = os.environ.get("DMLOPS_CACHE_DIR")
    if explicit:
        return Path(explicit) / "kernels"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dmlops" / "kernels"


def cached_binary(text: str, filename: str, name: str, arch: str) -> tuple[bytes, str]:
    """The binary and lowered name of kernel ``name`` of ``text``: from the cache, or compiled and stored."""
    version = ".".join(map(str, nvrtc_module().getVersion()))
    key = hashlib.sha256(
        "\0".join((_CACHE_FORMAT, version, arch, " ".join(COMPILE_OPTIONS), filename, name, text)).encode()
    ).hexdigest()
    path = cache_dir() / f"{key}.bin"
    try:
        lowered, _, binary = path.read_bytes().partition(b"\n")
        if lowered and binary:
            return binary, lowered.decode()
    except OSError:
        pass
    binary, (lowered_name,) = compile_source(text, filename, [name], arch)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:
            tmp.write(lowered_name.encode() + b"\n" + binary)
        os.replace(tmp.name, path)  # atomic: concurrent processes never read half a file
    except OSError:
        pass
    return binary, lowered_name


def target_arch(compute_capability: str) -> str:
    """NVRTC's target for a device of ``compute_capability`` ("90").

    The device's own ``sm_XY`` (a CUBIN) where NVRTC knows it, else PTX for the newest
    architecture NVRTC knows below it (the driver compiles that).
    """
    cc = int(compute_capability)
    supported = [int(a) for a in nvrtc_module().getSupportedArchs()]
    if cc in supported:
        return f"sm_{cc}"
    older = [a for a in supported if a <= cc]
    return f"compute_{max(older) if older else min(supported)}"
