"""Large element-wise results, copies and casts written with non-temporal (streaming) stores.

A plain store to a line that is not in the cache first reads the line from memory
(read-for-ownership), so a copy of N bytes moves 3N bytes and a binary operation 4N.
A non-temporal store writes whole 64-byte lines without reading them: 2N and 3N.
Measured on this project's 2-core AMD EPYC (Zen 4), interleaved with torch in one
process, 64M float32 (2026-11-26): IDENTITY 13.5 ms against torch's ``copy_`` 18.2, ADD
20.2 against 28.3, a broadcast row ADD 15.6 against 15.6-18; NumPy's own loops (plain
stores) match torch. glibc's ``memcpy``, which streams above a size threshold, measured
slower than NumPy's copy loop here (20.6 against 17.5 ms on two threads).

How: numba kernels (``nogil``, one contiguous range per thread) whose loop body is one
64-byte vector operation built in LLVM IR (:func:`_vector_op`): the inputs' vectors
loaded, the operation applied lane by lane, the result stored with LLVM's
``!nontemporal`` flag (``vmovntps`` / ``vmovntdq`` on x86). The operations are written
as the same IEEE operations and selects as the scalar code of the element-wise
module's fused ufuncs, so a streamed result is bit-identical to the ordinary path's
(``tests/test_cpu_stream.py`` compares them). Stores of whole vectors start at the
output's first 64-byte boundary; the elements before it, the last partial vector, and
a vector that crosses the end of a broadcast row are computed from small gathered
copies and stored plainly. A ``sfence`` ends each thread's work, so the streamed
results are ordered before the thread reports completion.

Only for outputs of at least ``STREAM_MIN_BYTES``: a result that fits in the last-level
cache is better left there for its consumer. x86-64 only (the fence is an x86
instruction); elsewhere :func:`available` is False and callers keep their NumPy path.
In-place calls (the output is an input with the same layout) are safe: each vector is
loaded before it is stored.

The same vectors serve two more kernels (sections below): copies whose rows are contiguous
in both views (:func:`copy`), and CAST's vector conversions (:func:`convert`), which also
run with plain stores for outputs below the threshold.
"""

from __future__ import annotations

import platform
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._common import flat_memory
from ._llvm import host_has, prefetch_lines
from ._threads import on_threads, threads_for

Array = NDArray[Any]

STREAM_MIN_BYTES = 1 << 24
"""Outputs below this size (half this machine's 32 MiB L3) keep ordinary stores."""


# operation codes of :func:`_kernel`
IDENTITY, ABS, NEGATE, RELU, ADD, SUBTRACT, MULTIPLY, DIVIDE, MAX, MIN, ADD_RELU = range(11)
UNARY = frozenset({IDENTITY, ABS, NEGATE, RELU})


def available() -> bool:
    """Whether streaming stores are used on this machine (x86-64)."""
    return platform.machine().lower() in ("x86_64", "amd64")


