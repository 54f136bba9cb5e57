"""Set-up pieces that need no Wine: availability's reasons, the wined3d workaround's guards."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest

import dmlops.directml as backend
from dmlops.backends import backend_status
from dmlops.directml import setup, stack, wined3d


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DMLOPS_DIRECTML_HOME", str(tmp_path))
    monkeypatch.setattr(backend._SESSION, "checked", False)
    return tmp_path


def test_not_set_up_says_what_to_run(empty_home: Path) -> None:
    assert backend.availability() == "not set up: run `dmlops directml setup`"
    assert backend_status()["directml"] == "not set up: run `dmlops directml setup`"


def test_stale_host_says_what_to_run(empty_home: Path) -> None:
    p = stack.paths()
    for f in (p.dll, p.exe):
        f.write_bytes(b"x")
    p.prefix.mkdir()
    p.state.write_text(json.dumps({"version": stack.STATE_VERSION, "host_source": "old"}))
    if stack.wine_binary() is None:
        assert "Wine" in (backend.availability() or "")
    else:
        assert backend.availability() == "the host program is out of date with this dmlops: run `dmlops directml setup`"


def test_status_reports_the_reason(empty_home: Path) -> None:
    out = io.StringIO()
    assert setup.status(out) == 1
    assert "directml: not available: not set up" in out.getvalue()


def _fake_patch(tmp_path: Path, data: bytes) -> wined3d.Patch:
    original = tmp_path / "wined3d.dll"
    original.write_bytes(data)
    return wined3d.Patch(
        wine_version="wine-test",
        original=original,
        sha256=hashlib.sha256(data).hexdigest(),
        edits=((4, b"\x0f\x85", b"\x66\x90"), (0, b"Wine", b"dmlo")),
    )


def test_workaround_applies_only_where_it_fits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"Wine\x0f\x85rest"
    monkeypatch.setattr(wined3d, "KNOWN", (_fake_patch(tmp_path, data),))
    target = tmp_path / "out" / "wined3d.dll"
    target.parent.mkdir()
    assert wined3d.apply("wine-test", target).startswith("applied")
    assert target.read_bytes() == b"dmlo\x66\x90rest"
    assert wined3d.apply("wine-test", target).startswith("already applied")
    # Another Wine: nothing patched, a stale copy removed.
    assert "nothing patched" in wined3d.apply("wine-10.0", target)
    assert not target.exists()


def test_workaround_refuses_other_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    patch = _fake_patch(tmp_path, b"Wine\x0f\x85rest")
    patch.original.write_bytes(b"Wine\x0f\x84rest")  # same version, another build
    monkeypatch.setattr(wined3d, "KNOWN", (patch,))
    with pytest.raises(wined3d.WorkaroundError, match="refusing to patch"):
        wined3d.apply("wine-test", tmp_path / "target.dll")


def test_known_patch_offsets() -> None:
    (known,) = wined3d.KNOWN
    assert known.edits[0][0] == 0x1108CE
    assert all(len(old) == len(new) for _, old, new in known.edits)


def test_setup_subcommands_parse() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    setup.add_subparser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["directml", "status"])
    assert args.directml_command == "status" and args.directml_handler is setup.handle
    with pytest.raises(SystemExit):
        parser.parse_args(["directml"])


def test_host_source_is_packaged() -> None:
    assert stack.host_source().is_file()
    assert "CreateOperator" in stack.host_source().read_text()
