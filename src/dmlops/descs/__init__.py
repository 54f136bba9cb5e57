"""Operator descs and their semantics: one module per operator FAMILY, same basename in every layer.

A family module (``data_movement``, ``pooling``, ``resampling``, ``roi``) holds its
operators' desc classes (struct mirror, validation, output sizes) and the rules every
backend needs (GATHER's index normalisation, RESAMPLE's tap tables, ROI_ALIGN's samples):
this is the semantics layer, which backends import and never each other
(docs/architecture.md).

Operators without a hand-written class get a generic desc made from their catalogue
row (:mod:`.generic`), so ``desc_class`` and ``desc_from_json`` know every
DML_OPERATOR_TYPE; the hand-written classes keep priority.

``REGISTRY`` maps the short operator name to ``(family module, class)`` and is resolved
lazily, so importing dmlops costs nothing per operator.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ..errors import ArgumentTypeError, UnsupportedError
from ._base import OperatorDesc, TensorSupport

REGISTRY: dict[str, tuple[str, str]] = {
    "GATHER": ("data_movement", "GatherDesc"),
    "SLICE1": ("data_movement", "Slice1Desc"),
    "MAX_POOLING2": ("pooling", "MaxPooling2Desc"),
    "MAX_POOLING_GRAD": ("pooling", "MaxPoolingGradDesc"),
    "RESAMPLE2": ("resampling", "Resample2Desc"),
    "RESAMPLE_GRAD1": ("resampling", "ResampleGrad1Desc"),
    "ROI_ALIGN": ("roi", "RoiAlignDesc"),
}
"""Short DML_OPERATOR_TYPE name -> (family module basename, desc class name).

The family is also each desc class's ``family`` and the module of the same basename in
``reference/``, ``cpu/``, ``cuda/`` and ``ops/``; its ``OPERATORS`` table maps the
operator name to the backend's function."""

GENERIC_FAMILIES: tuple[str, ...] = (
    "elementwise",
    "data_movement",
    "pooling",
    "reduction",
    "resampling",
    "roi",
    "convolution",
    "matrix",
    "normalization",
    "recurrent",
    "training",
    "quantized",
    "random",
)
"""Families whose operators keep their generic (catalogue-made) descs: each module's
``claim(name)`` gives the family and backends of the operators it implements."""


def operator_name(operator_type: str) -> str:
    """``"DML_OPERATOR_SLICE1"`` or ``"SLICE1"`` -> ``"SLICE1"`` (case-sensitive, as DxDispatch).

    ArgumentTypeError unless ``operator_type`` is a string.
    """
    if not isinstance(operator_type, str):
        raise ArgumentTypeError(
            f"operator_type must be a string such as 'DML_OPERATOR_SLICE1' or 'SLICE1'; "
            f"got {type(operator_type).__name__} {operator_type!r}"
        )
    return operator_type.removeprefix("DML_OPERATOR_")


def desc_class(operator_type: str) -> type[OperatorDesc]:
    """The desc class of an operator type.

    A hand-written class (``REGISTRY``) where there is one, else the generic desc made
    from the operator's catalogue row (:mod:`.generic`). UnsupportedError for names that
    are no DML_OPERATOR_TYPE (spelled as DxDispatch spells them: exact case).
    """
    name = operator_name(operator_type)
    entry = REGISTRY.get(name)
    if entry is None:
        from .generic import generic_desc_class

        try:
            return generic_desc_class(name)
        except KeyError:
            raise UnsupportedError(
                f"operator type '{operator_type}' is not a DML_OPERATOR_TYPE known to dmlops "
                "(DirectML.h through DML_FEATURE_LEVEL_6_4; `dmlops list` shows them)"
            ) from None
    module = importlib.import_module(f"{__name__}.{entry[0]}")
    cls: type[OperatorDesc] = getattr(module, entry[1])
    return cls


def desc_from_json(operator_type: str, desc: Mapping[str, Any], *, require_counts: bool = False) -> OperatorDesc:
    """Build a desc from a DxDispatch-shaped dict.

    Parameters
    ----------
    operator_type : str
        ``"DML_OPERATOR_SLICE1"`` or ``"SLICE1"``.
    desc : mapping
        The desc object: DML member names, tensor descs as ``{"DataType", "Sizes", ...}``,
        enums as full or short names. Count members (``DimensionCount``) are checked
        against the array lengths when present.
    require_counts : bool
        Require count members, as DxDispatch's parser does.
    """
    return desc_class(operator_type).from_dml_dict(desc, require_counts=require_counts)


__all__ = [
    "GENERIC_FAMILIES",
    "REGISTRY",
    "OperatorDesc",
    "TensorSupport",
    "desc_class",
    "desc_from_json",
    "operator_name",
]
