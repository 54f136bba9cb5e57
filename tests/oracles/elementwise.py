"""Inputs and comparison rules for the element-wise family's differential tests (numpy vs directml).

``CASES`` lists, per operator, the data types to run, the desc's non-tensor members and
how its inputs are drawn; ``data(...)`` draws adversarial values (NaN, +-inf, +-0,
subnormals, integer extremes) mixed with random ones; ``ULPS`` is the float32 tolerance
of the transcendental operators (all others compare bit for bit, NaN equal to NaN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SHAPE = (1, 1, 6, 7)
"""42 elements: a last size divisible by 4 makes DirectML pick vectorised DXIL shaders for float32
ADD, SUBTRACT, MULTIPLY, DIVIDE, MAX, MIN, MEAN, DIFFERENCE_SQUARE, which this stack cannot compile."""

FLOAT_SPECIALS = np.array(
    [
        np.nan,
        np.inf,
        -np.inf,
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -2.5,
        2.5,
        3e38,
        -3e38,
        1e-40,
        -1e-40,
        8388609.0,
        0.49999997,
        -0.49999997,
        1e-30,
    ],
    dtype=np.float32,
)
"""Float32 values every float case includes (subnormals and the ROUND corner cases included)."""

INTS = ("INT8", "UINT8", "INT32", "UINT32")
FLOAT = ("FLOAT32",)
ALL = (*FLOAT, *INTS)


def integer_specials(dtype: np.dtype[Any]) -> np.ndarray:
    info = np.iinfo(dtype)
    values = [info.min, info.min + 1, 0, 1, 2, 3, info.max - 1, info.max]
    if info.min < 0:
        values += [-1, -2, -3, -7]
    return np.array(values, dtype=dtype)


def data(
    dtype: np.dtype[Any], rng: np.random.Generator, *, kind: str = "any", shape: tuple[int, ...] = SHAPE
) -> np.ndarray:
    """Adversarial values first, random ones after, shuffled into ``shape``."""
    n = int(np.prod(shape))
    if dtype.kind == "f":
        if kind.endswith("unit"):  # the domain of acos, asin, atanh
            rand = rng.uniform(-1.2, 1.2, n)
        elif kind.endswith("small"):  # exp, sinh, cosh: no overflow for most draws
            rand = rng.uniform(-20, 20, n)
        elif kind.endswith("positive"):
            rand = rng.uniform(0, 100, n)
        else:
            rand = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4 if kind == "any" else 2, n)
        specials = FLOAT_SPECIALS
        if kind == "scale":  # quantization scales: mostly ordinary, with 0, +-inf, NaN and negatives
            rand = rng.choice([0.5, 0.25, 0.1, 1.0, 3.0, 0.3, 7.5], n) * rng.choice([1, 1, 1, 1, -1], n)
            specials = np.array([0.0, -0.0, np.inf, np.nan, 1e-30, 1e30, -1.0], dtype=np.float32)
        elif kind == "ties":  # quantization inputs: halves of ordinary scales, and specials
            rand = (rng.integers(-300, 300, n) + 0.5) * rng.choice([0.5, 0.25, 0.1, 1.0, 3.0, 0.3, 7.5], n)
        if kind.startswith("ordinary"):  # approximated operators: no specials, no subnormal or huge values
            specials = np.array([0.0, 1.0, -1.0, 0.5, -0.5], dtype=np.float32)
            rand = np.where(np.abs(rand) < 1e-3, 0.125, rand)
    else:
        info = np.iinfo(dtype)
        if kind == "shift":
            rand = rng.integers(0, 70, n)
            specials = np.array([0, 1, 7, 8, 9, 15, 16, 31, 32, 33, 63, 64, 255], dtype=np.int64)
            specials = specials[specials <= info.max]
        elif kind.endswith("small"):
            rand = rng.integers(max(info.min, -20), 21, n)
            specials = np.array([0, 1, 2, 3], dtype=np.int64)
        else:
            rand = rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64 if info.max < 2**63 else np.uint64)
            specials = integer_specials(dtype)
    values = np.concatenate([specials.astype(np.float64 if dtype.kind == "f" else specials.dtype), rand])[:n]
    values = values.astype(dtype)
    rng.shuffle(values)
    return values.reshape(shape)


@dataclass(frozen=True)
class Case:
    """One operator's differential case."""

    operator: str
    dtypes: tuple[str, ...]
    inputs: tuple[str, ...] = ("InputTensor",)
    attrs: dict[str, Any] = field(default_factory=dict)
    kind: dict[str, str] = field(default_factory=dict)
    """Per input: how its values are drawn (see :func:`data`)."""
    output: str = "OutputTensor"
    output_dtype: str | None = None
    shape: tuple[int, ...] = SHAPE
    member_types: dict[str, str] = field(default_factory=dict)
    """Per input: a data type other than the case's (quantization's scales and zero points)."""
    scalars: tuple[str, ...] = ()
    """Inputs of one element (all sizes 1), as QUANTIZED_LINEAR_ADD's scales and zero points."""


