"""Printing buffer values the way DxDispatch does.

DxDispatch writes each element with C++ ``std::ostream << value`` at the default
precision, which for floating point is ``printf("%g")`` with 6 significant digits
(``14`` -> ``14``, ``0.1`` -> ``0.1``, ``1e-07`` -> ``1e-07``); FLOAT16 goes through
``half_float::half``, which prints as float. Python's ``format(x, "g")`` is the same
conversion. Deviations from DxDispatch, on purpose:

* UINT8/INT8 print as numbers; C++ would stream them as characters.
* NaN always prints ``nan`` (C runtimes differ on ``-nan`` / ``-nan(ind)``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray


def format_value(value: Any) -> str:
    """One element as C++ ``operator<<`` prints it (floats: ``%g``, 6 digits)."""
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if math.isnan(f):
            return "nan"
        return format(f, "g")
    return str(int(value))


CHUNK_ELEMENTS = 1 << 14
"""Elements formatted at a time by :func:`iter_print`: its memory does not grow with the buffer."""


def format_values(values: NDArray[Any]) -> str:
    """``1, 2, 3``: the elements of a 1-D array joined by ``", "``."""
    flat = values.reshape(-1)
    if flat.dtype.kind == "f":
        return ", ".join(format_value(v) for v in flat.astype(np.float64).tolist())
    return ", ".join(str(v) for v in flat.tolist())


def iter_print(name: str, values: NDArray[Any], *, verbose: bool = False) -> Iterator[str]:
    """The output of DxDispatch's ``print`` command for one resource, in pieces (no final newline).

    ``Resource 'name': 1, 2, 3``; verbose: a ``Resource 'name':`` line, then one
    ``[i] value (0xBITS)`` line per element, the index right-aligned and the bits in
    upper-case hex, two digits per byte. Pieces cover :data:`CHUNK_ELEMENTS` elements
    each, so printing a 4 GiB buffer takes constant memory.
    """
    flat = values.reshape(-1)
    if not verbose:
        yield f"Resource '{name}': "
        for start in range(0, flat.size, CHUNK_ELEMENTS):
            yield (", " if start else "") + format_values(flat[start : start + CHUNK_ELEMENTS])
        return
    width = len(str(max(flat.size - 1, 0)))
    bits = flat.view(np.dtype(f"<u{flat.dtype.itemsize}")) if flat.size else flat
    digits = 2 * flat.dtype.itemsize
    yield f"Resource '{name}':"
    for start in range(0, flat.size, CHUNK_ELEMENTS):
        stop = start + CHUNK_ELEMENTS
        yield "".join(
            f"\n[{i:>{width}}] {format_value(v)} (0x{int(b):0{digits}X})"
            for i, v, b in zip(range(start, stop), flat[start:stop].tolist(), bits[start:stop].tolist())
        )


def format_print(name: str, values: NDArray[Any], *, verbose: bool = False) -> str:
    """The whole output of DxDispatch's ``print`` command, as one string (see :func:`iter_print`)."""
    return "".join(iter_print(name, values, verbose=verbose))
