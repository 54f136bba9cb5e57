"""The reduction family on the GPU: REDUCE (every function), ARGMAX, ARGMIN, CUMULATIVE_*, TOP_K, TOP_K1.

REDUCE / ARGMAX / ARGMIN (kernels/reduce.cu)
--------------------------------------------
The kept axes and the reduced axes are collapsed separately (:func:`~._plan.collapse`):
M output rows, each reducing R elements at one input stride ``rs`` (row-major over the
reduced axes in axis order, the index ARG* count). Where the reduced axes do not collapse
to one stride, a CuPy copy moves them, contiguous, behind the kept ones (the reference's
``_to_end``); so does a large reduction where neither the reduced stride nor the innermost
kept stride is 1 (no coalesced form). Then

* a unit reduced stride of 64 elements or more (or no unit kept stride): ``reduce_rows``,
  a block per row (16-byte vector loads where the rows are aligned);
* otherwise ``reduce_cols``, a thread per row (coalesced along a unit kept stride).

Where the rows are too few to fill the GPU, each row is split over several blocks
(``reduce_rows``) or threads (``reduce_cols``) writing partial states, which
``reduce_combine`` folds in split order: no atomics, identical results on every run.

Numerics (kernels/reduce.cu's header): integer results and MAX / MIN / ARG* are the
reference's bit for bit; float sums and products are float64 accumulations rounded once,
as the reference's, in another order of the float64 additions (so they differ from the
reference by at most the float64 rounding of the sum before the final rounding).

CUMULATIVE_SUMMATION / CUMULATIVE_PRODUCT (kernels/scan.cu)
-----------------------------------------------------------
Sequential per line in the input type, bit for bit: ``scan_tiles`` (a warp per
``SCAN_LINES`` lines, chunks of ``SCAN_WIDTH`` elements a line staged in shared memory)
where the axis has a unit stride, else ``scan_lines`` (a thread per line). The output may
be the input's own memory.

TOP_K / TOP_K1 (kernels/top_k.cu)
---------------------------------
A warp per line: ``top_k_warp`` (per-lane sorted register lists, then a warp merge) for
types of up to 4 bytes and K <= 32, else ``top_k_select``. Values and indices are bit for
bit the reference's (equal values by ascending index, NaN the largest value). A large
input whose axis stride is not 1 is first copied with the axis innermost (CuPy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..descs import reduction as rules
from ..enums import FeatureLevel
from ..errors import UnsupportedError
from ._copy import C_TYPES, PlanCache
from ._plan import collapse
from ._runtime import PackedLaunch, cupy_module, element_strides, get_kernel, padded, params, sm_count

MAX_DIMS = 8
"""Kept dimensions (lines' dimensions) the parameter structs hold (the largest DimensionCount)."""
BLOCK = 256
FUNCTION_CODES = {
    "SUM": 0,
    "AVERAGE": 1,
    "L1": 2,
    "L2": 3,
    "SUM_SQUARE": 4,
    "LOG_SUM": 5,
    "LOG_SUM_EXP": 6,
    "MULTIPLY": 7,
    "MAX": 10,
    "MIN": 11,
    "ARGMAX": 12,
    "ARGMIN": 13,
}
"""REDUCE's functions -> reduce.cu's F (ARG* with AxisDirection DECREASING add 2)."""
INTEGER_FUNCTIONS = frozenset({"SUM", "MULTIPLY", "MAX", "MIN", "ARGMAX", "ARGMIN"})
"""The functions the reference runs on integer tensors."""
ROW_MIN = 64
"""Rows of a unit reduced stride at least this long take a block each (``reduce_rows``)."""
COPY_MIN = 1 << 16
"""Elements above which a layout without a unit stride is first copied (CuPy) into a coalesced one."""
MAX_SPLITS = 65535
"""Largest blockIdx.y."""
STATE_BYTES = 16
"""Upper bound of sizeof(State) in reduce.cu (a (key, index) pair)."""
SCAN_LINES = 16
"""Lines a ``scan_tiles`` warp scans (8, 16 or 32)."""
SCAN_WIDTH = 64
"""Elements of each line a ``scan_tiles`` warp stages a chunk (types of up to 4 bytes; 32 for 8-byte types)."""
TOP_K_WARP_MAX = 32
"""Largest K of ``top_k_warp``."""

_PLANS = PlanCache()


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


# -- REDUCE, ARGMAX, ARGMIN ----------------------------------------------------------


@dataclass
class _ReducePlan:
    desc: Any
    perm: tuple[int, ...] | None  # copy x.transpose(perm) into a contiguous temporary first
    launches: tuple[PackedLaunch, ...]
    ws_bytes: int


def _reduce_geometry(
    sizes: Sequence[int], xs: Sequence[int], os: Sequence[int], axes: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(kept sizes, their x and output strides, reduced sizes, their x strides), collapsed."""
    kept = [i for i in range(len(sizes)) if i not in axes]
    k_sizes, (k_x, k_o) = collapse([sizes[i] for i in kept], ([xs[i] for i in kept], [os[i] for i in kept]))
    r_sizes, (r_x,) = collapse([sizes[a] for a in axes], ([xs[a] for a in axes],))
    return k_sizes, k_x, k_o, r_sizes, r_x


def _contiguous_strides(sizes: Sequence[int]) -> list[int]:
    strides, pitch = [], 1
    for n in reversed(sizes):
        strides.append(pitch)
        pitch *= int(n)
    return strides[::-1]


def _reduce_plan(desc: Any, x: Any, out: Any, f: int, xs: tuple[int, ...], os: tuple[int, ...]) -> _ReducePlan:
    sizes = tuple(int(n) for n in x.shape)
    axes = rules.reduced_axes(desc)
    k_sizes, k_x, k_o, r_sizes, r_x = _reduce_geometry(sizes, xs, os, axes)
    m = int(np.prod(k_sizes, dtype=np.int64))
    r = int(np.prod(r_sizes, dtype=np.int64))
    rs = r_x[0] if r_x else 0
    unit_k = bool(k_x) and abs(k_x[-1]) == 1
    perm: tuple[int, ...] | None = None
    if len(r_sizes) > 1 or (r > 1 and abs(rs) != 1 and not unit_k and m * r > COPY_MIN):
        # the reference's _to_end, in a contiguous temporary: reduced axes innermost, stride 1
        kept = [i for i in range(len(sizes)) if i not in axes]
        perm = (*kept, *axes)
        moved = [sizes[i] for i in perm]
        moved_os = [os[i] if i not in axes else 0 for i in perm]
        k_sizes, k_x, k_o, r_sizes, r_x = _reduce_geometry(
            moved, _contiguous_strides(moved), moved_os, tuple(range(len(kept), len(sizes)))
        )
        rs = r_x[0] if r_x else 0
        unit_k = bool(k_x) and abs(k_x[-1]) == 1
    t = C_TYPES[x.dtype]
    o = C_TYPES[out.dtype]
    sm = sm_count()
    use_rows = r > 1 and abs(rs) == 1 and (r >= ROW_MIN or not unit_k)
    if use_rows:
        itemsize = x.dtype.itemsize
        vec = 16 // itemsize
        # a fresh temporary (perm) starts 256-byte aligned
        base_aligned = perm is not None or x.data.ptr % 16 == 0
        aligned = rs == 1 and r % vec == 0 and base_aligned and all(s % vec == 0 for s in k_x)
        vec = vec if aligned else 1
        units = -(-r // vec)
        block = min(BLOCK, max(32, _pow2_at_least(-(-units // 4))))
        splits, chunk = 1, r
        target = 4 * sm
        if m < target and units > 8 * block:
            splits = min(-(-target // m), -(-units // (8 * block)), MAX_SPLITS)
            chunk = -(-r // splits)
            chunk = -(-chunk // vec) * vec
            splits = -(-r // chunk)
        fn = get_kernel("reduce.cu", f"reduce_rows<{t}, {o}, {f}, {vec}, {block}>")
        grid: tuple[int, ...] = (min(m, 2**31 - 1), splits)
    else:
        block = BLOCK
        splits, chunk = 1, max(r, 1)
        target = 1024 * sm  # about one wave of resident threads (44 registers: 4 blocks an SM)
        if r >= 64 and 2 * m < target:
            splits = min(-(-target // m), -(-r // 16), MAX_SPLITS)
            chunk = -(-r // splits)
            splits = -(-r // chunk)
        fn = get_kernel("reduce.cu", f"reduce_cols<{t}, {o}, {f}>")
        grid = (min(-(-m // block), 2**31 - 1), splits)
    p = params(
        ("rows", "i8", m),
        ("n", "i8", r),
        ("rs", "i8", rs),
        ("chunk", "i8", chunk),
        ("splits", "i8", splits),
        ("kdims", "i8", len(k_sizes)),
        ("ksize", "i8", padded(k_sizes, MAX_DIMS, 1)),
        ("kx", "i8", padded(k_x, MAX_DIMS)),
        ("ko", "i8", padded(k_o, MAX_DIMS)),
    )
    launches = [PackedLaunch(fn, grid, block, 3, p)]
    if splits > 1:
        combine = get_kernel("reduce.cu", f"reduce_combine<{t}, {o}, {f}>")
        launches.append(PackedLaunch(combine, min(-(-m // BLOCK), 2**31 - 1), BLOCK, 3, p))
    return _ReducePlan(desc, perm, tuple(launches), splits * m * STATE_BYTES if splits > 1 else 0)


def _run_reduction(desc: Any, x: Any, out: Any, f: int) -> None:
    xs, os = element_strides(x), element_strides(out)
    key = (id(desc), xs, os, x.data.ptr % 16)
    plan = _PLANS.get(key)
    if plan is None or plan.desc is not desc:
        plan = _PLANS.put(key, _reduce_plan(desc, x, out, f, xs, os))
    cp = cupy_module()
    src = x if plan.perm is None else cp.ascontiguousarray(x.transpose(plan.perm))
    ws = cp.empty(plan.ws_bytes, dtype=np.uint8) if plan.ws_bytes else None
    ws_ptr = ws.data.ptr if ws is not None else 0
    for launch in plan.launches:
        launch(src.data.ptr, out.data.ptr, ws_ptr)


def run_reduce(
    desc: Any, inputs: Mapping[str, Any], outputs: Mapping[str, Any], *, feature_level: FeatureLevel, strict: bool
) -> None:
    """REDUCE: ``Function`` over the set of ``Axes`` (see the module notes)."""
    x = inputs["InputTensor"]
    function = desc.function.name
    if x.dtype.kind != "f" and function not in INTEGER_FUNCTIONS:
        raise UnsupportedError(f"{desc.dml_name}: Function {function} takes no integer tensor")
    _run_reduction(desc, x, outputs["OutputTensor"], FUNCTION_CODES[function])


def run_arg(
    desc: Any, inputs: Mapping[str, Any], outputs: Mapping[str, Any], *, feature_level: FeatureLevel, strict: bool
) -> None:
    """ARGMAX / ARGMIN: the index over the reduced axes, ties by ``AxisDirection``."""
    f = FUNCTION_CODES[desc.operator_type.name] + (2 if desc.axis_direction.name == "DECREASING" else 0)
    _run_reduction(desc, inputs["InputTensor"], outputs["OutputTensor"], f)


# -- CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT -----------------------------------------


def _line_geometry(
    sizes: Sequence[int], axis: int, *strides: Sequence[int]
) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """The collapsed dimensions of every axis but ``axis``, with each operand's strides."""
    others = [i for i in range(len(sizes)) if i != axis]
    return collapse([sizes[i] for i in others], tuple([s[i] for i in others] for s in strides))


def _cumulative_launch(desc: Any, x: Any, out: Any, xs: tuple[int, ...], os: tuple[int, ...]) -> PackedLaunch:
    axis = int(desc.axis)
    summation = desc.operator_type.name == "CUMULATIVE_SUMMATION"
    exclusive = bool(desc.has_exclusive_sum if summation else desc.has_exclusive_product)
    sizes = tuple(int(n) for n in x.shape)
    n = sizes[axis]
    ax, ao = xs[axis], os[axis]
    xb = ob = 0
    if desc.axis_direction.name == "DECREASING":  # run from the last element backwards
        xb, ob, ax, ao = (n - 1) * ax, (n - 1) * ao, -ax, -ao
    l_sizes, (l_x, l_o) = _line_geometry(sizes, axis, xs, os)
    lines = int(np.prod(l_sizes, dtype=np.int64))
    p = params(
        ("lines", "i8", lines),
        ("n", "i8", n),
        ("xb", "i8", xb),
        ("ob", "i8", ob),
        ("ax", "i8", ax),
        ("ao", "i8", ao),
        ("kdims", "i8", len(l_sizes)),
        ("ksize", "i8", padded(l_sizes, MAX_DIMS, 1)),
        ("kx", "i8", padded(l_x, MAX_DIMS)),
        ("ko", "i8", padded(l_o, MAX_DIMS)),
    )
    tail = f"{C_TYPES[x.dtype]}, {'true' if summation else 'false'}, {'true' if exclusive else 'false'}"
    unit_lines = bool(l_x) and abs(l_x[-1]) == 1
    if n > 1 and abs(ax) == 1 and not (unit_lines and lines >= 32 * n):
        width = SCAN_WIDTH if x.dtype.itemsize <= 4 else 32
        fn = get_kernel("scan.cu", f"scan_tiles<{tail}, {width}, {SCAN_LINES}>")
        warps = _scan_warps(width, x.dtype.itemsize, SCAN_LINES)
        return PackedLaunch(fn, min(-(-lines // (SCAN_LINES * warps)), 2**31 - 1), 32 * warps, 2, p)
    fn = get_kernel("scan.cu", f"scan_lines<{tail}>")
    return PackedLaunch(fn, min(-(-lines // BLOCK), 2**31 - 1), BLOCK, 2, p)


def _scan_warps(width: int, itemsize: int, lines: int) -> int:
    """scan.cu's scan_warps: the warps of a scan_tiles block (at most 33 KiB of tiles, at most 8 warps)."""
    return min(8, max(1, 33792 // (lines * (width + 1) * itemsize)))


def run_cumulative(
    desc: Any, inputs: Mapping[str, Any], outputs: Mapping[str, Any], *, feature_level: FeatureLevel, strict: bool
) -> None:
    """CUMULATIVE_SUMMATION / CUMULATIVE_PRODUCT: a sequential running tally in the input type along ``Axis``."""
    x, out = inputs["InputTensor"], outputs["OutputTensor"]
    xs, os = element_strides(x), element_strides(out)
    key = (id(desc), xs, os)
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _PLANS.put(key, (desc, _cumulative_launch(desc, x, out, xs, os)))
    plan[1](x.data.ptr, out.data.ptr)


# -- TOP_K, TOP_K1 --------------------------------------------------------------------


def _top_k_launch(desc: Any, x: Any, v: Any, i: Any, xs: tuple[int, ...]) -> PackedLaunch:
    axis, k = int(desc.axis), int(desc.k)
    largest = desc.operator_type.name == "TOP_K" or desc.axis_direction.name == "DECREASING"
    sizes = tuple(int(n) for n in x.shape)
    n = sizes[axis]
    vs, is_ = element_strides(v), element_strides(i)
    l_sizes, (l_x, l_v, l_i) = _line_geometry(sizes, axis, xs, vs, is_)
    lines = int(np.prod(l_sizes, dtype=np.int64))
    p = params(
        ("lines", "i8", lines),
        ("n", "i8", n),
        ("k", "i8", k),
        ("ax", "i8", xs[axis]),
        ("av", "i8", vs[axis]),
        ("ai", "i8", is_[axis]),
        ("kdims", "i8", len(l_sizes)),
        ("ksize", "i8", padded(l_sizes, MAX_DIMS, 1)),
        ("kx", "i8", padded(l_x, MAX_DIMS)),
        ("kv", "i8", padded(l_v, MAX_DIMS)),
        ("ki", "i8", padded(l_i, MAX_DIMS)),
    )
    t, idx, smallest = C_TYPES[x.dtype], C_TYPES[i.dtype], "false" if largest else "true"
    if x.dtype.itemsize <= 4 and k <= TOP_K_WARP_MAX and n < 2**32 - 1:
        fn = get_kernel("top_k.cu", f"top_k_warp<{t}, {idx}, {smallest}, {_pow2_at_least(k)}>")
    else:
        fn = get_kernel("top_k.cu", f"top_k_select<{t}, {idx}, {smallest}>")
    warps_per_block = BLOCK // 32
    return PackedLaunch(fn, min(-(-lines // warps_per_block), 2**31 - 1), BLOCK, 3, p)


def run_top_k(
    desc: Any, inputs: Mapping[str, Any], outputs: Mapping[str, Any], *, feature_level: FeatureLevel, strict: bool
) -> None:
    """TOP_K / TOP_K1: the ``K`` largest (TOP_K, TOP_K1 DECREASING) or smallest values along ``Axis``."""
    x = inputs["InputTensor"]
    v, i = outputs["OutputValueTensor"], outputs["OutputIndexTensor"]
    axis = int(desc.axis)
    xs = element_strides(x)
    if abs(xs[axis]) != 1 and x.shape[axis] > 1 and x.size > COPY_MIN:
        # lanes along a strided axis would not coalesce: the axis innermost, contiguous
        cp = cupy_module()
        x = cp.ascontiguousarray(cp.moveaxis(x, axis, -1)).transpose(_moved_back(x.ndim, axis))
        xs = element_strides(x)
    key = (id(desc), xs, element_strides(v), element_strides(i))
    plan = _PLANS.get(key)
    if plan is None or plan[0] is not desc:
        plan = _PLANS.put(key, (desc, _top_k_launch(desc, x, v, i, xs)))
    plan[1](x.data.ptr, v.data.ptr, i.data.ptr)


def _moved_back(ndim: int, axis: int) -> tuple[int, ...]:
    """The transpose taking an array whose ``axis`` was moved last back to the original axis order."""
    order = list(range(ndim - 1))
    order.insert(axis, ndim - 1)
    return tuple(order)


OPERATORS: dict[str, Callable[..., Any]] = {
    "REDUCE": run_reduce,
    "ARGMAX": run_arg,
    "ARGMIN": run_arg,
    "CUMULATIVE_SUMMATION": run_cumulative,
    "CUMULATIVE_PRODUCT": run_cumulative,
    "TOP_K": run_top_k,
    "TOP_K1": run_top_k,
}
"""Operator (short DML_OPERATOR_TYPE name) -> this family's implementation in this backend."""

__all__ = ["OPERATORS", "run_arg", "run_cumulative", "run_reduce", "run_top_k"]
