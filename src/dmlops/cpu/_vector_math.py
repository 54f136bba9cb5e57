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

from ._llvm import host_has

LANES = 16
"""float32 elements in one 64-byte vector."""

EXP, SIGMOID, GELU = range(3)
"""The functions of :func:`vector_map`, by code."""

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


class _Vectors:
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


def _exp(v: _Vectors, y: Any) -> Any:
    """exp(y), every float32 ``y`` (see the module's docstring)."""
    return _exp_of_clamped(v, v.at_most(v.at_least(y, -104.0), 89.0))  # beyond: 0 and inf anyway


def _exp_of_negative(v: _Vectors, y: Any) -> Any:
    """exp(y) for ``y <= 0`` or NaN (one clamp fewer)."""
    return _exp_of_clamped(v, v.at_least(y, -104.0))


def _exp_of_clamped(v: _Vectors, y: Any) -> Any:
    """exp(y) for ``y`` in [-104, 89] or NaN.

    ``vscalefps`` rounds the results below 2^-149 to 0 and those above FLT_MAX to inf.
    """
    n = v.rint(v.b.fmul(y, v.splat(1.4426950408889634)))
    r = v.fma(n, v.splat(-LN2_HIGH), y)
    r = v.fma(n, v.splat(-LN2_LOW), r)
    return v.scale(v.polynomial(r, EXP_POLYNOMIAL), n)


def _sigmoid(v: _Vectors, x: Any) -> Any:
    """1 / (1 + exp(-x)): 0 for x below -88.7 (exp overflows to inf), 1 above 17.4."""
    return v.b.fdiv(v.splat(1.0), v.b.fadd(v.splat(1.0), _exp(v, v.b.fneg(x))))


