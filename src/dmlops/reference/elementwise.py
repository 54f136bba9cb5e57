"""The element-wise and activation family in NumPy: the formula table applied to whole tensors.

The formulas (one row per operator, DirectML's probed arithmetic) are
:mod:`dmlops.descs._elementwise_formulas`, shared with the cpu backend's generic path.
Here each operator reads its logical inputs, scales them (ScaleBias applies to every
input: POW's ExponentTensor too), applies its row, then a FusedActivation (ADD1) to the
result rounded to the output type; the result is rounded once when stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..descs._elementwise_formulas import FUSED, RULES, scale_bias, unsupported
from ..enums import FeatureLevel

Array = NDArray[Any]


def compute_elementwise(
    desc: Any, inputs: Mapping[str, Array], *, feature_level: FeatureLevel, strict: bool
) -> dict[str, Array]:
    """Every operator of the family: its ``RULES`` row on the logical inputs, then a FusedActivation."""
    name = desc.operator_type.name
    members = desc.tensor_slots("input")
    xs: list[Any]
    if name == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":
        xs = [inputs.get(m) for m in members]  # optional zero points stay in place, as None
    else:
        xs = [inputs[m] for m in members if m in inputs]
    data_type = desc.tensor(members[1] if name == "ELEMENT_WISE_IF" else members[0]).data_type
    sb = getattr(desc, "scale_bias", None)
    if sb is not None:
        # every input is scaled: POW's ExponentTensor too (probed: pow(x*2+1, y*2+1))
        xs = [scale_bias(sb, x) for x in xs]
    result = np.asarray(RULES[name](desc, xs, data_type))
    fused = getattr(desc, "fused_activation", None)
    if fused is not None:
        fn = FUSED.get(fused.spec.name)
        if fn is None or result.dtype.kind != "f":
            raise unsupported(desc, data_type, f" with a fused {fused.spec.name}")
        # the sum is rounded to the output type before the activation reads it
        rounded = result.astype(desc.output_tensor.dtype).astype(np.float64)
        with np.errstate(all="ignore"):
            result = np.asarray(fn(fused, rounded), dtype=np.float64)
    output = desc.tensor_slots("output")[0]
    return {output: result}


OPERATORS: dict[str, Callable[..., Any]] = {name: compute_elementwise for name in RULES}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""
