"""The element-wise and activation family's formulas in NumPy: one table, shared by backends.

Each row of ``RULES`` maps an operator to a function ``f(desc, xs, data_type)``: ``xs``
are the logical input arrays in member order (ScaleBias already applied where the
struct has one: :func:`scale_bias`), ``data_type`` the first input's DML data type.
Float formulas compute in float64 and the result is rounded once when stored, except
where DirectML's own float32 steps are observable (ScaleBias, MEAN, the moduli, ROUND's
halves away from zero, LOG_SOFTMAX's floor, the quantization operators), which are done
in float32 as DirectML does. Integer formulas follow DirectML's 32-bit register
arithmetic (:mod:`dmlops.descs.elementwise` lists the probed rules). ``FUSED`` holds the
activations as DirectML applies them fused into another operator (ADD1).

The NumPy reference (``reference/elementwise.py``) applies a row to whole tensors; the
cpu backend applies the same rows to tiles of the tensors for what its fast paths do not
cover, so the two cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..enums import TensorDataType
from ..errors import UnsupportedError
from ..tensor import packed_strides
from . import elementwise as rules

F32 = np.float32
Array = NDArray[Any]
Rule = Callable[[Any, list[Array], TensorDataType], Array]

_erf_object = np.frompyfunc(math.erf, 1, 1)


def _erf(x: Array) -> Array:
    """Erf in float64 (math.erf per element: NumPy has none)."""
    return np.asarray(_erf_object(x), dtype=np.float64)


def unsupported(desc: Any, data_type: TensorDataType, what: str = "") -> UnsupportedError:
    """The error for a data type (or fused activation) the formulas do not cover; directml runs it."""
    return UnsupportedError(
        f"{desc.dml_name}: the numpy and cpu backends do not implement {desc.operator_type.name} for "
        f"{data_type.name}{what}; the directml backend runs it"
    )


def _float(x: Array) -> Array:
    """float64 copy of a float input (exact)."""
    return np.asarray(x, dtype=np.float64)


def _is_float(x: Array) -> bool:
    return bool(x.dtype.kind == "f")


def _need_float(desc: Any, xs: list[Array], data_type: TensorDataType) -> list[Array]:
    # an integer tensor made float by ScaleBias is not the float formula either: DirectML
    # converts the scaled value back to the integer type (probed on THRESHOLD and POW)
    if not data_type.name.startswith("FLOAT") or not all(_is_float(x) for x in xs):
        raise unsupported(desc, data_type)
    return [_float(x) for x in xs]


# -- integer machinery: DirectML's 32-bit registers ---------------------------------------


def _bits(x: Array) -> int:
    return int(x.dtype.itemsize * 8)


def _wide(x: Array) -> Array:
    """Integer input as int64 (uint64 stays uint64)."""
    return x.astype(np.uint64 if x.dtype == np.uint64 else np.int64)


def _u32(x: Array) -> Array:
    """The 32-bit register pattern of an integer value, as int64 in [0, 2^32)."""
    return np.asarray(x, dtype=np.int64) & 0xFFFFFFFF


def _signed_divide(a: Array, b: Array) -> Array:
    """DirectML's signed quotient: unsigned quotient of the magnitudes, negated when the signs differ."""
    ua, ub = _u32(np.abs(a)), _u32(np.abs(b))
    q = np.where(ub == 0, 0xFFFFFFFF, ua // np.where(ub == 0, 1, ub))
    return np.where((a < 0) != (b < 0), -q, q)


def _unsigned_divmod(a: Array, b: Array) -> tuple[Array, Array]:
    """Unsigned quotient and remainder; a divisor of 0 gives all ones for both (32-bit)."""
    ua, ub = _u32(a), _u32(b)
    safe = np.where(ub == 0, 1, ub)
    return np.where(ub == 0, 0xFFFFFFFF, ua // safe), np.where(ub == 0, 0xFFFFFFFF, ua % safe)


def _saturate(x: Array, data_type: TensorDataType) -> Array:
    info = np.iinfo(data_type.numpy_dtype)
    return np.clip(x, info.min, info.max)


def _no64(desc: Any, xs: list[Array], data_type: TensorDataType) -> None:
    if any(x.dtype.itemsize == 8 and x.dtype.kind in "iu" for x in xs):
        raise unsupported(desc, data_type)


# -- formulas -----------------------------------------------------------------------------------


def _unary_float(fn: Callable[[Array], Array]) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        (x,) = _need_float(desc, xs, data_type)
        with np.errstate(all="ignore"):
            return np.asarray(fn(x), dtype=np.float64)

    return rule


def _binary_float(fn: Callable[[Array, Array], Array]) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = _need_float(desc, xs, data_type)
        with np.errstate(all="ignore"):
            return np.asarray(fn(a, b), dtype=np.float64)

    return rule


def _arith(fn: Callable[[Array, Array], Array]) -> Rule:
    """ADD, SUBTRACT, MULTIPLY, DIFFERENCE_SQUARE: IEEE on floats, wrap-around on integers."""

    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = xs
        with np.errstate(all="ignore"):
            if _is_float(a):
                return np.asarray(fn(_float(a), _float(b)))
            return np.asarray(fn(_wide(a), _wide(b)))  # stored with wrap-around (copyto, unsafe)

    return rule


def _f32(x: Array) -> Array:
    """Rounded to float32 (a step DirectML rounds), kept in float64."""
    return x.astype(F32).astype(np.float64)


def _sq(x: Array) -> Array:
    return x * x


def _divide(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    a, b = xs
    if _is_float(a):
        with np.errstate(all="ignore"):
            return _float(a) / _float(b)
    _no64(desc, xs, data_type)
    if data_type.is_signed_integer:
        return _signed_divide(_wide(a), _wide(b))
    return _unsigned_divmod(a, b)[0]


def _modulus(floor: bool) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = xs
        if _is_float(a):
            # DirectML's float modulus is not a - b * trunc(a / b) in float32 steps for large
            # quotients (probed, not yet matched): refused rather than guessed
            raise unsupported(desc, data_type)
        _no64(desc, xs, data_type)
        if not data_type.is_signed_integer:
            return _unsigned_divmod(a, b)[1]
        a, b = _wide(a), _wide(b)
        if not floor:
            return a - _signed_divide(a, b) * b
        r = _unsigned_divmod(np.abs(a), np.abs(b))[1]
        r = np.where(a < 0, -r, r)
        r = (r + 0x80000000) % 0x100000000 - 0x80000000  # the signed 32-bit register
        return np.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)

    return rule


def _shift(left: bool) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = xs
        _no64(desc, xs, data_type)
        count = _u32(b) & 31  # counts modulo 32, as the 32-bit shift instructions take them
        value = _u32(a)
        return ((value << count) & 0xFFFFFFFF) if left else (value >> count)

    return rule


def _max_min(is_max: bool) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = xs
        if not _is_float(a):
            return np.maximum(a, b) if is_max else np.minimum(a, b)
        a, b = _float(a), _float(b)
        # NaN loses to a number; ties (-0, +0) give A
        take_b = (b > a) if is_max else (b < a)
        take_b |= np.isnan(a) & ~np.isnan(b)
        return np.where(take_b, b, a)

    return rule


def _fmin(x: Array, bound: Array | float) -> Array:
    """Min with NaN losing to the bound."""
    return np.where(np.isnan(x) | (x > bound), bound, x)


def _fmax(x: Array, bound: Array | float) -> Array:
    return np.where(np.isnan(x) | (x < bound), bound, x)


def _clip(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    (x,) = xs
    lo, hi = desc.min, desc.max
    if _is_float(x):
        # DirectML: max(min(x, Max), Min), each a select that keeps x only when strictly
        # inside, so NaN -> Max, Min > Max -> Min and a tie of zeros takes the bound's sign
        with np.errstate(invalid="ignore"):
            below = np.where(_float(x) < float(hi), _float(x), float(hi))
            return np.where(below > float(lo), below, float(lo))
    _no64(desc, xs, data_type)
    x = _wide(x)
    return np.maximum(np.minimum(x, _bound(hi, data_type)), _bound(lo, data_type))


def _clip_grad(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    """CLIP_GRAD / CLIP_GRAD1: the gradient where ``Min < x < Max`` strictly, else +0.

    A select, as DirectML 1.15.4 computes it (probed): NaN or inf gradients outside do not
    leak, and x = NaN, x on a bound or Min > Max give 0.
    """
    x, dy = xs
    _no64(desc, xs, data_type)
    if _is_float(x):
        xf = x.astype(np.float64)
        with np.errstate(invalid="ignore"):
            inside = (xf > float(desc.min)) & (xf < float(desc.max))
    else:  # the bounds converted to the integer type first (truncated: Min -1.5 excludes x = -1)
        xi = _wide(x)
        inside = (xi > _bound(desc.min, data_type)) & (xi < _bound(desc.max, data_type))
    if dy.dtype.kind == "f":
        return np.where(inside, dy.astype(np.float64), 0.0)
    return np.where(inside, dy, np.zeros((), dy.dtype))


def _bound(value: float | int, data_type: TensorDataType, *, up: bool = False) -> Any:
    """A scalar bound for an integer input, converted as DirectML converts it (probed).

    A float bound is truncated toward zero and saturated to the type (CLIP of INT8 with
    Min 1.5 clamps 0 to 1); a NaN bound becomes 0, or INT32_MIN for INT32.
    """
    if isinstance(value, float):
        info = np.iinfo(data_type.numpy_dtype)
        if math.isnan(value):
            return int(info.min) if data_type.name == "INT32" else 0
        if not math.isfinite(value):
            return int(info.min) if value < 0 else int(info.max)
        return min(max(int(value), int(info.min)), int(info.max))  # int() truncates toward zero
    return value


def _threshold(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    """``x > Min ? x : Min``: NaN and a tie of zeros give Min (THRESHOLD(-0, Min +0) = +0)."""
    (x,) = _need_float(desc, xs, data_type)
    bound = float(desc.min)
    with np.errstate(invalid="ignore"):
        return np.where(x > bound, x, bound)


def _abs_negate(negate: bool) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        (x,) = xs
        if _is_float(x):
            # the sign bit, in the tensor's own type: a NaN keeps its payload, a signalling one
            # too (DirectML, probed: FLOAT32 ABS of 0xFF800001 gives 0x7F800001); a float64
            # detour would quiet it (0x7FC00001)
            return np.negative(x) if negate else np.abs(x)
        w = _wide(x)
        r = -w if negate else np.abs(w)
        return _saturate(r, data_type) if x.dtype.itemsize < 4 else r

    return rule


def _identity(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    return xs[0]


def _sign(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    (x,) = xs
    if _is_float(x):
        x = _float(x)
        return (x > 0).astype(np.float64) - (x < 0).astype(np.float64)
    return np.sign(_wide(x))


def _round(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    (x,) = _need_float(desc, xs, data_type)
    mode = desc.rounding_mode.name
    if mode == "HALVES_TO_NEAREST_EVEN":
        return np.rint(x)
    if mode == "TOWARD_ZERO":
        return np.trunc(x)
    # TOWARD_INFINITY: halves away from zero, x >= 0 ? floor(x + 0.5) : ceil(x - 0.5) in float32
    x32 = x.astype(F32)
    with np.errstate(all="ignore"):
        return np.where(x32 >= 0, np.floor(x32 + F32(0.5)), np.ceil(x32 - F32(0.5))).astype(np.float64)


def _is_infinity(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    (x,) = _need_float(desc, xs, data_type)
    mode = desc.infinity_mode.name
    if mode == "POSITIVE":
        return x == np.inf
    if mode == "NEGATIVE":
        return x == -np.inf
    return np.isinf(x)


def _is_nan(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    (x,) = _need_float(desc, xs, data_type)
    return np.isnan(x)


def _compare(fn: Callable[[Array, Array], Array]) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = xs
        if _is_float(a):
            a, b = _float(a), _float(b)
        return np.asarray(fn(a, b))

    return rule


def _logical(fn: Callable[[Array, Array], Array]) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        return np.asarray(fn(xs[0] != 0, xs[1] != 0))

    return rule


def _logical_not(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    return xs[0] == 0


def _as_bits(x: Array) -> Array:
    return x.view(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype.kind == "f" else x


def _bitwise(fn: Callable[[Array, Array], Array]) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        a, b = (np.ascontiguousarray(x) for x in xs)
        r = fn(_as_bits(a), _as_bits(b))
        return r.view(a.dtype) if a.dtype.kind == "f" else r

    return rule


def _bit_not(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    x = np.ascontiguousarray(xs[0])
    r = np.invert(_as_bits(x))
    return r.view(x.dtype) if x.dtype.kind == "f" else r


def _bit_count(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    x = np.ascontiguousarray(xs[0])
    bits = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    count = np.zeros(bits.shape, dtype=np.int64)
    for _ in range(_bits(x)):
        count += (bits & np.uint64(1)).astype(np.int64)
        bits = bits >> np.uint64(1)
    return count


def _mean(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    a, b = xs
    if _is_float(a):
        with np.errstate(all="ignore"):  # (a + b) * 0.5 in float32: a + b may overflow
            return ((a.astype(F32) + b.astype(F32)).astype(F32) * F32(0.5)).astype(F32)
    _no64(desc, xs, data_type)
    total = _wide(a) + _wide(b)
    if data_type.is_signed_integer:
        total = (total + 0x80000000) % 0x100000000 - 0x80000000  # the signed 32-bit sum
        return np.trunc(total / 2).astype(np.int64)
    return (total & 0xFFFFFFFF) // 2


def _if(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    condition, a, b = xs
    return np.where(condition != 0, a, b)


def _dml_pow(x: Array, y: Array | float) -> Array:
    """DirectML's pow: ``exp2(y * log2(|x|))``, signed for a negative x and an integer y.

    x > 0: the exp2/log2 form, so pow(1, NaN) and pow(inf, 0) are NaN; x < 0: NaN unless
    y is a finite integer, negated for an odd one; x = +-0 or NaN: 0 (pow(0, -1) = 0,
    pow(NaN, 0) = 0), as DirectML 1.15.4 computes it (probed).
    """
    with np.errstate(all="ignore"):
        y = np.asarray(y, dtype=np.float64)
        r = np.exp2(y * np.log2(np.abs(x)))
        integer = (y - np.floor(y)) == 0
        odd = integer & ((y / 2 - np.floor(y / 2)) != 0)
        negative = np.where(integer, np.where(odd, -r, r), np.nan)
        return np.where(x > 0, r, np.where(x < 0, negative, 0.0))


def _pow(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    if not data_type.name.startswith("FLOAT"):  # integer POW (even ScaleBias'd): not the float formula
        raise unsupported(desc, data_type)
    x, y = _need_float(desc, xs, data_type)
    return _dml_pow(x, y)


def _constant_pow(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    if not data_type.name.startswith("FLOAT"):
        raise unsupported(desc, data_type)
    (x,) = _need_float(desc, xs, data_type)
    return _dml_pow(x, float(desc.exponent))


def _exp32(x: Array) -> Array:
    """Exp rounded to float32: DirectML's SINH, COSH and CELU overflow where it does (x > 88.72)."""
    with np.errstate(all="ignore"):
        return np.exp(x).astype(F32).astype(np.float64)


def _log_of_f32(x: Array) -> Array:
    return np.log(x.astype(F32).astype(np.float64))


def _asinh(x: Array) -> Array:
    """DirectML's ``log(x + sqrt(x * x + 1))``, each step rounded to float32 (probed).

    Not the function's value where the float32 steps lose it: asinh(-inf) is NaN, x * x
    overflows beyond 1.8e19 (asinh(-1e30) = inf), and large negative x cancel
    (asinh(-395.57) = -6.68 where the function is -6.67).
    """
    x32 = x.astype(F32)
    return _log_of_f32(x32 + np.sqrt((x32 * x32).astype(F32) + F32(1)).astype(F32))


def _acosh(x: Array) -> Array:
    """DirectML's ``log(x + sqrt(x * x - 1))`` in float32 steps: x <= -1 gives NaN or -inf, not NaN only."""
    x32 = x.astype(F32)
    return _log_of_f32(x32 + np.sqrt((x32 * x32).astype(F32) - F32(1)).astype(F32))


def _atanh(x: Array) -> Array:
    """DirectML's ``0.5 * log((1 + x) / (1 - x))``, the quotient in float32."""
    x32 = x.astype(F32)
    return 0.5 * _log_of_f32((F32(1) + x32).astype(F32) / (F32(1) - x32).astype(F32))


def _atan_yx(y: Array, x: Array) -> Array:
    """atan2, with DirectML's values for one NaN operand beside a finite nonzero one (probed).

    DirectML reads ``atan(y / x)`` (pi/4 for NaN, as ATAN) shifted by pi when ``x < 0``,
    by -pi when also not ``y >= 0``: atan2(NaN, -0.5) = pi/4 - pi, atan2(NaN, 0.5) =
    atan2(-1, NaN) = pi/4. NaN beside a zero, an infinity or a NaN stays NaN.
    """
    with np.errstate(invalid="ignore"):
        nan_y = np.isnan(y) & np.isfinite(x) & (x != 0)
        nan_x = np.isnan(x) & np.isfinite(y) & (y != 0)
        quarter = np.where(nan_y & (x < 0), np.pi / 4 - np.pi, np.pi / 4)
        return np.where(nan_y | nan_x, quarter, np.arctan2(y, x))


def _atan(x: Array) -> Array:
    """atan, with NaN giving pi/4.

    DirectML's approximation reduces x through min/max(|x|, 1), which D3D defines to drop
    a NaN operand, so it evaluates atan(1).
    """
    return np.where(np.isnan(x), np.pi / 4, np.arctan(x))


# -- quantization -------------------------------------------------------------------------------


def _to_integer(v: Array, data_type: TensorDataType) -> Array:
    """D3D's float-to-integer conversion of a float32 value, then the type's range.

    ``ftoi`` / ``ftou`` give 0 for NaN and saturate out-of-range values (so a negative value
    becomes 0 for an unsigned type); the integer is then clamped to ``data_type``.
    """
    info = np.iinfo(data_type.numpy_dtype)
    with np.errstate(invalid="ignore"):
        return np.clip(np.where(np.isnan(v), 0.0, v), info.min, info.max).astype(np.int64)


def _clamp_float(v: Array, data_type: TensorDataType) -> Array:
    """``min(max(v, Min), Max)`` in float, NaN losing to Min, before the conversion."""
    info = np.iinfo(data_type.numpy_dtype)
    with np.errstate(invalid="ignore"):
        low = np.where(np.isnan(v) | (v < info.min), float(info.min), v)
    return np.minimum(low, float(info.max)).astype(np.int64)


def _requantize(value: Array, scale: Array, zero_point: Array | None) -> Array:
    """``round(value / scale) + zero_point`` in float32.

    A float32 division (not a multiply by the reciprocal), halves to even, the zero point
    added as a float.
    """
    with np.errstate(all="ignore"):
        q = np.rint((value.astype(F32) / scale.astype(F32)).astype(F32))
        return (q + (F32(0) if zero_point is None else zero_point.astype(F32))).astype(F32)


def _dequantize_value(q: Array, scale: Array, zero_point: Array | None) -> Array:
    """``(q - zero_point) * scale`` in float32: the integers converted to float32 first."""
    with np.errstate(all="ignore"):
        shifted = q.astype(F32) - (F32(0) if zero_point is None else zero_point.astype(F32))
        return (shifted.astype(F32) * scale.astype(F32)).astype(F32)


def _quantize_linear(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    """QUANTIZE_LINEAR: ``round(x / scale) + zero_point`` in float32, converted as D3D converts.

    An INT32 input is converted to float32 first (16777217 -> 16777216).
    """
    x, scale, *zero_point = xs  # ZeroPointTensor is optional: zero without it
    return _to_integer(_requantize(x, scale, zero_point[0] if zero_point else None), desc.output_tensor.data_type)


def _dequantize_linear(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    """DEQUANTIZE_LINEAR: ``(float32(q) - float32(zero_point)) * scale``: no integer subtraction."""
    q, scale, *zero_point = xs  # ZeroPointTensor is optional: zero without it
    return _dequantize_value(q, scale, zero_point[0] if zero_point else None)


def _quantized_linear_add(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    """QUANTIZED_LINEAR_ADD: both operands dequantized in float32, added, requantized.

    With an OutputZeroPointTensor and a packed OutputTensor the result is clamped as a
    float (NaN -> Min); otherwise (no OutputZeroPointTensor, or an OutputTensor with
    Strides that are not packed: DirectML's other shader) it is converted as
    QUANTIZE_LINEAR converts (NaN -> 0).
    """
    a, a_scale, a_zero, b, b_scale, b_zero, out_scale, out_zero = xs
    with np.errstate(all="ignore"):
        total = (_dequantize_value(a, a_scale, a_zero) + _dequantize_value(b, b_scale, b_zero)).astype(F32)
    v = _requantize(total, out_scale, out_zero)
    out = desc.output_tensor
    return _clamp_float(v, out.data_type) if quantized_add_clamps_as_float(desc) else _to_integer(v, out.data_type)


def quantized_add_clamps_as_float(desc: Any) -> bool:
    """Whether QUANTIZED_LINEAR_ADD clamps its requantized value as a float (NaN -> Min).

    So it does with an OutputZeroPointTensor and a packed OutputTensor; otherwise (DirectML's
    other shader) it converts as QUANTIZE_LINEAR converts (NaN -> 0).
    """
    out = desc.output_tensor
    packed = out.strides is None or tuple(out.strides) == packed_strides(out.sizes)
    return desc.output_zero_point_tensor is not None and packed


# -- activations ---------------------------------------------------------------------------------


def _activation(fn: Callable[[Any, Array], Array]) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        x = _need_float(desc, xs[:1], data_type)[0]
        with np.errstate(all="ignore"):
            return np.asarray(fn(desc, x), dtype=np.float64)

    return rule


def _activation_identity(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    """The input as it is, bits included (DirectML keeps a signalling NaN's payload, probed on FLOAT32)."""
    if not data_type.name.startswith("FLOAT") or not _is_float(xs[0]):  # as _need_float, without its copy
        raise unsupported(desc, data_type)
    return xs[0]


def _sigmoid(x: Array) -> Array:
    return 1 / (1 + np.exp(-x))


def _softplus(x: Array, steepness: float) -> Array:
    return np.log1p(np.exp(steepness * x)) / steepness


ACTIVATIONS: dict[str, Callable[[Any, Array], Array]] = {
    "ACTIVATION_IDENTITY": lambda d, x: x,
    "ACTIVATION_RELU": lambda d, x: np.where(x > 0, x, 0.0),
    "ACTIVATION_LEAKY_RELU": lambda d, x: np.where(x >= 0, x, d.alpha * x),  # zeros pass with their sign
    "ACTIVATION_ELU": lambda d, x: np.where(x > 0, x, d.alpha * np.expm1(x)),
    "ACTIVATION_CELU": lambda d, x: np.fmax(0, x) + np.fmin(0, d.alpha * (_exp32(x / d.alpha) - 1)),
    "ACTIVATION_SCALED_ELU": lambda d, x: d.gamma * np.where(x > 0, x, d.alpha * np.expm1(x)),
    "ACTIVATION_SIGMOID": lambda d, x: _sigmoid(x),
    "ACTIVATION_HARD_SIGMOID": lambda d, x: np.fmin(np.fmax(d.alpha * x + d.beta, 0), 1),  # NaN -> 0
    "ACTIVATION_HARD_SWISH": lambda d, x: x * np.clip(d.alpha * x + d.beta, 0, 1),
    "ACTIVATION_SWISH": lambda d, x: x * _sigmoid(d.sigmoid_input_scale * x),
    "ACTIVATION_TANH": lambda d, x: np.tanh(x),
    "ACTIVATION_SCALED_TANH": lambda d, x: d.alpha * np.tanh(d.beta * x),
    "ACTIVATION_SOFTPLUS": lambda d, x: _softplus(x, d.steepness),
    "ACTIVATION_PARAMETRIC_SOFTPLUS": lambda d, x: d.alpha * np.log1p(np.exp(d.beta * x)),
    "ACTIVATION_SOFTSIGN": lambda d, x: x / (1 + np.abs(x)),
    "ACTIVATION_LINEAR": lambda d, x: d.alpha * x + d.beta,
    "ACTIVATION_THRESHOLDED_RELU": lambda d, x: np.where(x <= d.alpha, 0.0, x),  # NaN passes
    # x > Threshold is tested first: with a negative Threshold every x above it gives x - Bias
    "ACTIVATION_SHRINK": lambda d, x: np.where(
        x > d.threshold, x - d.bias, np.where(x < -d.threshold, x + d.bias, 0.0)
    ),
    "ACTIVATION_GELU": lambda d, x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
}
"""The activations as formulas of one input (also the fusable ones, applied to a fused result)."""

FUSED: dict[str, Callable[[Any, Array], Array]] = {
    **ACTIVATIONS,
    # A fused RELU multiplies by (x > 0): -0 for negative sums, NaN stays NaN (the
    # standalone ACTIVATION_RELU gives +0 and 0)
    "ACTIVATION_RELU": lambda d, x: x * (x > 0),
}
"""The activations as DirectML applies them fused into another operator."""


def _parameterized_relu(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    x, slope = _need_float(desc, xs, data_type)
    return np.where(x >= 0, x, slope * x)  # -0 stays -0


def _relu_grad(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
    x, dy = xs
    if _is_float(x):
        x, dy = _float(x), _float(dy)
        return np.where(x > 0, dy, 0.0)
    return np.where(x > 0, _wide(dy), 0)


def _softmax(kind: str) -> Rule:
    def rule(desc: Any, xs: list[Array], data_type: TensorDataType) -> Array:
        (x,) = _need_float(desc, xs, data_type)
        axes = rules.reduction_axes(desc)
        if kind == "hardmax":
            return _hardmax(x, axes)
        with np.errstate(all="ignore"):
            m = np.fmax.reduce(x, axis=axes, keepdims=True)  # NaN-ignoring maximum
            shifted = x - m
            total = np.sum(np.exp(shifted), axis=axes, keepdims=True)
            if kind == "softmax":
                return np.exp(shifted) / total
            floor = float(rules.LOG_SOFTMAX_MIN_SUM)
            return shifted - np.log(np.where(np.isnan(total) | (total < floor), floor, total))

    return rule


def _hardmax(x: Array, axes: tuple[int, ...]) -> Array:
    """1 at the first maximum of each set: a strict ``>`` scan from the set's first element."""
    keep = [a for a in range(x.ndim) if a not in axes]
    moved = np.moveaxis(x, [*keep, *axes], range(x.ndim))
    flat = moved.reshape(*moved.shape[: len(keep)], -1)
    n = flat.shape[-1]
    best = flat[..., 0].copy()
    index = np.zeros(best.shape, dtype=np.int64)
    for i in range(1, n):
        greater = flat[..., i] > best
        best = np.where(greater, flat[..., i], best)
        index = np.where(greater, i, index)
    out = np.zeros(flat.shape)
    np.put_along_axis(out, index[..., None], 1.0, axis=-1)
    out = out.reshape(moved.shape)
    return np.moveaxis(out, range(x.ndim), [*keep, *axes])


# -- the table ---------------------------------------------------------------------------------------

RULES: dict[str, Rule] = {
    "ELEMENT_WISE_IDENTITY": _identity,
    "ELEMENT_WISE_ABS": _abs_negate(negate=False),
    "ELEMENT_WISE_NEGATE": _abs_negate(negate=True),
    "ELEMENT_WISE_ACOS": _unary_float(np.arccos),
    "ELEMENT_WISE_ACOSH": _unary_float(_acosh),
    "ELEMENT_WISE_ASIN": _unary_float(np.arcsin),
    "ELEMENT_WISE_ASINH": _unary_float(_asinh),
    "ELEMENT_WISE_ATAN": _unary_float(_atan),
    "ELEMENT_WISE_ATANH": _unary_float(_atanh),
    "ELEMENT_WISE_COS": _unary_float(np.cos),
    "ELEMENT_WISE_COSH": _unary_float(lambda x: (_exp32(x) + _exp32(-x)) / 2),
    "ELEMENT_WISE_SIN": _unary_float(np.sin),
    "ELEMENT_WISE_SINH": _unary_float(lambda x: (_exp32(x) - _exp32(-x)) / 2),
    "ELEMENT_WISE_TAN": _unary_float(np.tan),
    "ELEMENT_WISE_TANH": _unary_float(np.tanh),
    "ELEMENT_WISE_EXP": _unary_float(np.exp),
    "ELEMENT_WISE_LOG": _unary_float(np.log),
    "ELEMENT_WISE_SQRT": _unary_float(np.sqrt),
    "ELEMENT_WISE_RECIP": _unary_float(lambda x: 1 / x),
    "ELEMENT_WISE_ERF": _unary_float(_erf),
    "ELEMENT_WISE_FLOOR": _unary_float(np.floor),
    "ELEMENT_WISE_CEIL": _unary_float(np.ceil),
    "ELEMENT_WISE_ROUND": _round,
    "ELEMENT_WISE_SIGN": _sign,
    "ELEMENT_WISE_IS_NAN": _is_nan,
    "ELEMENT_WISE_IS_INFINITY": _is_infinity,
    "ELEMENT_WISE_CLIP": _clip,
    "ELEMENT_WISE_CLIP1": _clip,
    "ELEMENT_WISE_CLIP_GRAD": _clip_grad,
    "ELEMENT_WISE_CLIP_GRAD1": _clip_grad,
    "ELEMENT_WISE_THRESHOLD": _threshold,
    "ELEMENT_WISE_CONSTANT_POW": _constant_pow,
    "ELEMENT_WISE_POW": _pow,
    "ELEMENT_WISE_ADD": _arith(lambda a, b: a + b),
    "ELEMENT_WISE_ADD1": _arith(lambda a, b: a + b),
    "ELEMENT_WISE_SUBTRACT": _arith(lambda a, b: a - b),
    "ELEMENT_WISE_MULTIPLY": _arith(lambda a, b: a * b),
    # DirectML rounds the difference to float32 before squaring it (probed: 1-ulp differences otherwise)
    "ELEMENT_WISE_DIFFERENCE_SQUARE": _arith(lambda a, b: _sq(_f32(a - b) if a.dtype.kind == "f" else a - b)),
    "ELEMENT_WISE_DIVIDE": _divide,
    "ELEMENT_WISE_MODULUS_TRUNCATE": _modulus(floor=False),  # integers only
    "ELEMENT_WISE_MODULUS_FLOOR": _modulus(floor=True),
    "ELEMENT_WISE_MAX": _max_min(is_max=True),
    "ELEMENT_WISE_MIN": _max_min(is_max=False),
    "ELEMENT_WISE_MEAN": _mean,
    "ELEMENT_WISE_ATAN_YX": _binary_float(lambda y, x: _atan_yx(y, x)),
    "ELEMENT_WISE_LOGICAL_EQUALS": _compare(np.equal),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": _compare(np.greater),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": _compare(np.greater_equal),
    "ELEMENT_WISE_LOGICAL_LESS_THAN": _compare(np.less),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": _compare(np.less_equal),
    "ELEMENT_WISE_LOGICAL_AND": _logical(np.logical_and),
    "ELEMENT_WISE_LOGICAL_OR": _logical(np.logical_or),
    "ELEMENT_WISE_LOGICAL_XOR": _logical(np.logical_xor),
    "ELEMENT_WISE_LOGICAL_NOT": _logical_not,
    "ELEMENT_WISE_BIT_AND": _bitwise(np.bitwise_and),
    "ELEMENT_WISE_BIT_OR": _bitwise(np.bitwise_or),
    "ELEMENT_WISE_BIT_XOR": _bitwise(np.bitwise_xor),
    "ELEMENT_WISE_BIT_NOT": _bit_not,
    "ELEMENT_WISE_BIT_COUNT": _bit_count,
    "ELEMENT_WISE_BIT_SHIFT_LEFT": _shift(left=True),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": _shift(left=False),
    "ELEMENT_WISE_IF": _if,
    "ELEMENT_WISE_QUANTIZE_LINEAR": _quantize_linear,
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": _dequantize_linear,
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": _quantized_linear_add,
    "ACTIVATION_PARAMETERIZED_RELU": _parameterized_relu,
    "ACTIVATION_RELU_GRAD": _relu_grad,
    "ACTIVATION_SOFTMAX": _softmax("softmax"),
    "ACTIVATION_SOFTMAX1": _softmax("softmax"),
    "ACTIVATION_LOG_SOFTMAX": _softmax("log_softmax"),
    "ACTIVATION_LOG_SOFTMAX1": _softmax("log_softmax"),
    "ACTIVATION_HARDMAX": _softmax("hardmax"),
    "ACTIVATION_HARDMAX1": _softmax("hardmax"),
    **{name: _activation(fn) for name, fn in ACTIVATIONS.items()},
    "ACTIVATION_IDENTITY": _activation_identity,
}


def scale_bias(sb: Any, x: Array) -> Array:
    """DML_SCALE_BIAS ``sb``: ``x * Scale + Bias`` in two float32 roundings (integer inputs converted to float32)."""
    with np.errstate(all="ignore"):
        y = (x.astype(F32) * F32(sb.scale)).astype(F32) + F32(sb.bias)
    return y.astype(F32) if x.dtype.kind != "f" or x.dtype == np.float32 else y.astype(x.dtype)
