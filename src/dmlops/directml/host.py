"""The host process: started under Wine once per Python process, restarted after a crash.

Wine's DXGI needs an X display even for compute, so a private Xvfb is started when
``DISPLAY`` is unset (``-displayfd`` picks a free display number). Every read has a
deadline, so a hung host is killed and reported instead of hanging the caller.
"""

from __future__ import annotations

import atexit
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from typing import IO

from ..errors import DirectMLError
from . import protocol, stack

START_TIMEOUT_S = 120.0
"""Wine's first start in a fresh prefix can take a while."""


def request_timeout() -> float:
    """Seconds one request may take (``$DMLOPS_DIRECTML_TIMEOUT``, default 300)."""
    return float(os.environ.get("DMLOPS_DIRECTML_TIMEOUT", "300"))


class HostCrashed(DirectMLError):
    """The host process exited or stopped answering."""


class _Display:
    """A private Xvfb, started on first need."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.name: str | None = None

    def get(self) -> str | None:
        """The display to use: $DISPLAY, else a private Xvfb's."""
        if os.environ.get("DISPLAY"):
            return None  # inherited
        if self.process is not None and self.process.poll() is None:
            return self.name
        xvfb = shutil.which("Xvfb")
        if xvfb is None:
            raise DirectMLError("Xvfb is not installed and DISPLAY is unset: run `dmlops directml setup`")
        read_fd, write_fd = os.pipe()
        self.process = subprocess.Popen(
            [xvfb, "-displayfd", str(write_fd), "-screen", "0", "640x480x24", "-nolisten", "tcp"],
            pass_fds=(write_fd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        os.close(write_fd)
        try:
            number = _read_line(read_fd, time.monotonic() + 30)
        finally:
            os.close(read_fd)
        if not number.strip().isdigit():
            self.stop()
            raise DirectMLError("Xvfb did not report a display number")
        self.name = f":{number.strip()}"
        return self.name

    def stop(self) -> None:
        if self.process is not None:
            _kill(self.process)
            self.process = None


def _read_line(fd: int, deadline: float) -> str:
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 64)
        if not chunk:
            break
        data += chunk
    return data.decode("ascii", "replace")


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except OSError:
        process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            process.kill()
        process.wait(timeout=5)


class Host:
    """One running dml_host.exe and the pipes to it."""

    def __init__(self, display: _Display) -> None:
        p = stack.paths()
        wine = stack.wine_binary()
        if wine is None:
            raise DirectMLError("Wine is not installed: run `dmlops directml setup`")
        self.log: IO[bytes] = tempfile.TemporaryFile(prefix="dmlops-directml-host-")
        self.process = subprocess.Popen(
            [wine, str(p.exe)],
            cwd=p.root,
            env=stack.wine_env(p, display=display.get()),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            start_new_session=True,
            bufsize=0,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin
        self._out = self.process.stdout.fileno()
        status, payload = self._read_reply(time.monotonic() + START_TIMEOUT_S)
        if status == protocol.STATUS_CALL_FAILED:
            call, hresult = protocol.parse_failure(payload)
            self.close()
            raise DirectMLError(
                f"the DirectML host could not start: {call} failed with HRESULT 0x{hresult:08X}",
                call=call,
                hresult=hresult,
            )
        if status != protocol.STATUS_OK:
            self.close()
            raise DirectMLError(f"the DirectML host sent an unexpected greeting (status {status})")

    def alive(self) -> bool:
        """True while the process runs."""
        return self.process.poll() is None

    def request(self, command: int, payload: bytes, timeout: float) -> tuple[int, bytes]:
        """Send one request, wait for its reply: (status, payload)."""
        try:
            self._in.write(protocol.frame(command, payload))
            self._in.flush()
        except OSError as exc:
            self._crashed(f"writing the request failed ({exc})")
        return self._read_reply(time.monotonic() + timeout)

    def _read_reply(self, deadline: float) -> tuple[int, bytes]:
        header = self._read_exact(protocol.HEADER.size, deadline)
        status, size = protocol.HEADER.unpack(header)
        return status, self._read_exact(size, deadline)

    def _read_exact(self, n: int, deadline: float) -> bytes:
        chunks = []
        while n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._out], [], [], left)[0]:
                self._crashed("no reply before the deadline (the host was killed)")
            chunk = os.read(self._out, min(n, 1 << 20))
            if not chunk:
                self._crashed("the host exited")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _crashed(self, what: str) -> None:
        self.close()
        raise HostCrashed(f"DirectML host: {what}; stderr tail: {self.stderr_tail()!r}")

    def stderr_tail(self, limit: int = 2000) -> str:
        """The end of the host's stderr (Wine and vkd3d messages)."""
        try:
            self.log.seek(0, os.SEEK_END)
            size = self.log.tell()
            self.log.seek(max(0, size - limit))
            return self.log.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        """Ask the host to quit, then make sure it is gone."""
        if self.alive():
            try:
                self._in.write(protocol.frame(protocol.CMD_QUIT))
                self._in.flush()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        _kill(self.process)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class HostManager:
    """The process-wide host: started on first use, restarted after a crash."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._host: Host | None = None
        self._display = _Display()
        self.starts = 0
        atexit.register(self.shutdown)

    def request(self, command: int, payload: bytes, timeout: float | None = None) -> tuple[int, bytes]:
        """Send a request to the (possibly new) host."""
        with self._lock:
            if self._host is None or not self._host.alive():
                self._host = Host(self._display)
                self.starts += 1
            host = self._host
            try:
                return host.request(command, payload, request_timeout() if timeout is None else timeout)
            except HostCrashed:
                self._host = None
                raise

    def shutdown(self) -> None:
        """Stop the host and the private display."""
        with self._lock:
            if self._host is not None:
                self._host.close()
                self._host = None
            self._display.stop()


MANAGER = HostManager()
