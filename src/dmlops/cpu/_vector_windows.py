"""AVERAGE_POOLING's window sums along a row, on 64-byte vectors written in LLVM IR.

The pooling kernel (``pooling._window_sums``) sums the windows of a row's interior output
columns together: for each in-bounds input row of the window, each column's sum gets that
row's ``WindowSize[W]`` elements added in order. Written as numba loops, that took a
de-interleaving pass (the stride's phases into scratch rows) and a pass over the sums per
one to three taps, with loop overhead for every input row: about 10 cycles per output
element for a 3x3 window of stride 2 on the 2-vCPU VM, where the memory allows about one.

:func:`row_window_sums` does one input row's additions in one pass: for 16 output columns
at a time, each tap's elements are loaded as a vector (stride 1), or as 32 consecutive
elements whose even lanes are taken (stride 2: ``vpermt2ps``), and added to the sums in
the scalar loop's order, so every sum sees the same float32 additions as the reference's.
The last partial vector uses lane masks; a stride-2 load's unused last element is masked
off too, so nothing past the window's last element is read.

Where :func:`._vector_math.available` is False the intrinsic compiles as the scalar loop it
replaces.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ._vector_math import LANES, Vectors, available, float_data, masked_load, masked_store, over_vectors


def _scalar_row_sums(acc, row, first, count, stride, taps, dilation, fresh):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    for j in range(count):
        total = acc.dtype.type(0.0) if fresh else acc[j]
        column = first + stride * j
        for kw in range(taps):
            total += row[column + kw * dilation]
        acc[j] = total


@cache
def row_window_sums() -> Any:
    """The numba intrinsic ``row_window_sums(acc, row, first, count, stride, taps, dilation, fresh)``.

    For ``j < count``: ``acc[j] = (((s + row[c]) + row[c + dilation]) + ...)`` over ``taps``
    elements, ``c = first + stride * j``, ``s`` = +0 when ``fresh`` else ``acc[j]``. ``acc``
    and ``row`` are 1-D contiguous float32 arrays (a ``row`` of another type compiles as the
    scalar loop, for callers' branches that never run); ``stride`` is the literal 1 or 2;
    every column read must lie in ``row``. Where the vectors are not :func:`available`, the
    call compiles as that scalar loop, whose sums are the same bit for bit.
    """
    from llvmlite import ir  # type: ignore[import-untyped]
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def sums(typingctx, acc, row, first, count, stride, taps, dilation, fresh):  # type: ignore[no-untyped-def]
        if not isinstance(acc, types.Array) or acc.dtype != types.float32 or not isinstance(row, types.Array):
            return None
        if not isinstance(stride, types.IntegerLiteral) or stride.literal_value not in (1, 2):
            return None
        step = stride.literal_value
        sig = types.void(acc, row, types.intp, types.intp, stride, types.intp, types.intp, types.boolean)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            if not available() or signature.args[1].dtype != types.float32:  # (other rows: a branch never taken)
                return context.compile_internal(builder, _scalar_row_sums, signature, args)
            v = Vectors(builder)
            i64 = ir.IntType(64)
            sums_at = float_data(context, builder, signature.args[0], args[0])
            row_at = float_data(context, builder, signature.args[1], args[1])
            first, taps, dilation, fresh = args[2], args[5], args[6], args[7]
            wide = ir.VectorType(ir.FloatType(), LANES * step)
            even = ir.Constant(ir.VectorType(ir.IntType(32), LANES), [step * i for i in range(LANES)])
            zeros = ir.Constant(wide, [ir.Constant(ir.FloatType(), 0.0)] * (LANES * step))
            # a stride-2 load's lane mask: element 2i takes output lane i's, element 2i + 1 is never read
            none = ir.Constant(ir.VectorType(ir.IntType(1), LANES), [0] * LANES)
            spread = ir.Constant(
                ir.VectorType(ir.IntType(32), 2 * LANES), [i // 2 if i % 2 == 0 else LANES for i in range(2 * LANES)]
            )

            def body(start: Any, mask: Any) -> None:
                # the lanes' first columns: first + stride * (start + lane)
                base = builder.add(first, builder.mul(start, ir.Constant(i64, step)))
                address = builder.bitcast(builder.gep(sums_at, [start]), v.type.as_pointer())
                if mask is None:
                    old = builder.load(address, align=4)
                else:
                    old = masked_load(builder, address, mask, v.splat(0.0))
                total = cgutils.alloca_once_value(builder, builder.select(fresh, v.splat(0.0), old))
                lanes = mask if mask is not None else ir.Constant(ir.VectorType(ir.IntType(1), LANES), [1] * LANES)
                with cgutils.for_range(builder, taps) as tap:
                    column = builder.add(base, builder.mul(tap.index, dilation))
                    at = builder.bitcast(builder.gep(row_at, [column]), wide.as_pointer())
                    if step == 1:
                        values = masked_load(builder, at, lanes, v.splat(0.0))
                    else:  # 32 elements, the even ones taken; the odd ones are never read
                        values = builder.shuffle_vector(
                            masked_load(builder, at, builder.shuffle_vector(lanes, none, spread), zeros),
                            ir.Constant(wide, ir.Undefined),
                            even,
                        )
                    builder.store(builder.fadd(builder.load(total), values), total)
                if mask is None:
                    builder.store(builder.load(total), address, align=4)
                else:
                    masked_store(builder, builder.load(total), address, mask)

            over_vectors(builder, args[3], body)
            return context.get_dummy_value()

        return sig, codegen

    return sums
