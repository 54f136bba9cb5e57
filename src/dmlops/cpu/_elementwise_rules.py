"""The element-wise family's formulas on the CPU, applied to one tile of the tensors at a time.

Each row of ``RULES`` is ``f(desc, xs, data_type) -> result``: ``xs`` are the tile's
logical inputs (ScaleBias already applied), ``data_type`` the first input's DML type.
They compute what the NumPy reference computes (float formulas in float64, rounded
once when stored; DirectML's float32 steps where they are observable; integer rules
in DirectML's 32-bit registers, listed in :mod:`dmlops.descs.elementwise`), and
:mod:`.elementwise` stores the result into the output tile. They serve every operator
and type the fast paths of :mod:`.elementwise` do not cover; because a tile holds at
most a few ten thousand elements, their float64 temporaries stay small.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs import elementwise as rules
from ..enums import TensorDataType
from ..errors import UnsupportedError

F32 = np.float32
Array = NDArray[Any]
Rule = Callable[[Any, list[Array], TensorDataType], Array]

_erf_object = np.frompyfunc(math.erf, 1, 1)


def erf64(x: Array) -> Array:
    """Erf in float64 (``math.erf`` per element)."""
    return np.asarray(_erf_object(x), dtype=np.float64)


def unsupported(desc: Any, data_type: TensorDataType, what: str = "") -> UnsupportedError:
    """The error for a type or fused activation this family does not run (DirectML does)."""
    return UnsupportedError(
        f"{desc.dml_name}: the cpu backend does not implement {desc.operator_type.name} for "
        f"{data_type.name}{what}; the directml backend runs it"
    )


def _f64(x: Array) -> Array:
    return np.asarray(x, dtype=np.float64)


def _is_float(x: Array) -> bool:
    return bool(x.dtype.kind == "f")


def _floats(desc: Any, xs: list[Array], data_type: TensorDataType) -> list[Array]:
    # an integer tensor made float by ScaleBias is not the float formula either (DirectML
    # converts the scaled value back to the integer type)
    if not data_type.name.startswith("FLOAT") or not all(_is_float(x) for x in xs):
        raise unsupported(desc, data_type)
    return [_f64(x) for x in xs]


def _wide(x: Array) -> Array:
    return x.astype(np.uint64 if x.dtype == np.uint64 else np.int64)


def _u32(x: Array) -> Array:
    """The 32-bit register pattern of an integer, as int64 in [0, 2^32)."""
    return np.asarray(x, dtype=np.int64) & 0xFFFFFFFF


def _i32(x: Array) -> Array:
    """The signed 32-bit register value of an int64 result (wrap-around)."""
    return (x + 0x80000000) % 0x100000000 - 0x80000000


def _no64(desc: Any, xs: list[Array], data_type: TensorDataType) -> None:
    if any(x.dtype.itemsize == 8 and x.dtype.kind in "iu" for x in xs):
        raise unsupported(desc, data_type)


def _signed_quotient(a: Array, b: Array) -> Array:
    """Unsigned quotient of the magnitudes, negated when the signs differ; ``/ 0`` is all ones."""
    ua, ub = _u32(np.abs(a)), _u32(np.abs(b))
    q = np.where(ub == 0, 0xFFFFFFFF, ua // np.where(ub == 0, 1, ub))
    return np.where((a < 0) != (b < 0), -q, q)


def _unsigned_divmod(a: Array, b: Array) -> tuple[Array, Array]:
    ua, ub = _u32(a), _u32(b)
    safe = np.where(ub == 0, 1, ub)
    return np.where(ub == 0, 0xFFFFFFFF, ua // safe), np.where(ub == 0, 0xFFFFFFFF, ua % safe)


def _unary(fn: Callable[[Array], Array]) -> Rule:
    return lambda desc, xs, dt: fn(*_floats(desc, xs, dt))


def _arith(fn: Callable[[Array, Array], Array]) -> Rule:
    """IEEE on floats (float64, rounded once), wrap-around on integers."""

    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = xs
        if _is_float(a):
            return fn(_f64(a), _f64(b))
        return fn(_wide(a), _wide(b))

    return rule


def _difference_square(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    a, b = xs
    if _is_float(a):
        d = (_f64(a) - _f64(b)).astype(F32).astype(np.float64)  # DirectML rounds the difference to float32
        return d * d
    d = _wide(a) - _wide(b)
    return d * d


def _divide(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    a, b = xs
    if _is_float(a):
        return _f64(a) / _f64(b)
    _no64(desc, xs, data_type)
    if data_type.is_signed_integer:
        return _signed_quotient(_wide(a), _wide(b))
    return _unsigned_divmod(a, b)[0]


def _modulus(floor: bool) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = xs
        if _is_float(a):  # refused by the reference too (DirectML's float modulus is not matched yet)
            raise unsupported(desc, data_type)
        _no64(desc, xs, data_type)
        if not data_type.is_signed_integer:
            return _unsigned_divmod(a, b)[1]
        a, b = _wide(a), _wide(b)
        if not floor:
            return a - _signed_quotient(a, b) * b
        r = _unsigned_divmod(np.abs(a), np.abs(b))[1]
        r = _i32(np.where(a < 0, -r, r))
        return np.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)

    return rule


def _shift(left: bool) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = xs
        _no64(desc, xs, data_type)
        count, value = _u32(b) & 31, _u32(a)  # counts modulo 32, the shifted value truncated to 32 bits
        return ((value << count) & 0xFFFFFFFF) if left else (value >> count)

    return rule


def fmin_nan(x: Array, bound: Any) -> Array:
    """``min(x, bound)`` with NaN losing to the bound, a tie giving ``x``."""
    return np.where(np.isnan(x) | (x > bound), bound, x)


def fmax_nan(x: Array, bound: Any) -> Array:
    """``max(x, bound)`` with NaN losing to the bound, a tie giving ``x``."""
    return np.where(np.isnan(x) | (x < bound), bound, x)


def _max_min(is_max: bool) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = xs
        if not _is_float(a):
            return np.maximum(a, b) if is_max else np.minimum(a, b)
        return fmax_nan(_f64(a), _f64(b)) if is_max else fmin_nan(_f64(a), _f64(b))

    return rule


def _integer_bound(value: float | int, data_type: TensorDataType) -> Any:
    """A bound for an integer tensor as DirectML converts it: truncated toward zero and saturated.

    A NaN bound becomes 0 (INT32_MIN for INT32).
    """
    if not isinstance(value, float):
        return value
    info = np.iinfo(data_type.numpy_dtype)
    if math.isnan(value):
        return int(info.min) if data_type.name == "INT32" else 0
    if not math.isfinite(value):
        return int(info.min) if value < 0 else int(info.max)
    return min(max(int(value), int(info.min)), int(info.max))


def _clip(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    (x,) = xs
    if _is_float(x):  # max(min(x, Max), Min), selects keeping x only strictly inside: NaN -> Max, Min > Max -> Min
        below = np.where(_f64(x) < float(desc.max), _f64(x), float(desc.max))
        return np.where(below > float(desc.min), below, float(desc.min))
    _no64(desc, xs, data_type)
    hi = _integer_bound(desc.max, data_type)
    lo = _integer_bound(desc.min, data_type)
    return np.maximum(np.minimum(_wide(x), hi), lo)


def _clip_grad(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    """The gradient where ``Min < x < Max`` strictly, else +0 (a select)."""
    x, dy = xs
    _no64(desc, xs, data_type)
    if _is_float(x):
        xf = x.astype(np.float64)
        inside = (xf > float(desc.min)) & (xf < float(desc.max))
    else:  # the bounds converted to the integer type first
        xi = _wide(x)
        inside = (xi > _integer_bound(desc.min, data_type)) & (xi < _integer_bound(desc.max, data_type))
    if dy.dtype.kind == "f":
        return np.where(inside, _f64(dy), 0.0)
    return np.where(inside, dy, np.zeros((), dy.dtype))


def _threshold(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    """``x > Min ? x : Min``: NaN and a tie of zeros give Min."""
    (x,) = _floats(desc, xs, data_type)
    bound = float(desc.min)
    return np.where(x > bound, x, bound)


def _abs_negate(negate: bool) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        (x,) = xs
        if _is_float(x):
            return -_f64(x) if negate else np.abs(_f64(x))
        w = _wide(x)
        r = -w if negate else np.abs(w)
        if x.dtype.itemsize < 4:  # 8- and 16-bit types saturate, 32-bit wrap
            info = np.iinfo(x.dtype)
            r = np.clip(r, info.min, info.max)
        return r

    return rule


def _sign(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    (x,) = xs
    if _is_float(x):  # SIGN(NaN) = 0, SIGN(-0) = +0
        return (x > 0).astype(np.float64) - (x < 0).astype(np.float64)
    return np.sign(_wide(x))


def round_toward_infinity(x32: Array) -> Array:
    """Halves away from zero as DirectML computes it, in float32: ``x >= 0 ? floor(x + .5) : ceil(x - .5)``."""
    return np.where(x32 >= 0, np.floor(x32 + F32(0.5)), np.ceil(x32 - F32(0.5)))


def _round(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    (x,) = _floats(desc, xs, data_type)
    mode = desc.rounding_mode.name
    if mode == "HALVES_TO_NEAREST_EVEN":
        return np.rint(x)
    if mode == "TOWARD_ZERO":
        return np.trunc(x)
    return round_toward_infinity(x.astype(F32)).astype(np.float64)


def _is_infinity(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    (x,) = _floats(desc, xs, data_type)
    mode = desc.infinity_mode.name
    return (x == np.inf) if mode == "POSITIVE" else (x == -np.inf) if mode == "NEGATIVE" else np.isinf(x)


def _compare(fn: Callable[[Array, Array], Array]) -> Rule:
    return lambda desc, xs, dt: fn(xs[0], xs[1])  # same-type operands: compared exactly in their own type


def _logical(fn: Callable[[Array, Array], Array]) -> Rule:
    return lambda desc, xs, dt: fn(xs[0] != 0, xs[1] != 0)


def _bits_of(x: Array) -> Array:
    return np.ascontiguousarray(x).view(np.dtype(f"u{x.dtype.itemsize}"))


def _bitwise(fn: Callable[..., Array]) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        r = fn(*(_bits_of(x) for x in xs))
        return r.view(xs[0].dtype)

    return rule


def _bit_count(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    return np.bitwise_count(_bits_of(xs[0]))


def _mean(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    a, b = xs
    if _is_float(a):  # (a + b) * 0.5 in float32 steps: a + b may overflow
        return (a.astype(F32) + b.astype(F32)) * F32(0.5)
    _no64(desc, xs, data_type)
    total = _wide(a) + _wide(b)
    if data_type.is_signed_integer:
        return np.trunc(_i32(total) / 2).astype(np.int64)
    return (total & 0xFFFFFFFF) // 2


def _if(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    condition, a, b = xs
    return np.where(condition != 0, a, b)


def dml_pow(x: Array, y: Array | float) -> Array:
    """DirectML's pow: ``exp2(y * log2(|x|))``, signed for a negative x and an integer y.

    x > 0: the exp2/log2 form (pow(1, NaN), pow(inf, 0) are NaN); x < 0: NaN unless y is a
    finite integer, negated for an odd one; x = +-0 or NaN: 0.
    """
    y = np.asarray(y, dtype=np.float64)
    r = np.exp2(y * np.log2(np.abs(x)))
    integer = (y - np.floor(y)) == 0
    odd = integer & ((y / 2 - np.floor(y / 2)) != 0)
    return np.where(x > 0, r, np.where(x < 0, np.where(integer, np.where(odd, -r, r), np.nan), 0.0))


def _pow(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    x, y = _floats(desc, xs, data_type)
    return dml_pow(x, y)


def _constant_pow(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    (x,) = _floats(desc, xs, data_type)
    return dml_pow(x, float(desc.exponent))


def exp32(x: Array) -> Array:
    """Exp rounded to float32: DirectML's SINH, COSH and CELU overflow where it does (x > 88.72)."""
    return np.exp(x).astype(F32).astype(np.float64)