def _vector_op(builder: Any, op: int, x: Any, y: Any) -> Any:
    """LLVM IR of ``op`` on two vectors, lane by lane.

    The same IEEE operations and selects as the scalar code of the element-wise module's fused
    ufuncs (``elementwise._numba_ufuncs``) and NumPy's ufuncs for the others.
    """
    from llvmlite import ir  # type: ignore[import-untyped]
    from numba.core import cgutils

    if op == IDENTITY:
        return x
    if op == ABS:
        width = 32 if isinstance(x.type.element, ir.FloatType) else 64
        name = f"llvm.fabs.v{x.type.count}f{width}"
        return builder.call(
            cgutils.get_or_insert_function(builder.module, ir.FunctionType(x.type, [x.type]), name), [x]
        )
    if op == NEGATE:
        return builder.fneg(x)  # the sign bit flipped, NaN included (np.negative)
    zero = ir.Constant(x.type, [ir.Constant(x.type.element, 0.0)] * x.type.count)
    if op == RELU:  # x if x > 0 else +0 (NaN too)
        return builder.select(builder.fcmp_ordered(">", x, zero), x, zero)
    if op == ADD:
        return builder.fadd(x, y)
    if op == SUBTRACT:
        return builder.fsub(x, y)
    if op == MULTIPLY:
        return builder.fmul(x, y)
    if op == DIVIDE:
        return builder.fdiv(x, y)
    if op in (MAX, MIN):  # y if (y > x or x is NaN) else x (MIN: y < x): NaN loses, a tie gives x
        wins = builder.fcmp_ordered(">" if op == MAX else "<", y, x)
        return builder.select(builder.or_(wins, builder.fcmp_unordered("uno", x, x)), y, x)
    if op == ADD_RELU:  # s if s > 0 else s * 0 (DirectML's fused RELU: -0 for negatives, NaN stays)
        total = builder.fadd(x, y)
        return builder.select(builder.fcmp_ordered(">", total, zero), total, builder.fmul(total, zero))
    raise ValueError(f"no vector form for operation {op}")  # internal misuse


@cache
def _intrinsics() -> tuple[Any, Any]:
    """(vop, sfence): numba intrinsics for one 64-byte vector operation and the store fence.

    ``vop(op, stream, dst, d, x, i, y, j)`` stores ``op`` of the 64 bytes of ``x`` from element
    ``i`` and of ``y`` from element ``j`` at ``dst``'s element ``d``: with a non-temporal store
    (``d``'s address 64-byte aligned) when ``stream`` is True, else with a plain one. ``op`` and
    ``stream`` are compile-time constants.
    """
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def vop(typingctx, op, stream, dst, d, x, i, y, j):  # type: ignore[no-untyped-def]
        if not isinstance(op, types.IntegerLiteral) or not isinstance(stream, types.BooleanLiteral):
            return None
        code, nt = op.literal_value, stream.literal_value
        sig = types.void(op, stream, dst, d, x, i, y, j)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            element = context.get_data_type(signature.args[2].dtype)
            vector = ir.VectorType(element, 64 // signature.args[2].dtype.bitwidth * 8)

            def address(k: int) -> Any:
                data = context.make_array(signature.args[k])(context, builder, args[k]).data
                return builder.bitcast(builder.gep(data, [args[k + 1]]), vector.as_pointer())

            align = signature.args[2].dtype.bitwidth // 8
            vx = builder.load(address(4), align=align)
            vy = builder.load(address(6), align=align) if code not in UNARY else None
            # integer types are only ever copied (IDENTITY); their other branches of runs() are never
            # taken, and compile as copies
            is_float = isinstance(signature.args[2].dtype, types.Float)
            value = _vector_op(builder, code, vx, vy) if is_float else vx
            store = builder.store(value, address(2), align=64 if nt else align)
            if nt:
                store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def sfence(typingctx):  # type: ignore[no-untyped-def]
        """x86 ``sfence``: the streaming stores before it are ordered before any later store."""
        sig = types.void()

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            fence = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse.sfence"
            )
            builder.call(fence, [])
            return context.get_dummy_value()

        return sig, codegen

    return vop, sfence


_VOP: Any = None
_SFENCE: Any = None
_RUN: Any = None


