"""numba helpers shared by the CPU kernels: FLOAT16 codec, typed load/store.

numba has no float16 type (not even for copying), so FLOAT16 tensors reach the
kernels as ``uint16`` views of their bits together with a ``half`` tag. The tag's
*type* selects the code path at compile time: ``None`` means "the array holds its
own dtype", any integer means "the uint16 array holds IEEE binary16 bits". Each
kernel is therefore specialised once per (dtype, tag type), and nothing is branched
at run time.

Arithmetic precision (ruling 10): FLOAT16 and FLOAT32 compute in float32, FLOAT64 in
float64, and the integer types RESAMPLE2 accepts in float64; a FLOAT16 result is
rounded once, to nearest even, when it is stored.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba.extending import overload
from numpy.typing import NDArray

HALF = np.int8(1)
"""The ``half`` tag value for FLOAT16 data (its type, not its value, matters)."""


def kernel_view(array: NDArray[Any]) -> tuple[NDArray[Any], Any]:
    """(array numba can read or write, half tag): FLOAT16 becomes its uint16 bits."""
    if array.dtype == np.float16:
        return array.view(np.uint16), HALF
    return array, None


@njit(cache=True)
def half_bits_to_float(h: Any) -> Any:  # pragma: no cover - compiled
    """IEEE binary16 bits -> float32 (exact; NaN payloads are not kept)."""
    h = np.int32(h) & 0xFFFF
    sign = np.float32(-1.0) if h & 0x8000 else np.float32(1.0)
    exponent = (h >> 10) & 0x1F
    mantissa = h & 0x3FF
    if exponent == 0:  # zero or subnormal: mantissa * 2^-24
        return sign * np.float32(mantissa) * np.float32(5.9604644775390625e-08)
    if exponent == 31:
        return sign * np.float32(np.inf) if mantissa == 0 else np.float32(np.nan)
    return sign * np.float32(math.ldexp(np.float64(mantissa + 1024), exponent - 25))


@njit(cache=True)
def float_to_half_bits(value: Any) -> Any:  # pragma: no cover - compiled
    """float32/float64 -> binary16 bits, rounded once to nearest even (overflow to inf).

    Scaling by a power of two is exact, so ``rint`` of the scaled magnitude is the
    only rounding step.
    """
    v = np.float64(value)
    if v != v:
        return np.uint16(0x7E00)
    sign = 0x8000 if (v < 0.0 or (v == 0.0 and math.copysign(1.0, v) < 0.0)) else 0
    a = abs(v)
    if a >= 65520.0:  # halfway between 65504 (max finite) and 65536 rounds to even: inf
        return np.uint16(sign | 0x7C00)
    if a < 6.103515625e-05:  # below 2^-14: subnormal, unit 2^-24; 1024 rounds up to the smallest normal
        return np.uint16(sign | np.int64(np.rint(a * 16777216.0)))
    _, e = math.frexp(a)  # a = f * 2^e, f in [0.5, 1): unbiased exponent e - 1
    m = np.int64(np.rint(math.ldexp(a, 11 - e)))  # 11 significant bits, in [1024, 2048]
    biased = e - 1 + 15
    if m == 2048:
        m = 1024
        biased += 1
    if biased >= 31:
        return np.uint16(sign | 0x7C00)
    return np.uint16(sign | (biased << 10) | (m - 1024))


def _jit_only(name: str) -> TypeError:
    return TypeError(f"dmlops.cpu._common.{name} exists only inside numba-compiled kernels (@overload)")


def load(value: Any, half: Any) -> Any:
    """Element -> compute type (float32 for FLOAT16/FLOAT32, float64 otherwise).

    Only callable from numba-compiled code: numba substitutes the ``@overload`` below.
    """
    raise _jit_only("load")


def store(value: Any, like: Any, half: Any) -> Any:
    """Compute-type value -> element of ``like``'s dtype (rounding once; ints truncate + saturate).

    Only callable from numba-compiled code (``@overload``).
    """
    raise _jit_only("store")


def _compute_type(element: types.Type, half: types.Type) -> Any:
    if not isinstance(half, types.NoneType) or element == types.float32:
        return np.float32
    return np.float64


@overload(load)
def _load(value, half):  # type: ignore[no-untyped-def]  # numba compares parameter annotations
    if not isinstance(half, types.NoneType):
        return lambda value, half: half_bits_to_float(value)
    ctype = _compute_type(value, half)
    return lambda value, half: ctype(value)


@overload(store)
def _store(value, like, half):  # type: ignore[no-untyped-def]
    if not isinstance(half, types.NoneType):
        return lambda value, like, half: float_to_half_bits(value)
    if isinstance(like, types.Float):
        dtype = np.float32 if like == types.float32 else np.float64
        return lambda value, like, half: dtype(value)
    if isinstance(like, types.Integer):
        info = np.iinfo(numba.np.numpy_support.as_dtype(like))
        lo, hi, itype = float(info.min), float(info.max), numba.np.numpy_support.as_dtype(like).type

        def impl(value, like, half):  # type: ignore[no-untyped-def]
            r = np.trunc(np.float64(value))  # toward zero, as DirectML (erratum E30)
            if r != r:
                r = 0.0
            return itype(min(max(r, lo), hi))

        return impl
    return None


def key(value: Any, half: Any) -> Any:
    """Element -> comparable value: FLOAT16 bits decoded, every other type unchanged (exact).

    Only callable from numba-compiled code (``@overload``).
    """
    raise _jit_only("key")


@overload(key)
def _key(value, half):  # type: ignore[no-untyped-def]
    if not isinstance(half, types.NoneType):
        return lambda value, half: half_bits_to_float(value)
    return lambda value, half: value


def flat_memory(a: NDArray[Any], *, writeable: bool = False) -> tuple[NDArray[Any], int, NDArray[Any]]:
    """(1-D view of ``a``'s memory from its lowest element, ``a[0, ...]``'s offset there, element strides).

    Inputs are viewed read-only whatever their flags, so each kernel compiles once per type.
    ``a``'s strides must be multiples of its itemsize.
    """
    item = a.itemsize
    strides = [s // item for s in a.strides]
    if a.size == 0:
        return np.zeros(1, a.dtype), 0, np.zeros(max(a.ndim, 1), np.int64)
    origin = sum((n - 1) * -s for n, s in zip(a.shape, strides) if s < 0)
    # (the Ellipsis keeps a 0-d array a view, not a scalar)
    flips = (*(slice(None, None, -1) if s < 0 else slice(None) for s in strides), Ellipsis)
    low = a[flips]
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(a.shape, strides))
    base = np.lib.stride_tricks.as_strided(low, (span,), (item,), writeable=writeable)
    return base, origin, np.array(strides if strides else [0], np.int64)
