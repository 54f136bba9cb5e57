"""RESAMPLE_GRAD1 on the GPU as a gather (no atomics; deterministic).

Each OutputGradient element sums, over the separable per-axis CSR lists of the forward
outputs that read it, weight * InputGradient (float32 for FLOAT16, rounded once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..descs.resample_grad1 import ResampleGrad1Desc
from ..enums import FeatureLevel
from ._copy import C_TYPES, PlanCache, grid_for, index_type
from ._resample import resample_params, transpose_tables
from ._runtime import element_strides, get_kernel

_PLANS = PlanCache()
BLOCK = 256


def run(
    desc: ResampleGrad1Desc,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Launch RESAMPLE_GRAD1 on device views (see :func:`dmlops.cuda.execute`)."""
    dy = inputs["InputGradientTensor"]
    dx = outputs["OutputGradientTensor"]
    gs, ds = element_strides(dy), element_strides(dx)
    key = (id(desc), gs, ds)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        single = dy.dtype != np.float64  # FLOAT16/FLOAT32 accumulate in float32
        tables, offsets, identity, longest = transpose_tables(desc, np.float32 if single else np.float64)
        p, use32 = resample_params(dx.shape, dy.shape, gs, ds, offsets, identity)
        w = "float" if single else "double"
        t, it = C_TYPES[dy.dtype], index_type(use32)
        width = max(longest[2], longest[3])
        if identity & 3 == 3 and width <= 8:
            # Only the last two (padded) axes resample: the unrolled kernel (all loads in flight).
            lanes = 2 if width <= 2 else (4 if width <= 4 else 8)
            fn = get_kernel("resample.cu", f"resample_grad_hw<{t}, {w}, {it}, {lanes}>")
        else:
            fn = get_kernel("resample.cu", f"resample_grad<{t}, {w}, {it}>")
        plan = _PLANS.put(key, (desc, fn, grid_for(dx.size, BLOCK), tables, p))
    _, fn, blocks, tables, p = plan
    fn((blocks,), (BLOCK,), (dy, dx, *tables, p))
