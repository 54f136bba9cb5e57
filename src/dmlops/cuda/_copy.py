"""The strided-copy / gather launcher shared by SLICE1 and GATHER (kernels/copy.cu)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._plan import MAX_OUTER_DIMS, MODE_VECTOR, CopyLayout, choose_vector, grid_for
from ._runtime import PackedLaunch, current_device, get_kernel, padded, params

BLOCK = 256
UNROLL = 4  # work items per thread per grid-stride step (DMLOPS_UNROLL in copy.cu)
GATHER_ROWS = 4  # rows per warp per step of gather_rows (DMLOPS_GATHER_ROWS in copy.cu)
ROW_VECTORS = (8, 32)
"""GATHER rows of this many 16-byte vectors (128 B to 512 B) take the warp-per-row kernel."""
STORAGE = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}
"""Data movement copies raw elements of this many bytes."""
INDEX_TYPES = {
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
}
"""C names of the GATHER index types."""

C_TYPES = {
    np.dtype(np.float32): "float",
    np.dtype(np.float16): "half_t",
    np.dtype(np.float64): "double",
    np.dtype(np.int8): "i8",
    np.dtype(np.uint8): "u8",
    np.dtype(np.int16): "i16",
    np.dtype(np.uint16): "u16",
    np.dtype(np.int32): "i32",
    np.dtype(np.uint32): "u32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint64): "u64",
}
"""C names of every data type, for the arithmetic kernels (Num<T> in common.cuh)."""


def index_type(use32: bool) -> str:
    """C type of the kernels' offset arithmetic."""
    return "int" if use32 else "long long"


FLAT_OFF = (0, -1, 0)
"""``(flat_limit, flat_last, flat_always)`` of a copy without GATHER's flat reads."""