@cache
def _runs() -> Any:
    """``runs(op, stream, out, d, x, i, y, j, count)``: ``count`` elements (whole vectors) of ``op``.

    ``op`` is branched on once, outside the loops, each of which has its operation as a constant.
    """
    global _RUN
    from numba import njit

    def runs(op, stream, out, d, x, i, y, j, count):  # type: ignore[no-untyped-def]  # pragma: no cover
        lanes = 64 // out.itemsize
        if op == IDENTITY:
            for k in range(0, count, lanes):
                _VOP(IDENTITY, stream, out, d + k, x, i + k, y, j + k)
        elif op == ABS:
            for k in range(0, count, lanes):
                _VOP(ABS, stream, out, d + k, x, i + k, y, j + k)
        elif op == NEGATE:
            for k in range(0, count, lanes):
                _VOP(NEGATE, stream, out, d + k, x, i + k, y, j + k)
        elif op == RELU:
            for k in range(0, count, lanes):
                _VOP(RELU, stream, out, d + k, x, i + k, y, j + k)
        elif op == ADD:
            for k in range(0, count, lanes):
                _VOP(ADD, stream, out, d + k, x, i + k, y, j + k)
        elif op == SUBTRACT:
            for k in range(0, count, lanes):
                _VOP(SUBTRACT, stream, out, d + k, x, i + k, y, j + k)
        elif op == MULTIPLY:
            for k in range(0, count, lanes):
                _VOP(MULTIPLY, stream, out, d + k, x, i + k, y, j + k)
        elif op == DIVIDE:
            for k in range(0, count, lanes):
                _VOP(DIVIDE, stream, out, d + k, x, i + k, y, j + k)
        elif op == MAX:
            for k in range(0, count, lanes):
                _VOP(MAX, stream, out, d + k, x, i + k, y, j + k)
        elif op == MIN:
            for k in range(0, count, lanes):
                _VOP(MIN, stream, out, d + k, x, i + k, y, j + k)
        elif op == ADD_RELU:
            for k in range(0, count, lanes):
                _VOP(ADD_RELU, stream, out, d + k, x, i + k, y, j + k)

    _RUN = njit(inline="always")(runs)
    return _RUN