def _log_of_f32(x: Array) -> Array:
    return np.log(x.astype(F32).astype(np.float64))


def _asinh(x: Array) -> Array:
    """DirectML's ``log(x + sqrt(x * x + 1))``, each step rounded to float32."""
    x32 = x.astype(F32)
    return _log_of_f32(x32 + np.sqrt(x32 * x32 + F32(1)))


def _acosh(x: Array) -> Array:
    """DirectML's ``log(x + sqrt(x * x - 1))`` in float32 steps."""
    x32 = x.astype(F32)
    return _log_of_f32(x32 + np.sqrt(x32 * x32 - F32(1)))


def _atanh(x: Array) -> Array:
    """DirectML's ``0.5 * log((1 + x) / (1 - x))``, the quotient in float32."""
    x32 = x.astype(F32)
    return 0.5 * _log_of_f32((F32(1) + x32) / (F32(1) - x32))


def _atan_yx(y: Array, x: Array) -> Array:
    """atan2 with DirectML's values for one NaN operand beside a finite one: pi/4, minus pi when x < 0."""
    nan_y = np.isnan(y) & np.isfinite(x)
    nan_x = np.isnan(x) & np.isfinite(y)
    quarter = np.where(nan_y & (x < 0), np.pi / 4 - np.pi, np.pi / 4)
    return np.where(nan_y | nan_x, quarter, np.arctan2(y, x))