def _gelu(v: _Vectors, x: Any) -> Any:
    """GELU, ``x Phi(x)``: elementwise's ``gelu32`` on vectors (its comment gives the error analysis)."""
    b = v.b
    t = b.fmul(v.fabs(x), v.splat(0.7071067811865476))
    s = b.fdiv(v.splat(1.0), v.fma(v.splat(0.3275911), t, v.splat(1.0)))  # t = inf: s = 0
    p = v.polynomial(s, (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
    c = b.fmul(b.fmul(b.fmul(v.splat(0.5), s), p), _exp_of_negative(v, b.fneg(b.fmul(t, t))))
    negative = b.fcmp_ordered("<", x, v.splat(0.0))
    return b.select(negative, b.fmul(x, c), b.fmul(x, b.fsub(v.splat(1.0), c)))  # NaN: x * NaN


_FUNCTIONS = {EXP: _exp, SIGMOID: _sigmoid, GELU: _gelu}


def _over_vectors(builder: Any, total: Any, body: Any) -> None:
    """``body(start, mask)`` for each vector of ``total`` elements.

    Whole vectors first (``mask`` None), then the last partial one (``mask``: its lanes).
    """
    from llvmlite import ir
    from numba.core import cgutils

    i64 = ir.IntType(64)
    whole = builder.udiv(total, ir.Constant(i64, LANES))
    with cgutils.for_range(builder, whole) as loop:
        body(builder.mul(loop.index, ir.Constant(i64, LANES)), None)
    start = builder.mul(whole, ir.Constant(i64, LANES))
    left = builder.sub(total, start)
    with builder.if_then(builder.icmp_unsigned("!=", left, ir.Constant(i64, 0))):
        lanes = ir.Constant(ir.VectorType(i64, LANES), list(range(LANES)))
        body(start, builder.icmp_unsigned("<", lanes, _splat_int(builder, left)))


def _float_data(context: Any, builder: Any, array_type: Any, value: Any) -> Any:
    from llvmlite import ir

    data = context.make_array(array_type)(context, builder, value).data
    return builder.bitcast(data, ir.FloatType().as_pointer())


def _load(v: _Vectors, base: Any, start: Any, mask: Any) -> Any:
    """The vector at ``base[start]``; with a ``mask``, its lanes outside it are 0 and not read."""
    address = v.b.bitcast(v.b.gep(base, [start]), v.type.as_pointer())
    if mask is None:
        return v.b.load(address, align=4)
    return _masked_load(v.b, address, mask, v.splat(0.0))


def _store(v: _Vectors, value: Any, base: Any, start: Any, mask: Any) -> None:
    address = v.b.bitcast(v.b.gep(base, [start]), v.type.as_pointer())
    if mask is None:
        v.b.store(value, address, align=4)
    else:
        _masked_store(v.b, value, address, mask)


@cache
def vector_map() -> Any:
    """The numba intrinsic ``vector_map(code, x, out, count)``: ``out[i] = f(x[i])`` for ``i < count``.

    ``f`` is the function numbered ``code`` (a compile-time constant: :data:`EXP`,
    :data:`SIGMOID`, :data:`GELU`); ``x`` and ``out`` are 1-D contiguous float32 arrays of at
    least ``count`` elements (they may be the same memory: each vector is loaded before it
    is stored). Only where :func:`available`.
    """
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def vmap(typingctx, code, x, out, count):  # type: ignore[no-untyped-def]
        if not isinstance(code, types.IntegerLiteral) or code.literal_value not in _FUNCTIONS:
            return None
        if not all(isinstance(a, types.Array) and a.dtype == types.float32 for a in (x, out)):
            return None
        function = _FUNCTIONS[code.literal_value]
        sig = types.void(code, x, out, count)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            v = _Vectors(builder)
            source = _float_data(context, builder, signature.args[1], args[1])
            target = _float_data(context, builder, signature.args[2], args[2])

            def body(start: Any, mask: Any) -> None:
                _store(v, function(v, _load(v, source, start, mask)), target, start, mask)

            _over_vectors(builder, args[3], body)
            return context.get_dummy_value()

        return sig, codegen

    return vmap


_VECTOR_MAP: Any = None


@cache
def mapper() -> Any:
    """``apply(code, x, out)``: ``out = f(x)`` (:func:`vector_map`'s ``f``) for 1-D contiguous float32 arrays."""
    global _VECTOR_MAP
    from numba import njit

    _VECTOR_MAP = vector_map()

    @njit(nogil=True, cache=True)
    def apply(code, x, out):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        if code == EXP:
            _VECTOR_MAP(EXP, x, out, x.size)
        elif code == SIGMOID:
            _VECTOR_MAP(SIGMOID, x, out, x.size)
        else:
            _VECTOR_MAP(GELU, x, out, x.size)

    return apply


@cache
def exp_sum(fallback: Any) -> Any:
    """The numba intrinsic ``exp_sum(x, m, out, count) -> float32``: ``out[i] = exp(x[i] - m)``, and their sum.

    For ``i < count`` (SOFTMAX's pass over a row: ``x - m <= 0`` or NaN); ``x`` and ``out``
    are 1-D contiguous float32 arrays (the same memory allowed). The sum is one float32
    vector of partial sums, added lane by lane at the end in a fixed order. Where the vectors
    are not :func:`available`, the call compiles as ``fallback(x[:count], m, out[:count])``
    (a jitted function with the same result, to the tolerance), so callers need no branch.
    """
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    def scalar(x, m, out, count):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        return fallback(x[:count], m, out[:count])

    @intrinsic
    def vexp_sum(typingctx, x, m, out, count):  # type: ignore[no-untyped-def]
        if not all(isinstance(a, types.Array) and a.dtype == types.float32 for a in (x, out)):
            return None
        sig = types.float32(x, types.float32, out, types.intp)

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            if not available():
                return context.compile_internal(builder, scalar, signature, args)
            v = _Vectors(builder)
            source = _float_data(context, builder, signature.args[0], args[0])
            target = _float_data(context, builder, signature.args[2], args[2])
            shift = _splat_float(builder, args[1])
            total = cgutils.alloca_once_value(builder, v.splat(0.0))

            def body(start: Any, mask: Any) -> None:
                e = _exp_of_negative(v, builder.fsub(_load(v, source, start, mask), shift))
                _store(v, e, target, start, mask)
                if mask is not None:
                    e = builder.select(mask, e, v.splat(0.0))
                builder.store(builder.fadd(builder.load(total), e), total)

            _over_vectors(builder, args[3], body)
            lanes, result = builder.load(total), ir.Constant(ir.FloatType(), 0.0)
            for i in range(LANES):  # lane 0 first, a fixed order
                result = builder.fadd(result, builder.extract_element(lanes, ir.Constant(ir.IntType(32), i)))
            return result

        return sig, codegen

    return vexp_sum


def _splat_float(builder: Any, value: Any) -> Any:
    return _splat_int(builder, value)


def _splat_int(builder: Any, value: Any) -> Any:
    """A scalar IR value in every lane (any element type)."""
    from llvmlite import ir

    vector = ir.VectorType(value.type, LANES)
    undefined = ir.Constant(vector, ir.Undefined)
    first = builder.insert_element(undefined, value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(first, undefined, ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES))


def _masked_load(builder: Any, pointer: Any, mask: Any, passthru: Any) -> Any:
    from llvmlite import ir
    from numba.core import cgutils

    i32 = ir.IntType(32)
    fn = cgutils.get_or_insert_function(
        builder.module,
        ir.FunctionType(passthru.type, [pointer.type, i32, mask.type, passthru.type]),
        "llvm.masked.load.v16f32.p0",
    )
    return builder.call(fn, [pointer, ir.Constant(i32, 4), mask, passthru])


def _masked_store(builder: Any, value: Any, pointer: Any, mask: Any) -> None:
    from llvmlite import ir
    from numba.core import cgutils

    i32 = ir.IntType(32)
    fn = cgutils.get_or_insert_function(
        builder.module,
        ir.FunctionType(ir.VoidType(), [value.type, pointer.type, i32, mask.type]),
        "llvm.masked.store.v16f32.p0",
    )
    builder.call(fn, [value, pointer, ir.Constant(i32, 4), mask])
