"""SLICE1 on the GPU: one strided copy (bit-exact)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..descs.slice1 import Slice1Desc
from ..enums import FeatureLevel
from ._copy import CopyPlan, PlanCache
from ._plan import copy_layout
from ._runtime import element_strides

_PLANS = PlanCache()


def plan_for(desc: Slice1Desc, in_strides: tuple[int, ...], out_strides: tuple[int, ...], itemsize: int) -> CopyPlan:
    """``Output[o] = Input[CopyStart + InputWindowStrides * o]`` as a collapsed strided copy.

    Source element strides are ``InputWindowStrides[i] * input_stride[i]`` (signed), the
    source base is ``sum(CopyStart[i] * input_stride[i])``.
    """
    key = (id(desc), in_strides, out_strides)
    plan = _PLANS.get(key)
    if plan is None or plan.desc is not desc:
        start = desc.copy_start()
        src = [w * s for w, s in zip(desc.input_window_strides, in_strides)]
        base = sum(c * s for c, s in zip(start, in_strides))
        layout = copy_layout(desc.output_tensor.sizes, src, out_strides, src_base=base)
        plan = _PLANS.put(key, CopyPlan(desc, layout, itemsize))
    return plan


def run(
    desc: Slice1Desc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch SLICE1 on device views (see :func:`dmlops.cuda.execute`)."""
    x = inputs["InputTensor"]
    y = outputs["OutputTensor"]
    plan = plan_for(desc, element_strides(x), element_strides(y), x.itemsize)
    plan.launch(x, y)
