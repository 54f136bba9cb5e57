"""Numba intrinsics that shape the machine code LLVM makes of a kernel, computing nothing.

:func:`wide_vectors`: LLVM vectorises with 32-byte vectors on the Intel CPUs this project
runs on, even where they have AVX-512 (its tuning for them prefers 256-bit vectors, for the
clock); a kernel that calls it is vectorised with 64-byte vectors. On the 2-vCPU VM, whose
two vCPUs share one core's execution units, compute-bound loops then take about half the
instructions: a float32 exp polynomial ran at 53 against 43 GB/s on one thread (L2).
"""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def wide_vectors() -> Any:
    """The numba intrinsic ``wide_vectors()``: the calling function prefers 512-bit vectors.

    It sets the function's ``"prefer-vector-width"="512"`` attribute, read by LLVM's loop
    vectoriser; on CPUs without AVX-512 LLVM keeps what it has. Only the function that calls
    it is affected (an attribute is not inherited by inlining), so call it in the function
    that holds the loop.
    """
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def wide(typingctx):  # type: ignore[no-untyped-def]
        sig = types.void()

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            # llvmlite's attribute set names only its known flags; a string attribute is written as is
            set.add(builder.function.attributes, '"prefer-vector-width"="512"')
            return context.get_dummy_value()

        return sig, codegen

    return wide


@cache
def host_has(feature: str) -> bool:
    """Whether numba compiles for this CPU and it has ``feature`` (an LLVM feature name: ``f16c``, ``avx512f``).

    False when numba is told to compile for another CPU (``NUMBA_CPU_NAME``, say ``generic``) or
    with the feature turned off (``NUMBA_CPU_FEATURES``): code using it would not run there, or
    LLVM would expand it into library calls.
    """
    import numba
    from llvmlite import binding  # type: ignore[import-untyped]

    if getattr(numba.config, "CPU_NAME", None) not in (None, "host"):
        return False
    if f"-{feature}" in (getattr(numba.config, "CPU_FEATURES", None) or ""):
        return False
    return bool(binding.get_host_cpu_features().get(feature, False))


PREFETCH_BYTES = 2048
"""How far ahead of a stream's loads :func:`prefetch_lines` asks for lines. Measured on the
2-vCPU VM, 64M elements on one thread: CAST FLOAT32 -> INT8 15.6 -> 9.5 ms and -> FLOAT16 15.3
-> 10.0 ms with every source line asked for 2 KiB ahead (1 and 4 KiB within 10 % of it); a
streamed GELU 43 -> 10 ms: with non-temporal stores, the hardware prefetchers alone left those
loads waiting. Not a rule: ``_stream``'s one-load-one-store element-wise vectors ran slower
with it (ABS 12.6 -> 18.7 ms on two threads), so each kernel's use of it is measured."""


def prefetch_lines(builder: Any, address: Any, size: int, ahead: int = PREFETCH_BYTES) -> None:
    """``prefetcht0`` of each 64-byte line of ``[address + ahead, address + ahead + size)`` bytes.

    ``address`` is any pointer IR value; a prefetch is a hint, so lines past an array's end
    cost nothing more than a wasted request (it never faults).
    """
    from llvmlite import ir
    from numba.core import cgutils

    byte, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32]), "llvm.prefetch.p0"
    )
    start = builder.bitcast(address, byte)
    read, into_l1, data = ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)
    for offset in range(ahead, ahead + max(size, 1), 64):
        builder.call(fn, [builder.gep(start, [ir.Constant(ir.IntType(64), offset)]), read, into_l1, data])