def case_id(case: Case, dtype_name: str) -> str:
    """A test id naming what sets the case apart: modes, ScaleBias, quantization types, fusion, axes."""
    parts = [str(v) for k, v in case.attrs.items() if k in ("RoundingMode", "InfinityMode")]
    parts += ["scale_bias"] if "ScaleBias" in case.attrs else []
    parts += [f"to_{case.output_dtype.lower()}"] if "QUANTIZE" in case.operator and case.output_dtype else []
    parts += ["no_zero_points"] if "QUANTIZE" in case.operator and "ZeroPoint" not in " ".join(case.inputs) else []
    parts += ["fused_" + case.attrs["FusedActivation"]["Type"].lower()] if "FusedActivation" in case.attrs else []
    parts += ["_".join(map(str, case.attrs["Axes"]))] if "Axes" in case.attrs else []
    parts += [f"min{case.attrs['Min']}"] if "MinMaxDataType" in case.attrs else []
    return "-".join([case.operator.lower(), *parts, dtype_name.lower()])


AB = ("ATensor", "BTensor")
SB = {"ScaleBias": {"Scale": 0.75, "Bias": -0.5}}


def _unary(op: str, dtypes: tuple[str, ...] = FLOAT, **kw: Any) -> Case:
    return Case(f"ELEMENT_WISE_{op}", dtypes, **kw)


def _binary(op: str, dtypes: tuple[str, ...] = ALL, **kw: Any) -> Case:
    return Case(f"ELEMENT_WISE_{op}", dtypes, AB, **kw)


def _act(op: str, dtypes: tuple[str, ...] = FLOAT, **attrs: Any) -> Case:
    return Case(f"ACTIVATION_{op}", dtypes, attrs=attrs)


