"""FLOAT32 EXP, SIGMOID and GELU on 64-byte vectors, written in LLVM IR (AVX-512 machines).

numba's loops compute these from scalar code, which LLVM vectorises lane by lane: the range
reductions' clamps, the NaN and infinity selects and the two-factor ``2^n`` (for gradual
underflow) took about half of exp's 26 vector instructions. On the 2-vCPU VM, whose two vCPUs
share one core's execution units, those instructions, not the memory, bounded the 64M-element
EXP (docs/performance.md). Here each function is built on whole ``<16 x float>`` vectors:

* **exp** (:func:`_exp`): ``n = rint(y log2 e)``, ``r = y - n ln2`` (Cody-Waite's two-part
  ln2, each product exact in an FMA), ``exp(r)`` by a degree-6 polynomial (a minimax fit by
  Lawson's algorithm on ``|r| <= 0.3486``: relative error 2e-9, below float32's rounding),
  then ``vscalefps``: ``p * 2^n`` in one instruction, correctly rounded, so results below
  2^-126 underflow gradually and results above FLT_MAX become inf without a select. The
  argument is clamped to [-104, 89] first, by selects that keep a NaN (which then runs
  through every step as a NaN).
* **sigmoid** (:func:`_sigmoid`): ``1 / (1 + exp(-x))``, a true division (``vdivps``).
* **gelu** (:func:`_gelu`): the cpu backend's float32 GELU (elementwise's ``gelu32``, whose
  comment gives its error against the reference): ``x Phi(x)`` with ``Phi(-|x|)`` from
  Abramowitz and Stegun's 7.1.26, on these vectors.

Every lane's result depends on that lane alone, and the last partial vector of a run is
loaded and stored with lane masks (``llvm.masked.load`` / ``masked.store``), so an element
gets the same bits wherever it sits in the array. They differ from the scalar functions'
(the cpu backend's other path, for strided views and CPUs without AVX-512) by a unit or two
in the last place; both are within the reference's tolerance, as tests check.

:func:`available` is False where LLVM may not emit AVX-512 (no AVX-512F on the host, or
numba told to compile for another CPU); callers then keep their numba ufunc.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ._llvm import host_has, prefetch_lines

LANES = 16
"""float32 elements in one 64-byte vector."""

SUM_BLOCK = 1024
"""Elements per block of :func:`softmax_pass`'s float32 sums (added in float64)."""

EXP, SIGMOID, GELU = range(3)
"""The functions of :func:`vector_map`, by code."""

STREAMED = frozenset({EXP, SIGMOID})
"""The functions whose large results are written with non-temporal stores (``apply``'s
``stream``): cheap enough that memory bounds them (64M elements on two threads: EXP 20.1 ->
13.3 ms, SIGMOID 21.0 -> 12.7). GELU's instructions bound it: 20.9 ms with plain stores, 21.4
streamed, so its result stays in the cache."""

EXP_POLYNOMIAL = (
    1.0,
    1.0,
    0.49999991059303284,
    0.16666413843631744,
    0.04166826233267784,
    0.008375300094485283,
    0.0013836236903443933,
)
"""exp(r)'s polynomial on ``|r| <= 0.3486``, from the constant term up (float32 values)."""

LN2_HIGH, LN2_LOW = 0.693359375, -2.12194440e-4
"""ln 2 = LN2_HIGH + LN2_LOW; LN2_HIGH has 9 significant bits, so ``n * LN2_HIGH`` is exact."""


def available() -> bool:
    """Whether the vector kernels run here (x86-64 with AVX-512F, numba compiling for this CPU)."""
    return host_has("avx512f")


