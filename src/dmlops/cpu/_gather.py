"""Vector gathers for the indexing kernels: ``LANES`` indexed elements read by one instruction.

LLVM builds no vector gather from a scalar loop of indexed loads for the CPUs this project
runs on (its tuning for them prefers scalar loads), so a GATHER_ELEMENTS row took one load,
compare and store per element. :func:`gather_step` writes the gather in LLVM IR instead, as
the target-independent ``llvm.masked.gather``: ``vpgatherqps`` / ``vpgatherqq`` where the
CPU has AVX-512 or AVX2, scalar loads elsewhere, the same bits everywhere. On the 2-core
Xeon (Sapphire Rapids) a (4096, 4096) FLOAT32 gather along rows of INT64 indices took
10.9 ms on two threads against 13.1 for the best scalar loop (docs/performance.md).

Index rules are the scalar kernels' (``index_values``): an index is read as a signed 64-bit
value (a UINT64 of 2^63 or more reads as negative), a negative one gains ``n`` once when
``wrap``, and one still outside ``[0, n)`` is not read: its output element is left as it
was and the step counts it, so the caller raises the reference's error.
"""

from __future__ import annotations

from functools import cache
from typing import Any

LANES = 8
"""Elements per :func:`gather_step`: 64 bytes of INT64 indices."""


@cache
def gather_step() -> Any:
    """The numba intrinsic ``gather_step(src, idx, dst, j, n, wrap) -> int64``.

    For the ``LANES`` positions ``j .. j + LANES - 1`` of ``idx`` and ``dst`` (1-D contiguous
    arrays; ``src`` and ``dst`` of one integer type, ``idx`` of any integer type):
    ``dst[k] = src[v]`` with ``v`` the wrapped index ``idx[k]`` where ``0 <= v < n``. Returns
    how many of them were out of range (their ``dst`` elements are not written).
    """
    from llvmlite import ir  # type: ignore[import-untyped]
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    i64 = ir.IntType(64)
    lanes_of = ir.VectorType

    def splat(builder: Any, value: Any) -> Any:
        vector = lanes_of(value.type, LANES)
        one = builder.insert_element(ir.Constant(vector, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
        zeros = ir.Constant(lanes_of(ir.IntType(32), LANES), [0] * LANES)
        return builder.shuffle_vector(one, ir.Constant(vector, ir.Undefined), zeros)

    def declare(builder: Any, name: str, result: Any, operands: list[Any]) -> Any:
        return cgutils.get_or_insert_function(builder.module, ir.FunctionType(result, operands), name)

    @intrinsic
    def step(typingctx, src, idx, dst, j, n, wrap):  # type: ignore[no-untyped-def]
        arrays = (src, idx, dst)
        if not all(isinstance(a, types.Array) and isinstance(a.dtype, types.Integer) for a in arrays):
            return None
        if src.dtype != dst.dtype:
            return None
        sig = types.int64(src, idx, dst, j, n, wrap)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            s, x, d = (context.make_array(signature.args[k])(context, builder, args[k]) for k in range(3))
            index_type, element_type = signature.args[1].dtype, signature.args[0].dtype
            at = args[3]
            raw_type = lanes_of(ir.IntType(index_type.bitwidth), LANES)
            raw = builder.load(builder.bitcast(builder.gep(x.data, [at]), raw_type.as_pointer()), align=1)
            wide = lanes_of(i64, LANES)
            if index_type.bitwidth < 64:  # as np.int64(raw): sign-extended when signed, else zero-extended
                raw = builder.sext(raw, wide) if index_type.signed else builder.zext(raw, wide)
            count = splat(builder, builder.sext(args[4], i64) if args[4].type.width < 64 else args[4])
            zero = ir.Constant(wide, [ir.Constant(i64, 0)] * LANES)
            wrapped = builder.select(builder.icmp_signed("<", raw, zero), builder.add(raw, count), raw)
            wrap = args[5]
            if wrap.type.width != 1:
                wrap = builder.icmp_unsigned("!=", wrap, ir.Constant(wrap.type, 0))
            value = builder.select(wrap, wrapped, raw)
            ok = builder.icmp_unsigned("<", value, count)  # negatives are huge unsigned: out of range too
            element = ir.IntType(element_type.bitwidth)
            vector = lanes_of(element, LANES)
            # addresses src + v * itemsize, as integers (llvmlite's gep takes no vector of indices);
            # lanes out of range read src itself, and are masked off anyway
            size = ir.Constant(wide, [ir.Constant(i64, element_type.bitwidth // 8)] * LANES)
            offsets = builder.mul(builder.select(ok, value, zero), size)
            addresses = builder.add(splat(builder, builder.ptrtoint(s.data, i64)), offsets)
            pointers = builder.inttoptr(addresses, lanes_of(element.as_pointer(), LANES))
            align = ir.Constant(ir.IntType(32), element_type.bitwidth // 8)
            mangled = f"v{LANES}i{element.width}.v{LANES}p0"
            gathered = builder.call(
                declare(builder, f"llvm.masked.gather.{mangled}", vector, [pointers.type, align.type, ok.type, vector]),
                [pointers, align, ok, ir.Constant(vector, ir.Undefined)],
            )
            target = builder.bitcast(builder.gep(d.data, [at]), vector.as_pointer())
            store = f"llvm.masked.store.v{LANES}i{element.width}.p0"
            operands = [vector, target.type, align.type, ok.type]
            builder.call(declare(builder, store, ir.VoidType(), operands), [gathered, target, align, ok])
            missed = builder.bitcast(builder.not_(ok), ir.IntType(LANES))
            popcount = declare(builder, f"llvm.ctpop.i{LANES}", ir.IntType(LANES), [ir.IntType(LANES)])
            return builder.zext(builder.call(popcount, [missed]), i64)

        return sig, codegen

    return step
