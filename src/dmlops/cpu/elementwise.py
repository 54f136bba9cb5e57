"""The element-wise and activation family on the CPU: fast paths, one generic tiled path, row softmax.

Every operator of the family runs through :func:`run_elementwise`, which picks, per call:

* a **fast path** (``_FAST``) when the types allow one: a NumPy ufunc, or a numba
  ``@vectorize`` ufunc for fused selections (MAX/MIN's NaN and tie rules, RELU, ADD1
  with a fused RELU) and GELU/ERF, writing straight into the output view in the
  storage precision. Those computed exactly in float32 (IDENTITY, ABS, NEGATE,
  FLOOR, CEIL, ROUND, SIGN, ADD, SUBTRACT, MULTIPLY, DIVIDE, SQRT, RECIP, MAX, MIN,
  CLIP, THRESHOLD, DIFFERENCE_SQUARE, RELU, fused RELU, ScaleBias) are bit-identical
  to the reference's float64-then-round: IEEE float32 ``+ - * / sqrt`` are correctly
  rounded, and float64 has more than twice float32's precision plus two bits, so
  rounding twice gives the same float32 (the same argument covers FLOAT16 computed
  in float32). Transcendental ones (EXP, LOG, the trigonometric and hyperbolic
  functions, POW, SIGMOID, TANH, GELU, ERF, SOFTMAX) are within the directml
  differential's tolerances (``tests/oracles/elementwise.py``'s TOLERANCE);
* the **generic path** for everything else: the operator's formula from
  :mod:`dmlops.descs._elementwise_formulas` (the table the NumPy reference applies:
  float64, DirectML's 32-bit integer registers) on tiles of ``BLOCK`` elements, each stored (rounded once) into
  its output tile, so temporaries never exceed a few hundred KiB;
* the **row path** for SOFTMAX, LOG_SOFTMAX, HARDMAX (and their ``*1`` versions over
  ``Axes``): the reduced axes moved last, blocks of rows computed in float32 (float64
  for FLOAT64) in the output itself; float32 SOFTMAX and LOG_SOFTMAX by a numba kernel
  (:func:`_row_kernels`: one block of rows per thread, three passes over each row in cache).

Layout: inputs are the logical views :func:`dmlops._numpy_io.bind_all` makes (a
broadcast operand has 0-strides, any other stride works), the output the view its
TensorDesc addresses. Dimensions that every tensor lets merge are merged first (so a
contiguous call is one 1-D loop, a broadcast row one 2-D loop), then the work is split
into contiguous chunks over ``NUMBA_NUM_THREADS`` threads (NumPy and numba ufuncs
release the GIL). A one-pass kernel with a row read through 0-strides runs on
contiguous tiles of rows instead (:func:`_run_row_broadcast`), and a large contiguous
IDENTITY copies its bits through NumPy's integer ``positive`` loop (faster than its copy).
An output bound to an input's memory (in-place) works: an input with exactly the
output's layout is read tile by tile before the tile is written (copied per tile where a
formula takes several passes), any other overlap is copied first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._numpy_io import store
from ..descs import elementwise as rules
from ..descs._elementwise_formulas import FUSED, RULES, scale_bias, unsupported
from ..descs.elementwise import LOG_SOFTMAX_MIN_SUM
from ..enums import FeatureLevel, TensorDataType
from . import _stream, _vector_math
from ._copy import copy_into
from ._llvm import wide_vectors
from ._repeat import NOTHING, Repeat
from ._threads import PYTHON_CHUNKS_PER_THREAD, on_threads, thread_count
from ._vector_lines import STEP as LINE_STEP

Array = NDArray[Any]
Kernel = Callable[[Array, list[Any]], None]
"""``kernel(out_tile, input_tiles)``: writes one tile of the output."""
F32 = np.float32

BLOCK = 1 << 16
"""Elements per tile of a multi-pass formula (its temporaries stay in the L2 cache)."""
ROW_BLOCK = 1 << 16
"""Elements per block of rows of the SOFTMAX family."""
SUM_BLOCK = _vector_math.SUM_BLOCK
"""Elements per float32 partial sum of the scalar SOFTMAX / LOG_SOFTMAX rows (the blocks' sums
are added in float64), as the vector rows'."""
PARALLEL_MIN = 1 << 16
"""Below this many output elements a call runs on the calling thread."""


# -- layout and threads -----------------------------------------------------------------------


def _collapse(arrays: list[Array]) -> list[Array]:
    """Same-shape views with size-1 axes dropped and adjacent axes merged where every array allows it."""
    shape = arrays[0].shape
    axes = [i for i, n in enumerate(shape) if n != 1] or [len(shape) - 1] if shape else []
    if not axes:
        return [a.reshape(1) for a in arrays]
    dims: list[tuple[int, list[int]]] = [(shape[axes[-1]], [a.strides[axes[-1]] for a in arrays])]
    for i in reversed(axes[:-1]):
        inner_n, inner_strides = dims[-1]
        strides = [a.strides[i] for a in arrays]
        if all(s == t * inner_n for s, t in zip(strides, inner_strides)):
            dims[-1] = (shape[i] * inner_n, inner_strides)
        else:
            dims.append((shape[i], strides))
    dims.reverse()
    new_shape = tuple(n for n, _ in dims)
    return [
        np.lib.stride_tricks.as_strided(a, new_shape, tuple(s[k] for _, s in dims), writeable=a.flags.writeable)
        for k, a in enumerate(arrays)
    ]