class Vectors:
    """IR helpers for ``<16 x float>`` values in one builder."""

    def __init__(self, builder: Any) -> None:
        from llvmlite import ir  # type: ignore[import-untyped]

        self.b = builder
        self.type = ir.VectorType(ir.FloatType(), LANES)
        self.module = builder.module

    def splat(self, value: float) -> Any:
        from llvmlite import ir

        return ir.Constant(self.type, [ir.Constant(ir.FloatType(), value)] * LANES)

    def _intrinsic(self, name: str, args: list[Any]) -> Any:
        from llvmlite import ir
        from numba.core import cgutils

        fn = cgutils.get_or_insert_function(self.module, ir.FunctionType(self.type, [a.type for a in args]), name)
        return self.b.call(fn, args)

    def fma(self, a: Any, b: Any, c: Any) -> Any:
        return self._intrinsic("llvm.fma.v16f32", [a, b, c])

    def fabs(self, a: Any) -> Any:
        return self._intrinsic("llvm.fabs.v16f32", [a])

    def rint(self, a: Any) -> Any:
        """Rounded to an integer in the current mode (nearest, ties to even)."""
        return self._intrinsic("llvm.rint.v16f32", [a])

    def scale(self, a: Any, n: Any) -> Any:
        """``a * 2^n`` (``n`` integral floats), one rounding (``vscalefps``)."""
        from llvmlite import ir

        mask, current_rounding = ir.Constant(ir.IntType(16), -1), ir.Constant(ir.IntType(32), 4)
        return self._intrinsic("llvm.x86.avx512.mask.scalef.ps.512", [a, n, a, mask, current_rounding])

    def at_least(self, a: Any, low: float) -> Any:
        """``max(a, low)``, a NaN kept."""
        return self.b.select(self.b.fcmp_ordered("<", a, self.splat(low)), self.splat(low), a)

    def at_most(self, a: Any, high: float) -> Any:
        """``min(a, high)``, a NaN kept."""
        return self.b.select(self.b.fcmp_ordered(">", a, self.splat(high)), self.splat(high), a)

    def polynomial(self, x: Any, coefficients: tuple[float, ...]) -> Any:
        """Horner's rule, from the highest coefficient down (``coefficients`` from the constant up)."""
        p = self.splat(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            p = self.fma(p, x, self.splat(c))
        return p

    def pairwise_sum(self, lanes: Any) -> Any:
        """The lanes' sum (float32 or float64 lanes), added pairwise in a fixed order.

        Lane i + lane i + w/2 of the w lanes, then i + w/4, ...: each step pairs lanes a fixed
        distance apart around the vector, so a rotation of the lanes gives the same sum.
        """
        from llvmlite import ir

        width = lanes.type.count
        while width > 1:
            width //= 2
            count = lanes.type.count
            lanes = self.b.fadd(lanes, self.shuffled(lanes, [width + i if i < width else i for i in range(count)]))
        return self.b.extract_element(lanes, ir.Constant(ir.IntType(32), 0))

    def shuffled(self, lanes: Any, order: list[int]) -> Any:
        """The vector whose lane i is ``lanes``' lane ``order[i]`` (as many lanes as ``order``)."""
        from llvmlite import ir

        indices = ir.Constant(ir.VectorType(ir.IntType(32), len(order)), order)
        return self.b.shuffle_vector(lanes, ir.Constant(lanes.type, ir.Undefined), indices)

    def widened(self, lanes: Any) -> tuple[Any, Any]:
        """A float32 vector's lanes 0-7 and 8-15 as two ``<8 x double>`` (exact)."""
        from llvmlite import ir

        half = LANES // 2
        wide = ir.VectorType(ir.DoubleType(), half)
        return tuple(self.b.fpext(self.shuffled(lanes, list(range(k, k + half))), wide) for k in (0, half))

    def load(self, base: Any, start: Any, mask: Any, passthru: Any = None) -> Any:
        """The vector at ``base[start]`` (a float pointer); with a ``mask``, lanes outside it are not read.

        Those lanes are ``passthru``'s (0 by default).
        """
        address = self.b.bitcast(self.b.gep(base, [start]), self.type.as_pointer())
        if mask is None:
            return self.b.load(address, align=4)
        return masked_load(self.b, address, mask, self.splat(0.0) if passthru is None else passthru)

    def store(self, value: Any, base: Any, start: Any, mask: Any, stream: bool = False) -> None:
        """``value`` at ``base[start]``: only the ``mask``'s lanes; ``stream``: non-temporally (64-byte aligned)."""
        address = self.b.bitcast(self.b.gep(base, [start]), self.type.as_pointer())
        if mask is not None:
            masked_store(self.b, value, address, mask)
        elif stream:
            from llvmlite import ir

            store = self.b.store(value, address, align=64)
            store.set_metadata("nontemporal", self.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
        else:
            self.b.store(value, address, align=4)

    def prefetch(self, base: Any, start: Any) -> None:
        """Ask for the line ``PREFETCH_BYTES`` past ``base[start]`` (:func:`._llvm.prefetch_lines`)."""
        prefetch_lines(self.b, self.b.gep(base, [start]), 64)

    def fence(self) -> None:
        """``sfence``: the non-temporal stores before it are ordered before any store after it."""
        from llvmlite import ir
        from numba.core import cgutils

        fn = cgutils.get_or_insert_function(self.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse.sfence")
        self.b.call(fn, [])


def _exp_core(v: Vectors, y: Any, sign: int) -> Any:
    """exp(sign * y) for ``sign * y`` in [-104, 89] or NaN, without negating ``y``.

    For ``sign`` -1 every step is the exact negation of the step for ``-y`` (``n`` from
    ``y * -log2 e``, ``r`` negated through the FMAs, the polynomial's odd coefficients
    negated), so both give the same bits. ``vscalefps`` rounds the results below 2^-149 to
    0 and those above FLT_MAX to inf.
    """
    n = v.rint(v.b.fmul(y, v.splat(sign * 1.4426950408889634)))
    r = v.fma(n, v.splat(-sign * LN2_HIGH), y)
    r = v.fma(n, v.splat(-sign * LN2_LOW), r)
    signed = tuple(c * sign**k for k, c in enumerate(EXP_POLYNOMIAL))
    return v.scale(v.polynomial(r, signed), n)


def _exp(v: Vectors, y: Any) -> Any:
    """exp(y), every float32 ``y`` (see the module's docstring)."""
    return _exp_core(v, v.at_most(v.at_least(y, -104.0), 89.0), 1)  # beyond: 0 and inf anyway


def _exp_of_nonpositive(v: Vectors, y: Any) -> Any:
    """exp(y) for ``y <= 0`` or NaN (one clamp fewer)."""
    return _exp_core(v, v.at_least(y, -104.0), 1)


def _sigmoid(v: Vectors, x: Any) -> Any:
    """1 / (1 + exp(-x)): 0 for x below -88.7 (exp overflows to inf), 1 above 17.4."""
    e = _exp_core(v, v.at_most(v.at_least(x, -89.0), 104.0), -1)
    return v.b.fdiv(v.splat(1.0), v.b.fadd(v.splat(1.0), e))


HALF_ERFC_POLYNOMIAL = tuple(0.5 * c for c in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
"""Abramowitz and Stegun 7.1.26's polynomial, halved (exactly): ``erfc(t) / 2 = s P(s) exp(-t^2)``."""


def _gelu(v: Vectors, x: Any) -> Any:
    """GELU, ``x Phi(x)``: elementwise's ``gelu32`` on vectors (its comment gives the error analysis).

    Its steps in fewer instructions: the 1/2 inside the polynomial (a power of two, so no
    rounding changes), exp(-t^2) without the negation, and ``x * (x < 0 ? c : 1 - c)`` for its
    two products. exp is this module's (``_exp_core``), not ``gelu32``'s, so results may differ
    from the scalar path's by a unit in the last place; both stay within the tolerance.
    """
    b = v.b
    t = b.fmul(v.fabs(x), v.splat(0.7071067811865476))
    s = b.fdiv(v.splat(1.0), v.fma(v.splat(0.3275911), t, v.splat(1.0)))  # t = inf: s = 0
    c = b.fmul(b.fmul(s, v.polynomial(s, HALF_ERFC_POLYNOMIAL)), _exp_core(v, v.at_most(b.fmul(t, t), 104.0), -1))
    phi = b.select(b.fcmp_ordered("<", x, v.splat(0.0)), c, b.fsub(v.splat(1.0), c))
    return b.fmul(x, phi)  # NaN: x * NaN; -inf * 0: NaN, as the reference's


_FUNCTIONS = {EXP: _exp, SIGMOID: _sigmoid, GELU: _gelu}


def over_vectors(builder: Any, total: Any, body: Any, aligned: Any = None) -> None:
    """``body(start, mask)`` for each vector of ``total`` elements.

    Whole vectors (``mask`` None), then the last partial one (``mask``: its lanes). With
    ``aligned`` (a float pointer), whole vectors start at the 64-byte boundaries of
    ``aligned + start``: the ``head`` elements before the first boundary come first, in the
    last lanes of a vector that starts ``LANES - head`` elements before the array (those
    lanes masked off), so element ``i`` is always in lane ``(i - head) % LANES``: a caller
    accumulating lanes gets the same partition of the elements, in the same order, for
    every alignment, rotated by ``head`` lanes (to which :meth:`Vectors.pairwise_sum` is
    blind: it pairs lanes ``LANES / 2``, then ``LANES / 4``, ... apart).
    """
    from llvmlite import ir
    from numba.core import cgutils

    i64 = ir.IntType(64)
    zero, lanes = ir.Constant(i64, 0), ir.Constant(i64, LANES)
    first = zero
    if aligned is not None:
        # the elements before the next 64-byte boundary (the pointer is 4-byte aligned)
        to_boundary = builder.sub(zero, builder.ptrtoint(aligned, i64))
        head = builder.udiv(builder.and_(to_boundary, ir.Constant(i64, 63)), ir.Constant(i64, 4))
        first = builder.select(builder.icmp_unsigned("<", head, total), head, total)  # head, at most total
        with builder.if_then(builder.icmp_unsigned("!=", first, zero)):
            skipped = builder.sub(lanes, head)  # lanes before element 0
            numbers = _lane_numbers()
            mask = builder.and_(
                builder.icmp_unsigned(">=", numbers, splat_int(builder, skipped)),
                builder.icmp_unsigned("<", numbers, splat_int(builder, builder.add(skipped, first))),
            )
            body(builder.sub(head, lanes), mask)
    whole = builder.udiv(builder.sub(total, first), lanes)
    with cgutils.for_range(builder, whole) as loop:
        body(builder.add(first, builder.mul(loop.index, lanes)), None)
    start = builder.add(first, builder.mul(whole, lanes))
    left = builder.sub(total, start)
    with builder.if_then(builder.icmp_unsigned("!=", left, zero)):
        body(start, builder.icmp_unsigned("<", _lane_numbers(), splat_int(builder, left)))


def _lane_numbers() -> Any:
    from llvmlite import ir

    return ir.Constant(ir.VectorType(ir.IntType(64), LANES), list(range(LANES)))


def float_data(context: Any, builder: Any, array_type: Any, value: Any) -> Any:
    """A numba array's data as a float pointer."""
    from llvmlite import ir

    data = context.make_array(array_type)(context, builder, value).data
    return builder.bitcast(data, ir.FloatType().as_pointer())


def _float32_arrays(*types_: Any) -> bool:
    from numba import types

    return all(isinstance(a, types.Array) and a.dtype == types.float32 for a in types_)


def _map(v: Vectors, source: Any, target: Any, count: Any, f: Any, stream: bool, prefetch: bool) -> None:
    """``target[i] = f(source[i])`` for ``i < count``, vector by vector (float pointers).

    ``stream``: whole vectors stored non-temporally from ``target``'s 64-byte boundaries,
    then fenced; ``prefetch``: each whole vector's source line asked for ahead.
    """

    def body(start: Any, mask: Any) -> None:
        value = v.load(source, start, mask)
        if prefetch and mask is None:
            v.prefetch(source, start)
        v.store(f(value), target, start, mask, stream)

    over_vectors(v.b, count, body, target if stream else None)
    if stream:
        v.fence()


@cache
def vector_map() -> Any:
    """The numba intrinsic ``vector_map(code, x, out, count, stream)``: ``out[i] = f(x[i])`` for ``i < count``.

    ``f`` is the function numbered ``code`` (a compile-time constant: :data:`EXP`,
    :data:`SIGMOID`, :data:`GELU`); ``x`` and ``out`` are 1-D contiguous float32 arrays of at
    least ``count`` elements (they may be the same memory: each vector is loaded before it
    is stored). ``stream`` (a constant): ``out``'s whole 64-byte lines are written with
    non-temporal stores, then fenced. Only where :func:`available`.
    """
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def vmap(typingctx, code, x, out, count, stream):  # type: ignore[no-untyped-def]
        if not isinstance(code, types.IntegerLiteral) or code.literal_value not in _FUNCTIONS:
            return None
        if not _float32_arrays(x, out) or not isinstance(stream, types.BooleanLiteral):
            return None
        function, streams = _FUNCTIONS[code.literal_value], stream.literal_value
        sig = types.void(code, x, out, count, stream)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            v = Vectors(builder)
            source = float_data(context, builder, signature.args[1], args[1])
            target = float_data(context, builder, signature.args[2], args[2])

            _map(v, source, target, args[3], lambda value: function(v, value), streams, prefetch=True)
            return context.get_dummy_value()

        return sig, codegen

    return vmap


_VECTOR_MAP: Any = None


@cache
def mapper() -> Any:
    """``apply(code, x, out, stream)``: ``out = f(x)`` (:func:`vector_map`) for 1-D contiguous float32 arrays.

    ``stream`` applies to the :data:`STREAMED` functions (``out`` 4-byte aligned); the others ignore it.
    """
    global _VECTOR_MAP
    from numba import njit

    _VECTOR_MAP = vector_map()

    @njit(nogil=True, cache=True)
    def apply(code, x, out, stream):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        # the intrinsic takes its code and stream flag as constants: one call for each pair
        if stream and code == EXP:
            _VECTOR_MAP(EXP, x, out, x.size, True)
        elif stream and code == SIGMOID:
            _VECTOR_MAP(SIGMOID, x, out, x.size, True)
        elif code == EXP:
            _VECTOR_MAP(EXP, x, out, x.size, False)
        elif code == SIGMOID:
            _VECTOR_MAP(SIGMOID, x, out, x.size, False)
        else:
            _VECTOR_MAP(GELU, x, out, x.size, False)

    return apply


@cache
def softmax_pass(fallback: Any) -> Any:
    """The numba intrinsic ``softmax_pass(x, m, out, count, following, done, factor, target, previous, stream)``.

    One pass of SOFTMAX's row loop, returning ``(sum, largest)``. For ``i < count``:

    * ``out[i] = exp(x[i] - m)`` (``x - m <= 0`` or NaN), and ``sum``, their sum (in the
      order below), a float64;
    * ``largest``: the largest of ``following[:count]``, NaN never winning (-inf if there is
      none): the next row's maximum, read while this row's exps are computed so that its
      loads from memory overlap the arithmetic (pass ``x`` itself for the last row);
    * when ``previous``: ``target[i] = done[i] * factor``, the previous row's result from its
      exps, written while this row is computed. With ``stream`` (a constant) its whole 64-byte
      lines are written non-temporally: spread through the pass, such stores cost little,
      where the same stores in a pass of their own stalled the loop (16384 rows of 1024,
      one thread: 13.1 ms with such a pass, 4.8 without any store).

    All arrays are 1-D contiguous float32 (``x`` and ``out`` may share memory; ``target``
    must not overlap ``x`` or ``following``). The sum: lane ``l`` adds the elements
    ``i % 16 == l`` of each block of :data:`SUM_BLOCK` elements (``i // SUM_BLOCK``) in
    order, in float32, and adds each block's sum in turn to a float64 sum of its own; the 16
    lanes' float64 sums are then added pairwise. A fixed order, the same for every alignment
    of ``target`` (``over_vectors`` keeps each lane's elements, and the blocks are the
    elements'). Blocks, because one float32 sum a lane drifts on long rows of like values
    (a row of 4M elements, all but one ``exp(-0.35)``: 1.7e-3 off, 8.7 times the reference
    tolerance); widening every vector to float64 instead cost ~2 % on memory-bound rows.
    Which zero ``largest`` is for a zero maximum is not defined. Where the
    vectors are not :func:`available`, the call compiles as ``fallback(x[:count], m,
    out[:count])`` with scalar loops for the rest (the same results, to the tolerance).
    """
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    def scalar(x, m, out, count, following, done, factor, target, previous, stream):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        largest = np.float32(-np.inf)
        for i in range(count):
            if following[i] > largest:
                largest = following[i]
        if previous:
            for i in range(count):
                target[i] = done[i] * factor
        return np.float64(fallback(x[:count], m, out[:count])), largest

    @intrinsic
    def vpass(typingctx, x, m, out, count, following, done, factor, target, previous, stream):  # type: ignore[no-untyped-def]
        if not _float32_arrays(x, out, following, done, target) or not isinstance(stream, types.BooleanLiteral):
            return None
        streams = stream.literal_value
        sig = types.Tuple((types.float64, types.float32))(
            x, types.float32, out, types.intp, following, done, types.float32, target, types.boolean, stream
        )

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            if not available():
                return context.compile_internal(builder, scalar, signature, args)
            v = Vectors(builder)
            source, exps, ahead, finished, result = (
                float_data(context, builder, signature.args[k], args[k]) for k in (0, 2, 4, 5, 7)
            )
            shift, factor, previous = splat_int(builder, args[1]), splat_int(builder, args[6]), args[8]
            low, high = (cgutils.alloca_once_value(builder, w) for w in v.widened(v.splat(0.0)))
            block = cgutils.alloca_once_value(builder, v.splat(0.0))  # this block's float32 sums
            i64 = ir.IntType(64)
            within = ir.Constant(i64, SUM_BLOCK - 1)

            def to_float64(lanes: Any) -> None:
                for total, part in zip((low, high), v.widened(lanes)):
                    builder.store(builder.fadd(builder.load(total), part), total)

            lowest = v.splat(float("-inf"))
            best = cgutils.alloca_once_value(builder, lowest)

            def wins(a: Any, b: Any) -> Any:  # a > b ? a : b: a NaN a never wins
                return builder.select(builder.fcmp_ordered(">", a, b), a, b)

            def body(start: Any, mask: Any) -> None:
                if mask is None:
                    v.prefetch(ahead, start)
                e = _exp_of_nonpositive(v, builder.fsub(v.load(source, start, mask), shift))
                v.store(e, exps, start, mask)
                if mask is not None:
                    e = builder.select(mask, e, v.splat(0.0))
                # the two vectors holding a block's first 16 elements (each lane's first element
                # of the block): those lanes move their float32 sums to the float64 ones first
                shifted = builder.and_(builder.add(start, ir.Constant(i64, LANES - 1)), within)
                crosses = builder.icmp_unsigned("<", shifted, ir.Constant(i64, 2 * LANES - 1))
                with builder.if_then(crosses, likely=False):
                    lanes_at = builder.add(splat_int(builder, start), _lane_numbers())
                    positions = builder.and_(lanes_at, splat_int(builder, within))  # within their blocks
                    fresh = builder.icmp_unsigned("<", positions, splat_int(builder, ir.Constant(i64, LANES)))
                    sums = builder.load(block)
                    to_float64(builder.select(fresh, sums, v.splat(0.0)))
                    builder.store(builder.select(fresh, v.splat(0.0), sums), block)
                builder.store(builder.fadd(builder.load(block), e), block)
                following = v.load(ahead, start, mask, lowest)
                builder.store(wins(following, builder.load(best)), best)
                with builder.if_then(previous):
                    v.store(builder.fmul(v.load(finished, start, mask), factor), result, start, mask, streams)

            over_vectors(builder, args[3], body, result if streams else None)
            if streams:
                v.fence()
            lanes = builder.load(best)
            width = LANES
            while width > 1:  # the lanes' largest, pairwise
                width //= 2
                lanes = wins(v.shuffled(lanes, [width + i if i < width else i for i in range(LANES)]), lanes)
            largest = builder.extract_element(lanes, _index(0))
            to_float64(builder.load(block))
            total = v.pairwise_sum(builder.fadd(builder.load(low), builder.load(high)))  # lane l + lane l + 8 first
            return context.make_tuple(builder, signature.return_type, [total, largest])

        return sig, codegen

    return vpass


def _index(i: int) -> Any:
    from llvmlite import ir

    return ir.Constant(ir.IntType(32), i)


def _scalar_scaled(x, factor, out, count, stream):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    for i in range(count):
        out[i] = x[i] * factor


@cache
def scaled() -> Any:
    """The numba intrinsic ``scaled(x, factor, out, count, stream)``: ``out[i] = x[i] * factor`` for ``i < count``.

    Float32 products (one rounding each); ``x`` and ``out`` 1-D contiguous float32 arrays;
    ``stream`` (a constant) as :func:`vector_map`'s. Where the vectors are not
    :func:`available`, the call compiles as the scalar loop.
    """
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def vscaled(typingctx, x, factor, out, count, stream):  # type: ignore[no-untyped-def]
        if not _float32_arrays(x, out) or not isinstance(stream, types.BooleanLiteral):
            return None
        streams = stream.literal_value
        sig = types.void(x, types.float32, out, types.intp, stream)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            if not available():
                return context.compile_internal(builder, _scalar_scaled, signature, args)
            v = Vectors(builder)
            source = float_data(context, builder, signature.args[0], args[0])
            target = float_data(context, builder, signature.args[2], args[2])
            factor = splat_int(builder, args[1])

            _map(v, source, target, args[3], lambda value: builder.fmul(value, factor), streams, prefetch=False)
            return context.get_dummy_value()

        return sig, codegen

    return vscaled


def splat_int(builder: Any, value: Any) -> Any:
    """A scalar IR value in every lane (any element type)."""
    from llvmlite import ir

    vector = ir.VectorType(value.type, LANES)
    undefined = ir.Constant(vector, ir.Undefined)
    first = builder.insert_element(undefined, value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(first, undefined, ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES))


def _mangled(vector: Any) -> str:
    return f"v{vector.count}f32"


def masked_load(builder: Any, pointer: Any, mask: Any, passthru: Any) -> Any:
    """``llvm.masked.load`` of a float vector: the ``mask``'s lanes read, the others ``passthru``'s."""
    from llvmlite import ir
    from numba.core import cgutils

    i32 = ir.IntType(32)
    fn = cgutils.get_or_insert_function(
        builder.module,
        ir.FunctionType(passthru.type, [pointer.type, i32, mask.type, passthru.type]),
        f"llvm.masked.load.{_mangled(passthru.type)}.p0",
    )
    return builder.call(fn, [pointer, ir.Constant(i32, 4), mask, passthru])


def masked_store(builder: Any, value: Any, pointer: Any, mask: Any) -> None:
    """``llvm.masked.store`` of a float vector: only the ``mask``'s lanes written."""
    from llvmlite import ir
    from numba.core import cgutils

    i32 = ir.IntType(32)
    fn = cgutils.get_or_insert_function(
        builder.module,
        ir.FunctionType(ir.VoidType(), [value.type, pointer.type, i32, mask.type]),
        f"llvm.masked.store.{_mangled(value.type)}.p0",
    )
    builder.call(fn, [value, pointer, ir.Constant(i32, 4), mask])
