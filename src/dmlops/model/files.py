"""The files a model touches: bounded reads of regular files, writes confined to a folder.

Models travel in bug reports, so ``dmlops run`` treats every path in one as untrusted
(docs/security.md):

* **Reads** (the model file, ``sourcePath`` initializers) open regular files only:
  FIFOs, devices, sockets and folders are refused at once, never read or waited on
  (the file is opened non-blocking and checked with ``fstat`` on the open descriptor,
  so a path swapped for a FIFO after a ``stat`` cannot block either). No read takes
  more bytes than the file's size at open time, or than the caller's limit.
* **Writes** (``writeFile`` targets) stay inside the output folder: absolute targets,
  ``..`` escapes and symlinks that lead outside are refused unless the user opts out
  (``--allow-writes-outside-output-path``). Existing targets must be regular files;
  the final component is opened without following symlinks.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from .errors import ModelError

ALLOW_OUTSIDE_FLAG = "--allow-writes-outside-output-path"
"""The ``dmlops run`` flag that lifts the confinement of ``writeFile`` targets."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def file_kind(mode: int) -> str:
    """``"a FIFO (named pipe)"``, ``"a directory"``... for a ``st_mode`` that is not a regular file."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_path_text(path: str, what: str) -> None:
    """Refuse paths no file system can hold (a NUL byte), before any system call sees them."""
    if "\0" in path:
        raise ModelError(f"{what} {path!r} contains a NUL character")


@contextmanager
def open_regular(path: Path, what: str) -> Iterator[tuple[BinaryIO, int]]:
    """Open a regular file for reading: ``(file, size in bytes at open time)``.

    Raises ModelError for anything else (missing, a FIFO, a device...), without blocking.
    """
    check_path_text(str(path), what)
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ModelError(f"{what} '{path}' does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, or a device with nothing behind it
            raise ModelError(f"{what} '{path}' is not a regular file") from None
        raise ModelError(f"{what} '{path}' could not be opened: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ModelError(f"{what} '{path}' is {file_kind(info.st_mode)}, not a regular file")
        file = os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise
    with file:
        yield file, info.st_size


def readinto_exactly(file: BinaryIO, target: memoryview) -> None:
    """Fill ``target`` from ``file``; ModelError if the file ends first."""
    done = 0
    while done < len(target):
        got = file.readinto(target[done:])  # type: ignore[attr-defined]
        if not got:
            raise ModelError(f"the file ended after {done} of the {len(target)} bytes expected (was it changed?)")
        done += got


def read_exactly(file: BinaryIO, count: int) -> bytearray:
    """The next ``count`` bytes of ``file``; ModelError if the file is shorter."""
    data = bytearray(count)
    readinto_exactly(file, memoryview(data))
    return data


def read_regular_file(path: Path, what: str, *, max_bytes: int) -> bytearray:
    """The whole content of a regular file of at most ``max_bytes`` bytes."""
    with open_regular(path, what) as (file, size):
        if size > max_bytes:
            raise ModelError(f"{what} '{path}' has {size} bytes, more than the {max_bytes} dmlops reads")
        return read_exactly(file, size)


# -- writes -----------------------------------------------------------------------------------------


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def resolve_write_target(target: str, output_dir: Path | None, *, allow_outside: bool) -> Path:
    """Where a ``writeFile`` target goes: ``output_dir / target``, checked to stay inside it.

    ``output_dir`` None is the current folder. With ``allow_outside``, targets go where
    they say, as in DxDispatch (absolute paths and ``..`` included).
    """
    check_path_text(target, "writeFile target")
    base = Path.cwd() if output_dir is None else output_dir
    candidate = base / target
    if allow_outside:
        return candidate
    if Path(target).is_absolute():
        raise ModelError(
            f"writeFile target '{target}' is an absolute path; targets must stay inside the output folder "
            f"'{base}' (--output_path; {ALLOW_OUTSIDE_FLAG} allows writing elsewhere)"
        )
    # realpath resolves '..' and every symlink that exists, the target's own included.
    real_base = os.path.realpath(base)
    real = os.path.realpath(candidate)
    if not _inside(real, real_base):
        raise ModelError(
            f"writeFile target '{target}' resolves to '{real}', outside the output folder '{real_base}' "
            f"(--output_path; {ALLOW_OUTSIDE_FLAG} allows writing there)"
        )
    return Path(real)


@contextmanager
def open_for_write(path: Path) -> Iterator[BinaryIO]:
    """Create or truncate a regular file for writing, creating missing parent folders.

    An existing target that is not a regular file (a FIFO, a device, a folder) is
    refused without blocking; a symlink as the last component is not followed.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise ModelError(f"could not write '{path}': {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISREG(info.st_mode) and not stat.S_ISLNK(info.st_mode):
        raise ModelError(f"could not write '{path}': it is {file_kind(info.st_mode)}, not a regular file")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    if info is None or not stat.S_ISLNK(info.st_mode):
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        raise ModelError(f"could not write '{path}': {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ModelError(f"could not write '{path}': it is {file_kind(info.st_mode)}, not a regular file")
        file = os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise
    try:
        with file:
            yield file
    except OSError as exc:
        raise ModelError(f"could not write '{path}': {exc.strerror or exc}") from None