def _tiles(shape: tuple[int, ...], block: int) -> list[tuple[slice, ...]]:
    """Index tuples of disjoint tiles of about ``block`` elements covering ``shape``, in memory order."""
    if not shape:
        return [()]
    inner = math.prod(shape[1:])
    if inner > block:
        return [(slice(i, i + 1), *t) for i in range(shape[0]) for t in _tiles(shape[1:], block)]
    rows = max(1, block // max(inner, 1))
    return [(slice(s, min(s + rows, shape[0])),) for s in range(0, shape[0], rows)]


def _run(shape: tuple[int, ...], work: Callable[[tuple[slice, ...]], None], block: int | None) -> None:
    """``work`` over tiles of ``shape`` (``block`` elements, or a few per thread when None), threaded.

    The threads claim runs of tiles as they come free (:func:`._threads.on_threads`).
    """
    size = math.prod(shape)
    threads = thread_count() if size >= PARALLEL_MIN else 1
    per_tile = block if block is not None else -(-size // (threads * PYTHON_CHUNKS_PER_THREAD))
    tiles = _tiles(shape, per_tile)

    def each(lo: int, hi: int) -> None:
        for t in tiles[lo:hi]:
            work(t)

    on_threads(each, len(tiles), threads)


def _same_layout(a: Array, b: Array) -> bool:
    return bool(
        a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        and a.strides == b.strides
        and a.dtype.itemsize == b.dtype.itemsize
    )


# -- numba ufuncs (compiled on first use, cached on disk) -----------------------------------------

# The jitted helpers that other jitted functions call, bound by the factories below. Callers
# reach them as module globals, never as closure variables: numba's disk cache keys a function
# by its closure's pickled contents, and a dispatcher pickles differently in every process (a
# closure over one recompiled its caller in every new process, 2-3 s).
_LN2_SPLIT: Any = None
_EXP_TAYLOR: Any = None
_EXP_CORE: Any = None
_EXP_TAIL: Any = None
_EXP32: Any = None
_EXP32_CALL: Any = None
_ERF_RATIONAL: Any = None
_ROW_MAX: Any = None
_EXP_SUM: Any = None
_SOFTMAX_EXP: Any = None
_SOFTMAX_EXP_SUM: Any = None
_SOFTMAX_PASS: Any = None
_VECTOR_SCALED: Any = None
_LINE_MAX: Any = None


@cache
def _ln2_split() -> Any:
    """``(n, r)`` with ``y = n ln2 + r``: the range reduction of both float32 exps, inlined into callers.

    Also binds ``_EXP_TAYLOR``, the two exps' common polynomial tail.
    """
    global _LN2_SPLIT, _EXP_TAYLOR
    from numba import njit

    f32 = np.float32

    def split(c, y):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        # n = round(c / ln2) (c: y itself, or y clamped), r = y - n ln2 with Cody-Waite's exact
        # split of ln2 (|r| <= 0.347 for c = y)
        n = np.floor(c * f32(1.4426950408889634) + f32(0.5))
        return n, (y - n * f32(0.693359375)) - n * f32(-2.12194440e-4)

    def taylor(p, r):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        # exp(r)'s Taylor polynomial by Horner's rule from its r^6 coefficient, p, down
        p = p * r + f32(1 / 120.0)
        p = p * r + f32(1 / 24.0)
        p = p * r + f32(1 / 6.0)
        p = p * r + f32(0.5)
        p = p * r + f32(1.0)
        return p * r + f32(1.0)

    _LN2_SPLIT = njit(inline="always", fastmath={"contract"})(split)
    _EXP_TAYLOR = njit(inline="always", fastmath={"contract"})(taylor)
    return _LN2_SPLIT


@cache
def _exp32_core() -> Any:
    """exp(y) in float32 registers for y in [-104, 89] (no NaN, no overflow test), inlined into callers."""
    global _EXP_CORE
    from numba import njit

    f32 = np.float32
    _ln2_split()

    def core(y):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        # vectorisable (no libm call): y = n ln2 + r (_ln2_split), exp(r) by its degree-7 Taylor
        # polynomial on |r| <= 0.347, 2^n as two exponent-field factors (so subnormal results
        # underflow gradually); relative error < 1e-7 on normal results
        n, r = _LN2_SPLIT(y, y)
        p = _EXP_TAYLOR(f32(1 / 5040.0) * r + f32(1 / 720.0), r)
        k = np.int32(n)
        h = k >> 1
        return p * np.int32((h + 127) << 23).view(np.float32) * np.int32((k - h + 127) << 23).view(np.float32)

    _EXP_CORE = njit(inline="always", fastmath={"contract"})(core)
    return _EXP_CORE


@cache
def _exp32_tail_body() -> Callable[[Any], Any]:
    """exp(y) for y <= 0 (or NaN) in float32 registers: plain Python, for ``njit`` to compile inlined or as a call.

    Cheaper than :func:`_exp32_core` (which serves every float32 argument), with the same
    range reduction: for SOFTMAX's ``x - max`` and GELU's ``-x^2 / 2``.
    """
    f32, i32 = np.float32, np.int32
    _ln2_split()

    def tail(y):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        # No overflow side; results below 2^-126 (y < -87.33654) are +0 where the reference keeps
        # a subnormal (an absolute difference under 2^-126, inside TOLERANCE's absolute 1e-6; a
        # -inf argument gives exactly 0); a degree-6 Taylor polynomial on |r| <= 0.347 (relative
        # error < 2e-7, against 1e-7 for the degree-7 one; TOLERANCE is 2e-4 relative); one
        # exponent factor, as 2^n >= 2^-126. NaN: the factor comes from a clamped copy (a
        # number), the NaN propagates through r.
        n, r = _LN2_SPLIT(y if y > f32(-88.0) else f32(-88.0), y)
        v = _EXP_TAYLOR(f32(1 / 720.0), r) * np.int32((np.int32(n) + i32(127)) << i32(23)).view(np.float32)
        return f32(0.0) if y < f32(-87.33654) else v

    return tail


@cache
def _exp32_tail() -> Any:
    """:func:`_exp32_tail_body` inlined into its caller (GELU: about 12 % less time than the general exp)."""
    global _EXP_TAIL
    from numba import njit

    _EXP_TAIL = njit(inline="always", fastmath={"contract"})(_exp32_tail_body())
    return _EXP_TAIL


@cache
def _exp32_body() -> Callable[[Any], Any]:
    """The scalar float32 exp: plain Python, for ``njit`` to compile inlined or as a call."""
    global _EXP_CORE
    f32 = np.float32
    _exp32_core()

    def exp32(x):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        # :func:`_exp32_core` on the clamped argument: inf above 88.72284, NaN stays NaN
        if x != x:
            return x
        v = _EXP_CORE(min(max(x, f32(-104.0)), f32(89.0)))
        return f32(np.inf) if x > f32(88.72284) else v

    return exp32


@cache
def _exp32() -> Any:
    """:func:`_exp32_body` inlined into its caller (whose fast-math flags it then takes: ``contract`` only).

    Not cached itself (its callers are): the same function's cache files are :func:`_exp32_call`'s.
    """
    global _EXP32
    from numba import njit

    _EXP32 = njit(inline="always", fastmath={"contract"})(_exp32_body())
    return _EXP32


@cache
def _exp32_call() -> Any:
    """:func:`_exp32_body` as a function of its own, for callers with other fast-math flags.

    LLVM inlines it keeping its own flags, so a caller may reassociate its sum (``reassoc``)
    without reassociating exp's range reduction.
    """
    global _EXP32_CALL
    from numba import njit

    _EXP32_CALL = njit(cache=True, fastmath={"contract"})(_exp32_body())
    return _EXP32_CALL


@cache
def _numba_ufuncs() -> dict[str, Any]:
    """The fused float ufuncs: one pass, no temporaries, exact where the docstring says so."""
    global _ERF_RATIONAL
    from numba import njit, vectorize

    sig1 = ["float32(float32)", "float64(float64)"]
    sig2 = ["float32(float32, float32)", "float64(float64, float64)"]

    def select_max(a, b):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        return b if (b > a or a != a) else a  # NaN loses to a number; a tie (-0, +0) gives A

    def select_min(a, b):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        return b if (b < a or a != a) else a

    def relu(x):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        return x if x > 0 else 0.0  # +0 for x <= 0 and for NaN

    def add_relu(a, b):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        s = a + b  # rounded to the type before the activation reads it
        return s if s > 0 else s * 0  # DirectML's fused RELU: x * (x > 0) (-0 for negatives, NaN stays)

    # ERF: erf(z) as a rational function on (-4, 4) (|z| >= 4: +-1 to float32 precision), evaluated
    # in float64 registers: |error| < 7e-8 (Eigen's float32 erf coefficients)
    alpha = (
        -2.72614225801306e-10,
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    )
    beta = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03)
    beta0 = -1.42647390514189e-02
    a0, a1, a2, a3, a4, a5, a6 = alpha
    b0, b1, b2, b3 = beta

    def erf_rational(v):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        if v >= 4.0:  # erf(4) = 1 - 1.5e-8
            return 1.0
        if v <= -4.0:
            return -1.0
        z = v
        z2 = z * z
        p = ((((((a0 * z2 + a1) * z2 + a2) * z2 + a3) * z2 + a4) * z2 + a5) * z2) + a6
        q = (((b0 * z2 + b1) * z2 + b2) * z2 + b3) * z2 + beta0
        return z * p / q

    _ERF_RATIONAL = njit(inline="always", fastmath={"contract"})(erf_rational)  # FMAs: faster, and closer
    f32 = np.float32
    _exp32()
    _exp32_core()
    _exp32_tail()

    def exp_f32(x):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        return _EXP32(x)

    def sigmoid_f32(x):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        return f32(1.0) / (f32(1.0) + _EXP32(-x))

    def erf32(x):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        return np.float32(_ERF_RATIONAL(np.float64(x)))

    def gelu32(x):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        # x * Phi(x) in float32 without cancellation: c = Phi(-|x|) = erfc(|x| / sqrt 2) / 2, then
        # x * c (x < 0) or x * (1 - c). erfc(t) = s P(s) exp(-t^2), s = 1 / (1 + 0.3275911 t)
        # (Abramowitz and Stegun 7.1.26: |error| < 1.5e-7, relative in the tail), exp vectorised
        # (_exp32_tail: beyond |x| = 13.2 c is 0, within TOLERANCE's absolute 1e-6).
        # Against the float64 reference: at most 0.15 of TOLERANCE's 1e-6 + 2e-4 |e| over every
        # float32 tested (the float32 erf rational above reached 1.06 near x = -5.6)
        t = abs(x) * f32(0.7071067811865476)
        s = f32(1.0) / (f32(1.0) + f32(0.3275911) * t)
        p = f32(1.061405429)
        p = p * s + f32(-1.453152027)
        p = p * s + f32(1.421413741)
        p = p * s + f32(-0.284496736)
        p = p * s + f32(0.254829592)
        c = f32(0.5) * s * p * _EXP_TAIL(-(t * t))  # t = inf: s = 0, so c = 0
        g = x * c if x < f32(0.0) else x * (f32(1.0) - c)  # -inf * 0: NaN, as the reference's
        return x if x != x else g

    built = {
        "max": vectorize(sig2, cache=True)(select_max),
        "min": vectorize(sig2, cache=True)(select_min),
        "relu": vectorize(sig1, cache=True)(relu),
        "add_relu": vectorize(sig2, cache=True)(add_relu),
        "exp": vectorize(["float32(float32)"], cache=True, fastmath={"contract"})(exp_f32),
        "sigmoid": vectorize(["float32(float32)"], cache=True, fastmath={"contract"})(sigmoid_f32),
        "erf": vectorize(["float32(float32)"], cache=True, fastmath={"contract"})(erf32),
        "gelu": vectorize(["float32(float32)"], cache=True, fastmath={"contract"})(gelu32),
    }
    # the NumPy ufuncs numba built, called without numba's Python wrapper (about 1 us a call, and a
    # large call makes one per tile); each planner calls its ufunc only with the types above
    ufuncs: dict[str, Any] = {name: _NumbaUfunc(fn.ufunc) for name, fn in built.items()}
    # the float32 transcendentals, compute-bound: loops on 64-byte vectors for contiguous tiles
    loop = _wide_loops(exp_f32, sigmoid_f32, erf32, gelu32)
    for code, name in enumerate(("exp", "sigmoid", "erf", "gelu")):
        ufuncs[name] = _WideUnary(built[name].ufunc, loop, code)
    return ufuncs


class _NumbaUfunc:
    """A ufunc numba built, called only with a C-contiguous ``out``.

    numba's ufunc loops (0.68.1) go wrong when every input is contiguous and the output is not:
    they write the output as if it were contiguous too, so a strided output gets the wrong
    elements and a reversed one is written past its end (heap corruption). A non-contiguous
    ``out`` is computed into a contiguous scratch array and copied (tests/test_cpu_wide_loops.py).
    """

    __slots__ = ("ufunc",)

    def __init__(self, ufunc: Any) -> None:
        self.ufunc = ufunc

    def __call__(self, *xs: Array, out: Array) -> None:
        if out.flags.c_contiguous:
            self.ufunc(*xs, out=out)
        else:
            scratch = np.empty(out.shape, out.dtype)
            self.ufunc(*xs, out=scratch)
            np.copyto(out, scratch)


_WIDE = wide_vectors()  # marks a loop for 64-byte vectors (_llvm.py)
_VECTORS = _vector_math.available()  # (without AVX-512 the scalar SOFTMAX rows are faster than the fallback)
_WIDE_EXP: Any = None
_WIDE_SIGMOID: Any = None
_WIDE_ERF: Any = None
_WIDE_GELU: Any = None


def _wide_loops(exp_f32: Any, sigmoid_f32: Any, erf32: Any, gelu32: Any) -> Any:
    """``loop(code, x, out)``: ``out[i] = f(x[i])`` over 1-D contiguous arrays, on 64-byte vectors.

    ``f`` is the scalar function of the ufunc numbered ``code`` (0 exp, 1 sigmoid, 2 erf, 3 gelu),
    inlined with the ufunc's fast-math flags (``contract`` only) and error model, so the loop and
    the ufunc compute the same bits. numba's ufunc loops are vectorised with 32-byte vectors on
    this project's Intel CPUs; a loop that calls :func:`._llvm.wide_vectors` gets 64-byte ones
    (256K float32 in L2, one thread: exp 80 against 110 us, SIGMOID 107 against 131, GELU 116
    against 161; docs/performance.md). The scalar functions are module globals when the loop
    compiles, so numba's cache can keep it (a closure's would be compiled again in every process).
    """
    global _WIDE_EXP, _WIDE_SIGMOID, _WIDE_ERF, _WIDE_GELU
    from numba import njit

    inline = njit(inline="always", fastmath={"contract"})
    _WIDE_EXP, _WIDE_SIGMOID, _WIDE_ERF, _WIDE_GELU = (inline(f) for f in (exp_f32, sigmoid_f32, erf32, gelu32))

    @njit(nogil=True, cache=True, fastmath={"contract"}, error_model="numpy")  # as a ufunc: x / 0 is inf
    def loop(code, x, out):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        _WIDE()
        if code == 0:
            for i in range(x.size):
                out[i] = _WIDE_EXP(x[i])
        elif code == 1:
            for i in range(x.size):
                out[i] = _WIDE_SIGMOID(x[i])
        elif code == 2:
            for i in range(x.size):
                out[i] = _WIDE_ERF(x[i])
        else:
            for i in range(x.size):
                out[i] = _WIDE_GELU(x[i])

    return loop


ALIGN_PEEL_MIN = 4096
"""Contiguous tiles of at least this many elements start the wide loop at the output's first 64-byte
boundary: its 64-byte stores then fill whole cache lines, which Intel CPUs write without reading
them first (64M float32 EXP on two threads: 22.0-22.6 against 23.4-23.7 ms from a NumPy
allocation's 16-byte offset)."""


class _WideUnary(_NumbaUfunc):
    """A float32 unary ufunc numba built, with the same function as a wide loop for contiguous tiles.

    EXP, SIGMOID and GELU run on :mod:`._vector_math`'s vectors instead where the CPU has them,
    for every layout (a strided tile through contiguous scratch), so an element's result does
    not depend on where it sits.
    """

    __slots__ = ("apply", "code", "loop", "vector")

    def __init__(self, ufunc: Any, loop: Any, code: int) -> None:
        super().__init__(ufunc)
        self.loop, self.code = loop, code
        self.vector = _VECTOR_CODES.get(code) if _vector_math.available() else None
        # built here, on the planning thread, not first by several worker threads at once
        self.apply: Any = _vector_math.mapper() if self.vector is not None else None

    def __call__(self, *xs: Array, out: Array, stream: bool = False) -> None:
        """``out = f(xs[0])``; ``stream``: the vector kernels may write ``out`` with non-temporal stores."""
        x = xs[0]
        contiguous = x.shape == out.shape and x.flags.c_contiguous and out.flags.c_contiguous
        if self.vector is not None:
            if contiguous and x.dtype == out.dtype == F32:
                self.apply(self.vector, x.reshape(-1), out.reshape(-1), stream and out.flags.aligned)
            else:
                source = np.ascontiguousarray(np.broadcast_to(x, out.shape), F32)
                target = out if out.flags.c_contiguous and out.dtype == F32 else np.empty(out.shape, F32)
                self.apply(self.vector, source.reshape(-1), target.reshape(-1), False)
                if target is not out:
                    np.copyto(out, target)
        elif contiguous and x.dtype == out.dtype == F32:
            flat_x, flat_out = x.reshape(-1), out.reshape(-1)  # out[i] from x[i] alone: in place too
            head = ((-out.ctypes.data) % 64) // 4 if out.size >= ALIGN_PEEL_MIN else 0
            if head:  # the rest's stores then write whole 64-byte lines (no read of the line first)
                self.loop(self.code, flat_x[:head], flat_out[:head])
            self.loop(self.code, flat_x[head:], flat_out[head:])
        else:
            super().__call__(x, out=out)


_VECTOR_CODES = {0: _vector_math.EXP, 1: _vector_math.SIGMOID, 3: _vector_math.GELU}
"""The wide loops' codes (:func:`_wide_loops`) whose function :mod:`._vector_math` computes."""


# -- fast paths -----------------------------------------------------------------------------------

Plan = tuple[Kernel, bool]
"""(kernel, single): ``single`` kernels are one pass over their inputs (a chunk per thread; in-place safe)."""
Planner = Callable[[Any, list[Array], Array], "Plan | None"]
"""``planner(desc, inputs, output)``: an operator's fast path for these types, or None."""


def _same_float(xs: list[Array], out: Array, chars: str = "efd") -> bool:
    return all(x.dtype == out.dtype for x in xs) and out.dtype.char in chars


def _f32_exact(*values: Any) -> bool:
    """Whether Python floats are float32 values (a float32 formula with them then matches float64's)."""
    return all(isinstance(v, (int, float)) and float(F32(v)) == float(v) for v in values)


def _scale_bias_of(desc: Any) -> Any:
    return getattr(desc, "scale_bias", None)


def _unary(fn: Callable[..., Any], chars: str = "efd") -> Planner:
    """A unary ufunc; with ScaleBias (FLOAT32 only), the two float32 roundings first, in the output tile."""

    def plan(desc: Any, xs: list[Array], out: Array) -> Plan | None:
        if not _same_float(xs, out, chars):
            return None
        sb = _scale_bias_of(desc)
        if sb is None:
            return (lambda o, t: fn(t[0], out=o)), True
        if out.dtype != np.float32:
            return None
        s, b = F32(sb.scale), F32(sb.bias)

        def kernel(o: Array, t: list[Array]) -> None:
            y = np.multiply(t[0], s)  # a tile's float32 temporary (a numba ufunc in place is slow)
            np.add(y, b, out=y)
            fn(y, out=o)

        return kernel, False

    return plan


def _copy(x: Array, out: Array) -> None:
    np.copyto(out, x)


def _identity(desc: Any, xs: list[Array], out: Array) -> Plan | None:
    if _scale_bias_of(desc) is not None:
        return _unary(lambda x, out: None if x is out else np.copyto(out, x), "f")(desc, xs, out)
    if xs[0].dtype != out.dtype:
        return None
    # the bits as unsigned integers (NaN payloads survive), through np.positive: NumPy's SIMD ufunc
    # loop streams faster than its copy (np.copyto, memmove) and splits over threads; measured on
    # 2 loaded cores, 64M float32: 18.6 ms CPU against np.copyto's 23-33 and torch copy_'s 22.6
    bits = np.dtype(f"u{out.dtype.itemsize}")
    return (lambda o, t: np.positive(t[0].view(bits), out=o.view(bits))), True


def _plain_copy(desc: Any, name: str, xs: list[Any], out: Array) -> bool:
    """Whether the call runs as the data-movement copy (bits kept).

    IDENTITY without ScaleBias does, except large contiguous calls (``_identity``).
    """
    if name not in ("ELEMENT_WISE_IDENTITY", "ACTIVATION_IDENTITY") or _scale_bias_of(desc) is not None:
        return False
    if xs[0].dtype != out.dtype:
        return False
    return not (out.size >= PARALLEL_MIN and out.flags.c_contiguous and xs[0].flags.c_contiguous)


def _binary(fn: Callable[..., Any], chars: str = "efd") -> Planner:
    """A binary ufunc in the storage type: floats (correctly rounded) or integers (wrap-around)."""

    def plan(desc: Any, xs: list[Array], out: Array) -> Plan | None:
        if not _same_float(xs, out, chars):
            return None
        return (lambda o, t: fn(t[0], t[1], out=o)), True

    return plan


_INTS = "bBhHiIlLqQ"


def _add1(desc: Any, xs: list[Array], out: Array) -> Plan | None:
    fused = getattr(desc, "fused_activation", None)
    if fused is None:
        return _binary(np.add, "efd" + _INTS)(desc, xs, out)
    if fused.spec.name != "ACTIVATION_RELU" or not _same_float(xs, out, "fd"):
        return None
    add_relu = _numba_ufuncs()["add_relu"]
    return (lambda o, t: add_relu(t[0], t[1], out=o)), True


def _max_min(key: str, int_fn: Callable[..., Any]) -> Planner:
    def plan(desc: Any, xs: list[Array], out: Array) -> Plan | None:
        if _same_float(xs, out, _INTS):
            return (lambda o, t: int_fn(t[0], t[1], out=o)), True
        if not _same_float(xs, out, "fd"):
            return None
        fn = _numba_ufuncs()[key]
        return (lambda o, t: fn(t[0], t[1], out=o)), True

    return plan


def _numba_unary(key: str, chars: str) -> Planner:
    def plan(desc: Any, xs: list[Array], out: Array) -> Plan | None:
        if not _same_float(xs, out, chars):
            return None
        fn, stream = _numba_ufuncs()[key], _streams(out)  # a _WideUnary
        return _unary(lambda x, out: fn(x, out=out, stream=stream), chars)(desc, xs, out)

    return plan


def _streams(out: Array) -> bool:
    """Whether a one-pass kernel writes ``out`` with non-temporal stores: a result too large to keep in the cache."""
    return _stream.available() and out.nbytes >= _stream.STREAM_MIN_BYTES


def _sigmoid(desc: Any, xs: list[Array], out: Array) -> Plan | None:
    if _same_float(xs, out, "f"):  # one pass: 1 / (1 + exp(-x)) with a vectorised float32 exp
        fn, stream = _numba_ufuncs()["sigmoid"], _streams(out)
        return (lambda o, t: fn(t[0], out=o, stream=stream)), True
    if not _same_float(xs, out, "d"):
        return None

    half = out.dtype.type(0.5)

    def kernel(o: Array, t: list[Array]) -> None:
        # 1 / (1 + exp(-x)) = 0.5 + 0.5 tanh(x / 2), in the output tile: NumPy's SIMD tanh is
        # twice as fast as its exp plus a division (the cancellation near 0 costs < 3e-8 absolute)
        np.multiply(t[0], half, out=o)
        np.tanh(o, out=o)
        np.multiply(o, half, out=o)
        np.add(o, half, out=o)

    return kernel, False


def _difference_square(desc: Any, xs: list[Array], out: Array) -> Plan | None:
    # float32 only: DirectML rounds the difference to float32, then squares it (one more rounding)
    if not _same_float(xs, out, "f" + _INTS):
        return None

    def kernel(o: Array, t: list[Array]) -> None:
        np.subtract(t[0], t[1], out=o)
        np.multiply(o, o, out=o)

    return kernel, False


def _clip(desc: Any, xs: list[Array], out: Array) -> Plan | None:
    # min/max commute with the monotone rounding to float32: float32 bounds give the reference's result
    if not _same_float(xs, out, "ef") or _scale_bias_of(desc) is not None:
        return None
    hi, lo = desc.max, desc.min
    if not (isinstance(hi, float) and isinstance(lo, float)):
        return None

    def kernel(o: Array, t: list[Array]) -> None:
        x = t[0]
        # selects keeping x only strictly inside: NaN -> Max, a tie of zeros takes the bound's sign
        np.copyto(o, x)
        np.copyto(o, hi, where=~(x < hi), casting="unsafe")
        np.copyto(o, lo, where=~(o > lo), casting="unsafe")

    return kernel, False


def _relu(desc: Any, xs: list[Array], out: Array) -> Plan | None:
    if not _same_float(xs, out, "fd"):
        return None
    fn = _numba_ufuncs()["relu"]
    return (lambda o, t: fn(t[0], out=o)), True


def _round(desc: Any, xs: list[Array], out: Array) -> Plan | None:
    mode = desc.rounding_mode.name
    if mode == "TOWARD_INFINITY":
        return None
    return _unary(np.rint if mode == "HALVES_TO_NEAREST_EVEN" else np.trunc)(desc, xs, out)


def _atan(desc: Any, xs: list[Array], out: Array) -> Plan | None:
    plan = _unary(np.arctan)(desc, xs, out)
    if plan is None:
        return None
    inner = plan[0]

    def kernel(o: Array, t: list[Array]) -> None:  # NaN gives pi/4 (DirectML's range reduction drops it)
        inner(o, t)
        np.copyto(o, np.pi / 4, where=np.isnan(o), casting="unsafe")

    return kernel, False


def _exp(desc: Any, xs: list[Array], out: Array) -> Plan | None:
    if _same_float(xs, out, "f"):  # float32: the vectorised exp, one pass (NumPy's for the others)
        return _numba_unary("exp", "f")(desc, xs, out)
    return _unary(np.exp)(desc, xs, out)


def _unit_recip(x: Array, out: Array) -> Any:
    return np.divide(1, x, out=out)


_FAST: dict[str, Planner] = {
    "ELEMENT_WISE_IDENTITY": _identity,
    "ACTIVATION_IDENTITY": _identity,
    "ELEMENT_WISE_ABS": _unary(np.abs),
    "ELEMENT_WISE_NEGATE": _unary(np.negative),
    "ELEMENT_WISE_FLOOR": _unary(np.floor),
    "ELEMENT_WISE_CEIL": _unary(np.ceil),
    "ELEMENT_WISE_ROUND": _round,
    "ELEMENT_WISE_SQRT": _unary(np.sqrt),
    "ELEMENT_WISE_RECIP": _unary(_unit_recip),
    # transcendental: NumPy's float32 loops, within TOLERANCE; float64 is the reference's own ufunc
    **{
        f"ELEMENT_WISE_{name.upper()}": _unary(getattr(np, fn))
        for name, fn in (
            ("log", "log"),
            ("sin", "sin"),
            ("cos", "cos"),
            ("tan", "tan"),
            ("asin", "arcsin"),
            ("acos", "arccos"),
            ("tanh", "tanh"),
        )
    },
    "ELEMENT_WISE_ATAN": _atan,
    "ELEMENT_WISE_EXP": _exp,
    "ELEMENT_WISE_ERF": _numba_unary("erf", "f"),
    "ELEMENT_WISE_ADD": _binary(np.add, "efd" + _INTS),
    "ELEMENT_WISE_ADD1": _add1,
    "ELEMENT_WISE_SUBTRACT": _binary(np.subtract, "efd" + _INTS),
    "ELEMENT_WISE_MULTIPLY": _binary(np.multiply, "efd" + _INTS),
    "ELEMENT_WISE_DIVIDE": _binary(np.divide),
    "ELEMENT_WISE_DIFFERENCE_SQUARE": _difference_square,
    "ELEMENT_WISE_MAX": _max_min("max", np.maximum),
    "ELEMENT_WISE_MIN": _max_min("min", np.minimum),
    "ELEMENT_WISE_CLIP": _clip,
    "ACTIVATION_RELU": _relu,
    "ACTIVATION_SIGMOID": _sigmoid,
    "ACTIVATION_TANH": _unary(np.tanh, "fd"),
    "ACTIVATION_GELU": _numba_unary("gelu", "f"),
}
"""Operator -> planner of its fast path: the kernel, or None when the types need the generic path."""


# -- the generic path ----------------------------------------------------------------------------


def _generic(desc: Any, name: str, data_type: TensorDataType) -> Plan:
    rule = RULES[name]
    sb = _scale_bias_of(desc)
    fused = getattr(desc, "fused_activation", None)
    fused_fn = None
    what = ""
    if fused is not None:
        what = f" with a fused {fused.spec.name}"
        fused_fn = FUSED.get(fused.spec.name)
        if fused_fn is None:
            raise unsupported(desc, data_type, what)

    def kernel(o: Array, t: list[Array]) -> None:
        xs = list(t)
        with np.errstate(all="ignore"):
            if sb is not None:  # every input is scaled (POW's ExponentTensor too)
                xs = [scale_bias(sb, x) for x in xs]
            result = np.asarray(rule(desc, xs, data_type))
            if fused_fn is not None:
                if result.dtype.kind != "f":
                    raise unsupported(desc, data_type, what)
                # the result is rounded to the output type before the activation reads it
                result = np.asarray(fused_fn(fused, result.astype(o.dtype).astype(np.float64)))
        store(result, o)

    return kernel, False


# -- SOFTMAX, LOG_SOFTMAX, HARDMAX: rows -----------------------------------------------------------

_ROWS = {
    "ACTIVATION_SOFTMAX": "softmax",
    "ACTIVATION_SOFTMAX1": "softmax",
    "ACTIVATION_LOG_SOFTMAX": "log_softmax",
    "ACTIVATION_LOG_SOFTMAX1": "log_softmax",
    "ACTIVATION_HARDMAX": "hardmax",
    "ACTIVATION_HARDMAX1": "hardmax",
}


def _as_rows(a: Array, order: list[int], rows: int, n: int) -> Array | None:
    """``a`` with axes in ``order`` as a (rows, n) view, or None when that needs a copy."""
    view = a.transpose(order).view()
    try:
        view.shape = (rows, n)
    except AttributeError:
        return None
    return view


@cache
def _row_kernels() -> Any:
    """The float32 SOFTMAX / LOG_SOFTMAX kernel over a block of rows (numba, GIL released).

    Per row, with the row in the L1/L2 cache: the NaN-ignoring maximum ``m`` (on the
    bits, so that it vectorises: float ``>`` selects do not without fast-math flags that
    would change NaN results), then one pass computing ``exp(x - m)`` with a vectorised
    float32 exp and its sum (LOG_SOFTMAX: the general exp; SOFTMAX: ``_exp32_tail_body``, for
    arguments <= 0 only, about a sixth cheaper: the pass is the kernel's cost), then one
    pass scaling (SOFTMAX: ``e * (1 / sum)``, one more float32 rounding than a division,
    as PyTorch's and onnxruntime's kernels; LOG_SOFTMAX: ``(x - m) - log(max(sum,
    1e-20))`` in float64, rounded once). The sum is float32 within blocks of SUM_BLOCK
    elements, added in float64 (one float32 running sum drifts on long rows of like values:
    8.7 times the reference tolerance on a row of 4M; float64 throughout cost LOG_SOFTMAX a
    third more time), and is the only thing reassociated (``reassoc``: LLVM keeps partial
    sums); exp is a call of its own so its range reduction is never reassociated.

    SOFTMAX of contiguous rows runs on :mod:`._vector_math`'s vectors instead, software-
    pipelined over the rows: one pass computes row r's exps and their sum, row r + 1's
    maximum (its loads from memory overlapping the arithmetic) and row r - 1's scaled
    result, streamed for a large output (``stream``). 64K rows of 1024 on two threads:
    28.3 -> 24.8 ms (docs/performance.md).
    """
    global _ROW_MAX, _EXP_SUM, _SOFTMAX_EXP, _SOFTMAX_EXP_SUM, _LINE_MAX, _SOFTMAX_PASS, _VECTOR_SCALED
    from numba import njit

    from ._vector_lines import line_extreme

    _LINE_MAX = line_extreme()

    f32, i32 = np.float32, np.int32
    _exp32_call()
    _ln2_split()
    floor = F32(LOG_SOFTMAX_MIN_SUM)
    neg_inf_key = i32(-0x7F800001)  # the key of -inf's bits 0xFF800000

    def row_max(bits):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        # The NaN-ignoring maximum (np.fmax.reduce: -inf when all are NaN and -inf; NaN when all
        # are NaN, -inf here: the row's results are NaN either way, as x - m is NaN). Whole steps
        # on 64-byte float vectors (_vector_lines.line_extreme: NaN never wins; which zero it
        # returns does not matter, x - m and exp are the same for both), the rest on int32 keys
        # ordered as the floats (negatives' magnitude bits flipped; NaN's key is -inf's). int32
        # throughout: 16 lanes a vector (numba's default int64 gave 8)
        _WIDE()
        low = neg_inf_key
        m = low
        whole = bits.size // LINE_STEP * LINE_STEP if bits.strides[0] == 4 else 0  # vectors: contiguous rows
        for i in range(whole, bits.size):
            b = bits[i]
            k = np.int32(b ^ ((b >> np.int32(31)) & np.int32(0x7FFFFFFF)))
            k = k if (b & np.int32(0x7FFFFFFF)) <= np.int32(0x7F800000) else low
            m = k if k > m else m
        rest = np.int32(m ^ ((m >> np.int32(31)) & np.int32(0x7FFFFFFF))).view(np.float32)
        vector = np.int32(_LINE_MAX(bits, 0, whole, True)).view(np.float32)
        return rest if rest > vector else vector  # neither is NaN

    def exp_sum(x, m):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        _WIDE()
        # float32 sums of SUM_BLOCK elements (LLVM keeps partial sums), added in float64:
        # one float32 running sum drifts on long rows of like values (the blocks' loops have
        # a constant count, which LLVM vectorises as it does one loop: a variable count cost
        # LOG_SOFTMAX a third more time)
        whole = x.size - x.size % SUM_BLOCK
        s = 0.0
        for start in range(0, whole, SUM_BLOCK):
            block = f32(0.0)
            for i in range(SUM_BLOCK):
                block += _EXP32_CALL(x[start + i] - m)
            s += block
        block = f32(0.0)
        for i in range(whole, x.size):
            block += _EXP32_CALL(x[i] - m)
        return s + block

    def softmax_exp_sum(x, m, o):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        _WIDE()
        whole = x.size - x.size % SUM_BLOCK  # as exp_sum's (o may be x's memory: read, then written)
        s = 0.0
        for start in range(0, whole, SUM_BLOCK):
            block = f32(0.0)
            for i in range(start, start + SUM_BLOCK):
                e = _SOFTMAX_EXP(x[i] - m)
                o[i] = e
                block += e
            s += block
        block = f32(0.0)
        for i in range(whole, x.size):
            e = _SOFTMAX_EXP(x[i] - m)
            o[i] = e
            block += e
        return s + block

    _ROW_MAX = njit(nogil=True, cache=True)(row_max)
    _EXP_SUM = njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})(exp_sum)
    # (a function of its own, so that the sum's reassociation never reaches the range reduction)
    _SOFTMAX_EXP = njit(nogil=True, cache=True, fastmath={"contract"})(_exp32_tail_body())
    _SOFTMAX_EXP_SUM = njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})(softmax_exp_sum)
    _SOFTMAX_PASS, _VECTOR_SCALED = _vector_math.softmax_pass(_SOFTMAX_EXP_SUM), _vector_math.scaled()

    @njit(nogil=True, cache=True)
    def rows(x, bits, o, log, stream):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        _WIDE()
        n = x.shape[1]
        # SOFTMAX of contiguous rows on 64-byte vectors (_vector_math.softmax_pass): one pass a row
        # computes its exps into a scratch row (in the L1 cache), the next row's maximum, and the
        # previous row's result from its scratch row (the two scratch rows alternate)
        # (the scratch rows start 96 bytes past a row's offset from a 4 KiB page, so their stores do
        # not falsely alias the loads of rows of 4 KiB: 16384 rows of 1024 in L2, 4.98 -> 4.43 ms)
        scratch = np.empty((2, n + 40), np.float32)[:, 24 : 24 + n]
        m_next, known, factor = f32(0.0), False, f32(0.0)
        vectors = _VECTORS and not log and x.strides[1] == 4 and o.strides[1] == 4
        for r in range(x.shape[0]):
            xr, orow = x[r], o[r]
            m = m_next if known else _ROW_MAX(bits[r])
            known = False
            if log:
                total = _EXP_SUM(xr, m)
                if not total >= floor:  # below the floor, or NaN
                    total = floor
                # in float64, rounded once: (x - m) - log(sum) cancels where x - m is near log(sum)
                # (46.05 at the floor: float32 steps would lose 4e-6 absolute)
                lt, m64 = np.log(np.float64(total)), np.float64(m)
                for i in range(n):
                    orow[i] = f32((np.float64(xr[i]) - m64) - lt)
            elif vectors:
                last, mine, theirs = r + 1 == x.shape[0], scratch[r % 2], scratch[1 - r % 2]
                following, before = xr if last else x[r + 1], o[r - 1] if r > 0 else orow
                if stream:
                    total, m_next = _SOFTMAX_PASS(xr, m, mine, n, following, theirs, factor, before, r > 0, True)
                else:
                    total, m_next = _SOFTMAX_PASS(xr, m, mine, n, following, theirs, factor, before, r > 0, False)
                known, factor = not last, f32(1.0 / total)
                if last and stream:
                    _VECTOR_SCALED(mine, factor, orow, n, True)
                elif last:
                    _VECTOR_SCALED(mine, factor, orow, n, False)
            else:
                scale = f32(1.0 / _SOFTMAX_EXP_SUM(xr, m, orow))
                for i in range(n):
                    orow[i] = orow[i] * scale

    return rows