CASES: list[Case] = [
    _unary("IDENTITY", ALL),
    Case("ELEMENT_WISE_IDENTITY", ALL, attrs=SB),
    _unary("ABS", ("FLOAT32", "INT8", "INT32")),
    _unary("NEGATE", ("FLOAT32", "INT8", "INT32")),
    _unary("ACOS", kind={"InputTensor": "ordinary_unit"}),
    _unary("ACOSH", kind={"InputTensor": "ordinary_positive"}),
    _unary("ASIN", kind={"InputTensor": "ordinary_unit"}),
    _unary("ASINH", kind={"InputTensor": "ordinary"}),
    _unary("ATAN", kind={"InputTensor": "ordinary"}),
    _unary("ATANH", kind={"InputTensor": "ordinary_unit"}),
    _unary("COS", kind={"InputTensor": "ordinary_small"}),
    _unary("SIN", kind={"InputTensor": "ordinary_small"}),
    _unary("TAN", kind={"InputTensor": "ordinary_small"}),
    _unary("COSH", kind={"InputTensor": "small"}),
    _unary("SINH", kind={"InputTensor": "small"}),
    _unary("TANH"),
    _unary("EXP", kind={"InputTensor": "small"}),
    Case("ELEMENT_WISE_EXP", FLOAT, attrs=SB, kind={"InputTensor": "small"}),
    _unary("LOG", kind={"InputTensor": "ordinary_positive"}),
    _unary("SQRT", kind={"InputTensor": "positive"}),
    _unary("RECIP"),
    _unary("ERF"),
    _unary("FLOOR"),
    _unary("CEIL"),
    Case("ELEMENT_WISE_FLOOR", FLOAT, attrs=SB),
    *(_unary("ROUND", attrs={"RoundingMode": m}) for m in ("HALVES_TO_NEAREST_EVEN", "TOWARD_ZERO", "TOWARD_INFINITY")),
    _unary("SIGN", ("FLOAT32", "INT8", "UINT8", "INT32", "UINT32")),
    _unary("IS_NAN", output_dtype="UINT8"),
    *(
        _unary("IS_INFINITY", attrs={"InfinityMode": m}, output_dtype="UINT8")
        for m in ("EITHER", "POSITIVE", "NEGATIVE")
    ),
    _unary("CLIP", attrs={"Min": -1.5, "Max": 2.0}),
    _unary("CLIP", attrs={"Min": 1.0, "Max": -1.0, **SB}),
    _unary("CLIP1", ("FLOAT32",), attrs={"MinMaxDataType": "FLOAT32", "Min": -1.5, "Max": 2.0}),
    _unary("CLIP1", ("INT8",), attrs={"MinMaxDataType": "INT8", "Min": -100, "Max": 50}),
    _unary("CLIP1", ("INT32",), attrs={"MinMaxDataType": "INT32", "Min": -(2**31) + 5, "Max": 2**24 + 1}),
    _unary("CLIP1", ("UINT8",), attrs={"MinMaxDataType": "UINT8", "Min": 3, "Max": 200}),
    _unary("THRESHOLD", attrs={"Min": 0.25}),
    _unary("CONSTANT_POW", attrs={"Exponent": 2.0}, kind={"InputTensor": "ordinary"}),
    _unary("CONSTANT_POW", attrs={"Exponent": 0.5}, kind={"InputTensor": "positive"}),
    Case(
        "ELEMENT_WISE_POW",
        FLOAT,
        ("InputTensor", "ExponentTensor"),
        kind={"InputTensor": "ordinary_positive", "ExponentTensor": "ordinary_small"},
    ),
    _unary("LOGICAL_NOT", ("UINT8",), output_dtype="UINT8"),
    _unary("BIT_NOT", ("INT8", "UINT8", "INT32", "UINT32")),
    _unary("BIT_COUNT", ("INT8", "UINT8", "INT32", "UINT32", "FLOAT32"), output_dtype="UINT8"),
    _binary("ADD"),
    _binary("ADD1"),
    Case("ELEMENT_WISE_ADD1", FLOAT, AB, attrs={"FusedActivation": {"Type": "ACTIVATION_RELU"}}),
    Case("ELEMENT_WISE_ADD1", FLOAT, AB, attrs={"FusedActivation": {"Type": "ACTIVATION_LEAKY_RELU", "Alpha": 0.1}}),
    _binary("SUBTRACT"),
    _binary("MULTIPLY"),
    _binary("DIVIDE"),
    _binary("MODULUS_TRUNCATE", INTS),
    _binary("MODULUS_FLOOR", INTS),
    _binary("MAX"),
    _binary("MIN"),
    _binary("MEAN", ("FLOAT32", "INT32", "UINT32")),
    _binary("DIFFERENCE_SQUARE", ("FLOAT32", "INT32", "UINT32")),
    _binary("ATAN_YX", FLOAT, kind={"ATensor": "ordinary", "BTensor": "ordinary"}),
    *(
        _binary(f"LOGICAL_{op}", ALL, output_dtype="UINT8")
        for op in ("EQUALS", "GREATER_THAN", "GREATER_THAN_OR_EQUAL", "LESS_THAN", "LESS_THAN_OR_EQUAL")
    ),
    *(_binary(f"LOGICAL_{op}", ("UINT8",), output_dtype="UINT8") for op in ("AND", "OR", "XOR")),
    *(_binary(f"BIT_{op}", ("INT8", "UINT8", "INT32", "UINT32")) for op in ("AND", "OR", "XOR")),
    *(_binary(f"BIT_SHIFT_{op}", ("UINT8", "UINT32"), kind={"BTensor": "shift"}) for op in ("LEFT", "RIGHT")),
    Case("ELEMENT_WISE_IF", ALL, ("ConditionTensor", "ATensor", "BTensor")),
    _act("IDENTITY"),
    _act("RELU"),
    _act("LEAKY_RELU", Alpha=0.1),
    _act("ELU", Alpha=0.7),
    _act("CELU", Alpha=0.7),
    _act("SCALED_ELU", Alpha=1.67, Gamma=1.05),
    _act("SIGMOID"),
    _act("HARD_SIGMOID", Alpha=0.2, Beta=0.5),
    _act("HARD_SWISH", Alpha=0.1666667, Beta=0.5),
    _act("SWISH", SigmoidInputScale=1.5),
    _act("TANH"),
    _act("SCALED_TANH", Alpha=1.5, Beta=0.75),
    _act("SOFTPLUS", Steepness=2.0),
    _act("PARAMETRIC_SOFTPLUS", Alpha=1.5, Beta=0.5),
    _act("SOFTSIGN"),
    _act("LINEAR", Alpha=1.5, Beta=-0.25),
    _act("THRESHOLDED_RELU", Alpha=0.5),
    _act("SHRINK", Bias=0.25, Threshold=0.5),
    _act("GELU"),
    Case("ACTIVATION_PARAMETERIZED_RELU", FLOAT, ("InputTensor", "SlopeTensor")),
    Case(
        "ACTIVATION_RELU_GRAD",
        ("FLOAT32", "INT8", "INT32"),
        ("InputTensor", "InputGradientTensor"),
        output="OutputGradientTensor",
    ),
    Case(
        "ELEMENT_WISE_CLIP_GRAD",
        FLOAT,
        ("InputTensor", "InputGradientTensor"),
        attrs={"Min": -1.5, "Max": 2.0},
        output="OutputGradientTensor",
    ),
    *(
        Case(
            "ELEMENT_WISE_CLIP_GRAD1",
            (dt,),
            ("InputTensor", "InputGradientTensor"),
            attrs={"MinMaxDataType": dt, "Min": lo, "Max": hi},
            output="OutputGradientTensor",
        )
        for dt, lo, hi in (("FLOAT32", -1.5, 2.0), ("INT8", -100, 50), ("INT32", -5, 2**24 + 1), ("UINT8", 3, 200))
    ),
    # The FL 1.0 softmax-like operators read their tensors as 2-D (E63): {1, 1, rows, values}.
    Case("ACTIVATION_SOFTMAX", FLOAT, kind={"InputTensor": "small"}, shape=(1, 1, 12, 7)),
    Case("ACTIVATION_LOG_SOFTMAX", FLOAT, kind={"InputTensor": "small"}, shape=(1, 1, 12, 7)),
    Case("ACTIVATION_HARDMAX", FLOAT, shape=(1, 1, 12, 7)),
    Case("ACTIVATION_SOFTMAX1", FLOAT, attrs={"Axes": [1, 3]}, kind={"InputTensor": "small"}, shape=(2, 3, 4, 5)),
    Case("ACTIVATION_LOG_SOFTMAX1", FLOAT, attrs={"Axes": [0, 2]}, kind={"InputTensor": "small"}, shape=(2, 3, 4, 5)),
    Case("ACTIVATION_HARDMAX1", FLOAT, attrs={"Axes": [2, 3]}, shape=(2, 3, 4, 5)),
]

