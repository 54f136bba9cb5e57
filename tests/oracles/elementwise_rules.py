"""Descs that probe the element-wise family's CreateOperator rules beyond the support tables (E63).

Each entry: name -> (operator, desc JSON, whether DirectML 1.15.4 accepts it). Shared by
the unit tests (dmlops's verdict) and the directml tests (DirectML's verdict).
"""

from __future__ import annotations

from typing import Any


def _t(sizes: list[int], dtype: str = "FLOAT32") -> dict[str, Any]:
    return {"DataType": dtype, "Sizes": sizes}


def _io(sizes: list[int], dtype: str = "FLOAT32") -> dict[str, Any]:
    return {"InputTensor": _t(sizes, dtype), "OutputTensor": _t(sizes, dtype)}


def _qla(**override: list[int]) -> dict[str, Any]:
    one = [1, 1, 1, 1]
    desc: dict[str, Any] = {"ATensor": _t([1, 1, 2, 3], "INT8"), "BTensor": _t([1, 1, 2, 3], "INT8")}
    desc["OutputTensor"] = _t([1, 1, 2, 3], "INT8")
    for member in ("AScaleTensor", "BScaleTensor", "OutputScaleTensor"):
        desc[member] = _t(override.get(member, one))
    for member in ("AZeroPointTensor", "BZeroPointTensor", "OutputZeroPointTensor"):
        desc[member] = _t(override.get(member, one), "INT8")
    return desc


RULE_DESCS: dict[str, tuple[str, dict[str, Any], bool]] = {
    "softmax 2-D": ("ACTIVATION_SOFTMAX", _io([3, 7]), True),
    "softmax {1, 1, rows, values}": ("ACTIVATION_SOFTMAX", _io([1, 1, 4, 5]), True),
    "softmax {1, 2, 3, 5}": ("ACTIVATION_SOFTMAX", _io([1, 2, 3, 5]), False),
    "softmax {2, 1, 1, 5}": ("ACTIVATION_SOFTMAX", _io([2, 1, 1, 5]), False),
    "log_softmax {3, 2, 5}": ("ACTIVATION_LOG_SOFTMAX", _io([3, 2, 5]), False),
    "hardmax {1, 1, 2, 4, 5}": ("ACTIVATION_HARDMAX", _io([1, 1, 2, 4, 5]), False),
    "hardmax {1, 1, 1, 4, 5}": ("ACTIVATION_HARDMAX", _io([1, 1, 1, 4, 5]), True),
    "softmax1 {2, 3, 4, 5}": ("ACTIVATION_SOFTMAX1", {**_io([2, 3, 4, 5]), "Axes": [3]}, True),
    "INT64 identity ScaleBias": (
        "ELEMENT_WISE_ABS",
        {**_io([1, 2, 3], "INT64"), "ScaleBias": {"Scale": 1.0, "Bias": 0.0}},
        True,
    ),
    "INT64 Scale 2": ("ELEMENT_WISE_ABS", {**_io([1, 2, 3], "INT64"), "ScaleBias": {"Scale": 2.0, "Bias": 0.0}}, False),
    "UINT64 Bias 1": (
        "ELEMENT_WISE_IDENTITY",
        {**_io([1, 2, 3], "UINT64"), "ScaleBias": {"Scale": 1.0, "Bias": 1.0}},
        False,
    ),
    "FLOAT64 Scale -1": (
        "ELEMENT_WISE_IDENTITY",
        {**_io([1, 2, 3], "FLOAT64"), "ScaleBias": {"Scale": -1.0, "Bias": 0.0}},
        False,
    ),
    "FLOAT32 Scale 2": ("ELEMENT_WISE_ABS", {**_io([1, 2, 3]), "ScaleBias": {"Scale": 2.0, "Bias": 0.0}}, True),
    "QLA one-element scales": ("ELEMENT_WISE_QUANTIZED_LINEAR_ADD", _qla(), True),
    "QLA AScale {1, 1, 2, 3}": ("ELEMENT_WISE_QUANTIZED_LINEAR_ADD", _qla(AScaleTensor=[1, 1, 2, 3]), False),
    "QLA OutputZeroPoint {1, 1, 1, 3}": (
        "ELEMENT_WISE_QUANTIZED_LINEAR_ADD",
        _qla(OutputZeroPointTensor=[1, 1, 1, 3]),
        False,
    ),
}
