"""The reduction family on the CPU: REDUCE (every function), ARGMAX, ARGMIN, CUMULATIVE_*, TOP_K, TOP_K1.

Bit-identical to the NumPy reference (``reference/reduction.py``), whose numerics are the
spec, except for the float sums (below); DirectML's rules behind them are listed in
``descs/reduction.py``.

Numerics
--------
* **Float sums** (SUM, AVERAGE, L1, L2, SUM_SQUARE, LOG_SUM, LOG_SUM_EXP) add in float64
  in the kernel's order, and are rounded once when stored, as the reference's: a
  contiguous line in several independent float64 SIMD lanes (the order LLVM picks under
  ``fastmath={"reassoc"}``, fixed for a compiled kernel; other lines block by block), a
  reduction over outer axes column by column, ``(a + b) + (c + d)`` of four reduced
  elements added to each column's tally at a time. Each result is summed by one thread,
  so it does not depend on the thread count. The
  reference adds the same float64 terms in NumPy's order (pairwise or sequential, by the
  strides), so the two float64 sums differ by at most the rounding error of two orders of
  n additions, ``|got - want| <= n * 2^-53 * sum(|term|)`` each, and the results, each
  rounded once to the output type, agree to within ``ulp_out(want) + n * 2^-52 *
  sum(|term|)`` (``tests/test_cpu_reduction.py`` checks that bound; most results are
  bit-identical). Every float64 sum of float32 or FLOAT16 terms is finite unless a term
  is not, and NaN / inf results do not depend on the order. Each sum starts from +0 (a
  sum of -0s is +0, as the reference's SUM and AVERAGE store, and the terms of L1,
  SUM_SQUARE and LOG_SUM_EXP are >= +0). Integer sums wrap, so their order never matters.
* **MULTIPLY** is NumPy's sequential float64 product (or the integer product wrapping in
  64 bits), **integer SUM** wraps in 64 bits; both are stored truncated to the type's width,
  so they wrap in the type's width, as DirectML does.
* **MAX / MIN** scan in index order keeping the first strictly greater (less) value, NaN
  read as -inf (+inf): the first of equal values (-0, +0) wins, all NaN gives -inf (+inf).
  Where the elements lie contiguous, float32 compares integer keys of its bits (order
  the floats', -0 below +0; integer max / min vectorise) and a result of +0 (MAX) or -0
  (MIN) is then replaced by the first zero of its line, bit for bit as the scan.
* **ARGMAX / ARGMIN** scan in row-major order of the reduced axes from the first element:
  INCREASING keeps the first strictly greater (less), DECREASING the last greater (less)
  or equal; a NaN never compares, so a NaN first element wins and any other never does.
* **CUMULATIVE_*** run sequentially in the input type: each float32 step is a float64
  operation rounded to float32 (exactly IEEE float32 arithmetic), a FLOAT16 step rounds
  to float32 and then to float16 (NumPy's half loops compute in float32); integers wrap.
  Summations store ``tally + 0`` (a -0 tally is +0), as the reference does.
* **TOP_K / TOP_K1** order by a total-order integer key of each element (floats: NaN
  largest, -0 equal to +0) and equal keys by ascending index; the values are copied
  bit for bit.

Layout and threads
------------------
Tensors are read and written where they lie: each array is handed to the kernels as its
1-D memory from the lowest-addressed element with element strides (0 for broadcast axes,
negative for reversed views), adjacent axes merged where every array allows it. Two loop
orders: **rows** (one output element or one cumulative/top-k line per step, its elements
along the reduced axes; for reduced axes innermost in memory) and **tiles** (a tile of up
to ``TILE_MAX`` outputs along the innermost kept axis updated together for each reduced
element, a loop that vectorises; for reductions over outer axes). Work is split into
contiguous ranges of rows or tiles over ``NUMBA_NUM_THREADS`` threads (``nogil`` numba
kernels on the backend's thread pool). Scratch is per thread: a 128-element block,
a tile, or one line for TOP_K; no temporary of the input's size is made (an output
overlapping its input is the exception: the input is copied first).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numba import njit, types
from numba.extending import overload
from numpy.typing import NDArray

from ..descs import reduction as rules
from ..enums import FeatureLevel
from ..errors import UnsupportedError
from ._common import float_to_half_bits, half_bits_to_float, kernel_view
from ._repeat import NOTHING, Repeat
from ._threads import run_kernel, thread_count
from ._vector_lines import STEP, line_extreme, line_sum

Array = NDArray[Any]

TILE_MIN, TILE_MAX = 256, 4096
"""Outputs updated together by the tile loop order: the kept axis split into one tile per
thread within these bounds (each reduced slice is then read in long runs; the float64
accumulators of a tile stay in the L1/L2 cache)."""
BLOCK = 128
"""The gather block of the row loop order (elements read through strides)."""
SMALL_K = 32
"""TOP_K keeps the K best in a sorted insertion buffer up to this K, else sorts each line."""
TOP_K_BLOCK = 64
"""TOP_K tests a line's keys against the K-th best's this many at a time."""

# function codes of the value kernels
FN_SUM, FN_PROD, FN_MAX, FN_MIN = range(4)
# element transforms applied as elements are read
OP_PLAIN, OP_ABS, OP_SQUARE, OP_EXP, OP_NAN_LOW, OP_NAN_HIGH = range(6)
# float results' last step
POST_NONE, POST_PLUS_ZERO, POST_AVERAGE, POST_SQRT, POST_LOG = range(5)


# -- compile-time helpers (numba @overload: one specialisation per element type) ---------------------------


def _jit_only(name: str) -> TypeError:
    return TypeError(f"dmlops.cpu.reduction.{name} exists only inside numba-compiled kernels (@overload)")


def _widen(value: Any, half: Any) -> Any:
    """Element -> float64 (FLOAT16 bits decoded, exact), int64 or uint64: the kernels' working type."""
    raise _jit_only("_widen")


@overload(_widen)
def _ov_widen(value, half):  # type: ignore[no-untyped-def]
    if not isinstance(half, types.NoneType):
        return lambda value, half: np.float64(half_bits_to_float(value))
    if isinstance(value, types.Float):
        return lambda value, half: np.float64(value)
    if value.signed:
        return lambda value, half: np.int64(value)
    return lambda value, half: np.uint64(value)


def _wide_empty(like: Any, half: Any, n: Any) -> Any:
    """``np.empty(n)`` of the working type of ``like``'s elements."""
    raise _jit_only("_wide_empty")


@overload(_wide_empty)
def _ov_wide_empty(like, half, n):  # type: ignore[no-untyped-def]
    dtype = like.dtype
    if not isinstance(half, types.NoneType) or isinstance(dtype, types.Float):
        return lambda like, half, n: np.empty(n, np.float64)
    if dtype.signed:
        return lambda like, half, n: np.empty(n, np.int64)
    return lambda like, half, n: np.empty(n, np.uint64)


def _transform(w: Any, op: Any) -> Any:
    """A working value -> the term a function reduces (|x|, x * x, float32 exp, NaN as an infinity)."""
    raise _jit_only("_transform")


@overload(_transform)
def _ov_transform(w, op):  # type: ignore[no-untyped-def]
    if isinstance(w, types.Integer):
        return lambda w, op: w

    def impl(w, op):  # type: ignore[no-untyped-def]
        if op == OP_ABS:
            return abs(w)
        if op == OP_SQUARE:
            return w * w  # exact: float32 * float32 fits float64
        if op == OP_EXP:
            return np.float64(np.float32(np.exp(w)))  # each exp a float32 value, as the reference's
        if op == OP_NAN_LOW:
            return -np.inf if w != w else w
        if op == OP_NAN_HIGH:
            return np.inf if w != w else w
        return w

    return impl


def _finish(acc: Any, post: Any, n: Any) -> Any:
    """A float sum's last step (+0, / n, sqrt or log of its float32 value); integers unchanged."""
    raise _jit_only("_finish")


