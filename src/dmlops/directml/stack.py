"""Where the directml stack lives on this machine, and what it is made of.

Everything the set-up produces goes into one cache folder, ``$DMLOPS_DIRECTML_HOME``
(default ``~/.cache/dmlops/directml``), never into the source tree::

    DirectML.dll      from PyPI's onnxruntime-directml Windows wheel
    dml_host.exe      built from host/dml_host.c
    wined3d.dll       patched copy (only on stacks that need the workaround)
    prefix/           the Wine prefix
    setup.json        what set-up did, written last, after the self-test passed
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATE_VERSION = 1
"""Bumped when set-up changes in a way that needs it to run again."""


def home() -> Path:
    """The cache folder of the directml stack."""
    env = os.environ.get("DMLOPS_DIRECTML_HOME")
    return Path(env) if env else Path.home() / ".cache" / "dmlops" / "directml"


def host_source() -> Path:
    """The host program's C source, shipped inside the package."""
    return Path(__file__).with_name("host") / "dml_host.c"


def source_digest() -> str:
    """SHA-256 of the host source: a changed source means the .exe must be rebuilt."""
    return hashlib.sha256(host_source().read_bytes()).hexdigest()


@dataclass(frozen=True)
class Paths:
    """The files of the stack inside the cache folder."""

    root: Path

    @property
    def dll(self) -> Path:
        """DirectML.dll."""
        return self.root / "DirectML.dll"

    @property
    def exe(self) -> Path:
        """The built host program."""
        return self.root / "dml_host.exe"

    @property
    def wined3d(self) -> Path:
        """The patched wined3d.dll, present only when the workaround applies."""
        return self.root / "wined3d.dll"

    @property
    def prefix(self) -> Path:
        """The Wine prefix."""
        return self.root / "prefix"

    @property
    def state(self) -> Path:
        """setup.json."""
        return self.root / "setup.json"


def paths() -> Paths:
    """The stack's files under the current cache folder."""
    return Paths(home())


def read_state() -> dict[str, Any] | None:
    """setup.json's content, or None when set-up has not completed."""
    try:
        state: dict[str, Any] = json.loads(paths().state.read_text())
    except (OSError, ValueError):
        return None
    return state if state.get("version") == STATE_VERSION else None


WINE_CANDIDATES = ("/usr/lib/wine/wine64", "wine64", "wine")
"""Debian's wine64 package installs the loader outside PATH."""


def wine_binary() -> str | None:
    """The Wine loader to run 64-bit programs with, or None."""
    for candidate in WINE_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    return None


def wine_version(wine: str) -> str:
    """``wine-8.0 (Debian 8.0~repack-4)``."""
    out = subprocess.run([wine, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return out.stdout.strip()


def wine_env(p: Paths, *, display: str | None) -> dict[str, str]:
    """The environment the host runs in."""
    env = dict(os.environ)
    env["WINEPREFIX"] = str(p.prefix)
    env["WINEDEBUG"] = "-all"
    env["VKD3D_DEBUG"] = "none"
    env["VKD3D_SHADER_DEBUG"] = "none"
    # winedbg disabled: an unhandled exception in DirectML (HeadCount 0 divides by zero in
    # CreateOperator) then ends the host at once, where Wine's debugger would keep it alive
    # until the request's deadline (300 s)
    overrides = "mscoree,mshtml=;winedbg.exe=d"
    if p.wined3d.exists():
        overrides += ";wined3d=n"  # the patched copy next to the .exe, loaded as native
    env["WINEDLLOVERRIDES"] = overrides
    if display is not None:
        env["DISPLAY"] = display
    return env
