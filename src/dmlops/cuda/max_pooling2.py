"""MAX_POOLING2 on the GPU: one thread per output element (values and indices bit-exact)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..descs.max_pooling2 import MaxPooling2Desc
from ..enums import FeatureLevel
from ._copy import C_TYPES, PlanCache, grid_for, index_type
from ._pooling import pool_params
from ._runtime import PackedLaunch, element_strides, get_kernel

_PLANS = PlanCache()
BLOCK = 256


def run(
    desc: MaxPooling2Desc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch MAX_POOLING2 on device views (see :func:`dmlops.cuda.execute`)."""
    x = inputs["InputTensor"]
    y = outputs["OutputTensor"]
    z = outputs.get("OutputIndicesTensor")
    xs, ys = element_strides(x), element_strides(y)
    zs = element_strides(z) if z is not None else ys
    key = (id(desc), xs, ys, zs)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        count = y.size
        p, use32 = pool_params(desc.window, x.shape, y.shape, xs, ys, zs, count)
        idx_c = "NoIndexOut" if z is None else {"uint32": "u32", "uint64": "u64"}[str(z.dtype)]
        fn = get_kernel("pooling.cu", f"max_pool<{C_TYPES[x.dtype]}, {idx_c}, {index_type(use32)}>")
        plan = _PLANS.put(key, (desc, PackedLaunch(fn, grid_for(count, BLOCK), BLOCK, 3, p)))
    plan[1](x.data.ptr, y.data.ptr, (z if z is not None else y).data.ptr)
