"""The quantized family: which operators it holds and their own rules.

DYNAMIC_QUANTIZE_LINEAR, QUANTIZE, DEQUANTIZE, QUANTIZED_LINEAR_AVERAGE_POOLING keep the
generic descs made from their catalogue rows (:mod:`.generic`); this module claims them
(``family = "quantized"``) and adds the rules of their pages that the catalogue does not
hold (:func:`validate_generic`). Only the ``directml`` backend runs them yet.

Rules, each checked against DirectML 1.15.4's CreateOperator (it wins where the pages
are silent or say otherwise; FLOAT16 and the 4-bit types cannot be probed on this stack):

* DYNAMIC_QUANTIZE_LINEAR: OutputTensor has InputTensor's Sizes; OutputScaleTensor and
  OutputZeroPointTensor hold one element each (all sizes 1: per-tensor only).
* QUANTIZE / DEQUANTIZE (the pages say "TBD"): QuantizationType SCALE takes one tensor
  (the scale), SCALE_ZERO_POINT two (scale, zero point); NONE is rejected whatever the
  count (erratum E130). OutputTensor has InputTensor's Sizes. The scale is a float
  tensor; each of its sizes divides InputTensor's on that axis (1 is per-tensor, the
  full size per-element, anything between blocks of equal length, on any number of
  axes). The zero point has the scale's Sizes and the quantized tensor's DataType
  (QUANTIZE's OutputTensor, DEQUANTIZE's InputTensor).
* QUANTIZED_LINEAR_AVERAGE_POOLING: the forward pooling rules of
  :func:`.pooling.validate_pooling` (DimensionCount is InputTensor's DimensionCount - 2;
  OutputTensor's N and C are InputTensor's). The spatial output sizes are free, as are
  zeros in Strides, WindowSize and Dilations (the page's size formula is not enforced:
  erratum E131). The scale tensors' Sizes are free too (the page's ``{1, 1, 1, 1}`` or
  ``{1, C, 1, 1}`` is not enforced: erratum E132), but each zero point has its scale's
  Sizes.
"""

from __future__ import annotations

from typing import Any

from ..enums import FeatureLevel
from ..enums import TensorDataType as T
from ._base import family_claim
from .pooling import generic_window, validate_pooling

FAMILY = "quantized"

OPERATORS: frozenset[str] = frozenset(
    ("DYNAMIC_QUANTIZE_LINEAR QUANTIZE DEQUANTIZE QUANTIZED_LINEAR_AVERAGE_POOLING").split()
)
"""Every operator of the family."""

QUANTIZATION_TENSOR_COUNTS: dict[str, int] = {"SCALE": 1, "SCALE_ZERO_POINT": 2}
"""QUANTIZE / DEQUANTIZE: QuantizationType -> QuantizationTensorCount (NONE is rejected, E130)."""

SCALE_TYPES = (T.FLOAT32, T.FLOAT16)
"""The data types of a scale tensor."""

QUANTIZED_MEMBER: dict[str, str] = {"QUANTIZE": "OutputTensor", "DEQUANTIZE": "InputTensor"}
"""The quantized tensor of QUANTIZE / DEQUANTIZE, whose DataType the zero point has."""


claim = family_claim(FAMILY, (OPERATORS, ("directml",)))


def _require_one_element(desc: Any, member: str) -> None:
    """A per-tensor scale or zero point: every size 1."""
    dims = desc.tensor(member).dimension_count
    desc.require_sizes(member, (1,) * dims, "one element")


def _require_zero_point_sizes(desc: Any, scale: str, zero_point: str) -> None:
    """A zero point, where present, has its scale's Sizes (DirectML 1.15.4; the pages state no such rule)."""
    if zero_point in desc.tensors():
        desc.require_sizes(zero_point, desc.tensor(scale).sizes, f"{scale}.Sizes")


def _check_dynamic_quantize_linear(desc: Any) -> None:
    desc.require_same("Sizes", "InputTensor", "OutputTensor")
    _require_one_element(desc, "OutputScaleTensor")
    _require_one_element(desc, "OutputZeroPointTensor")


def _check_quantize(desc: Any) -> None:
    kind = desc.quantization_type.name
    tensors = desc.quantization_tensors
    if kind not in QUANTIZATION_TENSOR_COUNTS:
        raise desc.invalid("QuantizationType", "must be SCALE or SCALE_ZERO_POINT (DirectML rejects NONE)", kind)
    count = QUANTIZATION_TENSOR_COUNTS[kind]
    if len(tensors) != count:
        raise desc.invalid("QuantizationTensorCount", f"must be {count} for QuantizationType {kind}", len(tensors))
    desc.require_same("Sizes", "InputTensor", "OutputTensor")
    scale, sizes = tensors[0], desc.input_tensor.sizes
    if scale.data_type not in SCALE_TYPES:
        raise desc.invalid("QuantizationTensors[0].DataType", "must be FLOAT32 or FLOAT16 (the scale)", scale.data_type)
    for axis, (n, s) in enumerate(zip(sizes, scale.sizes)):
        if n % s:
            raise desc.invalid(
                f"QuantizationTensors[0].Sizes[{axis}]",
                f"must divide InputTensor.Sizes[{axis}] ({n}): one scale per block of equal length",
                s,
            )
    if count == 2:
        zero_point, quantized = tensors[1], QUANTIZED_MEMBER[desc.operator_type.name]
        data_type = desc.tensor(quantized).data_type
        if zero_point.data_type != data_type:
            raise desc.invalid(
                "QuantizationTensors[1].DataType",
                f"must equal {quantized}.DataType ({data_type})",
                zero_point.data_type,
            )
        if zero_point.sizes != scale.sizes:
            raise desc.invalid(
                "QuantizationTensors[1].Sizes",
                f"must equal QuantizationTensors[0].Sizes ({scale.sizes})",
                zero_point.sizes,
            )


def _check_quantized_average_pooling(desc: Any) -> None:
    validate_pooling(
        desc, generic_window(desc), "InputTensor", desc.input_tensor, "OutputTensor", desc.output_tensor, gradient=False
    )
    for prefix in ("Input", "Output"):
        _require_zero_point_sizes(desc, f"{prefix}ScaleTensor", f"{prefix}ZeroPointTensor")


_RULES: dict[str, Any] = {
    "DYNAMIC_QUANTIZE_LINEAR": _check_dynamic_quantize_linear,
    "QUANTIZE": _check_quantize,
    "DEQUANTIZE": _check_quantize,
    "QUANTIZED_LINEAR_AVERAGE_POOLING": _check_quantized_average_pooling,
}


def validate_generic(desc: Any, level: FeatureLevel) -> None:
    """The rules of a quantized operator's own (see the module docstring): InvalidDescError naming ``STRUCT.Member``.

    Called by the generic desc's validation after the page facts (support rows,
    same-attribute constraints); checked against DirectML 1.15.4's CreateOperator.
    """
    _RULES[desc.operator_type.name](desc)


__all__ = [
    "FAMILY",
    "OPERATORS",
    "QUANTIZATION_TENSOR_COUNTS",
    "QUANTIZED_MEMBER",
    "SCALE_TYPES",
    "claim",
    "validate_generic",
]