def copy_params(
    lay: CopyLayout,
    count: int,
    inner_vecs: int,
    per_vector: int = 0,
    flat: tuple[int, int, int] = FLAT_OFF,
    itemsize: int = 1,
) -> np.void:
    """The CopyParams struct of ``lay``.

    Element offsets for ``strided_copy``; with ``per_vector`` > 0, offsets in vectors of
    that many elements and unit innermost strides (``gather_rows``, which moves whole
    rows of vectors).
    """
    d = per_vector or 1
    return params(
        ("count", "i8", count),
        ("inner_vecs", "i8", inner_vecs),
        ("src_base", "i8", lay.src_base // d),
        ("dst_base", "i8", lay.dst_base // d),
        ("src_inner", "i8", 1 if per_vector else lay.src_inner),
        ("dst_inner", "i8", 1 if per_vector else lay.dst_inner),
        ("idx_base", "i8", lay.idx_base),
        ("idx_inner", "i8", 0 if per_vector else lay.idx_inner),
        ("axis_size", "i8", lay.axis_size),
        ("axis_stride", "i8", lay.axis_stride // d),
        ("size", "i8", padded(lay.outer_sizes, MAX_OUTER_DIMS, 1)),
        ("src_stride", "i8", padded([s // d for s in lay.src_strides], MAX_OUTER_DIMS)),
        ("dst_stride", "i8", padded([s // d for s in lay.dst_strides], MAX_OUTER_DIMS)),
        ("idx_stride", "i8", padded(lay.idx_strides, MAX_OUTER_DIMS)),
        ("flat_limit", "i8", flat[0]),
        ("flat_last", "i8", flat[1]),
        ("flat_always", "i8", flat[2]),
        ("flat_axis_stride", "i8", lay.axis_stride),
        ("flat_elem_bytes", "i8", itemsize),
    )


class CopyPlan:
    """A collapsed copy/gather layout with its compiled variants (one per vector width)."""

    def __init__(
        self,
        desc: Any,
        layout: CopyLayout,
        itemsize: int,
        index_ctype: str | None = None,
        wrap: bool = False,
        flat: tuple[int, int, int] = FLAT_OFF,
    ) -> None:
        self.desc = desc  # plans are keyed by id(desc); keeping the desc alive keeps the id unique
        if len(layout.outer_sizes) > MAX_OUTER_DIMS:
            raise ValueError(f"too many dimensions after collapsing: {len(layout.outer_sizes)}")
        self.layout = layout
        self.itemsize = itemsize
        self.index_ctype = index_ctype or "NoIndex"
        self.wrap = wrap
        self.flat = flat  # GATHER: (elements src holds, the bound buffer's last element, every read flat)
        self.use32 = layout.fits_int32()
        self._variants: dict[tuple[int, int], tuple[Any, int, Any]] = {}
        self._by_alignment: dict[tuple[int, int], PackedLaunch] = {}

    def variant(self, vec: int, mode: int) -> tuple[Any, int, Any]:
        """(kernel, blocks, parameter struct) for ``vec`` elements per work item."""
        found = self._variants.get((vec, mode))
        if found is not None:
            return found
        lay = self.layout
        ndim = len(lay.outer_sizes)
        inner_vecs = lay.inner_size // vec
        count = inner_vecs
        for s in lay.outer_sizes:
            count *= s
        name = (
            f"strided_copy<{STORAGE[self.itemsize]}, {vec}, {mode}, {ndim}, {index_type(self.use32)}, "
            f"{self.index_ctype}, {'true' if self.wrap else 'false'}>"
        )
        fn = get_kernel("copy.cu", name)
        p = copy_params(lay, count, inner_vecs, flat=self.flat, itemsize=self.itemsize)
        found = (fn, grid_for(count, BLOCK, UNROLL), p)
        self._variants[(vec, mode)] = found
        return found

    def rows_variant(self, vec: int) -> tuple[Any, int, Any]:
        """(kernel, blocks, parameter struct) of ``gather_rows``: offsets in 16-byte vectors."""
        lay = self.layout
        ndim = len(lay.outer_sizes)
        inner_vecs = lay.inner_size // vec
        rows = 1
        for s in lay.outer_sizes:
            rows *= s
        fn = get_kernel(
            "copy.cu",
            f"gather_rows<{ndim}, {index_type(self.use32)}, {self.index_ctype}, {'true' if self.wrap else 'false'}>",
        )
        p = copy_params(lay, rows * inner_vecs, inner_vecs, per_vector=vec, flat=self.flat, itemsize=self.itemsize)
        return fn, grid_for(rows, BLOCK // 32, GATHER_ROWS), p

    def _rows_apply(self, vec: int, mode: int, src_ptr: int, dst_ptr: int) -> bool:
        """True when GATHER rows are 16-byte vectors that the warp-per-row kernel can move."""
        lay = self.layout
        return (
            self.index_ctype != "NoIndex"
            and mode == MODE_VECTOR
            and vec * self.itemsize == 16
            and lay.idx_inner == 0
            and ROW_VECTORS[0] <= lay.inner_size // vec <= ROW_VECTORS[1]
            and src_ptr % 16 == 0
            and dst_ptr % 16 == 0
            and lay.src_base % vec == 0
            and lay.dst_base % vec == 0
        )

    def launch(self, src: Any, dst: Any, idx: Any = None) -> None:
        """Run the copy: ``src``/``dst``/``idx`` are CuPy arrays whose pointer is element 0."""
        src_ptr, dst_ptr = src.data.ptr, dst.data.ptr
        align = (src_ptr & 15, dst_ptr & 15)
        launch = self._by_alignment.get(align)
        if launch is None:
            vec, mode = choose_vector(self.layout, self.itemsize, src_ptr, dst_ptr)
            if self._rows_apply(vec, mode, src_ptr, dst_ptr):
                fn, blocks, p = self.rows_variant(vec)
            else:
                fn, blocks, p = self.variant(vec, mode)
            launch = self._by_alignment[align] = PackedLaunch(fn, blocks, BLOCK, 3, p)
        launch(src_ptr, dst_ptr, idx.data.ptr if idx is not None else src_ptr)


class PlanCache:
    """A bounded dict of plans keyed by ``(id(desc), strides...)`` and the current device.

    Keys use the desc's identity (hashing a frozen desc walks all of its fields, which
    costs more than the launch); every plan keeps its desc alive and the caller checks
    ``plan.desc is desc`` (or ``plan[0] is desc``), so a recycled id never matches. A plan
    holds kernels loaded on one device, so each device has its own.
    """

    def __init__(self, limit: int = 512) -> None:
        self.limit = limit
        self.plans: dict[Any, Any] = {}

    def get(self, key: Any) -> Any:
        """The plan for ``key`` on the current device, or None."""
        return self.plans.get((current_device(), key))

    def put(self, key: Any, plan: Any) -> Any:
        """Store and return ``plan`` for the current device (dropping everything when full)."""
        if len(self.plans) >= self.limit:
            self.plans.clear()
        self.plans[(current_device(), key)] = plan
        return plan
