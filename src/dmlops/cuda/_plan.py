"""Launch planning for the data-movement kernels (pure Python, testable without a GPU).

A strided copy (SLICE1) or gather (GATHER) is described by its output sizes and, per
dimension, the element strides of the source, the destination and the indices. This
module

* collapses the iteration space: size-1 dimensions are dropped and adjacent
  dimensions whose strides chain in *every* operand are merged (a full reverse of a
  contiguous tensor becomes a 1-D reverse);
* decides whether 32-bit index arithmetic is exact for every offset the kernel forms;
* picks the vector width (16-byte accesses where sizes, strides and alignment allow)
  and the load mode (element-wise, vector, reversed vector).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

INT32_LIMIT = 2**31 - 1
MAX_OUTER_DIMS = 8
"""The kernels' parameter structs hold at most this many outer dimensions."""

MODE_SCALAR = 0
MODE_VECTOR = 1
MODE_REVERSED = 2


def collapse(
    sizes: Sequence[int], strides: Sequence[Sequence[int]]
) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """Drop size-1 dimensions and merge neighbours whose strides chain in every operand.

    Parameters
    ----------
    sizes : sequence of int
        Extents of the iteration space, outermost first.
    strides : sequence of sequences of int
        One stride list per operand (element strides, any sign, 0 allowed).

    Returns
    -------
    sizes, strides
        The collapsed sizes and one collapsed stride tuple per operand. Dimension ``i``
        merges into ``i + 1`` when ``stride[i] == stride[i + 1] * sizes[i + 1]`` for every
        operand, which addresses exactly the same elements in the same order.
    """
    keep = [i for i, n in enumerate(sizes) if n != 1]
    out_sizes: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides]
    for i in keep:
        n = int(sizes[i])
        if out_sizes and all(out_strides[k][-1] == int(s[i]) * n for k, s in enumerate(strides)):
            out_sizes[-1] *= n
            for k, s in enumerate(strides):
                out_strides[k][-1] = int(s[i])
            continue
        out_sizes.append(n)
        for k, s in enumerate(strides):
            out_strides[k].append(int(s[i]))
    return tuple(out_sizes), tuple(tuple(s) for s in out_strides)


def max_abs_offset(sizes: Sequence[int], strides: Sequence[int], base: int = 0) -> int:
    """The largest ``|base + sum(c[i] * strides[i])|`` over the index space."""
    hi = lo = base
    for n, s in zip(sizes, strides):
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return max(abs(hi), abs(lo))


@dataclass(frozen=True)
class CopyLayout:
    """A collapsed strided copy / gather: outer dimensions plus one innermost dimension."""

    outer_sizes: tuple[int, ...]
    src_strides: tuple[int, ...]
    dst_strides: tuple[int, ...]
    idx_strides: tuple[int, ...]
    inner_size: int
    src_inner: int
    dst_inner: int
    idx_inner: int
    src_base: int
    dst_base: int
    idx_base: int
    axis_size: int = 1
    axis_stride: int = 0

    @property
    def elements(self) -> int:
        """Number of output elements."""
        n = self.inner_size
        for s in self.outer_sizes:
            n *= s
        return n

    def fits_int32(self) -> bool:
        """True when every offset and counter the kernel forms fits in a signed 32-bit int.

        The kernel forms offsets from the collapsed strides (plus the gathered axis), and
        its work-item counter runs at most one grid-stride step (about the element
        count) past the end, so counts up to 2^29 elements are safe.
        """
        sizes = (*self.outer_sizes, self.inner_size)
        src = max_abs_offset(sizes, (*self.src_strides, self.src_inner), self.src_base)
        src += max(0, self.axis_size - 1) * abs(self.axis_stride)
        dst = max_abs_offset(sizes, (*self.dst_strides, self.dst_inner), self.dst_base)
        idx = max_abs_offset(sizes, (*self.idx_strides, self.idx_inner), self.idx_base)
        return max(src, dst, idx, 4 * self.elements) < 2**31


def copy_layout(
    sizes: Sequence[int],
    src_strides: Sequence[int],
    dst_strides: Sequence[int],
    idx_strides: Sequence[int] | None = None,
    *,
    src_base: int = 0,
    dst_base: int = 0,
    idx_base: int = 0,
    axis_size: int = 1,
    axis_stride: int = 0,
) -> CopyLayout:
    """Collapse a copy over ``sizes`` and split off its innermost dimension."""
    idx = tuple(idx_strides) if idx_strides is not None else (0,) * len(sizes)
    c_sizes, (c_src, c_dst, c_idx) = collapse(sizes, (src_strides, dst_strides, idx))
    if not c_sizes:  # a single element
        c_sizes, c_src, c_dst, c_idx = (1,), (0,), (0,), (0,)
    return CopyLayout(
        outer_sizes=c_sizes[:-1],
        src_strides=c_src[:-1],
        dst_strides=c_dst[:-1],
        idx_strides=c_idx[:-1],
        inner_size=c_sizes[-1],
        src_inner=c_src[-1],
        dst_inner=c_dst[-1],
        idx_inner=c_idx[-1],
        src_base=src_base,
        dst_base=dst_base,
        idx_base=idx_base,
        axis_size=axis_size,
        axis_stride=axis_stride,
    )