QUANTIZE_MEMBERS = ("InputTensor", "ScaleTensor", "ZeroPointTensor")
QLA_MEMBERS = (
    "ATensor",
    "AScaleTensor",
    "AZeroPointTensor",
    "BTensor",
    "BScaleTensor",
    "BZeroPointTensor",
    "OutputScaleTensor",
    "OutputZeroPointTensor",
)
QLA_SCALARS = tuple(m for m in QLA_MEMBERS if m not in ("ATensor", "BTensor"))
CASES += [
    *(
        Case(
            "ELEMENT_WISE_QUANTIZE_LINEAR",
            (dt,),
            QUANTIZE_MEMBERS,
            kind={"InputTensor": "ties" if dt == "FLOAT32" else "any", "ScaleTensor": "scale"},
            output_dtype=out,
            member_types={"ScaleTensor": "FLOAT32", "ZeroPointTensor": out},
        )
        for dt in ("FLOAT32", "INT32")
        for out in ("UINT8", "INT8")
    ),
    *(  # no ZeroPointTensor (optional): zero
        Case(
            operator,
            (dt,),
            QUANTIZE_MEMBERS[:2],
            kind={"InputTensor": "ties" if dt == "FLOAT32" else "any", "ScaleTensor": "scale"},
            output_dtype=out,
            member_types={"ScaleTensor": "FLOAT32"},
        )
        for operator, dt, out in (
            ("ELEMENT_WISE_QUANTIZE_LINEAR", "FLOAT32", "INT8"),
            ("ELEMENT_WISE_QUANTIZE_LINEAR", "INT32", "UINT8"),
            ("ELEMENT_WISE_DEQUANTIZE_LINEAR", "INT8", "FLOAT32"),
            ("ELEMENT_WISE_DEQUANTIZE_LINEAR", "UINT32", "FLOAT32"),
        )
    ),
    *(
        Case(
            "ELEMENT_WISE_DEQUANTIZE_LINEAR",
            (dt,),
            QUANTIZE_MEMBERS,
            kind={"ScaleTensor": "scale"},
            output_dtype="FLOAT32",
            member_types={"ScaleTensor": "FLOAT32"},
        )
        for dt in INTS
    ),
    *(
        Case(
            "ELEMENT_WISE_QUANTIZED_LINEAR_ADD",
            (dt,),
            members,
            kind=dict.fromkeys(("AScaleTensor", "BScaleTensor", "OutputScaleTensor"), "scale"),
            output_dtype=out,
            member_types={
                **dict.fromkeys(("AScaleTensor", "BScaleTensor", "OutputScaleTensor"), "FLOAT32"),
                "BTensor": other,
                "BZeroPointTensor": other,
                "OutputZeroPointTensor": out,
            },
            scalars=tuple(m for m in QLA_SCALARS if m in members),
        )
        for dt, other, out in (("UINT8", "INT8", "UINT8"), ("INT8", "UINT8", "INT8"), ("UINT8", "UINT8", "INT8"))
        for members in (QLA_MEMBERS, tuple(m for m in QLA_MEMBERS if "ZeroPoint" not in m))
    ),
]

