"""Refusing allocations that cannot succeed, before they are attempted.

DirectML tensors may address up to 2^32 - 1 elements, so a valid desc can ask for tens
of GiB. NumPy would either fail deep inside an allocation or, with memory overcommit,
succeed and then exhaust the machine while filling it. dmlops checks the bytes first.
"""

from __future__ import annotations

import os

from .errors import AllocationError


def available_memory() -> int | None:
    """Bytes of memory available for new allocations, or None where it cannot be told.

    The smallest of: the machine's available memory (Linux ``MemAvailable``, which
    counts reclaimable page cache, unlike the often tiny free-page count), the room
    left under a cgroup v2 memory limit (containers, CI), and the process's
    address-space limit (``ulimit -v``).
    """
    candidates = [c for c in (_machine_available(), _cgroup_room(), _address_space_limit()) if c is not None]
    return min(candidates) if candidates else None


def _machine_available() -> int | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup_room() -> int | None:
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as f:
            used = int(f.read().strip())
        return max(int(limit) - used, 0)
    except (OSError, ValueError):
        return None


def _address_space_limit() -> int | None:
    try:
        import resource
    except ImportError:  # not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    # The limit covers what the process has mapped already; the room is the difference,
    # approximated here by the limit itself when the current size cannot be read.
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError):
        mapped = 0
    return max(int(soft) - mapped, 0)


ALWAYS_AFFORDABLE = 1 << 24
"""Allocations up to 16 MiB are not checked against the machine (that costs a file read)."""


def check_allocation(nbytes: int, what: str, *, limit: int | None = None) -> None:
    """Raise :class:`AllocationError` if ``nbytes`` exceed ``limit`` or the available memory."""
    if limit is not None and nbytes > limit:
        raise AllocationError(f"{what} needs {nbytes} bytes, more than the limit of {limit} bytes")
    if nbytes <= ALWAYS_AFFORDABLE:
        return
    free = available_memory()
    if free is not None and nbytes > free:
        raise AllocationError(f"{what} needs {nbytes} bytes, more than the {free} bytes of memory available")
