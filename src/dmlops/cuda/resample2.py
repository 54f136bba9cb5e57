"""RESAMPLE2 on the GPU: one thread per output element over host-built per-axis taps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..descs.resample2 import Resample2Desc
from ..enums import FeatureLevel, InterpolationMode
from ._copy import C_TYPES, PlanCache, grid_for, index_type
from ._resample import forward_tables, resample_params
from ._runtime import PackedLaunch, element_strides, get_kernel

_PLANS = PlanCache()
BLOCK = 256


def run(
    desc: Resample2Desc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch RESAMPLE2 on device views (see :func:`dmlops.cuda.execute`)."""
    x = inputs["InputTensor"]
    y = outputs["OutputTensor"]
    xs, ys = element_strides(x), element_strides(y)
    key = (id(desc), xs, ys)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        tables, offsets = forward_tables(desc)
        p, use32 = resample_params(y.shape, x.shape, xs, ys, offsets)
        linear = desc.interpolation_mode is InterpolationMode.LINEAR
        fn = get_kernel(
            "resample.cu", f"resample_fwd<{C_TYPES[x.dtype]}, {'true' if linear else 'false'}, {index_type(use32)}>"
        )
        plan = _PLANS.put(key, (desc, PackedLaunch(fn, grid_for(y.size, BLOCK), BLOCK, 2, p, fixed=tables)))
    plan[1](x.data.ptr, y.data.ptr)