TOLERANCE: dict[str, tuple[float, float]] = {
    name: (2e-4, 1e-6)
    for name in (
        "ELEMENT_WISE_ACOS ELEMENT_WISE_ACOSH ELEMENT_WISE_ASIN ELEMENT_WISE_ASINH ELEMENT_WISE_ATAN ELEMENT_WISE_ATANH "
        "ELEMENT_WISE_COS ELEMENT_WISE_SIN ELEMENT_WISE_TAN ELEMENT_WISE_COSH ELEMENT_WISE_SINH ELEMENT_WISE_TANH "
        "ELEMENT_WISE_EXP ELEMENT_WISE_LOG ELEMENT_WISE_SQRT ELEMENT_WISE_RECIP ELEMENT_WISE_ERF ELEMENT_WISE_POW "
        "ELEMENT_WISE_CONSTANT_POW ELEMENT_WISE_ATAN_YX ELEMENT_WISE_DIVIDE "
        "ACTIVATION_ELU ACTIVATION_CELU ACTIVATION_SCALED_ELU ACTIVATION_SIGMOID ACTIVATION_SWISH ACTIVATION_TANH "
        "ACTIVATION_SCALED_TANH ACTIVATION_SOFTPLUS ACTIVATION_PARAMETRIC_SOFTPLUS ACTIVATION_SOFTSIGN "
        "ACTIVATION_GELU ACTIVATION_SOFTMAX ACTIVATION_SOFTMAX1 ACTIVATION_LOG_SOFTMAX ACTIVATION_LOG_SOFTMAX1 "
        "ACTIVATION_HARD_SWISH ACTIVATION_HARD_SIGMOID ACTIVATION_LINEAR"
    ).split()
}
"""(rtol, atol) of the operators DirectML computes with approximations (the rest compare bit for bit).

Measured on this stack (DirectML 1.15.4 on Wine/vkd3d/lavapipe): ACOS/ASIN/ATAN are
polynomial approximations ~5e-5 off, EXP/LOG/POW/ERF and the activations built on them
~1e-5 relative, subnormal results flushed to zero; 2e-4 relative + 1e-6 absolute covers
them. A GPU's DirectML shaders may differ within the same bound (D3D's float rules)."""
TOLERANCE["ELEMENT_WISE_ASIN"] = TOLERANCE["ELEMENT_WISE_ACOS"] = (2e-4, 1e-4)  # asin(0) = 6.8e-5 here


def quantized_before_conversion(
    operator: str, inputs: dict[str, np.ndarray], *, packed_output: bool = True
) -> tuple[np.ndarray, bool] | None:
    """The float32 value QUANTIZE_LINEAR / QUANTIZED_LINEAR_ADD convert to an integer.

    Written from the pages with the float32 steps probed on DirectML 1.15.4: a float32
    division, halves to even, the zero point added as a float. The flag says whether the
    value is clamped as a float before the conversion (QUANTIZED_LINEAR_ADD with an
    OutputZeroPointTensor and a packed OutputTensor): then the conversion sees only
    in-range values. None for any other operator.
    """
    f = np.float32
    with np.errstate(all="ignore"):
        if operator == "ELEMENT_WISE_QUANTIZE_LINEAR":
            x, s, z = inputs["InputTensor"], inputs["ScaleTensor"], inputs.get("ZeroPointTensor")
            return (np.rint((x.astype(f) / s).astype(f)) + (f(0) if z is None else z.astype(f))).astype(f), False
        if operator != "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":
            return None

        def value(q: str) -> np.ndarray:
            zero = inputs.get(f"{q}ZeroPointTensor")
            shifted = inputs[f"{q}Tensor"].astype(f) - (f(0) if zero is None else zero.astype(f))
            return (shifted.astype(f) * inputs[f"{q}ScaleTensor"]).astype(f)

        total = (value("A") + value("B")).astype(f)
        zero = inputs.get("OutputZeroPointTensor")
        v = np.rint((total / inputs["OutputScaleTensor"]).astype(f)) + (f(0) if zero is None else zero.astype(f))
        return v.astype(f), zero is not None and packed_output


