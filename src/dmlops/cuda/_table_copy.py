"""Separable gathers on the GPU: PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1), TILE in one pass.

:mod:`dmlops.descs._separable_gathers` says, per output axis, which input coordinates each
position reads (or that it pads); here those become one table of input element offsets
(32-bit where every offset fits), uploaded once per desc and layout, and
``kernels/table_copy.cu`` writes every output element once, row by row. The copy program of
the same operators (``_copy_programs``) wrote PADDING as an interior copy plus a fill or
copy per border slab, and DEPTH_TO_SPACE with its block column innermost (2 elements); run
23 measured them at 46 % and 42-84 % of the copy rate. The settings below were timed side by
side by ``bench/gpu.py``'s datamove section (its TABLE_VARIANTS).
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
BLOCKS_PER_SM = 128
"""Grid cap per multiprocessor for elements of 2 bytes or more: more rows loop (grid-stride).
Run 32 (H200, PADDING and DEPTH_TO_SPACE on 256 MiB): 64 per SM with E = 8 gave 83 / 82 % of
copy for FLOAT32, against 80 / 81 % with a block per row group and 72 / 73 % with E = 4; 16
per SM was slower. Run A2 (H200, the present kernel): 128 per SM 1-2 % faster than 64 in
FLOAT32 and FLOAT16, 16 per SM 5-6 % slower. Run 52 (H100): 128 against 64 per SM, FLOAT16
PADDING 90.4 / 89.8 %, DEPTH_TO_SPACE 93.2 / 92.4 %, TILE 85.8 / 84.4 %."""
NARROW_BLOCKS_PER_SM = 64
"""The same for 1-byte elements: 128 per SM was about 20 % slower in INT8 (runs A2 and 52),
16 per SM 3-5 % faster on the H200 and 3-4 % slower on the H100."""
MAX_DIMS = 8
_INT32 = np.iinfo(np.int32)
_TABLE_ALIGN = 16
"""Each axis's table starts at a multiple of this many bytes: the kernel reads a group's
entries as 16-byte words."""

THREAD_BYTES = 16
"""Bytes of its row a thread takes per pass (the kernel's E = THREAD_BYTES / element size,
at least MIN_ELEMENTS): E = 8 for FLOAT16, 16 for INT8. Run A2 (H200): 32 bytes (E = 16 for
FLOAT16, 48 registers a thread against 32) ran 2-4 % slower in FLOAT16 and 14-19 % in INT8
(E = 32); 8 bytes (E = 8 for INT8) 7 % slower on PADDING, 7 % faster on DEPTH_TO_SPACE."""
MIN_ELEMENTS = 8
"""The least E (run 32: FLOAT32 with 8 against 4 and 16)."""
VECTOR_BYTES = 16
"""Bytes of a group of adjacent elements (the kernel's V), stored as one 16-byte word where
aligned; a thread's groups are a row's width of threads apart, so a warp's groups are
adjacent. Used where the output's innermost stride is 1; elsewhere V = 1 (scalar stores).
Run 43 (H200): adjacent elements with vector stores took PADDING / DEPTH_TO_SPACE from 83 /
82 % of copy to 91 / 95 % in FLOAT32. Run A2: 8-byte groups were 1 % slower in FLOAT16 and
5-8 % faster in INT8; run A1 (E = 16 for FLOAT16, entries read per row): a thread's 16
elements as one group were 3-8 % slower than two groups of 8."""
PAD_FREE = True
"""Where no table entry pads (DEPTH_TO_SPACE, SPACE_TO_DEPTH, PADDING without padding), run
the kernel without the comparisons with PAD (its PADDED = false; run A2: within noise)."""
TILE_AS_GATHER = True
"""Run TILE from its tables (``cuda/data_movement.py``'s ``run_tile``; False: its copy program,
which bench/gpu.py times as a variant). Run A3 (H200): the copy program ran at 75.8 / 70.8 %
of copy in FLOAT32 / FLOAT16."""


def elements_per_thread(itemsize: int) -> int:
    """The kernel's E for elements of ``itemsize`` bytes."""
    return min(32, max(MIN_ELEMENTS, THREAD_BYTES // itemsize))  # the kernel keeps a bit per element


def group_size(itemsize: int, contiguous: bool) -> int:
    """The kernel's V: adjacent elements per group (1 unless the output's rows are contiguous)."""
    e = elements_per_thread(itemsize)
    if not contiguous:
        return 1
    v = max(1, min(e, VECTOR_BYTES // itemsize))
    while e % v:  # whole groups per thread
        v //= 2
    return v


def threads_per_row(inner: int, elements: int = MIN_ELEMENTS) -> int:
    """A power of two covering the innermost size at ``elements`` a thread, at most the block."""
    per = -(-inner // elements)
    return min(BLOCK, 1 << max(0, per - 1).bit_length())


def division_magic(d: int) -> tuple[int, int]:
    """``(m, s)`` with ``n // d == (mulhi32(n, m) + n) >> s`` for ``0 <= n < 2**31`` (the kernel's Div<int>).

    ``s = ceil(log2 d)`` and ``m = floor(2**32 (2**s - d) / d) + 1`` (division by invariant
    integers, the variant that adds n back; the sum stays below 2**32 because
    ``mulhi32(n, m) <= n``).
    """
    if not 1 <= d < 2**31:
        raise ValueError(f"divisor {d} out of range")
    s = (d - 1).bit_length()
    m = ((1 << 32) * ((1 << s) - d)) // d + 1
    return m, s


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
        align = _TABLE_ALIGN // np.dtype(dtype).itemsize
        parts, starts, at = [], [], 0
        for o, marks in zip(offsets, gather.padding):
            part = np.where(marks, pad, o).astype(dtype)
            tail = -len(part) % align
            parts.append(np.concatenate([part, np.zeros(tail, dtype=dtype)]) if tail else part)
            starts.append(at)
            at += len(part) + tail
        host = np.concatenate(parts)
        sizes = tuple(int(s) for s in y.shape)
        fill = 0
        if gather.fill is not None:
            bits = np.asarray(gather.fill, dtype=y.dtype).reshape(1).view(f"u{y.dtype.itemsize}")[0]
            fill = int(np.int64(np.uint64(bits)))  # the low bytes carry the value
        itemsize = y.dtype.itemsize
        e = elements_per_thread(itemsize)
        v = group_size(itemsize, element_strides(y)[-1] == 1)
        tpr = threads_per_row(sizes[-1], e)
        rows = math.prod(sizes[:-1])
        groups = BLOCK // tpr
        magic = [division_magic(s) if not wide and s > 0 else (0, 0) for s in sizes[:-1]]
        self.table = cupy_module().asarray(host)
        p = params(
            ("rows", "i8", rows),
            ("inner", "i8", sizes[-1]),
            ("size", "i8", padded(sizes, MAX_DIMS, 1)),
            ("ostride", "i8", padded(element_strides(y), MAX_DIMS)),
            ("toff", "i8", padded(starts, MAX_DIMS)),
            ("magic", "i8", padded([m for m, _ in magic], MAX_DIMS)),
            ("mshift", "i8", padded([s for _, s in magic], MAX_DIMS)),
            ("fill", "i8", fill),
            ("tpr_shift", "i8", tpr.bit_length() - 1),
        )
        pads = not PAD_FREE or any(bool(m.any()) for m in gather.padding)
        head = f"table_copy<{STORAGE[itemsize]}, {len(sizes)}, {itype}, {e}, {v}"
        fn = get_kernel("table_copy.cu", f"{head}, {'true' if pads else 'false'}>")
        per_sm = NARROW_BLOCKS_PER_SM if itemsize == 1 else BLOCKS_PER_SM
        grid = 0 if 0 in sizes else max(1, min(per_sm * sm_count(), -(-rows // groups)))
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


__all__ = ["division_magic", "elements_per_thread", "group_size", "run_separable_gather", "threads_per_row"]