def choose_vector(layout: CopyLayout, itemsize: int, src_ptr: int, dst_ptr: int) -> tuple[int, int]:
    """``(elements per work item, load mode)`` for this layout and these base pointers.

    A work item of ``vec > 1`` elements stores one aligned ``vec * itemsize``-byte
    vector, which needs a unit destination inner stride, an inner size divisible by
    ``vec`` and every row start aligned. Its loads are one vector (``MODE_VECTOR``,
    source inner stride +1), one vector reversed in registers (``MODE_REVERSED``, stride
    -1) when the source rows are aligned too, or element-wise (``MODE_SCALAR``).
    16-byte vectors are tried first, then 8, 4 and 2 bytes.
    """
    if src_ptr % itemsize or dst_ptr % itemsize:
        return 1, MODE_SCALAR
    src0 = src_ptr // itemsize + layout.src_base
    dst0 = dst_ptr // itemsize + layout.dst_base
    best_scalar: int | None = None
    for vec_bytes in (16, 8, 4, 2):
        vec = vec_bytes // itemsize
        if vec < 2:
            continue
        if layout.dst_inner != 1 or layout.inner_size % vec or dst0 % vec:
            continue
        if any(s % vec for s in layout.dst_strides):
            continue
        if layout.idx_inner == 0 and layout.src_inner in (1, -1):
            aligned = all(s % vec == 0 for s in layout.src_strides) and layout.axis_stride % vec == 0
            start = src0 if layout.src_inner == 1 else src0 - (vec - 1)
            if aligned and start % vec == 0:
                return vec, MODE_VECTOR if layout.src_inner == 1 else MODE_REVERSED
        if best_scalar is None:
            best_scalar = vec
    if best_scalar is not None:
        return best_scalar, MODE_SCALAR
    return 1, MODE_SCALAR


def gather_dimensions(
    input_sizes: Sequence[int],
    input_strides: Sequence[int],
    indices_sizes: Sequence[int],
    indices_strides: Sequence[int],
    output_strides: Sequence[int],
    axis: int,
    index_dimensions: int,
    extra: tuple[int, int] | None = None,
) -> tuple[list[int], list[int], list[int], list[int]]:
    """GATHER's iteration space as (sizes, src strides, dst strides, idx strides).

    The "full" output coordinates are ``pre`` (Axis input dimensions), ``mid`` (the
    last IndexDimensions indices dimensions) and ``post`` (the remaining input
    dimensions); they are right-aligned onto the output's dimensions (dropped leading
    entries are 1, prepended output dimensions are 1). Per full dimension: the input
    stride (0 for ``mid``), the output stride, and the indices stride (``mid`` only).
    With IndexDimensions 0, ``extra = (OutputTensor.Sizes[0], its input stride)`` adds the
    output's leading dimension (the slabs past the first read past the input: E41).
    """
    d = len(input_sizes)
    k = index_dimensions
    sizes: list[int] = []
    src: list[int] = []
    idx: list[int] = []
    for f in range(axis):
        sizes.append(int(input_sizes[f]))
        src.append(int(input_strides[f]))
        idx.append(0)
    for m in range(k):
        sizes.append(int(indices_sizes[d - k + m]))
        src.append(0)
        idx.append(int(indices_strides[d - k + m]))
    for f in range(axis + 1, d):
        sizes.append(int(input_sizes[f]))
        src.append(int(input_strides[f]))
        idx.append(0)
    full = len(sizes)
    dst: list[int] = []
    for f in range(full):
        o = f - (full - d)
        dst.append(int(output_strides[o]) if 0 <= o < d else 0)
    if extra is not None and full < d:
        # IndexDimensions 0: the output's leading dimension (size, input stride) = extra (E41)
        sizes.insert(0, int(extra[0]))
        src.insert(0, int(extra[1]))
        dst.insert(0, int(output_strides[0]))
        idx.insert(0, 0)
    return sizes, src, dst, idx


def grid_for(work_items: int, block: int, per_thread: int = 1, max_blocks: int = 2**31 - 1) -> int:
    """Blocks for ``work_items`` items, ``per_thread`` items per thread (at least 1 block)."""
    return max(1, min(max_blocks, -(-work_items // (block * per_thread))))


__all__ = [
    "INT32_LIMIT",
    "MAX_OUTER_DIMS",
    "MODE_REVERSED",
    "MODE_SCALAR",
    "MODE_VECTOR",
    "CopyLayout",
    "choose_vector",
    "collapse",
    "copy_layout",
    "gather_dimensions",
    "grid_for",
    "max_abs_offset",
]
