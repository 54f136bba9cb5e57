"""``dmlops directml setup`` and ``dmlops directml status``.

Set-up, each step skipped when already done (a second run takes a few seconds):

1. the Debian packages (Wine, Xvfb, Mesa's Vulkan drivers, the mingw-w64 compiler);
2. DirectML.dll, from PyPI's ``onnxruntime-directml`` Windows wheel, into the cache;
3. the host program, compiled from the package's ``host/dml_host.c``;
4. the Wine prefix;
5. the vkd3d workaround, only on the Wine build it is known for (see :mod:`.wined3d`);
6. the self-test; ``setup.json`` is written only after it passed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ..errors import DmlError
from . import stack, wined3d

APT_PACKAGES = ("wine64", "xvfb", "xauth", "mesa-vulkan-drivers", "gcc-mingw-w64-x86-64")
WHEEL = "onnxruntime-directml"
WHEEL_VERSION = "1.24.4"
"""Its DirectML.dll is 1.15.4; ``$DMLOPS_DIRECTML_WHEEL_VERSION`` picks another."""
DLL_MEMBER = "onnxruntime/capi/DirectML.dll"
MINGW_GCC = "x86_64-w64-mingw32-gcc"


class SetupError(DmlError, RuntimeError):
    """A set-up step failed; the message says which and what to do."""


def add_subparser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``directml {setup,status}`` to the ``dmlops`` command's subparsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "directml", help="set up or inspect the directml backend (the real DirectML.dll under Wine)"
    )
    sub = parser.add_subparsers(dest="directml_command", metavar="{setup,status}", required=True)
    sub.add_parser("setup", help="install and prepare everything the directml backend needs, then self-test")
    sub.add_parser("status", help="say whether the directml backend is available, and why not")
    parser.set_defaults(directml_handler=handle)
    return parser


def handle(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``dmlops directml setup|status``; the exit status."""
    if args.directml_command == "setup":
        return setup(out)
    return status(out)


def status(out: TextIO) -> int:
    """Print the cache folder, what set-up recorded, and availability."""
    from . import availability

    print(f"cache folder: {stack.home()}", file=out)
    state = stack.read_state()
    if state is not None:
        for key in ("directml_wheel", "wine", "mesa", "workaround", "max_feature_level", "unsupported_data_types"):
            if key in state:
                print(f"{key}: {state[key]}", file=out)
    reason = availability()
    print("directml: available" if reason is None else f"directml: not available: {reason}", file=out)
    return 0 if reason is None else 1


def setup(out: TextIO) -> int:
    """Every set-up step in order; prints one line per step."""
    began = time.monotonic()
    p = stack.paths()
    p.root.mkdir(parents=True, exist_ok=True)
    steps: list[tuple[str, Callable[[stack.Paths], str]]] = [
        ("packages", _packages),
        ("DirectML.dll", _directml_dll),
        ("host program", _host_program),
        ("Wine prefix", _wine_prefix),
        ("vkd3d workaround", _workaround),
        ("self-test", _self_test),
    ]
    try:
        for name, step in steps:
            t0 = time.monotonic()
            result = step(p)
            print(f"{name}: {result} ({time.monotonic() - t0:.1f} s)", file=out, flush=True)
    except SetupError as exc:
        print(f"dmlops directml setup: {exc}", file=out, flush=True)
        return 1
    print(f"directml backend ready in {p.root} ({time.monotonic() - began:.1f} s)", file=out)
    return 0