@cache
def _kernel() -> Any:
    """The streaming kernel: ``out[lo:hi] = op(x, y)`` with x and y read with periods (full or one row)."""
    global _VOP, _SFENCE
    from numba import njit

    _VOP, _SFENCE = _intrinsics()
    _runs()

    @njit(nogil=True, cache=True)
    def stream(op, out, x, px, y, py, lo, hi, tmp):  # type: ignore[no-untyped-def]  # pragma: no cover
        # out: 1-D C-contiguous, element i = op(x[i % px], y[i % py]); x, y 1-D contiguous of length
        # px, py (the full size, or one row read again for every row). Whole vectors from the first
        # 64-byte boundary, streamed; a vector that crosses the end of a row of x or y, and the
        # partial vectors at both ends, are gathered into tmp (3 vectors) and computed there
        lanes = 64 // out.itemsize
        first = min(hi, lo + ((-(out.ctypes.data + lo * out.itemsize)) % 64) // out.itemsize)
        end = first + (hi - first) // lanes * lanes
        tx, ty, tr = tmp[:lanes], tmp[lanes : 2 * lanes], tmp[2 * lanes :]
        i = lo
        while i < hi:
            a, b = i % px, i % py
            whole = min(end - i, px - a, py - b) // lanes * lanes if i >= first else 0
            if whole > 0:
                _RUN(op, True, out, i, x, a, y, b, whole)
                i += whole
                continue
            m = min(hi, first if i < first else i + lanes) - i  # one vector, or the head
            for k in range(m):
                tx[k] = x[(i + k) % px]
                ty[k] = y[(i + k) % py]
            _RUN(op, False, tr, 0, tx, 0, ty, 0, lanes)
            if m == lanes and i >= first:
                _RUN(IDENTITY, True, out, i, tr, 0, tr, 0, lanes)
            else:
                for k in range(m):
                    out[i + k] = tr[k]
            i += m
        _SFENCE()

    return stream


def worth_it(out: Array) -> bool:
    """Whether ``out`` is large, contiguous and aligned enough for :func:`run`."""
    return bool(
        out.nbytes >= STREAM_MIN_BYTES
        and out.flags.c_contiguous
        and out.flags.aligned
        and out.dtype.itemsize in (1, 2, 4, 8)
        and available()
    )


def _read_only(x: Array) -> Array:
    """A read-only 1-D view (one kernel specialisation, whether the caller's input is writable or not)."""
    view = np.ascontiguousarray(x).reshape(-1).view()
    view.flags.writeable = False
    return view


def run(op: int, out: Array, x: Array, y: Array | None = None) -> None:
    """``out = op(x, y)`` with streaming stores, over the threads.

    ``out`` is C-contiguous (see :func:`worth_it`); ``x`` and ``y`` are C-contiguous with
    ``out``'s dtype and either ``out``'s size or one row (a divisor of it, read again for
    every row). ``y`` is ignored (and may be None) for unary operations.
    """
    flat = out.reshape(-1)
    xs, ys = (_read_only(v) for v in (x, x if y is None else y))
    kernel = _kernel()

    def work(lo: int, hi: int) -> None:
        kernel(op, flat, xs, xs.size, ys, ys.size, lo, hi, np.empty(3 * 64 // out.itemsize, out.dtype))

    _on_threads(work, flat.size)


def _on_threads(work: Any, n: int) -> None:
    """``work(lo, hi)`` over ranges of ``[0, n)`` that the threads claim as they come free (one thread when small)."""
    on_threads(work, n, threads_for(n))


# -- conversions (CAST) ----------------------------------------------------------------
#
# The same 64-byte vectors for CAST between contiguous arrays: each vector operation
# converts ``64 // out.itemsize`` source elements. Two conversions, each exactly the
# reference's rule (``tests/test_cpu_cast_stream.py`` checks them):
# * FLOAT32 -> FLOAT16 (the bits as UINT16): LLVM's ``fptrunc`` (``vcvtps2ph`` with F16C),
#   IEEE rounding to nearest even, overflow to inf, subnormal results kept: NumPy's
#   ``astype`` for every number. For a NaN the hardware sets the quiet bit; NumPy keeps the
#   mantissa's top ten bits as they are (0x7C01 where they are all zero), so NaN lanes take
#   NumPy's bits instead.
# * a float -> an integer of 8 or 16 bits: DirectML's truncation with NaN -> 0 and
#   saturation (:func:`~dmlops.descs.data_movement.cast_array`), as clamps in the source
#   type (both bounds are exact there), a select for NaN, and ``fptosi`` to 32 bits, then
#   the low bits. Wider integer targets keep the scalar kernels: 2^31 - 1 and the 64-bit
#   bounds are not floats, and the clamp would round past them.


TO_HALF, TO_INTEGER = range(2)
"""The conversion rules of :func:`_convert_intrinsic`."""


def converts(x: Array, out: Array) -> bool:
    """Whether :func:`convert` casts ``x`` into ``out`` (contiguous, aligned, a supported pair)."""
    if not (available() and x.flags.c_contiguous and out.flags.c_contiguous and x.flags.aligned):
        return False
    if not out.flags.aligned or x.shape != out.shape:
        return False
    if x.dtype == np.float32 and out.dtype == np.float16:
        return _has_f16c()
    return x.dtype in (np.float32, np.float64) and out.dtype in (np.int8, np.uint8, np.int16, np.uint16)


def _has_f16c() -> bool:
    """Whether numba compiles for a CPU with F16C (else ``fptrunc`` to half would be a library call)."""
    return host_has("f16c")


def _integer_vector(builder: Any, vx: Any, target: Any) -> Any:
    """``vx`` (floats) truncated toward zero, NaN -> 0, saturated to the integer type ``target``."""
    from llvmlite import ir

    lanes = vx.type.count
    floats = lambda v: ir.Constant(vx.type, [ir.Constant(vx.type.element, float(v))] * lanes)  # noqa: E731
    lo, hi = (
        (-(1 << (target.bitwidth - 1)), (1 << (target.bitwidth - 1)) - 1)
        if target.signed
        else (0, (1 << target.bitwidth) - 1)
    )
    v = builder.select(builder.fcmp_ordered(">", vx, floats(hi)), floats(hi), vx)
    v = builder.select(builder.fcmp_ordered("<", v, floats(lo)), floats(lo), v)
    v = builder.select(builder.fcmp_unordered("uno", vx, vx), floats(0), v)
    wide = builder.fptosi(v, ir.VectorType(ir.IntType(32), lanes))
    return builder.trunc(wide, ir.VectorType(ir.IntType(target.bitwidth), lanes))


def _half_vector(builder: Any, vx: Any) -> Any:
    """FLOAT32 lanes -> FLOAT16 bits, NumPy's rule (see the section comment).

    NaN lanes' bits are computed only for a vector that has one (a branch, rarely taken): the
    bit operations for them took most of the conversion's instructions.
    """
    from llvmlite import ir
    from numba.core import cgutils

    lanes = vx.type.count
    i32, i16 = ir.VectorType(ir.IntType(32), lanes), ir.VectorType(ir.IntType(16), lanes)
    word = lambda v: ir.Constant(i32, [ir.Constant(ir.IntType(32), v)] * lanes)  # noqa: E731
    rounded = builder.bitcast(builder.fptrunc(vx, ir.VectorType(ir.HalfType(), lanes)), i16)
    result = cgutils.alloca_once_value(builder, rounded)
    nans = builder.fcmp_unordered("uno", vx, vx)
    any_nan = builder.icmp_unsigned("!=", builder.bitcast(nans, ir.IntType(lanes)), ir.Constant(ir.IntType(lanes), 0))
    with builder.if_then(any_nan, likely=False):
        bits = builder.bitcast(vx, i32)
        sign = builder.and_(builder.lshr(bits, word(16)), word(0x8000))
        top = builder.lshr(builder.and_(bits, word(0x7FFFFF)), word(13))
        nan = builder.select(builder.icmp_unsigned("==", top, word(0)), word(0x7C01), builder.or_(top, word(0x7C00)))
        nan = builder.trunc(builder.or_(sign, nan), i16)
        builder.store(builder.select(nans, nan, rounded), result)
    return builder.load(result)


@cache
def _convert_intrinsic() -> Any:
    """``vconvert(rule, stream, dst, d, x, i)``: one vector of ``x`` converted into ``dst``.

    ``64 // dst.itemsize`` elements of ``x`` from ``i``, converted by ``rule`` (:data:`TO_HALF`:
    ``dst`` holds FLOAT16 bits as UINT16; :data:`TO_INTEGER`: ``dst`` is the integer target),
    stored at ``dst``'s element ``d`` (non-temporally, ``d`` 64-byte aligned, when ``stream``).
    Both flags are compile-time constants.
    """
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def vconvert(typingctx, rule, stream, dst, d, x, i):  # type: ignore[no-untyped-def]
        if not isinstance(rule, types.IntegerLiteral) or not isinstance(stream, types.BooleanLiteral):
            return None
        sig = types.void(rule, stream, dst, d, x, i)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            target, source = signature.args[2].dtype, signature.args[4].dtype
            lanes = 64 // (target.bitwidth // 8)

            def address(k: int, element: Any) -> Any:
                data = context.make_array(signature.args[k])(context, builder, args[k]).data
                return builder.bitcast(builder.gep(data, [args[k + 1]]), ir.VectorType(element, lanes).as_pointer())

            vx = builder.load(address(4, context.get_data_type(source)), align=source.bitwidth // 8)
            # the source's lines asked for ahead (_llvm.PREFETCH_BYTES), after the load: before it,
            # 64M elements to INT8 on one thread took 12.5 against 9.4 ms
            if stream.literal_value:
                prefetch_lines(builder, address(4, context.get_data_type(source)), lanes * source.bitwidth // 8)
            # the kernel's TO_HALF branch is compiled for every pair of types too, and never taken
            # but for FLOAT32 -> UINT16 bits: elsewhere it compiles as the integer conversion
            half = rule.literal_value == TO_HALF and target == types.uint16 and source == types.float32
            value = _half_vector(builder, vx) if half else _integer_vector(builder, vx, target)
            nt = stream.literal_value
            store = builder.store(
                value, address(2, ir.IntType(target.bitwidth)), align=64 if nt else target.bitwidth // 8
            )
            if nt:
                store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
            return context.get_dummy_value()

        return sig, codegen

    return vconvert


_VCONVERT: Any = None


@cache
def _convert_kernel() -> Any:
    """``convert(rule, out, x, lo, hi, stream, tx, to)``: ``out[lo:hi] = convert(x[lo:hi])``."""
    global _VCONVERT, _SFENCE
    from numba import njit

    _VCONVERT, _SFENCE = _convert_intrinsic(), _intrinsics()[1]

    @njit(nogil=True, cache=True, inline="always")
    def part(rule, out, x, a, b, tx, to):  # type: ignore[no-untyped-def]  # pragma: no cover
        # out[a:b] (less than a vector) through the scratch vectors: the same conversion, stored plainly
        tx[:] = 0
        tx[: b - a] = x[a:b]
        if rule == TO_HALF:
            _VCONVERT(TO_HALF, False, to, 0, tx, 0)
        else:
            _VCONVERT(TO_INTEGER, False, to, 0, tx, 0)
        out[a:b] = to[: b - a]

    @njit(nogil=True, cache=True)
    def convert(rule, out, x, lo, hi, stream, tx, to):  # type: ignore[no-untyped-def]  # pragma: no cover
        # whole vectors from out's first 64-byte boundary (streamed, or plain when not stream);
        # the head before it and the partial vector at the end through tx / to. The intrinsic takes
        # rule and stream as constants, hence one loop per pair; numba.literally(rule, stream) in
        # one loop instead made each call 4x slower (64M elements: 42 against 11 ms, its literal
        # dispatch per call)
        lanes = 64 // out.itemsize
        first = min(hi, lo + ((-(out.ctypes.data + lo * out.itemsize)) % 64) // out.itemsize)
        end = first + (hi - first) // lanes * lanes
        part(rule, out, x, lo, first, tx, to)
        if rule == TO_HALF:
            if stream:
                for k in range(first, end, lanes):
                    _VCONVERT(TO_HALF, True, out, k, x, k)
            else:
                for k in range(first, end, lanes):
                    _VCONVERT(TO_HALF, False, out, k, x, k)
        elif stream:
            for k in range(first, end, lanes):
                _VCONVERT(TO_INTEGER, True, out, k, x, k)
        else:
            for k in range(first, end, lanes):
                _VCONVERT(TO_INTEGER, False, out, k, x, k)
        part(rule, out, x, end, hi, tx, to)
        _SFENCE()

    return convert


def convert(out: Array, x: Array) -> None:
    """``out = cast(x)`` for a pair :func:`converts` accepts, over the threads; streamed when large."""
    rule = TO_HALF if out.dtype == np.float16 else TO_INTEGER
    flat = out.reshape(-1).view(np.uint16) if rule == TO_HALF else out.reshape(-1)
    xs = _read_only(x)
    kernel = _convert_kernel()
    stream = out.nbytes >= STREAM_MIN_BYTES
    lanes = 64 // out.itemsize

    def work(lo: int, hi: int) -> None:
        kernel(rule, flat, xs, lo, hi, stream, np.empty(lanes, x.dtype), np.empty(lanes, flat.dtype))

    _on_threads(work, flat.size)


# -- copies ----------------------------------------------------------------------------
#
# A large copy between views whose innermost axis (after merging the axes both views lay out
# alike) is contiguous in both: JOIN's and SPLIT's halves, a SLICE of whole rows, any copy
# program's step of long rows. Each row is copied as whole 64-byte vectors from the destination's first 64-byte
# boundary, streamed, with the elements before it and after the last whole vector copied
# plainly. Bits are copied (the arrays are viewed as unsigned integers), so every type and NaN
# payload survives.

COPY_MIN_ROW = 64
"""Rows shorter than this many elements keep NumPy's copy (their plain head and tail would dominate)."""


def _merged(shape: tuple[int, ...], *strides: tuple[int, ...]) -> tuple[list[int], list[list[int]]]:
    """``shape`` with adjacent axes merged where every strides list steps over them alike; size-1 axes dropped."""
    axes = [i for i, n in enumerate(shape) if n != 1]
    sizes: list[int] = []
    merged: list[list[int]] = [[] for _ in strides]
    for i in axes:
        if sizes and all(m[-1] == s[i] * shape[i] for m, s in zip(merged, strides)):
            sizes[-1] *= shape[i]
            for m, s in zip(merged, strides):
                m[-1] = s[i]
            continue
        sizes.append(shape[i])
        for m, s in zip(merged, strides):
            m.append(s[i])
    return sizes or [1], [m or [1] for m in merged]


def copies(out: Array, source: Array) -> bool:
    """Whether :func:`copy` takes this copy: large, same type, no overlap, rows contiguous in both."""
    if not (out.nbytes >= STREAM_MIN_BYTES and out.dtype == source.dtype and available()):
        return False
    if out.itemsize not in (1, 2, 4, 8) or out.shape != source.shape or np.may_share_memory(out, source):
        return False
    if not (out.flags.aligned and source.flags.aligned):
        return False
    sizes, (so, ss) = _merged(out.shape, out.strides, source.strides)
    repeats = any(s == 0 for s in so)  # an output that repeats elements: NumPy writes them in order
    return so[-1] == ss[-1] == out.itemsize and sizes[-1] >= COPY_MIN_ROW and not repeats


@cache
def _copy_kernel() -> Any:
    """``rows(dst, do, ds, src, so, ss, sizes, lo, hi)``: elements ``[lo, hi)`` (row-major) of a grid."""
    global _VOP, _SFENCE
    from numba import njit

    _VOP, _SFENCE = _intrinsics()

    @njit(nogil=True, cache=True, boundscheck=False)
    def rows(dst, do, ds, src, so, ss, sizes, lo, hi):  # type: ignore[no-untyped-def]  # pragma: no cover
        # dst, src: 1-D memory; do, so: the element offsets of the grid's first element; ds, ss:
        # element strides of the outer axes (the last axis is contiguous in both)
        n = sizes[-1]
        item = dst.itemsize
        lanes = 64 // item
        address = dst.ctypes.data
        r = lo // n
        while r * n < hi:
            a, b = max(lo - r * n, 0), min(hi - r * n, n)
            pd, ps, q = do, so, r
            for i in range(sizes.size - 2, -1, -1):
                c = q % sizes[i]
                q //= sizes[i]
                pd += c * ds[i]
                ps += c * ss[i]
            first = min(b, a + ((-(address + (pd + a) * item)) % 64) // item)
            end = first + (b - first) // lanes * lanes
            for k in range(a, first):
                dst[pd + k] = src[ps + k]
            for k in range(first, end, lanes):
                _VOP(IDENTITY, True, dst, pd + k, src, ps + k, src, ps + k)
            for k in range(end, b):
                dst[pd + k] = src[ps + k]
            r += 1
        _SFENCE()

    return rows


def copy(out: Array, source: Array) -> None:
    """``out[...] = source`` bit for bit, for a copy :func:`copies` takes, over the threads."""
    sizes, (so, ss) = _merged(out.shape, out.strides, source.strides)
    bits = np.dtype(f"u{out.itemsize}")
    # the merged grid's strides, in elements, for views of the same memory laid out as the grid
    dst, d0, _ = flat_memory(out.view(bits), writeable=True)
    src, s0, _ = flat_memory(source.view(bits))
    ds = np.array([s // out.itemsize for s in so], np.int64)
    ss_ = np.array([s // out.itemsize for s in ss], np.int64)
    grid = np.array(sizes, np.int64)
    kernel = _copy_kernel()

    def work(lo: int, hi: int) -> None:
        kernel(dst, d0, ds, src, s0, ss_, grid, lo, hi)

    _on_threads(work, out.size)