def stack_conversion(
    operator: str,
    inputs: dict[str, np.ndarray],
    expected: np.ndarray,
    got: np.ndarray,
    *,
    packed_output: bool = True,
) -> np.ndarray:
    """Elements where DirectML's result on this stack is lavapipe's float-to-integer conversion.

    D3D defines ``ftou`` / ``ftoi`` as saturating with NaN -> 0 (what dmlops computes);
    vkd3d 1.6 emits plain SPIR-V conversions, which lavapipe evaluates as 0xFFFFFFFF for a
    negative or NaN ``ftou`` (a UINT8 result of 255) and INT_MIN for a NaN or >= 2^31
    ``ftoi`` (-128). True where the value is one of those, the reference holds D3D's
    result and DirectML lavapipe's.
    """
    found = quantized_before_conversion(operator, inputs, packed_output=packed_output)
    mask = np.zeros(got.shape, dtype=bool)
    if found is None or found[1]:
        return mask
    v = np.broadcast_to(found[0], got.shape)
    info = np.iinfo(got.dtype)
    with np.errstate(invalid="ignore"):
        if info.min == 0:
            odd = np.isnan(v) | (v < 0)
            stack = np.full(got.shape, info.max, got.dtype)
        else:
            odd = np.isnan(v) | (v >= 2.0**31)
            stack = np.full(got.shape, info.min, got.dtype)
        d3d = np.clip(np.where(np.isnan(v), 0, v), info.min, info.max).astype(got.dtype)
    return odd & (got == stack) & (expected == d3d) & (stack != d3d)


LIKE_VALUES = (-0.1, -0.35, -2.3)
"""Fill values of :func:`row_of_like_values`: exps whose float32 running sums round the same
way step after step (a float32 sum of a 4M-element row drifted 1.4e-3 to 1.7e-3)."""


def row_of_like_values(n: int, fill: float) -> np.ndarray:
    """A float32 row of ``n`` elements, the first 0 (the maximum), the rest ``fill``: SOFTMAX's
    sum is ``1 + (n - 1) exp(fill)``, a test of summation order rather than of exp."""
    x = np.full(n, np.float32(fill))
    x[0] = 0.0
    return x


def softmax_row_float64(x: np.ndarray, log: bool) -> np.ndarray:
    """SOFTMAX (or LOG_SOFTMAX) of one row in float64, from the definition (no floor: sums here are >= 1)."""
    shifted = x.astype(np.float64) - np.float64(np.nanmax(x))
    total = math.fsum(np.exp(shifted))
    return shifted - math.log(total) if log else np.exp(shifted) / total


def check_long_rows_of_like_values(operator: str, n: int, run: Any, strided: bool = False) -> None:
    """``operator`` (SOFTMAX1 or LOG_SOFTMAX1) over one row of ``n`` like values, for each of
    :data:`LIKE_VALUES`, within TOLERANCE's relative part of :func:`softmax_row_float64`.

    ``run(desc, inputs)`` returns the outputs as NumPy arrays; ``strided``: the row read at
    stride 2 from a buffer. Relative error alone: SOFTMAX's results (~1e-7) are below
    TOLERANCE's absolute part, which hid a drifting sum from the other tests.
    """
    from dmlops.descs import desc_from_json

    for fill in LIKE_VALUES:
        x = row_of_like_values(n, fill)
        tensor: dict[str, Any] = {"DataType": "FLOAT32", "Sizes": [1, n]}
        given = x.reshape(1, n)
        if strided:
            tensor["Strides"], given = [2 * n, 2], np.repeat(x, 2)
        body = {"InputTensor": tensor, "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, n]}, "Axes": [1]}
        got = run(desc_from_json(operator, body), {"InputTensor": given})["OutputTensor"]
        expected = softmax_row_float64(x, log=operator == "ACTIVATION_LOG_SOFTMAX1")
        np.testing.assert_allclose(got.ravel(), expected, rtol=TOLERANCE[operator][0], atol=0, err_msg=f"fill {fill}")
