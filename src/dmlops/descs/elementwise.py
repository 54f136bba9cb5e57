"""The element-wise and activation family: which operators it holds, and the rules every backend shares.

Its 92 operators (the ELEMENT_WISE_* and ACTIVATION_* rows of the catalogue) keep the
generic descs made from their catalogue rows (:mod:`.generic`); this module *claims*
them, so their desc classes carry ``family = "elementwise"`` and the reference backend
dispatches to ``reference/elementwise.py``. ``REFERENCE_OPERATORS`` lists those the
NumPy reference implements; the others run on ``directml`` only and every other
backend refuses them with UnsupportedError naming directml.

Rules DirectML 1.15.4 follows (probed on the ``directml`` backend; where a page is
silent or says otherwise, DirectML wins):

* Integer arithmetic of 8/16/32-bit types is done in 32-bit registers and the result's
  low bits are stored (wrap-around), except ABS and NEGATE of 8-bit and 16-bit types,
  which saturate (ABS(INT8 -128) = 127); 32-bit ABS/NEGATE wrap (ABS(INT32_MIN) = INT32_MIN).
* Signed integer DIVIDE: the unsigned quotient of the magnitudes, negated when the signs
  differ; a divisor of 0 gives the all-ones quotient (so ``a / 0`` is -1 for ``a >= 0``
  and 1 for ``a < 0``); INT32_MIN / -1 = INT32_MIN. Unsigned: ``a / 0`` = all ones.
* MODULUS_TRUNCATE (signed) is ``a - (a / b) * b`` with that quotient (``a % 0 = a``);
  unsigned: the unsigned remainder (``a % 0`` = all ones). MODULUS_FLOOR is the unsigned
  remainder of the magnitudes with the dividend's sign, plus ``b`` when nonzero and of
  the other sign than ``b`` (``a % 0`` is -1 for ``a >= 0``, 1 for ``a < 0``).
  Float modulus is ``a - b * trunc(a / b)`` / ``a - b * floor(a / b)`` in float32 steps
  (``x % inf`` is NaN).
* Shift counts are taken modulo 32 (8/16/32-bit types), the shifted 32-bit value truncated.
* MAX / MIN of a NaN and a number give the number; equal operands (``-0`` and ``+0``)
  give A. CLIP is ``m = x < Max ? x : Max; m > Min ? m : Min`` (NaN -> Max; Min > Max
  -> Min; a tie of zeros takes the bound's sign). THRESHOLD is ``x > Min ? x : Min``.
  On integer tensors the float Min / Max of CLIP and CLIP_GRAD are converted to the
  type first, truncated toward zero and saturated (NaN -> 0, INT32: INT32_MIN).
* POW / CONSTANT_POW are ``exp2(y * log2|x|)``, signed for x < 0 and an odd integer y,
  NaN for x < 0 and any other y, 0 for x = +-0 or NaN. ATAN(NaN) = pi/4; ASINH, ACOSH,
  ATANH, SINH, COSH are DirectML's log/exp formulas in float32 steps.
* SHRINK tests ``x > Threshold`` before ``x < -Threshold``; LEAKY_RELU is
  ``x >= 0 ? x : Alpha * x``.
* ScaleBias is ``x * Scale + Bias`` in two float32 roundings (no fused multiply-add);
  an integer input is converted to float32 first and the result stored truncated. It
  applies to every input: POW's ExponentTensor is scaled too.
* ROUND: TOWARD_ZERO truncates; TOWARD_INFINITY rounds halves away from zero as
  ``x >= 0 ? floor(x + 0.5) : ceil(x - 0.5)`` in float32 (so ROUND(-0) = +0).
* SIGN(NaN) = 0, SIGN(-0) = +0.
* SOFTMAX / LOG_SOFTMAX / HARDMAX (FL 1.0) work along the last dimension; the *1
  variants along the set ``Axes``. HARDMAX picks the first maximum by a strict ``>``
  scan from the first element (a NaN at the first position wins, NaN elsewhere never).
  LOG_SOFTMAX is ``(x - m) - log(max(sum(exp(x - m)), 1e-20))``, ``m`` the NaN-ignoring
  maximum.
* QUANTIZE_LINEAR is ``round(x / scale) + zero_point`` in float32 (a division, halves to
  even, an INT32 input converted to float32 first), converted to the output type as D3D
  converts floats to integers (NaN -> 0, out-of-range values saturate).
  DEQUANTIZE_LINEAR is ``(float32(q) - float32(zero_point)) * scale`` in float32.
  QUANTIZED_LINEAR_ADD dequantizes both operands so, adds them in float32 and
  requantizes; with an OutputZeroPointTensor the value is clamped as a float first
  (NaN -> Min), without one converted as QUANTIZE_LINEAR's (NaN -> 0). Its scale and
  zero-point tensors hold one element (DirectML rejects larger ones).

Rules of CreateOperator that the pages do not state (erratum E63), checked by
:func:`validate_generic`: the FL 1.0 SOFTMAX, LOG_SOFTMAX and HARDMAX read their tensors as
2-D (every dimension before the last two has size 1); ScaleBias on a 64-bit tensor
must be the identity (Scale 1, Bias 0); QUANTIZED_LINEAR_ADD's scale and zero-point
tensors hold one element.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..catalogue import OPERATORS as CATALOGUE_OPERATORS
from ._base import family_claim

FAMILY = "elementwise"

OPERATORS: frozenset[str] = frozenset(
    op.name for op in CATALOGUE_OPERATORS if op.name.startswith(("ELEMENT_WISE_", "ACTIVATION_"))
)
"""Every operator of the family (the 65 ELEMENT_WISE_* and the 27 ACTIVATION_* rows)."""

REFERENCE_OPERATORS: frozenset[str] = frozenset(
    """
    ELEMENT_WISE_IDENTITY ELEMENT_WISE_ABS ELEMENT_WISE_ACOS ELEMENT_WISE_ACOSH ELEMENT_WISE_ADD
    ELEMENT_WISE_ADD1 ELEMENT_WISE_ASIN ELEMENT_WISE_ASINH ELEMENT_WISE_ATAN ELEMENT_WISE_ATANH
    ELEMENT_WISE_ATAN_YX ELEMENT_WISE_BIT_AND ELEMENT_WISE_BIT_COUNT ELEMENT_WISE_BIT_NOT
    ELEMENT_WISE_BIT_OR ELEMENT_WISE_BIT_SHIFT_LEFT ELEMENT_WISE_BIT_SHIFT_RIGHT ELEMENT_WISE_BIT_XOR
    ELEMENT_WISE_CEIL ELEMENT_WISE_CLIP ELEMENT_WISE_CLIP1 ELEMENT_WISE_CLIP_GRAD
    ELEMENT_WISE_CLIP_GRAD1 ELEMENT_WISE_CONSTANT_POW ELEMENT_WISE_COS
    ELEMENT_WISE_COSH ELEMENT_WISE_DIFFERENCE_SQUARE ELEMENT_WISE_DIVIDE ELEMENT_WISE_ERF
    ELEMENT_WISE_EXP ELEMENT_WISE_FLOOR ELEMENT_WISE_IF ELEMENT_WISE_IS_INFINITY ELEMENT_WISE_IS_NAN
    ELEMENT_WISE_LOG ELEMENT_WISE_LOGICAL_AND ELEMENT_WISE_LOGICAL_EQUALS
    ELEMENT_WISE_LOGICAL_GREATER_THAN ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL
    ELEMENT_WISE_LOGICAL_LESS_THAN ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL ELEMENT_WISE_LOGICAL_NOT
    ELEMENT_WISE_LOGICAL_OR ELEMENT_WISE_LOGICAL_XOR ELEMENT_WISE_MAX ELEMENT_WISE_MEAN ELEMENT_WISE_MIN
    ELEMENT_WISE_MODULUS_FLOOR ELEMENT_WISE_MODULUS_TRUNCATE ELEMENT_WISE_MULTIPLY ELEMENT_WISE_NEGATE
    ELEMENT_WISE_POW ELEMENT_WISE_RECIP ELEMENT_WISE_ROUND ELEMENT_WISE_SIGN ELEMENT_WISE_SIN
    ELEMENT_WISE_SINH ELEMENT_WISE_SQRT ELEMENT_WISE_SUBTRACT ELEMENT_WISE_TAN ELEMENT_WISE_TANH
    ELEMENT_WISE_THRESHOLD ELEMENT_WISE_QUANTIZE_LINEAR ELEMENT_WISE_DEQUANTIZE_LINEAR
    ELEMENT_WISE_QUANTIZED_LINEAR_ADD
    ACTIVATION_CELU ACTIVATION_ELU ACTIVATION_GELU ACTIVATION_HARDMAX ACTIVATION_HARDMAX1
    ACTIVATION_HARD_SIGMOID ACTIVATION_HARD_SWISH ACTIVATION_IDENTITY ACTIVATION_LEAKY_RELU
    ACTIVATION_LINEAR ACTIVATION_LOG_SOFTMAX ACTIVATION_LOG_SOFTMAX1 ACTIVATION_PARAMETERIZED_RELU
    ACTIVATION_PARAMETRIC_SOFTPLUS ACTIVATION_RELU ACTIVATION_RELU_GRAD ACTIVATION_SCALED_ELU
    ACTIVATION_SCALED_TANH ACTIVATION_SHRINK ACTIVATION_SIGMOID ACTIVATION_SOFTMAX ACTIVATION_SOFTMAX1
    ACTIVATION_SOFTPLUS ACTIVATION_SOFTSIGN ACTIVATION_SWISH ACTIVATION_TANH ACTIVATION_THRESHOLDED_RELU
    """.split()
)
"""The operators the NumPy reference implements (``reference/elementwise.py``'s ``OPERATORS``)."""


TWO_D_SOFTMAX = frozenset({"ACTIVATION_SOFTMAX", "ACTIVATION_LOG_SOFTMAX", "ACTIVATION_HARDMAX"})
"""The FL 1.0 softmax-like operators: DirectML reads their tensors as 2-D (E63)."""

QUANTIZATION_PARAMETERS: tuple[str, ...] = ("AScaleTensor", "AZeroPointTensor", "BScaleTensor", "BZeroPointTensor")
QUANTIZATION_PARAMETERS += ("OutputScaleTensor", "OutputZeroPointTensor")
"""QUANTIZED_LINEAR_ADD's scale and zero-point tensors: one element each (E63)."""


def validate_generic(desc: Any, level: Any) -> None:
    """The family's rules beyond the support tables, as DirectML 1.15.4's CreateOperator checks them (E63)."""
    name = desc.spec.name
    if name in TWO_D_SOFTMAX:
        for member in ("InputTensor", "OutputTensor"):
            sizes = desc.tensor(member).sizes
            for i, size in enumerate(sizes[:-2]):
                if size != 1:
                    raise desc.invalid(
                        f"{member}.Sizes[{i}]",
                        "must be 1: the operator reads its tensors as 2-D, every dimension before the last two of "
                        "size 1 (ACTIVATION_SOFTMAX1 and its kin take any Axes)",
                        size,
                    )
    scale_bias = getattr(desc, "scale_bias", None)
    if scale_bias is not None and (scale_bias.scale != 1.0 or scale_bias.bias != 0.0):
        for member in desc.tensor_slots("input"):
            tensor = desc.tensors().get(member)
            if tensor is not None and tensor.dtype.itemsize == 8:
                raise desc.invalid(
                    "ScaleBias",
                    f"must be Scale 1, Bias 0 on a 64-bit tensor ({member} is {tensor.data_type.name})",
                    (scale_bias.scale, scale_bias.bias),
                )
    if name == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":
        for member in QUANTIZATION_PARAMETERS:
            tensor = desc.tensors().get(member)
            if tensor is not None and tensor.element_count != 1:
                raise desc.invalid(f"{member}.Sizes", "must hold one element (every size 1)", list(tensor.sizes))


CUDA_OPERATORS: frozenset[str] = REFERENCE_OPERATORS
"""The operators the cuda backend runs (``cuda/elementwise.py``), as the cpu backend: all the
reference's. Either refuses, per call, the data types its kernels do not cover."""


claim = family_claim(
    FAMILY,
    (CUDA_OPERATORS, ("numpy", "cpu", "cuda", "directml")),
    (REFERENCE_OPERATORS, ("numpy", "cpu", "directml")),
    (OPERATORS, ("directml",)),
)


def reduction_axes(desc: Any) -> tuple[int, ...]:
    """The axes SOFTMAX-like operators reduce: ``Axes`` (the *1 variants) or the last dimension."""
    axes = getattr(desc, "axes", None)
    if axes is None:
        return (len(desc.input_tensor.sizes) - 1,)
    return tuple(sorted(int(a) for a in axes))


LOG_SOFTMAX_MIN_SUM = np.float32(1e-20)
"""LOG_SOFTMAX's floor under the sum of exponentials (probed: a NaN sum becomes 1e-20)."""

__all__ = [
    "CUDA_OPERATORS",
    "FAMILY",
    "LOG_SOFTMAX_MIN_SUM",
    "OPERATORS",
    "QUANTIZATION_PARAMETERS",
    "REFERENCE_OPERATORS",
    "TWO_D_SOFTMAX",
    "claim",
    "reduction_axes",
    "validate_generic",
]
