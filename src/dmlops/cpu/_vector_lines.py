"""FLOAT32 line reductions on 64-byte vectors: REDUCE SUM, MAX and MIN of contiguous lines.

LLVM vectorises numba's scalar loops with 32-byte vectors on the Intel CPUs this project
runs on (its tuning for them prefers 256-bit vectors), so a float32 sum widened to
float64 took four conversions and four additions every 16 elements. On the 2-vCPU VM,
whose two vCPUs share one core's execution units (two threads reach 1.2x one thread's
in-cache throughput), that instruction count, not the memory, bounded the last-axis
REDUCE SUM of 256 MiB: 15.8 ms on two threads, against 9.9 ms for the loop below,
written in LLVM IR on 64-byte vectors (``zmm`` registers), and torch's 9.5 ms
(docs/performance.md).

* :func:`line_sum` returns the float64 sum of a run of float32 elements, in ``ACCUMULATORS``
  vectors of 16 float64 lanes each, added lane by lane at the end in a fixed order. Each
  element is widened exactly, so only the float64 roundings differ from another order:
  the kernels round the total to float32 once, as the reference does.
* :func:`line_extreme` returns the largest (or smallest) of a run, NaN never winning (as
  ``x > m ? x : m``: ``vmaxps`` / ``vminps``), from -inf (+inf). Which of +0 and -0 it
  returns for a zero result depends on the lanes; callers look up the line's first zero.

The float comparisons follow the thread's floating-point environment: with denormals-are-zero
set (``torch.set_flush_denormal(True)``, code built with fast-math), a subnormal compares equal
to zero, as in every float computation of the cpu backend, which assumes the default one.

Both read whole ``STEP``-element steps only; the caller takes the rest one by one. They read
the array's memory from its data pointer on: the caller passes contiguous arrays (1-D views
whose elements are adjacent), as a strided view's elements are not where they would look.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ._llvm import prefetch_lines

LANES = 16
"""float32 elements in one 64-byte vector."""
ACCUMULATORS = 2
"""Independent accumulators: a step reads ``ACCUMULATORS`` vectors (4 measured slower)."""
STEP = LANES * ACCUMULATORS
"""Elements one loop iteration reads; the intrinsics cover ``count // STEP`` whole steps."""
PREFETCH_BYTES = 2048
"""Each vector load asks for the line this far ahead (``prefetcht0``; a hint, it never faults
past the end): 10.1-10.4 against 9.0-9.8 ms for the 256 MiB sum on two threads. In the bench
(15 rounds against torch, 2026-11-26): 512 bytes 0.98x, 1024 1.02x, 2048 1.11x, 4096 1.12x for
the last-axis SUM; 2048 kept, as 4096 slowed MAX (1.24x -> 1.15x)."""


def _vector_loop(context: Any, builder: Any, array: Any, arg: Any, span: Any, initial: Any, combine: Any) -> Any:
    """The loop shared by both intrinsics: accumulators over the whole steps of ``span``.

    ``span`` is (start, count) of the 1-D ``array`` (``arg``, its value): ``ACCUMULATORS``
    vectors from ``initial``, each step
    loading ``ACCUMULATORS`` float32 vectors and folding each into its accumulator with
    ``combine(builder, accumulator, vector)``; returns the accumulators' values.
    """
    from llvmlite import ir  # type: ignore[import-untyped]
    from numba.core import cgutils

    i64 = ir.IntType(64)
    data = context.make_array(array)(context, builder, arg).data
    floats = ir.VectorType(ir.FloatType(), LANES)
    base = builder.bitcast(builder.gep(data, [span[0]]), ir.FloatType().as_pointer())
    slots = [cgutils.alloca_once_value(builder, initial) for _ in range(ACCUMULATORS)]
    steps = builder.udiv(span[1], ir.Constant(i64, STEP))
    with cgutils.for_range(builder, steps) as loop:
        first = builder.mul(loop.index, ir.Constant(i64, STEP))
        for k, slot in enumerate(slots):
            at = builder.add(first, ir.Constant(i64, k * LANES))
            prefetch_lines(builder, builder.gep(base, [at]), 64, PREFETCH_BYTES)
            vector = builder.load(builder.bitcast(builder.gep(base, [at]), floats.as_pointer()), align=1)  # any address
            builder.store(combine(builder, builder.load(slot), vector), slot)
    return [builder.load(slot) for slot in slots]


@cache
def line_sum() -> Any:
    """The numba intrinsic ``line_sum(a, start, count) -> float64``.

    The sum of ``a[start:]``'s first ``count // STEP * STEP`` elements (``a`` a 1-D float32
    array), widened to float64.
    """
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def total(typingctx, a, start, count):  # type: ignore[no-untyped-def]
        if not isinstance(a, types.Array) or a.dtype != types.float32:
            return None
        sig = types.float64(a, start, count)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            doubles = ir.VectorType(ir.DoubleType(), LANES)
            zero = ir.Constant(doubles, [ir.Constant(ir.DoubleType(), 0.0)] * LANES)

            def add(b: Any, acc: Any, vector: Any) -> Any:
                return b.fadd(acc, b.fpext(vector, doubles))  # exact widening

            accumulators = _vector_loop(context, builder, signature.args[0], args[0], args[1:], zero, add)
            lanes = accumulators[0]
            for other in accumulators[1:]:
                lanes = builder.fadd(lanes, other)
            result = ir.Constant(ir.DoubleType(), 0.0)
            for i in range(LANES):  # lane 0 first, a fixed order
                result = builder.fadd(result, builder.extract_element(lanes, ir.Constant(ir.IntType(32), i)))
            return result

        return sig, codegen

    return total


@cache
def line_extreme() -> Any:
    """The numba intrinsic ``line_extreme(a, start, count, largest) -> int32``.

    The bits of the largest (``largest``, a compile-time constant) or smallest of ``a[start:]``'s first
    ``count // STEP * STEP`` elements, NaN never winning; -inf (+inf) when there are none.
    ``a`` is 1-D, of float32 or of their bits as int32.
    """
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def extreme(typingctx, a, start, count, largest):  # type: ignore[no-untyped-def]
        if not isinstance(a, types.Array) or a.dtype not in (types.float32, types.int32):
            return None
        if not isinstance(largest, types.BooleanLiteral):
            return None
        wants_max = largest.literal_value
        sig = types.int32(a, start, count, largest)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            floats = ir.VectorType(ir.FloatType(), LANES)
            far = ir.Constant(ir.FloatType(), float("-inf") if wants_max else float("inf"))
            order = ">" if wants_max else "<"

            def wins(b: Any, best: Any, candidate: Any) -> Any:  # ordered: a NaN candidate never wins
                return b.select(b.fcmp_ordered(order, candidate, best), candidate, best)

            initial = ir.Constant(floats, [far] * LANES)
            accumulators = _vector_loop(context, builder, signature.args[0], args[0], args[1:3], initial, wins)
            lanes = accumulators[0]
            for other in accumulators[1:]:
                lanes = wins(builder, lanes, other)
            result = far
            for i in range(LANES):
                result = wins(builder, result, builder.extract_element(lanes, ir.Constant(ir.IntType(32), i)))
            return builder.bitcast(result, ir.IntType(32))

        return sig, codegen

    return extreme