def _atan(x: Array) -> Array:
    """atan, NaN giving pi/4 (DirectML reduces x through min/max(|x|, 1), which drop a NaN)."""
    return np.where(np.isnan(x), np.pi / 4, np.arctan(x))


# -- quantization: float32 steps, D3D's float-to-integer conversion ---------------------------


def _to_integer(v: Array, data_type: TensorDataType) -> Array:
    """``ftoi`` / ``ftou`` of a float32 value (NaN -> 0, saturating), clamped to ``data_type``."""
    info = np.iinfo(data_type.numpy_dtype)
    return np.clip(np.where(np.isnan(v), 0.0, v), info.min, info.max).astype(np.int64)


def _clamp_float(v: Array, data_type: TensorDataType) -> Array:
    """``min(max(v, Min), Max)`` as floats, NaN losing to Min, then converted."""
    info = np.iinfo(data_type.numpy_dtype)
    low = np.where(np.isnan(v) | (v < info.min), float(info.min), v)
    return np.minimum(low, float(info.max)).astype(np.int64)


def _requantize(value: Array, scale: Array, zero_point: Array | None) -> Array:
    """``round(value / scale) + zero_point`` in float32: a division, halves to even, the zero point as a float."""
    q = np.rint(value.astype(F32) / scale.astype(F32))
    return q + (F32(0) if zero_point is None else zero_point.astype(F32))