def _run(cmd: list[str], what: str, *, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SetupError(f"{what}: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-1500:]
        raise SetupError(f"{what} failed (exit {done.returncode}): {tail}")
    return done.stdout


def _missing_packages() -> list[str]:
    missing = []
    for package in APT_PACKAGES:
        query = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, check=False
        )
        if "install ok installed" not in query.stdout:
            missing.append(package)
    return missing


def _packages(p: stack.Paths) -> str:
    if shutil.which("dpkg-query") is None or shutil.which("apt-get") is None:
        raise SetupError(
            "this set-up needs a Debian-like system (apt-get); install Wine (64-bit), Xvfb, Mesa's Vulkan "
            f"drivers and mingw-w64 ({MINGW_GCC}) by hand"
        )
    missing = _missing_packages()
    if not missing:
        return "already installed"
    command = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
    if os.geteuid() != 0:
        raise SetupError(f"missing Debian packages; run as root: apt-get update && {' '.join(command)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _run(["apt-get", "update", "-q"], "apt-get update", env=env)
    _run(command, "apt-get install", env=env)
    return f"installed {' '.join(missing)}"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _wheel_version() -> str:
    return os.environ.get("DMLOPS_DIRECTML_WHEEL_VERSION", WHEEL_VERSION)


def _directml_dll(p: stack.Paths) -> str:
    version = _wheel_version()
    marker = p.root / "DirectML.dll.source"
    wanted = f"{WHEEL}=={version}"
    if p.dll.exists() and marker.exists() and marker.read_text().split("\n")[0] == wanted:
        return f"already extracted from {wanted}"
    with tempfile.TemporaryDirectory(prefix="dmlops-wheel-") as tmp:
        _run(
            [
                sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                "--platform", "win_amd64", "--python-version", "3.12", "-d", tmp, wanted,
            ],
            f"pip download {wanted}",
        )  # fmt: skip
        wheels = list(Path(tmp).glob("*.whl"))
        if len(wheels) != 1:
            raise SetupError(f"pip download {wanted} gave {len(wheels)} wheels")
        with zipfile.ZipFile(wheels[0]) as wheel:
            try:
                data = wheel.read(DLL_MEMBER)
            except KeyError:
                raise SetupError(f"{wheels[0].name} has no {DLL_MEMBER}") from None
    partial = p.dll.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(p.dll)
    marker.write_text(f"{wanted}\n{hashlib.sha256(data).hexdigest()}\n")
    return f"extracted from {wanted} ({len(data) / 1e6:.1f} MB)"


def _host_program(p: stack.Paths) -> str:
    digest = stack.source_digest()
    stamp = p.root / "dml_host.exe.source"
    if p.exe.exists() and stamp.exists() and stamp.read_text().strip() == digest:
        return "already built"
    if shutil.which(MINGW_GCC) is None:
        raise SetupError(f"{MINGW_GCC} not found (Debian package gcc-mingw-w64-x86-64)")
    partial = p.root / "dml_host.part.exe"
    _run(
        [MINGW_GCC, "-O2", "-Wall", "-o", str(partial), str(stack.host_source()), "-ld3d12"],
        "compiling the host program",
    )
    partial.replace(p.exe)
    stamp.write_text(digest + "\n")
    return f"built {p.exe.name}"


def _wine(p: stack.Paths) -> str:
    wine = stack.wine_binary()
    if wine is None:
        raise SetupError("Wine's 64-bit loader not found (Debian package wine64)")
    return wine


def _wine_prefix(p: stack.Paths) -> str:
    if (p.prefix / "system.reg").exists():
        return "already created"
    from .host import _Display

    display = _Display()
    try:
        env = stack.wine_env(p, display=display.get())
        _run([_wine(p), "wineboot", "-i"], "wineboot -i (creating the Wine prefix)", env=env, timeout=300)
        wineserver = Path(_wine(p)).with_name("wineserver")
        if wineserver.exists():  # wait until the prefix is written out
            _run([str(wineserver), "-w"], "wineserver -w", env=env, timeout=120)
    finally:
        display.stop()
    if not (p.prefix / "system.reg").exists():
        raise SetupError(f"wineboot did not create the prefix {p.prefix}")
    return f"created {p.prefix}"


def _workaround(p: stack.Paths) -> str:
    version = stack.wine_version(_wine(p))
    try:
        return wined3d.apply(version, p.wined3d)
    except wined3d.WorkaroundError as exc:
        raise SetupError(str(exc)) from None


def _mesa_version() -> str:
    query = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", "mesa-vulkan-drivers"], capture_output=True, text=True, check=False
    )
    return query.stdout.strip() or "unknown"


def _self_test(p: stack.Paths) -> str:
    from . import _SESSION, info
    from .host import MANAGER
    from .selftest import run_self_test

    MANAGER.shutdown()  # a host started before this set-up may be an older build
    _SESSION.checked, _SESSION.verdict, _SESSION.info = False, None, None
    try:
        failure = run_self_test()
        support = info()
    except DmlError as exc:
        failure = str(exc)
    finally:
        MANAGER.shutdown()
    if failure is not None:
        raise SetupError(
            f"the self-test failed, so the backend stays unavailable: {failure}. On this stack wrong numbers "
            "come with S_OK: see docs/directml.md for the known walls (no display, vkd3d's descriptor heaps)."
        )
    from ..enums import FeatureLevel, TensorDataType

    unsupported = [TensorDataType(i).name for i, ok in enumerate(support.data_type_supported) if i and not ok]
    state: dict[str, Any] = {
        "version": stack.STATE_VERSION,
        "host_source": stack.source_digest(),
        "directml_wheel": f"{WHEEL}=={_wheel_version()}",
        "directml_dll_sha256": _sha256(p.dll),
        "wine": stack.wine_version(_wine(p)),
        "mesa": _mesa_version(),
        "workaround": wined3d.describe(p.wined3d),
        "max_feature_level": str(FeatureLevel(support.max_feature_level)),
        "unsupported_data_types": unsupported,
        "self_test": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    p.state.write_text(json.dumps(state, indent=2) + "\n")
    return f"passed (max {state['max_feature_level']}; unsupported: {', '.join(unsupported) or 'none'})"


def main(argv: list[str] | None = None) -> int:
    """``python -m dmlops.directml.setup [setup|status]``, usable before the CLI wires it."""
    parser = argparse.ArgumentParser(prog="python -m dmlops.directml.setup")
    add_subparser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["directml", *(argv if argv is not None else sys.argv[1:] or ["status"])])
    return handle(args, sys.stdout)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
