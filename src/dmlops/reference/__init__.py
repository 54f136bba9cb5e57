"""The NumPy reference backend: the executable spec.

Each family module (``data_movement``, ``pooling``, ``resampling``, ``roi``: the
desc's ``family``) maps operator names to functions in its ``OPERATORS`` table; each is
``compute_<op>(desc, inputs, *, feature_level, strict)``, taking logical input arrays
keyed by DML member name and returning the outputs the same way. Arithmetic is done in
float64 and rounded once when stored; data movement is bit-exact.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from .._numpy_io import bind_all, store
from ..descs._base import OperatorDesc
from ..enums import FeatureLevel

SCRATCH_BYTES_PER_OUTPUT_ELEMENT = 8
"""Arithmetic results are float64 arrays before the single rounding: 8 bytes an output element."""


def availability() -> str | None:
    """The reference backend needs only NumPy: always available."""
    return None


def execute(
    desc: OperatorDesc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any] | None,
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> dict[str, Any]:
    """Bind arrays, run the operator's ``compute`` and store the rounded results."""
    ins, outs = bind_all(desc, inputs, outputs, scratch_bytes_per_element=SCRATCH_BYTES_PER_OUTPUT_ELEMENT)
    compute = importlib.import_module(f"{__name__}.{desc.family}").OPERATORS[desc.operator_type.name]
    results = compute(desc, ins, feature_level=feature_level, strict=strict)
    returned = {}
    for member, (target, ret) in outs.items():
        store(results[member], target)
        returned[member] = ret
    return returned