@overload(_finish)
def _ov_finish(acc, post, n):  # type: ignore[no-untyped-def]
    if isinstance(acc, types.Integer):
        return lambda acc, post, n: acc

    def impl(acc, post, n):  # type: ignore[no-untyped-def]
        if post == POST_PLUS_ZERO:
            return acc + 0.0
        if post == POST_AVERAGE:
            return (acc + 0.0) / n
        if post == POST_SQRT:  # the sum of squares is a float32 value: beyond 3.4e38 it is inf
            return np.sqrt(np.float64(np.float32(acc)))
        if post == POST_LOG:
            return np.log(np.float64(np.float32(acc)))
        return acc

    return impl


def _put(out: Any, i: Any, value: Any, half: Any) -> None:
    """``out[i] = value`` rounded once (float64 -> float32 / FLOAT16 bits); integers wrap to the width."""
    raise _jit_only("_put")


@overload(_put)
def _ov_put(out, i, value, half):  # type: ignore[no-untyped-def]
    if not isinstance(half, types.NoneType):

        def impl_half(out, i, value, half):  # type: ignore[no-untyped-def]
            out[i] = float_to_half_bits(value)

        return impl_half

    def impl(out, i, value, half):  # type: ignore[no-untyped-def]
        out[i] = value

    return impl


def _tally_empty(like: Any, half: Any, n: Any) -> Any:
    """``np.empty(n)`` of a cumulative tally's type: float32 for FLOAT16 and FLOAT32, else the working integer."""
    raise _jit_only("_tally_empty")


@overload(_tally_empty)
def _ov_tally_empty(like, half, n):  # type: ignore[no-untyped-def]
    if not isinstance(half, types.NoneType) or isinstance(like.dtype, types.Float):
        return lambda like, half, n: np.empty(n, np.float32)
    return lambda like, half, n: _wide_empty(like, half, n)


def _element(value: Any, half: Any) -> Any:
    """An element as a cumulative step reads it: float32 (FLOAT16 decoded), else the working integer."""
    raise _jit_only("_element")


@overload(_element)
def _ov_element(value, half):  # type: ignore[no-untyped-def]
    if not isinstance(half, types.NoneType):
        return lambda value, half: half_bits_to_float(value)
    if isinstance(value, types.Float):
        return lambda value, half: value
    return lambda value, half: _widen(value, half)


def _tally(s: Any, summation: Any) -> Any:
    """A cumulative tally as stored: a float sum + 0 (-0 is stored +0); products and integers unchanged."""
    raise _jit_only("_tally")


@overload(_tally)
def _ov_tally(s, summation):  # type: ignore[no-untyped-def]
    if isinstance(s, types.Integer):  # (uint64 + 0 would be a float64 in numba)
        return lambda s, summation: s
    return lambda s, summation: s + np.float32(0) if summation else s


def _step(s: Any, v: Any, summation: Any, half: Any, like: Any) -> Any:
    """One cumulative step in the input type (``like``'s dtype): float32 / FLOAT16 rounding, integers wrap."""
    raise _jit_only("_step")


@overload(_step)
def _ov_step(s, v, summation, half, like):  # type: ignore[no-untyped-def]
    if not isinstance(half, types.NoneType):

        def impl_half(s, v, summation, half, like):  # type: ignore[no-untyped-def]
            # NumPy's half loops: the float32 operation on the two values, then rounded to half
            return half_bits_to_float(float_to_half_bits(s + v if summation else s * v))

        return impl_half
    if isinstance(like.dtype, types.Float):  # float32 tallies and elements: the float32 operation
        return lambda s, v, summation, half, like: s + v if summation else s * v
    return lambda s, v, summation, half, like: s + v if summation else s * v


def _sort_key(value: Any, half: Any) -> Any:
    """uint64 key whose order is the element's: floats NaN largest and -0 equal to +0."""
    raise _jit_only("_sort_key")


@overload(_sort_key)
def _ov_sort_key(value, half):  # type: ignore[no-untyped-def]
    if not isinstance(half, types.NoneType) or isinstance(value, types.Float):
        decode = not isinstance(half, types.NoneType)

        def impl_float(value, half):  # type: ignore[no-untyped-def]
            f = half_bits_to_float(value) if decode else np.float32(value)
            if f != f:
                return np.uint64(0xFFFFFFFF)  # every NaN above +inf
            if f == 0:
                return np.uint64(0x80000000)  # +0 and -0 alike
            bits = np.uint64(np.float32(f).view(np.uint32))
            # negative: all bits flipped (larger magnitude, smaller key); positive: above every negative
            return (bits ^ np.uint64(0xFFFFFFFF)) if bits & np.uint64(0x80000000) else bits | np.uint64(0x80000000)

        return impl_float
    if value.signed:
        return lambda value, half: np.uint64(np.int64(value)) ^ np.uint64(1 << 63)
    return lambda value, half: np.uint64(value)


# -- kernels: reading -----------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _offsets(index, sizes, a, b):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Offsets of the ``index``-th element (row-major over ``sizes``) along strides ``a`` and ``b``."""
    pa = 0
    pb = 0
    for d in range(sizes.size - 1, -1, -1):
        q = index // sizes[d]
        i = index - q * sizes[d]
        pa += i * a[d]
        pb += i * b[d]
        index = q
    return pa, pb


