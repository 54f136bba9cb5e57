"""Separable gathers on the GPU: PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1), TILE in one pass.

:mod:`dmlops.descs._separable_gathers` says, per output axis, which input coordinates each
position reads (or that it pads); here those become one table of input element offsets
(32-bit where every offset fits), uploaded once per desc and layout, and
``kernels/table_copy.cu`` writes every output element once, row by row. The copy program of
the same operators (``_copy_programs``) wrote PADDING as an interior copy plus a fill or
copy per border slab, and DEPTH_TO_SPACE with its block column innermost (2 elements); run
23 measured them at 46 % and 42-84 % of the copy rate. Where groups of adjacent outputs read
adjacent inputs from aligned offsets (:func:`widened`), the same kernel moves the group as one
wider element (FLOAT16 PADDING with even borders and TILE of even rows as 4-byte elements), for
calls whose addresses are aligned to it. The settings below were timed side by side by
``bench/gpu.py``'s datamove section (its TABLE_VARIANTS).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

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
WIDEN_BYTES = 8
"""Run a gather on elements of up to this many bytes where :func:`widened` allows (and the
call's addresses are aligned to it): FLOAT16 PADDING with even borders as 4-byte elements,
FLOAT16 TILE of rows of a multiple of 4 as 8-byte ones (0: never). Run G1 (H200): FLOAT16
PADDING 80.3 -> 89.9 % of copy, TILE 75.7 -> 82.4 % at 4 bytes, 85.9 % at 8; INT8 PADDING
55.6 -> 75.2 %. G3, at 8: PADDING 81.6 -> 91.7 %, TILE 76.0 -> 86.3 %."""
WIDEN_ITEMS_BELOW = 4
"""Only elements narrower than this many bytes are widened. Run G (H200): FLOAT32 PADDING as
8-byte elements 93.8 against 95.3 % of copy, TILE 89.6 against 88.6 % (noise)."""
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


@dataclass(frozen=True)
class Tables:
    """A separable gather as the kernel reads it.

    Per output axis, input element offsets and padding marks; the output's sizes and element
    strides; elements of ``itemsize`` bytes.
    """

    offsets: tuple[NDArray[np.int64], ...]
    marks: tuple[NDArray[np.bool_], ...]
    sizes: tuple[int, ...]
    ostrides: tuple[int, ...]
    itemsize: int
    fill_bits: int  # the fill value's bits (the low ``itemsize`` bytes)


def gather_tables(
    desc: Any, xstrides: tuple[int, ...], shape: tuple[int, ...], ystrides: tuple[int, ...], dtype: Any
) -> Tables:
    """The tables of ``desc``'s gather for input and output element strides, output elements of ``dtype``."""
    gather = separable_gather(desc)
    itemsize = np.dtype(dtype).itemsize
    fill = 0
    if gather.fill is not None:
        fill = int(np.asarray(gather.fill, dtype=dtype).reshape(1).view(f"u{itemsize}")[0])
    offsets = gather.element_offsets(xstrides)
    return Tables(tuple(offsets), tuple(gather.padding), tuple(int(s) for s in shape), tuple(ystrides), itemsize, fill)


def widened(t: Tables, max_bytes: int) -> tuple[int, Tables] | None:
    """The same gather on elements of ``f`` times the bytes, for the largest ``f`` that fits.

    Valid where the output's rows are contiguous and of a multiple of ``f`` elements, its
    other strides multiples of ``f``, every outer axis's offsets multiples of ``f``, and the
    innermost table is made of groups of ``f`` outputs that read ``f`` adjacent inputs from a
    multiple of ``f`` (or pad all together): then element ``j`` of the wide gather is the
    ``f`` narrow elements ``f j ... f j + f - 1``, in memory order, and with the input's and
    output's addresses aligned to the wide size (the caller checks the pointers) every wide
    element is one aligned load and store. The fill is the narrow fill repeated. None where
    no ``f >= 2`` with ``f * itemsize <= max_bytes`` applies.
    """
    if not t.sizes or t.ostrides[-1] != 1:
        return None
    most = 1
    while 2 * most * t.itemsize <= max_bytes:
        most *= 2
    for f in (1 << k for k in range(most.bit_length() - 1, 0, -1)):
        if t.sizes[-1] % f or any(s % f for s in t.ostrides[:-1]):
            continue
        if any((o[~m] % f).any() for o, m in zip(t.offsets[:-1], t.marks[:-1])):
            continue
        inner, pads = t.offsets[-1].reshape(-1, f), t.marks[-1].reshape(-1, f)
        lead, lead_pads = inner[:, 0], pads[:, 0]
        runs = inner == lead[:, None] + np.arange(f)
        if not ((pads == lead_pads[:, None]).all() and (lead_pads | ((lead % f == 0) & runs.all(axis=1))).all()):
            continue
        if lead_pads.any() and not (lead[~lead_pads] == 0).any():
            continue  # a padding entry loads the row's element 0 (then drops it): f inputs must be there
        bits = sum(t.fill_bits << (8 * t.itemsize * k) for k in range(f))
        return f, Tables(
            (*(o // f for o in t.offsets[:-1]), lead // f),
            (*t.marks[:-1], lead_pads),
            (*t.sizes[:-1], t.sizes[-1] // f),
            (*(s // f for s in t.ostrides[:-1]), 1),
            t.itemsize * f,
            bits,
        )
    return None


def _table_launch(t: Tables, long: bool) -> PackedLaunch:
    """The kernel launch (and its uploaded table) of ``t``; ``long``: 64-bit offsets and rows."""
    itype, dtype = ("long long", np.int64) if long else ("int", np.int32)
    pad = np.iinfo(dtype).min
    align = _TABLE_ALIGN // np.dtype(dtype).itemsize
    parts, starts, at = [], [], 0
    for o, marks in zip(t.offsets, t.marks):
        part = np.where(marks, pad, o).astype(dtype)
        tail = -len(part) % align
        parts.append(np.concatenate([part, np.zeros(tail, dtype=dtype)]) if tail else part)
        starts.append(at)
        at += len(part) + tail
    host = np.concatenate(parts)
    sizes, itemsize = t.sizes, t.itemsize
    e = elements_per_thread(itemsize)
    v = group_size(itemsize, t.ostrides[-1] == 1)
    tpr = threads_per_row(sizes[-1], e)
    rows = math.prod(sizes[:-1])
    groups = BLOCK // tpr
    magic = [division_magic(s) if not long and s > 0 else (0, 0) for s in sizes[:-1]]
    fill = int(np.int64(np.uint64(t.fill_bits)))  # the low bytes carry the value
    p = params(
        ("rows", "i8", rows),
        ("inner", "i8", sizes[-1]),
        ("size", "i8", padded(sizes, MAX_DIMS, 1)),
        ("ostride", "i8", padded(t.ostrides, MAX_DIMS)),
        ("toff", "i8", padded(starts, MAX_DIMS)),
        ("magic", "i8", padded([m for m, _ in magic], MAX_DIMS)),
        ("mshift", "i8", padded([s for _, s in magic], MAX_DIMS)),
        ("fill", "i8", fill),
        ("tpr_shift", "i8", tpr.bit_length() - 1),
    )
    pads = not PAD_FREE or any(bool(m.any()) for m in t.marks)
    head = f"table_copy<{STORAGE[itemsize]}, {len(sizes)}, {itype}, {e}, {v}"
    fn = get_kernel("table_copy.cu", f"{head}, {'true' if pads else 'false'}>")
    per_sm = NARROW_BLOCKS_PER_SM if itemsize == 1 else BLOCKS_PER_SM
    grid = 0 if 0 in sizes else max(1, min(per_sm * sm_count(), -(-rows // groups)))
    return PackedLaunch(fn, grid, BLOCK, 2, p, fixed=[cupy_module().asarray(host)])


class TablePlan:
    """The tables and launches of one desc for one pair of input and output strides.

    ``launch`` runs the gather on the desc's own elements (built at the first call that
    needs it); ``wide_launch``, where :func:`widened` applies, on elements ``wide_bytes``
    wide, for calls whose input and output addresses are multiples of ``wide_bytes``.
    """

    def __init__(self, desc: Any, x: Any, y: Any) -> None:
        self.desc = desc
        self.tables = gather_tables(desc, element_strides(x), tuple(y.shape), element_strides(y), y.dtype)
        reach = sum(int(np.abs(o).max(initial=0)) for o in self.tables.offsets)
        span = max_abs_offset(y.shape, element_strides(y))
        self.long = max(reach, span, y.size) > _INT32.max  # offsets, rows and elements as I: 64-bit
        self._launch: PackedLaunch | None = None
        self.wide_launch: PackedLaunch | None = None
        self.wide_bytes = 0
        found = None
        if WIDEN_BYTES and self.tables.itemsize < WIDEN_ITEMS_BELOW and 0 not in self.tables.sizes:
            found = widened(self.tables, WIDEN_BYTES)
        if found is not None:
            self.wide_launch = _table_launch(found[1], self.long)
            self.wide_bytes = found[1].itemsize

    @property
    def launch(self) -> PackedLaunch:
        if self._launch is None:
            self._launch = _table_launch(self.tables, self.long)
        return self._launch

    def pick(self, xp: int, yp: int) -> PackedLaunch:
        """The launch for input and output addresses ``xp`` and ``yp``."""
        if self.wide_launch is not None and not (xp | yp) % self.wide_bytes:
            return self.wide_launch
        return self.launch


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
    xp, yp = x.data.ptr, y.data.ptr
    plan.pick(xp, yp)(xp, yp)


__all__ = [
    "Tables",
    "division_magic",
    "elements_per_thread",
    "gather_tables",
    "group_size",
    "run_separable_gather",
    "threads_per_row",
    "widened",
]