def _row_block(kind: str, x: Array, o: Array) -> None:
    """One block of rows (x, o: (rows, n)) in NumPy: HARDMAX, FLOAT64's SOFTMAX and LOG_SOFTMAX; o may be x's memory."""
    if kind == "hardmax":  # 1 at the first maximum of a strict '>' scan: NaN never wins, except first
        first_nan = np.isnan(x[:, 0])
        index = np.argmax(np.where(np.isnan(x), -np.inf, x), axis=1)
        index[first_nan] = 0
        o[...] = 0
        o[np.arange(o.shape[0]), index] = 1
        return
    m = np.fmax.reduce(x, axis=1, keepdims=True)  # the NaN-ignoring maximum
    if kind == "softmax":
        np.exp(np.subtract(x, m, out=o), out=o)
        np.divide(o, np.add.reduce(o, axis=1, keepdims=True), out=o)
        return
    np.subtract(x, m, out=o)
    total = np.add.reduce(np.exp(o), axis=1, keepdims=True)
    floor = o.dtype.type(LOG_SOFTMAX_MIN_SUM)
    total[np.isnan(total) | (total < floor)] = floor  # (x - m) - log(max(sum, 1e-20)), a NaN sum too
    np.subtract(o, np.log(total), out=o)


def _run_rows(desc: Any, name: str, x: Array, out: Array, data_type: TensorDataType) -> None:
    if x.dtype.kind != "f":
        raise unsupported(desc, data_type)
    kind = _ROWS[name]
    axes = rules.reduction_axes(desc)
    order = [a for a in range(x.ndim) if a not in axes] + list(axes)
    n = math.prod(x.shape[a] for a in axes)
    rows = x.size // n
    compute = np.float64 if x.dtype == np.float64 else np.float32
    xr = _as_rows(x, order, rows, n)
    if xr is None:
        xr = np.ascontiguousarray(x.transpose(order)).reshape(rows, n)
    o_rows = _as_rows(out, order, rows, n) if out.dtype == compute else None
    target = o_rows if o_rows is not None else np.empty((rows, n), compute)
    if xr.dtype != compute:
        xr = xr.astype(compute)
    if compute == np.float32 and kind != "hardmax":  # the numba kernel: one block of rows per thread
        kernel, bits, log = _row_kernels(), xr.view(np.int32), kind == "log_softmax"
        stream = _streams(target) and target.flags.aligned
        _run((rows,), lambda t: kernel(xr[t], bits[t], target[t], log, stream), None)
    else:

        def work(t: tuple[slice, ...]) -> None:
            with np.errstate(all="ignore"):
                _row_block(kind, xr[t], target[t])

        _run((rows,), work, max(1, ROW_BLOCK // n))
    if o_rows is None:
        with np.errstate(over="ignore"):
            np.copyto(out.transpose(order), target.reshape([x.shape[a] for a in order]), casting="unsafe")


ROW_TILE = 1 << 18
"""Elements per tile of :func:`_run_row_broadcast` (1 MiB of float32: its broadcast rows stay in L2)."""


def _run_row_broadcast(kernel: Kernel, o: Array, ins: list[Any]) -> bool:
    """A one-pass kernel on (rows, n) where some inputs are one row read through 0-strides: tiles of rows.

    NumPy's loops run a 2-D call with a 0-strided operand at about 2/3 of their contiguous
    speed (measured: 64M float32 ADD of a row, 31 ms CPU against 21 ms this way). Here each
    broadcast row is repeated once into a contiguous (rows per tile, n) block, and the
    kernel runs on contiguous tiles, the block read from the cache. Returns False (nothing
    done) unless the output and the other inputs are C-contiguous.
    """
    if o.ndim != 2 or not o.flags.c_contiguous or o.shape[1] > ROW_TILE // 2:
        return False
    rows, n = o.shape
    rep = min(rows, ROW_TILE // n)
    broadcast = [x is not None and x.strides == (0, x.itemsize) for x in ins]
    if not any(broadcast) or not all(x is None or b or x.flags.c_contiguous for x, b in zip(ins, broadcast)):
        return False
    blocks = [np.ascontiguousarray(np.broadcast_to(x[0], (rep, n))) if b else None for x, b in zip(ins, broadcast)]

    def work(t: tuple[slice, ...]) -> None:
        k = t[0].stop - t[0].start
        with np.errstate(all="ignore"):
            kernel(o[t], [None if x is None else blk[:k] if blk is not None else x[t] for x, blk in zip(ins, blocks)])

    _run(o.shape, work, rep * n)
    return True


# -- streaming stores for large results ------------------------------------------------------------

_STREAM_OPS: dict[str, tuple[int, str]] = {
    "ELEMENT_WISE_IDENTITY": (_stream.IDENTITY, ""),
    "ACTIVATION_IDENTITY": (_stream.IDENTITY, ""),
    "ELEMENT_WISE_ABS": (_stream.ABS, "fd"),
    "ELEMENT_WISE_NEGATE": (_stream.NEGATE, "fd"),
    "ACTIVATION_RELU": (_stream.RELU, "fd"),
    "ELEMENT_WISE_ADD": (_stream.ADD, "fd"),
    "ELEMENT_WISE_ADD1": (_stream.ADD, "fd"),
    "ELEMENT_WISE_SUBTRACT": (_stream.SUBTRACT, "fd"),
    "ELEMENT_WISE_MULTIPLY": (_stream.MULTIPLY, "fd"),
    "ELEMENT_WISE_DIVIDE": (_stream.DIVIDE, "fd"),
    "ELEMENT_WISE_MAX": (_stream.MAX, "fd"),
    "ELEMENT_WISE_MIN": (_stream.MIN, "fd"),
}
"""Operator -> (its :mod:`._stream` operation, the output types it serves; "" for every type: a copy of
the bits). Each is its fast path's computation: the same IEEE operation, or the same select."""
STREAM_ROW_MIN = 256
"""A broadcast row shorter than this keeps the tiled path (the kernel's segments end at each row's end)."""


def _run_stream(desc: Any, name: str, o: Array, ins: list[Any]) -> bool:
    """A large result with :mod:`._stream`'s non-temporal stores; False (nothing done) where it does not apply.

    ``o`` and ``ins`` are the merged views; each input must be C-contiguous with ``o``'s shape, or
    (``o`` 2-D) one row read through 0-strides.
    """
    entry = _STREAM_OPS.get(name)
    if entry is None or not _stream.worth_it(o) or _scale_bias_of(desc) is not None:
        return False
    op, chars = entry
    fused = getattr(desc, "fused_activation", None)
    if fused is not None:
        if name != "ELEMENT_WISE_ADD1" or fused.spec.name != "ACTIVATION_RELU":
            return False
        op = _stream.ADD_RELU
    if any(x is None or x.dtype != o.dtype for x in ins) or (chars and o.dtype.char not in chars):
        return False
    operands = []
    for x in ins:
        if x.shape == o.shape and x.flags.c_contiguous:
            operands.append(x)
        elif o.ndim == 2 and o.shape[1] >= STREAM_ROW_MIN and x.strides == (0, x.itemsize):
            operands.append(x[0])
        else:
            return False
    if not chars:  # IDENTITY moves bits: floats as unsigned integers of their size (NaN payloads kept)
        bits = np.dtype(f"u{o.dtype.itemsize}")
        o, operands = o.view(bits), [x.view(bits) for x in operands]
    with np.errstate(all="ignore"):
        _stream.run(op, o, *operands)
    return True


# -- entry point ---------------------------------------------------------------------------------


def run_elementwise(
    desc: Any, inputs: Mapping[str, Array], outputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> Repeat | None:
    """Any operator of the family: its fast path, else its tiled formula, else its row kernel, into the output view.

    Returns the call's repeat (``_repeat``) unless the output shares memory with an input.
    """
    name = desc.operator_type.name
    members = desc.tensor_slots("input")
    data_type = desc.tensor(members[1] if name == "ELEMENT_WISE_IF" else members[0]).data_type
    out_member = desc.tensor_slots("output")[0]
    out = outputs[out_member]
    if out.size == 0:
        return NOTHING
    xs = _operands(name, members, inputs, out)
    # in-place: an input sharing the output's memory in another layout is read before anything is written
    shared = [x is not None and np.may_share_memory(out, x) for x in xs]
    same = [s and _same_layout(out, x) for x, s in zip(xs, shared)]
    xs = [x.copy() if s and not t else x for x, s, t in zip(xs, shared, same)]
    run = _planned(desc, name, xs, out, data_type, same)
    run(xs, out)
    if any(shared):
        return None  # planned for this overlap

    def repeat(ins: Mapping[str, Array], outs: Mapping[str, Array]) -> None:
        target = outs[out_member]
        run(_operands(name, members, ins, target), target)

    return Repeat(repeat)


def _operands(name: str, members: tuple[str, ...], inputs: Mapping[str, Array], out: Array) -> list[Any]:
    """The inputs in the desc's order, each of the output's shape (a one-element tensor through 0-strides)."""
    if name == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":  # optional zero points stay in place, as None
        given: list[Any] = [inputs.get(m) for m in members]
    else:
        given = [inputs[m] for m in members if m in inputs]
    return [x if x is None or x.shape == out.shape else np.broadcast_to(x, out.shape) for x in given]


def _planned(
    desc: Any, name: str, xs: list[Any], out: Array, data_type: TensorDataType, same: list[bool]
) -> Callable[[list[Any], Array], None]:
    """``run(xs, out)``: the call's computation, for operands of these types and layouts.

    ``same``: which inputs are the output itself (in place, in its layout).
    """
    if name in _ROWS:
        return lambda xs, out: _run_rows(desc, name, xs[0], out, data_type)
    if _plain_copy(desc, name, xs, out):
        return lambda xs, out: copy_into(out, xs[0])
    planner = _FAST.get(name)
    plan = planner(desc, xs, out) if planner is not None else None
    kernel, single = plan if plan is not None else _generic(desc, name, data_type)
    copy_tile = [s and not single for s in same]
    return lambda xs, out: _compute(desc, name, kernel, single, copy_tile, xs, out)


def _compute(
    desc: Any, name: str, kernel: Kernel, single: bool, copy_tile: list[bool], xs: list[Any], out: Array
) -> None:
    """``kernel`` over the output: one tile when small, else merged views streamed, in row tiles or in tiles."""
    if out.size < PARALLEL_MIN:  # one tile, as the arrays are: no layout work for small calls
        with np.errstate(all="ignore"):
            kernel(out, [x.copy() if c else x for x, c in zip(xs, copy_tile)])
        return
    present = [x for x in xs if x is not None]
    o, *collapsed = _collapse([out, *present])
    it = iter(collapsed)
    ins: list[Any] = [None if x is None else next(it) for x in xs]
    if _run_stream(desc, name, o, ins):
        return
    if single and _run_row_broadcast(kernel, o, ins):
        return

    def work(t: tuple[slice, ...]) -> None:
        with np.errstate(all="ignore"):  # per thread: NumPy's error state is thread-local
            kernel(o[t], [None if x is None else x[t].copy() if c else x[t] for x, c in zip(ins, copy_tile)])

    _run(o.shape, work, None if single else BLOCK)


OPERATORS: dict[str, Callable[..., Any]] = {name: run_elementwise for name in RULES}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation on the CPU."""