@njit(cache=True, nogil=True, inline="always")
def _tile(task, ntiles, width, csz, ksz, kxs, kos, xo, oo, cxs, cos):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Tile ``task`` of the tile kernels: (its width, its first input offset, its first output offset).

    Tiles run ``ntiles`` to a row of the kept axes ``ksz``, each ``width`` columns of the kept
    axis ``c`` (input stride ``cxs``, output ``cos``) from column ``j0``; the last one is narrower.
    """
    row = task // ntiles
    j0 = (task - row * ntiles) * width
    xoff, ooff = _offsets(row, ksz, kxs, kos)
    return min(width, csz - j0), xoff + xo + j0 * cxs, ooff + oo + j0 * cos


@njit(cache=True, nogil=True, inline="always")
def _gather_line(xb, p, s, m, half, op, buf):  # type: ignore[no-untyped-def]  # pragma: no cover
    """buf[:m] = the transformed elements xb[p], xb[p + s], ... (the transform chosen outside the loops)."""
    if op == OP_PLAIN:
        for i in range(m):
            buf[i] = _widen(xb[p + i * s], half)
    elif op == OP_ABS:
        for i in range(m):
            buf[i] = _transform(_widen(xb[p + i * s], half), OP_ABS)
    elif op == OP_SQUARE:
        for i in range(m):
            buf[i] = _transform(_widen(xb[p + i * s], half), OP_SQUARE)
    else:
        for i in range(m):
            buf[i] = _transform(_widen(xb[p + i * s], half), op)


@njit(cache=True, nogil=True)
def _gather(xb, off, rsz, rxs, digits, lo, m, half, op, buf):  # type: ignore[no-untyped-def]  # pragma: no cover
    """buf[:m] = elements lo .. lo + m - 1 (row-major over the reduced sizes ``rsz``) of the line at ``off``."""
    nr = rsz.size
    if nr == 1:
        _gather_line(xb, off + lo * rxs[0], rxs[0], m, half, op, buf)
        return
    rem = lo
    p = off
    for d in range(nr - 1, -1, -1):
        q = rem // rsz[d]
        digits[d] = rem - q * rsz[d]
        p += digits[d] * rxs[d]
        rem = q
    for i in range(m):
        buf[i] = _transform(_widen(xb[p], half), op)
        d = nr - 1
        while d >= 0:  # odometer: the next element in row-major order
            digits[d] += 1
            p += rxs[d]
            if digits[d] < rsz[d]:
                break
            p -= digits[d] * rxs[d]
            digits[d] = 0
            d -= 1


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _lane_sum(r, half, op, zero):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """The sum of the transformed elements of the 1-D slice ``r``, from ``zero`` (+0 or the integer 0).

    ``reassoc`` lets LLVM add in several independent float64 SIMD lanes (its order, fixed for
    a compiled kernel); integer sums wrap, so their order never matters.
    """
    s = zero
    if op == OP_PLAIN:
        for i in range(r.size):
            s += _widen(r[i], half)
    elif op == OP_ABS:
        for i in range(r.size):
            s += _transform(_widen(r[i], half), OP_ABS)
    elif op == OP_SQUARE:
        for i in range(r.size):
            s += _transform(_widen(r[i], half), OP_SQUARE)
    else:
        for i in range(r.size):
            s += _transform(_widen(r[i], half), op)
    return s


@njit(cache=True, nogil=True)
def _add_into(acc, r, half, op):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """acc[j] += the transformed r[j] (each column's sum in order of the reduced elements; vectorises)."""
    if op == OP_PLAIN:
        for j in range(acc.size):
            acc[j] += _widen(r[j], half)
    elif op == OP_ABS:
        for j in range(acc.size):
            acc[j] += _transform(_widen(r[j], half), OP_ABS)
    elif op == OP_SQUARE:
        for j in range(acc.size):
            acc[j] += _transform(_widen(r[j], half), OP_SQUARE)
    else:
        for j in range(acc.size):
            acc[j] += _transform(_widen(r[j], half), op)


@njit(cache=True, nogil=True, inline="always")
def _term(v, half, op):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    return _transform(_widen(v, half), op)


@njit(cache=True, nogil=True)
def _add4_into(acc, r0, r1, r2, r3, half, op):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """acc[j] += (T(r0[j]) + T(r1[j])) + (T(r2[j]) + T(r3[j])): four reduced elements a pass over acc."""
    if op == OP_PLAIN:
        for j in range(acc.size):
            acc[j] += (_widen(r0[j], half) + _widen(r1[j], half)) + (_widen(r2[j], half) + _widen(r3[j], half))
    elif op == OP_ABS:
        for j in range(acc.size):
            acc[j] += (_term(r0[j], half, OP_ABS) + _term(r1[j], half, OP_ABS)) + (
                _term(r2[j], half, OP_ABS) + _term(r3[j], half, OP_ABS)
            )
    elif op == OP_SQUARE:
        for j in range(acc.size):
            acc[j] += (_term(r0[j], half, OP_SQUARE) + _term(r1[j], half, OP_SQUARE)) + (
                _term(r2[j], half, OP_SQUARE) + _term(r3[j], half, OP_SQUARE)
            )
    else:
        for j in range(acc.size):
            acc[j] += (_term(r0[j], half, op) + _term(r1[j], half, op)) + (
                _term(r2[j], half, op) + _term(r3[j], half, op)
            )


@njit(cache=True, nogil=True)
def _row_sum(xb, off, rsz, rxs, digits, n, half, op, buf, zero):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The sum of a line's n transformed elements: in place when contiguous, else gathered BLOCK at a time."""
    if rsz.size == 1 and rxs[0] == 1:
        return _lane_sum(xb[off : off + n], half, op, zero)
    total = zero
    for b0 in range(0, n, BLOCK):
        m = min(BLOCK, n - b0)
        _gather(xb, off, rsz, rxs, digits, b0, m, half, op, buf)
        total += _lane_sum(buf[:m], None, OP_PLAIN, zero)
    return total


_LINE_SUM = line_sum()
_LINE_EXTREME = line_extreme()


def _line_total(xb: Any, off: Any, n: Any, half: Any, op: Any, zero: Any) -> Any:
    """The sum of the transformed ``xb[off : off + n]`` (a contiguous line), from ``zero``."""
    raise _jit_only("_line_total")


@overload(_line_total)
def _ov_line_total(xb, off, n, half, op, zero):  # type: ignore[no-untyped-def]
    if isinstance(half, types.NoneType) and xb.dtype == types.float32:

        def impl_float32(xb, off, n, half, op, zero):  # type: ignore[no-untyped-def]  # pragma: no cover
            if op != OP_PLAIN:
                return _lane_sum(xb[off : off + n], half, op, zero)
            whole = n // STEP * STEP  # on 64-byte vectors (_vector_lines.py), the rest one by one
            return _LINE_SUM(xb, off, n) + _lane_sum(xb[off + whole : off + n], half, op, zero)

        return impl_float32
    return lambda xb, off, n, half, op, zero: _lane_sum(xb[off : off + n], half, op, zero)


# float32 MAX / MIN on integer keys: the bits v of a float32 map to k = v ^ ((v >> 31) & 0x7FFFFFFF),
# whose signed order is the floats' (-0 below +0); integer max / min vectorise where float selects do not
KEY_NEG_INF, KEY_POS_INF = -0x7F800001, 0x7F800000
"""The keys of -inf and +inf: what NaN counts as for MAX and for MIN."""


@njit(cache=True, nogil=True, inline="always")
def _key(v, nan_key):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """The key of float32 bits ``v`` (int32), NaN as ``nan_key``; int32 throughout (16 lanes a vector)."""
    k = np.int32(v ^ ((v >> np.int32(31)) & np.int32(0x7FFFFFFF)))
    return k if (v & np.int32(0x7FFFFFFF)) <= np.int32(0x7F800000) else nan_key


@njit(cache=True, nogil=True, inline="always")
def _unkey(k):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """The float32 bits (as int32) of a key (the map is its own inverse)."""
    return np.int32(k ^ ((k >> 31) & 0x7FFFFFFF))


@njit(cache=True, nogil=True)
def _key_extreme(r, largest):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """The largest (smallest) key of the float32 bits in the 1-D slice ``r``, NaN as -inf (+inf)."""
    if largest:
        low = np.int32(KEY_NEG_INF)
        m = low
        for i in range(r.size):
            k = _key(r[i], low)
            m = k if k > m else m
    else:
        high = np.int32(KEY_POS_INF)
        m = high
        for i in range(r.size):
            k = _key(r[i], high)
            m = k if k < m else m
    return m


@njit(cache=True, nogil=True)
def _key_extreme_into(acc, r, largest):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """acc[j] = the larger (smaller) of acc[j] and the key of r[j] (int32 keys; vectorises)."""
    if largest:
        low = np.int32(KEY_NEG_INF)
        for j in range(acc.size):
            k = _key(r[j], low)
            c = acc[j]
            acc[j] = k if k > c else c
    else:
        high = np.int32(KEY_POS_INF)
        for j in range(acc.size):
            k = _key(r[j], high)
            c = acc[j]
            acc[j] = k if k < c else c


@njit(cache=True, nogil=True, inline="always")
def _advance(digits, rsz, rxs, p):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """The offset of the next reduced element in row-major order (odometer over ``rsz``)."""
    d = rsz.size - 1
    while d >= 0:
        digits[d] += 1
        p += rxs[d]
        if digits[d] < rsz[d]:
            return p
        p -= digits[d] * rxs[d]
        digits[d] = 0
        d -= 1
    return p


@njit(cache=True, nogil=True)
def _key_extreme4_into(acc, r0, r1, r2, r3, largest):  # type: ignore[no-untyped-def]  # pragma: no cover
    """:func:`_key_extreme_into` of four rows at once (keys of distinct bits differ: the order is free)."""
    if largest:
        low = np.int32(KEY_NEG_INF)
        for j in range(acc.size):
            k0, k1, k2, k3 = _key(r0[j], low), _key(r1[j], low), _key(r2[j], low), _key(r3[j], low)
            k0 = k0 if k0 > k1 else k1
            k2 = k2 if k2 > k3 else k3
            k0 = k0 if k0 > k2 else k2
            c = acc[j]
            acc[j] = k0 if k0 > c else c
    else:
        high = np.int32(KEY_POS_INF)
        for j in range(acc.size):
            k0, k1, k2, k3 = _key(r0[j], high), _key(r1[j], high), _key(r2[j], high), _key(r3[j], high)
            k0 = k0 if k0 < k1 else k1
            k2 = k2 if k2 < k3 else k3
            k0 = k0 if k0 < k2 else k2
            c = acc[j]
            acc[j] = k0 if k0 < c else c


# -- kernels: REDUCE values ----------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _reduce_rows(xb, xo, ob, oo, ksz, kxs, kos, rsz, rxs, half, fn, op, post, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Output elements lo .. hi - 1, each from its reduced elements read in blocks of BLOCK."""
    n = 1
    for d in range(rsz.size):
        n *= rsz[d]
    buf = _wide_empty(xb, half, BLOCK)
    zero = _wide_empty(xb, half, 1)
    zero[0] = 0
    digits = np.zeros(rsz.size, np.int64)
    if fn == FN_SUM and rsz.size == 1 and rxs[0] == 1:  # contiguous lines: each summed where it lies
        for row in range(lo, hi):
            xoff, ooff = _offsets(row, ksz, kxs, kos)
            total = _line_total(xb, xo + xoff, n, half, op, zero[0])
            _put(ob, oo + ooff, _finish(total, post, n), half)
        return
    for row in range(lo, hi):
        xoff, ooff = _offsets(row, ksz, kxs, kos)
        xoff += xo
        ooff += oo
        if fn == FN_SUM:  # from +0 (integers: 0), in the kernel's order
            total = _row_sum(xb, xoff, rsz, rxs, digits, n, half, op, buf, zero[0])
            _put(ob, ooff, _finish(total, post, n), half)
            continue
        _gather(xb, xoff, rsz, rxs, digits, 0, min(n, BLOCK), half, op, buf)
        acc = buf[0]  # a product from 1 has the first element first
        if rsz.size == 1 and rxs[0] == 1 and (fn == FN_MAX or fn == FN_MIN):
            # in place: MAX / MIN start from the first element with NaN as -inf / +inf, after which
            # a NaN never compares greater (less), so the raw elements give the same scan
            if fn == FN_MAX:
                for i in range(1, n):
                    v = _widen(xb[xoff + i], half)
                    acc = v if v > acc else acc
            else:
                for i in range(1, n):
                    v = _widen(xb[xoff + i], half)
                    acc = v if v < acc else acc
            _put(ob, ooff, _finish(acc, post, n), half)
            continue
        start = 1
        for b0 in range(0, n, BLOCK):
            m = min(BLOCK, n - b0)
            if b0 > 0:
                _gather(xb, xoff, rsz, rxs, digits, b0, m, half, op, buf)
            if fn == FN_PROD:
                for i in range(start, m):
                    acc *= buf[i]
            elif fn == FN_MAX:
                for i in range(start, m):
                    if buf[i] > acc:
                        acc = buf[i]
            else:
                for i in range(start, m):
                    if buf[i] < acc:
                        acc = buf[i]
            start = 0
        _put(ob, ooff, _finish(acc, post, n), half)


@njit(cache=True, nogil=True)
def _reduce_tiles(xb, xo, ob, oo, ksz, kxs, kos, csz, cxs, cos, width, rsz, rxs, half, fn, op, post, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Tiles lo .. hi - 1: ``width`` outputs along the kept axis ``c`` updated together, reduced elements in order."""
    n = 1
    for d in range(rsz.size):
        n *= rsz[d]
    ntiles = (csz + width - 1) // width
    acc = _wide_empty(xb, half, width)
    buf = _wide_empty(xb, half, width)
    digits = np.zeros(rsz.size, np.int64)
    for task in range(lo, hi):
        w, xoff, ooff = _tile(task, ntiles, width, csz, ksz, kxs, kos, xo, oo, cxs, cos)
        digits[:] = 0
        p = 0
        if fn == FN_SUM:  # each column from +0 (integers: 0); contiguous: four reduced elements at a time
            a = acc[:w]
            a[:] = 0
            r = 0
            if cxs == 1:
                while r + 4 <= n:
                    p0 = xoff + p
                    p1 = xoff + _advance(digits, rsz, rxs, p)
                    p2 = xoff + _advance(digits, rsz, rxs, p1 - xoff)
                    p3 = xoff + _advance(digits, rsz, rxs, p2 - xoff)
                    p = _advance(digits, rsz, rxs, p3 - xoff)
                    r0, r1, r2, r3 = xb[p0 : p0 + w], xb[p1 : p1 + w], xb[p2 : p2 + w], xb[p3 : p3 + w]
                    _add4_into(a, r0, r1, r2, r3, half, op)
                    r += 4
            for _ in range(r, n):
                if cxs == 1:
                    _add_into(a, xb[xoff + p : xoff + p + w], half, op)
                else:
                    _gather_line(xb, xoff + p, cxs, w, half, op, buf)
                    _add_into(a, buf[:w], None, OP_PLAIN)
                p = _advance(digits, rsz, rxs, p)
            for j in range(w):
                _put(ob, ooff + j * cos, _finish(acc[j], post, n), half)
            continue
        for r in range(n):
            if r > 0 and cxs == 1 and (op == OP_PLAIN or fn == FN_MAX or fn == FN_MIN):
                q = xoff + p  # in place, as the rows kernel's scans
                if fn == FN_PROD:
                    for j in range(w):
                        acc[j] *= _widen(xb[q + j], half)
                elif fn == FN_MAX:
                    for j in range(w):
                        v = _widen(xb[q + j], half)
                        acc[j] = v if v > acc[j] else acc[j]
                else:
                    for j in range(w):
                        v = _widen(xb[q + j], half)
                        acc[j] = v if v < acc[j] else acc[j]
                p = _advance(digits, rsz, rxs, p)
                continue
            _gather_line(xb, xoff + p, cxs, w, half, op, buf)
            if r == 0:
                for j in range(w):
                    acc[j] = buf[j]
            elif fn == FN_PROD:
                for j in range(w):
                    acc[j] *= buf[j]
            elif fn == FN_MAX:
                for j in range(w):
                    acc[j] = buf[j] if buf[j] > acc[j] else acc[j]
            else:
                for j in range(w):
                    acc[j] = buf[j] if buf[j] < acc[j] else acc[j]
            p = _advance(digits, rsz, rxs, p)
        for j in range(w):
            _put(ob, ooff + j * cos, _finish(acc[j], post, n), half)


@njit(cache=True, nogil=True)
def _first_zero(kb, off, rsz, rxs, digits, n, bits):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """The bits of a line's first +-0 element (``bits`` if none): MAX / MIN keep the first of equal zeros."""
    digits[:] = 0
    p = 0
    for _ in range(n):
        v = kb[off + p]
        if v & 0x7FFFFFFF == 0:
            return v
        p = _advance(digits, rsz, rxs, p)
    return bits


@njit(cache=True, nogil=True)
def _extreme_rows(kb, xo, ob, oo, ksz, kxs, kos, rsz, rxs, largest, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    """float32 MAX / MIN of contiguous lines on keys; ``kb`` and ``ob`` hold the float32 bits as int32."""
    # whole steps on 64-byte float vectors (_vector_lines.py), the rest on keys; the vectors may
    # return either zero of a line whose extreme is a zero, so a zero result is the line's first
    n = rsz[0]
    whole = n // STEP * STEP
    nan_key = np.int32(KEY_NEG_INF) if largest else np.int32(KEY_POS_INF)
    digits = np.zeros(1, np.int64)
    for row in range(lo, hi):
        xoff, ooff = _offsets(row, ksz, kxs, kos)
        xoff += xo
        vector = _key(_LINE_EXTREME(kb, xoff, n, True) if largest else _LINE_EXTREME(kb, xoff, n, False), nan_key)
        rest = _key_extreme(kb[xoff + whole : xoff + n], largest)
        bits = _unkey(max(vector, rest) if largest else min(vector, rest))
        if bits & np.int32(0x7FFFFFFF) == 0:  # +0 or -0: the first of the line's zeros (equal zeros keep the first)
            bits = _first_zero(kb, xoff, rsz, rxs, digits, n, bits)
        ob[ooff + oo] = bits


@njit(cache=True, nogil=True)
def _extreme_tiles(kb, xo, ob, oo, ksz, kxs, kos, csz, cos, width, rsz, rxs, largest, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    """float32 MAX / MIN of tiles of ``width`` contiguous columns on keys, each column's elements in order."""
    n = 1
    for d in range(rsz.size):
        n *= rsz[d]
    ntiles = (csz + width - 1) // width
    acc = np.empty(width, np.int32)
    ambiguous = np.int32(0) if largest else np.int32(-0x80000000)
    digits = np.zeros(rsz.size, np.int64)
    for task in range(lo, hi):
        w, xoff, ooff = _tile(task, ntiles, width, csz, ksz, kxs, kos, xo, oo, 1, cos)  # contiguous columns
        a = acc[:w]
        a[:] = np.int32(KEY_NEG_INF) if largest else np.int32(KEY_POS_INF)
        digits[:] = 0
        p = 0
        r = 0
        while r + 4 <= n:  # four reduced elements a pass over the accumulators
            p0 = xoff + p
            p1 = xoff + _advance(digits, rsz, rxs, p)
            p2 = xoff + _advance(digits, rsz, rxs, p1 - xoff)
            p3 = xoff + _advance(digits, rsz, rxs, p2 - xoff)
            p = _advance(digits, rsz, rxs, p3 - xoff)
            _key_extreme4_into(a, kb[p0 : p0 + w], kb[p1 : p1 + w], kb[p2 : p2 + w], kb[p3 : p3 + w], largest)
            r += 4
        for _ in range(r, n):
            _key_extreme_into(a, kb[xoff + p : xoff + p + w], largest)
            p = _advance(digits, rsz, rxs, p)
        for j in range(w):
            bits = _unkey(acc[j])
            if bits == ambiguous:
                bits = _first_zero(kb, xoff + j, rsz, rxs, digits, n, bits)
            ob[ooff + j * cos] = bits


# -- kernels: ARGMAX / ARGMIN ------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _wins(v, best, largest, decreasing):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Whether a later element replaces the best so far (NaN compares false either way)."""
    if largest:
        return v >= best if decreasing else v > best
    return v <= best if decreasing else v < best


@njit(cache=True, nogil=True)
def _arg_rows(xb, xo, ob, oo, ksz, kxs, kos, rsz, rxs, half, largest, decreasing, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    n = 1
    for d in range(rsz.size):
        n *= rsz[d]
    buf = _wide_empty(xb, half, BLOCK)
    digits = np.zeros(rsz.size, np.int64)
    for row in range(lo, hi):
        xoff, ooff = _offsets(row, ksz, kxs, kos)
        xoff += xo
        ooff += oo
        _gather(xb, xoff, rsz, rxs, digits, 0, min(n, BLOCK), half, OP_PLAIN, buf)
        best = buf[0]
        index = 0
        for b0 in range(0, n, BLOCK):
            m = min(BLOCK, n - b0)
            if b0 > 0:
                _gather(xb, xoff, rsz, rxs, digits, b0, m, half, OP_PLAIN, buf)
            for i in range(1 if b0 == 0 else 0, m):
                if _wins(buf[i], best, largest, decreasing):
                    best = buf[i]
                    index = b0 + i
        ob[ooff] = index


@njit(cache=True, nogil=True)
def _arg_tiles(xb, xo, ob, oo, ksz, kxs, kos, csz, cxs, cos, width, rsz, rxs, half, largest, decreasing, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    n = 1
    for d in range(rsz.size):
        n *= rsz[d]
    ntiles = (csz + width - 1) // width
    best = _wide_empty(xb, half, width)
    buf = _wide_empty(xb, half, width)
    index = np.empty(width, np.int64)
    digits = np.zeros(rsz.size, np.int64)
    for task in range(lo, hi):
        w, xoff, ooff = _tile(task, ntiles, width, csz, ksz, kxs, kos, xo, oo, cxs, cos)
        digits[:] = 0
        p = 0
        for r in range(n):
            _gather_line(xb, xoff + p, cxs, w, half, OP_PLAIN, buf)
            if r == 0:
                for j in range(w):
                    best[j] = buf[j]
                    index[j] = 0
            else:
                for j in range(w):
                    if _wins(buf[j], best[j], largest, decreasing):
                        best[j] = buf[j]
                        index[j] = r
            p = _advance(digits, rsz, rxs, p)
        for j in range(w):
            ob[ooff + j * cos] = index[j]


# -- kernels: CUMULATIVE_* ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _cumulative_rows(xb, xo, ob, oo, ksz, kxs, kos, n, sx, so, half, summation, exclusive, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Lines lo .. hi - 1, each scanned from its first element (``sx``, ``so`` < 0 scan backwards).

    Four lines are scanned together (four independent tallies hide the latency of each
    sequential step); each line's own steps stay in order, so the results are exact.
    """
    buf = _tally_empty(xb, half, 1)
    buf[0] = 0 if summation else 1
    row = lo
    while row + 4 <= hi:
        p0, q0 = _offsets(row, ksz, kxs, kos)
        p1, q1 = _offsets(row + 1, ksz, kxs, kos)
        p2, q2 = _offsets(row + 2, ksz, kxs, kos)
        p3, q3 = _offsets(row + 3, ksz, kxs, kos)
        p0, p1, p2, p3 = p0 + xo, p1 + xo, p2 + xo, p3 + xo
        q0, q1, q2, q3 = q0 + oo, q1 + oo, q2 + oo, q3 + oo
        s0 = s1 = s2 = s3 = buf[0]
        for _ in range(n):
            v0, v1 = _element(xb[p0], half), _element(xb[p1], half)
            v2, v3 = _element(xb[p2], half), _element(xb[p3], half)
            if exclusive:
                _put(ob, q0, _tally(s0, summation), half)
                _put(ob, q1, _tally(s1, summation), half)
                _put(ob, q2, _tally(s2, summation), half)
                _put(ob, q3, _tally(s3, summation), half)
            s0 = _step(s0, v0, summation, half, xb)
            s1 = _step(s1, v1, summation, half, xb)
            s2 = _step(s2, v2, summation, half, xb)
            s3 = _step(s3, v3, summation, half, xb)
            if not exclusive:
                _put(ob, q0, _tally(s0, summation), half)
                _put(ob, q1, _tally(s1, summation), half)
                _put(ob, q2, _tally(s2, summation), half)
                _put(ob, q3, _tally(s3, summation), half)
            p0, p1, p2, p3 = p0 + sx, p1 + sx, p2 + sx, p3 + sx
            q0, q1, q2, q3 = q0 + so, q1 + so, q2 + so, q3 + so
        row += 4
    for r in range(row, hi):
        xoff, ooff = _offsets(r, ksz, kxs, kos)
        p = xoff + xo
        q = ooff + oo
        s = buf[0]
        for _ in range(n):
            v = _element(xb[p], half)
            if exclusive:
                _put(ob, q, _tally(s, summation), half)
                s = _step(s, v, summation, half, xb)
            else:
                s = _step(s, v, summation, half, xb)
                _put(ob, q, _tally(s, summation), half)
            p += sx
            q += so


@njit(cache=True, nogil=True)
def _scan4(a0, a1, a2, a3, o0, o1, o2, o3, start, half, summation, exclusive, like):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Four contiguous lines scanned together (slices of equal length; in place where o is a)."""
    s0 = s1 = s2 = s3 = start
    if exclusive:
        for i in range(a0.size):
            v0, v1, v2, v3 = _element(a0[i], half), _element(a1[i], half), _element(a2[i], half), _element(a3[i], half)
            _put(o0, i, _tally(s0, summation), half)
            _put(o1, i, _tally(s1, summation), half)
            _put(o2, i, _tally(s2, summation), half)
            _put(o3, i, _tally(s3, summation), half)
            s0 = _step(s0, v0, summation, half, like)
            s1 = _step(s1, v1, summation, half, like)
            s2 = _step(s2, v2, summation, half, like)
            s3 = _step(s3, v3, summation, half, like)
    else:
        for i in range(a0.size):
            s0 = _step(s0, _element(a0[i], half), summation, half, like)
            s1 = _step(s1, _element(a1[i], half), summation, half, like)
            s2 = _step(s2, _element(a2[i], half), summation, half, like)
            s3 = _step(s3, _element(a3[i], half), summation, half, like)
            _put(o0, i, _tally(s0, summation), half)
            _put(o1, i, _tally(s1, summation), half)
            _put(o2, i, _tally(s2, summation), half)
            _put(o3, i, _tally(s3, summation), half)


@njit(cache=True, nogil=True)
def _cumulative_lines(xb, xo, ob, oo, ksz, kxs, kos, n, half, summation, exclusive, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Contiguous lines scanned forwards, four at a time through slices (loops LLVM keeps tight)."""
    buf = _tally_empty(xb, half, 1)
    buf[0] = 0 if summation else 1
    row = lo
    while row + 4 <= hi:
        p0, q0 = _offsets(row, ksz, kxs, kos)
        p1, q1 = _offsets(row + 1, ksz, kxs, kos)
        p2, q2 = _offsets(row + 2, ksz, kxs, kos)
        p3, q3 = _offsets(row + 3, ksz, kxs, kos)
        p0, p1, p2, p3 = p0 + xo, p1 + xo, p2 + xo, p3 + xo
        q0, q1, q2, q3 = q0 + oo, q1 + oo, q2 + oo, q3 + oo
        _scan4(
            xb[p0 : p0 + n], xb[p1 : p1 + n], xb[p2 : p2 + n], xb[p3 : p3 + n],
            ob[q0 : q0 + n], ob[q1 : q1 + n], ob[q2 : q2 + n], ob[q3 : q3 + n],
            buf[0], half, summation, exclusive, xb,
        )  # fmt: skip
        row += 4
    if row < hi:
        _cumulative_rows(xb, xo, ob, oo, ksz, kxs, kos, n, 1, 1, half, summation, exclusive, row, hi)


@njit(cache=True, nogil=True)
def _cumulative_tiles(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    xb, xo, ob, oo, ksz, kxs, kos, csz, cxs, cos, width, n, sx, so, half, summation, exclusive, lo, hi
):
    """Tiles of ``width`` lines along the kept axis ``c``, scanned together (lines along an outer axis)."""
    ntiles = (csz + width - 1) // width
    acc = _tally_empty(xb, half, width)
    for task in range(lo, hi):
        w, p, q = _tile(task, ntiles, width, csz, ksz, kxs, kos, xo, oo, cxs, cos)
        for j in range(w):
            acc[j] = 0 if summation else 1
        for _ in range(n):
            for j in range(w):
                v = _element(xb[p + j * cxs], half)
                s = acc[j]
                if exclusive:
                    _put(ob, q + j * cos, _tally(s, summation), half)
                    acc[j] = _step(s, v, summation, half, xb)
                else:
                    s = _step(s, v, summation, half, xb)
                    acc[j] = s
                    _put(ob, q + j * cos, _tally(s, summation), half)
            p += sx
            q += so


# -- kernels: TOP_K ------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _float32_sort_key(v):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """A signed int32 key of float32 bits (int32) in :func:`_sort_key`'s order, integer operations only."""
    k = np.int32(v ^ ((v >> np.int32(31)) & np.int32(0x7FFFFFFF)))  # the floats' order, -0 below +0
    magnitude = v & np.int32(0x7FFFFFFF)
    k = np.int32(0) if magnitude == np.int32(0) else k  # -0 as +0
    return np.int32(0x7FFFFFFF) if magnitude > np.int32(0x7F800000) else k  # every NaN above +inf


@njit(cache=True, nogil=True)
def _block_keys(xb, p, sx, m, half, bits32, flip, keys):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """keys[:m] = the keys of the m elements xb[p], xb[p + sx], ... xor ``flip`` (keys' type: int32 for ``bits32``)."""
    if bits32 and sx == 1:
        r = xb[p : p + m]
        for i in range(m):
            keys[i] = _float32_sort_key(r[i]) ^ flip
    elif bits32:
        for i in range(m):
            keys[i] = _float32_sort_key(xb[p + i * sx]) ^ flip
    else:
        for i in range(m):
            keys[i] = _sort_key(xb[p + i * sx], half) ^ np.uint64(flip)


@njit(cache=True, nogil=True)
def _least(r):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """The least of the keys in the 1-D slice ``r`` (a reduction that vectorises)."""
    m = r[0]
    for i in range(1, r.size):
        m = r[i] if r[i] < m else m
    return m


@njit(cache=True, nogil=True)
def _top_k_rows(xb, xo, vb, vo, ib, io, ksz, kxs, kvs, kis, n, sx, sv, si, k, half, largest, bits32, key_like, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Lines lo .. hi - 1: the K elements first in key order (ties by ascending index), values copied.

    Each line's keys are made first (a loop that vectorises). Up to SMALL_K, a sorted
    insertion buffer of the K best takes them in index order; a run of TOP_K_BLOCK keys
    none of which is below the K-th best's is skipped whole (equal keys keep the earlier
    index). ``bits32``: ``xb`` holds float32 bits as int32, keyed by :func:`_float32_sort_key`
    (int32 keys, ``key_like`` int32), else uint64 keys of :func:`_sort_key`.
    """
    keys = np.empty(n, key_like.dtype)
    top_key = np.empty(k, key_like.dtype)
    top_index = np.empty(k, np.int64)
    flips = np.zeros(1, key_like.dtype)
    flips[0] = -1 if largest else 0  # all bits set: xor reverses the keys' order
    flip = flips[0]
    for row in range(lo, hi):
        xoff, voff = _offsets(row, ksz, kxs, kvs)
        _, ioff = _offsets(row, ksz, kxs, kis)
        p = xoff + xo
        _block_keys(xb, p, sx, n, half, bits32, flip, keys)  # ascending keys: largest first when flipped
        if k <= SMALL_K:
            for i in range(k):  # the first K, each inserted (equal keys after the earlier)
                key = keys[i]
                pos = i
                while pos > 0 and top_key[pos - 1] > key:
                    top_key[pos] = top_key[pos - 1]
                    top_index[pos] = top_index[pos - 1]
                    pos -= 1
                top_key[pos] = key
                top_index[pos] = i
            worst = top_key[k - 1]
            for b0 in range(k, n, TOP_K_BLOCK):
                b1 = min(b0 + TOP_K_BLOCK, n)
                if _least(keys[b0:b1]) >= worst:
                    continue  # no key below the K-th best's: none enters
                for i in range(b0, b1):
                    key = keys[i]
                    if key >= worst:
                        continue  # equal keys keep the earlier index
                    pos = k - 1
                    while pos > 0 and top_key[pos - 1] > key:
                        top_key[pos] = top_key[pos - 1]
                        top_index[pos] = top_index[pos - 1]
                        pos -= 1
                    top_key[pos] = key
                    top_index[pos] = i
                    worst = top_key[k - 1]
        else:
            order = np.argsort(keys, kind="mergesort")  # stable: equal keys by ascending index
            for t in range(k):
                top_index[t] = order[t]
        for t in range(k):
            i = top_index[t]
            vb[vo + voff + t * sv] = xb[p + i * sx]
            ib[io + ioff + t * si] = i


# -- layout ----------------------------------------------------------------------------------------------


def _memory(a: Array, writeable: bool = False) -> tuple[Array, int, list[int]]:
    """(1-D view of ``a``'s memory from its lowest-addressed element, ``a[0, ...]``'s offset in it, element strides).

    ``a``'s strides must be multiples of its itemsize (:func:`_aligned`). Inputs are
    viewed read-only whatever their flags, so each kernel is compiled once per type.
    """
    item = a.itemsize
    strides = [s // item for s in a.strides]
    if a.flags.c_contiguous:  # the common case, without as_strided's Python
        base = a.reshape(-1)
        if base.flags.writeable and not writeable:
            base = base.view()
            base.flags.writeable = False
        return base, 0, strides
    origin = sum((n - 1) * -s for n, s in zip(a.shape, strides) if s < 0)
    low = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides)]
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(a.shape, strides))
    base = np.lib.stride_tricks.as_strided(low, (span,), (item,), writeable=writeable)
    return base, origin, strides


def _aligned(a: Array) -> bool:
    return all(s % a.itemsize == 0 for s in a.strides)


def _merge(dims: Sequence[tuple[int, Sequence[int]]]) -> list[tuple[int, tuple[int, ...]]]:
    """Dims (size, strides of each array), outer to inner, size-1 dims dropped, adjacent ones merged.

    Two dims merge where every array's strides allow it, so that row-major order over the
    result visits the elements in the same order.
    """
    merged: list[tuple[int, tuple[int, ...]]] = []
    for n, strides in dims:
        if n == 1:
            continue
        if merged:
            m, inner = merged[-1]
            # the previous (outer) dim merges into this one if it steps over a whole run of it
            if all(s_outer == s * n for s_outer, s in zip(inner, strides)):
                merged[-1] = (m * n, tuple(strides))
                continue
        merged.append((n, tuple(strides)))
    return merged


def _arrays(dims: list[tuple[int, tuple[int, ...]]], count: int) -> tuple[Array, ...]:
    """int64 arrays (sizes, strides of array 0, ...), a single size-1 dim when ``dims`` is empty."""
    if not dims:
        return (np.ones(1, np.int64), *(np.zeros(1, np.int64) for _ in range(count)))
    return (
        np.array([n for n, _ in dims], np.int64),
        *(np.array([s[i] for _, s in dims], np.int64) for i in range(count)),
    )


def _split_column(
    kept: list[tuple[int, tuple[int, ...]]],
) -> tuple[list[tuple[int, tuple[int, ...]]], tuple[int, tuple[int, ...]]]:
    """(the other kept dims, the kept dim of least input stride): the tile loop's column."""
    c = min(range(len(kept)), key=lambda i: abs(kept[i][1][0]))
    return kept[:c] + kept[c + 1 :], kept[c]


def _tile_width(csz: int, rows: int) -> int:
    """The tile loop's width: the kept axis in about one tile per thread (fewer when other kept rows abound)."""
    parts = max(1, -(-thread_count() // max(rows, 1)))
    return max(TILE_MIN, min(TILE_MAX, -(-csz // parts)))


def _readable(x: Array, *outs: Array) -> Array:
    """``x``, or a copy when an output overlaps it (an output is written while inputs are still read)."""
    return x.copy() if any(np.may_share_memory(x, o) for o in outs) or not _aligned(x) else x


def _output_memory(out: Array, index_view: bool) -> tuple[Array, int, list[int], Any]:
    """:func:`_memory` of an output, writeable, as its kernel reads it (FLOAT16 bits; UINT indices as INT)."""
    base, origin, strides = _memory(out, writeable=True)
    if index_view and base.dtype.kind == "u":  # UINT32/UINT64 indices are stored as their bits
        base = base.view(np.dtype(f"i{base.itemsize}"))
        return base, origin, strides, None
    view, half = kernel_view(base)
    return view, origin, strides, half


class _Target:
    """An output written through its memory, or through an aligned scratch array copied in afterwards."""

    def __init__(self, out: Array, index_view: bool = False) -> None:
        self.out = out
        self.array = out if _aligned(out) else np.empty(out.shape, out.dtype)
        self.index_view = index_view

    def memory(self) -> tuple[Array, int, list[int], Any]:
        return _output_memory(self.array, self.index_view)

    def done(self) -> None:
        if self.array is not self.out:
            np.copyto(self.out, self.array)


# -- REDUCE, ARGMAX, ARGMIN ----------------------------------------------------------------------


def _reduction_dims(x: Array, axes: tuple[int, ...], xs: list[int], os_: list[int]) -> tuple[Any, Any]:
    reduced = _merge([(x.shape[a], (xs[a],)) for a in axes])
    kept_axes = sorted((i for i in range(x.ndim) if i not in axes), key=lambda i: -abs(xs[i]))
    kept = _merge([(x.shape[i], (xs[i], os_[i])) for i in kept_axes])
    return reduced, kept


class _Plan:
    """What :func:`_reduction` works out from a call's layout alone: the kernel and its arguments but the arrays."""

    __slots__ = ("args", "items", "kernel", "keys", "oo", "xo")

    def __init__(self, kernel: Any, items: int, xo: int, oo: int, args: tuple[Any, ...], keys: bool) -> None:
        self.kernel, self.items, self.xo, self.oo, self.args, self.keys = kernel, items, xo, oo, args, keys


_PLANS: dict[tuple[Any, ...], _Plan] = {}
"""Plans by layout (shapes, strides, dtypes, axes, kernels and parameters). A repeat call skips
the layout work: after a 256 MiB reduction has streamed through the caches, that Python took
about 0.3 ms of the call's 8 ms, cold (docs/performance.md)."""


def _plan(
    x: Array,
    target: _Target,
    axes: tuple[int, ...],
    kernels: tuple[Any, Any],
    params: tuple[Any, ...],
    keyed: tuple[Any, Any, tuple[Any, ...]] | None,
) -> _Plan:
    xb, xo, xs = _memory(x)
    _, half = kernel_view(xb)
    _, oo, os_, _ = target.memory()
    reduced, kept = _reduction_dims(x, axes, xs, os_)
    rsz, rxs = _arrays(reduced, 1)
    min_reduced = min((abs(s[0]) for _, s in reduced), default=0)
    if kept and (not reduced or abs(_split_column(kept)[1][1][0]) < min_reduced):
        others, (csz, (cxs, cos)) = _split_column(kept)
        ksz, kxs, kos = _arrays(others, 2)
        width = _tile_width(csz, int(np.prod(ksz)))
        count = int(np.prod(ksz)) * -(-csz // width)
        if keyed is not None and cxs == 1:
            return _Plan(keyed[1], count, xo, oo, (ksz, kxs, kos, csz, cos, width, rsz, rxs, *keyed[2]), True)
        args = (ksz, kxs, kos, csz, cxs, cos, width, rsz, rxs, half, *params)
        return _Plan(kernels[1], count, xo, oo, args, False)
    ksz, kxs, kos = _arrays(kept, 2)
    rows = int(np.prod(ksz))
    if keyed is not None and len(reduced) == 1 and rxs[0] == 1:
        return _Plan(keyed[0], rows, xo, oo, (ksz, kxs, kos, rsz, rxs, *keyed[2]), True)
    return _Plan(kernels[0], rows, xo, oo, (ksz, kxs, kos, rsz, rxs, half, *params), False)


def _reduction(
    x: Array,
    out: Array,
    axes: tuple[int, ...],
    kernels: tuple[Any, Any],
    params: tuple[Any, ...],
    *,
    index: bool,
    keyed: tuple[Any, Any, tuple[Any, ...]] | None = None,
) -> Repeat | None:
    """Run a (rows, tiles) kernel pair: tiles where a kept axis lies inside the reduced ones in memory.

    ``keyed``: (rows, tiles, their parameters), float32 MAX / MIN kernels on the elements'
    bits, run instead where the elements they read are contiguous (each line, or each tile's
    columns). Returns the call's repeat (``_repeat``) unless it read a copy of the input or
    wrote through a scratch output.
    """
    if out.size == 0:
        return NOTHING
    readable = _readable(x, out)
    target = _Target(out, index_view=index)
    key: tuple[Any, ...] = (readable.shape, readable.strides, readable.dtype)
    key += (target.array.shape, target.array.strides, target.array.dtype)
    key += (axes, kernels, params, index, keyed, thread_count())
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= 256:
            _PLANS.clear()
        plan = _PLANS[key] = _plan(readable, target, axes, kernels, params, keyed)
    _launch(plan, index, readable, target.array)
    target.done()
    if readable is not x or target.array is not out:
        return None
    return Repeat(lambda ins, outs: _launch(plan, index, ins["InputTensor"], outs["OutputTensor"]))


def _launch(plan: _Plan, index: bool, x: Array, out: Array) -> None:
    """Run ``plan`` on ``x`` and ``out`` (the arrays, or arrays of the layouts, it was planned for)."""
    xb = kernel_view(_memory(x)[0])[0]
    ob = _output_memory(out, index)[0]
    if plan.keys:  # float32 MAX / MIN read and write the bits
        xb, ob = xb.view(np.int32), ob.view(np.int32)
    run_kernel(plan.kernel, plan.items, x.size, xb, plan.xo, ob, plan.oo, *plan.args)


def _reduce(x: Array, out: Array, axes: tuple[int, ...], fn: int, op: int, post: int) -> Repeat | None:
    return _reduction(x, out, axes, (_reduce_rows, _reduce_tiles), (fn, op, post), index=False)


def _extreme(x: Array, out: Array, axes: tuple[int, ...], largest: bool) -> Repeat | None:
    """MAX / MIN: float32 on keys where the elements lie contiguous, else the value kernels."""
    fn = FN_MAX if largest else FN_MIN
    op = (OP_NAN_LOW if largest else OP_NAN_HIGH) if x.dtype.kind == "f" else OP_PLAIN
    keyed = (_extreme_rows, _extreme_tiles, (largest,)) if x.dtype == np.float32 else None
    return _reduction(x, out, axes, (_reduce_rows, _reduce_tiles), (fn, op, POST_NONE), index=False, keyed=keyed)


def _arg(x: Array, out: Array, axes: tuple[int, ...], largest: bool, decreasing: bool) -> Repeat | None:
    return _reduction(x, out, axes, (_arg_rows, _arg_tiles), (largest, decreasing), index=True)


_FLOAT_FUNCTIONS = {
    # function: (element transform, last step)
    "SUM": (OP_PLAIN, POST_PLUS_ZERO),
    "AVERAGE": (OP_PLAIN, POST_AVERAGE),
    "L1": (OP_ABS, POST_NONE),
    "SUM_SQUARE": (OP_SQUARE, POST_NONE),
    "L2": (OP_SQUARE, POST_SQRT),
    "LOG_SUM": (OP_PLAIN, POST_LOG),
    "LOG_SUM_EXP": (OP_EXP, POST_LOG),
}


def run_reduce(
    desc: Any, inputs: Mapping[str, Array], outputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> Repeat | None:
    """REDUCE: ``Function`` over the set of ``Axes`` into the output view; returns the call's repeat."""
    x, out = inputs["InputTensor"], outputs["OutputTensor"]
    axes = rules.reduced_axes(desc)
    function = desc.function.name
    is_float = x.dtype.kind == "f"
    if function in rules.ARG_FUNCTIONS:
        return _arg(x, out, axes, function == "ARGMAX", decreasing=False)
    elif function in ("MAX", "MIN"):
        return _extreme(x, out, axes, function == "MAX")
    elif function == "MULTIPLY":
        return _reduce(x, out, axes, FN_PROD, OP_PLAIN, POST_NONE)
    elif is_float:
        op, post = _FLOAT_FUNCTIONS[function]
        return _reduce(x, out, axes, FN_SUM, op, post)
    elif function == "SUM":  # wraps around in the type's width
        return _reduce(x, out, axes, FN_SUM, OP_PLAIN, POST_NONE)
    else:
        raise UnsupportedError(f"{desc.dml_name}: Function {function} takes no integer tensor")


def run_arg(
    desc: Any, inputs: Mapping[str, Array], outputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> Repeat | None:
    """ARGMAX / ARGMIN: the index over the reduced axes, ties by ``AxisDirection``."""
    largest = desc.operator_type.name == "ARGMAX"
    decreasing = desc.axis_direction.name == "DECREASING"
    return _arg(inputs["InputTensor"], outputs["OutputTensor"], rules.reduced_axes(desc), largest, decreasing)


# -- CUMULATIVE_*, TOP_K ---------------------------------------------------------------------------


def _line_dims(x: Array, axis: int, xs: list[int], *others: list[int]) -> list[tuple[int, tuple[int, ...]]]:
    """The merged dims of every axis but ``axis`` (outer to inner by input stride), strides of x and ``others``."""
    order = sorted((i for i in range(x.ndim) if i != axis), key=lambda i: -abs(xs[i]))
    return _merge([(x.shape[i], (xs[i], *(o[i] for o in others))) for i in order])


def run_cumulative(
    desc: Any, inputs: Mapping[str, Array], outputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> None:
    """CUMULATIVE_SUMMATION / CUMULATIVE_PRODUCT: a running tally in the input type along ``Axis``."""
    x, out = inputs["InputTensor"], outputs["OutputTensor"]
    if out.size == 0:
        return
    axis = int(desc.axis)
    summation = desc.operator_type.name == "CUMULATIVE_SUMMATION"
    exclusive = bool(desc.has_exclusive_sum if summation else desc.has_exclusive_product)
    decreasing = desc.axis_direction.name == "DECREASING"
    same_layout = (
        x.__array_interface__["data"][0] == out.__array_interface__["data"][0]
        and x.strides == out.strides
        and x.dtype == out.dtype
    )
    if not same_layout:  # in place (same layout) reads each element before writing it
        x = _readable(x, out)
    target = _Target(out)
    xb, xo, xs = _memory(x)
    xb, half = kernel_view(xb)
    ob, oo, os_, _ = target.memory()
    n, sx, so = x.shape[axis], xs[axis], os_[axis]
    if decreasing:  # scan from the last element backwards
        xo += (n - 1) * sx
        oo += (n - 1) * so
        sx, so = -sx, -so
    kept = _line_dims(x, axis, xs, os_)
    if kept and n > 1 and abs(_split_column(kept)[1][1][0]) < abs(sx):
        others, (csz, (cxs, cos)) = _split_column(kept)
        ksz, kxs, kos = _arrays(others, 2)
        width = _tile_width(csz, int(np.prod(ksz)))
        count = int(np.prod(ksz)) * -(-csz // width)
        tile_args = (csz, cxs, cos, width, n, sx, so, half, summation, exclusive)
        run_kernel(_cumulative_tiles, count, x.size, xb, xo, ob, oo, ksz, kxs, kos, *tile_args)
    else:
        ksz, kxs, kos = _arrays(kept, 2)
        lines = int(np.prod(ksz))
        if sx == 1 and so == 1:
            run_kernel(_cumulative_lines, lines, x.size, xb, xo, ob, oo, ksz, kxs, kos, n, half, summation, exclusive)
        else:
            line_args = (n, sx, so, half, summation, exclusive)
            run_kernel(_cumulative_rows, lines, x.size, xb, xo, ob, oo, ksz, kxs, kos, *line_args)
    target.done()


def run_top_k(
    desc: Any, inputs: Mapping[str, Array], outputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> None:
    """TOP_K / TOP_K1: the ``K`` largest (TOP_K, TOP_K1 DECREASING) or smallest values along ``Axis``."""
    x = inputs["InputTensor"]
    values, indices = outputs["OutputValueTensor"], outputs["OutputIndexTensor"]
    if values.size == 0:
        return
    axis, k = int(desc.axis), int(desc.k)
    largest = desc.operator_type.name == "TOP_K" or desc.axis_direction.name == "DECREASING"
    x = _readable(x, values, indices)
    value_target, index_target = _Target(values), _Target(indices, index_view=True)
    xb, xo, xs = _memory(x)
    xb, half = kernel_view(xb)
    vb, vo, vs, _ = value_target.memory()  # FLOAT16 values as their bits, as the input
    ib, io, is_, _ = index_target.memory()
    bits32 = xb.dtype == np.float32  # keyed on the bits (and values copied as them)
    if bits32:
        xb, vb = xb.view(np.int32), vb.view(np.int32)
    kept = _line_dims(x, axis, xs, vs, is_)
    ksz, kxs, kvs, kis = _arrays(kept, 3)
    n = x.shape[axis]
    key_like = np.empty(0, np.int32 if bits32 else np.uint64)
    args = (
        xb,
        xo,
        vb,
        vo,
        ib,
        io,
        ksz,
        kxs,
        kvs,
        kis,
        n,
        xs[axis],
        vs[axis],
        is_[axis],
        k,
        half,
        largest,
        bits32,
        key_like,
    )
    run_kernel(_top_k_rows, int(np.prod(ksz)), x.size, *args)
    value_target.done()
    index_target.done()


OPERATORS: dict[str, Callable[..., Any]] = {
    "REDUCE": run_reduce,
    "ARGMAX": run_arg,
    "ARGMIN": run_arg,
    "CUMULATIVE_SUMMATION": run_cumulative,
    "CUMULATIVE_PRODUCT": run_cumulative,
    "TOP_K": run_top_k,
    "TOP_K1": run_top_k,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation on the CPU."""
