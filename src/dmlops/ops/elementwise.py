"""The functional API of the element-wise and activation family, made from one table.

Each function builds the operator's generic desc from NumPy-like arrays (same shapes,
or shapes NumPy broadcasts: a broadcast operand is bound with 0-strides, as DirectML
reads one), validates it and executes it::

    dmlops.add(a, b)                      # ELEMENT_WISE_ADD
    dmlops.add1(a, b, fused_activation="ACTIVATION_RELU")
    dmlops.clip(x, min=-1.0, max=1.0)     # ELEMENT_WISE_CLIP
    dmlops.relu(x), dmlops.elu(x, alpha=1.0), dmlops.softmax1(x, axes=[1])

Non-tensor members are keyword arguments named after the DML member in snake case
(``Min`` -> ``min``, ``RoundingMode`` -> ``rounding_mode``, ``ScaleBias`` ->
``scale_bias=(scale, bias)``); outputs take the first input's data type, UINT8 for the
LOGICAL_*, IS_NAN and IS_INFINITY operators, FLOAT32 for DEQUANTIZE_LINEAR and the
(output) zero point's type for QUANTIZE_LINEAR and QUANTIZED_LINEAR_ADD (``output_dtype``
overrides it). QUANTIZED_LINEAR_ADD takes its scales and zero points as one-element
arrays (DirectML rejects larger ones) and None for an optional zero point::

    s = np.float32(0.5)
    dmlops.quantized_linear_add(a, s, None, b, s, None, np.float32(1), np.uint8(128))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..backends import DEFAULT_BACKEND
from ..descs import desc_class
from ..descs.elementwise import REFERENCE_OPERATORS
from ..enums import FeatureLevel, TensorDataType
from ..tensor import TensorDesc
from ._common import array_argument, check_out, run_single_output, tensor_of

_UINT8_OUTPUT = ("ELEMENT_WISE_LOGICAL_", "ELEMENT_WISE_IS_NAN", "ELEMENT_WISE_IS_INFINITY")
_OUTPUT_TYPE_OF = {
    "ELEMENT_WISE_QUANTIZE_LINEAR": "ZeroPointTensor",
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": "OutputZeroPointTensor",
}
"""The input whose data type the output takes by default (when it is bound)."""
_SCALARS = {"ELEMENT_WISE_QUANTIZED_LINEAR_ADD": ("ATensor", "BTensor")}
"""Operators whose other inputs hold one element each: the shape comes from these members alone."""


def _function_name(operator: str) -> str:
    """``ELEMENT_WISE_ADD`` -> ``add``, ``ACTIVATION_RELU`` -> ``relu`` (``activation_identity``/``_tanh``)."""
    if operator == "ACTIVATION_IDENTITY":
        return "activation_identity"
    if operator == "ACTIVATION_TANH":
        return "activation_tanh"
    return operator.removeprefix("ELEMENT_WISE_").removeprefix("ACTIVATION_").lower()


def _broadcast_tensor(array: Any, shape: tuple[int, ...], what: str) -> TensorDesc:
    """A TensorDesc reading ``array`` as ``shape`` (0-strides on broadcast dimensions)."""
    tensor = tensor_of(array, what)
    own = (1,) * (len(shape) - len(tensor.sizes)) + tensor.sizes
    if own == shape:
        return tensor.with_sizes(shape)
    strides, step = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = 0 if own[i] == 1 and shape[i] != 1 else step
        step *= own[i]
    return TensorDesc(data_type=tensor.data_type, sizes=shape, strides=tuple(strides))


def _make(operator: str) -> Callable[..., Any]:
    cls = desc_class(operator)
    infos = cls.member_infos()
    inputs = [i.dml_name for i in infos if i.kind == "input"]
    optional = {i.dml_name for i in infos if i.kind == "input" and i.optional}
    output = next(i.dml_name for i in infos if i.kind == "output")
    name = _function_name(operator)

    def function(
        *arrays: Any,
        backend: str = DEFAULT_BACKEND,
        feature_level: FeatureLevel | str | None = None,
        out: Any = None,
        output_dtype: Any = None,
        **members: Any,
    ) -> Any:
        given = [
            None if a is None and m in optional else array_argument(a, name, f"argument {k}")
            for k, (m, a) in enumerate(zip(inputs, arrays))
        ]
        check_out(out, name)
        if len(arrays) != len(inputs):
            raise TypeError(f"dmlops.{name} takes {len(inputs)} arrays ({', '.join(inputs)}); got {len(arrays)}")
        shaping = [a for m, a in zip(inputs, given) if a is not None and m in _SCALARS.get(operator, inputs)]
        shape = tuple(int(s) for s in np.broadcast_shapes(*(np.shape(a) for a in shaping))) or (1,)
        values: dict[str, Any] = {}
        for member, array in zip(inputs, given):
            if array is None:
                continue
            if member in _SCALARS.get(operator, inputs):
                values[member] = _broadcast_tensor(array, shape, f"dmlops.{name}: {member}")
            else:  # one element, at the operands' dimension count
                values[member] = tensor_of(np.reshape(array, (1,) * len(shape)), f"dmlops.{name}: {member}")
        first = values[inputs[1] if operator == "ELEMENT_WISE_IF" else inputs[0]]
        if output_dtype is not None:
            data_type = TensorDataType.from_numpy(np.dtype(output_dtype))
        elif operator == "ELEMENT_WISE_DEQUANTIZE_LINEAR":
            data_type = TensorDataType.FLOAT32
        elif _OUTPUT_TYPE_OF.get(operator) in values:
            data_type = values[_OUTPUT_TYPE_OF[operator]].data_type
        elif operator == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":
            data_type = first.data_type
        elif operator.startswith(_UINT8_OUTPUT):
            data_type = TensorDataType.UINT8
        else:
            data_type = first.data_type
        values[output] = TensorDesc(data_type=data_type, sizes=shape)
        for key, value in members.items():
            values[key] = value
        if "FusedActivation" in [i.dml_name for i in infos] and isinstance(values.get("fused_activation"), str):
            fused: Any = desc_class(values["fused_activation"])
            values["fused_activation"] = fused(fused=True)
        if "min_max_data_type" in [i.attr for i in infos] and "min_max_data_type" not in values:
            values["min_max_data_type"] = first.data_type
        desc = cls(**{_attr(k): v for k, v in values.items()})
        bound = {
            m: np.reshape(a, v.sizes) if v.strides is None else _flat(a)
            for m, a, v in ((m, a, values[m]) for m, a in zip(inputs, given) if a is not None)
        }
        result = run_single_output(
            desc, bound, backend=backend, feature_level=feature_level, out=out, output_member=output
        )
        return result

    function.__name__ = function.__qualname__ = name
    function.__module__ = __name__
    function.__doc__ = (
        f"DML_OPERATOR_{operator} on arrays ({', '.join(inputs)}); members as snake_case keywords.\n\n"
        "See the module docstring for shapes, output types and keyword names."
    )
    return function


def _flat(array: Any) -> Any:
    """The flat buffer a broadcast TensorDesc addresses (the array's own elements, in order)."""
    return np.ascontiguousarray(array).reshape(-1)


def _attr(key: str) -> str:
    from ..descs.generic import _snake

    return key if key.islower() else _snake(key)


FUNCTIONS: dict[str, Callable[..., Any]] = {_function_name(op): _make(op) for op in sorted(REFERENCE_OPERATORS)}
"""Function name -> function, for every operator the reference implements."""

globals().update(FUNCTIONS)

__all__ = ["FUNCTIONS", *FUNCTIONS]
