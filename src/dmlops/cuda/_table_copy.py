"""Separable gathers on the GPU: PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1) in one pass.

:mod:`dmlops.descs._separable_gathers` says, per output axis, which input coordinates each
position reads (or that it pads); here those become one table of input element offsets
(32-bit where every offset fits), uploaded once per desc and layout, and
``kernels/table_copy.cu`` writes every output element once, row by row. The copy program of
the same operators (``_copy_programs``) wrote PADDING as an interior copy plus a fill or
copy per border slab, and DEPTH_TO_SPACE with its block column innermost (2 elements); run
23 measured them at 46 % and 42-84 % of the copy rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..descs._separable_gathers import separable_gather
from ..enums import FeatureLevel
from ._copy import STORAGE, PlanCache
from ._plan import max_abs_offset
from ._runtime import PackedLaunch, cupy_module, element_strides, get_kernel, padded, params, sm_count

BLOCK = 256
BLOCKS_PER_SM = 64
"""Grid cap per multiprocessor: more rows loop (grid-stride). Run 32 (H200, PADDING and
DEPTH_TO_SPACE on 256 MiB): 64 per SM with E = 8 gave 83 / 82 % of copy for FLOAT32,
against 80 / 81 % with a block per row group and 72 / 73 % with E = 4; 16 per SM was
slower."""
MAX_DIMS = 8
_INT32 = np.iinfo(np.int32)


ELEMENTS_PER_THREAD = 8
"""The kernel's E: elements of a row a thread takes per pass (bytes in flight per thread;
run 32: 8 against 4 and 16, see BLOCKS_PER_SM)."""


CONSECUTIVE_MAX_ITEMSIZE = 8
"""Element sizes up to this take E adjacent elements a thread, stored as one vector where
aligned (the kernel's CONSEC); wider ones take E elements a warp's width apart. Run 43
(H200, 256 MiB): adjacent elements with vector stores took PADDING / DEPTH_TO_SPACE from
83.3 / 81.5 % of copy to 90.5 / 94.5 % in FLOAT32, from 47.6 / 48.6 % to 61.0 / 64.0 % in
FLOAT16 and from 26 to 31-32 % in INT8: every element size, so every size takes them."""


def threads_per_row(inner: int) -> int:
    """A power of two covering the innermost size at E elements a thread, at most the block."""
    per = -(-inner // ELEMENTS_PER_THREAD)
    return min(BLOCK, 1 << max(0, per - 1).bit_length())


class TablePlan:
    """The table and launch of one desc for one pair of input and output strides."""

    def __init__(self, desc: Any, x: Any, y: Any) -> None:
        self.desc = desc
        gather = separable_gather(desc)
        offsets = gather.element_offsets(element_strides(x))
        reach = sum(int(np.abs(o).max(initial=0)) for o in offsets)
        span = max_abs_offset(y.shape, element_strides(y))
        wide = max(reach, span, y.size) > _INT32.max  # offsets, rows and elements as I
        itype, dtype = ("long long", np.int64) if wide else ("int", np.int32)
        pad = np.iinfo(dtype).min
        host = np.concatenate([np.where(p, pad, o).astype(dtype) for o, p in zip(offsets, gather.padding)])
        starts = np.cumsum([0, *(len(o) for o in offsets[:-1])])
        sizes = tuple(int(s) for s in y.shape)
        fill = 0
        if gather.fill is not None:
            bits = np.asarray(gather.fill, dtype=y.dtype).reshape(1).view(f"u{y.dtype.itemsize}")[0]
            fill = int(np.int64(np.uint64(bits)))  # the low bytes carry the value
        tpr = threads_per_row(sizes[-1])
        rows = math.prod(sizes[:-1])
        groups = BLOCK // tpr
        self.table = cupy_module().asarray(host)
        p = params(
            ("rows", "i8", rows),
            ("inner", "i8", sizes[-1]),
            ("size", "i8", padded(sizes, MAX_DIMS, 1)),
            ("ostride", "i8", padded(element_strides(y), MAX_DIMS)),
            ("toff", "i8", padded(starts, MAX_DIMS)),
            ("fill", "i8", fill),
            ("tpr_shift", "i8", tpr.bit_length() - 1),
        )
        e = ELEMENTS_PER_THREAD
        consec = y.dtype.itemsize <= CONSECUTIVE_MAX_ITEMSIZE and element_strides(y)[-1] == 1
        head = f"table_copy<{STORAGE[y.dtype.itemsize]}, {len(sizes)}, {itype}, {e}"
        fn = get_kernel("table_copy.cu", f"{head}, {'true' if consec else 'false'}>")
        grid = 0 if 0 in sizes else max(1, min(BLOCKS_PER_SM * sm_count(), -(-rows // groups)))
        self.launch = PackedLaunch(fn, grid, BLOCK, 2, p, fixed=[self.table])


_PLANS = PlanCache()


def run_separable_gather(
    desc: Any,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, Any],
    *,
    feature_level: FeatureLevel,
    strict: bool,
) -> None:
    """Run a separable-gather operator on device views (see :func:`dmlops.cuda.execute`)."""
    x, y = inputs["InputTensor"], outputs["OutputTensor"]
    if y.ndim > MAX_DIMS:
        raise ValueError(f"{desc.dml_name}: more than {MAX_DIMS} dimensions")  # validation allows at most 8
    key = (id(desc), element_strides(x), element_strides(y))
    plan = _PLANS.get(key)
    if plan is None or plan.desc is not desc:
        plan = _PLANS.put(key, TablePlan(desc, x, y))
    plan.launch(x.data.ptr, y.data.ptr)


__all__ = ["run_separable_gather", "threads_per_row"]