def _dequantize(q: Array, scale: Array, zero_point: Array | None) -> Array:
    """``(float32(q) - float32(zero_point)) * scale`` in float32 (no integer subtraction)."""
    return (q.astype(F32) - (F32(0) if zero_point is None else zero_point.astype(F32))) * scale.astype(F32)


def _quantize_linear(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    x, scale, zero_point = xs
    return _to_integer(_requantize(x, scale, zero_point), desc.output_tensor.data_type)


def _dequantize_linear(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    q, scale, zero_point = xs
    return _dequantize(q, scale, zero_point)


def _quantized_linear_add(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    """Both operands dequantized, added and requantized in float32; a float clamp only with an output zero point."""
    a, a_scale, a_zero, b, b_scale, b_zero, out_scale, out_zero = xs
    v = _requantize(_dequantize(a, a_scale, a_zero) + _dequantize(b, b_scale, b_zero), out_scale, out_zero)
    out_type = desc.output_tensor.data_type
    return _to_integer(v, out_type) if out_zero is None else _clamp_float(v, out_type)


def _sigmoid(x: Array) -> Array:
    return 1 / (1 + np.exp(-x))


ACTIVATIONS: dict[str, Callable[[Any, Array], Array]] = {
    "ACTIVATION_IDENTITY": lambda d, x: x,
    "ACTIVATION_RELU": lambda d, x: np.where(x > 0, x, 0.0),
    "ACTIVATION_LEAKY_RELU": lambda d, x: np.where(x >= 0, x, d.alpha * x),  # zeros pass with their sign
    "ACTIVATION_ELU": lambda d, x: np.where(x > 0, x, d.alpha * np.expm1(x)),
    "ACTIVATION_CELU": lambda d, x: np.fmax(0, x) + np.fmin(0, d.alpha * (exp32(x / d.alpha) - 1)),
    "ACTIVATION_SCALED_ELU": lambda d, x: d.gamma * np.where(x > 0, x, d.alpha * np.expm1(x)),
    "ACTIVATION_SIGMOID": lambda d, x: _sigmoid(x),
    "ACTIVATION_HARD_SIGMOID": lambda d, x: np.fmin(np.fmax(d.alpha * x + d.beta, 0), 1),  # NaN -> 0
    "ACTIVATION_HARD_SWISH": lambda d, x: x * np.clip(d.alpha * x + d.beta, 0, 1),
    "ACTIVATION_SWISH": lambda d, x: x * _sigmoid(d.sigmoid_input_scale * x),
    "ACTIVATION_TANH": lambda d, x: np.tanh(x),
    "ACTIVATION_SCALED_TANH": lambda d, x: d.alpha * np.tanh(d.beta * x),
    "ACTIVATION_SOFTPLUS": lambda d, x: np.log1p(np.exp(d.steepness * x)) / d.steepness,
    "ACTIVATION_PARAMETRIC_SOFTPLUS": lambda d, x: d.alpha * np.log1p(np.exp(d.beta * x)),
    "ACTIVATION_SOFTSIGN": lambda d, x: x / (1 + np.abs(x)),
    "ACTIVATION_LINEAR": lambda d, x: d.alpha * x + d.beta,
    "ACTIVATION_THRESHOLDED_RELU": lambda d, x: np.where(x <= d.alpha, 0.0, x),  # NaN passes
    # x > Threshold first: with a negative Threshold every x above it gives x - Bias
    "ACTIVATION_SHRINK": lambda d, x: np.where(
        x > d.threshold, x - d.bias, np.where(x < -d.threshold, x + d.bias, 0.0)
    ),
    "ACTIVATION_GELU": lambda d, x: 0.5 * x * (1 + erf64(x / math.sqrt(2))),
}
"""The activations as float64 formulas of one input (standalone, and fused into ADD1)."""

FUSED: dict[str, Callable[[Any, Array], Array]] = {
    **ACTIVATIONS,
    "ACTIVATION_RELU": lambda d, x: x * (x > 0),  # fused: -0 for negative sums, NaN stays NaN
}
"""The activations as DirectML applies them fused into another operator."""


def _activation(fn: Callable[[Any, Array], Array]) -> Rule:
    return lambda desc, xs, dt: fn(desc, _floats(desc, xs[:1], dt)[0])


def _parameterized_relu(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    x, slope = _floats(desc, xs, data_type)
    return np.where(x >= 0, x, slope * x)  # -0 stays -0


def _relu_grad(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    x, dy = xs
    if _is_float(x):
        return np.where(x > 0, _f64(dy), 0.0)
    return np.where(x > 0, _wide(dy), 0)


RULES: dict[str, Rule] = {
    "ELEMENT_WISE_IDENTITY": lambda desc, xs, dt: xs[0],
    "ELEMENT_WISE_ABS": _abs_negate(negate=False),
    "ELEMENT_WISE_NEGATE": _abs_negate(negate=True),
    "ELEMENT_WISE_ACOS": _unary(np.arccos),
    "ELEMENT_WISE_ACOSH": _unary(_acosh),
    "ELEMENT_WISE_ASIN": _unary(np.arcsin),
    "ELEMENT_WISE_ASINH": _unary(_asinh),
    "ELEMENT_WISE_ATAN": _unary(_atan),
    "ELEMENT_WISE_ATANH": _unary(_atanh),
    "ELEMENT_WISE_COS": _unary(np.cos),
    "ELEMENT_WISE_COSH": _unary(lambda x: (exp32(x) + exp32(-x)) / 2),
    "ELEMENT_WISE_SIN": _unary(np.sin),
    "ELEMENT_WISE_SINH": _unary(lambda x: (exp32(x) - exp32(-x)) / 2),
    "ELEMENT_WISE_TAN": _unary(np.tan),
    "ELEMENT_WISE_TANH": _unary(np.tanh),
    "ELEMENT_WISE_EXP": _unary(np.exp),
    "ELEMENT_WISE_LOG": _unary(np.log),
    "ELEMENT_WISE_SQRT": _unary(np.sqrt),
    "ELEMENT_WISE_RECIP": _unary(lambda x: 1 / x),
    "ELEMENT_WISE_ERF": _unary(erf64),
    "ELEMENT_WISE_FLOOR": _unary(np.floor),
    "ELEMENT_WISE_CEIL": _unary(np.ceil),
    "ELEMENT_WISE_ROUND": _round,
    "ELEMENT_WISE_SIGN": _sign,
    "ELEMENT_WISE_IS_NAN": lambda desc, xs, dt: np.isnan(_floats(desc, xs, dt)[0]),
    "ELEMENT_WISE_IS_INFINITY": _is_infinity,
    "ELEMENT_WISE_CLIP": _clip,
    "ELEMENT_WISE_CLIP1": _clip,
    "ELEMENT_WISE_CLIP_GRAD": _clip_grad,
    "ELEMENT_WISE_CLIP_GRAD1": _clip_grad,
    "ELEMENT_WISE_THRESHOLD": _threshold,
    "ELEMENT_WISE_CONSTANT_POW": _constant_pow,
    "ELEMENT_WISE_POW": _pow,
    "ELEMENT_WISE_ADD": _arith(np.add),
    "ELEMENT_WISE_ADD1": _arith(np.add),
    "ELEMENT_WISE_SUBTRACT": _arith(np.subtract),
    "ELEMENT_WISE_MULTIPLY": _arith(np.multiply),
    "ELEMENT_WISE_DIFFERENCE_SQUARE": _difference_square,
    "ELEMENT_WISE_DIVIDE": _divide,
    "ELEMENT_WISE_MODULUS_TRUNCATE": _modulus(floor=False),
    "ELEMENT_WISE_MODULUS_FLOOR": _modulus(floor=True),
    "ELEMENT_WISE_MAX": _max_min(is_max=True),
    "ELEMENT_WISE_MIN": _max_min(is_max=False),
    "ELEMENT_WISE_MEAN": _mean,
    "ELEMENT_WISE_ATAN_YX": lambda desc, xs, dt: _atan_yx(*_floats(desc, xs, dt)),
    "ELEMENT_WISE_LOGICAL_EQUALS": _compare(np.equal),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": _compare(np.greater),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": _compare(np.greater_equal),
    "ELEMENT_WISE_LOGICAL_LESS_THAN": _compare(np.less),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": _compare(np.less_equal),
    "ELEMENT_WISE_LOGICAL_AND": _logical(np.logical_and),
    "ELEMENT_WISE_LOGICAL_OR": _logical(np.logical_or),
    "ELEMENT_WISE_LOGICAL_XOR": _logical(np.logical_xor),
    "ELEMENT_WISE_LOGICAL_NOT": lambda desc, xs, dt: xs[0] == 0,
    "ELEMENT_WISE_BIT_AND": _bitwise(np.bitwise_and),
    "ELEMENT_WISE_BIT_OR": _bitwise(np.bitwise_or),
    "ELEMENT_WISE_BIT_XOR": _bitwise(np.bitwise_xor),
    "ELEMENT_WISE_BIT_NOT": _bitwise(np.invert),
    "ELEMENT_WISE_BIT_COUNT": _bit_count,
    "ELEMENT_WISE_BIT_SHIFT_LEFT": _shift(left=True),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": _shift(left=False),
    "ELEMENT_WISE_IF": _if,
    "ELEMENT_WISE_QUANTIZE_LINEAR": _quantize_linear,
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": _dequantize_linear,
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": _quantized_linear_add,
    "ACTIVATION_PARAMETERIZED_RELU": _parameterized_relu,
    "ACTIVATION_RELU_GRAD": _relu_grad,
    **{name: _activation(fn) for name, fn in ACTIVATIONS.items()},
}
"""Operator -> its formula on one tile (the row-wise SOFTMAX family is in :mod:`.elementwise`)."""


def scale_bias(sb: Any, x: Array) -> Array:
    """DML_SCALE_BIAS: ``x * Scale + Bias`` in two float32 roundings (integers converted to float32 first)."""
    y = (x.astype(F32) * F32(sb.scale)) + F32(sb.bias)
    return y if x.dtype.kind != "f" or x.dtype == np.float32 else y.astype(x.dtype)


LOG_SOFTMAX_MIN_SUM = rules.LOG_SOFTMAX_MIN_SUM
