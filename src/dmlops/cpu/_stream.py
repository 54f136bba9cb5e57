"""Large element-wise results written with non-temporal (streaming) stores.

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
"""

from __future__ import annotations

import platform
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._copy import _executor, thread_count

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
def scalar_store() -> tuple[Any, Any]:
    """(put, sfence): numba intrinsics; ``put(dst, i, value)`` stores one element non-temporally.

    On x86 an integer element becomes ``movnti``: the write-combining buffers merge a line's
    consecutive stores into one full-line write, with no read-for-ownership. For kernels that
    fill an output element by element in address order (a gather), ending with ``sfence()``.
    """
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def put(typingctx, dst, i, value):  # type: ignore[no-untyped-def]
        if not isinstance(dst.dtype, types.Integer) or dst.dtype != value:
            return None
        sig = types.void(dst, i, value)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            store = builder.store(args[2], builder.gep(data, [args[1]]), align=signature.args[0].dtype.bitwidth // 8)
            store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
            return context.get_dummy_value()

        return sig, codegen

    return put, _intrinsics()[1]


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
    n = flat.size
    kernel = _kernel()
    threads = thread_count()
    bounds = [n * t // threads for t in range(threads + 1)]
    jobs = [(bounds[t], bounds[t + 1]) for t in range(threads) if bounds[t + 1] > bounds[t]]

    def work(lo: int, hi: int) -> None:
        kernel(op, flat, xs, xs.size, ys, ys.size, lo, hi, np.empty(3 * 64 // out.itemsize, out.dtype))

    futures = [_executor().submit(work, lo, hi) for lo, hi in jobs[1:]]
    try:
        work(*jobs[0])
    finally:
        for f in futures:
            f.exception()
    for f in futures:
        f.result()
